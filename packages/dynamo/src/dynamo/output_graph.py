"""OutputGraph: the FX graph a trace builds, its inputs, and the guards that keep it valid.

While the interpreter runs, every tensor operation becomes a node here, computed at once on
fake tensors (fakecore) so that its result's metadata is known: the graph is the program's
tensor work, and the fake values are what the interpreter branches on. Graph inputs are the
frame's tensors, each a placeholder tied to its source; guards accumulate as values are read.
At the end, `finish` names the graph's outputs, drops dead nodes, and gathers the guard set:
what was read, the ShapeEnv's decisions, global state, and aliasing between tensor inputs.
"""

from __future__ import annotations

import functools
import inspect
import operator
import re
import types
from typing import Any

import torch
import torch.fx
import torch.utils._pytree as pytree

from dynamo.exc import NotAGraphValue, Unsupported
from dynamo.side_effects import SideEffects
from dynamo.sources import FloatTensorSource, described
from dynamo.variables.base import VariableTracker
from dynamo.variables.builtins import INPLACE_OPERATORS
from dynamo.variables.constant import ConstantVariable, is_literal, is_numpy_number, torch_number
from dynamo.variables.containers import (
    DictVariable,
    NamedTupleVariable,
    OpaqueValueVariable,
    SequenceVariable,
    SizeVariable,
    SliceVariable,
    TupleVariable,
    key_value,
    tuple_fields,
)
from dynamo.variables.contexts import enter_context, exit_context
from dynamo.variables.tensor import SymNodeVariable, TensorVariable, refuse_override
from fakecore import (
    DataDependentError,
    FakeTensor,
    FakeTensorMode,
    ShapeEnv,
    ShapeGuard,
    SizeOrigin,
    UnsupportedFakeOpError,
)
from fxtrace.printable import printable_args
from fxtrace.runtime_asserts import ASSERT_OPS, insert_runtime_asserts
from guards import (
    DistinctObjects,
    Equals,
    FiniteFloat,
    GlobalState,
    Guard,
    GuardSet,
    SameObject,
    Source,
    TensorMatch,
    TypeMatch,
    shape_guards,
)

_SYM = (torch.SymInt, torch.SymFloat, torch.SymBool)
# `hash()` of a tensor, however it is called (a method node's target is its name)
_HASHES = (hash, torch.Tensor.__hash__, "__hash__")


# torch's fused optimizer steps: each takes its learning rate as a float or as a tensor
_FUSED_STEPS = frozenset(getattr(torch, name) for name in (
    "_fused_adam_", "_fused_adamw_", "_fused_sgd_", "_fused_adagrad_") if hasattr(torch, name))

# foreach ops whose last argument is a list of scalars, or one tensor holding them
_SCALAR_LIST_OPS = frozenset(getattr(torch, name) for name in (
    "_foreach_addcdiv", "_foreach_addcdiv_", "_foreach_addcmul", "_foreach_addcmul_"))


# What the fake conversion and the tensor guard read of a real tensor (through its class), and
# how attributes are looked up
_TENSOR_METADATA = (
    "__getattribute__", "__class__", "dim", "ndim", "shape", "size", "stride",
    "storage_offset", "dtype", "device", "layout", "requires_grad", "is_leaf", "grad",
    "_base", "is_nested", "is_quantized", "is_sparse", "is_conj", "is_neg", "is_inference",
    "numel", "untyped_storage", "_version", "is_contiguous")


