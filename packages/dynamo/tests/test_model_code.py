"""Patterns of real model code that once went wrong: hooks filling a dict the forward published,
an optimizer stepped through a learning-rate scheduler, a generation loop feeding the last token
of a growing sequence."""

from __future__ import annotations

import copy
import warnings

import pytest
import torch
import torch.nn as nn
from counting import counting_backend

import dynamo


class Collector:
    value = None


COLLECTOR = Collector()


def _collect(module, args, out):
    if COLLECTOR.value is not None and "h" in COLLECTOR.value:
        COLLECTOR.value["h"].append(out)


class Hooked(nn.Module):
    """As Hugging Face collects hidden states: the forward publishes a dict in a global, hooks
    of the layers append to it, the forward returns what they appended."""

    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(4, 4) for _ in range(2))
        for layer in self.layers:
            layer.register_forward_hook(_collect)

    def forward(self, x, want):
        collected = {"h": []} if want else {}
        COLLECTOR.value = collected
        for layer in self.layers:
            x = layer(x)
        COLLECTOR.value = None
        return x, tuple(collected.get("h", ()))


def test_a_container_made_in_the_trace_is_one_object_everywhere() -> None:
    model = Hooked()
    compiled = dynamo.compile(model)
    x = torch.randn(1, 4)
    for want in (True, False, True):
        got, expected = compiled(x, want), model(x, want)
        assert len(got[1]) == len(expected[1])
        for g, e in zip(got[1], expected[1]):
            torch.testing.assert_close(g, e)

    holder = Collector()

    def f(x):
        d = []
        holder.value = d
        print(end="")  # a break between the store and the reads
        d.append(1)
        return x + 1, holder.value is d, len(holder.value)

    assert dynamo.compile(f)(torch.zeros(2))[1:] == (True, 1)


def _train(compiled: bool) -> list[torch.Tensor]:
    torch.manual_seed(0)
    model = nn.Linear(2, 2)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    sched = torch.optim.lr_scheduler.StepLR(opt, 1, gamma=0.5)

    def step(x):
        opt.zero_grad()
        model(x).sum().backward()
        opt.step()
        sched.step()

    run = dynamo.compile(step) if compiled else step
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i in range(3):
            run(torch.full((2, 2), float(i)))
    assert all(type(v) is torch.Tensor for s in opt.state.values() for v in s.values())
    return [p.detach().clone() for p in model.parameters()]


def test_a_train_step_with_a_scheduler_keeps_real_optimizer_state() -> None:
    for a, b in zip(_train(compiled=True), _train(compiled=False)):
        torch.testing.assert_close(a, b)


def test_the_last_token_of_a_growing_sequence_does_not_recompile() -> None:
    def f(tok):
        return tok * 2

    compiled = dynamo.compile(f)
    ids = torch.zeros(1, 3)
    for _ in range(12):  # (1, 1) each time, with stride(0) the sequence's length
        torch.testing.assert_close(compiled(ids[:, -1:]), f(ids[:, -1:]))
        ids = torch.cat([ids, torch.ones(1, 1)], 1)
    assert len(compiled.cache.entries) == 1

    def g(t):
        return t * 2, t.stride(0)  # reading the stride of a size-1 dim guards it

    compiled = dynamo.compile(g)
    for width in (4, 7, 4):
        t = torch.zeros(1, width)[:, :2]
        assert compiled(t)[1] == g(t)[1]


class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 2 * grad * x


def test_autograd_details_match_eager_on_every_backend() -> None:
    def attributes(x):
        y = x * 2
        return y * 0 + (y.grad_fn is None) * 100 + (y._version == 0) * 10 + (y.output_nr == 0)

    def custom(x):
        return Square.apply(x).sum()

    def asks(x):
        w = torch.ones(3, requires_grad=True)
        y = x * 2
        y.detach_()
        return w, (x * w).sum(), y

    for backend in ("eager", "aot_eager"):
        dynamo.reset()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # aot_eager refuses `asks`, which then runs eagerly
            x = torch.ones(3, requires_grad=True)
            torch.testing.assert_close(dynamo.compile(attributes, backend=backend)(x),
                                       attributes(x))
            dynamo.compile(custom, backend=backend)(x).backward()
            torch.testing.assert_close(x.grad, 2 * x.detach())
            w, loss, y = dynamo.compile(asks, backend=backend)(x)
            assert w.requires_grad and loss.requires_grad and not y.requires_grad


class StraightThrough(torch.autograd.Function):
    """Rounds going forward, passes the gradient through unchanged going back."""

    @staticmethod
    def forward(ctx, x):
        return torch.round(x)

    @staticmethod
    def backward(ctx, grad):
        return grad


