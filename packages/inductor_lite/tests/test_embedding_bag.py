"""`embedding_bag` (sum, mean and max bags) as a generated reduction, against eager (embedding_bag.py)."""

import math

import pytest
import torch
import torch.nn.functional as F

from inductor_lite import compile_fx, counters

aten = torch.ops.aten


def compile_and_check(fn, *inputs, fallbacks=0):
    compiled = compile_fx(torch.fx.symbolic_trace(fn), list(inputs))
    got, want = compiled(*inputs), fn(*inputs)
    got, want = (list(v) if isinstance(v, (list, tuple)) else [v] for v in (got, want))
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape and g.dtype == w.dtype
        torch.testing.assert_close(g, w)
    assert counters["fallbacks"] == fallbacks and (fallbacks or counters["kernels"] >= 1)


# bags of 3, 0 (empty), 3 and 2 indices; index 4 appears twice
INDICES = [1, 2, 4, 5, 4, 3, 2, 9]
OFFSETS = [0, 3, 3, 6]


@pytest.mark.parametrize("mode", ["sum", "mean"])
@pytest.mark.parametrize("padding_idx", [None, 4])
def test_embedding_bag(device, mode, padding_idx):
    weight = torch.randn(10, 3, device=device)
    indices, offsets = (torch.tensor(v, device=device) for v in (INDICES, OFFSETS))
    compile_and_check(lambda w, i, o: F.embedding_bag(i, w, o, mode=mode, padding_idx=padding_idx),
                      weight, indices, offsets)


@pytest.mark.parametrize("offsets", [[1, 3], [0, 5, 3], [0, 9]])
def test_embedding_bag_of_offsets_eager_refuses_raises(device, offsets):
    if device != "cpu":
        pytest.skip("on a GPU, eager's check of its indices is a device assert, which ends the "
                    "process's CUDA context")
    weight = torch.randn(10, 3, device=device)
    indices, offsets = (torch.tensor(v, device=device) for v in (INDICES, offsets))
    fn = lambda w, i, o: F.embedding_bag(i, w, o)  # noqa: E731
    with pytest.raises(RuntimeError):
        fn(weight, indices, offsets)
    compiled = compile_fx(torch.fx.symbolic_trace(fn), [weight, indices, offsets])
    with pytest.raises(IndexError, match="index out of bounds"):
        compiled(weight, indices, offsets)


def test_embedding_bag_with_sample_weights_float64_strided(device):
    weight = torch.randn(5, 10, device=device, dtype=torch.float64).t()
    indices = torch.tensor(INDICES, device=device)[::2]
    offsets = torch.tensor([0, 1, 1], device=device, dtype=torch.int64)
    scales = torch.rand(4, device=device, dtype=torch.float64)
    compile_and_check(lambda w, i, o, s: F.embedding_bag(i, w, o, mode="sum", per_sample_weights=s),
                      weight, indices, offsets, scales)


def test_embedding_bag_of_a_2d_input(device):
    weight = torch.randn(10, 4, device=device)
    indices = torch.tensor([[1, 2, 3], [9, 0, 0]], device=device, dtype=torch.int32)
    compile_and_check(lambda w, i: F.embedding_bag(i, w, mode="mean"), weight, indices)


# 3 bags with include_last_offset; the last offset (6) before the last index (8): eager's fast
# path ends the last bag's sum there (a mean still counts to the last index), others go on
LAST_OFFSETS = [0, 3, 3, 6]


def weight_of(layout: str, dtype: torch.dtype, device: str) -> torch.Tensor:
    if layout == "transposed":
        return torch.randn(3, 10, device=device, dtype=dtype).t()
    wide = torch.randn(10, 7, device=device, dtype=dtype)
    return {"contiguous": wide[:, :3].contiguous(), "column slice": wide[:, 2:5],
            "strided columns": wide[:, ::3]}[layout]


@pytest.mark.parametrize("mode", ["sum", "mean"])
@pytest.mark.parametrize("layout, dtype, padding_idx", [
    ("contiguous", torch.float32, None), ("column slice", torch.float32, None),
    ("contiguous", torch.float32, 4), ("strided columns", torch.float32, None),
    ("transposed", torch.float64, None)])