class OutputGraph:
    """The graph under construction, with its fake mode, inputs and guards."""

    def __init__(self, dynamic: bool | None, capture_scalar_outputs: bool = False,
                 symbolic_ints: bool = False,
                 automatic_dynamic: dict[Source, set[int]] | None = None,
                 dynamic_numbers: set[Source] | None = None,
                 dynamic_strides: dict[Source, set[int]] | None = None) -> None:
        self.graph = torch.fx.Graph()
        # Dims seen to change between calls, by source (automatic dynamic), dims whose strides
        # changed alone, and the ints and floats seen to change: compiled as symbols.
        self.automatic_dynamic = automatic_dynamic or {}
        self.dynamic_strides = dynamic_strides or {}
        self.dynamic_numbers = dynamic_numbers or set()
        self.capture_scalar_outputs = capture_scalar_outputs
        self.symbolic_ints = symbolic_ints  # ints from the frame become symbols
        # Duck sizing (equal sizes share a symbol) only under dynamic=True, as in torch.compile:
        # dims made dynamic because they changed (automatic dynamic) or marked are symbols of
        # their own, or two that happen to be equal at a recompilation (a batch of 4 and a
        # length of 4) would be guarded equal and recompile at the next call.
        self.shape_env = ShapeEnv(duck_shape=dynamic is True)
        self.fake_mode = FakeTensorMode(self.shape_env)
        self.dynamic = dynamic
        self.guards: list[Guard] = []
        self.wrapped: dict[Source, VariableTracker] = {}  # source -> tracker, read once
        # id -> (object, tracker) of the lists, dicts, sets and user objects read from the
        # frame: one object reached under two names is one tracker (a write through one shows
        # through the other; a config read through every layer is guarded once)
        self.containers: dict[int, tuple[Any, VariableTracker]] = {}
        self.inputs: list[tuple[Source, torch.Tensor, torch.fx.Node]] = []
        self._input_names: set[str] = set()  # the inputs' targets (found anew per input: quadratic)
        self._input_values: dict[Source, Any] = {}  # `inputs` by source, for `input_value`
        self._tensor_inputs: dict[int, tuple[Source, TensorVariable]] = {}
        self.constants: dict[str, torch.Tensor] = {}
        self.side_effects = SideEffects()
        self.initial_grad_mode = torch.is_grad_enabled()
        # autocast and inference-mode objects entered while tracing, and their enter nodes;
        # innermost last
        self.entered_contexts: list[tuple[Any, torch.fx.Node]] = []
        # Generator functions called for real: following their items failed in an earlier try
        # (why, by code).
        self.opaque_generators: dict[types.CodeType, str] = {}
        self.generators: list[Any] = []  # GeneratorVariables made in the trace
        self.frames: list[Any] = []  # the Translators running now, innermost last
        self.code_guarded: set[int] = set()  # ids of the functions whose `__code__` is guarded
        # id of a module method (unguarded) -> where its closure cells were first read: the
        # layers of a model share their class's methods, and one path guards the cells for all
        self.cells_sources: dict[int, Any] = {}
        self.float_items: list[tuple[torch.fx.Node, Any]] = []  # float inputs' .item(), symbol

    # ----- inputs and guards ------------------------------------------------------------------

    def add_guard(self, guard: Guard) -> None:
        self.guards.append(guard)

    def add_tensor_input(self, value: torch.Tensor, source: Source) -> TensorVariable:
        known = self._tensor_inputs.get(id(value))
        if known is not None:  # the same tensor under two names: one input, and a guard
            self.add_guard(SameObject(known[0], source))
            return known[1]
        # A subclass traced as a plain tensor: the metadata read below, by the fake conversion
        # and by the tensor guard, is read through its class, which must not answer for the
        # tensor (`dtype = property(...)`, `def dim(self)`)
        refuse_override(self, type(value), source, _TENSOR_METADATA,
                        f"{described(source)} as an input")
        if value.is_nested or value.is_quantized:
            kind = "nested" if value.is_nested else "quantized"
            raise Unsupported(f"{described(source)} is a {kind} tensor (only plain strided "
                              "tensors)")
        if value.layout is not torch.strided:
            raise Unsupported(f"{described(source)} is a {value.layout} tensor (only strided "
                              "tensors)")
        dims = self._dynamic_dims(value, source)
        strides = self._dynamic_strides(value, source)
        fake = self.fake_mode.from_tensor(value, dynamic_dims=dims, dynamic_strides=strides,
                                          source=source)
        node = self._placeholder(source, value, fake)
        # A dim of size 0 or 1 stays a number in the trace (specialised): its size is guarded;
        # so is a stride of 0 or 1.
        dims = tuple(d for d in dims if isinstance(fake.shape[d], torch.SymInt))
        strides = tuple(d for d in strides if isinstance(fake.stride(d), torch.SymInt))
        self.add_guard(TensorMatch.of(source, value, dynamic_dims=dims, dynamic_strides=strides))
        tracker = TensorVariable(node, fake, source)
        tracker.cls = type(value)
        self._tensor_inputs[id(value)] = (source, tracker)
        return tracker

    def input_value(self, source: Source) -> torch.Tensor | None:
        """The real tensor the graph input read through `source` has in this call."""
        return self._input_values.get(source)

    def add_int_input(self, value: int, source: Source) -> VariableTracker:
        """An int the graph takes as an input, as a symbol, 0 and 1 included: a loop counter
        handed to a resume function is 0, then 1, then more (a size made from it, `zeros(n)`,
        is guarded where its being 0 or 1 matters)."""
        sym = self.shape_env.create_symint(value, SizeOrigin(source, "value"),
                                           specialize_zero_one=False)
        if not isinstance(sym, torch.SymInt):
            self.add_guard(Equals(source, value))
            return ConstantVariable(value, source)
        node = self._placeholder(source, value, sym)
        self.add_guard(TypeMatch(source, int))
        return SymNodeVariable(node, sym)

    def add_float_input(self, value: float, source: Source) -> VariableTracker:
        """A float the graph takes as an input, as a symbol. As torch's frontend passes it:
        a 0-d float64 tensor made from the float at each call, and read back with `.item()` in
        the graph, so that a backend sees only tensor inputs."""
        tensor = torch.scalar_tensor(value, dtype=torch.float64)
        fake = self.fake_mode.from_tensor(tensor)
        node = self._placeholder(FloatTensorSource(source), tensor, fake)
        sym = self.shape_env.create_symfloat(value, SizeOrigin(source, "value"))
        self.fake_mode.bind_item(fake, sym)  # a backend lowering on the fakes reads the symbol
        item = self.graph.call_method("item", (node,))
        item.meta["example_value"] = sym
        self.float_items.append((item, sym.node.expr))
        self.add_guard(FiniteFloat(source))  # NaN and the infinities stay constants
        return SymNodeVariable(item, sym)

    def _placeholder(self, source: Source, value: Any, example: Any) -> torch.fx.Node:
        """A graph input for `value`, read through `source` on every call."""
        name = base = re.sub(r"\W+", "_", source.expr).strip("_") or "input"
        # FX names forward's parameters by target: sources that differ only in punctuation
        # (d[1] and d[-1], d['a.b'] and d['a_b']) need two names.
        taken = self._input_names
        number = 1
        while name in taken:
            number += 1
            name = f"{base}_{number}"
        # Placeholders stay together at the top, in the order the inputs were met.
        where = (self.graph.inserting_after(self.inputs[-1][2]) if self.inputs
                 else self.graph.inserting_before(next(iter(self.graph.nodes), None)))
        with where:
            node = self.graph.placeholder(name)
        node.meta["example_value"] = example
        node.meta["source"] = source
        self.inputs.append((source, value, node))
        taken.add(node.target)
        self._input_values.setdefault(source, value)
        return node

    def _dynamic_dims(self, value: torch.Tensor, source: Source) -> tuple[int, ...]:
        if self.dynamic is False:
            return ()
        n = value.dim()
        seen = self.automatic_dynamic.get(source, set())
        if isinstance(value, torch.nn.Parameter):
            # Static, as in torch.compile (weights), even under dynamic=True; but a source seen
            # with other sizes (the item of a loop over parameters, at a break in its body)
            # gets symbols for the dims that changed, as any tensor does, instead of a
            # compilation per parameter shape
            return tuple(sorted(d for d in seen if d < n))
        # marked dims counted from the end too (`-1`: the last); others are not this tensor's
        marked = {d % n for d in getattr(value, "_dynamo_dynamic_dims", ()) if -n <= d < n}
        static = {d % n for d in getattr(value, "_dynamo_static_dims", ()) if -n <= d < n}
        dims = range(n) if self.dynamic else sorted(d for d in marked | seen if d < n)
        return tuple(d for d in dims if d not in static)

    def _dynamic_strides(self, value: torch.Tensor, source: Source) -> tuple[int, ...]:
        """The dims whose strides were seen to change on their own (automatic dynamic): not
        those of size 1 (their strides are not guarded), nor of a tensor that requires grad
        (its fake would not be a view: a leaf of its own)."""
        if isinstance(value, torch.nn.Parameter) or self.dynamic is False or \
                value.requires_grad:
            return ()
        seen = self.dynamic_strides.get(source, set())
        return tuple(sorted(d for d in seen if d < value.dim() and value.shape[d] != 1))

    def constant_tensor(self, value: torch.Tensor) -> TensorVariable:
        """A tensor with no source (read from torch itself): a constant of the graph."""
        name = f"_tensor_constant{len(self.constants)}"
        self.constants[name] = value
        node = self.graph.get_attr(name)
        fake = self.fake_mode.from_tensor(value)
        node.meta["example_value"] = fake
        return TensorVariable(node, fake)

    # ----- nodes ------------------------------------------------------------------------------

    def call_function(self, fn: Any, args: list[VariableTracker],
                      kwargs: dict[str, VariableTracker]) -> VariableTracker:
        if fn in (torch.tensor, torch.as_tensor) and args and _symbols_in(args[0]):
            return self._tensor_of_symbols(args[0], kwargs)
        if fn in (torch.tensor, torch.as_tensor) and args and "dtype" not in kwargs:
            numbers = _numbers(args[0])
            if any(n.is_constant() and is_numpy_number(n.as_constant()) for n in numbers):
                # numpy scalars give their own dtype (`torch.tensor(np.float64(2))` is float64),
                # which the Python numbers the graph is given them as do not
                dtype = torch.tensor([n.as_constant() for n in numbers]).dtype
                kwargs = {**kwargs, "dtype": ConstantVariable(dtype)}
        if fn in _FUSED_STEPS and isinstance(kwargs.get("lr"), SymNodeVariable):
            # the op's `float lr` would read the symbol as a constant (a recompilation for
            # every new learning rate): its `Tensor lr` overload takes it as it changes
            lr = self.call_function(torch.scalar_tensor, [kwargs["lr"]],
                                    {"dtype": ConstantVariable(torch.float64)})
            kwargs = {**kwargs, "lr": lr}
        if fn in _SCALAR_LIST_OPS and len(args) == 4 and _tensors_only(args[3]):
            # torch's `_get_value` gives the optimizer's step count as a tensor when compiling,
            # so Adamax's foreach step passes 0-d tensors where the floats go: one tensor of
            # them is the op's other overload (torch.compile makes the step capturable instead)
            args = [*args[:3], self.call_function(torch.stack, [args[3]], {})]
        what = getattr(fn, "__name__", fn)
        node_args, node_kwargs = _node_args(args, kwargs, what)
        # (`(-2.0) ** y` printed as `-2.0 ** y` would be `-(2.0 ** y)`)
        node_args = printable_args(self.graph, fn, node_args, "example_value")
        node = self.graph.call_function(fn, node_args, node_kwargs)
        if fn is torch.nn.functional.batch_norm:
            args, kwargs = _momentum_as_hint(args, kwargs)
        value = self._run(lambda a, k: fn(*a, **k), args, kwargs, what, node)
        if getattr(fn, "autograd_function", None) is not None and _returns_an_input(args, value):
            # `ctx.mark_dirty` reached through a helper or a decorated `forward`, which
            # `function_apply` cannot see: the node would stand for its input, and be dropped
            raise Unsupported(f"{what}: its forward marks an input dirty (writes it in place)")
        try:
            return _same_tensor([*args, *kwargs.values()], value) or \
                _keep_outs(self.wrap_result(node, value), value, kwargs)
        except NotAGraphValue:
            if not node.users:
                self.graph.erase_node(node)
            raise

    def _tensor_of_symbols(self, data: VariableTracker,
                           kwargs: dict[str, VariableTracker]) -> VariableTracker:
        """`torch.tensor(n)` or `torch.as_tensor(n)` (or of nested lists) of symbolic numbers,
        built with `scalar_tensor` and `stack`, which keep them symbols: `torch.tensor` reads
        each number as a concrete value (a guard on it; C++ also misreads a SymInt past
        2**31)."""
        if set(kwargs) - {"dtype", "device"}:
            raise Unsupported(f"torch.tensor(...) of symbolic numbers with {sorted(kwargs)}")
        dtype = kwargs["dtype"].as_constant() if "dtype" in kwargs else _inferred_dtype(data)
        options = {"dtype": ConstantVariable(dtype)}
        if "device" in kwargs:
            options["device"] = kwargs["device"]

        def build(item: VariableTracker) -> VariableTracker:
            if isinstance(item, SequenceVariable):
                if not item.values:
                    raise Unsupported("torch.tensor(...) of symbolic numbers and an empty list")
                rows = [build(x) for x in item.values]
                return self.call_function(torch.stack, [TupleVariable(rows)], {})
            return self.call_function(torch.scalar_tensor, [item], options)

        return build(data)

    def call_method(self, name: str, args: list[VariableTracker],
                    kwargs: dict[str, VariableTracker]) -> VariableTracker:
        node = self.graph.call_method(name, *_node_args(args, kwargs, f"Tensor.{name}"))
        value = self._run(lambda a, k: getattr(a[0], name)(*a[1:], **k), args, kwargs,
                          f"Tensor.{name}", node)
        return _same_tensor([*args, *kwargs.values()], value) or \
            _keep_outs(self.wrap_result(node, value), value, kwargs)

    def _run(self, call, args, kwargs, what, node) -> Any:
        fake_args = [_example(a) for a in args]
        fake_kwargs = {k: _example(v) for k, v in kwargs.items()}
        if _squeezes(node.target):
            _refuse_unknown_squeeze(what, fake_args, fake_kwargs)
        tensors = [t for t in pytree.tree_leaves((fake_args, fake_kwargs))
                   if isinstance(t, torch.Tensor)]
        versions, storages = _state(tensors)
        try:
            with self.fake_mode:
                value = call(fake_args, fake_kwargs)
            versions_after, storages_after = _state(tensors)
            if storages_after != storages and versions_after == versions:
                # it swapped an argument's `.data` (`vector_to_parameters`), which no version
                # counter records and a backend's trace would not keep
                raise Unsupported(f"{what} replaced the data of a tensor argument")
            if versions_after != versions:
                # it wrote to an argument, whatever its name says (`F.relu(x, inplace=True)`,
                # `F.embedding` with `max_norm`): not dead code when its result is unused
                node.meta["writes"] = True
            return value
        except DataDependentError as error:
            raise Unsupported(f"{what}: its result depends on tensor data ({error.reason})") \
                from None
        except UnsupportedFakeOpError as error:
            raise Unsupported(f"{what}: {error.reason}") from None
        except Unsupported:
            raise
        except Exception as error:
            if isinstance(error, RuntimeError) and "data is not allocated yet" in str(error):
                # C++ code that reads a tensor's values through its data pointer, with no
                # dispatch of its own to fake (`_pad_packed_sequence` reads the batch sizes;
                # `ctc_loss` of int lists writes the lengths into a tensor it made)
                raise Unsupported(f"{what}: its result depends on tensor data (its C++ code "
                                  "reads the values of a tensor, which a fake tensor does "
                                  "not hold)") from None
            raise Unsupported(f"{what} raised {type(error).__name__} while tracing: "
                              f"{error}") from None

    def wrap_result(self, node: torch.fx.Node, value: Any) -> VariableTracker:
        """The tracker of `node`, whose value on the fake inputs is `value`."""
        node.meta["example_value"] = value
        if isinstance(value, torch.Tensor):
            from dynamo.variables.builder import _plain_tensor_type

            if not isinstance(value, FakeTensor) and not _plain_tensor_type(type(value)):
                # a tensor subclass made from the fakes (`torch.masked.masked_tensor`): it
                # wraps the trace's fakes, which a graph would hand back as its output
                raise NotAGraphValue(f"a graph operation returned a {type(value).__qualname__}"
                                     ": a tensor subclass (only plain tensors are traced)")
            return TensorVariable(node, value)
        if isinstance(value, _SYM):
            if value.node.expr.is_number and not _float_algebra(node, value):
                constant = value.node.constant  # (-0.0, where sympy's Float is 0)
                return ConstantVariable(value.node.pytype(value.node.expr) if constant is None
                                        else constant)
            return SymNodeVariable(node, value)
        if isinstance(value, (list, tuple)):
            items = [self.wrap_result(self.graph.call_function(operator.getitem, (node, i)), v)
                     for i, v in enumerate(value)]
            if isinstance(value, torch.Size):
                return SizeVariable(items)
            if isinstance(value, list):
                from dynamo.variables.containers import ListVariable

                return ListVariable(items)
            if type(value) is not tuple:
                return NamedTupleVariable(items, type(value), tuple_fields(value))
            return TupleVariable(items)
        if (isinstance(value, (str, bytes)) or node.target in _HASHES) and any(
                isinstance(a.meta.get("example_value"), torch.Tensor)
                for a in node.all_input_nodes):
            # `str(t)`, `repr(t)`, `"%s" % t`: the fake tensor's text, not the tensor's values;
            # `hash(t)` (`t.__hash__()`, `Tensor.__hash__(t)`): the fake's identity, not the
            # tensor's
            what = getattr(node.target, "__name__", node.target)
            raise NotAGraphValue(f"{what}() of a tensor (its values and identity are not "
                                 "known while tracing)")
        if value is None or is_literal(value):
            return ConstantVariable(value)
        raise NotAGraphValue(f"a graph operation returned a {type(value).__qualname__}")

    def size_variable(self, tensor: TensorVariable, sizes: Any) -> SizeVariable:
        return SizeVariable([self._size(tensor, "size", d, s) for d, s in enumerate(sizes)])

    def _size(self, tensor: TensorVariable, method: str, dim: int, value: Any) -> VariableTracker:
        if not isinstance(value, _SYM) or value.node.expr.is_number:
            return ConstantVariable(int(value))
        node = self.graph.call_method(method, (tensor.node, dim))
        node.meta["example_value"] = value
        return SymNodeVariable(node, value)

    def wrap_value(self, tensor: TensorVariable, method: str, result: Any,
                   args: tuple = ()) -> VariableTracker:
        """The result of a metadata method (`x.size(0)`, `x.numel()`, `x.stride()`)."""
        if isinstance(result, tuple):
            return TupleVariable([self._size(tensor, method, d, v) for d, v in enumerate(result)])
        if isinstance(result, _SYM) and not result.node.expr.is_number:
            node = self.graph.call_method(method, (tensor.node, *args))
            return self.wrap_result(node, result)
        return ConstantVariable(result if not isinstance(result, _SYM)
                                else result.node.pytype(result.node.expr))

    def set_grad_enabled(self, mode: bool) -> None:
        torch._C._set_grad_enabled(mode)
        self.graph.call_function(torch._C._set_grad_enabled, (mode,))

    def enter_context(self, mode: Any, kind: str, settings: tuple) -> torch.fx.Node:
        """Enter the autocast or inference-mode object `mode` while tracing; the graph's node
        that enters one like it."""
        mode.__enter__()
        node = self.graph.call_function(enter_context, (kind, *settings))
        self.entered_contexts.append((mode, node))
        return node

    def exit_context(self, mode: Any, node: torch.fx.Node) -> None:
        self.entered_contexts.remove((mode, node))
        mode.__exit__(None, None, None)
        self.graph.call_function(exit_context, (node,))

    def restore_global_state(self) -> None:
        """Put back the grad mode, autocast and inference mode the trace started with (a trace may stop
        inside a block; the graph's own nodes switch them when it runs)."""
        while self.entered_contexts:
            self.entered_contexts.pop()[0].__exit__(None, None, None)
        torch._C._set_grad_enabled(self.initial_grad_mode)

    # ----- the end of the trace ---------------------------------------------------------------

    def finish(self, outputs: list[torch.fx.Node]) -> torch.fx.GraphModule | None:
        """Close the graph with `outputs`; None when it does no tensor work at all."""
        for _, node in reversed(self.entered_contexts):  # a graph break inside the block:
            self.graph.call_function(exit_context, (node,))  # the runner enters it anew
        self.restore_global_state()  # the graph's nodes switch it
        self.graph.output(tuple(outputs))
        returns_constants = False  # a float the runner reads from the graph's outputs
        for item, symbol in self.float_items:
            value = self.shape_env.simplify(symbol)
            if value.is_Number:  # a use specialised the float: its constant, for the backend
                returns_constants |= any(user.op == "output" for user in item.users)
                for user in list(item.users):
                    user.args, user.kwargs = torch.fx.node.map_arg(
                        (user.args, user.kwargs),
                        lambda n, item=item, value=float(value): value if n is item else n)
                    with self.graph.inserting_before(user):  # (`-2.0 ** y`: see printable_args)
                        user.args = printable_args(self.graph, user.target, user.args,
                                                   "example_value")
        # Facts assumed of data-dependent values (`torch._check(n >= 2)`, a kernel's bounds
        # check): checked by the graph. (The frames they name are the compiled function's
        # caller, not the traced line: dropped, here and for a backend's re-trace.)
        asserts = self.shape_env.runtime_asserts
        asserts[:] = [ShapeGuard(ra.expr) for ra in asserts]
        insert_runtime_asserts(self.graph, asserts, val_key="example_value")
        _eliminate_dead_code(self.graph)
        if not returns_constants and not any(
                n.op in ("call_function", "call_method", "get_attr") for n in self.graph.nodes):
            return None  # no tensor work: nothing to compile
        root = torch.nn.Module()
        for name, value in self.constants.items():
            setattr(root, name, value)
        gm = torch.fx.GraphModule(root, self.graph)
        gm.meta["shape_env"] = self.shape_env
        return gm

    def guard_set(self) -> GuardSet:
        guards = GuardSet(self.guards)
        guards.add(GlobalState())
        for guard in shape_guards(self.shape_env):
            guards.add(guard)
        # Tensors only: a float input is a new tensor at each call, and equal ints (symbolic
        # sizes, counters) may well be the same object
        sources = [source for source, value, _ in self.inputs
                   if isinstance(value, torch.Tensor) and not isinstance(source,
                                                                         FloatTensorSource)]
        if len(sources) > 1 and mutates_inputs(self.graph):
            guards.add(DistinctObjects(tuple(sources)))
        for group in self._written_beside_others():
            guards.add(DistinctObjects(group))
        return guards

    def _written_beside_others(self) -> list[tuple[Source, ...]]:
        """For each container or object from the frame that the trace writes into, it and the
        others of its type the trace read: they were apart (one of them passed twice, a write
        through one would be read through the other)."""
        written = [*self.side_effects.containers.values(),
                   *(target for kind, target, _, _ in self.side_effects.writes.values()
                     if kind == "attr")]
        groups = []
        for tracker in {id(t): t for t in written if t.source is not None}.values():
            kind = tracker.python_type()
            others = [other.source for value, other in self.containers.values()
                      if other is not tracker and type(value) is kind]
            if others:
                groups.append((tracker.source, *others))
        return groups

    def example_inputs(self) -> list[torch.Tensor]:
        return [value for _, value, _ in self.inputs]


