"""`ir.view_strides` against torch's own `view`: the same strides where a view exists, None where
torch refuses one (random shapes, permutations, slices and expansions)."""

import random

import pytest
import sympy
import torch

from inductor_lite.ir import view_strides


def _random_case(rng: random.Random) -> tuple[torch.Tensor, list[int]]:
    t = torch.empty([rng.choice([1, 2, 3, 4, 6]) for _ in range(rng.randint(1, 4))])
    order = list(range(t.dim()))
    rng.shuffle(order)
    t = t.permute(order)
    if rng.random() < 0.3 and t.shape[0] > 1:
        t = t[::2]
    if rng.random() < 0.3:
        t = t.unsqueeze(0).expand(3, *t.shape)
    factors, rest = [], t.numel()
    for f in (2, 3, 2, 3, 2):
        if rest % f == 0 and rng.random() < 0.6:
            factors.append(f)
            rest //= f
    factors.append(rest)
    rng.shuffle(factors)
    if rng.random() < 0.3:
        factors.insert(rng.randint(0, len(factors)), 1)
    return t, factors


@pytest.mark.parametrize("seed", range(4))
def test_view_strides_agree_with_torch(seed):
    rng = random.Random(seed)
    views = refusals = 0
    for _ in range(400):
        t, shape = _random_case(rng)
        ints = [[sympy.Integer(v) for v in vals] for vals in (t.shape, t.stride(), shape)]
        got = view_strides(*ints)
        try:
            want = t.view(shape).stride()
        except RuntimeError:
            assert got is None, (t.shape, t.stride(), shape)
            refusals += 1
            continue
        assert got is not None and tuple(int(s) for s in got) == want, (t.shape, t.stride(), shape)
        views += 1
    assert views > 50 and refusals > 20  # both outcomes were exercised


def test_symbolic_sizes_are_left_to_the_contiguous_rule():
    s = sympy.Symbol("s0", integer=True, positive=True)
    assert view_strides([s, sympy.Integer(4)], [sympy.Integer(1), s], [4 * s]) is None
