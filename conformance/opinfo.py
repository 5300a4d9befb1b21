"""Shared pieces of the OpInfo sweeps: the samples, a time limit, and metadata comparison.

A sweep runs every op of PyTorch's OpInfo database (`op_db`) on its float32 CPU samples, once
through our implementation and once through PyTorch's own (the peer), and counts the samples
each gets right. These helpers are what the sweeps share.
"""

from __future__ import annotations

import platform
import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import torch
from torch.utils._pytree import tree_flatten

# The fixed sample that CI runs: diverse ops, every kind of dispatch path.
CI_OPS = [
    "add", "mul", "div", "where", "clamp", "exp", "sigmoid", "nn.functional.gelu",
    "sum", "mean", "amax", "var", "softmax", "log_softmax", "cumsum", "argmax",
    "view", "reshape", "transpose", "permute", "expand", "narrow", "select", "squeeze",
    "unsqueeze", "flatten", "split", "chunk", "t", "index_select", "gather", "scatter_add",
    "masked_fill", "cat", "stack", "matmul", "mm", "bmm", "addmm", "nn.functional.linear",
    "nn.functional.conv2d", "nn.functional.layer_norm", "nn.functional.embedding",
    "nn.functional.dropout", "nonzero", "masked_select", "topk", "sort", "triu", "pad",
    "scatter_reduce", "cummax", "searchsorted", "lgamma", "special.bessel_j0",
    "special.chebyshev_polynomial_t", "igamma", "_segment_reduce",
]


@dataclass
class Sample:
    op: Any
    args: tuple
    kwargs: dict


def samples(op_names: list[str] | None = None, per_op: int = 3) -> Iterator[Sample]:
    """The first `per_op` float32 CPU samples of each op (of `op_names` when given)."""
    from torch.testing._internal.common_methods_invocations import op_db

    wanted = set(op_names) if op_names is not None else None
    for op in op_db:
        if wanted is not None and op.name not in wanted:
            continue
        if torch.float32 not in op.supported_dtypes("cpu"):
            continue
        try:
            found = list(op.sample_inputs("cpu", torch.float32))[:per_op]
        except Exception:  # a broken sample generator is the database's problem, not ours
            continue
        for s in found:
            yield Sample(op, (s.input, *s.args), dict(s.kwargs))


class TimedOut(Exception):
    pass


@contextmanager
def time_limit(seconds: int) -> Iterator[None]:
    """Raise TimedOut in the main thread after `seconds` (between Python bytecodes)."""

    def expire(*_: object) -> None:
        raise TimedOut

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def hint(value: Any) -> Any:
    """A symbolic value's example value (None when it depends on data), or the value itself."""
    if isinstance(value, (torch.SymInt, torch.SymFloat, torch.SymBool)):
        return value.node.hint
    return value


def same_metadata(real: Any, fake: Any) -> bool:
    """Same pytree structure; tensors with the same shape, dtype, device and strides."""
    real_leaves, real_spec = tree_flatten(real)
    fake_leaves, fake_spec = tree_flatten(fake)
    if real_spec != fake_spec:
        return False
    for r, f in zip(real_leaves, fake_leaves):
        if isinstance(r, torch.Tensor):
            if not isinstance(f, torch.Tensor) or r.dtype != f.dtype or r.device != f.device:
                return False
            if not _sizes_match(r.shape, f.shape) or not _strides_match(r, f):
                return False
    return True


def _strides_match(real: torch.Tensor, fake: torch.Tensor) -> bool:
    """Strides agree where they mean something: dims of size > 1, in a tensor with elements
    (PyTorch's own cross-reference tests compare strides the same way)."""
    if real.numel() == 0:
        return True
    return all(
        size == 1 or hint(f) is None or hint(f) == r
        for size, r, f in zip(real.shape, real.stride(), fake.stride())
    )


def _sizes_match(real: tuple, fake: tuple) -> bool:
    if len(real) != len(fake):
        return False
    for r, f in zip(real, fake):
        h = hint(f)
        if h is not None and h != r:  # an unbacked size (no hint) may be anything
            return False
    return True


@dataclass
class Tally:
    """Passed/total per column, and the first error of each op that failed."""

    passed: dict[str, int] = field(default_factory=dict)
    total: dict[str, int] = field(default_factory=dict)
    failures: dict[str, dict[str, str]] = field(default_factory=dict)
    # Per column, (op name, passed) for every sample in sweep order.
    outcomes: dict[str, list[tuple[str, bool]]] = field(default_factory=dict)

    def add(self, column: str, op_name: str, error: str | None) -> None:
        self.outcomes.setdefault(column, []).append((op_name, error is None))
        self.total[column] = self.total.get(column, 0) + 1
        if error is None:
            self.passed[column] = self.passed.get(column, 0) + 1
        else:
            self.failures.setdefault(column, {}).setdefault(op_name, error)

    def regressions(self, mode: str) -> set[str]:
        """Ops with a sample that the peer passes and ours fails, in `mode`."""
        pairs = zip(self.outcomes.get(f"ours {mode}", []), self.outcomes.get(f"peer {mode}", []))
        return {op for (op, ours), (_, peer) in pairs if peer and not ours}

    def rate(self, column: str) -> str:
        p, t = self.passed.get(column, 0), self.total.get(column, 0)
        return f"{p}/{t} ({100 * p / max(t, 1):.1f} %)"


def attempt(fn: Callable[..., bool], *args: Any, seconds: int = 30) -> str | None:
    """None if `fn(*args)` returns True in time; else a one-line reason."""
    try:
        with time_limit(seconds):
            ok = fn(*args)
        return None if ok else "wrong metadata or values"
    except TimedOut:
        return f"timed out after {seconds} s"
    except Exception as error:  # a failing sample is data for the table
        first = str(error).strip().splitlines()[0] if str(error).strip() else ""
        return f"{type(error).__name__}: {first[:160]}"


def machine() -> str:
    return (f"{platform.platform()}, {platform.processor() or platform.machine()}, "
            f"Python {sys.version.split()[0]}, torch {torch.__version__}")
