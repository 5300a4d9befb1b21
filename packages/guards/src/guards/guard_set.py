"""GuardSet: a set of guards compiled into one generated Python check function.

Guards are added one by one; duplicates and guards implied by others (a tensor match implies
the type match) are dropped, and two that one check can do are joined (a class that lacks
`a`, and lacks `b`). `compile()` writes a single function `check(L, G)`. Sources form a
tree by prefix (`L['self']` → `L['self']._modules['fc']` → `..._parameters['weight']`), and the
function walks it depth first: each value is fetched once into a local variable (siblings that
are items of one dict, `._parameters`, read it once), and the guards on it are tested, cheapest
first, right after its fetch, so a failing check stops early. Guards over several sources
(aliasing, symbolic shapes) and global state come after the walk; last come the tensors reached
through other values (a model's parameters), when there are many: checked together, one C loop
(`map`) per property over all of them. Before all that, the keys the guards hold weakly (the
parameters keying an optimizer's state) are checked alive: the guards find them by their ids.
A value that cannot be fetched (a missing local, an attribute gone) makes the check return
False: the whole body sits in one `try`. `explain()` evaluates every guard on its own and says,
in words, which fail and why. `source` is the generated code, for reading.
"""

from __future__ import annotations

import builtins
import collections
import fractions
import keyword
import marshal
import math
import operator
import re
import weakref
from collections.abc import Callable, Iterable
from typing import Any

from guards.guard_kinds import (
    Alive,
    Constants,
    DictContains,
    Equals,
    Guard,
    Identity,
    Length,
    TensorMatch,
    TypeMatch,
    a_type,
    plain_constant,
)
from guards.sources import (
    GetItemSource,
    LocalSource,
    Source,
    WeakKey,
    expect,
    item,
    key_expr,
    key_names,
    weak_items,
)

CheckFn = Callable[[dict, dict], bool]


