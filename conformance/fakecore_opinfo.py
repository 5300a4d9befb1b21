"""fakecore against PyTorch's FakeTensorMode on the OpInfo samples, static and symbolic.

For each sample: run the op for real; then convert the inputs to fakes (every dim a symbol in
symbolic mode) and run the op under the fake mode; the sample passes when the outputs have the
real outputs' structure, shapes, dtypes, devices and strides (symbolic sizes compared through
their hints; a data-dependent size matches anything).
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch
from torch.utils._pytree import tree_map

sys.path.insert(0, str(Path(__file__).parent))
from opinfo import CI_OPS, Tally, attempt, same_metadata, samples  # noqa: E402

MODES = ("static", "symbolic")


def _ours(mode_name: str):
    from fakecore import FakeTensorMode, ShapeEnv

    mode = FakeTensorMode(ShapeEnv() if mode_name == "symbolic" else None)

    def convert(t):
        dims = range(t.dim()) if mode_name == "symbolic" else ()
        return mode.from_tensor(t, dynamic_dims=dims)

    return mode, convert


def _peer(mode_name: str):
    from torch._dynamo.source import ConstantSource
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.symbolic_shapes import (
        DimDynamic,
        ShapeEnv,
        StatelessSymbolicContext,
    )

    if mode_name == "static":
        mode = FakeTensorMode()
        return mode, mode.from_tensor
    mode = FakeTensorMode(shape_env=ShapeEnv())
    count = iter(range(10**9))

    def convert(t):
        context = StatelessSymbolicContext(dynamic_sizes=[DimDynamic.DYNAMIC] * t.dim())
        return mode.from_tensor(t, symbolic_context=context, source=ConstantSource(f"x{next(count)}"))

    return mode, convert


def _check(make, mode_name: str, sample, real) -> bool:
    mode, convert = make(mode_name)
    args, kwargs = tree_map(lambda a: convert(a) if isinstance(a, torch.Tensor) else a,
                            (sample.args, sample.kwargs))
    with mode:
        out = sample.op(*args, **kwargs)
    return same_metadata(real, out)


def sweep(op_names: list[str] | None = None) -> Tally:
    tally = Tally()
    for sample in samples(op_names):
        try:
            real = sample.op(*sample.args, **sample.kwargs)
        except Exception:  # the sample is invalid for a real run: it tests nothing here
            continue
        for mode_name in MODES:
            for who, make in (("ours", _ours), ("peer", _peer)):
                error = attempt(_check, make, mode_name, sample, real)
                tally.add(f"{who} {mode_name}", sample.op.name, error)
    return tally


def run(sample: bool = False) -> str:
    tally = sweep(CI_OPS if sample else None)
    lines = [
        "## fakecore: FakeTensorMode on OpInfo samples",
        "",
        "First 3 float32 CPU samples per op; a sample passes when the fake outputs have the real "
        "outputs' structure, shapes, dtypes, devices and strides (strides of dims of size > 1, "
        "in tensors with elements: the others carry no meaning).",
        "",
        "| mode | ours | peer (torch FakeTensorMode) |",
        "| --- | --- | --- |",
    ]
    for mode_name in MODES:
        lines.append(f"| {mode_name} | {tally.rate(f'ours {mode_name}')} | "
                     f"{tally.rate(f'peer {mode_name}')} |")
    for mode_name in MODES:
        ours_fail = tally.failures.get(f"ours {mode_name}", {})
        peer_fail = tally.failures.get(f"peer {mode_name}", {})
        worse = {op: e for op, e in ours_fail.items() if op not in peer_fail}
        better = sorted(op for op in peer_fail if op not in ours_fail)
        lines += ["", f"Ops where ours fails and the peer passes ({mode_name}): {len(worse)}"]
        lines += [""] if worse else []
        lines += [f"- `{op}`: {error}" for op, error in sorted(worse.items())]
        lines += ["", f"Ops where ours passes and the peer fails ({mode_name}): "
                      + (", ".join(f"`{op}`" for op in better) or "none")]
    return "\n".join(lines) + "\n"
