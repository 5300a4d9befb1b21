"""`interpolate` by a float scale factor with symbolic sizes: the output size is
`floor(s * scale)`, a float64 product rounded once, computed by the wrapper and by the kernels
as eager computes it in Python. Each function is traced by `make_fx(fn, "symbolic")`,
compiled once and compared with eager at several sizes through the same compiled object."""

import math

import pytest
import torch
import torch.nn.functional as F

from fxtrace import make_fx
from inductor_lite import compile_fx, counters


def compiled_over_sizes(fn, shapes: list[tuple], device: str):
    """`fn` traced symbolically and compiled at the first of `shapes`, then called at each
    and compared with eager."""
    first = torch.randn(*shapes[0], device=device)
    compiled = compile_fx(make_fx(fn, "symbolic")(first), [first])
    for shape in shapes:
        x = torch.randn(*shape, device=device)
        got, want = compiled(x), fn(x)
        assert got.shape == want.shape and got.dtype == want.dtype
        torch.testing.assert_close(got, want, atol=1e-5, rtol=1e-5)
    return compiled


def assert_generated(compiled):
    assert len(compiled.versions) == 1
    assert counters["eager_graphs"] == 0 and counters["fallbacks"] == 0, dict(counters)
    assert counters["kernels"] > 0


# spatial sizes of 10 and 20 at scale 0.7: float64 rounds 0.7 * 10 up to 7.0 (the exact
# product of the float 0.7 and 10 is below 7): eager's size is 7, and so must ours be
SHAPES = {1: [(2, 3, 5), (3, 2, 10), (2, 4, 20)],
          2: [(2, 3, 5, 6), (3, 2, 10, 9), (2, 4, 7, 20)],
          3: [(2, 3, 5, 6, 4), (3, 2, 10, 3, 7), (2, 2, 4, 20, 5)]}


@pytest.mark.parametrize("scale", [1.7, 0.7])
@pytest.mark.parametrize("mode, dims", [("nearest", 2), ("nearest-exact", 2), ("bilinear", 2),
                                        ("bicubic", 2), ("linear", 1), ("trilinear", 3),
                                        ("area", 2)])
def test_interpolate_by_a_float_scale(device, mode, dims, scale):
    def up(x):
        return F.interpolate(x, scale_factor=scale, mode=mode)
    assert_generated(compiled_over_sizes(up, SHAPES[dims], device))


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_align_corners_and_a_scale_per_dim(device, mode):
    def up(x):
        return F.interpolate(x, scale_factor=(1.3, 0.7), mode=mode, align_corners=True)
    assert_generated(compiled_over_sizes(up, SHAPES[2], device))


@pytest.mark.parametrize("mode", ["nearest", "bilinear"])
def test_recomputed_scale_factor(device, mode):
    """The scale recomputed from the sizes (`in / out`): a float of sizes the wrapper computes."""
    def up(x):
        return F.interpolate(x, scale_factor=1.7, mode=mode, recompute_scale_factor=True)
    assert_generated(compiled_over_sizes(up, SHAPES[2], device))


@pytest.mark.parametrize("rounding", [math.floor, math.ceil, math.trunc])
def test_a_float_times_a_product_of_sizes(device, rounding):
    """`floor(float(s0 * s1) * 1.7)`: one rounding of the product of the size product, as eager
    (sympy writes `1.7*s0*s1`, which Python would round twice)."""
    def fn(x):
        return x.new_ones(rounding(x.shape[0] * x.shape[1] * 1.7)) * x.sum()
    assert_generated(compiled_over_sizes(fn, [(3, 5), (7, 9), (10, 11)], device))


@pytest.mark.parametrize("size", [
    lambda n: math.floor(1.7 * (3 * n)),  # sympy: `floor(5.1*s0)`, another rounding
    lambda n: math.floor((n + 1) * 1.7),  # sympy: `floor(1.7*s0 + 1.7)`
])
def test_float_sizes_sympy_rewrote_run_as_aten(device, size):
    def fn(x):
        return x.new_ones(size(x.shape[0])) * x.sum()
    compiled = compiled_over_sizes(fn, [(3, 5), (7, 9), (10, 11)], device)
    assert counters["eager_graphs"] == 1
    assert len(compiled.versions) == 1
