"""`_trilinear` (what `F.bilinear` computes: `x1 @ W @ x2` per output feature) as a reduction.

`_trilinear(i1, i2, i3, expand1, expand2, expand3, sumdim)` unsqueezes each input at its
`expand` dims to one rank, broadcasts the three, multiplies them and sums over `sumdim`: one
`Reduction` whose body loads the three factors (a broadcast dim read at 0) and multiplies them
in that order. Eager contracts with matrix products instead, so sums agree to rounding.
"""

from __future__ import annotations

from collections.abc import Sequence

import sympy
import torch

from .ir import (
    Index,
    LoweringError,
    Pointwise,
    Reduction,
    TensorIR,
    Value,
    loader,
    op,
    to_dtype,
)
from .lowering import aten, register, sym


def _unsqueezed(t: TensorIR, expand: Sequence[int], rank: int) -> tuple[list, list[int]]:
    """`t`'s sizes with 1s inserted at `expand` (of `rank` dims), and which of those dims are
    `t`'s own."""
    own = [d for d in range(rank) if d not in expand]
    sizes = [sympy.Integer(1)] * rank
    for d, s in zip(own, t.size):
        sizes[d] = s
    return sizes, own


@register(aten._trilinear.default)
def _trilinear(lower, node, i1, i2, i3, expand1, expand2, expand3, sumdim, unroll_dim=1):
    val = lower.node.meta["val"]
    cd = val.dtype
    if cd not in (torch.float32, torch.float64) or any(t.dtype != cd for t in (i1, i2, i3)):
        raise LoweringError("_trilinear of half floats or mixed dtypes")
    rank = len(i1.size) + len(expand1)
    factors = [(loader(t), *_unsqueezed(t, e, rank))
               for t, e in ((i1, expand1), (i2, expand2), (i3, expand3))]
    full = []
    for d in range(rank):
        sizes = {sizes[d] for _, sizes, _ in factors} - {sympy.Integer(1)}
        if len(sizes) > 1:
            raise LoweringError("_trilinear of sizes that do not broadcast")
        full.append(sizes.pop() if sizes else sympy.Integer(1))
    summed = sorted({d % rank for d in sumdim})
    kept = [d for d in range(rank) if d not in summed]
    size, rsize = tuple(full[d] for d in kept), tuple(full[d] for d in summed)
    out_size = tuple(sym(s) for s in val.shape)
    if len(out_size) != len(kept) or 0 in rsize:
        raise LoweringError("_trilinear that keeps its summed dims, or sums over none")

    def product(idx: Index, ridx: Index) -> Value:
        at = [None] * rank
        for d, i in zip(kept, idx):
            at[d] = i
        for d, i in zip(summed, ridx):
            at[d] = i
        out = None
        for load, sizes, own in factors:
            v = to_dtype(load([sympy.Integer(0) if sizes[d] == 1 else at[d] for d in own]), cd)
            out = v if out is None else op("mul", out, v)
        return out
    if not rsize:
        return Pointwise(size, cd, val.device, lambda idx: product(idx, []))
    return lower.realize(Reduction(size, rsize, "sum", cd, val.device, product))
