"""The whole stack with the Triton backend: the in-repo models through
`torch.compile(backend="inductor_lite")` and `dynamo.compile(backend="inductor_lite")` give
eager's results, and generated kernels ran to produce them.

On CPU the kernels run through Triton's interpreter (chosen here, before triton is imported);
`INDUCTOR_LITE_TEST_DEVICE=cuda` runs the same tests on a GPU. Models are small: the interpreter
runs a kernel's program instances one by one in Python.
"""

from __future__ import annotations

import math
import os

DEVICE = os.environ.get("INDUCTOR_LITE_TEST_DEVICE", "cpu")
if DEVICE == "cpu":
    os.environ.setdefault("INDUCTOR_LITE_TRITON_CPU", "1")
    os.environ.setdefault("TRITON_INTERPRET", "1")

import pytest  # noqa: E402
import torch  # noqa: E402
import torch._dynamo  # noqa: E402
from models import GPT, MLP, SmallCNN, TransformerBlock  # noqa: E402

import dynamo  # noqa: E402
import inductor_lite  # noqa: E402
from inductor_lite import counters  # noqa: E402

TOL = {"atol": 1e-4, "rtol": 1e-4}
def small_gpt() -> GPT:
    return GPT(vocab=64, d_model=32, n_heads=2, n_layers=2, max_len=16)


CASES = {
    "mlp": (lambda: MLP(), lambda: torch.randn(8, 32)),
    "transformer_block": (lambda: TransformerBlock(d_model=32, n_heads=2),
                          lambda: torch.randn(2, 8, 32)),
    "gpt": (small_gpt, lambda: torch.randint(0, 64, (2, 8))),
    "cnn": (lambda: SmallCNN(), lambda: torch.randn(2, 3, 16, 16)),
}
FRONTENDS = {
    "torch.compile": lambda model: torch.compile(model, backend="inductor_lite", fullgraph=True),
    "dynamo.compile": lambda model: dynamo.compile(model, backend="inductor_lite",
                                                   fullgraph=True, raise_backend_errors=True),
}


@pytest.fixture(autouse=True)
def fresh(monkeypatch):
    if DEVICE == "cpu":  # in case inductor_lite was imported before this module set the env
        monkeypatch.setattr(inductor_lite.config, "triton_on_cpu", True)
    torch._dynamo.reset()
    dynamo.reset()
    inductor_lite.metrics.reset()
    torch.manual_seed(0)


@pytest.mark.parametrize("frontend", FRONTENDS)
@pytest.mark.parametrize("name", CASES)
def test_inference_runs_generated_kernels(name: str, frontend: str) -> None:
    make_model, make_input = CASES[name]
    model = make_model().eval().to(DEVICE)
    compiled = FRONTENDS[frontend](model)
    with torch.no_grad():
        for _ in range(2):  # the second call reuses the compiled graph
            x = make_input().to(DEVICE)
            torch.testing.assert_close(compiled(x), model(x), **TOL)
    assert counters["graphs"] == 1, dict(counters)
    assert counters["kernels"] > 0 and counters["eager_graphs"] == 0, dict(counters)
    assert counters["fallbacks"] == 0, dict(counters)


def test_gpt_kernels_fuse() -> None:
    """Layer norms, softmaxes and the pointwise ops around them share kernels."""
    model = small_gpt().eval().to(DEVICE)
    compiled = torch.compile(model, backend="inductor_lite")
    idx = torch.randint(0, 64, (2, 8), device=DEVICE)
    with torch.no_grad():
        torch.testing.assert_close(compiled(idx), model(idx), **TOL)
    assert counters["fused_buffers"] > 0, dict(counters)
    assert counters["kernels"] < counters["lowered_ops"], dict(counters)


@pytest.mark.parametrize("frontend", FRONTENDS)
@pytest.mark.parametrize(
    "name", ["mlp", "transformer_block", "cnn"])
def test_training_runs_aten_graph_with_right_gradients(name: str, frontend: str) -> None:
    """Inputs that require grad: inductor_lite runs the aten graph eagerly (no compiled
    training yet), so autograd sees aten ops and the gradients equal eager's."""
    make_model, make_input = CASES[name]
    model = make_model().train().to(DEVICE)
    compiled = FRONTENDS[frontend](model)
    x = make_input().to(DEVICE).requires_grad_(True)

    def loss_and_grads(fn):
        model.zero_grad()
        x.grad = None
        loss = fn(x).square().mean()
        loss.backward()
        return loss.detach(), [p.grad.clone() for p in model.parameters()] + [x.grad.clone()]

    loss, grads = loss_and_grads(compiled)
    expected_loss, expected_grads = loss_and_grads(model)
    torch.testing.assert_close(loss, expected_loss, **TOL)
    for got, expected in zip(grads, expected_grads, strict=True):
        torch.testing.assert_close(got, expected, **TOL)
    assert counters["eager_graphs"] == 1 and counters["kernels"] == 0, dict(counters)


def test_gpt_new_sequence_length_through_dynamo() -> None:
    """Automatic dynamic: the second length makes dynamo capture one symbolic graph; the
    backend compiles what it needs for each length, and the results stay right."""
    model = small_gpt().eval().to(DEVICE)
    compiled = dynamo.compile(model, backend="inductor_lite", fullgraph=True,
                              raise_backend_errors=True)
    with torch.no_grad():
        for t in (8, 5, 12):
            idx = torch.randint(0, 64, (2, t), device=DEVICE)
            torch.testing.assert_close(compiled(idx), model(idx), **TOL)
    assert counters["kernels"] > 0 and counters["eager_graphs"] == 0, dict(counters)


@pytest.mark.parametrize("frontend", ["torch.compile", "dynamo.compile"])
def test_dynamic_sizes_compile_one_version(frontend: str) -> None:
    """With symbolic sizes from the frontend, one generated version serves every size: the
    frontend's symbols stay symbols (parameters stay static) and no trace step specialises them."""
    model = TransformerBlock(d_model=32, n_heads=2).eval().to(DEVICE)
    if frontend == "torch.compile":
        # dynamic=True passes layer norm's eps as a 0-d tensor read with .item(): traced again
        # with its value as a constant, which the guard checks.
        compiled = torch.compile(model, backend="inductor_lite", fullgraph=True, dynamic=True)
    else:
        compiled = dynamo.compile(model, backend="inductor_lite", fullgraph=True,
                                  raise_backend_errors=True)
    with torch.no_grad():
        for b, t in ((2, 8), (3, 5), (2, 11), (4, 6)):
            x = torch.randn(b, t, 32, device=DEVICE)
            if frontend == "dynamo.compile":
                dynamo.mark_dynamic(x, [0, 1])
            torch.testing.assert_close(compiled(x), model(x), **TOL)
    assert counters["graphs"] == 1 and counters["eager_graphs"] == 0, dict(counters)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("last", [False, True])
