"""mode with its index as a generated kernel, against eager CPU exactly: ties (the index eager
picks among equal values), NaN, infinities, signed zeros, rows of 1 to 16, other dims, keepdim,
strided inputs, int and half dtypes, and the cases that fall back. On CPU tensors only: eager on
a GPU picks among equal values its own way (there the op falls back)."""

import pytest
import torch

from inductor_lite import compile_fx, counters

NAN, INF = float("nan"), float("inf")


def compile_and_check(fn, *inputs):
    """Compile `fn`'s graph and compare its outputs with eager's, exactly (NaN equal to NaN)."""
    compiled = compile_fx(torch.fx.symbolic_trace(fn), list(inputs))
    for got, want in zip(compiled(*inputs), fn(*inputs), strict=True):
        assert got.shape == want.shape and got.dtype == want.dtype
        torch.testing.assert_close(got, want, atol=0, rtol=0, equal_nan=True)


def _generated():
    assert counters["fallbacks"] == 0 and counters["kernels"] >= 1


def test_mode_of_ties_nans_infinities_and_zeros():
    x = torch.tensor([[3.0, 1.0, 3.0, 1.0, 2.0, 3.0, 1.0],
                      [1.0, NAN, -1.0, NAN, 2.0, -1.0, 1.0],
                      [INF, -INF, 0.0, INF, -1.0, -INF, 1.0],
                      [0.0, -0.0, 1.0, -0.0, 0.0, -1.0, 1.0],
                      [NAN, NAN, NAN, 2.0, NAN, 2.0, NAN],
                      [5.0, 4.0, 3.0, 2.0, 1.0, 0.0, -1.0]])
    compile_and_check(lambda x: torch.mode(x), x)
    _generated()


@pytest.mark.parametrize("n", [1, 2, 5, 9, 16])
def test_mode_of_random_ties_matches_eager_index(n):
    """Few distinct values (and NaN) so that most rows tie: insertion sort's order decides."""
    pool = torch.tensor([0.0, -0.0, 1.0, 2.0, NAN, INF])
    x = pool[torch.randint(0, 6, (24, n))]
    compile_and_check(lambda x: torch.mode(x, -1), x)
    _generated()


def test_mode_along_other_dims_keepdim_and_strides():
    x = torch.randint(0, 3, (5, 6, 7)).float()
    compile_and_check(lambda x: torch.mode(x, 0), x)
    compile_and_check(lambda x: torch.mode(x, 1, keepdim=True), x)
    compile_and_check(lambda x: torch.mode(x.transpose(0, 2), 1), x)  # strided rows
    compile_and_check(lambda x: torch.mode(x[:, ::2, 1:], -1, True), x)
    _generated()


@pytest.mark.parametrize("dtype", [torch.int32, torch.uint8, torch.float16, torch.bfloat16])
def test_mode_of_other_dtypes(dtype):
    x = torch.randint(0, 4, (6, 11)).to(dtype)
    compile_and_check(lambda x: torch.mode(x), x)
    _generated()


@pytest.mark.parametrize("x", [torch.randint(0, 3, (4, 17)).float(),  # std::sort's introsort
                               torch.randint(0, 3, (4, 5)).double(),
                               torch.tensor(2.0)], ids=["row_of_17", "float64", "0-d"])
def test_mode_falls_back(x):
    compile_and_check(lambda x: torch.mode(x), x)
    assert counters["fallbacks"] == 1
