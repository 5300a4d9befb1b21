"""Symbolic shape guards: a ShapeEnv's decisions, as checks on the inputs' sizes.

Tracing with symbolic sizes (fakecore) leaves three kinds of assumption in the ShapeEnv: the
guards it recorded (`s0 > 4`), the ranges of its symbols (`s0 >= 2`: sizes 0 and 1 were
specialised), and duck sizing (one symbol for every input dim of the same example size, so
those dims must stay equal). `shape_guards(shape_env)` turns all three into `ShapeGuard`s:
sympy expressions over symbols, each symbol bound to the source of the size it stands for,
rendered to plain Python in the generated check. The ShapeEnv is only read (duck-typed), so
this module needs sympy, not fakecore; the symbols' origins must carry guards Sources (pass
`source=LocalSource("x")` to fakecore's `from_tensor`).
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass
from typing import Any

import sympy
from sympy.printing.precedence import PRECEDENCE
from sympy.printing.pycode import PythonCodePrinter

from guards.guard_kinds import Guard
from guards.sources import Source, TensorPropertySource, expect


class _Printer(PythonCodePrinter):
    """Python for size expressions that computes what sympy does.

    Rationals are exact: `Fraction(7, 3)`, and a quotient of rational values is a Fraction
    (`Fraction(s0, s1)`), never a float division. In a comparison that involves a float
    literal, a side that holds a Fraction is rounded to a float (`float(Fraction(s0, 3)) ==
    2.3333333333333335`): sympy rounds a Rational to the Float's precision to compare them, and
    so does Python's `7 / 3`, which is how such floats arise.
    Floats are written so that they read back as the same number. Functions are `math.f`;
    `floor(a/b)` is `a // b`, `log(x)/log(2)` is `math.log2(x)` (exact at powers of two) and
    Min/Max are min/max. A function with no Python rendering raises ValueError naming it.
    `readable` writes quotients and rationals as `a/b`, for describing a guard rather than
    running it."""

    def __init__(self, readable: bool = False) -> None:
        super().__init__({"fully_qualified_modules": True})
        self._readable = readable

    def _print_not_supported(self, expr: sympy.Basic) -> str:
        raise ValueError(f"{type(expr).__name__} (in {expr}) cannot be written as Python")

    def _print_Rational(self, expr: sympy.Rational) -> str:
        return f"{expr.p}/{expr.q}" if self._readable else f"Fraction({expr.p}, {expr.q})"

    def _print_Float(self, expr: sympy.Float) -> str:
        value = float(expr)
        if not math.isfinite(value):
            return self._print(sympy.sympify(value))  # math.inf
        if self._readable or _is_double(expr):
            return repr(value)  # reads back as the same float
        return self._print_Rational(sympy.Rational(expr))  # more precise than a float: exact

    def _quotient(self, expr: sympy.Expr) -> str | None:
        """`expr` as numerator over denominator, exact when both are rational; None when it is
        no quotient."""
        numerator, denominator = sympy.fraction(expr)
        if denominator == 1:
            return None
        if denominator == sympy.log(2) and isinstance(numerator, sympy.log):
            return f"math.log2({self._print(numerator.args[0])})"
        if not (numerator.is_rational and denominator.is_rational):
            return None
        n, d = self._print(numerator), self._print(denominator)
        if self._readable:
            rank = PRECEDENCE["Mul"]
            return f"{self.parenthesize(numerator, rank)}/{self.parenthesize(denominator, rank + 1)}"
        return f"Fraction({n}, {d})"

    def _print_Mul(self, expr: sympy.Expr) -> str:
        return self._quotient(expr) or super()._print_Mul(expr)

    def _print_Pow(self, expr: sympy.Expr, rational: bool = False) -> str:
        if expr.exp.is_Integer and expr.exp < 0:  # 1/x
            return self._quotient(expr) or super()._print_Pow(expr, rational)
        return super()._print_Pow(expr, rational)

    def _print_Relational(self, expr: sympy.Basic) -> str:
        # float literals, or float inputs (symbols that are not integers)
        floats = any(map(_is_double, expr.atoms(sympy.Float))) or any(
            not symbol.is_integer for symbol in expr.free_symbols)
        if self._readable or not floats or expr.rel_op not in _COMPARISONS:
            return super()._print_Relational(expr)
        # a Fraction compared with a float is rounded to a float first, as sympy does
        lhs, rhs = (self._print(side) for side in expr.args)
        lhs, rhs = (f"float({side})" if "Fraction(" in side else side for side in (lhs, rhs))
        return f"({lhs} {expr.rel_op} {rhs})"

    def _print_floor(self, expr: sympy.Expr) -> str:
        numerator, denominator = sympy.fraction(sympy.together(expr.args[0]))
        if denominator != 1 and numerator.is_integer and denominator.is_integer:
            return f"(({self._print(numerator)}) // ({self._print(denominator)}))"
        return f"math.floor({self._print(expr.args[0])})"

    def _print_ceiling(self, expr: sympy.Expr) -> str:
        numerator, denominator = sympy.fraction(sympy.together(expr.args[0]))
        if denominator != 1 and numerator.is_integer and denominator.is_integer:
            return f"(-((-({self._print(numerator)})) // ({self._print(denominator)})))"
        return f"math.ceil({self._print(expr.args[0])})"

    def _print_Max(self, expr: sympy.Expr) -> str:
        return f"max({', '.join(self._print(a) for a in expr.args)})"

    def _print_Min(self, expr: sympy.Expr) -> str:
        return f"min({', '.join(self._print(a) for a in expr.args)})"


_COMPARISONS = ("==", "!=", "<", "<=", ">", ">=")


def _is_double(number: sympy.Float) -> bool:
    """Whether a Python float holds this Float exactly (sympy makes Floats of floats so)."""
    value = float(number)
    return math.isfinite(value) and sympy.Float(value)._mpf_ == number._mpf_


def render(expr: sympy.Basic, names: dict[sympy.Symbol, str], readable: bool = False) -> str:
    """`expr` as Python source, with each symbol written as the given name. The source needs
    `math` and `Fraction` (fractions.Fraction) in its namespace."""
    renamed = expr.xreplace({s: sympy.Symbol(n, **s.assumptions0) for s, n in names.items()})
    return _Printer(readable).doprint(renamed)


@dataclass(frozen=True)
class ShapeGuard(Guard):
    """A sympy boolean over size symbols (and int and float inputs) that must hold;
    `bindings` says where each symbol's value is read: pairs (symbol, source), in a fixed
    order."""

    expr: sympy.Basic
    bindings: tuple[tuple[sympy.Symbol, Source], ...]

    cost = 5

    def __post_init__(self) -> None:
        expect(self.expr, sympy.Basic, "ShapeGuard needs a sympy expression")
        expect(self.bindings, tuple, "ShapeGuard needs its bindings as a tuple of pairs")
        for binding in self.bindings:
            if not (type(binding) is tuple and len(binding) == 2
                    and isinstance(binding[0], sympy.Symbol) and isinstance(binding[1], Source)):
                raise TypeError(f"ShapeGuard needs each binding as a pair (sympy Symbol, guards "
                                f"Source), not {binding!r}")
        unbound = self.expr.free_symbols - {symbol for symbol, _ in self.bindings}
        if unbound:  # (the check would read a name of its namespace: `G`, `len`, or none)
            raise ValueError(f"shape guard {self.expr}: no source binds "
                             f"{', '.join(sorted(map(str, unbound)))}")
        try:  # refuse now what the generated check could not evaluate
            render(self.expr, {})
        except ValueError as error:
            raise ValueError(f"shape guard {self.expr}: {error}") from None

    @property
    def sources(self) -> tuple[Source, ...]:
        return tuple(source for _, source in self.bindings)

    def _names(self, names: tuple[str, ...]) -> dict[sympy.Symbol, str]:
        return {sym: name for (sym, _), name in zip(self.bindings, names)}

    def holds(self, *values: Any) -> bool:
        rule = {sym: _number(v) for (sym, _), v in zip(self.bindings, values)}
        # where the check's arithmetic raises (a division by zero, the root or logarithm of a
        # negative number), sympy goes on with zoo, nan or I (`Ne(3/0, 3)` is true): the
        # check fails, so does this
        undefined = (sympy.zoo, sympy.nan, sympy.I)
        for term in sympy.preorder_traversal(self.expr):
            if isinstance(term, sympy.Expr) and not term.is_Atom and not term.has(*undefined) \
                    and term.xreplace(rule).has(*undefined):
                return False
        substituted = self.expr.xreplace(rule)
        try:
            return bool(substituted)
        except TypeError:  # a relation sympy does not decide as written (log(8)/log(2) == 3)
            return bool(sympy.simplify(substituted))

    def code(self, *names_and_consts: Any) -> str:
        names = names_and_consts[:-1]
        return render(self.expr, self._names(names))

    def describe(self) -> str:
        return render(self.expr, self._names(tuple(str(s) for _, s in self.bindings)), True)

    def failure(self, *values: Any) -> str:
        return "with " + ", ".join(f"{s} = {v}" for (_, s), v in zip(self.bindings, values))


def _number(value: Any) -> sympy.Expr:
    """A size or an int or float input, as sympy: never `sympify`, which parses a str as an
    expression and runs it, and makes None into no replacement at all."""
    if isinstance(value, float):
        return sympy.Float(float(value))
    return sympy.Integer(operator.index(value))  # ints, bools, numpy ints; TypeError else


def _origin_source(origin: Any) -> Source:
    if not isinstance(origin.source, Source):
        raise TypeError(
            f"a symbol's origin {origin} has no guards Source: pass source=<a guards Source> "
            "to from_tensor"
        )
    if origin.prop == "value":  # the symbol is an int or float input itself
        return origin.source
    return TensorPropertySource(origin.source, origin.prop, origin.dim)


def shape_guards(shape_env: Any) -> list[ShapeGuard]:
    """Every assumption a ShapeEnv holds about input sizes, as guards on their sources."""
    where: dict[sympy.Symbol, Source] = {}
    guards: list[ShapeGuard] = []

    def guard(expr: sympy.Basic) -> None:
        symbols = sorted(expr.free_symbols, key=str)
        missing = [s for s in symbols if s not in where]
        if missing:
            raise ValueError(f"shape guard {expr} uses {missing}, which no input size binds")
        guards.append(ShapeGuard(expr, tuple((s, where[s]) for s in symbols)))

    for sym, origins in shape_env.var_to_origins.items():
        if origins:
            where[sym] = _origin_source(origins[0])
    for sym, origins in shape_env.var_to_origins.items():
        for origin in origins[1:]:  # duck sizing: every dim the symbol stands for is equal
            other = sympy.Symbol(f"{sym}_{len(where)}", integer=True)
            where[other] = _origin_source(origin)
            guard(sympy.Eq(other, sym))
    for sym, rng in shape_env.var_to_range.items():
        if sym not in where:
            continue
        replaced = shape_env.replacements.get(sym)
        if replaced is not None and (replaced.is_Number or replaced.is_Symbol):
            continue  # its Eq guard, and the range it gave the symbol it became, say it all
        # (replaced by an expression, `s1 -> s0 - 1`: decisions taken before still relied on
        # its range, `s1 >= 2`, which the expression's own bounds do not imply)
        if rng.lower != -sympy.oo:
            guard(sympy.Ge(sym, rng.lower))
        if rng.upper != sympy.oo:
            guard(sympy.Le(sym, rng.upper))
    for sym, value in shape_env.replacements.items():
        if sym in where:  # specialised (s0 -> 8) or unified (s1 -> s0) by an earlier guard
            guard(sympy.Eq(sym, value))
    for recorded in shape_env.guards:
        guard(recorded.expr)
    return guards

