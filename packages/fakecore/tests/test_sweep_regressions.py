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


def test_convolution_of_a_permuted_input_records_no_backend_size_guard() -> None:
    # On the CPU mkldnn and the slow kernels lay a 2d convolution out alike: which of them
    # runs (mkldnn's `batch * channels * height * width > 20480`) must not be a guard, or a
    # CNN fed an NHWC view recompiles as its images grow.
    env = ShapeEnv()
    mode = FakeTensorMode(env)
    x = mode.from_tensor(torch.randn(1, 40, 40, 4), dynamic_dims=[1, 2])
    w = mode.from_tensor(torch.randn(8, 4, 3, 3))
    with mode:
        out = torch.nn.functional.conv2d(x.permute(0, 3, 1, 2), w)
    assert not any("20480" in str(g.expr) for g in env.guards), env.guards
    assert out.is_contiguous(memory_format=torch.channels_last)


def test_conv1d_with_a_permuted_weight_is_laid_out_as_eager() -> None:
    # The kernels run a 1d convolution as a 2d one of height 1: a channels-last-like weight
    # gives an output whose channels are its innermost dim.
    x, w = torch.randn(2, 4, 6), torch.randn(8, 3, 4).transpose(1, 2)
    real = torch.nn.functional.conv1d(x, w)
    mode = FakeTensorMode()
    with mode:
        fake = torch.nn.functional.conv1d(mode.from_tensor(x), mode.from_tensor(w))
    assert fake.stride() == real.stride() == (32, 1, 8)


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


def test_ops_making_quantized_tensors_are_refused() -> None:
    # quantize_per_tensor's meta kernel answers a float32 tensor, on which `dequantize()` is
    # the identity: dynamo dropped it and returned the quantized tensor itself
    from fakecore import UnsupportedFakeOpError

    mode = FakeTensorMode()
    x = mode.from_tensor(torch.randn(4))
    for make in (lambda: torch.quantize_per_tensor(x, 0.1, 10, torch.quint8),
                 lambda: torch.quantize_per_tensor_dynamic(x, torch.qint8, False),
                 lambda: x.to(torch.qint8), lambda: torch.empty(3, dtype=torch.quint8)):
        with mode, pytest.raises(UnsupportedFakeOpError, match="quantized tensor"):
            make()


def _meta(t: torch.Tensor) -> tuple:
    return tuple(t.shape), t.stride(), t.dtype


_CL4 = torch.randn(2, 8, 5, 6).to(memory_format=torch.channels_last)
_CL5 = torch.randn(2, 8, 3, 5, 6).to(memory_format=torch.channels_last_3d)
_W, _IDX = torch.randn(5, 6), torch.tensor([0, 1, 4])
_F = torch.nn.functional
_STATIC_LAYOUT_CASES = {
    "reflect2d_cl": (lambda x: _F.pad(x, (1, 2, 1, 0), mode="reflect"), (_CL4,)),
    "replicate2d_cl": (lambda x: _F.pad(x, (1, 2, 1, 0), mode="replicate"), (_CL4,)),
    "reflect3d_cl": (lambda x: _F.pad(x, (1, 2, 1, 0, 1, 1), mode="reflect"), (_CL5,)),
    "replicate3d_cl": (lambda x: _F.pad(x, (1, 2, 1, 0, 1, 1), mode="replicate"), (_CL5,)),
    "reflect1d": (lambda x: _F.pad(x, (1, 2), mode="reflect"), (torch.randn(2, 3, 5),)),
    "replicate1d_t": (lambda x: _F.pad(x, (1, 2), mode="replicate"),
                      (torch.randn(5, 3, 2).permute(2, 1, 0),)),
    "pixel_shuffle_cl": (lambda x: _F.pixel_shuffle(x, 2), (_CL4,)),
    "pixel_unshuffle_cl": (lambda x: _F.pixel_unshuffle(x, 1), (_CL4,)),
    "nonzero_static": (lambda x: torch.nonzero_static(x, size=4),
                       (torch.tensor([[0.0, 1, 2], [3, 0, 0]]),)),
    # a contiguous input whose size-1 dim has another stride: the kernels lay the result out
    # afresh, (1, 1) where the meta kernels kept (1, 7)
    "triu_size1_t": (lambda x: x.triu(-1), (torch.randn(1, 7).t(),)),
    "tril_size1_t": (lambda x: x.tril(), (torch.randn(1, 7).t(),)),
    **{
        f"{op}_{mode}": (
            lambda w, i, op=op, mode=mode: getattr(torch.ops.aten, op)(
                w, i, torch.tensor([0, 2]), False, mode),
            (_W, _IDX),
        )
        for op in ("_embedding_bag_forward_only", "_embedding_bag")
        for mode in (0, 1, 2)
    },
}


