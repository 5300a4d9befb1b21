"""Objects while tracing: nn.Modules, user objects and classes, Python modules, torch functions,
and grad-mode contexts.

Attribute reads on objects from the frame are answered from the real object and guarded on the
attribute's source: `self.scale` becomes a constant with a guard that it still equals 2.0,
`self.fc` a module tracker with a guard on its identity, `self.fc.weight` a graph input.
A module call inlines the module's `forward`. Functions from torch go into the graph as they
are (`torch.relu`, `F.linear`), called on the fake values to learn their results' metadata.
"""

from __future__ import annotations

import functools
import inspect
import types
from typing import TYPE_CHECKING, Any

import torch
from torch.nn.modules import module as nn_module

from dynamo.exc import Unsupported
from dynamo.side_effects import MISSING
from dynamo.variables.base import VariableTracker
from dynamo.variables.constant import ConstantVariable
from dynamo.variables.containers import ListVariable, SizeVariable, TupleVariable
from dynamo.variables.functions import (
    PartialVariable,
    UserFunctionVariable,
    UserMethodVariable,
)
from dynamo.variables.tensor import TensorVariable
from guards import (
    AttrSource,
    DictContains,
    Identity,
    Length,
    ModuleTraining,
    ParameterSource,
    SubmoduleSource,
    TypeSource,
)

if TYPE_CHECKING:
    from dynamo.interpreter import Translator


def _class_attribute(cls: type, name: str) -> tuple[bool, Any]:
    """(found, value) for `name` looked up on `cls`'s MRO without invoking descriptors."""
    for klass in cls.__mro__:
        if name in klass.__dict__:
            return True, klass.__dict__[name]
    return False, None


class ObjectVariable(VariableTracker):
    """Base of trackers for a real object from the frame (`value`, reached through `source`)."""

    def __init__(self, value: Any, source: Any = None) -> None:
        self.value = value
        self.source = source

    def python_type(self) -> type:
        return type(self.value)

    def _attr_source(self, name: str) -> Any:
        return AttrSource(self.source, name) if self.source is not None else None

    def _class_member(self, tx: Translator, name: str) -> VariableTracker:
        from dynamo.variables.builder import wrap

        found, member = _class_attribute(type(self.value), name)
        if not found:
            raise Unsupported(f"{type(self.value).__qualname__} has no attribute {name!r}")
        # Where the member is read, so that it (and its closure cells and defaults, when the
        # trace reads them) is guarded; not for modules: a guard per layer on every call.
        on_class = None
        if self.source is not None and not isinstance(self.value, torch.nn.Module):
            on_class = AttrSource(TypeSource(self.source), name)
        self._guard_class_member(tx, name, member, on_class)
        if isinstance(member, staticmethod):
            return wrap(tx, member.__func__, on_class)
        if isinstance(member, classmethod):
            return UserMethodVariable(wrap(tx, member.__func__, on_class and AttrSource(
                on_class, "__func__")), UserClassVariable(type(self.value)))
        if isinstance(member, property):
            return wrap(tx, member.fget, on_class and AttrSource(on_class, "fget")).call(
                tx, [self], {})
        if isinstance(member, types.FunctionType):  # a method, inlined even if torch's own
            return UserMethodVariable(UserFunctionVariable(member, on_class), self)
        if hasattr(member, "__get__") and not isinstance(member, (int, float, str, tuple)):
            raise Unsupported(f"the descriptor {type(self.value).__qualname__}.{name}")
        return wrap(tx, getattr(self.value, name), self._attr_source(name))

    def _guard_class_member(self, tx: Translator, name: str, member: Any,
                            on_class: Any) -> None:
        """What reading `name` from the class assumes: the class still holds this member (read
        at `on_class`), and no attribute of the instance shadows it (data descriptors cannot be
        shadowed). For modules (no `on_class`), as torch.compile does, only the shadowing is
        guarded: a guard per module call on its class's `forward` would cost every model a
        check per layer."""
        if self.source is None:
            return
        if on_class is not None:
            if isinstance(member, classmethod):  # each read makes a new bound method
                tx.output.add_guard(Identity.of(AttrSource(on_class, "__func__"),
                                                member.__func__))
            else:
                tx.output.add_guard(Identity.of(on_class, getattr(type(self.value), name)))
        if hasattr(self.value, "__dict__") and not hasattr(type(member), "__set__"):
            tx.output.add_guard(DictContains(AttrSource(self.source, "__dict__"), name, False))

    def has_attribute(self, tx: Translator, name: str) -> bool:
        """`hasattr`; an answer of no is guarded: the attribute may be added later."""
        if tx.output.side_effects.load("attr", self, name) is not MISSING:
            return True
        found = hasattr(self.value, name)
        if not found and self.source is not None:
            for where in self._instance_dicts():
                tx.output.add_guard(DictContains(AttrSource(self.source, where), name, False))
        return found

    def _instance_dicts(self) -> tuple[str, ...]:
        """Where an attribute set on the instance lands."""
        return ("__dict__",) if hasattr(self.value, "__dict__") else ()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({type(self.value).__qualname__})"


