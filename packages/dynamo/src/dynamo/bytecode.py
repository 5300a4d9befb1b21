"""Code objects: reading them for the interpreter, and editing and assembling new ones.

Reading: `dis` already decodes a code object (EXTENDED_ARG folded in, jump targets as offsets,
names and constants resolved). What differs between CPython 3.11 and 3.12 is smoothed here:
directional jumps of 3.11 (`POP_JUMP_FORWARD_IF_FALSE`) lose their direction, and each
instruction gets its jump target's index, so the interpreter steps through a list.

Writing: `editable(code)` gives the instructions in the symbolic form of the `bytecode` package
(labels for jump targets, try-begin/try-end markers for the exception table), and
`assemble(...)` turns them back into a code object, computing jump offsets, EXTENDED_ARG
prefixes, the exception table, the line table and the stack depth. We use that package rather
than an assembler of our own (docs/dynamo.md says why). A frame captured whole needs no new
code object (it is replaced by generated Python source, see `codegen`); resume functions after
a graph break are built this way.
"""

from __future__ import annotations

import dis
import functools
import sys
import weakref
from dataclasses import dataclass
from types import CodeType
from typing import Any

import bytecode as _bytecode

PY312 = sys.version_info >= (3, 12)


@dataclass
class Instruction:
    opname: str
    arg: int | None
    argval: Any
    offset: int
    lineno: int | None
    target: int | None = None  # index of the jump target


_DIRECTIONAL = {
    f"POP_JUMP_{d}_IF_{c}": f"POP_JUMP_IF_{c}"
    for d in ("FORWARD", "BACKWARD") for c in ("FALSE", "TRUE", "NONE", "NOT_NONE")
}
_DIRECTIONAL["JUMP_BACKWARD_NO_INTERRUPT"] = "JUMP_BACKWARD"


def _per_code(fn):
    """`fn(code)`, cached for as long as `code` lives (an `lru_cache` would hold the code, and
    with it the caches and resume functions that dynamo keys by it weakly: a function `exec`'d
    anew, a notebook's cell run again, left its compiled entries behind)."""
    cache: dict[int, tuple[weakref.ref, Any]] = {}

    @functools.wraps(fn)
    def cached(code: CodeType) -> Any:
        found = cache.get(id(code))
        if found is not None and found[0]() is code:
            return found[1]
        value = fn(code)
        key = id(code)
        cache[key] = (weakref.ref(code, lambda ref: cache.get(key, (None,))[0] is ref
                                  and cache.pop(key)), value)
        return value
    cached.cache_clear = cache.clear
    return cached


def drop_when_freed(obj: Any, position: int, *tables: dict) -> None:
    """Once `obj` is freed, drop the entries of `tables` whose keys hold `id(obj)` at
    `position`: compiled entries and resume functions go with their code object (a function
    made anew from new source, a notebook's cell run again), a module's own entries with the
    module. The finalizer holds the id and the tables only, not the keys (they hold backends,
    and what those hold). TypeError for an object without weak references."""
    watch = (id(obj), position, *map(id, tables))
    if watch not in _WATCHED:
        weakref.finalize(obj, _drop, watch, tables)
        _WATCHED.add(watch)


_WATCHED: set[tuple[int, ...]] = set()  # (object, position, tables) with a finalizer, by id


def _drop(watch: tuple[int, ...], tables: tuple[dict, ...]) -> None:
    _WATCHED.discard(watch)
    object_id, position = watch[:2]
    for table in tables:
        # over a copy of the keys (made at once): another thread may add to the table meanwhile
        # ("dictionary changed size during iteration" left the freed code's entries for good),
        # or drop a key first (`_drop_dead_caches`)
        for key in [k for k in list(table) if k[position] == object_id]:
            table.pop(key, None)


@_per_code
def instructions(code: CodeType) -> list[Instruction]:
    """The instructions of `code`, with jump targets as list indices (cached: treat as
    read-only)."""
    result: list[Instruction] = []
    lineno = code.co_firstlineno
    for ins in dis.get_instructions(code):
        if ins.opname == "CACHE":
            continue
        line = getattr(ins, "line_number", None) or ins.starts_line
        if isinstance(line, int) and not isinstance(line, bool):
            lineno = line
        result.append(Instruction(_DIRECTIONAL.get(ins.opname, ins.opname), ins.arg,
                                  ins.argval, ins.offset, lineno))
    index = {ins.offset: i for i, ins in enumerate(result)}
    for ins in result:
        if ins.opname in _JUMPS:
            ins.target = index[ins.argval]
    return result


_JUMPS = frozenset({
    "JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_ABSOLUTE", "POP_JUMP_IF_FALSE", "POP_JUMP_IF_TRUE",
    "POP_JUMP_IF_NONE", "POP_JUMP_IF_NOT_NONE", "JUMP_IF_FALSE_OR_POP", "JUMP_IF_TRUE_OR_POP",
    "FOR_ITER", "SEND",
})


@dataclass(frozen=True)
class Handler:
    """An exception-table entry: instructions at byte offsets [start, end) raise into the
    instruction at index `target`, with the stack cut to `depth` (and lasti pushed)."""

    start: int
    end: int
    target: int
    depth: int
    lasti: bool


@_per_code
def handlers(code: CodeType) -> tuple[Handler, ...]:
    """The exception table of `code` (cached: treat as read-only)."""
    where = {ins.offset: i for i, ins in enumerate(instructions(code))}
    return tuple(Handler(e.start, e.end, where[e.target], e.depth, e.lasti)
                 for e in dis.Bytecode(code).exception_entries)


def clear_caches() -> None:
    """Forget the instruction lists and exception tables read so far."""
    instructions.cache_clear()
    handlers.cache_clear()


def editable(code: CodeType) -> _bytecode.Bytecode:
    """The instructions of `code` as an editable list of symbolic instructions."""
    return _bytecode.Bytecode.from_code(code)


def assemble(instructions: _bytecode.Bytecode) -> CodeType:
    """A code object from symbolic instructions, with offsets, EXTENDED_ARG, exception table,
    line table and stack depth computed."""
    return instructions.to_code()
