"""Whether a tensor's elements may share memory, from its sizes and strides alone.

An in-place op on such a view (`x.unfold(0, 3, 2).mul_(2)`, `x.expand(2, 3).add_(1)`) updates a
shared element once per view element that holds it, in eager's order; a functional trace computes
each element once. Tracers refuse those writes with this test.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch


def may_overlap(t: torch.Tensor) -> bool:
    """Whether two elements of `t` may share memory: unless each dim's stride, smallest first,
    passes the farthest element of the dims below it. Symbolic sizes or strides: not decided
    (False); views with overlap come from constant sizes."""
    sizes, strides = t.shape, t.stride()
    if not all(isinstance(n, int) for n in (*sizes, *strides)):
        return False
    return strides_overlap(sizes, strides)


def strides_overlap(sizes: Sequence[int], strides: Sequence[int]) -> bool:
    """`may_overlap` of a tensor of these (concrete) sizes and strides."""
    reach = 0
    for size, stride in sorted(((n, abs(st)) for n, st in zip(sizes, strides) if n > 1),
                               key=lambda d: d[1]):
        if stride <= reach:
            return True
        reach += stride * (size - 1)
    return False
