"""from_tensor: every piece of metadata kept, aliasing preserved, dynamic dims symbolic."""

from __future__ import annotations

import pytest
import torch

from fakecore import FakeTensor, FakeTensorMode, ShapeEnv, UnsupportedFakeOpError


def _storage(t: torch.Tensor) -> int:
    return t.untyped_storage()._cdata


def test_metadata_is_kept() -> None:
    real = torch.randn(4, 6, dtype=torch.float64)[1:, ::2]
    fake = FakeTensorMode().from_tensor(real)
    assert isinstance(fake, FakeTensor)
    assert (fake.shape, fake.stride(), fake.storage_offset(), fake.dtype, fake.device) == (
        real.shape, real.stride(), real.storage_offset(), real.dtype, real.device)


def test_the_same_tensor_gives_the_same_fake_and_views_share_storage() -> None:
    mode = FakeTensorMode()
    base = torch.randn(4, 6)
    view, other_view = base[1], base.t()
    fake_base, fake_view, fake_other = (mode.from_tensor(t) for t in (base, view, other_view))
    assert mode.from_tensor(base) is fake_base
    assert fake_view._base is fake_base and fake_other._base is fake_base
    assert _storage(fake_view) == _storage(fake_base) == _storage(fake_other)
    assert _storage(mode.from_tensor(torch.randn(4, 6))) != _storage(fake_base)
    assert (fake_view.storage_offset(), fake_other.stride()) == (6, (1, 6))


def test_views_of_another_dtype_and_with_conjugate_or_negative_bits() -> None:
    mode = FakeTensorMode()
    c = torch.randn(3, 4, dtype=torch.cfloat)[:, 1:]
    x = torch.randn(4, 6)
    views = [c.real, c.imag, torch.view_as_real(c), c.conj(), c.conj().imag, c.mH,
             torch.view_as_real(c.conj().resolve_conj()[1]), x.view(torch.int32)[1:],
             x.view(torch.float16), c.conj().detach()]
    fake_c = mode.from_tensor(c)
    for real in views:
        fake = mode.from_tensor(real)
        assert (fake.shape, fake.stride(), fake.storage_offset(), fake.dtype) == (
            real.shape, real.stride(), real.storage_offset(), real.dtype)
        assert (fake.is_conj(), fake.is_neg()) == (real.is_conj(), real.is_neg())
        if real._base is c._base:
            assert _storage(fake) == _storage(fake_c)
    with mode:
        assert mode.from_tensor(c.real).clamp(min=0).dtype == torch.float32


def test_requires_grad_leafness_and_inference_are_kept() -> None:
    leaf_view = torch.randn(4, 6).view(-1).requires_grad_()
    non_leaf = torch.randn(3, requires_grad=True) * 2
    with torch.inference_mode():
        inference = torch.randn(3)
        inference_view = inference[1:]
    normal = torch.randn(3)
    mode = FakeTensorMode()
    for real in (leaf_view, non_leaf, non_leaf[1:], inference, inference_view, normal):
        fake = mode.from_tensor(real)
        assert (fake.requires_grad, fake.is_leaf, fake.is_inference()) == (
            real.requires_grad, real.is_leaf, real.is_inference())
    with torch.inference_mode():
        assert not FakeTensorMode().from_tensor(normal).is_inference()


def test_a_parameter_made_in_inference_mode_is_faked_outside_it() -> None:
    # (nn.Linear built under inference_mode: an inference Parameter that requires grad;
    # wrapping its fake as a Parameter outside inference mode raised "Setting
    # requires_grad=True on inference tensor outside InferenceMode is not allowed")
    with torch.inference_mode():
        param = torch.nn.Parameter(torch.randn(3, 2))
    fake = FakeTensorMode().from_tensor(param)
    assert isinstance(fake, torch.nn.Parameter)
    assert (fake.requires_grad, fake.is_leaf, fake.is_inference(), fake.shape) == (
        True, True, True, param.shape)


def test_parameters_stay_parameters_and_grads_are_kept() -> None:
    layer = torch.nn.Linear(3, 2)
    layer(torch.randn(5, 3)).sum().backward()
    mode = FakeTensorMode()
    weight = mode.from_tensor(layer.weight)
    assert isinstance(weight, torch.nn.Parameter) and isinstance(weight, FakeTensor)
    assert weight.requires_grad and weight.is_leaf
    assert isinstance(weight.grad, FakeTensor) and weight.grad.shape == (2, 3)
    plain = mode.from_tensor(torch.randn(2, requires_grad=True))
    assert plain.requires_grad and not isinstance(plain, torch.nn.Parameter)


