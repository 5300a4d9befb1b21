"""make_fx: trace a Python callable into an aten-level torch.fx GraphModule.

`make_fx(fn, tracing_mode)(*args)` flattens the arguments (any pytree), makes a placeholder per
leaf, and runs `fn` under a ProxyMode that records every aten op. The tracing mode decides what
the tensors are while `fn` runs:

- "real": the arguments themselves; ops compute real values (a Python branch on a value works);
- "fake": fakecore FakeTensors with the arguments' metadata; nothing is computed (sizes that
  depend on data, like `nonzero`'s, are symbols);
- "symbolic": FakeTensors whose every dim is a symbol of a ShapeEnv; size arithmetic becomes
  graph nodes, and the decisions taken on sizes are the ShapeEnv's guards (`gm.shape_env`).

Arguments that are already FakeTensors (of one fakecore mode, as in "fake" or "symbolic" mode)
are traced as they are, in their mode: the caller chose which of their dims are symbols, and
SymInt arguments of that mode's ShapeEnv stay symbols.

When `fn` is an nn.Module its parameters and buffers become `get_attr` nodes of the result (or,
with `lift_params=True`, leading placeholders). Non-tensor arguments are constants of the trace:
they get placeholders so that the GraphModule takes the same arguments as `fn`, but the graph
does not read them. `functionalize=True` traces through `torch.func.functionalize`, so that the
graph has no views or mutations except copies back into mutated inputs. `record_grad_mode=True`
writes the grad-mode switches `fn` makes between ops (`with torch.no_grad():`) as
`torch._C._set_grad_enabled` nodes, up to the mode `fn` leaves (a switch back to the starting mode
restores the mode the graph is called in), so that running the graph under autograd records
what running `fn` would.
"""

from __future__ import annotations

import enum
import functools
import inspect
import keyword
from collections.abc import Callable
from contextlib import ExitStack
from typing import Any

import torch
import torch.fx
from torch.fx.graph import _custom_builtins, _PyTreeCodeGen, _PyTreeInfo
from torch.utils._pytree import tree_flatten, tree_unflatten

from fakecore import FakeTensor, FakeTensorMode, ShapeEnv, SymNode, observe_sym_ops
from fxtrace.data_writing_composites import replacing_data_writing_composites
from fxtrace.module_stack import ModuleStack
from fxtrace.proxy_mode import ProxyMode, after_inputs
from fxtrace.runtime_asserts import ASSERT_OPS, insert_runtime_asserts

# checks of a tensor's value that fx would drop as dead code (it keeps only the `msg` overload
# of `_assert_async`): `torch._assert_async(x.sum() > 0)` traced to aten never raised
_CHECKS = (*ASSERT_OPS, torch.ops.aten._assert_async.default, torch.ops.aten._assert_async.msg)


def _is_impure(node: torch.fx.Node, number_inputs: frozenset = frozenset()) -> bool:
    # (an `opaque_call`'s node: see `ProxyMode.record_call`)
    return node.target in _CHECKS or node.meta.get("opaque_call", False) or node.is_impure() \
        or _tensor_of_an_input_number(node, number_inputs)


_SYMBOLIC_NUMBERS = (torch.SymInt, torch.SymFloat, torch.SymBool)


def _symbols_of(value: Any) -> frozenset:
    return frozenset(value.node.expr.free_symbols) if isinstance(value, _SYMBOLIC_NUMBERS) and \
        hasattr(value.node, "expr") else frozenset()


def _tensor_of_an_input_number(node: torch.fx.Node, number_inputs: frozenset) -> bool:
    """Whether the node makes a tensor from a symbolic number that depends on a number given
    as an input (not a size): its value at run time may make the op raise where the trace's
    did not (`x + k` with `k` past int64: OverflowError), so it is kept when unused, as
    dynamo keeps it in its own graph (dropped here, aot_eager and inductor_lite lost eager's
    error)."""
    return bool(number_inputs) and node.op == "call_function" and \
        isinstance(node.meta.get("val"), torch.Tensor) and any(
            _symbols_of(arg.meta.get("val")) & number_inputs for arg in node.all_input_nodes)

TRACING_MODES = ("real", "fake", "symbolic")