def test_custom_function_is_a_graph_node_and_keeps_its_backward() -> None:
    def f(x):
        return (StraightThrough.apply(x * 3) * 2).sum()

    for backend in ("eager", "aot_eager"):
        dynamo.reset()
        counting, graphs = counting_backend(backend)
        x = torch.tensor([0.2, 0.7, 1.4], requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # aot_eager keeps the Function's apply as one call
            loss = dynamo.compile(f, backend=counting, fullgraph=True,
                                  raise_backend_errors=True)(x)
        loss.backward()
        assert len(graphs) == 1 and loss.item() == 14.0
        torch.testing.assert_close(x.grad, torch.full((3,), 6.0))  # not round's zero gradient
        with torch.no_grad():  # no gradients recorded: lowered like any op
            assert dynamo.compile(f, backend=backend)(x).item() == 14.0
    graph = []
    dynamo.reset()
    with torch.no_grad():  # the graph's own code can call the Function (no backend fallback)
        dynamo.compile(f, backend=lambda gm, example_inputs: graph.append(gm) or gm,
                       raise_backend_errors=True)(x)
        assert graph[0](x)[0].item() == 14.0


def _clamp_and_mark(ctx, x):
    x.clamp_(min=0)
    ctx.mark_dirty(x)


class ReluInPlace(torch.autograd.Function):
    """Marks its input dirty out of sight of `forward`'s own code: in a helper."""

    @staticmethod
    def forward(ctx, x):
        _clamp_and_mark(ctx, x)
        ctx.save_for_backward(x)
        return x

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return grad * (y > 0)


def test_a_custom_function_that_marks_its_input_dirty_in_a_helper_runs_for_real() -> None:
    def f(x):
        h = x * 1
        out = ReluInPlace.apply(h)
        return h + 0, out

    for backend in ("eager", "aot_eager"):
        dynamo.reset()
        x = torch.tensor([-1.0, 2.0, -3.0], requires_grad=True)
        h, out = dynamo.compile(f, backend=backend)(x)
        assert h.tolist() == out.tolist() == [0.0, 2.0, 0.0]
        assert type(out.grad_fn).__name__ == "ReluInPlaceBackward"
        explained = dynamo.explain(f)(x)
        assert "marks an input dirty" in explained.breaks[0].reason


class DoubleInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x.mul_(2)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad * 2


def test_a_custom_function_that_marks_its_input_dirty_says_so_at_its_break() -> None:
    def f(x):
        return DoubleInPlace.apply(x * 1) + 1

    x = torch.tensor([1.0, 2.0], requires_grad=True)
    reason = dynamo.explain(f)(x).breaks[0].reason
    assert "DoubleInPlace.apply" in reason and "marks an input dirty" in reason
    with pytest.raises(dynamo.Unsupported, match="DoubleInPlace.apply.*marks an input dirty"):
        dynamo.compile(f, backend="eager", fullgraph=True)(x)


class UpdatesItsBuffer(torch.autograd.Function):
    """Writes a buffer it is given in place without `mark_dirty` (the buffer needs no grad),
    as SyncBatchNorm's Function updates the running statistics."""

    @staticmethod
    def forward(ctx, x, running):
        running.add_(x)
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        return grad * 2, None


class UpdatesItsBufferData(UpdatesItsBuffer):
    """The same, through `.data` (which has a version counter of its own)."""

    @staticmethod
    def forward(ctx, x, running):
        running.data.add_(x)
        return x * 2


@pytest.mark.parametrize("function", [UpdatesItsBuffer, UpdatesItsBufferData])
def test_a_custom_functions_write_to_a_buffer_stays_when_its_result_is_unused(function) -> None:
    def f(x, running):
        function.apply(x, running)  # only for its write
        return running * 1

    for backend in ("eager", "aot_eager"):
        for requires_grad in (False, True):
            dynamo.reset()
            x = torch.ones(3, requires_grad=requires_grad)
            running = torch.zeros(3)
            with warnings.catch_warnings():
                warnings.simplefilter("error")  # (no backend fallback: it lowers)
                out = dynamo.compile(f, backend=backend, raise_backend_errors=True)(x, running)
            # the unused call was dropped as dead code: zeros, the buffer unwritten (aot_eager's
            # aten graph dropped it; through `.data` no version counter moved: the frontend did)
            assert out.tolist() == running.tolist() == [1.0, 1.0, 1.0]


def test_a_defaultdicts_missing_key_is_not_added_by_a_later_call() -> None:
    import collections

    def f(d, x):
        if "a" in d:
            return d["a"] + x
        return x * 10

    compiled = dynamo.compile(f, backend="eager")
    full = collections.defaultdict(lambda: torch.zeros(3), a=torch.ones(3))
    empty = collections.defaultdict(lambda: torch.zeros(3))
    x = torch.ones(3)
    assert torch.equal(compiled(full, x), f(full, x))
    assert torch.equal(compiled(empty, x), torch.full((3,), 10.0)) and dict(empty) == {}


def test_gradient_clipping_reads_the_parameters_grads():
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 4)
    twin = copy.deepcopy(model)

    def clip(module, max_norm):
        grads = [p.grad for p in module.parameters() if p.grad is not None]
        total = torch.norm(torch.stack([torch.norm(g) for g in grads]))
        scale = (max_norm / (total + 1e-6)).clamp(max=1.0)
        for g in grads:
            g.mul_(scale)
        return total

    compiled = dynamo.compile(clip, backend="eager", fullgraph=True)
    for step in range(3):
        x = torch.randn(8, 4)
        model(x).pow(2).sum().backward()
        twin(x).pow(2).sum().backward()
        if step == 2:  # a parameter without a gradient: the guard on its .grad notices
            model.bias.grad = twin.bias.grad = None
        torch.testing.assert_close(compiled(twin, 0.5), clip(model, 0.5))
        torch.testing.assert_close(twin.weight.grad, model.weight.grad)
        model.zero_grad()
        twin.zero_grad()


def test_gradients_set_by_hand_in_a_compiled_step():
    """`p.grad = None` (a hand-written zero_grad) and `p.grad = a tensor` are set after the
    graph and read back by the trace; one graph."""
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 3)

    def step(x):
        for p in model.parameters():
            p.grad = None
        unset = [p.grad is None for p in model.parameters()]
        model.bias.grad = torch.ones_like(model.bias) * x.sum()
        return model(x).sum(), unset, model.bias.grad * 2

    x = torch.randn(2, 4)
    model(x).sum().backward()
    compiled = dynamo.compile(step, backend="eager", fullgraph=True)
    loss, unset, doubled = compiled(x)
    assert unset == [True, True] and model.weight.grad is None
    torch.testing.assert_close(model.bias.grad, torch.ones(3) * x.sum())
    torch.testing.assert_close(doubled, model.bias.grad * 2)
    torch.testing.assert_close(loss, model(x).sum())

    def wrong_size(x):
        model.bias.grad = torch.ones(5)  # eager raises; the trace breaks and eager raises
        return x + 1

    with pytest.raises(dynamo.Unsupported, match="setting .grad to anything but None"):
        dynamo.compile(wrong_size, backend="eager", fullgraph=True)(x)


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_a_cosine_learning_rate_schedule_in_a_compiled_step_stays_compiled(backend):
    """`math.cos` of the scheduler's step count (a number seen to change) is traced as torch's
    SymFloat-aware cosine: a few compilations, not one per step up to the cache limit."""
    import math

    import torch.nn.functional as F

    def training(model):
        opt = torch.optim.SGD(model.parameters(), lr=0.05)
        schedule = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=5)

        def step(x, y):
            opt.zero_grad()
            loss = F.mse_loss(model(x), y)
            loss.backward()
            opt.step()
            schedule.step()
            return loss.detach(), opt.param_groups[0]["lr"]
        return step

    torch.manual_seed(0)
    model = nn.Linear(4, 2)
    twin = copy.deepcopy(model)
    eager, compiled_step = training(model), training(twin)
    dynamo.reset()
    compiled = dynamo.compile(compiled_step, backend=backend)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the cache limit's warning fails the test
        for _ in range(12):
            x, y = torch.randn(6, 4), torch.randn(6, 2)
            (want, want_lr), (got, got_lr) = eager(x, y), compiled(x, y)
            torch.testing.assert_close(got, want)
            assert math.isclose(got_lr, want_lr, rel_tol=1e-12)
    torch.testing.assert_close(twin.weight, model.weight)


