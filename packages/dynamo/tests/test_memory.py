"""What a compiled function keeps alive: not the tensors of the call that compiled it."""

from __future__ import annotations

import builtins
import gc
import io
import warnings
import weakref

import pytest
import torch
import torch.nn as nn

import dynamo
from dynamo.bytecode import clear_caches


def _no_break(x):
    return torch.relu(x * 2)


def _one_break(x):
    y = x * 2
    print(end="", file=io.StringIO())
    return y + 1


def _break_in_loop(x):
    for i in range(3):
        x = x + i
        print(end="", file=io.StringIO())
    return x


def _opaque_iterator(it):
    for v in it:  # noqa: B007 (v is used after the loop)
        break
    return v * 2


@pytest.mark.parametrize("fn", [_no_break, _one_break, _break_in_loop])
@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_the_inputs_and_outputs_of_a_compiling_call_are_not_kept(fn, backend) -> None:
    dynamo.reset()
    compiled = dynamo.compile(fn, backend=backend)
    x = torch.randn(1000, requires_grad=backend == "aot_eager")
    out = compiled(x)
    refs = [weakref.ref(x), weakref.ref(out)]
    del x, out
    gc.collect()
    assert [r() for r in refs] == [None, None]
    compiled(torch.randn(1000))  # still compiled, and still right
    assert len(dynamo.explain(fn)(torch.randn(1000)).graphs) >= 1


def test_a_dropped_function_with_a_break_and_its_closure_are_freed() -> None:
    """The table of resume functions outlives the functions they continue: it must hold
    neither the function nor the cells of its first caller (a model, its tensors)."""
    def make():
        w = torch.randn(64, 64)

        def f(x):
            y = x @ w
            print(end="", file=io.StringIO())
            return y

        return f, weakref.ref(w)

    f, w = make()
    compiled = dynamo.compile(f)
    torch.testing.assert_close(compiled(torch.ones(2, 64)), f(torch.ones(2, 64)))
    function = weakref.ref(f)
    del f, compiled
    gc.collect()
    assert function() is None and w() is None


class _Logged(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.inner = nn.Linear(64, 64)

    def forward(self, x):
        print(end="", file=io.StringIO())  # a break, then a submodule called at one
        return self.inner(x).relu()


def test_a_dropped_compiled_model_with_breaks_is_freed() -> None:
    model = _Logged()
    compiled = dynamo.compile(model)
    torch.testing.assert_close(compiled(torch.ones(2, 64)), model(torch.ones(2, 64)))
    weight = weakref.ref(model.inner.weight)
    del model, compiled
    gc.collect()
    assert weight() is None


def test_a_module_call_keeps_no_activations() -> None:
    model = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 2))
    compiled = dynamo.compile(model, backend="aot_eager")
    x = torch.randn(4, 8)
    out = compiled(x)
    refs = [weakref.ref(x), weakref.ref(out)]
    del x, out
    gc.collect()
    assert [r() for r in refs] == [None, None]


def test_an_iterator_from_the_frame_is_not_kept() -> None:
    def items():
        yield torch.ones(2)

    compiled = dynamo.compile(_opaque_iterator, backend="eager")
    it = items()
    ref = weakref.ref(it)
    torch.testing.assert_close(compiled(it), torch.full((2,), 2.0))
    del it
    gc.collect()
    assert ref() is None


def test_an_exception_made_in_the_frame_is_made_anew_by_each_call() -> None:
    """Made once by the trace and raised by every call, one exception object gathered every
    call's traceback (and the tensors of its frames) and was the same in every handler."""
    def f(x):
        y = x * 2  # noqa: F841 (a tensor the traceback's frames would hold)
        raise ValueError("bad input")

    compiled = dynamo.compile(f, backend="eager")
    errors, refs = [], []
    for _ in range(3):
        x = torch.randn(1000)
        refs.append(weakref.ref(x))
        with pytest.raises(ValueError, match="bad input") as info:
            compiled(x)
        errors.append(info.value)
        del x, info
    assert errors[0] is not errors[1]
    sizes = {len(list(_frames(e.__traceback__))) for e in errors}
    assert len(sizes) == 1  # the traceback does not grow
    errors.clear()
    gc.collect()
    assert [r() for r in refs] == [None, None, None]


def _frames(tb):
    while tb is not None:
        yield tb.tb_frame
        tb = tb.tb_next


