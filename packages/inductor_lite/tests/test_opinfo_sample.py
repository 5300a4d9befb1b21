"""CI's fixed sample of the OpInfo sweep (conformance/inductor_lite_opinfo.py; the full sweep is
`nox -s conformance`): every sample of the CI ops, compiled with compile_fx and run through
Triton's interpreter, gives eager's results; the ops we lower run generated code only."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

_SWEEP = Path(__file__).resolve().parents[3] / "conformance" / "inductor_lite_opinfo.py"

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


@pytest.fixture(scope="module")
def tally():
    sys.path.insert(0, str(_SWEEP.parent))
    spec = importlib.util.spec_from_file_location("inductor_lite_opinfo", _SWEEP)
    sweep = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sweep)
    return sweep.sweep(sweep.CI_OPS)


def test_every_sample_matches_eager(tally) -> None:
    failures = tally.failures.get("correct", {})
    assert not failures, failures
    assert tally.total["correct"] > 90


def test_lowered_ops_run_generated_code_only(tally) -> None:
    fallbacks = {op: e for op, e in tally.failures.get("generated", {}).items()
                 if op in GENERATED_ONLY}
    assert not fallbacks, fallbacks
