"""Lowerings of the gamma family and other special pointwise functions, with their Triton math.

Triton's interpreter has no libdevice, so these are written in plain `tl` ops, in float64 for
float32 (and half) operands, which leaves their own error far below float32's rounding:
`lgamma` by Lanczos' approximation (g = 7, nine terms) with the reflection formula below 1/2;
`digamma` by its recurrence up to 10 and its asymptotic series, reflected below 0;
the Hurwitz zeta (and `polygamma(n >= 2)`, n! times it) by ten terms and Euler-Maclaurin's
tail, below 0 as differences of zetas of positive arguments; `erfinv` and `ndtri` by Acklam's rational approximation of the normal
quantile; `erfcx` from `erfc`'s fit. Where eager's float32 kernel rounds a step that changes its
answer (trigamma's `pi * x`, which makes it finite at the negative integers; erfcx's `x * x`
below 0; zeta's first term) the kernel rounds it too. float64 `pow` has no wider type to be computed in: it
carries `log|a|` and `b log|a|` in two floats each (fma gives a product's rounding error), so
that `exp` of it is within an ulp. Bit-exact ops (`round(decimals)`, `nextafter`, `frexp`,
`angle`) take eager's steps. Anything else (float64 operands of the series, unusual arguments)
is refused, and runs as the aten op.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import numpy as np
import torch
import triton
import triton.language as tl

from . import triton_codegen
from .ir import LoweringError, Pointwise, Value, constant, op, to_dtype
from .lowering import broadcast_loader, compute_dtype, is_tensor, pointwise, register, sym
from .triton_helpers import both, copysign, either, erfc, trunc
from .triton_helpers import pow as helpers_pow

aten = torch.ops.aten

triton_codegen.OPS.update({
    "lgamma": "special.lgamma({0})", "digamma": "special.digamma({0})",
    "trigamma": "special.trigamma({0})",
    "zeta": "special.zeta({0}, {1}, {2})",
    "nextafter": "special.nextafter({0}, {1})", "frexp_mantissa": "special.frexp_mantissa({0})",
    "frexp_exponent": "special.frexp_exponent({0})", "ndtri": "special.ndtri({0})",
    "erfinv": "special.erfinv({0})", "erfcx": "special.erfcx({0})",
    "pow_float64": "special.pow_float64({0}, {1})",
})

PI = 3.141592653589793


@triton.jit
def _lanczos_lgamma(z):
    # lgamma(z) for z >= 1/2: log(sqrt(2 pi) t^(z - 1/2) e^-t A(z)), t = z + 6.5
    a = 0.99999999999980993 + 676.5203681218851 / z
    a += -1259.1392167224028 / (z + 1.0)
    a += 771.32342877765313 / (z + 2.0)
    a += -176.61502916214059 / (z + 3.0)
    a += 12.507343278686905 / (z + 4.0)
    a += -0.13857109526572012 / (z + 5.0)
    a += 9.9843695780195716e-6 / (z + 6.0)
    a += 1.5056327351493116e-7 / (z + 7.0)
    t = z + 6.5
    return 0.91893853320467274 + (z - 0.5) * tl.log(t) - t + tl.log(a)


@triton.jit
def lgamma(x):
    # Below 1/2, lgamma(x) = log(pi / |sin(pi x)|) - lgamma(1 - x), from x's distance to the
    # nearest integer (exact): inf at 0 and the negative integers.
    reflect = x < 0.5
    lg = _lanczos_lgamma(tl.where(reflect, 1.0 - x, x))
    r = x - tl.floor(x + 0.5)
    out = tl.where(reflect, tl.log(3.141592653589793 / tl.abs(tl.sin(3.141592653589793 * r))) - lg,
                   lg)
    return tl.where(tl.abs(x) == float("inf"), float("inf"), out)


@triton.jit
def cot_pi(x):
    # cot(pi x) from x's distance h to the nearest integer (exact, where pi * x would round):
    # cos / sin of pi h for |h| <= 1/4, else tan of pi (1/2 - |h|), each relatively precise
    # (0 at the half-integers, where cos(pi / 2) is not)
    h = x - tl.floor(x + 0.5)
    g = 0.5 - tl.abs(h)
    near = tl.cos(3.141592653589793 * h) / tl.sin(3.141592653589793 * h)
    far = copysign(tl.sin(3.141592653589793 * g) / tl.cos(3.141592653589793 * g), h)
    return tl.where(tl.abs(h) <= 0.25, near, far)


@triton.jit
def digamma(x):
    # Below 0, digamma(x) = digamma(1 - x) - pi cot(pi x); then digamma(z) = digamma(z + 1) -
    # 1 / z up to 10, and the asymptotic series there (its terms to z^-14).
    reflect = x < 0
    z = tl.where(reflect, 1.0 - x, x)
    acc = tl.zeros_like(z)
    for _ in tl.static_range(10):
        small = z < 10.0
        acc -= tl.where(small, 1.0 / z, 0.0)
        z = tl.where(small, z + 1.0, z)
    zz = 1.0 / (z * z)
    series = zz * (1.0 / 12 - zz * (1.0 / 120 - zz * (1.0 / 252 - zz * (
        1.0 / 240 - zz * (1.0 / 132 - zz * (691.0 / 32760 - zz / 12))))))
    out = acc + tl.log(z) - 0.5 / z - series
    out = tl.where(reflect, out - 3.141592653589793 * cot_pi(x), out)
    out = tl.where(x == 0, copysign(float("inf"), x) * -1.0, out)
    return tl.where(both(reflect, x == trunc(x)), float("nan"), out)


@triton.jit
def trigamma(x):
    # Eager's float32 trigamma (x float32, the result float64): below 1/2, the reflection
    # pi^2 / sin(pi x)^2 - trigamma(1 - x) with pi * x and the quotient rounded to float32 as
    # eager rounds them (finite at the negative integers: 3.1415927410125732 is float32's pi,
    # 9.86960506439209 its square in float32); then 6 steps of the recurrence and
    # the asymptotic series.
    reflect = x < 0.5
    s = tl.sin((x * 3.1415927410125732).to(tl.float64)).to(tl.float32)
    pole = (9.869605064392090 / (s * s)).to(tl.float64)
    xd = x.to(tl.float64)
    z = tl.where(reflect, 1.0 - xd, xd)
    acc = tl.where(reflect, pole * -1.0, 0.0)
    for _ in tl.static_range(6):
        acc += 1.0 / (z * z)
        z += 1.0
    zz = 1.0 / (z * z)
    acc += (1.0 + 1.0 / (2.0 * z) + zz * (1.0 / 6 - zz * (1.0 / 30 - zz / 42))) / z
    return tl.where(reflect, acc * -1.0, acc)


@triton.jit
def hurwitz_zeta(s, q):
    # The sum over k >= 0 of (q + k)^-s for q > 0 and s > 1: ten terms, then Euler-Maclaurin's
    # tail from w = q + 10 (Bernoulli numbers over factorials to B14 / 14!: relative error
    # below 1e-9 for s <= 11; for a larger s the ten terms outweigh the tail, whose terms
    # shrink as (q / w)^s)
    acc = tl.zeros_like(q)
    for _ in tl.static_range(10):
        acc += tl.exp(-s * tl.log(q))
        q += 1.0
    w_s = tl.exp(-s * tl.log(q))
    acc += q * w_s / (s - 1.0) + 0.5 * w_s
    term = s * w_s / q  # (s)_(2j-1) w^(-s-2j+1), j = 1
    acc += term / 12.0
    term *= (s + 1.0) * (s + 2.0) / (q * q)
    acc -= term / 720.0
    term *= (s + 3.0) * (s + 4.0) / (q * q)
    acc += term / 30240.0
    term *= (s + 5.0) * (s + 6.0) / (q * q)
    acc -= term / 1209600.0
    term *= (s + 7.0) * (s + 8.0) / (q * q)
    acc += term / 47900160.0
    term *= (s + 9.0) * (s + 10.0) / (q * q)
    acc -= term * (691.0 / 1307674368000.0)
    term *= (s + 11.0) * (s + 12.0) / (q * q)
    acc += term / 74724249600.0
    return acc


@triton.jit
def zeta(x, q, huge):
    # The Hurwitz zeta as eager's (x, q float64 from float32): below 0, for a whole x only,
    # the terms down to q's fractional part f are (-1)^x (zeta(x, f) - zeta(x, 1 - q)), and
    # zeta(x, 1 - f) the rest (the large f^-x and (1 - f)^-x summed first: they cancel exactly
    # at f = 1/2). inf at x = 1 and where q is 0 or a negative integer, NaN for x < 1. From
    # `huge` on, eager's series overflows: 1 at q = 1, inf below, NaN above.
    negative = q < 0
    f = -q - tl.floor(-q)
    z = hurwitz_zeta(x, tl.where(negative, f, q))
    sign = tl.where(both(negative, x - 2.0 * tl.floor(0.5 * x) == 1.0), -1.0, 1.0)
    reflected = (sign * z + hurwitz_zeta(x, 1.0 - f)) - sign * hurwitz_zeta(x, 1.0 - q)
    out = tl.where(negative, reflected, z)
    # eager's first term, q^-x, is float32's pow: its rounding stays in the sum (where terms
    # cancel, as (-1.5)^-11 and 1.5^-11, it was 1.6e-5 of zeta(11, -1.5)); by exp2, exact for
    # a power of 2 (which float32 holds: (-0.5)^-41 cancels 0.5^-41 exactly)
    first = sign * tl.exp2(-x * tl.log2(tl.abs(q)))
    out += tl.where(tl.abs(first) < float("inf"), first.to(tl.float32).to(tl.float64) - first, 0.0)
    out = tl.where(x >= huge, tl.where(q == 1, 1.0, tl.where(q < 1, float("inf"), float("nan"))), out)
    out = tl.where(both(negative, x != tl.floor(x)), float("nan"), out)
    out = tl.where(both(q <= 0, q == tl.floor(q)), float("inf"), out)
    out = tl.where(x < 1, float("nan"), out)
    return tl.where(x == 1, float("inf"), out)


@triton.jit
def nextafter(x, y):
    # The next float after x toward y: one step of x's bits (away from zero where that moves
    # toward y), the smallest subnormal of y's sign from zero, y where equal, NaN from NaN.
    if x.dtype == tl.float64:
        bits = x.to(tl.int64, bitcast=True)
    else:
        bits = x.to(tl.int32, bitcast=True)
    step = tl.where((y > x) == (x > 0), bits + 1, bits - 1)
    out = step.to(x.dtype, bitcast=True)
    tiny = (bits * 0 + 1).to(x.dtype, bitcast=True)
    out = tl.where(x == 0, copysign(tiny, y), out)
    return tl.where(either(x != x, y != y), x + y, tl.where(x == y, y, out))


@triton.jit
def _frexp_parts(x):
    # float32: (the exponent field, the bits) of x, a subnormal scaled by 2^64 first (its
    # exponent then 64 too big)
    sub = both(tl.abs(x) < 1.1754943508222875e-38, x != 0)
    scaled = tl.where(sub, x * 18446744073709551616.0, x)
    bits = scaled.to(tl.int32, bitcast=True)
    exponent = ((bits >> 23) & 0xFF) - tl.where(sub, 64, 0)
    return exponent, bits


@triton.jit
def frexp_mantissa(x):
    # x = m * 2^e with 1/2 <= |m| < 1: x's sign and fraction under the exponent of 1/2;
    # zero, infinities and NaN are their own mantissa
    _, bits = _frexp_parts(x)
    m = ((bits & -2139095041) | 0x3F000000).to(tl.float32, bitcast=True)  # ~0x7F800000
    return tl.where(_frexp_special(x), x, m)


@triton.jit
def frexp_exponent(x):
    exponent, _ = _frexp_parts(x)
    return tl.where(_frexp_special(x), 0, exponent - 126)


@triton.jit
def _frexp_special(x):
    # zero, the infinities and NaN: their own mantissa, exponent 0
    return either(either(x == 0, tl.abs(x) == float("inf")), x != x)


@triton.jit
def _normal_quantile(q, low, high):
    # The x with Phi(x) = p, from q = p - 1/2, low = p and high = 1 - p (each exact):
    # Acklam's rational approximations (relative error below 1.2e-9), centrally in q, in the
    # tails in sqrt(-2 log) of the nearer tail's mass
    r = q * q
    num = ((((-3.969683028665376e+01 * r + 2.209460984245205e+02) * r - 2.759285104469687e+02)
            * r + 1.383577518672690e+02) * r - 3.066479806614716e+01) * r + 2.506628277459239e+00
    den = ((((-5.447609879822406e+01 * r + 1.615858368580409e+02) * r - 1.556989798598866e+02)
            * r + 6.680131188771972e+01) * r - 1.328068155288572e+01) * r + 1.0
    central = q * num / den
    mass = tl.where(low < high, low, high)
    t = tl.sqrt(-2.0 * tl.log(tl.where(mass > 0, mass, 1.0)))
    num = ((((-7.784894002430293e-03 * t - 3.223964580411365e-01) * t - 2.400758277161838e+00)
            * t - 2.549732539343734e+00) * t + 4.374664141464968e+00) * t + 2.938163982698783e+00
    den = (((7.784695709041462e-03 * t + 3.224671290700398e-01) * t + 2.445134137142996e+00)
           * t + 3.754408661907416e+00) * t + 1.0
    tail = tl.where(low < high, num / den, num / den * -1.0)
    out = tl.where(mass < 0.02425, tail, central)
    out = tl.where(low == 0, float("-inf"), tl.where(high == 0, float("inf"), out))
    return tl.where(either(either(low < 0, high < 0), q != q), float("nan"), out)


@triton.jit
def ndtri(p):
    return _normal_quantile(p - 0.5, p, 1.0 - p)


@triton.jit
def erfinv(y):
    # erfinv(y) = ndtri((1 + y) / 2) / sqrt(2), with (1 + y) / 2 - 1/2 = y / 2 exactly
    return _normal_quantile(0.5 * y, 0.5 * (1.0 + y), 0.5 * (1.0 - y)) * 0.7071067811865476


@triton.jit
def erfcx(x):
    # exp(x^2) erfc(x) (x a float32 value): erfc's fit (relative error below 1.2e-7) up to 26, where it underflows,
    # then the asymptotic series; below 0, 2 exp(x^2) - erfcx(-x) with x^2 and its exp
    # rounded to float32, as eager's float32 erfcx rounds them (3e-6 off near -8 otherwise)
    z = tl.abs(x)
    near = tl.exp(z * z) * erfc(z)
    w = 1.0 / (z * z)
    far = 0.5641895835477563 / z * (1.0 - 0.5 * w * (1.0 - 1.5 * w * (1.0 - 2.5 * w)))
    r = tl.where(z < 26.0, near, far)
    x32 = x.to(tl.float32)
    grown = tl.exp((x32 * x32).to(tl.float64)).to(tl.float32).to(tl.float64)
    return tl.where(x < 0, 2.0 * grown - r, r)


@triton.jit
def _two_sum(a, b):
    # a + b rounded, and its rounding error (Knuth): exactly a + b together
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


# log(2) as LN2_HI + LN2_LO (to 2^-85): LN2_HI (0x3FE62E42FEE00000) ends in 21 zero bits, so
# that an exponent times it (|e| <= 1075) is exact
LN2_HI = tl.constexpr(0.6931471803691238)
LN2_LO = tl.constexpr(1.9082149292705877e-10)


@triton.jit
def _log_double_double(x):
    # log(x) for finite x > 0 (float64) as hi + lo, to about 2^-85 relative: x = m 2^e with
    # m in [1/sqrt(2), sqrt(2)), log(m) = 2 atanh(s) for s = (m - 1) / (m + 1), whose leading
    # 2s is kept with its rounding error (from an fma); e log(2) as e times log(2)'s leading 32
    # bits, exact (Cody and Waite), plus e times the rest. (A rounded e * log(2) would not do:
    # a GPU compiler fuses a product into each sum it feeds, so _two_sum would see it unrounded
    # in some steps and rounded in others, and count its rounding error twice.)
    sub = x < 2.2250738585072014e-308
    bits = tl.where(sub, x * 18014398509481984.0, x).to(tl.int64, bitcast=True)  # (2^54)
    e = ((bits >> 52) & 0x7FF) - tl.where(sub, 1077, 1023)
    m = ((bits & 0xFFFFFFFFFFFFF) | 0x3FF0000000000000).to(tl.float64, bitcast=True)
    big = m > 1.4142135623730951
    m = tl.where(big, m * 0.5, m)
    e = tl.where(big, e + 1, e).to(tl.float64)
    f = m - 1.0  # exact
    u_hi, u_lo = _two_sum(2.0, f)
    s_hi = f / u_hi
    s_lo = (tl.fma(-s_hi, u_hi, f) - s_hi * u_lo) / u_hi
    # atanh(s) = s + s^3 / 3 + s^5 (1/5 + ...): s^3 / 3 too in two parts (its rounding was
    # 5 ulps of pow), the rest (under 2e-4 of s) in float64, to s^23 / 23 (z is under 0.03)
    z = s_hi * s_hi
    cube = z * s_hi
    cube_lo = tl.fma(z, s_hi, -cube) + tl.fma(s_hi, s_hi, -z) * s_hi
    third = cube / 3.0
    third_lo = (tl.fma(-third, 3.0, cube) + cube_lo) / 3.0
    rest = cube * z * (1.0 / 5 + z * (1.0 / 7 + z * (1.0 / 9 + z * (1.0 / 11 + z * (1.0 / 13 + z * (
        1.0 / 15 + z * (1.0 / 17 + z * (1.0 / 19 + z * (1.0 / 21 + z / 23)))))))))
    p_hi = e * LN2_HI
    p_lo = e * LN2_LO
    hi, err = _two_sum(p_hi, 2.0 * s_hi)
    hi, err_third = _two_sum(hi, 2.0 * third)
    return _two_sum(hi, err + err_third + p_lo + 2.0 * (s_lo + z * s_lo + third_lo + rest))


@triton.jit
def pow_float64(a, b):
    # exp(b log|a|) with log|a| and its product by b carried in two parts, so that their
    # rounding (hundreds of ulps in exp2(b log2|a|) where b log2|a| is large) is kept; the
    # signs, NaN and the cases of 1 as helpers.pow decides them
    x = tl.abs(a)
    finite = both(x > 0, x < float("inf"))
    hi, lo = _log_double_double(tl.where(finite, x, 1.0))
    hi = tl.where(finite, hi, tl.where(x == 0, float("-inf"), x))  # (NaN stays NaN)
    y_hi = b * hi
    y_lo = tl.where(finite, tl.fma(b, hi, -y_hi) + b * lo, 0.0)
    e = tl.exp(y_hi)
    magnitude = tl.where(either(e == float("inf"), y_lo != y_lo), e, e + e * y_lo)
    rough = helpers_pow(a, b)
    kept = either(either(rough != rough, b == 0), either(a == 1, both(a == -1, tl.abs(b) == float("inf"))))
    return tl.where(kept, rough, copysign(magnitude, rough))


def _unary_float(name: str, out_dtypes: tuple[torch.dtype, ...]) -> Callable:
    """A lowering computing `name` in float64 from the operand as eager reads it (an integer
    one as the float result dtype), for the result dtypes `out_dtypes`."""
    def lowering(lower, node, x):
        if lower.node.meta["val"].dtype not in out_dtypes:
            raise LoweringError(f"{name} of {lower.node.meta['val'].dtype}")
        return pointwise(lower, [x], lambda a: op(name, to_dtype(a, torch.float64)))
    return lowering


HALF_AND_FLOAT = (torch.float32, torch.float16, torch.bfloat16)
register(aten.lgamma)(_unary_float("lgamma", HALF_AND_FLOAT))
register(aten.digamma)(_unary_float("digamma", HALF_AND_FLOAT))
register(aten.erfinv)(_unary_float("erfinv", HALF_AND_FLOAT))
register(aten.special_ndtri)(_unary_float("ndtri", (torch.float32,)))
register(aten.special_erfcx, torch.ops.prims.erfcx)(_unary_float("erfcx", (torch.float32,)))


@register(aten.polygamma.default)
def _polygamma(lower, node, n, x):
    if lower.node.meta["val"].dtype != torch.float32 or not 0 <= n <= 10:
        raise LoweringError(f"polygamma({n}) of {lower.node.meta['val'].dtype}")
    if n == 0:
        return pointwise(lower, [x], lambda a: op("digamma", to_dtype(a, torch.float64)))
    if n == 1:
        return pointwise(lower, [x], lambda a: op("trigamma", a, dtype=torch.float64))
    return pointwise(lower, [x], lambda a: _polygamma_value(n, to_dtype(a, torch.float64)))


def _polygamma_value(n: int, x: Value) -> Value:
    """polygamma(n, x) for n >= 2 as eager's: (-1)^(n+1) n! zeta(n + 1, x), its n! as
    `exp(lgamma(n + 1))` in float32."""
    factorial = float(np.float32(math.exp(np.float32(math.lgamma(n + 1.0)))))
    sign = 1.0 if n % 2 else -1.0
    return op("mul", _zeta_value(constant(n + 1.0, torch.float64), x),
              constant(sign * factorial, torch.float64))


@functools.cache
def _zeta_series_overflow() -> float:
    """The least float32 x for which eager's zeta series (Cephes') overflows: its coefficient
    x (x + 1) ... (x + 22), multiplied up in float64, is inf, and with it every zeta whose
    terms underflowed (NaN, where a smaller x gives 0)."""
    def overflows(bits: int) -> bool:
        x = float(np.uint32(bits).view(np.float32))
        a = 1.0
        for k in range(23):
            a *= x + k
        return a == math.inf
    low, high = int(np.float32(1e12).view(np.uint32)), int(np.float32(1e15).view(np.uint32))
    while high - low > 1:  # overflows(high), not overflows(low)
        mid = (low + high) // 2
        low, high = (low, mid) if overflows(mid) else (mid, high)
    return float(np.uint32(high).view(np.float32))


@register(aten.special_zeta)
def _zeta(lower, node, x, q):
    if lower.node.meta["val"].dtype != torch.float32:
        raise LoweringError(f"zeta of {lower.node.meta['val'].dtype}")
    return pointwise(lower, [x, q], lambda a, b: _zeta_value(to_dtype(a, torch.float64),
                                                             to_dtype(b, torch.float64)))


def _zeta_value(x: Value, q: Value) -> Value:
    return op("zeta", x, q, constant(_zeta_series_overflow(), torch.float64))


@register(aten.round.decimals)
def _round_decimals(lower, node, x, *, decimals=0):
    # As eager: x * 10^d rounded half to even, over 10^d (d < 0: x / 10^-d, times it), with
    # 10^|d| rounded to the compute dtype
    dtype = lower.node.meta["val"].dtype
    if not dtype.is_floating_point:
        raise LoweringError("round(decimals) of integers (eager refuses them)")
    if abs(decimals) > 22:  # past float64's exact powers of 10 (10.0 ** 309 raises)
        raise LoweringError(f"round to {decimals} decimals")
    scale = constant(10.0 ** abs(decimals), compute_dtype(dtype))
    if decimals >= 0:
        return pointwise(lower, [x], lambda a: op("truediv", op("round", op("mul", a, scale)), scale))
    return pointwise(lower, [x], lambda a: op("mul", op("round", op("truediv", a, scale)), scale))


@register(aten.nextafter.default)
def _nextafter(lower, node, x, y):
    if not (is_tensor(x) and is_tensor(y)) or \
            lower.node.meta["val"].dtype not in (torch.float32, torch.float64):
        raise LoweringError("nextafter of other than float32 or float64 tensors")
    return pointwise(lower, [x, y], lambda a, b: op("nextafter", a, b))


@register(aten.frexp.Tensor)
def _frexp(lower, node, x):
    if x.dtype != torch.float32:
        raise LoweringError(f"frexp of {x.dtype}")
    val = lower.node.meta["val"][0]
    size = tuple(sym(s) for s in val.shape)
    load = broadcast_loader(x, size, torch.float32)
    return [Pointwise(size, torch.float32, val.device, lambda idx: op("frexp_mantissa", load(idx))),
            Pointwise(size, torch.int32, val.device,
                      lambda idx: op("frexp_exponent", load(idx), dtype=torch.int32))]


@register(aten.angle.default)
def _angle(lower, node, x):
    # pi for negative reals (-inf too), 0 otherwise (-0.0 too), NaN kept
    dtype = compute_dtype(lower.node.meta["val"].dtype)
    if x.dtype.is_complex or not dtype.is_floating_point:
        raise LoweringError(f"angle of {x.dtype}")

    def angle(a: Value) -> Value:
        value = op("where", op("lt", a, constant(0, a.dtype), dtype=torch.bool),
                   constant(PI, dtype), constant(0.0, dtype))
        value = op("where", op("isnan", a, dtype=torch.bool), to_dtype(a, dtype), value)
        return value
    return pointwise(lower, [x], angle, in_dtype=compute_dtype(x.dtype))
