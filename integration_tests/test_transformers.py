"""Hugging Face transformers models (GPT-2, Llama, BERT, built from configs with random weights,
nothing downloaded) through dynamo: real library code, with its decorators, configs with custom
attribute access, registries, context variables, caches and output dataclasses. Each model is
captured whole, as one graph (as under torch.compile), and its outputs equal eager's: the
ModelOutput and the KV cache it returns are real objects that the next, eager or compiled,
decoding step can use."""

from __future__ import annotations

import copy

import pytest
import torch
from hf_models import MODELS, MORE_MODELS, mixtral, t5

import dynamo


@pytest.mark.parametrize("name", MODELS)
def test_model_is_one_graph_and_matches_eager(name: str) -> None:
    torch.manual_seed(0)
    model = MODELS[name]().eval()
    compiled = dynamo.compile(model, fullgraph=True)
    with torch.no_grad():
        for length in (16, 16, 24):
            tokens = torch.randint(0, 1000, (2, length))
            got, want = compiled(tokens), model(tokens)
            assert type(got) is type(want) and list(got.keys()) == list(want.keys())
            torch.testing.assert_close(got[0], want[0])
            if "past_key_values" not in want:
                continue
            cache = got.past_key_values
            assert type(cache) is type(want.past_key_values)
            step = torch.randint(0, 1000, (2, 1))
            expected = model(step, past_key_values=want.past_key_values).logits
            cache_copy = copy.deepcopy(cache)
            torch.testing.assert_close(model(step, past_key_values=cache).logits, expected)
            torch.testing.assert_close(compiled(step, past_key_values=cache_copy).logits,
                                       expected)
        report = dynamo.explain(model.forward)(torch.randint(0, 1000, (2, 16)))
    assert report.eager == [] and report.graph_count == 1 and not report.breaks
    assert len(report.ops_per_graph[0]) > 30  # the transformer's work is captured


@pytest.mark.parametrize("name", MODELS)
def test_hidden_states_through_the_library_hooks(name: str) -> None:
    """The hooks the library puts on every layer are inlined: one graph once installed."""
    torch.manual_seed(0)
    model = MODELS[name]().eval()
    tokens = torch.randint(0, 1000, (2, 12))
    with torch.no_grad():
        dynamo.compile(model)(tokens, output_hidden_states=True)  # installs the hooks (a lock)
        got = dynamo.compile(model, fullgraph=True)(tokens, output_hidden_states=True)
        want = model(tokens, output_hidden_states=True)
    assert len(got.hidden_states) == len(want.hidden_states) == 3
    for a, b in zip(got.hidden_states, want.hidden_states):
        torch.testing.assert_close(a, b)


@pytest.mark.parametrize("name", MORE_MODELS)
def test_more_architectures_are_one_graph(name: str) -> None:
    torch.manual_seed(0)
    model = MORE_MODELS[name]().eval()
    tokens = torch.randint(0, 1000, (2, 16))
    with torch.no_grad():
        got = dynamo.compile(model, fullgraph=True)(tokens)
        torch.testing.assert_close(got[0], model(tokens)[0])
    report = dynamo.explain(model.forward)(tokens)  # with gradients recorded, too
    assert report.eager == [] and report.graph_count == 1 and not report.breaks


