"""FakeTensorMode's dispatch: each path an op can take, checked against the real op."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from fakecore import (
    DataDependentError,
    FakeTensor,
    FakeTensorMode,
    MixedRealFakeError,
    ShapeEnv,
    UnsupportedFakeOpError,
)


def _layout(t: torch.Tensor) -> tuple:
    hint = lambda s: s.node.hint if isinstance(s, torch.SymInt) else s  # noqa: E731
    return (
        tuple(hint(s) for s in t.shape),
        tuple(hint(s) for s in t.stride()),
        hint(t.storage_offset()),
        t.dtype,
    )


OPS = {
    "pointwise": lambda x, y: x * y + 1,
    "broadcast": lambda x, y: x + y[:1],
    "reduction": lambda x, y: x.sum(dim=1, keepdim=True),
    "matmul": lambda x, y: x @ y.t(),
    "softmax": lambda x, y: torch.softmax(x, -1),
    "layer_norm": lambda x, y: torch.nn.functional.layer_norm(x, x.shape[-1:]),
    "transpose_contiguous": lambda x, y: x.t().contiguous(),
    "cat": lambda x, y: torch.cat([x, y], dim=0),
    "split": lambda x, y: x.split(2, dim=1),
    "index_select": lambda x, y: x.index_select(0, torch.tensor([0, 2])),
    "where": lambda x, y: torch.where(x > 0, x, y),
    "conv": lambda x, y: torch.nn.functional.conv2d(x.view(1, 1, *x.shape), y.view(1, 1, *y.shape)[..., :3, :3]),
    "permute_reshape": lambda x, y: x.unsqueeze(0).permute(2, 0, 1).reshape(-1),
    "to_dtype": lambda x, y: x.to(torch.float16),
    "inplace": lambda x, y: x.clone().add_(y).mul_(2),
}


@pytest.mark.parametrize("symbolic", [False, True], ids=["static", "symbolic"])
@pytest.mark.parametrize("name", sorted(OPS))
def test_op_matches_real_layout(name: str, symbolic: bool) -> None:
    x, y = torch.randn(6, 8), torch.randn(6, 8)
    expected = OPS[name](x, y)
    mode = FakeTensorMode(ShapeEnv() if symbolic else None)
    dims = (0, 1) if symbolic else ()
    fx, fy = (mode.from_tensor(t, dynamic_dims=dims) for t in (x, y))
    with mode:
        got = OPS[name](fx, fy)
    expected_leaves = expected if isinstance(expected, tuple) else (expected,)
    got_leaves = got if isinstance(got, tuple) else (got,)
    assert [_layout(t) for t in got_leaves] == [_layout(t) for t in expected_leaves]
    assert all(isinstance(t, FakeTensor) for t in got_leaves)


def test_repeated_calls_hit_the_cache_and_agree() -> None:
    mode = FakeTensorMode(ShapeEnv())
    x = mode.from_tensor(torch.randn(4, 6), dynamic_dims=(0,))
    hits = []
    lookup = mode._cache.lookup
    mode._cache.lookup = lambda *a: hits.append(lookup(*a)) or hits[-1]

    def calls():
        return [(t.shape, t.stride(), t.storage_offset())
                for t in (x * 2, x + x, x.t(), *x.split(2, 1), torch.mm(x.t(), x))]

    with mode:
        first = calls()
        hits.clear()
        again = calls()
    assert first == again
    assert len(hits) >= 5 and all(h is not None for h in hits)  # fresh outputs and views


def test_views_share_storage_with_their_base_also_from_the_cache() -> None:
    mode = FakeTensorMode()
    x = mode.from_tensor(torch.randn(4, 6))
    with mode:
        views = [x.view(2, 12) for _ in range(3)]  # the second and third come from the cache
        fresh = x * 1
    storage = x.untyped_storage()._cdata
    assert all(v.untyped_storage()._cdata == storage for v in views)
    assert all(v._base is x for v in views)
    assert fresh.untyped_storage()._cdata != storage


def test_in_place_metadata_change_is_seen_on_the_same_object() -> None:
    mode = FakeTensorMode()
    x = mode.from_tensor(torch.randn(2, 3))
    with mode:
        y = x.clone()
        out = y.t_()
    assert out is y and y.shape == (3, 2) and y.stride() == (1, 3)


def test_the_cache_keys_on_the_default_dtype() -> None:
    mode = FakeTensorMode()
    with mode:
        assert torch.ones(3).dtype == torch.float32
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        with mode:
            assert torch.ones(3).dtype == torch.float64
    finally:
        torch.set_default_dtype(previous)


def test_the_cache_keeps_apart_what_a_decomposition_computed() -> None:
    # mish's decomposition (run for symbolic sizes) calls softplus on the same input, whose
    # layout is then the reference's (no size-1 correction inside a decomposition): a later
    # softplus of its own must not get that record
    real = torch.randn(2, 1, 4, 5).to(memory_format=torch.channels_last)
    mode = FakeTensorMode(ShapeEnv())
    x = mode.from_tensor(real, dynamic_dims=(0, 2, 3))
    with mode:
        torch.nn.functional.mish(x)
        out = torch.nn.functional.softplus(x)
    assert _layout(out) == _layout(torch.nn.functional.softplus(real))


def test_views_from_the_cache_keep_the_conjugate_and_negative_bits() -> None:
    real = torch.randn(2, 3, dtype=torch.cfloat)
    mode = FakeTensorMode()
    x = mode.from_tensor(real)
    with mode:
        for _ in range(2):  # the second round comes from the cache
            assert x.conj().is_conj() and x.mH.is_conj() and not x.conj().conj().is_conj()
            assert x.conj().imag.is_neg() and not x.imag.is_neg()
            assert x.conj().imag.sum().dtype == torch.float32


def test_factories_make_fakes_on_the_requested_device() -> None:
    with FakeTensorMode():
        a = torch.ones(3, 4)
        b = torch.arange(10, device="cuda")
        c = torch.empty(2, 2, dtype=torch.float16, device="cuda:0")
        d = torch.zeros_like(b, dtype=torch.float32)
        e = b.float() * 2
    assert isinstance(a, FakeTensor) and a.device == torch.device("cpu")
    assert b.device == torch.device("cuda:0") and b.dtype == torch.int64 and b.shape == (10,)
    assert c.device == torch.device("cuda:0") and c.dtype == torch.float16
    assert d.device == b.device and e.device == b.device and e.dtype == torch.float32


def test_fake_cuda_model_forward_on_a_machine_without_gpu() -> None:
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2))
    mode = FakeTensorMode()
    with mode:
        params = {n: torch.empty_like(p, device="cuda") for n, p in model.named_parameters()}
        x = torch.empty(5, 8, device="cuda")
        out = torch.func.functional_call(model, params, (x,))
    assert out.shape == (5, 2) and out.device.type == "cuda"


def test_ctc_loss_on_fake_gpu_tensors_asks_for_cudnn_by_metadata() -> None:
    # CTC loss on a GPU first asks `_use_cudnn_ctc_loss` (a CUDA kernel only): padded int64
    # targets rule cuDNN out, and ATen's own kernel is faked
    with FakeTensorMode():
        log_probs = torch.empty(9, 4, 5, device="cuda").log_softmax(2)
        targets = torch.zeros(4, 4, dtype=torch.long, device="cuda")
        loss = F.ctc_loss(log_probs, targets, [9, 5, 0, 7], [4, 0, 3, 2], reduction="none")
    assert loss.shape == (4,) and loss.device.type == "cuda"


def test_use_cudnn_ctc_loss_follows_cudnns_conditions(monkeypatch) -> None:
    monkeypatch.setattr(torch.backends.cudnn, "is_available", lambda: True)
    use = torch.ops.aten._use_cudnn_ctc_loss
    with FakeTensorMode():
        log_probs = torch.empty(9, 2, 5, device="cuda")
        targets = torch.zeros(5, dtype=torch.int32)  # concatenated, on the CPU
        on_gpu = torch.zeros(5, dtype=torch.int32, device="cuda")
        assert use(log_probs, targets, [9, 9], [3, 2], 0) is True
        assert use(log_probs, targets, [9, 8], [3, 2], 0) is False  # an input shorter than time
        assert use(log_probs, targets, [9, 9], [3, 2], 1) is False  # another blank
        assert use(log_probs, targets.long(), [9, 9], [3, 2], 0) is False
        assert use(log_probs, on_gpu, [9, 9], [3, 2], 0) is False
        lengths = torch.full((2,), 9, dtype=torch.int32, device="cuda")
        with pytest.raises(DataDependentError, match="_use_cudnn_ctc_loss.Tensor"):
            use(log_probs, on_gpu, lengths, lengths, 0)
        assert use(log_probs, on_gpu, lengths, lengths.long(), 0) is False
    with torch.backends.cudnn.flags(enabled=False), FakeTensorMode():
        assert use(torch.empty(9, 2, 5, device="cuda"), torch.zeros(5, dtype=torch.int32),
                   [9, 9], [3, 2], 0) is False


@pytest.mark.parametrize("fn", [
    lambda: torch.ones(3, device="cuda") + torch.ones(3),
    lambda: torch.cat([torch.ones(3, device="cuda"), torch.ones(3)]),
    lambda: torch.ones(3, device="cuda:1") + torch.ones(3, device="cuda"),
], ids=["add", "cat", "two_gpus"])
def test_inputs_on_two_devices_are_an_error_naming_the_op_and_devices(fn) -> None:
    with FakeTensorMode():
        with pytest.raises(RuntimeError, match=r"aten\.\w+.*same device.*cuda:\d and c"):
            fn()
        gpu = torch.ones(3, device="cuda")
        assert (gpu + torch.tensor(2.0)).device == gpu.device  # a CPU scalar is fine


def test_real_tensor_with_fakes_is_refused_naming_the_op() -> None:
    mode = FakeTensorMode()
    x, real = mode.from_tensor(torch.randn(3)), torch.randn(3)
    with pytest.raises(MixedRealFakeError, match=r"aten\.add\.Tensor.*test_dispatch\.py"):
        with mode:
            x + real


def test_allow_non_fake_inputs_converts_real_tensors() -> None:
    mode = FakeTensorMode(allow_non_fake_inputs=True)
    x, real = mode.from_tensor(torch.randn(3)), torch.randn(3)
    with mode:
        y = x + real
    assert isinstance(y, FakeTensor) and y.shape == (3,)


def test_fake_of_another_mode_is_refused() -> None:
    x = FakeTensorMode().from_tensor(torch.randn(3))
    other = FakeTensorMode()
    with pytest.raises(RuntimeError, match="another FakeTensorMode"):
        with other:
            x * 2


def test_op_without_meta_kernel_runs_on_zeros_for_static_cpu_fakes() -> None:
    mode = FakeTensorMode()
    x = mode.from_tensor(torch.randn(4, 3))
    with mode:
        a, tau = torch.geqrf(x)
        hist, edges = torch.histogram(x, 5)
    assert isinstance(a, FakeTensor) and (a.shape, a.stride(), tau.shape) == ((4, 3), (1, 4), (3,))
    assert (hist.shape, edges.shape) == ((5,), (6,))


def test_op_that_cannot_be_faked_names_the_op() -> None:
    mode = FakeTensorMode()
    with pytest.raises(UnsupportedFakeOpError, match=r"aten\.geqrf"):
        with mode:
            torch.geqrf(torch.empty(4, 4, device="cuda"))


torch.library.define("fakecore_test::positive", "(Tensor x) -> Tensor")
torch.library.impl("fakecore_test::positive", "cpu")(lambda x: x[x > 0].clone())


def test_a_custom_op_without_a_fake_kernel_is_not_run_on_zeros() -> None:
    # Its tags cannot say that its output size depends on the data (this one's does): run on
    # zeros, it would give a wrong size, silently, and run the user's kernel.
    mode = FakeTensorMode()
    x = mode.from_tensor(torch.tensor([1.0, -2.0, 3.0]))
    with pytest.raises(UnsupportedFakeOpError, match=r"fakecore_test\.positive"):
        with mode:
            torch.ops.fakecore_test.positive(x)


@torch.library.custom_op("fakecore_test::kept", mutates_args=())
def _kept(x: torch.Tensor) -> torch.Tensor:
    return x[x > 0].clone()


@_kept.register_fake
def _kept_fake(x):
    assert x.device.type == "cpu", f"the fake impl sees {x.device}"  # the fake's own device
    return x.new_empty(torch.library.get_ctx().new_dynamic_size())


def test_a_custom_ops_fake_impl_runs_on_the_fakes_with_an_unbacked_size() -> None:
    """`register_fake` runs on the fake tensors (their device, not meta), and its
    `get_ctx().new_dynamic_size()` is an unbacked symbol, new at each call; without a
    ShapeEnv the error names the op."""
    mode = FakeTensorMode(shape_env=ShapeEnv())
    x = mode.from_tensor(torch.randn(8))
    with mode:
        first, second = _kept(x), _kept(x)
    assert first.device.type == "cpu"
    assert all(isinstance(t.shape[0], torch.SymInt) for t in (first, second))
    assert str(first.shape[0]) != str(second.shape[0])
    plain = FakeTensorMode()
    with pytest.raises(DataDependentError, match="fakecore_test.kept"):
        with plain:
            _kept(plain.from_tensor(torch.randn(8)))


def test_a_higher_order_op_is_refused_by_name_or_faked_by_torchs_rule() -> None:
    """A triton_op's fake impl is its own body, whose `wrap_triton` launch is the
    `triton_kernel_wrapper_mutation` higher-order op: torch's fake rule runs it (no launch);
    any other higher-order op is an UnsupportedFakeOpError naming it."""
    triton = pytest.importorskip("triton")
    import triton.language as tl
    from torch._higher_order_ops.triton_kernel_wrap import (
        kernel_side_table,
        triton_kernel_wrapper_mutation,
    )

    @triton.jit
    def double(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)

    mode = FakeTensorMode()
    with mode:
        x = torch.zeros(4)  # a known value, which the launch makes stale
        index = kernel_side_table.add_kernel(double)
        assert triton_kernel_wrapper_mutation(
            kernel_idx=index, constant_args_idx=kernel_side_table.add_constant_args(
                {"n": 4, "BLOCK": 4}), grid=[(1, 1, 1)], tma_descriptor_metadata={},
            kwargs={"x_ptr": x}) is None
        assert x.constant is None
        with pytest.raises(UnsupportedFakeOpError, match="cannot fake cond"):
            torch.ops.higher_order.cond(torch.tensor(True), lambda a: a, lambda a: a, (x,))


def test_constants_made_inside_keep_their_values() -> None:
    with FakeTensorMode():
        t = torch.tensor([3, 4])
        assert t[1].item() == 4
        assert (t * 2).sum().item() == 14
        scale = torch.tensor(0.5)
        assert scale.item() == 0.5


def test_an_op_given_python_numbers_only_is_a_constant() -> None:
    # `torch.div(seq_len, window, rounding_mode="trunc")` (Longformer's chunking): its value
    # is known, so a size computed from it is that number, not an unbacked symbol
    with FakeTensorMode(shape_env=ShapeEnv()):
        quotient = torch.div(12, 4, rounding_mode="trunc")
        assert quotient.item() == 3 and torch.add(2, 5).item() == 7


def test_item_of_a_fake_without_value_in_static_mode_raises() -> None:
    mode = FakeTensorMode()
    x = mode.from_tensor(torch.randn(3))
    with pytest.raises(DataDependentError, match=r"_local_scalar_dense"):
        with mode:
            x.sum().item()


def test_written_constant_forgets_its_value() -> None:
    mode = FakeTensorMode(ShapeEnv())
    with mode:
        t = torch.tensor([1, 2])
        t.add_(1)
        assert isinstance(t[0].item(), torch.SymInt)


def test_writing_through_any_alias_forgets_the_constants_of_all_aliases() -> None:
    mode = FakeTensorMode(ShapeEnv())
    with mode:
        a = torch.tensor([1, 2, 3])
        b = a[0]
        assert b.item() == 1
        a.add_(10)  # writes b's storage too
        assert isinstance(b.item(), torch.SymInt) and isinstance(a[1].item(), torch.SymInt)
        c = torch.tensor([1, 2, 3])
        c[0] = 10  # a write to a view of c
        assert isinstance(c[0].item(), torch.SymInt)
        d = torch.tensor([1, 2, 3])
        d[d > 1] = 0  # a masked write
        assert isinstance(d.sum().item(), torch.SymInt)
        e, f = torch.tensor([4, 5]), torch.tensor([6])
        e[0].copy_(f[0])  # only e is written: f keeps its value
        assert f.item() == 6 and isinstance(e[1].item(), torch.SymInt)



def test_setting_data_on_another_device_moves_the_tensor_and_module_to_does() -> None:
    with FakeTensorMode():
        t = torch.ones(3)
        t.data = torch.ones(3, device="cuda:0")
        assert t.device == torch.device("cuda:0")
        linear = torch.nn.Linear(3, 4).requires_grad_(False).to("cuda:0")  # `p.data = ...`
        assert linear.weight.device == torch.device("cuda:0")
        assert linear(torch.ones(2, 3, device="cuda:0")).device == torch.device("cuda:0")


def test_setting_data_forgets_the_old_constant() -> None:
    mode = FakeTensorMode(ShapeEnv())
    with mode:
        a = torch.tensor([1, 2, 3])
        a.data = torch.tensor([7, 8, 9])  # the new data's value is known: it is taken
        assert a[0].item() == 7 and a.tolist() == [7, 8, 9]
        a.add_(1)  # and forgotten as any other once written
        assert isinstance(a[0].item(), torch.SymInt)
        b = torch.tensor([1, 2, 3])
        view = b[:2]
        b.data = torch.zeros(3, dtype=torch.int64)  # made in the mode: value unknown
        assert isinstance(b[0].item(), torch.SymInt)
        assert view.tolist() == [1, 2]  # the old storage was not written
    static = FakeTensorMode()
    x = static.from_tensor(torch.randn(3))
    with static:
        c = torch.tensor([1.0, 2.0, 3.0])
        c.data = x
        with pytest.raises(DataDependentError):
            c[0].item()


_ALIASING_OPS = {
    "unsafe_split": lambda x: torch.unsafe_split(x, 2),
    "unsafe_chunk": lambda x: torch.unsafe_chunk(x, 3),
    "unsafe_split_with_sizes": lambda x: torch.unsafe_split_with_sizes(x, [2, 4]),
    "_unsafe_view": lambda x: torch.ops.aten._unsafe_view(x, [24]),
    "split": lambda x: x.split(2),
    "unbind": lambda x: x.unbind(1),
    "view": lambda x: x.view(24),
    "resolve_conj": lambda x: x.resolve_conj(),
    "contiguous": lambda x: x.contiguous(),
    "detach": lambda x: x.detach(),
    "clone": lambda x: x.clone(),
    "split_copy": lambda x: torch.split_copy(x, 2),
}


@pytest.mark.parametrize("symbolic", [False, True], ids=["static", "symbolic"])
@pytest.mark.parametrize("name", sorted(_ALIASING_OPS))
def test_outputs_from_the_cache_alias_the_input_as_in_eager(name: str, symbolic: bool) -> None:
    def aliasing(x, outs):
        outs = outs if isinstance(outs, (list, tuple)) else (outs,)
        storage = x.untyped_storage()
        return [(o.untyped_storage()._cdata == storage._cdata
                 or o.untyped_storage().data_ptr() == storage.data_ptr() != 0, o is x,
                 o._is_view(), o._base is x) for o in outs]

    real = torch.randn(6, 4)
    expected = aliasing(real, _ALIASING_OPS[name](real))
    mode = FakeTensorMode(ShapeEnv() if symbolic else None)
    x = mode.from_tensor(real, dynamic_dims=(0,) if symbolic else ())
    with mode:
        for _ in range(3):  # the later rounds may come from the cache
            assert aliasing(x, _ALIASING_OPS[name](x)) == expected


def test_writing_an_unsafe_split_piece_forgets_the_constant_it_aliases() -> None:
    with FakeTensorMode(ShapeEnv()):
        for _ in range(2):
            c = torch.tensor([1, 2, 3, 4])
            first, _ = torch.unsafe_split(c, 2)
            first.add_(1)
            assert isinstance(c[0].item(), torch.SymInt)


def test_backward_on_fakes_gives_fake_grads() -> None:
    mode = FakeTensorMode(ShapeEnv())
    w = mode.from_tensor(torch.randn(4, 3, requires_grad=True))
    x = mode.from_tensor(torch.randn(5, 4), dynamic_dims=(0,))
    with mode:
        (x @ w).relu().sum().backward()
    assert isinstance(w.grad, FakeTensor) and w.grad.shape == (4, 3)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("dims,layout", [(2, torch.channels_last), (3, torch.channels_last_3d)])
@pytest.mark.parametrize("which", ["input", "weight", "neither"])
def test_convolution_output_is_laid_out_as_the_real_kernel_lays_it_out(dtype, dims, layout, which):
    x = torch.randn(2, 3, *[8] * dims, dtype=dtype)
    w = torch.randn(4, 3, *[3] * dims, dtype=dtype)
    if which == "input":
        x = x.to(memory_format=layout)
    elif which == "weight":
        w = w.to(memory_format=layout)
    args = ([1] * dims, [1] * dims, [1] * dims, False, [0] * dims, 1)
    real = torch.ops.aten.convolution.default(x, w, None, *args)
    mode = FakeTensorMode()
    with mode:
        fake = torch.ops.aten.convolution.default(mode.from_tensor(x), mode.from_tensor(w), None,
                                                  *args)
    assert fake.shape == real.shape and fake.stride() == real.stride()


def test_foreach_ops_with_a_tensor_of_scalars() -> None:
    """An optimizer's foreach update passes its step sizes as a CPU tensor, whose values the
    meta kernel would read."""
    mode = FakeTensorMode()
    params = [mode.from_tensor(torch.randn(3)), mode.from_tensor(torch.randn(2, 2))]
    with mode:
        torch._foreach_addcdiv_(params, params, params, torch.tensor([0.1, 0.2]))
        out = torch._foreach_addcmul(params, params, params, torch.tensor([0.1, 0.2]))
    assert [o.shape for o in out] == [(3,), (2, 2)]
    assert all(isinstance(o, FakeTensor) for o in out)


@pytest.mark.parametrize("symbolic", [False, True])
def test_a_transposed_convolution_with_the_wrong_channels_is_rejected(symbolic: bool) -> None:
    # eager rejects it; the meta kernel would invent an output size
    mode = FakeTensorMode(ShapeEnv() if symbolic else None)
    x, w = mode.from_tensor(torch.randn(2, 4, 12, 10)), mode.from_tensor(torch.randn(1, 4, 3, 3))
    with mode, pytest.raises(RuntimeError, match="expected input.* to have 1 channels, but got 4"):
        torch.nn.functional.conv_transpose2d(x, w, stride=3)
    with mode:
        assert torch.nn.functional.conv_transpose2d(x, w.transpose(0, 1).contiguous(),
                                                    stride=3).shape[1] == 1


def test_an_output_autograd_saves_is_freed_with_its_mode() -> None:
    """relu saves its output; the saved detach, faked from C++ with autograd still on, was an
    autograd view of the output: a cycle the garbage collector could not see."""
    import gc
    import weakref

    def trace():
        mode = FakeTensorMode(ShapeEnv())
        with mode:
            x = torch.randn(2, 16, requires_grad=True)
            x.relu().exp()
        return weakref.ref(mode)

    mode = trace()
    gc.collect()
    assert mode() is None


@pytest.mark.parametrize("shift", [
    lambda b: b >> 1, lambda b: b << 2,
    lambda b: torch.bitwise_left_shift(b, torch.tensor(3, dtype=torch.int32)),
    lambda b: b >> torch.arange(3, dtype=torch.int8),
])
@pytest.mark.parametrize("symbolic", [False, True])
def test_a_bool_tensor_shifted_by_an_int(shift, symbolic: bool) -> None:
    # the CPU kernel shifts it as its result dtype; the meta kernel refuses bool
    b = torch.tensor([True, False, True])
    mode = FakeTensorMode(ShapeEnv() if symbolic else None)
    with mode:
        out = shift(mode.from_tensor(b))
    assert _layout(out) == _layout(shift(b))
    with mode, pytest.raises(RuntimeError, match="not implemented for 'Bool'|integral dtype"):
        mode.from_tensor(b) >> mode.from_tensor(b)  # as eager, which has no bool kernel


@pytest.mark.parametrize("write", [
    lambda t: t.long().mul_(1.5),
    lambda t: t.long().mul_(torch.tensor(1.5)),
    lambda t: t.long().mul_(t),
    lambda t: (t > 0).mul_(3),
    lambda t: t.mul_(1j),
    lambda t: t.long().sub_(1j),
], ids=["int_by_float", "int_by_float_tensor", "int_by_float_operand", "bool_by_int",
        "float_by_complex", "int_minus_complex"])
def test_an_in_place_write_of_a_type_self_cannot_hold_is_refused_as_in_eager(write) -> None:
    # The meta kernels of mul_ and sub_ keep self's dtype where eager refuses the promoted
    # result: a trace would compute in the wider type and cast back
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
        write(torch.randn(3))
    with FakeTensorMode() as mode:
        x = mode.from_tensor(torch.randn(3))
        with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
            write(x)
        # (a result of the same kind, wider, is cast back: float32 times float64)
        assert (x.mul_(x.double()).dtype, x.long().mul_(3).dtype) == (torch.float32, torch.int64)


@pytest.mark.parametrize("write", [
    lambda x: x.view(-1)[1:].add_(x.view(-1)[:-1]),
    lambda x: x.mul_(x[0]),
    lambda x: x[:4].add_(x[:4].t()),
    lambda x: x.view(-1)[1:].copy_(x.view(-1)[:-1]),
    lambda x: x.view(-1)[1:].lerp_(x.view(-1)[:-1], 0.5),
], ids=["shifted", "a_row", "transposed", "copy_", "lerp_"])
def test_a_write_reading_part_of_its_own_memory_is_refused_as_in_eager(write) -> None:
    # TensorIterator refuses a dense input sharing only part of the written tensor's memory;
    # the meta kernels do not check (a trace then computed what eager refuses)
    message = "some elements of the input tensor and the written-to tensor refer to a single"
    with pytest.raises(RuntimeError, match=message):
        write(torch.randn(8, 4))
    with FakeTensorMode() as mode:
        with pytest.raises(RuntimeError, match=message):
            write(mode.from_tensor(torch.randn(8, 4)))
        x = mode.from_tensor(torch.randn(8, 4))
        # the same memory alike, other memory, and views not dense (eager's "too hard") pass
        x.mul_(x.view(8, 4)).add_(x[4:].view(-1).repeat(2).view(8, 4))
        x[:4].add_(x[4:])
        x[:, 1:3].mul_(x[:, :2])
