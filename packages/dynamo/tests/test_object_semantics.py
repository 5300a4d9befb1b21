"""Python's own meaning of comparisons, attribute lookups and displays, kept by the trace: each
case once gave a wrong or stale answer (the first call or a later call with a changed input)."""

from __future__ import annotations

import collections
import dataclasses
import enum
import io
import warnings

import numpy as np
import pytest
import torch
import torch.nn as nn
from counting import counting_backend

import dynamo


def _agree(fn, *calls, **options) -> None:
    """Call `fn` compiled and plain on each argument tuple in turn: same answers every time."""
    dynamo.reset()
    compiled = dynamo.compile(fn, **options)
    for args in calls:
        _same(compiled(*args), fn(*args))


def _same(got, expected) -> None:
    if isinstance(expected, (tuple, list)):
        assert type(got) is type(expected) and len(got) == len(expected)
        for g, e in zip(got, expected):
            _same(g, e)
    elif isinstance(expected, dict):
        assert got.keys() == expected.keys()
        for k in expected:
            _same(got[k], expected[k])
    elif isinstance(expected, torch.Tensor):
        torch.testing.assert_close(got, expected)
    else:
        assert type(got) is type(expected) and got == expected, (got, expected)


@dataclasses.dataclass
class Cfg:
    act: str


class Mode(enum.Enum):
    TRAIN = 1
    EVAL = 2


class Option:
    pass


DEFAULT = Option()


def test_equality_of_objects_uses_their_eq() -> None:
    def f(x, a, b):
        return x * (2 if a == b else 3), x * (5 if a != b else 7)

    x = torch.ones(2)
    _agree(f, (x, Cfg("relu"), Cfg("relu")), (x, Cfg("relu"), Cfg("gelu")))


def test_identity_against_an_enum_member_or_a_sentinel_is_guarded() -> None:
    def by_enum(x, mode):
        return x * 2 if mode is Mode.TRAIN else x * 3

    def by_sentinel(x, opt):
        return x * 2 if opt is DEFAULT else x * 3

    def same(x, a, b):
        return x * 2 if a is b else x * 3

    x = torch.ones(2)
    _agree(by_enum, (x, Mode.TRAIN), (x, Mode.EVAL), (x, Mode.TRAIN))
    _agree(by_sentinel, (x, DEFAULT), (x, Option()))
    o = Option()
    _agree(same, (x, o, o), (x, o, Option()))


def test_membership_compares_by_value_and_tensors_break() -> None:
    def f(x, items, key):
        return x * (2 if key in items else 3), x in [x], x in [None]

    def g(x, xs):
        return x in xs, x * 2

    x = torch.ones(2)
    _agree(f, (x, [Cfg("a")], Cfg("a")), (x, [Cfg("a")], Cfg("b")))
    one = torch.tensor(1.0)
    _agree(g, (one, [torch.tensor(1.0)]), (one, [torch.tensor(2.0)]))


def test_str_of_a_symbolic_size_is_its_value() -> None:
    def f(x):
        n = x.shape[0]
        return x * 2, str(n), repr(n), f"{n / 2}", str(n / 2)

    _agree(f, (torch.ones(2),), (torch.ones(3),), (torch.ones(4),))
    _agree(f, (torch.ones(3),), (torch.ones(5),), dynamic=True)


def test_a_shape_in_text_is_its_values_with_no_break() -> None:
    def f(x):
        return x * 2, f"{x.shape}", str(x.size()), repr(tuple(x.shape))

    _agree(f, (torch.ones(3, 2),), (torch.ones(5, 2),), dynamic=True, fullgraph=True)


def test_int_and_as_tensor_of_a_size_keep_it_symbolic() -> None:
    def f(x):
        return x * int(x.shape[0]) + torch.as_tensor(x.shape[0])

    dynamo.reset()
    backend, graphs = counting_backend("eager")
    compiled = dynamo.compile(f, backend=backend, dynamic=True)
    for n in (3, 5, 8):
        _same(compiled(torch.ones(n)), f(torch.ones(n)))
    assert len(graphs) == 1


def test_tuple_and_float_constants_keep_their_type_and_sign() -> None:
    def f(x, scale, eps):
        return torch.full((2,), scale[0]) * x / eps

    x = torch.ones(2, dtype=torch.int64)
    _agree(f, (x, (3,), 1.0), (x, (3.0,), 1.0), (x, (True,), 1.0), (x, (3,), 0.0),
           (x, (3,), -0.0))


def test_a_size_argument_hits_the_cache() -> None:
    dynamo.reset()
    compiled = dynamo.compile(lambda x, s: x.reshape(s) * 2)
    for _ in range(3):
        compiled(torch.ones(6), torch.Size([2, 3]))
    assert len(compiled.cache.entries) == 1


def test_strides_of_a_dynamic_tensor_are_guarded() -> None:
    def f(x):
        return x.reshape(-1) + 0, x.stride(), x.is_contiguous()

    transposed = torch.arange(12.0).reshape(4, 3).t()
    for backend in ("eager", "aot_eager"):
        _agree(f, (torch.randn(2, 3),), (torch.randn(3, 4),), (transposed,), backend=backend)
    _agree(f, (torch.randn(2, 3),), (transposed,), dynamic=True)


def test_displays_built_across_two_breaks_keep_every_item() -> None:
    sink = io.StringIO()

    def f(x, xs, d):
        out = [*xs, x.sum().item() * x, x * 3]
        cfg = {**d, "a": print("step", file=sink) or x * 2, "b": x * 3}
        print("done", file=sink)
        return out, cfg

    x = torch.ones(1)
    _agree(f, (x, [x], {"z": x}))


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(2, 2)

    def forward(self, t):
        if hasattr(self, "adapter"):
            t = self.adapter(t)
        return self.fc(t)


def test_monkeypatched_forward_and_a_module_added_later_are_seen() -> None:
    x = torch.ones(1, 2)
    for patch in ("forward", "the compiled module's forward", "adapter"):
        dynamo.reset()
        block = Block()
        compiled = dynamo.compile(block)
        compiled(x)
        if patch == "forward":
            block.fc.forward = lambda t: t * 0 + 42
        elif patch == "the compiled module's forward":  # an adapter patch, after compile()
            block.forward = lambda t: t * 0 - 3
        else:
            block.adapter = nn.Identity()
            block.adapter.forward = lambda t: t * 0
        torch.testing.assert_close(compiled(x), block(x))


def test_methods_and_properties_replaced_on_the_class_or_instance_are_seen() -> None:
    class Scaler:
        def __init__(self) -> None:
            self.k = 1

        @property
        def value(self):
            return self.k * 3

        def act(self, t):
            return t + 1

    def f(x, s):
        return s.act(x) * s.value, getattr(s, "extra", None) is None

    x = torch.ones(2)
    s = Scaler()
    dynamo.reset()
    compiled = dynamo.compile(f)
    compiled(x, s)
    for change in (lambda: setattr(Scaler, "value", property(lambda self: -1)),
                   lambda: setattr(s, "act", lambda t: t - 1),
                   lambda: setattr(Scaler, "act", lambda self, t: t * 10),
                   lambda: setattr(s, "extra", 1)):
        change()
        torch.testing.assert_close(compiled(x, s), f(x, s))


def test_aot_eager_keeps_requires_grad_() -> None:
    def f(x):
        y = x.detach().requires_grad_()
        return (y * 2).sum(), y

    dynamo.reset()
    with pytest.warns(UserWarning, match="requires_grad_"):  # the graph runs as captured
        loss, y = dynamo.compile(f, backend="aot_eager")(torch.ones(3))
    assert loss.requires_grad and y.requires_grad
    loss.backward()
    torch.testing.assert_close(y.grad, torch.full((3,), 2.0))