@pytest.mark.filterwarnings("error::UserWarning")
def test_embedding_bag_with_symbolic_sizes(mode: str, last: bool) -> None:
    """The library call's auxiliary outputs (offset2bag, bag_size, max_indices) are sized as
    the CPU kernel sizes them: with `max_norm` (an input written) a mismatch raised at the
    call; without, it warned and ran the captured graph."""
    def bags(w, idx, offsets):
        return torch.nn.functional.embedding_bag(idx, w, offsets, mode=mode, max_norm=1.0,
                                                 include_last_offset=last)
    compiled = dynamo.compile(bags, backend="inductor_lite", dynamic=True,
                              raise_backend_errors=True)
    weight = torch.randn(20, 4, device=DEVICE) * 3
    for n, nbags in ((10, 4), (13, 5), (7, 3)):
        idx = torch.randint(0, 20, (n,), device=DEVICE)
        offsets = torch.sort(torch.randint(0, n, (nbags,), device=DEVICE)).values
        offsets[0] = 0
        if last:
            offsets = torch.cat([offsets, torch.tensor([n], device=DEVICE)])
        w_eager, w_compiled = weight.clone(), weight.clone()
        torch.testing.assert_close(compiled(w_compiled, idx, offsets),
                                   bags(w_eager, idx, offsets), **TOL)
        torch.testing.assert_close(w_compiled, w_eager, **TOL)
    assert counters["eager_graphs"] == 0, dict(counters)


@pytest.mark.parametrize("frontend", FRONTENDS)
def test_cnn_in_training_mode_updates_batch_norm_statistics(frontend: str) -> None:
    """Batch norm in training mode writes its running statistics: the compiled graph writes
    them into the module's buffers, as eager does."""
    import copy

    model = SmallCNN().train().to(DEVICE)
    twin = copy.deepcopy(model)
    compiled = FRONTENDS[frontend](model)
    with torch.no_grad():
        for _ in range(2):
            x = torch.randn(4, 3, 16, 16, device=DEVICE)
            torch.testing.assert_close(compiled(x), twin(x), **TOL)
    for (name, ours), (_, eager) in zip(model.named_buffers(), twin.named_buffers(), strict=True):
        torch.testing.assert_close(ours, eager, msg=name, **TOL)
    assert counters["kernels"] > 0 and counters["eager_graphs"] == 0, dict(counters)
    assert counters["fallbacks"] == 0, dict(counters)


def test_inference_mode_false_block_under_no_grad_is_recorded_by_autograd() -> None:
    """`torch.inference_mode(False)` turns grad on, as `enable_grad` does: a graph called under
    `no_grad` with a parameter that requires grad computes, in that block, what autograd must
    record (the graph ran as generated kernels: the output did not require grad)."""
    w = torch.randn(3, 3, device=DEVICE, requires_grad=True)

    def fn(x):
        with torch.inference_mode(False):
            return (x @ w).sin()

    x = torch.randn(2, 3, device=DEVICE)
    with torch.no_grad():
        out = dynamo.compile(fn, backend="inductor_lite")(x)
    assert out.requires_grad
    out.sum().backward()
    torch.testing.assert_close(w.grad, x.t() @ (x @ w).cos().detach())
    assert counters["eager_graphs"] == 1, dict(counters)


@pytest.mark.parametrize("name", ["gpt2", "llama", "bert"])
def test_hugging_face_models_through_generated_kernels(name: str) -> None:
    """Hugging Face GPT-2, Llama and BERT (from configs, random weights) through
    torch.compile with this backend: every op lowered (no fallback), results equal eager's."""
    pytest.importorskip("transformers")  # the GPU machine has no network to install it
    from hf_models import MODELS

    model = MODELS[name]().eval().to(DEVICE)
    compiled = torch.compile(model, backend="inductor_lite")
    with torch.no_grad():
        for length in (16, 24):
            tokens = torch.randint(0, 1000, (2, length), device=DEVICE)
            torch.testing.assert_close(compiled(tokens)[0], model(tokens)[0], **TOL)
    assert counters["kernels"] > 0 and counters["eager_graphs"] == 0, dict(counters)
    assert counters["fallbacks"] == 0, dict(counters)



@pytest.mark.parametrize(("name", "cache"), [("gpt2", "dynamic"), ("llama", "dynamic"),
                                             ("llama", "static")])
def test_generation_with_a_kv_cache_through_generated_kernels(name: str, cache: str) -> None:
    """Greedy decoding, `generate` calling the compiled forward: the dynamic cache grows by one
    each step (the length becomes a symbol: the prompt, the first step and every later step
    compile once each), the static cache is written in place at the step's position. Tokens
    and every step's logits are eager's, every op is lowered."""
    pytest.importorskip("transformers")
    from hf_models import MODELS

    torch.manual_seed(0)
    model = MODELS[name]().eval().to(DEVICE)
    prompt = torch.randint(0, 1000, (1, 8), device=DEVICE)
    options = {"max_new_tokens": 12, "do_sample": False, "output_logits": True,
               "return_dict_in_generate": True, "cache_implementation": cache}
    with torch.no_grad():
        expected = model.generate(prompt, **options)
    graphs = []

    def counting(gm, example_inputs):
        graphs.append(gm)
        return inductor_lite.compile_fx(gm, example_inputs)

    model.forward = dynamo.compile(model.forward, backend=counting)
    with torch.no_grad():
        got = model.generate(prompt, **options)
    assert torch.equal(got.sequences, expected.sequences)
    for logits, want in zip(got.logits, expected.logits, strict=True):
        torch.testing.assert_close(logits, want, **TOL)
    assert len(graphs) == (3 if cache == "dynamic" else 2), len(graphs)
    assert counters["kernels"] > 0 and counters["eager_graphs"] == 0, dict(counters)
    assert counters["fallbacks"] == 0, dict(counters)

def _message_passing(x, src, dst, w):
    """A graph network layer: messages gathered along edges, summed into nodes, averaged."""
    msg = (x[src] @ w).relu()
    out = torch.zeros_like(x).index_add(0, dst, msg)
    degree = torch.zeros(x.shape[0], device=x.device).index_add(
        0, dst, torch.ones(dst.shape[0], device=x.device))
    return out / degree.clamp(min=1).unsqueeze(1)


def _static_cache_step(cache, pos, k):
    """A static KV cache written in place at a position, then read."""
    cache.index_copy_(2, pos, k)
    return cache.softmax(-1).sum(-1)


def _top1_routing(x, w):
    """Mixture-of-experts routing: a one-hot of each row's best expert, weighted."""
    logits = x @ w
    onehot = torch.zeros_like(logits).scatter(1, logits.argmax(-1, keepdim=True), 1.0)
    return onehot * logits.softmax(-1)


