"""Composite ops whose C++ body writes a tensor through its data pointer, traced as their
Python versions (data_writing_composites.py)."""

import pytest
import torch
import torch.nn.functional as F

from fxtrace import make_fx


@pytest.mark.parametrize("tracing_mode", ["real", "fake"])
@pytest.mark.parametrize("call", [
    lambda lp, t: F.ctc_loss(lp, t, [5, 4, 3], [2, 0, 1]),  # "mean", the default
    lambda lp, t: torch.ctc_loss(lp, t, (5, 4, 3), (2, 0, 1), 0, 1, True),
    lambda lp, t: torch.ops.aten.ctc_loss.IntList(lp, t, [5, 4, 3], [2, 0, 1]),
    lambda lp, t: F.ctc_loss(lp, t, [5, 4, 3], [2, 0, 1], reduction="sum"),
])
def test_ctc_loss_mean_divides_by_the_target_lengths(tracing_mode, call):
    # ATen's mean divides by a tensor it fills from the list: traced as it is, the graph held
    # an `empty` (real mode: a wrong result; on fakes the trace raised)
    lp = torch.randn(5, 3, 4, dtype=torch.float64).log_softmax(2)
    targets = torch.tensor([1, 2, 3], dtype=torch.int32)
    gm = make_fx(call, tracing_mode)(lp, targets)
    assert "empty" not in gm.code
    torch.testing.assert_close(gm(lp, targets), call(lp, targets), rtol=0, atol=0)


def test_ctc_loss_unbatched_mean():
    lp = torch.randn(6, 4).log_softmax(1)
    targets = torch.tensor([1, 2, 3])
    fn = lambda lp, t: F.ctc_loss(lp, t, [6], [3])  # noqa: E731
    torch.testing.assert_close(make_fx(fn, "fake")(lp, targets)(lp, targets), fn(lp, targets), rtol=0, atol=0)