# Values a graph's generated code can write as constants (by their repr, or a global fx
# knows), besides tensors and symbolic numbers
_CONSTANT_TYPES = (type(None), bool, int, float, complex, str, bytes, slice, range,
                   type(Ellipsis), torch.dtype, torch.device, torch.memory_format, torch.layout)


def _is_constant(value: Any) -> bool:
    if isinstance(value, (set, frozenset)):
        return all(_is_constant(v) for v in value)
    if isinstance(value, slice):
        return all(_is_constant(v) for v in (value.start, value.stop, value.step))
    # (an enum member fx writes as its class's attribute, `E.A`)
    return type(value) in _CONSTANT_TYPES or isinstance(value, enum.Enum)


def _check_output_leaf(fn: Callable, index: int, value: Any) -> None:
    """A clear error for an output the graph cannot return: an object (a generator, a function,
    a module, an instance of a user class) is neither a graph value nor a constant its code can
    write (fx wrote its repr into the code: a SyntaxError, or a NameError at the call)."""
    if isinstance(value, (torch.Tensor, torch.SymInt, torch.SymFloat, torch.SymBool)) or \
            _is_constant(value):
        return
    name = getattr(fn, "__qualname__", type(fn).__name__)
    raise TypeError(f"make_fx: {name} returned {type(value).__qualname__} object {value!r:.80} "
                    f"(output leaf {index}); a traced function returns tensors, symbolic "
                    "numbers and constants (None, numbers, strings, dtypes, devices, ...), in "
                    "lists, tuples and dicts")


def make_fx(
    fn: Callable,
    tracing_mode: str = "real",
    decomposition_table: dict[Any, Callable] | None = None,
    *,
    record_module_stack: bool = True,
    lift_params: bool = False,
    functionalize: bool = False,
    record_grad_mode: bool = False,
) -> Callable[..., torch.fx.GraphModule]:
    """A function that traces `fn` on the arguments it is given and returns the GraphModule."""
    if tracing_mode not in TRACING_MODES:
        raise ValueError(f"tracing_mode must be one of {TRACING_MODES}, not {tracing_mode!r}")

    def trace(*args: Any, **kwargs: Any) -> torch.fx.GraphModule:
        if kwargs:
            raise TypeError(f"make_fx traces positional arguments only: pass {sorted(kwargs)} "
                            "positionally (or bind them with functools.partial)")
        if tracing_mode == "real":
            _refuse_fake_arguments(fn, args)
            fake_mode, adopted = None, False
        else:
            fake_mode, adopted = _with_active_fake_mode(_fake_mode_of(args), tracing_mode)
        return _Trace(fn, tracing_mode, decomposition_table, record_module_stack,
                      lift_params, functionalize, fake_mode, record_grad_mode,
                      adopted).run(args)

    return trace


