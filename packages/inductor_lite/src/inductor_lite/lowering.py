"""Lowering: an aten FX graph becomes a list of IR buffers.

`GraphLowering` walks the graph once. Each aten node is handed to its lowering in `LOWERINGS`,
which returns IR (ir.py): pointwise ops and views return lazy `Pointwise`/`BufferView` values that
their consumers inline; reductions, matmuls and anything without a lowering produce buffers.
A lazy value becomes a buffer ("is realized") when more than one node reads it, when an extern
kernel needs it, or when it is a graph output — so a chain of pointwise ops lands in one loop
body, and nothing is computed twice. Sizes, strides and dtypes come from the nodes' fake values
(`node.meta["val"]`), symbolic sizes as sympy expressions. Host values (`host_nodes`: 0-d CPU
tensors and what is computed from them alone, an optimizer's step count) are extern calls on
the CPU; kernels take their numbers as symbols the wrapper reads on the host.
"""

from __future__ import annotations

import dataclasses
import math
import operator
import sys
from collections.abc import Callable, Sequence
from typing import Any

import sympy
import torch

import fakecore

from . import ir
from .ir import (
    Buffer,
    BufferView,
    ComputedBuffer,
    ExternBuffer,
    Index,
    InputBuffer,
    Layout,
    LoweringError,
    Pointwise,
    Reduction,
    Scan,
    Scatter,
    TensorIR,
    Value,
    constant,
    contiguous_strides,
    index_in,
    loader,
    op,
    to_dtype,
)
from .scheduler import loads
from .traced_sizes import symbol_expr
from .triton_codegen import PERSISTENT_RNUMEL

aten = torch.ops.aten
LOWERINGS: dict[Any, Callable] = {}
# Ops run by a library call on purpose: they are not "fallbacks".
EXTERN_OPS = {
    aten.mm.default, aten.bmm.default, aten.addmm.default, aten.baddbmm.default,
    aten.convolution.default, aten._scaled_dot_product_flash_attention_for_cpu.default,
    aten._scaled_dot_product_efficient_attention.default,
    aten._scaled_dot_product_flash_attention.default,
    aten._scaled_dot_product_cudnn_attention.default,
    # a check of a value kernels compute (`one_hot`'s decomposition asserts its classes are in
    # range): the aten call reads it on the host and raises eager's error, as `.item()` does
    aten._assert_async.default, aten._assert_async.msg,
}


class GraphLoweringError(Exception):
    """The graph cannot be generated at all (it then runs as its aten graph, eagerly)."""


def register(*targets: Any) -> Callable:
    """Register a lowering for ops (an OpOverloadPacket registers every overload)."""
    def add(fn: Callable) -> Callable:
        for target in targets:
            overloads = ([getattr(target, name) for name in target.overloads()]
                         if isinstance(target, torch._ops.OpOverloadPacket) else [target])
            for overload in overloads:
                LOWERINGS[overload] = fn
        return fn
    return add


def sym(x: Any) -> sympy.Expr:
    """A size as sympy: ints, symbolic ints and sizes the graph computed (already sympy)."""
    if isinstance(x, sympy.Expr):
        return x
    if isinstance(x, torch.SymInt):
        return _guarded_value(x.node.expr, getattr(x.node, "shape_env", None))
    return sympy.Integer(int(x))


def _guarded_value(expr: sympy.Expr, shape_env: Any) -> sympy.Expr:
    """`expr`, or the number a guard of the trace fixed it to (`s0 // 4` under `Eq(s0 // 4, 1)`:
    a dim of size 1, which broadcasts)."""
    if expr.is_number or not hasattr(shape_env, "static_value"):
        return expr
    expr = expr.replace(lambda e: isinstance(e, (sympy.Max, sympy.Min)),
                        lambda e: _settled_extremum(e, shape_env))
    hint = shape_env.size_hint(expr)
    if hint is not None and (_holds(shape_env, sympy.Eq(expr, hint))
                             or _holds(shape_env, sympy.Eq(hint, expr))):
        return sympy.Integer(hint)
    return expr


def _settled_extremum(expr: sympy.Expr, shape_env: Any) -> sympy.Expr:
    """A `Max`/`Min` as the argument the trace's ranges and guards show it to be, if any (a
    contiguous stride's `Max(1, s1 // 2)` is `s1 // 2` where `s1 >= 2`), else as it is."""
    wins = sympy.Ge if isinstance(expr, sympy.Max) else sympy.Le
    for a in expr.args:
        if all(b is a or _holds(shape_env, wins(a, b)) for b in expr.args):
            return a
    return expr


def _holds(shape_env: Any, fact: sympy.Basic) -> bool:
    """Whether the trace's ShapeEnv (fakecore's) settles `fact` true for every input, from
    its ranges and guards (no new guard)."""
    return hasattr(shape_env, "static_value") and shape_env.static_value(fact) == sympy.true


def compute_dtype(dtype: torch.dtype) -> torch.dtype:
    """Half-precision values are computed in float32 inside kernels."""
    return torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype


def meta_layout(val: torch.Tensor) -> Layout:
    return Layout(tuple(sym(s) for s in val.shape), tuple(sym(s) for s in val.stride()),
                  sym(val.storage_offset()), val.dtype, val.device)


def base_layout(val: torch.Tensor) -> Layout:
    """The layout of a tensor that reaches the wrapper as itself (an input, an extern call's
    result): offsets count from its data pointer, which is where a kernel's pointer starts.
    One with the negative bit (`c.conj().imag`, `torch._neg_view`) means the negation of its
    bytes, which kernels would read as they are: the graph runs as its aten graph."""
    if val.is_neg():
        raise GraphLoweringError("a tensor with the negative bit set (`c.conj().imag`)")
    layout = meta_layout(val)
    return Layout(layout.size, layout.stride, sympy.Integer(0), layout.dtype, layout.device)


# What generated kernels can load and store; any other dtype (complex) runs by aten.
KERNEL_DTYPES = {torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int64,
                 torch.int32, torch.int16, torch.int8, torch.uint8, torch.bool}


# Lowerings of ops whose complex result is made of real inputs (complex_results.py), by op:
# they store the result's parts through its real view.
COMPLEX_RESULTS: dict[Any, Callable] = {}
# Lowerings of ops reading a complex value (complex_results.py), by op: views of it, and real
# results computed from its parts. They refuse whatever complex value they cannot read.
COMPLEX_READERS: dict[Any, Callable] = {}

# Result dtypes kernels store for one op only (no lowering reads them): op -> its dtype.
RESULT_ONLY_DTYPES: dict[Any, torch.dtype] = {}


def _kernel_dtypes_only(node: torch.fx.Node, inputs_only: bool = False) -> bool:
    """Whether the node's tensors, its inputs' only when `inputs_only`, have kernel dtypes."""
    def dtypes(values: list) -> set[torch.dtype]:
        leaves = torch.utils._pytree.tree_leaves(values)
        return {v.dtype for v in leaves if isinstance(v, torch.Tensor)}
    results = set() if inputs_only else \
        dtypes([node.meta.get("val")]) - {RESULT_ONLY_DTYPES.get(node.target)}
    return results | dtypes([a.meta.get("val") for a in node.all_input_nodes]) <= KERNEL_DTYPES


def dense_layout(val: torch.Tensor) -> Layout:
    """The fake value's own strides when they are dense and non-overlapping, else contiguous."""
    layout = meta_layout(val)
    # symbolic strides are ordered by this example's values (a transposed input's `s1` and
    # `s0*s1`), not all alike: else a dense permuted layout would be taken for a non-dense one
    strides = val.stride()
    order = sorted(range(len(layout.size)), key=lambda d: _stride_hint(strides[d]))
    expected = sympy.Integer(1)
    dense = True
    for d in order:
        if layout.size[d] != 1 and layout.stride[d] != expected:
            dense = False
        expected = expected * layout.size[d]
    stride = layout.stride if dense else contiguous_strides(layout.size)
    return Layout(layout.size, tuple(stride), sympy.Integer(0), layout.dtype, layout.device)


def _stride_hint(s: Any) -> int:
    if isinstance(s, torch.SymInt):
        hint = getattr(s.node, "hint", None)
        return int(hint) if hint is not None else 1 << 20
    return int(s)


def _hint(e: sympy.Expr) -> int:
    return int(e) if e.is_Integer else 1 << 20


