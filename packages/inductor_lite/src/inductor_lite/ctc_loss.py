"""CTC loss's forward (`aten._ctc_loss` with int-list lengths) as one hand-written kernel.

Eager's CPU kernel runs, per batch element, the log-alpha recursion of Graves et al. over its
`2 * target_length + 1` extended states (the targets with a blank before, between and after
them): at time 0 only the first blank and the first label are reachable, and each later time
`t < input_length` gives state `s` the log-sum-exp of the previous time's states `s`, `s - 1`
and (for a label unlike the one two states back) `s - 2`, plus the log-probability of its label
at `t`. The loss is minus the log-sum-exp of the last two states at the element's last time.
Each step reads its neighbours' values of the step before, so no loop nest of the IR holds the
recursion: `ctc_loss_kernel` (a template kernel, template_kernels.py) keeps an element's states
as one row of a block in registers, loops over time, reads the neighbours by gathering the row
at `s - 1` and `s - 2`, and ends with the loss. The log-sum-exps are eager's, operation for
operation: its running maximum (`la > max`, so a NaN first operand stays), a maximum of -inf
taken as 0, and exp(-inf) terms for absent predecessors. The lengths and each element's targets
offset are constant tensors of the compiled graph.

Refused (the aten op runs): lengths given as tensors (their log-alpha's size is data), a graph
that reads the log-alpha output (eager leaves most of it uninitialized), dtypes other than
float32 and float64, symbolic sizes or strides, offsets past int32, more states than a block
holds, and arguments eager rejects (so it raises as eager does). Targets outside `[0, classes)`
fail the kernel's index check (eager reads out of bounds).
"""

from __future__ import annotations

import operator

import sympy
import torch
import triton
import triton.language as tl

from . import triton_helpers as helpers
from .ir import Buffer, BufferView, Layout, LoweringError, TensorIR, contiguous_strides
from .lowering import aten, register
from .template_kernels import TemplateKernel
from .triton_codegen import PERSISTENT_RNUMEL


