"""Triton functions the generated kernels call: Python's integer division and modulo, NaN-aware
max/min, and math that `triton.language` lacks (or lacks in its CPU interpreter).

Conditions combine with `both`/`either` rather than `&`/`|`: Triton's interpreter (3.9) fails on
`&` of a block of booleans and a scalar one (a value loaded once for every lane)."""

import triton
import triton.language as tl
from triton.language.extra import libdevice

# Whether triton was imported in interpreter mode (its own functions are then interpreted too).
INTERPRETED = type(tl.sum).__name__ == "InterpretedFunction"


@triton.jit
def both(p, q):
    return tl.where(p, q, p)


@triton.jit
def either(p, q):
    return tl.where(p, p, q)


@triton.jit
def any_lane(c):
    # Whether `c` holds in some lane: of a block, or of a scalar (a 0-d value: its operands
    # each loaded once) as a block of one, since Triton reduces no scalar. A loop's condition.
    return tl.max(c.to(tl.int32) + tl.zeros([1], tl.int32)) > 0


@triton.jit
def floordiv(a, b):
    q = a // b
    return tl.where(both(a % b != 0, (a < 0) != (b < 0)), q - 1, q)


@triton.jit
def floordiv_float(a, b):
    # As PyTorch computes it: from the exact remainder, not by flooring a rounded quotient.
    mod = a % b
    div = (a - mod) / b
    div = tl.where(both(mod != 0, (b < 0) != (mod < 0)), div - 1.0, div)
    floored = tl.floor(div)
    floored = tl.where(div - floored > 0.5, floored + 1.0, floored)
    out = tl.where(div == 0, 0.0 * (a / b), floored)
    return tl.where(b == 0, a / b, out)


@triton.jit
def truncdiv(a, b):
    return a // b


@triton.jit
def remainder(a, b):
    r = a % b
    return tl.where(both(r != 0, (r < 0) != (b < 0)), r + b, r)


@triton.jit
def trunc(x):
    return tl.where(x < 0, tl.ceil(x), tl.floor(x))


@triton.jit
def to_bfloat16(x):
    # Round the float32 bits to nearest even at bit 16, then keep the top half (exactly).
    # (from float32 only: the interpreter turns float64 into bfloat16 as 0)
    x32 = x.to(tl.float32)
    bits = x32.to(tl.uint32, bitcast=True)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    rounded = bits.to(tl.float32, bitcast=True)
    return tl.where(x32 != x32, x32, rounded).to(tl.bfloat16)


@triton.jit
def log1p(x):
    # log(u) * x / (u - 1) with u = 1 + x cancels u's rounding error (Goldberg).
    u = 1.0 + x
    d = u - 1.0
    out = tl.where(d == float("inf"), d, tl.log(u) * (x / tl.where(d == 0, 1.0, d)))
    return tl.where(d == 0, x, out)


@triton.jit
def expm1(x):
    if x.dtype == tl.float64:
        # (u - 1) * x / log(u) with u = exp(x) cancels u's rounding error (Kahan)
        u = tl.exp(x)
        d = u - 1.0
        lu = tl.log(u)
        out = tl.where(d == -1.0, -1.0, d * (x / tl.where(lu == 0, 1.0, lu)))
        out = tl.where(either(d == 0, tl.abs(x) > 50.0), tl.where(d == 0, x, d), out)
    else:
        # Near zero, where exp(x) - 1 cancels, its Taylor series to x**8 / 8! (relative error
        # under 1e-8 for |x| < 0.5, below float32's precision); elsewhere exp(x) - 1 loses
        # under a bit.
        p = 1.0 + x * 0.125
        p = 1.0 + (x * (1.0 / 7.0)) * p
        p = 1.0 + (x * (1.0 / 6.0)) * p
        p = 1.0 + (x * 0.2) * p
        p = 1.0 + (x * 0.25) * p
        p = 1.0 + (x * (1.0 / 3.0)) * p
        p = 1.0 + (x * 0.5) * p
        out = tl.where(tl.abs(x) < 0.5, x * p, tl.exp(x) - 1.0)
    return out


