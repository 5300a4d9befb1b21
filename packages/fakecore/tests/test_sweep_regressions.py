"""Defects found by tracing real models and probing fake tensors against eager PyTorch."""

from __future__ import annotations

import pytest
import sympy
import torch

from fakecore import DataDependentError, FakeTensorMode, ShapeEnv


def test_constant_broadcast_to_symbolic_size_records_no_guard() -> None:
    # Knowing a constant's data is a convenience: it must not decide symbolic sizes (Llama's
    # rotary embedding got the guard `8*s1 <= 64` from the constant-size limit).
    env = ShapeEnv()
    mode = FakeTensorMode(env)
    x = mode.from_tensor(torch.randn(40, 3), dynamic_dims=[0])
    with mode:
        c = torch.tensor([1.0, 2.0, 3.0])
        y = c.expand(x.shape[0], 3) * x
    assert env.guards == []
    assert y.constant is None and str(y.shape) == "torch.Size([s0, 3])"


def test_convolution_of_contiguous_inputs_records_no_backend_guard() -> None:
    # Asking which backend would run a convolution decides sizes (the batch against 16, the
    # channels against the kernel): only worth it when a layout could come out channels-last.
    env = ShapeEnv()
    mode = FakeTensorMode(env)
    x = mode.from_tensor(torch.randn(2, 3, 32, 32), dynamic_dims=[0, 2, 3])
    w = mode.from_tensor(torch.randn(8, 3, 3, 3))
    with mode:
        out = torch.nn.functional.conv2d(x, w)
        assert not any("16" in str(g.expr) for g in env.guards), env.guards
        channels_last = torch.nn.functional.conv2d(
            x.contiguous(memory_format=torch.channels_last), w)
    assert out.is_contiguous()
    assert channels_last.is_contiguous(memory_format=torch.channels_last)


def test_tolist_reads_items() -> None:
    mode = FakeTensorMode(ShapeEnv())
    counts = mode.from_tensor(torch.tensor([3, 1]))
    with mode:
        constant = torch.tensor([[1, 2], [3, 4]])
        assert constant.tolist() == [[1, 2], [3, 4]]
        assert torch.tensor(5).tolist() == 5
        unknown = counts.tolist()
    assert [str(u) for u in unknown] == ["u0", "u1"]


def test_tolist_without_shape_env_names_the_op() -> None:
    mode = FakeTensorMode()
    x = mode.from_tensor(torch.tensor([3, 1]))
    with pytest.raises(DataDependentError, match="_local_scalar_dense"):
        x.tolist()


def test_to_meta_device_has_no_index() -> None:
    mode = FakeTensorMode()
    x = mode.from_tensor(torch.randn(2))
    with mode:
        assert x.to("meta").device == torch.device("meta")
        assert torch.empty(2, device="meta").device == torch.device("meta")
        assert torch.empty(2, device="cuda").device == torch.device("cuda", 0)


def test_view_of_data_dependent_sizes_asks_for_optimization_hints() -> None:
    # torch's meta function for `view` of unbacked sizes asks the ShapeEnv for hints that record
    # no guard (it raised AttributeError: no `optimization_hint`).
    env = ShapeEnv()
    mode = FakeTensorMode(env)
    x = mode.from_tensor(torch.randn(7, 6))
    with mode:
        assert str(x[x > 0].view(-1, 1).shape) == "torch.Size([u0, 1])"
        with pytest.raises(DataDependentError, match="nonzero"):
            x.nonzero().view(-1)  # column-major, as on the CPU: viewable only if u0 < 2
    s0 = env.create_symbol(5, None)
    assert env.optimization_hint(s0 * 2 + 1) == 11 and env.guards == []
    assert env.optimization_hint(sympy.Symbol("u9", integer=True), fallback=64) == 64


@pytest.mark.parametrize("kind", ["nested", "quantized"])
def test_nested_and_quantized_tensors_are_refused_clearly(kind: str) -> None:
    # They reached as_strided on the meta device (a NotImplementedError listing every backend)
    # or asked a nested tensor for its sizes (an internal error).
    t = (torch.nested.nested_tensor([torch.randn(2), torch.randn(3)]) if kind == "nested"
         else torch.quantize_per_tensor(torch.randn(3), 0.1, 0, torch.qint8))
    with pytest.raises(ValueError, match=f"cannot fake a {kind} tensor"):
        FakeTensorMode().from_tensor(t)
