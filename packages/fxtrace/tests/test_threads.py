"""A trace in one thread leaves other threads alone: the module-stack hooks and fakecore's
size-arithmetic observers it installs are process-wide, and must ignore other threads' calls."""

from __future__ import annotations

import threading

import torch

from fxtrace import make_fx


class _Waiting(torch.nn.Module):
    def __init__(self, entered: threading.Event, go: threading.Event) -> None:
        super().__init__()
        self.entered, self.go = entered, go

    def forward(self, x):
        self.entered.set()
        assert self.go.wait(30)
        return x + 1


def _paused_trace(mode: str, fn, x: torch.Tensor) -> tuple[threading.Thread, threading.Event,
                                                            list]:
    """A thread tracing `fn` after a pause: it waits, mid-trace, until the event is set."""
    inside, resume, out = threading.Event(), threading.Event(), []

    def paused(x):
        inside.set()
        assert resume.wait(30)
        return fn(x)

    thread = threading.Thread(target=lambda: out.append(make_fx(paused, mode)(x)))
    thread.start()
    assert inside.wait(30)
    return thread, resume, out


def test_a_module_call_that_spans_another_threads_trace_finishes() -> None:
    """It entered before the trace's hooks were installed and returns while they are: the
    hook that pops the module stack must not run for it (it raised IndexError)."""
    entered, go, errors = threading.Event(), threading.Event(), []

    waiting = _Waiting(entered, go)
    waiting.register_forward_hook(lambda *args: None)  # (the call then looks for hooks)

    def call() -> None:
        try:
            waiting(torch.ones(2))
        except Exception as error:  # noqa: BLE001 (reported below)
            errors.append(error)

    caller = threading.Thread(target=call)
    caller.start()
    assert entered.wait(30)
    tracer, resume, out = _paused_trace("real", lambda x: torch.nn.Linear(2, 2)(x), torch.ones(2))
    go.set()
    caller.join()
    resume.set()
    tracer.join()
    assert not errors, errors
    assert [n.target for n in out[0].graph.nodes if n.op == "call_function"]


def test_another_threads_size_arithmetic_is_not_recorded() -> None:
    def halves(x):
        n = x.shape[0]
        return x.view(n * x.shape[1])[: n // 2 + 1] * 2

    def flat(x):
        return x.reshape(x.shape[0] * x.shape[1] * x.shape[2]) + x.shape[2]

    tracer, resume, out = _paused_trace("symbolic", halves, torch.randn(6, 3))
    try:  # while the first trace is paused: its symbols are not this one's
        other = make_fx(flat, "symbolic")(torch.randn(4, 3, 5))
    finally:
        resume.set()
        tracer.join()
    x, y = torch.randn(8, 3), torch.randn(2, 7, 3)
    torch.testing.assert_close(out[0](x), halves(x))
    torch.testing.assert_close(other(y), flat(y))


def test_a_real_trace_ignores_another_threads_symbols() -> None:
    """A real-mode trace has no symbols of its own: the size arithmetic of a symbolic trace in
    another thread is not its to record (it raised "computed outside the trace" there)."""
    def flat(x):
        return x.reshape(x.shape[0] * x.shape[1]) + x.shape[1]

    tracer, resume, out = _paused_trace("real", lambda x: x * 2, torch.ones(3))
    try:
        other = make_fx(flat, "symbolic")(torch.randn(4, 3))
    finally:
        resume.set()
        tracer.join()
    y = torch.randn(5, 2)
    torch.testing.assert_close(other(y), flat(y))
    assert [n.target for n in out[0].graph.nodes if n.op == "call_function"] == [
        torch.ops.aten.mul.Tensor]
