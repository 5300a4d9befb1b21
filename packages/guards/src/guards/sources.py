"""Sources: where a value lives, relative to a frame's locals and globals.

A guard is a statement about a value, and the value is named by a source: `L['x']` is the local
`x`, `L['self'].fc.weight` an attribute of an attribute of a local, `L['x'].size()[0]` a
property of a tensor. A source knows its Python expression (over two dicts, `L` and `G`) and can
fetch its value. Sources are frozen dataclasses: hashable, comparable, printable; a chain of them
forms a tree by prefix, which is how the generated check fetches each value only once.
"""

from __future__ import annotations

import itertools
import keyword
import weakref
from dataclasses import dataclass
from operator import is_not
from typing import Any

import torch


@dataclass(frozen=True)
class Source:
    """Where a value lives. Subclasses define `expr` and `fetch_from(base_value)`."""

    @property
    def base(self) -> Source | None:
        return None

    @property
    def expr(self) -> str:
        raise NotImplementedError

    def access(self, base_expr: str) -> str:
        """The expression of this source given its base's expression (or variable)."""
        raise NotImplementedError

    @property
    def table(self) -> str | None:
        """The dict attribute of the base that this source is an item of (`_parameters`), or
        None. Siblings that read the same table can share one read of it (`index`)."""
        return None

    def index(self, table_expr: str) -> str:
        """The expression of this source given its base's table (for sources with a `table`)."""
        raise NotImplementedError

    def fetch(self, f_locals: dict, f_globals: dict) -> Any:
        """The value, read from a frame's locals and globals (raises if it cannot be read)."""
        raise NotImplementedError

    @property
    def weak_keys(self) -> tuple[WeakKey, ...]:
        """The item keys held weakly on the way to the value (`hold`)."""
        return ()

    def __str__(self) -> str:
        return self.expr


def a_type(cls: type) -> str:
    """`cls`'s name with its article, for messages: "an int", "a Tensor"."""
    try:
        name = cls.__qualname__
        if type(name) is not str:
            raise TypeError(name)
    except Exception:  # a metaclass whose `__getattribute__` answers `__qualname__` itself
        name = type.__dict__["__qualname__"].__get__(cls, type)
    return f"{'an' if name[:1].lower() in 'aeiou' else 'a'} {name}"


def expect(value: Any, kind: type | tuple[type, ...], needs: str) -> None:
    """Refuse, where a source, guard or cache is made, a `value` that is not a `kind`: the
    TypeError says what `needs` ("TypeMatch needs a class") and what it got. Found out later, a
    wrong argument was an AttributeError inside a check, or a check that never held."""
    if not isinstance(value, kind):
        raise TypeError(f"{needs}, not {a_type(type(value))}")


def expect_name(source: Source, field: str, kind: type | tuple[type, ...] = str,
                needs: str = "a str name") -> None:
    """`expect` of a source's name field, kept as the plain str it equals where it is given as a
    str subclass (`np.str_`, whose `repr` is `np.str_('x')`): an expression writes it with
    `repr`, which must give its literal."""
    value = getattr(source, field)
    expect(value, kind, f"{type(source).__name__} needs {needs}")
    if isinstance(value, str) and type(value) is not str:
        object.__setattr__(source, field, str.__str__(value))


@dataclass(frozen=True)
class LocalSource(Source):
    name: str

    def __post_init__(self) -> None:
        expect_name(self, "name")

    @property
    def expr(self) -> str:
        return f"L[{self.name!r}]"

    def access(self, base_expr: str) -> str:
        return self.expr

    def fetch(self, f_locals: dict, f_globals: dict) -> Any:
        return f_locals[self.name]


@dataclass(frozen=True)
class GlobalSource(Source):
    name: str

    def __post_init__(self) -> None:
        expect_name(self, "name")

    @property
    def expr(self) -> str:
        return f"G[{self.name!r}]"

    def access(self, base_expr: str) -> str:
        return self.expr

    def fetch(self, f_locals: dict, f_globals: dict) -> Any:
        return f_globals[self.name]


