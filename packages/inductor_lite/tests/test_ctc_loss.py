"""CTC loss's forward as one hand-written kernel (a template kernel), against eager
(ctc_loss.py, template_kernels.py)."""

import pytest
import torch
import torch.nn.functional as F

from inductor_lite import compile_fx, counters

# (batch, time, classes): padded targets of 4 with repeated labels (which forbid the skip),
# an empty target, an input shorter than time, and an element with no input at all
TARGETS = [[1, 1, 2, 2], [3, 0, 0, 0], [2, 4, 2, 1], [4, 4, 4, 3]]
TARGET_LENGTHS = [4, 0, 3, 2]
INPUT_LENGTHS = [9, 5, 0, 7]


def compile_and_check(fn, *inputs, kernels=1, fallbacks=0, **tolerances):
    compiled = compile_fx(torch.fx.symbolic_trace(fn), list(inputs))
    got, want = compiled(*inputs), fn(*inputs)
    assert got.shape == want.shape and got.dtype == want.dtype
    torch.testing.assert_close(got, want, equal_nan=True, **tolerances)
    assert counters["fallbacks"] == fallbacks
    assert fallbacks or counters["kernels"] == kernels


def log_probs(time, batch, classes, dtype=torch.float32, device="cpu"):
    return torch.randn(time, batch, classes, dtype=dtype, device=device).log_softmax(2)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("blank", [0, 3])
def test_ctc_loss_padded_targets(device, dtype, blank):
    lp = log_probs(9, 4, 5, dtype, device)
    targets = torch.tensor(TARGETS, device=device)
    if blank:  # no target label is the blank
        targets = torch.where(targets == blank, 0, targets)
    compile_and_check(lambda lp, t: F.ctc_loss(lp, t, INPUT_LENGTHS, TARGET_LENGTHS, blank=blank,
                                               reduction="none"), lp, targets)


@pytest.mark.parametrize("zero_infinity", [False, True])
def test_ctc_loss_mean(device, zero_infinity):
    # the mean divides by the target lengths (at least 1): a tensor ATen's composite fills
    # through its data pointer, which tracing on fakes could not run (fxtrace's
    # data_writing_composites.py makes it a constant)
    lp = log_probs(9, 4, 5, device=device)
    targets = torch.tensor(TARGETS, device=device)
    # the CTC kernel, then the division and mean's
    compile_and_check(lambda lp, t: F.ctc_loss(lp, t, INPUT_LENGTHS, TARGET_LENGTHS,
                                               zero_infinity=zero_infinity), lp, targets,
                      kernels=2)


def test_ctc_loss_of_a_computed_input(device):
    lp = torch.randn(6, 3, 4, device=device)
    targets = torch.tensor([[1, 2, 2], [3, 1, 0], [2, 2, 2]], device=device)
    # the log_softmax's kernel, then the CTC kernel reading what it stored
    compile_and_check(lambda x, t: F.ctc_loss(x.log_softmax(2), t, [6, 4, 6], [3, 2, 1],
                                              reduction="none"), lp, targets, kernels=2)


@pytest.mark.parametrize("zero_infinity", [False, True])
def test_ctc_loss_concatenated_int32_targets_of_strided_log_probs(device, zero_infinity):
    lp = log_probs(4, 7, 6, device=device).transpose(0, 1)  # (time 7, batch 4, classes 6)
    targets = torch.tensor([1, 1, 2, 5, 3, 3, 3], dtype=torch.int32, device=device)
    # the second element's 3 labels need 5 steps at least: 4 give an infinite loss
    # (the targets' cast to int64 in F.ctc_loss, the CTC kernel, then the sum's)
    compile_and_check(lambda lp, t: F.ctc_loss(lp, t, [7, 4, 6, 2], [2, 2, 3, 0],
                                               reduction="sum", zero_infinity=zero_infinity),
                      lp, targets, kernels=3)


def test_ctc_loss_opinfo_sized(device):
    lp = log_probs(50, 16, 20, device=device)
    targets = torch.randint(1, 20, (16, 30), device=device)
    lengths = torch.randint(10, 30, (16,)).tolist()
    compile_and_check(lambda lp, t: F.ctc_loss(lp, t, [50] * 16, lengths, reduction="none"),
                      lp, targets)


def test_ctc_loss_target_outside_the_classes_fails_the_index_check(device):
    if device != "cpu":
        pytest.skip("bounds are checked by Triton's interpreter: on a GPU the kernels' check is "
                    "a device assert, and only with config.index_asserts")
    lp = log_probs(4, 2, 3, device=device)
    targets = torch.tensor([[1, 2], [1, 3]], device=device)
    compiled = compile_fx(torch.fx.symbolic_trace(
        lambda lp, t: F.ctc_loss(lp, t, [4, 4], [2, 2], reduction="none")), [lp, targets])
    with pytest.raises(IndexError):
        compiled(lp, targets)


def test_ctc_loss_log_alpha_read_runs_as_aten(device):
    lp = log_probs(5, 2, 4, device=device)
    targets = torch.tensor([[1, 2], [3, 3]], device=device)

    def nll_and_alpha(lp, t):
        nll, alpha = torch.ops.aten._ctc_loss(lp, t, [5, 5], [2, 2])
        return nll + alpha[:, 0, 0]  # (the first blank's: the one entry eager always sets)
    compile_and_check(nll_and_alpha, lp, targets, fallbacks=1)


@pytest.mark.parametrize("time, target_lengths", [(1, [1, 0, 1]), (5, [0, 0, 0])])
def test_ctc_loss_one_step_or_no_labels_with_a_nan(device, time, target_lengths):
    lp = log_probs(time, 3, 4, device=device)
    lp[0, 2, 0] = float("nan")  # (the third element's first blank)
    targets = torch.tensor([[2], [1], [3]], device=device)
    compile_and_check(lambda lp, t: F.ctc_loss(lp, t, [time, 0, time], target_lengths,
                                               reduction="none"), lp, targets)


def test_ctc_loss_of_no_time_steps_raises_as_eager(device):
    # eager rejects empty log_probs: the kernel read their first step (out of bounds)
    lp = torch.zeros(0, 2, 3, device=device)
    targets = torch.zeros(2, 0, dtype=torch.int64, device=device)
    compiled = compile_fx(torch.fx.symbolic_trace(
        lambda lp, t: F.ctc_loss(lp, t, [0, 0], [0, 0], reduction="none")), [lp, targets])
    with pytest.raises(RuntimeError, match="must not be empty"):
        compiled(lp, targets)
