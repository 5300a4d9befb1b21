"""torch's global-state context managers inside the trace: grad mode and autocast.

`with torch.no_grad():`, `with torch.autocast("cuda", dtype=torch.bfloat16):` change how the
ops inside the block run. The tracer does both halves of that: it switches the state for real
while tracing (so the fake ops see it: no `requires_grad` under no_grad, autocast's dtypes
inside an autocast block), and it puts the switches into the graph as nodes
(`torch._C._set_grad_enabled`, `enter_autocast`/`exit_autocast`), so the compiled graph, and
any backend that traces it again at the dispatcher (where autocast's casts become ops), runs
its ops under the same state. Leaving the block switches both back; a trace that stops inside
a block leaves the state as it found it.
"""

from __future__ import annotations

import threading
import types
from typing import TYPE_CHECKING, Any

import torch

from dynamo.exc import Unsupported
from dynamo.variables.base import VariableTracker
from dynamo.variables.constant import ConstantVariable

if TYPE_CHECKING:
    from dynamo.interpreter import Translator

GRAD_MODES = (torch.no_grad, torch.enable_grad, torch.set_grad_enabled)
AUTOCAST = torch.amp.autocast_mode.autocast  # torch.autocast; torch.cpu/cuda.amp subclass it


class GradModeVariable(VariableTracker):
    """`torch.no_grad()`, `enable_grad()`, `set_grad_enabled(b)` as context managers.

    Entering switches grad mode both while tracing (so fake results get the right
    requires_grad) and in the graph (a `torch._C._set_grad_enabled` node); leaving restores it.
    `set_grad_enabled(b)` switches at creation, as it does in eager mode.
    """

    def __init__(self, target: bool, initial: bool, switches_at_creation: bool = False) -> None:
        self.target = target
        self.initial = initial
        self.switches_at_creation = switches_at_creation  # set_grad_enabled(b), not no_grad()

    @staticmethod
    def create(tx: Translator, fn: Any, args: list[VariableTracker]) -> GradModeVariable:
        if fn is torch.set_grad_enabled:
            target = bool(args[0].as_constant())
            ctx = GradModeVariable(target, torch.is_grad_enabled(), switches_at_creation=True)
            tx.output.set_grad_enabled(target)
            return ctx
        return GradModeVariable(fn is torch.enable_grad, torch.is_grad_enabled())

    def enter(self, tx: Translator) -> VariableTracker:
        tx.output.set_grad_enabled(self.target)
        return ConstantVariable(None)

    def exit(self, tx: Translator) -> VariableTracker:
        tx.output.set_grad_enabled(self.initial)
        return ConstantVariable(None)

    def call_method(self, tx: Translator, name: str, args, kwargs) -> VariableTracker:
        if name == "__enter__":
            return self.enter(tx)
        if name == "clone":  # what the grad-mode decorators call: the same context, anew
            if self.switches_at_creation:
                return GradModeVariable.create(tx, torch.set_grad_enabled,
                                               [ConstantVariable(self.target)])
            return GradModeVariable(self.target, torch.is_grad_enabled())
        if name == "__exit__":
            return self.exit(tx)
        raise Unsupported(f"grad mode context .{name}()")

    def call(self, tx: Translator, args, kwargs) -> VariableTracker:
        """`@torch.no_grad()` on a function the traced code defines: the function, run under
        a fresh copy of the context at each call."""
        if len(args) != 1 or kwargs:
            raise Unsupported("calling a grad mode context with other than one function")
        return ContextDecoratedVariable(self, args[0])


class ContextDecoratedVariable(VariableTracker):
    """A function decorated with a grad-mode context inside the trace."""

    def __init__(self, ctx: GradModeVariable, fn: VariableTracker) -> None:
        self.ctx = ctx
        self.fn = fn

    def python_type(self) -> type:
        return types.FunctionType

    def call(self, tx: Translator, args, kwargs) -> VariableTracker:
        ctx = self.ctx.call_method(tx, "clone", [], {})
        ctx.enter(tx)
        try:
            return self.fn.call(tx, args, kwargs)
        finally:
            ctx.exit(tx)


class ExitVariable(VariableTracker):
    """The `__exit__` of a grad-mode, autocast or inference-mode context, left on the stack by
    BEFORE_WITH."""

    def __init__(self, ctx: GradModeVariable | StateContextVariable) -> None:
        self.ctx = ctx

    def call(self, tx: Translator, args, kwargs) -> VariableTracker:
        return self.ctx.call_method(tx, "__exit__", [], {})


