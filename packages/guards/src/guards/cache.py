"""GuardedCache: values memoized under guard sets, looked up in order.

Each entry pairs a GuardSet with a value (for dynamo, a compiled function). `lookup(f_locals,
f_globals)` returns the value of the first entry whose check passes, or None. The cache holds at
most `limit` entries: adding past it raises `CacheLimitExceeded`, whose message lists why the
existing entries did not apply to the inputs that missed. `miss_reasons()` gives that list for
any inputs, for logging recompilations.
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar

from guards.guard_set import GuardSet

V = TypeVar("V")


class CacheLimitExceeded(RuntimeError):
    """The cache is full; the message says which guards kept failing."""


class GuardedCache(Generic[V]):
    """Values keyed by guard sets; the first entry whose guards hold wins."""

    def __init__(self, limit: int = 8) -> None:
        self.limit = limit
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
        """Add an entry; past the limit, raise CacheLimitExceeded. The frame that missed, when
        given, lets the message say why every entry failed for it."""
        if len(self.entries) >= self.limit:
            message = f"the cache holds {self.limit} entries, its limit"
            if (f_locals is not None or f_globals is not None) and self.entries:
                reasons = self.miss_reasons(f_locals or {}, f_globals or {})
                lines = [f"  entry {i}: {'; '.join(r) or 'none (its guards hold)'}"
                         for i, r in enumerate(reasons)]
                message += "; for these inputs the guards that failed were:\n" + "\n".join(lines)
            raise CacheLimitExceeded(message)
        self.entries.append((guards, value))

    def clear(self) -> None:
        self.entries.clear()

    def __len__(self) -> int:
        return len(self.entries)

    def __repr__(self) -> str:
        return f"GuardedCache({len(self.entries)}/{self.limit} entries)"

    def __class_getitem__(cls, item: Any) -> Any:  # GuardedCache[int] in annotations
        return cls
