"""Containers while tracing: tuples, lists, dicts, sets, slices, named tuples, iterators.

Their elements are trackers. Lists, dicts and sets created while tracing may be mutated freely:
nobody outside the frame can see them. Mutating one that came from the frame's inputs is a side
effect: it is recorded (`side_effects`) and replayed on the real container after the graph runs.
"""

from __future__ import annotations

import collections
import collections.abc
import operator
import sys
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch

from dynamo.exc import Raised, Unsupported, python_error, raised_by_python
from dynamo.sources import ItemsCopySource
from dynamo.variables.base import VariableTracker
from dynamo.variables.constant import ConstantVariable, is_literal
from guards import AttrSource, ChainedSource, TypeSource, by_identity

if TYPE_CHECKING:
    from dynamo.interpreter import Translator


def as_index(tx: Translator, key: VariableTracker) -> Any:
    """A subscript's key as a Python int or slice (a symbolic size specialises)."""
    from dynamo.variables.tensor import concrete_int

    return key.as_slice(tx) if isinstance(key, SliceVariable) else concrete_int(key)


class SequenceVariable(VariableTracker):
    """Base of tuples and lists: `items` is a Python list of trackers."""

    kind: type = tuple

    def __init__(self, items: list[VariableTracker], source: Any = None) -> None:
        self.values = list(items)
        self.source = source

    def python_type(self) -> type:
        return self.kind

    _asking = False  # (is_constant is being answered: see there)

    def is_constant(self) -> bool:
        # A list that holds itself (`l.append(l)`) is no constant: asking its items again
        # would recurse forever.
        if self._asking:
            return False
        self._asking = True
        try:
            return all(v.is_constant() for v in self.values)
        finally:
            self._asking = False

    def as_constant(self) -> Any:
        return self.kind(v.as_constant() for v in self.values)

    def items(self, tx: Translator) -> list[VariableTracker]:
        return list(self.values)

    def truth(self, tx: Translator) -> bool:
        return self.length(tx) > 0

    def length(self, tx: Translator) -> int:
        return len(self.values)

    def getitem(self, tx: Translator, key: VariableTracker) -> VariableTracker:
        index = as_index(tx, key)
        if isinstance(index, slice):
            with raised_by_python(f"slicing a {self.kind.__name__}"):
                values = self.values[index]
            return type(self)(values) if self.kind is not torch.Size else SizeVariable(values)
        try:
            return self.values[index]
        except (IndexError, TypeError) as error:
            raise Raised(error, f"indexing {self.kind.__name__} with {index!r}: {error}") from None

    def call_method(self, tx: Translator, name: str, args: list[VariableTracker],
                    kwargs: dict[str, VariableTracker]) -> VariableTracker:
        if name == "__getitem__":
            return self.getitem(tx, args[0])
        if name == "__len__":
            return ConstantVariable(self.length(tx))
        if name == "index" and len(args) > 1 and all(a.is_constant() for a in args) and \
                self.is_constant():
            if holds_nan(args[0].as_constant()):
                pin_nan(tx, self, args[0])  # (identity first: which NaN it is decides)
            try:
                return ConstantVariable(self.as_constant().index(*[a.as_constant() for a in args]))
            except ValueError as error:  # the frame's `except ValueError` may catch it
                raise Raised(error, f"{self.kind.__name__}.index(): {error}") from None
        if name == "index" and len(args) == 1:
            return ConstantVariable(self._index(tx, args[0]))
        if name == "count" and self.is_constant() and args[0].is_constant():
            return ConstantVariable(sum(same_or_equal(tx, v, args[0]) for v in self.values))
        return self._mutate(tx, name, args, kwargs)

    def _index(self, tx: Translator, target: VariableTracker) -> int:
        """`seq.index(target)`: the first item that is `target` or equals it (`==` traced: on
        a tensor, a data-dependent break)."""
        from dynamo.variables.builtins import BuiltinVariable

        for i, item in enumerate(self.values):
            if item.is_constant() and target.is_constant():
                if same_or_equal(tx, item, target):  # (identity first, as Python's)
                    return i
            elif item is target or BuiltinVariable(operator.eq).call(
                    tx, [item, target], {}).truth(tx):
                return i
        error = ValueError(f"{target} is not in {self.kind.__name__}")
        if target.is_constant() and self.is_constant():
            try:  # eager's own message
                self.as_constant().index(target.as_constant())
            except ValueError as raised:
                error = raised
        raise Raised(error, f"{self.kind.__name__}.index(): the value is not in it (ValueError)")

    def _mutate(self, tx, name, args, kwargs) -> VariableTracker:
        raise Unsupported(f"{self.kind.__name__}.{name}()")

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.values})"


class TupleVariable(SequenceVariable):
    kind = tuple


class NamedTupleVariable(TupleVariable):
    """An instance of a namedtuple class, or of a torch.return_types structseq. One made in
    the trace knows where its class was read (`class_source`), to guard the methods it reads
    there."""

    def __init__(self, items: list[VariableTracker], kind: type, fields: tuple[str, ...],
                 source: Any = None, class_source: Any = None) -> None:
        super().__init__(items, source)
        self.kind = kind
        self.fields = fields
        self.class_source = TypeSource(source) if source is not None else class_source

    def as_constant(self) -> Any:
        values = [v.as_constant() for v in self.values]
        return self.kind(*values) if hasattr(self.kind, "_fields") else self.kind(values)

    def getattr(self, tx: Translator, name: str) -> VariableTracker:
        if name in self.fields:
            return self.values[self.fields.index(name)]
        if name == "_fields":
            return ConstantVariable(self.fields)
        if name in ("_replace", "_asdict") and hasattr(self.kind, "_fields") or \
                name == "_make" and _namedtuple_make(self.kind):
            from dynamo.variables.functions import BoundMethodVariable

            return BoundMethodVariable(self, name)
        from dynamo.variables.objects import class_attribute, plain_class_attribute

        found, member = class_attribute(self.kind, name)
        if isinstance(member, (types.FunctionType, property, staticmethod, classmethod)):
            return self._class_member(tx, name, member)
        if found and self.class_source is not None and plain_class_attribute(name, member):
            from dynamo.variables.builder import wrap

            return wrap(tx, member, AttrSource(self.class_source, name))
        raise Unsupported(f"attribute {name!r} of a {self.kind.__qualname__}")

    def _class_member(self, tx: Translator, name: str, member: Any) -> VariableTracker:
        """A method, property, static or class method the named tuple's class defines
        (`class Out(NamedTuple): def total(self): ...`), inlined; read from the class, where it
        is guarded (a method replaced on the class recompiles)."""
        from dynamo.variables.builder import wrap
        from dynamo.variables.functions import UserMethodVariable
        from dynamo.variables.objects import UserClassVariable

        on_class = AttrSource(self.class_source, name) if self.class_source is not None else None
        if isinstance(member, property):
            return wrap(tx, member.fget, on_class and AttrSource(on_class, "fget")).call(
                tx, [self], {})
        if isinstance(member, staticmethod):
            return wrap(tx, member.__func__, on_class)
        if isinstance(member, classmethod):
            function = wrap(tx, member.__func__, on_class and AttrSource(on_class, "__func__"))
            return UserMethodVariable(function, UserClassVariable(self.kind, self.class_source))
        return UserMethodVariable(wrap(tx, member, on_class), self)

    def call_method(self, tx: Translator, name: str, args: list[VariableTracker],
                    kwargs: dict[str, VariableTracker]) -> VariableTracker:
        if name == "_asdict":
            return DictVariable(dict(zip(self.fields, self.values)))
        if name == "_make" and len(args) == 1 and not kwargs:  # `cls._make(iterable)`
            values = iterate(tx, args[0]).items(tx)
            if len(values) != len(self.fields):
                raise Raised(TypeError(f"Expected {len(self.fields)} arguments, got "
                                       f"{len(values)}"), f"{self.kind.__qualname__}._make()")
            return NamedTupleVariable(values, self.kind, self.fields,
                                      class_source=self.class_source)
        if name == "_replace":
            unknown = set(kwargs) - set(self.fields)
            if unknown:
                raise Raised(ValueError(f"Got unexpected field names: {sorted(unknown)}"),
                             f"{self.kind.__qualname__}._replace() of unknown fields")
            return NamedTupleVariable([kwargs.get(f, v) for f, v in zip(self.fields, self.values)],
                                      self.kind, self.fields, class_source=self.class_source)
        return super().call_method(tx, name, args, kwargs)


