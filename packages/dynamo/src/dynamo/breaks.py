"""Graph breaks: compile the part of a frame before an unsupported call or a branch on a
tensor, run that one step for real, and continue in a resume function.

When the top frame's trace stops at instruction `k` (a call that cannot be traced, or a jump on
a tensor's value), the trace is run again up to `k` and stopped there; the graph so far gets as
outputs every tensor that the stack and the live locals hold. The transformed frame (generated
Python, like a whole frame's) calls the graph, rebuilds the stack and the locals, makes the call
for real (a user function or module through its own compiled wrapper) or takes the branch, and
returns what a *resume function* returns: a new code object, made from the original with the
`bytecode` package, whose prologue pushes the stack it is given and jumps to the instruction
after `k` (or to the branch's target), and whose parameters are the stack values and the live
locals. Resume functions are compiled like any function on their first call, with their own
cache and guards, and shared by every compilation that breaks at the same place.

Inside a try, except, finally or with block, the step made for real may raise: the transformed
frame then calls a resume function that starts at the block's exception handler, with the
stack the exception table asks for and the exception on top, as CPython itself would jump
there. A `with torch.no_grad()` (or `enable_grad`, `set_grad_enabled`) block open at the break
stays open: its `__exit__` on the stack becomes a small object that restores the grad mode.
Inside a loop, the loop's iterator is handed on like any stack value (a list iterator over the
items left, when the trace made it); the resume function takes the next item for real at a
break on FOR_ITER, and ints handed to resume functions (loop counters) are symbols, not
constants, so one compilation serves every iteration. The runners return the resume call as a
`Continue` rather than making it, and the outermost compiled call runs them one after another,
so a long loop does not nest Python calls.
"""

from __future__ import annotations

import dis
import functools
import operator
import os
import sys
import types
import warnings
import weakref
from collections.abc import Callable
from typing import Any

import bytecode as bc
from torch.nn.modules import module as _modules
from torch.utils.weak import WeakIdKeyDictionary

from dynamo.bytecode import PY312, Instruction, drop_when_freed, handlers, instructions
from dynamo.exc import Unsupported
from dynamo.operators import BINARY, COMPARE


def _special_method(obj: Any, name: str) -> Any:
    """`obj.name` looked up on the type only, as the interpreter looks up special methods."""
    for klass in type(obj).__mro__:
        if name in vars(klass):
            found = vars(klass)[name]
            get = getattr(type(found), "__get__", None)
            return found if get is None else get(found, obj, type(obj))
    raise TypeError(f"{type(obj).__qualname__!r} object does not support the context manager "
                    "protocol")


_DYNAMO_DIR = os.path.dirname(__file__)
_MODULE_FILE = _modules.__file__
# The code of each transformed frame that makes a call for real at a break, and where the
# user's function makes that call: (file, line, module globals). Keyed by identity: code objects
# compare by value, not by file, so the equal runners of two equal functions in two modules
# (the same line, the same break) were one key, and a warning at one's break named the other's
# file and module.
BREAK_SITES: WeakIdKeyDictionary = WeakIdKeyDictionary()


def warn_at(filename: str, lineno: int, module_globals: dict, message: Any,
            category: type[Warning] | None = None, stacklevel: int = 1, source: Any = None,
            **options: Any) -> None:
    """`warnings.warn` made for real at a graph break, attributed as Python would: to the
    user's line (`filename`:`lineno`, in the module of `module_globals`, whose registry says
    whether it warned there before) or, for `stacklevel=2` and up, to the user's frames above
    it: a transformed frame making a call at a break stands for the user's line of that call,
    dynamo's own frames are skipped."""
    if isinstance(message, Warning):
        category = type(message)
    site = (filename, lineno, module_globals)
    frame = sys._getframe(2)  # above the transformed frame that called this one
    for _ in range(stacklevel - 1):
        site, frame = _user_site(frame, lambda name: name.startswith(_DYNAMO_DIR))
    _warn_explicit_at(site, message, category or UserWarning, source)


def _user_site(frame: Any, skipped: Callable[[str], bool]) -> tuple[tuple[str, int, dict], Any]:
    """The first user's line from `frame` outwards, and the frame above it: a transformed
    frame making a call at a break stands for the user's line of that call; frames of files
    `skipped` says so of are passed over. Past the outermost frame, Python says `sys`."""
    while frame is not None:
        code, above = frame.f_code, frame.f_back
        if code in BREAK_SITES:
            return BREAK_SITES[code], above
        if code.co_filename != "<dynamo transformed frame>" and not skipped(code.co_filename):
            return (code.co_filename, frame.f_lineno, frame.f_globals), above
        frame = above
    return ("sys", 1, sys.__dict__), None