@triton.jit
def ctc_loss_kernel(loss_ptr, log_probs_ptr, targets_ptr, input_lengths_ptr, target_lengths_ptr,
                    target_starts_ptr, lp_offset, lp_stride_t, lp_stride_n, lp_stride_c,
                    label_stride, steps, classes, blank, xnumel, rnumel,
                    XBLOCK: tl.constexpr, RBLOCK: tl.constexpr):
    n = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:, None]  # batch elements
    s = tl.arange(0, RBLOCK)[None, :]  # extended states
    element = n < xnumel
    input_length = tl.load(input_lengths_ptr + n, mask=element, other=0)
    target_length = tl.load(target_lengths_ptr + n, mask=element, other=0)
    start = tl.load(target_starts_ptr + n, mask=element, other=0)
    state = element & (s < 2 * target_length + 1)
    is_label = state & (s % 2 == 1)
    label_at = start + (s // 2) * label_stride
    label = tl.load(targets_ptr + label_at, mask=is_label, other=0).to(tl.int64)
    helpers.check_index((label >= 0) & (label < classes), is_label)
    label = tl.where(is_label, label, blank)
    earlier = tl.load(targets_ptr + label_at - label_stride, mask=is_label & (s >= 3), other=0)
    skips = is_label & (s >= 3) & (label != earlier)
    probs = log_probs_ptr + lp_offset + n * lp_stride_n + label * lp_stride_c
    minus_inf = float("-inf")
    first = state & (s < 2)
    alpha = tl.load(probs, mask=first, other=minus_inf)
    left_at = tl.broadcast_to(tl.maximum(s - 1, 0), alpha.shape)
    skip_at = tl.broadcast_to(tl.maximum(s - 2, 0), alpha.shape)
    for t in range(1, steps):
        left = tl.where(s >= 1, tl.gather(alpha, left_at, 1), minus_inf)
        skipped = tl.where(skips, tl.gather(alpha, skip_at, 1), minus_inf)
        high = tl.where(left > alpha, left, alpha)
        high = tl.where(skipped > high, skipped, high)
        high = tl.where(high == minus_inf, 0.0, high)
        total = tl.exp(alpha - high) + tl.exp(left - high) + tl.exp(skipped - high)
        prob = tl.load(probs + t * lp_stride_t, mask=state, other=0.0)
        alpha = tl.where(t < input_length, tl.log(total) + high + prob, alpha)
    # the likelihood: the log-sum-exp of the last two states (the last alone for no target)
    last = tl.gather(alpha, 2 * target_length, 1)
    before = tl.gather(alpha, tl.maximum(2 * target_length - 1, 0), 1)
    before = tl.where(target_length > 0, before, minus_inf)
    high = tl.where(before > last, before, last)
    high = tl.where(high == minus_inf, 0.0, high)
    likelihood = tl.log(tl.exp(last - high) + tl.exp(before - high)) + high
    # no input: a likelihood of 1 for an empty target, else 0
    likelihood = tl.where(input_length == 0, tl.where(target_length == 0, 0.0, minus_inf),
                          likelihood)
    tl.store(loss_ptr + n, -likelihood, mask=element)


def _storage(t: TensorIR) -> tuple[Buffer, Layout]:
    """The buffer `t` reads and where in it (a buffer, or a view of one)."""
    if isinstance(t, BufferView):
        return t.buffer, t.layout
    return t, t.layout


def _last_offset(at: Layout) -> int:
    """The offset of a layout's last element (its largest, strides being non-negative)."""
    return int(at.offset) + sum(max(int(n) - 1, 0) * int(st) for n, st in zip(at.size, at.stride))


def _check_arguments(log_probs: TensorIR, targets: TensorIR, input_lengths: list,
                     target_lengths: list, blank: int) -> None:
    """Refuse what this lowering does not handle, and what eager rejects (it then raises)."""
    if log_probs.dtype not in (torch.float32, torch.float64) or len(log_probs.size) != 3 \
            or targets.dtype not in (torch.int32, torch.int64) or len(targets.size) not in (1, 2):
        raise LoweringError("ctc_loss of other dtypes or ranks than eager's CPU kernel takes")
    if not all(isinstance(s, sympy.Integer) for s in (*log_probs.size, *targets.size)):
        raise LoweringError("ctc_loss of symbolic sizes")
    steps, batch, classes = (int(s) for s in log_probs.size)
    if len(input_lengths) != batch or len(target_lengths) != batch or steps * batch == 0 \
            or not 0 <= blank < classes:
        raise LoweringError("ctc_loss with lengths or a blank eager rejects")
    if any(not 0 <= n <= steps for n in input_lengths) or min(target_lengths) < 0:
        raise LoweringError("ctc_loss with lengths eager rejects")
    if len(targets.size) == 1:
        if int(targets.size[0]) != sum(target_lengths):
            raise LoweringError("ctc_loss whose targets are not the lengths' sum")
    elif int(targets.size[0]) != batch or int(targets.size[1]) < max(target_lengths):
        raise LoweringError("ctc_loss whose padded targets eager rejects")
    if 2 * max(target_lengths) + 1 > PERSISTENT_RNUMEL:
        raise LoweringError("ctc_loss with more states than a block holds")


@register(aten._ctc_loss.default)
def _ctc_loss(lower, node, log_probs, targets, input_lengths, target_lengths, blank=0,
              zero_infinity=False):
    # (zero_infinity is for the backward: the forward's graph applies it after this op)
    if any(user.target is not operator.getitem or user.args[1] != 0 for user in node.users):
        raise LoweringError("ctc_loss's log-alpha is read (eager leaves most of it unset)")
    _check_arguments(log_probs, targets, input_lengths, target_lengths, blank)
    probs, probs_at = _storage(lower.realize(log_probs))
    labels, labels_at = _storage(lower.realize(targets))
    numbers = (*probs_at.stride, probs_at.offset, *labels_at.stride, labels_at.offset)
    if not all(isinstance(v, sympy.Integer) for v in numbers):
        raise LoweringError("ctc_loss of symbolic strides")
    if any(_last_offset(at) >= 2**31 for at in (probs_at, labels_at)):
        raise LoweringError("ctc_loss of offsets past int32 (the kernel's are int32)")
    element_stride = int(labels_at.stride[0])
    starts = ([b * element_stride for b in range(len(target_lengths))]
              if len(targets.size) == 2 else
              [sum(target_lengths[:b]) * element_stride for b in range(len(target_lengths))])
    device = log_probs.device

    def lengths(values: list[int]) -> torch.Tensor:
        return torch.tensor(values, dtype=torch.int64, device=device)
    batch = log_probs.size[1]
    layout = Layout((batch,), contiguous_strides((batch,)), sympy.Integer(0), log_probs.dtype,
                    device)
    args = (probs, labels, lengths(input_lengths), lengths(target_lengths),
            lengths([int(labels_at.offset) + start for start in starts]), probs_at.offset,
            *probs_at.stride, labels_at.stride[-1], max(input_lengths), log_probs.size[2], blank)
    loss = lower.add(TemplateKernel(lower.new_name(), layout, kernel=ctc_loss_kernel, args=args,
                                    xnumel=batch, rnumel=sympy.Integer(2 * max(target_lengths) + 1)))
    return [loss, None]
