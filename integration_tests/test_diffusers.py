"""Diffusion models from diffusers (a UNet, a text-conditioned UNet, a VAE; small configs,
random weights, nothing downloaded) through dynamo: each is one graph with eager's results, and
a timestep that changes every call (an int, a float or a tensor) compiles at most twice."""

from __future__ import annotations

import warnings

import pytest
import torch
from diffusers import AutoencoderKL, UNet2DConditionModel, UNet2DModel

import dynamo


def _unet() -> UNet2DModel:
    return UNet2DModel(sample_size=16, in_channels=3, out_channels=3, layers_per_block=1,
                       block_out_channels=(32, 64), down_block_types=("DownBlock2D",
                                                                      "AttnDownBlock2D"),
                       up_block_types=("AttnUpBlock2D", "UpBlock2D"), norm_num_groups=8)


def _conditioned_unet() -> UNet2DConditionModel:
    return UNet2DConditionModel(
        sample_size=16, in_channels=4, out_channels=4, layers_per_block=1,
        block_out_channels=(32, 64), down_block_types=("CrossAttnDownBlock2D", "DownBlock2D"),
        up_block_types=("UpBlock2D", "CrossAttnUpBlock2D"), cross_attention_dim=32,
        norm_num_groups=8, attention_head_dim=8)


def _counted(model, backend: str = "aot_eager"):
    graphs = []

    def count(gm, example_inputs):
        graphs.append(gm)
        return dynamo.backends.lookup_backend(backend)(gm, example_inputs)

    return dynamo.compile(model, backend=count, fullgraph=True, raise_backend_errors=True), graphs


@pytest.mark.parametrize("timesteps", [[10, 500, 999, 3], [10.5, 500.25, 999.0, 0.5],
                                       [torch.tensor([10, 20]), torch.tensor([500, 3])]],
                         ids=["int", "float", "tensor"])
def test_unet_denoising_steps_share_a_graph(timesteps) -> None:
    torch.manual_seed(0)
    model = _unet().eval()
    compiled, graphs = _counted(model)
    x = torch.randn(2, 3, 16, 16)
    with torch.no_grad():
        for t in timesteps:
            torch.testing.assert_close(compiled(x, t).sample, model(x, t).sample,
                                       rtol=1e-4, atol=1e-4)
    assert len(graphs) <= 2  # the first value, then a symbol (automatic dynamic)


def test_text_conditioned_unet_is_one_graph() -> None:
    torch.manual_seed(0)
    model = _conditioned_unet().eval()
    compiled, graphs = _counted(model)
    latents, text = torch.randn(2, 4, 16, 16), torch.randn(2, 7, 32)
    with torch.no_grad():
        for t in (10, 50, 999):
            torch.testing.assert_close(compiled(latents, t, text).sample,
                                       model(latents, t, text).sample, rtol=1e-4, atol=1e-4)
    assert len(graphs) <= 2


def _vae():
    """A small AutoencoderKL (random weights) and its encoder's mean."""
    torch.manual_seed(0)
    vae = AutoencoderKL(in_channels=3, out_channels=3, latent_channels=4, norm_num_groups=8,
                        down_block_types=("DownEncoderBlock2D",) * 2,
                        up_block_types=("UpDecoderBlock2D",) * 2, block_out_channels=(32, 64),
                        sample_size=16).eval()
    return vae, lambda x: vae.encode(x).latent_dist.mean


def test_vae_encode_and_decode() -> None:
    vae, encode = _vae()

    image, latents = torch.randn(1, 3, 16, 16), torch.randn(1, 4, 8, 8)
    with torch.no_grad():
        # (under aot_eager: see test_vae_encoder_under_aot_eager_runs_its_aten_graph)
        for fn, x in ((encode, image), (vae.decode, latents)):
            compiled, graphs = _counted(fn, "eager")
            got, want = compiled(x), fn(x)
            got, want = getattr(got, "sample", got), getattr(want, "sample", want)
            torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
            assert len(graphs) == 1


def test_vae_encoder_under_aot_eager_runs_its_aten_graph() -> None:
    """The aten graph of the VAE's mid-block runs: fake tensors give a size-1 dim the stride
    the CPU kernels give it (a view of the attention's `(1, C, H*W)` output as `(1, C, H, W)`,
    its division by the output scale), so group norm's input is made contiguous in the graph
    where the real tensor's suggested memory format asks for it (it raised, "Expected
    X.is_contiguous(memory_format)", and the frontend ran the captured graph instead)."""
    vae, encode = _vae()

    image = torch.randn(1, 3, 16, 16)
    compiled = dynamo.compile(encode, backend="aot_eager", fullgraph=True)
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("error")
        torch.testing.assert_close(compiled(image), encode(image), rtol=1e-4, atol=1e-4)
        torch.testing.assert_close(compiled(image * 2), encode(image * 2), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dynamic", [None, True], ids=["automatic", "dynamic"])
def test_vae_aten_graphs_run_with_symbolic_sizes_at_batch_one(dynamic) -> None:
    """The same with symbolic sizes (a second image size at batch 1, or dynamic=True): the
    fakes of the attention's `view` and of the pointwise ops after it took their Python
    references' strides for the size-1 batch dim, and group norm raised again."""
    vae, encode = _vae()
    # (the encoder at two sizes, the second call making them symbols; the decoder at one)
    fn, channels, scale, sizes = (encode, 3, 1, (16, 24)) if dynamic is None else \
        (vae.decode, 4, 2, (16,))
    compiled = dynamo.compile(fn, backend="aot_eager", fullgraph=True, dynamic=dynamic,
                              raise_backend_errors=True)
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("error")
        for size in sizes:
            x = torch.randn(1, channels, size // scale, size // scale)
            got, want = compiled(x), fn(x)
            torch.testing.assert_close(getattr(got, "sample", got),
                                       getattr(want, "sample", want), rtol=1e-4, atol=1e-4)