def test_the_caches_of_dropped_modules_are_freed() -> None:
    """A module's compiled forward has a cache of its own (keyed by the module's id): it goes
    with the module, and a new layer each call never fills the shared cache's total limit."""
    from dynamo import frontend

    def once():
        m = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
        dynamo.compile(m, backend="eager")(torch.randn(2, 4))

    dynamo.reset()
    for _ in range(5):
        once()
    gc.collect()
    assert len(frontend._caches) == 0

    def step(layer, x):
        return layer(x).relu()

    compiled = dynamo.compile(step, backend="eager")
    for _ in range(300):  # past the total limit (256) of one function's entries
        layer = nn.Linear(4, 4)
        torch.testing.assert_close(compiled(layer, torch.ones(1, 4)), step(layer, torch.ones(1, 4)))
        del layer  # (freed by its reference count)
    (cache,) = frontend._caches.values()
    assert len(cache) == 1


def test_callees_called_at_a_break_are_freed_when_the_program_drops_them(monkeypatch) -> None:
    """A new layer per step whose forward breaks runs through a compiled wrapper of its own;
    only the most recently used wrappers are held, so old layers (and the cache entries made
    for them) go."""
    from dynamo import frontend

    monkeypatch.setattr(frontend._Callees, "RECENT", 2)

    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(2, 2)

        def forward(self, x):
            y = self.lin(x)
            print(end="")
            return y.relu()

    def step(layer, x):
        return layer(x) * 2

    compiled = dynamo.compile(step, backend="eager")
    alive = []
    for _ in range(12):
        layer = Layer()
        alive.append(weakref.ref(layer))
        torch.testing.assert_close(compiled(layer, torch.ones(1, 2)), step(layer, torch.ones(1, 2)))
        del layer
    gc.collect()
    assert sum(r() is not None for r in alive) <= 2
    assert len(compiled.cache) <= 3


def test_equal_modules_called_at_a_break_get_wrappers_of_their_own() -> None:
    """The callees' wrappers are found by identity, not by `==`: a module class that compares
    by value made every equal module run the first one's wrapper (its weights)."""

    class Scale(nn.Module):
        def __init__(self, k):
            super().__init__()
            self.k = k

        def forward(self, x):
            print(end="", file=io.StringIO())
            return x * self.k

        def __eq__(self, other):
            return isinstance(other, Scale)

        def __hash__(self):
            return 0

    def step(m, x):
        return m(x) + 1

    compiled = dynamo.compile(step, backend="eager")
    for k in (2.0, 3.0, 4.0):
        m = Scale(k)
        torch.testing.assert_close(compiled(m, torch.ones(2)), step(m, torch.ones(2)))


def test_an_entry_outliving_its_compiled_function_still_wraps_its_callees() -> None:
    """The wrapper that compiled `f` is gone; a new one hits the shared cached entry, whose
    break calls `helper` through a wrapper made on the spot (the memo handed over then
    returned its factory instead of the wrapper: a TypeError)."""
    def helper(x):
        dynamo.graph_break()
        return x + 1

    def f(x):
        return helper(x * 2) * 3

    x = torch.randn(3)
    dynamo.compile(f, backend="eager")(x)
    gc.collect()
    torch.testing.assert_close(dynamo.compile(f, backend="eager")(x), f(x))


def test_a_compilation_for_an_input_that_requires_grad_frees_its_fakes() -> None:
    """Tracing runs under the frontend's saved-tensor hooks and `relu` saves its output: the
    saved fake must not be the output itself, which would hold itself (and its FakeTensorMode)
    through its grad_fn, out of gc's reach."""
    refs = []

    def backend(gm, example_inputs):
        refs.extend(weakref.ref(n.meta["example_value"]) for n in gm.graph.nodes
                    if n.op != "output")
        refs.append(weakref.ref(refs[0]().fake_mode))
        return gm.forward

    dynamo.reset()
    dynamo.compile(lambda x: x.relu(), backend=backend)(torch.randn(2, 16, requires_grad=True))
    dynamo.reset()
    gc.collect()
    gc.collect()  # (the mode's own cycle is freed by the pass after the fakes that held it)
    assert len(refs) == 3 and [r() for r in refs] == [None, None, None]


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_a_dropped_parametrized_module_is_freed(backend) -> None:
    """`torch.nn.utils.parametrize` gives each module a class of its own, whose properties'
    closures hold the module: the guard on the module's class held that class, so the module
    (and the cache freed only once the module is gone) lived for ever."""
    from torch.nn.utils import parametrizations

    def make():
        model = parametrizations.weight_norm(nn.Linear(4, 4))
        compiled = dynamo.compile(model, backend=backend)
        compiled(torch.randn(2, 4)).sum().backward()
        torch.testing.assert_close(compiled(torch.ones(2, 4)), model(torch.ones(2, 4)))
        return weakref.ref(model), weakref.ref(type(model))

    refs = make()
    gc.collect()
    assert [r() for r in refs] == [None, None]


