"""Grid sampling (`grid_sampler_2d`, `grid_sampler_3d`) as a pointwise kernel over the output.

Each output reads its point of the grid, a coordinate in [-1, 1] per spatial dim (x the width,
y the height, z the depth), maps it to a source position in the input (unnormalized, then
clipped to the border or reflected back into the input), and reads the input there: the
nearest element, or the 4 (8 in 3-d) corners around it weighted by their distance; a corner
outside the input reads 0. The arithmetic is eager's CPU arithmetic step for step, which is not
the same in both ops: 2-d runs eager's vectorized kernel (coordinates `(g + 1) * (size / 2) -
0.5`, reflection by the span's double flips, a NaN clipped to 0, weights `(1 - dy) * (1 - dx)`),
3-d its scalar one (`((g + 1) * size - 1) / 2`, reflection by `fmod`, a NaN clipped to the last
element, a coordinate past the int range moved to -100, weights as products of the distances to
the far corner). Results equal eager's bit for bit, except 2-d bilinear ones, equal to
rounding (the compiler of eager's vectorized kernel fuses multiply-adds). Each dim's source
position is a buffer of its own (the sampling reads it for every channel and corner), fused
into the kernel before the sampling one. Bicubic interpolation (2-d only, as eager) reads the
4 x 4 taps around the source position left unpadded, each tap's coordinates clipped or
reflected on their own as eager's vectorized kernel pads them (zeros: a tap outside reads 0),
weighted by eager's cubic convolution polynomials (A = -0.75) of the position's fraction: each
row of taps blended along x, then the rows along y; equal to rounding (fused multiply-adds
again). Tensors on a GPU (whose eager kernel is another one) run as the aten op.
"""

from __future__ import annotations

from collections.abc import Callable

import sympy
import torch

from .ir import (
    IndirectIndex,
    LoweringError,
    Pointwise,
    TensorIR,
    Value,
    constant,
    loader,
    op,
    to_dtype,
)
from .lowering import aten, positive, register, sym

BILINEAR, NEAREST, BICUBIC = 0, 1, 2
# eager's cubic convolution constant (as its bicubic upsampling)
CUBIC_A = -0.75
ZEROS, BORDER, REFLECTION = 0, 1, 2


def _where(condition: Value, a: Value, b: Value) -> Value:
    return Value("where", (condition, a, b), a.dtype)


def _both(a: Value, b: Value) -> Value:
    return op("logical_and", a, b)


def _float(size: sympy.Expr, cd: torch.dtype) -> Value:
    """A number made of a dim's size (`(size - 1) / 2`), exact as eager's float of it: a
    symbolic one from the size's int, divided by its (power of 2) denominator."""
    if size.is_number:
        return constant(float(size), cd)
    numerator, denominator = size.as_numer_denom()
    value = to_dtype(Value("index", (numerator,), torch.int64), cd)
    return value if denominator == 1 else op("truediv", value, _float(denominator, cd))


def _vectorized_source(g: Value, size: sympy.Expr, padding: int, align_corners: bool) -> Value:
    """Eager's vectorized (2-d) source position of grid coordinate `g` along a dim of `size`."""
    return _vectorized_padded(_vectorized_unnormalized(g, size, align_corners), size, padding,
                              align_corners)


def _vectorized_unnormalized(g: Value, size: sympy.Expr, align_corners: bool) -> Value:
    cd = g.dtype
    one = constant(1, cd)
    if align_corners:
        return op("mul", op("add", g, one), _float((size - 1) / 2, cd))
    return op("sub", op("mul", op("add", g, one), _float(size / 2, cd)), constant(0.5, cd))


