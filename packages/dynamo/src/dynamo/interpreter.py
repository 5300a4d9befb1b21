"""The symbolic bytecode interpreter: runs a frame's instructions over trackers.

A Translator steps through a code object's instructions (CPython 3.11 and 3.12) the way the
CPython eval loop does, with a stack and locals of VariableTrackers instead of objects. Tensor
operations go into the OutputGraph; Python operations on constants happen right away; control
flow follows the values known while tracing (constants, shapes, decided symbolic sizes), so
loops unroll and only the branch taken is captured. A call to a user function starts a nested
Translator on the callee's code (inlining). Any instruction it cannot follow raises
`Unsupported` with the user's file and line.
"""

from __future__ import annotations

import builtins
import collections
import collections.abc
import dis
import functools
import operator
import os
import sys
import sysconfig
import types
from typing import Any

import torch

from dynamo.breaks import exception_handler
from dynamo.bytecode import PY312, instructions
from dynamo.exc import Raised, Unsupported, python_error, raised_by_python
from dynamo.operators import BINARY, COMPARE
from dynamo.output_graph import OutputGraph
from dynamo.side_effects import DELETED, MISSING
from dynamo.sources import (
    GlobalsDictSource,
    ModuleSource,
    builtins_source,
    globals_dict_source,
    globals_source,
    module_named_by,
)
from dynamo.variables.base import NullVariable, VariableTracker
from dynamo.variables.builder import wrap, wrap_constant_result
from dynamo.variables.builtins import (
    BuiltinVariable,
    InstanceCheckVariable,
    class_attribute,
    make_exception,
    user_text,
)
from dynamo.variables.constant import (
    ConstantVariable,
    FormattedStringVariable,
    formats_later,
    is_none,
    shown_value,
)
from dynamo.variables.containers import (
    DictVariable,
    IteratorVariable,
    ListVariable,
    OpaqueIteratorVariable,
    SetVariable,
    SliceVariable,
    TupleVariable,
    admit_nans,
    dict_key,
)
from dynamo.variables.contexts import ExitVariable, GradModeVariable, StateContextVariable
from dynamo.variables.functions import (
    Cell,
    ClosureCell,
    NestedFunctionVariable,
    OpaqueFunctionVariable,
)
from dynamo.variables.generators import GeneratorVariable, stop_iteration_error
from dynamo.variables.objects import (
    PythonModuleVariable,
    SuperVariable,
    UserClassVariable,
)
from dynamo.variables.tensor import TensorVariable
from dynamo.variables.user_objects import UserObjectVariable
from guards import DictContains, GetItemSource, GlobalSource, Identity, LocalSource

MAX_INLINE_DEPTH = 32
MAX_INSTRUCTIONS = 1_000_000
_TORCH_DIR = os.path.dirname(torch.__file__)
_STDLIB_DIR = sysconfig.get_paths()["stdlib"]
_POLYFILLS = os.path.join(os.path.dirname(__file__), "polyfills.py")
_GENERATOR = 0x20
_NOT_SIMPLE = (0x20 | 0x80 | 0x100 | 0x200)  # generator, coroutine, iterable/async generator


def _in_library(filename: str) -> bool:
    """Code a break is not blamed on while a user's line called into it: torch's and the
    standard library's (`functools.cached_property.__get__`, a namedtuple's `_make`), and
    dynamo's twins of the standard library's C functions (`polyfills.py`: `bisect`, `reduce`)."""
    return filename.startswith(_TORCH_DIR) or filename == _POLYFILLS or (
        filename.startswith(_STDLIB_DIR) and "site-packages" not in filename)


def _comprehension(code: types.CodeType) -> bool:
    """Whether `code` is a 3.11 list, set or dict comprehension that only reads its cells: it
    is called once where it is made and dropped, so no closure outlives it to hold them."""
    return code.co_name in ("<listcomp>", "<setcomp>", "<dictcomp>") and not any(
        ins.opname in ("MAKE_FUNCTION", "STORE_DEREF", "DELETE_DEREF")
        for ins in instructions(code))


class DeferredAttribute(VariableTracker):
    """A method of `obj` that could not be read while tracing; calling it raises the reason
    (a graph break at the call, where the real method is looked up and called)."""

    def __init__(self, obj: VariableTracker, name: str, error: Unsupported) -> None:
        self.obj = obj
        self.name = name
        self.error = error

    def call(self, tx: Translator, args, kwargs) -> VariableTracker:
        raise Unsupported(self.error.reason)


class ExceptionVariable(ConstantVariable):
    """An exception the traced code raised and a handler of it caught; `reason` is what the
    capture reports if it is raised again and nothing catches it."""

    def __init__(self, value: BaseException, reason: str) -> None:
        super().__init__(value)
        self.reason = reason

    def setattr(self, tx: Translator, name: str, value: VariableTracker) -> None:
        if name not in ("__traceback__", "__context__", "__cause__", "__suppress_context__") \
                or not value.is_constant():
            super().setattr(tx, name, value)
        setattr(self.value, name, value.as_constant())  # the trace's exceptions have no frames


class SavedCellVariable(VariableTracker):
    """A cell variable's cell, set aside on the stack by a 3.12 inlined comprehension whose
    loop variable has the same name (LOAD_FAST_AND_CLEAR), until the comprehension ends."""

    def __init__(self, name: str, cell: Any) -> None:
        self.name = name
        self.cell = cell

    def words(self) -> str:
        return (f"the cell of {self.name!r}, set aside while a comprehension uses that name "
                "(Python 3.12)")


class CellVariable(VariableTracker):
    """A closure cell on the stack (LOAD_CLOSURE), on its way into a nested function."""

    def __init__(self, cell: Any) -> None:
        self.cell = cell