def _train_step(model, opt, x, y):
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    opt.zero_grad()
    return loss.detach()


_OPTIMIZERS = {
    "sgd_momentum": lambda params: torch.optim.SGD(params, lr=0.1, momentum=0.9),
    "adam": lambda params: torch.optim.Adam(params, lr=0.01),
}


@pytest.mark.parametrize("optimizer", sorted(_OPTIMIZERS))
@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_the_parameters_keying_an_optimizers_state_are_freed(optimizer, backend) -> None:
    """The step after `backward()` is a resume function, whose cache outlives the compiled
    function, and its sources and guards read `opt.state[p]`: the parameters, and the shared
    table of keys with no literal, are held weakly, and an entry whose parameters are gone
    is dropped. A new model per trial, one compiled step: each trial's parameters are freed
    and the results are eager's."""
    compiled = dynamo.compile(_train_step, backend=backend)
    for trial in range(3):
        torch.manual_seed(trial)
        model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
        twin = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
        twin.load_state_dict(model.state_dict())
        opt, twin_opt = (_OPTIMIZERS[optimizer](m.parameters()) for m in (model, twin))
        for _ in range(3):
            x, y = torch.randn(5, 4), torch.randint(0, 3, (5,))
            torch.testing.assert_close(compiled(model, opt, x, y), _train_step(twin, twin_opt, x, y))
        for p, q in zip(model.parameters(), twin.parameters()):
            torch.testing.assert_close(p, q)
        params = [weakref.ref(p) for p in model.parameters()]
        del model, opt, p, q
        gc.collect()
        assert [r() for r in params] == [None] * 4


def _scaled_by_table(table, x):
    for (_module, _what), scale in table.items():
        x = x * scale
    return x


def _table_rescaled(table, x):
    for key, scale in list(table.items()):
        table[key] = scale + 1  # (the dict written back: its keys named in the generated code)
    return x * 2


@pytest.mark.parametrize("fn", [_scaled_by_table, _table_rescaled])
def test_a_module_in_a_tuple_key_of_a_dict_read_by_a_compiled_function_is_freed(fn) -> None:
    """`table[(module, "scale")]`: the guards (the dict's keys, its items) and the generated
    code name the tuple key; each module in it is held weakly, as a key of its own is, so the
    cache keeps no dropped module alive."""
    compiled = dynamo.compile(fn, backend="eager")
    for _ in range(3):
        module = nn.Linear(2, 2)
        table, twin = {(module, "scale"): 2.0}, {(module, "scale"): 2.0}
        x = torch.randn(2)
        torch.testing.assert_close(compiled(table, x), fn(twin, x))
        assert table == twin
        ref = weakref.ref(module)
        del module, table, twin
        gc.collect()
        assert ref() is None


def test_a_sweep_over_models_without_a_collection_keeps_compiling() -> None:
    # an optimizer is in a reference cycle: its parameters (keys of its state, held weakly
    # by the entries) die only when the collector runs; the cache must not fill up first
    def train(model, opt, x):
        opt.zero_grad()
        model(x).sum().backward()
        opt.step()

    compiled = dynamo.compile(train, backend="eager")
    x = torch.randn(8, 4)
    gc.disable()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no "up to the cache size limit"
            for _ in range(12):
                model = torch.nn.Linear(4, 2)
                opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
                for _ in range(2):
                    compiled(model, opt, x)
                del model, opt
    finally:
        gc.enable()


@pytest.mark.parametrize("source", [
    "def f(x):\n    return m(x) * 2\n",
    "def f(x):\n    y = m(x)\n    print(end='', file=io.StringIO())\n    return y * 2\n",
])
def test_the_caches_of_code_that_is_gone_are_freed(source) -> None:
    """A function made anew from new source (a notebook's cell run again, code `exec`'d in a
    loop) has new code: its caches, and its resume functions, go with the old code."""
    from dynamo import breaks, frontend
    namespace = {"m": nn.Linear(8, 8), "io": io}
    codes = []
    for _ in range(4):
        exec(builtins.compile(source, "<cell>", "exec"), namespace)
        compiled = dynamo.compile(namespace["f"])
        torch.testing.assert_close(compiled(torch.ones(2, 8)), namespace["f"](torch.ones(2, 8)))
        codes.append(weakref.ref(namespace["f"].__code__))
    del namespace["f"], compiled
    clear_caches()  # (the instruction lists read so far hold their code, a bounded cache)
    gc.collect()
    assert [c() for c in codes] == [None] * 4
    assert not any(key[0]() is None for key in frontend._caches)
    assert not any(key[0]() is None for key in breaks._resume_functions)


