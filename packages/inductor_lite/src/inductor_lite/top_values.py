"""topk and kthvalue when only their values are read: a slice of a sorted row.

Which of equal elements' index eager returns is its selection algorithm's accident, but the
values are not: the k largest (or smallest) of a row in order, NaN above every number, are the
first k of the row sorted descending (ascending), and the k-th smallest is at k - 1 of the
ascending row. So where nothing reads the indices, the row is argsorted (scans_and_sorts.py's
stable sort) and its values read at the first k positions. One choice is left: among tied
zeros, which sign comes first (eager's order of equal elements, so its signs, follows its
algorithm; here it is the input's order). The values are equal either way. Refused (aten runs):
a graph that reads the indices, `sorted=False` with k > 1 (eager's order is then its
algorithm's), rows longer than 4096, k out of range (for a symbolic row length: as traced,
guarded), 0-d inputs and the dtypes the sort key does not hold (64-bit, bool).
"""

from __future__ import annotations

import sympy
import torch

from . import scans_and_sorts as sorts  # read at lowering time: it imports lowering.py too
from .ir import Index, LoweringError, Pointwise, TensorIR, Value
from .lowering import GraphLowering, register

aten = torch.ops.aten


def _sorted_row(lower: GraphLowering, node: torch.fx.Node, x: TensorIR, k: int, dim: int,
                descending: bool) -> tuple[Pointwise, int]:
    """`x` sorted along `dim` (and `dim` made non-negative), where the graph reads only the
    values of `node` and element `k` (from 1) of a row exists."""
    if sorts._uses_output(node, 1):
        raise LoweringError("the indices among equal elements are eager's algorithm's accident")
    if not x.size or x.dtype == torch.bool:
        raise LoweringError(f"top values of a {len(x.size)}-d {x.dtype} tensor")
    dim %= len(x.size)
    n = x.size[dim]
    if not isinstance(k, int) or k < 1 or not _at_most(lower, k, n):
        raise LoweringError(f"element {k} of a row of {n}")
    return sorts._gathered(x, sorts.argsort(lower, x, dim, descending), dim), dim


def _at_most(lower: GraphLowering, k: int, n: sympy.Expr) -> bool:
    """Whether a row of length `n` holds `k` elements; for a symbolic length, as traced, and
    guarded so (a shorter row at a later call gets a version of its own: eager's error)."""
    if n.is_number:
        return k <= int(n)
    shape_env = getattr(lower.gm, "shape_env", None)
    return hasattr(shape_env, "evaluate_expr") and bool(shape_env.evaluate_expr(sympy.Le(k, n)))


@register(aten.topk.default)
def _topk(lower, node, x, k, dim=-1, largest=True, sorted=True):
    if not sorted and k != 1:
        raise LoweringError("the order of topk(sorted=False) is eager's algorithm's")
    row, dim = _sorted_row(lower, node, x, k, dim, largest)
    size = (*x.size[:dim], sympy.Integer(k), *x.size[dim + 1:])
    return [Pointwise(size, x.dtype, x.device, row.fn), None]  # nothing reads the indices


@register(aten.kthvalue.default)
def _kthvalue(lower, node, x, k, dim=-1, keepdim=False):
    row, dim = _sorted_row(lower, node, x, k, dim, False)
    size = (*x.size[:dim], *((sympy.Integer(1),) if keepdim else ()), *x.size[dim + 1:])

    def value(idx: Index) -> Value:
        rest = [*idx[:dim], *idx[dim + 1:]] if keepdim else list(idx)
        return row.fn([*rest[:dim], sympy.Integer(k - 1), *rest[dim:]])
    return [Pointwise(size, x.dtype, x.device, value), None]  # nothing reads the indices
