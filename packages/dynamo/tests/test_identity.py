"""One object, one identity: a function, partial, iterator, bound method, cell, context manager
or container the traced code makes is built once by the transformed frame, so every reference
to it (a local, an attribute it was stored in, the return value, the locals handed on at a
graph break) is the same object, as in eager, and state it holds (an iterator's position) is
shared. Each program runs eagerly and compiled, with and without graph breaks in the middle,
and what each run observes (values, `is` between references, items taken later) must agree."""

from __future__ import annotations

import collections
import functools
import io
import math

import pytest
import torch

import dynamo


class Reg:
    pass


def _no_break() -> None:
    pass


def _print_break() -> None:
    print(end="", file=io.StringIO())  # a call the trace cannot follow


PAUSES = [_no_break, dynamo.graph_break, _print_break]


def _agree(f, observe, *, pause, make_args=lambda: (torch.ones(2), Reg())):
    """`f(*args, pause)` eagerly and compiled: what `observe(result, *args)` sees must agree."""
    eager_args = make_args()
    expected = observe(f(*eager_args, pause), *eager_args)
    compiled = dynamo.compile(f, backend="eager")
    for _ in range(2):  # the first call traces, the second runs the cached entry
        args = make_args()
        assert observe(compiled(*args, pause), *args) == expected


@pytest.mark.parametrize("pause", PAUSES)
def test_next_after_a_break_advances_the_loops_iterator(pause):
    def f(x, reg, pause):
        it = iter(range(5))
        out = []
        for i in it:
            out.append(i)
            pause()
            if i == 1:
                out.append(next(it))  # takes 2: the loop goes on with 3
        return x + 0, out

    _agree(f, lambda r, x, reg: r[1], pause=pause)


@pytest.mark.parametrize("pause", PAUSES)
def test_iterator_over_a_list_is_one_object_across_a_break(pause):
    def f(x, reg, pause):
        items = [10, 20, 30, 40]
        it = iter(items)
        first = next(it)
        reg.it = it
        pause()
        items.append(50)  # seen by the iterator, as in Python
        return x + first, it, next(it)

    def observe(r, x, reg):
        return r[1] is reg.it, r[2], list(r[1]), list(reg.it)

    _agree(f, observe, pause=pause)


@pytest.mark.parametrize("pause", PAUSES)
def test_iterator_stored_and_returned_shares_its_position(pause):
    def f(x, reg, pause):
        it = iter([1, 2, 3])
        reg.it = it
        pause()
        return x + 1, it, [it, it]

    def observe(r, x, reg):
        _, it, pair = r
        return it is reg.it, pair[0] is pair[1] is it, next(it), next(reg.it)

    _agree(f, observe, pause=pause)


@pytest.mark.parametrize("pause", PAUSES)
def test_nested_function_stored_and_returned_is_one_object(pause):
    def f(x, reg, pause):
        def act(t):
            return t * 2

        reg.act = act
        pause()
        return act(x), act, {"act": act}

    def observe(r, x, reg):
        y, act, table = r
        return y.tolist(), act is reg.act is table["act"], act(3)

    _agree(f, observe, pause=pause)


def test_closures_share_their_cell_and_a_recursive_closure_is_rebuilt():
    def f(x, reg, pause):
        n = 3

        def get():
            return n

        def plus(k):
            return n + k

        def fact(k):
            return 1 if k == 0 else k * fact(k - 1)

        reg.fns = [get, plus]
        return x + fact(n), get, plus, fact

    def observe(r, x, reg):
        _, get, plus, fact = r
        return (get is reg.fns[0], plus is reg.fns[1], plus(1), fact(4),
                get.__closure__[0] is plus.__closure__[0], fact.__closure__[0].cell_contents
                is fact)

    _agree(f, observe, pause=_no_break)


@pytest.mark.parametrize("pause", PAUSES)
def test_partial_stored_and_returned_is_one_object(pause):
    def f(x, reg, pause):
        scale = functools.partial(torch.mul, other=3)
        reg.scale = scale
        pause()
        return scale(x), scale, (scale, scale)

    def observe(r, x, reg):
        y, scale, pair = r
        return y.tolist(), scale is reg.scale is pair[0] is pair[1], scale(2)

    _agree(f, observe, pause=pause)


@pytest.mark.parametrize("pause", PAUSES)
def test_methods_are_bound_once(pause):
    class Box:
        def __init__(self):
            self.items = []

        def add(self, v):
            self.items.append(v)

    def f(x, reg, pause):
        box = Box()
        add = box.add
        push = reg.log.append
        reg.add = add
        pause()
        return x + 1, add, push, [add, push], box

    def observe(r, x, reg):
        _, add, push, pair, box = r
        add(5)
        return add is reg.add is pair[0], push is pair[1], box.items

    def make_args():
        reg = Reg()
        reg.log = []
        return torch.ones(2), reg

    _agree(f, observe, pause=pause, make_args=make_args)


