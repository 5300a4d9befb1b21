"""Fractional max pooling as generated kernels, against eager (fractional_pooling.py)."""

import pytest
import torch
import torch.nn.functional as F

from fxtrace import make_fx
from inductor_lite import compile_fx, counters

aten = torch.ops.aten


def check(fn, *inputs, fallbacks=0):
    """`fn` compiled equals eager bit for bit (values and indices), with `fallbacks` aten ops."""
    compiled = compile_fx(make_fx(fn, "real")(*inputs), list(inputs))
    got, want = compiled(*inputs), fn(*inputs)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        torch.testing.assert_close(g, w, atol=0, rtol=0, equal_nan=True)
    assert counters["fallbacks"] == fallbacks
    if not fallbacks:
        assert counters["kernels"] == 1


def pool2d(kernel, output_size):
    return lambda x, samples: aten.fractional_max_pool2d(x, kernel, output_size, samples)


def pool3d(kernel, output_size):
    return lambda x, samples: aten.fractional_max_pool3d(x, kernel, output_size, samples)


@pytest.mark.parametrize("kernel,output_size", [([2, 3], [4, 5]), ([3, 1], [5, 1]),
                                                ([1, 2], [1, 8])])
def test_fractional_max_pool2d(device, kernel, output_size):
    x = torch.randn(2, 3, 7, 9, device=device)
    x[0, 0, 1, 1] = float("nan")
    x[0, 0, 1, 4] = float("nan")  # two NaN in a window: the last one's index
    x[1, 1, :4, :4] = 1.0  # ties: the first maximum's index
    x[1, 2, :4, :4] = -float("inf")  # a window of -inf only: its first tap's index
    check(pool2d(kernel, output_size), x, torch.rand(3, 3, 2, device=device))


def test_fractional_max_pool2d_of_unbatched_transposed_float64(device):
    x = torch.randn(9, 6, 4, device=device, dtype=torch.float64).permute(2, 1, 0)
    samples = torch.rand(2, 4, 1, device=device, dtype=torch.float64).permute(2, 1, 0)
    check(pool2d([2, 2], [3, 7]), x, samples)


def test_fractional_max_pool2d_starts_in_float32(device):
    # eager's window starts are float32 arithmetic: output 5 of 8 over 18 columns starts at
    # column 13 for this sample (12 in float64)
    samples = torch.tensor([[[0.7647057175636292, 0.0]]], device=device)
    x = torch.arange(18.0, device=device).expand(1, 1, 3, 18)
    assert pool2d([1, 1], [3, 8])(x, samples)[1][0, 0, 0, 5] == 13
    check(pool2d([1, 1], [3, 8]), x, samples)


def test_fractional_max_pool2d_by_output_ratio(device):
    def fn(x, samples):
        return F.fractional_max_pool2d(x, 3, output_ratio=(0.5, 0.7), return_indices=True,
                                       _random_samples=samples)
    check(fn, torch.randn(2, 2, 10, 8, device=device), torch.rand(2, 2, 2, device=device))


def test_fractional_max_pool2d_drawing_its_samples(device):
    # samples drawn in the graph (by generated code, not eager's generator): each index names
    # its value
    x = torch.randn(2, 3, 8, 8, device=device)

    def fn(x):
        return F.fractional_max_pool2d(x, 2, output_size=(5, 4), return_indices=True)
    compiled = compile_fx(make_fx(fn, "real")(x), [x])
    values, indices = compiled(x)
    assert values.shape == indices.shape == (2, 3, 5, 4)
    assert torch.equal(values, x.flatten(-2).gather(-1, indices.flatten(-2)).view(2, 3, 5, 4))
    assert counters["fallbacks"] == 0


@pytest.mark.parametrize("shape,kernel,output_size", [
    ((2, 2, 5, 6, 7), [2, 2, 3], [3, 4, 2]),
    ((3, 4, 5, 6), [1, 3, 2], [3, 2, 4]),  # unbatched
])
def test_fractional_max_pool3d(device, shape, kernel, output_size):
    x = torch.randn(*shape, device=device)
    x.view(-1)[7] = float("nan")
    x[..., :2, :3, :3] = 0.5  # ties
    check(pool3d(kernel, output_size), x, torch.rand(2, shape[-4], 3, device=device))


def test_fractional_max_pool3d_of_a_transposed_float64_input(device):
    x = torch.randn(2, 7, 6, 5, 3, device=device, dtype=torch.float64).permute(0, 4, 3, 2, 1)
    check(pool3d([2, 2, 2], [3, 4, 5]), x,
          torch.rand(2, 3, 3, device=device, dtype=torch.float64))


def test_fractional_max_pool2d_of_half_floats_falls_back(device):
    check(pool2d([2, 2], [3, 3]), torch.randn(1, 2, 6, 6, device=device, dtype=torch.float16),
          torch.rand(1, 2, 2, device=device, dtype=torch.float16), fallbacks=1)


def test_fractional_max_pool2d_of_symbolic_sizes(device):
    # the second call's sizes are symbolic: the wrapper computes each dim's `alpha` in Python;
    # output 5 of 8 over 18 columns starts at 13 as in float32 (12 in float64)
    fn = pool2d([1, 2], [3, 8])
    x, samples = torch.randn(1, 2, 5, 12, device=device), torch.rand(1, 2, 2, device=device)
    compiled = compile_fx(torch.fx.symbolic_trace(fn), [x, samples])
    compiled(x, samples)
    x = torch.arange(18.0, device=device).expand(2, 2, 7, 18)
    samples = torch.tensor([[[0.7647057175636292, 0.3]] * 2] * 2, device=device)
    counters.clear()
    for got, want in zip(compiled(x, samples), fn(x, samples)):
        torch.testing.assert_close(got, want, atol=0, rtol=0)
    assert "hostf" in compiled.versions[-1][1].source
    assert counters["fallbacks"] == 0


def test_fractional_max_pool2d_of_symbolic_sizes_in_float64_falls_back(device):
    fn = pool2d([2, 2], [3, 3])
    f64 = torch.float64
    x = torch.randn(1, 2, 5, 6, device=device, dtype=f64)
    samples = torch.rand(1, 2, 2, device=device, dtype=f64)
    compiled = compile_fx(torch.fx.symbolic_trace(fn), [x, samples])
    compiled(x, samples)
    x = torch.randn(2, 2, 7, 9, device=device, dtype=f64)
    samples = torch.rand(2, 2, 2, device=device, dtype=f64)
    counters.clear()
    for got, want in zip(compiled(x, samples), fn(x, samples)):
        torch.testing.assert_close(got, want, atol=0, rtol=0)
    assert counters["fallbacks"] == 1
