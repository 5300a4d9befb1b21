"""Turning one frame into a cache entry: trace it, compile its graph, generate its runner.

`convert_frame` traces the frame's code with the interpreter. If the trace reaches the
return, the whole frame is one graph (codegen's whole-frame runner). If it stops at an
instruction that can break the graph (see `breaks`), the trace is run again up to that
instruction and the entry's runner calls the partial graph, performs the instruction for real
and continues in a resume function. Anything else raises `Unsupported` and the caller runs the
frame eagerly.
"""

from __future__ import annotations

import dis
import functools
import itertools
import logging
import time
import types
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.utils.checkpoint

from dynamo.backends import Backend
from dynamo.breaks import (
    BRANCHES,
    BREAK_SITES,
    bound_cells,
    cells_written,
    closure_names,
    exception_handler,
    fast_forward,
    live_locals,
    operator_of,
    refusal,
    resume_function,
    warn_at,
    warn_user,
)
from dynamo.bytecode import PY312
from dynamo.codegen import (
    BadGraphOutputs,
    ResultBuilder,
    make_break_runner,
    make_runner,
    replay,
    rng_state,
    set_rng_state,
)
from dynamo.exc import BackendError, Raised, Unsupported, error_words
from dynamo.interpreter import Translator, _reachable, frame_values
from dynamo.logs import logger
from dynamo.output_graph import OutputGraph, mutates_inputs, undone_on_error
from dynamo.variables.base import NullVariable, VariableTracker
from dynamo.variables.builtins import BuiltinVariable
from dynamo.variables.constant import ConstantVariable
from dynamo.variables.containers import IteratorVariable, OpaqueIteratorVariable
from dynamo.variables.contexts import close_blocks, open_blocks
from dynamo.variables.functions import Cell, ClosureCell, OpaqueFunctionVariable
from dynamo.variables.generators import GeneratorVariable
from dynamo.variables.objects import TorchFunctionVariable
from guards import AttrSource, Equals, GetItemSource, GuardSet, LocalSource


@dataclass
class CacheEntry:
    """One compilation of a frame: its guards, the transformed frame (None: run the function
    as it is), what was built, and the graph breaks met on the way."""

    guards: GuardSet
    run: Callable[[dict, dict], Any] | None
    source: str
    graph: torch.fx.GraphModule | None
    breaks: list[Unsupported] = field(default_factory=list)
    input_shapes: dict[Any, tuple[int, ...]] = field(default_factory=dict)  # tensor inputs
    input_strides: dict[Any, tuple[int, ...]] = field(default_factory=dict)  # and their strides
    input_numbers: dict[Any, int | float] = field(default_factory=dict)  # compiled as constants


@dataclass
class Options:
    backend: Backend
    dynamic: bool | None
    raise_backend_errors: bool
    allow_breaks: bool
    capture_scalar_outputs: bool
    symbolic_ints: bool
    automatic_dynamic: dict[Any, set[int]]
    dynamic_strides: dict[Any, set[int]]  # dims whose strides were seen to change on their own
    dynamic_numbers: set[Any]  # sources of ints and floats seen to change between calls: symbols
    # How a call made for real at a break runs (a user function through its compiled wrapper),
    # and how a resume function is compiled.
    wrap_callee: Callable[[Any], Any]
    compile_resume: Callable[[types.FunctionType], Callable]


def is_checkpoint(callee: Any) -> bool:
    """Whether `callee` is activation checkpointing (which a break calls with the function it
    is given compiled)."""
    while isinstance(callee, functools.partial):  # Hugging Face's `partial(checkpoint, ...)`
        callee = callee.func
    return callee is torch.utils.checkpoint.checkpoint


