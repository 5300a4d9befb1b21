"""`as_strided` of a value the graph computes, as an index remapping.

Eager's `as_strided(x, size, stride, offset)` reads element `offset + sum(i_k * stride_k)` of
`x`'s storage. When the trace shows that storage to hold `x`'s elements alone, densely (`x`
starts at its storage's start, has no gaps or overlaps, and fills it, as a fresh result or
a dense view of one does), that storage position names one element of `x`: its digits in
`x`'s strides. So the view is a lazy value reading `x` there, whatever layout (or none) we
give `x`; overlapping windows (Longformer's `_chunk`, `unfold`) read some elements twice. A
view whose storage is eager's own (an input, an extern call's result) stays a strided view
of that storage (`lowering._as_strided`), and so does one returned by the graph, or a view
of one (its aliasing is eager's). A view reading past its base's last element (kernels do
not check, where eager raises), or of a computed value whose storage holds more than its
elements, raises `LoweringError`.
"""

from __future__ import annotations

import sympy
import torch

from . import ir
from .ir import ExternBuffer, InputBuffer, LoweringError, Pointwise, loader
from .lowering import (
    LOWERINGS,
    _aliases,
    _copying,
    fills_its_storage_densely,
    holds_as_traced,
    meta_layout,
    register,
    sym,
)

aten = torch.ops.aten

_storage_view = LOWERINGS[aten.as_strided.default]


@register(aten.as_strided.default)
def _as_strided(lower, node, x, size, stride, storage_offset=None):
    base = x.buffer if isinstance(x, ir.BufferView) else x
    source = node.args[0].meta.get("val")
    returned = lower.gm.graph.output_node().all_input_nodes
    size = tuple(sym(s) for s in size)
    stride = tuple(sym(s) for s in stride)
    if isinstance(base, (InputBuffer, ExternBuffer)):
        # kernels read eager's storage through the view: only where the base's own elements are
        # (its storage may end there, and kernels do not check)
        offset = sym(storage_offset) if storage_offset is not None else x.layout.offset
        _require_within(lower, size, stride, offset, _last_position(
            base.layout.size, base.layout.stride, base.layout.offset))
    if isinstance(base, (InputBuffer, ExternBuffer)) or not fills_its_storage_densely(
            source) or any(_aliases(node, n) for n in returned):
        return _storage_view(lower, node, x, size, stride, storage_offset)
    offset = sym(storage_offset) if storage_offset is not None else sympy.Integer(0)
    _require_within(lower, size, stride, offset, sym(source.numel()) - 1)
    x_size, x_stride = meta_layout(source).size, meta_layout(source).stride
    load = loader(x)

    def fn(idx):
        position = offset + sum((i * st for i, st in zip(idx, stride)), sympy.Integer(0))
        return load([ir.ModularIndexing(position, st, s) for s, st in zip(x_size, x_stride)])
    return Pointwise(size, x.dtype, x.device, fn)


register(aten.as_strided_copy.default)(_copying(_as_strided))


def _last_position(size: tuple, stride: tuple, offset: sympy.Expr) -> sympy.Expr:
    """The storage position of the last element of a strided view (-1 when it has none)."""
    if any(s == 0 for s in size):
        return sympy.Integer(-1)
    return offset + sum(((s - 1) * st for s, st in zip(size, stride)), sympy.Integer(0))


def _require_within(lower, size: tuple, stride: tuple, offset: sympy.Expr,
                    last: sympy.Expr) -> None:
    """Raises LoweringError unless the view `size`, `stride`, `offset` reads storage positions
    from 0 to `last` only."""
    if not all(_holds(lower, e >= 0) for e in (offset, *stride)):
        raise LoweringError("as_strided with a stride or offset of unknown sign")
    if not any(s == 0 for s in size) and not _holds(
            lower, _last_position(size, stride, offset) <= last):
        raise LoweringError("as_strided reading past the end of its base")


def _holds(lower, fact: sympy.Basic) -> bool:
    """Whether `fact` holds: settled by its numbers, else as traced, then guarded."""
    return fact is sympy.true or fact is not sympy.false and holds_as_traced(lower, fact)