@pytest.mark.parametrize("pause", PAUSES)
def test_finished_generator_and_deque_are_one_object(pause):
    def gen(n):
        yield from range(n)

    def f(x, reg, pause):
        g = gen(2)
        taken = list(g)
        q = collections.deque([1, 2], maxlen=3)
        reg.g, reg.q = g, q
        pause()
        return x + len(taken), g, q

    def observe(r, x, reg):
        _, g, q = r
        q.append(3)
        return g is reg.g, list(g), q is reg.q, list(reg.q)

    _agree(f, observe, pause=pause)


@pytest.mark.parametrize("pause", PAUSES)
def test_grad_mode_object_is_one_object(pause):
    def f(x, reg, pause):
        ctx = torch.no_grad()
        reg.ctx = ctx
        pause()
        return x + 1, ctx, [ctx]

    def observe(r, x, reg):
        return r[1] is reg.ctx is r[2][0]

    _agree(f, observe, pause=pause)


@pytest.mark.parametrize("pause", PAUSES)
def test_iterator_over_a_list_of_the_frame_filled_in_the_trace(pause):
    def f(x, reg, pause):
        reg.items.extend([1, 2, 3])  # replayed after the iterator is made
        it = iter(reg.items)
        first = next(it)
        reg.it = it
        pause()
        reg.items.append(4)
        return x + first, it

    def observe(r, x, reg):
        return r[1] is reg.it, list(r[1]), reg.items

    def make_args():
        reg = Reg()
        reg.items = []
        return torch.ones(2), reg

    _agree(f, observe, pause=pause, make_args=make_args)


def test_zip_over_a_half_run_generator_is_handed_on():
    def gen(n):
        yield from range(n)

    def f(x, reg, pause):
        pairs = zip(gen(3), [10, 20, 30])
        next(pairs)
        return x + 1, pairs

    _agree(f, lambda r, x, reg: list(r[1]), pause=_no_break)


@pytest.mark.parametrize("pause", PAUSES)
def test_set_grad_enabled_object_restores_the_mode_it_was_made_in(pause):
    def f(x, reg, pause):
        ctx = torch.set_grad_enabled(False)
        y = x * 2
        pause()
        with ctx:
            z = x * 2
        return y.requires_grad, z.requires_grad, torch.is_grad_enabled(), ctx

    def observe(r, x, reg):
        switched = torch.is_grad_enabled()
        with r[3]:
            pass
        restored = torch.is_grad_enabled()
        torch.set_grad_enabled(True)
        return r[:3], switched, restored

    _agree(f, observe, pause=pause, make_args=lambda: (torch.ones(2, requires_grad=True), Reg()))


def _matmul_after_a_break(a, b):
    print(end="", file=io.StringIO())
    return a @ b


def test_a_call_at_a_break_inside_autocast_runs_inside_the_block():
    # The block's `__exit__` on the stack is entered again once, before the call made for real
    def f(a, reg, pause):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            inside = _matmul_after_a_break(a, a)
        return inside.dtype, torch.is_autocast_enabled("cpu")

    _agree(f, lambda r, a, reg: r, pause=_no_break, make_args=lambda: (torch.ones(4, 4), Reg()))


def test_is_between_ints_made_symbols_is_eagers() -> None:
    """Which int object a symbol stands for is not traced (CPython caches small ints: the
    same object passed twice is `is` itself): a break, where eager decides."""
    def same(a, b, x):
        return x + 1, a is b

    compiled = dynamo.compile(same, backend="eager")
    x = torch.zeros(1)
    for v in (1, 2, 3):  # from the second call the ints are symbols
        assert compiled(v, v, x)[1] is same(v, v, x)[1] is True
        assert compiled(v, v + 1, x)[1] is same(v, v + 1, x)[1] is False


def test_a_compiled_submodule_is_walked_and_asked_as_eager_sees_it() -> None:
    """`self.sub = dynamo.compile(nn.Linear(...))` inside a model compiled again: its parameters
    count in `self.parameters()`, it is one of `self.children()`, `hasattr` and `_orig_mod` see
    the wrapper, and a compiled Sequential has a length."""
    cases = [
        lambda s, x: x * sum(p.pow(2).sum() for p in s.parameters()),
        lambda s, x: [x := c(x) for c in s.children()][-1],
        lambda s, x: x * (2 if hasattr(s.sub, "_orig_mod") and hasattr(s.sub, "bias") else 3),
        lambda s, x: s.sub._orig_mod(x) * len([n for n, _ in s.sub.named_parameters()
                                                if n.startswith("_orig_mod.")]),
        lambda s, x: x * len(s.seq) if s.sub else x,
    ]

    class Net(torch.nn.Module):
        def __init__(self, body):
            super().__init__()
            self.sub = dynamo.compile(torch.nn.Linear(3, 3))
            self.seq = dynamo.compile(torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.ReLU()))
            self.body = body

        def forward(self, x):
            return self.body(self, x)

    x = torch.randn(2, 3)
    for body in cases:
        net = Net(body)
        torch.testing.assert_close(dynamo.compile(net, fullgraph=True)(x), body(net, x))
    seq = dynamo.compile(torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.ReLU()))
    assert len(seq) == 2 and bool(dynamo.compile(torch.nn.Linear(1, 1))) and "in_features" in dir(
        dynamo.compile(torch.nn.Linear(1, 1)))


