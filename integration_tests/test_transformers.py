"""A Hugging Face transformers model (GPT-2, built from a config with random weights, nothing
downloaded) through dynamo: real library code, with its decorators, context variables,
registries and output dataclasses. Parts the trace cannot follow break the graph; nothing runs
eagerly as a whole, and the logits equal eager's."""

from __future__ import annotations

import torch
from transformers import GPT2Config, GPT2LMHeadModel

import dynamo


def test_gpt2_logits_match_eager_with_graph_breaks() -> None:
    torch.manual_seed(0)
    config = GPT2Config(n_layer=2, n_head=4, n_embd=64, vocab_size=1000, n_positions=128,
                        bos_token_id=0, eos_token_id=0)
    model = GPT2LMHeadModel(config).eval()
    compiled = dynamo.compile(model)
    with torch.no_grad():
        for length in (16, 16, 24):
            tokens = torch.randint(0, 1000, (2, length))
            torch.testing.assert_close(compiled(tokens).logits, model(tokens).logits)
        report = dynamo.explain(model.forward)(torch.randint(0, 1000, (2, 16)))
    assert report.eager == [] and report.graph_count >= 2
    assert sum(len(ops) for ops in report.ops_per_graph) > 50  # the transformer's work is captured
