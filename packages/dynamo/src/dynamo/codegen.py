"""The code that replaces a captured frame: fetch the graph's inputs, call it, rebuild the result.

For a frame captured whole, the "transformed code" is a small generated Python function of the
frame's locals and globals: it reads each graph input through its source
(`L['self']._modules['fc']._parameters['weight']`), calls the compiled graph once, and builds
the frame's return value around the graph's outputs (tuples, lists, dicts, constants, and
objects returned as they came in). Its source is kept for reading (`entry.source`).
"""

from __future__ import annotations

import ast
import collections
import copy
import functools
import inspect
import linecache
import types
from collections.abc import Callable
from typing import Any

import torch
from torch.utils.checkpoint import _StopRecomputationError

from dynamo.breaks import RUN_EAGERLY, Continue, warn_user
from dynamo.exc import BackendError, Unsupported
from dynamo.interpreter import DeferredAttribute
from dynamo.side_effects import DELETED, SideEffects
from dynamo.sources import float_tensor
from dynamo.variables.base import VariableTracker
from dynamo.variables.builtins import BuiltinVariable, value_decides_identity
from dynamo.variables.constant import (
    ConstantVariable,
    FormattedStringVariable,
    LazyConstantVariable,
)
from dynamo.variables.containers import (
    DequeVariable,
    DictIteratorVariable,
    DictVariable,
    DictViewVariable,
    EnumerateIteratorVariable,
    FilterIteratorVariable,
    IteratorVariable,
    ListVariable,
    MapIteratorVariable,
    NamedTupleVariable,
    RangeIteratorVariable,
    RangeVariable,
    ReversedListIteratorVariable,
    SetVariable,
    SizeVariable,
    SliceVariable,
    SymbolicRangeIteratorVariable,
    TupleVariable,
    ZipIteratorVariable,
    broken_dict_iterator,
    key_value,
    set_from_log,
)
from dynamo.variables.contexts import (
    ExitVariable,
    GradModeExit,
    GradModeVariable,
    StateContextVariable,
    close_blocks,
    open_blocks,
    reopen_context,
)
from dynamo.variables.functions import (
    BoundMethodVariable,
    CachedFunctionVariable,
    Cell,
    ClosureCell,
    NestedFunctionVariable,
    OpaqueFunctionVariable,
    PartialVariable,
    UserFunctionVariable,
    UserMethodVariable,
)
from dynamo.variables.generators import (
    GeneratorVariable,
    StepIteratorVariable,
    UserIteratorVariable,
)
from dynamo.variables.objects import (
    BaseMethodVariable,
    ModuleChainVariable,
    NNModuleVariable,
    PythonModuleVariable,
    SuperVariable,
    TorchFunctionVariable,
    UserClassVariable,
)
from dynamo.variables.tensor import SymNodeVariable, TensorVariable
from dynamo.variables.user_objects import (
    NewObjectVariable,
    UserObjectVariable,
    build_object,
    fill_object,
)
from guards import LocalSource, hold, key_expr, key_names, weak_items

# Trackers of objects the traced code made, built once by the transformed frame whether or not
# they have a source; and those built once when they have none (with one, they came from the
# frame: read as they are).
_MADE_ONCE = (ListVariable, DictVariable, SetVariable, TupleVariable, NewObjectVariable)
_MADE_ONCE_IF_NEW = (NestedFunctionVariable, PartialVariable, IteratorVariable,
                     DictViewVariable, BoundMethodVariable, UserMethodVariable, SuperVariable,
                     GradModeVariable, ExitVariable)


