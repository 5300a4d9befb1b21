"""Scans and sorts: ops that compute each element from its whole row along one dim.

Each is a `Scan` (ir.py): the kernel holds a row in one block and calls the triton_helpers
function its `scan_type` names. cummax/cummin scan (value, index) pairs as eager walks the row:
ties and NaNs take the later element, and NaN sticks. A sort is an *argsort*: Triton's
`tl.sort` sorts numbers, so each lane sorts as one int64, its value's order above its index
(which makes the sort stable: eager's stable order); the values are the input read at the sorted
indices. A sorted row gives its median: the middle element, or for `nanmedian` the middle of
the elements that are not NaN (NaNs sort last), read at their count. Where eager's choice among
equal elements is its sort algorithm's accident (the indices of an unstable sort of a row longer
than 16, of a median along a dim), the op falls back (topk and kthvalue whose indices nothing
reads: top_values.py; mode, whose index eager's insertion sort decides: selection_indices.py).
"""

from __future__ import annotations

import operator
from collections.abc import Callable

import sympy
import torch

from . import ir
from .ir import Index, LoweringError, Pointwise, TensorIR, Value, constant, loader, op, to_dtype
from .lowering import (
    GraphLowering,
    _flatten,
    compute_dtype,
    pointwise,
    register,
    scan_buffer,
)

aten = torch.ops.aten

SORT_LIMIT = 4096  # the longest row sorted in one block (triton_helpers.SORT_BLOCK)
# CPU eager's unstable sort (std::sort) is an insertion sort up to 16 elements: stable there
STABLE_UNSTABLE_SORT = 16
# what the sort key holds exactly: 32 bits at most
SORTABLE = {torch.float32, torch.float16, torch.bfloat16, torch.int32, torch.int16, torch.int8,
            torch.uint8, torch.bool}


def _uses_output(node: torch.fx.Node, item: int) -> bool:
    """Whether anything reads output `item` of a node that returns several."""
    return any(u.target is operator.getitem and u.args[1] == item and u.users
               for u in node.users)


def zero_indices(size: tuple, device: torch.device) -> Pointwise:
    """The indices into rows of one element: 0 everywhere."""
    return Pointwise(size, torch.int64, device, lambda idx: constant(0, torch.int64))


def _copy_and_zeros(x: TensorIR, size: tuple) -> list:
    """(values, indices) of a row of one element: `x` itself, and 0."""
    return [Pointwise(size, x.dtype, x.device, loader(x)), zero_indices(size, x.device)]


def _gathered(x: TensorIR, indices: TensorIR, dim: int) -> Pointwise:
    """`x` read along `dim` at `indices` (of `x`'s size)."""
    load, load_index = loader(x), loader(indices)

    def fn(idx: Index) -> Value:
        at = list(idx)
        at[dim] = ir.IndirectIndex(load_index(idx), x.size[dim], False)
        return to_dtype(load(at), compute_dtype(x.dtype))
    return Pointwise(x.size, x.dtype, x.device, fn)


def argsort(lower: GraphLowering, x: TensorIR, dim: int, descending: bool) -> TensorIR:
    """The indices that sort `x` along `dim` stably (NaN last, or first when descending)."""
    if x.dtype not in SORTABLE:
        raise LoweringError(f"a sort of {x.dtype} (the sort key holds 32 bits)")
    if x.size[dim] == 1:  # a sorted row of one element: a scan kernel needs a longer row
        return zero_indices(x.size, x.device)
    kind = "argsort_descending" if descending else "argsort"
    return scan_buffer(lower, x.size, dim, kind, torch.int64, x.device, loader(x),
                       limit=SORT_LIMIT)


def sorted_values(lower: GraphLowering, x: TensorIR, dim: int) -> TensorIR:
    """`x` sorted along `dim`, ascending."""
    return _gathered(x, argsort(lower, x, dim, False), dim)


@register(aten.sort.default, aten.sort.stable)
def _sort(lower, node, x, *args, **kwargs):
    stable, dim, descending = _sort_arguments(node.target, args, kwargs)
    if not x.size:
        return _copy_and_zeros(x, ())
    dim %= len(x.size)
    if x.size[dim] == 1:
        return _copy_and_zeros(x, x.size)
    if not stable and _uses_output(node, 1) and not (
            x.size[dim].is_number and int(x.size[dim]) <= STABLE_UNSTABLE_SORT):
        raise LoweringError("the indices of an unstable sort of a row longer than 16: "
                            "which of equal elements comes first is std::sort's accident")
    indices = argsort(lower, x, dim, descending)
    return [_gathered(x, indices, dim), indices]


def _sort_arguments(target, args: tuple, kwargs: dict) -> tuple[bool, int, bool]:
    """(stable, dim, descending) of `sort.default(x, dim=-1, descending=False)` or
    `sort.stable(x, *, stable=None, dim=-1, descending=False)`."""
    if target is aten.sort.default:
        names = dict(zip(("dim", "descending"), args)) | kwargs
        return False, names.get("dim", -1), names.get("descending", False)
    return bool(kwargs.get("stable")), kwargs.get("dim", -1), kwargs.get("descending", False)


