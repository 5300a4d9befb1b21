"""Symbolic scalars (float/int arguments made symbols, `.item()` under capture_scalar_outputs,
sizes under dynamic=True) against eager: the cases a differential fuzzer of them found."""

import math
import warnings

import pytest
import torch
from counting import counting_backend

import dynamo


def _run(fn, *args):
    try:
        return "ok", fn(*args)
    except Exception as error:  # noqa: BLE001
        return "raised", type(error)


def _same(fn, calls, **options):
    compiled = dynamo.compile(fn, capture_scalar_outputs=True, **options)
    for args in calls:
        expected, got = _run(fn, *args), _run(compiled, *args)
        assert expected[0] == got[0], (args, expected, got)
        if expected[0] == "raised":
            assert expected[1] is got[1], (args, expected, got)
        elif isinstance(expected[1], torch.Tensor):
            torch.testing.assert_close(got[1], expected[1], equal_nan=True, rtol=0, atol=0)
        else:
            assert repr(got[1]) == repr(expected[1]), (args, expected, got)


@pytest.mark.parametrize("cond", [
    lambda v: v < math.inf, lambda v: v > -math.inf, lambda v: v >= -math.inf,
    lambda v: v <= math.inf,
])
def test_item_compared_with_an_infinity_is_not_decided(cond):
    # sympy's real symbols are finite: `v < oo` was decided True, NaN and inf say False
    def f(x):
        return x * (3.0 if cond(x.max().item()) else 2.0)

    _same(f, [(torch.tensor([1.0, math.nan]),), (torch.tensor([math.inf]),),
              (torch.tensor([-math.inf]),), (torch.tensor([1.0, 2.0]),)])


def test_sym_ite_of_an_item_compared_under_a_float_argument():
    # `sym_ite(a < 2.0, u0, s0) == s0 - 1` was guarded as is: a shape guard on u0 raised
    # ValueError from the call ("uses [u0], which no input size binds")
    def f(x, a, b):
        i0 = b - 1
        i1 = torch.sym_ite(a < 2.0, x.long().min().item(), b)
        return x * 2 if i1 == i0 else x * 3

    _same(f, [(torch.tensor([3.0, 4.0, 5.0]), 1.5, 2), (torch.tensor([3.0, 4.0]), 2.5, 3),
              (torch.tensor([3.0, 4.0]), 1.0, 3), (torch.tensor([1.0, 4.0]), 0.5, 2)],
          dynamic=True)


def test_item_checked_equal_to_a_float_argument():
    # `torch._check(u0 == n)` replaced the input's symbol by the data's: every later guard
    # on n was one on u0 (ValueError from the call)
    def f(x, n):
        torch._check(x.long().max().item() == n)
        return x * 2 if n > 2 else x * 3

    calls = [(torch.tensor([0.0, n]), n) for n in (3.0, 4.0, 1.0)]
    _same(f, calls + [(torch.tensor([0.0, 5.0]), 4.0)])


@pytest.mark.parametrize("zero", [0, 0.0])
def test_item_divided_by_a_constant_zero_raises(zero):
    # sympy's Float(0.0) != 0: `v // 0.0`, `v % 0.0`, `v / 0.0` of an `.item()` v (and
    # `v // 0`, which divides by 0.0) traced silently, eager raises ZeroDivisionError
    def unused(x, k):
        w = x.mean().item() // k  # noqa: F841
        return x + 1

    def checked(x, k):
        torch._check(x.mean().item() % k >= -100)
        return x + 1

    for f in (unused, checked):
        _same(f, [(torch.tensor([1.0, 2.0]), zero)])


