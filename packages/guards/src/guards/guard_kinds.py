"""The kinds of guard: each a statement about the values at one or more sources.

A guard can do three things. `holds(*values)` evaluates it directly. `code(*names, consts)` writes
it as a Python boolean expression over variables that hold the values, for the generated check
(objects that have no literal, such as types and dtypes, go into `consts` and are named there).
`failure(*values)` says in words why it does not hold ("it is 8"), for `explain`. Each has a
`cost` rank, so the generated check can test cheap guards first, and `implies(other)`, so a
GuardSet can drop guards that others already cover.
"""

from __future__ import annotations

import builtins
import enum
import inspect
import math
import numbers
import operator
import sys
import types
import weakref
from dataclasses import dataclass, field
from typing import Any

import torch
from torch.nn.modules import module as _nn_module

from guards.sources import (
    Source,
    WeakKey,
    a_type,
    by_identity,
    expect,
    hold,
    printable,
    unhold,
    weak_items,
)


class Constants:
    """Objects that the generated check refers to by name (`___c0`, `___c1`, ...).

    One name per object, by identity: never by equality, which would let one object stand for
    another that merely compares equal to it (`1` and `True`, two equal tuples, a weak reference
    and another to an equal object, an object whose `__eq__` says yes to anything). The table
    keeps each object alive, so no other object takes its id meanwhile."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}
        self._names: dict[int, str] = {}

    def name(self, value: Any) -> str:
        found = self._names.get(id(value))
        if found is None:
            found = f"___c{len(self.values)}"
            self.values[found] = value
            self._names[id(value)] = found
        return found


_AS_THEMSELVES = frozenset((str, int, bool, bytes, type(None)))


def exact(value: Any) -> Any:
    """A key two constants share only when they are the same constant: `1`, `1.0` and `True`
    differ, as do `0.0` and `-0.0` (NaNs of one sign are one: `math.copysign` reads the sign),
    inside tuples and frozensets too. An object found by identity (a tensor, a dict key: its
    `==` compares elements) is itself only, by its id, and so is a weak key while its object
    lives (`GuardSet` checks that first).
    A key starts with its type's id, then the type: types are told apart by identity, not by
    `==`, which a metaclass may answer (yes to anything); a tuple compares its identical items
    without asking them, so the type's own `==` runs only between values of one type."""
    kind = type(value)
    if kind in _AS_THEMSELVES:  # (first: a dict's keys, checked at each call)
        return id(kind), kind, value
    if isinstance(value, torch.Tensor):  # (first: an optimizer's state has hundreds)
        return _BY_ID, object, id(value)
    if isinstance(value, float):  # np.float64 and other subclasses too: `==` says -0.0 == 0.0
        return id(kind), kind, _float_key(value)
    if isinstance(value, complex):
        return id(kind), kind, _float_key(value.real), _float_key(value.imag)
    if isinstance(value, numbers.Number) and not isinstance(value, numbers.Integral):
        # other numbers that `==` finds equal at zeros of either sign (np.float32, Decimal),
        # with their signs too; a NaN of theirs is itself only
        try:
            z = complex(value)
        except (TypeError, ValueError, OverflowError):
            return id(kind), kind, value
        return id(kind), kind, value, math.copysign(1.0, z.real), math.copysign(1.0, z.imag)
    if isinstance(value, frozenset):
        return id(kind), kind, frozenset(map(exact, value))
    if isinstance(value, (range, slice)):  # (slices are unhashable before Python 3.12)
        return id(kind), kind, exact((value.start, value.stop, value.step))
    if isinstance(value, tuple):  # torch.Size and named tuples keep their type
        return id(kind), kind, tuple(map(exact, value))
    if kind is WeakKey:
        return (_BY_ID, object, value.id) if value.ref() is not None else (
            id(WeakKey), WeakKey, value.name)
    if by_identity(value):
        return _BY_ID, object, id(value)
    return id(kind), kind, value


_BY_ID = id(object)  # (how `exact` starts the key of an object found by its id)


def _float_key(x: float) -> Any:
    """A float as `exact` keys it: its hex digits, but a NaN's sign (`float.hex` drops it)."""
    return float.hex(x) if x == x else ("nan", math.copysign(1.0, x))


def _held_exact(value: Any) -> Any:
    """`exact(value)` of a key as held (`hold`), but a weak key by its name, alive or not (the
    same key while it lives, as `exact`'s id says; a hash must not change when it dies)."""
    if type(value) is WeakKey:
        return id(WeakKey), WeakKey, value.name
    if isinstance(value, tuple):
        return id(type(value)), type(value), tuple(map(_held_exact, value))
    return exact(value)


def ordered(value: Any) -> Any:
    """`exact(value)`, but the items of a frozenset in their order: two equal sets may iterate
    in different orders (`{1, 9}` and `{9, 1}`), and code that iterates one depends on it."""
    if isinstance(value, (frozenset, tuple)):
        return id(type(value)), type(value), tuple(map(ordered, value))
    return exact(value)


# What `Equals` compares (subclasses too: dynamo guards a `TorchVersion`, a str, by value), the
# common ones first (`numbers.Number`, an ABC, is slower to ask).
_CONSTANT_TYPES = (int, str, float, bytes, torch.dtype, torch.device, numbers.Number, range,
                   torch.layout, torch.memory_format, enum.Enum, types.CodeType)


def _not_constant(value: Any) -> Any:
    """The first part of `value` (itself, or an item of its tuples, frozensets and slices) that
    is no constant, or None."""
    if isinstance(value, (tuple, frozenset)):
        return next((p for p in map(_not_constant, value) if p is not None), None)
    if isinstance(value, slice):
        return _not_constant((value.start, value.stop, value.step))
    if value is None or value is Ellipsis or value is NotImplemented or isinstance(
            value, _CONSTANT_TYPES):
        return None
    numpy = sys.modules.get("numpy")  # (np.bool_ is no numbers.Number)
    return None if numpy is not None and isinstance(value, numpy.bool_) else value


