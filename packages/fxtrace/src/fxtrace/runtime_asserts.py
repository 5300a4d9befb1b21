"""Runtime asserts: the facts a trace assumed about data-dependent values, checked by the graph.

A value that depends on data (`item()`'s number, `nonzero`'s count: an unbacked symbol `u0`)
has no example to decide questions on. Where the traced code or a kernel states a fact about
one (`torch._check(n >= 2)`, `torch._check_is_size(n)`, the bounds check of `narrow`), the
ShapeEnv assumes it (`expect_true`) and records it in `runtime_asserts` instead of a guard: the
trace goes on as if it held, so the graph must check it when it runs, as eager raises there.
`insert_runtime_asserts` writes each as an `aten._assert_scalar(cond, message)` node, `cond`
computed from the graph values that bind its symbols (an int node whose value is the symbol,
or the size of a tensor node that has the symbol as a dim), placed right after the node that
binds the last of them. A fact whose symbols no graph value binds cannot be checked: it is left
out (the graph does not compute the value it is about).
"""

from __future__ import annotations

import math
import operator
import warnings
from collections.abc import Iterable
from typing import Any

import sympy
import torch
import torch.fx

from fakecore import FloatTrueDiv, FloorDiv, PythonMod, sym_exp, sym_log

aten = torch.ops.aten
ASSERT_OPS = (aten._assert_scalar.default, torch._assert_scalar)
_REBUILD = {
    sympy.Add: operator.add, sympy.Mul: operator.mul, sympy.Pow: operator.pow,
    sympy.Max: torch.sym_max, sympy.Min: torch.sym_min, FloorDiv: operator.floordiv,
    PythonMod: operator.mod, sympy.Eq: operator.eq, sympy.Ne: operator.ne, sympy.Lt: operator.lt,
    sympy.Le: operator.le, sympy.Gt: operator.gt, sympy.Ge: operator.ge, sympy.And: operator.and_,
    sympy.Or: operator.or_, sympy.Not: torch.sym_not, sympy.Abs: operator.abs,
    FloatTrueDiv: operator.truediv, sympy.floor: math.floor, sympy.ceiling: math.ceil,
    **{getattr(sympy, name): getattr(torch, f"_sym_{name}") for name in (
        "cos", "sin", "tan", "cosh", "sinh", "tanh", "asin", "acos", "atan")},
    # `math.log`, `math.exp` (a log over `1/log(2)` is `math.log2`'s: see `_log2_factors`)
    sympy.log: sym_log, sympy.exp: sym_exp,
}
_SYM_TYPES = (torch.SymInt, torch.SymFloat, torch.SymBool)


def insert_runtime_asserts(graph: torch.fx.Graph, asserts: Iterable[Any], *,
                           val_key: str = "val") -> None:
    """Write each of `asserts` (the ShapeEnv's `ShapeGuard`s) into `graph` as an
    `aten._assert_scalar` node; `val_key` names the meta entry holding a node's (fake) value.
    A fact some `_assert_scalar` node of the graph checks already is not written again."""
    present = {_canonical(node.args[0].meta[val_key].node.expr) for node in graph.nodes
               if node.target in ASSERT_OPS and isinstance(node.args[0], torch.fx.Node)
               and isinstance(node.args[0].meta.get(val_key), torch.SymBool)}
    pending = {}
    for ra in asserts:
        pending.setdefault(_canonical(ra.expr), ra)
    pending = [ra for key, ra in pending.items() if key not in present]
    if pending:
        _Writer(graph, val_key).write(pending)


def _canonical(expr: sympy.Basic) -> Any:
    """One form for a comparison however it is written: `0 <= u0 - 1` is `u0 - 1 >= 0` (the
    form a re-trace of the graph's own check records it in)."""
    if isinstance(expr, (sympy.Ge, sympy.Gt)):
        return type(expr), sympy.expand(expr.lhs - expr.rhs)
    if isinstance(expr, (sympy.Le, sympy.Lt)):
        return type(expr.reversed), sympy.expand(expr.rhs - expr.lhs)
    if isinstance(expr, (sympy.Eq, sympy.Ne)):
        difference = sympy.expand(expr.lhs - expr.rhs)
        return type(expr), frozenset((difference, -difference))
    return expr


