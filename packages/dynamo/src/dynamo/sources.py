"""Sources the frontend needs beyond the guard library's: a global of another module, a
module by its name, the items of a dict or list subclass, the object a weak reference refers
to, the answer of a query function, a set as a frozenset, a float passed to a graph as a
tensor, a module's forward hooks by position.

A function inlined from another module reads that module's globals, not the frame's `G`;
`ModuleGlobalSource` names such a value through `sys.modules`, so guards can check it.
"""

from __future__ import annotations

import builtins
import functools
import sys
from dataclasses import dataclass
from typing import Any

import torch

from guards import AttrSource, ChainedSource, GetItemSource, LocalSource, Source, key_expr


@dataclass(frozen=True)
class SysModulesSource(Source):
    """`sys.modules`, the root of every module read by name: fetched once per check."""

    @property
    def expr(self) -> str:
        return "__import__('sys').modules"

    def access(self, base_expr: str) -> str:
        return self.expr

    def fetch(self, f_locals: dict, f_globals: dict) -> Any:
        return sys.modules


SYS_MODULES = SysModulesSource()


@dataclass(frozen=True)
class ModuleSource(Source):
    """A module by its name in `sys.modules` (`torch.nn.functional`): the attributes of
    torch's and the standard library's modules are read from here, whatever path the code
    took to the module (`torch.nn.functional`, `F`, an `F` of torch's own modules), so that
    each is guarded once."""

    name: str

    @property
    def base(self) -> Source:
        return SYS_MODULES

    @property
    def expr(self) -> str:
        return self.access(SYS_MODULES.expr)

    def access(self, base_expr: str) -> str:
        return f"{base_expr}[{self.name!r}]"

    def fetch(self, f_locals: dict, f_globals: dict) -> Any:
        return sys.modules[self.name]


@dataclass(frozen=True)
class ModuleGlobalSource(Source):
    """A global of module `module` (its `__dict__` entry, as its functions read it)."""

    module: str
    name: str

    @property
    def base(self) -> Source:
        return ModuleSource(self.module)

    @property
    def expr(self) -> str:
        return self.access(self.base.expr)

    def access(self, base_expr: str) -> str:
        return f"{base_expr}.__dict__[{self.name!r}]"

    def fetch(self, f_locals: dict, f_globals: dict) -> Any:
        return sys.modules[self.module].__dict__[self.name]


@dataclass(frozen=True, eq=False)
class GlobalsDictSource(Source):
    """The globals dict of a function that no module in `sys.modules` owns (the code torch.fx
    generates for a GraphModule, code `exec`'d in a dict of its own, which may even claim a
    module's `__name__`): the dict itself, written as a name like a key with no literal."""

    globals: dict

    def __eq__(self, other: object) -> bool:
        return type(other) is GlobalsDictSource and other.globals is self.globals

    def __hash__(self) -> int:
        return hash((GlobalsDictSource, id(self.globals)))

    @property
    def expr(self) -> str:
        return key_expr(self.globals)  # kept alive in the key table, as the function keeps it

    def access(self, base_expr: str) -> str:
        return self.expr

    def fetch(self, f_locals: dict, f_globals: dict) -> Any:
        return self.globals


def globals_source(g: dict, name: str) -> Source:
    """Global `name` of a function inlined from globals `g` that are not the frame's: through
    `sys.modules` when `g` is the dict of the module it names, else through `g` itself."""
    module = module_named_by(g)
    if module is not None:
        return ModuleGlobalSource(module, name)
    return GetItemSource(GlobalsDictSource(g), name)


def globals_dict_source(g: dict, frame_globals: dict) -> Source:
    """The globals dict `g` itself: the frame's (`G`), a module's `__dict__`, or `g`."""
    if g is frame_globals:
        return FrameGlobalsSource()
    module = module_named_by(g)
    if module is not None:
        return AttrSource(ModuleSource(module), "__dict__")
    return GlobalsDictSource(g)


def builtins_source(table: dict, g: dict, frame_globals: dict) -> Source:
    """The builtins dict `table` that globals `g` name (their `__builtins__`). The `builtins`
    module's `__dict__` is held as the dict itself (a check reads it as a constant, not
    through `sys.modules`: a resume step of a loop checks it on every iteration); a dict of
    the code's own (`exec` given one) is read through `g`, as the code reads it: held as a
    constant, the key table would keep it alive for good after the code is gone."""
    if table is builtins.__dict__:
        return GlobalsDictSource(table)
    source: Source = GetItemSource(globals_dict_source(g, frame_globals), "__builtins__")
    return source if isinstance(g["__builtins__"], dict) else AttrSource(source, "__dict__")


def module_named_by(g: dict) -> str | None:
    """The name of the module in `sys.modules` whose dict `g` is, or None."""
    module = g.get("__name__")
    if type(module) is str and getattr(sys.modules.get(module), "__dict__", None) is g:
        return module
    return None


@dataclass(frozen=True)
class FrameGlobalsSource(Source):
    """The frame's globals dict itself: where a name the code found among the builtins must
    stay missing."""

    @property
    def expr(self) -> str:
        return "G"

    def access(self, base_expr: str) -> str:
        return self.expr

    def fetch(self, f_locals: dict, f_globals: dict) -> Any:
        return f_globals


