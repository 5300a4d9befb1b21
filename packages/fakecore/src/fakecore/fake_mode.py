"""FakeTensorMode: run PyTorch ops on fake tensors by running their meta kernels.

Under the mode (a TorchDispatchMode), every aten op that reaches the dispatcher comes to
`__torch_dispatch__`. There, real tensors are refused (or converted), ops whose output size
depends on data get unbacked sizes (see `data_dependent`), and every other op runs for real on
the fake tensors themselves with the Meta dispatch key switched on: PyTorch's own meta kernel
computes the output's sizes, strides and aliasing, symbolically when sizes are SymInts. The
outputs are then dressed as FakeTensors of the right device. An op with no meta kernel runs
through its decomposition from `torch._decomp`, so that its pieces are faked one by one.
"""

from __future__ import annotations

import functools
import re
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, nullcontext
from typing import Any

import torch
from torch._decomp import decomposition_table, meta_table
from torch._dispatch.python import enable_python_dispatcher
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten, tree_map, tree_unflatten
from torch.utils.weak import WeakIdKeyDictionary

from fakecore import tensor_iterator
from fakecore.conversion import CONSTANT_NUMEL, TensorConverter
from fakecore.data_dependent import (
    DATA_DEPENDENT_OPS,
    FakeImplCtx,
    broadcast_slices_of_one,
    memoized,
)
from fakecore.dispatch_cache import DispatchCache
from fakecore.eager_checks import (
    check_as_cpu_kernel,
    check_in_place_broadcast,
    is_element_wise,
    writes_self_only,
)
from fakecore.errors import MixedRealFakeError, UnsupportedFakeOpError
from fakecore.fake_tensor import METADATA_QUERIES, FakeTensor
from fakecore.shape_env import ShapeEnv

aten = torch.ops.aten
_LIFT_OPS = (aten.lift_fresh.default, aten.lift_fresh_copy.default)
# Pointwise ops whose CPU kernels allocate their output with `empty_like(self)` (a dense input's
# strides kept as they are, size-1 dims' too), not by TensorIterator's rules (so do the ops
# taking a `memory_format`: `clone`, `_to_copy`, the `*_like` factories), and ops whose output
# is contiguous whatever their inputs' layout (`masked_fill`: a contiguous clone of self expanded
# to the mask's shape; `mvlgamma`: a sum over a new last dim; `pow.Scalar`: allocated by size).
_LIKE_SELF_OPS = frozenset({aten.hardtanh.default, aten.fill.Scalar, aten.fill.Tensor})
_CONTIGUOUS_OPS = frozenset({aten.masked_fill.Scalar, aten.masked_fill.Tensor,
                             aten.mvlgamma.default, aten.pow.Scalar})
# Pointwise ops whose CPU TensorIterator takes `self` before `grad_output`, the other order.
_SELF_FIRST_OPS = frozenset({aten.threshold_backward.default})
# Quantized tensors carry a scale and zero point no fake tensor holds; the meta kernel of
# `quantize_per_tensor` even answers a float32 tensor, on which `dequantize()` is the identity.
_QUANTIZED_DTYPES = frozenset({torch.quint8, torch.qint8, torch.qint32, torch.quint4x2,
                               torch.quint2x4})
# Foreach ops whose fourth argument is a CPU tensor of scalars (an optimizer's step sizes), and
# their overloads that take a list of numbers there.
_SCALAR_LIST_SIBLINGS = {
    getattr(packet, tensor_overload): getattr(packet, list_overload)
    for packet in (aten._foreach_addcdiv, aten._foreach_addcdiv_, aten._foreach_addcmul,
                   aten._foreach_addcmul_)
    for tensor_overload, list_overload in (("Tensor", "ScalarList"), ("Tensor_out", "ScalarList_out"))
    if hasattr(packet, tensor_overload)
}

_AD_INPLACE_OR_VIEW = torch._C.DispatchKey.ADInplaceOrView


