"""compile(): the front door. Per code object, a cache of compiled entries behind guards.

`compile(fn)` returns a wrapper. A call binds the arguments to `fn`'s parameters (the frame's
locals), then tries the cache entries of `fn`'s code object in order: the first whose guards
hold runs its transformed frame. A miss traces the frame (interpreter + output graph), hands
the graph to the backend, and adds an entry. Past the cache size limit, or when the frame
cannot be captured, the function runs eagerly with one warning giving the reason (with
`fullgraph=True`, the reason is raised instead). A frame that does no tensor work gets an entry
that runs the original function: left alone, at the cost of one guard check.
"""

from __future__ import annotations

import builtins
import collections
import contextlib
import functools
import inspect
import logging
import operator
import sys
import sysconfig
import threading
import types
import weakref
from collections.abc import Callable
from typing import Any

import torch
from torch.nn.modules import module as _modules
from torch.utils._device import DeviceContext
from torch.utils.weak import WeakIdKeyDictionary

from dynamo.backends import Backend, lookup_backend
from dynamo.breaks import RUN_EAGERLY, Continue, warn_user
from dynamo.bytecode import clear_caches, drop_when_freed
from dynamo.convert_frame import CacheEntry, Options, convert_frame, is_checkpoint
from dynamo.exc import Unsupported
from dynamo.logs import logger
from dynamo.variables.functions import compiler_disabled
from fakecore import dense_dims
from guards import CacheLimitExceeded, GuardedCache

CACHE_SIZE_LIMIT = 8
PYTHONS = ((3, 11), (3, 12))  # the bytecode the interpreter reads and codegen writes
# Per code object and compile settings (two wrappers of one function with different backends
# or options must not share entries).
_caches: dict[tuple, GuardedCache] = {}
_gave_up: dict[tuple, str] = {}
# Held while a frame is compiled (re-entered by a compilation that compiles another frame).
_COMPILE_LOCK = threading.RLock()
# Bumped by `reset`; wrappers then re-read the two tables above and forget what they saw.
_generation = [0]


def _changed() -> None:
    _generation[0] += 1


def reset() -> None:
    """Forget every compiled entry (the next call of every compiled function recompiles,
    its sizes and numbers static again until they change)."""
    _caches.clear()
    _gave_up.clear()
    clear_caches()
    _changed()


def _drop_dead_caches() -> None:
    """Drop the caches that no compiled function holds and whose every entry was made for
    objects now gone. A cache is pruned of such entries only when its own key compiles again
    (`GuardedCache.make_room`); a key that never comes back (its backend a callable made
    for that one compilation, with code that lives on: torch's `Optimizer.step`, a function
    defined in a loop) kept its dead entries, their graphs and fakes, for good."""
    for key in list(_caches):
        # (another thread pruning at once, or a finalizer, `drop_when_freed`'s, may have
        # dropped it since)
        cache = _caches.get(key)
        # held by the table, `cache` and getrefcount's argument only: no wrapper uses it
        if cache is not None and sys.getrefcount(cache) <= 3 and \
                all(g.gone() for g, _ in cache.entries):
            _caches.pop(key, None)


def _marked(fn: Callable, mark: str) -> Callable:
    """`fn` with attribute `mark` set; a builtin, which takes no attributes (`torch.sin`), is
    wrapped in a Python function that calls it."""
    try:
        setattr(fn, mark, True)
    except (AttributeError, TypeError):
        fn = _calling(fn)
        setattr(fn, mark, True)
    return fn


def disable(fn: Callable) -> Callable:
    """Never compile `fn` (a function or an nn.Module); inside a compiled frame, calling it
    stops the capture (part 1). Given what `compile` returned, a new function that runs what
    it wraps as it is (as torch's `disable` of a compiled function does); the compiled one
    keeps compiling."""
    if not isinstance(fn, types.FunctionType):  # (`uncompiled` comes later in this module)
        inner = uncompiled(fn)
        if inner is not fn:
            # a function of its own that calls it: marking the function (or object) itself
            # stopped `fn`, and every other compilation of it, compiling (torch's `disable`
            # wraps, too; for a compiled module, marking the module it wraps stopped the
            # compiled module itself compiling)
            return _marked(_calling(inner), "_dynamo_disable")
        fn = inner
    return _marked(fn, "_dynamo_disable")


_MODULE_CALLS = (torch.nn.Module.__call__, torch.nn.Module._wrapped_call_impl)


def _checkpoint_compiled(checkpoint: Callable, wrap: Callable, function: Any, /, *args: Any,
                         **kwargs: Any) -> Any:
    return checkpoint(wrap(function), *args, **kwargs)


def _user_mode_active() -> bool:
    """Whether a user's TorchDispatchMode or TorchFunctionMode is on (set_default_device's
    mode aside): the frame then runs eagerly, as torch.compile runs it under a dispatch mode.
    The trace would run its fake ops through the mode and drop what the mode does to them,
    and a mode entered in the frame would be popped by the trace, not by the graph."""
    return bool(torch._C._len_torch_dispatch_stack()) or any(
        not isinstance(torch._C._get_function_stack_at(i), DeviceContext)
        for i in range(torch._C._len_torch_function_stack()))


def _detached(tensor: torch.Tensor) -> torch.Tensor:
    # Not the tensor itself: an op's output saved as itself would hold itself through its
    # grad_fn, a cycle in C++ that gc never frees (and with it the fakes' FakeTensorMode).
    return tensor.detach()


def _disabled(fn: Any) -> bool:
    """Marked never to be compiled: by `disable`, or by `torch.compiler.disable`."""
    return getattr(fn, "_dynamo_disable", False) or compiler_disabled(fn) is not None


@disable
def graph_break(msg: str = "") -> None:
    """Break the graph here (a call that is never traced); `msg` joins the break's reason."""


def allow_in_graph(fn: Callable) -> Callable:
    """Put calls of `fn` into the graph as they are, instead of inlining them."""
    return _marked(fn, "_dynamo_allow_in_graph")


