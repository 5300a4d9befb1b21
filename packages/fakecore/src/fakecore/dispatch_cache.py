"""A cache of meta-kernel results, keyed by an op and the metadata of its arguments.

Running a meta kernel is most of the cost of faking an op, and a model's forward calls the same
ops on the same shapes over and over. For an op that makes fresh outputs (no views, no in-place
writes, no data-dependent sizes), the outputs' metadata is a function of the op and of its
arguments' metadata: the first call runs the kernel and records the outputs' sizes, strides,
offsets, dtypes and devices; later calls with equal metadata build the outputs from the record.
Symbolic sizes key by their expressions. A kernel's first run may record guards in the
ShapeEnv; those stay recorded, so a later hit that skips the kernel loses nothing.
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
        return (value.dtype, _freeze(value.shape), _freeze(value.stride()),
                _freeze(value.storage_offset()), value.fake_device)
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    if isinstance(value, _PLAIN):
        return (type(value), value)
    if isinstance(value, _SYMBOLIC):
        return (type(value), value.node.expr)
    raise Uncacheable


def _makes_fresh_outputs(func: Any) -> bool:
    schema = func._schema
    return not schema.is_mutable and all(r.alias_info is None for r in schema.returns)


class DispatchCache:
    """Output metadata of meta kernels, per (op, argument metadata)."""

    def __init__(self) -> None:
        self._entries: dict[tuple, tuple | None] = {}
        self._fresh: dict[Any, bool] = {}

    def key(self, func: Any, args: tuple, kwargs: dict) -> tuple | None:
        """The cache key of this call, or None if it must run the kernel."""
        fresh = self._fresh.get(func)
        if fresh is None:
            fresh = self._fresh[func] = _makes_fresh_outputs(func)
        if not fresh:
            return None
        try:
            return (func, _freeze(args), _freeze(tuple(sorted(kwargs.items()))))
        except Uncacheable:
            return None

    def lookup(self, mode: Any, key: tuple) -> Any:
        """The outputs for `key` rebuilt as new fakes, or None on a miss."""
        record = self._entries.get(key)
        if record is None:
            return None
        is_tuple, metas = record
        outs = [None if m is None else _make(mode, *m) for m in metas]
        return tuple(outs) if is_tuple else outs[0]

    def store(self, key: tuple, out: Any) -> None:
        outs = out if isinstance(out, tuple) else (out,)
        if not all(o is None or isinstance(o, FakeTensor) for o in outs):
            return
        metas = [
            None if o is None
            else (o.shape, o.stride(), o.storage_offset(), o.dtype, o.fake_device)
            for o in outs
        ]
        self._entries[key] = (isinstance(out, tuple), metas)


def _make(mode: Any, shape, stride, offset, dtype, device) -> FakeTensor:
    with torch._C._DisableTorchDispatch():
        meta = torch.empty_strided(shape, stride, dtype=dtype, device="meta")
        if offset:
            meta = torch.empty(
                offset + meta.untyped_storage().nbytes() // meta.element_size(),
                dtype=dtype, device="meta",
            ).as_strided(shape, stride, offset)
    return FakeTensor(mode, meta, device)
