"""`with` blocks whose context manager the trace cannot enter (a C lock, a @contextmanager
that times, a class whose __enter__ prints): the frame breaks at the `with`, the manager is
entered for real, and the block's body is compiled in the resume function."""

from __future__ import annotations

import contextlib
import functools
import sys
import threading
import time
import warnings

import pytest
import torch

import dynamo


def _counting_backend():
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    return backend, graphs


LOG: list = []


@contextlib.contextmanager
def timed(name):
    start = time.perf_counter()
    yield name.upper()
    LOG.append((name, time.perf_counter() >= start))


def with_a_timer(x):
    y = x.sin()
    with timed("block") as label:
        z = y * 2
    return z + 1, label


LOCK = threading.Lock()


def with_a_lock(x):
    y = x.cos()
    with LOCK:
        z = y * 3
        held = LOCK.locked()
    return z - 1, held


class Loud:
    def __enter__(self):
        LOG.append("enter")
        print("entering")
        return self

    def __exit__(self, kind, value, traceback):
        LOG.append(("exit", kind))
        print("leaving")
        return kind is KeyError  # swallows a KeyError


def with_a_loud_manager(x, fail):
    y = x.relu()
    with Loud():
        y = y + 1
        if fail:
            raise KeyError("inside")
        y = y * 2
    return y.sum()


@pytest.mark.parametrize("fn", [with_a_timer, with_a_lock])
def test_a_manager_the_trace_cannot_enter_is_entered_for_real_and_the_body_compiled(fn):
    backend, graphs = _counting_backend()
    compiled = dynamo.compile(fn, backend=backend)
    for seed in range(3):
        x = torch.randn(5, generator=torch.Generator().manual_seed(seed))
        LOG.clear()
        got = compiled(x)
        got_log = list(LOG)
        LOG.clear()
        expected = fn(x)
        torch.testing.assert_close(got[0], expected[0])
        assert got[1:] == expected[1:]
        assert got_log == LOG
        assert not LOCK.locked()
        if seed == 0:
            first = len(graphs)
    assert first >= 2  # the part before the `with` and the block's body, both compiled
    assert len(graphs) == first  # later calls hit the caches (the lock's method is guarded
    #                              by its owner and name, not as one method object)
    explained = dynamo.explain(fn)(torch.randn(5))
    assert not explained.eager
    if fn is with_a_lock:
        assert any(b.reason.startswith("entering a lock") for b in explained.breaks)


def test_a_manager_whose_exit_swallows_an_exception_raised_in_the_block(capsys):
    compiled = dynamo.compile(with_a_loud_manager, backend="eager")
    x = torch.randn(6)
    for fail in (False, True, False):
        LOG.clear()
        got = compiled(x, fail)
        got_log, got_out = list(LOG), capsys.readouterr().out
        LOG.clear()
        expected = with_a_loud_manager(x, fail)
        torch.testing.assert_close(got, expected)
        assert got_log == LOG and got_out == capsys.readouterr().out
        assert got_log[-1] == ("exit", KeyError if fail else None)


def test_a_manager_that_does_not_support_the_protocol_raises_as_in_eager():
    def f(x):
        y = x + 1
        with object():
            y = y * 2
        return y

    with pytest.raises(TypeError, match="context manager protocol"):
        f(torch.ones(2))
    with pytest.raises(TypeError, match="context manager protocol"):
        dynamo.compile(f, backend="eager")(torch.ones(2))


def test_a_grad_mode_decorator_on_a_function_the_code_defines() -> None:
    def f(x):
        @torch.no_grad()
        def frozen(t):
            return t * 5

        @torch.enable_grad()
        def tracked(t):
            return t * 3

        with torch.no_grad():
            y = tracked(x)
        return frozen(x) + 1, y, torch.is_grad_enabled()

    x = torch.randn(3, requires_grad=True)
    dynamo.reset()
    got, expected = dynamo.compile(f, fullgraph=True)(x), f(x)
    for g, e in zip(got[:2], expected[:2]):
        torch.testing.assert_close(g, e)
        assert g.requires_grad == e.requires_grad
    assert got[2] is expected[2] is True


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_saved_tensors_hooks_opened_in_the_frame_pack_what_the_graph_saves(backend) -> None:
    """The block's push and pop run for real, around the graph that saves `x` (its pop, handed
    on at the break, was a graph node run while tracing: the hooks were gone when it ran)."""
    packed = []

    def f(x):
        with torch.autograd.graph.saved_tensors_hooks(
                lambda t: (packed.append(1), t * 2)[1], lambda t: t):
            y = (x * x).sum()
        return y

    compiled = dynamo.compile(f, backend=backend)
    for fn in (f, compiled, compiled):
        packed.clear()
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        fn(x).backward()
        assert x.grad.tolist() == [4.0, 8.0] and len(packed) == 2
    assert torch._C._autograd._top_saved_tensors_default_hooks(False) is None


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
@pytest.mark.parametrize("as_object", [False, True, "partial", "module"])
def test_a_saved_tensors_hook_around_the_call_that_raises_is_called_once(backend,
                                                                          as_object) -> None:
    """The graph's ops call the user's pack hook; when it raises, the error is the call's (the
    frame was run again eagerly: the hook, called a second time, let it through, and
    aot_eager's graph was blamed and dropped)."""
    def f(x, w):
        return (x * w).sum()

    compiled = dynamo.compile(f, backend=backend)
    x, w = torch.randn(3, requires_grad=True), torch.randn(3)
    compiled(x, w)  # (compiled outside the hooks)

    class Budget:
        def __init__(self) -> None:
            self.calls = 0

        def __call__(self, t):  # refuses the first tensor only
            self.calls += 1
            if self.calls == 1:
                raise RuntimeError("over budget")
            return t

    for fn in (f, compiled):
        budget = Budget()
        if as_object == "partial":  # (no __code__: unwrapped to the function)
            pack = functools.partial(Budget.__call__, budget)
        elif as_object == "module":  # (its forward's frame, not Module.__call__'s)
            pack = _ModuleHook(budget)
        else:
            pack = budget if as_object else (lambda t, budget=budget: budget(t))
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with pytest.raises(RuntimeError, match="over budget"):
                with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
                    fn(x, w)
        assert budget.calls == 1
    torch.testing.assert_close(compiled(x, w), f(x, w))