def _vectorized_padded(x: Value, size: sympy.Expr, padding: int, align_corners: bool) -> Value:
    """Source position `x` clipped to the border or reflected back into the input, as eager's
    vectorized kernel does."""
    cd = x.dtype
    if padding == ZEROS:
        return x
    if padding == REFLECTION:
        low = 0.0 if align_corners else -0.5
        twice_span = 2 * (size - 1 if align_corners else size)
        if twice_span == 0:  # (a symbolic size is known not to make it 0: `_grid_sampler`)
            x = constant(0, cd)
        else:
            span = _float(twice_span, cd)
            distance = op("abs", op("sub", x, constant(low, cd)))
            flips = op("trunc", op("truediv", distance, span))
            extra = op("sub", distance, op("mul", flips, span))
            x = op("add", op("minimum", extra, op("sub", span, extra)), constant(low, cd))
    zero = constant(0, cd)
    # clamped below first, a NaN to 0 (eager's `clamp_min(0, x)` keeps its first operand)
    x = _where(op("gt", x, zero, dtype=torch.bool), x, zero)
    return op("minimum", x, _float(size - 1, cd))


def _scalar_clip(x: Value, size: sympy.Expr) -> Value:
    """`std::min(size - 1, std::max(x, 0))`: a NaN becomes `size - 1`."""
    cd = x.dtype
    zero, last = constant(0, cd), _float(size - 1, cd)
    x = _where(op("lt", x, zero, dtype=torch.bool), zero, x)
    return _where(op("lt", x, last, dtype=torch.bool), x, last)


def _scalar_source(g: Value, size: sympy.Expr, padding: int, align_corners: bool) -> Value:
    """Eager's scalar (3-d) source position of grid coordinate `g` along a dim of `size`."""
    cd = g.dtype
    one, two = constant(1, cd), constant(2, cd)
    if align_corners:
        x = op("mul", op("truediv", op("add", g, one), two), _float(size - 1, cd))
    else:
        x = op("truediv", op("sub", op("mul", op("add", g, one), _float(size, cd)), one), two)
    if padding == REFLECTION:
        twice_low, twice_high = (0, 2 * (size - 1)) if align_corners else (-1, 2 * size - 1)
        if twice_low == twice_high:  # (not for a symbolic size: `_grid_sampler`)
            x = constant(0, cd)
        else:
            low, span = constant(twice_low / 2, cd), _float((twice_high - twice_low) / 2, cd)
            distance = op("abs", op("sub", x, low))
            extra = op("fmod", distance, span)
            flips = op("floor", op("truediv", distance, span))
            odd = op("ne", op("fmod", flips, two), constant(0, cd), dtype=torch.bool)
            x = op("add", _where(odd, op("sub", span, extra), extra), low)
    if padding != ZEROS:
        x = _scalar_clip(x, size)
    # past the int range (or not finite), eager moves a coordinate to -100: outside the input
    finite = _both(op("eq", op("sub", x, x), constant(0, cd), dtype=torch.bool),
                   _both(op("le", x, constant(2**31 - 2, cd), dtype=torch.bool),
                         op("ge", x, constant(-2**31, cd), dtype=torch.bool)))
    return _where(finite, x, constant(-100, cd))


def _corner(position: Value, size: sympy.Expr) -> tuple[sympy.Expr, Value]:
    """The index of integer-valued float `position` along a dim of `size`, clamped into it (so
    that every lane reads inside the input), and whether `position` lies inside."""
    cd = position.dtype
    inside = _both(op("gt", position, constant(-1, cd), dtype=torch.bool),
                   op("lt", position, _float(size, cd), dtype=torch.bool))
    zero, last = constant(0, cd), _float(size - 1, cd)
    clamped = _where(op("gt", position, zero, dtype=torch.bool), position, zero)  # NaN: 0
    clamped = _where(op("lt", clamped, last, dtype=torch.bool), clamped, last)
    return IndirectIndex(to_dtype(clamped, torch.int64), size, wraps=False), inside


