"""Objects while tracing: nn.Modules, classes, Python modules, torch functions and grad-mode
contexts, and the base of every tracker of a real object (instances of Python classes are in
`user_objects`).

Attribute reads on objects from the frame are answered from the real object and guarded on the
attribute's source: `self.scale` becomes a constant with a guard that it still equals 2.0,
`self.fc` a module tracker with a guard on its identity, `self.fc.weight` a graph input.
A module call inlines the module's `forward`. Functions from torch go into the graph as they
are (`torch.relu`, `F.linear`), called on the fake values to learn their results' metadata.
"""

from __future__ import annotations

import collections
import collections.abc
import dataclasses
import enum
import functools
import importlib
import importlib.util
import inspect
import sys
import types
from typing import TYPE_CHECKING, Any

import torch
from torch.nn.modules import module as nn_module

from dynamo.exc import (
    NotAGraphValue,
    Raised,
    Unsupported,
    no_attribute,
    python_error,
    raised_by_python,
)
from dynamo.side_effects import DELETED, MISSING
from dynamo.sources import (
    CallSource,
    ModuleHooksSource,
    ModuleSource,
    WeakRefCallSource,
    module_hooks,
)
from dynamo.variables.base import TrueVariable, VariableTracker
from dynamo.variables.constant import ConstantVariable, is_none, subclassed_literal_value
from dynamo.variables.containers import (
    DequeVariable,
    DictVariable,
    IteratorVariable,
    ListVariable,
    SizeVariable,
    TupleVariable,
    as_index,
)
from dynamo.variables.contexts import (
    AUTOCAST,
    CONTEXTS,
    GRAD_MODES,
    GradModeVariable,
    StateContextVariable,
)
from dynamo.variables.functions import (
    TORCH_DISABLED,
    BoundMethodVariable,
    NestedFunctionVariable,
    PartialVariable,
    UserFunctionVariable,
    UserMethodVariable,
    c_callable_name,
    compiler_disabled,
)
from dynamo.variables.tensor import SymNodeVariable, TensorVariable, concrete_int
from guards import (
    AttrSource,
    ClassLacks,
    DictContains,
    DictKeys,
    DistinctObjects,
    Equals,
    GetItemSource,
    Identity,
    Length,
    ModuleTraining,
    ParameterSource,
    SubmoduleSource,
    TypeMatch,
    TypeSource,
)

if TYPE_CHECKING:
    from dynamo.interpreter import Translator


def class_attribute(cls: type, name: str) -> tuple[bool, Any]:
    """(found, value) for `name` looked up on `cls`'s MRO without invoking descriptors."""
    for klass in cls.__mro__:
        if name in klass.__dict__:
            return True, klass.__dict__[name]
    return False, None


def plain_class_attribute(name: str, member: Any) -> bool:
    """Whether class member `name` is a plain value (`P.K = 3`): not a dunder, not a descriptor
    (a method, a property, a named tuple's field). Classes are mutable: such a value is read
    through the class and guarded there, not made a constant."""
    return not name.startswith("__") and not hasattr(type(member), "__get__")


class ObjectVariable(VariableTracker):
    """Base of trackers for a real object from the frame (`value`, reached through `source`)."""

    def __init__(self, value: Any, source: Any = None) -> None:
        self.value = value
        self.source = source

    def python_type(self) -> type:
        return type(self.value)

    def _attr_source(self, name: str) -> Any:
        return AttrSource(self.source, name) if self.source is not None else None

    def defines(self, name: str) -> bool:
        """Whether the class has special method `name` beyond `object`'s."""
        found, member = class_attribute(self.python_type(), name)
        return found and getattr(member, "__objclass__", None) is not object

    def defines_in_python(self, name: str) -> bool:
        """Whether the class has special method `name` written in Python."""
        return isinstance(class_attribute(self.python_type(), name)[1], types.FunctionType)

    def _member_source(self, name: str) -> Any:
        """Where class member `name` is read, so that it (and its closure cells and defaults,
        when the trace reads them) is guarded; not for modules: a guard per layer on every
        call."""
        if self.source is not None and (not isinstance(self.value, torch.nn.Module) or
                                        isinstance(self.value, torch.fx.GraphModule)):
            # (a GraphModule's class is its own, and `recompile()` replaces its `forward`)
            return AttrSource(TypeSource(self.source), name)
        return None

    def _class_member(self, tx: Translator, name: str, implicit: bool = False) -> VariableTracker:
        """Member `name` of the object's class; `implicit`: looked up for a special method
        that Python calls itself (`len(obj)`, `obj(...)`), which never sees the instance's
        attributes, so none is guarded to be absent."""
        from dynamo.variables.builder import wrap

        cls = self.python_type()
        found, member = class_attribute(cls, name)
        if not found:
            raise Unsupported(f"{cls.__qualname__} has no attribute {name!r}")
        on_class = self._member_source(name)
        self._guard_class_member(tx, name, member, on_class, implicit)
        if isinstance(member, staticmethod):
            return self._member_function(tx, name, member.__func__, on_class, "__func__")
        if isinstance(member, classmethod):
            # The class, reached from the instance also for a module, so that what the method
            # reads from it is guarded
            of_class = TypeSource(self.source) if self.source is not None else None
            function = self._member_function(tx, name, member.__func__, on_class and AttrSource(
                on_class, "__func__"), "__func__")
            return UserMethodVariable(function, UserClassVariable(cls, of_class))
        if isinstance(member, property):
            return self._member_function(tx, name, member.fget, on_class and AttrSource(
                on_class, "fget"), "fget").call(tx, [self], {})
        if isinstance(member, types.FunctionType):  # a method, inlined even if torch's own
            cells = None if on_class else self._class_dict_entry(name)
            return UserMethodVariable(UserFunctionVariable(member, on_class, cells), self)
        from dynamo.frontend import CompiledFunction

        if type(member) is CompiledFunction:  # an `@dynamo.compile`d method: the method
            return UserMethodVariable(self._member_function(
                tx, name, member.fn, on_class and AttrSource(on_class, "fn"), "fn"), self)
        if isinstance(member, functools._lru_cache_wrapper):  # an `@lru_cache` method
            return UserMethodVariable(wrap(tx, member, on_class), self)
        method = BaseMethodVariable.of(member, self)
        if method is not None:
            return method
        store = getattr(self, "generic_setattr", None) or getattr(self, "module_setattr", None)
        if isinstance(member, functools.cached_property) and store is not None:
            # Not computed yet (the instance's dict would hold it): computed by the getter,
            # inlined, and stored in the instance's dict, as Python does (a replayed write;
            # on a module, through nn.Module.__setattr__, which puts a value that is not a
            # parameter, buffer or module in the dict too)
            value = wrap(tx, member.func, on_class and AttrSource(on_class, "func")).call(
                tx, [self], {})
            store(tx, member.attrname or name, value)
            return value
        if python_descriptor(member):  # (a lazy property): its `__get__` inlined, with the
            # descriptor read from the class's own dict (`getattr` on the class would call it)
            entry = self._class_dict_entry(name)
            # `__get__` read from the descriptor's class, guarded (replaced there, it is seen)
            getter = entry and AttrSource(TypeSource(entry), "__get__")
            return UserFunctionVariable(type(member).__get__, getter).call(
                tx, [wrap(tx, member, entry), self, UserClassVariable(cls)], {})
        if isinstance(member, types.MethodDescriptorType):  # `version.split(".")` of a str
            literal = subclassed_literal_value(tx, self)  # subclass's instance: run for real
            if literal is not None:
                return ConstantVariable(literal).getattr(tx, name)
        if hasattr(member, "__get__") and not isinstance(member, (int, float, str, tuple)):
            if isinstance(member, _C_METHODS) or callable(member) and \
                    c_callable_name(member) is not None:  # `ndarray.__len__`, a Cython method
                raise Unsupported(f"the method {cls.__qualname__}.{name}, written in C")
            raise Unsupported(f"the descriptor {cls.__qualname__}.{name}")
        custom = self.source is not None and self.defines_in_python("__getattribute__")
        return wrap(tx, member, on_class if custom or self._deleted(tx, name) else
                    self._attr_source(name) or on_class)

    def call_setter(self, tx: Translator, name: str, setter: property,
                    value: VariableTracker) -> None:
        """`obj.name = value` through property `setter`, inlined, read from the class as its
        getter is."""
        on_class = self._member_source(name)
        self._member_function(tx, name, setter.fset, on_class and AttrSource(on_class, "fset"),
                              "fset").call(tx, [self, value], {})

    def call_deleter(self, tx: Translator, name: str, deleter: property) -> None:
        """`del obj.name` through property `deleter`, inlined, read from the class as its
        getter is; CPython's AttributeError where the property has no deleter."""
        if deleter.fdel is None:
            message = f"property {name!r} of {self.python_type().__name__!r} object has no deleter"
            raise python_error(AttributeError(message))
        on_class = self._member_source(name)
        self._member_function(tx, name, deleter.fdel, on_class and AttrSource(on_class, "fdel"),
                              "fdel").call(tx, [self], {})

    def _member_function(self, tx: Translator, name: str, fn: Any, source: Any,
                         attr: str) -> VariableTracker:
        """`fn`, the function class member `name` holds as `attr` (a static method's, a
        property's getter or setter), read at `source`. A module's (no `source`: not guarded)
        is read in its class's dict for its closure cells only, so that what they hold is
        guarded and a container it changes is changed for real after the graph."""
        from dynamo.variables.builder import wrap

        if source is None and self.source is not None and isinstance(fn, types.FunctionType):
            return UserFunctionVariable(fn, None, AttrSource(self._class_dict_entry(name), attr))
        return wrap(tx, fn, source)

    def _class_dict_entry(self, name: str) -> Any:
        """Where class member `name` is in the dict of the class that defines it, reached from
        the instance (a module's too), or None without a source."""
        if self.source is None:
            return None
        return _class_dict_entry(TypeSource(self.source), self.python_type(), name)

    def _guard_class_member(self, tx: Translator, name: str, member: Any,
                            on_class: Any, implicit: bool = False) -> None:
        """What reading `name` from the class assumes: the class still holds this member (read
        at `on_class`), and no attribute of the instance shadows it (a data descriptor cannot be
        shadowed: guarded to stay one). For modules (no `on_class`), as torch.compile does, only
        the shadowing is guarded: a guard per module call on its class's `forward` would cost
        every model a check per layer. A module's class is guarded, though: its identity guard
        does not cover `module.__class__ = Other` (torch.compile's type guard does)."""
        if on_class is None and self.source is not None:
            tx.output.add_guard(TypeMatch(self.source, self.python_type()))
        elif on_class is not None:
            if isinstance(member, classmethod):  # each read makes a new bound method
                tx.output.add_guard(Identity.of(AttrSource(on_class, "__func__"),
                                                member.__func__))
            elif python_descriptor(member):  # read from the class, it would run `__get__`
                tx.output.add_guard(Identity.of(_class_dict_entry(
                    on_class.of, self.python_type(), name), member))
            else:
                tx.output.add_guard(Identity.of(on_class, getattr(self.python_type(), name)))
        if self.source is None or not hasattr(self.value, "__dict__") or implicit or \
                self._deleted(tx, name):
            return
        if not hasattr(type(member), "__set__"):
            tx.output.add_guard(DictContains(AttrSource(self.source, "__dict__"), name, False))
        elif on_class is not None and python_descriptor(member):
            # A data descriptor only while its class has `__set__`: once deleted there, the
            # instance's attribute shadows it.
            descriptor_class = TypeSource(_class_dict_entry(on_class.of, self.python_type(), name))
            tx.output.add_guard(DictContains(
                _class_dict(descriptor_class, type(member), "__set__"), "__set__", True))

    def has_attribute(self, tx: Translator, name: str) -> bool:
        """`hasattr`, guarded: an attribute the instance holds must stay (it may be deleted),
        one it lacks must stay missing (it may be added), and one found on the class must stay
        in the dict of the class that defines it (`del Cls.zz`: the answer was stale)."""
        if self._deleted(tx, name):  # only the class may have it now
            return class_attribute(type(self.value), name)[0]
        if tx.output.side_effects.load("attr", self, name) is not MISSING:
            return True
        found = hasattr(self.value, name)
        if self.source is not None:
            holders = [where for where in self._instance_dicts()
                       if name in getattr(self.value, where, {})]
            for where in holders[:1] if found else self._instance_dicts():
                tx.output.add_guard(DictContains(AttrSource(self.source, where), name, found))
            if found and not holders and any(name in c.__dict__ for c in type(self.value).__mro__):
                tx.output.add_guard(DictContains(
                    _class_dict(TypeSource(self.source), type(self.value), name), name, True))
        return found

    def _instance_dicts(self) -> tuple[str, ...]:
        """Where an attribute set on the instance lands."""
        return ("__dict__",) if hasattr(self.value, "__dict__") else ()

    def _deleted(self, tx: Translator, name: str) -> bool:
        """Whether the trace deleted the instance's attribute `name` (what the real dict held
        before is guarded; it still holds it until the graph has run)."""
        return tx.output.side_effects.load("attr", self, name) is DELETED

    def _guard_absent(self, tx: Translator, name: str) -> None:
        """The instance has no attribute `name`: guarded to stay so (a code path taken because
        of it, `__getattr__` or an `except AttributeError`, depends on it)."""
        if self.source is not None and not self._deleted(tx, name):
            for where in self._instance_dicts():
                tx.output.add_guard(DictContains(AttrSource(self.source, where), name, False))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({type(self.value).__qualname__})"