class _Trace:
    """One tracing run: the graph being built and the modes that build it."""

    def __init__(self, fn, tracing_mode, decomposition_table, record_module_stack, lift_params,
                 functionalize, fake_mode, record_grad_mode=False, adopted=False) -> None:
        self.fn = fn
        self.record_grad_mode = record_grad_mode
        self.module = fn if isinstance(fn, torch.nn.Module) else None
        self.tracing_mode = tracing_mode
        self.lift_params = lift_params
        self.functionalize = functionalize
        self.graph = torch.fx.Graph()
        self.constants: dict[str, torch.Tensor] = {}
        if fake_mode is not None:  # fake arguments: their mode, their symbols
            self.fake_mode, self.shape_env = fake_mode, fake_mode.shape_env
        elif tracing_mode != "real":
            # "fake" has a ShapeEnv too, with static inputs: data-dependent sizes get symbols.
            self.shape_env = ShapeEnv()
            self.fake_mode = FakeTensorMode(self.shape_env, allow_non_fake_inputs=True)
        else:
            self.shape_env = self.fake_mode = None
        # (a mode adopted from the caller's `with mode:` still makes real inputs' dims symbols)
        self.dynamic = tracing_mode == "symbolic" and (fake_mode is None or adopted)
        # In real mode node values are still fakes: metadata, not the traced data.
        self._meta_mode = self.fake_mode or FakeTensorMode(allow_non_fake_inputs=True)
        self.module_stack = ModuleStack(self.module) if record_module_stack else None
        self.proxy_mode = ProxyMode(
            self.graph, self.constants,
            decomposition_table=decomposition_table,
            module_stack=self.module_stack,
            fake_value=self._fake_value,
        )

    def _fake_value(self, t: torch.Tensor) -> torch.Tensor:
        if self.fake_mode is not None:
            return t
        with torch._C._DisableTorchDispatch():
            return self._meta_mode.from_tensor(t.detach())

    def _convert(self, value: Any) -> Any:
        if self.dynamic and isinstance(value, int) and not isinstance(value, bool):
            return self.shape_env.create_symint(value)  # symbolic mode: int inputs are symbols
        if self.fake_mode is None or not isinstance(value, torch.Tensor):
            return value
        dims = range(value.dim()) if self.dynamic else ()
        return self.fake_mode.from_tensor(value, dynamic_dims=dims)

    def run(self, args: tuple) -> torch.fx.GraphModule:
        flat_args, in_spec = tree_flatten(args)
        arg_names = _arg_names(self.fn, len(args))
        names = _leaf_names(arg_names, args)
        state = self._state_placeholders()
        inputs = []
        for name, value in zip(names, flat_args):
            value = self._convert(value)
            # The leaf is unpacked straight into the node's variable: fx renames a name it
            # cannot take (a builtin's as `input`, one taken before, as `x_0` of `f(x, x_0)`
            # with x a pair), and the copy `input_1 = input` it would write overwrites an
            # argument of that name before it is read.
            node = self.graph.create_node("placeholder", name, name=name)
            node.target = node.name
            if isinstance(value, (torch.Tensor, torch.SymInt)):
                self.proxy_mode.track(value, node)
            inputs.append(value)
        fn = self._functionalized(state) if self.functionalize else self._callable(state)
        start_mode = torch.is_grad_enabled()
        if self.record_grad_mode:
            self.proxy_mode.grad_mode = start_mode
        try:
            out = self._run(fn, tree_unflatten(inputs, in_spec))
            self.proxy_mode.sync_grad_mode()  # the mode fn leaves, the graph leaves too
        finally:
            torch._C._set_grad_enabled(start_mode)  # tracing changes no global state
        flat_out, out_spec = tree_flatten(out)
        for i, value in enumerate(flat_out):
            _check_output_leaf(self.fn, i, value)
        if self.record_grad_mode:
            self._relative_to_callers_grad_mode(start_mode)
        self.graph.output([self.proxy_mode.proxy_of(v) for v in flat_out])
        if self.shape_env is not None:  # facts assumed of data-dependent values: checked
            insert_runtime_asserts(self.graph, self.shape_env.runtime_asserts)
        # e.g. detaches autograd made to save activations; a check whose result is unused stays
        number_inputs = frozenset().union(*(_symbols_of(n.meta.get("val")) for n in
                                            self.graph.nodes if n.op == "placeholder"))
        self.graph.eliminate_dead_code(
            is_impure_node=functools.partial(_is_impure, number_inputs=number_inputs))
        if self.lift_params:  # called as gm(*parameters_and_buffers, *args)
            lifted = ["p_" + name.replace(".", "_") for name in state]
            arg_names = lifted + arg_names
            in_spec = tree_flatten((*state.values(), *args))[1]
        self.graph._codegen = _PyTreeCodeGen(_PyTreeInfo(arg_names, in_spec, out_spec))
        return self._graph_module()

    def _relative_to_callers_grad_mode(self, start_mode: bool) -> None:
        """A recorded switch back to the mode the trace started in becomes a switch back to
        the mode the graph is called in, as leaving `with torch.no_grad():` restores the
        caller's mode: called under `no_grad`, the graph neither computes with grad after the
        block nor leaves grad mode on. Switches away from it stay as traced."""
        back = [n for n in self.graph.nodes if n.target is torch._C._set_grad_enabled
                and n.args == (start_mode,)]
        if not back:
            return
        with after_inputs(self.graph):
            callers = self.graph.call_function(torch.is_grad_enabled)
        for node in back:
            node.args = (callers,)

    def _state_placeholders(self) -> dict[str, torch.Tensor]:
        """The module's parameters and buffers (as the tensors the trace runs on), tracked."""
        if self.module is None:
            return {}
        state = {}
        for name, value in (*self.module.named_parameters(), *self.module.named_buffers()):
            fake = self._convert_state(value)
            if self.lift_params:
                node = self.graph.placeholder("p_" + name.replace(".", "_"))
            else:
                node = self.graph.get_attr(name)
            self.proxy_mode.track(fake, node)
            state[name] = fake
        return state

    def _convert_state(self, value: torch.Tensor) -> torch.Tensor:
        if self.fake_mode is None:
            return value
        return self.fake_mode.from_tensor(value)

    def _callable(self, state: dict[str, torch.Tensor]) -> Callable:
        if self.module is None:
            return self.fn
        module = self.module
        return lambda *a, **kw: torch.func.functional_call(module, state, a, kw, strict=True)

    def _functionalized(self, state: dict[str, torch.Tensor]) -> Callable:
        """`fn` through `torch.func.functionalize`, the module's buffers passed in as arguments
        too: a write to one (batch norm's running statistics) becomes a copy back into it, as
        for an input, not an in-place op on a tensor functionalization never saw (or its
        internal assert, when the value written is made from an input). Parameters stay
        captured: a copy back into one that requires grad would be an error outside the
        `no_grad` block that wrote it."""
        module_buffers = self.module.named_buffers() if self.module is not None else ()
        names = [name for name, _ in module_buffers]

        def with_buffers(values: list, *args: Any) -> Any:
            return self._callable({**state, **dict(zip(names, values))})(*args)

        functional = torch.func.functionalize(with_buffers, remove="mutations_and_views")
        return lambda *args: functional([state[name] for name in names], *args)

    def _run(self, fn: Callable, args: tuple) -> Any:
        with ExitStack() as stack:
            if self.fake_mode is not None and _active_fake_mode() is not self.fake_mode:
                stack.enter_context(self.fake_mode)  # (not again when the caller entered it)
            stack.enter_context(self.proxy_mode)
            stack.enter_context(replacing_data_writing_composites())
            stack.enter_context(observe_sym_ops(self._record_sym_op))
            if self.module_stack is not None:
                stack.enter_context(self.module_stack.recording())
            return fn(*args)

    def _record_sym_op(self, op: Callable, args: tuple, result: Any) -> None:
        """Size arithmetic on this trace's symbols, as nodes. fakecore's observers see every
        thread's: another thread's trace (dynamo's, with a ShapeEnv of its own) is not ours.
        A real-mode trace has no symbols of its own (it refuses fake and symbolic arguments):
        every symbolic value it sees is another trace's."""
        node = getattr(result, "node", None)
        if self.shape_env is not None and getattr(node, "shape_env", None) is self.shape_env:
            self.proxy_mode.record_sym_op(op, args, result)

    def _graph_module(self) -> torch.fx.GraphModule:
        root = torch.nn.Module()
        if self.module is not None and not self.lift_params:
            root = self.module
        for name, value in self.constants.items():
            setattr(root, name, value)
        for node in self.graph.nodes:
            if node.op == "call_function" and isinstance(node.target, torch._ops.OpOverload) \
                    and keyword.iskeyword(node.target._overloadname):
                # (`aten.random_.from`, of `x.random_(0, 10)`: fx would write
                # `torch.ops.aten.random_.from(...)`, a SyntaxError; the packet picks the
                # same overload from the arguments)
                node.target = node.target.overloadpacket
        gm = torch.fx.GraphModule(root, self.graph, class_name=_class_name(self.fn))
        gm.shape_env = self.shape_env
        return gm


