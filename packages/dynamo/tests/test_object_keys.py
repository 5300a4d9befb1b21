"""Dicts keyed by objects compared by identity: tensors, modules, instances of user classes.

The case that matters most is an optimizer's `state[p]`: with such keys traced, a compiled
`optimizer.step()` is one graph that reads and updates the state tensors and the parameters in
place, and creates the state on the first step."""

from __future__ import annotations

import copy
import warnings

import pytest
import torch
from counting import counting_backend
from torch import nn

import dynamo

OPTIMIZERS = {
    "sgd_momentum": lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, weight_decay=0.01,
                                              nesterov=True),
    "sgd_foreach": lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, foreach=True),
    "adam": lambda p: torch.optim.Adam(p, lr=0.01),
    "adam_amsgrad": lambda p: torch.optim.Adam(p, lr=0.01, amsgrad=True, weight_decay=0.1),
    "adam_foreach": lambda p: torch.optim.Adam(p, lr=0.01, foreach=True),
    "adamw": lambda p: torch.optim.AdamW(p, lr=0.01),
    "rmsprop": lambda p: torch.optim.RMSprop(p, lr=0.01, momentum=0.5),
    "adagrad": lambda p: torch.optim.Adagrad(p, lr=0.1),
    # its foreach step passes the step counts, tensors when compiling, as addcdiv's scalars
    "adamax_foreach": lambda p: torch.optim.Adamax(p, lr=0.01, foreach=True),
    "nadam_foreach": lambda p: torch.optim.NAdam(p, lr=0.01, foreach=True),
}


def _model() -> nn.Module:
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))


def _backward(models: tuple[nn.Module, ...]) -> None:
    x = torch.randn(5, 4)
    for model in models:
        model.zero_grad()
        model(x).pow(2).sum().backward()


def _assert_same_state(expected: torch.optim.Optimizer, got: torch.optim.Optimizer) -> None:
    assert len(expected.state) == len(got.state)
    for (_, a), (_, b) in zip(expected.state.items(), got.state.items()):
        assert a.keys() == b.keys()
        for key in a:
            if isinstance(a[key], torch.Tensor):
                assert type(b[key]) is torch.Tensor and b[key].dtype == a[key].dtype
                torch.testing.assert_close(b[key], a[key], rtol=1e-5, atol=1e-6)
            else:
                assert b[key] == a[key]


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
@pytest.mark.parametrize("name", OPTIMIZERS)
def test_an_optimizer_step_is_one_graph_with_eagers_updates(name: str, backend: str) -> None:
    torch.manual_seed(0)
    model = _model()
    reference = copy.deepcopy(model)
    opt, ref_opt = OPTIMIZERS[name](model.parameters()), OPTIMIZERS[name](reference.parameters())
    counted, graphs = counting_backend(backend)
    step = dynamo.compile(opt.step, backend=counted)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no fallback to eager, no failed compilation
        for _ in range(4):
            _backward((reference, model))
            ref_opt.step()
            step()
    for a, b in zip(reference.parameters(), model.parameters()):
        torch.testing.assert_close(b, a, rtol=1e-5, atol=1e-6)
    _assert_same_state(ref_opt, opt)
    # The first step makes the state, the second finds it: two compilations, then cache hits
    # (Adagrad makes its state when it is created: one).
    assert len(graphs) == (1 if name == "adagrad" else 2)
    assert not dynamo.explain(opt.step)().breaks


def test_a_learning_rate_schedule_does_not_recompile_every_step() -> None:
    torch.manual_seed(0)
    model = _model()
    reference = copy.deepcopy(model)
    opt, ref_opt = (torch.optim.AdamW(m.parameters(), lr=0.01) for m in (model, reference))
    schedules = [torch.optim.lr_scheduler.StepLR(o, 1, gamma=0.7) for o in (opt, ref_opt)]
    counted, graphs = counting_backend("eager")
    step = dynamo.compile(opt.step, backend=counted)
    for _ in range(6):
        _backward((reference, model))
        ref_opt.step()
        step()
        for schedule in schedules:
            schedule.step()
    for a, b in zip(reference.parameters(), model.parameters()):
        torch.testing.assert_close(b, a, rtol=1e-5, atol=1e-6)
    assert len(graphs) <= 3  # the lr, a float that changes, becomes a symbol


