"""Python versions of C functions from the standard library, inlined in their place.

`itertools.chain`, `functools.reduce`, `operator.itemgetter`, `heapq.heappush` or
`bisect.bisect_right` are written in C: the tracer
cannot step through their bodies, so a call to one would be a graph break. (One twin stands
for a torch object instead: the profiler's `record_function`, a no-op in a compiled frame.) Each has a plain
Python twin here with the same behaviour (the lazy itertools check their arguments and take
their iterables when made, then make their items with a generator, when the loop takes them,
as in C), and the builder hands the tracer the twin instead,
after guarding that the name still means the C original (`POLYFILLS`).
"""

from __future__ import annotations

import bisect as _bisect
import collections
import contextlib
import functools
import heapq as _heapq
import itertools
import operator
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import torch


def dict_fromkeys(iterable: Iterable, value: Any = None) -> dict:
    """`dict.fromkeys`: the one `value` under every key."""
    return {key: value for key in iterable}


def call_until(function: Callable[[], Any], sentinel: Any) -> Iterator:
    """`iter(function, sentinel)`: what `function()` returns, up to the first result that is
    (or equals) `sentinel`, or until it raises StopIteration."""
    while True:
        try:
            value = function()
        except StopIteration:
            return
        if value is sentinel or sentinel == value:
            return
        yield value


def chain(*iterables: Iterable) -> Iterator:
    for iterable in iterables:
        yield from iterable


def chain_from_iterable(iterables: Iterable[Iterable]) -> Iterator:
    for iterable in iterables:
        yield from iterable


chain.from_iterable = chain_from_iterable  # type: ignore[attr-defined]


# The iterators below check their arguments and take `iter()` of their iterables (`tuple()`
# of the pools of `product`, `combinations`, `permutations`) when they are made, as the C
# ones do: a list appended to after `product(a, a)` is made does not change its items, and
# `islice(it, -1)` raises at once. The items are then made by a generator.


def _bound(value: Any, message: str, least: int) -> int | None:
    """An argument of `islice`: None, or an int at least `least` (else C's ValueError)."""
    if value is None:
        return None
    try:
        index = operator.index(value)
    except TypeError:
        index = least - 1
    if index < least:
        raise ValueError(message)
    return index


def islice(iterable: Iterable, *bounds: int | None) -> Iterator:
    if not 1 <= len(bounds) <= 3:
        raise TypeError(f"islice expected at most 4 arguments, got {len(bounds) + 1}")
    start, stop, step = (None, bounds[0], None) if len(bounds) == 1 else (*bounds, None)[:3]
    stop = _bound(stop, "Stop argument for islice() must be None or an integer: "
                  "0 <= x <= sys.maxsize.", 0)
    start = _bound(start, "Indices for islice() must be None or an integer: "
                   "0 <= x <= sys.maxsize.", 0) or 0
    step = _bound(step, "Step for islice() must be a positive integer or None.", 1) or 1
    return _islice(iter(iterable), start, stop, step)


def _islice(iterator: Iterator, start: int, stop: int | None, step: int) -> Iterator:
    index = 0
    while stop is None or index < stop:
        try:
            item = next(iterator)
        except StopIteration:
            return
        if index >= start and (index - start) % step == 0:
            yield item
        index += 1


def accumulate(iterable: Iterable, func: Callable | None = None, *,
               initial: Any = None) -> Iterator:
    return _accumulate(iter(iterable), func, initial)


def _accumulate(iterable: Iterator, func: Callable | None, initial: Any) -> Iterator:
    started = initial is not None
    total = initial
    if started:
        yield total
    for item in iterable:
        if started:
            total = func(total, item) if func is not None else total + item
        else:
            total, started = item, True
        yield total


def zip_longest(*iterables: Iterable, fillvalue: Any = None) -> Iterator[tuple]:
    return _zip_longest([iter(iterable) for iterable in iterables], fillvalue)


def _zip_longest(iterators: list[Iterator], fillvalue: Any) -> Iterator[tuple]:
    if not iterators:
        return
    done = [False] * len(iterators)
    while True:
        row = []
        for i, iterator in enumerate(iterators):
            if not done[i]:
                try:
                    row.append(next(iterator))
                    continue
                except StopIteration:
                    done[i] = True
            row.append(fillvalue)
        if all(done):
            return
        yield tuple(row)


def product(*iterables: Iterable, repeat: int = 1) -> Iterator[tuple]:
    if repeat < 0:
        raise ValueError("repeat argument cannot be negative")
    return _product([tuple(iterable) for iterable in iterables] * repeat)


