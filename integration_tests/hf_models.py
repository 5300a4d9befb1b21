"""Hugging Face models built from small configs (random weights, nothing downloaded)."""

from __future__ import annotations

from transformers import (
    BertConfig,
    BertModel,
    BloomConfig,
    BloomForCausalLM,
    Gemma2Config,
    Gemma2ForCausalLM,
    GPT2Config,
    GPT2LMHeadModel,
    GPTNeoConfig,
    GPTNeoForCausalLM,
    LlamaConfig,
    LlamaForCausalLM,
    MixtralConfig,
    MixtralForCausalLM,
    Qwen2Config,
    Qwen2ForCausalLM,
    T5Config,
    T5EncoderModel,
    T5ForConditionalGeneration,
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

# More architectures, for the one-graph capture test only (their own code paths: finfo masks,
# sliding-window attention, a custom autograd.Function, relative position buckets, logit
# softcapping).
MORE_MODELS = {
    "qwen2": lambda: Qwen2ForCausalLM(Qwen2Config(
        hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, vocab_size=1000, max_position_embeddings=128)),
    "gpt_neo": lambda: GPTNeoForCausalLM(GPTNeoConfig(
        hidden_size=64, num_layers=2, num_heads=4, vocab_size=1000, max_position_embeddings=128,
        attention_types=[[["global", "local"], 1]], bos_token_id=0, eos_token_id=0)),
    "bloom": lambda: BloomForCausalLM(BloomConfig(
        hidden_size=64, n_layer=2, n_head=4, vocab_size=1000)),
    "t5_encoder": lambda: T5EncoderModel(T5Config(
        d_model=64, d_ff=128, num_layers=2, num_heads=4, vocab_size=1000, d_kv=16)),
    "gemma2": lambda: Gemma2ForCausalLM(Gemma2Config(
        hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, head_dim=16, vocab_size=1000, max_position_embeddings=128,
        sliding_window=8)),
}

def t5() -> T5ForConditionalGeneration:
    """An encoder-decoder (its decoder deep-copies the config: copy.deepcopy is traced)."""
    return T5ForConditionalGeneration(T5Config(
        d_model=64, d_ff=128, num_layers=2, num_heads=4, vocab_size=1000, d_kv=16))


def mixtral() -> MixtralForCausalLM:
    """A mixture of experts: under compilation (and in float32) its experts run through a
    custom op with its own autograd kernel, `transformers::grouped_mm_fallback`."""
    return MixtralForCausalLM(MixtralConfig(
        hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, vocab_size=1000, max_position_embeddings=128,
        num_local_experts=4, num_experts_per_tok=2))
