"""A graph make_fx traced with symbolic sizes is right only for sizes like its example's: dims
that shared a symbol (duck sizing) stay equal, sizes the trace specialised or guarded keep
what it decided. compile_fx checks that at every call and raises a clear ValueError."""

import pytest
import torch

from fxtrace import make_fx
from inductor_lite import compile_fx, counters


def _compiled(fn, *args):
    return compile_fx(make_fx(fn, "symbolic")(*args), list(args))


def test_duck_sized_dims_must_stay_equal(device):
    def fn(x, y):  # the trace gives both dims one symbol: the branch is decided without a guard
        return x + y if x.shape[0] == y.shape[0] else x
    compiled = _compiled(fn, torch.randn(8, device=device), torch.randn(8, device=device))
    x, y = torch.randn(5, device=device), torch.randn(5, device=device)
    torch.testing.assert_close(compiled(x, y), fn(x, y))  # equal again: one version serves
    assert len(compiled.versions) == 1
    for a, b in ((8, 5), (1, 5)):  # (1, 5) broadcast in the graph: a wrong answer, not a crash
        with pytest.raises(ValueError, match=r"input 1 \('y'\) dim 0 is 5 but input 0 \('x'\) "
                                             rf"dim 0 is {a}: the graph was traced with them "
                                             r"equal \(one symbol, s0"):
            compiled(torch.randn(a, device=device), torch.randn(b, device=device))


def test_a_size_read_for_another_input_is_checked(device):
    def fn(x, y):
        return x + y.view(x.shape[0], -1).sum(1)
    compiled = _compiled(fn, torch.randn(8, device=device), torch.randn(8, 3, device=device))
    with pytest.raises(ValueError, match=r"input 1 \('y'\) dim 0 is 5 but input 0 \('x'\) dim 0"):
        compiled(torch.randn(8, device=device), torch.randn(5, 3, device=device))
    x, y = torch.randn(6, device=device), torch.randn(6, 4, device=device)
    torch.testing.assert_close(compiled(x, y), fn(x, y))


def test_a_size_fixed_by_a_guard_is_checked(device):
    def fn(x):
        return x * 2 if x.shape[0] == 8 else x * 3
    compiled = _compiled(fn, torch.randn(8, device=device))  # the graph is `x * 2`
    x = torch.randn(8, device=device)
    torch.testing.assert_close(compiled(x), fn(x))
    with pytest.raises(ValueError, match=r"input 0 \('x'\) dim 0 \(s0\) is 5: the graph was "
                                         r"traced assuming Eq\(s0, 8\) \(its trace"):
        compiled(torch.randn(5, device=device))


def test_sizes_zero_and_one_are_outside_a_symbols_range(device):
    def fn(x):  # `s0 == 1` is false by the symbol's range (at least 2): no guard recorded
        return x * 10 if x.shape[0] == 1 else x.sum(0, keepdim=True)
    compiled = _compiled(fn, torch.randn(4, 3, device=device))
    with pytest.raises(ValueError, match=r"dim 0 \(s0\) is 1: the graph was traced assuming "
                                         r"s0 >= 2"):
        compiled(torch.randn(1, 3, device=device))


def test_a_specialised_size_and_the_rank_are_checked(device):
    compiled = _compiled(lambda x: x.expand(3, 4) + 1, torch.randn(1, 4, device=device))
    with pytest.raises(ValueError, match=r"input 0 \('x'\) dim 0 is 3: the graph was traced "
                                         r"with that size fixed at 1"):
        compiled(torch.randn(3, 4, device=device))
    with pytest.raises(ValueError, match=r"input 0 \('x'\) is a tensor of 1 dims: the graph "
                                         r"was traced with a tensor of 2 dims there"):
        compiled(torch.randn(4, device=device))


def test_relations_between_an_int_and_a_size_and_from_a_cat(device):
    def fn(x, n):
        return x * 2 if n == x.shape[0] else x
    compiled = _compiled(fn, torch.randn(8, device=device), 8)
    x = torch.randn(6, device=device)
    torch.testing.assert_close(compiled(x, 6), fn(x, 6))
    with pytest.raises(ValueError, match=r"input 1 \('n'\) \(s1\) is 3: the graph was traced "
                                         r"assuming Eq\(s1, s0\)"):
        compiled(x, 3)
    with pytest.raises(ValueError, match=r"input 1 \('n'\) is float 6.0: the graph was traced "
                                         "with an int there"):
        compiled(x, 6.0)

    def halves(x, y):  # `cat` is 2 * s0 long: viewed as two halves of x's length
        return torch.cat([x, y]).view(2, x.shape[0], -1).sum(0)
    compiled = _compiled(halves, torch.randn(8, 4, device=device), torch.randn(8, 4, device=device))
    x, y = torch.randn(6, 4, device=device), torch.randn(6, 4, device=device)
    torch.testing.assert_close(compiled(x, y), halves(x, y))
    with pytest.raises(ValueError, match=r"input 1 \('y'\) dim 0 is 5 but input 0 \('x'\) dim 0 is 8"):
        compiled(torch.randn(8, 4, device=device), torch.randn(5, 4, device=device))


def test_example_inputs_unlike_the_trace_are_refused_at_compile_time(device):
    gm = make_fx(lambda x, y: x + y, "symbolic")(torch.randn(8), torch.randn(8))
    with pytest.raises(ValueError, match=r"input 1 \('y'\) dim 0 is 5 but input 0 \('x'\) dim 0 "
                                         "is 8"):
        compile_fx(gm, [torch.randn(8, device=device), torch.randn(5, device=device)])
    assert counters["graphs"] == 0


def test_the_check_is_straight_line_and_frontends_graphs_have_none(device):
    compiled = _compiled(lambda x, y: x * y, torch.randn(4, 6, device=device),
                         torch.randn(4, 6, device=device))
    source = compiled.traced_sizes.source
    assert "for " not in source and "size1[0] != v0" in source and "size1[1] != v1" in source
    # a graph traced with static sizes runs as it came (sizes it fixed stay fixed); one a
    # frontend captured is checked by the frontend's guards
    assert compile_fx(make_fx(lambda x: x * 2)(torch.randn(3)), [torch.randn(3)]).traced_sizes \
        is None
    # (a frontend's graph carries its ShapeEnv in `gm.meta`, as dynamo's does)
    gm = make_fx(lambda x, y: x + y, "symbolic")(torch.randn(8), torch.randn(8))
    gm.meta["shape_env"] = gm.shape_env
    assert compile_fx(gm, [torch.randn(8), torch.randn(8)]).traced_sizes is None


def test_a_float_argument_held_as_a_constant_is_checked(device):
    # make_fx traces a float argument as a constant (`x * 0.9`): the graph computes with it
    # whatever it is given, so another value is refused (the sign of zero and NaN included)
    def f(x, s):
        return x * s if s > 0.5 else x * 3

    x = torch.randn(4, device=device)
    gm = make_fx(f, "symbolic")(x, 0.9)
    compiled = compile_fx(gm, [x, 0.9])
    torch.testing.assert_close(compiled(x, 0.9), f(x, 0.9))
    for other in (0.1, 1, -0.9):
        with pytest.raises(ValueError, match=r"input 1 \('s"):
            compiled(x, other)
    zero = compile_fx(make_fx(lambda x, s: x / (s + 1), "symbolic")(x, 0.0), [x, 0.0])
    with pytest.raises(ValueError, match="traced with 0.0 there"):
        zero(x, -0.0)
    nan = compile_fx(make_fx(lambda x, s: x + s, "symbolic")(x, float("nan")), [x, float("nan")])
    assert nan(x, float("nan")).isnan().all()