def _same_tensor(args: list[VariableTracker], value: Any) -> TensorVariable | None:
    """The argument whose tensor the operation returned as it is (`x.add_(1)`, `x.float()` of
    a float tensor): the result *is* that tensor, as `is` in the traced code sees."""
    for a in args:
        if isinstance(a, TensorVariable) and a.fake is value:
            return a
    return None


def _keep_outs(result: VariableTracker, value: Any, kwargs: dict[str, VariableTracker]) \
        -> VariableTracker:
    """`result` with the items that are out= tensors passed by keyword (`torch.max(x, 1,
    out=(v, i))`, `aten.sort.values(x, values=v, indices=i)`) that the op returned as they
    are: the caller's tensors, as `is` sees."""
    if not isinstance(result, SequenceVariable) or not isinstance(value, (list, tuple)) or \
            len(value) != len(result.values):
        return result
    outs = [item for v in kwargs.values()
            for item in (v.values if isinstance(v, SequenceVariable) else [v])]
    for i, v in enumerate(value):
        same = _same_tensor(outs, v) if isinstance(v, torch.Tensor) else None
        if same is not None:
            result.values[i] = same
    return result


def _returns_an_input(args: list[VariableTracker], value: Any) -> bool:
    """Whether `value` (or an item of it) is the very fake of a tensor argument, as a custom
    autograd.Function's `apply` returns an input its forward marked dirty."""
    values = value if isinstance(value, (list, tuple)) else (value,)
    return any(_same_tensor(args, v) is not None for v in values if isinstance(v, torch.Tensor))


