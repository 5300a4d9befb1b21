"""The gamma family and other special pointwise functions (special_functions.py) against eager,
generated with no fallback, edges included (0, -0.0, poles, infinities, NaN, large values)."""

import decimal
import math
from fractions import Fraction

import pytest
import torch

import inductor_lite
from fxtrace import make_fx
from inductor_lite import compile_fx, counters, special_functions

INF, NAN = math.inf, math.nan
EDGES = [INF, -INF, NAN, 0.0, -0.0, -1.0, -2.0, 1e-40, 1e-7, -1e-7, 0.5, -0.5, 1.0, 2.0,
         1.4616321, 0.9999999, 1.0000001, -0.9999999, -1.0000001, -3.5, -3.25, -2.75, 10.0,
         9.999999, 1e17, 1e30, -1e30, 3e38, -3e38, -999999.5, -999999.75]


def values(device, dtype=torch.float32):
    """The edges, then normal, wide positive and negative values: (4, 39), transposed."""
    torch.manual_seed(0)
    x = torch.cat([torch.tensor(EDGES), torch.randn(50) * 10, torch.rand(40) * 1e4,
                   -torch.rand(35) * 30])
    return x.reshape(39, 4).t().to(device=device, dtype=dtype)


def check(fn, *inputs, fallbacks=0, reference=None, **tolerances):
    """`fn` compiled against eager on the inputs' device, or on the device `reference`."""
    inductor_lite.metrics.reset()
    gm = make_fx(fn, "real")(*inputs)
    compiled = compile_fx(gm, list(inputs))
    got = compiled(*inputs)
    want = fn(*(t if reference is None else t.to(reference) for t in inputs))
    for g, w in zip(*(v if isinstance(v, tuple) else (v,) for v in (got, want))):
        assert g.shape == w.shape and g.dtype == w.dtype
        torch.testing.assert_close(g.to(w.device), w, equal_nan=True, **tolerances)
    assert counters["fallbacks"] == fallbacks
    return compiled


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_lgamma_and_digamma(device, dtype):
    x = values(device, dtype)
    check(lambda x: (torch.lgamma(x), torch.digamma(x)), x)


def test_lgamma_of_integers_and_mvlgamma(device):
    check(torch.lgamma, torch.arange(-5, 30, device=device))
    check(lambda x: torch.mvlgamma(x, 3), values(device).abs() + 1.5)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 4, 10])
def test_polygamma(device, n):
    # CUDA eager sums in float32 and is far off at negative x (polygamma(4, -3.5) 2e-3 relative,
    # polygamma(10, -3.5) 100 %); ours is CPU eager's sum in float64, within 1e-7 of the exact
    # value there: CPU eager is the reference on every device
    check(lambda x: torch.polygamma(n, x), values(device), reference="cpu")


def test_polygamma_refuses_what_it_does_not_match(device):
    check(lambda x: torch.polygamma(2, x), values(device, torch.float64), fallbacks=1)
    check(lambda x: torch.polygamma(11, x), torch.rand(5, device=device) + 1, fallbacks=1)


@pytest.mark.parametrize("decimals", [0, 3, -3])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_round_decimals(device, decimals, dtype):
    x = torch.cat([torch.tensor([INF, -INF, NAN, 0.0, -0.0, 0.0025, 2.5e-3, 1500.0, -2500.0,
                                 1234.5]), torch.randn(21) * 3000]).to(device=device, dtype=dtype)
    check(lambda x: torch.round(x[::2], decimals=decimals), x)


def test_round_to_more_decimals_than_float64_holds_runs_as_aten(device):
    x = torch.randn(7, device=device)
    check(lambda x: (torch.round(x, decimals=400), torch.round(x, decimals=-400)), x,
          fallbacks=2)


def test_float64_pow_is_generated_to_an_ulp(device):
    """float64 `pow` (`float_power`, logspace's decomposition) keeps `log|a|` and its product
    by the exponent in two parts: within 2 ulps of eager over the whole range, where
    `exp2(b * log2|a|)` was hundreds off; signs, zeros, infinities and NaN as eager's."""
    torch.manual_seed(0)
    f64 = torch.float64
    a = torch.cat([torch.exp(torch.randn(300, dtype=f64) * 100), torch.rand(100, dtype=f64) * 2,
                   1 + torch.randn(100, dtype=f64) * 1e-9, -torch.rand(100, dtype=f64) * 10,
                   torch.tensor([1e-310, 1.7976931348623157e308, 1e200, 0.0, -0.0, INF, -INF,
                                 NAN, 1.0, -1.0, -0.0, -INF, 0.5, 2.0], dtype=f64)]).to(device)
    b = torch.cat([torch.randn(300, dtype=f64) * 300, torch.randn(100, dtype=f64) * 3,
                   torch.randn(100, dtype=f64) * 1e8, torch.randint(-20, 20, (100,)).to(f64),
                   torch.tensor([0.5, 0.5, 1.5, 2.5, -3.0, 0.5, 3.0, 2.0, INF, -INF, -3.0, -3.0,
                                 INF, -1075.0], dtype=f64)]).to(device)
    # On CUDA eager's pow is libdevice's (within 2 ulps, by CUDA's programming guide) and the
    # kernel's exp too (within 1): the two may differ by 3.5 ulps, 7.8e-16
    check(torch.float_power, a, b, rtol=4.5e-16 if device == "cpu" else 8e-16, atol=0)
    check(lambda x: torch.float_power(x, 2.5), torch.rand(5, device=device))
    check(lambda: torch.logspace(-10, 30, 37, base=3.0, device=device))


