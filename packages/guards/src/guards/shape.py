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

from dataclasses import dataclass
from typing import Any

import sympy
from sympy.printing.pycode import PythonCodePrinter

from guards.guard_kinds import Guard
from guards.sources import Source, TensorPropertySource


class _Printer(PythonCodePrinter):
    """Python for size expressions: `floor(a/b)` as `a // b`; Min/Max as min/max."""

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

    def _print_Rational(self, expr: sympy.Rational) -> str:
        # Divided as Python divides ints (`n / 10`), so a guard computes what the program did.
        return f"({expr.p} / {expr.q})"

    def _print_Mul(self, expr: sympy.Expr) -> str:
        coefficient, rest = expr.as_coeff_Mul()
        if isinstance(coefficient, sympy.Rational) and coefficient.q != 1:
            return f"(({self._print(coefficient.p * rest)}) / {coefficient.q})"
        return super()._print_Mul(expr)

    def _print_Max(self, expr: sympy.Expr) -> str:
        return f"max({', '.join(self._print(a) for a in expr.args)})"

    def _print_Min(self, expr: sympy.Expr) -> str:
        return f"min({', '.join(self._print(a) for a in expr.args)})"


def render(expr: sympy.Basic, names: dict[sympy.Symbol, str]) -> str:
    """`expr` as Python source, with each symbol written as the given name."""
    renamed = expr.xreplace({s: sympy.Symbol(n, integer=True) for s, n in names.items()})
    return _Printer({"fully_qualified_modules": False}).doprint(renamed)


@dataclass(frozen=True)
class ShapeGuard(Guard):
    """A sympy boolean over size symbols that must hold; `bindings` says where each symbol's
    value is read: pairs (symbol, source), in a fixed order."""

    expr: sympy.Basic
    bindings: tuple[tuple[sympy.Symbol, Source], ...]

    cost = 5

    @property
    def sources(self) -> tuple[Source, ...]:
        return tuple(source for _, source in self.bindings)

    def _names(self, names: tuple[str, ...]) -> dict[sympy.Symbol, str]:
        return {sym: name for (sym, _), name in zip(self.bindings, names)}

    def holds(self, *values: Any) -> bool:
        substituted = self.expr.xreplace(
            {sym: sympy.Integer(v) for (sym, _), v in zip(self.bindings, values)}
        )
        return bool(substituted)

    def code(self, *names_and_consts: Any) -> str:
        names = names_and_consts[:-1]
        return render(self.expr, self._names(names))

    def describe(self) -> str:
        return render(self.expr, self._names(tuple(str(s) for _, s in self.bindings)))

    def failure(self, *values: Any) -> str:
        return "with " + ", ".join(f"{s} = {v}" for (_, s), v in zip(self.bindings, values))


def _origin_source(origin: Any) -> Source:
    if not isinstance(origin.source, Source):
        raise TypeError(
            f"a symbol's origin {origin} has no guards Source: pass source=<a guards Source> "
            "to from_tensor"
        )
    if origin.prop == "value":  # the symbol is an int input itself
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
        if sym not in where or sym in shape_env.replacements:
            continue
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

