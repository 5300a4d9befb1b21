"""User objects while tracing: instances of the user's (and libraries') Python classes.

An object from the frame (`UserObjectVariable`) is read through its source: attributes as
`object.__getattribute__` finds them (data descriptors, the instance's `__dict__`, the class),
or through the class's own `__getattribute__`/`__getattr__`, inlined; Python's operators call
the special methods the class defines, inlined; methods inherited from `dict`/`OrderedDict`
or `list` act on its items. Writes are side effects, replayed after the graph. An object the traced code
creates (`NewObjectVariable`: a dataclass, a KV cache, a model output) lives only as a tracker
until it leaves the trace, when the transformed frame builds it for real, once
(`build_object`, `fill_object`).
"""

from __future__ import annotations

import collections
import collections.abc
import enum
import logging
import operator
import sys
import types
from typing import TYPE_CHECKING, Any, NoReturn

import torch

from dynamo.exc import Raised, Unsupported, no_attribute, python_error
from dynamo.side_effects import DELETED, MISSING
from dynamo.sources import ItemsCopySource, items_copy
from dynamo.variables.base import VariableTracker
from dynamo.variables.constant import ConstantVariable
from dynamo.variables.containers import DictVariable, ListVariable
from dynamo.variables.functions import c_callable_name
from dynamo.variables.objects import (
    BUILTIN_BASES,
    ObjectVariable,
    UserClassVariable,
    class_attribute,
)
from guards import AttrSource, ClassLacks, DictContains, GetItemSource, TypeSource

if TYPE_CHECKING:
    from dynamo.interpreter import Translator


