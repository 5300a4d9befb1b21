"""Symbolic shape guards from a real fakecore ShapeEnv, and the GuardedCache."""

from __future__ import annotations

import re

import pytest
import sympy
import torch

from guards import (
    CacheLimitExceeded,
    Equals,
    GetItemSource,
    GuardedCache,
    GuardSet,
    Identity,
    LocalSource,
    ShapeGuard,
    TensorMatch,
    TensorPropertySource,
    shape_guards,
)

fakecore = pytest.importorskip("fakecore")  # symbolic shape guards only; in the [test] extra


def _traced_guards(fn, *tensors):
    """Fake `fn` on symbolic copies of `tensors` (inputs named a, b, ...) and guard it all."""
    mode = fakecore.FakeTensorMode(fakecore.ShapeEnv())
    names = "abcdefgh"[: len(tensors)]
    fakes = [mode.from_tensor(t, dynamic_dims=range(t.dim()), source=LocalSource(n))
             for n, t in zip(names, tensors)]
    with mode:
        fn(*fakes)
    gs = GuardSet(shape_guards(mode.shape_env))
    for n, t in zip(names, tensors):
        gs.add(TensorMatch.of(LocalSource(n), t, dynamic_dims=range(t.dim())))
    return gs, names


def test_shape_env_decisions_become_checks_on_sizes() -> None:
    def fn(a, b):
        if a.shape[0] > 4:  # guard: s0 > 4
            return a @ b  # a's dim 1 and b's dim 0 are duck-sized to one symbol
        return a

    gs, _ = _traced_guards(fn, torch.randn(8, 3), torch.randn(3, 5))
    assert "L_a.size()[0] > 4" in gs.source or "L_a_size_0 > 4" in gs.source
    frame = lambda a, b: {"a": torch.randn(*a), "b": torch.randn(*b)}  # noqa: E731
    assert gs.check(frame((6, 7), (7, 2)), {})
    assert not gs.check(frame((3, 7), (7, 2)), {})  # s0 > 4 fails
    assert not gs.check(frame((6, 7), (8, 2)), {})  # duck-sized dims differ
    assert not gs.check(frame((6, 1), (1, 2)), {})  # size 1 was specialised away: s >= 2
    reasons = gs.explain(frame((3, 7), (7, 2)), {})
    assert any("L['a'].size()[0] > 4" in r and "failed: with L['a'].size()[0] = 3" in r
               for r in reasons)


def test_a_size_replaced_by_an_expression_keeps_its_range_guard() -> None:
    """`b.shape[0] > 1` is settled by the symbol's range (sizes of 2 or more: no guard of its
    own); a later `b.shape[0] == a.shape[0] - 1` replaces the symbol by `s0 - 1`, whose own
    bounds allow 1: the range guard must stay."""
    def fn(a, b):
        scale = 2 if b.shape[0] > 1 else 3
        return a.sum() if b.shape[0] == a.shape[0] - 1 else b.sum() * scale

    gs, _ = _traced_guards(fn, torch.randn(5), torch.randn(4))
    assert gs.check({"a": torch.randn(7), "b": torch.randn(6)}, {})
    assert not gs.check({"a": torch.randn(2), "b": torch.randn(1)}, {})


def test_guards_from_meta_kernels_are_checked_too() -> None:
    def fn(a):
        return a.view(2, 6) if a.shape[0] * a.shape[1] == 12 else a

    gs, _ = _traced_guards(fn, torch.randn(3, 4))
    assert gs.check({"a": torch.randn(3, 4)}, {})
    assert not gs.check({"a": torch.randn(4, 4)}, {})  # s0*s1 == 12 fails
    # view's meta kernel decided on the parity of s0 (for the strides of the view)
    reasons = gs.explain({"a": torch.randn(4, 3)}, {})
    assert len(reasons) == 1 and re.fullmatch(  # fakecore may write `%` in parentheses
        r"\(\(?L\['a'\]\.size\(\)\[0\] % 2\)? != 0\) failed: with L\['a'\]\.size\(\)\[0\] = 4",
        reasons[0]), reasons


