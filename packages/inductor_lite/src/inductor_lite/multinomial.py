"""`torch.multinomial` as ops that have lowerings: uniform draws, a sort or a search.

With replacement, each draw `u` in [0, 1) lands in the category whose interval of the row's
cumulative distribution holds it: `searchsorted(cdf, u, right=True)` with `cdf` the row's
cumulative sum divided by its last element (so it ends at exactly 1 and every index is a
category; a category of probability 0 has an empty interval). The row is first divided by its
largest entry, so that a sum of large probabilities (near float32's largest) stays finite. Without replacement, the first
`n` of the row sorted by `log(e) - log(p)`, `e` an exponential draw per category: the order in
which exponential clocks of rates `p` ring, which draws categories one after another without
replacement, as eager's `topk` of `e / p` does (a category of probability 0 gets +inf or NaN,
after every other). The numbers differ from eager's, their distribution is the same. Eager's
checks of the values (a negative, infinite or NaN probability, a row summing to 0) are
`_assert_async`s of kernels' results with eager's messages (where several checks fail, the
message is that of the first check here, not of the first bad element as eager's). The op stays whole (an aten call)
for float64 probabilities (float32 keys would lose categories below 1e-38), a generator, a
number of categories past a sort's block (a symbolic number is compared as traced, which
guards the version to numbers within the block), and the arguments eager refuses by their
sizes.
"""

from __future__ import annotations

from typing import Any

import torch

from .scans_and_sorts import SORT_LIMIT

aten = torch.ops.aten

PROBABILITY_DTYPES = (torch.float32, torch.float16, torch.bfloat16)


def _multinomial(probs: torch.Tensor, n: Any, replacement: bool = False, *,
                 generator: Any = None) -> Any:
    categories = probs.shape[-1] if probs.dim() else None
    if (generator is not None or probs.dtype not in PROBABILITY_DTYPES or probs.dim() not in (1, 2)
            or not isinstance(categories, (int, torch.SymInt)) or not 0 < categories <= SORT_LIMIT
            or 0 in probs.shape or not isinstance(n, int) or n <= 0
            or (not replacement and n > categories)):
        return NotImplemented
    p = probs.float()
    if replacement and n > 1:  # (eager draws one sample as it draws without replacement)
        torch._assert_async((p >= 0).all(), "invalid multinomial distribution "
                            "(encountering probability entry < 0)")  # NaN too, as eager's
        torch._assert_async(p.isfinite().all(), "invalid multinomial distribution "
                            "(encountering probability entry = infinity or NaN)")
    else:
        torch._assert_async(((p >= 0) & p.isfinite()).all(),
                            "probability tensor contains either `inf`, `nan` or element < 0")
    torch._assert_async((p.sum(-1) > 0).all(),
                        "invalid multinomial distribution (sum of probabilities <= 0)")
    if replacement:
        cdf = (p / p.amax(-1, keepdim=True)).cumsum(-1)
        cdf = cdf / cdf[..., -1:]
        u = torch.rand((*p.shape[:-1], n), device=p.device)
        return torch.searchsorted(cdf, u, right=True)
    exponential = -torch.log1p(-torch.rand_like(p))
    keys = exponential.log() - p.log()
    return torch.sort(keys, dim=-1, stable=True).indices[..., :n].contiguous()


DECOMPOSITIONS = {aten.multinomial.default: _multinomial}