class UserObjectVariable(ObjectVariable):
    """An instance of a user class (a config, a dataclass, any object with attributes)."""

    def getattr(self, tx: Translator, name: str) -> VariableTracker:
        from dynamo.variables.builder import wrap

        cls = type(self.value)
        if name == "__class__":  # its type guard pins it
            return UserClassVariable(cls)
        if "__getattribute__" in vars(cls) or (
            "__getattr__" in dir(cls) and name not in getattr(self.value, "__dict__", {})
            and not _class_attribute(cls, name)[0]
        ):
            raise Unsupported(f"attribute {name!r} of {cls.__qualname__}, which customises "
                              "attribute access")
        written = tx.output.side_effects.load("attr", self, name)
        if written is not MISSING:
            return written
        instance = getattr(self.value, "__dict__", {})
        found, member = _class_attribute(cls, name)
        if found and hasattr(type(member), "__set__"):  # data descriptors come first
            return self._class_member(tx, name)
        if name in instance:
            return wrap(tx, instance[name], self._attr_source(name))
        return self._class_member(tx, name)

    def setattr(self, tx: Translator, name: str, value: VariableTracker) -> None:
        cls = type(self.value)
        found, member = _class_attribute(cls, name)
        if "__setattr__" in vars(cls) or (found and hasattr(type(member), "__set__")):
            raise Unsupported(f"setting {name!r} of a {cls.__qualname__}, which customises "
                              "attribute assignment")
        if not hasattr(self.value, "__dict__"):
            raise Unsupported(f"setting {name!r} of a {cls.__qualname__} (no __dict__)")
        tx.output.side_effects.store("attr", self, name, value)

    def call(self, tx: Translator, args, kwargs) -> VariableTracker:
        found, call = _class_attribute(type(self.value), "__call__")
        if found and isinstance(call, types.FunctionType):
            return self._class_member(tx, "__call__").call(tx, args, kwargs)
        raise Unsupported(f"calling a {type(self.value).__qualname__}")

    def truth(self, tx: Translator) -> bool:
        cls = type(self.value)
        if not (_class_attribute(cls, "__bool__")[0] or _class_attribute(cls, "__len__")[0]):
            return True
        raise Unsupported(f"the truth value of a {cls.__qualname__}")


