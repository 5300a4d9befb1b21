"""make_fx: graphs that replay like the traced function, with the metadata backends need."""

from __future__ import annotations

import warnings

import pytest
import torch

import fakecore
from fakecore import DataDependentError
from fxtrace import core_aten_decompositions, make_fx

MODES = ["real", "fake", "symbolic"]


def _calls(gm: torch.fx.GraphModule) -> list:
    return [n.target for n in gm.graph.nodes if n.op == "call_function"]


@pytest.mark.parametrize("mode", MODES)
def test_pytree_inputs_and_outputs_round_trip(mode: str) -> None:
    def fn(pair, table, scale):
        a, b = pair
        return {"sum": a + b * scale, "parts": [table["x"].relu(), None, 3]}

    args = ((torch.randn(3), torch.randn(3)), {"x": torch.randn(2, 2)}, 2.0)
    gm = make_fx(fn, mode)(*args)
    got, expected = gm(*args), fn(*args)
    assert set(got) == {"sum", "parts"}
    assert torch.allclose(got["sum"], expected["sum"])
    assert torch.equal(got["parts"][0], expected["parts"][0]) and got["parts"][1:] == [None, 3]
    assert [n.name for n in gm.graph.nodes if n.op == "placeholder"] == [
        "pair_0", "pair_1", "table", "scale"
    ]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", ["MLP", "SmallCNN", "TransformerBlock"])
def test_models_replay_equal_to_eager(models, name: str, mode: str) -> None:
    torch.manual_seed(0)
    model = getattr(models, name)().eval()
    x = {"MLP": torch.randn(4, 32), "SmallCNN": torch.randn(2, 3, 16, 16),
         "TransformerBlock": torch.randn(2, 8, 64)}[name]
    gm = make_fx(model, mode)(x)
    torch.testing.assert_close(gm(x), model(x))
    for node in gm.graph.nodes:
        if node.op in ("placeholder", "get_attr", "call_function"):
            assert "val" in node.meta, node


def test_symbolic_graph_serves_other_sizes(models) -> None:
    model = models.TransformerBlock().eval()
    gm = make_fx(model, "symbolic")(torch.randn(2, 8, 64))
    assert torch.ops.aten.sym_size.int in _calls(gm)
    for shape in [(3, 5, 64), (1, 17, 64)]:
        x = torch.randn(shape)
        torch.testing.assert_close(gm(x), model(x))
    guards = [str(g.expr) for g in gm.shape_env.guards]
    assert guards == ["Eq(s2, 64)"]  # the embedding width is fixed by the weights


@pytest.mark.parametrize("mode", ["real", "fake", "symbolic"])
def test_parameters_named_like_what_the_generated_code_reads(mode: str) -> None:
    def f(x, device, inf):  # the code reads `device(type='cpu')` and `inf`
        return (x + torch.ones(3, device=device)).clamp(max=inf)

    gm = make_fx(f, tracing_mode=mode)(torch.zeros(3), "cpu", 0.5)
    assert gm(torch.zeros(3), "cpu", 0.5).tolist() == [0.5, 0.5, 0.5]
    shadowing = eval("lambda x, torch: x.sin()")  # and `torch.ops.aten.sin`
    assert torch.equal(make_fx(shadowing, tracing_mode=mode)(torch.ones(2), 1)(torch.ones(2), 1),
                       torch.ones(2).sin())


@pytest.mark.parametrize("mode", ["real", "fake", "symbolic"])
def test_arguments_whose_names_differ_in_case_stay_apart(mode: str) -> None:
    def f(x, W, w):
        return torch.add(x, W, alpha=3) * w

    args = (torch.ones(2), torch.zeros(2), torch.full((2,), 5.0))
    assert make_fx(f, tracing_mode=mode)(*args)(*args).tolist() == [5.0, 5.0]


def _builtin_name_then_its_renaming(input, input_1):  # noqa: A002 (the name under test)
    return input - input_1


def _pair_then_its_leaf_name(x, x_0):
    return x[0] - x[1] + x_0


def _leaf_name_then_pair(x_0, x):
    return x[0] - x[1] + x_0


@pytest.mark.parametrize("mode", ["real", "fake", "symbolic"])
@pytest.mark.parametrize("fn, args", [
    (_builtin_name_then_its_renaming, (torch.tensor([1.0]), torch.tensor([10.0]))),
    (_pair_then_its_leaf_name, ((torch.tensor([1.0]), torch.tensor([10.0])), torch.tensor([100.0]))),
    (_leaf_name_then_pair, (torch.tensor([100.0]), (torch.tensor([1.0]), torch.tensor([10.0])))),
])
def test_arguments_named_as_fx_renames_others_stay_apart(fn, args, mode: str) -> None:
    """fx renames `input` (a builtin) to `input_1`, and a repeated leaf name `x_0` too: the
    code must not copy one argument into another's name before reading it."""
    gm = make_fx(fn, tracing_mode=mode)(*args)
    assert gm(*args).tolist() == fn(*args).tolist()
    gm.recompile()
    assert gm(*args).tolist() == fn(*args).tolist()