BUILTIN_BASES = (object, dict, collections.OrderedDict, list)
# Builtin types whose methods, read unbound from the type (`str.isalnum(c)`,
# `set.difference(a, b)`: einops' parser), are the methods of their first argument.
VALUE_BASES = (str, bytes, int, float, complex, tuple, set, frozenset)


_C_METHODS = (types.MethodDescriptorType, types.WrapperDescriptorType,
              types.ClassMethodDescriptorType)


def python_descriptor(member: Any) -> bool:
    """Whether `member` is a descriptor whose `__get__` is written in Python."""
    return isinstance(inspect.getattr_static(type(member), "__get__", None), types.FunctionType)


def _class_dict(class_source: Any, cls: type, name: str) -> Any:
    """The source of the dict of the class of `cls`'s MRO that defines `name`."""
    index = next(i for i, base in enumerate(cls.__mro__) if name in base.__dict__)
    return AttrSource(GetItemSource(AttrSource(class_source, "__mro__"), index), "__dict__")


def _class_dict_entry(class_source: Any, cls: type, name: str) -> Any:
    """The source of `name` in the dict of the class of `cls`'s MRO that defines it."""
    return GetItemSource(_class_dict(class_source, cls, name), name)


class WeakRefVariable(ObjectVariable):
    """A weak reference from the frame (an RNN's `_flat_weight_refs`): calling it reads the
    object it refers to, through a source of its own, guarded like any value the frame holds."""

    def call(self, tx: Translator, args: list[VariableTracker],
             kwargs: dict[str, VariableTracker]) -> VariableTracker:
        from dynamo.variables.builder import wrap

        if args or kwargs:
            raise Unsupported("calling a weak reference with arguments (a TypeError)")
        return wrap(tx, self.value(), WeakRefCallSource(self.source))


class BaseMethodVariable(TrueVariable):
    """A method of `object`, `dict`, `OrderedDict` or `list` (`dict.get`, `list.append`),
    bound to `obj` or, when `obj` is None, unbound (its first argument is the object)."""

    def __init__(self, base: type, name: str, obj: VariableTracker | None = None) -> None:
        self.base = base
        self.name = name
        self.obj = obj

    @staticmethod
    def of(member: Any, obj: VariableTracker | None = None) -> BaseMethodVariable | None:
        """`member` (as found on a class) as such a method, or None if it is not one."""
        if not inspect.isroutine(member):  # (before reading an attribute of any object)
            return None
        base = getattr(member, "__objclass__", None)
        if base in BUILTIN_BASES:
            return BaseMethodVariable(base, member.__name__, obj)
        return None

    def call(self, tx: Translator, args, kwargs) -> VariableTracker:
        from dynamo.variables.user_objects import UserObjectVariable

        obj, args = (self.obj, args) if self.obj is not None else (args[0], args[1:])
        if isinstance(obj, UserObjectVariable):
            return obj.call_base(tx, self.base, self.name, args, kwargs)
        if self.base in VALUE_BASES and issubclass(obj.python_type(), self.base):
            return obj.call_method(tx, self.name, args, kwargs)
        if isinstance(obj, (DictVariable, ListVariable)) and self.base is not object and \
                issubclass(obj.python_type(), self.base):
            return obj.call_method(tx, self.name, args, kwargs)
        raise Unsupported(f"{self.base.__name__}.{self.name}() on {obj}")

    def words(self) -> str:
        if self.obj is None:
            return f"{self.base.__name__}.{self.name}"
        return f"{self.obj.words()}'s method {self.name}"

    def __repr__(self) -> str:
        return f"BaseMethodVariable({self.base.__name__}.{self.name})"


# nn.Module's methods that walk its tree of submodules, parameters and buffers
_WALKS = ("parameters", "named_parameters", "buffers", "named_buffers", "children",
          "named_children", "modules", "named_modules")
# A hook registered from the frame is made for real at a break (its handle holds weak
# references, and the module's hook dicts change); the reason names the call, not what fails
# inside it.
_HOOK_REGISTRATIONS = ("register_forward_hook", "register_forward_pre_hook",
                       "register_full_backward_hook", "register_full_backward_pre_hook",
                       "register_backward_hook")


# The containers' own `__len__`: their truth is their length.
_CONTAINER_LENS = tuple(inspect.getattr_static(c, "__len__") for c in (
    torch.nn.ModuleList, torch.nn.Sequential, torch.nn.ModuleDict, torch.nn.ParameterList))


class CompiledVariable(ObjectVariable):
    """A compiled module or function (`dynamo.compile`'s wrapper) from the frame. Called, or
    read from, it is the module or function it wraps (`inner`), traced into the caller's graph
    as torch.compile does; as a value (stored in a global, returned) it is the wrapper itself."""

    def __init__(self, value: Any, source: Any, inner: VariableTracker) -> None:
        super().__init__(value, source)
        self.inner = inner

    def call(self, tx: Translator, args, kwargs) -> VariableTracker:
        from dynamo.frontend import OptimizedModule

        if isinstance(self.value, OptimizedModule):  # its own hooks, around the module it wraps
            return NNModuleVariable(self.value, self.source).call(tx, args, kwargs,
                                                                  forward=self.inner)
        return self.inner.call(tx, args, kwargs)

    def truth(self, tx: Translator) -> bool:
        if isinstance(self.value, torch.nn.Module):
            return self.inner.truth(tx)  # (its `__bool__` asks the module it wraps)
        return super().truth(tx)

    def call_method(self, tx: Translator, name: str, args, kwargs) -> VariableTracker:
        if name == "__len__" and isinstance(self.value, torch.nn.Module):
            return self.inner.call_method(tx, name, args, kwargs)  # (its `__len__` too)
        return super().call_method(tx, name, args, kwargs)

    def getattr(self, tx: Translator, name: str) -> VariableTracker:
        if isinstance(self.value, torch.nn.Module):
            if name in ("_orig_mod", "forward"):  # (its forward: the module called, hooks and all)
                return self.inner
            if name in _WALKS:  # its tree, as nn.Module walks it: the wrapper's
                return NNModuleVariable(self.value, self.source).getattr(tx, name)
            return self.inner.getattr(tx, name)  # (a compiled module passes attributes on)
        if type(self.value) is functools.partial:  # a compiled callable object: the object's
            return self.inner.getattr(tx, name)
        # A compiled function's attributes are the wrapper's own (copied from the function
        # when compiled, or set on it since: `f.calls += 1` in an `@compile`d `f`), not the
        # function's: it passes none on (reading the function's found no `calls`)
        if self.own_attribute(tx, name):
            from dynamo.variables.builder import wrap

            return wrap(tx, self.value.__dict__[name], self._attr_source(name))
        if hasattr(type(self.value), name):
            return self.inner.getattr(tx, name)
        raise no_attribute(type(self.value).__name__, name)

    def own_attribute(self, tx: Translator, name: str) -> bool:
        """Whether the compiled function (not a module) holds attribute `name` in its own
        dict, guarded (one set on it, or deleted, later changes the answer)."""
        found = name in self.value.__dict__
        if self.source is not None:
            tx.output.add_guard(DictContains(AttrSource(self.source, "__dict__"), name, found))
        return found


def _fx_call_wrapped(module: torch.nn.Module) -> bool:
    """Whether `module` is a GraphModule whose class's `__call__` is fx's `call_wrapped`, which
    only calls nn.Module's (its `_WrappedCall`, an object of torch's Python, adds the generated
    code's lines to an error's message): called as nn.Module's, as torch.compile calls it
    (followed, the `_WrappedCall` became a graph node given the module: a graph break)."""
    if not isinstance(module, torch.fx.GraphModule):
        return False
    wrapped = inspect.getattr_static(type(module), "_wrapped_call", None)
    call = inspect.getattr_static(type(module), "__call__", None)
    if not (type(wrapped) is torch.fx.graph_module._WrappedCall and wrapped.cls_call is None
            and getattr(call, "__name__", None) == "call_wrapped"):
        return False
    # `super(wrapped.cls, module).__call__` is what it calls: nn.Module's, unless a subclass
    # of GraphModule defines its own (`class MyGM(GraphModule): def __call__`), which runs
    mro = type(module).__mro__
    if wrapped.cls not in mro:
        return False
    for cls in mro[mro.index(wrapped.cls) + 1:]:
        if "__call__" in vars(cls):
            return vars(cls)["__call__"] is vars(torch.nn.Module)["__call__"]
    return False


