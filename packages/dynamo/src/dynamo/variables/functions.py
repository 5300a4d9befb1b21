"""Functions while tracing: user functions are inlined, bound methods dispatch to their owner.

Calling a user function (a global helper, a method of a module or object, a closure, a
lambda, a function defined inside the traced code) does not run it: a new Translator
interprets its bytecode with the argument trackers bound to its parameters, and its return
value's tracker comes back. Its closure cells and globals are read through sources, so guards
cover them like the frame's own.
"""

from __future__ import annotations

import inspect
import types
from typing import TYPE_CHECKING, Any

import torch._compile

from dynamo.exc import Raised, Unsupported
from dynamo.variables.base import VariableTracker
from dynamo.variables.constant import ConstantVariable, is_none
from dynamo.variables.containers import DictVariable, TupleVariable
from guards import AttrSource, ClosureCellSource, DefaultSource, DictContains

# torch's `_disable_dynamo` wraps functions in a closure defined in this file
_TORCH_DISABLED = torch._compile.__file__

if TYPE_CHECKING:
    from dynamo.interpreter import Translator


class Cell:
    """A closure cell created while tracing (a variable shared with a nested function)."""

    def __init__(self, contents: VariableTracker | None = None) -> None:
        self.contents = contents


def bind_arguments(tx: Translator, code: types.CodeType, name: str, defaults: tuple,
                   kwdefaults: dict, args: list[VariableTracker],
                   kwargs: dict[str, VariableTracker]) -> dict[str, VariableTracker]:
    """Parameters of `code` bound to argument trackers, as Python itself binds them."""
    stub = types.FunctionType(code, {}, name, defaults or None,
                              tuple(types.CellType() for _ in code.co_freevars) or None)
    stub.__kwdefaults__ = kwdefaults or None
    try:
        bound = inspect.signature(stub).bind(*args, **kwargs)
    except TypeError as error:
        raise Unsupported(f"calling {name}(): {error}") from None
    bound.apply_defaults()
    result: dict[str, VariableTracker] = {}
    for param in inspect.signature(stub).parameters.values():
        value = bound.arguments[param.name]
        if param.kind is param.VAR_POSITIONAL:
            value = TupleVariable(list(value))
        elif param.kind is param.VAR_KEYWORD:
            value = DictVariable(dict(value))
        name = param.name
        if name not in code.co_varnames and name.startswith("implicit"):
            name = "." + name[len("implicit"):]  # inspect's name for a comprehension's `.0`
        result[name] = value
    return result


