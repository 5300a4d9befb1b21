"""Compiled functions called from several threads at once."""

from __future__ import annotations

import threading
import time

import torch

import dynamo


def _in_threads(call, count: int = 4) -> list[Exception]:
    """Run `call` in `count` threads released together; the exceptions they raised."""
    errors: list[Exception] = []
    barrier = threading.Barrier(count)

    def run() -> None:
        barrier.wait(30)
        try:
            call()
        except Exception as error:  # noqa: BLE001 (returned to the test)
            errors.append(error)

    threads = [threading.Thread(target=run) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return errors


def test_threads_missing_together_compile_once() -> None:
    """Threads that call with the same new inputs at once wait for one compilation: each
    compiled and added a copy of the entry, and three new shapes on four threads used up the
    cache's limit (the function then ran eagerly for good)."""
    calls = []

    def backend(gm, example_inputs):
        calls.append(1)
        time.sleep(0.1)  # a slow compilation: the other threads miss meanwhile
        return gm.forward

    def f(x):
        return x.sin() + 1

    compiled = dynamo.compile(f, backend=backend, dynamic=False)
    errors = []
    for n in range(3, 6):
        x = torch.randn(n)

        errors += _in_threads(lambda x=x: torch.testing.assert_close(compiled(x), f(x)))
    assert not errors, errors
    assert len(calls) == 3
    assert len(compiled.cache.entries) == 3 and not compiled._gave_up


def test_a_hooked_module_called_from_threads_keeps_its_forward() -> None:
    """A module with hooks runs its compiled forward set on the instance for the call: threads
    calling at once each took another's compiled forward for the module's own, and put it back
    for good (the eager module then ran compiled code)."""
    module = torch.nn.Linear(4, 2)
    module.register_forward_hook(lambda mod, args, out: out * 2)
    compiled = dynamo.compile(module)
    x = torch.randn(3, 4)
    expected = module(x)

    def calls() -> None:
        for _ in range(300):
            torch.testing.assert_close(compiled(x), expected)

    errors = _in_threads(calls)
    assert not errors, errors
    assert "forward" not in module.__dict__


def _switching_often():
    """Threads switch every microsecond (races between two bytecodes show at once)."""
    import contextlib
    import sys

    @contextlib.contextmanager
    def switching():
        interval = sys.getswitchinterval()
        sys.setswitchinterval(1e-6)
        try:
            yield
        finally:
            sys.setswitchinterval(interval)
    return switching()


def test_a_first_call_made_by_threads_at_once() -> None:
    """A wrapper's first call (or its first after `reset`) syncs it with the cache tables: it
    marked itself synced before setting its cache, and another thread calling at that moment
    raised AttributeError ('CompiledFunction' object has no attribute '_gave_up')."""
    def f(x):
        return x + 1

    x = torch.ones(2)
    with _switching_often():
        for _ in range(200):
            compiled = dynamo.compile(f, backend="eager")
            errors = _in_threads(lambda compiled=compiled: compiled(x))
            assert not errors, errors


def test_threads_pruning_dead_caches_at_once() -> None:
    """Threads whose new wrappers first call at once each prune the caches no wrapper holds
    (and a freed code object's finalizer prunes too): one read a key another had just dropped
    (KeyError), or a finalizer iterated a table another thread added to ("dictionary changed
    size during iteration", and the freed code's entries stayed for good)."""
    import gc

    from dynamo import frontend

    def f(m, x):
        return m(x)

    x = torch.ones(2)

    def calls() -> None:
        for j in range(5):
            # a backend made per compilation, and a module that dies: dead caches
            wrappers = [dynamo.compile(f, backend=lambda gm, ex: gm.forward) for _ in range(10)]
            for w in wrappers:
                w(torch.nn.Linear(2, 2), x)
            del wrappers, w
            gc.collect()
            namespace: dict = {}
            exec(f"def h(x):\n    return x * {j}\n", namespace)  # a code object that dies
            dynamo.compile(namespace["h"], backend="eager")(x)
            del namespace

    with _switching_often():
        errors = _in_threads(calls)
    assert not errors, errors
    gc.collect()
    assert all(key[0]() is not None for key in frontend._caches)  # no freed code's cache left


_FLAG = [False]


def test_state_changed_between_a_trace_and_its_retrace_breaks_where_it_failed() -> None:
    """A global another thread sets between the first trace and the trace up to its break
    sends the second another way, to a break before the first's: that failure was raised, and
    the frame ran eagerly for good. (Made here by a function the trace calls for real.)"""
    traces = [0]

    @dynamo.assume_constant_result
    def version():
        traces[0] += 1
        _FLAG[0] = traces[0] == 2  # set for the second trace only
        return 1

    def f(x):
        y = x.sin() * version()
        if _FLAG[0]:
            print(end="")
        z = y.cos()
        print(end="")
        return z + 1

    compiled = dynamo.compile(f, backend="eager")
    x = torch.randn(3)
    torch.testing.assert_close(compiled(x), x.sin().cos() + 1)
    assert not compiled._gave_up and compiled.cache.entries
    _FLAG[0] = False
    x = torch.randn(3)
    torch.testing.assert_close(compiled(x), x.sin().cos() + 1)
