"""inductor_lite.compile_fx on the OpInfo samples traced with symbolic sizes, then run at others.

The static sweep (inductor_lite_opinfo.py) traces each sample with its sizes as constants. Here
every size is a symbol (`fxtrace.make_fx(fn, "symbolic")`), so sizes are kernel arguments and
one compiled graph must serve every size its trace's assumptions allow. Each sample is compared
with eager as in the static sweep; then the same compiled graph is called on two grown copies of
the inputs and compared again: every dim equal to the first tensor's leading size grown by 1, and
every dim of size 2 or more grown by 3 (equal sizes grow alike, so dims the trace found equal stay
equal; sizes 0 and 1 are specialised by the trace). A grown call counts as refused, not failed,
where eager rejects the grown inputs or the trace's size assumptions do not hold for them.
Samples that `make_fx`'s symbolic trace itself cannot trace (a value the trace cannot decide, an
op with no fake kernel) are counted apart: they test fxtrace, not inductor_lite.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))
from inductor_lite_opinfo import (  # noqa: E402
    PER_OP,
    Outcome,
    _clone,
    _draws_random,
    _fallbacks,
    _per_op,
    _tensors,
    rate_table,
    record,
    runnable_samples,
)
from opinfo import CI_OPS, Tally, attempt  # noqa: E402

SECONDS = 90  # per sample: three calls
GROWTHS = {"leading size + 1": False, "every size ≥ 2 + 3": True}


class SymbolicOutcome(Outcome):
    """What one sample's symbolic run did: whether the symbolic trace took it, and per growth
    how the grown call went (see `_call_grown`)."""

    def __init__(self) -> None:
        super().__init__()
        self.traced = False
        self.grown: dict[str, str] = {}


def _grown(tensors: list[torch.Tensor], every: bool) -> list[torch.Tensor] | None:
    """Copies of `tensors` with dims grown (see the module docstring), or None if none grows."""
    lead = next((t.shape[0] for t in tensors if t.dim() > 0), None)
    if lead is None or (lead < 2 and not every):
        return None
    out, grew = [], False
    for t in tensors:
        for d in range(t.dim()):
            n = t.shape[d]
            if (every and n >= 2) or (not every and n == lead):
                grew = True
                t = torch.cat([t] + [t.narrow(d, 0, 1)] * (3 if every else 1), dim=d)
        out.append(t.clone())
    return out if grew else None


def _run_and_compare(fn, compiled, tensors: list[torch.Tensor], random: bool) -> None:
    eager_inputs, compiled_inputs = _clone(tensors), _clone(tensors)
    torch.manual_seed(0)
    expected = _tensors(fn(*eager_inputs)) + eager_inputs
    got = _tensors(compiled(*compiled_inputs)) + compiled_inputs
    if len(got) != len(expected):
        raise AssertionError(f"{len(got)} results, eager has {len(expected)}")
    for g, e in zip(got, expected):
        if g.shape != e.shape or g.dtype != e.dtype:
            raise AssertionError(f"{g.dtype}{list(g.shape)}, eager {e.dtype}{list(e.shape)}")
        if not random:
            torch.testing.assert_close(g, e, equal_nan=True)


def _call_grown(fn, compiled, grown: list[torch.Tensor] | None, random: bool) -> str:
    """How the compiled graph took `grown`: "none", "eager rejects", "refused", "same graph" or
    "recompiled"; a wrong result raises, naming the growth."""
    if grown is None:
        return "none"
    try:
        fn(*_clone(grown))
    except Exception:
        return "eager rejects"
    if compiled.traced_sizes is not None:
        try:
            compiled.traced_sizes.check(grown)
        except ValueError:
            return "refused"
    versions = len(compiled.versions)
    _run_and_compare(fn, compiled, grown, random)
    return "same graph" if len(compiled.versions) == versions else "recompiled"


def _check(fn, tensors: list[torch.Tensor], random: bool, outcome: SymbolicOutcome) -> bool:
    import inductor_lite
    from fxtrace import make_fx

    gm = make_fx(fn, "symbolic")(*_clone(tensors))
    outcome.traced = True
    random = random or _draws_random(gm)
    inductor_lite.metrics.reset()
    compiled = inductor_lite.compile_fx(gm, _clone(tensors))
    _run_and_compare(fn, compiled, tensors, random)
    counters = dict(inductor_lite.metrics.counters)
    outcome.fallbacks = _fallbacks(getattr(compiled.versions[0][1], "source", ""))
    outcome.generated = (counters.get("graphs", 0) == 1 and counters.get("eager_graphs", 0) == 0
                         and counters.get("fallbacks", 0) == 0)
    for name, every in GROWTHS.items():
        try:
            outcome.grown[name] = _call_grown(fn, compiled, _grown(tensors, every), random)
        except Exception as error:
            raise type(error)(f"at {name}: {error}") from error
    return True


def sweep(op_names: list[str] | None = None,
          per_op: int = PER_OP) -> tuple[Tally, dict[str, Counter]]:
    """Columns "correct" and "generated" as in the static sweep, over the samples the symbolic
    trace takes ("untraceable" counts the others); and per growth, how the grown calls went."""
    tally, growths = Tally(), {name: Counter() for name in GROWTHS}
    for sample, fn, tensors, random in runnable_samples(op_names, per_op):
        outcome = SymbolicOutcome()
        error = attempt(_check, fn, tensors, random, outcome, seconds=SECONDS)
        if not outcome.traced:  # fxtrace's symbolic trace refused it: not inductor_lite's
            tally.add("untraceable", sample.op.name, None)
            continue
        record(tally, sample.op.name, error, outcome)
        for name, how in outcome.grown.items():
            growths[name][how] += 1
    return tally, growths


def run(sample: bool = False) -> str:
    tally, growths = sweep(CI_OPS if sample else None)
    correct = _per_op(tally, "correct")
    failures = tally.failures.get("correct", {})
    kinds = ["same graph", "recompiled", "refused", "eager rejects", "none"]
    lines = [
        "## inductor_lite: compile_fx on OpInfo samples with symbolic sizes",
        "",
        f"The same first {PER_OP} float32 CPU samples per op, traced with `fxtrace.make_fx` in "
        "symbolic mode (every size a symbol, passed to the kernels), compiled with "
        "`compile_fx` and run through Triton's interpreter; *correct* and *generated only* as "
        "above. Each compiled graph is then called on grown copies of the sample's inputs "
        "(every dim equal to the first tensor's leading size + 1; every dim of size 2 or more "
        "+ 3) and compared with eager again; a wrong grown result fails the sample. *Same "
        "graph*: the compiled graph served the new sizes; *recompiled*: a guard of the trace "
        "failed and compile_fx compiled another version; *refused*: the trace's size "
        "assumptions do not hold for them (a size it specialised); *eager rejects*: the op "
        "refuses the grown inputs; *none*: no dim to grow. Samples whose symbolic trace "
        f"fails in fxtrace (not counted above): {tally.total.get('untraceable', 0)}.",
        "",
        *rate_table(tally),
        "",
        "| grown call | " + " | ".join(kinds) + " |",
        "| --- | " + " | ".join("---" for _ in kinds) + " |",
        *(f"| {name} | " + " | ".join(str(counts[k]) for k in kinds) + " |"
          for name, counts in growths.items()),
        "",
        f"Ops with a sample that fails: {len(failures)}",
    ]
    lines += [""] if failures else []
    lines += [f"- `{op}` ({correct[op][0]}/{correct[op][1]} correct): {error}"
              for op, error in sorted(failures.items())]
    return "\n".join(lines) + "\n"