@pytest.mark.parametrize("case", sorted(_STATIC_LAYOUT_CASES))
def test_static_cpu_metadata_matches_eager(case: str) -> None:
    # These ops' meta functions lose the layout (channels-last is kept only for a CPU input, and
    # they run on meta tensors), give other strides (nonzero_static, triu/tril) or other aux outputs
    # (_embedding_bag's max_indices for sum/mean): with static CPU fakes they run on zeros.
    fn, args = _STATIC_LAYOUT_CASES[case]
    real = [_meta(t) for t in torch.utils._pytree.tree_leaves(fn(*args))]
    for env in (None, ShapeEnv()):
        mode = FakeTensorMode(env)
        fakes = [mode.from_tensor(a) for a in args]
        with mode:
            out = fn(*fakes)
        assert [_meta(t) for t in torch.utils._pytree.tree_leaves(out)] == real, env


def test_symbolic_padding_and_pixel_shuffle_still_trace() -> None:
    env = ShapeEnv()
    mode = FakeTensorMode(env)
    x = mode.from_tensor(_CL4, dynamic_dims=[0, 2, 3])
    with mode:
        padded = _F.pad(x, (1, 2, 1, 0), mode="reflect")
        shuffled = _F.pixel_shuffle(x, 2)
    assert str(padded.shape) == "torch.Size([s0, 8, s1 + 1, s2 + 3])"
    assert str(shuffled.shape) == "torch.Size([s0, 2, 2*s1, 2*s2])"


@pytest.mark.parametrize("op", ["_embedding_bag", "_embedding_bag_forward_only"])
def test_symbolic_embedding_bag_outputs_sized_as_the_cpu_kernel_sizes_them(op: str) -> None:
    # With symbolic sizes the meta function runs (not zeros): on meta tensors it answered for
    # CUDA (offset2bag of one entry per index for the CPU sum kernel's none, max_indices empty
    # for sum/mean), and inductor_lite's check of a library call's outputs raised at run time
    # (F.embedding_bag(..., max_norm=1.0) under dynamic=True).
    fn = getattr(torch.ops.aten, op)
    w, idx, offs = torch.randn(20, 4), torch.randint(0, 20, (10,)), torch.tensor([0, 2, 5, 7, 10])
    for mode in (0, 1, 2):
        for last in (False, True):
            for psw in ([None, torch.randn(10)] if mode == 0 else [None]):
                for pad in (-1, 3):
                    real = fn(w, idx, offs, False, mode, False, psw, last, pad)
                    fake_mode = FakeTensorMode(ShapeEnv())
                    args = [fake_mode.from_tensor(t, dynamic_dims=range(t.dim()))
                            for t in (w, idx, offs)]
                    p = None if psw is None else fake_mode.from_tensor(psw, dynamic_dims=[0])
                    with fake_mode:
                        out = fn(*args, False, mode, False, p, last, pad)
                    assert [tuple(int(n) for n in t.shape) for t in out] == [
                        tuple(t.shape) for t in real], (mode, last, psw is not None, pad)