def convert_frame(fn: types.FunctionType, f_locals: dict, f_globals: dict,
                  options: Options) -> CacheEntry:
    opaque_generators: dict[types.CodeType, str] = {}
    # Compile time per phase (`perf`), from every attempt: a trace that stopped at a break or
    # at a generator counts as much as the one that made the entry.
    phases: dict[str, float] = {}
    started = time.perf_counter()
    while True:
        try:
            return _convert_with_breaks(fn, f_locals, f_globals, options, opaque_generators,
                                        phases)
        except Unsupported as error:
            # A generator made in the trace failed (its body, or rebuilding it half-run at a
            # break): convert again with that generator function called for real.
            if error.generator is None or error.generator in opaque_generators or \
                    not options.allow_breaks:
                log = logger("perf")
                if log.isEnabledFor(logging.DEBUG):
                    log.debug("%s: %.1f ms spent before it could not be captured (%s)",
                              fn.__qualname__, (time.perf_counter() - started) * 1e3,
                              _phase_words(phases))
                raise
            opaque_generators[error.generator] = error.reason


def _itself(value: Any) -> Any:
    return value


def _convert_with_breaks(fn: types.FunctionType, f_locals: dict, f_globals: dict,
                         options: Options, opaque_generators: dict[types.CodeType, str],
                         phases: dict[str, float]) -> CacheEntry:
    started = time.perf_counter()
    try:
        return _convert(fn, f_locals, f_globals, options, None, opaque_generators, phases)
    except Unsupported as failed:
        _add_phase(phases, "tracing", started)
        error = failed
    for attempt in itertools.count(1):
        _check_breakable(fn, error, options)
        retraced = time.perf_counter()
        try:
            entry = _convert(fn, f_locals, f_globals, options, error.index, opaque_generators,
                             phases, retrace=True)
        except Unsupported as again:
            _add_phase(phases, "tracing up to the break again", retraced)
            if again.generator is not None:
                # A half-run generator could not be handed on at the break: name the break,
                # or the reason shown for calling it for real hides what needed it.
                again.reason += (f", which the graph break at {error.filename}:{error.lineno} "
                                 f"needs: {error.reason}")
            elif again.index is None:
                # The values at the break cannot be handed on: name the break, which the
                # reason (a closure's cells, a value that cannot be rebuilt) does not show.
                again.reason += (f"; the graph break, at {error.filename}:{error.lineno}: "
                                 f"{error.reason}")
            # The trace up to the break went another way than the one before it and failed
            # first: what it reads changed in between (a global, or global module hooks, that
            # another thread set). Break where it failed instead; raised, it made the frame
            # run eagerly for good, though the next call would have found the state settled.
            if again.index is None or again.index == error.index or attempt == _RETRACES:
                raise
            error = again
            continue
        log = logger("graph_breaks")  # (once the trace up to it is made: the break is made)
        if log.isEnabledFor(logging.DEBUG):
            log.debug("graph break in %s: %s", fn.__qualname__, error)
        # Kept as a record only: its traceback would keep the first trace, and the frame's
        # inputs, alive as long as the entry.
        error.__traceback__ = error.__context__ = None
        entry.breaks.insert(0, error)
        return entry


_RETRACES = 3  # traces up to a break, when each finds another place to fail (see above)


def _check_breakable(fn: types.FunctionType, error: Unsupported, options: Options) -> None:
    """Raise `error` where the frame cannot break at it (the frame then runs eagerly)."""
    if not options.allow_breaks or error.index is None or error.generator is not None:
        raise error
    if isinstance(error, Raised) and error.frames == 1 and not error.explicit and \
            isinstance(error.exception, (TypeError, AttributeError)):
        # An operation of the frame's own code failed on a value the trace computed (a
        # subscript or attribute of None), and nothing in it catches: breaking there runs
        # the failing step for real on the traced values, which may not be eager's
        # (`if not torch.compiler.is_compiling(): mask = ...` leaves `mask` None in the
        # trace only). As torch.compile does, the frame runs eagerly instead.
        raise error
    why_not = refusal(fn.__code__, error.index)
    if why_not is not None:
        error.reason += f" ({why_not})"
        raise error


