"""Defects found by tracing real models and programs, checked against eager PyTorch."""

from __future__ import annotations

import pytest
import torch

from fakecore import DataDependentError
from fxtrace import make_fx


@pytest.mark.parametrize("mode", ["real", "fake", "symbolic"])
def test_writing_to_a_constant_made_in_fn_leaves_the_graph_constant_alone(mode: str) -> None:
    def fn(a):
        t = torch.tensor([1.0, 2.0])
        t.add_(a.sum())
        return t, torch.tensor([3, 4]).sum().item() * a

    gm = make_fx(fn, mode)(torch.ones(3))
    for _ in range(2):  # the write went into the graph's constant: every call drifted
        got, expected = gm(torch.ones(3)), fn(torch.ones(3))
        torch.testing.assert_close(got, expected)
    assert torch.ops.aten.lift_fresh.default not in [n.target for n in gm.graph.nodes]


def test_a_data_dependent_int_needed_as_a_python_number_says_so() -> None:
    with pytest.raises(DataDependentError, match="_local_scalar_dense.*plain Python number"):
        make_fx(lambda a: a[a.argmax()], "fake")(torch.randn(6))