def test_dynamic_dims_become_symbols_and_strides_follow_them() -> None:
    mode = FakeTensorMode(ShapeEnv())
    x = mode.from_tensor(torch.randn(8, 5, 3), dynamic_dims=(0, 1), source="x")
    assert [str(s) for s in x.shape] == ["s0", "s1", "3"]
    assert [str(s) for s in x.stride()] == ["3*s1", "3", "1"]
    origins = mode.shape_env.var_to_origins
    assert [(o.source, o.prop, o.dim) for o in origins[x.shape[0].node.expr]] == [("x", "size", 0)]
    t = mode.from_tensor(torch.randn(7, 9).t(), dynamic_dims=(0, 1))
    assert [str(s) for s in t.stride()] == ["1", str(t.shape[0])]  # the dim of stride 1 sets it


def test_dynamic_strides_get_symbols_of_their_own_and_a_storage_of_their_own() -> None:
    mode = FakeTensorMode(ShapeEnv())
    n = mode.from_tensor(torch.randn(7, 3), dynamic_dims=(0,), source="n")
    ids = torch.randn(2, 7)
    x = mode.from_tensor(ids[:, -1:], dynamic_strides=(0,), source="x")
    assert tuple(x.shape) == (2, 1) and x.storage_offset() == 6
    s = x.stride(0)
    assert isinstance(s, torch.SymInt) and s.node.hint == 7 and x.stride(1) == 1
    assert str(s) != str(n.shape[0])  # not duck-sized with a size of the same hint
    origins = mode.shape_env.var_to_origins[s.node.expr]
    assert [(o.source, o.prop, o.dim) for o in origins] == [("x", "stride", 0)]
    assert not x._is_view()  # a view of the static base would bound the stride
    assert str(x.untyped_storage().nbytes()) == f"4*{s} + 28"  # offset 6 + s + 1 floats
    # a stride that packs densely around a symbolic one follows it
    t = mode.from_tensor(torch.randn(3, 4, 10)[:, :, :5], dynamic_strides=(1,), source="t")
    assert [str(v) for v in t.stride()] == [f"4*{t.stride(1)}", str(t.stride(1)), "1"]
    with mode:
        assert (x * 2).stride() == (1, 1)


def test_dynamic_dims_need_a_shape_env() -> None:
    with pytest.raises(ValueError, match="ShapeEnv"):
        FakeTensorMode().from_tensor(torch.randn(3), dynamic_dims=(0,))


def test_dynamic_dims_out_of_range_raise() -> None:
    mode = FakeTensorMode(ShapeEnv())
    with pytest.raises(IndexError, match="dynamic dim 5"):
        mode.from_tensor(torch.randn(3, 4), dynamic_dims=(5,))


def test_empty_tensors() -> None:
    mode = FakeTensorMode(ShapeEnv())
    empty = mode.from_tensor(torch.randn(0, 4), dynamic_dims=(0, 1))
    assert empty.shape[0] == 0 and str(empty.shape[1]) == "s0"


@pytest.mark.filterwarnings("ignore:Sparse CSR tensor support is in beta")
def test_sparse_tensors() -> None:
    mode = FakeTensorMode()
    dense = torch.randn(3, 4)
    dense[0] = 0
    coo, csr = dense.to_sparse(), dense.to_sparse_csr()
    with mode:
        fake_coo, fake_csr = mode.from_tensor(coo), mode.from_tensor(csr)
        assert (fake_coo.layout, fake_coo._nnz(), fake_coo.shape) == (torch.sparse_coo, 8, (3, 4))
        assert fake_coo._indices().shape == (2, 8) and fake_coo._values().shape == (8,)
        assert fake_csr.crow_indices().shape == (4,) and fake_csr.col_indices().shape == (8,)
        doubled = fake_coo * 2
        product = torch.sparse.mm(fake_csr, torch.ones(4, 2))
        with pytest.raises(UnsupportedFakeOpError, match="sparse output's size depends"):
            mode.from_tensor(dense).to_sparse()  # run on zeros, it would store nothing
    assert isinstance(doubled, FakeTensor) and doubled.layout is torch.sparse_coo
    assert product.layout is torch.strided and product.shape == (3, 2)
    with pytest.raises(ValueError, match="layout torch.sparse_coo with dynamic dims"):
        FakeTensorMode(ShapeEnv()).from_tensor(coo, dynamic_dims=(0,))


