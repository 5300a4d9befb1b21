"""Orthogonal polynomials of a degree each element gives: `torch.special.*_polynomial_*(x, n)`.

Eager (ATen's Math.h) evaluates these as its C++ does: the degree `n` is cast to an integer
(truncated; below zero the value is 0), a few points get exact answers (|x| = 1 for Chebyshev
and Legendre, x = 0 for Laguerre), Chebyshev polynomials of a high enough degree inside (-1, 1)
take their trigonometric closed form (`cos(n * acos(x))`), and every other element runs the
three-term recurrence up to its own degree, stopping early where the value has become NaN.
The kernels here do the same arithmetic in the same order, one block at a time (each step's
`a * b - c` one fused multiply-add, as eager's vectorized CPU build and Triton's GPU compiler
both make it: rounding the product apart drifts by 1e-5 over 30 steps near x = 1); the recurrence
loops until no lane of the block still has a step to take (its degree not reached, its value not
NaN), lanes that are done keeping their value. A NaN or infinite degree is eager's (x86) cast of
it: the smallest integer, a negative degree, so 0. The shifted Chebyshev polynomials are the
plain ones of `2x - 1`, with their own exact points and closed-form thresholds.

Only float32 and float64 results (eager's CPU kernels take no other); the Chebyshev families'
`acos` (float64 math from `triton_helpers.atan`, rounded) is precise to float32 only: in float64
they run as aten calls.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import triton
import triton.language as tl

from inductor_lite import triton_helpers as helpers

from .ir import LoweringError, op
from .lowering import pointwise, register
from .triton_codegen import OPS

aten = torch.ops.aten


@triton.jit
def _degree(n):
    # C's truncating cast to int64, which x86 makes the smallest int64 for NaN, infinities and
    # values past its range (a negative degree: the value is 0)
    ok = tl.abs(n) < 9.2e18
    return tl.where(ok, n, -1.0).to(tl.int64)


@triton.jit
def _acos(x):
    # acos(|x|) = 2 atan(sqrt((1 - |x|) / (1 + |x|))), in float64 and then rounded: eager's
    # acos is correctly rounded, and the closed forms multiply its error by the degree. (Not
    # helpers.atan2: its pi is a float32 constant. Here pi is two float32s, summed in float64.)
    a = tl.abs(x).to(tl.float64)
    r = 2.0 * helpers.atan(tl.sqrt((1.0 - a) / (1.0 + a)))
    r = tl.where(x < 0, (3.1415927410125732 - r) + -8.742278000372475e-08, r)
    return r.to(x.dtype)


@triton.jit
def _chebyshev_recurrence(y, n, q):
    # p[k] = 2y p[k-1] - p[k-2] from p[0] = 1 and p[1] = q, up to p[n] (n >= 1 lanes): each
    # lane stops at its degree or where its value is NaN
    p = tl.zeros_like(q) + 1.0
    k = tl.zeros_like(n) + 2
    y2 = y + y
    while helpers.any_lane(helpers.both(k <= n, q == q)):
        r = tl.fma(y2, q, -p)
        step = k <= n
        p = tl.where(step, q, p)
        q = tl.where(step, r, q)
        k += 1
    return q


@triton.jit
def _chebyshev(x, n_float, kind: tl.constexpr, shifted: tl.constexpr):
    # kind 0, 1, 2, 3: T, U, V, W
    x, n_float = tl.broadcast(x, n_float)
    n = _degree(n_float)
    if shifted:
        y = x + x - 1.0
        high = x == 1.0  # (exact points tested on x, as eager does)
        low = x == 0.0
        closed_after: tl.constexpr = 4 if kind == 3 else 6
    else:
        y = x
        high = tl.abs(x) == 1.0
        low = helpers.both(high, x < 0)
        high = helpers.both(high, x > 0)
        closed_after: tl.constexpr = 6 if kind == 0 else 8
    even = n % 2 == 0
    one = tl.zeros_like(y) + 1.0
    nf = n.to(y.dtype)
    odd_sign = tl.where(even, 1.0, -1.0)
    theta = _acos(y)
    if kind == 0:
        first = y
        at_high = one
        at_low = odd_sign
        closed = tl.cos(nf * theta)
    elif kind == 1:
        first = y + y
        at_high = (n + 1).to(y.dtype)
        at_low = at_high * odd_sign
        s = tl.sin(theta)
        closed = tl.where(s != 0.0, tl.sin((n + 1).to(y.dtype) * theta) / s,
                          (n + 1).to(y.dtype) * tl.cos((n + 1).to(y.dtype) * theta) / y)
    elif kind == 2:
        first = y + y - 1.0
        at_high = one
        at_low = (n + n + 1).to(y.dtype) * odd_sign
        closed = tl.where(tl.sin(theta / 2.0) != 1.0,
                          tl.cos((nf + 0.5) * theta) / tl.cos(theta / 2.0), at_low)
    else:
        first = y + y + 1.0
        at_high = (n + n + 1).to(y.dtype)
        at_low = odd_sign
        if shifted:
            otherwise = odd_sign
        else:
            otherwise = tl.where(y > 0.0, at_high, odd_sign)
        closed = tl.where(tl.cos(theta / 2.0) != 1.0,
                          tl.sin((nf + 0.5) * theta) / tl.sin(theta / 2.0), otherwise)
    use_closed = helpers.both(n > closed_after, tl.abs(y) < 1.0)
    exact = helpers.either(high, low)
    looped = tl.where(helpers.either(exact, use_closed), 0, n)
    out = _chebyshev_recurrence(y, looped, first)
    out = tl.where(looped == 0, 1.0, out)
    out = tl.where(use_closed, closed, out)
    out = tl.where(low, at_low, out)
    out = tl.where(high, at_high, out)
    return tl.where(n < 0, 0.0, out)


@triton.jit
def chebyshev_polynomial_t(x, n):
    return _chebyshev(x, n, 0, False)


@triton.jit
def chebyshev_polynomial_u(x, n):
    return _chebyshev(x, n, 1, False)


@triton.jit
def chebyshev_polynomial_v(x, n):
    return _chebyshev(x, n, 2, False)


@triton.jit
def chebyshev_polynomial_w(x, n):
    return _chebyshev(x, n, 3, False)


@triton.jit
def shifted_chebyshev_polynomial_t(x, n):
    return _chebyshev(x, n, 0, True)


@triton.jit
def shifted_chebyshev_polynomial_u(x, n):
    return _chebyshev(x, n, 1, True)


@triton.jit
def shifted_chebyshev_polynomial_v(x, n):
    return _chebyshev(x, n, 2, True)


@triton.jit
def shifted_chebyshev_polynomial_w(x, n):
    return _chebyshev(x, n, 3, True)


@triton.jit
def _hermite(x, n_float, physicists: tl.constexpr):
    # H: p[k] = 2x p[k-1] - 2(k-1) p[k-2] from 1, 2x; He: p[k] = x p[k-1] - (k-1) p[k-2] from
    # 1, x. Eager gives NaN past degree 128 (float32) or 512 (float64), without a loop.
    x, n_float = tl.broadcast(x, n_float)
    n = _degree(n_float)
    if physicists:
        step: tl.constexpr = 2  # eager's counter runs over the even numbers (k p: 2(k-1) p)
        x1 = x + x
    else:
        step: tl.constexpr = 1
        x1 = x
    if x.dtype == tl.float32:
        limit: tl.constexpr = 128
    else:
        limit: tl.constexpr = 512
    end = tl.where(n > limit, 0, n) * step
    p = tl.zeros_like(x) + 1.0
    q = x1
    k = tl.zeros_like(n) + step
    while helpers.any_lane(k < end):
        r = tl.fma(x1, q, -(k.to(x.dtype) * p))
        active = k < end
        p = tl.where(active, q, p)
        q = tl.where(active, r, q)
        k += step
    out = tl.where(n > limit, float("nan"), q)
    out = tl.where(n == 0, 1.0, out)
    return tl.where(n < 0, 0.0, out)


@triton.jit
def hermite_polynomial_h(x, n):
    return _hermite(x, n, True)


@triton.jit
def hermite_polynomial_he(x, n):
    return _hermite(x, n, False)


@triton.jit
def _ratio_recurrence(x, n_float, laguerre: tl.constexpr):
    # Laguerre: p[k+1] = ((2k + 1 - x) p[k] - k p[k-1]) / (k + 1) from 1, 1 - x;
    # Legendre: p[k+1] = ((2k + 1) x p[k] - k p[k-1]) / (k + 1) from 1, x. Each lane stops at
    # its degree or where its value is NaN.
    x, n_float = tl.broadcast(x, n_float)
    n = _degree(n_float)
    if laguerre:
        q = 1.0 - x
        exact = x == 0.0
        at_exact = tl.zeros_like(x) + 1.0
    else:
        q = x
        exact = tl.abs(x) == 1.0
        at_exact = tl.where(helpers.either(x > 0.0, n % 2 == 0), 1.0, -1.0)
    looped = tl.where(exact, 0, n)
    p = tl.zeros_like(x) + 1.0
    k = tl.zeros_like(n) + 1
    while helpers.any_lane(helpers.both(k < looped, q == q)):
        kf = k.to(x.dtype)
        if laguerre:
            r = tl.fma((k + k).to(x.dtype) + (1.0 - x), q, -(kf * p)) / (k + 1).to(x.dtype)
        else:
            r = tl.fma((k + k + 1).to(x.dtype) * x, q, -(kf * p)) / (k + 1).to(x.dtype)
        active = k < looped
        p = tl.where(active, q, p)
        q = tl.where(active, r, q)
        k += 1
    out = tl.where(looped == 0, 1.0, q)
    out = tl.where(exact, at_exact, out)
    return tl.where(n < 0, 0.0, out)


@triton.jit
def laguerre_polynomial_l(x, n):
    return _ratio_recurrence(x, n, True)


@triton.jit
def legendre_polynomial_p(x, n):
    return _ratio_recurrence(x, n, False)


CHEBYSHEV = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
             "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
             "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
             "shifted_chebyshev_polynomial_w"]
RECURRENCES = ["hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l",
               "legendre_polynomial_p"]


def _polynomial(name: str) -> Callable:
    dtypes = (torch.float32,) if name in CHEBYSHEV else (torch.float32, torch.float64)

    def lowering(lower, node, x, n):
        dtype = node.meta["val"].dtype
        if dtype not in dtypes:
            raise LoweringError(f"{name} in {dtype}")
        return pointwise(lower, [x, n], lambda a, b: op(name, a, b))
    return lowering


for _name in CHEBYSHEV + RECURRENCES:
    OPS[_name] = f"orthogonal_polynomials.{_name}({{0}}, {{1}})"
    _packet = getattr(aten, f"special_{_name}")
    register(_packet.default, _packet.x_scalar, _packet.n_scalar)(_polynomial(_name))
