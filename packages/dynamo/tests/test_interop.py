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


def test_torch_func_transforms_over_a_compiled_function_run_it_eagerly() -> None:
    """Under grad/vmap the inputs are functorch's wrapped tensors, which the frontend cannot
    trace: such a call runs eagerly (no compilation, nothing given up), and a plain call
    afterwards still compiles."""
    from torch.func import grad, vmap

    def f(x):
        return torch.sin(x).sum()

    compiled = dynamo.compile(f, backend="eager")
    x = torch.randn(3)
    torch.testing.assert_close(grad(compiled)(x), grad(f)(x))
    batch = torch.randn(2, 3)
    torch.testing.assert_close(vmap(grad(compiled))(batch), vmap(grad(f))(batch))
    torch.testing.assert_close(compiled(x), f(x))
    assert len(compiled.cache) == 1