def _add_phase(phases: dict[str, float], phase: str, since: float) -> float:
    """Add the time since `since` to `phase`; returns now."""
    now = time.perf_counter()
    phases[phase] = phases.get(phase, 0.0) + (now - since)
    return now


def _phase_words(phases: dict[str, float]) -> str:
    return ", ".join(f"{phase} {seconds * 1e3:.1f} ms" for phase, seconds in phases.items())


def _convert(fn: types.FunctionType, f_locals: dict, f_globals: dict, options: Options,
             stop_at: int | None, opaque_generators: dict[types.CodeType, str],
             phases: dict[str, float], retrace: bool = False) -> CacheEntry:
    output = OutputGraph(options.dynamic, options.capture_scalar_outputs, options.symbolic_ints,
                         options.automatic_dynamic, options.dynamic_numbers,
                         options.dynamic_strides)
    output.f_globals = f_globals
    output.opaque_generators = opaque_generators
    # The cells the frame runs with: a resume function's come with the call (one resume
    # function object serves every closure made from the same code).
    closure = f_locals.get("__closure__", fn.__closure__) or ()
    cells = {
        name: ClosureCell(cell, AttrSource(GetItemSource(LocalSource("__closure__"), i),
                                           "cell_contents"))
        for i, (name, cell) in enumerate(zip(fn.__code__.co_freevars, closure))
    }
    tracer = Translator(output, fn.__code__, f_globals, {}, cells,
                        frame_locals={k: v for k, v in f_locals.items() if k != "__closure__"})
    tracer.stop_at = stop_at
    builder = ResultBuilder()
    started = time.perf_counter()
    try:
        result = tracer.run()
        try:
            # the ones the frame drops unfinished: closed before the values are rebuilt (a
            # cleanup may change them)
            # (in the order the frame's locals free them, as Python does)
            order = list(_reachable(frame_values(tracer)))
            for generator in sorted(output.generators, key=lambda g: order.index(id(g))
                                    if id(g) in order else len(order)):
                generator.drop(tracer, at_break=result is None)
            if result is None:
                plan = _break_plan(fn, tracer, builder, options)
            else:
                plan = builder.expression(result)
            effects = replay(builder, output.side_effects)
        except Unsupported as error:  # the values at the break or the return cannot be rebuilt
            at = tracer.ip if result is None else tracer.ip - 1  # the break, or the return
            error.locate(fn.__code__.co_filename, tracer.instructions[at].lineno)
            raise
        gm = output.finish(builder.outputs)
    finally:
        output.restore_global_state()
    now = _add_phase(phases, "tracing up to the break again" if retrace else "tracing", started)
    # (the backend first: a backend that traces on the frontend's fakes, aot_eager, may add
    # shape guards)
    compiled = _compile_graph(fn, gm, output, options) if gm is not None else None
    if gm is not None:
        now = _add_phase(phases, "backend", now)
    guards = output.guard_set()
    now = _add_phase(phases, "guards", now)
    shapes = {s: tuple(v.shape) for s, v, _ in output.inputs if isinstance(v, torch.Tensor)}
    strides = {s: v.stride() for s, v, _ in output.inputs
               if isinstance(v, torch.Tensor) and v.layout is torch.strided}
    numbers = {g.source: g.value for g in guards
               if isinstance(g, Equals) and type(g.value) in (int, float)}
    numbers.update({GetItemSource(g.source, i): v for g in guards  # a shape, betas
                    if isinstance(g, Equals) and type(g.value) in (tuple, torch.Size)
                    for i, v in enumerate(g.value) if type(v) in (int, float)})
    if gm is None and result is not None and not effects:  # no work: leave the frame alone
        _log_entry(fn, gm, guards, "", phases)
        return CacheEntry(guards, None, "", None, input_shapes=shapes, input_strides=strides,
                          input_numbers=numbers)
    inputs = [s for s, _, _ in output.inputs]
    rerun = gm is None or not mutates_inputs(gm.graph)
    undo = () if gm is None else undone_on_error(gm.graph)
    on_error = None if compiled is None or compiled == gm.forward else \
        _graph_failed(fn, gm, options)
    if result is not None:
        run, source = make_runner(compiled, inputs, builder, plan, effects, rerun,
                                  output.initial_grad_mode, undo, on_error=on_error)
    else:
        lineno = tracer.instructions[tracer.ip].lineno
        origin = getattr(fn, "_dynamo_resume_of", None)  # a resume function: the user's function
        name = (fn if origin is None else origin[0]).__name__
        run, source = make_break_runner(compiled, inputs, builder, plan, effects, rerun,
                                        output.initial_grad_mode, undo,
                                        site=None if lineno is None else
                                        (fn.__code__.co_filename, lineno, name),
                                        on_error=on_error)
        # what the step made for real sees as its caller: the user's line (`warn_at`)
        BREAK_SITES[run.__code__] = (fn.__code__.co_filename, lineno, fn.__globals__)
    _add_phase(phases, "code generation", now)
    _log_entry(fn, gm, guards, source, phases)
    return CacheEntry(guards, run, source, gm, input_shapes=shapes, input_strides=strides,
                      input_numbers=numbers)