def test_embedding_bag_include_last_offset(device, mode, layout, dtype, padding_idx):
    weight = weight_of(layout, dtype, device)
    indices, offsets = (torch.tensor(v, device=device) for v in (INDICES, LAST_OFFSETS))
    compile_and_check(lambda w, i, o: F.embedding_bag(i, w, o, mode=mode, padding_idx=padding_idx,
                                                      include_last_offset=True),
                      weight, indices, offsets, fallbacks=int(device != "cpu"))


@pytest.mark.parametrize("strided", [False, True])  # the fast path needs adjacent weights
def test_embedding_bag_include_last_offset_with_sample_weights(device, strided):
    weight = torch.randn(10, 3, device=device)
    indices = torch.tensor(INDICES, device=device, dtype=torch.int32)
    offsets = torch.tensor(LAST_OFFSETS, device=device, dtype=torch.int32)
    scales = torch.rand(16, device=device)[::2] if strided else torch.rand(8, device=device)
    compile_and_check(lambda w, i, o, s: F.embedding_bag(i, w, o, mode="sum", per_sample_weights=s,
                                                         include_last_offset=True),
                      weight, indices, offsets, scales, fallbacks=int(device != "cpu"))


def test_embedding_bag_include_last_offset_of_one_column_falls_back(device):
    # eager's path hangs on the stride of the weight's size-1 dimension
    weight = torch.randn(10, 1, device=device)
    indices, offsets = (torch.tensor(v, device=device) for v in (INDICES, LAST_OFFSETS))
    compile_and_check(lambda w, i, o: F.embedding_bag(i, w, o, include_last_offset=True),
                      weight, indices, offsets, fallbacks=1)


@pytest.mark.parametrize("layout, offsets", [
    ("contiguous", [0, 3, 3, 9]), ("strided columns", [0, 3, 3, 9]), ("contiguous", [0, 3, 3, 2])])
def test_embedding_bag_include_last_offset_eager_refuses_raises(device, layout, offsets):
    if device != "cpu":
        pytest.skip("include_last_offset runs as the aten op off the CPU")
    weight = weight_of(layout, torch.float32, device)
    indices, offsets = torch.tensor(INDICES), torch.tensor(offsets)
    fn = lambda w, i, o: F.embedding_bag(i, w, o, include_last_offset=True)  # noqa: E731
    with pytest.raises(RuntimeError):
        fn(weight, indices, offsets)
    compiled = compile_fx(torch.fx.symbolic_trace(fn), [weight, indices, offsets])
    with pytest.raises(IndexError, match="index out of bounds"):
        compiled(weight, indices, offsets)


def test_embedding_bag_other_results_fall_back(device):
    weight = torch.randn(10, 3, device=device)
    indices, offsets = (torch.tensor(v, device=device) for v in (INDICES, OFFSETS))
    compile_and_check(lambda w, i, o: aten._embedding_bag_forward_only(w, i, o, False, 1)[:3],
                      weight, indices, offsets, fallbacks=1)


NAN = float("nan")
# rows with NaNs, signed zeros, ties and infinities, to test which position a max bag keeps
MAX_WEIGHT = [[1.0, NAN, 2.0], [NAN, 2.0, -1.0], [3.0, 2.0, 2.0], [-0.0, 0.0, -math.inf],
              [0.0, -0.0, -math.inf], [5.0, 5.0, NAN], [-math.inf, -math.inf, -math.inf]]
MAX_INDICES = [0, 1, 2, 2, 1, 0, 3, 4, 4, 3, 5, 6, 6, 5, 1]