class ResultBuilder:
    """Turns a return value's tracker into graph outputs plus a Python expression over them."""

    def __init__(self) -> None:
        self.outputs: list[torch.fx.Node] = []
        self.constants: dict[str, Any] = {}
        # Inputs read through their sources, and containers the traced code made, each once,
        # before any side effect is replayed (a write may change what a source leads to).
        self.prelude: list[str] = []
        # Lines that must see the side effects made: positions of list iterators (the list may
        # be one of the frame's, filled by the replayed writes).
        self.after_effects: list[str] = []
        self._made: dict[int, tuple[str, VariableTracker]] = {}
        self._reads: dict[Any, str] = {}

    def constant(self, value: Any) -> str:
        """A name for `value` in the generated code's namespace."""
        name = f"___k{len(self.constants)}"
        self.constants[name] = value
        return name

    def key(self, k: Any) -> str:
        """A dict entry's key in the generated code: an object found by identity (or a tuple
        holding one) by its weak name (`key_expr`: a constant would keep a parameter keying an
        optimizer's state alive with the cache; the code runs only once the guards, which check
        the key alive, pass), any other key as a constant."""
        value = key_value(k)
        return key_expr(value) if weak_items(hold(value)) else self.constant(value)

    def read(self, source: Any) -> str:
        """The value at `source` as the frame holds it now, before the side effects: a local
        as it is, anything reached from it read once into a name of its own."""
        if isinstance(source, LocalSource):
            return source.expr
        name = self._reads.get(source)
        if name is None:
            name = self._reads[source] = f"___read{len(self._reads)}"
            self.prelude.append(f"{name} = {source.expr}")
        return name

    def expression(self, v: VariableTracker) -> str:
        if isinstance(v, ListVariable) and v.owner is not None:
            return self.expression(v.owner)  # a list subclass's items: the object itself
        if v.source is not None and isinstance(v, (TensorVariable, ListVariable, DictVariable,
                                                     SetVariable, TupleVariable)):
            return self.read(v.source)  # an input: the very object the frame holds
        if isinstance(v, SymNodeVariable) and v.node.op == "placeholder":
            return self.read(v.node.meta["source"])  # an int input, as it came
        if isinstance(v, (TensorVariable, SymNodeVariable)):
            if v.node in self.outputs:
                return f"___out[{self.outputs.index(v.node)}]"
            self.outputs.append(v.node)
            return f"___out[{len(self.outputs) - 1}]"
        if isinstance(v, LazyConstantVariable) and not v.used:
            return self.read(v.source)  # passed along, never looked at: as it comes
        if isinstance(v, FormattedStringVariable) and not v.used:  # formatted as it comes
            shown = []
            for part, convert, spec in v.pieces:
                text = self.expression(part)
                if convert is not None:
                    text = f"{self.constant(convert)}({text})"
                shown.append(f"{self.constant(format)}({text}, {spec!r})")
            return "''.join((" + "".join(f"{t}, " for t in shown) + "))"
        if isinstance(v, RangeVariable):  # the frame's, or one over its bounds (not pinned)
            return self.read(v.source) if v.source is not None else self._made_once(v)
        if isinstance(v, ConstantVariable) and isinstance(v.value, BaseException):
            return self._made_once(v)  # made anew by each call, as the frame makes it
        if isinstance(v, ConstantVariable):
            value = v.value
            if value_decides_identity(value):  # (an Enum's repr is no literal)
                return repr(value)
            if v.source is not None:  # the frame's very object (`c = a; ...; c is b` after a
                return self.read(v.source)  # break: an equal literal is another object)
            return self.constant(value)  # (a code constant: that object, not an equal one)
        if isinstance(v, _MADE_ONCE) or (isinstance(v, NNModuleVariable) and v.make is not None):
            return self._made_once(v)
        if v.source is not None:
            return self.read(v.source)
        if isinstance(v, _MADE_ONCE_IF_NEW) or (
                isinstance(v, BaseMethodVariable) and v.obj is not None):
            return self._made_once(v)
        if isinstance(v, ModuleChainVariable):  # a slice of a Sequential or ModuleList
            return self._made_once(v)
        if isinstance(v, DeferredAttribute):  # read for real where it is used
            return f"getattr({self.expression(v.obj)}, {v.name!r})"
        if isinstance(v, BaseMethodVariable):  # `dict.pop`, unbound
            return self.constant(getattr(v.base, v.name))
        if isinstance(v, SliceVariable):
            return f"slice({', '.join(self.expression(p) for p in v.parts)})"
        if isinstance(v, (UserFunctionVariable, BuiltinVariable, TorchFunctionVariable,
                          UserClassVariable, PythonModuleVariable, OpaqueFunctionVariable,
                          CachedFunctionVariable)):
            return self.constant(v.as_constant())
        if isinstance(v, (NNModuleVariable, UserObjectVariable)):
            return self.constant(v.value)
        if v.is_constant():
            return self.constant(v.as_constant())
        raise _cannot_rebuild(v)

    def _made_once(self, v: VariableTracker) -> str:
        """An object the traced code made (a container, object, module, function, partial,
        iterator, bound method, context manager): built once (`prelude` lines), so that every
        reference to it (a local, an attribute it was stored in, the return value, the locals
        handed on at a graph break) is one object, as in the frame."""
        made = self._made.get(id(v))
        if made is not None:
            return made[0]
        if isinstance(v, NewObjectVariable):  # made empty first: its attributes may refer to it
            name = self._name(v)
            self.prelude.append(f"{name} = {self.constant(build_object)}({self.constant(v.cls)})")
            attrs = "{" + ", ".join(f"{k!r}: {self.expression(x)}" for k, x in v.attrs.items())
            if isinstance(v.items_, ListVariable):  # (the list tracker stands for the object)
                items = f"[{', '.join(self.expression(x) for x in v.items_.values)}]"
            else:
                items = "None" if v.items_ is None else self.expression(v.items_)
            self.prelude.append(f"{self.constant(fill_object)}({name}, {attrs}}}, {items})")
            return name
        if isinstance(v, NestedFunctionVariable):
            return self._function(v)
        if type(v) is ListVariable or (type(v) is DictVariable and v.kind is dict):
            # Made empty first, then filled: an item may refer back to it (`a.append(a)`, an
            # object made in the trace whose attribute is the list that holds it)
            name = self._name(v)
            self.prelude.append(f"{name} = {'[]' if type(v) is ListVariable else '{}'}")
            text = self._build(v)
            if text not in ("[]", "{}"):
                self.prelude.append(
                    f"{name}.{'extend' if type(v) is ListVariable else 'update'}({text})")
            return name
        text = self._build(v)
        name = self._name(v)  # after the parts: they may have made names of theirs
        self.prelude.append(f"{name} = {text}")
        if isinstance(v, ReversedListIteratorVariable):  # set to its index, as a list's below
            self.after_effects.append(f"{self.constant(_reverse_from)}({name}, "
                                      f"{self.expression(v.list)}, {v.index})")
        elif isinstance(v, IteratorVariable) and v.position and v.over_list is not None:
            # A list's iterator is set to its index once the writes have filled the list; one
            # over a dict is advanced over the entries before them (their number is checked as
            # the trace checked it)
            lines = self.after_effects if type(v.over_list) is ListVariable else self.prelude
            lines.append(f"{self.constant(_advance)}({name}, {v.position})")
        return name

    def _name(self, v: Any) -> str:
        """A new `___made` name, standing for `v` from now on."""
        name = f"___made{len(self._made)}"
        self._made[id(v)] = (name, v)
        return name

    def _build(self, v: VariableTracker) -> str:
        """An expression that makes `v` anew (its parts by their names)."""
        if isinstance(v, NNModuleVariable):  # a module the trace created: created anew
            return f"{self.constant(v.make)}()"
        if isinstance(v, RangeVariable):
            return f"range({self.expression(v.start)}, {self.expression(v.stop)}, {v.step})"
        if isinstance(v, ConstantVariable):  # an exception the trace made
            return f"{self.constant(fresh_exception)}({self.constant(v.value)})"
        if isinstance(v, TupleVariable):
            items = "".join(self.expression(x) + ", " for x in v.values)
            if isinstance(v, SizeVariable):
                return f"{self.constant(torch.Size)}(({items}))"
            if isinstance(v, NamedTupleVariable):
                # the tuple of these items, as `_make` builds it: a `__new__` of the class's
                # own (PackedSequence's) would run on items it already made
                return (f"{self.constant(tuple.__new__)}({self.constant(v.kind)}, ({items}))"
                        if hasattr(v.kind, "_fields") else f"{self.constant(v.kind)}(({items}))")
            return f"({items})"
        if isinstance(v, ListVariable):
            text = "[" + ", ".join(self.expression(x) for x in v.values) + "]"
            if isinstance(v, DequeVariable):
                return f"{self.constant(collections.deque)}({text}, {v.maxlen!r})"
            return text
        if isinstance(v, DictVariable):
            text = "{" + ", ".join(f"{self.key(k)}: {self.expression(x)}"
                                   for k, x in v.entries.items()) + "}"
            if v.kind is collections.defaultdict:
                factory = "None" if v.default_factory is None else \
                    self.expression(v.default_factory)
                return f"{self.constant(collections.defaultdict)}({factory}, {text})"
            if v.kind is collections.OrderedDict:
                return f"{self.constant(collections.OrderedDict)}({text})"
            return text
        if isinstance(v, SetVariable):
            if v.built:  # made as the trace made it: a copy may order it otherwise
                return f"{self.constant(set_from_log)}({self.constant(tuple(v.log))})"
            return self.constant(set(v.values)) + ".copy()"
        if isinstance(v, ModuleChainVariable):  # made as eager makes it
            kind, parts = v.rebuilt()
            if issubclass(kind, torch.nn.Sequential):
                named = ", ".join(f"({name!r}, {self.expression(m)})" for name, m in parts)
                return f"{self.constant(kind)}({self.constant(collections.OrderedDict)}([{named}]))"
            return f"{self.constant(kind)}([{', '.join(self.expression(m) for m in parts)}])"
        if isinstance(v, PartialVariable):
            parts = [self.expression(v.fn), *(self.expression(a) for a in v.args),
                     *(f"{k}={self.expression(a)}" for k, a in v.kwargs.items())]
            return f"{self.constant(functools.partial)}({', '.join(parts)})"
        if isinstance(v, (GeneratorVariable, StepIteratorVariable)) and not v.finished:
            raise v.unbuildable()
        if isinstance(v, UserIteratorVariable):  # the user's iterator object itself
            return self.expression(v.obj)
        if isinstance(v, DictIteratorVariable) and v.broken_now:
            return f"{self.constant(broken_dict_iterator)}({v.ordered})"
        if isinstance(v, IteratorVariable) and v.over_list is not None:
            # an iterator over a list (or dict, or view): over the very list (appends after the
            # break are seen), then advanced
            over = self.expression(v.over_list)
            if getattr(v.over_list, "owner", None) is not None:  # list.__iter__ of a subclass's
                return f"{self.constant(list.__iter__)}({over})"
            reverse = isinstance(v, DictIteratorVariable) and v.reverse
            return f"reversed({over})" if reverse else f"iter({over})"
        if isinstance(v, DictViewVariable) and v.dict.source is None:  # of a dict made here
            return f"{self.expression(v.dict)}.{v.view}()"
        # Iterators over iterators, rebuilt over the real ones below (each built once), so
        # they take their items live as the trace's did
        if isinstance(v, ReversedListIteratorVariable):
            if v.list.owner is not None:
                return f"{self.constant(list.__reversed__)}({self.expression(v.list)})"
            return f"reversed({self.expression(v.list)})"
        if isinstance(v, RangeIteratorVariable):
            return f"iter({self.constant(v.range[v.position:])})"
        if isinstance(v, SymbolicRangeIteratorVariable):
            return (f"iter(range({self.expression(v.next_number)}, {self.expression(v.stop)}, "
                    f"{v.step}))")
        if isinstance(v, EnumerateIteratorVariable):
            return f"enumerate({self.expression(v.inner)}, {v.count})"
        if isinstance(v, ZipIteratorVariable):
            inner = "".join(self.expression(it) + ", " for it in v.iterators)
            return f"zip({inner}strict={v.strict})"
        if isinstance(v, MapIteratorVariable):
            kind = "filter" if isinstance(v, FilterIteratorVariable) else "map"
            inner = "".join(", " + self.expression(it) for it in v.rows.iterators)
            return f"{kind}({self.expression(v.fn)}{inner})"
        if isinstance(v, IteratorVariable):
            return f"iter([{', '.join(self.expression(x) for x in v.values[v.position:])}])"
        if isinstance(v, BoundMethodVariable):
            return f"getattr({self.expression(v.obj)}, {v.name!r})"
        if isinstance(v, UserMethodVariable):
            return (f"{self.constant(types.MethodType)}({self.expression(v.function)}, "
                    f"{self.expression(v.obj)})")
        if isinstance(v, BaseMethodVariable):  # `dict.pop` bound to a dict subclass's instance
            return (f"{self.constant(types.MethodType)}({self.constant(getattr(v.base, v.name))}"
                    f", {self.expression(v.obj)})")
        if isinstance(v, SuperVariable):
            return f"super({self.constant(v.cls)}, {self.expression(v.obj)})"
        if isinstance(v, GradModeVariable):  # made outside the trace as it was made inside
            if v.switches_at_creation:
                return f"{self.constant(_set_grad_enabled)}({v.target!r}, {v.initial!r})"
            return f"{self.constant(torch.enable_grad if v.target else torch.no_grad)}()"
        if isinstance(v, ExitVariable) and isinstance(v.ctx, GradModeVariable):
            return f"{self.constant(GradModeExit)}({v.ctx.initial!r})"
        if isinstance(v, ExitVariable) and isinstance(v.ctx, StateContextVariable):
            # An autocast or inference-mode block open at a graph break (the graph closed it):
            # entered anew
            args = (v.ctx.kind, *StateContextVariable.settings(v.ctx.mode))
            return f"{self.constant(reopen_context)}({', '.join(map(self.constant, args))})"
        raise _cannot_rebuild(v)

    def cell(self, cell: Cell | ClosureCell, fill: bool = True) -> str:
        """A cell object: a real function's (this call's, read where it came from), or one
        the trace made, made once (empty; filled with its contents unless `fill` is false,
        when the caller fills it later: its contents may be the function that holds it)."""
        if isinstance(cell, ClosureCell):
            source = cell.cell_source
            return self.read(source) if source is not None else self.constant(cell.cell)
        if id(cell) in self._made:  # shared with a function or a break's closure built before
            return self._made[id(cell)][0]
        name = self._name(cell)
        self.prelude.append(f"{name} = {self.constant(types.CellType)}()")
        if fill and cell.contents is not None:
            self.prelude.append(f"{name}.cell_contents = {self.expression(cell.contents)}")
        return name

    def _function(self, v: NestedFunctionVariable) -> str:
        """A function the traced code made, with its cells: a cell made in the trace is made
        once, empty, and filled after the function (its contents may be the function)."""
        cells: list[str] = []
        fills: list[tuple[str, VariableTracker]] = []
        for var in v.code.co_freevars:
            cell = v.cells[var]
            new = isinstance(cell, Cell) and id(cell) not in self._made
            cells.append(self.cell(cell, fill=False))
            if new and cell.contents is not None:
                fills.append((cells[-1], cell.contents))
        defaults = "".join(self.expression(d) + ", " for d in v.defaults)
        kwdefaults = ", ".join(f"{k!r}: {self.expression(d)}" for k, d in v.kwdefaults.items())
        name = self._name(v)
        self.prelude.append(
            f"{name} = {self.constant(_make_function)}({self.constant(v.code)}, "
            f"{self.constant(v.f_globals)}, {v.name!r}, ({defaults}), {{{kwdefaults}}}, "
            f"({''.join(c + ', ' for c in cells)}))")
        for attr, value in v.rebuilt_attributes().items():
            self.prelude.append(f"{name}.{attr} = {self.expression(value)}")
        for cell_name, contents in fills:
            self.prelude.append(f"{cell_name}.cell_contents = {self.expression(contents)}")
        return name


