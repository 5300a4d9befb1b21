"""Hugging Face models built from small configs (random weights, nothing downloaded)."""

from __future__ import annotations

from transformers import (
    BertConfig,
    BertModel,
    GPT2Config,
    GPT2LMHeadModel,
    LlamaConfig,
    LlamaForCausalLM,
)

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