def test_layer_norm_statistics_in_the_dtype_the_device_gives_them() -> None:
    # The CPU kernel returns half-precision statistics for a half input; CUDA's are float32.
    op = torch.ops.aten.native_layer_norm.default
    for dtype in (torch.float16, torch.bfloat16):
        real = [torch.randn(2, 3, dtype=dtype), torch.ones(3, dtype=dtype),
                torch.zeros(3, dtype=dtype)]
        mode = FakeTensorMode()
        x, w, b = (mode.from_tensor(t) for t in real)
        with mode:
            on_cpu = op(x, [3], w, b, 1e-5)
            on_cuda = op(x.to("cuda:0"), [3], w.to("cuda:0"), b.to("cuda:0"), 1e-5)
        assert [t.dtype for t in on_cpu] == [t.dtype for t in op(*real[:1], [3], *real[1:], 1e-5)]
        assert [t.dtype for t in on_cuda] == [dtype, torch.float32, torch.float32]


def test_view_copy_of_a_tensor_that_cannot_be_viewed_copies() -> None:
    x = torch.randn(5, 5).t()
    real = torch.view_copy(x, [25])
    mode = FakeTensorMode()
    fake_x = mode.from_tensor(x)
    with mode:
        fake = torch.view_copy(fake_x, [25])
    assert fake.shape == real.shape and fake.stride() == real.stride()


def test_a_view_is_faked_inside_its_own_mode() -> None:
    mode = FakeTensorMode()
    with mode:
        fake = mode.from_tensor(torch.randn(5, 5).t())
        assert torch.sin(fake).stride() == (1, 5)


@pytest.mark.parametrize("shape_env", [None, ShapeEnv()], ids=["static", "shape_env"])
def test_size_one_dims_get_the_cpu_kernels_strides(shape_env) -> None:
    # The aten graph of diffusers' VAE raised in group norm ("Expected
    # X.is_contiguous(memory_format)"): its input's size-1 batch dim had another stride in the
    # fake than in the real tensor, which made the fake channels-last and the real one not, so
    # the graph lacked the copy to a contiguous tensor. A view (its Python reference, run under
    # a ShapeEnv) and a pointwise op with a number or a broadcast operand (their Python
    # references take the channels-last shortcut that TensorIterator takes only for operands
    # of one shape) gave it; so did the strides TensorIterator copies from dense inputs.
    mode = FakeTensorMode(shape_env)
    attention = torch.randn(1, 64, 64).transpose(1, 2)  # (1, 64, 64) with strides (4096, 1, 64)
    h = attention.view(1, 64, 8, 8)
    bias = torch.randn(1, 64, 1, 1)
    odd = torch.empty_strided((3, 1, 4), (1, 7, 3)).normal_()
    cases = [
        (lambda a, h, b, o: a.view(1, 64, 8, 8), "view"),
        (lambda a, h, b, o: h / 1.0, "division by a number"),
        (lambda a, h, b, o: h * 2, "product with a number"),
        (lambda a, h, b, o: torch.ops.aten.mul.Scalar(h, 2), "mul.Scalar"),
        (lambda a, h, b, o: torch.where(h > 0, h, b), "where with a broadcast operand"),
        (lambda a, h, b, o: h + b, "sum with a broadcast operand"),
        (lambda a, h, b, o: h.relu(), "unary op"),
        (lambda a, h, b, o: o.sigmoid(), "dense input"),
        (lambda a, h, b, o: o.clamp_min(0.5), "dense input with a number"),
        (lambda a, h, b, o: h.clone(memory_format=torch.contiguous_format), "clone"),
    ]
    fakes = [mode.from_tensor(t) for t in (attention, h, bias, odd)]
    for fn, what in cases:
        want = fn(attention, h, bias, odd)
        with mode:
            got = fn(*fakes)
        assert got.stride() == want.stride(), what
        assert got.is_contiguous(memory_format=torch.channels_last) == want.is_contiguous(
            memory_format=torch.channels_last), what
    with mode:
        normed = torch.nn.functional.group_norm(fakes[1] / 1.0, 8)
    assert normed.stride() == torch.nn.functional.group_norm(h / 1.0, 8).stride()


