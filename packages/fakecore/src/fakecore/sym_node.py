"""SymNode: the object behind torch.SymInt, SymFloat and SymBool.

PyTorch's C++ core and its Python op code compute with sizes through `torch.SymInt`, whose every
operation is forwarded to the `.node` it wraps: `a + b` calls `a.node.add(b.node)`, `bool(a == b)`
calls `.eq(...)` then `.bool_()`, a meta kernel asks `.guard_int(file, line)` for a concrete value.
This module implements that node protocol over sympy expressions: arithmetic builds a new node
with a bigger expression (and computes its hint from the operands' hints), and every method that
needs a concrete answer asks the ShapeEnv, which decides statically or records a guard.

`observe_sym_ops(callback)` lets a tracer see each operation as it happens, so that make_fx can
record size arithmetic as graph nodes.
"""

from __future__ import annotations

import builtins
import functools
import math
import operator
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import sympy
import torch

from fakecore.sym_functions import FloatTrueDiv, FloorDiv, PythonMod, round_up_sum

if TYPE_CHECKING:
    from fakecore.shape_env import ShapeEnv

SymOpCallback = Callable[[Callable[..., Any], tuple[Any, ...], Any], None]
_observers: list[SymOpCallback] = []


@contextmanager
def observe_sym_ops(callback: SymOpCallback) -> Iterator[None]:
    """While active, call `callback(op, args, result)` for every operation on our symbolic values."""
    _observers.append(callback)
    try:
        yield
    finally:
        _observers.remove(callback)


def wrap_node(node: SymNode) -> Any:
    """The Python value for `node`: a plain number when it is one, else a torch.Sym* around it."""
    if node.constant is not None:
        return node.constant
    expr = node.expr
    if expr.is_Number or expr in (sympy.true, sympy.false):
        return node.pytype(expr)
    return {int: torch.SymInt, float: torch.SymFloat, bool: torch.SymBool}[node.pytype](node)


def _signed_zero(a: SymNode, b: SymNode, hint: object) -> bool:
    """Whether a float zero that `a` and `b` (backed symbols only) made may be -0.0 for other
    values of them: one of them is negative or -0.0 now (of non-negative operands the
    arithmetic makes +0.0 only)."""
    symbols = a.expr.free_symbols | b.expr.free_symbols
    return isinstance(hint, float) and hint == 0.0 and bool(symbols) and \
        symbols <= a.shape_env.var_to_val.keys() and any(
            isinstance(n._hint, (int, float)) and math.copysign(1.0, n._hint) < 0 for n in (a, b))


def _float_value(node: SymNode) -> bool:
    """Whether `node` is a float computed from symbols, not a constant (even where sympy
    simplified it to a number)."""
    return node.pytype is float and node.constant is None


def _observed(node: SymNode) -> Any:
    """The value an observer is shown for `node`: as `wrap_node`, but a float computed from
    symbols stays a SymFloat (a tracer writes the node that computes it, not its number)."""
    return torch.SymFloat(node) if _float_value(node) else wrap_node(node)


def _cancels(result: SymNode, *args: SymNode) -> bool:
    """Whether float `result` of `args` is not what IEEE computes for every value of its
    data-dependent floats: sympy cancelled one out of it (`v - v`, `v * 0`, `(v + s) - v` of a
    `.item()` v: NaN or inf where sympy has 0 or s), or an argument is such a float."""
    if result.pytype is not float:
        return False
    if any(a.cancelled for a in args):
        return True
    lost = set().union(*(a.expr.free_symbols for a in args)) - result._expr.free_symbols
    return any(map(result.shape_env.is_unbacked_float, lost))


def _to_sympy(value: object) -> sympy.Basic:
    return sympy.true if value is True else sympy.false if value is False else sympy.sympify(value)


def _relation(relation: type) -> Callable:
    # Unevaluated: sympy's own evaluation of comparisons and connectives is slow, and the
    # ShapeEnv decides them anyway (cheaply, from value ranges) when someone asks.
    return lambda a, b: relation(a, b, evaluate=False)


# (not Symbol, which sympy also counts a Boolean)
_CONDITIONS = (sympy.logic.boolalg.BooleanAtom, sympy.logic.boolalg.BooleanFunction,
               sympy.core.relational.Relational)


