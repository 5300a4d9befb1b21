"""The gradient of 2-d max pooling (`max_pool2d_with_indices_backward`) as a gather.

Eager scatters each output's gradient onto the input element its index names, adding them in
the outputs' row-major order. Here each input element instead gathers: it visits the outputs
whose window covers it (one per window tap at most, `oh = (h + padding - tap * dilation) /
stride` where that divides evenly and is in range), in that same row-major order, and adds the
gradient of those whose index names it, starting from 0 as eager does: the same additions in
the same order, so the same bits. This holds for indices that name an element of their own
window, as those max pooling returns do: the lowering takes indices only from a
`max_pool2d_with_indices` of the same input with the same arguments (other indices run the aten
op).
"""

from __future__ import annotations

import operator
from collections.abc import Iterator

import sympy
import torch

from .ir import (
    IndirectIndex,
    LoweringError,
    Pointwise,
    Value,
    constant,
    loader,
    op,
    to_dtype,
)
from .lowering import _pair, aten, register, sym


def _pooling_args(kernel_size, stride, padding, dilation) -> tuple:
    kernel = _pair(kernel_size)
    return kernel, _pair(stride, kernel), _pair(padding), _pair(dilation)


def _from_same_pooling(node: torch.fx.Node) -> bool:
    """Whether the backward `node`'s indices are those of a max pooling of its input with its
    arguments."""
    _, x, kernel, stride, padding, dilation, ceil_mode, indices = node.args
    if not (isinstance(indices, torch.fx.Node) and indices.target is operator.getitem
            and indices.args[1] == 1):
        return False
    pool = indices.args[0]
    if pool.target is not aten.max_pool2d_with_indices.default:
        return False
    fwd = dict(zip(("x", "kernel", "stride", "padding", "dilation", "ceil_mode"), pool.args))
    fwd = {"stride": (), "padding": 0, "dilation": 1, "ceil_mode": False, **fwd, **pool.kwargs}
    return fwd["x"] is x and bool(fwd["ceil_mode"]) == bool(ceil_mode) and _pooling_args(
        fwd["kernel"], fwd["stride"], fwd["padding"], fwd["dilation"]) == _pooling_args(
        kernel, stride, padding, dilation)


def _covering(i: sympy.Expr, n_out: sympy.Expr, kernel: int, stride: int, padding: int,
              dilation: int) -> Iterator[tuple[sympy.Expr, Value]]:
    """The outputs along one dim whose window covers input position `i`, in increasing order:
    each as (an index, clamped into the output, and whether it is one)."""
    zero = constant(0, torch.int64)
    for tap in reversed(range(kernel)):
        start = Value("index", (i + padding - tap * dilation,), torch.int64)
        o = op("floordiv", start, constant(stride, torch.int64))
        covers = op("logical_and", op("ge", start, zero, dtype=torch.bool),
                    op("lt", o, Value("index", (n_out,), torch.int64), dtype=torch.bool))
        if stride != 1:
            covers = op("logical_and", covers, op("eq", op(
                "remainder", start, constant(stride, torch.int64)), zero, dtype=torch.bool))
        clamped = op("minimum", op("maximum", o, zero),
                     op("sub", Value("index", (n_out,), torch.int64), constant(1, torch.int64)))
        yield IndirectIndex(clamped, n_out, wraps=False), covers


@register(aten.max_pool2d_with_indices_backward.default)
def _max_pool2d_backward(lower, node, grad_output, x, kernel_size, stride, padding, dilation,
                         ceil_mode, indices):
    val = lower.node.meta["val"]
    if val.dtype not in (torch.float32, torch.float64) or grad_output.dtype != val.dtype:
        raise LoweringError("max pooling's gradient in half floats (eager adds in float)")
    if not _from_same_pooling(node):
        raise LoweringError("max pooling's gradient with indices not from that max pooling")
    kernel, stride, padding, dilation = _pooling_args(kernel_size, stride, padding, dilation)
    size = tuple(sym(s) for s in val.shape)
    out_h, out_w = grad_output.size[-2:]
    width = x.size[-1]
    load_grad, load_index = loader(grad_output), loader(indices)
    cd = val.dtype

    def fn(idx):
        *lead, h, w = idx
        flat = Value("index", (h * width + w,), torch.int64)
        total = constant(0, cd)
        for oh, row_covers in _covering(h, out_h, kernel[0], stride[0], padding[0], dilation[0]):
            for ow, col_covers in _covering(w, out_w, kernel[1], stride[1], padding[1],
                                            dilation[1]):
                at = [*lead, oh, ow]
                hit = op("logical_and", op("logical_and", row_covers, col_covers),
                         op("eq", load_index(at), flat, dtype=torch.bool))
                total = op("add", total, Value("where", (
                    hit, to_dtype(load_grad(at), cd), constant(0, cd)), cd))
        return total
    return Pointwise(size, val.dtype, val.device, fn)
