"""Random distributions as transforms of Triton's random draws.

Each op draws from a seed of its own (`GraphLowering.new_seed`), one number per output element
at its row-major position, and turns the draw into the distribution with the transform eager's
CPU kernels apply (ATen's `TransformationHelper.h`): uniform `u` in [0, 1) from `tl.rand`
becomes `from + u * (to - from)`, an exponential `-log1p(-u) / lambd`, a Cauchy
`median + sigma * tan(pi * (u - 1/2))`; `randn`'s normal `z` becomes `mean + std * z` and a
log-normal `exp(mean + std * z)`; `tl.randint`'s uint32 bits become an integer in
[low, high) as `low + bits % (high - low)`. The numbers differ from eager's, their
distribution is the same. Draws are float32 (24 bits), so float64 results are refused, and so
is every case eager checks and raises on (a negative std, p outside (0, 1), ...), a generator,
and a number known only at run time: those run as the aten call. A std tensor is checked as
eager checks it, `all(std >= 0)` (false for a NaN) reduced by a kernel, and an
`aten._assert_async.msg` call raises eager's error.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import sympy
import torch

from .ir import (
    ExternBuffer,
    LoweringError,
    Pointwise,
    Reduction,
    Value,
    constant,
    loader,
    op,
    to_dtype,
)
from .lowering import (
    GraphLowering,
    broadcast_loader,
    compute_dtype,
    draws,
    is_tensor,
    register,
    sym,
)

aten = torch.ops.aten

NEGATIVE_STD = "normal expects all elements of std >= 0.0"

# Result dtypes whose values float32 draws give exactly (rounded once when stored).
FLOATS = (torch.float32, torch.float16, torch.bfloat16)
# Result dtypes of `randint`: integers, and floats holding its integers exactly.
RANDINT_DTYPES = (torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8,
                  *FLOATS, torch.float64)


def _float_result(val: torch.Tensor, generator: Any) -> tuple[tuple, torch.dtype, Any]:
    """`val`'s size, dtype and device, refused unless a float32 draw gives its values."""
    if generator is not None:
        raise LoweringError("a random op with a generator of its own")
    if val.dtype not in FLOATS:
        raise LoweringError(f"random {val.dtype} values (Triton draws float32 numbers)")
    return tuple(sym(s) for s in val.shape), val.dtype, val.device


def _numbers(*values: Any) -> None:
    """Refuse arguments other than finite Python numbers (a symbolic one is checked by eager
    only at run time)."""
    for v in values:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise LoweringError(f"a random op's argument {v!r}, checked by the aten call")


def _transformed(lower: GraphLowering, kind: str, generator: Any,
                 transform: Callable[[Value], Value]) -> Pointwise:
    """`transform` of a fresh draw of `kind` for each element of the node's float result."""
    size, dtype, device = _float_result(lower.node.meta["val"], generator)
    draw = draws(lower, kind, size)
    return Pointwise(size, dtype, device, lambda idx: transform(draw(idx)))


def _f32(value: float) -> Value:
    return constant(value, torch.float32)


@register(aten.uniform.default)
def _uniform(lower, node, x, low=0.0, high=1.0, *, generator=None):
    _numbers(low, high)
    _, dtype, _ = _float_result(lower.node.meta["val"], generator)
    most = torch.finfo(dtype).max
    if not (abs(low) <= most and abs(high) <= most and low <= high and high - low <= most):
        raise LoweringError("uniform_ bounds that eager refuses")
    # eager rounds the bounds to the tensor's dtype first (a half tensor's 0.1 is 0.0999755859375)
    low, high = (to_dtype(constant(b, dtype), torch.float32) for b in (low, high))
    return _transformed(lower, "rand", generator,
                        lambda u: op("add", op("mul", u, op("sub", high, low)), low))


