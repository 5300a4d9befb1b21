"""Scans and sorts: ops that compute each element from its whole row along one dim.

Each is a `Scan` (ir.py): the kernel holds a row in one block and calls the triton_helpers
function its `scan_type` names. cummax/cummin scan (value, index) pairs as eager walks the row:
ties and NaNs take the later element, and NaN sticks. A sort is an *argsort*: Triton's
`tl.sort` sorts numbers, so each lane sorts as one int64, its value's order above its index
(which makes the sort stable: eager's stable order); the values are the input read at the sorted
indices. A sorted row gives `median` of a whole tensor. Where eager's choice among equal elements
is its sort algorithm's accident (the indices of an unstable sort of a row longer than 16), the
op falls back; topk, kthvalue, median along a dim and mode, whose indices are such an accident
too, are not lowered.
"""

from __future__ import annotations

import operator

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


def _copy_and_zeros(x: TensorIR, size: tuple) -> list:
    """(values, indices) of a row of one element: `x` itself, and 0."""
    zeros = Pointwise(size, torch.int64, x.device, lambda idx: constant(0, torch.int64))
    return [Pointwise(size, x.dtype, x.device, loader(x)), zeros]


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


def _element(x: TensorIR, at: sympy.Expr) -> Pointwise:
    """Element `at` of the 1-d `x`, as a 0-d value."""
    load = loader(x)
    return Pointwise((), x.dtype, x.device,
                     lambda idx: to_dtype(load([at]), compute_dtype(x.dtype)))


@register(aten.median.default)
def _median(lower, node, x):
    if not x.size:
        return pointwise(lower, [x], lambda a: a)
    row = sorted_values(lower, _flatten(x) if len(x.size) != 1 else x, 0)
    n = row.size[0]
    if n == 0:
        raise LoweringError("median of an empty tensor")
    middle, last = _element(row, sympy.floor((n - 1) / 2)), _element(row, n - 1)
    # NaNs sort last: any NaN makes the median NaN
    return Pointwise((), x.dtype, x.device, lambda idx: op(
        "where", op("isnan", last.fn(idx), dtype=torch.bool), last.fn(idx), middle.fn(idx)))