class NNModuleVariable(ObjectVariable):
    """An nn.Module from the frame: its parameters are graph inputs, its calls are inlined."""

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
        if name in module.__dict__.get("_parameters", {}):
            value = module._parameters[name]
            return wrap(tx, value, ParameterSource(source, name) if source else None)
        if name in module.__dict__.get("_buffers", {}):
            value = module._buffers[name]
            return wrap(tx, value, ParameterSource(source, name, buffer=True) if source else None)
        if name in module.__dict__.get("_modules", {}):
            value = module._modules[name]
            return wrap(tx, value, SubmoduleSource(source, name) if source else None)
        found, member = _class_attribute(type(module), name)
        if found and hasattr(type(member), "__set__"):
            return self._class_member(tx, name)
        if name in module.__dict__:
            return wrap(tx, module.__dict__[name], self._attr_source(name))
        return self._class_member(tx, name)

    def _instance_dicts(self) -> tuple[str, ...]:
        return ("__dict__", "_parameters", "_buffers", "_modules")

    def setattr(self, tx: Translator, name: str, value: VariableTracker) -> None:
        module = self.value
        registers = isinstance(value, NNModuleVariable) or (
            isinstance(value, TensorVariable) and isinstance(value.fake, torch.nn.Parameter))
        if registers or name == "training" or name in module._parameters \
                or name in module._buffers or name in module._modules:
            raise Unsupported(f"assigning {type(module).__qualname__}.{name} (a parameter, "
                              "buffer, submodule or training flag)")
        tx.output.side_effects.store("attr", self, name, value)

    def _children(self, tx: Translator) -> list[tuple[str, VariableTracker]]:
        from dynamo.variables.builder import wrap

        modules = self.value._modules
        if self.source is not None:
            tx.output.add_guard(Length(AttrSource(self.source, "_modules"), len(modules)))
        return [(name, wrap(tx, m, SubmoduleSource(self.source, name) if self.source else None))
                for name, m in modules.items()]

    def items(self, tx: Translator) -> list[VariableTracker]:
        module = self.value
        if isinstance(module, torch.nn.ModuleDict):
            return [ConstantVariable(name) for name, _ in self._children(tx)]
        if isinstance(module, (torch.nn.ModuleList, torch.nn.Sequential)):
            return [child for _, child in self._children(tx)]
        if isinstance(module, (torch.nn.ParameterList,)):
            return [self.getattr(tx, name) for name in module._parameters]
        raise Unsupported(f"iterating over a {type(module).__qualname__}")

    def call_method(self, tx: Translator, name: str, args, kwargs) -> VariableTracker:
        module = self.value
        container = isinstance(module, (torch.nn.ModuleList, torch.nn.Sequential,
                                        torch.nn.ModuleDict, torch.nn.ParameterList))
        if container and name == "__len__":
            return ConstantVariable(len(self._children(tx)))
        if container and name == "__getitem__":
            key = args[0].as_constant()
            children = self._children(tx)
            if isinstance(module, torch.nn.ModuleDict):
                return dict(children)[key]
            if isinstance(key, slice):
                picked = [child for _, child in children[key]]
                if isinstance(module, torch.nn.Sequential):
                    return ModuleChainVariable(picked)
                return ListVariable(picked)
            return children[key][1]
        if isinstance(module, torch.nn.ModuleDict) and name in ("keys", "values", "items"):
            children = self._children(tx)
            if name == "keys":
                return TupleVariable([ConstantVariable(k) for k, _ in children])
            if name == "values":
                return TupleVariable([v for _, v in children])
            return TupleVariable([TupleVariable([ConstantVariable(k), v]) for k, v in children])
        if name in ("parameters", "named_parameters", "buffers", "children", "modules",
                    "named_modules", "named_children", "state_dict", "register_buffer",
                    "register_parameter", "add_module", "apply", "to", "cuda", "cpu", "train",
                    "eval", "zero_grad", "requires_grad_"):
            raise Unsupported(f"nn.Module.{name}() inside a compiled frame")
        return self.getattr(tx, name).call(tx, args, kwargs)

    def call(self, tx: Translator, args, kwargs) -> VariableTracker:
        from dynamo.variables.builder import wrap

        module = self.value
        hooks = ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks",
                 "_backward_pre_hooks")
        if any(getattr(module, h, None) or getattr(nn_module, f"_global{h}") for h in hooks):
            raise Unsupported(f"calling a {type(module).__qualname__} that has hooks, or while "
                              "global module hooks are registered (inside a compiled frame; "
                              "the outermost module's own hooks run eagerly)")
        if self.source is not None:
            for h in hooks[:2]:
                tx.output.add_guard(Length(AttrSource(self.source, h), 0))
        forward = module.__dict__.get("forward")
        if forward is not None:
            return wrap(tx, forward, self._attr_source("forward")).call(tx, args, kwargs)
        return self._class_member(tx, "forward").call(tx, args, kwargs)