def _numbers(data: VariableTracker) -> list[VariableTracker]:
    if isinstance(data, SequenceVariable):
        return [n for item in data.values for n in _numbers(item)]
    return [data]


def _tensors_only(data: VariableTracker) -> bool:
    """Whether `data` is a nonempty list or tuple of tensors."""
    return isinstance(data, SequenceVariable) and bool(data.values) and \
        all(isinstance(v, TensorVariable) for v in data.values)


def _symbols_in(data: VariableTracker) -> bool:
    return any(isinstance(n, SymNodeVariable) for n in _numbers(data))


def _inferred_dtype(data: VariableTracker) -> torch.dtype:
    """The dtype `torch.tensor` gives numbers: the default float dtype if any is a float, bool
    if all are bools, else int64."""
    kinds = {n.value.node.pytype if isinstance(n, SymNodeVariable) else type(n.as_constant())
             for n in _numbers(data)}
    if float in kinds:
        return torch.get_default_dtype()
    return torch.bool if kinds == {bool} else torch.int64


_PYTHON_DTYPES = {bool: torch.bool, int: torch.int64, float: torch.float64,
                  complex: torch.complex128}


def _node_args(args: list[VariableTracker], kwargs: dict[str, VariableTracker],
               what: Any) -> tuple[tuple, dict]:
    """The node's arguments; what cannot be one names the operation it was passed to."""
    try:
        return tuple(map(_node_arg, args)), {k: _node_arg(v) for k, v in kwargs.items()}
    except Unsupported as error:
        error.reason += f" ({what})"
        raise


