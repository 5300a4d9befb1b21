"""Whole user scripts around a model, run eagerly and with parts compiled: train steps with
`.backward()`, optimizers, schedulers and clipping, bookkeeping in dicts, lists and objects,
hooks, state changed between calls (modes, frozen layers, loaded state dicts), printed progress,
and decoding loops with a cache and seeded sampling. Everything the script leaves behind
(parameters, optimizer state, losses, printed text, RNG state) must equal eager's, and the
graphs it makes must not grow with the steps it takes."""

from __future__ import annotations

import contextlib
import copy
import io
import warnings
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
    torch.manual_seed(1234)
    with contextlib.redirect_stdout(printed):
        result = script(compile)
    return {**result, "torch_rng": torch.get_rng_state()}, printed.getvalue()


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


def _sgd_step(model: nn.Module, opt: torch.optim.Optimizer) -> Callable:
    def train_step(x, y):
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss.detach()

    return train_step


def _ema_of_the_weights_under_no_grad(compile: Compile) -> dict:
    model = _classifier()
    ema = copy.deepcopy(model).requires_grad_(False)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)

    @torch.no_grad()
    def update_ema(decay):
        for averaged, current in zip(ema.parameters(), model.parameters()):
            averaged.mul_(decay).add_(current, alpha=1 - decay)

    update = compile(update_ema)
    for x, y in _data(3):
        _sgd_step(model, opt)(x, y)
        update(0.9)
    return {"ema": list(ema.parameters()), "params": list(model.parameters()),
            "requires_grad": [p.requires_grad for p in ema.parameters()]}


class _Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 2 * x * grad


def _train_through_a_custom_autograd_function(compile: Compile) -> dict:
    torch.manual_seed(0)
    hidden, head = nn.Linear(4, 4), nn.Linear(4, 2)
    model = nn.Sequential(hidden, head)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)

    def train_step(x, y):
        loss = F.cross_entropy(head(_Square.apply(hidden(x))), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss.detach()

    step = compile(train_step)
    return {"outs": [step(x, y) for x, y in _data(3)], "params": list(model.parameters())}


def _forward_hooks_record_activations(compile: Compile) -> dict:
    model = _classifier()
    activations = {}

    def record(name):
        def hook(module, inputs, output):
            activations[name] = output.detach()
        return hook

    for name, module in model.named_modules():
        if isinstance(module, nn.Linear):
            module.register_forward_hook(record(name))
    forward = compile(lambda x: model(x).sum())
    outs = []
    for x, _ in _data(3):
        outs.append(forward(x))
        outs.append(dict(activations))
    return {"outs": outs}


class _ConfusionMatrix:
    """An evaluation metric as scripts write them: a plain object, updated inside the step."""

    def __init__(self, classes: int) -> None:
        self.seen = 0
        self.counts = torch.zeros(classes, classes, dtype=torch.long)

    def update(self, logits: torch.Tensor, target: torch.Tensor) -> None:
        self.counts.index_put_((target, logits.argmax(-1)), torch.ones_like(target), accumulate=True)
        self.seen += target.numel()

    def accuracy(self) -> torch.Tensor:
        return self.counts.diag().sum() / self.counts.sum()


def _evaluate_into_a_metric_object(compile: Compile) -> dict:
    model = _classifier()
    metric = _ConfusionMatrix(2)

    @torch.no_grad()
    def eval_step(x, y):
        metric.update(model(x), y)
        return metric.accuracy()

    step = compile(eval_step)
    return {"outs": [step(x, y) for x, y in _data(3)], "counts": metric.counts, "seen": metric.seen}


def _mixup_with_a_seeded_beta_and_label_smoothing(compile: Compile) -> dict:
    model = _classifier()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    g = torch.Generator().manual_seed(3)

    def train_step(x, y, lam):
        perm = torch.randperm(x.shape[0], generator=g)
        logits = model(lam * x + (1 - lam) * x[perm])
        loss = (lam * F.cross_entropy(logits, y, label_smoothing=0.1)
                + (1 - lam) * F.cross_entropy(logits, y[perm], label_smoothing=0.1))
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss.detach()

    step = compile(train_step)
    beta = torch.distributions.Beta(torch.tensor(0.4), torch.tensor(0.4), validate_args=False)
    outs = [step(x, y, beta.sample()) for x, y in _data(3)]
    return {"outs": outs, "params": list(model.parameters()), "generator": g.get_state()}


def _bfloat16_autocast_with_a_grad_scaler(compile: Compile) -> dict:
    model = _classifier()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 10)

    def train_step(x, y):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            logits = model(x)
            loss = F.cross_entropy(logits.float(), y)
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(opt)
        scaler.update()
        opt.zero_grad()
        return loss.detach(), logits.dtype

    step = compile(train_step)
    return {"outs": [step(x, y) for x, y in _data(3)], "params": list(model.parameters()),
            "scale": scaler.get_scale()}


