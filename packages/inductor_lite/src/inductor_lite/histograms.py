"""Histograms (`histc`, `histogram`, `histogramdd`) as scatter-adds into the bins.

Each element (a point, for `histogramdd`: one bin index per coordinate) finds its bin as eager's
CPU kernel does, and adds 1 (or its weight) there by an atomic add: counts are whole numbers,
so they are eager's in any order; weights are summed in another order than eager's. `histc`
interpolates linearly in the input's float type, `bin = (int64) ((x - min) * bins / (max -
min))`; `histogram`'s edges are eager's `linspace` (rounded as its CPU kernel rounds, with one
fused multiply-add per edge), and it corrects the interpolated bin by a search of the edges
next to it, or searches given edges as `std::upper_bound` does. The last bin also holds the
last edge; elements outside the edges (and NaNs) count nowhere. Where the interpolation
overflows, eager's int64 of inf is INT64_MIN: `histc` counts the element in bin 0 as eager's
x86 kernel does, `histogram` (whose eager search then reads outside its edges) in its bin. A range taken from the data
comes from min and max reductions that the scatter reads as values (a zero-width one widened
in float64, as eager's host code does); one that is not finite (a NaN or an infinity in the
data) raises eager's error through an `aten._assert_async.msg` call before the histogram is
made (the message shows no numbers).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import sympy
import torch

from .ir import (
    ComputedBuffer,
    ExternBuffer,
    IndirectIndex,
    LoweringError,
    Pointwise,
    Reduction,
    Scatter,
    Value,
    constant,
    contiguous_strides,
    loader,
    op,
    to_dtype,
)
from .lowering import aten, register

HISTC_NOT_FINITE = "torch.histc: range of [min, max] is not finite"
MAX_EDGES = 4096  # given edges: the generated search has a step per doubling

Edge = Callable[[Value], Value]  # edge k (an int64 Value) of one dimension's bins
Search = Callable[[Value], Value]  # `std::upper_bound`'s index of a value in those edges


def _int(k: int | sympy.Expr) -> Value:
    return constant(k, torch.int64)


@register(aten.histc.default)
def _histc(lower, node, x, bins=100, min=0, max=0):
    val = lower.node.meta["val"]
    cd = val.dtype
    if cd not in (torch.float32, torch.float64) or x.dtype != cd:
        raise LoweringError("histc of half floats or integers")
    if not (isinstance(min, (int, float)) and isinstance(max, (int, float))):
        raise LoweringError("histc with a symbolic range")
    if not all(isinstance(s, sympy.Integer) for s in x.size):
        raise LoweringError("histc of symbolic sizes")
    load = loader(x)
    if min == max and math.prod(int(s) for s in x.size) > 0:
        low, high = _range_of_the_data(lower, x.size, lambda i: to_dtype(load(i), cd), cd,
                                       val.device, 1.0, HISTC_NOT_FINITE)
    else:
        if min == max:  # an empty input: eager widens the given range
            min, max = min - 1, max + 1
        if not (math.isfinite(min) and math.isfinite(max) and min < max):
            raise LoweringError("histc with an invalid range")  # eager raises
        # the range's ends as the input's float type holds them
        low, high = (constant(torch.tensor(v, dtype=cd).item(), cd) for v in (min, max))
    counts = lower.realize(Pointwise((sympy.Integer(bins),), cd, val.device,
                                     lambda idx: constant(0, cd)))
    # (the difference as eager computes it, in the input's float type)
    width = op("sub", high, low)

    def bin_of(idx) -> tuple[Value, Value]:
        v = to_dtype(load(idx), cd)
        # an infinite width makes eager's first and last edges NaN (`linspace`'s `inf * 0`):
        # nothing is counted
        inside = op("logical_and", _is_finite(width), op("logical_and", op(
            "ge", v, low, dtype=torch.bool), op("le", v, high, dtype=torch.bool)))
        scaled = op("truediv", op("mul", op("sub", v, low), constant(bins, cd)), width)
        # outside the range (a NaN too) the bin is clamped, and what is added there is 0; where
        # `(v - low) * bins` overflows, eager's int64 of inf is INT64_MIN, whose offset into the
        # bins wraps to bin 0
        scaled = Value("where", (op("logical_and", inside, _is_finite(scaled)), scaled,
                                 constant(0, cd)), cd)
        return op("minimum", to_dtype(scaled, torch.int64), _int(bins - 1)), inside

    def target(idx):
        return IndirectIndex(bin_of(idx)[0], sympy.Integer(bins), wraps=False)

    lower.add(ComputedBuffer(lower.new_name(), counts.layout, data=Scatter(
        x.size, target, True, cd, val.device, lambda idx: to_dtype(bin_of(idx)[1], cd)),
        mutates=counts.name))
    return Pointwise(counts.size, cd, val.device, loader(counts))


def _is_finite(v: Value) -> Value:
    return op("logical_not", op("logical_or", op("isnan", v, dtype=torch.bool),
                                op("isinf", v, dtype=torch.bool)), dtype=torch.bool)


def _range_of_the_data(lower, size: Sequence[sympy.Expr], value_at: Callable, cd: torch.dtype,
                       device: torch.device, widening: float, not_finite: str
                       ) -> tuple[Value, Value]:
    """The ends of the range of the values `value_at(index)` (not none) over the indices of
    `size`, as eager's histograms take them (values kernels read): a zero-width range widened
    by `widening` on each side, after asserting (raising `not_finite`) that they are finite."""
    if all(s == 1 for s in size):  # one value: it is both ends
        smallest = largest = value_at([sympy.Integer(0)] * len(size))
    else:
        smallest, largest = (loader(lower.realize(Reduction(
            (), tuple(size), kind, cd, device, lambda idx, ridx: value_at(ridx))))([])
            for kind in ("min", "max"))

    finite = lower.realize(Pointwise((), torch.bool, device, lambda idx: op(
        "logical_and", _is_finite(smallest), _is_finite(largest))))
    lower.add(ExternBuffer(lower.new_name(), None, target=aten._assert_async.msg,
                           args=(finite, not_finite)))
    # widened in float64, then held in the input's type
    same = op("eq", smallest, largest, dtype=torch.bool)
    ends = []
    for end, step in ((smallest, -widening), (largest, widening)):
        wide = to_dtype(end, torch.float64)
        wide = Value("where", (same, op("add", wide, constant(step, torch.float64)), wide),
                     torch.float64)
        ends.append(to_dtype(wide, cd))
    return ends[0], ends[1]


def _check_histogram(lower, x, weight, point_rank: int) -> tuple[torch.dtype, torch.device]:
    """The dtype and device of a histogram eager computes as generated code would, or refuse."""
    val = lower.node.meta["val"]
    val = val[0] if isinstance(val, (list, tuple)) else val
    cd, device = val.dtype, val.device
    if device.type != "cpu":
        raise LoweringError("histogram has a CPU kernel only")  # eager raises elsewhere
    if cd not in (torch.float32, torch.float64) or x.dtype != cd:
        raise LoweringError("histogram of half floats")
    if not all(isinstance(s, sympy.Integer) for s in x.size):
        raise LoweringError("histogram of symbolic sizes")
    if weight is not None and (weight.dtype != cd or
                               tuple(weight.size) != tuple(x.size[:point_rank])):
        raise LoweringError("histogram with weights of another dtype or shape")
    return cd, device


def _linear_edges(lower, point_size, value_at: Callable, bins: int, span, cd: torch.dtype,
                  device: torch.device, dim: int) -> tuple[Edge, Search]:
    """One dimension's edges, `linspace` over `span` (else the data's range), and the search
    of a value in them that eager makes: the interpolated edge, corrected by a search of the
    edges next to it."""
    if not torch.backends.cpu.get_cpu_capability().startswith("AVX"):
        # eager's linspace rounds `start + step * i` once only where it is built with FMA
        raise LoweringError("histogram's edges where eager's linspace has no fused multiply-add")
    if not (isinstance(bins, int) and bins >= 1):
        raise LoweringError("histogram without bins")  # eager raises
    if span is not None:
        if not all(isinstance(v, (int, float)) for v in span):
            raise LoweringError("histogram with a symbolic range")
        first, last = (float(v) for v in span)
        if not (math.isfinite(first) and math.isfinite(last) and first <= last):
            raise LoweringError("histogram with an invalid range")  # eager raises
        if first == last:
            first, last = first - 0.5, last + 0.5
        start, end = (constant(torch.tensor(v, dtype=cd).item(), cd) for v in (first, last))
    elif math.prod(int(s) for s in point_size) == 0:
        start, end = constant(0.0, cd), constant(1.0, cd)  # numpy's default
    else:
        start, end = _range_of_the_data(
            lower, point_size, value_at, cd, device, 0.5,
            f"torch.histogramdd: dimension {dim}'s range [min, max] is not finite")
    step = op("truediv", op("sub", end, start), constant(bins, cd))

    def edge(k: Value) -> Value:
        # from `start` up to the middle, from `end` down after it, each rounded once
        up = op("fma", step, to_dtype(k, cd), start)
        down = op("fma", op("neg", step), to_dtype(op("sub", _int(bins), k), cd), end)
        return Value("where", (op("lt", k, _int((bins + 1) // 2), dtype=torch.bool), up, down),
                     cd)

    def search(v: Value) -> Value:
        offset, width = op("sub", v, start), op("sub", end, start)
        scaled = op("truediv", op("mul", offset, constant(bins, cd)), width)
        # where `(v - start) * bins` overflows, eager's search starts from INT64_MIN and reads
        # outside the edges; this one starts from the bin the value is in
        scaled = Value("where", (_is_finite(scaled), scaled, op("mul", op(
            "truediv", offset, width), constant(bins, cd))), cd)
        guess = to_dtype(scaled, torch.int64)
        low = op("maximum", op("sub", guess, _int(1)), _int(0))
        high = op("minimum", op("add", guess, _int(2)), _int(bins + 1))
        return _upper_bound(v, edge, low, op("sub", high, low), 2)
    return edge, search


@register(aten.histogram.bin_ct)
def _histogram(lower, node, x, bins=100, *, range=None, weight=None, density=False):
    cd, device = _check_histogram(lower, x, weight, len(x.size))
    load = loader(x)
    edge, search = _linear_edges(lower, x.size, lambda i: to_dtype(load(i), cd), bins, range,
                                 cd, device, 0)
    hist, edges = _binned(lower, x.size, lambda idx, d: to_dtype(load(idx), cd), weight,
                          density, [bins], [edge], [search], cd, device)
    return [hist, edges[0]]


@register(aten.histogram.bins_tensor)
def _histogram_of_edges(lower, node, x, bins, *, weight=None, density=False):
    cd, device = _check_histogram(lower, x, weight, len(x.size))
    load = loader(x)
    count, edge, search = _given_edges(bins, cd)
    hist, edges = _binned(lower, x.size, lambda idx, d: to_dtype(load(idx), cd), weight,
                          density, [count - 1], [edge], [search], cd, device)
    return [hist, edges[0]]


def _given_edges(bins, cd: torch.dtype) -> tuple[int, Edge, Search]:
    """The number of edges in the tensor `bins`, an edge, and the search of a value in them
    that eager makes: `std::upper_bound` over all of them."""
    if bins.dtype != cd or len(bins.size) != 1 or not isinstance(bins.size[0], sympy.Integer):
        raise LoweringError("histogram of edges of another dtype, not in a row")
    count = int(bins.size[0])
    if not 2 <= count <= MAX_EDGES:
        raise LoweringError(f"histogram of {count} edges")  # (one edge: eager's bin -1)
    load_edge = loader(bins)

    def edge(k: Value) -> Value:
        # (a search step past the end reads the last edge, and drops its comparison)
        k = op("minimum", k, _int(count - 1))
        return to_dtype(load_edge([IndirectIndex(k, sympy.Integer(count), wraps=False)]), cd)

    def search(v: Value) -> Value:
        return _upper_bound(v, edge, _int(0), _int(count), count.bit_length())
    return count, edge, search


@register(aten._histogramdd_from_bin_tensors.default)
def _histogramdd_of_edges(lower, node, x, bins, *, weight=None, density=False):
    if len(x.size) < 2 or not bins or len(bins) != x.size[-1]:
        raise LoweringError("histogramdd of fewer than 2 dims, or edges for other dims")
    cd, device = _check_histogram(lower, x, weight, len(x.size) - 1)
    load = loader(x)
    counts, edges, searches = zip(*(_given_edges(b, cd) for b in bins))
    return _binned(lower, x.size[:-1], lambda idx, d: to_dtype(load([*idx, sympy.Integer(d)]), cd),
                   weight, density, [c - 1 for c in counts], edges, searches, cd, device)[0]


def _histogramdd(lower, x, bins, spans, weight, density) -> tuple:
    """`histogramdd` with bin counts: its points are `x`'s rows along the last dim."""
    if len(x.size) < 2:
        raise LoweringError("histogramdd of fewer than 2 dims")  # eager raises
    cd, device = _check_histogram(lower, x, weight, len(x.size) - 1)
    dims = int(x.size[-1])
    if len(bins) != dims or (spans is not None and len(spans) != 2 * dims) or dims == 0:
        raise LoweringError("histogramdd with bins or a range of another length")
    load, point_size = loader(x), x.size[:-1]

    def coordinate(idx, d: int) -> Value:
        return to_dtype(load([*idx, sympy.Integer(d)]), cd)
    edges, searches = zip(*(
        _linear_edges(lower, point_size, lambda i, d=d: coordinate(i, d), bins[d],
                      None if spans is None else spans[2 * d:2 * d + 2], cd, device, d)
        for d in range(dims)))
    return _binned(lower, point_size, coordinate, weight, density, list(bins), edges, searches,
                   cd, device)


