"""Turning real tensors into fake ones, keeping everything but the data.

The fake of a tensor has its sizes, strides, storage offset, dtype, conjugate and negative bits,
device, requires_grad, leafness and inference-ness; views of one storage become views of one fake
storage (the base is converted first and the view is rebuilt from it with `as_strided`, of the
base's storage reinterpreted as the view's dtype when that differs, as for `c.real`); Parameters
stay Parameters; and converting the same tensor twice gives the same fake, so aliasing between
inputs is preserved. Dims asked to be dynamic get symbols from the ShapeEnv, with strides written
in terms of them where the layout is dense. Strides asked to be dynamic get symbols of their own
(strides that pack densely around them follow them); such a tensor gets a storage of its own,
sized from its symbolic layout, even if it is a view (rebuilt from its static base, the view's
strides would be bounded by the base's storage).
Sparse tensors (COO and compressed layouts, static sizes only) become sparse meta tensors with
the same number of stored elements, their index and value tensors faked along. Nested and
quantized tensors are refused with a ValueError.
"""

from __future__ import annotations

import weakref
from contextlib import nullcontext
from typing import TYPE_CHECKING

import torch
from torch.multiprocessing.reductions import StorageWeakRef
from torch.utils.weak import WeakIdKeyDictionary

from fakecore.fake_tensor import FakeTensor
from fakecore.shape_env import SizeOrigin

if TYPE_CHECKING:
    from fakecore.fake_mode import FakeTensorMode

# A lifted constant (`torch.tensor(...)` inside a traced function) keeps its real value when it
# is at most this many elements, so that `.item()` on it still has an answer.
CONSTANT_NUMEL = 64


SPARSE_LAYOUTS = (torch.sparse_coo, torch.sparse_csr, torch.sparse_csc, torch.sparse_bsr,
                  torch.sparse_bsc)


