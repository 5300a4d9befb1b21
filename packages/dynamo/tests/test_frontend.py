"""compile()'s behaviour around the graph: caching, guards and recompiles, fallbacks, errors,
modules, backends, dynamic shapes, autograd."""

from __future__ import annotations

import io
import re
import warnings

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import dynamo

FACTOR = 2


def _entries(compiled) -> int:
    cache = compiled._compiled_forward.cache if isinstance(compiled, dynamo.OptimizedModule) \
        else compiled.cache
    return len(cache)


def test_cached_call_reuses_the_entry_and_new_sizes_recompile() -> None:
    calls = []

    def backend(gm, inputs):
        calls.append(gm)
        return gm.forward

    f = dynamo.compile(lambda x: x.sin() + 1, backend=backend)
    x = torch.randn(3)
    f(x)
    f(torch.randn(3))
    assert len(calls) == 1
    f(torch.randn(4))
    f(torch.randn(3, dtype=torch.float64))
    assert len(calls) == 3


def test_globals_and_constants_are_guarded() -> None:
    global FACTOR

    def f(x, n):
        return x * n * FACTOR

    compiled = dynamo.compile(f)
    x = torch.ones(2)
    assert compiled(x, 3).tolist() == [6.0, 6.0]
    assert compiled(x, 4).tolist() == [8.0, 8.0]
    FACTOR = 5
    try:
        assert compiled(x, 4).tolist() == [20.0, 20.0]
    finally:
        FACTOR = 2
    assert _entries(compiled) == 3


def test_globals_of_a_function_no_module_owns_are_read_from_its_own_dict() -> None:
    """torch.fx's generated code and code `exec`'d in a dict of its own: their globals are
    not `sys.modules[__name__]`'s, even when the dict claims that name."""
    traced = torch.fx.symbolic_trace(nn.Linear(4, 4))

    def through_fx(x):
        return traced(x) * 2

    namespace = {"__name__": __name__, "FACTOR": 10}  # this module's name, another FACTOR
    exec("def scaled(x):\n    return x * FACTOR\n", namespace)
    scaled = namespace["scaled"]

    def through_exec(x):
        return scaled(x) + 1

    x = torch.randn(2, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a frame run eagerly fails the test
        for fn in (through_fx, through_exec):
            compiled = dynamo.compile(fn)
            for _ in range(3):
                torch.testing.assert_close(compiled(x), fn(x))
            assert _entries(compiled) == 1
        namespace["FACTOR"] = 100  # guarded where it lives
        torch.testing.assert_close(compiled(x), x * 100 + 1)


def test_module_attribute_changes_recompile() -> None:
    class Scale(nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = 2.0
            self.fc = nn.Linear(3, 3)

        def forward(self, x):
            return self.fc(x) * self.scale

    m = Scale()
    compiled = dynamo.compile(m)
    x = torch.randn(2, 3)
    torch.testing.assert_close(compiled(x), m(x))
    m.scale = 3.0
    torch.testing.assert_close(compiled(x), m(x))
    m.fc = nn.Linear(3, 3)
    torch.testing.assert_close(compiled(x), m(x))
    with torch.no_grad():
        m.fc.weight.mul_(2)  # same tensor, new values: no recompile, the new values are used
    torch.testing.assert_close(compiled(x), m(x))
    assert _entries(compiled) == 1  # three compiled; the two for the freed `fc` are dropped


def test_training_flag_is_guarded() -> None:
    m = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5))
    compiled = dynamo.compile(m)
    x = torch.randn(8, 4)
    compiled(x)
    m.eval()
    torch.testing.assert_close(compiled(x), m(x))
    assert _entries(compiled) == 2


def test_grad_mode_is_guarded() -> None:
    f = dynamo.compile(lambda x: x * 2)
    x = torch.randn(3, requires_grad=True)
    assert f(x).requires_grad
    with torch.no_grad():
        assert not f(x).requires_grad


def test_backward_through_the_graph_matches_eager() -> None:
    m = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
    compiled = dynamo.compile(m)
    x = torch.randn(5, 4, requires_grad=True)
    compiled(x).sum().backward()
    got = [p.grad.clone() for p in m.parameters()] + [x.grad.clone()]
    m.zero_grad()
    x.grad = None
    m(x).sum().backward()
    expected = [p.grad for p in m.parameters()] + [x.grad]
    for g, e in zip(got, expected):
        torch.testing.assert_close(g, e)


class _Zero:
    def value(self):
        return 0


class _Rebinding(_Zero):
    def f(self, x):
        def rebind():
            nonlocal self
            self = _Rebinding()

        rebind()
        # a break here cannot share `self`'s cell (zero-argument super() reads the first
        # parameter's slot), which the nested function writes
        y = x.sum().item()
        return x + super().value() + y


def test_unsupported_code_runs_eagerly_with_one_warning() -> None:
    compiled = dynamo.compile(_Rebinding.f)
    with pytest.warns(UserWarning, match=r"(?s)a nested function captured.*test_frontend.py:\d+"):
        assert compiled(_Rebinding(), torch.zeros(1)).item() == 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert compiled(_Rebinding(), torch.zeros(1)).item() == 0


def test_fullgraph_raises_with_the_reason_and_location() -> None:
    def f(x):
        if x.sum() > 0:
            return x
        return -x

    with pytest.raises(dynamo.Unsupported) as info:
        dynamo.compile(f, fullgraph=True)(torch.ones(2))
    message = str(info.value)
    assert "branching on a tensor's value" in message
    assert "test_frontend.py" in message and "if x.sum() > 0:" in message


def test_cache_size_limit_falls_back_with_the_failing_guards() -> None:
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    compiled = dynamo.compile(lambda x, tag: x + int(tag[1:]), backend=backend)
    x = torch.zeros(1)
    with pytest.warns(UserWarning,
                      match="(?s)cache size limit.*L\\['tag'\\] == 't0' failed: it is 't8'"):
        for n in range(dynamo.frontend.CACHE_SIZE_LIMIT + 1):
            assert compiled(x, f"t{n}").item() == n
    assert compiled(x, "t100").item() == 100
    # the call past the limit spent no backend work on an entry the cache had no room for
    assert len(graphs) == dynamo.frontend.CACHE_SIZE_LIMIT


def test_functions_behind_one_decorator_each_have_their_share_of_the_cache_limit(
        recwarn) -> None:
    """Every `@torch.no_grad()` function (or one wrapped by any decorator) runs the
    decorator's one wrapper code, told apart by the function in its closure: each function
    counts towards its own share of the limit, as torch.compile counts it (the ninth helper
    with a break ran eagerly, with a cache-limit warning naming it)."""
    helpers = []
    for i in range(dynamo.frontend.CACHE_SIZE_LIMIT + 4):
        namespace = {"dynamo": dynamo}
        exec(f"def helper{i}(x):\n    y = x * {i}\n    dynamo.graph_break()\n"
             f"    return y + 1\n", namespace)  # (functions of their own, as a program's are)
        helpers.append(torch.no_grad()(namespace[f"helper{i}"]))

    def f(x, helpers):
        for h in helpers:
            x = x + h(x)
        return x

    compiled = dynamo.compile(f)
    for _ in range(2):
        assert torch.equal(compiled(torch.ones(2), helpers), f(torch.ones(2), helpers))
    assert not [w for w in recwarn if "cache size limit" in str(w.message)]


