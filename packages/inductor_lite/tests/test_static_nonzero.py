"""`nonzero_static` as a generated scan and binary search, against eager (static_nonzero.py)."""

import pytest
import torch

from inductor_lite import compile_fx, counters


def compile_and_check(x, size, fill_value=-1):
    fn = lambda x: torch.nonzero_static(x, size=size, fill_value=fill_value)  # noqa: E731
    compiled = compile_fx(torch.fx.symbolic_trace(fn), [x])
    got, want = compiled(x), fn(x)
    assert got.shape == want.shape and got.dtype == want.dtype and got.stride() == want.stride()
    torch.testing.assert_close(got, want)
    assert counters["fallbacks"] == 0 and counters["kernels"] >= 1


@pytest.mark.parametrize("size", [0, 2, 5, 9])
def test_nonzero_static_pads_or_truncates(device, size):
    # NaN is nonzero, -0.0 is zero
    x = torch.tensor([[0.0, 1.0, -0.0], [float("nan"), 0.0, 3.0]], device=device)
    compile_and_check(x, size, fill_value=-7)


@pytest.mark.parametrize("dtype", [torch.bool, torch.int32, torch.float16])
def test_nonzero_static_of_a_strided_3d_input(device, dtype):
    x = torch.randint(-1, 2, (3, 4, 5), device=device).to(dtype).transpose(0, 2)
    compile_and_check(x, 50)


@pytest.mark.parametrize("x", [torch.tensor(2.0), torch.tensor(0.0), torch.tensor([0.0]),
                               torch.tensor([4.0]), torch.zeros(0, 3)])
def test_nonzero_static_of_zero_or_one_elements(device, x):
    compile_and_check(x.to(device), 3)
