"""Property tests: on random values and random mutations of them, the compiled check agrees with
evaluating each guard on its own, and explain names exactly the guards that fail."""

from __future__ import annotations

import enum

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from guards import DictKeys, Equals, GuardSet, Length, LocalSource, TensorMatch, TypeMatch


class Level(enum.IntEnum):
    ONE = 1


# values `==` confuses with the ones above (and with each other), which the batched `marshal`
# comparison and `exact` must tell apart
look_alikes = st.sampled_from([
    -0.0, float("nan"), float("inf"), 1.0, 2**70, float(2**70), 1j, b"a", frozenset({1}),
    frozenset({1.0}), Ellipsis, Level.ONE, (True, "a"), (1.0, "a"), torch.float32,
])
constants = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 5), st.floats(-2, 2, allow_nan=False),
    st.text(max_size=3), st.tuples(st.integers(0, 3), st.text(max_size=2)), look_alikes,
)
tensors = st.builds(
    lambda shape, dtype, grad, transpose: (
        torch.zeros(shape, dtype=dtype, requires_grad=grad and dtype.is_floating_point).t()
        if transpose and len(shape) == 2 else
        torch.zeros(shape, dtype=dtype, requires_grad=grad and dtype.is_floating_point)
    ),
    st.lists(st.integers(1, 4), max_size=3).map(tuple),
    st.sampled_from([torch.float32, torch.int64, torch.float16]),
    st.booleans(),
    st.booleans(),
)
values = st.one_of(constants, tensors, st.dictionaries(st.text(max_size=2), st.integers(), max_size=3))


def _guards_for(name: str, value):
    source = LocalSource(name)
    if isinstance(value, torch.Tensor):
        return [TensorMatch.of(source, value)]
    if isinstance(value, dict):
        return [TypeMatch(source, dict), DictKeys(source, tuple(value))]
    if isinstance(value, tuple):
        return [Equals(source, value), Length(source, len(value))]
    return [Equals(source, value)]


@settings(max_examples=100, deadline=None)
@given(st.lists(values, min_size=1, max_size=4), st.lists(values, min_size=1, max_size=4))
def test_compiled_check_agrees_with_each_guard(originals, replacements) -> None:
    names = [f"v{i}" for i in range(len(originals))]
    gs = GuardSet([g for n, v in zip(names, originals) for g in _guards_for(n, v)])
    frame = dict(zip(names, originals))
    assert gs.check(frame, {}) and gs.explain(frame, {}) == []
    mutated = dict(frame)
    for name, value in zip(names, replacements):
        mutated[name] = value
    failing = []
    for guard in gs:
        value = guard.sources[0].fetch(mutated, {})
        try:
            ok = guard.holds(value)
        except Exception:  # a guard that cannot evaluate does not hold
            ok = False
        if not ok:
            failing.append(guard.describe())
    assert gs.check(mutated, {}) == (not failing)
    assert [r.split(" failed: ")[0] for r in gs.explain(mutated, {})] == failing