def _warn_explicit_at(site: tuple[str, int, dict], message: Any, category: type[Warning],
                      source: Any = None) -> None:
    filename, lineno, module_globals = site
    loader = module_globals.get("__loader__") or getattr(module_globals.get("__spec__"),
                                                         "loader", None)
    warn = functools.partial(
        warnings.warn_explicit, message, category, filename, lineno,
        module=module_globals.get("__name__", "<unknown>"),
        registry=module_globals.setdefault("__warningregistry__", {}), source=source)
    if loader is None or getattr(module_globals.get("__spec__"), "loader", None) is None:
        # a module with no loader (`types.ModuleType`, `exec` in a dict of its own): Python
        # 3.12 refuses its globals, which would find no source line anyway; one with a
        # `__loader__` but no spec (`__main__` of a script) draws 3.12's DeprecationWarning
        # "Module globals is missing a __spec__.loader" (Python's own warnings.warn passes no
        # globals: the line is read from the file)
        warn()
        return
    try:
        warn(module_globals=module_globals)
    except ImportError:
        # a loader that has no source for the module (`__main__` of `python -c`, of stdin or
        # of the REPL: BuiltinImporter), which warn_explicit raises before it warns
        warn()


def _skipped_for_warnings(filename: str) -> bool:
    """dynamo's own files, and torch's `nn.Module.__call__` (a compiled module with hooks is
    called through it): not the place a user looks for the call that compiled."""
    return filename.startswith(_DYNAMO_DIR) or filename == _MODULE_FILE


def warn_user(message: str, category: type[Warning] = UserWarning) -> None:
    """A warning of dynamo's own (a frame that runs eagerly, a backend that failed),
    attributed to the user's line that made the call being compiled: the first frame outside
    dynamo, or for a transformed frame making a call at a break, the user's line of that
    call. (A fixed `stacklevel` names a dynamo file whenever the call came through more of
    dynamo's frames than counted: a module's forward, a resume function, a break's callee.)"""
    _warn_explicit_at(_user_site(sys._getframe(1), _skipped_for_warnings)[0], message, category)


def enter_with(manager: Any) -> tuple[Any, Any]:
    """BEFORE_WITH made for real: (the bound `__exit__`, what `__enter__` returned)."""
    enter = _special_method(manager, "__enter__")
    return _special_method(manager, "__exit__"), enter()


# Operators the trace cannot apply (to an object it cannot see into) are applied for real at a
# break: how many stack values each takes, how many it pushes (two: a tuple of them), and the
# function. A `with` whose context manager the trace cannot enter is entered this way.
OPERATORS: dict[str, tuple[int, int, Any]] = {
    "BINARY_SUBSCR": (2, 1, operator.getitem),
    "BINARY_SLICE": (3, 1, lambda obj, start, stop: obj[start:stop]),
    "STORE_SUBSCR": (3, 0, lambda value, obj, key: operator.setitem(obj, key, value)),
    "STORE_SLICE": (4, 0, lambda value, obj, start, stop: operator.setitem(
        obj, slice(start, stop), value)),
    "DELETE_SUBSCR": (2, 0, operator.delitem),
    "CONTAINS_OP": (2, 1, lambda item, container: item in container),
    "GET_ITER": (1, 1, iter),
    "UNARY_NEGATIVE": (1, 1, operator.neg),
    "UNARY_POSITIVE": (1, 1, operator.pos),  # 3.11; 3.12's is CALL_INTRINSIC_1 5 (below)
    "UNARY_INVERT": (1, 1, operator.invert),
    "UNARY_NOT": (1, 1, operator.not_),
    "BEFORE_WITH": (1, 2, enter_with),
}
# (3.11's JUMP_IF_FALSE_OR_POP / JUMP_IF_TRUE_OR_POP: `a and b`, `a or b` as values)
BRANCHES = frozenset({"POP_JUMP_IF_FALSE", "POP_JUMP_IF_TRUE", "JUMP_IF_FALSE_OR_POP",
                      "JUMP_IF_TRUE_OR_POP"})