def _log_entry(fn: types.FunctionType, gm: torch.fx.GraphModule | None, guards: GuardSet,
               source: str, phases: dict[str, float]) -> None:
    name = fn.__qualname__
    if gm is not None and logger("graph").isEnabledFor(logging.DEBUG):
        logger("graph").debug("graph of %s:%s", name, gm.code)
    if logger("guards").isEnabledFor(logging.DEBUG):
        logger("guards").debug("guards of %s:\n%s", name,
                               "\n".join(f"  {g.describe()}" for g in guards))
    if logger("bytecode").isEnabledFor(logging.DEBUG):
        logger("bytecode").debug("original code of %s:\n%s\ntransformed frame:\n%s", name,
                                 dis.Bytecode(fn.__code__).dis(), source)
    if logger("perf").isEnabledFor(logging.DEBUG):
        logger("perf").debug("%s: %.1f ms: %s", name, sum(phases.values()) * 1e3,
                             _phase_words(phases))


def _compile_graph(fn: types.FunctionType, gm: torch.fx.GraphModule, output: OutputGraph, options: Options) -> Callable:
    try:
        compiled = options.backend(gm, output.example_inputs())
        if not callable(compiled):
            raise TypeError(f"it returned {compiled!r}, not a callable")
        if isinstance(compiled, torch.nn.Module):
            # its forward: a module's call would run the global module hooks on the graph too,
            # which the calls of the frame's own modules in it have run already
            return compiled.forward
        return compiled
    except Exception as error:
        failed = (f"backend {getattr(options.backend, '__name__', options.backend)!r} failed "
                  f"on the graph of {fn.__qualname__} ({error_words(error)})")
        if options.raise_backend_errors:
            raise BackendError(failed) from error
        warn_user(f"dynamo: {failed}; running the graph eagerly")
        return gm.forward