def test_size_one_dims_get_the_cpu_kernels_strides_with_symbolic_sizes() -> None:
    # The same with symbolic sizes (dynamic=True, or the automatic-dynamic recompile of a VAE
    # given a second image size at batch 1): the view's and the pointwise ops' Python
    # references gave the size-1 batch dim the stride that makes the fake channels-last, and
    # the aten graph's group norm raised again.
    def attention_out(x):  # (1, C, H, W) -> (1, H*W, C) -> viewed back as (1, C, H, W)
        b, c, h, w = x.shape
        return x.reshape(b, c, h * w).transpose(1, 2).contiguous().transpose(1, 2).view(
            b, c, h, w)

    cases = [
        (lambda x, b: attention_out(x), "view"),
        (lambda x, b: attention_out(x) / 1.0, "division by a number"),
        (lambda x, b: torch.ops.aten.mul.Scalar(attention_out(x), 2), "mul.Scalar"),
        (lambda x, b: attention_out(x) + b, "sum with a broadcast operand"),
        (lambda x, b: attention_out(x) + x, "sum with a contiguous operand"),
        (lambda x, b: (attention_out(x) + x) / 1, "division of a sum by a number"),
        (lambda x, b: x.contiguous(memory_format=torch.channels_last) * 2, "channels-last"),
    ]
    x, bias = torch.randn(1, 16, 6, 6), torch.randn(1, 16, 1, 1)
    for fn, what in cases:
        mode = FakeTensorMode(ShapeEnv())
        fake_x, fake_bias = mode.from_tensor(x, dynamic_dims=(2, 3)), mode.from_tensor(bias)
        want = fn(x, bias)
        with mode:
            got = fn(fake_x, fake_bias)
            normed = torch.nn.functional.group_norm(got, 4)
        assert [s.node.hint if isinstance(s, torch.SymInt) else s for s in got.stride()] == list(
            want.stride()), what
        assert [s.node.hint if isinstance(s, torch.SymInt) else s
                for s in normed.stride()] == list(
            torch.nn.functional.group_norm(want, 4).stride()), what
        assert not mode.shape_env.guards, what


@pytest.mark.parametrize("name, fn, specs", [
    ("clone", lambda a: a.clone(), [((1, 4, 2, 1), (4, 1, 4, 4))]),
    ("clone 1d", lambda a: a.clone(), [((1,), (2,))]),
    ("_to_copy", lambda a: a.half(), [((4, 1), (1, 4))]),
    ("type_as", lambda a, b: a.type_as(b.double()), [((2, 1), (1, 2)), ((2, 1), (1, 1))]),
    ("hardtanh", torch.nn.functional.hardtanh, [((1, 3, 1, 1), (1, 1, 3, 3))]),
    ("relu6", torch.nn.functional.relu6, [((4, 1), (1, 4))]),
    ("masked_fill", lambda a, b: a.masked_fill(b > 0, 1.0), [((4, 1), (1, 1)), ((4, 1), (1, 4))]),
    ("lerp.Scalar", lambda a, b: torch.lerp(a, b, 0.3), [((3, 1, 1), (1, 1, 1)),
                                                         ((3, 1, 1), (1, 3, 3))]),
    ("clamp.Tensor", lambda a, b: torch.clamp(a, min=b), [((4, 1, 2, 3), (6, 1, 3, 1)),
                                                          ((4, 1, 2, 3), (1, 4, 4, 8))]),
])
@pytest.mark.parametrize("with_shape_env", [False, True])
def test_pointwise_outputs_not_laid_out_by_tensor_iterator_keep_the_kernels_strides(
        name, fn, specs, with_shape_env) -> None:
    # The size-1-dim correction is TensorIterator's: ops that allocate with `empty_like`
    # (`clone`, `_to_copy`, `hardtanh`), clone contiguously (`masked_fill`), whose prims
    # (`convert_element_type`) run under the mode, whose number is no operand (`lerp.Scalar`'s
    # weight) or whose operand is optional (`clamp.Tensor`'s min) must keep the strides the
    # CPU kernel gives (a wrong size-1 stride changes the suggested memory format: group norm
    # of a `clone` raised in an aot_eager graph).
    args = [torch.empty_strided(size, stride).normal_() for size, stride in specs]
    real = fn(*args)
    mode = FakeTensorMode(ShapeEnv()) if with_shape_env else FakeTensorMode()
    fakes = [mode.from_tensor(a) for a in args]
    with mode:
        out = fn(*fakes)
    assert out.stride() == real.stride(), name


