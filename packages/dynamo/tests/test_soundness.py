"""Guard soundness: a compiled function called with random changes to its inputs must always
give eager's answer. A stale cache hit (a guard that should have failed and did not) is the
worst bug this project can have; this property test hunts for one."""

from __future__ import annotations

import dataclasses
import enum

import torch
import torch.nn as nn
from hypothesis import given, settings
from hypothesis import strategies as st

import dynamo

OFFSET = 1.0


class Kind(enum.Enum):
    PLAIN = 0
    DOUBLE = 1


@dataclasses.dataclass
class ModeConfig:
    name: str


DOUBLE = ModeConfig("double")
MODES = ("plain", "double", Kind.PLAIN, Kind.DOUBLE, ModeConfig("plain"), ModeConfig("double"))


def doubles(mode) -> bool:
    return mode == "double" or mode is Kind.DOUBLE or mode == DOUBLE


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.scale = 2.0
        self.use_bias = True
        self.seen = []

    def forward(self, x, n, mode, extra=None):
        y = self.fc(x) * self.scale * n + OFFSET
        if self.use_bias:
            y = y + 1
        if doubles(mode):
            y = y * 2
        if extra is not None:
            y = y + extra.sum()
        if self.training:
            y = y - 3
        return y.sum(0) if x.shape[0] > 2 else y


change = st.sampled_from([
    "rows", "dtype", "n", "float_n", "mode", "extra", "scale", "use_bias", "training", "global",
    "weight_values", "new_fc", "requires_grad", "noncontiguous",
])


@settings(max_examples=40, deadline=None, derandomize=True)
@given(st.lists(st.tuples(change, st.integers(0, 3)), min_size=1, max_size=8),
       st.sampled_from([None, False, True]))
def test_random_input_changes_never_hit_a_stale_entry(changes, dynamic) -> None:
    global OFFSET
    dynamo.reset()
    torch.manual_seed(0)
    net = Net()
    compiled = dynamo.compile(net, dynamic=dynamic)
    state = {"rows": 3, "dtype": torch.float32, "n": 2, "mode": "plain", "extra": None,
             "noncontiguous": False, "requires_grad": False}
    old_offset = OFFSET
    try:
        for kind, k in changes:
            if kind == "rows":
                state["rows"] = 1 + k
            elif kind == "dtype":
                state["dtype"] = (torch.float32, torch.float64)[k % 2]
            elif kind == "n":
                state["n"] = k
            elif kind == "float_n":
                state["n"] = k + 0.5
            elif kind == "mode":
                state["mode"] = MODES[(k + len(changes)) % len(MODES)]
            elif kind == "extra":
                state["extra"] = None if k == 0 else torch.full((k,), float(k))
            elif kind == "scale":
                net.scale = float(k)
            elif kind == "use_bias":
                net.use_bias = bool(k % 2)
            elif kind == "training":
                net.train(bool(k % 2))
            elif kind == "global":
                OFFSET = float(k)
            elif kind == "weight_values":
                with torch.no_grad():
                    net.fc.weight.add_(k)
            elif kind == "new_fc":
                net.fc = nn.Linear(4, 4).to(state["dtype"])
            elif kind == "requires_grad":
                state["requires_grad"] = bool(k % 2)
            elif kind == "noncontiguous":
                state["noncontiguous"] = bool(k % 2)
            net.to(state["dtype"])
            x = torch.randn(state["rows"], 8 if state["noncontiguous"] else 4,
                            dtype=state["dtype"])
            if state["noncontiguous"]:
                x = x[:, ::2]
            x.requires_grad_(state["requires_grad"])
            extra = state["extra"]
            args = (x, state["n"], state["mode"], extra)
            expected = net(*args)
            got = compiled(*args)
            torch.testing.assert_close(got, expected)
            assert got.requires_grad == expected.requires_grad
    finally:
        OFFSET = old_offset