def _namedtuple_make(kind: type) -> bool:
    """Whether `kind._make` is the one `collections.namedtuple` made (`tuple.__new__` of the
    items, which the trace cannot call), not a class's own."""
    from dynamo.variables.objects import class_attribute

    member = class_attribute(kind, "_make")[1]
    return hasattr(kind, "_fields") and isinstance(member, classmethod) and \
        getattr(member.__func__, "__module__", None) == "collections"


def tuple_fields(value: tuple) -> tuple[str, ...]:
    """The field names of a namedtuple or structseq instance, in order."""
    if hasattr(type(value), "_fields"):
        return tuple(type(value)._fields)
    names = [n for n in dir(type(value)) if not n.startswith("_") and not n.startswith("n_")
             and type(getattr(type(value), n)).__name__ == "member_descriptor"]
    by_position = {next(i for i, v in enumerate(value) if getattr(value, n) is v): n
                   for n in names}
    return tuple(by_position[i] for i in sorted(by_position))


class SizeVariable(TupleVariable):
    """`tensor.shape`: a torch.Size whose entries are ints or symbolic sizes."""

    kind = torch.Size

    def as_constant(self) -> Any:
        return torch.Size([v.as_constant() for v in self.values])

    def call_method(self, tx: Translator, name: str, args, kwargs) -> VariableTracker:
        if name == "numel":
            import operator

            from dynamo.variables.builtins import BuiltinVariable

            total: VariableTracker = ConstantVariable(1)
            for v in self.values:
                total = BuiltinVariable(operator.mul).call(tx, [total, v], {})
            return total
        return super().call_method(tx, name, args, kwargs)


class ListVariable(SequenceVariable):
    """A list. One from the frame is read (its length and items guarded) only when the code
    looks into it: a list the code only appends to (`history.append(loss)`) is not, so its
    growth from call to call does not recompile; the appends are replayed as an `extend`."""

    kind = list
    _read: Callable[[], list[VariableTracker]] | None = None  # a frame list not read yet
    owner: VariableTracker | None = None  # the list subclass's instance these are the items of
    appended: list[VariableTracker]  # what was appended to it before it was read

    _length: Callable[[], int] | None = None  # a frame list's length, guarded
    _item: Callable[[int], VariableTracker] | None = None  # one item of it, guarded

    @staticmethod
    def of_frame(read: Callable[[], list[VariableTracker]], source: Any,
                 length: Callable[[], int] | None = None,
                 item: Callable[[int], VariableTracker] | None = None) -> ListVariable:
        """A list from the frame, read whole (`read`) only when the code needs all its items:
        `len(lst)` and `lst[3]` guard its length and the item read (`length`, `item`), not
        every item (a list of 10,000 token ids indexed once costs two guards, not 10,000)."""
        made = ListVariable([], source)
        made._read, made.appended, made._length, made._item = read, [], length, item
        return made

    def length(self, tx: Translator) -> int:
        if self.unread and self._length is not None:
            return self._length() + len(self.appended)
        return super().length(tx)

    def getitem(self, tx: Translator, key: VariableTracker) -> VariableTracker:
        if self.unread and not self.appended and self._item is not None and \
                not isinstance(key, SliceVariable):
            index, size = as_index(tx, key), self._length()
            if type(index) is int and -size <= index < size:
                return self._item(index % size)
        return super().getitem(tx, key)

    @property
    def values(self) -> list[VariableTracker]:
        if self._read is not None:
            read, self._read = self._read, None
            self._values = read() + self.appended
        return self._values

    @values.setter
    def values(self, items: list[VariableTracker]) -> None:
        self._values = items

    @property
    def unread(self) -> bool:
        """Whether the code has only appended to this list from the frame."""
        return self._read is not None

    def call_method(self, tx: Translator, name: str, args: list[VariableTracker],
                    kwargs: dict[str, VariableTracker]) -> VariableTracker:
        # `list.__iter__(obj)` and the like: what a list subclass's instance inherits
        if name == "__iter__":
            return IteratorVariable.over(self, tx)
        if name == "__reversed__":
            return ReversedListIteratorVariable(self)
        if name == "__iadd__":
            self._mutate(tx, "extend", args, kwargs)
            return self
        if name in ("__add__", "__mul__", "__rmul__"):
            from dynamo.variables.builtins import _sequence_arith

            fn = operator.add if name == "__add__" else operator.mul
            return _sequence_arith(tx, fn, self, args[0])
        if name in ("__contains__", "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__"):
            from dynamo.variables.builtins import BuiltinVariable

            other = args[0]
            if name != "__contains__":  # against a list (a subclass's instance: its items)
                if not issubclass(other.python_type(), list):
                    return ConstantVariable(NotImplemented)
                other = ListVariable(other.items(tx))
            return BuiltinVariable(getattr(operator, name.strip("_"))).call(tx, [self, other], {})
        return super().call_method(tx, name, args, kwargs)

    def _mutate(self, tx, name, args, kwargs) -> VariableTracker:
        if name == "copy":
            return ListVariable(list(self.values))
        tx.output.side_effects.mutated(self)
        if name in ("append", "extend"):
            for value in [args[0]] if name == "append" else one_by_one(tx, args[0]):
                if self.unread:  # (`lst.extend(lst)` read the list itself: no longer unread)
                    self.appended.append(value)
                else:
                    self.values.append(value)
            return ConstantVariable(None)
        values = self.values
        if name == "__init__":  # a list subclass's, through super()
            values[:] = args[0].items(tx) if args else []
        elif name == "insert":
            with raised_by_python("list.insert()"):
                values.insert(args[0].as_constant(), args[1])
        elif name == "pop":
            try:
                return values.pop(*[as_index(tx, a) for a in args])
            except IndexError as error:  # the frame's `except IndexError` may catch it
                raise Raised(error, f"list.pop(): {error}") from None
        elif name == "clear":
            values.clear()
        elif name == "reverse":
            values.reverse()
        elif name == "sort" and not args:
            from dynamo.variables.builtins import sort_values

            values[:] = sort_values(tx, values, kwargs.get("key"), kwargs.get("reverse"))
        elif name == "__setitem__":
            index = as_index(tx, args[0])
            value = args[1].items(tx) if isinstance(index, slice) else args[1]
            with raised_by_python("setting a list's item"):
                values[index] = value
        elif name == "__delitem__":
            try:
                del values[as_index(tx, args[0])]
            except IndexError as error:  # the frame's `except IndexError` may catch it
                raise Raised(error, f"del of a list's item: {error}") from None
        elif name == "remove" and args[0].is_constant():
            item = args[0].as_constant()
            index = _index_of_constant(tx, values, args[0], self.kind)
            if index is None:  # the frame's `except ValueError` may catch it
                error = ValueError(f"{item!r} is not in deque" if self.kind is collections.deque
                                   else "list.remove(x): x not in list")
                raise Raised(error, f"{self.kind.__name__}.remove(): {error}")
            del values[index]
        else:
            raise Unsupported(f"list.{name}()")
        return ConstantVariable(None)