@pytest.mark.parametrize("make", [
    lambda p: torch.optim.AdamW(p, lr=0.01, fused=True),
    lambda p: torch.optim.SGD(p, lr=0.01, momentum=0.9, fused=True),
], ids=["adamw", "sgd"])
def test_a_fused_step_takes_a_changing_learning_rate_as_a_tensor(make) -> None:
    """The fused steps take `float lr`, which would fix the symbol to one value (a
    recompilation at every step, then eager): their `Tensor lr` overload takes it."""
    torch.manual_seed(0)
    model = _model()
    reference = copy.deepcopy(model)
    opt, ref_opt = make(model.parameters()), make(reference.parameters())
    counted, graphs = counting_backend("eager")
    step = dynamo.compile(opt.step, backend=counted)
    for i in range(6):
        _backward((reference, model))
        for o in (opt, ref_opt):
            o.param_groups[0]["lr"] = 0.01 / (i + 1)
        ref_opt.step()
        step()
    for a, b in zip(reference.parameters(), model.parameters()):
        torch.testing.assert_close(b, a, rtol=1e-5, atol=1e-6)
    assert len(graphs) <= 3


@pytest.mark.parametrize("dynamic", [True, None])
def test_a_train_step_over_a_plain_leaf_tensor_under_dynamic_sizes(dynamic) -> None:
    """A leaf tensor that is not a Parameter (a latent optimised directly) has dynamic dims,
    and so has its `.grad`: its fake reused the tensor's symbols only after a fix (a symbol
    with no source made the shape guards raise TypeError)."""
    def step(z, target, opt):
        opt.zero_grad()
        loss = (z - target).pow(2).sum()
        loss.backward()
        opt.step()
        return loss.detach()

    counted, graphs = counting_backend("eager")
    compiled = dynamo.compile(step, backend=counted, dynamic=dynamic)
    for n in (4, 6, 7):
        z, ref = torch.zeros(n, requires_grad=True), torch.zeros(n, requires_grad=True)
        opt = torch.optim.SGD([z], lr=0.1, momentum=0.9)
        ref_opt = torch.optim.SGD([ref], lr=0.1, momentum=0.9)
        target = torch.arange(n, dtype=torch.float32)
        for _ in range(3):
            torch.testing.assert_close(compiled(z, target, opt), step(ref, target, ref_opt))
        torch.testing.assert_close(z, ref)
    x = torch.randn(3, requires_grad=True)
    x.grad = torch.ones(3)
    grad_twice = dynamo.compile(lambda t: t.grad * 2, backend="eager", dynamic=dynamic)
    torch.testing.assert_close(grad_twice(x), torch.full((3,), 2.0))


def test_a_new_parameter_object_gets_its_own_state() -> None:
    """The state is found by the parameter's identity: a parameter replaced by another of the
    same shape (a reloaded layer) must not be updated with the old one's state."""
    torch.manual_seed(0)
    model = _model()
    reference = copy.deepcopy(model)
    opt, ref_opt = (torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
                    for m in (model, reference))
    step = dynamo.compile(opt.step, backend="eager")
    for i in range(4):
        if i == 2:
            for o, m in ((opt, model), (ref_opt, reference)):
                new = nn.Parameter(m[0].weight.detach().clone())
                o.param_groups[0]["params"][0] = m[0].weight = new
        _backward((reference, model))
        ref_opt.step()
        step()
    for a, b in zip(reference.parameters(), model.parameters()):
        torch.testing.assert_close(b, a)
    _assert_same_state(ref_opt, opt)


def test_a_dict_keyed_by_input_tensors_is_read_iterated_and_written() -> None:
    a, b, c = torch.randn(3), torch.randn(3), torch.randn(3)

    def f(scales, x, y, z):
        total = x * scales[x] + (y * 10 if y in scales else y)
        for key, value in scales.items():
            total = total + key * value  # the keys are the tensors themselves
        scales[z] = 4.0
        return total

    compiled = dynamo.compile(f, backend="eager", fullgraph=True)
    got_scales, expected_scales = {a: 2.0, b: 3.0}, {a: 2.0, b: 3.0}
    torch.testing.assert_close(compiled(got_scales, a, b, c), f(expected_scales, a, b, c))
    assert list(got_scales) == [a, b, c] and got_scales[c] == 4.0
    # Another tensor where `x` was: its own entry (none: a KeyError, as in Python).
    with pytest.raises(KeyError):
        dynamo.compile(f, backend="eager")({a: 2.0, b: 3.0}, c, b, a)