def test_rendered_expressions_agree_with_sympy() -> None:
    s0, s1 = sympy.symbols("s0 s1", integer=True, positive=True)
    bindings = ((s0, TensorPropertySource(LocalSource("a"), "size", 0)),
                (s1, TensorPropertySource(LocalSource("a"), "size", 1)))
    exprs = [sympy.Eq(sympy.floor(s0 / 3) + sympy.Mod(s1, 4), 5), sympy.Ge(sympy.Max(s0, s1), 7),
             sympy.And(sympy.Ne(s0, s1), sympy.Lt(2 * s0 - s1, 9)),
             sympy.Gt(sympy.ceiling(s0 / 2), 3), sympy.Eq(sympy.ceiling(s0 / 4) * 4, s1 + 1),
             sympy.Eq((s0 + 1) ** 2, s1 * 3 + 1), sympy.Eq(s0 / 4, sympy.Rational(3, 2))]
    for expr in exprs:
        gs = GuardSet([ShapeGuard(expr, bindings)])
        for a in range(2, 12):
            for b in range(2, 12):
                t = torch.empty(a, b)
                assert gs.check({"a": t}, {}) == bool(expr.subs({s0: a, s1: b})), expr


def test_a_guard_on_true_division_computes_what_python_does() -> None:
    # x.shape[0] / 10 > 0.3 traced at 5; at 3, Python says 3 / 10 > 0.3 is False (0.1 * 3 is
    # 0.30000000000000004: a guard multiplying by 1/10 would pass it).
    gs, _ = _traced_guards(lambda a: a * 2 if a.shape[0] / 10 > 0.3 else a, torch.randn(5))
    assert gs.check({"a": torch.randn(5)}, {})
    assert not gs.check({"a": torch.randn(3)}, {})


def test_cache_looks_up_in_order_and_explains_misses() -> None:
    cache: GuardedCache[str] = GuardedCache(limit=2)
    x = LocalSource("x")
    cache.add(GuardSet([Equals(x, 1)]), "one")
    cache.add(GuardSet([TensorMatch.of(x, torch.ones(2))]), "tensor")
    assert cache.lookup({"x": 1}, {}) == "one"
    assert cache.lookup({"x": torch.zeros(2)}, {}) == "tensor"
    assert cache.lookup({"x": 2}, {}) is None
    reasons = cache.miss_reasons({"x": 2}, {})
    assert reasons[0] == ["L['x'] == 1 failed: it is 2"] and "it is an int" in reasons[1][0]
    with pytest.raises(CacheLimitExceeded, match=r"(?s)limit.*entry 0: L\['x'\] == 1 failed: it is 3"):
        cache.add(GuardSet([Equals(x, 3)]), "three", f_locals={"x": 3}, f_globals={})
    assert len(cache) == 2


def test_the_limit_names_a_few_failing_guards_per_entry() -> None:
    """A model whose hundred parameters all changed `requires_grad` made a warning of
    kilobytes: the first five failures of an entry, and how many more."""
    cache: GuardedCache[str] = GuardedCache(limit=1)
    names = [f"p{i}" for i in range(8)]
    cache.add(GuardSet([Equals(LocalSource(n), 0) for n in names]), "zeros")
    with pytest.raises(CacheLimitExceeded) as info:
        cache.add(GuardSet([]), "ones", f_locals=dict.fromkeys(names, 1), f_globals={})
    message = str(info.value)
    assert "L['p4'] == 0 failed" in message and "L['p5']" not in message
    assert message.endswith("; and 3 more")


