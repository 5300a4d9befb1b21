"""Pairwise distances (`cdist`, `pdist`) as reductions over the vectors' elements.

Each output is one pair of rows; its p-norm distance is a sum of `|a - b| ** p` over the
elements (a count of the differing elements for p = 0, a max for p = inf), and a root after. A
pair of `pdist` is its place in the upper triangle of row pairs, `(i, j)` with `i < j` in
row-major order: the row `i` comes from the closed-form root of the triangle's size, corrected
by one either way in integer arithmetic (the float root may round across a row's start).
`cdist`'s Euclidean case with eager's matrix-product form (`|a|^2 + |b|^2 - 2ab`, for more than
25 rows) rounds differently from the direct sum: it runs as the aten op.
"""

from __future__ import annotations

import math
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
    loader,
    op,
    to_dtype,
)
from .lowering import aten, register, sym


def _distance(lower, size: tuple, rsize: sympy.Expr, p: float, dtype: torch.dtype,
              device: torch.device, difference: Callable) -> Pointwise:
    """The p-norm over `rsize` elements of `difference(idx, r)` for each index of `size`."""
    if dtype not in (torch.float32, torch.float64):
        raise LoweringError("a distance of half floats (eager's CPU refuses them)")
    if p < 0 or math.isnan(p):
        raise LoweringError("a distance of a negative p (eager refuses it)")
    if rsize == 0:
        raise LoweringError("a distance between empty vectors")
    kind = "max" if math.isinf(p) else "sum"

    def term(idx, ridx):
        d = op("abs", difference(idx, ridx[0]))
        if p == 0:
            return to_dtype(op("ne", d, constant(0, dtype), dtype=torch.bool), dtype)
        if p == 1 or math.isinf(p):
            return d
        if p == 2:
            return op("mul", d, d)
        return op("pow", d, constant(p, dtype))
    total = loader(lower.realize(Reduction(size, (rsize,), kind, dtype, device, term)))

    def root(idx):
        v = total(idx)
        if p == 2:
            return op("sqrt", v)
        if p in (0, 1) or math.isinf(p):
            return v
        return op("pow", v, constant(1 / p, dtype))
    return Pointwise(size, dtype, device, root)


@register(aten._cdist_forward.default)
def _cdist(lower, node, x1, x2, p, compute_mode=None):
    val = lower.node.meta["val"]
    rows1, rows2 = x1.size[-2], x2.size[-2]
    if p == 2 and (compute_mode == 1 or (compute_mode in (None, 0) and not (
            rows1.is_Integer and rows2.is_Integer and rows1 <= 25 and rows2 <= 25))):
        raise LoweringError("cdist's Euclidean matrix-product form (eager's rounding)")
    if not (len(x1.size) == len(x2.size) and tuple(x1.size[:-2]) == tuple(x2.size[:-2])):
        raise LoweringError("cdist of batches that broadcast")
    size = tuple(sym(s) for s in val.shape)
    load1, load2 = loader(x1), loader(x2)

    def difference(idx, r):
        *batch, i, j = idx
        return op("sub", load1([*batch, i, r]), load2([*batch, j, r]))
    return _distance(lower, size, x1.size[-1], float(p), val.dtype, val.device, difference)


@register(aten._pdist_forward.default)
def _pdist(lower, node, x, p=2):
    val = lower.node.meta["val"]
    n = x.size[0]
    if len(x.size) != 2 or not n.is_Integer:
        raise LoweringError("pdist of symbolic rows (the pair's row is found in floats)")
    size = tuple(sym(s) for s in val.shape)
    load = loader(x)
    n = int(n)

    def pair(k: Value) -> tuple[Value, Value]:
        """Pair `k` as rows `(i, j)`: row i's pairs start at `i * (2n - i - 1) / 2`."""
        def start(i):
            twice = op("mul", i, op("sub", constant(2 * n - 1, torch.int64), i))
            return op("floordiv", twice, constant(2, torch.int64))
        b = n - 0.5
        guess = op("floor", op("sub", constant(b, torch.float64), op("sqrt", op(
            "sub", constant(b * b, torch.float64),
            op("mul", constant(2, torch.float64), to_dtype(k, torch.float64))))))
        i = op("minimum", op("maximum", to_dtype(guess, torch.int64), constant(0, torch.int64)),
               constant(n - 2, torch.int64))
        one = constant(1, torch.int64)
        i = Value("where", (op("le", start(op("add", i, one)), k, dtype=torch.bool),
                            op("add", i, one), i), torch.int64)
        i = Value("where", (op("gt", start(i), k, dtype=torch.bool), op("sub", i, one), i),
                  torch.int64)
        return i, op("add", op("add", op("sub", k, start(i)), i), one)

    def difference(idx, r):
        i, j = pair(Value("index", (idx[0],), torch.int64))
        return op("sub", load([IndirectIndex(i, x.size[0], wraps=False), r]),
                  load([IndirectIndex(j, x.size[0], wraps=False), r]))
    return _distance(lower, size, x.size[1], float(p), val.dtype, val.device, difference)
