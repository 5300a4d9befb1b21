"""`histc` as a scatter-add of ones into the bins.

Each element finds its bin as eager's CPU kernel does, by linear interpolation in the input's
float type: `bin = (int64) ((x - min) * bins / (max - min))`, the last bin also holding `max`
itself; elements outside `[min, max]` (and NaNs) count nowhere. Counts are whole numbers, so
the atomic adds give eager's counts in any order. Eager takes the range from the data when
`min == max` (the default 0, 0): that histogram runs as the aten op.
"""

from __future__ import annotations

import math

import sympy
import torch

from .ir import (
    ComputedBuffer,
    IndirectIndex,
    LoweringError,
    Pointwise,
    Scatter,
    Value,
    constant,
    loader,
    op,
    to_dtype,
)
from .lowering import aten, register


@register(aten.histc.default)
def _histc(lower, node, x, bins=100, min=0, max=0):
    val = lower.node.meta["val"]
    cd = val.dtype
    if cd not in (torch.float32, torch.float64) or x.dtype != cd:
        raise LoweringError("histc of half floats or integers")
    if not (isinstance(min, (int, float)) and isinstance(max, (int, float))
            and math.isfinite(min) and math.isfinite(max) and min < max):
        raise LoweringError("histc whose range comes from the data (min == max) or is invalid")
    # the range's ends as the input's float type holds them, and their difference as it
    # computes it
    low, high = (torch.tensor(v, dtype=cd) for v in (min, max))
    width = (high - low).item()
    low, high = low.item(), high.item()
    counts = lower.realize(Pointwise((sympy.Integer(bins),), cd, val.device,
                                     lambda idx: constant(0, cd)))
    load = loader(x)

    def bin_of(idx) -> tuple[Value, Value]:
        v = to_dtype(load(idx), cd)
        inside = op("logical_and", op("ge", v, constant(low, cd), dtype=torch.bool),
                    op("le", v, constant(high, cd), dtype=torch.bool))
        scaled = op("truediv", op("mul", op("sub", v, constant(low, cd)), constant(bins, cd)),
                    constant(width, cd))
        # outside the range (a NaN too) the bin is clamped, and what is added there is 0
        scaled = Value("where", (inside, scaled, constant(0, cd)), cd)
        return op("minimum", to_dtype(scaled, torch.int64), constant(bins - 1, torch.int64)), \
            inside

    def target(idx):
        return IndirectIndex(bin_of(idx)[0], sympy.Integer(bins), wraps=False)

    lower.add(ComputedBuffer(lower.new_name(), counts.layout, data=Scatter(
        x.size, target, True, cd, val.device, lambda idx: to_dtype(bin_of(idx)[1], cd)),
        mutates=counts.name))
    return Pointwise(counts.size, cd, val.device, loader(counts))
