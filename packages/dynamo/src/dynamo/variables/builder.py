"""Turning a real Python value from the frame into a tracker, with the guards that keep it valid.

`wrap(tx, value, source)` decides the tracker's kind by the value's type, and states what the
traced code may assume about the value on later calls: a tensor becomes a graph input with a
tensor-match guard; an int, a string, None become constants with an equality guard; a function,
a class or a module is guarded by identity; a list by its length, a dict by its keys, and their
elements in turn as they are read. A value with no source (made by the traced code itself, or
read from torch) needs no guard.
"""

from __future__ import annotations

import collections
import copy
import functools
import inspect
import logging
import math
import random
import re
import sys
import types
import typing
import weakref
from typing import TYPE_CHECKING, Any

import torch

from dynamo.exc import Unsupported
from dynamo.polyfills import POLYFILLS
from dynamo.sources import (
    PartialFlattensSource,
    SetItemsSource,
    described,
    module_named_by,
    partial_flattens,
)
from dynamo.variables.base import VariableTracker
from dynamo.variables.builtins import BuiltinVariable, class_override, is_builtin_callable
from dynamo.variables.constant import (
    ConstantVariable,
    LazyConstantVariable,
    is_literal,
    is_none,
    is_numpy_number,
    is_subclassed_literal,
)
from dynamo.variables.containers import (
    DequeVariable,
    DictVariable,
    ListVariable,
    NamedTupleVariable,
    ObjectKey,
    OpaqueIteratorVariable,
    OpaqueValueVariable,
    RangeVariable,
    SetVariable,
    SizeVariable,
    TupleVariable,
    holds_nan,
    key_value,
    tuple_fields,
)
from dynamo.variables.contexts import (
    CONTEXTS,
    GRAD_MODES,
    ExitVariable,
    GradModeExit,
    GradModeVariable,
    StateContextVariable,
)
from dynamo.variables.functions import (
    TORCH_DISABLED,
    BoundMethodVariable,
    CachedFunctionVariable,
    ExcInfoVariable,
    NumpyFunctionVariable,
    OpaqueFunctionVariable,
    PartialVariable,
    PolyfilledFunctionVariable,
    UserFunctionVariable,
    UserMethodVariable,
    is_numpy_foldable,
)
from dynamo.variables.objects import (
    INTROSPECTION,
    BaseMethodVariable,
    CompiledVariable,
    IntrospectionVariable,
    NNModuleVariable,
    PythonModuleVariable,
    TorchFunctionVariable,
    UserClassVariable,
    WeakRefVariable,
    function_apply,
)
from dynamo.variables.user_objects import (
    LOG_LEVELS,
    CopyVariable,
    LoggingCallVariable,
    UserObjectVariable,
)
from guards import (
    AttrSource,
    DictContains,
    DictKeys,
    DictKeySource,
    Equals,
    GetItemSource,
    Identity,
    Length,
    LocalSource,
    SameObject,
    TypeMatch,
    by_identity,
)

if TYPE_CHECKING:
    from dynamo.interpreter import Translator

# Iterators that a resume function may be handed (a loop's, at a graph break inside it).
_ITERATORS = tuple(type(it) for it in (iter([]), iter(()), iter(range(0)), iter(""), iter({}),
                                        iter({}.values()), iter({}.items()), iter(set()),
                                        enumerate([]), zip(), map(abs, []), reversed([])))

# The class of a 3.12 `type X = ...` alias (None before 3.12).
_TYPE_ALIAS = getattr(typing, "TypeAliasType", None)

# torch's autocast and inference-mode context classes
STATE_CONTEXTS = tuple(CONTEXTS.values())

# Values Equals can guard: compared by value, with their exact type.
_EQUALS_TYPES = (type(None), bool, int, float, str, bytes, torch.dtype, torch.device)


def wrap(tx: Translator, value: Any, source: Any) -> VariableTracker:
    """The tracker of a real value reached through `source` (None: no guard needed)."""
    output = tx.output
    if source is not None:
        known = output.wrapped.get(source)
        if known is not None:
            return known
        alias = output.containers.get(id(value))
        if alias is not None:  # the same container or object under another name
            output.add_guard(SameObject(alias[1].source, source))
            output.wrapped[source] = alias[1]
            return alias[1]
    tracker = _wrap(tx, value, source)
    if source is not None:
        output.wrapped[source] = tracker
        if type(value) in (list, dict, set) or type(tracker) is UserObjectVariable:
            output.containers[id(value)] = (value, tracker)
    return tracker


