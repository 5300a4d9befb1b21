"""bucketize and searchsorted as generated binary searches, against eager (searching.py)."""

import pytest
import torch

from inductor_lite import compile_fx, counters


def compile_and_check(fn, *inputs):
    compiled = compile_fx(torch.fx.symbolic_trace(fn), list(inputs))
    got, want = compiled(*inputs), fn(*inputs)
    assert got.dtype == want.dtype
    torch.testing.assert_close(got, want, rtol=0, atol=0)
    assert counters["fallbacks"] == 0 and counters["kernels"] >= 1


@pytest.mark.parametrize("right", [False, True])
@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.float16])
def test_bucketize(device, right, dtype):
    boundaries = torch.tensor([-3, -1, 0, 0, 2, 5, 5, 5, 9], device=device).to(dtype)
    values = torch.randint(-5, 11, (7, 5), device=device).to(dtype)
    compile_and_check(lambda v, b: torch.bucketize(v, b, right=right), values, boundaries)


def test_bucketize_out_int32_of_a_transposed_input(device):
    boundaries = torch.linspace(-2, 2, 13, device=device)
    values = torch.randn(9, 6, device=device).t()
    compile_and_check(lambda v, b: torch.bucketize(v, b, out_int32=True), values, boundaries)


@pytest.mark.parametrize("right", [False, True])
def test_bucketize_of_nan_and_unsorted_boundaries_as_eager(device, right):
    # the search's very comparisons: NaNs and boundaries out of order land where eager's do
    boundaries = torch.tensor([4.0, 1.0, float("nan"), 3.0, 0.0, 7.0, 2.0], device=device)
    values = torch.tensor([float("nan"), -1.0, 0.5, 2.0, 3.5, 6.0, 8.0], device=device)
    compile_and_check(lambda v, b: torch.bucketize(v, b, right=right), values, boundaries)


@pytest.mark.parametrize("n", [0, 1, 2, 16])
def test_bucketize_sizes(device, n):
    boundaries = torch.randn(n, device=device).sort().values
    compile_and_check(lambda v, b: torch.bucketize(v, b), torch.randn(11, device=device),
                      boundaries)


@pytest.mark.parametrize("side", [None, "left", "right"])
def test_searchsorted_rows(device, side):
    sequence = torch.randn(3, 4, 6, device=device).sort(-1).values
    values = torch.randn(3, 4, 5, device=device)
    compile_and_check(lambda s, v: torch.searchsorted(s, v, side=side), sequence, values)


def test_searchsorted_one_row_broadcast_over_values(device):
    sequence = torch.arange(0, 20, 3, device=device)
    values = torch.randint(-2, 22, (2, 3, 4), device=device)
    compile_and_check(lambda s, v: torch.searchsorted(s, v, right=True), sequence, values)


def test_searchsorted_with_sorter(device):
    sequence = torch.randn(4, 7, device=device)
    values = torch.randn(4, 3, device=device)
    compile_and_check(lambda s, v, o: torch.searchsorted(s, v, sorter=o), sequence, values,
                      sequence.argsort(-1))


def test_searchsorted_of_mixed_dtypes_falls_back(device):
    sequence, values = torch.arange(5, device=device), torch.randn(4, device=device)
    fn = torch.searchsorted
    compiled = compile_fx(torch.fx.symbolic_trace(lambda s, v: fn(s, v)), [sequence, values])
    torch.testing.assert_close(compiled(sequence, values), fn(sequence, values))
    assert counters["fallbacks"] == 1


def test_a_search_of_one_value_read_by_every_lane(device):
    # seed 1002453: the search, recomputed in a kernel of 5 lanes, loads its step's bounds once
    # (scalars); `xmask & bound` of them as a load's mask was no boolean block on Triton's
    # interpreter ("mask has unsupported dtype")
    def f(x, b):
        table = torch.searchsorted(b, x).float().reshape(1, -1)
        return torch.nn.functional.embedding(torch.zeros(5, 1, dtype=torch.long, device=x.device),
                                             table)

    boundaries = torch.tensor([-2.0, -1, 0, 1, 3], device=device)
    compile_and_check(f, torch.tensor([0.5], device=device), boundaries)