@pytest.mark.parametrize("name", ["gpt2", "llama"])
def test_generate_with_the_compiled_forward(name: str) -> None:
    torch.manual_seed(0)
    model = MODELS[name]().eval()
    prompt = torch.randint(0, 1000, (1, 8))
    expected = model.generate(prompt, max_new_tokens=12, do_sample=False)
    graphs = []

    def counting(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    model.forward = dynamo.compile(model.forward, backend=counting, fullgraph=True)
    assert torch.equal(model.generate(prompt, max_new_tokens=12, do_sample=False), expected)
    assert len(graphs) <= 3  # the prompt, the first step, then every step (a symbolic length)


def test_encoder_decoder_is_one_graph() -> None:
    torch.manual_seed(0)
    model = t5().eval()
    tokens, decoder_tokens = torch.randint(0, 1000, (2, 12)), torch.randint(0, 1000, (2, 5))
    with torch.no_grad():
        got = dynamo.compile(model, fullgraph=True)(input_ids=tokens,
                                                    decoder_input_ids=decoder_tokens)
        want = model(input_ids=tokens, decoder_input_ids=decoder_tokens)
    torch.testing.assert_close(got.logits, want.logits)
    report = dynamo.explain(model)(input_ids=tokens, decoder_input_ids=decoder_tokens)
    assert report.eager == [] and report.graph_count == 1 and not report.breaks


def test_hugging_face_logits_processors_are_one_graph() -> None:
    from transformers.generation.logits_process import (
        LogitsProcessorList,
        RepetitionPenaltyLogitsProcessor,
        TemperatureLogitsWarper,
        TopKLogitsWarper,
    )

    def warp(input_ids, scores):
        processors = LogitsProcessorList([RepetitionPenaltyLogitsProcessor(1.2),
                                          TemperatureLogitsWarper(0.7), TopKLogitsWarper(5)])
        return processors(input_ids, scores)

    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm

    compiled = dynamo.compile(warp, backend=backend, fullgraph=True)
    ids, scores = torch.randint(0, 50, (2, 6)), torch.randn(2, 50)
    torch.testing.assert_close(compiled(ids, scores), warp(ids, scores))
    assert len(graphs) == 1


def _assert_training_step_matches(compiled, model, reference, tokens) -> None:
    """One language-modelling loss and backward: the compiled model's loss and every
    parameter's gradient are eager's."""
    model.zero_grad()
    reference.zero_grad()
    loss = compiled(input_ids=tokens, labels=tokens).loss
    loss.backward()
    expected = reference(input_ids=tokens, labels=tokens).loss
    expected.backward()
    torch.testing.assert_close(loss, expected)
    for (name, got), want in zip(model.named_parameters(), reference.parameters()):
        assert got.grad is not None, name
        torch.testing.assert_close(got.grad, want.grad, rtol=1e-4, atol=1e-5, msg=name)


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_mixture_of_experts_training_gradients(backend: str) -> None:
    """The experts' custom op carries its own backward: lowered to aten, it must still be
    called with gradients on, or the experts get none."""
    torch.manual_seed(0)
    model = mixtral().train()
    reference = copy.deepcopy(model)
    tokens = torch.randint(0, 1000, (2, 12))
    compiled = dynamo.compile(model, backend=backend, fullgraph=True, raise_backend_errors=True)
    _assert_training_step_matches(compiled, model, reference, tokens)


@pytest.mark.parametrize("use_reentrant", [False, True])
def test_gradient_checkpointing_recomputes_compiled_layers(use_reentrant: bool) -> None:
    """`gradient_checkpointing_enable()`: each decoder layer runs inside
    `torch.utils.checkpoint`, for real, with the layer compiled; its backward recomputes it.
    aot_eager lowers every graph (no fallback), and the gradients are eager's."""
    import warnings

    torch.manual_seed(0)
    model = MODELS["llama"]().train()
    model.config.use_cache = False
    model.gradient_checkpointing_enable(
        gradient_checkpointing_kwargs={"use_reentrant": use_reentrant})
    reference = copy.deepcopy(model)
    tokens = torch.randint(0, 1000, (2, 12))
    compiled = dynamo.compile(model, backend="aot_eager")
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # no fallback to eager
        warnings.filterwarnings("ignore", "`gradient_checkpointing_enable` is deprecated")
        for _ in range(2):
            _assert_training_step_matches(compiled, model, reference, tokens)


def test_static_cache_decoding_is_one_graph() -> None:
    """The static cache builds its index tensors with `dtype=int` (a Python type as dtype)."""
    from transformers import StaticCache

    torch.manual_seed(0)
    model = MODELS["llama"]().eval()
    compiled = dynamo.compile(model, fullgraph=True)
    ours, theirs = (StaticCache(config=model.config, max_cache_len=16) for _ in range(2))
    prompt, step = torch.randint(0, 1000, (1, 6)), torch.randint(0, 1000, (1, 1))
    with torch.no_grad():
        torch.testing.assert_close(compiled(prompt, cache=ours).logits,
                                   model(prompt, cache=theirs).logits)
        at = torch.tensor([6])
        torch.testing.assert_close(compiled(step, cache=ours, cache_position=at).logits,
                                   model(step, cache=theirs, cache_position=at).logits)


def test_an_audio_encoder_that_probes_the_install_is_one_graph() -> None:
    """Wav2Vec2's forward asks `is_torch_distributed_available()`, a probe the library marks as a
    constant result (torch.compile's mark): called while tracing, not traced."""
    from transformers import Wav2Vec2Config, Wav2Vec2Model

    torch.manual_seed(0)
    model = Wav2Vec2Model(Wav2Vec2Config(
        hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64,
        conv_dim=(16, 16), conv_stride=(5, 2), conv_kernel=(10, 3), num_conv_pos_embeddings=16,
        num_conv_pos_embedding_groups=2)).eval()
    audio = torch.randn(1, 400)
    with torch.no_grad():
        torch.testing.assert_close(dynamo.compile(model, fullgraph=True)(audio).last_hidden_state,
                                   model(audio).last_hidden_state)


def test_a_detector_whose_backbone_output_is_built_from_a_tuple_is_one_graph() -> None:
    """DETR's backbone returns a ModelOutput built from a tuple: its `__post_init__` calls
    zero-argument `super()` in a method whose `self` a generator expression captures (a cell)."""
    from transformers import DetrConfig, DetrModel, ResNetConfig

    torch.manual_seed(0)
    backbone = ResNetConfig(hidden_sizes=[16, 32], depths=[1, 1], embedding_size=16,
                            out_features=["stage2"])
    model = DetrModel(DetrConfig(
        use_timm_backbone=False, use_pretrained_backbone=False, backbone_config=backbone,
        d_model=64, encoder_layers=1, decoder_layers=1, encoder_attention_heads=4,
        decoder_attention_heads=4, encoder_ffn_dim=128, decoder_ffn_dim=128,
        num_queries=10)).eval()
    image = torch.randn(1, 3, 64, 64)
    with torch.no_grad():
        torch.testing.assert_close(dynamo.compile(model, fullgraph=True)(image).last_hidden_state,
                                   model(image).last_hidden_state)