@dataclass(frozen=True)
class ChainedSource(Source):
    """A source reached from another one (`base`) by one step."""

    of: Source

    def __post_init__(self) -> None:
        expect(self.of, Source, f"{type(self).__name__} needs a Source as its base")

    @property
    def base(self) -> Source:
        return self.of

    @property
    def expr(self) -> str:
        return self.access(self.of.expr)

    def fetch(self, f_locals: dict, f_globals: dict) -> Any:
        return self.step(self.of.fetch(f_locals, f_globals))

    @property
    def weak_keys(self) -> tuple[WeakKey, ...]:
        return self.of.weak_keys

    def step(self, value: Any) -> Any:
        raise NotImplementedError


@dataclass(frozen=True)
class AttrSource(ChainedSource):
    attr: str

    def __post_init__(self) -> None:
        super().__post_init__()
        expect_name(self, "attr", needs="a str attribute name")

    def access(self, base_expr: str) -> str:
        # `.attr` only for plain names: a keyword (`.class`) does not parse, and Python reads
        # a non-ASCII name NFKC-normalised (`.ﬁ` is `.fi`, another attribute)
        if self.attr.isascii() and self.attr.isidentifier() and not keyword.iskeyword(self.attr):
            return f"{base_expr}.{self.attr}"
        return f"getattr({base_expr}, {self.attr!r})"

    def step(self, value: Any) -> Any:
        return getattr(value, self.attr)


# Keys that have no literal (an enum member, a dtype, inf, a parameter keying an optimizer's
# state) are written as names, `___key0`, ...: code that runs source expressions needs
# `key_names()` in its namespace. The table lives as long as the process, and the sources, guards
# and generated code that name a key live as long as the caches that hold them, longer than the
# key may (a dropped model's parameters, and their gradients). So a key found by identity is held
# weakly, by a `WeakKey`, and written as a call of its reference (`___key0()`). Its name is
# forgotten when it dies: an object that takes its id gets a name of its own, and what was made
# for the dead key never stands for the new one. A GuardSet checks its weak keys alive first.
_KEY_NAMES: dict[Any, str] = {}
_KEYS: dict[str, Any] = {}
_HELD: dict[int, WeakKey] = {}  # by the id of the live key
_NUMBERS = itertools.count()


class WeakKey:
    """An item key held weakly: its name in `key_names()`, which no other object ever gets, a
    weak reference to it and its id. It equals another only of the same name (of the same key,
    alive or not); as a key it finds nothing."""

    __slots__ = ("name", "ref", "id")

    def __init__(self, name: str, ref: weakref.ref, key_id: int) -> None:
        self.name, self.ref, self.id = name, ref, key_id

    def __eq__(self, other: object) -> bool:
        return type(other) is WeakKey and other.name == self.name

    def __hash__(self) -> int:
        return hash(self.name)

    def __repr__(self) -> str:
        key = self.ref()
        return f"<{self.name}: freed>" if key is None else f"<{self.name}: {type(key).__name__}>"


def by_identity(key: Any) -> bool:
    """Whether a dict finds `key` only as itself: a tensor (its `==` compares elements, its hash
    is its id) or an object of a class without `__eq__` (a module, a function, a class)."""
    return isinstance(key, torch.Tensor) or (key is not None and type(key).__eq__ is object.__eq__)


def hold(key: Any) -> Any:
    """`key` as sources and guards keep it: a key found by identity that can be weakly
    referenced as its `WeakKey` (the same one while it lives), a tuple holding such keys as a
    tuple of what each item is held as (`(module, "scale")` as `(WeakKey, "scale")`), any
    other key as itself."""
    if type(key) is tuple:
        held = tuple(map(hold, key))
        return held if any(map(is_not, held, key)) else key
    if type(key) is WeakKey or not by_identity(key):
        return key
    held = _HELD.get(id(key))
    if held is None:
        name, key_id = f"___key{next(_NUMBERS)}", id(key)
        try:
            ref = weakref.ref(key, lambda _: _forget(key_id, name))
        except TypeError:  # (a class with `__slots__` and no `__weakref__`)
            return key
        held = _HELD[key_id] = WeakKey(name, ref, key_id)
        _KEYS[name] = ref
    return held


def _forget(key_id: int, name: str) -> None:
    _KEYS.pop(name, None)
    if getattr(_HELD.get(key_id), "name", None) == name:
        del _HELD[key_id]


