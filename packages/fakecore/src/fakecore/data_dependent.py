"""Ops whose output depends on the data: their sizes and scalars become unbacked symbols.

`x.nonzero()` has as many rows as `x` has nonzero elements, which a fake tensor cannot know.
With a ShapeEnv, such an op gets a fresh *unbacked* symbol (`u0`) for the unknown size, with
the range the op guarantees (between 0 and the input's numel), and computing on continues
symbolically; only a decision that needs the value (`if n > 3:`) raises DataDependentError.
Without a ShapeEnv there is no symbol to give, and the op itself raises. The symbol is memoized
on the input tensor, so that `x[m]` and `y[m]` agree on their size. A handler returns
NotImplemented to let the op run as usual.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import sympy
import torch

from fakecore import value_ranges
from fakecore.errors import DataDependentError, UnsupportedFakeOpError
from fakecore.fake_tensor import FakeTensor
from fakecore.sym_functions import FloorDiv

if TYPE_CHECKING:
    from fakecore.fake_mode import FakeTensorMode

aten = torch.ops.aten
DATA_DEPENDENT_OPS: dict[Any, Callable[..., Any]] = {}


def _handles(*ops: Any) -> Callable:
    def register(fn: Callable) -> Callable:
        for op in ops:
            DATA_DEPENDENT_OPS[op] = fn
        return fn

    return register


def memoized(mode: FakeTensorMode, x: FakeTensor) -> dict[str, Any]:
    """The unbacked values memoized on `x` (forgotten when its storage is written)."""
    mode.remember_value_of(x)
    return x.__dict__.setdefault("_unbacked_memo", {})


def _count(
    mode: FakeTensorMode, func: Any, x: FakeTensor, memo: str,
    numel: int | float | torch.SymInt | None = None, at_least: int = 0,
) -> torch.SymInt:
    """The unbacked number of elements that `func` selects from `numel` (default: `x.numel()`),
    at least `at_least`, memoized on `x` and shared by the ops that ask."""
    if mode.shape_env is None:
        raise DataDependentError(
            f"{func} has an output size that depends on the data; give the FakeTensorMode a "
            "ShapeEnv to trace it with an unbacked size"
        )
    memos = memoized(mode, x)
    if memo not in memos:
        upper = _static_bound(x.numel() if numel is None else numel)
        memos[memo] = mode.shape_env.create_unbacked_symint(str(func), at_least, upper,
                                                            size_like=True)
    return memos[memo]


class FakeImplCtx(torch._library.fake_impl.FakeImplCtx):
    """What `torch.library.get_ctx()` gives a custom op's fake impl (`register_fake`): a size
    that depends on the data is an unbacked symbol of the mode's ShapeEnv."""

    def new_dynamic_size(self, *, min: int = 0, max: int | None = None) -> torch.SymInt:
        if self._shape_env is None:
            raise DataDependentError(
                f"{self._op} has an output size that depends on the data; give the "
                "FakeTensorMode a ShapeEnv to trace it with an unbacked size"
            )
        if isinstance(min, torch.SymInt) or isinstance(max, torch.SymInt) or min < 0:
            raise ValueError(f"ctx.new_dynamic_size(min={min}, max={max}): expected "
                             "nonnegative ints known statically")
        upper = float("inf") if max is None else max
        return self._shape_env.create_unbacked_symint(str(self._op), min, upper, size_like=True)


def _static_bound(n: int | float | torch.SymInt) -> int | float:
    """`n` as an upper bound valid for every input: a symbolic size bounds nothing (its hint
    holds only for the example inputs)."""
    return n if isinstance(n, (int, float)) else float("inf")


def _empty(mode: FakeTensorMode, like: FakeTensor, sizes: list, dtype: torch.dtype) -> FakeTensor:
    with mode.kernel_invocation():
        meta = torch.empty(sizes, dtype=dtype, device="meta")
    return FakeTensor(mode, meta, like.fake_device)