@triton.jit
def shift_left(a, s):
    # As torch shifts: a shift by a negative amount or by the width or more gives 0 (in
    # Triton, as in C, such a shift is undefined)
    zero = a * 0 + s * 0  # (of the promoted type)
    bad = either(s < 0, s >= zero.dtype.primitive_bitwidth)
    return tl.where(bad, zero, (a + zero) << tl.where(bad, 0, s))


@triton.jit
def shift_right(a, s):
    # Arithmetic; a shift by a negative amount or by the width or more gives the sign: 0 or -1
    zero = a * 0 + s * 0
    bad = either(s < 0, s >= zero.dtype.primitive_bitwidth)
    sign = tl.where(a < 0, zero - 1, zero)
    return tl.where(bad, sign, (a + zero) >> tl.where(bad, 0, s))


@triton.jit
def round_half_even(x):
    # From the exact fractional part: x + 0.5 rounds (and loses the sign of a negative zero).
    r = tl.floor(x)
    d = x - r
    up = either(d > 0.5, both(d == 0.5, r - 2.0 * tl.floor(r * 0.5) != 0))
    return copysign(tl.where(up, r + 1.0, r), x)


@triton.jit
def sign(x):
    return (x > 0).to(x.dtype) - (x < 0).to(x.dtype)


if INTERPRETED:  # on CPU tensors, where eager's relu keeps -0.0
    @triton.jit
    def relu(x):
        return tl.where(x < 0, 0, x)
else:
    @triton.jit
    def relu(x):  # CUDA's eager relu makes -0.0 into 0.0 (and keeps NaN)
        return tl.where(x <= 0, 0, x)


if INTERPRETED:  # which has no libdevice
    @triton.jit
    def tanh(x):
        # From expm1, exact near zero where (1 - e) / (1 + e) cancels; in float64, rounded once
        # (in float32 about half the results were an ulp off, and tanh(9) 1.0, not 0.99999994)
        m = expm1(-2.0 * tl.abs(x.to(tl.float64)))
        return copysign(-m / (2.0 + m), x).to(x.dtype)
else:
    @triton.jit
    def tanh(x):
        return libdevice.tanh(x)  # as precise as the form above, and cheaper


@triton.jit
def pow(a, b):
    # In float64 for float32 operands: exp2's relative error grows with b * log2|a| (about 40
    # ulps near 1e38 in float32), which double precision leaves below float32's rounding.
    if a.dtype == tl.float32:
        magnitude = tl.exp2(b.to(tl.float64) * tl.log2(tl.abs(a).to(tl.float64))).to(tl.float32)
    else:
        magnitude = tl.exp2(b * tl.log2(tl.abs(a)))
    odd = (b - 2.0 * tl.floor(b * 0.5)) == 1.0
    out = tl.where(both(signbit(a), odd), magnitude * -1.0, magnitude)
    # A negative base to a fractional power is NaN, but -inf's is inf or 0 (IEEE)
    out = tl.where(both(both(a < 0, a != float("-inf")), tl.floor(b) != b), float("nan"), out)
    # 1 to any power, and -1 to an infinite one, is 1 (0 * inf above is NaN).
    one = either(a == 1, both(a == -1, tl.abs(b) == float("inf")))
    return tl.where(either(b == 0, one), 1.0, out)


@triton.jit
def _atan01(t):
    # atan of t in [0, 1] via the identity atan(t) = 2 atan(t / (1 + sqrt(1 + t^2))) three
    # times (|s| below tan(pi / 16)), then a series.
    s = t / (1.0 + tl.sqrt(1.0 + t * t))
    s = s / (1.0 + tl.sqrt(1.0 + s * s))
    s = s / (1.0 + tl.sqrt(1.0 + s * s))
    s2 = s * s
    return 8.0 * s * (1.0 - s2 / 3.0 + s2 * s2 / 5.0 - s2 * s2 * s2 / 7.0 + s2 * s2 * s2 * s2 / 9.0)


