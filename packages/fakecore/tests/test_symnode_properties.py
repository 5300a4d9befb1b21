"""SymNode arithmetic against Python ints (hypothesis): hints, values and guards agree."""

from __future__ import annotations

import operator

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from fakecore import ShapeEnv

OPS = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul,
    "floordiv": operator.floordiv, "mod": operator.mod, "min": min, "max": max,
    "lt": operator.lt, "le": operator.le, "eq": operator.eq, "ne": operator.ne,
    "gt": operator.gt, "ge": operator.ge, "truediv": operator.truediv,
}
SYM_OPS = {**OPS, "min": torch.sym_min, "max": torch.sym_max}


def _value(result):
    if isinstance(result, torch.SymBool):
        return bool(result)
    if isinstance(result, torch.SymFloat):
        return float(result)
    if isinstance(result, torch.SymInt):
        return int(result)
    return result


@settings(max_examples=100, deadline=None)
@given(
    st.integers(2, 50), st.integers(2, 50), st.integers(-20, 20),
    st.sampled_from(sorted(OPS)), st.sampled_from(["sym_sym", "sym_int", "int_sym"]),
)
def test_symbolic_arithmetic_agrees_with_python(a, b, k, op, shape) -> None:
    env = ShapeEnv(duck_shape=False)
    sa, sb = env.create_symint(a), env.create_symint(b)
    left, right = {"sym_sym": (sa, sb), "sym_int": (sa, k), "int_sym": (k, sb)}[shape]
    plain = {"sym_sym": (a, b), "sym_int": (a, k), "int_sym": (k, b)}[shape]
    if op in ("floordiv", "mod", "truediv") and plain[1] == 0:
        return
    expected = OPS[op](*plain)
    result = SYM_OPS[op](left, right)
    hint = result.node.hint if hasattr(result, "node") else result
    assert hint == expected
    assert _value(result) == expected
    # every guard recorded while deciding holds for the example values
    for guard in env.guards:
        assert bool(guard.expr.xreplace(env.var_to_val))


@settings(max_examples=100, deadline=None)
@given(st.integers(2, 30), st.integers(2, 30), st.integers(0, 3))
def test_polynomials_and_powers(a, b, p) -> None:
    env = ShapeEnv(duck_shape=False)
    sa, sb = env.create_symint(a), env.create_symint(b)
    result = (sa * sb + sa) ** p - sb // 2
    assert result.node.hint == (a * b + a) ** p - b // 2
    assert int(result) == (a * b + a) ** p - b // 2
