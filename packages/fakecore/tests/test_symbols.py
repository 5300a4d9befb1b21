"""ShapeEnv: symbols, duck sizing, 0/1 specialisation, static decisions, guards, replacements."""

from __future__ import annotations

import pytest
import sympy
import torch

from fakecore import DataDependentError, FakeTensorMode, ShapeEnv, SizeOrigin


def _size(env: ShapeEnv, hint: int) -> torch.SymInt:
    """A symbol for a tensor's size (sizes are nonnegative; plain ints may be anything)."""
    return env.create_symint(hint, SizeOrigin("x", "size", 0))


def test_sizes_become_symbols_with_hints_and_ranges() -> None:
    env = ShapeEnv()
    s = env.create_symbol(8, SizeOrigin("x", "size", 0))
    assert isinstance(s, sympy.Symbol) and str(s) == "s0"
    assert env.var_to_val[s] == 8
    assert (env.var_to_range[s].lower, env.var_to_range[s].upper) == (2, sympy.oo)
    assert env.var_to_origins[s] == [SizeOrigin("x", "size", 0)]


def test_zero_and_one_are_specialised() -> None:
    env = ShapeEnv()
    assert env.create_symbol(0) == 0 and env.create_symbol(1) == 1
    assert env.create_symint(1) == 1 and type(env.create_symint(1)) is int
    assert not env.var_to_val
    unspecialised = ShapeEnv(specialize_zero_one=False)
    assert isinstance(unspecialised.create_symbol(1), sympy.Symbol)


def test_duck_sizing_shares_a_symbol_for_equal_sizes() -> None:
    env = ShapeEnv()
    a = env.create_symbol(8, SizeOrigin("x", "size", 0))
    b = env.create_symbol(8, SizeOrigin("y", "size", 1))
    c = env.create_symbol(9)
    assert a == b != c
    assert [o.source for o in env.var_to_origins[a]] == ["x", "y"]
    no_duck = ShapeEnv(duck_shape=False)
    assert no_duck.create_symbol(8) != no_duck.create_symbol(8)


def test_decisions_are_guards_and_facts_the_ranges_settle_are_not() -> None:
    env = ShapeEnv()
    s0, s1 = _size(env, 8), _size(env, 3)
    assert bool(s0 >= 2) and bool(s0 * s1 > 3) and bool(s0 != 1)  # known from ranges
    assert env.guards == []
    assert bool(s0 > 4)
    assert [str(g.expr) for g in env.guards] == ["s0 > 4"]
    assert env.guards[0].user_frame and "test_symbols.py" in env.guards[0].user_frame
    assert bool(s0 > 4) and bool(s0 > 3)  # the same decision, and one the new range settles
    assert len(env.guards) == 1
    assert env.var_to_range[s0.node.expr].lower == 5


def test_equality_guards_become_replacements() -> None:
    env = ShapeEnv()
    a, b, c = _size(env, 8), _size(env, 9), _size(env, 5)
    assert int(c) == 5  # specialises: s2 -> 5
    assert str(c + a) == "s0 + 5"
    assert not bool(a == b)
    env2 = ShapeEnv(duck_shape=False)
    x, y = _size(env2, 4), _size(env2, 4)
    assert bool(x == y)  # s1 -> s0
    assert str(y * 2) == "2*s0"
    assert [str(g.expr) for g in env2.guards] == ["Eq(s0, s1)"]