class TensorConverter:
    """Converts real tensors to the FakeTensors of one mode, memoized per tensor."""

    def __init__(self, mode: FakeTensorMode) -> None:
        self.mode = mode
        self._memo: WeakIdKeyDictionary = WeakIdKeyDictionary()
        # Real storage -> (a weak reference to it, a weak reference to a fake in its fake
        # storage): tensors that share a storage without being views of one another
        # (`x.detach()`, `nn.Parameter(x)`, `x.view(torch.int32)`, `set_`) share a fake one.
        self._storages: dict[int, tuple[StorageWeakRef, weakref.ref]] = {}
        self._prune_at = 64  # its size when the entries of freed storages are next dropped

    def convert(self, t: torch.Tensor, dynamic_dims: tuple[int, ...], source: object,
                dynamic_strides: tuple[int, ...] = (), sizes_of: FakeTensor | None = None
                ) -> FakeTensor:
        """`sizes_of`: a fake whose sizes the dynamic dims take (a grad's are its tensor's)
        instead of symbols of their own."""
        if isinstance(t, FakeTensor):
            if t.fake_mode is not self.mode:
                raise ValueError("this FakeTensor belongs to another FakeTensorMode")
            return t
        if t.is_nested or t.is_quantized:
            raise ValueError(f"cannot fake a {'nested' if t.is_nested else 'quantized'} tensor")
        if (dynamic_dims or dynamic_strides) and self.mode.shape_env is None:
            raise ValueError("dynamic_dims and dynamic_strides need a FakeTensorMode created "
                             "with a ShapeEnv")
        for d in (*dynamic_dims, *dynamic_strides):
            if not -t.dim() <= d < t.dim():
                raise IndexError(f"dynamic dim {d} is out of range for a tensor of {t.dim()} "
                                 "dims")
        found = self._memo.get(t)
        if found is not None:  # (with the sizes it got then: aliases stay aliases)
            return found
        if t.layout is torch.strided:
            fake = self._make(t, dynamic_dims, source, dynamic_strides, sizes_of)
        elif t.layout in SPARSE_LAYOUTS and not dynamic_dims and not dynamic_strides:
            fake = FakeTensor(self.mode, _sparse_meta(t), t.device)
        else:
            raise ValueError(f"cannot fake a tensor of layout {t.layout}"
                             + (" with dynamic dims" if t.layout in SPARSE_LAYOUTS else ""))
        self._memo[t] = fake
        return fake

    def convert_constant(self, t: torch.Tensor) -> FakeTensor:
        """The fake of a real tensor met inside the mode, remembering small values."""
        if t.device.type == "cpu" and t.numel() and not t.is_meta and t.layout is torch.strided \
                and t.data_ptr() == 0:
            # a CPU tensor over no memory: what `torch.from_dlpack` makes of the capsule of a
            # fake tensor (`to_dlpack` exports its null data pointer); reading it would crash
            raise ValueError("a CPU tensor met inside the mode has no data (a DLPack capsule "
                             "of a fake tensor, `from_dlpack(to_dlpack(fake))`?)")
        fake = self.convert(t, (), None)
        if fake.constant is None and t.numel() <= CONSTANT_NUMEL and t.device.type == "cpu":
            fake.constant = t.detach().clone()
        return fake

    def _make(self, t: torch.Tensor, dynamic_dims: tuple[int, ...], source: object,
              dynamic_strides: tuple[int, ...] = (), sizes_of: FakeTensor | None = None
              ) -> FakeTensor:
        # An inference tensor's fake is one, and a normal tensor's fake is not, wherever made.
        with torch.inference_mode(t.is_inference()):
            fake = self._make_layout(t, dynamic_dims, source, dynamic_strides, sizes_of)
            if t.requires_grad and not fake.requires_grad:  # a view made a leaf that needs grad
                fake.requires_grad_(True)
        if isinstance(t, torch.nn.Parameter):
            # (in inference mode for an inference tensor's: outside it, a Parameter of an
            # inference fake that requires grad cannot be made)
            with self.mode, torch.inference_mode(t.is_inference()):
                fake = torch.nn.Parameter(fake, requires_grad=t.requires_grad)
        elif not t.is_leaf and fake.is_leaf:  # (also a view not rebuilt: symbolic strides)
            fake = self._non_leaf(fake, t)
        if t.is_leaf and t.grad is not None:  # only leaves keep a .grad
            # (its dims as dynamic as the tensor's, as PyTorch's converter gives a grad its
            # tensor's symbolic context: a static grad, assigned, specialised them to its sizes;
            # they are the tensor's own symbols, not new ones with no source, which nobody
            # could guard: dynamo's shape guards raised TypeError on them)
            same = t.grad.shape == t.shape
            grad = self.convert(t.grad, dynamic_dims if same else (), None,
                                sizes_of=fake if same else None)
            try:
                fake.grad = grad
            except RuntimeError as error:  # its `.data` replaced since the grad was made
                raise ValueError(f"cannot fake a tensor whose .grad no longer matches it "
                                 f"(its .data was replaced after the grad was made): "
                                 f"{error}") from None
        return fake

    def _make_layout(
        self, t: torch.Tensor, dynamic_dims: tuple[int, ...], source: object,
        dynamic_strides: tuple[int, ...] = (), sizes_of: FakeTensor | None = None
    ) -> FakeTensor:
        sizes, strides, offset = self._symbolic_layout(t, dynamic_dims, source, dynamic_strides,
                                                       sizes_of)
        symbolic_strides = any(isinstance(s, torch.SymInt) for s in strides)
        mode = self.mode
        if t._is_view() and not symbolic_strides:
            # Rebuild the view from the fake of its base, through autograd, so that the fake
            # shares the base's storage and knows it is a view of it.
            base = self.convert(t._base, (), None)
            active = torch._C._get_dispatch_mode(torch._C._TorchDispatchModeKey.FAKE) is mode
            # (with grad only for a view autograd tracks: one made under no_grad is a leaf)
            with torch.set_grad_enabled(t.requires_grad and not t.is_leaf), \
                    nullcontext() if active else mode:
                return _view_of(base, t, sizes, strides, offset)
        storage_numel = t.untyped_storage().nbytes() // t.element_size()
        static = not (dynamic_dims or symbolic_strides)
        if not static and t.numel() > 0:  # it grows with the symbols
            storage_numel = offset + sum((n - 1) * s for n, s in zip(sizes, strides)) + 1
        elem = self._in_shared_storage(t, sizes, strides, offset) if static else None
        if elem is None:
            with torch._C._DisableTorchDispatch():
                storage = torch.empty(storage_numel, dtype=t.dtype, device="meta")
                elem = storage.as_strided(sizes, strides, offset)
        fake = FakeTensor(mode, elem, t.device)
        if static:
            self._remember_storage(t, fake)
        torch._C._set_conj(fake, t.is_conj())
        torch._C._set_neg(fake, t.is_neg())
        return fake

    def _in_shared_storage(self, t: torch.Tensor, sizes, strides, offset) -> torch.Tensor | None:
        """A meta tensor of `t`'s layout in the fake storage of a tensor converted before that
        shares `t`'s real storage without being its base (None if there is none)."""
        if t.device.type == "meta":  # (meta storages have no identity worth keeping)
            return None
        found = self._storages.get(t.untyped_storage()._cdata)
        other = found[1]() if found is not None and not found[0].expired() else None
        if other is None:
            return None
        with torch._C._DisableTorchDispatch():
            storage = torch.Tensor._make_subclass(torch.Tensor, other).untyped_storage()
            try:
                return torch.empty(0, dtype=t.dtype, device="meta").set_(
                    storage, offset, sizes, strides)
            except RuntimeError:  # (the fake storage is shorter: another dtype's rounding)
                return None

    def _remember_storage(self, t: torch.Tensor, fake: FakeTensor) -> None:
        if t.device.type == "meta":
            return
        if len(self._storages) >= self._prune_at:  # (amortised: not a pass per conversion)
            self._storages = {k: v for k, v in self._storages.items()
                              if not v[0].expired() and v[1]() is not None}
            self._prune_at = 2 * len(self._storages) + 64
        key = t.untyped_storage()._cdata
        if key not in self._storages:
            self._storages[key] = (StorageWeakRef(t.untyped_storage()), weakref.ref(fake))

    def _non_leaf(self, leaf: FakeTensor, t: torch.Tensor) -> FakeTensor:
        """A non-leaf with `leaf`'s layout and its conjugate and negative bits (a clone
        resolves them, an `as_strided` view of a new storage has none: `x.conj()[1:]` that
        requires grad read `is_conj()` False under dynamic sizes)."""
        fake = self._non_leaf_layout(leaf, t)
        torch._C._set_conj(fake, leaf.is_conj())
        torch._C._set_neg(fake, leaf.is_neg())
        return fake

    def _non_leaf_layout(self, leaf: FakeTensor, t: torch.Tensor) -> FakeTensor:
        """A non-leaf with `leaf`'s layout (the clone of a leaf), when a clone keeps it."""
        with torch.enable_grad(), self.mode:
            out = leaf.clone(memory_format=torch.preserve_format)
        # Compared as expressions: no guard for symbolic strides.
        same = str((out.stride(), out.storage_offset())) == str((leaf.stride(), leaf.storage_offset()))
        if same:
            return out
        # A layout a clone does not keep (a storage offset: `x[1:]` under dynamic sizes; a
        # stride of 0): a view with that layout of a storage autograd tracks, a leaf where
        # `t`'s base is one (an in-place op on it raises as eager's does), else a non-leaf (a
        # leaf here failed dynamo's `is_leaf` guard for the very input it was made for)
        numel = leaf.untyped_storage().nbytes() // leaf.element_size()
        with torch.enable_grad(), self.mode:
            root = torch.empty(numel, dtype=leaf.dtype, device=leaf.device, requires_grad=True)
            if not (t._is_view() and t._base.is_leaf):
                root = root.clone()
            return root.as_strided(leaf.shape, leaf.stride(), leaf.storage_offset())

    def _symbolic_layout(self, t: torch.Tensor, dynamic_dims: tuple[int, ...], source: object,
                         dynamic_strides: tuple[int, ...] = (),
                         sizes_of: FakeTensor | None = None):
        """Sizes (SymInts at `dynamic_dims`), strides (SymInts at `dynamic_strides`, else in
        terms of the symbols where dense), and the storage offset."""
        sizes: list[int | torch.SymInt] = list(t.shape)
        strides: list[int | torch.SymInt] = list(t.stride())
        if not dynamic_dims and not dynamic_strides:
            return sizes, strides, t.storage_offset()
        env = self.mode.shape_env
        for d in dynamic_dims:
            d = d % t.dim()  # (in range: checked by `convert`)
            sizes[d] = (sizes_of.shape[d] if sizes_of is not None
                        else env.create_symint(t.shape[d], SizeOrigin(source, "size", d)))
        own = {d % t.dim() for d in dynamic_strides}
        # A dense stride is written as the product of sizes inside it, so that it follows the
        # sizes when they change.
        dense_here, dense = dense_dims(t), 1
        for d in _by_stride(t):
            if d in own:
                strides[d] = env.create_symint(t.stride(d), SizeOrigin(source, "stride", d))
            elif d in dense_here:
                strides[d] = dense
            dense = strides[d] * sizes[d]
        return sizes, strides, t.storage_offset()


