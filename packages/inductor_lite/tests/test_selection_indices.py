"""mode with its index as a generated kernel, against eager exactly: ties (the index eager
picks among equal values), NaN, infinities, signed zeros, rows of 1 to 16, other dims, keepdim,
strided inputs, int and half dtypes, and the cases that fall back. The values are made on the CPU
and moved to `device`: on a GPU the lowering refuses the op (eager there picks among equal values
its own way), so there each compiled mode runs as aten and matches eager's."""

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


def _generated(device, compiles=1):
    """The mode was a kernel on the CPU; on a GPU, each of the `compiles` ran it as aten."""
    if device == "cpu":
        assert counters["fallbacks"] == 0 and counters["kernels"] >= 1
    else:
        assert counters["fallbacks"] == compiles


def test_mode_of_ties_nans_infinities_and_zeros(device):
    x = torch.tensor([[3.0, 1.0, 3.0, 1.0, 2.0, 3.0, 1.0],
                      [1.0, NAN, -1.0, NAN, 2.0, -1.0, 1.0],
                      [INF, -INF, 0.0, INF, -1.0, -INF, 1.0],
                      [0.0, -0.0, 1.0, -0.0, 0.0, -1.0, 1.0],
                      [NAN, NAN, NAN, 2.0, NAN, 2.0, NAN],
                      [5.0, 4.0, 3.0, 2.0, 1.0, 0.0, -1.0]], device=device)
    compile_and_check(lambda x: torch.mode(x), x)
    _generated(device)


@pytest.mark.parametrize("n", [1, 2, 5, 9, 16])
def test_mode_of_random_ties_matches_eager_index(device, n):
    """Few distinct values (and NaN) so that most rows tie: insertion sort's order decides."""
    pool = torch.tensor([0.0, -0.0, 1.0, 2.0, NAN, INF])
    x = pool[torch.randint(0, 6, (24, n))].to(device)
    compile_and_check(lambda x: torch.mode(x, -1), x)
    _generated(device)


def test_mode_along_other_dims_keepdim_and_strides(device):
    x = torch.randint(0, 3, (5, 6, 7)).float().to(device)
    compile_and_check(lambda x: torch.mode(x, 0), x)
    compile_and_check(lambda x: torch.mode(x, 1, keepdim=True), x)
    compile_and_check(lambda x: torch.mode(x.transpose(0, 2), 1), x)  # strided rows
    compile_and_check(lambda x: torch.mode(x[:, ::2, 1:], -1, True), x)
    _generated(device, compiles=4)


@pytest.mark.parametrize("dtype", [torch.int32, torch.uint8, torch.float16, torch.bfloat16])
def test_mode_of_other_dtypes(device, dtype):
    x = torch.randint(0, 4, (6, 11)).to(device, dtype)
    compile_and_check(lambda x: torch.mode(x), x)
    _generated(device)


@pytest.mark.parametrize("x", [torch.randint(0, 3, (4, 17)).float(),  # std::sort's introsort
                               torch.randint(0, 3, (4, 5)).double(),
                               torch.tensor(2.0)], ids=["row_of_17", "float64", "0-d"])
def test_mode_falls_back(device, x):
    compile_and_check(lambda x: torch.mode(x), x.to(device))
    assert counters["fallbacks"] == 1
