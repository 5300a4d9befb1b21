"""Ops whose sizes depend on data: unbacked symbols with a ShapeEnv, a clear error without."""

from __future__ import annotations

import pytest
import sympy
import torch

from fakecore import DataDependentError, FakeTensorMode, ShapeEnv
from fakecore.data_dependent import broadcast_slices_of_one


def _symbolic(t: torch.Tensor, *dims: int):
    mode = FakeTensorMode(ShapeEnv())
    return mode, mode.from_tensor(t, dynamic_dims=dims)


def test_nonzero_gets_an_unbacked_count_bounded_by_numel() -> None:
    mode, x = _symbolic(torch.randn(3, 4))
    with mode:
        n = (x > 0).nonzero()
    rows = n.shape[0]
    assert isinstance(rows, torch.SymInt) and str(rows).startswith("u")
    assert n.shape[1] == 2 and n.dtype == torch.int64
    rng = mode.shape_env.var_to_range[rows.node.expr]
    assert (rng.lower, rng.upper) == (0, 12)


def test_unbacked_counts_are_bounded_by_what_the_op_can_select() -> None:
    mode = FakeTensorMode(ShapeEnv())
    x = mode.from_tensor(torch.ones(4, 3))
    mask = mode.from_tensor(torch.ones(3, dtype=torch.bool))  # broadcast: selects up to 12
    repeats = mode.from_tensor(torch.tensor([3, 3]))  # 6 elements from 2 repeats
    y = mode.from_tensor(torch.randn(5), dynamic_dims=(0,))
    with mode:
        selected = x.masked_select(mask).shape[0]
        repeated = torch.repeat_interleave(repeats).shape[0]
        nonzero = y.nonzero().shape[0]
    ranges = mode.shape_env.var_to_range
    bounds = [(ranges[n.node.expr].lower, ranges[n.node.expr].upper)
              for n in (selected, repeated, nonzero)]
    # A symbolic numel's example value (5) bounds nothing for other inputs.
    assert bounds == [(0, 12), (0, sympy.oo), (0, sympy.oo)]


def test_the_same_mask_gives_the_same_count() -> None:
    mode, x = _symbolic(torch.randn(3, 4))
    with mode:
        mask = x > 0
        a, b = x[mask], (x * 2)[mask]
        c = x[x > 1]
    assert a.shape[0].node.expr == b.shape[0].node.expr
    assert c.shape[0].node.expr != a.shape[0].node.expr


def test_writing_a_tensor_forgets_its_memoized_unbacked_values() -> None:
    mode, x = _symbolic(torch.tensor([1.0, -1.0, 2.0]))
    with mode:
        m = x > 0
        before = m.nonzero().shape[0]
        view = m[:]
        view.logical_not_()  # writes m's storage through a view
        after = m.nonzero().shape[0]
        s = x.sum()
        a = s.item()
        s.add_(1)
        b = s.item()
    assert before.node.expr != after.node.expr
    assert a.node.expr != b.node.expr


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: torch.masked_select(x, x > 0),
        lambda x: torch.unique(x),
        lambda x: torch.unique(x, return_counts=True, return_inverse=True)[2],
        lambda x: torch.unique_consecutive(x),
        lambda x: torch.argwhere(x),
        lambda x: x[x > 0],
    ],
    ids=["masked_select", "unique", "unique_counts", "unique_consecutive", "argwhere", "bool_index"],
)
def test_data_dependent_ops_trace_with_unbacked_sizes(fn) -> None:
    mode, x = _symbolic(torch.randn(6), 0)
    with mode:
        out = fn(x)
    assert any(str(s).startswith("u") for s in out.shape)


@pytest.mark.parametrize("shape", [(3,), (4, 3), (2, 2, 2)])
@pytest.mark.parametrize("write", [False, True])
def test_a_mask_of_the_wrong_shape_is_an_index_error_as_in_eager(shape, write) -> None:
    real_x, real_mask = torch.randn(4, 2), torch.ones(shape, dtype=torch.bool)

    def index(x, mask):
        if write:
            x[mask] = 0.0
            return x
        return x[mask]

    with pytest.raises(IndexError) as eager:
        index(real_x, real_mask)
    mode = FakeTensorMode(ShapeEnv())
    x, mask = mode.from_tensor(real_x), mode.from_tensor(real_mask)
    with pytest.raises(IndexError) as fake:
        with mode:
            index(x, mask)
    assert str(fake.value) == str(eager.value)
    with mode:
        assert index(x, x > 0).dim() == (2 if write else 1)  # a mask of the right shape


def test_unique_inverse_has_the_input_shape() -> None:
    mode, x = _symbolic(torch.randn(6, 2), 0)
    with mode:
        _, inverse = torch.unique(x, return_inverse=True)
    assert inverse.shape == x.shape