def test_float_algebra_that_simplifies_to_a_number_stays_nodes() -> None:
    """`v - v` and `0 * v + 1` of an `.item()` are numbers to sympy, not to IEEE arithmetic
    (NaN, inf): written as the constants 0.0 and 1.0, the graph gave 0 and 1 for a NaN."""
    def fn(x):
        v = x.max().item()
        return x * (v - v), x + (0 * v + 1)

    gm = make_fx(fn, "fake")(torch.ones(2))
    x = torch.tensor([1.0, float("inf")])
    for got, want in zip(gm(x), fn(x)):
        torch.testing.assert_close(got, want, equal_nan=True)


def test_comparisons_of_float_algebra_that_simplifies_are_computed() -> None:
    """`v * 0 <= 0` and `v - v == 0` of an `.item()` are True to sympy, False to IEEE for a
    NaN or an infinity: the check was dropped and the condition written as True."""
    def checks(x):
        torch._check(x.max().item() * 0 <= 0)
        return x + 1

    def condition(x):
        v = x.max().item()
        return torch.scalar_tensor(v - v == 0)

    x, inf = torch.ones(2), torch.tensor([1.0, float("inf")])
    gm = make_fx(checks, "fake")(x)
    gm(x)
    with pytest.raises(RuntimeError):
        gm(inf)
    gm = make_fx(condition, "fake")(x)
    assert (gm(x).item(), gm(inf).item()) == (1.0, 0.0)