class UserObjectVariable(ObjectVariable):
    """An instance of a user class (a config, a dataclass, any object with attributes).

    Python's operators on it (`obj[k]`, `k in obj`, `len(obj)`, `for v in obj`, `if obj:`,
    `obj == other`) call the methods its class defines, inlined. Methods a class inherits from
    `dict`, `OrderedDict` (a registry, Hugging Face's ModelOutput) or `list` (a
    `LogitsProcessorList`) act on its items."""

    def getattr(self, tx: Translator, name: str) -> VariableTracker:
        """`obj.name`, as `type(obj).__getattribute__` and then `__getattr__` answer it: the
        class's own versions of these, when it has them, inlined."""
        if name == "__class__":
            return class_of(self)
        if name in LOG_LEVELS and self.source is not None and \
                isinstance(getattr(self, "value", None), logging.Logger) and \
                name not in vars(self.value):
            return LoggingCallVariable(self, name)
        if self.defines_in_python("__getattribute__"):
            try:
                return self.call_method(tx, "__getattribute__", [ConstantVariable(name)], {})
            except Raised as error:  # Python then asks `__getattr__`, when there is one
                if not (isinstance(error.exception, AttributeError)
                        and self.defines_in_python("__getattr__")):
                    raise
                return self.call_method(tx, "__getattr__", [ConstantVariable(name)], {})
        try:
            found = self.generic_getattr(tx, name)
        except Raised as error:  # a property's getter raised: Python then asks `__getattr__`
            if not (isinstance(error.exception, AttributeError)
                    and self.defines_in_python("__getattr__")):
                raise
            return self.call_method(tx, "__getattr__", [ConstantVariable(name)], {})
        if found is not MISSING:
            return found
        if self.defines_in_python("__getattr__"):
            self._guard_absent(tx, name)  # it could be set on the instance later
            return self.call_method(tx, "__getattr__", [ConstantVariable(name)], {})
        self._missing(tx, name)

    def _missing(self, tx: Translator, name: str) -> NoReturn:
        """No attribute `name` (guarded to stay so): the AttributeError the code may catch."""
        self._guard_absent(tx, name)
        raise no_attribute(self.python_type().__name__, name)

    def generic_getattr(self, tx: Translator, name: str) -> Any:
        """`object.__getattribute__(obj, name)`: data descriptors of the class, the instance's
        attributes, then the class's members; `MISSING` if none has it."""
        from dynamo.variables.builder import wrap

        written = tx.output.side_effects.load("attr", self, name)
        if written is not MISSING and written is not DELETED:
            return written
        instance = getattr(self.value, "__dict__", {})
        if written is DELETED:  # as if the instance's dict did not hold it
            instance = {}
        if name == "__dict__" and isinstance(instance, dict):  # read only (side_effects)
            real = wrap(tx, instance, self._attr_source(name))
            written = tx.output.side_effects.attributes_set(self)
            if not written:
                return real
            if DELETED in written.values():
                raise Unsupported(f"reading the __dict__ of a {self.python_type().__qualname__} "
                                  "after deleting one of its attributes")
            # What it holds now: the attributes set while tracing over the real ones (a view
            # for reading; writing into it, like into the real one, is refused).
            return real.overlaid(written)
        found, member = class_attribute(type(self.value), name)
        if isinstance(member, types.MemberDescriptorType):  # a slot
            try:
                value = member.__get__(self.value)
            except AttributeError:  # no guard says a slot stays empty: read it for real
                raise Unsupported(f"reading the empty slot {name!r} of a "
                                  f"{type(self.value).__qualname__}") from None
            return wrap(tx, value, self._attr_source(name))  # guarded: it must stay set
        if found and hasattr(type(member), "__set__"):  # data descriptors come first
            return self._class_member(tx, name)
        if name in instance:
            source = self._attr_source(name)
            if source is not None and self.defines_in_python("__getattribute__"):
                # Guards read it as the trace did, from the instance's dict: one call of the
                # class's own `__getattribute__` (for `__dict__`) per check, not one per name.
                source = GetItemSource(AttrSource(self.source, "__dict__"), name)
            return wrap(tx, instance[name], source)
        return self._class_member(tx, name) if found else MISSING

    def has_attribute(self, tx: Translator, name: str) -> bool:
        member = class_attribute(self.python_type(), name)[1]
        if self.defines_in_python("__getattr__") or self.defines_in_python("__getattribute__") \
                or isinstance(member, (property, types.MemberDescriptorType)):
            # Its own code decides the answer: traced, so that what it reads is guarded.
            try:
                self.getattr(tx, name)
            except Raised as error:
                if isinstance(error.exception, AttributeError):
                    return False
                raise
            return True
        found = super().has_attribute(tx, name)
        if not found:
            self._guard_class_lacks(tx, name)
        return found

    def _guard_absent(self, tx: Translator, name: str) -> None:
        super()._guard_absent(tx, name)
        self._guard_class_lacks(tx, name)

    def _guard_class_lacks(self, tx: Translator, name: str) -> None:
        """The lookup of `name` found nothing on the class: guarded to stay so, and no
        `__getattr__` or `__getattribute__` to come that would answer instead (those the class
        has are guarded where they are read)."""
        self._guard_lacks(tx, (name, "__getattr__", "__getattribute__"))

    def _guard_lacks(self, tx: Translator, names: tuple[str, ...]) -> None:
        """Those of `names` that the class and its bases lack: guarded to stay so."""
        source = self._class_source()
        mro = self.python_type().__mro__[:-1]
        names = tuple(n for n in names if not any(n in c.__dict__ for c in mro))
        if source is not None and names:
            tx.output.add_guard(ClassLacks(source, names))

    def _class_source(self) -> Any:
        return TypeSource(self.source) if self.source is not None else None

    def setattr(self, tx: Translator, name: str, value: VariableTracker) -> None:
        """`obj.name = value`: through the class's own `__setattr__` when it has one."""
        if self.defines_in_python("__setattr__"):
            self.call_method(tx, "__setattr__", [ConstantVariable(name), value], {})
        else:
            self.generic_setattr(tx, name, value)

    def delattr(self, tx: Translator, name: str) -> None:
        """`del obj.name`: through the class's own `__delattr__` when it has one."""
        if self.defines_in_python("__delattr__"):
            self.call_method(tx, "__delattr__", [ConstantVariable(name)], {})
        else:
            self.generic_delattr(tx, name)

    def generic_delattr(self, tx: Translator, name: str) -> None:
        """`object.__delattr__(obj, name)` of an attribute in the instance's dict: recorded,
        and deleted for real after the graph; a property's deleter, inlined."""
        member = class_attribute(self.python_type(), name)[1]
        if isinstance(member, property):
            self.call_deleter(tx, name, member)
            return
        instance = getattr(self.value, "__dict__", None)
        if self.source is None or not isinstance(instance, dict) or \
                hasattr(type(member), "__set__") or hasattr(type(member), "__delete__"):
            raise Unsupported(f"deleting {name!r} of a {self.python_type().__qualname__} (a "
                              "descriptor, a slot or an object with no __dict__)")
        written = tx.output.side_effects.load("attr", self, name)
        there = name in instance  # before the graph runs: guarded
        if written is not DELETED:  # (a deletion guarded it already)
            tx.output.add_guard(DictContains(AttrSource(self.source, "__dict__"), name, there))
        if written is DELETED or written is MISSING and not there:
            raise no_attribute(self.python_type().__name__, name, f"del of the missing attribute "
                               f"{name!r} of a {self.python_type().__qualname__}")
        tx.output.side_effects.delete("attr", self, name, there)

    def generic_setattr(self, tx: Translator, name: str, value: VariableTracker) -> None:
        """`object.__setattr__(obj, name, value)`: a property's setter, or the instance's
        attribute (`_store`)."""
        member = class_attribute(self.python_type(), name)[1]
        if isinstance(member, property) and member.fset is not None:
            self.call_setter(tx, name, member, value)
        elif hasattr(type(member), "__set__") and not _is_slot(member):
            raise Unsupported(f"setting {name!r} of a {self.python_type().__qualname__} (a "
                              "descriptor)")
        else:
            self._store(tx, name, value)

    def _store(self, tx: Translator, name: str, value: VariableTracker) -> None:
        """The instance's attribute (or slot): recorded, and set for real after the graph."""
        if not (hasattr(self.value, "__dict__") or
                _is_slot(class_attribute(type(self.value), name)[1])):
            raise Unsupported(f"setting {name!r} of a {self.python_type().__qualname__} (no "
                              "__dict__)")
        tx.output.side_effects.store("attr", self, name, value)

    def call(self, tx: Translator, args, kwargs) -> VariableTracker:
        found, call = class_attribute(self.python_type(), "__call__")
        if found and isinstance(call, types.FunctionType):
            return self._class_member(tx, "__call__", implicit=True).call(tx, args, kwargs)
        kind = self.python_type().__qualname__
        name = c_callable_name(self.value) if callable(self.value) else None
        if name is not None:  # a Cython function, numpy's `np.sum`, a method descriptor
            raise Unsupported(f"calling {name} (a {kind}, written in C)")
        raise Unsupported(f"calling a {kind}")

    def call_method(self, tx: Translator, name: str, args, kwargs) -> VariableTracker:
        """`obj.name(...)`; a special method is looked up on the class, as Python does."""
        if name.startswith("__") and name.endswith("__"):
            return self._class_member(tx, name, implicit=True).call(tx, args, kwargs)
        return self.getattr(tx, name).call(tx, args, kwargs)

    def truth(self, tx: Translator) -> bool:
        if self.defines("__bool__"):
            result = self.call_method(tx, "__bool__", [], {})
            kind = result.python_type()
            if kind is not bool:  # CPython checks what `__bool__` returned
                message = f"__bool__ should return bool, returned {kind.__name__}"
                raise python_error(TypeError(message))
            return result.truth(tx)
        if self.defines("__len__"):
            self._guard_lacks(tx, ("__bool__",))  # one added to the class decides instead
            return self.length(tx).truth(tx)
        self._guard_lacks(tx, ("__bool__", "__len__"))
        return True

    def length(self, tx: Translator) -> VariableTracker:
        """`len(self)`: the class's `__len__`, its result checked as CPython checks it (an
        int or an object with `__index__`, not negative, fitting a Py_ssize_t), an int."""
        result = self.call_method(tx, "__len__", [], {})
        kind = result.python_type()
        if not result.is_constant():
            if issubclass(kind, int):  # a symbolic size, its sign decided (a guard)
                from dynamo.variables.builtins import BuiltinVariable

                if not BuiltinVariable(operator.ge).call(tx, [result, ConstantVariable(0)],
                                                         {}).truth(tx):
                    raise Raised(ValueError("__len__() should return >= 0"),
                                 "__len__() should return >= 0 (a ValueError while tracing)")
                return result
            if hasattr(kind, "__index__"):
                raise Unsupported(f"len() of a {self.python_type().__qualname__} whose __len__ "
                                  f"returned {result.words()}")
        if not hasattr(kind, "__index__"):
            message = f"'{kind.__name__}' object cannot be interpreted as an integer"
            raise python_error(TypeError(message))
        value = operator.index(result.as_constant())
        if value < 0:
            raise python_error(ValueError("__len__() should return >= 0"))
        if value > sys.maxsize:
            message = "cannot fit 'int' into an index-sized integer"
            raise python_error(OverflowError(message))
        return ConstantVariable(value)

    def items(self, tx: Translator) -> list[VariableTracker]:
        if not self.defines("__iter__"):
            raise Unsupported(f"iterating over a {self.python_type().__qualname__} (it has no "
                              "__iter__)")
        if class_attribute(self.python_type(), "__iter__")[1] is collections.abc.Sequence.__iter__:
            # The ABC's generator stops at the IndexError of `self[len(self)]`: the same items.
            count = self.call_method(tx, "__len__", [], {}).as_constant()
            return [self.call_method(tx, "__getitem__", [ConstantVariable(i)], {})
                    for i in range(count)]
        return self.iterator(tx).items(tx)

    def iterator(self, tx: Translator) -> VariableTracker:
        """`iter(self)` by the class's own `__iter__`: the iterator it returns, whose items
        are taken when asked (a generator made in the trace, or an instance of a user's class
        with `__next__`: UserIteratorVariable), not up front."""
        from dynamo.variables.generators import UserIteratorVariable

        made = self.call_method(tx, "__iter__", [], {})
        if isinstance(made, UserObjectVariable) and made.defines("__next__"):
            if not made.defines_in_python("__next__"):
                raise Unsupported(f"iterating over a {made.python_type().__qualname__} (its "
                                  "__next__ is not written in Python)")
            return UserIteratorVariable(made)
        if isinstance(made, UserObjectVariable):
            message = f"iter() returned non-iterator of type '{made.python_type().__name__}'"
            raise python_error(TypeError(message))
        return made

    def base_items(self, tx: Translator) -> VariableTracker:
        """The items of a dict or list subclass's instance, as its inherited dict or list
        methods see them."""
        from dynamo.variables.builder import wrap

        cls = self.python_type()
        kind = collections.OrderedDict if issubclass(cls, collections.OrderedDict) else \
            dict if issubclass(cls, dict) else list
        source = ItemsCopySource(self.source, kind) if self.source is not None else None
        items = wrap(tx, items_copy(kind, self.value), source)
        if isinstance(items, ListVariable):
            items.owner = self
        return items

    def call_base(self, tx: Translator, base: type, name: str, args, kwargs) -> VariableTracker:
        """`base.name(self, *args)` for a method of `object`, `dict`, `OrderedDict` or `list`."""
        if base is object:
            return self._object_method(tx, name, args)
        if name == "__getitem__" and base is not list and self.defines_in_python("__missing__") \
                and not self.base_items(tx).call_method(tx, "__contains__", args, {}).as_constant():
            return self.call_method(tx, "__missing__", args, {})  # as dict.__getitem__ does
        result = self.base_items(tx).call_method(tx, name, args, kwargs)
        return self if name == "__iadd__" else result  # `items += more` is the object itself

    def _object_method(self, tx: Translator, name: str, args) -> VariableTracker:
        from dynamo.variables.builtins import _identical

        if name == "__init__" and not args:
            return ConstantVariable(None)
        if name == "__setattr__":
            self.generic_setattr(tx, args[0].as_constant(), args[1])
            return ConstantVariable(None)
        if name == "__delattr__":
            self.generic_delattr(tx, args[0].as_constant())
            return ConstantVariable(None)
        if name == "__getattribute__":
            found = self.generic_getattr(tx, args[0].as_constant())
            if found is MISSING:
                self._missing(tx, args[0].as_constant())
            return found
        if name in ("__eq__", "__ne__"):
            if not _identical(tx, self, args[0]):
                return ConstantVariable(NotImplemented)
            return ConstantVariable(name == "__eq__")
        raise Unsupported(f"object.{name}() on a {self.python_type().__qualname__}")


