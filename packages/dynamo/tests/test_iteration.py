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

import pytest
import torch

import dynamo


def _outcome(fn: Callable, args: tuple) -> Any:
    """What a call gives: its result and its arguments after it, or the exception it raised."""
    try:
        return fn(*args), args
    except Exception as error:  # compared by type and message
        return (type(error), str(error)), args


_VIEWS = (type({}.keys()), type({}.values()), type({}.items()))


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
    elif isinstance(expected, _VIEWS):  # `==` on values views is identity
        _same(list(got), list(expected))
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


def test_reversed_of_what_is_not_a_sequence_raises() -> None:
    """`reversed()` of a generator, a set or a map gave an iterator over its items, where Python
    raises a TypeError (only sequences and objects with `__reversed__` are reversible)."""
    def f(x, items):
        out = []
        for make in (lambda: (v for v in items), lambda: set(items), lambda: map(abs, items),
                     lambda: items, lambda: dict.fromkeys(items)):
            try:
                out.append(list(reversed(make())))
            except TypeError as error:
                out.append(str(error))
        return x + 1, out

    _agree(f, lambda: (_x(), [1, 2]), fullgraph=True)



class _ReversedOwnList(list):
    def __reversed__(self):
        return iter(["own"])


class _ReversedOwnDict(dict):
    def __reversed__(self):
        return iter(["own"])


class _ReversedOwnOrderedDict(collections.OrderedDict):
    def __reversed__(self):
        return iter(["own"])


class _NotReversibleList(list):
    __reversed__ = None


def test_reversed_of_a_builtin_subclass_asks_its_own_reversed() -> None:
    """`reversed()` of a list, dict or OrderedDict subclass reversed the base's items, past a
    `__reversed__` the subclass defines (`["own"]` here) or sets to None (Python's TypeError)."""
    def f(x, items):
        out = []
        for kind in (_ReversedOwnList, _NotReversibleList):
            try:
                out.append(list(reversed(kind(items))))
            except TypeError as error:
                out.append(str(error))
        for kind in (_ReversedOwnDict, _ReversedOwnOrderedDict):
            out.append(list(reversed(kind(zip(items, items)))))
        return x + 1, out

    _agree(f, lambda: (_x(), [1, 2]), fullgraph=True)


def test_iter_of_a_callable_and_a_sentinel() -> None:
    """`iter(fn, sentinel)` (the two-argument form) failed in dynamo's own handler (an internal
    error as the graph break's reason): now `fn` is called until it returns `sentinel` or
    raises StopIteration, as in Python; a first argument that cannot be called raises Python's
    TypeError."""
    def f(x, items):
        taken = list(iter(lambda: items.pop(0), 0))
        stack = [x, x * 2]
        tensors = [t + 1 for t in iter(lambda: stack.pop() if stack else None, None)]
        numbers = (i for i in range(5))
        upto = list(iter(lambda: next(numbers), 3))
        rest = list(iter(lambda: next(numbers), 99))  # ended by the generator's StopIteration
        try:
            iter(3, 0)
        except TypeError as error:
            return taken, tensors, upto, rest, str(error)

    _agree(f, lambda: (_x(), [3, 2, 1, 0, 5]), fullgraph=True)


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

    def across_a_break(x):
        for d in ({"a": 1}, collections.OrderedDict(a=1)):
            iterator = iter(d)
            d["new"] = 1
            print(end="")  # the iterator leaves the trace: rebuilt broken, as it is
            try:
                next(iterator)
            except RuntimeError as error:
                x = x + len(str(error))
        return x

    _agree(across_a_break, lambda: (_x(),), breaks=None)


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


# ----- handed on at a graph break, or returned: rebuilt as real iterators over the real ones ----


def _quiet() -> None:
    """A graph break that is not `graph_break()`: a print to nowhere."""
    print(end="", file=io.StringIO())


def _compiled_with_breaks(fn: Callable, make: Callable[[], tuple]) -> None:
    """`fn` agrees with eager (see `_agree`), and is compiled: graphs and graph breaks, no
    frame run eagerly."""
    _agree(fn, make, breaks=None)
    report = dynamo.explain(fn)(*make())
    assert report.graph_count and report.graph_break_count and not report.eager, str(report)


def test_enumerate_handed_on_at_a_break_sees_later_writes() -> None:
    def grown(x, lst):
        out = []
        for i, v in enumerate(lst, 10):
            dynamo.graph_break()
            if len(lst) < 5:
                lst.append(v * 10)  # after the break: eager runs 5 times
            out.append((i, v))
            x = x + v
        return x, out

    def written(x, lst):
        out = []
        for i, v in enumerate(lst):
            lst[-1] = 100 + i  # before the break: replayed on the list the iterator reads
            _quiet()
            out.append(v)
        return x + len(out), out

    _compiled_with_breaks(grown, lambda: (_x(), [1, 2, 3]))
    _compiled_with_breaks(written, lambda: (_x(), [1, 2, 3]))