def _reachable(roots: list[Any], skip: Any = None) -> dict[int, None]:
    """The ids of the trackers and containers reachable from `roots` (through trackers'
    attributes, containers, closures and running or suspended frames; not the graph), in the
    order Python frees them when `roots` go: a list's or tuple's items last to first, a
    dict's entries and a frame's locals first to last. `skip` (a frame) is not walked into."""
    seen: dict[int, None] = {} if skip is None else {id(skip): None}
    todo = list(reversed(roots))
    while todo:
        value = todo.pop()
        if value is None or id(value) in seen:
            continue
        seen[id(value)] = None
        children: list[Any] = []
        if isinstance(value, Translator):
            children = [*frame_values(value), value.stack, value.handling, value.holding,
                        value.suspended, value.result]
        elif isinstance(value, (list, tuple, collections.deque)):
            children = list(reversed(value))
        elif isinstance(value, (set, frozenset)):
            children = list(value)
        elif isinstance(value, dict):
            children = [x for item in value.items() for x in item]
        elif isinstance(value, types.FunctionType):  # a step function's closure (`lazy_map`)
            for cell in value.__closure__ or ():
                try:
                    children.append(cell.cell_contents)
                except ValueError:  # an empty cell
                    pass
        elif isinstance(value, types.MethodType):
            children = [value.__self__, value.__func__]
        elif isinstance(value, functools.partial):
            children = [value.func, value.args, value.keywords]
        elif type(value).__module__.startswith("dynamo.") and \
                not isinstance(value, (OutputGraph, ConstantVariable)):
            children = list(getattr(value, "__dict__", {}).values())
        todo.extend(reversed(children))
    return seen


def frame_values(tx: Translator) -> list[Any]:
    """A frame's locals, in the order Python clears them (their slots' order), then its
    cells."""
    slots = {name: i for i, name in enumerate(tx.code.co_varnames)}
    names = sorted(tx.locals, key=lambda name: slots.get(name, len(slots)))
    return [*(tx.locals[name] for name in names), tx.cells]