def plain_constant(value: Any) -> bool:
    """Whether `==` and a type check tell `value` from every other constant."""
    return type(value) in (int, str, bytes, torch.device) or (
        type(value) is float and value != 0 and value == value)


def _literal(value: Any, consts: Constants) -> str:
    """`value` as Python source: a literal when it has one, a call of a weak key's reference,
    else a named constant."""
    if type(value) is WeakKey:
        return f"{consts.name(value.ref)}()"
    if value is None or type(value) in (bool, str) or (type(value) is int and printable(value)):
        return repr(value)  # (not subclasses: enums print oddly)
    if type(value) is float and value == value and abs(value) != float("inf"):
        return repr(value)
    if type(value) is tuple and all(not isinstance(v, float) for v in value):
        inner = ", ".join(_literal(v, consts) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    return consts.name(value)


def _brief(value: Any) -> str:
    """What a failure says a value is: a tensor by its metadata, anything else by a `repr` cut
    to a line."""
    if isinstance(value, torch.Tensor):
        return f"a {type(value).__qualname__}{tuple(value.shape)} of {value.dtype}"
    text = " ".join(_show(value).split())
    return text if len(text) <= 100 else f"{text[:97]}..."


_LONGEST = 200  # characters of a value a guard's description shows (`sys.modules`' keys)


def _show(value: Any) -> str:
    """`repr(value)`, cut to `_LONGEST` characters with the number of items, or words where it
    raises (an int of more than 4300 digits)."""
    try:
        text = repr(value)
    except ValueError:
        return f"<{type(value).__name__} too large to print>"
    if len(text) <= _LONGEST:
        return text
    size = f"{len(value)} items" if isinstance(value, (tuple, frozenset)) else \
        f"{len(text)} characters"
    return f"{text[:_LONGEST]}... ({size})"


def _show_keys(keys: tuple) -> str:
    """Dict keys as a tuple's `repr`, but a tensor key of more than a few items (an optimizer's
    state is keyed by parameters) by its metadata."""
    def big(k: Any) -> bool:
        return isinstance(k, torch.Tensor) and k.numel() > 8
    if not any(map(big, keys)):
        return " ".join(_show(keys).split())  # a small tensor's repr spans lines
    inner = ", ".join(_brief(k) if big(k) else " ".join(_show(k).split()) for k in keys)
    text = f"({inner},)" if len(keys) == 1 else f"({inner})"
    return text if len(text) <= _LONGEST else f"{text[:_LONGEST]}... ({len(keys)} items)"


@dataclass(frozen=True)
class Guard:
    """Base class. `sources` are what the guard reads, in the order its methods take values."""

    @property
    def sources(self) -> tuple[Source, ...]:
        return (self.source,)

    cost = 1

    def __post_init__(self) -> None:
        for source in self.sources:
            expect(source, Source, f"{type(self).__name__} needs guards Sources to read")

    @property
    def weak_keys(self) -> tuple[WeakKey, ...]:
        """The keys this guard holds weakly, its sources' and its own: it means nothing once one
        is gone (a GuardSet checks them alive before anything else)."""
        return tuple(key for source in self.sources for key in source.weak_keys)

    def holds(self, *values: Any) -> bool:
        raise NotImplementedError

    def code(self, *names_and_consts: Any) -> str:
        raise NotImplementedError

    def describe(self) -> str:
        raise NotImplementedError

    def failure(self, *values: Any) -> str:
        return f"it is {_brief(values[0])}"

    def implies(self, other: Guard) -> bool:
        return False

    def joined(self, other: Guard) -> Guard | None:
        """One guard that holds exactly when this one and `other` (on the same sources) both
        hold, where one check can do both; else None."""
        return None


@dataclass(frozen=True, init=False, eq=False)
class TypeMatch(Guard):
    """`type(value) is cls`. A class made at run time (one not found under its name in its
    module) is held weakly, as `Identity` holds objects: `torch.nn.utils.parametrize` makes a
    class per module it parametrizes, whose properties' closures hold that module, so a cache
    entry holding the class kept the module alive, and with it the entry's own cache (freed
    when the module goes)."""

    source: Source
    ref: Any  # the class, or a weakref.ref to it
    object_id: int

    def __init__(self, source: Source, type: type) -> None:
        object.__setattr__(self, "source", source)
        self.__post_init__()
        expect(type, builtins.type, "TypeMatch needs a class")
        object.__setattr__(self, "ref", weakref.ref(type) if _made_at_run_time(type) else type)
        object.__setattr__(self, "object_id", id(type))

    @property
    def type(self) -> Any:
        return self.ref() if isinstance(self.ref, weakref.ref) else self.ref

    def holds(self, value: Any) -> bool:
        return type(value) is self.type

    def code(self, name: str, consts: Constants) -> str:
        if isinstance(self.ref, weakref.ref):
            return f"type({name}) is {consts.name(self.ref)}()"
        return f"type({name}) is {consts.name(self.ref)}"

    def __eq__(self, other: object) -> bool:
        return type(other) is TypeMatch and other.source == self.source and (
            _same_referent(self.ref, other.ref) if isinstance(self.ref, weakref.ref)
            else self.ref is other.ref)

    def __hash__(self) -> int:
        return hash((self.source, self.object_id))

    def describe(self) -> str:
        cls = self.type
        name = cls.__qualname__ if cls is not None else "a class now gone"
        return f"type({self.source}) is {name}"

    def failure(self, value: Any) -> str:
        return f"it is {type(value).__qualname__}"


@dataclass(frozen=True)
class FiniteFloat(Guard):
    """The value is a float and finite: what a float compiled as a symbol stands for (a real
    number; a NaN or an infinity would break the algebra the trace did with it)."""

    source: Source

    def holds(self, value: Any) -> bool:
        return type(value) is float and math.isfinite(value)

    def code(self, name: str, consts: Constants) -> str:
        return f"type({name}) is float and {consts.name(math.isfinite)}({name})"

    def describe(self) -> str:
        return f"{self.source} is a finite float"

    def implies(self, other: Guard) -> bool:
        return isinstance(other, TypeMatch) and other.source == self.source and \
            other.type is float


@dataclass(frozen=True, eq=False)
class Identity(Guard):
    """The value is this very object (a function, module, class). Held weakly where possible:
    the guard fails, rather than keeping the object alive, once it is gone (for every value,
    None included: a dead weak reference returns None)."""

    source: Source
    ref: Any = field(compare=False)  # a weakref.ref, or a callable that holds the object
    object_id: int = 0

    @staticmethod
    def of(source: Source, obj: Any) -> Identity:
        try:
            ref = weakref.ref(obj)
        except TypeError:
            ref = lambda: obj  # noqa: E731 (objects without weak references: ints, tuples, ...)
        return Identity(source, ref, id(obj))

    def _gone(self, target: Any) -> bool:
        return target is None and isinstance(self.ref, weakref.ref)

    def holds(self, value: Any) -> bool:
        target = self.ref()
        return value is target and not self._gone(target)

    def code(self, name: str, consts: Constants) -> str:
        if isinstance(self.ref, weakref.ref):
            return f"{name} is {consts.name(self.ref)}() and {name} is not None"
        return f"{name} is {consts.name(self.ref())}"

    def describe(self) -> str:
        return f"{self.source} is {_what(self.ref(), self._gone(self.ref()))} with id " \
               f"{self.object_id:#x}"

    def failure(self, value: Any) -> str:
        if self._gone(self.ref()):
            return "the object it was compiled for no longer exists"
        return f"it is another object ({type(value).__qualname__} at {id(value):#x})"

    def implies(self, other: Guard) -> bool:
        target = self.ref()
        return isinstance(other, TypeMatch) and other.source == self.source and (
            type(target) is other.type and not self._gone(target) and _fixed_type(target)
        )

    # Equal guards name the same object: the same id is not enough (a freed object's id is
    # given to the next one), and neither is `==` between referents.
    def __eq__(self, other: object) -> bool:
        return type(other) is Identity and other.source == self.source and (
            _same_referent(self.ref, other.ref))

    def __hash__(self) -> int:
        return hash((self.source, self.object_id))


def _what(target: Any, gone: bool) -> str:
    """Words for the object an identity guard names, read without running its code (no `repr`,
    no attribute a module's `__getattr__` answers): `the function scale`, `the Linear object`."""
    if gone:
        return "the object (now freed)"
    if isinstance(target, types.ModuleType):
        return f"the module {vars(target).get('__name__', '?')}"
    if isinstance(target, type):
        return f"the class {target.__qualname__}"
    if isinstance(target, types.FunctionType | types.BuiltinFunctionType):
        return f"the function {target.__qualname__}"
    return f"the {type(target).__qualname__} object"


def _same_referent(a: Any, b: Any) -> bool:
    """Whether two references (weak references, or callables holding an object) are to one
    object: by identity, and a dead weak reference only to itself."""
    if a is b:
        return True
    target = a()
    return target is b() and not (target is None and (
        isinstance(a, weakref.ref) or isinstance(b, weakref.ref)))


_HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE


def _made_at_run_time(cls: type) -> bool:
    """Whether `cls` is not its module's attribute of its qualified name (made by a function,
    or by `type(...)`): such classes may come and go with the objects they were made for."""
    found: Any = sys.modules.get(cls.__module__)
    for part in cls.__qualname__.split("."):
        found = getattr(found, part, None)
    return found is not cls


def _fixed_type(obj: Any) -> bool:
    """Whether `obj` keeps its type for life: Python refuses `obj.__class__ = ...` unless the
    type is a heap type (a class statement's) or the object a module."""
    return not (type(obj).__flags__ & _HEAPTYPE) and not isinstance(obj, types.ModuleType)


@dataclass(frozen=True, eq=False)
class Equals(Guard):
    """The value is the same constant (None, a number, str, bytes, torch.dtype, torch.device,
    an enum member, another of `_CONSTANT_TYPES`, tuples and frozensets of those): same type and
    value, so `1`, `1.0` and `True` are different, and so are `0.0` and `-0.0`; a frozenset's
    items in the same order."""

    source: Source
    value: Any

    def __post_init__(self) -> None:
        super().__post_init__()
        part = _not_constant(self.value)
        if isinstance(part, (list, dict, set, bytearray)):
            raise TypeError(f"Equals({self.source}, ...) needs a constant, but the value holds "
                            f"a {type(part).__name__}, which can change in place after the "
                            "guard is made (guard its length and its items instead)")
        if part is not None:  # (a tensor's `==` compares elements, a class's may say anything)
            raise TypeError(f"Equals({self.source}, ...) needs a constant (None, a number, str, "
                            "bytes, dtype, device, enum member, or a tuple of those), but the "
                            f"value is or holds {a_type(type(part))} (guard it by Identity, "
                            "TypeMatch or TensorMatch instead)")

    def __eq__(self, other: object) -> bool:  # `Equals(s, 1)` and `Equals(s, True)` differ
        return type(other) is Equals and other.source == self.source and (
            ordered(other.value) == ordered(self.value))

    def __hash__(self) -> int:
        return hash((self.source, ordered(self.value)))

    def holds(self, value: Any) -> bool:
        return ordered(value) == ordered(self.value)

    def code(self, name: str, consts: Constants) -> str:
        if self.value is None or isinstance(self.value, (bool, torch.dtype)):
            return f"{name} is {_literal(self.value, consts)}"
        if plain_constant(self.value):
            kind = consts.name(type(self.value))
            return f"type({name}) is {kind} and {name} == {_literal(self.value, consts)}"
        if type(self.value) is tuple and self.value and all(map(plain_constant, self.value)):
            # item by item in C, not through `ordered` (a tuple of 10,000 ints: 0.2 ms, not 6)
            types = consts.name(tuple(map(type, self.value)))
            return (f"type({name}) is tuple and len({name}) == {len(self.value)} and "
                    f"all(map({consts.name(operator.is_)}, map(type, {name}), {types})) and "
                    f"{name} == {consts.name(self.value)}")
        return f"{consts.name(ordered)}({name}) == {consts.name(ordered(self.value))}"

    def describe(self) -> str:
        return f"{self.source} == {_show(self.value)}"

    def failure(self, value: Any) -> str:
        if type(value) is not type(self.value) and _show(value) == _show(self.value):
            # (a named tuple whose class a factory makes anew: the same text, another class)
            return f"it is {_brief(value)}, of another class named {type(value).__qualname__}"
        return f"it is {_brief(value)}"

    def implies(self, other: Guard) -> bool:
        if other.sources != self.sources:
            return False
        if isinstance(other, TypeMatch):
            return other.type is type(self.value)
        return isinstance(other, Length) and isinstance(self.value, tuple) and (
            len(self.value) == other.length
        )


@dataclass(frozen=True)
class Length(Guard):
    source: Source
    length: int

    def holds(self, value: Any) -> bool:
        return len(value) == self.length

    def code(self, name: str, consts: Constants) -> str:
        return f"len({name}) == {self.length}"

    def describe(self) -> str:
        return f"len({self.source}) == {self.length}"

    def failure(self, value: Any) -> str:
        return f"it is {len(value)}"


def _expect_hashable(key: Any, kind: str) -> None:
    """Refuse a key that no dict can hold: the check would never hold."""
    try:
        hash(key)
    except TypeError:
        raise TypeError(f"{kind} needs hashable keys, not {a_type(type(key))}") from None


@dataclass(frozen=True, eq=False)
class DictKeys(Guard):
    """The dict's keys, in order. Keys found by identity are held weakly (`hold`): an optimizer's
    state is keyed by parameters. Two are one guard only for the same keys (`exact`: keys `(1,)`
    and `(True,)` are two, though `==` says they are equal)."""

    source: Source
    keys: tuple

    cost = 2

    def __post_init__(self) -> None:
        super().__post_init__()
        expect(self.keys, (tuple, list), "DictKeys needs a tuple of keys")
        for key in self.keys:
            _expect_hashable(key, "DictKeys")
        object.__setattr__(self, "keys", tuple(map(hold, self.keys)))

    @property
    def weak_keys(self) -> tuple[WeakKey, ...]:
        return self.source.weak_keys + weak_items(self.keys)

    def __eq__(self, other: object) -> bool:
        return type(other) is DictKeys and other.source == self.source and (
            _held_exact(other.keys) == _held_exact(self.keys))

    def __hash__(self) -> int:
        return hash((self.source, _held_exact(self.keys)))

    def holds(self, value: Any) -> bool:
        return exact(tuple(value.keys())) == exact(self.keys)

    def code(self, name: str, consts: Constants) -> str:
        if all(type(k) in _AS_THEMSELVES for k in self.keys):
            # `==` takes a key of a str subclass (np.str_, a str Enum's member) for a str, and
            # `True` or `1.0` for `1`: each key's type is compared too
            types = consts.name(tuple(map(type, self.keys)))
            return (f"tuple({name}.keys()) == {_literal(self.keys, consts)} and "
                    f"all(map({consts.name(operator.is_)}, map(type, {name}.keys()), {types}))")
        # `1`, `1.0` and `True` are one key to a dict, and three keys to the code reading it
        return f"{consts.name(exact)}(tuple({name}.keys())) == {consts.name(exact(self.keys))}"

    def describe(self) -> str:
        return f"tuple({self.source}.keys()) == {_show_keys(tuple(map(unhold, self.keys)))}"

    def failure(self, value: Any) -> str:
        keys = tuple(value.keys())
        old, new = set(map(exact, self.keys)), set(map(exact, keys))
        added = [k for k in keys if exact(k) not in old]
        removed = [unhold(k) for k in self.keys if exact(k) not in new]
        changes = [f"{what} {_show_keys(tuple(ks))}" for what, ks in
                   (("added", added), ("removed", removed)) if ks]
        return f"they are {_show_keys(keys)}" + (f": {', '.join(changes)}" if changes else
                                                  " (the same keys in another order)")

    def implies(self, other: Guard) -> bool:
        return isinstance(other, Length) and other.source == self.source and (
            other.length == len(self.keys)
        )


@dataclass(frozen=True)
class DictContains(Guard):
    """Whether `key` is in the dict at the source: `'forward' not in L['m'].__dict__` says no
    instance attribute has come to shadow a method found on the class."""

    source: Source
    key: Any  # `hold(key)`
    present: bool = True

    def __post_init__(self) -> None:
        super().__post_init__()
        _expect_hashable(self.key, "DictContains")
        expect(self.present, bool, "DictContains needs a bool, whether the key is present")
        object.__setattr__(self, "key", hold(self.key))

    @property
    def weak_keys(self) -> tuple[WeakKey, ...]:
        return self.source.weak_keys + weak_items(self.key)

    def holds(self, value: Any) -> bool:
        return (unhold(self.key) in value) is self.present

    def code(self, name: str, consts: Constants) -> str:
        return f"{_literal(self.key, consts)} {'in' if self.present else 'not in'} {name}"

    def describe(self) -> str:
        return f"{_show(unhold(self.key))} {'in' if self.present else 'not in'} {self.source}"

    def failure(self, value: Any) -> str:
        return "it is missing" if self.present else "it is there"


def lacks(cls: type, names: tuple[str, ...]) -> bool:
    """Whether no class of `cls.__mro__` but `object` (which cannot change) holds any of
    `names` in its dict."""
    for c in cls.__mro__[:-1]:
        if not c.__dict__.keys().isdisjoint(names):
            return False
    return True


@dataclass(frozen=True)
class ClassLacks(Guard):
    """The class at the source, and its bases, still lack `names`: `hasattr(o, 'zz')` said no
    (or `getattr(o, 'zz', 5)` took the default), and neither `zz` nor a `__getattr__` added to
    `type(o)` since should go unseen. One call over the MRO, for a few names."""

    source: Source
    names: tuple[str, ...]

    cost = 2

    def __post_init__(self) -> None:
        super().__post_init__()
        # (a str alone would be its characters: `ClassLacks(s, "zz")` guarded 'z')
        expect(self.names, tuple, f"{type(self).__name__} needs a tuple of names")
        for n in self.names:
            expect(n, str, f"{type(self).__name__} needs str names")
        object.__setattr__(self, "names", tuple(str.__str__(n) for n in self.names))

    def holds(self, value: Any) -> bool:
        return lacks(value, self.names)

    def code(self, name: str, consts: Constants) -> str:
        return f"{consts.name(lacks)}({name}, {self.names!r})"

    def describe(self) -> str:
        return f"{self.source} and its bases lack {', '.join(map(repr, self.names))}"

    def failure(self, value: Any) -> str:
        found = next((c, n) for c in value.__mro__[:-1] for n in self.names if n in c.__dict__)
        return f"{found[0].__qualname__} has {found[1]!r} now"

    def implies(self, other: Guard) -> bool:
        return type(other) is type(self) and set(other.names) <= set(self.names)

    def joined(self, other: Guard) -> Guard | None:
        if type(other) is not type(self):
            return None
        return type(self)(self.source, (*self.names, *(n for n in other.names
                                                       if n not in self.names)))


def plain_subclass_lacks(cls: type, names: tuple[str, ...]) -> bool:
    """Whether tensor subclass `cls` still acts as a plain tensor (its torch-function and
    dispatch overrides off) and no class of its MRO above `torch.Tensor` (or `nn.Parameter`)
    holds any of `names` in its dict."""
    if inspect.getattr_static(cls, "__torch_function__", None) \
            is not torch._C._disabled_torch_function_impl \
            or inspect.getattr_static(cls, "__torch_dispatch__", None) \
            is not torch._C._disabled_torch_dispatch_impl:
        return False
    for c in cls.__mro__:
        if c is torch.Tensor or c is torch.nn.Parameter:
            return True
        if not c.__dict__.keys().isdisjoint(names):
            return False
    return True


@dataclass(frozen=True)
class PlainSubclassLacks(ClassLacks):
    """The tensor subclass at the source (a class traced as a plain tensor: `nn.Parameter`'s
    subclasses, or one that switches torch-function and dispatch off) still switches both off,
    and its classes above `torch.Tensor` still lack `names`: a `double` method, an `__iter__`
    or a `__torch_function__` given to the class after the trace read it must not go unseen.
    One call over the MRO."""

    def holds(self, value: Any) -> bool:
        return plain_subclass_lacks(value, self.names)

    def code(self, name: str, consts: Constants) -> str:
        return f"{consts.name(plain_subclass_lacks)}({name}, {self.names!r})"

    def describe(self) -> str:
        return (f"{self.source} switches torch-function and dispatch off and lacks "
                f"{', '.join(map(repr, self.names))} above torch.Tensor")

    def failure(self, value: Any) -> str:
        for c in value.__mro__:
            if c is torch.Tensor or c is torch.nn.Parameter:
                break
            for n in self.names:
                if n in c.__dict__:
                    return f"{c.__qualname__} has {n!r} now"
        return f"{value.__qualname__} overrides torch-function or dispatch now"


_SPARSE_LAYOUTS = (torch.sparse_coo, torch.sparse_csr, torch.sparse_csc, torch.sparse_bsr,
                   torch.sparse_bsc)


def _sparse_structure(t: torch.Tensor) -> tuple[tuple[str, Any], ...]:
    """What a sparse tensor's layout says beyond its sizes, as (what, value) pairs: how many dims
    are sparse and how many dense, whether a COO tensor is coalesced, a block layout's block
    size (what a trace of it reads, and fakecore's conversion keeps); () for other layouts."""
    if t.layout not in _SPARSE_LAYOUTS:
        return ()
    parts = (("sparse_dim()", t.sparse_dim()), ("dense_dim()", t.dense_dim()))
    if t.layout is torch.sparse_coo:
        return (*parts, ("is_coalesced()", t.is_coalesced()))
    if t.layout in (torch.sparse_bsr, torch.sparse_bsc):
        return (*parts, ("blocksize", tuple(t.values().shape[1:3])))
    return parts


def _dispatch_flags(t: torch.Tensor) -> tuple[bool, bool, bool]:
    """The flags, beyond type, device, dtype and requires_grad, that change how ops dispatch.
    The conjugate and negative bits count for complex tensors only: a real tensor that carries
    the negative bit (`c.conj().imag`) computes the same values as one that does not."""
    if not t.dtype.is_complex:
        return (t.is_inference(), False, False)
    return (t.is_inference(), t.is_conj(), t.is_neg())


@dataclass(frozen=True)
class DenseAfter:
    """A stride that follows dynamic sizes: dim `dim`'s stride times its size (the layout is
    dense from `dim` outwards), as a symbolic trace lays out a dense tensor."""

    dim: int


def _strides(t: torch.Tensor, dynamic: set[int],
             dynamic_strides: set[int] = frozenset()) -> tuple[int | DenseAfter | None, ...]:
    """The example's strides, where each stride that packs densely around a dynamic size or a
    dynamic stride (in the order of increasing stride) becomes that relation instead of a
    number; the stride of a dim of static size 1 is left out (no element is ever a step along
    it: `ids[:, -1:]` of a growing sequence has a new stride(0) each time and the same layout),
    and so is a dynamic stride (of a dim of size 2 or more: `ids[:, -2:]`)."""
    strides: list[int | DenseAfter | None] = list(t.stride())
    inner, follows_dynamic = None, False
    for d in sorted(range(t.dim()), key=lambda d: (t.stride(d), t.shape[d])):
        dense = inner is not None and t.stride(d) == t.stride(inner) * t.shape[inner]
        if dense and follows_dynamic and d not in dynamic_strides:
            strides[d] = DenseAfter(inner)
        follows_dynamic = d in dynamic or d in dynamic_strides or (dense and follows_dynamic)
        inner = d
    # a stride that another one is checked against stays checked, size 1 or not: else the
    # relation through it would constrain nothing
    related = {s.dim for s in strides if isinstance(s, DenseAfter)}
    return tuple(None if d in dynamic_strides or (
        t.shape[d] == 1 and d not in dynamic and d not in related) else s
        for d, s in enumerate(strides))


def _contiguous_strides(sizes: tuple[int, ...]) -> tuple[int, ...]:
    strides, step = [], 1
    for size in reversed(sizes):
        strides.append(step)
        step *= size
    return tuple(reversed(strides))


# Readers of tensor attributes for checking many tensors at once (`map(reader, tensors)`), shared
# by all guards so that their expectations line up in one column per attribute. Methods are read
# from the tensor's (exact, already checked) type instead: `Tensor.stride(t)` spares a bound
# method per tensor.
_ATTRIBUTES = {name: operator.attrgetter(name) for name in
               ("dtype", "is_cpu", "device", "layout", "requires_grad", "shape")}


@dataclass(frozen=True)
class TensorMatch(Guard):
    """A tensor like the example: type, dtype, device, layout, requires_grad, dispatch flags
    (inference, conjugate and negative bits), the sizes of every dim not listed as dynamic, and
    the strides of every dim not listed in `dynamic_strides` (a stride that follows a dynamic
    size or stride is checked as that relation: `stride(0) == stride(1) * size(1)` for a dense
    matrix with a dynamic number of columns; dims of size 1 have none), and a sparse layout's
    structure (`_sparse_structure`). A quantized tensor is refused: its scheme is no part of this."""

    source: Source
    type: type
    dtype: torch.dtype
    device: torch.device
    requires_grad: bool
    flags: tuple[bool, bool, bool]
    sizes: tuple  # None at dynamic dims
    strides: tuple
    layout: torch.layout = torch.strided
    sparse: tuple = ()  # `_sparse_structure(t)`

    cost = 3

    @staticmethod
    def of(source: Source, t: torch.Tensor, dynamic_dims: tuple[int, ...] = (),
           dynamic_strides: tuple[int, ...] = ()) -> TensorMatch:
        expect(t, torch.Tensor, "TensorMatch.of needs a tensor")
        if t.is_nested:  # (a jagged one's sizes hold a nested int, `j1`, with no literal: the
            # check read it as a name and never held; a strided one's `shape` raises)
            raise TypeError(f"TensorMatch.of({source}, ...): a nested tensor ({t.layout}) has "
                            "no sizes to match")
        if t.is_quantized:  # (per tensor or per channel, along which axis: another program)
            raise TypeError(f"TensorMatch.of({source}, ...): a quantized tensor has a scheme "
                            f"({t.qscheme()}) that a match does not check")
        for d in (*dynamic_dims, *dynamic_strides):
            if not -t.dim() <= d < t.dim():
                raise IndexError(f"dynamic dim {d} is out of range for a tensor of {t.dim()} "
                                 "dims")
        dynamic = {d % t.dim() for d in dynamic_dims}
        sizes = tuple(None if d in dynamic else s for d, s in enumerate(t.shape))
        # a sparse tensor has no strides (CSR's `stride()` raises; COO's are zeros)
        strides = _strides(t, dynamic, {d % t.dim() for d in dynamic_strides}) \
            if t.layout == torch.strided else ()
        return TensorMatch(source, type(t), t.dtype, t.device, t.requires_grad,
                           _dispatch_flags(t), sizes, strides, t.layout, _sparse_structure(t))

    def _mismatches(self, t: Any) -> list[str]:
        if type(t) is not self.type:
            return [f"it is {a_type(type(t))}, not {a_type(self.type)}"]
        found = [
            f"its {what} is {got}, not {want}"
            for what, want, got in (
                ("dtype", self.dtype, t.dtype),
                ("device", self.device, t.device),
                ("layout", self.layout, t.layout),
                ("requires_grad", self.requires_grad, t.requires_grad),
                ("dim()", len(self.sizes), t.dim()),
                ("(is_inference, is_conj, is_neg)", self.flags, _dispatch_flags(t)),
            )
            if want != got
        ]
        if found:
            return found
        found = [f"its {what} is {got}, not {want}" for (what, want), (_, got)
                 in zip(self.sparse, _sparse_structure(t)) if want != got]
        for dim, (want, got) in enumerate(zip(self.sizes, t.shape)):
            if want is not None and want != got:
                found.append(f"its size({dim}) is {got}, not {want}")
        for dim, (want, got) in enumerate(zip(self.strides, t.stride() if self.strides else ())):
            if isinstance(want, DenseAfter):
                inner = want.dim
                wanted = t.stride(inner) * t.shape[inner]
                if got != wanted:
                    found.append(f"its stride({dim}) is {got}, not stride({inner}) * "
                                 f"size({inner}) = {wanted}")
            elif want is not None and want != got:
                found.append(f"its stride({dim}) is {got}, not {want}")
        return found

    def holds(self, value: Any) -> bool:
        return not self._mismatches(value)

    def _contiguous(self) -> bool:
        """Whether, once the sizes match, the strides hold exactly when `is_contiguous()` does.
        It does for a strided tensor with static sizes, at least one element, and the row-major
        strides of those sizes: `is_contiguous()` (a flag kept with the sizes and strides) compares
        every stride with the product of the sizes after it, skipping dims of size 1, which are
        the dims whose strides this guard leaves out. One method call instead of building and
        comparing the tuple of strides."""
        sizes = self.sizes
        return (self.layout == torch.strided and None not in sizes and 0 not in sizes
                and all((want is None and size == 1) or want == row_major
                        for want, row_major, size
                        in zip(self.strides, _contiguous_strides(sizes), sizes)))

    def columns(self) -> list[tuple[str, Any, Any]] | None:
        """This guard, beyond the type, as (property, reader, expected) triples, `reader(t) ==
        expected` for each, so that a GuardSet can check many tensors at once, one property at a
        time over all of them (`list(map(reader, tensors)) == expected_values`). None when the
        guard needs more than that (dynamic sizes, strides that are relations or left out at a
        dim of size 1 of a tensor that is not contiguous)."""
        if None in self.sizes or (not self._contiguous() and None in self.strides) or (
                self.layout != torch.strided):
            return None
        kind = self.type  # exact: checked before any of these
        columns = [
            ("dtype", _ATTRIBUTES["dtype"], self.dtype),
            ("is_cpu", _ATTRIBUTES["is_cpu"], True) if self.device.type == "cpu" else
            ("device", _ATTRIBUTES["device"], self.device),
            ("layout", _ATTRIBUTES["layout"], self.layout),
            ("requires_grad", _ATTRIBUTES["requires_grad"], self.requires_grad),
            ("shape", _ATTRIBUTES["shape"], self.sizes),
            ("is_contiguous()", kind.is_contiguous, True) if self._contiguous() else
            ("stride()", kind.stride, self.strides),
            ("is_inference()", kind.is_inference, self.flags[0]),
        ]
        if self.dtype.is_complex:
            columns += [("is_conj()", kind.is_conj, self.flags[1]),
                        ("is_neg()", kind.is_neg, self.flags[2])]
        return columns

    def code(self, name: str, consts: Constants) -> str:
        parts = [
            f"type({name}) is {consts.name(self.type)}",
            f"{name}.dtype is {consts.name(self.dtype)}",
            self._device_code(name, consts),
            f"{name}.layout is {consts.name(self.layout)}",
            f"{name}.requires_grad is {self.requires_grad}",
        ]
        if self.sparse:
            parts.append(f"{consts.name(_sparse_structure)}({name}) == {consts.name(self.sparse)}")
        parts += self._layout_code(name, "shape", self.sizes)
        if self._contiguous():
            parts.append(f"{name}.is_contiguous()")
        elif self.layout == torch.strided:
            parts += self._layout_code(name, "stride()", self.strides)
        parts.append(f"{name}.is_inference() is {self.flags[0]}")
        if self.dtype.is_complex:  # the conjugate and negative bits exist for complex tensors
            parts += [f"{name}.is_conj() is {self.flags[1]}", f"{name}.is_neg() is {self.flags[2]}"]
        return " and ".join(parts)

    def _device_code(self, name: str, consts: Constants) -> str:
        # `is_cpu` and `get_device()` answer in a third of the time of a device comparison.
        if self.device.type == "cpu":
            return f"{name}.is_cpu"
        if self.device.type == "cuda":
            return f"{name}.is_cuda and {name}.get_device() == {self.device.index or 0}"
        return f"{name}.device == {consts.name(self.device)}"

    @staticmethod
    def _layout_code(name: str, attr: str, values: tuple) -> list[str]:
        if all(type(v) is int for v in values):
            return [f"{name}.{attr} == {_literal(values, Constants())}"]
        code = [f"{name}.dim() == {len(values)}"] if attr == "shape" else []
        for d, v in enumerate(values):
            if isinstance(v, DenseAfter):
                code.append(f"{name}.stride()[{d}] == {name}.stride()[{v.dim}] * "
                            f"{name}.shape[{v.dim}]")
            elif v is not None:
                code.append(f"{name}.{attr}[{d}] == {v}")
        return code

    def describe(self) -> str:
        sizes = ", ".join("*" if s is None else str(s) for s in self.sizes)
        layout = "" if self.layout == torch.strided else " (" + ", ".join(
            [str(self.layout)] + [f"{what}={value}" for what, value in self.sparse]) + ")"
        return (f"{self.source} is a {self.type.__qualname__}({sizes}){layout} of {self.dtype} "
                f"on {self.device}, requires_grad={self.requires_grad}")

    def failure(self, value: Any) -> str:
        return "; ".join(self._mismatches(value))

    def implies(self, other: Guard) -> bool:
        return isinstance(other, TypeMatch) and other.source == self.source and (
            other.type is self.type
        )


@dataclass(frozen=True)
class SameObject(Guard):
    """Two sources hold the same object (aliased inputs, such as a tensor passed twice)."""

    source: Source
    other: Source

    @property
    def sources(self) -> tuple[Source, ...]:
        return (self.source, self.other)

    def holds(self, a: Any, b: Any) -> bool:
        return a is b

    def code(self, a: str, b: str, consts: Constants) -> str:
        return f"{a} is {b}"

    def describe(self) -> str:
        return f"{self.source} is {self.other}"

    def failure(self, a: Any, b: Any) -> str:
        return "they are different objects"


@dataclass(frozen=True)
class DistinctObjects(Guard):
    """No two of the sources hold the same object (inputs that did not alias stay apart)."""

    all: tuple[Source, ...]

    @property
    def sources(self) -> tuple[Source, ...]:
        return self.all

    def holds(self, *values: Any) -> bool:
        return len({id(v) for v in values}) == len(values)

    def code(self, *names_and_consts: Any) -> str:
        names = names_and_consts[:-1]
        return f"len({{{', '.join(f'id({n})' for n in names)}}}) == {len(names)}"

    def describe(self) -> str:
        return "no two of " + ", ".join(map(str, self.all)) + " are the same object"

    def failure(self, *values: Any) -> str:
        seen: dict[int, Source] = {}
        for source, value in zip(self.all, values):
            if id(value) in seen:
                return f"{seen[id(value)]} and {source} are the same object"
            seen[id(value)] = source
        return "they are distinct"


@dataclass(frozen=True)
class ModuleTraining(Guard):
    source: Source
    training: bool

    def holds(self, value: Any) -> bool:
        return value.training is self.training

    def code(self, name: str, consts: Constants) -> str:
        return f"{name}.training is {self.training}"

    def describe(self) -> str:
        return f"{self.source}.training is {self.training}"

    def failure(self, value: Any) -> str:
        return f"it is {value.training}"


_AUTOCAST_STATES: dict[tuple, tuple] = {}  # one object per state, so that `is` compares them


def _autocast() -> tuple | None:
    """The devices autocast is on for and the dtype of each, None when it is off everywhere."""
    if not torch._C._is_any_autocast_enabled():
        return None
    state = tuple((device, torch.get_autocast_dtype(device)) for device in ("cpu", "cuda")
                  if torch.is_autocast_enabled(device))
    return _AUTOCAST_STATES.setdefault(state, state)


_HOOKS = (_nn_module._global_forward_hooks, _nn_module._global_forward_pre_hooks,
          _nn_module._global_backward_hooks, _nn_module._global_backward_pre_hooks)


def _module_hooks() -> bool:
    """Whether global module hooks are registered (they run around every module call)."""
    return any(map(bool, _HOOKS))


# The global settings that change what a compiled program computes: (name, reader, check).
def _function_modes() -> tuple:
    """The torch function modes on the stack, each as its type (and a device mode's device)."""
    return tuple((type(mode), getattr(mode, "device", None)) for mode in map(
        torch._C._get_function_stack_at, range(torch._C._len_torch_function_stack())))


# Each reads as an object compared by identity (a dtype, a bool, a small int, None); a setting
# with a `check` writes a cheaper expression (no Python call) instead.
_STATE = (
    ("grad mode", torch._C.is_grad_enabled, None),
    ("default dtype", torch.get_default_dtype, None),
    ("deterministic algorithms", torch._C._get_deterministic_algorithms, None),
    ("autocast", _autocast, lambda value, consts: (
        f"{consts.name(torch._C._is_any_autocast_enabled)}() is False" if value is None
        else None)),
    ("inference mode", torch.is_inference_mode_enabled, None),
    # torch function modes, the default device's among them (set_default_device pushes one):
    # their kinds, and a device mode's device
    ("torch function modes", _function_modes, lambda value, consts: (
        f"{consts.name(torch._C._len_torch_function_stack)}() == 0" if not value
        else f"{consts.name(_function_modes)}() == {consts.name(value)}")),
    ("torch dispatch modes", torch._C._len_torch_dispatch_stack, None),
    # DisableTorchFunctionSubclass / DisableTorchFunction: subclasses' __torch_function__ off
    ("torch function enabled", torch._C._is_torch_function_enabled, None),
    ("torch function all disabled", torch._C._is_torch_function_all_disabled, None),
    ("global module hooks", _module_hooks, lambda value, consts: (
        "not (" + " or ".join(consts.name(h) for h in _HOOKS) + ")" if not value else None)),
)


def _global_state() -> tuple:
    return tuple(read() for _, read, _ in _STATE)


@dataclass(frozen=True)
class GlobalState(Guard):
    """Grad mode, inference mode, default dtype, deterministic algorithms, autocast (and its
    dtype), torch function modes (their kinds; the default device's device), torch dispatch
    modes and global module hooks are as they were."""

    state: tuple = field(default_factory=_global_state)

    sources = ()
    cost = 4

    def holds(self) -> bool:
        return _global_state() == self.state

    def code(self, consts: Constants) -> str:
        return " and ".join(
            (check and check(value, consts)) or f"{consts.name(read)}() is {consts.name(value)}"
            for (_, read, check), value in zip(_STATE, self.state))

    def describe(self) -> str:
        return "global state (" + ", ".join(
            f"{name}={value}" for (name, _, _), value in zip(_STATE, self.state)
        ) + ")"

    def failure(self) -> str:
        now = _global_state()
        return "; ".join(f"{name} is {b}, not {a}"
                         for (name, _, _), a, b in zip(_STATE, self.state, now) if a != b)


@dataclass(frozen=True, eq=False)
class Alive(Guard):
    """An object the compiled artifact refers to (weakly) still exists."""

    ref: Any = field(compare=False)
    object_id: int = 0
    label: str = ""

    sources = ()

    @staticmethod
    def of(obj: Any, label: str = "") -> Alive:
        return Alive(weakref.ref(obj), id(obj), label)

    def __eq__(self, other: object) -> bool:  # the same object, not just the same id
        return type(other) is Alive and other.label == self.label and (
            _same_referent(self.ref, other.ref))

    def __hash__(self) -> int:
        return hash((self.object_id, self.label))

    def holds(self) -> bool:
        return self.ref() is not None

    def code(self, consts: Constants) -> str:
        return f"{consts.name(self.ref)}() is not None"

    def describe(self) -> str:
        return f"{self.label or 'a referenced object'} is alive"

    def failure(self) -> str:
        return "it has been freed"

