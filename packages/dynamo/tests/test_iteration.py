"""Iteration as Python does it: iterators made in the trace take their items one at a time from
the live container (`enumerate`, `zip`, `map`, `filter`, `reversed`, dict views and their
iterators), so writes made in the loop body to items not reached yet are seen, a list growing in
the loop is followed, and a dict that changes size raises; dict views read the dict as it is
when they are used. Each case gave a wrong answer once: the items were a snapshot taken when the
loop started."""

from __future__ import annotations

import collections
import contextlib
import io
import warnings
from collections.abc import Callable
from typing import Any

import torch

import dynamo


def _outcome(fn: Callable, args: tuple) -> Any:
    """What a call gives: its result and its arguments after it, or the exception it raised."""
    try:
        return fn(*args), args
    except Exception as error:  # compared by type and message
        return (type(error), str(error)), args


def _same(got: Any, expected: Any) -> None:
    assert type(got) is type(expected), (got, expected)
    if isinstance(expected, (tuple, list)):
        assert len(got) == len(expected), (got, expected)
        for g, e in zip(got, expected):
            _same(g, e)
    elif isinstance(expected, dict):
        assert list(got) == list(expected), (got, expected)
        for k in expected:
            _same(got[k], expected[k])
    elif isinstance(expected, torch.Tensor):
        torch.testing.assert_close(got, expected)
    else:
        assert got == expected, (got, expected)


def _agree(fn: Callable, make: Callable[[], tuple], breaks: int | None = 0, **options) -> None:
    """`fn` compiled and plain, on fresh arguments from `make` (twice: the cache is used the
    second time): the same results, the same arguments after the call (or the same exception);
    and, unless `breaks` is None, that many graph breaks."""
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("error")  # a frame that would run eagerly fails the test
        dynamo.reset()
        compiled = dynamo.compile(fn, backend="eager", **options)
        for _ in range(2):
            _same(_outcome(compiled, make()), _outcome(fn, make()))
        if breaks is not None:
            assert dynamo.explain(fn)(*make()).graph_break_count == breaks


def _x() -> torch.Tensor:
    return torch.ones(2)


# ----- loops over iterators made in the trace, with no graph break -------------------------------


def test_loop_over_dict_items_sees_writes_to_entries_not_reached() -> None:
    def f(x, d):
        out = []
        for _k, v in d.items():
            out.append(v)
            d["b"] = 100
        return x + 0, out

    def values(x, d):
        total = x
        for v in d.values():
            total = total + v
            d["c"] = 10
        return total

    _agree(f, lambda: (_x(), {"a": 1, "b": 2}))
    _agree(values, lambda: (_x(), {"a": 1, "b": 2, "c": 3}))


def test_enumerate_follows_writes_and_a_growing_list() -> None:
    def written(x, lst):
        out = []
        for i, v in enumerate(lst):
            out.append((i, v))
            lst[-1] = 100
        return x + 0, out

    def grown(x, lst):
        n = 0
        for i, _v in enumerate(lst, 1):
            if i < 3:
                lst.append(9)
            n += 1
        return x * n  # eager: 5 iterations

    _agree(written, lambda: (_x(), [1, 2]))
    _agree(grown, lambda: (_x(), [1, 2, 3]))


def test_reversed_list_indexes_the_live_list() -> None:
    def written(x, lst):
        out = []
        for v in reversed(lst):
            out.append(v)
            lst[0] = 100
        return x * sum(out)  # eager: 3 + 2 + 100

    def shrunk(x, lst):
        out = []
        for v in reversed(lst):
            out.append(v)
            lst.pop()
            lst.pop()
        return x + 0, out

    _agree(written, lambda: (_x(), [1, 2, 3]))
    _agree(shrunk, lambda: (_x(), [1, 2, 3, 4, 5]))


def test_zip_map_and_filter_take_one_item_at_a_time() -> None:
    def zipped(x, a, b):
        out = []
        for p, q in zip(a, b):
            out.append(p + q)
            b[-1] = 50
            a.append(7)
        return x + 0, out

    def mapped(x, lst):
        log = []

        def double(v):
            log.append(("map", v))
            return v * 2

        for v in map(double, lst):
            log.append(("body", v))
            lst[-1] = 30
        return x + 0, log

    def filtered(x, lst):
        out = []
        for v in filter(lambda v: v % 2 == 0, lst):
            out.append(v)
            lst.append(v + 2) if v < 8 else None
        return x + len(out), out

    _agree(zipped, lambda: (_x(), [1, 2, 3], [10, 20, 30]))
    _agree(mapped, lambda: (_x(), [1, 2, 3]))
    _agree(filtered, lambda: (_x(), [1, 2, 3, 4]))


def test_zip_strict_raises_as_python_does() -> None:
    def f(x, a, b):
        try:
            return x + len(list(zip(a, b, strict=True))), "equal"
        except ValueError as error:
            return x + 0, str(error)

    _agree(f, lambda: (_x(), [1, 2], [3, 4]))
    _agree(f, lambda: (_x(), [1, 2, 3], [3, 4]))
    _agree(f, lambda: (_x(), [1], [3, 4]))


