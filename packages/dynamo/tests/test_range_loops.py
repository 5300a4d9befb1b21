"""Loops over `range(n)` with a graph break inside, for a symbolic `n` (an int that changed
between calls, a size): the iterator handed on at the break is one over a range of the frame's
inputs, so the compilations stay bounded as `n` varies (each `n` was compiled anew, and past
the cache's limit the frame ran eagerly), and every result and side effect is eager's."""

from __future__ import annotations

import warnings
from collections.abc import Callable

import torch

import dynamo

_SIZES = [3, 4, 5, 0, 1, 2, 7, 9, 12, 15, 6, 8, 10, 11, 13, 14]


def _log_at_a_break(log: list, *items: object) -> None:
    dynamo.graph_break()
    log.append(items)


def _compiled_sweep(fn: Callable, calls: list[tuple]) -> int:
    """Calls `fn` compiled and eagerly on each of `calls` (its arguments, after a fresh log),
    asserts they agree in results and logs, and returns the number of graphs compiled."""
    graphs = []
    compiled = dynamo.compile(fn, backend=lambda gm, _: graphs.append(gm) or gm.forward)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the cache's limit reached, a frame run eagerly
        for args in calls:
            got_log, expected_log = [], []
            got, expected = compiled(got_log, *args), fn(expected_log, *args)
            torch.testing.assert_close(got, expected)
            assert got_log == expected_log
    return len(graphs)


def test_a_generate_loop_does_not_recompile_per_length() -> None:
    model = torch.nn.Linear(3, 3)

    def generate(log, x, n):
        for i in range(n):
            x = model(x)
            _log_at_a_break(log, i)
        return x

    with torch.no_grad():
        count = _compiled_sweep(generate, [(torch.randn(2, 3), n) for n in range(3, 16)])
    assert count <= 3  # was one per n, up to the cache's limit


def test_the_loop_variable_an_else_clause_and_a_data_dependent_break() -> None:
    def f(log, x, n):
        i = None
        for i in range(n):
            x = x + i
            _log_at_a_break(log, i)
            if x.sum() > 40:
                break
        else:
            x = x - 1
        return x, i

    assert _compiled_sweep(f, [(torch.ones(3), n) for n in _SIZES]) <= 6


def test_steps_negative_steps_and_nested_loops() -> None:
    def f(log, x, n):
        for i in range(1, n, 3):
            for j in range(n, i, -2):
                x = x * 1.01 + i - j
                _log_at_a_break(log, i, j)
        return x

    assert _compiled_sweep(f, [(torch.ones(3), n) for n in _SIZES]) <= 4


def test_enumerate_zip_and_reversed_over_a_range() -> None:
    def f(log, x, n):
        for k, i in enumerate(range(2, n)):
            _log_at_a_break(log, k, i)
        for i, t in zip(range(n), [x, x * 2, x * 3, x * 4, x * 5]):
            x = x + t * i
            _log_at_a_break(log, i)
        for s in (1, 3, -2):
            for i in reversed(range(n, 1, s) if s < 0 else range(1, n, s)):
                _log_at_a_break(log, s, i)
        return x

    assert _compiled_sweep(f, [(torch.ones(3), n) for n in _SIZES]) <= 7


def test_a_range_held_across_the_break_and_a_size_as_the_bound() -> None:
    def f(log, x):
        numbers, i = range(x.shape[0]), None
        alias, it = numbers, iter(numbers)
        for i in it:
            x = x + i
            _log_at_a_break(log, i)
            if i == 2:
                break
        return x, i, list(it), numbers, alias is numbers

    assert _compiled_sweep(f, [(torch.ones(n),) for n in _SIZES]) <= 5


def test_a_range_used_otherwise_is_this_calls_numbers_guarded() -> None:
    """`len`, an index, `in`: the constant range of this call, pinned by guards, so another
    `n` recompiles rather than answering stale."""
    def f(log, x, n):
        numbers = range(n)
        for i in numbers:
            _log_at_a_break(log, i)
        return x + len(numbers), (n - 1 in numbers), numbers[-1] if numbers else None

    _compiled_sweep(f, [(torch.ones(3), n) for n in (3, 4, 5, 4, 0, 3)])


def test_a_long_loop_unrolled_before_its_break_is_of_its_numbers() -> None:
    """Past its first items in one trace a range's iterator pins its bounds (not a guard per
    item): a break late in the loop, or none, still answers as eager for every `n`."""
    def f(log, x, n):
        for i in range(n):
            x = x + i
            if i == 10:
                _log_at_a_break(log, i)
        return x

    _compiled_sweep(f, [(torch.ones(3), n) for n in (5, 12, 20, 11, 9, 12)])


def test_a_range_beyond_a_c_long_has_a_longrange_iterator() -> None:
    """An iterator over numbers beyond a C long is a `longrange_iterator`: a symbolic bound
    that grows past one (a guard on the symbol) makes the range this call's constant one."""
    def f(log, x, n):
        it, backwards = iter(range(n)), reversed(range(n, 0, -1))
        log.append((type(it).__name__, type(backwards).__name__))
        for i in it:
            _log_at_a_break(log, i, next(backwards))
            if i == 1:
                break
        log.append((type(it).__name__, next(it), next(backwards)))
        return x

    _compiled_sweep(f, [(torch.ones(3), n) for n in (3, 5, 2**64, 2**63, 4, 2**63 - 1, 7)])


def test_a_ranges_iter_and_reversed_methods_make_an_iterator_per_call() -> None:
    """`r.__iter__()` and `r.__reversed__()` make an iterator in the trace, as `iter(r)` and
    `reversed(r)` do: they were a real iterator, a constant of the compiled code that the trace
    had already taken from and that every call went on taking from."""
    def f(log, x, n):
        numbers = range(n)
        it, backwards = numbers.__iter__(), numbers.__reversed__()
        log.append((next(it, None), next(backwards, None)))
        for i in it:
            _log_at_a_break(log, i)
            if i == 2:
                break
        log.append((list(it), list(backwards)))
        return x

    _compiled_sweep(f, [(torch.ones(3), n) for n in (5, 3, 5, 8, 3, 0, 5)])
