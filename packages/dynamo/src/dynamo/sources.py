"""Sources the frontend needs beyond the guard library's: a global of another module, the
items of a dict subclass, the object a weak reference refers to.

A function inlined from another module reads that module's globals, not the frame's `G`;
`ModuleGlobalSource` names such a value through `sys.modules`, so guards can check it.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

from guards import ChainedSource, Source


@dataclass(frozen=True)
class ModuleGlobalSource(Source):
    module: str
    name: str

    @property
    def expr(self) -> str:
        return f"__import__('sys').modules[{self.module!r}].__dict__[{self.name!r}]"

    def access(self, base_expr: str) -> str:
        return self.expr

    def fetch(self, f_locals: dict, f_globals: dict) -> Any:
        return sys.modules[self.module].__dict__[self.name]


@dataclass(frozen=True)
class DictItemsSource(ChainedSource):
    """The items of an instance of a dict subclass, as the methods it inherits from dict see
    them (a plain copy: read past any `__getitem__` or `keys` the subclass defines)."""

    def access(self, base_expr: str) -> str:
        return f"dict.copy({base_expr})"

    def step(self, value: Any) -> Any:
        return dict.copy(value)


@dataclass(frozen=True)
class WeakRefCallSource(ChainedSource):
    """What the weak reference at the base refers to (None once it is gone)."""

    def access(self, base_expr: str) -> str:
        return f"{base_expr}()"

    def step(self, value: Any) -> Any:
        return value()
