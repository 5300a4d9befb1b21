"""The loop-level IR: buffers with layouts, and the computations that fill them.

A lowered graph is a list of *buffers*. Inputs are buffers; every other buffer is computed,
either by a loop nest we generate code for (`ComputedBuffer` holding a `Pointwise` or a
`Reduction`) or by a call into a library (`ExternBuffer`: aten's matmul, convolution, attention,
and the eager fallback for ops we do not lower).

`Pointwise` and `Reduction` describe their loop body as a Python function from index variables to
a `Value`: a small expression tree whose leaves are loads from buffers (at an index that is a
sympy expression of the variables), constants and index expressions. Lowering composes these
functions, so a chain of pointwise ops is one function before any kernel is thought of, and a
view (transpose, slice, expand, reshape) is just a different index passed to the function it
wraps. Reading a tensor of any kind goes through `loader(t)`: a function from an index to a
Value.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import sympy
import torch

Index = Sequence[sympy.Expr]


class FloorDiv(sympy.Function):
    """`a // b` on non-negative integers (printed as such)."""

    is_integer = True

    @classmethod
    def eval(cls, a, b):
        if b == 1:
            return a
        if a == 0:
            return sympy.Integer(0)
        if a.is_Integer and b.is_Integer:
            return sympy.Integer(int(a) // int(b))
        return None


class ModularIndexing(sympy.Function):
    """`(a // div) % mod` on non-negative integers: one digit of a mixed-radix number."""

    is_integer = True

    @classmethod
    def eval(cls, a, div, mod):
        if mod == 1 or a == 0:
            return sympy.Integer(0)
        if a.is_Integer and div.is_Integer and mod.is_Integer:
            return sympy.Integer((int(a) // int(div)) % int(mod))
        return None


@dataclass(frozen=True)
class Value:
    """One node of a loop body: `op` applied to `args`, producing `dtype`.

    ops: "load" (buffer name, index), "constant" (python value), "index" (sympy expression),
    "rand"/"randn"/"randint" (seed name, offset expression), and the names in `triton_codegen.OPS`
    applied to Values ("to_dtype" takes the target dtype as its last argument).
    """

    op: str
    args: tuple
    dtype: torch.dtype

    def __hash__(self) -> int:
        # Computed once: a body is a DAG (a Clenshaw sum reads each partial sum twice), and its
        # hash recomputed from the leaves took time exponential in its depth.
        if "_hash" not in self.__dict__:
            object.__setattr__(self, "_hash", hash((self.op, self.args, self.dtype)))
        return self.__dict__["_hash"]


class LoweringError(Exception):
    """This node cannot be lowered; it runs as a fallback instead."""


def constant(value: Any, dtype: torch.dtype) -> Value:
    """`value` as `dtype`; a symbolic number (a size, a float read on the host) as the kernel
    argument it is (fp32 for floats, so not in float64 math)."""
    if isinstance(value, sympy.Basic) and not isinstance(value, sympy.Expr) and \
            value.free_symbols:  # a symbolic bool (`x * (x.shape[0] ** 0.5 > 2.5)`)
        raise LoweringError(f"a symbolic bool as a number: {value}")
    if isinstance(value, sympy.Expr) and value.free_symbols:
        if not value.is_integer and dtype is torch.float64:
            raise LoweringError("a float argument in float64 math (kernels take it as fp32)")
        return to_dtype(Value("index", (value,), torch.int64 if value.is_integer
                              else torch.float32), dtype)
    if dtype.is_floating_point:
        value = float(value)
    elif dtype == torch.bool:
        value = bool(value)
    else:
        # Out of range, an int wraps around as eager converts it (uint8 * -1 is uint8 * 255).
        bits = torch.iinfo(dtype).bits
        value = int(value) & ((1 << bits) - 1)
        if dtype.is_signed and value >= 1 << (bits - 1):
            value -= 1 << bits
    if isinstance(value, float):  # its sign too: `==` (and so CSE) takes 0.0 for -0.0
        return Value("constant", (value, math.copysign(1.0, value)), dtype)
    return Value("constant", (value,), dtype)


def index_in(i: sympy.Expr, n: sympy.Expr) -> Value:
    """Whether `0 <= i < n`: a constant where sympy can tell."""
    known = sympy.And(sympy.Ge(i, 0), sympy.Lt(i, n))
    if known in (sympy.true, sympy.false):
        return constant(bool(known), torch.bool)
    return Value("index_in", (i, n), torch.bool)


def op(name: str, *args: Value, dtype: torch.dtype | None = None) -> Value:
    return Value(name, args, dtype if dtype is not None else args[0].dtype)


def to_dtype(v: Value, dtype: torch.dtype) -> Value:
    if v.dtype == dtype:
        return v
    if v.op == "constant":
        c = v.args[0]
        if isinstance(c, float) and v.dtype.is_floating_point and not (
                dtype.is_floating_point or dtype.is_complex or dtype == torch.bool):
            # A float cast to an integer dtype as eager casts it (the kernels' cast of a
            # tensor does too): out of range or NaN, C leaves it undefined and CPU eager
            # gives the dtype's minimum (1e10 to int32 is -2**31, not 1e10 mod 2**32)
            c = torch.tensor(c, dtype=v.dtype).to(dtype).item()
        elif isinstance(c, float) and v.dtype.is_floating_point and dtype.is_floating_point:
            # Rounded as the source dtype holds it, then as torch converts it (float64 to
            # half through float32): a constant keeps a Python float, which folding would
            # otherwise carry past an explicit narrowing cast (`full(0.1).double()` was 0.1)
            c = torch.tensor(c, dtype=v.dtype).to(dtype).item()
        elif type(c) is int and dtype.is_floating_point and abs(c) > 2**24:
            # (rounded once, as torch converts it: through a Python float an int64 past 2**53
            # was rounded twice, `full(2**60 + 2**36 + 1).float()` was 2**60)
            c = torch.tensor(c, dtype=v.dtype).to(dtype).item()
        return constant(c, dtype)
    return Value("to_dtype", (v, dtype), dtype)


@dataclass(frozen=True)
class Layout:
    """Where a buffer's elements live: sizes, strides and offset (sympy), dtype, device."""

    size: tuple[sympy.Expr, ...]
    stride: tuple[sympy.Expr, ...]
    offset: sympy.Expr
    dtype: torch.dtype
    device: torch.device

    def index(self, idx: Index) -> sympy.Expr:
        return self.offset + sum((i * s for i, s in zip(idx, self.stride)), sympy.Integer(0))