@pytest.mark.parametrize("with_shape_env", [False, True])
def test_convolution_with_a_channels_last_1x1_weight_is_channels_last(with_shape_env) -> None:
    # A 1x1 weight of a channels-last model, `(64, 32, 1, 1)` with strides `(32, 1, 32, 32)`,
    # is contiguous too, but suggests channels-last, and the CPU kernel's output follows it:
    # the fake was contiguous (diffusers' channels-last UNet's training graph raised in group
    # norm, "Expected X.is_contiguous(memory_format)").
    weight = torch.randn(64, 32, 1, 1).to(memory_format=torch.channels_last)
    x = torch.randn(2, 32, 8, 8)
    mode = FakeTensorMode(ShapeEnv()) if with_shape_env else FakeTensorMode()
    fake_x, fake_weight = mode.from_tensor(x), mode.from_tensor(weight)
    with mode:
        out = torch.nn.functional.conv2d(fake_x, fake_weight)
    assert out.stride() == torch.nn.functional.conv2d(x, weight).stride()


def test_size_one_layout_correction_records_no_guard_on_a_broadcast_operands_sizes() -> None:
    # `(B, C, 1, 1) + (C, 1, 1)`: the fast-path check compared the tuples of sizes of other
    # lengths element by element, `B == C`, recording `B != C` (a recompile when the batch
    # equals the channels, and that entry specialized to it).
    x = torch.randn(2, 4, 1, 1)
    mode = FakeTensorMode(ShapeEnv())
    fake_x = mode.from_tensor(x, dynamic_dims=(0, 1))
    with mode:
        out = fake_x + torch.ones(fake_x.shape[1], 1, 1)
    assert [s.node.hint if isinstance(s, torch.SymInt) else s for s in out.stride()] == list(
        (x + torch.ones(4, 1, 1)).stride())
    assert not mode.shape_env.guards


_BN = torch.ops.aten
_SUGGESTED_FORMAT_CASES = {
    "native_batch_norm": lambda x: _BN.native_batch_norm(x, None, None, None, None, True, 0.1,
                                                         1e-5),
    "batch_norm_eval": lambda x: _BN._native_batch_norm_legit_no_training(
        x, None, None, torch.zeros(x.shape[1]), torch.ones(x.shape[1]), 0.1, 1e-5),
    "batch_norm_with_update": lambda x: _BN._batch_norm_with_update(
        x, torch.ones(x.shape[1]), torch.zeros(x.shape[1]), torch.zeros(x.shape[1]),
        torch.ones(x.shape[1]), 0.1, 1e-5),
    "max_unpool2d": lambda x: _F.max_unpool2d(*_F.max_pool2d(x, 1, return_indices=True), 1,
                                              output_size=x.shape[-2:]),
    "channel_shuffle": lambda x: _F.channel_shuffle(x, 2),
}
_SUGGESTING_LAYOUTS = {
    "transposed": torch.randn(2, 4, 5, 3).transpose(-1, -2),
    "channels_last": torch.randn(2, 4, 3, 5).to(memory_format=torch.channels_last),
    "permuted": torch.randn(4, 2, 3, 5).permute(1, 0, 2, 3),
}