class GraphLowering:
    """Lowers one aten GraphModule; afterwards `buffers` lists every buffer in program order."""

    def __init__(self, gm: torch.fx.GraphModule) -> None:
        self.gm = gm
        self.inputs: list[InputBuffer | None] = []
        self.input_symbols: list[Any] = []  # per placeholder: a sympy symbol for an int input
        self.buffers: list[Buffer] = []
        self.outputs: list[Any] = []
        self.seeds: list[str] = []
        self.env: dict[torch.fx.Node, Any] = {}
        self.lowered_ops = 0
        self.reductions: dict[tuple, ComputedBuffer] = {}
        shape_env = getattr(gm, "shape_env", None)
        self.size_hints: dict[sympy.Symbol, int] = dict(getattr(shape_env, "var_to_val", {}))
        self.node: torch.fx.Node | None = None
        self.order: dict[torch.fx.Node, int] = {}
        # Buffers whose example tensor starts past its storage's start (an input that is a view,
        # a fallback's view result): the wrapper's `as_strided` of such a base would be wrong.
        self.offset_bases: set[str] = set()
        # Size symbols the wrapper binds from its inputs; others (the size of a fallback's
        # data-dependent result) have no value in generated code.
        self.bound: set[sympy.Symbol] = set()
        # Numbers read on the host from 0-d CPU tensors (`.item()` of an input, or of a host
        # value below), by the tensor's buffer name: the wrapper reads each once the tensor
        # exists, and kernels take it as an argument.
        self.host_scalars: dict[sympy.Symbol, str] = {}
        # Floats the graph computes from sizes and host floats (`interpolate`'s scale, `lr * 0.5`,
        # a `HostOp` per node), and ints Triton cannot compute (`(-2) ** s0`): the wrapper
        # computes each in Python, as eager does, once its symbols are bound; kernels take it
        # as an argument.
        self.wrapper_values: dict[sympy.Symbol, sympy.Expr | HostOp] = {}
        # Sizes computed in floats (`floor(1.7*s0)`, `interpolate`'s by a scale factor) whose
        # node was seen to compute them as sympy writes them (`scaled_size`): the printers
        # compute each as that node does; a size of floats not here makes the graph run as aten.
        self.scaled_sizes: set[sympy.Expr] = set()
        # The clamped start of a slice at a bound of unknown sign (`x[n:]` of an `.item()`):
        # a symbol the wrapper computes (`_bind_slice`)
        self.slice_starts: dict[torch.fx.Node, sympy.Symbol] = {}
        # Host values: 0-d CPU tensors computed from 0-d CPU inputs and constants only (an
        # optimizer's step count and the step size made from it): computed by aten on the
        # host, never by a kernel (a GPU kernel cannot touch CPU memory).
        self.host_nodes = host_nodes(gm)

    # -- buffers ---------------------------------------------------------------------------
    def new_name(self) -> str:
        return f"buf{len(self.buffers)}"

    def add(self, buffer: Buffer) -> Buffer:
        self.buffers.append(buffer)
        return buffer

    def realize(self, t: TensorIR | Reduction | Scan, layout: Layout | None = None
                ) -> Buffer | BufferView:
        """`t` as something with storage: a lazy Pointwise, Reduction or Scan is computed into a
        new buffer (contiguous, unless `layout` is given)."""
        if not isinstance(t, (Pointwise, Reduction, Scan)):
            return t
        if layout is None:
            layout = Layout(t.size, contiguous_strides(t.size), sympy.Integer(0), t.dtype, t.device)
        return self.add(ComputedBuffer(self.new_name(), layout, data=t))

    def new_seed(self) -> str:
        self.seeds.append(f"seed{len(self.seeds)}")
        return self.seeds[-1]

    def realize_readers(self, name: str) -> None:
        """Compute now every lazy value that reads buffer `name` and that a later node reads: a
        write into `name` comes next, and those values are of what `name` held before it."""
        here = self.order[self.node]
        names = self._aliases_of(name)
        for node, value in list(self.env.items()):
            if not any(self.order[u] > here for u in node.users):
                continue
            val = node.meta.get("val")
            if isinstance(value, list):
                vals = val if isinstance(val, (list, tuple)) else [None] * len(value)
                self.env[node] = [self._before_write(v, names, m) for v, m in zip(value, vals)]
            else:
                self.env[node] = self._before_write(value, names, val, node)

    def _before_write(self, t: Any, names: set[str], val: Any,
                      node: torch.fx.Node | None = None) -> Any:
        """`t`, computed now if it reads any of the buffers `names` (one to be written, and
        its views); in an output's layout (traced strides) when `node` is an output."""
        if isinstance(t, BufferView) and t.buffer.name in names:
            t = Pointwise(t.size, t.dtype, t.device, loader(t))
        if isinstance(t, Pointwise) and any(n in names for n, _ in _reads(t.fn, t.size)):
            layout = None if not isinstance(val, torch.Tensor) else \
                self._stored_layout(node) if node is not None else dense_layout(val)
            return self.realize(t, layout)
        return t

    def _aliases_of(self, name: str) -> set[str]:
        """`name` and the buffers that are views of its storage made by aten (an `as_strided`
        fallback of an input: reading it reads `name`)."""
        names = {name}
        for b in self.buffers:
            if isinstance(b, ExternBuffer) and returns_a_view(b.target) and any(
                    isinstance(a, (Buffer, BufferView)) and
                    (a.name if isinstance(a, Buffer) else a.buffer.name) in names
                    for a in b.args[:1]):
                names.add(b.name)
        return names

    # -- the walk --------------------------------------------------------------------------
    def run(self) -> None:
        self.order = {n: i for i, n in enumerate(self.gm.graph.nodes)}
        for node in self.gm.graph.nodes:
            self.node = node
            if node.op == "placeholder":
                self.env[node] = self._placeholder(node)
            elif node.op == "get_attr":
                raise LoweringError("get_attr nodes are lifted before lowering")
            elif node.op == "call_function":
                self.env[node] = self._call(node)
            elif node.op == "output":
                self._output(node.args[0])
            unknown = _unknown_float_size(node.meta.get("val"), self.scaled_sizes)
            if unknown is not None:
                raise LoweringError(f"a size computed in floats: {unknown}")

    def _placeholder(self, node: torch.fx.Node) -> Any:
        val = node.meta.get("val")
        self.bound |= _free_symbols(val)
        if isinstance(val, torch.Tensor):
            buffer = InputBuffer(node.name, base_layout(val))
            self._note_offset(buffer.name, val)
            self.inputs.append(buffer)
            self.input_symbols.append(None)
            return buffer
        self.inputs.append(None)
        self.input_symbols.append(sym(val) if isinstance(val, torch.SymInt) else None)
        return sym(val) if isinstance(val, torch.SymInt) else val

    def _call(self, node: torch.fx.Node) -> Any:
        args, kwargs = torch.fx.node.map_arg((node.args, node.kwargs), lambda n: self.env[n])
        if node.target is operator.getitem and isinstance(args[0], (list, tuple)):
            out = args[0][args[1]]
            if isinstance(out, Pointwise) and len(node.users) > 1:
                out = self.realize(out, self._stored_layout(node))
            return out
        if node in self.host_nodes:
            return self.extern(node, args, kwargs, fallback=False,
                               writes=node.target is aten.copy_.default)
        hosted = [n for n in node.all_input_nodes if n in self.host_nodes]
        if hosted and node.target is not aten._local_scalar_dense.default:
            # Kernels take 0-d host values as numbers (fp32 for floats: not float64 ones); an
            # op on a larger one (a list, a float64 one) runs as an aten call
            lowered = None if any(not isinstance(self.env[n], Buffer) or self.env[n].layout.size
                                  or self.env[n].dtype is torch.float64 for n in hosted) else \
                self._lower(node, *torch.fx.node.map_arg((node.args, node.kwargs), lambda n: (
                    self.as_number(self.env[n], node) if n in self.host_nodes else self.env[n])))
            return lowered if lowered is not None else self.extern(
                node, args, kwargs, fallback=node.target not in EXTERN_OPS)
        if node.target is aten._local_scalar_dense.default:
            found = self.host_scalar(node, args[0])
            if found is not None:
                return found
        if not isinstance(node.target, torch._ops.OpOverload) or isinstance(
                node.meta.get("val"), torch.SymInt):
            return self._symbolic_arith(node, args)
        if node.target is aten._assert_scalar.default:  # a runtime assert: checked on the host
            return self.extern(node, args, kwargs, fallback=False)
        if node.target in (aten.slice.Tensor, aten.slice_copy.Tensor):
            self._bind_slice(node, args, kwargs)
        lowered = self._lower(node, args, kwargs)
        if lowered is not None:
            return lowered
        return self.extern(node, args, kwargs, fallback=node.target not in EXTERN_OPS)

    def _lower(self, node: torch.fx.Node, args: tuple, kwargs: dict) -> Any:
        """`node` by its lowering, or None when it has none or its lowering gives up."""
        lowering = LOWERINGS.get(_functional_twin(node) or node.target)
        result = node.meta.get("val")
        complex_result = isinstance(result, torch.Tensor) and result.dtype.is_complex
        reads_complex = any(isinstance(v := a.meta.get("val"), torch.Tensor) and v.dtype.is_complex
                            for a in node.all_input_nodes)
        if reads_complex:
            lowering = COMPLEX_READERS.get(node.target)
        elif complex_result:
            lowering = COMPLEX_RESULTS.get(node.target)
        if lowering is None or not (reads_complex or
                                    _kernel_dtypes_only(node, inputs_only=complex_result)) \
                or not self._sizes_bound(node) \
                or node.kwargs.get("pin_memory"):  # (page-locked memory: the aten call makes it)
            return None
        state = (len(self.buffers), len(self.seeds), dict(self.reductions))
        try:
            out = lowering(self, node, *args, **kwargs)
        except LoweringError:  # undo what the lowering added before it gave up
            out = None
            del self.buffers[state[0]:], self.seeds[state[1]:]
            self.reductions = state[2]
        if out is None:
            return None
        self.lowered_ops += 1
        if isinstance(out, Pointwise) and len(node.users) > 1:
            out = self.realize(out, self._stored_layout(node))
        return out

    def as_number(self, buffer: Buffer, user: torch.fx.Node) -> Any:
        """A 0-d host value as kernels take it: a 0-d value (on the device of `user`'s result)
        of the number the wrapper reads on the host once the tensor exists, passed as a
        kernel argument."""
        symbol = next((s for s, name in self.host_scalars.items() if name == buffer.name), None)
        if symbol is None:
            integral = not (buffer.dtype.is_floating_point or buffer.dtype.is_complex)
            symbol = sympy.Symbol(f"host{len(self.host_scalars)}", integer=integral, real=True)
            self.host_scalars[symbol] = buffer.name
            self.bound.add(symbol)
        val = user.meta.get("val")
        device = val.device if isinstance(val, torch.Tensor) else buffer.device
        value = constant(symbol, buffer.dtype)
        return Pointwise((), buffer.dtype, device, lambda idx: value)

    def _symbolic_arith(self, node: torch.fx.Node, args: tuple) -> Any:
        """Size arithmetic on symbols (`sym_size`, `operator.mul`, ...) evaluates to sympy, and
        so does arithmetic on a float read from the host (`lr * 0.5`), a size made a float
        (`sym_float(s0 * s1)`, the count a group norm divides by: kernels convert it) and a
        comparison of them (the condition of a runtime assert, which the wrapper checks)."""
        val = node.meta.get("val")
        if type(val) is bool and (raw := self._raw_comparison(node)) is not None:
            return raw  # a comparison the ShapeEnv decided (an assert's condition)
        if isinstance(val, (torch.SymInt, int)):
            expr = sym(val)
            if any(not s.is_integer for s in expr.free_symbols):
                # An int made from a float argument (`int(s)`, `math.floor(s)`): truncation
                # and flooring of a float are not generated (Piecewise, float `//`).
                raise LoweringError(f"an integer computed from a float argument: {expr}")
            if any(not p.exp.is_number for p in expr.atoms(sympy.Pow)):
                return self._wrapper_value(expr)  # `(-2) ** s0`: Triton has no integer power
            if expr.atoms(sympy.Float) and scaled_size(node, expr, self.env, self.wrapper_values):
                self.scaled_sizes.add(expr)
            return expr
        if isinstance(val, (torch.SymBool, bool)):  # a runtime assert's condition
            if not isinstance(val, torch.SymBool):
                return sympy.sympify(val)
            # (as made: the check of `torch._check(n == 3)` is `Eq(u0, 3)`, which the
            # replacement u0 -> 3 it taught the ShapeEnv makes True)
            raw = getattr(val.node, "_expr", None)
            return raw if raw is not None and raw.free_symbols <= self.bound else val.node.expr
        if isinstance(val, torch.SymFloat):
            if node.target is torch.sym_float and isinstance(args[0], sympy.Expr) \
                    and args[0].is_integer and args[0].free_symbols <= self.bound:
                return args[0]  # a size made a float (a count to divide by): kernels convert it
            return self._host_float(node, args)
        raise LoweringError(f"cannot lower {node.target}")

    def _raw_comparison(self, node: torch.fx.Node) -> sympy.Basic | None:
        """A comparison of sizes the ShapeEnv folded to a bool (`sym_size(x[:n]) == 2`, True
        once the check itself taught it u1 -> 2: `torch.stack([x[:n], y])`), as made from its
        operands' symbols, where the wrapper binds them; else None."""
        relation = _RELATIONS.get(node.target)
        if relation is None or len(node.args) != 2 or node.kwargs:
            return None
        operands = [_raw_size(a) for a in node.args]
        if None in operands:
            return None
        expr = relation(*operands)
        if expr in (sympy.true, sympy.false) or not expr.free_symbols <= self.bound:
            return None
        return expr

    def _host_float(self, node: torch.fx.Node, args: tuple) -> sympy.Symbol:
        """The symbol of a float the graph computes from numbers known on the host (floats
        read there, sizes, constants): the wrapper computes it in Python, one node at a time,
        from the node's own arguments, as eager computes Python floats (sympy's expression of
        it is simplified across nodes: `(t + 1e16) - 1e16` is `t` there, 0.0 in IEEE)."""
        template = HOST_FLOAT_OPS.get(node.target) or _host_function(node.target, len(args))
        if template is None or node.kwargs or len(args) != template.count("{"):
            raise LoweringError(f"cannot lower {node.target} of floats")
        operands = []
        for i, (a, value) in enumerate(zip(node.args, args)):
            if isinstance(value, sympy.Number):
                value = int(value) if value.is_Integer else float(value)
            if isinstance(value, sympy.Expr):
                if not value.free_symbols <= self.bound:
                    raise LoweringError(f"a float of {value}, not known on the host")
                if value.is_integer and isinstance(a, torch.fx.Node) and isinstance(
                        a.meta.get("val"), torch.SymFloat):  # `sym_float(s0)`, an int here
                    template = template.replace(f"{{{i}}}", f"float({{{i}}})")
            elif not isinstance(value, (bool, int, float)):
                raise LoweringError(f"cannot lower {node.target} of {type(value).__name__}")
            operands.append(value)
        return self._wrapper_value(HostOp(template, tuple(operands)))

    def _wrapper_value(self, expr: sympy.Expr | HostOp) -> sympy.Symbol:
        """The symbol of `expr` (an int of sizes kernels cannot compute, or one operation on
        host numbers), which the wrapper computes."""
        for symbol, known in self.wrapper_values.items():
            if isinstance(expr, HostOp) and isinstance(known, HostOp):
                if known.key() == expr.key():  # (one `-lr` for every parameter's update)
                    return symbol
            elif not isinstance(expr, HostOp) and known == expr:
                return symbol
        integer = not isinstance(expr, HostOp) and bool(expr.is_integer)
        symbol = sympy.Symbol(f"host{'i' if integer else 'f'}{len(self.wrapper_values)}",
                              integer=integer, real=True)
        self.wrapper_values[symbol] = expr
        self.bound.add(symbol)
        return symbol

    def host_scalar(self, node: torch.fx.Node, x: Any) -> sympy.Expr | None:
        """`x.item()` of a 0-d CPU input or host value, or an integral `x.item()` of any
        tensor: its symbol, which the wrapper binds by reading the tensor on the host (no
        device sync for a CPU tensor; for a tensor kernels compute, once they have, as
        eager's `.item()` syncs) and kernels take as an argument; None for any other
        `.item()` (a float read out of a tensor kernels compute, which the trace made a
        constant, see `CompiledGraph`)."""
        val = node.meta.get("val")
        expr = symbol_expr(val) if isinstance(
            val, (torch.SymFloat, torch.SymInt, torch.SymBool)) else None  # (u0, not its value)
        if isinstance(val, torch.SymBool) and isinstance(expr, sympy.Eq) and expr.rhs == 1:
            expr = expr.lhs  # a bool's `.item()` is `Eq(u0, 1)` of an int symbol read as 0 or 1
        if expr is None or not expr.is_Symbol:
            return None
        symbol = expr
        if isinstance(x, (InputBuffer, ExternBuffer)) and x.layout is not None \
                and not x.layout.size and x.layout.device.type == "cpu":
            self.host_scalars[symbol] = x.name  # read once the tensor exists
        elif isinstance(val, torch.SymFloat) or not is_tensor(x):
            return None
        else:
            # An int (or bool) read out of a tensor kernels compute (`idx.max().item()`): an
            # extern step (which ends the kernel that computes it) reads it, so the kernels
            # that take it come after.
            name = self.new_name()
            self.add(ExternBuffer(name, None, target=node.target, args=(self.realize(x),),
                                  kwargs={}, fallback=False))
            self.host_scalars[symbol] = name
        self.bound.add(symbol)
        return symbol

    def _bind_slice(self, node: torch.fx.Node, args: tuple, kwargs: dict) -> None:
        """The new unbacked symbols of a slice whose bounds the trace could not place (`x[:n]`,
        `x[n:]` of an int `.item()` n, whose sign no guard decides): fakecore's slice makes its
        length (before the step) and its clamped start new symbols (`u1`, bounded by the dim,
        see fakecore's `_slice_with_unbacked`). The wrapper computes them as Python slices a
        range, once the bounds are known on the host (`u1 = len(range(10)[0:u0])`: clamped
        to the dim, a negative bound counted from its end), so that kernels take them as
        sizes; the lowering reads the clamped start as `slice_starts`."""
        shape_env = getattr(self.gm, "shape_env", None)
        producers = getattr(shape_env, "unbacked_producers", {})
        val = node.meta.get("val")
        bound = dict(zip(("self", "dim", "start", "end", "step"), args)) | kwargs
        x = bound["self"]
        if not isinstance(val, torch.Tensor) or not is_tensor(x) or not x.size or \
                len(x.size) != val.dim():
            return
        dim = bound.get("dim", 0) % len(x.size)
        n, start, end = x.size[dim], bound.get("start"), bound.get("end")
        start = sympy.Integer(0) if start is None else start
        end = n if end is None or isinstance(end, int) and end >= sys.maxsize else end
        if any(not isinstance(o, (int, sympy.Expr)) or isinstance(o, sympy.Expr) and
               not o.free_symbols <= self.bound for o in (n, start, end)):
            return

        def new_symbols(v: Any) -> set[sympy.Symbol]:
            # (as made: a symbol a check replaced, `torch.stack([x[:n], y])` teaching u1 -> 2,
            # is still computed, so that the check of `Eq(u1, 2)` reads it; replaced, it was
            # never bound and the check was folded to True: the kernels read past the slice)
            expr = symbol_expr(v) if isinstance(v, torch.SymInt) else sympy.Integer(v)
            return {s for s in expr.free_symbols - self.bound
                    if str(producers.get(s, "")).startswith("aten.slice")}
        for s in new_symbols(val.shape[dim]):
            self.wrapper_values[s] = HostOp("len(range({0})[{1}:{2}])", (n, start, end))
            self.bound.add(s)
        for s in new_symbols(val.storage_offset()):
            self.wrapper_values[s] = HostOp("range({0})[{1}:{2}].start", (n, start, end))
            self.bound.add(s)
            self.slice_starts[node] = s

    def extern(self, node: torch.fx.Node, args: tuple, kwargs: dict, fallback: bool,
               writes: bool = False) -> Any:
        schema = getattr(node.target, "_schema", None)
        if not writes and schema is not None and any(
                a.alias_info is not None and a.alias_info.is_write for a in schema.arguments):
            # Lazy values read buffers when they are computed, which may be after this call.
            raise GraphLoweringError(f"{node.target} writes into its arguments")
        # Lazy arguments are computed in the layout the trace saw (when it is dense), as the
        # op's output layout may follow its inputs'.
        traced = torch.fx.node.map_arg((node.args, node.kwargs), lambda n: n.meta.get("val"))
        if node.target in (aten.as_strided.default, aten.as_strided_copy.default) and not (
                isinstance(args[0], (InputBuffer, ExternBuffer)) or isinstance(
                    args[0], BufferView) and isinstance(args[0].buffer, InputBuffer)):
            # a view of the storage: a value we compute (lazily, a scatter's, a buffer's) must be
            # laid out exactly as eager's and be its storage's only elements (not a row of a
            # bigger tensor), and a view of a buffer we computed has a storage laid out as we
            # chose, not as eager's
            v = traced[0][0]
            if not fills_its_storage_densely(v) or isinstance(args[0], BufferView) or (
                    isinstance(args[0], ComputedBuffer)
                    and args[0].layout.stride != dense_layout(v).stride):
                raise GraphLoweringError(f"{node.target} of a value not laid out as eager's")
        args, kwargs = _zip_map((args, kwargs), traced, lambda t, v: self.realize(
            t, dense_layout(v) if isinstance(v, torch.Tensor) else None))
        val = node.meta["val"]
        name = self.new_name()
        if isinstance(val, torch.Tensor):
            self._note_offset(name, val)
            return self.add(ExternBuffer(name, base_layout(val), target=node.target, args=args,
                                         kwargs=kwargs, fallback=fallback))
        if val is not None and not isinstance(val, (list, tuple)):
            raise LoweringError(f"{node.target} returns {type(val).__name__}")
        parent = self.add(ExternBuffer(name, None, target=node.target, args=args, kwargs=kwargs,
                                       fallback=fallback))
        if val is None:  # a check that raises or returns nothing
            return None
        items = []
        for i, v in enumerate(val):
            if isinstance(v, torch.Tensor):
                items.append(self.add(ExternBuffer(self.new_name(), base_layout(v),
                                                   parent=parent.name, item=i)))
                self._note_offset(items[-1].name, v)
            else:
                items.append(None)
        return items

    def _sizes_bound(self, node: torch.fx.Node) -> bool:
        values = [node.meta.get("val")] + [a.meta.get("val") for a in node.all_input_nodes]
        return _free_symbols(values) <= self.bound

    def _note_offset(self, name: str, val: torch.Tensor) -> None:
        offset = sym(val.storage_offset())
        if offset != 0:
            self.offset_bases.add(name)

    def _stored_layout(self, node: torch.fx.Node) -> Layout:
        """The layout a lazy value is stored in (it is an output, or several nodes read it): an
        output keeps the traced strides even when they are not dense (a view of a temporary,
        `y.expand(...)`, `y.diagonal()`: elements sharing a place are equal), anything else
        gets dense ones, unless an output is a view of it (`y = t.expand(...)` read twice and
        `y[..., ::2]` returned: eager's output has `y`'s strides)."""
        val = node.meta["val"]
        returned = self.gm.graph.output_node().all_input_nodes
        if any(user.op == "output" for user in node.users) or any(
                _aliases(node, n) for n in returned):
            return base_layout(val)
        return dense_layout(val)

    def _output(self, values: Any) -> None:
        out_nodes = values if isinstance(values, (list, tuple)) else [values]
        returned: dict[str, torch.fx.Node] = {}  # computed buffer -> the output node returning it
        for n in out_nodes:
            value = self.env[n] if isinstance(n, torch.fx.Node) else n
            if isinstance(n, torch.fx.Node) and isinstance(n.meta.get("val"), torch.SymBool) \
                    and isinstance(value, sympy.Expr) and value.is_integer:
                value = sympy.Eq(value, 1)  # a bool's `.item()`, which kernels take as 0 or 1
            if isinstance(n, torch.fx.Node) and isinstance(n.meta.get("val"), torch.SymFloat) \
                    and isinstance(value, sympy.Expr) and value.is_integer:
                # a size made a float (`float(x.shape[0])`), which kernels take as the int it
                # is: returned, it is eager's float
                value = self._wrapper_value(HostOp("float({0})", (value,)))
            base = value.buffer if isinstance(value, BufferView) else value
            first = returned.setdefault(base.name, n) if isinstance(base, ComputedBuffer) else n
            if first is not n and not _aliases(first, n):
                # one buffer for two values eager keeps apart (identical reductions, `argmax`
                # and `max(...).indices`): a write into one output must not change the other
                value = Pointwise(value.size, value.dtype, value.device, loader(value))
            if isinstance(value, Pointwise):
                value = self.realize(value, self._stored_layout(n))
            self.outputs.append(value)