def _fake_mode_of(args: tuple) -> FakeTensorMode | None:
    """The mode of the FakeTensors among `args` (None if there are none); one mode only.
    Symbolic ints and no fakes: a mode of their ShapeEnv, so that arithmetic on them is
    recorded (the trace records only its own ShapeEnv's)."""
    leaves = tree_flatten(args)[0]
    modes = {id(t.fake_mode): t.fake_mode for t in leaves if isinstance(t, FakeTensor)}
    if len(modes) > 1:
        raise ValueError("make_fx: the fake arguments belong to different FakeTensorModes")
    if not modes:
        envs = {id(n.node.shape_env): n.node.shape_env for n in leaves
                if isinstance(n, torch.SymInt) and getattr(n.node, "shape_env", None) is not None}
        if len(envs) == 1:
            return FakeTensorMode(next(iter(envs.values())), allow_non_fake_inputs=True)
    return next(iter(modes.values()), None)


def _refuse_fake_arguments(fn: Callable, args: tuple) -> None:
    """Real mode runs the ops on the arguments themselves: fakes (or symbolic ints of a
    fakecore ShapeEnv, or a module holding fake parameters) have no data to compute on, and
    failed deep inside an op (a real factory mixed with fakes, a C++ "expected concrete
    integers" for a symbolic size)."""
    leaves = tree_flatten(args)[0]
    if isinstance(fn, torch.nn.Module):
        leaves += [*fn.parameters(), *fn.buffers()]
    for leaf in leaves:
        if isinstance(leaf, FakeTensor) or isinstance(
                getattr(leaf, "node", None), SymNode) and isinstance(leaf, torch.SymInt):
            what = "a FakeTensor" if isinstance(leaf, FakeTensor) else "a symbolic int"
            raise ValueError(f"make_fx(tracing_mode='real') was given {what}: fake arguments "
                             "need tracing_mode='fake' or 'symbolic' (real mode computes on "
                             "the arguments' data)")


