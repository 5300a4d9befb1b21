"""Functions while tracing: user functions are inlined, bound methods dispatch to their owner.

Calling a user function (a global helper, a method of a module or object, a closure, a
lambda, a function defined inside the traced code) does not run it: a new Translator
interprets its bytecode with the argument trackers bound to its parameters, and its return
value's tracker comes back. Its closure cells and globals are read through sources, so guards
cover them like the frame's own.
"""

from __future__ import annotations

import abc
import functools
import inspect
import os
import sys
import types
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import torch._compile

from dynamo.exc import Raised, Unsupported, no_attribute
from dynamo.side_effects import MISSING
from dynamo.sources import CallSource, ModuleSource
from dynamo.variables.base import TrueVariable, VariableTracker
from dynamo.variables.constant import (
    ConstantVariable,
    is_none,
    is_numpy_number,
    numpy_number_types,
    numpy_raising,
)
from dynamo.variables.containers import DictVariable, TupleVariable
from guards import (
    AttrSource,
    ClosureCellSource,
    DefaultSource,
    DictContains,
    Equals,
    GetItemSource,
    Identity,
)

# torch's `_disable_dynamo` wraps functions in a closure defined in this file
TORCH_DISABLED = torch._compile.__file__
_TORCH_DIR = os.path.dirname(torch.__file__)


def _nothing() -> None:
    return None


@functools.cache
def _compiler_disable_code() -> types.CodeType:
    """The code of the wrapper `torch.compiler.disable` puts around a function, asked of that
    public function itself (only once torch's frontend is loaded: it made the wrapper)."""
    return torch.compiler.disable(_nothing).__code__


def compiler_disabled(fn: Any) -> Any:
    """The function `torch.compiler.disable` wrapped, when `fn` is such a wrapper (it keeps
    the function as `__wrapped__`, by `functools.wraps`), or a module it disabled (the wrapper
    is the `forward` set on the instance); else None. Only a wrapper torch made that has the
    disable wrapper's name is compared with it: asking torch for that wrapper loads torch's
    frontend, which a program that never disabled anything need not load."""
    if isinstance(fn, torch.nn.Module):
        fn = fn.__dict__.get("forward")
    wrapped = getattr(fn, "__wrapped__", None)
    code = getattr(fn, "__code__", None)
    if wrapped is None or code is None or code.co_name != "_fn" or \
            not code.co_filename.startswith(_TORCH_DIR) or code is not _compiler_disable_code():
        return None
    return wrapped

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
    except TypeError:
        from dynamo.frontend import _make_binder

        try:  # Python's own words for it (`f() got an unexpected keyword argument 'c'`)
            _make_binder(stub)(*args, **kwargs)
        except TypeError as error:
            raise Unsupported(f"calling {name}(): {error}") from None
        raise
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