def _node_arg(v: VariableTracker) -> Any:
    """`v` as an argument of a graph node: nodes for tensors and symbols."""
    return _graph_value(v, example=False)


def _momentum_as_hint(args: list[VariableTracker], kwargs: dict[str, VariableTracker]
                      ) -> tuple[list[VariableTracker], dict[str, VariableTracker]]:
    """`F.batch_norm`'s arguments for its run on fakes, a symbolic `momentum` given as its
    value: the op reads its `float momentum` as a constant (a guard on the value, a
    recompilation for each new one: BatchNorm's cumulative average `1 / n`), yet the momentum
    only weighs the running statistics' values, which fake tensors do not hold. The node
    keeps the symbol, so the graph computes with each call's momentum."""
    def hint(v: VariableTracker) -> VariableTracker:
        return ConstantVariable(v.value.node.hint) if isinstance(v, SymNodeVariable) else v

    if len(args) > 6:
        return [*args[:6], hint(args[6]), *args[7:]], kwargs
    if "momentum" in kwargs:
        return args, {**kwargs, "momentum": hint(kwargs["momentum"])}
    return args, kwargs


def _example(v: VariableTracker) -> Any:
    """`v` as an argument of the node's run on fake values."""
    return _graph_value(v, example=True)


def _graph_value(v: VariableTracker, example: bool) -> Any:
    if isinstance(v, TensorVariable):
        return v.fake if example else v.node
    if isinstance(v, SymNodeVariable):
        return v.value if example else v.node
    if isinstance(v, ConstantVariable):
        return torch_number(v.value)  # (FX cannot print a numpy scalar)
    if isinstance(v, SequenceVariable):
        items = [_graph_value(x, example) for x in v.values]
        return items if v.kind is list else tuple(items)
    if isinstance(v, SliceVariable):
        return slice(*[_graph_value(p, example) for p in v.parts])
    if isinstance(v, DictVariable):
        return {key_value(k): _graph_value(x, example) for k, x in v.entries.items()}
    if v.is_constant():
        value = v.as_constant()
        if not example and isinstance(value, type) and value in _PYTHON_DTYPES:
            # A Python type given as a dtype (`dtype=int`, `x.to(float)`) is written as the
            # dtype torch takes it for: FX cannot print a class
            return _PYTHON_DTYPES[value]
        return value
    if isinstance(v, OpaqueValueVariable):
        raise Unsupported(v.reason)
    raise Unsupported(f"passing {v.words()} to a graph operation")


