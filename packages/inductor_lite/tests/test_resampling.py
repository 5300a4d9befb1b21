"""3-d pooling and trilinear upsampling as generated kernels, against eager (resampling.py)."""

import pytest
import torch
import torch.nn.functional as F

from inductor_lite import compile_fx, counters

aten = torch.ops.aten


def compile_and_check(fn, *inputs, atol=1e-5, rtol=1e-5):
    compiled = compile_fx(torch.fx.symbolic_trace(fn), list(inputs))
    got, want = compiled(*inputs), fn(*inputs)
    got, want = (list(v) if isinstance(v, (list, tuple)) else [v] for v in (got, want))
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape and g.dtype == w.dtype
        torch.testing.assert_close(g, w, atol=atol, rtol=rtol, equal_nan=True)
    assert counters["fallbacks"] == 0 and counters["kernels"] >= 1


@pytest.mark.parametrize("args", [
    dict(kernel_size=2),
    dict(kernel_size=(3, 2, 2), stride=(2, 1, 2), padding=1, dilation=(1, 2, 1), ceil_mode=True),
])
def test_max_pool3d_with_indices(device, args):
    x = torch.randn(2, 3, 5, 6, 7, device=device)
    x[0, 0, 1, 1, 1] = float("nan")
    compile_and_check(lambda x: F.max_pool3d(x, return_indices=True, **args), x)


def test_max_pool3d_of_a_4d_permuted_input(device):
    x = torch.randn(6, 5, 4, 3, device=device).permute(3, 2, 1, 0)
    compile_and_check(lambda x: F.max_pool3d(x, 2, stride=1, return_indices=True), x)


@pytest.mark.parametrize("args", [
    dict(kernel_size=3, stride=2, padding=1),
    dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
    dict(kernel_size=(2, 3, 2), divisor_override=5),
])
def test_avg_pool3d(device, args):
    compile_and_check(lambda x: F.avg_pool3d(x, **args), torch.randn(2, 3, 5, 6, 7, device=device))


def test_max_pool3d_of_bfloat16(device):
    x = torch.randn(3, 4, 5, 6, device=device).bfloat16()
    compile_and_check(lambda x: F.max_pool3d(x, 2, return_indices=True), x)


@pytest.mark.parametrize("size, align_corners, scales", [
    ([7, 4, 9], False, (None, None, None)),
    ([7, 4, 9], True, (None, None, None)),
    ([8, 10, 11], False, (1.7, 1.7, 1.7)),
    ([5, 12, 3], False, (None, 2.0, 0.5)),
    ([1, 1, 9], True, (None, None, None)),
])
def test_upsample_trilinear3d(device, size, align_corners, scales):
    # the aten op itself (F.interpolate's graph here is its decomposition)
    x = torch.randn(2, 3, 5, 6, 7, device=device)
    compile_and_check(lambda x: aten.upsample_trilinear3d(x, size, align_corners, *scales), x)


def test_upsample_trilinear3d_of_float64_transposed(device):
    x = torch.randn(2, 3, 7, 6, 5, device=device, dtype=torch.float64).transpose(2, 4)
    compile_and_check(lambda x: aten.upsample_trilinear3d(x, [9, 3, 8], False), x)


@pytest.mark.parametrize("size, align_corners, scales", [
    ([3, 3], False, (None, None)),       # downscaled: windows widened by the factor
    ([5, 5], False, (None, None)),
    ([17, 18], False, (1.7, 0.9)),       # eager's scales, not the sizes' ratios
    ([4, 7], True, (None, None)),
    ([1, 20], False, (None, None)),      # one row: a dim of unchanged size is read as is
    ([23, 41], True, (None, None)),      # upscaled
])
def test_upsample_bilinear2d_aa(device, size, align_corners, scales):
    x = torch.randn(2, 3, 10, 20, device=device)
    x[1, 2, 0, 0] = float("inf")  # outside most windows: adds 0 there, not NaN
    compile_and_check(lambda x: aten._upsample_bilinear2d_aa(x, size, align_corners, *scales), x)


def test_upsample_bilinear2d_aa_of_a_channels_last_input(device):
    x = torch.randn(2, 5, 9, 13, device=device).to(memory_format=torch.channels_last)
    compile_and_check(lambda x: F.interpolate(x, size=(4, 6), mode="bilinear", antialias=True), x)


@pytest.mark.parametrize("shape, size, dtype", [
    ((2, 3, 30, 31), [7, 1], torch.float32),  # a single column: eager reads every row's first
    ((2, 3, 8, 8), [3, 3], torch.float64),
])
def test_upsample_bilinear2d_aa_refuses_what_it_does_not_match(device, shape, size, dtype):
    x = torch.randn(shape, device=device, dtype=dtype)
    compiled = compile_fx(torch.fx.symbolic_trace(
        lambda x: aten._upsample_bilinear2d_aa(x, size, False)), [x])
    torch.testing.assert_close(compiled(x), aten._upsample_bilinear2d_aa(x, size, False))
    assert counters["fallbacks"] == 1
