"""Complex results made from real inputs (complex_results.py): `complex`, `polar`, casts to a
complex dtype and `view_as_complex`, generated, against eager: dtype, strides and values."""

import pytest
import torch

from inductor_lite import compile_fx, counters


def check(fn, *inputs, exact=True, fallbacks=0):
    compiled = compile_fx(torch.fx.symbolic_trace(fn), list(inputs))
    got, want = compiled(*inputs), fn(*inputs)
    assert got.shape == want.shape and got.dtype == want.dtype
    assert got.stride() == want.stride()
    tolerance = {"atol": 0, "rtol": 0} if exact else {}
    torch.testing.assert_close(got, want, equal_nan=True, **tolerance)
    assert counters["fallbacks"] == fallbacks
    return got


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16])
def test_complex(device, dtype):
    re = torch.randn(5, 7, dtype=dtype, device=device)
    im = torch.randn(7, 5, dtype=dtype, device=device).t()  # not contiguous
    check(lambda a, b: torch.complex(a, b), re, im)


def test_complex_broadcasts_and_keeps_special_values(device):
    re = torch.tensor([[0.0], [-0.0], [float("inf")]], device=device)
    im = torch.tensor([float("nan"), -1.5, 3.0, -0.0], device=device)
    got = check(lambda a, b: torch.complex(a, b), re, im)
    assert torch.equal(torch.view_as_real(got).signbit(), torch.view_as_real(
        torch.complex(re, im)).signbit())


def test_complex_of_a_computed_value(device):
    x, y = torch.randn(3, 6, device=device), torch.randn(6, device=device)
    check(lambda a, b: torch.complex(a + 1, b * 2), x, y)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_polar(device, dtype):
    r = torch.randn(4, 9, dtype=dtype, device=device)  # negative lengths too, as eager takes
    theta = torch.randn(9, 4, dtype=dtype, device=device).t() * 4
    check(lambda a, b: torch.polar(a, b), r, theta, exact=False)


def test_polar_broadcasts(device):
    check(lambda a, b: torch.polar(a, b), torch.rand(3, 1, device=device),
          torch.randn(5, device=device), exact=False)


@pytest.mark.parametrize("target", [torch.complex64, torch.complex128, torch.complex32])
@pytest.mark.parametrize("source", [torch.float32, torch.float64, torch.int64, torch.bool])
def test_cast_to_complex(device, target, source):
    x = (torch.randn(6, 5, device=device) * 1e3).to(source).t()  # not contiguous: kept so
    check(lambda a: a.to(target), x)


def test_chalf_rounds_like_eager(device):
    # halfway between two halves once rounded to float32: float64 converts through float32
    halfway = 1 + 2.0 ** -11 + 2.0 ** -40
    x = torch.tensor([halfway, -halfway, 7e4, 1e-8, float("nan")], dtype=torch.float64,
                     device=device)
    check(lambda a: a.to(torch.complex32), x)


def test_cast_keeps_channels_last(device):
    x = torch.randn(2, 3, 4, 5, device=device).to(memory_format=torch.channels_last)
    check(lambda a: a.to(torch.complex64), x)


def test_view_as_complex_of_input_is_a_view(device):
    x = torch.randn(3, 8, 2, device=device)[:, 1:6]  # an offset, strides of eager's view
    got = check(lambda a: torch.view_as_complex(a), x)
    assert got.data_ptr() == x.data_ptr()


def test_view_as_complex_of_a_kernel_output(device):
    check(lambda a: torch.view_as_complex(a * 2 + 1), torch.randn(4, 5, 2, device=device))


def test_complex_value_read_by_an_aten_op(device):
    # `abs` of a complex value has no lowering: it runs as aten, on the generated value
    re, im = torch.randn(4, 5, device=device), torch.randn(4, 5, device=device)
    check(lambda a, b: torch.complex(a, b).abs() + 1, re, im, exact=False, fallbacks=1)


def test_complex_input_falls_back(device):
    z = torch.randn(4, 3, dtype=torch.complex64, device=device)
    check(lambda a: a.to(torch.complex128), z, fallbacks=1)
