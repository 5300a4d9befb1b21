"""Stale caches: what a compiled function read while tracing, changed after compiling, must
be seen on the next call (a failed guard, a new compilation), as eager sees it, and the
unchanged case must not recompile. Each test compiles, calls twice, changes one thing, and
compares the compiled call with eager: a method replaced on a class (static, class, reached
through `super()`), a function of torch or a constant of `math` replaced, a setting of torch's
global state changed."""

from __future__ import annotations

import enum
import math
import operator
import typing
import warnings

import pytest
import torch
import torch.nn.functional as F

import dynamo
from dynamo.backends import lookup_backend


def _stale_check(fn, args, change, *, backend="eager"):
    """Compile `fn`, call it twice (one compilation), `change()`, then call it: the result
    equals eager's, after one new compilation, and a further call reuses it."""
    graphs = []
    compile_graph = lookup_backend(backend)

    def counting(gm, inputs):
        graphs.append(gm)
        return compile_graph(gm, inputs)

    compiled = dynamo.compile(fn, backend=counting)
    for _ in range(2):
        assert torch.equal(compiled(*args), fn(*args))
    assert len(graphs) == 1, "an unchanged call recompiled"
    change()
    expected = fn(*args)
    for _ in range(2):
        assert torch.equal(compiled(*args), expected)
    assert len(graphs) == 2, f"{len(graphs)} compilations"


# ----- 1. static and class methods replaced on a class -------------------------------------


class St:
    @staticmethod
    def s(t):
        return t + 1


class Cm:
    k = 1

    @classmethod
    def c(cls, t):
        return t + cls.k


class CmChild(Cm):
    pass


def test_staticmethod_replaced_on_the_class(monkeypatch) -> None:
    _stale_check(lambda x: St.s(x), (torch.ones(2),),
                 lambda: monkeypatch.setattr(St, "s", staticmethod(lambda t: t + 2)))


def test_classmethod_replaced_on_the_class(monkeypatch) -> None:
    _stale_check(lambda x: Cm.c(x), (torch.ones(2),),
                 lambda: monkeypatch.setattr(Cm, "c", classmethod(lambda cls, t: t + 2)))


def test_classmethod_shadowed_by_a_subclass_later(monkeypatch) -> None:
    _stale_check(lambda x: CmChild.c(x), (torch.ones(2),),
                 lambda: monkeypatch.setattr(CmChild, "c", classmethod(lambda cls, t: t * 5),
                                             raising=False))


def test_class_attribute_read_in_a_classmethod_of_an_instance(monkeypatch) -> None:
    # `o.c(x)` reads `cls.k`: the class comes with a source, so `k` is guarded
    _stale_check(lambda x, o: o.c(x), (torch.ones(2), Cm()),
                 lambda: monkeypatch.setattr(Cm, "k", 7))


class ScaledModule(torch.nn.Module):
    factor = 2

    @classmethod
    def scale(cls, t):
        return t * cls.factor

    def forward(self, t):
        return self.scale(t)


class Knob:
    """A descriptor whose value lives in the descriptor object."""

    def __init__(self, v: float) -> None:
        self.v = v

    def __get__(self, obj, owner=None):
        return self.v


class KnobModule(torch.nn.Module):
    knob = Knob(2.0)

    def forward(self, t):
        return t * self.knob


def test_class_attribute_read_in_a_classmethod_of_a_module(monkeypatch) -> None:
    # A module's methods are not guarded (a guard per layer), but what they read from the
    # class is
    _stale_check(ScaledModule(), (torch.ones(2),),
                 lambda: monkeypatch.setattr(ScaledModule, "factor", 5))


def test_state_of_a_descriptor_on_a_module_class(monkeypatch) -> None:
    _stale_check(KnobModule(), (torch.ones(2),),
                 lambda: monkeypatch.setattr(KnobModule.__dict__["knob"], "v", 5.0))


# ----- 2. members of a base class reached through super() ---------------------------------


class Base:
    scale = 1.0

    def g(self, t):
        return t + 1

    @staticmethod
    def s(t):
        return t + 1

    @classmethod
    def c(cls, t):
        return t + 1

    @property
    def p(self):
        return 1

    def __repr__(self) -> str:
        return "Base"


class Middle(Base):
    pass


class Der(Middle):
    def g(self, t):
        return super().g(t) * 2

    @staticmethod
    def s(t):
        return t

    def uses_static(self, t):
        return super().s(t) * 2

    def uses_class(self, t):
        return super().c(t) * 2

    def uses_property(self, t):
        return t + super().p

    def uses_attribute(self, t):
        return t * super().scale


@pytest.mark.parametrize("method, name, replacement", [
    ("g", "g", lambda self, t: t - 1),
    ("uses_static", "s", staticmethod(lambda t: t - 1)),
    ("uses_class", "c", classmethod(lambda cls, t: t - 1)),
    ("uses_property", "p", property(lambda self: 5)),
    ("uses_attribute", "scale", 3.0),
])
def test_base_member_through_super_replaced(monkeypatch, method, name, replacement) -> None:
    _stale_check(lambda x, o: getattr(o, method)(x), (torch.ones(2), Der()),
                 lambda: monkeypatch.setattr(Base, name, replacement))


def test_base_method_through_super_shadowed_by_a_class_in_between(monkeypatch) -> None:
    _stale_check(lambda x, o: o.g(x), (torch.ones(2), Der()),
                 lambda: monkeypatch.setattr(Middle, "g", lambda self, t: t * 10, raising=False))


def test_super_in_an_object_made_by_the_trace(monkeypatch) -> None:
    _stale_check(lambda x: Der().g(x), (torch.ones(2),),
                 lambda: monkeypatch.setattr(Base, "g", lambda self, t: t - 1))


# ----- 3. queries of torch's global state ------------------------------------------------


def _set_flag(backend, value, name: str = "enabled") -> None:
    # torch's OpInfo test utilities (imported by other tests in the same worker) forbid
    # setting backend flags outside their own context manager, which does this:
    with torch.backends.__allow_nonbracketed_mutation():
        setattr(backend, name, value)


