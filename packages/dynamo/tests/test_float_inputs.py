"""Float inputs: a constant on the first call, a symbol once seen to change (automatic dynamic),
passed to the graph as a 0-d float64 tensor read back with `.item()`, as torch's frontend does."""

from __future__ import annotations

import math

import pytest
import torch
from counting import counting_backend

import dynamo


def _same(a, b) -> bool:
    if isinstance(a, torch.Tensor):
        return a.dtype == b.dtype and torch.allclose(a, b, equal_nan=True)
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(map(_same, a, b))
    return type(a) is type(b) and a == b


def _check(fn, values, **options):
    compiled = dynamo.compile(fn, backend="eager", **options)
    for value in values:
        x = torch.randn(4)
        assert _same(compiled(x, value), fn(x, value)), value
    return compiled


def test_a_float_that_changes_becomes_a_graph_input_read_with_item() -> None:
    backend, graphs = counting_backend("eager")

    def fn(x, temperature):
        return torch.softmax(x / temperature, -1) * temperature

    compiled = dynamo.compile(fn, backend=backend)
    for value in (0.5, 0.7, 1.3, 2.0, 0.1):
        x = torch.randn(4)
        torch.testing.assert_close(compiled(x, value), fn(x, value))
    assert len(graphs) == 2  # the first call's constant, then one graph for every value
    placeholders = [n for n in graphs[1].graph.nodes if n.op == "placeholder"]
    assert len(placeholders) == 2
    assert any(n.op == "call_method" and n.target == "item" for n in graphs[1].graph.nodes)
    assert not any(n.op == "call_method" and n.target == "item" for n in graphs[0].graph.nodes)


def test_a_branch_on_a_float_symbol_is_guarded_and_both_sides_run() -> None:
    def fn(x, s):
        y = x * s + 1
        if s > 0.6:
            y = y * 2
        return y, torch.full((2,), s), math.sqrt(s) * x

    compiled = _check(fn, [0.5, 0.7, 0.9, 1.3, 0.2, 0.3, 0.65])
    assert len(compiled.cache.entries) == 3  # 0.5; then s > 0.6; then s <= 0.6