def assume_constant_result(fn: Callable) -> Callable:
    """Take `fn`'s result, called for real while tracing, as a constant: for functions whose
    answer is fixed for the life of the process (an install probe, a version check). Not
    guarded. The mark is torch.compile's (`_dynamo_marked_constant`): Hugging Face marks its
    probes so, without importing torch."""
    return _marked(fn, "_dynamo_marked_constant")


def _marked_dims(what: str, t: Any, dim: Any) -> list[int]:
    """`dim` (an int or ints) as a list, checked: a clear TypeError for what `mark_dynamic`
    cannot mark, instead of an AttributeError, or a string marked as its letters."""
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"dynamo.{what} marks a dim of a tensor, not of {type(t).__name__}")
    dims = list(dim) if isinstance(dim, (list, tuple, set, frozenset, range)) else [dim]
    try:
        return [operator.index(d) for d in dims]  # (a numpy int too)
    except TypeError:
        raise TypeError(f"dynamo.{what}: dim must be an int or a list of ints, not "
                        f"{dim!r}") from None


def mark_dynamic(t: torch.Tensor, dim: int | list[int]) -> None:
    """Compile `t`'s size at `dim` as a symbol, whatever `dynamic` says."""
    marked = _marked_dims("mark_dynamic", t, dim)
    dims = getattr(t, "_dynamo_dynamic_dims", set())
    dims.update(marked)
    t._dynamo_dynamic_dims = dims  # type: ignore[attr-defined]


def mark_static(t: torch.Tensor, dim: int | list[int]) -> None:
    """Keep `t`'s size at `dim` a constant, even with `dynamic=True`."""
    marked = _marked_dims("mark_static", t, dim)
    dims = getattr(t, "_dynamo_static_dims", set())
    dims.update(marked)
    t._dynamo_static_dims = dims  # type: ignore[attr-defined]


def _make_binder(fn: types.FunctionType) -> Callable[..., dict]:
    """A function with `fn`'s signature that returns its arguments as a dict of locals:
    Python's own argument parsing, at C speed."""
    code = fn.__code__
    # The code's own parameters: not a `__signature__` set on `fn` (a decorator's, naming the
    # wrapped function's parameters), which is not how its frame is bound
    stub = types.FunctionType(code, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
    stub.__kwdefaults__ = fn.__kwdefaults__
    params = inspect.signature(stub).parameters.values()
    defaults = {f"___d{i}": p.default for i, p in enumerate(params)
                if p.default is not inspect.Parameter.empty}
    parts, seen_star = [], False
    for i, p in enumerate(params):
        text = p.name + (f"=___d{i}" if f"___d{i}" in defaults else "")
        if p.kind is p.VAR_POSITIONAL:
            text, seen_star = f"*{p.name}", True
        elif p.kind is p.VAR_KEYWORD:
            text = f"**{p.name}"
        elif p.kind is p.KEYWORD_ONLY and not seen_star:
            parts.append("*")
            seen_star = True
        parts.append(text)
        if p.kind is p.POSITIONAL_ONLY and (i + 1 == len(params) or list(params)[i + 1].kind
                                             is not p.POSITIONAL_ONLY):
            parts.append("/")
    names = [p.name for p in params]
    # A comprehension's iterator is the local `.0`, which inspect calls `implicit0`.
    local = {n: f".{n[8:]}" for n in names if n.startswith("implicit")
             and f".{n[8:]}" in code.co_varnames}
    entries = [f"{local.get(n, n)!r}: {n}" for n in names]
    if code.co_freevars:
        entries.append("'__closure__': ___closure")
        defaults["___closure"] = fn.__closure__
    source = f"def bind({', '.join(parts)}):\n    return {{{', '.join(entries)}}}\n"
    exec(builtins.compile(source, f"<dynamo binder of {fn.__qualname__}>", "exec"), defaults)
    bind = defaults["bind"]
    # Named as the function, so that a call with the wrong arguments says what eager says
    # (`f() missing 1 required positional argument: 'log'`)
    bind.__name__, bind.__qualname__ = fn.__name__, fn.__qualname__
    # The function's own defaults (the kw-only ones as the very same dict): changes reach it.
    bind.__defaults__, bind.__kwdefaults__ = fn.__defaults__, fn.__kwdefaults__
    return bind


# Code flags of generators, coroutines and async generators: calling one runs none of its code.
_SUSPENDS = 0x20 | 0x80 | 0x100 | 0x200


def suspending_kind(code: types.CodeType) -> str | None:
    """'a generator function', 'a coroutine function', ...: what `code`'s function is when
    calling it runs none of its code (None: an ordinary function)."""
    flags = code.co_flags
    return ("an async generator function" if flags & 0x200 else
            "a coroutine function" if flags & (0x80 | 0x100) else
            "a generator function" if flags & 0x20 else None)


def captures_nothing(fn: types.FunctionType) -> bool:
    """Whether `fn` is a generator or coroutine function not marked to run as it is: compiled,
    it runs as it is all the same (its call runs none of its body), which `not_captured` says."""
    return suspending_kind(fn.__code__) is not None and not _disabled(fn)


def not_captured(fn: types.FunctionType) -> Unsupported:
    """Why compiling generator or coroutine function `fn` captures nothing, at its `def`."""
    return _at_def(fn, f"compiling {_name(fn)}, {suspending_kind(fn.__code__)}: calling it "
                       "only makes the object that runs its body later, so it has no frame to "
                       "capture (compile a function that iterates or awaits it instead)")


def _at_def(fn: types.FunctionType, message: str) -> Unsupported:
    """An Unsupported with `message`, located at `fn`'s `def` line."""
    error = Unsupported(message)
    error.locate(fn.__code__.co_filename, fn.__code__.co_firstlineno)
    return error


def _name(fn: types.FunctionType) -> str:
    """`fn`'s name for messages: a resume function is the user's function from a line on."""
    origin = getattr(fn, "_dynamo_resume_of", None)
    if origin is None:
        return fn.__qualname__
    line = fn.__code__.co_name.rsplit("_", 1)[1]
    return f"{origin[0].__qualname__} (from line {line} on)"


def _call_with_frame(fn: types.FunctionType, f_locals: dict) -> Any:
    """Run resume function `fn` for real on its parameters, with the cells passed along."""
    if "__closure__" not in f_locals:
        return fn(**f_locals)
    args = {k: v for k, v in f_locals.items() if k != "__closure__"}
    return types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__,
                              f_locals["__closure__"])(**args)