class GradModeExit:
    """A grad-mode block's `__exit__` outside the trace (handed to a resume function when a
    graph breaks inside the block): restores the grad mode the block was entered with."""

    def __init__(self, initial: bool) -> None:
        self.initial = initial

    def __call__(self, *exc_info: Any) -> bool:
        torch._C._set_grad_enabled(self.initial)
        return False  # exceptions propagate


class StateContextVariable(VariableTracker):
    """`torch.autocast(...)` (or its `torch.amp`/`cpu.amp`/`cuda.amp` forms) or
    `torch.inference_mode(mode)` as a context manager; `mode` is a real object with the same
    settings, entered while tracing, and `kind` names it in the graph's nodes."""

    def __init__(self, mode: Any) -> None:
        self.mode = mode
        self.kind = "autocast" if isinstance(mode, AUTOCAST) else "inference_mode"
        self.node: torch.fx.Node | None = None  # the graph's enter_context, while entered

    @staticmethod
    def create(cls: type, args: list[VariableTracker],
               kwargs: dict[str, VariableTracker]) -> StateContextVariable:
        return StateContextVariable(cls(*[a.as_constant() for a in args],
                                        **{k: v.as_constant() for k, v in kwargs.items()}))

    @staticmethod
    def settings(mode: Any) -> tuple:
        """The arguments that make a context like `mode` (`enter_context` takes them)."""
        if isinstance(mode, AUTOCAST):
            return mode.device, mode.fast_dtype, mode._enabled, mode._cache_enabled
        return (mode.mode,)

    def python_type(self) -> type:
        return type(self.mode)

    def enter(self, tx: Translator) -> VariableTracker:
        if self.node is not None:
            raise Unsupported(f"entering a torch.{self.kind} object that is already entered")
        self.node = tx.output.enter_context(self.mode, self.kind, self.settings(self.mode))
        # autocast's __enter__ returns the autocast object, inference_mode's None
        return self if self.kind == "autocast" else ConstantVariable(None)

    def exit(self, tx: Translator) -> VariableTracker:
        tx.output.exit_context(self.mode, self.node)
        self.node = None
        return ConstantVariable(False)

    def call_method(self, tx: Translator, name: str, args, kwargs) -> VariableTracker:
        if name == "__enter__":
            return self.enter(tx)
        if name == "__exit__":
            return self.exit(tx)
        if name == "clone":  # what inference_mode's decorator calls: the same context, anew
            return StateContextVariable(CONTEXTS[self.kind](*self.settings(self.mode)))
        raise Unsupported(f"torch.{self.kind}().{name}()")


# The contexts entered in the trace and in the graph, by the name the graph's nodes give them
CONTEXTS = {"autocast": AUTOCAST, "inference_mode": torch.inference_mode}


class _Entered(threading.local):
    """The blocks graphs have entered and not left yet, on this thread."""

    def __init__(self) -> None:
        self.blocks: list[Any] = []


_entered = _Entered()


def enter_context(kind: str, *settings: Any) -> Any:
    """The graph's node that opens an autocast or inference-mode block: the entered object."""
    mode = CONTEXTS[kind](*settings)
    mode.__enter__()
    _entered.blocks.append(mode)
    return mode


def exit_context(mode: Any) -> None:
    """The graph's node that closes the block `enter_context` opened."""
    if mode in _entered.blocks:
        _entered.blocks.remove(mode)
    mode.__exit__(None, None, None)


def open_blocks() -> int:
    """How many blocks graphs have entered and not left (on this thread)."""
    return len(_entered.blocks)


def close_blocks(depth: int) -> None:
    """A graph raised inside blocks it entered: leave them, innermost first, as the frame's own
    `with` statements would (an autocast block left open would cast every later op)."""
    while len(_entered.blocks) > depth:
        _entered.blocks.pop().__exit__(None, None, None)


def reopen_context(kind: str, *settings: Any) -> Any:
    """A block left open at a graph break, entered again outside the graph (where the partial
    graph closed it): the `__exit__` that the resume function calls."""
    mode = CONTEXTS[kind](*settings)
    mode.__enter__()
    return mode.__exit__
