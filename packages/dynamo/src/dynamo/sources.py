"""Sources the frontend needs beyond the guard library's: a global of another module.

A function inlined from another module reads that module's globals, not the frame's `G`;
`ModuleGlobalSource` names such a value through `sys.modules`, so guards can check it.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

from guards import Source


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