@_handles(aten.nonzero.default)
def _nonzero(mode, func, args, kwargs):
    x = args[0]
    count = _count(mode, func, x, "nonzero")
    # Real nonzero fills an (ndim, count) buffer and returns its transpose.
    with mode.kernel_invocation():
        meta = torch.empty_strided([count, x.dim()], [1, count], dtype=torch.long, device="meta")
    return FakeTensor(mode, meta, x.fake_device)


@_handles(aten.masked_select.default)
def _masked_select(mode, func, args, kwargs):
    x, mask = args
    with mode.kernel_invocation():
        shape = torch.broadcast_shapes(x.shape, mask.shape)
    numel = 1
    for size in shape:
        numel = numel * size
    return _empty(mode, x, [_count(mode, func, mask, f"masked_select{tuple(x.shape)}", numel)],
                  x.dtype)


@_handles(aten._unique2.default, aten.unique_consecutive.default, aten.unique_dim.default,
          aten._unique.default)
def _unique(mode, func, args, kwargs):
    bound = func._schema.arguments
    values = dict(zip((a.name for a in bound), args)) | kwargs
    x = values["self"]
    dim = values.get("dim")
    if dim is None:
        n = _count(mode, func, x, f"unique{func}")
        unique_shape = [n]
    else:
        dim %= x.dim()
        n = _count(mode, func, x, f"unique{func}{dim}")
        unique_shape = [*x.shape[:dim], n, *x.shape[dim + 1:]]
    outputs = [_empty(mode, x, unique_shape, x.dtype)]
    if func is aten._unique.default:
        inverse = values.get("return_inverse", False)
        outputs.append(_empty(mode, x, list(x.shape) if inverse else [0], torch.long))
        return tuple(outputs)
    inverse_shape = list(x.shape) if dim is None else [x.shape[dim]]
    inverse = values.get("return_inverse", False)
    counts = values.get("return_counts", False)
    outputs.append(_empty(mode, x, inverse_shape if inverse else [0], torch.long))
    outputs.append(_empty(mode, x, [n] if counts else [0], torch.long))
    return tuple(outputs)


@_handles(aten.repeat_interleave.Tensor)
def _repeat_interleave(mode, func, args, kwargs):
    repeats = args[0]
    output_size = kwargs.get("output_size")
    if output_size is None:
        # The sum of the repeats: not bounded by their number.
        output_size = _count(mode, func, repeats, "repeat_interleave", float("inf"))
    return _empty(mode, repeats, [output_size], repeats.dtype)


@_handles(aten.bincount.default)
def _bincount(mode, func, args, kwargs):
    # max(minlength, x.max() + 1) bins: an unbacked count, memoized on x like nonzero's.
    values = dict(zip((a.name for a in func._schema.arguments), args)) | kwargs
    x, weights, minlength = values["self"], values.get("weights"), values.get("minlength", 0)
    bins = _count(mode, func, x, f"bincount{minlength}", float("inf"),
                  minlength if isinstance(minlength, int) else 0)
    # (as the CPU kernel: float32 weights give float32 counts, other weights float64)
    dtype = torch.long if weights is None else (
        torch.float32 if weights.dtype is torch.float32 else torch.float64)
    return _empty(mode, x, [bins], dtype)


def _is_mask(index: Any) -> bool:
    return index is not None and index.dtype in (torch.bool, torch.uint8)


def _has_mask(x: FakeTensor, indices: list) -> bool:
    """Whether `indices` hold a boolean mask; a mask must have the sizes of the dims it indexes
    (an IndexError as in eager otherwise)."""
    if not any(_is_mask(i) for i in indices):
        return False
    dim = 0
    for index in indices:
        if not _is_mask(index):
            dim += 1
            continue
        for j, size in enumerate(index.shape):
            if dim + j >= x.dim():
                raise IndexError(f"too many indices for tensor of dimension {x.dim()}")
            message = (f"The shape of the mask {list(index.shape)} at index {j} does not match "
                       f"the shape of the indexed tensor {list(x.shape)} at index {dim + j}")
            torch._check_with(IndexError, size == x.shape[dim + j], lambda m=message: m)
        dim += index.dim()
    return True


