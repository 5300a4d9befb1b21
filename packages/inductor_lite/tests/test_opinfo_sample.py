"""CI's fixed sample of the OpInfo sweeps (conformance/inductor_lite_opinfo.py and
inductor_lite_symbolic_opinfo.py; the full sweeps are `nox -s conformance`): every sample of the
CI ops, compiled with compile_fx and run through Triton's interpreter, gives eager's results,
traced with static sizes and with symbolic ones (then also at grown sizes); the ops we lower run
generated code only."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

_CONFORMANCE = Path(__file__).resolve().parents[3] / "conformance"

# Ops whose every CI sample must run as generated kernels and extern calls only, no fallback.
GENERATED_ONLY = [
    "add", "mul", "div", "where", "clamp", "exp", "sigmoid", "nn.functional.gelu", "sum", "mean",
    "amax", "var", "softmax", "log_softmax", "argmax", "view", "reshape", "transpose", "permute",
    "expand", "narrow", "select", "squeeze", "unsqueeze", "flatten", "split", "chunk", "t",
    "index_select", "gather", "masked_fill", "cat", "stack", "matmul", "mm", "bmm", "addmm",
    "nn.functional.linear", "nn.functional.conv2d", "nn.functional.layer_norm",
    "nn.functional.embedding", "nn.functional.dropout", "triu", "scatter_reduce", "cummax",
    "searchsorted", "lgamma", "special.bessel_j0", "special.chebyshev_polynomial_t", "igamma",
    "_segment_reduce",
]

pytestmark = pytest.mark.skipif(os.environ.get("INDUCTOR_LITE_TEST_DEVICE", "cpu") != "cpu",
                                reason="the sweep runs CPU samples through the interpreter")


def _sweep(name: str):
    sys.path.insert(0, str(_CONFORMANCE))
    spec = importlib.util.spec_from_file_location(name, _CONFORMANCE / f"{name}.py")
    sweep = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sweep)
    return sweep


@pytest.fixture(scope="module")
def tally():
    sweep = _sweep("inductor_lite_opinfo")
    return sweep.sweep(sweep.CI_OPS)


@pytest.fixture(scope="module")
def symbolic():
    sweep = _sweep("inductor_lite_symbolic_opinfo")
    return sweep.sweep(sweep.CI_OPS)


def test_every_sample_matches_eager(tally) -> None:
    failures = tally.failures.get("correct", {})
    assert not failures, failures
    assert tally.total["correct"] > 90


def test_lowered_ops_run_generated_code_only(tally) -> None:
    fallbacks = {op: e for op, e in tally.failures.get("generated", {}).items()
                 if op in GENERATED_ONLY}
    assert not fallbacks, fallbacks


def test_every_sample_traced_with_symbolic_sizes_matches_eager_at_grown_sizes(symbolic) -> None:
    tally, growths = symbolic
    failures = tally.failures.get("correct", {})
    assert not failures, failures
    assert tally.total["correct"] > 90
    # most compiled graphs served a grown size as they were (one kernel for every size)
    assert all(counts["same graph"] > tally.total["correct"] // 2 for counts in growths.values())