class CompiledFunction:
    """`fn`, compiled on its calls. Calls look like calls of `fn`."""

    def __init__(self, fn: types.FunctionType, backend: Backend, *, fullgraph: bool = False,
                 dynamic: bool | None = None, bound_self: Any = None,
                 raise_backend_errors: bool = False, capture_scalar_outputs: bool = False,
                 symbolic_ints: bool = False) -> None:
        if not isinstance(fn, types.FunctionType):
            raise TypeError(f"dynamo.compile needs a Python function or nn.Module, not {fn!r}")
        self.fn = fn
        self.backend = backend
        self.fullgraph = fullgraph
        self.dynamic = dynamic
        self.bound_self = bound_self
        self.raise_backend_errors = raise_backend_errors
        self.capture_scalar_outputs = capture_scalar_outputs
        self.symbolic_ints = symbolic_ints  # a resume function's: its int inputs are symbols
        self._callees = _Callees()
        self._use_code()
        # The function's name, docstring, `__wrapped__`, and the attributes of its own, but
        # not over this wrapper's state and methods: a decorator's `wrapper.fn = fn` (or a
        # `step` attribute) copied over `self.fn` compiled the inner function, silently
        # dropping what the decorator adds
        functools.update_wrapper(self, fn, updated=())
        own = set(self.__dict__) | set(dir(type(self))) | {"_cache", "_gave_up"}
        self.__dict__.update({k: v for k, v in fn.__dict__.items() if k not in own})
        if bound_self is not None:  # (the method: `inspect.signature` has no `self`, as
            # torch.compile's wrapper of a bound method, and `fn`'s)
            self.__wrapped__ = types.MethodType(fn, bound_self)

    def __reduce__(self) -> Any:
        """Pickled by name where its module holds it under its name (an `@compile`d function
        or method: torch.compile's wrapper is pickled so, and `copy` keeps it as it is, as it
        keeps a function); else as what it compiles, a method with its object (copied with it:
        `m.forward = compile(m.forward)` in a deep copy of `m` is the copy's), compiled again
        with the same backend and options, its cache its own."""
        if self.bound_self is None and _named_as(self.fn) is self:
            return self.fn.__qualname__
        return (_recompiled, (uncompiled(self), self.backend, {
            "fullgraph": self.fullgraph, "dynamic": self.dynamic,
            "raise_backend_errors": self.raise_backend_errors,
            "capture_scalar_outputs": self.capture_scalar_outputs,
            "symbolic_ints": self.symbolic_ints}))

    def _use_code(self) -> None:
        """Set up the cache for `fn`'s current code: also when `fn.__code__` is replaced
        after compiling (IPython's autoreload does so), which must not run the old code's
        entries."""
        fn = self.fn
        self._code = fn.__code__
        # A method compiled for one object (a module's forward) gets a cache of its own: the
        # twelve layers of a model do not compete for one cache's entries.
        owner = id(self.bound_self) if self.bound_self is not None else None
        # Code objects compare by value: two functions of equal code with other globals (a
        # module imported twice, a template run twice) get caches of their own, since an
        # entry holds its function's resume functions. The key holds the code weakly, and
        # the cache goes with the code (a function made anew from new code, a notebook's cell
        # run again, or `exec`'d source, must not leave its entries behind for good); its id
        # is not reused while the code lives.
        code_ref = weakref.ref(fn.__code__)
        self._key = (code_ref, id(fn.__code__), id(fn.__globals__), owner, self.backend,
                     self.fullgraph, self.dynamic, self.raise_backend_errors,
                     self.capture_scalar_outputs, self.symbolic_ints)
        drop_when_freed(fn.__code__, 1, _caches, _gave_up)
        if owner is not None:  # its entries are of no use once it is gone: free them then
            try:
                drop_when_freed(self.bound_self, 3, _caches, _gave_up)
            except TypeError:  # an object without weak references lives on in its cache
                pass
        self._generation = -1  # the tables are read on first use
        self._automatic_dynamic: dict[Any, set[int]] = {}  # source -> dims seen to change
        self._dynamic_strides: dict[Any, set[int]] = {}  # source -> dims whose strides changed
        self._dynamic_numbers: set[Any] = set()  # sources of numbers seen to change
        self._resumes: dict[types.FunctionType, CompiledFunction] = {}
        self.bind = _make_binder(fn)
        # Run as it is: a function that, called, makes a generator (no frame runs), or
        # `torch.compiler.disable`'s wrapper
        self._as_it_is = bool(fn.__code__.co_flags & _SUSPENDS) or \
            compiler_disabled(fn) is not None

    @property
    def cache(self) -> GuardedCache:
        if self._generation != _generation[0]:
            self._sync()
        return self._cache

    def _sync(self) -> None:
        generation = _generation[0]
        if self._key not in _caches:
            _drop_dead_caches()
        self._cache = _caches.setdefault(self._key, GuardedCache(CACHE_SIZE_LIMIT))
        self._gave_up = self._key in _gave_up
        for seen in (self._automatic_dynamic, self._dynamic_strides, self._dynamic_numbers):
            seen.clear()  # after a `reset`, sizes and numbers start static again, as in torch
        # Last: another thread that finds the generation current reads `_cache` and `_gave_up`
        # without syncing (set first, a first call made by two threads at once raised
        # AttributeError in the other)
        self._generation = generation

    def __call__(self, /, *args: Any, **kwargs: Any) -> Any:
        if self.bound_self is not None:
            args = (self.bound_self, *args)
        result = self.step(*args, **kwargs)
        while type(result) is Continue:  # resume functions, one after another
            target = result.fn
            result = (target.resume(result.f_locals) if type(target) is CompiledFunction
                      else _call_with_frame(target, result.f_locals))
        return result

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        """`@compile` on a method, read from an instance: bound to it, as the function it
        compiles would be (one cache for every instance; the guards tell them apart)."""
        if obj is None or self.bound_self is not None:
            return self
        return types.MethodType(self, obj)

    def resume(self, f_locals: dict) -> Any:
        """`step` for a resume function, given its frame: every parameter by name, and for
        a closure's, its cells as `__closure__`."""
        if self._generation != _generation[0]:
            self._sync()
        f_globals = self.fn.__globals__
        entry = None if self._gave_up else self._entry(f_locals, f_globals)
        if entry is None or entry.run is None:
            return _call_with_frame(self.fn, f_locals)
        result = entry.run(f_locals, f_globals)
        return _call_with_frame(self.fn, f_locals) if result is RUN_EAGERLY else result

    def step(self, /, *args: Any, **kwargs: Any) -> Any:
        """Run the frame up to its end, or up to a graph break's `Continue`."""
        fn = self.fn
        if fn.__code__ is not self._code:
            self._use_code()
        if self._generation != _generation[0]:
            self._sync()
        if self._gave_up or getattr(fn, "_dynamo_disable", False) or self._as_it_is:
            if self.fullgraph and captures_nothing(fn):
                raise not_captured(fn)  # (as torch.compile's "Attempt to trace generator")
            return fn(*args, **kwargs)
        bind = self.bind
        if bind.__defaults__ is not fn.__defaults__ or bind.__kwdefaults__ is not fn.__kwdefaults__:
            bind.__defaults__, bind.__kwdefaults__ = fn.__defaults__, fn.__kwdefaults__
        f_locals = bind(*args, **kwargs)
        f_globals = fn.__globals__
        entry = self._entry(f_locals, f_globals)
        if entry is None or entry.run is None:
            return fn(*args, **kwargs)
        result = entry.run(f_locals, f_globals)
        return fn(*args, **kwargs) if result is RUN_EAGERLY else result

    def _entry(self, f_locals: dict, f_globals: dict) -> CacheEntry | None:
        """The first cache entry whose guards hold, else a new compilation (None: run
        eagerly)."""
        if torch._C._functorch.peek_interpreter_stack() is not None:
            # under torch.func.grad/vmap/jvp: their wrapped tensors are not traced, and the
            # guards do not tell them from plain tensors: a cached graph run on them is the
            # backend's compiled code on tensors it was not compiled for (inductor_lite's
            # kernels raised on a BatchedTensor, and the backend was blamed for it)
            return None
        for guards, entry in reversed(self._cache.entries):  # the newest (most general) first
            # (under a user's mode, every entry fails at once, on its global-state guard)
            if guards.check(f_locals, f_globals):
                return entry
        if _user_mode_active():
            return None  # the mode would see the trace's work, not the frame's
        # One compilation at a time: threads that miss together on the same inputs would each
        # add an entry (the same guards), and use up the cache's limit with copies.
        with _COMPILE_LOCK:
            for guards, entry in reversed(self._cache.entries):  # another thread's, just made
                if guards.check(f_locals, f_globals):
                    return entry
            if self._gave_up:  # (another thread reached the limit meanwhile)
                return None
            return self._compile(f_locals, f_globals)

    def _options(self) -> Options:
        return Options(self.backend, self.dynamic, self.raise_backend_errors,
                       allow_breaks=not self.fullgraph,
                       capture_scalar_outputs=self.capture_scalar_outputs,
                       symbolic_ints=self.symbolic_ints,
                       automatic_dynamic=self._automatic_dynamic,
                       dynamic_strides=self._dynamic_strides,
                       dynamic_numbers=self._dynamic_numbers,
                       wrap_callee=_held_weakly(self), compile_resume=self._compile_resume)

    def _settings(self) -> dict[str, Any]:
        """The options a resume function or a callee compiled at a break inherits."""
        return {"dynamic": self.dynamic, "raise_backend_errors": self.raise_backend_errors,
                "capture_scalar_outputs": self.capture_scalar_outputs}

    def _compile_resume(self, fn: types.FunctionType) -> CompiledFunction:
        found = self._resumes.get(fn)
        if found is None:
            found = self._resumes[fn] = CompiledFunction(fn, self.backend, symbolic_ints=True,
                                                         **self._settings())
        return found

    def _wrap_callee(self, callee: Any) -> Any:
        return _wrap_callee(callee, self.backend, self._settings(), self._callees)

    def _note_changed_sizes(self, f_locals: dict, f_globals: dict) -> None:
        """Automatic dynamic (dynamic=None or True): a dim whose size differs from an earlier
        compilation's, or an int or float whose value does (a step count, a timestep), is
        compiled as a symbol from now on, instead of once per value; so is the stride of a dim
        (of size 2 or more) that differs while every size is the same (`ids[:, -1:]` of a
        growing batch of sequences: a new stride(0) at each call), or that differs with the
        sizes but is no product of them (`labels[:, 1:]` of a growing sequence length: its
        stride(0) is the length, its size(1) one less)."""
        for _, entry in self._cache.entries:
            for source, number in entry.input_numbers.items():
                try:
                    value = source.fetch(f_locals, f_globals)
                except Exception:  # the input is gone or different: nothing to learn
                    continue
                if type(value) is type(number) and value != number:
                    self._dynamic_numbers.add(source)
            for source, shape in entry.input_shapes.items():
                try:
                    value = source.fetch(f_locals, f_globals)
                except Exception:  # the input is gone or different: nothing to learn
                    continue
                if isinstance(value, torch.Tensor) and type(value) not in (
                        torch.Tensor, torch.nn.Parameter):
                    # a subclass's own metadata (`shape = property(...)`, `def dim`) is not
                    # the tensor's: read as torch.Tensor's (it raised, or ran the user's code)
                    try:
                        with torch._C.DisableTorchFunctionSubclass():
                            value = torch.Tensor.as_subclass(value, torch.Tensor)
                    except Exception:
                        continue
                if isinstance(value, torch.Tensor) and value.dim() == len(shape):
                    changed = {d for d, n in enumerate(shape) if value.shape[d] != n}
                    if changed:
                        self._automatic_dynamic.setdefault(source, set()).update(changed)
                    if value.layout is torch.strided and source in entry.input_strides:
                        strides = entry.input_strides[source]
                        # with new sizes, a dense stride follows them as a product of symbols
                        dense = dense_dims(value) if changed else set()
                        moved = {d for d, n in enumerate(value.shape)
                                 if n != 1 and value.stride(d) != strides[d] and d not in dense}
                        if moved:
                            self._dynamic_strides.setdefault(source, set()).update(moved)

    def _compile(self, f_locals: dict, f_globals: dict) -> CacheEntry | None:
        if self.dynamic is not False:
            self._note_changed_sizes(f_locals, f_globals)
        log = logger("recompiles")
        if self.cache.entries and log.isEnabledFor(logging.DEBUG):
            reasons = self.cache.miss_reasons(f_locals, f_globals)
            code = self.fn.__code__
            log.debug("recompiling %s (%s:%s), the guards that failed:\n%s", _name(self.fn),
                      code.co_filename, code.co_firstlineno, "\n".join(
                          f"  entry {i}: {'; '.join(r)}" for i, r in enumerate(reasons)))
        try:  # (the backend's work is not spent on an entry the cache has no room for)
            self.cache.make_room(f_locals=f_locals, f_globals=f_globals)
        except CacheLimitExceeded as error:
            self._cache_limit(error)
            return None
        # Twice at most: the first trace in a process runs torch code that imports modules
        # lazily (torch's meta kernels import torch._dynamo, which imports
        # torch.distributed.tensor, which registers pytree nodes), so state it read and
        # guarded (`pytree.SUPPORTED_NODES`' keys) may change under it, once
        for _ in range(2):
            try:
                # Saved-tensor hooks of the caller's (activation checkpointing's, which counts
                # the tensors autograd saves) must not see the ops that tracing runs on fakes
                # (under `disable_saved_tensors_hooks` there are none, and none may be pushed).
                with torch.autograd.graph.saved_tensors_hooks(_detached, _detached) \
                        if torch._C._autograd._saved_tensors_hooks_is_enabled() \
                        else contextlib.nullcontext():
                    entry = convert_frame(self.fn, f_locals, f_globals, self._options())
            except Unsupported as error:
                if self.fullgraph:
                    raise
                self._give_up(f"dynamo could not capture {_name(self.fn)}; it runs eagerly: "
                              f"{error}")
                return None
            if entry.guards.check(f_locals, f_globals):
                break
        else:  # a frontend bug, never a wrong result
            failed = "; ".join(entry.guards.explain(f_locals, f_globals))
            warn_user(f"dynamo: the guards of {_name(self.fn)}'s new compilation do not "
                      f"hold for the inputs it was made for ({failed}); this call runs eagerly")
            return None
        try:
            self.cache.add(entry.guards, entry, f_locals=f_locals, f_globals=f_globals)
        except CacheLimitExceeded as error:
            self._cache_limit(error)
            return None
        return entry

    def _cache_limit(self, error: CacheLimitExceeded) -> None:
        """The cache is full: the frame runs eagerly from now on, with a warning; under
        `fullgraph=True` that is a failure to capture, raised (as torch.compile's
        FailOnRecompileLimitHit), and the next call tries again."""
        if self.fullgraph:
            raise _at_def(self.fn, f"dynamo recompiled {_name(self.fn)} up to the cache size "
                                   f"limit, and fullgraph=True: {error}") from None
        self._give_up(f"dynamo recompiled {_name(self.fn)} up to the cache size limit; "
                      f"it runs eagerly from now on: {error}")

    def _give_up(self, message: str) -> None:
        _gave_up[self._key] = message
        self._gave_up = True
        warn_user(message)