def _read(x: TensorIR, lead: list, positions: list[Value], sizes: list[sympy.Expr]
          ) -> tuple[Value, Value]:
    """The input at integer-valued float `positions` (one per spatial dim, depth first), 0
    outside it, and whether it is inside."""
    where, inside = [], None
    for p, n in zip(positions, sizes):
        i, ok = _corner(p, n)
        where.append(i)
        inside = ok if inside is None else _both(inside, ok)
    v = to_dtype(loader(x)([*lead, *where]), positions[0].dtype)
    return _where(inside, v, constant(0, v.dtype)), inside


def _vectorized_bilinear(x: TensorIR, lead: list, ys: Value, xs: Value, sizes: list[sympy.Expr]
                         ) -> Value:
    """2-d: `nw * v_nw + ne * v_ne + sw * v_sw + se * v_se`, eager's weights and order."""
    cd = xs.dtype
    one = constant(1, cd)
    west, north = op("floor", xs), op("floor", ys)
    w = op("sub", xs, west)
    e = op("sub", one, w)
    n = op("sub", ys, north)
    s = op("sub", one, n)
    east, south = op("add", west, one), op("add", north, one)
    total = None
    for row, col, weight in ((north, west, op("mul", s, e)), (north, east, op("mul", s, w)),
                             (south, west, op("mul", n, e)), (south, east, op("mul", n, w))):
        term = op("mul", _read(x, lead, [row, col], sizes)[0], weight)
        total = term if total is None else op("add", total, term)
    return total


def _cubic_coefficients(t: Value) -> list[Value]:
    """The 4 taps' weights for fraction `t` (past the tap before the point): eager's cubic
    convolution polynomials, in its order of operations."""
    cd = t.dtype
    a, one = constant(CUBIC_A, cd), constant(1, cd)

    def c(v: float) -> Value:
        return constant(v, cd)

    def far(x: Value) -> Value:  # 1 < x < 2
        inner = op("add", op("mul", op("sub", op("mul", a, x), c(5 * CUBIC_A)), x),
                   c(8 * CUBIC_A))
        return op("sub", op("mul", inner, x), c(4 * CUBIC_A))

    def near(x: Value) -> Value:  # x <= 1
        inner = op("mul", op("sub", op("mul", c(CUBIC_A + 2), x), c(CUBIC_A + 3)), x)
        return op("add", op("mul", inner, x), one)
    return [far(op("add", t, one)), near(t), near(op("sub", one, t)), far(op("sub", c(2), t))]


def _vectorized_bicubic(x: TensorIR, lead: list, ys: Value, xs: Value, sizes: list[sympy.Expr],
                        padding: int, align_corners: bool) -> Value:
    """2-d: the 4 x 4 taps around the (unpadded) source position, each tap's coordinates
    padded on their own (zeros: a tap outside reads 0); each row blended along x, then the
    rows along y, in eager's order."""
    tops = [op("floor", ys), op("floor", xs)]
    weights = [_cubic_coefficients(op("sub", p, f)) for p, f in zip((ys, xs), tops)]

    def taps(first: Value, size: sympy.Expr) -> list[Value]:
        return [_vectorized_padded(op("add", first, constant(k, first.dtype)), size, padding,
                                   align_corners) for k in (-1, 0, 1, 2)]
    rows, cols = taps(tops[0], sizes[0]), taps(tops[1], sizes[1])

    def blend(values: list[Value], coefficients: list[Value]) -> Value:
        total = None
        for v, w in zip(values, coefficients):
            term = op("mul", w, v)
            total = term if total is None else op("add", total, term)
        return total
    return blend([blend([_read(x, lead, [r, q], sizes)[0] for q in cols], weights[1])
                  for r in rows], weights[0])


