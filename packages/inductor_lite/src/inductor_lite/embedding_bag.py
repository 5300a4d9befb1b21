"""`embedding_bag` (sum, mean and max bags) as reductions over the indices.

Bag `b` holds the indices at positions `[offsets[b], offsets[b + 1])`, the last bag every
position from its offset on. Each output element `(b, d)` sums, over every position, the weight
row the index there names, times the position's sample weight, where the position is in bag
`b` and its index is not `padding_idx`; a mean divides by the count of those positions (an
empty bag is 0). Every element reads all the positions, so the op costs the indices' count
times the output's size: more than `MAX_INDICES` indices run as the aten op (a symbolic count
as traced, the compiled version guarded to counts up to `MAX_INDICES`). Offsets eager refuses
(the first not 0, decreasing, past the indices) fail the kernel's index check. The aten op
also runs where the graph reads a sum or mean bag's other results (offset2bag, bag sizes:
eager fills them by rules of its own per mode and path).

With `include_last_offset`, where eager's CPU kernel ends the last bag depends on its path. Its
fast path (float32, a weight whose columns are adjacent (`stride(1) == 1`), no `padding_idx`,
per-sample weights, if any, adjacent too) sums the last bag up to the last offset, but a mean
divides that sum by the count of positions up to the last index; every other path sums and
counts up to the last index, ignoring the last offset but for the check that it is not past the
indices. The kernels do the same, and refuse (the aten op runs) where the path hangs on the
stride of a size-1 dimension (free to differ between tensors of one shape), and off the CPU
(eager's CUDA kernel is another one).

A max bag follows eager's CPU loop, which goes through the bag's positions and takes a value
only if it is greater than the one it holds: the first position's value if that is NaN (no
later value is greater), else the first position holding the largest of the other values (later
NaNs are skipped, equal values keep the first). The kernels find the bag's first position, its
largest non-NaN value, and the first position holding it, then read the winner's row and index
(the max indices result); an empty bag is 0, and so is its max index. Eager's max path puts
position `p` in bag `(number of offsets <= p) - 1` (so decreasing offsets do not raise there,
and the last bag goes on to the last index with `include_last_offset` too): the kernels count
the same way.
"""
from __future__ import annotations

import math
import operator
from collections.abc import Callable

import sympy
import torch

from .ir import (
    IndirectIndex,
    LoweringError,
    Pointwise,
    Reduction,
    TensorIR,
    Value,
    constant,
    index_in,
    loader,
    masked,
    op,
    to_dtype,
)
from .lowering import aten, fits_guarded, positive, register, sym

SUM, MEAN, MAX = 0, 1, 2
# Indices each output element reads, at most.
MAX_INDICES = 256


def _index_count(lower, indices: TensorIR, offsets: TensorIR) -> sympy.Expr:
    """The number of indices, refused where a kernel cannot read them all per element."""
    if len(indices.size) != 1 or len(offsets.size) != 1:
        raise LoweringError("embedding_bag of indices that are not 1-d")
    count = indices.size[0]
    if not (positive(lower, count) and fits_guarded(lower, count, MAX_INDICES)):
        raise LoweringError(f"embedding_bag of {count} indices (each output would read them "
                            f"all: more than {MAX_INDICES}, or none)")
    return count


