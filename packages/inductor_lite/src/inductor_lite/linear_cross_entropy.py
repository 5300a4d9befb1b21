"""`F.linear_cross_entropy`'s chunked custom ops as the matmul and cross entropy they compute.

With `options` given, `F.linear_cross_entropy` calls `torch_nn::_linear_cross_entropy_batch_chunked`
(reduction "mean" or "sum") or `..._no_reduction` (reduction "none"): a loop over chunks of the
batch that never holds all the logits at once. Unchunked, the loss of row `n` is
`w[t] * (logsumexp(logits[n]) - logits[n, t])` with `logits = input @ linear_weight.T + bias`,
`t = target[n]` and `w` the class weights (all 1 without them), 0 where `t == ignore_index`; the
mean divides the sum of these by the sum of the weights of the rows not ignored (NaN when there
are none, as eager's). The decompositions below trace that: an extern matmul and kernels. They
decline (the op stays whole, an eager fallback) where the op would do more or differ: gradients
it precomputes in its forward, mixed dtypes (a half input accumulated in float32), and arguments
eager raises on.
"""

from __future__ import annotations

from typing import Any

import torch

try:  # defines the torch_nn ops; torch before 2.12 has neither them nor F.linear_cross_entropy
    import torch.nn.modules.linear_cross_entropy  # noqa: F401
except ModuleNotFoundError:
    HAS_OPS = False
else:
    HAS_OPS = True

torch_nn = torch.ops.torch_nn


def _declined(input: torch.Tensor, linear_weight: torch.Tensor, target: torch.Tensor,
              linear_bias: torch.Tensor | None, weight: torch.Tensor | None,
              acc_dtype: torch.dtype) -> bool:
    """Whether the op's arguments are other than those traced here: a 2-d input and linear
    weight, int64 targets, every float tensor (and the accumulation) of the input's dtype."""
    floats = [t for t in (linear_weight, linear_bias, weight) if t is not None]
    return (input.dim() != 2 or linear_weight.dim() != 2 or target.dtype != torch.int64
            or not input.dtype.is_floating_point or acc_dtype != input.dtype
            or any(t.dtype != input.dtype for t in floats))


def _row_losses(input: torch.Tensor, linear_weight: torch.Tensor, target: torch.Tensor,
                linear_bias: torch.Tensor | None, weight: torch.Tensor | None,
                ignore_index: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Each row's loss and its weight (both 0 where the target is `ignore_index`)."""
    logits = torch.mm(input, linear_weight.t())
    if linear_bias is not None:
        logits = logits + linear_bias
    ignored = target == ignore_index
    kept_target = torch.where(ignored, 0, target)
    shifted = logits - logits.amax(1, keepdim=True)
    picked = shifted.gather(1, kept_target.unsqueeze(1)).squeeze(1)
    log_denominator = shifted.exp().sum(1).log()
    row_weight = torch.ones_like(picked) if weight is None else weight[kept_target]
    row_weight = torch.where(ignored, 0, row_weight)
    return row_weight * (log_denominator - picked), row_weight


def _chunked(input: torch.Tensor, linear_weight: torch.Tensor, target: torch.Tensor,
             linear_bias: torch.Tensor | None, weight: torch.Tensor | None, reduction: str,
             ignore_index: int, label_smoothing: float, batch_chunk_size: int, acc_policy: str,
             acc_dtype: torch.dtype, allow_retain_graph: bool, compute_input_grad: bool,
             compute_linear_weight_grad: bool, compute_linear_bias_grad: bool) -> Any:
    """(loss, and the empty gradients of a forward asked for none)."""
    if (compute_input_grad or compute_linear_weight_grad or compute_linear_bias_grad
            or reduction not in ("mean", "sum") or label_smoothing != 0.0
            or _declined(input, linear_weight, target, linear_bias, weight, acc_dtype)):
        return NotImplemented
    losses, row_weights = _row_losses(input, linear_weight, target, linear_bias, weight,
                                      ignore_index)
    loss = losses.sum() if reduction == "sum" else losses.sum() / row_weights.sum()
    return (loss, input.new_empty((0, 0)), input.new_empty((0, 0)), input.new_empty((0,)))


def _chunked_no_reduction(input: torch.Tensor, linear_weight: torch.Tensor,
                          target: torch.Tensor, linear_bias: torch.Tensor | None,
                          weight: torch.Tensor | None, ignore_index: int, batch_chunk_size: int,
                          acc_policy: str, acc_dtype: torch.dtype) -> Any:
    if _declined(input, linear_weight, target, linear_bias, weight, acc_dtype):
        return NotImplemented
    return _row_losses(input, linear_weight, target, linear_bias, weight, ignore_index)[0]


DECOMPOSITIONS = {
    torch_nn._linear_cross_entropy_batch_chunked.default: _chunked,
    torch_nn._linear_cross_entropy_batch_chunked_no_reduction.default: _chunked_no_reduction,
} if HAS_OPS else {}