class FakeTensorMode(TorchDispatchMode):
    """A context in which ops on FakeTensors produce FakeTensors, computing nothing.

    `shape_env`: where symbolic sizes live; without one, sizes are static and data-dependent
    ops raise. `allow_non_fake_inputs`: convert real tensors that meet fake ones, instead of
    raising (constants made inside a traced function are always converted).
    """

    def __init__(
        self, shape_env: ShapeEnv | None = None, *, allow_non_fake_inputs: bool = False
    ) -> None:
        super().__init__()
        # Registering as the dispatcher's "fake" infra mode makes factory functions skip device
        # initialisation (a fake cuda tensor on a machine with no GPU) and keeps this mode below
        # user modes (a tracer's proxy mode sees ops first).
        self._mode_key = torch._C._TorchDispatchModeKey.FAKE
        self.shape_env = shape_env
        self.allow_non_fake_inputs = allow_non_fake_inputs
        self.in_kernel = False
        self._decomposing: set[Any] = set()
        self._cache = DispatchCache()
        self._dispatcher_contexts: list[Any] = []
        self._converter = TensorConverter(self)
        self._valued = WeakIdKeyDictionary()  # the fakes with known data, as keys

    @classmethod
    def is_infra_mode(cls) -> bool:
        return True

    def __enter__(self) -> FakeTensorMode:
        # With symbolic sizes, composite ops must decompose through their Python decompositions
        # (which take SymInts), not their C++ ones (some of which need concrete sizes).
        self._dispatcher_contexts.append(
            enable_python_dispatcher() if self.shape_env is not None else nullcontext()
        )
        self._dispatcher_contexts[-1].__enter__()
        return super().__enter__()

    def __exit__(self, *exc: object) -> None:
        super().__exit__(*exc)
        self._dispatcher_contexts.pop().__exit__(*exc)

    def from_tensor(
        self, t: torch.Tensor, *, dynamic_dims: Sequence[int] = (),
        dynamic_strides: Sequence[int] = (), source: object = None
    ) -> FakeTensor:
        """The fake of real tensor `t` (the same fake every time for the same `t`).

        Dims in `dynamic_dims` get symbolic sizes in `shape_env`, and dims in `dynamic_strides`
        symbolic strides of their own (a slice of a growing tensor, `ids[:, -1:]`); `source` is
        recorded as the symbols' origin, for whoever turns the ShapeEnv's guards into checks on
        inputs.
        """
        return self._converter.convert(t, tuple(dynamic_dims), source, tuple(dynamic_strides))

    def remember_value_of(self, t: FakeTensor) -> None:
        """Note that `t` holds something known about its data (a constant, a memoized unbacked
        count or item), to be forgotten when its storage is written (through any alias)."""
        self._valued[t] = None

    def bind_item(self, t: FakeTensor, value: Any) -> None:
        """`t.item()` is `value` (a symbol of this mode's ShapeEnv: a number the frontend reads
        from a 0-d tensor input), until anything writes to `t`."""
        memoized(self, t)["item"] = value

    @contextmanager
    def unbacked_reads_forgotten(self, tensors: Sequence[Any]) -> Iterator[None]:
        """Inside the block, the reads of these fakes' data memoized as unbacked symbols
        (`n.item()` as `u0`) are forgotten; they are restored after. A second trace of a graph
        on the same fakes (a backend's) then reads new symbols and records their checks,
        rather than reading `u0` as what the first trace's checks taught the ShapeEnv
        (`torch._check(u0 == 2)`: 2, with nothing left to check)."""
        unbacked = self.shape_env.unbacked_producers.keys() if self.shape_env else set()
        forgotten = []
        for t in tensors:
            memo = t.__dict__.get("_unbacked_memo") if isinstance(t, FakeTensor) else None
            for key, read in list((memo or {}).items()):
                node = getattr(read, "node", None)
                if node is not None and getattr(node, "_expr", node.expr).free_symbols & unbacked:
                    forgotten.append((memo, key, memo.pop(key)))
        try:
            yield
        finally:
            for memo, key, read in forgotten:
                memo[key] = read

    def _forget_values_written_by(self, func, args, kwargs, flat: list[Any]) -> None:
        written = written_tensors(func, args, kwargs) or [
            t for t in flat if isinstance(t, FakeTensor)]
        storages = {_storage_key(t) for t in written if isinstance(t, FakeTensor)}
        for t in [t for t in self._valued.keys() if _storage_key(t) in storages]:
            del self._valued[t]
            t.__dict__.pop("_constant", None)
            t.__dict__.pop("_unbacked_memo", None)

    @contextmanager
    def kernel_invocation(self) -> Iterator[None]:
        """Run the enclosed ops on fake tensors as the meta tensors they are."""
        previous = self.in_kernel
        self.in_kernel = True
        try:
            with torch._C._DisableTorchDispatch(), torch._C._PreserveDispatchKeyGuard():
                torch._C._set_meta_in_tls_dispatch_include(True)
                yield
        finally:
            self.in_kernel = previous

    # Higher-order operators come to `__torch_dispatch__` too (`_higher_order`), not as a
    # NotImplementedError that tells the user to set this flag.
    supports_higher_order_operators = True

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if isinstance(func, torch._ops.HigherOrderOperator):
            return self._higher_order(func, args, kwargs)
        answer = METADATA_QUERIES.get(func)
        if answer is not None:
            return answer(args[0])
        if not torch._C._dispatch_tls_is_dispatch_key_excluded(_AD_INPLACE_OR_VIEW):
            # Called from C++ with autograd still on (the detach of an output autograd saves):
            # the ops faking it must not record autograd views of their inputs, or the output
            # and its saved detach hold each other out of the garbage collector's sight.
            with torch._C._AutoDispatchBelowADInplaceOrView():
                return self.__torch_dispatch__(func, types, args, kwargs)
        flat, spec = tree_flatten((args, kwargs))
        if any(_other_subclass(type(t)) for t in flat if isinstance(t, torch.Tensor)):
            # a tensor subclass with a dispatch of its own (`MaskedTensor`, asked its layout):
            # it unwraps itself and calls the op again on its inner (fake) tensors, as
            # PyTorch's FakeTensorMode leaves it to
            return NotImplemented
        flat = self._adopt_inputs(func, flat)
        args, kwargs = tree_unflatten(flat, spec)
        if func is aten.lift_fresh.default:
            return args[0]  # a constant made in the traced code, now a fake that remembers it
        if _numbers_only(func, flat):
            # `torch.div(12, 4)`: an op that takes Python numbers as tensors, given numbers
            # only, computes a value known now (as PyTorch's own fake mode does): it stays a
            # constant, so that `.item()` of it (a size given to `view`) is that number, not
            # an unbacked symbol.
            with torch._C._DisableTorchDispatch():
                real = func(*args, **kwargs)
            if (isinstance(real, torch.Tensor) and real.device.type == "cpu"
                    and real.numel() <= CONSTANT_NUMEL):
                return self._converter.convert_constant(real)
        if func._schema.is_mutable and self._valued:
            # Data known about a tensor is stale once its storage is written, through any view.
            self._forget_values_written_by(func, args, kwargs, flat)
        handler = DATA_DEPENDENT_OPS.get(func)
        if handler is not None:
            out = handler(self, func, args, kwargs)
            if out is not NotImplemented:
                return out
        if self.shape_env is not None and torch.Tag.pointwise in func.tags \
                and not func._schema.is_mutable:  # (an in-place op keeps its output's sizes)
            args = broadcast_slices_of_one(self, args)
            flat = tree_flatten((args, kwargs))[0]
        fake_impl = None if func.namespace in ("aten", "prims") else \
            torch._library.simple_registry.singleton.find(func.name()).fake_impl.kernel
        if fake_impl is not None:
            # A custom op's `register_fake`, run on the fakes as PyTorch's mode runs it: its
            # `torch.library.get_ctx().new_dynamic_size()` is an unbacked symbol of ours. Not
            # cached (as in PyTorch): each call's data-dependent size is a symbol of its own.
            with torch._library.fake_impl.set_ctx_getter(lambda: FakeImplCtx(self, func)), self:
                return fake_impl(*args, **kwargs)
        # (inside a decomposition the layout corrections are skipped and an op met again in its
        # own decomposition runs its meta kernel: such results are keyed apart)
        key = self._cache.key(func, args, kwargs,
                              (bool(self._decomposing), func in self._decomposing))
        if key is not None:
            out = self._cache.lookup(self, key, args)
            if out is not None:
                return out
        if func is aten.convolution.default:
            _check_transposed_channels(args, kwargs)
        if func in _IN_PLACE_WITHOUT_CAST_CHECK:
            _check_in_place_result_type(args)
        if func._schema.is_mutable and (torch.Tag.pointwise in func.tags
                                        or func is aten.copy_.default):
            _check_no_partial_overlap(args[0], flat)
        if is_element_wise(func):
            self._check_as_eager(func, args, kwargs, flat)
        if any(isinstance(a, torch.dtype) and a in _QUANTIZED_DTYPES for a in flat):
            raise UnsupportedFakeOpError(func, "it makes a quantized tensor, which fake tensors "
                                               "cannot represent")
        out = self._run_meta_kernel(func, args, kwargs, flat)
        if func is aten.convolution.default:
            out = self._conv_layout(args, kwargs, out)
        elif torch.Tag.pointwise in func.tags or func in _UNTAGGED_POINTWISE:
            out = self._pointwise_layout(func, args, kwargs, out)
        elif func in _VIEW_OPS:
            out = self._view_layout(args, out)
        elif func in _LAID_OUT_IN_SUGGESTED_FORMAT:
            out = self._suggested_format_layout(func, args, out)
        if key is not None:
            self._cache.store(key, out, args)
        else:
            _propagate_constants(func, args, kwargs, flat, out)
        return out

    def _check_as_eager(self, func, args, kwargs, flat: list[Any]) -> None:
        """Raise what eager raises for an element-wise op whose meta kernel accepts the call:
        an in-place result that does not fit `self`, and (for CPU tensors, whose kernels the
        probe runs) a dtype or number the kernel refuses (see `eager_checks`)."""
        if writes_self_only(func):
            check_in_place_broadcast(args, flat)
        fakes = [t for t in flat if isinstance(t, FakeTensor)]
        if fakes and all(t.fake_device.type == "cpu" and t.layout is torch.strided
                         for t in fakes):
            check_as_cpu_kernel(func, args, kwargs, flat)

    def _higher_order(self, func, args, kwargs):
        """A higher-order operator with a fake function of torch's (`register_fake` of
        `torch._higher_order_ops`: the `triton_kernel_wrapper_mutation` that a `triton_op`'s
        fake impl, its own body, reaches through `wrap_triton`) runs it in this mode; it may
        write any tensor it is given. Any other is an `UnsupportedFakeOpError` naming it."""
        utils = sys.modules.get("torch._higher_order_ops.utils")  # imported by whoever made it
        fake_fn = getattr(utils, "registered_hop_fake_fns", {}).get(func)
        if fake_fn is None or func.name() not in _FAKED_HIGHER_ORDER_OPS:
            raise UnsupportedFakeOpError(
                func.name(), "a higher-order operator (a function of functions), which fake "
                "tensors do not run")
        flat = tree_flatten((args, kwargs))[0]
        if self._valued:
            self._forget_values_written_by(func, (), {}, flat)
        with self:
            return fake_fn(*args, **kwargs)

    def _conv_layout(self, args, kwargs, out):
        """A convolution's output laid out as the real kernel lays it out. The meta kernel
        cannot know (it has no device), but the CPU and CUDA kernels follow their inputs (a
        channels-last input gives a channels-last output): ask torch which memory format the
        backend the fake device would pick produces. Contiguous inputs give a contiguous output
        on every backend: then nothing is asked. Choosing a backend decides sizes (mkldnn's
        `batch * channels * height * width > 20480`, nnpack's `batch >= 16`), so on the CPU,
        where those choices do not change the layout, it is not made (`_cpu_conv_backend`)."""
        bound = _conv_arguments(args, kwargs)
        x, weight = bound["input"], bound["weight"]
        if x.is_contiguous() and weight.is_contiguous() and not any(
                t.dim() in (4, 5) and torch._prims_common.suggest_memory_format(t)
                is not torch.contiguous_format for t in (x, weight)):
            # (a 1x1 weight with channels-last strides, `(O, I, 1, 1)` with `(I, 1, I, I)`, is
            # contiguous too, but suggests channels-last, and the kernel follows it)
            return out
        with self:
            if x.dim() == 3:
                # The kernels see a 1d convolution as a 2d one of height 1, of a contiguous
                # input (a permuted weight can still make the output channels-last).
                x, weight = x.contiguous().unsqueeze(2), weight.unsqueeze(2)
            backend = _cpu_conv_backend(x, weight, bound["transposed"])
            if backend is None:
                backend = torch._C._select_conv_backend(*bound.values(), None)
            layout = torch._C._conv_determine_backend_memory_format(x, weight, backend)
            if layout is torch.channels_last and out.dim() == 3:
                out = out.unsqueeze(2).clone(memory_format=layout).squeeze(2)
            elif layout is torch.channels_last and out.dim() == 4 or (
                    layout is torch.channels_last_3d and out.dim() == 5):
                out = out.to(memory_format=layout)
        return out

    def _view_layout(self, args, out):
        """A `view` with symbolic sizes as the C++ kernel lays it out: its Python reference
        (`_reshape_view_helper`, run for symbolic sizes) can keep another stride on a size-1 dim
        than c10's `computeStride` gives it (`(1, C, H*W)` with strides `(C*H*W, 1, C)` viewed as
        `(1, C, H, W)`: `C*H*W` where the kernel gives `C`), and with it another suggested
        memory format. Static sizes run the C++ meta kernel already."""
        self_ = args[0]
        if not isinstance(out, FakeTensor) or not isinstance(self_, FakeTensor) \
                or self_.layout is not torch.strided or not _has_size_one(out.shape):
            return out
        symbols = _symbols([out, self_])
        if not symbols or self._decomposing or symbols & self.shape_env.unbacked_producers.keys():
            # (inside a decomposition the reference's strides are kept, as for pointwise ops;
            # data-dependent sizes: the reference decides size-obliviously)
            return out
        strides = tensor_iterator.view_strides(tuple(self_.shape), tuple(self_.stride()),
                                               tuple(out.shape))
        corrected = None if strides is None else _size_one_corrected(out, strides)
        if corrected is None:
            return out
        with self:
            return aten.as_strided.default(self_, out.shape, corrected, out.storage_offset())

    def _suggested_format_layout(self, func, args, out):
        """The first output of an op whose CPU kernel lays it out densely in the memory format its
        input suggests (batch norm, max_unpool2d, channel_shuffle), laid out so: their
        decompositions and meta kernels follow the input's strides (a transposed batch norm
        input) or drop channels-last. Batch norm asks first whether its tensors are all stored
        densely: then an input contiguous in both formats (`(N, C, 1, 1)`) is contiguous for it.
        An empty input's channel shuffle is the input itself, an alias keeping its strides."""
        x, first = args[0], out[0] if isinstance(out, tuple) else out
        if not isinstance(x, FakeTensor) or x.fake_device.type != "cpu" \
                or x.layout is not torch.strided:
            return out
        shape = first.shape
        if func in _CHANNEL_SHUFFLES and x.numel() == 0:
            strides = x.stride()
        elif _memory_format_laid_out_by(func, args) is torch.contiguous_format:
            strides = torch._prims_common.make_contiguous_strides_for(shape)
        else:
            strides = torch._prims_common.make_channels_last_strides_for(shape)
        if tuple(first.stride()) == tuple(strides):
            return out
        with self:
            laid_out = aten.empty_strided.default(shape, strides, dtype=first.dtype,
                                                  device=first.device)
        return (laid_out, *out[1:]) if isinstance(out, tuple) else laid_out

    def _pointwise_layout(self, func, args, kwargs, out):
        """A pointwise op's new output laid out as the CPU kernel's TensorIterator lays it out,
        for static CPU fakes: the meta kernels (Python references) can give a size-1 dim
        another stride (`tensor_iterator`), and with it another suggested memory format. A
        reference built of several ops (copysign's `where(signbit(b), -abs(a), abs(a))`) can
        order the dims by another operand first than the kernel's one TensorIterator, which
        follows its first input: given a transposed and a contiguous input, it gets every
        stride wrong. Such ops' outputs take all their strides from the rules."""
        schema = func._schema
        composed = func in decomposition_table
        if schema.is_mutable or len(schema.returns) != 1 or not isinstance(out, FakeTensor) \
                or not (composed or _has_size_one(out.shape)) or func.namespace != "aten" \
                or any(a.name == "memory_format" for a in schema.arguments):
            # (prims, such as the `convert_element_type` of `_to_copy`'s reference, and ops
            # laying their output out as asked, keep the layout the reference gave them)
            return out
        # (a single-op reference's strides are corrected at size-1 dims only; with symbolic
        # sizes the layout rules' comparisons are decided as the kernel decides them,
        # recording guards)
        # (a `.Scalar` overload with a `.Tensor` sibling runs that one on its `other` wrapped
        # in a 0-d tensor: an operand, unlike `clamp_min`'s or `pow.Tensor_Scalar`'s number,
        # or `lerp.Scalar`'s weight, `alpha`)
        wrapped = func._overloadname == "Scalar" and hasattr(func.overloadpacket, "Tensor")
        operands = []
        for i, argument in enumerate(schema.arguments):
            value = args[i] if i < len(args) else kwargs.get(argument.name)
            if isinstance(argument.type, torch.TensorType) or (
                    isinstance(argument.type, torch.OptionalType)
                    and isinstance(argument.type.getElementType(), torch.TensorType)
                    and value is not None) or (
                    wrapped and argument.name == "other"
                    and isinstance(argument.type, torch.NumberType)):
                operands.append(value)
        if func in _SELF_FIRST_OPS:
            operands.reverse()
        if not all(isinstance(t, FakeTensor) and t.fake_device.type == "cpu"
                   and t.layout is torch.strided or isinstance(t, (int, float, bool, complex))
                   for t in operands) or not any(isinstance(t, FakeTensor) for t in operands):
            return out
        symbols = _symbols([out, *operands]) if self.shape_env is not None else set()
        if symbols and (self._decomposing
                        or symbols & self.shape_env.unbacked_producers.keys()):
            # (inside a decomposition, run for symbolic sizes, the references' strides are
            # kept: the decomposition builds its result's layout on them, as group norm's does;
            # data-dependent sizes: no guard on them)
            return out
        if out.layout is not torch.strided or any(
                out.untyped_storage()._cdata == t.untyped_storage()._cdata
                for t in operands if isinstance(t, FakeTensor)):
            return out
        shape = list(torch.broadcast_shapes(*(t.shape for t in operands
                                              if isinstance(t, FakeTensor))))
        if list(out.shape) != shape:
            return out
        if func in _LIKE_SELF_OPS:  # `empty_like(self)`: a dense input's strides as they are
            self_ = operands[0]
            if list(self_.shape) != shape or not tensor_iterator.non_overlapping_and_dense(
                    tuple(self_.shape), tuple(self_.stride())):
                return out
            strides = tuple(self_.stride())
        elif func in _CONTIGUOUS_OPS:
            strides = tuple(torch._prims_common.make_contiguous_strides_for(shape))
        else:
            strides = tensor_iterator.output_strides(shape, operands)
        if composed and func not in _LIKE_SELF_OPS:
            corrected = None if all(map(_same, out.stride(), strides)) else list(strides)
        else:
            corrected = _size_one_corrected(out, strides)
        if corrected is None:
            return out
        with self:
            return torch.empty_strided(out.shape, corrected, dtype=out.dtype, device=out.device)

    def _adopt_inputs(self, func, flat: list[Any]) -> list[Any]:
        """Check every tensor input is ours; convert real ones where that is allowed."""
        has_fake = False
        for t in flat:
            if isinstance(t, FakeTensor):
                if t.fake_mode is not self:
                    raise RuntimeError(f"{func} got a FakeTensor of another FakeTensorMode")
                has_fake = True
        real = [isinstance(t, torch.Tensor) and not isinstance(t, FakeTensor) for t in flat]
        if not any(real):
            return flat
        if func in _LIFT_OPS or self.allow_non_fake_inputs or not has_fake:
            return [self._converter.convert_constant(t) if r else t for t, r in zip(flat, real)]
        raise MixedRealFakeError(func)

    def _run_meta_kernel(self, func, args, kwargs, flat: list[Any]):
        if func in _SHIFTS and isinstance(args[0], FakeTensor) and args[0].dtype == torch.bool:
            # The CPU kernel shifts a bool tensor as its result dtype (`b >> 1` is int64, as
            # `b.long() >> 1`), where the meta kernel refuses bool
            dtype = torch.result_type(args[0], args[1])
            if dtype != torch.bool:
                with self:
                    args = (args[0].to(dtype), *args[1:])
                flat = tree_flatten((args, kwargs))[0]
        sibling = _SCALAR_LIST_SIBLINGS.get(func)
        if sibling is not None:
            # Its meta kernel reads the values of the `scalars` tensor, which the outputs' sizes
            # do not depend on: fake the overload that takes them as a list instead.
            func, args = sibling, (*args[:3], [1.0] * args[3].numel(), *args[4:])
            flat = tree_flatten((args, kwargs))[0]
        if func is aten.native_channel_shuffle.default and args[0].fake_device.type == "cpu":
            # On the CPU it runs channel_shuffle's kernel, not its composite one (which views
            # the input and so refuses a transposed one that the CPU kernel takes).
            func = aten.channel_shuffle.default
        if _is_composite_implicit(func):
            # Its kernel is made of other ops: run those through the mode one by one.
            with self:
                out = func.decompose(*args, **kwargs)
            if out is not NotImplemented:
                return out
        if any(isinstance(t, FakeTensor) and t.layout is not torch.strided for t in flat):
            if func in _SPARSE_ACCESSORS:  # they read the sparse tensor's fields, not its data
                with self.kernel_invocation():  # restores the dispatch keys it changes
                    torch._C._set_meta_in_tls_dispatch_include(False)
                    out = func(*args, **kwargs)
                return tree_map(lambda t: self._dress(t, args[0].fake_device), out)
            # Meta kernels are dense kernels: other ops on sparse inputs run the real sparse CPU
            # kernel on zeros.
            return self._run_on_zeros(func, args, kwargs, "a sparse input")
        if func in _BATCH_NORMS and _can_run_on_zeros(func, flat) \
                and _batch_norm_decomposition_raises(func, args, kwargs):
            return self._run_on_zeros(func, args, kwargs, "")
        symbols = _symbols(flat) if self.shape_env is not None else set()
        if (
            func in decomposition_table
            and func not in meta_table
            and func not in self._decomposing
            and (symbols or _is_aten_decomposition(func) or func in _REF_FIRST)
            and not symbols & (self.shape_env.unbacked_producers.keys() if symbols else set())
        ):
            # C++ meta kernels mostly take concrete sizes, where decompositions take SymInts.
            # With static sizes too, the decompositions PyTorch keeps for AOT autograd go first:
            # they match the real kernels where some meta kernels do not (batch norm's saved
            # statistics in eval mode). A decomposition that comes back to its own op runs that
            # op's meta kernel. With data-dependent sizes the C++ kernel goes first: it decides
            # size questions with guard_or_false, where a decomposition's Python `if` would need
            # the data.
            return self._decompose(func, args, kwargs, "")
        if func in _INEXACT_META_STRIDES and _can_run_on_zeros(func, flat):
            return self._run_on_zeros(func, args, kwargs, "")
        if func in _DEVICE_AWARE_META and any(
                isinstance(t, FakeTensor) and t.fake_device.type == "cpu" for t in flat):
            # Its Python meta function gives the CPU kernel's auxiliary outputs only when it
            # sees a CPU tensor (on meta tensors it answers for CUDA: `_embedding_bag`'s
            # `offset2bag` of one entry per index where the CPU sum kernel gives none, its
            # `max_indices` empty where the CPU kernel gives one per bag): run it in the mode,
            # where the fakes show their devices.
            with self:
                out = meta_table[func](*args, **kwargs)
                if func is aten._embedding_bag_forward_only.default:
                    out = _cpu_forward_only_sizes(out, *args, **kwargs)
                return out
        if hasattr(func, "prim_meta_impl"):
            # A prim's meta function builds its outputs with ordinary factory calls: run it in
            # the mode, where inputs show their fake devices (a CPU scalar stays a CPU scalar).
            with self:
                return func.prim_meta_impl(*args, **kwargs)
        device = _output_device(func, flat, kwargs)
        meta = torch.device("meta")
        meta_args = tuple(meta if isinstance(a, torch.device) else a for a in args)
        meta_kwargs = {**kwargs, "device": meta} if "device" in kwargs else kwargs
        # With static sizes, the C++ meta kernel even under a ShapeEnv: the Python dispatcher,
        # on for symbolic sizes, would run the op's Python reference instead, which can give a
        # size-1 dim another stride than the CPU kernel (a view of `(1, C, HW)` as `(1, C, H,
        # W)`, a channels-last tensor divided by a number), so that a real tensor's suggested
        # memory format is not the one the trace saw (group norm's input was not made
        # contiguous in the aten graph, and the CPU kernel raised).
        # (A size whose symbol a guard has since replaced by a number, `s0` after `Eq(s0, 8)`,
        # is still a SymInt: C++ kernels cannot read it with the Python dispatcher off.)
        python_dispatcher = (torch._C._DisablePythonDispatcher()
                             if self.shape_env is not None and not symbols
                             and not _any_symbolic(flat) else nullcontext())
        try:
            with self.kernel_invocation(), python_dispatcher:
                out = func(*meta_args, **meta_kwargs)
        except NotImplementedError as error:
            return self._decompose(func, args, kwargs, str(error))
        except RuntimeError as error:
            if func is aten.view_copy.default and "view size is not compatible" in str(error):
                # The meta kernel views, where the real one copies what it cannot view
                with self:
                    return aten.clone.default(aten.reshape.default(*args, **kwargs),
                                              memory_format=torch.contiguous_format)
            if not (self.shape_env is not None and _CONCRETE_ONLY.search(str(error))
                    and func not in self._decomposing and _has_decomposition(func)):
                raise
            # Somewhere inside, a C++ kernel needed concrete sizes: fake the op as its pieces.
            return self._decompose(func, args, kwargs, str(error))
        return tree_map(lambda t: self._dress(t, device), out)

    def _decompose(self, func, args, kwargs, why: str):
        """Run `func` as the ops of its decomposition (or Python meta), each faked in turn."""
        decomposition = decomposition_table.get(func) or meta_table.get(func)
        self._decomposing.add(func)
        try:
            with self:
                out = NotImplemented
                if decomposition is not None:
                    out = decomposition(*args, **kwargs)
                elif _is_composite_implicit(func):
                    out = func.decompose(*args, **kwargs)
        finally:
            self._decomposing.discard(func)
        if out is NotImplemented:
            out = self._run_on_zeros(func, args, kwargs, why)
        return out

    def _run_on_zeros(self, func, args, kwargs, why: str):
        """Run the real CPU kernel on zero-filled tensors of the same metadata, and fake its
        outputs: the last resort for an op with no meta kernel and no decomposition, and the
        exact answer for ops whose meta kernels get strides wrong."""
        flat = tree_flatten((args, kwargs))[0]
        if not _can_run_on_zeros(func, flat):
            raise UnsupportedFakeOpError(func, f"no meta kernel and no decomposition ({why})")
        if func is aten._coalesce.default:
            # (zeros have no duplicate indices: the stored elements left after summing them
            # depend on the indices' values)
            raise UnsupportedFakeOpError(func, "its number of stored elements depends on the "
                                         "data")
        fakes = [a for a in flat if isinstance(a, FakeTensor)]
        zeros = {id(t): _zeros_like(t) for t in fakes}
        real_args, real_kwargs = tree_map(
            lambda a: zeros[id(a)] if isinstance(a, FakeTensor) else a, (args, kwargs)
        )
        with torch._C._DisableTorchDispatch():
            out = func(*real_args, **real_kwargs)
        if not any(t.layout is not torch.strided for t in fakes) and any(
                isinstance(t, torch.Tensor) and t.layout is not torch.strided
                for t in tree_flatten(out)[0]):
            # a sparse result of dense inputs (`to_sparse`): its number of stored elements
            # depends on the data, and zeros would say none (PyTorch's mode says none: a wrong
            # `_nnz()`, `values()`)
            raise UnsupportedFakeOpError(func, "its sparse output's size depends on the data")
        back = {id(z): t for t, z in ((t, zeros[id(t)]) for t in fakes)}

        def fake(value: Any) -> Any:
            if not isinstance(value, torch.Tensor):
                return value
            if id(value) in back:  # an input returned as is (an in-place op)
                return back[id(value)]
            return self._converter.convert(value, (), None)

        return tree_map(fake, out)

    def _dress(self, t: Any, device: torch.device) -> Any:
        if isinstance(t, torch.Tensor) and not isinstance(t, FakeTensor):
            return FakeTensor(self, t, device)
        return t

    def __repr__(self) -> str:
        return f"FakeTensorMode(shape_env={self.shape_env!r})"