class ModuleChainVariable(VariableTracker):
    """A slice of a Sequential (`self.seq[1:]`): its modules, called one after another."""

    def __init__(self, modules: list[VariableTracker]) -> None:
        self.modules = modules

    def python_type(self) -> type:
        return torch.nn.Sequential

    def items(self, tx: Translator) -> list[VariableTracker]:
        return list(self.modules)

    def call(self, tx: Translator, args, kwargs) -> VariableTracker:
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

    def python_type(self) -> type:
        return type(self.cls)

    def is_constant(self) -> bool:
        return True

    def as_constant(self) -> Any:
        return self.cls

    def getattr(self, tx: Translator, name: str) -> VariableTracker:
        from dynamo.variables.builder import wrap

        found, member = _class_attribute(self.cls, name)
        if issubclass(self.cls, torch.autograd.Function) and name == "apply":
            from dynamo.variables.functions import OpaqueFunctionVariable

            return OpaqueFunctionVariable(self.cls.apply)  # called for real, at a graph break
        if isinstance(member, (staticmethod, classmethod)):
            fn = wrap(tx, member.__func__, None)
            return UserMethodVariable(fn, self) if isinstance(member, classmethod) else fn
        if name in ("__name__", "__qualname__", "__module__"):
            return ConstantVariable(getattr(self.cls, name))
        if not found:
            raise Unsupported(f"attribute {name!r} of class {self.cls.__qualname__}")
        return wrap(tx, getattr(self.cls, name),
                    AttrSource(self.source, name) if self.source is not None else None)

    def call(self, tx: Translator, args, kwargs) -> VariableTracker:
        from dynamo.variables.containers import NamedTupleVariable

        cls = self.cls
        if issubclass(cls, tuple) and hasattr(cls, "_fields"):
            values = list(args) + [kwargs[f] for f in cls._fields[len(args):] if f in kwargs]
            if len(values) < len(cls._fields):
                defaults = getattr(cls, "_field_defaults", {})
                for f in cls._fields[len(values):]:
                    if f not in defaults:
                        raise Unsupported(f"{cls.__qualname__}() is missing field {f!r}")
                    values.append(ConstantVariable(defaults[f]))
            return NamedTupleVariable(values, cls, tuple(cls._fields))
        if cls is functools.partial:
            return PartialVariable(args[0], list(args[1:]), dict(kwargs))
        if cls is torch.Size:
            return SizeVariable(args[0].items(tx) if args else [])
        from dynamo.variables.builtins import BuiltinVariable

        if BuiltinVariable(cls).is_constant() and cls in (int, float, bool, str, list, tuple,
                                                            dict, set, range, slice, type,
                                                            enumerate, zip, map, reversed,
                                                            filter, super, frozenset):
            return BuiltinVariable(cls).call(tx, args, kwargs)
        raise Unsupported(f"creating an instance of {cls.__qualname__}")

    def __repr__(self) -> str:
        return f"UserClassVariable({self.cls.__qualname__})"


class PythonModuleVariable(VariableTracker):
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

        try:
            value = getattr(self.module, name)
        except AttributeError:
            raise Unsupported(f"module {self.module.__name__} has no attribute {name!r}") from None
        trusted = self.module.__name__.split(".")[0] in ("torch", "math", "operator", "builtins")
        source = None if trusted or self.source is None else AttrSource(self.source, name)
        return wrap(tx, value, source)


class TorchFunctionVariable(VariableTracker):
    """A function of torch (or one marked `allow_in_graph`): a call becomes a graph node."""

    def __init__(self, fn: Any, source: Any = None) -> None:
        self.fn = fn
        self.source = source

    def python_type(self) -> type:
        return type(self.fn)

    def as_constant(self) -> Any:
        return self.fn

    def getattr(self, tx: Translator, name: str) -> VariableTracker:
        return ConstantVariable(getattr(self.fn, name))

    def call(self, tx: Translator, args, kwargs) -> VariableTracker:
        fn = self.fn
        if fn in _GRAD_MODES:
            return GradModeVariable.create(tx, fn, args)
        if fn in _STATE_QUERIES:
            return ConstantVariable(fn())  # guarded by the global-state guard
        if fn in _UNSUPPORTED_TORCH:
            raise Unsupported(f"{_name(fn)}() inside a compiled frame")
        if fn in _CONSTANT_FOLDABLE and all(a.is_constant() for a in [*args, *kwargs.values()]):
            return ConstantVariable(fn(*[a.as_constant() for a in args],
                                       **{k: v.as_constant() for k, v in kwargs.items()}))
        return tx.output.call_function(fn, args, kwargs)

    def __repr__(self) -> str:
        return f"TorchFunctionVariable({_name(self.fn)})"


