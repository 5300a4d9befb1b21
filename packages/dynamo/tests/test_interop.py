"""PyTorch's own inductor backend, as a `torch.compile`-style callable, through dynamo.compile."""

from __future__ import annotations

import warnings

import pytest
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


@torch.library.custom_op("dynamo_test::bump", mutates_args=("x",))
def _bump(x: torch.Tensor, v: float) -> None:
    x.add_(v)


_bump.register_fake(lambda x, v: None)


@torch.library.custom_op("dynamo_test::scale", mutates_args=())
def _scale(x: torch.Tensor, a: float) -> torch.Tensor:
    return x * a


_scale.register_fake(lambda x, a: torch.empty_like(x))


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_custom_ops_in_the_graph_and_their_writes_kept(backend) -> None:
    """A custom op that writes its input (its name says nothing: its schema does) is not dead
    code, into a temporary or an input; a `custom_op` function called directly and an explicit
    overload (`torch.ops.aten.sin.default`) are graph ops, one graph."""
    def f(x, out):
        y = x.clone()
        torch.ops.dynamo_test.bump(y, 2.0)
        _bump(out, 1.0)
        return y, _scale(x, 3.0) + torch.ops.aten.sin.default(x)

    compiled = dynamo.compile(f, backend=backend, fullgraph=True)
    x, out, expected_out = torch.randn(3), torch.zeros(3), torch.zeros(3)
    for got, want in zip(compiled(x, out), f(x, expected_out)):
        torch.testing.assert_close(got, want)
    torch.testing.assert_close(out, expected_out)