def test_training_step_with_clipping_and_optimizers_matches_eager():
    import typing

    import torch.nn.functional as F

    def annotated(x):  # type annotations evaluated while running: constants
        return typing.cast(typing.Optional[torch.Tensor], x) * 2  # noqa: UP045

    assert torch.equal(dynamo.compile(annotated, backend="eager", fullgraph=True)(
        torch.ones(2)), torch.full((2,), 2.0))
    for make in (lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9),
                 lambda p: torch.optim.AdamW(p, lr=0.01)):
        torch.manual_seed(0)
        eager_model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
        model = copy.deepcopy(eager_model)
        eager_opt, opt = make(eager_model.parameters()), make(model.parameters())

        def step(m, optimizer, x, y):
            optimizer.zero_grad()
            loss = F.cross_entropy(m(x), y)
            loss.backward()
            norm = torch.nn.utils.clip_grad_norm_(m.parameters(), max_norm=0.5)  # followed
            optimizer.step()  # its record_function block is a no-op
            return loss.detach(), norm

        compiled = dynamo.compile(step, backend="eager")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for _ in range(3):
                x, y = torch.randn(5, 4), torch.randint(0, 2, (5,))
                got, want = compiled(model, opt, x, y), step(eager_model, eager_opt, x, y)
                torch.testing.assert_close(got, want)
        for p, q in zip(model.parameters(), eager_model.parameters()):
            torch.testing.assert_close(p, q)


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_clip_grad_norm_of_a_list_of_parameters_reads_their_grads_in_the_graph(backend) -> None:
    """Given a list (a graph node could take it), clip_grad_norm_ is still followed: as one
    node its reads of `.grad` were hidden from the graph, and lowered on the fakes they
    became fake constants (a fake norm returned, the grads left unclipped)."""
    torch.manual_seed(0)
    model = nn.Linear(4, 2)
    eager_model = copy.deepcopy(model)
    x = torch.randn(3, 4)
    for m in (model, eager_model):
        m(x).pow(2).mean().backward()
    clip = dynamo.compile(lambda ps, most: torch.nn.utils.clip_grad_norm_(ps, most),
                          backend=backend, raise_backend_errors=True)
    with torch.no_grad():
        norm = clip(list(model.parameters()), 0.1)
    torch.testing.assert_close(norm, torch.nn.utils.clip_grad_norm_(
        list(eager_model.parameters()), 0.1))
    for p, q in zip(model.parameters(), eager_model.parameters()):
        torch.testing.assert_close(p.grad, q.grad)


def test_recurrent_modules_are_one_graph_and_see_a_replaced_weight() -> None:
    """An RNN's forward first checks its weights against weak references to them: calling a
    weak reference is traced (it broke the graph before the recurrent kernel)."""
    torch.manual_seed(0)
    for rnn in (nn.LSTM(8, 16, 2, batch_first=True), nn.GRU(8, 16, bidirectional=True),
                nn.RNN(8, 16)):
        rnn.eval()
        explained = dynamo.explain(rnn)(torch.randn(3, 5, 8))
        assert explained.graph_count == 1 and not explained.breaks and not explained.eager
        compiled = dynamo.compile(rnn, backend="eager")
        x = torch.randn(3, 5, 8)
        torch.testing.assert_close(compiled(x)[0], rnn(x)[0])
        rnn.weight_hh_l0 = nn.Parameter(torch.randn_like(rnn.weight_hh_l0))
        torch.testing.assert_close(compiled(x)[0], rnn(x)[0])


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_recurrent_dropout_between_layers_in_training(backend) -> None:
    """PyTorch's Python decompositions of the RNN ops never apply the dropout between layers
    (`num_layers < i - 1`): lowered through them, a training-mode `nn.LSTM(..., dropout=p)`
    ran without dropout. The trace runs such an op a layer at a time, as ATen does: the same
    masks as eager under the same seed, packed sequences and backward included."""
    from torch.nn.utils.rnn import pack_padded_sequence

    torch.manual_seed(0)
    x = torch.randn(5, 3, 4)
    for rnn in (nn.LSTM(4, 6, 3, dropout=0.4, batch_first=True, bidirectional=True),
                nn.LSTM(4, 6, 2, dropout=0.4, proj_size=3),
                nn.GRU(4, 6, 2, dropout=0.4), nn.RNN(4, 6, 3, dropout=0.4, nonlinearity="relu")):
        compiled = dynamo.compile(rnn, backend=backend)
        packed = pack_padded_sequence(x, torch.tensor([5, 3, 2]))
        for inp in (x, packed):
            torch.manual_seed(1)
            expected = rnn(inp)
            torch.manual_seed(1)
            got = compiled(inp)
            out_e = expected[0].data if isinstance(inp, type(packed)) else expected[0]
            out_g = got[0].data if isinstance(inp, type(packed)) else got[0]
            torch.testing.assert_close(out_g, out_e)
            grads = [torch.autograd.grad(o.sum(), list(rnn.parameters())) for o in (out_g, out_e)]
            for g, e in zip(*grads):
                torch.testing.assert_close(g, e)


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_recurrent_dropout_that_changes_between_calls(backend) -> None:
    """A dropout changed between calls (a schedule) is a float made a symbol on the call after:
    it is pinned before choosing the layer-at-a-time trace, not left to the one op, whose
    Python decomposition (aot_eager) dropped the dropout between layers."""
    from torch.nn.utils.rnn import pack_padded_sequence

    torch.manual_seed(0)
    x = torch.randn(5, 3, 4)
    for rnn in (nn.GRU(4, 6, 2, dropout=0.5), nn.LSTM(4, 6, 2, dropout=0.5)):
        compiled = dynamo.compile(rnn, backend=backend)
        for p in (0.5, 0.0, 0.9, 0.3):
            rnn.dropout = p
            for inp in (x, pack_padded_sequence(x, torch.tensor([5, 3, 2]))):
                torch.manual_seed(1)
                expected = rnn(inp)[0]
                torch.manual_seed(1)
                got = compiled(inp)[0]
                if not isinstance(expected, torch.Tensor):
                    expected, got = expected.data, got.data
                torch.testing.assert_close(got, expected)