def _named_as(fn: types.FunctionType) -> Any:
    """What `fn`'s module holds under `fn`'s qualified name (None: nothing)."""
    found: Any = sys.modules.get(fn.__module__)
    for part in fn.__qualname__.split("."):
        if part == "<locals>" or found is None:
            return None
        found = getattr(found, part, None)
    return found


def _recompiled(fn: Any, backend: Backend, options: dict[str, Any]) -> CompiledFunction:
    """A pickled or copied `CompiledFunction` made again: `fn`, a function or a method."""
    fn = uncompiled(fn)  # (a method of an `@compile`d function pickles as `getattr(obj, name)`,
    # which reads the compiled method back)
    if isinstance(fn, types.MethodType):
        return CompiledFunction(fn.__func__, backend, bound_self=fn.__self__, **options)
    return CompiledFunction(fn, backend, **options)


class _Callees:
    """The compiled wrappers of what a frame calls for real at its breaks, each kept while its
    callee lives. A wrapper holds its callee, so they are held weakly (a memo holding them
    would keep every callee alive: a new layer per step, and the cache entries made for it);
    the most recently used ones strongly, so that a model's layers are not wrapped anew on
    every call."""

    RECENT = 64

    def __init__(self) -> None:
        # By identity: a WeakKeyDictionary finds a key by `==`, and a module whose class
        # compares by value (`__eq__`, `__hash__`) was found as another, equal one: the call at
        # a break ran the first module's compiled wrapper, with its weights, for every other
        self._weak: WeakIdKeyDictionary = WeakIdKeyDictionary()
        self._recent: collections.OrderedDict = collections.OrderedDict()
        self._lock = threading.Lock()  # (threads at breaks: one's eviction between another's
        # insertion and its `move_to_end` would raise KeyError)

    def get(self, callee: Any, make: Callable[[], Any]) -> Any:
        ref = self._weak.get(callee)
        found = ref() if ref is not None else None
        if found is None:
            found = make()
            self._weak[callee] = weakref.ref(found)
        with self._lock:
            self._recent[id(found)] = found
            self._recent.move_to_end(id(found))
            if len(self._recent) > self.RECENT:
                self._recent.popitem(last=False)
        return found


