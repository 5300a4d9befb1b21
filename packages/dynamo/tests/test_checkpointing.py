"""Activation checkpointing (`torch.utils.checkpoint.checkpoint`): torch keeps it out of
graphs, so a call to it is a graph break; it runs for real, with the function it is given
compiled, and recomputes that function in the backward pass as in eager."""

from __future__ import annotations

import functools
import warnings

import pytest
import torch
from counting import counting_backend
from torch import nn
from torch.utils.checkpoint import checkpoint, set_checkpoint_early_stop

import dynamo


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.inner = nn.Linear(4, 4)
        self.outer = nn.Linear(4, 4)
        self.calls = 0
        self.inner.register_forward_hook(self._count)

    def _count(self, *_) -> None:
        self.calls += 1

    def forward(self, x):
        return self.outer(torch.relu(self.inner(x))).sin()


def _block_forward(block: Block, x, scale):
    return block(x) * scale


@pytest.mark.parametrize("use_reentrant", [False, True])
@pytest.mark.parametrize("how", ["module", "partial"])
@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_checkpointed_code_is_recomputed_and_gets_eagers_gradients(use_reentrant, how, backend):
    torch.manual_seed(0)
    block = Block()

    def f(x):
        y = x * 2  # a non-leaf input to the checkpointed function
        if how == "module":
            z = checkpoint(block, y, use_reentrant=use_reentrant)
        else:
            z = checkpoint(functools.partial(_block_forward, block, scale=3.0), y,
                           use_reentrant=use_reentrant)
        return z.sum()

    counted, graphs = counting_backend(backend)
    compiled = dynamo.compile(f, backend=counted)
    x = torch.randn(3, 4, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no fallback to eager
        for _ in range(2):
            grads = []
            for fn in (f, compiled):
                block.zero_grad()
                x.grad = None
                block.calls = 0
                # (without early stop: a recomputation that stops early stops inside the
                # compiled graph, before the hook's replayed side effect)
                with set_checkpoint_early_stop(False):
                    fn(x).backward()
                assert block.calls == 2  # the forward, then its recomputation
                grads.append([x.grad, *(p.grad for p in block.parameters())])
            for got, expected in zip(grads[1], grads[0]):
                torch.testing.assert_close(got, expected)
    # the checkpointed code was compiled too (its own graph, with the block's ops)
    assert any("torch.sin" in gm.code or ".sin()" in gm.code for gm in graphs)
    (reason,) = [b.reason for b in dynamo.explain(f)(x).breaks]
    assert reason.startswith("calling checkpoint, which torch keeps out of compiled graphs")


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_a_recomputation_that_stops_early_stops(backend: str) -> None:
    """Non-reentrant checkpointing stops recomputing once it has every tensor it needs, with
    an exception from a saved-tensor hook: raised inside the compiled graph, it must reach the
    checkpoint (not make the frame run again eagerly)."""
    torch.manual_seed(0)
    block = Block()

    def f(x):
        return checkpoint(block, x * 2, use_reentrant=False).sum()

    x = torch.randn(3, 4, requires_grad=True)
    f(x).backward()
    expected = x.grad.clone()
    x.grad = None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dynamo.compile(f, backend=backend)(x).backward()
    torch.testing.assert_close(x.grad, expected)


def test_requires_grad_on_a_tensor_that_already_requires_grad_is_left_out() -> None:
    """Hugging Face's hook for activation checkpointing makes the embeddings' output require
    grad, which it already does: no op, so the aten backend can lower the graph."""
    w = torch.randn(4, 4, requires_grad=True)

    def f(x):
        y = x @ w
        y.requires_grad_(True)
        return y.sum()

    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return dynamo.backends.lookup_backend("aot_eager")(gm, example_inputs)

    x = torch.randn(2, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dynamo.compile(f, backend=backend)(x).backward()
    assert "requires_grad_" not in graphs[0].code
    torch.testing.assert_close(w.grad, x.sum(0)[:, None].expand(4, 4))