def test_an_int_seen_to_change_is_compiled_as_a_symbol() -> None:
    """Automatic dynamic for ints: a step count passed in, or kept on a module, is compiled
    once as a constant, then as a symbol (0 and 1 included)."""
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    compiled = dynamo.compile(lambda x, n: x * n + torch.arange(n).sum(), backend=backend)
    for n in range(2, 12):
        assert compiled(torch.ones(1), n).item() == n + n * (n - 1) // 2
    assert len(graphs) == 2

    class Counter(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.calls = 0

        def forward(self, x):
            self.calls += 1
            return x * self.calls

    graphs.clear()
    counter = Counter()
    compiled_counter = dynamo.compile(counter, backend=backend)
    for calls in range(1, 13):
        assert compiled_counter(torch.ones(1)).item() == calls
    assert counter.calls == 12 and len(graphs) == 2  # 1, then any


def test_an_int_symbol_divided_by_itself_still_raises_at_zero() -> None:
    compiled = dynamo.compile(lambda x, n: x * (n // n) + n % n + n / n)
    for n in (2, 3):
        assert compiled(torch.ones(1), n).item() == 2
    with pytest.raises(ZeroDivisionError):
        compiled(torch.ones(1), 0)


def test_frames_without_tensor_work_are_left_alone() -> None:
    compiled = dynamo.compile(lambda a, b: a + b)
    assert compiled(2, 3) == 5
    entry = compiled.cache.entries[0][1]
    assert entry.graph is None


def test_disable_and_allow_in_graph() -> None:
    @dynamo.disable
    def eager_only(x):
        return x + 1

    assert dynamo.compile(eager_only)(torch.zeros(1)).item() == 1
    with pytest.raises(dynamo.Unsupported, match="marked dynamo.disable"):
        dynamo.compile(lambda x: eager_only(x) * 2, fullgraph=True)(torch.zeros(1))

    @dynamo.allow_in_graph
    def opaque(x):
        return x * 3

    compiled = dynamo.compile(lambda x: opaque(x) + 1, fullgraph=True)
    assert compiled(torch.ones(1)).item() == 4
    graph = compiled.cache.entries[0][1].graph
    assert any(n.target is opaque for n in graph.graph.nodes)


def test_a_disabled_module_or_builtin_runs_as_it_is() -> None:
    class Inner(nn.Module):
        def forward(self, x):
            return x.cos()

    class Outer(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.inner = dynamo.disable(Inner())

        def forward(self, x):
            return self.inner(x) + 1

    model, x = Outer(), torch.randn(3)
    report = dynamo.explain(model)(x)
    assert report.ops_per_graph == [["add"]], report.ops_per_graph  # cos runs as it is
    assert any("marked dynamo.disable" in b.reason for b in report.breaks)
    torch.testing.assert_close(dynamo.compile(model)(x), model(x))
    torch.testing.assert_close(dynamo.compile(model.inner)(x), x.cos())
    sin = dynamo.disable(torch.sin)  # a builtin takes no attribute: wrapped
    with pytest.raises(dynamo.Unsupported, match="marked dynamo.disable"):
        dynamo.compile(lambda x: sin(x) * 2, fullgraph=True)(x)
    in_graph = dynamo.allow_in_graph(torch.cos)  # (the marks of builtins too)
    torch.testing.assert_close(dynamo.compile(lambda x: in_graph(x) + 1, fullgraph=True)(x),
                               x.cos() + 1)
    threads = dynamo.assume_constant_result(torch.get_num_threads)
    torch.testing.assert_close(dynamo.compile(lambda x: x + threads(), fullgraph=True)(x),
                               x + torch.get_num_threads())


def test_disable_of_what_compile_returned_runs_what_it_wraps_as_it_is() -> None:
    """As `torch.compiler.disable(torch.compile(f))`: marking the wrapper itself was no mark
    its calls read (it went on compiling)."""
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    class Seven(nn.Module):
        def forward(self, x):
            return x * 7

    class Holder:
        def scale(self, x):
            return x * 2

    x = torch.randn(3)
    for fn, expected in ((lambda x: x.cos() + 1, x.cos() + 1), (Seven(), x * 7),
                         (Holder().scale, x * 2)):
        disabled = dynamo.disable(dynamo.compile(fn, backend=backend))
        torch.testing.assert_close(disabled(x), expected)
        assert not graphs
        with pytest.raises(dynamo.Unsupported, match="marked dynamo.disable"):
            dynamo.compile(lambda x, d=disabled: d(x), fullgraph=True)(x)


def test_compile_refuses_options_of_the_wrong_type() -> None:
    """`dynamic=0` compiled as None (automatic dynamic), `dynamic=1` as True without its duck
    sizing, `fullgraph="no"` as fullgraph: a TypeError instead (torch.compile refuses a
    dynamic that is not a bool too)."""
    for options in ({"dynamic": 0}, {"dynamic": "yes"}, {"fullgraph": "no"},
                    {"raise_backend_errors": 1}, {"capture_scalar_outputs": None}):
        name = next(iter(options))
        with pytest.raises(TypeError, match=f"dynamo.compile: {name} must be"):
            dynamo.compile(lambda x: x + 1, **options)
        with pytest.raises(TypeError, match=f"dynamo.compile: {name} must be"):
            dynamo.compile(**options)  # (as a decorator: at once)
    for dynamic in (None, True, False):
        torch.testing.assert_close(dynamo.compile(lambda x: x + 1, dynamic=dynamic)(
            torch.ones(2)), torch.full((2,), 2.0))


def test_explain_leaves_other_compiled_functions_alone() -> None:
    """explain used to set every cache aside for its run and put them back: a compiled
    function called meanwhile (another thread's, here one called for real at a break) lost
    the entries it made, and they were in the report."""
    compiled = dynamo.compile(lambda x: x.sin() * 2)

    @dynamo.disable
    def elsewhere(x):
        return compiled(x)

    def explained(x):
        return elsewhere(x.cos()) + 1

    x = torch.randn(3)
    report = dynamo.explain(explained)(x)
    assert all(name.split(".<locals>.")[1].startswith("explained")  # (not the lambda's)
               for name, _ in report.guards_by_entry), str(report)
    assert len(compiled.cache.entries) == 1  # made during the explained call, and kept
    torch.testing.assert_close(report.result, x.cos().sin() * 2 + 1)


def test_load_state_dict_takes_torch_compiles_keys() -> None:
    """A checkpoint saved from torch.compile's wrapper has `_orig_mod.` keys."""
    model = nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2))
    saved = {f"_orig_mod.{k}": v.clone() + 1 for k, v in model.state_dict().items()}
    compiled = dynamo.compile(model)
    compiled.load_state_dict(saved)
    for key, value in model.state_dict().items():
        torch.testing.assert_close(value, saved[f"_orig_mod.{key}"])
    compiled.load_state_dict({k: v - 1 for k, v in model.state_dict().items()})  # plain keys


def test_optimized_module_passes_attributes_and_runs_hooks() -> None:
    m = nn.Linear(3, 2)
    compiled = dynamo.compile(m)
    assert compiled.weight is m.weight and compiled.in_features == 3
    assert compiled.state_dict().keys() == m.state_dict().keys()
    seen = []
    handle = m.register_forward_hook(lambda mod, args, out: seen.append(out.shape))
    x = torch.randn(4, 3)
    torch.testing.assert_close(compiled(x), m(x))
    handle.remove()
    assert seen == [(4, 2), (4, 2)]


def test_hooks_registered_on_the_compiled_module_run() -> None:
    m = nn.Linear(3, 2)
    compiled = dynamo.compile(m)
    order = []
    m.register_forward_hook(lambda mod, args, out: order.append("original"))
    compiled.register_forward_pre_hook(lambda mod, args: order.append("pre") or (args[0] * 0,))
    compiled.register_forward_hook(lambda mod, args, out: order.append("post") or out + 100)
    grads = []
    compiled.register_full_backward_hook(lambda mod, gin, gout: grads.append(gout[0].shape))
    x = torch.randn(4, 3, requires_grad=True)
    out = compiled(x)
    torch.testing.assert_close(out, m(torch.zeros(4, 3)) + 100)
    out.sum().backward()
    assert order == ["pre", "original", "post", "original"] and grads == [(4, 2)]

    inner = dynamo.compile(m)
    inner.register_forward_hook(lambda mod, args, out: out + 100)

    class Parent(nn.Module):  # the compiled module inside a compiled caller: its hook inlined
        def __init__(self) -> None:
            super().__init__()
            self.sub = inner

        def forward(self, x):
            return self.sub(x) * 2

    parent = dynamo.compile(Parent(), fullgraph=True)
    with torch.no_grad():
        torch.testing.assert_close(parent(x), (m(x) + 100) * 2)


def test_a_model_holding_a_compiled_module_saves_loads_and_pickles() -> None:
    class Parent(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.sub = dynamo.compile(nn.Linear(3, 2))

        def forward(self, x):
            return self.sub(x)

    parent, fresh = Parent(), Parent()
    assert list(parent.state_dict()) == ["sub.weight", "sub.bias"]
    fresh.load_state_dict(parent.state_dict())  # the keys as saved, not under `_orig_mod.`
    x = torch.randn(4, 3)
    torch.testing.assert_close(fresh(x), parent(x))
    buffer = io.BytesIO()
    torch.save(parent.sub, buffer)
    buffer.seek(0)
    loaded = torch.load(buffer, weights_only=False)
    assert isinstance(loaded, dynamo.OptimizedModule)
    torch.testing.assert_close(loaded(x), parent(x))


@dynamo.compile(backend="aot_eager")
def _doubled(x):
    return x * FACTOR


class _Scaled(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.act = _doubled  # a module-level compiled function held by a model

    @dynamo.compile
    def shifted(self, x):
        return self.lin(x) + 1

    def forward(self, x):
        return self.act(self.lin(x))


def test_compiled_functions_pickle_and_copy_as_torch_compile_s_do() -> None:
    """A module-level `@compile`d function pickles by name (torch.compile's wrapper does; it
    was 'not the same object as ...'), and copies as itself; a compiled bound method pickles
    and deep-copies with its object (`m.forward = compile(m.forward)`: the copy's forward is
    the copy's), with a cache of its own; its signature has no `self`."""
    import copy
    import inspect
    import pickle

    x = torch.randn(2, 3)
    assert pickle.loads(pickle.dumps(_doubled)) is _doubled
    assert copy.deepcopy(_doubled) is _doubled and copy.copy(_doubled) is _doubled
    model = _Scaled()
    buffer = io.BytesIO()
    torch.save(model, buffer)
    buffer.seek(0)
    loaded = torch.load(buffer, weights_only=False)
    torch.testing.assert_close(loaded(x), model(x))
    torch.testing.assert_close(loaded.shifted(x), model.shifted(x))
    model.forward = dynamo.compile(model.forward, backend="aot_eager")
    assert str(inspect.signature(model.forward)) == "(x)"
    expected = model(x)
    twin = copy.deepcopy(model)
    assert twin.forward.bound_self is twin and twin.forward.backend is model.forward.backend
    with torch.no_grad():
        twin.lin.weight.zero_()
    torch.testing.assert_close(twin(x), twin.lin.bias.expand(2, 3) * FACTOR)
    torch.testing.assert_close(model(x), expected)
    again = pickle.loads(pickle.dumps(model))
    torch.testing.assert_close(again(x), expected)
    assert again.forward.bound_self is again


def test_a_compiled_module_given_another_module_calls_that_one() -> None:
    """`compiled._orig_mod = other`: the forward compiled for the first module ran on
    (torch.compile's wrapper does the same), while `parameters()` were the other's."""
    first, other = nn.Linear(3, 3), nn.Linear(3, 3)
    compiled, x = dynamo.compile(first, backend="eager"), torch.randn(2, 3)
    torch.testing.assert_close(compiled(x), first(x))
    compiled._orig_mod = other
    torch.testing.assert_close(compiled(x), other(x))


def test_decorator_forms_and_methods() -> None:
    @dynamo.compile
    def f(x):
        return x + 1

    @dynamo.compile(backend="aot_eager", fullgraph=True)
    def g(x):
        return x * 2

    assert f(torch.zeros(1)).item() == 1 and g(torch.ones(1)).item() == 2

    class Scaled(nn.Module):
        def __init__(self, factor: float) -> None:
            super().__init__()
            self.factor = factor

        @dynamo.compile
        def forward(self, x):  # bound to each instance, as the plain method would be
            return x * self.factor

    one, three = Scaled(1.0), Scaled(3.0)
    assert one(torch.ones(1)).item() == 1 and three(torch.ones(1)).item() == 3
    assert Scaled.forward(three, torch.ones(1)).item() == 3
    assert dynamo.compile(three)(torch.ones(1)).item() == 3  # the method it compiles

    def outer(x):
        return three(x) + 1

    assert dynamo.compile(outer)(torch.ones(1)).item() == 4
    report = dynamo.explain(outer)(torch.ones(1))  # traced into the caller's graph
    assert report.graph_count == 1 and not report.breaks, str(report)


def test_a_python_whose_bytecode_dynamo_does_not_know_is_refused_at_compile(monkeypatch) -> None:
    monkeypatch.setattr(dynamo.frontend, "PYTHONS", ())
    with pytest.raises(RuntimeError, match=r"supports Python 3\.11 and 3\.12, not 3\."):
        dynamo.compile(lambda x: x + 1)


def test_a_tensor_indexed_by_a_changing_int_and_a_changing_shape_tuple_compile_twice() -> None:
    """`schedule[t]` of an int timestep is traced as `select` (indexing would specialise it), so
    is `x[:, t]`; a shape tuple whose ints change is read item by item from then on."""
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    schedule = torch.linspace(0.99, 0.01, 100)

    def step(x, t):
        return x * schedule[t].sqrt() + x[t % 4]

    def reshaped(x, shape):
        return x.reshape(shape) * 2

    def columns(x, i):  # symbols among other indices: selected, dim by dim
        return x[:, i] + x[..., i, 1:].sum() + x[None, i, 0, None].sum() + x[1, ..., -i].sum()

    for fn, calls in ((step, [(torch.randn(4, 3), t) for t in range(99, 30, -7)]),
                      (columns, [(torch.randn(5, 6, 7), i) for i in (2, 3, 4, 1)]),
                      (reshaped, [(torch.randn(48), (n, 48 // n)) for n in (2, 3, 4, 6, 8, 12)]),
                      (reshaped, [(torch.randn(48), torch.Size([n, 48 // n])) for n in (2, 3, 4)])):
        graphs.clear()
        dynamo.reset()
        compiled = dynamo.compile(fn, backend=backend)
        for args in calls:
            torch.testing.assert_close(compiled(*args), fn(*args))
        assert len(graphs) == 2, fn


def test_compiled_code_called_from_compiled_code_is_traced_into_the_callers_graph() -> None:
    model = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
    inner = dynamo.compile(model)

    @dynamo.compile
    def activation(x):
        return x.sin() + 1

    def step(x):
        return F.mse_loss(activation(inner(x)), torch.zeros_like(x))

    x = torch.randn(2, 4)
    torch.testing.assert_close(dynamo.compile(step, fullgraph=True)(x), step(x))
    report = dynamo.explain(step)(x)
    assert report.graph_count == 1 and not report.breaks, str(report)
    assert report.ops_per_graph == [["linear", "relu", "sin", "add", "zeros_like", "mse_loss"]]

    def handed_on(x):  # as a value, the wrappers stay themselves
        return inner(x), inner, activation

    _, got_inner, got_activation = dynamo.compile(handed_on)(x)
    assert got_inner is inner and got_activation is activation


def test_dynamic_shapes_share_one_graph() -> None:
    compiled = dynamo.compile(lambda x: x.view(-1, 2).sum(1) * x.shape[0], dynamic=True)
    for n in (4, 6, 8):
        x = torch.randn(n, 2)
        torch.testing.assert_close(compiled(x), x.view(-1, 2).sum(1) * n)
    assert len(compiled.cache) == 1


def test_mark_dynamic() -> None:
    compiled = dynamo.compile(lambda x: x * 2)
    for n in (3, 5, 7):
        x = torch.randn(n, 4)
        dynamo.mark_dynamic(x, 0)
        torch.testing.assert_close(compiled(x), x * 2)
    assert len(compiled.cache) == 1
    compiled(torch.randn(3, 5))  # dim 1 stays static: a new size there recompiles
    assert len(compiled.cache) == 2


def test_marks_count_dims_from_the_end_too() -> None:
    shapes = []

    def recording(gm, inputs):
        shapes.append([tuple(n.meta["example_value"].shape) for n in gm.graph.nodes
                       if n.op == "placeholder"])
        return gm.forward

    x = torch.randn(4, 3)
    dynamo.mark_static(x, -1)
    dynamo.compile(lambda x: x.sin(), backend=recording, dynamic=True)(x)
    assert shapes[-1][0][1] == 3 and not isinstance(shapes[-1][0][0], int)
    y = torch.randn(4, 3)
    dynamo.mark_dynamic(y, -3)  # not a dim of y: ignored, as an index past its rank is
    compiled = dynamo.compile(lambda x: x.sin() + x.shape[1], fullgraph=True)
    torch.testing.assert_close(compiled(y), y.sin() + 3)


def test_shape_guards_from_branches_recompile() -> None:
    def f(x):
        return x * 2 if x.shape[0] > 4 else x - 1

    compiled = dynamo.compile(f, dynamic=True)
    for n in (6, 8, 3, 2):
        x = torch.randn(n)
        torch.testing.assert_close(compiled(x), f(x))
    assert len(compiled.cache) == 2


def test_backends_by_name_callable_and_registry() -> None:
    assert {"eager", "aot_eager"} <= set(dynamo.list_backends())
    seen = []

    @dynamo.register_backend("recording")
    def recording(gm, inputs):
        seen.append(len(inputs))
        return gm.forward

    assert dynamo.compile(lambda x, y: x + y, backend="recording")(
        torch.ones(1), torch.ones(1)).item() == 2
    assert seen == [2]
    with pytest.raises(ValueError, match="unknown backend"):
        dynamo.compile(lambda x: x, backend="no-such-backend")

    @dynamo.register_backend  # bare, as torch's: under the function's own name
    def bare_recording(gm, inputs):
        seen.append(-len(inputs))
        return gm.forward

    assert bare_recording.__name__ == "bare_recording" and callable(bare_recording)
    assert dynamo.compile(lambda x: x + 1, backend="bare_recording")(torch.ones(1)).item() == 2
    assert seen == [2, -1]
    with pytest.raises(TypeError, match="the name must be a string"):
        dynamo.register_backend(5, bare_recording)
    with pytest.raises(TypeError, match="must be callable"):
        dynamo.register_backend("three", 3)
    with pytest.raises(ValueError, match="'eager' is already registered"):
        dynamo.register_backend("eager", bare_recording)  # (torch refuses it too)
    dynamo.register_backend("bare_recording", bare_recording)  # the same one again: fine


def test_a_backend_whose_graph_returns_something_else_is_named() -> None:
    """Not the graph's outputs in a list or tuple: a warning in words and eager's answer (an
    int failed in the generated code's indexing; a longer list dropped outputs)."""
    for returned in (5, [torch.ones(1), torch.ones(1)]):
        compiled = dynamo.compile(lambda x: x + 1, backend=lambda gm, inputs, r=returned:
                                  (lambda *args: r))
        with pytest.warns(UserWarning, match="not the graph's 1 outputs in a list or tuple"):
            torch.testing.assert_close(compiled(torch.zeros(2)), torch.ones(2))


def test_a_backend_whose_graph_returns_other_tensors_is_named() -> None:
    """An int, or a tensor of other sizes, for the graph's tensor: the user got it silently."""
    for returned, words in ((lambda *args: [3], "output 0 is int, not a tensor"),
                            (lambda *args: [torch.ones(2)], "of sizes (2,)")):
        compiled = dynamo.compile(lambda x: x + 1, backend=lambda gm, inputs, r=returned: r)
        with pytest.warns(UserWarning, match=re.escape(words)):
            torch.testing.assert_close(compiled(torch.zeros(4)), torch.ones(4))
        strict = dynamo.compile(lambda x: x + 2, backend=lambda gm, inputs, r=returned: r,
                                raise_backend_errors=True)
        with pytest.raises(dynamo.BackendError, match=re.escape(words)):
            strict(torch.zeros(4))


def test_wrong_outputs_of_a_graph_that_writes_an_input_are_a_backend_error() -> None:
    """The frame cannot run again (the write may have happened): a BackendError in words, not
    dynamo's internal BadGraphOutputs."""
    def f(x):
        x.add_(1)
        return x.sin()

    compiled = dynamo.compile(f, backend=lambda gm, inputs: (lambda *args: [3]))
    with pytest.raises(dynamo.BackendError, match="backend '<lambda>' on the graph of "
                       "test_wrong_outputs_of_a_graph_that_writes_an_input_are_a_backend_error"
                       r".<locals>.f: .*output 0 is int, not a tensor"):
        compiled(torch.zeros(3))


def test_fullgraph_of_a_generator_function_says_it_captures_nothing() -> None:
    """Calling a generator function runs none of its body: under fullgraph=True that is an
    error (as torch.compile's), and explain says why nothing was captured."""
    def gen(x):
        yield x + 1

    with pytest.raises(dynamo.Unsupported, match="gen, a generator function: calling it only makes"):
        dynamo.compile(gen, fullgraph=True)(torch.zeros(1))
    assert torch.equal(next(dynamo.compile(gen)(torch.zeros(1))), torch.ones(1))
    report = dynamo.explain(gen)(torch.zeros(1))
    assert report.graph_count == 0 and "a generator function" in report.eager[0]


def test_fullgraph_at_the_cache_size_limit_raises() -> None:
    compiled = dynamo.compile(lambda x, tag: x + int(tag[1:]), fullgraph=True)
    x = torch.zeros(1)
    for n in range(dynamo.frontend.CACHE_SIZE_LIMIT):
        assert compiled(x, f"t{n}").item() == n
    with pytest.raises(dynamo.Unsupported, match="cache size limit, and fullgraph=True"):
        compiled(x, "t100")


def test_failing_backend_falls_back_with_a_warning() -> None:
    def broken(gm, inputs):
        raise RuntimeError("boom")

    compiled = dynamo.compile(lambda x: x + 1, backend=broken)
    with pytest.warns(UserWarning, match="boom"):
        assert compiled(torch.zeros(1)).item() == 1
    strict = dynamo.compile(lambda x: x + 2, backend=broken, raise_backend_errors=True)
    with pytest.raises(dynamo.BackendError, match=r"backend 'broken' failed on the graph of "
                                                  r".*<lambda> \(RuntimeError: boom\)"):
        strict(torch.zeros(1))


def test_a_compiled_graph_that_raises_where_the_captured_graph_does_not_is_the_backends_fault(
        ) -> None:
    """A backend whose compiled graph raises at run time: the captured graph, run on the same
    inputs, does not, so the error is the backend's (it was taken for the data's: the frame ran
    eagerly on every call, silently, and `raise_backend_errors` did not raise)."""
    calls = []

    def raising(gm, inputs):
        def run(*args):
            calls.append(1)
            raise ZeroDivisionError("kernel bug")
        return run

    compiled = dynamo.compile(lambda x: x + 1, backend=raising)
    with pytest.warns(UserWarning, match="kernel bug, where the captured graph does not"):
        assert compiled(torch.zeros(1)).item() == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once: the captured graph runs in its place now
        assert compiled(torch.ones(1)).item() == 2
    assert len(calls) == 1
    strict = dynamo.compile(lambda x: x + 2, backend=raising, raise_backend_errors=True)
    with pytest.raises(dynamo.BackendError, match="ZeroDivisionError: kernel bug"):
        strict(torch.zeros(1))


def test_an_error_of_the_data_still_runs_the_frame_eagerly_with_no_warning() -> None:
    def pick(x, i):
        return x[i] * 2

    compiled = dynamo.compile(pick, backend=lambda gm, inputs: gm.forward.__call__,
                              raise_backend_errors=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert compiled(torch.arange(3.0), 1).item() == 2
        with pytest.raises(IndexError):  # the captured graph raises too: eager's error
            compiled(torch.arange(3.0), torch.tensor(5))


def test_every_builtin_compiled_has_a_cache_of_its_own(recwarn) -> None:
    import operator

    ops = [operator.add, operator.sub, operator.mul, operator.truediv, torch.add, torch.sub,
           torch.mul, torch.maximum, torch.minimum, torch.atan2]
    x, y = torch.rand(3) + 1, torch.rand(3) + 1
    for op in ops:
        torch.testing.assert_close(dynamo.compile(op)(x, y), op(x, y))
    assert not [w for w in recwarn if "cache size limit" in str(w.message)]


def test_a_builtin_compiled_again_reuses_its_cache() -> None:
    from dynamo import frontend

    compiles = []

    def backend(gm, example_inputs):
        compiles.append(gm)
        return gm

    x = torch.rand(3)
    before = len(frontend._caches)
    for _ in range(5):
        torch.testing.assert_close(dynamo.compile(torch.cos, backend=backend)(x), x.cos())
    assert len(compiles) == 1 and len(frontend._caches) == before + 1
    tensors = [torch.rand(3) for _ in range(10)]  # one name, other builtins: told apart
    for t in tensors:
        torch.testing.assert_close(dynamo.compile(t.add, backend=backend)(x), t + x)


@pytest.mark.parametrize("mark", [dynamo.mark_dynamic, dynamo.mark_static])
def test_marking_dims_refuses_what_is_not_a_tensor_and_dims(mark) -> None:
    with pytest.raises(TypeError, match="marks a dim of a tensor, not of int"):
        mark(3, 0)
    for dims in (None, 1.0, "a", [0, "b"]):
        with pytest.raises(TypeError, match="dim must be an int or a list of ints"):
            mark(torch.ones(2, 2), dims)
    import numpy as np

    marked = torch.ones(2, 2)
    mark(marked, np.int64(1))  # an int of numpy's is an int
    assert 1 in getattr(marked, "_dynamo_dynamic_dims", getattr(marked, "_dynamo_static_dims", ()))


def test_a_backend_that_returns_no_callable_is_a_failing_backend() -> None:
    for returned in (None, 42):
        compiled = dynamo.compile(lambda x: x + 1, backend=lambda gm, inputs: returned)  # noqa: B023
        with pytest.warns(UserWarning, match=f"it returned {returned}, not a callable"):
            assert compiled(torch.zeros(1)).item() == 1
        strict = dynamo.compile(lambda x: x + 2, backend=lambda gm, inputs: returned,  # noqa: B023
                                raise_backend_errors=True)
        with pytest.raises(dynamo.BackendError, match="not a callable"):
            strict(torch.zeros(1))


def test_compiling_what_compile_returned_compiles_the_original_with_the_new_backend() -> None:
    seen = []

    def recording(gm, inputs):
        seen.append(gm)
        return gm.forward

    def f(x):
        return x * 2

    class Stepper:
        @dynamo.compile
        def step(self, x):
            return x + 1

    again = dynamo.compile(dynamo.compile(f), backend=recording, fullgraph=True)
    assert again(torch.ones(2)).tolist() == [2, 2] and len(seen) == 1
    method = dynamo.compile(Stepper().step, backend=recording, fullgraph=True)
    assert method(torch.ones(2)).tolist() == [2, 2] and len(seen) == 2


def test_aot_eager_on_a_model() -> None:
    m = nn.Sequential(nn.Linear(4, 4), nn.GELU(), nn.LayerNorm(4))
    compiled = dynamo.compile(m, backend="aot_eager", fullgraph=True)
    x = torch.randn(2, 4)
    torch.testing.assert_close(compiled(x), m(x))


def test_aot_eager_keeps_ints_that_cross_a_break_symbolic() -> None:
    def f(x):
        for i in range(4):
            x = x * 2 + i
            print(end="")
        return x

    compiled = dynamo.compile(f, backend="aot_eager")
    x = torch.randn(3)
    torch.testing.assert_close(compiled(x), f(x))


def test_aot_eager_lowers_on_the_frontends_symbols() -> None:
    """A dynamic size that equals a static one at the first call (batch 2, sequence length 2)
    is not the same size in the aten graph: it is lowered on the frontend's fakes, whose guards
    hold for every later call (on real inputs, equal sizes shared one symbol, unguarded)."""
    def causal(x):
        t = x.shape[1]
        return x.sum(1) + torch.ones(t, t).tril().sum()

    compiled = dynamo.compile(causal, backend="aot_eager", raise_backend_errors=True)
    for t in (1, 2, 5, 7):
        x = torch.randn(2, t)
        torch.testing.assert_close(compiled(x), causal(x))

    def mean(x):
        return x / x.numel()

    compiled = dynamo.compile(mean, backend="aot_eager", raise_backend_errors=True)
    for n in (3, 5, 8):
        x = torch.randn(n, 3)
        dynamo.mark_dynamic(x, 0)
        torch.testing.assert_close(compiled(x), mean(x))
    assert len(compiled.cache) == 1


def test_aot_eager_on_an_input_transposed_in_place() -> None:
    def f(x, y):
        x.t_()
        return x * 2, torch.arange(y.shape[0]) * 1.0 + x.shape[0]

    compiled = dynamo.compile(f, backend="aot_eager")
    for n in (3, 5, 7):  # static, then a symbolic length (which aot_eager leaves to eager)
        a, y = torch.randn(3, 4), torch.randn(n)
        b = a.clone()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = compiled(a, y)
        for g, e in zip(got, f(b, y)):
            torch.testing.assert_close(g, e)
        assert a.shape == b.shape == (4, 3)


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_a_write_through_data_leaves_the_version_counter_as_eager_does(backend) -> None:
    """`x.data` has a version counter of its own: backward through a tensor that saved `x`
    runs after `x.data.mul_(2)` (aot_eager lowered `.data` as `aten.detach`, which shares the
    counter, and inductor_lite moves the counters of the inputs it writes: backward failed)."""
    def f(x):
        x.data.mul_(2)
        return x + 1

    compiled = dynamo.compile(f, backend=backend)
    for requires_grad in (True, False):
        a = torch.randn(3, requires_grad=True)
        x = torch.randn(3, requires_grad=requires_grad)
        expected = x.detach() * 2
        loss = (a * x).sum()  # saves x
        with torch.no_grad():
            compiled(x)
        assert x._version == 0
        torch.testing.assert_close(x.detach(), expected)
        loss.backward()
        torch.testing.assert_close(a.grad, expected)  # (x as it is now, as in eager)


def test_a_call_with_missing_arguments_fails_as_eager_does() -> None:
    def f(x, log):
        return x

    with pytest.raises(TypeError) as eager:
        f(torch.ones(1))
    with pytest.raises(TypeError) as compiled:
        dynamo.compile(f)(torch.ones(1))
    assert str(compiled.value) == str(eager.value)  # "....<locals>.f() missing 1 required ..."


def test_aliased_inputs_are_guarded() -> None:
    def f(a, b):
        a.add_(1)
        return a + b

    compiled = dynamo.compile(f)
    x, y = torch.zeros(2), torch.zeros(2)
    assert compiled(x, y).tolist() == [1.0, 1.0]
    z = torch.zeros(2)
    assert compiled(z, z).tolist() == [2.0, 2.0]
    assert len(compiled.cache) == 2


def test_submodule_containers() -> None:
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.ModuleList(nn.Linear(4, 4) for _ in range(3))
            self.heads = nn.ModuleDict({"a": nn.Linear(4, 1), "b": nn.Linear(4, 2)})

        def forward(self, x):
            for i, block in enumerate(self.blocks):
                x = F.relu(block(x)) + i
            return {name: head(x) for name, head in self.heads.items()}, self.blocks[-1](x)

    m = Net()
    compiled = dynamo.compile(m, fullgraph=True)
    x = torch.randn(2, 4)
    torch.testing.assert_close(compiled(x), m(x))
    m.blocks.append(nn.Linear(4, 4))
    torch.testing.assert_close(compiled(x), m(x))


def test_backends_from_the_entry_point_group(monkeypatch) -> None:
    from importlib.metadata import EntryPoint

    import dynamo.backends

    point = EntryPoint(name="ep_eager", value="dynamo.backends:eager", group="dynamo.backends")
    monkeypatch.setattr(dynamo.backends, "entry_points",
                        lambda group: [point] if group == "dynamo.backends" else [])
    monkeypatch.setattr(dynamo.backends, "_REGISTRY", dict(dynamo.backends._REGISTRY))
    assert "ep_eager" in dynamo.list_backends()
    assert dynamo.lookup_backend("ep_eager") is dynamo.backends.eager
    assert dynamo.compile(lambda x: x * 2, backend="ep_eager")(torch.ones(1)).item() == 2


def test_automatic_dynamic_compiles_a_changing_size_once_more_then_reuses_it() -> None:
    def f(x, y):
        return (x.view(-1, 4) * 2).sum(0) + y.sum()

    compiled = dynamo.compile(f)
    y = torch.randn(5)
    for rows in (2, 3, 6, 9):  # y keeps its size: only x's first dim becomes a symbol
        x = torch.randn(rows, 4)
        torch.testing.assert_close(compiled(x, y), f(x, y))
    assert len(compiled.cache) == 2
    second = compiled.cache.entries[1][0]
    assert not second.check({"x": torch.randn(3, 5), "y": y}, {})  # dim 1 stays static
    assert not second.check({"x": torch.randn(3, 4), "y": torch.randn(6)}, {})
    assert len(dynamo.compile(f, dynamic=False)(torch.randn(7, 4), y).shape) == 1


def test_reset_forgets_the_sizes_seen_to_change() -> None:
    compiled = dynamo.compile(lambda x: x * 2)
    for rows in (2, 3):
        compiled(torch.randn(rows))
    dynamo.reset()
    compiled(torch.randn(4))  # static again, as torch.compile after torch._dynamo.reset()
    assert not compiled.cache.entries[0][0].check({"x": torch.randn(5)}, {})


def test_automatic_dynamic_dims_equal_at_the_recompilation_stay_apart() -> None:
    # Both dims become symbols at the call of shape (4, 4): duck sizing tied them (one
    # symbol, guarded equal), so (4, 6) compiled again. torch.compile ties only under
    # dynamic=True.
    compiled = dynamo.compile(lambda x: x * 2)
    for shape in ((2, 3), (2, 5), (4, 4), (4, 6), (5, 7)):
        x = torch.randn(*shape)
        torch.testing.assert_close(compiled(x), x * 2)
    assert len(compiled.cache) == 3


def test_attributes_written_through_the_compiled_module_reach_the_original():
    class Scale(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.t = 1.0
            self.drop = torch.nn.Dropout(0.5)

        def forward(self, x):
            return self.drop(x) / self.t

    model = Scale()
    compiled = dynamo.compile(model, backend="eager")
    x = torch.ones(4)
    compiled.eval()
    assert not model.training and not model.drop.training and not compiled.training
    torch.testing.assert_close(compiled(x), x)
    compiled.t = 2.0  # torch.compile's OptimizedModule passes the write on as well
    assert model.t == 2.0
    torch.testing.assert_close(compiled(x), x / 2)
    compiled.extra = 3
    del compiled.extra
    assert not hasattr(model, "extra")


def test_a_float_passed_along_is_not_guarded_but_a_float_used_is_until_it_changes():
    def carry(x, value):
        return x + 1, [value, (value, 1)]  # only passed along: read from the frame every call

    def scale(x, value):
        return x * value  # used: its value is guarded, until it is seen to change

    carried = dynamo.compile(carry, backend="eager", fullgraph=True)
    scaled = dynamo.compile(scale, backend="eager", fullgraph=True)
    x = torch.ones(2)
    for value in (0.5, 0.25, 2.0):
        out, kept = carried(x, value)
        assert kept == [value, (value, 1)] and torch.equal(out, x + 1)
        assert torch.equal(scaled(x, value), x * value)
    assert len(carried.cache.entries) == 1 and len(scaled.cache.entries) == 2


TABLE = [10, 20, 30, 40, 50, 60, 70]


@pytest.mark.parametrize("use", [
    lambda x, n: sum((x + i for i in range(n)), x),
    lambda x, n: x * TABLE[n],
    lambda x, n: x[:n] * 2,
    lambda x, n: torch.arange(n) + x.sum(),
    lambda x, n: x.view(n, -1) * 2,
    lambda x, n: (x + 1, f"step {n}: {n * 2}"),
    lambda x, n: (x + len({n: "a", 5: "b"}), {n, 3} == {3, n}),
    lambda x, n: x + 1 if n % 3 == 0 else x - 1,
    lambda x, n: (x * (n / 2), n // 2, -n, abs(n - 5), max(n, 4), n ** 2, str(n), n in (3, 6)),
], ids=["range", "list index", "slice", "arange", "view", "f-string", "dict and set key",
        "modulo branch", "arithmetic"])
def test_an_int_compiled_as_a_symbol_serves_every_use(use) -> None:
    compiled = dynamo.compile(use)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # neither the cache limit nor an eager fallback
        for n in (2, 3, 4, 6, 3, 2):
            x = torch.randn(12)
            got, expected = compiled(x, n), use(x, n)
            got, expected = (got, expected) if isinstance(expected, tuple) else ((got,),
                                                                                   (expected,))
            for a, b in zip(got, expected, strict=True):
                if isinstance(b, torch.Tensor):
                    torch.testing.assert_close(a, b)
                else:
                    assert a == b and type(a) is type(b)


def test_ints_the_trace_only_passes_along_are_not_guarded_by_value() -> None:
    """Token ids in a list the code appends to and measures: another call's ids reuse the
    entry; an int the code computes with is guarded by value (a new value recompiles)."""
    def f(x, tokens, offsets):
        tokens.append(7)
        return x * len(tokens) + offsets[1], tokens[0]

    compiled = dynamo.compile(f, backend="eager", dynamic=False)
    for first in range(4):
        x, tokens, expected_tokens = torch.randn(2), [first, 5], [first, 5]
        expected = f(x, expected_tokens, [0, 1])
        assert compiled(x, tokens, [0, 1])[1] == expected[1]
        torch.testing.assert_close(compiled(x, [first, 5], [0, 1])[0], expected[0])
        assert tokens == expected_tokens
    assert len(compiled.cache.entries) == 1
    torch.testing.assert_close(compiled(x, [0, 5], [0, 4])[0], f(x, [0, 5], [0, 4])[0])
    assert len(compiled.cache.entries) == 2


def test_equal_int_arguments_are_not_assumed_equal() -> None:
    """Two int arguments made symbols at a call where they are equal are two symbols, not one
    (a guard `n == m` recompiled the next call where they differ)."""
    def f(x, n, m):
        return x[:n] * m

    compiled = dynamo.compile(f, backend="eager")
    x = torch.randn(8)
    for n, m in ((3, 4), (5, 5), (6, 7), (2, 3)):
        torch.testing.assert_close(compiled(x, n, m), f(x, n, m))
    assert len(compiled.cache.entries) == 2


def test_compile_takes_a_builtin_function() -> None:
    """A function written in C has no frame: a Python function calling it is compiled."""
    x = torch.randn(3)
    for builtin, expected in ((torch.nn.functional.gelu, torch.nn.functional.gelu(x)),
                              (torch.Tensor.relu, x.relu())):
        torch.testing.assert_close(dynamo.compile(builtin, fullgraph=True)(x), expected)
    with pytest.raises(TypeError, match="Python function or nn.Module"):
        dynamo.compile(int)


def test_compile_takes_a_partial_and_a_callable_object() -> None:
    import functools

    def scale(x, factor, *, shift):
        return x * factor + shift

    class Scale:
        def __init__(self, factor):
            self.factor = factor

        def __call__(self, x):
            return x * self.factor

    x = torch.randn(3)
    partial = functools.partial(scale, factor=2.0, shift=1.0)
    torch.testing.assert_close(dynamo.compile(partial, fullgraph=True)(x), partial(x))
    obj = Scale(3.0)
    compiled = dynamo.compile(obj, fullgraph=True)
    torch.testing.assert_close(compiled(x), obj(x))
    obj.factor = 4.0  # read through the object: guarded
    torch.testing.assert_close(compiled(x), obj(x))

    class Static:
        @staticmethod
        def __call__(x):
            return x + 1

    class Compiled:
        def __init__(self, factor):
            self.factor = factor

        @dynamo.compile
        def __call__(self, x):
            return x * self.factor

    for obj in (Static(), Compiled(3.0)):  # (a TypeError, where torch.compile takes both)
        torch.testing.assert_close(dynamo.compile(obj)(x), obj(x))


def test_a_compiled_partial_or_callable_object_is_what_it_wraps() -> None:
    """`explain` of, `compile` of, and a compiled frame calling, what `compile` returned for a
    partial or a callable object: the partial or object itself (dynamo's own wrappers around
    them were traced: `compile` itself, at the object's first call, six breaks inside the
    frontend, `Unsupported` under fullgraph; explain found no graphs)."""
    import functools

    class Scale:
        def __init__(self, factor):
            self.factor = factor

        def __call__(self, x):
            y = x.sin()
            print(end="")
            return y * self.factor

    def scale(x, factor):
        y = x.sin()
        print(end="")
        return y * factor

    x = torch.randn(3)
    for make in (lambda: Scale(2.0), lambda: functools.partial(scale, factor=2.0)):
        report = dynamo.explain(dynamo.compile(make()))(x)
        assert (report.graph_count, report.graph_break_count) == (2, 1), str(report)
        assert all(b.filename == __file__ for b in report.breaks), str(report)
        graphs = []
        compiled = dynamo.compile(make())
        again = dynamo.compile(compiled, backend=lambda gm, _, g=graphs: g.append(gm) or gm.forward)
        torch.testing.assert_close(again(x), x.sin() * 2.0)  # what it wraps, this backend
        assert len(graphs) == 2

    class Plain:
        def __init__(self, factor):
            self.factor = factor

        def __call__(self, x):
            return x.sin() * self.factor

    obj = Plain(2.0)
    inner = dynamo.compile(obj)  # never called on its own

    def outer(x):
        return inner(x) + 1

    graphs = []
    compiled = dynamo.compile(outer, backend=lambda gm, _: graphs.append(gm) or gm.forward,
                              fullgraph=True)
    torch.testing.assert_close(compiled(x), x.sin() * 2.0 + 1)
    obj.factor = 3.0  # read through the object: guarded
    torch.testing.assert_close(compiled(x), x.sin() * 3.0 + 1)
    assert len(graphs) == 2


def test_a_function_carrying_a_signature_is_bound_by_its_code() -> None:
    """A decorator's `__signature__` names the wrapped function's parameters, not the ones
    the frame is bound by."""
    import inspect

    def wrapped(x, y=2.0):
        return x * y

    def wrapper(*args, **kwargs):
        return wrapped(*args, **kwargs) + 1

    wrapper.__signature__ = inspect.signature(wrapped)
    x = torch.randn(3)
    compiled = dynamo.compile(wrapper, fullgraph=True)
    torch.testing.assert_close(compiled(x), wrapper(x))
    torch.testing.assert_close(compiled(x, y=3.0), wrapper(x, y=3.0))


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_an_unused_random_op_still_advances_the_generator(backend: str) -> None:
    def f(x):
        torch.rand(3)  # unused, but later random numbers depend on it
        torch.nn.functional.dropout(x, 0.5)
        return x * torch.rand(3)

    x = torch.ones(3)
    torch.manual_seed(0)
    expected = f(x)
    torch.manual_seed(0)
    assert torch.equal(dynamo.compile(f, backend=backend)(x), expected)


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_an_unused_op_on_a_symbolic_int_still_raises_eagers_error(backend: str) -> None:
    """Its error depends on the int's value at run time, which the trace did not see: the op
    stays in the graph (eager: OverflowError for `k` past int64, RuntimeError for a size
    whose storage overflows), and in aot_eager's aten graph too (make_fx dropped it)."""
    def add(x, k):
        unused = x + k  # noqa: F841
        return x * 2

    def zeros(x, k):
        unused = torch.zeros(k)  # noqa: F841
        return x * 2

    x = torch.ones(2)
    for f, big, error in ((add, 2**70, OverflowError), (zeros, 2**62, RuntimeError)):
        compiled = dynamo.compile(f, backend=backend)
        for k in (3, 4):  # the second call makes `k` a symbol
            torch.testing.assert_close(compiled(x, k), f(x, k))
        with pytest.raises(error):
            f(x, big)
        with pytest.raises(error):
            compiled(x, big)


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_a_graph_that_draws_then_raises_reruns_with_the_generator_rewound(backend: str) -> None:
    """The frame reruns eagerly after its graph raised: it draws the graph's numbers again,
    as eager draws them once (multinomial of all -inf logits raises)."""
    def sample(logits):
        noise = torch.rand(3)
        try:
            token = torch.multinomial(torch.softmax(logits, -1), 1)
        except RuntimeError:
            token = logits.argmax(-1, keepdim=True)
        return token, noise

    logits = torch.full((2, 5), float("-inf"))
    torch.manual_seed(0)
    expected = sample(logits), torch.rand(1)
    torch.manual_seed(0)
    got = dynamo.compile(sample, backend=backend)(logits), torch.rand(1)
    torch.testing.assert_close(got, expected)


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_multi_head_attention_with_dropout_counts_as_drawing(backend: str) -> None:
    """`F.multi_head_attention_forward` is one node (torch's Python kept whole) that calls
    dropout inside: unused, it is kept; a graph that runs it and then raises reruns with the
    generator rewound (it drew twice: every later random number differed from eager's)."""
    torch.manual_seed(0)
    mha = nn.MultiheadAttention(4, 1, dropout=0.5)

    def unused(q):
        mha(q, q, q)
        return q * 2

    def then_raises(q, i):
        return mha(q, q, q)[0] + q[i]

    q = torch.ones(3, 1, 4)
    torch.manual_seed(0)
    unused(q)
    expected = torch.rand(3)
    torch.manual_seed(0)
    dynamo.compile(unused, backend=backend)(q)
    assert torch.equal(torch.rand(3), expected)

    compiled = dynamo.compile(then_raises, backend=backend)
    results = []
    for fn in (then_raises, compiled):
        torch.manual_seed(0)
        fn(q, torch.tensor([0]))
        with pytest.raises(IndexError):
            fn(q, torch.tensor([9]))
        results.append((fn(q, torch.tensor([1])), torch.rand(3)))
    torch.testing.assert_close(results[1], results[0], rtol=0, atol=0)


def test_a_symbolic_int_indexes_modules_objects_and_slices_constants() -> None:
    """Once an int argument is a symbol: a ModuleList, a user object and a constant string or
    tuple indexed or sliced by it (each specialises it where it must, no break)."""
    torch.manual_seed(0)
    layers = nn.ModuleList(nn.Linear(4, 4) for _ in range(4))

    class Table:
        def __getitem__(self, i):
            return i * 10

    table = Table()

    def f(x, n):
        return layers[n](x) + table[n], "abcdef"[n:], (1, 2, 3, 4)[:n], range(10)[n:]

    compiled = dynamo.compile(f, backend="eager", fullgraph=True)
    x = torch.randn(2, 4)
    for n in (0, 1, 2, 3, 1):
        got, want = compiled(x, n), f(x, n)
        torch.testing.assert_close(got[0], want[0])
        assert got[1:] == want[1:]


def test_a_users_mode_sees_only_the_frames_ops() -> None:
    """Under a user's TorchFunctionMode or TorchDispatchMode, or one entered in the frame, the
    frame runs eagerly: the trace would run its fakes through the mode and drop what it does."""
    from torch.overrides import TorchFunctionMode
    from torch.utils._python_dispatch import TorchDispatchMode

    class Shifting(TorchDispatchMode):
        seen: list = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            Shifting.seen.append(func)
            out = func(*args, **(kwargs or {}))
            return out + 100 if func is torch.ops.aten.add.Tensor else out

    class Logging(TorchFunctionMode):
        seen: list = []

        def __torch_function__(self, func, types, args=(), kwargs=None):
            Logging.seen.append(func)
            return func(*args, **(kwargs or {}))

    def inside(x):
        with Shifting():
            y = torch.add(x, 1)
        return y * 2

    def around(x):
        return torch.add(x, 1).sin()

    compiled = dynamo.compile(inside)
    for _ in range(2):
        assert compiled(torch.zeros(2)).tolist() == [202, 202]
    compiled, x = dynamo.compile(around), torch.zeros(2)
    compiled(x)  # an entry, compiled with no mode on: under one, not used
    for mode in (Shifting, Logging):
        mode.seen = []
        with mode():
            compiled(x)
        seen, mode.seen = mode.seen, []
        with mode():
            around(x)
        assert seen == mode.seen and len(seen) == 2
        with mode():  # explain says why nothing was captured
            report = dynamo.explain(around)(x)
        assert report.graph_count == 0 and "TorchDispatchMode was active" in report.eager[0]


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_the_generators_state_read_in_the_frame_is_todays(backend: str) -> None:
    """`torch.get_rng_state()` is no op: in a graph, a backend's trace would keep the state it
    compiled with (a break at the call)."""
    def redraw(x):
        state = torch.get_rng_state()
        a = torch.rand(3)
        torch.set_rng_state(state)
        return x + a - torch.rand(3)

    compiled = dynamo.compile(redraw, backend=backend)
    for _ in range(3):
        assert torch.equal(compiled(torch.zeros(3)), torch.zeros(3))


def test_nested_and_quantized_inputs_are_named_in_the_reason() -> None:
    def double(x):
        return x * 2

    nested = torch.nested.nested_tensor([torch.randn(2), torch.randn(3)])
    quantized = torch.quantize_per_tensor(torch.randn(3), 0.1, 0, torch.quint8)
    for value, kind in ((nested, "nested"), (quantized, "quantized")):
        with pytest.raises(dynamo.Unsupported, match=f"L\\['x'\\] is a {kind} tensor"):
            dynamo.compile(double, fullgraph=True)(value)


def test_a_tensor_subclass_made_by_a_torch_function_breaks_the_graph() -> None:
    """`torch.masked.masked_tensor(x, m)` became a graph node whose value was a MaskedTensor of
    the trace's fakes: aot_eager raised MixedRealFakeError and inductor_lite returned a
    FakeTensor to the caller."""
    import warnings

    def total(x, m):
        return torch.masked.masked_tensor(x, m).sum().get_data()

    x, m = torch.randn(3, 4), torch.randn(3, 4) > 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = total(x, m)
        result = dynamo.compile(total, backend="aot_eager")(x, m)
    assert type(result) is torch.Tensor
    torch.testing.assert_close(result, expected)


def test_a_list_indexed_once_costs_guards_on_its_length_and_that_item() -> None:
    """Not on every item (10,000 token ids indexed once were 10,000 guards)."""
    def pick(x, ids):
        return x + ids[5] + ids[-1] + len(ids) + bool(ids)

    ids = list(range(1000))
    report = dynamo.explain(pick)(torch.zeros(1), ids)
    assert len(report.guards) < 12, report.guards
    compiled = dynamo.compile(pick)
    for changed in (ids, [*ids[:10], -1, *ids[11:]], [*ids[:5], 7, *ids[6:]], ids[:999],
                    [*ids[:999], 4.5]):
        torch.testing.assert_close(compiled(torch.zeros(1), changed), pick(torch.zeros(1), changed))
    assert len(compiled.cache) == 4  # an unread item changed: the same entry


def test_a_lambda_of_torchs_python_is_inlined_and_nonzero_static_is_traced() -> None:
    """A function of a `torch.*` module that fx cannot name there (a lambda, a closure) was a
    graph node whose code raised AttributeError on every call (the frame then ran eagerly);
    `t.nonzero_static(size=n)` has a fixed size, as `torch.nonzero_static` does."""
    double = lambda x: x * 2 + 1  # noqa: E731
    double.__module__ = "torch.nn.functional"
    failures = []

    def recording(gm, inputs):
        def run(*args):
            try:
                return gm.forward(*args)
            except Exception as error:
                failures.append(error)
                raise
        return run

    compiled = dynamo.compile(lambda x: double(x).nonzero_static(size=3), backend=recording,
                              fullgraph=True)
    x = torch.tensor([-0.5, 1.0, 2.0])
    assert torch.equal(compiled(x), double(x).nonzero_static(size=3)) and not failures


def test_tolist_of_a_symbolic_length_with_captured_scalars_specialises_the_length():
    # (it was a break, "reads the tensor's data", and under fullgraph an error)
    def fn(x):
        values = x.tolist()
        return x * values[0] + len(values)

    compiled = dynamo.compile(fn, backend="eager", fullgraph=True, dynamic=True,
                              capture_scalar_outputs=True)
    for x in (torch.tensor([1., 2.]), torch.tensor([3., 4.]), torch.tensor([3., 4., 5.])):
        torch.testing.assert_close(compiled(x), fn(x))


def test_disable_of_what_compile_returned_leaves_it_compiling() -> None:
    """`disable(compile(f))` marked `f` itself: the compiled `g` (and every compilation of `f`)
    ran eagerly from then on; `disable(compile(obj))` set an attribute on the user's object.
    torch.compiler.disable(g) leaves g compiling."""
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    class Scale:
        def __call__(self, x):
            return x * 3

    def f(x):
        return x.sin() + 1

    x = torch.randn(3)
    obj = Scale()
    for fn, expected in ((f, x.sin() + 1), (obj, x * 3)):
        compiled = dynamo.compile(fn, backend=backend)
        disabled = dynamo.disable(compiled)
        torch.testing.assert_close(disabled(x), expected)
        assert not graphs
        torch.testing.assert_close(compiled(x), expected)
        assert len(graphs) == 1
        graphs.clear()
    assert "_dynamo_disable" not in vars(obj) and not hasattr(f, "_dynamo_disable")
    # a compiled module: its module was marked, and the compiled module ran eagerly for good
    module = nn.Linear(3, 3)
    compiled = dynamo.compile(module, backend=backend)
    disabled = dynamo.disable(compiled)
    torch.testing.assert_close(disabled(x), module(x))
    assert not graphs
    torch.testing.assert_close(compiled(x), module(x))
    assert len(graphs) == 1
    assert not hasattr(module, "_dynamo_disable")


@pytest.mark.parametrize("dynamic", [False, True])
def test_a_negative_constant_base_of_pow_keeps_its_sign(dynamic: bool) -> None:
    # FX prints operator.pow(-2.0, y) as `-2.0 ** y`, which Python reads as -(2.0 ** y)
    def f(y):
        return (-2.0) ** y, (-0.0) ** y, float("-inf") ** y, (-2) ** y.long()

    def g(x):
        return x * ((-2) ** x.shape[0])

    y = torch.tensor([-2.0, 0.0, 1.0, 2.0, 2.5])
    compiled = dynamo.compile(f, backend="eager", fullgraph=True, dynamic=dynamic)
    for got, expected in zip(compiled(y), f(y)):
        torch.testing.assert_close(got, expected, equal_nan=True)
    compiled = dynamo.compile(g, backend="eager", fullgraph=True, dynamic=dynamic)
    for n in (3, 4):
        torch.testing.assert_close(compiled(torch.ones(n)), g(torch.ones(n)))


def test_a_power_of_a_captured_scalar_stays_in_the_graph() -> None:
    """`x.sum().item() ** 2` under capture_scalar_outputs: asking the base's sign, to keep
    a negative base's, was a break (no guard can decide a value read from a tensor)."""
    def f(x):
        s = x.sum().item()
        return x * s ** 2, x * s ** 0.5

    compiled = dynamo.compile(f, backend="eager", fullgraph=True, capture_scalar_outputs=True)
    for x in (torch.ones(3), torch.full((3,), 2.0)):
        for got, expected in zip(compiled(x), f(x)):
            torch.testing.assert_close(got, expected)


@pytest.mark.parametrize("use", [
    lambda x, n: (x + 1, ~n),
    lambda x, n: (x + 1, n.real, n.imag, n.numerator, n.denominator, n.conjugate()),
    lambda x, n: (x + 1, (n / 2).real, (n / 2).imag, (n / 2).conjugate()),
    lambda x, n: (x + 1, pow(n, 2, 7), pow(n, 3, -5)),
    lambda x, n: (x + 1, n ** -1, n ** -2, n ** 3.0, (n / 2) ** -1),
    lambda x, n: (x + 1, complex(1, 2), float.fromhex("0x1.8p1"), int.from_bytes(b"\1\2", "big")),
], ids=["invert", "real", "float real", "pow with modulus", "negative base", "constants"])
def test_python_number_operations_on_an_int_symbol_stay_in_one_graph(use) -> None:
    """Operations torch's SymInt lacks (`~n`, `pow(n, e, m)`, `n.real`) or restricts (its
    float power requires a base >= 0) are Python's, with no break."""
    compiled = dynamo.compile(use, backend="eager", fullgraph=True)
    x = torch.zeros(2)
    for n in (5, -7, 1, -1, 3, -3, 2**40, -2**40 - 1, 12):
        got, expected = compiled(x, n)[1:], use(x, n)[1:]
        assert [(type(g), repr(g)) for g in got] == [(type(e), repr(e)) for e in expected]
    assert len(compiled.cache.entries) <= 3


def test_an_int_symbol_in_a_complex_names_the_break() -> None:
    compiled = dynamo.compile(lambda x, n: (x + 1, complex(n, 1)), backend="eager",
                              fullgraph=True)
    compiled(torch.zeros(2), 1)
    with pytest.raises(dynamo.exc.Unsupported, match="complex\\(\\) of a symbolic number"):
        compiled(torch.zeros(2), 2)


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_as_subclass_to_a_plain_tensor_is_an_alias(backend) -> None:
    """`t.as_subclass(torch.Tensor)` is a view of the same data in the autograd graph (the
    class was an argument of the graph's node: its code did not compile, a SyntaxError)."""
    def f(x):
        return (x * 2).as_subclass(torch.Tensor).sin()

    x = torch.randn(3, requires_grad=True)
    got = dynamo.compile(f, backend=backend, fullgraph=True)(x)
    torch.testing.assert_close(got, f(x))
    got.sum().backward()
    torch.testing.assert_close(x.grad, 2 * torch.cos(2 * x.detach()))


def test_a_function_attribute_named_like_the_wrappers_state_does_not_replace_it() -> None:
    """`compile` copied the function's `__dict__` over its own state: a decorator's
    `wrapper.fn = fn` made it compile the undecorated function (the decorator's work lost),
    and a `step` attribute replaced the method that runs the frame."""
    import functools

    def decorated(fn):
        @functools.wraps(fn)
        def wrapper(x):
            return fn(x) + 100
        wrapper.fn = fn
        wrapper.step = "a step"
        wrapper.calls = 0
        return wrapper

    @decorated
    def f(x):
        return x * 2

    x = torch.randn(3)
    compiled = dynamo.compile(f, backend="eager")
    torch.testing.assert_close(compiled(x), x * 2 + 100)
    assert compiled.calls == 0 and compiled.__wrapped__ is f and compiled.__name__ == "f"


def test_compile_takes_callables_written_in_c() -> None:
    """An `lru_cache`d function or an `operator.methodcaller` was a TypeError (torch.compile
    takes any callable)."""
    import functools
    import operator

    @functools.lru_cache
    def double(x):
        return x * 2

    x = torch.randn(3)
    torch.testing.assert_close(dynamo.compile(double, backend="eager", fullgraph=True)(x), x * 2)
    torch.testing.assert_close(dynamo.compile(operator.methodcaller("sin"))(x), x.sin())
    with pytest.raises(TypeError, match="needs a Python function"):
        dynamo.compile(3)


class _WithCompiledMethod:
    def __init__(self, k):
        self.k = k

    @dynamo.compile
    def scale(self, x):
        return x * self.k


def test_compile_of_a_compiled_method_read_from_its_object_pickles() -> None:
    """It pickled as `getattr(obj, "scale")`, which reads the compiled method back: loading it
    raised TypeError (`needs a Python function ... not CompiledFunction`)."""
    import pickle

    x = torch.randn(3)
    compiled = dynamo.compile(_WithCompiledMethod(3).scale)
    loaded = pickle.loads(pickle.dumps(compiled))
    torch.testing.assert_close(loaded(x), x * 3)
    assert loaded.bound_self is not compiled.bound_self


def test_compiled_function_attributes_are_the_wrappers():
    def h(x):
        return x + (H.k if hasattr(H, "k") else 100), getattr(H, "k", -1)

    H = dynamo.compile(h)
    H.k = 1
    use = dynamo.compile(lambda x: (x + (H.k if hasattr(H, "k") else 100), getattr(H, "k", -1)))
    assert use(torch.ones(1))[1] == 1
    del H.k
    assert use(torch.ones(1))[1] == -1


def test_compiled_function_counter_attribute():
    @dynamo.compile
    def f(x):
        if not hasattr(f, "calls"):
            f.calls = 0
        f.calls += 1
        return x + f.calls

    assert [f(torch.ones(1)).item() for _ in range(3)] == [2.0, 3.0, 4.0]


def test_a_module_whose_forward_is_a_staticmethod_is_called_without_self() -> None:
    """`forward = staticmethod(fn)`: compiled, the module calls `fn(x)` as eager does (it was
    given the module as well: a TypeError, or the module taken for `x`)."""
    def double(x):
        return x * 2

    class Static(torch.nn.Module):
        forward = staticmethod(double)

    m, x = Static(), torch.randn(3)
    torch.testing.assert_close(dynamo.compile(m, backend="eager")(x), m(x))
