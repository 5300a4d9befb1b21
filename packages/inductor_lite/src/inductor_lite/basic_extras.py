"""Lowerings of basic ops that ran as eager fallbacks: copies of slices, storage-level writes
and resizes, empty tensors of given strides, and `addbmm`.

Each is a few lines over the machinery of `lowering.py`: `narrow_copy` is a copy of a slice,
`new_empty_strided` an `empty_strided`, `resize` (what `resize_as_` becomes) reads its input's
elements in their contiguous order, `as_strided_scatter` is a scatter of the source into a copy
of the input at the addresses the strided view names, and `addbmm` is eager's own chain of
extern `addmm` calls, one per batch. Cases whose result depends on something kernels cannot
reproduce exactly (overlapping writes, storage laid out unlike eager's, a symbolic batch
count) raise `LoweringError`, so the op runs as the aten call.
"""

from __future__ import annotations

import sympy
import torch

from .ir import (
    Buffer,
    BufferView,
    ComputedBuffer,
    ExternBuffer,
    Layout,
    LoweringError,
    Pointwise,
    Scatter,
    Value,
    constant,
    contiguous_strides,
    loader,
    op,
)
from .lowering import (
    _filled,
    _require_uninitialized_allowed,
    _slice_view,
    broadcast_loader,
    dense_layout,
    meta_layout,
    register,
    sym,
)

aten = torch.ops.aten


@register(aten.narrow_copy.default)
def _narrow_copy(lower, node, x, dim, start, length):
    """A new tensor holding `x.narrow(dim, start, length)` (a negative start counts from the
    end, as narrow's does)."""
    dim = dim % len(x.size)
    start = sym(start)
    if not start.is_Integer:
        raise LoweringError("narrow_copy at a symbolic start")
    if start < 0:
        start = start + x.size[dim]
    size = tuple(sym(s) for s in lower.node.meta["val"].shape)
    view = _slice_view(lower, x, dim, start, sympy.Integer(1), size)
    return Pointwise(size, x.dtype, x.device, loader(view))


@register(aten.new_empty_strided.default)
def _new_empty_strided(lower, node, x, size, stride, **kwargs):
    _require_uninitialized_allowed()
    return _filled(lower, 0)


@register(aten.resize.default)
def _resize(lower, node, x, size, memory_format=None):
    """Functional `resize_`: the same elements at the same size (eager keeps the strides);
    else the input's elements in its storage order, which is their contiguous order when
    eager's input is contiguous, and a larger result's new tail holds anything (zeros here)."""
    source = node.args[0].meta["val"]
    val = lower.node.meta["val"]
    new_size = tuple(sym(s) for s in val.shape)
    if new_size == tuple(x.size):
        return Pointwise(new_size, x.dtype, x.device, loader(x))
    if memory_format not in (None, torch.contiguous_format) or not source.is_contiguous() \
            or not all(s.is_Integer for s in (*new_size, *x.size)):
        raise LoweringError("resize of a non-contiguous input, or to symbolic sizes")
    old_numel, new_numel = sympy.prod(x.size), sympy.prod(new_size)
    if new_numel > old_numel:
        _require_uninitialized_allowed()
    load = loader(x)

    def fn(idx):
        flat = sum((i * s for i, s in zip(idx, contiguous_strides(new_size))), sympy.Integer(0))
        value = load([(flat // s) % n for s, n in zip(contiguous_strides(x.size), x.size)])
        if new_numel <= old_numel:
            return value
        inside = op("lt", Value("index", (flat,), torch.int64),
                    constant(old_numel, torch.int64), dtype=torch.bool)
        return op("where", inside, value, constant(0, x.dtype))
    return Pointwise(new_size, x.dtype, x.device, fn)


@register(aten.as_strided_scatter.default)
def _as_strided_scatter(lower, node, x, src, size, stride, storage_offset=None):
    """A copy of `x` (laid out as eager's clone of it) with `src` written where the view
    `as_strided(size, stride, storage_offset)` of that copy's storage points."""
    val = lower.node.meta["val"]
    dense = dense_layout(val)
    if dense.stride != meta_layout(val).stride or val.storage_offset() != 0:
        raise LoweringError("as_strided_scatter of a result not laid out densely")
    size, stride = [sym(s) for s in size], [sym(s) for s in stride]
    offset = sym(storage_offset) if storage_offset is not None else sympy.Integer(0)
    if not all(v.is_Integer for v in (*size, *stride, offset)) or _overlaps(size, stride):
        # (elements written twice land in an order eager's copy does not promise)
        raise LoweringError("as_strided_scatter through a view that may overlap itself")
    copy = Pointwise(x.size, x.dtype, x.device, loader(x))
    out = lower.realize(copy, dense)
    load = broadcast_loader(src, tuple(size), val.dtype)

    def target(idx):
        return offset + sum((i * s for i, s in zip(idx, stride)), sympy.Integer(0))
    data = Scatter(tuple(size), target, False, val.dtype, val.device, load)
    lower.add(ComputedBuffer(lower.new_name(), dense, data=data, mutates=out.name))
    return out


def _overlaps(size: list[sympy.Integer], stride: list[sympy.Integer]) -> bool:
    """Whether two indices of the view may name one address (static sizes and strides): not
    when each dim's stride, in increasing order, steps past all the dims before it span."""
    span = 0
    for n, s in sorted(((n, s) for n, s in zip(size, stride) if n > 1), key=lambda d: d[1]):
        if s <= span:
            return True
        span += (n - 1) * s
    return False


@register(aten.addbmm.default)
def _addbmm(lower, node, x, batch1, batch2, *, beta=1, alpha=1):
    """`beta * x + alpha * sum_b(batch1[b] @ batch2[b])` as eager computes it, to the bit: one
    extern `addmm` per batch, each adding its product to the previous result. (A `bmm` summed
    by a kernel, or one `mm` over the batches laid side by side, rounds otherwise: 1e-4 apart
    on sums near 300.) The batch count must be a number, and `alpha`, `beta` numbers too."""
    count = batch1.size[0]
    if not count.is_Integer or count == 0 or not all(
            isinstance(v, (int, float)) for v in (alpha, beta)):
        raise LoweringError("addbmm of a symbolic or empty batch, or with symbolic scalars")
    val = lower.node.meta["val"]
    x, batch1, batch2 = (lower.realize(t, dense_layout(n.meta["val"]))
                         for t, n in zip((x, batch1, batch2), node.args[:3]))
    layout = Layout(tuple(sym(s) for s in val.shape), contiguous_strides(tuple(
        sym(s) for s in val.shape)), sympy.Integer(0), val.dtype, val.device)
    out = x
    for b in range(int(count)):
        out = lower.add(ExternBuffer(
            lower.new_name(), layout, target=aten.addmm.default,
            args=(out, _matrix(batch1, b), _matrix(batch2, b)),
            kwargs={"beta": beta if b == 0 else 1, "alpha": alpha}, fallback=False))
    return out


def _matrix(t: Buffer | BufferView, b: int) -> BufferView:
    """`t[b]`, a view of a stored batch of matrices."""
    lay = t.layout
    return BufferView(t.buffer if isinstance(t, BufferView) else t, Layout(
        lay.size[1:], lay.stride[1:], lay.offset + b * lay.stride[0], lay.dtype, lay.device))