@register(aten._histogramdd_from_bin_cts.default)
def _histogramdd_hist(lower, node, x, bins, *, range=None, weight=None, density=False):
    return _histogramdd(lower, x, bins, range, weight, density)[0]


@register(aten._histogramdd_bin_edges.default)
def _histogramdd_edges(lower, node, x, bins, *, range=None, weight=None, density=False):
    return _histogramdd(lower, x, bins, range, weight, density)[1]


def _binned(lower, point_size, coordinate: Callable, weight, density: bool, bins: list[int],
            edges: Sequence[Edge], searches: Sequence[Search], cd: torch.dtype,
            device: torch.device) -> tuple:
    """The hist and bin edges of eager's CPU histogram: each point (index of `point_size`,
    coordinate `d` of it `coordinate(index, d)`) whose every coordinate lies between its
    dimension's first and last edge adds its weight (else 1) to the bin of `search(coordinate)
    - 1` in each dimension, the last edge counting in the last bin."""
    size = tuple(sympy.Integer(b) for b in bins)
    counts = lower.realize(Pointwise(size, cd, device, lambda idx: constant(0, cd)))
    strides = contiguous_strides(size)
    load_weight = loader(weight) if weight is not None else None

    def bin_of(idx) -> tuple[Value, Value]:
        inside, offset = None, _int(0)
        for d, (edge, search) in enumerate(zip(edges, searches)):
            v = coordinate(idx, d)
            first, last = edge(_int(0)), edge(_int(bins[d]))
            within = op("logical_and", op("ge", v, first, dtype=torch.bool),
                        op("le", v, last, dtype=torch.bool))
            inside = within if inside is None else op("logical_and", inside, within)
            # outside the edges (a NaN too) bin 0, where 0 is added
            v = Value("where", (within, v, first), cd)
            found = op("minimum", op("sub", search(v), _int(1)), _int(bins[d] - 1))
            offset = op("add", offset, op("mul", found, _int(strides[d])))
        return Value("where", (inside, offset, _int(0)), torch.int64), inside

    def added(idx) -> Value:
        inside = bin_of(idx)[1]
        if load_weight is None:
            return to_dtype(inside, cd)
        return Value("where", (inside, to_dtype(load_weight(idx), cd), constant(0, cd)), cd)

    lower.add(ComputedBuffer(lower.new_name(), counts.layout, data=Scatter(
        tuple(point_size), lambda idx: IndirectIndex(bin_of(idx)[0], sympy.Integer(
            math.prod(bins)), wraps=False), True, cd, device, added), mutates=counts.name))
    edge_values = [Pointwise((sympy.Integer(b + 1),), cd, device,
                             lambda idx, edge=edge: edge(_int(idx[0])))
                   for b, edge in zip(bins, edges)]
    hist = Pointwise(size, cd, device, loader(counts))
    if density:
        hist = _density(lower, counts, edges, cd)
    return hist, edge_values