# The higher-order operators whose torch fake function asks nothing of the mode (it makes
# its outputs with ordinary ops): a Triton kernel's launch, which writes its arguments.
_FAKED_HIGHER_ORDER_OPS = frozenset({"triton_kernel_wrapper_mutation",
                                     "triton_kernel_wrapper_functional"})


def written_tensors(func, args, kwargs) -> list[Any]:
    """The tensor arguments that `func`'s schema says it writes to."""
    written = []
    if isinstance(func, torch._ops.HigherOrderOperator):
        return written  # no schema: every tensor it is given
    for i, arg in enumerate(func._schema.arguments):
        if arg.alias_info is None or not arg.alias_info.is_write:
            continue
        value = args[i] if i < len(args) else kwargs.get(arg.name)
        written.extend(value if isinstance(value, (list, tuple)) else [value])
    return written


def _storage_key(t: FakeTensor) -> int:
    return t.untyped_storage()._cdata if t.layout is torch.strided else id(t)


def _output_device(func, flat: list[Any], kwargs: dict[str, Any]) -> torch.device:
    """Where an op's outputs live: its `device` argument, else its inputs' (non-CPU first).
    Inputs on two devices are an error, as in eager, except 0-d CPU tensors (scalars) and the
    inputs of ops made to cross devices."""
    explicit = kwargs.get("device")
    if explicit is None:
        explicit = next((a for a in flat if isinstance(a, torch.device)), None)
    if explicit is not None:
        device = torch.device(explicit)
        indexed = device.type not in ("cpu", "meta") and device.index is None
        return torch.device(device.type, 0) if indexed else device
    fakes = [t for t in flat if isinstance(t, FakeTensor)]
    devices = list(dict.fromkeys(
        t.fake_device for t in fakes if not (t.fake_device.type == "cpu" and t.dim() == 0)))
    if len(devices) > 1 and func not in _CROSS_DEVICE_OPS:
        first, second = devices[:2]
        raise RuntimeError(
            f"{func}: expected all tensors to be on the same device, but found at least two "
            f"devices, {first} and {second}"
        )
    for t in fakes:
        if t.fake_device.type != "cpu":
            return t.fake_device
    return fakes[0].fake_device if fakes else torch.device("cpu")


