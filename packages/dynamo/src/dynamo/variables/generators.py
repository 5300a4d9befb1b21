"""Generators made in the trace: a suspended Translator per generator object.

Calling a generator function in Python runs none of its body: it makes a generator object, and
each `next()` runs the body up to its next `yield`. The tracer does the same. The call makes a
`GeneratorVariable` that holds the body's own Translator; taking an item (`for`, `next()`,
`list()`, a `@contextmanager`'s `__enter__`/`__exit__`) runs that Translator until it
yields, and the next item resumes it where it stopped. So the generator's work interleaves with
the loop that takes its items exactly as in Python: side effects, tensor ops and exceptions
happen in program order, and an exception the body raises goes to the caller's handlers.

A generator object cannot be rebuilt half-run outside the trace (to pass it on at a graph
break, or to return it): that, or anything the body cannot trace, raises `Unsupported` tagged
with the generator's code, and the frame is converted again with that generator function
called for real (a graph break at the call; see `convert_frame`).
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import TYPE_CHECKING

from dynamo.breaks import exception_handler
from dynamo.bytecode import instructions
from dynamo.exc import Raised, Unsupported
from dynamo.variables.base import VariableTracker
from dynamo.variables.constant import ConstantVariable, is_none
from dynamo.variables.containers import IteratorVariable

if TYPE_CHECKING:
    from dynamo.interpreter import Translator

_STOPITERATION_ERROR = 3  # CALL_INTRINSIC_1's INTRINSIC_STOPITERATION_ERROR


class LazyIteratorVariable(IteratorVariable):
    """An iterator whose items are computed when they are taken (`_step`), not up front."""

    finished = False

    def _step(self, tx: Translator, sent: VariableTracker | None) -> VariableTracker | None:
        raise NotImplementedError

    def next(self, tx: Translator, sent: VariableTracker | None = None
             ) -> VariableTracker | None:
        """The next item, or None once the iterator is exhausted."""
        if self.finished:
            return None
        value = self._step(tx, sent)
        if value is None:
            self.finished = True
        return value

    def items(self, tx: Translator) -> list[VariableTracker]:
        rest = []
        while (value := self.next(tx)) is not None:
            rest.append(value)
        return rest


class GeneratorVariable(LazyIteratorVariable):
    """A generator object made in the trace; `frame` is its body's suspended Translator."""

    def __init__(self, frame: Translator, name: str) -> None:
        super().__init__([])
        self.frame = frame
        self.name = name
        self.started = False

    def python_type(self) -> type:
        return types.GeneratorType

    def getattr(self, tx: Translator, name: str) -> VariableTracker:
        if name in ("__name__", "__qualname__"):
            code = self.frame.code
            return ConstantVariable(code.co_name if name == "__name__" else code.co_qualname)
        return super().getattr(tx, name)

    def _step(self, tx: Translator, sent: VariableTracker | None,
              thrown: Raised | None = None) -> VariableTracker | None:
        """Run the body to its next `yield` (raising `thrown` at the `yield` it stopped at,
        for `throw()`): the value yielded, or None once it returned."""
        frame = self.frame
        if thrown is not None:
            delegate = self._delegate()
            if delegate is not None:
                if not isinstance(thrown.exception, GeneratorExit):
                    raise Unsupported(f"throw() into the generator {self.name}, suspended in "
                                      f"`yield from` (CPython throws into the delegate first)")
                try:  # CPython closes it first
                    delegate.call_method(tx, "close", [], {})
                except Raised as error:  # and raises its error here instead
                    thrown = error
            # CPython raises it at the suspended `yield`, after pushing what it evaluates to
            # (3.12's `yield from` handler expects it): that instruction's handler, if any
            frame.push(ConstantVariable(None))
            if not frame._catch(thrown, frame.instructions[frame.ip - 1]):
                self.finished = True
                raise thrown
        elif self.started:
            frame.push(sent or ConstantVariable(None))  # what the `yield` expression evaluates to
        elif sent is not None and not is_none(sent):
            raise Raised(TypeError("can't send non-None value to a just-started generator"),
                         f"send() to the just-started generator {self.name}")
        self.started = True
        frame.suspended = None
        try:
            frame.run()
        except Raised as error:
            self.finished = True
            if isinstance(error.exception, StopIteration):  # PEP 479
                raise Raised(stop_iteration_error(error.exception),
                             f"the generator {self.name} raised StopIteration") from None
            raise
        except Unsupported as error:
            self.finished = True
            error.blame_generator(frame.code)
            raise
        return frame.suspended

    def _delegate(self) -> GeneratorVariable | None:
        """The generator a `yield from` of the body is suspended in, if any."""
        frame = self.frame
        if self.started and not self.finished and frame.ip >= 2 and \
                frame.instructions[frame.ip - 2].opname == "SEND" and \
                isinstance(frame.stack[-1], GeneratorVariable):
            return frame.stack[-1]
        return None

    def call_method(self, tx: Translator, name: str, args: list[VariableTracker],
                    kwargs: dict[str, VariableTracker]) -> VariableTracker:
        if name in ("__next__", "send"):
            was_finished = self.finished
            value = self.next(tx, args[0] if name == "send" else None)
            if value is None:
                raise Raised(self._stop(was_finished),
                             f"{name}() on the exhausted generator {self.name}")
            return value
        if name == "__iter__":
            return self
        if name == "close":  # GeneratorExit raised at the suspended `yield`
            if not self.finished and self.started:
                try:
                    value = self._step(tx, None, Raised(GeneratorExit(), f"close() of the "
                                                                         f"generator {self.name}"))
                except Raised as error:
                    if not isinstance(error.exception, GeneratorExit):
                        raise
                    value = None
                if value is not None:
                    raise Raised(RuntimeError("generator ignored GeneratorExit"),
                                 f"the generator {self.name} yielded after close()")
            self.finished = True
            return ConstantVariable(None)
        thrown = args[1] if len(args) == 3 else args[0] if len(args) == 1 else None  # 3.11: 3
        if name == "throw" and thrown is not None and thrown.is_constant() and \
                isinstance(thrown.as_constant(), type) and \
                issubclass(thrown.as_constant(), BaseException) and len(args) == 1:
            from dynamo.variables.builtins import make_exception
            thrown = make_exception(thrown.as_constant(), [], {})  # `gen.throw(ValueError)`
        if name == "throw" and (not self.started or self.finished) and thrown is not None \
                and thrown.is_constant() and isinstance(thrown.as_constant(), BaseException):
            # nothing runs: the exception comes out of throw() itself, and the generator ends
            state = "exhausted" if self.finished else "just-started"
            self.started = self.finished = True
            error = thrown.as_constant()
            raise Raised(error, f"{type(error).__name__} thrown into the {state} "
                                f"generator {self.name}")
        if name == "throw" and self.started and not self.finished and thrown is not None \
                and thrown.is_constant() and isinstance(thrown.as_constant(), BaseException):
            error = thrown.as_constant()
            value = self._step(tx, None, Raised(error, f"{type(error).__name__} thrown into "
                                                       f"the generator {self.name}"))
            if value is None:
                self.finished = True
                raise Raised(self._stop(False), f"throw() into {self.name}: it returned")
            return value
        raise Unsupported(f"{name}() on the generator {self.name} (next, send, throw into a "
                          "suspended one and iteration are followed)")

    def _stop(self, was_finished: bool) -> StopIteration:
        """The StopIteration a step raises: carrying what the body returned, when this step
        ran it to its end."""
        returned = None if was_finished else self.frame.result
        if returned is None or is_none(returned):
            return StopIteration()
        if not returned.is_constant():
            error = Unsupported(f"the value the generator {self.name} returns "
                                f"({returned.words()}) carried by StopIteration")
            error.blame_generator(self.frame.code)
            raise error
        return StopIteration(returned.as_constant())

    def drop(self, tx: Translator, at_break: bool) -> None:
        """The trace ends with this generator unreferenced or suspended. Python closes a
        generator when its last reference goes (GeneratorExit at its `yield`): the trace closes
        one where the code drops it (`Translator.dropped`), but a reference lost another way
        (a container emptied) is not seen, so its cleanup (a `finally`, an `except`, an
        `__exit__`) would run at a time the trace cannot tell. At a return, a close is fine
        when the frame's locals still hold the generator (Python closes it as the frame
        ends) or when it does nothing (no write, no op); otherwise the generator function is
        called for real (Unsupported, blamed on it)."""
        if not self._suspended_in_block():
            return
        if not at_break:
            from dynamo.interpreter import _reachable, frame_values

            output = tx.output
            effects = output.side_effects
            # (only the frame's: returned, or stored where the caller sees it, it lives on)
            held = id(self) in _reachable(frame_values(tx)) and id(self) not in _reachable(
                [tx.result, list(effects.containers.values()), list(effects.writes.values())],
                skip=tx)  # (a container's lazy reads hold the frame)
            before = output.side_effects.changes, len(output.graph.nodes)
            try:
                self.call_method(tx, "close", [], {})
            except Unsupported:
                pass
            else:
                if held or (output.side_effects.changes, len(output.graph.nodes)) == before:
                    return
        error = Unsupported(f"the generator {self.name} is left suspended inside a try or with "
                            "block, whose cleanup runs when the generator is dropped")
        error.blame_generator(self.frame.code)
        raise error

    def _suspended_in_block(self) -> bool:
        if not self.started or self.finished:
            return False
        index = self.frame.ip - 1
        while (handler := exception_handler(self.frame.code, index)) is not None:
            target = instructions(self.frame.code)[handler[0]]
            if target.opname != "CLEANUP_THROW":
                # 3.12 wraps every generator body in one: it turns a StopIteration into
                # RuntimeError.
                return not (target.opname == "CALL_INTRINSIC_1"
                            and target.arg == _STOPITERATION_ERROR)
            index = handler[0]  # 3.12's `yield from` closing its delegate: the block around it
        return False

    def unbuildable(self) -> Unsupported:
        """Why this generator cannot be handed on outside the trace, blamed on its code."""
        error = Unsupported(f"the generator {self.name} cannot be rebuilt half-run outside the "
                            "trace (to return it, or to pass it on at a graph break)")
        error.blame_generator(self.frame.code)
        return error

    def __repr__(self) -> str:
        return f"GeneratorVariable({self.name})"