class Translator:
    """Symbolically runs one code object; `run()` returns the tracker of its return value."""

    def __init__(self, output: OutputGraph, code: types.CodeType, f_globals: dict,
                 symbolic_locals: dict[str, VariableTracker], cells: dict[str, Any],
                 depth: int = 0, frame_locals: dict[str, Any] | None = None) -> None:
        self.output = output
        self.code = code
        self.f_globals = f_globals
        self.locals = symbolic_locals
        self.cells = cells
        self.depth = depth
        self.frame_locals = frame_locals or {}  # the top frame's real values, wrapped on read
        self.instructions = instructions(code)
        self.stack: list[VariableTracker] = []
        self.ip = 0
        self.kw_names: tuple[str, ...] = ()
        self.result: VariableTracker | None = None
        self.suspended: VariableTracker | None = None  # a generator's value at its `yield`
        self.steps = 0
        self.stop_at: int | None = None  # the top frame stops before this instruction
        self.made_closures = False  # a nested function captured this frame's cells
        self.handling: list[VariableTracker] = []  # exceptions whose handlers are running
        self.entered_handler_at: int | None = None  # where the first of them was raised
        self.holding: list[Any] = []  # the functions and arguments of the calls running

    # ----- the loop ---------------------------------------------------------------------------

    def run(self) -> VariableTracker | None:
        """The return value's tracker; None when the trace stopped at `stop_at`."""
        self.output.frames.append(self)
        try:
            return self._run()
        finally:
            self.output.frames.pop()

    def _run(self) -> VariableTracker | None:
        while self.result is None and self.suspended is None:
            if self.ip == self.stop_at:
                return None
            ins = self.instructions[self.ip]
            self.ip += 1
            self.steps += 1
            try:
                if self.steps > MAX_INSTRUCTIONS:
                    raise Unsupported(f"more than {MAX_INSTRUCTIONS} instructions (an endless "
                                      "loop while tracing?)")
                handler = getattr(self, ins.opname, None)
                if handler is None:
                    raise Unsupported(f"the bytecode instruction {ins.opname} "
                                      f"({_construct(ins.opname)})")
                handler(ins)
            except Raised as error:
                if not self._catch(error, ins):
                    error.frames += 1
                    self._note(error, ins)
                    raise
            except Unsupported as error:
                self._note(error, ins)
                raise
            except Exception as error:  # a case the interpreter does not know: say where
                unsupported = Unsupported(f"{ins.opname} met a case the interpreter does not "
                                          f"handle ({type(error).__name__}: {error})")
                self._note(unsupported, ins)
                raise unsupported from error
        return self.result

    def _catch(self, error: Raised, ins) -> bool:
        """Go on in the handler of the `try` block that `ins` is in, as CPython does: the stack
        cut to the block's depth, the exception pushed. False: no block of this code."""
        handler = exception_handler(self.code, self.ip - 1)
        if handler is None:
            return False
        target, depth, lasti = handler
        handled = self.handling[-1].as_constant() if self.handling else None
        if handled is not None and handled is not error.exception and \
                error.exception.__context__ is None:
            error.exception.__context__ = handled  # raised while handling another, as in Python
        if self.entered_handler_at is None:
            self.entered_handler_at = self.ip - 1
        del self.stack[depth:]
        if lasti:
            self.push(ConstantVariable(ins.offset))
        self.push(ExceptionVariable(error.exception, error.reason))
        self.ip = target
        return True

    def _note(self, error: Unsupported, ins) -> None:
        """Record where `error` happened: the user's line, and the top frame's instruction."""
        error.locate(self.code.co_filename, ins.lineno,
                     in_library=_in_library(self.code.co_filename), function=self.code.co_name)
        if self.depth == 0 and error.index is None:
            # Inside a handler the frame cannot break: it breaks where the exception came from
            # (the real step raises there, and a resume function runs the handler).
            at = self.entered_handler_at
            error.index = at if at is not None else self.ip - 1

    def push(self, v: VariableTracker) -> None:
        self.stack.append(v)

    def pop(self) -> VariableTracker:
        return self.stack.pop()

    def popn(self, n: int) -> list[VariableTracker]:
        if n == 0:
            return []
        values = self.stack[-n:]
        del self.stack[-n:]
        return values

    def jump(self, ins) -> None:
        self.ip = ins.target

    def truth(self, v: VariableTracker) -> bool:
        return v.truth(self)

    # ----- calls and inlining -----------------------------------------------------------------

    def call(self, fn: VariableTracker, args: list[VariableTracker],
             kwargs: dict[str, VariableTracker]) -> VariableTracker:
        return fn.call(self, args, kwargs)

    def calling(self, fn: VariableTracker, args: list[VariableTracker],
                kwargs: dict[str, VariableTracker]) -> VariableTracker:
        """A call instruction's call: its arguments held while it runs (`dropped`), and
        dropped when it returns."""
        self.holding.append((fn, args, kwargs))
        try:
            result = self.call(fn, args, kwargs)
        finally:
            self.holding.pop()
        self.dropped([fn, args, kwargs])
        return result

    def dropped(self, values: list[Any]) -> None:
        """`values` lost a reference. Python closes a generator when its last reference goes:
        one made in the trace and suspended inside a `try`/`with` block that nothing in the
        trace refers to any more is closed here, so its cleanup runs where eager's does (`for v
        in gen(): break` closes it at the break, before the next statement)."""
        made = self.output.generators
        if not made:
            return
        made[:] = [g for g in made if not g.finished]  # (a finished one is done with)
        generators = [g for g in made if g.started and g._suspended_in_block()]
        if not generators:
            return
        found = list(_reachable(values))  # in the order Python frees them
        generators = sorted((g for g in generators if id(g) in found),
                            key=lambda g: found.index(id(g)))
        if not generators:
            return
        frames = self.output.frames
        side_effects = self.output.side_effects
        live = _reachable([*frames, list(side_effects.containers.values()),
                           list(side_effects.writes.values())])
        for generator in generators:
            if id(generator) in live or generator.frame in frames:
                continue
            try:
                generator.call_method(self, "close", [], {})
            except Unsupported as error:  # its cleanup raised, or cannot be followed
                unsupported = Unsupported(f"closing the generator {generator.name} where its "
                                          f"last reference goes ({error.reason})")
                unsupported.blame_generator(generator.frame.code)
                raise unsupported from None

    def inline(self, code: types.CodeType, f_globals: dict, bound: dict[str, VariableTracker],
               cells: dict[str, Any], name: str) -> VariableTracker:
        if code.co_flags & _NOT_SIMPLE & ~_GENERATOR:
            raise Unsupported(f"calling {name}, a coroutine or async generator function")
        if self.depth >= MAX_INLINE_DEPTH:
            raise Unsupported(f"inlining {name}: calls nest deeper than {MAX_INLINE_DEPTH}")
        callee = Translator(self.output, code, f_globals, bound, cells, self.depth + 1)
        if not code.co_flags & _GENERATOR:
            result = callee.run()
            self.holding.append(result)
            try:
                self.dropped(frame_values(callee))  # the callee's frame is gone
            finally:
                self.holding.pop()
            return result
        why = self.output.opaque_generators.get(code)
        if why is not None:
            raise Unsupported(f"calling the generator function {name} (its items could not be "
                              f"followed in the trace: {why})")
        generator = GeneratorVariable(callee, name)
        self.output.generators.append(generator)
        return generator

    def make_super(self, args: list[VariableTracker]) -> VariableTracker:
        if len(args) == 2:
            return SuperVariable.checked(args[0].as_constant(), args[1])
        if args:
            raise Unsupported("super() with one argument (an unbound super object)")
        cell = self.cells.get("__class__")
        if cell is None or not self.code.co_argcount:
            raise Unsupported("super() outside a method")
        cls = cell.contents.as_constant() if isinstance(cell, Cell) else cell.cell.cell_contents
        first = self.code.co_varnames[0]
        # a first argument that a nested function captures lives in its cell
        obj = self.load_cell(first) if first in self.code.co_cellvars else self.load_local(first)
        return SuperVariable(cls, obj)

    # ----- names ------------------------------------------------------------------------------

    def load_local(self, name: str) -> VariableTracker:
        if name in self.locals:
            return self.locals[name]
        if name in self.frame_locals:
            self.locals[name] = wrap(self, self.frame_locals[name], LocalSource(name))
            return self.locals[name]
        raise Raised(UnboundLocalError(f"cannot access local variable {name!r} where it is "
                                       "not associated with a value"),
                     f"local variable {name!r} referenced before assignment")

    def load_global(self, name: str) -> VariableTracker:
        g = self.f_globals
        written = self.output.side_effects.load("global", g, name)
        if written is not MISSING and written is not DELETED:
            return written
        self._pin_module_of(g)
        if name in g and written is not DELETED:
            source: Any = GlobalSource(name) if g is self.output.f_globals else \
                globals_source(g, name)
            return wrap(self, g[name], source)
        b = g.get("__builtins__", builtins)
        table = b if isinstance(b, dict) else vars(b)
        namespace = globals_dict_source(g, self.output.f_globals)
        if written is MISSING and not isinstance(namespace, GlobalsDictSource):
            # a global of that name, made later, would shadow a builtin (not guarded in a
            # namespace no module owns, `exec`'d code inlined: the guard would keep it alive)
            self.output.add_guard(DictContains(namespace, name, False))
        # the builtin itself is guarded too (`builtins.abs = ...`, a custom `__builtins__`
        # dict changed after compiling), as torch.compile guards it
        where = builtins_source(table, g, self.output.f_globals)
        if name not in table:
            self.output.add_guard(DictContains(where, name, False))
            raise Raised(NameError(f"name {name!r} is not defined"),
                         f"name {name!r} is not defined")
        value = table[name]
        self.output.add_guard(Identity.of(GetItemSource(where, name), value))
        return wrap(self, value, None)

    def _pin_module_of(self, g: dict) -> None:
        """Globals `g` of another module are read, and guarded, through `sys.modules[name]`
        (`sources.globals_source`): guard that the module there is still the one whose dict
        `g` is. A module deleted from `sys.modules` and imported again is a new object, while
        the functions imported from the old one (`from mod import h`) still read the old
        dict: without this guard, a write to the old module's globals was checked against
        the new module's and missed (a stale result)."""
        module = module_named_by(g) if g is not self.output.f_globals else None
        if module is not None:
            self.output.add_guard(Identity.of(ModuleSource(module), sys.modules[module]))

    def load_cell(self, name: str) -> VariableTracker:
        cell = self.cells.get(name)
        if isinstance(cell, Cell):
            if cell.contents is None:
                raise Unsupported(f"free variable {name!r} referenced before assignment")
            return cell.contents
        if isinstance(cell, ClosureCell):
            written = self.output.side_effects.load("cell", cell.cell, "cell_contents")
            if written is DELETED:
                raise Unsupported(f"free variable {name!r} is empty")
            if written is not MISSING:
                return written
            try:
                contents = cell.cell.cell_contents
            except ValueError:
                raise Unsupported(f"free variable {name!r} is empty") from None
            return wrap(self, contents, cell.source)
        raise Unsupported(f"the closure variable {name!r}")

    # ----- instructions: stack and names ------------------------------------------------------

    def NOP(self, ins) -> None:
        pass

    RESUME = PRECALL = EXTENDED_ARG = COPY_FREE_VARS = NOP

    def PUSH_NULL(self, ins) -> None:
        self.push(NullVariable())

    def POP_TOP(self, ins) -> None:
        self.dropped([self.pop()])

    def END_FOR(self, ins) -> None:
        self.popn(2)

    def COPY(self, ins) -> None:
        self.push(self.stack[-ins.arg])

    def SWAP(self, ins) -> None:
        self.stack[-1], self.stack[-ins.arg] = self.stack[-ins.arg], self.stack[-1]

    def LOAD_FAST(self, ins) -> None:
        self.push(self.load_local(ins.argval))

    LOAD_FAST_CHECK = LOAD_FAST

    def LOAD_FAST_AND_CLEAR(self, ins) -> None:
        # 3.12's inlined comprehensions set the outer variable of the loop variable's name
        # aside on the stack, and a STORE_FAST puts it back after the loop. A cell variable's
        # slot holds its cell: that cell is set aside (a MAKE_CELL then makes the
        # comprehension's own), not the variable's value.
        name = ins.argval
        if name in self.code.co_cellvars and name in self.cells:
            self.frame_locals.pop(name, None)
            self.push(SavedCellVariable(name, self.cells.pop(name)))
            return
        if name not in self.locals and name in self.frame_locals:
            self.load_local(name)  # the frame's value, on the stack (handed on at a break)
        self.frame_locals.pop(name, None)  # unbound until the STORE_FAST that restores it
        self.push(self.locals.pop(name, NullVariable()))

    def STORE_FAST(self, ins) -> None:
        value = self.pop()
        if isinstance(value, SavedCellVariable):  # the end of a 3.12 comprehension
            self.locals.pop(ins.argval, None)
            self.cells[ins.argval] = value.cell
        elif isinstance(value, NullVariable):
            self.locals.pop(ins.argval, None)
        else:
            old = self.locals.get(ins.argval)
            self.locals[ins.argval] = value
            self.dropped([old])

    def DELETE_FAST(self, ins) -> None:
        if ins.argval not in self.locals and ins.argval not in self.frame_locals:
            self.load_local(ins.argval)  # raises UnboundLocalError, as `del` does there
        self.dropped([self.locals.pop(ins.argval, None)])
        self.frame_locals.pop(ins.argval, None)  # not read from the frame again

    def LOAD_CONST(self, ins) -> None:
        self.push(wrap_constant_result(ins.argval))

    def LOAD_GLOBAL(self, ins) -> None:
        if ins.arg & 1:
            self.push(NullVariable())
        self.push(self.load_global(ins.argval))

    def STORE_GLOBAL(self, ins) -> None:
        self.output.side_effects.store("global", self.f_globals, ins.argval, self.pop())

    def DELETE_GLOBAL(self, ins) -> None:
        g, name = self.f_globals, ins.argval
        written = self.output.side_effects.load("global", g, name)
        there = name in g  # before the graph runs: guarded
        if written is not DELETED:  # (a deletion guarded it already)
            self.output.add_guard(DictContains(globals_dict_source(g, self.output.f_globals),
                                               name, there))
            self._pin_module_of(g)
        if written is DELETED or written is MISSING and not there:
            raise Raised(NameError(f"name {name!r} is not defined"),
                         f"del of the undefined global {name!r}")
        self.output.side_effects.delete("global", g, name, there)

    def LOAD_DEREF(self, ins) -> None:
        self.push(self.load_cell(ins.argval))

    def STORE_DEREF(self, ins) -> None:
        cell = self.cells.get(ins.argval)
        if isinstance(cell, ClosureCell):
            if cell.cell_source is not None:
                self.output.side_effects.cell_sources[id(cell.cell)] = cell.cell_source
            self.output.side_effects.store("cell", cell.cell, "cell_contents", self.pop())
        elif isinstance(cell, Cell):
            cell.contents = self.pop()
        else:
            raise Unsupported(f"assigning the closure variable {ins.argval!r}")

    def DELETE_DEREF(self, ins) -> None:
        # (`except E as e` ends so where a nested function captures `e`)
        self.load_cell(ins.argval)  # an empty cell raises, as `del` does
        cell = self.cells[ins.argval]
        if isinstance(cell, ClosureCell):
            if cell.cell_source is not None:
                self.output.side_effects.cell_sources[id(cell.cell)] = cell.cell_source
            # (emptying a cell that is empty already is harmless: always replayed)
            self.output.side_effects.delete("cell", cell.cell, "cell_contents", there=True)
        else:
            cell.contents = None

    def LOAD_CLOSURE(self, ins) -> None:
        self.push(CellVariable(self.cells[ins.argval]))

    def MAKE_CELL(self, ins) -> None:
        name = ins.argval
        if name not in self.cells:
            if name not in self.locals and name in self.frame_locals:
                self.load_local(name)  # an argument of the frame that a closure captures
            self.cells[name] = Cell(self.locals.pop(name, None))

    def _attribute(self, obj: VariableTracker, name: str, method: bool) -> VariableTracker:
        if name == "__class__" and not isinstance(obj, SuperVariable):
            return class_attribute(self, obj)
        if name == "__instancecheck__" and isinstance(obj, SuperVariable):
            found = InstanceCheckVariable.of_super(obj.cls, obj.obj)
            if found is not None:
                return found
        try:
            return obj.getattr(self, name)
        except Unsupported as error:
            if not method:
                raise
            # A method the trace cannot follow: fail at the call instead, where the graph can
            # break and the real method is called.
            return DeferredAttribute(obj, name, error)

    def LOAD_ATTR(self, ins) -> None:
        obj = self.pop()
        method = PY312 and bool(ins.arg & 1)
        if method:
            self.push(NullVariable())
        self.push(self._attribute(obj, ins.argval, method))

    def LOAD_METHOD(self, ins) -> None:
        obj = self.pop()
        self.push(NullVariable())
        self.push(self._attribute(obj, ins.argval, method=True))

    def LOAD_SUPER_ATTR(self, ins) -> None:
        global_super, cls, obj = self.popn(3)
        if global_super.is_constant() and global_super.as_constant() is super:
            bound: VariableTracker = SuperVariable.checked(cls.as_constant(), obj) \
                if ins.arg & 2 else SuperVariable(cls.as_constant(), obj)
        else:
            # a global `super` that shadows the builtin: CPython calls it, with no arguments
            # for the zero-argument form (`super().f`), and reads the attribute from its result
            bound = self.call(global_super, [cls, obj] if ins.arg & 2 else [], {})
        attr = self._attribute(bound, ins.argval, bool(ins.arg & 1))
        if ins.arg & 1:
            self.push(NullVariable())
        self.push(attr)

    def DELETE_ATTR(self, ins) -> None:
        self.pop().delattr(self, ins.argval)

    def STORE_ATTR(self, ins) -> None:
        obj = self.pop()
        obj.setattr(self, ins.argval, self.pop())

    def IMPORT_NAME(self, ins) -> None:
        level, fromlist = self.popn(2)
        module = __import__(ins.argval, self.f_globals, None, fromlist.as_constant(),
                            level.as_constant())
        self.push(PythonModuleVariable(module))

    def IMPORT_FROM(self, ins) -> None:
        self.push(self.stack[-1].getattr(self, ins.argval))

    # ----- operators --------------------------------------------------------------------------

    def _apply(self, fn: Any, args: list[VariableTracker]) -> None:
        self.push(BuiltinVariable(fn).call(self, args, {}))

    def BINARY_OP(self, ins) -> None:
        symbol = dis._nb_ops[ins.arg][1]
        self._apply(BINARY[symbol], self.popn(2))

    def COMPARE_OP(self, ins) -> None:
        self._apply(COMPARE[ins.argval], self.popn(2))

    def IS_OP(self, ins) -> None:
        self._apply(operator.is_not if ins.arg else operator.is_, self.popn(2))

    def CONTAINS_OP(self, ins) -> None:
        item, container = self.popn(2)
        found = BuiltinVariable(operator.contains).call(self, [container, item], {})
        self.push(ConstantVariable(found.truth(self) != bool(ins.arg)))

    def UNARY_NEGATIVE(self, ins) -> None:
        self._apply(operator.neg, [self.pop()])

    def UNARY_POSITIVE(self, ins) -> None:
        self._apply(operator.pos, [self.pop()])

    def UNARY_INVERT(self, ins) -> None:
        self._apply(operator.invert, [self.pop()])

    def UNARY_NOT(self, ins) -> None:
        self.push(ConstantVariable(not self.truth(self.pop())))

    def CALL_INTRINSIC_1(self, ins) -> None:  # 3.12; CPython numbers its intrinsics
        if ins.arg == 5:  # INTRINSIC_UNARY_POSITIVE
            return self.UNARY_POSITIVE(ins)
        if ins.arg == 6:  # INTRINSIC_LIST_TO_TUPLE
            return self.push(TupleVariable(self.pop().items(self)))
        if ins.arg == 3:  # INTRINSIC_STOPITERATION_ERROR: PEP 479, in a generator's handler
            exc = self.stack[-1]
            if isinstance(exc.as_constant(), StopIteration):
                self.stack[-1] = ExceptionVariable(stop_iteration_error(exc.as_constant()),
                                                   f"{self.code.co_name} raised StopIteration")
            return None
        raise Unsupported(_intrinsic(1, ins.arg))

    def CALL_INTRINSIC_2(self, ins) -> None:  # 3.12: except* and PEP 695's bounded TypeVars
        raise Unsupported(_intrinsic(2, ins.arg))

    def BINARY_SUBSCR(self, ins) -> None:
        self._apply(operator.getitem, self.popn(2))

    def STORE_SUBSCR(self, ins) -> None:
        value, container, key = self.popn(3)
        BuiltinVariable(operator.setitem).call(self, [container, key, value], {})

    def DELETE_SUBSCR(self, ins) -> None:
        container, key = self.popn(2)
        BuiltinVariable(operator.delitem).call(self, [container, key], {})

    def BINARY_SLICE(self, ins) -> None:
        container, start, stop = self.popn(3)
        self._apply(operator.getitem, [container, SliceVariable([start, stop])])

    def STORE_SLICE(self, ins) -> None:
        value, container, start, stop = self.popn(4)
        BuiltinVariable(operator.setitem).call(
            self, [container, SliceVariable([start, stop]), value], {})

    # ----- building values --------------------------------------------------------------------

    def BUILD_TUPLE(self, ins) -> None:
        self.push(TupleVariable(self.popn(ins.arg)))

    def BUILD_LIST(self, ins) -> None:
        self.push(ListVariable(self.popn(ins.arg)))

    def BUILD_SET(self, ins) -> None:
        items = self.popn(ins.arg)
        values = tuple(dict_key(v) for v in items)
        admit_nans(self, items)
        self.push(SetVariable.made(values))

    def BUILD_MAP(self, ins) -> None:
        flat = self.popn(2 * ins.arg)
        self.push(DictVariable({dict_key(flat[i], self): flat[i + 1]
                                for i in range(0, len(flat), 2)}))

    def BUILD_CONST_KEY_MAP(self, ins) -> None:
        keys = self.pop().as_constant()
        self.push(DictVariable(dict(zip(keys, self.popn(ins.arg)))))

    def BUILD_SLICE(self, ins) -> None:
        self.push(SliceVariable(self.popn(ins.arg)))

    def BUILD_STRING(self, ins) -> None:
        parts = self.popn(ins.arg)
        if any(formats_later(v) for v in parts):
            pieces = [piece for v in parts for piece in (
                v.pieces if isinstance(v, FormattedStringVariable) else [(v, None, "")])]
            self.push(FormattedStringVariable(pieces))
        else:
            self.push(ConstantVariable("".join(v.as_constant() for v in parts)))

    def FORMAT_VALUE(self, ins) -> None:
        spec = self.pop().as_constant() if ins.arg & 0x04 else ""
        raw = self.pop()
        if isinstance(raw, TensorVariable):
            raise Unsupported("formatting a tensor into a string (its value is not known "
                              "while tracing)")
        convert = {0: None, 1: str, 2: repr, 3: ascii}[ins.arg & 0x03]
        if convert in (str, repr) or (convert is None and not spec and isinstance(
                raw, UserObjectVariable) and not raw.defines("__format__")):
            text = user_text(self, convert or str, raw)  # (object's `__format__` is `str()`)
            if text is not None:
                raw, convert = text, None
        if formats_later(raw):
            self.push(FormattedStringVariable([(raw, convert, spec)]))
        else:
            shown = shown_value(raw)
            with raised_by_python("formatting a value"):
                text = format(shown if convert is None else convert(shown), spec)
            self.push(ConstantVariable(text))

    def _building(self, depth: int) -> Any:
        """The container a display or comprehension is building, `depth` deep in the stack.
        One handed over by a graph break comes from the frame: its growth is a side effect."""
        container = self.stack[-depth]
        if container.source is not None:
            self.output.side_effects.mutated(container)
        return container

    def LIST_APPEND(self, ins) -> None:
        value = self.pop()
        container = self._building(ins.arg)
        if container.unread:  # a comprehension's list handed over by a break: not read (no
            container.appended.append(value)  # guard on its length), the append replayed
        else:
            container.values.append(value)

    def LIST_EXTEND(self, ins) -> None:
        items = self.pop().items(self)
        self._building(ins.arg).values.extend(items)

    def LIST_TO_TUPLE(self, ins) -> None:
        self.push(TupleVariable(self.pop().items(self)))

    def SET_ADD(self, ins) -> None:
        item = self.pop()
        value = dict_key(item)
        admit_nans(self, [item], self._building_set(ins.arg))
        self._building_set(ins.arg).change("add", value)

    def SET_UPDATE(self, ins) -> None:
        other = self.pop()
        if isinstance(other, ConstantVariable) and type(other.value) in (set, frozenset):
            values = other.value  # merged as CPython merges a set (another order than adds)
            items = [other]
        else:
            items = other.items(self)  # (once: an iterator's items are taken)
            values = tuple(dict_key(v) for v in items)
        admit_nans(self, items, self._building_set(ins.arg))
        self._building_set(ins.arg).change("update", values)

    def _building_set(self, depth: int) -> SetVariable:
        container = self._building(depth)
        if not isinstance(container, SetVariable):  # handed over by a break, of non-constants
            raise Unsupported("adding to a set of items that are not constants (functions, "
                              "objects), handed over by a graph break")
        return container

    def MAP_ADD(self, ins) -> None:
        key, value = self.popn(2)
        building = self._building(ins.arg)
        if not isinstance(building, DictVariable):  # (one handed over by a break, not traced)
            raise Unsupported(f"a dict comprehension adding to {building.words()}")
        building.entries[dict_key(key, self)] = value

    def DICT_UPDATE(self, ins) -> None:
        other = self.pop()
        if not isinstance(other, DictVariable):
            raise Unsupported(f"** on {other.words()}")
        building = self._building(ins.arg)
        if not isinstance(building, DictVariable):  # (one handed over by a break, not traced)
            raise Unsupported(f"** into {building.words()}")
        building.entries.update(other.entries)

    def DICT_MERGE(self, ins) -> None:  # a call's `**a`: a keyword given twice raises
        other, building = self.stack[-1], self.stack[-1 - ins.arg]
        if isinstance(other, DictVariable) and isinstance(building, DictVariable) \
                and other.entries.keys() & building.entries.keys():
            raise Unsupported("a keyword argument given twice (by `**`)")
        self.DICT_UPDATE(ins)

    def UNPACK_SEQUENCE(self, ins) -> None:
        items = self.pop().items(self)
        if len(items) != ins.arg:
            raise Unsupported(f"unpacking {len(items)} values into {ins.arg} names")
        self.stack.extend(reversed(items))

    def UNPACK_EX(self, ins) -> None:
        before, after = ins.arg & 0xFF, ins.arg >> 8
        items = self.pop().items(self)
        if len(items) < before + after:
            raise Unsupported(f"unpacking {len(items)} values into {before + after}+ names")
        middle = ListVariable(items[before:len(items) - after])
        self.stack.extend(reversed([*items[:before], middle, *items[len(items) - after:]]))

    def MAKE_FUNCTION(self, ins) -> None:
        code = self.pop().as_constant()
        closure = self.pop() if ins.arg & 0x08 else None
        annotations = None
        if ins.arg & 0x04:  # a tuple: name, annotation, name, annotation, ...
            flat = self.pop().items(self)
            annotations = DictVariable({k.as_constant(): v for k, v in zip(flat[::2], flat[1::2])})
        kwdefaults = self.pop().entries if ins.arg & 0x02 else {}
        defaults = tuple(self.pop().items(self)) if ins.arg & 0x01 else ()
        cells = {name: c.cell for name, c in zip(code.co_freevars, closure.values)} \
            if closure is not None else {}
        self.made_closures = self.made_closures or (bool(cells) and not _comprehension(code))
        # `__name__` is the code's name (`base`, `<lambda>`); `__qualname__` its qualified one
        self.push(NestedFunctionVariable(code, self.f_globals, code.co_name, defaults,
                                         kwdefaults, cells, annotations))

    # ----- calls ------------------------------------------------------------------------------

    def KW_NAMES(self, ins) -> None:
        self.kw_names = self.code.co_consts[ins.arg]

    def CALL(self, ins) -> None:
        args = self.popn(ins.arg)
        fn, first = self.popn(2)
        if not isinstance(fn, NullVariable):
            fn, args = fn, [first, *args]
        else:
            fn = first
        kwargs: dict[str, VariableTracker] = {}
        if self.kw_names:
            n = len(self.kw_names)
            kwargs = dict(zip(self.kw_names, args[-n:]))
            args = args[:-n]
            self.kw_names = ()
        self.push(self.calling(fn, args, kwargs))

    def CALL_FUNCTION_EX(self, ins) -> None:
        kwargs = self.pop() if ins.arg & 1 else DictVariable({})
        args = self.pop()
        fn = self.pop()
        if self.stack and isinstance(self.stack[-1], NullVariable):
            self.pop()
        if not isinstance(kwargs, DictVariable):
            raise Unsupported(f"** on {kwargs}")
        self.push(self.calling(fn, args.items(self), dict(kwargs.entries)))

    def RETURN_GENERATOR(self, ins) -> None:
        self.push(ConstantVariable(None))

    def GET_YIELD_FROM_ITER(self, ins) -> None:
        self.GET_ITER(ins)

    def SEND(self, ins) -> None:
        """`yield from`: the next item of the iterator below the sent value; once it is
        exhausted, what it returned, and on past the loop (3.12: to END_SEND)."""
        sent = self.pop()
        receiver = self.stack[-1]
        if not isinstance(receiver, IteratorVariable):
            raise Unsupported(f"yield from {receiver.words()}")
        value = receiver.next(self, sent) if isinstance(receiver, GeneratorVariable) \
            else receiver.next(self)
        if value is not None:
            self.push(value)
            return
        returned = receiver.frame.result if isinstance(receiver, GeneratorVariable) else None
        returned = returned or ConstantVariable(None)
        if PY312:
            self.push(returned)
        else:
            self.stack[-1] = returned
        self.jump(ins)

    def END_SEND(self, ins) -> None:
        value = self.pop()
        self.stack[-1] = value

    def YIELD_VALUE(self, ins) -> None:
        self.suspended = self.pop()  # run() returns; the generator's next item resumes it

    def RETURN_VALUE(self, ins) -> None:
        self.result = self.pop()

    def RETURN_CONST(self, ins) -> None:
        self.result = wrap_constant_result(ins.argval)

    # ----- control flow -----------------------------------------------------------------------

    def JUMP_FORWARD(self, ins) -> None:
        self.jump(ins)

    JUMP_BACKWARD = JUMP_ABSOLUTE = JUMP_BACKWARD_NO_INTERRUPT = JUMP_FORWARD

    def POP_JUMP_IF_FALSE(self, ins) -> None:
        if not self.truth(self.pop()):
            self.jump(ins)

    def POP_JUMP_IF_TRUE(self, ins) -> None:
        if self.truth(self.pop()):
            self.jump(ins)

    def POP_JUMP_IF_NONE(self, ins) -> None:
        if is_none(self.pop()):
            self.jump(ins)

    def POP_JUMP_IF_NOT_NONE(self, ins) -> None:
        if not is_none(self.pop()):
            self.jump(ins)

    def JUMP_IF_FALSE_OR_POP(self, ins) -> None:
        if not self.truth(self.stack[-1]):
            self.jump(ins)
        else:
            self.pop()

    def JUMP_IF_TRUE_OR_POP(self, ins) -> None:
        if self.truth(self.stack[-1]):
            self.jump(ins)
        else:
            self.pop()

    def GET_ITER(self, ins) -> None:
        value = self.pop()
        self.push(value if isinstance(value, (IteratorVariable, OpaqueIteratorVariable))
                  else IteratorVariable.over(value, self))

    def FOR_ITER(self, ins) -> None:
        iterator = self.stack[-1]
        if isinstance(iterator, OpaqueIteratorVariable):
            raise Unsupported(f"the next item of a {type(iterator.value).__name__} from outside "
                              "the trace (a loop's iterator that a graph break in its body "
                              "handed on, or one passed in)")
        if not isinstance(iterator, IteratorVariable):
            raise Unsupported(f"iterating over {iterator.words()}")
        value = iterator.next(self)
        if value is not None:
            self.push(value)
            return
        self.pop()
        self.ip = ins.target + (1 if PY312 else 0)  # 3.12: past the END_FOR

    def BEFORE_WITH(self, ins) -> None:
        ctx = self.pop()
        if isinstance(ctx, UserObjectVariable) and ctx.defines_in_python("__enter__") and \
                ctx.defines_in_python("__exit__"):  # a context manager written in Python
            self.push(ctx.getattr(self, "__exit__"))
            self.push(ctx.call_method(self, "__enter__", [], {}))
            return
        if not isinstance(ctx, GradModeVariable | StateContextVariable):
            raise Unsupported(f"entering {ctx.words()} as a context manager (traced: torch's "
                              "grad-mode, autocast and inference-mode contexts, and classes "
                              "whose __enter__/__exit__ are written in Python)")
        self.push(ExitVariable(ctx))
        self.push(ctx.call_method(self, "__enter__", [], {}))

    # ----- match statements: each test is a traced isinstance/len/hasattr, under its guards --

    def GET_LEN(self, ins) -> None:
        self.push(BuiltinVariable(len).call(self, [self.stack[-1]], {}))

    def MATCH_MAPPING(self, ins) -> None:
        kind = self.stack[-1].python_type()
        self.push(ConstantVariable(issubclass(kind, collections.abc.Mapping)))

    def MATCH_SEQUENCE(self, ins) -> None:
        kind = self.stack[-1].python_type()
        self.push(ConstantVariable(issubclass(kind, collections.abc.Sequence)
                                   and not issubclass(kind, (str, bytes, bytearray))))

    def MATCH_KEYS(self, ins) -> None:
        subject, keys = self.stack[-2], self.stack[-1].as_constant()
        if not isinstance(subject, DictVariable):
            raise Unsupported(f"a mapping pattern matched against {subject.words()}")
        found = all(subject.has_key(k) for k in keys)
        self.push(TupleVariable([subject.lookup(k) for k in keys]) if found
                  else ConstantVariable(None))

    def COPY_DICT_WITHOUT_KEYS(self, ins) -> None:
        keys = self.pop().as_constant()
        rest = {k: v for k, v in self.stack[-1].entries.items() if k not in keys}
        self.push(DictVariable(rest))

    def MATCH_CLASS(self, ins) -> None:
        subject, cls, names = self.popn(3)
        kind = cls.as_constant()
        if not isinstance(kind, type):
            raise Unsupported("a class pattern whose class is not a class")
        if not BuiltinVariable(isinstance).call(self, [subject, cls], {}).as_constant():
            self.push(ConstantVariable(None))
            return
        attributes = list(names.as_constant())
        values = []
        if ins.arg:
            # read through the class's tracker, so that the guards cover it (a class whose
            # __match_args__ changes after compiling matched by the old names)
            declared = BuiltinVariable(hasattr).call(
                self, [cls, ConstantVariable("__match_args__")], {}).as_constant()
            positional = self._attribute(cls, "__match_args__", False).as_constant() \
                if declared else ()
            if type(positional) is not tuple:
                raise python_error(TypeError(f"{_type_name(kind)}.__match_args__ must be a "
                                             f"tuple (got {type(positional).__name__})"))
            match_self = not declared and issubclass(kind, _MATCH_SELF)
            allowed = 1 if match_self else len(positional)
            if allowed < ins.arg:
                raise python_error(TypeError(
                    f"{_type_name(kind)}() accepts {allowed} positional sub-pattern"
                    f"{'' if allowed == 1 else 's'} ({ins.arg} given)"))
            if match_self:
                values.append(subject)  # `case int(n)`: the subject itself
            else:
                attributes = [*positional[:ins.arg], *attributes]
        seen = set()
        for name in attributes:  # CPython checks each name as it comes to it
            if type(name) is not str:
                raise python_error(TypeError("__match_args__ elements must be strings (got "
                                             f"{type(name).__name__})"))
            if name in seen:
                raise python_error(TypeError(f"{_type_name(kind)}() got multiple sub-patterns "
                                             f"for attribute {name!r}"))
            seen.add(name)
            if not BuiltinVariable(hasattr).call(self, [subject, ConstantVariable(name)],
                                                 {}).as_constant():
                self.push(ConstantVariable(None))
                return
            values.append(self._attribute(subject, name, False))
        self.push(TupleVariable(values))

    def LOAD_BUILD_CLASS(self, ins) -> None:  # a class statement: the class is made for real
        self.push(OpaqueFunctionVariable(builtins.__build_class__, None, "a class statement"))

    def LOAD_ASSERTION_ERROR(self, ins) -> None:
        self.push(wrap(self, AssertionError, None))

    def RAISE_VARARGS(self, ins) -> None:
        args = self.popn(ins.arg)
        if not args:  # a bare `raise` in a handler
            if not self.handling:
                raise Unsupported("raise (a re-raise while tracing, with no exception)")
            self._raise(self.handling[-1])
        exc, cause = self._exception(args[0]), args[1] if len(args) > 1 else None
        if cause is not None:  # `raise exc from cause`
            reason = None if is_none(cause) else self._exception(cause).as_constant()
            exc.as_constant().__cause__ = reason
            exc.as_constant().__suppress_context__ = True
        self._raise(exc)

    def _exception(self, exc: VariableTracker) -> VariableTracker:
        """The exception object `raise` raises: `exc`, or an instance of the class `exc`."""
        if isinstance(exc, (BuiltinVariable, UserClassVariable)) and isinstance(
                exc.as_constant(), type) and issubclass(exc.as_constant(), BaseException):
            exc = make_exception(exc.as_constant(), [], {})
        if not (exc.is_constant() and isinstance(exc.as_constant(), BaseException)):
            raise Unsupported(f"raise of {exc.words()} (an exception made while tracing, of a "
                              "kind the trace cannot hold as a constant)")
        return exc

    def _raise(self, exc: VariableTracker) -> None:
        reason = getattr(exc, "reason", None) or \
            f"raise {exc.as_constant()!r} (an exception raised while tracing)"
        error = Raised(exc.as_constant(), reason)
        error.explicit = True
        raise error

    def PUSH_EXC_INFO(self, ins) -> None:
        exc = self.pop()
        self.push(self.handling[-1] if self.handling else ConstantVariable(None))
        self.push(exc)
        self.handling.append(exc)

    def POP_EXCEPT(self, ins) -> None:
        self.pop()
        self.handling.pop()
        if not self.handling and self.instructions[self.ip].opname != "RERAISE":
            self.entered_handler_at = None  # the handler is done: no exception in flight

    def WITH_EXCEPT_START(self, ins) -> None:
        """An exception leaves a `with` block: its `__exit__` (4th on the stack) is called with
        it; a true result swallows it."""
        exc = self.stack[-1]
        error = exc.as_constant()
        self.push(self.call(self.stack[-4], [ConstantVariable(type(error)), exc,
                                             ConstantVariable(None)], {}))

    def CHECK_EXC_MATCH(self, ins) -> None:
        kinds = self.pop().as_constant()
        self.push(ConstantVariable(isinstance(self.stack[-1].as_constant(), kinds)))

    def CLEANUP_THROW(self, ins) -> None:
        """3.12: an exception thrown into a generator suspended in `yield from` (the one
        followed: close()'s GeneratorExit, once the delegate is closed) goes on up."""
        self._raise(self.pop())

    def RERAISE(self, ins) -> None:
        exc = self.pop()
        if ins.arg:
            self.pop()  # the lasti the handler was entered with
        self._raise(exc)