class NewObjectVariable(UserObjectVariable):
    """An instance of a user class that the traced code creates (a dataclass, a cache, a model
    output). It exists only as this tracker while tracing: its attributes (and, for a dict
    subclass, its items) are trackers, and it is built for real, once, when it leaves the
    trace (returned, stored somewhere, or handed on at a graph break)."""

    def __init__(self, cls: type, class_source: Any) -> None:
        super().__init__(None)
        self.cls = cls
        self.class_source = class_source
        self.attr_dict = DictVariable({})  # its `__dict__`
        self.attrs = self.attr_dict.entries
        base = builtin_base(cls)
        self.items_ = ListVariable([]) if base is list else None if base is object else \
            DictVariable({})
        if base is list:
            self.items_.owner = self

    @staticmethod
    def create(tx: Translator, cls: type, class_source: Any, args, kwargs) -> NewObjectVariable:
        obj = NewObjectVariable(cls, class_source)
        obj.call_method(tx, "__init__", args, kwargs)
        return obj

    def python_type(self) -> type:
        return self.cls

    def _member_source(self, name: str) -> Any:
        return AttrSource(self.class_source, name) if self.class_source is not None else None

    def generic_getattr(self, tx: Translator, name: str) -> Any:
        if name == "__dict__":
            return self.attr_dict
        found, member = class_attribute(self.cls, name)
        slot = isinstance(member, types.MemberDescriptorType)
        if found and hasattr(type(member), "__set__") and not slot:
            return self._class_member(tx, name)  # a property
        if name in self.attrs:
            return self.attrs[name]
        return self._class_member(tx, name) if found and not slot else MISSING

    def has_attribute(self, tx: Translator, name: str) -> bool:
        if self.defines_in_python("__getattr__"):
            raise Unsupported(f"hasattr() on a {self.cls.__qualname__}, which customises "
                              "attribute access")
        found, member = class_attribute(self.cls, name)
        if isinstance(member, (property, types.MemberDescriptorType)):
            return super().has_attribute(tx, name)  # a getter may raise, a slot may be empty
        if name in self.attrs or found:
            return True
        self._guard_class_lacks(tx, name)
        return False

    def _class_source(self) -> Any:
        return self.class_source

    def generic_delattr(self, tx: Translator, name: str) -> None:
        member = class_attribute(self.cls, name)[1]
        if isinstance(member, property):
            self.call_deleter(tx, name, member)
            return
        data_descriptor = hasattr(type(member), "__set__") or hasattr(type(member), "__delete__")
        if data_descriptor and not _is_slot(member):
            raise Unsupported(f"deleting {name!r} of a {self.cls.__qualname__} (a descriptor)")
        if name not in self.attrs:
            self._missing(tx, name)
        tx.output.side_effects.mutated(self)
        del self.attrs[name]

    def _store(self, tx: Translator, name: str, value: VariableTracker) -> None:
        if not self.cls.__dictoffset__:  # `__slots__` all the way up: no `__dict__`
            found, member = class_attribute(self.cls, name)
            if not _is_slot(member):  # nowhere to hold it, as Python says
                message = (f"'{self.cls.__name__}' object attribute {name!r} is read-only"
                           if found else
                           f"'{self.cls.__name__}' object has no attribute {name!r}")
                raise Raised(AttributeError(message),
                             f"{message} (an AttributeError while tracing)")
        tx.output.side_effects.mutated(self)  # counted: a generator's items must not do this
        self.attrs[name] = value

    def base_items(self, tx: Translator) -> VariableTracker:
        return self.items_

    def __repr__(self) -> str:
        return f"NewObjectVariable({self.cls.__qualname__})"