def _guard(tx: Translator, source: Any, make: Any, *args: Any) -> None:
    """Guard `make(source, *args)`, for a value that has a source (others need no guard)."""
    if source is not None:
        tx.output.add_guard(make(source, *args))


def _changing_items(output: Any, source: Any, value: tuple) -> bool:
    """Whether an int or float of the tuple was seen to change between calls."""
    return source is not None and any(GetItemSource(source, i) in output.dynamic_numbers
                                      for i in range(len(value)))


def _child(source: Any, kind: Any, key: Any) -> Any:
    """The source `kind(source, key)` (an attribute, an item), or None with no source."""
    return kind(source, key) if source is not None else None


def _wrap(tx: Translator, value: Any, source: Any) -> VariableTracker:
    output = tx.output
    if class_override(type(value)) is not None:
        # It claims another class (`mock.Mock(spec=torch.Tensor)`, a proxy): the isinstance()
        # tests below would believe it; it is an object of its own type, asked as Python asks it
        _guard(tx, source, TypeMatch, type(value))
        return UserObjectVariable(value, source)
    if isinstance(value, torch.Tensor):
        if not _plain_tensor_type(type(value)):
            raise Unsupported(f"{described(source)} is a {type(value).__qualname__}: a tensor "
                              "subclass (only plain tensors and Parameters are traced)")
        if torch._C._functorch.is_functorch_wrapped_tensor(value):
            # (one kept by a function a transform returned: `vjp`'s `vjp_fn`, a dead wrapper)
            raise Unsupported(f"{described(source)} is a tensor wrapped by a torch.func "
                              "transform (vmap, grad, vjp, ...): it is not traced")
        if source is None:
            return output.constant_tensor(value)
        return output.add_tensor_input(value, source)
    if type(value) is int and source is not None and (
            (output.symbolic_ints and isinstance(source, LocalSource))
            or source in output.dynamic_numbers):
        # a loop counter handed to a resume function, a step count; not the ints the resume
        # function reads from objects (a module's `self.num_heads`): those stay constants
        return output.add_int_input(value, source)
    if isinstance(value, _ITERATORS) and source is not None:
        _guard(tx, source, TypeMatch, type(value))
        return OpaqueIteratorVariable(value, source)
    if isinstance(value, (torch.SymInt, torch.SymFloat, torch.SymBool)):
        raise Unsupported("a SymInt from outside the trace")
    if type(value) in (tuple, torch.Size) and _changing_items(output, source, value):
        # a shape (or betas) a number of which was seen to change between calls: item by
        # item, as a list is, so that the number becomes a symbol (automatic dynamic)
        _guard(tx, source, TypeMatch, type(value))
        _guard(tx, source, Length, len(value))
        items = [wrap(tx, v, GetItemSource(source, i)) for i, v in enumerate(value)]
        return SizeVariable(items, source) if type(value) is torch.Size \
            else TupleVariable(items, source)
    if isinstance(value, torch.Size):
        _guard(tx, source, Equals, value)
        # (its source kept: returned or handed on, it is the caller's very object)
        return SizeVariable([ConstantVariable(v) for v in value], source)
    if type(value) is float and source in output.dynamic_numbers and math.isfinite(value) \
            and value != 0:  # (a zero's sign is only kept by an Equals guard)
        return output.add_float_input(value, source)  # a timestep, a temperature
    if type(value) in (float, int, str) and source is not None:
        # (an int of a list the trace only appends to or measures, a token id passed along,
        # the text of a message a graph break hands on to a `print`: read again from the
        # frame at each call, no recompilation for another value)
        _guard(tx, source, TypeMatch, type(value))
        return LazyConstantVariable(value, source, lambda: _guard(tx, source, Equals, value))
    if is_numpy_number(value) and value == value and (value != 0 or value.dtype.kind != "f"):
        # `np.float64(2.0)`, `np.int64(3)`: a constant, by type and value (Equals tells neither
        # a NaN nor a zero's sign of a numpy float)
        _guard(tx, source, Equals, value)
        return ConstantVariable(value, source)
    if is_numpy_foldable(value):  # `np.sqrt`, `np.float32`
        _guard(tx, source, Identity.of, value)
        return NumpyFunctionVariable(value, source)
    if is_subclassed_literal(value):  # an object of its own: its attributes and methods, traced
        _guard(tx, source, TypeMatch, type(value))
        return UserObjectVariable(value, source)
    if isinstance(value, _EQUALS_TYPES) or (
        isinstance(value, tuple) and type(value) is tuple and is_literal(value)
        and all(isinstance(v, _EQUALS_TYPES) for v in value)
    ):
        _guard(tx, source, Equals, value)
        return ConstantVariable(value, source)
    if isinstance(value, re.Pattern):  # immutable: its methods run for real on constants
        # (packaging's version parsing), their matches constants too
        _guard(tx, source, Identity.of, value)
        return ConstantVariable(value, source)
    if type(value) is _TYPE_ALIAS and output.symbolic_ints and isinstance(source, LocalSource):
        # a 3.12 `type X = ...` alias handed to a resume function (the frame makes it anew at
        # each call): by type, an object whose attributes are not constants of the trace
        _guard(tx, source, TypeMatch, type(value))
        return UserObjectVariable(value, source)
    if type(value).__module__ == "typing" and not isinstance(value, type | types.FunctionType):
        # `Optional`, `List[int]`: type annotations evaluated at run time, constants
        _guard(tx, source, Identity.of, value)
        return ConstantVariable(value, source)
    if type(value) is range and output.symbolic_ints and isinstance(source, LocalSource):
        # a range a loop of the frame iterates, handed to a resume function: its bounds are
        # int inputs, as a loop counter is, so another `n` needs no new compilation
        _guard(tx, source, TypeMatch, range)
        _guard(tx, AttrSource(source, "step"), Equals, value.step)
        return RangeVariable(output.add_int_input(value.start, AttrSource(source, "start")),
                             output.add_int_input(value.stop, AttrSource(source, "stop")),
                             value.step, source, value)
    if is_literal(value):  # ranges, slices, layouts, Ellipsis, enum members, complex numbers,
        # frozensets, tuples and named tuples of constants: by type and value, deep (an equal
        # tuple made anew for each call is the same constant)
        _guard(tx, source, Equals, value)
        return ConstantVariable(value, source)
    if isinstance(value, GRAD_MODES):
        # A grad-mode context object made outside the trace (a decorator's `with self:`).
        target = value.mode if isinstance(value, torch.set_grad_enabled) else \
            isinstance(value, torch.enable_grad)
        _guard(tx, source, TypeMatch, type(value))
        if isinstance(value, torch.set_grad_enabled):  # the mode it sets, and puts back
            _guard(tx, _child(source, AttrSource, "mode"), Equals, value.mode)
            _guard(tx, _child(source, AttrSource, "prev"), Equals, value.prev)
        initial = value.prev if isinstance(value, torch.set_grad_enabled) else \
            torch.is_grad_enabled()
        ctx = GradModeVariable(bool(target), initial)
        ctx.source = source
        return ctx
    if isinstance(value, types.MethodType) and isinstance(value.__self__, STATE_CONTEXTS) \
            and value.__name__ == "__exit__":
        # The `__exit__` of an autocast or inference-mode block that a graph break left open:
        # called for real
        _guard(tx, source, TypeMatch, types.MethodType)
        _guard(tx, _child(source, AttrSource, "__self__"), TypeMatch, type(value.__self__))
        return OpaqueFunctionVariable(value, source, "the end of a block that a graph break "
                                      "left open")
    if isinstance(value, STATE_CONTEXTS):  # made outside (a decorator's)
        _guard(tx, source, Identity.of, value)
        kind = CONTEXTS["autocast"] if isinstance(value, CONTEXTS["autocast"]) else type(value)
        return StateContextVariable(kind(*StateContextVariable.settings(value)))
    if isinstance(value, types.MethodType) and isinstance(value.__self__, STATE_CONTEXTS) \
            and value.__name__ == "clone":  # `self.clone` in inference_mode's decorator
        _guard(tx, source, TypeMatch, types.MethodType)
        return BoundMethodVariable(wrap(tx, value.__self__, _child(source, AttrSource,
                                                                   "__self__")), "clone")
    if isinstance(value, GradModeExit):  # a grad-mode block left open by a graph break
        _guard(tx, source, TypeMatch, GradModeExit)
        _guard(tx, _child(source, AttrSource, "initial"), Equals, value.initial)
        return ExitVariable(GradModeVariable(torch.is_grad_enabled(), value.initial))
    if isinstance(value, types.MethodType) and isinstance(value.__self__, GRAD_MODES) \
            and value.__name__ == "clone":  # `self.clone` in the grad-mode decorators
        _guard(tx, source, TypeMatch, types.MethodType)
        return BoundMethodVariable(wrap(tx, value.__self__, _child(source, AttrSource,
                                                                   "__self__")), "clone")
    from dynamo.frontend import CompiledFunction, OptimizedModule, _call_object

    if type(value) is functools.partial and value.func is _call_object:
        # `compile` of a callable object (its class's `__call__` compiled at the call): the
        # object itself, traced in the caller's graph (tracing `_call_object` traced our own
        # frontend: `compile` itself, at its first call)
        _guard(tx, source, Identity.of, value)
        inner = wrap(tx, value.args[0], _child(_child(source, AttrSource, "args"),
                                               GetItemSource, 0))
        return inner if source is None else CompiledVariable(value, source, inner)
    if isinstance(value, OptimizedModule) or type(value) is CompiledFunction:
        # compiled code called by compiled code (a compiled model in a compiled training
        # step): the module or function it wraps, traced in the caller's graph, as
        # torch.compile does (tracing our own frontend would break inside its logging)
        _guard(tx, source, Identity.of, value)
        if isinstance(value, OptimizedModule):
            inner = wrap(tx, value._orig_mod, _child(source, AttrSource, "_orig_mod"))
        else:
            inner = wrap(tx, value.fn, _child(source, AttrSource, "fn"))
            if value.bound_self is not None:
                inner = UserMethodVariable(inner, wrap(
                    tx, value.bound_self, _child(source, AttrSource, "bound_self")))
        return inner if source is None else CompiledVariable(value, source, inner)
    if isinstance(value, torch.nn.Module):
        _guard(tx, source, Identity.of, value)
        return NNModuleVariable(value, source)
    if isinstance(value, types.ModuleType):
        _guard(tx, source, Identity.of, value)
        return PythonModuleVariable(value, source)
    if isinstance(value, types.MethodType) and isinstance(value.__self__, type) and issubclass(
            value.__self__, torch.autograd.Function):
        _guard(tx, source, TypeMatch, types.MethodType)  # a custom Function's apply
        cls_source = _child(source, AttrSource, "__self__")
        _guard(tx, cls_source, Identity.of, value.__self__)
        return function_apply(tx, value.__self__, cls_source, source)
    if isinstance(value, functools._lru_cache_wrapper):
        # `@lru_cache` functions are inlined, cache aside (as torch.compile does): the same
        # result for code whose result depends only on its arguments
        _guard(tx, source, Identity.of, value)
        inner = wrap(tx, value.__wrapped__, _child(source, AttrSource, "__wrapped__"))
        return CachedFunctionVariable(value, inner, source)
    if isinstance(value, torch.jit.ScriptFunction):
        # `@torch.jit.script` / `torch.jit.trace` of a function: the Python function it was
        # made from (`_torchdynamo_inline`, which torch.jit keeps for torch.compile) is
        # inlined, as torch.compile does; at a graph break inside it the ScriptFunction itself
        # is called for real. As a graph node, fx's code named it `torch.jit.ScriptFunction(x)`
        # (its class: a TypeError, which the eager rerun hid) and aot_eager lowered it through
        # TorchScript's differentiable graph, on detached inputs: its outputs lost their grad
        _guard(tx, source, Identity.of, value)
        inline = getattr(value, "_torchdynamo_inline", None)
        if not isinstance(inline, types.FunctionType):
            return OpaqueFunctionVariable(value, source, what="a TorchScript function",
                                          name=getattr(value, "qualified_name", "ScriptFunction"))
        inner = wrap(tx, inline, _child(source, AttrSource, "_torchdynamo_inline"))
        return CachedFunctionVariable(value, inner, source)
    if callable(value) and _polyfill(value) is not None:  # itertools.chain, functools.reduce
        _guard(tx, source, Identity.of, value)
        # no source: the twin is ours, constant; as a value it is the original
        return PolyfilledFunctionVariable(_polyfill(value), value)
    if isinstance(value, torch._library.custom_ops.CustomOpDef):
        # `@torch.library.custom_op`: the graph calls the op it defines (fx names nodes after
        # their target's `__name__`, which a CustomOpDef lacks)
        _guard(tx, source, Identity.of, value)
        return TorchFunctionVariable(value._opoverload, source)
    if _is_torch_function(value) or _marked_allowed(value):
        _guard(tx, source, Identity.of, value)
        return TorchFunctionVariable(value, source)
    method = BaseMethodVariable.of(value)  # `object.__setattr__`, `dict.__setitem__`
    if method is not None and isinstance(value, (types.MethodWrapperType, types.MethodType)):
        # bound (`d.__setitem__`, or `MethodType(object.__setattr__, obj)` as codegen rebuilds
        # one, passed on at a break): a new object on every read, so guarded by what it calls
        # and by the object it is bound to, as `losses.append` is
        _guard(tx, source, TypeMatch, type(value))
        if isinstance(value, types.MethodType):
            _guard(tx, _child(source, AttrSource, "__func__"), Identity.of, value.__func__)
        else:
            _guard(tx, _child(source, AttrSource, "__name__"), Equals, value.__name__)
        method.obj = wrap(tx, value.__self__, _child(source, AttrSource, "__self__"))
        method.source = source
        return method
    if method is not None:
        _guard(tx, source, Identity.of, value)
        return method
    if value is copy.deepcopy or value is copy.copy:
        _guard(tx, source, Identity.of, value)
        return CopyVariable(deep=value is copy.deepcopy)
    if any(value is query for query in INTROSPECTION):
        _guard(tx, source, Identity.of, value)
        return IntrospectionVariable(value)
    if is_builtin_callable(value):
        _guard(tx, source, Identity.of, value)
        return BuiltinVariable(value)
    if isinstance(value, types.FunctionType):
        if source is not None and _made_per_call(value):
            # A function the code makes anew on each call (a `lambda` or nested `def` live at
            # a graph break): what it is, not which object (an identity guard recompiled the
            # resume function on every call): its code, globals and names, no attributes of
            # its own; defaults and closure cells are guarded when the trace reads them.
            _guard(tx, source, TypeMatch, types.FunctionType)
            for attr in ("__code__", "__globals__"):
                _guard(tx, AttrSource(source, attr), Identity.of, getattr(value, attr))
            _guard(tx, AttrSource(source, "__qualname__"), Equals, value.__qualname__)
            _guard(tx, AttrSource(source, "__dict__"), Length, 0)
            made = UserFunctionVariable(value, source)
            made.pin_identity = lambda: _guard(tx, source, Identity.of, value)
            return made
        _guard(tx, source, Identity.of, value)
        return UserFunctionVariable(value, source)
    if isinstance(value, (types.MethodType, types.BuiltinMethodType)) and \
            value.__self__ is random.random.__self__:
        # `random.seed`, `random.randint`: methods of the random module's one generator, whose
        # state the trace does not follow (its Python methods end in C, `getrandbits`)
        _guard(tx, source, TypeMatch, type(value))
        _guard(tx, _child(source, AttrSource, "__name__"), Equals, value.__name__)
        _guard(tx, _child(source, AttrSource, "__self__"), Identity.of, value.__self__)
        return OpaqueFunctionVariable(value, source, "which uses the random module's global "
                                      "generator state (not traced)",
                                      name=f"random.{value.__name__}")
    if isinstance(value, types.MethodType) and isinstance(value.__self__, logging.Logger) \
            and value.__func__ is getattr(logging.Logger, value.__name__, None) \
            and value.__name__ in LOG_LEVELS:
        # `log.info` loaded before its arguments broke the graph (`log.info("%f", t.item())`):
        # the resume function's stack holds the bound method, a logging call as the frame's is
        _guard(tx, source, TypeMatch, types.MethodType)
        _guard(tx, _child(source, AttrSource, "__func__"), Identity.of, value.__func__)
        logger = wrap(tx, value.__self__, _child(source, AttrSource, "__self__"))
        return LoggingCallVariable(logger, value.__name__)
    if isinstance(value, types.MethodType):
        _guard(tx, source, TypeMatch, types.MethodType)
        method = UserMethodVariable(
            wrap(tx, value.__func__, _child(source, AttrSource, "__func__")),
            wrap(tx, value.__self__, _child(source, AttrSource, "__self__")),
        )
        method.source = source
        return method
    if type(value) is weakref.ref and source is not None:  # an RNN's `_flat_weight_refs`
        _guard(tx, source, TypeMatch, weakref.ref)
        return WeakRefVariable(value, source)
    if type(value) is functools.partial:  # (a subclass may change what a call does)
        _guard(tx, source, TypeMatch, functools.partial)
        fn = wrap(tx, value.func, _child(source, AttrSource, "func"))
        args = wrap(tx, value.args, _child(source, AttrSource, "args")).items(tx)
        keywords = wrap(tx, value.keywords, _child(source, AttrSource, "keywords"))
        made = PartialVariable(fn, args, {}, source, keywords=keywords)
        # Python flattens a partial made of it into its parts only while it has no `__dict__`
        # at all (read from `__reduce__`: reading `__dict__` would make one); guarded, as
        # `p.tag = 1` after compiling changes that
        made.flattens = partial_flattens(value)
        if source is not None:
            tx.output.add_guard(Equals(PartialFlattensSource(source), made.flattens))
        return made
    if isinstance(value, type):
        _guard(tx, source, Identity.of, value)
        return UserClassVariable(value, source)
    if type(value) is list and source is not None:
        _guard(tx, source, TypeMatch, list)

        def length() -> int:
            if not measured:
                _guard(tx, source, Length, len(value))
                measured.append(True)
            return len(value)

        def read() -> list[VariableTracker]:
            length()
            return [wrap(tx, v, GetItemSource(source, i)) for i, v in enumerate(value)]

        def item(i: int) -> VariableTracker:
            length()
            return wrap(tx, value[i], GetItemSource(source, i))

        measured: list[bool] = []
        return ListVariable.of_frame(read, source, length, item)
    if type(value) in (tuple, list) or (isinstance(value, tuple) and hasattr(value, "_fields")):
        _guard(tx, source, TypeMatch, type(value))
        _guard(tx, source, Length, len(value))
        items = [wrap(tx, v, _child(source, GetItemSource, i)) for i, v in enumerate(value)]
        if isinstance(value, list):
            return ListVariable(items, source)
        if type(value) is tuple:
            return TupleVariable(items, source)
        return NamedTupleVariable(items, type(value), tuple_fields(value), source)
    if type(value) is collections.deque:
        _guard(tx, source, TypeMatch, collections.deque)
        _guard(tx, source, Length, len(value))
        _guard(tx, _child(source, AttrSource, "maxlen"), Equals, value.maxlen)
        return DequeVariable([wrap(tx, v, _child(source, GetItemSource, i))
                              for i, v in enumerate(value)], source, value.maxlen)
    if type(value) in (dict, collections.defaultdict):
        if not all(map(_dict_key_kind, value)):
            _guard(tx, source, TypeMatch, type(value))
            return OpaqueValueVariable(value, source, "a dict keyed by objects compared by value: "
                                       "only constant keys (str, int, tuples of them, ...) and "
                                       "objects compared by identity (tensors, modules, "
                                       "instances of classes without __eq__) are traced")
        _guard(tx, source, TypeMatch, type(value))

        def keys_of() -> tuple:
            keys = tuple(value)
            _guard(tx, source, DictKeys, keys)
            for i, k in enumerate(keys):  # (DictKeys holds any NaN; a dict finds one by identity)
                if holds_nan(k):
                    _guard(tx, _child(source, DictKeySource, i), Identity.of, k)
            # an object compared by identity, or a tuple holding one (`(module, "scale")`, its
            # items read from the key's source: the module traced as one, not a constant)
            return tuple(k if is_literal(k) else ObjectKey(k, functools.partial(
                wrap, tx, k, _child(source, DictKeySource, i))) for i, k in enumerate(keys))

        def has(k: Any) -> bool:
            present = key_value(k) in value
            _guard(tx, source, DictContains, key_value(k), present)
            return present

        made = DictVariable.of_frame(keys_of, source, lambda k: wrap(
            tx, value[key_value(k)], _child(source, GetItemSource, key_value(k))), has)
        if type(value) is collections.defaultdict:
            made.kind = collections.defaultdict
            factory = wrap(tx, value.default_factory,
                           _child(source, AttrSource, "default_factory"))
            made.default_factory = None if is_none(factory) else factory
        return made
    if type(value) in (set, frozenset) and all(is_literal(v) for v in value):
        _guard(tx, source, TypeMatch, type(value))
        if type(value) is frozenset:
            _guard(tx, source, Equals, value)
        else:  # by its contents (a set handed to a resume function, a set argument)
            _guard(tx, SetItemsSource(source) if source is not None else None, Equals,
                   tuple(value))
        return SetVariable(value, source)
    if isinstance(value, types.BuiltinMethodType) and (
            isinstance(value.__self__, torch.Tensor) or type(value.__self__) in (list, dict, set)
            or type(value.__self__) is frozenset and all(map(is_literal, value.__self__))):
        # `x.add`, `losses.append`, passed on at a break: the method of the object it is bound to
        # (guarded as that object is), not one method object (a new one every call);
        # `keyword.iskeyword`, a frozenset's `__contains__`, so asks the set
        _guard(tx, source, TypeMatch, type(value))
        _guard(tx, _child(source, AttrSource, "__name__"), Equals, value.__name__)
        owner = wrap(tx, value.__self__, _child(source, AttrSource, "__self__"))
        method = BoundMethodVariable(owner, value.__name__)
        method.source = source
        return method
    if isinstance(value, (type(print), types.BuiltinMethodType)):
        owner = value.__self__
        if owner is None or isinstance(owner, types.ModuleType) or source is None:
            _guard(tx, source, Identity.of, value)
        else:  # `lock.__exit__`: a new method object on every read; its owner and name are not
            _guard(tx, source, TypeMatch, type(value))
            _guard(tx, _child(source, AttrSource, "__name__"), Equals, value.__name__)
            _guard(tx, _child(source, AttrSource, "__self__"), Identity.of, owner)
        return (ExcInfoVariable if value is sys.exc_info else OpaqueFunctionVariable)(value, source)
    _guard(tx, source, TypeMatch, type(value))
    return UserObjectVariable(value, source)