def _product(pools: list[tuple]) -> Iterator[tuple]:
    rows: list[tuple] = [()]
    for pool in pools:
        rows = [row + (item,) for row in rows for item in pool]
    yield from rows


def combinations(iterable: Iterable, r: int) -> Iterator[tuple]:
    if r < 0:
        raise ValueError("r must be non-negative")
    return _combinations(tuple(iterable), r)


def combinations_with_replacement(iterable: Iterable, r: int) -> Iterator[tuple]:
    if r < 0:
        raise ValueError("r must be non-negative")
    return _combinations(tuple(iterable), r, again=1)


def _combinations(pool: tuple, r: int, again: int = 0) -> Iterator[tuple]:
    """Picks of `r` items in pool order; `again` 1 lets an item be picked again."""
    def pick(start: int, left: int) -> Iterator[tuple]:
        if left == 0:
            yield ()
            return
        for i in range(start, len(pool) - (left - 1) * (1 - again)):
            for rest in pick(i + 1 - again, left - 1):
                yield (pool[i], *rest)

    yield from pick(0, r)


def permutations(iterable: Iterable, r: int | None = None) -> Iterator[tuple]:
    if r is not None and r < 0:
        raise ValueError("r must be non-negative")
    pool = tuple(iterable)
    return _permutations(pool, len(pool) if r is None else r)


def _permutations(pool: tuple, size: int) -> Iterator[tuple]:

    def arrange(used: tuple[int, ...]) -> Iterator[tuple]:
        if len(used) == size:
            yield tuple(pool[i] for i in used)
            return
        for i in range(len(pool)):
            if i not in used:
                yield from arrange((*used, i))

    if size <= len(pool):
        yield from arrange(())


def pairwise(iterable: Iterable) -> Iterator[tuple]:
    return _pairwise(iter(iterable))


def _pairwise(iterator: Iterator) -> Iterator[tuple]:
    try:
        previous = next(iterator)
    except StopIteration:
        return
    for item in iterator:
        yield previous, item
        previous = item


def starmap(function: Callable, iterable: Iterable) -> Iterator:
    return _starmap(function, iter(iterable))


def _starmap(function: Callable, iterable: Iterator) -> Iterator:
    for args in iterable:
        yield function(*args)


def takewhile(predicate: Callable, iterable: Iterable) -> Iterator:
    return _takewhile(predicate, iter(iterable))


def _takewhile(predicate: Callable, iterable: Iterator) -> Iterator:
    for item in iterable:
        if not predicate(item):
            return
        yield item


def dropwhile(predicate: Callable, iterable: Iterable) -> Iterator:
    return _dropwhile(predicate, iter(iterable))


def _dropwhile(predicate: Callable, iterator: Iterator) -> Iterator:
    for item in iterator:
        if not predicate(item):
            yield item
            break
    yield from iterator


def repeat(value: Any, times: int | None = None) -> Iterator:
    made = 0
    while times is None or made < times:
        yield value
        made += 1


def count(start: Any = 0, step: Any = 1) -> Iterator:
    value = start
    while True:
        yield value
        value += step


def cycle(iterable: Iterable) -> Iterator:
    return _cycle(iter(iterable))


def _cycle(iterable: Iterator) -> Iterator:
    saved = []
    for item in iterable:
        yield item
        saved.append(item)
    while saved:
        yield from saved


def compress(data: Iterable, selectors: Iterable) -> Iterator:
    return _compress(iter(data), iter(selectors))


def _compress(data: Iterator, selectors: Iterator) -> Iterator:
    for item, selected in zip(data, selectors):
        if selected:
            yield item


def filterfalse(predicate: Callable | None, iterable: Iterable) -> Iterator:
    return _filterfalse(predicate, iter(iterable))


def _filterfalse(predicate: Callable | None, iterable: Iterator) -> Iterator:
    for item in iterable:
        if not (bool(item) if predicate is None else predicate(item)):
            yield item


def groupby(iterable: Iterable, key: Callable | None = None) -> Iterator[tuple[Any, Iterator]]:
    return _groupby(iter(iterable), key)


