"""Debugging and assertion code inside compiled functions behaves as in eager."""
import math

import pytest
import torch
from counting import counting_backend
from torch.profiler import ProfilerActivity, profile, schedule

import dynamo


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_assert_async_is_not_dead_code(backend):
    def f(x):
        torch._assert_async(x.sum() > -100)
        torch._assert_async(x.sum() > -100, "too small")
        return x + 1

    compiled = dynamo.compile(f, backend=backend)
    compiled(torch.zeros(2))
    with pytest.raises(RuntimeError):
        compiled(torch.zeros(2) - 1000)


def test_torch_objects_bound_method_from_frame_is_followed():
    # a profiler's `step` kept as a callback: it ran only while tracing (dropped as dead code)
    prof = profile(activities=[ProfilerActivity.CPU], schedule=schedule(wait=1, warmup=1, active=1))
    callbacks = [prof.step]

    def f(x):
        for cb in callbacks:
            cb()
        return x + 1

    compiled = dynamo.compile(f, backend="eager")
    prof.start()
    for _ in range(4):
        compiled(torch.ones(2))
    prof.stop()
    assert prof.step_num == 4

    # a DataLoader iterator's `__next__`: a graph node, it consumed a batch while tracing
    ds = torch.utils.data.TensorDataset(torch.arange(10.).reshape(5, 2))
    nxt = iter(torch.utils.data.DataLoader(ds, batch_size=1)).__next__

    def g(x):
        (b,) = nxt()
        return x + b

    compiled = dynamo.compile(g, backend="eager")
    assert [compiled(torch.zeros(1, 2)).tolist() for _ in range(2)] == [[[0., 1.]], [[2., 3.]]]


def test_torch_block_left_open_by_a_break_does_not_recompile():
    # its `__exit__`, a new bound method each call, was guarded by identity: a recompilation of
    # the resume function on every call
    def f(x):
        with torch.autograd.detect_anomaly(check_nan=True):
            y = (x * 2).sin().sum()
        return y

    backend, graphs = counting_backend("eager")
    compiled = dynamo.compile(f, backend=backend)
    x = torch.randn(3, requires_grad=True)
    compiled(x)
    compiled(x)
    count = len(graphs)
    for _ in range(3):
        assert torch.equal(compiled(x), f(x))
    assert len(graphs) == count
    assert not torch.is_anomaly_enabled()


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_algebra_of_symbolic_floats_keeps_nan(backend):
    # (aot_eager's make_fx wrote the constant 0.0 and 1.0 in its graph; inductor_lite:
    # integration_tests/test_inductor_lite.py)
    def f(x):
        v = x.item()
        return torch.ones(1) * (v - v), torch.ones(1) * (0 * v + 1)

    compiled = dynamo.compile(f, backend=backend, capture_scalar_outputs=True)
    compiled(torch.tensor(1.0))
    a, b = compiled(torch.tensor(float("nan")))
    assert a.isnan().all() and b.isnan().all()


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_comparisons_of_algebra_of_symbolic_floats_are_not_decided_while_tracing(backend):
    # `v * 0 <= 0`, `v - v == 0` are sympy's `0 <= 0`, `0 == 0`, but False for NaN and inf:
    # decided True while tracing, a NaN took the first branch, passed the check, gave True
    # (inductor_lite: integration_tests/test_inductor_lite.py)
    def branch(x):
        v = x.sum().item()
        return x + 1 if v * 0 <= 0 else x - 1

    def check(x):
        v = x.sum().item()
        torch._check(v - v == 0)
        return x + 1

    def value(x):
        v = x.sum().item()
        return x * torch.tensor(v * 0 != 0), (v + 1) - v < 2

    def outcome(fn, x):
        try:
            return fn(x)
        except RuntimeError as error:
            return type(error)

    for fn in (branch, check, value):
        counting, graphs = counting_backend(backend)
        compiled = dynamo.compile(fn, backend=counting, capture_scalar_outputs=True)
        counts = []
        for _ in range(2):
            for x in ([1.0, 2.0], [float("nan"), 1.0], [float("inf"), 1.0], [-3.0, 1.0]):
                got, want = outcome(compiled, torch.tensor(x)), outcome(fn, torch.tensor(x))
                assert repr(got) == repr(want), (fn.__name__, x)
            counts.append(len(graphs))
        assert counts[0] == counts[1], fn.__name__  # nothing recompiled


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_a_check_that_pins_an_item_or_checks_a_bool_item_is_kept(backend):
    # `torch._check(n == 3)` teaches the ShapeEnv u0 -> 3, and the `.item()` node's value
    # printed as 3 bound no u0: the check was left out; a bool `.item()` (`Eq(u0, 1)`) bound
    # no symbol either
    def pinned(x, i):
        n = i.max().item()
        torch._check(n == 3)
        return x * n

    def flag(x):
        b = (x > 0).any().item()
        torch._check(b)
        return x + 1

    for fn, good, bad in ((pinned, (torch.ones(2), torch.tensor([3, 1])),
                           (torch.ones(2), torch.tensor([4, 1]))),
                          (flag, (torch.ones(2),), (-torch.ones(2),))):
        compiled = dynamo.compile(fn, backend=backend, capture_scalar_outputs=True)
        torch.testing.assert_close(compiled(*good), fn(*good))
        with pytest.raises(RuntimeError):
            compiled(*bad)


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_an_int_of_cancelled_float_algebra_is_not_decided_while_tracing(backend):
    # `int(v - v)` is sympy's 0, but eager's ValueError for a NaN or an infinite v
    def trunc(x):
        v = x.sum().item()
        return x + int(v - v)

    def floor(x):
        v = x.sum().item()
        return x[math.floor(v * 0)]

    for fn in (trunc, floor):
        compiled = dynamo.compile(fn, backend=backend, capture_scalar_outputs=True)
        torch.testing.assert_close(compiled(torch.tensor([1.0, 2.0])), fn(torch.tensor([1.0, 2.0])))
        for v in (float("nan"), float("inf")):
            with pytest.raises(ValueError):
                compiled(torch.tensor([v, 1.0]))