def _is_impure(node: torch.fx.Node) -> bool:
    """Whether dead-code elimination must keep the node: it checks a runtime assert, it writes,
    it draws random numbers, or it makes a tensor from a symbolic number, whose value at run time may make it raise
    where the trace's did not (`x + k` with `k` past int64, `torch.zeros(n)` too large)."""
    return node.target in ASSERT_OPS or node.target in _SIDE_EFFECTFUL or _writes(node) or \
        _custom_function(node) or _draws_random_numbers(node, _name_of(node.target)) or (
        isinstance(node.meta.get("example_value"), torch.Tensor)
        and any(isinstance(arg.meta.get("example_value"), _SYMBOLIC_NUMBERS)
                for arg in node.all_input_nodes))


_SYMBOLIC_NUMBERS = (torch.SymInt, torch.SymFloat, torch.SymBool)


def _custom_function(node: torch.fx.Node) -> bool:
    """Whether the node calls a custom autograd.Function's `apply` (`objects.graph_apply`):
    its forward is the user's Python, which may write what it is given where no version
    counter shows it (`buf.data.add_(x)`, a running statistic updated through `.data`): kept
    when its result is unused (it was dropped, and the write with it)."""
    return getattr(node.target, "autograd_function", None) is not None


def _float_algebra(node: torch.fx.Node, value: Any) -> bool:
    """A float that algebra on symbolic floats made a number (`l - l`, `l * 0` of a `.item()`):
    IEEE arithmetic does not simplify so (NaN or inf give NaN), so the node computes it at run
    time, as torch.compile's graph does (it was the constant 0.0)."""
    return isinstance(value, torch.SymFloat) and any(
        isinstance(arg.meta.get("example_value"), torch.SymFloat) for arg in node.all_input_nodes)