def test_a_break_inside_a_comprehension_is_compiled_not_given_up(recwarn) -> None:
    def f(x):
        return [x * t.item() for t in x], {i: t.item() for i, t in enumerate(x)}

    _agree(f, (torch.tensor([1.0, 2.0]),), (torch.tensor([3.0, 4.0]),))
    assert not [w for w in recwarn if "dynamo" in str(w.message)]


def test_a_comprehension_reusing_a_variable_name_puts_it_back_after_a_break() -> None:
    # 3.12 inlines comprehensions: the frame's `x` is set aside on the stack while the loop
    # variable `x` is used, and must be handed on at a break inside the loop
    sink = io.StringIO()

    def f(x, n):
        ys = [print(x, file=sink) or x for x in range(n)]
        return x + 1, ys

    def g(x, n):
        print("first", file=sink)
        ys = [print(x, file=sink) or x for x in range(n)]
        return x + 1, ys

    for fn in (f, g):
        _agree(fn, (torch.ones(2), 3), (torch.zeros(2), 2))


def test_a_comprehension_variable_captured_by_a_lambda_has_a_cell_of_its_own() -> None:
    def f(x, n):
        i = 10
        h = lambda: i * x  # noqa: E731
        fs = [lambda: i * x for i in range(n)]  # noqa: B023 (each lambda its own cell)
        return h(), i, [g() for g in fs]

    def g(x, n):
        fs = []
        for k in range(2):
            fs += [lambda: i * x for i in range(n + k)]  # noqa: B023
        return [h() for h in fs]

    for fn in (f, g):
        _agree(fn, (torch.ones(2), 3), fullgraph=True)


def test_a_break_in_a_comprehension_whose_name_is_a_cell_of_the_frame() -> None:
    sink = io.StringIO()

    def f(x, n):
        i = x * 10
        h = lambda: i  # noqa: E731
        ys = [print(i, file=sink) or x * i for i in range(n)]
        return h(), i, ys

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # 3.12: the frame runs eagerly (the cell set aside)
        _agree(f, (torch.ones(2), 2), (torch.ones(2), 3))


def test_a_slice_assignment_to_an_object_the_trace_cannot_see_into_breaks(recwarn) -> None:
    class Opaque:
        def __init__(self, items):
            self.items = items

        def __setitem__(self, key, value):
            print("set", key, file=io.StringIO())
            self.items[key] = value

    def f(x, n):
        v = Opaque([x, x + 1, x + 2])
        v[1:n] = [x * 5]
        return v.items

    _agree(f, (torch.ones(2), 2), (torch.ones(2), 3))
    assert not [w for w in recwarn if "dynamo" in str(w.message)]


def test_functions_of_equal_code_in_two_modules_resume_with_their_own_globals() -> None:
    # code objects compare by value: a module imported twice, or a template run twice, must
    # not share resume functions (they hold their function's globals)
    import types

    source = "import dynamo\ndef f(x):\n    dynamo.graph_break()\n    return x * SCALE\n"
    modules = []
    for name, scale in (("equal_code_a", 2.0), ("equal_code_b", 3.0)):
        module = types.ModuleType(name)
        module.SCALE = scale
        exec(compile(source, f"<{name}>", "exec"), module.__dict__)
        modules.append(module)
    dynamo.reset()
    for module in modules:
        _same(dynamo.compile(module.f)(torch.ones(2)), torch.full((2,), module.SCALE))


def test_a_closure_made_on_each_call_resumes_with_its_own_cells() -> None:
    sink = io.StringIO()

    def f(x, k):
        def g(y):
            z = y * x + k
            print("break", file=sink)
            return z + x

        return g(x)

    _agree(f, (torch.full((2,), 1.0), 2), (torch.full((2,), 3.0), 2),
           (torch.full((2,), 5.0), 7))


class Sliced(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(2, 2) for _ in range(4))
        self.seq = nn.Sequential(nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 2))

    def forward(self, x, n):
        for layer in self.layers[:n]:
            x = layer(x)
        return self.seq[1:](x) + len(self.layers[1:])


def test_slices_of_module_lists_and_sequentials_are_traced_not_recompiled(recwarn) -> None:
    dynamo.reset()
    model = Sliced()
    compiled = dynamo.compile(model)
    for _ in range(10):
        torch.testing.assert_close(compiled(torch.ones(1, 2), 3), model(torch.ones(1, 2), 3))
    assert len(compiled._compiled_forward.cache.entries) == 1
    assert not [w for w in recwarn if "dynamo" in str(w.message)]


def test_dicts_keyed_by_enum_members_dtypes_and_inf() -> None:
    def f(x, d):
        return x * d[Mode.TRAIN] + d[torch.float32] + d[float("inf")]

    d = {Mode.TRAIN: torch.ones(2), torch.float32: torch.full((2,), 2.0),
         float("inf"): torch.full((2,), 3.0)}
    _agree(f, (torch.ones(2), d), (torch.ones(2), {**d, Mode.TRAIN: torch.full((2,), 5.0)}))


def test_an_error_in_a_graph_goes_through_the_frames_own_handlers() -> None:
    log = []

    def caught(a):
        try:
            return torch.linalg.cholesky(a)
        except RuntimeError:
            return torch.zeros_like(a)

    def cleanup(x, idx):
        log.append("before")
        try:
            with torch.no_grad():
                return x[idx] * 2
        finally:
            log.append("finally")

    def writes_a_copy(x, idx):  # the graph writes only to a tensor it made: run again
        try:
            return x.clone().scatter_(0, idx, 1.0)
        except RuntimeError:
            return x * 0

    _agree(caught, (torch.eye(2),), (-torch.eye(2),))
    _agree(writes_a_copy, (torch.ones(4), torch.tensor([1])), (torch.ones(4), torch.tensor([9])))
    dynamo.reset()
    compiled = dynamo.compile(cleanup)
    compiled(torch.ones(3), torch.tensor([0]))
    log.clear()
    with pytest.raises(IndexError):
        compiled(torch.ones(3), torch.tensor([7]))
    assert log == ["before", "finally"] and torch.is_grad_enabled()


def test_defaults_changed_after_compiling_are_used() -> None:
    def f(x, k=2, *, j=3):
        return x * k + j

    dynamo.reset()
    compiled = dynamo.compile(f)
    x = torch.ones(1)
    compiled(x)
    f.__kwdefaults__["j"] = 9
    torch.testing.assert_close(compiled(x), f(x))
    f.__defaults__ = (7,)
    torch.testing.assert_close(compiled(x), f(x))


def test_generators_interleave_with_the_loop_that_takes_their_items() -> None:
    def gen(state, log):
        for i in range(3):
            log.append(i)
            yield state[0]

    def f(x):
        state, log, out = [0], [], []
        for v in gen(state, log):
            state[0] += 1
            out.append(v)
            if v == 1:
                break
        seen = []
        found = any(seen.append(v) or v > 0 for v in [1, 2, 3])
        return x + 1, out, log, found, seen

    _agree(f, (torch.ones(2),))


def test_in_place_operators_on_lists_and_sets_keep_their_identity() -> None:
    def f(x, given):
        a = [1]
        b = a
        a *= 3
        s = {1}
        t = s
        s |= {2}
        s -= {1}
        given *= 2
        c = a.copy()
        c.append(0)
        return x + len(b), b, t, c

    given = [1, 2]
    _agree(f, (torch.ones(1), given))
    assert given == [1, 2, 1, 2, 1, 2, 1, 2]  # doubled by each of the two calls