def unhold(key: Any) -> Any:
    """The key that `key` holds: itself, a WeakKey's referent (the WeakKey once that is gone:
    no container holds it), or a tuple of the keys its items hold."""
    if type(key) is WeakKey:
        found = key.ref()
        return key if found is None else found
    if type(key) is tuple and weak_items(key):
        return tuple(map(unhold, key))
    return key


def weak_items(held: Any) -> tuple[WeakKey, ...]:
    """The `WeakKey`s that a key as held (`hold`) is or holds: itself, or its tuple's items'."""
    if type(held) is WeakKey:
        return (held,)
    if type(held) is tuple:
        return tuple(key for item in held for key in weak_items(item))
    return ()


def _has_literal(key: Any) -> bool:
    if type(key) is tuple:
        return all(map(_has_literal, key))
    if type(key) is float:
        return key == key and abs(key) != float("inf")
    if type(key) is int:
        return printable(key)
    return key is None or type(key) in (bool, str, bytes)


def printable(number: int) -> bool:
    """Whether `repr` writes the int: past `sys.get_int_max_str_digits()` digits it raises."""
    try:
        repr(number)
    except ValueError:
        return False
    return True


def key_names() -> dict[str, Any]:
    """The names that source expressions use for keys with no literal, and their keys (or their
    weak references)."""
    return _KEYS


def _key_identity(key: Any) -> Any:
    """What two item keys share exactly when they are the same key: the type and value of a
    number, string or None (`1`, `1.0` and `True` differ, and so do `0.0` and `-0.0`), each
    item's for a tuple, a weak key's name, and for anything else the object itself, by
    identity (an object that compares equal to another is not the other: a container may tell
    them apart)."""
    if type(key) is WeakKey:
        return key
    if type(key) is tuple:
        return (tuple, *map(_key_identity, key))
    if type(key) is float and key == key:  # a NaN is found by identity only (nan != nan)
        return float, key.hex()
    if key is None or type(key) in (bool, int, str, bytes):
        return type(key), key
    return id(key)  # the key is kept alive by whoever holds it: a source, or _KEYS


def key_expr(key: Any) -> str:
    """How a source expression writes `key`: its literal, or a name in `key_names()` that
    holds it (called, for a key held weakly)."""
    if _has_literal(key):
        return repr(key)
    held = hold(key)
    if type(held) is WeakKey:
        return f"{held.name}()"
    if type(held) is tuple and weak_items(held):  # rebuilt of its items, each named alone
        items = ", ".join(map(key_expr, held))
        return f"({items},)" if len(held) == 1 else f"({items})"
    name = _KEY_NAMES.get(_key_identity(key))
    if name is None:
        name = _KEY_NAMES[_key_identity(key)] = f"___key{next(_NUMBERS)}"
        _KEYS[name] = key
    return name


@dataclass(frozen=True, eq=False, init=False)
class GetItemSource(ChainedSource):
    """Item `key` of the base. Two are the same source only for the same key (`_key_identity`),
    not for keys that merely compare equal. A key found by identity is held weakly (`held`)."""

    held: Any  # `hold(key)`

    def __init__(self, of: Source, key: Any) -> None:
        object.__setattr__(self, "of", of)
        self.__post_init__()
        object.__setattr__(self, "held", hold(key))

    @property
    def key(self) -> Any:
        return unhold(self.held)

    @property
    def weak_keys(self) -> tuple[WeakKey, ...]:
        return self.of.weak_keys + weak_items(self.held)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.of == self.of and (
            _key_identity(other.held) == _key_identity(self.held))

    def __hash__(self) -> int:
        return hash((self.of, _key_identity(self.held)))

    def access(self, base_expr: str) -> str:
        return f"{base_expr}[{key_expr(self.held)}]"

    def step(self, value: Any) -> Any:
        return item(value, self.key)


def item(value: Any, key: Any) -> Any:
    """`value[key]`, except that a key missing from a dict is a KeyError: not `value[key]`, where
    a defaultdict's `__missing__` would add the key (a fetch for automatic dynamic, an
    explanation or a guard check put an old parameter in an optimizer's state)."""
    if isinstance(value, dict) and type(value).__getitem__ is dict.__getitem__ and \
            not dict.__contains__(value, key):
        raise KeyError(key)
    return value[key]


