"""`torch.lu_unpack` as ops that have lowerings: masks of row and column indices, gathers.

An LU factorization of an m x n matrix packs both factors in one m x n tensor: `L` (m x k,
k = min(m, n)) is its part below the diagonal with ones on the diagonal, `U` (k x n) its part
on and above it; each is a `where` of the packed values, a one or a zero by the element's row
and column (a `where`, not `tril(-1) + eye`, so a -0.0 stays as eager writes it). The pivots
say which rows the factorization swapped, in order: row `i` with row `pivots[i] - 1`. Applied
to the row numbers 0..m-1 they give the permutation `perm`, and `P[perm[c], c] = 1`. The swaps
are sequential, so they unroll here into k steps of a gather and two `where`s on `perm` (every
batch at once), as many as the trace knows k to be. Eager's check that every pivot is in
1..m is an `_assert_async` of a kernel's result, with eager's message. The op stays whole for
a k not known when tracing or above `MAX_SWAPS`, complex or integer values, pivots that are
not int32 (which eager refuses) and pivots not of LU's batch dims and k (eager reads them as
such all the same, out of bounds where they are fewer).
"""

from __future__ import annotations

from typing import Any

import torch

aten = torch.ops.aten

# Swaps unrolled at most: each is a kernel or more of its own.
MAX_SWAPS = 64


def _lu_unpack(lu: torch.Tensor, pivots: torch.Tensor, unpack_data: bool = True,
               unpack_pivots: bool = True) -> Any:
    if lu.dim() < 2 or not lu.is_floating_point():
        return NotImplemented
    m, n = lu.shape[-2:]
    if not (isinstance(m, int) and isinstance(n, int)) or min(m, n) > MAX_SWAPS:
        return NotImplemented
    k = min(m, n)
    # (eager reads pivots of other sizes, of fewer batch dims too, as if they were these)
    if unpack_pivots and (pivots.dtype != torch.int32
                          or tuple(pivots.shape) != (*lu.shape[:-2], k)):
        return NotImplemented
    empty = lu.new_empty([0])
    l_factor = u_factor = p_matrix = empty
    if unpack_data:
        rows = torch.arange(m, device=lu.device).unsqueeze(-1)
        columns = torch.arange(n, device=lu.device)
        diagonal = (rows == columns).to(lu.dtype)
        l_factor = torch.where(rows > columns, lu, diagonal)[..., :k].contiguous()
        u_factor = torch.where(rows <= columns, lu, 0.0)[..., :k, :].contiguous()
    if unpack_pivots:
        p_matrix = _permutation_matrix(pivots, m, k, lu.dtype)
    return p_matrix, l_factor, u_factor


def _permutation_matrix(pivots: torch.Tensor, m: int, k: int, dtype: torch.dtype) -> torch.Tensor:
    """`P` (..., m x m) of the row swaps `pivots` (..., k) name, 1-based."""
    torch._assert_async(((pivots >= 1) & (pivots <= m)).all(),
                        "pivots passed to lu_unpack must be between 1 and LU.size(-2) inclusive."
                        "Did you properly pass the result of lu_factor?")
    rows = torch.arange(m, device=pivots.device)
    perm = rows.expand(*pivots.shape[:-1], m)
    targets = (pivots.long() - 1).clamp(0, m - 1)  # (reads stay in bounds until the check raises)
    for i in range(k):
        j = targets[..., i:i + 1]
        here, there = perm[..., i:i + 1], perm.gather(-1, j)
        perm = torch.where(rows == i, there, torch.where(rows == j, here, perm))
    return (perm.unsqueeze(-2) == rows.unsqueeze(-1)).to(dtype)


DECOMPOSITIONS = {aten.lu_unpack.default: _lu_unpack}
