"""Backends: what turns a captured FX graph into something to run.

A backend is any callable `(gm, example_inputs) -> callable`, as for `torch.compile`. By name:
`"eager"` runs the GraphModule itself; `"aot_eager"` lowers it to aten ops with `fxtrace.make_fx`
and runs that; other names come from the `dynamo.backends` entry-point group (where
`inductor_lite` registers itself), and `register_backend` adds more at run time.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Any

import torch

from dynamo.variables.contexts import enter_context
from fakecore import FakeTensor

Backend = Callable[[torch.fx.GraphModule, list], Callable]
_REGISTRY: dict[str, Backend] = {}


def register_backend(name: str | Backend, backend: Backend | None = None) -> Any:
    """Register `backend` under `name` (usable as a decorator: `@register_backend("name")`,
    or bare, `@register_backend`, as torch's, under the function's own name); a name taken by
    another backend (`"eager"`) is refused."""
    if callable(name) and backend is None:
        name, backend = name.__name__, name
    if not isinstance(name, str):
        raise TypeError(f"register_backend: the name must be a string, not {name!r}")

    def add(fn: Backend) -> Backend:
        if not callable(fn):
            raise TypeError(f"register_backend: backend {name!r} must be callable, not {fn!r}")
        if _REGISTRY.get(name, fn) is not fn:  # (as torch refuses a duplicate name)
            raise ValueError(f"register_backend: a backend named {name!r} is already "
                             "registered")
        _REGISTRY[name] = fn
        return fn

    return add(backend) if backend is not None else add


def lookup_backend(backend: str | Backend) -> Backend:
    if callable(backend):
        return backend
    if backend not in _REGISTRY:
        for ep in entry_points(group="dynamo.backends"):
            if ep.name == backend:
                _REGISTRY[backend] = ep.load()
                break
    if backend not in _REGISTRY:
        raise ValueError(f"unknown backend {backend!r}; known: {', '.join(list_backends())}")
    return _REGISTRY[backend]


def list_backends() -> list[str]:
    names = set(_REGISTRY) | {ep.name for ep in entry_points(group="dynamo.backends")}
    return sorted(names)


def _is_function_apply(target: Any) -> bool:
    return getattr(target, "autograd_function", None) is not None  # objects.graph_apply


@register_backend("eager")
def eager(gm: torch.fx.GraphModule, example_inputs: list) -> Callable:
    return gm.forward


@register_backend("aot_eager")
def aot_eager(gm: torch.fx.GraphModule, example_inputs: list) -> Callable:
    """Lower to aten with make_fx (symbolic when the graph has symbolic sizes), then run. The
    grad-mode switches of `no_grad`/`enable_grad` blocks are kept in the aten graph, so that
    autograd records what the blocks would."""
    from fxtrace import make_fx

    if any(n.target in ("requires_grad_", "detach_", torch.Tensor.requires_grad_,
                        torch.Tensor.detach_) or n.kwargs.get("requires_grad")
           for n in gm.graph.nodes):
        raise NotImplementedError("aot_eager does not lower requires_grad_(), detach_() or "
                                  "factories with requires_grad=True (no aten op records them)")
    if any(n.target is enter_context and n.args[0] == "inference_mode" and n.args[1]
           for n in gm.graph.nodes):
        raise NotImplementedError("aot_eager does not lower an inference_mode block (the aten "
                                  "graph would not make inference tensors)")
    shape_env = gm.meta.get("shape_env")
    symbolic = shape_env is not None and bool(getattr(shape_env, "var_to_val", None))
    # An autocast block around the call keeps its cache of casts through the frontend's trace
    # and this one, on the same fakes: a cast found there is not traced (a fake constant)
    values = _traced_values(gm, example_inputs, symbolic)
    cache = torch.is_autocast_cache_enabled()
    torch.set_autocast_cache_enabled(False)
    try:
        # (no module stack: its global module hooks would reach other threads' calls)
        # (read again, an `.item()` is a new symbol: its checks are the aten graph's too)
        fakes = [v for v in values if isinstance(v, FakeTensor)]
        with fakes[0].fake_mode.unbacked_reads_forgotten(fakes) if fakes else \
                contextlib.nullcontext():
            aten = make_fx(_AtenLowering(gm).run, "symbolic" if symbolic else "fake",
                           record_grad_mode=True, record_module_stack=False)(*values)
    finally:
        torch.set_autocast_cache_enabled(cache)
    if any(n.op == "get_attr" and isinstance(getattr(aten, n.target, None), FakeTensor)
           for n in aten.graph.nodes):
        # a tensor the trace reached only through a fake's attributes (a torch function
        # reading `p.grad` inside a node) would stay fake in the graph
        raise NotImplementedError("aot_eager does not lower a graph that reads a tensor "
                                  "through an input's attributes (such as .grad)")
    if any(torch.is_autocast_enabled(device) for device in ("cpu", "cuda")):
        # The aten graph holds the casts of the autocast blocks open around the call (which
        # the frontend's guard keeps as they were) and of the graph's own blocks, whose
        # enter/exit nodes it does not keep: run under the open blocks, its ops would be cast
        # again (an `autocast(enabled=False)` block's matmul ran in bfloat16), as
        # aot_autograd's runtime wrapper avoids too.
        return _without_autocast(aten.forward)
    return aten.forward  # (a call of the module would run global module hooks on it)


def _without_autocast(fn: Callable) -> Callable:
    """`fn` called with autocast's dispatch keys excluded (a Function's forward, run by an
    opaque call, enters the blocks it saw again: `_under_autocast`)."""
    def call(*args: Any) -> Any:
        with torch._C._DisableAutocast():
            return fn(*args)
    return call


def _traced_values(gm: torch.fx.GraphModule, example_inputs: list, symbolic: bool) -> list:
    """What the frontend traced the graph with (its fakes, in its mode, with its symbols), in
    place of the real inputs: lowered on those, the aten graph assumes nothing about sizes
    that the frontend's guards do not check (lowered on real inputs, every dim would get a
    symbol of its own and equal sizes one symbol: a static dim of 3 and a dynamic one that
    was 3 at the first call would be one size). Sizes the lowering decides on become guards of
    the frontend's too. Where a fake's metadata is not its input's any more (an in-place
    `t_()` in the traced code), the real inputs, and only for a graph of static sizes."""
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    values = [n.meta.get("example_value") for n in placeholders]
    if len(values) == len(example_inputs) and all(
            _stands_for(v, real) for v, real in zip(values, example_inputs)):
        return values
    if symbolic:
        raise NotImplementedError("aot_eager does not lower a graph with symbolic sizes that "
                                  "changes an input's sizes or strides in place (x.t_())")
    return example_inputs


def _stands_for(value: Any, real: Any) -> bool:
    def hint(n: Any) -> Any:
        return n.node.hint if isinstance(n, torch.SymInt) else n

    if isinstance(real, torch.Tensor):
        return isinstance(value, torch.Tensor) and value.dim() == real.dim() and (
            [hint(n) for n in value.shape] == list(real.shape)) and (
            [hint(n) for n in value.stride()] == list(real.stride()))
    return isinstance(value, torch.SymInt) and hint(value) == real


def _under_autocast(blocks: tuple, fn: Callable) -> Callable:
    """`fn` called inside autocast blocks, `(device, dtype)` each: what a Function's forward
    sees of an autocast block open around its `apply` (`custom_fwd`'s casts, the dtypes of its
    ops), which the aten graph keeps only as the casts of the ops outside it."""
    def call(*args: Any, **kwargs: Any) -> Any:
        with contextlib.ExitStack() as stack:
            for device, dtype in blocks:
                stack.enter_context(torch.autocast(device, dtype=dtype))
            return fn(*args, **kwargs)
    return call


def _tensor_data(t: torch.Tensor) -> torch.Tensor:
    """`t.data`, as a function an aten graph's code can name."""
    return t.data