def test_equal_one_element_tensors_are_different_keys() -> None:
    """`==` on one-element tensors answers by value; a dict (and the keys' guard) does not."""
    a, b = torch.ones(1), torch.ones(1)

    def f(scales, x):
        return x * len(scales) + sum(v for v in scales.values())

    compiled = dynamo.compile(f, backend="eager")
    x = torch.randn(1)
    assert compiled({a: 1.0}, x).item() == f({a: 1.0}, x).item()
    assert compiled({b: 5.0}, x).item() == f({b: 5.0}, x).item()


def test_dicts_keyed_by_modules_and_plain_objects() -> None:
    class Tag:
        pass

    first, second = Tag(), Tag()
    layer = nn.Linear(3, 3)
    gains = {layer: 2.0}
    weights = {first: 1.0, second: -1.0}

    def f(x, tag):
        return layer(x) * gains[layer] * weights[tag]

    compiled = dynamo.compile(f, backend="eager", fullgraph=True)
    x = torch.randn(2, 3)
    for tag in (first, second, first):
        torch.testing.assert_close(compiled(x, tag), f(x, tag))


def _biased_by_table(table, x):
    for (mod, _what), scale in table.items():
        x = x * scale + mod.weight.sum()
    return x


def _applied_by_table(table, x):
    for (mod, _what), scale in table.items():
        x = mod(x) * scale
    return x


def _found_in_table(table, mod, x):
    return x * table[(mod, "s")] + table.get((mod, "t"), 0.5) + ((mod, "u") in table)


@pytest.mark.parametrize("fn", [_biased_by_table, _applied_by_table, _found_in_table])
@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_a_module_in_a_tuple_key_is_traced_through_the_key(fn, backend) -> None:
    """`for (mod, what), v in table.items()`: the module in a tuple key is read from the key
    (`list(L['table'].keys())[0][0]`), so it is traced as a module and its parameters are graph
    inputs (not real tensors of the trace: a MixedRealFakeError, a break at `mod(x)`, and a
    parameter's sum kept as a constant, stale once the weight changes); a tuple the code builds
    of a frame's module and constants finds the key as a real dict does."""
    backend_fn, graphs = counting_backend(backend)
    compiled = dynamo.compile(fn, backend=backend_fn, fullgraph=True)
    layer, x = nn.Linear(2, 2), torch.randn(2)

    def args(layer, scale=2.0):
        table = {(layer, "s"): scale} if fn is not _found_in_table else \
            {(layer, "s"): scale, (layer, "t"): 3.0}
        return (table, x) if fn is not _found_in_table else (table, layer, x)

    torch.testing.assert_close(compiled(*args(layer)), fn(*args(layer)))
    with torch.no_grad():
        layer.weight.add_(1.0)  # read again, not a constant of the first call
    torch.testing.assert_close(compiled(*args(layer)), fn(*args(layer)))
    other = nn.Linear(2, 2)  # another module in the key: its own weights
    torch.testing.assert_close(compiled(*args(other, 3.0)), fn(*args(other, 3.0)))
    assert len(graphs) == 2


def test_tuple_keys_holding_modules_are_the_same_keys_in_two_dicts() -> None:
    layer = nn.Linear(2, 2)

    def f(scales, shifts, x):
        for key, scale in scales.items():
            x = key[0](x) * scale + shifts[key]
        return x, {key: scale + 1 for key, scale in scales.items()}

    compiled = dynamo.compile(f, backend="eager", fullgraph=True)
    x = torch.randn(2)
    scales, shifts = {(layer, 1): 2.0}, {(layer, 1): 5.0, (layer, True, 0): 7.0}
    got, expected = compiled(scales, shifts, x), f(scales, shifts, x)
    torch.testing.assert_close(got[0], expected[0])
    assert list(got[1]) == [(layer, 1)] and next(iter(got[1]))[0] is layer
    assert got[1] == expected[1]


def test_after_torch_compile_the_optimizer_step_is_still_one_graph() -> None:
    """torch.compile's first call wraps optimizer internals (`_init_group`) in
    `torch._dynamo.disable`, for its own frontend; this one traces them still."""
    torch.compile(lambda x: x + 1, backend="eager")(torch.ones(1))
    model = _model()
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    assert getattr(type(opt)._init_group, "_torchdynamo_disable", False)
    _backward((model,))
    explained = dynamo.explain(opt.step)()
    assert explained.graph_count == 1 and not explained.breaks


