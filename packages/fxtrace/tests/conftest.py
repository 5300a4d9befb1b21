"""Shared fixtures: the repository's example models (benchmarks/models.py), loaded by path."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

_MODELS = Path(__file__).resolve().parents[3] / "benchmarks" / "models.py"


@pytest.fixture(scope="session")
def models():
    spec = importlib.util.spec_from_file_location("example_models", _MODELS)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