def _name(fn: Any) -> str:
    return f"{getattr(fn, '__module__', '') or ''}.{getattr(fn, '__qualname__', fn)}".lstrip(".")


_GRAD_MODES = (torch.no_grad, torch.enable_grad, torch.set_grad_enabled)
_STATE_QUERIES = (torch.is_grad_enabled, torch.get_default_dtype,
                  torch.are_deterministic_algorithms_enabled, torch.is_autocast_enabled)
_UNSUPPORTED_TORCH = (torch.manual_seed, torch.seed, torch.set_default_dtype,
                      torch.use_deterministic_algorithms, torch.autocast, torch.inference_mode,
                      torch.autograd.grad, torch.autograd.backward)
_CONSTANT_FOLDABLE = (torch.finfo, torch.iinfo, torch.promote_types, torch.is_tensor,
                      torch.is_floating_point, torch.is_complex, torch.device, torch.dtype)


class GradModeVariable(VariableTracker):
    """`torch.no_grad()`, `enable_grad()`, `set_grad_enabled(b)` as context managers.

    Entering switches grad mode both while tracing (so fake results get the right
    requires_grad) and in the graph (a `torch._C._set_grad_enabled` node); leaving restores it.
    `set_grad_enabled(b)` switches at creation, as it does in eager mode.
    """

    def __init__(self, target: bool, initial: bool, switches_at_creation: bool = False) -> None:
        self.target = target
        self.initial = initial
        self.switches_at_creation = switches_at_creation  # set_grad_enabled(b), not no_grad()

    @staticmethod
    def create(tx: Translator, fn: Any, args: list[VariableTracker]) -> GradModeVariable:
        if fn is torch.set_grad_enabled:
            target = bool(args[0].as_constant())
            ctx = GradModeVariable(target, torch.is_grad_enabled(), switches_at_creation=True)
            tx.output.set_grad_enabled(target)
            return ctx
        return GradModeVariable(fn is torch.enable_grad, torch.is_grad_enabled())

    def enter(self, tx: Translator) -> VariableTracker:
        tx.output.set_grad_enabled(self.target)
        return ConstantVariable(None)

    def exit(self, tx: Translator) -> VariableTracker:
        tx.output.set_grad_enabled(self.initial)
        return ConstantVariable(None)

    def call_method(self, tx: Translator, name: str, args, kwargs) -> VariableTracker:
        if name == "__enter__":
            return self.enter(tx)
        if name == "__exit__":
            return self.exit(tx)
        raise Unsupported(f"grad mode context .{name}()")


class ExitVariable(VariableTracker):
    """The `__exit__` of a grad-mode context, left on the stack by BEFORE_WITH."""

    def __init__(self, ctx: GradModeVariable) -> None:
        self.ctx = ctx

    def call(self, tx: Translator, args, kwargs) -> VariableTracker:
        return self.ctx.call_method(tx, "__exit__", [], {})


class GradModeExit:
    """A grad-mode block's `__exit__` outside the trace (handed to a resume function when a
    graph breaks inside the block): restores the grad mode the block was entered with."""

    def __init__(self, initial: bool) -> None:
        self.initial = initial

    def __call__(self, *exc_info: Any) -> bool:
        torch._C._set_grad_enabled(self.initial)
        return False  # exceptions propagate


class SuperVariable(VariableTracker):
    """`super()` inside an inlined method: attribute reads skip past `cls` in the MRO."""

    def __init__(self, cls: type, obj: VariableTracker) -> None:
        self.cls = cls
        self.obj = obj

    def getattr(self, tx: Translator, name: str) -> VariableTracker:
        from dynamo.variables.builder import wrap

        mro = self.obj.python_type().__mro__
        for klass in mro[mro.index(self.cls) + 1:]:
            if name in klass.__dict__:
                member = klass.__dict__[name]
                if isinstance(member, types.FunctionType):
                    return UserMethodVariable(UserFunctionVariable(member), self.obj)
                if isinstance(member, staticmethod):
                    return wrap(tx, member.__func__, None)
                if inspect.isroutine(member):
                    raise Unsupported(f"super().{name} (a builtin method)")
                return wrap(tx, member, None)
        raise Unsupported(f"super() has no attribute {name!r}")

