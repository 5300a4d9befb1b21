"""The main demo: what the stack can do today, on a real model.

A GPT-style transformer block runs on fake tensors with a symbolic batch and sequence length:
no data is computed, yet every output shape is known as an expression in the input's sizes, and
the ShapeEnv lists the assumptions (guards) the run made about them.
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

from fakecore import FakeTensorMode, ShapeEnv

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from models import SmallCNN, TransformerBlock  # noqa: E402


def fake_forward(model: torch.nn.Module, example: torch.Tensor, dynamic_dims: tuple[int, ...]):
    mode = FakeTensorMode(ShapeEnv())
    fake_input = mode.from_tensor(example, dynamic_dims=dynamic_dims)
    params = {n: mode.from_tensor(p) for n, p in model.named_parameters()}
    buffers = {n: mode.from_tensor(b) for n, b in model.named_buffers()}
    with mode:
        out = torch.func.functional_call(model, {**params, **buffers}, (fake_input,))
    return fake_input, out, mode.shape_env


def main() -> None:
    for model, example, dims in [
        (TransformerBlock(), torch.randn(8, 128, 64), (0, 1)),
        (SmallCNN(), torch.randn(4, 3, 32, 32), (0, 2, 3)),
    ]:
        x, y, env = fake_forward(model.eval(), example, dims)
        print(f"{type(model).__name__}: input {tuple(x.shape)} -> output {tuple(y.shape)}")
        print(f"  output strides {y.stride()}, device {y.device}")
        print(f"  guards: {[str(g.expr) for g in env.guards] or 'none'}")
        ranges = {str(s): f"[{r.lower}, {r.upper}]" for s, r in env.var_to_range.items()}
        print(f"  symbol ranges: {ranges}")


if __name__ == "__main__":
    main()