@dataclass(frozen=True)
class TypeSource(ChainedSource):
    def access(self, base_expr: str) -> str:
        return f"type({base_expr})"

    def step(self, value: Any) -> Any:
        return type(value)


@dataclass(frozen=True)
class ClosureCellSource(ChainedSource):
    """Cell `index` of a function's closure."""

    index: int

    def __post_init__(self) -> None:
        super().__post_init__()
        expect(self.index, int, "ClosureCellSource needs an int index")

    def access(self, base_expr: str) -> str:
        return f"{base_expr}.__closure__[{self.index}].cell_contents"

    def step(self, value: Any) -> Any:
        return value.__closure__[self.index].cell_contents


@dataclass(frozen=True)
class DefaultSource(ChainedSource):
    """A function's default: positional `__defaults__[i]` (int key) or `__kwdefaults__[name]`."""

    key: int | str

    def __post_init__(self) -> None:
        super().__post_init__()
        expect_name(self, "key", (int, str), "an int index or a str name")

    def access(self, base_expr: str) -> str:
        if isinstance(self.key, int):
            return f"{base_expr}.__defaults__[{self.key}]"
        return f"{base_expr}.__kwdefaults__[{self.key!r}]"

    def step(self, value: Any) -> Any:
        if isinstance(self.key, int):
            return value.__defaults__[self.key]
        return value.__kwdefaults__[self.key]


@dataclass(frozen=True)
class DictKeySource(ChainedSource):
    """The `index`-th key of a dict, in order."""

    index: int

    def access(self, base_expr: str) -> str:
        return f"list({base_expr}.keys())[{self.index}]"

    def step(self, value: Any) -> Any:
        return list(value.keys())[self.index]


@dataclass(frozen=True)
class ParameterSource(ChainedSource):
    """A parameter or buffer of an nn.Module, read from its `_parameters`/`_buffers` dict
    (faster than attribute access, which goes through `Module.__getattr__`)."""

    name: str
    buffer: bool = False

    def __post_init__(self) -> None:
        super().__post_init__()
        expect_name(self, "name")

    @property
    def table(self) -> str:
        return "_buffers" if self.buffer else "_parameters"

    def access(self, base_expr: str) -> str:
        return self.index(f"{base_expr}.{self.table}")

    def index(self, table_expr: str) -> str:
        return f"{table_expr}[{self.name!r}]"

    def step(self, value: Any) -> Any:
        return (value._buffers if self.buffer else value._parameters)[self.name]


@dataclass(frozen=True)
class SubmoduleSource(ChainedSource):
    """A child module of an nn.Module, read from its `_modules` dict."""

    name: str

    def __post_init__(self) -> None:
        super().__post_init__()
        expect_name(self, "name")

    @property
    def table(self) -> str:
        return "_modules"

    def access(self, base_expr: str) -> str:
        return self.index(f"{base_expr}._modules")

    def index(self, table_expr: str) -> str:
        return f"{table_expr}[{self.name!r}]"

    def step(self, value: Any) -> Any:
        return value._modules[self.name]


@dataclass(frozen=True)
class TensorPropertySource(ChainedSource):
    """`size()[dim]`, `stride()[dim]` or `storage_offset()` of a tensor."""

    prop: str
    dim: int | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.prop not in ("size", "stride", "storage_offset"):
            raise TypeError("TensorPropertySource needs 'size', 'stride' or 'storage_offset', "
                            f"not {self.prop!r}")
        if (self.prop == "storage_offset") != (self.dim is None) or (
                self.dim is not None and not isinstance(self.dim, int)):
            raise TypeError(f"TensorPropertySource({self.prop!r}) needs "
                            + ("no dim" if self.prop == "storage_offset" else "an int dim")
                            + f", not {self.dim!r}")

    def access(self, base_expr: str) -> str:
        if self.prop == "storage_offset":
            return f"{base_expr}.storage_offset()"
        return f"{base_expr}.{self.prop}()[{self.dim}]"

    def step(self, value: Any) -> Any:
        if self.prop == "storage_offset":
            return value.storage_offset()
        return getattr(value, self.prop)()[self.dim]