def test_breaks_of_sequence_ops_that_read_data_in_cpp_name_the_data() -> None:
    """`pad_packed_sequence` (its C++ reads the batch sizes) and `ctc_loss` of int lengths
    (its C++ writes them into a tensor it made) break with a reason in words, not
    "raised RuntimeError while tracing: ... data is not allocated yet", and a break inside an
    RNN module that also compiles on its own is listed once."""
    import torch.nn.functional as F
    from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

    def ctc(logits, targets):
        return F.ctc_loss(logits.log_softmax(-1), targets, [12, 11, 10], [4, 3, 2])

    rnn = nn.LSTM(4, 6, batch_first=True)

    def packed(x, lengths):
        out, _ = rnn(pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False))
        return pad_packed_sequence(out, batch_first=True)[0]

    logits, targets = torch.randn(12, 3, 6), torch.randint(1, 6, (3, 4))
    x, lengths = torch.randn(3, 5, 4), torch.tensor([3, 5, 2])
    for explained, expected in ((dynamo.explain(ctc)(logits, targets), ctc(logits, targets)),
                                (dynamo.explain(packed)(x, lengths), packed(x, lengths))):
        torch.testing.assert_close(explained.result, expected)
        reasons = [b.reason for b in explained.breaks]
        assert not any("while tracing" in r for r in reasons), reasons
        assert any("depends on tensor data" in r for r in reasons), reasons
        assert len({(b.reason, b.library_where() or b.lineno) for b in explained.breaks}) \
            == len(reasons), reasons


def _train_step_result(opt_cls, compiled: bool) -> list[float]:
    model = nn.Linear(2, 1, bias=False)
    with torch.no_grad():
        model.weight.fill_(1.0)
    opt = opt_cls(model.parameters(), lr=0.1)

    def step(x):  # closes over `opt` and `model`; breaks at zero_grad and backward
        opt.zero_grad()
        model(x).sum().backward()
        opt.step()

    if compiled:
        step = dynamo.compile(step, backend="eager")
    step(torch.ones(3, 2))
    return model.weight.flatten().tolist()


def test_resume_functions_of_closures_trace_the_cells_of_the_call() -> None:
    """One resume function serves every closure made from the same code: its trace must read
    the cells the call brings, not those of the closure that first made it (an Adam step
    after an SGD one traced SGD's update)."""
    for opt_cls in (torch.optim.SGD, torch.optim.Adam, torch.optim.AdamW, torch.optim.RMSprop):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no compilation whose guards fail its own inputs
            compiled = _train_step_result(opt_cls, True)
        # Traced, Adam keeps its step count a tensor (torch's `_get_value` when compiling), so
        # its bias corrections are float32 math, not Python floats: torch.compile's differ too.
        torch.testing.assert_close(compiled, _train_step_result(opt_cls, False), rtol=2e-6,
                                   atol=0, msg=opt_cls.__name__)


def test_train_and_eval_inside_a_compiled_step_are_traced_and_replayed() -> None:
    model = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5), nn.BatchNorm1d(4))
    reference = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5), nn.BatchNorm1d(4))
    reference.load_state_dict(model.state_dict())

    def step(net, x, train):
        if train:
            net.train()
        else:
            net.eval()
        return net(x), net.training, net[1].training

    compiled = dynamo.compile(step, backend="aot_eager")
    for train in (True, False, True, False):
        x = torch.randn(8, 4)
        model.train(not train)
        reference.train(not train)
        torch.manual_seed(0)
        got = compiled(model, x, train)
        torch.manual_seed(0)
        expected = step(reference, x, train)
        torch.testing.assert_close(got[0], expected[0])
        assert got[1:] == expected[1:] == (train, train)
        assert model.training is train and model[2].training is train
        torch.testing.assert_close(model[2].running_mean, reference[2].running_mean)
    assert not dynamo.explain(step)(model, torch.randn(8, 4), True).breaks


def test_aot_eager_lowers_no_grad_blocks_of_a_training_step() -> None:
    """An EMA update in a `no_grad` block, between ops that autograd records: the aten graph
    keeps the switches, so gradients and the EMA are eager's (aot_eager used to refuse it)."""

    def step(w, ema, x):
        loss = (w * x).sum()
        with torch.no_grad():
            ema.mul_(0.9).add_(w * 0.1)
            scale = (w * 2).sum()
        return loss + (w * scale).sum()

    w_compiled = torch.randn(4, requires_grad=True)
    w_eager = w_compiled.detach().clone().requires_grad_()
    ema_compiled, ema_eager = torch.zeros(4), torch.zeros(4)
    x = torch.randn(4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no backend fallback
        dynamo.compile(step, backend="aot_eager")(w_compiled, ema_compiled, x).backward()
    step(w_eager, ema_eager, x).backward()
    torch.testing.assert_close(w_compiled.grad, w_eager.grad)
    torch.testing.assert_close(ema_compiled, ema_eager)
    assert torch.is_grad_enabled()


HISTORY: list = []


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_the_last_token_of_a_batch_of_growing_sequences_compiles_twice(backend, recwarn) -> None:
    def f(tok, w):
        return (tok * 2 + 1) @ w, tok.stride(0) * tok

    counted, graphs = counting_backend(backend)
    compiled = dynamo.compile(f, backend=counted)
    ids, w = torch.randn(2, 4), torch.randn(1, 3)
    for _ in range(10):  # (2, 1) each time, with a new stride(0): a symbol from the second on
        ids = torch.cat([ids, torch.randn(2, 1)], 1)
        torch.testing.assert_close(compiled(ids[:, -1:], w), f(ids[:, -1:], w))
    assert len(graphs) == 2 and len(compiled.cache.entries) == 2
    for tok in (torch.randn(2, 1), torch.randn(2, 9)[:, -2:]):  # stride 1; another size
        w = torch.randn(tok.shape[1], 3)
        torch.testing.assert_close(compiled(tok, w), f(tok, w))
    assert not [w for w in recwarn if "cache size limit" in str(w.message)]


@pytest.mark.parametrize("dynamic", [None, True])
def test_shifted_logits_and_labels_of_a_growing_length_compile_twice(dynamic, recwarn) -> None:
    """`labels[:, 1:]` of a growing sequence: its size and its stride(0) (the full length, no
    product of its sizes) change together; the stride becomes a symbol too."""
    def loss(logits, labels):
        return torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                                 labels.reshape(-1))

    compiled = dynamo.compile(loss, backend="eager", dynamic=dynamic)
    for length in range(5, 13):
        logits, labels = torch.randn(2, length, 11), torch.randint(0, 11, (2, length))
        torch.testing.assert_close(compiled(logits[:, :-1], labels[:, 1:]),
                                   loss(logits[:, :-1], labels[:, 1:]))
    assert len(compiled.cache.entries) == 2
    assert not [w for w in recwarn if "cache size limit" in str(w.message)]