def test_a_pybind_functions_break_reason_names_it_by_its_module_and_name():
    def f(x):
        torch._C._autograd._push_saved_tensors_default_hooks(lambda t: t, lambda t: t)
        torch._C._autograd._pop_saved_tensors_default_hooks()
        return x + 1

    reasons = [str(b.reason) for b in dynamo.explain(f)(torch.ones(2)).breaks]
    assert reasons and reasons[0].startswith(
        "torch._C._autograd._push_saved_tensors_default_hooks()"), reasons


class _UnprintableError(Exception):
    def __str__(self):
        raise RuntimeError("its message cannot be made")


def test_a_backend_error_whose_message_cannot_be_made_is_still_a_warning_or_a_backend_error():
    """The warning and BackendError quote the backend's exception: one whose `__str__` raises
    made the user's call raise that instead."""
    import warnings

    def backend(gm, example_inputs):
        raise _UnprintableError()

    def f(x):
        return x.sin() + 1

    x = torch.ones(2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert torch.equal(dynamo.compile(f, backend=backend)(x), f(x))
    assert any("its message cannot be shown" in str(w.message) for w in caught)
    with pytest.raises(dynamo.BackendError, match="_UnprintableError"):
        dynamo.compile(f, backend=backend, raise_backend_errors=True)(x)


def test_a_list_that_holds_itself_is_an_input_like_any_list():
    """`is_constant` of a list that holds itself recursed forever: the frame ran eagerly with a
    RecursionError for its reason."""
    def f(x, y):
        return x + 1 if y is None else x * 2

    looped = [1]
    looped.append(looped)
    explained = dynamo.explain(f)(torch.ones(2), looped)
    assert explained.graph_count == 1 and not explained.breaks and not explained.eager
    assert torch.equal(dynamo.compile(f, backend="eager")(torch.ones(2), looped), torch.ones(2) * 2)