class DequeVariable(ListVariable):
    """A `collections.deque` (made in the trace, or from the frame): a list of trackers whose
    ends both grow and shrink, trimmed to `maxlen` from the other end as it grows."""

    kind = collections.deque

    def __init__(self, items: list[VariableTracker], source: Any = None,
                 maxlen: int | None = None) -> None:
        super().__init__(items[-maxlen:] if maxlen is not None and maxlen < len(items)
                         else items, source)
        self.maxlen = maxlen

    def as_constant(self) -> Any:
        return collections.deque((v.as_constant() for v in self.values), self.maxlen)

    def getattr(self, tx: Translator, name: str) -> VariableTracker:
        if name == "maxlen":
            return ConstantVariable(self.maxlen)
        return super().getattr(tx, name)

    def _mutate(self, tx, name, args, kwargs) -> VariableTracker:
        values = self.values
        if name == "copy":
            return DequeVariable(list(values), maxlen=self.maxlen)
        if name == "extend":  # the deque trimmed as each item is added, before the next
            for value in one_by_one(tx, args[0]):
                self._mutate(tx, "append", [value], {})
            return ConstantVariable(None)
        if name not in ("appendleft", "popleft", "extendleft", "rotate", "pop"):
            result = super()._mutate(tx, name, args, kwargs)
            if self.maxlen is not None and len(values) > self.maxlen:  # grown at the right
                del values[:len(values) - self.maxlen]
            return result
        tx.output.side_effects.mutated(self)
        if name in ("popleft", "pop") and not args:
            if not values:
                raise Raised(IndexError("pop from an empty deque"), f"{name}() of an empty deque")
            return values.pop(0 if name == "popleft" else -1)
        if name == "rotate":
            steps = as_index(tx, args[0]) if args else 1
            if values:
                steps %= len(values)
                values[:] = values[-steps:] + values[:-steps]
            return ConstantVariable(None)
        for value in [args[0]] if name == "appendleft" else one_by_one(tx, args[0]):
            values.insert(0, value)
            if self.maxlen is not None and len(values) > self.maxlen:  # grown at the left
                del values[self.maxlen:]
        return ConstantVariable(None)


_UNREAD = object()  # a value of a frame's dict that the trace has not read yet


class ObjectKey:
    """A dict key compared by identity: a tensor, a module or an instance of a user class from
    the frame (an optimizer's `state[p]`), or a tuple holding such objects (`(module, "scale")`).
    It hashes as its object and equals it (and every ObjectKey of it; a tuple, item by item:
    an object as itself, a constant by value), which is how a real dict finds such a key; and
    it knows the tracker the trace reaches the object by (`make`, called when first needed: the
    key of a frame dict is wrapped only if the code iterates over it; a tuple's items have
    sources of their own, so a module in it is traced as a module, its parameters graph inputs)."""

    __slots__ = ("value", "_make", "_tracker")

    def __init__(self, value: Any, make: Callable[[], VariableTracker]) -> None:
        self.value, self._make, self._tracker = value, make, None

    def __hash__(self) -> int:
        return hash(self.value)

    def __eq__(self, other: object) -> bool:
        return _same_key(key_value(other), self.value)

    @property
    def tracker(self) -> VariableTracker:
        if self._tracker is None:
            self._tracker = self._make()
        return self._tracker


def key_value(k: Any) -> Any:
    """The real key a dict entry of a tracker has."""
    return k.value if type(k) is ObjectKey else k


def _same_key(a: Any, b: Any) -> bool:
    """Whether a dict takes keys `a` and `b` (of one hash) for one key: an object compared by
    identity is only itself (a tensor's `==` compares elements), a tuple is its items so
    compared, any other key is compared by `==` (as the dict would)."""
    if a is b:
        return True
    if type(a) is tuple and type(b) is tuple:
        return len(a) == len(b) and all(map(_same_key, a, b))
    if type(a) is tuple or type(b) is tuple or by_identity(a) or by_identity(b):
        return False
    return bool(a == b)


def key_variable(k: Any) -> VariableTracker:
    """The tracker of a dict entry's key."""
    return k.tracker if type(k) is ObjectKey else ConstantVariable(k)


def dict_key(key: VariableTracker, tx: Translator | None = None,
             looked_up_in: DictVariable | None = None) -> Any:
    """The Python key a tracker stands for (a symbolic int is decided, under a guard). Given
    `tx`, an object from the frame compared by identity is a key too (an `ObjectKey`, its
    identity guarded); a set's elements (no `tx`) are constants only. A NaN only looked up
    (`looked_up_in`) in a dict whose keys are known and hold no NaN is not guarded by
    identity: no NaN finds such a dict's keys, whichever object it is (a fresh NaN each call
    recompiled at each call)."""
    from dynamo.variables.tensor import concrete_int

    try:
        value = concrete_int(key)
    except Unsupported:
        found = _object_key(tx, key) if tx is not None else None
        if found is None:
            found = _frozen_dataclass_key(key)
        if found is not None:
            return found
        kind = key.python_type().__name__
        made_here = "" if key.source is not None else " made in the frame" + (
            " (its hash is known only when the program runs)"
            if key.python_type().__hash__ is object.__hash__ else "")
        raise Unsupported(f"a dict key that is {'an' if kind[0] in 'aeiouAEIOU' else 'a'} "
                          f"{kind}{made_here}: only "
                          "constant keys (str, int, tuples of them, ...) and objects from the "
                          "frame's inputs compared by identity (tensors, modules, instances of "
                          "classes without an __eq__ or __hash__ of their own) are traced") from None
    with raised_by_python("hashing a key"):  # (`{[1]: 2}`: a list is no key)
        hash(value)
    if tx is not None and holds_nan(value) and not (
            looked_up_in is not None and not looked_up_in.unread and
            not any(holds_nan(key_value(k)) for k in looked_up_in._entries)):
        pin_nan(tx, key)  # a dict finds a NaN key by identity
    return value


def _frozen_dataclass_key(key: VariableTracker) -> Any:
    """A frozen dataclass the trace made, of constant fields (`Key("a", 2)`): hashed and compared
    by value, it is a constant key, made for real (without its `__init__`, which sets the same
    fields). None for anything else."""
    import dataclasses

    from dynamo.variables.user_objects import NewObjectVariable

    cls = getattr(key, "cls", None)
    params = getattr(cls, "__dataclass_params__", None)
    if not (isinstance(key, NewObjectVariable) and params is not None and params.frozen
            and params.eq and not hasattr(cls, "__post_init__")):
        return None
    fields = [f.name for f in dataclasses.fields(cls)]
    values = [key.attrs.get(name) for name in fields]
    if set(key.attrs) != set(fields) or not all(v is not None and v.is_constant() for v in values):
        return None
    made = object.__new__(cls)
    for name, value in zip(fields, values):
        object.__setattr__(made, name, value.as_constant())
    return made


def _object_key(tx: Translator, key: VariableTracker) -> ObjectKey | None:
    from dynamo.variables.objects import ObjectVariable
    from dynamo.variables.tensor import TensorVariable, concrete_int
    from dynamo.variables.user_objects import NewObjectVariable
    from guards import Identity

    if type(key) is TupleVariable:
        # `d[(module, "scale")]`: its items each a constant or an object so found (guarded)
        values = []
        for item in key.values:
            try:
                values.append(concrete_int(item))
                if holds_nan(values[-1]):
                    pin_nan(tx, item)  # (a dict finds a NaN by identity)
            except Unsupported:
                found = _object_key(tx, item)
                if found is None:
                    return None
                values.append(found.value)
        return ObjectKey(tuple(values), lambda: key)
    if key.source is None:
        return None
    if isinstance(key, TensorVariable):
        value = tx.output.input_value(key.source)
    elif isinstance(key, ObjectVariable) and not isinstance(key, NewObjectVariable) and \
            by_identity(key.value) and type(key.value).__hash__ is object.__hash__:
        value = key.value  # (a `__hash__` of the class's own would run here, not in the graph)
    else:
        return None
    if value is None:
        return None
    tx.output.add_guard(Identity.of(key.source, value))
    return ObjectKey(value, lambda: key)


