"""`torch.multinomial` (multinomial.py) against its definition.

Its draws are Triton's, not eager's: each category's frequency is checked against its
probability within several standard errors (the seed is fixed by conftest, so the outcome is
the same every run), categories of probability 0 are never drawn, a draw without replacement
holds distinct categories, and a second call draws anew. Every graph runs generated code only;
eager's checks of the probabilities raise its errors.
"""

import math
import re

import pytest
import torch

from fxtrace import make_fx
from inductor_lite import compile_fx, counters

PROBS = [0.0, 0.1, 0.2, 0.0, 0.3, 0.4, 0.0]  # zeros first, inside and last


def generated(fn, *inputs):
    """`fn` compiled for `inputs`, asserting it runs as generated code only."""
    compiled = compile_fx(make_fx(fn)(*[x.clone() for x in inputs]), list(inputs))
    assert counters["fallbacks"] == 0 and counters.get("eager_graphs", 0) == 0
    assert counters["kernels"] >= 1
    return compiled


def assert_frequencies(draws, probs, errors=6.0):
    """Each category drawn about as often as its probability says (never when it is 0)."""
    counts = torch.bincount(draws.flatten().cpu(), minlength=len(probs)).double()
    total = counts.sum().item()
    for count, p in zip(counts.tolist(), probs):
        if p == 0:
            assert count == 0
        else:
            assert abs(count / total - p) < errors * math.sqrt(p * (1 - p) / total), (count, p)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_with_replacement_frequencies(device, dtype):
    # three rows, transposed (not contiguous), unnormalised (weights sum to 3, 6 and 1.5)
    rows = torch.tensor([PROBS, PROBS[::-1], [0.5, 0, 0, 0, 0, 0, 1.0]], dtype=dtype,
                        device=device) * torch.tensor([[3.0], [6.0], [1.0]], device=device)
    probs = rows.t().contiguous().t()
    compiled = generated(lambda p: torch.multinomial(p, 4000, replacement=True), probs)
    out = compiled(probs)
    assert out.shape == (3, 4000) and out.dtype == torch.int64
    assert_frequencies(out[0], PROBS)
    assert_frequencies(out[1], PROBS[::-1])
    assert_frequencies(out[2], [1 / 3, 0, 0, 0, 0, 0, 2 / 3])
    assert not torch.equal(out, compiled(probs))


def test_with_replacement_of_one_row(device):
    probs = torch.tensor(PROBS, device=device)
    compiled = generated(lambda p: torch.multinomial(p, 5000, True), probs)
    out = compiled(probs)
    assert out.shape == (5000,)
    assert_frequencies(out, PROBS)


def test_with_replacement_of_probabilities_whose_sum_overflows(device):
    # 3e38 + 3e38 is inf in float32: the cumulative distribution must not be inf / inf
    probs = torch.tensor([3e38, 3e38, 0.0, 3e38], device=device)
    compiled = generated(lambda p: torch.multinomial(p, 3000, True), probs)
    assert_frequencies(compiled(probs), [1 / 3, 1 / 3, 0, 1 / 3])


def test_without_replacement_first_and_second_draws(device):
    # many copies of one row: the first draw is category i with probability p_i, the second j
    # with probability sum over i != j of p_i * p_j / (1 - p_i)
    probs = torch.tensor(PROBS, device=device).expand(1200, len(PROBS))
    compiled = generated(lambda p: torch.multinomial(p, 3), probs)
    out = compiled(probs)
    assert out.shape == (1200, 3)
    assert all(len(set(row)) == 3 for row in out.tolist())
    assert_frequencies(out[:, 0], PROBS)
    second = [sum(pi * pj / (1 - pi) for i, pi in enumerate(PROBS) if i != j)
              for j, pj in enumerate(PROBS)]
    assert_frequencies(out[:, 1], second)
    assert not torch.equal(out, compiled(probs))


def test_without_replacement_of_every_category_is_a_permutation(device):
    probs = torch.rand(5, 9, device=device)[:, ::2] + 0.01  # not contiguous, odd sizes
    out = generated(lambda p: torch.multinomial(p, 5), probs)(probs)
    assert torch.equal(out.sort(-1).values, torch.arange(5, device=device).expand(5, 5))


def test_without_replacement_draws_zero_categories_last(device):
    probs = torch.tensor(PROBS, device=device)
    out = generated(lambda p: torch.multinomial(p, 6), probs)(probs)
    assert sorted(out[:4].tolist()) == [1, 2, 4, 5]
    assert set(out[4:].tolist()) <= {0, 3, 6}


@pytest.mark.parametrize("n,replacement", [(2, False), (1, True), (2, True)])
@pytest.mark.parametrize("bad", [[0.5, -0.1, 0.5], [0.5, math.nan, 0.5], [0.5, math.inf, 0.5],
                                 [0.0, 0.0, 0.0]])
def test_eagers_checks_raise_its_errors(device, n, replacement, bad):
    if device != "cpu":
        pytest.skip("on a GPU, the generated checks (`_assert_async`) are device asserts, which "
                    "end the process's CUDA context")
    good = torch.tensor([[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]], device=device)
    compiled = generated(lambda p: torch.multinomial(p, n, replacement), good)
    probs = torch.tensor([[0.2, 0.3, 0.5], bad], device=device)
    with pytest.raises(RuntimeError) as expected:
        torch.multinomial(probs, n, replacement)
    with pytest.raises(RuntimeError, match=re.escape(str(expected.value))):
        compiled(probs)


def test_float64_probabilities_are_left_to_aten(device):
    probs = torch.tensor(PROBS, dtype=torch.float64, device=device)
    compiled = compile_fx(make_fx(lambda p: torch.multinomial(p, 2))(probs), [probs])
    assert counters["fallbacks"] == 1
    assert compiled(probs).shape == (2,)