# what fx itself never drops as dead code: `torch._assert_async(x.sum() > 0)` (its result unused,
# it was dropped and never checked), `aten._assert_async.msg`, `torch._assert`
_SIDE_EFFECTFUL = frozenset(torch.fx.node._side_effectful_functions)


def _name_of(target: Any) -> str:
    return target if isinstance(target, str) else getattr(target, "__name__", "")


def _state(tensors: list[torch.Tensor]) -> tuple[list[int], list[int | None]]:
    """The version counters of `tensors` (-1 for one without a counter: an inference tensor)
    and their storages."""
    return ([t._version if not t.is_inference() else -1 for t in tensors],
            [_storage(t) for t in tensors])


# In-place dunders called by name: their names end in `__`, not in `_`
_WRITING_DUNDERS = frozenset({f"__{op.__name__}__" for op in INPLACE_OPERATORS} |
                             {"__setitem__", "__delitem__"})


def _writes(node: torch.fx.Node) -> bool:
    target = node.target
    name = _name_of(target)
    return (
        target in (torch._C._set_grad_enabled, operator.setitem, enter_context, exit_context)
        or node.meta.get("writes", False)  # version counters moved (`_run`)
        # where version counters are not seen (inference tensors): an in-place activation,
        # batch and instance norm's running statistics (their schema does not mark them
        # written), an embedding's rows renormed by `max_norm`
        or _argument(node, "inplace") is True
        or name in ("batch_norm", "instance_norm")
        or (name in ("embedding", "embedding_bag") and _argument(node, "max_norm") is not None)
        or target in INPLACE_OPERATORS
        or name in _WRITING_DUNDERS  # `t.__iand__(m)`, `Tensor.__setitem__(t, i, v)`
        # (not `operator.and_`/`or_`/`not_`, whose names only dodge keywords)
        or (name.endswith("_") and not name.endswith("__") and
            getattr(target, "__module__", None) != "_operator")
        or "out" in node.kwargs
        or _mutable_op(target)
    )


def _argument(node: torch.fx.Node, name: str) -> Any:
    """The argument `name` of a call of a Python function (by keyword, or by its position:
    `F.hardtanh(x, -1.0, 1.0, True)` as `nn.Hardtanh` calls it), or None."""
    if name in node.kwargs:
        return node.kwargs[name]
    position = _parameter_position(node.target, name)
    return node.args[position] if position is not None and len(node.args) > position else None


@functools.cache
def _parameter_position(target: Any, name: str) -> int | None:
    """Where a Python function takes parameter `name` positionally, or None."""
    if not isinstance(target, types.FunctionType):
        return None
    try:
        names = list(inspect.signature(target).parameters)
    except (TypeError, ValueError):
        return None
    return names.index(name) if name in names else None


def _mutable_op(target: Any) -> bool:
    """An op whose schema writes to an argument (a custom op's `mutates_args`), whatever its
    name."""
    if isinstance(target, torch._ops.OpOverloadPacket):
        return any(getattr(target, name)._schema.is_mutable for name in target.overloads())
    return isinstance(target, torch._ops.OpOverload) and target._schema.is_mutable


def _squeezes(target: Any) -> bool:
    """Whether a node's target squeezes a tensor: the method, a torch function, the unbound
    `Tensor.squeeze`, `squeeze_copy`, the aten ops."""
    if target in ("squeeze", "squeeze_"):
        return True
    if isinstance(target, str):
        return False
    packet = getattr(target, "overloadpacket", target)
    return target in _SQUEEZE_FUNCTIONS or packet in (
        torch.ops.aten.squeeze, torch.ops.aten.squeeze_, torch.ops.aten.squeeze_copy)