class UserFunctionVariable(TrueVariable):
    """A Python function object that exists outside the trace."""

    def __init__(self, fn: types.FunctionType, source: Any = None,
                 cells_source: Any = None) -> None:
        self.fn = fn
        self.source = source
        # Where the function is read for its closure cells only, when it has no `source` of
        # its own (a module's method: not guarded, but what its closure holds is reached with
        # a source, so that a container it changes is changed for real)
        self.cells_source = cells_source
        # A function made per call is guarded by its code, not identity (builder.py): where
        # the trace answers by which object it is (`fn is g`, `fn == g`, a dict key, `in`),
        # this adds the identity guard (set by the builder; None once added or not needed)
        self.pin_identity: Callable[[], None] | None = None

    def python_type(self) -> type:
        return types.FunctionType

    def identity(self) -> types.FunctionType:
        """The function object, for an answer that depends on which object it is."""
        pin, self.pin_identity = self.pin_identity, None
        if pin is not None:
            pin()
        return self.fn

    def as_constant(self) -> Any:
        return self.identity()

    def getattr(self, tx: Translator, name: str) -> VariableTracker:
        from dynamo.variables.builder import wrap

        if name in ("__name__", "__qualname__", "__module__", "__doc__"):
            return ConstantVariable(getattr(self.fn, name))
        if name == "__get__":  # `func.__get__(obj, cls)`: binds it, as a method
            return FunctionGetVariable(self)
        written = tx.output.side_effects.load("attr", self, name)
        if written is not MISSING:
            return written
        if not hasattr(self.fn, name):  # a function's own attributes live in its __dict__
            if self.source is not None:
                tx.output.add_guard(DictContains(AttrSource(self.source, "__dict__"), name,
                                                 False))
            raise no_attribute("function", name)
        return wrap(tx, getattr(self.fn, name), AttrSource(self.source, name)
                    if self.source else None)

    def setattr(self, tx: Translator, name: str, value: VariableTracker) -> None:
        """`fn.calls = n` on a function from the frame (a decorator's counter): recorded, read
        back by the trace, and set for real after the graph."""
        if self.source is None or hasattr(types.FunctionType, name):
            raise Unsupported(f"setting attribute {name!r} of a function")
        tx.output.side_effects.store("attr", self, name, value)

    def call(self, tx: Translator, args, kwargs) -> VariableTracker:
        from dynamo.frontend import graph_break
        from dynamo.variables.builder import wrap

        fn = self.fn
        if fn is graph_break:
            message = args[0].as_constant() if args and args[0].is_constant() else ""
            raise Unsupported(f"graph_break() called{': ' if message else ''}{message}")
        if getattr(fn, "_dynamo_disable", False):
            raise Unsupported(f"calling {fn.__qualname__}, marked dynamo.disable")
        if fn.__code__.co_filename == TORCH_DISABLED:
            raise Unsupported(f"calling {fn.__qualname__}, which torch keeps out of compiled "
                              "graphs (torch._disable_dynamo)")
        original = compiler_disabled(fn)
        if original is not None:
            if getattr(original, "__module__", "").startswith("torch.optim."):
                # Put there by torch.compile's first call (its TorchPatcher), on optimizer
                # internals that its own frontend calls for real; this one traces them.
                return wrap(tx, original, AttrSource(self.source, "__wrapped__")
                            if self.source else None).call(tx, args, kwargs)
            raise Unsupported(f"calling {getattr(original, '__qualname__', original)}, marked "
                              "torch.compiler.disable")
        if getattr(fn, "_dynamo_marked_constant", False):  # `assume_constant_result`
            if not all(a.is_constant() for a in [*args, *kwargs.values()]):
                raise Unsupported(f"calling {fn.__qualname__} (marked a constant result) with "
                                  "arguments that are not constants")
            from dynamo.variables.builder import wrap_constant_result

            return wrap_constant_result(fn(*[a.as_constant() for a in args],
                                           **{k: v.as_constant() for k, v in kwargs.items()}))
        if fn in _MODULE_ATTRIBUTES and args and not kwargs:  # an override's `super()` call
            from dynamo.variables.objects import NNModuleVariable

            if not isinstance(args[0], NNModuleVariable):
                raise Unsupported(f"{fn.__qualname__} on a {args[0].python_type().__qualname__}")
            name = args[1].as_constant()
            if fn is torch.nn.Module.__getattr__:
                return args[0].module_getattr(tx, name)
            args[0].module_setattr(tx, name, args[2])
            return ConstantVariable(None)
        if fn is abc.ABCMeta.__instancecheck__ and len(args) == 2 and not kwargs:
            from dynamo.variables.builtins import abc_instancecheck  # `super().__instancecheck__`

            return ConstantVariable(abc_instancecheck(tx, args[0].as_constant(), args[1]))
        src = self.source
        if src is not None:  # the code inlined stays the function's (`f.__code__ = ...`)
            guarded = tx.output.code_guarded
            if id(fn) not in guarded:  # one guard per function, whichever way it was reached
                guarded.add(id(fn))
                tx.output.add_guard(Identity.of(AttrSource(src, "__code__"), fn.__code__))

        def default(key: int | str, value: Any) -> VariableTracker:
            return wrap(tx, value, DefaultSource(src, key) if src else None)

        defaults = tuple(default(i, v) for i, v in enumerate(fn.__defaults__ or ()))
        kwdefaults = {k: default(k, v) for k, v in (fn.__kwdefaults__ or {}).items()}
        bound = bind_arguments(tx, fn.__code__, fn.__qualname__, defaults, kwdefaults, args,
                               kwargs)
        cells_src = src or (self.cells_source and tx.output.cells_sources.setdefault(
            id(fn), self.cells_source))
        cells = {
            name: ClosureCell(cell, ClosureCellSource(cells_src, i) if cells_src else None)
            for i, (name, cell) in enumerate(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
        }
        return tx.inline(fn.__code__, fn.__globals__, bound, cells, fn.__qualname__)

    def __repr__(self) -> str:
        return f"UserFunctionVariable({self.fn.__qualname__})"


class PolyfilledFunctionVariable(UserFunctionVariable):
    """A C function of the standard library (`functools.reduce`, `itertools.count`,
    `operator.itemgetter`) whose Python twin (`polyfills.py`) is inlined when it is called. As
    a value it is the C original: returned, stored, handed to `isinstance` or called for real
    at a graph break, it is the original, not dynamo's twin."""

    def __init__(self, twin: types.FunctionType, original: Any) -> None:
        super().__init__(twin)
        self.original = original

    def python_type(self) -> type:
        return type(self.original)

    def as_constant(self) -> Any:
        return self.original

    def getattr(self, tx: Translator, name: str) -> VariableTracker:
        if name in ("__name__", "__qualname__", "__module__", "__doc__"):
            return ConstantVariable(getattr(self.original, name))
        return super().getattr(tx, name)


class ClosureCell:
    """A cell of a real function's closure; its contents are read through a source."""

    def __init__(self, cell: types.CellType, source: Any) -> None:
        self.cell = cell
        self.source = source

    @property
    def cell_source(self) -> Any:
        """Where the cell object itself is read from (its contents' source, one step back):
        closures made from one code share their compiled code but not their cells, so code
        that makes a function over this cell, or writes into it, reads it there, not as the
        cell met when compiling (None: no source)."""
        source = self.source
        if isinstance(source, AttrSource) and source.attr == "cell_contents":
            return source.base
        if isinstance(source, ClosureCellSource):
            return GetItemSource(AttrSource(source.base, "__closure__"), source.index)
        return None


class NestedFunctionVariable(TrueVariable):
    """A function created by the traced code itself (`def` or `lambda` inside it).

    Its attributes are the tracker's: `__name__` (`name`), `__defaults__`, `__kwdefaults__`,
    those in `attrs` once set or read (`__qualname__`, `__doc__`, `__module__`,
    `__annotations__`, ...; until then the code's own), and its `__dict__` (what
    `functools.wraps` copies, `__wrapped__`, anything the code sets). Outside the trace the
    function is rebuilt from `code` and `name`, then given `rebuilt_attributes()`."""

    def __init__(self, code: types.CodeType, f_globals: dict, name: str, defaults: tuple,
                 kwdefaults: dict, cells: dict[str, Any],
                 annotations: DictVariable | None = None) -> None:
        self.code = code
        self.f_globals = f_globals
        self.name = name
        self.defaults = defaults
        self.kwdefaults = kwdefaults
        self.cells = cells
        self.attrs: dict[str, VariableTracker] = {}
        if annotations is not None:
            self.attrs["__annotations__"] = annotations
        self.dict: DictVariable | None = None  # its `__dict__`, made when first used

    def python_type(self) -> type:
        return types.FunctionType

    @property
    def qualname(self) -> str:
        found = self.attrs.get("__qualname__")
        return found.as_constant() if found is not None else self.code.co_qualname

    def _own_dict(self) -> DictVariable:
        if self.dict is None:
            self.dict = DictVariable({})
        return self.dict

    def getattr(self, tx: Translator, name: str) -> VariableTracker:
        if name == "__name__":
            return ConstantVariable(self.name)
        if name == "__dict__":
            return self._own_dict()
        if name == "__defaults__":
            return TupleVariable(list(self.defaults)) if self.defaults else ConstantVariable(None)
        if name == "__code__":
            return ConstantVariable(self.code)
        if name in self.attrs:
            return self.attrs[name]
        if name == "__annotations__":  # made when first read, one dict from then on
            self.attrs[name] = DictVariable({})
            return self.attrs[name]
        if name in _FUNCTION_DATA:  # as Python makes them from the code and globals
            stub = types.FunctionType(self.code, self.f_globals, self.name, None, tuple(
                types.CellType() for _ in self.code.co_freevars) or None)
            return ConstantVariable(getattr(stub, name))
        own = self._own_dict()
        if own.has_key(name):
            return own.lookup(name)
        if hasattr(types.FunctionType, name):  # `__get__`, `__call__`, ...
            return super().getattr(tx, name)
        raise no_attribute("function", name)

    def setattr(self, tx: Translator, name: str, value: VariableTracker) -> None:
        if name == "__name__" or name == "__qualname__":
            if not (value.is_constant() and isinstance(value.as_constant(), str)):
                raise Raised(TypeError(f"{name} must be set to a string object"),
                             f"setting {name} of a function to {value.words()} (a TypeError)")
            if name == "__name__":
                self.name = value.as_constant()
            else:
                self.attrs[name] = value
        elif name == "__defaults__":
            self.defaults = () if is_none(value) else tuple(value.items(tx))
        elif name == "__dict__":
            if not isinstance(value, DictVariable):
                raise Unsupported(f"setting __dict__ of a function to {value.words()}")
            self.dict = value
        elif name in _FUNCTION_DATA or name == "__annotations__":
            self.attrs[name] = value
        elif hasattr(types.FunctionType, name):  # `__code__`, `__kwdefaults__`, ...
            raise Unsupported(f"setting {name} of a function made in the trace")
        else:
            self._own_dict().call_method(tx, "__setitem__", [ConstantVariable(name), value], {})

    def rebuilt_attributes(self) -> dict[str, VariableTracker]:
        """What the function rebuilt outside the trace (`types.FunctionType(code, globals,
        name, defaults, closure)`, its `__kwdefaults__` set) must be given on top: the
        attributes the trace set or read, and its `__dict__`."""
        rebuilt = dict(self.attrs)
        if self.dict is not None:
            rebuilt["__dict__"] = self.dict
        return rebuilt

    def call(self, tx: Translator, args, kwargs) -> VariableTracker:
        bound = bind_arguments(tx, self.code, self.name, self.defaults, self.kwdefaults, args,
                               kwargs)
        return tx.inline(self.code, self.f_globals, bound, dict(self.cells), self.qualname)

    def __repr__(self) -> str:
        return f"NestedFunctionVariable({self.qualname})"


# nn.Module's attribute hooks, which a module class's own versions call through `super()`
_MODULE_ATTRIBUTES = (torch.nn.Module.__getattr__, torch.nn.Module.__setattr__)


# Attributes of a function that Python makes from its code and globals, and that may be set
# (`__type_params__` from Python 3.12 on)
_FUNCTION_DATA = frozenset(name for name in ("__qualname__", "__doc__", "__module__",
                                             "__type_params__")
                           if hasattr(types.FunctionType, name))


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


class UserMethodVariable(TrueVariable):
    """A function bound to a first argument (a method of a module or object)."""

    def __init__(self, function: VariableTracker, obj: VariableTracker) -> None:
        self.function = function
        self.obj = obj

    def python_type(self) -> type:
        return types.MethodType

    def getattr(self, tx: Translator, name: str) -> VariableTracker:
        if name == "__self__":
            return self.obj
        if name == "__func__":
            return self.function
        return super().getattr(tx, name)

    def call(self, tx: Translator, args, kwargs) -> VariableTracker:
        return self.function.call(tx, [self.obj, *args], kwargs)


class BoundMethodVariable(TrueVariable):
    """`obj.name` for a method the owner's tracker implements (`tensor.view`, `list.append`)."""

    def __init__(self, obj: VariableTracker, name: str) -> None:
        self.obj = obj
        self.name = name

    def call(self, tx: Translator, args, kwargs) -> VariableTracker:
        return self.obj.call_method(tx, self.name, args, kwargs)

    def words(self) -> str:
        return f"{self.obj.words()}'s method {self.name}"

    def __repr__(self) -> str:
        return f"BoundMethodVariable({self.obj}.{self.name})"


class PartialVariable(TrueVariable):
    """`functools.partial(fn, *args, **kwargs)`. Its `keywords` is one dict, read at each call:
    `p.keywords[k] = v` in the trace (or replayed on a frame partial's) changes what it calls."""

    def __init__(self, fn: VariableTracker, args: list[VariableTracker],
                 kwargs: dict[str, VariableTracker], source: Any = None,
                 keywords: DictVariable | None = None) -> None:
        self.fn = fn
        self.args = args
        self.keywords = DictVariable(dict(kwargs)) if keywords is None else keywords
        self.source = source
        self.flattens = True  # a partial of it is made of its parts (it has no `__dict__`)

    @property
    def kwargs(self) -> dict[str, VariableTracker]:
        return dict(self.keywords.entries)

    def python_type(self) -> type:
        return functools.partial

    def getattr(self, tx: Translator, name: str) -> VariableTracker:
        if name == "func":
            return self.fn
        if name == "args":
            return TupleVariable(list(self.args))
        if name == "keywords":
            return self.keywords
        return super().getattr(tx, name)

    def call(self, tx: Translator, args, kwargs) -> VariableTracker:
        return self.fn.call(tx, [*self.args, *args], {**self.kwargs, **kwargs})


class CachedFunctionVariable(TrueVariable):
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


def c_callable_name(fn: Any) -> str | None:
    """`module.qualname` of a callable written in C, for messages (`time.perf_counter`,
    `numpy.random.RandomState.rand`, `numpy.ndarray.sum`), or None where C stores no name.
    Read from where C stores it: naming the callable never runs Python code."""
    qualname = _stored(fn, "__qualname__")
    if not isinstance(qualname, str):
        return None
    module = _stored(fn, "__module__")
    if not isinstance(module, str):  # a method descriptor's class; a builtin method's object
        owner = _stored(fn, "__objclass__") or _stored(fn, "__self__")
        module = getattr(owner if isinstance(owner, type) else type(owner), "__module__", "")
    return qualname if module in ("", "builtins") else f"{module}.{qualname}"


def _stored(value: Any, name: str) -> Any:
    """`value.name` where the instance's dict or a C slot holds it; None elsewhere (a
    property, a class's `__getattr__`)."""
    found = inspect.getattr_static(value, name, None)
    if isinstance(found, (types.GetSetDescriptorType, types.MemberDescriptorType)):
        try:
            return found.__get__(value, type(value))
        except AttributeError:  # an empty slot
            return None
    return found


class OpaqueFunctionVariable(VariableTracker):
    """A function implemented in C outside torch (`time.perf_counter`, a C extension's), or
    one that must not run while tracing (`what` says which): a call to it breaks the graph and
    is made for real."""

    def __init__(self, fn: Any, source: Any = None, what: str = "a C function outside torch",
                 name: str | None = None) -> None:
        self.fn = fn
        self.source = source
        self.what = what
        self.name = name or c_callable_name(fn) or repr(fn)

    def python_type(self) -> type:
        return type(self.fn)

    def words(self) -> str:
        return self.name

    def as_constant(self) -> Any:
        return self.fn

    def call(self, tx: Translator, args, kwargs) -> VariableTracker:
        raise Unsupported(f"calling {self.name}, {self.what}")


class ExcInfoVariable(OpaqueFunctionVariable):
    """`sys.exc_info`, which `contextlib.ExitStack.__exit__` calls: where no handler of the
    trace is running, it answers the caller's state, `(None, None, None)` under a guard that
    the caller handles no exception either; inside a traced handler (whose exception has no
    real traceback) or under a caller's handler, a graph break as before."""

    def call(self, tx: Translator, args, kwargs) -> VariableTracker:
        nothing = (None, None, None)
        if args or kwargs or any(f.handling for f in tx.output.frames) or \
                sys.exc_info() != nothing:
            return super().call(tx, args, kwargs)
        tx.output.add_guard(Equals(CallSource(AttrSource(ModuleSource("sys"), "exc_info")),
                                   nothing))
        return TupleVariable([ConstantVariable(None)] * 3)


def is_numpy_foldable(value: Any) -> bool:
    """Whether `value` is a numpy ufunc (`np.sqrt`) or a numpy number type (`np.float32`)."""
    numbers = numpy_number_types()
    return bool(numbers) and (isinstance(value, sys.modules["numpy"].ufunc) or
                              isinstance(value, type) and issubclass(value, numbers))


class NumpyFunctionVariable(OpaqueFunctionVariable):
    """A numpy ufunc or number type: called on numbers only (`np.sqrt(d)`, `np.float32(3)`),
    computed while tracing, its result a constant; on anything else (an array, `out=`), or
    where numpy would warn or raise (`np.log(0)`), called for real at a graph break."""

    def call(self, tx: Translator, args, kwargs) -> VariableTracker:
        values = [*args, *kwargs.values()]
        if kwargs or not all(v.is_constant() and (type(v.as_constant()) in (bool, int, float)
                                                  or is_numpy_number(v.as_constant()))
                             for v in values):
            raise Unsupported(f"calling numpy.{self.fn.__name__} on other than numbers")
        try:
            with numpy_raising():
                result = self.fn(*[a.as_constant() for a in args])
        except Exception as error:
            raise Unsupported(f"numpy.{self.fn.__name__} raised {type(error).__name__}: "
                              f"{error}") from None
        if not is_numpy_number(result):  # (a tuple of `np.divmod`)
            raise Unsupported(f"numpy.{self.fn.__name__} giving a {type(result).__name__}")
        return ConstantVariable(result)
