"""`histc` as a generated scatter-add of ones, against eager (histograms.py)."""

import pytest
import torch

from inductor_lite import compile_fx, counters


def check(fn, x, fallbacks=0):
    compiled = compile_fx(torch.fx.symbolic_trace(fn), [x])
    got, want = compiled(x), fn(x)
    assert got.dtype == want.dtype
    torch.testing.assert_close(got, want, atol=0, rtol=0)
    assert counters["fallbacks"] == fallbacks


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("bins, low, high", [(100, 0, 10), (7, -1.3, 2.9), (1, 0, 1)])
def test_histc(device, dtype, bins, low, high):
    x = torch.randn(5, 37, device=device, dtype=dtype)[:, ::2] * 3
    # the ends, bin edges (as the input's float type holds them), a NaN and infinities
    x[0, :4] = torch.tensor([low, high, float("nan"), float("inf")], dtype=dtype)
    x[1, :bins + 1] = torch.linspace(low, high, bins + 1, dtype=dtype)[:x.shape[1]]
    check(lambda x: torch.histc(x, bins, low, high), x)


def test_histc_of_a_0d_tensor(device):
    check(lambda x: torch.histc(x, 3, 0, 10), torch.tensor(9.99, device=device))


def test_histc_with_the_range_of_the_data_falls_back(device):
    check(lambda x: torch.histc(x, 4), torch.randn(10, device=device), fallbacks=1)