_HEAP_TYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class defined in Python


def _is_slot(member: Any) -> bool:
    """Whether `member` is a slot of a class defined in Python (`__slots__`): written as an
    attribute is (a C type's members may be read only)."""
    return isinstance(member, types.MemberDescriptorType) and \
        bool(member.__objclass__.__flags__ & _HEAP_TYPE)


def builtin_base(cls: type) -> type | None:
    """The builtin class that an instance of `cls` is, underneath its Python classes:
    `object`, `dict`, `OrderedDict` or `list`; None for any other (int, a C extension's)."""
    for klass in cls.__mro__:
        if not klass.__flags__ & _HEAP_TYPE:
            return klass if klass in BUILTIN_BASES else None
    return None


def can_create(cls: type) -> bool:
    """Whether the trace can create an instance of `cls` itself (NewObjectVariable): a Python
    class over object, dict, OrderedDict or list, made by `__init__` alone (a metaclass may add to
    the class, not to how it makes instances)."""
    base = builtin_base(cls)
    return (base is not None and cls.__flags__ & _HEAP_TYPE and type(cls).__call__ is type.__call__
            and cls.__new__ is base.__new__ and not getattr(cls, "__abstractmethods__", None)
            and not issubclass(cls, (torch.nn.Module, torch.Tensor)))


