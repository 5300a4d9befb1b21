"""Element-wise calls eager refuses are refused on fake tensors too, with eager's error."""

import pytest
import torch

from fakecore import FakeTensorMode

F32, I64, BOOL, C64 = torch.float32, torch.int64, torch.bool, torch.complex64

REFUSED = {
    "float_bitwise_and": (lambda x, y: x.bitwise_and(y), (F32, F32)),
    "float_and_operator": (lambda x, y: x & y, (F32, F32)),
    "float_bitwise_not": (lambda x: x.bitwise_not(), (F32,)),
    "bool_sub": (lambda x, y: x - y, (BOOL, BOOL)),
    "bool_sub_": (lambda x, y: x.sub_(y), (BOOL, BOOL)),
    "int_add_float_alpha": (lambda x, y: x.add_(y, alpha=0.5), (I64, I64)),
    "int_celu_": (lambda x: torch.nn.functional.celu_(x), (I64,)),
    "int_leaky_relu_": (lambda x: torch.nn.functional.leaky_relu_(x), (I64,)),
    "int_logit_": (lambda x: x.logit_(), (I64,)),
    "int_ldexp_": (lambda x, y: x.ldexp_(y), (I64, I64)),
    "bool_abs": (lambda x: x.abs(), (BOOL,)),
    "complex_ceil": (lambda x: x.ceil(), (C64,)),
    "bool_add_int": (lambda x: x.add_(1), (BOOL,)),
    "int_pow_negative": (lambda x: x.pow_(-1), (I64,)),
}


@pytest.mark.parametrize("name", REFUSED)
def test_a_call_eager_refuses_for_its_dtypes_is_refused_on_fakes(name):
    fn, dtypes = REFUSED[name]
    real = [torch.ones(4, dtype=d) for d in dtypes]
    with pytest.raises((RuntimeError, NotImplementedError)) as eager:
        fn(*real)
    mode = FakeTensorMode()
    with mode, pytest.raises(type(eager.value)) as fake:
        fn(*[mode.from_tensor(t) for t in real])
    assert str(fake.value) == str(eager.value)


@pytest.mark.parametrize("op", ["eq_", "add_", "gcd_", "bitwise_or_"])
def test_an_in_place_result_that_does_not_fit_self_is_refused(op):
    x, y = torch.ones(5, 1, dtype=I64), torch.ones(5, 5, dtype=I64)
    with pytest.raises(RuntimeError) as eager:
        getattr(x, op)(y)
    mode = FakeTensorMode()
    with mode, pytest.raises(RuntimeError) as fake:
        getattr(mode.from_tensor(x), op)(mode.from_tensor(y))
    assert str(fake.value) == str(eager.value)


def test_calls_eager_accepts_still_pass():
    mode = FakeTensorMode()
    with mode:
        i = mode.from_tensor(torch.ones(5, 5, dtype=I64))
        f = mode.from_tensor(torch.ones(5, 1))
        assert (i & i).dtype == I64 and (i.add_(i, alpha=2)) is i
        assert i.eq_(f).shape == (5, 5)  # broadcasting into self is fine
        assert torch.ones(5, 5).mvlgamma(3).shape == (5, 5)  # (value checks need values)
        assert (f + torch.tensor(True)).dtype == F32
        assert (torch.tensor(2) + f).shape == (5, 1)
