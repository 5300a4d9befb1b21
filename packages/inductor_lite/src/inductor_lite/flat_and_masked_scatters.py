"""Scatters placed in the flattened tensor or by a mask: `put`, `masked_scatter`, `x[mask] = v`.

`put` writes its sources at indices into the flattened input (negative ones count from the
end), into a flat copy of it. With `accumulate` they are added atomically. Without, several
sources may name one element, and eager's CPU loop leaves the last of them there: each source
first looks for a later one naming the same element (a reduction over the sources, so their
number is bounded by `MAX_PUT_SOURCES`; a symbolic number as traced, the compiled version
guarded to that bound), and one that is not the last writes to a spare element
past the end of the copy instead, so no two programs store to one element. `masked_scatter`
fills the elements where the mask holds, in order, from the flattened source: an element's
source is the number of mask elements before it that hold, a cumulative sum (a `Scan`) of the
flattened mask less its own. `x[mask] = values` (`index_put` with a boolean mask) selects as
many rows as the mask holds, which only the data knows; where `values` broadcast over those rows
it is a `where` of the mask, as eager gives then.
"""

from __future__ import annotations

import sympy
import torch

from .ir import (
    ComputedBuffer,
    IndirectIndex,
    Layout,
    LoweringError,
    Pointwise,
    Reduction,
    Scatter,
    TensorIR,
    Value,
    constant,
    contiguous_strides,
    index_in,
    loader,
    masked,
    op,
    product,
    to_dtype,
)
from .lowering import (
    ATOMIC_ADD_DTYPES,
    GraphLowering,
    _flatten,
    broadcast_loader,
    compute_dtype,
    fits_guarded,
    holds_as_traced,
    is_tensor,
    positive,
    register,
    scan_buffer,
    sym,
)

aten = torch.ops.aten

# Sources of a `put` without `accumulate`, at most: each compares its index with every later one.
MAX_PUT_SOURCES = 4096


def _flat_index(idx, size) -> sympy.Expr:
    """The position of `idx` in the row-major order of `size`."""
    return sum((i * s for i, s in zip(idx, contiguous_strides(size))), sympy.Integer(0))


def _same_count(lower: GraphLowering, a: sympy.Expr, b: sympy.Expr) -> bool:
    """Whether counts `a` and `b` are equal: as sympy, or else as traced, and then guarded to
    stay equal (eager raises for other counts: the aten op of another version does)."""
    return a == b or holds_as_traced(lower, sympy.Eq(a, b))


def _int64(v: Value) -> Value:
    return to_dtype(v, torch.int64)


@register(aten.put.default)
def _put(lower, node, x, index, source, accumulate=False):
    val = lower.node.meta["val"]
    numel, sources = product(x.size), product(index.size)
    if not (positive(lower, numel) and positive(lower, sources)):
        raise LoweringError("put with no elements (or sizes not known to be positive)")
    if not _same_count(lower, product(source.size), sources):
        raise LoweringError("put with a source of other than the index's number of elements")
    if accumulate and val.dtype not in ATOMIC_ADD_DTYPES:
        raise LoweringError(f"atomic add of {val.dtype}")
    if accumulate and val.dtype.is_floating_point and torch.are_deterministic_algorithms_enabled():
        raise LoweringError("atomic add of floats under torch.use_deterministic_algorithms")
    if not accumulate and not fits_guarded(lower, sources, MAX_PUT_SOURCES):
        raise LoweringError(f"put of more than {MAX_PUT_SOURCES} sources without accumulate")
    cd = compute_dtype(val.dtype)
    load_x, load_index, load_source = (loader(_flatten(t)) for t in (x, index, source))
    spare = 0 if accumulate else 1
    count = Value("index", (numel,), torch.int64)
    flat = Layout((numel + spare,), (sympy.Integer(1),), sympy.Integer(0), val.dtype, val.device)

    def copy_of_x(idx):
        inside = index_in(idx[0], numel)
        return Value("where", (inside, masked(to_dtype(load_x(idx), cd), inside),
                               constant(0, cd)), cd)
    out = lower.realize(Pointwise(flat.size, val.dtype, val.device, copy_of_x), flat)

    def wrapped(i: sympy.Expr) -> Value:  # source i's element, negative ones from the end
        v = _int64(load_index([i]))
        return op("where", op("lt", v, constant(0, torch.int64)), op("add", v, count), v)

    if accumulate:
        def target(idx):
            return flat.index([IndirectIndex(wrapped(idx[0]), numel, wraps=False)])
    else:
        def named_later(idx, ridx):
            later = op("gt", Value("index", (ridx[0],), torch.int64),
                       Value("index", (idx[0],), torch.int64))
            return op("logical_and", later, op("eq", wrapped(ridx[0]), wrapped(idx[0])))
        load_overwritten = (lambda idx: constant(False, torch.bool)) if sources == 1 else \
            loader(lower.realize(Reduction((sources,), (sources,), "any", torch.bool, val.device,
                                           named_later)))

        def target(idx):
            # out of range: -1, which the bounds check refuses (eager raises)
            element = wrapped(idx[0])
            inside = op("logical_and", op("ge", element, constant(0, torch.int64)),
                        op("lt", element, count))
            place = op("where", load_overwritten(idx), count, element)
            place = op("where", inside, place, constant(-1, torch.int64))
            return flat.index([IndirectIndex(place, numel + 1, wraps=False)])
    lower.add(ComputedBuffer(lower.new_name(), flat, data=Scatter(
        (sources,), target, accumulate, val.dtype, val.device,
        lambda idx: to_dtype(load_source(idx), cd)), mutates=out.name))
    load_out = loader(out)
    return Pointwise(x.size, val.dtype, val.device,
                     lambda idx: to_dtype(load_out([_flat_index(idx, x.size)]), cd))


