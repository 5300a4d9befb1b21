"""Arguments of graph nodes as FX's generated code can print them."""

from __future__ import annotations

import math
import operator
from typing import Any

import torch.fx


def negative_number(value: Any) -> bool:
    """Whether FX prints `value` with a leading minus sign (-0.0 and -inf too)."""
    if isinstance(value, float):
        return math.copysign(1.0, value) < 0
    return isinstance(value, int) and not isinstance(value, bool) and value < 0


def printable_args(graph: torch.fx.Graph, target: Any, args: tuple, val_key: str) -> tuple:
    """`args` of a `target` node, where a negative number as the base of `**` becomes a node
    of its own (`neg = -2`, then `neg ** n`): FX prints `operator.pow(-2, n)` as `-2 ** n`,
    which Python reads as `-(2 ** n)`. (`val_key`: the meta entry for the node's value.)"""
    if target is operator.pow and args and negative_number(args[0]):
        base = graph.call_function(operator.neg, (-args[0],))
        base.meta[val_key] = args[0]
        args = (base, *args[1:])
    return args
