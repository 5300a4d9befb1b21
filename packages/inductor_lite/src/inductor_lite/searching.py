"""Searches of sorted sequences: `bucketize` and `searchsorted` as a binary search in kernels.

Every lane runs eager's binary search in lockstep: the range `[lo, hi)` of a row of the
boundaries starts as the whole row, and each step reads the boundary at `mid = lo + (hi - lo) // 2`
and keeps the half that holds the answer. A search of `n` boundaries takes at most
`n.bit_length()` steps (a symbolic `n` takes the steps of its size when traced, the compiled
version guarded to `n` below the next power of 2); a lane whose range is already empty stands
still. The steps are eager's very comparisons (`!(b >= v)` goes right,
`!(b > v)` for `right=True`), so NaNs and boundaries out of order land where eager puts them, not
merely where a sorted input would. Each step's `lo` and `hi` are buffers (the scheduler fuses
them into one kernel), so the loop body of a step reads the last one's and stays small.
"""

from __future__ import annotations

import torch

from .ir import (
    IndirectIndex,
    LoweringError,
    Pointwise,
    Value,
    constant,
    loader,
    masked,
    op,
    to_dtype,
)
from .lowering import aten, compute_dtype, fits_guarded, register, sym


def _binary_search(lower, values, boundaries, right: bool, sorter=None) -> Pointwise:
    """For each element of `values`, the count of boundaries of its row that the search puts
    before it (eager's `lower_bound`, or `upper_bound` when `right`), as int64. `boundaries`
    is 1-d, or has the leading dims of `values` (a row per element's leading index);
    `sorter` holds the order of each row's elements (`boundaries[sorter]` is sorted)."""
    if values.dtype != boundaries.dtype or values.dtype == torch.bool:
        raise LoweringError("a search of mixed dtypes or of bools (eager promotes or refuses)")
    n = boundaries.size[-1]
    # steps for up to `2**steps - 1` boundaries (more are harmless: an empty range stands still)
    steps = int(n.xreplace(lower.size_hints)).bit_length() if n.free_symbols <= set(
        lower.size_hints) else None
    if steps is None or not fits_guarded(lower, n, 2**steps - 1):
        raise LoweringError("a search of a number of boundaries not known when traced")
    cd = compute_dtype(values.dtype)
    load_value, load_boundary = loader(values), loader(boundaries)
    load_order = loader(sorter) if sorter is not None else None
    size, device = values.size, values.device
    one_row = len(boundaries.size) == 1

    def step(lo_hi, idx):
        lo, hi = (load(idx) if callable(load) else load for load in lo_hi)
        active = op("lt", lo, hi, dtype=torch.bool)
        mid = op("add", lo, op("floordiv", op("sub", hi, lo), constant(2, torch.int64)))
        row = [] if one_row else list(idx[:-1])
        position = IndirectIndex(mid, n, wraps=False)
        if load_order is not None:
            position = IndirectIndex(to_dtype(load_order([*row, position]), torch.int64), n,
                                     wraps=False)
        b = masked(to_dtype(load_boundary([*row, position]), cd), active)
        v = to_dtype(load_value(idx), cd)
        before = op("logical_not", op("gt" if right else "ge", b, v, dtype=torch.bool))
        go_right = op("logical_and", active, before)
        new_lo = Value("where", (go_right, op("add", mid, constant(1, torch.int64)), lo),
                       torch.int64)
        new_hi = Value("where", (op("logical_and", active, op("logical_not", before)), mid,
                                 hi), torch.int64)
        return new_lo, new_hi

    lo_hi = (constant(0, torch.int64), Value("index", (n,), torch.int64))
    for _ in range(steps - 1):
        lo_hi = tuple(loader(lower.realize(Pointwise(
            size, torch.int64, device, lambda idx, k=k, state=lo_hi: step(state, idx)[k])))
            for k in range(2))
    if steps == 0:
        return Pointwise(size, torch.int64, device, lambda idx: constant(0, torch.int64))
    return Pointwise(size, torch.int64, device, lambda idx: step(lo_hi, idx)[0])


def _as_result(lower, found: Pointwise) -> Pointwise:
    """`found` in the node's result dtype (int32 with `out_int32`)."""
    val = lower.node.meta["val"]
    if tuple(sym(s) for s in val.shape) != tuple(found.size):
        raise LoweringError("a search whose result is not of its values' shape")
    return Pointwise(found.size, val.dtype, val.device,
                     lambda idx: to_dtype(found.fn(idx), val.dtype))


@register(aten.bucketize.Tensor)
def _bucketize(lower, node, values, boundaries, *, out_int32=False, right=False):
    if len(boundaries.size) != 1:
        raise LoweringError("bucketize into boundaries that are not 1-d (eager refuses them)")
    return _as_result(lower, _binary_search(lower, values, boundaries, right))


@register(aten.searchsorted.Tensor)
def _searchsorted(lower, node, sorted_sequence, values, *, out_int32=False, right=False,
                  side=None, sorter=None):
    if side is not None:
        if side not in ("left", "right") or (side == "left" and right):
            raise LoweringError(f"searchsorted's side={side!r} with right={right}: eager refuses")
        right = side == "right"
    leading = tuple(sorted_sequence.size[:-1])
    if leading and (len(sorted_sequence.size) != len(values.size)
                    or leading != tuple(values.size[:-1])):
        raise LoweringError("searchsorted with rows other than the values' (eager refuses)")
    if sorter is not None and (tuple(sorter.size) != tuple(sorted_sequence.size)
                               or sorter.dtype != torch.int64):
        raise LoweringError("a sorter not of int64 or not of the sequence's shape")
    return _as_result(lower, _binary_search(lower, values, sorted_sequence, right, sorter))
