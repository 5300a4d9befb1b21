"""ShapeEnv: the symbols that stand for sizes, what is known about them, and the guards.

A fake tensor with a dynamic dim has a sympy symbol for that size. The ShapeEnv owns those
symbols: each has a *hint* (the real size of the example it came from), a value range, and the
origins it was created for. Programs mostly compute with sizes symbolically, but some decisions
need a concrete answer (`if x.shape[0] > 4:`, a broadcast check in a meta kernel). The ShapeEnv
answers those from the hints, and records each answer as a *guard*: a boolean expression that
must hold for the traced program to be valid for other inputs. Before guarding it tries to
decide the question statically (from value ranges and earlier guards), so that facts like
`s0 >= 2` cost no guard. Equality guards become replacements (`s1 -> s0`, `s0 -> 8`) that keep
later expressions small.

Unbacked symbols (`u0`, ...) stand for values that depend on data (`nonzero`'s count, `item()`).
They have no hint, so deciding anything that depends on them raises `DataDependentError`.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass, field

import sympy
import torch

from fakecore.errors import DataDependentError, user_frame
from fakecore.sym_functions import FloorDiv, PythonMod, drops_a_division
from fakecore.value_ranges import ValueRange, bound, decide

_oo = sympy.oo
_BOOLEAN_TYPES = (
    sympy.logic.boolalg.BooleanFunction,
    sympy.core.relational.Relational,
    sympy.logic.boolalg.BooleanAtom,
)


@dataclass(frozen=True)
class SizeOrigin:
    """Where a symbol came from: property `prop` ("size", "stride", "storage_offset") of dim `dim`
    of the tensor found at `source` (an opaque object chosen by the caller, e.g. a guards Source),
    or ("value") the int found at `source` itself."""

    source: object
    prop: str
    dim: int | None = None


@dataclass(frozen=True)
class ShapeGuard:
    """A boolean expression over the ShapeEnv's symbols that must hold; `user_frame` made it."""

    expr: sympy.Basic
    user_frame: str | None = field(default=None, compare=False)