@register(aten.masked_scatter.default)
def _masked_scatter(lower, node, x, mask, source):
    val = lower.node.meta["val"]
    if mask.dtype != torch.bool:
        raise LoweringError(f"masked_scatter with a {mask.dtype} mask")
    size = tuple(sym(s) for s in val.shape)
    numel, available = product(size), product(source.size)
    if not (positive(lower, numel) and positive(lower, available)):
        raise LoweringError("masked_scatter with no elements (or sizes not known to be "
                            "positive)")
    cd = compute_dtype(val.dtype)
    load_mask = broadcast_loader(mask, size, torch.bool)
    load_x = broadcast_loader(x, size, cd)
    load_source = loader(_flatten(source))
    if numel != 1:
        flat_mask = loader(_flatten(Pointwise(size, torch.int32, val.device,
                                              lambda idx: to_dtype(load_mask(idx), torch.int32))))
        load_taken = loader(scan_buffer(lower, (numel,), 0, "sum", torch.int32, val.device,
                                        flat_mask))

    def fn(idx):
        chosen = load_mask(idx)
        # the mask elements before this one that hold: the source element it takes (none
        # before a single element)
        before = constant(0, torch.int32) if numel == 1 else op(
            "sub", load_taken([_flat_index(idx, size)]), to_dtype(chosen, torch.int32))
        taken = masked(to_dtype(load_source([IndirectIndex(_int64(before), available, False)]),
                                cd), chosen)
        return Value("where", (chosen, taken, load_x(idx)), cd)
    return Pointwise(size, val.dtype, val.device, fn)


def masked_index_put(lower: GraphLowering, x: TensorIR, indices: list, values,
                     accumulate: bool) -> Pointwise:
    """`x[mask] = values` (`index_put` with one boolean index, `None` for the other dims), where
    `values` broadcast over the selected rows: `where(mask, values, x)` (adding, with
    `accumulate`: each element is selected once at most)."""
    val = lower.node.meta["val"]
    tensors = [(d, i) for d, i in enumerate(indices) if i is not None]
    if len(tensors) != 1:
        raise LoweringError("index_put with a mask beside other indices")
    start, mask = tensors[0]
    if mask.dtype != torch.bool or not mask.size:
        # (eager refuses a uint8 mask: its aten call raises, where read as integer indices it
        # wrote rows 0 and 1)
        raise LoweringError("index_put with a uint8 or 0-d mask")
    if accumulate and val.dtype == torch.bool:
        raise LoweringError("index_put adding booleans")
    end = start + len(mask.size)
    if tuple(mask.size) != tuple(x.size[start:end]):
        raise LoweringError("index_put with a mask not of the indexed dims' sizes")
    # values broadcast to (x's dims before the mask, the selected rows, x's dims after it)
    rows = (*x.size[:start], sympy.Integer(1), *x.size[end:])
    if is_tensor(values) and (len(values.size) > len(rows) or any(
            v != r and v != 1 for v, r in zip(reversed(values.size), reversed(rows)))):
        raise LoweringError("index_put with values given per selected row (data-dependent)")
    cd = compute_dtype(val.dtype)
    load_x, load_mask = loader(x), loader(mask)
    load_values = broadcast_loader(values, rows, cd)

    def fn(idx):
        old = to_dtype(load_x(idx), cd)
        new = load_values([*idx[:start], sympy.Integer(0), *idx[end:]])
        if accumulate:
            new = op("add", old, new)
        return Value("where", (load_mask(list(idx[start:end])), new, old), cd)
    return Pointwise(x.size, val.dtype, val.device, fn)