def _aliases(a: torch.fx.Node, b: torch.fx.Node) -> bool:
    """Whether the traced values of `a` and `b` share storage."""
    va, vb = a.meta.get("val"), b.meta.get("val")
    return isinstance(va, torch.Tensor) and isinstance(vb, torch.Tensor) and \
        torch._C._is_alias_of(va, vb)


def host_nodes(gm: torch.fx.GraphModule) -> set[torch.fx.Node]:
    """The nodes whose values are host values: 0-d CPU tensors that are inputs or constants,
    CPU tensors computed by an aten op from host values only (an optimizer's `step + 1`, the
    step sizes `lr / (1 - beta ** step)` and their `stack`), and copies of host values into
    host inputs (the step count's update)."""
    def on_cpu(val: Any, zero_d: bool) -> bool:
        if isinstance(val, (list, tuple)):  # a foreach op's results
            return bool(val) and all(on_cpu(v, zero_d) for v in val)
        return isinstance(val, torch.Tensor) and val.device.type == "cpu" and (
            val.dim() == 0 or not zero_d)

    def has_tensors(node: torch.fx.Node) -> bool:
        val = node.meta.get("val")
        return isinstance(val, torch.Tensor) or isinstance(val, (list, tuple)) and any(
            isinstance(v, torch.Tensor) for v in val)

    host: set[torch.fx.Node] = set()
    others = False  # tensors that are not host values: what kernels are for
    for node in gm.graph.nodes:
        tensors = [n for n in node.all_input_nodes if has_tensors(n)]  # (numbers: on the host)
        val = node.meta.get("val")
        if node.op == "placeholder" and on_cpu(val, zero_d=True):
            host.add(node)
        elif node.target is operator.getitem and tensors and all(n in host for n in tensors):
            host.add(node)  # one result of a host foreach op
        elif node.op == "call_function" and isinstance(node.target, torch._ops.OpOverload) \
                and all(n in host for n in tensors) and on_cpu(val, zero_d=not tensors) and (
                    node.target is aten.copy_.default or not node.target._schema.is_mutable):
            host.add(node)
        elif isinstance(node.meta.get("val"), torch.Tensor):
            others = True
    # A host value of more than one element that a CPU kernel op reads (`x.expand(5, 10) * y`
    # of a 0-d `x`) would make that op an aten call: it is computed in kernels too, from the
    # 0-d host values it reads as numbers, and so is every host value computed from it.
    while moved := {n for n in host if n.op == "call_function" and (
            _larger(n) and any(u not in host and on_cpu(u.meta.get("val"), zero_d=False)
                               for u in n.users)
            or any(i not in host and has_tensors(i) for i in n.all_input_nodes))}:
        host -= moved
    # A constant (`masked_fill`'s fill as a 0-d tensor) that only kernels read is a constant of
    # theirs, not a number to make and read on the host at every call.
    host -= {n for n in host if n.op == "call_function" and n.target in CONSTANT_FACTORIES
             and not n.all_input_nodes and n.meta["val"].dtype in KERNEL_DTYPES
             and not any(u in host for u in n.users)}
    return host if others else set()  # a graph of 0-d CPU tensors alone is all kernels


def _larger(node: torch.fx.Node) -> bool:
    """Whether the node's value is a tensor of one dim or more."""
    val = node.meta.get("val")
    return isinstance(val, torch.Tensor) and val.dim() > 0


@dataclasses.dataclass(frozen=True)
class HostOp:
    """One Python operation on numbers known on the host, as the wrapper writes it: `template`
    with `{0}`, `{1}` for its operands (symbols, size expressions, constants)."""
    template: str
    operands: tuple

    def key(self) -> tuple:
        """What makes two of them the same computation: numbers by type and repr (`s * 0.0`
        is not `s * -0.0`, nor `s * True` `s * 1`, though Python's `==` says so)."""
        return (self.template, tuple(
            (type(o), repr(o)) if isinstance(o, (bool, int, float)) else (type(o), o)
            for o in self.operands))

    @property
    def free_symbols(self) -> set[sympy.Symbol]:
        return set().union(*[o.free_symbols for o in self.operands if isinstance(o, sympy.Expr)])


def _raw_size(a: Any) -> sympy.Expr | None:
    """An int of the graph (a size, size arithmetic) as made from its symbols, before the
    ShapeEnv's replacements (`6 * sym_size(x[:, :n], 1)` is `6*u1`, not 12); None for others."""
    if type(a) is int:
        return sympy.Integer(a)
    if not isinstance(a, torch.fx.Node):
        return None
    if a.target in _RAW_ARITH and len(a.args) == 2 and not a.kwargs:
        operands = [_raw_size(x) for x in a.args]
        return None if None in operands else a.target(*operands)
    v = a.meta.get("val")
    if isinstance(v, torch.SymInt):
        return symbol_expr(v)
    return sympy.Integer(v) if type(v) is int else None


_RAW_ARITH = (operator.add, operator.sub, operator.mul)

_RELATIONS = {operator.eq: sympy.Eq, operator.ne: sympy.Ne, operator.lt: sympy.Lt,
              operator.le: sympy.Le, operator.gt: sympy.Gt, operator.ge: sympy.Ge}


# Python's operators as the wrapper writes them; other functions of floats (`math.cos`,
# `torch.sym_max`) are called by their names (`_host_function`).
HOST_FLOAT_OPS = {
    operator.add: "{0} + {1}", operator.sub: "{0} - {1}", operator.mul: "{0} * {1}",
    operator.truediv: "{0} / {1}", operator.mod: "{0} % {1}", operator.pow: "{0} ** {1}",
    operator.neg: "-{0}", operator.pos: "+{0}", operator.abs: "abs({0})",
    torch.sym_float: "float({0})",
    # (in a runtime assert fxtrace wrote; a trace records them as `math.log`, `math.exp`)
    fakecore.sym_log: "math.log({0})", fakecore.sym_exp: "math.exp({0})",
}


def _host_function(target: Any, count: int) -> str | None:
    """A call of `target` with `count` operands where it is a function of `math` or `torch`
    (`math.log2({0})`, `torch.sym_max({0}, {1})`), else None."""
    name = getattr(target, "__name__", "")
    for module in (math, torch):
        if callable(target) and getattr(module, name, None) is target:
            return f"{module.__name__}.{name}({', '.join(f'{{{i}}}' for i in range(count))})"
    return None


def returns_a_view(target: Any) -> bool:
    """Whether aten op `target` returns a view of its first argument (`as_strided`)."""
    schema = getattr(target, "_schema", None)
    return (schema is not None and len(schema.returns) == 1
            and schema.returns[0].alias_info is not None
            and not schema.returns[0].alias_info.is_write)


def fills_its_storage_densely(val: Any) -> bool:
    """Whether traced value `val`'s storage holds its elements alone, each once (strides in
    any order): it starts at the storage's start, has no gaps or overlaps, and fills it."""
    return isinstance(val, torch.Tensor) and sym(val.storage_offset()) == 0 and \
        dense_layout(val).stride == meta_layout(val).stride and \
        sym(val.untyped_storage().nbytes()) == sym(val.numel() * val.element_size())


def _free_symbols(tree: Any) -> set[sympy.Symbol]:
    """The size symbols in the shapes and strides of the tensors (and the symbolic ints) of a
    pytree of fake values."""
    out: set[sympy.Symbol] = set()
    for v in torch.utils._pytree.tree_leaves(tree):
        parts = [*v.shape, *v.stride()] if isinstance(v, torch.Tensor) else [v]
        for p in parts:
            if isinstance(p, torch.SymInt):
                out |= p.node.expr.free_symbols
    return out


# The nodes that round a float to an int, and how sympy writes it of a product of sizes and
# a float (`trunc`, also `torch.sym_int`'s, as `floor` where the product is nonnegative)
_ROUNDINGS = {math.floor: sympy.floor, math.ceil: sympy.ceiling, math.trunc: sympy.floor}


def scaled_size(node: torch.fx.Node, expr: sympy.Expr, env: dict,
                wrapper_values: dict) -> bool:
    """Whether `expr`, the int `node` computes, is `floor(c*e)` (or `ceiling`) of the float its
    argument's node computes as `float(e) * c` (`math.trunc(float(s0) * 1.7)`, `interpolate`'s
    output size): one float64 product of a size and a float, rounded once. sympy's form of
    other float arithmetic is not the graph's (`1.7 * (3 * s0)` is `5.1*s0`, `1.7 * (s0 + 1)`
    is `1.7*s0 + 1.7`): those are not."""
    rounding = _ROUNDINGS.get(node.target)
    source = node.args[0] if len(node.args) == 1 and not node.kwargs else None
    product = wrapper_values.get(env.get(source)) if isinstance(source, torch.fx.Node) else None
    if rounding is None or not isinstance(product, HostOp) or not isinstance(expr, rounding):
        return False
    scale, size = expr.args[0].as_coeff_Mul()
    if not isinstance(scale, sympy.Float) or size.atoms(sympy.Float):
        return False
    made = {HostOp("float({0}) * {1}", (size, float(scale))).key(),
            HostOp("{0} * float({1})", (float(scale), size)).key()}
    return product.key() in made


def _unknown_float_size(tree: Any, known: set[sympy.Expr]) -> sympy.Expr | None:
    """A size, stride or int of a pytree of fake values computed from floats other than the
    sizes `known`, if any."""
    for v in torch.utils._pytree.tree_leaves(tree):
        parts = [*v.shape, *v.stride()] if isinstance(v, torch.Tensor) else [v]
        for p in parts:
            if isinstance(p, torch.SymInt) and p.node.expr.atoms(sympy.Float) and \
                    sym(p).xreplace({k: sympy.Dummy() for k in known}).atoms(sympy.Float):
                return sym(p)
    return None


def _reads(fn: Callable[[Index], Value], size: Sequence[sympy.Expr]) -> list:
    """Every (buffer name, index) that `fn` loads, at an index of symbols `i0, i1, ...`."""
    return loads(fn([sympy.Symbol(f"i{d}", integer=True, nonnegative=True)
                     for d in range(len(size))]))


def _functional_twin(node: torch.fx.Node) -> Any:
    """`add` for `add_(t, ...)` when nothing else reads `t` (a temporary that a decomposition
    updates in place, e.g. rms_norm's `mean.add_(eps)`): the same value, computed out of place."""
    name = node.target._schema.name.split("::")[-1]
    first = node.args[0] if node.args else None
    if not (name.endswith("_") and isinstance(first, torch.fx.Node) and first.op != "placeholder"
            and len(first.users) == 1):
        return None
    schema = getattr(first.target, "_schema", None)
    if schema is None or any(r.alias_info is not None for r in schema.returns):
        return None  # `t` is a view: writing it writes another tensor
    packet = getattr(torch.ops.aten, name[:-1], None)
    return getattr(packet, node.target._overloadname, None) if packet is not None else None


def _zip_map(tree: Any, traced: Any, fn: Callable) -> Any:
    """`tree` with each IR tensor `t` replaced by `fn(t, v)`, `v` the value at the same place of
    `traced` (the node's arguments as the trace saw them)."""
    if isinstance(tree, (Buffer, BufferView, Pointwise)):
        return fn(tree, traced)
    if isinstance(tree, (list, tuple)):
        seconds = traced if isinstance(traced, (list, tuple)) and len(traced) == len(tree) \
            else [None] * len(tree)
        return type(tree)(_zip_map(x, v, fn) for x, v in zip(tree, seconds))
    if isinstance(tree, dict):
        return {k: _zip_map(x, traced.get(k) if isinstance(traced, dict) else None, fn)
                for k, x in tree.items()}
    return tree


# -- pointwise -------------------------------------------------------------------------------

def is_tensor(x: Any) -> bool:
    return isinstance(x, (Buffer, BufferView, Pointwise))


def broadcast_loader(x: Any, out_size: Sequence[sympy.Expr], dtype: torch.dtype) -> Callable:
    """A loader of `x` (tensor or scalar) indexed by the broadcast output's index, as `dtype`."""
    if not is_tensor(x):  # a number: constant, or symbolic (a size, a float read on the host)
        c = constant(x, dtype)
        return lambda idx: c
    load = loader(x)
    size = x.size
    skip = len(out_size) - len(size)

    def fn(idx):
        mine = [sympy.Integer(0) if (s == 1 and o != 1) else i
                for i, s, o in zip(idx[skip:], size, out_size[skip:])]
        return to_dtype(load(mine), dtype)
    return fn


def pointwise(lower: GraphLowering, inputs: Sequence[Any], body: Callable[..., Value],
              in_dtype: torch.dtype | None = None) -> Pointwise:
    """The node's output as `body(*values)` of its inputs, loaded as `in_dtype` (default: the
    output's compute dtype), broadcast to the output's size."""
    val = lower.node.meta["val"]
    size = tuple(sym(s) for s in val.shape)
    out_dtype = val.dtype
    in_dtype = in_dtype or compute_dtype(out_dtype)
    loaders = [broadcast_loader(x, size, in_dtype) for x in inputs]
    cd = compute_dtype(out_dtype)
    return Pointwise(size, out_dtype, val.device,
                     lambda idx: to_dtype(body(*[f(idx) for f in loaders]), cd))


def fits(value: Any, dtype: torch.dtype) -> bool:
    """Whether eager converts the number `value` to `dtype` (c10's `overflows`): else it raises
    "value cannot be converted to type ... without overflow". A float dtype holds infinities,
    NaN and finite values up to its largest (a complex one: its real part's); an unsigned one
    also the negatives of its range (-1 is 255); bool anything. A symbolic value (a size
    expression, a SymInt or SymFloat, a number read on the host) is known only at run time:
    it fits only a dtype that holds every value of its kind in practice (an int: int64 and
    the floats; a float: the floats; not float16, whose 65504 is in reach), so a narrower
    dtype runs the aten op, which checks the value as eager does, rather than a kernel that
    wraps it."""
    if isinstance(value, bool) or dtype == torch.bool:
        return True
    if not isinstance(value, (int, float)):
        kind = _symbolic_kind(value)
        if kind is None:
            return True
        if dtype in (torch.float16, torch.complex32):
            return False
        return dtype.is_floating_point or dtype.is_complex or kind is int and dtype == torch.int64
    if dtype.is_floating_point or dtype.is_complex:
        return not math.isfinite(value) or abs(value) <= torch.finfo(dtype).max
    info = torch.iinfo(dtype)
    low = -info.max if info.min == 0 and isinstance(value, int) else info.min
    return low <= value <= info.max


