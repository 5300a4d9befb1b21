"""ConstantVariable: a value known while tracing, and the same on every call the guards admit.

Numbers, strings, None, booleans, enum members, torch dtypes and devices, ranges, slices of
constants, and tuples of these. Operations on constants are computed right away (constant
folding): they never reach the graph.
"""

from __future__ import annotations

import enum
import inspect
import sys
import types
from collections.abc import Callable, ItemsView, KeysView, ValuesView
from typing import TYPE_CHECKING, Any

from dynamo.exc import Raised, Unsupported
from dynamo.side_effects import MISSING
from dynamo.variables.base import VariableTracker
from guards import Equals

if TYPE_CHECKING:
    from dynamo.interpreter import Translator


class ConstantVariable(VariableTracker):
    def __init__(self, value: Any, source: Any = None) -> None:
        self.value = value
        self.source = source

    def python_type(self) -> type:
        return type(self.value)

    def is_constant(self) -> bool:
        return True

    def as_constant(self) -> Any:
        return self.value

    def getattr(self, tx: Translator, name: str) -> VariableTracker:
        from dynamo.variables.builder import wrap_constant_result
        from dynamo.variables.functions import BoundMethodVariable
        from dynamo.variables.objects import plain_class_attribute

        if isinstance(self.value, enum.Enum):  # a member's own methods and properties, traced
            from dynamo.variables.builder import wrap
            from dynamo.variables.functions import UserMethodVariable
            from guards import AttrSource, TypeSource

            # read from the class, where it is guarded (a method replaced there recompiles)
            member = inspect.getattr_static(type(self.value), name, MISSING)
            on_class = AttrSource(TypeSource(self.source), name) if self.source is not None \
                else None
            if isinstance(member, types.FunctionType):
                return UserMethodVariable(wrap(tx, member, on_class), self)
            if isinstance(member, property) and isinstance(member.fget, types.FunctionType):
                return wrap(tx, member.fget, on_class and AttrSource(on_class, "fget")).call(
                    tx, [self], {})
            if name in ("value", "_value_") and not is_literal(self.value._value_):
                # A member whose value is a function (`RELU = partial(F.relu)`,
                # `enum.member(torch.tanh)`): the value itself, traced when called, not a
                # method of the member run for real on constants
                source = AttrSource(self.source, "_value_") if self.source is not None else None
                return wrap(tx, self.value._value_, source)
            if self.source is not None and name in getattr(self.value, "__dict__", {}) and \
                    name not in ("_value_", "_name_", "__objclass__", "_sort_order_"):
                # An attribute of the member's own (set by the enum's `__init__`, or later):
                # members are singletons, but their attributes may change; read it through
                # its source, guarded like any object's attribute, not baked in unguarded.
                return wrap(tx, self.value.__dict__[name], AttrSource(self.source, name))
            if on_class is not None and member is not MISSING and not isinstance(
                    member, type(self.value)) and plain_class_attribute(name, member):
                # A plain attribute of the enum's class that is not a member (`Mode.K = 3`
                # after the class was made): it was a constant, unguarded (a stale result)
                return wrap(tx, member, on_class)
        if isinstance(self.value, tuple) and hasattr(type(self.value), "_fields"):
            # A named tuple of constants from the frame: the methods, properties, static and
            # class methods its class defines are traced (they may take tensors, read globals,
            # be replaced on the class), as for one made in the trace; not run for real; and
            # so is a plain attribute of its class (`P.K = 3`), read through the class
            from dynamo.variables.containers import NamedTupleVariable, tuple_fields

            member = inspect.getattr_static(type(self.value), name, MISSING)
            if isinstance(member, (types.FunctionType, property, staticmethod, classmethod)) or (
                    self.source is not None and member is not MISSING and
                    plain_class_attribute(name, member)):
                return NamedTupleVariable(
                    [ConstantVariable(v) for v in self.value], type(self.value),
                    tuple_fields(self.value), self.source).getattr(tx, name)
        try:
            attr = getattr(self.value, name)
        except AttributeError as error:
            raise Unsupported(f"reading {name!r} of {self.value!r}: {error}") from None
        if callable(attr) and not isinstance(attr, type):
            return BoundMethodVariable(self, name)
        return wrap_constant_result(attr)

    def call_method(self, tx: Translator, name: str, args, kwargs) -> VariableTracker:
        from dynamo.variables.builder import wrap_constant_result
        from dynamo.variables.builtins import printed
        from dynamo.variables.containers import SliceVariable

        def plain(a: VariableTracker) -> Any:
            # A symbolic number written into a string (`"{}".format(n)`, a shape, a dict for
            # `format_map`) is specialised, as an f-string's is: the guard pins the value the
            # text shows.
            if isinstance(self.value, str):
                shown = printed(a)
                if shown is not None:
                    return shown
            if isinstance(a, SliceVariable):  # `"abc"[n:]`: symbolic bounds specialised
                return a.as_slice(tx)
            literal = subclassed_literal_value(tx, a)
            if literal is not None:
                return literal
            if not a.is_constant():
                raise Unsupported(f"{type(self.value).__name__}.{name}() on values that are "
                                  "not constants")
            return a.as_constant()

        if name in ("__iter__", "__reversed__") and not args and not kwargs and \
                self.python_type() in (range, str, bytes, tuple, frozenset) and \
                hasattr(self.python_type(), name):  # (a symbolic range's type: not pinned)
            # an iterator made in the trace, as `iter()` and `reversed()` make one: a real one
            # would be a constant of the code, one object taken from by every call
            from dynamo.variables.builtins import BuiltinVariable

            return BuiltinVariable(iter if name == "__iter__" else reversed).call(tx, [self], {})
        if isinstance(self.value, str) and name == "join" and len(args) == 1 and \
                not args[0].is_constant():  # a generator or a map of strings: its items, made
            plain_args = [[plain(a) for a in args[0].items(tx)]]  # in the trace, as join does
        else:
            plain_args = [plain(a) for a in args]
        plain_kwargs = {k: plain(v) for k, v in kwargs.items()}
        if isinstance(self.value, (tuple, frozenset)):
            from dynamo.variables.containers import holds_nan, pin_nan

            if sum(map(holds_nan, (self.value, *plain_args))) > 1 or holds_nan(self.value) and \
                    name in ("count", "index", "__contains__"):
                # (`t.count(k)`: items compared identity first, which NaN it is decides)
                pin_nan(tx, self, *args)
        try:
            result = getattr(self.value, name)(*plain_args, **plain_kwargs)
        except Exception as error:  # the user's code raises here; we cannot follow it
            raise Raised(error, f"{type(self.value).__name__}.{name}() raised "
                         f"{type(error).__name__}: {error}") from None
        return wrap_constant_result(result)

    def items(self, tx: Translator) -> list[VariableTracker]:
        if isinstance(self.value, (str, range, tuple, bytes, frozenset, types.MappingProxyType,
                                   KeysView, ValuesView, ItemsView)):
            # (the views: of a constant's dict, `inspect.signature(f).parameters.keys()`)
            return [ConstantVariable(v) for v in self.value]
        return super().items(tx)

    def truth(self, tx: Translator) -> bool:
        return bool(self.value)

    def __repr__(self) -> str:
        return f"ConstantVariable({self.value!r})"