def test_the_limit_counts_the_entries_made_for_the_same_objects() -> None:
    """Twelve layers, each pinned by identity, compile once each under a limit of 2; a third
    recompilation for one layer, or an entry past the total limit, is refused."""
    cache: GuardedCache[int] = GuardedCache(limit=2, total_limit=14)
    layers = [torch.nn.Linear(1, 1) for _ in range(14)]
    layer, n = LocalSource("layer"), LocalSource("n")
    for i, m in enumerate(layers[:12]):
        cache.add(GuardSet([Identity.of(layer, m), Equals(n, 0)]), i, f_locals={"layer": m, "n": 0})
    assert [cache.lookup({"layer": m, "n": 0}, {}) for m in layers[:12]] == list(range(12))
    cache.add(GuardSet([Identity.of(layer, layers[0]), Equals(n, 1)]), 12,
              f_locals={"layer": layers[0], "n": 1})
    with pytest.raises(CacheLimitExceeded, match=r"(?s)2 entries for these objects.*entry 1: "
                                                 r"L\['n'\] == 1 failed: it is 2"):
        cache.add(GuardSet([Identity.of(layer, layers[0]), Equals(n, 2)]), 13,
                  f_locals={"layer": layers[0], "n": 2})
    cache.add(GuardSet([Identity.of(layer, layers[12])]), 13, f_locals={"layer": layers[12]})
    with pytest.raises(CacheLimitExceeded, match="14 entries, its total limit"):
        cache.add(GuardSet([Identity.of(layer, layers[13])]), 14, f_locals={"layer": layers[13]})


def test_entries_for_objects_that_are_gone_are_dropped() -> None:
    """A new layer per call, each old one freed: its entry can never hold again, so it is
    dropped rather than kept towards the total limit (which stopped compiling for good)."""
    import gc

    cache: GuardedCache[int] = GuardedCache(limit=2, total_limit=3)
    layer = LocalSource("layer")
    for i in range(10):
        m = torch.nn.Linear(1, 1)
        cache.add(GuardSet([Identity.of(layer, m)]), i, f_locals={"layer": m})
        assert cache.lookup({"layer": m}, {}) == i
        del m
        gc.collect()
    assert len(cache) == 1


def test_the_limit_counts_items_of_locals_pinned_by_identity_as_objects_too() -> None:
    """A resume function handed each `(name, module)` pair of `named_children()` in turn: the
    pairs' modules, pinned by identity as items of a local, are other objects."""
    cache: GuardedCache[int] = GuardedCache(limit=2, total_limit=20)
    module = GetItemSource(LocalSource("pair"), 1)
    children = [(str(i), torch.nn.Linear(1, 1)) for i in range(12)]
    for i, pair in enumerate(children):
        cache.add(GuardSet([Identity.of(module, pair[1])]), i, f_locals={"pair": pair})
    assert [cache.lookup({"pair": pair}, {}) for pair in children] == list(range(12))
    cache.add(GuardSet([Identity.of(module, children[0][1]), Equals(LocalSource("n"), 1)]), 12,
              f_locals={"pair": children[0], "n": 1})
    with pytest.raises(CacheLimitExceeded, match="2 entries for these objects"):
        cache.add(GuardSet([Identity.of(module, children[0][1]), Equals(LocalSource("n"), 2)]),
                  13, f_locals={"pair": children[0], "n": 2})


def _agrees_with_sympy(expr, bindings, frames) -> None:
    """The compiled check, explain and sympy give one verdict on each frame."""
    gs = GuardSet([ShapeGuard(expr, bindings)])
    for values in frames:
        t = torch.empty(*values)
        want = bool(expr.subs(dict(zip((s for s, _ in bindings), values))))
        assert gs.check({"a": t}, {}) == want, (expr, values, gs.source)
        assert (gs.explain({"a": t}, {}) == []) == want, (expr, values)


def test_a_guard_on_a_float_made_from_true_division_holds_for_its_own_input() -> None:
    # float(s0 / 3) specialises to 7 / 3, a float that no decimal of 15 digits writes exactly
    gs, _ = _traced_guards(lambda a: a + 1 if float(a.shape[0] / 3) > 2.3 else a, torch.randn(7))
    assert any(g.expr.has(sympy.Float) for g in gs.guards if isinstance(g, ShapeGuard))
    assert gs.check({"a": torch.randn(7)}, {}), gs.source
    assert gs.explain({"a": torch.randn(7)}, {}) == []
    assert not gs.check({"a": torch.randn(8)}, {})
    assert gs.explain({"a": torch.randn(8)}, {})