def _equality(negated: bool) -> Callable:
    # Between conditions (a bool `.item()` compared with False), `Eq` is no relation sympy can
    # evaluate (it subtracts its sides): equivalence, or its negation
    def build(a: sympy.Basic, b: sympy.Basic) -> sympy.Basic:
        if isinstance(a, _CONDITIONS) or isinstance(b, _CONDITIONS):
            same = sympy.Equivalent(a, b)
            return sympy.Not(same) if negated else same
        return (sympy.Ne if negated else sympy.Eq)(a, b, evaluate=False)
    return build


def _dyadic(a: sympy.Expr) -> tuple[int, sympy.Expr, int] | None:
    """`(p, rest, q)` where `a` is `p / q * rest`, an int expression times a float with few
    significant bits (`1.5 * s0`, `0.5 * s0`: `interpolate`'s output size by a scale factor);
    else None."""
    coeff, rest = a.as_coeff_Mul()
    if isinstance(coeff, sympy.Float) and rest.is_integer and rest.free_symbols:
        p, q = float(coeff).as_integer_ratio()
        if abs(p) < 2**12 and q <= 2**12:
            return p, rest, q
    return None


def _trunc(a: sympy.Expr) -> sympy.Expr:
    if a.is_nonnegative:
        return sympy.floor(a)
    return sympy.Piecewise((sympy.floor(a), a >= 0), (sympy.ceiling(a), True))


def _contiguous_in_order(sizes: list[sympy.Expr], strides: list[sympy.Expr], order: list[int]):
    """True when dims, taken innermost first in `order`, have the strides of a dense layout."""
    expected: sympy.Expr = sympy.Integer(1)
    conds = []
    for d in order:
        if not (sizes[d] == 1 or strides[d] == expected):
            conds.append(sympy.Or(sympy.Eq(sizes[d], 1, evaluate=False),
                                  sympy.Eq(strides[d], expected, evaluate=False), evaluate=False))
        expected = expected * sizes[d]
    if not conds:
        return sympy.true
    numel = sympy.Mul(*sizes)
    return sympy.Or(sympy.Eq(numel, 0, evaluate=False), sympy.And(*conds, evaluate=False),
                    evaluate=False)


def _int_truediv(a: sympy.Expr, b: sympy.Expr) -> sympy.Expr:
    """`a / b` of ints: sympy's quotient where b is never 0, else kept as written (Python
    raises at 0, where sympy's `n / n` is 1)."""
    return a / b if b.is_nonzero else FloatTrueDiv(a, b)


# name: (sympy function, python function for hints, result type or None for "int unless float")
_BINARY: dict[str, tuple[Callable, Callable, type | None]] = {
    "add": (operator.add, operator.add, None),
    "sub": (operator.sub, operator.sub, None),
    "mul": (operator.mul, operator.mul, None),
    # Python's own `%` and `//`: sympy's Mod and floor rewrite themselves unsoundly for ints.
    "mod": (PythonMod, operator.mod, None),
    "int_floordiv": (FloorDiv, operator.floordiv, None),
    "float_truediv": (FloatTrueDiv, operator.truediv, float),
    "int_truediv": (_int_truediv, operator.truediv, float),
    "pow_by_natural": (operator.pow, operator.pow, int),
    "float_pow": (operator.pow, lambda a, b: float(a) ** float(b), float),
    "sym_min": (sympy.Min, min, None),
    "sym_max": (sympy.Max, max, None),
    "eq": (_equality(negated=False), operator.eq, bool),
    "ne": (_equality(negated=True), operator.ne, bool),
    "lt": (_relation(sympy.Lt), operator.lt, bool),
    "le": (_relation(sympy.Le), operator.le, bool),
    "gt": (_relation(sympy.Gt), operator.gt, bool),
    "ge": (_relation(sympy.Ge), operator.ge, bool),
    "sym_and": (_relation(sympy.And), operator.and_, bool),
    "sym_or": (_relation(sympy.Or), operator.or_, bool),
}
# Expressions that are conditions (a Symbol is a sympy Boolean too, and no condition)
_CONDITIONS = (sympy.core.relational.Relational, sympy.logic.boolalg.BooleanFunction,
               sympy.logic.boolalg.BooleanAtom)