class NNModuleVariable(ObjectVariable):
    """An nn.Module from the frame: its parameters are graph inputs, its calls are inlined.

    One the traced code creates (`nn.ReLU()`, `nn.CrossEntropyLoss(ignore_index=-100)`: torch's
    own modules with no parameters or buffers, from constant arguments) is created while
    tracing too; `make` creates it anew, for real, if it leaves the trace."""

    def __init__(self, value: Any, source: Any = None, make: Any = None) -> None:
        super().__init__(value, source)
        self.make = make

    def truth(self, tx: Translator) -> bool:
        """True, as for any object, but a container's (`if self.layers:`) is its length."""
        cls = type(self.value)
        own_bool = inspect.getattr_static(cls, "__bool__", None)
        own_len = inspect.getattr_static(cls, "__len__", None)
        if own_bool is None and own_len is None:
            return True
        if own_bool is None and own_len in _CONTAINER_LENS:
            return len(self._entries(tx)) > 0
        raise Unsupported(f"the truth value of a {cls.__qualname__} (it defines __bool__ or "
                          "__len__)")

    def has_attribute(self, tx: Translator, name: str) -> bool:
        """`hasattr(module, name)`: as an object's; a no is also guarded by the class and its
        bases still lacking the name (`Cls.flag = 1` after compiling left the no standing;
        what `nn.Module.__getattr__` answers, a parameter, buffer or submodule, is guarded
        where the module's dicts are)."""
        found = super().has_attribute(tx, name)
        if not found and self.source is not None and not self._deleted(tx, name):
            tx.output.add_guard(ClassLacks(TypeSource(self.source), (name,)))
        return found

    def getattr(self, tx: Translator, name: str) -> VariableTracker:
        from dynamo.variables.builder import wrap

        module = self.value
        source = self.source
        written = tx.output.side_effects.load("attr", self, name)
        if written is not MISSING:
            return written
        if name == "training":
            if source is not None:
                tx.output.add_guard(ModuleTraining(source, module.training))
            return ConstantVariable(module.training)
        if name == "__dict__" and source is not None:
            # read only, as an object's (writing into it is refused by side_effects); what
            # the trace set on the module shows over the real entries
            real = wrap(tx, module.__dict__, AttrSource(source, "__dict__"))
            written = tx.output.side_effects.attributes_set(self)
            return real.overlaid(written) if written else real
        if name in module.__dict__.get("_parameters", {}):
            value = module._parameters[name]
            return wrap(tx, value, ParameterSource(source, name) if source else None)
        if name in module.__dict__.get("_buffers", {}):
            value = module._buffers[name]
            return wrap(tx, value, ParameterSource(source, name, buffer=True) if source else None)
        if name in module.__dict__.get("_modules", {}):
            value = module._modules[name]
            return wrap(tx, value, SubmoduleSource(source, name) if source else None)
        found, member = class_attribute(type(module), name)
        if found and hasattr(type(member), "__set__"):
            return self._class_member(tx, name)
        if name in module.__dict__:
            return wrap(tx, module.__dict__[name], self._attr_source(name))
        if name in (*_WALKS, *_HOOK_REGISTRATIONS) and member is getattr(torch.nn.Module, name):
            return BoundMethodVariable(self, name)
        if not found and self.overrides("__getattr__"):  # a wrapper that delegates
            self._guard_absent(tx, name)  # it could be set on the instance later
            return self._class_member(tx, "__getattr__").call(tx, [ConstantVariable(name)], {})
        return self._class_member(tx, name)

    def overrides(self, name: str) -> bool:
        """Whether the module's class replaces nn.Module's special method `name` in Python."""
        member = class_attribute(type(self.value), name)[1]
        return isinstance(member, types.FunctionType) and member is not getattr(torch.nn.Module,
                                                                              name)

    def module_getattr(self, tx: Translator, name: str) -> VariableTracker:
        """`nn.Module.__getattr__(module, name)`, as an override's `super().__getattr__` calls
        it: the module's parameters, buffers and submodules, else an AttributeError."""
        tables = ("_parameters", "_buffers", "_modules")
        if any(name in self.value.__dict__.get(table, {}) for table in tables):
            return self.getattr(tx, name)
        if self.source is not None:
            for table in tables:
                tx.output.add_guard(DictContains(AttrSource(self.source, table), name, False))
        raise no_attribute(type(self.value).__name__, name)

    def _instance_dicts(self) -> tuple[str, ...]:
        return ("__dict__", "_parameters", "_buffers", "_modules")

    def setattr(self, tx: Translator, name: str, value: VariableTracker) -> None:
        """`module.name = value`: through the class's own `__setattr__` when it has one."""
        if self.overrides("__setattr__"):
            self._class_member(tx, "__setattr__").call(tx, [ConstantVariable(name), value], {})
        else:
            self.module_setattr(tx, name, value)

    def module_setattr(self, tx: Translator, name: str, value: VariableTracker) -> None:
        """`nn.Module.__setattr__(module, name, value)`: a property's setter, else the write,
        recorded and replayed on the module after the graph."""
        module = self.value
        member = class_attribute(type(module), name)[1]
        if isinstance(member, property) and member.fset is not None:
            self.call_setter(tx, name, member, value)
            return
        if hasattr(type(member), "__set__"):
            raise Unsupported(f"setting {name!r} of a {type(module).__qualname__} (a "
                              "descriptor)")
        registers = isinstance(value, NNModuleVariable) or (
            isinstance(value, TensorVariable) and isinstance(value.fake, torch.nn.Parameter))
        new_buffer = name in module._buffers and isinstance(value, TensorVariable) \
            and not registers  # `self.count = self.count + 1`: replayed through __setattr__
        if name == "training" and not (value.is_constant()
                                       and isinstance(value.as_constant(), bool)):
            raise Unsupported(f"assigning {type(module).__qualname__}.training a value that "
                              "is not a constant bool")
        if registers or name in module._parameters \
                or (name in module._buffers and not new_buffer) or name in module._modules:
            raise Unsupported(f"assigning {type(module).__qualname__}.{name} (a parameter, "
                              "buffer or submodule)")
        # `model.train()` / `.eval()` too: later reads in the trace see the flag written, and
        # the write is replayed on the module after the graph.
        tx.output.side_effects.store("attr", self, name, value)

    def _children(self, tx: Translator) -> list[tuple[str, VariableTracker]]:
        from dynamo.variables.builder import wrap

        modules = self.value._modules
        if self.source is not None:  # the names in order: a ModuleDict's order may change
            tx.output.add_guard(DictKeys(AttrSource(self.source, "_modules"), tuple(modules)))
        return [(name, wrap(tx, m, SubmoduleSource(self.source, name) if self.source else None))
                for name, m in modules.items()]

    def _walk(self, tx: Translator, name: str, args, kwargs) -> VariableTracker:
        """`parameters()`, `named_modules()` and the like, taken from the module tree read
        through trackers (the dicts' keys guarded): an iterator over their items."""
        bound = inspect.signature(getattr(torch.nn.Module, name)).bind(
            None, *[a.as_constant() for a in args],
            **{k: v.as_constant() for k, v in kwargs.items()})
        bound.apply_defaults()
        options = bound.arguments
        if name in ("children", "named_children"):
            found = self._named_children(tx)
        else:
            prefix = options.get("prefix", "")
            unique = options.get("remove_duplicate", True)
            if name in ("modules", "named_modules"):
                found = self._named_modules(tx, prefix, unique, set())
            else:
                table = "_parameters" if name.endswith("parameters") else "_buffers"
                modules = self._named_modules(tx, prefix, unique, set()) \
                    if options.get("recurse", True) else [(prefix, self)]
                found = self._named_tensors(tx, table, modules, unique)
        if name.startswith("named_"):
            return IteratorVariable([TupleVariable([ConstantVariable(k), v]) for k, v in found])
        return IteratorVariable([v for _, v in found])

    def _named_children(self, tx: Translator) -> list[tuple[str, NNModuleVariable]]:
        if self.source is not None:
            tx.output.add_guard(DictKeys(AttrSource(self.source, "_modules"),
                                         tuple(self.value._modules)))
        # a compiled submodule is walked as nn.Module walks it: the wrapper, then `_orig_mod`
        return [(n, NNModuleVariable(c.value, c.source) if isinstance(c, CompiledVariable) else c)
                for n, c in self._children(tx)
                if isinstance(c, NNModuleVariable | CompiledVariable)]

    def _named_modules(self, tx: Translator, prefix: str, unique: bool,
                       seen: set[int]) -> list[tuple[str, NNModuleVariable]]:
        if unique and id(self.value) in seen:
            return []
        seen.add(id(self.value))
        found: list[tuple[str, NNModuleVariable]] = [(prefix, self)]
        for name, child in self._named_children(tx):
            found += child._named_modules(tx, f"{prefix}.{name}" if prefix else name, unique,
                                          seen)
        return found

    @staticmethod
    def _named_tensors(tx: Translator, table: str, modules: list[tuple[str, NNModuleVariable]],
                       unique: bool) -> list[tuple[str, VariableTracker]]:
        found, seen = [], set()
        for prefix, module in modules:
            tensors = getattr(module.value, table)
            if module.source is not None:
                tx.output.add_guard(DictKeys(AttrSource(module.source, table), tuple(tensors)))
            for name, tensor in tensors.items():
                if tensor is None:
                    continue
                tracker = module.getattr(tx, name)  # read even when dropped: guarded the same
                if unique and id(tensor) in seen:
                    continue
                seen.add(id(tensor))
                found.append((f"{prefix}.{name}" if prefix else name, tracker))
        sources = [t.source for _, t in found if t.source is not None]
        if unique and len(sources) > 1:  # the tensors dropped as duplicates, and no others
            tx.output.add_guard(DistinctObjects(tuple(sources)))
        return found

    def _entries(self, tx: Translator) -> list[tuple[str, VariableTracker]]:
        """A container module's items by name: a ParameterList's parameters, else its
        submodules."""
        module = self.value
        if not isinstance(module, torch.nn.ParameterList):
            return self._children(tx)
        if self.source is not None:  # an appended parameter changes the loop
            tx.output.add_guard(DictKeys(AttrSource(self.source, "_parameters"),
                                         tuple(module._parameters)))
        return [(name, self.getattr(tx, name)) for name in module._parameters]

    def items(self, tx: Translator) -> list[VariableTracker]:
        module = self.value
        if isinstance(module, torch.nn.ModuleDict):
            return [ConstantVariable(name) for name, _ in self._children(tx)]
        if isinstance(module, (torch.nn.ModuleList, torch.nn.Sequential, torch.nn.ParameterList)):
            return [child for _, child in self._entries(tx)]
        if isinstance(module, torch.nn.ParameterDict) and \
                type(module).__iter__ is torch.nn.ParameterDict.__iter__:
            # its keys, in order (`iter(self._keys)`): `in`, `list()`, `get` and loops
            if self.source is not None:
                tx.output.add_guard(DictKeys(AttrSource(self.source, "_keys"),
                                             tuple(module._keys)))
            return [ConstantVariable(name) for name in module._keys]
        if isinstance(class_attribute(type(module), "__iter__")[1], types.FunctionType):
            # a container module of the user's: its own `__iter__`, traced, taken whole
            from dynamo.variables.containers import iterate

            return iterate(tx, self.call_method(tx, "__iter__", [], {})).items(tx)
        raise Unsupported(f"iterating over a {type(module).__qualname__}")

    def call_method(self, tx: Translator, name: str, args, kwargs) -> VariableTracker:
        module = self.value
        container = isinstance(module, (torch.nn.ModuleList, torch.nn.Sequential,
                                        torch.nn.ModuleDict, torch.nn.ParameterList))
        if container and name == "__len__":
            return ConstantVariable(len(self._entries(tx)))
        if container and name == "__getitem__":
            key = as_index(tx, args[0])
            children = self._entries(tx)
            if isinstance(module, torch.nn.ModuleDict):
                return dict(children)[key]
            if isinstance(key, slice):
                picked = [child for _, child in children[key]]
                if isinstance(module, (torch.nn.Sequential, torch.nn.ModuleList)):
                    return ModuleChainVariable(picked, type(module),
                                               [name for name, _ in children[key]])
                return ListVariable(picked)
            return children[key][1]
        if isinstance(module, torch.nn.ModuleDict) and name in ("keys", "values", "items"):
            children = self._children(tx)
            if name == "keys":
                return TupleVariable([ConstantVariable(k) for k, _ in children])
            if name == "values":
                return TupleVariable([v for _, v in children])
            return TupleVariable([TupleVariable([ConstantVariable(k), v]) for k, v in children])
        if name in _WALKS and getattr(type(module), name) is getattr(torch.nn.Module, name):
            return self._walk(tx, name, args, kwargs)
        if name in ("state_dict", "register_buffer",
                    "register_parameter", "add_module", "apply", "to", "cuda", "cpu", "train",
                    "eval", "zero_grad", "requires_grad_", *_HOOK_REGISTRATIONS):
            raise Unsupported(f"nn.Module.{name}() inside a compiled frame")
        return self.getattr(tx, name).call(tx, args, kwargs)

    def call(self, tx: Translator, args, kwargs,
             forward: VariableTracker | None = None) -> VariableTracker:
        """`module(*args)`, as `Module.__call__` runs it: its forward pre-hooks, `forward` (or
        the one given), its forward hooks, each inlined (the hooks, by position, are guarded to
        stay the same)."""
        from dynamo.frontend import OptimizedModule
        from dynamo.variables.builder import wrap

        module = self.value
        if forward is None and isinstance(module, OptimizedModule):  # met in a tree walk
            return wrap(tx, module, self.source).call(tx, args, kwargs)
        if getattr(module, "_dynamo_disable", False):
            raise Unsupported(f"calling a {type(module).__qualname__}, marked dynamo.disable")
        if compiler_disabled(module) is not None:
            raise Unsupported(f"calling a {type(getattr(module, '_orig_mod', module)).__qualname__}"
                              ", marked torch.compiler.disable")
        if isinstance(module, torch.jit.ScriptModule):  # (a traced one's `forward` is a
            # descriptor of torch.jit's: followed, it failed on an AttributeError of its own)
            raise Unsupported(f"calling a TorchScript module ({type(module).__qualname__}): it "
                              "runs as it is")
        if forward is None and self.overrides("__call__") and not _fx_call_wrapped(module):
            # its class's, which calls
            return self._class_member(tx, "__call__").call(tx, args, kwargs)  # nn.Module's
        hooks = ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks",
                 "_backward_pre_hooks")
        if module._backward_hooks or module._backward_pre_hooks or any(
                getattr(nn_module, f"_global{h}") for h in hooks):
            raise Unsupported(f"calling a {type(module).__qualname__} that has backward hooks, "
                              "or while global module hooks are registered (inside a compiled "
                              "frame; the outermost module's own hooks run eagerly)")
        if torch.is_grad_enabled():  # (under no_grad, which the global-state guard pins,
            # `Module.__call__` leaves inputs and outputs as they are: no guard needed)
            for kind in ("_backward_hooks", "_backward_pre_hooks"):  # none now, none later
                where = self._attr_source(kind)
                if where is not None:
                    tx.output.add_guard(Length(where, 0))
        args = list(args)
        # one kwargs dict, as `Module.__call__` has: what a hook writes into it in place is
        # what `forward` and the later hooks get
        kwargs_dict = DictVariable(kwargs)
        forward_hooks = self._hooks(tx, "_forward_hooks")
        called: set[int] = set()  # the positions of the always-called hooks already run
        output: VariableTracker = ConstantVariable(None)
        try:
            for hook, with_kwargs, _ in self._hooks(tx, "_forward_pre_hooks"):
                if with_kwargs:
                    result = hook.call(tx, [self, TupleVariable(args), kwargs_dict], {})
                    if not is_none(result):
                        if not (isinstance(result, TupleVariable) and len(result.items(tx)) == 2):
                            raise Unsupported("a forward pre-hook with kwargs that returns other "
                                              "than an (args, kwargs) pair")
                        args, kwargs_dict = result.items(tx)
                        args = args.items(tx)
                else:
                    result = hook.call(tx, [self, TupleVariable(args)], {})
                    if not is_none(result):
                        args = result.items(tx) if isinstance(result, TupleVariable) else [result]
            if not isinstance(kwargs_dict, DictVariable):
                raise Unsupported("a forward pre-hook that returns keyword arguments other than "
                                  "a dict")
            kwargs = dict(kwargs_dict.entries)
            if forward is not None:
                output = forward.call(tx, args, kwargs)
            elif module.__dict__.get("forward") is not None:
                output = wrap(tx, module.__dict__["forward"], self._attr_source("forward")).call(
                    tx, args, kwargs)
            else:
                output = self._class_member(tx, "forward").call(tx, args, kwargs)
            for position, (hook, with_kwargs, always) in enumerate(forward_hooks):
                if always:
                    called.add(position)
                hook_args = [self, TupleVariable(args), *([kwargs_dict] if with_kwargs
                                                          else []), output]
                result = hook.call(tx, hook_args, {})
                if not is_none(result):
                    output = result
        except Raised:
            # `Module.__call__` runs the `always_call=True` forward hooks not run yet before the
            # error leaves it (given the output so far: None if `forward` raised)
            for position, (hook, with_kwargs, always) in enumerate(forward_hooks):
                if not always or position in called:
                    continue
                hook_args = [self, TupleVariable(args), *([kwargs_dict] if with_kwargs
                                                          else []), output]
                try:
                    result = hook.call(tx, hook_args, {})
                except Raised:  # eager warns and silences it
                    raise Unsupported("a forward hook with always_call=True that raises while "
                                      "the module's call raises") from None
                if not is_none(result):
                    output = result
            raise
        return output

    def _hooks(self, tx: Translator, kind: str) -> list[tuple[VariableTracker, bool, bool]]:
        """The module's hooks of `kind` (`_forward_hooks`, `_forward_pre_hooks`), in order: the
        hook, whether it takes the keyword arguments, whether it is always called; guarded by
        position (`ModuleHooksSource`), not by key: a hook registered anew for each call has a
        new key each time, and guards on the keys recompiled the frame on every call."""
        from dynamo.variables.builder import wrap

        if not getattr(self.value, kind):
            if self.source is not None:
                tx.output.add_guard(Length(self._attr_source(kind), 0))
            return []
        hooks, flags = module_hooks(self.value, kind)
        where = None if self.source is None else ModuleHooksSource(self.source, kind)
        if where is not None:
            tx.output.add_guard(Equals(GetItemSource(where, 1), flags))
        return [(wrap(tx, hook, where and GetItemSource(GetItemSource(where, 0), position)),
                 with_kwargs, always)
                for position, (hook, (with_kwargs, always)) in enumerate(zip(hooks, flags))]


