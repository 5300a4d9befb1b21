"""Checks that eager's element-wise kernels make and their meta kernels leave out.

A meta kernel computes an output's sizes and dtype; many skip checks the CPU kernel makes, so a
fake accepts programs that eager refuses: `float_tensor & other`, `bool_tensor - other`,
`int_tensor.add_(y, alpha=0.5)`, `int_tensor.logit_()`, `complex_tensor.ceil()`, or an in-place
op whose broadcast result does not fit `self` (`x5x1.eq_(y5x5)`, which the meta kernel answers
by resizing `self`). A trace would then compute something where eager raises. Two checks close
the gap. `check_in_place_broadcast` compares the broadcast shape of an in-place op's operands
with `self`'s. `check_as_cpu_kernel` runs the real CPU kernel on empty tensors of the
arguments' dtypes and dims, with the same non-tensor arguments: a kernel refuses a dtype, a mix
of dtypes or a scalar (an `alpha`, an exponent) before it looks at any element, and an empty
tensor has no element whose value could make it raise where the real data would not. Its
verdicts are remembered per dtypes and numbers, so a process pays for each kind of call once.
"""

from __future__ import annotations

import functools
from typing import Any

import torch
from torch.utils._pytree import tree_map

_SYMBOLIC = (torch.SymInt, torch.SymFloat, torch.SymBool)


@functools.cache
def is_element_wise(func: Any) -> bool:
    """Whether `func` is an aten element-wise op: tagged pointwise, or the in-place form of one
    (`eq_`, `gcd_`, `abs_` are not tagged, their out-of-place forms are)."""
    if func.namespace != "aten":
        return False
    if torch.Tag.pointwise in func.tags:
        return True
    name = func._schema.name.split("::")[1]
    sibling = getattr(torch.ops.aten, name[:-1], None) if name.endswith("_") else None
    overload = getattr(sibling, func._overloadname, None)
    return torch.Tag.inplace in func.tags and overload is not None \
        and torch.Tag.pointwise in overload.tags


def writes_self_only(func: Any) -> bool:
    """Whether `func` is an in-place op: it writes its first argument and nothing else (an
    `out=` variant, which resizes its output, is not one)."""
    written = [a.alias_info is not None and a.alias_info.is_write for a in func._schema.arguments]
    return bool(written) and written[0] and not any(written[1:])


def check_in_place_broadcast(args: tuple, flat: list[Any]) -> None:
    """An in-place element-wise op's operands broadcast to the shape of `self`, the tensor
    written (static sizes only: symbolic ones are left to the meta kernel)."""
    written = args[0]
    shapes = [tuple(t.shape) for t in flat if isinstance(t, torch.Tensor)]
    if any(not isinstance(n, int) for shape in shapes for n in shape):
        return
    broadcast = tuple(torch.broadcast_shapes(*shapes))
    if broadcast != tuple(written.shape):
        raise RuntimeError(f"output with shape {list(written.shape)} doesn't match the "
                           f"broadcast shape {list(broadcast)}")


# Eager's verdict per kind of call (op, dtypes and ranks, numbers), for every mode: an
# exception to raise again, or None. Emptied when it grows past `_REMEMBERED`.
_REFUSALS: dict[tuple, Exception | None] = {}
_REMEMBERED = 1 << 14


def check_as_cpu_kernel(func: Any, args: tuple, kwargs: dict, flat: list[Any]) -> None:
    """Raise what eager raises for this call of `func` on CPU tensors, if it refuses the call
    whatever the tensors hold (its kernel run on empty tensors). Calls taking tensor lists
    (foreach ops), symbolic numbers or random draws are not probed."""
    if torch.Tag.nondeterministic_seeded in func.tags or any(
            isinstance(a, _SYMBOLIC) for a in flat) or any(
            isinstance(a, (list, tuple)) and any(isinstance(t, torch.Tensor) for t in a)
            for a in (*args, *kwargs.values())):
        return
    key = (func, *(_kind(a) for a in flat))
    if key not in _REFUSALS:
        if len(_REFUSALS) >= _REMEMBERED:
            _REFUSALS.clear()
        _REFUSALS[key] = _refusal(func, args, kwargs, flat)
    refusal = _REFUSALS[key]
    if refusal is not None:
        raise type(refusal)(*refusal.args)


def _kind(a: Any) -> tuple:
    if isinstance(a, torch.Tensor):
        return (a.dtype, a.dim())
    return (type(a), a)


def _refusal(func: Any, args: tuple, kwargs: dict, flat: list[Any]) -> Exception | None:
    """What the CPU kernel of `func` raises on empty tensors standing for the arguments: ones
    with dims as all-0 sizes of their rank (a memory format asks for one), 0-d ones kept 0-d
    (a zero) beside them (type promotion ranks the two apart), or all (0,) where none has dims
    (ranked alike)."""
    any_dims = any(isinstance(t, torch.Tensor) and t.dim() > 0 for t in flat)

    def empty(a: Any) -> Any:
        if not isinstance(a, torch.Tensor):
            return a
        rank = a.dim() if a.dim() or any_dims else 1
        return torch.zeros((0,) * rank, dtype=a.dtype)

    with torch._C._DisableTorchDispatch():
        real_args, real_kwargs = tree_map(empty, (args, kwargs))
        try:
            func(*real_args, **real_kwargs)
        except (RuntimeError, NotImplementedError, TypeError, ValueError) as e:
            return e
    return None