class _AtenLowering(torch.fx.Interpreter):
    """Runs the graph for `make_fx`: a custom `autograd.Function`'s `apply` stays one call in
    the aten graph (its forward's ops are not recorded), so that autograd runs the Function's
    own backward, not the derivative of its forward."""

    def call_function(self, target: Any, args: tuple, kwargs: dict) -> Any:
        if target is enter_context and args[:1] == ("autocast",) and len(args) == 5:
            # The block's own settings would turn autocast's cache on again, inside an
            # autocast block open around the call: where the frontend's trace left its casts
            # of the same fakes (the block did not clear them when it left), taken as fake
            # constants (the graph was refused: it ran eagerly)
            args = (*args[:4], False)
        if _is_function_apply(target):
            from fxtrace import opaque_call

            blocks = tuple((device, torch.get_autocast_dtype(device)) for device in ("cpu", "cuda")
                           if torch.is_autocast_enabled(device))
            if blocks:  # the aten graph has no autocast block: the call enters the open ones
                target = _under_autocast(blocks, target)
            return opaque_call(target, *args, **kwargs)
        if target is getattr and args[1:] == ("data",) and isinstance(args[0], torch.Tensor):
            from fxtrace import opaque_call

            # `.data` is a tensor of the same storage with a version counter of its own: an
            # in-place op on it must not move the input's (traced, it was `aten.detach`, which
            # shares the counter: backward through the input then failed where eager's ran)
            return opaque_call(_tensor_data, args[0])
        return super().call_function(target, args, kwargs)