BREAKABLE = frozenset({"CALL", "CALL_FUNCTION_EX", *BRANCHES,
                       "RAISE_VARARGS", "FOR_ITER", "BINARY_OP", "COMPARE_OP", "IS_OP",
                       "LOAD_ATTR", "LOAD_METHOD", "LOAD_SUPER_ATTR", "STORE_ATTR", "DELETE_ATTR",
                       "FORMAT_VALUE", "UNPACK_SEQUENCE", "UNPACK_EX", "BUILD_MAP", "BUILD_SET",
                       "MAP_ADD", "SET_ADD", "DICT_UPDATE", "DICT_MERGE", "SET_UPDATE",
                       "LIST_EXTEND", "CALL_INTRINSIC_1", *OPERATORS})
_BREAK_PLACES = ("only at a call, an operator, a subscript, an attribute, a display or "
                 "comprehension (a list's, dict's or set's, unpacking too), a branch or a "
                 "loop's next item")
_INTRINSIC_UNARY_POSITIVE = 5  # 3.12's `+value` (CALL_INTRINSIC_1's argument)
_INTRINSIC_TYPEALIAS = 11  # 3.12's `type X = value`
_INTRINSICS_APPLIED = frozenset({_INTRINSIC_UNARY_POSITIVE, _INTRINSIC_TYPEALIAS})
_CO_VARARGS, _CO_VARKEYWORDS = 0x04, 0x08


def refusal(code: types.CodeType, index: int) -> str | None:
    """Why the frame cannot break at instruction `index`, or None when it can."""
    ins = instructions(code)[index]
    if ins.opname not in BREAKABLE:
        return f"the graph cannot break there (at {ins.opname}: {_BREAK_PLACES})"
    if ins.opname == "CALL_INTRINSIC_1" and ins.arg not in _INTRINSICS_APPLIED:
        return f"the graph cannot break there (at CALL_INTRINSIC_1: {_BREAK_PLACES})"
    if ins.opname == "RAISE_VARARGS" and ins.arg == 0:
        return "no graph break at a bare raise"
    if code.co_flags & 0x20:
        return "no graph break in a generator"
    handler = exception_handler(code, index)
    if handler is not None and not _resumable_handler(code, handler[0]):
        return "no graph break inside an exception handler's cleanup"
    return None


def _resumable_handler(code: types.CodeType, target: int) -> bool:
    """Whether a resume function can start at handler `target`: an except/finally/with
    handler (it begins with PUSH_EXC_INFO), or a cleanup that only restores stack values and
    locals before re-raising (3.12's inlined comprehensions put their loop variable back)."""
    ours = instructions(code)
    if ours[target].opname == "PUSH_EXC_INFO":
        return True
    for ins in ours[target:]:
        if ins.opname == "RERAISE":
            return True
        if ins.opname not in ("SWAP", "COPY", "POP_TOP", "STORE_FAST", "LOAD_CONST"):
            return False
    return False


def exception_handler(code: types.CodeType, index: int) -> tuple[int, int, bool] | None:
    """(handler's instruction index, stack depth, push lasti) of the exception-table entry
    covering instruction `index` (a try, except, finally or with block), or None."""
    offset = instructions(code)[index].offset
    for handler in handlers(code):
        if handler.start <= offset < handler.end:
            return handler.target, handler.depth, handler.lasti
    return None


def live_locals(code: types.CodeType, index: int) -> frozenset[str]:
    """The locals that code from instruction `index` on may read before writing them: only
    those are passed on to a resume function, and guarded there. (A handler's reads count
    wherever an exception may reach it; a cell variable is live once read anywhere ahead.)"""
    reads = instructions(code)
    ahead = _reachable(code, index, through_handlers=True)
    names = {reads[i].argval for i in ahead
             if reads[i].opname.startswith(("LOAD_DEREF", "LOAD_CLOSURE", "DELETE_DEREF"))}
    candidates = {reads[i].argval for i in ahead
                  if reads[i].opname.startswith(("LOAD_FAST", "DELETE_FAST"))}
    names |= {name for name in candidates if _read_before_written(reads, code, index, name)}
    if "__class__" in code.co_freevars and code.co_argcount:
        names.add(code.co_varnames[0])  # a zero-argument super() reads the first argument
    if _FRAME_READERS & set(code.co_names):
        # `locals()`, `vars()`, `dir()`, `eval(...)` read every variable of the frame by name,
        # not by LOAD_FAST: all of them are passed on (the ones bound at the break)
        names |= set(code.co_varnames) | set(code.co_cellvars)
    return frozenset(names)