def test_uses_that_need_the_value_specialise_and_stay_correct() -> None:
    cases = [
        lambda x, s: (x + 1, f"{s:.2f}", str(s), s.is_integer()),
        lambda x, s: x * int(s * 10) + round(s, 1),
        lambda x, s: x * {0.5: 1, 0.25: 2, 0.75: 3, 1.5: 4}[s],  # a dict key: not truncated
        lambda x, s: x * (1 if s else 0),  # truth is `s != 0`
        lambda x, s: x * max(s, 0.3) + min(s, 0.6) + abs(-s) + s ** 2 + 2 ** s,
        lambda x, s: x * (s // 0.3) + (s % 0.3) + divmod(s, 0.2)[0] + 3 / s,
        lambda x, s: torch.tensor([s, 1.0]).sum() + torch.tensor(s) * x,
        lambda x, s: [x, s, [s * 2]],
    ]
    for fn in cases:
        _check(fn, [0.5, 0.25, 0.75, 1.5, 0.25, 0.0][: 6 if fn is cases[3] else 5])


def test_a_float_used_where_python_needs_an_int_raises_as_python_does() -> None:
    def fn(x, s):
        try:
            return x * [1, 2, 3][s]
        except TypeError:
            return x - 1

    _check(fn, [0.5, 0.25, 1.5])


def test_a_float_attribute_that_changes_is_a_symbol_too() -> None:
    class Scaled(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.scale = 1.0

        def forward(self, x):
            return x * self.scale

    model = Scaled()
    backend, graphs = counting_backend("eager")
    compiled = dynamo.compile(model, backend=backend)
    for step in range(5):
        model.scale = 1.0 / (step + 1)
        x = torch.randn(3)
        torch.testing.assert_close(compiled(x), x * model.scale)
    assert len(graphs) == 2


@pytest.mark.parametrize("dynamic", [False, True])
def test_floats_follow_the_dynamic_option(dynamic: bool) -> None:
    # dynamic=False: every value is a constant; dynamic=True marks sizes, not floats: as
    # with None, a float becomes a symbol once it changes
    compiled = _check(lambda x, s: x * s, [0.5, 0.25, 0.75], dynamic=dynamic)
    assert len(compiled.cache.entries) == (2 if dynamic else 3)


def test_non_finite_floats_stay_constants() -> None:
    compiled = _check(lambda x, s: x * s, [0.5, math.inf, 0.25, math.nan, 1e300, 5e-324])
    assert len(compiled.cache.entries) == 4  # 0.5, inf, nan; a symbol for the finite rest


def test_a_symbolic_entry_is_for_finite_floats_only() -> None:
    def fn(x, s):
        if s != s:  # a NaN check: decided False for every finite float
            return x * 0
        return x + (s - s)

    compiled = _check(fn, [0.5, 0.25, math.nan, math.inf, -math.inf, 0.75])
    assert any("is a finite float" in g.describe() for guards, _ in compiled.cache.entries
               for g in guards)


def test_float_division_is_not_folded_and_zeros_keep_their_sign() -> None:
    def divides(x, s):
        try:
            return x * (s / s)  # 0.0 / 0.0 raises
        except ZeroDivisionError:
            return x - 1

    _check(divides, [0.5, 0.25, 0.0, 2.0])
    _check(lambda x, s: (x * s, f"{s}"), [0.5, 0.25, 0.0, -0.0, -1.5])


def test_a_specialised_float_reaches_the_backend_as_a_constant() -> None:
    import warnings

    import torch.nn.functional as F

    backend, graphs = counting_backend("aot_eager")
    compiled = dynamo.compile(lambda x, eps: F.layer_norm(x, (4,), eps=eps), backend=backend)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a backend that failed would warn
        for eps in (1e-5, 2e-5, 3e-5):
            x = torch.randn(2, 4)
            torch.testing.assert_close(compiled(x, eps), F.layer_norm(x, (4,), eps=eps))
    assert not any(n.op == "call_method" and n.target == "item"
                   for gm in graphs for n in gm.graph.nodes)


def test_a_float_specialised_in_a_frame_with_no_tensor_work_reaches_the_break() -> None:
    """Formatting pins the symbolic float; the graph then has no tensor work, but the value it
    hands to the break (the list for `statistics.mean`) is one of its outputs: it is kept."""
    import statistics

    def f(x, v):
        return f"{v:.2f}", statistics.mean([v, 1.0])

    dynamo.reset()
    compiled = dynamo.compile(f)
    for v in (1.5, 2.0, 3.25):  # the second call makes `v` a symbol
        assert compiled(torch.ones(1), v) == f(torch.ones(1), v)


def test_aot_eager_lowers_ops_that_decide_on_a_float_symbol() -> None:
    """The lowering reads the float's own symbol from its tensor (not a value it cannot know),
    so decompositions that branch on it add guards instead of failing into eager."""
    import warnings

    import torch.nn.functional as F

    def f(x, p):
        return (F.hardtanh(x, -p, p), torch.addmm(x[:2, :2], x[:2, :2], x[:2, :2], beta=p),
                torch.arange(0.0, 3.0, p) * 2, torch.linalg.vector_norm(x, p + 1))

    dynamo.reset()
    compiled = dynamo.compile(f, backend="aot_eager")
    x = torch.randn(3, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no backend failure
        for p in (0.5, 0.7, 1.1, 0.3, 2.5):
            for got, want in zip(compiled(x, p), f(x, p)):
                torch.testing.assert_close(got, want)


def test_floor_of_an_int_times_a_float_is_pythons_past_exact_floats() -> None:
    """`floor(1.5 * n)` is the integer `(3 * n) // 2` only while float64 computes `n * 1.5`
    exactly: past 2**53 Python's product rounds (2**60 + 1 gives an even floor)."""
    def parity(x, n):
        return x + 1 if math.floor(n * 1.5) % 2 == 0 else x - 1

    compiled = dynamo.compile(parity, dynamic=True)
    for n in (4, 6, 7, 2**60 + 1):
        torch.testing.assert_close(compiled(torch.zeros(1), n), parity(torch.zeros(1), n))


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_float_algebra_that_simplifies_to_a_number_is_computed_by_every_backend(
        backend) -> None:
    """`s * 2 - s - s` and `s * 0` of a float symbol are 0 to sympy, not to IEEE arithmetic
    (1e308 * 2 is inf, -3.0 * 0 is -0.0): make_fx wrote the constant 0.0 in the aten graph
    (aot_eager; inductor_lite: integration_tests/test_inductor_lite.py)."""

    def f(x, s):
        b = s * 2 - s - s
        z = s * 0
        return x * b + z, b, z

    dynamo.reset()
    compiled = dynamo.compile(f, backend=backend)
    x = torch.ones(2)
    for s in (1.5, 2.5, 1e308, -3.0):
        got, want = compiled(x, s), f(x, s)
        torch.testing.assert_close(got[0], want[0], equal_nan=True)
        assert [(type(v), math.copysign(1, v), v) for v in got[1:]] == \
            [(type(v), math.copysign(1, v), v) for v in want[1:]], s


_BASE = [-2.0]


def test_a_negative_float_specialised_late_is_the_base_of_a_power() -> None:
    """A float input pinned to a negative value by a later use (`base ** n` of a size) is a
    constant of the graph, written into its uses at the end: FX printed `pow(-3.0, y)` as
    `-3.0 ** y`, which Python reads as `-(3.0 ** y)` (found by the stale-answer fuzzer)."""
    def f(x):
        base = _BASE[0]
        return x * base ** x.round(), base ** x.shape[0]

    compiled = dynamo.compile(f, backend="eager", dynamic=True)
    x = torch.tensor([1.0, 2.0, 3.0])
    for value in (-2.0, 2.0, -3.0):
        _BASE[0] = value
        got, want = compiled(x), f(x)
        assert torch.equal(got[0], want[0]) and got[1] == want[1], value
