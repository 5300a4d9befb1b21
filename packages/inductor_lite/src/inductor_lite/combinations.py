"""`torch.combinations` as a gather by index tuples computed from the size alone.

ATen's `combinations` is a composite op: it builds a mask over the r-fold grid of indices
(`i1 < i2 < ...`, or `<=` with replacement) and `masked_select`s each grid's elements, whose
count depends on the mask's values, so a fake trace gets a size it cannot know and the whole
graph ran eagerly. The count is C(n, r) (or C(n + r - 1, r)) for a vector of n elements, and
the rows are the index tuples in lexicographic order, which `itertools` lists on the host when
tracing: the result is `x[indices]`, `indices` a constant (rows x r) tensor of the trace.

A composite op never reaches the trace's dispatch mode (the dispatcher decomposes it first),
so a decomposition table cannot hold it; `decomposing_combinations` is a torch function mode
that replaces the call, whether a torch-level graph's `torch.combinations` or an aten graph's
`aten.combinations`, while `compile_fx` traces. It leaves the call as it is (to be decomposed
by ATen) for an input that is not a vector, a size not known when tracing, r = 0 (an empty
vector), a negative r (eager's error) and more than `MAX_INDICES` indices.
"""

from __future__ import annotations

import itertools
from math import comb
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

aten = torch.ops.aten

# Indices of the constant index tensor at most.
MAX_INDICES = 1 << 16


def _combinations(input: torch.Tensor, r: int = 2,  # noqa: A002 (torch's keyword)
                  with_replacement: bool = False) -> Any:
    x = input
    n = x.shape[0] if x.dim() == 1 else None
    if not isinstance(n, int) or not isinstance(r, int) or r <= 0:
        return NotImplemented
    tuples = (itertools.combinations_with_replacement if with_replacement
              else itertools.combinations)
    rows = _count(n, r, with_replacement)
    if rows * r > MAX_INDICES:
        return NotImplemented
    indices = torch.tensor(list(tuples(range(n), r)), dtype=torch.long, device=x.device)
    return x[indices.reshape(rows, r)]  # (an empty list is a tensor of shape (0,))


def _count(n: int, r: int, with_replacement: bool) -> int:
    """How many r-tuples of n indices the combinations have."""
    return comb(n + r - 1, r) if with_replacement else comb(n, r)


class decomposing_combinations(TorchFunctionMode):  # noqa: N801 (used as a context manager)
    """`torch.combinations` and `aten.combinations` as `_combinations` where it takes them."""

    def __torch_function__(self, func: Any, types: Any, args: tuple = (),
                           kwargs: dict | None = None) -> Any:
        kwargs = kwargs or {}
        if func is torch.combinations or func is aten.combinations.default:
            # (the tensor by keyword: `input` of torch's signature, `self` of aten's schema)
            out = _combinations(*args, **{"input" if k == "self" else k: v
                                          for k, v in kwargs.items()})
            if out is not NotImplemented:
                return out
        return func(*args, **kwargs)