@pytest.mark.parametrize("layout", sorted(_SUGGESTING_LAYOUTS))
@pytest.mark.parametrize("case", sorted(_SUGGESTED_FORMAT_CASES))
@pytest.mark.parametrize("symbolic", [False, True])
def test_output_laid_out_in_the_format_the_input_suggests(case, layout, symbolic) -> None:
    # the CPU kernels lay the result out densely in the input's suggested memory format; the
    # decompositions (batch norm, max_unpool2d) kept a transposed input's strides or dropped
    # channels-last, the meta kernel (channel_shuffle) dropped channels-last
    fn, x = _SUGGESTED_FORMAT_CASES[case], _SUGGESTING_LAYOUTS[layout]
    real = torch.utils._pytree.tree_leaves(fn(x))[0]
    mode = FakeTensorMode(ShapeEnv() if symbolic else None)
    fake = mode.from_tensor(x, dynamic_dims=range(x.dim()) if symbolic else ())
    with mode:
        out = torch.utils._pytree.tree_leaves(fn(fake))[0]
    hint = (lambda s: s.node.hint) if symbolic else (lambda s: s)
    assert [hint(s) if isinstance(s, torch.SymInt) else s for s in out.stride()] == \
        list(real.stride())


_BATCH_NORM_CONTIGUOUS_FIRST_CASES = {
    # (input, whether the weight is strided): inputs contiguous in both formats; a strided
    # weight makes the kernel ask the input's suggested format (channels-last) instead
    "channels_last_1x1": (torch.randn(2, 4, 1, 1).to(memory_format=torch.channels_last), False),
    "channels_last_3d_1x1x1": (
        torch.randn(2, 4, 1, 1, 1).to(memory_format=torch.channels_last_3d), False),
    "one_channel_channels_last": (
        torch.randn(2, 1, 3, 3).to(memory_format=torch.channels_last), False),
    "strided_weight": (torch.randn(2, 4, 1, 1).to(memory_format=torch.channels_last), True),
}


@pytest.mark.parametrize("case", sorted(_BATCH_NORM_CONTIGUOUS_FIRST_CASES))
@pytest.mark.parametrize("training", [False, True])
def test_batch_norm_of_input_contiguous_in_two_formats_is_contiguous(case, training) -> None:
    # the CPU batch norm lays an input contiguous in both formats out contiguously when all its
    # tensors are dense; the fake followed torch's suggest_memory_format, which says channels-last
    x, strided_weight = _BATCH_NORM_CONTIGUOUS_FIRST_CASES[case]

    def fn(x):
        weight = torch.ones(2 * x.shape[1])[::2] if strided_weight else None
        return _BN.native_batch_norm(x, weight, None, torch.zeros(x.shape[1]),
                                     torch.ones(x.shape[1]), training, 0.1, 1e-5)[0]
    mode = FakeTensorMode()
    with mode:
        out = fn(mode.from_tensor(x))
    assert out.stride() == fn(x).stride()


_CHANNEL_SHUFFLE_INPUTS = {
    "channels_last": torch.randn(2, 4, 3, 5).to(memory_format=torch.channels_last),
    "channels_last_1x1": torch.randn(2, 4, 1, 1).to(memory_format=torch.channels_last),
    "transposed_5d": torch.randn(2, 4, 6, 5, 3).transpose(2, 4),
    "expanded": torch.randn(1, 4, 3, 5).expand(2, 4, 3, 5),
    "empty_transposed": torch.randn(0, 4, 3, 5).transpose(2, 3),
}


@pytest.mark.parametrize("layout", sorted(_CHANNEL_SHUFFLE_INPUTS))
@pytest.mark.parametrize("op", [_BN.native_channel_shuffle, _BN.channel_shuffle])
def test_channel_shuffle_laid_out_as_the_cpu_kernel(layout, op) -> None:
    # native_channel_shuffle runs channel_shuffle's CPU kernel, not its composite (which dropped
    # channels-last and could not view a transposed input); an empty input comes back as itself
    x = _CHANNEL_SHUFFLE_INPUTS[layout]
    mode = FakeTensorMode()
    with mode:
        out = op(mode.from_tensor(x), 2)
    assert out.stride() == op(x, 2).stride()


_COMPOSED_REFERENCE_CASES = {
    "copysign": torch.copysign,
    "floor_divide": torch.floor_divide,
    "xlogy": torch.xlogy,
    "hardtanh_backward": lambda g, x: _BN.hardtanh_backward(g, x, 0.0, 1.0),
    "softplus_backward": lambda g, x: _BN.softplus_backward(g, x, 1.0, 20.0),
    "native_dropout_backward": lambda g, m: _BN.native_dropout_backward(g, m > 0.5, 2.0),
}


