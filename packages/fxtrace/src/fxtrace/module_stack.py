"""Which nn.Modules are running: the `nn_module_stack` of each traced node.

While tracing, global forward pre-/post-hooks push and pop every module call. A node's
`meta["nn_module_stack"]` maps each enclosing module's qualified name (relative to the traced
root, e.g. `"layers.0.attn"`) to `(qualified name, module class)`, outermost first, as in
PyTorch's own traces.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import torch
from torch.nn.modules.module import (
    register_module_forward_hook,
    register_module_forward_pre_hook,
)


class ModuleStack:
    """The stack of module calls in progress, named by their path from `root`."""

    def __init__(self, root: torch.nn.Module | None) -> None:
        self._names = {id(m): name for name, m in root.named_modules()} if root is not None else {}
        self._stack: list[tuple[str, type]] = []
        self._thread: int | None = None  # the tracing thread: the hooks are global

    def current(self) -> dict[str, tuple[str, type]]:
        return {name: (name, cls) for name, cls in self._stack if name}  # "" is the root

    def _push(self, module: torch.nn.Module, args: object) -> None:
        if threading.get_ident() != self._thread:  # another thread's module, called eagerly
            return
        name = self._names.get(id(module))
        if name is None:  # a module outside the root: name it by its class
            name = f"{type(module).__name__}_{id(module):x}"
        self._stack.append((name, type(module)))

    def _pop(self, module: torch.nn.Module, args: object, output: object) -> None:
        if threading.get_ident() == self._thread:
            self._stack.pop()

    @contextmanager
    def recording(self) -> Iterator[None]:
        self._thread = threading.get_ident()
        pre = register_module_forward_pre_hook(self._push)
        post = register_module_forward_hook(self._pop)
        try:
            yield
        finally:
            pre.remove()
            post.remove()