def _graph_failed(fn: types.FunctionType, gm: torch.fx.GraphModule, options: Options
                  ) -> Callable:
    """What the runner calls where the backend's compiled graph raised (before the frame runs
    eagerly): the captured graph itself runs on the same inputs. If it raises too, the error is
    the data's (an index out of range), which the eager run meets where eager would. If it does
    not, the backend is at fault: `raise_backend_errors` raises `BackendError`; otherwise one
    warning, and the captured graph runs in the backend's place from then on (not the failing
    graph and then the frame on every call). (Not `options` itself: its callbacks hold the
    compiled function, and through it the module, which the cache would then keep alive.)"""
    name = getattr(options.backend, "__name__", options.backend)
    strict, qualname = options.raise_backend_errors, fn.__qualname__
    culprit = f"backend {name!r} on the graph of {qualname}"

    def failed(namespace: dict, error: Exception, *args: Any) -> None:
        rng = rng_state()
        depth = open_blocks()
        grad = torch.is_grad_enabled()
        try:
            gm.forward(*args)
        except Exception:
            return
        finally:
            close_blocks(depth)
            set_rng_state(rng)
            torch._C._set_grad_enabled(grad)
        message = (f"{culprit}: {error}" if isinstance(error, BadGraphOutputs) else
                   f"backend {name!r}: its compiled graph of {qualname} raised "
                   f"{error_words(error)}, where the captured graph does not")
        if strict:
            raise BackendError(message) from error
        warn_user(f"dynamo: {message}; running the captured graph instead from now on")
        namespace["___graph"] = gm.forward
    failed.culprit = culprit  # (for the `BackendError` of a graph that cannot run again)
    return failed


