"""Hugging Face transformers models (GPT-2, Llama, BERT, built from configs with random weights,
nothing downloaded) through dynamo: real library code, with its decorators, context variables,
registries and output dataclasses. Parts the trace cannot follow break the graph; no frame runs
eagerly as a whole, and the outputs equal eager's."""

from __future__ import annotations

import pytest
import torch
from hf_models import MODELS

import dynamo


@pytest.mark.parametrize("name", MODELS)
def test_outputs_match_eager_with_graph_breaks(name: str) -> None:
    torch.manual_seed(0)
    model = MODELS[name]().eval()
    compiled = dynamo.compile(model)
    with torch.no_grad():
        for length in (16, 16, 24):
            tokens = torch.randint(0, 1000, (2, length))
            torch.testing.assert_close(compiled(tokens)[0], model(tokens)[0])
        report = dynamo.explain(model.forward)(torch.randint(0, 1000, (2, 16)))
    assert report.eager == [] and report.graph_count >= 2
    assert sum(len(ops) for ops in report.ops_per_graph) > 30  # the transformer's work is captured