def test_the_forward_of_a_compiled_submodule_runs_the_wrapped_modules_hooks() -> None:
    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            inner = torch.nn.Linear(4, 4)
            inner.register_forward_hook(lambda mod, inp, out: out * 10)
            self.sub = dynamo.compile(inner)

        def forward(self, x):
            return self.sub.forward(x)

    net, x = Net(), torch.randn(3, 4)
    torch.testing.assert_close(dynamo.compile(net, backend="eager", fullgraph=True)(x), net(x))


def test_the_result_of_an_out_argument_is_that_tensor() -> None:
    def f(x):
        o, v, i = torch.empty(3), torch.empty(3), torch.empty(3, dtype=torch.long)
        r = torch.sin(x, out=o)
        m = torch.max(x.view(3, 1), 1, out=(v, i))
        s = torch.ops.aten.sort.values(x, 0, False, values=v, indices=i)
        return r is o, m.values is v, m[1] is i, s[0] is v, s[1] is i, r + 1

    x = torch.randn(3)
    for backend in ("eager", "aot_eager"):
        *same, value = dynamo.compile(f, backend=backend)(x)
        assert same == [True] * 5
        torch.testing.assert_close(value, x.sin() + 1)


@pytest.mark.parametrize("make", [lambda: int("1000001"), lambda: "a" * int("40"),
                                  lambda: float("2.5"), lambda: tuple([1, 2]),
                                  lambda: float("nan")])
def test_is_between_equal_constants_from_the_frame_is_guarded(make) -> None:
    """`k is j` of two equal constants: one object on one call, two equal ones on the next
    (value guards alone held for both: the first answer came back)."""
    def fn(x, k, j):
        return x + (1 if k is j else 0)

    compiled = dynamo.compile(fn, backend="eager")
    one, x = make(), torch.zeros(1)
    assert make() is not one
    assert compiled(x, one, one).item() == 1
    assert compiled(x, one, make()).item() == 0
    assert compiled(x, one, one).item() == 1


_NAN_CASES = {  # (fn(x, *args), argument lists of two NaNs: one object, then two)
    "dict.get": (lambda x, d, k: x + d.get(k, -1), lambda a, b: ({a: 1}, b)),
    "in list": (lambda x, k, items: x + (1 if k in items else 0), lambda a, b: (a, [b])),
    "list.count": (lambda x, items: x + items.count(items[0]), lambda a, b: ([a, b],)),
    "list.index": (lambda x, items: x + items.index(items[1]), lambda a, b: ([a, b],)),
    "list.remove": (lambda x, items, k: (items.remove(k), x + len(items))[1] if k in items else x,
                    lambda a, b: ([a, 1.0], b)),
    "tuple ==": (lambda x, a, b: x + (a == b), lambda a, b: ((a,), (b,))),
    "list <": (lambda x, a, b: x + (a < b), lambda a, b: ([a, 1], [b, 2])),
    "in tuple": (lambda x, k, t: x + (k in t), lambda a, b: (a, (b,))),
    "tuple.count": (lambda x, t, k: x + t.count(k), lambda a, b: ((a, 1.0), b)),
    "in dict.values": (lambda x, d, k: x + (k in d.values()), lambda a, b: ({0: a}, b)),
    "keys read, then get": (lambda x, d, k: x + len(list(d)) + d.get(k, -1),
                            lambda a, b: ({a: 1}, b)),
    "dict made in the trace": (lambda x, k, j: x + {k: 1}.get(j, 0), lambda a, b: (a, b)),
    "in set": (lambda x, s, k: x + (k in s), lambda a, b: ({a, 1.0}, b)),
    "set display": (lambda x, a, b: x + len({a, b}), lambda a, b: (a, b)),
    "set(list)": (lambda x, items: x + len(set(items)), lambda a, b: ([a, b],)),
    "set comprehension": (lambda x, items: x + len({v for v in items}), lambda a, b: ([a, b],)),
}