def _wrap_callee(callee: Any, backend: Callable, settings: dict[str, Any],
                 memo: _Callees) -> Any:
    """What a call made for real at a graph break calls: user functions, methods and
    modules through compiled wrappers of their own, anything else as it is. Activation
    checkpointing (`torch.utils.checkpoint.checkpoint`, which torch keeps out of graphs)
    runs for real, recomputing in the backward pass, with the function it is given
    compiled."""
    wrap = functools.partial(_wrap_callee, backend=backend, settings=settings, memo=memo)
    if is_checkpoint(callee):
        return functools.partial(_checkpoint_compiled, callee, wrap)
    if isinstance(callee, functools.partial):
        inner = wrap(callee.func)
        return callee if inner is callee.func else \
            functools.partial(inner, *callee.args, **callee.keywords)
    if isinstance(callee, types.MethodType) and isinstance(callee.__self__, torch.nn.Module) \
            and callee.__func__ in _MODULE_CALLS:  # `layer.__call__`
        return wrap(callee.__self__)
    if isinstance(callee, types.MethodType):
        inner = wrap(callee.__func__)
        return callee if inner is callee.__func__ else functools.partial(inner, callee.__self__)
    if isinstance(callee, torch.nn.Module) and not isinstance(
            callee, OptimizedModule | torch.jit.ScriptModule) and not _disabled(callee):
        make = compile  # (TorchScript and disabled modules run as they are)
    elif isinstance(callee, types.FunctionType) and not (
        _disabled(callee)
        or (callee.__module__ or "").startswith("torch")
        or _in_stdlib(callee.__code__.co_filename)  # logging's, say: no tensors to capture
        or callee.__module__ == "dynamo.polyfills"  # a twin of a C function: runs as the C one
        or callee.__code__.co_flags & _SUSPENDS  # called, it makes a generator: no frame runs
    ):
        make = CompiledFunction
    else:
        return callee
    return memo.get(callee, lambda: make(callee, backend=backend, **settings))