def test_a_dict_changing_size_while_iterated_raises() -> None:
    def keys(x, d):
        try:
            for k in d.keys():
                d[k + "x"] = 1
        except RuntimeError as error:
            return x + 1, str(error)
        return x, "no error"

    def values(x, d):
        try:
            for _v in d.values():
                del d["a"]
        except RuntimeError as error:
            return x + 1, str(error)
        return x, "no error"

    def items(x, d):
        try:
            for k, v in reversed(d.items()):
                d.pop("a") if v == 1 else d.setdefault(k + "x", v)
        except RuntimeError as error:
            return x + 1, str(error)
        return x, "no error"

    def plain(x, d):
        for k in d:
            d["new" + k] = 1
        return x, None

    def ordered(x, keys):
        d = collections.OrderedDict()
        for k in keys:
            d[k] = 1
        try:
            for k in d:
                d[k + "x"] = 1
        except RuntimeError as error:
            return x + 1, str(error)
        return x, "no error"

    _agree(keys, lambda: (_x(), {"a": 1}))
    _agree(keys, lambda: (_x(), {}))  # empty: nothing iterated, no error
    _agree(values, lambda: (_x(), {"a": 1, "b": 2}))
    _agree(items, lambda: (_x(), {"a": 1, "b": 2}))
    _agree(plain, lambda: (_x(), {"a": 1}), breaks=None)  # raised at the loop's header
    _agree(ordered, lambda: (_x(), "ab"))
    _agree(ordered, lambda: (_x(), "a"))  # the last item given: the iterator ends unchecked


# ----- dict views --------------------------------------------------------------------------------


def test_dict_views_read_the_dict_as_it_is_when_used() -> None:
    def f(x, d):
        ks, vs, its = d.keys(), d.values(), d.items()
        d["c"] = 3
        return (x + len(ks) + len(vs) + len(its), list(vs), tuple(ks), sorted(its),
                type(vs).__name__, type(ks).__name__, type(its).__name__,
                "c" in ks, ("c", 3) in its, ("c", 4) in its, 3 in vs, bool(vs), f"{its}")

    _agree(f, lambda: (_x(), {"a": 1}))


def test_set_operations_and_comparisons_of_dict_views() -> None:
    def f(x, a, b):
        return (x + 0, a.keys() | b.keys(), a.keys() & b.keys(), a.keys() - {"b"},
                a.keys() ^ b.keys(), a.keys() == {"a", "b"}, a.keys() == b.keys(),
                a.keys() != ["a", "b"], a.keys() <= {"a", "b", "c"}, a.items() == b.items(),
                a.values() == a.values(), set(a.items()), a.keys().isdisjoint(["z"]))

    _agree(f, lambda: (_x(), {"a": 1, "b": 2}, {"b": 2, "c": 3}))
    _agree(f, lambda: (_x(), {"a": 1, "b": 2}, {"b": 2, "a": 1}))


def test_a_view_returned_is_the_real_view_of_the_dict() -> None:
    def f(x, d):
        return x + 1, d.keys(), d.items()

    d = {"a": 1}
    _agree(f, lambda: (_x(), {"a": 1}))
    compiled = dynamo.compile(f, backend="eager")
    _, keys, items = compiled(_x(), d)
    d["b"] = 2
    assert list(keys) == ["a", "b"] and ("b", 2) in items


def test_a_view_of_a_dict_made_in_the_trace_returned() -> None:
    def f(x):
        d = {"a": x + 1, "b": 2}
        return d.values(), d.keys()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # cannot be rebuilt: the frame runs eagerly
        values, keys = dynamo.compile(f, backend="eager")(_x())
    assert type(values).__name__ == "dict_values" and list(keys) == ["a", "b"]


# ----- across graph breaks -----------------------------------------------------------------------


def test_loops_over_views_and_wrappers_with_a_graph_break_in_the_body() -> None:
    def items(x, d):
        out = []
        for k, v in d.items():
            print(k)
            out.append(v)
            x = x + v
        return x, out

    def keys_written(x, d):
        for k in d.keys():
            print(k)
            d["b"] = 100  # seen by the rest of the loop, run by resume functions
            x = x + d[k]
        return x

    def grown(x, d):
        for k in d:
            print(k)
            d["new" + k] = 1  # eager raises at the next item
        return x

    def enumerated(x, lst):
        for i, v in enumerate(lst):
            print(i)
            x = x + v * i
        return x

    def zipped(x, a, b):
        for p, q in zip(a, reversed(b)):
            print(p)
            x = x + p * q
        return x

    _agree(items, lambda: (_x(), {"a": 1, "b": 2, "c": 3}), breaks=None)
    _agree(keys_written, lambda: (_x(), {"a": 1, "b": 2}), breaks=None)
    _agree(grown, lambda: (_x(), {"a": 1, "b": 2}), breaks=None)
    _agree(enumerated, lambda: (_x(), [1, 2, 3]), breaks=None)
    _agree(zipped, lambda: (_x(), [1, 2, 3], [4, 5, 6]), breaks=None)


def test_a_map_handed_on_at_a_graph_break_runs_the_frame_eagerly() -> None:
    def f(x, lst):
        for y in map(lambda v: v * 2, lst):
            print(y)
            x = x + y
            lst.append(5) if len(lst) < 4 else None
        return x

    with warnings.catch_warnings(record=True) as caught, \
            contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("always")
        got = dynamo.compile(f, backend="eager")(_x(), [1, 2])
    torch.testing.assert_close(got, f(_x(), [1, 2]))
    assert any("map iterator cannot be rebuilt" in str(w.message) for w in caught)