# A module's tables of parameters, buffers and submodules, and the dict methods that write
_MODULE_TABLES = ("_parameters", "_buffers", "_modules")
_DICT_WRITES = ("__setitem__", "__delitem__", "update", "pop", "popitem", "setdefault", "clear")


class DictVariable(VariableTracker):
    """A dict with constant keys (strings, ints, ...) and tracker values.

    A dict from the frame has its keys guarded as a whole when the code first looks at them,
    and each value wrapped (and guarded) when the code first reads it (`read`): a config's
    `__dict__` costs guards only on the entries the code uses, and a dict the code only writes
    to (`activations["relu"] = y`) costs none: its writes are replayed one by one."""

    _keys_of: Callable[[], tuple] | None = None  # a frame dict whose keys are not read yet
    _has: Callable[[Any], bool] | None = None  # a frame dict's: whether it holds a literal key
    written: dict[Any, VariableTracker]  # what was stored into it before they were
    frame_size: int | None = None  # a frame dict's: how many entries the real one holds

    def __init__(self, entries: dict[Any, Any], source: Any = None, kind: type = dict,
                 read: Callable[[Any], VariableTracker] | None = None,
                 default_factory: VariableTracker | None = None) -> None:
        self._entries = dict(entries)
        self.source = source
        self.kind = kind  # dict, OrderedDict or defaultdict (made in the trace), a frame's kind
        self._read = read
        self.default_factory = default_factory  # a defaultdict's, made in the trace

    @staticmethod
    def of_frame(keys_of: Callable[[], tuple], source: Any,
                 read: Callable[[Any], VariableTracker],
                 has: Callable[[Any], bool]) -> DictVariable:
        """A dict from the frame: its keys, from `keys_of` when first needed; each value,
        wrapped by `read` when first read. Until then `key in d` asks `has` (a guard on that
        key alone: `"torch" in sys.modules` must not guard every module's name)."""
        made = DictVariable({}, source, read=read)
        made._keys_of, made.written, made._has, made._early = keys_of, {}, has, {}
        return made

    @property
    def _entries(self) -> dict[Any, Any]:
        if self._keys_of is not None:
            keys_of, self._keys_of = self._keys_of, None
            self._items = dict.fromkeys(keys_of(), _UNREAD)
            self.frame_size = len(self._items)
            self._items.update(self._early)
            self._items.update(self.written)
        return self._items

    @_entries.setter
    def _entries(self, items: dict[Any, Any]) -> None:
        self._items = items

    @property
    def unread(self) -> bool:
        """Whether the code has only stored into this dict from the frame."""
        return self._keys_of is not None

    def overlaid(self, entries: dict[Any, VariableTracker]) -> DictVariable:
        """A view of this dict with `entries` set on top (values not read yet are read from
        this one when needed)."""
        made = DictVariable({**self._entries, **entries}, self.source, read=self.lookup)
        made.frame_size = self.frame_size
        return made

    @property
    def size_before_replay(self) -> int | None:
        """How many entries the real dict holds where the transformed frame rebuilds what
        refers to it (before it replays the trace's writes): a frame dict's own, or all of a
        dict the trace made (built whole)."""
        return self.frame_size if self.source is not None else len(self._entries)

    @property
    def entries(self) -> dict[Any, VariableTracker]:
        """Every entry, each value read."""
        if self._read is not None:
            for k in self._entries:
                self.lookup(k)
            self._read = None
        return self._entries

    def has_key(self, k: Any) -> bool:
        if self.unread and is_literal(k):
            return k in self.written or self._has(k)
        return k in self._entries

    def lookup(self, k: Any) -> VariableTracker:
        """The value of key `k` (which must be present)."""
        if self.unread:  # keys not read yet: the value of a key `has_key` found
            if k in self.written:
                return self.written[k]
            if k not in self._early:
                self._early[k] = self._read(k)
            return self._early[k]
        value = self._entries[k]
        if value is _UNREAD:
            value = self._entries[k] = self._read(k)
        return value

    def entry(self, view: str, k: Any) -> VariableTracker:
        """What iterating the `view` ("keys", "values" or "items") gives for key `k`."""
        if view == "keys":
            return key_variable(k)
        value = self.lookup(k)
        return value if view == "values" else TupleVariable([key_variable(k), value])

    def python_type(self) -> type:
        return self.kind

    def items(self, tx: Translator) -> list[VariableTracker]:
        return [key_variable(k) for k in self._entries]

    def truth(self, tx: Translator) -> bool:
        return bool(self._entries)

    def getattr(self, tx: Translator, name: str) -> VariableTracker:
        if name == "default_factory" and self.kind is collections.defaultdict:
            return self.default_factory or ConstantVariable(None)
        return super().getattr(tx, name)

    def getitem(self, tx: Translator, key: VariableTracker) -> VariableTracker:
        # (a defaultdict stores a missing key: a NaN stored is the frame's object, guarded)
        k = dict_key(key, tx, self if self.default_factory is None else None)
        if not self.has_key(k):
            if self.default_factory is not None:  # defaultdict: made, stored and returned
                tx.output.side_effects.mutated(self)
                self._entries[k] = self.default_factory.call(tx, [], {})
                return self._entries[k]
            raise Raised(KeyError(key_value(k)), f"dict key {key_value(k)!r} is missing (a KeyError while tracing)")
        return self.lookup(k)

    def call_method(self, tx: Translator, name: str, args: list[VariableTracker],
                    kwargs: dict[str, VariableTracker]) -> VariableTracker:
        if name == "__getitem__":
            return self.getitem(tx, args[0])
        if name == "__len__":
            return ConstantVariable(len(self._entries))
        if name == "__contains__":
            return ConstantVariable(self.has_key(dict_key(args[0], tx, self)))
        if name in ("__iter__", "__reversed__"):
            return DictIteratorVariable(self, reverse=name == "__reversed__")
        if name in ("keys", "values", "items"):
            return DictViewVariable(self, name)
        if name == "get":
            if not 1 <= len(args) <= 2:  # (Python's words)
                bound = "least 1 argument" if not args else "most 2 arguments"
                message = f"get expected at {bound}, got {len(args)}"
                raise python_error(TypeError(message))
            k = dict_key(args[0], tx, self)
            if self.has_key(k):
                return self.lookup(k)
            return args[1] if len(args) > 1 else ConstantVariable(None)
        if name in _DICT_WRITES and getattr(self.source, "attr", None) in _MODULE_TABLES:
            # (as functional_call swaps parameters in): module attribute reads see the module
            raise Unsupported(f"writing into a module's {self.source.attr} dict (dict.{name})")
        if name == "__setitem__" and self.unread:
            tx.output.side_effects.mutated(self)
            self.written[dict_key(args[0], tx)] = args[1]
            return ConstantVariable(None)
        entries = self.entries
        if name == "copy":
            return DictVariable(entries, kind=self.kind if self.source is None else dict,
                                default_factory=self.default_factory)
        tx.output.side_effects.mutated(self)
        if name == "__setitem__":
            entries[dict_key(args[0], tx)] = args[1]
        elif name in ("update", "__init__"):  # `__init__`: a dict subclass's, through super()
            if args:
                from dynamo.variables.builtins import store_entries

                store_entries(tx, entries, args[0])
            entries.update(kwargs)
        elif name == "pop":
            key = dict_key(args[0], tx)
            if key in entries:
                return entries.pop(key)
            if len(args) > 1:
                return args[1]
            raise Raised(KeyError(key_value(key)), f"dict.pop({key_value(key)!r}) of a missing key")
        elif name == "setdefault":
            return entries.setdefault(dict_key(args[0], tx),
                                      args[1] if len(args) > 1 else ConstantVariable(None))
        elif name == "__delitem__":
            key = dict_key(args[0], tx)
            if key not in entries:  # the frame's `except KeyError` may catch it
                raise Raised(KeyError(key_value(key)), f"del of a missing key {key_value(key)!r}")
            del entries[key]
        elif name == "clear":
            entries.clear()
        elif name == "move_to_end" and self.kind is collections.OrderedDict:
            key = dict_key(args[0], tx)
            if key not in entries:
                raise Raised(KeyError(key_value(key)), f"move_to_end() of a missing key "
                             f"{key_value(key)!r}")
            value = entries.pop(key)
            last = args[1] if len(args) > 1 else kwargs.get("last", ConstantVariable(True))
            if last.as_constant():
                entries[key] = value
            else:
                entries = {key: value, **entries}
                self._entries.clear()
                self._entries.update(entries)
        elif name == "popitem" and not entries:
            error = KeyError("dictionary is empty" if self.kind is collections.OrderedDict
                             else "popitem(): dictionary is empty")
            raise Raised(error, f"popitem() of an empty {self.kind.__name__}")
        elif name == "popitem":
            last = args[0] if args else kwargs.get("last", ConstantVariable(True))
            key = next(reversed(entries)) if last.as_constant() else next(iter(entries))
            return TupleVariable([key_variable(key), entries.pop(key)])
        else:
            raise Unsupported(f"dict.{name}()")
        return ConstantVariable(None)

    def __repr__(self) -> str:
        return f"DictVariable({self._entries})"