def _held_weakly(compiled: CompiledFunction) -> Callable[[Any], Any]:
    """`compiled._wrap_callee`, for the code a compilation generates: the cache entry outlives
    `compiled` (entries are kept per code object, for every wrapper with its settings), and
    must not keep it, its function and their closure (a model) alive. Once it is gone, a
    wrapper with its settings, remembering nothing, does the same."""
    ref, backend, settings = weakref.ref(compiled), compiled.backend, compiled._settings()

    def wrap_callee(callee: Any) -> Any:
        alive = ref()
        if alive is not None:
            return alive._wrap_callee(callee)
        return _wrap_callee(callee, backend, settings, _Callees())
    return wrap_callee


class OptimizedModule(torch.nn.Module):
    """An nn.Module whose calls go through the compiled `forward` of the module it wraps.

    Attributes (read, written and deleted; `training` too), `state_dict`, parameters pass
    through to the original module: `compiled.scale = 2.0` changes what the next call computes.
    Hooks registered on the original module, or on this one, run, eagerly, around the compiled
    forward. Pickled (`torch.save`) as the module it wraps, compiled again when loaded.
    """

    def __init__(self, module: torch.nn.Module,
                 compile_forward: Callable[[torch.nn.Module], Callable]) -> None:
        super().__init__()
        del self.__dict__["training"]  # read from, and written to, the original module
        self._orig_mod = module
        self._compile_forward = compile_forward
        self._compiled_for = (module, _forward_of(module))  # what the forward was compiled for
        self._compiled_forward = compile_forward(module)
        # A model holding this module saves it under the original's keys (`state_dict` passes
        # through), but loads it through `_modules`, under `_orig_mod.`: take either.
        self._register_load_state_dict_pre_hook(_under_orig_mod)

    def __reduce__(self) -> Any:
        return (OptimizedModule, (self._orig_mod, self._compile_forward))

    def __len__(self) -> int:  # a compiled Sequential or ModuleList has its length
        return len(self._orig_mod)

    def __bool__(self) -> bool:  # (not its `__len__`: a compiled Linear is true)
        return bool(self._orig_mod)

    def __dir__(self) -> list[str]:
        return sorted(set(dir(self._orig_mod)) | set(super().__dir__()))

    def __call__(self, /, *args: Any, **kwargs: Any) -> Any:
        if self._forward_hooks or self._forward_pre_hooks or self._backward_hooks \
                or self._backward_pre_hooks:  # hooks registered on this module: nn.Module runs them
            return super().__call__(*args, **kwargs)
        return self.forward(*args, **kwargs)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """The original module called (its hooks around it) with its forward compiled."""
        module = self._orig_mod
        if getattr(module, "_dynamo_disable", False):  # `dynamo.disable(module)`
            return module(*args, **kwargs)
        made_for, forward = self._compiled_for
        if (made_for is not module or _forward_of(module) is not forward) and \
                id(module) not in _INSTALLED:
            # `module.forward = ...` or `compiled._orig_mod = other` since (not a compiled
            # forward set for a call under way)
            self._compiled_for = (module, _forward_of(module))
            self._compiled_forward = self._compile_forward(module)
        if not (module._forward_hooks or module._forward_pre_hooks or module._backward_hooks
                or module._backward_pre_hooks or _global_hooks()
                or type(module).__call__ not in _MODULE_CALLS):  # `__call__` overridden
            return self._compiled_forward(*args, **kwargs)
        _install_forward(module, self._compiled_forward)
        try:
            return module(*args, **kwargs)
        finally:
            _uninstall_forward(module)

    def __getattr__(self, name: str) -> Any:
        if name in _OWN_ATTRIBUTES:
            return super().__getattr__(name)
        return getattr(self._orig_mod, name)

    def __setattr__(self, name: str, value: Any) -> None:
        # nn.Module's own state of this module (`_is_full_backward_hook`) stays here
        if name in _OWN_ATTRIBUTES or name in self.__dict__ or hasattr(type(self), name):
            super().__setattr__(name, value)
        else:
            setattr(self._orig_mod, name, value)

    def __delattr__(self, name: str) -> None:
        if name in _OWN_ATTRIBUTES or hasattr(type(self), name):
            super().__delattr__(name)
        else:
            delattr(self._orig_mod, name)

    def state_dict(self, *args: Any, **kwargs: Any) -> Any:
        return self._orig_mod.state_dict(*args, **kwargs)

    def load_state_dict(self, state_dict: Any, *args: Any, **kwargs: Any) -> Any:
        """Into the original module, also a state dict saved from torch.compile's wrapper,
        whose keys (and metadata) start with `_orig_mod.`."""
        if any(key.startswith("_orig_mod.") for key in state_dict):
            metadata = getattr(state_dict, "_metadata", None)
            state_dict = collections.OrderedDict(
                (key.removeprefix("_orig_mod."), value) for key, value in state_dict.items())
            if metadata is not None:
                state_dict._metadata = {  # type: ignore[attr-defined]
                    "" if key == "_orig_mod" else key.removeprefix("_orig_mod."): value
                    for key, value in metadata.items() if key}
        return self._orig_mod.load_state_dict(state_dict, *args, **kwargs)


