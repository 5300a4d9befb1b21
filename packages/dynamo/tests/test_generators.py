"""Generators made in the trace, `@contextmanager` blocks, `yield from`, and nn.Module's tree
walks (`parameters()`, `named_modules()`, ...). A generator's body runs when its items are taken,
so side effects interleave with the loop as in eager; programs that cannot be followed (a break
inside the body, a half-run generator handed on) still give eager's results, the generator
function then called for real."""

from __future__ import annotations

import collections
import contextlib
import gc
import io
import warnings

import pytest
import torch

import dynamo


def _compiled(fn, *args, fullgraph=True):
    """`fn` compiled on `args`: its result and the number of graphs."""
    graphs = []

    def counting(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    return dynamo.compile(fn, backend=counting, fullgraph=fullgraph)(*args), len(graphs)


def _same(a, b):
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and torch.equal(a, b)
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(map(_same, a, b))
    return a == b


log: list = []


def numbered(x, n):
    for i in range(n):
        log.append(("made", i))
        yield x * i


def _eager_and_compiled(fn, *args, fullgraph=True):
    """eager's result and log, the compiled result and log, and the compiled graph count."""
    log.clear()
    expected = fn(*args)
    expected_log = list(log)
    log.clear()
    result, graphs = _compiled(fn, *args, fullgraph=fullgraph)
    return expected, expected_log, result, list(log), graphs


def test_items_are_made_when_the_loop_takes_them():
    def f(x):
        total = x
        for y in numbered(x, 3):
            log.append("body")
            total = total + y
        return total

    expected, expected_log, result, got_log, graphs = _eager_and_compiled(f, torch.randn(3))
    assert _same(result, expected) and got_log == expected_log and graphs == 1
    assert got_log[:3] == [("made", 0), "body", ("made", 1)]


def test_zip_enumerate_map_filter_and_any_take_items_in_step():
    def f(x):
        pairs = [(i, a + b) for i, (a, b) in enumerate(zip(numbered(x, 2), numbered(x, 3)))]
        doubled = list(map(lambda t: t * 2, numbered(x, 2)))
        kept = list(filter(lambda pair: pair[0] % 2, enumerate(numbered(x, 4))))
        found = any(log.append("asked") or True for _ in numbered(x, 5))
        return pairs, doubled, kept, found

    expected, expected_log, result, got_log, graphs = _eager_and_compiled(f, torch.ones(2))
    assert _same(result, expected) and got_log == expected_log and graphs == 1
    assert got_log.count("asked") == 1  # any() stopped at the first item


def test_sum_adds_each_item_before_the_next_is_made():
    """`sum` of a generator that yields one tensor, written in place between its items, adds the
    item as it was when yielded (the items were all made first and added after: the last
    value three times). Found by the graph break fuzzer (seed 1001223)."""
    def running(t):
        b = t + 1
        for _ in range(3):
            b += t
            yield b

    def f(x):
        return sum(running(x))

    x = torch.ones(4)
    result, graphs = _compiled(f, x)
    assert torch.equal(result, f(x)) and torch.equal(result, torch.full((4,), 12.0))
    assert graphs == 1


def test_max_with_a_key_ranks_each_item_before_the_next_is_made():
    """`max(gen, key=...)` calls the key on an item before the generator makes the next, as
    eager does (the items were all made first, then ranked)."""
    def f(x, log):
        def made(t):
            for i in range(3):
                log.append(("made", i))
                yield t * i

        return max(made(x), key=lambda v: log.append("ranked") or v.shape[0])

    expected_log, got_log = [], []
    expected = f(torch.ones(2), expected_log)
    result, graphs = _compiled(f, torch.ones(2), got_log)
    assert torch.equal(result, expected) and got_log == expected_log and graphs == 1
    assert got_log[:3] == [("made", 0), "ranked", ("made", 1)]


def test_max_without_a_key_compares_each_item_before_the_next_is_made():
    """`min`/`max` of a generator without a key compare an item (its `__lt__`/`__gt__`) before
    the generator makes the next, as eager does (the items were all made first)."""
    class Ranked:
        def __init__(self, i, log):
            self.i, self.log = i, log

        def __gt__(self, other):
            self.log.append(("compared", self.i))
            return self.i > other.i

    def f(x, log):
        def made():
            for i in range(3):
                log.append(("made", i))
                yield Ranked(i, log)

        return max(made()).i, x + 1

    expected_log, got_log = [], []
    expected = f(torch.ones(2), expected_log)
    result, graphs = _compiled(f, torch.ones(2), got_log)
    assert _same(result, expected) and got_log == expected_log and graphs == 1
    assert got_log[:4] == [("made", 0), ("made", 1), ("compared", 1), ("made", 2)]


@pytest.mark.parametrize("kind", [list, collections.deque])
def test_extend_adds_each_item_before_the_next_is_made(kind):
    """`extend` with a generator adds each item before the generator makes the next, as CPython
    does, so a generator that reads the container sees it grow (it saw it empty: [0, 0, 0])."""
    def f(x):
        items = kind([x * 0])
        items.extend(items[-1] + x for _ in range(3))
        return list(items)

    result, graphs = _compiled(f, torch.ones(2))
    assert _same(result, f(torch.ones(2))) and graphs == 1
    assert result[-1].tolist() == [3.0, 3.0]


def test_dict_update_stores_each_pair_before_the_next_is_made():
    """`dict.update` with a generator of pairs stores each before the next is made (as CPython
    does): a generator reading the dict's size sees it grow (it read 0 every time)."""
    def f(x):
        sizes = {}
        sizes.update((i, len(sizes)) for i in range(3))
        return x + sizes[2]

    result, graphs = _compiled(f, torch.ones(2))
    assert torch.equal(result, f(torch.ones(2))) and torch.equal(result, torch.full((2,), 3.0))
    assert graphs == 1


class _YieldsSizeOf:
    """An iterable whose own `__iter__` yields the size of `target` three times."""

    def __init__(self, target):
        self.target = target

    def __iter__(self):
        for _ in range(3):
            yield len(self.target)


def _extend(items):
    items.extend(_YieldsSizeOf(items))


def _iadd(items):
    items += _YieldsSizeOf(items)


@pytest.mark.parametrize("kind", [list, collections.deque])
@pytest.mark.parametrize("grow", [_extend, _iadd, lambda items: getattr(
    items, "extendleft", items.extend)(_YieldsSizeOf(items))], ids=["extend", "iadd", "left"])
def test_extend_adds_each_item_an_objects_iter_yields_before_the_next(kind, grow):
    """`extend` (`+=`, `extendleft`) with an object whose `__iter__` is a generator adds each
    item before the generator makes the next, as CPython does: it sees the container grow
    (the trace read every item first: sizes 1, 1, 1)."""
    def f(x):
        items = kind([1])
        grow(items)
        return x + 1, list(items)

    result, graphs = _compiled(f, torch.ones(2))
    assert _same(result, f(torch.ones(2))) and graphs == 1
    assert sorted(result[1]) == [1, 1, 2, 3]


class _YieldsPairsSizing:
    def __init__(self, target):
        self.target = target

    def __iter__(self):
        for i in range(3):
            yield i, len(self.target)


class _MappingWritingTo:
    """A mapping whose `__getitem__` writes into `target` as it is read."""

    def __init__(self, target):
        self.target = target

    def keys(self):
        return ["a", "b"]

    def __getitem__(self, key):
        self.target[key + "!"] = len(self.target)
        return len(self.target)


@pytest.mark.parametrize("source", [_YieldsPairsSizing, _MappingWritingTo])
def test_dict_update_stores_each_entry_before_the_next_is_made(source):
    """`dict.update` with an object whose `__iter__` yields pairs stores each pair before the
    next is made; with a mapping it lists the keys, then reads and stores each key's item
    before reading the next, as CPython does (the trace read every pair or item first)."""
    def f(x):
        sizes = {}
        sizes.update(source(sizes))
        return x + 1, list(sizes.items())

    result, graphs = _compiled(f, torch.ones(2))
    assert _same(result, f(torch.ones(2))) and graphs == 1


def test_next_send_return_value_and_yield_from():
    def accumulate():
        total = 0
        while True:
            value = yield total
            if value is None:
                return total
            total = total + value

    def outer(x):
        result = yield from accumulate()
        yield result * 10

    def f(x):
        g = accumulate()
        next(g)
        g.send(x)
        partial = g.send(x * 2)
        h = outer(x)
        next(h)
        h.send(x)
        return partial, h.send(None), next(g, "done")

    expected, _, result, _, graphs = _eager_and_compiled(f, torch.randn(3))
    assert _same(result[:2], expected[:2]) and graphs == 1


def test_recursive_yield_from():
    def leaves(tree):
        if isinstance(tree, (list, tuple)):
            for branch in tree:
                yield from leaves(branch)
        else:
            yield tree

    def f(x):
        return torch.stack(list(leaves([x, (x * 2, [x * 3])])))

    expected, _, result, _, graphs = _eager_and_compiled(f, torch.randn(2))
    assert _same(result, expected) and graphs == 1


def test_exceptions_leave_the_generator_for_the_callers_handler():
    def failing(x):
        yield x
        raise KeyError("no more")

    def stops(x):
        yield x
        next(iter(()))  # a StopIteration inside a generator becomes a RuntimeError (PEP 479)

    def f(x):
        out = []
        try:
            for y in failing(x):
                out.append(y + 1)
        except KeyError:
            out.append(x - 1)
        try:
            list(stops(x))
        except RuntimeError:
            out.append(x * 0)
        return out

    expected, _, result, _, graphs = _eager_and_compiled(f, torch.randn(3))
    assert _same(result, expected) and graphs == 1


@contextlib.contextmanager
def scoped(name, x):
    log.append(("enter", name))
    try:
        yield x + 1
    finally:
        log.append(("exit", name))


def test_contextmanager_blocks_are_one_graph():
    def f(x):
        with scoped("outer", x) as a:
            with scoped("inner", a) as b:
                log.append("body")
                y = a * b
        return y

    expected, expected_log, result, got_log, graphs = _eager_and_compiled(f, torch.randn(3))
    assert _same(result, expected) and got_log == expected_log and graphs == 1
    assert got_log[-1] == ("exit", "outer")


def test_contextmanager_as_a_decorator():
    @scoped("decorator", 0)
    def helper(x):
        log.append("helper")
        return x.sin()

    def f(x):
        return helper(x) + 1

    expected, expected_log, result, got_log, graphs = _eager_and_compiled(f, torch.randn(3))
    assert _same(result, expected) and got_log == expected_log and graphs == 1


def test_a_break_inside_the_generator_calls_it_for_real():
    def chatty(x, n):
        for i in range(n):
            print("item", i)  # a graph break inside the generator's body
            log.append(i)
            yield x * i

    def f(x):
        total = x
        for y in chatty(x, 3):
            log.append("body")
            total = total + y
        return total

    with warnings.catch_warnings(), contextlib.redirect_stdout(None):
        warnings.simplefilter("ignore")
        expected, expected_log, result, got_log, graphs = _eager_and_compiled(
            f, torch.randn(3), fullgraph=False)
    assert _same(result, expected) and got_log == expected_log and graphs >= 1

    with pytest.raises(dynamo.Unsupported, match=r"print\(\)[\s\S]*test_generators.py"):
        dynamo.compile(f, backend="eager", fullgraph=True)(torch.randn(3))


def test_a_half_run_generator_returned_or_kept_across_a_break():
    def f(x):
        it = numbered(x, 3)
        first = next(it)
        return first, it

    def g(x):
        total = x
        for y in numbered(x, 3):
            print("break in the loop body")
            total = total + y
        return total

    with warnings.catch_warnings(), contextlib.redirect_stdout(None):
        warnings.simplefilter("ignore")
        x = torch.randn(3)
        (first, it), _ = _compiled(f, x, fullgraph=False)
        assert _same(first, x * 0) and _same(list(it), [x * 1, x * 2])
        expected, expected_log, result, got_log, _ = _eager_and_compiled(g, x, fullgraph=False)
    assert _same(result, expected) and got_log == expected_log


def test_a_generator_called_for_real_names_the_break_that_needed_it():
    def f(x):
        return any(row.sum() > 0 for row in x), x * 2  # the branch is inside `any`

    x = torch.tensor([[-1.0, 0.5], [1.0, 2.0]])
    explained = dynamo.explain(f)(x)
    (reason,) = [b.reason for b in explained.breaks if "genexpr" in b.reason]
    assert "cannot be rebuilt half-run" in reason
    assert "test_generators.py" in reason and "branching on a tensor's value" in reason
    result = dynamo.compile(f, backend="eager")(x)
    assert _same(result, f(x))


class Tied(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(10, 4)
        self.blocks = torch.nn.ModuleList(torch.nn.Linear(4, 4) for _ in range(2))
        self.norm = torch.nn.LayerNorm(4)
        self.head = torch.nn.Linear(4, 10, bias=False)
        self.head.weight = self.embed.weight  # tied: one parameter under two names
        self.register_buffer("scale", torch.tensor(2.0))

    def forward(self, x):
        for name, block in self.named_children():
            if name == "blocks":
                for layer in block.children():
                    x = layer(x)
        squares = sum((p * p).sum() for p in self.parameters())
        names = [n for n, _ in self.named_parameters()]
        kinds = [type(m).__name__ for m in self.modules()]
        buffers = dict(self.named_buffers())
        return x * buffers["scale"] + squares, names, kinds, len(list(self.named_modules()))


def test_module_walks_are_followed_and_guarded():
    model = Tied()
    x = torch.randn(2, 4)
    expected = model(x)
    result, graphs = _compiled(model, x)
    assert _same(result, expected) and graphs == 1
    assert "head.weight" not in result[1]  # the tied parameter counted once, as in eager

    compiled = dynamo.compile(model, backend="eager", fullgraph=True)
    compiled(x)
    model.extra = torch.nn.Linear(1, 1)  # a new submodule changes every walk
    assert _same(compiled(x), model(x))
    model.blocks[0].register_parameter("gain", torch.nn.Parameter(torch.ones(1)))
    assert _same(compiled(x), model(x))


@contextlib.contextmanager
def swallowing():
    try:
        yield
    except KeyError:
        log.append("swallowed")


def test_exceptions_leaving_with_blocks_reach_exit_and_contextmanagers():
    def f(x, table):
        with contextlib.suppress(KeyError):
            x = x + table["missing"]
        with swallowing():
            x = x * table["absent"]
        y = x + 1
        try:
            with scoped("cleanup", y):
                y = y + table["gone"]
        except KeyError:
            log.append("caught outside")
        return y

    expected, expected_log, result, got_log, graphs = _eager_and_compiled(f, torch.randn(3), {})
    assert _same(result, expected) and got_log == expected_log and graphs == 1
    assert got_log == ["swallowed", ("enter", "cleanup"), ("exit", "cleanup"), "caught outside"]


def test_throw_into_a_generator():
    def catcher(x):
        while True:
            try:
                yield x
            except ValueError:
                x = x * 2

    def f(x):
        g = catcher(x)
        next(g)
        return g.throw(ValueError("twice")), g.throw(ValueError("again"))

    expected, _, result, _, graphs = _eager_and_compiled(f, torch.randn(3))
    assert _same(result, expected) and graphs == 1


def test_close_runs_the_generators_finally():
    def closing(x):
        try:
            while True:
                value = yield x
                log.append("got")
                x = x + value
        finally:
            log.append("closed")

    def f(x):
        g = closing(x)
        next(g)
        out = g.send(x)
        g.close()
        return out

    expected, expected_log, result, got_log, graphs = _eager_and_compiled(f, torch.randn(3))
    assert _same(result, expected) and got_log == expected_log == ["got", "closed"]
    assert graphs == 1


def test_generators_handed_on_stay_lazy_and_list_iterators_stay_live():
    def f(x, items):
        y = x + 1
        return y, (t * 2 for t in y), (v for v in items)

    def g(x):
        items = [1, 2, 3]
        doubled = (v * x for v in items)
        print("graph break", end="")
        items.append(4)  # eager's generator sees it: it iterates over the very list
        return list(doubled)

    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        for fn in (f, dynamo.compile(f, backend="eager")):
            items = [1, 2]
            y, lazy, over_items = fn(torch.zeros(2), items)
            y.add_(100)
            items.append(3)
            assert _same(list(lazy), [torch.tensor(202.0)] * 2) and list(over_items) == [1, 2, 3]
        assert len(dynamo.compile(g, backend="eager")(torch.ones(1))) == len(g(torch.ones(1))) == 4


def test_exception_context_and_cause_are_kept():
    @contextlib.contextmanager
    def replacing():
        try:
            yield
        except ValueError:
            raise KeyError("replaced")  # noqa: B904 - the implicit context is the point

    def f(x):
        seen = []
        try:
            with replacing():
                raise ValueError("inner")
        except KeyError as error:
            seen.append(type(error.__context__).__name__)
        try:
            try:
                raise ValueError("a")
            except ValueError as first:
                raise KeyError("b") from first
        except KeyError as error:
            seen.append((type(error.__cause__).__name__, error.__suppress_context__))
        return x + 1, seen

    expected, _, result, _, graphs = _eager_and_compiled(f, torch.randn(2))
    assert result[1] == expected[1] == ["ValueError", ("ValueError", True)] and graphs == 1


def test_in_takes_items_up_to_the_one_found_and_generator_names():
    def f(x):
        g = (i for i in range(10))
        found = 3 in g
        following = next(g)
        missing = 100 in g
        items = iter([1, 2, 3, 4])
        return x + 1, found, following, missing, list(g), 2 in items, list(items), g.__name__

    expected, _, result, _, graphs = _eager_and_compiled(f, torch.randn(2))
    assert result[1:] == expected[1:] and graphs == 1


def _accumulate():
    total = 0
    while True:
        sent = yield total
        if sent is None:
            return total
        total += sent


def test_the_value_a_generator_returns_rides_on_its_stop_iteration() -> None:
    def f(x):
        g = _accumulate()
        next(g)
        g.send(1)
        g.send(2)
        try:
            g.send(None)
        except StopIteration as stop:
            total = stop.value
        try:
            next(g)
        except StopIteration as stop:  # a finished generator's StopIteration carries nothing
            again = stop.value
        return x * total, again

    x = torch.ones(2)
    got, graphs = _compiled(f, x)
    assert _same(got, f(x)) and graphs == 1


def _returns_seven():
    yield 1
    return 7


class _StopSubclass(StopIteration):
    pass


class _StopsWithValue:
    def __iter__(self):
        return self

    def __next__(self):
        raise _StopSubclass(99)


def test_next_raises_the_iterators_own_stop_iteration() -> None:
    """`next(g)` on a generator that returns carries what it returned, as `g.send(None)` does,
    and `next(it)` on a user's iterator raises the very StopIteration its `__next__` raises
    (a value, a subclass): they were replaced by a bare StopIteration()."""
    def f(x):
        g = _returns_seven()
        x = x + next(g)
        try:
            next(g)
        except StopIteration as stop:
            returned = stop.value
        try:
            next(_StopsWithValue())
        except StopIteration as stop:
            own = (type(stop).__name__, stop.value)
        return x * returned, own

    x = torch.ones(2)
    got, graphs = _compiled(f, x)
    assert _same(got, f(x)) and got[1] == ("_StopSubclass", 99) and graphs == 1


def _cleaned_up(x):
    try:
        yield x
        yield x * 2
    finally:
        log.append("cleaned up")


def test_a_generator_dropped_inside_its_try_block_is_closed_where_eager_closes_it() -> None:
    """Python closes a generator when its last reference goes: at the `break`, before the
    next statement (the trace closes it there, in the graph: its cleanup's writes and ops in
    eager's order)."""
    def f(x):
        for v in _cleaned_up(x):  # noqa: B007 (v is used after the loop)
            break
        log.append("after the loop")
        return v + 1

    expected, expected_log, result, got_log, graphs = _eager_and_compiled(f, torch.ones(2))
    assert expected_log == ["cleaned up", "after the loop"]
    assert _same(result, expected) and got_log == expected_log and graphs == 1

    def at_a_break(x):
        v = next(_cleaned_up(x))  # a temporary: dropped as `next` returns
        print("a break")
        log.append("after the break")
        return v + 1

    expected, expected_log, result, got_log, graphs = _eager_and_compiled(
        at_a_break, torch.ones(2), fullgraph=False)
    assert _same(result, expected) and got_log == expected_log and graphs == 1

    def in_a_helper(x):
        def first(x):
            g = _cleaned_up(x)
            return next(g)  # `g` goes with the helper's frame

        v = first(x)
        log.append("after the call")
        return v * 2

    expected, expected_log, result, got_log, graphs = _eager_and_compiled(in_a_helper,
                                                                          torch.ones(2))
    assert _same(result, expected) and got_log == expected_log and graphs == 1


def _summed_in_cleanup(x, out):
    try:
        yield x
        yield x
    finally:
        out.append(x.sum() * 2)


def _without_grad(x):
    with torch.no_grad():
        yield x + 1
        yield x + 2


def test_a_dropped_generators_cleanup_is_seen_by_the_code_after_it() -> None:
    def f(x):
        out = []
        for v in _summed_in_cleanup(x, out):  # noqa: B007
            break
        return v + out[0]  # eager: the cleanup has run (compiled, it raised IndexError)

    def g(x):
        for v in _without_grad(x):  # noqa: B007
            break
        return v * 2, torch.is_grad_enabled()  # the generator's no_grad block has ended

    for fn in (f, g):
        expected, _, result, _, graphs = _eager_and_compiled(fn, torch.ones(2))
        assert _same(result, expected) and graphs == 1
    assert torch.is_grad_enabled()


_kept = []


def test_a_generator_still_referenced_is_not_closed() -> None:
    def f(x):
        lst = [_cleaned_up(x)]
        g = lst[0]
        a = next(g)
        del g  # the list still holds it
        log.append("after del")
        lst = None  # now the last reference goes
        log.append("after the list")
        return a

    expected, expected_log, result, got_log, graphs = _eager_and_compiled(f, torch.ones(2))
    assert expected_log == ["after del", "cleaned up", "after the list"]
    assert _same(result, expected) and got_log == expected_log and graphs == 0

    def kept(x):
        g = _cleaned_up(x)
        a = next(g)
        _kept.append(g)  # outlives the call: not closed
        del g
        log.append("after del")
        return a

    try:
        expected, expected_log, result, got_log, _ = _eager_and_compiled(kept, torch.ones(2),
                                                                         fullgraph=False)
        assert _same(result, expected) and got_log == expected_log == ["after del"]
    finally:
        _kept.clear()
        gc.collect()  # the compiling call's records hold one too: its cleanup runs here


def _delegating(x, n):
    yield from numbered(x, n)


def _delegating_in_a_try(x):
    try:
        yield from _delegating(x, 3)
    finally:
        log.append("cleaned up")


def test_a_generator_left_inside_yield_from_is_not_inside_a_block() -> None:
    """3.12 guards `yield from` with a handler that closes the delegate: not a try block of
    the user's (the generator is closed at the return, as Python would), unless one is around."""
    def f(x):
        return next(_delegating(x, 3)) + next(iter(_delegating(x, 2)))

    expected, expected_log, result, got_log, graphs = _eager_and_compiled(f, torch.ones(2))
    assert _same(result, expected) and got_log == expected_log and graphs == 1

    def g(x):
        first = next(_delegating_in_a_try(x))  # closed as `next` returns, as in Python
        log.append("returning")
        return first + 1

    expected, expected_log, result, got_log, graphs = _eager_and_compiled(g, torch.ones(2))
    assert expected_log[-2:] == ["cleaned up", "returning"]
    assert _same(result, expected) and got_log == expected_log and graphs == 1


def _inner_cleaned(x):
    try:
        yield x
        yield x
    finally:
        log.append("inner cleaned up")


def _outer_cleaned(x):
    try:
        yield from _inner_cleaned(x)
    finally:
        log.append("outer cleaned up")


def test_closing_a_generator_in_yield_from_closes_its_delegate_first() -> None:
    def f(x):
        v = next(_outer_cleaned(x))
        log.append("after")
        return v + 1

    expected, expected_log, result, got_log, graphs = _eager_and_compiled(f, torch.ones(2))
    assert expected_log == ["inner cleaned up", "outer cleaned up", "after"]
    assert _same(result, expected) and got_log == expected_log and graphs == 1


def test_throw_into_a_generator_in_yield_from_runs_eagerly() -> None:
    """CPython throws into the delegate first (which may catch it and return): not followed
    (the generators run for real)."""
    def _inner(x):
        try:
            yield x
        except ValueError:
            return x * 3

    def _outer(x):
        got = yield from _inner(x)
        yield got

    def f(x):
        gen = _outer(x)
        next(gen)
        return gen.throw(ValueError())

    x = torch.ones(2)
    torch.testing.assert_close(dynamo.compile(f, backend="eager")(x), f(x))
    assert dynamo.explain(f)(x).graph_break_count > 0


def _named(name, x):
    try:
        yield x + 1
        yield x + 2
    finally:
        log.append(name)


def test_generators_dropped_together_close_in_the_order_python_frees_them() -> None:
    """A frame's locals go in slot order, a dict's entries first to last, a list's items
    last to first."""
    def helper(x):
        a = _named("a", x)
        next(a)
        b = _named("b", x)
        next(b)
        return x * 2

    def in_a_helper(x):
        return helper(x)

    def in_a_dict(x):
        d = {"a": _named("a", x), "b": _named("b", x)}
        next(d["a"])
        next(d["b"])
        d = None
        return x

    def in_a_list(x):
        items = [_named("a", x), _named("b", x)]
        next(items[0])
        next(items[1])
        items = None
        return x

    def at_the_return(x):
        b = None
        a = _named("a", x)
        b = _named("b", x)
        return next(a) + next(b)

    for fn in (in_a_helper, in_a_dict, in_a_list, at_the_return):
        expected, expected_log, result, got_log, graphs = _eager_and_compiled(fn, torch.ones(2))
        assert _same(result, expected) and got_log == expected_log, (fn, got_log, expected_log)


def test_a_generator_the_frame_hands_out_lives_on() -> None:
    """Returned, or stored where the caller sees it: not closed at the return."""
    def returned(x):
        g = _cleaned_up(x)
        return next(g), g

    def stored(x, out):
        g = _cleaned_up(x)
        first = next(g)
        out.append(g)
        return first

    log.clear()
    first, g = dynamo.compile(returned, backend="eager")(torch.ones(2))
    assert log == [] and torch.equal(next(g), torch.ones(2) * 2)
    out = []
    dynamo.compile(stored, backend="eager")(torch.ones(2), out)
    assert log == [] and torch.equal(next(out[0]), torch.ones(2) * 2)
    g.close()
    out[0].close()
    assert log == ["cleaned up", "cleaned up"]


def test_a_stray_stop_iteration_and_throw_into_any_generator_act_as_in_eager() -> None:
    """PEP 479's RuntimeError has the StopIteration as cause and context; `throw(ValueError)`
    takes the class; a throw into a generator not started, or exhausted, raises out of
    `throw()` itself and runs none of its body."""
    seen = []

    def stray():
        yield 1
        raise StopIteration

    def counted():
        seen.append("ran")
        yield 1

    def f(x):
        try:
            list(stray())
        except RuntimeError as e:
            seen.append((type(e.__cause__).__name__, type(e.__context__).__name__,
                        e.__suppress_context__))
        gen = counted()
        try:
            gen.throw(ValueError)
        except ValueError as e:
            seen.append(("class", type(e).__name__))
        done = counted()
        next(done)
        next(done, None)
        try:
            done.throw(KeyError("k"))
        except KeyError as e:
            seen.append(("exhausted", e.args))
        return x + 1

    x = torch.ones(2)
    f(x)
    want, seen[:] = list(seen), []
    out, graphs = _compiled(f, x)
    torch.testing.assert_close(out, x + 1)
    assert graphs == 1
    assert seen == want


def _cleanup_logged(sink):
    try:
        yield 1
        yield 2
    finally:
        sink.append("generator closed")


def test_a_generator_called_at_a_break_lives_until_the_frame_ends() -> None:
    """A generator called for real at a break and never read again is still the frame's
    local: Python closes it when the frame ends, after the rest of the body. Not handed to
    the resume function (a dead local), it was closed at the break, its `finally` running
    before the body's remaining code."""
    def f(sink, x):
        g = _cleanup_logged(sink)
        x = x + next(g)
        print("a break")
        sink.append("body end")
        return x

    expected: list = []
    f(expected, torch.ones(2))
    compiled = dynamo.compile(f, backend="eager")
    with contextlib.redirect_stdout(io.StringIO()):
        compiled([], torch.ones(2))  # (the compiling call: see the report)
        got: list = []
        compiled(got, torch.ones(2))
    assert got == expected == ["body end", "generator closed"]


def test_a_dead_generator_with_nothing_to_clean_up_is_not_handed_on():
    """A generator the trace made, dead at a break and suspended outside any try or with
    block, closes doing nothing: it is not handed on to the resume function (a half-run one
    cannot be rebuilt: its `next()` became a graph break, and a third graph)."""
    def fn(x):
        y = x * 2
        g = (i for i in range(3))
        y = y + next(g)
        print("break")
        return y + 1

    with contextlib.redirect_stdout(io.StringIO()):
        explained = dynamo.explain(fn)(torch.ones(2))
        assert dynamo.compile(fn, backend="eager")(torch.ones(2)).tolist() == [3.0, 3.0]
    assert explained.graph_count == 2, explained.breaks
    assert len(explained.breaks) == 1, explained.breaks
