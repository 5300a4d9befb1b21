"""What a compiled function keeps alive: not the tensors of the call that compiled it."""

from __future__ import annotations

import gc
import io
import weakref

import pytest
import torch
import torch.nn as nn

import dynamo


def _no_break(x):
    return torch.relu(x * 2)


def _one_break(x):
    y = x * 2
    print(end="", file=io.StringIO())
    return y + 1


def _break_in_loop(x):
    for i in range(3):
        x = x + i
        print(end="", file=io.StringIO())
    return x


def _opaque_iterator(it):
    for v in it:  # noqa: B007 (v is used after the loop)
        break
    return v * 2


@pytest.mark.parametrize("fn", [_no_break, _one_break, _break_in_loop])
@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_the_inputs_and_outputs_of_a_compiling_call_are_not_kept(fn, backend) -> None:
    dynamo.reset()
    compiled = dynamo.compile(fn, backend=backend)
    x = torch.randn(1000, requires_grad=backend == "aot_eager")
    out = compiled(x)
    refs = [weakref.ref(x), weakref.ref(out)]
    del x, out
    gc.collect()
    assert [r() for r in refs] == [None, None]
    compiled(torch.randn(1000))  # still compiled, and still right
    assert len(dynamo.explain(fn)(torch.randn(1000)).graphs) >= 1


def test_a_module_call_keeps_no_activations() -> None:
    model = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 2))
    compiled = dynamo.compile(model, backend="aot_eager")
    x = torch.randn(4, 8)
    out = compiled(x)
    refs = [weakref.ref(x), weakref.ref(out)]
    del x, out
    gc.collect()
    assert [r() for r in refs] == [None, None]


def test_an_iterator_from_the_frame_is_not_kept() -> None:
    def items():
        yield torch.ones(2)

    compiled = dynamo.compile(_opaque_iterator, backend="eager")
    it = items()
    ref = weakref.ref(it)
    torch.testing.assert_close(compiled(it), torch.full((2,), 2.0))
    del it
    gc.collect()
    assert ref() is None