def test_zip_handed_on_at_a_break_sees_later_writes_and_stays_strict() -> None:
    def f(x, a, b, both):
        out = []
        try:
            for p, q in zip(a, b, strict=True):
                _quiet()
                if p == 1:
                    a.append(4)
                    b.append(40) if both else None
                out.append(p + q)
        except ValueError as error:
            out.append(str(error))
        return x + len(out), out

    _compiled_with_breaks(f, lambda: (_x(), [1, 2, 3], [10, 20, 30], True))
    _compiled_with_breaks(f, lambda: (_x(), [1, 2, 3], [10, 20, 30], False))  # a ValueError


def test_reversed_list_handed_on_at_a_break_indexes_the_live_list() -> None:
    def written(x, lst):
        out = []
        for v in reversed(lst):
            dynamo.graph_break()
            lst[0] = 100
            out.append(v)
        return x + len(out), out

    def shrunk(x, lst):
        out = []
        for v in reversed(lst):
            out.append(v)
            lst.pop()
            lst.pop()  # the iterator's index is now past the end: it ends there
            _quiet()
        return x + len(out), out, lst

    def made(x, n):
        lst = list(range(n))
        it = reversed(lst)
        first = next(it)
        dynamo.graph_break()
        lst[0] = 100
        return x + first, list(it)

    _compiled_with_breaks(written, lambda: (_x(), [1, 2, 3]))
    _compiled_with_breaks(shrunk, lambda: (_x(), [1, 2, 3, 4, 5]))
    _compiled_with_breaks(made, lambda: (_x(), 3))


def test_a_range_iterator_handed_on_at_a_break_makes_no_list_of_its_numbers() -> None:
    def early(x, n):
        for i in range(n):
            x = x * 2 + i
            _quiet()
            if i == 3:
                break
        return x

    def stepped(x):
        it = iter(range(2, 30, 3))
        first = next(it)
        dynamo.graph_break()
        return x + first, list(it)

    def returned(x, n):
        it = iter(range(n))
        next(it)
        return x + 1, it

    rest = dynamo.compile(returned, backend="eager")
    assert type(rest(_x(), 5)[1]) is type(iter(range(5))) and list(rest(_x(), 5)[1]) == [1, 2, 3, 4]
    assert type(rest(_x(), 2**70)[1]) is type(iter(range(2**70)))
    _compiled_with_breaks(early, lambda: (_x(), 10**6))  # not a list of a million numbers
    _compiled_with_breaks(stepped, lambda: (_x(),))


def test_map_and_filter_handed_on_at_a_break() -> None:
    def mapped(x, lst):
        log = []
        for y in map(lambda v: log.append(("map", v)) or v * 2, lst):
            dynamo.graph_break()
            log.append(("body", y))
            x = x + y
            lst.append(5) if len(lst) < 4 else None
        return x, log

    def filtered(x, lst, truthy):
        out = []
        for v in filter(None if truthy else lambda v: v % 2 == 0, lst):
            _quiet()
            out.append(v)
            lst.append(v + 2) if v < 8 else None
        return x + len(out), out

    def two(x, a, b):
        it = map(max, a, b)
        first = next(it)
        dynamo.graph_break()
        b[1] = 50
        return x + first, list(it)

    _compiled_with_breaks(mapped, lambda: (_x(), [1, 2]))
    _compiled_with_breaks(filtered, lambda: (_x(), [1, 2, 3, 4], False))
    _compiled_with_breaks(filtered, lambda: (_x(), [0, 2, 0, 4], True))
    _compiled_with_breaks(two, lambda: (_x(), [1, 2, 3], [3, 2, 1]))


def test_iterators_over_a_dict_made_in_the_trace_handed_on_at_a_break() -> None:
    def values(x, n):
        d = {"a": 1, "b": 2, "c": 3}
        out = []
        for v in d.values():
            dynamo.graph_break()
            d["c"] = 30 + n  # seen by the rest of the loop
            out.append(v)
        return x + len(out), out, d

    def items(x, grow):
        d = {"a": x + 1, "b": 2}
        out = []
        try:
            for k, v in d.items():
                _quiet()
                d[k + "x" if grow else k] = 0  # growing: a RuntimeError at the next item
                out.append((k, v))
        except RuntimeError as error:
            out.append(str(error))
        return out, d

    def backwards(x):
        d = {"a": 1, "b": 2, "c": 3}
        out = []
        for k in reversed(d.keys()):
            _quiet()
            d["a"] = 10
            out.append((k, d[k]))
        return x + 0, out

    _compiled_with_breaks(values, lambda: (_x(), 1))
    _compiled_with_breaks(items, lambda: (_x(), False))
    _compiled_with_breaks(items, lambda: (_x(), True))
    _compiled_with_breaks(backwards, lambda: (_x(),))


