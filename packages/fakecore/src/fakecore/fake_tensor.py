"""FakeTensor: a tensor with all of a real tensor's metadata and none of its data.

A FakeTensor *is* a meta tensor (its storage lives on PyTorch's `meta` device, which has sizes,
strides, storage offset and aliasing but no bytes) that claims another device: `x.device` says
`cuda:0` although no GPU was touched. The claim is made with `_make_subclass(...,
dispatch_device=True, device_for_backend_keys=device)`: the tensor dispatches as a tensor of the
fake device, and whenever C++ asks for its device the question comes to Python (`prim.device`),
where we answer "meta" while a meta kernel runs on it and the fake device otherwise. C++ code
that needs concrete sizes of a tensor with symbolic ones asks Python the same way.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch

from fakecore.errors import UnsupportedFakeOpError

if TYPE_CHECKING:
    from fakecore.fake_mode import FakeTensorMode


aten = torch.ops.aten
_TENSOR_DATA = torch._C.TensorBase.data  # the C getter and setter of `Tensor.data`


class FakeTensor(torch.Tensor):
    """A tensor of metadata only, owned by one FakeTensorMode."""

    fake_mode: FakeTensorMode
    fake_device: torch.device

    @staticmethod
    def __new__(
        cls, mode: FakeTensorMode, elem: torch.Tensor, device: torch.device,
        constant: torch.Tensor | None = None,
    ) -> FakeTensor:
        self = torch.Tensor._make_subclass(
            cls, elem, elem.requires_grad, dispatch_device=True, device_for_backend_keys=device
        )
        self.fake_mode = mode
        self.fake_device = device
        self.constant = constant
        return self

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    @property
    def constant(self) -> torch.Tensor | None:
        """The real value of this tensor when it is known (a small constant made in the traced
        code, and what ops on such constants compute); None once anything writes to its
        storage."""
        return self.__dict__.get("_constant")

    @constant.setter
    def constant(self, value: torch.Tensor | None) -> None:
        self.__dict__["_constant"] = value
        if value is not None:
            self.fake_mode.remember_value_of(self)

    @property
    def data(self) -> torch.Tensor:
        return _TENSOR_DATA.__get__(self)

    @data.setter
    def data(self, value: torch.Tensor) -> None:
        """`t.data = other` makes `t` a tensor of `other`'s storage without any op reaching the
        mode, so what was known about `t`'s old data is dropped here, and `other`'s value (the
        same data now) is taken when known."""
        _TENSOR_DATA.__set__(self, value)
        if isinstance(value, FakeTensor):
            self.fake_device = value.fake_device  # C++ took `value`'s dispatch keys too
        self.__dict__.pop("_unbacked_memo", None)
        known = value.constant if isinstance(value, FakeTensor) else None
        if known is not None and value.fake_mode is self.fake_mode:
            self.constant = known
        else:
            self.__dict__.pop("_constant", None)

    @property
    def device(self) -> torch.device:
        return torch.device("meta") if self.fake_mode.in_kernel else self.fake_device

    def tolist(self) -> Any:
        """The values as (nested) Python lists, each read with `.item()`: known for a constant,
        an unbacked symbol under a ShapeEnv, else a DataDependentError naming the op (C++'s
        `tolist` refuses tensor subclasses)."""
        if self.dim() == 0:
            return self.item()
        return [element.tolist() for element in self.unbind(0)]

    def __dlpack__(self, *args: Any, **kwargs: Any) -> Any:
        """Refused: a DLPack capsule shares the tensor's data, which a fake has none of (C++
        would export a null pointer, and `torch.from_dlpack` make a CPU tensor of it that
        crashes when read)."""
        raise UnsupportedFakeOpError("Tensor.__dlpack__", "a fake tensor has no data to share")

    __torch_function__ = torch._C._disabled_torch_function_impl

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        # Metadata questions come here even inside a kernel, where dispatch is otherwise off.
        answer = METADATA_QUERIES.get(func)
        if answer is not None:
            return answer(args[0])
        # Other ops come here when they meet a FakeTensor while its mode is not active.
        mode = next(a.fake_mode for a in torch.utils._pytree.tree_leaves((args, kwargs))
                    if isinstance(a, FakeTensor))
        with mode:
            return func(*args, **(kwargs or {}))

    def __repr__(self, *, tensor_contents: Any = None) -> str:
        size = tuple(self.shape)
        grad = ", requires_grad=True" if self.requires_grad else ""
        return f"FakeTensor(size={size}, dtype={self.dtype}, device={self.fake_device}{grad})"


# Questions C++ asks Python about a FakeTensor: its device (because the device is a claim), and
# concrete sizes, strides and offset from a kernel that cannot take symbolic ones (each `int()`
# decides a SymInt, recording a guard).
METADATA_QUERIES = {
    torch.ops.prim.device.default: lambda t: t.device,
    aten.size.default: lambda t: tuple(int(s) for s in t.size()),
    aten.stride.default: lambda t: tuple(int(s) for s in t.stride()),
    aten.storage_offset.default: lambda t: int(t.storage_offset()),
}