@_handles(aten.index.Tensor)
def _boolean_index(mode, func, args, kwargs):
    # A boolean mask selects a data-dependent number of elements: spell it as the long indices
    # of its nonzero elements (one unbacked count), and index with those.
    x, indices = args
    if not _has_mask(x, indices):
        return NotImplemented
    expanded = []
    for index in indices:
        if _is_mask(index):
            with mode:
                expanded.extend(index.nonzero().unbind(1))
        else:
            expanded.append(index)
    with mode:
        return func(x, expanded)


@_handles(aten.index_put.default, aten.index_put_.default)
def _boolean_index_put(mode, func, args, kwargs):
    # Writing through a mask leaves the destination's layout alone, whatever the mask holds.
    x, indices = args[0], args[1]
    if not _has_mask(x, indices):
        return NotImplemented
    if func is aten.index_put_.default:
        return x
    with mode:
        return torch.empty_like(x)


def _is_unbacked(mode, value) -> bool:
    return isinstance(value, torch.SymInt) and bool(
        value.node.expr.free_symbols & mode.shape_env.unbacked_producers.keys()
    )


def _as_expr(value: int | torch.SymInt) -> sympy.Expr:
    return value.node.expr if isinstance(value, torch.SymInt) else sympy.Integer(value)


class _SliceBounds:
    """Python's slice arithmetic on a dim of size `n` (a sympy expression), where `n` or a bound
    is unbacked. Each question is decided as `guard_or_false` does: statically, else on the
    hints with a guard, else (unbacked) False, so that a value is a sympy `Min`/`Max` of the
    cases it could not tell apart, never a guess."""

    def __init__(self, env: Any, n: sympy.Expr) -> None:
        self.env, self.n = env, n

    def holds(self, relation: sympy.Basic) -> bool:
        return bool(self.env.evaluate_expr(relation, fallback=False))

    def max(self, a: sympy.Expr, b: sympy.Expr) -> sympy.Expr:
        return a if self.holds(a >= b) else b if self.holds(b >= a) else sympy.Max(a, b)

    def min(self, a: sympy.Expr, b: sympy.Expr) -> sympy.Expr:
        if isinstance(a, sympy.Max) and all(self.holds(arg <= b) for arg in a.args):
            return a  # a start clamped to 0 below and to n above: `Max(0, u0 - 1) <= u0`
        return a if self.holds(a <= b) else b if self.holds(b <= a) else sympy.Min(a, b)

    def unwrapped(self, index: int | torch.SymInt) -> sympy.Expr | None:
        """`index` counted from the dim's start (a negative one counts from its end), not yet
        clamped to [0, n]; None when its sign is not known."""
        expr = _as_expr(index)
        if self.holds(expr >= 0):
            return expr
        if self.holds(expr < 0):
            return expr + self.n
        return None

    def length(self, start: sympy.Expr, end: sympy.Expr) -> sympy.Expr:
        """The length of `[start:end]` for unwrapped bounds: max(0, min(end, n) - max(start, 0)),
        which is the difference of the two clamped to [0, n] whenever that is positive. A Min
        minus a Max is the Min of the differences of their arguments, where sympy cancels
        `n - (n - 1)` to 1."""
        hi, lo = self.min(end, self.n), self.max(start, 0)
        his = hi.args if isinstance(hi, sympy.Min) else (hi,)
        los = lo.args if isinstance(lo, sympy.Max) else (lo,)
        # (the max with 0 taken of each difference: `[1:2]` is Min(1, Max(0, u0 - 1)), 1
        # unless `[1:]` is empty)
        return sympy.Min(*(self.max(h - low, sympy.Integer(0)) for h in his for low in los))


