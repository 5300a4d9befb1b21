"""A cache of meta-kernel results, keyed by an op and the metadata of its arguments.

Running a meta kernel is most of the cost of faking an op, and a model's forward calls the same
ops on the same shapes over and over. For an op that makes fresh outputs, or views of one of its
arguments (but no in-place writes), the outputs' metadata is a function of the op and of its
arguments' metadata: the first call runs the kernel and records the outputs' sizes, strides,
offsets, dtypes, devices and conjugate/negative bits; later calls with equal metadata build the
outputs from the record (a view as an `as_strided` of the same argument, so that it shares its
storage). An op whose schema has alias annotations other than "views of one argument", or that
writes, is never cached. Records follow what the kernel did: `unsafe_split` returns views of its
input under a schema of fresh tensors, and is rebuilt as such; a call whose outputs' aliasing a
record cannot rebuild (`x.to(x.dtype)` is `x` itself) is not recorded. Symbolic sizes key by
their expressions. Every key also holds the default dtype, which factories without a dtype use.
A kernel's first run may record guards in the ShapeEnv; those stay recorded, so a later hit that
skips the kernel loses nothing.
"""

from __future__ import annotations

from typing import Any

import torch

from fakecore.fake_tensor import FakeTensor

_PLAIN = (int, float, bool, str, type(None), torch.dtype, torch.device, torch.layout,
          torch.memory_format)


class Uncacheable(Exception):
    """An argument whose effect on the outputs the cache cannot key on."""


_SYMBOLIC = (torch.SymInt, torch.SymFloat, torch.SymBool)


def _freeze(value: Any) -> Any:
    if isinstance(value, FakeTensor):
        if value.constant is not None or value.layout is not torch.strided:
            raise Uncacheable  # a kept value, or sparse metadata (nnz) the key does not hold
        return (value.dtype, _freeze(value.shape), _freeze(value.stride()),
                _freeze(value.storage_offset()), value.fake_device, value.is_conj(),
                value.is_neg())
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    if isinstance(value, _PLAIN):
        return (type(value), value)
    if isinstance(value, _SYMBOLIC):
        return (type(value), value.node.expr)
    raise Uncacheable


def _output_kind(func: Any) -> tuple[str, int] | None:
    """("fresh", -1) for an op whose outputs are new tensors, ("view", i) for one whose outputs
    are views of its argument i, None for anything else (in-place ops, mixed returns)."""
    schema = func._schema
    returns = schema.returns
    if schema.is_mutable or not returns:
        return None
    if all(r.alias_info is None for r in returns):
        return ("fresh", -1)
    sets = {frozenset(r.alias_info.before_set) for r in returns if r.alias_info is not None}
    if len(sets) != 1 or any(r.alias_info is None or r.alias_info.is_write for r in returns):
        return None
    for i, arg in enumerate(schema.arguments):
        if arg.alias_info is not None and frozenset(arg.alias_info.before_set) in sets:
            return ("view", i)
    return None


