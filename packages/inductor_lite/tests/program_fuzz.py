"""A seeded fuzzer for wrong values of `inductor_lite.compile_fx` on random small programs.

A seed makes a case: input tensors (a float `x`, maybe non-contiguous, a contiguous `y` of the
same shape and dtype, an int64 `i` and a bool `m`; float32 or float16; small sizes, sometimes 1
or 0) and a program, a list of steps applied to a running value `a` (at first `x`). Steps mix
pointwise ops (unary, binary with type promotion, integer division and remainder, comparisons,
where, masked_fill, clamp with tensor bounds, pow), views and slices, reductions, scans,
normalisations, indexing (gather, index_select, advanced indexing, index_put, scatter_add,
scatter_reduce, embedding), cat/stack/split/pad/flip/roll/repeat/tril, small matmuls, in-place
ops on intermediates, writes into a slice of an input, and extra outputs (some views of others
or of inputs). A step whose op does not fit the running value's dtype or rank adapts it or does
nothing, so the same program runs on any shape.

Seeds from 1,000,000 (`EXTENDED_SEEDS`) also draw bfloat16 and int32 inputs and steps of more
families: activations (hardtanh, softplus, GELU, ELU, SiLU, Mish, eval-mode dropout, where with
scalars), integer ops (bitwise, shifts, int powers, clamp_min), pooling, interpolation and small
convolutions, sorts, top values, bucketize/searchsorted, one_hot, masked_scatter, and
reductions over several dims (std/var with a correction, logsumexp, softmax over a dim not
last). Seeds below it make the programs they always made.

The program is traced with `fxtrace.make_fx` ("real", then "symbolic" and called on two more
shapes of the same rank), compiled with `compile_fx` and run on copies of the inputs; outputs
and the inputs afterwards must equal eager's (exactly for ints and bools; with half inputs an
element may instead be eager's on float32 copies, as the kernels keep half values of a chain
in float32 and a floor or comparison after one may jump as float32's does). A program eager
refuses is skipped; a crash of compile_fx or of the compiled function is a failure.

    python packages/inductor_lite/tests/program_fuzz.py --start 0 --n 500   # a sweep of seeds
    python packages/inductor_lite/tests/program_fuzz.py --seed 17 --show    # one case, its steps
    python packages/inductor_lite/tests/program_fuzz.py --start 1000000 --n 300  # new families
"""

from __future__ import annotations

import argparse
import math
import os
import random
import sys
import traceback
import warnings
from collections.abc import Callable

if __name__ == "__main__":  # kernels run through Triton's interpreter (tests: conftest.py)
    os.environ.setdefault("INDUCTOR_LITE_TRITON_CPU", "1")
    os.environ.setdefault("TRITON_INTERPRET", "1")

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from fxtrace import make_fx  # noqa: E402
from inductor_lite import compile_fx  # noqa: E402


class Inputs:
    """The program's inputs, the extra outputs its steps collect, whether the seed is
    extended (its steps may guard against what older seeds' programs never met) and the
    case's input dtype (the same in a run on float32 copies of half inputs)."""

    def __init__(self, x: torch.Tensor, y: torch.Tensor, i: torch.Tensor, m: torch.Tensor,
                 extended: bool, dtype: torch.dtype):
        self.x, self.y, self.i, self.m = x, y, i, m
        self.extended = extended
        self.dtype = dtype
        self.outs: list[torch.Tensor] = []


def _float(a):
    return a if a.is_floating_point() else a.float()


def _int(a):
    return a.long() if a.is_floating_point() else a.to(torch.int64)


def _dim(a, r):
    return (r % a.dim()) - a.dim() if a.dim() else 0


def _partner(a, c, r):
    """Something that broadcasts with `a`: an input of its shape, a flip, a row or a scalar."""
    k = r % 6
    if a.shape == c.x.shape and k < 3:
        return (c.y, c.i, c.m)[k]
    if k == 3 and a.dim():
        return a.flip(0)
    if k == 4 and a.dim():
        return a.narrow(-1, 0, 1) if a.shape[-1] else a
    return (2, 0.5, -3, True, 1.5, 3)[r % 6]


