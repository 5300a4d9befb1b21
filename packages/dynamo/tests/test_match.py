"""`match` statements: class, mapping, sequence, literal and value patterns, guards and
captures, traced (each test under its guards) and equal to eager on every subject."""

from __future__ import annotations

import enum
from dataclasses import dataclass

import pytest
import torch

import dynamo


@dataclass
class Scale:
    factor: float
    bias: float = 0.0


@dataclass
class Shift:
    amount: float


class Mode(enum.Enum):
    FAST = 1
    SLOW = 2


def apply(x, op):
    match op:
        case Scale(f, bias=0.0):
            return x * f
        case Scale(f, b):
            return x * f + b
        case Shift(amount=a) if a < 0:
            return x - a * 2
        case Shift(a):
            return x + a
        case {"scale": s, **rest}:
            return x * s + len(rest)
        case [a, b, *rest]:
            return x + a - b + sum(rest)
        case int(n) | float(n):
            return x ** 2 + n
        case Mode.FAST:
            return x.relu()
        case "double" | "twice":
            return x * 2
        case None:
            return x
        case torch.Tensor(ndim=2) as t:
            return x + t.sum(0)
        case _:
            return -x


SUBJECTS = [Scale(2.0), Scale(2.0, 1.5), Shift(-1.0), Shift(3.0), {"scale": 3.0},
            {"scale": 0.5, "a": 1, "b": 2}, [1.0, 2.0], (1.0, 2.0, 3.0, 4.0), 3, 2.5,
            Mode.FAST, Mode.SLOW, "double", "twice", "other", None, torch.ones(2, 4),
            torch.ones(4), [1.0]]


@pytest.mark.parametrize("op", SUBJECTS, ids=repr)
def test_each_subject_takes_the_branch_eager_takes(op):
    dynamo.reset()
    compiled = dynamo.compile(apply, backend="eager")
    for seed in range(2):
        x = torch.randn(4, generator=torch.Generator().manual_seed(seed))
        torch.testing.assert_close(compiled(x, op), apply(x, op))
    assert not dynamo.explain(apply)(torch.randn(4), op).eager  # traced, not run eagerly


@pytest.mark.parametrize("op", [Scale(2.0, 1.5), {"scale": 0.5, "a": 1}, [1.0, 2.0, 3.0],
                                Mode.FAST, torch.ones(2, 4)])
def test_a_match_is_traced_into_one_graph(op):
    explained = dynamo.explain(apply)(torch.randn(4), op)
    assert explained.graph_count == 1 and not explained.breaks and not explained.eager


def test_a_mutated_subject_takes_the_new_branch():
    compiled = dynamo.compile(apply, backend="eager")
    x = torch.randn(4)
    op = Shift(3.0)
    torch.testing.assert_close(compiled(x, op), x + 3.0)
    op.amount = -2.0  # now the guarded case matches
    torch.testing.assert_close(compiled(x, op), x + 4.0)
    config = {"scale": 2.0}
    torch.testing.assert_close(compiled(x, config), x * 2.0)
    config["extra"] = 1
    torch.testing.assert_close(compiled(x, config), x * 2.0 + 1)


class NoneArgs(int):
    __match_args__ = None  # not a tuple: a TypeError, not int's match of the subject itself


class BadName:
    __match_args__ = ("a", 3)
    a = 1


class OneArg:
    __match_args__ = ("a",)
    a = 1


def match_or_type_error(x, subject):
    try:
        match subject:
            case NoneArgs(n):
                return x + n
            case BadName(_, _):
                return x - 1
            case OneArg(_, a=w):
                return x * w
            case int(a, _):
                return x + a
    except TypeError as e:
        return x, str(e)
    return x * 2


@pytest.mark.parametrize("subject", [NoneArgs(3), BadName(), OneArg(), 3],
                         ids=["none_match_args", "not_a_str", "twice", "int_two"])
def test_a_class_pattern_python_refuses_raises_its_type_error_in_the_trace(subject):
    # `__match_args__ = None` matched an int subclass as the subject itself, and a name
    # matched twice (`OneArg(v, a=w)`) matched: both are CPython's TypeError; a name that is
    # not a str and too many sub-patterns ran the whole frame eagerly
    x = torch.randn(4)
    eager = match_or_type_error(x, subject)
    assert isinstance(eager, tuple)
    explained = dynamo.explain(match_or_type_error)(x, subject)
    assert not explained.eager
    compiled = dynamo.compile(match_or_type_error, backend="eager")(x, subject)
    torch.testing.assert_close(compiled[0], eager[0])
    assert compiled[1] == eager[1]