def test_float64_pows_exponent_times_log2_is_exact():
    """float64 `pow` adds `e log(2)` (e the exponent of |a|) to log|a|'s other part by a
    two-sum, which holds only for exact operands: Triton's GPU compiler fuses a product into
    each sum it feeds, so a rounded `e * log(2)` was rounded in some of the two-sum's steps and
    exact in others (`3.7e150 ** -1.3` 333 ulps off, emulating its sm_90 code). Every exponent times LN2_HI
    is exact, and LN2_HI + LN2_LO is log(2)."""
    hi, lo = special_functions.LN2_HI.value, special_functions.LN2_LO.value
    for e in range(-1077, 1025):
        assert Fraction(e) * Fraction(hi) == Fraction(e * hi), e
    ln2 = Fraction(decimal.Context(prec=40).ln(decimal.Decimal(2)))
    assert abs(Fraction(hi) + Fraction(lo) - ln2) < Fraction(1, 2**84)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_nextafter(device, dtype):
    x = values(device, dtype)
    check(torch.nextafter, x, x.flip(0))
    check(torch.nextafter, x, x)
    big = torch.finfo(dtype).max
    check(torch.nextafter, torch.tensor([0.0, -0.0, big, -big, 1.0], device=device, dtype=dtype),
          torch.tensor([[-1.0], [INF]], device=device, dtype=dtype))


def test_frexp(device):
    x = torch.cat([values(device).flatten(), torch.tensor([1e-45, -3e-39, 0.75, -5.5],
                                                          device=device)])
    check(torch.frexp, x[::3])


def test_angle(device):
    check(torch.angle, values(device))
    check(torch.angle, torch.arange(-3, 3, device=device))


def probabilities(device):
    """Edges of [-1, 1] and [0, 1] (and past them), uniform, and masses deep in the tails."""
    torch.manual_seed(0)
    edges = torch.tensor([INF, -INF, NAN, 0.0, -0.0, 1.0, -1.0, 1.0000001, 2.0, -2.0, 0.5,
                          0.4999999, 0.5000001, 1e-45, 1e-30, -1e-30, 1e-7, 0.02425, 0.97575,
                          0.9999999, 1 - 2**-24, 2**-24 - 1, 0.999, -0.999])
    return torch.cat([edges, torch.rand(40), torch.rand(20) ** 8, 1 - torch.rand(20) ** 4,
                      torch.rand(30) * 2 - 1]).reshape(-1, 2).t().to(device)


def test_erfinv_and_ndtri(device):
    p = probabilities(device)
    check(lambda p: (torch.erfinv(p), torch.special.ndtri(p)), p)
    check(torch.erfinv, p.half())


def test_erfcx_and_log_ndtr(device):
    torch.manual_seed(0)
    x = torch.cat([torch.tensor([INF, -INF, NAN, 0.0, -0.0, 1e-30, 25.9, 26.0, 26.1, 30.0, 51.0,
                                 6e7, -6.1, -6.09, -9.3, -9.4, -26.8, -50.0]),
                   torch.randn(40) * 5, torch.rand(10) * 1e6, -torch.rand(40) * 10]).to(device)
    check(lambda x: (torch.special.erfcx(x), torch.special.log_ndtr(x)), x.reshape(-1, 2).t())


def test_zeta(device):
    """The Hurwitz zeta as eager's: negative q (whole x) included, where terms cancel
    ((-0.5)^-41 and 0.5^-41), and eager's NaN where its series overflows (x from about
    2.5e13 on, q > 1)."""
    from inductor_lite.special_functions import _zeta_series_overflow

    huge = _zeta_series_overflow()
    below = float(torch.tensor(huge).nextafter(torch.tensor(0.0)))
    q = torch.tensor([INF, -INF, NAN, 0.0, -0.0, 1.0, 0.5, 2.0, -0.5, -1.5, 1e30, -2.25, 10.0,
                      1e-30, -999999.5, -3.75, 0.001, -0.1, 0.9999999, 1.0000001, -0.50000006])
    x = torch.tensor([INF, 1.0, 0.5, 2.0, 3.0, 2.5, 200.0, NAN, 1.0000001, 11.0, 40.0, 41.0,
                      1e30, huge, below, 1025.0, 129.0])
    torch.manual_seed(0)
    x = torch.cat([x.repeat_interleave(len(q)), torch.rand(60) * 30 + 1,
                   torch.randint(2, 60, (60,)).float()]).to(device)
    q = torch.cat([q.repeat(17), torch.randn(60) * 20, torch.randn(60) * 20]).to(device)
    check(torch.special.zeta, x, q)
    check(lambda q: torch.special.zeta(3.0, q), q[::5])