# Ops whose inputs may live on different devices in eager (a copy between devices, indices on
# the CPU for a tensor elsewhere).
_CROSS_DEVICE_OPS = frozenset({
    aten.copy_.default, aten.copy.default, aten._copy_from.default,
    aten._copy_from_and_resize.default, aten._foreach_copy_.default, aten.index.Tensor,
    aten.index_put.default, aten.index_put_.default, aten._index_put_impl_.default,
})


# How a C++ kernel says that it cannot take symbolic sizes.
_CONCRETE_ONLY = re.compile("expected to contain only concrete integers|symbolic sizes/strides")


def _has_decomposition(func) -> bool:
    return func in decomposition_table or func in meta_table or _is_composite_implicit(func)


# Ops whose meta kernel cannot know what the CPU kernel does and whose decomposition asks the
# (fake) device: layer norm's saved statistics are float32 on CUDA, the input's dtype on CPU.
_REF_FIRST = frozenset({aten.native_layer_norm.default})
_SHIFTS = frozenset({
    aten.__lshift__.Scalar, aten.__lshift__.Tensor, aten.__rshift__.Scalar,
    aten.__rshift__.Tensor, aten.bitwise_left_shift.Tensor,
    aten.bitwise_left_shift.Tensor_Scalar, aten.bitwise_right_shift.Tensor,
    aten.bitwise_right_shift.Tensor_Scalar,
})
_VIEW_OPS = frozenset({aten.view.default, aten._unsafe_view.default})
# Pointwise on the CPU (one TensorIterator over their tensors in order), though not tagged so.
_UNTAGGED_POINTWISE = frozenset({
    aten.floor_divide.default, aten.floor_divide.Scalar, aten.hardtanh_backward.default,
    aten.elu_backward.default, aten.hardswish_backward.default, aten.softplus_backward.default,
    aten.hardsigmoid_backward.default,
})
_BATCH_NORMS = frozenset({
    aten.native_batch_norm.default, aten._native_batch_norm_legit.default,
    aten._native_batch_norm_legit.no_stats, aten._native_batch_norm_legit_no_training.default,
    aten._native_batch_norm_legit_functional.default, aten._batch_norm_with_update.default,
    aten._batch_norm_with_update_functional.default,
})
_BATCH_NORMS_WITH_UPDATE = frozenset({
    aten._batch_norm_with_update.default, aten._batch_norm_with_update_functional.default,
})