def _symbolic_kind(value: Any) -> type | None:
    """int or float for a number known only at run time, else None (a tensor, None, ...)."""
    if isinstance(value, (torch.SymInt, torch.SymFloat)):
        return int if isinstance(value, torch.SymInt) else float
    if isinstance(value, sympy.Expr):  # (a Symbol is a Boolean too; a condition is no Expr)
        return int if value.is_integer else float
    if isinstance(value, Pointwise) and not value.size and value.dtype in (
            torch.int64, torch.float64):  # a number read on the host (`as_number`)
        return int if value.dtype == torch.int64 else float
    return None


def require_fit(value: Any, dtype: torch.dtype) -> None:
    """LoweringError where eager raises converting `value` to `dtype`: the aten call raises."""
    if not fits(value, dtype):
        raise LoweringError(f"{value} does not fit {dtype}")


def promoted(lower: GraphLowering, *args: Any) -> torch.dtype:
    """The dtype kernels compute a binary op in: `compute_dtype` of `result_type`."""
    return compute_dtype(result_type(lower, *args))


def result_type(lower: GraphLowering, *args: Any) -> torch.dtype:
    """The dtype aten promotes the node's first `len(args)` arguments to (tensors and
    scalars)."""
    metas = [a.meta["val"] if isinstance(a, torch.fx.Node) else a for a in lower.node.args[:len(args)]]
    return torch.result_type(*metas) if len(metas) > 1 else metas[0].dtype


# Math whose generated form (triton_helpers) is only as precise as float32: float64 runs as aten.
FP32_PRECISE = {"erfc", "atan", "asin", "acos", "atan2", "sinh"}


# Ops eager's CPU and CUDA kernels refuse for a bool input ("floor_vml_cpu" not implemented
# for 'Bool', "Boolean inputs not supported for relu"), where meta kernels and kernels here
# compute a value: the aten call raises eager's error.
BOOL_REFUSED = {"floor", "ceil", "trunc", "round", "abs", "relu"}


def _bool_operand(lower: GraphLowering) -> bool:
    """Whether the node's first argument is a bool tensor."""
    first = lower.node.args[0] if lower.node.args else None
    val = first.meta.get("val") if isinstance(first, torch.fx.Node) else None
    return isinstance(val, torch.Tensor) and val.dtype == torch.bool


def _refuse_bools(lower: GraphLowering, what: str) -> None:
    """A bool result of a bool operand (`mask % True`, `mask.clamp(max=True)`): eager's kernels
    are not implemented for 'Bool' there, and the aten call raises their error."""
    if _bool_operand(lower) and lower.node.meta["val"].dtype == torch.bool:
        raise LoweringError(f"{what} of bools (eager refuses them)")


def _unary(name: str) -> Callable:
    def lowering(lower, node, x, *rest, **kwargs):
        if rest or kwargs:
            raise LoweringError(f"{node.target} with extra arguments")
        if name in FP32_PRECISE and lower.node.meta["val"].dtype == torch.float64:
            raise LoweringError(f"float64 {name}")
        if name in BOOL_REFUSED and _bool_operand(lower):
            raise LoweringError(f"{name} of bools (eager refuses them)")
        if name in ("floor", "ceil", "trunc", "round") and \
                not lower.node.meta["val"].dtype.is_floating_point:
            return pointwise(lower, [x], lambda a: a)  # integers are whole already
        return pointwise(lower, [x], lambda a: op(name, a))
    return lowering


for _name, _target in [
    ("neg", aten.neg), ("abs", aten.abs), ("exp", aten.exp), ("exp2", aten.exp2),
    ("log", aten.log), ("log2", aten.log2), ("sqrt", aten.sqrt), ("rsqrt", aten.rsqrt),
    ("sin", aten.sin), ("cos", aten.cos), ("sigmoid", aten.sigmoid), ("tanh", aten.tanh),
    ("erf", aten.erf), ("floor", aten.floor), ("ceil", aten.ceil), ("trunc", aten.trunc),
    ("reciprocal", aten.reciprocal), ("log1p", aten.log1p), ("expm1", aten.expm1),
    ("relu", aten.relu), ("sign", aten.sign), ("round", aten.round.default),
    ("tan", aten.tan), ("log10", aten.log10), ("erfc", aten.erfc), ("cosh", aten.cosh),
    ("asinh", aten.asinh), ("acosh", aten.acosh), ("atanh", aten.atanh), ("asin", aten.asin),
    ("acos", aten.acos), ("atan", aten.atan), ("sinh", aten.sinh),
]:
    register(_target)(_unary(_name))


@register(aten.signbit)
def _signbit(lower, node, x):
    if x.dtype.is_floating_point:
        return pointwise(lower, [x], lambda a: op("signbit", a, dtype=torch.bool),
                         in_dtype=compute_dtype(x.dtype))
    return pointwise(lower, [x], lambda a: op("lt", a, constant(0, a.dtype), dtype=torch.bool),
                     in_dtype=x.dtype)


@register(aten.bitwise_not)
def _bitwise_not(lower, node, x):
    if lower.node.meta["val"].dtype == torch.bool:
        return pointwise(lower, [x], lambda a: op("logical_not", a))
    return pointwise(lower, [x], lambda a: op("bitwise_not", a))


@register(aten.logical_not)
def _logical_not(lower, node, x):
    return pointwise(lower, [x], lambda a: op("logical_not", a), in_dtype=torch.bool)


@register(aten.isnan, aten.isinf)
def _isnan(lower, node, x):
    name = "isnan" if node.target.overloadpacket is aten.isnan else "isinf"
    return pointwise(lower, [x], lambda a: op(name, a, dtype=torch.bool),
                     in_dtype=compute_dtype(x.dtype if is_tensor(x) else torch.float32))


def _binary(name: str) -> Callable:
    def lowering(lower, node, a, b, *, alpha=None):
        kind = name
        if name in FP32_PRECISE and lower.node.meta["val"].dtype == torch.float64:
            raise LoweringError(f"float64 {name}")
        if name == "sub" and any(x.dtype == torch.bool if is_tensor(x) else type(x) is bool
                                 for x in (a, b)):
            # eager refuses it ("Subtraction, the `-` operator, with a bool tensor is not
            # supported"; a bool number is such a tensor too), meta kernels do not: the aten
            # call raises
            raise LoweringError("a subtraction with a bool operand")
        if lower.node.meta["val"].dtype == torch.bool:  # 1-bit sums and products would wrap
            kind = {"add": "logical_or", "mul": "logical_and"}.get(
                name, name.replace("bitwise_", "logical_"))
        a, b = _tensors_in_result_dtype(lower, a, b, scalar_b_as_is=name == "mul")
        if alpha is not None and alpha != 1:
            require_fit(alpha, lower.node.meta["val"].dtype)  # eager's `alpha` conversion
            return pointwise(lower, [a, b], lambda x, y: op(
                kind, x, op("mul", y, constant(alpha, y.dtype))))
        return pointwise(lower, [a, b], lambda x, y: op(kind, x, y))
    return lowering


for _name, _target in [
    ("add", aten.add), ("sub", aten.sub), ("mul", aten.mul), ("maximum", aten.maximum),
    ("minimum", aten.minimum), ("atan2", aten.atan2), ("bitwise_and", aten.bitwise_and),
    ("bitwise_or", aten.bitwise_or), ("bitwise_xor", aten.bitwise_xor), ("hypot", aten.hypot),
    ("fmax", aten.fmax), ("fmin", aten.fmin), ("copysign", aten.copysign),
    ("shift_left", aten.__lshift__), ("shift_left", aten.bitwise_left_shift),
    ("shift_right", aten.__rshift__), ("shift_right", aten.bitwise_right_shift),
]:
    register(_target)(_binary(_name))


def _no_integer_zero_divisor(lower: GraphLowering, a: Any, b: Any) -> None:
    """LoweringError for an integer `//`, `%` or `fmod` by the number 0: the aten call raises
    ZeroDivisionError, as eager does on the CPU (kernels do not check divisors)."""
    if is_tensor(b) or promoted(lower, a, b).is_floating_point:
        return
    dtype = promoted(lower, a, b)
    if type(b) in (int, bool) and (b == 0 or dtype != torch.bool and
                                   b % (1 << torch.iinfo(dtype).bits) == 0):
        # (a number that wraps to 0 in the tensor's dtype, 256 for int8 or 2**32 for int32,
        # is 0 to eager too)
        raise LoweringError(f"an integer division by {b}, which is 0 in {dtype}")
    if _symbolic_kind(b) is int and not isinstance(b, Pointwise):
        # A number known only at run time (an int argument seen to change) may be 0, or
        # wrap to 0 in a narrower dtype (256 for int8): the aten call raises where eager
        # does; kernels would divide by it (0 everywhere). A size (`s0`, positive) cannot be
        # 0, nor wrap to 0 in int32 or int64.
        # An expression of sizes (`s0 - 1`, `s1 // 2`) is nonzero where the ShapeEnv's
        # ranges (sizes are at least 2) say so.
        expr = sym(b) if isinstance(b, torch.SymInt) else b
        if not ((expr.is_positive or expr.is_negative or _statically_nonzero(lower, expr))
                and promoted(lower, a, b) in (torch.int32, torch.int64)):
            raise LoweringError(f"an integer division by {expr}, which may be 0")


def _statically_nonzero(lower: GraphLowering, expr: sympy.Expr) -> bool:
    """Whether the ShapeEnv's ranges make `expr` nonzero for every input (no guard)."""
    shape_env = getattr(lower.gm, "shape_env", None)
    return _holds(shape_env, sympy.Gt(expr, 0)) or _holds(shape_env, sympy.Lt(expr, 0))


@register(aten.div)
def _div(lower, node, a, b, *, rounding_mode=None):
    a, b = _tensors_in_result_dtype(lower, a, b, scalar_b_as_is=True)
    if rounding_mode is None:
        return pointwise(lower, [a, b], lambda x, y: op("truediv", x, y))
    if lower.node.meta["val"].dtype == torch.bool:  # (`div(mask, mask, rounding_mode=...)`:
        raise LoweringError("a rounding division of bools (eager refuses them)")  # eager's error)
    _no_integer_zero_divisor(lower, a, b)
    dtype = promoted(lower, a, b)
    name = {"floor": "floordiv", "trunc": "truncdiv"}[rounding_mode]
    if dtype.is_floating_point:
        name += "_float"
    return pointwise(lower, [a, b], lambda x, y: op(name, x, y), in_dtype=dtype)


@register(aten.remainder)
def _remainder(lower, node, a, b):
    _refuse_bools(lower, "remainder")
    a, b = _tensors_in_result_dtype(lower, a, b)  # (`half_x % tensor(0.1)`: eager's half 0.1)
    _no_integer_zero_divisor(lower, a, b)
    return pointwise(lower, [a, b], lambda x, y: op("remainder", x, y))


@register(aten.fmod)
def _fmod(lower, node, a, b):
    _refuse_bools(lower, "fmod")
    a, b = _tensors_in_result_dtype(lower, a, b)
    _no_integer_zero_divisor(lower, a, b)
    return pointwise(lower, [a, b], lambda x, y: op("fmod", x, y))


@register(aten.pow)
def _pow(lower, node, a, b):
    # (`half_x ** tensor(2049)` is `half_x ** 2048` in eager: -11.25 ** it is inf, not -inf)
    a, b = _tensors_in_result_dtype(lower, a, b)
    if not is_tensor(b) and isinstance(b, (int, float)) and float(b).is_integer() and 0 <= b <= 4:
        def power(x, _):
            out = constant(1, x.dtype)
            for _ in range(int(b)):
                out = x if out.op == "constant" else op("mul", out, x)
            return out
        return pointwise(lower, [a, b], power)
    if not is_tensor(b) and b == 0.5:
        return pointwise(lower, [a], lambda x: op("sqrt", x))
    if not is_tensor(b) and b == -0.5:  # as eager computes it: 1 / sqrt (`(-0.0) ** -0.5` is -inf)
        return pointwise(lower, [a], lambda x: op("rsqrt", x))
    if not lower.node.meta["val"].dtype.is_floating_point:
        raise LoweringError("integer pow")
    if lower.node.meta["val"].dtype == torch.float64:
        # in two parts (special_functions): `exp2(b * log2|a|)` in float64 is off by hundreds
        # of ulps where `b * log2|a|` is large (`1e200 ** 1.5`: 1.00000000000009e300)
        return pointwise(lower, [a, b], lambda x, y: op("pow_float64", x, y))
    return pointwise(lower, [a, b], lambda x, y: op("pow", x, y))


def _compare(name: str) -> Callable:
    def lowering(lower, node, a, b):
        # In the promoted dtype, as eager and Inductor compare: `h == 0.1` of a half `h`
        # compares with 0.1 as a half holds it (fp32 then holds both exactly).
        dtype = result_type(lower, a, b)
        device = lower.node.meta["val"].device
        return pointwise(lower, [_rounded_to(x, dtype, device) for x in (a, b)],
                         lambda x, y: op(name, x, y, dtype=torch.bool),
                         in_dtype=compute_dtype(dtype))
    return lowering


def _tensors_in_result_dtype(lower: GraphLowering, a: Any, b: Any, *,
                             scalar_b_as_is: bool = False) -> list:
    """A binary op's operands, its tensors of other dtypes converted to a half-precision
    result's dtype first, as eager converts them (`int64 + 0-d half`: 2049 is 2048 in half;
    as float32 it gave 2050). Numbers stay as they are: eager computes with them in float.
    `scalar_b_as_is` (CPU `mul` and `div`): a second operand of one element (a 0-d float32
    tensor, an int64 one of size (1,)) stays as it is, as eager's CPU kernels for half types
    read it (`original_scalar_value`, in float32: `half_x * tensor(0.1)` is not
    `half_x * half(0.1)`; `tensor(0.1) * half_x` is)."""
    val = lower.node.meta["val"]
    if not val.dtype.is_floating_point or compute_dtype(val.dtype) == val.dtype:
        return [a, b]
    kept = scalar_b_as_is and val.device.type == "cpu" and is_tensor(b) and all(
        s == 1 for s in b.size)
    return [_rounded_to(x, val.dtype, val.device) if is_tensor(x) and not (x is b and kept)
            else x for x in (a, b)]


def _rounded_to(x: Any, dtype: torch.dtype, device: torch.device) -> Any:
    """`x` as a half-precision `dtype` holds it: a Python number rounded, a symbolic one (a
    kernel argument) or a tensor of another dtype cast (computed in float32, half values would
    otherwise keep fp32 precision)."""
    if compute_dtype(dtype) == dtype:
        return x
    if type(x) in (int, float):
        return torch.tensor(x, dtype=dtype).item()
    if isinstance(x, sympy.Expr) and x.free_symbols:
        number = constant(x, torch.float32)
        return Pointwise((), dtype, device, lambda idx: to_dtype(number, dtype))
    if is_tensor(x) and x.dtype != dtype:
        load = loader(x)
        return Pointwise(x.size, dtype, x.device, lambda idx: to_dtype(load(idx), dtype))
    return x


for _name, _target in [("eq", aten.eq), ("ne", aten.ne), ("lt", aten.lt), ("le", aten.le),
                       ("gt", aten.gt), ("ge", aten.ge)]:
    register(_target)(_compare(_name))


def _logical(name: str) -> Callable:
    def lowering(lower, node, a, b):
        return pointwise(lower, [a, b], lambda x, y: op(name, x, y), in_dtype=torch.bool)
    return lowering


for _name, _target in [("logical_and", aten.logical_and), ("logical_or", aten.logical_or),
                       ("logical_xor", aten.logical_xor)]:
    register(_target)(_logical(_name))