def test_rationals_are_rendered_as_exact_arithmetic() -> None:
    s0, s1 = sympy.symbols("s0 s1", integer=True, positive=True)
    bindings = ((s0, TensorPropertySource(LocalSource("a"), "size", 0)),
                (s1, TensorPropertySource(LocalSource("a"), "size", 1)))
    third = sympy.Rational(1, 3)
    exprs = [
        sympy.Eq(s0 / 10 + s1 / 10, sympy.Rational(3, 10)),  # 1/10 + 2/10 is not 3/10 in floats
        sympy.Eq(s0 / s1, third), sympy.Eq(1 / s0, sympy.Rational(1, 7)),
        sympy.Eq(third * s0 + third * s1, 4), sympy.Le(s0 / 10 * 3, sympy.Rational(9, 10)),
        sympy.Eq(s0 / 3, sympy.Float(7 / 3)), sympy.Gt(s0 / 10, sympy.Float(0.3)),
        sympy.Eq(sympy.Float(0.1) * s0, sympy.Float(0.1 * 3)),
        sympy.Eq(sympy.Max(s0 / 3, s1 / 2), sympy.Rational(7, 3)),
    ]
    frames = [(a, b) for a in range(1, 13) for b in range(1, 8)]
    for expr in exprs:
        assert any(bool(expr.subs({s0: a, s1: b})) for a, b in frames), expr  # not vacuous
        _agrees_with_sympy(expr, bindings, frames)


def test_math_functions_in_shape_guards_evaluate() -> None:
    import math

    for fn, good, bad in ((lambda a: math.sqrt(a.shape[0]) > 2, 7, 3),
                          (lambda a: torch.sym_sqrt(a.shape[0]) > 2, 7, 3),
                          (lambda a: math.cos(a.shape[0]) > 0, 7, 3),
                          (lambda a: math.log2(a.shape[0]) > 2, 7, 3)):
        def traced(a, fn=fn):
            return a + 1 if fn(a) else a

        gs, _ = _traced_guards(traced, torch.randn(good))
        assert gs.check({"a": torch.randn(good)}, {}), gs.source
        assert gs.explain({"a": torch.randn(good)}, {}) == []
        assert not gs.check({"a": torch.randn(bad)}, {}), gs.source
        assert gs.explain({"a": torch.randn(bad)}, {})
    s0 = sympy.Symbol("s0", integer=True, positive=True)
    binding = ((s0, TensorPropertySource(LocalSource("a"), "size", 0)),)
    for expr in (sympy.Gt(sympy.sin(s0) + sympy.exp(s0 / 10), 1), sympy.Lt(sympy.pi * s0, 10),
                 sympy.Gt(sympy.atan(s0) * sympy.tanh(s0), 1.2), sympy.Gt(s0 ** sympy.Rational(1, 3), 2)):
        _agrees_with_sympy(expr, binding, [(n,) for n in range(1, 12)])


def test_a_function_that_cannot_be_rendered_is_refused_when_the_guard_is_made() -> None:
    s0 = sympy.Symbol("s0", integer=True, positive=True)
    binding = ((s0, TensorPropertySource(LocalSource("a"), "size", 0)),)
    with pytest.raises(ValueError, match="besselj"):
        ShapeGuard(sympy.Gt(sympy.besselj(0, s0), 0), binding)
    with pytest.raises(ValueError, match="mystery"):
        ShapeGuard(sympy.Eq(sympy.Function("mystery")(s0), 1), binding)


def test_a_guard_on_a_float_input_keeps_the_symbol_real() -> None:
    # A float input's symbol is real, not an integer: `Eq(f, 0.25)` must not read as False
    env = fakecore.ShapeEnv()
    f = env.create_symfloat(0.25, fakecore.SizeOrigin(LocalSource("f"), "value"))
    assert float(f) == 0.25  # specialises: a guard `f == 0.25`
    assert bool(f * 2 > 0.3)
    gs = GuardSet(shape_guards(env))
    assert gs.check({"f": 0.25}, {}), gs.source
    assert gs.explain({"f": 0.25}, {}) == []
    assert not gs.check({"f": 0.5}, {})
    assert gs.explain({"f": 0.5}, {})
