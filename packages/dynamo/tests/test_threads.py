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
