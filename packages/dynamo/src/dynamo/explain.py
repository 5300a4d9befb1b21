"""explain(fn)(*args): what dynamo makes of a call, in words.

Runs the call once, compiled with a backend that only records, and reports the graphs it
captured (with their ops), every graph break (reason and user file:line), the functions that
ran eagerly and why, and the guards of every entry. The run's caches are keyed by its own
backend and dropped afterwards: explaining a function disturbs neither its compiled state nor
other threads' compiled calls.
"""

from __future__ import annotations

import functools
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from dynamo import frontend
from dynamo.exc import Unsupported


@dataclass
class ExplainOutput:
    graphs: list[torch.fx.GraphModule] = field(default_factory=list)
    # each place the graph broke, once (a break inside a function the frame calls is the
    # caller's break and the callee's, which compiles on its own: one place)
    breaks: list[Unsupported] = field(default_factory=list)
    eager: list[str] = field(default_factory=list)  # frames that ran eagerly, and why
    guards: list[str] = field(default_factory=list)
    # the same guards by cache entry: (the frame's name, its entry's guards)
    guards_by_entry: list[tuple[str, list[str]]] = field(default_factory=list)
    result: Any = None

    @property
    def graph_count(self) -> int:
        return len(self.graphs)

    @property
    def graph_break_count(self) -> int:
        return len(self.breaks)

    @property
    def ops_per_graph(self) -> list[list[str]]:
        return [[_op_name(n) for n in gm.graph.nodes if n.op in ("call_function", "call_method")]
                for gm in self.graphs]

    def __str__(self) -> str:
        lines = [f"{self.graph_count} graph(s), {self.graph_break_count} graph break(s)"]
        for i, ops in enumerate(self.ops_per_graph):
            lines.append(f"graph {i}: {len(ops)} ops: {', '.join(ops)}")
        for i, error in enumerate(self.breaks):
            where = f" at {error.filename}:{error.lineno}" if error.filename else ""
            inside = error.library_where()
            inside = f" (inside {error.library_name()} at {inside})" if inside else ""
            lines.append(f"break {i}: {error.reason}{where}{inside}")
        lines += [f"ran eagerly: {why}" for why in self.eager]
        lines.append(f"{len(self.guards)} guard(s):")
        if self.guards_by_entry:
            for name, guards in self.guards_by_entry:
                lines.append(f"  {name}:")
                lines += [f"    {g}" for g in guards]
        else:
            lines += [f"  {g}" for g in self.guards]
        return "\n".join(lines)


def _same_place(a: Unsupported, b: Unsupported) -> bool:
    """Whether two breaks are one: the same reason at the same line, where a user's line that
    led into torch's code (`self.rnn(p)`, inside `LSTM.forward`) is also the place in torch's
    code it reached, at which the callee, compiled on its own, broke again."""
    def places(e: Unsupported) -> set:
        return {(e.filename, e.lineno), *([e.library_site] if e.library_site else [])}

    return a.reason == b.reason and bool(places(a) & places(b))


def _op_name(node: torch.fx.Node) -> str:
    target = node.target
    return target if isinstance(target, str) else getattr(target, "__name__", str(target))


def _options_of(fn: Any) -> dict[str, Any]:
    """The options `compile` was given for what it returned (`fn`), those that change what is
    captured: `explain(compile(f, capture_scalar_outputs=True))` reports the graphs and breaks
    of that compilation, not of a default one (which broke at every `.item()`). Not
    `fullgraph` (the report lists breaks instead of raising at the first) nor
    `raise_backend_errors` (the recording backend does not fail)."""
    partial = type(fn) is functools.partial
    if isinstance(fn, frontend.OptimizedModule):
        options = fn._compile_forward.keywords["options"]
    elif partial and fn.func is frontend._call_object:  # `compile` of a callable object
        options = fn.args[2].keywords
    else:
        if partial and fn.func is frontend._call_partial:  # `compile` of a partial
            fn = fn.args[1]
        fn = getattr(fn, "__func__", fn)  # (a compiled method read from its object)
        options = fn._settings() if isinstance(fn, frontend.CompiledFunction) else {}
    return {k: options[k] for k in ("dynamic", "capture_scalar_outputs") if k in options}


def explain(fn: Callable) -> Callable[..., ExplainOutput]:
    """`explain(fn)(*args, **kwargs)`: run the call and report what dynamo captured (`fn` may
    be what `compile` returned: the function or module it wraps is explained)."""
    options = _options_of(fn)
    fn = fn._orig_mod if isinstance(fn, frontend.OptimizedModule) else frontend.uncompiled(fn)

    def run(*args: Any, **kwargs: Any) -> ExplainOutput:
        report = ExplainOutput()

        def recording(gm: torch.fx.GraphModule, example_inputs: list) -> Callable:
            report.graphs.append(gm)
            return gm.forward

        # The caches of this run are those keyed by its backend, `recording` (resume functions
        # and callees compiled at breaks inherit it); the other caches stay as they are (they
        # used to be set aside and put back: another thread's compiled calls lost the entries
        # they made meanwhile, and the report listed them)
        def ours(key: tuple) -> bool:
            return key[4] is recording

        under_mode = frontend._user_mode_active()
        try:
            compiled = frontend.compile(fn, backend=recording, **options)
            report.result = compiled(*args, **kwargs)
            with frontend._COMPILE_LOCK:  # (no other thread adds a cache meanwhile)
                caches = [(k, c) for k, c in list(frontend._caches.items()) if ours(k)]
                report.eager = [why for k, why in list(frontend._gave_up.items()) if ours(k)]
            if isinstance(fn, types.FunctionType) and frontend.captures_nothing(fn):
                report.eager.append(str(frontend.not_captured(fn)))  # (it ran as it is)
            if under_mode:
                report.eager.append("a TorchFunctionMode or TorchDispatchMode was active: the "
                                    "frame runs eagerly under a user's mode")
            for key, cache in caches:
                for i, (guards, entry) in enumerate(cache.entries):
                    report.breaks += [b for b in entry.breaks if not any(
                        _same_place(b, seen) for seen in report.breaks)]
                    described = [g.describe() for g in guards]
                    report.guards += described
                    code = key[0]()  # (the key holds the code weakly)
                    name = ("?" if code is None else code.co_qualname) + (
                        f" (entry {i})" if len(cache.entries) > 1 else "")
                    report.guards_by_entry.append((name, described))
        finally:
            with frontend._COMPILE_LOCK:
                for table in (frontend._caches, frontend._gave_up):
                    for key in [k for k in list(table) if ours(k)]:
                        del table[key]
        return report

    return run