# Classes whose instances a single positional class pattern matches as a whole.
_MATCH_SELF = (bool, bytearray, bytes, dict, float, frozenset, int, list, set, str, tuple)
_HEAP_TYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class made by a class statement


def _type_name(kind: type) -> str:
    """CPython's `tp_name` of `kind`, as its TypeErrors name a class: the `__name__` of a class
    made in Python or of a builtin."""
    if kind.__flags__ & _HEAP_TYPE or kind.__module__ == "builtins":
        return kind.__name__
    raise Unsupported(f"a class pattern's TypeError naming {kind.__qualname__}, a class "
                      "written in C")


# CPython 3.12's intrinsic functions the interpreter does not follow, by number
# (Include/internal/pycore_intrinsics.h), and the construct each one makes
_INTRINSICS = {
    (1, 1): ("INTRINSIC_PRINT", "an expression statement of the interactive interpreter"),
    (1, 2): ("INTRINSIC_IMPORT_STAR", "import *"),
    (1, 4): ("INTRINSIC_ASYNC_GEN_WRAP", "an async generator"),
    (1, 7): ("INTRINSIC_TYPEVAR", "a PEP 695 type parameter (`def f[T]`, `class C[T]`)"),
    (1, 8): ("INTRINSIC_PARAMSPEC", "a PEP 695 type parameter (`[**P]`)"),
    (1, 9): ("INTRINSIC_TYPEVARTUPLE", "a PEP 695 type parameter (`[*Ts]`)"),
    (1, 10): ("INTRINSIC_SUBSCRIPT_GENERIC", "a PEP 695 generic class (`class C[T]`)"),
    (1, 11): ("INTRINSIC_TYPEALIAS", "a `type X = ...` statement (PEP 695)"),
    (2, 1): ("INTRINSIC_PREP_RERAISE_STAR", "except* (exception groups)"),
    (2, 2): ("INTRINSIC_TYPEVAR_WITH_BOUND", "a PEP 695 type parameter with a bound (`[T: int]`)"),
    (2, 3): ("INTRINSIC_TYPEVAR_WITH_CONSTRAINTS",
             "a PEP 695 type parameter with constraints (`[T: (int, str)]`)"),
    (2, 4): ("INTRINSIC_SET_FUNCTION_TYPE_PARAMS", "a PEP 695 generic function (`def f[T]`)"),
}


def _intrinsic(kind: int, number: int) -> str:
    """The reason for an intrinsic function (CALL_INTRINSIC_1/2) the trace does not follow."""
    name, construct = _INTRINSICS.get((kind, number), (f"number {number}", "not supported"))
    return f"{construct} (Python 3.12's CALL_INTRINSIC_{kind} {name})"


def _construct(opname: str) -> str:
    """The Python construct behind an instruction the interpreter does not follow."""
    for prefix, words in (
        (("GET_AWAIT", "BEFORE_ASYNC", "GET_AITER", "GET_ANEXT", "END_ASYNC"), "async code"),
        (("SETUP_ANNOTATIONS",), "annotations"),
        (("PUSH_EXC", "POP_EXCEPT", "RERAISE", "CHECK_EXC", "CLEANUP"),
         "exception handling"),
        (("DELETE_", "LOAD_NAME", "STORE_NAME", "LOAD_CLASSDEREF", "LOAD_FROM_DICT"),
         "a name operation"),
        (("IMPORT_STAR",), "import *"),
        (("CHECK_EG_MATCH",), "except* (exception groups)"),
    ):
        if opname.startswith(prefix):
            return words
    return "not supported"