def _break_plan(fn: types.FunctionType, tracer: Translator, builder: ResultBuilder,
                options: Options) -> dict[str, Any]:
    """What the runner does at the break: expressions for the stack, the locals, and the step
    made for real, and the resume functions that continue after it."""
    ins = tracer.instructions[tracer.ip]
    stack = list(tracer.stack)
    # Each local's tracker, or for one the trace never read, the expression that reads it.
    values: dict[str, Any] = {n: f"L[{n!r}]" for n in tracer.frame_locals
                              if n not in tracer.locals}
    values.update({n: v for n, v in tracer.locals.items() if not isinstance(v, NullVariable)})
    # The resume functions take the frame's cells along, the very cell objects a nested
    # function holds (one function object's resume function serves every closure made from
    # the same code); the few cells not shared are handed on by value.
    shared = closure_names(fn)
    closure = "".join(builder.cell(tracer.cells[n]) + ", " for n in shared)
    by_value = frozenset(fn.__code__.co_cellvars) - frozenset(shared)
    if by_value:
        if tracer.made_closures and cells_written(fn.__code__, tracer.ip, by_value):
            # A closure holds the cells, and a write would not reach the resume function's
            # copies (or the other way round).
            raise Unsupported("a graph break after a nested function captured this frame's "
                              "variables, which are written again")
        values.update({n: c.contents for n, c in tracer.cells.items()
                       if n in by_value and isinstance(c, Cell) and c.contents is not None})
    for name in shared:
        values.pop(name, None)

    def expression(value: Any) -> str:
        return builder.expression(value) if isinstance(value, VariableTracker) else value

    def live_at(index: int, known: dict[str, Any]) -> tuple[tuple[str, ...], list[str]]:
        """The locals live at `index`, sorted (every path to one resume point must name the
        same resume function), and the dict entries that pass them."""
        live = live_locals(fn.__code__, index)
        names = tuple(sorted(n for n in known if n in live or _kept_to_the_end(
            known[n], tracer.frame_locals.get(n))))
        return names, [f"{n!r}: {expression(known[n])}" for n in names]

    local_names, local_exprs = live_at(tracer.ip, values)

    def resume(index: int, below: list[Any], pushed: int, compiled: bool = True,
               names: tuple[str, ...] | None = None) -> tuple[str, list[str]]:
        nulls = tuple(isinstance(v, NullVariable) for v in below) + (False,) * pushed
        target = resume_function(fn, index, nulls, local_names if names is None else names)
        name = builder.constant(options.compile_resume(target) if compiled else target)
        exprs = [expression(v) for v in below if not isinstance(v, NullVariable)]
        return name, exprs

    handler = exception_handler(fn.__code__, tracer.ip)
    on_error = None
    if handler is not None:  # the step may raise into a try/with block's handler
        target, depth, lasti = handler
        kept = stack[:depth] + ([ConstantVariable(0)] if lasti else [])
        on_error = resume(target, kept, 1, compiled=False)  # handlers run as they are
    if ins.opname not in ("CALL", "CALL_FUNCTION_EX", "FOR_ITER", "RAISE_VARARGS", *BRANCHES):
        count, pushes, function = operator_of(ins)
        below = stack[:len(stack) - count]
        if ins.opname == "LOAD_METHOD" or ins.opname in ("LOAD_ATTR", "LOAD_SUPER_ATTR") \
                and PY312 and ins.arg & 1:
            # a method's load (3.11's LOAD_METHOD, 3.12's LOAD_ATTR and LOAD_SUPER_ATTR of
            # `obj.name(...)`) pushes two values: NULL, then the bound attribute
            below = [*below, NullVariable()]
        return {"kind": "call", "callee": builder.constant(function), "closure": closure,
                "args": [builder.expression(v) for v in stack[len(stack) - count:]],
                "locals": local_exprs, "pushes": pushes,
                "resume": resume(tracer.ip + 1, below, pushes), "on_error": on_error}
    if ins.opname == "FOR_ITER":
        iterator, below = stack[-1], stack[:-1]
        done = ins.target + (1 if PY312 else 0)  # 3.12: past the END_FOR
        return {"kind": "for", "iterator": builder.expression(iterator), "locals": local_exprs,
                "closure": closure,
                "next": resume(tracer.ip + 1, stack, 1), "done": resume(done, below, 0),
                "on_error": on_error}
    if ins.opname == "RAISE_VARARGS":  # `raise exc` or `raise exc from cause`
        exc, cause = (stack[-1], None) if ins.arg == 1 else (stack[-2], stack[-1])
        return {"kind": "raise", "exception": builder.expression(exc),
                "cause": None if cause is None else builder.expression(cause),
                "locals": local_exprs, "closure": closure, "on_error": on_error}
    if ins.opname in BRANCHES:
        below = stack[:-1]
        condition = builder.expression(stack[-1])
        next_, jump = tracer.ip + 1, ins.target
        if_true = ins.opname in ("POP_JUMP_IF_TRUE", "JUMP_IF_TRUE_OR_POP")
        on_true, on_false = (jump, next_) if if_true else (next_, jump)
        # JUMP_IF_..._OR_POP keeps the value on the stack where it jumps (`a or b` is `a`)
        kept = stack if ins.opname.startswith("JUMP_IF") else below
        return {"kind": "branch", "condition": condition, "locals": local_exprs,
                "closure": closure,
                "if_true": resume(on_true, kept if on_true == jump else below, 0),
                "if_false": resume(on_false, kept if on_false == jump else below, 0),
                "on_error": on_error}
    if ins.opname == "CALL":
        argc = ins.arg
        args = stack[len(stack) - argc:]
        method, first = stack[len(stack) - argc - 2], stack[len(stack) - argc - 1]
        below = stack[:len(stack) - argc - 2]
        if isinstance(method, NullVariable):
            callee = first
        else:
            callee, args = method, [first, *args]
        kw_names = tracer.kw_names
        positional = args[:len(args) - len(kw_names)]
        keywords = dict(zip(kw_names, args[len(args) - len(kw_names):]))
        call_args = [builder.expression(a) for a in positional]
        call_args += [f"{k}={builder.expression(v)}" for k, v in keywords.items()]
    else:  # CALL_FUNCTION_EX
        has_kwargs = ins.arg & 1
        kwargs = stack[-1] if has_kwargs else None
        star = stack[-1 - has_kwargs]
        callee = stack[-2 - has_kwargs]
        below = stack[:len(stack) - 2 - has_kwargs]
        if below and isinstance(below[-1], NullVariable):
            below = below[:-1]
        call_args = [f"*{builder.expression(star)}"]
        if kwargs is not None:
            call_args.append(f"**{builder.expression(kwargs)}")
    builtin = callee.as_constant() if isinstance(callee, (OpaqueFunctionVariable, BuiltinVariable)) \
        else None
    if ins.opname == "CALL" and any(builtin is b for b in (eval, exec, dir)) and not keywords \
            and len(positional) == (0 if builtin is dir else 1):
        # They read the calling frame's variables: the user's frame's, not the transformed
        # frame's (every local is live where the code calls them, `live_locals`)
        frame = "{" + "".join(e + ", " for e in local_exprs) + (
            f"**{builder.constant(bound_cells)}({shared!r}, ({closure}))" if shared else "") + "}"
        callee = BuiltinVariable(sorted) if builtin is dir else callee
        call_args = [frame] if builtin is dir else [*call_args, "G", frame]
    if ins.opname == "CALL" and builtin is globals and not positional and not keywords:
        callee, call_args = BuiltinVariable(_itself), ["G"]  # the user's module's, not ours
    if isinstance(callee, OpaqueFunctionVariable) and callee.as_constant() is warnings.warn:
        # attributed to the user's line, not to the transformed frame
        call = builder.constant(functools.partial(
            warn_at, fn.__code__.co_filename, ins.lineno, fn.__globals__))
    elif isinstance(callee, (OpaqueFunctionVariable, BuiltinVariable, TorchFunctionVariable)) \
            and not is_checkpoint(callee.as_constant()):
        # called as it is: no wrapper to find; one from the frame is read from it (a block's
        # `__exit__` left open by a break is another object on each call)
        call = builder.expression(callee) if isinstance(callee, OpaqueFunctionVariable) \
            and callee.source is not None else builder.constant(callee.as_constant())
    else:
        call = f"{builder.constant(options.wrap_callee)}({builder.expression(callee)})"
    plan = {"kind": "call", "callee": call, "closure": closure,
            "args": call_args, "locals": local_exprs, "pushes": 1,
            "resume": resume(tracer.ip + 1, below, 1), "on_error": on_error}
    loop = fast_forward(fn.__code__, tracer.ip + 1)
    if loop is not None and on_error is None:
        # The rest of the loop body only drops or stores the call's result: take the loop's
        # next item right here, instead of in one more resume step.
        stores, header = loop
        slots: list[Any] = [*below, "___result"]
        known = dict(values)
        for store in stores:
            value = slots.pop()
            if store.opname == "STORE_FAST":
                known[store.argval] = value
        iterator = slots[-1]
        if isinstance(iterator, (IteratorVariable, OpaqueIteratorVariable)):
            slots[-1] = "___iterator"
            after = header + 1
            done = tracer.instructions[header].target + (1 if PY312 else 0)
            next_names, next_locals = live_at(after, known)
            done_names, done_locals = live_at(done, known)
            plan["loop"] = {
                "iterator": expression(iterator),
                "next": (*resume(after, slots, 1, names=next_names), next_locals),
                "done": (*resume(done, slots[:-1], 0, names=done_names), done_locals),
            }
    return plan


def _kept_to_the_end(value: Any, real: Any) -> bool:
    """Whether a local the code after a break never reads is still handed on: a generator
    (the real one, called at a break) is closed when its last reference goes, running its
    `finally`/`__exit__`; Python's frame holds it until the frame ends (or a `del`), so
    dropping it at the break ran that cleanup before the rest of the frame's code."""
    if not isinstance(value, VariableTracker):  # a local the trace never read: its value
        return isinstance(real, types.GeneratorType)
    if isinstance(value, GeneratorVariable):
        # one the trace made: closing it runs code only when it is suspended inside a try or
        # with block (its own, or a `yield from` delegate's); else handing it on is needless,
        # and a half-run one cannot be rebuilt (a genexpr's `next` became a graph break)
        while value is not None:
            if value._suspended_in_block():
                return True
            value = value._delegate()
        return False
    try:
        return value.python_type() is types.GeneratorType
    except Exception:
        return False
