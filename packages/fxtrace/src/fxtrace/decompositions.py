"""The decomposition preset for backends: everything down to PyTorch's "core aten" op set.

A backend that lowers aten graphs wants few distinct ops. PyTorch marks a small core set
(`torch.Tag.core`) and ships decompositions of most other ops into it; this preset is that
table, minus decompositions of core ops themselves.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch._decomp import core_aten_decompositions as _torch_core_table


def core_aten_decompositions() -> dict[Any, Callable]:
    """{op: decomposition} for every non-core aten op that decomposes into core ops."""
    return {
        op: fn for op, fn in _torch_core_table().items()
        if isinstance(op, torch._ops.OpOverload) and torch.Tag.core not in op.tags
    }
