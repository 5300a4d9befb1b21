"""GuardedCache: values memoized under guard sets, looked up in order.

Each entry pairs a GuardSet with a value (for dynamo, a compiled function). `lookup(f_locals,
f_globals)` returns the value of the first entry whose check passes, or None. The cache holds at
most `limit` entries for the same objects, and `total_limit` in all: adding past either raises
`CacheLimitExceeded`, whose message lists why the existing entries did not apply to the inputs
that missed. `miss_reasons()` gives that list for any inputs, for logging recompilations.

"The same objects" are the frame's locals that entries are guarded to be (`Identity` on a
local, or on an item of one): a function called on twelve layers of a model in turn, each guarded by identity,
compiles once per layer without the layers using up each other's share of the limit, while
twelve recompilations for one layer hit it. (torch.compile counts its limit so too.)
"""

from __future__ import annotations

import gc
from typing import Any, Generic, TypeVar

from guards.guard_kinds import Identity
from guards.guard_set import GuardSet
from guards.sources import AttrSource, GetItemSource, LocalSource, a_type

V = TypeVar("V")


_SHOWN = 5  # failing guards named per entry in CacheLimitExceeded's message


class CacheLimitExceeded(RuntimeError):
    """The cache is full; the message says which guards kept failing."""


class GuardedCache(Generic[V]):
    """Values keyed by guard sets; the first entry whose guards hold wins."""

    def __init__(self, limit: int = 8, total_limit: int = 256) -> None:
        for name, value in (("limit", limit), ("total_limit", total_limit)):
            if type(value) is not int:
                raise TypeError(f"GuardedCache needs an int {name}, not {a_type(type(value))}")
            if value < 1:
                raise ValueError(f"GuardedCache needs a {name} of at least 1, not {value}")
        self.limit = limit
        self.total_limit = total_limit
        self.entries: list[tuple[GuardSet, V]] = []

    def lookup(self, f_locals: dict, f_globals: dict) -> V | None:
        for guards, value in self.entries:
            if guards.check(f_locals, f_globals):
                return value
        return None

    def miss_reasons(self, f_locals: dict, f_globals: dict) -> list[list[str]]:
        """For each entry, the guards that fail for these locals and globals."""
        return [guards.explain(f_locals, f_globals) for guards, _ in self.entries]

    def add(self, guards: GuardSet, value: V, *, f_locals: dict | None = None,
            f_globals: dict | None = None) -> None:
        """Add an entry; past a limit, raise CacheLimitExceeded (see `make_room`)."""
        self.make_room(f_locals=f_locals, f_globals=f_globals)
        self.entries.append((guards, value))

    def make_room(self, *, f_locals: dict | None = None, f_globals: dict | None = None) -> None:
        """Raise CacheLimitExceeded if an entry for this frame would be past a limit (asked
        before making the entry, which may be costly). The frame that missed, when given, lets
        the message say why every entry failed for it, and sets the entries made for other
        objects than its own apart from its share of the limit. Entries made for an object
        that is gone (held weakly by an `Identity` or `Alive` guard, or a key its guards hold
        weakly) can never hold again: they are dropped first, counting towards no limit."""
        self.entries[:] = [(g, v) for g, v in self.entries if not g.gone()]
        same = [(g, v) for g, v in self.entries if f_locals is None or _same_objects(g, f_locals)]
        if (len(same) >= self.limit or len(self.entries) >= self.total_limit) and \
                any(g.holds_weakly() for g, _ in self.entries):
            # What they hold may be garbage the collector has not freed yet: an optimizer is in
            # a reference cycle, and with it the parameters keying its state (a sweep over
            # models filled the cache with the dropped ones' entries, up to the limit)
            gc.collect()
            self.entries[:] = [(g, v) for g, v in self.entries if not g.gone()]
            same = [(g, v) for g, v in self.entries
                    if f_locals is None or _same_objects(g, f_locals)]
        if len(same) >= self.limit or len(self.entries) >= self.total_limit:
            message = f"the cache holds {self.limit} entries for these objects, its limit" \
                if len(same) >= self.limit else \
                f"the cache holds {self.total_limit} entries, its total limit"
            if (f_locals is not None or f_globals is not None) and same:
                reasons = [g.explain(f_locals or {}, f_globals or {}) for g, _ in same]
                # (the first few of an entry's: a model's hundred parameters that all changed
                # `requires_grad` made a warning of kilobytes)
                lines = [f"  entry {i}: {'; '.join(r[:_SHOWN]) or 'none (its guards hold)'}"
                         + (f"; and {len(r) - _SHOWN} more" if len(r) > _SHOWN else "")
                         for i, r in enumerate(reasons)]
                message += "; for these inputs the guards that failed were:\n" + "\n".join(lines)
            raise CacheLimitExceeded(message)

    def clear(self) -> None:
        self.entries.clear()

    def __len__(self) -> int:
        return len(self.entries)

    def __repr__(self) -> str:
        return f"GuardedCache({len(self.entries)} entries, limits {self.limit}/{self.total_limit})"

    def __class_getitem__(cls, item: Any) -> Any:  # GuardedCache[int] in annotations
        return cls


def _same_objects(guards: GuardSet, f_locals: dict) -> bool:
    """Whether the locals, and items of locals, that `guards` pins by identity are those
    objects in `f_locals`."""
    for guard in guards:
        if isinstance(guard, Identity) and _local_or_item(guard.source):
            try:
                value = guard.source.fetch(f_locals, {})
            except Exception:  # not there: another frame's objects
                return False
            if not guard.holds(value):
                return False
    return True


def _local_or_item(source: Any) -> bool:
    """A local (`L['layer']`) or an item of one (`L['pair'][1]`: a resume function's stack
    value, a `(name, module)` pair from `named_children()`)."""
    if type(source) is AttrSource and source.attr == "cell_contents":
        # a closure's variable (`L['__closure__'][1].cell_contents`: the function a shared
        # wrapper, `@torch.no_grad()`'s `decorate_context`, calls), a local of the frame as
        # torch.compile counts it: each decorated function has its own share of the limit
        source = source.of
    return type(source) is LocalSource or (
        type(source) is GetItemSource and type(source.of) is LocalSource)