def test_a_closure_without_parameters_and_dicts_keyed_by_tensors() -> None:
    w = torch.ones(2)

    def f():
        return w * 2

    def g(x, d):
        return x + sum(d.values())

    _agree(f, (), ())
    keys = {torch.ones(1): 1, torch.zeros(1): 2}
    _agree(g, (torch.ones(3), keys), (torch.ones(3), keys))


def test_grad_mode_decorators_and_blocks_around_breaks_and_raises() -> None:
    def decorated(x):
        @torch.no_grad()
        def inner(v):
            print(end="")  # a break inside the decorated function
            return v * 2

        return inner(x).requires_grad, (x * 2).requires_grad

    def raising(x):
        try:
            with torch.no_grad():
                y = x * 2
                raise ValueError("e")
        except ValueError:
            z = x * 3
        return y.requires_grad, z.requires_grad

    x = torch.ones(3, requires_grad=True)
    for fn in (decorated, raising):
        _agree(fn, (x,))
        assert torch.is_grad_enabled()


def test_a_dynamic_dim_of_size_zero_or_one_is_guarded() -> None:
    def branch(x):
        return x + 1 if x.shape[0] > 4 else x - 1

    def sized(x):
        return torch.arange(x.shape[0]) + x.sum(1), x.shape[0] * 2

    for sizes in ((2, 1, 5), (2, 0, 5)):
        _agree(branch, *[(torch.zeros(n),) for n in sizes])
    _agree(sized, (torch.ones(1, 2),), (torch.ones(4, 2),), dynamic=True)


def test_symbolic_shapes_compare_and_add_as_torch_sizes() -> None:
    def f(x):
        s = x.shape + (1,)
        return (x.reshape(s) * s.numel(), x.shape == (4, 3), x.shape == [4, 3],
                x.shape != (4, 3), (1,) + x.shape)

    _agree(f, (torch.zeros(4, 3),), (torch.zeros(2, 3),), dynamic=True)


def test_more_of_the_inputs_and_the_world_is_guarded() -> None:
    def ranged(x, r, s):
        for i in r:
            x = x + i
        return x[s]

    def same(x, a, b):
        return x + 1 if a is b else x - 1

    def keys(x, d):
        return x + 1, [type(k).__name__ for k in d]

    def layout(x):
        return x + x.storage_offset() + (10 if x.is_leaf else 20)

    x = torch.arange(5.0)
    _agree(ranged, (x, range(3), slice(1, 3)), (x, range(10, 12), slice(0, 5, 2)))
    y = torch.ones(2)
    _agree(same, (y, y.clone(), y), (y, y, y))
    _agree(same, (y, [1], [1]), (y, [1, 2], None))
    _agree(keys, (y, {1: 0}), (y, {True: 0}), (y, {1.0: 0}))
    base = torch.zeros(8, requires_grad=True)
    _agree(layout, (base.detach()[1:4],), (base.detach()[3:6],), (base[:3] * 1,))

    def world(a, m):
        y = m(a @ a)
        return y.float() + (1 if y.dtype == torch.bfloat16 else -1), torch.ones(1).device.type

    m = nn.Identity()
    dynamo.reset()
    compiled = dynamo.compile(world)
    a = torch.ones(2, 2)
    for dtype in (torch.bfloat16, torch.float16):
        with torch.autocast("cpu", dtype=dtype):
            _same(compiled(a, m), world(a, m))
    torch.set_default_device("meta")
    try:
        assert compiled(a, m)[1] == "meta"
    finally:
        torch.set_default_device(None)
    handle = torch.nn.modules.module.register_module_forward_hook(lambda mod, i, o: o * 10)
    try:
        _same(compiled(a, m), world(a, m))
    finally:
        handle.remove()


def test_closure_cells_and_defaults_of_methods_are_guarded() -> None:
    scale = [2]

    def make():
        factor = scale[0]

        class C:
            def m(self, t, k=1):
                return t * factor * k

        return C

    cls = make()

    def f(x, o):
        return o.m(x)

    dynamo.reset()
    compiled = dynamo.compile(f)
    x, o = torch.ones(1), cls()
    compiled(x, o)
    cls.m.__defaults__ = (7,)
    torch.testing.assert_close(compiled(x, o), f(x, o))
    cls.m.__closure__[0].cell_contents = 5
    torch.testing.assert_close(compiled(x, o), f(x, o))


def _tagged(x):
    return x + 1


def test_a_missing_function_attribute_is_an_attribute_error_and_guarded():
    def f(x):
        return getattr(_tagged, "scale", 1) * x

    compiled = dynamo.compile(f, backend="eager", fullgraph=True)
    x = torch.ones(2)
    assert torch.equal(compiled(x), x)
    _tagged.scale = 5
    try:
        assert torch.equal(compiled(x), x * 5)  # the guard on its absence noticed
    finally:
        del _tagged.scale