class ShapeEnv:
    """Symbols for sizes, their hints and ranges, and the guards recorded on them."""

    def __init__(self, *, duck_shape: bool = True, specialize_zero_one: bool = True) -> None:
        self.duck_shape = duck_shape
        self.specialize_zero_one = specialize_zero_one
        self.var_to_val: dict[sympy.Symbol, sympy.Number] = {}
        self.var_to_range: dict[sympy.Symbol, ValueRange] = {}
        self.var_to_origins: dict[sympy.Symbol, list[SizeOrigin]] = {}
        self.unbacked_producers: dict[sympy.Symbol, str] = {}
        self.size_like: set[sympy.Symbol] = set()
        self.unbacked_conditions: set[sympy.Symbol] = set()
        self.replacements: dict[sympy.Symbol, sympy.Expr] = {}
        self._simplified: dict[sympy.Basic, sympy.Basic] = {}  # under today's replacements
        self.guards: list[ShapeGuard] = []
        self.runtime_asserts: list[ShapeGuard] = []
        self._known: dict[sympy.Basic, bool] = {}
        self._static_memo: dict[tuple[sympy.Basic, bool], object] = {}
        self._hint_to_symbol: dict[int, sympy.Symbol] = {}
        self._backed_ids = itertools.count()
        self._unbacked_ids = itertools.count()
        self._float_ids = itertools.count()

    # ----- creating symbols -------------------------------------------------------------------

    def create_symbol(self, hint: int, origin: SizeOrigin | None = None, *,
                      specialize_zero_one: bool | None = None) -> sympy.Expr:
        """A symbol for an int whose example value is `hint` (an Integer when specialised: 0
        and 1 are, unless `specialize_zero_one`, by default the env's setting, says not).

        With an origin that is a tensor's size, stride or storage offset, the symbol is a size:
        it is nonnegative (at least 2 when 0 and 1 are specialised). Any other int (an origin
        of prop "value", or none) may be negative: its range is unrestricted. Duck sizing shares
        a symbol between sizes of the same hint (equal sizes are usually one size: a batch
        shared by two inputs); a stride, or any other int, gets a symbol of its own (a stride is
        made symbolic because it changes on its own, a slice of a growing tensor; two ints that
        happen to be equal, token ids or loop counters, would be guarded equal, as torch's
        dynamic ints are not).
        """
        zero_one = self.specialize_zero_one if specialize_zero_one is None else specialize_zero_one
        if zero_one and hint in (0, 1):
            return sympy.Integer(hint)
        is_size = origin is not None and origin.prop != "value"
        duck = self.duck_shape and is_size and origin.prop != "stride"
        duck_key = hint
        if duck and duck_key in self._hint_to_symbol:
            sym = self._hint_to_symbol[duck_key]
        else:
            name = f"s{next(self._backed_ids)}"
            if not is_size:
                sym = sympy.Symbol(name, integer=True)
                self.var_to_range[sym] = ValueRange.unknown()
            elif zero_one:
                sym = sympy.Symbol(name, integer=True, positive=True)
                self.var_to_range[sym] = ValueRange(2, _oo)
            else:
                sym = sympy.Symbol(name, integer=True, nonnegative=True)
                self.var_to_range[sym] = ValueRange(0, _oo)
            self.var_to_val[sym] = sympy.Integer(hint)
            self.var_to_origins[sym] = []
            if duck:
                self._hint_to_symbol[duck_key] = sym
        if origin is not None:
            self.var_to_origins[sym].append(origin)
        return sym

    def create_symint(self, hint: int, origin: SizeOrigin | None = None, *,
                      specialize_zero_one: bool | None = None) -> torch.SymInt | int:
        """`create_symbol` wrapped as a torch.SymInt (or a plain int when specialised)."""
        return self.wrap(self.create_symbol(hint, origin, specialize_zero_one=specialize_zero_one),
                         int, hint)

    def create_unbacked_symint(
        self, producer: str, lower: int | sympy.Expr = -_oo, upper: int | sympy.Expr = _oo,
        *, size_like: bool = False,
    ) -> torch.SymInt:
        """A SymInt for a data-dependent integer that op `producer` computed."""
        sym = sympy.Symbol(f"u{next(self._unbacked_ids)}", integer=True)
        self.var_to_range[sym] = ValueRange(lower, upper)
        self.unbacked_producers[sym] = producer
        if size_like:
            self.size_like.add(sym)
        return self.wrap(sym, int, None)

    def create_symfloat(self, hint: float, origin: SizeOrigin | None = None) -> torch.SymFloat:
        """A SymFloat for a float input whose example value is `hint` (a temperature, a
        timestep): any real number, decided on its hint like a size."""
        sym = sympy.Symbol(f"zf{next(self._float_ids)}", real=True)
        self.var_to_val[sym] = sympy.Float(hint)
        self.var_to_range[sym] = ValueRange.unknown()
        self.var_to_origins[sym] = [origin] if origin is not None else []
        return self.wrap(sym, float, hint)

    def create_unbacked_symfloat(self, producer: str) -> torch.SymFloat:
        """A SymFloat for a data-dependent float that op `producer` computed."""
        sym = sympy.Symbol(f"zuf{next(self._float_ids)}", real=True)
        self.var_to_range[sym] = ValueRange.unknown()
        self.unbacked_producers[sym] = producer
        return self.wrap(sym, float, None)

    def create_unbacked_symbool(self, producer: str) -> sympy.Symbol:
        """A symbol for a data-dependent condition the ShapeEnv must never decide (no range, no
        hint): deciding it is a DataDependentError, `torch._check` of it a runtime assert."""
        sym = sympy.Symbol(f"zub{next(self._unbacked_ids)}")
        self.unbacked_producers[sym] = producer
        self.unbacked_conditions.add(sym)
        return sym

    def wrap(self, expr: sympy.Basic, pytype: type, hint: object) -> torch.SymInt | int:
        """A torch.SymInt/SymFloat/SymBool over `expr`, or the plain value if `expr` is a number."""
        from fakecore.sym_node import SymNode, wrap_node

        return wrap_node(SymNode(expr, self, pytype, hint))

    # ----- reading expressions ----------------------------------------------------------------

    def simplify(self, expr: sympy.Basic) -> sympy.Basic:
        """`expr` with every replacement learned from equality guards applied."""
        if not self.replacements:
            return expr
        # Every SymInt operation reads its operands' expressions through here, and
        # `free_symbols` walks the whole expression: once per expression and replacements.
        simplified = self._simplified.get(expr)
        if simplified is None:
            simplified = expr.xreplace(self.replacements) \
                if expr.free_symbols & self.replacements.keys() else expr
            self._simplified[expr] = simplified
        return simplified

    def simplify_division(self, expr: sympy.Basic) -> sympy.Basic:
        """`expr`, when it is an int `a // b` or `a % b`, simplified with what the value ranges
        know of the divisor (sympy's assumptions do not: `(s2 - 4) // 4 + 1` is positive once
        `s2 >= 4` is guarded, not for sympy). For a divisor b that is never 0:

        - in `a % b`, a remainder `x % m` (m a multiple of b) reached from `a` through sums and
          products only is `x` (congruent modulo b): `(a + (4 - a % 4) % 4) % 4` is 0;
        - `a // b` is `a / b` and `a % b` is 0 where `a / b` is an integer expression
          (`a**2 // a` is `a`).

        Neither rewrite drops a division of `a` by an int that may be 0, where Python raises:
        `(n % (2*k)) % 2` stays for a k of any range.
        """
        if not isinstance(expr, (FloorDiv, PythonMod)) or not expr.is_integer:
            return expr
        a, b = expr.args
        if not _never_zero(b, self.var_to_range):
            return expr
        if isinstance(expr, PythonMod):
            a = _drop_congruent_remainders(a, b)
        quotient = a / b
        if not quotient.is_integer and isinstance(a, sympy.Add):
            quotient = sympy.cancel(quotient)  # `(4 - 4*q) / (1 - q)` is 4
        if quotient.is_integer:
            simplified = quotient if isinstance(expr, FloorDiv) else sympy.Integer(0)
        elif a == expr.args[0]:  # nothing to simplify (a `//`'s `a` is never rewritten)
            return expr
        else:
            simplified = expr.func(a, b)
        ranges = self.var_to_range
        dropped = drops_a_division(simplified, expr.args[0],
                                   may_be_zero=lambda d: not _never_zero(d, ranges))
        return expr if dropped else simplified

    def size_hint(self, expr: sympy.Basic) -> object:
        """The value of `expr` for the example inputs, or None when it depends on data."""
        expr = self.simplify(expr)
        if not expr.free_symbols <= self.var_to_val.keys():
            # an unbacked symbol left (`Eq(2*u0, 1)` is False for every integer u0): a value
            # decided from a partial substitution would be recorded as a guard on data
            return None
        value = expr.xreplace(self.var_to_val)
        return value if not value.free_symbols else None

    def static_value(self, expr: sympy.Basic, *, size_oblivious: bool = False) -> object:
        """The value of `expr` when it holds for *all* inputs (no guard needed), else None."""
        memo_key = (expr, size_oblivious)
        if memo_key not in self._static_memo:
            self._static_memo[memo_key] = self._static_value(expr, size_oblivious)
        return self._static_memo[memo_key]

    def _static_value(self, expr: sympy.Basic, size_oblivious: bool) -> object:
        expr = self.simplify(expr)
        if expr.is_Number or expr in (sympy.true, sympy.false):
            return expr
        if expr in self._known:
            return sympy.true if self._known[expr] else sympy.false
        ranges = self.var_to_range
        if size_oblivious and self.size_like:
            ranges = dict(ranges)
            for sym in self.size_like:
                ranges[sym] = ranges[sym].intersect(ValueRange(2, _oo))
        if isinstance(expr, _BOOLEAN_TYPES):
            if self._compares_data_float_with_infinity(expr):
                return None
            decided = decide(expr, ranges)
            return None if decided is None else sympy.true if decided else sympy.false
        rng = bound(expr, ranges)
        return rng.lower if rng.lower == rng.upper and rng.lower.is_finite else None

    def _compares_data_float_with_infinity(self, expr: sympy.Basic) -> bool:
        """Whether `expr` compares a data-dependent float (an `.item()`) with an infinity:
        sympy's real symbols are finite, so `v < oo` is True and `v >= -oo` too, where IEEE
        says False for a NaN (and `v < inf` False at v = inf)."""
        return expr.has(sympy.oo, -sympy.oo) and any(map(self.is_unbacked_float,
                                                         expr.free_symbols))

    def is_unbacked_float(self, sym: sympy.Symbol) -> bool:
        """Whether `sym` is a float read from data (an `.item()`), whose NaN and infinities
        sympy's finite real symbols cannot stand for."""
        return sym in self.unbacked_producers and not sym.is_integer

    # ----- deciding, and guarding -------------------------------------------------------------

    def evaluate_expr(
        self, expr: sympy.Basic, *, fallback: object = None, size_oblivious: bool = False,
        hint: object = None,
    ) -> sympy.Basic:
        """Decide `expr`: statically if possible, else from the hints with a guard recorded.

        `hint`, when the caller knows it, is `expr`'s value for the example inputs. With unbacked
        symbols in the way, return `fallback` when one is given (guard_or_false), else raise
        DataDependentError.
        """
        static = self.static_value(expr, size_oblivious=size_oblivious)
        if static is not None:
            return static
        expr = self.simplify(expr)
        if hint is not None and not expr.free_symbols <= self.var_to_val.keys():
            # A value whose hint the caller knows but that holds data-dependent symbols: a
            # `sym_ite(a < 2.0, u0, s0)` (its hint the side its condition's hint picks). A
            # guard on u0 could never be checked: decide the conditions of input symbols
            # alone (guarded), and what is left if no data-dependent symbol remains.
            picked = self._pick_piecewise(expr)
            if picked is not expr:
                return self.evaluate_expr(picked, fallback=fallback,
                                          size_oblivious=size_oblivious, hint=hint)
            hint = None
        value = sympy.sympify(hint) if hint is not None else self.size_hint(expr)
        if value is None:
            if fallback is not None:
                return sympy.sympify(fallback)
            raise DataDependentError(self._data_dependent_message(expr))
        if isinstance(expr, _BOOLEAN_TYPES):
            self._record(expr if value else sympy.Not(expr))
        else:
            self._record(sympy.Eq(expr, value))
        return value

    def pin(self, symbols: Iterable[sympy.Symbol]) -> None:
        """Guard each of these backed symbols to be its value (an answer that rests on their
        values in a way no guard on an expression of them says)."""
        for sym in sorted(symbols, key=str):
            self.evaluate_expr(sympy.Eq(sym, self.var_to_val[sym]))

    def _pick_piecewise(self, expr: sympy.Basic) -> sympy.Basic:
        """`expr` with each Piecewise whose conditions are over input symbols only replaced
        by the side those conditions pick for the example inputs (guarded)."""
        backed = self.var_to_val.keys()
        picks = {}
        for pw in expr.atoms(sympy.Piecewise):
            for value, cond in pw.args:
                if not cond.free_symbols <= backed:
                    break
                if cond == sympy.true or bool(self.evaluate_expr(cond)):
                    picks[pw] = value
                    break
        return expr.xreplace(picks) if picks else expr

    def assume(self, expr: sympy.Basic) -> None:
        """Take `expr` as true without a guard (checked at run time instead): expect_true."""
        expr = self.simplify(expr)
        if self.static_value(expr) == sympy.true:
            return
        self.runtime_asserts.append(ShapeGuard(expr, user_frame()))
        self._learn(expr)

    def _data_dependent_message(self, expr: sympy.Basic) -> str:
        producers = ", ".join(
            f"{s} from {self.unbacked_producers[s]}"
            for s in sorted(expr.free_symbols, key=str)
            if s in self.unbacked_producers
        )
        if isinstance(expr, _BOOLEAN_TYPES) or expr in self.unbacked_conditions:
            return (
                f"could not decide {expr}: it depends on data ({producers}); branching on a "
                "data-dependent value needs the real tensor"
            )
        return (
            f"could not decide {expr}: it depends on data ({producers}); it was needed as a "
            "plain Python number (an index such as `x[t]` with a 0-d tensor `t`, `int()`, "
            "`range()`), which needs the real tensor"
        )

    def _record(self, guard: sympy.Basic) -> None:
        if guard in (sympy.true, sympy.false) or guard in self._known:
            return
        self.guards.append(ShapeGuard(guard, user_frame()))
        self._learn(guard)

    def _learn(self, fact: sympy.Basic) -> None:
        """Remember `fact`, and turn it into replacements or narrower ranges where it says so."""
        self._static_memo.clear()
        self._known[fact] = True
        self._known[sympy.Not(fact)] = False
        if isinstance(fact, sympy.And):
            for part in fact.args:
                self._learn(part)
            return
        if not isinstance(fact, sympy.core.relational.Relational):
            return
        lhs, rhs = fact.lhs, fact.rhs
        if isinstance(fact, sympy.Eq) and not (lhs.is_Symbol or rhs.is_Symbol):
            solved = self._solve_linear(lhs - rhs)  # `Eq(s0 - 2, 4)`, `Eq(2*s0, 8)`: s0 -> 6, 4
            if solved is not None:
                self._replace(*solved)
            return
        if not lhs.is_Symbol and rhs.is_Symbol:
            fact = fact.reversed
            lhs, rhs = fact.lhs, fact.rhs
        if not lhs.is_Symbol or lhs not in self.var_to_range:
            return
        if isinstance(fact, sympy.Eq):
            self._replace(lhs, rhs)
        elif rhs.is_Number:
            self._narrow(lhs, type(fact), rhs)

    def _solve_linear(self, difference: sympy.Expr) -> tuple[sympy.Symbol, sympy.Expr] | None:
        """`(sym, value)` when `difference == 0` says that the one integer symbol in it has one
        integer value (`a*sym + b` with numbers a != 0 and b, a dividing b); else None."""
        symbols = difference.free_symbols
        if len(symbols) != 1:
            return None
        sym = next(iter(symbols))
        if sym not in self.var_to_range or not sym.is_integer:
            return None
        difference = sympy.expand(difference)
        a, b = difference.coeff(sym, 1), difference.coeff(sym, 0)
        if not (a.is_Number and b.is_Number and a != 0) or sympy.expand(a * sym + b - difference) != 0:
            return None
        value = -b / a
        return (sym, value) if value.is_Integer else None

    def _replace(self, sym: sympy.Symbol, value: sympy.Expr) -> None:
        if value.is_Symbol and value in self.var_to_range:
            if (sym in self.var_to_val) != (value in self.var_to_val):
                # An input's symbol and a data-dependent one: the data's symbol is replaced
                # by the input's (`torch._check(u0 == x.shape[0])`: later guards on u0 are
                # guards on s0, as in torch), never the reverse (zf0 -> u0 made every later
                # guard on n one on u0, which no input binds). A float input's symbol
                # (`torch._check(u0 == n)` of a float n) replaces nothing: no node before the
                # `.item()` binds it (the graph takes n as a 0-d tensor), so u0 -> zf0 made
                # the `.item()` node bind zf0, and the graph's check compared that value with
                # itself.
                if not (sym.is_integer and value.is_integer):
                    return
                if sym in self.var_to_val:
                    sym, value = value, sym
            else:
                # Keep the older symbol: unify s3 == s1 as s3 -> s1.
                older, newer = sorted((sym, value),
                                      key=lambda s: (s.name[0], int(s.name.lstrip("suzf"))))
                sym, value = newer, older
            self.var_to_range[value] = self.var_to_range[value].intersect(self.var_to_range[sym])
        elif value.is_Number:
            self.var_to_range[sym] = ValueRange(value, value)
        elif sym in value.free_symbols:
            return
        elif sym in self.var_to_val and any(s not in self.var_to_val
                                            for s in value.free_symbols):
            # A backed symbol (an input's size) equal to an expression of data-dependent
            # symbols (`split(x, t.tolist())` asserts `s0 == u0 + u1 + u2` at run time): no
            # replacement, as in torch's ShapeEnv; the replacement would be a shape guard on
            # values no input binds, and the fact is checked by the graph's runtime assert.
            return
        self.replacements = {
            k: v.xreplace({sym: value}) for k, v in self.replacements.items()
        }
        self.replacements[sym] = value
        self._simplified.clear()

    def _narrow(self, sym: sympy.Symbol, relation: type, number: sympy.Expr) -> None:
        if sym.is_integer:
            # An integer above 2.5 is at least 3; below 2.5, at most 2; above 2, at least 3.
            narrowed = {
                sympy.Gt: ValueRange(sympy.floor(number) + 1, _oo),
                sympy.Ge: ValueRange(sympy.ceiling(number), _oo),
                sympy.Lt: ValueRange(-_oo, sympy.ceiling(number) - 1),
                sympy.Le: ValueRange(-_oo, sympy.floor(number)),
            }.get(relation)
        else:  # closed intervals: the bound itself stays in (a superset is still a bound)
            narrowed = {
                sympy.Gt: ValueRange(number, _oo), sympy.Ge: ValueRange(number, _oo),
                sympy.Lt: ValueRange(-_oo, number), sympy.Le: ValueRange(-_oo, number),
            }.get(relation)
        if narrowed is not None:
            self.var_to_range[sym] = self.var_to_range[sym].intersect(narrowed)

    # ----- the names PyTorch's own Python code calls on a node's shape_env --------------------

    def _maybe_evaluate_static(self, expr: sympy.Basic, **_: object) -> sympy.Basic | None:
        return self.static_value(expr)

    def optimization_hint(self, expr: sympy.Basic | int, fallback: int | None = None) -> int | None:
        """`expr`'s value for the example inputs, recording no guard (for choices that change
        speed, never results); `fallback` when it depends on data."""
        value = self.size_hint(sympy.sympify(expr))
        return int(value) if value is not None else fallback

    def evaluate_sym_node(
        self, node: object, size_oblivious: bool = False, fallback_value: bool | None = None
    ) -> sympy.Basic:
        return self.evaluate_expr(node.expr, fallback=fallback_value, size_oblivious=size_oblivious)

    def __repr__(self) -> str:
        return f"ShapeEnv({len(self.var_to_val)} symbols, {len(self.guards)} guards)"


def _never_zero(expr: sympy.Expr, ranges: dict[sympy.Symbol, ValueRange]) -> bool:
    """Whether the ranges show that `expr` is never 0."""
    rng = bound(expr, ranges)
    return bool(rng.lower > 0 or rng.upper < 0)


def _drop_congruent_remainders(a: sympy.Expr, b: sympy.Expr) -> sympy.Expr:
    """`a` with each `x % m` (m a multiple of b) that only sums and products lead to replaced
    by `x`: the same value modulo b, for integer operands."""
    if isinstance(a, PythonMod) and (a.args[1] / b).is_integer:
        return _drop_congruent_remainders(a.args[0], b)
    if isinstance(a, (sympy.Add, sympy.Mul)) and all(arg.is_integer for arg in a.args):
        return a.func(*[_drop_congruent_remainders(arg, b) for arg in a.args])
    if isinstance(a, sympy.Pow) and a.args[0].is_integer and a.args[1].is_Integer and \
            a.args[1] >= 0:
        return _drop_congruent_remainders(a.args[0], b) ** a.args[1]
    return a
