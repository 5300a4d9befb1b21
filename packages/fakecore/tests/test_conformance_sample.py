"""CI's fixed sample of the OpInfo sweep (conformance/fakecore_opinfo.py; the full sweep is
`nox -s conformance`): on every sample the peer gets right, ours must too."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

_SWEEP = Path(__file__).resolve().parents[3] / "conformance" / "fakecore_opinfo.py"

# Gaps we know of, each with its reason; anything else the peer passes, we must pass.
KNOWN_GAPS: set[tuple[str, str]] = set()


@pytest.fixture(scope="module")
def tally():
    sys.path.insert(0, str(_SWEEP.parent))
    spec = importlib.util.spec_from_file_location("fakecore_opinfo", _SWEEP)
    sweep = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sweep)
    return sweep.sweep(sweep.CI_OPS)


@pytest.mark.parametrize("mode", ["static", "symbolic"])
def test_ours_passes_what_the_peer_passes(tally, mode: str) -> None:
    regressions = {op for op in tally.regressions(mode) if (mode, op) not in KNOWN_GAPS}
    assert not regressions, {op: tally.failures[f"ours {mode}"][op] for op in regressions}
    assert tally.total[f"ours {mode}"] > 150