_SQUEEZE_FUNCTIONS = (torch.squeeze, torch.Tensor.squeeze, torch.Tensor.squeeze_,
                      torch.squeeze_copy)


def _refuse_unknown_squeeze(what: str, args: list, kwargs: dict) -> None:
    """A break at a squeeze of a dim whose size depends on data: traced, it is assumed not 1
    (torch's size-oblivious rule); where it is 1 the graph's output has another rank than
    traced (`x.nonzero().squeeze()` with one nonzero)."""
    tensor = args[0] if args else kwargs.get("input", kwargs.get("self"))
    if not isinstance(tensor, torch.Tensor):
        return
    unknown = [isinstance(n, torch.SymInt) and n.node.hint is None for n in tensor.shape]
    if not any(unknown):
        return
    dims = args[1] if len(args) > 1 else kwargs.get("dim")
    if isinstance(dims, int) or isinstance(dims, (tuple, list)) and all(
            isinstance(d, int) for d in dims):
        wanted = [d % max(len(unknown), 1) for d in (dims if isinstance(dims, (tuple, list))
                                                     else (dims,))]
    else:  # (all dims, or ones given as symbols)
        wanted = range(len(unknown))
    if any(unknown[d] for d in wanted):
        raise Unsupported(f"{what}: squeeze of a dim whose size depends on data (it may be 1, "
                          "which the trace assumes it is not)")


def _draws_random_numbers(node: torch.fx.Node, name: str) -> bool:
    """Whether the node advances a random generator (`torch.rand`, `F.dropout`, ...): dropping
    it when its result is unused would change every random number drawn after it."""
    if name == "scaled_dot_product_attention":
        p = node.kwargs.get("dropout_p", node.args[4] if len(node.args) > 4 else 0.0)
        return not (isinstance(p, (int, float)) and p == 0)
    if name == "multi_head_attention_forward":
        # torch's Python, kept whole as one node: it calls `dropout` on the attention weights
        # when `dropout_p` is not 0 and `training` (default True) is not False
        p = node.kwargs.get("dropout_p", node.args[10] if len(node.args) > 10 else None)
        training = node.kwargs.get("training", node.args[13] if len(node.args) > 13 else True)
        return not (isinstance(p, (int, float)) and p == 0 or training is False)
    return name in _random_op_names()


@functools.cache
def _random_op_names() -> frozenset[str]:
    """Names of the aten ops tagged as drawing random numbers, and of the torch functions
    that call them under another name."""
    names = {"dropout1d", "dropout2d", "dropout3d", "feature_dropout", "feature_alpha_dropout",
             "rrelu", "binomial", "_sample_dirichlet", "fractional_max_pool2d",
             "fractional_max_pool3d", "fractional_max_pool2d_with_indices",
             "fractional_max_pool3d_with_indices", "gumbel_softmax"}
    for packet_name in dir(torch.ops.aten):
        packet = getattr(torch.ops.aten, packet_name, None)
        if not isinstance(packet, torch._ops.OpOverloadPacket):
            continue
        if any(torch.Tag.nondeterministic_seeded in getattr(packet, o).tags
               for o in packet.overloads()):
            names.add(packet_name)
    return frozenset(names)


def _eliminate_dead_code(graph: torch.fx.Graph) -> None:
    for node in reversed(list(graph.nodes)):
        if node.op in ("call_function", "call_method", "get_attr") and not node.users and not (
            _is_impure(node)
        ):
            graph.erase_node(node)


def mutates_inputs(graph: torch.fx.Graph) -> bool:
    """Whether the graph writes to a tensor that shares storage with one of its inputs (a
    graph that writes only to tensors it made can be run again, eagerly, if it raises)."""
    inputs = {_storage(n.meta.get("example_value")) for n in graph.nodes
              if n.op in ("placeholder", "get_attr")} - {None}
    for n in graph.nodes:
        if n.op not in ("call_function", "call_method") or not _writes(n) or n.target in (
                torch._C._set_grad_enabled, enter_context, exit_context):
            continue
        written = [n.kwargs.get("out", n.args[0] if n.args else None)]
        if _mutable_op(n.target):  # which arguments it writes: any, as far as we know here
            written = n.all_input_nodes
        for w in written:
            storage = _storage(w.meta.get("example_value")) \
                if isinstance(w, torch.fx.Node) else None
            if storage is None or storage in inputs:
                return True
    return False


def undone_on_error(graph: torch.fx.Graph) -> tuple[str, ...]:
    """What the runner puts back, besides grad mode, when the graph raises: the blocks it
    entered ("blocks"), and the random generators it advanced ("random": the frame, run again
    eagerly, draws the same numbers as eager)."""
    nodes = [n for n in graph.nodes if n.op in ("call_function", "call_method")]
    undo = ("blocks",) if any(n.target is enter_context for n in nodes) else ()
    if any(_draws_random_numbers(n, _name_of(n.target)) for n in nodes):
        undo += ("random",)
    return undo


def _storage(value: Any) -> int | None:
    """An id of the storage of a (fake) tensor, or None."""
    if not isinstance(value, torch.Tensor):
        return None
    try:
        return value.untyped_storage()._cdata
    except Exception:  # no storage (a sparse tensor, say): counted as unknown
        return None