def _scalar_trilinear(x: TensorIR, lead: list, zs: Value, ys: Value, xs: Value,
                      sizes: list[sympy.Expr]) -> Value:
    """3-d: the 8 corners in eager's order, each weighted by the product (x, then y, then z)
    of its distances to the opposite corner; a corner outside adds nothing."""
    cd = xs.dtype
    one = constant(1, cd)
    firsts = [op("floor", c) for c in (zs, ys, xs)]
    lows = [op("sub", c, f) for c, f in zip((zs, ys, xs), firsts)]  # to the first corner
    highs = [op("sub", op("add", f, one), c) for c, f in zip((zs, ys, xs), firsts)]
    total = None
    for dz in (0, 1):
        for dy in (0, 1):
            for dx in (0, 1):
                picks = (dz, dy, dx)
                corner = [op("add", f, one) if d else f for f, d in zip(firsts, picks)]
                wz, wy, wx = (lo if d else hi for lo, hi, d in zip(lows, highs, picks))
                weight = op("mul", op("mul", wx, wy), wz)
                v, inside = _read(x, lead, corner, sizes)
                term = _where(inside, op("mul", v, weight), constant(0, cd))
                total = term if total is None else op("add", total, term)
    return total


def _grid_sampler(lower, x, grid, interpolation: int, padding: int, align_corners: bool,
                  source: Callable[[Value, int, int, bool], Value]) -> Pointwise:
    val = lower.node.meta["val"]
    if val.dtype not in (torch.float32, torch.float64) or grid.dtype != val.dtype:
        raise LoweringError("grid sampling of half floats (eager's CPU kernels refuse them)")
    if val.device.type != "cpu":
        raise LoweringError("grid sampling off the CPU (eager's CUDA kernel clips NaNs and "
                            "rounds as a kernel of its own)")
    if interpolation not in (BILINEAR, NEAREST, BICUBIC) or padding not in (
            ZEROS, BORDER, REFLECTION) or (interpolation == BICUBIC and len(x.size) != 4):
        raise LoweringError(f"grid sampling with interpolation {interpolation}, padding "
                            f"{padding} in {len(x.size) - 2}-d")
    sizes = list(x.size[2:])  # depth, height, width
    if padding == REFLECTION and not all(
            s.is_number or positive(lower, s - 1 if align_corners else s) for s in sizes):
        raise LoweringError("grid reflection in a symbolic dim that may have no span")
    size = tuple(sym(s) for s in val.shape)
    load_grid = loader(grid)
    cd = val.dtype

    def position(k: int, n: sympy.Expr) -> Callable:
        """Where each output reads along the dim of grid coordinate `k` (of `n` elements): a
        buffer (it is read many times; the scheduler fuses it into the sampling kernel)."""
        def fn(idx):
            g = to_dtype(load_grid([*idx, sympy.Integer(k)]), cd)
            if interpolation == BICUBIC:  # its taps are padded one by one
                return _vectorized_unnormalized(g, n, align_corners)
            v = source(g, n, padding, align_corners)
            return op("round", v) if interpolation == NEAREST else v
        return loader(lower.realize(Pointwise(grid.size[:-1], cd, val.device, fn)))
    # depth (z), height (y), width (x): the input's order, the grid's reversed
    positions = [position(len(sizes) - 1 - d, n) for d, n in enumerate(sizes)]

    def fn(idx):
        batch, channel, *out = idx
        coords = [load([batch, *out]) for load in positions]
        lead = [batch, channel]
        if interpolation == NEAREST:
            return _read(x, lead, coords, sizes)[0]
        if interpolation == BICUBIC:
            return _vectorized_bicubic(x, lead, *coords, sizes, padding, align_corners)
        if len(sizes) == 2:
            return _vectorized_bilinear(x, lead, *coords, sizes)
        return _scalar_trilinear(x, lead, *coords, sizes)
    return Pointwise(size, val.dtype, val.device, fn)


@register(aten.grid_sampler_2d.default)
def _grid_sampler_2d(lower, node, x, grid, interpolation_mode, padding_mode, align_corners):
    return _grid_sampler(lower, x, grid, interpolation_mode, padding_mode, align_corners,
                         _vectorized_source)


@register(aten.grid_sampler_3d.default)
def _grid_sampler_3d(lower, node, x, grid, interpolation_mode, padding_mode, align_corners):
    return _grid_sampler(lower, x, grid, interpolation_mode, padding_mode, align_corners,
                         _scalar_source)