@_handles(aten.slice.Tensor)
def _slice_with_unbacked(mode, func, args, kwargs):
    # `x[1:]` of a dim whose size `u0` comes from the data, or `x[u:]` with `u` from the data:
    # eager's slice clamps its bounds to the dim, deciding on the values; here each bound the
    # ShapeEnv cannot place becomes a Min/Max of its possible values, as with torch's
    # guard_or_false: `[1:]` has length Max(0, u0 - 1) at offset Min(1, u0), `[:2]` Min(2, u0)
    # at offset 0, `[-1:]` Min(1, u0). A bound whose sign is unknown (a negative `u` counts from
    # the end) gives a new unbacked length (and start), bounded by the dim's size.
    bound = dict(zip(("self", "dim", "start", "end", "step"), args)) | kwargs
    x = bound["self"]
    start, end, step = bound.get("start"), bound.get("end"), bound.get("step", 1)
    env = mode.shape_env
    if env is None or x.dim() == 0 or not -x.dim() <= bound.get("dim", 0) < x.dim():
        return NotImplemented  # (the kernel's errors)
    dim = bound.get("dim", 0) % x.dim()
    size = x.shape[dim]
    if _is_unbacked(mode, step) or not any(_is_unbacked(mode, v) for v in (size, start, end)):
        return NotImplemented
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    n = _as_expr(size)
    bounds = _SliceBounds(env, n)
    first = sympy.Integer(0) if start is None else bounds.unwrapped(start)
    to_the_end = end is None or isinstance(end, int) and end == sys.maxsize  # (`x[1:]`)
    last = n if to_the_end else bounds.unwrapped(end)
    upper = _static_bound(size)
    if first is None or last is None:
        length = _as_expr(env.create_unbacked_symint(str(func), 0, upper, size_like=True))
    else:
        length = bounds.length(first, last)
    if first is None:
        offset = _as_expr(env.create_unbacked_symint(str(func), 0, upper, size_like=True))
    else:
        offset = bounds.min(bounds.max(first, sympy.Integer(0)), n)
    step = _as_expr(step)
    if step != 1 and bounds.holds(length <= step):
        length = sympy.Min(1, length)  # (`[:1:2]`, `[0:2:2]`: one element unless empty)
    elif step != 1:
        length = FloorDiv(length + step - 1, step)
    sizes, strides = list(x.shape), list(x.stride())
    stride = _as_expr(strides[dim])
    sizes[dim] = _symint(env, length)
    strides[dim] = _symint(env, stride * step)
    offset = _symint(env, _as_expr(x.storage_offset()) + offset * stride)
    with mode.kernel_invocation():
        meta = torch.ops.aten.as_strided.default(x, sizes, strides, offset)
    return FakeTensor(mode, meta, x.fake_device)


def _at_most_one(env: Any, size: int | torch.SymInt) -> bool:
    return value_ranges.bound(_as_expr(size), env.var_to_range).upper <= 1


def _broadcast_dim(env: Any, sizes: list) -> int | torch.SymInt | None:
    """The size that eager broadcasts `sizes` (of one dim, a 1 left out) to, where torch's rule
    would assert sizes equal that eager need not: a size of `Min(1, n)` (`x[:1]`) is 1 unless
    `n` is, and then both are 0, so it broadcasts to `n`; a size that is 1 or 0 otherwise
    (`x[:1]` against `y`, `x[1:2]` against `x`) broadcasts to the product with the other size,
    where eager requires it be 1 unless the other is at most 1: a runtime assert. None where
    nothing is to be done (one size, or two that may both be more than 1)."""
    distinct = list({_as_expr(s): s for s in sizes}.items())
    kept = [(e, s) for e, s in distinct
            if not any(other != e and sympy.Min(1, other) == e for other, _ in distinct)]
    if len(kept) == 1:
        return kept[0][1] if len(distinct) > 1 else None
    bits = [s for _, s in kept if _at_most_one(env, s)]
    rest = [s for _, s in kept if not _at_most_one(env, s)]
    if len(rest) > 1:
        return None
    for bit in bits:
        if rest:
            _assume(env, sympy.Or(sympy.Eq(_as_expr(bit), 1), _as_expr(rest[0]) <= 1))
    product = rest[0] if rest else 1
    for bit in bits:
        product = bit * product
    return product


