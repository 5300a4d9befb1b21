"""`nonzero_static`: the indices of the first `size` nonzero elements, as a scan and a search.

Its result has a static shape, `(size, x.dim())`: row `i` holds the index of the `i`-th nonzero
element of `x` in row-major order, or `fill_value` in each column past the last one. The running
count of nonzero elements of the flattened input (a scan) rises by one exactly at each nonzero
element, so the `i`-th one sits where the count first reaches `i + 1`: a binary search of the
counts (searching.py's) for each row, which finds the element count where there is none. The
position found is unraveled into the input's dims. NaNs are nonzero, `-0.0` is zero, as in
eager. An input of symbolic size, or longer than a scan's block, runs as the aten op.
"""

from __future__ import annotations

import sympy
import torch

from .ir import (
    LoweringError,
    Pointwise,
    Value,
    constant,
    contiguous_strides,
    loader,
    op,
    to_dtype,
)
from .lowering import _flatten, aten, compute_dtype, register, scan_buffer, sym
from .searching import _binary_search


@register(aten.nonzero_static.default)
def _nonzero_static(lower, node, x, *, size, fill_value=-1):
    val = lower.node.meta["val"]
    out_size = tuple(sym(s) for s in val.shape)
    if not all(s.is_Integer for s in (*out_size, *x.size)):
        raise LoweringError("nonzero_static of a symbolic size")
    i64, device, rank = torch.int64, val.device, len(x.size)
    fill = constant(fill_value, i64)
    numel = int(sympy.Mul(*x.size))
    if rank == 0 or numel == 0 or int(size) == 0:  # no index to compute
        return Pointwise(out_size, i64, device, lambda idx: fill)
    flat = _flatten(x)
    cd = compute_dtype(x.dtype)

    def nonzero(idx) -> Value:
        return to_dtype(op("ne", to_dtype(flat.fn(idx), cd), constant(0, cd),
                           dtype=torch.bool), i64)

    counts = Pointwise((sympy.Integer(numel),), i64, device, nonzero) if numel == 1 else \
        scan_buffer(lower, (sympy.Integer(numel),), 0, "sum", i64, device, nonzero)
    wanted = Pointwise((out_size[0],), i64, device,
                       lambda idx: Value("index", (idx[0] + 1,), i64))
    load_position = loader(lower.realize(_binary_search(lower, wanted, counts, right=False)))
    strides = contiguous_strides(x.size)

    def index(i: sympy.Expr, d: int) -> Value:
        """Row `i`'s index along dim `d`."""
        position = load_position([i])
        digit = op("floordiv", position, constant(int(strides[d]), i64))
        if d > 0:
            digit = op("remainder", digit, constant(int(x.size[d]), i64))
        return Value("where", (op("lt", position, constant(numel, i64), dtype=torch.bool),
                               digit, fill), i64)

    return Pointwise(out_size, i64, device, lambda idx: _by_column(idx, rank, index))


def _by_column(idx, rank: int, column) -> Value:
    """`column(i, d)` at the output index `(i, j)`: a kernel's column `j` is a variable, so
    the value is a chain of `where`s over the `rank` columns."""
    i, j = idx
    out = column(i, rank - 1)
    for d in reversed(range(rank - 1)):
        out = Value("where", (op("eq", Value("index", (j,), torch.int64),
                                 constant(d, torch.int64), dtype=torch.bool),
                              column(i, d), out), torch.int64)
    return out
