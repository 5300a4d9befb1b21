"""igamma and igammac (incomplete_gamma.py) against eager: each of eager's four ways (the two
series, the continued fraction, the asymptotic expansion) and the edges (0, infinities, NaN,
negative), broadcast and non-contiguous operands, the halves, with every element generated (no
fallback)."""

import pytest
import torch

from inductor_lite import compile_fx, counters

# a and x over [1e-3, 1e3] and its edges; 21 to 200 near a = x is the asymptotic expansion's
POINTS = [0.0, 1e-3, 0.02, 0.3, 0.5, 0.9, 1.0, 1.05, 1.5, 3.0, 9.7, 19.0, 21.0, 25.0, 30.0,
          100.0, 160.0, 199.0, 230.0, 250.0, 1e3, float("inf"), float("nan"), -1.0]
OPS = [torch.igamma, torch.igammac]


def compiled(fn, *inputs):
    gm = torch.fx.symbolic_trace(fn)
    return compile_fx(gm, list(inputs))(*inputs)


@pytest.mark.parametrize("op", OPS)
def test_over_points_broadcast_and_transposed(op, device):
    # every (a, x) pair: a broadcast over x's columns, x read through a transpose
    a = torch.tensor(POINTS, device=device)[:, None, None]
    x = torch.tensor(POINTS, device=device)[None, :].expand(2, -1).t()
    out = compiled(lambda a, x: op(a, x), a, x)
    torch.testing.assert_close(out, op(a, x), equal_nan=True)
    assert counters["kernels"] == 1 and counters["fallbacks"] == 0


@pytest.mark.parametrize("op", OPS)
def test_random_log_grid_against_eager_and_float64(op, device):
    # odd sizes, a and x log-uniform over [1e-3, 1e3] and a band about a = x for large a;
    # and within 1e-6 of float64's value
    g = torch.Generator().manual_seed(0)
    a = 10 ** (torch.rand(37, 29, generator=g) * 6 - 3)
    x = 10 ** (torch.rand(37, 29, generator=g) * 6 - 3)
    x[::2] = a[::2] * (1 + (torch.rand(19, 29, generator=g) - 0.5) * 0.6)
    a, x = a.to(device), x.to(device)
    out = compiled(lambda a, x: op(a, x), a, x)
    torch.testing.assert_close(out, op(a, x))
    torch.testing.assert_close(out.double(), op(a.double(), x.double()), rtol=0, atol=1e-6)
    assert counters["fallbacks"] == 0


@pytest.mark.parametrize("op", OPS)
def test_float32_overflows_as_eager(op, device):
    # eager's float32 prefactor: a log x - x or lgamma(a) past 3.4e38 (inf - inf is NaN; inf
    # alone is 0), its Lanczos sum past it for a below 4e-39 (0 where P is 1)
    a = torch.tensor([1e38, 9.9e37, 3e36, 1.4e-45, 3e-40, 1e-38], device=device)
    x = torch.tensor([40.0, 1e3, 1e15, 1.4e-45, 3.01e-40, 1e-38], device=device)
    out = compiled(lambda a, x: op(a, x), a, x)
    torch.testing.assert_close(out, op(a, x), equal_nan=True)
    assert counters["fallbacks"] == 0


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_halves_and_integer_promotion(dtype, device):
    a = torch.tensor([0.5, 2.0, 7.0, 30.0, 31.0], device=device, dtype=dtype)
    x = torch.tensor([0.25, 3.0, 6.0, 29.0, 40.0], device=device, dtype=dtype)
    # CUDA eager has no half igamma: CPU eager's (in float32, rounded) is the reference
    want = torch.igamma(a.cpu(), x.cpu()).to(device)
    torch.testing.assert_close(compiled(lambda a, x: torch.igamma(a, x), a, x), want)
    n = torch.tensor([1, 2, 5, 30, 31], device=device)
    xf = x.float()
    torch.testing.assert_close(compiled(lambda a, x: torch.igammac(a, x), n, xf), torch.igammac(n, xf))
    assert counters["fallbacks"] == 0


def test_refused_cases_run_as_aten(device):
    # float64 (eager's precision), and a half result from an integer operand
    a = torch.tensor([0.5, 2.0], device=device, dtype=torch.float64)
    torch.testing.assert_close(compiled(lambda a, x: torch.igamma(a, x), a, a), torch.igamma(a, a))
    assert counters["fallbacks"] == 1
    n = torch.tensor([1, 2], device=device)
    h = torch.tensor([0.5, 2.0], device=device, dtype=torch.float16)
    if device == "cpu":
        torch.testing.assert_close(compiled(lambda a, x: torch.igammac(a, x), n, h),
                                   torch.igammac(n, h))
    else:  # CUDA eager has no half igammac: the aten op raises as eager does
        for run in (lambda: compiled(lambda a, x: torch.igammac(a, x), n, h),
                    lambda: torch.igammac(n, h)):
            with pytest.raises(NotImplementedError, match="not implemented for 'Half'"):
                run()
    assert counters["fallbacks"] == 2