_FRAME_READERS = frozenset({"locals", "vars", "dir", "eval", "exec"})


def operator_of(ins: Instruction) -> tuple[int, int, Any]:
    """(inputs, results pushed, function) of an operator instruction, made for real."""
    if ins.opname in OPERATORS:
        count, pushes, function = OPERATORS[ins.opname]
        if ins.opname == "CONTAINS_OP" and ins.arg:
            return count, pushes, lambda item, container: item not in container
        return count, pushes, function
    if ins.opname == "CALL_INTRINSIC_1" and ins.arg == _INTRINSIC_UNARY_POSITIVE:
        return 1, 1, operator.pos
    if ins.opname == "CALL_INTRINSIC_1" and ins.arg == _INTRINSIC_TYPEALIAS:
        return 1, 1, _instruction(ins.opname, bc.instr.Intrinsic1Op(ins.arg), 1)
    if ins.opname == "BINARY_OP":
        return 2, 1, BINARY[dis._nb_ops[ins.arg][1]]
    if ins.opname == "COMPARE_OP":
        return 2, 1, COMPARE[ins.argval]
    if ins.opname == "IS_OP":
        return 2, 1, operator.is_not if ins.arg else operator.is_
    if ins.opname in ("LOAD_ATTR", "LOAD_METHOD"):  # a method's load: see convert_frame
        return 1, 1, operator.attrgetter(ins.argval)
    if ins.opname == "LOAD_SUPER_ATTR":  # 3.12's `super().name`: the global `super`, the
        # class and the first argument on the stack, as CPython calls them (a `super` the
        # module shadows is called with no arguments for the zero-argument form)
        name, two_args = ins.argval, bool(ins.arg & 2)

        def super_attr(global_super: Any, cls: Any, obj: Any) -> Any:
            bound = global_super(cls, obj) if global_super is super or two_args \
                else global_super()
            return getattr(bound, name)
        return 3, 1, super_attr
    if ins.opname == "STORE_ATTR":
        name = ins.argval
        return 2, 0, lambda value, obj: setattr(obj, name, value)
    if ins.opname == "DELETE_ATTR":
        name = ins.argval
        return 1, 0, lambda obj: delattr(obj, name)
    if ins.opname == "BUILD_MAP":  # `{k0: v0, k1: v1}`: keys and values alternate on the stack
        return 2 * ins.arg, 1, lambda *flat: dict(zip(flat[::2], flat[1::2]))
    if ins.opname == "BUILD_SET":
        return ins.arg, 1, lambda *items: set(items)
    if ins.opname in ("MAP_ADD", "SET_ADD"):  # a comprehension's item, stored into the dict
        # or set it builds, which lies `ins.arg` values deep: the values above it are put back
        width = 2 if ins.opname == "MAP_ADD" else 1
        add = operator.setitem if width == 2 else set.add

        def store(container: Any, *rest: Any) -> Any:
            add(container, *rest[len(rest) - width:])
            kept = (container, *rest[:len(rest) - width])
            return kept if len(kept) > 1 else container
        return ins.arg + width, ins.arg, store
    if ins.opname in ("DICT_UPDATE", "SET_UPDATE", "LIST_EXTEND"):  # `{**a}`, `{*a}`, `[*a]`:
        # the container lies `ins.arg` values deep, below the one it takes in
        return ins.arg + 1, ins.arg, _instruction(ins.opname, ins.arg, ins.arg + 1)
    if ins.opname == "DICT_MERGE":  # a call's `**a`: its error names the callable, two values
        # below the keywords' dict
        return ins.arg + 3, ins.arg + 2, _instruction(ins.opname, ins.arg, ins.arg + 3)
    if ins.opname == "UNPACK_SEQUENCE":
        return 1, ins.arg, _unpacker(ins.arg, None)
    if ins.opname == "UNPACK_EX":
        before, after = ins.arg & 0xFF, ins.arg >> 8
        return 1, before + 1 + after, _unpacker(before, after)
    if ins.opname == "FORMAT_VALUE":  # an f-string's field: converted, then formatted
        convert = (None, str, repr, ascii)[ins.arg & 3]
        if ins.arg & 4:
            return 2, 1, lambda value, spec: format(convert(value) if convert else value, spec)
        return 1, 1, lambda value: format(convert(value) if convert else value)
    raise KeyError(ins.opname)


