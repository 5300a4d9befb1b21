"""Complex results made from real inputs: `complex`, `polar`, a cast to a complex dtype, and
`view_as_complex`.

Kernels compute real dtypes only, but a complex tensor's storage is its real and imaginary
parts interleaved: a complex64 tensor of size (n,) is the float32 tensor of size (n, 2) that
`torch.view_as_real` shows. So a complex result is computed as that real tensor, a `Pointwise`
over (..., 2) whose last index picks the real (0) or the imaginary (1) part, stored in the
layout eager gives the result (each stride doubled, the parts adjacent); the result itself is
`aten.view_as_complex` of that buffer, a view the wrapper makes without moving data.
`view_as_complex` of a real value is that view too.

Such a result's parts are known, so ops reading it need no complex kernel: its views
(`permute`, `select`, `slice`, `view`, ...) are strided views of it, which the wrapper makes,
and `view_as_real` of it or of its views is a view of the parts' buffer (`c.real`, `c.imag`
select a part of it); `abs` and `angle` are kernels over the two parts. Complex inputs, the
complex results of aten calls, conjugates (a lazy bit on the tensor) and complex arithmetic
stay with aten: an op reading them runs as an aten call.
"""

from __future__ import annotations

from collections.abc import Callable

import sympy
import torch

from .ir import (
    BufferView,
    ComputedBuffer,
    ExternBuffer,
    Index,
    Layout,
    LoweringError,
    Pointwise,
    TensorIR,
    Value,
    constant,
    loader,
    op,
    to_dtype,
)
from .lowering import (
    COMPLEX_READERS,
    COMPLEX_RESULTS,
    LOWERINGS,
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


def register_reader(*targets: object) -> Callable:
    """Register a lowering for ops reading a complex value."""
    def add(fn: Callable) -> Callable:
        for target in targets:
            COMPLEX_READERS[target] = fn
        return fn
    return add


def parts_view(lower: GraphLowering, c: TensorIR) -> BufferView:
    """The real view (..., 2) of the node's complex argument `c`: a complex result of this
    graph's kernels or a view of one (refused otherwise: a conjugate is an aten call's result),
    as a view of its parts' buffer."""
    base, layout = (c.buffer, c.layout) if isinstance(c, BufferView) else (c, c.layout)
    parts = base.args[0] if isinstance(base, ExternBuffer) and \
        base.target is aten.view_as_complex.default else None
    parts_base = parts.buffer if isinstance(parts, BufferView) else parts
    if not isinstance(parts_base, ComputedBuffer):
        raise LoweringError("a complex value whose parts no kernel here stores")
    # offsets in complex elements from `base`'s start, which is `parts`' start
    return BufferView(parts_base, Layout(
        (*layout.size, sympy.Integer(2)), (*(2 * s for s in layout.stride), sympy.Integer(1)),
        parts.layout.offset + 2 * layout.offset, parts.dtype, parts.device))


@register_reader(aten.permute.default, aten.transpose.int, aten.t.default, aten.select.int,
                 aten.slice.Tensor, aten.expand.default, aten.unsqueeze.default,
                 aten.squeeze.default, aten.squeeze.dim, aten.squeeze.dims, aten.view.default,
                 aten._unsafe_view.default, aten.reshape.default)
def _complex_view(lower, node, c, *args, **kwargs):
    # a strided view of the complex value; one needing a copy (a kernel reading complex
    # values) is refused
    parts_view(lower, c)
    view = LOWERINGS[node.target](lower, node, c, *args, **kwargs)
    if not isinstance(view, BufferView):
        raise LoweringError("a complex view that is not strided")
    return view


@register_reader(aten.view_as_real.default)
def _view_as_real(lower, node, c):
    return parts_view(lower, c)


def _parts(lower: GraphLowering, c: TensorIR, dtypes: tuple[torch.dtype, ...]
           ) -> tuple[Callable[[Index], Value], Callable[[Index], Value]]:
    """Loaders of the real and the imaginary part of `c`, of one of `dtypes`."""
    if c.dtype not in dtypes:
        raise LoweringError(f"a part of {c.dtype}")
    load = loader(parts_view(lower, c))
    zero, one = sympy.Integer(0), sympy.Integer(1)
    return lambda idx: load([*idx, zero]), lambda idx: load([*idx, one])


def _of_parts(lower: GraphLowering, c: TensorIR, dtypes: tuple[torch.dtype, ...],
              body: Callable[[Value, Value], Value]) -> Pointwise:
    """The node's real result, `body` of the parts of `c` at each index."""
    val = lower.node.meta["val"]
    real, imag = _parts(lower, c, dtypes)
    return Pointwise(tuple(sym(s) for s in val.shape), val.dtype, val.device,
                     lambda idx: body(real(idx), imag(idx)))


@register_reader(aten.abs.default)
def _abs(lower, node, c):
    # eager's CPU kernel is `std::abs`, `hypot` of the parts. In float64 the squares of float32
    # parts are exact and the sum is rounded once, as glibc's `hypotf` computes it; float64
    # parts take the scaled form of `helpers.hypot` (within an ulp).
    def body(re: Value, im: Value) -> Value:
        if re.dtype == torch.float64:
            return op("hypot", re, im)
        re, im = to_dtype(re, torch.float64), to_dtype(im, torch.float64)
        root = op("sqrt", op("add", op("mul", re, re), op("mul", im, im)))
        infinite = op("logical_or", op("isinf", re, dtype=torch.bool),
                      op("isinf", im, dtype=torch.bool), dtype=torch.bool)
        return to_dtype(op("where", infinite, constant(float("inf"), torch.float64), root),
                        torch.float32)
    return _of_parts(lower, c, (torch.complex64, torch.complex128), body)


@register_reader(aten.angle.default)
def _angle(lower, node, c):
    # `atan2(im, re)`; helpers.atan2 is as precise as float32 only: complex128 runs as aten
    return _of_parts(lower, c, (torch.complex64,), lambda re, im: op("atan2", im, re))