def _top_p_mask(logits):
    """Nucleus sampling's mask (on probabilities already in order): running mass below 0.9."""
    probs = logits.softmax(-1)
    return probs.cumsum(-1) < 0.9


PROGRAMS = {
    "message_passing": (_message_passing, lambda: (
        torch.randn(6, 4), torch.randint(0, 6, (15,)), torch.randint(0, 6, (15,)),
        torch.randn(4, 4))),
    "static_cache": (_static_cache_step, lambda: (
        torch.zeros(1, 2, 8, 4), torch.tensor([3]), torch.randn(1, 2, 1, 4))),
    "top1_routing": (_top1_routing, lambda: (torch.randn(5, 4), torch.randn(4, 3))),
    "top_p_mask": (_top_p_mask, lambda: (torch.randn(3, 40),)),
}


@pytest.mark.parametrize("frontend", ["torch.compile", "dynamo.compile"])
@pytest.mark.parametrize("name", PROGRAMS)
def test_programs_with_scatters_and_scans(name: str, frontend: str) -> None:
    """Programs around models (graph networks, caches, routing, sampling): outputs, and inputs
    written in place, equal eager's, with every op generated."""
    fn, make_args = PROGRAMS[name]
    args = [a.to(DEVICE) for a in make_args()]
    expected_args = [a.clone() for a in args]
    compile_ = torch.compile if frontend == "torch.compile" else dynamo.compile
    compiled = compile_(fn, backend="inductor_lite")
    torch.testing.assert_close(compiled(*args), fn(*expected_args), **TOL)
    torch.testing.assert_close(args, expected_args, **TOL)
    assert counters["kernels"] > 0 and counters["fallbacks"] == 0, dict(counters)
    assert counters["eager_graphs"] == 0, dict(counters)


OPTIMIZERS = {
    "sgd": lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, weight_decay=0.01),
    "adamw": lambda p: torch.optim.AdamW(p, lr=0.01),
    "adam_amsgrad": lambda p: torch.optim.Adam(p, lr=0.01, amsgrad=True, weight_decay=0.1),
    # (foreach: the default on a GPU)
    "adam_foreach": lambda p: torch.optim.Adam(p, lr=0.01, foreach=True),
    "sgd_foreach": lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, foreach=True),
}


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_optimizer_step_runs_generated_kernels(name: str) -> None:
    """`optimizer.step()` through dynamo, with a learning-rate schedule: one graph that turns
    grad off and updates the parameters and the state in place; inductor_lite compiles it into
    kernels, once for every step and learning rate. Adam's step count (a 0-d CPU tensor) and
    the step sizes made from it are computed on the host and reach the kernels as numbers, and
    the changing learning rate (a float input) too."""
    import copy

    model = MLP().to(DEVICE)
    reference = copy.deepcopy(model)
    opt, ref_opt = OPTIMIZERS[name](model.parameters()), OPTIMIZERS[name](reference.parameters())
    schedules = [torch.optim.lr_scheduler.StepLR(o, 1, gamma=0.8) for o in (opt, ref_opt)]
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return inductor_lite.compile_fx(gm, example_inputs)

    step = dynamo.compile(opt.step, backend=backend, fullgraph=True, raise_backend_errors=True)
    for _ in range(5):
        x = torch.randn(8, 32, device=DEVICE)
        for m in (model, reference):
            m.zero_grad()
            m(x).pow(2).mean().backward()
        step()
        ref_opt.step()
        for schedule in schedules:
            schedule.step()
    for got, want in zip(model.parameters(), reference.parameters()):
        torch.testing.assert_close(got, want, **TOL)
    assert counters["kernels"] > 0 and counters["eager_graphs"] == 0
    # the first step (making the state), a later one, and one with the lr a symbol
    assert len(graphs) <= 3 and counters["graphs"] == len(graphs)