def _cannot_rebuild(v: VariableTracker) -> Unsupported:
    return Unsupported(f"{v.words()} cannot be rebuilt outside the graph (to return it, or to "
                       "pass it on at a graph break)")


_LIST_ITERATOR = type(iter([]))


def _advance(iterator: Any, taken: int) -> None:
    """Sets a new iterator over a list, deque or dict past its first `taken` items."""
    if isinstance(iterator, _LIST_ITERATOR):
        iterator.__setstate__(taken)
    else:
        for _ in range(taken):
            next(iterator)


def _reverse_from(iterator: Any, items: list, index: int) -> None:
    """Sets a new `reversed(items)` to give `items[index]` next. An index past the end (the
    list shrank since the last item given) is kept, as CPython keeps it: the iterator then ends
    unless the list grows back; `__setstate__` would cut it to the end, so the list is padded
    for the moment."""
    missing = max(index + 1 - len(items), 0)
    items.extend([None] * missing)
    iterator.__setstate__(index)
    del items[len(items) - missing:]


def _set_grad_enabled(mode: bool, initial: bool) -> torch.set_grad_enabled:
    """`torch.set_grad_enabled(mode)` as made in the trace, when the grad mode was `initial`
    (what its `__exit__` restores), made without switching the mode now (the trace did that
    where the code made it, and the code may have switched it again since)."""
    now = torch.is_grad_enabled()
    ctx = torch.set_grad_enabled(mode)
    torch._C._set_grad_enabled(now)
    ctx.prev = initial
    return ctx