@register(aten.where.self)
def _where(lower, node, cond, a, b):
    val = lower.node.meta["val"]
    size = tuple(sym(s) for s in val.shape)
    cd = compute_dtype(val.dtype)
    c, x, y = (broadcast_loader(cond, size, torch.bool), broadcast_loader(a, size, cd),
               broadcast_loader(b, size, cd))
    return Pointwise(size, val.dtype, val.device,
                     lambda idx: Value("where", (c(idx), x(idx), y(idx)), cd))


@register(aten.clamp.default, aten.clamp.Tensor)
def _clamp(lower, node, x, min=None, max=None):
    _refuse_bools(lower, "clamp")
    def body(v, lo, hi):
        # Not maximum/minimum: eager's clamp keeps `x` where it equals a bound (the sign of
        # a zero: `(-0.0).clamp(0, 1)` is -0.0) and propagates a NaN bound
        if lo is not None:
            v = op("clamp_min", v, lo)
        if hi is not None:
            v = op("clamp_max", v, hi)
        return v
    inputs = [x] + [b for b in (min, max) if b is not None]

    def call(v, *bounds):
        bounds = list(bounds)
        lo = bounds.pop(0) if min is not None else None
        hi = bounds.pop(0) if max is not None else None
        return body(v, lo, hi)
    for bound in inputs[1:]:
        require_fit(bound, lower.node.meta["val"].dtype)
        if isinstance(bound, float) and math.isnan(bound) and \
                lower.node.meta["val"].device.type != "cpu":
            raise LoweringError("a NaN bound of clamp, which eager ignores on a GPU")
    return pointwise(lower, inputs, call)


@register(aten._to_copy.default, aten.clone.default, aten.lift_fresh_copy.default,
          aten.detach_copy.default, aten.alias_copy.default)
def _copy(lower, node, x, *, dtype=None, memory_format=None, layout=None, device=None,
          pin_memory=None, non_blocking=False):
    val = lower.node.meta["val"]
    if device is not None and torch.device(device) != x.device:
        raise LoweringError("device copy")
    size = tuple(sym(s) for s in val.shape)
    load = loader(x)
    out = val.dtype
    # An explicit cast to half rounds for real: the value leaves the kernel's float32.
    return Pointwise(size, out, val.device, lambda idx: to_dtype(load(idx), out))


CONSTANT_FACTORIES = (aten.full.default, aten.scalar_tensor.default, aten.zeros.default,
                      aten.ones.default)


@register(*CONSTANT_FACTORIES, aten.empty.memory_format, aten.empty_strided.default)
def _full(lower, node, *args, **kwargs):
    name = node.target.overloadpacket
    if name in (aten.full, aten.full_like):
        fill = args[1]
    elif name is aten.scalar_tensor:
        fill = args[0]
    elif name in (aten.ones, aten.ones_like):
        fill = 1
    else:
        _require_uninitialized_allowed()
        fill = 0  # empty: any content is allowed; zeros keeps runs reproducible
    # (eager's scalar_tensor on CPU rounds a float of any size to half: `where(m, half_x,
    # 1e6)` is inf there; on a GPU it fills, which checks, and raises)
    val = lower.node.meta["val"]
    if not (name is aten.scalar_tensor and val.device.type == "cpu" and
            compute_dtype(val.dtype) != val.dtype):
        require_fit(fill, val.dtype)
    return _filled(lower, fill)


def _filled(lower: GraphLowering, fill: Any) -> Pointwise:
    """The node's output with every element `fill` (a number or a size expression)."""
    val = lower.node.meta["val"]
    if isinstance(fill, sympy.Expr) and not fill.is_Number and fill.is_integer:
        v = to_dtype(Value("index", (fill,), torch.int64), compute_dtype(val.dtype))
    elif isinstance(fill, sympy.Expr) and not fill.is_Number:
        # a float known on the host (a float argument, `lr * 0.5`): kernels take it as fp32,
        # which only a float32 result holds as eager's (its cast of the double)
        if val.dtype != torch.float32:
            raise LoweringError(f"a float {fill} filling {val.dtype}")
        v = constant(fill, torch.float32)
    else:
        if val.dtype in (torch.float16, torch.bfloat16):  # what the half tensor would hold
            fill = torch.tensor(float(fill), dtype=val.dtype).item()
        v = constant(fill, compute_dtype(val.dtype))
    return Pointwise(tuple(sym(s) for s in val.shape), val.dtype, val.device, lambda idx: v)


@register(aten.fill.Scalar)
def _fill(lower, node, x, value):
    require_fit(value, lower.node.meta["val"].dtype)
    return _filled(lower, value)


@register(aten.empty_permuted.default)
def _empty_permuted(lower, node, *args, **kwargs):
    _require_uninitialized_allowed()
    return _filled(lower, 0)


def _require_uninitialized_allowed() -> None:
    """`empty` may hold anything, except under `torch.use_deterministic_algorithms` with
    `torch.utils.deterministic.fill_uninitialized_memory` (the default), where eager fills it
    with NaN (the largest integer, True): then the aten call makes it, reading that flag, which
    no guard covers, as it runs (the deterministic setting is in dynamo's global-state guard)."""
    if torch.are_deterministic_algorithms_enabled():
        raise LoweringError("empty under torch.use_deterministic_algorithms (eager fills it)")


@register(aten.lift_fresh.default)
def _lift_fresh(lower, node, x):
    return x


@register(aten.alias.default, aten.detach.default)
def _alias(lower, node, x):
    """The same elements: a view, so that an output that is one aliases its base, as in eager."""
    if isinstance(x, Pointwise):
        return x
    return BufferView(x.buffer if isinstance(x, BufferView) else x, x.layout)


@register(aten.arange.start_step, aten.arange.default, aten.arange.start)
def _arange(lower, node, *args, **kwargs):
    val = lower.node.meta["val"]
    positional = [a for a in args]
    if node.target is aten.arange.default:
        start, step = 0, 1
    else:
        start = positional[0]
        step = positional[2] if len(positional) > 2 else kwargs.get("step", 1)
    cd = compute_dtype(val.dtype)
    # bools are ints to Python but Boolean atoms to sympy (`arange(False, True, True)`); of an
    # integer result, a whole float is the int it equals (XLNet's and Funnel's
    # `arange(0, n, 2.0, dtype=torch.int64)`)
    whole = not val.dtype.is_floating_point
    start, step = (int(v) if isinstance(v, bool) or whole and isinstance(v, float) and v.is_integer()
                   else v for v in (start, step))
    if not all(isinstance(v, int) or isinstance(v, sympy.Expr) and v.is_integer
               for v in (start, step)):  # (a symbolic size is an integer expression)
        if not val.dtype.is_floating_point:
            raise LoweringError("arange with non-integer start or step")
        s, t = constant(start, cd), constant(step, cd)
        return Pointwise((sym(val.shape[0]),), val.dtype, val.device, lambda idx: op(
            "add", s, op("mul", to_dtype(Value("index", (idx[0],), torch.int64), cd), t)))
    return Pointwise((sym(val.shape[0]),), val.dtype, val.device, lambda idx: to_dtype(
        Value("index", (sympy.sympify(start) + sympy.sympify(step) * idx[0],), torch.int64), cd))


# -- views -----------------------------------------------------------------------------------

def view_of(lower: GraphLowering, x: TensorIR, size: Sequence[sympy.Expr], index_map: Callable,
            layout_fn: Callable | None = None) -> TensorIR:
    """A view: a BufferView when `x` has storage and the view is strided (`layout_fn` gives the
    new layout), else a Pointwise that reads `x` at `index_map(index)`. Layouts count from a
    base's data pointer, so a base that starts past its storage's start (an input that is a
    view) has views too: the wrapper adds its storage offset."""
    base = x.buffer if isinstance(x, BufferView) else x
    if layout_fn is not None and not isinstance(x, Pointwise):
        layout = layout_fn(x.layout)
        if layout is not None:
            return BufferView(base, layout)
    load = loader(x)
    return Pointwise(tuple(size), x.dtype, x.device, lambda idx: load(index_map(idx)))


@register(aten.permute.default)
def _permute(lower, node, x, dims):
    dims = [d % max(len(x.size), 1) for d in dims]
    inverse = [dims.index(i) for i in range(len(dims))]
    size = [x.size[d] for d in dims]
    return view_of(lower, x, size, lambda idx: [idx[inverse[i]] for i in range(len(dims))],
                   lambda lay: Layout(tuple(size), tuple(lay.stride[d] for d in dims),
                                      lay.offset, lay.dtype, lay.device))


@register(aten.t.default, aten.transpose.int)
def _transpose(lower, node, x, d0=0, d1=1):
    dims = list(range(len(x.size)))
    if dims:
        d0, d1 = d0 % len(dims), d1 % len(dims)
        dims[d0], dims[d1] = dims[d1], dims[d0]
    return _permute(lower, node, x, dims)


@register(aten.expand.default)
def _expand(lower, node, x, size, *, implicit=False):
    size = [sym(s) for s in lower.node.meta["val"].shape]
    skip = len(size) - len(x.size)

    def index_map(idx):
        return [sympy.Integer(0) if (s == 1 and o != 1) else i
                for i, s, o in zip(idx[skip:], x.size, size[skip:])]

    def layout_fn(lay):
        stride = [sympy.Integer(0)] * skip + [
            sympy.Integer(0) if (s == 1 and o != 1) else st
            for s, st, o in zip(lay.size, lay.stride, size[skip:])]
        return Layout(tuple(size), tuple(stride), lay.offset, lay.dtype, lay.device)
    return view_of(lower, x, size, index_map, layout_fn)


@register(aten.unsqueeze.default, aten.squeeze.default, aten.squeeze.dim, aten.squeeze.dims,
          aten.view.default, aten._unsafe_view.default, aten.reshape.default)
def _reshape(lower, node, x, *_):
    val = lower.node.meta["val"]
    size = tuple(sym(s) for s in val.shape)
    old = [s for s in x.size]
    non1_old = [(i, s) for i, s in enumerate(old) if s != 1]
    non1_new = [(i, s) for i, s in enumerate(size) if s != 1]
    if [s for _, s in non1_old] == [s for _, s in non1_new]:
        # Only dims of size 1 come or go: each remaining dim keeps its index and stride.
        pairs = list(zip([i for i, _ in non1_new], [i for i, _ in non1_old]))

        def index_map(idx):
            out = [sympy.Integer(0)] * len(old)
            for new_d, old_d in pairs:
                out[old_d] = idx[new_d]
            return out

        def layout_fn(lay):
            # Dims of size 1 take the fake value's stride (eager's: `unsqueeze(0)` of a (2, 3)
            # tensor has stride 6 there, not 1); their stride addresses nothing.
            stride = [sym(st) if s == 1 else sympy.Integer(1) for s, st in zip(size, val.stride())]
            for new_d, old_d in pairs:
                stride[new_d] = lay.stride[old_d]
            return Layout(size, tuple(stride), lay.offset, lay.dtype, lay.device)
        return view_of(lower, x, size, index_map, layout_fn)

    new_strides = contiguous_strides(size)
    old_strides = contiguous_strides(old)

    def index_map(idx):
        flat = sum((i * s for i, s in zip(idx, new_strides)), sympy.Integer(0))
        return [ir.ModularIndexing(flat, st, s) if d > 0 else ir.FloorDiv(flat, st)
                for d, (s, st) in enumerate(zip(old, old_strides))]

    src = node.args[0].meta.get("val") if isinstance(node.args[0], torch.fx.Node) else None

    def layout_fn(lay):
        strides = new_strides
        if lay.stride != old_strides and any(s != 1 for s in old):
            strides = ir.view_strides(old, lay.stride, size)
            if strides is None and isinstance(src, torch.Tensor) and \
                    node.target not in (aten.reshape.default, aten._unsafe_view.default) and \
                    tuple(lay.size) == tuple(old) and \
                    tuple(lay.stride) == tuple(sym(st) for st in src.stride()):
                # symbolic sizes: the trace's `view` found strides under its guards, and the
                # buffer is laid out as the trace's value: those strides are the view's
                strides = tuple(sym(st) for st in val.stride())
            if strides is None:
                return None
        return Layout(size, strides, lay.offset, lay.dtype, lay.device)
    return view_of(lower, x, size, index_map, layout_fn)


@register(aten.slice.Tensor)
def _slice(lower, node, x, dim=0, start=None, end=None, step=1):
    val = lower.node.meta["val"]
    dim = dim % len(x.size)
    size = tuple(sym(s) for s in val.shape)
    if node in lower.slice_starts:  # (of unknown sign: clamped by the wrapper)
        start = lower.slice_starts[node]
    else:
        start = _clamp_start(start, x.size[dim], getattr(lower.gm, "shape_env", None))
    return _slice_view(lower, x, dim, start, sym(step), size)  # (`x[::k]`: a symbolic step)


def _slice_view(lower: GraphLowering, x: TensorIR, dim: int, start: sympy.Expr,
                step: sympy.Expr, size: tuple) -> TensorIR:
    """Elements start, start + step, ... of dim `dim` (`size` is the view's size)."""

    def index_map(idx):
        return [start + i * step if d == dim else i for d, i in enumerate(idx)]

    def layout_fn(lay):
        stride = list(lay.stride)
        stride[dim] = lay.stride[dim] * step
        return Layout(size, tuple(stride), lay.offset + start * lay.stride[dim], lay.dtype,
                      lay.device)
    return view_of(lower, x, size, index_map, layout_fn)


def _clamp_start(start: Any, dim_size: sympy.Expr, shape_env: Any = None) -> sympy.Expr:
    if start is None:
        return sympy.Integer(0)
    start = sym(start) if not isinstance(start, sympy.Expr) else start
    if start.is_Integer and start < 0:
        return sympy.Max(dim_size + start, 0)
    if start.is_Integer and dim_size.is_Integer:
        return sympy.Integer(min(int(start), int(dim_size)))
    # A symbolic start (`x[-k:]` of an int argument) wraps when negative and is clamped to the
    # dim, as the trace's guards decided (the output's size says the same); an undecided sign
    # is not lowered.
    if start.is_nonnegative or _holds(shape_env, start >= 0):
        return dim_size if _holds(shape_env, start > dim_size) else start
    if not _holds(shape_env, start < 0):
        raise LoweringError(f"slice start {start} of unknown sign")
    start = dim_size + start
    if _holds(shape_env, start >= 0):
        return start
    return sympy.Integer(0) if _holds(shape_env, start < 0) else sympy.Max(start, 0)


@register(aten.select.int)
def _select(lower, node, x, dim, index):
    dim = dim % len(x.size)
    index = sym(index) if not isinstance(index, sympy.Expr) else index
    shape_env = getattr(lower.gm, "shape_env", None)
    if index.is_Integer and index < 0 or not index.is_Integer and \
            _holds(shape_env, index < 0):  # (`x.select(1, -k)`, as guarded)
        index = x.size[dim] + index
    elif not (index.is_nonnegative or _holds(shape_env, index >= 0)):
        raise LoweringError(f"select index {index} of unknown sign")
    size = tuple(s for d, s in enumerate(x.size) if d != dim)

    def index_map(idx):
        return [*idx[:dim], index, *idx[dim:]]

    def layout_fn(lay):
        stride = tuple(s for d, s in enumerate(lay.stride) if d != dim)
        return Layout(size, stride, lay.offset + index * lay.stride[dim], lay.dtype, lay.device)
    return view_of(lower, x, size, index_map, layout_fn)


