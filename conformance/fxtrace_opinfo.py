"""fxtrace.make_fx against PyTorch's make_fx on the OpInfo samples, in all three modes.

For each sample: trace a function that calls the op on the sample's tensors, run the graph on
the real tensors, and compare with calling the op directly (values within the default
tolerances; for random ops, which differ from run to run, only shapes and dtypes).
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch
from torch.utils._pytree import tree_flatten, tree_unflatten

sys.path.insert(0, str(Path(__file__).parent))
from opinfo import CI_OPS, Tally, attempt, samples  # noqa: E402

MODES = ("real", "fake", "symbolic")


def _as_function(sample):
    flat, spec = tree_flatten((sample.args, sample.kwargs))
    slots = [i for i, v in enumerate(flat) if isinstance(v, torch.Tensor)]

    def fn(*tensors):
        values = list(flat)
        for i, t in zip(slots, tensors):
            values[i] = t
        args, kwargs = tree_unflatten(values, spec)
        return sample.op(*args, **kwargs)

    return fn, [flat[i] for i in slots]


def _is_random(sample, fn, tensors) -> bool:
    """Whether the op's values vary between runs: random ops, and uninitialised memory."""
    if sample.op.name.startswith(("empty", "new_empty")):
        return True
    torch.manual_seed(0)
    first = fn(*tensors)
    for seed in range(1, 4):  # one other seed can draw the same values (a bernoulli of a few 1s)
        torch.manual_seed(seed)
        try:
            torch.testing.assert_close(first, fn(*tensors), equal_nan=True)
        except AssertionError:
            return True
    return False


def _same(got, expected, random: bool) -> bool:
    if random:
        got_leaves, expected_leaves = tree_flatten(got)[0], tree_flatten(expected)[0]
        return len(got_leaves) == len(expected_leaves) and all(
            not isinstance(e, torch.Tensor) or (g.shape == e.shape and g.dtype == e.dtype)
            for g, e in zip(got_leaves, expected_leaves)
        )
    torch.testing.assert_close(got, expected, equal_nan=True)
    return True


def _replay(make, fn, mode: str, tensors: list, expected, random: bool) -> bool:
    return _same(make(fn, mode)(*tensors)(*tensors), expected, random)


def _ours(fn, mode):
    from fxtrace import make_fx

    return make_fx(fn, mode)


def _peer(fn, mode):
    from torch.fx.experimental.proxy_tensor import make_fx

    return make_fx(fn, tracing_mode=mode)


def sweep(op_names: list[str] | None = None) -> Tally:
    tally = Tally()
    for sample in samples(op_names):
        fn, tensors = _as_function(sample)
        try:
            random = _is_random(sample, fn, tensors)
            expected = fn(*tensors)
        except Exception:  # the sample is invalid for a real run: it tests nothing here
            continue
        for mode in MODES:
            for who, make in (("ours", _ours), ("peer", _peer)):
                error = attempt(_replay, make, fn, mode, tensors, expected, random)
                tally.add(f"{who} {mode}", sample.op.name, error)
    return tally


def run(sample: bool = False) -> str:
    tally = sweep(CI_OPS if sample else None)
    lines = [
        "## fxtrace: make_fx on OpInfo samples",
        "",
        "First 3 float32 CPU samples per op; a sample passes when the traced graph, run on the "
        "real inputs, gives the op's own results (random ops and `empty*`, whose values vary "
        "from run to run: the same shapes and dtypes).",
        "",
        "| mode | ours | peer (torch make_fx) |",
        "| --- | --- | --- |",
    ]
    for mode in MODES:
        lines.append(f"| {mode} | {tally.rate(f'ours {mode}')} | {tally.rate(f'peer {mode}')} |")
    for mode in MODES:
        ours_fail = tally.failures.get(f"ours {mode}", {})
        peer_fail = tally.failures.get(f"peer {mode}", {})
        worse = {op: e for op, e in ours_fail.items() if op not in peer_fail}
        lines += ["", f"Ops where ours fails and the peer passes ({mode}): {len(worse)}"]
        lines += [""] if worse else []
        lines += [f"- `{op}`: {error}" for op, error in sorted(worse.items())]
    return "\n".join(lines) + "\n"
