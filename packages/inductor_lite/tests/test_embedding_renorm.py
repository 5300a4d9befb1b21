"""`embedding_renorm` (embedding's `max_norm`) as generated kernels, against eager: the results
and the renormed weight (embedding_renorm.py)."""

import math

import pytest
import torch
import torch.nn.functional as F

from inductor_lite import compile_fx, counters

aten = torch.ops.aten


def compile_and_check(fn, weight, *inputs, fallbacks=0):
    """Runs `fn` compiled and eagerly, each on its own copy of `weight` (which both renorm in
    place), and compares the results and the weights afterwards."""
    compiled = compile_fx(torch.fx.symbolic_trace(fn), [weight.clone(), *inputs])
    ours, theirs = weight.clone(), weight.clone()
    got, want = compiled(ours, *inputs), fn(theirs, *inputs)
    assert got.shape == want.shape and got.dtype == want.dtype
    torch.testing.assert_close(got, want)
    torch.testing.assert_close(ours, theirs)
    assert counters["fallbacks"] == fallbacks and counters["kernels"] >= 1


def _weight(rows, width, device, dtype=torch.float32):
    """Rows of norms from about 0.3 to 3: some above max_norm, some below."""
    w = torch.randn(rows, width, device=device, dtype=dtype)
    scales = torch.linspace(0.3, 3, rows, device=device, dtype=dtype)
    return w / w.norm(dim=1, keepdim=True) * scales[:, None]


@pytest.mark.parametrize("norm_type", [1.0, 2.0, 3.0, math.inf])
def test_embedding_max_norm(device, norm_type):
    """2-d indices with a repeated row (renormed once), norms of 1, 2, 3 and inf."""
    weight = _weight(11, 5, device)
    indices = torch.tensor([[1, 4, 10], [4, 0, 7]], device=device)
    compile_and_check(lambda w, i: F.embedding(i, w, max_norm=1.0, norm_type=norm_type),
                      weight, indices)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_renorm_of_a_transposed_weight_and_int32_indices(device, dtype):
    weight = _weight(7, 6, device, dtype).t().contiguous().t()
    indices = torch.tensor([6, 2, 2, 5, 3], device=device, dtype=torch.int32)
    compile_and_check(lambda w, i: F.embedding(i, w, max_norm=0.8), weight, indices)


def test_renorm_with_padding_idx(device):
    """The padding row is renormed too when an index names it, as eager's is."""
    weight = _weight(6, 3, device)
    indices = torch.tensor([5, 0, 5, 2], device=device)
    compile_and_check(lambda w, i: F.embedding(i, w, padding_idx=5, max_norm=0.5), weight,
                      indices)


def test_embedding_bag_max_norm(device):
    weight = _weight(10, 4, device)
    indices, offsets = (torch.tensor(v, device=device) for v in ([1, 2, 4, 5, 4, 3], [0, 2]))
    compile_and_check(lambda w, i, o: F.embedding_bag(i, w, o, max_norm=1.5), weight, indices,
                      offsets)


def test_negative_indices_name_rows_from_the_end(device):
    """`embedding_renorm_` on its own, as eager's `self[index]` reads a negative index."""
    if device != "cpu":
        pytest.skip("CUDA eager's renorm kernel reads an index unchecked: a negative one names "
                    "memory before the weight, not a row from the end")
    weight = _weight(5, 3, device)
    indices = torch.tensor([-1, 1, -5], device=device)
    compile_and_check(lambda w, i: aten.embedding_renorm_(w, i, 1.0, 2.0) * 1, weight, indices)


@pytest.mark.parametrize("index", [5, -6])
def test_an_index_out_of_range_raises(device, index):
    if device != "cpu":
        pytest.skip("on a GPU, the kernel's index check is a device assert, which ends the "
                    "process's CUDA context")
    weight = _weight(5, 3, device)
    indices = torch.tensor([0, index], device=device)
    fn = lambda w, i: aten.embedding_renorm_(w, i, 1.0, 2.0) * 1  # noqa: E731
    with pytest.raises(IndexError):
        fn(weight.clone(), indices)
    compiled = compile_fx(torch.fx.symbolic_trace(fn), [weight.clone(), indices])
    with pytest.raises(IndexError, match="index out of bounds"):
        compiled(weight.clone(), indices)


def test_half_weights_run_as_the_aten_op(device):
    weight = _weight(6, 4, device, torch.float16)
    indices = torch.tensor([1, 3], device=device)
    compile_and_check(lambda w, i: F.embedding(i, w, max_norm=1.0), weight, indices, fallbacks=1)