@register(aten.cummax.default, aten.cummin.default)
def _cummax(lower, node, x, dim):
    kind = "cummax" if node.target is aten.cummax.default else "cummin"
    if x.dtype == torch.bool or x.dtype.is_complex:
        raise LoweringError(f"{kind} of {x.dtype}")
    if not x.size:
        return _copy_and_zeros(x, ())
    dim %= len(x.size)
    if x.size[dim] == 1:
        return _copy_and_zeros(x, x.size)
    load = loader(x)
    return [scan_buffer(lower, x.size, dim, kind, x.dtype, x.device, load),
            scan_buffer(lower, x.size, dim, kind + "_index", torch.int64, x.device, load)]


@register(aten.logcumsumexp.default)
def _logcumsumexp(lower, node, x, dim):
    if x.dtype != torch.float32:
        raise LoweringError(f"logcumsumexp of {x.dtype} (eager's rounding of it)")
    if not x.size or x.size[dim % len(x.size)] == 1:
        return pointwise(lower, [x], lambda a: a)
    dim %= len(x.size)
    return scan_buffer(lower, x.size, dim, "logcumsumexp", x.dtype, x.device, loader(x))


def _medians(lower: GraphLowering, x: TensorIR, dim: int, skip_nan: bool
             ) -> Callable[[Index], Value]:
    """The median (the lower of the two middle elements) of each row of `x` along `dim`, as a
    function of an index over `x`'s other dims. A row holding a NaN has a NaN median (NaNs sort
    last); with `skip_nan`, its NaNs are left out instead: the median of its `count` other
    elements is at `(count - 1) // 2` of the sorted row (a row of NaNs only: its first, NaN)."""
    n = x.size[dim]
    if n == 0:
        raise LoweringError("the median of an empty row")
    row, load, cd = sorted_values(lower, x, dim), loader(x), compute_dtype(x.dtype)

    def at(idx: Index, position: sympy.Expr) -> list:
        return [*idx[:dim], position, *idx[dim:]]
    if not skip_nan:
        def median(idx: Index) -> Value:
            last, middle = row.fn(at(idx, n - 1)), row.fn(at(idx, sympy.floor((n - 1) / 2)))
            return op("where", op("isnan", last, dtype=torch.bool), last, middle)
        return median
    size = tuple(s for d, s in enumerate(x.size) if d != dim)

    def present(idx: Index, ridx: Index) -> Value:
        nan = op("isnan", to_dtype(load(at(idx, ridx[0])), cd), dtype=torch.bool)
        return to_dtype(op("logical_not", nan), torch.int32)
    count = loader(lower.realize(ir.Reduction(size, (n,), "sum", torch.int32, x.device,
                                              present)))

    def nan_median(idx: Index) -> Value:
        # (count - 1) // 2 as (count + 1) // 2 - 1, at least 0 (the count is at most n)
        c = count(idx)
        half = op("floordiv", op("add", c, constant(1, torch.int32)), constant(2, torch.int32))
        position = op("maximum", op("sub", half, constant(1, torch.int32)),
                      constant(0, torch.int32))
        return row.fn(at(idx, ir.IndirectIndex(to_dtype(position, torch.int64), n, False)))
    return nan_median


def _skips_nan(node: torch.fx.Node, x: TensorIR) -> bool:
    """Whether a (nan)median leaves NaNs out: nanmedian of floats (integers hold none)."""
    return node.target in (aten.nanmedian.default, aten.nanmedian.dim) and \
        x.dtype.is_floating_point


@register(aten.median.default, aten.nanmedian.default)
def _median(lower, node, x):
    if not x.size:
        return pointwise(lower, [x], lambda a: a)
    median = _medians(lower, _flatten(x) if len(x.size) != 1 else x, 0, _skips_nan(node, x))
    return Pointwise((), x.dtype, x.device, lambda idx: median([]))


@register(aten.median.dim, aten.nanmedian.dim)
def _median_dim(lower, node, x, dim=-1, keepdim=False):
    """Medians along a dim where only their values are read: which of equal elements' index
    eager returns is its algorithm's accident (in a row of one element: 0)."""
    if not x.size:
        return _copy_and_zeros(x, ())
    dim %= len(x.size)
    size = tuple(s if d != dim else sympy.Integer(1) for d, s in enumerate(x.size))
    if not keepdim:
        size = size[:dim] + size[dim + 1:]

    def kept(idx: Index) -> list:  # the index over x's other dims
        return list(idx[:dim]) + list(idx[dim + 1:]) if keepdim else list(idx)
    if x.size[dim] == 1:
        load = loader(x)
        values = Pointwise(size, x.dtype, x.device, lambda idx: to_dtype(
            load([*kept(idx)[:dim], sympy.Integer(0), *kept(idx)[dim:]]), compute_dtype(x.dtype)))
        return [values, zero_indices(size, x.device)]
    if _uses_output(node, 1):
        raise LoweringError("the indices of a median along a dim: which of equal elements "
                            "comes first is eager's algorithm's accident")
    median = _medians(lower, x, dim, _skips_nan(node, x))
    values = Pointwise(size, x.dtype, x.device, lambda idx: median(kept(idx)))
    return [values, None]  # nothing reads the indices