def _normal(lower: GraphLowering, mean: Any, std: Any, generator: Any) -> Pointwise:
    """`mean + std * z` of a normal draw `z`, `mean` and `std` numbers or tensors broadcast to
    the result."""
    size, dtype, device = _float_result(lower.node.meta["val"], generator)
    _numbers(*(v for v in (mean, std) if not is_tensor(v)))
    if any(is_tensor(v) and v.dtype != dtype for v in (mean, std)):
        raise LoweringError("normal of a mean or std of another dtype than its result")
    if is_tensor(std):
        _assert_not_negative(lower, std)
    elif std < 0:
        raise LoweringError("normal with std < 0 (eager raises)")
    cd = compute_dtype(dtype)
    load_mean, load_std = broadcast_loader(mean, size, cd), broadcast_loader(std, size, cd)
    draw = draws(lower, "randn", size)
    return Pointwise(size, dtype, device, lambda idx: op(
        "add", op("mul", load_std(idx), draw(idx)), load_mean(idx)))


def _assert_not_negative(lower: GraphLowering, std: Any) -> None:
    """Raise eager's error at run time unless every element of `std` is >= 0 (not NaN)."""
    load, cd = loader(std), compute_dtype(std.dtype)

    def not_negative(idx):
        return op("ge", to_dtype(load(idx), cd), constant(0.0, cd), dtype=torch.bool)
    if all(s == 1 for s in std.size):  # one element (or a 0-d std): no reduction
        holds = Pointwise((), torch.bool, std.device,
                          lambda idx: not_negative([sympy.Integer(0)] * len(std.size)))
    else:
        holds = Reduction((), tuple(std.size), "all", torch.bool, std.device,
                          lambda idx, ridx: not_negative(ridx))
    lower.add(ExternBuffer(lower.new_name(), None, target=aten._assert_async.msg,
                           args=(lower.realize(holds), NEGATIVE_STD)))


@register(aten.normal_functional.default)
def _normal_functional(lower, node, x, mean=0.0, std=1.0, *, generator=None):
    return _normal(lower, mean, std, generator)


@register(aten.normal.Tensor_float, aten.normal.float_Tensor, aten.normal.Tensor_Tensor)
def _normal_of_tensors(lower, node, mean, std=1.0, *, generator=None):
    return _normal(lower, mean, std, generator)


@register(aten.normal.float_float)
def _normal_of_size(lower, node, mean, std, size, *, generator=None, **options):
    return _normal(lower, mean, std, generator)


@register(aten.log_normal.default)
def _log_normal(lower, node, x, mean=1.0, std=2.0, *, generator=None):
    _numbers(mean, std)
    if std <= 0:
        raise LoweringError("log_normal_ with std <= 0 (eager raises)")
    return _transformed(lower, "randn", generator, lambda z: op(
        "exp", op("add", op("mul", z, _f32(std)), _f32(mean))))


@register(aten.exponential.default)
def _exponential(lower, node, x, lambd=1.0, *, generator=None):
    _numbers(lambd)
    if lambd <= 0:
        raise LoweringError("exponential_ with lambd <= 0 (eager raises)")
    return _transformed(lower, "rand", generator, lambda u: op(
        "truediv", op("log1p", op("neg", u)), _f32(-lambd)))


@register(aten.cauchy.default)
def _cauchy(lower, node, x, median=0.0, sigma=1.0, *, generator=None):
    _numbers(median, sigma)
    if sigma <= 0:
        raise LoweringError("cauchy_ with sigma <= 0 (eager raises)")
    return _transformed(lower, "rand", generator, lambda u: op("add", op("mul", _f32(sigma), op(
        "tan", op("mul", op("sub", u, _f32(0.5)), _f32(math.pi)))), _f32(median)))


@register(aten.geometric.default)
def _geometric(lower, node, x, p, *, generator=None):
    """`floor(log1p(-u) / log1p(-p)) + 1`, as torch's reference decomposition: at least 1 and
    finite for every draw (eager's `ceil(log(u) / log1p(-p))` is 0 at u = 1, inf at u = 0);
    float results only (an integer one could overflow where a tiny p draws huge numbers)."""
    _numbers(p)
    if not 0 < p < 1:
        raise LoweringError("geometric_ with p outside (0, 1) (eager raises)")
    return _transformed(lower, "rand", generator, lambda u: op("add", op("floor", op(
        "truediv", op("log1p", op("neg", u)), _f32(math.log1p(-p)))), _f32(1.0)))


