"""VariableTracker: what the symbolic interpreter knows about one Python value.

The interpreter never holds real values on its stack: it holds trackers. A tracker knows the
value's kind (one subclass per kind: constant, tensor, list, function, module, ...), how it was
obtained (its `source`, when it came from the frame's inputs; guards are stated on sources), and
how to answer the operations Python code performs on it: attribute reads, calls, method calls,
iteration. Anything a kind cannot answer raises `Unsupported`, naming the construct.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dynamo.exc import Unsupported
from guards import Source

if TYPE_CHECKING:
    from dynamo.interpreter import Translator


class VariableTracker:
    """A Python value during symbolic interpretation."""

    source: Source | None = None

    def python_type(self) -> type:
        raise Unsupported(f"the type of {self} is not known while tracing")

    def words(self) -> str:
        """The value in a user's words, for messages: "a Tensor", "a list"."""
        try:
            name = self.python_type().__qualname__
        except Unsupported:
            return repr(self)
        return f"{'an' if name[:1].lower() in 'aeiou' else 'a'} {name}"

    def is_constant(self) -> bool:
        return False

    def as_constant(self) -> Any:
        """The Python value, for trackers that stand for a known constant."""
        raise Unsupported(f"{self.words()} where Python needs a constant")

    def getattr(self, tx: Translator, name: str) -> VariableTracker:
        """`self.name`; by default, a method whose calls go to `call_method`."""
        try:
            kind = self.python_type()
        except Unsupported:
            kind = None
        if kind is not None and callable(getattr(kind, name, None)):
            from dynamo.variables.functions import BoundMethodVariable

            return BoundMethodVariable(self, name)
        raise Unsupported(f"reading attribute {name!r} of {self.words()}")

    def setattr(self, tx: Translator, name: str, value: VariableTracker) -> None:
        raise Unsupported(f"setting attribute {name!r} of {self.words()}")

    def delattr(self, tx: Translator, name: str) -> None:
        raise Unsupported(f"deleting attribute {name!r} of {self.words()}")

    def call(self, tx: Translator, args: list[VariableTracker],
             kwargs: dict[str, VariableTracker]) -> VariableTracker:
        raise Unsupported(f"calling {self.words()}")

    def call_method(self, tx: Translator, name: str, args: list[VariableTracker],
                    kwargs: dict[str, VariableTracker]) -> VariableTracker:
        """`self.name(*args, **kwargs)`."""
        raise Unsupported(f"the method {name}() of {self.words()}")

    def items(self, tx: Translator) -> list[VariableTracker]:
        """The values iteration over this value yields, in order."""
        raise Unsupported(f"iterating over {self.words()}")

    def truth(self, tx: Translator) -> bool:
        """`bool(value)`, decided while tracing (a guard records the decision when needed)."""
        raise Unsupported(f"the truth value of {self.words()}")

    def __repr__(self) -> str:
        return type(self).__name__


class TrueVariable(VariableTracker):
    """A value Python finds true whatever it is: a function, method, partial, builtin or
    module (objects whose types define neither `__bool__` nor `__len__`)."""

    def truth(self, tx: Translator) -> bool:
        return True


class NullVariable(VariableTracker):
    """The NULL that CPython 3.11+ pushes below a callable on the stack."""
