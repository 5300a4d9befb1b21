"""The backend: `compile_fx(gm, example_inputs)` turns an FX graph into a function that runs it
with generated Triton kernels.

The graph (torch-level, as a frontend captures it, or aten-level) is traced again with
`fxtrace.make_fx` — fake tensors, symbolic sizes when the graph has any, decomposed to the ops
we lower, functionalized — then lowered (lowering.py), scheduled (scheduler.py) and generated
(triton_codegen.py, wrapper.py) into one Python module, cached on disk by its source hash. The
returned function checks that its inputs still satisfy what the trace assumed (int arguments,
size relations) and compiles another version when they do not.

CPU graphs run the traced aten graph eagerly unless `config.triton_on_cpu` asks for Triton's
interpreter; graphs whose inputs require grad run the aten graph eagerly too (autograd sees aten
ops) until compiled training exists.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import sympy
import torch
from torch._decomp import get_decompositions
from torch.utils._pytree import tree_unflatten

from fakecore import DataDependentError, UnsupportedFakeOpError
from fxtrace import core_aten_decompositions, make_fx

from . import config
from .lowering import GraphLowering, GraphLoweringError, LoweringError
from .metrics import counters
from .scheduler import Kernel, schedule
from .wrapper import WrapperCodegen

log = logging.getLogger("inductor_lite")
aten = torch.ops.aten

# Composite ops we lower through their decompositions rather than one by one.
LOWERED_THROUGH_DECOMPOSITION = [
    aten.native_layer_norm, aten._softmax, aten._log_softmax, aten.var, aten.var_mean, aten.std,
    aten.std_mean, aten.gelu, aten.silu, aten.native_dropout,
    aten.logsumexp, aten.hardtanh, aten.leaky_relu, aten.elu, aten.softplus, aten.mish,
    aten.hardswish, aten.hardsigmoid, aten.addcmul, aten.addcdiv, aten.lerp, aten.clamp_min,
    aten.clamp_max, aten.masked_fill, aten.rsub, aten.native_group_norm,
    aten._native_batch_norm_legit_no_training, aten.sgn, aten.xlogy, aten.logit, aten.glu,
    aten.frac, aten.sigmoid_backward, aten.tanh_backward, aten.threshold_backward,
]


# Ops that stay whole, to run as extern library calls (attention's fused kernel, batched addmm).
KEPT_WHOLE = {aten.baddbmm, aten.scaled_dot_product_attention,
              aten._scaled_dot_product_flash_attention_for_cpu}


def _rms_norm(x: torch.Tensor, normalized_shape: list, weight: torch.Tensor | None,
              eps: float | None) -> tuple[torch.Tensor, torch.Tensor]:
    """RMS norm as functional aten ops (torch's decomposition adds in place)."""
    dims = list(range(-len(normalized_shape), 0))
    compute = torch.float32 if x.dtype in (torch.float16, torch.bfloat16) else x.dtype
    xc = x.to(compute)
    eps = torch.finfo(compute).eps if eps is None else eps
    rstd = torch.rsqrt(xc.pow(2).mean(dims, keepdim=True) + eps)
    out = xc * rstd
    if weight is not None:
        out = out * weight
    return out.to(x.dtype), rstd


def decompositions() -> dict:
    table = dict(core_aten_decompositions())
    table.update(get_decompositions(LOWERED_THROUGH_DECOMPOSITION))
    table[aten._fused_rms_norm.default] = _rms_norm
    table[aten.rms_norm.default] = lambda x, shape, weight=None, eps=None: _rms_norm(
        x, shape, weight, eps)[0]
    return {op: fn for op, fn in table.items() if op.overloadpacket not in KEPT_WHOLE}


def compile_fx(gm: torch.fx.GraphModule, example_inputs: list) -> Callable:
    """Compile `gm` for inputs like `example_inputs`; returns a callable taking the same inputs."""
    return CompiledGraph(gm, list(example_inputs))


class CompiledGraph:
    """The versions compiled for one graph, each valid where its guards hold.

    The first version is static unless the graph came with symbolic sizes. A call no version
    accepts compiles a symbolic version (sizes as kernel arguments; int arguments stay
    specialised, as make_fx keeps them constant).
    """

    def __init__(self, gm: torch.fx.GraphModule, example_inputs: list) -> None:
        self.gm = gm
        self.versions: list[tuple[Callable, Callable]] = []
        self.symbolic = _is_symbolic(gm, example_inputs)
        # A frontend's own symbols (torch.compile passes its SymInts) are not ours to trace
        # with: take their values; our trace makes its own symbols.
        self.versions.append(self._compile([_hint(v) for v in example_inputs]))

    def __call__(self, *args: Any) -> Any:
        for check, run in self.versions:
            if check(args):
                return run(*args)
        self.symbolic = True
        version = self._compile(list(args))
        self.versions.append(version)
        return version[1](*args)

    def _compile(self, inputs: list) -> tuple[Callable, Callable]:
        mode = "symbolic" if self.symbolic else "fake"
        # Mutations become copies into inputs at the end; views stay views (lowered as index
        # maps), not the copies that removing views too would make of them.
        functional = torch.func.functionalize(torch.fx.Interpreter(self.gm).run, remove="mutations")
        tensors = [t for t in inputs if isinstance(t, torch.Tensor)]
        # Training runs the graph eagerly: decomposed to core aten only, which autograd knows
        # (our fused decompositions reach prims that have no derivative formulas).
        training = torch.is_grad_enabled() and any(t.requires_grad for t in tensors)
        table = dict(core_aten_decompositions()) if training else decompositions()
        try:
            aten_gm = make_fx(functional, mode, table)(*inputs)
        except (DataDependentError, UnsupportedFakeOpError) as e:
            # Values decide what the graph does (or an op has no fake kernel): run it as it came.
            log.warning("inductor_lite: running the graph eagerly: %s", e)
            counters["eager_graphs"] += 1
            return _static_guard(inputs), self.gm
        check = _guard(aten_gm, inputs, static=not self.symbolic)
        if training:
            log.info("inductor_lite: inputs require grad; running the aten graph eagerly "
                     "(compiled training is not implemented)")
            counters["eager_graphs"] += 1
            return check, aten_gm
        if all(t.device.type == "cpu" for t in tensors) and not config.triton_on_cpu:
            counters["eager_graphs"] += 1
            return check, aten_gm
        if any(t.device.type == "cpu" for t in tensors) and not _interpreted():
            raise RuntimeError("generated kernels on CPU tensors run in Triton's interpreter, which "
                               "must be chosen before triton is imported (torch may import it "
                               "early): set TRITON_INTERPRET=1 in the environment")
        try:
            return check, generate(aten_gm)
        except (LoweringError, GraphLoweringError) as e:
            log.warning("inductor_lite: running the aten graph eagerly: %s", e)
            counters["eager_graphs"] += 1
            return check, aten_gm


def _interpreted() -> bool:
    """Whether triton was imported in interpreter mode (its own functions are interpreted)."""
    import triton.language as tl

    return type(tl.sum).__name__ == "InterpretedFunction"


def generate(aten_gm: torch.fx.GraphModule) -> Callable:
    """Lower, schedule and generate one aten graph; returns `call(*args)`."""
    constants = _lift_constants(aten_gm)
    graph = GraphLowering(aten_gm)
    graph.run()
    steps = schedule(graph.buffers, graph.outputs)
    wrapper = WrapperCodegen(graph, steps)
    source = wrapper.generate()
    module = _load(source)
    module.__dict__.update(wrapper.constants)
    _count(aten_gm, graph, steps)
    call = module.call
    values = list(constants.values())
    out_spec = getattr(aten_gm, "_out_spec", None)

    def run(*args: Any) -> Any:
        outs = call([*args, *values])
        return tree_unflatten(outs, out_spec) if out_spec is not None else outs
    run.source = source  # type: ignore[attr-defined]
    return run


def _lift_constants(gm: torch.fx.GraphModule) -> dict[str, torch.Tensor]:
    """Turn get_attr nodes (tensors the trace saw as constants) into trailing placeholders."""
    constants = {}
    last = None
    for node in gm.graph.nodes:
        if node.op == "placeholder":
            last = node
    for node in list(gm.graph.nodes):
        if node.op != "get_attr":
            continue
        value = gm
        for part in node.target.split("."):
            value = getattr(value, part)
        anchor = last if last is not None else next(iter(gm.graph.nodes))
        with gm.graph.inserting_after(anchor) if last is not None else \
                gm.graph.inserting_before(anchor):
            placeholder = gm.graph.placeholder(f"const_{node.target.replace('.', '_')}")
        placeholder.meta["val"] = node.meta.get("val")
        node.replace_all_uses_with(placeholder)
        gm.graph.erase_node(node)
        last = placeholder
        constants[placeholder.name] = value
    gm.recompile()
    return constants


def _load(source: str) -> Any:
    digest = hashlib.sha256(source.encode()).hexdigest()[:20]
    folder = config.cache_dir / "modules"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"g_{digest}.py"
    if not path.exists():
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(source)
        tmp.replace(path)
    if config.dump_dir:
        Path(config.dump_dir).mkdir(parents=True, exist_ok=True)
        (Path(config.dump_dir) / path.name).write_text(source)
    spec = importlib.util.spec_from_file_location(f"inductor_lite_g_{digest}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _count(aten_gm: torch.fx.GraphModule, graph: GraphLowering, steps: list) -> None:
    counters["graphs"] += 1
    kernels = [s for s in steps if isinstance(s, Kernel)]
    counters["kernels"] += len(kernels)
    counters["fused_buffers"] += sum(len(k.nodes) for k in kernels if len(k.nodes) > 1)
    counters["lowered_ops"] += graph.lowered_ops
    externs = [s for s in steps if not isinstance(s, Kernel) and s.parent is None]
    counters["fallbacks"] += sum(1 for s in externs if s.fallback)
    counters["extern_calls"] += sum(1 for s in externs if not s.fallback)


def _is_symbolic(gm: torch.fx.GraphModule, inputs: list) -> bool:
    shape_env = gm.meta.get("shape_env", getattr(gm, "shape_env", None))
    if shape_env is not None and getattr(shape_env, "var_to_val", None):
        return True
    return any(isinstance(v, torch.SymInt) for v in inputs) or any(
        isinstance(s, torch.SymInt) for t in inputs if isinstance(t, torch.Tensor) for s in t.shape)


def _hint(value: Any) -> Any:
    """A symbolic int as the int it stands for in this example (no guard recorded)."""
    return value.node.hint if isinstance(value, torch.SymInt) else value


def _guard(aten_gm: torch.fx.GraphModule, inputs: list, static: bool) -> Callable[[tuple], bool]:
    """What the trace assumed: the int inputs' values, and the tensors' sizes and strides (static)
    or the shape guards on their symbols (symbolic)."""
    placeholders = [n.meta.get("val") for n in aten_gm.graph.nodes if n.op == "placeholder"]
    # Ints the trace kept constant (symbolic traces make them symbols, covered by shape guards).
    ints = [(i, v) for i, v in enumerate(inputs) if isinstance(v, int) and not isinstance(v, bool)
            and not isinstance(placeholders[i], torch.SymInt)]
    if static:
        return _static_guard(inputs)
    shape_env = getattr(aten_gm, "shape_env", None)
    guards = [g.expr for g in shape_env.guards] if shape_env is not None else []
    if not guards:
        return lambda args: all(args[i] == v for i, v in ints)
    bindings = _symbol_sources(aten_gm)
    symbols = sorted({s for g in guards for s in g.free_symbols}, key=str)
    missing = [s for s in symbols if s not in bindings]
    if missing:
        raise RuntimeError(f"shape guards mention symbols no input binds: {missing}")
    test = sympy.lambdify(symbols, sympy.And(*guards), modules="math")
    getters = [bindings[s] for s in symbols]

    def check(args: tuple) -> bool:
        if not all(args[i] == v for i, v in ints):
            return False
        return bool(test(*[get(args) for get in getters]))
    return check


def _static_guard(inputs: list) -> Callable[[tuple], bool]:
    """Same int values, same tensor sizes and strides."""
    ints = [(i, v) for i, v in enumerate(inputs) if isinstance(v, int) and not isinstance(v, bool)]
    layouts = [(i, t.shape, t.stride()) for i, t in enumerate(inputs) if isinstance(t, torch.Tensor)]
    return lambda args: all(args[i] == v for i, v in ints) and all(
        args[i].shape == size and args[i].stride() == stride for i, size, stride in layouts)


def _symbol_sources(gm: torch.fx.GraphModule) -> dict[sympy.Symbol, Callable]:
    """For each size symbol of the inputs, how to read its value from the arguments."""
    out: dict[sympy.Symbol, Callable] = {}
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    for i, node in enumerate(placeholders):
        val = node.meta.get("val")
        if isinstance(val, torch.SymInt) and val.node.expr.is_Symbol:
            out.setdefault(val.node.expr, lambda args, i=i: args[i])
        if not isinstance(val, torch.Tensor):
            continue
        for what, values in (("size", val.shape), ("stride", val.stride())):
            for d, s in enumerate(values):
                # The symbol the dim was created as, also when a guard has since fixed its value.
                expr = getattr(s.node, "_expr", None) if isinstance(s, torch.SymInt) else None
                if expr is not None and expr.is_Symbol and expr not in out:
                    out[expr] = lambda args, i=i, d=d, what=what: getattr(args[i], what)(d)
    return out