def test_a_function_marked_torch_compiler_disable_runs_as_it_is() -> None:
    calls = []

    @torch.compiler.disable
    def log_and_double(x):
        calls.append(x.shape)
        return x * 2

    def f(x):
        return log_and_double(x + 1) - 1

    explained = dynamo.explain(f)(torch.ones(2))
    (reason,) = [b.reason for b in explained.breaks]
    assert reason.endswith("log_and_double, marked torch.compiler.disable")
    calls.clear()
    torch.testing.assert_close(dynamo.compile(f, backend="eager")(torch.ones(2)), f(torch.ones(2)))
    assert len(calls) == 2


def test_a_module_marked_torch_compiler_disable_runs_as_it_is_and_stays_intact() -> None:
    class Cos(torch.nn.Module):
        def forward(self, t):
            return t.cos()

    m = torch.compiler.disable(Cos())  # (its forward, on the instance, is torch's wrapper)

    def f(x):
        return m(x) + 1

    x = torch.randn(3)
    explained = dynamo.explain(f)(x)
    (reason,) = [b.reason for b in explained.breaks]
    assert reason.endswith(".Cos, marked torch.compiler.disable")
    compiled = dynamo.compile(f, backend="eager")
    for _ in range(2):
        torch.testing.assert_close(compiled(x), f(x))
    assert "forward" in m.__dict__


def test_a_forward_set_on_the_instance_survives_a_compiled_call() -> None:
    class Overrides(torch.nn.Module):
        def __call__(self, *args):
            return super().__call__(*args)

        def forward(self, x):
            return x + 1

    w = Overrides()
    w.forward = lambda x: x * 100
    x = torch.ones(2)
    torch.testing.assert_close(dynamo.compile(w, backend="eager")(x), x * 100)
    torch.testing.assert_close(w(x), x * 100)


def test_id_of_objects_from_the_frame_is_a_guarded_constant() -> None:
    """GradScaler keys its per-optimizer state by `id(optimizer)`."""
    class Opt:
        pass

    first, second = Opt(), Opt()
    states = {id(first): 1.0, id(second): 2.0}
    weight = torch.randn(2)

    def f(x, opt, w):
        return x * states[id(opt)] + (id(w) == id(weight))

    compiled = dynamo.compile(f, backend="eager", fullgraph=True)
    x = torch.randn(2)
    for opt, w in ((first, weight), (second, weight), (first, torch.randn(2))):
        torch.testing.assert_close(compiled(x, opt, w), f(x, opt, w))

    def g(x):
        return id(x + 1)

    (reason,) = [b.reason for b in dynamo.explain(g)(x).breaks]
    assert reason.startswith("id() of") and "objects from the frame only" in reason


def test_torch_python_that_returns_a_dict_is_followed() -> None:
    """GradScaler's per-optimizer state comes from a factory in torch's Python that returns a
    dict: not a graph operation, it is followed like the user's code."""
    from torch.amp.grad_scaler import _refresh_per_optimizer_state

    def f(x):
        state = _refresh_per_optimizer_state()
        state["found_inf_per_device"]["cpu"] = x.sum()
        return x * len(state), state

    counted, graphs = counting_backend("eager")
    got, state = dynamo.compile(f, backend=counted, fullgraph=True)(torch.ones(3))
    torch.testing.assert_close(got, torch.full((3,), 2.0))
    assert state == {"stage": state["stage"], "found_inf_per_device": {"cpu": torch.tensor(3.0)}}
    assert "_refresh_per_optimizer_state" not in graphs[0].code


def test_inputs_whose_sources_differ_only_in_punctuation_get_their_own_names() -> None:
    def by_int(d):
        return d[1] + d[-1] * 2  # L['d'][1] and L['d'][-1]: both `L_d_1` as names

    def by_str(d):
        return d["a.b"] + d["a_b"] * 2

    for fn, d in ((by_int, {1: torch.ones(2), -1: torch.zeros(2)}),
                  (by_str, {"a.b": torch.ones(2), "a_b": torch.zeros(2)})):
        torch.testing.assert_close(dynamo.compile(fn, fullgraph=True)(d), fn(d))