class SetVariable(VariableTracker):
    """A set of constants."""

    def __init__(self, values: Any, source: Any = None) -> None:
        # A set's order is its hash table's: a copy (`set(s)`) may order the same items
        # otherwise (another table size). One from the frame is copied, and iterates in the
        # real set's order (`order`, which its guard holds) until the trace changes it. The
        # changes made to a set are kept in order (`log`): made again on the real set from the
        # frame, so that it ends as eager's does, and by the transformed frame on a set the
        # trace built (`built`), from an empty one.
        self.values = set(values)
        self.source = source
        self.order = tuple(values) if source is not None else None
        self.log: list[tuple[str, tuple]] = []
        self.built = False

    @classmethod
    def made(cls, items: Any) -> SetVariable:
        """A set the trace builds (a literal, `set(iterable)`): from an empty set updated with
        `items` (a tuple, or a set or frozenset merged whole), as eager builds it, so that it
        iterates in eager's order."""
        made = cls(())
        made.built = True
        made.change("update", items)
        return made

    @classmethod
    def result(cls, result: set, base: set | None = None, name: str | None = None,
               args: tuple = ()) -> SetVariable:
        """A new set a set operation returned (`base.union(*args)`, `a | b`): it iterates as
        that result does, and is made again as eager made it, where one of the ways tried
        below lays it out so (a copy, as `SetVariable(result)` made it, may order the items
        otherwise: `{0, 1, 99}.union({1, 33})` iterated 0, 1, 99, 33 where eager's 33 is
        before 99)."""
        made = cls(())
        made.values = result  # (the trace's own result, laid out as eager's)
        tries = [[("update", (tuple(result),))]]
        if base is not None and name in _IN_PLACE_OF:
            start = [("update", (frozenset(base),))]  # (a copy of base, as set_copy makes it)
            tries.insert(0, start + ([(_IN_PLACE_OF[name], args)] if _IN_PLACE_OF[name] else []))
        for log in tries:
            again = set_from_log(log)
            if list(again) == list(result) and sys.getsizeof(again) == sys.getsizeof(result):
                made.built = True
                made.log = log
                break
        return made

    def change(self, name: str, *args: Any) -> None:
        """`set.name(*args)` (`add`, `update`, ...) of constants, on the trace's copy, logged."""
        getattr(self.values, name)(*args)
        self.log.append((name, args))

    def pin_nans(self, tx: Translator) -> None:
        """Guard by identity the NaNs this set holds, where which NaN objects they are decides
        an answer (a lookup of a NaN: a set finds a NaN by identity): one from the frame has
        them by their place in its order; one the trace built or changed knows no source of
        them, and breaks."""
        from dynamo.sources import SetItemsSource
        from guards import GetItemSource, Identity

        if not any(map(holds_nan, self.values)):
            return
        if self.source is None or self.order is None:
            raise Unsupported("a set the trace built or changed holding a NaN, meeting "
                              "another NaN (which NaN objects they are decides, and is not "
                              "traced)")
        for i, v in enumerate(self.order):
            if holds_nan(v):
                tx.output.add_guard(Identity.of(GetItemSource(SetItemsSource(self.source), i), v))

    def python_type(self) -> type:
        return set

    def is_constant(self) -> bool:
        return True

    def as_constant(self) -> Any:
        return set(self.values)

    def items(self, tx: Translator) -> list[VariableTracker]:
        return [ConstantVariable(v) for v in (self.values if self.order is None else self.order)]

    def truth(self, tx: Translator) -> bool:
        return bool(self.values)

    def call_method(self, tx, name, args, kwargs) -> VariableTracker:
        constants = []
        for a in args:
            try:
                constants.append(a.as_constant())
            except Unsupported:  # (a set holds constants only)
                raise Unsupported(f"set.{name}() of {a.words()}, not a constant") from None
        if any(map(holds_nan, constants)):  # (a NaN is found by identity)
            self.pin_nans(tx)
            pin_nan(tx, *args)
        if name in ("__contains__", "issubset", "issuperset", "isdisjoint", "union",
                    "intersection", "difference", "symmetric_difference", "__len__", "copy"):
            result = getattr(self.values, name)(*constants)
            return SetVariable.result(result, self.values, name, tuple(constants)) \
                if isinstance(result, set) else ConstantVariable(result)
        if name == "remove" and constants[0] not in self.values:  # `except KeyError` may catch it
            raise Raised(KeyError(constants[0]), f"set.remove() of a missing item {constants[0]!r}")
        tx.output.side_effects.mutated(self)
        if name in ("add", "discard", "remove", "update", "clear", "difference_update",
                    "intersection_update", "symmetric_difference_update"):
            self.change(name, *constants)
            self.order = None
            return ConstantVariable(None)
        raise Unsupported(f"set.{name}()")


def _index_of_constant(tx: Translator, values: list[VariableTracker], target: VariableTracker,
                       kind: type) -> int | None:
    """Where the first item equal to constant `target` is, as Python compares them in order
    (identity first: a NaN found); an item that is no constant and may compare equal (a
    symbolic size, a tensor, an object with an `__eq__` of its own) cannot be answered while
    tracing."""
    for index, v in enumerate(values):
        if v.is_constant():
            if same_or_equal(tx, v, target):
                return index
        elif not _compares_by_identity(v):
            raise Unsupported(f"{kind.__name__}.remove() past an item that may equal "
                              f"{target.as_constant()!r}")
    return None


def holds_nan(value: Any) -> bool:
    """Whether a constant is or holds (in its tuples, lists, sets) a NaN: where Python
    compares items by identity first (`in`, a dict or set lookup, `list.count`, tuples' `==`),
    which NaN object it is decides, and a value guard holds any NaN."""
    if isinstance(value, (tuple, frozenset, list, set)):
        return any(map(holds_nan, value))
    if isinstance(value, (float, complex)):  # (np.float64 too)
        return value != value
    return False


def pin_nan(tx: Translator, *trackers: VariableTracker) -> None:
    """Guard by identity each of `trackers` from the frame whose value holds a NaN (a list's
    items each), where an answer rests on which NaN object it is."""
    from guards import Identity

    for v in trackers:
        if isinstance(v, SequenceVariable):
            pin_nan(tx, *v.values)
        elif isinstance(v, SetVariable):
            v.pin_nans(tx)
        elif v.source is not None and v.is_constant() and holds_nan(v.as_constant()):
            tx.output.add_guard(Identity.of(v.source, v.as_constant()))