@triton.jit
def atan2(y, x):
    # The angle of (|x|, |y|) from the smaller ratio (both infinite: 45 degrees), then mirrored
    # by the signs of x and y (of zeros too).
    ay = tl.abs(y)
    ax = tl.abs(x)
    both_inf = both(ay == float("inf"), ax == float("inf"))
    ay = tl.where(both_inf, 1.0, ay)
    ax = tl.where(both_inf, 1.0, ax)
    big = tl.where(ay > ax, ay, ax)
    small = tl.where(ay > ax, ax, ay)
    a = _atan01(small / tl.where(big == 0, 1.0, big))
    pi = 3.141592653589793
    a = tl.where(ay > ax, pi / 2 - a, a)
    a = tl.where(signbit(x), pi - a, a)
    a = copysign(a, y)
    return tl.where(either(x != x, y != y), x + y, a)


@triton.jit
def atan(x):
    ax = tl.abs(x)
    a = _atan01(tl.where(ax > 1.0, 1.0 / ax, ax))
    a = tl.where(ax > 1.0, 1.5707963267948966 - a, a)
    return tl.where(x != x, x, copysign(a, x))


@triton.jit
def _half_exp(a):
    # exp(a) / 2 past where exp(a) overflows, as (exp(a / 2) / 2) * exp(a / 2): a / 2 is
    # exact, where a - log(2) rounded (by up to 4e-6 near 88 in float32) and exp turned that
    # into a relative error of 1.6e-6 (cosh of float64 was 5e-14 off near 700)
    h = tl.exp(0.5 * a)
    return (0.5 * h) * h


@triton.jit
def cosh(x):
    a = tl.abs(x)
    e = tl.exp(a)
    big = _half_exp(a)
    return tl.where(a < 88.0, 0.5 * (e + 1.0 / e), big + 0.25 / big)


@triton.jit
def asinh(x):
    # log1p(a + a^2 / (1 + sqrt(1 + a^2))) is exact near zero; past 2^30, a^2 + 1 is a^2 and
    # (overflowing later) the answer is log(2a)
    a = tl.abs(x)
    near = log1p(a + a * a / (1.0 + tl.sqrt(1.0 + a * a)))
    r = tl.where(a < 1073741824.0, near, tl.log(a) + 0.6931471805599453)
    return copysign(r, x)


@triton.jit
def atanh(x):
    # 0.5 * log1p(2a / (1 - a)) of a = |x|: exact near zero, where log((1 + x) / (1 - x))
    # is 0 (atanh(1e-8) was 0); 1 - a is exact near 1
    a = tl.abs(x)
    return copysign(0.5 * log1p((2.0 * a) / (1.0 - a)), x)


@triton.jit
def acosh(x):
    # log1p(t + sqrt(2t + t^2)) of t = x - 1 (exact near 1, where x^2 - 1 cancels); past
    # 2^28, where x^2 overflows later, log(2x)
    t = x - 1.0
    near = log1p(t + tl.sqrt(2.0 * t + t * t))
    return tl.where(x > 268435456.0, tl.log(x) + 0.6931471805599453, near)


@triton.jit
def erfc(x):
    # exp(-x^2) times a Chebyshev fit (Numerical Recipes' erfcc: relative error below 1.2e-7),
    # where 1 - erf(x) would lose every digit for large x
    # (in float64 for float32: exp(-z^2)'s relative error is that of z^2 rounded, times z^2
    # (1e-5 near z = 9 in float32); the fit's own error is below float32's)
    if x.dtype == tl.float32:
        z = tl.abs(x).to(tl.float64)
    else:
        z = tl.abs(x)
    t = 1.0 / (1.0 + 0.5 * z)
    p = -0.82215223 + t * 0.17087277
    p = 1.48851587 + t * p
    p = -1.13520398 + t * p
    p = 0.27886807 + t * p
    p = -0.18628806 + t * p
    p = 0.09678418 + t * p
    p = 0.37409196 + t * p
    p = 1.00002368 + t * p
    r = t * tl.exp(-z * z - 1.26551223 + t * p)
    return tl.where(x >= 0, r, 2.0 - r).to(x.dtype)


@triton.jit
def sinh(x):
    e = tl.exp(x)
    # A few terms of the series near zero, where e - 1/e cancels.
    x2 = x * x
    series = x * (1.0 + x2 / 6.0 * (1.0 + x2 / 20.0 * (1.0 + x2 / 42.0)))
    big = _half_exp(tl.abs(x))
    out = tl.where(tl.abs(x) < 88.0, 0.5 * (e - 1.0 / e), copysign(big - 0.25 / big, x))
    return tl.where(tl.abs(x) < 0.5, series, out)