def test_an_item_bound_to_a_symbol_reads_it_until_the_tensor_is_written() -> None:
    mode = FakeTensorMode(ShapeEnv())
    sym = mode.shape_env.create_symfloat(0.5, None)
    t = mode.from_tensor(torch.scalar_tensor(0.5, dtype=torch.float64))
    mode.bind_item(t, sym)
    with mode:
        assert t.item().node.expr == sym.node.expr
        t.add_(1)  # written: the value is not known any more
        assert t.item().node.expr != sym.node.expr


def test_tensors_sharing_a_storage_without_a_view_relation_share_a_fake_storage() -> None:
    mode = FakeTensorMode()
    x = torch.randn(4, 6)
    other = torch.empty(0)
    other.set_(x.untyped_storage(), 6, (3, 6), (6, 1))
    sharing = [x.detach(), torch.nn.Parameter(x), x.view(torch.int32), other]
    fake_x = mode.from_tensor(x)
    for real in sharing:
        fake = mode.from_tensor(real)
        assert (fake.shape, fake.stride(), fake.storage_offset(), fake.dtype) == (
            real.shape, real.stride(), real.storage_offset(), real.dtype)
        assert _storage(fake) == _storage(fake_x)
    assert isinstance(mode.from_tensor(sharing[1]), torch.nn.Parameter)
    assert _storage(mode.from_tensor(torch.randn(4, 6))) != _storage(fake_x)


def test_a_grad_is_as_dynamic_as_its_tensor() -> None:
    # a static grad, assigned to a fake of a symbolic size, specialised that size (Eq(5, s0))
    env = ShapeEnv()
    mode = FakeTensorMode(env)
    weight = torch.nn.Parameter(torch.randn(5, 3))
    weight.grad = torch.randn(5, 3)
    fake = mode.from_tensor(weight, dynamic_dims=(0,), source="w")
    assert isinstance(fake.shape[0], torch.SymInt) and fake.grad.shape == fake.shape
    assert env.guards == []
    # the grad's sizes are the tensor's own symbols, whose origin is the tensor's source: no
    # symbol (nor duck-sized origin) without a source, which no guard could check
    assert fake.grad.shape[0] is fake.shape[0] or str(fake.grad.shape[0]) == str(fake.shape[0])
    assert all(o.source == "w" for origins in env.var_to_origins.values() for o in origins)


def test_a_view_made_under_no_grad_is_a_leaf_as_in_eager() -> None:
    p = torch.nn.Parameter(torch.randn(5, 5))
    with torch.no_grad():
        view = p[2]
    fake = FakeTensorMode().from_tensor(view)
    assert (fake.is_leaf, fake.grad_fn, fake.requires_grad, fake._is_view()) == (
        view.is_leaf, None, view.requires_grad, True)


def test_a_view_with_grad_and_dynamic_sizes_is_not_a_leaf() -> None:
    """A view autograd tracks (`as_subclass`, `view`) is not rebuilt from its base when its
    strides are symbolic: its fake was a leaf, and dynamo's guard on `x.is_leaf` (True) failed
    for the very input it was made for (found by the stale-answer fuzzer, seed 13016)."""
    from fakecore import ShapeEnv

    base = torch.randn(3, 4, requires_grad=True)
    for view in (base.as_subclass(torch.Tensor), base.view(3, 4)):
        fake = FakeTensorMode(shape_env=ShapeEnv()).from_tensor(view, dynamic_dims=(0, 1))
        assert (fake.is_leaf, fake.requires_grad) == (False, True)
        assert isinstance(fake.shape[1], torch.SymInt)