def test_layers_that_each_break_share_the_resume_functions_cache_without_filling_it(recwarn):
    """Each of twelve blocks breaks on its data: the resume functions, given each block by
    identity, compile once per block; the blocks do not use up each other's share of the
    cache limit (the twelfth block was eager)."""
    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(8, 8)

        def forward(self, x):
            x = self.fc(x)
            if x.sum() > 0:
                x = x * 2
            return torch.relu(x)

    model = nn.Sequential(*[Block() for _ in range(12)])
    compiled = dynamo.compile(model)
    x = torch.randn(2, 8)
    for _ in range(2):
        torch.testing.assert_close(compiled(x), model(x))
    assert not [w for w in recwarn if "cache size limit" in str(w.message)]
    assert dynamo.explain(model)(x).eager == []


def test_a_list_the_code_only_appends_to_does_not_recompile_as_it_grows() -> None:
    """`losses.append(loss)` in a compiled step: the list's items are not read, so its length
    is not guarded; the appends are replayed on the very list."""
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    def step(x, log):
        y = x * 2
        HISTORY.append(y.sum())
        log.extend([y.mean(), "tag"])
        return y + 1

    compiled = dynamo.compile(step, backend=backend)
    log, eager_log, eager_history = [], [], []
    HISTORY.clear()
    for i in range(10):
        x = torch.full((3,), float(i))
        torch.testing.assert_close(compiled(x, log), x * 2 + 1)
        eager_history.append((x * 2).sum())
        eager_log.extend([(x * 2).mean(), "tag"])
    assert len(graphs) == 1
    assert len(HISTORY) == 10 and all(torch.equal(a, b) for a, b in zip(HISTORY, eager_history))
    assert log[1::2] == ["tag"] * 10 and all(
        torch.equal(a, b) for a, b in zip(log[::2], eager_log[::2]))

    def reads_after_append(x):  # a read after the appends sees them, and is guarded
        HISTORY.append(x)
        return x * len(HISTORY)

    compiled_reader = dynamo.compile(reads_after_append)
    for _ in range(3):
        expected_length = len(HISTORY) + 1
        torch.testing.assert_close(compiled_reader(torch.ones(2)),
                                   torch.ones(2) * expected_length)


ACTIVATIONS: dict = {}


def test_a_dict_the_code_only_stores_into_is_not_guarded_by_its_keys() -> None:
    """Capturing activations into a global dict that other code also fills: the stores are
    replayed one by one; neither the dict's keys nor its values are read or guarded."""
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    def forward(x):
        y = x.relu()
        ACTIVATIONS["relu"] = y
        ACTIVATIONS["double"] = y * 2
        return y + 1

    def reads_back(x):  # a read after a store sees it (the keys are read, and guarded, then)
        ACTIVATIONS["seen"] = x
        return ACTIVATIONS["seen"] * len(ACTIVATIONS)

    ACTIVATIONS.clear()
    compiled = dynamo.compile(forward, backend=backend)
    for i in range(6):
        x = torch.randn(3)
        ACTIVATIONS[f"other{i}"] = torch.zeros(1)  # filled by other code between calls
        torch.testing.assert_close(compiled(x), x.relu() + 1)
        torch.testing.assert_close(ACTIVATIONS["double"], x.relu() * 2)
    assert len(graphs) == 1
    assert list(ACTIVATIONS)[:3] == ["other0", "relu", "double"]  # first stores keep their place
    expected = dict(ACTIVATIONS)
    x = torch.ones(2)
    got = dynamo.compile(reads_back)(x)
    torch.testing.assert_close(got, x * (len(expected) + 1))
    assert ACTIVATIONS["seen"] is x


class _Attention(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.attn = nn.MultiheadAttention(16, 2, batch_first=True)

    def forward(self, x):
        return self.attn(x, x, x, need_weights=False)[0]


def test_attention_takes_its_inference_fast_path_and_dispatch_modes_are_guarded() -> None:
    from torch.utils._python_dispatch import TorchDispatchMode

    class Counting(TorchDispatchMode):
        ops: list = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            Counting.ops.append(func)
            return func(*args, **(kwargs or {}))

    model = _Attention().eval()
    x = torch.randn(2, 6, 16)
    for backend in ("eager", "aot_eager"):
        dynamo.reset()
        counting, graphs = counting_backend(backend)
        compiled = dynamo.compile(model, backend=counting)
        with torch.no_grad():
            torch.testing.assert_close(compiled(x), model(x))
            assert len(graphs) == 1 and any("_native_multi_head_attention" in str(n.target)
                                            for n in graphs[0].graph.nodes)
            # Under a user's mode the frame runs eagerly: the mode sees eager's ops only.
            with Counting():
                compiled(x)
            ops, Counting.ops = Counting.ops, []
            with Counting():
                model(x)
            assert len(graphs) == 1 and ops and ops == Counting.ops
            Counting.ops = []


def test_cached_parametrizations_key_their_cache_by_the_module_id() -> None:
    import torch.nn.utils.parametrize as parametrize

    class Symmetric(nn.Module):
        def forward(self, w):
            return w.triu() + w.triu(1).transpose(-1, -2)

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 3)
            parametrize.register_parametrization(self.lin, "weight", Symmetric())

        def forward(self, x):
            with parametrize.cached():
                return self.lin(x) + self.lin(x)

    model, x = Model(), torch.randn(2, 3)
    dynamo.reset()
    torch.testing.assert_close(dynamo.compile(model, fullgraph=True)(x), model(x))
    assert not parametrize._cache  # emptied when the block is left, as in eager