def _positions(n, length, r):
    """`length` int64 positions in a dim of size `n`."""
    return (torch.arange(length) * (r % 5 + 1) + r) % max(n, 1)


def _index(n, length, r):
    """`length` int64 positions in a dim of size `n`, negative ones sometimes."""
    idx = _positions(n, length, r)
    return idx - n if r % 3 == 0 else idx


def _to_half(a):
    return a.to(torch.float16)


UNARY = [torch.exp, torch.tanh, torch.sigmoid, torch.abs, torch.neg, torch.sin, torch.floor,
         torch.round, torch.sign, torch.erf, torch.relu,
         lambda a: _float(a).abs().sqrt(), lambda a: _float(a).abs().log1p(),
         lambda a: torch.rsqrt(_float(a).abs() + 1), lambda a: a.clamp(-0.5, 0.5),
         lambda a: ~a if a.dtype in (torch.bool, torch.int64) else a.reciprocal(),
         _to_half, lambda a: a.to(torch.float32), _int,
         lambda a: a > 0,
         # (infinities to 1e4, not float32's max: a norm's sum of that overflows, a known gap)
         lambda a: torch.nan_to_num(a.log(), posinf=1e4, neginf=-1e4)
         if a.is_floating_point() else a]


def _binary(a, c, r):
    b = _partner(a, c, r // 7)
    k = r % 24
    ops = [torch.add, torch.sub, torch.mul, torch.div, torch.maximum, torch.minimum,
           lambda a, b: torch.div(a, b, rounding_mode="floor"),
           lambda a, b: torch.div(a, b, rounding_mode="trunc"),
           torch.floor_divide, torch.remainder, torch.fmod, torch.eq, torch.lt, torch.ge,
           torch.ne, torch.logical_and, torch.logical_xor,
           lambda a, b: _int(a) & b, lambda a, b: _int(a) | b,
           lambda a, b: torch.pow(_float(a).abs() + 0.5, b),
           lambda a, b: torch.pow(a, 2), torch.atan2,
           lambda a, b: a * b + 1, lambda a, b: torch.lerp(_float(a), _float(b), 0.3)]
    if k in (4, 5, 15, 16, 21, 23) and not torch.is_tensor(b):
        b = torch.tensor(b)
    if k in (6, 7, 8, 9, 10) and r % 2:  # integer division and remainder
        a, b = _int(a), (_int(b) if torch.is_tensor(b) else int(b) or 3)
        if k == 7:  # eager's trunc division of int64's min (a cast -inf) by -1 dies of SIGFPE
            a = a.clamp(min=-2**63 + 1)
    elif k in (6, 7, 8, 9, 10) and c.extended and a.is_floating_point():
        # a float of whole numbers past 2**24 (a dot product of int32 inputs' cumprods) is
        # rounded as its sum's order has it, and its remainder is then any (seed 1001911)
        a = a.clamp(-2**24, 2**24)
    return ops[k](a, b)


def _select(a, c, r):
    k = r % 7
    if k == 0:
        return torch.where(c.m if a.shape == c.m.shape else a > 0, a, _partner(a, c, r // 7))
    if k == 1:
        return a.masked_fill(_float(a) > 0.2, (-1.5, 0, 7)[r // 7 % 3])
    if k == 2:
        lo = _partner(a, c, r // 7)
        return torch.clamp(_float(a), min=lo if torch.is_tensor(lo) else None, max=torch.ones(()))
    if k == 3:
        return torch.clamp(a, min=torch.full((), -1, dtype=a.dtype),
                           max=torch.zeros(a.shape[-1:], dtype=a.dtype))
    if k == 4:
        return torch.where(_float(a) < 0.5, 0.0, a)
    if k == 5:
        return a.masked_fill(c.m, float("-inf")) if a.shape == c.m.shape else a
    return torch.where(c.m, c.i, 1) if a.shape == c.m.shape else a.bool()


def _view(a, c, r):
    k, d = r % 16, _dim(a, r // 16)
    if a.dim() == 0:
        return a.unsqueeze(0).expand(3)
    ops = [lambda: a.transpose(0, -1), lambda: a[1:], lambda: a.narrow(d, 0, max(a.shape[d] - 1, 0)),
           lambda: a.select(d, -1), lambda: a.unbind(d)[0], lambda: a.flatten(),
           lambda: a.unsqueeze(0).expand(2, *a.shape), lambda: a.permute(*reversed(range(a.dim()))),
           lambda: a.transpose(0, -1).reshape(-1), lambda: a.unfold(d, 2, 1),
           lambda: a.diagonal(0, 0, -1) if a.dim() >= 2 else a, lambda: a.movedim(0, -1)[..., ::2],
           lambda: a[..., ::3], lambda: c.y.as_strided((c.y.numel() // 2,), (2,)),
           lambda: a.view(-1) if a.is_contiguous() else a.reshape(-1),
           lambda: a.unsqueeze(d).squeeze(d)]
    return ops[k]()


def _reduce(a, c, r):
    if a.dim() == 0:
        return a
    d, keep = _dim(a, r // 20), bool(r // 40 % 2)
    dims = (0, -1) if a.dim() >= 2 and r % 3 == 0 else d
    f = _float(a)
    ops = [lambda: a.sum(dims, keepdim=keep), lambda: f.mean(dims, keepdim=keep),
           lambda: a.amax(dims, keepdim=keep), lambda: a.amin(d, keepdim=keep),
           lambda: a.argmax(d, keepdim=keep), lambda: a.argmin(), lambda: a.prod(d),
           lambda: f.var(dims, keepdim=keep), lambda: f.std(d, correction=0),
           lambda: f.logsumexp(dims, keepdim=keep), lambda: a.any(d), lambda: a.all(dims),
           lambda: a.sum(d, dtype=torch.float64), lambda: a.sum(), lambda: f.mean(),
           lambda: a.sum(d, dtype=torch.int64), lambda: torch.var_mean(f, d)[r % 2],
           lambda: f.norm(dim=d), lambda: a.max(d)[r % 2], lambda: a.count_nonzero(d)]
    return ops[r % 20]()


def _scan(a, c, r):
    d = _dim(a, r // 5)
    ops = [lambda: a.cumsum(d), lambda: _float(a).cumprod(d), lambda: a.cummax(d)[r // 3 % 2],
           lambda: _float(a).logcumsumexp(d), lambda: a.cummin(d).values]
    return ops[r % 5]()


def _normalise(a, c, r):
    f, d = _float(a), _dim(a, r // 5)
    if a.dim() == 0:
        return f.softmax(0)
    if r % 5 == 0:
        return f.softmax(d)
    if r % 5 == 1:
        return f.log_softmax(d, dtype=torch.float32)
    # eps 1e-3, not 1e-5: a row of nearly equal values (a spread of 0.5%, seed 1001285)
    # normalises its rounding errors by 1/sqrt(var + eps), and a reciprocal after the shift
    # below took eager's and our different roundings past the tolerance
    eps = 1e-3
    if r % 5 == 2:
        n = a.shape[-1]
        normed = F.layer_norm(f, (n,), torch.linspace(0.5, 1.5, n, dtype=f.dtype), None, eps)
    elif r % 5 == 3 and a.dim() >= 2:
        normed = F.group_norm(f, 1 if r % 2 else a.shape[1], eps=eps)
    else:
        normed = F.layer_norm(f, f.shape[-2:] if a.dim() >= 2 else f.shape, eps=eps)
    # A norm's row sums to 0 up to rounding, and a row of equal values normalises to rounding
    # errors alone (amplified by 1/sqrt(eps)): shifted, a sum or comparison after it no longer
    # takes the sign of how the compiled and eager means round (seeds 4647, 5749, 5929). The
    # shift is the golden ratio's fraction: a row's n shifts, summed (a cumsum's last value),
    # stay at least 1/(3n) from a whole number, where 0.75 made 24 * 0.75 = 18 that a floor
    # after it took to 17 or 18 as the sums rounded (seed 1003954)
    return normed + 0.618034


def _indexing(a, c, r):
    if a.dim() == 0:
        a = a.reshape(1)
    d = _dim(a, r // 10)
    n = a.shape[d]
    k = r % 10
    if k == 0:
        shape = list(a.shape)
        shape[d] = max(n - 1, 1)
        idx = _positions(n, shape[d], r).reshape([-1 if j == d % a.dim() else 1
                                                    for j in range(a.dim())]).expand(shape)
        return a.gather(d, idx)
    if k == 1:
        return a.index_select(d, _positions(n, 3, r))
    if k == 2:
        return a[_index(a.shape[0], 4, r)]
    if k == 3:
        return a[:, _index(a.shape[-1], 2, r)] if a.dim() >= 2 else a[a > 0]
    if k == 4:
        return a.index_put((_index(a.shape[0], 3, r),), torch.ones((), dtype=a.dtype),
                           accumulate=bool(r // 10 % 2))
    if k == 5:
        idx = _positions(a.shape[0], a.shape[0], r)
        idx = idx.reshape([-1] + [1] * (a.dim() - 1)).expand(a.shape)
        return a.scatter_add(0, idx, a)
    if k == 6:
        idx = _positions(a.shape[0], a.shape[0], r + 1)
        idx = idx.reshape([-1] + [1] * (a.dim() - 1)).expand(a.shape)
        reduce = ("sum", "prod", "mean", "amax", "amin")[r // 10 % 5]
        return a.scatter_reduce(0, idx, _float(a).to(a.dtype) * 2, reduce,
                                include_self=bool(r // 50 % 2))
    if k == 7:
        table = _float(a).reshape(a.shape[0], -1)
        return F.embedding(_positions(a.shape[0], 5, r).reshape(-1, 1), table)
    if k == 8:
        return a.index_fill(d, _positions(n, 2, r), -2)
    return a.index_add(d, _positions(n, n, r), a)


def _shape(a, c, r):
    if a.dim() == 0:
        a = a.reshape(1, 1)
    d = _dim(a, r // 12)
    ops = [lambda: torch.cat([a, a * 2], d), lambda: torch.stack([a, a.flip(d)], d),
           lambda: a.split(2, d)[-1], lambda: a.chunk(3, d)[0],
           lambda: F.pad(a, (1, 2)), lambda: F.pad(_float(a), (0, 0, 1, 0), value=-1.0),
           lambda: a.flip(d), lambda: a.roll(r % 3 + 1, d), lambda: a.repeat(2, *[1] * a.dim()),
           lambda: a.tril(1) if a.dim() >= 2 else a.repeat_interleave(2, d),
           lambda: a.triu(-1) if a.dim() >= 2 else a, lambda: torch.cat([c.x.flatten(), a.flatten()])]
    return ops[r % 12]()


def _matmul(a, c, r):
    f = _float(a)
    if a.dim() == 0:
        return f * f
    if r % 3 == 0:
        return f @ f.transpose(-1, -2) if a.dim() >= 2 else f @ f
    if r % 3 == 1 and a.dim() == 3:
        return torch.bmm(f, f.transpose(1, 2))
    shape = (a.shape[-1], 2)
    weight = (_quarters(shape, f.dtype) if c.extended
              else torch.linspace(-1, 1, math.prod(shape), dtype=f.dtype).reshape(shape))
    return torch.matmul(f, weight)


def _in_place(a, c, r):
    k = r % 6
    if k == 0:
        return a.clone().add_(_partner(a, c, r // 6))
    if k == 1:
        b = a * 1
        b.mul_(2)
        return b
    if k == 2 and a.dim():
        b = a.clone()
        b[..., :1].copy_(b[..., -1:])
        return b
    if k == 3 and a.dim():
        b = a.clone()
        b.narrow(0, 0, 1).fill_(3)
        return b
    if k == 4:
        return a.add_(1) if a.is_floating_point() else a  # may write into an input
    b = a.clone()
    b.transpose(0, -1)[0:1].mul_(-1) if b.dim() else b.neg_()
    return b


def _input_write(a, c, r):
    k = r % 4
    if k == 0:
        c.x[..., ::2].mul_(2)
    elif k == 1:
        c.y.narrow(0, 0, 1).add_(_float(a).sum().to(c.y.dtype) if k else 1)
    elif k == 2:
        c.i[0:1].copy_(c.i[-1:].clone())
    else:
        c.m.logical_not_()
    return a


def _collect(a, c, r):
    k = r % 4
    if k == 0:
        c.outs.append(a)
    elif k == 1 and a.dim():
        c.outs.append(a[0])
    elif k == 2:
        c.outs.append(c.x.t() if c.x.dim() == 2 else c.x)
    else:
        c.outs.append(a.flatten())
    return a


BASE_STEPS: list[Callable] = [lambda a, c, r: UNARY[r % len(UNARY)](a), _binary, _select, _view,
                              _reduce, _scan, _normalise, _indexing, _shape, _matmul, _in_place,
                              _input_write, _collect]
# How often each kind of step is drawn (pointwise ops and views most).
WEIGHTS = [5, 6, 3, 5, 3, 1, 1, 2, 2, 1, 2, 1, 2]


# Seeds from EXTENDED_SEEDS on also draw bfloat16 and int32 inputs and the step families below;
# their draws come after all of an older seed's, so seeds below it make the programs they made.
EXTENDED_SEEDS = 1_000_000


def _activation(a, c, r):
    f = _float(a)
    # GELU's arguments from -2.5 up: below, 1 + erf (or tanh) cancels to a few dozen float32
    # ulps, eager's CPU erf and ours differ by an ulp or two there (gelu(-5) is -1.19e-6 in
    # eager, -1.49e-6 compiled, -1.43e-6 exactly) and a reciprocal after it took the 25%
    # past the tolerance (seed 1004531)
    ops = [lambda: F.hardtanh(f, -0.5, 1.0), lambda: F.softplus(f, beta=2.0, threshold=1.0),
           lambda: F.gelu(f.clamp(min=-2.5), approximate="tanh"),
           lambda: F.gelu(f.clamp(min=-2.5)), lambda: F.elu(f),
           lambda: F.leaky_relu(f, 0.1), lambda: F.silu(f), lambda: F.mish(f),
           lambda: F.dropout(a, 0.5, training=False), lambda: F.relu6(a * 4),
           lambda: torch.where(_float(a) > 0, 1.5, -2), lambda: torch.where(c.m, a, 2)
           if a.shape == c.m.shape else torch.where(a != 0, 3, a), lambda: _to_bfloat16(a, c),
           lambda: a.to(torch.int32)]
    return ops[r % ACTIVATIONS]()


def _to_bfloat16(a, c):
    """A cast to bfloat16, none in a case of bfloat16 inputs: there the graph has no cast and the
    kernels keep the chain in float32, but a run on float32 copies would round it to bfloat16
    here, and an int cast or cancellation after it then matches eager's, not the kernels'
    (seeds 1002663, 1002987)."""
    return a if c.dtype == torch.bfloat16 else a.to(torch.bfloat16)


ACTIVATIONS, BFLOAT16_ACTIVATION = 14, 12  # _activation's ops, the cast to bfloat16 among them


def _integer(a, c, r):
    """Integer-only ops (bitwise, shifts, int powers, clamp_min); floats are cast to int32."""
    n = a.to(torch.int32) if a.is_floating_point() else a
    b = c.i if a.shape == c.i.shape and r // 9 % 2 else 3
    ops = [lambda: n ^ b, lambda: n & 6, lambda: n | b, lambda: ~n if n.dtype != torch.bool else n,
           lambda: n.clamp(min=1 - 2 * (r % 2)) if n.dtype != torch.bool else n,
           lambda: n << 2, lambda: n >> 1, lambda: n ** 2, lambda: _float(a) ** (-2 + r // 9 % 5)]
    return ops[r % 9]()


def _quarters(shape: tuple[int, ...], dtype: torch.dtype) -> torch.Tensor:
    """Weights of quarters from -3/4 to 3/4: a matmul or convolution of whole numbers by them
    is exact in any order (linspace's 2/29ths made a whole -13 that eager summed to -12.999999
    and the kernel to -13.000001, and a cast to int after it 12 or 13: seed 1002029; its 2/9ths
    times a mask summed to a whole 16 or 15.999999, and its remainder by 2 was 0 or 1: seed
    1006435)."""
    return ((torch.arange(math.prod(shape)) % 7 - 3) / 4).reshape(shape).to(dtype)


def _pool(a, c, r):
    """Pooling, interpolation and small convolutions of a float value of rank 2 to 4."""
    f = _float(a)
    if not 2 <= a.dim() <= 4:
        return a
    k, pad, ceil = 1 + r // 16 % 2, r // 32 % 2, bool(r // 64 % 2)
    if a.dim() == 4 and r % 16 < 3:
        return [lambda: F.max_pool2d(f, 2, 1, pad, ceil_mode=ceil),
                lambda: F.avg_pool2d(f, 2, k, pad, ceil_mode=ceil, count_include_pad=ceil),
                lambda: F.conv2d(f, _quarters((2, f.shape[1], 2, 2), f.dtype),
                                 padding=pad)][r % 16]()
    if a.dim() == 4 and r % 16 < 6:
        mode = ("nearest", "bilinear", "bicubic")[r % 16 - 3]
        align = None if mode == "nearest" else bool(r // 32 % 2)
        return F.interpolate(f, scale_factor=(2, 1.5), mode=mode, align_corners=align)
    lead = f if a.dim() == 3 else f.reshape(-1, *f.shape[-2:])
    ops = [lambda: F.max_pool1d(lead, 2, k, pad, ceil_mode=ceil),
           lambda: F.avg_pool1d(lead, 3, k, pad, ceil_mode=ceil),
           lambda: F.adaptive_avg_pool1d(lead, 3), lambda: F.adaptive_max_pool1d(lead, 2),
           lambda: F.interpolate(lead, scale_factor=2, mode="linear", align_corners=ceil),
           lambda: F.interpolate(lead, size=5, mode="nearest"),
           lambda: F.conv1d(lead, _quarters((3, lead.shape[1], 2), f.dtype),
                            torch.ones(3, dtype=f.dtype), padding=pad),
           lambda: F.max_pool2d(f, 2, 1, pad, ceil_mode=ceil),
           lambda: F.avg_pool2d(f, (1, 2), k), lambda: F.adaptive_avg_pool2d(f, (2, 3))]
    return ops[r % len(ops)]()


def _sort(a, c, r):
    """Sorts, top values and searches of rows (values only of floats whose ties may differ)."""
    if a.dim() == 0:
        return a
    d = _dim(a, r // 10)
    exact = not a.is_floating_point() or a.dtype == torch.float32
    ops = [lambda: a.sort(dim=d, descending=bool(r // 20 % 2), stable=True)[0],
           lambda: a.sort(dim=d, stable=True)[1] if exact else a.msort(),
           lambda: a.argsort(dim=d, stable=True) if exact else a.sort(d)[0],
           lambda: a.topk(min(2, a.shape[d]), d, largest=bool(r // 20 % 2)).values,
           lambda: torch.bucketize(a, torch.tensor([-1.0, 0.0, 0.5, 2.0]), right=bool(r // 20 % 2)),
           lambda: torch.searchsorted(torch.tensor([-2, -1, 0, 1, 3], dtype=a.dtype), a)
           if a.dtype in (torch.float32, torch.int32, torch.int64) else a,
           lambda: F.one_hot(_int(a).clamp(0, 3), 4),
           lambda: a.masked_scatter(c.m, c.y.to(a.dtype) * 2) if a.shape == c.m.shape else a,
           lambda: _float(a).cumsum(d, dtype=torch.float32), lambda: a.cumprod(d)]
    return ops[r % 10]()


def _reduce_more(a, c, r):
    """Reductions over several dims, with a correction, and normalisations over a dim not last."""
    if a.dim() < 2:
        return a
    f = _float(a)
    dims = (0, -1) if r // 8 % 2 else (-2, -1)
    exact = not a.is_floating_point() or a.dtype == torch.float32
    ops = [lambda: a.amax(dims), lambda: a.amin(dims, keepdim=True),
           lambda: a.argmax(0, keepdim=True) if exact else a.max(0).values,
           lambda: f.std(dims, correction=2), lambda: f.var(dims, correction=0, keepdim=True),
           lambda: f.logsumexp(dims), lambda: f.softmax(0), lambda: f.log_softmax(-2)]
    return ops[r % 8]()


EXTRA_STEPS: list[Callable] = [_activation, _integer, _pool, _sort, _reduce_more]


def _casts_to_half(kind: int, r: int) -> bool:
    if kind == 0:
        return UNARY[r % len(UNARY)] is _to_half
    return kind == len(BASE_STEPS) and r % ACTIVATIONS == BFLOAT16_ACTIVATION


class Case:
    """One seed's inputs (a recipe, so other shapes can be made) and program."""

    def __init__(self, seed: int):
        rng = random.Random(seed)
        self.seed = seed
        rank = rng.choice([1, 2, 2, 3, 3, 4])
        self.shape = [rng.choice([1, 2, 3, 4, 5, 7]) for _ in range(rank)]
        if rng.random() < 0.05:
            self.shape[rng.randrange(rank)] = 0
        self.dtype = torch.float16 if rng.random() < 0.25 else torch.float32
        self.transposed = rank >= 2 and rng.random() < 0.3
        self.steps = [(rng.choices(range(len(WEIGHTS)), WEIGHTS)[0], rng.randrange(10_000))
                      for _ in range(rng.randrange(2, 9))]
        self.other_shapes = [[max(1, n + rng.randrange(-1, 3)) for n in self.shape]
                             for _ in range(2)]
        self.data_seed = rng.randrange(2**31)
        if seed >= EXTENDED_SEEDS:
            self.dtype = rng.choice([torch.float32, torch.float16, torch.bfloat16, torch.int32])
            for _ in range(rng.randrange(1, 4)):
                step = (len(WEIGHTS) + rng.randrange(len(EXTRA_STEPS)), rng.randrange(10_000))
                self.steps.insert(rng.randrange(len(self.steps) + 1), step)
        # float16 or bfloat16 anywhere (an input or a cast) rounds differently once ops are fused
        self.half = self.dtype in (torch.float16, torch.bfloat16) or any(
            _casts_to_half(k, r) for k, r in self.steps)

    def inputs(self, shape: list[int]) -> list[torch.Tensor]:
        g = torch.Generator().manual_seed(self.data_seed)
        scale = 1 if self.dtype.is_floating_point else 4  # int32 inputs: small ints, not 0s
        x = (torch.randn(*shape, generator=g) * scale).to(self.dtype)
        if self.transposed:
            x = (torch.randn(*reversed(shape), generator=g) * scale).to(self.dtype).permute(
                *reversed(range(len(shape))))
        y = (torch.randn(*shape, generator=g) * scale).to(self.dtype)
        i = torch.randint(-5, 6, shape, generator=g)
        m = torch.rand(*shape, generator=g) > 0.5
        return [x, y, i, m]

    def program(self, x, y, i, m):
        c = Inputs(x, y, i, m, self.seed >= EXTENDED_SEEDS, self.dtype)
        a = x
        steps = BASE_STEPS + EXTRA_STEPS
        for kind, r in self.steps:
            a = steps[kind](a, c, r)
        return [a, *c.outs]

    def describe(self) -> str:
        names = ["unary", "binary", "select", "view", "reduce", "scan", "normalise", "indexing",
                 "shape", "matmul", "in_place", "input_write", "collect", "activation",
                 "integer", "pool", "sort", "reduce_more"]
        steps = ", ".join(f"{names[k]}({r})" for k, r in self.steps)
        return (f"seed {self.seed}: shape {self.shape} {self.dtype} transposed={self.transposed}"
                f" others {self.other_shapes}\n  steps: {steps}")


def _copies(tensors: list[torch.Tensor]) -> list[torch.Tensor]:
    return [torch.empty_strided(t.shape, t.stride(), dtype=t.dtype).copy_(t) for t in tensors]


def _close(a: torch.Tensor, b: torch.Tensor, tol: float) -> torch.Tensor:
    if a.is_floating_point():
        return torch.isclose(a, b, rtol=tol, atol=tol, equal_nan=True)
    return a == b


def _compare(got: list, want: list, what: str, tol: float, upcast: list | None = None) -> None:
    """`got` must equal `want`, eager's results; an element may instead be `upcast`'s (eager's
    on float32 copies of half inputs) if given: the kernels keep a chain's half values in
    float32, so a jump after one (a floor, round or comparison) may land as float32's does."""
    if len(got) != len(want):
        raise AssertionError(f"{what}: {len(got)} results, eager gives {len(want)}")
    for n, (g, w) in enumerate(zip(got, want)):
        if g.dtype != w.dtype or g.shape != w.shape:
            raise AssertionError(f"{what}[{n}]: {g.dtype}{tuple(g.shape)} vs eager "
                                 f"{w.dtype}{tuple(w.shape)}")
        if upcast is not None and upcast[n].shape == w.shape and (
                upcast[n].is_floating_point() == w.is_floating_point()):
            g = torch.where(_close(g, upcast[n].to(w.dtype), tol), w, g)
        if w.is_floating_point():
            torch.testing.assert_close(g, w, atol=tol, rtol=tol, equal_nan=True,
                                       msg=lambda m, n=n: f"{what}[{n}]: {m}")
        elif not torch.equal(g, w):
            raise AssertionError(f"{what}[{n}]: {g} vs eager {w}")


def _eager(fn: Callable, args: list) -> tuple[list, list] | None:
    """`fn`'s results and inputs afterwards on copies of `args`, or None if eager refuses."""
    copies = _copies(args)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = [o.clone() for o in fn(*copies)]
    except Exception:
        return None
    return out, copies


def _check(compiled: Callable, reference: Callable, args: list, what: str, tol: float) -> bool:
    """Compare a compiled call with `reference` on `args`; False if the reference refuses."""
    expected = _eager(reference, args)
    if expected is None:
        return False
    copies = _copies(args)
    try:
        got = compiled(*copies)
    except ValueError as e:  # a symbolic trace whose assumptions these sizes break
        if str(e).startswith("compile_fx: input"):
            return False
        raise
    upcast = None
    if any(a.dtype in (torch.float16, torch.bfloat16) for a in args):
        upcast = _eager(reference, [a.float() if a.is_floating_point() else a for a in args])
    if upcast is not None and len(upcast[0]) != len(expected[0]):
        upcast = None
    _compare(list(got), expected[0], f"{what} outputs", tol, upcast and upcast[0])
    _compare(copies, expected[1], f"{what} inputs after", tol, upcast and upcast[1])
    return True


def run_case(seed: int) -> str:
    """'ok', 'skip' (eager refuses the program) or raises with what went wrong."""
    case = Case(seed)
    args = case.inputs(case.shape)
    if _eager(case.program, args) is None:
        return "skip"
    tol = 2e-2 if case.half else 1e-4
    gm = make_fx(case.program)(*_copies(args))
    _check(compile_fx(gm, _copies(args)), case.program, args, "real", tol)
    try:
        sym = make_fx(case.program, tracing_mode="symbolic")(*_copies(args))
    except Exception:  # data-dependent programs (x[mask]) have no symbolic trace
        return "ok"
    compiled = compile_fx(sym, _copies(args))
    _check(compiled, case.program, args, "symbolic", tol)
    for shape in case.other_shapes:
        # the traced graph is the reference: sizes the trace fixed stay fixed
        _check(compiled, sym, case.inputs(shape), f"symbolic {shape}", tol)
    return "ok"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--start", type=int, default=0, help="first seed of a sweep")
    parser.add_argument("--n", type=int, default=100, help="number of seeds in a sweep")
    parser.add_argument("--seed", type=int, help="run one case")
    parser.add_argument("--show", action="store_true", help="print the case's steps")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    seeds = [args.seed] if args.seed is not None else range(args.start, args.start + args.n)
    counts = {"ok": 0, "skip": 0, "fail": 0}
    for seed in seeds:
        if args.show:
            print(Case(seed).describe())
        try:
            counts[run_case(seed)] += 1
        except Exception:
            counts["fail"] += 1
            print(f"FAIL {Case(seed).describe()}\n{traceback.format_exc(limit=-3)}", flush=True)
        if seed % 100 == 99:
            print(f"up to seed {seed}: {counts}", flush=True)
    print(counts)
    return 1 if counts["fail"] else 0


if __name__ == "__main__":
    sys.exit(main())