def _lr_warmup_from_an_int_step(compile: Compile) -> dict:
    model = _classifier()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)

    def train_step(x, y, it, base_lr=0.1, warmup=3):
        lr = base_lr * min(1.0, (it + 1) / warmup)
        for group in opt.param_groups:
            group["lr"] = lr
        return _sgd_step(model, opt)(x, y), lr

    step = compile(train_step)
    outs = [step(x, y, i) for i, (x, y) in enumerate(_data(6))]
    return {"outs": outs, "params": list(model.parameters()), "lr": opt.param_groups[0]["lr"]}


class _AttentionLM(nn.Module):
    """A one-layer attention LM whose forward takes and returns its key/value cache as a list."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.emb = nn.Embedding(10, 8)
        self.key = nn.Linear(8, 8)
        self.value = nn.Linear(8, 8)
        self.head = nn.Linear(8, 10)

    def forward(self, tokens, cache):
        h = self.emb(tokens)
        k, v = self.key(h), self.value(h)
        if cache:
            k, v = torch.cat([cache[0], k], 1), torch.cat([cache[1], v], 1)
        attended = torch.softmax(h @ k.transpose(1, 2) / 8 ** 0.5, -1) @ v
        return self.head(attended), [k, v]


def _beam_search_over_python_lists(compile: Compile) -> dict:
    model = _AttentionLM()

    @torch.no_grad()
    def search(prompt, width, steps):
        beams = [(prompt, 0.0)]
        for _ in range(steps):
            candidates = []
            for tokens, score in beams:
                logits, _ = model(tokens, [])
                values, index = torch.topk(torch.log_softmax(logits[0, -1], -1), width)
                for value, token in zip(values.tolist(), index.tolist()):
                    candidates.append((torch.cat([tokens, torch.tensor([[token]])], 1), score + value))
            candidates.sort(key=lambda candidate: candidate[1], reverse=True)
            beams = candidates[:width]
        return beams

    beam = compile(search)
    return {"a": beam(torch.tensor([[1, 2]]), 2, 2), "b": beam(torch.tensor([[3]]), 2, 2)}


def _top_p_sampling_with_a_generator(compile: Compile) -> dict:
    model = _AttentionLM()

    @torch.no_grad()
    def sample(prompt, n, p, g):
        tokens = prompt
        for _ in range(n):
            logits, _ = model(tokens, [])
            ordered, order = torch.sort(logits[:, -1] / 0.8, descending=True)
            beyond = torch.cumsum(torch.softmax(ordered, -1), -1) > p
            beyond[..., 1:] = beyond[..., :-1].clone()
            beyond[..., 0] = False
            ordered = ordered.masked_fill(beyond, float("-inf"))
            choice = torch.multinomial(torch.softmax(ordered, -1), 1, generator=g)
            tokens = torch.cat([tokens, order.gather(-1, choice)], 1)
        return tokens

    s = compile(sample)
    g = torch.Generator().manual_seed(7)
    return {"a": s(torch.tensor([[1, 2], [3, 4]]), 3, 0.9, g), "b": s(torch.tensor([[5, 2], [3, 4]]), 3, 0.5, g),
            "generator": g.get_state()}


def _greedy_decode_with_a_list_cache_grown_by_cat(compile: Compile) -> dict:
    model = _AttentionLM()

    @torch.no_grad()
    def generate(prompt, n):
        logits, cache = model(prompt, [])
        picked = [logits[:, -1].argmax(-1, keepdim=True)]
        for _ in range(n):
            logits, cache = model(picked[-1], cache)
            picked.append(logits[:, -1].argmax(-1, keepdim=True))
        return torch.cat(picked, 1), cache

    gen = compile(generate)
    return {"a": gen(torch.tensor([[1, 2]]), 3), "b": gen(torch.tensor([[3, 4, 1]]), 3)}


class _MultiTask(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.heads = nn.ModuleDict({"cls": nn.Linear(4, 2), "reg": nn.Linear(4, 1),
                                    "emb": nn.Sequential(nn.Linear(4, 3), nn.Tanh())})

    def forward(self, x, task):
        return self.heads[task](x)


def _module_dict_head_picked_by_a_string(compile: Compile) -> dict:
    forward = compile(_MultiTask())
    x = torch.randn(3, 4)
    return {"outs": [forward(x, task) for task in ["cls", "reg", "emb", "cls", "reg", "emb"]]}


def _state_dicts_saved_and_restored_between_calls(compile: Compile) -> dict:
    model = _classifier()
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    step, evaluate = compile(_sgd_step(model, opt)), compile(lambda x: model(x))
    data = _data(3)
    outs = [step(*data[0])]
    saved = copy.deepcopy(model.state_dict()), copy.deepcopy(opt.state_dict())
    outs += [step(*data[1]), evaluate(data[2][0])]
    model.load_state_dict(saved[0])
    opt.load_state_dict(saved[1])
    outs += [evaluate(data[2][0]), step(*data[1]), evaluate(data[2][0])]
    return {"outs": outs, "params": list(model.parameters()), "opt": opt.state_dict()}


def _train_and_eval_toggled_with_batch_norm_and_dropout(compile: Compile) -> dict:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.Dropout(0.5), nn.Linear(8, 2))
    forward = compile(model)
    outs = []
    for i, (x, _) in enumerate(_data(4)):
        model.train(i % 2 == 0)
        outs.append(forward(x))
    return {"outs": outs, "state": model.state_dict()}


def _layers_frozen_and_unfrozen_between_steps(compile: Compile) -> dict:
    model = _classifier()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    step = compile(_sgd_step(model, opt))
    outs = []
    for i, (x, y) in enumerate(_data(4)):
        if i == 1:
            model[0].requires_grad_(False)
        if i == 2:
            model[0].requires_grad_(True)
            model[2].requires_grad_(False)
        outs.append(step(x, y))
        outs.append([p.grad for p in model.parameters()])
    return {"outs": outs, "params": list(model.parameters())}


def _tied_input_and_output_embeddings(compile: Compile) -> dict:
    torch.manual_seed(0)
    emb, head = nn.Embedding(10, 4), nn.Linear(4, 10, bias=False)
    head.weight = emb.weight
    opt = torch.optim.Adam(emb.parameters(), lr=0.01)

    def train_step(tokens):
        loss = F.cross_entropy(head(emb(tokens)).flatten(0, 1), tokens.flatten())
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss.detach()

    step = compile(train_step)
    tokens = torch.tensor([[1, 2, 3], [4, 5, 6]])
    return {"outs": [step(tokens) for _ in range(3)], "weight": emb.weight, "tied": head.weight is emb.weight}


@pytest.mark.parametrize("backend", ["eager", _forward_of_the_graph])
# The graphs each script makes with the "eager" backend: a count that grows with the steps
# taken is a recompilation at every step
@pytest.mark.parametrize(("script", "graph_count"), [
    (_ema_of_the_weights_under_no_grad, 1),
    (_train_through_a_custom_autograd_function, 3),  # loss, update, detach: broken at backward
    (_forward_hooks_record_activations, 1),
    (_evaluate_into_a_metric_object, 2),  # `seen` becomes a symbol at its second value
    (_mixup_with_a_seeded_beta_and_label_smoothing, 3),
    (_bfloat16_autocast_with_a_grad_scaler, 5),  # the scaler makes its scale in the first step
    (_lr_warmup_from_an_int_step, 5),  # `it` becomes a symbol; `min` flips once warmup ends
    (_beam_search_over_python_lists, 12),  # breaks at each tolist(); the prompt length, once
    (_top_p_sampling_with_a_generator, 9),
    (_greedy_decode_with_a_list_cache_grown_by_cat, 2),  # the prompt length, once
    (_module_dict_head_picked_by_a_string, 3),  # one per head
    (_state_dicts_saved_and_restored_between_calls, 5),  # Adam's state appears; none on loading
    (_train_and_eval_toggled_with_batch_norm_and_dropout, 2),  # one per mode
    (_layers_frozen_and_unfrozen_between_steps, 7),  # each freezing recompiles loss and update
    (_tied_input_and_output_embeddings, 4),  # Adam's state appears after the first step
])
def test_a_script_around_a_model_matches_eager(script, graph_count, backend) -> None:
    expected, expected_printed = _run(script, lambda fn: fn)
    counted, graphs = counting_backend("eager") if backend == "eager" else (backend, None)
    got, printed = _run(script, lambda fn: dynamo.compile(fn, backend=counted))
    _assert_same(expected, got)
    assert printed == expected_printed
    if graphs is not None:
        assert len(graphs) == graph_count


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


def test_a_stopping_criterion_over_a_cell_the_loop_writes_breaks_cleanly() -> None:
    # The generator expression closes over `tokens`, which the loop writes again: the resume
    # functions share the frame's cell with it, so the frame breaks instead of running eagerly.
    prompt, criteria = torch.tensor([[1], [1]]), [_EndsWith(3)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = dynamo.compile(_extend_until, backend="eager")(prompt, criteria)
    torch.testing.assert_close(got, _extend_until(prompt, criteria))
    assert dynamo.explain(_extend_until)(prompt, criteria).eager == []


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