@pytest.mark.parametrize("case", sorted(_COMPOSED_REFERENCE_CASES))
@pytest.mark.parametrize("symbolic", [False, True])
def test_composed_reference_laid_out_by_its_first_input(case, symbolic) -> None:
    # the CPU kernel is one TensorIterator, ordering the dims by its first input first; the
    # reference, built of several ops, ordered them by the contiguous second input
    fn = _COMPOSED_REFERENCE_CASES[case]
    x, y = torch.rand(4, 5).t() + 0.5, torch.rand(5, 4) + 0.5
    mode = FakeTensorMode(ShapeEnv() if symbolic else None)
    dims = (0, 1) if symbolic else ()
    with mode:
        out = fn(mode.from_tensor(x, dynamic_dims=dims), mode.from_tensor(y, dynamic_dims=dims))
    hint = (lambda s: s.node.hint) if symbolic else (lambda s: s)
    assert [hint(s) if isinstance(s, torch.SymInt) else s for s in out.stride()] == \
        list(fn(x, y).stride())


_BATCH_NORMS_THE_DECOMPOSITION_REFUSED = {
    # `_batch_norm_with_update` without a weight: the decomposition asked for the backend,
    # whose binding refuses None
    "with_update_without_weight": lambda x: _BN._batch_norm_with_update(
        x, None, None, torch.zeros(3), torch.ones(3), 0.1, 1e-5),
    "with_update_functional_without_bias": lambda x: _BN._batch_norm_with_update_functional(
        x, torch.ones(3), None, torch.zeros(3), torch.ones(3), 0.1, 1e-5),
    # training on one value per channel: the decomposition's `n / (n - 1)` divided by zero
    "training_one_value_per_channel": lambda x: _BN.native_batch_norm(
        x[:1, :, :1, :1], None, None, torch.zeros(3), torch.ones(3), True, 0.1, 1e-5),
    "legit_functional_one_value_per_channel": lambda x: _BN._native_batch_norm_legit_functional(
        x[:1, :, 0, 0], None, None, torch.zeros(3), torch.ones(3), True, 0.1, 1e-5),
}


@pytest.mark.parametrize("case", sorted(_BATCH_NORMS_THE_DECOMPOSITION_REFUSED))
def test_batch_norm_fakes_where_its_decomposition_raises(case) -> None:
    fn = _BATCH_NORMS_THE_DECOMPOSITION_REFUSED[case]
    x = torch.randn(2, 3, 4, 4).to(memory_format=torch.channels_last)
    mode = FakeTensorMode()
    with mode:
        out = fn(mode.from_tensor(x))
    real = fn(x)
    assert [(t.shape, t.stride(), t.dtype) for t in out] == \
        [(t.shape, t.stride(), t.dtype) for t in real]


_COMPOSED_REFERENCES_NOT_ONE_ITERATOR = {
    # the kernel's TensorIterator takes `self` before `grad_output`
    "threshold_backward": lambda g, x: _BN.threshold_backward(g, x, 0.5),
    # a sum over a new last dim, and an output allocated by size: contiguous either way
    "mvlgamma": lambda g, x: torch.mvlgamma(x + 2.0, 2),
    "pow_scalar": lambda g, x: torch.pow(0.5, x),
}


@pytest.mark.parametrize("case", sorted(_COMPOSED_REFERENCES_NOT_ONE_ITERATOR))
def test_composed_reference_whose_kernel_is_not_one_iterator_in_order(case) -> None:
    fn = _COMPOSED_REFERENCES_NOT_ONE_ITERATOR[case]
    g = torch.rand(2, 3, 4, 5)
    x = torch.rand(2, 3, 4, 5).to(memory_format=torch.channels_last)
    mode = FakeTensorMode()
    with mode:
        out = fn(mode.from_tensor(g), mode.from_tensor(x))
    assert out.stride() == fn(g, x).stride()