def contiguous_strides(size: Sequence[sympy.Expr]) -> tuple[sympy.Expr, ...]:
    strides, acc = [], sympy.Integer(1)
    for s in reversed(size):
        strides.append(acc)
        acc = acc * s
    return tuple(reversed(strides))


def view_strides(size: Sequence[sympy.Expr], stride: Sequence[sympy.Expr],
                 new_size: Sequence[sympy.Expr]) -> tuple[sympy.Expr, ...] | None:
    """Strides of a view of shape `new_size` of a tensor laid out as (`size`, `stride`), or None
    where no strides reach its elements in order. The old dims fall into runs, each dim of a run
    stepping over whole rows of the next (`stride[d] == stride[d+1] * size[d+1]`, or of size 1);
    every new dim must lie within one run, and then steps through it evenly (size-1 dims get the
    strides torch's `view` gives them). Static sizes only (None for
    symbolic ones: which run a dim falls in would be a guess)."""
    if not all(isinstance(v, (int, sympy.Integer)) for v in (*size, *stride, *new_size)):
        return None
    size, stride, new_size = ([int(v) for v in vals] for vals in (size, stride, new_size))
    if 0 in size:
        return contiguous_strides([sympy.Integer(n) for n in new_size])
    out = [1] * len(new_size)
    d = len(new_size) - 1
    run_stride, run_numel, covered = stride[-1], 1, 1
    for k in reversed(range(len(size))):
        run_numel *= size[k]
        if k > 0 and (size[k - 1] == 1 or stride[k - 1] == run_numel * run_stride):
            continue  # dim k - 1 continues the run
        while d >= 0 and (covered < run_numel or new_size[d] == 1):
            out[d] = run_stride * covered
            covered *= new_size[d]
            d -= 1
        if covered != run_numel:
            return None
        if k > 0:
            run_stride, run_numel, covered = stride[k - 1], 1, 1
    if d != -1:
        return None
    return tuple(sympy.Integer(v) for v in out)


def product(values: Sequence[sympy.Expr]) -> sympy.Expr:
    out = sympy.Integer(1)
    for v in values:
        out = out * v
    return out


class LaidOut:
    """Something with a `layout`: its sizes, dtype and device are the layout's."""

    layout: Layout

    @property
    def size(self) -> tuple[sympy.Expr, ...]:
        return self.layout.size

    @property
    def dtype(self) -> torch.dtype:
        return self.layout.dtype

    @property
    def device(self) -> torch.device:
        return self.layout.device


@dataclass
class Buffer(LaidOut):
    """Storage with a name: what kernels load from and store to."""

    name: str
    layout: Layout


@dataclass
class InputBuffer(Buffer):
    """A graph input (the wrapper's argument `name`)."""


@dataclass
class Pointwise:
    """`fn(index) -> Value` over every index of `size`."""

    size: tuple[sympy.Expr, ...]
    dtype: torch.dtype
    device: torch.device
    fn: Callable[[Index], Value]


