"""`embedding_bag` (sum and mean bags) as a generated reduction, against eager (embedding_bag.py)."""

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


@pytest.mark.parametrize("args", [dict(mode="max"), dict(include_last_offset=True)])
def test_embedding_bag_falls_back(device, args):
    weight = torch.randn(10, 3, device=device)
    indices, offsets = (torch.tensor(v, device=device) for v in (INDICES, OFFSETS))
    compile_and_check(lambda w, i, o: F.embedding_bag(i, w, o, **args), weight, indices,
                      offsets, fallbacks=1)


def test_embedding_bag_other_results_fall_back(device):
    weight = torch.randn(10, 3, device=device)
    indices, offsets = (torch.tensor(v, device=device) for v in (INDICES, OFFSETS))
    compile_and_check(lambda w, i, o: aten._embedding_bag_forward_only(w, i, o, False, 1)[:3],
                      weight, indices, offsets, fallbacks=1)
