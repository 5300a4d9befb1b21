"""Microseconds per faked op: a transformer block's forward under each FakeTensorMode.

The op mix is what a GPT block really dispatches (layer norms, linears, views, attention,
softmax, GELU, residual adds), counted once with a small counting dispatch mode. Both modes run
the same forward on fakes of the same input; static sizes, then every input dim symbolic.
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch
from torch.utils._python_dispatch import TorchDispatchMode

sys.path.insert(0, str(Path(__file__).parent))
from models import TransformerBlock  # noqa: E402
from timing import median_seconds  # noqa: E402

SHAPE = (8, 128, 64)


class _CountOps(TorchDispatchMode):
    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.count += 1
        return func(*args, **(kwargs or {}))


def _ours(symbolic: bool):
    from fakecore import FakeTensorMode, ShapeEnv

    mode = FakeTensorMode(ShapeEnv() if symbolic else None)
    x = mode.from_tensor(torch.randn(SHAPE), dynamic_dims=(0, 1, 2) if symbolic else ())
    return mode, x, mode.from_tensor


def _peer(symbolic: bool):
    from torch._dynamo.source import ConstantSource
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.symbolic_shapes import (
        DimDynamic,
        ShapeEnv,
        StatelessSymbolicContext,
    )

    if not symbolic:
        mode = FakeTensorMode()
        return mode, mode.from_tensor(torch.randn(SHAPE)), mode.from_tensor
    mode = FakeTensorMode(shape_env=ShapeEnv())
    context = StatelessSymbolicContext(dynamic_sizes=[DimDynamic.DYNAMIC] * len(SHAPE))
    x = mode.from_tensor(torch.randn(SHAPE), symbolic_context=context, source=ConstantSource("x"))
    return mode, x, mode.from_tensor


def _seconds_per_forward(make, symbolic: bool, model: torch.nn.Module) -> float:
    mode, x, convert = make(symbolic)
    params = {name: convert(p) for name, p in model.named_parameters()}

    def forward() -> None:
        with mode:
            torch.func.functional_call(model, params, (x,))

    return median_seconds(forward, repeats=15, warmup=3)


def run() -> str:
    model = TransformerBlock().eval()
    counter = _CountOps()
    with counter:
        model(torch.randn(SHAPE))
    ops = counter.count
    lines = [
        "## fakecore: microseconds per faked op",
        "",
        f"TransformerBlock forward on a {SHAPE} input: {ops} aten ops per forward (counted on "
        "real tensors). Median of 15 forwards after 3 warm-ups.",
        "",
        "| sizes | ours µs/op | peer µs/op | ours / peer |",
        "| --- | --- | --- | --- |",
    ]
    for symbolic in (False, True):
        ours = _seconds_per_forward(_ours, symbolic, model) / ops * 1e6
        peer = _seconds_per_forward(_peer, symbolic, model) / ops * 1e6
        label = "symbolic" if symbolic else "static"
        lines.append(f"| {label} | {ours:.1f} | {peer:.1f} | {ours / peer:.2f} |")
    return "\n".join(lines) + "\n"
