"""`segment_reduce` (sum, mean, max, min, prod over segments of a dim) as a masked reduction.

The lengths (or offsets) cut dim `axis` of the data, their last dim, into segments, a row of
them per index of the data's dims before it. Segment `s` covers the rows `[start[s], end[s])`:
from offsets, its entries `s` and `s + 1`; from lengths, `end` is their cumulative sum (a scan)
and `start` is `end - lengths`. Each output element `(..., s, ...)` reduces, over every row of
the data, the element at its other indices, masked to the rows of its segment, as
`embedding_bag.py` reduces its bags: the op costs the data's rows times the output's size, so
more than `MAX_ROWS` rows run as the aten op (a symbolic count as traced, the compiled version
guarded to counts up to `MAX_ROWS`). As eager's CPU kernel,
`initial` (else the reduction's identity) is the first operand, NaNs win max and min, and a
mean divides by the segment's length: an empty one is `initial`, or NaN without it. Segments
eager refuses (a negative length; with `unsafe=False`, a row of lengths that does not sum to
the data's rows) and those it reads past the data for (offsets outside it) fail the kernel's
index check. Half floats (eager accumulates in them), lengths whose leading dims are not the
data's, an empty output or no segment run as the aten op.
"""

from __future__ import annotations

import torch

from .ir import (
    IndirectIndex,
    LoweringError,
    Pointwise,
    Reduction,
    Value,
    constant,
    loader,
    op,
    to_dtype,
)
from .lowering import aten, fits_guarded, positive, register, scan_buffer, sym

# Rows of data each output element reads, at most.
MAX_ROWS = 256
REDUCTIONS = {"sum": "sum", "mean": "sum", "max": "max", "min": "min", "prod": "prod"}


@register(aten.segment_reduce.default)
def _segment_reduce(lower, node, data, reduce, *, lengths=None, indices=None, offsets=None,
                    axis=0, unsafe=False, initial=None):
    val = lower.node.meta["val"]
    cd = val.dtype
    if reduce not in REDUCTIONS or indices is not None or (lengths is None) == (offsets is None):
        raise LoweringError("segment_reduce by indices, by both lengths and offsets, or of "
                            f"reduction {reduce!r}")
    bounds = lengths if lengths is not None else offsets
    if cd not in (torch.float32, torch.float64) or data.dtype != cd \
            or bounds.dtype not in (torch.int32, torch.int64):
        raise LoweringError("segment_reduce of half floats (eager accumulates in them)")
    if not data.size or axis % len(data.size) != len(bounds.size) - 1:
        raise LoweringError("segment_reduce along another dim than the last of its lengths "
                            "(eager refuses)")
    axis = len(bounds.size) - 1
    if tuple(bounds.size[:axis]) != tuple(data.size[:axis]):
        # (eager reads rows of lengths that are not there)
        raise LoweringError("segment_reduce with lengths or offsets whose leading dims are not "
                            "the data's")
    if initial is not None and not isinstance(initial, (int, float)):
        raise LoweringError("segment_reduce with an initial value that is not a number")
    size = tuple(sym(s) for s in val.shape)
    rows, segments = data.size[axis], size[axis]
    if not (positive(lower, rows) and fits_guarded(lower, rows, MAX_ROWS)):
        raise LoweringError(f"segment_reduce over {rows} rows (each output would read them "
                            f"all: more than {MAX_ROWS}, or none)")
    if not all(positive(lower, s) for s in size):
        # (eager checks the lengths even for an empty output, which launches no kernel)
        raise LoweringError("segment_reduce of no segments or of an empty output")
    load_data, load_bounds = loader(data), loader(bounds)
    i64 = torch.int64
    row_count = Value("index", (rows,), i64)
    # a segment is named by its output index up to `axis`: the data's leading indices, and its
    # own number `s` (a row of lengths or offsets per leading index)

    def bound(at) -> Value:
        return to_dtype(load_bounds(at), i64)

    if lengths is not None:
        ends = bound if segments == 1 else loader(scan_buffer(
            lower, bounds.size, axis, "sum", i64, val.device, bound))

        def segment(at) -> tuple[Value, Value]:
            return op("sub", ends(at), bound(at)), ends(at)

        def refused(at) -> Value:
            """Whether eager refuses the segment's length, or reads past the data for it."""
            bad = op("logical_or", op("lt", bound(at), constant(0, i64), dtype=torch.bool),
                     op("gt", ends(at), row_count, dtype=torch.bool))
            if not unsafe:  # the lengths of the segment's row sum to the rows
                bad = op("logical_or", bad, op("ne", ends([*at[:-1], segments - 1]),
                                               row_count, dtype=torch.bool))
            return bad
    else:
        def segment(at) -> tuple[Value, Value]:
            return bound(at), bound([*at[:-1], at[-1] + 1])

        def refused(at) -> Value:
            start, end = segment(at)
            bad = op("logical_or", op("lt", start, constant(0, i64), dtype=torch.bool),
                     op("lt", end, start, dtype=torch.bool))
            return op("logical_or", bad, op("gt", end, row_count,
                                            dtype=torch.bool))

    def checked_segment(at) -> tuple[Value, Value]:
        """The segment's rows; read at number -1 where eager refuses it (or reads past the
        data), which the kernel's index check turns into an error."""
        number = Value("where", (refused(at), constant(-1, i64), Value("index", (at[-1],), i64)),
                       i64)
        return segment([*at[:-1], IndirectIndex(number, segments, wraps=False)])

    kind = REDUCTIONS[reduce]
    identity = {"sum": 0.0, "prod": 1.0, "max": float("-inf"), "min": float("inf")}[kind]

    def term(idx, ridx):
        (row,) = ridx
        start, end = checked_segment(idx[:axis + 1])
        position = Value("index", (row,), i64)
        inside = op("logical_and", op("le", start, position, dtype=torch.bool),
                    op("lt", position, end, dtype=torch.bool))
        return Value("where", (inside, to_dtype(load_data([*idx[:axis], row, *idx[axis + 1:]]),
                                                cd), constant(identity, cd)), cd)

    reduced = loader(lower.realize(Reduction(size, (rows,), kind, cd, val.device, term)))
    start_value = constant(initial, cd) if initial is not None else None

    def combined(idx) -> Value:
        v = reduced(idx)
        if start_value is not None:
            v = op({"sum": "add", "prod": "mul", "max": "maximum", "min": "minimum"}[kind],
                   start_value, v)
        if reduce != "mean":
            return v
        start, end = segment(idx[:axis + 1])
        length = op("sub", end, start)
        empty = start_value if start_value is not None else constant(float("nan"), cd)
        return Value("where", (op("gt", length, constant(0, i64), dtype=torch.bool),
                               op("truediv", v, to_dtype(length, cd)), empty), cd)

    return Pointwise(size, cd, val.device, combined)