def _batch_norm_decomposition_raises(func, args, kwargs) -> bool:
    """Whether torch's decomposition of batch norm `func` raises where the CPU kernel runs (on
    static sizes): `_batch_norm_with_update*` without a weight or bias (it asks which backend
    would run, and that binding refuses None), and training with running statistics over one
    value per channel (the unbiased variance's `n / (n - 1)` in Python floats: the kernel's is
    inf)."""
    bound = {**dict(zip((a.name for a in func._schema.arguments), args)), **kwargs}
    if func in _BATCH_NORMS_WITH_UPDATE and (bound["weight"] is None or bound["bias"] is None):
        return True
    x = bound["input"]
    training = func in _BATCH_NORMS_WITH_UPDATE or bound.get("training", False)
    return (training and bound.get("running_mean") is not None and x.dim() >= 2
            and x.numel() == x.shape[1])


_CHANNEL_SHUFFLES = frozenset({aten.channel_shuffle.default, aten.native_channel_shuffle.default})
_LAID_OUT_IN_SUGGESTED_FORMAT = _BATCH_NORMS | _CHANNEL_SHUFFLES | {aten.max_unpool2d.default}


def _memory_format_laid_out_by(func, args) -> torch.memory_format:
    """The memory format in which the CPU kernel of `func` (one of
    `_LAID_OUT_IN_SUGGESTED_FORMAT`) lays out its first output for input `args[0]`."""
    x = args[0]
    if func in _BATCH_NORMS and all(t.is_contiguous() for t in args[1:5]
                                    if isinstance(t, torch.Tensor)):
        for memory_format in (torch.contiguous_format, torch.channels_last,
                              torch.channels_last_3d):
            if x.is_contiguous(memory_format=memory_format):
                return memory_format
    return torch._prims_common.suggest_memory_format(x)