STATE_CASES = [
    ("is_anomaly_enabled", lambda x: x + torch.is_anomaly_enabled(),
     torch.is_anomaly_enabled, lambda v: torch.autograd.set_detect_anomaly(v), True),
    ("get_float32_matmul_precision",
     lambda x: x + (torch.get_float32_matmul_precision() == "high"),
     torch.get_float32_matmul_precision, torch.set_float32_matmul_precision, "high"),
    ("backends.cudnn.enabled", lambda x: x + torch.backends.cudnn.enabled,
     lambda: torch.backends.cudnn.enabled,
     lambda v: _set_flag(torch.backends.cudnn, v), False),
    ("backends.mkldnn.enabled", lambda x: x + torch.backends.mkldnn.enabled,
     lambda: torch.backends.mkldnn.enabled,
     lambda v: _set_flag(torch.backends.mkldnn, v), False),
    ("get_num_threads", lambda x: x + torch.get_num_threads(),
     torch.get_num_threads, torch.set_num_threads, torch.get_num_threads() + 1),
    ("initial_seed", lambda x: x + torch.initial_seed() % 1000,
     torch.initial_seed, torch.manual_seed, 1234),
    ("is_warn_always_enabled", lambda x: x + torch.is_warn_always_enabled(),
     torch.is_warn_always_enabled, torch.set_warn_always, True),
    ("get_deterministic_debug_mode", lambda x: x + torch.get_deterministic_debug_mode(),
     torch.get_deterministic_debug_mode, torch.set_deterministic_debug_mode, 1),
    ("is_autocast_cache_enabled", lambda x: x + torch.is_autocast_cache_enabled(),
     torch.is_autocast_cache_enabled, torch.set_autocast_cache_enabled, False),
    ("get_autocast_dtype", lambda x: x + (torch.get_autocast_dtype("cpu") == torch.float16),
     lambda: torch.get_autocast_dtype("cpu"),
     lambda v: torch.set_autocast_dtype("cpu", v), torch.float16),
    # a getter answering a pair of flags, a getter taking the setting's names
    ("allow_bf16_reduced_precision_reduction",
     lambda x: x + torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction,
     lambda: torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction,
     lambda v: setattr(torch.backends.cuda.matmul,
                       "allow_bf16_reduced_precision_reduction", v),
     not torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction),
    ("cudnn.conv.fp32_precision",
     lambda x: x + (torch.backends.cudnn.conv.fp32_precision == "ieee"),
     lambda: torch.backends.cudnn.conv.fp32_precision,
     lambda v: _set_flag(torch.backends.cudnn.conv, v, "fp32_precision"), "ieee"),
]


@pytest.mark.parametrize("case", STATE_CASES, ids=[c[0] for c in STATE_CASES])
def test_torch_state_query_is_guarded(case) -> None:
    _, fn, get, set_, value = case
    old = get()
    seed = torch.initial_seed()
    try:
        _stale_check(fn, (torch.zeros(1),), lambda: set_(value))
    finally:
        set_(old)
        torch.manual_seed(seed)



def test_the_attention_kernel_flags_are_guarded() -> None:
    # `sdpa_kernel` picks the kernel scaled_dot_product_attention runs; aot_eager's aten graph
    # holds the one chosen when it was traced (the flash kernel ran under the math block, and
    # ran where eager raises: no kernel of those allowed runs on the CPU)
    from torch.nn.attention import SDPBackend, sdpa_kernel

    q, k, v = (torch.randn(2, 4, 64, 32) for _ in range(3))

    def f(q):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)

    math = sdpa_kernel(SDPBackend.MATH)
    _stale_check(f, (q,), math.__enter__, backend="aot_eager")
    math.__exit__(None, None, None)
    compiled = dynamo.compile(f, backend="aot_eager")
    compiled(q)
    with sdpa_kernel(SDPBackend.EFFICIENT_ATTENTION), pytest.raises(RuntimeError):
        f(q)
    with sdpa_kernel(SDPBackend.EFFICIENT_ATTENTION), pytest.raises(RuntimeError):
        compiled(q)

def test_inference_mode_query_is_guarded() -> None:
    # under no_grad and under inference_mode the grad mode is the same (off)
    def f(x):
        return x + torch.is_inference_mode_enabled()

    compiled = dynamo.compile(f, backend="eager")
    x = torch.zeros(1)
    with torch.no_grad():
        assert compiled(x).item() == 0
    with torch.inference_mode():
        assert compiled(x).item() == 1


