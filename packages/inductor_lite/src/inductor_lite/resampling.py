"""Volumes resampled: 3-d pooling windows and trilinear interpolation, as pointwise kernels.

Pooling in 3-d is 2-d pooling (lowering.py) with one more window dim: each output unrolls its
window's taps (windows are small), taps outside the input masked off. Trilinear upsampling reads
the 8 corners around each output's source point, weighted as eager weighs them: the source
index `scale * (o + 0.5) - 0.5` (or `scale * o` with `align_corners`) computed in the
input's float type from a scale the lowering rounds as eager rounds it, its floor the first
corner, the next one clamped to the input's last row. Antialiased bilinear resizing sums, for
each output, a window of rows of windows of columns under eager's normalised triangle weights,
the window widened by the downscale factor and each weight rounded as eager rounds it.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence
from typing import Any

import sympy
import torch

from . import ir
from .ir import (
    Index,
    LoweringError,
    Pointwise,
    TensorIR,
    Value,
    constant,
    index_in,
    loader,
    op,
    to_dtype,
)
from .lowering import aten, compute_dtype, max_pooled, register, sym


def _triple(v: Any, default: Sequence[int] | None = None) -> tuple[int, int, int]:
    if isinstance(v, int):
        return v, v, v
    v = default if not v else v
    return (v[0],) * 3 if len(v) == 1 else tuple(v)


def _window_taps_3d(x: TensorIR, idx: Index, kernel, stride, padding, dilation
                    ) -> Iterator[tuple[list[sympy.Expr], Value]]:
    """Each tap of the 3-d window under output index `idx`: its (depth, row, col) in the input,
    and whether it lies inside the input."""
    outs, ins = idx[-3:], x.size[-3:]
    for taps in itertools.product(*(range(k) for k in kernel)):
        where = [o * s - p + t * d for o, s, p, t, d in zip(outs, stride, padding, taps, dilation)]
        inside = None
        for i, n in zip(where, ins):
            inside = index_in(i, n) if inside is None else op("logical_and", inside,
                                                              index_in(i, n))
        yield where, inside


def _pooling_args(x: TensorIR, kernel_size, stride, padding, dilation) -> tuple:
    if len(x.size) not in (4, 5):
        raise LoweringError("3-d pooling of an input that is not 4-d or 5-d")
    kernel = _triple(kernel_size)
    return kernel, _triple(stride, kernel), _triple(padding), _triple(dilation)


@register(aten.max_pool3d_with_indices.default)
def _max_pool3d(lower, node, x, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """Max over each window and its index `(d * H + h) * W + w`: the first maximum, or the last
    NaN, of the taps inside the input (`pooled_index`, as 2-d max pooling)."""
    vals = lower.node.meta["val"]
    size = tuple(sym(s) for s in vals[0].shape)
    args = _pooling_args(x, kernel_size, stride, padding, dilation)
    load = loader(x)
    cd = compute_dtype(x.dtype)
    if not cd.is_floating_point:
        raise LoweringError("max_pool3d of integers (eager refuses them)")
    lowest = constant(-math.inf, cd)
    _, h, w = x.size[-3:]

    def taps(idx):
        for (d, r, c), inside in _window_taps_3d(x, idx, *args):
            v = to_dtype(load([*idx[:-3], d, r, c]), cd)
            yield (d * h + r) * w + c, inside, Value("where", (inside, ir.masked(v, inside),
                                                               lowest), cd)

    return max_pooled(size, vals, taps)


@register(aten.avg_pool3d.default)
def _avg_pool3d(lower, node, x, kernel_size, stride=(), padding=0, ceil_mode=False,
                count_include_pad=True, divisor_override=None):
    """The sum over each window divided by its taps inside the input (inside the padded input,
    with `count_include_pad`), or by `divisor_override`."""
    val = lower.node.meta["val"]
    size = tuple(sym(s) for s in val.shape)
    args = _pooling_args(x, kernel_size, stride, padding, 1)
    pad = args[2]
    load = loader(x)
    cd = compute_dtype(val.dtype)
    if not cd.is_floating_point or (cd != val.dtype and val.device.type == "cpu"):
        raise LoweringError("avg_pool3d of integers, or of half floats on a CPU (eager refuses "
                            "them)")

    def fn(idx):
        total = count = None
        for where, inside in _window_taps_3d(x, idx, *args):
            v = to_dtype(load([*idx[:-3], *where]), cd)
            v = Value("where", (inside, ir.masked(v, inside), constant(0, cd)), cd)
            total = v if total is None else op("add", total, v)
            if count_include_pad:
                inside = None
                for i, n, p in zip(where, x.size[-3:], pad):
                    inside_padded = index_in(i + p, n + 2 * p)
                    inside = inside_padded if inside is None else op("logical_and", inside,
                                                                     inside_padded)
            n = to_dtype(inside, cd)
            count = n if count is None else op("add", count, n)
        if divisor_override:
            count = constant(divisor_override, cd)
        return op("truediv", total, count)
    return Pointwise(size, val.dtype, val.device, fn)


def _linear_source(o: sympy.Expr, n: int, m: int, align_corners: bool, scale: float | None,
                   cd: torch.dtype) -> tuple[sympy.Expr | Value, sympy.Expr | Value, Value, Value]:
    """Output row `o` of `m` interpolated from `n` rows: the two rows it reads (an index, or an
    int64 Value computed in the kernel) and their weights, as eager computes them in `cd`."""
    if n == m:
        return o, o, constant(1, cd), constant(0, cd)
    if align_corners:
        # eager divides in `cd`: a float32 quotient is that of float32 operands
        ratio = torch.tensor(n - 1, dtype=cd).div(m - 1).item() if m > 1 else 0.0
    elif scale is not None and scale > 0:
        ratio = 1.0 / scale
    else:
        ratio = torch.tensor(n, dtype=cd).div(m).item()
    ratio = constant(ratio, cd)
    dst = to_dtype(Value("index", (o,), torch.int64), cd)
    if align_corners:
        real = op("mul", ratio, dst)
    else:
        half = constant(0.5, cd)
        real = op("sub", op("mul", ratio, op("add", dst, half)), half)
        real = op("maximum", real, constant(0, cd))
    last = constant(n - 1, torch.int64)
    first = op("minimum", to_dtype(op("floor", real), torch.int64), last)
    second = op("add", first, to_dtype(op("lt", first, last, dtype=torch.bool), torch.int64))
    weight = op("minimum", op("maximum", op("sub", real, to_dtype(first, cd)), constant(0, cd)),
                constant(1, cd))
    return first, second, op("sub", constant(1, cd), weight), weight


@register(aten.upsample_trilinear3d.default)
def _upsample_trilinear3d(lower, node, x, output_size, align_corners, scales_d=None,
                          scales_h=None, scales_w=None):
    """The 8 corners around each output's source point, weighted, summed as eager sums them:
    along the width first, then the height, then the depth."""
    val = lower.node.meta["val"]
    if val.dtype not in (torch.float32, torch.float64):
        raise LoweringError("trilinear upsampling of half floats (eager rounds its weights)")
    ins, outs = x.size[-3:], tuple(sym(s) for s in val.shape)[-3:]
    if not all(s.is_Integer for s in (*ins, *outs)):
        raise LoweringError("trilinear upsampling of symbolic sizes (its scales are floats)")
    size = tuple(sym(s) for s in val.shape)
    cd = val.dtype
    load = loader(x)

    def fn(idx):
        dims = [_linear_source(o, int(n), int(m), align_corners, s, cd)
                for o, n, m, s in zip(idx[-3:], ins, outs, (scales_d, scales_h, scales_w))]

        def at(*rows):
            where = [ir.IndirectIndex(r, n, wraps=False) if isinstance(r, Value) else r
                     for r, n in zip(rows, ins)]
            return to_dtype(load([*idx[:-3], *where]), cd)

        def blend(prefix, dim):
            if dim == 3:
                return at(*prefix)
            first, second, w0, w1 = dims[dim]
            return op("add", op("mul", w0, blend([*prefix, first], dim + 1)),
                      op("mul", w1, blend([*prefix, second], dim + 1)))
        return blend([], 0)
    return Pointwise(size, val.dtype, val.device, fn)



def _antialias_ratio(n: int, m: int, align_corners: bool, scale: float | None) -> float:
    """Input rows per output row, rounded to float32 as eager rounds it."""
    f32 = torch.float32
    if align_corners:
        return torch.tensor(n - 1, dtype=f32).div(m - 1).item() if m > 1 else 0.0
    if scale is not None and scale > 0:
        return torch.tensor(1.0 / scale, dtype=f32).item()
    return torch.tensor(n, dtype=f32).div(m).item()


def _antialias_tap_count(ratio: float) -> int:
    """Eager's taps per output: the filter's support (1, times the downscale factor) each side."""
    return int(math.ceil(max(ratio, 1.0))) * 2 + 1


def _antialias_taps(o: sympy.Expr, n: int, ratio: float) -> list[tuple[Value, Value, Value]]:
    """Output row `o` antialiased from `n` rows, `ratio` input rows per output row, as eager's
    float32 kernel weighs it: each tap's row (clamped into the input), whether it lies in the
    output's window, and its normalised weight."""
    f32, f64, i64 = torch.float32, torch.float64, torch.int64
    support = max(ratio, 1.0)
    inverse = torch.tensor(1.0, dtype=f32).div(ratio).item() if ratio >= 1 else 1.0
    # eager's center, window ends and tap distances mix float32 steps and double ones (its
    # `+ 0.5` is a double): each rounded where eager rounds it
    dst = op("add", to_dtype(Value("index", (o,), i64), f64), constant(0.5, f64))
    center = to_dtype(op("mul", constant(ratio, f64), dst), f32)

    def window_end(sign: float) -> Value:
        end = to_dtype(op("add", center, constant(sign * support, f32)), f64)
        return to_dtype(op("add", end, constant(0.5, f64)), i64)
    first = op("maximum", window_end(-1.0), constant(0, i64))
    count = op("sub", op("minimum", window_end(1.0), constant(n, i64)), first)
    taps, total = [], constant(0, f32)
    for j in range(_antialias_tap_count(ratio)):
        row = op("add", first, constant(j, i64))
        distance = to_dtype(op("sub", to_dtype(row, f32), center), f64)
        distance = op("mul", op("add", distance, constant(0.5, f64)), constant(inverse, f64))
        distance = op("abs", to_dtype(distance, f32))
        inside = op("lt", constant(j, i64), count, dtype=torch.bool)
        near = op("logical_and", inside, op("lt", distance, constant(1, f32), dtype=torch.bool))
        weight = Value("where", (near, op("sub", constant(1, f32), distance), constant(0, f32)),
                       f32)
        total = op("add", total, weight)
        taps.append((op("minimum", row, constant(n - 1, i64)), inside, weight))
    nonzero = op("ne", total, constant(0, f32), dtype=torch.bool)
    return [(row, inside, Value("where", (nonzero, op("truediv", weight, total), weight), f32))
            for row, inside, weight in taps]


