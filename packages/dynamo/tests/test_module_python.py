"""The Python around models: module containers, hooks with keyword arguments, module
attributes of Python modules."""

import functools
import math
import sys
import types
import warnings

import torch
import torch.nn as nn

import dynamo


class _Inner(nn.Module):
    def __init__(self):
        super().__init__()
        self.l = nn.Linear(3, 3)

    def forward(self, x, *, scale=1.0, mask=None):
        y = self.l(x) * scale
        return y if mask is None else y * mask


class _Outer(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = _Inner()

    def forward(self, x, **kw):
        return self.inner(x, **kw) + 1


def test_pre_hook_with_kwargs_writes_in_place():
    """A pre-hook that changes the kwargs dict in place (returning None) changes what forward
    gets, and the forward hook gets that same dict."""
    def run(compile_):
        torch.manual_seed(0)
        m = _Outer()
        seen = []

        def pre(mod, args, kwargs):
            kwargs["scale"] = 7.0
            kwargs.pop("mask", None)

        def post(mod, args, kwargs, out):
            seen.append(sorted(kwargs))
        m.inner.register_forward_pre_hook(pre, with_kwargs=True)
        m.inner.register_forward_hook(post, with_kwargs=True)
        cm = compile_(m)
        x = torch.ones(2, 3)
        return [cm(x), cm(x, mask=torch.zeros(3)), cm(x, scale=2.0)], seen

    expected, expected_seen = run(lambda m: m)
    got, got_seen = run(lambda m: dynamo.compile(m, fullgraph=True))
    for e, g in zip(expected, got):
        torch.testing.assert_close(g, e)
    assert got_seen == expected_seen == [["scale"]] * 3


class _Raises(nn.Module):
    def forward(self, x):
        if x.shape[0] > 2:
            raise ValueError("too long")
        return x + 1


class _Catches(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = _Raises()

    def forward(self, x):
        try:
            return self.inner(x) * 2
        except ValueError:
            return x - 1


def test_always_call_forward_hooks_run_when_the_call_raises():
    """`Module.__call__` runs the `always_call=True` forward hooks (given None for the
    output) before the error of `forward` or of a hook leaves it, also when the traced code
    catches that error; the other hooks do not run, and one already run does not run again."""
    def run(compile_):
        m = _Catches()
        log = []
        m.inner.register_forward_hook(lambda mod, args, out: log.append(("plain", out is None)))
        m.inner.register_forward_hook(
            lambda mod, args, kwargs, out: log.append(("always", out is None)),
            with_kwargs=True, always_call=True)
        cm = compile_(m)
        outs = [cm(torch.ones(2, 3)), cm(torch.ones(5, 3)), cm(torch.ones(2, 3))]
        return outs, log

    def run_hook_raises(compile_):
        m = _Catches()
        log = []

        def bad(mod, args, out):
            log.append("bad")
            raise ValueError("from a hook")
        m.inner.register_forward_hook(lambda mod, args, out: log.append("first") or out * 3,
                                      always_call=True)
        m.inner.register_forward_hook(bad)
        m.inner.register_forward_hook(lambda mod, args, out: log.append(("last", out.sum().item()
                                                                         if out is not None else None)),
                                      always_call=True)
        return [compile_(m)(torch.ones(2, 3))], log

    for case in (run, run_hook_raises):
        expected, expected_log = case(lambda m: m)
        for backend in ("eager", "aot_eager"):
            got, got_log = case(lambda m, backend=backend: dynamo.compile(m, backend=backend))
            for e, g in zip(expected, got):
                torch.testing.assert_close(g, e)
            assert got_log == expected_log, (case.__name__, backend)
    assert run(lambda m: m)[1] == [("plain", False), ("always", False), ("always", True),
                                   ("plain", False), ("always", False)]
    # the caught error is traced: one graph
    _, log = run(lambda m: dynamo.compile(m, fullgraph=True))
    assert len(log) == 5


def test_parameter_dict_contains_iter_get():
    pd = nn.ParameterDict({"u": nn.Parameter(torch.ones(3))})

    def f(x):
        y = x + ("u" in pd) + ("w" in pd)
        for k in pd:
            y = y + pd[k]
        return y + pd.get("u") + len(list(pd)) + dict(pd)["u"]

    cf = dynamo.compile(f, fullgraph=True)
    x = torch.randn(3)
    torch.testing.assert_close(cf(x), f(x))
    pd["w"] = nn.Parameter(torch.full((3,), 2.0))  # a new key: recompiled
    torch.testing.assert_close(cf(x), f(x))


def test_module_with_own_iter_and_contains():
    class Bank(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList([nn.Linear(3, 3) for _ in range(2)])

        def __iter__(self):
            return iter(self.layers)

        def __contains__(self, i):
            return 0 <= i < len(self.layers)

    bank = Bank()

    def f(x):
        for layer in bank:
            x = layer(x)
        return x, 1 in bank, 5 in bank

    cf = dynamo.compile(f, fullgraph=True)
    x = torch.randn(3)
    for _ in range(2):
        got, want = cf(x), f(x)
        torch.testing.assert_close(got[0], want[0])
        assert got[1:] == want[1:]
        bank.layers.append(nn.Linear(3, 3))


def test_hasattr_of_a_python_module_is_guarded():
    mod = types.ModuleType("_dynamo_test_usermod")
    sys.modules[mod.__name__] = mod
    try:
        def f(x):
            y = x + getattr(mod, "bias", 1.0) + hasattr(math, "pi")
            return y * mod.scale if hasattr(mod, "scale") else y

        cf = dynamo.compile(f, fullgraph=True)
        x = torch.zeros(1)
        torch.testing.assert_close(cf(x), f(x))
        mod.scale = 3.0
        mod.bias = 5.0
        torch.testing.assert_close(cf(x), f(x))
        del mod.scale
        torch.testing.assert_close(cf(x), f(x))
    finally:
        del sys.modules[mod.__name__]


def test_torch_dynamo_is_compiling_is_torchs_own_answer_while_tracing():
    """torch.compile's private package is what this project re-implements, and its product
    code does not reach into it: `torch._dynamo.is_compiling()` runs as it is (False), so the
    code takes eager's branch; `torch.compiler.is_compiling()` is the one that says True."""
    import torch._dynamo  # noqa: F401  (the test's own use: torch.compile's package)

    def f(x):
        old = x + 1 if torch._dynamo.is_compiling() else x - 1
        return old, x + 1 if torch.compiler.is_compiling() else x - 1

    old, public = dynamo.compile(f, fullgraph=True)(torch.zeros(1))
    assert (old.item(), public.item()) == (-1.0, 1.0)


def test_a_hooked_module_whose_class_defines_eq_is_not_hashed() -> None:
    # a class with __eq__ and no __hash__ is unhashable: the hooks' forward installation
    # must not hash the module
    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(2, 2)

        def forward(self, x):
            return self.lin(x)

        def __eq__(self, other):
            return isinstance(other, M)

    m = M()
    m.register_forward_hook(lambda mod, args, out: out * 2)
    x = torch.ones(1, 2)
    assert torch.equal(dynamo.compile(m, backend="eager")(x), m(x))


def test_a_module_s_dict_is_read_in_the_trace() -> None:
    """`name in self.__dict__` (nn.Module.register_buffer's own check, which Hugging Face's
    dynamic RoPE calls in its forward) is traced, not a break on 'the descriptor __dict__';
    what the trace set on the module shows in it, and a later change recompiles."""
    class M(torch.nn.Module):
        def forward(self, x):
            if "flag" in self.__dict__:
                x = x + self.__dict__["flag"]
            self.seen = 1
            return x * 2, len([k for k in self.__dict__ if not k.startswith("_")])

    m, x = M(), torch.ones(2)
    compiled = dynamo.compile(m, fullgraph=True)
    for flag in (None, 5.0, 7.0, None):
        if flag is None:
            m.__dict__.pop("flag", None)
        else:
            m.flag = flag
        got = compiled(x)
        del m.seen
        want = m(x)
        assert torch.equal(got[0], want[0]) and got[1] == want[1]


def _cosine_distance(a, b):
    return 1.0 - torch.nn.functional.cosine_similarity(a, b)


def test_torch_python_given_a_callable_is_followed() -> None:
    """`nn.TripletMarginWithDistanceLoss(distance_function=f)`: torch's Python handed a function
    (the user's, a lambda made in the frame, a partial, torch's own builtin) calls it in the
    trace; as an argument of a graph node it was a graph break."""
    torch.manual_seed(0)
    a, p, n = (torch.randn(4, 6, requires_grad=True) for _ in range(3))
    for distance in (_cosine_distance, lambda x, y: (x - y).abs().sum(-1),
                     functools.partial(torch.nn.functional.pairwise_distance, p=3.0),
                     torch.nn.functional.pairwise_distance):
        loss = nn.TripletMarginWithDistanceLoss(distance_function=distance, swap=True)
        expected = loss(a, p, n)
        got = dynamo.compile(loss, backend="aot_eager", fullgraph=True)(a, p, n)
        torch.testing.assert_close(got, expected)
        torch.testing.assert_close(torch.autograd.grad(got, a)[0],
                                   torch.autograd.grad(expected, a)[0])

    def f(a, p, n):
        return torch.nn.functional.triplet_margin_with_distance_loss(
            a, p, n, distance_function=lambda x, y: (x - y).pow(2).sum(-1), margin=0.5)

    torch.testing.assert_close(dynamo.compile(f, fullgraph=True)(a, p, n), f(a, p, n))

    # torch.func's transforms run the function under functorch's interpreters: not followed,
    # a clean break (followed, their internals' calls became guards that raised)
    def vmapped(x):
        return torch.vmap(lambda r: r.sin() * 2)(x) + 1

    x = torch.randn(4, 3)
    assert "passing a function to a graph operation (vmap)" in \
        dynamo.explain(vmapped)(x).breaks[0].reason
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        torch.testing.assert_close(dynamo.compile(vmapped)(x), vmapped(x))


class _Prints(nn.Module):
    def forward(self, x):
        print("a graph break inside the slice")
        return x + 1


def test_a_sequential_slice_live_at_a_graph_break_is_rebuilt(capsys):
    """A Sequential's (or ModuleList's) slice on the stack at a graph break, or returned, is
    made as eager makes it (its modules under their names), not a reason to run the frame
    eagerly."""
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.seq = nn.Sequential(nn.Linear(4, 4), _Prints(), nn.Linear(4, 4))
            self.ml = nn.ModuleList([nn.Linear(4, 4), _Prints()])

        def forward(self, x):
            part = self.ml[1:]
            for mod in part:
                x = mod(x)
            return self.seq[1:](x.sin()), self.seq[::2], part

    torch.manual_seed(0)
    m = M()
    x = torch.randn(2, 4)
    expected = m(x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no frame runs eagerly
        compiled = dynamo.compile(m)
        for _ in range(2):
            got = compiled(x)
            torch.testing.assert_close(got[0], expected[0])
            for g, e in zip(got[1:], expected[1:]):
                assert type(g) is type(e) and list(g._modules) == list(e._modules)
                assert all(a is b for a, b in zip(g, e))


def test_a_hook_registered_and_removed_on_every_call_compiles_once():
    """A feature extractor that registers a forward hook for each call and removes it after:
    each registration's handle has a new id, the key of the hook in the module's dict, so the
    hooks are guarded by position, not by key (a guard on the keys recompiled every call until
    the cache limit); what the hook takes (keyword arguments or not) is still guarded."""
    def run(compile_):
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 2))
        features = {}

        def extract(x, with_kwargs):
            def hook(mod, *args):  # (mod, args, out), or (mod, args, kwargs, out)
                features["relu"] = args[-1]
                return args[-1] * len(args)
            handle = model[1].register_forward_hook(hook, with_kwargs=with_kwargs)
            out = model(x)
            handle.remove()
            return out, features["relu"]

        compiled = compile_(extract)
        return [compiled(torch.ones(3, 4) * i, i % 3 == 2) for i in range(10)]

    expected = run(lambda f: f)
    graphs = []
    got = run(lambda f: dynamo.compile(f, backend=lambda gm, _: graphs.append(gm) or gm))
    for e, g in zip(expected, got):
        torch.testing.assert_close(g, e)
    # the graph around the hook's call, for each kind of hook (the break at the registration
    # leaves nothing to capture before it)
    assert len(graphs) == 2


def test_hooks_changed_between_calls_at_the_same_positions_recompile():
    """The hooks are guarded by position: the same function re-registered with keyword
    arguments, or with `always_call=True` on a forward that raises, and two functions swapped
    by `prepend=True` or by writing the dict, each change what a call does with the same
    number of hooks; each is a cache miss, never a stale answer."""
    class Raiser(nn.Module):
        def forward(self, x, fail=False):
            if fail:
                raise ValueError("fail")
            return x * 2

    def add(mod, *args):  # (mod, args, out), or (mod, args, kwargs, out)
        return None if args[-1] is None else args[-1] + len(args)

    def mul(mod, args, out):
        return out * 3

    def run(compile_):
        module = Raiser()
        seen = []

        def call(x, fail):
            try:
                return module(x, fail=fail)
            except ValueError:
                return x - 1

        def watch(mod, args, kwargs, out):
            seen.append(out is None)

        changes = [  # what each call registers, and whether its forward raises
            (lambda: [module.register_forward_hook(add), module.register_forward_hook(mul)],
             False),
            (lambda: [module.register_forward_hook(add),
                      module.register_forward_hook(mul, prepend=True)], False),
            (lambda: [module.register_forward_hook(mul),
                      module.register_forward_hook(add, with_kwargs=True)], False),
            (lambda: [module.register_forward_hook(watch, with_kwargs=True)], True),
            (lambda: [module.register_forward_hook(watch, with_kwargs=True, always_call=True)],
             True),
        ]
        compiled = compile_(call)
        got = []
        for register, fail in changes:
            handles = register()
            got.append(compiled(torch.ones(2), fail))
            for handle in handles:
                handle.remove()
        handle = module.register_forward_hook(add)
        module._forward_hooks[handle.id] = mul  # the same key, another function
        got.append(compiled(torch.ones(2), False))
        return got, seen

    expected, expected_seen = run(lambda f: f)
    got, got_seen = run(lambda f: dynamo.compile(f, backend="eager"))
    for e, g in zip(expected, got, strict=True):
        torch.testing.assert_close(g, e)
    assert got_seen == expected_seen == [True]


def test_a_backend_returning_its_graph_module_does_not_run_global_hooks_on_it():
    """The graph is called through its forward: a global forward pre-hook that shifts a module's
    input runs once, on the frame's own module, not on the graph's inputs as well."""
    from torch.nn.modules import module as nn_module

    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(3, 3), nn.ReLU(), nn.Linear(3, 3))
    f = lambda x: m(x)  # noqa: E731
    compiled = dynamo.compile(f, backend=lambda gm, _: gm)
    x = torch.ones(2, 3)
    torch.testing.assert_close(compiled(x), f(x))
    handle = nn_module.register_module_forward_pre_hook(lambda mod, args: (args[0] + 1,))
    try:
        torch.testing.assert_close(compiled(x), f(x))
    finally:
        handle.remove()
