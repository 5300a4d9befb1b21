"""Instances of `list` subclasses and user classes' operator methods: made in the trace, passed
in, iterated live, carried across breaks, rebuilt once. (Hugging Face's LogitsProcessorList is
in integration_tests/test_transformers.py.)"""

from __future__ import annotations

import torch
from counting import counting_backend

import dynamo


class Procs(list):
    def __init__(self, items=(), scale=1.0):
        super().__init__(items)
        self.scale = scale

    def __call__(self, x):
        for f in self:
            x = f(x)
        return x * self.scale


class Counted(list):
    def append(self, item):
        super().append(item)
        self.n = getattr(self, "n", 0) + 1


def _same(got, expected) -> None:
    assert type(got) is type(expected), (got, expected)
    if isinstance(expected, (list, tuple)):
        assert len(got) == len(expected), (got, expected)
        for g, e in zip(got, expected):
            _same(g, e)
        assert getattr(got, "__dict__", None) == getattr(expected, "__dict__", None)
    elif isinstance(expected, torch.Tensor):
        torch.testing.assert_close(got, expected)
    else:
        assert got == expected, (got, expected)


def _agree(fn, *args, breaks: int = 0):
    backend, graphs = counting_backend("eager")
    compiled = dynamo.compile(fn, backend=backend)
    for _ in range(2):
        x = torch.randn(3)
        _same(compiled(x, *args), fn(x, *args))
    assert sum(len(entry.breaks) for _, entry in compiled.cache.entries) == breaks
    return compiled


def test_a_list_subclass_made_in_the_trace_is_one_graph_and_rebuilt() -> None:
    def fn(x):
        p = Procs([torch.relu, torch.sin], scale=2.0)
        p.append(torch.cos)
        p += [torch.tanh]
        p.insert(0, torch.neg)
        return (p(x), len(p), isinstance(p, list), torch.sin in p, p[1:3],
                list(reversed(p))[0] is torch.tanh, p)

    _agree(fn)


def test_list_methods_and_operators_on_a_subclass_instance() -> None:
    def fn(x):
        p = Procs([1, 2])
        return (x, p == [1, 2], p != [2], p < [1, 3], p + [3], [0] + p, p * 2, 2 * p,
                sorted(p, reverse=True), p.index(2), p.count(1), p.pop(), p)

    _agree(fn)


def test_an_overridden_method_calls_the_list_one_through_super() -> None:
    def fn(x):
        c = Counted()
        c.append(x)
        c.append(x + 1)
        return c, c.n, sum(c)

    _agree(fn)


def test_a_list_subclass_from_the_frame_is_read_and_a_change_to_it_breaks() -> None:
    def reads(x, p):
        return p(x) + len(p), p[0] is torch.relu, torch.cos in p

    _agree(reads, Procs([torch.relu, torch.cos]))

    def appends(x, p):
        p.append(torch.cos)
        return p(x)

    compiled = dynamo.compile(appends, backend="eager")
    ours, theirs = Procs([torch.relu]), Procs([torch.relu])
    x = torch.randn(3)
    _same(compiled(x, ours), appends(x, theirs))
    assert ours == theirs  # the append happened once, for real
    (_, entry), = compiled.cache.entries
    assert "list subclass's instance from outside the trace" in str(entry.breaks[0])


def test_iteration_over_a_subclass_sees_appends_live_and_across_a_break() -> None:
    def grows(x):
        p = Procs([1, 2])
        seen = []
        for v in p:
            if v < 4:
                p.append(v + 2)
            seen.append(v)
        return x * sum(seen), seen

    _agree(grows)

    def handed_on(x):
        p = Procs([torch.relu, torch.sin, torch.cos])
        it = iter(p)
        first = next(it)
        print("a break")
        p.append(torch.tanh)  # the iterator handed on is over the object: it sees this
        return [g(x) for g in it], first(x)

    _agree(handed_on, breaks=1)


def test_operator_methods_of_user_classes_are_followed() -> None:
    class Vec:
        def __init__(self, v):
            self.v = v

        def __add__(self, other):
            if isinstance(other, Vec):
                return Vec(self.v + other.v)
            return NotImplemented

        def __radd__(self, other):
            return Vec(self.v + other)

        def __mul__(self, k):
            return Vec(self.v * k)

        def __iadd__(self, other):
            self.v = self.v + other
            return self

    def fn(x):
        a = Vec(x) + Vec(x)
        b = 1 + a  # int.__add__ declines: Vec.__radd__
        b += 2
        c = b * 3
        try:
            a - a
        except TypeError:
            c = c * 2
        return a.v, b.v, c.v

    _agree(lambda x: fn(x))