@dataclass(frozen=True)
class CallSource(ChainedSource):
    """What the function at the base returns, called with constant arguments (str, int, bool,
    None): a query of global state (`torch.get_num_threads()`), asked again at each check."""

    args: tuple = ()

    def access(self, base_expr: str) -> str:
        return f"{base_expr}({', '.join(map(repr, self.args))})"

    def step(self, value: Any) -> Any:
        return value(*self.args)


@dataclass(frozen=True)
class ItemsCopySource(ChainedSource):
    """The items of an instance of a dict, OrderedDict or list subclass (`kind`), as the
    methods it inherits see them: a plain copy, read past any `__getitem__`, `keys` or
    `__iter__` the subclass defines (`dict.copy` itself calls them on a subclass that defines
    `__iter__`, and on every OrderedDict subclass; on any other it copies the hashes the dict
    stores, so no key's `__hash__` runs, as none runs in the frame)."""

    kind: type = dict

    def access(self, base_expr: str) -> str:
        if self.kind is list:
            return f"list.copy({base_expr})"
        return f"{key_expr(items_copy)}({key_expr(self.kind)}, {base_expr})"

    def step(self, value: Any) -> Any:
        return items_copy(self.kind, value)


def items_copy(kind: type, value: Any) -> Any:
    """A plain list or dict of `value`'s items, read through `kind`'s own views (its
    OrderedDict order too), never through methods the subclass defines."""
    if kind is list:
        return list.copy(value)
    if kind is dict and type(value).__iter__ is dict.__iter__:
        return dict.copy(value)  # by the hashes the dict stores: no key's `__hash__` runs again
    return dict(zip(kind.keys(value), kind.values(value)))


@dataclass(frozen=True)
class PartialFlattensSource(ChainedSource):
    """Whether the `functools.partial` at the base has no `__dict__` (none was ever made:
    CPython flattens `partial(p, ...)` into `p`'s parts only then). Read from its
    `__reduce__`, which does not make one, as reading `p.__dict__` would."""

    def access(self, base_expr: str) -> str:
        return f"{key_expr(partial_flattens)}({base_expr})"

    def step(self, value: Any) -> Any:
        return partial_flattens(value)


def partial_flattens(value: Any) -> bool:
    """Whether `functools.partial(value, ...)` is made of `value`'s parts (it has no dict)."""
    return functools.partial.__reduce__(value)[2][3] is None


@dataclass(frozen=True)
class WeakRefCallSource(ChainedSource):
    """What the weak reference at the base refers to (None once it is gone)."""

    def access(self, base_expr: str) -> str:
        return f"{base_expr}()"

    def step(self, value: Any) -> Any:
        return value()


@dataclass(frozen=True)
class SetItemsSource(ChainedSource):
    """The items of the set at the base, as a tuple in its order: what a guard on a set's
    contents compares (equal sets may iterate in different orders)."""

    def access(self, base_expr: str) -> str:
        return f"tuple({base_expr})"

    def step(self, value: Any) -> Any:
        return tuple(value)


@dataclass(frozen=True)
class FloatTensorSource(ChainedSource):
    """The float at the base as a new 0-d float64 tensor: how a float the graph takes as a
    symbol is passed to it (`___float_tensor` is in the namespace of the transformed frame)."""

    def access(self, base_expr: str) -> str:
        return f"___float_tensor({base_expr})"

    def step(self, value: Any) -> Any:
        return float_tensor(value)


def float_tensor(value: float) -> torch.Tensor:
    return torch.scalar_tensor(value, dtype=torch.float64)


@dataclass(frozen=True)
class ModuleHooksSource(ChainedSource):
    """The forward hooks or forward pre-hooks (`kind`: `"_forward_hooks"`, `"_forward_pre_hooks"`)
    of the module at the base, by position (`module_hooks`): what a call of the module depends
    on, without the hooks' keys, the ids of their handles, which are new for each hook
    registered (`m.register_forward_hook(...)` and `remove()` around every call)."""

    kind: str = "_forward_hooks"

    def access(self, base_expr: str) -> str:
        return f"{key_expr(module_hooks)}({base_expr}, {self.kind!r})"

    def step(self, value: Any) -> Any:
        return module_hooks(value, self.kind)


def module_hooks(module: torch.nn.Module, kind: str) -> tuple[tuple, tuple]:
    """The module's hooks of `kind` in the order they run, and for each whether it takes the
    keyword arguments and whether it runs even when the call raises (`always_call=True`)."""
    hooks = getattr(module, kind)
    with_kwargs = getattr(module, f"{kind}_with_kwargs")
    always = module._forward_hooks_always_called if kind == "_forward_hooks" else {}
    return (tuple(hooks.values()),
            tuple((key in with_kwargs, key in always) for key in hooks))


def described(source: Source | None) -> str:
    """`source` for a message: a resume function's stack parameter (`L['___stack0']`, a name
    of dynamo's own) is the value the step made for real at the graph break left there."""
    if source is None:
        return "a value"
    root = source
    while isinstance(root, ChainedSource):
        root = root.base
    if isinstance(root, LocalSource) and str(root.name).startswith("___stack"):
        return (f"the value the call made for real at the graph break gave ({source})"
                if root is source else f"{source}, read from the value the call made for "
                "real at the graph break gave")
    return str(source)
