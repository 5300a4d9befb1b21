"""inductor_lite.compile_fx on the OpInfo samples, its kernels run by Triton's interpreter on CPU.

For each sample: trace a function that calls the op on the sample's tensors with
`fxtrace.make_fx` ("real" mode, an aten graph), compile that graph with `compile_fx`, run it on
copies of the inputs, and compare every output and every input afterwards (ops may mutate them)
with calling the op eagerly on other copies. Tolerances as in the fxtrace sweep; random ops and
`empty*`: shapes and dtypes only.

Triton reads TRITON_INTERPRET when it is imported: this module sets it when nothing has imported
triton yet (run it in a fresh process: `python conformance/run.py --only inductor_lite`).
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Any

os.environ.setdefault("INDUCTOR_LITE_TRITON_CPU", "1")
os.environ.setdefault("TRITON_INTERPRET", "1")

import torch  # noqa: E402
from torch.utils._pytree import tree_flatten  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from fxtrace_opinfo import _as_function  # noqa: E402
from fxtrace_opinfo import _is_random as _varies  # noqa: E402
from opinfo import CI_OPS, Tally, attempt, samples  # noqa: E402

PER_OP = 3  # samples per op: the interpreter runs each kernel element by element in Python
SECONDS = 60  # per sample


class Outcome:
    """What one sample's compiled run did (filled in by `_check`)."""

    def __init__(self) -> None:
        self.generated = False  # compiled to generated code with no fallback
        self.fallbacks: tuple[str, ...] = ()  # the aten ops that ran as fallbacks


def _fallbacks(source: str) -> tuple[str, ...]:
    """The aten ops a generated wrapper calls that are not extern kernels chosen on purpose."""
    from inductor_lite.lowering import EXTERN_OPS

    externs = {f"torch.ops.{op}" for op in EXTERN_OPS}
    calls = re.findall(r"= (torch\.ops\.[\w.]+)\(", source)
    return tuple(sorted({c.removeprefix("torch.ops.") for c in calls if c not in externs}))


def _is_random(sample, fn, tensors: list[torch.Tensor]) -> bool:
    """Whether the op's values vary between runs (fresh copies of the inputs each run, so that an
    in-place random op shows it too)."""
    return _varies(sample, lambda *ts: fn(*_clone(list(ts))), tensors)


def _draws_random(gm: torch.fx.GraphModule) -> bool:
    """Whether the graph has a random op. OpInfo's random ops seed the generator on each call
    (the same values every time), which a traced graph does not repeat."""
    return any(isinstance(n.target, torch._ops.OpOverload)
               and torch.Tag.nondeterministic_seeded in n.target.tags for n in gm.graph.nodes)


def _clone(tensors: list[torch.Tensor]) -> list[torch.Tensor]:
    return [t.clone() for t in tensors]


def _tensors(tree: Any) -> list[Any]:
    return [v for v in tree_flatten(tree)[0] if isinstance(v, torch.Tensor)]


def _check(fn, tensors: list[torch.Tensor], random: bool, outcome: Outcome) -> bool:
    import inductor_lite
    from fxtrace import make_fx

    gm = make_fx(fn, "real")(*_clone(tensors))
    random = random or _draws_random(gm)
    eager_inputs, compiled_inputs = _clone(tensors), _clone(tensors)
    torch.manual_seed(0)
    expected = _tensors(fn(*eager_inputs))
    inductor_lite.metrics.reset()
    compiled = inductor_lite.compile_fx(gm, compiled_inputs)
    counters = dict(inductor_lite.metrics.counters)
    got = _tensors(compiled(*compiled_inputs)) + compiled_inputs
    expected += eager_inputs
    if len(got) != len(expected):
        return False
    for g, e in zip(got, expected):
        if g.shape != e.shape or g.dtype != e.dtype:
            return False
        if not random:
            torch.testing.assert_close(g, e, equal_nan=True)
    outcome.fallbacks = _fallbacks(getattr(compiled.versions[0][1], "source", ""))
    outcome.generated = (counters.get("graphs", 0) == 1 and counters.get("eager_graphs", 0) == 0
                         and counters.get("fallbacks", 0) == 0)
    return True


