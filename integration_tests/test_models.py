"""The whole stack on real models: dynamo captures them whole, and the results (and, in
training, the gradients) equal eager's, with each backend."""

from __future__ import annotations

import pytest
import torch
from models import GPT, MLP, SmallCNN, TransformerBlock
from torch import nn

import dynamo


class Heads(nn.Module):
    """Submodules in a ModuleList and a ModuleDict, iterated and indexed."""

    def __init__(self) -> None:
        super().__init__()
        self.trunk = nn.ModuleList(nn.Linear(16, 16) for _ in range(3))
        self.heads = nn.ModuleDict({"cls": nn.Linear(16, 4), "reg": nn.Linear(16, 1)})

    def forward(self, x):
        for layer in self.trunk:
            x = torch.relu(layer(x))
        return {name: head(x) for name, head in self.heads.items()}


CASES = {
    "mlp": (lambda: MLP(), lambda: torch.randn(8, 32)),
    "cnn": (lambda: SmallCNN(), lambda: torch.randn(4, 3, 16, 16)),
    "transformer_block": (lambda: TransformerBlock(), lambda: torch.randn(2, 16, 64)),
    "gpt": (lambda: GPT(), lambda: torch.randint(0, 256, (2, 24))),
    "heads": (lambda: Heads(), lambda: torch.randn(5, 16)),
}


@pytest.fixture(autouse=True)
def fresh():
    dynamo.reset()
    torch.manual_seed(0)


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
@pytest.mark.parametrize("name", CASES)
def test_inference(name: str, backend: str) -> None:
    make_model, make_input = CASES[name]
    model = make_model().eval()
    compiled = dynamo.compile(model, backend=backend, fullgraph=True)
    for _ in range(2):
        x = make_input()
        with torch.no_grad():
            torch.testing.assert_close(compiled(x), model(x))
    assert len(compiled._compiled_forward.cache) == 1


@pytest.mark.parametrize("name", CASES)
def test_training_gradients(name: str) -> None:
    make_model, make_input = CASES[name]
    model = make_model().train()
    compiled = dynamo.compile(model, fullgraph=True)
    x = make_input()
    if x.is_floating_point():
        x.requires_grad_(True)

    def gradients(fn):
        model.zero_grad()
        if x.grad is not None:
            x.grad = None
        out = fn(x)
        loss = sum(v.sum() for v in out.values()) if isinstance(out, dict) else out.sum()
        loss.backward()
        grads = [p.grad.clone() for p in model.parameters()]
        return loss.detach(), grads + ([x.grad.clone()] if x.requires_grad else [])

    torch.manual_seed(1)
    loss, grads = gradients(compiled)
    torch.manual_seed(1)
    expected_loss, expected_grads = gradients(model)
    torch.testing.assert_close(loss, expected_loss)
    for got, expected in zip(grads, expected_grads):
        torch.testing.assert_close(got, expected)


def test_gpt_dynamic_sequence_length_shares_one_graph() -> None:
    model = GPT().eval()
    compiled = dynamo.compile(model, dynamic=True, fullgraph=True)
    for t in (8, 16, 31):
        idx = torch.randint(0, 256, (2, t))
        torch.testing.assert_close(compiled(idx), model(idx))
    assert len(compiled._compiled_forward.cache) == 1


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_gpt_training_loop_with_a_compiled_forward_and_optimizer_step(backend: str) -> None:
    """A training loop as people write it: the model and `optimizer.step` compiled, the loss and
    `backward()` around them; the weights follow eager's for several steps. (SGD: a compiled
    Adam's float32 bias corrections differ from eager's in the last bits, which its update
    amplifies for parameters whose gradient is rounding noise, such as attention's key bias;
    torch.compile's does the same.)"""
    import copy

    model = GPT().train()
    reference = copy.deepcopy(model)
    opt, ref_opt = (torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9, weight_decay=0.01)
                    for m in (model, reference))
    forward = dynamo.compile(model, backend=backend, fullgraph=True)
    step = dynamo.compile(opt.step, backend=backend, fullgraph=True)
    for i in range(3):
        idx = torch.randint(0, 256, (2, 16))
        for fn, optimizer, update in ((forward, opt, step), (reference, ref_opt, ref_opt.step)):
            optimizer.zero_grad()
            torch.manual_seed(i)  # the same dropout masks
            fn(idx).logsumexp(-1).mean().backward()
            update()
    for got, expected in zip(model.parameters(), reference.parameters()):
        torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-5)
