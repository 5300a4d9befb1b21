"""`_trilinear` (`F.bilinear`) as a generated reduction, against eager (trilinear_products.py)."""

import pytest
import torch
import torch.nn.functional as F

from inductor_lite import compile_fx, counters

aten = torch.ops.aten


def check(fn, *inputs):
    compiled = compile_fx(torch.fx.symbolic_trace(fn), list(inputs))
    got, want = compiled(*inputs), fn(*inputs)
    assert got.shape == want.shape and got.dtype == want.dtype
    torch.testing.assert_close(got, want)
    assert counters["fallbacks"] == 0


@pytest.mark.parametrize("batch", [(8,), (), (0,), (2, 3)])
def test_bilinear(device, batch):
    x1, x2 = torch.randn(*batch, 3, device=device), torch.randn(*batch, 4, device=device)
    weight, bias = torch.randn(5, 3, 4, device=device), torch.randn(5, device=device)
    check(lambda a, b, w, c: F.bilinear(a, b, w, c), x1, x2, weight, bias)


def test_bilinear_of_float64_transposed_weight_without_bias(device):
    x1 = torch.randn(7, 4, dtype=torch.float64, device=device)[:, ::2]
    x2 = torch.randn(7, 3, dtype=torch.float64, device=device)
    weight = torch.randn(3, 2, 5, dtype=torch.float64, device=device).transpose(0, 2)
    check(lambda a, b, w: F.bilinear(a, b, w), x1, x2, weight)