def build_object(cls: type) -> Any:
    """An empty instance of `cls`, as the transformed frame makes one (filled by `fill`)."""
    base = builtin_base(cls)
    obj = base.__new__(cls)
    base.__init__(obj)
    return obj


def fill_object(obj: Any, attrs: dict, items: dict | list | None) -> None:
    """Set what the trace recorded on a new object, past any `__setattr__`/`__setitem__` its
    class defines (the trace already ran those)."""
    if isinstance(items, list):
        list.extend(obj, items)
    for key, value in items.items() if isinstance(items, dict) else ():
        builtin_base(type(obj)).__setitem__(obj, key, value)
    for name, value in attrs.items():
        object.__setattr__(obj, name, value)


def class_of(obj: VariableTracker) -> UserClassVariable:
    """`type(obj)`, with a source when `obj` has one, so that what the code reads from the
    class (an attribute, a method, its `__init__` when called) is guarded."""
    from dynamo.variables.containers import NamedTupleVariable

    if isinstance(obj, NewObjectVariable):
        return UserClassVariable(obj.cls, obj.class_source)
    if isinstance(obj, NamedTupleVariable) and hasattr(obj.kind, "_fields"):
        return UserClassVariable(obj.kind, obj.class_source)
    source = TypeSource(obj.source) if obj.source is not None and (isinstance(
        obj, ObjectVariable) or _user_class_constant(obj)) else None
    return UserClassVariable(obj.python_type(), source)


