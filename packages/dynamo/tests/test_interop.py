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


def test_a_compiled_function_warmed_up_then_called_under_a_transform_runs_eagerly() -> None:
    """An entry compiled for plain tensors is not run on a transform's wrapped tensors, whose
    guards hold (they see the logical sizes): it ran the backend's code on them (inductor_lite's
    kernels raised on a BatchedTensor: integration_tests/test_inductor_lite.py)."""
    from torch.func import jvp, vmap

    graphs = []

    def backend(gm, example_inputs):
        def run(*args):
            graphs.append(args)
            return gm(*args)
        return run

    def f(x):
        return torch.sin(x) * 2 + x.sum()

    compiled = dynamo.compile(f, backend=backend)
    batch = torch.randn(4, 3)
    compiled(batch[0])
    torch.testing.assert_close(vmap(compiled)(batch), vmap(f)(batch))
    torch.testing.assert_close(jvp(compiled, (batch[0],), (batch[1],)),
                               jvp(f, (batch[0],), (batch[1],)))
    assert len(graphs) == 1  # only the plain call ran the compiled graph
    torch.testing.assert_close(compiled(batch[1]), f(batch[1]))
    assert len(graphs) == 2 and len(compiled.cache) == 1


_JACFWD_OF_SIN = None


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_a_transform_of_a_torch_function_is_not_that_function(backend) -> None:
    """`vmap(torch.cumsum, ...)`, `jacfwd(torch.sin)` are wrappers with the name of the function
    they transform (functools.wraps): taken for that torch function, the graph's code called
    it (fx names a torch function by its module and name): `jacfwd(torch.sin)(x)` gave sin(x),
    not cos(x)."""
    from torch.func import jacfwd, vmap

    global _JACFWD_OF_SIN
    _JACFWD_OF_SIN = jacfwd(torch.sin)

    def made_inside(x):
        return jacfwd(torch.sin)(x) * 1, vmap(torch.cumsum, in_dims=(0, None))(x.expand(2, 3), 0)

    def held(x):
        return _JACFWD_OF_SIN(x[0]) + 1

    compiled = dynamo.compile(made_inside, backend=backend)
    for _ in range(3):
        x = torch.randn(3)
        torch.testing.assert_close(compiled(x), made_inside(x))
    x = torch.randn(3)
    torch.testing.assert_close(dynamo.compile(held, backend=backend)(x), held(x))


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
