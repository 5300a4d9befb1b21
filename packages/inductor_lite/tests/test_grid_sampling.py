"""Grid sampling (`grid_sampler_2d`, `grid_sampler_3d`) as generated kernels, against eager
(grid_sampling.py)."""

import pytest
import torch

from inductor_lite import compile_fx, counters

aten = torch.ops.aten


def compile_and_check(fn, *inputs, exact=False):
    compiled = compile_fx(torch.fx.symbolic_trace(fn), list(inputs))
    got, want = compiled(*inputs), fn(*inputs)
    assert got.shape == want.shape and got.dtype == want.dtype
    if exact:
        torch.testing.assert_close(got, want, atol=0, rtol=0, equal_nan=True)
    else:
        torch.testing.assert_close(got, want, equal_nan=True)
    if got.device.type == "cpu":
        assert counters["fallbacks"] == 0 and counters["kernels"] >= 1
    else:  # eager's CUDA kernel is another one, not matched yet: the aten op runs
        assert counters["fallbacks"] == 1


def grid(*size, dtype=torch.float32):
    """Points in [-1.3, 1.3] (some outside the input), a NaN and an infinity among them, and
    points on multiples of a half pixel (where nearest rounds ties)."""
    g = torch.rand(*size, dtype=dtype) * 2.6 - 1.3
    g.view(-1)[::5] = (torch.randint(-14, 15, g.view(-1)[::5].shape) / 7).to(dtype)
    g.view(-1)[3] = float("nan")
    g.view(-1)[8] = float("inf")
    return g


@pytest.mark.parametrize("padding", [0, 1, 2])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sampler_2d_bilinear(device, padding, align_corners):
    # eager's vectorized kernel fuses multiply-adds: equal to rounding
    x = torch.randn(2, 3, 5, 7, device=device)
    g = grid(2, 4, 6, 2).to(device)
    compile_and_check(lambda x, g: aten.grid_sampler_2d(x, g, 0, padding, align_corners), x, g)


@pytest.mark.parametrize("padding", [0, 1, 2])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sampler_2d_nearest(device, padding, align_corners):
    x = torch.randn(2, 3, 6, 7, device=device)
    g = grid(2, 4, 6, 2).to(device)
    compile_and_check(lambda x, g: aten.grid_sampler_2d(x, g, 1, padding, align_corners), x, g,
                      exact=True)


@pytest.mark.parametrize("interpolation, padding, align_corners", [
    (0, 0, False), (0, 1, True), (0, 2, False), (1, 0, True), (1, 2, False)])
def test_grid_sampler_3d(device, interpolation, padding, align_corners):
    x = torch.randn(2, 3, 4, 5, 6, device=device)
    g = grid(2, 3, 2, 4, 3).to(device)
    compile_and_check(
        lambda x, g: aten.grid_sampler_3d(x, g, interpolation, padding, align_corners), x, g,
        exact=True)


def test_grid_sample_of_float64_transposed_input(device):
    x = torch.randn(1, 2, 7, 5, dtype=torch.float64, device=device).transpose(2, 3)
    g = grid(1, 3, 4, 2, dtype=torch.float64).to(device)
    compile_and_check(lambda x, g: torch.nn.functional.grid_sample(
        x, g, mode="bilinear", padding_mode="reflection", align_corners=True), x, g)


@pytest.mark.parametrize("padding", [0, 1, 2])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sampler_2d_bicubic(device, padding, align_corners):
    # eager's vectorized kernel fuses multiply-adds: equal to rounding
    x = torch.randn(2, 3, 5, 7, device=device)
    g = grid(2, 4, 6, 2)
    g.view(-1)[[5, 6, 11, 12]] = torch.tensor([1e9, -3e7, -1e30, 2.5])  # taps far outside
    compile_and_check(lambda x, g: aten.grid_sampler_2d(x, g, 2, padding, align_corners), x,
                      g.to(device))


@pytest.mark.parametrize("size", [(1, 4), (9, 1), (1, 1)])
@pytest.mark.parametrize("padding", [0, 1, 2])
def test_grid_sample_bicubic_of_float64_strided_thin_input(device, size, padding):
    x = torch.randn(2, *size[::-1], 2, dtype=torch.float64, device=device).permute(0, 3, 2, 1)
    g = grid(2, 3, 5, 2, dtype=torch.float64).to(device)
    compile_and_check(lambda x, g: torch.nn.functional.grid_sample(
        x, g, mode="bicubic", padding_mode=("zeros", "border", "reflection")[padding],
        align_corners=padding == 1), x, g)