def _dict_key_kind(key: Any) -> bool:
    """Whether a frame dict's key can be traced: a constant, an object a dict compares by
    identity, or a tuple of them (`re`'s cache: `(str, pattern, flags)`)."""
    if type(key) is tuple:
        return all(map(_dict_key_kind, key))
    return is_literal(key) or by_identity(key)


def _made_per_call(fn: types.FunctionType) -> bool:
    """Whether `fn` was made inside another function (its code a constant of that function's,
    so each call makes a new function of the same code), has no attributes of its own (no
    marks, no `__wrapped__`) and a module's globals (an `exec`'d namespace, held by the guard,
    would never be freed): it may be told by its code."""
    return "<locals>" in fn.__qualname__ and not fn.__dict__ and \
        module_named_by(fn.__globals__) is not None  # (a guard holds its globals strongly)


def _marked_allowed(value: Any) -> bool:
    """Marked by `allow_in_graph`. A partial's mark is read by plain getattr (it has no
    `__getattr__`): `inspect.getattr_static` would give it a `__dict__`, and CPython does not
    flatten a partial that has one (`partial(p, k=1).func` would be `p`, not `p.func`)."""
    if type(value) is functools.partial:
        return bool(getattr(value, "_dynamo_allow_in_graph", False))
    return bool(inspect.getattr_static(value, "_dynamo_allow_in_graph", False))


