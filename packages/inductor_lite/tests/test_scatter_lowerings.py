"""Scatters that reduce (scatter_reduce, scatter with reduce, index_reduce) against eager, run
as generated kernels with no fallback (scatter_lowerings.py)."""

import pytest
import torch

from inductor_lite import compile_fx, counters

REDUCES = ["sum", "prod", "mean", "amax", "amin"]


def compile_and_check(fn, *inputs):
    compiled = compile_fx(torch.fx.symbolic_trace(fn), list(inputs))
    got, want = compiled(*inputs), fn(*inputs)
    assert got.shape == want.shape and got.dtype == want.dtype
    assert got.stride() == want.stride()
    torch.testing.assert_close(got, want, equal_nan=True)
    return compiled


def _index(shape, high, device):
    """Indices with repeats (several sources land on one element) and misses (none do)."""
    return torch.randint(0, high, shape, device=device)


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", REDUCES)
def test_scatter_reduce(device, reduce, include_self):
    x, src = torch.randn(5, 7, device=device), torch.randn(6, 7, device=device)
    index = _index((6, 7), 5, device)
    compile_and_check(lambda x, i, s: x.scatter_reduce(0, i, s, reduce, include_self=include_self),
                      x, index, src)
    assert counters["fallbacks"] == 0


@pytest.mark.parametrize("reduce", REDUCES)
def test_scatter_reduce_of_one_source_per_element(device, reduce):
    """An index of one row along the scattered dim: a reduction over one source (rnumel 1)."""
    x, src = torch.randn(5, 7, device=device), torch.randn(1, 7, device=device)
    compile_and_check(lambda x, i, s: x.scatter_reduce(0, i, s, reduce, include_self=False),
                      x, _index((1, 7), 5, device), src)
    assert counters["fallbacks"] == 0


@pytest.mark.parametrize("reduce", REDUCES)
def test_scatter_reduce_with_a_smaller_index_on_a_transposed_input(device, reduce):
    """The index covers part of the other dims (the rest of `x` keeps its values); `x` is a
    transposed view, and the last dim is scattered."""
    x, src = torch.randn(9, 4, device=device).t(), torch.randn(3, 5, device=device)
    index = _index((3, 2), 9, device)
    compile_and_check(lambda x, i, s: x.scatter_reduce(-1, i, s, reduce, include_self=False),
                      x, index, src)
    assert counters["fallbacks"] == 0


@pytest.mark.parametrize("reduce", ["sum", "prod", "amax", "amin"])
def test_scatter_reduce_of_integers(device, reduce):
    x = torch.randint(-9, 9, (4, 3), device=device)
    src = torch.randint(-9, 9, (5, 3), device=device)
    compile_and_check(lambda x, i, s: x.scatter_reduce(0, i, s, reduce), x,
                      _index((5, 3), 4, device), src)
    assert counters["fallbacks"] == 0


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", ["amax", "amin"])
def test_nan_propagates_as_in_eager(device, reduce, include_self):
    x, src = torch.randn(3, 4, device=device), torch.randn(3, 4, device=device)
    x[0, 1] = src[2, 3] = float("nan")
    index = torch.tensor([[0, 0, 1, 2], [0, 1, 1, 2], [1, 0, 2, 2]], device=device)
    compile_and_check(lambda x, i, s: x.scatter_reduce(0, i, s, reduce, include_self=include_self),
                      x, index, src)
    assert counters["fallbacks"] == 0


@pytest.mark.parametrize("reduce", ["add", "multiply"])
def test_scatter_with_reduce(device, reduce):
    x, src = torch.randn(5, 4, device=device), torch.randn(5, 4, device=device)
    index = _index((5, 4), 5, device)
    compile_and_check(lambda x, i, s: x.scatter(0, i, s, reduce=reduce), x, index, src)
    compile_and_check(lambda x, i: x.scatter(1, i, 1.5, reduce=reduce), x, index.clamp(max=3))
    assert counters["fallbacks"] == 0


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
def test_index_reduce(device, reduce, include_self):
    x, source = torch.randn(3, 6, 2, device=device), torch.randn(3, 4, 2, device=device)
    index = torch.tensor([5, 0, 5, 2], device=device)
    compile_and_check(lambda x, i, s: x.index_reduce(1, i, s, reduce, include_self=include_self),
                      x, index, source)
    assert counters["fallbacks"] == 0


def test_an_index_out_of_range_raises(device):
    if device != "cpu":
        pytest.skip("on a GPU, eager's check of its indices is a device assert, which ends the "
                    "process's CUDA context")
    x, src = torch.randn(4, 3, device=device), torch.randn(2, 3, device=device)
    index = torch.tensor([[0, 1, 2], [3, 0, 1]], device=device)

    def fn(x, i, s):
        return x.scatter_reduce(0, i, s, "amax")
    compiled = compile_and_check(fn, x, index, src)
    index[1, 2] = 4
    with pytest.raises(RuntimeError, match="out of bounds"):
        fn(x, index, src)
    with pytest.raises(IndexError, match="index out of bounds"):
        compiled(x, index, src)


def test_a_half_precision_sum_falls_back(device):
    """Eager rounds a half running sum after each source: kept as the aten call."""
    x, src = torch.randn(4, 3, device=device).half(), torch.randn(4, 3, device=device).half()
    compile_and_check(lambda x, i, s: x.scatter_reduce(0, i, s, "sum"), x,
                      _index((4, 3), 4, device), src)
    assert counters["fallbacks"] == 1


def test_a_scatter_over_many_sources_falls_back(device):
    """Each element would read every source along the dim: past MAX_SOURCES, aten's linear loop."""
    from inductor_lite.scatter_lowerings import MAX_SOURCES

    n = MAX_SOURCES + 1
    x, src = torch.randn(4, device=device), torch.randn(n, device=device)
    compile_and_check(lambda x, i, s: x.scatter_reduce(0, i, s, "amax"), x,
                      _index((n,), 4, device), src)
    assert counters["fallbacks"] == 1
