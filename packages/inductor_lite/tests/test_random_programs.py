"""Random programs of pointwise ops, views and reductions against eager: fusion, index
simplification and symbolic versions meet combinations no hand-written test thought of.

Each program is a fixed list of steps drawn from a seeded generator; it runs on a first shape,
then on two more (same rank, other sizes), which the compiled graph serves with new versions.
"""

import random

import pytest
import torch

from fxtrace import make_fx
from inductor_lite import compile_fx

UNARY = [torch.exp, torch.tanh, torch.relu, torch.sigmoid, torch.abs,
         lambda t: t * 2 - 1, lambda t: t.clamp(-0.5, 0.5)]
BINARY = [torch.add, torch.mul, torch.sub, torch.maximum,
          lambda a, b: torch.where(a > b, a, b * 0.5)]


def _view(t, r):
    k = r % 5
    if k == 0 and t.dim() >= 2:
        return t.transpose(0, -1)
    if k == 1 and t.shape[0] > 2:
        return t[1:]
    if k == 2:
        return t.flatten()
    if k == 3 and t.dim() >= 2 and t.shape[-1] > 1:
        return t[..., ::2]
    return t.unsqueeze(0).expand(2, *t.shape)


def _reduce(t, r):
    if t.dim() == 0:
        return t
    d = (r // 5) % t.dim()
    return [lambda: t.sum(d, keepdim=bool(r % 2)), lambda: t.amax(d), lambda: t.softmax(d),
            lambda: t.mean(d, keepdim=True), lambda: t.cumsum(d)][r % 5]()


def _program(rng: random.Random):
    steps = [(rng.randrange(4), rng.randrange(1000)) for _ in range(rng.randrange(3, 9))]

    def program(x, y):
        a = x
        for kind, r in steps:
            if kind == 0:
                a = UNARY[r % len(UNARY)](a)
            elif kind == 1:
                a = BINARY[r % len(BINARY)](a, y if y.shape == a.shape else a.flip(0))
            elif kind == 2:
                a = _view(a, r)
            else:
                a = _reduce(a, r)
        return a
    return program


@pytest.mark.parametrize("seed", range(12))
def test_random_program_matches_eager(device, seed):
    rng = random.Random(seed)
    shape = [rng.randrange(1, 7) for _ in range(rng.randrange(1, 4))]
    program = _program(rng)
    x, y = torch.randn(*shape, device=device), torch.randn(*shape, device=device)
    if len(shape) >= 2 and seed % 3 == 0:  # a column-major input
        x = x.transpose(0, 1).contiguous().transpose(0, 1)
    gm = make_fx(program)(x, y)
    compiled = compile_fx(gm, [x, y])
    torch.testing.assert_close(compiled(x, y), program(x, y), atol=1e-4, rtol=1e-4)
    for _ in range(2):
        other = [max(1, n + rng.randrange(-1, 3)) for n in shape]
        x, y = torch.randn(*other, device=device), torch.randn(*other, device=device)
        try:
            expected = gm(x, y)  # the traced program: sizes it fixed stay fixed
        except RuntimeError:
            continue
        torch.testing.assert_close(compiled(x, y), expected, atol=1e-4, rtol=1e-4)