def _by_stride(t: torch.Tensor) -> list[int]:
    """The dims from the smallest stride up (the smaller size first among equal strides)."""
    return sorted(range(t.dim()), key=lambda d: (t.stride(d), t.shape[d]))


def dense_dims(t: torch.Tensor) -> set[int]:
    """The dims whose strides are the products of the sizes inside them (walking from the
    smallest stride up): a fake of symbolic sizes writes those strides in terms of the size
    symbols, so they follow the sizes."""
    dims, dense = set(), 1
    for d in _by_stride(t):
        if t.stride(d) == dense:
            dims.add(d)
        dense = t.stride(d) * t.shape[d]
    return dims


def _view_of(base: FakeTensor, t: torch.Tensor, sizes, strides, offset) -> FakeTensor:
    """The view of `base` with `t`'s layout, dtype and conjugate/negative bits (run in the mode).
    A view of another dtype (`c.real`, `view_as_real(c)`, `x.view(torch.int32)`) is taken of the
    base's whole storage reinterpreted as that dtype."""
    if base.dtype != t.dtype:
        if base.is_conj():  # the bits are no part of the bytes: drop them to reinterpret
            base = base.conj()
        if base.is_neg():
            base = torch._neg_view(base)
        storage_numel = base.untyped_storage().nbytes() // base.element_size()
        base = base.as_strided((storage_numel,), (1,), 0).view(t.dtype)
    fake = torch.as_strided(base, sizes, strides, offset)
    if fake.is_conj() != t.is_conj():
        fake = fake.conj()
    if fake.is_neg() != t.is_neg():
        fake = torch._neg_view(fake)
    return fake


def _sparse_meta(t: torch.Tensor) -> torch.Tensor:
    """A sparse meta tensor of `t`'s layout, sizes, dtype and number of stored elements."""
    def meta(part: torch.Tensor) -> torch.Tensor:
        return torch.empty_strided(part.shape, part.stride(), dtype=part.dtype, device="meta")

    with torch._C._DisableTorchDispatch(), torch.sparse.check_sparse_tensor_invariants(False):
        if t.layout is torch.sparse_coo:
            return torch.ops.aten._sparse_coo_tensor_with_dims_and_tensors(
                t.sparse_dim(), t.dense_dim(), t.shape, meta(t._indices()), meta(t._values()),
                dtype=t.dtype, layout=t.layout, device="meta", is_coalesced=t.is_coalesced(),
            )
        compressed, plain = (
            (t.crow_indices(), t.col_indices()) if t.layout in (torch.sparse_csr, torch.sparse_bsr)
            else (t.ccol_indices(), t.row_indices())
        )
        return torch.ops.aten._sparse_compressed_tensor_unsafe(
            meta(compressed), meta(plain), meta(t.values()), t.shape, dtype=t.dtype,
            layout=t.layout, device="meta",
        )
