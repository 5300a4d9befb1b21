"""Complex results made from real inputs (complex_results.py): `complex`, `polar`, casts to a
complex dtype and `view_as_complex`, generated, against eager: dtype, strides and values; and
the ops reading them generated too (views, `view_as_real`, `real`, `imag`, `abs`, `angle`)."""

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
    # `sgn` of a complex value has no lowering: its decomposition's complex div, where and mul
    # run as aten, on the generated value. On a GPU so does its `scalar_tensor(0, complex64)`
    # (no lowering makes a complex constant); on the CPU that 0-d tensor is a host value, made
    # on the host by aten, not a fallback.
    re, im = torch.randn(4, 5, device=device), torch.randn(4, 5, device=device)
    check(lambda a, b: torch.complex(a, b).sgn() * 2, re, im, exact=False,
          fallbacks=3 if device == "cpu" else 4)


def check_all(fn, *inputs, **kwargs):
    """`check` of each of the tuple `fn` returns, compiled together; views share storage as
    eager's do."""
    compiled = compile_fx(torch.fx.symbolic_trace(fn), list(inputs))
    for got, want in zip(compiled(*inputs), fn(*inputs)):
        assert got.dtype == want.dtype and got.shape == want.shape
        assert got.stride() == want.stride() and got.storage_offset() == want.storage_offset()
        torch.testing.assert_close(got, want, equal_nan=True, **kwargs)
    assert counters["fallbacks"] == 0


def test_views_of_a_complex_result(device):
    re, im = torch.randn(5, 6, device=device), torch.randn(6, 5, device=device).t()
    check_all(lambda a, b: (c := torch.complex(a, b), c.t(), c.transpose(0, 1)[1:, ::2], c[2],
                            c[:, -1], c.reshape(-1), c.view(3, 2, 5)[1], c.unsqueeze(1),
                            c[:1].expand(4, 6), c.permute(1, 0).unsqueeze(0).squeeze(0)),
              re, im, atol=0, rtol=0)


def test_real_views_of_complex_results(device):
    re, im = torch.randn(4, 7, dtype=torch.float64, device=device), torch.randn(
        7, dtype=torch.float64, device=device)
    check_all(lambda a, b: (c := torch.complex(a, b), torch.view_as_real(c), c.real, c.imag,
                            torch.view_as_real(c.t()[1:5:2]), c[1:].imag * 2 + c.t().real.t()[:3]),
              re, im, atol=0, rtol=0)


def test_real_and_imag_of_a_view_as_complex(device):
    x = torch.randn(3, 5, 2, device=device)
    check_all(lambda a: (c := torch.view_as_complex(a * 2 + 1), c.real, c.imag.t(), c[::2].imag),
              x, atol=0, rtol=0)


def test_chalf_parts(device):
    x = torch.randn(6, 5, device=device).t()
    check_all(lambda a: (c := a.to(torch.complex32), c.real + 1, c.imag, c.t()), x,
              atol=0, rtol=0)


def test_abs_matches_eager_hypot(device):
    # eager: `hypot` of the parts; complex64 bit for bit (float64 squares, rounded once)
    big = torch.tensor([3e38, 1e30, 1e-30, 0.0, -0.0, float("inf"), float("nan"),
                        float("-inf"), 5.0], device=device)
    re = torch.cat([big, torch.randn(100, device=device) * torch.randn(100, device=device).exp()])
    im = torch.cat([big.flip(0), torch.randn(100, device=device)])
    fn = lambda a, b: torch.complex(a, b).abs()  # noqa: E731
    if device == "cpu":
        check(fn, re, im)
    else:  # CUDA eager's is `hypotf`, within 3 ulps (CUDA's math API): 1 ulp off, measured
        got = compile_fx(torch.fx.symbolic_trace(fn), [re, im])(re, im)
        torch.testing.assert_close(got, fn(re, im), atol=0, rtol=3 * 2**-23, equal_nan=True)
    check(lambda a, b: torch.complex(a, b)[::3].abs(), re.double() * 1e280, im.double(),
          exact=False)


def test_angle(device):
    special = torch.tensor([0.0, -0.0, 1.0, -1.0, float("inf"), float("-inf"), float("nan")],
                           device=device)
    re, im = special.repeat_interleave(7), special.repeat(7)
    check(lambda a, b: torch.complex(a, b).angle(), re, im, exact=False)
    # (of a sliced value: eager's angle of a transposed one is contiguous, the trace's is not)
    x, y = torch.randn(9, 4, device=device), torch.randn(4, device=device)
    check(lambda a, b: torch.polar(a, b)[1:, ::2].angle() + 1, x, y, exact=False)


@pytest.mark.parametrize("fn", [
    lambda c: torch.view_as_real(c.conj().resolve_conj()),  # a conjugate: `_conj` runs as aten
    lambda c: c.conj().imag,
    lambda c: c.angle(),  # complex128: helpers.atan2 is float32-precise
    lambda c: c.to(torch.complex32).abs(),
])
def test_refused_reads_fall_back(device, fn):
    x, y = torch.randn(3, 4, dtype=torch.float64, device=device), torch.randn(
        3, 4, dtype=torch.float64, device=device)
    compiled = compile_fx(torch.fx.symbolic_trace(lambda a, b: fn(torch.complex(a, b))), [x, y])
    torch.testing.assert_close(compiled(x, y), fn(torch.complex(x, y)), equal_nan=True)
    # (the negative bit of `conj().imag`: the whole graph runs as aten)
    assert counters["fallbacks"] + counters["eager_graphs"] >= 1


def test_views_of_a_complex_input_fall_back(device):
    z = torch.randn(4, 3, dtype=torch.complex64, device=device)
    check(lambda a: a.t().abs(), z, fallbacks=2)


def test_complex_input_falls_back(device):
    z = torch.randn(4, 3, dtype=torch.complex64, device=device)
    check(lambda a: a.to(torch.complex128), z, fallbacks=1)
