"""The gradient of 2-d max pooling as a generated gather, against eager (max_pool_backward.py)."""

import pytest
import torch
import torch.nn.functional as F

from inductor_lite import compile_fx, counters

aten = torch.ops.aten


def pooled_gradient(**args):
    def fn(x, grad):
        _, indices = aten.max_pool2d_with_indices(x, *args.values())
        return aten.max_pool2d_with_indices_backward(grad, x, *args.values(), indices)
    return fn


def check(fn, x, grad, fallbacks=0):
    compiled = compile_fx(torch.fx.symbolic_trace(fn), [x, grad])
    # bit for bit: the same additions in the same order as eager's scatter
    torch.testing.assert_close(compiled(x, grad), fn(x, grad), atol=0, rtol=0)
    assert counters["fallbacks"] == fallbacks


@pytest.mark.parametrize("args", [
    dict(kernel=[3, 3], stride=[2, 2], padding=[0, 0], dilation=[1, 1], ceil_mode=True),
    dict(kernel=[3, 2], stride=[1, 2], padding=[1, 1], dilation=[1, 2], ceil_mode=False),
    dict(kernel=[2, 2], stride=[1, 1], padding=[0, 0], dilation=[1, 1], ceil_mode=False),
])
def test_max_pool2d_backward(device, args):
    x = torch.randn(2, 3, 5, 7, device=device)
    x[0, 0, 1, 1] = float("nan")
    x[1, 2, :2, :2] = 1.0  # ties: the first maximum is the index
    grad = torch.randn_like(aten.max_pool2d_with_indices(x, *args.values())[0])
    check(pooled_gradient(**args), x, grad)


def test_max_pool2d_backward_of_an_unbatched_float64_transposed_input(device):
    x = torch.randn(6, 5, 3, device=device, dtype=torch.float64).permute(2, 1, 0)
    grad = torch.randn(3, 4, 5, device=device, dtype=torch.float64)
    check(pooled_gradient(kernel=[2, 2], stride=[1, 1], padding=[0, 0], dilation=[1, 1],
                          ceil_mode=False), x, grad)


def test_max_pool2d_backward_through_autograd(device):
    x = torch.randn(1, 2, 6, 6, device=device, requires_grad=True)

    def fn(x, grad):
        return torch.autograd.grad(F.max_pool2d(x, 3, 2, 1), x, grad)[0]
    from fxtrace import make_fx
    gm = make_fx(fn, "real")(x, torch.ones(1, 2, 3, 3, device=device))
    grad = torch.randn(1, 2, 3, 3, device=device)
    compiled = compile_fx(gm, [x, grad])
    torch.testing.assert_close(compiled(x, grad), fn(x, grad), atol=0, rtol=0)
    assert counters["fallbacks"] == 0


def test_max_pool2d_backward_of_other_indices_falls_back(device):
    x, grad = torch.randn(1, 1, 4, 4, device=device), torch.randn(1, 1, 2, 2, device=device)
    indices = torch.tensor([[[[15, 0], [3, 12]]]], device=device)

    def fn(x, grad):  # indices outside their windows: eager scatters them anyway
        return aten.max_pool2d_with_indices_backward(grad, x, [2, 2], [2, 2], [0, 0], [1, 1],
                                                     False, indices)
    check(fn, x, grad, fallbacks=1)