@pytest.mark.parametrize("case", list(_NAN_CASES))
def test_a_frame_nan_where_python_compares_identity_first_is_guarded(case) -> None:
    """Containment, dict and set lookups, `count`/`index`/`remove` and a sequence's `==` ask
    `is` before `==`: a NaN is found when it is the very object, though `nan == nan` is False.
    A NaN's value guard holds any NaN, so which objects met is guarded (the first answer came
    back for another NaN object)."""
    fn, make = _NAN_CASES[case]
    compiled = dynamo.compile(fn, backend="eager")
    x, n1, n2 = torch.zeros(()), float("nan"), float("nan")
    for a, b in ((n1, n1), (n1, n2), (n2, n1), (n1, n1)):
        assert compiled(x, *make(a, b)).item() == fn(x, *make(a, b)).item(), (a is b)


def test_a_fresh_nan_recompiles_only_where_its_identity_is_asked() -> None:
    """NaNs made anew for each call: arithmetic and `==` do not ask which object it is (one
    graph); `k in [k]` and `items.count(items[0])` guard two items to be one object, not each NaN to be
    the first call's."""
    from counting import counting_backend

    cases = [lambda x, k, items: x + k, lambda x, k, items: x + (k == items[0]),
             lambda x, k, items: x + (k in items), lambda x, k, items: x + items.count(items[0])]
    for fn in cases:
        backend, graphs = counting_backend("eager")
        compiled = dynamo.compile(fn, backend=backend)
        for _ in range(3):
            k = float("nan")
            torch.testing.assert_close(compiled(torch.zeros(()), k, [k, k]),
                                       fn(torch.zeros(()), k, [k, k]), equal_nan=True)
        assert len(graphs) == 1


@pytest.mark.parametrize("backend", ["eager"])
def test_a_str_from_the_frame_keeps_its_identity_across_a_break(backend) -> None:
    """`c = a; <break>; c is b`: the locals handed on at the break are the frame's objects,
    not equal literals (`'c': 'hello world!'` was another object than `b`); a code constant
    is that very object too (`a is "hello world!"` broke, and the break's literals were one)."""
    def f(x, a, b):
        c = a
        print(end="")
        return x + (c is b)

    def g(x, a):
        return x + (a is "hello world!")  # noqa: F632

    s1 = "hello world!"
    s2 = "".join(["hello", " world!"])
    x = torch.zeros(())
    for fn, cases in ((f, [(s1, s1), (s2, s1), (s1, s1)]), (g, [(s1,), (s2,), (s1,)])):
        compiled = dynamo.compile(fn, backend=backend)
        for args in cases:
            assert compiled(x, *args).item() == fn(x, *args).item()


def test_a_fresh_nan_looked_up_in_a_dict_without_nan_keys_does_not_recompile() -> None:
    """`k in {"a": 1}` of a NaN: no NaN finds such a dict, whichever object it is (each fresh
    NaN recompiled: a storm up to the 256 entries of objects); one with a NaN key still pins."""
    def f(x, k):
        return x + (k in {"a": 1, 2.5: 2}) + {"a": 1}.get(k, 3)

    def g(x, k, n):
        return x + (k in {n: 1})

    from counting import counting_backend

    backend, graphs = counting_backend("eager")
    compiled = dynamo.compile(f, backend=backend)
    for _ in range(4):
        assert compiled(torch.zeros(()), float("nan")).item() == 3.0
    assert len(graphs) == 1
    n = float("nan")
    compiled = dynamo.compile(g, backend="eager")
    for k in (n, float("nan"), n):
        assert compiled(torch.zeros(()), k, n).item() == g(torch.zeros(()), k, n).item()


class _Owner:
    def method(self) -> int:
        return 1


@pytest.mark.parametrize("kind", ["module", "method", "list method", "partial"])
def test_is_between_two_inputs_that_may_be_one_object_agrees_with_eager(kind) -> None:
    """A module, bound method or partial passed twice was `is` another object (False), and
    the False was cached for a later call with two distinct ones, or the other way round."""
    first, second = {
        "module": (math, torch), "method": (_Owner().method, _Owner().method),
        "list method": ([].append, [].append),
        "partial": (functools.partial(len), functools.partial(len)),
    }[kind]

    def f(x, a, b):
        return x + (a is b), a is not b

    compiled = dynamo.compile(f, backend="eager")
    x = torch.zeros(())
    for a, b in ((first, first), (first, second), (first, first)):
        got, expected = compiled(x, a, b), f(x, a, b)
        assert got[0].item() == expected[0].item() and got[1] == expected[1], (a, b)


def test_a_builtin_functions_module_is_the_module() -> None:
    f = dynamo.compile(lambda x: (math.sqrt.__self__ is math, x + 1), backend="eager")
    assert f(torch.zeros(()))[0] is True