def _make_function(code: types.CodeType, f_globals: dict, name: str, defaults: tuple,
                   kwdefaults: dict, closure: tuple) -> types.FunctionType:
    fn = types.FunctionType(code, f_globals, name, defaults or None, closure or None)
    fn.__kwdefaults__ = kwdefaults or None
    return fn


def replay(builder: ResultBuilder, effects: SideEffects) -> list[str]:
    """Lines that make the recorded side effects real: every new value first, then the
    writes, in program order."""
    values: list[str] = []
    writes: list[str] = []
    for container in effects.containers.values():
        temp = f"___new{len(values)}"
        where = builder.read(container.source)
        if isinstance(container, ListVariable) and container.unread:  # only appended to
            values.append(f"{temp} = [{', '.join(builder.expression(v) for v in container.appended)}]")
            writes.append(f"{where}.extend({temp})")
        elif isinstance(container, ListVariable):
            values.append(f"{temp} = [{', '.join(builder.expression(v) for v in container.values)}]")
            if isinstance(container, DequeVariable):  # no slice assignment on a deque
                writes += [f"{where}.clear()", f"{where}.extend({temp})"]
            else:
                writes.append(f"{where}[:] = {temp}")
        elif isinstance(container, DictVariable) and container.unread:  # only stored into
            for key, value in container.written.items():
                values.append(f"{temp} = {builder.expression(value)}")
                writes.append(f"{where}[{builder.key(key)}] = {temp}")
                temp = f"___new{len(values)}"
        else:
            if isinstance(container, SetVariable):
                # the trace's changes made again, in order: the set ends as eager's, its order
                # included (`clear()` and `update()` of the result ordered it otherwise)
                for name, args in container.log:
                    values.append(f"{temp} = {builder.constant(args)}")
                    writes.append(f"{where}.{name}(*{temp})")
                    temp = f"___new{len(values)}"
                continue
            fresh = container.entries
            values.append(f"{temp} = " + "{" + ", ".join(
                f"{builder.key(k)}: {builder.expression(v)}" for k, v in fresh.items()) + "}")
            writes.append(f"{where}.clear()")
            writes.append(f"{where}.update({temp})")
    for kind, target, name, value in effects.writes.values():
        if value is DELETED:
            writes.append(f"del {_cell(builder, effects, target)}.cell_contents"
                          if kind == "cell" else _deletion(builder, kind, target, name))
            continue
        temp = f"___new{len(values)}"
        values.append(f"{temp} = {builder.expression(value)}")
        if kind == "attr":
            # Past a `__setattr__` of the class's own: the trace already ran it.
            if isinstance(target, UserObjectVariable) and target.defines_in_python(
                    "__setattr__"):
                setter = builder.constant(object.__setattr__)
            elif isinstance(target, NNModuleVariable) and target.overrides("__setattr__"):
                setter = builder.constant(torch.nn.Module.__setattr__)
            else:
                setter = "setattr"
            writes.append(f"{setter}({builder.expression(target)}, {name!r}, {temp})")
        elif kind == "global":
            writes.append(f"{builder.constant(target)}[{name!r}] = {temp}")
        else:
            writes.append(f"{_cell(builder, effects, target)}.cell_contents = {temp}")
    return values + writes