@register(aten._embedding_bag_forward_only.default, aten._embedding_bag.default)
def _embedding_bag(lower, node, weight, indices, offsets, scale_grad_by_freq=False, mode=SUM,
                   sparse=False, per_sample_weights=None, include_last_offset=False,
                   padding_idx=-1):
    val = lower.node.meta["val"][0]
    if mode == MAX:
        return _max_bags(lower, node, weight, indices, offsets, include_last_offset, padding_idx)
    if any(user.target is not operator.getitem or user.args[1] != 0 for user in node.users):
        raise LoweringError("embedding_bag's offset2bag, bag sizes or max indices are read")
    if val.dtype not in (torch.float32, torch.float64):
        raise LoweringError("embedding_bag's sum or mean of half floats")
    count = _index_count(lower, indices, offsets)
    size = tuple(sym(s) for s in val.shape)
    bags = size[0]
    cd = val.dtype
    load_weight, load_index, load_offset = loader(weight), loader(indices), loader(offsets)
    load_scale = loader(per_sample_weights) if per_sample_weights is not None else None
    # where the last bag's sum and its count end (see the module docstring)
    sum_end = count_end = Value("index", (count,), torch.int64)
    facts = []
    if include_last_offset:
        last_offset = to_dtype(load_offset([offsets.size[0] - 1]), torch.int64)
        facts.append(op("le", last_offset, count_end, dtype=torch.bool))
        if _eager_fast_path(lower.node, val.dtype, padding_idx):
            sum_end = last_offset

    def in_bag(b: sympy.Expr, p: sympy.Expr, last_end: Value) -> Value:
        """Whether position `p` counts in bag `b`, the last bag ending at `last_end`."""
        start = to_dtype(load_offset([b]), torch.int64)
        following = index_in(b + 1, bags)  # not the last bag
        end = Value("where", (following, masked(to_dtype(load_offset([b + 1]), torch.int64),
                                                following), last_end), torch.int64)
        # offsets eager refuses (the first not 0, decreasing ones, one past the indices) read
        # the bag's start at offset -1: the kernel's index check raises, as eager does
        zero, bag = constant(0, torch.int64), Value("index", (b,), torch.int64)
        valid = None
        for fact in (op("ge", start, zero, dtype=torch.bool),
                     op("le", start, end, dtype=torch.bool),
                     op("le", end, count_end, dtype=torch.bool),
                     op("logical_or", op("ne", bag, zero, dtype=torch.bool),
                        op("eq", start, zero, dtype=torch.bool)), *facts):
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
        inside = in_bag(b, p, sum_end)
        row = IndirectIndex(to_dtype(load_index([p]), torch.int64), weight.size[0], wraps=False)
        v = to_dtype(load_weight([row, d]), cd)
        if load_scale is not None:
            v = op("mul", v, to_dtype(load_scale([p]), cd))
        return Value("where", (inside, masked(v, inside), constant(0, cd)), cd)

    def counted(idx, ridx):
        return to_dtype(in_bag(idx[0], ridx[0], count_end), cd)

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


def _eager_fast_path(node: torch.fx.Node, dtype: torch.dtype, padding_idx: int | None) -> bool:
    """Whether eager's CPU kernel takes its fast path for a sum or mean bag with
    `include_last_offset`: refused where that cannot be told from the graph."""
    weight = node.args[0].meta["val"]
    scales = node.kwargs.get("per_sample_weights", node.args[6] if len(node.args) > 6 else None)
    if weight.device.type != "cpu":
        raise LoweringError("include_last_offset off the CPU (eager's CUDA kernel is another "
                            "one)")
    if dtype != torch.float32 or (padding_idx is not None and padding_idx >= 0):
        return False
    strided = [(weight, 1)] + ([(scales.meta["val"], 0)] if scales is not None else [])
    sizes, strides = [sym(t.shape[d]) for t, d in strided], [sym(t.stride(d)) for t, d in strided]
    if not all(n.is_Integer and int(n) > 1 and s.is_Integer for n, s in zip(sizes, strides)):
        raise LoweringError("include_last_offset where eager's path hangs on the stride of a "
                            "size-1 (or symbolic) dimension")
    return all(int(s) == 1 for s in strides)