def check_max_bags(weight, indices, offsets, include_last_offset=False, padding_idx=-1):
    """Values and max indices equal eager's bit for bit (NaNs and zeros' signs too)."""
    def fn(w, i, o):
        return aten._embedding_bag_forward_only(w, i, o, False, 2, False, None,
                                                include_last_offset, padding_idx)[::3]
    compiled = compile_fx(torch.fx.symbolic_trace(fn), [weight, indices, offsets])
    got, want = compiled(weight, indices, offsets), fn(weight, indices, offsets)
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape and g.dtype == w.dtype and g.stride() == w.stride()
        torch.testing.assert_close(g, w, atol=0, rtol=0, equal_nan=True)
        if g.dtype.is_floating_point:
            assert torch.equal(g.signbit(), w.signbit())
    if weight.device.type == "cpu":
        assert counters["fallbacks"] == 0 and counters["kernels"] >= 1
    else:  # eager's CUDA kernel is another one, not matched: the aten op runs
        assert counters["fallbacks"] == 1


@pytest.mark.parametrize("include_last_offset", [False, True])
@pytest.mark.parametrize("padding_idx", [-1, 4, 3])
def test_embedding_bag_max(device, include_last_offset, padding_idx):
    # bags: a leading NaN, a later NaN, ties, zeros of both signs, -inf only, empty, padding
    weight = torch.tensor(MAX_WEIGHT, device=device)
    indices = torch.tensor(MAX_INDICES, device=device)
    offsets = torch.tensor([0, 3, 6, 6, 10, 11, 13, 15], device=device)
    check_max_bags(weight, indices, offsets, include_last_offset, padding_idx)


@pytest.mark.parametrize("offsets", [[0, 9, 3], [0, 5, 5, 2], [0, 15, 15]])
@pytest.mark.parametrize("include_last_offset", [False, True])
def test_embedding_bag_max_of_unordered_offsets(device, offsets, include_last_offset):
    # eager's max path counts the offsets at or before each position: no error
    if device != "cpu":
        pytest.skip("CPU eager's behaviour: CUDA eager's max kernel (which the aten op runs off "
                    "the CPU) device-asserts `end >= begin`, ending the process's CUDA context")
    weight = torch.randn(7, 5, device=device)
    indices = torch.tensor(MAX_INDICES, device=device, dtype=torch.int32)
    check_max_bags(weight, indices, torch.tensor(offsets, device=device, dtype=torch.int32),
                   include_last_offset)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float64])
def test_embedding_bag_max_of_a_transposed_weight(device, dtype):
    weight = torch.randn(6, 11, device=device, dtype=dtype).t()
    indices = torch.tensor([3, 10, 0, 7, 7, 2, 9], device=device)
    offsets = torch.tensor([0, 2, 2, 5], device=device, dtype=torch.int32)  # int64 max indices
    check_max_bags(weight, indices, offsets)


def test_embedding_bag_max_of_a_2d_input(device):
    weight = torch.randn(10, 4, device=device)
    indices = torch.tensor([[1, 2, 3], [9, 0, 0]], device=device)
    compile_and_check(lambda w, i: F.embedding_bag(i, w, mode="max"), weight, indices,
                      fallbacks=int(device != "cpu"))


@pytest.mark.parametrize("offsets, include_last_offset", [
    ([1, 3], False), ([0, 3, 16], False), ([0, -1, 3], False), ([0, 3, 16], True)])
def test_embedding_bag_max_of_offsets_eager_refuses_raises(device, offsets,
                                                           include_last_offset):
    if device != "cpu":
        pytest.skip("max bags run as the aten op off the CPU")
    weight = torch.randn(7, 3)
    indices, offsets = torch.tensor(MAX_INDICES), torch.tensor(offsets)

    def fn(w, i, o):
        return F.embedding_bag(i, w, o, mode="max", include_last_offset=include_last_offset)
    with pytest.raises((RuntimeError, IndexError)):
        fn(weight, indices, offsets)
    compiled = compile_fx(torch.fx.symbolic_trace(fn), [weight, indices, offsets])
    with pytest.raises(IndexError, match="index out of bounds"):
        compiled(weight, indices, offsets)


def test_embedding_bag_max_bag_sizes_fall_back(device):
    weight = torch.randn(10, 3, device=device)
    indices, offsets = (torch.tensor(v, device=device) for v in (INDICES, OFFSETS))
    compile_and_check(lambda w, i, o: aten._embedding_bag_forward_only(w, i, o, False, 2)[2:],
                      weight, indices, offsets, fallbacks=1)