def test_the_hook_based_weight_and_spectral_norms_are_traced() -> None:
    """`torch.nn.utils.weight_norm`/`spectral_norm` (the older, hook-based ones vocoders use)
    register callable objects of torch's as forward pre-hooks: their `__call__` is inlined."""
    for make in (torch.nn.utils.weight_norm, torch.nn.utils.spectral_norm):
        torch.manual_seed(0)
        ours, eager = make(nn.Linear(4, 4)), make(nn.Linear(4, 4))
        eager.load_state_dict(ours.state_dict())
        compiled = dynamo.compile(ours, fullgraph=True)
        for _ in range(2):  # spectral_norm's power iteration updates its buffers in training
            x = torch.randn(2, 4)
            torch.testing.assert_close(compiled(x), eager(x))
        for name, buffer in eager.named_buffers():
            torch.testing.assert_close(dict(ours.named_buffers())[name], buffer)


class _SiLU(nn.Module):  # a module that is only a forward, as Hugging Face's activations are
    def forward(self, x):
        return x * torch.sigmoid(x)


class _Scaled(nn.Module):  # its own __init__: made for real only outside the trace
    def __init__(self, factor):
        super().__init__()
        self.factor = factor

    def forward(self, x):
        return x * self.factor


def test_modules_the_code_makes_without_an_init_of_their_own() -> None:
    def f(x):
        return _SiLU()(x) + nn.GELU(approximate="tanh")(x)

    x = torch.randn(4)
    dynamo.reset()
    torch.testing.assert_close(dynamo.compile(f, fullgraph=True)(x), f(x))

    def g(x):
        return _Scaled(2.0)(x)

    with pytest.raises(dynamo.Unsupported, match="creating an instance of _Scaled"):
        dynamo.compile(g, fullgraph=True)(x)
    torch.testing.assert_close(dynamo.compile(g)(x), g(x))