def _log2_factors(expr: sympy.Mul) -> tuple[list[tuple[sympy.Expr, int]], sympy.Expr] | None:
    """`math.log2(v)` is `log(v)/log(2)` in sympy: the `(v, k)` of each `log2(v)**k` in the
    product `expr` (a `log(v)**k` that a `log(2)**-k` divides), and the rest of the product;
    None where there is none."""
    twos, logs, rest = 0, [], []
    for factor in expr.args:
        base, exponent = factor.args if isinstance(factor, sympy.Pow) else (factor, sympy.S.One)
        if base == sympy.log(2) and exponent.is_Integer:
            twos += int(exponent)
        elif isinstance(base, sympy.log) and not base.args[0].is_number and exponent.is_Integer:
            logs.append((base.args[0], int(exponent)))
        else:
            rest.append(factor)
    log2s = []
    for arg, exponent in logs:
        paired = 0
        if twos * exponent < 0:
            paired = min(abs(twos), abs(exponent)) * (1 if exponent > 0 else -1)
            twos += paired
            log2s.append((arg, paired))
        if exponent != paired:
            rest.append(sympy.log(arg, evaluate=False) ** (exponent - paired))
    if not log2s:
        return None
    return log2s, sympy.Mul(*rest, sympy.log(2) ** twos)