def _cell(builder: ResultBuilder, effects: SideEffects, cell: types.CellType) -> str:
    """The expression of a closure cell written or emptied: the cell of this call's closure
    (closures of one code share the entry)."""
    source = effects.cell_sources.get(id(cell))
    return builder.read(source) if source is not None else builder.constant(cell)


def _deletion(builder: ResultBuilder, kind: str, target: Any, name: str) -> str:
    """The line that makes `del target.name` (past a `__delattr__` of the class's own: the
    trace already ran it) or `del globals[name]` real."""
    if kind == "global":
        return f"del {builder.constant(target)}[{name!r}]"
    deleter = builder.constant(object.__delattr__) if target.defines_in_python(
        "__delattr__") else "delattr"
    return f"{deleter}({builder.expression(target)}, {name!r})"


def _hook_code(hook: Any) -> types.CodeType | None:
    """The code object a saved-tensor hook runs as: through partials and bound methods; a
    module's `forward` (not `Module.__call__`, whose frame every module call has); an object's
    `__call__` (none for one of C)."""
    if isinstance(hook, functools.partial):
        return _hook_code(hook.func)
    if isinstance(hook, types.MethodType):
        return _hook_code(hook.__func__)
    if isinstance(hook, types.FunctionType):
        return hook.__code__
    run = inspect.getattr_static(
        type(hook), "forward" if isinstance(hook, torch.nn.Module) else "__call__", None)
    return run.__code__ if isinstance(run, types.FunctionType) else None