class StepIteratorVariable(LazyIteratorVariable):
    """`zip`, `enumerate`, `map` or `filter` over a generator made in the trace: `step` takes
    the arguments' next items when the loop asks, so the generator runs in step with it."""

    def __init__(self, step: Callable[[Translator], VariableTracker | None],
                 generator: GeneratorVariable) -> None:
        super().__init__([])
        self.step = step
        self.generator = generator  # the one blamed when this cannot be handed on

    def _step(self, tx: Translator, sent: VariableTracker | None) -> VariableTracker | None:
        return self.step(tx)

    def unbuildable(self) -> Unsupported:
        return self.generator.unbuildable()


def stop_iteration_error(stop: StopIteration) -> RuntimeError:
    """PEP 479's RuntimeError for a StopIteration raised inside a generator, with it as cause
    and context, as CPython's `_PyErr_FormatFromCause` makes it."""
    error = RuntimeError("generator raised StopIteration")
    error.__cause__ = error.__context__ = stop
    return error


class UserIteratorVariable(LazyIteratorVariable):
    """An instance of a user's iterator class (one written in Python with `__next__`), as
    `iter()` of an object whose `__iter__` returns it: each item is its `__next__`, called
    when the loop asks (so its side effects interleave with the loop's, and an endless one is
    fine), until it raises StopIteration. Outside the trace it is that object itself."""

    def __init__(self, obj: VariableTracker) -> None:
        super().__init__([])
        self.obj = obj

    def _step(self, tx: Translator, sent: VariableTracker | None) -> VariableTracker | None:
        try:
            return self.obj.call_method(tx, "__next__", [], {})
        except Raised as error:
            if isinstance(error.exception, StopIteration):
                return None
            raise

    def python_type(self) -> type:
        return self.obj.python_type()

    def getattr(self, tx: Translator, name: str) -> VariableTracker:
        return self.obj.getattr(tx, name)

    def call_method(self, tx: Translator, name: str, args, kwargs) -> VariableTracker:
        return self.obj.call_method(tx, name, args, kwargs)

    def unbuildable(self) -> Unsupported:
        return Unsupported(f"an iterator over a {self.obj.python_type().__qualname__} taken in "
                           "step with another (zip, enumerate, map, filter) cannot be rebuilt "
                           "half-run outside the trace")

    def __repr__(self) -> str:
        return f"UserIteratorVariable({self.obj!r})"


def lazy_map(tx: Translator, fn: Callable[[list[VariableTracker]], VariableTracker | None],
             iterables: list[VariableTracker]) -> IteratorVariable | None:
    """An iterator of `fn(row)` over the rows of `iterables` taken in step (rows for which `fn`
    says None are skipped), when one of them is a generator made in the trace; else None (the
    caller computes the items up front)."""
    generators = [it for it in iterables if isinstance(it, LazyIteratorVariable)]
    if not generators:
        return None
    blamed = generators[0]
    while isinstance(blamed, StepIteratorVariable):
        blamed = blamed.generator
    iterators = [it if isinstance(it, IteratorVariable) else IteratorVariable.over(it, tx)
                 for it in iterables]

    def step(tx: Translator) -> VariableTracker | None:
        while True:
            row = []
            for it in iterators:
                value = it.next(tx)
                if value is None:
                    return None
                row.append(value)
            result = fn(row)
            if result is not None:
                return result

    return StepIteratorVariable(step, blamed)