class BreakingNet(Net):
    """Net's forward with graph breaks: a print, a branch on a tensor's value, a side effect."""

    def forward(self, x, n, mode, extra=None):
        y = self.fc(x) * self.scale * n + OFFSET
        self.seen.append(y.shape[0])
        print(end="")
        if y.sum() > 0:
            y = y * 2 if doubles(mode) else y + 1
        else:
            y = y - 1 if self.use_bias else y
        if extra is not None:
            y = y + extra.sum()
        return y.sum(0) if x.shape[0] > 2 else y


@settings(max_examples=40, deadline=None, derandomize=True)
@given(st.lists(st.tuples(change, st.integers(0, 3)), min_size=1, max_size=8),
       st.sampled_from([None, True]))
def test_random_input_changes_with_graph_breaks(changes, dynamic) -> None:
    global OFFSET
    dynamo.reset()
    torch.manual_seed(0)
    net = BreakingNet()
    compiled = dynamo.compile(net, dynamic=dynamic)
    rows, dtype, n, mode, extra = 3, torch.float32, 2, "plain", None
    old_offset = OFFSET
    try:
        for kind, k in changes:
            if kind == "rows":
                rows = 1 + k
            elif kind == "dtype":
                dtype = (torch.float32, torch.float64)[k % 2]
            elif kind in ("n", "float_n"):
                n = k + (0.5 if kind == "float_n" else 0)
            elif kind == "mode":
                mode = ("plain", "double")[k % 2]
            elif kind == "extra":
                extra = None if k == 0 else torch.full((k,), float(k))
            elif kind == "scale":
                net.scale = float(k) - 1.5
            elif kind == "use_bias":
                net.use_bias = bool(k % 2)
            elif kind == "global":
                OFFSET = float(k) - 1.5
            elif kind == "weight_values":
                with torch.no_grad():
                    net.fc.weight.add_(k - 1.5)
            net.to(dtype)
            x = torch.randn(rows, 4, dtype=dtype)
            net.seen = []
            expected = net(x, n, mode, extra)
            expected_seen = net.seen
            net.seen = []
            got = compiled(x, n, mode, extra)
            torch.testing.assert_close(got, expected)
            assert net.seen == expected_seen
    finally:
        OFFSET = old_offset


def test_is_view_of_an_input_is_eagers() -> None:
    """`x._is_view()` of an input was the fake's answer, which no guard covered: a call with a
    view after one with a plain tensor reused the entry and said False (and the fake of a leaf
    view, `l.detach()[1:]`, is no view at all). It is a graph break, answered for real."""
    def fn(t):
        return t + 1 if t._is_view() else t - 1

    compiled = dynamo.compile(fn, backend="eager")
    leaf = torch.randn(5, requires_grad=True)
    for t in (torch.randn(4), torch.randn(5)[1:], leaf.detach()[1:], torch.randn(4)):
        assert torch.equal(compiled(t), fn(t))


def _tagged(x):
    return (x + 1 if hasattr(x, "tag") else x - 1) * getattr(x, "scale", 1.0)


def test_attributes_of_an_input_tensor_and_its_storage_are_eagers() -> None:
    """`hasattr`/`getattr(x, name, default)` of an attribute set on an input tensor asked the
    fake (never there: always the default), `x.__hash__()` was the fake's id, and `is_shared()`
    the fake's storage's answer: each is now a graph break, answered for real."""
    x = torch.ones(3)
    x.tag, x.scale = 1, 3.0
    shared = torch.ones(3).share_memory_()
    cases = [(_tagged, (x,)), (_tagged, (torch.ones(3),)),
             (lambda t: t + (hash(t) == torch.Tensor.__hash__(t)), (x,)),
             (lambda t: t + (t.__hash__() == hash(t)), (x,)),
             (lambda t: t + (1 if t.is_shared() else 0), (shared,))]
    for fn, args in cases:
        assert torch.equal(dynamo.compile(fn, backend="eager")(*args), fn(*args))
