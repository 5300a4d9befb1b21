"""The standard library around models: itertools, functools.reduce/lru_cache, operator's
getters, heapq, bisect, Counter, sorting with a key, namedtuple methods, `list.index`, `divmod` of symbolic sizes, and
buffers reassigned in a forward (running statistics). Each program is one graph with
fullgraph=True and gives eager's results."""

from __future__ import annotations

import bisect
import collections
import enum
import functools
import heapq
import io
import itertools
import logging
import operator
import random
import re
import typing

import pytest
import torch

import dynamo


def _one_graph(fn, *args):
    graphs = []

    def counting(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    result = dynamo.compile(fn, backend=counting, fullgraph=True)(*args)
    assert len(graphs) == 1
    return result


def _same(a, b):
    if isinstance(a, torch.Tensor):
        return torch.allclose(a, b)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(map(_same, a, b))
    return a == b


def test_partial_of_what_is_not_callable_raises():
    """`functools.partial(3)` made a partial in the trace where Python raises a TypeError (a
    `try` around it caught nothing; at a later graph break the partial, rebuilt outside the
    `try`, raised the error uncaught)."""
    def f(x):
        errors = []
        for make in (lambda: functools.partial(3), lambda: functools.partial()):
            try:
                make()
            except TypeError as e:
                errors.append(str(e))
        return functools.partial(torch.add, alpha=2)(x, x), errors

    got = _one_graph(f, torch.ones(2))
    assert _same(got, f(torch.ones(2)))

def test_sum_of_strings_raises_as_python_does():
    """`sum(["a", "b"], "")` joined the strings in the trace, where Python refuses a str or
    bytes start with a TypeError."""
    def f(x):
        errors = []
        for total in (lambda: sum(["a", "b"], ""), lambda: sum([b"a"], b""), lambda: sum([1], "a")):
            try:
                total()
            except TypeError as e:
                errors.append(str(e))
        return sum([x, x], x), sum([[1], [2]], []), errors

    got = _one_graph(f, torch.ones(2))
    assert _same(got, f(torch.ones(2)))

def test_itertools_reduce_and_getters():
    def f(x, ys):
        chained = [a + 1 for a in itertools.chain([x], ys, (x * 3,))]
        flat = [a * 2 for a in itertools.chain.from_iterable([[x], ys])]
        picked = list(itertools.islice(itertools.count(), 2, 8, 2))
        running = list(itertools.accumulate(ys, operator.mul))
        padded = [b is None for _, b in itertools.zip_longest(ys, [x])]
        pairs = [a * b for a, b in itertools.product(ys, repeat=2)]
        diffs = [a - b for a, b in itertools.combinations(ys, 2)]
        orders = len(list(itertools.permutations(range(4), 2)))
        steps = [b - a for a, b in itertools.pairwise(ys)]
        total = functools.reduce(operator.add, ys)
        scaled = functools.reduce(lambda a, b: a * b, ys, x)
        second = operator.itemgetter(1)(ys)
        shape = operator.attrgetter("shape")(x)
        return (chained, flat, picked, running, padded, pairs, diffs, orders, steps, total,
                scaled, second, shape)

    x, ys = torch.randn(3), [torch.randn(3) for _ in range(3)]
    assert _same(_one_graph(f, x, ys), f(x, ys))


class _LoggedHash:
    """A key whose `__hash__` logs each call (it has no `__eq__`: found by identity)."""

    def __init__(self, value, log):
        self.value, self.log = value, log

    def __hash__(self):
        self.log.append(self.value)
        return hash(self.value)


def test_counter_of_keys_with_their_own_hash_hashes_them_as_eager():
    """`Counter(keys)` of objects whose class has a `__hash__` of its own runs it once per
    item, in the frame, at every call, as CPython's counting does: the trace used to run it
    for real while tracing (twice an item, get then set) and never in the compiled frame."""
    def f(x, keys):
        counts = collections.Counter(keys)
        return x + 1, counts[keys[0]]

    log = []
    keys = [_LoggedHash(0, log), _LoggedHash(1, log)]
    keys.append(keys[0])
    expected = f(torch.ones(2), keys)
    expected_log = list(log)
    compiled = dynamo.compile(f, backend="eager")
    for _ in range(2):  # the call that compiles, then the one that reuses the code
        log.clear()
        assert _same(compiled(torch.ones(2), keys), expected) and log == expected_log


class _LoggedValueHash(_LoggedHash):
    def __eq__(self, other):
        return isinstance(other, _LoggedValueHash) and other.value == self.value

    __hash__ = _LoggedHash.__hash__


def test_a_counter_made_at_a_break_is_read_without_hashing_its_keys_again():
    """A Counter made for real (its keys, compared by value, are not traced) and then read by
    the trace is copied by the hashes it holds: the copy hashed every key again, a call of
    `__hash__` eager never makes."""
    def f(x, log):
        counts = collections.Counter(_LoggedValueHash(i % 2, log) for i in range(4))
        return x + 1, sorted(n for _, n in counts.items())

    expected_log, log = [], []
    expected = f(torch.ones(2), expected_log)
    assert _same(dynamo.compile(f, backend="eager")(torch.ones(2), log), expected)
    assert log == expected_log == [0, 1, 0, 1]


def test_heapq_bisect_and_counter_are_followed():
    def f(x, pending, schedule):
        heap = []
        for i, score in enumerate([0.3, 0.1, 0.7, 0.2]):
            heapq.heappush(heap, (score, i))
        best = heapq.heappop(heap)
        heapq.heappush(pending, (1.5, 9))  # a list from the frame: the push is replayed
        heapq.heapify(schedule)
        replaced = heapq.heapreplace(schedule, 10)
        kept = heapq.heappushpop(schedule, -1)
        top = heapq.nlargest(2, [5, 1, 9, 3]) + heapq.nsmallest(2, [5, 1, 9, 3], key=lambda v: -v)
        steps = [10, 20, 30]
        stage = bisect.bisect_right(steps, 20) + bisect.bisect_left(steps, 20)
        by_key = bisect.bisect(steps, 2, key=lambda v: v // 10)
        bisect.insort(steps, 25)
        bisect.insort_left(steps, 20)
        counts = collections.Counter("abracadabra")
        return (x * best[0] + stage, heap, replaced, kept, top, by_key, steps,
                counts.most_common(2), schedule)

    x = torch.randn(3)
    pending, mine = [(0.5, 1)], [(0.5, 1)]
    expected = f(x, mine, [7, 3, 5, 1])
    assert _same(_one_graph(f, x, pending, [7, 3, 5, 1]), expected) and pending == mine

    def edges(x, steps):
        try:
            heapq.heappop([])
        except IndexError as error:
            message = str(error)
        return x * bisect.bisect_left(steps, 25, 0, -1), message  # hi=-1: the whole list (C)

    assert _same(_one_graph(edges, x, [10, 20, 30]), edges(x, [10, 20, 30]))


def test_cycle_compress_filterfalse_groupby_and_cmp_to_key():
    def f(x):
        cycled = list(itertools.islice(itertools.cycle([1, 2, 3]), 7))
        kept = list(itertools.compress("abcdef", [1, 0, 1, 0, 1, 1]))
        odd = list(itertools.filterfalse(lambda v: v % 2, range(10)))
        falsy = list(itertools.filterfalse(None, [0, 1, 0, 2]))
        runs = [(k, list(g)) for k, g in itertools.groupby("aaabbcaa")]
        parity = [(k, len(list(g))) for k, g in itertools.groupby([1, 3, 2, 4, 5],
                                                                  key=lambda v: v % 2)]
        stale = [(k, list(g)) for k, g in [*itertools.groupby("aab")]]  # groups taken past
        firsts = [next(g) for _, g in itertools.groupby([1, 1, 2, 2, 2, 3])]
        descending = sorted([3, 1, 2], key=functools.cmp_to_key(lambda a, b: b - a))
        return x * sum(cycled), kept, odd, falsy, runs, parity, stale, firsts, descending

    x = torch.randn(3)
    assert _same(_one_graph(f, x), f(x))


def test_lazy_itertools_stop_where_python_stops():
    taken = []

    def numbers(x):
        for i in range(10):
            taken.append(i)
            yield x * i

    def f(x):
        return list(itertools.islice(numbers(x), 3)), list(itertools.takewhile(
            lambda t: len(taken) < 6, numbers(x)))

    x = torch.randn(2)
    expected = f(x)
    expected_taken = list(taken)
    taken.clear()
    assert _same(_one_graph(f, x), expected) and taken == expected_taken


def test_sorting_with_a_key_and_index_and_divmod():
    Item = collections.namedtuple("Item", "score value")

    def f(x, n):
        items = [Item(3, x), Item(1, x * 2), Item(2, x * 3)]
        ranked = sorted(items, key=operator.attrgetter("score"), reverse=True)
        ascending = list(items)
        ascending.sort(key=lambda item: item.score)
        best = ranked[0]._replace(score=10)
        position = items.index(items[2])
        rows, rest = divmod(x.shape[0], n)
        return [i.value for i in ranked], ascending[0].value, best._asdict(), position, rows, rest

    x = torch.randn(7)
    result = _one_graph(f, x, 2)
    expected = f(x, 2)
    assert _same(result[:2], expected[:2]) and result[3:] == expected[3:]
    assert result[2]["score"] == 10 and torch.equal(result[2]["value"], expected[2]["value"])


def test_divmod_of_a_symbolic_size():
    def f(x):
        rows, rest = divmod(x.shape[0], 4)
        return x[: rows * 4].reshape(rows, 4).sum(1), rest

    compiled = dynamo.compile(f, backend="eager", dynamic=True, fullgraph=True)
    for n in (9, 14):
        x = torch.randn(n)
        assert _same(compiled(x), f(x))


def test_running_statistics_reassigned_to_buffers():
    class Running(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("count", torch.zeros((), dtype=torch.long))
            self.register_buffer("mean", torch.zeros(3))

        def forward(self, x):
            self.count += 1
            self.mean = 0.9 * self.mean + 0.1 * x.mean(0)
            return x - self.mean

    eager, traced = Running(), Running()
    compiled = dynamo.compile(traced, backend="eager", fullgraph=True)
    for _ in range(3):
        x = torch.randn(4, 3)
        assert torch.allclose(compiled(x), eager(x))
    assert int(traced.count) == 3 and torch.allclose(traced.mean, eager.mean)
    assert dict(traced.named_buffers()).keys() == {"count", "mean"}


@functools.cache
def squares(n):
    return tuple(i * i for i in range(n))


class Once(logging.Logger):
    @functools.lru_cache(None)  # noqa: B019 - the pattern Hugging Face's warning_once uses
    def warning_once(self, message):
        self.warning(message)


def test_lru_cache_functions_are_inlined_and_keep_their_cache_at_a_break():
    stream = io.StringIO()
    logger = Once("dynamo-test-once")
    logger.addHandler(logging.StreamHandler(stream))

    def f(x):
        logger.warning_once("said once")
        return x * sum(squares(4))

    x = torch.ones(2)
    assert torch.equal(_one_graph(lambda x: x * sum(squares(4)), x), x * 14)
    compiled = dynamo.compile(f, backend="eager")
    for _ in range(3):
        assert torch.equal(compiled(x), x * 14)
    assert stream.getvalue() == "said once\n"


def test_defaultdict_and_ordereddict_made_in_the_frame_and_from_it():
    seen = collections.defaultdict(list)

    def f(xs):
        groups = collections.defaultdict(list)
        for i, x in enumerate(xs):
            groups[i % 2].append(x * 2)
        counts = collections.defaultdict(int)
        for i in range(5):
            counts[i % 3] += 1
        ordered = collections.OrderedDict(first=xs[0])
        ordered["second"] = xs[1]
        seen["calls"].append(len(xs))  # a defaultdict from the frame makes the missing key
        return groups, counts, ordered

    xs = [torch.randn(2) for _ in range(4)]
    groups, counts, ordered = _one_graph(f, xs)
    assert type(groups) is collections.defaultdict and groups.default_factory is list
    assert all(torch.equal(a, b * 2) for a, b in zip(groups[0] + groups[1], xs[::2] + xs[1::2]))
    assert dict(counts) == {0: 2, 1: 2, 2: 1} and counts.default_factory is int
    assert type(ordered) is collections.OrderedDict and list(ordered) == ["first", "second"]
    assert seen == {"calls": [4]}


def test_deques_made_in_the_frame_and_from_it():
    def f(x, window):
        window.append(x)  # a deque from the frame, trimmed to its maxlen
        smooth = torch.stack(list(window)).mean(0)
        local = collections.deque([x, x * 2], maxlen=4)
        local.appendleft(x * 3)
        local.extend([x * 4, x * 5])
        local.rotate(1)
        first = local.popleft()
        return smooth, local, first, len(window)

    eager_window, window = collections.deque(maxlen=3), collections.deque(maxlen=3)
    compiled = dynamo.compile(f, backend="eager", fullgraph=True)
    for i in range(5):
        x = torch.full((2,), float(i))
        got, want = compiled(x, window), f(x, eager_window)
        assert type(got[1]) is collections.deque and got[1].maxlen == 4
        assert _same(got[0], want[0]) and _same(list(got[1]), list(want[1]))
        assert _same(got[2], want[2]) and got[3] == want[3]
        assert _same(list(window), list(eager_window))


def test_tuple_ordering_ordereddict_reordering_and_symbolic_dict_keys():
    import contextlib
    import warnings

    table = {0: "zero", 1: "one", 20: "twenty"}

    def f(x):
        groups = collections.defaultdict(list)
        groups["b"].append(x)
        groups["a"].append(x * 2)
        ordered = [k for k, _ in sorted(groups.items())]  # tuples: the keys decide
        d = collections.OrderedDict((f"r{i}", x * i) for i in range(3))
        d.move_to_end("r0")
        d.move_to_end("r2", last=False)
        last, first = d.popitem()[0], d.popitem(last=False)[0]
        return ordered, (1, x) < (2, x), list(d), last, first, d["r1"]

    assert _same(_one_graph(f, torch.ones(2)), f(torch.ones(2)))

    def g(x, level):  # `level` crosses the break as a symbolic int
        y = x + 1
        print("", end="")
        return y, table[level], table.get(level), level in table

    compiled = dynamo.compile(g, backend="eager")
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for level in (20, 0, 1):
            assert _same(compiled(torch.ones(1), level), g(torch.ones(1), level))


def test_iterators_shared_with_islice_and_zip_are_consumed_as_in_python():
    def f(x):
        src = iter(range(10))
        window = list(itertools.islice(src, 2, 4))
        after_islice = next(src)
        other = iter(range(10))
        pairs = list(zip(other, "ab"))  # takes a third item from `other`, then stops
        bounds = (*(2, 4), None)[:3]  # a None folded from constants stays None
        return x + 1, window, after_islice, pairs, next(other), bounds[2] or 1

    assert _same(_one_graph(f, torch.ones(1)), f(torch.ones(1)))


def test_combinations_with_a_negative_r_raise_value_error():
    def f(x):
        messages = []
        for make in (itertools.combinations, itertools.permutations):
            try:
                list(make([1, 2], -1))
            except ValueError as error:
                messages.append(str(error))
        return x + 1, messages

    assert _same(_one_graph(f, torch.ones(1)), f(torch.ones(1)))


def test_tying_or_appending_parameters_after_compiling_is_noticed():
    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = torch.nn.Linear(2, 2), torch.nn.Linear(2, 2)
            self.extra = torch.nn.ParameterList([torch.nn.Parameter(torch.ones(2))])

        def forward(self, x):
            for p in self.extra:
                x = x + p
            return x * sum(p.sum() for p in self.parameters()), len(list(self.parameters()))

    torch.manual_seed(0)
    model = Net()
    compiled = dynamo.compile(model, backend="eager")
    x = torch.ones(2)
    steps = [lambda: None,
             lambda: setattr(model.b, "weight", model.a.weight),  # tied: one parameter less
             lambda: setattr(model.b, "weight", torch.nn.Parameter(torch.ones(2, 2))),  # untied
             lambda: model.extra.append(torch.nn.Parameter(torch.full((2,), 10.0)))]
    for change in steps:
        change()
        assert _same(compiled(x), model(x))


class _Out(typing.NamedTuple):
    logits: torch.Tensor
    scale: int = 2

    def total(self):
        return self.logits.sum() * self.scale

    @property
    def probs(self):
        return self.logits.softmax(-1)

    @staticmethod
    def bumped(t):
        return t + 1

    @classmethod
    def build(cls, t):
        return cls(t, 3)


def test_methods_of_a_named_tuple_class_are_inlined_and_guarded():
    def use(out, x):
        made = _Out.build(x)
        return out.total(), out.probs, out.bumped(x), made.total(), made.probs

    def made_only(x):
        return _Out(x).total()

    x = torch.randn(4)
    for args in ((_Out(torch.randn(4)), x), (_Out(torch.randn(4), 5), x)):
        assert _same(_one_graph(use, *args), use(*args))
    compiled = dynamo.compile(made_only, backend="eager")
    assert _same(compiled(x), made_only(x))
    original = _Out.total
    try:
        _Out.total = lambda self: self.logits.sum() * 100  # a method replaced on the class
        assert _same(compiled(x), made_only(x))
    finally:
        _Out.total = original


class _Spec(typing.NamedTuple):  # constants only: from the frame, a constant, guarded by value
    dim: int
    act: str = "relu"

    def apply(self, t):
        return getattr(torch, self.act)(t) * self.dim


def test_methods_of_a_named_tuple_of_constants_from_the_frame_take_tensors():
    def use(spec, x):
        return spec.apply(x), spec._replace(dim=x.shape[0]).apply(x), spec._replace(dim=x)

    x = torch.randn(4)
    for spec in (_Spec(2), _Spec(3, "tanh")):
        assert _same(_one_graph(use, spec, x), use(spec, x))


class _Act(enum.Enum):
    RELU = functools.partial(torch.relu)
    TANH = enum.member(torch.tanh)


def test_an_enum_member_whose_value_is_a_function_is_called_in_the_graph():
    def use(act, x):
        return act.value(x) + _Act.RELU.value(x)

    x = torch.randn(4)
    for act in _Act:
        assert _same(_one_graph(use, act, x), use(act, x))


def test_min_and_max_of_tensors_by_a_key():
    def longest(ts, d):
        return max(ts, key=lambda t: t.shape[0]) * 2, min(ts, key=len), \
            max(d.values(), key=lambda t: t.numel())

    ts = [torch.randn(3), torch.randn(5), torch.randn(2)]
    d = {"a": torch.randn(2, 2), "b": torch.randn(7)}
    assert _same(_one_graph(longest, ts, d), longest(ts, d))


def test_a_break_inside_the_standard_library_is_reported_at_the_users_line():
    pair = collections.namedtuple("pair", "a b")

    def f(x):
        p = pair._make([x, 2])  # the break is inside collections' `_make`
        return p.a + 1

    explained = dynamo.explain(f)(torch.randn(3))
    (error,) = explained.breaks
    assert (error.filename, error.lineno) == (__file__, f.__code__.co_firstlineno + 1)
    assert "inside the standard library at collections/__init__.py:" in str(explained)


def test_len_of_a_long_range_is_not_counted_one_by_one():
    def f(x):
        return x + len(range(10**6))  # (seconds, and memory, when counted one by one)

    assert _same(_one_graph(f, torch.ones(1)), f(torch.ones(1)))


def test_namedtuple_make_of_a_constant_from_the_frame() -> None:
    Cfg = collections.namedtuple("Cfg", ["scale", "shift"])

    def f(c, x):
        return x * c._make([5.0, 1.0]).scale + c._make(iter((1.0, 2.0))).shift

    x = torch.ones(2)
    assert torch.equal(dynamo.compile(f, backend="eager", fullgraph=True)(Cfg(2.0, 1.0), x),
                       f(Cfg(2.0, 1.0), x))


def test_the_c_functions_with_python_twins_are_themselves_as_values():
    """`functools.reduce`, `itertools.count` read as values (returned, stored, given to
    `isinstance`, called for real) are the C originals, not dynamo's twins."""
    def f(x, out):
        out.append(functools.reduce)
        c = itertools.count(3)
        return x + 1, heapq.heappush, type(functools.reduce).__name__, \
            isinstance(c, itertools.count), isinstance(itertools.islice(c, 2), itertools.count), \
            isinstance(operator.itemgetter(1), operator.itemgetter), \
            isinstance(operator.itemgetter(1), operator.attrgetter)

    out = []
    _, push, *rest = _one_graph(f, torch.ones(1), out)
    assert out == [functools.reduce] and push is heapq.heappush
    assert rest == ["builtin_function_or_method", True, False, True, False]

    def g(x):
        c = itertools.count(3)
        next(c)
        return x + 1, c  # a break: made for real

    _, c = dynamo.compile(g, backend="eager")(torch.ones(1))
    assert type(c) is itertools.count and next(c) == 4


def test_itertools_take_their_iterables_and_check_their_arguments_when_made():
    def f(x, a, d):
        p, c, m = itertools.product(a, repeat=2), itertools.combinations(a, 2), \
            itertools.permutations(a, 2)
        r = itertools.combinations_with_replacement(a, 2)
        a.append(3)
        z = itertools.zip_longest(d, [1])
        d["new"] = 1
        try:
            list(z)
            changed = ""
        except RuntimeError as error:
            changed = str(error)
        try:
            itertools.islice(a, -1)
            negative = ""
        except ValueError as error:
            negative = str(error)
        return x + 1, list(p), list(c), list(m), changed, negative, list(r)

    result = _one_graph(f, torch.ones(1), [1, 2], {"a": 1})
    assert _same(result, f(torch.ones(1), [1, 2], {"a": 1}))
    assert len(result[1]) == 4 and result[4] and result[5]


def test_errors_of_dict_list_set_and_deque_methods_are_eagers():
    """A missing key or item, an empty container: eager's exception, which the frame's own
    `except` catches (under fullgraph these were unsupported cases)."""
    bodies = ["del d['a']", "d.pop('a')", "{}.popitem()", "collections.OrderedDict().popitem()",
              "collections.OrderedDict(b=1).move_to_end('a')", "del l[5]", "l.remove(9)",
              "s.remove(9)", "collections.deque().pop()", "collections.deque([1]).remove(5)"]
    for body in bodies:
        namespace = {"collections": collections}
        exec(f"def f(x, d, l, s):\n    try:\n        {body}\n"
             f"    except (KeyError, IndexError, ValueError) as e:\n"
             f"        return x + 1, type(e).__name__, str(e)\n    return x, '', ''\n", namespace)
        f = namespace["f"]
        args = lambda: (torch.ones(1), {"b": 1}, [1, 2], {1})  # noqa: E731
        assert _same(_one_graph(f, *args()), f(*args())), body


def test_a_partials_parts_and_a_defaultdicts_factory_are_read():
    def f(x, p, d):
        q = functools.partial(torch.add, alpha=2)
        made = collections.defaultdict(list)
        return (p.func(x, *p.args, **p.keywords) + q.func(x, x, **q.keywords), len(q.args),
                made.default_factory, d.default_factory)

    args = (torch.ones(2), functools.partial(torch.mul, 3.0), collections.defaultdict(int))
    result = _one_graph(f, *args)
    assert _same(result, f(*args)) and result[2:] == (list, int)


def test_remove_past_an_item_that_may_equal_it_is_not_answered_while_tracing():
    """`l.remove(3)` past a symbolic size (which may be 3), an object with an `__eq__` of its
    own or a tensor: not a ValueError decided while tracing (a graph break; eager's answer)."""
    class Equal:
        def __eq__(self, other):
            return True

        __hash__ = object.__hash__

    def f(x, items):
        try:
            items.remove(3)
        except ValueError:
            return x - 1, len(items)
        return x + 1, len(items)

    compiled = dynamo.compile(f, backend="eager", dynamic=True)
    for n in (3, 4, 3):
        assert _same(compiled(torch.ones(1), [n, 5]), f(torch.ones(1), [n, 5]))
    assert _same(compiled(torch.ones(1), [Equal(), 5]), f(torch.ones(1), [Equal(), 5]))

    def g(x):
        items = [x.shape[0], 5]
        try:
            items.remove(3)
        except ValueError:
            return x - 1, len(items)
        return x + 1, len(items)

    compiled = dynamo.compile(g, backend="eager", dynamic=True)
    for n in (3, 4, 3):
        assert _same(compiled(torch.ones(n)), g(torch.ones(n)))


def test_a_partials_keywords_is_its_own_dict_and_a_partial_of_one_is_flattened():
    """`p.keywords` read in the trace was a copy: `p.keywords[k] = v` changed nothing (a stale
    answer, where eager calls with v); `partial(p, ...)` kept `p` as its `func`."""
    def mul(x, k=1, j=0):
        return x * k + j

    def f(x, p):
        p.keywords["k"] = 5
        made = functools.partial(mul, k=2)
        made.keywords["j"] = 1
        q = functools.partial(made, k=3)
        return p(x), made(x), q.func is mul, q.keywords, p.keywords is p.keywords

    args = lambda: (torch.ones(2), functools.partial(mul, k=2))  # noqa: E731
    eager_args, compiled_args = args(), args()
    result = _one_graph(f, *compiled_args)
    assert _same(result, f(*eager_args)) and result[2:] == (True, {"k": 3, "j": 1}, True)
    assert compiled_args[1].keywords == {"k": 5}  # the frame's partial changed for real


def test_remove_finds_the_item_itself_before_comparing():
    """`list.remove(n)` finds `n` by identity first, as Python does: a nan (never `==` to
    itself) was not found in the trace (eager's ValueError, the frame's `except` taken)."""
    import math

    def f(x):
        n = float("nan")
        items = [1, n, math.nan]
        try:
            items.remove(n)
            items.remove(math.nan)
        except ValueError:
            return x - 100
        return x + len(items)

    assert _same(_one_graph(f, torch.ones(2)), f(torch.ones(2)))


def test_a_partial_read_by_the_trace_is_still_flattened_by_partial():
    # `partial(p, k=1)` of a partial `p` is made over `p.func` unless `p` has a `__dict__`;
    # the trace made one (inspect.getattr_static of the allow_in_graph mark), so a partial
    # wrapped after a call was a partial of a partial, and its `.func`/`.args` not eager's
    def h(a, k=2):
        return a * k

    p = functools.partial(h, 2, k=3)
    compiled = dynamo.compile(lambda x: (x + 1, p.func, p.args, p()), backend="eager")
    compiled(torch.ones(1))
    wrapped = functools.partial(p, k=0.5)
    assert (wrapped.func, wrapped.args, wrapped.keywords) == (h, (2,), {"k": 0.5})


def _scaled(x, a=1, b=2):
    return x * a + b


def test_a_partial_given_a_dict_after_compiling_is_no_longer_flattened():
    """Python flattens `partial(p, ...)` into p's parts only while p has no `__dict__`: an
    attribute set on p after compiling is guarded, not a stale True."""
    p = functools.partial(_scaled, a=3)

    def f(x):
        return functools.partial(p, b=10).func is _scaled, x + 1

    compiled = dynamo.compile(f, backend="eager")
    assert compiled(torch.ones(1))[0] is True
    p.tag = 1
    assert compiled(torch.ones(1))[0] is f(torch.ones(1))[0] is False


class _Pair(typing.NamedTuple):
    a: torch.Tensor
    b: torch.Tensor


class _Doubled(_Pair):
    """A named tuple whose own `__new__` changes what it holds (as torch's PackedSequence)."""

    def __new__(cls, a, b=None):
        return super().__new__(cls, a * 2, a if b is None else b)


def test_named_tuple_subclass_with_its_own_new() -> None:
    """Calling a named tuple class whose own `__new__` is not the namedtuple one is a break
    (the tuple was built from the arguments, the `__new__` skipped); one that escapes the
    frame is rebuilt as `tuple.__new__` builds it (`cls(*items)` ran the `__new__` again on
    the items it had made)."""
    def made(x):
        q = _Doubled(x, x + 1)
        return q.a + q.b

    def defaulted(x):
        return _Doubled(x).a

    def replaced(q):
        return q._replace(b=q.b * 2)

    x = torch.ones(2)
    for fn, arg in ((made, x), (defaulted, x), (replaced, _Doubled(x))):
        expected = fn(arg)
        got = dynamo.compile(fn, backend="eager")(arg)
        assert type(got) is type(expected)
        torch.testing.assert_close(tuple(got) if isinstance(got, tuple) else got,
                                   tuple(expected) if isinstance(expected, tuple) else expected)
    explained = dynamo.explain(made)(x)
    assert "_Doubled(): a named tuple class whose own __new__" in str(explained.breaks[0])
    assert dynamo.explain(replaced)(_Doubled(x)).graph_count == 1


class _Sized(typing.NamedTuple):
    rows: int = 1
    cols: int = 1


def _too_many() -> _Pair:
    return _Pair(1, 2, 3)


def test_calling_a_named_tuple_class_binds_its_fields_as_python_does() -> None:
    """Named tuple fields were bound by position only: a field given by keyword alone took
    the place of the first one left out (`_Sized(cols=5)` made rows=5), and an extra, unknown
    or repeated argument was dropped without Python's TypeError (an `NT(1, 2, 3)` made in a
    called function was a three-item tuple, whose `repr` at a later break raised another
    error)."""
    def f(x):
        made = [_Sized(cols=5), _Sized(3), _Sized(cols=2, rows=4)]
        errors = []
        for call in (_too_many, lambda: _Pair(1), lambda: _Sized(1, rows=2),
                     lambda: _Sized(depth=2)):
            try:
                call()
            except Exception as e:
                errors.append((type(e), str(e)))
        return x * made[0].rows, made, errors

    def broken_after(x):
        try:
            made = _too_many()
            return x, repr(made)  # (a break: repr of a named tuple)
        except Exception as e:
            return x + 1, str(e)

    assert _same(_one_graph(f, torch.ones(2)), f(torch.ones(2)))
    assert _same(dynamo.compile(broken_after, backend="eager")(torch.ones(2)),
                 broken_after(torch.ones(2)))


def _sparse_set() -> set:
    """A set whose table a copy lays out otherwise: `set(s)` iterates 64 first."""
    s = set(range(40))
    for i in range(36):
        s.discard(i)
    s.add(64)
    return s


def test_a_set_iterates_and_pops_in_eagers_order():
    """A set's order is its hash table's, and a copy may order the same items otherwise: the
    trace iterated a copy of a set argument (64 came first), popped from its copy (1 where
    eager pops 40, leaving the caller's set wrong) and wrote changes back by clear() and
    update()."""
    def iterated(x, s):
        return x + 1, [v for v in s]

    def popped(x, s):
        s.discard(3)
        s.add(40)
        return x * s.pop()

    def made(x):
        s = set(range(20))
        for i in range(15):
            s.discard(i)
        s.add(100)
        return x, list(s), s

    for fn, args in ((iterated, lambda: (torch.ones(1), _sparse_set())),
                     (popped, lambda: (torch.ones(1), {3, 16, 1, 8})),
                     (made, lambda: (torch.ones(1),))):
        eager_args, compiled_args = args(), args()
        expected = fn(*eager_args)
        got = dynamo.compile(fn, backend="eager")(*compiled_args)
        assert repr(got) == repr(expected), (fn.__name__, got, expected)
        assert repr(compiled_args) == repr(eager_args), (fn.__name__, compiled_args, eager_args)


def test_a_chain_map_made_in_the_frame_breaks_with_a_reason_in_words():
    """`len(ChainMap(a, b))` is `len(set().union(*maps))`: a set of the maps' keys, which the
    trace holds as constants only (the reason said "a dict where Python needs a constant")."""
    def f(x, over, base):
        return x * len(collections.ChainMap(over, base))

    args = (torch.ones(2), {"k": 2}, {"k": 1, "j": 3})
    explained = dynamo.explain(f)(*args)
    assert any("set.union() of a dict, not a constant" in b.reason for b in explained.breaks), \
        explained.breaks
    assert torch.equal(dynamo.compile(f, backend="eager")(*args), f(*args))


def test_the_top_one_of_heapq_and_counter_is_followed():
    """`heapq.nlargest(1, ...)` (and so `Counter.most_common(1)`) takes a sentinel
    `object()`, which was a break ("object() with no arguments")."""
    def f(x, words):
        counts = collections.Counter(words)
        (word, n), = counts.most_common(1)
        low = heapq.nsmallest(1, [5, 1, 9], key=lambda v: -v)
        return x * n, word, low, heapq.nlargest(1, [])

    x = torch.randn(3)
    words = ["a", "b", "a"]
    assert _same(_one_graph(f, x, words), f(x, words))


def test_a_sentinel_object_made_in_the_frame_is_itself():
    def f(x, options):
        missing = object()
        scale = options.get("scale", missing)
        try:
            missing.name = "no"
        except AttributeError as error:
            message = str(error)
        return (x if scale is missing else x * scale), missing, [missing, missing], message

    x = torch.randn(3)
    compiled = dynamo.compile(f, fullgraph=True)
    got, missing, both, message = compiled(x, {})
    assert torch.equal(got, x) and type(missing) is object and both == [missing, missing]
    assert message == f(x, {})[3]
    assert compiled(x, {})[1] is not missing  # a new one each call, as in eager
    assert torch.equal(compiled(x, {"scale": 2})[0], x * 2)


def test_a_builtin_showing_the_identity_of_an_object_made_in_the_frame_says_so():
    def hashed(x):
        return x + hash(object()) % 2

    def shown(x):
        return x + len(repr(object()))

    def keyed(x):
        key = object()
        return x + {key: 1}[key]

    x = torch.randn(3)
    for f, words in ((hashed, "hash() of an object made in the frame: it shows the object's "
                              "identity, known only when the program runs"),
                     (shown, "repr() of an object made in the frame"),
                     (keyed, "a dict key that is an object made in the frame (its hash is known "
                             "only when the program runs)")):
        with pytest.raises(dynamo.Unsupported, match=re.escape(words)):
            dynamo.compile(f, fullgraph=True)(x)
    assert torch.equal(dynamo.compile(keyed)(x), x + 1)


def test_the_random_module_breaks_in_its_own_words_and_runs_as_in_eager():
    def f(x):
        random.seed(0)
        return x * random.random() + random.randint(0, 9)

    x = torch.randn(3)
    for reason in (f"calling random.{name}, which uses the random module's global generator "
                   f"state (not traced)" for name in ("seed", "random", "randint")):
        assert reason in [b.reason for b in dynamo.explain(f)(x).breaks]
    with pytest.raises(dynamo.Unsupported, match=r"random\.seed.*\n  at .*test_stdlib\.py"):
        dynamo.compile(f, fullgraph=True)(x)
    random.seed(1)
    got, after = dynamo.compile(f)(x), random.random()
    random.seed(1)
    assert torch.equal(got, f(x)) and after == random.random()