def admit_nans(tx: Translator, items: list[VariableTracker],
               into: SetVariable | None = None) -> None:
    """Before `items` go into a set (`{a, b}`, `set(l)`, a set comprehension): a set keeps one of
    two NaNs only when they are one object, and the transformed frame puts the trace's own
    objects into it, so a NaN from the frame is guarded by identity (and the NaNs `into` holds,
    where one meets them)."""
    nans = [v for v in items if v.is_constant() and holds_nan(v.as_constant())]
    if nans and into is not None and any(map(holds_nan, into.values)):
        into.pin_nans(tx)
    pin_nan(tx, *nans)


def same_or_equal(tx: Translator, a: VariableTracker, b: VariableTracker) -> bool:
    """`a is b or a == b` of two constants, as containers compare their items (`in`, `count`,
    `index`, `remove`, a sequence's `==`). Where both hold a NaN, which objects they are decides:
    two from the frame are guarded to stay one object or two (a NaN against a NaN), others by
    identity."""
    from guards import DistinctObjects, SameObject

    if a is b:
        return True
    value_a, value_b = a.as_constant(), b.as_constant()
    same = value_a is value_b
    if holds_nan(value_a) and holds_nan(value_b):
        kinds = (tuple, frozenset, list)
        if a.source is not None and b.source is not None and not isinstance(
                a, (SequenceVariable, SetVariable)) and not isinstance(
                b, (SequenceVariable, SetVariable)) and (
                same or not (isinstance(value_a, kinds) or isinstance(value_b, kinds))):
            tx.output.add_guard(SameObject(a.source, b.source) if same
                                else DistinctObjects((a.source, b.source)))
        else:
            pin_nan(tx, a, b)
    return bool(same or value_a == value_b)


def _compares_by_identity(v: VariableTracker) -> bool:
    """Whether `v == c` is `v is c` for any constant c: a non-constant whose class keeps
    object's `__eq__` (a module, a function, a plain object) never equals a constant."""
    try:
        kind = v.python_type()
    except Exception:
        return False
    return getattr(kind, "__eq__", None) is object.__eq__


class SliceVariable(VariableTracker):
    """`a:b:c`, whose parts may be symbolic sizes or tensors' graph values."""

    def __init__(self, parts: list[VariableTracker]) -> None:
        self.parts = parts

    def python_type(self) -> type:
        return slice

    def is_constant(self) -> bool:
        return all(p.is_constant() for p in self.parts)

    def as_constant(self) -> Any:
        return slice(*[p.as_constant() for p in self.parts])

    def as_slice(self, tx: Translator) -> slice:
        from dynamo.variables.tensor import concrete_int

        return slice(*[concrete_int(p) for p in self.parts])

    def getattr(self, tx: Translator, name: str) -> VariableTracker:
        if name in ("start", "stop", "step"):  # a user's `__getitem__` given a slice
            parts = self.parts if len(self.parts) > 1 else [ConstantVariable(None), *self.parts]
            parts = [*parts, ConstantVariable(None)][:3]
            return parts[("start", "stop", "step").index(name)]
        return super().getattr(tx, name)


class IteratorVariable(VariableTracker):
    """An iterator made in the trace. This one gives the items of a list of trackers: those of
    a tuple, a set, a range, ... (computed when it is made), or for `iter(a_list)` that list's
    very items list, indexed live as CPython's list iterator does (appends made while iterating
    are seen). The iterators below make each item when it is taken, from the live container.

    Outside the trace (returned, or handed on at a graph break), codegen rebuilds an iterator as
    a real one over `over_list` advanced by `position` items when `over_list` is set, else as an
    iterator over the items left, `values[position:]`; the live iterators below as the real
    iterators of their kind over the real objects they iterate."""

    over_list: VariableTracker | None = None

    def __init__(self, values: list[VariableTracker], over: ListVariable | None = None) -> None:
        self.values = values
        self.position = 0
        self.over_list = over  # the list iterated, when `iter(list)` made it

    @staticmethod
    def over(value: VariableTracker, tx: Translator) -> IteratorVariable:
        """`iter(value)`: over a list, its very items list, so that appends made while
        iterating are seen, as in Python (and the iterator handed on is one over that list);
        over a dict or a view of one, the dict's entries as they are at each step."""
        from dynamo.variables.user_objects import UserObjectVariable, builtin_base

        if isinstance(value, ListVariable):
            return IteratorVariable(value.values, over=value)
        if isinstance(value, UserObjectVariable) and builtin_base(value.python_type()) is list:
            made = value.call_method(tx, "__iter__", [], {})  # list's own: live, as above
            if isinstance(made, IteratorVariable):
                return made
        if isinstance(value, DictVariable):
            return DictIteratorVariable(value)
        if isinstance(value, DictViewVariable):
            return DictIteratorVariable(value.dict, value.view)
        if isinstance(value, RangeVariable) and value.within_a_c_long():
            return SymbolicRangeIteratorVariable(value)
        if isinstance(value, ConstantVariable) and type(value.value) is range:
            return RangeIteratorVariable(value.value)
        if isinstance(value, UserObjectVariable) and builtin_base(value.python_type()) is object \
                and value.defines_in_python("__iter__") \
                and value.python_type().__iter__ is not collections.abc.Sequence.__iter__:
            made = value.iterator(tx)  # the class's own `__iter__`: its items when asked
            if isinstance(made, IteratorVariable):
                return made
            return IteratorVariable(made.items(tx))
        return IteratorVariable(value.items(tx))

    def python_type(self) -> type:
        return type(iter(()))

    def next(self, tx: Translator) -> VariableTracker | None:
        """The next item, or None once the iterator is exhausted."""
        if self.position >= len(self.values):
            self.values, self.position, self.over_list = [], 0, None  # for good, as in CPython
            return None
        self.position += 1
        return self.values[self.position - 1]

    def items(self, tx: Translator) -> list[VariableTracker]:
        rest = self.values[self.position:]
        self.position = len(self.values)
        return rest


def iterate(tx: Translator, value: VariableTracker) -> IteratorVariable:
    """`iter(value)`: an iterator made in the trace is its own."""
    return value if isinstance(value, IteratorVariable) else IteratorVariable.over(value, tx)


def one_by_one(tx: Translator, iterable: VariableTracker) -> Iterator[VariableTracker]:
    """The items a container's method adds (`list.extend`, `dict.update`), each taken after the
    one before was added, as CPython adds them: an iterator made in the trace (a generator,
    `map`, `zip`) or an object of a Python class whose own `__iter__` makes its items is taken
    an item at a time, so its work sees the container grow; a builtin container is read whole
    first (`lst.extend(lst)` adds the list as it was)."""
    from dynamo.variables.user_objects import UserObjectVariable, builtin_base

    if isinstance(iterable, UserObjectVariable) and builtin_base(iterable.python_type()) is object:
        iterable = iterate(tx, iterable)
    if isinstance(iterable, IteratorVariable):
        while (value := iterable.next(tx)) is not None:
            yield value
    else:
        yield from iterable.items(tx)


class LiveIteratorVariable(IteratorVariable):
    """An iterator that makes each item when it is taken, from the live state of what it
    iterates (no list of items made up front). Codegen rebuilds it as the real iterator of its
    kind over the real objects below (`codegen.ResultBuilder._build`), not from its items."""

    position = 0

    def __init__(self) -> None:
        pass

    @property
    def values(self) -> list[VariableTracker]:
        raise Unsupported(f"{self.words()} cannot be rebuilt from the items it has left")

    def items(self, tx: Translator) -> list[VariableTracker]:
        taken = []
        while (value := self.next(tx)) is not None:
            taken.append(value)
        return taken


