"""User classes' protocols that Python runs itself (iteration, `reversed`, unary operators, a
special method's lookup on the class, `__slots__`), followed as Python follows them."""

from __future__ import annotations

import warnings

import torch
from counting import counting_backend

import dynamo


class _Counter:
    """An iterator class: `__iter__` returns itself, `__next__` counts to `n`."""

    def __init__(self, n, log=None):
        self.i, self.n, self.log = 0, n, log

    def __iter__(self):
        return self

    def __next__(self):
        if self.i >= self.n:
            raise StopIteration
        self.i += 1
        if self.log is not None:
            self.log.append(("next", self.i))
        return self.i


class _Numbers:
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return _Counter(self.n)


class _Endless:
    def __init__(self):
        self.log = []

    def __iter__(self):
        i = 0
        while True:
            self.log.append(("gen", i))
            yield i
            i += 1


def _run(fn, *args, fullgraph=True):
    dynamo.reset()
    backend, graphs = counting_backend("eager")
    return dynamo.compile(fn, backend=backend, fullgraph=fullgraph)(*args), graphs


def test_iterator_class_is_followed_by_its_next():
    def f(x, numbers):
        for v in numbers:
            x = x * v
        it = iter(numbers)
        return x, next(it), list(it), next(_Counter(0), "done")

    x = torch.randn(3)
    got, graphs = _run(f, x, _Numbers(3))
    expected = f(x, _Numbers(3))
    torch.testing.assert_close(got[0], expected[0])
    assert got[1:] == expected[1:] and len(graphs) == 1


def test_iter_items_are_taken_when_asked():
    """A generator `__iter__` runs in step with the loop (its side effects interleave), so an
    endless one with a `break` traces."""
    def f(x, o):
        for v in o:
            o.log.append(("body", v))
            if v >= 2:
                break
            x = x + v
        return x

    x = torch.randn(3)
    eager, compiled = _Endless(), _Endless()
    got, graphs = _run(f, x, compiled)
    torch.testing.assert_close(got, f(x, eager))
    assert compiled.log == eager.log and len(graphs) == 1


def test_iterator_class_across_a_break():
    def f(x, it):
        for v in it:
            x = x * v
            if v == 2:
                dynamo.graph_break()
        return x, it.i

    x = torch.randn(3)
    got, graphs = _run(f, x, _Counter(4), fullgraph=False)
    expected = f(x, _Counter(4))
    torch.testing.assert_close(got[0], expected[0])
    assert got[1] == expected[1] and len(graphs) == 2


def test_reversed_asks_the_class():
    class Seq:
        def __len__(self):
            return 3

        def __getitem__(self, i):
            if not 0 <= i < 3:
                raise IndexError(i)
            return i * 10

        def __iter__(self):
            return iter([1, 2, 3])

    class Backwards(Seq):
        def __reversed__(self):
            return iter([9, 8])

    class NotReversible:
        def __iter__(self):
            return iter([1, 2])

    def f(x, s, b, n):
        try:
            reversed(n)
            fails = 0
        except TypeError:
            fails = 1
        return x + fails, list(reversed(s)), list(reversed(b))

    x = torch.randn(3)
    args = (Seq(), Backwards(), NotReversible())
    got, _ = _run(f, x, *args)
    expected = f(x, *args)
    torch.testing.assert_close(got[0], expected[0])
    assert got[1:] == expected[1:] == ([20, 10, 0], [9, 8])


def test_unary_operators_call_the_special_methods():
    class T:
        def __init__(self, t):
            self.t = t

        def __neg__(self):
            return T(-self.t)

        def __pos__(self):
            return T(self.t + 1)

        def __invert__(self):
            return T(self.t * 10)

        def __abs__(self):
            return T(self.t.abs())

    def f(x):
        a = T(x)
        return (-a).t, (+a).t, (~a).t, abs(a).t

    x = torch.randn(3)
    got, graphs = _run(f, x)
    for g, e in zip(got, f(x)):
        torch.testing.assert_close(g, e)
    assert len(graphs) == 1


def test_special_method_ignores_an_instance_attribute_of_its_name():
    """`obj(x)` and `len(obj)` use the class's methods: an instance attribute named
    `__call__` changes nothing, and must not fail a guard on every call."""
    class Scale:
        def __call__(self, x):
            return x * 2

        def __len__(self):
            return 3

    s = Scale()
    s.__call__ = lambda x: x * 1000
    s.__len__ = lambda: 99

    def f(x):
        return s(x) + len(s)

    backend, graphs = counting_backend("eager")
    compiled = dynamo.compile(f, backend=backend)
    x = torch.randn(3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(3):
            torch.testing.assert_close(compiled(x), f(x))
    assert len(graphs) == 1


def test_slots_refuse_other_attributes():
    class Slotted:
        __slots__ = ("a", "b")
        k = 1

        def __init__(self):
            self.a = 1.0

    def f(x):
        s = Slotted()
        s.b = x
        try:
            s.c = 1
        except AttributeError as e:
            first = str(e)
        try:
            s.k = 2
        except AttributeError as e:
            return s.b + s.a + 100, first, str(e)
        return x, "", ""

    x = torch.randn(3)
    got, graphs = _run(f, x)
    expected = f(x)
    torch.testing.assert_close(got[0], expected[0])
    assert got[1:] == expected[1:] and len(graphs) == 1


class _Half(float):
    def __rmul__(self, other):
        return 7.0

    def __gt__(self, other):
        return "gt"


def test_a_tensor_operator_takes_a_number_subclass_before_its_reflected_method():
    """`x * c` of a float subclass with `__rmul__`: torch.Tensor's `__mul__` takes c as a float
    (the trace called c.__rmul__, 7.0)."""
    def f(x, c):
        product = x * c
        str(c)  # (a break: its class's own str)
        return product, x < c

    x, c = torch.ones(3), _Half(0.5)
    for backend in ("eager", "aot_eager"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = dynamo.compile(f, backend=backend)(x, c)
        for g, e in zip(got, f(x, c)):
            assert torch.equal(g, e), (backend, got)


class _Holding:
    """A container whose `__contains__` compares by identity; `_Listed` only iterates."""

    def __init__(self, *items):
        self.items = list(items)

    def __contains__(self, item):
        return any(item is it for it in self.items)


class _Listed:
    def __init__(self, *items):
        self.items = list(items)

    def __iter__(self):
        return iter(self.items)


def test_a_tensor_in_a_user_container_asks_its_contains() -> None:
    """`t in obj` with a tensor `t` was made a graph op (a break: "passing a _Holding to a graph
    operation (contains)"); it is the container's `__contains__`, or its iteration."""
    def f(x, y):
        held, listed = _Holding(x), _Listed(y, 3)
        return x in held, y in held, y not in held, y in listed

    x = torch.randn(2)
    assert dynamo.compile(f, fullgraph=True)(x, x.clone()) == (True, False, True, True)
    assert dynamo.compile(f, fullgraph=True)(x, x) == (True, True, False, True)