def _new_module(cls: type, args, kwargs) -> NNModuleVariable:
    """A module the traced code creates, when it is stateless, made of constants, and made by
    torch's own code alone: a torch module, or a user's subclass of one that adds no
    `__init__` or `__new__` (an activation that is only a `forward`, as Hugging Face's ACT2FN
    makes), so that making it has no effect to replay."""
    torch_made = all(k.__module__.startswith("torch.") or not ("__init__" in k.__dict__ or
                                                                "__new__" in k.__dict__)
                     for k in cls.__mro__ if k is not object)
    if not (torch_made and all(a.is_constant() for a in [*args, *kwargs.values()])):
        raise Unsupported(f"creating an instance of {cls.__qualname__} (only modules that "
                          "torch's own code makes, from constant arguments)")
    make = functools.partial(cls, *[a.as_constant() for a in args],
                             **{k: v.as_constant() for k, v in kwargs.items()})
    with torch.device("meta"):  # a first look, which draws no random numbers (a Linear's
        probe = make()  # initial weights would, and then differ from eager's)
    if any(True for _ in probe.parameters()) or any(True for _ in probe.buffers()):
        raise Unsupported(f"creating an instance of {cls.__qualname__} (it has parameters or "
                          "buffers)")
    return NNModuleVariable(make(), None, make)


class ModuleChainVariable(VariableTracker):
    """A slice of a Sequential (`self.seq[1:]`: its modules, called one after another) or of
    a ModuleList (a ModuleList too in eager: `isinstance` says so)."""

    def __init__(self, modules: list[VariableTracker],
                 kind: type = torch.nn.Sequential, names: list[str] | None = None) -> None:
        self.modules = modules
        self.kind = kind
        self.names = names  # a Sequential's slice keeps its modules' names, as in eager

    def rebuilt(self) -> tuple[type, Any]:
        """How eager makes the slice: `kind(OrderedDict(named modules))` for a Sequential,
        `kind([modules])` for a ModuleList (`(kind, list of (name, module) or of modules)`)."""
        if issubclass(self.kind, torch.nn.Sequential):
            names = self.names or [str(i) for i in range(len(self.modules))]
            return self.kind, list(zip(names, self.modules))
        return self.kind, list(self.modules)

    def python_type(self) -> type:
        return self.kind

    def items(self, tx: Translator) -> list[VariableTracker]:
        return list(self.modules)

    def call_method(self, tx: Translator, name: str, args, kwargs) -> VariableTracker:
        if name == "__len__" and not args:
            return ConstantVariable(len(self.modules))
        if name == "__getitem__" and len(args) == 1:
            key = as_index(tx, args[0])
            if not isinstance(key, slice):
                return self.modules[key]
            return ModuleChainVariable(self.modules[key], self.kind,
                                       None if self.names is None else self.names[key])
        return super().call_method(tx, name, args, kwargs)

    def call(self, tx: Translator, args, kwargs) -> VariableTracker:
        if not issubclass(self.kind, torch.nn.Sequential):
            raise Unsupported(f"calling a slice of a {self.kind.__qualname__}")
        if len(args) != 1 or kwargs:
            raise Unsupported("calling a slice of a Sequential with other than one input")
        value = args[0]
        for module in self.modules:
            value = module.call(tx, [value], {})
        return value


