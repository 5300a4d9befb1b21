"""The backend: `compile_fx(gm, example_inputs)` turns an FX graph into a function that runs it
with generated Triton kernels.

The graph (torch-level, as a frontend captures it, or aten-level) is traced again with
`fxtrace.make_fx` — on fakes whose sizes are symbols where they may vary, decomposed to the ops
we lower, functionalized — then lowered (lowering.py), scheduled (scheduler.py) and generated
(triton_codegen.py, wrapper.py) into one Python module, cached on disk by its source hash. The
returned function checks that its inputs still satisfy what the trace assumed (constants,
dtypes, devices, sizes, strides, size relations) and compiles another version when they do not.

CPU graphs run the traced aten graph eagerly unless `config.triton_on_cpu` asks for Triton's
interpreter; calls that autograd must record run the graph as it came until compiled training
exists.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import logging
import math
import operator
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import sympy
import torch
from torch._decomp import get_decompositions
from torch._prims_common import ELEMENTWISE_TYPE_PROMOTION_KIND, elementwise_dtypes
from torch.utils._pytree import tree_flatten, tree_unflatten

from fakecore import (
    DataDependentError,
    FakeTensorMode,
    ShapeEnv,
    SizeOrigin,
    UnsupportedFakeOpError,
    strides_overlap,
)
from fxtrace import core_aten_decompositions, make_fx

from . import combinations, config, linear_cross_entropy, lu_unpacking, multinomial
from .lowering import (
    GraphLowering,
    GraphLoweringError,
    LoweringError,
    fills_its_storage_densely,
    fits,
    host_nodes,
    returns_a_view,
)
from .metrics import counters
from .scheduler import Kernel, schedule
from .template_kernels import TemplateKernel
from .traced_sizes import TracedSizes, lambdified, symbol_expr
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
    aten.native_batch_norm, aten._native_batch_norm_legit, aten._native_batch_norm_legit_functional,
    aten._batch_norm_with_update, aten._batch_norm_with_update_functional,
    aten.addmv, aten.ldexp, aten.dist, aten.reflection_pad1d,
    aten.reflection_pad2d, aten.replication_pad1d, aten.replication_pad2d, aten.select_scatter,
    aten.slice_scatter, aten.diagonal_scatter, aten.unfold,
]


# Versions of one graph compiled before it runs as it came (frontends limit theirs likewise).
MAX_VERSIONS = 8

# Tracing uses process-wide state (fxtrace's module hooks, torch's modes): one compile at a
# time, also when threads call a graph with inputs that need a new version.
_COMPILE_LOCK = threading.RLock()


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


def _foreach_with_scalars(combine: Callable, xs: list, t1: list, t2: list,
                          scalars: torch.Tensor) -> list:
    """`_foreach_addcdiv`/`_foreach_addcmul` given their values as a CPU tensor (a foreach
    optimizer's step sizes), as pointwise ops per tensor: `x + value * (t1 op t2)`, each value
    a host number to the kernels."""
    return [x + scalars[i] * combine(a, b) for i, (x, a, b) in enumerate(zip(xs, t1, t2))]


def _foreach_with_scalars_(combine: Callable, xs: list, t1: list, t2: list,
                           scalars: torch.Tensor) -> None:
    for x, new in zip(xs, _foreach_with_scalars(combine, xs, t1, t2, scalars)):
        x.copy_(new)


def _index_add_0d_index(decomposition: Callable, x: torch.Tensor, dim: int,
                        index: torch.Tensor, source: torch.Tensor, **kwargs: Any) -> torch.Tensor:
    """torch's `index_add` decomposition with a 0-d index made 1-d: it indexes by the 0-d
    index as it is, which drops the dim eager keeps (of size 1), so `index_put` would get a
    source of more dims than its indexing result."""
    if index.ndim == 0:
        if source.ndim != x.ndim:  # what eager refuses, the decomposition would broadcast
            raise RuntimeError(f"index_add: a source of {source.ndim} dims for a tensor of "
                               f"{x.ndim}")
        index = index.unsqueeze(0)
    return decomposition(x, dim, _negative_out_of_range(x, dim, index), source, **kwargs)


def _negative_out_of_range(x: torch.Tensor, dim: int, index: torch.Tensor) -> torch.Tensor:
    """`index` with its negative values made the dim's size: eager's `index_add` and
    `index_copy` refuse a negative index ("index -1 is out of bounds"), where the `index_put`
    of their decompositions counts it from the end and writes the last row. The size is out of
    range for `index_put` too, so the kernels' bounds check raises, and the frame runs again
    eagerly, which raises eager's error. (`index_fill` counts from the end as eager does.)"""
    return torch.where(index < 0, _dim_size(x, dim), index)


def _dim_size(x: torch.Tensor, dim: int) -> Any:
    """The size of `x`'s `dim` that an index along it counts to (1 for a 0-d `x`)."""
    return x.shape[dim] if x.dim() else 1


def _index_copy(decomposition: Callable, x: torch.Tensor, dim: int, index: torch.Tensor,
                source: torch.Tensor) -> torch.Tensor:
    """torch's `index_copy` decomposition, a negative index out of range as in eager."""
    return decomposition(x, dim, _negative_out_of_range(x, dim, index), source)


def _index_fill(decomposition: Callable, x: torch.Tensor, dim: int, index: torch.Tensor,
                value: Any) -> torch.Tensor:
    """torch's `index_fill` decomposition (an `index_copy`), its negative indices counted from
    the end first, as eager's `index_fill` counts them (one still negative is out of range)."""
    return decomposition(x, dim, torch.where(index < 0, index + _dim_size(x, dim), index), value)


def _masked_fill_that_fits(decomposition: Callable, x: torch.Tensor, mask: torch.Tensor,
                           value: Any) -> Any:
    """torch's `masked_fill` decomposition where `x`'s dtype holds `value`; else the op stays
    whole, for its aten call to raise as eager does (the decomposition's `where` of a
    `scalar_tensor` would return `inf` for a half `x` and 1e6)."""
    if not fits(value, x.dtype):
        return NotImplemented
    return decomposition(x, mask, value)


def _laid_out_afresh(decomposition: Callable, *args: Any) -> torch.Tensor:
    """torch's decomposition (`triu`, `tril`: a `where`) with its result laid out as the CPU
    kernel lays it out, contiguous: a `where` keeps a contiguous input's strides, and a size-1
    dim's other stride (a transposed `(7, 1)`) made a later max_pool2d pick channels-last, so a
    `view` of its result the graph's trace made could not be taken (fuzzer seed 1002953)."""
    return aten.clone.default(decomposition(*args), memory_format=torch.contiguous_format)


def _laid_out_as_input(decomposition: Callable, x: torch.Tensor, *args: Any) -> torch.Tensor:
    """torch's `slice_scatter` decomposition with its result laid out in the order of `x`'s
    strides, as the kernel lays it out (it copies `x` keeping its strides), not contiguous.
    Functionalization scatters a write through a view back into the view's base with it and
    takes the base's views again of the result: a `view` eager took of a permuted base (an
    einsum's result) cannot be taken of a contiguous one (Funnel). (`select_scatter`'s
    decomposition, a `where`, keeps `x`'s strides already.)"""
    result = decomposition(x, *args)
    strides = [_hint(s) for s in x.stride()]
    order = sorted(range(x.dim()), key=lambda d: -strides[d])
    if order == list(range(x.dim())):
        return result
    packed = aten.clone.default(result.permute(order), memory_format=torch.contiguous_format)
    return packed.permute([order.index(d) for d in range(len(order))])


def _nan_to_num_that_fits(decomposition: Callable, x: torch.Tensor, nan: Any = None,
                          posinf: Any = None, neginf: Any = None) -> Any:
    """torch's `nan_to_num` decomposition where `x`'s dtype holds the numbers given; else the
    op stays whole: eager casts them unchecked (`posinf=1e39` of a float tensor is inf), where
    the decomposition's `where` of a `scalar_tensor` raises as eager's `full` does."""
    if not all(fits(v, x.dtype) for v in (nan, posinf, neginf)):
        return NotImplemented
    return decomposition(x, nan, posinf, neginf)


def _operands_in_result_dtype(decomposition: Callable, *args: Any, **kwargs: Any) -> Any:
    """torch's decomposition of `addcmul`, `addcdiv` or `xlogy` with its tensor operands first
    converted to a half-precision result's dtype, as eager converts them: the decomposition
    computes in float32 with a 0-d float32 operand as it is (`addcmul(half_x, half_y,
    tensor(0.1))` was an ulp off eager's, which multiplies by the half 0.1, in 400 of 4096
    values)."""
    _, dtype = elementwise_dtypes(*(a for a in args if isinstance(a, torch.Tensor)),
                                  type_promotion_kind=ELEMENTWISE_TYPE_PROMOTION_KIND.DEFAULT)
    if dtype in (torch.float16, torch.bfloat16):
        args = tuple(a.to(dtype) if isinstance(a, torch.Tensor) else a for a in args)
    return decomposition(*args, **kwargs)


def _diagonal_scatter(x: torch.Tensor, src: torch.Tensor, offset: int = 0, dim1: int = 0,
                      dim2: int = 1) -> torch.Tensor:
    """`diagonal_scatter` as an `index_put` at the diagonal's places (torch's decomposition
    writes with `copy_to`, which functionalization makes a `diagonal_scatter` again: every
    graph holding one, `x.diagonal().zero_()` included, ran as its aten graph)."""
    rank = x.dim()
    dim1, dim2 = dim1 % rank, dim2 % rank
    k = torch.arange(src.shape[-1], device=x.device)
    indices: list = [None] * rank
    indices[dim1], indices[dim2] = k + max(-offset, 0), k + max(offset, 0)
    # advanced indexing puts the diagonal's dim where the indexed dims were when they are
    # adjacent, else in front
    at = min(dim1, dim2) if abs(dim1 - dim2) == 1 else 0
    return torch.ops.aten.index_put.default(x, indices, src.movedim(-1, at))


def _take(x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """`take` as an index of the flattened `x` (torch's decomposition indexes it by a 0-d
    index as a Python number: the value of a tensor, which makes the whole graph eager)."""
    return torch.ops.aten.index.Tensor(x.reshape(-1), [index])


def decompositions() -> dict:
    table = dict(core_aten_decompositions())
    table.update(get_decompositions(LOWERED_THROUGH_DECOMPOSITION))
    for name, combine in (("addcdiv", torch.div), ("addcmul", torch.mul)):
        packet, inplace = getattr(aten, f"_foreach_{name}"), getattr(aten, f"_foreach_{name}_")
        table[packet.Tensor] = functools.partial(_foreach_with_scalars, combine)
        table[inplace.Tensor] = functools.partial(_foreach_with_scalars_, combine)
    for op in (aten.index_add.default, aten.index_add_.default):
        table[op] = functools.partial(_index_add_0d_index, table[op])
    for op in (aten.index_copy.default, aten.index_copy_.default):
        table[op] = functools.partial(_index_copy, table[op])
    for op in (aten.index_fill.int_Scalar, aten.index_fill.int_Tensor,
               aten.index_fill_.int_Scalar, aten.index_fill_.int_Tensor):
        if op in table:
            table[op] = functools.partial(_index_fill, table[op])
    for op in (aten.masked_fill.Scalar, aten.masked_fill_.Scalar):
        table[op] = functools.partial(_masked_fill_that_fits, table[op])
    for op in (aten.addcmul.default, aten.addcdiv.default, aten.xlogy.Tensor):
        table[op] = functools.partial(_operands_in_result_dtype, table[op])
    for op in (aten.nan_to_num.default, aten.nan_to_num_.default):
        table[op] = functools.partial(_nan_to_num_that_fits, table[op])
    table[aten._fused_rms_norm.default] = _rms_norm
    table[aten.diagonal_scatter.default] = _diagonal_scatter
    table[aten.take.default] = _take
    for op in (aten.triu.default, aten.tril.default):
        table[op] = functools.partial(_laid_out_afresh, table[op])
    table[aten.slice_scatter.default] = functools.partial(
        _laid_out_as_input, table[aten.slice_scatter.default])
    table.update(linear_cross_entropy.DECOMPOSITIONS)
    table.update(multinomial.DECOMPOSITIONS)
    table.update(lu_unpacking.DECOMPOSITIONS)
    table[aten.rms_norm.default] = lambda x, shape, weight=None, eps=None: _rms_norm(
        x, shape, weight, eps)[0]
    for op in [op for op in table if op._schema.is_mutable]:
        table[op] = functools.partial(_unless_reading_what_it_writes, op, table[op])
    return {op: fn for op, fn in table.items() if op.overloadpacket not in KEPT_WHOLE}


def _unless_reading_what_it_writes(op: torch._ops.OpOverload, decomposition: Callable,
                                   *args: Any, **kwargs: Any) -> Any:
    """The decomposition of in-place op `op`, refused where the op reads another view of the
    memory it writes (`_reads_another_view_of`: `x[:, 1:3].addcmul_(x[:, :2], t)`)."""
    written = _written_values(op._schema, args, kwargs)
    if _reads_another_view_of(written, tree_flatten((args, kwargs))[0]):
        raise InputMetadataChange(f"{op} reads another view of the memory it writes: eager "
                                  "reads some elements after writing them")
    return decomposition(*args, **kwargs)


# Calls that make autograd record more than their inputs say.
_ASKS_FOR_GRAD = ("requires_grad_", "detach_", torch.Tensor.requires_grad_, torch.Tensor.detach_)


def _ops_under_grad(nodes: list[torch.fx.Node], grad_mode: bool) -> bool:
    """Whether an op of the graph runs with grad mode on, when the graph starts in `grad_mode`
    (its `_set_grad_enabled` nodes switch the mode on the way, and so does a frontend's
    `torch.inference_mode(False)` block: it turns grad on, as eager's does, until it closes)."""
    before: dict[torch.fx.Node, bool] = {}  # an inference_mode(False) block: the mode it found
    for node in nodes:
        if node.target is torch._C._set_grad_enabled:
            grad_mode = node.args[0]
        elif _leaves_inference_mode(node):
            before[node] = grad_mode
            grad_mode = True
        elif (block := _exits(node)) in before:
            grad_mode = before.pop(block)
        elif grad_mode and node.op in ("call_function", "call_method", "call_module"):
            return True
    return False


def _leaves_inference_mode(node: torch.fx.Node) -> bool:
    """Whether `node` is a frontend's `enter_context` node of `torch.inference_mode(False)`
    (dynamo's: its target is named so, its arguments are the kind and the settings)."""
    return (node.op == "call_function" and getattr(node.target, "__name__", None) == "enter_context"
            and node.args[:2] == ("inference_mode", False))


def _exits(node: torch.fx.Node) -> torch.fx.Node | None:
    """The `enter_context` node that `node` closes, if it is an `exit_context` node."""
    if node.op == "call_function" and getattr(node.target, "__name__", None) == "exit_context" \
            and node.args and isinstance(node.args[0], torch.fx.Node):
        return node.args[0]
    return None


def _draws_random(gm: torch.fx.GraphModule) -> bool:
    """Whether an op of the aten graph draws random numbers. Attention ops are tagged as
    seeded for their dropout: with a `dropout_p` of the number 0 (every model in eval mode)
    they draw nothing."""
    return any(isinstance(n.target, torch._ops.OpOverload)
               and torch.Tag.nondeterministic_seeded in n.target.tags
               and not _no_dropout(n) for n in gm.graph.nodes)


def _no_dropout(node: torch.fx.Node) -> bool:
    """Whether a seeded op's only randomness is a dropout that is off (`dropout_p` the number
    0)."""
    names = [a.name for a in node.target._schema.arguments]
    if "dropout_p" not in names:
        return False
    i = names.index("dropout_p")
    p = node.args[i] if i < len(node.args) else node.kwargs.get("dropout_p", 0.0)
    return not isinstance(p, torch.fx.Node) and isinstance(p, (int, float)) and p == 0


def compile_fx(gm: torch.fx.GraphModule, example_inputs: list, *, mode: str | None = None,
               options: dict | None = None) -> Callable:
    """Compile `gm` for inputs like `example_inputs`; returns a callable taking the same inputs.

    PyTorch's frontend passes its `mode` and `options` arguments on to every backend; they are
    Inductor's settings and are ignored here (with a warning, as PyTorch's own `eager` backend
    does): `config` holds ours."""
    if mode is not None or options:
        log.warning("inductor_lite: ignoring the frontend's mode=%r and options=%r (see "
                    "inductor_lite.config)", mode, options)
    return CompiledGraph(gm, list(example_inputs))


class CompiledGraph:
    """The versions compiled for one graph, each valid where its guard holds.

    Which sizes are symbols: the dims the frontend made symbolic (its placeholders' fake values,
    its SymInt arguments), and then every dim and int argument seen to differ from the first
    call's — a call no version accepts compiles another version with those as symbols (sizes
    become kernel arguments). Everything else is specialised and checked by the guard.

    A graph that reads the value of a 0-d CPU float input (PyTorch's frontend with
    `dynamic=True` passes float attributes such as layer norm's eps as such tensors, read with
    `.item()`) is traced again with those values as constants, which its guard then checks.
    After `MAX_VERSIONS` versions the graph runs as it came, for every later call.

    A graph `make_fx` traced with symbolic sizes is checked first, at every call, against what
    its trace assumed of the sizes (`TracedSizes`): a call that breaks it raises ValueError.
    """

    def __init__(self, gm: torch.fx.GraphModule, example_inputs: list) -> None:
        self.gm = gm
        # the graph as it came, run by its forward: a call of the module would run the user's
        # global module hooks (`register_module_forward_hook`) on it
        self.eager = gm.forward
        # Parameters and buffers are leading inputs of the trace, static, so that writes into
        # them (batch norm's running statistics) are functionalized into copies back.
        self.state = dict((*gm.named_parameters(), *gm.named_buffers()))
        self.versions: list[tuple[Callable, Callable]] = []
        # A frontend's own symbols are not ours to trace with: take their values.
        first = [_hint(v) for v in example_inputs]
        # What later calls are compared with (`_changed`): sizes and strides, not the data (the
        # example inputs are the frontend's real tensors, which this would keep alive).
        self.first = [_meta(v) for v in first]
        # What a graph make_fx traced symbolically assumes of its inputs' sizes (no frontend's
        # guards check it): checked at every call, the example inputs first.
        self.traced_sizes = TracedSizes.of(gm, first)
        if self.traced_sizes is not None:
            self.traced_sizes.check(self.first)
        self.dynamic = _frontend_dynamic(gm, example_inputs)
        self.strides = _frontend_strides(gm, example_inputs)  # (input, dim): symbolic strides
        self.read_scalars = False
        self.logged_training = False
        self.logged_random = False
        # whether the compiled versions draw random numbers (Triton's stream, or the
        # decompositions' draws: not the numbers the graph as it came draws)
        self.draws_random = False
        nodes = list(gm.graph.nodes)
        # per grad mode at the call: whether an op of the graph runs with grad on
        self.ops_under_grad = {mode: _ops_under_grad(nodes, mode) for mode in (False, True)}
        self.asks_for_grad = any(n.target in _ASKS_FOR_GRAD or n.kwargs.get("requires_grad")
                                 for n in nodes)
        if not self._autograd_sees(first):
            with _COMPILE_LOCK:
                self._add_version(first)

    def _autograd_sees(self, args: Any, grad_mode: bool | None = None) -> bool:
        """Whether autograd must record this call (made with `grad_mode`, by default the one
        now): a tensor requires grad and some op runs with grad mode on (as the call starts, or
        as the graph turns it: an optimizer's step turns it off before its first op), or the
        graph asks for gradients itself (`requires_grad_()`, a factory with
        `requires_grad=True`). Such a call runs the graph as it came, whose ops autograd knows,
        until compiled training exists."""
        if self.asks_for_grad:
            return True
        if not self.ops_under_grad[torch.is_grad_enabled() if grad_mode is None else grad_mode]:
            return False
        return any(isinstance(t, torch.Tensor) and t.requires_grad for t in args) or any(
            t.requires_grad for t in self.state.values())

    def __call__(self, *args: Any) -> Any:
        if self.traced_sizes is not None:
            self.traced_sizes.check(args)
        if self._autograd_sees(args):
            if not self.logged_training:
                log.info("inductor_lite: tensors require grad; the graph runs as it came "
                         "(compiled training is not implemented)")
                counters["eager_graphs"] += 1
                self.logged_training = True
            return self.eager(*args)
        run = next((run for check, run in self.versions if check(args)), None)
        if run is None:
            with _COMPILE_LOCK:
                run = self._new_version(args)
        if self.draws_random and not torch.is_inference_mode_enabled() and \
                self._autograd_sees(args, grad_mode=True):
            # Reentrant activation checkpointing runs the forward without grad and recomputes
            # it with grad, from the same generator state: both must draw the same numbers
            # (a dropout's mask), and the call with grad runs the graph as it came. (Under
            # inference mode nothing is recomputed with grad.)
            if not self.logged_random:
                log.info("inductor_lite: the graph draws random numbers and tensors require "
                         "grad: a call without grad runs it as it came (activation "
                         "checkpointing recomputes it with grad and must draw the same numbers)")
                counters["eager_graphs"] += 1
                self.logged_random = True
            return self.eager(*args)
        return run(*args)

    def _new_version(self, args: tuple) -> Callable:
        """The version to run `args` with, compiled for them (holding `_COMPILE_LOCK`)."""
        for check, run in self.versions:  # another thread may have just compiled it
            if check(args):
                return run
        if len(self.versions) >= MAX_VERSIONS:
            log.warning("inductor_lite: %d versions of this graph; it runs as it came from now "
                        "on", len(self.versions))
            counters["eager_graphs"] += 1
            self.versions.append(((lambda args: True), self.eager))
            return self.eager
        self.dynamic |= _changed(self.first, args)
        self.strides |= _changed_strides(self.first, args)
        return self._add_version(list(args))

    def _add_version(self, inputs: list) -> Callable:
        """A version compiled for `inputs`, kept unless it is for this call only: its run."""
        check, run = self._compile(inputs)
        if check is not None:
            self.versions.append((check, run))
        return run

    def _runner(self, run: Callable, state: list[torch.Tensor]) -> Callable:
        """`run`, a compiled version of the graph taking the parameters and buffers first, as
        a function of the inputs only. The aten graph has no grad-mode switches: where the
        graph has some, the version runs without grad (it records nothing for autograd, and
        writes into parameters, as an optimizer's step does) and leaves the mode as the
        graph's switches do."""
        runner = _with_state(run, state)
        if any(torch.is_autocast_enabled(device) for device in ("cpu", "cuda")):
            # Traced inside autocast blocks open around the call, the aten graph holds their
            # casts (and those of the graph's own blocks, which it does not keep): run under
            # the open blocks, its ops (and extern calls) would be cast again, an
            # `autocast(enabled=False)` block's matmul in bfloat16
            runner = _without_autocast(runner)
        nodes = list(self.gm.graph.nodes)
        if not any(n.target is torch._C._set_grad_enabled for n in nodes):
            return runner
        after = {mode: _grad_mode_after(nodes, mode) for mode in (False, True)}

        def without_grad(*args: Any) -> Any:
            leaves = after[torch.is_grad_enabled()]
            torch._C._set_grad_enabled(False)
            try:
                return runner(*args)
            finally:
                torch._C._set_grad_enabled(leaves)
        without_grad.source = getattr(runner, "source", None)  # type: ignore[attr-defined]
        return without_grad

    def _compile(self, inputs: list) -> tuple[Callable | None, Callable]:
        """A version for `inputs`: (its guard, its run). A guard of None: a run for this call
        only (one whose `torch._check` fails for these inputs already while tracing)."""
        tensors = [t for t in inputs if isinstance(t, torch.Tensor)]
        unusual = _unusual_inputs(tensors)
        if unusual:
            # (meta tensors have no data for kernels; sparse and quantized ones no lowering)
            log.warning("inductor_lite: running the graph eagerly: %s inputs", unusual)
            counters["eager_graphs"] += 1
            return _layout_guard(inputs), self.eager
        unusual = _unusual_inputs(_node_tensors(self.gm))
        if unusual:
            # made inside the graph (`torch.ones(3, device="meta")`, `x.to("meta")`,
            # `torch.sparse_coo_tensor(i, v)`): the same for every call
            log.warning("inductor_lite: running the graph eagerly: it makes %s tensors", unusual)
            counters["eager_graphs"] += 1
            return (lambda args: True), self.eager
        state = list(self.state.values())
        scalars = {i: t.item() for i, t in enumerate(inputs) if self.read_scalars
                   and isinstance(t, torch.Tensor) and _is_cpu_scalar(t)}
        fakes, fake_state = _fakes(inputs, self.dynamic, state, scalars, self.strides)
        can_read_scalars = not self.read_scalars and any(
            isinstance(t, torch.Tensor) and _is_cpu_scalar(t) for t in inputs)
        try:
            # Compiled, the graph records nothing for autograd (`_autograd_sees`): traced
            # without grad, as its ops run (an optimizer's in-place updates of parameters).
            moved: list[int] = []
            fresh: list[tuple[int, int]] = []
            with torch.no_grad():
                aten_gm = _trace(self.gm, list(self.state), fake_state, fakes, decompositions(),
                                 moved, fresh)
        except (DataDependentError, UnsupportedFakeOpError, InputMetadataChange) as e:
            if isinstance(e, DataDependentError) and can_read_scalars:
                self.read_scalars = True
                return self._compile(inputs)
            # Values decide what the graph does (or an op has no fake kernel, or the graph
            # changes an input's sizes): run it as it came, which is right for every input.
            log.warning("inductor_lite: running the graph eagerly: %s", e)
            counters["eager_graphs"] += 1
            return (lambda args: True), self.eager
        except RuntimeError as e:
            if "Runtime assertion failed" not in str(e):
                raise
            # a check of the graph fails for these inputs (read as constants): eager's run
            # raises it, and another call compiles its own version
            return None, self.eager
        unusual = _unusual_inputs(_node_tensors(aten_gm))
        if unusual:  # (a graph without its values: seen in the trace)
            log.warning("inductor_lite: running the graph eagerly: it makes %s tensors", unusual)
            counters["eager_graphs"] += 1
            return (lambda args: True), self.eager
        self.draws_random |= _draws_random(aten_gm)
        host = host_nodes(aten_gm)
        if can_read_scalars and _reads_computed_floats(aten_gm, host):
            # A float read out of a tensor the kernels compute (`x.sum().item()`): its inputs'
            # values become constants instead. (One read from a host value, a 0-d CPU tensor
            # made from 0-d CPU inputs, is a kernel argument read on the host at each call.)
            self.read_scalars = True
            return self._compile(inputs)
        # The functional trace reads and writes inputs as separate tensors: one it writes into
        # must not share memory with another (two views of one tensor run as they came).
        written = _written_inputs(aten_gm, len(state))
        if _shares_memory(state, inputs, written):
            log.warning("inductor_lite: running the graph eagerly: an input it writes into "
                        "shares memory with another")
            counters["eager_graphs"] += 1
            count = len(inputs)
            return (lambda args: len(args) == count and _shares_memory(state, args, written)), \
                self.eager
        def guarded() -> Callable:  # (made last: the lowering may guard sizes too)
            return _guard(fakes, aten_gm.shape_env, scalars, state, written,
                          offsets=_reads_storage_offsets(aten_gm))

        # the aten graph run as it is: its copies back into inputs move their version counters
        aten_run = self._runner(_fresh_outputs(
            _keeping_versions(aten_gm.forward, state, sorted(set(written) - set(moved))), fresh),
            state)
        # (a graph without tensor inputs computes on the device its factories name)
        if all(t.device.type == "cpu" for t in tensors + _node_tensors(aten_gm)) \
                and not config.triton_on_cpu:
            counters["eager_graphs"] += 1
            return guarded(), aten_run
        # CPU tensors the kernels would touch: not a 0-d float the trace read as a constant,
        # nor one only read as a number (on the host)
        on_host = _read_on_host(aten_gm, len(state), host)
        on_cpu = [i for i, t in enumerate(inputs) if isinstance(t, torch.Tensor)
                  and t.device.type == "cpu" and (i not in scalars or i in written)
                  and i not in on_host]
        if on_cpu and not _interpreted() and any(t.device.type != "cpu" for t in tensors):
            log.warning("inductor_lite: running the aten graph eagerly: it computes on CPU "
                        "tensors (inputs %s) besides its device's", on_cpu)
            counters["eager_graphs"] += 1
            return guarded(), aten_run
        if on_cpu and not _interpreted():
            raise RuntimeError("generated kernels on CPU tensors run in Triton's interpreter, which "
                               "must be chosen before triton is imported (torch may import it "
                               "early): set TRITON_INTERPRET=1 in the environment")
        guards = getattr(aten_gm.shape_env, "guards", None)
        before = len(guards) if isinstance(guards, list) else None
        try:
            bumped = sorted(set(written) & set(moved))
            runner = self._runner(_fresh_outputs(
                _bumping_versions(generate(aten_gm), state, bumped), fresh), state)
        except (LoweringError, GraphLoweringError) as e:
            log.warning("inductor_lite: running the aten graph eagerly: %s", e)
            counters["eager_graphs"] += 1
            if before is not None:
                del guards[before:]  # (what the lowering assumed is not the aten graph's)
            return guarded(), aten_run
        return guarded(), runner  # (with what the lowering guarded: a scan's row fits a block)


def _aten_trace(fn: Callable, table: dict) -> Callable[..., torch.fx.GraphModule]:
    """make_fx on fakes, without a module stack (its module hooks are global: other threads'
    module calls would run them). `torch.combinations` is decomposed before the dispatcher
    would (combinations.py)."""
    trace = make_fx(fn, "fake", table, record_module_stack=False)

    def traced(*args: Any) -> torch.fx.GraphModule:
        with combinations.decomposing_combinations():
            return trace(*args)
    return traced


def _with_state(run: Callable, state: list[torch.Tensor]) -> Callable:
    """`run` (which takes the parameters and buffers first) as a function of the inputs only."""
    if not state:
        return run

    def with_state(*args: Any) -> Any:
        return run(*state, *args)
    with_state.source = getattr(run, "source", None)  # type: ignore[attr-defined]
    return with_state


def _without_autocast(run: Callable) -> Callable:
    """`run` with autocast's dispatch keys excluded, as aot_autograd runs its graphs."""
    def without_autocast(*args: Any) -> Any:
        with torch._C._DisableAutocast():
            return run(*args)
    without_autocast.source = getattr(run, "source", None)  # type: ignore[attr-defined]
    return without_autocast


def _bumping_versions(run: Callable, state: list[torch.Tensor], written: list[int]) -> Callable:
    """`run` (taking the state first), then the version counters of the inputs `written` moved
    (positions as `_written_inputs` gives them), as eager's in-place ops move them: kernels
    write through data pointers, which autograd does not see, and a tensor saved for backward
    and then written by a kernel gave a wrong gradient where eager raises ("modified by an
    inplace operation")."""
    if not written:
        return run
    positions = [i + len(state) for i in written]  # (negative `written`: the state's)

    def bumping(*args: Any) -> Any:
        out = run(*args)
        torch.autograd.graph.increment_version([args[i] for i in positions])
        return out
    bumping.source = getattr(run, "source", None)  # type: ignore[attr-defined]
    return bumping


def _keeping_versions(run: Callable, state: list[torch.Tensor], kept: list[int]) -> Callable:
    """`run` (taking the state first, the aten graph), with the version counters of the inputs
    `kept` (positions as `_written_inputs` gives them) as they were before it: the graph's
    copies back move every written input's, where eager's write through `x.data` moves none
    (a tensor autograd saved, then written so, made backward raise)."""
    if not kept:
        return run
    positions = [i + len(state) for i in kept]

    def keeping(*args: Any) -> Any:
        tensors = [args[i] for i in positions if _version(args[i]) is not None]
        versions = [t._version for t in tensors]
        out = run(*args)
        torch._C._autograd._unsafe_set_version_counter(tensors, versions)
        return out
    return keeping


def _fresh_aliases(outputs: list, inputs: tuple) -> list[tuple[int, int]]:
    """The positions in `outputs` of tensors that alias a tensor of `inputs` (its storage)
    but share the version counter of none of them (eager's `x.data`, or a view of it), each
    with its counter's value (the graph's own in-place ops on it)."""
    tensors = [t for t in inputs if _version(t) is not None]
    found = []
    for i, out in enumerate(outputs):
        if _version(out) is None or not any(torch._C._is_alias_of(out, t) for t in tensors):
            continue
        before = out._version
        versions = [t._version for t in tensors]
        torch.autograd.graph.increment_version(tensors)  # (each counter once, set back below)
        shared = out._version != before
        torch._C._autograd._unsafe_set_version_counter(tuple(tensors), tuple(versions))
        torch._C._autograd._unsafe_set_version_counter((out,), (before,))
        if not shared:
            found.append((i, before))
    return found


def _fresh_outputs(run: Callable, fresh: list[tuple[int, int]]) -> Callable:
    """`run`, its flat outputs at the positions of `fresh` given their own version counters
    (`out.data`, set to the values `fresh` holds), as eager's `x.data` has: the aten graph's
    `detach` shared the input's, so a later in-place op on such an output moved the input's
    (and backward through a saved input raised where eager's gives its gradient)."""
    if not fresh:
        return run

    def freshened(*args: Any) -> Any:
        out = run(*args)
        flat, spec = tree_flatten(out)
        for i, version in fresh:
            if isinstance(flat[i], torch.Tensor):
                flat[i] = flat[i].data
                if version:
                    torch._C._autograd._unsafe_set_version_counter((flat[i],), (version,))
        return tree_unflatten(flat, spec)
    freshened.source = getattr(run, "source", None)  # type: ignore[attr-defined]
    return freshened


def _grad_mode_after(nodes: list[torch.fx.Node], grad_mode: bool) -> bool:
    """The grad mode the graph's `_set_grad_enabled` nodes leave, from `grad_mode`."""
    for node in nodes:
        if node.target is torch._C._set_grad_enabled:
            grad_mode = node.args[0]
    return grad_mode


def _frontend_dynamic(gm: torch.fx.GraphModule, inputs: list) -> set[tuple[int, int | None]]:
    """(input, dim) of each size the frontend made symbolic; (input, None) for SymInt ints."""
    dynamic: set[tuple[int, int | None]] = set()
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    for i, value in enumerate(inputs):
        meta = placeholders[i].meta if i < len(placeholders) else {}
        val = meta.get("val", meta.get("example_value", value))
        if isinstance(value, torch.SymInt) or isinstance(val, torch.SymInt):
            dynamic.add((i, None))
        elif isinstance(val, torch.Tensor):
            dynamic |= {(i, d) for d, n in enumerate(val.shape) if isinstance(n, torch.SymInt)
                        and not n.node.expr.is_number}
    shape_env = gm.meta.get("shape_env", getattr(gm, "shape_env", None))
    sizes = [s for s in getattr(shape_env, "var_to_val", None) or () if s.is_integer
             and not _is_stride_symbol(shape_env, s)]
    if not dynamic and sizes:
        # An aten graph traced with symbolic sizes (not known which): every size a symbol. (A
        # frontend's float symbols, `zf0` of a float argument read with `.item()`, are not
        # sizes, nor are its stride symbols: such a graph keeps its static sizes.)
        for i, value in enumerate(inputs):
            if isinstance(value, torch.Tensor):
                dynamic |= {(i, d) for d in range(value.dim())}
            elif _is_int(value):
                dynamic.add((i, None))
    return dynamic


def _frontend_strides(gm: torch.fx.GraphModule, inputs: list) -> set[tuple[int, int]]:
    """(input, dim) of each stride the frontend made a symbol of its own (a slice of a growing
    tensor, `ids[:, -1:]`)."""
    strides: set[tuple[int, int]] = set()
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    for i, node in enumerate(placeholders[:len(inputs)]):
        val = node.meta.get("val", node.meta.get("example_value"))
        if isinstance(val, torch.Tensor) and isinstance(inputs[i], torch.Tensor) and \
                val.layout == torch.strided:  # (a sparse tensor has no strides)
            strides |= {(i, d) for d, n in enumerate(val.stride())
                        if isinstance(n, torch.SymInt) and n.node.expr.is_Symbol
                        and _is_stride_symbol(n.node.shape_env, n.node.expr)}
    return strides


def _is_stride_symbol(shape_env: Any, symbol: sympy.Symbol) -> bool:
    """Whether `symbol` stands for a stride (not a size that a dense stride equals)."""
    origins = getattr(shape_env, "var_to_origins", None) or {}
    if any(o.prop == "stride" for o in origins.get(symbol, ())):
        return True
    # torch.compile's shape env names each symbol's sources, the first one the symbol's own
    # (a `TensorPropertySource` whose `prop` is `TensorProperty.STRIDE`)
    sources = (getattr(shape_env, "var_to_sources", None) or {}).get(symbol) or [None]
    return getattr(getattr(sources[0], "prop", None), "name", None) == "STRIDE"


def _changed_strides(first: list, args: tuple) -> set[tuple[int, int]]:
    """(input, dim) of the strides of `args` that differ from `first`'s where every size is the
    same (dims of size 1 aside)."""
    changed: set[tuple[int, int]] = set()
    for i, (a, b) in enumerate(zip(first, args)):
        if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and \
                a.shape == b.shape and a.layout is b.layout is torch.strided:
            changed |= {(i, d) for d in range(a.dim())
                        if a.shape[d] != 1 and a.stride(d) != b.stride(d)}
    return changed


def _changed(first: list, args: tuple) -> set[tuple[int, int | None]]:
    """(input, dim) of the sizes of `args` that differ from `first`'s; (input, None) for ints."""
    changed: set[tuple[int, int | None]] = set()
    for i, (a, b) in enumerate(zip(first, args)):
        if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.dim() == b.dim():
            changed |= {(i, d) for d in range(a.dim()) if a.shape[d] != b.shape[d]}
        elif _is_int(a) and _is_int(b) and a != b:
            changed.add((i, None))
    return changed


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _reads_computed_floats(gm: torch.fx.GraphModule, host: set[torch.fx.Node]) -> bool:
    """Whether the graph reads a float (`.item()`, a symbol) out of a tensor that is not a
    host value (`host`: the graph's `host_nodes`)."""
    return any(n.target is aten._local_scalar_dense.default
               and isinstance(n.meta.get("val"), torch.SymFloat)
               and n.args[0] not in host for n in gm.graph.nodes)


def _read_on_host(gm: torch.fx.GraphModule, count: int, host: set[torch.fx.Node]) -> set[int]:
    """The positions among the call's arguments (after `count` state tensors) of the host
    inputs (0-d CPU tensors): the wrapper reads them on the host, kernels never touch them."""
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    return {i - count for i, n in enumerate(placeholders) if n in host}


def _is_cpu_scalar(t: torch.Tensor) -> bool:
    """A 0-d CPU float tensor: how frontends pass a float they do not specialise."""
    return (t.dim() == 0 and t.device.type == "cpu" and t.dtype.is_floating_point
            and not t.requires_grad)


def _fakes(inputs: list, dynamic: set[tuple[int, int | None]], state: list[torch.Tensor],
           scalars: dict[int, Any], strides: set[tuple[int, int]] = frozenset()
           ) -> tuple[list, list]:
    """Fakes of the inputs (symbols where `dynamic` says, and strides of their own where
    `strides` does; the inputs of `scalars` with their value known) and of the state (static),
    in one mode.

    Each symbolic size gets a symbol of its own (no duck sizing): sizes equal in this call
    (a batch of 4 and a length of 4, an int argument equal to a dim) are not assumed equal, or
    the version would be guarded on their equality and the next call compile another; where
    the graph needs them equal, its trace guards that."""
    shape_env = ShapeEnv(duck_shape=False)
    mode = FakeTensorMode(shape_env, allow_non_fake_inputs=True)
    fakes = []
    for i, value in enumerate(inputs):
        if isinstance(value, torch.Tensor):
            dims = tuple(sorted(d for j, d in dynamic if j == i and d is not None))
            own = tuple(sorted(d for j, d in strides if j == i))
            fake = mode.from_tensor(value, dynamic_dims=dims, dynamic_strides=own)
            if i in scalars:
                fake.constant = value.detach().clone()
            value = fake
        elif _is_int(value) and (i, None) in dynamic:
            # A symbolic int a frontend passes is any int (0 and 1 included, as the frontend's
            # symbol is): what the graph assumes of it (`n >= 0` where it is a size) its trace
            # guards, so one version serves every value that meets that.
            value = shape_env.create_symint(value, SizeOrigin(None, "value"))
        fakes.append(value)
    return fakes, [mode.from_tensor(t) for t in state]


def _untraceable_write(error: Exception) -> bool:
    """Whether torch (a fake kernel, functionalization) refused a write that eager makes but a
    functional trace cannot express, or a `view` of a tensor written through a transposed view
    (the functional trace lays the written tensor out as that view, eager keeps its strides):
    such graphs run as they came."""
    return any(m in str(error) for m in ("more than one element of the written-to tensor",
                                         "was an as_strided() call", "as_strided_scatter:",
                                         "view size is not compatible with input tensor's",
                                         "Cannot view a tensor with shape"))


def _trace(gm: torch.fx.GraphModule, state_names: list[str], state: list, inputs: list,
           table: dict, moved: list[int] | None = None,
           fresh: list[tuple[int, int]] | None = None) -> torch.fx.GraphModule:
    """`gm` as an aten graph of (*state, *inputs), functional: no writes but copies into inputs
    at the end (views stay views, lowered as index maps, not the copies that removing views too
    would make).

    The first trace is not functionalized: torch's functionalization asks a composite op such as
    `linear` for concrete sizes, which would specialise every symbol. Decompositions run beneath
    functionalization, so one that writes in place (batch norm's running statistics) leaves a
    mutation in a functionalized trace; tracing it again removes it. A trace functionalization
    cannot take (prims with aliasing outputs, which decompositions made) is kept as it is:
    lowering handles writes into temporaries, or runs the graph eagerly. An output that is a
    view of an input the graph writes into (`a.mul_(2); return a`) is made that view of the
    input again after functionalization, so later writes through it reach the input.

    `moved` gets the positions (as `_written_inputs` gives them) of the inputs whose version
    counter the graph's own writes move: those eager's in-place ops move (a write through
    `x.data` moves none), before functionalization's copies back move every written one's.
    `fresh` gets the positions among the flat outputs of those that alias an input but share
    no input's version counter (`x.data`, a view of it), with their counters' values: the
    aten graph has `detach` for `.data`, whose result shares the input's counter.
    """
    count = len(state)
    versions = [_version(t) for t in (*state, *inputs)]

    def call(*args: Any) -> Any:
        # functional_call's swap, with the forward called rather than the module (whose call
        # would run global module hooks on fakes)
        with torch.nn.utils.stateless._reparametrize_module(
                gm, dict(zip(state_names, args[:count]))):
            out = gm.forward(*args[count:])
        if fresh is not None:
            fresh.extend(_fresh_aliases(tree_flatten(out)[0], args))
        return out

    metadata = [_metadata(t) for t in (*state, *inputs)]
    try:
        first = traced = _aten_trace(call, table)(*state, *inputs)
    except (RuntimeError, ValueError) as e:  # (symbolic sizes: a view's ValueError)
        # a write into an overlapping view (an expanded input's `fill_`), which eager allows
        # but fake kernels refuse; or a `view` of a result a decomposition lays out otherwise
        # than the kernel the graph's trace ran (as `triu`'s did before `_laid_out_afresh`)
        if not _untraceable_write(e):
            raise
        raise InputMetadataChange(f"a write a functional trace cannot follow: {e}") from e
    if moved is not None:
        moved.extend(i - count for i, t in enumerate((*state, *inputs))
                     if versions[i] is not None and _version(t) != versions[i])
    for node in first.graph.nodes:
        if _changes_input_metadata(node):
            raise InputMetadataChange(f"{node.target} changes the sizes or strides of an input")
        # the written tensor and every view it was taken from (a row of an overlapping
        # `as_strided` view does not overlap itself, but its base does)
        written = [n.meta.get("val") for n in tree_flatten(node.args[:1])[0]
                   for n in _view_chain(n)] if _writes_in_place(node) else []
        if any(isinstance(val, torch.Tensor) and _may_overlap_hinted(val) for val in written):
            raise InputMetadataChange(f"{node.target} writes into a view whose elements overlap "
                                      "(unfold, as_strided, expand): eager updates a shared "
                                      "element once per view element")
        if _writes_in_place(node) and _reads_what_it_writes_elsewhere(node):
            raise InputMetadataChange(f"{node.target} reads another view of the memory it "
                                      "writes: eager reads some elements after writing them")
    if [_metadata(t) for t in (*state, *inputs)] != metadata:
        # an `out=` argument of another size, resized by the op (fake kernels resize the fakes)
        raise InputMetadataChange("the graph resizes an input (an out= argument of another size)")
    if _views_storage_of_written_tensor(first):
        raise InputMetadataChange("an as_strided view of a tensor the graph writes into: eager's "
                                  "reads the tensor's storage, a functional trace a new tensor")
    writes = _writes_in_place
    for _ in range(3):
        if not any(writes(node) for node in traced.graph.nodes):
            break
        fn = torch.func.functionalize(_AtenInterpreter(traced).run, remove="mutations")
        try:
            traced = _aten_trace(fn, table)(*state, *inputs)
        except (RuntimeError, ValueError) as e:  # (symbolic sizes: a view's ValueError)
            if _untraceable_write(e):
                # a copy back into an input whose elements overlap (expanded, symbolic sizes),
                # or a write through an `as_strided` view functionalization cannot replay
                raise InputMetadataChange(f"a write functionalization cannot follow: {e}") from e
            if "alias annotations" not in str(e) and "INTERNAL ASSERT" not in str(e):
                raise
            # prims with aliasing outputs; or torch's own failure (a `resize_` of a temporary
            # to symbolic sizes): the trace as it is, whose writes lowering handles
            break
        writes = _writes_into_non_input
    if traced is first:
        return traced
    views = _views_of_written_inputs(first)
    # Functionalized, such an output is a copy: make it the same views of the input again.
    if views and not _outputs_as_views(traced, views):
        return first  # not views of what is copied into an input: lowering runs it eagerly
    if not _outputs_laid_out_as(traced, first, views) and not views:
        return traced
    return _aten_trace(_AtenInterpreter(traced).run, table)(*state, *inputs)


def _version(t: Any) -> int | None:
    """A tensor's version counter; None for anything else and for inference tensors (which
    have none)."""
    if not isinstance(t, torch.Tensor) or t.is_inference():
        return None
    return t._version


def _metadata(t: Any) -> Any:
    """A tensor's sizes, strides and storage offset: ints, and symbols as their nodes, which
    compare by identity (comparing symbols would guard, and their text changes as guards
    replace one by another)."""
    if not isinstance(t, torch.Tensor):
        return None
    return [n.node if isinstance(n, torch.SymInt) else n
            for n in (*t.shape, *t.stride(), t.storage_offset())]


def _may_overlap_hinted(t: torch.Tensor) -> bool:
    """`may_overlap`, deciding symbolic sizes and strides by this example's values (a graph
    found to write into an overlapping view runs as it came for every call, which is right
    whatever the sizes). Where this example's do not overlap, symbolic ones are guarded not
    to (each dim's stride, smallest first by the example, passes the farthest element of the
    dims below it): a later call whose do (a stride made a symbol of its own, an
    `as_strided` view by an int argument) fails the version's guard and gets its own."""
    sizes, strides = [_hint(n) for n in t.shape], [_hint(st) for st in t.stride()]
    if not all(isinstance(n, int) for n in (*sizes, *strides)):
        return False  # sizes known only from data: not decided
    if strides_overlap(sizes, strides):
        return True
    if all(isinstance(n, int) for n in (*t.shape, *t.stride())):
        return False
    dims = []
    for size, stride, size_hint, stride_hint in zip(t.shape, t.stride(), sizes, strides):
        if size_hint > 1:
            dims.append((stride_hint, size, stride))
        elif not size <= 1:  # (each comparison of symbols a guard, true for this example)
            return True
    reach: Any = 0
    for _, size, stride in sorted(dims, key=lambda d: d[0]):
        if not stride > reach:
            return True
        reach = reach + stride * (size - 1)
    return False


class InputMetadataChange(Exception):
    """The graph changes an input's sizes or strides in place (`x.t_()`, `x.unsqueeze_(0)`):
    the caller's tensor must change too, which a functional trace cannot express; or it writes
    into a view whose elements overlap, which a functional trace computes differently."""


def _changes_input_metadata(node: torch.fx.Node) -> bool:
    return (node.op == "call_function" and isinstance(node.target, torch._ops.OpOverload)
            and torch.Tag.inplace_view in node.target.tags and bool(node.args)
            and getattr(node.args[0], "op", None) == "placeholder")


def _reads_what_it_writes_elsewhere(node: torch.fx.Node) -> bool:
    """Whether in-place `node` reads, through a view laid out otherwise, memory of a tensor it
    writes (`_reads_another_view_of`)."""
    vals = [getattr(a, "meta", {}).get("val") for a in _written_args(node)]
    return _reads_another_view_of(vals, [a.meta.get("val") for a in node.all_input_nodes])


def _reads_another_view_of(written: list[Any], read: list[Any]) -> bool:
    """Whether tensors `read` include another view of memory of a tensor in `written`, laid out
    otherwise (`x[:, 1:3].mul_(x[:, :2])`, which eager allows for views not dense: its kernel
    then reads `x[:, 1]` after writing it, where a functional trace, and a decomposition into
    out-of-place ops, read its old value)."""
    return any(isinstance(out, torch.Tensor) and isinstance(val, torch.Tensor)
               and val is not out and torch._C._is_alias_of(val, out)
               and _metadata(val) != _metadata(out) and _share_elements(val, out)
               for out in written for val in read)


def _share_elements(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Whether views `a` and `b` of one storage share an element (symbolic layouts, views of
    other dtypes, and more than `_ELEMENTS_COMPARED` elements: assumed to). Circular padding
    copies columns of its output into others, interleaved in memory but never the same."""
    layouts = [(*t.shape, *t.stride(), t.storage_offset()) for t in (a, b)]
    if not all(isinstance(n, int) for layout in layouts for n in layout) \
            or a.element_size() != b.element_size():
        return True
    if a.numel() == 0 or b.numel() == 0:
        return False
    if a.numel() + b.numel() > _ELEMENTS_COMPARED:
        return True
    with torch._C.DisableTorchFunction(), torch._C._DisableTorchDispatch():  # (real tensors)
        return bool(torch.isin(_positions(a), _positions(b)).any())


_ELEMENTS_COMPARED = 1 << 22


def _positions(t: torch.Tensor) -> torch.Tensor:
    """The storage positions of `t`'s elements (a static layout)."""
    positions = torch.tensor(t.storage_offset())
    for size, stride in zip(t.shape, t.stride()):
        positions = positions.unsqueeze(-1) + torch.arange(size) * stride
    return positions.flatten()


def _views_of_written_inputs(gm: torch.fx.GraphModule) -> list[int]:
    """The positions of the outputs that are views of (or are) an input the graph writes into:
    a write made later through such an output must reach the input."""
    written = [base for n in gm.graph.nodes if _writes_in_place(n) and n.args
               and (base := _view_base(n.args[0])) is not None]
    outputs = tree_flatten(next(iter(reversed(gm.graph.nodes))).args)[0]
    return [i for i, o in enumerate(outputs) if isinstance(o, torch.fx.Node)
            and isinstance(o.meta.get("val"), torch.Tensor)
            and any(torch._C._is_alias_of(o.meta["val"], w.meta["val"]) for w in written)]


_ROW_MAJOR_PRODUCTS = (aten.mm.default, aten.addmm.default, aten.bmm.default)


def _views_storage_of_written_tensor(gm: torch.fx.GraphModule) -> bool:
    """Whether the graph takes an `as_strided` view (`unfold`'s too) of (a view of) a tensor it
    writes into, an input or one it computed, or of a value computed from one: functionalized,
    the view is taken of the tensor's new value, a tensor of its elements alone laid out as the
    functional trace chose (a write through a transposed slice leaves it transposed), where
    eager's counts from the start of the tensor's storage, in its own layout; and a value made
    from it may follow that layout (`_to_copy` keeps its input's strides), where the view's
    strides, traced before, follow eager's. A tensor only rescaled in place
    (`_rescales_a_fresh_tensor`) keeps its layout functionalized and is not counted as written;
    a matrix product's result is laid out afresh (row-major, whatever its operands' layouts),
    so what is made from it is not made from a write (a Longformer's next layer)."""
    def base(node: Any) -> Any:  # through views and writes (which return what they write)
        while isinstance(node, torch.fx.Node):
            if _is_view(node):
                node = node.args[0]
            elif _writes_in_place(node) and (targets := _written_args(node)):
                node = targets[0]
            else:
                break
        return node if isinstance(node, torch.fx.Node) else None

    written = {base(w) for n in gm.graph.nodes
               if _writes_in_place(n) and not _rescales_a_fresh_tensor(n)
               for w in _written_args(n)} - {None}
    if not written:
        return False
    made_from_written = set()
    for n in gm.graph.nodes:  # (in order: a node's inputs come before it)
        if n in written or n.target not in _ROW_MAJOR_PRODUCTS and any(
                i in made_from_written for i in n.all_input_nodes):
            made_from_written.add(n)
    return any(getattr(n.target, "overloadpacket", None) is aten.as_strided
               and n.args[0] in made_from_written for n in gm.graph.nodes)


def _rescales_a_fresh_tensor(node: torch.fx.Node) -> bool:
    """Whether `node` is a pointwise in-place op whose other arguments are numbers (Longformer's
    `query /= math.sqrt(head_dim)`), written into a tensor the graph computed (or a view of
    one), both contiguous and alone in their storage: functionalized, its out-of-place form
    follows that layout, so an `as_strided` view of the result reads the elements eager's
    reads."""
    others = (*node.args[1:], *node.kwargs.values())
    if torch.Tag.pointwise not in getattr(node.target, "tags", ()) or any(
            isinstance(a, torch.fx.Node) for a in tree_flatten(others)[0]):
        return False
    root = node.args[0]
    while isinstance(root, torch.fx.Node) and (_writes_in_place(root) or _is_view(root)):
        root = root.args[0]  # (a write returns the tensor it wrote)
    return isinstance(root, torch.fx.Node) and root.op == "call_function" and all(
        fills_its_storage_densely(v) and v.is_contiguous()
        for v in (node.args[0].meta.get("val"), root.meta.get("val")))


def _view_chain(node: Any) -> list[torch.fx.Node]:
    """`node` and the nodes it is a view of, through view ops."""
    chain = []
    while isinstance(node, torch.fx.Node):
        chain.append(node)
        if not _is_view(node):
            break
        node = node.args[0]
    return chain


def _view_base(node: Any) -> torch.fx.Node | None:
    """The input `node` is (or is a view of, through view ops), else None."""
    while isinstance(node, torch.fx.Node) and _is_view(node):
        node = node.args[0]
    return node if isinstance(node, torch.fx.Node) and node.op == "placeholder" else None


def _outputs_as_views(gm: torch.fx.GraphModule, positions: list[int]) -> bool:
    """Rewrites each output of a functional trace at `positions` — views of a value the trace
    copies into an input at its end — as the same views of that input after the copy. Returns
    False (leaving `gm` unchanged) when one of them is not such a view."""
    output = next(iter(reversed(gm.graph.nodes)))
    outputs, spec = tree_flatten(output.args[0])
    copies = {n.args[1]: n for n in gm.graph.nodes
              if n.target is aten.copy_.default and n.args[0].op == "placeholder"}
    chains = {}
    for i in positions:
        chain, node = [], outputs[i]
        while isinstance(node, torch.fx.Node) and node not in copies and _is_view(node):
            chain.append(node)
            node = node.args[0]
        if node not in copies:
            return False
        chains[i] = (copies[node], chain[::-1])
    with gm.graph.inserting_before(output):
        for i, (base, chain) in chains.items():
            for view in chain:
                base = gm.graph.call_function(view.target, (base, *view.args[1:]), view.kwargs)
            outputs[i] = base
    output.args = (tree_unflatten(outputs, spec),)
    gm.recompile()
    return True


def _outputs_laid_out_as(gm: torch.fx.GraphModule, reference: torch.fx.GraphModule,
                         skip: list[int]) -> bool:
    """Rewrites each output of the functional trace `gm` that eager (the first trace,
    `reference`) lays out densely in another order as a copy in that order: a write into a
    temporary keeps its layout (`y = a.t() * 2; y.scatter_(...)`; `x[2:] = v` on a transposed
    input), where the functional op (`scatter`, `slice_scatter`) gives a contiguous result.
    Returns whether it rewrote one."""
    output = next(iter(reversed(gm.graph.nodes)))
    outputs, spec = tree_flatten(output.args[0])
    wanted = tree_flatten(next(iter(reversed(reference.graph.nodes))).args[0])[0]
    orders = {i: order for i, (node, want) in enumerate(zip(outputs, wanted))
              if i not in skip and (order := _other_dense_order(node, want)) is not None}
    # An output that is a view of another output copied here is that view of the copy: the two
    # alias in eager (`y = ...; return y, y[0]`: a write into one shows in the other).
    bases = {outputs[i] for i in orders}
    chains = {}  # output -> (the copied output it is a view of, the views from that one)
    for i, node in enumerate(outputs):
        chain = []
        while isinstance(node, torch.fx.Node) and _is_view(node):
            chain.append(node)
            node = node.args[0]
            if node in bases and i not in skip:  # the deepest such output is the one copied
                chains[i] = (node, chain[::-1])
    copied: dict[torch.fx.Node, torch.fx.Node] = {}  # an output's node -> its copy
    with gm.graph.inserting_before(output):
        for i, order in orders.items():
            node = outputs[i]
            if i in chains or node in copied:
                continue
            permuted = gm.graph.call_function(aten.permute.default, (node, order))
            packed = gm.graph.call_function(aten.clone.default, (permuted,),
                                            {"memory_format": torch.contiguous_format})
            inverse = [order.index(d) for d in range(len(order))]
            copied[node] = gm.graph.call_function(aten.permute.default, (packed, inverse))
        for i, node in enumerate(outputs):
            if i in chains and chains[i][0] in copied:
                base, chain = chains[i]
                node = copied[base]
                for view in chain:
                    node = gm.graph.call_function(view.target, (node, *view.args[1:]),
                                                  view.kwargs)
                outputs[i] = node
                orders.setdefault(i, None)
            elif node in copied:
                outputs[i] = copied[node]
    if orders:
        output.args = (tree_unflatten(outputs, spec),)
        gm.recompile()
    return bool(orders)


def _other_dense_order(node: Any, want: Any) -> list[int] | None:
    """The dims of `want`'s value, outermost first, when it is dense and its strides differ
    from `node`'s value's (at dims of size above 1); else None."""
    got, wanted = (n.meta.get("val") if isinstance(n, torch.fx.Node) else None
                   for n in (node, want))
    if not (isinstance(got, torch.Tensor) and isinstance(wanted, torch.Tensor)) or \
            got.layout != torch.strided or wanted.layout != torch.strided:
        return None
    sizes = [_hint(n) for n in wanted.shape]
    strides, got_strides = [_hint(s) for s in wanted.stride()], [_hint(s) for s in got.stride()]
    if sizes != [_hint(n) for n in got.shape] or all(
            a == b for a, b, n in zip(strides, got_strides, sizes) if n != 1):
        return None
    order = sorted(range(len(sizes)), key=lambda d: -strides[d])
    step = 1
    for d in reversed(order):
        if sizes[d] != 1 and strides[d] != step:
            return None
        step *= sizes[d]
    return order


def _is_view(node: torch.fx.Node) -> bool:
    """Whether the node's result is a view of its first argument: also an item of a list of
    views (`split`, `chunk`, `unbind`: their `getitem`), whose first argument is that list."""
    if node.op != "call_function":
        return False
    if node.target is operator.getitem:
        return isinstance(node.args[0], torch.fx.Node) and _is_view(node.args[0])
    return returns_a_view(node.target)


class _AtenInterpreter(torch.fx.Interpreter):
    """Runs a traced graph, with the prims that functionalization cannot take (their outputs
    alias their inputs) as the aten ops they equal. Autocast is off: the graph already holds
    the casts of the blocks it was traced in (traced again inside an autocast block open
    around the call, an `autocast(enabled=False)` block's matmul was cast to bfloat16)."""

    def run(self, *args: Any, **kwargs: Any) -> Any:
        with torch._C._DisableAutocast():
            return super().run(*args, **kwargs)

    def call_function(self, target: Any, args: tuple, kwargs: dict) -> Any:
        if target is torch.ops.prims.broadcast_in_dim.default:
            x, shape, dims = args
            for d in range(len(shape)):
                if d not in dims:
                    x = x.unsqueeze(d)
            return x.expand(shape)
        if target is torch.ops.prims.copy_to.default:
            return args[0].copy_(args[1])
        return super().call_function(target, args, kwargs)


def _writes_in_place(node: torch.fx.Node) -> bool:
    schema = getattr(node.target, "_schema", None)
    return node.op == "call_function" and schema is not None and schema.is_mutable


def _written_args(node: torch.fx.Node) -> list[Any]:
    """The tensors an in-place op writes into: `self` of `mul_`, `out` of `neg.out`, each
    tensor of `_foreach_mul_`'s list."""
    return _written_values(node.target._schema, node.args, node.kwargs)


def _written_values(schema: torch.FunctionSchema, args: tuple, kwargs: dict) -> list[Any]:
    """The arguments `args` and `kwargs` of an op of `schema` that it writes into."""
    found = [kwargs[a.name] if a.name in kwargs else args[i]
             for i, a in enumerate(schema.arguments)
             if a.alias_info is not None and a.alias_info.is_write
             and (a.name in kwargs or i < len(args))]
    return [t for arg in found for t in (arg if isinstance(arg, (list, tuple)) else [arg])]


def _writes_into_non_input(node: torch.fx.Node) -> bool:
    """An in-place op other than functionalization's final copies into inputs."""
    if not _writes_in_place(node):
        return False
    return not (node.target is aten.copy_.default and node.args[0].op == "placeholder")


def _reads_storage_offsets(gm: torch.fx.GraphModule) -> bool:
    """Whether the graph views storage at absolute offsets (`as_strided`), which then depend on
    where each input starts in its storage."""
    return any(n.op == "call_function" and getattr(n.target, "overloadpacket", None) in (
        aten.as_strided, aten.as_strided_, aten.as_strided_copy, aten.as_strided_scatter)
        for n in gm.graph.nodes)


def _written_inputs(gm: torch.fx.GraphModule, count: int) -> list[int]:
    """The positions among the call's arguments (after `count` state tensors; -1 and lower:
    the state's) of the inputs a functional trace copies results into."""
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    written = {placeholders.index(n.args[0]) - count for n in gm.graph.nodes
               if _writes_in_place(n) and n.args and n.args[0] in placeholders}
    return sorted(written)


def _shares_memory(state: list, args: Any, written: list[int]) -> bool:
    """Whether a tensor in `written` (positions in `args`, negative ones in `state`) shares its
    storage with another tensor of `state` or `args`."""
    if not written:
        return False
    tensors = [*state, *args]
    ptrs = [t.untyped_storage().data_ptr() if isinstance(t, torch.Tensor) else 0
            for t in tensors]
    return any(ptrs[i + len(state)] != 0 and ptrs.count(ptrs[i + len(state)]) > 1
               for i in written)


def _interpreted() -> bool:
    from .triton_helpers import INTERPRETED  # (imports triton: not before it is needed)

    return INTERPRETED


def generate(aten_gm: torch.fx.GraphModule) -> Callable:
    """Lower, schedule and generate one aten graph; returns `call(*args)`."""
    out_spec = getattr(aten_gm, "_out_spec", None)
    aten_gm, constants = _lift_constants(aten_gm)
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

    def run(*args: Any) -> Any:
        outs = call([*args, *values])
        return tree_unflatten(outs, out_spec) if out_spec is not None else outs
    run.source = source  # type: ignore[attr-defined]
    return run


def _lift_constants(
        gm: torch.fx.GraphModule) -> tuple[torch.fx.GraphModule, dict[str, torch.Tensor]]:
    """A copy of `gm` (with its ShapeEnv, whose hints lowering reads) whose get_attr nodes
    (tensors the trace saw as constants) are trailing placeholders, and those tensors by
    placeholder name. `gm` stays runnable as it was."""
    graph = torch.fx.Graph()
    value, old_output = graph.graph_copy(gm.graph, {}, return_output_node=True)
    graph.output(value).meta = dict(old_output.meta)
    graph._codegen = gm.graph._codegen
    shape_env = getattr(gm, "shape_env", None)
    gm = torch.fx.GraphModule(gm, graph)
    gm.shape_env = shape_env
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
    return gm, constants


def _load(source: str) -> Any:
    data = source.encode()  # (Python reads source files as UTF-8)
    digest = hashlib.sha256(data).hexdigest()[:20]
    folder = Path(config.cache_dir) / "modules"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"g_{digest}.py"
    if not path.exists() or path.read_bytes() != data:  # (a file damaged on disk: anew)
        # Named by process and thread: another thread may be writing the same module.
        tmp = path.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
        tmp.write_bytes(data)
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
    templates = [s for s in steps if isinstance(s, TemplateKernel)]
    counters["kernels"] += len(kernels) + len(templates)
    counters["fused_buffers"] += sum(len(k.nodes) for k in kernels if len(k.nodes) > 1)
    counters["lowered_ops"] += graph.lowered_ops
    externs = [s for s in steps if not isinstance(s, (Kernel, TemplateKernel))
               and s.parent is None]
    fallbacks = [s for s in externs if s.fallback]
    counters["fallbacks"] += len(fallbacks)
    if fallbacks:  # ops without a lowering (or whose lowering gave up) run by aten: say which
        log.info("inductor_lite: %d op(s) run as aten fallbacks: %s", len(fallbacks),
                 ", ".join(sorted({str(s.target) for s in fallbacks})))
    counters["extern_calls"] += sum(1 for s in externs if not s.fallback)


def _meta(value: Any) -> Any:
    """A tensor as a meta tensor of its sizes, strides and layout; anything else as it is."""
    if not isinstance(value, torch.Tensor):
        return value
    if value.layout is not torch.strided:
        return value.detach().to("meta")
    # (a quantized dtype has no meta tensors: its sizes and strides are what is compared)
    return torch.empty_strided([_hint(n) for n in value.shape], [_hint(n) for n in value.stride()],
                               dtype=torch.float32 if value.is_quantized else value.dtype,
                               device="meta")


def _hint(value: Any) -> Any:
    """A symbolic int as the int it stands for in this example (no guard recorded)."""
    return value.node.hint if isinstance(value, torch.SymInt) else value


def _guard(fakes: list, shape_env: ShapeEnv, scalars: dict[int, Any], state: list | None = None,
           written: list[int] | None = None, offsets: bool = False) -> Callable[[tuple], bool]:
    """What the trace assumed of the arguments: the same ints (or ints that bind symbols) and
    other constants (floats, bools); tensors of the same dtype, device, requires_grad (and
    grad mode, if one or a tensor of `state` requires grad), conjugate and negative bits, with
    sizes and strides equal to the fakes' (ints, or expressions in the symbols) and, with
    `offsets`, the same storage offsets; the values of the 0-d tensors in `scalars`; that the
    inputs `written` into share no memory with another (`_shares_memory`); and the shape guards
    the trace recorded. Generated as straight-line Python, as it runs on every call."""
    lines = [f"if len(args) != {len(fakes)}: return False"]
    env: dict[str, Any] = {"Tensor": torch.Tensor, "grad_enabled": torch.is_grad_enabled,
                           "same_float": _same_float}
    names: dict[sympy.Symbol, str] = {}  # symbol -> the local variable holding its value

    def value_of(expr: sympy.Expr) -> str:
        if expr.is_Integer:
            return str(int(expr))
        if expr in names:
            return names[expr]
        if all(a.is_Add or a.is_Mul or a.is_Integer or a.is_Symbol
               for a in sympy.preorder_traversal(expr)):  # plain arithmetic: written inline
            inline = expr.xreplace({s: sympy.Symbol(names[s]) for s in expr.free_symbols})
            return f"({inline})"
        return lambdified(expr, names, env)

    later = []  # values that mention symbols: compared once every symbol is bound
    for i, v in enumerate(fakes):
        if isinstance(v, torch.SymInt):
            if symbol_expr(v).is_Symbol and symbol_expr(v) not in names:
                names[symbol_expr(v)] = f"a{i}"
                lines.append(f"a{i} = args[{i}]")
            else:  # another int of the same symbol (equal ints share one), or an expression
                later.append((f"args[{i}]", symbol_expr(v)))
        elif _is_int(v):
            lines.append(f"if type(args[{i}]) is not int or args[{i}] != {v}: return False")
        elif not isinstance(v, torch.Tensor):
            # Any other argument (a float, a bool, None) was a constant of the trace.
            env[f"c{i}"] = v
            differs = (f"not same_float(args[{i}], c{i})" if isinstance(v, float)
                       else f"args[{i}] != c{i}")
            lines.append(f"if type(args[{i}]) is not type(c{i}) or {differs}: return False")
    for i, t in enumerate(fakes):
        if not isinstance(t, torch.Tensor):
            continue
        env[f"dtype{i}"] = t.dtype  # dtypes are singletons
        # get_device() is cheaper than .device: -1 on the CPU, the index on a GPU; -1 on the
        # meta device too, which kernels cannot run on.
        index = -1 if t.device.type == "cpu" else t.device.index or 0
        device = (f"t.get_device() != {index}" if t.device.type in ("cpu", "cuda")
                  else f"t.device != device{i}")
        if t.device.type == "cpu":
            device = f"({device} or t.is_meta)"
        env[f"device{i}"] = t.device
        lines += [f"t = args[{i}]",
                  f"if not isinstance(t, Tensor) or t.dtype is not dtype{i} or {device}"
                  f" or t.requires_grad is not {t.requires_grad}"
                  f" or t.is_conj() is not {t.is_conj()} or t.is_neg() is not {t.is_neg()}"
                  ": return False",
                  f"size{i}, stride{i} = t.shape, t.stride()"]
        if offsets:
            lines.append(f"if t.storage_offset() != {int(t.storage_offset())}: return False")
        for what, values in (("size", t.shape), ("stride", t.stride())):
            exprs = [symbol_expr(n) if isinstance(n, torch.SymInt) else sympy.Integer(n)
                     for n in values]
            if all(e.is_Integer for e in exprs):
                lines.append(f"if {what}{i} != {tuple(int(e) for e in exprs)}: return False")
                continue
            lines.append(f"if len({what}{i}) != {len(exprs)}: return False")
            for d, expr in enumerate(exprs):
                if expr.is_Symbol and expr not in names:
                    names[expr] = f"{what}{i}_{d}"
                    lines.append(f"{what}{i}_{d} = {what}{i}[{d}]")
            later.append((f"{what}{i}", exprs))
    for variable, expected in later:
        text = (value_of(expected) if isinstance(expected, sympy.Expr)
                else "(" + "".join(f"{value_of(e)}, " for e in expected) + ")")
        lines.append(f"if {variable} != {text}: return False")
    for symbol, name in names.items():  # what the trace assumed of each symbol's range
        bounds = shape_env.var_to_range.get(symbol)
        if bounds is not None and bounds.lower.is_finite:
            lines.append(f"if {name} < {int(bounds.lower)}: return False")
        if bounds is not None and bounds.upper.is_finite:
            lines.append(f"if {name} > {int(bounds.upper)}: return False")
    for i, value in scalars.items():
        env[f"scalar{i}"] = value
        lines.append(f"if not same_float(args[{i}].item(), scalar{i}): return False")
    if written:
        env.update(shares_memory=_shares_memory, state=state or [], written=written)
        lines.append("if shares_memory(state, args, written): return False")
    if any(t.requires_grad for t in [*fakes, *(state or [])] if isinstance(t, torch.Tensor)):
        lines.append(f"if grad_enabled() is not {torch.is_grad_enabled()}: return False")
    guards = [g.expr for g in shape_env.guards]
    missing = {s for g in guards for s in g.free_symbols} - set(names)
    if missing:
        raise RuntimeError(f"shape guards mention symbols no input binds: {sorted(missing, key=str)}")
    if guards:
        # A guard may divide by a symbol (`Eq(12 % s0, 0)` of `x.view(n, -1)` with n an int
        # argument, any int): sympy's order of the terms is not the trace's, which ruled out 0
        # first (`Ne(s0, 0)`). A value the guards cannot be computed for (a divisor 0, a math
        # domain error) is not one the trace saw: not this version's.
        lines += ["try:", f"    return bool({value_of(sympy.And(*guards))})",
                  "except (ArithmeticError, ValueError):", "    return False"]
    else:
        lines.append("return True")
    source = "def check(args):\n" + "".join(f"    {line}\n" for line in lines)
    exec(compile(source, "<inductor_lite guard>", "exec"), env)
    env["check"].source = source
    return env["check"]


def _same_float(a: float, b: float) -> bool:
    """Equal as constants of a trace: -0.0 is not 0.0 (1 / x tells them apart), NaN is NaN."""
    return (a == b and math.copysign(1.0, a) == math.copysign(1.0, b)) or (a != a and b != b)


def _unusual_inputs(tensors: list[torch.Tensor]) -> str:
    """What the kernels cannot take among `tensors`, in words ('' when nothing)."""
    kinds = []
    if any(t.layout is not torch.strided for t in tensors):
        kinds.append("sparse")
    if any(t.is_quantized for t in tensors):
        kinds.append("quantized")
    if any(t.device.type == "meta" for t in tensors):
        kinds.append("meta-device")
    return " and ".join(kinds)


def _node_tensors(gm: torch.fx.GraphModule) -> list[torch.Tensor]:
    """The tensors the nodes of `gm` hold as their values (a frontend's fakes)."""
    values = [n.meta.get("val", n.meta.get("example_value")) for n in gm.graph.nodes
              if n.op != "placeholder"]
    return [t for t in tree_flatten(values)[0] if isinstance(t, torch.Tensor)]


def _kind(t: Any) -> Any:
    if not isinstance(t, torch.Tensor):
        return None
    return t.layout, t.is_quantized, t.device.type == "meta"


def _layout_guard(inputs: list) -> Callable[[tuple], bool]:
    """The same tensor layouts (strided, sparse kinds), quantization and meta device in the
    same places."""
    kinds = [_kind(t) for t in inputs]
    return lambda args: len(args) == len(kinds) and all(
        _kind(a) == kind for a, kind in zip(args, kinds))