class UserFunctionVariable(VariableTracker):
    """A Python function object that exists outside the trace."""

    def __init__(self, fn: types.FunctionType, source: Any = None) -> None:
        self.fn = fn
        self.source = source

    def python_type(self) -> type:
        return types.FunctionType

    def as_constant(self) -> Any:
        return self.fn

    def getattr(self, tx: Translator, name: str) -> VariableTracker:
        from dynamo.variables.builder import wrap

        if name in ("__name__", "__qualname__", "__module__", "__doc__"):
            return ConstantVariable(getattr(self.fn, name))
        if name == "__get__":  # `func.__get__(obj, cls)`: binds it, as a method
            return FunctionGetVariable(self)
        if not hasattr(self.fn, name):  # a function's own attributes live in its __dict__
            if self.source is not None:
                tx.output.add_guard(DictContains(AttrSource(self.source, "__dict__"), name,
                                                 False))
            raise Raised(AttributeError(name), f"function {self.fn.__qualname__} has no "
                         f"attribute {name!r} (an AttributeError while tracing)")
        return wrap(tx, getattr(self.fn, name), AttrSource(self.source, name)
                    if self.source else None)

    def call(self, tx: Translator, args, kwargs) -> VariableTracker:
        from dynamo.variables.builder import wrap

        fn = self.fn
        if getattr(fn, "_dynamo_disable", False):
            raise Unsupported(f"calling {fn.__qualname__}, marked dynamo.disable")
        if fn.__code__.co_filename == _TORCH_DISABLED:
            raise Unsupported(f"calling {fn.__qualname__}, which torch keeps out of compiled "
                              "graphs (torch._disable_dynamo)")
        src = self.source

        def default(key: int | str, value: Any) -> VariableTracker:
            return wrap(tx, value, DefaultSource(src, key) if src else None)

        defaults = tuple(default(i, v) for i, v in enumerate(fn.__defaults__ or ()))
        kwdefaults = {k: default(k, v) for k, v in (fn.__kwdefaults__ or {}).items()}
        bound = bind_arguments(tx, fn.__code__, fn.__qualname__, defaults, kwdefaults, args,
                               kwargs)
        cells = {
            name: ClosureCell(cell, ClosureCellSource(src, i) if src else None)
            for i, (name, cell) in enumerate(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
        }
        return tx.inline(fn.__code__, fn.__globals__, bound, cells, fn.__qualname__)

    def __repr__(self) -> str:
        return f"UserFunctionVariable({self.fn.__qualname__})"


class ClosureCell:
    """A cell of a real function's closure; its contents are read through a source."""

    def __init__(self, cell: types.CellType, source: Any) -> None:
        self.cell = cell
        self.source = source


class NestedFunctionVariable(VariableTracker):
    """A function created by the traced code itself (`def` or `lambda` inside it)."""

    def __init__(self, code: types.CodeType, f_globals: dict, name: str, defaults: tuple,
                 kwdefaults: dict, cells: dict[str, Any]) -> None:
        self.code = code
        self.f_globals = f_globals
        self.name = name
        self.defaults = defaults
        self.kwdefaults = kwdefaults
        self.cells = cells

    def python_type(self) -> type:
        return types.FunctionType

    def call(self, tx: Translator, args, kwargs) -> VariableTracker:
        bound = bind_arguments(tx, self.code, self.name, self.defaults, self.kwdefaults, args,
                               kwargs)
        return tx.inline(self.code, self.f_globals, bound, dict(self.cells), self.name)

    def __repr__(self) -> str:
        return f"NestedFunctionVariable({self.name})"


class FunctionGetVariable(VariableTracker):
    """`fn.__get__` of a Python function: called with an object, the method bound to it (an
    LR scheduler's wrapper of `optimizer.step` binds the original so)."""

    def __init__(self, fn: UserFunctionVariable) -> None:
        self.fn = fn

    def call(self, tx: Translator, args, kwargs) -> VariableTracker:
        obj = args[0] if args else kwargs.get("instance")
        if obj is None or is_none(obj):
            return self.fn
        return UserMethodVariable(self.fn, obj)


class UserMethodVariable(VariableTracker):
    """A function bound to a first argument (a method of a module or object)."""

    def __init__(self, function: VariableTracker, obj: VariableTracker) -> None:
        self.function = function
        self.obj = obj

    def python_type(self) -> type:
        return types.MethodType

    def call(self, tx: Translator, args, kwargs) -> VariableTracker:
        return self.function.call(tx, [self.obj, *args], kwargs)


class BoundMethodVariable(VariableTracker):
    """`obj.name` for a method the owner's tracker implements (`tensor.view`, `list.append`)."""

    def __init__(self, obj: VariableTracker, name: str) -> None:
        self.obj = obj
        self.name = name

    def call(self, tx: Translator, args, kwargs) -> VariableTracker:
        return self.obj.call_method(tx, self.name, args, kwargs)

    def __repr__(self) -> str:
        return f"BoundMethodVariable({self.obj}.{self.name})"


class PartialVariable(VariableTracker):
    """`functools.partial(fn, *args, **kwargs)`."""

    def __init__(self, fn: VariableTracker, args: list[VariableTracker],
                 kwargs: dict[str, VariableTracker], source: Any = None) -> None:
        self.fn = fn
        self.args = args
        self.kwargs = kwargs
        self.source = source

    def call(self, tx: Translator, args, kwargs) -> VariableTracker:
        return self.fn.call(tx, [*self.args, *args], {**self.kwargs, **kwargs})


class CachedFunctionVariable(VariableTracker):
    """An `@functools.lru_cache` function (`wrapper`): its body (`inner`) is inlined, the cache
    aside, as torch.compile does: the same result for code whose result depends only on its
    arguments. At a graph break inside the body the wrapper itself is called for real, the
    cache kept (a library's `warning_once` still warns once)."""

    def __init__(self, wrapper: Any, inner: VariableTracker, source: Any = None) -> None:
        self.wrapper = wrapper
        self.inner = inner
        self.source = source

    def python_type(self) -> type:
        return type(self.wrapper)

    def as_constant(self) -> Any:
        return self.wrapper

    def call(self, tx: Translator, args, kwargs) -> VariableTracker:
        return self.inner.call(tx, args, kwargs)


class OpaqueFunctionVariable(VariableTracker):
    """A function implemented in C outside torch (`time.perf_counter`, a C extension's), or
    one that must not run while tracing (`what` says which): a call to it breaks the graph and
    is made for real."""

    def __init__(self, fn: Any, source: Any = None, what: str = "a C function outside torch"
                 ) -> None:
        self.fn = fn
        self.source = source
        self.what = what

    def python_type(self) -> type:
        return type(self.fn)

    def as_constant(self) -> Any:
        return self.fn

    def call(self, tx: Translator, args, kwargs) -> VariableTracker:
        raise Unsupported(f"calling {getattr(self.fn, '__qualname__', self.fn)}, {self.what}")