def _user_class_constant(obj: VariableTracker) -> bool:
    """A constant from the frame whose class is a user's, mutable after compiling: an enum
    member or a named tuple of constants (`type(m).K`, read from the class, is guarded)."""
    from dynamo.variables.constant import ConstantVariable

    return isinstance(obj, ConstantVariable) and (isinstance(obj.value, enum.Enum) or (
        isinstance(obj.value, tuple) and hasattr(type(obj.value), "_fields")))


class CopyVariable(VariableTracker):
    """`copy.copy(x)` or `copy.deepcopy(x)` of what the trace can copy itself: constants,
    containers, and objects of plain Python classes (their `__dict__` copied, as the default
    protocol does); the copies are made by the trace (new containers, new objects), and a deep
    copy keeps the sharing among what it copies."""

    def __init__(self, deep: bool) -> None:
        self.deep = deep

    def call(self, tx: Translator, args, kwargs) -> VariableTracker:
        if len(args) != 1 or kwargs:
            raise Unsupported("copy.copy()/deepcopy() with a memo")
        return _copy(tx, args[0], {}, shallow=not self.deep)


_COPY_PROTOCOL = ("__deepcopy__", "__reduce_ex__", "__reduce__", "__getstate__", "__setstate__",
                  "__copy__")


def _copy(tx: Translator, v: VariableTracker, memo: dict[int, VariableTracker],
          shallow: bool = False) -> VariableTracker:
    """A copy of `v`: its parts copied deeply (through `memo`, which keeps sharing), or, for a
    shallow copy, the parts themselves."""
    from dynamo.variables.builtins import BuiltinVariable
    from dynamo.variables.containers import (
        NamedTupleVariable,
        SetVariable,
        SizeVariable,
        TupleVariable,
    )
    from dynamo.variables.functions import UserFunctionVariable as Function
    from dynamo.variables.objects import PythonModuleVariable

    def part(x: VariableTracker) -> VariableTracker:
        return x if shallow else _copy(tx, x, memo)

    if id(v) in memo:
        return memo[id(v)]
    if isinstance(v, (ConstantVariable, SizeVariable, Function, PythonModuleVariable,
                      UserClassVariable, BuiltinVariable)) or (
            shallow and isinstance(v, TupleVariable)):
        return v  # immutable, or copied by reference (functions, classes, modules)
    if isinstance(v, TupleVariable):
        items = [part(x) for x in v.values]
        copy = NamedTupleVariable(items, v.kind, v.fields) if isinstance(
            v, NamedTupleVariable) else TupleVariable(items)
    elif isinstance(v, ListVariable):
        copy = memo[id(v)] = ListVariable([])
        copy.values.extend(part(x) for x in v.values)
    elif isinstance(v, DictVariable):
        copy = memo[id(v)] = DictVariable({})
        copy.entries.update({k: part(x) for k, x in v.entries.items()})
    elif isinstance(v, SetVariable):
        copy = SetVariable(v.values)
    elif isinstance(v, UserObjectVariable) and builtin_base(v.python_type()) is object and \
            can_create(v.python_type()) and not any(
                v.defines_in_python(name) for name in _COPY_PROTOCOL) and not any(
                "__slots__" in vars(klass) for klass in v.python_type().__mro__):
        copy = memo[id(v)] = NewObjectVariable(v.python_type(), class_of(v).source)
        state = v.generic_getattr(tx, "__dict__")
        copy.attrs.update({k: part(x) for k, x in state.entries.items()})
    else:
        raise Unsupported(f"copying {v.words()} (copy.copy, copy.deepcopy)")
    memo[id(v)] = copy
    return copy


