"""Scatters that reduce (`scatter_reduce`, `scatter(..., reduce=)`, `index_reduce`) as gathers.

Every element of the result looks at the sources that land on it: a `Reduction` over the
positions along the scattered dim whose index equals the element's own position there, each
source that does not land on it counting as the reduction's identity. So each element is
computed by one program, in a fixed order, with the reductions kernels already have (sum,
prod, and the NaN-propagating max and min), where atomics would land in any order and Triton
has no atomic product. The cost is the result's elements times the scattered dim's length of
the index, so a scatter whose index is longer than `MAX_SOURCES` along that dim is left to
aten, whose loop over the sources is linear (a symbolic length is judged as traced, and the
compiled version guarded to lengths up to `MAX_SOURCES`). A scatter-add of ones first counts
the sources of each element: the count decides whether an element without `include_self`
keeps its own value (no source landed on it) and divides the mean, and its store is where an
index outside the dim raises (the kernels' bounds check), as eager's does.
"""

from __future__ import annotations

from collections.abc import Callable

import sympy
import torch

from .ir import (
    ComputedBuffer,
    Index,
    IndirectIndex,
    Layout,
    LoweringError,
    Pointwise,
    Reduction,
    Scatter,
    Value,
    constant,
    contiguous_strides,
    index_in,
    loader,
    masked,
    op,
    to_dtype,
)
from .lowering import compute_dtype, fits_guarded, is_tensor, register

aten = torch.ops.aten

# reduce argument -> the Reduction's type
REDUCTIONS = {"sum": "sum", "prod": "prod", "mean": "sum", "amax": "max", "amin": "min"}
# scatter's older spelling of the same reductions
SCATTER_REDUCE_NAMES = {"add": "sum", "multiply": "prod"}
# Sources (along the scattered dim) each element of the result looks at, at most.
MAX_SOURCES = 64


def _identity(reduce: str, dtype: torch.dtype) -> Value:
    """What a source that does not land on an element contributes."""
    if reduce in ("sum", "mean"):
        return constant(0, dtype)
    if reduce == "prod":
        return constant(1, dtype)
    low = reduce == "amax"
    if dtype.is_floating_point:
        return constant(float("-inf") if low else float("inf"), dtype)
    info = torch.iinfo(dtype)
    return constant(info.min if low else info.max, dtype)


def _refuse_dtype(reduce: str, dtype: torch.dtype) -> None:
    if dtype == torch.bool or dtype.is_complex:
        raise LoweringError(f"scatter-reduce of {dtype}")
    if reduce == "mean" and not dtype.is_floating_point:
        raise LoweringError("an integer scatter mean (eager divides with rounding of its own)")
    if dtype in (torch.float16, torch.bfloat16) and reduce not in ("amax", "amin"):
        # eager rounds the running value to half after each source; we would round once
        raise LoweringError(f"a half-precision scatter {reduce}")


def _gathered_scatter(lower, x, dim: int, size: tuple, rlen: sympy.Expr,
                      source: Callable[[Index, sympy.Expr], tuple[Value, Value | None, Index]],
                      reduce: str, include_self: bool) -> Pointwise:
    """The result of scattering into `x` along `dim`, reducing with `reduce`.

    `source(idx, r)`, for an element `idx` of `x` and a position `r` along the scattered dim
    of the sources, is (the index value there, whether that position exists for this element
    or None where it always does, the source's own index: what `size` iterates over)."""
    val = lower.node.meta["val"]
    _refuse_dtype(reduce, val.dtype)
    if any(s == 0 for s in (*x.size, *size)):
        raise LoweringError("a scatter-reduce of no elements")
    if not fits_guarded(lower, rlen, MAX_SOURCES):
        raise LoweringError(f"a scatter-reduce over {rlen} sources per element (each element "
                            f"would read them all: more than {MAX_SOURCES})")
    cd = compute_dtype(val.dtype)
    load_x = loader(x)
    n = x.size[dim]
    contiguous = Layout(x.size, contiguous_strides(x.size), sympy.Integer(0), torch.int32,
                        val.device)

    # Sources per element: a scatter-add of ones into zeros, bounds-checked at its store.
    zeros = lower.realize(Pointwise(x.size, torch.int32, val.device,
                                    lambda idx: constant(0, torch.int32)), contiguous)

    def count_target(sidx):
        full = list(sidx)
        index_value, _, _ = source(full, sidx[dim])
        full[dim] = IndirectIndex(to_dtype(index_value, torch.int64), n, wraps=False)
        return contiguous.index(full)
    lower.add(ComputedBuffer(lower.new_name(), contiguous, data=Scatter(
        size, count_target, True, torch.int32, val.device,
        lambda idx: constant(1, torch.int32)), mutates=zeros.name))
    load_count = loader(zeros)

    def landed(idx, ridx):
        index_value, exists, at = source(list(idx), ridx[0])
        hit = op("eq", to_dtype(index_value, torch.int64),
                 Value("index", (idx[dim],), torch.int64))
        value = to_dtype(at, cd)
        if exists is not None:
            hit, value = op("logical_and", exists, masked(hit, exists)), masked(value, exists)
        return Value("where", (hit, value, _identity(reduce, cd)), cd)
    load_reduced = loader(lower.realize(Reduction(x.size, (rlen,), REDUCTIONS[reduce], cd,
                                                  val.device, landed)))

    def fn(idx):
        own, got = to_dtype(load_x(idx), cd), load_reduced(idx)
        count = load_count(idx)
        if reduce == "mean":
            if include_self:
                return op("truediv", op("add", own, got),
                          to_dtype(op("add", count, constant(1, torch.int32)), cd))
            got = op("truediv", got, to_dtype(count, cd))
        elif include_self:
            combine = {"sum": "add", "prod": "mul", "amax": "maximum", "amin": "minimum"}
            return op(combine[reduce], own, got)
        return Value("where", (op("gt", count, constant(0, torch.int32)), got, own), cd)
    return Pointwise(x.size, val.dtype, val.device, fn)