def test_runtime_assert_of_floor_pow_and_sym_ite_is_checked():
    # a check over `v // n`, `v ** v`, `sym_ite(...)` of an `.item()` was left out of the
    # graph with a warning: eager's RuntimeError (or ZeroDivisionError) was lost
    def floor_div(x, n):
        torch._check(x.mean().item() // n >= -100)
        return x + 1

    def power(x, n):
        v = x.sum().item()
        torch._check(v ** v >= 1e16)
        return x + 1

    def ite(x, n):
        v = x.sum().item()
        torch._check(torch.sym_ite(n > 2, v, -v) >= 0)
        return x + 1

    _same(floor_div, [(torch.tensor([1.0, 2.0]), 2), (torch.tensor([1.0, 2.0]), 3),
                      (torch.tensor([-1000.0, -1000.0]), 2), (torch.tensor([1.0, 2.0]), 0)])
    _same(power, [(torch.tensor([3.0, 2.0]), 1), (torch.tensor([30.0, 2.0]), 1)])
    _same(ite, [(torch.tensor([3.0, 2.0]), 3), (torch.tensor([3.0, 2.0]), 4),
                (torch.tensor([-3.0, 2.0]), 5), (torch.tensor([-3.0, 2.0]), 1)])


def test_item_checked_equal_to_an_input_size_is_that_size():
    # `torch._check(n == x.shape[0])` of an int `.item()`: n is the input's size from then on
    # (u0 -> s0, as in torch), so a branch on n is a guard on s0, not a break
    def f(x, t):
        n = t.item()
        torch._check(n == x.shape[0])
        return x * 2 if n > 2 else x * 3

    compiled = dynamo.compile(f, capture_scalar_outputs=True, dynamic=True, fullgraph=True)
    for size, value in ((5, 5), (7, 7), (2, 2)):
        x = torch.randn(size)
        torch.testing.assert_close(compiled(x, torch.tensor(value)), f(x, torch.tensor(value)))
    with pytest.raises(RuntimeError):
        compiled(torch.randn(6), torch.tensor(4))


def test_runtime_assert_of_an_infinity_and_of_a_square_root_is_checked():
    # `v < math.inf` was written with `oo`, which had no graph value (the check was dropped);
    # `math.sqrt(v)` of a negative v raises ValueError, where `v ** 0.5` is complex
    def below_inf(x):
        torch._check(x.sum().item() < math.inf)
        return x + 1

    def root(x):
        torch._check(math.sqrt(x.sum().item()) != 5)
        return x + 1

    for backend in ("eager", "aot_eager"):
        _same(below_inf, [(torch.tensor([1.0, 2.0]),), (torch.tensor([math.inf, 2.0]),)],
              backend=backend)
        _same(root, [(torch.tensor([1.0, 2.0]),), (torch.tensor([-3.0, 2.0]),)],
              backend=backend)


def test_runtime_assert_of_a_log_log2_or_exp_is_checked():
    # a check over `math.log2(v)` of an `.item()` was left out of the graph with a warning,
    # and `math.log(v)`, `math.exp(v)` broke the graph: eager's RuntimeError, and its
    # ValueError (log of a negative) or OverflowError (exp of 1000), were lost
    def log(x):
        torch._check(math.log(x.sum().item()) > 0)
        return x + 1

    def log2(x):  # computed as eager does: log2(8) < 3 fails, log(8) / log(2) < 3 holds
        torch._check(math.log2(x.sum().item()) < 3)
        return x + 1

    def scaled_log2(x):
        v = x.sum().item()
        torch._check(2.0 / math.log2(v) + math.log(v) * math.log2(v) ** 2 < 12)
        return x + 1

    def exp(x):
        torch._check(math.exp(x.sum().item()) < 10)
        return x + 1

    def exp_of_log(x):  # not simplified to v: eager's ValueError for a negative v
        torch._check(math.exp(math.log(x.sum().item())) < 5)
        return x + 1

    def of_an_int(x):
        torch._check(math.log(x.sum().item()) > 1)
        return x + 1

    t = torch.tensor
    for backend in ("eager", "aot_eager"):
        _same(log, [(t([1.0, 2.0]),), (t([0.25, 0.25]),), (t([-3.0, 2.0]),), (t([0.0]),)],
              backend=backend, fullgraph=True)
        _same(log2, [(t([3.0, 4.0]),), (t([4.0, 4.0]),), (t([-3.0, 2.0]),)],
              backend=backend, fullgraph=True)
        _same(scaled_log2, [(t([3.0, 1.0]),), (t([8.0]),), (t([16.0]),), (t([1.0]),)],
              backend=backend, fullgraph=True)
        _same(exp, [(t([1.0, 1.0]),), (t([-100.0]),), (t([3.0]),), (t([1000.0]),)],
              backend=backend, fullgraph=True)
        _same(exp_of_log, [(t([1.0, 1.0]),), (t([6.0]),), (t([-1.0]),)],
              backend=backend, fullgraph=True)
        _same(of_an_int, [(t([3]),), (t([2]),), (t([-1]),)], backend=backend, fullgraph=True)


def test_log_and_exp_of_a_size_are_symbolic():
    # `math.log(n)`, `math.exp(n)` of a size: one graph for every size, as `math.log2(n)`
    def f(x):
        return x * math.log(x.shape[0]) + math.exp(x.shape[0] / 8)

    backend, graphs = counting_backend("aot_eager")
    compiled = dynamo.compile(f, backend=backend, dynamic=True, fullgraph=True)
    for n in (3, 4, 9):
        x = torch.randn(n)
        torch.testing.assert_close(compiled(x), f(x), rtol=0, atol=0)
    assert len(graphs) == 1




def _calls(fn, calls, **kw):
    c = dynamo.compile(fn, backend="eager", **kw)
    for args in calls:
        expected, got = fn(*args), c(*args)
        assert repr(expected) == repr(got), (args[1:], expected, got)


def test_copysign_of_a_mod_that_is_minus_zero():
    # 3.0 % -0.75 is -0.0: sympy's zero had no sign, so x was not negated
    def f(x, a):
        return x * math.copysign(1.0, 3.0 % a)
    x = torch.tensor([1.0, 2.0])
    _calls(f, [(x, a) for a in (2.25, 1.3, 0.3, -0.75, 0.75, -0.75)])


def test_str_of_a_zero_pins_its_symbols():
    def f(x, n):
        return x + 1, str(-0.0 / n), math.copysign(1.0, -0.0 - n // 10)
    x = torch.ones(2)
    _calls(f, [(x, n) for n in (3, 4, -2, 4, 2, -3)])


def test_round_result_is_a_number_with_operations():
    # round(a, 1) of a float symbol: a constant SymFloat whose operations raised an internal
    # AssertionError in torch's operators (a graph break), and whose -0.0 was read as 0.0
    def f(x, a):
        r = round(a, 1)
        return (x * (r - 0.5), r < 1.0, r * 2, -r, abs(r), r // 1, r % 1, str(r), int(r),
                math.copysign(1.0, r), math.copysign(1.0, round(a, 0) - 0.0), r + a)
    x = torch.ones(2)
    _calls(f, [(x, a) for a in (1.25, 2.25, -0.25, -0.04, 0.04)], fullgraph=True)


def test_sym_ite_of_a_size_made_float_in_a_runtime_assert():
    # the assert's Piecewise((s0, c), (zf0, True)) was built as torch.sym_ite(c, SymInt,
    # SymFloat): an AssertionError raised to the caller while compiling
    def f(x, a, b):
        if x.numel() ** 2 < a:
            return 0.0
        return torch.sym_ite(torch.sym_max(b, int(x.sum())) == int(float(x.shape[0]) == 2),
                             float(x.shape[0]), a) ** 3
    calls = [(torch.tensor([[1, 4], [2, 0], [0, 5]]), -0.75, -1), (torch.tensor([[-1]]), 0.25, 6),
             (torch.tensor([[-1, -2], [-3, 1], [4, 2], [-1, -2]]), 1.5, -1)]
    _calls(f, calls, dynamic=True, capture_scalar_outputs=True)


def test_aot_eager_keeps_the_sign_of_a_rounded_zero():
    # fxtrace wrote the number round() made as sympy's 0 (x * 0.0 where eager has x * -0.0)
    def g(x, a):
        return x * round(math.sin(a), -1)
    c = dynamo.compile(g, backend="aot_eager")
    for a in (0.3, 3.25, -0.75, 0.75):
        x = torch.ones(2)
        assert g(x, a).signbit().tolist() == c(x, a).signbit().tolist(), a


def test_a_bool_item_compared_with_a_bool_is_a_condition():
    # `b == False` of a bool `.item()` was sympy's Eq of a condition, whose evaluation raised a
    # TypeError: a graph break with an internal reason, where it is one graph with a check
    def check(x):
        b = (x > 0).any().item()
        torch._check(b == False)  # noqa: E712
        torch._check(b != True)  # noqa: E712
        return x + 1

    def value(x):
        b = (x > 0).any().item()
        return torch.tensor(b == False), x + 1  # noqa: E712

    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    for fn in (check, value):
        graphs.clear()
        compiled = dynamo.compile(fn, backend=backend, capture_scalar_outputs=True)
        for x in (-torch.ones(2), torch.ones(2), torch.tensor([-1.0, 2.0])):
            expected, got = _run(fn, x), _run(compiled, x)
            assert repr(expected) == repr(got), (fn.__name__, x, expected, got)
        assert len(graphs) == 1, fn.__name__


def test_a_symbolic_bool_with_a_float_in_a_bitwise_op_raises_as_python():
    """`(n > 3) | 2.0` is Python's TypeError (torch's SymBool `|` is logical: it gave 2.0)."""
    def fn(x):
        return x + 1, (x.shape[0] > 3) | 2.0

    _same(fn, [(torch.zeros(2),), (torch.zeros(5),)], dynamic=True)


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_a_check_that_fixes_an_item_is_checked_by_aot_eager_too(backend):
    """`torch._check(n.item() == 2)` or `stack([zeros(n.item()), ones(2)])` teach the
    ShapeEnv u0 -> 2; aot_eager's second trace read the fake's memoized u0 as 2, and its aten
    graph checked nothing: n = 3 returned a value where eager raises."""
    def checked(x, n):
        torch._check(n.item() == 2)
        return x[:n.item()] * 2

    def stacked(x, n):
        return torch.stack([torch.zeros(n.item()), torch.ones(2)]) + x[:2]

    x = torch.arange(6.0)
    for fn in (checked, stacked):
        _same(fn, [(x, torch.tensor(2)), (x, torch.tensor(3)), (x, torch.tensor(2))],
              backend=backend)


@pytest.mark.parametrize("value", [
    lambda a, b: math.sqrt(2 * a * b), lambda a, b: math.sqrt(a / b), lambda a, b: (a * b) ** 0.5,
    lambda a, b: math.sqrt(a) ** 2, lambda a, b: 0.1 * a + 0.2 * a, lambda a, b: math.sqrt(9 * a),
])
def test_a_float_of_sizes_made_a_python_number_holds_its_own_guards(value):
    # `hash(math.sqrt(2 * x.numel()))` was guarded as `math.sqrt(2)*math.sqrt(s0)*math.sqrt(s1)
    # == 4.898979485566356`, sympy's rewrite, which is 4.898979485566357 in floats: the new
    # compilation failed its own guards (a warning; the call ran eagerly). The sizes are pinned.
    def f(x):
        return x * 1.0, hash(value(x.shape[0], x.shape[1]))

    compiled = dynamo.compile(f, backend="eager", dynamic=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for shape in [(3, 4), (2, 3), (5, 3), (3, 4), (2, 7)]:
            x = torch.randn(shape)
            assert compiled(x)[1] == f(x)[1]


def test_a_negative_zero_to_the_power_of_a_size_keeps_its_sign():
    # sympy made `(-0.0) ** s0` its unsigned 0, dropping s0: +0.0 where Python gives -0.0 at
    # odd s0 (stale-fuzzer seed 41396). The size is pinned and Python's zero kept; a zero of
    # non-negative operands (`0.0 * s1`) is +0.0 for every size and pins nothing.
    def f(x, base):
        return x * 1.0, [base ** x.shape[0], 0.0 * x.shape[1]]

    compiled = dynamo.compile(f, backend="eager", dynamic=True)
    for shape in [(3, 4), (2, 4), (5, 6), (4, 7), (3, 5)]:
        x = torch.randn(shape)
        got, expected = compiled(x, -0.0)[1], f(x, -0.0)[1]
        assert [math.copysign(1.0, v) for v in got] == [math.copysign(1.0, v) for v in expected]
