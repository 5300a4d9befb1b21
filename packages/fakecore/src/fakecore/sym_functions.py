"""Python's `%`, `//` and float `/` as sympy functions that sympy never rewrites behind our back.

sympy's `Mod` and `floor(a / b)` simplify themselves on construction with rules that are not
sound for Python ints: `Mod(Mod(a, 4)*b, 5)` becomes `Mod(b*Mod(a, 4)**2, 5)`, which is another
number for `a = 2, b = -1`. A size expression rewritten that way gives a wrong hint and a guard
that fails on the very inputs it was recorded for. `PythonMod(a, b)` and `FloorDiv(a, b)` are
plain functions instead: they evaluate when both arguments are numbers (exactly as Python does,
for ints and floats alike) and simplify only where the rewrite holds for every integer value:

- for integers a, b where `a / b` is an integer expression (`(s0*s1) // s1`, `(4*s0 + 2) // 2`):
  `a // b` -> `a / b` and `a % b` -> 0 (`a % 1`, `a // -1` among them);
- a factor k > 0 common to a and b comes out: `(k*a) % (k*b)` -> `k*(a % b)`,
  `(k*a) // (k*b)` -> `a // b` (`s0 % (4*s0)` is `s0`);
- `(a % b) % b` -> `a % b`; `(a // m) // n` -> `a // (m*n)` for positive integers m, n;

none of which drops a `//` or `%` inside a or b by a divisor that may be 0, where Python raises:
`(6*(n // u)) % 3` stays (the value ranges may drop it later: `ShapeEnv.simplify_division`).

`round_up_sum(expr)` rewrites a sum that pads to a multiple, `r + y % m` where `r + y` is a
number n, as `n - m*(y // m)` (Python's `y % m == y - m*(y // m)`): `s + (4 - s) % 4` becomes
`4 - 4*((4 - s) // 4)`, which sympy sees is a multiple of 4 (a padded size, whose `// 4` is exact).

`FloatTrueDiv(a, b)` is `/` with a float operand: never simplified (sympy's `s / s` is 1, but
Python's `0.0 / 0.0` raises).

Printing: `str()` and sympy's Python code printers (a guard library's, `lambdify`'s) write them
as Python operators, `(a % b)` and `(a // b)`, through the `_sympystr` / `_pythoncode` hooks, so a
printer needs no rule of its own for them.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import sympy


def _python_value(op: Callable[[Any, Any], Any], a: sympy.Expr, b: sympy.Expr) -> sympy.Expr:
    """`op(a, b)` on two sympy numbers (b not 0), as Python computes it (an int where Python
    gives one, else a float)."""
    value = op(int(a), int(b)) if a.is_Integer and b.is_Integer else op(float(a), float(b))
    return sympy.Integer(value) if isinstance(value, int) else sympy.Float(value)


def _exact_quotient(a: sympy.Expr, b: sympy.Expr) -> sympy.Expr | None:
    """`a / b` when both are integers, b is never 0 (Python raises there: `n // n` is not 1
    at n == 0), and it is an integer for every value of the symbols."""
    if a.is_integer and b.is_integer and b.is_nonzero:
        quotient = a / b
        if quotient.is_integer:
            return quotient
    return None


def _common_factor(a: sympy.Expr, b: sympy.Expr) -> sympy.Expr | None:
    """A positive factor of both integers a and b (their common symbolic factors and the gcd
    of their integer coefficients), or None when there is none."""
    if not (a.is_integer and b.is_integer):
        return None
    (ca, ra), (cb, rb) = a.as_coeff_Mul(), b.as_coeff_Mul()
    k = sympy.Integer(sympy.igcd(ca, cb)) if ca.is_Integer and cb.is_Integer else sympy.Integer(1)
    others = sympy.Mul.make_args(rb)
    k *= sympy.Mul(*[f for f in sympy.Mul.make_args(ra) if f in others])
    return k if k != 1 and k.is_positive else None


def drops_a_division(after: sympy.Basic, *before: sympy.Basic,
                     may_be_zero: Callable[[sympy.Expr], bool] = lambda d: d.is_zero is not False
                     ) -> bool:
    """Whether `after` lost a `//` or `%` of the expressions `before` by a divisor that
    `may_be_zero` (by sympy's assumptions, unless told otherwise), where Python raises."""
    return any(may_be_zero(d.args[1]) and not after.has(d)
               for e in before for d in e.atoms(FloorDiv, PythonMod))


class _PythonBinary(sympy.Function):
    """A Python binary operator on numbers (`_op`, its `_symbol` written between the
    operands): computed on two numbers, else simplified by `_simplify` where that is sound."""

    nargs = 2
    _symbol = "?"
    _op: Callable[[Any, Any], Any]

    @classmethod
    def eval(cls, a: sympy.Expr, b: sympy.Expr) -> sympy.Expr | None:
        if b.is_zero:  # 0 and 0.0 (sympy: Float(0.0) != 0)
            raise ZeroDivisionError(f"{a} {cls._symbol} 0")
        if a.is_number and b.is_number and a.is_extended_real and b.is_extended_real:
            return _python_value(cls._op, a, b)  # numbers, and constants such as 2*sqrt(2)
        simplified = cls._simplify(a, b)
        if simplified is not None and drops_a_division(simplified, a, b):
            return None
        return simplified

    @classmethod
    def _simplify(cls, a: sympy.Expr, b: sympy.Expr) -> sympy.Expr | None:
        raise NotImplementedError

    def _print_python(self, printer: Any, floats: bool = False, **_: Any) -> str:
        a, b = (printer._print(x) if x.is_Symbol or x.is_Integer and x >= 0
                else f"({printer._print(x)})" for x in self.args)  # `x % (1/2)`, `x // (-s0)`
        if floats:  # operands that are not integers are floats, as `eval` computes them
            a, b = (p if x.is_integer or x.is_Float else f"float({p})"
                    for x, p in zip(self.args, (a, b)))
        return f"({a} {self._symbol} {b})"

    def _pythoncode(self, printer: Any, **_: Any) -> str:
        # A printer that writes rationals exactly (a guard's `Fraction(s0, s2)`) would compute
        # `%` and `//` of them exactly: `2 % Fraction(1, 10) == 0`, but `2 % (2 / 20) != 0`.
        return self._print_python(printer, floats=True)

    _sympystr = _lambdacode = _numpycode = _print_python

    def _eval_is_integer(self) -> bool | None:
        a, b = self.args
        return True if a.is_integer and b.is_integer else None


class PythonMod(_PythonBinary):
    """`a % b` as Python computes it: the result has the sign of `b` (`-7 % 3 == 2`)."""

    _symbol = "%"
    _op = operator.mod

    @classmethod
    def _simplify(cls, a: sympy.Expr, b: sympy.Expr) -> sympy.Expr | None:
        if _exact_quotient(a, b) is not None:
            return sympy.Integer(0)
        k = _common_factor(a, b)
        if k is not None:
            return k * PythonMod(a / k, b / k)
        if isinstance(a, PythonMod) and a.args[1] == b:
            return a
        return None

    def _eval_is_nonnegative(self) -> bool | None:
        return True if self.args[1].is_positive else None

    def _eval_is_nonpositive(self) -> bool | None:
        return True if self.args[1].is_negative else None


class FloorDiv(_PythonBinary):
    """`a // b` as Python computes it: the quotient rounded down (`-7 // 2 == -4`)."""

    _symbol = "//"
    _op = operator.floordiv

    @classmethod
    def _simplify(cls, a: sympy.Expr, b: sympy.Expr) -> sympy.Expr | None:
        quotient = _exact_quotient(a, b)
        if quotient is not None:
            return quotient
        k = _common_factor(a, b)
        if k is not None:
            return FloorDiv(a / k, b / k)
        if isinstance(a, FloorDiv) and a.is_integer and b.is_Integer and b > 0:
            inner, m = a.args
            if m.is_Integer and m > 0:
                return FloorDiv(inner, m * b)
        return None

    def _eval_is_nonnegative(self) -> bool | None:
        a, b = self.args
        return True if a.is_nonnegative and b.is_positive else None


class FloatTrueDiv(_PythonBinary):
    """`a / b` with a float operand, as Python computes it: evaluated on two numbers only."""

    _symbol = "/"
    _op = operator.truediv

    @classmethod
    def _simplify(cls, a: sympy.Expr, b: sympy.Expr) -> None:
        return None

    def _eval_is_integer(self) -> bool | None:
        return None


def round_up_sum(expr: sympy.Expr) -> sympy.Expr:
    """`expr`, a sum `r + y % m` of integers where `r + y` is a number n, as `n - m*(y // m)`
    (a size padded up to a multiple of m, written as a visible multiple of m); else `expr`."""
    if not isinstance(expr, sympy.Add):
        return expr
    for term in expr.args:
        if isinstance(term, PythonMod) and expr.is_integer:
            y, m = term.args
            total = expr - term + y
            if total.is_Number:
                return total - m * FloorDiv(y, m)
    return expr