def slice_of_one_broadcast_sizes(args: tuple) -> list[list | None]:
    """For each of a pointwise op's arguments, the sizes it broadcasts to where a dim of size
    at most one from the data (`x[:1]`, `Min(1, n)`) meets another size (aligned from the
    right): its sizes with such dims made what eager broadcasts them to (`_broadcast_dim`);
    None for an argument left as it is.

    Eager broadcasts `x[:1]` against `x`: its size is 1 unless `x` is empty, and then both
    are 0. Where `n` is unbacked, torch's broadcasting rule (in C++ and in `torch._refs`, which
    decompositions use) cannot tell `Min(1, n)` is 1, takes the sizes as equal and asserts so
    at run time, an assert that fails for every `n > 1`."""
    tensors = [a for a in args if isinstance(a, FakeTensor)]
    if not tensors or tensors[0].fake_mode.shape_env is None:
        return [None] * len(args)
    env = tensors[0].fake_mode.shape_env
    targets = {}
    for dim in range(-max(t.dim() for t in tensors), 0):
        sizes = [t.shape[dim] for t in tensors if t.dim() >= -dim and _as_expr(t.shape[dim]) != 1]
        if any(_is_unbacked(tensors[0].fake_mode, s) and _at_most_one(env, s) for s in sizes):
            targets[dim] = _broadcast_dim(env, sizes)

    def broadcast_sizes(t: Any) -> list | None:
        if not isinstance(t, FakeTensor):
            return None
        sizes = list(t.shape)
        expanded = False
        for dim in range(-t.dim(), 0):
            target = targets.get(dim)
            if target is not None and _as_expr(target) != _as_expr(sizes[dim]):
                sizes[dim], expanded = target, True
        return sizes if expanded else None

    return [broadcast_sizes(a) for a in args]


def _expanded(mode: FakeTensorMode, t: FakeTensor, sizes: list) -> FakeTensor:
    """`t` as a view of `sizes`, each dim of size at most one whose size they change read at
    stride 0 (a larger one changes only to 0, or stays, by the broadcast's assert)."""
    strides = [0 if _as_expr(new) != _as_expr(old) and _at_most_one(mode.shape_env, old)
               else stride for new, old, stride in zip(sizes, t.shape, t.stride())]
    with mode.kernel_invocation():
        meta = torch.ops.aten.as_strided.default(t, sizes, strides, t.storage_offset())
    return FakeTensor(mode, meta, t.fake_device)


def broadcast_slices_of_one(mode: FakeTensorMode, args: tuple) -> tuple:
    """A pointwise op's arguments with each tensor dim of size at most one from the data that
    meets another size expanded to the size eager broadcasts them to, at stride 0 (see
    slice_of_one_broadcast_sizes). An argument left as it is stays the same object
    (`t.shape` makes new SymInts each time: a copy would not compare equal to it by identity)."""
    return tuple(a if sizes is None else _expanded(mode, a, sizes)
                 for a, sizes in zip(args, slice_of_one_broadcast_sizes(args)))


