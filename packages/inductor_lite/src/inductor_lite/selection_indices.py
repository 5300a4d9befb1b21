"""Selections whose indices are read: eager CPU's own choice among equal elements, replayed.

Which of equal elements' index a selection returns is its algorithm's accident, so a lowering
that returns indices replays that algorithm. `mode` along a dim: eager pairs each element with
its index, sorts the pairs by value with `std::sort` and takes the last index of the first
longest run of equal values. Up to 16 elements `std::sort` is an insertion sort, which a
kernel replays exactly (triton_helpers.mode_index), NaN (never below nor above anything)
included; past 16 it is an introsort whose order among equal values the kernel does not
replay, so longer rows are refused (aten runs; a symbolic row length is judged as traced, the
compiled version guarded to rows up to 16), as are tensors off the CPU (eager on a GPU chooses
its own way), 0-d and empty inputs and the dtypes the key does not hold (64-bit, bool).
"""

from __future__ import annotations

import sympy
import torch

from . import scans_and_sorts as sorts  # read at lowering time: it imports lowering.py too
from .ir import (
    Index,
    IndirectIndex,
    LoweringError,
    Pointwise,
    TensorIR,
    Value,
    loader,
    to_dtype,
)
from .lowering import compute_dtype, fits_guarded, positive, register, scan_buffer

aten = torch.ops.aten

INSERTION_SORT_LIMIT = 16  # std::sort sorts rows up to this length by insertion
MODE_DTYPES = {torch.float32, torch.float16, torch.bfloat16, torch.int32, torch.int16,
               torch.int8, torch.uint8}


@register(aten.mode.default)
def _mode(lower, node, x: TensorIR, dim: int = -1, keepdim: bool = False):
    if x.device.type != "cpu":
        raise LoweringError("the mode's index on a GPU: eager there chooses among equal values "
                            "its own way")
    if x.dtype not in MODE_DTYPES or not x.size:
        raise LoweringError(f"the mode of a {len(x.size)}-d {x.dtype} tensor")
    dim %= len(x.size)
    n = x.size[dim]
    if not (positive(lower, n) and fits_guarded(lower, n, INSERTION_SORT_LIMIT)):
        raise LoweringError(f"the mode of a row of {n}: std::sort's order among equal values "
                            "past 16 elements is its introsort's")
    load = loader(x)
    positions = loader(sorts.zero_indices(x.size, x.device) if n == 1  # no row to scan
                       else scan_buffer(lower, x.size, dim, "mode_index", torch.int64, x.device,
                                        load))
    size = (*x.size[:dim], *((sympy.Integer(1),) if keepdim else ()), *x.size[dim + 1:])

    def row_at(idx: Index, position) -> list:
        rest = [*idx[:dim], *idx[dim + 1:]] if keepdim else list(idx)
        return [*rest[:dim], position, *rest[dim:]]

    def index(idx: Index) -> Value:
        return positions(row_at(idx, sympy.Integer(0)))  # every lane holds the row's mode index

    def value(idx: Index) -> Value:
        return to_dtype(load(row_at(idx, IndirectIndex(index(idx), n, False))),
                        compute_dtype(x.dtype))
    return [Pointwise(size, x.dtype, x.device, value),
            Pointwise(size, torch.int64, x.device, index)]