@functools.cache
def _unpacker(before: int, after: int | None) -> Callable[[Any], tuple]:
    """`a, b = value` (`after` None) or `a, *rest, b = value` made for real, by Python's own
    unpacking (its errors, its way of taking items): the values in the order the stack gets
    them, the last target's first."""
    targets = [f"v{i}" for i in range(before)]
    if after is not None:
        targets += [f"*v{before}", *(f"v{before + 1 + i}" for i in range(after))]
    values = [t.lstrip("*") for t in reversed(targets)]
    namespace: dict[str, Any] = {}
    exec(f"def unpack(value):\n    {', '.join(targets)}, = value\n"
         f"    return ({''.join(v + ', ' for v in values)})\n", namespace)
    return namespace["unpack"]


@functools.cache
def _instruction(opname: str, arg: Any, count: int) -> Callable[..., Any]:
    """A function that lays its `count` arguments on the stack and runs instruction `opname`
    `arg` itself on them, returning the values left on the stack, the lowest first: Python's
    own merge (its errors, a `**` of a keyword given twice, of a non-mapping), or 3.12's
    `type X = ...` (a `TypeAliasType` whose value stays lazy, as in the frame)."""
    names = [f"v{i}" for i in range(count)]
    left = [bc.Instr("BUILD_TUPLE", count - 1)] if count > 2 else []
    program = bc.Bytecode([bc.Instr("RESUME", 0), *(bc.Instr("LOAD_FAST", n) for n in names),
                           bc.Instr(opname, arg), *left, bc.Instr("RETURN_VALUE")])
    program.argnames = names
    program.argcount = count
    program.name = opname.lower()
    return types.FunctionType(program.to_code(), {})


def shared_cells(code: types.CodeType) -> tuple[str, ...]:
    """The cell variables of `code` whose cells a resume function shares: they become free
    variables of its code, and the break hands the frame's cell objects on in its closure, so
    that a nested function made before the break and the code after it see each other's
    writes. Not shared (handed on by value, as locals): a name whose cell a 3.12 inlined
    comprehension sets aside or makes anew in the middle of the code, and the first argument
    of a method calling zero-argument super() (which reads the frame's first parameter slot)."""
    remade = {ins.argval for ins in instructions(code)[_code_start(code):]
              if ins.opname in ("MAKE_CELL", "LOAD_FAST_AND_CLEAR")}
    if "__class__" in code.co_freevars and code.co_argcount:
        remade.add(code.co_varnames[0])
    return tuple(n for n in code.co_cellvars if n not in remade)


def closure_names(fn: types.FunctionType) -> tuple[str, ...]:
    """The free variables of the code of `fn`'s resume functions, in order: the cells a break
    in `fn` hands on (its own free variables, then the cells it shares)."""
    origin = getattr(fn, "_dynamo_resume_of", None)
    code = (fn if origin is None else origin[0]).__code__
    return (*code.co_freevars, *shared_cells(code))


def bound_cells(names: tuple[str, ...], cells: tuple[types.CellType, ...]) -> dict[str, Any]:
    """The variables `names` that `cells` hold, those not empty: as `locals()` shows them."""
    found = {}
    for name, cell in zip(names, cells, strict=True):
        try:
            found[name] = cell.cell_contents
        except ValueError:  # empty: unbound
            pass
    return found


def _code_start(code: types.CodeType) -> int:
    """The index of the RESUME that ends the prologue (MAKE_CELL, COPY_FREE_VARS)."""
    return next(i for i, ins in enumerate(instructions(code)) if ins.opname == "RESUME")


def cells_written(code: types.CodeType, index: int, names: frozenset[str]) -> bool:
    """Whether a cell variable `names` may be written after instruction `index`, by the code
    itself or by a nested function (`nonlocal`)."""
    reads = instructions(code)
    if any(reads[i].opname in ("STORE_DEREF", "DELETE_DEREF") and reads[i].argval in names
           for i in _reachable(code, index, through_handlers=True)):
        return True
    nested = [c for c in code.co_consts if isinstance(c, types.CodeType)]
    while nested:
        inner = nested.pop()
        nested += [c for c in inner.co_consts if isinstance(c, types.CodeType)]
        if any(ins.opname in ("STORE_DEREF", "DELETE_DEREF") and ins.argval in names
               and ins.argval in inner.co_freevars for ins in instructions(inner)):
            return True
    return False