def test_simplification_keeps_expressions_small() -> None:
    env = ShapeEnv()
    s0, s1 = _size(env, 6), _size(env, 4)
    assert str((s0 * s1) // s1) == "s0"
    assert str(s0 + s1 - s1) == "s0"
    assert str(torch.sym_max(s0, s1)) == "Max(s0, s1)"


def test_a_simplified_expression_is_kept_until_a_replacement_is_learned() -> None:
    # Every SymInt operation reads its operands' expressions with the replacements applied:
    # each expression is rewritten once (the same object after), and again once an equality
    # guard adds a replacement.
    env = ShapeEnv(duck_shape=False)
    a, b, c = _size(env, 4), _size(env, 4), _size(env, 7)
    larger = torch.sym_max(b * 2, c)
    assert bool(a == b)  # s1 -> s0
    assert str(larger.node.expr) == "Max(2*s0, s2)"
    assert larger.node.expr is larger.node.expr
    assert int(c) == 7  # s2 -> 7
    assert str(larger.node.expr) == "Max(7, 2*s0)"


def test_size_arithmetic_through_tensors() -> None:
    mode = FakeTensorMode(ShapeEnv())
    x = mode.from_tensor(torch.randn(6, 4), dynamic_dims=(0, 1))
    with mode:
        y = x.reshape(-1)
        z = torch.cat([x, x])
    assert str(y.shape[0]) == "s0*s1"
    assert str(z.shape[0]) == "2*s0"
    assert mode.shape_env.guards == []


def test_unbacked_symbols_have_ranges_and_refuse_guards() -> None:
    env = ShapeEnv()
    u = env.create_unbacked_symint("aten.nonzero.default", 0, 10, size_like=True)
    assert str(u).startswith("u") and u.node.hint is None
    assert bool(u >= 0) and bool(u <= 10)  # the range answers these
    with pytest.raises(DataDependentError, match=r"u0 > 3.*u0 from aten\.nonzero\.default"):
        bool(u > 3)
    assert u.node.shape_env.guards == []


def test_guard_or_false_gives_the_fallback_without_guarding() -> None:
    env = ShapeEnv()
    u = env.create_unbacked_symint("aten._local_scalar_dense.default")
    assert (u > 5).node.guard_or_false() is False
    assert (u > 5).node.guard_or_true() is True
    assert env.guards == []


def test_size_oblivious_reasoning_treats_size_like_unbacked_as_at_least_two() -> None:
    env = ShapeEnv()
    u = env.create_unbacked_symint("aten.nonzero.default", 0, 100, size_like=True)
    assert (u != 1).node.guard_size_oblivious() is True
    with pytest.raises(DataDependentError):
        (u != 1).node.guard_bool()


def test_an_int_that_is_not_a_size_may_be_negative() -> None:
    env = ShapeEnv()
    n = env.create_symint(-3, SizeOrigin("n", "value"))
    assert isinstance(n, torch.SymInt) and n.node.hint == -3
    assert bool(n < 0)  # decided from the hint, with a guard: not statically False
    assert [str(g.expr) for g in env.guards] == ["s0 < 0"]
    m = env.create_symint(8)  # no origin: a plain int too, not sharing a size's symbol
    size = _size(env, 8)
    assert str(m) != str(size) and env.var_to_range[m.node.expr].lower == -sympy.oo
    assert env.create_symint(1, SizeOrigin("k", "value")) == 1  # 0 and 1 still specialised


def test_symbols_without_zero_one_specialisation_are_not_taken_for_zero() -> None:
    env = ShapeEnv(specialize_zero_one=False)
    n = _size(env, 5)
    assert n.node.expr.is_zero is None and n.node.expr.is_nonnegative
    assert int(n // 2) == 2
    assert env.var_to_range[n.node.expr].lower == 0


@pytest.mark.parametrize("decided, lower, upper", [
    (lambda n: n > 2.5, 3, sympy.oo), (lambda n: n >= 2.5, 3, sympy.oo),
    (lambda n: n < 3.5, 2, 3), (lambda n: n <= 3.5, 2, 3),
    (lambda n: n > 2, 3, sympy.oo), (lambda n: n <= 3, 2, 3),
])
def test_comparisons_with_non_integers_narrow_to_integer_bounds(decided, lower, upper) -> None:
    env = ShapeEnv()
    n = _size(env, 3)
    assert bool(decided(n))
    assert (env.var_to_range[n.node.expr].lower, env.var_to_range[n.node.expr].upper) == (
        lower, upper)
    assert bool(n == 3)


def test_sym_ite_is_a_piecewise_value_and_guards_nothing() -> None:
    env = ShapeEnv(duck_shape=False)
    n, m = _size(env, 6), _size(env, 4)
    bigger = torch.sym_ite(n > m, n, m)
    assert isinstance(bigger, torch.SymInt) and bigger.node.hint == 6
    half = torch.sym_ite(n > m, n / 2, m * 1.5)
    assert isinstance(half, torch.SymFloat) and half.node.hint == 3.0
    either = torch.sym_ite(n > m, n > 5, m > 5)
    assert isinstance(either, torch.SymBool) and either.node.hint is True
    assert not env.guards
    s_n, s_m = sorted(env.var_to_val, key=str)
    for a, b in [(6, 4), (3, 9), (5, 5), (10, 2)]:
        values = {s_n: a, s_m: b}
        assert bigger.node.expr.xreplace(values) == max(a, b)
        assert either.node.expr.xreplace(values) == (a > 5 if a > b else b > 5)
    assert torch.sym_ite(n >= 2, n, m) is n  # decided by the ranges: a plain bool
    assert int(bigger + 1) == 7 and len(env.guards) == 1  # deciding it guards, as any value
    assert bool(either) and len(env.guards) == 2
    for a, b in [(6, 4), (3, 9), (5, 5), (10, 2)]:
        holds = all(g.expr.xreplace({s_n: a, s_m: b}) for g in env.guards)
        assert holds == (max(a, b) == 6 and (a > 5 if a > b else b > 5))


def test_sym_ite_on_a_data_dependent_condition_stays_symbolic() -> None:
    env = ShapeEnv()
    n = _size(env, 6)
    u = env.create_unbacked_symint("aten.nonzero.default", 0, 100)
    chosen = torch.sym_ite(u > 3, n, u)
    assert isinstance(chosen, torch.SymInt) and chosen.node.hint is None
    with pytest.raises(DataDependentError):
        int(chosen)


def test_a_float_input_is_a_real_symbol_that_tensor_ops_take_without_guards() -> None:
    env = ShapeEnv()
    mode = FakeTensorMode(env)
    f = env.create_symfloat(0.5, SizeOrigin("f", "value"))
    assert isinstance(f, torch.SymFloat) and f.node.hint == 0.5
    with mode:
        x = mode.from_tensor(torch.randn(3, 4))
        outs = [x * f, f - x, x / f, torch.full((2,), f), x.clamp(min=f), torch.lerp(x, x, f),
                torch.softmax(x / f, -1), torch.arange(3) * f]
    assert [o.dtype for o in outs] == [torch.float32] * 8
    assert not env.guards  # no value was needed
    assert bool(f * 3 > 1.2)  # decided on the hint, under a guard
    assert [str(g.expr) for g in env.guards] == ["3.0*zf0 > 1.2"]
    assert float(f) == 0.5 and str(env.guards[-1].expr) == "Eq(zf0, 0.5)"


def test_an_equation_of_one_symbol_becomes_its_replacement() -> None:
    # `x[x.shape[0] - 2]` asks `s0 - 2 == 4`: s0 is 6 from then on (no further guards on it,
    # sizes computed from it static), as torch's ShapeEnv solves it
    env = ShapeEnv()
    s = env.create_symint(6, SizeOrigin("x", "size", 0))
    assert bool(s - 2 == 4) and bool(s > 4)
    assert [str(g.expr) for g in env.guards] == ["Eq(s0 - 2, 4)"]
    assert (3 * s).node.expr == 18


def test_relations_that_hold_for_every_value_in_a_narrowed_range_record_nothing() -> None:
    env = ShapeEnv()
    s = env.create_symint(5, SizeOrigin("x", "size", 0))
    assert bool(s <= 128)
    assert bool(s != s * s) and bool(s * s >= s) and bool(s < s * s)
    assert [str(g.expr) for g in env.guards] == ["s0 <= 128"]


def test_an_expression_that_keeps_doubling_is_specialised_instead() -> None:
    env = ShapeEnv()
    k = _size(env, 3)
    for _ in range(12):  # `k // 2 + k` reads k twice: the tree (and sympy's time) doubles
        k = k // 2 + k
    expected = 3
    for _ in range(12):
        expected = expected // 2 + expected
    assert int(k) == expected and not isinstance(k, torch.SymInt)
    assert env.guards  # the specialisation is guarded
    n = _size(env, 5)
    for _ in range(1000):  # one that sympy keeps small (`n + 1000`) stays symbolic
        n = n + 1
    assert isinstance(n, torch.SymInt) and n.node.hint == 1005


def test_plain_ints_of_equal_value_get_symbols_of_their_own() -> None:
    """Sizes of one example value share a symbol (duck sizing); ints do not: `n == m` is not
    assumed because their examples are equal."""
    env = ShapeEnv()
    n, m = env.create_symint(3), env.create_symint(3)
    assert str(n) != str(m)
    x = FakeTensorMode(shape_env=env).from_tensor(torch.randn(3, 3), dynamic_dims=[0, 1])
    assert str(x.shape[0]) == str(x.shape[1])


@pytest.mark.parametrize("op", ["&", "|", "^", "<<", ">>"])
def test_a_bit_operation_with_a_float_raises_pythons_type_error(op) -> None:
    """Bit operations specialise their operands; a float among them is Python's TypeError (the
    operand was truncated: `7.5 ^ s0` gave 3 for s0 = 4)."""
    env = ShapeEnv()
    s = _size(env, 4)
    for left, right in ((7.5, s), (s, 7.5), (7.5, 4), (4, 7.5)):
        with pytest.raises(TypeError) as raised:
            eval(f"left {op} right")
        left_type, right_type = (type(v).__name__.replace("SymInt", "int") for v in (left, right))
        assert str(raised.value) == f"unsupported operand type(s) for {op}: " \
                                    f"'{left_type}' and '{right_type}'"
    assert eval(f"s {op} 1") == eval(f"4 {op} 1")


def test_c_meta_kernel_on_sizes_specialised_by_a_guard():
    """A size whose symbol a guard replaced by a number (`Eq(s0, 8)`) is still a SymInt: the
    C++ meta kernels that read sizes (`_trilinear`, `cumsum`, `diag`, `signbit`) need the
    Python dispatcher on for it (off, they failed an INTERNAL ASSERT of torch's)."""
    from fakecore import FakeTensorMode, ShapeEnv

    mode = FakeTensorMode(shape_env=ShapeEnv())
    x = mode.from_tensor(torch.randn(1, 8), dynamic_dims=[1])
    w = mode.from_tensor(torch.randn(8, 8, 8), dynamic_dims=[0, 1, 2])
    with mode:
        assert x.shape[1] == 8  # guards Eq(s0, 8): s0 is replaced by 8
        out = torch.ops.aten._trilinear.default(x, w, x, [1, 3], [0], [1, 2], [2, 3])
        assert tuple(out.shape) == (1, 8)
        assert tuple(torch.cumsum(x, 1).shape) == (1, 8)
        assert tuple(torch.signbit(w).shape) == (8, 8, 8)