class UserClassVariable(VariableTracker):
    """A class: its attributes, and calls that build values the trace understands."""

    def __init__(self, cls: type, source: Any = None) -> None:
        self.cls = cls
        self.source = source

    def truth(self, tx: Translator) -> bool:
        meta = type(self.cls)
        if meta is enum.EnumMeta or not (hasattr(meta, "__bool__") or hasattr(meta, "__len__")):
            return True  # an Enum class's `__bool__` says True too
        raise Unsupported(f"the truth value of the class {self.cls.__qualname__} (its "
                          "metaclass defines __bool__ or __len__)")

    def python_type(self) -> type:
        return type(self.cls)

    def words(self) -> str:
        return f"the class {self.cls.__qualname__}"

    def has_attribute(self, tx: Translator, name: str) -> bool:
        """`hasattr(Cls, name)`, guarded: found in the class (or a base), by the dict of the
        class that defines it holding the name; not found, by the class and its bases, and
        its metaclass, still lacking it (`del Cls.zz` or `Cls.zz = 1` left a stale answer)."""
        meta = type(self.cls)
        if any("__getattr__" in c.__dict__ for c in meta.__mro__):
            raise Unsupported(f"hasattr() on the class {self.cls.__qualname__}, whose metaclass "
                              "customises attribute access")
        found = hasattr(self.cls, name)
        if not found and any(name in c.__dict__ for c in (*meta.__mro__, *self.cls.__mro__)):
            # a descriptor (a property of the metaclass) raised AttributeError: the guards of
            # a no (the name absent) failed at once, every call ran eagerly with a warning
            raise Unsupported(f"hasattr() on the class {self.cls.__qualname__}, whose "
                              f"{name!r} raised AttributeError")
        if self.source is None:
            return found
        if found and any(name in c.__dict__ for c in self.cls.__mro__):
            tx.output.add_guard(DictContains(_class_dict(self.source, self.cls, name), name, True))
        elif found:  # the metaclass's: a method or attribute of `type`, or of a metaclass
            tx.output.add_guard(TypeMatch(self.source, meta))
            owner = next((c for c in meta.__mro__ if name in c.__dict__), type)
            if owner not in (type, object):  # (a user's metaclass: `del Meta.zz` left a yes)
                tx.output.add_guard(DictContains(_class_dict(TypeSource(self.source), meta,
                                                             name), name, True))
        else:
            tx.output.add_guard(ClassLacks(self.source, (name,)))
            tx.output.add_guard(ClassLacks(TypeSource(self.source), (name, "__getattr__")))
        return found

    def is_constant(self) -> bool:
        return True

    def as_constant(self) -> Any:
        return self.cls

    def getattr(self, tx: Translator, name: str) -> VariableTracker:
        from dynamo.variables.builder import wrap

        found, member = class_attribute(self.cls, name)
        if issubclass(self.cls, torch.autograd.Function) and name == "apply":
            return function_apply(tx, self.cls, self.source)
        if isinstance(member, staticmethod):  # `C.s` is the function itself
            return wrap(tx, member.__func__, self._attr_source(name))
        if isinstance(member, classmethod):  # `C.c` is a new bound method at each read
            on_class = self._attr_source(name)
            return UserMethodVariable(wrap(tx, member.__func__, on_class and AttrSource(
                on_class, "__func__")), self)
        if name in ("__name__", "__qualname__", "__module__"):
            return ConstantVariable(getattr(self.cls, name))
        if name == "__members__" and issubclass(self.cls, enum.Enum):
            return wrap(tx, dict(self.cls.__members__), None)
        if not found:
            raise Unsupported(f"attribute {name!r} of class {self.cls.__qualname__}")
        if python_descriptor(member):
            # A descriptor written in Python (a lazy property): guarded as the class's own dict
            # holds it (`getattr` on the class would call it), and asked for real what it is
            # on the class (a lazy property makes a new object each time)
            where = self.source and _class_dict_entry(self.source, self.cls, name)
            descriptor = wrap(tx, member, where)
            if where is not None:  # its `__get__` too: replaced, the answer on the class changes
                tx.output.add_guard(Identity.of(AttrSource(TypeSource(where), "__get__"),
                                                type(member).__get__))
            on_class = getattr(self.cls, name)
            return descriptor if on_class is member else wrap(tx, on_class, None)
        return wrap(tx, getattr(self.cls, name), self._attr_source(name))

    def items(self, tx: Translator) -> list[VariableTracker]:
        if issubclass(self.cls, enum.Enum):  # `for c in Color`: members fixed with the class
            return [ConstantVariable(member) for member in self.cls]
        return super().items(tx)

    def _attr_source(self, name: str) -> Any:
        """Where `cls.name` is read (guards read it as the code did: a member replaced on the
        class, or on a base class, or shadowed by a subclass later, fails them)."""
        return AttrSource(self.source, name) if self.source is not None else None

    def call(self, tx: Translator, args, kwargs) -> VariableTracker:
        from dynamo.variables.containers import NamedTupleVariable

        cls = self.cls
        if issubclass(cls, tuple) and hasattr(cls, "_fields"):
            if _own_constructor(cls):
                raise Unsupported(f"{cls.__qualname__}(): a named tuple class whose own "
                                  "__new__ or __init__ is not traced")
            return NamedTupleVariable(_named_tuple_items(cls, args, kwargs), cls,
                                      tuple(cls._fields), class_source=self.source)
        if cls is functools.partial:
            from dynamo.variables.builtins import BuiltinVariable

            if not args or not BuiltinVariable(callable).call(tx, [args[0]], {}).as_constant():
                message = ("type 'partial' takes at least one argument" if not args
                           else "the first argument must be callable")  # (Python's words)
                raise python_error(TypeError(message))
            inner = args[0]
            if isinstance(inner, PartialVariable) and inner.flattens:
                # a partial of a partial (with no `__dict__`) is flattened, as Python makes it
                # (`.func`, `.args` and `.keywords` are read)
                return PartialVariable(inner.fn, [*inner.args, *args[1:]],
                                       {**inner.kwargs, **kwargs})
            return PartialVariable(args[0], list(args[1:]), dict(kwargs))
        if cls is types.MethodType and len(args) == 2 and not kwargs and not is_none(args[1]) \
                and isinstance(args[0], _USER_CALLABLES):
            # a function bound by hand (`contextlib.ExitStack.enter_context` binds `__exit__`)
            return UserMethodVariable(args[0], args[1])
        if cls is collections.deque:
            iterable, maxlen = (*args, None, None)[:2] if args else (kwargs.get("iterable"),
                                                                     kwargs.get("maxlen"))
            maxlen = kwargs.get("maxlen", maxlen)
            return DequeVariable(iterable.items(tx) if iterable is not None else [],
                                 maxlen=None if maxlen is None else maxlen.as_constant())
        if cls in (collections.OrderedDict, collections.defaultdict):
            from dynamo.variables.builtins import BuiltinVariable

            factory = None
            if cls is collections.defaultdict:
                factory, args = (args[0] if args and not is_none(args[0]) else None), args[1:]
            made = BuiltinVariable(dict).call(tx, list(args), kwargs)
            return DictVariable(made.entries, kind=cls, default_factory=factory)
        if cls is torch.Size:
            return SizeVariable(args[0].items(tx) if args else [])
        if issubclass(cls, enum.Enum) and len(args) == 1 and not kwargs and (
                args[0].is_constant() or isinstance(args[0], SymNodeVariable)):
            value = concrete_int(args[0])  # the member of that value (`Mode("train")`)
            try:
                return ConstantVariable(cls(value))
            except ValueError as error:
                raise Raised(error, f"{cls.__qualname__}({value!r}): {error} (a ValueError "
                             "while tracing)") from None
        if cls is torch.device and all(a.is_constant() for a in [*args, *kwargs.values()]):
            return ConstantVariable(torch.device(*[a.as_constant() for a in args],
                                                 **{k: v.as_constant() for k, v in kwargs.items()}))
        from dynamo.variables.builtins import BuiltinVariable

        if BuiltinVariable(cls).is_constant() and cls in (int, float, bool, str, list, tuple,
                                                            dict, set, range, slice, type,
                                                            enumerate, zip, map, reversed,
                                                            filter, super, frozenset):
            return BuiltinVariable(cls).call(tx, args, kwargs)
        from dynamo.variables.user_objects import NewObjectVariable, can_create

        if can_create(cls):
            return NewObjectVariable.create(tx, cls, self.source, args, kwargs)
        if issubclass(cls, torch.nn.Module):
            return _new_module(cls, args, kwargs)
        if issubclass(cls, BaseException):
            from dynamo.variables.builtins import make_exception

            return make_exception(cls, args, kwargs)
        raise Unsupported(f"creating an instance of {cls.__qualname__}")

    def __repr__(self) -> str:
        return f"UserClassVariable({self.cls.__qualname__})"


def function_apply(tx: Translator, cls: type, cls_source: Any,
                   source: Any = None) -> VariableTracker:
    """`apply` of a custom autograd.Function: a graph node (its forward runs on the fake values
    while tracing; the graph calls `apply`, so autograd records the custom backward), or, when
    its forward marks inputs dirty (writes them in place), a call made for real at a break.
    The functions that make its outputs (`forward`, `setup_context`) are guarded to stay the
    same: the outputs' metadata came from them, and a backend may compile the forward's ops
    (inductor_lite does, for inputs that need no grad)."""
    from dynamo.variables.functions import OpaqueFunctionVariable

    if cls_source is not None:
        for name in ("forward", "setup_context"):
            if isinstance(inspect.getattr_static(cls, name, None), staticmethod):
                # (`cls.forward` of a staticmethod is the same function at every read)
                tx.output.add_guard(Identity.of(AttrSource(cls_source, name),
                                                getattr(cls, name)))
    forward = inspect.getattr_static(cls, "forward", None)
    forward = getattr(forward, "__func__", forward)
    if isinstance(forward, types.FunctionType) and "mark_dirty" not in forward.__code__.co_names:
        return TorchFunctionVariable(graph_apply(cls), source)
    why = ("its forward marks an input dirty (writes it in place)"
           if isinstance(forward, types.FunctionType) else "its forward is not a Python function")
    return OpaqueFunctionVariable(cls.apply, source, what=f"a custom autograd.Function: {why}",
                                  name=f"{cls.__qualname__}.apply")


@functools.cache
def graph_apply(cls: type) -> Any:
    """`cls.apply` as a graph node's target: a function of our own, which the FX graph's code
    can name (it names `apply` itself after torch's module, where it cannot be found)."""
    def apply(*args: Any, **kwargs: Any) -> Any:
        return cls.apply(*args, **kwargs)

    apply.__name__ = apply.__qualname__ = f"{cls.__name__}_apply"
    apply.autograd_function = cls  # type: ignore[attr-defined]
    return apply