def _upper_bound(v: Value, edge: Edge, first: Value, length: Value, halvings: int) -> Value:
    """The index `std::upper_bound` returns for `v` in the edges `[first, first + length)`
    (a length below `2 ** halvings`), comparing the same edges as its binary search (edges
    out of order too)."""
    for _ in range(halvings):
        half = op("floordiv", length, _int(2))
        middle = op("add", first, half)
        searching = op("gt", length, _int(0), dtype=torch.bool)
        below = op("lt", v, edge(middle), dtype=torch.bool)
        right = op("logical_and", searching, op("logical_not", below, dtype=torch.bool))
        first = Value("where", (right, op("add", middle, _int(1)), first), torch.int64)
        length = Value("where", (searching, Value("where", (
            below, half, op("sub", op("sub", length, half), _int(1))), torch.int64), length),
            torch.int64)
    return first


def _density(lower, counts, edges: Sequence[Edge], cd: torch.dtype) -> Pointwise:
    """Eager's `density=True`: each bin divided by the sum of all, then by its width in each
    dimension."""
    load = loader(counts)
    if all(s == 1 for s in counts.size):
        total = load([sympy.Integer(0)] * len(counts.size))
    else:
        total = loader(lower.realize(Reduction((), counts.size, "sum", cd, counts.device,
                                               lambda idx, ridx: load(ridx))))([])

    def body(idx) -> Value:
        out = op("truediv", load(idx), total)
        for i, edge in zip(idx, edges):
            k = _int(i)
            out = op("truediv", out, op("sub", edge(op("add", k, _int(1))), edge(k)))
        return out
    return Pointwise(counts.size, cd, counts.device, body)