class LazyConstantVariable(ConstantVariable):
    """A float or int from the frame (a loss's `.item()` handed to a resume function, a
    learning rate, a token id in a list): its type is guarded at once, its value only once the
    trace uses it (`guard`, on the first read of `value`). One the trace only passes along
    (appended to a list, returned) is read again from the frame on every call, so a new value
    needs no new compilation."""

    def __init__(self, value: Any, source: Any, guard: Callable[[], None]) -> None:
        self._value = value
        self.source = source
        self._guard: Callable[[], None] | None = guard

    @property
    def value(self) -> Any:
        if self._guard is not None:
            self._guard()
            self._guard = None
        return self._value

    @property
    def used(self) -> bool:
        """Whether the trace read the value (and so guarded it)."""
        return self._guard is None

    def python_type(self) -> type:
        return type(self._value)

    def __repr__(self) -> str:
        return f"LazyConstantVariable({self._value!r})"


class FormattedStringVariable(ConstantVariable):
    """The text an f-string builds from values the trace need not know: a symbolic int (a step
    counter), a str, float or int from the frame that the trace has not read (the pieces of an
    f-string handed to a resume function by a graph break inside it). Its text is made, and those
    values guarded, only once the trace uses it (`value`); one the trace only passes along (to a
    `print` that breaks the graph) is formatted again at each call, so a new step number needs no
    new compilation."""

    def __init__(self, pieces: list[tuple[VariableTracker, Callable[[Any], str] | None, str]]
                 ) -> None:
        self.pieces = pieces  # (value, the conversion `!s`/`!r`/`!a` or None, the format spec)
        self.source = None
        self._text: str | None = None

    @property
    def value(self) -> str:
        if self._text is None:
            self._text = "".join(format(shown_value(v) if convert is None else
                                        convert(shown_value(v)), spec)
                                 for v, convert, spec in self.pieces)
        return self._text

    @property
    def used(self) -> bool:
        """Whether the trace read the text (and so guarded the values it shows)."""
        return self._text is not None

    def python_type(self) -> type:
        return str

    def __repr__(self) -> str:
        return f"FormattedStringVariable({self.pieces!r})"