def test_a_view_of_a_dict_made_in_the_trace_is_that_dicts_real_view() -> None:
    def returned(x):
        d = {"a": x + 1, "b": 2}
        return d, d.values(), d.keys(), d.items()

    def kept(x, n):
        d = {"a": 1}
        keys, values = d.keys(), d.values()
        dynamo.graph_break()
        d["b"] = n
        return x + len(keys), list(keys), list(values), keys

    _agree(returned, lambda: (_x(),))
    d, values, keys, items = dynamo.compile(returned, backend="eager")(_x())
    d["c"] = 3  # the views returned are the returned dict's
    assert list(keys) == ["a", "b", "c"] and len(values) == 3 and ("c", 3) in items
    assert type(values).__name__ == "dict_values"
    _compiled_with_breaks(kept, lambda: (_x(), 7))


def test_an_iterator_inside_another_keeps_its_identity() -> None:
    def f(x, lst):
        it = iter(lst)
        out = []
        for i, v in enumerate(it):
            dynamo.graph_break()
            if i == 0:
                next(it)  # the enumerate's own iterator: one item skipped
            out.append(v)
        return x + len(out), out, list(it)

    def returned(x, lst):
        it = iter(lst)
        next(it)
        return x + 0, it, zip(it, it), enumerate(it, 5)

    _compiled_with_breaks(f, lambda: (_x(), [1, 2, 3, 4, 5]))
    _, it, pairs, numbered = dynamo.compile(returned, backend="eager")(_x(), [1, 2, 3, 4, 5, 6])
    assert next(it) == 2 and next(pairs) == (3, 4) and next(numbered) == (5, 5)


def test_a_map_whose_function_cannot_be_rebuilt_is_refused() -> None:
    from dynamo.codegen import ResultBuilder
    from dynamo.exc import Unsupported
    from dynamo.variables.containers import (
        IteratorVariable,
        MapIteratorVariable,
        OpaqueValueVariable,
        ZipIteratorVariable,
    )

    fn = OpaqueValueVariable(object(), None, "opaque")
    rows = ZipIteratorVariable([IteratorVariable([])])
    try:
        ResultBuilder().expression(MapIteratorVariable(fn, rows))
    except Unsupported:
        pass
    else:
        raise AssertionError("a map over a function that cannot be rebuilt was rebuilt")

    def over_generator(x, n):  # a half-run generator inside: called for real instead
        def gen():
            yield from range(n)

        out = []
        for v in map(str, gen()):
            dynamo.graph_break()
            out.append(v)
        return x + len(out), out

    _agree(over_generator, lambda: (_x(), 3), breaks=None)


def test_reversed_tensor_is_flip() -> None:
    """`reversed(t)` is `Tensor.__reversed__`: `t.flip(0)`, or `t` itself when 0-d (it was a
    list iterator over the rows)."""
    for dynamic in (False, True):
        dynamo.reset()
        f = dynamo.compile(lambda x: reversed(x), backend="eager", fullgraph=True,
                           dynamic=dynamic)
        x = torch.randn(4, 2)
        out = f(x)
        assert type(out) is torch.Tensor and torch.equal(out, x.flip(0))
        zero_d = torch.tensor(3.0)
        assert f(zero_d) is zero_d
        g = dynamo.compile(lambda x: [r * 2 for r in reversed(x)], backend="eager",
                           fullgraph=True, dynamic=dynamic)
        assert all(torch.equal(a, b) for a, b in zip(g(x), [r * 2 for r in x.flip(0)]))


def test_len_and_iteration_of_a_0d_tensor_raise_eagers_type_error() -> None:
    """`len(t)` and iterating a 0-d tensor raise eager's TypeError in the trace, which the
    frame's `try` catches (len was an internal error: `size(0)` of the fake)."""
    def f(x):
        try:
            return len(x)
        except TypeError as error:
            return str(error)

    def g(x):
        try:
            a, = x
            return a
        except TypeError:
            return x * 2

    zero_d = torch.tensor(1.0)
    for fn in (f, g):
        dynamo.reset()
        out = dynamo.compile(fn, backend="eager", fullgraph=True)(zero_d)
        expected = fn(zero_d)
        assert out == expected if isinstance(expected, str) else torch.equal(out, expected)


def test_iterating_a_tensor_unbinds_it_as_eager_does() -> None:
    """The rows of `for v in t` are `t.unbind(0)`'s, as in `Tensor.__iter__`: autograd refuses a
    row used after an in-place write to `t`, compiled as eagerly (each row was `t[i]`, a view
    autograd allows: the compiled call returned a value where eager raised). Found by the graph
    break fuzzer (seed 1000033)."""
    def f(x):
        b = x + 1
        acc = x * 0
        for v in b:
            acc = acc + v.sum()
            b.mul_(2)
        return acc

    x = torch.randn(4, requires_grad=True)
    with pytest.raises(RuntimeError, match="Output 1 of Unbind is a view"):
        f(x)
    dynamo.reset()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError, match="Output 1 of Unbind is a view"):
            dynamo.compile(f, backend="eager")(x)
    dynamo.reset()
    rows = dynamo.compile(lambda t: [v * 2 for v in t], backend="eager", fullgraph=True)(x.view(2, 2))
    assert [v.grad_fn.name() for v in rows] == ["MulBackward0", "MulBackward0"]
    assert [v.grad_fn.next_functions[0][0].name() for v in rows] == ["UnbindBackward0"] * 2
