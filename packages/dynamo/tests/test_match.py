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