def _polyfill(value: Any) -> Any:
    try:
        return POLYFILLS.get(value)
    except TypeError:  # unhashable
        return None


def _plain_tensor_type(cls: type) -> bool:
    """Whether ops on tensors of type `cls` act as on plain tensors: `torch.Tensor`, and
    subclasses (`nn.Parameter`) that switch both torch-function and dispatch overrides off.
    Any other subclass may change what an op does or returns. (Not cached: a class may switch
    an override on later; the inputs' guards check that it has not.)"""
    return cls is torch.Tensor or (
        inspect.getattr_static(cls, "__torch_function__") is torch._C._disabled_torch_function_impl
        and inspect.getattr_static(cls, "__torch_dispatch__")
        is torch._C._disabled_torch_dispatch_impl)


def _is_torch_function(value: Any) -> bool:
    if isinstance(value, type):
        return value in (*GRAD_MODES, torch.finfo, torch.iinfo) or issubclass(value,
                                                                              STATE_CONTEXTS)
    module = getattr(value, "__module__", None)
    if not isinstance(module, str):  # a class's own `__getattribute__` may answer anything
        module = ""
    if isinstance(value, (types.BuiltinFunctionType, types.BuiltinMethodType)):
        self = getattr(value, "__self__", None)
        if isinstance(self, types.ModuleType):
            module = self.__name__
    if isinstance(value, torch._ops.OpOverload | torch._ops.OpOverloadPacket):
        return True
    if type(value).__name__ in ("method_descriptor", "getset_descriptor", "wrapper_descriptor"):
        return getattr(value, "__objclass__", None) in (torch.Tensor, torch._C.TensorBase)
    if module.startswith(("torch.nn.modules", "torch.optim")):
        return False  # modules' and optimizers' Python is inlined like the user's
    if isinstance(value, types.MethodType) and not isinstance(
            value.__self__, (type, types.ModuleType, torch.Tensor)):
        # a method of an instance of torch's Python class kept as a value (a profiler's `step`
        # in a list of callbacks, a DataLoader iterator's `__next__`): followed like the user's
        # code, as the same method read from the object is (as a graph node it ran on fakes
        # while tracing: its side effects happened at the trace, or twice, and a call answering
        # None was dropped from the graph)
        return False
    if module.startswith("torch.nn.") and not isinstance(value, types.FunctionType) and \
            isinstance(inspect.getattr_static(type(value), "__call__", None), types.FunctionType):
        return False  # an object that nn.utils hooks onto modules (the old `weight_norm`'s)
    if isinstance(value, types.FunctionType) and not _named_in_module(value):
        return False  # a lambda or closure of torch's Python: fx could not name it in a graph
    return callable(value) and (module == "torch" or module.startswith(("torch.", "torch._C")))