def test_a_float_that_changes_is_a_kernel_argument() -> None:
    """dynamo passes a float that changed between calls as a 0-d CPU tensor (read with
    `.item()`); inductor_lite's wrapper reads it on the host and passes it to the kernels (on
    the model's device), which never touch that CPU tensor: one version for every value."""

    class Scaled(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.scale = 0.5

        def forward(self, x):
            return torch.relu(x) * self.scale + 1

    model = Scaled()
    compiled = dynamo.compile(model, backend="inductor_lite", fullgraph=True,
                              raise_backend_errors=True)
    x = torch.randn(16, device=DEVICE)
    for scale in (0.5, 0.25, 2.0, -1.5, 3.0, 0.125, 7.0, 9.0, 10.0, 11.0):
        model.scale = scale
        torch.testing.assert_close(compiled(x), model(x), **TOL)
    # the first value's graph, then the graph with the float as a symbol: a kernel each
    assert counters["kernels"] == 2 and counters["eager_graphs"] == 0


def test_a_float_that_changes_keeps_static_sizes() -> None:
    """dynamo's graph of a float that changed holds the float's symbol (`zf0`) in its shape
    env: not a size, so the tensors' sizes stay static (batch norm's unbiased running variance,
    `n / (n - 1.0)` of a symbolic `n`, would make the graph run as its aten graph)."""
    def fn(x, mean, var, scale):
        return torch.nn.functional.batch_norm(x, mean, var, training=True) * scale

    compiled = dynamo.compile(fn, backend="inductor_lite", fullgraph=True,
                              raise_backend_errors=True)
    x = torch.randn(8, 4, device=DEVICE)
    state = [torch.zeros(4, device=DEVICE), torch.ones(4, device=DEVICE)]
    twin = [t.clone() for t in state]
    for scale in (0.5, 0.25, 0.125):
        torch.testing.assert_close(compiled(x, *state, scale), fn(x, *twin, scale), **TOL)
    torch.testing.assert_close(state, twin, **TOL)
    assert counters["kernels"] > 0 and counters["eager_graphs"] == 0, dict(counters)


def test_torch_compiles_symbolic_ints_strides_and_options_keep_one_version() -> None:
    """What torch.compile hands its backend: `mode=`/`options=` (Inductor's, ignored here), a
    SymInt output (`x.numel()`), a stride symbol of its own (a slice of a growing tensor), a
    negative int argument; each compiles once more when it turns symbolic, not per call."""
    def sized(x):
        return x * 2, x.numel(), x.shape[0] * x.shape[1] + 1

    def shifted(x, a):
        return x + a, x.roll(a, 0), x[a:]

    compiled = torch.compile(sized, backend="inductor_lite", options={"trace.enabled": False})
    for n in (2, 4, 6):
        x = torch.randn(n, 3, device=DEVICE)
        got, want = compiled(x), sized(x)
        torch.testing.assert_close(got[0], want[0])
        assert got[1:] == want[1:]
    compiled = torch.compile(lambda x: x * 2 + 1, backend="inductor_lite")
    ids = torch.randn(2, 3, device=DEVICE)
    inductor_lite.metrics.reset()
    for _ in range(6):
        ids = torch.cat([ids, torch.randn(2, 1, device=DEVICE)], 1)
        torch.testing.assert_close(compiled(ids[:, 1:]), ids[:, 1:] * 2 + 1)
    assert counters["graphs"] <= 2 and counters["eager_graphs"] == 0, dict(counters)
    compiled = torch.compile(shifted, backend="inductor_lite")
    x = torch.randn(12, device=DEVICE)
    inductor_lite.metrics.reset()
    for a in range(-1, -7, -1):
        for got, want in zip(compiled(x, a), shifted(x, a)):
            torch.testing.assert_close(got, want)
    assert counters["graphs"] <= 2 and counters["eager_graphs"] == 0, dict(counters)


def test_ints_that_change_as_symbols_in_sizes_orders_and_resizes() -> None:
    """An int the graph sees change is a symbol: the only input of a graph (its arithmetic
    traced in the inputs' shape environment), a norm's order (run by aten), and a resize of a
    temporary to symbolic sizes (functionalization refuses it: the graph's writes as they are)."""
    arange = dynamo.compile(lambda n: torch.arange(n - 1, device=DEVICE) * 2,
                            backend="inductor_lite", raise_backend_errors=True)
    for n in (4, 6, 3, 9):
        torch.testing.assert_close(arange(n), torch.arange(n - 1, device=DEVICE) * 2)
    norm = dynamo.compile(lambda x, p: torch.norm(x, p), backend="inductor_lite", dynamic=True,
                          raise_backend_errors=True)
    x = torch.randn(5, 5, device=DEVICE)
    for p in (2, 3, 4):
        torch.testing.assert_close(norm(x, p), torch.norm(x, p), **TOL)

    def resized(x, y):
        return torch.resize_as_(x.clone(), y) * 2

    resize = dynamo.compile(resized, backend="inductor_lite", dynamic=True,
                            raise_backend_errors=True)
    for a, b in (((5, 5), (5, 5)), ((3, 4), (3, 4)), ((4, 6), (3, 8))):
        x, y = torch.randn(a, device=DEVICE), torch.randn(b, device=DEVICE)
        torch.testing.assert_close(resize(x, y), resized(x, y))


def test_a_symbolic_int_argument_keeps_one_version_for_every_value() -> None:
    """dynamo's symbolic ints include 0, 1 and negatives: the re-trace makes such an int any
    int (it was a size, at least 2, so 1, 0 and -1 each compiled another version)."""
    compiled = dynamo.compile(lambda x, n: x * n + n // 2, backend="inductor_lite",
                              dynamic=True, raise_backend_errors=True)
    x = torch.randn(4, 6, device=DEVICE)
    for n in (2, 3):  # (an int is a constant until it is seen to change)
        torch.testing.assert_close(compiled(x, n), x * n + n // 2)
    counters.clear()
    for n in (7, 1, 0, 5, -1):
        torch.testing.assert_close(compiled(x, n), x * n + n // 2)
    assert counters["kernels"] == 0, dict(counters)


SYMBOLIC_NUMBERS_EAGER_REFUSES = {
    "full_int8": (lambda x, n: torch.full((2,), n, dtype=torch.int8, device=x.device) + x[:2],
                  (5, 7), 300),
    "fill_int8": (lambda x, n: x.clone().fill_(n) + 1, (5, 7), -200),
    "add_alpha_int8": (lambda x, n: x.add(x, alpha=n), (5, 7), 300),
    "fill_half": (lambda x, s: x.half().fill_(s) + 1, (0.5, 0.7), 1e6),
}


@pytest.mark.parametrize("name", SYMBOLIC_NUMBERS_EAGER_REFUSES)
def test_a_symbolic_number_the_dtype_cannot_hold_raises_as_eager(name: str) -> None:
    """An int or float argument seen to change is a symbol: a kernel took it and wrapped a
    value the result's dtype cannot hold (`fill_(300)` of int8 gave 45, of a half 1e6 gave
    inf) where eager raises; such an op runs as its aten call, which checks it."""
    fn, seen, too_big = SYMBOLIC_NUMBERS_EAGER_REFUSES[name]
    compiled = dynamo.compile(fn, backend="inductor_lite")
    x = torch.ones(3, dtype=torch.int8, device=DEVICE)
    for v in seen:
        torch.testing.assert_close(compiled(x, v), fn(x, v))
    with pytest.raises(RuntimeError, match="without overflow"):
        fn(x, too_big)
    with pytest.raises(RuntimeError, match="without overflow"):
        compiled(x, too_big)


def test_math_functions_of_sizes_are_host_floats() -> None:
    """`math.log2(n)` (ALiBi's slopes of a head count), `math.cos(n)` of a symbolic size: floats
    the wrapper computes with `math`'s functions (it wrote `log(s0)/log(2)`, a NameError when
    `call` ran), `log2` as eager computes it, to the bit."""
    def fn(x):
        n = x.shape[0]
        return x * math.log2(n), x * (3 * math.log2(n + 1)), x * math.cos(n), x * math.tanh(n)

    compiled = dynamo.compile(fn, backend="inductor_lite", dynamic=True, raise_backend_errors=True)
    for n in [3, 5, 8, 11]:
        x = torch.randn(n, dtype=torch.float64, device=DEVICE)
        for got, want in zip(compiled(x), fn(x)):
            assert torch.equal(got, want)
    assert counters["eager_graphs"] == 0, dict(counters)


def test_a_number_to_the_power_of_a_size_is_computed_by_the_wrapper() -> None:
    """`(-2) ** n` of a symbolic size: the wrapper could not print a power by a symbol (the
    graph ran as its aten graph, with a warning)."""
    def fn(x):
        return x * ((-2) ** x.shape[0]), x * (3 ** (x.shape[0] - 1))

    compiled = dynamo.compile(fn, backend="inductor_lite", dynamic=True, raise_backend_errors=True)
    for n in [3, 4, 5]:
        x = torch.ones(n, device=DEVICE)
        for got, want in zip(compiled(x), fn(x)):
            assert torch.equal(got, want)
    assert counters["eager_graphs"] == 0, dict(counters)


def test_floor_ceil_and_abs_of_sizes_in_a_kernel_follow_python() -> None:
    """Triton's `//` rounds toward zero: `ceil(s0 / 3)` came out as its floor, the floor of a
    negative value as its truncation; `Abs(...)` and `log(...)` of sizes were NameErrors in
    the kernel (a function of `math` there runs the graph as its aten graph)."""
    fns = [lambda x: x + math.ceil(x.shape[0] / 3),
           lambda x: x + math.floor((x.shape[0] - 10) / 3),
           lambda x: x * abs(x.shape[0] - x.shape[1]),
           lambda x: x * math.floor(math.log2(x.shape[0]))]
    for fn in fns:
        compiled = dynamo.compile(fn, backend="inductor_lite", dynamic=True,
                                  raise_backend_errors=True)
        for rows in (7, 4):
            x = torch.zeros(rows, 2, device=DEVICE)
            torch.testing.assert_close(compiled(x), fn(x))


def test_floor_of_a_quotient_by_a_size_not_known_nonzero_runs_as_aten() -> None:
    """`s0 / (1 - s1)`: a float quotient (FloatTrueDiv), its floor in a kernel was `float // 1`
    (a TypeError when the kernel ran): the graph runs as its aten graph."""
    fns = [lambda x: x + math.floor(x.shape[0] / (1 - x.shape[1])),
           lambda x: x + math.ceil(x.shape[0] / (1 - x.shape[1]))]
    for fn in fns:
        compiled = dynamo.compile(fn, backend="inductor_lite", dynamic=True,
                                  raise_backend_errors=True)
        for shape in ((7, 2), (4, 3)):
            x = torch.zeros(shape, device=DEVICE)
            torch.testing.assert_close(compiled(x), fn(x))


def test_an_autograd_functions_forward_replaced_after_compiling_is_seen(monkeypatch) -> None:
    """For inputs that need no grad the forward's ops are compiled into kernels: replaced on
    the class, the old `x * 2` stayed."""
    class Twice(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    compiled = dynamo.compile(lambda x: Twice.apply(x) + 1, backend="inductor_lite")
    x = torch.ones(3, device=DEVICE)
    assert compiled(x).tolist() == [3.0] * 3
    monkeypatch.setattr(Twice, "forward", staticmethod(lambda ctx, x: x * 5))
    assert compiled(x).tolist() == [6.0] * 3


def test_a_reduction_over_a_symbolic_row_traced_short_takes_any_length() -> None:
    """A row past Triton's largest block (2**20 elements) after tracing at 16: the one-block
    kernel was sized to it and Triton refused it (the graph then ran as aten for good). A
    looped twin takes long rows; a scan is guarded to rows that fit, a longer one compiled anew."""
    compiled = dynamo.compile(lambda x: (x.sum(-1), x.cumsum(-1)), backend="inductor_lite",
                              dynamic=True, raise_backend_errors=True)
    for n in (16, 17, (1 << 20) + 3):
        x = torch.randn(1, n, device=DEVICE)
        total, running = compiled(x)
        torch.testing.assert_close(total, x.sum(-1), atol=1e-2, rtol=1e-4)
        torch.testing.assert_close(running, x.cumsum(-1), atol=1e-2, rtol=1e-3)
    assert counters["eager_graphs"] == 0, dict(counters)


@pytest.mark.parametrize("writes_an_input", [False, True])
def test_a_disabled_autocast_block_inside_an_outer_one_keeps_full_precision(writes_an_input):
    """The aten graph holds the casts of the blocks it was traced in, not their enter and exit:
    run (or traced again, functionalizing a write) inside the outer block, its matmul was cast
    to bfloat16 a second time, with the float64 result eager's dtype (values thousands off)."""
    def f(x, buf):
        with torch.autocast("cpu", enabled=False):
            y = torch.mm(x, x.t()).double()
        if buf is not None:
            buf.copy_(y[0])
        return y

    x = torch.randn(32, 32) * 100
    buf = torch.zeros(32, dtype=torch.float64) if writes_an_input else None
    compiled = dynamo.compile(f, backend="inductor_lite")
    with torch.autocast("cpu", dtype=torch.bfloat16):
        expected = f(x, None)
        for _ in range(2):
            got = compiled(x, buf)
            assert got.dtype == torch.float64
            torch.testing.assert_close(got, expected)
    if buf is not None:
        torch.testing.assert_close(buf, expected[0])


def _kernels_or_aten(kernels: bool, monkeypatch) -> str:
    """The device of a test of both paths: the test device's kernels, or CPU tensors without
    Triton's interpreter, where the aten graph runs as it is."""
    if kernels:
        return DEVICE
    monkeypatch.setattr(inductor_lite.config, "triton_on_cpu", False)
    return "cpu"


@pytest.mark.parametrize("kernels", [True, False])
def test_a_write_through_data_moves_no_version_counter(kernels: bool, monkeypatch) -> None:
    """inductor_lite moves the version counters of the inputs its graph writes, but only of
    those eager's ops move: `x.data.mul_(2)` moves none (backward through a tensor that saved
    `x` runs, as in eager), also where the aten graph runs as it is (CPU tensors without
    Triton's interpreter: its copy back into `x` moved it)."""
    def f(x):
        x.data.mul_(2)
        return x + 1

    device = _kernels_or_aten(kernels, monkeypatch)
    compiled = dynamo.compile(f, backend="inductor_lite")
    for requires_grad in (True, False):
        a = torch.randn(3, requires_grad=True, device=device)
        x = torch.randn(3, requires_grad=requires_grad, device=device)
        expected = x.detach() * 2
        loss = (a * x).sum()  # saves x
        with torch.no_grad():
            compiled(x)
        assert x._version == 0
        torch.testing.assert_close(x.detach(), expected)
        loss.backward()
        torch.testing.assert_close(a.grad, expected)
    assert (counters["eager_graphs"] == 0) == kernels, dict(counters)


@pytest.mark.parametrize("kernels", [True, False])
@pytest.mark.parametrize("writes", [False, True])
def test_an_output_of_data_has_its_own_version_counter(kernels: bool, writes: bool,
                                                       monkeypatch) -> None:
    """`return x.data` (or a view of it): eager's result has a version counter of its own,
    the aten graph's `detach` shared the input's, so a later in-place op on the result moved
    `x`'s and backward through a tensor that saved `x` raised ("modified by an inplace
    operation") where eager's gives the gradient."""
    def f(x):
        d = x.data
        if writes:
            d.add_(1)
        return d, d.view(3, 1)

    device = _kernels_or_aten(kernels, monkeypatch)
    compiled = dynamo.compile(f, backend="inductor_lite")
    for fn in (f, compiled):
        a = torch.randn(3, requires_grad=True, device=device)
        x = torch.randn(3, device=device)
        loss = (a * x).sum()  # saves x
        with torch.no_grad():
            d, v = fn(x)
        assert (x._version, d._version) == (0, int(writes))
        d.mul_(2)
        v.add_(1)
        assert x._version == 0 and d.data_ptr() == x.data_ptr()
        loss.backward()
        torch.testing.assert_close(a.grad, x)
    assert (counters["eager_graphs"] == 0) == kernels, dict(counters)


def test_float_algebra_that_simplifies_to_a_number_is_computed() -> None:
    """`v - v`, `0 * v + 1` of an `.item()` and `s * 2 - s - s`, `s * 0` of a float input
    are numbers to sympy, not to IEEE arithmetic (NaN, inf, -0.0): make_fx wrote the
    constants in the aten graph, and the lowering the sympy 0 (an int)."""
    def of_item(x):
        v = x.item()
        return torch.ones(1) * (v - v), torch.ones(1) * (0 * v + 1)

    compiled = dynamo.compile(of_item, backend="inductor_lite", capture_scalar_outputs=True)
    compiled(torch.tensor(1.0))
    a, b = compiled(torch.tensor(float("nan")))
    assert a.isnan().all() and b.isnan().all()

    def of_input(x, s):
        b = s * 2 - s - s
        z = s * 0
        return x * b + z, b, z

    compiled = dynamo.compile(of_input, backend="inductor_lite")
    x = torch.ones(2)
    for s in (1.5, 2.5, 1e308, -3.0):
        got, want = compiled(x, s), of_input(x, s)
        torch.testing.assert_close(got[0], want[0], equal_nan=True)
        assert [(type(v), math.copysign(1, v), v) for v in got[1:]] == \
            [(type(v), math.copysign(1, v), v) for v in want[1:]], s


def test_float_arithmetic_is_computed_as_eager_one_node_at_a_time() -> None:
    """Arithmetic on a float argument seen to change, and on a size made a float: the wrapper
    computes each node in Python from its own arguments, as eager computes Python floats.
    sympy's expression of a node is simplified across nodes, and was what ran: `(t + 1e16) -
    1e16` was `t` (eager: 0.0 or 2.0), `t * 2 - t` was `t` (eager: inf at 1e308), three steps
    `t += 0.05` were `t + 0.15` (eager: 0.6000000000000001 from 0.45), `n * 0.1 * 10` was `n`."""
    def fn(x, t, dt):
        c, b = (t + 1e16) - 1e16, t * 2 - t
        for _ in range(3):
            x = x + dt * t
            t += dt
        n = x.shape[0] * 0.1 * 10
        return x * c, c, b, t, x * n, n

    compiled = dynamo.compile(fn, backend="inductor_lite", fullgraph=True,
                              raise_backend_errors=True)
    for t, n in ((0.25, 3), (0.7, 3), (1.3, 7), (0.45, 7), (1e308, 5), (-0.0, 5)):
        x = torch.ones(n, device=DEVICE)
        got, want = compiled(x, t, 0.05), fn(x, t, 0.05)
        for g, w in zip(got, want):
            if isinstance(w, torch.Tensor):
                assert torch.equal(g, w), (t, n)
            else:
                assert (type(g), math.copysign(1, g), g) == (type(w), math.copysign(1, w), w)
    assert counters["kernels"] > 0 and counters["eager_graphs"] == 0, dict(counters)


def test_a_size_made_a_float_is_returned_as_a_float() -> None:
    """`float(x.shape[0])` under dynamic=True: kernels take the size as the int it is, and the
    output was that int (3, not 3.0)."""
    def fn(x):
        n = x.shape[0]
        return x * 2, float(n), n / 2, torch.sym_float(n) * 1

    compiled = dynamo.compile(fn, backend="inductor_lite", fullgraph=True, dynamic=True,
                              raise_backend_errors=True)
    for n in (3, 4, 7):
        x = torch.ones(n, device=DEVICE)
        got, want = compiled(x), fn(x)
        assert torch.equal(got[0], want[0])
        assert [(type(v), v) for v in got[1:]] == [(type(v), v) for v in want[1:]], n
    assert counters["kernels"] > 0 and counters["eager_graphs"] == 0, dict(counters)


def test_an_int_item_is_a_kernel_argument_read_on_the_host() -> None:
    """Under `capture_scalar_outputs`, an int `.item()` (an unbacked symbol) of a tensor the
    kernels compute, or of a 0-d CPU input, used as a value: the wrapper reads it on the host
    once the tensor exists and passes it to the kernels (it ran the whole graph as aten: its
    symbol was unknown to the wrapper). One version serves every value, past 2**31 and
    negative ones included."""
    def f(x, xi, idx, k):
        n = idx.max().item()
        return x * n, x[:, 0] + n, xi + n, xi * k.item() - n, n

    compiled = dynamo.compile(f, backend="inductor_lite", capture_scalar_outputs=True)
    x, xi = torch.randn(4, 3, device=DEVICE), torch.arange(-6, 6, device=DEVICE)
    for n, k in ((3, 2), (1, 0), (0, -1), (-7, 5), (2**31 + 5, -2**33), (-2**40 - 3, 2**40),
                 (2**62, 1)):
        idx, k = torch.tensor([n, n - 1], device=DEVICE), torch.tensor(k)
        got, want = compiled(x, xi, idx, k), f(x, xi, idx, k)
        for g, w in zip(got[:-1], want[:-1]):
            assert g.dtype == w.dtype and torch.equal(g, w), (n, k)
        assert type(got[-1]) is int and got[-1] == want[-1]
    assert counters["eager_graphs"] == 0 and counters["fallbacks"] == 0, dict(counters)
    assert counters["graphs"] == 1 and counters["kernels"] >= 2, dict(counters)


def test_a_bool_item_is_a_kernel_argument_and_returned_as_a_bool() -> None:
    def f(x, flag):
        b = (x > 0).any().item()
        return x * b + flag.item(), b

    compiled = dynamo.compile(f, backend="inductor_lite", capture_scalar_outputs=True)
    x = torch.randn(5, device=DEVICE)
    for v, flag in ((x, True), (-x.abs(), False), (x.abs(), False)):
        got, want = compiled(v, torch.tensor(flag)), f(v, torch.tensor(flag))
        assert torch.equal(got[0], want[0]) and type(got[1]) is bool and got[1] == want[1]
    assert counters["eager_graphs"] == 0 and counters["fallbacks"] == 0, dict(counters)
    assert counters["graphs"] == 1, dict(counters)


def test_a_size_read_with_item_is_bound_before_the_kernels_that_use_it() -> None:
    """`torch.zeros(n)` of an int `.item()`: the number, read on the host, is a size of the
    kernels after it; a negative one raises as eager does (the trace's runtime assert)."""
    def f(x, idx):
        n = idx.max().item()
        return torch.zeros(n, device=x.device) + x.sum(), torch.ones(n, 3, device=x.device).sum(0)

    compiled = dynamo.compile(f, backend="inductor_lite", capture_scalar_outputs=True)
    x = torch.randn(4, device=DEVICE)
    for n in (4, 0, 1, 3000):
        idx = torch.tensor([n, 0], device=DEVICE)
        for g, w in zip(compiled(x, idx), f(x, idx)):
            torch.testing.assert_close(g, w, **TOL)
    with pytest.raises(RuntimeError):
        compiled(x, torch.tensor([-1, -2], device=DEVICE))
    assert counters["eager_graphs"] == 0 and counters["fallbacks"] == 0, dict(counters)
    assert counters["graphs"] == 1, dict(counters)


def test_float_algebra_that_sympy_cancels_is_compared_and_computed_at_run_time() -> None:
    """`v * 0 <= 0`, `(v + s) - v > 0` of an `.item()` v are sympy's `0 <= 0` and `s > 0`,
    False for a NaN or an infinity: the branch and the check were decided while tracing; and
    `(v + s) - v` of a host number was lowered as `s` (NaN for an infinite v)."""
    def branch(x, t, s):
        v = t.item()
        return x + 1 if v * 0 <= 0 else x - 1

    def check(x, t, s):
        v = t.item()
        torch._check((v + s) - v > 0)
        return x + 1

    def value(x, t, s):
        v = t.item()
        return x * ((v + s) - v)

    def outcome(fn, *args):
        try:
            return fn(*args)
        except RuntimeError as error:
            return type(error)

    for fn in (branch, check, value):
        compiled = dynamo.compile(fn, backend="inductor_lite", capture_scalar_outputs=True)
        for v, s in ((1.0, 2.0), (float("nan"), 3.0), (float("inf"), 4.0), (-3.0, 5.0)):
            args = (torch.ones(2), torch.tensor(v), s)
            assert repr(outcome(compiled, *args)) == repr(outcome(fn, *args)), (fn.__name__, v)


def test_a_check_on_an_int_or_bool_item_is_checked_by_the_wrapper() -> None:
    """`torch._check(n == 3)` replaces u0 by 3 in the ShapeEnv: the read still binds u0 and the
    wrapper checks `Eq(u0, 3)`; `torch._check(b)` of a bool `.item()` is checked too."""
    def pinned(x, i):
        n = i.max().item()
        torch._check(n == 3)
        return x * n + torch.zeros(n, device=x.device).sum()

    def flag(x):
        b = (x > 0).any().item()
        torch._check(b)
        return x + 1

    x = torch.ones(2, device=DEVICE)
    for fn, good, bad in ((pinned, (x, torch.tensor([3, 1], device=DEVICE)),
                           (x, torch.tensor([4, 1], device=DEVICE))), (flag, (x,), (-x,))):
        compiled = dynamo.compile(fn, backend="inductor_lite", capture_scalar_outputs=True)
        torch.testing.assert_close(compiled(*good), fn(*good))
        with pytest.raises(RuntimeError):
            compiled(*bad)
    assert counters["eager_graphs"] == 0 and counters["fallbacks"] == 0, dict(counters)


def test_a_slice_by_an_int_item_is_generated_for_every_value() -> None:
    """`x[:n]`, `x[n:]` of an int `.item()` n: fakecore makes the slice's length (and, for a
    start of unknown sign, its start) new unbacked symbols, which the wrapper did not bind, and
    the whole graph ran as its aten graph. The wrapper computes them as Python slices a range
    (clamped to the dim, a negative bound counted from its end): one version serves n = 0, n
    past the dim, negative n."""
    def f(x, i):
        n = i.item()
        return x[:n] * 2, x[:n].sum(), x[n:] + 1, x[:, :n].sum(0), x[n:n + 2] - 1, x[:n:2] * 3

    compiled = dynamo.compile(f, backend="inductor_lite", capture_scalar_outputs=True)
    x = torch.randn(10, 3, device=DEVICE)
    for n in (3, 0, 1, 10, 100, -3, -100, 2**40):
        i = torch.tensor(n)
        for g, w in zip(compiled(x, i), f(x, i)):
            assert g.shape == w.shape and g.stride() == w.stride(), n
            torch.testing.assert_close(g, w, **TOL)
    assert counters["eager_graphs"] == 0 and counters["fallbacks"] == 0, dict(counters)
    assert counters["graphs"] == 1 and counters["kernels"] > 0, dict(counters)


def test_a_slice_by_an_item_kernels_compute_and_a_returned_view() -> None:
    """The bound read by an extern step after the kernel that computes it (`idx.max()`), a
    slice returned as it is (a view of the input, as eager's) and `narrow` at a start read
    from data (its end is a `torch.sym_ite`, computed by the wrapper's Python)."""
    def f(x, idx):
        n = idx.max().item()
        y = x[n:]
        return y, x[:n].softmax(-1), x.narrow(0, n, 2) * 2

    compiled = dynamo.compile(f, backend="inductor_lite", capture_scalar_outputs=True)
    x = torch.randn(10, 3, device=DEVICE)
    for n in (3, 0, 8, -2, -10):
        idx = torch.tensor([n, n - 5], device=DEVICE)
        got, want = compiled(x, idx), f(x, idx)
        assert got[0].data_ptr() == want[0].data_ptr() and got[0]._base is x, n
        for g, w in zip(got, want):
            assert g.shape == w.shape and g.stride() == w.stride(), n
            torch.testing.assert_close(g, w, **TOL)
    for n, error in ((9, RuntimeError), (-11, IndexError)):  # past the dim: as eager, raises
        idx = torch.tensor([n, n - 5], device=DEVICE)
        with pytest.raises(error):
            f(x, idx)
        with pytest.raises(error):
            compiled(x, idx)
    assert counters["eager_graphs"] == 0 and counters["fallbacks"] == 0, dict(counters)
    assert counters["graphs"] == 1 and counters["kernels"] > 0, dict(counters)


@pytest.mark.filterwarnings("error::UserWarning")
def test_a_first_call_whose_check_fails_leaves_later_calls_compiled() -> None:
    """A `torch._check` that fails for the first call's values already while tracing (a 0-d
    input read as a constant) is that call's error, eager's: it was a failure of the backend,
    with a warning, and every later call ran the graph as it came."""
    def f(x):
        v = x.item()
        torch._check(v < 3)
        return x * 2

    compiled = dynamo.compile(f, backend="inductor_lite", capture_scalar_outputs=True)
    for v in (8.0, 2.0, 1.0, 9.0):
        x = torch.tensor(v)  # (0-d CPU: kernels in the interpreter; elsewhere the aten graph)
        if v < 3:
            assert torch.equal(compiled(x), x * 2)
        else:
            with pytest.raises(RuntimeError):
                compiled(x)
    if DEVICE == "cpu":
        assert counters["eager_graphs"] == 0 and counters["kernels"] > 0, dict(counters)


def test_max_of_a_slice_by_an_item_that_is_empty_raises_as_eager() -> None:
    """`x[:n].max()` (`max.dim`, `min`) of an int `.item()` n: the slice is generated, and a
    max over its dim of size 0 has no identity; eager raises, the kernel gave -inf. The meta
    kernels of `max`/`min` do not check it (amax's reference does): fakecore's handler makes
    the check a runtime assert with eager's error."""
    def f(x, i):
        n = i.item()
        return x[:n].max() + 0, x[:n].min(0).values * 2

    compiled = dynamo.compile(f, backend="inductor_lite", capture_scalar_outputs=True)
    x = torch.randn(10, 3, device=DEVICE)
    for n in (3, -2, 10):
        i = torch.tensor(n)
        for g, w in zip(compiled(x, i), f(x, i)):
            torch.testing.assert_close(g, w, **TOL)
    i = torch.tensor(0)
    with pytest.raises(RuntimeError, match="Expected reduction dim to be specified"):
        f(x, i)
    with pytest.raises(RuntimeError, match="Expected reduction dim to be specified"):
        compiled(x, i)
    g = dynamo.compile(lambda x, i: x[:i.item()].max(0)[0] + 1, backend="inductor_lite",
                       capture_scalar_outputs=True)
    torch.testing.assert_close(g(x, torch.tensor(4)), x[:4].max(0)[0] + 1, **TOL)
    with pytest.raises(IndexError, match="dim 0 to have non-zero size"):
        g(x, torch.tensor(0))
    assert counters["eager_graphs"] == 0 and counters["fallbacks"] == 0, dict(counters)


@pytest.mark.filterwarnings("error::UserWarning")
def test_a_size_rounded_from_a_log_of_a_size_is_an_int_of_the_wrapper() -> None:
    """`torch.zeros(math.ceil(math.log2(n)))`, `x[:math.floor(math.log(n))]` of a symbolic
    size n: the wrapper printed floor/ceiling of floats with `//` (`log(s0) // log(2)`), a
    float size (empty_strided's TypeError: the captured graph ran from then on) and 2.0 for
    n = 8; it is `math.floor(math.log2(s0))`, eager's int."""
    def f(x):
        n = x.shape[0]
        return (torch.zeros(math.ceil(math.log2(n)), device=x.device) + 1,
                x[:math.floor(math.log2(n))] * 2, x[:math.floor(math.exp(n / 8))] + 1)

    compiled = dynamo.compile(f, backend="inductor_lite", dynamic=True)
    for n in (8, 5, 16, 31, 32, 64):
        x = torch.randn(n, 3, device=DEVICE)
        for g, w in zip(compiled(x), f(x)):
            assert g.shape == w.shape, n
            torch.testing.assert_close(g, w, **TOL)
    assert counters["eager_graphs"] == 0 and counters["kernels"] > 0, dict(counters)


def test_float_constants_of_size_relations_keep_every_digit() -> None:
    """The wrapper prints a float constant of a relation of sizes with all its digits
    (`math.log(s0) == 1.3862943611198906` was printed with 1.38629436111989: False at 4)."""
    def fn(x):
        return x + 1, math.log(x.shape[0]) == math.log(4), x.shape[0] * 0.1 == 0.30000000000000004

    compiled = dynamo.compile(fn, backend="inductor_lite", dynamic=True)
    for n in (3, 4, 5):
        x = torch.zeros(n, device=DEVICE)
        assert compiled(x)[1:] == fn(x)[1:], n


def test_a_check_that_fixes_the_length_of_a_slice_by_an_item_is_checked() -> None:
    """`torch.stack([x[:n], x[:2]])`, `cat` along another dim, `x[:, :n].reshape(12)` of an int
    `.item()` n: the meta kernel's check teaches the ShapeEnv the slice's length u1 -> 2, which
    folded the graph's `Eq(u1, 2)` to True and left u1 unbound: n = 5 or 9 returned values
    read past the slice (eager raises)."""
    fns = [lambda x, i: torch.stack([x[:i.item()], x[:2]]),
           lambda x, i: torch.cat([x[i.item():i.item() + 2], x[:2]], 1),
           lambda x, i: x[:, :i.item()].reshape(12) + 1]
    x = torch.arange(60.0, device=DEVICE).reshape(6, 10)
    for fn in fns:
        compiled = dynamo.compile(fn, backend="inductor_lite", capture_scalar_outputs=True)
        torch.testing.assert_close(compiled(x, torch.tensor(2)), fn(x, torch.tensor(2)))
        for n in (5, 9):
            with pytest.raises(RuntimeError):
                fn(x, torch.tensor(n))
            with pytest.raises(RuntimeError):
                compiled(x, torch.tensor(n))


def test_max_of_a_slice_by_a_changing_int_that_is_empty_raises_as_eager() -> None:
    """`x[n:].min()`, `x[:n].max()` of an int n seen to change (a size of the inputs, not an
    `.item()`): n = 10 or 0 made the slice empty and the kernel gave inf/-inf; eager raises."""
    compiled = dynamo.compile(lambda x, n: x[n:].min() + x[:n].max(), backend="inductor_lite")
    x = torch.randn(10, device=DEVICE)
    for n in (3, 4, 7):
        torch.testing.assert_close(compiled(x, n), x[n:].min() + x[:n].max())
    for n in (10, 0):
        with pytest.raises(RuntimeError, match="Expected reduction dim to be specified"):
            compiled(x, n)


def test_a_compiled_function_warmed_up_then_called_under_vmap_blames_no_backend() -> None:
    """An entry compiled for plain tensors, then called under `vmap`/`jvp` (whose wrapped
    tensors its guards let through): the kernels raised on a BatchedTensor, and the backend was
    blamed (BackendError under raise_backend_errors; else a warning, and its kernels replaced
    by the captured graph for every later call). Such a call runs eagerly."""
    import warnings

    from torch.func import jvp, vmap

    def f(x):
        return torch.sin(x) * 2 + x.sum()

    compiled = dynamo.compile(f, backend="inductor_lite", raise_backend_errors=True)
    batch = torch.randn(4, 3, device=DEVICE)
    compiled(batch[0])
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message="dynamo")
        torch.testing.assert_close(vmap(compiled)(batch), vmap(f)(batch), **TOL)
        torch.testing.assert_close(jvp(compiled, (batch[0],), (batch[1],)),
                                   jvp(f, (batch[0],), (batch[1],)), **TOL)
        torch.testing.assert_close(compiled(batch[1]), f(batch[1]), **TOL)


@pytest.mark.filterwarnings("error::UserWarning")
def test_lerp_of_a_slice_of_one_of_a_data_dependent_size_through_dynamo():
    # dynamo fakes lerp whole (no decomposition); the backend's retrace decomposes it, and its
    # compiled graph raised an assert that the sizes are equal, so that dynamo warned and ran
    # the captured graph instead (program fuzzer seed 1007998)
    def f(x):
        a = x[x > 0]
        b = torch.cat([a, a])
        return torch.lerp(b, b[:1], 0.3)

    compiled = dynamo.compile(f, backend="inductor_lite")
    for values in ([1.0, 2.0, -1.0], [-1.0, -2.0]):
        x = torch.tensor(values, device=DEVICE)
        torch.testing.assert_close(compiled(x), f(x))