def test_a_view_at_an_offset_with_grad_and_dynamic_sizes_is_not_a_leaf() -> None:
    """`x[1:]` (a storage offset a clone does not keep) under dynamic sizes: its fake was a
    leaf still (dynamo's `is_leaf` guard failed for the input it was made for, every call).
    It is a view with its layout; of a leaf base an in-place op on it raises, as eager's."""
    from fakecore import ShapeEnv

    base = torch.randn(4, 6, requires_grad=True)
    for view, leaf_base in ((base[1:], True), ((base * 1)[1:], False),
                            (base[:1].expand(4, 6), True)):
        mode = FakeTensorMode(shape_env=ShapeEnv())
        fake = mode.from_tensor(view, dynamic_dims=(0, 1))
        assert (fake.is_leaf, fake.requires_grad) == (False, True)
        assert fake.storage_offset() == view.storage_offset()
        with mode, torch.enable_grad():
            if leaf_base:
                with pytest.raises(RuntimeError, match="view of a leaf Variable"):
                    fake.add_(1)
            else:
                fake.add_(1)


def test_a_grad_that_no_longer_matches_its_tensor_is_refused_in_words() -> None:
    weight = torch.nn.Parameter(torch.randn(4, 8))
    weight.grad = torch.randn(4, 8)
    weight.data = torch.randn(6, 8)  # eager allows it; the fake cannot hold that grad
    with pytest.raises(ValueError, match=r"\.grad no longer matches it"):
        FakeTensorMode().from_tensor(weight)


def test_dlpack_of_a_fake_is_refused_not_a_tensor_over_no_memory() -> None:
    """`torch.from_dlpack(fake)` made a CPU tensor of the fake's null data pointer, and the
    next op read it (a segmentation fault); so did `from_dlpack(to_dlpack(fake))`."""
    mode = FakeTensorMode()
    fake = mode.from_tensor(torch.randn(3))
    with mode:
        with pytest.raises(UnsupportedFakeOpError, match="__dlpack__"):
            torch.from_dlpack(fake)
        with pytest.raises(ValueError, match="has no data"):
            torch.from_dlpack(torch.utils.dlpack.to_dlpack(fake)) * 2


def test_coalesce_of_a_sparse_fake_is_data_dependent() -> None:
    """An uncoalesced fake's zeros were coalesced: `_coalesce` stopped at PyTorch's internal
    assertion; the stored elements left depend on the indices' values."""
    mode = FakeTensorMode()
    indices = mode.from_tensor(torch.tensor([[0, 0, 1], [1, 1, 2]]))
    values = mode.from_tensor(torch.tensor([1.0, 2.0, 3.0]))
    with mode:
        sparse = torch.sparse_coo_tensor(indices, values, (3, 3), check_invariants=False)
        assert sparse._nnz() == 3 and not sparse.is_coalesced()
        with pytest.raises(UnsupportedFakeOpError, match="_coalesce"):
            sparse.coalesce()


def test_a_subclass_with_its_own_dispatch_handles_its_ops_on_fakes() -> None:
    """A MaskedTensor of fakes asked its layout reached the mode as `prim.layout` ("operator
    prim::layout does not exist"); the mode leaves such subclasses to their own dispatch."""
    import warnings

    mode = FakeTensorMode()
    data = mode.from_tensor(torch.randn(3))
    mask = mode.from_tensor(torch.tensor([True, False, True]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with mode:
            masked = torch.masked.masked_tensor(data, mask)
            out = (masked * 2).get_data()
    assert isinstance(out, FakeTensor) and out.shape == (3,)


def test_a_non_leaf_fake_keeps_the_conjugate_and_negative_bits() -> None:
    """A non-leaf under dynamic sizes is faked as a clone or an `as_strided` view of a new
    storage: both dropped the conj and neg bits (`x.conj()[1:]` that requires grad read
    `is_conj()` False in a compiled function, True in eager)."""
    from fakecore import ShapeEnv

    a = torch.randn(4, 3, dtype=torch.cfloat, requires_grad=True)
    r = torch.randn(4, 3, requires_grad=True)
    for view in (a.conj(), a.conj()[1:], (a * 1).conj(), (a * 1).conj()[:, 1:],
                 torch._neg_view(r * 1), torch._neg_view(r * 1)[1:]):
        mode = FakeTensorMode(shape_env=ShapeEnv())
        fake = mode.from_tensor(view, dynamic_dims=(0, 1))
        assert (fake.is_leaf, fake.requires_grad) == (False, True)
        assert (fake.is_conj(), fake.is_neg()) == (view.is_conj(), view.is_neg()), view