# Modules whose forward is set to a compiled one while calls run their hooks: module ->
# [calls under way, the forward set on the instance before (None: none)]. Threads calling at
# once share one installation, which the last to leave takes back: each setting and restoring
# its own took another thread's compiled forward for the module's own, and left it there.
# Keyed by id, not by the module (a module whose class defines `__eq__` is unhashable): an entry
# lives only while a call under way holds its module.
_INSTALLED: dict[int, list] = {}
_INSTALLED_LOCK = threading.Lock()


def _install_forward(module: torch.nn.Module, forward: Callable) -> None:
    with _INSTALLED_LOCK:
        installed = _INSTALLED.get(id(module))
        if installed is None:
            _INSTALLED[id(module)] = [1, module.__dict__.get("forward")]
            module.forward = forward
        else:
            installed[0] += 1


def _uninstall_forward(module: torch.nn.Module) -> None:
    with _INSTALLED_LOCK:
        installed = _INSTALLED[id(module)]
        installed[0] -= 1
        if installed[0]:
            return
        del _INSTALLED[id(module)]
        if installed[1] is None:
            module.__dict__.pop("forward", None)
        else:
            module.forward = installed[1]


_OWN_ATTRIBUTES = ("_orig_mod", "_compile_forward", "_compiled_for", "_compiled_forward")


def _under_orig_mod(state_dict: dict, prefix: str, *args: Any) -> None:
    """An OptimizedModule's keys in a state dict being loaded, moved under `_orig_mod.`."""
    inner = prefix + "_orig_mod."
    for key in [k for k in state_dict if k.startswith(prefix) and not k.startswith(inner)]:
        state_dict[inner + key[len(prefix):]] = state_dict.pop(key)


def _forward_of(module: torch.nn.Module) -> Any:
    """What `module(...)` calls: a forward set on the instance, or the class's (TorchScript's
    compiled method for a scripted or traced module, whose class attribute cannot be read)."""
    if isinstance(module, torch.jit.ScriptModule):
        return module.forward
    return module.__dict__.get("forward") or type(module).forward


def _compile_forward(module: torch.nn.Module, compiler: Backend, options: dict[str, Any]
                     ) -> Callable:
    """The module's forward, compiled (a callable object set as the forward runs as it is; an
    `@dynamo.compile`d forward, the function it compiles)."""
    forward = _forward_of(module)
    if isinstance(module, torch.jit.ScriptModule):  # TorchScript runs as it is
        return forward
    if type(forward) is CompiledFunction and "forward" not in module.__dict__:
        forward = forward.fn
    if isinstance(forward, types.MethodType):
        return CompiledFunction(forward.__func__, compiler, bound_self=forward.__self__,
                                **options)
    if "forward" in module.__dict__ or isinstance(
            inspect.getattr_static(type(module), "forward", None), staticmethod):
        # a function set on the instance, or a class's staticmethod: called without self
        if isinstance(forward, types.FunctionType):
            return CompiledFunction(forward, compiler, **options)
        return forward
    return CompiledFunction(forward, compiler, bound_self=module, **options)
_STDLIB = sysconfig.get_paths()["stdlib"]


def _in_stdlib(filename: str) -> bool:
    return filename.startswith(_STDLIB) and "site-packages" not in filename


def _global_hooks() -> bool:
    return bool(_modules._global_forward_hooks or _modules._global_forward_pre_hooks
                or _modules._global_backward_hooks or _modules._global_backward_pre_hooks)