@register(aten.as_strided.default)
def _as_strided(lower, node, x, size, stride, storage_offset=None):
    """A view of `x`'s storage: ours must be laid out as eager's is. That is known for inputs and
    fallback results, and for a fresh (non-view) dense result, which we store just so."""
    if isinstance(x, (Pointwise, ComputedBuffer)):
        source = node.args[0]
        val = source.meta["val"]
        fresh = isinstance(source.target, torch._ops.OpOverload) and not any(
            r.alias_info is not None for r in source.target._schema.returns)
        layout = dense_layout(val)
        if not fresh or layout.stride != meta_layout(val).stride or val.storage_offset() != 0:
            raise LoweringError("as_strided of a value whose storage we do not lay out as eager")
        if isinstance(x, ComputedBuffer) and x.layout.stride != layout.stride:
            raise LoweringError("as_strided of a buffer laid out unlike eager's")
        x = lower.realize(x, layout)
    base = x.buffer if isinstance(x, BufferView) else x
    if base.name in lower.offset_bases or isinstance(base, ComputedBuffer) and base is not x:
        raise LoweringError("as_strided of a view whose storage we do not lay out as eager")
    offset = sym(storage_offset) if storage_offset is not None else x.layout.offset
    return BufferView(base, Layout(tuple(sym(s) for s in size), tuple(sym(s) for s in stride),
                                   offset, x.dtype, x.device))


# -- reductions ------------------------------------------------------------------------------

def reduction(lower: GraphLowering, x: TensorIR, dims: Sequence[int] | None, keepdim: bool,
              reduction_type: str, dtype: torch.dtype) -> Buffer:
    """Reduce `x` over `dims` into a new buffer (sizes from the node's fake value)."""
    rank = len(x.size)
    dims = sorted({d % rank for d in dims}) if dims and rank else list(range(rank))
    kept = [d for d in range(rank) if d not in dims]
    size = tuple(x.size[d] for d in kept)
    rsize = tuple(x.size[d] for d in dims)
    if reduction_type in ("max", "min", "argmax", "argmin") and 0 in rsize:
        # no identity: eager raises (`max()` of an empty tensor), which the aten call does too
        # (the fake kernels of `max`/`min` accept it)
        raise LoweringError(f"{reduction_type} over a dim of size 0")
    in_dtype = compute_dtype(dtype) if reduction_type not in ("argmax", "argmin") else \
        compute_dtype(x.dtype)
    if reduction_type in ("any", "all"):
        in_dtype = torch.bool
    load = loader(x)

    def fn(idx, ridx):
        full = [None] * rank
        for d, i in zip(kept, idx):
            full[d] = i
        for d, i in zip(dims, ridx):
            full[d] = i
        return to_dtype(load(full), in_dtype)

    val = lower.node.meta["val"]
    val = val[0] if isinstance(val, (list, tuple)) else val  # max.dim: (values, indices)
    out_size = tuple(sym(s) for s in val.shape)
    if all(s == 1 for s in rsize):
        return _one_element_reduction(x, kept, out_size, reduction_type, dtype, fn)
    data = Reduction(size, rsize, reduction_type, dtype, x.device, fn)
    # The same reduction of the same values (a decomposition's mean computed twice) is one buffer.
    key = (reduction_type, dtype, size, rsize, fn(
        [sympy.Symbol(f"i{d}", integer=True) for d in range(len(size))],
        [sympy.Symbol(f"r{d}", integer=True) for d in range(len(rsize))]))
    buffer = lower.reductions.get(key)
    if buffer is None:
        buffer = lower.add(ComputedBuffer(lower.new_name(), Layout(
            size, contiguous_strides(size), sympy.Integer(0), dtype, x.device), data=data))
        lower.reductions[key] = buffer
    if keepdim and out_size != size:
        return _reshape_buffer(buffer, out_size)
    return buffer


def _one_element_reduction(x: TensorIR, kept: list[int], out_size: tuple, reduction_type: str,
                           dtype: torch.dtype, fn: Callable) -> Pointwise:
    """A reduction of one element per output (a 0-d input, reduced dims of size 1): a copy."""
    rank = len(x.size)
    if len(out_size) not in (rank, len(kept)):
        raise LoweringError("reduction output of unexpected rank")
    cd = compute_dtype(dtype)

    def body(idx):
        kept_idx = [idx[d] for d in kept] if len(out_size) == rank else list(idx)
        if reduction_type in ("argmax", "argmin"):
            return constant(0, cd)
        return to_dtype(fn(kept_idx, [sympy.Integer(0)] * (rank - len(kept))), cd)
    return Pointwise(out_size, dtype, x.device, body)


def _reshape_buffer(buffer: Buffer, size: tuple) -> BufferView:
    return BufferView(buffer, Layout(size, contiguous_strides(size), sympy.Integer(0),
                                     buffer.dtype, buffer.device))


def _dims(dims: Any) -> list[int] | None:
    if dims is None:
        return None
    return [dims] if isinstance(dims, int) else list(dims)


def _cast_input(x: TensorIR, dtype: torch.dtype | None) -> TensorIR:
    """`x` cast to a reduction's or scan's `dtype=` first, as eager casts it (to half, rounded:
    kernels would otherwise reduce the float32 values)."""
    if dtype is None or x.dtype == dtype:
        return x
    load = loader(x)
    return Pointwise(x.size, dtype, x.device, lambda idx: to_dtype(load(idx), dtype))


@register(aten.sum.dim_IntList, aten.sum.default)
def _sum(lower, node, x, dims=None, keepdim=False, *, dtype=None):
    return reduction(lower, _cast_input(x, dtype), _dims(dims), keepdim, "sum",
                     lower.node.meta["val"].dtype)


@register(aten.prod.dim_int, aten.prod.default)
def _prod(lower, node, x, dim=None, keepdim=False, *, dtype=None):
    return reduction(lower, _cast_input(x, dtype), _dims(dim), keepdim, "prod",
                     lower.node.meta["val"].dtype)


@register(aten.amax.default, aten.amin.default, aten.max.default, aten.min.default)
def _amax(lower, node, x, dims=None, keepdim=False):
    kind = "max" if node.target.overloadpacket in (aten.amax, aten.max) else "min"
    if not x.size and dims:
        dims = None
    return reduction(lower, x, _dims(dims) or None, keepdim, kind, lower.node.meta["val"].dtype)


@register(aten.argmax.default, aten.argmin.default)
def _argmax(lower, node, x, dim=None, keepdim=False):
    kind = "argmax" if node.target.overloadpacket is aten.argmax else "argmin"
    if x.dtype == torch.bool:
        raise LoweringError(f"{kind} of bools (eager refuses them)")
    if dim is None:
        if len(x.size) > 1:
            x = _flatten(x)
        dim = 0
    if not x.size:
        return _full(lower, node, [], 0)
    return reduction(lower, x, [dim], keepdim, kind, torch.int64)


def _flatten(x: TensorIR) -> Pointwise:
    numel = ir.product(x.size)
    strides = contiguous_strides(x.size)
    load = loader(x)
    return Pointwise((numel,), x.dtype, x.device, lambda idx: load([
        ir.ModularIndexing(idx[0], st, s) if d > 0 else ir.FloorDiv(idx[0], st)
        for d, (s, st) in enumerate(zip(x.size, strides))]))


@register(aten.any.default, aten.any.dim, aten.any.dims, aten.all.default, aten.all.dim,
          aten.all.dims)
def _any(lower, node, x, dims=None, keepdim=False):
    kind = "any" if node.target.overloadpacket is aten.any else "all"
    # bool, or uint8 for a uint8 input, as eager's
    return reduction(lower, x, _dims(dims), keepdim, kind, lower.node.meta["val"].dtype)


def norm_term(x: Value, ord: float) -> Value:
    """What a vector norm of order `ord` reduces of an element `x`: |x|, |x|^ord, or whether
    it is non-zero (order 0), in x's dtype."""
    a = op("abs", x)
    if ord == 0:
        return to_dtype(op("ne", a, constant(0, x.dtype), dtype=torch.bool), x.dtype)
    if ord in (1, math.inf, -math.inf):
        return a
    return op("mul", a, a) if ord == 2 else op("pow", a, constant(ord, x.dtype))


def norm_kind(ord: float) -> str:
    """The reduction of a vector norm's terms: max |x| (inf), min |x| (-inf), else a sum."""
    return {math.inf: "max", -math.inf: "min"}.get(ord, "sum")


def norm_root(total: Value, ord: float) -> Value:
    """The norm from its reduced terms: the sum's ord-th root, where it has one."""
    if norm_kind(ord) != "sum" or ord in (0, 1):
        return total
    return op("sqrt", total) if ord == 2 else op("pow", total, constant(1 / ord, total.dtype))


@register(aten.linalg_vector_norm.default)
def _vector_norm(lower, node, x, ord=2, dim=None, keepdim=False, *, dtype=None):
    """max |x| (ord inf), min |x| (-inf), count of non-zeros (0), else (sum |x|^ord)^(1/ord)."""
    out = lower.node.meta["val"].dtype
    if not out.is_floating_point:
        raise LoweringError("norm of a non-float type")
    if isinstance(ord, sympy.Expr) and not ord.is_Number:  # an int argument seen to change
        raise LoweringError("norm of a symbolic order")
    cd, ord, load = compute_dtype(out), float(ord), loader(x)

    def term(idx):
        return norm_term(to_dtype(load(idx), cd), ord)
    kind = norm_kind(ord)
    rooted = kind == "sum" and ord not in (0, 1)
    # a sum the root is taken of stays in the compute dtype, as eager's (a half sum of squares
    # rounded to half first overflowed to inf past 65504 and was an ulp off in bfloat16)
    total = reduction(lower, Pointwise(x.size, cd, x.device, term), _dims(dim), keepdim, kind,
                      cd if rooted else out)
    if not rooted:
        return total
    load_total = loader(total)
    return Pointwise(total.size, out, x.device,
                     lambda idx: norm_root(to_dtype(load_total(idx), cd), ord))


@register(aten.mean.dim, aten.mean.default)
def _mean(lower, node, x, dims=None, keepdim=False, *, dtype=None):
    out = lower.node.meta["val"].dtype
    rank = len(x.size)
    dlist = sorted({d % rank for d in _dims(dims)}) if _dims(dims) and rank else list(range(rank))
    cd = compute_dtype(out)
    # the sum stays in the compute dtype (a half-precision mean rounds once, after the
    # division, as eager's and torch's decomposition do: rounding the sum first was 1 ulp off)
    total = reduction(lower, x, dlist, keepdim, "sum", cd)
    count = ir.product([x.size[d] for d in dlist])
    load = loader(total)
    n = to_dtype(Value("index", (count,), torch.int64), cd) if not count.is_Integer else \
        constant(int(count), cd)
    return Pointwise(total.size, out, x.device, lambda idx: op("truediv", to_dtype(load(idx), cd), n))


# -- indexing --------------------------------------------------------------------------------

def _advanced_index(x: TensorIR, indices: list, wraps: bool = True
                    ) -> tuple[tuple, Callable[[Index], list]]:
    """The size of `x[i0, i1, ...]` (index tensors, None: that dim is sliced) and, for an index
    of it, the index of `x` it reads. The index tensors broadcast together and take the place of
    the first indexed dim (or the front when they are not adjacent). `wraps`: negative indices
    count from the end (not for `index_select` and `embedding`, where they are out of range)."""
    positions = [d for d, i in enumerate(indices) if i is not None]
    index_tensors = [indices[d] for d in positions]
    adjacent = positions == list(range(positions[0], positions[-1] + 1))
    bshape = _broadcast_shapes([t.size for t in index_tensors])
    nb = len(bshape)
    front = positions[0] if adjacent else 0
    loaders = [broadcast_loader(t, bshape, torch.int64) for t in index_tensors]
    rank = len(x.size)
    rest_sizes = [x.size[d] for d in range(rank) if d not in positions]
    size = tuple(rest_sizes[:front]) + tuple(bshape) + tuple(rest_sizes[front:])

    def where(idx):
        bidx = list(idx[front:front + nb])
        rest = list(idx[:front]) + list(idx[front + nb:])
        full, k = [], 0
        for d in range(rank):
            if d in positions:
                v = loaders[positions.index(d)](bidx)
                full.append(_indirect(v, x.size[d], wraps))
            else:
                full.append(rest[k])
                k += 1
        return full
    return size, where


@register(aten.index.Tensor)
def _index(lower, node, x, indices, wraps=True):
    if any(i is not None and i.dtype in (torch.bool, torch.uint8) for i in indices):
        # a mask selects where it is true (its output's size is data-dependent): read as
        # integer indices, its 0s and 1s gathered rows 0 and 1
        raise LoweringError("index with a boolean (or uint8) mask (data-dependent)")
    val = lower.node.meta["val"]
    size = tuple(sym(s) for s in val.shape)
    _, where = _advanced_index(x, indices, wraps)
    load = loader(x)

    def fn(idx):
        return load(where(idx))
    return Pointwise(size, val.dtype, val.device,
                     lambda idx: to_dtype(fn(idx), compute_dtype(val.dtype)))


def _indirect(v: Value, dim_size: sympy.Expr, wraps: bool = True) -> sympy.Expr:
    """An index read from a tensor, as an index expression (negative indices wrap, unless
    the op says they are out of range)."""
    return ir.IndirectIndex(to_dtype(v, torch.int64), dim_size, wraps)


def _broadcast_shapes(shapes: Sequence[Sequence[sympy.Expr]]) -> tuple[sympy.Expr, ...]:
    rank = max(len(s) for s in shapes)
    out = []
    for d in range(rank):
        size = sympy.Integer(1)
        for s in shapes:
            k = d - (rank - len(s))
            if k >= 0 and s[k] != 1:
                size = s[k]
        out.append(size)
    return tuple(out)


@register(aten.index_select.default)
def _index_select(lower, node, x, dim, index):
    if not x.size:  # a 0-d tensor is read as one of one element: eager's result is 1-d
        load_x = loader(x)
        x = Pointwise((sympy.Integer(1),), x.dtype, x.device, lambda idx: load_x([]))
    if not index.size:  # a 0-d index keeps the dim, of size 1 (unlike `x[i]`)
        load_index = loader(index)
        index = Pointwise((sympy.Integer(1),), index.dtype, index.device,
                          lambda idx: load_index([]))
    indices = [None] * len(x.size)
    indices[dim % len(x.size)] = index
    return _index(lower, node, x, indices, wraps=False)


@register(aten.embedding.default)
def _embedding(lower, node, weight, indices, *_):
    return _index(lower, node, weight, [indices], wraps=False)


@register(aten.gather.default)
def _gather(lower, node, x, dim, index, *, sparse_grad=False):
    val = lower.node.meta["val"]
    if not x.size:
        raise LoweringError("gather from a 0-d tensor")
    dim = dim % max(len(x.size), 1)
    load_index = loader(index)
    load = loader(x)

    def fn(idx):
        # a 0-d index of a 1-d tensor (its only other case of unequal ranks) reads one element
        full = list(idx) if index.size else [sympy.Integer(0)] * len(x.size)
        full[dim] = _indirect(to_dtype(load_index(idx), torch.int64), x.size[dim],
                              wraps=False)
        return load(full)
    return Pointwise(tuple(sym(s) for s in val.shape), val.dtype, val.device,
                     lambda idx: to_dtype(fn(idx), compute_dtype(val.dtype)))


@register(aten.cat.default)
def _cat(lower, node, tensors, dim=0):
    val = lower.node.meta["val"]
    tensors = [t for t in tensors if not (len(t.size) == 1 and t.size[0] == 0)]
    dim = dim % len(val.shape)
    size = tuple(sym(s) for s in val.shape)
    cd = compute_dtype(val.dtype)
    loaders = [loader(t) for t in tensors]
    starts, acc = [], sympy.Integer(0)
    for t in tensors:
        starts.append(acc)
        acc = acc + t.size[dim]

    def fn(idx):
        if not tensors:  # every input empty (1-d ones are dropped): so is the result
            return constant(0, cd)
        i = idx[dim]
        out = None
        for t, load, start in reversed(list(zip(tensors, loaders, starts))):
            shifted = [i - start if d == dim else j for d, j in enumerate(idx)]
            inside = index_in(i - start, t.size[dim])
            v = ir.masked(to_dtype(load(shifted), cd), inside)
            out = v if out is None else Value("where", (inside, v, out), cd)
        return out
    return Pointwise(size, val.dtype, val.device, fn)


