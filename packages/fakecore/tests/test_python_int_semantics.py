"""Symbolic `%` and `//` mean what Python's do, for every value (hypothesis).

sympy's own `Mod` and `floor` rewrite nested expressions in ways that are wrong for Python ints
(`Mod(Mod(a, 4)*b, 5)` became `Mod(b*Mod(a, 4)**2, 5)`), which gave wrong value hints and guards
that failed for the very example they were recorded on. Each check here compares a symbolic
program with Python's own arithmetic: the hints, each expression substituted with other
values, the expressions as sympy's Python printer writes them (as a guard library renders them),
and the guards (they hold exactly where the program takes the branches it took).
"""

from __future__ import annotations

import itertools
import operator

import pytest
import sympy
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from sympy.printing.pycode import pycode

from fakecore import FakeTensorMode, FloorDiv, PythonMod, ShapeEnv, SizeOrigin


def sizes_program(n, m, k):
    """Size arithmetic a model might do: padding, blocks, remainders (n, m: sizes; k: any int)."""
    return {
        "nested_mod": ((n % 4) * m) % 5,
        "nested_mod_neg": ((n % 4) * k) % 5,
        "pad": (-n) % 8,
        "blocks": (n + 7) // 8,
        "neg_floordiv": (k - n) // 3,
        "floordiv_by_int": (n * m) // k,
        "mod_by_int": (n * m + k) % k,
        "floordiv_of_floordiv": (n // 3) // 2,
        "mod_of_product": (n * (m % 3)) % 6,
        "mixed": ((n // 2) * 2 + (m % 3) - k) % 7,
        "square_over_side": (((n - 2) // 2 + 1) ** 2) // ((n - 2) // 2 + 1),
        "padded_blocks": (n + (4 - n % 4) % 4) // 4,
        "padded_mod": (n + (4 - n % 4) % 4) % 4,
        "padded_by_k": (m + (k - m % k) % k) // k,
    }


def branches(values):
    """The decisions the program takes on its sizes."""
    return (values["nested_mod"] > 2, values["pad"] == 0, values["blocks"] >= 3,
            values["neg_floordiv"] < -2, values["mixed"] % 2 == 1)


_NOT_ZERO_ONE = st.integers(-30, 30).filter(lambda k: k not in (0, 1))  # 0, 1: no symbol


def _make(n: int, m: int, k: int):
    env = ShapeEnv(duck_shape=False)
    mode = FakeTensorMode(env)
    x = mode.from_tensor(torch.empty(n, m), dynamic_dims=(0, 1))
    sk = env.create_symint(k)
    return env, x, sk


def _symbols(env: ShapeEnv) -> list[sympy.Symbol]:
    return sorted(env.var_to_val, key=str)


def _substitute(env: ShapeEnv, expr: sympy.Basic, values: tuple[int, ...]) -> sympy.Basic:
    mapping = dict(zip(_symbols(env), map(sympy.Integer, values)))
    return env.simplify(expr).xreplace(mapping)


def _other_values(count: int) -> st.SearchStrategy:
    """`count` other (n, m, k) for the sizes program to be checked on."""
    k = st.integers(-40, 40).filter(lambda k: k != 0)
    return st.lists(st.tuples(st.integers(2, 60), st.integers(2, 60), k), min_size=count,
                    max_size=count)


@settings(max_examples=150, deadline=None)
@given(st.integers(2, 40), st.integers(2, 40), _NOT_ZERO_ONE, _other_values(8))
def test_mod_and_floordiv_agree_with_python_for_every_value(n, m, k, others) -> None:
    env, x, sk = _make(n, m, k)
    s_n, s_m = x.shape
    got = sizes_program(s_n, s_m, sk)
    expected = sizes_program(n, m, k)
    for name, value in got.items():
        node = value.node
        assert node.hint == expected[name], name
        for on, om, ok in others:
            want = sizes_program(on, om, ok)[name]
            assert _substitute(env, node.expr, (on, om, ok)) == want, (name, node.expr)
            # A guard library renders expressions with sympy's Python printer.
            source = pycode(node.expr, fully_qualified_modules=False)
            names = {str(s): v for s, v in zip(_symbols(env), (on, om, ok))}
            assert eval(source, {"math": __import__("math")}, names) == want, (name, source)
    assert not env.guards  # arithmetic alone decides nothing


@settings(max_examples=150, deadline=None)
@given(st.integers(2, 40), st.integers(2, 40), _NOT_ZERO_ONE, _other_values(10))
def test_guards_hold_exactly_where_the_program_branches_the_same(n, m, k, others) -> None:
    env, x, sk = _make(n, m, k)
    s_n, s_m = x.shape
    taken = tuple(bool(b) for b in branches(sizes_program(s_n, s_m, sk)))
    assert taken == branches(sizes_program(n, m, k))
    guards = [g.expr for g in env.guards]
    for g in guards:  # every guard holds for the example it was recorded on
        assert bool(_substitute(env, g, (n, m, k))), g
    for values in others:
        same = branches(sizes_program(*values)) == taken
        assert all(bool(_substitute(env, g, values)) for g in guards) == same, (values, guards)


def test_sympy_does_not_rewrite_nested_python_mod() -> None:
    a, b = sympy.symbols("a b", integer=True)
    expr = PythonMod(PythonMod(a, 4) * b, 5)
    assert expr.xreplace({a: 2, b: -1}) == ((2 % 4) * -1) % 5 == 3
    assert PythonMod(a, 1) == 0 and FloorDiv(a, 1) == a and FloorDiv(a, -1) == -a
    assert PythonMod(-7, 3) == -7 % 3 and PythonMod(7, -3) == 7 % -3
    assert FloorDiv(-7, 2) == -7 // 2 and FloorDiv(7, -2) == 7 // -2
    assert FloorDiv(FloorDiv(a, 3), 2) == FloorDiv(a, 6)
    assert PythonMod(PythonMod(a, 4), 4) == PythonMod(a, 4)
    assert FloorDiv(sympy.Float(7.5), 2) == 7.5 // 2 and PythonMod(sympy.Float(7.5), 2) == 7.5 % 2
    assert str(2 * FloorDiv(a + 1, b)) == "2*((a + 1) // b)"
    assert pycode(PythonMod(a, b - 1)) == "(a % (b - 1))"
    assert str(PythonMod(sympy.Rational(1, 2) * a, sympy.Rational(1, 2))) == "((a/2) % (1/2))"


def test_value_ranges_bound_python_mod_and_floordiv() -> None:
    env, x, _ = _make(6, 10, -3)
    n, m = x.shape
    # decided from the ranges when built: plain bools, no guard
    assert ((n % 4) < 4) is True and ((n % 4) >= 0) is True and ((n // 2) >= 1) is True
    assert ((m % -3) <= 0) is True and ((n // m) >= 0) is True
    assert not env.guards


_P, _Q = sympy.symbols("p q", integer=True, positive=True)
_I, _J = sympy.symbols("i j", integer=True)
_FORMS = [  # (numerator, denominator): shapes the simplification rules look at
    (_P, 4 * _P), (_P, _P * _Q), (6 * _P, 4 * _Q), (6 * _P * _Q, 4 * _Q), (-2 * _P, 4),
    (_I, 2 * _I), (_I * _J, _J), (4 * _I + 2, 2), (_P * _Q + _P, _P), (_I - _P, -3),
    (PythonMod(_I, 4) * _J, 5), (FloorDiv(_I, 3), 2), (PythonMod(_I, _P), _P), (_I, -1),
]


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 30), st.integers(1, 30), st.integers(-30, 30), st.integers(-30, 30))
def test_the_simplification_rules_hold_for_every_value(p, q, i, j) -> None:
    values = {_P: p, _Q: q, _I: i, _J: j}

    def python(expr):  # the value Python computes, from the unsimplified structure
        return sympy.sympify(expr).xreplace(values)

    for num, den in _FORMS:
        n, d = python(num), python(den)
        if d == 0:
            continue
        assert PythonMod(num, den).xreplace(values) == int(n) % int(d), (num, den)
        assert FloorDiv(num, den).xreplace(values) == int(n) // int(d), (num, den)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(2, 40), divisor=st.sampled_from([1, 2, 3]),
       modulus=st.sampled_from([1.0, 2.5, 0.75]), bound=st.sampled_from([0, 0.5, 1, 2]))
def test_a_float_remainder_of_a_size_is_decided_as_python_decides(n, divisor, modulus,
                                                                  bound) -> None:
    env = ShapeEnv()
    s = env.create_symint(n)
    value = (s / divisor) % modulus
    assert float(value) == (n / divisor) % modulus
    assert bool(value < bound) == ((n / divisor) % modulus < bound)
    assert bool(s % modulus == 0) == (n % modulus == 0)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(2, 12), m=st.integers(2, 12))
def test_two_conditions_compare_as_python_bools(n, m) -> None:
    env = ShapeEnv()
    a, b = env.create_symint(n), env.create_symint(m)
    assert bool((a > 4) == (b > 6)) == ((n > 4) == (m > 6))
    assert bool((a > 4) != (b > 6)) == ((n > 4) != (m > 6))


def test_dividing_by_an_int_that_may_be_zero_is_not_simplified_away() -> None:
    """`n // n` is 1, `n % n` 0 and `n / n` 1.0 only where n is not 0: Python raises there, so
    an int that may be 0 keeps the division (a size, at least 2, simplifies)."""
    env = ShapeEnv()
    n = env.create_symint(3, specialize_zero_one=False)  # an int of unknown range
    for kept in (n // n, n % n, (2 * n) // n, n / n):
        assert not kept.node.expr.is_number, kept.node.expr
    size = env.create_symint(5, SizeOrigin("x", "size", 0))
    assert (size // size) == 1 and (size % size) == 0


def test_sizes_simplify_with_what_the_ranges_know() -> None:
    """A conv's output side `(n - 4) // 4 + 1` is positive once `n >= 4` is known, which sympy's
    assumptions do not see: `side**2 // side` is `side`, and a side padded up to a multiple of 4
    is one (`% 4` is 0, `// 4` exact), as in Swin's window partition."""
    env = ShapeEnv()
    n = env.create_symint(32, SizeOrigin("x", "size", 0))
    torch._check(n >= 4)
    side = (n - 4) // 4 + 1
    assert ((side * side) // side).node.expr == side.node.expr
    padded = side + (4 - side % 4) % 4
    assert padded % 4 == 0
    assert ((padded // 4) * 4).node.expr == padded.node.expr
    assert padded.node.hint == 8 and (padded // 4).node.hint == 2



def test_a_view_of_padded_windows_infers_the_batch_symbolically() -> None:
    """`view(-1, ...)` of windows of a padded image (Swin's window_reverse) infers the batch as
    the batch's symbol: the guards hold for other batches."""
    env = ShapeEnv()
    mode = FakeTensorMode(env)
    x = mode.from_tensor(torch.empty(2, 3, 32, 32), dynamic_dims=(0, 2, 3))
    with mode:
        torch._check(x.shape[2] >= 4)  # as a 4x4 stride-4 conv's meta kernel guards
        batch, side = x.shape[0], (x.shape[2] - 4) // 4 + 1
        y = torch.empty(batch, side * side, 8).view(batch, side, side, 8)
        pad = (4 - side % 4) % 4
        y = torch.nn.functional.pad(y, (0, 0, 0, pad, 0, pad))
        hp = y.shape[1]
        windows = y.view(batch, hp // 4, 4, hp // 4, 4, 8).permute(0, 1, 3, 2, 4, 5)
        windows = windows.reshape(-1, 4, 4, 8)
        back = windows.view(-1, hp // 4, hp // 4, 4, 4, 8)
    assert back.shape[0].node.expr == batch.node.expr
    s0, s1 = batch.node.expr, x.shape[2].node.expr
    for other_batch in (3, 7):
        values = {s0: sympy.Integer(other_batch), s1: sympy.Integer(32)}
        assert all(env.simplify(g.expr).xreplace(values) == sympy.true for g in env.guards)


def test_a_division_that_may_raise_is_not_simplified_away_by_the_ranges() -> None:
    """What the ranges simplify keeps every division by an int that may be 0 (k, of any
    range): Python raises ZeroDivisionError there, so the guards must not say otherwise."""
    env = ShapeEnv(duck_shape=False)
    n = env.create_symint(6, SizeOrigin("x", "size", 0))
    q = env.create_symint(5, SizeOrigin("x", "size", 1))
    k = env.create_symint(3)
    g = n // k
    kept = [  # (value, its hint)
        ((n % (2 * k)) % 2, 0),  # a remainder modulo a multiple of 2 (2*k, 0 at k == 0)
        ((g * (q + 1) - g * q - g + 4 - 4 * q) // (1 - q), 4),  # cancels to 4, g with it
        ((q * g + q * q) % q, 0),  # (g + q) * q
    ]
    for value, hint in kept:
        assert value.node.hint == hint
        with pytest.raises(ZeroDivisionError):
            value.node.expr.xreplace({k.node.expr: sympy.Integer(0)})


def test_a_multiple_of_a_division_that_may_raise_keeps_it() -> None:
    """`(6*(n // k)) % 3` is 0 where Python gives a value, and raises at k == 0: the remainder
    keeps `n // k`. A size padded to a multiple of 18 (`round_up_sum` writes it as one) keeps
    the `% k` it was computed from the same way."""
    env = ShapeEnv(duck_shape=False)
    n = env.create_symint(7, SizeOrigin("x", "size", 0))
    k = env.create_symint(3)
    m = n % k
    padded = m + (-18 - m % -18) % -18
    for value in ((6 * (n // k)) % 3, padded % 3):
        assert value.node.hint == 0
        with pytest.raises(ZeroDivisionError):
            sympy.sympify(value.node.expr).xreplace({k.node.expr: sympy.Integer(0)})
    assert ((6 * (n // 2)) % 3).node.expr == 0  # (a divisor that is never 0 is dropped)


_SIZE, _NEGATIVE, _DATA = "size", "negative", "data"
_LEAVES = st.sampled_from([_SIZE, _NEGATIVE, _DATA, -3, -1, 2, 3, 4, 6, 8])


@st.composite
def _expressions(draw, depth=3):
    """A tree `(op, a, b)` of at most `depth` levels over the leaves (an exponent for `**`)."""
    if depth == 0 or draw(st.integers(0, 4)) == 0:
        return draw(_LEAVES)
    op = draw(st.sampled_from(["+", "-", "*", "//", "%", "%", "**", "pad"]))
    a = draw(_expressions(depth - 1))
    b = draw(st.integers(0, 3)) if op == "**" else draw(_expressions(depth - 1))
    return op, a, b


def _evaluate(tree, leaves):
    """`tree`'s value, its leaves' names replaced by `leaves` (ints or SymInts)."""
    if not isinstance(tree, tuple):
        return leaves.get(tree, tree)
    op, a, b = tree
    x = _evaluate(a, leaves)
    y = b if op == "**" else _evaluate(b, leaves)
    if op == "pad":
        return x + (y - x % y) % y
    return {"+": operator.add, "-": operator.sub, "*": operator.mul, "//": operator.floordiv,
            "%": operator.mod, "**": operator.pow}[op](x, y)


@settings(max_examples=200, deadline=None)
@given(_expressions(), st.integers(2, 9), st.integers(-9, -1), st.integers(-3, 0),
       st.integers(0, 4))
def test_random_int_expressions_agree_with_python_inside_the_ranges(tree, n, k, low,
                                                                   width) -> None:
    """Random `+ - * // % **` and padding over a size (>= 2), an int guarded negative and a
    data-dependent int of range [low, low + width], substituted with values of those ranges."""
    env = ShapeEnv()
    size = env.create_symint(n, SizeOrigin("x", "size", 0))
    negative = env.create_symint(k)
    torch._check(negative < 0)
    data = env.create_unbacked_symint("test", low, low + width)
    symbols = [s.node.expr for s in (size, negative, data)]
    try:
        value = _evaluate(tree, {_SIZE: size, _NEGATIVE: negative, _DATA: data})
    except ZeroDivisionError:
        return
    expr = env.simplify(value.node.expr) if isinstance(value, torch.SymInt) else value
    for values in itertools.product((2, 3, 4, 7, 12), (-1, -2, -3, -6),
                                    range(low, low + width + 1)):
        try:
            want = _evaluate(tree, dict(zip((_SIZE, _NEGATIVE, _DATA), values)))
        except ZeroDivisionError:
            continue
        mapping = {s: sympy.Integer(v) for s, v in zip(symbols, values)}
        assert sympy.sympify(expr).xreplace(mapping) == want, (tree, expr, values)


@pytest.mark.parametrize("n", [0, 1, 3])
def test_a_condition_beside_a_number_is_the_int_python_makes_of_it(n):
    # Python reads `(d != 0.5) != n` as `1 != n`; sympy read the number as a condition (an
    # equivalence of two conditions), and the guard recorded failed for the example itself
    env = ShapeEnv()
    d, s = env.create_symint(3), env.create_symint(n)
    cases = {"ne": ((d != 0.5) != s, (3 != 0.5) != n), "add": ((d > 2) + s, (3 > 2) + n),
             "mul": (s * (d < 0), n * (3 < 0)), "eq": ((d == 3) == s, (3 == 3) == n)}
    for what, (symbolic, python) in cases.items():
        assert symbolic == python, what
    values = {sym: value for sym, value in zip(sorted(env.var_to_val, key=str), (3, n))}
    for guard in env.guards:
        assert bool(guard.expr.subs(values)), guard


@pytest.mark.parametrize("size", [3, 9])
def test_a_condition_beside_a_float_is_the_number_python_makes_of_it(size):
    # `-1.5 == (n >= 7)` promoted the condition to a float with its expression unchanged, and
    # compared it as true (stale fuzzer seed 79482: a guard that failed for its own example)
    env = ShapeEnv()
    n = env.create_symint(size)
    python = size >= 7
    cases = {"eq": (-1.5 == (n >= 7), -1.5 == python),
             "eq one": (1.0 == (n >= 7), 1.0 == python),
             "add": (0.5 + (n >= 7), 0.5 + python), "neg": (-(n >= 7), -python)}
    for what, (symbolic, want) in cases.items():
        assert symbolic == want and type(symbolic) is type(want), what
    for guard in env.guards:
        assert bool(guard.expr.subs({sym: size for sym in env.var_to_val})), guard