class _ModuleHook(torch.nn.Module):
    def __init__(self, budget) -> None:
        super().__init__()
        self.budget = budget

    def forward(self, t):
        return self.budget(t)


def test_a_module_hook_does_not_claim_a_backends_error() -> None:
    """A saved-tensor hook that is an nn.Module: a backend's compiled callable that is a module
    too, and raises, is still the backend's fault (Module.__call__'s frame is in both)."""
    class Broken(torch.nn.Module):
        def forward(self, *args):
            raise RuntimeError("backend bug")

    def f(x, w):
        return (x * w).sin().sum()

    compiled = dynamo.compile(f, backend=lambda gm, example_inputs: Broken())
    x, w = torch.randn(3, requires_grad=True), torch.randn(3)
    with pytest.warns(UserWarning, match="backend bug"):
        with torch.autograd.graph.saved_tensors_hooks(_ModuleHook(lambda t: t), lambda t: t):
            out = compiled(x, w)
    torch.testing.assert_close(out, f(x, w))


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_global_module_hooks_see_the_users_modules_only(backend) -> None:
    m = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.ReLU())
    seen = []
    handle = torch.nn.modules.module.register_module_forward_hook(
        lambda mod, i, o: seen.append(type(mod).__name__))
    try:
        compiled = dynamo.compile(lambda x: m(x), backend=backend)
        for _ in range(2):
            seen.clear()
            torch.testing.assert_close(compiled(torch.ones(2, 3)), m(torch.ones(2, 3)))
            assert seen == ["Linear", "ReLU", "Sequential"] * 2  # (the compiled call's, eager's)
    finally:
        handle.remove()


def test_a_forward_ad_level_opened_in_the_frame_is_closed_after_the_call() -> None:
    """`dual_level`'s enter is no query of state (a guard repeating it opened a level per
    check, and the level was left open): the block is entered and left for real."""
    import torch.autograd.forward_ad as fwAD

    def f(x):
        with fwAD.dual_level():
            dual = fwAD.make_dual(x, torch.ones_like(x))
            return fwAD.unpack_dual(dual * dual).tangent

    x = torch.randn(3)
    compiled = dynamo.compile(f, backend="eager")
    for _ in range(2):
        torch.testing.assert_close(compiled(x), f(x))
        assert fwAD._current_level == -1


def test_a_call_under_disable_saved_tensors_hooks_compiles() -> None:
    """Tracing pushes no hooks of its own where they are disabled (pushing one raised)."""
    def f(x):
        y = x * 2
        print(end="")
        return y.sin()

    compiled = dynamo.compile(f, backend="eager")
    with torch.autograd.graph.disable_saved_tensors_hooks("no hooks here"):
        torch.testing.assert_close(compiled(torch.ones(3)), f(torch.ones(3)))


def test_an_exit_stack_is_one_graph_and_sys_exc_info_is_the_callers() -> None:
    """`ExitStack.__exit__` calls `sys.exc_info()`: a break ("calling sys.exc_info") in every
    ExitStack block. It answers the caller's state, guarded: called from a handler of the
    caller's, the compiled frame sees the caller's exception, as eager does."""
    def f(x):
        done = []
        with contextlib.ExitStack() as stack:
            stack.callback(done.append, 1)
            y = x + 1
        return y, done, sys.exc_info()[0]

    x = torch.ones(2)
    compiled = dynamo.compile(f, fullgraph=True)
    assert compiled(x)[1:] == ([1], None)
    try:
        raise KeyError("k")
    except KeyError:
        assert dynamo.compile(f)(x)[1:] == ([1], KeyError)
    assert dynamo.compile(f)(x)[1:] == ([1], None)
