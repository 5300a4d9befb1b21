"""Value ranges: interval bounds on integer symbols, and bounds of expressions over them.

A symbol for a size is known to lie in [2, oo] (0 and 1 are specialised), a number of nonzero
elements in [0, numel], and a guard like `s0 > 4` narrows [2, oo] to [5, oo]. `bound(expr, ranges)`
propagates such intervals through an expression by interval arithmetic, which is often enough
to decide a comparison statically, with no guard: `s0 * s1 >= 4` holds whenever both are >= 2.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from fakecore.sym_functions import FloorDiv, PythonMod

_oo = sympy.oo


@dataclass(frozen=True)
class ValueRange:
    """The closed interval [lower, upper]; either end may be infinite."""

    lower: sympy.Expr
    upper: sympy.Expr

    def __post_init__(self) -> None:
        object.__setattr__(self, "lower", sympy.sympify(self.lower))
        object.__setattr__(self, "upper", sympy.sympify(self.upper))

    @staticmethod
    def unknown() -> ValueRange:
        return ValueRange(-_oo, _oo)

    def intersect(self, other: ValueRange) -> ValueRange:
        return ValueRange(sympy.Max(self.lower, other.lower), sympy.Min(self.upper, other.upper))


def _mul(a: sympy.Expr, b: sympy.Expr) -> sympy.Expr:
    # 0 * oo is 0 here: an interval end at zero stays at zero whatever multiplies it.
    if a == 0 or b == 0:
        return sympy.Integer(0)
    return a * b


def _product(x: ValueRange, y: ValueRange) -> ValueRange:
    ends = [_mul(a, b) for a in (x.lower, x.upper) for b in (y.lower, y.upper)]
    return ValueRange(sympy.Min(*ends), sympy.Max(*ends))


def _power(base: ValueRange, exp: sympy.Expr) -> ValueRange:
    if not (exp.is_Integer and exp >= 0):
        return ValueRange.unknown()
    if base.lower >= 0 or exp % 2 == 1:
        return ValueRange(base.lower**exp, base.upper**exp)
    top = sympy.Max(base.lower**exp, base.upper**exp)
    return ValueRange(0 if base.upper >= 0 else base.upper**exp, top)


def bound(expr: sympy.Expr, ranges: dict[sympy.Symbol, ValueRange]) -> ValueRange:
    """An interval that contains every value `expr` takes when its symbols lie in `ranges`."""
    if expr.is_Number:
        return ValueRange(expr, expr)
    if expr.is_Symbol:
        found = ranges.get(expr)
        if found is not None:
            return found
        if expr.is_positive:
            return ValueRange(1 if expr.is_integer else 0, _oo)
        if expr.is_nonnegative:
            return ValueRange(0, _oo)
        return ValueRange.unknown()
    args = [bound(a, ranges) for a in expr.args]
    if isinstance(expr, sympy.Add):
        return ValueRange(sum(a.lower for a in args), sum(a.upper for a in args))
    if isinstance(expr, sympy.Mul):
        result = args[0]
        for a in args[1:]:
            result = _product(result, a)
        return result
    if isinstance(expr, sympy.Pow):
        return _power(args[0], expr.args[1])
    if isinstance(expr, sympy.Max):
        return ValueRange(sympy.Max(*[a.lower for a in args]), sympy.Max(*[a.upper for a in args]))
    if isinstance(expr, sympy.Min):
        return ValueRange(sympy.Min(*[a.lower for a in args]), sympy.Min(*[a.upper for a in args]))
    if isinstance(expr, sympy.floor):
        return ValueRange(sympy.floor(args[0].lower), sympy.floor(args[0].upper))
    if isinstance(expr, sympy.ceiling):
        return ValueRange(sympy.ceiling(args[0].lower), sympy.ceiling(args[0].upper))
    integers = all(arg.is_integer for arg in expr.args)
    if isinstance(expr, sympy.Mod) and args[1].lower > 0 and args[0].lower >= 0:
        if args[0].upper < args[1].lower:  # a % b == a when 0 <= a < b
            return args[0]
        return ValueRange(0, sympy.Min(args[0].upper, args[1].upper - 1 if integers
                                       else args[1].upper))
    if isinstance(expr, PythonMod):
        a, b = args
        if a.lower >= 0 and b.lower > 0 and decide(sympy.Lt(*expr.args), ranges):
            return a  # a % b == a when 0 <= a < b: `s0 % (s0 + 1)`
        return _python_mod(a, b, integers)
    if isinstance(expr, FloorDiv):
        return _floordiv(*args)
    if isinstance(expr, sympy.Piecewise):  # one of its values, whichever condition holds
        values = [bound(value, ranges) for value, _ in expr.args]
        return ValueRange(sympy.Min(*[v.lower for v in values]),
                          sympy.Max(*[v.upper for v in values]))
    if isinstance(expr, sympy.Abs):
        a = args[0]
        if a.lower >= 0:
            return a
        return ValueRange(0, sympy.Max(-a.lower, a.upper))
    return ValueRange.unknown()


def _python_mod(a: ValueRange, b: ValueRange, integers: bool) -> ValueRange:
    """Python's `a % b` takes the sign of `b`, and is smaller than it in magnitude: by one
    at least for ints (bounds are closed; a float remainder gets no closer bound)."""
    step = 1 if integers else 0
    if b.lower > 0:
        if a.lower >= 0 and a.upper < b.lower:  # a % b == a when 0 <= a < b
            return a
        upper = b.upper - step if b.upper.is_finite else _oo
        return ValueRange(0, sympy.Min(a.upper, upper) if a.lower >= 0 else upper)
    if b.upper < 0:
        return ValueRange(b.lower + step if b.lower.is_finite else -_oo, 0)
    return ValueRange.unknown()


def _floordiv(a: ValueRange, b: ValueRange) -> ValueRange:
    """Python's `a // b` for a positive divisor: floor(a / b) is monotonic in a and in b, so its
    extremes are at the corners of the two ranges. A corner oo / oo says nothing, and needs
    not: the corner oo / b.lower already reaches that infinity."""
    if not (b.lower > 0 and b.lower.is_finite):
        return ValueRange.unknown()
    corners = [sympy.floor(x / y) for x in (a.lower, a.upper) for y in (b.lower, b.upper)]
    corners = [c for c in corners if c is not sympy.nan]
    return ValueRange(sympy.Min(*corners), sympy.Max(*corners))


def fold_min_max(expr: sympy.Expr, ranges: dict[sympy.Symbol, ValueRange]) -> sympy.Expr:
    """`expr` with each Max/Min argument that the bounds show can never win dropped."""

    def fold(e: sympy.Expr) -> sympy.Expr:
        bounds = [bound(a, ranges) for a in e.args]
        if isinstance(e, sympy.Max):
            best = max(range(len(bounds)), key=lambda i: (bounds[i].lower, bounds[i].upper))
            wins = all(bounds[best].lower >= b.upper for i, b in enumerate(bounds) if i != best)
        else:
            best = min(range(len(bounds)), key=lambda i: (bounds[i].upper, bounds[i].lower))
            wins = all(bounds[best].upper <= b.lower for i, b in enumerate(bounds) if i != best)
        return e.args[best] if wins else e

    if not expr.has(sympy.Max, sympy.Min):
        return expr
    return expr.replace(lambda e: isinstance(e, (sympy.Max, sympy.Min)), fold)


def decide(relation: sympy.Basic, ranges: dict[sympy.Symbol, ValueRange]) -> bool | None:
    """True or False when the bounds settle `relation` (a comparison, And, Or, Not); else None."""
    if relation in (sympy.true, sympy.false):
        return bool(relation)
    if isinstance(relation, sympy.Not):
        inner = decide(relation.args[0], ranges)
        return None if inner is None else not inner
    if isinstance(relation, (sympy.And, sympy.Or)):
        results = [decide(a, ranges) for a in relation.args]
        stop = isinstance(relation, sympy.Or)  # Or stops at a True, And at a False
        if stop in results:
            return stop
        return None if None in results else not stop
    if not isinstance(relation, sympy.core.relational.Relational):
        return None
    difference = fold_min_max(relation.lhs - relation.rhs, ranges)
    decided = _decide_bound(type(relation), bound(difference, ranges))
    if decided is None and _has_product(difference):
        # `s0*s1 - s0` has no useful bound term by term; as `s0*(s1 - 1)` it does. (Also when
        # the term-by-term bound is finite but too wide: `s0 - s0**2` for s0 in [2, 128].)
        factored = sympy.factor_terms(difference)
        if factored != difference:
            decided = _decide_bound(type(relation), bound(factored, ranges))
    return decided


def _has_product(expr: sympy.Expr) -> bool:
    """Whether a term of the sum `expr` is more than a number times a symbol (`s0*s1`, `s0**2`,
    `s0 // 2`): only then can factoring the sum bound it better than its terms do."""
    return any(not (t.is_Number or t.as_coeff_Mul()[1].is_Symbol) for t in sympy.Add.make_args(expr))


def _decide_bound(relation: type, diff: ValueRange) -> bool | None:
    """Whether `lhs <relation> rhs` holds, given the bound `diff` of `lhs - rhs`."""
    lo, hi = diff.lower, diff.upper
    checks = {
        sympy.Eq: (lo == hi == 0, lo > 0 or hi < 0),
        sympy.Ne: (lo > 0 or hi < 0, lo == hi == 0),
        sympy.Gt: (lo > 0, hi <= 0),
        sympy.Ge: (lo >= 0, hi < 0),
        sympy.Lt: (hi < 0, lo >= 0),
        sympy.Le: (hi <= 0, lo > 0),
    }
    holds, fails = checks[relation]
    if holds == sympy.true or holds is True:
        return True
    if fails == sympy.true or fails is True:
        return False
    return None