def _randint(lower: GraphLowering, low: Any, high: Any) -> Pointwise:
    """`low + bits % (high - low)` of 32 random bits, eager's transform for a range below
    2**32 (a wider one takes 64 bits there: refused)."""
    _numbers(low, high)
    val = lower.node.meta["val"]
    if not (isinstance(low, int) and isinstance(high, int)) or val.dtype not in RANDINT_DTYPES:
        raise LoweringError(f"randint of {val.dtype} or of non-integer bounds")
    if not 0 < high - low < 2**32:
        raise LoweringError("randint with high <= low (eager raises) or a 64-bit range")
    # (eager only warns where a float dtype cannot hold every integer of the range: rounded)
    info = None if val.dtype.is_floating_point else torch.iinfo(val.dtype)
    if info is not None and not (info.min <= low and high - 1 <= info.max):
        raise LoweringError("randint bounds outside the dtype's range (eager raises)")
    size = tuple(sym(s) for s in val.shape)
    draw = draws(lower, "randint", size)
    cd = compute_dtype(val.dtype)

    def fn(idx):
        bits = to_dtype(draw(idx), torch.int64)
        offset = op("remainder", bits, constant(high - low, torch.int64))
        return to_dtype(op("add", offset, constant(low, torch.int64)), cd)
    return Pointwise(size, val.dtype, val.device, fn)


@register(aten.randint.default)
def _randint_high(lower, node, high, size, **options):
    return _randint(lower, 0, high)


@register(aten.randint.low)
def _randint_low(lower, node, low, high, size, **options):
    return _randint(lower, low, high)


@register(aten.randint_like.default)
def _randint_like_high(lower, node, x, high, **options):
    return _randint(lower, 0, high)


@register(aten.randint_like.low_dtype)
def _randint_like_low(lower, node, x, low, high, **options):
    return _randint(lower, low, high)


@register(aten.rrelu_with_noise_functional.default)
def _rrelu_with_noise(lower, node, x, noise, lower_bound=0.125, upper_bound=1 / 3,
                      training=False, generator=None):
    """Training: each `x <= 0` times a draw `r` in [lower, upper), the noise `r` there and 1
    elsewhere. Else leaky ReLU with the bounds' mean as its slope, the noise as it was."""
    _numbers(lower_bound, upper_bound)
    if lower_bound > upper_bound or noise.size != x.size or noise.dtype != x.dtype:
        raise LoweringError("rrelu with lower > upper or an odd noise: the aten call decides")
    size, dtype, device = _float_result(lower.node.meta["val"][0], generator)
    if dtype == torch.float16 and device.type == "cpu":
        raise LoweringError("half rrelu on the CPU, which eager refuses")
    cd = compute_dtype(dtype)
    load_x, load_noise = loader(x), loader(noise)
    zero = constant(0.0, cd)
    if not training:
        slope = _f32((lower_bound + upper_bound) / 2)
        return [Pointwise(size, dtype, device, lambda idx: op(
                    "where", op("gt", to_dtype(load_x(idx), cd), zero, dtype=torch.bool),
                    to_dtype(load_x(idx), cd), op("mul", to_dtype(load_x(idx), cd), slope))),
                Pointwise(size, dtype, device, lambda idx: to_dtype(load_noise(idx), cd))]
    draw = draws(lower, "rand", size)
    low, span = _f32(lower_bound), _f32(upper_bound - lower_bound)

    def slope(idx):
        negative = op("le", to_dtype(load_x(idx), cd), zero, dtype=torch.bool)
        r = op("add", op("mul", draw(idx), span), low)
        return op("where", negative, r, constant(1.0, cd))
    return [Pointwise(size, dtype, device,
                      lambda idx: op("mul", to_dtype(load_x(idx), cd), slope(idx))),
            Pointwise(size, dtype, device, slope)]