def _active_fake_mode() -> Any:
    return torch._C._get_dispatch_mode(torch._C._TorchDispatchModeKey.FAKE)


def _with_active_fake_mode(fake_mode: FakeTensorMode | None,
                           tracing_mode: str) -> tuple[FakeTensorMode | None, bool]:
    """The mode to trace in when the caller is inside a fake mode (`with mode: ... make_fx(f,
    "fake")(x)`): that mode when it is fakecore's and the arguments are real or its own fakes
    (as PyTorch's make_fx reuses an active fake mode; entering a second one failed inside
    torch); a clear error for any other fake mode. Also whether the mode was adopted so."""
    active = _active_fake_mode()
    if active is None or active is fake_mode:
        return fake_mode, False
    if fake_mode is None and isinstance(active, FakeTensorMode):
        if tracing_mode == "symbolic" and active.shape_env is None:
            raise ValueError("make_fx(tracing_mode='symbolic') inside a FakeTensorMode without "
                             "a ShapeEnv: create the mode with a ShapeEnv, or trace outside it")
        return active, True
    what = ("another fakecore FakeTensorMode than the arguments'"
            if isinstance(active, FakeTensorMode)
            else f"a {type(active).__module__}.{type(active).__qualname__}")
    raise RuntimeError(f"make_fx(tracing_mode={tracing_mode!r}) was called inside {what}; "
                       "trace outside it, or with fakes of the active mode")


def _arg_names(fn: Callable, count: int) -> list[str]:
    """Names for `fn`'s first `count` positional arguments, from its signature where it has one."""
    try:
        params = list(inspect.signature(getattr(fn, "forward", fn)).parameters.values())
    except (TypeError, ValueError):
        params = []
    named = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    names = [named[i] if i < len(named) else f"arg{i}" for i in range(count)]
    # A name the generated code reads (`device` in `device(type='cpu')`, `torch`, `inf`,
    # `pytree`, `self`) must not be a parameter of `forward`: renamed as fx renames nodes.
    for i, name in enumerate(names):
        if name == "self" or name in _custom_builtins:
            suffix = 1
            while f"{name}_{suffix}" in names:
                suffix += 1
            names[i] = f"{name}_{suffix}"
    return names


def _leaf_names(arg_names: list[str], args: tuple) -> list[str]:
    """A placeholder name per pytree leaf of `args`: the argument's name, numbered if needed."""
    names = []
    for base, arg in zip(arg_names, args):
        leaves = tree_flatten(arg)[0]
        names += [base] if len(leaves) == 1 else [f"{base}_{j}" for j in range(len(leaves))]
    return names


def _class_name(fn: Callable) -> str:
    return type(fn).__name__ if isinstance(fn, torch.nn.Module) else getattr(fn, "__name__", "fn")