class GuardSet:
    """Guards on the values of a frame, and the compiled function that checks them all."""

    def __init__(self, guards: Iterable[Guard] = ()) -> None:
        # The guards in order, by slot (a removal or a replacement is one step, where editing
        # a list was a pass over every guard: quadratic in a frame's guards, the type guard
        # of each of 10^4 items of a list summed replaced by its value guard), and each
        # guard's slot (guards are values: equal ones are one guard here).
        self._slots: dict[int, Guard] = {}
        self._slot_of: dict[Guard, int] = {}
        self._list: list[Guard] | None = []
        self._added = 0
        self._check: CheckFn | None = None
        self._source = ""
        # Guards by the sources they read: a guard can only imply one on the same sources.
        self._by_sources: dict[tuple[Source, ...], list[Guard]] = {}
        self._pinned: list[weakref.ref] | None = None  # what `gone` asks, found once
        for guard in guards:
            self.add(guard)

    def add(self, guard: Guard) -> None:
        """Add `guard`, unless it is already here or implied by a guard that is."""
        expect(guard, Guard, "GuardSet needs guards")
        same = self._by_sources.setdefault(guard.sources, [])
        if guard in same or any(g.implies(guard) for g in same):
            return
        for i, g in enumerate(same):
            both = g.joined(guard)  # (a class that lacks two names: one check)
            if both is not None:
                slot = self._slot_of.pop(g)
                self._slots[slot] = same[i] = both
                self._slot_of[both] = slot
                self._list = self._check = self._pinned = None
                return
        implied = [g for g in same if guard.implies(g)]
        if implied:
            same[:] = [g for g in same if all(g is not i for i in implied)]
            for g in implied:
                del self._slots[self._slot_of.pop(g)]
        same.append(guard)
        self._slots[self._added] = guard
        self._slot_of[guard] = self._added
        self._added += 1
        self._list = None
        self._check = None
        self._pinned = None

    @property
    def guards(self) -> list[Guard]:
        """The guards, in the order they were added (read-only)."""
        if self._list is None:
            self._list = list(self._slots.values())
        return self._list

    def _weak_refs(self) -> list[weakref.ref]:
        """The weak references these guards hold objects by (`Identity`, `Alive`, `TypeMatch`
        of a class made at run time, weak keys), found once."""
        if self._pinned is None:
            self._pinned = [g.ref for g in self.guards if isinstance(g, Identity | Alive | TypeMatch)
                            and isinstance(g.ref, weakref.ref)]
            self._pinned += [key.ref for key in _weak_keys(self.guards)]
        return self._pinned

    def gone(self) -> bool:
        """Whether an object these guards hold weakly is gone: then the check fails for good."""
        return any(ref() is None for ref in self._weak_refs())

    def holds_weakly(self) -> bool:
        """Whether these guards hold some object weakly (so that `gone` may come true)."""
        return bool(self._weak_refs())

    def __len__(self) -> int:
        return len(self.guards)

    def __iter__(self):
        return iter(self.guards)

    # ----- the generated check ----------------------------------------------------------------

    @property
    def check(self) -> CheckFn:
        """`check(f_locals, f_globals) -> bool`: True when every guard holds."""
        if self._check is None:
            self._check, self._source = _compile(self.guards)
        return self._check

    def __call__(self, f_locals: dict, f_globals: dict) -> bool:
        return self.check(f_locals, f_globals)

    @property
    def source(self) -> str:
        """The generated Python source of the check function."""
        self.check  # noqa: B018 (compiles on first use)
        return self._source

    # ----- explanations -----------------------------------------------------------------------

    def explain(self, f_locals: dict, f_globals: dict) -> list[str]:
        """One line per failing guard: what it says, and what was found instead."""
        reasons = [f"the key {key.name} has been freed" for key in _weak_keys(self.guards)
                   if key.ref() is None]
        for guard in self.guards:
            values = []
            for source in guard.sources:
                try:
                    values.append(source.fetch(f_locals, f_globals))
                except Exception as error:  # the reason is the explanation
                    where = _first_unreadable(source, f_locals, f_globals)
                    reasons.append(f"{guard.describe()} failed: {where} could not be read "
                                   f"({_error(error)})")
                    break
            else:
                try:
                    held = guard.holds(*values)
                except Exception as error:
                    reasons.append(f"{guard.describe()} failed: checking it raised "
                                   f"{_error(error)}")
                    continue
                if not held:
                    try:
                        why = guard.failure(*values)
                    except Exception as error:  # a value whose repr or len raises
                        why = (f"it is {a_type(type(values[0]))}" if values else "?") + (
                            f" (describing it raised {_error(error)})")
                    reasons.append(f"{guard.describe()} failed: {why}")
        return reasons


def _error(error: BaseException) -> str:
    """`Type: message` of an exception, or its type alone where its message cannot be made (a
    KeyError of an int too long to print, an exception whose `__str__` raises)."""
    try:
        return f"{type(error).__name__}: {error}"
    except Exception:
        return f"{type(error).__name__} (its message cannot be shown)"


def _first_unreadable(source: Source, f_locals: dict, f_globals: dict) -> Source:
    """The outermost prefix of `source` whose value cannot be read."""
    chain = [source]
    while chain[-1].base is not None:
        chain.append(chain[-1].base)
    for prefix in reversed(chain):
        try:
            prefix.fetch(f_locals, f_globals)
        except Exception:  # this is the step that fails
            return prefix
    return source


def _weak_keys(guards: list[Guard]) -> list[WeakKey]:
    """The keys the guards hold weakly, each once."""
    return list(dict.fromkeys(key for guard in guards for key in guard.weak_keys))