def fast_forward(code: types.CodeType, index: int) -> tuple[list[Instruction], int] | None:
    """When instructions from `index` only drop or store a value and then jump back to a
    loop's FOR_ITER: those instructions, and the FOR_ITER's index."""
    reads = instructions(code)
    stores: list[Instruction] = []
    for ins in reads[index:]:
        if ins.opname in ("POP_TOP", "STORE_FAST", "NOP"):
            stores.append(ins)
        elif ins.opname == "JUMP_BACKWARD" and reads[ins.target].opname == "FOR_ITER":
            return stores, ins.target
        else:
            return None
    return None


def _read_before_written(reads: list[Instruction], code: types.CodeType, index: int,
                         name: str) -> bool:
    """Whether some path from `index` reads local `name` before a STORE_FAST of it."""
    def written(ins: Instruction) -> bool:
        return ins.opname == "STORE_FAST" and ins.argval == name

    return any(reads[i].argval == name and reads[i].opname.startswith(("LOAD_FAST", "DELETE_FAST"))
               for i in _reachable(code, index, through_handlers=True, stop=written))


def _reachable(code: types.CodeType, index: int, through_handlers: bool,
               stop: Callable[[Instruction], bool] | None = None) -> set[int]:
    """The instructions control can reach from `index` (with exception handlers or not),
    not going past an instruction for which `stop` is true."""
    reads = instructions(code)
    seen: set[int] = set()
    todo = [index]
    while todo:
        i = todo.pop()
        if i in seen or i >= len(reads):
            continue
        seen.add(i)
        ins = reads[i]
        if stop is not None and stop(ins):
            continue
        if ins.target is not None:
            todo.append(ins.target)
        if through_handlers:
            todo += [h.target for h in handlers(code) if h.start <= ins.offset < h.end]
        if ins.opname not in _NO_FALL_THROUGH:
            todo.append(i + 1)
    return seen


_NO_FALL_THROUGH = frozenset({"RETURN_VALUE", "RETURN_CONST", "JUMP_FORWARD", "JUMP_BACKWARD",
                              "JUMP_ABSOLUTE", "RAISE_VARARGS", "RERAISE"})
_resume_functions: dict[tuple, types.FunctionType] = {}


class _Origin:
    """The function a resume function continues, as its code, globals and names: the code
    held weakly, so that the table of resume functions keeps neither it nor (through the
    cache keyed by it) its entries once the function's code is gone (a function made anew
    from new source: a notebook's cell run again, code `exec`'d in a loop)."""

    __slots__ = ("_code", "__globals__", "__name__", "__qualname__", "__weakref__")

    def __init__(self, fn: types.FunctionType) -> None:
        self._code = weakref.ref(fn.__code__)
        self.__globals__ = fn.__globals__
        self.__name__ = fn.__name__
        self.__qualname__ = fn.__qualname__

    @property
    def __code__(self) -> types.CodeType:
        code = self._code()
        if code is None:  # (nothing can reach a resume function of it any more)
            raise RuntimeError(f"the code of {self.__qualname__} is gone")
        return code


def resume_function(fn: types.FunctionType, index: int, nulls: tuple[bool, ...],
                    local_names: tuple[str, ...]) -> types.FunctionType:
    """A function continuing `fn`'s code at instruction `index`, taking the non-NULL stack
    values (`___stack0`, ...) and then the locals `local_names` as its parameters."""
    origin = getattr(fn, "_dynamo_resume_of", None)
    if origin is not None:  # continue the original code, so that a loop's breaks meet again
        original, skipped = origin
        position = _position(fn.__code__, index) - skipped
        index = _index_at(original.__code__, position)
        fn = original
    # Code objects compare by value (not by file or globals): two functions of equal code in
    # two modules (one imported twice, a template run twice) must not share a resume function,
    # which holds its function's globals. (The key holds the code weakly, and its entries go
    # when the code does; the resume function holds `fn`'s globals, so neither id is reused
    # while an entry lives.)
    key = (weakref.ref(fn.__code__), id(fn.__code__), id(fn.__globals__), index, nulls,
           local_names)
    found = _resume_functions.get(key)
    if found is None:  # (its closure is a placeholder: each call passes the caller's cells)
        try:
            code = _resume_code(fn.__code__, index, nulls, local_names)
        except RuntimeError as error:  # the assembler rejects what we made of this point
            raise Unsupported(f"continuing after this point ({error})") from None
        # Empty cells, and `fn` itself without its cells: the table lives on after `fn`, and
        # must not keep what `fn`'s closure holds (a model, its tensors) alive.
        cells = tuple(types.CellType() for _ in code.co_freevars) or None
        found = types.FunctionType(code, fn.__globals__, code.co_name, None, cells)
        original = fn if type(fn) is _Origin else _Origin(fn)
        # the prologue: the stack, its parameters deleted, and a jump
        found._dynamo_resume_of = (original, len(nulls) + nulls.count(False) + 1)
        drop_when_freed(fn.__code__, 1, _resume_functions)
        _resume_functions[key] = found
    return found