class DispatchCache:
    """Output metadata of meta kernels, per (op, argument metadata)."""

    def __init__(self) -> None:
        self._entries: dict[tuple, tuple] = {}
        self._kinds: dict[Any, tuple[str, int] | None] = {}

    def key(self, func: Any, args: tuple, kwargs: dict, context: tuple = ()) -> tuple | None:
        """The cache key of this call, or None if it must run the kernel. `context`: the
        mode's state that changes what the call gives (whether it runs inside a
        decomposition)."""
        if func not in self._kinds:
            self._kinds[func] = _output_kind(func)
        if self._kinds[func] is None:
            return None
        try:
            # Factories without a dtype make tensors of the default dtype.
            return (func, torch.get_default_dtype(), _freeze(args),
                    _freeze(tuple(sorted(kwargs.items()))), context)
        except Uncacheable:
            return None

    def lookup(self, mode: Any, key: tuple, args: tuple) -> Any:
        """The outputs for `key` rebuilt as new fakes, or None on a miss."""
        record = self._entries.get(key)
        if record is None:
            return None
        container, base_index, metas = record
        if base_index < 0:
            outs = [None if m is None else _with_bits(_fresh(mode, *m[:-1]), m[-1]) for m in metas]
        else:
            outs = [_with_bits(_view(mode, args[base_index], *m[:-1]), m[-1]) for m in metas]
        return outs[0] if container is None else container(outs)

    def store(self, key: tuple, out: Any, args: tuple) -> None:
        """Record the outputs of a call that missed, when a record can rebuild them exactly.

        The record follows what the kernel did, not only what the schema says: outputs that
        all live in the storage of one argument (a view op's, and also `unsafe_split`'s or
        `_unsafe_view`'s, whose schemas say fresh) are rebuilt as views of that argument;
        outputs in storages of their own, as fresh tensors. Anything else (an input returned
        itself, as `x.to(x.dtype)` does; outputs sharing a storage among themselves) is not
        recorded."""
        kind, index = self._kinds[key[0]]
        container = tuple if isinstance(out, tuple) else list if isinstance(out, list) else None
        outs = out if container is not None else (out,)
        if not all(o is None or isinstance(o, FakeTensor) and o.layout is torch.strided
                   for o in outs):
            return
        tensors = [o for o in outs if o is not None]
        inputs = _tensor_leaves(args)
        if any(o is t for o in tensors for t in inputs):
            return
        storages = {_storage(o) for o in tensors}
        if tensors and len(storages) == 1:
            base = _base_index(tensors, args, next(iter(storages)))
            if base is not None and (kind == "fresh" or base == index):
                metas = [(o.shape, o.stride(), o.storage_offset(), _bits(o)) for o in outs]
                self._entries[key] = (container, base, metas)
                return
        fresh = len(storages) == len(tensors) and not storages & {_storage(t) for t in inputs}
        if kind == "fresh" and fresh:
            metas = [
                None if o is None
                else (o.shape, o.stride(), o.storage_offset(), o.dtype, o.fake_device, _bits(o))
                for o in outs
            ]
            self._entries[key] = (container, -1, metas)


def _base_index(outs: list[FakeTensor], args: tuple, storage: int) -> int | None:
    """The position of the argument whose storage the outputs live in (with its dtype, as an
    `as_strided` of it gives), if any."""
    for i, arg in enumerate(args):
        if (isinstance(arg, FakeTensor) and arg.layout is torch.strided
                and _storage(arg) == storage and all(o.dtype == arg.dtype for o in outs)):
            return i
    return None


def _tensor_leaves(value: Any) -> list[FakeTensor]:
    if isinstance(value, FakeTensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _tensor_leaves(v)]
    return []


def _storage(t: torch.Tensor) -> int:
    return t.untyped_storage()._cdata if t.layout is torch.strided else id(t)


def _bits(t: torch.Tensor) -> tuple[bool, bool]:
    return t.is_conj(), t.is_neg()


def _with_bits(t: FakeTensor, bits: tuple[bool, bool]) -> FakeTensor:
    """`t` with the conjugate and negative bits of the recorded output (`x.conj()` is a view
    of `x` that differs from it in its conjugate bit only)."""
    torch._C._set_conj(t, bits[0])
    torch._C._set_neg(t, bits[1])
    return t


def _fresh(mode: Any, shape, stride, offset, dtype, device) -> FakeTensor:
    with torch._C._DisableTorchDispatch():
        meta = torch.empty_strided(shape, stride, dtype=dtype, device="meta")
        if offset:
            meta = torch.empty(
                offset + meta.untyped_storage().nbytes() // meta.element_size(),
                dtype=dtype, device="meta",
            ).as_strided(shape, stride, offset)
    return FakeTensor(mode, meta, device)


def _view(mode: Any, base: FakeTensor, shape, stride, offset) -> FakeTensor:
    with mode.kernel_invocation():
        meta = torch.ops.aten.as_strided.default(base, shape, stride, offset)
    return FakeTensor(mode, meta, base.fake_device)