_UNARY: dict[str, tuple[Callable, Callable, type | None]] = {
    "neg": (operator.neg, operator.neg, None),
    "pos": (operator.pos, operator.pos, None),
    "abs": (sympy.Abs, abs, None),
    "sym_not": (sympy.Not, operator.not_, bool),
    "ceil": (sympy.ceiling, math.ceil, int),
    "floor": (sympy.floor, math.floor, int),
    "trunc": (_trunc, math.trunc, int),
    "sym_int": (_trunc, math.trunc, int),
    "sym_float": (lambda a: a, float, float),
    "sym_sqrt": (sympy.sqrt, math.sqrt, float),
    "sym_cos": (sympy.cos, math.cos, float),
    "sym_sin": (sympy.sin, math.sin, float),
    "sym_tan": (sympy.tan, math.tan, float),
    "sym_cosh": (sympy.cosh, math.cosh, float),
    "sym_sinh": (sympy.sinh, math.sinh, float),
    "sym_tanh": (sympy.tanh, math.tanh, float),
    "sym_asin": (sympy.asin, math.asin, float),
    "sym_acos": (sympy.acos, math.acos, float),
    "sym_atan": (sympy.atan, math.atan, float),
    "sym_log2": (lambda a: sympy.log(a, 2), math.log2, float),
    # `math.log`, `math.exp` (`sym_log`, `sym_exp` below). Left unevaluated over symbols:
    # sympy's `exp(log(v))` is `v`, where `math.log` raises for a negative `v`
    "sym_log": (lambda a: sympy.log(a, evaluate=a.is_number), math.log, float),
    "sym_exp": (lambda a: sympy.exp(a, evaluate=a.is_number), math.exp, float),
}
# The Python callable each operation means, as a tracer records it.
_USER_OP: dict[str, Callable] = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul, "mod": operator.mod,
    "int_floordiv": operator.floordiv, "float_truediv": operator.truediv,
    "int_truediv": operator.truediv, "pow_by_natural": operator.pow, "float_pow": operator.pow,
    "sym_min": torch.sym_min, "sym_max": torch.sym_max, "eq": operator.eq, "ne": operator.ne,
    "lt": operator.lt, "le": operator.le, "gt": operator.gt, "ge": operator.ge,
    "sym_and": operator.and_, "sym_or": operator.or_, "neg": operator.neg, "pos": operator.pos,
    "abs": operator.abs, "sym_not": torch.sym_not, "ceil": math.ceil, "floor": math.floor,
    "trunc": math.trunc, "sym_int": torch.sym_int, "sym_float": torch.sym_float,
    "sym_sqrt": math.sqrt, "sym_cos": math.cos, "sym_sin": math.sin, "sym_tan": math.tan,
    "sym_cosh": math.cosh, "sym_sinh": math.sinh, "sym_tanh": math.tanh, "sym_asin": math.asin,
    "sym_acos": math.acos, "sym_atan": math.atan, "sym_log2": math.log2,
    "sym_log": math.log, "sym_exp": math.exp,
}
_SYMBOL = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
_CONNECTIVES = ("sym_and", "sym_or")
# Bit operations have no useful symbolic form: they specialise their operands. Each with
# Python's symbol for it (a float operand is Python's TypeError, not truncated).
_CONCRETE_BINARY = {
    "bitwise_and": (operator.and_, "&"), "bitwise_or": (operator.or_, "|"),
    "bitwise_xor": (operator.xor, "^"), "lshift": (operator.lshift, "<<"),
    "rshift": (operator.rshift, ">>"),
}


@functools.lru_cache(4096)
def _apply(name: str, *exprs: sympy.Basic) -> sympy.Basic:
    """The sympy expression of operation `name`; models repeat the same size arithmetic."""
    table = _BINARY if len(exprs) == 2 else _UNARY
    return table[name][0](*exprs)


_MAX_OPS = 256  # operations a symbolic number's expression may hold before it is specialised