class PythonModuleVariable(TrueVariable):
    """A Python module (`math`, `torch.nn.functional`, a user's helper module)."""

    def __init__(self, module: types.ModuleType, source: Any = None) -> None:
        self.module = module
        self.source = source

    def python_type(self) -> type:
        return types.ModuleType

    def as_constant(self) -> Any:
        return self.module

    def getattr(self, tx: Translator, name: str) -> VariableTracker:
        from dynamo.variables.builder import wrap

        self._refuse_module_getattr(name)
        try:
            value = getattr(self.module, name)
        except AttributeError:
            raise Unsupported(f"module {self.module.__name__} has no attribute {name!r}") from None
        return wrap(tx, value, self._attr_source(name))

    def _refuse_module_getattr(self, name: str) -> None:
        """A graph break where the module's own `__getattr__` (PEP 562), a function of the
        user's, answers `name` (not in the module's dict nor on its class): it may compute a
        new value or warn at each read (a deprecated alias). Called while tracing and again by
        each guard check, it ran several times a call (a changing value failed the guard just
        made, and the frame ran eagerly after all those reads) and its warnings named dynamo's
        frames. Read for real, once, as eager does (torch's own lazy submodules aside)."""
        module_getattr = self.module.__dict__.get("__getattr__")
        if (isinstance(module_getattr, types.FunctionType) and name not in self.module.__dict__
                and inspect.getattr_static(type(self.module), name, MISSING) is MISSING
                and (_module_name(self.module) or "").partition(".")[0] not in _LIBRARIES
                and not _imported_submodule(self.module, name)):
            raise Unsupported(f"{self.module.__name__}.{name} is answered by the module's "
                              "__getattr__ (PEP 562), read for real")

    def _attr_source(self, name: str) -> Any:
        """Where `module.name` is read, so that it is guarded (`torch.sigmoid` or `math.pi`
        replaced after compiling). A library's module, or one the code imported itself, is
        read by its name in `sys.modules`: one guard per attribute, whatever path the code
        took to the module (`torch.nn.functional.gelu`, `F.gelu`, torch's own modules' `F`)."""
        named = _module_name(self.module)
        if named is not None and (self.source is None or named.partition(".")[0] in _LIBRARIES):
            return AttrSource(ModuleSource(named), name)
        return AttrSource(self.source, name) if self.source is not None else None

    def has_attribute(self, tx: Translator, name: str) -> bool:
        """`hasattr(module, name)`, guarded by the module's dict holding the name or not (an
        attribute its own `__getattr__` answers, a lazy submodule, is not in that dict)."""
        self._refuse_module_getattr(name)
        found = hasattr(self.module, name)
        where = self._attr_source("__dict__")
        if where is not None and (not found or name in self.module.__dict__):
            tx.output.add_guard(DictContains(where, name, found))
        if where is None or (found and name in self.module.__dict__):
            return found
        # A module `__getattr__` (PEP 562) and one of the module's class answer a name its dict
        # lacks: the answer stands while each is the same function (one added, replaced or
        # deleted later, the module's or its class's, changes it)
        cls = type(self.module)
        module_getattr = self.module.__dict__.get("__getattr__")
        if module_getattr is None:
            tx.output.add_guard(DictContains(where, "__getattr__", False))
        else:
            tx.output.add_guard(Identity.of(GetItemSource(where, "__getattr__"), module_getattr))
        if cls is not types.ModuleType:
            class_getattr = next((c.__dict__["__getattr__"] for c in cls.__mro__
                                  if "__getattr__" in c.__dict__), None)
            if class_getattr is None:
                tx.output.add_guard(ClassLacks(TypeSource(where.base), ("__getattr__",)))
            else:
                tx.output.add_guard(Identity.of(AttrSource(TypeSource(where.base), "__getattr__"),
                                                class_getattr))
            if not found:
                tx.output.add_guard(ClassLacks(TypeSource(where.base), (name,)))
            elif any(name in c.__dict__ for c in cls.__mro__[:-2]):  # its class's (not ModuleType's)
                tx.output.add_guard(DictContains(_class_dict(TypeSource(where.base), cls, name),
                                                 name, True))
        return found


# Modules whose attributes are read by the module's name (they are never replaced in
# `sys.modules`); any other module by the path the code took to it.
_LIBRARIES = ("torch", "math", "operator", "builtins")


def _imported_submodule(module: types.ModuleType, name: str) -> bool:
    """Whether `module.name` is a submodule of the package, not imported yet, that importing
    puts in its dict (a lazy submodule its `__getattr__` imports on first read: `np.ma`,
    `np.fft`, `np.random`): imported here, once, as that first read would, and then read as a
    plain attribute (a graph break there stayed in the compiled code for good)."""
    package = _module_name(module)
    if package is None or "__path__" not in vars(module):  # (not a package: no submodules)
        return False
    try:
        if importlib.util.find_spec(f"{package}.{name}") is None:
            return False
        # imported by the module's own `__getattr__`, as the first read does: one that does
        # not import it (it raises AttributeError) leaves it out (importing it here made
        # `hasattr(pkg, "sub")` True where eager's is False, and ran the submodule's code)
        module.__dict__["__getattr__"](name)
    except Exception:  # (not a submodule, or one whose import fails: read for real)
        return False
    return module.__dict__.get(name) is sys.modules.get(f"{package}.{name}")


def _group_by_device_and_dtype(tx: Translator, args: list, kwargs: dict) -> Any:
    """`torch._C._group_tensors_by_device_and_dtype(tensorlistlist, with_indices)` (the
    foreach grouping of `clip_grad_norm_`, `clip_grad_value_`): answered from the tensors'
    devices and dtypes, which their guards fix, as a dict of the same trackers (a graph node
    cannot return a dict: the clipping broke the graph). None where the lists are not known."""
    from dynamo.variables.containers import DictVariable, ListVariable, SequenceVariable

    lists = args[0] if args else kwargs.get("tensorlistlist")
    flag = args[1] if len(args) > 1 else kwargs.get("with_indices", ConstantVariable(False))
    if not isinstance(lists, SequenceVariable) or not flag.is_constant() or not all(
            isinstance(inner, SequenceVariable) for inner in lists.values):
        return None
    trackers: dict[int, VariableTracker] = {}
    examples = []
    for inner in lists.values:
        row = []
        for item in inner.values:
            if isinstance(item, TensorVariable):
                trackers[id(item.fake)] = item
                row.append(item.fake)
            elif is_none(item):
                row.append(None)
            else:
                return None
        examples.append(row)
    grouped = torch._C._group_tensors_by_device_and_dtype(examples, bool(flag.as_constant()))

    def back(t: Any) -> VariableTracker:
        return ConstantVariable(None) if t is None else trackers[id(t)]

    return DictVariable({key: TupleVariable([
        ListVariable([ListVariable([back(t) for t in row]) for row in rows]),
        ListVariable([ConstantVariable(i) for i in indices])])
        for key, (rows, indices) in grouped.items()})


def _needs_weights(args: list, kwargs: dict) -> bool:
    """`need_weights` of a `torch._native_multi_head_attention` call (True by default)."""
    flag = args[10] if len(args) > 10 else kwargs.get("need_weights")
    return flag is None or not flag.is_constant() or bool(flag.as_constant())


class _Argument:
    """Stands in for a traced argument in a call that only binds it to a parameter."""

    __slots__ = ("variable",)

    def __init__(self, variable: VariableTracker) -> None:
        self.variable = variable


def _named_tuple_items(cls: type, args: list[VariableTracker],
                       kwargs: dict[str, VariableTracker]) -> list[VariableTracker]:
    """The items of `cls(*args, **kwargs)`, a class `collections.namedtuple` made: the
    `__new__` it generated binds stand-ins for the arguments, so a missing, unknown or repeated
    field raises Python's own TypeError, and a field left out takes its default."""
    with raised_by_python(f"{cls.__qualname__}()"):
        bound = cls.__new__(cls, *map(_Argument, args),
                            **{name: _Argument(v) for name, v in kwargs.items()})
    return [item.variable if isinstance(item, _Argument) else ConstantVariable(item)
            for item in bound]


def _own_constructor(cls: type) -> bool:
    """Whether a class between the named tuple class `collections.namedtuple` made and `cls`
    (a subclass: `PackedSequence`) defines `__new__` or `__init__`: calling `cls` runs it (and
    a tuple class with `_fields` that `collections.namedtuple` did not make has its own)."""
    for k in cls.__mro__:
        if "_make" in k.__dict__ and "_fields" in k.__dict__:  # namedtuple's own class
            return False
        if "__new__" in k.__dict__ or "__init__" in k.__dict__:
            return True
    return True


# A callable handed to torch.nn's Python (a user's function, or torch's own): the function is
# followed so that the callable is called in the trace (as a node's argument it was a break)
_USER_CALLABLES = (UserFunctionVariable, NestedFunctionVariable, UserMethodVariable,
                   PartialVariable)


def _takes_functions(fn: types.FunctionType) -> bool:
    """Whether `fn` is torch.nn's Python, which calls the functions it is given as plain
    Python (`triplet_margin_with_distance_loss(distance_function=f)`); torch.func's
    transforms (`vmap`, `grad`) run them under functorch's interpreters, which the trace
    cannot follow: they break the graph."""
    return (fn.__module__ or "").startswith("torch.nn.")