@_handles(aten.expand.default)
def _expand_slice_of_one(mode, func, args, kwargs):
    # A size of at most one from the data expanded: eager expands a 1, or a 0 to 0, where
    # torch's rule would assert the size equal to the target or 1. `x[:1].expand(n)` of a dim
    # of size `n` holds for every n; to another size `m`, x[:1] must be 1 unless m is 0. A
    # larger size expanded to its product with a size of at most one (a broadcast's, see
    # _broadcast_dim) must be at most 1 unless that is 1.
    values = dict(zip(("self", "size", "implicit"), args)) | kwargs
    x, target = values["self"], list(values["size"])
    lead = len(target) - x.dim()
    env = mode.shape_env
    if env is None or lead < 0:
        return NotImplemented
    sizes = list(x.shape)
    broadcast = False
    for dim in range(x.dim()):
        size, to = _as_expr(sizes[dim]), _as_expr(target[lead + dim])
        if to in (size, -1) or not _is_unbacked(mode, sizes[dim]):
            continue
        factor = sympy.simplify(to / size) if isinstance(to, sympy.Mul) and size in to.args \
            else None
        if _at_most_one(env, sizes[dim]):
            if factor is None and sympy.Min(1, to) != size:
                _assume(env, sympy.Or(sympy.Eq(size, 1), sympy.Eq(to, 0)))
        elif factor is not None and value_ranges.bound(factor, env.var_to_range).upper <= 1:
            _assume(env, sympy.Or(sympy.Eq(factor, 1), size <= 1))
        else:
            continue
        sizes[dim], broadcast = target[lead + dim], True
    if not broadcast:
        return NotImplemented
    view = _expanded(mode, x, sizes)
    with mode.kernel_invocation():
        meta = func(view, target, implicit=values.get("implicit", False))
    return FakeTensor(mode, meta, x.fake_device)


def _assume(env: Any, condition: sympy.Basic) -> None:
    """Check `condition` at run time, once however many ops ask."""
    if condition not in (a.expr for a in env.runtime_asserts):
        env.assume(condition)


def _symint(env: Any, expr: sympy.Expr) -> int | torch.SymInt:
    hint = env.size_hint(expr)
    return env.wrap(expr, int, None if hint is None else int(hint))


@_handles(aten.max.default, aten.min.default, aten.max.dim, aten.min.dim)
def _extreme_of_symbolic(mode, func, args, kwargs):
    # `max()`/`max(dim)` have no identity: eager raises for an empty input (dim), which the
    # meta kernels (unlike amax's reference) do not check. Of a symbolic size that may be 0
    # (`x[:n]` of an `.item()` n; `x[n:]` of an int n seen to change, at n = len(x)), the
    # check is a runtime assert, with eager's error.
    x = args[0]
    if mode.shape_env is None or not any(isinstance(s, torch.SymInt) for s in x.shape):
        return NotImplemented
    name = func.overloadpacket.__name__
    if func in (aten.max.default, aten.min.default):
        message = (f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                   "Specify the reduction dim with the 'dim' argument.")
        torch._check(x.numel() != 0, lambda: message)
        return NotImplemented
    dim = (dict(zip(("self", "dim"), args)) | kwargs).get("dim")
    if isinstance(dim, int) and -x.dim() <= dim < x.dim() and x.dim() > 0:
        message = f"{name}(): Expected reduction dim {dim % x.dim()} to have non-zero size."
        torch._check_with(IndexError, x.shape[dim] != 0, lambda: message)
    return NotImplemented


@_handles(aten.roll.default)
def _roll_unbacked(mode, func, args, kwargs):
    # Its decomposition returns early for an empty input (`if a.numel() == 0`), which an
    # unbacked size cannot decide; both ways the result has the input's sizes, and a new
    # contiguous tensor is what the nonempty way makes (an empty one has no elements to lay out).
    x = args[0]
    if mode.shape_env is None or not any(_is_unbacked(mode, size) for size in x.shape):
        return NotImplemented
    values = dict(zip(("self", "shifts", "dims"), args)) | kwargs
    # The arguments' errors, as eager raises them: on a stand-in of the same rank.
    with mode.kernel_invocation():
        stand_in = torch.empty([1] * x.dim(), device="meta")
        func(stand_in, [0] * len(values["shifts"]), values.get("dims", []))
    return _empty(mode, x, list(x.shape), x.dtype)