# taps (rows times columns) one output may read: past it, the kernel's code grows too large
MAX_ANTIALIAS_TAPS = 1024


@register(aten._upsample_bilinear2d_aa.default)
def _upsample_bilinear2d_aa(lower, node, x, output_size, align_corners, scales_h=None,
                            scales_w=None):
    """Antialiased bilinear resizing as eager's separable float32 kernel: each output a sum of
    rows of the input, each row a sum of its columns, over windows of the triangle filter widened
    by the downscale factor, their weights normalised per output (a dim of unchanged size is
    read as is, as eager skips it)."""
    val = lower.node.meta["val"]
    if val.dtype != torch.float32 or len(x.size) != 4:
        raise LoweringError("antialiased bilinear resizing of other than 4-d float32")
    ins, outs = x.size[-2:], tuple(sym(s) for s in val.shape)[-2:]
    if not all(s.is_Integer for s in (*ins, *outs)):
        raise LoweringError("antialiased bilinear resizing of symbolic sizes")
    (h, w), (oh, ow) = ((int(a), int(b)) for a, b in (ins, outs))
    if ow == 1 and h != oh:
        raise LoweringError("antialiased resizing of rows to a single column (eager weighs "
                            "every output row as its first)")
    dims = [(n, m, _antialias_ratio(n, m, align_corners, s))
            for n, m, s in ((h, oh, scales_h), (w, ow, scales_w))]
    if math.prod(1 if n == m else _antialias_tap_count(r) for n, m, r in dims) > \
            MAX_ANTIALIAS_TAPS:
        raise LoweringError("antialiased resizing by a large factor (too many taps a kernel)")
    size = tuple(sym(s) for s in val.shape)
    load = loader(x)

    def taps(o, n, m, ratio):
        if n == m:
            return [(o, None, None)]
        return [(ir.IndirectIndex(r, n, wraps=False), inside, weight)
                for r, inside, weight in _antialias_taps(o, n, ratio)]

    def weighted_sum(terms):
        total = None
        for read, inside, weight in terms:
            v = read()
            if inside is not None:  # (a tap outside the window adds 0, even where it reads inf)
                v = Value("where", (inside, op("mul", v, weight), constant(0, torch.float32)),
                          torch.float32)
            total = v if total is None else op("add", total, v)
        return total

    def fn(idx):
        rows, columns = (taps(o, *d) for o, d in zip(idx[-2:], dims))

        def row(r):
            return weighted_sum((lambda c=c: load([*idx[:-2], r, c]), inside, weight)
                                for c, inside, weight in columns)
        return weighted_sum((lambda r=r: row(r), inside, weight) for r, inside, weight in rows)
    return Pointwise(size, val.dtype, val.device, fn)
