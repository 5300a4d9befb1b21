"""Every corpus program, eagerly and compiled (fullgraph), on two inputs: same results, and the
expected number of graphs."""

from __future__ import annotations

import pytest
import torch
from corpus import PROGRAMS

import dynamo


def _graphs(compiled: dynamo.CompiledFunction) -> int:
    return sum(1 for _, entry in compiled.cache.entries if entry.graph is not None)


@pytest.mark.parametrize("name, fn, make, graphs", PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_program(name, fn, make, graphs) -> None:
    compiled = dynamo.compile(fn, fullgraph=True)
    for seed in (0, 1):
        args = make(seed)
        torch.manual_seed(seed)
        expected = fn(*args)
        torch.manual_seed(seed)
        got = compiled(*args)
        torch.testing.assert_close(got, expected)
    assert _graphs(compiled) == graphs


@pytest.mark.parametrize("name, fn, make, graphs", PROGRAMS[:20], ids=[p[0] for p in PROGRAMS[:20]])
def test_program_aot_eager(name, fn, make, graphs) -> None:
    compiled = dynamo.compile(fn, backend="aot_eager", fullgraph=True)
    for seed in (0, 1):
        args = make(seed)
        torch.testing.assert_close(compiled(*args), fn(*args))
