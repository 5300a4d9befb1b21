"""Tensors and symbolic numbers while tracing: a graph node plus its fake example value.

A TensorVariable stands for a tensor the graph computes (or takes as input); its `fake` is the
FakeTensor that fakecore computed for it, so shape, dtype and device questions are answered
without running anything. A SymNodeVariable stands for a SymInt/SymFloat/SymBool computed from
symbolic sizes; deciding its truth records a guard in the ShapeEnv.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import torch

from dynamo.exc import Unsupported
from dynamo.side_effects import MISSING
from dynamo.variables.base import VariableTracker
from dynamo.variables.constant import ConstantVariable
from fakecore import DataDependentError, may_overlap
from guards import AttrSource, Equals, PlainSubclassLacks, TensorPropertySource, TypeSource

if TYPE_CHECKING:
    import torch.fx

    from dynamo.interpreter import Translator
    from dynamo.output_graph import OutputGraph

# Attributes whose value the fake tensor knows, and that guards keep constant.
_METADATA = frozenset({
    "dtype", "device", "layout", "requires_grad", "is_cuda", "is_cpu", "is_meta", "is_sparse",
    "is_quantized", "is_mkldnn", "is_nested", "ndim", "is_leaf",
})
_METADATA_METHODS = frozenset({
    "dim", "ndimension", "is_floating_point", "is_complex", "is_contiguous", "element_size",
    "get_device", "is_signed", "nelement", "numel", "size", "stride", "storage_offset",
})
_DATA_DEPENDENT = frozenset({"item", "tolist", "numpy", "__bool__", "__int__", "__float__",
                             "data_ptr"})
_UNSUPPORTED = frozenset({"backward", "register_hook", "retain_grad", "untyped_storage",
                          "storage", "__array__",
                          # properties of the real storage, which a fake tensor's lacks
                          "is_shared", "is_pinned",
                          # no guard covers it, and a fake of a leaf view is no view
                          "_is_view"})


def subclass_override(cls: type | None, name: str) -> type | None:
    """The class of a tensor subclass `cls` (one traced as a plain tensor: its torch-function and
    dispatch overrides are off) that defines `name` above `torch.Tensor` (or `nn.Parameter`),
    or None: a method, property or operator it overrides (`def double(self)`, `__add__`) is
    not the tensor's, and the fake tensor would answer torch's."""
    if cls is None:
        return None
    for klass in cls.__mro__:
        if klass is torch.Tensor or klass is torch.nn.Parameter:
            return None
        if name in vars(klass):
            return klass
    return None


def refuse_override(output: OutputGraph, cls: type | None, source: Any,
                    names: tuple[str, ...], what: str) -> None:
    """Break (naming `what`) where `cls`, the subclass of a tensor traced as a plain tensor,
    defines one of `names` itself; otherwise guard that the class at `source` still lacks them
    (one added to the class later must not go unseen by the entry traced as torch.Tensor's)."""
    if cls is None or cls is torch.Tensor or cls is torch.nn.Parameter:
        return
    for name in names:
        owner = subclass_override(cls, name)
        if owner is not None:
            raise Unsupported(f"{what} of a {cls.__qualname__}: {owner.__qualname__} defines "
                              f"its own {name} (a tensor subclass's override of torch.Tensor's)")
    if source is not None:
        output.add_guard(PlainSubclassLacks(TypeSource(source), names))


def _in_place(name: str) -> bool:
    return name.endswith("_") and not name.startswith("__") or name in _IN_PLACE_OPERATORS


_IN_PLACE_OPERATORS = frozenset(f"__i{op}__" for op in (
    "add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or", "xor",
    "lshift", "rshift"))


class TensorVariable(VariableTracker):
    cls: type | None = None  # an input's own class (a Parameter subclass), which its guard checks

    def __init__(self, node: torch.fx.Node, fake: torch.Tensor, source: Any = None) -> None:
        self.node = node
        self.fake = fake
        self.source = source

    def python_type(self) -> type:
        if self.cls is not None:
            return self.cls
        return torch.nn.Parameter if isinstance(self.fake, torch.nn.Parameter) else torch.Tensor

    def getattr(self, tx: Translator, name: str) -> VariableTracker:
        refuse_override(tx.output, self.cls, self.source, (name,), repr(name))
        if name in _METADATA:
            value = getattr(self.fake, name)
            if name == "is_leaf":
                self._guard_read(tx, lambda source: AttrSource(source, name), value)
            return ConstantVariable(value)
        if name == "shape":
            return tx.output.size_variable(self, self.fake.shape)
        if name in ("T", "mT", "H", "mH", "real", "imag", "data"):
            return tx.output.call_function(getattr, [self, ConstantVariable(name)], {})
        if name == "grad":  # of an input: read through its source (None or a graph input)
            written = tx.output.side_effects.load("attr", self, name)
            if written is not MISSING:
                return written
            real = tx.output.input_value(self.source) if self.source is not None else None
            if real is None:
                raise Unsupported("reading .grad of a tensor computed inside the frame")
            from dynamo.variables.builder import wrap

            return wrap(tx, real.grad, AttrSource(self.source, "grad"))
        if not callable(getattr(torch.Tensor, name, None)):  # grad_fn, _version, output_nr, ...
            raise Unsupported(f"tensor attribute {name!r}")
        from dynamo.variables.functions import BoundMethodVariable

        return BoundMethodVariable(self, name)

    def setattr(self, tx: Translator, name: str, value: VariableTracker) -> None:
        """`p.grad = None` (a hand-written `zero_grad`), or a gradient like `p`, on a tensor
        from the frame: recorded, read back by the trace, and set for real after the graph."""
        if name != "grad" or self.source is None:
            raise Unsupported(f"setting attribute {name!r} of a tensor"
                              + ("" if name != "grad" else " computed inside the frame"))
        if not (value.is_constant() and value.as_constant() is None) and not (
                isinstance(value, TensorVariable) and value.fake.dtype == self.fake.dtype
                and value.fake.device == self.fake.device
                and list(value.fake.shape) == list(self.fake.shape)):
            raise Unsupported("setting .grad to anything but None or a tensor of the same "
                              "size, dtype and device")
        tx.output.side_effects.store("attr", self, name, value)

    def call_method(self, tx: Translator, name: str, args: list[VariableTracker],
                    kwargs: dict[str, VariableTracker]) -> VariableTracker:
        if name == "item" and tx.output.capture_scalar_outputs:
            return tx.output.call_method(name, [self, *args], kwargs)  # an unbacked symbol
        if name == "tolist" and tx.output.capture_scalar_outputs and self.fake.dim() == 1 \
                and (isinstance(self.fake.shape[0], int) or _backed(self.fake.shape[0])):
            from dynamo.variables.containers import ListVariable

            # a list has a length: a symbolic one is specialised (guarded), as torch.compile does
            return ListVariable([self.items(tx)[i].call_method(tx, "item", [], {})
                                 for i in range(int(self.fake.shape[0]))])
        if name == "as_subclass":
            cls = args[0] if args else kwargs.get("cls")
            if cls is not None and cls.is_constant() and cls.as_constant() is torch.Tensor:
                # (a view of the same data, in the autograd graph: what eager makes of it)
                return tx.output.call_function(torch.ops.aten.alias.default, [self], {})
            raise Unsupported("Tensor.as_subclass() to a subclass (only plain tensors are "
                              "traced)")
        if name == "requires_grad_":
            wanted = args[0] if args else kwargs.get("requires_grad", ConstantVariable(True))
            if wanted.is_constant() and bool(wanted.as_constant()) is self.fake.requires_grad:
                # Already so: a no-op, left out of the graph (Hugging Face's hook that makes
                # the embeddings' output require grad, for activation checkpointing)
                return self
        if name in _DATA_DEPENDENT:
            raise Unsupported(f"Tensor.{name}() reads the tensor's data")
        if _in_place(name) and may_overlap(self.fake):
            # Eager updates a shared element once per view element that holds it; a functional
            # graph computes each element once
            raise Unsupported(f"Tensor.{name}() on a view whose elements overlap (unfold, "
                              "as_strided, expand)")
        if name in _UNSUPPORTED:
            raise Unsupported(f"Tensor.{name}()")
        if name in _METADATA_METHODS:
            values = [a.as_constant() if a.is_constant() else None for a in args]
            if None not in values and all(a.is_constant() for a in kwargs.values()):
                result = getattr(self.fake, name)(*values, **{k: v.as_constant()
                                                                 for k, v in kwargs.items()})
                if name == "size" and not args:
                    return tx.output.size_variable(self, result)
                if name == "stride":
                    for d in values or range(self.fake.dim()):
                        if self.fake.shape[d] == 1:
                            self._guard_read(tx, lambda source, d=d: TensorPropertySource(
                                source, "stride", d % self.fake.dim()), int(self.fake.stride(d)))
                if name == "storage_offset":
                    self._guard_read(tx, lambda source: TensorPropertySource(source, name),
                                     int(result))
                return tx.output.wrap_value(self, name, result, tuple(values))
        return tx.output.call_method(name, [self, *args], kwargs)

    def _guard_read(self, tx: Translator, where: Callable[[Any], Any], value: Any) -> None:
        """Guard a property of an input that its tensor match leaves out (`is_leaf`, the storage
        offset, the stride of a dim of size 1) once code reads it: the property, at `where(the
        input's source)`, must still be `value`."""
        if self.source is not None:
            tx.output.add_guard(Equals(where(self.source), value))

    def items(self, tx: Translator) -> list[VariableTracker]:
        if not self.fake.dim():  # eager's TypeError, which the frame's `try` may catch
            from dynamo.exc import Raised

            raise Raised(TypeError("iteration over a 0-d tensor"),
                         "iterating over a 0-d tensor (a TypeError while tracing)")
        refuse_override(tx.output, self.cls, self.source, ("__iter__",), "iterating")
        # eager's `Tensor.__iter__` unbinds: its rows are views that autograd checks as outputs
        # of one op (an in-place write to the tensor, then a row used, is eager's error)
        return tx.output.call_method("unbind", [self, ConstantVariable(0)], {}).items(tx)

    def truth(self, tx: Translator) -> bool:
        raise Unsupported("branching on a tensor's value (data-dependent control flow)")

    def __repr__(self) -> str:
        return f"TensorVariable({self.node.name}: {self.fake})"


class SymNodeVariable(VariableTracker):
    """An int, float or bool computed from symbolic sizes."""

    def __init__(self, node: torch.fx.Node, value: Any) -> None:
        self.node = node
        self.value = value

    def python_type(self) -> type:
        return {torch.SymInt: int, torch.SymFloat: float, torch.SymBool: bool}[type(self.value)]

    def truth(self, tx: Translator) -> bool:
        value = self.value if isinstance(self.value, torch.SymBool) else self.value != 0
        try:
            return bool(value)  # a guard in the ShapeEnv
        except DataDependentError as error:
            raise Unsupported(f"branching on a value read from a tensor ({error.reason})") \
                from None

    def getattr(self, tx: Translator, name: str) -> VariableTracker:
        from dynamo.variables.constant import ConstantVariable

        kind = self.python_type()
        if name in ("real", "numerator") and kind is not bool and (name == "real" or kind is int):
            return self
        if name == "imag" and kind is not bool:
            return ConstantVariable(kind(0))
        if name == "denominator" and kind is int:
            return ConstantVariable(1)
        return super().getattr(tx, name)

    def call_method(self, tx: Translator, name: str, args: list[VariableTracker],
                    kwargs: dict[str, VariableTracker]) -> VariableTracker:
        """A method of the number (`is_integer()`, `bit_length()`): called on the plain number
        it stands for on these inputs (a guard pins it)."""
        from dynamo.variables.constant import ConstantVariable

        if name == "conjugate" and not args and not kwargs and self.python_type() is not bool:
            return self
        return ConstantVariable(self.as_python()).call_method(tx, name, args, kwargs)

    def as_python(self) -> int | float | bool:
        """The plain number it stands for on these inputs (a guard pins it)."""
        return self.python_type()(self.value)

    def __repr__(self) -> str:
        return f"SymNodeVariable({self.value})"


def concrete_int(v: VariableTracker) -> Any:
    """`v`'s Python value where an int is needed (an index, a range bound, a dict key): a
    symbolic number is decided on its example value, which records a guard. (A float stays
    a float: the caller's Python raises the TypeError that it would.)"""
    return v.as_python() if isinstance(v, SymNodeVariable) else v.as_constant()


def _backed(n: torch.SymInt) -> bool:
    """Whether a symbolic size has a value in this example (not one known only from data)."""
    return n.node.hint is not None