@functools.cache
def _is_aten_decomposition(func) -> bool:
    """Whether `func`'s decomposition is one of torch._decomp.decompositions (not a _refs one)."""
    return decomposition_table[func].__module__ == "torch._decomp.decompositions"


@functools.cache
def _other_subclass(cls: type) -> bool:
    """Whether tensors of class `cls` are a subclass other than ours that overrides dispatch."""
    return cls is not torch.Tensor and not issubclass(cls, FakeTensor) and getattr(
        cls, "__torch_dispatch__", None) is not torch.Tensor.__torch_dispatch__


@functools.cache
def _is_composite_implicit(func) -> bool:
    return torch._C._dispatch_has_kernel_for_dispatch_key(func.name(), "CompositeImplicitAutograd")


# Ops whose meta kernels give other metadata than the CPU kernels: with static CPU fakes they
# run on zeros instead, which is exact. Found by the OpInfo sweep (`_fft_*`, `linalg_*`), and by
# comparing with eager: the padding and pixel-shuffle meta functions keep channels-last only when
# they see a CPU input (the kernel runs on meta tensors here, so they return contiguous ones),
# `nonzero_static`'s gives column-major strides where the CPU kernel gives row-major ones, and
# `_embedding_bag*`'s gives empty `max_indices` for modes other than "max" where the CPU kernel
# gives one entry per bag. `triu`'s and `tril`'s keep a contiguous input's strides, where the CPU
# kernels' results are laid out afresh: a size-1 dim's stride differs (a transposed `(7, 1)`),
# and a later op that picks its memory format by the strides (max_pool2d) picks another one.
_INEXACT_META_STRIDES = frozenset({
    aten._fft_r2c.default, aten._fft_c2r.default, aten._fft_c2c.default,
    aten.linalg_eig.default, aten._linalg_svd.default, aten.linalg_qr.default,
    aten.reflection_pad1d.default, aten.reflection_pad2d.default, aten.reflection_pad3d.default,
    aten.replication_pad1d.default, aten.replication_pad2d.default,
    aten.replication_pad3d.default, aten.pixel_shuffle.default, aten.pixel_unshuffle.default,
    aten.nonzero_static.default, aten._embedding_bag_forward_only.default,
    aten._embedding_bag.default, aten.triu.default, aten.tril.default,
})