class _ScaledOnCall(nn.Module):
    """A module whose class overrides `__call__` (a library adding an argument)."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(4, 4)

    def __call__(self, x, scale=2.0):
        return super().__call__(x) * scale

    def forward(self, x):
        return self.linear(x)


class _ScriptedBlock(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(4, 4)

    def forward(self, x):
        return torch.relu(self.linear(x))


def test_a_modules_own_call_method_is_what_calling_it_runs() -> None:
    """An overridden `__call__` is traced (its `super().__call__` reaches the forward), for
    the compiled module itself and for a submodule, with its extra argument."""
    torch.manual_seed(0)

    class Outer(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.scaled = _ScaledOnCall()

        def forward(self, x):
            return self.scaled(x) + self.scaled(x, scale=0.5)

    x = torch.randn(3, 4)
    for model in (_ScaledOnCall(), Outer()):
        torch.testing.assert_close(dynamo.compile(model, backend="eager", fullgraph=True)(x),
                                   model(x))


@pytest.mark.filterwarnings("ignore:`torch.jit:DeprecationWarning")
def test_torchscript_submodules_run_as_they_are() -> None:
    """A scripted or traced module (whose class's `forward` cannot be read) is called for real
    at a graph break, as a submodule or compiled itself."""
    torch.manual_seed(0)

    class Model(nn.Module):
        def __init__(self, sub) -> None:
            super().__init__()
            self.sub = sub

        def forward(self, x):
            return self.sub(x) + 1

    x = torch.randn(2, 4)
    for sub in (torch.jit.script(_ScriptedBlock()), torch.jit.trace(_ScriptedBlock(), x)):
        model = Model(sub)
        torch.testing.assert_close(dynamo.compile(model, backend="eager")(x), model(x))
        torch.testing.assert_close(dynamo.compile(sub, backend="eager")(x), sub(x))


@torch.jit.script
def _scripted_sin(x: torch.Tensor, k: int) -> torch.Tensor:
    return x.sin() * k


@torch.jit.script
def _scripted_add_(x: torch.Tensor) -> torch.Tensor:
    x.add_(1)
    return x


@torch.jit.script
def _scripted_branch(x: torch.Tensor) -> torch.Tensor:
    if bool(x.sum() > 0):
        return x * 2
    return -x


@pytest.mark.filterwarnings("ignore:`torch.jit:DeprecationWarning")
@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_torchscript_functions_are_inlined(backend) -> None:
    """A scripted or traced function is inlined as the Python function it was made from (as
    torch.compile does): it used to be a graph node, which fx's code called as its class
    (`torch.jit.ScriptFunction(x)`: a TypeError, hidden by the eager rerun unless it wrote
    into an input) and aot_eager lowered on detached inputs (the output lost its grad_fn).
    A scripted module called as a submodule breaks with a reason that says so."""
    traced = torch.jit.trace(lambda x: x.cos() * 2, torch.randn(3))

    def f(x):
        return _scripted_sin(x, 3).sum() + traced(x).sum()

    x = torch.randn(3, requires_grad=True)
    counter, graphs = counting_backend(backend)
    out = dynamo.compile(f, backend=counter, fullgraph=True)(x)
    assert len(graphs) == 1
    expected = f(x)
    torch.testing.assert_close(out, expected)
    torch.testing.assert_close(torch.autograd.grad(out, x), torch.autograd.grad(expected, x))

    def g(x):
        _scripted_add_(x)
        return x * 2

    a, b = torch.ones(3), torch.ones(3)
    torch.testing.assert_close(dynamo.compile(g, backend=backend)(b), g(a))
    torch.testing.assert_close(b, a)

    def h(x):
        return _scripted_branch(x + 0) + 1  # a break inside: the ScriptFunction runs for real

    compiled = dynamo.compile(h, backend=backend)
    for sign in (1.0, -1.0):
        torch.testing.assert_close(compiled(torch.ones(3) * sign), h(torch.ones(3) * sign))

    class Model(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.sub = torch.jit.trace(_ScriptedBlock(), torch.randn(2, 4))

        def forward(self, x):
            return self.sub(x) + 1

    report = dynamo.explain(Model())(torch.randn(2, 4))
    assert [b.reason for b in report.breaks] == [
        "calling a TorchScript module (TopLevelTracedModule): it runs as it is"]


def test_graph_module_submodule_is_one_graph() -> None:
    """An fx GraphModule called as a submodule is called as nn.Module's `__call__` (fx's
    `_WrappedCall` was a graph node given the module: a break), and `recompile()` after an
    edit of its graph is seen (its class's `forward` is guarded)."""
    torch.manual_seed(0)

    class Inner(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            return torch.relu(self.fc(x))

    class Model(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.g = torch.fx.symbolic_trace(Inner())

        def forward(self, x):
            return self.g(x * 2) + 1

    model = Model()
    counter, graphs = counting_backend("eager")
    compiled = dynamo.compile(model, backend=counter, fullgraph=True)
    x = torch.randn(3, 4)
    torch.testing.assert_close(compiled(x), model(x))
    assert len(graphs) == 1
    for node in model.g.graph.nodes:
        if node.target is torch.relu:
            node.target = torch.sigmoid
    model.g.recompile()
    torch.testing.assert_close(compiled(x), model(x))


def test_graph_module_subclass_with_its_own_call_runs_it() -> None:
    """fx's `call_wrapped` calls `super(cls, self).__call__`: a GraphModule subclass's own
    `__call__` (not nn.Module's) runs, and is not skipped as nn.Module's call."""

    class Inner(nn.Module):
        def forward(self, x):
            return torch.relu(x)

    class MyGraphModule(torch.fx.GraphModule):
        def __call__(self, *args, **kwargs):
            return super().__call__(*args, **kwargs) + 1000

    class Model(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.g = MyGraphModule(Inner(), torch.fx.symbolic_trace(Inner()).graph)

        def forward(self, x):
            return self.g(x) * 2

    model = Model()
    x = torch.randn(3, 4)
    torch.testing.assert_close(dynamo.compile(model, backend="eager")(x), model(x))


def test_slices_of_module_lists_and_sequentials_keep_their_type() -> None:
    """`self.layers[1:]` is a ModuleList (isinstance says so), a Sequential's slice has a
    length and items, in one graph."""
    torch.manual_seed(0)

    class Model(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.layers = nn.ModuleList(nn.Linear(4, 4) for _ in range(3))
            self.seq = nn.Sequential(*[nn.Linear(4, 4) for _ in range(4)])

        def forward(self, x):
            tail = self.seq[1:]
            x = tail(x) * len(tail) + tail[-1](x) + tail[0](x)
            for layer in self.layers[1:]:
                x = layer(x)
            return x + isinstance(self.layers[1:], nn.ModuleList)

    model, x = Model(), torch.randn(2, 4)
    torch.testing.assert_close(dynamo.compile(model, backend="eager", fullgraph=True)(x),
                               model(x))


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
@pytest.mark.parametrize("mode", ["train", "eval", "no_grad", "inference_mode"])
def test_in_place_activations_are_applied(backend: str, mode: str) -> None:
    """`nn.ReLU(inplace=True)` returns the tensor it wrote: its node had no users, and no name
    or schema said it writes, so it was dropped as dead code (the activation skipped)."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 6), nn.ReLU(inplace=True), nn.Linear(6, 6),
                          nn.Hardtanh(-0.1, 0.1, True), nn.Linear(6, 6), nn.ELU(inplace=True))
    model.train(mode == "train")
    x = torch.randn(3, 6)
    context = {"no_grad": torch.no_grad, "inference_mode": torch.inference_mode}.get(
        mode, torch.enable_grad)
    with context():
        torch.testing.assert_close(dynamo.compile(model, backend=backend)(x), model(x))


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_a_call_made_for_its_buffer_updates_alone_makes_them(backend: str) -> None:
    """An `update_bn`-style pass: batch norm's running statistics (its schema does not mark
    them written), instance norm's, an embedding's rows renormed by `max_norm`."""
    torch.manual_seed(0)

    class Calibrated(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.bn = nn.BatchNorm1d(4)
            self.inorm = nn.InstanceNorm1d(4, track_running_stats=True)
            self.emb = nn.Embedding(10, 4, max_norm=0.5)

        def forward(self, x, i):
            self.bn(x[:, :, 0])
            self.inorm(x)
            self.emb(i)
            return i + 1

    model = Calibrated()
    reference = copy.deepcopy(model)
    x, i = torch.randn(8, 4, 5) + 2, torch.tensor([1, 2, 3])
    reference(x, i)
    dynamo.compile(model, backend=backend)(x, i)
    for (name, got), want in zip(model.state_dict().items(), reference.state_dict().values()):
        torch.testing.assert_close(got, want, msg=name)


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_calls_that_write_without_a_version_counter_are_kept(backend: str) -> None:
    """`vector_to_parameters` swaps `.data` (no version counter moves: a break, the call made
    for real); under inference mode no counter exists, and an embedding's `max_norm` renorm is
    known by its argument."""
    from torch.nn.utils import vector_to_parameters

    def unflatten(v, a, b):
        vector_to_parameters(v, [a, b])
        return a + 0, b + 0

    def renorm(i, w):
        torch.nn.functional.embedding(i, w, max_norm=1.0)
        return w + 0

    torch.manual_seed(0)
    v, a, b = torch.randn(9), torch.randn(4), torch.randn(5)
    expected = unflatten(v, a.clone(), b.clone())
    got = dynamo.compile(unflatten, backend=backend)(v, a, b)
    for g, e, written in zip(got, expected, (a, b)):
        torch.testing.assert_close(g, e)
        torch.testing.assert_close(written, e)
    with torch.inference_mode():
        i, w = torch.tensor([1, 3]), torch.randn(5, 4) * 3
        reference = w.clone()
        expected = renorm(i, reference)
        torch.testing.assert_close(dynamo.compile(renorm, backend=backend)(i, w), expected)
        torch.testing.assert_close(w, reference)


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_attention_fast_path_without_weights_returns_none_for_them(backend) -> None:
    """`_native_multi_head_attention` with `need_weights=False` returns None for the weights
    (its meta function an empty tensor): the None is returned, and the graph is the frame's
    (the empty tensor failed the first call's output check: the frame ran eagerly)."""
    attn = nn.MultiheadAttention(16, 2, batch_first=True).eval()
    x = torch.randn(2, 6, 16)
    counting, graphs = counting_backend(backend)
    compiled = dynamo.compile(lambda x: attn(x, x, x, need_weights=False), backend=counting,
                              raise_backend_errors=True)
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("error")  # (the eager backend's frame ran eagerly, warning)
        out, weights = compiled(x)
        expected, _ = attn(x, x, x, need_weights=False)
    assert weights is None and len(graphs) == 1
    torch.testing.assert_close(out, expected)


@pytest.mark.parametrize("foreach", [None, False])
def test_gradient_clipping_is_one_graph(foreach) -> None:
    """`clip_grad_norm_` and `clip_grad_value_` group the grads by device and dtype with a C
    function returning a dict (a graph node cannot): answered while tracing, from the grads'
    guarded devices and dtypes, so the clipping is in the graph (it broke there)."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 3), nn.Linear(3, 2).double())
    eager_model = copy.deepcopy(model)
    x = torch.randn(5, 4)
    for m in (model, eager_model):
        m[1](m[0](x).double()).pow(2).sum().backward()

    def clip(ps, most):
        norm = nn.utils.clip_grad_norm_(ps, most, foreach=foreach)
        nn.utils.clip_grad_value_(ps, 0.05, foreach=foreach)
        return norm

    explained = dynamo.explain(clip)(list(model.parameters()), 0.5)
    assert explained.graph_count == 1 and not explained.breaks
    torch.testing.assert_close(explained.result, clip(list(eager_model.parameters()), 0.5))
    for p, q in zip(model.parameters(), eager_model.parameters()):
        torch.testing.assert_close(p.grad, q.grad)


def test_infer_size_of_shapes_is_traced() -> None:
    """`torch._C._infer_size(a.shape, b.shape)` (torch.distributions' KL of two multivariate
    normals) takes only a torch.Size, which a node's argument is not: broadcast in Python."""
    def f(a, b):
        return a.expand(torch._C._infer_size(a.shape, b.shape)) + 1

    a, b = torch.randn(3, 1), torch.randn(1, 4)
    explained = dynamo.explain(f)(a, b)
    assert explained.graph_count == 1 and not explained.breaks
    torch.testing.assert_close(dynamo.compile(f, backend="eager")(a, b), f(a, b))
    with pytest.raises(RuntimeError, match="must match"):
        dynamo.compile(f, backend="eager")(torch.randn(3, 2), torch.randn(1, 4))


def test_infer_size_of_what_is_not_a_size_raises_as_eager() -> None:
    """`_infer_size` takes only torch.Size: a list of (symbolic) sizes raises eager's error,
    not the broadcast `torch.broadcast_shapes` would give it."""
    def f(a, b):
        return torch._C._infer_size([a.shape[0], 1], [1, b.shape[0]])

    compiled = dynamo.compile(f, backend="eager", dynamic=True)
    for n in (3, 4):
        with pytest.raises(RuntimeError, match="expected a torch.Size"):
            compiled(torch.randn(n), torch.randn(n + 1))


@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
def test_multilabel_margin_loss_with_padded_targets_is_eagers(reduction) -> None:
    """torch's decomposition of `multilabel_margin_loss_forward` (the op's Autograd kernel
    under the Python dispatcher) counts the target slots after a row's first -1 as targets
    (class 0), and gives an unbatched "none" loss of size (1,): the call is a break, run for
    real."""
    def f(x, t):
        return torch.nn.functional.multilabel_margin_loss(x, t, reduction=reduction)

    x = torch.randn(3, 4, requires_grad=True)
    t = torch.tensor([[1, 3, -1, 0], [2, -1, 0, 0], [0, 1, 2, 3]])
    v = torch.randn(4, requires_grad=True)
    u = torch.tensor([2, -1, 1, 0])
    expected, expected_grad = f(x, t), torch.autograd.grad(f(x, t).sum(), x)[0]
    for backend in ("eager", "aot_eager"):
        for dynamic in (None, True):
            dynamo.reset()
            compiled = dynamo.compile(f, backend=backend, dynamic=dynamic)
            got = compiled(x, t)
            torch.testing.assert_close(got, expected)
            torch.testing.assert_close(torch.autograd.grad(got.sum(), x)[0], expected_grad)
            with warnings.catch_warnings():
                warnings.simplefilter("error")  # (eager: the fakes' size differed; ran eagerly)
                unbatched = compiled(v, u)
            assert unbatched.shape == f(v, u).shape
            torch.testing.assert_close(unbatched, f(v, u))


def test_swin_window_partition_and_reverse_keep_the_batch_dynamic() -> None:
    """Swin's windows: a patch conv, padding of the side up to a multiple of the window, then
    `view(-1, hp // ws, wp // ws, ws, ws, c)` to put the windows back. The `-1` is the batch;
    it was inferred as the example's batch (the padded side's `// ws` and the conv's
    `side**2 // side` did not simplify), so every batch size compiled again."""
    ws = 4
    conv = nn.Conv2d(3, 8, 4, stride=4)

    def windows_round_trip(x):
        x = conv(x)
        b, c, h, w = x.shape
        x = x.flatten(2).transpose(1, 2).view(b, h, w, c)
        x = nn.functional.pad(x, (0, 0, 0, (ws - w % ws) % ws, 0, (ws - h % ws) % ws))
        _, hp, wp, _ = x.shape
        windows = x.view(b, hp // ws, ws, wp // ws, ws, c).permute(0, 1, 3, 2, 4, 5)
        windows = windows.contiguous().view(-1, ws, ws, c) * 2
        x = windows.view(-1, hp // ws, wp // ws, ws, ws, c).permute(0, 1, 3, 2, 4, 5)
        return x.contiguous().view(-1, hp, wp, c)[:, :h, :w, :].reshape(b, h * w, c)

    counting, graphs = counting_backend("eager")
    compiled = dynamo.compile(windows_round_trip, backend=counting, dynamic=True)
    with torch.no_grad():
        for batch in (2, 3):
            x = torch.randn(batch, 3, 24, 24)
            torch.testing.assert_close(compiled(x), windows_round_trip(x))
    assert len(graphs) == 1


@pytest.mark.parametrize("momentum", [None, 0.1])
def test_batch_norm_training_loop_compiles_a_bounded_number_of_times(momentum) -> None:
    """`momentum=None` is a cumulative average, `1 / float(num_batches_tracked)`: a break at
    the float, then a factor that changes every step. `F.batch_norm` reads its momentum as a
    constant, yet only the running statistics' values depend on it: the resume function keeps
    it a symbol (one entry for 1.0, one for the rest) rather than recompiling every step."""
    torch.manual_seed(0)
    model = nn.BatchNorm1d(4, momentum=momentum)
    reference = copy.deepcopy(model)
    backend, graphs = counting_backend("eager")
    compiled = dynamo.compile(model, backend=backend)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (reaching the cache limit warns)
        for _ in range(10):
            x = torch.randn(8, 4)
            torch.testing.assert_close(compiled(x), reference(x), rtol=0, atol=0)
            for name, buffer in model.named_buffers():
                torch.testing.assert_close(buffer, reference.get_buffer(name), rtol=0, atol=0)
    assert len(graphs) == (3 if momentum is None else 1)