def shown_value(v: VariableTracker) -> Any:
    """The plain value text shows of `v`: a symbolic number's, guarded (`printed`), or the
    constant's."""
    from dynamo.variables.builtins import printed

    shown = printed(v)
    return v.as_constant() if shown is None else shown


def formats_later(v: VariableTracker) -> bool:
    """Whether an f-string can leave `v`'s text to be made when it is used (`FormattedStringVariable`)."""
    from dynamo.variables.tensor import SymNodeVariable

    return isinstance(v, SymNodeVariable) or (
        isinstance(v, (LazyConstantVariable, FormattedStringVariable)) and not v.used)


def is_none(v: VariableTracker) -> bool:
    """Whether the tracker stands for None."""
    return v.is_constant() and v.as_constant() is None


# Immutable Python values that stand for themselves.
def is_literal(value: Any) -> bool:
    import torch

    if isinstance(value, (tuple, frozenset)):
        return all(is_literal(v) for v in value)
    if isinstance(value, slice):
        return all(is_literal(v) for v in (value.start, value.stop, value.step))
    return value is None or value is Ellipsis or value is NotImplemented or isinstance(
        value, (bool, int, float, complex, str, bytes, range, torch.dtype, torch.device,
                torch.layout, torch.memory_format, types.CodeType, enum.Enum)
    ) and not isinstance(value, torch.SymInt | torch.SymFloat | torch.SymBool)


def numpy_number_types() -> tuple[type, ...]:
    """numpy's bool, integer and floating scalar types; none before numpy is imported (no
    numpy value can exist then)."""
    np = sys.modules.get("numpy")
    return () if np is None else (np.bool_, np.integer, np.floating)


def is_numpy_number(value: Any) -> bool:
    """Whether `value` is a numpy bool, integer or floating scalar (`np.float64(2.0)`)."""
    return isinstance(value, numpy_number_types())


def numpy_raising() -> Any:
    """numpy's error handling raising where it would warn; on underflow only where the user
    asked for that (numpy's default ignores it: `np.float32(1e-30) ** 2` is 0.0, silently)."""
    np = sys.modules["numpy"]
    return np.errstate(all="raise", under="ignore" if np.geterr()["under"] == "ignore"
                       else "raise")


def torch_number(value: Any) -> Any:
    """The Python number torch reads a numpy scalar passed to an op as (the value itself for
    anything else): its `item()`, but a float for a numpy bool (`ones(2, dtype=bool) *
    np.bool_(True)` is float32 in eager)."""
    if not is_numpy_number(value):
        return value
    np = sys.modules["numpy"]
    return float(value) if isinstance(value, np.bool_) else value.item()


def is_subclassed_literal(value: Any) -> bool:
    """An instance of a user's subclass of int, float, str, bytes, complex or tuple (not an
    enum member, a bool or a named tuple): a constant only as far as its value goes, while its
    attributes, or methods its class overrides, may change what the code computes."""
    import torch

    kind = type(value)
    return isinstance(value, (int, float, str, bytes, complex, tuple)) and kind not in (
        int, float, str, bytes, complex, tuple, bool, torch.Size) and not isinstance(
        value, enum.Enum) and not hasattr(kind, "_fields")


def subclassed_literal_value(tx: Translator, value: VariableTracker) -> Any:
    """The object itself, when `value` tracks a str, int, float or bytes subclass's instance
    from outside the trace (`torch.__version__`, a TorchVersion), handed to a method that runs
    for real on constants: guarded equal to it from now on. Else None."""
    from dynamo.variables.user_objects import UserObjectVariable

    if type(value) is UserObjectVariable and value.source is not None and isinstance(
            value.value, (str, int, float, bytes)) and is_subclassed_literal(value.value):
        tx.output.add_guard(Equals(value.source, value.value))
        return value.value
    return None
