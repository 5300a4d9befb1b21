"""The strides of a pointwise op's output as PyTorch's TensorIterator lays it out.

The meta kernels of most pointwise ops are Python references (`torch._refs`), which can give a
size-1 dim another stride than TensorIterator: they take the channels-last shortcut for a
channels-last input combined with a number or a broadcast tensor, where TensorIterator takes it
only for operands of one shape, and they never copy the strides of dense, non-overlapping inputs
of one layout as TensorIterator does. A size-1 dim's stride is enough to change a tensor's
suggested memory format (`(1, C, H, W)` with strides `(C, 1, W*C, C)` is not channels-last,
with `(H*W*C, 1, W*C, C)` it is), and kernels such as group norm's choose their layout, or
refuse their input, by it. The rules, for static sizes: operands of one shape that are all
contiguous, all channels-last, or all dense with the same strides give that layout; otherwise
the dims are ordered from the fastest-moving one by the operands' strides (broadcast dims
ignored, ties by size) and the output is dense in that order (as TensorIterator's
`fast_set_up`, `reorder_dimensions` and `allocate_or_resize_outputs` do, in
aten/src/ATen/TensorIterator.cpp)."""

from __future__ import annotations

from typing import Any

import torch
from torch._prims_common import make_channels_last_strides_for, make_contiguous_strides_for


def output_strides(shape: list[int], operands: list[Any]) -> tuple[int, ...]:
    """The strides TensorIterator gives a new output of `shape` (the operands' broadcast shape)
    for `operands`, its tensor inputs in order (a Python number stands for the 0-d tensor it
    is wrapped in)."""
    tensors = [(tuple(t.shape), tuple(t.stride())) if isinstance(t, torch.Tensor) else ((), ())
               for t in operands]
    ndim = len(shape)
    if all(len(sizes) == ndim and sizes == tuple(shape) for sizes, _ in tensors):
        # (lengths first: a tuple comparison compares the leading sizes of tuples of other
        # lengths too, and with symbolic sizes records a guard, `B != C` for `(B, C, 1, 1)`
        # and `(C, 1, 1)`)
        # fast_set_up: operands of one shape, all contiguous, all channels-last, or all dense
        # with the same strides
        inputs = [t for t in operands if isinstance(t, torch.Tensor)]
        if all(t.is_contiguous() for t in inputs):
            return tuple(make_contiguous_strides_for(shape))
        if all(t.is_contiguous(memory_format=torch.channels_last) for t in inputs):
            return tuple(make_channels_last_strides_for(shape))
        if all(non_overlapping_and_dense(*sizes_strides) for sizes_strides in tensors) and all(
                strides == tensors[0][1] for _, strides in tensors):  # (SymInts do not hash)
            return tensors[0][1]
    # compute_strides: a broadcast dim has stride 0; reorder_dimensions: sort the dims from the
    # fastest-moving one (perm[0]) by the operands' strides, in turn
    strides = []
    for sizes, given in tensors:
        offset = ndim - len(sizes)
        padded = [0] * offset + [0 if sizes[i] == 1 and shape[offset + i] != 1 else given[i]
                                 for i in range(len(sizes))]
        strides.append(padded)
    if ndim == 1:
        return (1,)
    perm = list(range(ndim - 1, -1, -1))

    def should_swap(dim0: int, dim1: int) -> int:
        for padded in strides:
            stride0, stride1 = padded[dim0], padded[dim1]
            if stride0 == 0 or stride1 == 0:
                continue
            if stride0 != stride1:
                return -1 if stride0 < stride1 else 1
            if shape[dim0] > shape[dim1]:  # equal strides: the smaller size goes first
                return 1
        return 0

    for i in range(1, ndim):  # insertion sort with ambiguous comparisons
        dim1 = i
        for dim0 in range(i - 1, -1, -1):
            comparison = should_swap(perm[dim0], perm[dim1])
            if comparison > 0:
                perm[dim0], perm[dim1] = perm[dim1], perm[dim0]
                dim1 = dim0
            elif comparison < 0:
                break
    if perm == list(range(ndim - 1, -1, -1)):
        return tuple(make_contiguous_strides_for(shape))
    # allocate_or_resize_outputs: strides compatible with the permuted shape, put back in order
    result = [0] * ndim
    next_stride = 1
    for dim in perm:
        result[dim] = next_stride
        next_stride *= shape[dim]
    return tuple(result)


def non_overlapping_and_dense(sizes: tuple[int, ...], strides: tuple[int, ...]) -> bool:
    """c10's `compute_non_overlapping_and_dense`: size-1 dims do not count."""
    required = 1
    for dim in sorted((d for d in range(len(sizes)) if sizes[d] >= 2), key=lambda d: strides[d]):
        if strides[dim] != required:
            return False
        required *= sizes[dim]
    return True


def view_strides(old_shape: tuple, old_strides: tuple, new_shape: tuple) -> tuple | None:
    """The strides c10's `computeStride` (aten/src/ATen/TensorUtils.cpp) gives a view of a
    tensor of `old_shape` and `old_strides` as `new_shape`, or None where it cannot view.
    Sizes may be SymInts: their comparisons are decided (guarded) as the C++ kernel decides
    them for real sizes; a size-1 dim gets the stride of the chunk it falls into."""
    if not old_shape:
        return (1,) * len(new_shape)
    numel = 1
    for size in old_shape:
        numel = numel * size
    if numel == 0:
        return None  # (left to the reference)
    new_strides = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    chunk_base_stride = old_strides[-1]
    tensor_numel = 1
    view_numel = 1
    for tensor_d in range(len(old_shape) - 1, -1, -1):
        tensor_numel = tensor_numel * old_shape[tensor_d]
        if tensor_d == 0 or (old_shape[tensor_d - 1] != 1 and old_strides[tensor_d - 1]
                             != tensor_numel * chunk_base_stride):
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                new_strides[view_d] = view_numel * chunk_base_stride
                view_numel = view_numel * new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base_stride = old_strides[tensor_d - 1]
                tensor_numel = 1
                view_numel = 1
    if view_d != -1:
        return None
    return tuple(new_strides)