def _named_in_module(fn: types.FunctionType) -> bool:
    """Whether `module.name`, the name fx gives a torch function in a graph's code, leads back
    to `fn`, or to the function it wraps (the wrapper torch.compile's frontend puts around
    `torch.manual_seed`): a lambda or a closure has none (the graph raised AttributeError on
    every call); a method (`Tensor.__rsub__`) fx names through its class. A wrapper made by
    `functools.wraps` at run time (`torch.func.vmap(torch.sin)`, `jacfwd(F.softmax)`: torch.func's
    transforms copy the name of the function they transform) is named as the function it
    wraps, so the graph's code called that function, not the transform (`jacfwd(torch.sin)`
    gave sin, not cos): such a wrapper is followed as Python, unless it is torch's own
    `_disable_dynamo` wrapper (`torch.manual_seed` once torch.compile's frontend is loaded),
    which calls what it wraps."""
    if getattr(fn, "__wrapped__", None) is not None and \
            fn.__code__.co_filename != TORCH_DISABLED and _fx_named(fn) is not fn:
        return False
    if "." in fn.__qualname__ and "<locals>" not in fn.__qualname__:
        return True
    named = getattr(sys.modules.get(fn.__module__), fn.__name__, None)
    return named is not None and named in (fn, getattr(fn, "__wrapped__", None))


def _fx_named(fn: types.FunctionType) -> Any:
    """What the name fx writes for `fn` in a graph's code (`module.__name__`; a method of
    Tensor through its class) leads to, or None."""
    if fn.__module__ == "torch._tensor" and fn.__qualname__ == f"Tensor.{fn.__name__}":
        return getattr(torch.Tensor, fn.__name__, None)
    return getattr(sys.modules.get(fn.__module__), fn.__name__, None)


def wrap_constant_result(value: Any) -> VariableTracker:
    """The tracker of a value computed from constants while tracing (needs no guard)."""
    if isinstance(value, torch.Size):
        return SizeVariable([ConstantVariable(v) for v in value])
    if type(value) in (list, tuple) and not is_literal(value):
        items = [wrap_constant_result(v) for v in value]
        return ListVariable(items) if isinstance(value, list) else TupleVariable(items)
    if isinstance(value, type):
        return UserClassVariable(value)
    if is_builtin_callable(value):
        return BuiltinVariable(value)
    if isinstance(value, dict):
        return DictVariable({k: wrap_constant_result(v) for k, v in value.items()})
    if isinstance(value, set):  # (an operator's result, `a | b`: laid out as it is)
        return SetVariable.result(value)
    return ConstantVariable(value)