# Ops whose Python meta functions answer by the device they see (symbolic sizes: the static
# ones run on zeros above).
_DEVICE_AWARE_META = frozenset({
    aten._embedding_bag_forward_only.default, aten._embedding_bag.default,
})


def _cpu_forward_only_sizes(out, weight, indices, offsets, scale_grad_by_freq=False, mode=0,
                            sparse=False, per_sample_weights=None, include_last_offset=False,
                            padding_idx=-1):
    """`_embedding_bag_forward_only`'s outputs as the CPU kernel sizes them, where its meta
    function does not (with `include_last_offset`: `bag_size` of `offsets`' length for mode
    "sum" and of one entry per bag for "mean" and "max", and "sum"'s `max_indices` of
    `offsets`' length)."""
    output, offset2bag, bag_size, max_indices = out
    if include_last_offset:
        bags = offsets.shape[0] - 1
        bag_size = offsets.new_empty(offsets.shape[0] if mode == 0 else bags)
        if mode == 0:
            max_indices = offsets.new_empty(offsets.shape[0])
    return output, offset2bag, bag_size, max_indices


# Ops that read a sparse tensor's fields (its sizes of parts, its index and value tensors, which
# are meta tensors in a fake): they run as they are.
_SPARSE_ACCESSORS = frozenset({
    aten._nnz.default, aten.sparse_dim.default, aten.dense_dim.default, aten._dimI.default,
    aten._dimV.default, aten.is_coalesced.default, aten._indices.default, aten._values.default,
    aten.indices.default, aten.values.default, aten.crow_indices.default,
    aten.col_indices.default, aten.ccol_indices.default, aten.row_indices.default,
})


def _can_run_on_zeros(func, flat: list[Any]) -> bool:
    """PyTorch's own ops (whose tags say when output sizes depend on the data: a custom op's
    do not) on static CPU fakes only, and never an op whose output sizes depend on the data."""
    return (
        func.namespace in ("aten", "prims")
        and all(t.fake_device.type == "cpu" for t in flat if isinstance(t, FakeTensor))
        and not _symbols(flat)
        and torch.Tag.dynamic_output_shape not in func.tags
        and torch.Tag.data_dependent_output not in func.tags
    )


def _zeros_like(t: FakeTensor) -> torch.Tensor:
    """A real CPU tensor of `t`'s sizes, strides and dtype (a sparse one: layout, block size
    and dense dims), filled with zeros."""
    with torch._C._DisableTorchDispatch():
        if t.layout is torch.strided:
            return torch.zeros_like(torch.empty_strided(t.shape, t.stride(), dtype=t.dtype))
        dense = torch.zeros(t.shape, dtype=t.dtype)
        if t.layout is torch.sparse_coo:  # (uncoalesced where `t` is: ops assert it)
            return dense.to_sparse(t.sparse_dim())._coalesced_(t.is_coalesced())
        blocksize = tuple(t.values().shape[1:3]) if t.layout in _BLOCKED else None
        return dense.to_sparse(layout=t.layout, blocksize=blocksize, dense_dim=t.dense_dim())


_BLOCKED = (torch.sparse_bsr, torch.sparse_bsc)


def _has_size_one(shape: Any) -> bool:
    """Whether a dim of `shape` is (statically) of size 1."""
    return any(type(n) is int and n == 1 for n in shape)


def _size_one_corrected(out: torch.Tensor, strides: Any) -> list | None:
    """`out`'s strides with those of its size-1 dims taken from `strides` (the kernel's), the
    other dims keeping theirs (and the expressions the reference gave them); None where that
    changes nothing, or where `strides` differs on another dim too: only size-1 dims are
    corrected (ops that do not lay their outputs out as the rules say, `clone` to a memory
    format, differ on others)."""
    given = out.stride()
    if all(map(_same, given, strides)) or any(
            not (type(size) is int and size == 1) and not _same(g, w)
            for size, g, w in zip(out.shape, given, strides)):
        return None
    return [w if type(size) is int and size == 1 else g
            for size, g, w in zip(out.shape, given, strides)]


def _same(a: Any, b: Any) -> bool:
    """Whether two sizes or strides have the same value at the symbols' hints (no guard is
    recorded: this only tells which dims a layout correction would change)."""
    hint = lambda v: v.node.hint if isinstance(v, torch.SymInt) else v  # noqa: E731
    return hint(a) == hint(b)


def _any_symbolic(flat: list[Any]) -> bool:
    """Whether an argument is a symbolic number, or a tensor argument has a size, stride or
    offset that is a SymInt (even one whose expression is now a number)."""
    for a in flat:
        if isinstance(a, (torch.SymInt, torch.SymFloat, torch.SymBool)):
            return True
        if isinstance(a, FakeTensor):
            layout = (*a.stride(), a.storage_offset()) if a.layout is torch.strided else ()
            if any(isinstance(s, torch.SymInt) for s in (*a.shape, *layout)):
                return True
    return False


def _symbols(flat: list[Any]) -> set:
    """The free symbols of the arguments: in SymInts and in tensors' sizes, strides, offsets."""
    found: set = set()
    for a in flat:
        if isinstance(a, (torch.SymInt, torch.SymFloat, torch.SymBool)):
            found |= a.node.expr.free_symbols
        elif isinstance(a, FakeTensor):
            layout = (*a.stride(), a.storage_offset()) if a.layout is torch.strided else ()
            for s in (*a.shape, *layout):
                if isinstance(s, torch.SymInt):
                    found |= s.node.expr.free_symbols
    return found


