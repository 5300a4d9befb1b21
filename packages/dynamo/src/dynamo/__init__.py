"""dynamo: capture the PyTorch operations of ordinary Python code into FX graphs.

`compile(fn_or_module, backend=..., fullgraph=False, dynamic=None)` interprets the function's
bytecode symbolically (pure Python: no C extension, no frame-evaluation hook), builds an FX graph
of its tensor operations with fake tensors, hands it to a backend, and runs the result behind
guards, recompiling when they fail.
"""

from dynamo import logs
from dynamo.backends import list_backends, lookup_backend, register_backend
from dynamo.exc import BackendError, Unsupported
from dynamo.explain import ExplainOutput, explain
from dynamo.frontend import (
    CompiledFunction,
    OptimizedModule,
    allow_in_graph,
    assume_constant_result,
    compile,
    disable,
    graph_break,
    mark_dynamic,
    mark_static,
    reset,
)

logs.configure()

__all__ = [
    "BackendError", "CompiledFunction", "ExplainOutput", "OptimizedModule", "Unsupported",
    "allow_in_graph", "assume_constant_result", "compile", "disable", "explain", "graph_break", "list_backends",
    "lookup_backend", "mark_dynamic", "mark_static", "register_backend", "reset",
]