def _marshalled_exactly(value: Any) -> bool:
    """Whether `marshal` (format 2) writes `value` as itself: None, a bool, an int, a float or
    complex number (bit for bit: `-0.0` is not `0.0`; not NaN, which `Equals` takes for any
    NaN) or a str, of exactly that type, or a tuple of those. Bytes written so name type and
    value, so equal bytes mean an equal value of the same type: an object of any other type, a
    subclass included, is refused or written as a bytes string (a buffer, such as a numpy
    scalar), which no such value is written as."""
    if type(value) is tuple:
        return all(map(_marshalled_exactly, value))
    return value is None or type(value) in (bool, int, str) or (
        type(value) in (float, complex) and value == value)


def _is_singleton(value: Any) -> bool:
    """Whether CPython keeps a single object for this value (so `is` can compare it)."""
    return value is None or type(value) is bool or (type(value) is int and -5 <= value <= 256)


# Names the generated check uses itself: a variable must not take one.
_RESERVED = {"L", "G", "check", "math", "Fraction"} | set(dir(builtins)) | set(keyword.kwlist)


def _variable_name(expr: str, taken: set[str]) -> str:
    # ASCII only: Python rejects some word characters in names (`²`) and NFKC-normalises
    # others, so that two distinct names (`L_d_ﬁ`, `L_d_fi`) would be one variable
    name = re.sub(r"\W+", "_", expr, flags=re.ASCII).strip("_")[-40:] or "v"
    if not name[0].isalpha() or name in _RESERVED:
        name = "v_" + name
    candidate, n = name, 1
    while candidate in taken:
        candidate, n = f"{name}_{n}", n + 1
    taken.add(candidate)
    return candidate


# How many tensors it takes to check them together rather than each in place.
_TOGETHER = 16


def _tensors_together(tensors: list[TensorMatch], names: dict[Source, str],
                      consts: Constants) -> list[str]:
    """Check the tensors' types (by identity, before reading anything else), then each property
    over all the tensors that have it: `list(map(reader, tensors)) == expected`. The readers
    return objects that compare by identity (dtypes, layouts), bools, devices and tuples of
    ints, so `==` compares them exactly."""
    group = "(" + ", ".join(names[g.source] for g in tensors) + ",)"
    types = consts.name(tuple(g.type for g in tensors))
    lines = [f"___tensors = {group}",
             f"if not all(map(___is, map(type, ___tensors), {types})):",
             "    return False"]
    # reader -> (property, tensors, expected values)
    columns: dict[Any, tuple[str, list[str], list[Any]]] = {}
    for guard in tensors:
        for what, reader, expected in guard.columns() or ():
            column = columns.setdefault(reader, (what, [], []))
            column[1].append(names[guard.source])
            column[2].append(expected)
    for reader, (what, some, expected) in columns.items():
        values = "___tensors" if len(some) == len(tensors) else "(" + ", ".join(some) + ",)"
        lines.append(f"if list(map({consts.name(reader)}, {values})) != {consts.name(expected)}:"
                     f"  # {what}")
        lines.append("    return False")
    return lines


def _simple_kind(guard: Guard) -> str | None:
    """Which batched check takes `guard`, if one does."""
    if isinstance(guard, Length):
        return "len"
    if isinstance(guard, DictContains):
        kind = "in" if guard.present else "not in"
        if type(guard.key) is WeakKey:
            return f"{kind} weak"
        return None if weak_items(guard.key) else kind  # (a tuple of weak keys: its own check)
    if isinstance(guard, Equals) and _is_singleton(guard.value):
        return "is"
    return None


def _simple_together(guards: list[Guard], names: dict[Source, str],
                     consts: Constants) -> list[str]:
    """Lengths, key presence and singleton values, each kind in one pass (`map`)."""
    lines = []
    for kind in ("len", "is", "not in", "in", "not in weak", "in weak"):
        some = [g for g in guards if _simple_kind(g) == kind]
        if not some:
            continue
        values = "(" + ", ".join(names[g.source] for g in some) + ",)"
        if kind == "len":
            lengths = consts.name([g.length for g in some])
            lines.append(f"if list(map(len, {values})) != {lengths}:")
        elif kind == "is":
            lines.append(f"if not all(map(___is, {values}, "
                         f"{consts.name(tuple(g.value for g in some))})):")
        else:  # (weak keys: each read from its reference)
            keys = f"map(___deref, {consts.name(tuple(g.key.ref for g in some))})" \
                if kind.endswith("weak") else consts.name(tuple(g.key for g in some))
            test = "any" if kind.startswith("not in") else "not all"
            lines.append(f"if {test}(map(___contains, {values}, {keys})):")
        lines.append("    return False")
    return lines