class TorchFunctionVariable(TrueVariable):
    """A function of torch (or one marked `allow_in_graph`): a call becomes a graph node."""

    def __init__(self, fn: Any, source: Any = None) -> None:
        self.fn = fn
        self.source = source

    def python_type(self) -> type:
        return type(self.fn)

    def as_constant(self) -> Any:
        return self.fn

    def getattr(self, tx: Translator, name: str) -> VariableTracker:
        value = getattr(self.fn, name)
        if isinstance(self.fn, torch._ops.OpOverloadPacket) and isinstance(
                value, torch._ops.OpOverload):  # `torch.ops.aten.add.Tensor`: a graph op too
            source = AttrSource(self.source, name) if self.source is not None else None
            return TorchFunctionVariable(value, source)
        return ConstantVariable(value)

    def call(self, tx: Translator, args, kwargs) -> VariableTracker:
        fn = self.fn
        # Known by the function it wraps, if any: importing torch.compile's frontend (which
        # torch itself may do lazily) replaces `torch.manual_seed` with a wrapper.
        original = inspect.unwrap(fn)
        if fn in GRAD_MODES:
            return GradModeVariable.create(tx, fn, args)
        if isinstance(fn, type) and issubclass(fn, tuple(CONTEXTS.values())):
            context = StateContextVariable.create(fn, args, kwargs)
            self._guard_default_autocast_dtype(tx, fn, args, kwargs, context)
            return context
        if original in _STATE_QUERIES or original in _FIXED_QUERIES:
            # the state at the frame's start is guarded (GlobalState), or cannot change
            return ConstantVariable(fn(*[a.as_constant() for a in args],
                                       **{k: v.as_constant() for k, v in kwargs.items()}))
        if original in _BLOCK_QUERIES:
            return self._block_query(tx, original, args, kwargs)
        if original in _DISPATCH_MODE_QUERIES:  # nn.MultiheadAttention's fast-path check
            if torch._C._len_torch_dispatch_stack():
                raise Unsupported(f"{_name(fn)}() under a TorchDispatchMode")
            # none: the global-state guard keeps it so
            return ListVariable([]) if type(fn()) is list else ConstantVariable(fn())
        if original in _COMPILING_QUERIES:  # libraries take their compile-friendly paths
            return ConstantVariable(True)
        if original in _UNSUPPORTED_TORCH:
            raise Unsupported(f"{_name(fn)}() inside a compiled frame")
        if original in _WRONG_DECOMPOSITIONS:
            raise Unsupported(f"{_name(fn)}(): torch's decomposition of it, which the fakes and "
                              f"a backend's aten graph run, {_WRONG_DECOMPOSITIONS[original]}; "
                              "it runs for real")
        if _sets_global_state(original):
            raise Unsupported(f"{_name(fn)}() (it changes torch's global state)")
        if _functorch_machinery(original):
            raise Unsupported(f"torch._C._functorch.{original.__name__}() (torch.func's "
                              "machinery: a transform's levels "
                              "and wrapped tensors are made for real, never while tracing)")
        if fn in _CONSTANT_FOLDABLE and all(a.is_constant() for a in [*args, *kwargs.values()]):
            return ConstantVariable(fn(*[a.as_constant() for a in args],
                                       **{k: v.as_constant() for k, v in kwargs.items()}))
        from dynamo.variables.containers import NamedTupleVariable
        from dynamo.variables.user_objects import UserObjectVariable

        if isinstance(fn, types.FunctionType) and (
                fn.__code__.co_filename == TORCH_DISABLED
                or getattr(original, "__module__", None) in _READS_GRADS or any(
                isinstance(a, IteratorVariable | NNModuleVariable | UserObjectVariable)
                # a named tuple (a PackedSequence): a node's argument is a plain tuple, whose
                # fields `pad_packed_sequence` could not read
                or isinstance(a, NamedTupleVariable) and hasattr(a.kind, "_fields")
                or isinstance(a, (TorchFunctionVariable, *_USER_CALLABLES))
                and _takes_functions(fn) for a in [*args, *kwargs.values()])):
            # torch's Python taking what a graph node cannot (`clip_grad_norm_(m.parameters())`,
            # a user's function: `F.triplet_margin_with_distance_loss(distance_function=...)`),
            # or reading the `.grad` of the tensors it is given (a node would hide those reads
            # from the graph: lowered on fakes, they become fake constants): followed like the
            # user's code (a function torch keeps out of graphs, such as `checkpoint`, then
            # breaks the graph)
            return UserFunctionVariable(fn, self.source).call(tx, args, kwargs)
        if isinstance(fn, types.MethodType) and fn.__name__ in ("__enter__", "__exit__"):
            # a block of torch's handed on at a break (`saved_tensors_hooks`): as a node it
            # ran while tracing and was dropped as unused
            raise Unsupported(f"{_name(fn)}() of a torch context manager from the frame")
        if original in _RNN_OPS and not kwargs and len(args) == 9:
            packed = _dropout_between_layers(args)
            if packed is not None:  # see polyfills.rnn_by_layer
                from dynamo.polyfills import rnn_by_layer

                return UserFunctionVariable(rnn_by_layer).call(
                    tx, [self, ConstantVariable(original is torch.lstm), ConstantVariable(packed),
                         *args], {})
        if original is torch._C._group_tensors_by_device_and_dtype:
            grouped = _group_by_device_and_dtype(tx, args, kwargs)
            if grouped is not None:
                return grouped
        if original is torch._C._infer_size and len(args) == 2 and not kwargs and all(
                isinstance(a, SizeVariable) for a in args):
            # (C++ takes only a torch.Size, which a graph node's argument cannot be: the
            # sizes are broadcast in Python, as `torch.broadcast_shapes`, symbols and all;
            # anything else, a list or an int, eager refuses: "expected a torch.Size")
            return UserFunctionVariable(torch.broadcast_shapes).call(tx, args, {})
        try:
            result = tx.output.call_function(fn, args, kwargs)
        except NotAGraphValue:
            if not isinstance(fn, types.FunctionType):
                raise
            # torch's Python returning what a graph cannot hold (GradScaler's state factory
            # returns a dict): followed like the user's code
            return UserFunctionVariable(fn, self.source).call(tx, args, kwargs)
        if original is torch._native_multi_head_attention and not _needs_weights(args, kwargs):
            # MultiheadAttention's inference fast path without weights: the kernel returns
            # None for them, the meta function an empty tensor
            return TupleVariable([result.values[0], ConstantVariable(None)])
        if original in _SDPA_CALLS:
            # the kernel eager runs is chosen by these flags as it runs (`sdpa_kernel`); a
            # backend that traces the graph at the dispatcher bakes the kernel chosen now
            # (aot_eager, inductor_lite: the flash kernel ran where eager ran the math one,
            # or ran where eager raises "no available kernel")
            for query in _SDPA_SETTINGS:
                self._guard_answer(tx, query, (), query())
        answer = _query_answer(result)
        if answer is not None and not kwargs and (not args or _getter(fn) and all(
                a.is_constant() and type(a.as_constant()) is str for a in args)):
            # A query of global state (`torch.get_num_threads()`, `torch.initial_seed()`,
            # `torch.is_anomaly_enabled()`, a pair of flags, a setting named by strings:
            # `_get_fp32_precision_getter("cuda", "matmul")`): asked again by the guard on
            # every call
            self._guard_answer(tx, fn, tuple(a.as_constant() for a in args), answer)
        return result

    def _guard_answer(self, tx: Translator, fn: Any, args: tuple, answer: Any) -> None:
        """Guard that `fn(*args)` still answers `answer`: the call is made by each check (a
        graph break when the function cannot be named for it)."""
        if not all(type(a) in (str, int, bool) or a is None for a in args):
            raise Unsupported(f"{_name(fn)}() of arguments a guard cannot repeat")
        named = _module_source(fn)
        where = named or (self.source if fn is self.fn else None)
        if where is None:
            raise Unsupported(f"{_name(fn)}(): a query of global state reached through no "
                              "source (its answer could not be guarded)")
        tx.output.add_guard(Equals(CallSource(where, args), answer))

    def _guard_default_autocast_dtype(self, tx: Translator, cls: type, args, kwargs,
                                      context: StateContextVariable) -> None:
        """`torch.autocast("cpu")` without a dtype takes the device's autocast dtype now
        (`torch.set_autocast_dtype`, or the block around it): guard it at the frame's start
        unless an autocast block open in the trace decides it."""
        mode = context.mode
        if context.kind != "autocast" or not mode._enabled:
            return
        try:  # a subclass's default (torch.cpu.amp.autocast's bfloat16) is explicit too
            bound = inspect.signature(cls).bind(*args, **kwargs)
            bound.apply_defaults()
            dtype = bound.arguments.get("dtype")
        except (TypeError, ValueError):
            dtype = None
        if dtype is not None and not (isinstance(dtype, VariableTracker) and is_none(dtype)):
            return  # given
        if any(isinstance(m, AUTOCAST) for m, _ in tx.output.entered_contexts):
            return
        self._guard_answer(tx, torch.get_autocast_dtype, (mode.device,), mode.fast_dtype)

    def _block_query(self, tx: Translator, original: Any, args, kwargs) -> VariableTracker:
        """A query of the autocast or inference-mode state: answered as the trace has switched
        it; the answer at the frame's start is guarded unless a block of that kind is open in
        the trace (the block then decides it)."""
        block, asked, fixed = _BLOCK_QUERIES[original]
        values = [a.as_constant() for a in args]
        answer = original(*values, **{k: v.as_constant() for k, v in kwargs.items()})
        if not any(isinstance(mode, block) for mode, _ in tx.output.entered_contexts):
            if kwargs:
                raise Unsupported(f"{_name(original)}() with keyword arguments")
            self._guard_answer(tx, asked, tuple(values) if fixed is None else fixed, answer)
        return ConstantVariable(answer)

    def __repr__(self) -> str:
        return f"TorchFunctionVariable({_name(self.fn)})"


def _getter(fn: Any) -> bool:
    """Named as a query: with arguments, a setter may answer too (the backend it chose), and a
    guard repeating the call would set it again on every check."""
    return getattr(fn, "__name__", "").lstrip("_").startswith(("get", "is_"))


def _query_answer(result: VariableTracker) -> Any:
    """The answer of a call that returned a constant or a tuple of constants, else None."""
    if isinstance(result, ConstantVariable):
        return result.as_constant()
    if type(result) is TupleVariable and all(
            isinstance(v, ConstantVariable) and not is_none(v) for v in result.values):
        return tuple(v.as_constant() for v in result.values)
    return None


_RNN_OPS = (torch.lstm, torch.gru, torch.rnn_tanh, torch.rnn_relu)
# scaled-dot-product attention, whose kernel the flags below choose when it runs
_SDPA_CALLS = (torch.nn.functional.scaled_dot_product_attention,
               torch.nn.functional.multi_head_attention_forward)
_SDPA_SETTINGS = tuple(getattr(torch._C, name) for name in (
    "_get_flash_sdp_enabled", "_get_mem_efficient_sdp_enabled", "_get_math_sdp_enabled",
    "_get_cudnn_sdp_enabled", "_get_overrideable_sdp_enabled", "_get_fa3_sdp_enabled",
    "_get_math_sdp_allow_fp16_bf16_reduction") if hasattr(torch._C, name))


def _dropout_between_layers(args: list) -> bool | None:
    """For the arguments of an RNN op of several layers with dropout in training (to be
    traced a layer at a time): whether they are the packed overload's (`data, batch_sizes, hx,
    params, ...`) rather than the padded one's (`input, hx, params, has_biases, ...`). None
    for any other call."""
    has_biases = args[3]
    packed = not (has_biases.is_constant() and type(has_biases.as_constant()) is bool)
    num_layers, dropout, train = args[5:8] if packed else args[4:7]
    if isinstance(dropout, SymNodeVariable) and all(v.is_constant() for v in (num_layers, train)) \
            and train.as_constant() and num_layers.as_constant() > 1:
        # a dropout that changed between calls (a float made a symbol): the op's C++ schema
        # takes a plain float, so its value is pinned anyway (a guard); pinned here, before
        # choosing, or the single op's Python decomposition (aot_eager, inductor_lite) drops
        # the dropout between layers
        dropout = args[6 if packed else 5] = ConstantVariable(dropout.as_python())
    if not all(v.is_constant() for v in (num_layers, dropout, train)):
        return None
    if not (train.as_constant() and dropout.as_constant() != 0 and num_layers.as_constant() > 1):
        return None
    return packed


def _name(fn: Any) -> str:
    qualname = getattr(fn, "__qualname__", fn)
    if isinstance(fn, types.BuiltinFunctionType) and \
            type(fn.__self__).__module__ == "pybind11_builtins":
        qualname = fn.__name__  # (not the qualified name of pybind11's function record)
    return f"{getattr(fn, '__module__', '') or ''}.{qualname}".lstrip(".")


# Modules of torch's Python functions that read the `.grad` of the parameters they are given
_READS_GRADS = ("torch.nn.utils.clip_grad",)
_STATE_QUERIES = (torch.is_grad_enabled, torch.get_default_dtype,
                  torch.are_deterministic_algorithms_enabled, torch.is_autocast_enabled,
                  torch.is_autocast_cpu_enabled, torch._C._is_any_autocast_enabled)
