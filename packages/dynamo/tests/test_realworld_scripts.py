"""Whole user scripts around a model, run eagerly and with parts compiled: train steps with
`.backward()`, optimizers, schedulers and clipping, bookkeeping in dicts and lists, printed
progress, and decoding loops with a cache and seeded sampling. Everything the script leaves
behind (parameters, optimizer state, losses, printed text, RNG state) must equal eager's."""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable

import pytest
import torch
import torch.nn.functional as F
from counting import counting_backend
from torch import nn

import dynamo

Compile = Callable[[Callable], Callable]


def _data(n: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
    g = torch.Generator().manual_seed(1)
    return [(torch.randn(6, 4, generator=g), torch.randint(0, 2, (6,), generator=g)) for _ in range(n)]


def _classifier() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))


def _train_with_clipping_and_printed_losses(compile: Compile) -> dict:
    model = _classifier()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    losses = []

    def train_step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(loss.item())
        return loss.detach()

    step = compile(train_step)
    outs = []
    for i, (x, y) in enumerate(_data(3)):
        outs.append(step(x, y))
        print(f"step {i} loss {losses[-1]:.4f}")
    return {"params": list(model.parameters()), "opt": opt.state_dict(), "losses": losses, "outs": outs}


def _accumulate_with_adamw_schedule_and_early_stopping(compile: Compile) -> dict:
    model = _classifier()
    opt = torch.optim.AdamW(model.parameters(), lr=0.05, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    history = {"loss": [], "best": float("inf"), "bad": 0}

    def train_step(batches):
        total = 0.0
        for x, y in batches:
            loss = F.cross_entropy(model(x), y) / len(batches)
            loss.backward()
            total += loss.item()
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        sched.step()
        history["loss"].append(total)
        if total < history["best"]:
            history["best"], history["bad"] = total, 0
        else:
            history["bad"] += 1
        return norm

    step = compile(train_step)
    data = _data(6)
    norms = [step(data[i:i + 2]) for i in range(0, 6, 2)]
    return {"params": list(model.parameters()), "opt": opt.state_dict(), "history": history, "norms": norms,
            "epoch": sched.last_epoch}


class _TinyLM(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.emb = nn.Embedding(10, 8)
        self.hidden = nn.Linear(8, 8)
        self.head = nn.Linear(8, 10)
        self.register_buffer("calls", torch.zeros((), dtype=torch.long))

    def forward(self, tokens, cache=None):
        h = self.emb(tokens)
        if cache is not None:
            h = h + cache["h"].mean(1, keepdim=True)
        h = torch.relu(self.hidden(h))
        self.calls += 1
        return self.head(h), h


def _greedy_decode_with_a_dict_cache(compile: Compile) -> dict:
    model = _TinyLM()

    @torch.no_grad()
    def generate(prompt, n):
        cache = {"h": None}
        tokens, picked = prompt, []
        for _ in range(n):
            logits, h = model(tokens, cache if cache["h"] is not None else None)
            cache["h"] = h if cache["h"] is None else torch.cat([cache["h"], h[:, -1:]], 1)
            nxt = logits[:, -1].argmax(-1, keepdim=True)
            tokens = torch.cat([tokens, nxt], 1)
            picked.append(nxt.item())
        return tokens, picked, cache

    gen = compile(generate)
    return {"a": gen(torch.tensor([[1, 2]]), 3), "b": gen(torch.tensor([[3, 4, 5]]), 4), "calls": model.calls}


def _top_k_sampling_seeded_inside(compile: Compile) -> dict:
    model = _TinyLM()

    @torch.no_grad()
    def sample(prompt, n, seed, k=3):
        torch.manual_seed(seed)
        g = torch.Generator().manual_seed(seed + 1)
        tokens, steps = prompt, []
        for _ in range(n):
            logits, h = model(tokens)
            steps.append((h[:, -1], logits[:, -1]))
            top, index = torch.topk(logits[:, -1], k)
            choice = torch.multinomial(F.softmax(top, -1), 1, generator=g)
            tokens = torch.cat([tokens, index.gather(-1, choice)], 1)
        return tokens, tuple(steps), torch.rand(2)

    s = compile(sample)
    return {"a": s(torch.tensor([[1, 2]]), 3, 0), "b": s(torch.tensor([[1, 2]]), 3, 5), "after": torch.rand(3)}


def _forward_of_the_graph(gm: torch.fx.GraphModule, example_inputs: list) -> Callable:
    return gm.forward


def _assert_same(expected, got) -> None:
    if isinstance(expected, torch.Tensor):
        torch.testing.assert_close(got, expected)
    elif isinstance(expected, dict):
        assert list(got) == list(expected)
        for key in expected:
            _assert_same(expected[key], got[key])
    elif isinstance(expected, (list, tuple)):
        assert type(got) is type(expected) and len(got) == len(expected)
        for e, g in zip(expected, got):
            _assert_same(e, g)
    elif isinstance(expected, float):
        # Adam's traced step computes its step size from the float32 step tensor (torch.optim's
        # `_get_value` under compilation, as with torch.compile), eager from a Python float
        assert got == pytest.approx(expected, rel=1e-5)
    else:
        assert got == expected


def _run(script: Callable[[Compile], dict], compile: Compile) -> tuple[dict, str]:
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        result = script(compile)
    return result, printed.getvalue()


@pytest.mark.parametrize("dynamic", [None, True])
@pytest.mark.parametrize("backend", ["eager", _forward_of_the_graph])
@pytest.mark.parametrize("script", [_train_with_clipping_and_printed_losses,
                                    _accumulate_with_adamw_schedule_and_early_stopping,
                                    _greedy_decode_with_a_dict_cache, _top_k_sampling_seeded_inside])
def test_a_script_with_a_compiled_step_matches_eager(script, backend, dynamic) -> None:
    expected, expected_printed = _run(script, lambda fn: fn)
    counted, graphs = counting_backend("eager") if backend == "eager" else (backend, None)
    got, printed = _run(script, lambda fn: dynamo.compile(fn, backend=counted, dynamic=dynamic))
    _assert_same(expected, got)
    assert printed == expected_printed
    if script is _train_with_clipping_and_printed_losses and graphs is not None:
        # one graph between each pair of breaks (zero_grad, backward, item), none recompiled per step
        assert len(graphs) == 4


class _EndsWith:
    """A stopping criterion as generation loops take them: true once every row ends in `token`."""

    def __init__(self, token: int) -> None:
        self.token = token

    def __call__(self, tokens: torch.Tensor) -> bool:
        return bool((tokens[:, -1] == self.token).all())


def _extend_until(tokens, criteria):
    for _ in range(4):
        tokens = torch.cat([tokens, tokens[:, -1:] + 1], -1)
        if any(stop(tokens) for stop in criteria):
            break
    return tokens


def test_a_frame_that_cannot_break_names_the_break_it_needed() -> None:
    # The generator expression closes over `tokens`, which the loop writes again, so the frame
    # cannot break inside it: the warning says why, and also what the break was.
    prompt, criteria = torch.tensor([[1], [1]]), [_EndsWith(3)]
    with pytest.warns(UserWarning, match=r"captured this frame's variables, which are written "
                      r"again; the graph break, at .*test_realworld_scripts.py:\d+: .*"
                      r"branching on a tensor's value"):
        got = dynamo.compile(_extend_until, backend="eager")(prompt, criteria)
    torch.testing.assert_close(got, _extend_until(prompt, criteria))


def _printed_progress_of_a_step_counter_and_a_loss(x, step):
    y = x * 2
    print(f"step {step} loss {y.sum():.4f}")
    return y + 1


def test_printing_a_step_counter_and_a_loss_does_not_recompile_each_step() -> None:
    # The f-string's text is made when the print runs: the step (a symbol) and the loss's text
    # (handed on by the break at the tensor) are not pinned, so one recompilation (the step
    # becoming dynamic), not one per step
    counted, graphs = counting_backend("eager")
    compiled = dynamo.compile(_printed_progress_of_a_step_counter_and_a_loss, backend=counted)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        got = [compiled(torch.ones(2) * i, i) for i in range(6)]
    assert printed.getvalue() == "".join(f"step {i} loss {4.0 * i:.4f}\n" for i in range(6))
    _assert_same([torch.ones(2) * 2 * i + 1 for i in range(6)], got)
    assert len(graphs) == 2