def compile(model: Any = None, *, backend: str | Backend = "eager", fullgraph: bool = False,
            dynamic: bool | None = None, raise_backend_errors: bool = False,
            capture_scalar_outputs: bool = False) -> Any:
    """Compile a function or nn.Module (also usable as `@compile` or `@compile(...)`); a
    `functools.partial` of one, an object with a `__call__` method, or a builtin function
    (`torch.nn.functional.gelu`: a function calling it is compiled), too.

    `backend`: a name (`"eager"`, `"aot_eager"`, an entry point of `dynamo.backends`) or a
    `torch.compile`-style callable `(gm, example_inputs) -> callable`. `fullgraph=True`: raise
    `Unsupported` where the frame cannot be captured whole, instead of running it eagerly.
    `dynamic`: False, every size a constant; True, every input dim of tensors symbolic; None,
    constants except dims marked with `mark_dynamic` and dims seen to change size between
    calls (automatic dynamic). `raise_backend_errors`: a backend that
    fails raises `BackendError`, instead of a warning and the graph run eagerly.
    `capture_scalar_outputs`: `.item()` and `.tolist()` stay in the graph as unbacked symbolic
    scalars, instead of breaking the graph.
    """
    options = {"fullgraph": fullgraph, "dynamic": dynamic,
               "raise_backend_errors": raise_backend_errors,
               "capture_scalar_outputs": capture_scalar_outputs}
    for name, value in options.items():  # (`dynamic=0` was None's automatic dynamic, `1`
        # True's without its duck sizing, and `fullgraph="no"` fullgraph)
        if not (isinstance(value, bool) or value is None and name == "dynamic"):
            allowed = "True, False or None" if name == "dynamic" else "True or False"
            raise TypeError(f"dynamo.compile: {name} must be {allowed}, not {value!r}")
    if sys.version_info[:2] not in PYTHONS:
        raise RuntimeError(f"dynamo.compile supports Python 3.11 and 3.12, not "
                           f"{sys.version.split()[0]}: its bytecode differs")
    if model is None:
        return lambda m: compile(m, backend=backend, **options)
    compiler = lookup_backend(backend)
    model = uncompiled(model)  # compiled again: what it compiled, with this backend
    if isinstance(model, torch.nn.Module):
        return OptimizedModule(model, functools.partial(_compile_forward, compiler=compiler,
                                                        options=options))
    if isinstance(model, types.MethodType):
        return CompiledFunction(model.__func__, compiler, bound_self=model.__self__, **options)
    if isinstance(model, functools.partial):  # its function, compiled, with its arguments
        return functools.partial(_call_partial, model,
                                 compile(model.func, backend=compiler, **options))
    call = inspect.getattr_static(type(model), "__call__", None)
    if not isinstance(model, (type, types.FunctionType)) and isinstance(call, types.FunctionType):
        return functools.partial(_call_object, model, {}, functools.partial(
            compile, backend=compiler, **options))  # its class's __call__, compiled
    if not isinstance(model, type) and isinstance(call, staticmethod | CompiledFunction):
        return compile(model.__call__, backend=compiler, **options)  # the function it calls
    if isinstance(model, types.BuiltinFunctionType | types.MethodDescriptorType) or (
            callable(model) and not isinstance(model, type | types.FunctionType)):
        # `F.gelu`, `torch.sin`; and other callables written in C, an `lru_cache`d function,
        # an `operator.methodcaller` (torch.compile takes them; a TypeError here)
        return CompiledFunction(_calling(model), compiler, **options)
    return CompiledFunction(model, compiler, **options)


def _calling(builtin: Any) -> types.FunctionType:
    """A Python function that calls `builtin` (a function written in C has no frame to
    compile; a call of it is a graph op)."""
    def call(*args: Any, **kwargs: Any) -> Any:
        return builtin(*args, **kwargs)

    call.__name__ = call.__qualname__ = getattr(builtin, "__name__", None) or \
        type(builtin).__name__
    # A code object of its own: caches are per code, and every builtin compiled through one
    # shared code filled one cache (the ninth builtin hit the cache limit and ran eagerly).
    # One per builtin's name, made once: a code made at each `compile` was a cache of its own
    # that nothing freed (`compile(torch.sin)` in a loop recompiled and leaked every time).
    # (Builtins of one name, `x.add` and `y.add`, share it; the guards tell them apart.)
    key = (type(builtin), getattr(builtin, "__module__", None),
           getattr(builtin, "__qualname__", None) or call.__name__)
    code = _BUILTIN_CODES.get(key)
    if code is None:
        code = _BUILTIN_CODES[key] = call.__code__.replace(co_name=call.__name__,
                                                           co_qualname=call.__name__)
    call.__code__ = code
    return call


_BUILTIN_CODES: dict[tuple, types.CodeType] = {}


def uncompiled(fn: Any) -> Any:
    """The function (or bound method) a `CompiledFunction` compiles, also one bound as the
    method of an instance (`obj.step` of an `@compile`d method), the module an
    `OptimizedModule` wraps, the partial or callable object `compile` was given; anything else
    as it is."""
    if isinstance(fn, OptimizedModule):
        return fn._orig_mod
    if type(fn) is functools.partial and fn.func in (_call_partial, _call_object):
        return fn.args[0]  # `compile` of a partial or of a callable object: that partial, object
    if isinstance(fn, types.MethodType) and isinstance(fn.__func__, CompiledFunction):
        return types.MethodType(fn.__func__.fn, fn.__self__)
    if isinstance(fn, CompiledFunction):
        return fn.fn if fn.bound_self is None else types.MethodType(fn.fn, fn.bound_self)
    return fn


def _call_partial(partial: functools.partial, compiled: Any, /, *args: Any,
                  **kwargs: Any) -> Any:
    """`partial(*args, **kwargs)` through its function compiled, with the arguments it holds
    at this call (`partial.keywords` is a dict: it may change after compiling)."""
    return compiled(*partial.args, *args, **{**partial.keywords, **kwargs})


def _call_object(obj: Any, compiled: dict, make: Callable, /, *args: Any, **kwargs: Any) -> Any:
    """`obj(*args, **kwargs)` through the compiled `__call__` of its class as it is at this
    call: one replaced on the class, or a new `obj.__class__`, is compiled anew."""
    call = type(obj).__call__
    found = compiled.get(call)
    if found is None:
        if not isinstance(call, types.FunctionType):
            return obj(*args, **kwargs)
        found = compiled[call] = make(types.MethodType(call, obj))
    return found(*args, **kwargs)