def _max_bags(lower, node, weight, indices, offsets, include_last_offset: bool,
              padding_idx: int | None) -> list:
    """Max bags and their max indices (see the module docstring)."""
    val, max_indices = lower.node.meta["val"][0], lower.node.meta["val"][3]
    if any(user.target is not operator.getitem or user.args[1] not in (0, 3)
           for user in node.users):
        raise LoweringError("embedding_bag's offset2bag or bag sizes are read")
    if val.device.type != "cpu":
        raise LoweringError("max bags off the CPU (eager's CUDA kernel is another one)")
    n = _index_count(lower, indices, offsets)
    size = tuple(sym(s) for s in val.shape)
    bags = size[0]
    if not positive(lower, bags):
        raise LoweringError("max bags of no bags")
    device, wd = val.device, val.dtype
    cd = torch.float64 if wd == torch.float64 else torch.float32  # exact: values only compared
    load_weight, load_index, load_offset = loader(weight), loader(indices), loader(offsets)
    zero, last = constant(0, torch.int64), Value("index", (n,), torch.int64)

    def le(a: Value, b: Value) -> Value:
        return op("le", a, b, dtype=torch.bool)

    def starts_by(idx, ridx):
        """Whether bag `k`'s offset is at or before position `p`. An offset eager refuses (the
        first not 0, one outside [0, count], a last one past the indices) reads offset -1
        instead: the kernel's index check raises, as eager does."""
        (p,), (k,) = idx, ridx
        start = to_dtype(load_offset([k]), torch.int64)
        valid = op("logical_and", op("logical_and", le(zero, start), le(start, last)),
                   le(to_dtype(load_offset([offsets.size[0] - 1]), torch.int64), last))
        first = Value("index", (k,), torch.int64)
        valid = op("logical_and", valid, op("logical_or", op("ne", first, zero, dtype=torch.bool),
                                            op("eq", start, zero, dtype=torch.bool)))
        checked = Value("where", (valid, first, constant(-1, torch.int64)), torch.int64)
        start = to_dtype(load_offset([IndirectIndex(checked, offsets.size[0], wraps=False)]),
                         torch.int64)
        return to_dtype(le(start, Value("index", (p,), torch.int64)), torch.int64)
    bag_of = loader(lower.realize(Reduction((n,), (bags,), "sum", torch.int64, device,
                                            starts_by)))

    def inside(b: sympy.Expr, p: sympy.Expr) -> Value:
        """Whether position `p` counts in bag `b`."""
        here = op("eq", op("sub", bag_of([p]), constant(1, torch.int64)),
                  Value("index", (b,), torch.int64), dtype=torch.bool)
        if padding_idx is not None and padding_idx >= 0:
            here = op("logical_and", here, op(
                "ne", to_dtype(load_index([p]), torch.int64), constant(padding_idx, torch.int64),
                dtype=torch.bool))
        return here

    def row(p) -> IndirectIndex:
        return IndirectIndex(to_dtype(load_index([p]), torch.int64), weight.size[0], wraps=False)

    def reduced(out_size: tuple, kind: str, dtype: torch.dtype, fn) -> Callable:
        return loader(lower.realize(Reduction(out_size, (n,), kind, dtype, device, fn)))

    def position_if(condition: Value, p: sympy.Expr) -> Value:
        return Value("where", (condition, Value("index", (p,), torch.int64), last), torch.int64)
    first = reduced((bags,), "min", torch.int64, lambda idx, ridx: position_if(
        inside(idx[0], ridx[0]), ridx[0]))

    def value_at(p, d, condition: Value) -> Value:
        return to_dtype(masked(load_weight([row(p), d]), condition), cd)

    def largest_term(idx, ridx):
        (b, d), (p,) = idx, ridx
        here = inside(b, p)
        v = value_at(p, d, here)
        counts = op("logical_and", here, op("eq", v, v, dtype=torch.bool))  # not NaN
        return Value("where", (counts, v, constant(-math.inf, cd)), cd)
    largest = reduced(size, "max", cd, largest_term)

    def winner_term(idx, ridx):
        (b, d), (p,) = idx, ridx
        here = inside(b, p)
        return position_if(op("logical_and", here, op(
            "eq", value_at(p, d, here), largest(idx), dtype=torch.bool)), p)
    winner = reduced(size, "min", torch.int64, winner_term)

    def chosen(idx) -> tuple[IndirectIndex, Value]:
        """The winning position of output `(b, d)` (0 for an empty bag), and whether the bag
        has one."""
        start = first(idx[:1])
        filled = op("lt", start, last, dtype=torch.bool)
        start = Value("where", (filled, start, zero), torch.int64)
        leading = to_dtype(load_weight([row(IndirectIndex(start, n, wraps=False)), idx[1]]), cd)
        p = Value("where", (op("ne", leading, leading, dtype=torch.bool), start,
                            winner(idx)), torch.int64)
        return IndirectIndex(Value("where", (filled, p, zero), torch.int64), n, wraps=False), \
            filled

    def out(idx):
        p, filled = chosen(idx)
        return Value("where", (filled, load_weight([row(p), idx[1]]), constant(0, wd)), wd)

    def max_index(idx):
        p, filled = chosen(idx)
        return Value("where", (filled, to_dtype(load_index([p]), max_indices.dtype),
                               constant(0, max_indices.dtype)), max_indices.dtype)
    return [Pointwise(size, wd, device, out), None, None,
            Pointwise(size, max_indices.dtype, device, max_index)]