def _position(code: types.CodeType, index: int) -> int:
    """Instruction `index` of `code` counted without EXTENDED_ARG prefixes."""
    return sum(1 for ins in instructions(code)[:index] if ins.opname != "EXTENDED_ARG")


def _index_at(code: types.CodeType, position: int) -> int:
    """The index of the instruction at `position` (counted without EXTENDED_ARG prefixes) of
    `code`: `_position`'s inverse, in one pass (asking `_position` of each index was quadratic
    in the code's length, paid at every graph break of a resume function)."""
    count = 0
    for i, ins in enumerate(instructions(code)):
        if ins.opname == "EXTENDED_ARG":
            continue
        if count == position:
            return i
        count += 1
    raise RuntimeError(f"{code.co_name} has no instruction at position {position}")


def _resume_code(code: types.CodeType, index: int, nulls: tuple[bool, ...],
                 local_names: tuple[str, ...]) -> types.CodeType:
    program = bc.Bytecode.from_code(code)
    reads: list[Instruction] = instructions(code)
    target = sum(1 for ins in reads[:index] if ins.opname != "EXTENDED_ARG")
    positions = [i for i, item in enumerate(program) if isinstance(item, bc.Instr)]
    label = bc.Label()
    program.insert(positions[target], label)
    stack_names = [f"___stack{i}" for i in range(nulls.count(False))]
    prologue: list[Any] = []
    names = iter(stack_names)
    # The prologue stands at the line it resumes (else it takes the `def` line, which the
    # trace of the resume function then names for a failure there: an unsupported value on
    # the stack, the result of the step made for real)
    at = reads[index].lineno or code.co_firstlineno
    for null in nulls:
        prologue.append(bc.Instr("PUSH_NULL", lineno=at) if null else
                        bc.Instr("LOAD_FAST", next(names), lineno=at))
    # The stack parameters are unbound once pushed: `locals()` in the rest of the code sees the
    # user's variables only
    prologue += [bc.Instr("DELETE_FAST", name, lineno=at) for name in stack_names]
    prologue.append(bc.Instr("JUMP_FORWARD", label, lineno=at))
    start = next(i for i, item in enumerate(program)
                 if isinstance(item, bc.Instr) and item.name == "RESUME") + 1
    program[start:start] = prologue
    _share_cells(program, shared_cells(code))
    # Resume functions are called with keywords. The original first parameter stays first:
    # a zero-argument super() reads the frame's first argument.
    first = code.co_varnames[:1] if code.co_argcount else ()
    lead = [n for n in local_names if n in first]
    program.argnames = [*lead, *stack_names, *(n for n in local_names if n not in lead)]
    program.argcount = len(program.argnames)
    program.posonlyargcount = 0
    program.kwonlyargcount = 0
    program.flags = bc.CompilerFlags(program.flags & ~(_CO_VARARGS | _CO_VARKEYWORDS))
    line = reads[index].lineno
    program.name = f"__resume_{code.co_name}_at_line_{line}"
    if PY312 or hasattr(program, "qualname"):
        program.qualname = f"{code.co_qualname}.<resume at line {line}>"
    # The stack size and every handler's depth are the original code's: the prologue rebuilds
    # the stack as it was at this point. (The assembler's stack-size pass follows the code from
    # its start, so it cannot enter the blocks the prologue jumps into.)
    blocks = [item for item in program if isinstance(item, bc.TryBegin)]
    for block, entry in zip(blocks, handlers(code), strict=True):
        block.stack_depth = entry.depth
    _empty_cells_unbound_locally(program, shared_cells(code))
    # (+3: the callable, its NULL and the message, pushed by the code raising there)
    return program.to_code(stacksize=code.co_stacksize + 3, compute_exception_stack_depths=False)


