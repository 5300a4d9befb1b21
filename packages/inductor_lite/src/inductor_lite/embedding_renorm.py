"""`embedding_renorm` (the `max_norm` of `embedding` and `embedding_bag`) as a pointwise kernel
over the weight's rows.

Eager's CPU kernel goes through the distinct indices and, for each row one names, takes the
row's `norm_type` norm (`at::norm`, in the weight's dtype, read as a double) and, where it is
above `max_norm`, multiplies the row by `max_norm / (norm + 1e-7)` (computed in double, then
rounded to the weight's dtype). Here every row `r` computes whether some index names it (an
`any` over all the indices: duplicates count once, and a negative index names row
`r - rows`, as eager's `self[index]` does) and its norm (a reduction over the row, summed in
another order than eager's: equal within rounding, not bit for bit), then keeps or scales
itself. An index outside `[-rows, rows)` fails the kernel's index check, as eager raises.
Each row reads every index, so more than `MAX_INDICES` indices (or a symbolic count) run as
the aten op, and so do half-precision weights (whose norm eager rounds to half before it
compares).
"""

from __future__ import annotations

import sympy
import torch

from .ir import (
    IndirectIndex,
    LoweringError,
    Pointwise,
    Reduction,
    Value,
    constant,
    loader,
    op,
    to_dtype,
)
from .lowering import aten, norm_kind, norm_root, norm_term, register

# Indices each row of the weight reads, at most.
MAX_INDICES = 1024


@register(aten.embedding_renorm.default)
def _embedding_renorm(lower, node, weight, indices, max_norm, norm_type):
    val = lower.node.meta["val"]
    if val.dtype not in (torch.float32, torch.float64):
        raise LoweringError(f"embedding_renorm of {val.dtype}")
    if len(weight.size) != 2 or not indices.size or \
            indices.dtype not in (torch.int32, torch.int64):
        raise LoweringError("embedding_renorm of a weight not 2-d or indices 0-d or not int")
    count = sympy.Mul(*indices.size)
    if not (count.is_Integer and 0 < int(count) <= MAX_INDICES):
        raise LoweringError(f"embedding_renorm of {count} indices (each row would read them "
                            f"all: more than {MAX_INDICES}, or none)")
    if not all(isinstance(v, (int, float)) for v in (max_norm, norm_type)):
        raise LoweringError("embedding_renorm of a symbolic max_norm or norm_type")
    rows, width = weight.size
    wd, device, p = val.dtype, val.device, float(norm_type)
    load_weight, load_index = loader(weight), loader(indices)
    n = Value("index", (rows,), torch.int64)

    def wrapped(index: Value) -> Value:  # a negative index counts from the end
        return Value("where", (op("lt", index, constant(0, torch.int64), dtype=torch.bool),
                               op("add", index, n), index), torch.int64)

    def names_row(idx, ridx):
        """Whether the index at `ridx` names row `idx[0]`; an index out of range reads the
        indices at -1 instead, which fails the kernel's index check."""
        index = wrapped(to_dtype(load_index(list(ridx)), torch.int64))
        inside = op("logical_and", op("ge", index, constant(0, torch.int64), dtype=torch.bool),
                    op("lt", index, n, dtype=torch.bool))
        first = Value("where", (inside, Value("index", (ridx[0],), torch.int64),
                                constant(-1, torch.int64)), torch.int64)
        checked = [IndirectIndex(first, indices.size[0], wraps=False), *ridx[1:]]
        named = wrapped(to_dtype(load_index(checked), torch.int64))
        return op("eq", named, Value("index", (idx[0],), torch.int64), dtype=torch.bool)
    named = loader(lower.realize(Reduction((rows,), tuple(indices.size), "any", torch.bool,
                                           device, names_row)))

    kind = norm_kind(p)
    if kind != "sum" and width == 0:
        raise LoweringError("embedding_renorm's inf-norm of rows of no elements")
    total = loader(lower.realize(Reduction(
        (rows,), (width,), kind, wd, device,
        lambda idx, ridx: norm_term(load_weight([idx[0], ridx[0]]), p))))

    def renormed(idx):
        w, row_norm = load_weight(idx), to_dtype(norm_root(total([idx[0]]), p), torch.float64)
        limit = constant(float(max_norm), torch.float64)
        over = op("logical_and", named([idx[0]]), op("gt", row_norm, limit, dtype=torch.bool))
        scale = to_dtype(op("truediv", limit, op("add", row_norm, constant(1e-7, torch.float64))),
                         wd)
        return Value("where", (over, op("mul", w, scale), w), wd)
    return Pointwise((rows, width), wd, device, renormed)
