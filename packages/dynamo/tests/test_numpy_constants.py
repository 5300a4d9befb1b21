"""numpy numbers in compiled code: a ufunc or numpy number type called on numbers is computed
while tracing (`np.sqrt(d)`: a constant of the graph, guarded as `d` is); a numpy scalar given
to a tensor op acts as in eager (the Python number torch reads it as); arrays, `np.random`,
`out=` still break the graph."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import dynamo


def _explain(fn, *args):
    return dynamo.explain(fn)(*args)


def _same(got, expected) -> None:
    assert type(got) is type(expected), (got, expected)
    if isinstance(expected, tuple):
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            _same(g, e)
    elif isinstance(expected, torch.Tensor):
        assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
        torch.testing.assert_close(got, expected, equal_nan=True)
        assert torch.equal(got.signbit(), expected.signbit())  # (a zero's sign)
    else:
        assert got == expected, (got, expected)


def _check(fn, *calls):
    """Compiled and eager agree (value, dtype, type) on each call; the compiled function."""
    compiled = dynamo.compile(fn, backend="eager")
    for args in calls:
        _same(compiled(*args), fn(*args))
    return compiled


def test_ufunc_of_a_config_int_is_one_graph() -> None:
    def f(x, d):  # HF CTRL: `inputs_embeds *= np.sqrt(self.d_model_size)`
        x = x * 1
        x *= np.sqrt(d)
        return x + 1

    x = torch.randn(3)
    report = _explain(f, x, 64)
    assert report.graph_count == 1 and len(report.breaks) == 0, report
    _check(f, (x, 64), (x, 9))


def test_ufuncs_and_number_types_on_constants() -> None:
    def f(x, k):
        a = np.log(2.0) + np.exp(k) + np.sqrt(64)
        b = np.float32(3) / 7  # float32 arithmetic, as numpy does it
        return x * a + b, type(a).__name__, float(b)

    x = torch.randn(4)
    report = _explain(f, x, 2)
    assert len(report.breaks) == 0, report
    _check(f, (x, 2), (x, 3))


def test_a_folded_result_keeps_its_numpy_type() -> None:
    def f(x, d):
        s = np.sqrt(d)
        return x + 1, s, isinstance(s, np.float64), np.int64(d) * 2

    _check(f, (torch.ones(2), 16), (torch.ones(2), 25))


@pytest.mark.parametrize("dtype", [torch.float16, torch.int32, torch.bool, torch.float32])
@pytest.mark.parametrize("scalar", [np.float64(2.5), np.float32(2.5), np.int64(3), np.bool_(True),
                                    np.float16(1.5), np.int32(2), np.uint8(7)])
def test_numpy_scalar_operands_promote_as_in_eager(dtype, scalar) -> None:
    def f(x, s):
        return x * s, s + x, torch.where(x > 0, x, s), torch.full((2,), s)

    x = torch.ones(3, dtype=dtype)
    _check(f, (x, scalar))
    report = _explain(f, x, scalar)
    assert len(report.breaks) == 0, report


def test_numpy_scalar_from_a_module_attribute_and_a_global() -> None:
    class M(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.scale = np.float64(0.125)

        def forward(self, x):
            return x.half() * self.scale * SCALE

    m, x = M(), torch.randn(3)
    compiled = dynamo.compile(m, backend="eager")
    torch.testing.assert_close(compiled(x), m(x))
    assert compiled(x).dtype == torch.float16
    m.scale = np.float64(4.0)  # guarded by value: recompiled, not stale
    torch.testing.assert_close(compiled(x), m(x))


SCALE = np.float32(3.0)


def test_torch_tensor_of_numpy_scalars_keeps_their_dtype() -> None:
    def f(a, b):
        return torch.tensor(a), torch.tensor([a, 1.0]), torch.as_tensor(b), torch.tensor(b + 1)

    _check(f, (np.float64(2.0), np.int32(3)), (np.float32(2.0), np.bool_(True)))


def test_changed_input_of_a_fold_recompiles() -> None:
    def f(x, d):
        return x * np.sqrt(d)

    x = torch.ones(2)
    _check(f, (x, 4), (x, 9), (x, np.int64(16)), (x, np.float64(25.0)))


def test_other_numpy_still_breaks() -> None:
    def arrays(x):
        return x * np.sqrt(np.array([1.0, 4.0, 9.0])).sum()

    def rand(x):
        return x * np.random.rand()

    def out(x, a):
        np.sqrt(a, out=a)
        return x + 1

    def warns(x):  # numpy would warn: called for real, as eager
        return x * np.log(0.0)

    x = torch.ones(3)
    for fn, args in [(arrays, (x,)), (rand, (x,)), (out, (x, np.ones(2))), (warns, (x,))]:
        assert _explain(fn, *args).breaks, fn.__name__
    _check(arrays, (x,))
    np.random.seed(0)
    got = dynamo.compile(rand, backend="eager")(x)
    np.random.seed(0)
    torch.testing.assert_close(got, rand(x))
    a, b = np.full(2, 4.0), np.full(2, 4.0)
    dynamo.compile(out, backend="eager")(x, a)
    out(x, b)
    assert (a == b).all() and a[0] == 2.0
    with np.errstate(divide="ignore"):
        _check(warns, (x,))


def test_nan_and_zero_numpy_floats_stay_right() -> None:
    def f(x, s):
        return x * s

    x = torch.ones(2)
    _check(f, (x, np.float64(0.0)), (x, np.float64(-0.0)), (x, np.float64("nan")),
           (x, np.float64("nan")))


def test_a_symbolic_size_with_a_numpy_scalar_is_numpys_arithmetic() -> None:
    """`x.shape[0] * np.int8(100)` wraps in eager (numpy's int8) and gives a numpy number: with
    the size a symbol, the step runs for real rather than as Python arithmetic in the graph."""
    def f(x, s):
        return x.shape[0] * s

    x = torch.randn(4, 6)
    for s in (np.int8(100), np.float32(0.1), np.float64(0.5)):
        dynamo.reset()
        got, want = dynamo.compile(f, backend="eager", dynamic=True)(x, s), f(x, s)
        assert type(got) is type(want) and got == want


def test_a_c_method_of_an_array_is_named_as_one_in_the_break() -> None:
    report = dynamo.explain(lambda x, a: x + len(a))(torch.ones(2), np.ones(3))
    assert [b.reason for b in report.breaks] == ["the method ndarray.__len__, written in C"]


def test_numpy_scalar_arithmetic_numpy_would_warn_on_runs_for_real() -> None:
    """`np.float64(1.0) / np.float64(0.0)` was computed once while tracing: its warning came on
    the first call only, and a later `np.seterr(divide="raise")` was not seen (a stale 2.0)."""
    def f(x):
        return x + float(np.float64(1.0) / np.float64(0.0) == np.inf)

    compiled = dynamo.compile(f, backend="eager")
    for _ in range(2):
        with pytest.warns(RuntimeWarning, match="divide by zero"):
            assert torch.equal(compiled(torch.ones(1)), f(torch.ones(1)))
    with np.errstate(divide="raise"), pytest.raises(FloatingPointError):
        compiled(torch.ones(1))


def test_numpy_scalar_underflow_numpy_ignores_stays_in_the_graph() -> None:
    f = lambda x: x * (np.float32(1e-30) * np.float32(1e-30))  # noqa: E731
    assert torch.equal(dynamo.compile(f, backend="eager", fullgraph=True)(torch.ones(3)),
                       f(torch.ones(3)))


def test_numpy_ufunc_underflow_numpy_ignores_stays_in_the_graph() -> None:
    """`np.exp(np.float32(-200))` underflows to 0.0, which numpy ignores by default: the ufunc
    path raised on it and broke the graph."""
    f = lambda x: x + np.exp(np.float32(-200.0))  # noqa: E731
    assert torch.equal(dynamo.compile(f, backend="eager", fullgraph=True)(torch.ones(3)),
                       f(torch.ones(3)))