def test_functions_torch_keeps_out_of_graphs_are_called_for_real():
    model = torch.nn.Linear(2, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    def step(x):
        optimizer.zero_grad()  # torch._disable_dynamo: a graph break, the call made for real
        loss = model(x).sum()
        return loss

    model(torch.ones(2)).sum().backward()
    explained = dynamo.explain(step)(torch.ones(2))
    assert any("torch._disable_dynamo" in b.reason for b in explained.breaks)
    model(torch.ones(2)).sum().backward()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dynamo.compile(step, backend="eager")(torch.ones(2))
    assert model.weight.grad is None


def test_id_of_modules_from_the_frame():
    shared = torch.nn.Linear(2, 2)
    layers = torch.nn.ModuleList([shared, torch.nn.ReLU(), shared])

    def f(x):
        seen = set()
        for layer in layers:
            if id(layer) in seen:  # a module used twice runs once
                continue
            seen.add(id(layer))
            x = layer(x)
        return x, len(seen)

    compiled = dynamo.compile(f, backend="eager", fullgraph=True)
    x = torch.ones(2)
    for change in (lambda: None, lambda: layers.__setitem__(2, torch.nn.Linear(2, 2))):
        change()  # the identities are guarded: a new module recompiles
        got, want = compiled(x), f(x)
        assert got[1] == want[1]
        torch.testing.assert_close(got[0], want[0])


def test_locals_and_vars_are_the_traced_functions_and_del_unbinds() -> None:
    def f(x, unused, **kwargs):
        y = x + 1
        del unused
        try:
            y = y + unused  # noqa: F821 (unbound since the del: eager raises here)
        except UnboundLocalError:
            y = y * 2
        k = 3

        def inner():
            return k

        scale = dict(locals()["kwargs"]).get("scale", 1)
        return y * scale, sorted(locals()), sorted(vars()), inner()

    _agree(f, (torch.ones(2), 5), (torch.ones(2), 7))
    _agree(lambda x, **kw: f(x, 1, **kw), (torch.ones(2),))
    explained = dynamo.explain(f)(torch.ones(2), 5, scale=3)
    assert explained.graph_count == 1 and not explained.breaks and not explained.eager
    torch.testing.assert_close(dynamo.compile(f)(torch.ones(2), 5, scale=3)[0],
                               f(torch.ones(2), 5, scale=3)[0])


def test_an_operation_that_returns_its_input_returns_the_very_tensor() -> None:
    def f(x):
        y = x.add_(1)
        z = x.mul_(2).clamp_(max=100)
        same = (y is x, z is x, x.contiguous() is x, x.to(x.dtype) is x, x.float() is x,
                x.view(-1) is x, x.t().contiguous() is x)
        y.sub_(1)  # through the alias: x changes
        return same, x * 1

    compiled = dynamo.compile(f)
    for start in (torch.ones(3, 3), torch.arange(9.0).reshape(3, 3)):
        x, x_eager = start.clone(), start.clone()
        got, expected = compiled(x), f(x_eager)
        assert got[0] == expected[0] == (True,) * 5 + (False, False)
        torch.testing.assert_close(got[1], expected[1])
        torch.testing.assert_close(x, x_eager)


class _Settings:
    """Attributes served by `__getattr__` from a dict: unknown names raise KeyError."""

    def __init__(self):
        self.store = {"k": 2.0}

    def __getattr__(self, name):
        return self.store[name]


SETTINGS = _Settings()


def test_an_object_whose_getattr_raises_key_error_is_traced() -> None:
    def f(x):
        return x * SETTINGS.k

    explained = dynamo.explain(f)(torch.ones(2))
    assert explained.graph_count == 1 and not explained.eager
    compiled = dynamo.compile(f, fullgraph=True)
    torch.testing.assert_close(compiled(torch.ones(2)), torch.full((2,), 2.0))
    SETTINGS.store["k"] = 5.0
    torch.testing.assert_close(compiled(torch.ones(2)), torch.full((2,), 5.0))


def test_divmod_of_a_tensor_raises_type_error_as_in_eager() -> None:
    def f(x, n):
        q, r = divmod(x.shape[0], n)  # sizes and ints: traced
        try:
            return divmod(x, 2)
        except TypeError:
            return x * q + r

    _agree(f, (torch.arange(6.0), 4), (torch.arange(6.0), 5))


def test_a_dict_that_grows_while_iterated_raises_as_in_eager() -> None:
    def f(x, d):
        try:
            for k in d:
                d[k + "x"] = 1
        except RuntimeError as error:
            return x + len(d), str(error)
        return x, None

    compiled = dynamo.compile(f)
    for _ in range(2):
        d_compiled, d_eager = {"a": 1}, {"a": 1}
        _same(compiled(torch.ones(1), d_compiled), f(torch.ones(1), d_eager))
        assert d_compiled == d_eager


class _Base(nn.Module):
    scale = 3.0

    @property
    def factor(self):
        return self.scale * 2


class _Derived(_Base):
    @property
    def factor(self):
        return 1.0

    def forward(self, x):
        kind = super().__class__  # the super type itself, as in eager
        return x * super().factor + super().scale + len(kind.__name__), self.factor


def test_super_reads_class_attributes_properties_and_its_own_class() -> None:
    _agree(_Derived(), (torch.ones(2),), (torch.zeros(2),))
    explained = dynamo.explain(_Derived())(torch.ones(2))
    assert explained.graph_count == 1 and not explained.breaks and not explained.eager


class _CapturingSelf(_Base):
    def forward(self, x):
        # `self` is captured by the generator below, so it lives in a cell (as in
        # transformers' ModelOutput.__post_init__, which calls `super().__delitem__`)
        positive = all(self.scale > k for k in (0, 1))
        return x * super().factor + positive


def test_zero_argument_super_in_a_method_whose_self_a_closure_captures() -> None:
    module = _CapturingSelf()

    def f(x):
        return module(x) + 1  # the forward is inlined, not the frame compiled

    _agree(f, (torch.ones(2),), (torch.zeros(2),))
    explained = dynamo.explain(f)(torch.ones(2))
    assert explained.graph_count == 1 and not explained.breaks and not explained.eager


def test_attributes_of_functions_and_binding_through_get() -> None:
    """An LR scheduler wraps `optimizer.step` on the instance, marks the wrapper with an
    attribute and binds the original through `func.__get__`; its `step` asks hasattr()."""

    class Stepper:
        def step(self, k):
            return k + 1

    stepper = Stepper()
    original = Stepper.step

    def wrapper(*args):
        return original.__get__(stepper, Stepper)(*args) * 10

    wrapper.wrapped = True
    stepper.step = wrapper

    def f(x):
        marked = hasattr(stepper.step, "wrapped"), hasattr(stepper.step, "other")
        return x + stepper.step(2), marked

    _agree(f, (torch.zeros(1),), (torch.ones(1),))
    explained = dynamo.explain(f)(torch.zeros(1))
    assert explained.graph_count == 1 and not explained.breaks

    model = nn.Linear(2, 2)
    opt = torch.optim.AdamW(model.parameters())
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    model(torch.ones(1, 2)).sum().backward()
    opt.step()
    explained = dynamo.explain(lambda: sched.step())()
    assert not explained.breaks  # the scheduler's own checks pass, as in eager: no warning
    assert sched.get_last_lr() == [0.001]


class _RenamingMeta(type):
    """Like Hugging Face's ModelOutput metaclass: it changes how the class is built only."""

    def __setattr__(cls, name, value):
        super().__setattr__(name, value)


class _CountingMeta(type):
    made = 0

    def __call__(cls, *args, **kwargs):
        _CountingMeta.made += 1
        return super().__call__(*args, **kwargs)


@dataclasses.dataclass
class _Output(dict, metaclass=_RenamingMeta):
    logits: torch.Tensor


class _Counted(metaclass=_CountingMeta):
    def __init__(self, x):
        self.x = x


def test_objects_of_classes_with_a_metaclass_are_made_in_the_graph_unless_it_makes_them() -> None:
    def f(x):
        return _Output(logits=x * 2).logits + 1

    explained = dynamo.explain(f)(torch.ones(2))
    assert explained.graph_count == 1 and not explained.breaks
    _agree(f, (torch.ones(2),), (torch.randn(3),))

    def g(x):
        return _Counted(x + 1).x * 2

    explained = dynamo.explain(g)(torch.ones(2))
    assert any("_Counted" in b.reason for b in explained.breaks)
    before = _CountingMeta.made
    _agree(g, (torch.ones(2),), (torch.randn(3),))
    assert _CountingMeta.made == before + 4  # the metaclass's __call__ ran on every call


class _Params(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.ps = nn.ParameterList([nn.Parameter(torch.randn(4)) for _ in range(3)])

    def forward(self, x):
        return x * len(self.ps) + sum(p.sum() for p in self.ps[1:]) + self.ps[1:][0] * self.ps[-1]


def test_a_parameter_list_has_its_length_and_slices() -> None:
    model = _Params()
    compiled = dynamo.compile(model, backend="aot_eager")
    x = torch.randn(4)
    torch.testing.assert_close(compiled(x), model(x))
    compiled(x).sum().backward()
    grads = [p.grad for p in model.ps]
    model.zero_grad()
    model(x).sum().backward()
    assert grads[0] is None and model.ps[0].grad is None  # not used past len()
    for got, p in zip(grads[1:], model.ps[1:]):
        torch.testing.assert_close(got, p.grad)
    model.ps.append(nn.Parameter(torch.randn(4)))  # the length is guarded
    torch.testing.assert_close(compiled(x), model(x))


class _Doubling(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        out = super().__torch_function__(func, types, args, kwargs or {})
        return out.double() * 10 if func in (torch.Tensor.add, torch.add) else out


def test_a_tensor_subclass_with_its_own_torch_function_is_not_traced_as_a_plain_tensor() -> None:
    def f(x):
        y = x + 1
        return y.sum() if y.dtype == torch.float64 else -y.sum()

    x = torch.ones(3).as_subclass(_Doubling)
    for backend in ("eager", "aot_eager"):
        dynamo.reset()
        with pytest.warns(UserWarning, match="L\\['x'\\] is a _Doubling: a tensor subclass"):
            got = dynamo.compile(f, backend=backend)(x)
        assert torch.equal(got.as_subclass(torch.Tensor), f(x).as_subclass(torch.Tensor))
    explained = dynamo.explain(lambda p: p * 2)(nn.Parameter(torch.ones(2)))
    assert explained.graph_count == 1 and not explained.breaks  # Parameters are plain


class _OwnDouble(torch.Tensor):  # torch-function off: traced as a plain tensor
    __torch_function__ = torch._C._disabled_torch_function_impl

    def double(self):  # shadows Tensor.double
        return self * 2

    def __add__(self, other):  # and Tensor.__add__
        return torch.sub(self, other)


class _OwnParameter(nn.Parameter):
    def __len__(self):
        return 42

    def sum(self, *args, **kwargs):
        return torch.zeros(())


def test_a_plain_traced_tensor_subclass_keeps_the_methods_and_operators_it_overrides() -> None:
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = _OwnParameter(torch.ones(2))

        def forward(self, x):
            return x.double(), (x + 1).dtype, x + 1, len(self.w), self.w.sum() + x

    m = M()
    x = torch.ones(2).as_subclass(_OwnDouble)
    for backend in ("eager", "aot_eager"):
        dynamo.reset()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = dynamo.compile(m, backend=backend)(x)
        for g, e in zip(got, m(x)):
            assert type(g) is type(e) and (torch.equal(g, e) if isinstance(e, torch.Tensor)
                                           else g == e)


def test_a_plain_traced_tensor_subclass_changed_after_compiling_recompiles() -> None:
    # a method, or a torch-function override, given to the class after the trace read it
    # (the entry traced torch.Tensor's; aot_eager's graph is aten ops, which never ask the class)
    def double(x):
        return x.double()

    def add(x):
        return torch.add(x, 1)

    @classmethod
    def tens(cls, func, types, args=(), kwargs=None):
        with torch._C.DisableTorchFunctionSubclass():
            out = func(*args, **(kwargs or {}))
        return out * 10 if func is torch.add else out

    for backend in ("eager", "aot_eager"):
        for f, change in ((double, lambda c: setattr(c, "double", lambda self: torch.zeros(1))),
                          (add, lambda c: setattr(c, "__torch_function__", tens))):
            class Sub(torch.Tensor):
                __torch_function__ = torch._C._disabled_torch_function_impl

            dynamo.reset()
            compiled = dynamo.compile(f, backend=backend)
            x = torch.ones(3).as_subclass(Sub)
            assert torch.equal(compiled(x), f(x))
            change(Sub)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                assert torch.equal(compiled(x), f(x))


class _OwnIter(torch.Tensor):
    __torch_function__ = torch._C._disabled_torch_function_impl

    def __iter__(self):
        return iter([torch.zeros(1)])


class _OwnDim(torch.Tensor):
    __torch_function__ = torch._C._disabled_torch_function_impl

    def dim(self):
        return 5


class _OwnDtype(torch.Tensor):
    __torch_function__ = torch._C._disabled_torch_function_impl
    dtype = property(lambda self: torch.float64)


def test_a_plain_traced_tensor_subclass_keeps_its_iteration_and_metadata() -> None:
    def loop(x):
        return [y + 1 for y in x]

    def unpack(x):
        a, *rest = x
        return a + 1

    def scaled(x):
        return x * 2 + x.dim()

    cases = ((loop, _OwnIter), (unpack, _OwnIter), (scaled, _OwnDim), (scaled, _OwnDtype))
    for backend in ("eager", "aot_eager"):
        for f, cls in cases:
            dynamo.reset()
            x = torch.ones(3).as_subclass(cls)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                got = dynamo.compile(f, backend=backend)(x)
            _same(got, f(x))
            if cls is not _OwnIter:  # (the loop breaks at its header, the frame compiled)
                assert any("defines its own" in str(w.message) for w in caught)


def test_tensors_of_symbolic_ints_stay_symbolic_and_exact() -> None:
    def f(x, n, scale):
        return x + torch.tensor(n), torch.tensor([[n, 2], [3, n]]), torch.tensor([n, scale])

    x = torch.zeros(1, dtype=torch.int64)
    for backend in ("eager", "aot_eager"):
        dynamo.reset()
        counting, graphs = counting_backend(backend)
        compiled = dynamo.compile(f, backend=counting)
        for n in (5, 6, 2**31 + 1, 2**40, 7):
            _same(compiled(x, n, 0.5), f(x, n, 0.5))
        assert len(graphs) == 2  # n is a symbol from its second value on: no more graphs


def test_the_square_root_and_product_of_dynamic_sizes_stay_symbolic() -> None:
    import math

    def f(x):
        rows = x.reshape(math.prod(x.shape[:-1]), x.shape[-1])
        return rows * (1 / math.sqrt(x.shape[1])) + math.sqrt(4) + math.prod([2, 3])

    for backend in ("eager", "aot_eager"):
        dynamo.reset()
        counting, graphs = counting_backend(backend)
        compiled = dynamo.compile(f, backend=counting)
        for length in (3, 5, 7, 16, 30):
            x = torch.randn(2, length, 4)
            torch.testing.assert_close(compiled(x), f(x))
        assert len(graphs) == 2  # static, then one graph for every length


def test_what_a_property_setter_changes_through_its_closure_is_changed() -> None:
    """A setter's closure (a log list, a dict) is reached with a source, so its changes are
    replayed after the graph, with a break between two writes too, on objects and modules."""

    def make(base):
        log, seen = [], {}

        class Knob(base):
            @property
            def v(self):
                return 0

            @v.setter
            def v(self, val):
                log.append(val)
                seen[val] = True
        return Knob, log, seen

    for base, breaks in ((object, False), (object, True), (nn.Module, False)):
        results = []
        for compiled in (False, True):
            Knob, log, seen = make(base)

            def f(x, o, breaks=breaks):
                o.v = 7
                if breaks:
                    dynamo.graph_break()
                o.v = 8
                return x + 1
            dynamo.reset()
            run = dynamo.compile(f) if compiled else f
            run(torch.ones(2), Knob())
            results.append((log, seen))
        assert results[0] == results[1] == ([7, 8], {7: True, 8: True})


def test_a_modules_methods_closures_are_read_and_changed_for_real() -> None:
    """A module's methods are not guarded, but their closures are reached through the class:
    a list a method, staticmethod or property appends to is appended to, and a closure value
    that changes is seen."""

    def make():
        log, scale = [], [2.0]

        class Sub(nn.Module):
            def forward(self, x):
                log.append("sub")
                return x * scale[0]

        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.sub = Sub()

            @staticmethod
            def st(x):
                log.append("st")
                return x

            @property
            def p(self):
                log.append("p")
                return 1

            def forward(self, x):
                return self.st(self.sub(x)) + self.p
        return M(), log, scale

    results = []
    for compiled in (False, True):
        m, log, scale = make()
        dynamo.reset()
        run = dynamo.compile(m) if compiled else m
        outs = [run(torch.ones(2))]
        scale[0] = 3.0
        outs.append(run(torch.ones(2)))
        results.append(([o.tolist() for o in outs], log))
    assert results[0] == results[1]
    assert results[1][1] == ["sub", "st", "p"] * 2


def test_a_module_with_weights_made_in_the_frame_draws_eagers_numbers_on_the_first_call():
    # (the trace looks at the module on the meta device first: no random numbers drawn)
    def f(x):
        lin = torch.nn.Linear(2, 2)
        return lin(x), lin.weight.detach().clone()

    dynamo.reset()
    compiled = dynamo.compile(f)
    for _ in range(2):
        torch.manual_seed(3)
        expected = f(torch.ones(2))
        torch.manual_seed(3)
        _same(compiled(torch.ones(2)), expected)


def test_a_module_class_own_setattr_and_property_setters_run_in_the_trace() -> None:
    """Writes on a module go through its class: a property's setter (which may change the
    value) and an overridden `__setattr__` (which calls nn.Module's through `super()`); reads
    later in the same call see what they stored."""

    class Temperature(nn.Module):
        def __init__(self):
            super().__init__()
            self._t = 1.0

        @property
        def temperature(self):
            return self._t

        @temperature.setter
        def temperature(self, v):
            self._t = max(v, 0.1)

        def forward(self, x):
            self.temperature = 0.01
            return x / self.temperature, self._t

    class Cache(nn.Module):
        def __init__(self):
            super().__init__()
            self._cache = None

        @property
        def cache(self):
            return self._cache

        @cache.setter
        def cache(self, v):
            self._cache = v.detach() * 2

        def forward(self, x):
            self.cache = x + 1
            return self._cache + 0

    class Scaled(nn.Module):
        def __init__(self):
            super().__init__()
            self.k = 1.0

        def __setattr__(self, name, value):
            if name == "k":
                value = value * 10
            super().__setattr__(name, value)

        def forward(self, x):
            self.k = 2.0
            return x * self.k

    x = torch.ones(2)
    for cls in (Temperature, Cache, Scaled):
        ours, eager = cls(), cls()
        _same(dynamo.compile(ours, fullgraph=True)(x), eager(x))
        assert vars(ours).keys() == vars(eager).keys()
        _same({k: v for k, v in vars(ours).items() if not k.startswith("_") or k == "_t"},
              {k: v for k, v in vars(eager).items() if not k.startswith("_") or k == "_t"})


def test_a_wrapper_module_whose_getattr_delegates_to_the_wrapped_one() -> None:
    class Inner(nn.Module):
        def __init__(self):
            super().__init__()
            self.d = 3
            self.lin = nn.Linear(2, 2)

    class Wrap(nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def __getattr__(self, name):
            try:
                return super().__getattr__(name)  # parameters, buffers, submodules
            except AttributeError:
                return getattr(self.inner, name)

        def forward(self, x):
            return self.lin(x) * self.d + self.inner.lin.bias

    wrap = Wrap(Inner())
    compiled = dynamo.compile(wrap, fullgraph=True)
    x = torch.randn(3, 2)
    _same(compiled(x), wrap(x))
    wrap.inner.d = 5  # read through the wrapper: guarded
    _same(compiled(x), wrap(x))


def test_a_lazy_property_is_computed_once_per_object_in_the_trace() -> None:
    """A descriptor written in Python (torch.distributions' `lazy_property`) runs its `__get__`
    in the trace; `Categorical(logits=...)` samples and scores in one graph."""
    from torch.distributions import Categorical

    def act(logits):
        d = Categorical(logits=logits, validate_args=False)
        a = d.sample()
        return a, d.log_prob(a), d.entropy(), d.probs

    logits = torch.randn(2, 4)
    dynamo.reset()
    compiled = dynamo.compile(act, fullgraph=True)
    for _ in range(2):
        torch.manual_seed(0)
        got = compiled(logits)
        torch.manual_seed(0)
        _same(got, act(logits))


class _Color(enum.IntEnum):
    R = 1
    G = 2
    B = 3


def test_an_enum_class_is_iterated_sized_and_called_by_value() -> None:
    def f(x, v):
        names = [c.name.lower() for c in _Color if c >= _Color.G]
        return x * len(names) + _Color(v).value + len(_Color) + len(_Color.__members__), names

    _agree(f, (torch.ones(2), 2), (torch.ones(2), 3), fullgraph=True)

    def bad(x):
        try:
            return x * _Color(7)
        except ValueError:
            return x - 1

    _agree(bad, (torch.ones(2),), fullgraph=True)


def test_str_format_of_a_number_that_became_symbolic_shows_its_value() -> None:
    class Config:
        mode, mult = "train", 2

    config = Config()

    def f(x):
        text = "{}:{:>4}".format(config.mode, config.mult)  # noqa: UP032 (str.format itself)
        return x * config.mult, text, "-".join([config.mode] * 2)

    dynamo.reset()
    compiled = dynamo.compile(f, fullgraph=True)
    for mult in (2, 3, 4):  # the third call sees `mult` as a symbol (automatic dynamic)
        config.mult = mult
        _same(compiled(torch.ones(2)), f(torch.ones(2)))


def test_percent_formatting_and_format_map_of_sizes_and_constants() -> None:
    def f(x):
        n = x.shape[0]
        texts = ("%s-%d" % ("rows", n), "%(n)d of %(kind)s" % {"n": n, "kind": "rows"},  # noqa: UP031 (% itself)
                 "{n}/{d}".format_map({"n": n, "d": x.dtype}))
        return x + sum(map(len, texts)), texts

    for dynamic in (True, None):
        dynamo.reset()
        compiled = dynamo.compile(f, fullgraph=True, dynamic=dynamic)
        for size in (3, 7, 12):  # each text's length differs: the value is guarded
            _same(compiled(torch.ones(size)), f(torch.ones(size)))


def test_str_join_of_a_generator_or_a_map_is_made_in_the_trace() -> None:
    def f(x, name):
        key = "_".join(part.upper() for part in name.split("."))
        return x + len(key), key, "x".join(map(str, x.shape))

    dynamo.reset()
    compiled = dynamo.compile(f, fullgraph=True)
    for name, shape in (("enc.layer", (2, 3)), ("enc.layer", (2, 3)), ("dec.block.0", (4, 1))):
        _same(compiled(torch.ones(shape), name), f(torch.ones(shape), name))


def test_a_symbolic_int_compares_with_int_enums_bools_and_complexes_as_python_does() -> None:
    class Level(enum.IntEnum):
        A = 1
        B = 2

    def f(x, v):
        match v:
            case Level.A:
                branch = 1
            case Level.B:
                branch = 2
            case _:
                branch = 3
        flags = (v == Level.B, Level.B != v, v == True, v == 2 + 0j, v != 2j)  # noqa: E712
        return x + branch, flags

    dynamo.reset()
    compiled = dynamo.compile(f)
    for v in (1, 2, 1, 2, 3):  # from the third call, `v` is a symbol
        _same(compiled(torch.zeros(1), v), f(torch.zeros(1), v))


def test_dict_of_a_mapping_reads_its_keys_and_items() -> None:
    from collections import ChainMap, UserDict

    def f(x, over, base):
        merged = dict(ChainMap(over, base))
        table = {"zz": 0}
        table.update(UserDict(base))
        return x + len(merged), merged, table

    _agree(f, (torch.ones(1), {"ab": 10}, {"ab": 1, "cd": 2}),
           (torch.ones(1), {"ab": 11}, {"ab": 1, "cd": 3}))


def test_a_python_type_as_a_dtype_is_the_dtype_torch_takes_it_for() -> None:
    def f(x):
        index = torch.tensor([-1], dtype=int)
        return x + index, x.to(float), torch.zeros(3, dtype=bool), torch.arange(3, dtype=float)

    _agree(f, (torch.randn(3),), fullgraph=True)


def test_an_ordered_dict_subclass_getitem_through_super_runs_once() -> None:
    """`super().__getitem__` reads the stored item: not through the override (transformers'
    ACT2FN is such a table), and the guards read the items past it too."""
    from collections import OrderedDict

    calls = []

    class Scaled(OrderedDict):
        def __getitem__(self, key):
            calls.append(key)
            return super().__getitem__(key) * 10

    table = Scaled(k=3, j=4)
    table.move_to_end("k")

    def f(x):
        return x + table["k"], list(table.keys())

    _agree(f, (torch.zeros(1),), (torch.ones(1),), fullgraph=True)
    calls.clear()
    dynamo.compile(f, fullgraph=True)(torch.zeros(1))
    assert calls == ["k"]  # once per call, as in eager: the guards read past the override


def test_dict_update_takes_pairs_and_writes_into_module_tables_break() -> None:
    lin = nn.Linear(2, 2)

    def f(x):
        d = {}
        d.update([("a", x)])
        d.update(zip(["b"], [x * 2]))
        d.update(lin.named_parameters())
        return d["a"] + d["b"] + d["bias"].sum()

    _agree(f, (torch.randn(2),), fullgraph=True)
    params = {"weight": torch.ones(2, 2), "bias": torch.zeros(2)}

    def swapped(x):  # parameters swapped in: a graph break, eager's answer
        return torch.func.functional_call(lin, params, (x,))

    _agree(swapped, (torch.randn(2),))


def test_equal_int_arguments_keep_the_compiled_code() -> None:
    def f(x, a, b):
        x.add_(a)
        return x * b

    backend, graphs = counting_backend("eager")
    dynamo.reset()
    compiled = dynamo.compile(f, backend=backend)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "do not hold for the inputs" fallback
        for a, b in ((2, 3), (3, 4), (5, 5), (6, 6)):
            x, y = torch.zeros(3), torch.zeros(3)
            _same(compiled(x, a, b), f(y, a, b))
            _same(x, y)
    assert len(graphs) == 2  # constants, then symbolic ints: every later call hits the cache


_BY_KIND = {(int, "scale"): 2.0, (float, "scale"): 3.0}


def test_a_frame_dict_keyed_by_tuples_holding_classes() -> None:
    def f(x, kind):
        return x * _BY_KIND[type(kind), "scale"]

    _agree(f, (torch.ones(2), 1), (torch.ones(2), 1.5), fullgraph=True)


@dynamo.assume_constant_result
def _install_probe() -> bool:
    import importlib.metadata

    return importlib.metadata.version("torch") >= "2"


def test_a_function_assumed_constant_is_called_while_tracing() -> None:
    def f(x):
        return x + 1 if _install_probe() else x - 1

    _agree(f, (torch.ones(2),), fullgraph=True)


def test_an_in_place_op_on_overlapping_windows_runs_for_real() -> None:
    def f(x):
        x.unfold(0, 3, 2).mul_(2)
        return x + 1

    dynamo.reset()
    ours, eager = torch.arange(9.0), torch.arange(9.0)
    with pytest.raises(dynamo.Unsupported, match="overlap"):
        dynamo.compile(f, fullgraph=True)(ours.clone())
    _same(dynamo.compile(f, backend="aot_eager")(ours), f(eager))
    _same(ours, eager)


class _Weight(torch.nn.Parameter):
    pass


def test_the_type_of_a_parameter_subclass_is_its_own() -> None:
    def f(p):
        return p * 2 if type(p) is _Weight else p * 3

    p = _Weight(torch.ones(3))
    torch.testing.assert_close(dynamo.compile(f, fullgraph=True)(p), f(p))


def test_a_dict_subclass_missing_key_goes_to_its_missing_method() -> None:
    """`d[k]` of an absent key calls the class's `__missing__` (a Counter's 0), for objects
    passed in and made in the frame; the key added later recompiles."""
    class Defaults(dict):
        def __missing__(self, key):
            return 10

    def f(t, counts, defaults):
        try:
            v = counts["b"]
        except KeyError:
            v = -1
        made = Defaults(a=1)
        return t * v + defaults["zz"] + made["q"]

    counts, defaults = collections.Counter(["a"]), Defaults()
    t = torch.ones(2)
    compiled = dynamo.compile(f, backend="eager")
    _same(compiled(t, counts, defaults), f(t, counts, defaults))
    counts["b"], defaults["zz"] = 3, 5
    _same(compiled(t, counts, defaults), f(t, counts, defaults))


def test_hasattr_of_properties_and_slots_asks_them() -> None:
    """hasattr() is False for a property whose getter raises AttributeError and for a slot
    never set; a property that raises AttributeError falls back to `__getattr__`."""
    class Lazy:
        @property
        def value(self):
            return self._value  # never set

    class Node:
        __slots__ = ("value", "cached")

        def __init__(self, value):
            self.value = value

    class Hinted:
        @property
        def size_hint(self):
            raise AttributeError("not computed")

        def __getattr__(self, name):
            if name == "size_hint":
                return 4
            raise AttributeError(name)

    def f(t, hinted):
        lazy, node = Lazy(), Node(t)
        return (t + 1 if hasattr(lazy, "value") else t - 1,
                node.value * 2 if hasattr(node, "cached") else node.value * 3,
                t + hinted.size_hint if hasattr(hinted, "size_hint") else t)

    _agree(f, (torch.zeros(2), Hinted()), backend="eager", fullgraph=True)


def test_isinstance_of_a_legacy_tensor_type_is_answered_in_the_trace() -> None:
    """`isinstance(t, torch.LongTensor)` (diffusers' Euler schedulers ask it of the timestep):
    a tensor of that dtype on the CPU, not a graph break (torch.tensortype answers in C)."""
    def f(t, x):
        long_or_int = isinstance(t, torch.IntTensor) or isinstance(t, torch.LongTensor)
        return x + 1, (long_or_int, isinstance(t, (torch.FloatTensor, int)),
                       isinstance(t, torch.cuda.LongTensor), isinstance(2.5, torch.FloatTensor))

    x = torch.zeros(2)
    _agree(f, *[(t, x) for t in (torch.tensor(3), torch.tensor(3.0),
                                 torch.tensor(3, dtype=torch.int32),
                                 torch.tensor(3.0, dtype=torch.float64), 5, 5.0,
                                 nn.Parameter(torch.zeros(2)))])
    for t in (torch.tensor(3), 5):
        dynamo.reset()
        assert dynamo.compile(f, fullgraph=True)(t, x)[1] == f(t, x)[1]


class _Sized:
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n


class _Truthy:
    def __init__(self, v):
        self.v = v

    def __bool__(self):
        return self.v


@pytest.mark.parametrize("ask", ["if", "len", "bool"])
@pytest.mark.parametrize("make, n", [(_Sized, -1), (_Sized, 2.0), (_Sized, True),
                                     (_Sized, np.int64(2)), (_Truthy, 1), (_Truthy, None)])
def test_len_and_truth_check_what_the_special_method_returned(make, n, ask) -> None:
    """`len()` and truth of an object made in the trace check `__len__`'s and `__bool__`'s
    results as CPython does (a ValueError, a TypeError; an int, not a numpy int or a bool)."""

    def f(x, n):
        x = x * 1
        obj = make(n)
        try:
            if ask == "if":
                value = "yes" if obj else "no"
            else:
                value = len(obj) if ask == "len" else bool(obj)
            return x, (type(value).__name__, value)
        except (TypeError, ValueError) as error:
            return x, (type(error).__name__, str(error))

    x = torch.ones(2)
    assert dynamo.compile(f, backend="eager")(x, n)[1] == f(x, n)[1]


def test_a_symbolic_length_that_turns_negative_raises_as_eager() -> None:
    """`__len__` returning a symbolic int: when it is negative, CPython's ValueError (the
    negative number was returned as the length)."""

    def f(x, n):
        try:
            return x + len(_Sized(n))
        except ValueError as error:
            return x, str(error)

    compiled = dynamo.compile(f, backend="eager", dynamic=True)
    x = torch.ones(2)
    for n in (2, 3, -1):
        assert repr(compiled(x, n)) == repr(f(x, n))


def _no_zz(x):
    pass


class _Plain:
    pass


@pytest.mark.parametrize("make", [_Plain, lambda: _no_zz])
@pytest.mark.parametrize("delete", [False, True])
def test_a_missing_attribute_raises_pythons_attribute_error(make, delete) -> None:
    """The text of the AttributeError caught in the frame is CPython's, not the name alone."""
    obj = make()

    def f(x):
        try:
            if delete:
                del obj.zz
            else:
                return obj.zz
        except AttributeError as error:
            return x + 1, str(error)

    x = torch.ones(2)
    assert repr(dynamo.compile(f, backend="eager")(x)) == repr(f(x))


class _Resettable:
    def __init__(self):
        self._v = 1

    @property
    def v(self):
        return self._v

    @v.setter
    def v(self, val):
        self._v = val

    @v.deleter
    def v(self):
        self._v = 0


class _ReadOnly:
    @property
    def v(self):
        return 3


class _Cleared:
    def __get__(self, obj, owner=None):
        return obj.__dict__.get("_c", 1) if obj is not None else self

    def __set__(self, obj, value):
        obj.__dict__["_c"] = value

    def __delete__(self, obj):
        obj.__dict__["_c"] = 0


class _WithCleared:
    c = _Cleared()


def test_del_of_a_property_runs_its_deleter() -> None:
    """`del obj.v` of a property on an object made in the trace looked for `v` in the
    instance's dict: an AttributeError, which the frame's `except` caught (eager runs the
    deleter), and a read-only property's message was not CPython's; on an object from the
    frame it made the whole frame run eagerly."""

    def made_here(x):
        p = _Resettable()
        p.v = 4
        try:
            del p.v
        except AttributeError:
            return x * 100
        return x * (p.v + 1)

    def read_only(x):
        try:
            del _ReadOnly().v
        except AttributeError as e:
            return x * len(str(e))
        return x

    def from_frame(x, o):
        o.v = 5
        del o.v
        return x * (o.v + 2)

    def other_descriptor(x):  # its __delete__ is not traced: the frame runs eagerly
        o = _WithCleared()
        try:
            del o.c
        except AttributeError:
            return x * 100
        return x * (o.c + 1)

    x = torch.arange(3.0)
    for fn in (made_here, read_only):
        _agree(fn, (x,), (x + 1,), fullgraph=True)
    _agree(other_descriptor, (x,), (x + 1,))
    eager_object, compiled_object = _Resettable(), _Resettable()
    compiled = dynamo.compile(from_frame, fullgraph=True)
    for _ in range(2):
        _same(compiled(x, compiled_object), from_frame(x, eager_object))
        assert compiled_object._v == eager_object._v == 0


def test_an_attribute_name_that_is_not_a_str_is_a_type_error() -> None:
    """`setattr(o, 3, v)` on an object made in the frame raised no TypeError (its traced
    `__dict__` stored the int key: a wrong answer), and getattr/hasattr/delattr with an int name
    failed in dynamo's own guard check (an internal error) instead of raising Python's TypeError."""
    def each_builtin(x):
        o = Option()
        messages = []
        for call in (lambda: setattr(o, 3, x), lambda: getattr(o, 3), lambda: getattr(o, 3, 0),
                     lambda: hasattr(o, 3), lambda: delattr(o, b"v")):
            try:
                call()
            except TypeError as e:
                messages.append(str(e))
        return x + len(messages), messages, vars(o)

    x = torch.arange(3.0)
    _agree(each_builtin, (x,), (x + 1,), fullgraph=True)


class _SuperBase:
    def value(self):
        return 1


class _SuperDerived(_SuperBase):
    def value(self):
        return super(_SuperDerived, self).value() + 10  # noqa: UP008 (the explicit form)


def test_an_invalid_super_is_a_type_error_in_the_trace() -> None:
    """`super(int, "a")` was made in the trace without Python's check: a `try` around it caught
    nothing, and once a later graph break rebuilt it outside the `try`, the TypeError escaped
    the compiled function."""
    def each_misuse(x):
        messages = []
        for make in (lambda: super(int, "a"), lambda: super(3, "a"), lambda: super(int, str),
                     lambda: super(int, 1, 2), lambda: super(type=int)):
            try:
                make()
            except TypeError as e:
                messages.append(str(e))
        super(type, int)  # (a class as the second argument: an instance of type)
        return x + _SuperDerived().value(), messages

    def broken_after(x):
        try:
            made = super(int, "a")
            return x, repr(made)  # (a graph break)
        except TypeError as e:
            return x + 1, str(e)

    x = torch.arange(3.0)
    _agree(each_misuse, (x,), (x + 1,), fullgraph=True)
    _agree(broken_after, (x,), (x + 1,))


class _Point:
    def __init__(self, x):
        self.x = x

    def __str__(self):
        return f"P({self.x})"

    def __repr__(self):
        return f"Point<{self.x!r}>"


class _OnlyRepr:
    def __repr__(self):
        return "only-repr"


@dataclasses.dataclass
class _Pair:
    a: int
    b: str


@dataclasses.dataclass
class _Node:
    next: object = None


def test_text_of_frame_made_objects_traces_their_python_methods() -> None:
    """`str`, `repr` and f-strings of objects made in the frame inline the class's own
    `__str__`/`__repr__` (a dataclass's generated `__repr__` too): one graph, eager's text."""

    def fn(x):
        p, d = _Point(x.shape[0]), _Pair(1, "q")
        return x + 1, str(p), repr(p), f"{p} {p!r} {p!s:>6}", str(_OnlyRepr()), repr(d), str(d)

    backend, graphs = counting_backend("eager")
    x = torch.ones(2)
    assert dynamo.compile(fn, backend=backend, fullgraph=True)(x)[1:] == fn(x)[1:]
    assert len(graphs) == 1


def test_text_that_shows_identity_or_recursion_breaks_with_eager_text() -> None:
    class ById:
        def __repr__(self):
            return f"<ById at {id(self):x}>"

    def by_id(x):
        obj = ById()
        return x + 1, repr(obj) == f"<ById at {id(obj):x}>"

    def recursive(x):
        node = _Node()
        node.next = node
        return x + 1, repr(node)

    x = torch.ones(2)
    for fn, reason in ((by_id, "id() of"), (recursive, "nest deeper")):
        assert dynamo.compile(fn)(x)[1:] == fn(x)[1:]
        assert reason in str(dynamo.explain(fn)(x).breaks[0])


class _CountingRepr:
    def __init__(self, text):
        self.calls, self.text = 0, text

    def __repr__(self):
        self.calls += 1
        return self.text


def test_an_inlined_repr_runs_its_side_effects_once_per_call() -> None:
    """Each `str`/`repr`/f-string runs the method once, as eager; one that returns no string
    raises eager's TypeError after its side effect."""

    def fn(x, text):
        obj = _CountingRepr(text)
        try:
            shown = [repr(obj), str(obj), f"{obj}", f"{obj!r:>4}"]
        except TypeError as e:
            shown = [str(e)]
        return x + 1, shown, obj.calls

    x = torch.ones(2)
    _agree(fn, (x, "a"), (x, "b"), (x, 3), (x, "a"))
