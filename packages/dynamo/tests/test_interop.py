"""PyTorch's own inductor backend, as a `torch.compile`-style callable, through dynamo.compile."""

from __future__ import annotations

import warnings

import torch

import dynamo


def test_torch_inductor_backend_gives_eager_results() -> None:
    from torch._inductor.compile_fx import compile_fx

    used = []

    def inductor(gm, example_inputs):
        compiled = compile_fx(gm, example_inputs)
        used.append(compiled)
        return compiled

    def f(x, y):
        return torch.relu(x @ y) * 2 + x.sum()

    compiled = dynamo.compile(f, backend=inductor, fullgraph=True)
    x, y = torch.randn(8, 8), torch.randn(8, 8)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a backend failure would fall back with a warning
        torch.testing.assert_close(compiled(x, y), f(x, y))
    assert len(used) == 1
