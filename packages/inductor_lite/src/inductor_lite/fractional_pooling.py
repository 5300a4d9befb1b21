"""Fractional max pooling (2-d and 3-d) as pointwise kernels, from its given random samples.

Each plane (batch, channel) of `_random_samples` holds one number `u` per pooled dim (in the
order width, height for 2-d; depth, height, width for 3-d, as eager reads them). Along a dim
of `n` inputs pooled to `m` outputs by windows of `k`, output `i` starts at eager's
`trunc((i + u) * alpha) - trunc(u * alpha)`, `alpha = (n - k) / (m - 1)`, all in the input's
float type, and the last output at `n - k`. `alpha` is rounded on the host as eager's division
rounds it (for a symbolic `n` the wrapper divides in Python: its float64 quotient of two ints
rounds to the float32 kernel argument as float32 division does). Each output then unrolls its
window, whose taps all lie inside the input, into max pooling's running maximum
(`max_pooled`): the last NaN, else the first maximum, its index flat over the input's pooled
dims. Half floats are refused (eager rounds every step of the start to them), and so are
float64 inputs of symbolic pooled sizes (kernels take the wrapper's floats as float32).
"""

from __future__ import annotations

import itertools
import math

import sympy
import torch

from .ir import IndirectIndex, LoweringError, Value, constant, loader, op, to_dtype
from .lowering import HostOp, aten, max_pooled, register, sym

# taps one output may read: past it, the kernel's code grows too large
MAX_WINDOW_TAPS = 1024


def _alpha(lower, n: sympy.Expr, m: int, k: int, cd: torch.dtype) -> Value:
    """`(n - k) / (m - 1)` as eager's division in `cd` rounds it."""
    if n.is_Integer:
        return constant(torch.tensor(int(n) - k, dtype=cd).div(m - 1).item(), cd)
    if cd != torch.float32:
        raise LoweringError("fractional max pooling of a symbolic size in float64 (kernels "
                            "take the wrapper's floats as float32)")
    return constant(lower._wrapper_value(HostOp("{0} / {1}", (n - k, m - 1))), cd)


def _window_start(o: sympy.Expr, u: Value, n: sympy.Expr, m: int, k: int,
                  alpha: Value | None) -> Value:
    """Where output `o` of `m` starts its window of `k` along a dim of `n` inputs, from the
    plane's sample `u` (and `_alpha`, None where `m` is 1), as eager's `generate_intervals`
    computes it."""
    i64, cd = torch.int64, u.dtype
    last = Value("index", (n - k,), i64)
    if alpha is None:
        return last
    position = Value("index", (o,), i64)
    start = op("sub", to_dtype(op("mul", op("add", to_dtype(position, cd), u), alpha), i64),
               to_dtype(op("mul", u, alpha), i64))
    return Value("where", (op("lt", position, constant(m - 1, i64), dtype=torch.bool), start,
                           last), i64)


def _fractional_max_pool(lower, x, kernel_size, output_size, samples, sample_of_dim):
    """(values, indices) of fractional max pooling over the last `len(sample_of_dim)` dims of
    `x`; pooled dim `d` reads sample `sample_of_dim[d]` of its plane."""
    dims = len(sample_of_dim)
    vals = lower.node.meta["val"]
    if x.dtype not in (torch.float32, torch.float64) or samples.dtype != x.dtype:
        raise LoweringError("fractional max pooling of half floats (eager rounds its window "
                            "starts to them)")
    if len(x.size) not in (dims + 1, dims + 2):
        raise LoweringError("fractional max pooling of an input of another rank")
    ins = x.size[-dims:]
    kernel, outs = [int(k) for k in kernel_size], [int(m) for m in output_size]
    if min(kernel) < 1 or math.prod(kernel) > MAX_WINDOW_TAPS:
        raise LoweringError("fractional max pooling by an empty or a very large window")
    alphas = [None if m == 1 else _alpha(lower, n, m, k, x.dtype)
              for n, m, k in zip(ins, outs, kernel)]
    size = tuple(sym(s) for s in vals[0].shape)
    load, load_sample = loader(x), loader(samples)
    batched = len(x.size) == dims + 2

    def taps(idx):
        lead, pooled = idx[:-dims], idx[-dims:]
        plane = [lead[0] if batched else sympy.Integer(0), lead[-1]]
        starts = [_window_start(o, load_sample([*plane, s]), n, m, k, alpha)
                  for o, s, n, m, k, alpha in zip(pooled, sample_of_dim, ins, outs, kernel,
                                                  alphas)]
        for offsets in itertools.product(*(range(k) for k in kernel)):
            where = [IndirectIndex(op("add", start, constant(t, torch.int64)), n, wraps=False)
                     for start, t, n in zip(starts, offsets, ins)]
            flat = sympy.Integer(0)
            for i, n in zip(where, ins):
                flat = flat * n + i
            yield flat, constant(True, torch.bool), load([*lead, *where])

    return max_pooled(size, vals, taps)


@register(aten.fractional_max_pool2d.default)
def _fractional_max_pool2d(lower, node, x, kernel_size, output_size, random_samples):
    return _fractional_max_pool(lower, x, kernel_size, output_size, random_samples, (1, 0))


@register(aten.fractional_max_pool3d.default)
def _fractional_max_pool3d(lower, node, x, kernel_size, output_size, random_samples):
    return _fractional_max_pool(lower, x, kernel_size, output_size, random_samples, (0, 1, 2))