def _compile(guards: list[Guard]) -> tuple[CheckFn, str]:
    consts = Constants()
    children: dict[Source | None, list[Source]] = {}
    on_source: dict[Source, list[Guard]] = {}
    late: list[Guard] = []  # guards over several sources, or none
    registered: set[Source] = set()  # (`in` on the lists: quadratic in a list's 10,000 items)

    def register(source: Source) -> None:
        parent = source.base
        siblings = children.setdefault(parent, [])
        if source not in registered:
            registered.add(source)
            siblings.append(source)
            if parent is not None:
                register(parent)

    for guard in guards:
        for source in guard.sources:
            register(source)
        if len(guard.sources) == 1:
            on_source.setdefault(guard.sources[0], []).append(guard)
        else:
            late.append(guard)

    names: dict[Source, str] = {}
    taken: set[str] = set()
    lines: list[str] = []

    # Keys held weakly are checked alive before anything: the expressions below call their
    # references, and guards compare their ids, which a dead key's object gives to the next one.
    refs = tuple(key.ref for key in _weak_keys(guards))
    if refs:
        lines += [f"if not all(map(___is_not, map(___deref, {consts.name(refs)}), "
                  f"{consts.name((None,) * len(refs))})):", "    return False"]
    # Then the guards that read no value of the frame (the global state): a check that fails
    # on them reads no value, so a torch-function mode the caller entered sees nothing of it.
    for guard in sorted((g for g in late if not g.sources), key=lambda g: g.cost):
        lines += [f"if not ({guard.code(consts)}):", "    return False"]
    late = [guard for guard in late if guard.sources]

    # Locals that are constants (`L['n'] == 3`, fifty times over) are checked all at once, in C:
    # one `itemgetter` fetches them, and `marshal` writes those it writes exactly (ints,
    # floats, str, None, ...) as one bytes string, compared with theirs: value and type in one
    # pass (`True == 1`, but their bytes differ). The others (devices, bytes) get one tuple
    # comparison for the values and one pass of `is` over their types. Constants that `==`
    # confuses with others and marshal cannot write (a float subclass's zero) are left to
    # their own checks.
    in_late = {source for guard in late for source in guard.sources}
    batch = [
        root for root in children.get(None, [])
        if isinstance(root, LocalSource) and not children.get(root) and root not in in_late
        and len(on_source.get(root, [])) == 1 and isinstance(on_source[root][0], Equals)
        and (_marshalled_exactly(on_source[root][0].value)
             or plain_constant(on_source[root][0].value))
    ]
    if len(batch) > 1:
        exact = [r for r in batch if _marshalled_exactly(on_source[r][0].value)]
        others = [r for r in batch if r not in exact]
        for group, in_bytes in ((exact, True), (others, False)):
            if not group:
                continue
            values = tuple(on_source[root][0].value for root in group)
            keys = [root.name for root in group]
            fetch = consts.name(operator.itemgetter(*keys)) + "(L)" if len(keys) > 1 \
                else f"(L[{keys[0]!r}],)"
            if in_bytes:
                written = consts.name(marshal.dumps(values, 2))
                lines.append(f"if ___marshal({fetch}, 2) != {written}:")
            else:
                types = consts.name(tuple(map(type, values)))
                lines.append(f"___values = {fetch}")
                lines.append(f"if not (___values == {consts.name(values)} and "
                             f"all(map(___is, map(type, ___values), {types}))):")
            lines.append("    return False")
        children[None] = [root for root in children[None] if root not in batch]

    # Tensors reached through other values (a module's parameters and buffers: hundreds of
    # them) are checked after everything else, together: one C loop (`map`) per property over
    # all of them, which spares the interpreter its work per tensor and property. Only leaves
    # (a tensor whose properties are read further, `.size()[0]`, is checked before those reads)
    # and not the frame's own values (inputs, which change the most, so a check that fails on
    # them fails early).
    tensors = [guard for source, on_it in on_source.items()
               if source.base is not None and not children.get(source)
               for guard in on_it if isinstance(guard, TensorMatch) and guard.columns()]
    if len(tensors) < _TOGETHER:
        tensors = []
    for guard in tensors:
        on_source[guard.source].remove(guard)
    # Likewise the cheap checks of values reached through others (a module's hook dicts are
    # empty, no instance attribute shadows a method, a flag is `True`), hundreds in a model:
    # one C loop per kind.
    simple = [guard for source, on_it in on_source.items() if source.base is not None
              for guard in on_it if _simple_kind(guard) is not None]
    if len(simple) < _TOGETHER:
        simple = []
    for guard in simple:
        on_source[guard.source].remove(guard)

    def walk(source: Source, fetch: str) -> None:
        names[source] = _variable_name(source.expr, taken)
        lines.append(f"{names[source]} = {fetch}")
        for guard in sorted(on_source.get(source, []), key=lambda g: g.cost):
            lines.append(f"if not ({guard.code(names[source], consts)}):")
            lines.append("    return False")
        # Children that are items of one table of this value (`._parameters`) read it once.
        kids = sorted(children.get(source, []), key=first_cost)
        # (counted once: a count per child was quadratic in a module's parameters)
        counts = collections.Counter(kid.table for kid in kids if kid.table)
        shared = {table for table, count in counts.items() if count > 1}
        tables: dict[str, str] = {}
        for kid in kids:
            if kid.table in shared:
                if kid.table not in tables:
                    tables[kid.table] = _variable_name(f"{source.expr}.{kid.table}", taken)
                    lines.append(f"{tables[kid.table]} = {names[source]}.{kid.table}")
                walk(kid, kid.index(tables[kid.table]))
            elif isinstance(kid, GetItemSource):  # `[]` on a defaultdict would add the key
                base = names[source]
                walk(kid, f"{kid.access(base)} if type({base}) in ___plain else "
                          f"___item({base}, {key_expr(kid.held)})")
            else:
                walk(kid, kid.access(names[source]))

    def first_cost(source: Source) -> int:
        # Siblings with cheap guards of their own go first; bare steps on the way down last.
        return min((g.cost for g in on_source.get(source, [])), default=9)

    for root in sorted(children.get(None, []), key=first_cost):
        walk(root, root.access(""))
    for guard in sorted(late, key=lambda g: g.cost):
        args = [names[s] for s in guard.sources]
        lines.append(f"if not ({guard.code(*args, consts)}):")
        lines.append("    return False")
    if simple:
        lines += _simple_together(simple, names, consts)
    if tensors:
        lines += _tensors_together(tensors, names, consts)

    body = "\n".join("        " + line for line in lines) or "        pass"
    source = f"def check(L, G):\n    try:\n{body}\n    except Exception:\n        return False\n    return True\n"
    namespace: dict[str, Any] = {"math": math, "Fraction": fractions.Fraction,
                                 "___is": operator.is_, "___contains": operator.contains,
                                 "___marshal": marshal.dumps,
                                 "___is_not": operator.is_not, "___deref": weakref.ref.__call__,
                                 "___item": item, "___plain": frozenset((dict, list, tuple)),
                                 **key_names(),
                                 **consts.values}
    exec(compile(source, "<guards>", "exec"), namespace)
    return namespace["check"], source