@triton.jit
def hypot(a, b):
    x = tl.abs(a)
    y = tl.abs(b)
    big = tl.where(x > y, x, y)
    small = tl.where(x > y, y, x)
    r = small / tl.where(big == 0, 1.0, big)
    out = big * tl.sqrt(1.0 + r * r)
    return tl.where(either(x == float("inf"), y == float("inf")), float("inf"), out)


@triton.jit
def fmax(a, b):
    # `a` where the two are equal, as eager's (fmax(-0.0, 0.0) is -0.0)
    return tl.where(either(a != a, b > a), b, a)


@triton.jit
def fmin(a, b):
    return tl.where(either(a != a, b < a), b, a)


@triton.jit
def clamp_min(x, lo):
    # As eager's clamp: x unless below the bound (x kept where equal: -0.0 stays -0.0), NaN
    # where either is NaN
    return tl.where(either(x < lo, lo != lo), lo, x)


@triton.jit
def clamp_max(x, hi):
    return tl.where(either(x > hi, hi != hi), hi, x)


@triton.jit
def signbit(x):
    if x.dtype == tl.float64:
        return x.to(tl.int64, bitcast=True) < 0
    else:
        return x.to(tl.int32, bitcast=True) < 0


@triton.jit
def copysign(a, b):
    # Times -1, not unary minus: Triton negates a float as 0 - x, which makes -0.0 of 0.0.
    return tl.abs(a) * tl.where(signbit(b), -1.0, 1.0)


@triton.jit
def maximum(a, b):
    return tl.where(either(a > b, a != a), a, b)


@triton.jit
def minimum(a, b):
    return tl.where(either(a < b, a != a), a, b)


@triton.jit
def _mul(a, b):
    return a * b


@triton.jit
def prod(x, axis):
    return tl.reduce(x, axis, _mul)


@triton.jit
def max2(x, axis):
    return tl.reduce(x, axis, maximum)


@triton.jit
def min2(x, axis):
    return tl.reduce(x, axis, minimum)


INDEX_ERROR = "index out of bounds"


@triton.jit
def check_index(ok, lanes):
    """Stops the kernel where an index read from memory is outside its dim (`ok` false in one
    of `lanes`). A Python assert: Triton compiles it to a device assert, kept only in debug
    mode (`config.index_asserts`, or TRITON_DEBUG=1); its interpreter runs it as Python, always,
    and reads only a one-element block as a boolean, hence the reduction to one."""
    assert tl.min(tl.where(lanes, ok.to(tl.int32), 1)) == 1, "index out of bounds"


# -- row functions of scans_and_sorts.py: each takes a row block `x` (XBLOCK x RBLOCK, lanes
# outside the row `mask` hold 0) and `index`, each lane's position along the row --------------

@triton.jit
def _later_unless_below(value, index, later_value, later_index):
    # cummax as eager scans: NaN sticks, ties take the later element (also among NaNs)
    take = (later_value != later_value) | ((value == value) & (later_value >= value))
    return tl.where(take, later_value, value), tl.where(take, later_index, index)


@triton.jit
def _later_unless_above(value, index, later_value, later_index):
    take = (later_value != later_value) | ((value == value) & (later_value <= value))
    return tl.where(take, later_value, value), tl.where(take, later_index, index)


@triton.jit
def cummax(x, mask, index):
    values, _ = tl.associative_scan((x, tl.broadcast_to(index, x.shape)), 1,
                                    _later_unless_below)
    return values


@triton.jit
def cummax_index(x, mask, index):
    _, indices = tl.associative_scan((x, tl.broadcast_to(index, x.shape)), 1,
                                     _later_unless_below)
    return indices


@triton.jit
def cummin(x, mask, index):
    values, _ = tl.associative_scan((x, tl.broadcast_to(index, x.shape)), 1,
                                    _later_unless_above)
    return values


@triton.jit
def cummin_index(x, mask, index):
    _, indices = tl.associative_scan((x, tl.broadcast_to(index, x.shape)), 1,
                                     _later_unless_above)
    return indices


