"""`embedding_bag` (sum and mean bags) as a reduction over the indices.

Bag `b` holds the indices at positions `[offsets[b], offsets[b + 1])`, the last bag every
position from its offset on. Each output element `(b, d)` sums, over every position, the weight
row the index there names, times the position's sample weight, where the position is in bag
`b` and its index is not `padding_idx`; a mean divides by the count of those positions (an
empty bag is 0). Every element reads all the positions, so the op costs the indices' count
times the output's size: more than `MAX_INDICES` indices (or a symbolic count) run as the aten
op. Offsets eager refuses (the first not 0, decreasing, past the indices) fail the kernel's
index check. The aten op also runs for `max` bags (eager keeps a leading NaN but skips later
ones), for `include_last_offset` (where eager's last bag ends depends on its path: float32 sums
stop at the last offset, while their means and float64 bags go on to the last index), and where
the graph reads the op's other results (offset2bag, bag sizes, max indices: eager fills them by
rules of its own per mode and path).
"""

from __future__ import annotations

import operator
from collections.abc import Callable

import sympy
import torch

from .ir import (
    IndirectIndex,
    LoweringError,
    Pointwise,
    Reduction,
    Value,
    constant,
    index_in,
    loader,
    masked,
    op,
    to_dtype,
)
from .lowering import aten, register, sym

SUM, MEAN = 0, 1
# Indices each output element reads, at most.
MAX_INDICES = 256


@register(aten._embedding_bag_forward_only.default, aten._embedding_bag.default)
def _embedding_bag(lower, node, weight, indices, offsets, scale_grad_by_freq=False, mode=SUM,
                   sparse=False, per_sample_weights=None, include_last_offset=False,
                   padding_idx=-1):
    val = lower.node.meta["val"][0]
    if any(user.target is not operator.getitem or user.args[1] != 0 for user in node.users):
        raise LoweringError("embedding_bag's offset2bag, bag sizes or max indices are read")
    if include_last_offset:
        raise LoweringError("embedding_bag's include_last_offset (where eager's last bag ends "
                            "depends on its path: at the last offset, or at the last index)")
    if mode not in (SUM, MEAN):
        raise LoweringError("embedding_bag's max bags (eager keeps only a leading NaN)")
    if val.dtype not in (torch.float32, torch.float64) or len(indices.size) != 1 \
            or len(offsets.size) != 1:
        raise LoweringError("embedding_bag of half floats, or of indices that are not 1-d")
    count = indices.size[0]
    if not (count.is_Integer and 0 < int(count) <= MAX_INDICES):
        raise LoweringError(f"embedding_bag of {count} indices (each output would read them "
                            f"all: more than {MAX_INDICES}, or none)")
    size = tuple(sym(s) for s in val.shape)
    bags = size[0]
    cd = val.dtype
    load_weight, load_index, load_offset = loader(weight), loader(indices), loader(offsets)
    load_scale = loader(per_sample_weights) if per_sample_weights is not None else None

    def in_bag(b: sympy.Expr, p: sympy.Expr) -> Value:
        """Whether position `p` counts in bag `b`."""
        start = to_dtype(load_offset([b]), torch.int64)
        following = index_in(b + 1, bags)  # not the last bag
        end = Value("where", (following, masked(to_dtype(load_offset([b + 1]), torch.int64),
                                                following), constant(int(count), torch.int64)),
                    torch.int64)
        # offsets eager refuses (the first not 0, decreasing ones, one past the indices) read
        # the bag's start at offset -1: the kernel's index check raises, as eager does
        zero, bag = constant(0, torch.int64), Value("index", (b,), torch.int64)
        valid = None
        for fact in (op("ge", start, zero, dtype=torch.bool),
                     op("le", start, end, dtype=torch.bool),
                     op("le", end, constant(int(count), torch.int64), dtype=torch.bool),
                     op("logical_or", op("ne", bag, zero, dtype=torch.bool),
                        op("eq", start, zero, dtype=torch.bool))):
            valid = fact if valid is None else op("logical_and", valid, fact)
        checked = Value("where", (valid, bag, constant(-1, torch.int64)), torch.int64)
        start = to_dtype(load_offset([IndirectIndex(checked, offsets.size[0], wraps=False)]),
                         torch.int64)
        position = Value("index", (p,), torch.int64)
        inside = op("logical_and", op("le", start, position, dtype=torch.bool),
                    op("lt", position, end, dtype=torch.bool))
        if padding_idx is not None and padding_idx >= 0:
            inside = op("logical_and", inside, op(
                "ne", to_dtype(load_index([p]), torch.int64), constant(padding_idx, torch.int64),
                dtype=torch.bool))
        return inside

    def term(idx, ridx):
        (b, d), (p,) = idx, ridx
        inside = in_bag(b, p)
        row = IndirectIndex(to_dtype(load_index([p]), torch.int64), weight.size[0], wraps=False)
        v = to_dtype(load_weight([row, d]), cd)
        if load_scale is not None:
            v = op("mul", v, to_dtype(load_scale([p]), cd))
        return Value("where", (inside, masked(v, inside), constant(0, cd)), cd)

    def counted(idx, ridx):
        return to_dtype(in_bag(idx[0], ridx[0]), cd)

    def reduced(out_size: tuple, fn) -> Callable:
        return loader(lower.realize(Reduction(out_size, (count,), "sum", cd, val.device, fn)))
    total = reduced(size, term)
    if mode == SUM:
        out = Pointwise(size, val.dtype, val.device, total)
    else:
        n = reduced((bags,), counted)
        out = Pointwise(size, val.dtype, val.device, lambda idx: Value("where", (
            op("gt", n(idx[:1]), constant(0, cd), dtype=torch.bool),
            op("truediv", total(idx), n(idx[:1])), constant(0, cd)), cd))
    return [out, None, None, None]  # (the other results are never read: checked above)