@dataclass
class Reduction:
    """For every index of `size`, combine `fn(index, rindex)` over every rindex of `rsize`.

    `reduction_type`: sum, prod, max, min, argmax, argmin, any, all.
    """

    size: tuple[sympy.Expr, ...]
    rsize: tuple[sympy.Expr, ...]
    reduction_type: str
    dtype: torch.dtype
    device: torch.device
    fn: Callable[[Index, Index], Value]


@dataclass
class Scan:
    """For every index of `size`, combine `fn` over the indices up to it along `dim` (a
    cumulative sum or product: `scan_type` "sum" or "prod"), or compute it from the whole row
    along `dim` (`scan_type` names a helper in triton_helpers: scans_and_sorts.py's cummax,
    argsort, ...). A row along `dim` is one block."""

    size: tuple[sympy.Expr, ...]
    dim: int
    scan_type: str
    dtype: torch.dtype
    device: torch.device
    fn: Callable[[Index], Value]


@dataclass
class Scatter:
    """For every index of `size`, write `fn(index)` at offset `target(index)` of the buffer this
    computation mutates (adding to what is there, with `accumulate`): `x[indices] = values`."""

    size: tuple[sympy.Expr, ...]
    target: Callable[[Index], sympy.Expr]
    accumulate: bool
    dtype: torch.dtype
    device: torch.device
    fn: Callable[[Index], Value]


@dataclass
class ComputedBuffer(Buffer):
    """A buffer filled by a loop nest we generate: a Pointwise, a Reduction or a Scan.

    `mutates`: the name of a buffer this computation writes into instead of a new buffer (an
    input mutated by the graph, or the copy a Scatter writes into).
    """

    data: Pointwise | Reduction | Scan | Scatter = None  # type: ignore[assignment]
    mutates: str | None = None


@dataclass
class ExternBuffer(Buffer):
    """The result of calling an aten op for real (an extern kernel or a fallback).

    `args`/`kwargs` hold Buffers where the op takes tensors. `index` picks one output of an op
    that returns several (the op itself is called once, by the buffer named `parent`).
    A result whose strides differ at run time from the traced ones (a kernel that follows its
    input's layout, given another one) is copied into the layout the lowering assumed.
    """

    target: Any = None
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    fallback: bool = False
    parent: str | None = None
    item: int | None = None


@dataclass
class BufferView(LaidOut):
    """A strided view of a buffer: no data of its own, just a different index map."""

    buffer: Buffer
    layout: Layout


TensorIR = Buffer | BufferView | Pointwise


def loader(t: TensorIR) -> Callable[[Index], Value]:
    """A function from an index of `t` to the Value at that index."""
    if isinstance(t, Pointwise):
        return t.fn
    if isinstance(t, BufferView):
        buffer, layout = t.buffer, t.layout
    else:
        buffer, layout = t, t.layout
    name, dtype = buffer.name, layout.dtype
    return lambda idx: Value("load", (name, layout.index(idx)), dtype)


class IndirectIndex(sympy.Symbol):
    """An index read from memory (gather, embedding): a symbol standing for `value` (an integer
    Value; with `wraps`, negative entries count from the end of a dim of `dim_size`, as in
    `x[idx]`; without, as for `gather` and `scatter`, they are out of range)."""

    value: Value
    dim_size: sympy.Expr
    wraps: bool

    def __new__(cls, value: Value, dim_size: sympy.Expr, wraps: bool = True) -> IndirectIndex:
        # One name per distinct (value, dim_size, wraps), by equality: a name made from the
        # hash would join indices whose hashes collide (`hash(x - 1) == hash(x - 2)` in sympy,
        # as `hash(-1) == hash(-2)` in CPython), and a symbol is its name
        key = (value, dim_size, wraps)
        name = _INDIRECT_NAMES.setdefault(key, f"indirect{len(_INDIRECT_NAMES)}")
        obj = super().__new__(cls, name, integer=True)
        obj.value, obj.dim_size, obj.wraps = value, dim_size, wraps
        return obj


_INDIRECT_NAMES: dict[tuple, str] = {}


def masked(v: Value, condition: Value) -> Value:
    """`v` with each of its loads made only where `condition` holds (elsewhere they read 0):
    for reads that would fall outside a tensor (the other inputs' part of a cat, padding).
    Indices a load reads from memory are read under `condition` too."""
    if v.op == "load":
        index = sympy.sympify(v.args[1])
        index = index.xreplace({s: IndirectIndex(masked(s.value, condition), s.dim_size, s.wraps)
                                for s in index.free_symbols if isinstance(s, IndirectIndex)})
        if len(v.args) > 2:  # masked already (a cat of a cat): it reads where both hold
            condition = op("logical_and", v.args[2], condition)
        return Value("load", (v.args[0], index, condition), v.dtype)
    args = tuple(masked(a, condition) if isinstance(a, Value) else a for a in v.args)
    return Value(v.op, args, v.dtype)