def _scatter_reduce_into(lower, x, dim: int, index, src, reduce: str,
                         include_self: bool) -> Pointwise:
    """`scatter_reduce`: source `src[i]` lands on `x[i with dim replaced by index[i]]`, for
    every index `i` of the index tensor (which may be smaller than `src` and `x`)."""
    if not x.size or not index.size or len(index.size) != len(x.size):
        raise LoweringError("a scatter-reduce of a 0-d tensor or index")
    dim = dim % len(x.size)
    cd = compute_dtype(lower.node.meta["val"].dtype)
    load_index = loader(index)
    load_src = loader(src) if is_tensor(src) else (lambda idx: constant(src, cd))

    def source(idx, r):
        at = list(idx)
        at[dim] = r
        exists = None
        for d, (i, extent) in enumerate(zip(idx, index.size)):
            if d != dim and extent != x.size[d]:
                inside = index_in(i, extent)
                exists = inside if exists is None else op("logical_and", exists, inside)
        return load_index(at), exists, load_src(at)
    return _gathered_scatter(lower, x, dim, index.size, index.size[dim], source, reduce,
                             include_self)


@register(aten.scatter_reduce.two)
def _scatter_reduce(lower, node, x, dim, index, src, reduce, *, include_self=True):
    return _scatter_reduce_into(lower, x, dim, index, src, reduce, include_self)


@register(aten.scatter.reduce, aten.scatter.value_reduce)
def _scatter_with_reduce(lower, node, x, dim, index, src, *, reduce):
    return _scatter_reduce_into(lower, x, dim, index, src, SCATTER_REDUCE_NAMES[reduce], True)


@register(aten.index_reduce.default)
def _index_reduce(lower, node, x, dim, index, source, reduce, *, include_self=True):
    """`index_reduce`: the slice `source[..., i, ...]` (along `dim`) lands on the slice
    `index[i]` of `x`."""
    val = lower.node.meta["val"]
    if len(index.size) != 1 or val.dim() != len(source.size if is_tensor(source) else ()):
        raise LoweringError("index_reduce with an index of other than 1 dim")
    x, source = (_one_element_if_0d(t, val) for t in (x, source))
    dim = dim % len(x.size)
    load_index, load_source = loader(index), loader(source)

    def source_at(idx, r):
        at = list(idx)
        at[dim] = r
        return load_index([r]), None, load_source(at)
    out = _gathered_scatter(lower, x, dim, source.size, index.size[0], source_at, reduce,
                            include_self)
    if val.dim():
        return out
    return Pointwise((), out.dtype, out.device, lambda idx: out.fn([sympy.Integer(0)]))


def _one_element_if_0d(t, val: torch.Tensor):
    """A 0-d tensor (or a host number: a 0-d CPU input) as a 1-d one of one element, the
    dim that eager's `index_reduce` indexes."""
    if is_tensor(t) and t.size:
        return t
    cd = compute_dtype(val.dtype)
    load = loader(t) if is_tensor(t) else (lambda idx: constant(t, cd))
    return Pointwise((sympy.Integer(1),), val.dtype, val.device, lambda idx: load([]))