class _Writer:
    """One pass over the graph: binds symbols in node order, writes each assert once its
    symbols are bound."""

    def __init__(self, graph: torch.fx.Graph, val_key: str) -> None:
        self.graph = graph
        self.val_key = val_key
        # symbol -> the int node whose value it is, or (tensor node, dim) whose size it is
        self.bound: dict[sympy.Symbol, Any] = {}
        self.built: dict[sympy.Basic, torch.fx.Node] = {}

    def write(self, pending: list[Any]) -> None:
        for node in list(self.graph.nodes):
            if node.op == "output":
                break
            self._bind(node.meta.get(self.val_key), node)
            if node.op == "placeholder" and node.next.op == "placeholder":
                continue  # the graph's inputs come first
            ready = [ra for ra in pending if ra.expr.free_symbols <= self.bound.keys()]
            if not ready:
                continue
            pending = [ra for ra in pending if ra not in ready]
            with self.graph.inserting_before(node.next):
                for ra in ready:
                    try:
                        cond = self._build(ra.expr)
                    except NotImplementedError as error:  # (its nodes are left unused: dead)
                        warnings.warn(f"{error}: it is not checked when the graph runs",
                                      stacklevel=2)
                        continue
                    where = f" (at {ra.user_frame})" if ra.user_frame else ""
                    self.graph.call_function(aten._assert_scalar.default, (
                        cond, f"Runtime assertion failed for expression {ra.expr}{where}",
                    )).meta[self.val_key] = None

    def _bind(self, value: Any, node: torch.fx.Node) -> None:
        """Note the symbols `node` binds first."""
        found = []
        if isinstance(value, _SYM_TYPES):
            # (the symbol as made, too: one a `torch._check(n == 3)` replaced by 3 is still
            # bound by the node that reads it, and the check of it is still written)
            found = [(value.node.expr, node),
                     *([(value.node._expr, node)] if hasattr(value.node, "_expr") else [])]
        elif isinstance(value, torch.Tensor):
            # (and as made: the length `u1` of `x[:n]` that a check of `torch.cat` replaced
            # by 2 is still that dim's size, and the check of `Eq(u1, 2)` reads it)
            found = [(e, (node, dim)) for dim, s in enumerate(value.shape)
                     if isinstance(s, torch.SymInt)
                     for e in (s.node.expr, *([s.node._expr] if hasattr(s.node, "_expr") else []))]
        for expr, where in found:
            if isinstance(expr, sympy.Eq) and isinstance(value, torch.SymBool) \
                    and expr.lhs.is_Symbol and expr.rhs == 1:
                # a bool's `.item()`, `Eq(u0, 1)`: the node is the condition, and binds `u0`
                # as its 0 or 1
                self.built.setdefault(expr, node)
                expr, where = expr.lhs, ("bool", node)
            if isinstance(expr, sympy.Symbol) and expr not in self.bound:
                self.bound[expr] = where

    def _build(self, expr: sympy.Basic) -> Any:
        """A graph value computing `expr` (a node, or a Python number)."""
        if expr.is_Integer or expr in (sympy.true, sympy.false):
            return int(expr) if expr.is_Integer else bool(expr)
        if expr.is_Float or expr.is_Rational:  # `n / 2`: u0/2, a float in Python
            return float(expr)
        if getattr(expr, "is_number", False) and (expr.is_real or expr in (sympy.oo, -sympy.oo)):
            return float(expr)  # `1/log(2)` of a `math.log2`; `v < math.inf`
        if expr in self.built:
            return self.built[expr]
        if isinstance(expr, sympy.Symbol):
            where = self.bound[expr]
            if isinstance(where, torch.fx.Node):
                return where
            elif where[0] == "bool":
                node = self._call(torch.sym_ite, (where[1], 1, 0))
            else:
                tensor, dim = where
                node = self.graph.call_function(aten.sym_size.int, (tensor, dim))
                node.meta[self.val_key] = tensor.meta[self.val_key].shape[dim]
        elif isinstance(expr, sympy.Piecewise):  # `sym_ite`, `trunc`: both sides computed
            node = self._build(expr.args[-1][0])
            if expr.args[-1][1] != sympy.true:
                raise NotImplementedError(f"fxtrace: a runtime assert over {expr}, a "
                                          "Piecewise with no otherwise")
            for value, cond in reversed(expr.args[:-1]):
                then = self._build(value)
                if self._kind(then) is not self._kind(node):
                    # sympy's sym_float is the identity (`sym_ite(c, float(s0), a)` is
                    # Piecewise((s0, c), (zf0, True))), and torch.sym_ite wants one type:
                    # both sides as floats
                    then, node = self._float(then), self._float(node)
                node = self._call(torch.sym_ite, (self._build(cond), then, node))
        elif isinstance(expr, sympy.Pow) and expr.exp == sympy.S.Half:
            # `math.sqrt(v)` (sympy's sqrt is a power of the rational 1/2; `v ** 0.5` is one of
            # the float 0.5): math.sqrt raises ValueError for a negative v, where `**` gives
            # a complex number
            node = self._call(torch._sym_sqrt, (self._build(expr.base),))
        elif isinstance(expr, sympy.Mul) and (found := _log2_factors(expr)) is not None:
            # `math.log2(v)`: computed as eager did, not as math.log(v) / math.log(2) (an ulp
            # off at powers of two: `math.log2(v) < 3` failed for v = 8)
            log2s, rest = found
            node = self._build(rest) if rest != 1 else None
            for arg, exponent in log2s:
                factor = self._call(torch._sym_log2, (self._float(self._build(arg)),))
                if exponent != 1:
                    factor = self._call(operator.pow, (factor, exponent))
                node = factor if node is None else self._call(operator.mul, (node, factor))
        else:
            rebuild = _REBUILD.get(type(expr))
            if rebuild is None:
                raise NotImplementedError(f"fxtrace: a runtime assert over {expr}, whose "
                                          f"{type(expr).__name__} has no graph operation")
            args = [self._build(a) for a in expr.args]
            node = args[0]
            if len(args) == 1:  # Not
                node = self._call(rebuild, (node,))
            for arg in args[1:]:
                node = self._call(rebuild, (node, arg))
        self.built[expr] = node
        return node

    def _kind(self, value: Any) -> type:
        """The Python number type `value` (a node or a number) stands for: int, float or bool."""
        found = type(value.meta[self.val_key] if isinstance(value, torch.fx.Node) else value)
        return {torch.SymInt: int, torch.SymFloat: float, torch.SymBool: bool}.get(found, found)

    def _float(self, value: Any) -> Any:
        if not isinstance(value, torch.fx.Node):
            return float(value)
        if self._kind(value) is float:
            return value
        return self._call(torch.sym_float, (value,))

    def _call(self, op: Any, args: tuple) -> torch.fx.Node:
        node = self.graph.call_function(op, args)
        node.meta[self.val_key] = op(*(a.meta[self.val_key] if isinstance(a, torch.fx.Node)
                                       else a for a in args))
        return node