def runnable_samples(op_names: list[str] | None, per_op: int):
    """(sample, function, tensors, random) for each sample that is valid for a real run."""
    for sample in samples(op_names, per_op):
        fn, tensors = _as_function(sample)
        try:
            random = _is_random(sample, fn, tensors)
        except Exception:  # the sample is invalid for a real run: it tests nothing here
            continue
        yield sample, fn, tensors, random


def record(tally: Tally, op_name: str, error: str | None, outcome: Outcome) -> None:
    """A sample's outcome in the columns "correct" and "generated"."""
    tally.add("correct", op_name, error)
    if error is None and not outcome.generated:
        error = "fallback: " + (", ".join(outcome.fallbacks) or "eager graph")
    tally.add("generated", op_name, error)


def sweep(op_names: list[str] | None = None, per_op: int = PER_OP) -> Tally:
    """Columns: "correct" (results match, fallbacks allowed) and "generated" (results match and
    the graph ran generated code only: no eager fallback op, no eager graph)."""
    tally = Tally()
    for sample, fn, tensors, random in runnable_samples(op_names, per_op):
        outcome = Outcome()
        record(tally, sample.op.name,
               attempt(_check, fn, tensors, random, outcome, seconds=SECONDS), outcome)
    return tally


def rate_table(tally: Tally) -> list[str]:
    """The markdown table of the columns "correct" and "generated"."""
    return ["| | samples |", "| --- | --- |", f"| correct | {tally.rate('correct')} |",
            f"| generated only | {tally.rate('generated')} |"]


def _per_op(tally: Tally, column: str) -> dict[str, tuple[int, int]]:
    out: dict[str, tuple[int, int]] = {}
    for op, ok in tally.outcomes.get(column, []):
        p, t = out.get(op, (0, 0))
        out[op] = (p + ok, t + 1)
    return out


def run(sample: bool = False) -> str:
    tally = sweep(CI_OPS if sample else None)
    correct, generated = _per_op(tally, "correct"), _per_op(tally, "generated")
    failures = tally.failures.get("correct", {})
    lines = [
        "## inductor_lite: compile_fx on OpInfo samples",
        "",
        f"First {PER_OP} float32 CPU samples per op (the Triton interpreter is slow), each traced "
        "with `fxtrace.make_fx` (real mode) and compiled with `inductor_lite.compile_fx`, its "
        "kernels run by Triton's interpreter on CPU tensors. *Correct*: every output, and every "
        "input afterwards, equals the eager op's (default `assert_close` tolerances; random ops "
        "and `empty*`: the same shapes and dtypes), whether or not some op ran as an eager "
        "fallback. *Generated only*: correct, and the graph ran as generated code with no "
        "fallback (`counters[\"fallbacks\"] == 0`, `counters[\"eager_graphs\"] == 0`); kernels "
        "plus extern library calls (matmul, convolution), or only views of the inputs, which "
        "need no kernel. No peer column: torch.compile's inductor is not run here.",
        "",
        *rate_table(tally),
        "",
        f"Ops with a sample that fails: {len(failures)}",
    ]
    lines += [""] if failures else []
    lines += [f"- `{op}` ({correct[op][0]}/{correct[op][1]} correct): {error}"
              for op, error in sorted(failures.items())]
    partial = {op: error for op, error in tally.failures.get("generated", {}).items()
               if op not in failures}
    lines += ["", f"Ops correct on every sample, but with an eager fallback in some: "
              f"{len(partial)}", ""]
    lines += [f"- `{op}` ({generated[op][0]}/{generated[op][1]} generated only): {error}"
              for op, error in sorted(partial.items())]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":  # a look at some ops: python conformance/inductor_lite_opinfo.py add mul
    found = sweep(sys.argv[1:] or CI_OPS)
    for (name, ok), (_, gen) in zip(found.outcomes["correct"], found.outcomes["generated"]):
        print(f"{name:30} {'ok' if ok else 'FAIL':4} {'generated' if gen else ''}")
    for name, error in sorted(found.failures.get("correct", {}).items()):
        print(f"{name}: {error}")
    print("correct", found.rate("correct"), "generated", found.rate("generated"))