def test_item_is_an_unbacked_symbol_of_the_right_type() -> None:
    mode = FakeTensorMode(ShapeEnv())
    x = mode.from_tensor(torch.randn(3))
    i = mode.from_tensor(torch.tensor([1, 2]))
    with mode:
        f = x.sum().item()
        n = i.sum().item()
    assert isinstance(f, torch.SymFloat) and isinstance(n, torch.SymInt)


def test_branching_on_data_names_the_producer_and_the_line() -> None:
    mode, x = _symbolic(torch.randn(5), 0)
    with mode:
        n = x.nonzero().shape[0]
        with pytest.raises(DataDependentError, match=r"u0 from aten\.nonzero.*test_data_dependent\.py:\d+"):
            if n > 2:
                pass


def test_size_like_unbacked_values_pass_size_checks() -> None:
    mode, x = _symbolic(torch.randn(5), 0)
    with mode:
        picked = x[x > 0]
        doubled = torch.cat([picked, picked]) * 2
        empty = torch.zeros(picked.shape[0], 3)
    assert str(doubled.shape[0]) == f"2*{picked.shape[0]}"
    assert empty.shape[1] == 3


@pytest.mark.parametrize(
    "fn",
    [lambda x: x.nonzero(), lambda x: torch.unique(x), lambda x: x.sum().item()],
    ids=["nonzero", "unique", "item"],
)
def test_without_shape_env_data_dependent_ops_raise_naming_the_op(fn) -> None:
    mode = FakeTensorMode()
    x = mode.from_tensor(torch.randn(4))
    with pytest.raises(DataDependentError, match=r"aten\.\w+"):
        with mode:
            fn(x)


def test_slicing_at_a_data_dependent_start() -> None:
    mode, x = _symbolic(torch.randn(5, 4), 0, 1)
    start = mode.from_tensor(torch.tensor(1))
    with mode:
        piece = torch.narrow(x, 0, start, 2)
        rest = x[start.item():]
    assert piece.shape[0] == 2 and str(piece.shape[1]) == str(x.shape[1])
    assert str(rest.shape[0]).startswith("u") and rest.shape[1] == x.shape[1]


def _value_at(size, n: int) -> int:
    """`size` (an int or a SymInt over u0) with n for u0."""
    if not isinstance(size, torch.SymInt):
        return size
    expr = size.node.expr
    return int(expr.xreplace({s: sympy.Integer(n) for s in expr.free_symbols if s.name == "u0"}))


@pytest.mark.parametrize("index", [
    slice(1, None), slice(None, 2), slice(-1, None), slice(None, -1), slice(1, 3),
    slice(-2, -1), slice(1, None, 2), slice(-7, 7), slice(5, None), slice(None, -7, 3),
])
def test_fixed_slices_of_a_data_dependent_dim_are_min_max_of_its_size(index) -> None:
    # eager clamps the bounds to the dim's size: here they are Min/Max expressions of u0 that
    # give eager's size and offset for every value of u0 (none is guessed, none is a new symbol)
    mode = FakeTensorMode(ShapeEnv())
    with mode:
        n = mode.from_tensor(torch.ones(8)).nonzero().shape[0]
        piece = torch.empty(3, n, 2)[:, index]
    assert {s.name for s in piece.shape[1].node.expr.free_symbols} == {"u0"}
    for value in range(9):
        want = torch.empty(3, value, 2)[:, index]
        assert _value_at(piece.shape[1], value) == want.shape[1]
        assert _value_at(piece.storage_offset(), value) == want.storage_offset()
        assert piece.stride()[1:] == want.stride()[1:]


def test_slices_of_a_data_dependent_dim_read_as_torch_writes_them() -> None:
    mode = FakeTensorMode(ShapeEnv())
    with mode:
        x = mode.from_tensor(torch.ones(4))[mode.from_tensor(torch.tensor([True] * 4))]
        shapes = [x[1:], x[:2], x[-1:], x.narrow(0, 0, 1), x.roll(1)]
    assert [str(t.shape[0]) for t in shapes] == [
        "Max(0, u0 - 1)", "Min(2, u0)", "Min(1, u0)", "Min(1, u0)", "u0"]
    assert [str(t.storage_offset()) for t in shapes] == ["Min(1, u0)", "0", "Max(0, u0 - 1)",
                                                          "0", "0"]
    with mode, pytest.raises(RuntimeError, match="shifts and dimensions must align"):
        x.roll([1, 2], [0])