def _groupby(iterator: Iterator, key: Callable | None) -> Iterator[tuple[Any, Iterator]]:
    head: list = [_END, None, 0]  # the next item, its key, the number of the group it is in

    def take() -> None:
        head[0] = next(iterator, _END)
        if head[0] is not _END:
            head[1] = head[0] if key is None else key(head[0])

    def group(number: int, k: Any) -> Iterator:  # empty once the next group is taken
        while head[2] == number and head[0] is not _END and head[1] == k:
            yield head[0]
            take()

    take()
    number = 0
    while head[0] is not _END:
        number += 1
        k, head[2] = head[1], number
        yield k, group(number, k)
        while head[0] is not _END and head[1] == k:  # what the caller left of the group
            take()


_END = object()


class _CmpKey:
    """The key `cmp_to_key(cmp)` makes of an item: ordered by `cmp`."""

    def __init__(self, obj: Any, cmp: Callable) -> None:
        self.obj, self.cmp = obj, cmp

    def __lt__(self, other: _CmpKey) -> bool:
        return self.cmp(self.obj, other.obj) < 0

    def __gt__(self, other: _CmpKey) -> bool:
        return self.cmp(self.obj, other.obj) > 0

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _CmpKey) and self.cmp(self.obj, other.obj) == 0

    def __le__(self, other: _CmpKey) -> bool:
        return self.cmp(self.obj, other.obj) <= 0

    def __ge__(self, other: _CmpKey) -> bool:
        return self.cmp(self.obj, other.obj) >= 0

    __hash__ = None  # type: ignore[assignment]


def cmp_to_key(cmp: Callable) -> Callable[[Any], _CmpKey]:
    return lambda obj: _CmpKey(obj, cmp)


def reduce(function: Callable, iterable: Iterable, *initial: Any) -> Any:
    iterator = iter(iterable)
    if initial:
        value = initial[0]
    else:
        try:
            value = next(iterator)
        except StopIteration:
            raise TypeError("reduce() of empty iterable with no initial value") from None
    for item in iterator:
        value = function(value, item)
    return value


def itemgetter(*items: Any) -> Callable:
    if len(items) == 1:
        item = items[0]
        return lambda obj: obj[item]
    return lambda obj: tuple(obj[i] for i in items)


def attrgetter(*names: str) -> Callable:
    def resolve(obj: Any, name: str) -> Any:
        for part in name.split("."):
            obj = getattr(obj, part)
        return obj

    if len(names) == 1:
        name = names[0]
        return lambda obj: resolve(obj, name)
    return lambda obj: tuple(resolve(obj, name) for name in names)


def methodcaller(name: str, /, *args: Any, **kwargs: Any) -> Callable:
    return lambda obj: getattr(obj, name)(*args, **kwargs)


def heappush(heap: list, item: Any) -> None:
    heap.append(item)
    _heapq._siftdown(heap, 0, len(heap) - 1)


def heappop(heap: list) -> Any:
    if not heap:
        raise IndexError("index out of range")
    last = heap.pop()
    if not heap:
        return last
    item, heap[0] = heap[0], last
    _heapq._siftup(heap, 0)
    return item