def _conv_arguments(args: tuple, kwargs: dict) -> dict[str, Any]:
    """`aten.convolution`'s arguments by name, in the schema's order."""
    names = [a.name for a in aten.convolution.default._schema.arguments]
    return {n: kwargs[n] if n in kwargs else args[i] for i, n in enumerate(names)}


def _cpu_conv_backend(x, weight, transposed: bool) -> torch._C._ConvBackend | None:
    """A CPU backend that lays out a 2d convolution's output as the one torch would pick
    does, chosen without looking at sizes; None where sizes can change the layout. With
    mkldnn on, a 2d convolution runs on mkldnn or on the slow (thnn) kernels, and both give a
    channels-last output exactly when the input or the weight suggests channels-last (mkldnn
    takes no float64, which the slow kernels lay out the same way). Nnpack, which gives a
    contiguous one, is only picked with mkldnn off. A 3d convolution's layout does depend on
    sizes (mkldnn follows its inputs, the slow kernels do not), but a contiguous one comes out
    of every backend when mkldnn would give one (neither input nor weight suggests
    channels-last, or float64, which mkldnn does not take)."""
    if x.device.type != "cpu" or not torch.backends.mkldnn.is_available() or \
            not torch.backends.mkldnn.enabled or x.is_complex() or x.numel() == 0:
        return None
    if x.dim() == 4:
        return (torch._C._ConvBackend.SlowTranspose2d if transposed
                else torch._C._ConvBackend.Slow2d)
    if x.dim() == 5 and torch._C._conv_determine_backend_memory_format(
            x, weight, torch._C._ConvBackend.Mkldnn) is torch.contiguous_format:
        return torch._C._ConvBackend.Slow3d
    return None


def _check_transposed_channels(args: tuple, kwargs: dict) -> None:
    """The check eager makes and the meta kernel of a transposed convolution leaves out: the
    input has as many channels as the weight's first dim (else the trace would invent an
    output size for a program eager rejects)."""
    bound = _conv_arguments(args, kwargs)
    x, weight = bound["input"], bound["weight"]
    if bound["transposed"] and x.dim() == weight.dim() and x.shape[1] != weight.shape[0]:
        raise RuntimeError(
            f"Given transposed=1, weight of size {list(weight.shape)}, expected input"
            f"{list(x.shape)} to have {weight.shape[0]} channels, but got {x.shape[1]} "
            "channels instead")


# In-place ops whose meta kernels write any result type into `self`, where eager refuses one
# that cannot be cast to it
_IN_PLACE_WITHOUT_CAST_CHECK = frozenset({
    aten.mul_.Tensor, aten.mul_.Scalar, aten.sub_.Tensor, aten.sub_.Scalar,
})


def _check_in_place_result_type(args: tuple) -> None:
    """The check eager makes and the meta kernels of `mul_` and `sub_` leave out: the
    promoted type of the operands can be cast to the dtype of the tensor written into
    (`int_tensor.mul_(1.5)` raises; else a trace would compute in float and cast back)."""
    written, other = args[:2]
    result = torch._prims_common.elementwise_dtypes(
        written, other,
        type_promotion_kind=torch._prims_common.ELEMENTWISE_TYPE_PROMOTION_KIND.DEFAULT)[1]
    if not torch.can_cast(result, written.dtype):
        raise RuntimeError(f"result type {result} can't be cast to the desired output type "
                           f"{written.dtype}")


def _check_no_partial_overlap(written: Any, flat: list[Any]) -> None:
    """The check eager's element-wise kernels make and their meta kernels leave out: a tensor
    read may not share only some of its memory with the one written (`x[1:].add_(x[:-1])`,
    `x.mul_(x[0])`, `x.add_(x.t())`). As TensorIterator's `assert_no_partial_overlap`:
    decided for dense tensors of static sizes only (eager's "too hard" otherwise), by the
    bytes they span."""
    if not _dense_and_static(written):
        return
    for read in flat:
        if read is written or not _dense_and_static(read) \
                or not torch._C._is_alias_of(read, written):
            continue
        (begin, end), (read_begin, read_end) = _byte_span(written), _byte_span(read)
        if (begin, end) == (read_begin, read_end):
            partial = read.stride() != written.stride()
        else:
            partial = read_begin < end and begin < read_end
        if partial:
            raise RuntimeError(
                "unsupported operation: some elements of the input tensor and the written-to "
                "tensor refer to a single memory location. Please clone() the tensor before "
                "performing the operation.")


def _dense_and_static(t: Any) -> bool:
    return (isinstance(t, torch.Tensor) and t.layout is torch.strided and not _symbols([t])
            and t.numel() != 0
            and tensor_iterator.non_overlapping_and_dense(tuple(t.shape), t.stride()))


def _byte_span(t: torch.Tensor) -> tuple[int, int]:
    begin = t.storage_offset() * t.element_size()
    return begin, begin + t.numel() * t.element_size()


def _numbers_only(func, flat: list[Any]) -> bool:
    """Whether `func` is an op that binds Python numbers to its tensor arguments (`div`,
    `add`, ...) called with plain numbers only: no tensor, no symbol."""
    return (
        not any(isinstance(a, (torch.Tensor, torch.SymInt, torch.SymFloat, torch.SymBool))
                for a in flat)
        and isinstance(func, torch._ops.OpOverload)
        and not func._schema.is_mutable
        and torch.Tag.nondeterministic_seeded not in func.tags
        and torch._C._should_allow_numbers_as_tensors(func.name().split("::")[-1].split(".")[0])
    )


def _propagate_constants(func, args, kwargs, flat: list[Any], out: Any) -> None:
    """When every tensor input holds a known value, compute the outputs' values for real too."""
    fakes = [t for t in flat if isinstance(t, FakeTensor)]
    outs = [t for t in tree_flatten(out)[0] if isinstance(t, FakeTensor)]
    if (
        not fakes
        or any(t.constant is None for t in fakes)
        or func._schema.is_mutable
        or torch.Tag.nondeterministic_seeded in func.tags
        # Symbolic sizes first: asking a symbolic numel for its size would record a guard.
        or any(isinstance(a, (torch.SymInt, torch.SymFloat, torch.SymBool)) for a in flat)
        or _symbols(outs)
        or any(t.numel() > CONSTANT_NUMEL or t.fake_device.type != "cpu" for t in outs)
    ):
        return
    real_args, real_kwargs = tree_map(
        lambda a: a.constant if isinstance(a, FakeTensor) else a, (args, kwargs)
    )
    with torch._C._DisableTorchDispatch():
        real_out = func(*real_args, **real_kwargs)
    for fake, real in zip(tree_flatten(out)[0], tree_flatten(real_out)[0]):
        if isinstance(fake, FakeTensor) and isinstance(real, torch.Tensor):
            fake.constant = real
