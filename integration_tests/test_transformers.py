"""Hugging Face transformers models (GPT-2, Llama, BERT, built from configs with random weights,
nothing downloaded) through dynamo: real library code, with its decorators, context variables,
registries and output dataclasses. Parts the trace cannot follow break the graph; no frame runs
eagerly as a whole, and the outputs equal eager's."""

from __future__ import annotations

import pytest
import torch
from transformers import (
    BertConfig,
    BertModel,
    GPT2Config,
    GPT2LMHeadModel,
    LlamaConfig,
    LlamaForCausalLM,
)

import dynamo

MODELS = {
    "gpt2": lambda: GPT2LMHeadModel(GPT2Config(
        n_layer=2, n_head=4, n_embd=64, vocab_size=1000, n_positions=128, bos_token_id=0,
        eos_token_id=0)),
    "llama": lambda: LlamaForCausalLM(LlamaConfig(
        hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, vocab_size=1000, max_position_embeddings=128)),
    "bert": lambda: BertModel(BertConfig(
        hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
        vocab_size=1000)),
}


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