def user_hook_raised(error: BaseException) -> bool:
    """Whether `error` came out of a saved-tensor hook of the user's, on top of the stack
    while the graph ran (the graph's ops call it as eager's do): the frame is not run again
    eagerly after it, which would call the hook a second time, and the backend is not
    blamed. Read from the traceback, so a graph that does not raise pays nothing."""
    hooks = torch._C._autograd._top_saved_tensors_default_hooks(False)
    if not hooks:
        return False
    codes = {_hook_code(hook) for hook in hooks} - {None}
    tb = error.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code in codes:
            return True
        tb = tb.tb_next
    return False


def _graph_call(graph_fn: Callable | None, inputs: list[Any], builder: ResultBuilder,
                effects: list[str], rerun: bool, grad_mode: bool, undo: tuple[str, ...],
                on_error: Callable | None = None) -> list[str]:
    lines = ["def run(L, G):"]
    if graph_fn is not None:
        # What else the graph changed before it raised is put back too (`undone_on_error`)
        before, after = [], []
        if "blocks" in undo:
            before.append("___depth = ___open_blocks()")
            after.append("___close_blocks(___depth)")
        if "random" in undo and rerun:
            before.append("___rng = ___rng_state()")
            after.append("___set_rng_state(___rng)")
        args = "".join(f"{source.expr}, " for source in inputs)
        # A graph that raises (an index out of range, a failed factorisation) has made none of
        # the frame's side effects yet: grad mode is put back (the guards pinned it to
        # `grad_mode`) and, unless the graph wrote into an input, the frame runs as plain Python
        # instead (`RUN_EAGERLY`), so the error comes where it would, through the frame's own
        # try/except/finally, after its side effects. Not the signal activation checkpointing
        # raises from a saved-tensor hook to stop a recomputation once it has what it needs:
        # that one goes straight to the checkpoint.
        lines += [f"    {line}" for line in before]
        lines += ["    try:", f"        {'___out = ' if builder.outputs else ''}___graph({args})",
                  "    except ___stop_recomputation:", "        raise",
                  "    except Exception as ___graph_error:",
                  *[f"        {line}" for line in after],
                  f"        ___set_grad_enabled({grad_mode})",
                  # A user's saved-tensor hook ran by the graph raised: running the frame again
                  # would call it again (a hook that refuses once would then succeed)
                  "        if ___user_hook_raised(___graph_error):",
                  "            raise",
                  # whose fault: the data's (the captured graph raises too) or the backend's
                  *([f"        ___graph_failed(___graph_error, {args})"]
                    if rerun and on_error is not None else []),
                  # a graph that writes into its inputs cannot run again: a backend's wrong
                  # outputs are the backend's error, not dynamo's internal one
                  *([] if rerun else ["        ___bad_outputs_raise(___graph_error)"]),
                  f"        {'return ___eagerly' if rerun else 'raise'}"]
    return lines + [f"    {line}" for line in [*builder.prelude, *effects, *builder.after_effects]]


def make_runner(graph_fn: Callable | None, inputs: list[Any], builder: ResultBuilder,
                result: str, effects: list[str], rerun: bool, grad_mode: bool,
                undo: tuple[str, ...] = (), on_error: Callable | None = None
                ) -> tuple[Callable[[dict, dict], Any], str]:
    """`run(L, G)`: the transformed frame, and its source. `on_error(namespace, error,
    *inputs)`: called where the backend's graph raised, before the frame runs eagerly."""
    lines = _graph_call(graph_fn, inputs, builder, effects, rerun, grad_mode, undo, on_error)
    lines.append(f"    return {result}")
    return _define(lines, graph_fn, builder, on_error=on_error)