def test_symbolic_records_size_arithmetic() -> None:
    def fn(x):
        n = x.shape[0] * x.shape[1]
        return x.reshape(n // 2, 2)

    gm = make_fx(fn, "symbolic")(torch.randn(4, 6))
    calls = _calls(gm)
    assert torch.ops.aten.sym_size.int in calls
    assert any(getattr(t, "__name__", "") in ("mul", "floordiv") for t in calls)
    x = torch.randn(5, 2)
    assert torch.equal(gm(x), fn(x))


def test_size_arithmetic_with_a_negative_base_keeps_its_sign() -> None:
    # a node operator.pow(-2, n) prints as `-2 ** n`, which Python reads as -(2 ** n)
    def fn(x):
        return x * ((-2) ** x.shape[0])

    gm = make_fx(fn, "symbolic")(torch.ones(4))
    for n in (3, 4, 6):
        assert torch.equal(gm(torch.ones(n)), fn(torch.ones(n)))


def test_parameters_are_attributes_or_lifted_inputs(models) -> None:
    model = models.MLP()
    x = torch.randn(2, 32)
    gm = make_fx(model, "fake")(x)
    assert {n.target for n in gm.graph.nodes if n.op == "get_attr"} >= {"fc1.weight", "head.bias"}
    lifted = make_fx(model, "fake", lift_params=True)(x)
    placeholders = [n.name for n in lifted.graph.nodes if n.op == "placeholder"]
    assert placeholders[0] == "p_fc1_weight" and placeholders[-1] == "x"
    assert not any(n.op == "get_attr" for n in lifted.graph.nodes)
    state = [*model.parameters(), *model.buffers()]
    torch.testing.assert_close(lifted(*state, x), model(x))  # parameters first, then inputs


def test_nodes_carry_stack_trace_and_module_stack(models) -> None:
    gm = make_fx(models.MLP(), "symbolic")(torch.randn(2, 32))
    addmms = [n for n in gm.graph.nodes if n.target == torch.ops.aten.addmm.default]
    assert [list(n.meta["nn_module_stack"]) for n in addmms] == [["fc1"], ["fc2"], ["head"]]
    assert addmms[0].meta["nn_module_stack"]["fc1"][1] is torch.nn.Linear
    assert "models.py" in addmms[0].meta["stack_trace"]
    assert "self.fc1(x)" in addmms[0].meta["stack_trace"]


def test_constants_made_inside_become_attributes() -> None:
    def fn(x):
        return x * torch.tensor([1.0, 2.0, 3.0])

    gm = make_fx(fn, "fake")(torch.randn(2, 3))
    constants = [n.target for n in gm.graph.nodes if n.op == "get_attr"]
    assert constants == ["_tensor_constant0"]
    x = torch.randn(4, 3)
    assert torch.equal(gm(x), fn(x))


@pytest.mark.parametrize("mode", MODES)
def test_joint_forward_backward_of_mlp_matches_eager_gradients(models, mode: str) -> None:
    torch.manual_seed(0)
    model = models.MLP()
    params = {k: v.detach().requires_grad_() for k, v in model.named_parameters()}

    def step(x, target, params):
        out = torch.func.functional_call(model, params, (x,))
        loss = torch.nn.functional.cross_entropy(out, target)
        return loss, torch.autograd.grad(loss, list(params.values()))

    x, target = torch.randn(8, 32), torch.randint(0, 10, (8,))
    gm = make_fx(step, mode)(x, target, params)
    loss, grads = gm(x, target, params)
    ref_loss, ref_grads = step(x, target, params)
    torch.testing.assert_close(loss, ref_loss)
    for got, expected in zip(grads, ref_grads):
        torch.testing.assert_close(got, expected)


@pytest.mark.parametrize("mode", MODES)
def test_backward_call_traces_into_grads(mode: str) -> None:
    def fn(x, w):
        (x @ w).sum().backward()
        return w.grad

    x = torch.randn(4, 3)
    gm = make_fx(fn, mode)(x, torch.randn(3, 2, requires_grad=True))
    torch.testing.assert_close(gm(x, torch.randn(3, 2, requires_grad=True)),
                               x.sum(0)[:, None].expand(3, 2))


def test_decompositions_and_core_aten_preset() -> None:
    def fn(x):
        return torch.nn.functional.silu(x).addcmul(x, x).mean(0)

    decomposed = make_fx(fn, "fake", {torch.ops.aten.silu.default: lambda x: x * torch.sigmoid(x)})(
        torch.randn(3, 4)
    )
    assert torch.ops.aten.silu.default not in _calls(decomposed)
    assert torch.ops.aten.sigmoid.default in _calls(decomposed)
    core = make_fx(fn, "symbolic", core_aten_decompositions())(torch.randn(3, 4))
    ops = [t for t in _calls(core) if isinstance(t, torch._ops.OpOverload)]
    assert all(torch.Tag.core in op.tags or op.namespace == "prims" for op in ops
               if op is not torch.ops.aten.sym_size.int), ops
    x = torch.randn(5, 4)
    torch.testing.assert_close(core(x), fn(x))


@pytest.mark.parametrize("mode", MODES)
def test_functionalize_leaves_only_copies_into_inputs(mode: str) -> None:
    def fn(x):
        y = x.view(-1)
        y.add_(1)
        x.mul_(2)
        return x.sum()

    gm = make_fx(fn, mode, functionalize=True)(torch.randn(3, 4))
    mutating = [t for t in _calls(gm) if isinstance(t, torch._ops.OpOverload) and t._schema.is_mutable]
    assert mutating == [torch.ops.aten.copy_.default]
    a = torch.randn(3, 4)
    b = a.clone()
    torch.testing.assert_close(gm(b), fn(a))
    torch.testing.assert_close(b, a)


class _Counter(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("total", torch.zeros(3))

    def forward(self, x):
        self.total.add_(x)
        return x * self.total


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("lift", [False, True])
def test_functionalize_copies_a_modules_written_buffers_back(mode: str, lift: bool) -> None:
    """A buffer written with a value made from an input: functionalization saw no wrapper for
    the buffer (an internal assert), unless it is passed in like an input."""
    model = _Counter()
    gm = make_fx(model, mode, functionalize=True, lift_params=lift)(torch.randn(3))
    mutating = [t for t in _calls(gm) if isinstance(t, torch._ops.OpOverload) and t._schema.is_mutable]
    assert mutating == [torch.ops.aten.copy_.default]
    reference, x = _Counter(), torch.randn(3)
    expected = reference(x)
    model.total.zero_()
    torch.testing.assert_close(gm(model.total, x) if lift else gm(x), expected)
    torch.testing.assert_close(model.total, reference.total)


def test_random_ops_are_traced_as_ops() -> None:
    gm = make_fx(lambda x: x + torch.rand_like(x), "fake")(torch.zeros(1000))
    assert torch.ops.aten.rand_like.default in _calls(gm)
    first, second = gm(torch.zeros(1000)), gm(torch.zeros(1000))
    assert not torch.equal(first, second)


@pytest.mark.parametrize("mode", ["fake", "symbolic"])
def test_branch_on_a_value_names_the_op_and_line(mode: str) -> None:
    def fn(x):
        if x.sum() > 0:
            return x + 1
        return x - 1

    with pytest.raises(DataDependentError, match=r"_local_scalar_dense.*test_make_fx\.py:\d+ in fn"):
        make_fx(fn, mode)(torch.ones(2))


def _checked_count(x):
    n = (x > 0).sum().item()
    torch._check(n >= 2)
    return x[:n]


def _narrowed_mask(x):
    return x[x > 0].narrow(0, 0, 1) * 2


def _size_in_range(x, y):
    n = x.sum().item()
    torch._check(n >= 0)
    torch._check((n <= y.shape[0]) & ((n % 2 == 0) | (n == 3)))
    return y[:n] * 2


@pytest.mark.parametrize("mode", ["fake", "symbolic"])
@pytest.mark.parametrize(("fn", "good", "bad"), [
    (_checked_count, (torch.tensor([1.0, 2.0, -1.0]),), (torch.tensor([1.0, -1.0]),)),
    (_narrowed_mask, (torch.tensor([1.0, -1.0]),), (torch.tensor([-1.0, -2.0]),)),
    (_size_in_range, (torch.tensor([2, 2]), torch.ones(5)), (torch.tensor([3, 3]), torch.ones(5))),
    (_size_in_range, (torch.tensor([2, 2]), torch.ones(5)), (torch.tensor([-1, 0]), torch.ones(5))),
    (_size_in_range, (torch.tensor([2, 2]), torch.ones(5)), (torch.tensor([0, 5]), torch.ones(8))),
], ids=["check", "narrow", "above-size", "negative", "odd"])
def test_facts_assumed_of_data_dependent_values_are_checked_when_the_graph_runs(
        mode: str, fn, good, bad) -> None:
    """`torch._check` of an `item()`, a kernel's bounds check on a data-dependent size: the
    trace assumes them; the graph checks them, and raises where eager does."""
    gm = make_fx(fn, mode)(*good)
    assert torch.ops.aten._assert_scalar.default in _calls(gm)
    torch.testing.assert_close(gm(*good), fn(*good))
    with pytest.raises(RuntimeError):
        fn(*bad)
    with pytest.raises(RuntimeError, match="Runtime assertion failed for expression"):
        gm(*bad)


def test_a_check_is_placed_after_the_value_it_reads_and_written_once() -> None:
    def fn(x):
        n = x.sum().item()
        torch.ops.aten._assert_scalar.default(n >= 2, "n >= 2")  # in the graph already
        torch._check(n <= 9)
        return x.cos() * n

    gm = make_fx(fn, "fake")(torch.tensor([1, 2]))
    calls = [n for n in gm.graph.nodes if n.op == "call_function"]
    asserts = [n for n in calls if n.target is torch.ops.aten._assert_scalar.default]
    assert len(asserts) == 2 and calls.index(asserts[-1]) < _calls(gm).index(
        torch.ops.aten.cos.default)
    with pytest.raises(RuntimeError, match=r"u0 <= 9 \(at .*test_make_fx\.py:\d+ in fn\)"):
        gm(torch.tensor([5, 5]))


def _log2_checked(x):
    torch._check(torch._sym_log2(x.sum().item()) < 3)
    return x + 1


def _log_checked(x):
    torch._check(fakecore.sym_log(x.sum().item()) > 0)
    return x + 1


def _exp_checked(x):
    torch._check(fakecore.sym_exp(x.sum().item()) < 10)
    return x + 1


@pytest.mark.parametrize(("fn", "good", "bad", "error"), [
    (_log2_checked, [4.0, 3.0], [8.0], RuntimeError),  # log2(8) is 3: eager's, not log's
    (_log2_checked, [4.0, 3.0], [-1.0], ValueError),
    (_log_checked, [1.5], [0.5], RuntimeError),
    (_log_checked, [1.5], [-1.0], ValueError),
    (_exp_checked, [2.0], [3.0], RuntimeError),
    (_exp_checked, [2.0], [1000.0], OverflowError),
], ids=["log2", "log2-domain", "log", "log-domain", "exp", "exp-range"])
def test_a_check_of_a_log_or_exp_is_checked_when_the_graph_runs(fn, good, bad, error) -> None:
    """`log(v)/log(2)` (`math.log2`), `log`, `exp` of an `item()` have graph operations: the
    check was left out with a warning."""
    good, bad = torch.tensor(good), torch.tensor(bad)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gm = make_fx(fn, "fake")(good)
    assert torch.ops.aten._assert_scalar.default in _calls(gm)
    torch.testing.assert_close(gm(good), fn(good))
    with pytest.raises(error):
        fn(bad)
    with pytest.raises(error):
        gm(bad)


def test_a_graph_with_a_check_traces_again_with_its_check() -> None:
    gm = make_fx(_checked_count, "fake")(torch.tensor([1.0, 2.0]))
    again = make_fx(gm, "symbolic")(torch.tensor([1.0, 2.0]))
    assert _calls(again).count(torch.ops.aten._assert_scalar.default) == 1
    with pytest.raises(RuntimeError, match="Runtime assertion failed"):
        again(torch.tensor([1.0, -1.0]))


def test_branch_on_a_value_is_taken_in_real_mode() -> None:
    def fn(x):
        if x.sum() > 0:
            return x + 1
        return x - 1

    gm = make_fx(fn, "real")(torch.ones(2))
    assert torch.ops.aten.add.Tensor in _calls(gm) and torch.ops.aten.sub.Tensor not in _calls(gm)


@pytest.mark.parametrize("make_args", [
    lambda mode: (mode.from_tensor(torch.randn(4, 3)),),
    lambda mode: (mode.from_tensor(torch.randn(4, 3), dynamic_dims=[0]),),
    lambda mode: ([torch.ones(2), mode.from_tensor(torch.ones(2))],),
    lambda mode: (mode.from_tensor(torch.ones(4), dynamic_dims=[0]).shape[0],),
])
def test_real_mode_refuses_fake_arguments_naming_the_modes_that_take_them(make_args) -> None:
    # (it failed inside an op: a real factory mixed with fakes, or C++'s "expected concrete
    # integers" for a symbolic size; an `fn` that made no tensor traced, on no data)
    from fakecore import FakeTensorMode, ShapeEnv

    args = make_args(FakeTensorMode(ShapeEnv()))
    with pytest.raises(ValueError, match="need tracing_mode='fake' or 'symbolic'"):
        make_fx(lambda *a: (torch.ones(3), a), "real")(*args)


def test_real_mode_refuses_a_module_with_fake_parameters() -> None:
    from fakecore import FakeTensorMode

    with FakeTensorMode():
        module = torch.nn.Linear(3, 2)
    with pytest.raises(ValueError, match="FakeTensor: fake arguments need"):
        make_fx(module, "real")(torch.randn(4, 3))


def test_unknown_tracing_mode_is_refused() -> None:
    with pytest.raises(ValueError, match="tracing_mode"):
        make_fx(lambda x: x, "exact")


@pytest.mark.parametrize("mode", MODES)
def test_tensors_and_sizes_passed_by_keyword_are_graph_values(mode: str) -> None:
    def fn(x, tol):
        return torch.linalg.pinv(x, atol=tol, rtol=tol).t() + torch.full_like(x, 2, dtype=torch.float64)

    x, tol = torch.randn(4, 3, dtype=torch.float64), torch.tensor(1e-6, dtype=torch.float64)
    gm = make_fx(fn, mode)(x, tol)
    torch.testing.assert_close(gm(x, tol), fn(x, tol))


def test_a_size_is_read_as_the_input_came_before_an_inplace_transpose() -> None:
    def fn(x):
        x.t_()
        return torch.zeros(x.shape[0])

    gm = make_fx(fn, "symbolic")(torch.randn(3, 4))
    for shape in ((3, 5), (2, 7)):
        assert gm(torch.randn(*shape)).shape == (shape[1],)


def test_keyword_arguments_are_refused_with_a_way_out() -> None:
    with pytest.raises(TypeError, match=r"positional arguments only: pass \['scale'\]"):
        make_fx(lambda x, scale=1.0: x * scale)(torch.ones(2), scale=2.0)


def test_symbolic_mode_makes_int_arguments_symbols() -> None:
    gm = make_fx(lambda x, n: x * n + n, "symbolic")(torch.randn(3), 5)
    assert any(isinstance(node.meta.get("val"), torch.SymInt)
               for node in gm.graph.nodes if node.op == "placeholder")
    x = torch.randn(4)
    torch.testing.assert_close(gm(x, 7), x * 7 + 7)


def test_fake_arguments_are_traced_in_their_own_mode() -> None:
    from fakecore import FakeTensorMode, ShapeEnv

    shape_env = ShapeEnv()
    mode = FakeTensorMode(shape_env)
    x = mode.from_tensor(torch.randn(4, 6), dynamic_dims=(0,))  # only the rows are a symbol
    n = shape_env.create_symint(3)
    gm = make_fx(lambda x, n: x.sum(1) * n, "fake")(x, n)
    assert gm.shape_env is shape_env
    out = [node for node in gm.graph.nodes if node.op == "output"][0].args[0][0]
    rows, = out.meta["val"].shape
    assert isinstance(rows, torch.SymInt) and str(rows) == str(x.shape[0])
    torch.testing.assert_close(gm(torch.ones(5, 6), 2), torch.full((5,), 12.0))


def test_symbolic_int_arguments_alone_are_traced_in_their_shape_env() -> None:
    """No fake tensor among the arguments: arithmetic on the symbols is still recorded."""
    from fakecore import ShapeEnv

    shape_env = ShapeEnv()
    n = shape_env.create_symint(4)
    gm = make_fx(lambda n: torch.arange(n - 1) * 2, "fake")(n)
    assert gm.shape_env is shape_env
    torch.testing.assert_close(gm(6), torch.arange(5) * 2)


def test_fake_arguments_of_two_modes_are_an_error() -> None:
    from fakecore import FakeTensorMode

    a, b = FakeTensorMode().from_tensor(torch.randn(2)), FakeTensorMode().from_tensor(torch.randn(2))
    with pytest.raises(ValueError, match="different FakeTensorModes"):
        make_fx(lambda a, b: a + b, "fake")(a, b)


@pytest.mark.parametrize("mode", MODES)
def test_grad_mode_switches_are_recorded_when_asked(mode: str) -> None:
    def fn(w, x):
        y = w * x
        with torch.no_grad():
            z = y * 2  # not recorded by autograd
        return (y + z).sum()

    w = torch.randn(3, requires_grad=True)
    x = torch.randn(3)
    plain = make_fx(fn, mode)(w, x)
    assert torch._C._set_grad_enabled not in _calls(plain)
    gm = make_fx(fn, mode, record_grad_mode=True)(w, x)
    switches = [n.args[0] for n in gm.graph.nodes if n.target is torch._C._set_grad_enabled]
    # into the block, and back to the mode the graph is called in (as leaving it does)
    assert switches[0] is False and switches[1].target is torch.is_grad_enabled
    assert torch.is_grad_enabled()
    w_eager = w.detach().clone().requires_grad_()
    gm(w, x).backward()
    fn(w_eager, x).backward()
    torch.testing.assert_close(w.grad, w_eager.grad)  # x, not 3x: z carries no gradient
    with torch.no_grad():  # called under no_grad: nothing records, and no_grad stays on
        assert not gm(w, x).requires_grad and not torch.is_grad_enabled()


@torch.library.custom_op("fxtrace_test::scaled", mutates_args=())
def _scaled(x: torch.Tensor, scale: float) -> torch.Tensor:
    return x * scale


_scaled.register_fake(lambda x, scale: torch.empty_like(x))
_scaled.register_autograd(lambda ctx, grad: (grad * ctx.scale, None),
                          setup_context=lambda ctx, inputs, output: setattr(ctx, "scale",
                                                                            inputs[1]))


@pytest.mark.parametrize("mode", MODES)
def test_a_custom_ops_own_autograd_switch_is_not_recorded(mode: str) -> None:
    """A custom op's autograd kernel runs its forward with grad off; the recorded op goes
    through that kernel again, so the graph must call it with grad on, or its output would
    carry no gradient."""

    def fn(x):
        return _scaled(x * 1, 3.0).sum()

    x = torch.randn(3, requires_grad=True)
    gm = make_fx(fn, mode, record_grad_mode=True)(x)
    assert torch._C._set_grad_enabled not in _calls(gm)
    gm(x).backward()
    torch.testing.assert_close(x.grad, torch.full((3,), 3.0))


@torch.library.custom_op("fxtrace_test::sine", mutates_args=())
def _sine(x: torch.Tensor) -> torch.Tensor:
    return torch.sin(x)


_sine.register_fake(lambda x: torch.empty_like(x))
_sine.register_autograd(lambda ctx, grad: grad * ctx.saved_tensors[0].cos(),
                        setup_context=lambda ctx, inputs, output: ctx.save_for_backward(
                            inputs[0]))


@pytest.mark.parametrize("mode", MODES)
def test_a_custom_ops_saved_tensor_hooks_switch_is_not_recorded(mode: str) -> None:
    """The saved-tensor hooks that a custom op's autograd kernel runs (with grad off) as it
    saves what `setup_context` asked for are the kernel's too: a compiled frame's hook packs as
    `detach()`, which reached the tracer with grad off and was recorded as a switch, so the
    next custom op ran without grad (aot_eager: no gradient, or a wrong one)."""

    def fn(x):
        return _sine(_sine(x)).sum()

    x = torch.randn(3, requires_grad=True)
    with torch.autograd.graph.saved_tensors_hooks(lambda t: t.detach(), lambda t: t):
        gm = make_fx(fn, mode, record_grad_mode=True)(x)
    assert torch._C._set_grad_enabled not in _calls(gm)
    gm(x).backward()
    torch.testing.assert_close(x.grad, torch.cos(torch.sin(x)) * torch.cos(x))


def test_a_mode_left_switched_is_left_switched_by_the_graph() -> None:
    def fn(x):
        torch._C._set_grad_enabled(False)
        return x * 2

    gm = make_fx(fn, "fake", record_grad_mode=True)(torch.ones(2))
    assert torch.is_grad_enabled()  # tracing changed no global state
    try:
        gm(torch.ones(2))
        assert not torch.is_grad_enabled()  # as fn leaves it
    finally:
        torch._C._set_grad_enabled(True)


@pytest.mark.parametrize("mode", ["real", "fake", "symbolic"])
def test_factory_calls_record_the_same_ops_as_torch(mode: str) -> None:
    from torch.fx.experimental.proxy_tensor import make_fx as torch_make_fx

    def f(x):
        return x + torch.ones(2) * torch.zeros(2).detach() + torch.full((2,), 3.0)

    def ops(gm: torch.fx.GraphModule) -> list:
        return [n.target for n in gm.graph.nodes if n.op == "call_function"]

    x = torch.randn(2)
    ours = make_fx(f, tracing_mode=mode)(x)
    assert ops(ours) == ops(torch_make_fx(f, tracing_mode=mode)(x))
    torch.testing.assert_close(ours(x), f(x))


def test_a_size_computed_in_a_kernel_is_rebuilt_after_a_replacement() -> None:
    def f(x, z):
        p = z[::3]  # its length, (s1 + 2) // 3, is known only to the kernel
        if z.shape[0] == 2 * x.shape[0]:  # a replacement: s1 -> 2*s0
            return torch.zeros(p.shape[0] * 2 + p.shape[0] % 2)
        return torch.zeros(1)

    gm = make_fx(f, tracing_mode="symbolic")(torch.randn(8), torch.randn(16))
    for n in (5, 10, 11):
        x, z = torch.randn(n), torch.randn(2 * n)
        assert gm(x, z).shape == f(x, z).shape


class _Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 10 * x  # not the derivative of the forward: which backward ran shows


def _cube(x):  # a function the graph's code can name (`_Cube.apply` it would look up in torch)
    return _Cube.apply(x)


@pytest.mark.parametrize("mode", MODES)
def test_an_opaque_call_is_one_node_whose_own_backward_runs(mode: str) -> None:
    from fxtrace import opaque_call

    def fn(x):
        return opaque_call(_cube, x * 2).sum()

    x = torch.randn(3, requires_grad=True)
    gm = make_fx(fn, mode)(x)
    calls = _calls(gm)
    assert _cube in calls  # one node; the forward's own multiplications not recorded
    assert calls.count(torch.ops.aten.mul.Tensor) == 1  # the `x * 2`
    gm(x).backward()
    torch.testing.assert_close(x.grad, 2 * 10 * (x.detach() * 2))


def _add_into(x, acc):  # writes `acc`, which the tracer does not see: it is opaque
    acc.add_(x)
    return x * 2


@pytest.mark.parametrize("mode", MODES)
def test_an_opaque_call_whose_result_is_unused_is_kept(mode: str) -> None:
    from fxtrace import opaque_call

    def fn(x, acc):
        opaque_call(_add_into, x, acc)
        return acc + 0

    gm = make_fx(fn, mode)(torch.ones(3), torch.zeros(3))
    assert _add_into in _calls(gm)  # (dead code elimination dropped it: the write was lost)
    acc = torch.zeros(3)
    assert gm(torch.ones(3), acc).tolist() == acc.tolist() == [1.0, 1.0, 1.0]


@pytest.mark.parametrize("mode", ["real", "fake", "symbolic"])
def test_in_place_metadata_changes_leave_earlier_node_values_as_they_were(mode: str) -> None:
    def f(x):
        y = x.clone()
        y.t_()
        y.unsqueeze_(0)
        out = torch.empty(0)
        torch.sin(x, out=out)  # resizes `out`
        a, _ = x.split(2)
        a.t_()
        return y + 1, out, a

    gm = make_fx(f, tracing_mode=mode)(torch.randn(3, 4))
    vals = {n.name: n.meta["val"] for n in gm.graph.nodes if n.op != "output"}
    assert len(vals["clone_default"].shape) == 2 and vals["clone_default"].shape[0] == vals["x"].shape[0]
    assert tuple(vals["empty_memory_format"].shape) == (0,)
    assert vals["getitem"].shape[0] == 2 and vals["split_tensor"][0].shape[0] == 2


def test_sizes_read_after_an_in_place_change_of_an_input_read_its_original_sizes() -> None:
    def f(x, y):
        a = y.shape[0] * 2  # the first size read from the inputs
        x.t_()
        return torch.zeros(a, x.shape[1])  # x's original dim 0

    def g(x):
        n = x.shape[0] + 1
        with torch.no_grad():
            y = x * n
        return y + 1

    gm = make_fx(f, tracing_mode="symbolic")(torch.randn(5, 3), torch.randn(7))
    assert gm(torch.randn(4, 6), torch.randn(2)).shape == (4, 4)
    gm = make_fx(g, tracing_mode="symbolic", record_grad_mode=True)(torch.randn(5))
    x = torch.randn(3)
    torch.testing.assert_close(gm(x), x * 4 + 1)


def test_a_size_equal_to_an_input_stride_is_read_from_a_size() -> None:
    def f(x):
        y = x.reshape(x.shape[0], -1)  # y.shape[1] is s1*s2, as x.stride(0) is
        return torch.zeros(y.shape[1])

    gm = make_fx(f, tracing_mode="symbolic")(torch.randn(3, 4, 5))
    x = torch.randn(6, 4, 5)[::2]  # the same sizes, another stride
    assert gm(x).shape == f(x).shape == (20,)


@pytest.mark.parametrize("mode", ["fake", "symbolic"])
def test_tracing_inside_an_active_fake_mode_uses_it(mode: str) -> None:
    from fakecore import FakeTensorMode, ShapeEnv

    def f(x):
        return (x.sin() + torch.ones(x.shape[0], 1)).sum(0)

    fake_mode = FakeTensorMode(ShapeEnv())
    real = torch.randn(4, 3)
    with fake_mode:
        made_inside = make_fx(f, tracing_mode=mode)(torch.randn(4, 3))
        from_real = make_fx(f, tracing_mode=mode)(real)
    assert made_inside.shape_env is from_real.shape_env is fake_mode.shape_env
    x = torch.randn(6 if mode == "symbolic" else 4, 3)
    assert torch.allclose(from_real(x), f(x))
    with torch._subclasses.FakeTensorMode(), pytest.raises(RuntimeError, match="inside a"):
        make_fx(f, tracing_mode=mode)(real)


def test_an_output_that_is_an_object_is_refused_in_words() -> None:
    """fx wrote such an output's repr into the graph's code: a SyntaxError, or a NameError when
    the graph was called (a module)."""
    for made in (lambda x: (x * 2, torch.nn.ReLU()), lambda x: (i for i in range(3)),
                 lambda x: [x, object()]):
        with pytest.raises(TypeError, match=r"returned .* object .*\(output leaf \d\)"):
            make_fx(made)(torch.ones(2))
    gm = make_fx(lambda x: (x + 1, None, 2.5, "s", torch.float16, slice(1, 2)))(torch.ones(2))
    assert gm(torch.zeros(2))[1:] == (None, 2.5, "s", torch.float16, slice(1, 2))


def test_an_enum_output_is_a_constant() -> None:
    """fx writes an enum member as its class's attribute: an output as before the check."""
    import enum

    class Mode(enum.Enum):
        TRAIN = "train"

    class Level(enum.IntEnum):
        HIGH = 2

    for mode in ("real", "symbolic"):
        gm = make_fx(lambda x: (x + 1, Mode.TRAIN, Level.HIGH), tracing_mode=mode)(torch.ones(2))
        assert gm(torch.zeros(2))[1:] == (Mode.TRAIN, Level.HIGH)


def test_an_overload_named_by_a_keyword_compiles() -> None:
    """`x.random_(0, 10)` is `aten.random_.from`: fx wrote it as `torch.ops.aten.random_.from`,
    a SyntaxError when the graph's code was compiled."""
    f = lambda x: x.clone().random_(2, 10) * x  # noqa: E731
    for mode in ("real", "fake", "symbolic"):
        x = torch.randn(3, 4)
        gm = make_fx(f, tracing_mode=mode)(x)
        torch.manual_seed(0)
        expected = f(x)
        torch.manual_seed(0)
        assert torch.equal(gm(x), expected)


def test_a_graph_with_an_overload_named_by_a_keyword_pickles() -> None:
    """(A local stand-in function as its target made `pickle`/`torch.save` of the
    GraphModule raise ObjNotFoundError.)"""
    import copy
    import pickle

    f = lambda x: x.clone().random_(2, 10) * x  # noqa: E731
    x = torch.randn(3, 4)
    gm = make_fx(f, tracing_mode="symbolic")(x)
    for again in (pickle.loads(pickle.dumps(gm)), copy.deepcopy(gm)):
        torch.manual_seed(0)
        expected = f(x)
        torch.manual_seed(0)
        assert torch.equal(again(x), expected)
    assert "torch.ops.aten.random_(" in pickle.loads(pickle.dumps(gm)).code


@pytest.mark.parametrize("mode", ["real", "fake", "symbolic"])
def test_a_subclass_with_its_own_dispatch_is_traced_through_its_inner_tensors(mode) -> None:
    """`(masked_tensor(x, m) * 2).get_data()`: the proxy mode took the MaskedTensor for a
    constant, so the graph returned the trace's inner tensor as `_tensor_constant` (a FakeTensor
    handed back to the caller in fake modes, stale data in the real one)."""
    import warnings

    def f(x):
        return (torch.masked.masked_tensor(x, x > 0) * 2).get_data() + 1

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gm = make_fx(f, tracing_mode=mode)(torch.randn(4, 3))
        y = torch.randn(4, 3)
        out = gm(y)
        expected = f(y)
    assert type(out) is torch.Tensor and not gm._buffers and "_tensor_constant" not in gm.code
    torch.testing.assert_close(out, expected)


def test_an_unused_op_on_an_int_input_is_kept_for_its_error() -> None:
    """`x + k` unused: its error depends on `k`'s value at run time (OverflowError past
    int64), so the symbolic graph keeps it; an unused op on sizes alone is dropped."""
    def f(x, k):
        unused = x + k  # noqa: F841
        also_unused = x.view(-1)  # noqa: F841
        return x * 2

    gm = make_fx(f, "symbolic")(torch.ones(2), 3)
    targets = [n.target for n in gm.graph.nodes if n.op == "call_function"]
    assert torch.ops.aten.add.Tensor in targets
    assert torch.ops.aten.view.default not in targets
    torch.testing.assert_close(gm(torch.ones(2), 5), torch.ones(2) * 2)
    with pytest.raises(OverflowError):
        f(torch.ones(2), 2**70)
    with pytest.raises(OverflowError):
        gm(torch.ones(2), 2**70)


@pytest.mark.parametrize("mode", MODES)
def test_a_higher_order_operator_is_refused_by_name(mode: str) -> None:
    """torch's own error named the mode's `supports_higher_order_operators` flag, not what
    make_fx does not do. (The op is called directly: `torch.cond` compiles it first.)"""
    def fn(x):
        return torch.ops.higher_order.cond(x.sum() > 0, torch.sin, torch.cos, (x,))

    with pytest.raises(NotImplementedError, match="does not trace the higher-order operator cond"):
        make_fx(fn, mode)(torch.randn(3))


def test_a_decomposed_op_broadcasts_a_slice_of_one_of_a_data_dependent_dim() -> None:
    # lerp's decomposition (torch._refs) broadcasts its operands itself and asserted
    # Eq(u0, Min(1, u0)) for `v[:1]` against `v`, false for every u0 > 1; eager broadcasts them
    def fn(x):
        v = x[x > 0]
        return torch.lerp(v, v[:1], 0.3)

    gm = make_fx(fn, "symbolic", decomposition_table=torch._decomp.get_decompositions(
        [torch.ops.aten.lerp]))(torch.tensor([1.0, 2.0, -1.0]))
    targets = [node.target for node in gm.graph.nodes]
    assert torch.ops.aten.lerp.Scalar not in targets
    assert torch.ops.aten._assert_scalar.default not in targets
    for values in ([1.0, 2.0, -1.0], [3.0, -1.0, 5.0, 7.0], [-1.0, -2.0]):
        x = torch.tensor(values)
        torch.testing.assert_close(gm(x), fn(x))