@_handles(aten._local_scalar_dense.default)
def _item(mode, func, args, kwargs):
    x = args[0]
    if x.constant is not None:
        return x.constant.item()
    if mode.shape_env is None:
        raise DataDependentError(
            f"{func} (.item()) reads a value of a fake tensor; give the FakeTensorMode a "
            "ShapeEnv to trace it as an unbacked symbol"
        )
    memos = memoized(mode, x)
    if "item" not in memos:
        env = mode.shape_env
        if x.dtype.is_floating_point:
            memos["item"] = env.create_unbacked_symfloat(str(func))
        elif x.dtype is torch.bool:
            memos["item"] = env.create_unbacked_symint(str(func), 0, 1) == 1
        else:
            memos["item"] = env.create_unbacked_symint(str(func))
    return memos["item"]


@_handles(aten.equal.default, aten.is_nonzero.default, aten.allclose.default)
def _needs_data(mode, func, args, kwargs):
    raise DataDependentError(f"{func} returns a Python bool computed from the data")


@_handles(aten._pack_padded_sequence.default)
def _packs_by_lengths(mode, func, args, kwargs):
    # (its kernel reads the lengths on the CPU; its meta kernel refuses them as not being there)
    raise DataDependentError(f"{func}: its outputs' sizes and values come from the lengths' "
                             "values")


@_handles(aten._use_cudnn_ctc_loss.default, aten._use_cudnn_ctc_loss.Tensor)
def _uses_cudnn_ctc_loss(mode, func, args, kwargs):
    # CTC loss on a GPU asks whether cuDNN's kernel takes its arguments (it has a CUDA kernel
    # only). The answer reads metadata: cuDNN on, blank 0, float32 3-d log-probs on the GPU,
    # 1-d contiguous int32 targets (on the CPU with list lengths; int32 length tensors), and
    # then the lengths: every input the whole time, each target under 256 and no longer than
    # its input. Tensor lengths hold those in their data. Where cuDNN is ruled out, the
    # answer is False (ATen's own kernel, computing the same loss).
    values = dict(zip(("log_probs", "targets", "input_lengths", "target_lengths", "blank"),
                      args)) | kwargs
    log_probs, targets = values["log_probs"], values["targets"]
    inputs, lengths = values["input_lengths"], values["target_lengths"]
    listed = func is aten._use_cudnn_ctc_loss.default
    possible = (torch.backends.cudnn.enabled and torch.backends.cudnn.is_available()
                and values["blank"] == 0 and log_probs.dim() == 3
                and log_probs.dtype == torch.float32 and log_probs.fake_device.type == "cuda"
                and targets.dim() == 1 and targets.dtype == torch.int32
                and targets.is_contiguous()
                and (targets.fake_device.type == "cpu" if listed
                     else inputs.dtype == lengths.dtype == torch.int32))
    if not possible:
        return False
    if not listed:
        raise DataDependentError(f"{func}: whether cuDNN's kernel takes these lengths depends "
                                 "on their values")
    steps = log_probs.shape[0]
    return (len(inputs) == len(lengths) and all(n == steps for n in inputs)
            and all(t < 256 and t <= n for t, n in zip(lengths, inputs)))


_MIOPEN_CTC_QUERIES = ((aten._use_miopen_ctc_loss.default, aten._use_miopen_ctc_loss.Tensor)
                       if hasattr(aten, "_use_miopen_ctc_loss") else ())  # (torch 2.12+)


@_handles(*_MIOPEN_CTC_QUERIES)
def _uses_miopen_ctc_loss(mode, func, args, kwargs):
    # The same question for MIOpen, which only ROCm builds have
    if torch.version.hip is None:
        return False
    raise UnsupportedFakeOpError(func, "MIOpen's conditions for CTC loss are not modelled")