def _heapify_with(heap: list, sift: Callable) -> None:
    for i in reversed(range(len(heap) // 2)):
        sift(heap, i)


def _replace_top(heap: list, item: Any, sift: Callable) -> Any:
    top, heap[0] = heap[0], item
    sift(heap, 0)
    return top


def heapify(heap: list) -> None:
    _heapify_with(heap, _heapq._siftup)


def heapreplace(heap: list, item: Any) -> Any:
    return _replace_top(heap, item, _heapq._siftup)


def heappushpop(heap: list, item: Any) -> Any:
    if heap and heap[0] < item:
        item, heap[0] = heap[0], item
        _heapq._siftup(heap, 0)
    return item


def heapify_max(heap: list) -> None:  # `heapq.nsmallest`'s max-heap
    _heapify_with(heap, _heapq._siftup_max)


def heapreplace_max(heap: list, item: Any) -> Any:
    return _replace_top(heap, item, _heapq._siftup_max)


def _insertion_point(a: Any, x: Any, lo: int, hi: int | None, key: Callable | None,
                     right: bool) -> int:
    """Where `x` goes in the sorted `a[lo:hi]`: after its equals (`right`) or before them."""
    if lo < 0:
        raise ValueError("lo must be non-negative")
    hi = len(a) if hi is None or hi == -1 else hi  # the C functions read -1 as None
    while lo < hi:
        mid = (lo + hi) // 2
        item = a[mid] if key is None else key(a[mid])
        if (x < item) if right else not (item < x):
            hi = mid
        else:
            lo = mid + 1
    return lo


def bisect_left(a: Any, x: Any, lo: int = 0, hi: int | None = None, *,
                key: Callable | None = None) -> int:
    return _insertion_point(a, x, lo, hi, key, right=False)


def bisect_right(a: Any, x: Any, lo: int = 0, hi: int | None = None, *,
                 key: Callable | None = None) -> int:
    return _insertion_point(a, x, lo, hi, key, right=True)


def insort_left(a: Any, x: Any, lo: int = 0, hi: int | None = None, *,
                key: Callable | None = None) -> None:
    a.insert(bisect_left(a, x if key is None else key(x), lo, hi, key=key), x)


def insort_right(a: Any, x: Any, lo: int = 0, hi: int | None = None, *,
                 key: Callable | None = None) -> None:
    a.insert(bisect_right(a, x if key is None else key(x), lo, hi, key=key), x)


def count_elements(mapping: Any, iterable: Iterable) -> None:
    """`collections.Counter`'s counting loop."""
    for item in iterable:
        mapping[item] = mapping.get(item, 0) + 1


def rnn_by_layer(op: Callable, lstm: bool, packed: bool, *args: Any) -> tuple:
    """`op` (`torch.lstm`, `gru`, `rnn_tanh`, `rnn_relu`) of several layers with dropout in
    training, one layer at a time with `torch.dropout` between layers, as ATen's kernels run
    it (time-major between layers, so the masks draw eager's random numbers). Traced instead
    of the one op: PyTorch's Python decompositions of these ops, which a backend tracing the
    graph at the dispatcher runs, never apply the dropout (`num_layers < i - 1`)."""
    if packed:
        data, batch_sizes, hx, params, has_biases, num_layers, dropout, train, bidirectional = args
        batch_first = False
    else:
        data, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first = args
    dirs = 2 if bidirectional else 1
    per = len(params) // (num_layers * dirs)
    x = data.transpose(0, 1) if batch_first else data
    hiddens = []
    for i in range(num_layers):
        h = [t[i * dirs:(i + 1) * dirs] for t in hx] if lstm else hx[i * dirs:(i + 1) * dirs]
        layer = params[i * dirs * per:(i + 1) * dirs * per]
        if packed:
            out = op(x, batch_sizes, h, layer, has_biases, 1, 0.0, train, bidirectional)
        else:
            out = op(x, h, layer, has_biases, 1, 0.0, train, bidirectional, False)
        x = out[0]
        hiddens.append(out[1:])
        if i < num_layers - 1:
            x = torch.dropout(x, dropout, True)
    x = x.transpose(0, 1) if batch_first else x
    return (x, *[torch.cat(h, 0) for h in zip(*hiddens)])


def record_function(name: str, args: str | None = None) -> contextlib.nullcontext:
    """The profiler's `record_function` block: a no-op inside a compiled frame (it would enter a
    profiler range, a C object, in the graph)."""
    return contextlib.nullcontext()


# The C original (or, for `record_function`, torch's object) -> its Python twin
POLYFILLS: dict[Any, Callable] = {
    itertools.chain: chain, itertools.islice: islice, itertools.accumulate: accumulate,
    itertools.zip_longest: zip_longest, itertools.product: product,
    itertools.combinations: combinations,
    itertools.combinations_with_replacement: combinations_with_replacement,
    itertools.permutations: permutations,
    itertools.pairwise: pairwise, itertools.starmap: starmap, itertools.takewhile: takewhile,
    itertools.dropwhile: dropwhile, itertools.repeat: repeat, itertools.count: count,
    itertools.cycle: cycle, itertools.compress: compress, itertools.filterfalse: filterfalse,
    itertools.groupby: groupby, functools.reduce: reduce, functools.cmp_to_key: cmp_to_key,
    operator.itemgetter: itemgetter,
    operator.attrgetter: attrgetter, operator.methodcaller: methodcaller,
    torch.autograd.profiler.record_function: record_function,
    _heapq.heappush: heappush, _heapq.heappop: heappop, _heapq.heapify: heapify,
    _heapq.heapreplace: heapreplace, _heapq.heappushpop: heappushpop,
    _bisect.bisect_left: bisect_left, _bisect.bisect_right: bisect_right,
    _bisect.insort_left: insort_left, _bisect.insort_right: insort_right,
    collections._count_elements: count_elements,
}
# nsmallest's max-heap helpers, private C functions where the interpreter has them
POLYFILLS.update({getattr(_heapq, name): twin for name, twin in (
    ("_heapify_max", heapify_max), ("_heapreplace_max", heapreplace_max))
    if hasattr(_heapq, name)})