def _view_of(kind: type, view: str, entries: dict | None = None) -> Any:
    """The `view` of a dict like one of `kind` (an OrderedDict's views have types of their
    own) holding `entries`."""
    base = collections.OrderedDict if issubclass(kind, collections.OrderedDict) else dict
    return getattr(base(entries or {}), view)()


def broken_dict_iterator(ordered: bool) -> Any:
    """A real dict iterator whose dict changed size (an OrderedDict's: was mutated) since it
    was made: its next step raises, as a traced one found it must."""
    d = collections.OrderedDict(a=0) if ordered else {"a": 0}
    iterator = iter(d)
    d["b"] = 1
    return iterator


class DictIteratorVariable(LiveIteratorVariable):
    """`iter(d)`, `iter(d.items())`, `reversed(d.values())`, ...: each step reads the dict's
    entries as they are then; once the dict's size has changed, every step raises
    RuntimeError, as in Python (an OrderedDict's iterator ends, unchecked, once it has given
    the item that was last when it gave it)."""

    def __init__(self, d: DictVariable, view: str = "keys", reverse: bool = False) -> None:
        self.dict, self.view, self.reverse = d, view, reverse
        self.size = len(d._entries)  # checked at each step
        self.position = 0  # items taken
        self.ordered = issubclass(d.kind, collections.OrderedDict)
        self.finished = self.ordered and not self.size
        self.broken = False

    def python_type(self) -> type:
        view = _view_of(self.dict.kind, self.view)
        return type(reversed(view) if self.reverse else iter(view))

    def _keys(self) -> list[Any]:
        keys = list(self.dict._entries)
        return keys[::-1] if self.reverse else keys

    @property
    def broken_now(self) -> bool:
        """Its next step raises: its dict changed size since it was made."""
        return not self.finished and (self.broken or len(self.dict._entries) != self.size)

    def next(self, tx: Translator) -> VariableTracker | None:
        if self.finished:
            return None
        if self.broken_now:
            self.broken = True
            error = "OrderedDict mutated" if self.ordered else "dictionary changed size"
            raise Raised(RuntimeError(f"{error} during iteration"),
                         "a dict changed size while it was iterated (a RuntimeError)")
        keys = self._keys()
        if self.position >= len(keys):
            self.finished = True
            return None
        item = self.dict.entry(self.view, keys[self.position])
        self.position += 1
        self.finished = self.ordered and self.position == len(keys)
        return item

    @property
    def values(self) -> list[VariableTracker]:  # all of them: `position` were taken
        return [] if self.finished else [self.dict.entry(self.view, k) for k in self._keys()]

    @property
    def over_list(self) -> VariableTracker | None:
        """What a real iterator is rebuilt over: the dict itself for its keys, the real view of
        a dict from the frame or one the trace made for its values or items (`reversed` over it
        when this one is); so it reads the dict as this one does. None (an iterator over the
        items left) when the real dict holds another number of entries than this iterator
        started with (a real one made then would raise where this one does not), or for the
        items of a dict subclass's instance (the trace reads a copy of them)."""
        if self.finished or self.broken or self.dict.size_before_replay != self.size:
            return None
        if self.view == "keys":
            return self.dict
        view = DictViewVariable(self.dict, self.view)
        return view if view.source is not None or self.dict.source is None else None


class RangeIteratorVariable(LiveIteratorVariable):
    """`iter(range(...))`: each number made when it is taken, so a loop over `range(10**7)`
    that breaks the graph early makes no list of ten million; handed on, it is an iterator over
    the range of the numbers left."""

    def __init__(self, numbers: range, kind: type | None = None) -> None:
        self.range = numbers
        self.position = 0  # numbers taken
        # a range beyond a C long has an iterator of its own; `reversed()` decides by its own
        # checks, so it gives its kind
        self.kind = kind or type(iter(numbers))

    def python_type(self) -> type:
        return self.kind

    def next(self, tx: Translator) -> VariableTracker | None:
        if self.position >= len(self.range):
            return None
        self.position += 1
        return ConstantVariable(self.range[self.position - 1])


# The bound on a RangeVariable's numbers under which its iterators are `range_iterator`s
_SMALL_NUMBERS = 2**60


class RangeVariable(ConstantVariable):
    """`range(...)` with a symbolic bound (an int that changed between calls, a size): its
    start and stop kept as trackers, its step a constant, so that a loop over it is handed on at
    a graph break as an iterator over a range of the frame's inputs, not of this call's numbers.
    Used any other way (`len`, indexed, `in`, listed, compared) it is the constant range of
    this call's numbers: reading `value` pins its bounds (guards)."""

    def __init__(self, start: VariableTracker, stop: VariableTracker, step: int,
                 source: Any = None, real: range | None = None) -> None:
        self.start, self.stop, self.step = start, stop, step
        self.source = source
        self.real = real  # the frame's very object, when it came from the frame
        self._pinned: range | None = None

    @property
    def value(self) -> range:
        from dynamo.variables.tensor import concrete_int

        if self._pinned is None:
            numbers = range(concrete_int(self.start), concrete_int(self.stop), self.step)
            self._pinned = numbers if self.real is None else self.real
        return self._pinned

    def python_type(self) -> type:
        return range

    def within_a_c_long(self) -> bool:
        """Whether its bounds and step lie within ±2**60, decided by guards on the symbols (not
        on their values): its iterators, forward or reversed, and those rebuilt from the numbers
        they have left, are then `range_iterator`s (a range beyond a C long has
        `longrange_iterator`s)."""
        from dynamo.variables.tensor import SymNodeVariable

        bounds = [v.value if isinstance(v, SymNodeVariable) else v.as_constant()
                  for v in (self.start, self.stop)]
        return abs(self.step) <= _SMALL_NUMBERS and all(
            -_SMALL_NUMBERS <= bound <= _SMALL_NUMBERS for bound in bounds)

    def __repr__(self) -> str:
        return f"RangeVariable({self.start}, {self.stop}, {self.step})"


# The items a SymbolicRangeIteratorVariable takes, each under a guard, before it pins its bounds
_SYMBOLIC_ITEMS = 8


class SymbolicRangeIteratorVariable(LiveIteratorVariable):
    """`iter()` of a RangeVariable: each number is the one before plus the step, and whether
    there is one is decided by comparing it with the stop (a guard on the symbols, such as
    `0 < n`, not on their values). Handed on, it is an iterator over the range from its next
    number to the stop, both expressions of the frame's inputs."""

    def __init__(self, numbers: RangeVariable) -> None:
        self.next_number, self.stop, self.step = numbers.start, numbers.stop, numbers.step
        self.taken = 0

    def python_type(self) -> type:
        return type(iter(range(0)))  # (made of a range within a C long)

    def next(self, tx: Translator) -> VariableTracker | None:
        from dynamo.variables.builtins import BuiltinVariable
        from dynamo.variables.tensor import concrete_int

        if self.taken == _SYMBOLIC_ITEMS:
            # A loop this long unrolled in one trace is of this call's bounds anyway: pinned
            # (guarded), they are constants, and no more guards are made per item
            self.next_number, self.stop = (ConstantVariable(concrete_int(self.next_number)),
                                           ConstantVariable(concrete_int(self.stop)))
        self.taken += 1
        before = operator.lt if self.step > 0 else operator.gt
        if not BuiltinVariable(before).call(tx, [self.next_number, self.stop], {}).truth(tx):
            return None
        number = self.next_number
        self.next_number = BuiltinVariable(operator.add).call(
            tx, [number, ConstantVariable(self.step)], {})
        return number


class ReversedListIteratorVariable(LiveIteratorVariable):
    """`reversed(a_list)`: indexes the live list from its end, as CPython does (it ends at an
    index past the end of a list that shrank)."""

    def __init__(self, items: ListVariable) -> None:
        self.list = items
        self.index = len(items.values) - 1

    def python_type(self) -> type:
        return type(reversed([]))

    def next(self, tx: Translator) -> VariableTracker | None:
        values = self.list.values
        if 0 <= self.index < len(values):
            self.index -= 1
            return values[self.index + 1]
        self.index = -1
        return None