def test_a_data_dependent_bound_in_a_known_range_keeps_its_symbol() -> None:
    mode = FakeTensorMode(ShapeEnv())
    t = mode.from_tensor(torch.tensor([3, 3]))
    with mode:
        i = t[0].item()
        torch._check(i >= 0)
        torch._check(i < 10)
        head, tail = torch.zeros(10)[:i], torch.zeros(10)[i:]
        j = t[1].item()
        unknown = torch.zeros(10)[:j]  # j may be negative: counted from the end, or not
    assert (str(head.shape[0]), head.storage_offset()) == ("u0", 0)
    assert (str(tail.shape[0]), str(tail.storage_offset())) == ("10 - u0", "u0")
    # a slice from the start stays at offset 0 (its length is a new symbol, at most 10)
    assert unknown.storage_offset() == 0 and str(unknown.shape[0]) == "u2"
    assert mode.shape_env.var_to_range[unknown.shape[0].node.expr].upper == 10


def test_pack_padded_sequence_says_it_needs_the_lengths_values() -> None:
    mode = FakeTensorMode(ShapeEnv())
    x, lengths = mode.from_tensor(torch.randn(3, 5, 4)), mode.from_tensor(torch.tensor([5, 3, 2]))
    with mode, pytest.raises(DataDependentError, match="lengths' values"):
        torch.ops.aten._pack_padded_sequence(x, lengths, True)


def test_bincount_has_an_unbacked_length_and_eagers_dtypes() -> None:
    x, w = torch.tensor([0, 1, 1, 3]), torch.rand(4)
    with FakeTensorMode(ShapeEnv()) as mode:
        fx, fw = mode.from_tensor(x), mode.from_tensor(w)
        counts = torch.bincount(fx)
        weighted = torch.bincount(fx, fw, minlength=8)
        doubled = torch.bincount(fx, fw.double())
    assert isinstance(counts.shape[0], torch.SymInt) and counts.dtype == torch.long
    assert (weighted.dtype, doubled.dtype) == (torch.float32, torch.float64)
    with pytest.raises(DataDependentError, match="bincount"):
        with FakeTensorMode() as static:
            torch.bincount(static.from_tensor(x))


def test_size_hint_does_not_decide_through_an_unbacked_symbol():
    # Eq(2*u0, 1) is False for every integer u0 once s0 = 2 is substituted; deciding it from
    # that partial substitution recorded the guard Ne(s0*u0, 1), which no input binds
    # (`x[m].reshape(-1).view(-1, 1)` with dynamic sizes: ValueError from guard building)
    import sympy

    from fakecore.shape_env import ShapeEnv

    env = ShapeEnv()
    s0 = env.create_symint(2).node.expr
    u0 = env.create_unbacked_symint("nonzero").node.expr
    assert env.size_hint(sympy.Eq(s0 * u0, 1)) is None
    assert env.evaluate_expr(sympy.Eq(s0 * u0, 1), fallback=False) == sympy.false
    assert not env.guards


def test_a_comparison_of_float_algebra_sympy_simplified_is_left_to_the_data() -> None:
    # `v * 0 <= 0`, `v - v == 0`, `(v + s) - v > 0` of an `.item()` are sympy's `0 <= 0`,
    # `0 == 0` and `s > 0`, but False for a NaN or an infinity: they were the constant True
    # (the last a guard on s), so a compiled branch or check took it for every value
    env = ShapeEnv()
    mode = FakeTensorMode(env)
    x = mode.from_tensor(torch.randn(3))
    i = mode.from_tensor(torch.tensor([1, 2]))
    s = env.create_symfloat(2.0)
    with mode:
        v = x.sum().item()
        n = i.sum().item()
    conditions = [v * 0 <= 0, v - v == 0, v * 0 != 0, 0 * v + 1 > 0, (v + s) - v > 0,
                  abs(v - v) < 1, torch.sym_min(v - v, 2.0) < 1]
    for condition in conditions:
        assert isinstance(condition, torch.SymBool)
        with pytest.raises(DataDependentError, match="float algebra that sympy simplified"):
            bool(condition)
    torch._check(v * 0 <= 0)  # assumed while tracing, and checked at run time
    assert len(env.runtime_asserts) == 1
    assert not env.guards
    # algebra that is exact stays decided: an int's, a float input's (a finite float), a
    # float's that sympy did not simplify
    assert (n - n == 0) is True and (n * 0.0 == 0) is True and (s - s == 0) is True
    with pytest.raises(DataDependentError, match=r"zuf\d+ from aten"):
        bool(v * 2 > 0)


def test_a_slice_of_one_of_a_data_dependent_dim_broadcasts_against_it() -> None:
    # `x[:1]` has size Min(1, u0): 1 unless x is empty. torch's rule for unbacked broadcasting
    # could not tell it is 1 and asserted Eq(u0, Min(1, u0)), false for every u0 > 1
    mode = FakeTensorMode(ShapeEnv())
    with mode:
        x = mode.from_tensor(torch.ones(4, 3))[mode.from_tensor(torch.tensor([True] * 4))]
        out = torch.fmod(x, x[:1])
        out_t = torch.where(x.t() > 0, x.t()[:, -1:], 0.0)
    assert str(out.shape[0]) == "u0" and str(out_t.shape[1]) == "u0"
    assert mode.shape_env.runtime_asserts == []


