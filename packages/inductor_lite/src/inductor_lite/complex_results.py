"""Complex results made from real inputs: `complex`, `polar`, a cast to a complex dtype, and
`view_as_complex`.

Kernels compute real dtypes only, but a complex tensor's storage is its real and imaginary
parts interleaved: a complex64 tensor of size (n,) is the float32 tensor of size (n, 2) that
`torch.view_as_real` shows. So a complex result is computed as that real tensor, a `Pointwise`
over (..., 2) whose last index picks the real (0) or the imaginary (1) part, stored in the
layout eager gives the result (each stride doubled, the parts adjacent); the result itself is
`aten.view_as_complex` of that buffer, a view the wrapper makes without moving data.
`view_as_complex` of a real value is that view too. Complex inputs and complex arithmetic stay
with aten: any op reading a complex value runs as an aten call (lowering.py refuses it).
"""

from __future__ import annotations

from collections.abc import Callable

import sympy
import torch

from .ir import ExternBuffer, Index, Layout, LoweringError, Pointwise, Value, constant, op
from .lowering import (
    COMPLEX_RESULTS,
    GraphLowering,
    broadcast_loader,
    compute_dtype,
    dense_layout,
    sym,
)

aten = torch.ops.aten

# A complex dtype's parts.
PART_DTYPES = {torch.complex32: torch.float16, torch.complex64: torch.float32,
               torch.complex128: torch.float64}


def register_complex(*targets: object) -> Callable:
    """Register a lowering for the complex results of ops (their real results keep theirs)."""
    def add(fn: Callable) -> Callable:
        for target in targets:
            COMPLEX_RESULTS[target] = fn
        return fn
    return add


def complex_result(lower: GraphLowering,
                   parts: Callable[[Index], tuple[Value, Value]]) -> ExternBuffer:
    """The node's complex result, its real and imaginary parts at an index given by `parts`
    (Values of the parts' compute dtype): stored as the result's real view, then viewed as
    complex."""
    val = lower.node.meta["val"]
    part_dtype = PART_DTYPES.get(val.dtype)
    if part_dtype is None:
        raise LoweringError(f"a result of {val.dtype}")
    layout = dense_layout(val)
    real_view = Layout((*layout.size, sympy.Integer(2)),
                       (*(2 * s for s in layout.stride), sympy.Integer(1)),
                       sympy.Integer(0), part_dtype, val.device)

    def fn(idx: Index) -> Value:
        real, imag = parts(idx[:-1])
        is_real = op("eq", Value("index", (idx[-1],), torch.int64),
                     constant(0, torch.int64), dtype=torch.bool)
        return op("where", is_real, real, imag)
    parts_buffer = lower.realize(Pointwise(real_view.size, part_dtype, val.device, fn), real_view)
    return lower.add(ExternBuffer(lower.new_name(), layout, target=aten.view_as_complex.default,
                                  args=(parts_buffer,), fallback=False))


def _real_inputs(lower: GraphLowering, *inputs: object,
                 dtypes: tuple[torch.dtype, ...]) -> list[Callable[[Index], Value]]:
    """Loaders of tensor inputs of one of `dtypes`, broadcast to the result, in the compute
    dtype of the result's parts."""
    val = lower.node.meta["val"]
    if any(x.dtype not in dtypes for x in inputs):
        raise LoweringError(f"inputs of {[x.dtype for x in inputs]}")
    size = tuple(sym(s) for s in val.shape)
    return [broadcast_loader(x, size, compute_dtype(PART_DTYPES[val.dtype])) for x in inputs]


@register_complex(aten.complex.default)
def _complex(lower, node, real, imag):
    load_real, load_imag = _real_inputs(lower, real, imag, dtypes=(
        torch.float16, torch.float32, torch.float64))
    return complex_result(lower, lambda idx: (load_real(idx), load_imag(idx)))


@register_complex(aten.polar.default)
def _polar(lower, node, abs, angle):
    # eager's CPU kernel: `abs * cos(angle)`, `abs * sin(angle)` in the inputs' dtype
    load_abs, load_angle = _real_inputs(lower, abs, angle, dtypes=(torch.float32, torch.float64))

    def parts(idx: Index) -> tuple[Value, Value]:
        r, theta = load_abs(idx), load_angle(idx)
        return op("mul", r, op("cos", theta)), op("mul", r, op("sin", theta))
    return complex_result(lower, parts)


@register_complex(aten._to_copy.default)
def _to_complex(lower, node, x, *, dtype=None, layout=None, device=None, pin_memory=None,
                non_blocking=False, memory_format=None):
    val = lower.node.meta["val"]
    if device is not None and torch.device(device) != x.device:
        raise LoweringError("device copy")
    part = PART_DTYPES.get(val.dtype)
    if part is None:
        raise LoweringError(f"a copy to {val.dtype}")
    # (converted as eager converts to the part's dtype: to half through float32, by the store)
    load = broadcast_loader(x, tuple(sym(s) for s in val.shape), compute_dtype(part))
    zero = constant(0.0, compute_dtype(part))
    return complex_result(lower, lambda idx: (load(idx), zero))


@register_complex(aten.view_as_complex.default)
def _view_as_complex(lower, node, x):
    # the aten view of the real value (computed first where it is lazy, in its traced
    # layout, which eager's view requires: last dim of stride 1, the others even)
    return lower.extern(node, (x,), {}, fallback=False)
