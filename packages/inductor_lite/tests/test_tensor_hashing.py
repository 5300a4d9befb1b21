"""`torch.hash_tensor` (tensor_hashing.py): bit for bit CPU eager's hash, as generated code only.

(CPU eager's: a GPU's conversion of a float32 NaN to float64 need not keep its payload, and the
kernels build that pattern as the CPU's conversion makes it.)
"""

import re

import pytest
import torch

from fxtrace import make_fx
from inductor_lite import compile_fx, counters


def assert_hash_as_eager(fn, x):
    compiled = compile_fx(make_fx(fn)(x), [x])
    out, want = compiled(x).cpu(), fn(x.cpu())
    assert counters["fallbacks"] == 0 and counters["kernels"] >= 1
    assert out.dtype == want.dtype == torch.uint64 and out.shape == want.shape
    assert torch.equal(out.view(torch.int64), want.view(torch.int64))


def float32_of_bits(*bits: int) -> torch.Tensor:
    return torch.tensor([b - (1 << 32) if b >= 1 << 31 else b for b in bits],
                        dtype=torch.int32).view(torch.float32)


SPECIAL_FLOAT32 = float32_of_bits(
    0x7F800001, 0xFF800001, 0x7FC00000, 0xFFC00000, 0x7FFFFFFF, 0x7FA00005,  # NaNs: sign, payload
    0x80000000, 0x00000001, 0x807FFFFF, 0x7F800000, 0xFF800000, 0x3F800000)  # -0, subnormals, inf


@pytest.mark.parametrize("dims, keepdim", [((), False), (1, False), ((0, 2), True), (-1, True)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int32, torch.int64])
def test_hash_over_dims(device, dtype, dims, keepdim):
    x = (torch.randn(3, 5, 37, device=device) * 1000).to(dtype)
    assert_hash_as_eager(lambda x: torch.hash_tensor(x, dims, keepdim=keepdim), x)


def test_hash_of_special_float_bits(device):
    x = SPECIAL_FLOAT32.to(device)
    assert_hash_as_eager(lambda x: torch.hash_tensor(x, 0), x.reshape(1, -1))  # one per element
    assert_hash_as_eager(torch.hash_tensor, x)
    wide = torch.tensor([-0.0, float("nan"), 5e-324], dtype=torch.float64, device=device)
    wide = torch.cat([wide, -wide, x.double()])
    assert_hash_as_eager(lambda x: torch.hash_tensor(x, 0), wide.reshape(1, -1))


@pytest.mark.parametrize("dtype", [torch.bool, torch.uint8, torch.int8, torch.int16])
def test_hash_of_narrow_integers_and_bools(device, dtype):
    x = torch.randint(-128, 128, (7, 9), device=device).to(dtype)
    assert_hash_as_eager(lambda x: torch.hash_tensor(x, 0), x)
    assert_hash_as_eager(torch.hash_tensor, x)


def test_hash_of_non_contiguous_and_0d_inputs(device):
    x = torch.randn(40, 33, device=device)
    assert_hash_as_eager(lambda x: torch.hash_tensor(x, 1), x.t()[::2])
    assert_hash_as_eager(lambda x: torch.hash_tensor(x[:, 1:], (0, 1)), x)
    assert_hash_as_eager(lambda x: torch.hash_tensor(x, 0), torch.tensor(2.5, device=device))
    assert_hash_as_eager(torch.hash_tensor, torch.tensor(-0.0, device=device))


def test_hash_over_a_long_row(device):
    x = torch.randn(2, 5000, device=device)  # more than one block of the row: a looped reduction
    assert_hash_as_eager(lambda x: torch.hash_tensor(x, 1), x)


@pytest.mark.parametrize("fn, x", [
    (lambda x: torch.hash_tensor(x, mode=1), torch.ones(3)),  # eager raises: unknown mode
    (lambda x: torch.hash_tensor(x), torch.ones(3, dtype=torch.float16)),
])
def test_refused_cases_run_as_aten(device, fn, x):
    x = x.to(device)
    compiled = compile_fx(torch.fx.symbolic_trace(fn), [x])
    assert counters["fallbacks"] == 1 and counters["kernels"] == 0
    try:
        want = fn(x)
    except RuntimeError as error:
        with pytest.raises(RuntimeError, match=re.escape(str(error))):
            compiled(x)
    else:
        assert torch.equal(compiled(x).view(torch.int64), want.view(torch.int64))