class SymNode:
    """A symbolic int, float or bool: a sympy expression, its ShapeEnv, its type and its hint."""

    def __init__(
        self, expr: sympy.Basic, shape_env: ShapeEnv, pytype: type, hint: object,
        constant: object = None,
    ) -> None:
        self._expr = expr
        self.shape_env = shape_env
        self.pytype = pytype
        self._hint = hint
        self.constant = constant
        self.size = 1  # operations in the expression, counted as it is built (an upper bound)
        self.cancelled = False  # a float whose expression is not IEEE's (see `_cancels`)

    @property
    def expr(self) -> sympy.Basic:
        return self.shape_env.simplify(self._expr)

    @property
    def hint(self) -> object:
        return self._hint

    # ----- kind --------------------------------------------------------------------------------

    def is_int(self) -> bool:
        return self.pytype is int

    def is_float(self) -> bool:
        return self.pytype is float

    def is_bool(self) -> bool:
        return self.pytype is bool

    def is_symbolic(self) -> bool:
        return self.constant is None

    def is_constant(self) -> bool:
        # Not for a float: torch's SymFloat operators read a constant node's number only for
        # SymInt and SymBool ("expect to be called with constant SymBools" for `round(s, 1) - 0.5`,
        # whose node round() made a number); ours computes a float constant's operations as Python
        return self.constant is not None and self.pytype is not float

    def is_nested_int(self) -> bool:
        return False

    def nested_int(self) -> None:
        return None

    def nested_int_coeff(self) -> None:
        return None

    def has_hint(self) -> bool:
        return self._hint is not None

    def require_hint(self) -> object:
        if self._hint is None:
            return self.shape_env.evaluate_expr(self.expr)
        return self._hint

    def maybe_as_int(self) -> int | None:
        expr = self.expr
        return int(expr) if expr.is_Integer else None

    def maybe_as_float(self) -> float | None:
        expr = self.expr
        return float(expr) if expr.is_Number else None

    def maybe_as_bool(self) -> bool | None:
        expr = self.expr
        return bool(expr) if expr in (sympy.true, sympy.false) else None

    # ----- making nodes ------------------------------------------------------------------------

    def _new(self, expr: sympy.Basic, pytype: type, hint: object) -> SymNode:
        return SymNode(expr, self.shape_env, pytype, hint)

    def wrap_int(self, value: int) -> SymNode:
        return SymNode(sympy.Integer(value), self.shape_env, int, value, constant=value)

    def wrap_float(self, value: float) -> SymNode:
        return SymNode(sympy.Float(value), self.shape_env, float, value, constant=value)

    def wrap_bool(self, value: bool) -> SymNode:
        return SymNode(_to_sympy(value), self.shape_env, bool, value, constant=value)

    def _number(self, value: bool | int | float) -> SymNode:
        """A constant node of `value`, of its own Python type."""
        return {bool: self.wrap_bool, int: self.wrap_int, float: self.wrap_float}[type(value)](value)

    def clone(self) -> SymNode:
        return self

    def _notify(self, name: str, args: tuple[SymNode, ...], result: SymNode) -> SymNode:
        if _observers:
            op = _USER_OP[name]
            values = tuple(_observed(a) for a in args)
            # Algebra on symbolic floats that sympy made a number (`v - v`, `0 * v + 1` of a
            # `.item()`) is still computed: IEEE arithmetic does not simplify so (NaN and inf
            # give NaN), and as a plain number a tracer wrote the constant (0.0) in its graph
            out = _observed(result) if any(_float_value(a) for a in args) else wrap_node(result)
            for observer in list(_observers):
                observer(op, values, out)
        return result

    def _binary(self, name: str, other: SymNode) -> SymNode:
        _, py_fn, pytype = _BINARY[name]
        if name in _CONNECTIVES and (self.constant is not None or other.constant is not None):
            # True & x is x, False & x is False (and dually for |): no sympy needed.
            known, rest = (self, other) if self.constant is not None else (other, self)
            absorbing = name == "sym_or"
            return known if bool(known.constant) == absorbing else rest
        if name not in _CONNECTIVES:
            # (a condition promoted to a number, `float(s0 > 6)` for `-1.5 == (s0 > 6)`, keeps
            # the condition as its expression: it is computed with as the condition)
            self, other = self._as_condition(), other._as_condition()
        if name not in _CONNECTIVES and (self.pytype is bool) != (other.pytype is bool):
            # Python computes with a bool beside a number as the int 0 or 1, where sympy reads
            # the number as a condition (`s1 != (s0 != 0.5)` was `~Equivalent(s1, ...)`, a guard
            # that failed at once). Compared with a constant 0 or 1, the condition is compared
            # with False or True (`b == False` of an unbacked `b` stays a condition); otherwise
            # it is decided (guarded), then used as that int.
            cond, number = (self, other) if self.pytype is bool else (other, self)
            if name in ("eq", "ne") and number.constant in (0, 1):
                known = cond.wrap_bool(bool(number.constant))
                return self._binary(name, known) if self is cond else known._binary(name, other)
            decided = cond.wrap_int(int(cond._guarded_value()))
            return decided._binary(name, other) if self is cond else self._binary(name, decided)
        if self.constant is not None and other.constant is not None and \
                name not in ("pow_by_natural", "float_pow"):
            # Two numbers (a SymFloat that `round()` specialised, minus 0.0): Python's own
            # arithmetic, not sympy's (whose zero has no sign: -0.0 - 0.0 was 0.0)
            return self._notify(name, (self, other),
                                self._number(py_fn(self.constant, other.constant)))
        if pytype is None:
            pytype = float if float in (self.pytype, other.pytype) else int
        hint = None
        if self._hint is not None and other._hint is not None:
            hint = py_fn(self._hint, other._hint)
        if name in ("eq", "ne") and self.pytype is bool and other.pytype is bool:
            # Between two conditions: (a and b) or (not a and not b), which guards render.
            a, b = self.expr, other.expr
            expr = (a & b) | (~a & ~b) if name == "eq" else (a & ~b) | (~a & b)
        else:
            size = self.size + other.size + 1
            if size > _MAX_OPS:  # counted as a tree: count what sympy kept (`k + 256`)
                size = sympy.count_ops(self.expr) + sympy.count_ops(other.expr) + 1
            if size > _MAX_OPS and hint is not None and pytype is not bool:
                # Python arithmetic repeated in an unrolled loop (`k = k // 2 + k`): the
                # expression doubles at each step, and so does sympy's time; the value is
                # specialised (guarded) instead
                value = py_fn(self._guarded_value(), other._guarded_value())
                return self.wrap_int(value) if pytype is int else self.wrap_float(value)
            expr = _apply(name, self.expr, other.expr)
            if name in ("int_floordiv", "mod"):
                expr = self.shape_env.simplify_division(expr)
            elif name in ("add", "sub"):
                expr = round_up_sum(expr)
        if pytype is float and expr.is_Number and expr.is_zero and _signed_zero(self, other, hint):
            # sympy's zero has no sign, and it dropped the symbols the sign rests on
            # (`(-0.0) ** s0` is 0; IEEE's -0.0 at odd s0): pin them, keep Python's zero
            self.shape_env.pin(self.expr.free_symbols | other.expr.free_symbols)
            return self._notify(name, (self, other), self.wrap_float(hint))
        if pytype is bool and (self.cancelled or other.cancelled):
            # `v * 0 <= 0`, `v - v == 0` of a `.item()`: False for NaN and inf, where sympy
            # has 0 <= 0; a condition on data that nothing decides while tracing
            expr, hint = self.shape_env.create_unbacked_symbool(
                f"`{self.expr} {_SYMBOL[name]} {other.expr}`, a comparison of float algebra "
                "that sympy simplified (IEEE does not, for NaN and inf)"), None
        elif pytype is bool:
            # A comparison the value ranges settle is a plain constant from here on.
            static = self.shape_env.static_value(expr)
            if static is not None:
                return self._notify(name, (self, other), self.wrap_bool(bool(static)))
        result = self._new(expr, pytype, hint)
        if pytype is not bool:
            result.size = size
            result.cancelled = _cancels(result, self, other)
        return self._notify(name, (self, other), result)

    def _as_condition(self) -> SymNode:
        """The node as a bool where its expression is a condition (a bool made a number)."""
        if self.pytype is bool or not isinstance(self.expr, _CONDITIONS):
            return self
        return self._new(self.expr, bool, None if self._hint is None else bool(self._hint))

    def _guarded_value(self) -> bool | int | float:
        """The node's value, guarded where it is symbolic."""
        if self.constant is not None:
            return self.constant
        guard = {bool: self.guard_bool, int: self.guard_int}.get(self.pytype, self.guard_float)
        return guard()

    def _unary(self, name: str) -> SymNode:
        _, py_fn, pytype = _UNARY[name]
        if self.constant is not None and name in ("neg", "pos", "abs", "sym_float"):
            # -(-0.0) as Python computes it (sympy's zero has no sign)
            return self._notify(name, (self,), self._number(py_fn(self.constant)))
        hint = None if self._hint is None else py_fn(self._hint)
        found = _dyadic(self.expr) if name == "floor" or (
            name in ("trunc", "sym_int") and self.expr.is_nonnegative) else None
        if found is not None and self._below(abs(found[0]) * found[1], 2**53):
            # `floor(1.5 * s0)` is `(3*s0) // 2` while float64 computes `s0 * 1.5` exactly
            p, rest, q = found
            expr = FloorDiv(p * rest, q) if q != 1 else p * rest
        else:
            expr = _apply(name, self.expr)
        if pytype is int and self.cancelled:
            # `int(v - v)`, `math.floor(v * 0)` of an `.item()` v: sympy's 0, but a ValueError
            # or OverflowError for NaN and inf: a data-dependent int nothing decides while
            # tracing (computed by the graph where it is used as a value)
            expr = self.shape_env.create_unbacked_symint(
                f"`{name}({self.expr})`, of float algebra that sympy simplified (IEEE does "
                "not, for NaN and inf)").node.expr
        result = self._new(expr, pytype or self.pytype, hint)
        result.cancelled = _cancels(result, self)
        return self._notify(name, (self,), result)

    def _below(self, expr: sympy.Expr, bound: int) -> bool:
        """Whether `-bound < expr < bound`, guarded (False where unbacked symbols decide)."""
        return all(bool(self.shape_env.evaluate_expr(e, fallback=False))
                   for e in (expr < bound, expr > -bound) if e is not sympy.true)

    def _concrete_binary(self, name: str, other: SymNode) -> SymNode:
        op, symbol = _CONCRETE_BINARY[name]
        if float in (self.pytype, other.pytype):  # `7.5 ^ s0` (operands in the user's order)
            raise TypeError(f"unsupported operand type(s) for {symbol}: "
                            f"'{self.pytype.__name__}' and '{other.pytype.__name__}'")
        value = op(self.guard_int("", 0), other.guard_int("", 0))
        return self.wrap_int(value)

    def sym_sum(self, terms: tuple[SymNode, ...]) -> SymNode:
        hints = [t._hint for t in terms]
        hint = None if None in hints else sum(hints)
        result = self._new(sympy.Add(*[t.expr for t in terms]), int, hint)
        if _observers:
            values = (tuple(wrap_node(t) for t in terms),)
            for observer in list(_observers):
                observer(torch.sym_sum, values, wrap_node(result))
        return result

    def truediv(self, other: SymNode) -> SymNode:
        both_int = self.is_int() and other.is_int()
        return self._binary("int_truediv" if both_int else "float_truediv", other)

    def floordiv(self, other: SymNode) -> SymNode:
        return self._binary("int_floordiv", other)

    def pow(self, other: SymNode) -> SymNode:
        if self.is_int() and other.is_int() and other.guard_bool_expr(other.expr >= 0):
            return self._binary("pow_by_natural", other)
        return self._binary("float_pow", other)

    def sym_ite(self, then: SymNode, otherwise: SymNode) -> SymNode:
        """`then if self else otherwise` as one value, deciding nothing (no guard):
        `Piecewise((then, self), (otherwise, True))`, or for booleans `self & then | ~self &
        otherwise`. A condition the ranges settle picks its side."""
        if then.pytype is not otherwise.pytype:
            raise TypeError(f"sym_ite: {then.pytype.__name__} and {otherwise.pytype.__name__} "
                            "values (both sides must have one type)")
        static = self.shape_env.static_value(self.expr) if self.constant is None else None
        if self.constant is not None or static is not None or then.expr == otherwise.expr:
            known = self.constant if self.constant is not None else static
            result = then if known is None or bool(known) else otherwise
        else:
            hint = None
            if self._hint is not None:
                hint = then._hint if self._hint else otherwise._hint
            if then.pytype is bool:  # a boolean the ShapeEnv decides as one (and, or, not)
                expr = sympy.Or(sympy.And(self.expr, then.expr, evaluate=False),
                                sympy.And(sympy.Not(self.expr), otherwise.expr, evaluate=False),
                                evaluate=False)
            else:
                expr = sympy.Piecewise((then.expr, self.expr), (otherwise.expr, True))
            result = self._new(expr, then.pytype, hint)
        if _observers:
            values = (wrap_node(self), wrap_node(then), wrap_node(otherwise))
            for observer in list(_observers):
                observer(torch.sym_ite, values, wrap_node(result))
        return result

    def round(self, ndigits: int | None = None) -> SymNode:
        value = builtins.round(self.guard_float("", 0), ndigits)
        return self.wrap_int(value) if ndigits is None else self.wrap_float(value)

    def is_integer(self) -> SymNode:
        return self.wrap_bool(float(self.guard_float("", 0)).is_integer())

    # ----- sizes and strides: contiguity questions the C++ core asks ---------------------------

    def _layout_query(self, sizes: list[SymNode], strides: list[SymNode], order: list[int]):
        expr = _contiguous_in_order([s.expr for s in sizes], [s.expr for s in strides], order)
        hints = [s._hint for s in (*sizes, *strides)]
        hint = None
        if None not in hints:
            hint = bool(expr.xreplace(self.shape_env.var_to_val))
        return self._new(expr, bool, hint)

    def is_contiguous(self, sizes: list[SymNode], strides: list[SymNode]) -> SymNode:
        return self._layout_query(sizes, strides, list(reversed(range(len(sizes)))))

    def is_channels_last_contiguous_2d(self, sizes, strides) -> SymNode:
        return self._layout_query(sizes, strides, [1, 3, 2, 0])

    def is_channels_last_contiguous_3d(self, sizes, strides) -> SymNode:
        return self._layout_query(sizes, strides, [1, 4, 3, 2, 0])

    def _strides_order_query(self, sizes, strides, order) -> SymNode:
        # Whether strides descend in `order`: decided on the hints (a layout heuristic only).
        values = [s.require_hint() for s in strides]
        shape = [s.require_hint() for s in sizes]
        ok = all(values[a] >= values[b] * (shape[b] if shape[b] > 1 else 1) or shape[b] == 1
                 for a, b in zip(order, order[1:]))
        return self.wrap_bool(ok)

    def is_channels_last_strides_2d(self, sizes, strides) -> SymNode:
        return self._strides_order_query(sizes, strides, [0, 2, 3, 1])

    def is_channels_last_strides_3d(self, sizes, strides) -> SymNode:
        return self._strides_order_query(sizes, strides, [0, 2, 3, 4, 1])

    def is_non_overlapping_and_dense(self, sizes, strides) -> SymNode:
        hints = [s.require_hint() for s in strides]
        order = sorted(range(len(sizes)), key=lambda d: (hints[d], d))
        return self._layout_query(sizes, strides, order)

    def is_non_overlapping_and_dense_indicator(self, sizes, strides) -> SymNode:
        dense = self.is_non_overlapping_and_dense(sizes, strides)
        return self._new(sympy.Piecewise((1, dense.expr), (0, True)), int,
                         None if dense._hint is None else int(dense._hint))

    # ----- concrete answers: these consult the ShapeEnv, which may record a guard --------------

    def guard_bool_expr(self, expr: sympy.Basic) -> bool:
        return bool(self.shape_env.evaluate_expr(expr))

    def guard_int(self, file: str = "", line: int = 0) -> int:
        return int(self.shape_env.evaluate_expr(self.expr, hint=self._hint))

    def guard_float(self, file: str = "", line: int = 0) -> float:
        if self.cancelled:  # `float(v - v)`, `round(v * 0)`: sympy's 0, IEEE's NaN at v = inf
            from fakecore.errors import DataDependentError
            raise DataDependentError(
                f"could not decide {self.expr}: float algebra that sympy simplified out of a "
                "data-dependent float (IEEE does not, for NaN and inf); it was needed as a "
                "plain Python number, which needs the real tensor")
        if self.constant is not None:  # -0.0 (`round(s, -1)` at s = -0.75): sympy's Float is 0
            return float(self.constant)
        env, expr = self.shape_env, self.expr
        if isinstance(self._hint, float) and not (expr.is_Symbol or expr.is_rational) and \
                expr.free_symbols <= env.var_to_val.keys() and env.static_value(expr) is None:
            # Float algebra (float literals, float inputs, sqrt and other irrational functions;
            # not rationals of sizes, which guards compute exactly): sympy's rewrites of it are
            # not IEEE's (`sqrt(2*s0*s1)` is `sqrt(2)*sqrt(s0)*sqrt(s1)`, `0.1*s0 + 0.2*s0` is
            # `0.30000000000000004*s0`), so the guard `Eq(expr, hint)` could fail for the very
            # inputs the hint was computed from. Pin the symbols instead: for them the
            # expression is the hint (computed as Python computes it, one operation at a time)
            env.pin(expr.free_symbols)
            return self._hint
        value = float(self.shape_env.evaluate_expr(self.expr, hint=self._hint))
        if value == 0.0 and isinstance(self._hint, float) and self._hint == 0.0 and \
                self.expr.free_symbols <= self.shape_env.var_to_val.keys():
            # sympy's zero has no sign (`-0.0 / n`, `-0.0 - n // 10`: sympy's 0, IEEE's -0.0 at
            # n = 3, 0.0 at n = -3; copysign, str and f-strings show it). The guard Eq(expr, 0)
            # holds for both: pin the symbols, and take the hint's zero (computed as Python
            # computes it, one operation at a time)
            self.shape_env.pin(self.expr.free_symbols)
            return self._hint
        return value

    def guard_bool(self, file: str = "", line: int = 0) -> bool:
        return bool(self.shape_env.evaluate_expr(self.expr, hint=self._hint))

    def guard_size_oblivious(self, file: str = "", line: int = 0) -> bool:
        return bool(self.shape_env.evaluate_expr(self.expr, size_oblivious=True))

    def guard_or_false(self, file: str = "", line: int = 0) -> bool:
        return bool(self.shape_env.evaluate_expr(self.expr, fallback=False))

    def guard_or_true(self, file: str = "", line: int = 0) -> bool:
        return bool(self.shape_env.evaluate_expr(self.expr, fallback=True))

    def statically_known_true(self, file: str = "", line: int = 0) -> bool:
        return self.shape_env.static_value(self.expr) == sympy.true

    def expect_true(self, file: str = "", line: int = 0) -> bool:
        if self._hint is not None:
            return self.guard_bool(file, line)
        self.shape_env.assume(self.expr)
        return True

    def expect_size(self, file: str = "", line: int = 0) -> bool:
        expr = self.expr
        for sym in expr.free_symbols & self.shape_env.unbacked_producers.keys():
            self.shape_env.size_like.add(sym)
        self._new(expr >= 0, bool, None).expect_true(file, line)
        return True

    def bool_(self) -> bool:
        return self.guard_bool()

    def int_(self) -> int:
        return self.guard_int()

    def float_(self) -> float:
        return self.guard_float()

    # ----- printing ----------------------------------------------------------------------------

    def str(self) -> str:
        return str(self.expr)

    def _graph_repr(self) -> str:
        return str(self.expr)

    def __repr__(self) -> str:
        return f"SymNode({self.expr}, hint={self._hint})"