def _compile_at(source: str, site: tuple[str, int, str] | None) -> types.CodeType:
    """`source` compiled; with a `site` (the user's file, line and function), every line of it
    stands for that line of that function: an exception raised by the step a break makes for
    real (`d[key]` of a missing key, a call that raises) shows the user's line in its
    traceback, as in eager, instead of a line of generated code."""
    if site is None:
        return compile(source, "<dynamo transformed frame>", "exec")
    filename, lineno, _ = site
    text = linecache.getline(filename, lineno).rstrip().encode()
    # The whole of the user's line (a traceback underlines no part of it)
    start, end = len(text) - len(text.lstrip()), len(text)
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if "lineno" in node._attributes:
            node.lineno = node.end_lineno = lineno
            node.col_offset, node.end_col_offset = start, end
    return compile(tree, filename, "exec")


def _define(lines: list[str], graph_fn: Callable | None, builder: ResultBuilder,
            site: tuple[str, int, str] | None = None, on_error: Callable | None = None
            ) -> tuple[Callable[[dict, dict], Any], str]:
    """The function `run` that `lines` define, and its source."""
    source = "\n".join(lines) + "\n"
    namespace: dict[str, Any] = {"___graph": graph_fn, "___continue": Continue,
                                 "___done": _DONE, "___eagerly": RUN_EAGERLY,
                                 "___set_grad_enabled": torch._C._set_grad_enabled,
                                 "___open_blocks": open_blocks, "___close_blocks": close_blocks,
                                 "___rng_state": rng_state, "___set_rng_state": set_rng_state,
                                 "___stop_recomputation": _StopRecomputationError,
                                 "___user_hook_raised": user_hook_raised,
                                 "___float_tensor": float_tensor,
                                 "___bad_outputs_raise": functools.partial(
                                     _bad_outputs_raise,
                                     getattr(on_error, "culprit", "the backend")),
                                 **key_names(), **builder.constants}
    if graph_fn is not None and builder.outputs:
        namespace["___graph"] = _checked_once(graph_fn, len(builder.outputs), namespace,
                                              [_expected(n) for n in builder.outputs])
    if on_error is not None:
        namespace["___graph_failed"] = functools.partial(on_error, namespace)
    exec(_compile_at(source, site), namespace)
    run = namespace["run"]
    if site is not None:
        run.__code__ = run.__code__.replace(co_name=site[2], co_qualname=site[2])
    return run, source


class BadGraphOutputs(TypeError):
    """What a backend's compiled graph returned is not the graph's outputs."""


def _bad_outputs_raise(culprit: str, error: BaseException) -> None:
    """Where the graph writes into its inputs (the frame cannot run again): wrong outputs from
    the backend's compiled graph are a `BackendError` naming the backend and the graph, not
    dynamo's internal error."""
    if isinstance(error, BadGraphOutputs):
        raise BackendError(f"{culprit}: {error}; the graph writes into its inputs, so the "
                           "frame cannot run again eagerly") from error


def _expected(node: torch.fx.Node) -> tuple[torch.dtype, str, tuple] | None:
    """What a graph output that is a tensor must be: its dtype, device type and sizes (None
    for a symbolic size); None where the output is no tensor."""
    value = node.meta.get("example_value")
    if not isinstance(value, torch.Tensor):
        return None
    return (value.dtype, value.device.type,
            tuple(n if type(n) is int else None for n in value.shape))


def _output_mismatch(out: Any, expected: list[tuple[torch.dtype, str, tuple] | None]
                     ) -> str | None:
    """How the backend's outputs differ from the tensors the graph's outputs are (None: they
    do not), in words."""
    for i, (value, want) in enumerate(zip(out, expected)):
        if want is None:
            continue
        dtype, device, sizes = want
        if not isinstance(value, torch.Tensor):
            return f"output {i} is {type(value).__qualname__}, not a tensor"
        if value.dtype != dtype or value.device.type != device or value.dim() != len(sizes) \
                or any(n is not None and n != m for n, m in zip(sizes, value.shape)):
            shown = tuple("?" if n is None else n for n in sizes)
            return (f"output {i} is a {value.dtype} tensor of sizes {tuple(value.shape)} on "
                    f"{value.device.type}, not the graph's {dtype} tensor of sizes {shown} on "
                    f"{device}")
    return None


def _checked_once(graph_fn: Callable, count: int, namespace: dict[str, Any],
                  expected: list[tuple[torch.dtype, str, tuple] | None]) -> Callable:
    """`graph_fn`, what the backend returned, its first result checked to be the graph's
    `count` outputs, each tensor of the dtype, device and static sizes the trace gave it (a
    backend that returns something else fails in words, not in the generated code's
    indexing, nor by silently dropping outputs or handing the user wrong values); then the
    generated code calls `graph_fn` itself."""
    def first_call(*args: Any) -> Any:
        out = graph_fn(*args)
        wrong = None
        if isinstance(out, (list, tuple)) and len(out) == count:
            wrong = _output_mismatch(out, expected)
        if not isinstance(out, (list, tuple)) or len(out) != count or wrong is not None:
            got = f"{len(out)} values" if isinstance(out, (list, tuple)) else \
                type(out).__qualname__
            message = (f"the backend's compiled graph returned {got}, not the graph's {count} "
                       "outputs in a list or tuple") if wrong is None else \
                f"the backend's compiled graph returned other outputs than the graph's: {wrong}"
            if "___graph_failed" not in namespace:  # (else it says so, or raises BackendError)
                warn_user(f"dynamo: {message}; running the frame eagerly")
            raise BadGraphOutputs(message)
        namespace["___graph"] = graph_fn
        return out
    return first_call