# Queries whose answer cannot change while compiled code runs (no tracer of torch's runs it,
# the hardware stays): constants, as torch.compile answers them
_FIXED_QUERIES = (torch.jit.is_scripting, torch.jit.is_tracing, torch._C._get_tracing_state,
                  torch.fx._symbolic_trace.is_fx_tracing, torch.compiler.is_exporting,
                  torch.cuda.is_available, torch.cuda.device_count,
                  torch.distributed.is_available, torch.backends.cudnn.is_available,
                  torch.backends.mps.is_available, torch.backends.mkldnn.is_available)
# Queries of what autocast and inference-mode blocks switch: (the block, the function the guard
# calls and its arguments, None for the code's own)
_BLOCK_QUERIES: dict[Any, tuple[type, Any, tuple | None]] = {
    torch.is_inference_mode_enabled: (torch.inference_mode, torch.is_inference_mode_enabled, ()),
    torch.is_autocast_cache_enabled: (AUTOCAST, torch.is_autocast_cache_enabled, ()),
    torch.get_autocast_dtype: (AUTOCAST, torch.get_autocast_dtype, None),
    torch.get_autocast_cpu_dtype: (AUTOCAST, torch.get_autocast_dtype, ("cpu",)),
    torch.get_autocast_gpu_dtype: (AUTOCAST, torch.get_autocast_dtype, ("cuda",)),
}
_DISPATCH_MODE_QUERIES = (torch.utils._python_dispatch._get_current_dispatch_mode,
                          torch.utils._python_dispatch._get_current_dispatch_mode_stack,
                          torch._C._len_torch_dispatch_stack)
_COMPILING_QUERIES = (torch.compiler.is_compiling, torch.compiler.is_dynamo_compiling,
                      torch._utils.is_compiling)


# Ops whose torch decomposition (the Autograd kernel under the Python dispatcher, which a
# ShapeEnv switches on) is wrong, in this torch, for inputs that are not rare
_WRONG_DECOMPOSITIONS = dict.fromkeys(
    (torch._C._nn.multilabel_margin_loss, torch.nn.functional.multilabel_margin_loss),
    "counts a target row's slots after its first -1 (the usual padding) and gives an unbatched "
    "'none' loss of size (1,) (pytorch/pytorch#185464)")

_UNSUPPORTED_TORCH = (torch.random.manual_seed, torch.random.seed, torch.set_default_dtype,
                      torch.use_deterministic_algorithms,
                      torch.autograd.grad, torch.autograd.backward,
                      # a copy of the generator's state now: no op, so a backend's trace would
                      # make it a constant of the graph (the state when it was compiled)
                      torch.random.get_rng_state, torch.cuda.get_rng_state,
                      torch.cuda.get_rng_state_all)
_STATE_SETTERS = (torch.autocast_increment_nesting, torch.autocast_decrement_nesting,
                  torch.clear_autocast_cache,
                  # `saved_tensors_hooks`' stack: a pop run while tracing took the hooks off
                  torch._C._autograd._push_saved_tensors_default_hooks,
                  torch._C._autograd._pop_saved_tensors_default_hooks,
                  torch._C._autograd._saved_tensors_hooks_disable,
                  torch._C._autograd._saved_tensors_hooks_enable,
                  # forward AD's levels (`dual_level`): as a query, its guard entered one
                  torch.autograd.forward_ad.enter_dual_level,
                  torch.autograd.forward_ad.exit_dual_level)


def _module_name(module: Any) -> str | None:
    """The name `sys.modules` holds `module` under, or None."""
    named = getattr(module, "__name__", None)
    return named if isinstance(named, str) and sys.modules.get(named) is module else None


def _module_source(fn: Any) -> Any:
    """`fn` by its module's name and its own (`sys.modules['torch._C'].get_num_threads`), or
    None when it cannot be found there."""
    owner = getattr(fn, "__self__", None)
    module = owner if isinstance(owner, types.ModuleType) else \
        sys.modules.get(getattr(fn, "__module__", None) or "")
    name = getattr(fn, "__name__", None)
    named = _module_name(module)
    if isinstance(name, str) and named is not None and getattr(module, name, None) is fn:
        return AttrSource(ModuleSource(named), name)
    return None


def _sets_global_state(fn: Any) -> bool:
    """A torch function that switches a global setting (`torch.set_autocast_enabled`,
    `torch.set_num_threads`, ...): made for real at a graph break, never during the trace."""
    name = getattr(fn, "__name__", "")
    return (fn in _STATE_SETTERS or name.startswith("set_") or name.startswith("_set_")) \
        and fn is not torch._C._set_grad_enabled \
        and not isinstance(fn, type | torch._ops.OpOverload | torch._ops.OpOverloadPacket)


def _functorch_machinery(fn: Any) -> bool:
    """A function of functorch's C module other than a query of a tensor (`is_batchedtensor`):
    it pushes or pops a transform's level (`_func_increment_nesting`, inlined from
    `functionalize`'s wrapper), wraps or unwraps tensors for one, or sets its switches. Run
    while tracing, on fakes, it changed the real interpreter stack, and a trace that then
    broke never popped it: every later call looked as if under a transform."""
    return getattr(fn, "__module__", None) == "torch._C._functorch" and \
        not getattr(fn, "__name__", "").startswith("is_")


_CONSTANT_FOLDABLE = (torch.finfo, torch.iinfo, torch.promote_types, torch.is_tensor,
                      torch.is_floating_point, torch.is_complex, torch.device, torch.dtype)


class IntrospectionVariable(VariableTracker):
    """`dataclasses.fields`, `dataclasses.is_dataclass` or `inspect.signature`: answered while
    tracing, from the argument's class or from the function itself (the guards on where the
    class or function came from pin the answer)."""

    def __init__(self, fn: Any) -> None:
        self.fn = fn

    def call(self, tx: Translator, args, kwargs) -> VariableTracker:
        target = args[0]
        if self.fn is inspect.signature:
            return ConstantVariable(_signature(target))
        cls = target.as_constant() if isinstance(target, UserClassVariable) else \
            target.python_type()
        return ConstantVariable(self.fn(cls))


def _signature(fn: VariableTracker) -> inspect.Signature:
    if isinstance(fn, UserFunctionVariable):
        return inspect.signature(fn.fn)
    if isinstance(fn, UserMethodVariable) and isinstance(fn.function, UserFunctionVariable):
        unbound = inspect.signature(fn.function.fn)
        return unbound.replace(parameters=list(unbound.parameters.values())[1:])
    if isinstance(fn, NNModuleVariable):
        return inspect.signature(fn.value)
    raise Unsupported(f"inspect.signature() of {fn}")


INTROSPECTION = (dataclasses.fields, dataclasses.is_dataclass, inspect.signature)


class SuperVariable(VariableTracker):
    """`super()` inside an inlined method: attribute reads skip past `cls` in the MRO.

    A member found is read, for guards, where Python found it (`type(L['o']).__mro__[1]
    .__dict__['g']`), and the classes skipped on the way are guarded to still lack it: a base
    class's method replaced after compiling fails the guard. Not for modules (as for their
    methods read through the instance: a guard per layer on every call)."""

    def __init__(self, cls: type, obj: VariableTracker) -> None:
        self.cls = cls
        self.obj = obj

    @staticmethod
    def checked(cls: Any, obj: VariableTracker) -> SuperVariable:
        """`super(cls, obj)` written out, refused as Python refuses it (its TypeError, raised
        in the trace): `cls` not a class, or `obj` neither an instance nor a subclass of it."""
        if not isinstance(cls, type):
            message = f"super() argument 1 must be a type, not {type(cls).__name__}"
            raise python_error(TypeError(message))
        value = obj.as_constant() if obj.is_constant() else None
        kind = obj.python_type()
        if not (isinstance(value, type) and issubclass(value, cls) or issubclass(kind, cls)):
            if inspect.getattr_static(kind, "__class__") is not object.__dict__["__class__"]:
                raise Unsupported(f"super() of a {kind.__qualname__}, whose __class__ is its own")
            message = "super(type, obj): obj must be an instance or subtype of type"
            raise python_error(TypeError(message))
        return SuperVariable(cls, obj)

    def getattr(self, tx: Translator, name: str) -> VariableTracker:
        from dynamo.variables.builder import wrap

        if name == "__class__":  # the super object's own
            return UserClassVariable(super)
        obj = self.obj
        of_class = isinstance(obj, UserClassVariable)  # `super()` in a classmethod
        mro = (obj.cls if of_class else obj.python_type()).__mro__
        if self.cls not in mro:
            raise Unsupported(f"super({self.cls.__qualname__}, obj): obj is not an instance or "
                              "subclass of it")
        first = mro.index(self.cls) + 1
        found = next((i for i in range(first, len(mro)) if name in mro[i].__dict__), None)
        if found is None:
            raise Unsupported(f"super() has no attribute {name!r}")
        member = mro[found].__dict__[name]
        where = self._dict_entry(tx, name, first, found)
        if isinstance(member, types.FunctionType):  # a method, or a plain function on a class
            if where is not None:
                tx.output.add_guard(Identity.of(where, member))
            function = UserFunctionVariable(member, where)
            return function if of_class else UserMethodVariable(function, obj)
        if isinstance(member, staticmethod):
            return wrap(tx, member.__func__, where and AttrSource(where, "__func__"))
        if isinstance(member, classmethod):
            from dynamo.variables.user_objects import class_of

            return UserMethodVariable(wrap(tx, member.__func__, where and AttrSource(
                where, "__func__")), obj if of_class else class_of(obj))
        if isinstance(member, property) and member.fget is not None and not of_class:
            return wrap(tx, member.fget, where and AttrSource(where, "fget")).call(
                tx, [obj], {})
        method = BaseMethodVariable.of(member, None if of_class else obj)
        if method is not None:
            if where is not None:
                tx.output.add_guard(Identity.of(where, member))
            return method
        if inspect.isroutine(member):
            raise Unsupported(f"super().{name} (a builtin method)")
        if hasattr(type(member), "__get__"):
            raise Unsupported(f"super().{name} (a descriptor)")
        return wrap(tx, member, where)

    def _dict_entry(self, tx: Translator, name: str, first: int, found: int) -> Any:
        """The source of `__mro__[found].__dict__[name]` of the object's class, with guards
        that the classes from `first` on, before it, still lack `name`; None for an object
        whose class has no source (or a module)."""
        obj = self.obj
        if isinstance(obj, UserClassVariable):
            mro = obj._attr_source("__mro__")
        else:
            mro = obj._member_source("__mro__") if isinstance(obj, ObjectVariable) else None
        if mro is None:
            return None
        for i in range(first, found):
            tx.output.add_guard(DictContains(AttrSource(GetItemSource(mro, i), "__dict__"), name,
                                             False))
        return GetItemSource(AttrSource(GetItemSource(mro, found), "__dict__"), name)