@triton.jit
def _log_add_exp(a, b):
    # as eager's logcumsumexp adds: two equal infinities are themselves (not inf - inf)
    high, low = maximum(a, b), minimum(a, b)
    same_infinity = (low == high) & (tl.abs(low) == float("inf"))
    return tl.where(same_infinity, high, log1p(tl.exp(low - high)) + high)


@triton.jit
def logcumsumexp(x, mask, index):
    return tl.associative_scan(x, 1, _log_add_exp)


SORT_BLOCK = tl.constexpr(4096)  # the longest row `argsort` sorts (indices take 12 bits)


@triton.jit
def _sort_key(x, mask, descending: tl.constexpr):
    """An int64 whose order is eager's sort order of `x` (of at most 32 bits): NaN above every
    number, -0.0 equal to 0.0; lanes outside the row above all of them."""
    if x.dtype.is_floating():
        bits = (x.to(tl.float32) + 0.0).to(tl.uint32, bitcast=True).to(tl.int64)
        key = tl.where(bits >= 2**31, 2**32 - 1 - bits, bits + 2**31)  # negatives reversed
    else:
        key = x.to(tl.int64) + 2**31
    if descending:
        key = tl.where(x != x, 0, 2**32 - key)
    else:
        key = tl.where(x != x, 2**32, key)
    return tl.where(mask, key, 2**33)


@triton.jit
def _argsort(x, mask, index, descending: tl.constexpr):
    # a stable sort: the key with the lane's index below it, sorted as one number
    packed = _sort_key(x, mask, descending) * SORT_BLOCK + index
    return tl.sort(packed, 1) % SORT_BLOCK


@triton.jit
def argsort(x, mask, index):
    return _argsort(x, mask, index, False)


@triton.jit
def argsort_descending(x, mask, index):
    return _argsort(x, mask, index, True)


@triton.jit
def _at(v, lanes, at):
    # each row's element at lane `at` (a column): only compared afterwards, so a -0.0 read as
    # 0.0 is the same
    return tl.sum(tl.where(lanes == at, v, 0), 1, keep_dims=True)


@triton.jit
def _shifted(v, lanes, by: tl.constexpr):
    # each row's `v[j + by]` at lane j (0 past the row), through a [rows, lanes, lanes] block
    j, k = tl.expand_dims(lanes, 2), tl.expand_dims(lanes, 1)
    return tl.sum(tl.where(k == j + by, tl.expand_dims(v, 1), 0), 2)


@triton.jit
def mode_index(x, mask, index):
    """Eager CPU's index of the mode of each row of at most 16 (at every lane): the row's
    (value, index) pairs insertion-sorted by `value < value` (std::sort's way up to 16
    elements, NaN compared as C++ does), then the last index of the first longest run of
    equal values."""
    n = tl.sum(mask.to(tl.int32), 1, keep_dims=True)
    lanes = index + tl.zeros_like(n)
    values, indices = x, lanes
    for i in tl.static_range(1, 16):
        value, at = _at(values, lanes, i), _at(indices, lanes, i)
        # below the first: in front of it; otherwise after the nearest one it is not below
        stop = tl.max(tl.where((lanes < i) & ~(value < values), lanes, -1), 1, keep_dims=True)
        pos = tl.where(value < _at(values, lanes, 0), 0, stop + 1)
        moved = (lanes > pos) & (lanes <= i) & (i < n)
        put = (lanes == pos) & (i < n)
        values = tl.where(put, value, tl.where(moved, _shifted(values, lanes, -1), values))
        indices = tl.where(put, at, tl.where(moved, _shifted(indices, lanes, -1), indices))
    ends = (lanes < n) & ((lanes == n - 1) | (values != _shifted(values, lanes, 1)))
    # a run ending at lane j starts after the previous end
    previous = tl.max(tl.where(tl.expand_dims(ends, 1) & (tl.expand_dims(lanes, 1)
                                                           < tl.expand_dims(lanes, 2)),
                               tl.expand_dims(lanes, 1), -1), 2)
    length = tl.where(ends, lanes - previous, 0)
    longest = tl.max(length, 1, keep_dims=True)
    chosen = tl.min(tl.where(ends & (length == longest), lanes, 16), 1, keep_dims=True)
    return _at(indices, lanes, chosen).to(tl.int64) + tl.zeros_like(lanes).to(tl.int64)