def test_inference_mode_query_inside_a_traced_block() -> None:
    # the block decides the answer: no guard on the frame's start (which says otherwise)
    def f(x):
        with torch.inference_mode():
            flag = torch.is_inference_mode_enabled()
        return x + flag

    compiled = dynamo.compile(f, backend="eager", fullgraph=True)
    x = torch.zeros(1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # not run eagerly for guards that fail at once
        assert compiled(x).item() == 1
        assert compiled(x).item() == 1


def test_fixed_queries_add_no_guard() -> None:
    def f(x):
        if torch.jit.is_scripting() or torch.jit.is_tracing():
            return x
        return x + torch.cuda.is_available()

    report = dynamo.explain(f)(torch.zeros(1))
    assert not [g for g in report.guards if "()" in g and "global state" not in g]


# ----- 4. functions and constants of torch, math, operator replaced ---------------------------


def test_torch_nn_functional_replaced(monkeypatch) -> None:
    _stale_check(lambda x: F.gelu(x), (torch.randn(3),),
                 lambda: monkeypatch.setattr(F, "gelu", lambda t, **k: t * 0))


def test_torch_function_replaced_aot_eager(monkeypatch) -> None:
    _stale_check(lambda x: torch.sigmoid(x), (torch.randn(3),),
                 lambda: monkeypatch.setattr(torch, "sigmoid", lambda t: t * 0),
                 backend="aot_eager")


def test_math_constant_changed(monkeypatch) -> None:
    _stale_check(lambda x: x * math.pi, (torch.randn(3),),
                 lambda: monkeypatch.setattr(math, "pi", 3.0))


def test_operator_function_replaced(monkeypatch) -> None:
    _stale_check(lambda x: operator.mul(x, 2), (torch.randn(3),),
                 lambda: monkeypatch.setattr(operator, "mul", lambda a, b: a + b))


def test_module_imported_inside_the_function(monkeypatch) -> None:
    def f(x):
        import math as m

        return x * m.e

    _stale_check(f, (torch.randn(3),), lambda: monkeypatch.setattr(math, "e", 2.0))


def test_torch_function_replaced_under_a_torch_module(monkeypatch) -> None:
    # nn.GELU's forward reads `F.gelu` through its own module's `F`
    act = torch.nn.GELU()
    _stale_check(lambda x: act(x), (torch.randn(3),),
                 lambda: monkeypatch.setattr(F, "gelu", lambda t, **k: t * 0))


def test_each_torch_attribute_is_guarded_once() -> None:
    def f(x):
        return F.relu(x) + torch.nn.functional.relu(x) + torch.nn.ReLU()(x) + F.relu(x)

    guards = dynamo.explain(f)(torch.randn(3)).guards
    assert len([g for g in guards if ".relu is the " in g]) == 1, guards


# ----- found by probing: global state, literals that are not plain, members of their own ---

def test_the_default_device_mode_and_inference_mode_are_guarded() -> None:
    def f(x):
        y = x * 2
        return torch.ones(2).device.type, y.is_inference()

    dynamo.reset()
    compiled = dynamo.compile(f)
    x = torch.ones(2)
    for context in (torch.device("meta"), torch.device("cpu"), torch.no_grad(),
                    torch.inference_mode()):
        with context:
            assert compiled(x) == f(x)


def test_equal_constants_built_anew_do_not_recompile() -> None:
    import collections

    class Kind(enum.Enum):
        A = 1

    Pair = collections.namedtuple("Pair", "a b")
    graphs = []

    def backend(gm, inputs):
        graphs.append(gm)
        return gm.forward

    def f(x, index, pair, kind, z):
        return x[index] * pair.a + (kind is Kind.A) + z.real

    dynamo.reset()
    compiled = dynamo.compile(f, backend=backend)
    x = torch.randn(3, 4)
    for _ in range(4):  # each a fresh, equal object
        args = (x, (slice(None), 1), Pair(2, 3), Kind.A, complex(2, 1))
        assert torch.equal(compiled(*args), f(*args))
    assert len(graphs) == 1


class _Scaled(int):
    scale = 2

    def __mul__(self, other):
        return int(self) * self.scale * other


class _Mode(enum.Enum):
    FAST = 1

    def factor(self):
        return _FACTOR[0]


_FACTOR = [2]


def test_attributes_of_int_subclasses_and_enum_methods_are_read_each_call() -> None:
    def f(x, n, mode):
        return x * (n * 1) + mode.factor()

    def change():
        _Scaled.scale = 5
        _FACTOR[0] = 7

    x, n = torch.ones(2), _Scaled(3)
    dynamo.reset()
    compiled = dynamo.compile(f)
    for _ in range(2):
        torch.testing.assert_close(compiled(x, n, _Mode.FAST), f(x, n, _Mode.FAST))
    change()
    torch.testing.assert_close(compiled(x, n, _Mode.FAST), f(x, n, _Mode.FAST))


def test_a_set_grad_enabled_object_and_a_partial_subclass_from_the_frame() -> None:
    import functools

    class Bound(functools.partial):
        pass

    def f(x, context, p):
        with context:
            y = x * 2
        return y.requires_grad, p(y)

    x = torch.ones(2, requires_grad=True)
    dynamo.reset()
    compiled = dynamo.compile(f)
    for flag in (True, False, True):
        got, expected = compiled(x, torch.set_grad_enabled(flag), Bound(torch.mul, 3)), \
            f(x, torch.set_grad_enabled(flag), Bound(torch.mul, 3))
        assert got[0] == expected[0]
        torch.testing.assert_close(got[1], expected[1])


def test_a_container_or_object_passed_twice_after_two_apart() -> None:
    """Compiled with two lists (objects), called with one twice: a write through the first is
    read through the second, so the compiled code assuming them apart must not be reused."""
    class Box:
        def __init__(self):
            self.k = 1

    def lists(x, a, b):
        a.append(1)
        return x * len(b)

    def objects(x, a, b):
        a.k = 5
        return x * b.k

    x = torch.ones(2)
    for fn, make in ((lists, list), (objects, Box)):
        dynamo.reset()
        compiled = dynamo.compile(fn)
        for shared in (False, True, False, True):
            a = make()
            b = a if shared else make()
            a2 = make()
            b2 = a2 if shared else make()
            torch.testing.assert_close(compiled(x, a, b), fn(x, a2, b2))


# ----- a module's class, a function's code, a partial's arguments, a set's order -----------


class _Plus(torch.nn.Module):
    def forward(self, x):
        return x + 1


class _Times(torch.nn.Module):
    def forward(self, x):
        return x * 100


class _Holder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = _Plus()

    def forward(self, x):
        return self.inner(x)


def test_a_submodules_class_reassigned() -> None:
    model = _Holder()

    def change():
        model.inner.__class__ = _Times

    _stale_check(model, (torch.ones(3),), change)


def test_a_compiled_functions_code_replaced() -> None:
    """IPython's autoreload replaces `__code__`: of a compiled function, of a callee compiled on
    its own at a break."""
    def f(x):
        return x + 1

    def broken(x):
        x = x + 1
        print(end="")
        return x * 2

    def outer(x):
        return broken(x) + 1

    x = torch.ones(3)
    compiled = [dynamo.compile(fn, backend="eager") for fn in (f, outer)]
    for fn, c in zip((f, outer), compiled):
        assert torch.equal(c(x), fn(x))
    f.__code__ = broken.__code__ = (lambda x: x * 3).__code__
    for fn, c in zip((f, outer), compiled):
        assert torch.equal(c(x), fn(x))


def test_a_compiled_partials_keywords_and_a_callable_objects_call() -> None:
    import functools

    def scaled(x, k):
        return x * k

    class Callable:
        def __call__(self, x):
            return x + 1

    partial, obj = functools.partial(scaled, k=2), Callable()
    compiled_partial = dynamo.compile(partial, backend="eager")
    compiled_obj = dynamo.compile(obj, backend="eager")
    x = torch.ones(2)
    assert torch.equal(compiled_partial(x), partial(x)) and torch.equal(compiled_obj(x), obj(x))
    partial.keywords["k"] = 5
    Callable.__call__ = lambda self, x: x * 100
    assert torch.equal(compiled_partial(x), partial(x)) and torch.equal(compiled_obj(x), obj(x))


@pytest.mark.parametrize("kind", [set, frozenset])
def test_equal_sets_that_iterate_in_another_order(kind) -> None:
    def first(x, s):
        return x * next(iter(s))

    one_nine, nine_one = kind([1, 9]), kind([9, 1])
    assert list(one_nine) != list(nine_one)  # 1 and 9 share a slot: insertion order decides
    compiled = dynamo.compile(first, backend="eager")
    x = torch.ones(2)
    for s in (one_nine, nine_one):
        assert torch.equal(compiled(x, s), first(x, s))


@pytest.mark.parametrize("register", ["register_full_backward_hook",
                                      "register_full_backward_pre_hook"])
def test_a_backward_hook_added_to_a_submodule_after_compiling_is_called(register) -> None:
    """A submodule with backward hooks breaks the graph; one without is guarded to have none,
    so a hook added later (here zeroing the gradient) is seen."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU(), torch.nn.Linear(4, 4))
    compiled = dynamo.compile(model, backend="eager")
    x = torch.randn(3, 4, requires_grad=True)
    compiled(x).sum().backward()
    getattr(model[0], register)(lambda module, grads, *rest: (grads[0] * 0,))
    grads = []
    for run in (compiled, model):
        x.grad = None
        run(x).sum().backward()
        grads.append(x.grad)
    assert grads[1].abs().sum() == 0
    torch.testing.assert_close(grads[0], grads[1])


def test_reordering_a_module_dicts_keys_recompiles() -> None:
    """Iterating a ModuleDict reads its keys in order: the same keys reordered must not
    reuse the old order."""
    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = torch.nn.ModuleDict({"twice": torch.nn.Identity(),
                                               "plus": torch.nn.Identity()})
            self.ops = {"twice": lambda t: t * 2, "plus": lambda t: t + 1}

        def forward(self, x):
            for name in self.blocks:
                x = self.ops[name](self.blocks[name](x))
            return x

    model, x = Model(), torch.ones(2)
    compiled = dynamo.compile(model, backend="eager")
    torch.testing.assert_close(compiled(x), model(x))
    model.blocks["twice"] = model.blocks.pop("twice")
    torch.testing.assert_close(compiled(x), model(x))


def test_a_graph_module_submodule_recompiled_after_compiling_is_seen() -> None:
    """A GraphModule is a class of its own, whose `recompile()` replaces its forward: the new
    graph is what runs (torch.compile returns the old graph's result here)."""
    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = torch.nn.Linear(4, 4)

        def forward(self, x):
            return torch.relu(self.linear(x))

    class Outer(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.sub = torch.fx.symbolic_trace(Block())

        def forward(self, x):
            return self.sub(x) * 2

    model, x = Outer(), torch.randn(3, 4)
    compiled = dynamo.compile(model, backend="eager")
    torch.testing.assert_close(compiled(x), model(x))
    for node in model.sub.graph.nodes:
        if node.target is torch.relu:
            node.target = torch.sigmoid
    model.sub.recompile()
    torch.testing.assert_close(compiled(x), model(x))


def test_a_backward_hook_added_after_a_no_grad_compilation_is_called_with_grad() -> None:
    """Compiled under no_grad, a submodule's backward hooks are not guarded (they change
    nothing there); a call with grad is another compilation, which sees the hook."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU(), torch.nn.Linear(4, 4))
    compiled = dynamo.compile(model, backend="eager")
    x = torch.randn(3, 4, requires_grad=True)
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), model(x))
    calls = []
    model[0].register_full_backward_hook(lambda *args: calls.append(1))
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), model(x))
    compiled(x).sum().backward()
    assert calls == [1]


# ----- a named tuple of constants: its methods read globals, and may be replaced ------------


_PAIR_FACTOR = 2


class _Pair(typing.NamedTuple):
    a: int
    b: int

    def scaled(self):
        return (self.a + self.b) * _PAIR_FACTOR

    @property
    def total(self):
        return self.a + self.b + _PAIR_FACTOR


def test_a_named_tuple_of_constants_reads_the_globals_of_its_methods(monkeypatch) -> None:
    pair = _Pair(1, 2)
    _stale_check(lambda x: x * pair.scaled() + pair.total, (torch.ones(2),),
                 lambda: monkeypatch.setitem(globals(), "_PAIR_FACTOR", 5))


def test_a_method_of_a_named_tuple_of_constants_replaced_on_the_class(monkeypatch) -> None:
    pair = _Pair(1, 2)
    _stale_check(lambda x: x * pair.scaled(), (torch.ones(2),),
                 lambda: monkeypatch.setattr(_Pair, "scaled", lambda self: self.a * 100))


class _Size(enum.Enum):
    SMALL = 1
    LARGE = 2

    def factor(self):
        return self.value * 2

    @property
    def offset(self):
        return self.value + 1


def test_a_method_of_an_enum_replaced_on_the_class(monkeypatch) -> None:
    mode = _Size.SMALL
    _stale_check(lambda x: x * mode.factor(), (torch.ones(2),),
                 lambda: monkeypatch.setattr(_Size, "factor", lambda self: 100))


def test_a_property_of_an_enum_replaced_on_the_class(monkeypatch) -> None:
    mode = _Size.LARGE
    _stale_check(lambda x: x + mode.offset, (torch.ones(2),),
                 lambda: monkeypatch.setattr(_Size, "offset", property(lambda self: -7)))


def test_enum_member_attribute_changed_recompiles() -> None:
    """An attribute an enum member holds of its own (set by the enum's `__init__`) is guarded:
    members are singletons, but their attributes may change."""

    class Act(enum.Enum):
        RELU = (1, 0.5)
        GELU = (2, 1.5)

        def __init__(self, code, scale):
            self.scale = scale
            self.table = {"k": 1}

    def f(x, act):
        return x * act.scale + act.table["k"]

    x = torch.ones(2)
    cf = dynamo.compile(f, backend="eager")
    assert torch.equal(cf(x, Act.RELU), f(x, Act.RELU))
    Act.RELU.scale = 10.0
    assert torch.equal(cf(x, Act.RELU), f(x, Act.RELU))
    Act.RELU.table["k"] = 100
    assert torch.equal(cf(x, Act.RELU), f(x, Act.RELU))
    assert torch.equal(cf(x, Act.GELU), f(x, Act.GELU))


def _shadowed(x):
    return abs(x) + 1


def test_a_global_made_later_that_shadows_a_builtin(monkeypatch) -> None:
    """A name found among the builtins is guarded missing from the globals: a global of that
    name defined after compiling is seen (torch.compile keeps using the builtin)."""
    _stale_check(_shadowed, (-torch.ones(2),),
                 lambda: monkeypatch.setitem(globals(), "abs", lambda t: t * 100))


def _reads_abs(x):
    return abs(x) + 1


def test_a_builtin_replaced_after_compiling(monkeypatch) -> None:
    """The builtin a name was found to be is guarded itself (`builtins.abs = ...`), as
    torch.compile guards it."""
    import builtins

    _stale_check(_reads_abs, (-torch.ones(2),),
                 lambda: monkeypatch.setattr(builtins, "abs", lambda t: t * 100))


def test_a_custom_builtins_dict_changed_after_compiling() -> None:
    """Code `exec`'d with a `__builtins__` dict of its own reads its builtins from it: an entry
    changed after compiling is seen."""
    import builtins

    table = dict(vars(builtins))
    table["abs"] = lambda t: t + 7
    namespace = {"__builtins__": table}
    exec("def f(x):\n    return abs(x) + 1\n", namespace)
    _stale_check(namespace["f"], (-torch.ones(2),),
                 lambda: table.__setitem__("abs", lambda t: t * 100))


def _with_a_function_live_at_a_break(x, k, flag):
    scale = (lambda v, k=k: v * k) if flag else (lambda v: v * 3)
    y = x.sum().item()  # a break while `scale` is live
    return scale(x + y)


def test_a_function_made_in_the_frame_and_live_at_a_break_is_told_by_its_code() -> None:
    """A lambda made anew on each call and handed to the resume function was guarded by
    identity: the code after the break compiled on every call, without end (entries for gone
    functions are dropped). It is guarded by its code (and its defaults when read)."""
    graphs = []
    compiled = dynamo.compile(_with_a_function_live_at_a_break,
                              backend=lambda gm, _: graphs.append(gm) or gm.forward)
    for k, flag in [(2, True)] * 6 + [(3, True), (3, False), (2, True), (3, False)]:
        x = torch.ones(2)
        assert torch.equal(compiled(x, k, flag), _with_a_function_live_at_a_break(x, k, flag))
    assert len(graphs) <= 6



_FIRST_MADE = None


def _comparing_with_the_first_made(x):
    global _FIRST_MADE
    fn = lambda v: v  # noqa: E731
    if _FIRST_MADE is None:
        _FIRST_MADE = fn
    y = x.sum().item()  # a break while `fn` is live
    return x + y + (fn is _FIRST_MADE) * 10 + (fn == _FIRST_MADE) * 100 + \
        {_FIRST_MADE: 1000}.get(fn, 0)


def test_functions_made_per_call_compared_by_identity_are_pinned() -> None:
    """Told by their code, the first call's function and a later one pass each other's guards:
    where the code asks which object one is (`is`, `==`, a dict key), its identity is guarded
    (the later calls answered True, as the first)."""
    global _FIRST_MADE
    compiled = dynamo.compile(_comparing_with_the_first_made, backend="eager")
    got = [compiled(torch.ones(1)).item() for _ in range(3)]
    _FIRST_MADE = None
    assert got == [_comparing_with_the_first_made(torch.ones(1)).item() for _ in range(3)] \
        == [1112.0, 2.0, 2.0]


def _made_by(k):
    def scale(v):
        return v * k
    return scale


_REGISTERED = {"h": _made_by(2)}


def test_which_function_made_per_call_is_asked_is_guarded_by_identity() -> None:
    """A function made per call is guarded by its code: where the code asks which object it is
    (`is`, `==`, a dict key, a set, `in`, `list.index`), the answer holds for that object only."""
    a, b = _REGISTERED["h"], _made_by(2)
    fns = [
        lambda x, fn: x + (1 if fn is _REGISTERED["h"] else 0),
        lambda x, fn: x + (1 if fn == a else 0),
        lambda x, fn: x + {a: 1, b: 2}[fn],
        lambda x, fn: x + len({fn, a}),
        lambda x, fn: x + (1 if fn in [a] else 0),
        lambda x, fn: x + [a, b].index(fn),
    ]
    for fn in fns:
        compiled = dynamo.compile(fn, backend="eager")
        for f in (a, b, a):
            assert torch.equal(compiled(torch.ones(2), f), fn(torch.ones(2), f))


def _in_a_set(t):
    return t


def test_a_function_is_found_in_a_set_of_functions() -> None:
    """`fn in {fn}` and `list(s)[0] is fn`: the set's items are constants, the function a
    tracker of its own; the two are compared by which object the function is (it was False)."""
    a, b = _REGISTERED["h"], _made_by(2)
    fns = [
        lambda x, fn: x + (1 if _in_a_set in {_in_a_set} else 0),
        lambda x, fn: x + (1 if _in_a_set in set([_in_a_set, torch.relu]) else 0),
        lambda x, fn: x + (1 if list({_in_a_set})[0] is _in_a_set else 0),
        lambda x, fn: x + (1 if fn in {a} else 0),
        lambda x, fn: x + (1 if next(iter({a})) == fn else 0),
    ]
    for fn in fns:
        compiled = dynamo.compile(fn, backend="eager", fullgraph=True)
        for f in (a, b, a):
            assert torch.equal(compiled(torch.ones(2), f), fn(torch.ones(2), f))


# ----- a class's __match_args__ and a descriptor's __get__ replaced -------------------------


class Matched:
    __match_args__ = ("a",)

    def __init__(self):
        self.a, self.b = 1, 2


def _match_first(x, obj):
    match obj:
        case Matched(1):
            return x + 1
        case _:
            return x - 1


def test_match_args_replaced_on_the_class(monkeypatch) -> None:
    obj = Matched()
    _stale_check(lambda x: _match_first(x, obj), (torch.ones(2),),
                 lambda: monkeypatch.setattr(Matched, "__match_args__", ("b",)))


def test_match_args_made_a_list_raises_as_eager(monkeypatch) -> None:
    """CPython refuses a `__match_args__` that is no tuple (found by the fuzzer, seed 3892:
    the trace matched by the list's names)."""
    obj = Matched()
    compiled = dynamo.compile(lambda x: _match_first(x, obj), backend="eager")
    assert torch.equal(compiled(torch.ones(2)), torch.full((2,), 2.0))
    monkeypatch.setattr(Matched, "__match_args__", ["a"])
    for fn in (lambda x: _match_first(x, obj), compiled):
        with pytest.raises(TypeError, match="must be a tuple"):
            fn(torch.ones(2))


class Getter:
    def __get__(self, obj, owner):
        return 1


class HoldsGetter:
    d = Getter()


def test_a_descriptors_get_replaced_on_its_class(monkeypatch) -> None:
    obj = HoldsGetter()
    _stale_check(lambda x: x + obj.d, (torch.ones(2),),
                 lambda: monkeypatch.setattr(Getter, "__get__", lambda self, o, t: 8))


@pytest.mark.parametrize("read", [lambda obj: HoldsGetter.d, lambda obj: type(obj).d])
def test_a_descriptors_get_replaced_read_on_the_class(monkeypatch, read) -> None:
    obj = HoldsGetter()
    _stale_check(lambda x: x + read(obj), (torch.ones(2),),
                 lambda: monkeypatch.setattr(Getter, "__get__", lambda self, o, t: 8))


def test_a_data_descriptor_loses_its_set(monkeypatch) -> None:
    """Without `__set__`, the instance's attribute shadows the descriptor (found by the
    fuzzer, seed 69689: the trace of the data descriptor kept answering)."""
    obj = HoldsGetter()
    obj.__dict__["d"] = 2
    monkeypatch.setattr(Getter, "__set__", lambda self, o, v: None, raising=False)
    _stale_check(lambda x: x + getattr(obj, "d", 0), (torch.ones(2),),
                 lambda: monkeypatch.delattr(Getter, "__set__"))


# ----- a "no" about an object's attribute, and its class gains the attribute ---------------


class _Bare:
    pass


class _BareChild(_Bare):
    pass


class _Delegates:
    def __getattr__(self, name):
        return 9


def _getattr_default(x, o):
    return x + getattr(o, "zz", 5)


def _hasattr(x, o):
    return x + (1 if hasattr(o, "zz") else 0)


def _except_attribute_error(x, o):
    try:
        return x + o.zz
    except AttributeError:
        return x + 5


@pytest.mark.parametrize("answer", [_getattr_default, _hasattr, _except_attribute_error])
@pytest.mark.parametrize("added", [("zz", 7), ("__getattr__", lambda self, name: 9)])
@pytest.mark.parametrize("where", [_BareChild, _Bare])
def test_an_attribute_added_to_the_class_after_a_no(monkeypatch, answer, added, where) -> None:
    """The class (or a base) gains the attribute, or a `__getattr__`, that the object lacked:
    as torch.compile sees it for getattr and hasattr (not for `except AttributeError`)."""
    _stale_check(answer, (torch.ones(2), _BareChild()),
                 lambda: monkeypatch.setattr(where, *added, raising=False))


def test_an_attribute_added_to_the_class_of_an_object_made_in_the_frame(monkeypatch) -> None:
    _stale_check(lambda x: _hasattr(x, _Bare()), (torch.ones(2),),
                 lambda: monkeypatch.setattr(_Bare, "zz", 7, raising=False))


def test_an_attribute_added_to_the_class_shadows_its_getattr(monkeypatch) -> None:
    _stale_check(_getattr_default, (torch.ones(2), _Delegates()),
                 lambda: monkeypatch.setattr(_Delegates, "zz", 7, raising=False))


@pytest.mark.parametrize("answer", [_getattr_default, _hasattr, _except_attribute_error])
def test_a_getattribute_added_to_the_class_is_traced(monkeypatch, answer) -> None:
    """Its answer is no module name: wrapping the object read `__module__` through it, a
    str method on an int, and the frame ran eagerly with that internal error."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _stale_check(answer, (torch.ones(2), _Bare()),
                     lambda: monkeypatch.setattr(_Bare, "__getattribute__", lambda self, n: 50,
                                                 raising=False))


# ----- an autograd.Function's forward replaced ---------------------------------------------


class _Twice(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2


def test_autograd_function_forward_replaced_on_the_class(monkeypatch) -> None:
    # the outputs' metadata came from the old forward (and a backend may compile its ops:
    # inductor_lite does for inputs that need no grad, integration_tests)
    _stale_check(lambda x: _Twice.apply(x) + 1, (torch.ones(2),),
                 lambda: monkeypatch.setattr(_Twice, "forward",
                                             staticmethod(lambda ctx, x: x * 5)))


# ----- the truth of an object, and its class gains __bool__ or __len__ ---------------------


class _Empty:
    def __len__(self):
        return 0


@pytest.mark.parametrize("cls, added", [(_Empty, ("__bool__", lambda self: True)),
                                        (_Bare, ("__bool__", lambda self: False)),
                                        (_Bare, ("__len__", lambda self: 0))])
def test_a_truth_method_added_to_the_class(monkeypatch, cls, added) -> None:
    """`if obj:` answered by `__len__` (or by neither method): `__bool__` (or `__len__`)
    added to the class since answers instead."""
    obj = cls()
    _stale_check(lambda x: x + (1 if obj else 0), (torch.ones(2),),
                 lambda: monkeypatch.setattr(cls, *added, raising=False))


# ----- closures of one code: each call's own cells ---------------------------------------------


def _call_at_break(fn):
    print(end="")  # a graph break: `fn` is made for real
    return fn()


def _wrapper_over(k):
    def wrapper(x):
        def push():  # closes over `k`, a cell of `wrapper`'s closure
            return x * k
        return _call_at_break(push)
    return wrapper


def test_function_made_over_a_closure_cell_passed_at_a_break() -> None:
    """A function the trace makes over a cell of the frame's closure, handed to a call at a
    graph break, gets this call's cell: closures of one code share the cache entry (as
    torch.func.jacfwd's wrapper does, made anew per call around the user's function)."""
    x = torch.ones(2)
    for k in range(3):
        wrapper = _wrapper_over(k)
        assert torch.equal(dynamo.compile(wrapper, backend="eager")(x), wrapper(x))


def _jacfwd_of_sin(x, w):
    return torch.func.jacfwd(lambda w: torch.sin(x @ w))(w)


def test_jacfwd_in_a_compiled_function() -> None:
    compiled = dynamo.compile(_jacfwd_of_sin, backend="eager")
    for _ in range(3):
        x, w = torch.randn(5, 3), torch.randn(3)
        torch.testing.assert_close(compiled(x, w), _jacfwd_of_sin(x, w))


def _counter():
    count = 0

    def bump(x):
        nonlocal count
        count += 1
        return x + count

    return bump, lambda: count


@pytest.mark.parametrize("inlined", [False, True])
def test_nonlocal_write_lands_in_this_closures_cell(inlined) -> None:
    """`nonlocal` written by a compiled closure (or by one inlined into a compiled frame) is
    written into the cell of the closure called, not into the first one compiled."""
    x = torch.zeros(1)
    (b1, n1), (b2, n2) = _counter(), _counter()
    if inlined:
        outer = dynamo.compile(lambda x, bump: bump(x) * 1, backend="eager")
        outer(x, b1), outer(x, b2)
    else:
        dynamo.compile(b1, backend="eager")(x), dynamo.compile(b2, backend="eager")(x)
    assert (n1(), n2()) == (1, 1)


def _functionalized(x):
    def f(x):
        y = x.clone()
        y.add_(1)
        return y * 2
    return torch.func.functionalize(f)(x) + 1


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_functionalize_in_a_compiled_function_leaves_no_transform_level(backend) -> None:
    """`functionalize`'s wrapper is inlined up to its `_func_increment_nesting`: that call, run
    while tracing, pushed a level onto functorch's real stack that nothing popped (the next
    call raised an internal assert, and every compiled call after ran eagerly)."""
    compiled = dynamo.compile(_functionalized, backend=backend)
    for _ in range(2):
        x = torch.randn(2, 3)
        torch.testing.assert_close(compiled(x), _functionalized(x))
        assert torch._C._functorch.peek_interpreter_stack() is None


# ----- a module's globals read through sys.modules, and class attributes of enum members ----


def test_a_function_of_a_module_imported_again_reads_the_old_modules_globals(tmp_path,
                                                                               monkeypatch):
    """`from mod import h` keeps the old module's function after `mod` is deleted from
    `sys.modules` and imported again: `h` reads the old dict, which the guards must read too
    (they read `sys.modules['mod']`, now the new module)."""
    import sys

    (tmp_path / "stale_reimported_mod.py").write_text(
        "MODE = 1\ndef h(x):\n    return x * MODE\ndef set_mode(v):\n"
        "    global MODE\n    MODE = v\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "stale_reimported_mod", raising=False)
    from stale_reimported_mod import h, set_mode

    def f(x):
        return h(x) + 1

    compiled = dynamo.compile(f, backend="eager")
    x = torch.ones(2)
    assert torch.equal(compiled(x), f(x))
    del sys.modules["stale_reimported_mod"]
    import stale_reimported_mod  # noqa: F401 (a new module object, MODE = 1)

    assert torch.equal(compiled(x), f(x))
    set_mode(5)  # the old module's MODE, which h reads
    assert torch.equal(compiled(x), f(x))


class _ScaledMode(enum.Enum):
    A = 1

    def scale(self):
        return type(self).K


_ScaledMode.K = 3


class _ScaledPair(typing.NamedTuple):
    a: int
    b: int

    def scale(self):
        return type(self).K * self.a


_ScaledPair.K = 3


@pytest.mark.parametrize("read", [lambda m: m.scale(), lambda m: m.K, lambda m: type(m).K,
                                  lambda m: m.__class__.K])
def test_a_class_attribute_read_through_an_enum_member(monkeypatch, read) -> None:
    def fn(x, m):
        return x * read(m)

    _stale_check(fn, (torch.ones(2), _ScaledMode.A),
                 lambda: monkeypatch.setattr(_ScaledMode, "K", 7))


@pytest.mark.parametrize("read", [lambda p: p.scale(), lambda p: type(p).K, lambda p: p.K])
def test_a_class_attribute_read_through_a_named_tuple_of_constants(monkeypatch, read) -> None:
    def fn(x, p):
        return x * read(p)

    _stale_check(fn, (torch.ones(2), _ScaledPair(1, 2)),
                 lambda: monkeypatch.setattr(_ScaledPair, "K", 7))


@pytest.mark.parametrize("read", [lambda p: p.K * p.a, lambda p: type(p).K * p.a])
def test_a_class_attribute_read_through_a_named_tuple_of_tensors(monkeypatch, read) -> None:
    """(`p.K` of a named tuple holding tensors was a graph break)"""
    def fn(x, p):
        return x * read(p)

    _stale_check(fn, (torch.ones(2), _ScaledPair(torch.ones(2), 2)),
                 lambda: monkeypatch.setattr(_ScaledPair, "K", 7))
    assert dynamo.explain(fn)(torch.ones(2), _ScaledPair(torch.ones(2), 2)).graph_break_count == 0


class _WithClassAttribute:
    pass


_HOLDER = _WithClassAttribute()


def test_hasattr_found_on_the_class_is_guarded() -> None:
    """`hasattr(obj, "zz")` answered by the class: deleting the class attribute must not keep
    the True answer (found by the stale-answer fuzzer, seed 15912)."""
    def f(x):
        return x + (1 if hasattr(_HOLDER, "zz") else 0)

    compiled = dynamo.compile(f, backend="eager")
    x = torch.zeros(2)
    for step in range(3):
        if step == 1:
            _WithClassAttribute.zz = 7
        if step == 2:
            del _WithClassAttribute.zz
        assert torch.equal(compiled(x), f(x)), step


class _ModuleWithoutFlag(torch.nn.Module):
    def forward(self, x):
        return x + (1 if hasattr(self, "flag") else 0)


def test_hasattr_of_a_module_that_says_no_is_guarded_by_its_class() -> None:
    """`hasattr(module, "flag")` said no: the attribute added to (then deleted from) the
    module's class must not leave the answer standing."""
    module = _ModuleWithoutFlag()
    compiled = dynamo.compile(module, backend="eager")
    x = torch.zeros(2)
    try:
        for step in range(4):
            if step == 1:
                _ModuleWithoutFlag.flag = True
            if step == 2:
                del _ModuleWithoutFlag.flag
            assert torch.equal(compiled(x), module(x)), step
    finally:
        if "flag" in _ModuleWithoutFlag.__dict__:
            del _ModuleWithoutFlag.flag


class _ClassAsked:
    zz = 1


class _Meta(type):
    mm = 1


class _ClassOfMeta(metaclass=_Meta):
    pass


@pytest.mark.parametrize(("asked", "owner", "name"), [(_ClassAsked, _ClassAsked, "zz"),
                                                      (_ClassOfMeta, _Meta, "mm")],
                         ids=["its own", "its metaclass's"])
def test_hasattr_of_a_class_is_guarded(asked, owner, name) -> None:
    """`hasattr(Cls, name)` (a class, not an instance), answered by the class or by its
    metaclass: `del Owner.name`, then `Owner.name = 1`, must each be seen."""
    def f(x):
        return x + (1 if hasattr(asked, name) else 0)

    compiled = dynamo.compile(f, backend="eager")
    x = torch.zeros(2)
    try:
        for step in range(3):
            if step == 1:
                delattr(owner, name)
            if step == 2:
                setattr(owner, name, 1)
            assert torch.equal(compiled(x), f(x)), step
    finally:
        setattr(owner, name, 1)


def test_hasattr_of_a_python_module_sees_a_module_getattr_added() -> None:
    """A no about a Python module is also guarded by the module lacking `__getattr__` (PEP
    562) and its class lacking the name; a yes of its `__getattr__` by it staying."""
    import types

    class _ModuleClass(types.ModuleType):
        pass

    for module in (types.ModuleType("m"), _ModuleClass("m")):
        def f(x, module=module):
            return x + (1 if hasattr(module, "q") else 0)

        compiled = dynamo.compile(f, backend="eager")
        x = torch.zeros(2)
        for step in range(4):
            if step == 1:
                module.__getattr__ = lambda name: 1
            if step == 2:
                del module.__getattr__
            if step == 3 and type(module) is not types.ModuleType:
                type(module).q = 1
            assert torch.equal(compiled(x), f(x)), (module, step)


def test_hasattr_of_a_class_whose_descriptor_raises_is_a_graph_break() -> None:
    """`hasattr(Cls, "p")` is False when a metaclass property raises AttributeError; its no
    guard (the class lacks 'p') failed for the very inputs compiled for, so every call ran
    eagerly with a warning. It is a graph break now."""
    class Meta(type):
        @property
        def p(cls):
            raise AttributeError("p")

    class Cls(metaclass=Meta):
        pass

    def f(x):
        return x + (1 if hasattr(Cls, "p") else 0)

    explained = dynamo.explain(f)(torch.zeros(2))
    assert any("'p' raised AttributeError" in b.reason for b in explained.breaks), \
        explained.breaks
    compiled = dynamo.compile(f, backend="eager")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(3):
            assert torch.equal(compiled(torch.zeros(2)), f(torch.zeros(2)))


def test_hasattr_of_a_python_module_follows_its_getattr_functions() -> None:
    """A module's answer given by its `__getattr__` (PEP 562) or its class's stands while each
    is the same function: a class `__getattr__` that raises made the no's guard fail at once
    (every call ran eagerly, with a warning); deleting or replacing one left the old answer."""
    import types

    class RaisingModule(types.ModuleType):
        def __getattr__(self, name):
            raise AttributeError(name)

    class AnsweringModule(types.ModuleType):
        def __getattr__(self, name):
            return 1

    def compiled_for(module):
        def f(x):
            return x + (1 if hasattr(module, "zz") else 0)
        return f, dynamo.compile(f, backend="eager")

    x = torch.zeros(2)
    f, compiled = compiled_for(RaisingModule("m1"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(3):
            assert torch.equal(compiled(x), f(x))
    f, compiled = compiled_for(AnsweringModule("m2"))
    assert torch.equal(compiled(x), f(x))
    del AnsweringModule.__getattr__
    assert torch.equal(compiled(x), f(x))
    plain = types.ModuleType("m3")
    plain.__getattr__ = lambda name: 1
    f, compiled = compiled_for(plain)
    assert torch.equal(compiled(x), f(x))

    def refuse(name):
        raise AttributeError(name)

    plain.__getattr__ = refuse
    assert torch.equal(compiled(x), f(x))


def test_an_attribute_a_modules_getattr_answers_is_read_once_per_call() -> None:
    """`mod.name` answered by the module's own `__getattr__` (PEP 562) is read for real, once
    per call, as in eager: it was called while tracing, again by each guard check (the value
    it gave changed, so the guard failed and the frame ran eagerly after reading it 6 times),
    and a deprecated alias's warning named dynamo's frames, not the user's line."""
    import sys
    import types

    module = types.ModuleType("j33_pep562")
    reads = [0]

    def module_getattr(name):
        if name == "DYN":
            reads[0] += 1
            warnings.warn("DYN is deprecated", DeprecationWarning, stacklevel=2)
            return float(reads[0])
        raise AttributeError(name)

    module.__getattr__ = module_getattr
    sys.modules["j33_pep562"] = module
    try:
        def f(x):
            return x * module.DYN + 1
        compiled = dynamo.compile(f, backend="eager")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for i in range(1, 4):
                assert torch.equal(compiled(torch.ones(2)), torch.full((2,), i + 1.0))
                assert reads[0] == i
        assert [w.filename for w in caught] == [__file__] * 3
    finally:
        del sys.modules["j33_pep562"]


def test_a_lazy_submodule_a_module_getattr_imports_is_no_break(tmp_path, monkeypatch):
    """A package's `__getattr__` that imports a submodule on first read (numpy's `np.ma`,
    `np.fft`): the submodule is imported once and read as an attribute; the break kept in the
    compiled code for good (the submodule sat in the package's dict from the first call on)."""
    import sys

    package = tmp_path / "lazy_pkg_j34"
    package.mkdir()
    (package / "__init__.py").write_text(
        "import importlib\n"
        "def __getattr__(name):\n"
        "    if name == 'sub':\n"
        "        return importlib.import_module(__name__ + '.sub')\n"
        "    raise AttributeError(name)\n")
    (package / "sub.py").write_text("SCALE = 3\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import lazy_pkg_j34

    def fn(x):
        return x * lazy_pkg_j34.sub.SCALE

    try:
        explained = dynamo.explain(fn)(torch.ones(2))
        assert explained.graph_count == 1 and not explained.breaks, explained.breaks
        assert explained.result.tolist() == [3.0, 3.0]
    finally:
        for name in ("lazy_pkg_j34.sub", "lazy_pkg_j34"):
            sys.modules.pop(name, None)


def test_subclass_metadata_added_after_compiling_does_not_crash_recompilation():
    class T(torch.Tensor):
        __torch_function__ = torch._C._disabled_torch_function_impl

    f = dynamo.compile(lambda x: x.shape)
    f(torch.ones(2).as_subclass(T))
    T.shape = property(lambda s: "mine")
    assert f(torch.ones(2).as_subclass(T)) == "mine"


def test_hasattr_of_a_submodule_the_package_getattr_does_not_import(tmp_path, monkeypatch):
    """A package's `__getattr__` that imports nothing: `hasattr(pkg, "sub")` is False though
    `sub.py` exists (the trace imported it, and answered True)."""
    pkg = tmp_path / "strict_getattr_pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("def __getattr__(name):\n    raise AttributeError(name)\n")
    (pkg / "sub.py").write_text("V = 7\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import sys

    import strict_getattr_pkg

    f = dynamo.compile(lambda x: x + (1 if hasattr(strict_getattr_pkg, "sub") else 2))
    try:
        assert f(torch.ones(1)).item() == 3.0
        assert "strict_getattr_pkg.sub" not in sys.modules
    finally:
        sys.modules.pop("strict_getattr_pkg.sub", None)
        del sys.modules["strict_getattr_pkg"]