class EnumerateIteratorVariable(LiveIteratorVariable):
    """`enumerate(iterable, start)`: the next item of the iterator below, counted."""

    def __init__(self, inner: IteratorVariable, start: int) -> None:
        self.inner, self.count = inner, start

    def python_type(self) -> type:
        return enumerate

    def next(self, tx: Translator) -> VariableTracker | None:
        value = self.inner.next(tx)
        if value is None:
            return None
        self.count += 1
        return TupleVariable([ConstantVariable(self.count - 1), value])


class ZipIteratorVariable(LiveIteratorVariable):
    """`zip(*iterables, strict=...)`: a row of the next item of each iterator below, taken in
    turn until one is exhausted (the items taken from the others in that row are dropped, as in
    Python); `strict`: all must end together, else ValueError."""

    def __init__(self, iterators: list[IteratorVariable], strict: bool = False) -> None:
        self.iterators, self.strict = iterators, strict

    def python_type(self) -> type:
        return zip

    def next(self, tx: Translator) -> VariableTracker | None:
        row = []
        for i, iterator in enumerate(self.iterators):
            value = iterator.next(tx)
            if value is None:
                if self.strict:
                    self._ended(tx, i)
                return None
            row.append(value)
        return TupleVariable(row) if row else None

    def _ended(self, tx: Translator, i: int) -> None:
        """zip(strict=True) where iterator `i` ended: the others must end there too."""
        than = "shorter"
        if i == 0:  # the first one ended: so must the others (an item of each is taken)
            than = "longer"
            for j, iterator in enumerate(self.iterators[1:], 1):
                if iterator.next(tx) is not None:
                    i = j
                    break
        if i:
            others = " 1" if i == 1 else f"s 1-{i}"
            raise Raised(ValueError(f"zip() argument {i + 1} is {than} than argument{others}"),
                         "zip(strict=True) over iterables of different lengths (a ValueError)")


class MapIteratorVariable(LiveIteratorVariable):
    """`map(fn, *iterables)`: `fn` called on the next row of the iterables when the item is
    taken, so its calls interleave with the loop's body as in Python."""

    def __init__(self, fn: VariableTracker, rows: ZipIteratorVariable) -> None:
        self.fn, self.rows = fn, rows

    def python_type(self) -> type:
        return map

    def next(self, tx: Translator) -> VariableTracker | None:
        row = self.rows.next(tx)
        return None if row is None else self.fn.call(tx, row.items(tx), {})


class FilterIteratorVariable(MapIteratorVariable):
    """`filter(fn, iterable)`: the next item of the iterable for which `fn` (or, for None, the
    item itself) is true."""

    def python_type(self) -> type:
        return filter

    def next(self, tx: Translator) -> VariableTracker | None:
        keep_all = self.fn.is_constant() and self.fn.as_constant() is None
        while (row := self.rows.next(tx)) is not None:
            value = row.items(tx)[0]
            if (value if keep_all else self.fn.call(tx, [value], {})).truth(tx):
                return value
        return None


@dataclass(frozen=True)
class DictViewSource(ChainedSource):
    """`d.keys()`, `d.values()` or `d.items()` of the dict at the base: how a view of a dict
    from the frame is rebuilt outside the trace (a view of the very dict)."""

    view: str

    def access(self, base_expr: str) -> str:
        return f"{base_expr}.{self.view}()"

    def step(self, value: Any) -> Any:
        return getattr(value, self.view)()


class DictViewVariable(VariableTracker):
    """`d.keys()`, `d.values()` or `d.items()`: a view that reads the dict's entries as they
    are whenever it is used (its length, iteration, `in`, set operations). Outside the trace
    it is the real dict's view: a view of a dict from the frame is read through its source, one
    of a dict the trace made is made (once) from the rebuilt dict."""

    def __init__(self, d: DictVariable, view: str) -> None:
        self.dict, self.view = d, view
        from_frame = d.source is not None and not isinstance(d.source, ItemsCopySource)
        self.source = DictViewSource(d.source, view) if from_frame else None

    def python_type(self) -> type:
        return type(_view_of(self.dict.kind, self.view))

    def as_constant(self) -> Any:
        """A real view of a copy of the dict as it is now (its values must be constants), for
        what reads it at once (an f-string). Not `is_constant()`: the view is never frozen into
        the compiled code."""
        entries = {key_value(k): None if self.view == "keys" else self.dict.lookup(k).as_constant()
                   for k in self.dict._entries}
        return _view_of(self.dict.kind, self.view, entries)

    def items(self, tx: Translator) -> list[VariableTracker]:
        return [self.dict.entry(self.view, k) for k in list(self.dict._entries)]

    def truth(self, tx: Translator) -> bool:
        return bool(self.dict._entries)

    def call_method(self, tx: Translator, name: str, args: list[VariableTracker],
                    kwargs: dict[str, VariableTracker]) -> VariableTracker:
        from dynamo.variables.builtins import BuiltinVariable

        if name == "__len__":
            return ConstantVariable(len(self.dict._entries))
        if name in ("__iter__", "__reversed__"):
            return DictIteratorVariable(self.dict, self.view, reverse=name == "__reversed__")
        if name == "__contains__":
            return BuiltinVariable(operator.contains).call(tx, [self, args[0]], {})
        if name == "isdisjoint" and self.view != "values":
            return ConstantVariable(constant_set(tx, self).isdisjoint(constant_set(tx, args[0])))
        return super().call_method(tx, name, args, kwargs)

    def __repr__(self) -> str:
        return f"DictViewVariable({self.view} of {self.dict})"


def constant_set(tx: Translator, value: VariableTracker) -> set:
    """The Python set of the items of `value` (a keys or items view, a set, any iterable),
    which must be constants."""
    if value.is_constant():
        return set(value.as_constant())
    items = value.items(tx)
    if not all(v.is_constant() for v in items):
        raise Unsupported(f"a set operation on {value.words()} holding values that are not "
                          "constants (tensors, objects)")
    return {v.as_constant() for v in items}


class OpaqueValueVariable(VariableTracker):
    """A value from the frame that the trace can pass along but not look into (a dict keyed by
    tensors): any use of it is a graph break, with `reason`."""

    def __init__(self, value: Any, source: Any, reason: str) -> None:
        self.value = value
        self.source = source
        self.reason = reason

    def python_type(self) -> type:
        return type(self.value)

    def getattr(self, tx: Translator, name: str) -> VariableTracker:
        raise Unsupported(self.reason)

    def call_method(self, tx: Translator, name: str, args: list[VariableTracker],
                    kwargs: dict[str, VariableTracker]) -> VariableTracker:
        raise Unsupported(self.reason)

    def items(self, tx: Translator) -> list[VariableTracker]:
        raise Unsupported(self.reason)

    def truth(self, tx: Translator) -> bool:
        raise Unsupported(self.reason)


class OpaqueIteratorVariable(VariableTracker):
    """An iterator from the frame (handed to a resume function inside a loop): its next item
    is taken for real, at a graph break on FOR_ITER."""

    def __init__(self, value: Any, source: Any) -> None:
        self.value = value
        self.source = source

    def python_type(self) -> type:
        return type(self.value)

    def items(self, tx: Translator) -> list[VariableTracker]:
        raise Unsupported("the items of an iterator from outside the trace")


# A set operation that makes a new set, as a copy of the set then changed in place
_IN_PLACE_OF = {"union": "update", "difference": "difference_update",
                "intersection": "intersection_update",
                "symmetric_difference": "symmetric_difference_update", "copy": None}


def set_from_log(log: tuple) -> set:
    """A set made by the changes of `log` from an empty set, as the traced code made it."""
    made: set = set()
    for name, args in log:
        getattr(made, name)(*args)
    return made