def make_break_runner(graph_fn: Callable | None, inputs: list[Any], builder: ResultBuilder,
                      plan: dict[str, Any], effects: list[str], rerun: bool, grad_mode: bool,
                      undo: tuple[str, ...] = (), site: tuple[str, int, str] | None = None,
                      on_error: Callable | None = None
                      ) -> tuple[Callable[[dict, dict], Any], str]:
    """`run(L, G)` for a frame with a graph break: the graph, the side effects so far, the step
    made for real, and the resume function's call. `site`: the user's file, line and function
    of the break, which the transformed frame stands for in tracebacks."""
    lines = _graph_call(graph_fn, inputs, builder, effects, rerun, grad_mode, undo, on_error)
    local_args = plan["locals"]
    step = {"call": lambda: f"___result = {plan['callee']}({', '.join(plan['args'])})",
            "branch": lambda: f"___result = bool({plan['condition']})",
            "for": lambda: f"___result = next({plan['iterator']}, ___done)",
            "raise": lambda: f"raise {plan['exception']}" + (
                "" if plan.get("cause") is None else f" from {plan['cause']}")}[plan["kind"]]()
    def then(resume: tuple[str, list[str]], *pushed: str, locals_: list[str] = local_args) -> str:
        name, stack = resume
        values = [f"'___stack{i}': {e}" for i, e in enumerate([*stack, *pushed])]
        if plan["closure"]:
            values.append(f"'__closure__': ({plan['closure']})")
        return f"return ___continue({name}, {{{', '.join([*values, *locals_])}}})"

    if plan["kind"] == "raise" and plan["on_error"] is None and \
            plan["exception"].startswith("___made"):
        # the exception made here, not left in a local: its traceback holds this frame
        lines += ["    try:", f"        {step}", "    finally:", f"        del {plan['exception']}"]
    elif plan["on_error"] is None:
        lines.append(f"    {step}")
    else:  # raise into the enclosing block's handler, as the original frame would
        lines += ["    try:", f"        {step}", "    except BaseException as ___error:",
                  f"        {then(plan['on_error'], '___error')}"]
    if plan["kind"] == "call" and "loop" in plan:
        loop = plan["loop"]
        lines.append(f"    ___iterator = {loop['iterator']}")
        lines.append("    ___item = next(___iterator, ___done)")
        name, stack, done_locals = loop["done"]
        lines.append("    if ___item is ___done:")
        lines.append(f"        {then((name, stack), locals_=done_locals)}")
        name, stack, next_locals = loop["next"]
        lines.append(f"    {then((name, stack), '___item', locals_=next_locals)}")
    elif plan["kind"] == "call":
        pushes = plan["pushes"]
        pushed = ["___result"] if pushes == 1 else [f"___result[{i}]" for i in range(pushes)]
        lines.append(f"    {then(plan['resume'], *pushed)}")
    elif plan["kind"] == "branch":
        lines += ["    if ___result:", f"        {then(plan['if_true'])}",
                  f"    {then(plan['if_false'])}"]
    elif plan["kind"] == "for":
        lines += ["    if ___result is ___done:", f"        {then(plan['done'])}",
                  f"    {then(plan['next'], '___result')}"]
    return _define(lines, graph_fn, builder, site, on_error=on_error)


_DONE = object()  # what `next` returns for an exhausted iterator


def fresh_exception(exc: BaseException) -> BaseException:
    """A copy of `exc`, an exception the trace made once: raised again on every call, the one
    instance would gather each call's traceback, and the frames and tensors in it, and be the
    same object in every call's handlers."""
    try:
        new = copy.copy(exc)  # its class called on its args, its __dict__ (notes) copied
    except Exception:  # a class whose args do not make it again
        return exc.with_traceback(None)
    new.__cause__, new.__context__ = exc.__cause__, exc.__context__
    new.__suppress_context__ = exc.__suppress_context__
    if isinstance(getattr(exc, "__notes__", None), list):  # the caller may add to them
        new.__notes__ = list(exc.__notes__)
    return new


def rng_state() -> tuple[torch.Tensor, list[torch.Tensor] | None]:
    """The states of torch's default generators: the CPU's, and each CUDA device's once CUDA
    is initialised."""
    cuda = torch.cuda.get_rng_state_all() if torch.cuda.is_initialized() else None
    return torch.random.get_rng_state(), cuda


def set_rng_state(state: tuple[torch.Tensor, list[torch.Tensor] | None]) -> None:
    cpu, cuda = state
    torch.random.set_rng_state(cpu)
    if cuda is not None:
        torch.cuda.set_rng_state_all(cuda)