def _share_cells(program: bc.Bytecode, names: tuple[str, ...]) -> None:
    """Make cell variables `names` free variables of `program`, after its own: the frame's
    cells come in the closure (`shared_cells`)."""
    if not names:
        return
    program.cellvars = [n for n in program.cellvars if n not in names]
    program.freevars = [*program.freevars, *names]
    start = next(i for i, item in enumerate(program)
                 if isinstance(item, bc.Instr) and item.name == "RESUME")
    kept = [item for item in program[:start]
            if item.name == "MAKE_CELL" and item.arg.name not in names]
    # NOPs keep the head's length: instructions keep their positions (`_position`)
    program[:start] = [bc.Instr("COPY_FREE_VARS", len(program.freevars)), *kept,
                       *(bc.Instr("NOP") for _ in range(start - 1 - len(kept)))]
    for item in program:
        if isinstance(item, bc.Instr) and isinstance(item.arg, bc.CellVar) \
                and item.arg.name in names:
            item.arg = bc.FreeVar(item.arg.name)


def _empty_cells_unbound_locally(program: bc.Bytecode, names: tuple[str, ...]) -> None:
    """Reading or deleting an empty cell that the frame owns raises UnboundLocalError
    ("cannot access local variable"), an empty free variable NameError ("... free variable").
    The cells `names` that `program` now takes in its closure (`_share_cells`) were the
    frame's own: each LOAD_DEREF or DELETE_DEREF of one gets an exception handler of its
    own, at the end of the code, raising the frame's error in its place (the handler that
    covered the instruction still covers that raise). Positions are kept: only the markers of
    the exception table go in between."""
    edited: list[Any] = []
    raising: list[Any] = []
    renamed: dict[Any, Any] = {}  # a try block split around an instruction: its second part
    covering = None  # the try block open at this point
    for item in program:
        if isinstance(item, bc.TryBegin):
            covering = item
        elif isinstance(item, bc.TryEnd):
            item = bc.TryEnd(renamed.get(item.entry, item.entry))
            covering = None
        if not (isinstance(item, bc.Instr) and item.name in ("LOAD_DEREF", "DELETE_DEREF")
                and isinstance(item.arg, bc.FreeVar) and item.arg.name in names):
            edited.append(item)
            continue
        handler = bc.Label()
        own = bc.TryBegin(handler, False, covering.stack_depth if covering else 0)
        edited += [*([bc.TryEnd(renamed.get(covering, covering))] if covering else []),
                   own, item, bc.TryEnd(own)]
        if covering is not None:
            renamed[covering] = _copy_block(covering)
            edited.append(renamed[covering])
        raising += _raise_unbound_local(handler, item, covering)
    program[:] = edited + raising


def _copy_block(block: bc.TryBegin) -> bc.TryBegin:
    return bc.TryBegin(block.target, block.push_lasti, block.stack_depth)


def _raise_unbound_local(handler: bc.Label, at: bc.Instr, covering: Any) -> list[Any]:
    """At `handler`, with the free variable's NameError on the stack: raise the frame's
    UnboundLocalError at the line of `at`, inside a copy of try block `covering` if any."""
    message = (f"cannot access local variable {at.arg.name!r} where it is not associated "
               "with a value")
    call = [bc.Instr("CALL", 1)] if PY312 else [bc.Instr("PRECALL", 1), bc.Instr("CALL", 1)]
    body = [bc.Instr("POP_TOP"), bc.Instr("PUSH_NULL"), bc.Instr("LOAD_CONST", UnboundLocalError),
            bc.Instr("LOAD_CONST", message), *call, bc.Instr("RAISE_VARARGS", 1)]
    for ins in body:
        ins.location = at.location
    if covering is None:
        return [handler, *body]
    block = _copy_block(covering)
    return [handler, block, *body, bc.TryEnd(block)]


RUN_EAGERLY = object()  # what a runner returns when its graph raised: run the frame as it is


class Continue:
    """What a runner returns to have resume function `fn` run next on the frame `f_locals` (its
    parameters by name), by the outermost compiled call."""

    __slots__ = ("fn", "f_locals")

    def __init__(self, fn: Any, f_locals: dict[str, Any]) -> None:
        self.fn = fn
        self.f_locals = f_locals