def _as_node(pred: SymNode, value: object) -> SymNode:
    if isinstance(value, (torch.SymInt, torch.SymFloat, torch.SymBool)):
        return value.node
    if isinstance(value, bool):
        return pred.wrap_bool(value)
    if isinstance(value, int):
        return pred.wrap_int(value)
    if isinstance(value, float):
        return pred.wrap_float(value)
    raise TypeError(f"sym_ite: a {type(value).__name__} value (an int, float or bool is needed)")


_torch_sym_ite = torch.SymBool.__sym_ite__


def _symbool_sym_ite(pred: torch.SymBool, then: object, otherwise: object) -> object:
    """`torch.sym_ite(pred, then, otherwise)` calls `pred.__sym_ite__(then, otherwise)`.
    PyTorch's own method asserts that the nodes are of its own node class; on ours it goes to
    `SymNode.sym_ite` instead (and to PyTorch's for any other node)."""
    if not isinstance(pred.node, SymNode):
        return _torch_sym_ite(pred, then, otherwise)
    return wrap_node(pred.node.sym_ite(_as_node(pred.node, then), _as_node(pred.node, otherwise)))


def _math(name: str, fn: Callable) -> Callable:
    def apply(value: object) -> object:
        node = getattr(value, "node", None)
        if isinstance(value, (torch.SymInt, torch.SymFloat)) and isinstance(node, SymNode):
            return wrap_node(getattr(node, name)())
        return fn(value)

    apply.__name__ = apply.__qualname__ = name
    apply.__doc__ = (f"`math.{fn.__name__}(value)`, symbolic for a symbolic int or float (torch "
                     f"has no `torch._{name}`, as it has `torch._sym_log2`); a tracer records "
                     f"`math.{fn.__name__}`.")
    return apply


sym_log = _math("sym_log", math.log)
sym_exp = _math("sym_exp", math.exp)


def _install_operations() -> None:
    for name in _BINARY:
        if not hasattr(SymNode, name):
            setattr(SymNode, name, lambda self, other, _n=name: self._binary(_n, other))
    for name in _UNARY:
        setattr(SymNode, name, lambda self, _n=name: self._unary(_n))
    for name in _CONCRETE_BINARY:
        setattr(SymNode, name, lambda self, other, _n=name: self._concrete_binary(_n, other))
    torch.SymBool.__sym_ite__ = _symbool_sym_ite


_install_operations()