def test_an_in_place_op_on_a_slice_of_one_checks_it_holds_the_broadcast() -> None:
    # eager's `x[:1].add_(x)` raises unless x has at most one element: the sizes must be equal
    mode = FakeTensorMode(ShapeEnv())
    with mode:
        x = mode.from_tensor(torch.ones(4))[mode.from_tensor(torch.tensor([True] * 4))]
        head = x[:1]
        out = head.add_(x)
    assert out is head and str(out.shape[0]) == "Min(1, u0)"
    assert [str(a.expr) for a in mode.shape_env.runtime_asserts] == ["Eq(Min(1, u0), u0)"]


def test_a_pointwise_op_without_slices_of_one_gets_its_own_inputs() -> None:
    # the inputs with nothing to broadcast are passed on as they are, not remade as views
    mode = FakeTensorMode(ShapeEnv())
    x = mode.from_tensor(torch.ones(4, 300), dynamic_dims=(0,))
    y = mode.from_tensor(torch.ones(300), dynamic_dims=(0,))
    with mode:
        selected = x[mode.from_tensor(torch.tensor([True] * 4))]
    args = (selected[:1], selected, y, 2.0)
    out = broadcast_slices_of_one(mode, args)
    assert out[0] is not args[0] and all(a is b for a, b in zip(out[1:], args[1:]))


def test_a_slice_of_one_of_a_data_dependent_dim_expands_to_it() -> None:
    # eager's `x[:1].expand_as(x)` holds for every u0 (1 to u0, or 0 to 0): torch's rule for
    # expand asserted Eq(Min(1, u0), u0), false for every u0 > 1
    mode = FakeTensorMode(ShapeEnv())
    with mode:
        x = mode.from_tensor(torch.ones(4, 3))[mode.from_tensor(torch.tensor([True] * 4))]
        out = x[:1].expand_as(x)
        out_3d = x[:1].expand(2, x.shape[0], 3)
    assert str(out.shape[0]) == "u0" and out.stride() == (0, 1)
    assert str(out_3d.shape[1]) == "u0" and out_3d.stride() == (0, 0, 1)
    assert mode.shape_env.runtime_asserts == []


def test_a_slice_of_one_expanded_to_another_size_keeps_the_check() -> None:
    # `Min(1, u0)` to `u1` is eager's expand only where the sizes are equal (or u0 > 0 ...):
    # not decided here, the check stays
    mode = FakeTensorMode(ShapeEnv())
    with mode:
        x = mode.from_tensor(torch.ones(4))[mode.from_tensor(torch.tensor([True] * 4))]
        y = mode.from_tensor(torch.ones(4))[mode.from_tensor(torch.tensor([True, False] * 2))]
        x[:1].expand_as(y)
    assert mode.shape_env.runtime_asserts != []


@pytest.mark.parametrize("op, size, asserts", [
    (lambda x, y: x + x[:1:2], "u0", []),
    (lambda x, y: x + x[0:2:2], "u0", []),
    (lambda x, y: x[:3] + x[:1], "Min(3, u0)", []),
    (lambda x, y: x[1:] + x[1:2], "Max(0, u0 - 1)", []),
    # 1 or 0 whatever the other size: its product with it, eager's own check at run time
    (lambda x, y: x + x[1:2], "u0*Min(1, Max(0, u0 - 1))",
     ["(u0 <= 1) | Eq(Min(1, Max(0, u0 - 1)), 1)"]),
    (lambda x, y: y + x[:1], "u1*Min(1, u0)", ["(u1 <= 1) | Eq(Min(1, u0), 1)"]),
    (lambda x, y: x[:1] + y[:1], "Min(1, u0)*Min(1, u1)", []),
    (lambda x, y: x[:1].expand_as(y), "u1", ["Eq(u1, 0) | Eq(Min(1, u0), 1)"]),
], ids=["step", "step-of-two", "two-slices", "second", "second-of-all", "other-size",
        "two-heads", "expand-other"])
def test_a_size_of_at_most_one_broadcasts_as_eager_does(op, size, asserts) -> None:
    # torch's rule asserted the sizes equal, false for data where eager works (`x + x[1:2]`
    # for every u0 > 1; `y + x[:1]` for every u1 > 1 when x is nonempty)
    mode = FakeTensorMode(ShapeEnv())
    with mode:
        x = mode.from_tensor(torch.ones(4))[mode.from_tensor(torch.tensor([True] * 4))]
        y = mode.from_tensor(torch.ones(4))[mode.from_tensor(torch.tensor([True, False] * 2))]
        out = op(x, y)
    assert str(out.shape[0]) == size
    assert [str(a.expr) for a in mode.shape_env.runtime_asserts] == asserts