def test_the_caches_of_code_that_is_gone_are_freed_without_clearing_instruction_lists() -> None:
    """The instruction lists dynamo reads are cached for as long as their code lives (an
    `lru_cache` held the code, and with it its caches, for 4096 more codes)."""
    from dynamo import frontend
    codes = []
    for k in range(4):
        namespace: dict = {}
        exec(builtins.compile(f"f = lambda x: x * {k}\n", "<cell>", "exec"), namespace)
        compiled = dynamo.compile(namespace["f"])
        torch.testing.assert_close(compiled(torch.ones(2)), torch.full((2,), float(k)))
        codes.append(weakref.ref(namespace["f"].__code__))
        del namespace, compiled
    gc.collect()
    assert [c() for c in codes] == [None] * 4
    assert not any(key[0]() is None for key in frontend._caches)


def test_explain_keeps_neither_its_report_nor_the_result_alive() -> None:
    # the recording backend is in the cache keys, which the code's and the module's
    # finalizers held for as long as those lived (for good: a module's forward)
    layer = nn.Linear(3, 3)
    reports, results = [], []
    for fn, arg in ((_one_break, torch.randn(3)), (layer, torch.randn(3))):
        report = dynamo.explain(fn)(arg)
        assert report.graph_count >= 1
        reports.append(weakref.ref(report))
        results.append(weakref.ref(report.result))
        del report
    gc.collect()
    assert [r() for r in reports + results] == [None] * 4


def test_code_execd_with_builtins_of_its_own_leaves_them_behind() -> None:
    """The guard on a builtin that code `exec`'d with a `__builtins__` dict of its own reads
    that dict through the globals: held as a constant, the key table kept it for good."""
    class Marker:
        pass

    marker = Marker()
    table = dict(builtins.__dict__, marker=marker)
    namespace = {"__builtins__": table}
    exec("def f(x):\n    return abs(x) * 2\n", namespace)
    compiled = dynamo.compile(namespace["f"], backend="eager")
    x = torch.randn(3)
    torch.testing.assert_close(compiled(x), x.abs() * 2)
    table["abs"] = lambda t: -t  # still guarded: the new builtin is seen
    torch.testing.assert_close(compiled(x), -x * 2)
    held = weakref.ref(marker)
    del marker, table, namespace, compiled
    gc.collect()
    assert held() is None


def test_functions_from_execd_namespaces_leave_them_behind() -> None:
    """A nested function of `exec`'d code live at a break (told by its identity: a guard on its
    globals would hold them), and a builtin read by an inlined function of such code (no guard
    that the namespace stays without a global of that name): the namespaces are freed."""
    class Marker:
        pass

    source = ("def factory(k):\n    def g(t):\n        return t * k\n    return g\n"
              "def h(x):\n    return abs(x) * 2\n")

    def user(x, g, h):
        y = g(x) + h(x)
        print(end="", file=io.StringIO())  # a break while `g` is live
        return g(y)

    compiled = dynamo.compile(user, backend="eager")
    held = []
    for _ in range(3):
        marker = Marker()
        namespace = {"marker": marker}
        exec(source, namespace)
        x = torch.ones(2)
        torch.testing.assert_close(compiled(x, namespace["factory"](2.0), namespace["h"]),
                                   user(x, namespace["factory"](2.0), namespace["h"]))
        held.append(weakref.ref(marker))
        del marker, namespace
    gc.collect()
    assert [r() for r in held] == [None] * 3


def test_a_cache_whose_entries_are_all_for_objects_gone_is_dropped() -> None:
    """An optimizer's step under a scheduler (a closure over torch's code, which lives on),
    compiled with a backend made for that compilation: the cache keyed by that backend is
    never looked up again, so its entries for the dropped optimizer, with their graphs and
    fakes, were never pruned: a sweep over models kept every one."""
    from dynamo.frontend import _caches

    def train_once() -> None:
        model = nn.Linear(4, 2)
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        schedule = torch.optim.lr_scheduler.StepLR(opt, 2, 0.5)
        step = dynamo.compile(opt.step, backend=lambda gm, example_inputs: gm.forward)
        for _ in range(5):
            model(torch.randn(3, 4)).sum().backward()
            step()
            opt.zero_grad()
            schedule.step()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        train_once()
        gc.collect()
        before = len(_caches)
        for _ in range(4):
            train_once()
            gc.collect()
    assert len(_caches) <= before + 1