@register(aten.constant_pad_nd.default)
def _constant_pad(lower, node, x, pad, value=0):
    val = lower.node.meta["val"]
    size = tuple(sym(s) for s in val.shape)
    cd = compute_dtype(val.dtype)
    load = loader(x)
    rank = len(size)
    pads = [(sym(pad[2 * k]), sym(pad[2 * k + 1])) for k in range(len(pad) // 2)]
    fill = constant(value, cd)

    def fn(idx):
        src, inside = list(idx), None
        for k, (before, _) in enumerate(pads):
            d = rank - 1 - k
            src[d] = idx[d] - before
            ok = index_in(src[d], x.size[d])
            inside = ok if inside is None else op("logical_and", inside, ok)
        v = to_dtype(load(src), cd)
        return v if inside is None else Value("where", (inside, ir.masked(v, inside), fill), cd)
    return Pointwise(size, val.dtype, val.device, fn)


# -- scatters ---------------------------------------------------------------------------------

ATOMIC_ADD_DTYPES = (torch.float32, torch.float64, torch.int32, torch.int64)


def _scatter_into_copy(lower: GraphLowering, x: TensorIR, size: tuple,
                       where: Callable[[Index], list], value: Callable[[Index], Value],
                       accumulate: bool) -> Buffer:
    """A copy of `x` (a new buffer, ours to write into), then a kernel over `size` writing
    `value(i)` at index `where(i)` of it (adding, with `accumulate`: atomically, as indices may
    repeat). The copy is the result."""
    val = lower.node.meta["val"]
    if accumulate and val.dtype not in ATOMIC_ADD_DTYPES:
        raise LoweringError(f"atomic add of {val.dtype}")
    if accumulate and val.dtype.is_floating_point and torch.are_deterministic_algorithms_enabled():
        # (atomic float additions land in any order on a GPU: sums that differ run to run)
        raise LoweringError("atomic add of floats under torch.use_deterministic_algorithms")
    dense = dense_layout(val)  # eager's strides: index_put of a transposed input keeps them
    copy = x if isinstance(x, Pointwise) else Pointwise(x.size, x.dtype, x.device, loader(x))
    out = lower.realize(copy, dense)
    data = Scatter(size, lambda idx: dense.index(where(idx)), accumulate, val.dtype, val.device,
                   value)
    lower.add(ComputedBuffer(lower.new_name(), dense, data=data, mutates=out.name))
    return out


@register(aten.index_put.default)
def _index_put(lower, node, x, indices, values, accumulate=False):
    """`x[indices] = values` (broadcast to `x[indices]`'s size), into a copy of `x`."""
    if any(i is not None and i.dtype in (torch.bool, torch.uint8) for i in indices):
        return flat_and_masked_scatters.masked_index_put(lower, x, indices, values, accumulate)
    if not any(i is not None for i in indices):
        raise LoweringError("index_put with no index tensor")
    size, where = _advanced_index(x, list(indices) + [None] * (len(x.size) - len(indices)))
    if is_tensor(values) and len(values.size) > len(size):
        raise LoweringError("index_put with values of more dims than the indexed result")
    value = broadcast_loader(values, size, compute_dtype(lower.node.meta["val"].dtype))
    return _scatter_into_copy(lower, x, size, where, value, accumulate)


@register(aten.scatter.src, aten.scatter.value, aten.scatter_add.default)
def _scatter(lower, node, x, dim, index, src, *, reduce=None):
    """`out[..., index[i], ...] = src[i]` (dim `dim` replaced, every other index as is) over
    the index tensor's elements, into a copy of `x`; scatter_add adds."""
    if reduce is not None or not index.size or not x.size:
        raise LoweringError("scatter with reduce, or with a 0-d index or tensor")
    dim = dim % len(x.size)
    load_index = loader(index)
    cd = compute_dtype(lower.node.meta["val"].dtype)
    load_src = loader(src) if is_tensor(src) else (lambda idx: constant(src, cd))

    def where(idx):
        full = list(idx)
        full[dim] = _indirect(load_index(idx), x.size[dim], wraps=False)
        return full
    return _scatter_into_copy(lower, x, index.size, where,
                              lambda idx: to_dtype(load_src(idx), cd),
                              accumulate=node.target is aten.scatter_add.default)


# -- scans ------------------------------------------------------------------------------------

@register(aten.cumsum.default, aten.cumprod.default)
def _cumulative(lower, node, x, dim, *, dtype=None):
    val = lower.node.meta["val"]
    size = tuple(sym(s) for s in val.shape)
    dim = dim % max(len(size), 1)
    if not size or size[dim] == 1:  # one element per row: the scan is a copy
        return pointwise(lower, [x], lambda a: a)
    kind = "sum" if node.target is aten.cumsum.default else "prod"
    load = broadcast_loader(_cast_input(x, dtype), size, compute_dtype(val.dtype))
    return scan_buffer(lower, size, dim, kind, val.dtype, val.device, load)


def scan_buffer(lower: GraphLowering, size: tuple, dim: int, kind: str, dtype: torch.dtype,
                device: torch.device, load: Callable[[Index], Value],
                limit: int = PERSISTENT_RNUMEL) -> Buffer:
    """A `Scan` of `kind` over `load` along `dim`. Its kernel holds a whole row in one block:
    rows up to `limit` (for a symbolic length, its size when traced; the block follows the
    length at launch, so the kernel is right for every length); longer rows fall back."""
    length = size[dim].xreplace(lower.size_hints)
    if not length.is_Integer or int(length) > limit:
        raise LoweringError("a scan over rows longer than a block")
    shape_env = getattr(lower.gm, "shape_env", None)
    if not size[dim].is_number:
        # a longer row at a later call would not fit the block (past 2**20 elements Triton
        # refuses it): the version is guarded to rows that fit, a longer one gets its own
        if not hasattr(shape_env, "evaluate_expr"):
            raise LoweringError("a scan over a symbolic row whose length cannot be guarded")
        shape_env.evaluate_expr(sympy.Le(size[dim], limit))
    return lower.realize(Scan(size, dim, kind, dtype, device, load))


# -- pooling ---------------------------------------------------------------------------------

def _pair(v: Any, default: Sequence[int] | None = None) -> tuple[int, int]:
    if isinstance(v, int):
        return v, v
    v = default if not v else v
    return (v[0], v[0]) if len(v) == 1 else (v[0], v[1])


def _window_taps(x: TensorIR, idx: Index, kernel, stride, padding, dilation):
    """Each tap of the 2-d window under output index `idx`: (row, col, inside the input)."""
    *_, oh, ow = idx
    h, w = x.size[-2:]
    for a in range(kernel[0]):
        for b in range(kernel[1]):
            row = oh * stride[0] - padding[0] + a * dilation[0]
            col = ow * stride[1] - padding[1] + b * dilation[1]
            inside = op("logical_and", index_in(row, h), index_in(col, w))
            yield row, col, inside


def pooled_index(taps: list[tuple[sympy.Expr, Value, Value]], best: Value) -> Value:
    """The index eager's max pooling keeps among `taps` (flat index, inside the input, value)
    whose max is `best`: its running maximum takes the first tap inside the input, then any
    inside tap that is greater or NaN, so the last NaN inside if any, else the first tap inside
    equal to the max (a padding tap never, also when every inside value is the lowest). Each is
    a chain over the taps: a running comparison nests every earlier tap's Value twice, and its
    tree doubles with each tap (a 5x5 window did not compile in minutes)."""
    first = constant(-1, torch.int64)
    for flat, inside, v in reversed(taps):
        hit = op("logical_and", inside, op("eq", v, best, dtype=torch.bool))
        first = Value("where", (hit, Value("index", (flat,), torch.int64), first), torch.int64)
    nan = constant(-1, torch.int64)
    for flat, inside, v in taps:
        hit = op("logical_and", inside, op("isnan", v, dtype=torch.bool))
        nan = Value("where", (hit, Value("index", (flat,), torch.int64), nan), torch.int64)
    return Value("where", (op("ge", nan, constant(0, torch.int64), dtype=torch.bool), nan,
                           first), torch.int64)


def max_pooled(size: tuple, vals: Sequence[torch.Tensor],
               taps: Callable[[Index], Any]) -> tuple[Pointwise, Pointwise]:
    """Max pooling's (values, indices) of `size`, from `taps(idx)`: each window's taps as (flat
    index, inside the input, value or the lowest number outside)."""
    def value(idx):
        best = None
        for _, _, v in taps(idx):
            best = v if best is None else op("maximum", best, v)
        return best
    return (Pointwise(size, vals[0].dtype, vals[0].device, value),
            Pointwise(size, torch.int64, vals[1].device,
                      lambda idx: pooled_index(list(taps(idx)), value(idx))))


@register(aten.max_pool2d_with_indices.default)
def _max_pool2d(lower, node, x, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """Max over each window, unrolled (windows are small); the index is of the last NaN or the
    first maximum in the window, as row * width + col (`pooled_index`)."""
    vals = lower.node.meta["val"]
    size = tuple(sym(s) for s in vals[0].shape)
    kernel = _pair(kernel_size)
    args = (kernel, _pair(stride, kernel), _pair(padding), _pair(dilation))
    load = loader(x)
    cd = compute_dtype(x.dtype)
    lowest = constant(-math.inf if cd.is_floating_point else torch.iinfo(cd).min, cd)

    def taps(idx):
        for row, col, inside in _window_taps(x, idx, *args):
            v = to_dtype(load([*idx[:-2], row, col]), cd)
            yield row * x.size[-1] + col, inside, Value("where", (inside, ir.masked(v, inside),
                                                                   lowest), cd)
    return max_pooled(size, vals, taps)


@register(aten.avg_pool2d.default)
def _avg_pool2d(lower, node, x, kernel_size, stride=(), padding=0, ceil_mode=False,
                count_include_pad=True, divisor_override=None):
    """Mean over each window, unrolled; the divisor counts the taps inside the input (or inside
    the padded input, with `count_include_pad`), unless `divisor_override` gives it."""
    val = lower.node.meta["val"]
    size = tuple(sym(s) for s in val.shape)
    kernel = _pair(kernel_size)
    pad = _pair(padding)
    args = (kernel, _pair(stride, kernel), pad, (1, 1))
    load = loader(x)
    cd = compute_dtype(val.dtype)
    h, w = x.size[-2:]

    def fn(idx):
        total = count = None
        for row, col, inside in _window_taps(x, idx, *args):
            v = to_dtype(load([*idx[:-2], row, col]), cd)
            v = Value("where", (inside, ir.masked(v, inside), constant(0, cd)), cd)
            total = v if total is None else op("add", total, v)
            if count_include_pad:
                inside = op("logical_and", index_in(row + pad[0], h + 2 * pad[0]),
                            index_in(col + pad[1], w + 2 * pad[1]))
            n = to_dtype(inside, cd)
            count = n if count is None else op("add", count, n)
        if divisor_override:
            count = constant(divisor_override, cd)
        return op("truediv", total, count)
    return Pointwise(size, val.dtype, val.device, fn)


def _adaptive_window(o: sympy.Expr, out: sympy.Expr, n: sympy.Expr
                     ) -> tuple[sympy.Expr, sympy.Expr]:
    """The rows `[start, end)` of `n` that output row `o` of `out` pools, as eager's:
    `floor(o * n / out)` to `ceil((o + 1) * n / out)`."""
    return ir.FloorDiv(o * n, out), ir.FloorDiv((o + 1) * n + out - 1, out)


def _adaptive_windows(x: TensorIR, size: tuple, dims: int) -> tuple[tuple, Callable]:
    """Adaptive pooling of the last `dims` dims of `x` to `size`: the largest window any
    output has along each (`ceil((n + out - 1) / out)` rows), and a function from an output
    index to its batch index and its window `(start, end)` along each pooled dim."""
    if not x.dtype.is_floating_point:  # eager pools floats only: the aten op raises as it
        raise LoweringError("adaptive pooling of integers")
    ins, outs = x.size[-dims:], size[-dims:]
    rsize = tuple(ir.FloorDiv(n + 2 * o - 2, o) for n, o in zip(ins, outs))

    def windows(idx):
        return (list(idx[:-dims]),
                [_adaptive_window(i, o, n) for i, o, n in zip(idx[-dims:], outs, ins)])
    return rsize, windows


def _adaptive_tap(x: TensorIR, windows: Callable, idx: Index, ridx: Index, outside: Value
                  ) -> Value:
    """Tap `ridx` of the largest window under output `idx`: the input's value (in its
    compute dtype) inside that output's own window, `outside` past it."""
    batch, spans = windows(idx)
    inside = None
    for r, (start, end) in zip(ridx, spans):
        inside_r = index_in(r, end - start)
        inside = inside_r if inside is None else op("logical_and", inside, inside_r)
    v = to_dtype(loader(x)([*batch, *(start + r for r, (start, _) in zip(ridx, spans))]),
                 outside.dtype)
    return Value("where", (inside, ir.masked(v, inside), outside), outside.dtype)


@register(aten._adaptive_avg_pool2d.default, aten._adaptive_avg_pool3d.default)
def _adaptive_avg_pool(lower, node, x, output_size):
    """A sum over the largest window any output has, the taps past an output's own window
    masked out, divided by its window's size. The windows are index arithmetic on the input's
    sizes, so one kernel serves every size (torch's decomposition fixes them to numbers, one
    version per size)."""
    val = lower.node.meta["val"]
    size = tuple(sym(s) for s in val.shape)
    rsize, windows = _adaptive_windows(x, size, len(output_size))
    cd = compute_dtype(val.dtype)
    total = lower.realize(Reduction(size, rsize, "sum", cd, val.device, lambda idx, ridx:
                                    _adaptive_tap(x, windows, idx, ridx, constant(0, cd))))
    load_total = loader(total)

    def mean(idx):
        count = None
        for start, end in windows(idx)[1]:
            n = to_dtype(Value("index", (end - start,), torch.int64), cd)
            count = n if count is None else op("mul", count, n)
        return op("truediv", load_total(idx), count)
    return Pointwise(size, val.dtype, val.device, mean)


@register(aten.adaptive_max_pool2d.default, aten.adaptive_max_pool3d.default)
def _adaptive_max_pool(lower, node, x, output_size):
    """The max over the largest window any output has (taps past an output's own window are
    -inf), and its index into the input's plane (`h * W + w`): the first maximum (an argmax
    over the window, mapped to the input), or the last NaN (a max over the NaNs' indices),
    as eager's. One kernel serves every size, as adaptive average pooling's."""
    vals = lower.node.meta["val"]
    size = tuple(sym(s) for s in vals[0].shape)
    dims = len(output_size)
    rsize, windows = _adaptive_windows(x, size, dims)
    cd = compute_dtype(x.dtype)
    lowest = constant(-math.inf, cd)

    def plane_index(starts, offsets):  # `h * W + w` (`(d * H + h) * W + w` in 3-d)
        flat = sympy.Integer(0)
        for n, start, offset in zip(x.size[-dims:], starts, offsets):
            flat = flat * n + start + offset
        return flat
    def tap(idx, ridx):
        return _adaptive_tap(x, windows, idx, ridx, lowest)

    def nan_index(idx, ridx):
        i = Value("index", (plane_index([s for s, _ in windows(idx)[1]], ridx),), torch.int64)
        return Value("where", (op("isnan", tap(idx, ridx), dtype=torch.bool), i,
                               constant(-1, torch.int64)), torch.int64)

    def reduce(kind, dtype, fn):
        return loader(lower.realize(Reduction(size, rsize, kind, dtype, x.device, fn)))
    load_max = reduce("max", vals[0].dtype, tap)
    load_arg = reduce("argmax", torch.int64, tap)  # the first maximum's tap, over `rsize`
    load_nan = reduce("max", torch.int64, nan_index)  # the last NaN's index, or -1

    def index(idx):
        arg, offsets = load_arg(idx), []
        for d in reversed(range(dims)):  # the tap's offset along each dim, last dim first
            n = constant(rsize[d], torch.int64)
            offsets.insert(0, op("remainder", arg, n) if d else arg)
            arg = op("floordiv", arg, n)
        flat = None
        for n, (start, _), offset in zip(x.size[-dims:], windows(idx)[1], offsets):
            row = op("add", Value("index", (start,), torch.int64), offset)
            flat = row if flat is None else op("add", op("mul", flat, constant(n, torch.int64)),
                                               row)
        nan = load_nan(idx)
        return Value("where", (op("ge", nan, constant(0, torch.int64), dtype=torch.bool), nan,
                               flat), torch.int64)
    return (Pointwise(size, vals[0].dtype, vals[0].device, load_max),
            Pointwise(size, torch.int64, vals[1].device, index))


# -- random ----------------------------------------------------------------------------------

def draws(lower: GraphLowering, kind: str, size: tuple) -> Callable[[Index], Value]:
    """A fresh seed's draws over `size`: `kind` is "rand" (float32 in [0, 1)), "randn"
    (float32 normal) or "randint" (uint32 bits), at each element's row-major position."""
    seed = lower.new_seed()
    strides = contiguous_strides(size)
    dtype = torch.uint32 if kind == "randint" else torch.float32

    def draw(idx: Index) -> Value:
        offset = sum((i * s for i, s in zip(idx, strides)), sympy.Integer(0))
        return Value(kind, (seed, offset), dtype)
    return draw


def _random(lower: GraphLowering, kind: str) -> Pointwise:
    val = lower.node.meta["val"]
    if val.dtype == torch.float64:
        raise LoweringError("Triton draws float32 numbers: float64 ones would have 24 bits")
    size = tuple(sym(s) for s in val.shape)
    draw = draws(lower, kind, size)
    cd = compute_dtype(val.dtype)

    # A float32 number below 1 can round up to 1.0 in half precision (about one draw in 500 in
    # bfloat16); eager's `rand` stays below 1 in every dtype: the largest value below 1 instead.
    below_one = 1.0 - torch.finfo(val.dtype).eps / 2 if val.dtype in (
        torch.float16, torch.bfloat16) and kind == "rand" else None

    def fn(idx):
        v = draw(idx)
        if below_one is not None:
            v = op("minimum", v, constant(below_one, torch.float32))
        return to_dtype(v, cd)
    return Pointwise(size, val.dtype, val.device, fn)


@register(aten.rand.default)
def _rand(lower, node, *args, **kwargs):
    return _random(lower, "rand")


@register(aten.randn.default)
def _randn(lower, node, *args, **kwargs):
    return _random(lower, "randn")


@register(aten.bernoulli.p)
def _bernoulli(lower, node, x, p=0.5, *, generator=None):
    if generator is not None:
        raise LoweringError("bernoulli with a generator")
    if not isinstance(p, (int, float)) or not 0 <= p <= 1:
        # eager refuses a p outside [0, 1] (NaN too: "bernoulli_ expects p to be in [0, 1]"),
        # where `rand < p` would draw all ones or all zeros; a symbolic p is known only at run
        # time: the aten call checks it
        raise LoweringError(f"bernoulli with p={p}, checked by the aten call")
    uniform = _random(lower, "rand")
    cd = compute_dtype(lower.node.meta["val"].dtype)
    return Pointwise(uniform.size, uniform.dtype, uniform.device, lambda idx: to_dtype(
        op("lt", uniform.fn(idx), constant(p, uniform.fn(idx).dtype), dtype=torch.bool), cd))


# -- mutation --------------------------------------------------------------------------------

@register(aten.copy_.default)
def _copy_(lower, node, dst, src, non_blocking=False):
    if not isinstance(dst, InputBuffer):
        raise LoweringError("copy_ into a non-input")
    lower.realize_readers(dst.name)
    load = broadcast_loader(src, dst.size, compute_dtype(dst.dtype))
    idx = [sympy.Symbol(f"i{d}", integer=True, nonnegative=True) for d in range(len(dst.size))]
    if any(n == dst.name and index != dst.layout.index(idx) for n, index in loads(load(idx))):
        # Other elements of `dst` than the one written: read them all before writing any.
        src = lower.realize(_owned(src))
        load = broadcast_loader(src, dst.size, compute_dtype(dst.dtype))
    data = Pointwise(dst.size, dst.dtype, dst.device, load)
    lower.add(ComputedBuffer(lower.new_name(), dst.layout, data=data, mutates=dst.name))
    return dst


@register(aten.copy.default)
def _copy_functional(lower, node, dst, src, non_blocking=False):
    val = lower.node.meta["val"]
    return Pointwise(tuple(sym(s) for s in val.shape), val.dtype, val.device,
                     broadcast_loader(src, tuple(sym(s) for s in val.shape),
                                      compute_dtype(val.dtype)))


# -- prims (what some decompositions produce) ------------------------------------------------

prims = torch.ops.prims

for _name, _target in [("add", prims.add), ("sub", prims.sub), ("mul", prims.mul),
                       ("maximum", prims.maximum), ("minimum", prims.minimum)]:
    register(_target)(_binary(_name))
for _name, _target in [("neg", prims.neg), ("abs", prims.abs), ("exp", prims.exp),
                       ("log", prims.log), ("sqrt", prims.sqrt), ("rsqrt", prims.rsqrt),
                       ("sin", prims.sin), ("cos", prims.cos), ("tanh", prims.tanh),
                       ("erf", prims.erf), ("floor", prims.floor), ("ceil", prims.ceil),
                       ("reciprocal", prims.reciprocal)]:
    register(_target)(_unary(_name))
for _name, _target in [("eq", prims.eq), ("ne", prims.ne), ("lt", prims.lt), ("le", prims.le),
                       ("gt", prims.gt), ("ge", prims.ge)]:
    register(_target)(_compare(_name))
register(prims.where.default)(_where)


@register(prims.div.default)
def _prims_div(lower, node, a, b):
    if lower.node.meta["val"].dtype.is_floating_point:
        return pointwise(lower, [a, b], lambda x, y: op("truediv", x, y))
    return pointwise(lower, [a, b], lambda x, y: op("truncdiv", x, y))


@register(prims.convert_element_type.default)
def _convert(lower, node, x, dtype):
    return _copy(lower, node, x)


@register(prims.broadcast_in_dim.default)
def _broadcast_in_dim(lower, node, x, shape, broadcast_dimensions):
    size = tuple(sym(s) for s in lower.node.meta["val"].shape)
    dims = list(broadcast_dimensions)

    def index_map(idx):
        return [sympy.Integer(0) if x.size[k] == 1 and size[d] != 1 else idx[d]
                for k, d in enumerate(dims)]

    def layout_fn(lay):
        stride = [sympy.Integer(0)] * len(size)
        for k, d in enumerate(dims):
            stride[d] = sympy.Integer(0) if (x.size[k] == 1 and size[d] != 1) else lay.stride[k]
        return Layout(size, tuple(stride), lay.offset, lay.dtype, lay.device)
    return view_of(lower, x, size, index_map, layout_fn)


@register(prims.sum.default)
def _prims_sum(lower, node, x, dims, *, output_dtype=None):
    return reduction(lower, x, list(dims), False, "sum", lower.node.meta["val"].dtype)


@register(prims.amax.default, prims.amin.default)
def _prims_amax(lower, node, x, dims, *, output_dtype=None):
    kind = "max" if node.target is prims.amax.default else "min"
    return reduction(lower, x, list(dims), False, kind, lower.node.meta["val"].dtype)


@register(prims.var.default)
def _prims_var(lower, node, x, dims, correction, *, output_dtype=None):
    """Two passes over the row: the mean, then the sum of squared differences from it."""
    if not x.dtype.is_floating_point:
        raise LoweringError("var of integers (eager refuses them)")
    rank = len(x.size)
    dims = sorted({d % rank for d in dims})
    dtype = compute_dtype(lower.node.meta["val"].dtype)
    count = ir.product([x.size[d] for d in dims])
    total = reduction(lower, x, dims, False, "sum", dtype)
    load_total, load_x = loader(total), loader(x)
    kept = [d for d in range(rank) if d not in dims]

    def n(offset: float) -> Value:
        # As eager: the divisor is never below 0 (a correction above N - 1 gives inf, not a
        # negative variance).
        if count.is_Integer:
            return constant(max(int(count) - offset, 0), dtype)
        if offset != int(offset):  # a fractional correction: N - 1.5 in the kernel's float type
            size = to_dtype(Value("index", (count,), torch.int64), dtype)
            return op("maximum", op("sub", size, constant(offset, dtype)), constant(0, dtype))
        return to_dtype(Value("index", (sympy.Max(count - int(offset), 0),), torch.int64), dtype)

    def squared_diff(idx):
        mean = op("truediv", load_total([idx[d] for d in kept]), n(0))
        d = op("sub", to_dtype(load_x(idx), dtype), mean)
        return op("mul", d, d)
    diffs = Pointwise(x.size, dtype, x.device, squared_diff)
    squares = reduction(lower, diffs, dims, False, "sum", dtype)
    load_squares = loader(squares)
    return Pointwise(squares.size, lower.node.meta["val"].dtype, x.device,
                     lambda idx: op("truediv", load_squares(idx), n(correction)))


@register(aten.full_like.default, aten.zeros_like.default, aten.ones_like.default,
          aten.empty_like.default)
def _full_like(lower, node, x, *args, **kwargs):
    return _full(lower, node, None, *args, **kwargs)


@register(aten.rand_like.default, aten.randn_like.default)
def _rand_like(lower, node, x, **kwargs):
    return _random(lower, "rand" if node.target is aten.rand_like.default else "randn")


# -- more views, and the copying twins of views ----------------------------------------------

@register(aten.split_with_sizes.default, aten.split.Tensor)
def _split(lower, node, x, sizes, dim=0):
    dim = dim % len(x.size)
    out, start = [], sympy.Integer(0)
    for v in lower.node.meta["val"]:
        size = tuple(sym(s) for s in v.shape)
        out.append(_slice_view(lower, x, dim, start, sympy.Integer(1), size))
        start = start + size[dim]
    return out


@register(aten.unbind.int)
def _unbind(lower, node, x, dim=0):
    dim = dim % len(x.size)
    if not x.size[dim].is_Integer:
        raise LoweringError("unbind of a symbolic dim")
    return [_select(lower, node, x, dim, i) for i in range(int(x.size[dim]))]


@register(aten.diagonal.default)
def _diagonal(lower, node, x, offset=0, dim1=0, dim2=1):
    rank = len(x.size)
    d1, d2 = dim1 % rank, dim2 % rank
    size = tuple(sym(s) for s in lower.node.meta["val"].shape)
    kept = [d for d in range(rank) if d not in (d1, d2)]
    o1, o2 = (0, offset) if offset >= 0 else (-offset, 0)

    def index_map(idx):
        full = [None] * rank
        for d, i in zip(kept, idx[:-1]):
            full[d] = i
        full[d1], full[d2] = idx[-1] + o1, idx[-1] + o2
        return full

    def layout_fn(lay):
        stride = [lay.stride[d] for d in kept] + [lay.stride[d1] + lay.stride[d2]]
        return Layout(size, tuple(stride), lay.offset + o1 * lay.stride[d1] + o2 * lay.stride[d2],
                      lay.dtype, lay.device)
    return view_of(lower, x, size, index_map, layout_fn)


@register(aten.flip.default)
def _flip(lower, node, x, dims):
    dims = {d % len(x.size) for d in dims} if x.size else set()
    load = loader(x)
    return Pointwise(x.size, x.dtype, x.device, lambda idx: load(
        [x.size[d] - 1 - i if d in dims else i for d, i in enumerate(idx)]))


@register(aten.repeat.default)
def _repeat(lower, node, x, repeats):
    size = tuple(sym(s) for s in lower.node.meta["val"].shape)
    skip = len(size) - len(x.size)
    load = loader(x)
    return Pointwise(size, x.dtype, x.device, lambda idx: load(
        [ir.ModularIndexing(i, sympy.Integer(1), s) for i, s in zip(idx[skip:], x.size)]))


def _owned(t: Any) -> Any:
    """`t` as a value of its own: a view of storage becomes a lazy copy of it."""
    if isinstance(t, list):
        return [_owned(v) for v in t]
    if isinstance(t, (Buffer, BufferView)):
        return Pointwise(t.size, t.dtype, t.device, loader(t))
    return t


def _copying(view: Callable) -> Callable:
    def lowering(lower, node, *args, **kwargs):
        return _owned(view(lower, node, *args, **kwargs))
    return lowering


for _view, _copy_op in [
    (aten.permute.default, aten.permute_copy.default), (aten.t.default, aten.t_copy.default),
    (aten.transpose.int, aten.transpose_copy.int), (aten.expand.default, aten.expand_copy.default),
    (aten.unsqueeze.default, aten.unsqueeze_copy.default),
    (aten.squeeze.default, aten.squeeze_copy.default), (aten.squeeze.dim, aten.squeeze_copy.dim),
    (aten.squeeze.dims, aten.squeeze_copy.dims), (aten.view.default, aten.view_copy.default),
    (aten.slice.Tensor, aten.slice_copy.Tensor), (aten.select.int, aten.select_copy.int),
    (aten.as_strided.default, aten.as_strided_copy.default),
    (aten.diagonal.default, aten.diagonal_copy.default),
    (aten.split.Tensor, aten.split_copy.Tensor),
    (aten.split_with_sizes.default, aten.split_with_sizes_copy.default),
    (aten.unbind.int, aten.unbind_copy.int),
]:
    register(_copy_op)(_copying(LOWERINGS[_view]))


@register(aten.max.dim, aten.min.dim)
def _max_dim(lower, node, x, dim, keepdim=False):
    kind = "max" if node.target is aten.max.dim else "min"
    values = reduction(lower, x, [dim], keepdim, kind, x.dtype)
    return [values, reduction(lower, x, [dim], keepdim, "arg" + kind, torch.int64)]


def holds_as_traced(lower: GraphLowering, fact: sympy.Basic) -> bool:
    """Whether `fact` about symbolic sizes holds for the sizes the graph was traced with; if
    it does, it is guarded to keep holding (a call where it fails gets a version of its own).
    False where the trace's ShapeEnv cannot guard it."""
    shape_env = getattr(lower.gm, "shape_env", None)
    if fact.xreplace(lower.size_hints) is not sympy.true or not hasattr(shape_env,
                                                                       "evaluate_expr"):
        return False
    shape_env.evaluate_expr(fact)
    return True


def fits_guarded(lower: GraphLowering, length: sympy.Expr, limit: int) -> bool:
    """Whether `length` is at most `limit`; a symbolic length as traced, then guarded
    (`holds_as_traced`)."""
    if length.is_number:
        return int(length) <= limit
    return holds_as_traced(lower, sympy.Le(length, limit))


def positive(lower: GraphLowering, size: sympy.Expr) -> bool:
    """Whether `size` is above 0 for every input the trace admits."""
    return bool(size.is_positive) or _holds(getattr(lower.gm, "shape_env", None), size > 0)


# Lowerings kept in modules of their own (importing one registers its lowerings).
from . import (  # noqa: E402, F401
    basic_extras,
    bessel,
    complex_results,
    ctc_loss,
    distances,
    distributions,
    embedding_bag,
    embedding_renorm,
    flat_and_masked_scatters,
    fractional_pooling,
    grid_sampling,
    histograms,
    incomplete_gamma,
    max_pool_backward,
    orthogonal_polynomials,
    resampling,
    scans_and_sorts,
    scatter_lowerings,
    searching,
    segment_reductions,
    selection_indices,
    special_functions,
    static_nonzero,
    strided_views,
    tensor_hashing,
    top_values,
    trilinear_products,
)