# Logger methods that log at a level (`log` takes it as its first argument)
LOG_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING,
              "warn": logging.WARNING, "error": logging.ERROR, "exception": logging.ERROR,
              "critical": logging.CRITICAL, "fatal": logging.CRITICAL, "log": None}


class LoggingCallVariable(VariableTracker):
    """`logger.info` (or another level's method) of a `logging.Logger` from the frame. A call
    asks `logger.isEnabledFor(level)`, traced (a dict read once the logger's cache is warm):
    a disabled level logs nothing and costs nothing; an enabled one is a graph break, the
    record made for real (instead of breaking over and over inside the logging module)."""

    def __init__(self, logger: UserObjectVariable, name: str) -> None:
        self.logger = logger
        self.name = name
        self.source = AttrSource(logger.source, name)

    def call(self, tx: Translator, args, kwargs) -> VariableTracker:
        from dynamo.variables.tensor import concrete_int

        level = LOG_LEVELS[self.name]
        if level is None:
            level = concrete_int(args[0])
        # Asked for real first, for every standard level (the trace may hold the cache as it
        # was when it first read it): a cold cache is filled under the logging module's lock,
        # which the trace would break on; warm, the traced call only reads the cache.
        for known in {*LOG_LEVELS.values(), level} - {None}:
            self.logger.value.isEnabledFor(known)
        enabled = self.logger.call_method(tx, "isEnabledFor", [ConstantVariable(level)], {})
        if not enabled.truth(tx):
            return ConstantVariable(None)
        raise Unsupported(f"logging.Logger.{self.name}() at an enabled level (the record is "
                          "made for real)")
