"""Why a capture stopped: `Unsupported`, with the construct and the user's file:line.

Every place where the symbolic interpreter meets something it cannot capture raises
`Unsupported(reason)` (`Raised`, when the traced code itself raises an exception); the interpreter adds where in the user's code it happened (file, line and
that line's source) before the exception leaves it. `compile()` turns it into a warning and an
eager run, or, with `fullgraph=True`, lets it reach the caller.
"""

from __future__ import annotations

import contextlib
import linecache
import os
import sysconfig
from collections.abc import Iterator
from types import CodeType


class Unsupported(RuntimeError):
    """A construct that the frontend cannot capture into a graph (a RuntimeError, as
    torch.compile's is: `except RuntimeError` around a `fullgraph=True` call catches it)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.filename: str | None = None
        self.lineno: int | None = None
        self.in_library = False  # the location is torch's own (no user code was on the way)
        # torch's own line where it happened, when a user's line called into it: the user's
        # line alone (`torch.distributions.Normal(loc, scale)`) does not show the construct
        self.library_site: tuple[str, int] | None = None
        self.index: int | None = None  # the top frame's instruction where it happened
        # the user's calls that led there, innermost first: (function, file, line)
        self.callers: list[tuple[str, str, int]] = []
        self.generator: CodeType | None = None  # a generator whose tracing failed: call it for real

    def blame_generator(self, code: CodeType) -> None:
        """Record the innermost generator function whose body or half-run object failed."""
        if self.generator is None:
            self.generator = code

    def locate(self, filename: str, lineno: int | None, in_library: bool = False,
               function: str | None = None) -> None:
        """Record the innermost user location (the first call wins: it is the deepest); a
        location in torch's own code only until a user's comes (a torch module compiled
        directly, `nn.Transformer`, has no user code on the way). A user's location further
        out is a call that led there (`function`, when given, names the caller)."""
        if lineno is not None and function is not None and not in_library and \
                self.filename is not None and not self.in_library and \
                (filename, lineno) != (self.filename, self.lineno) and \
                (not self.callers or self.callers[-1] != (function, filename, lineno)):
            self.callers.append((function, filename, lineno))
        if lineno is not None and (self.filename is None or self.in_library and not in_library):
            if self.in_library and self.library_site is None:
                self.library_site = (self.filename, self.lineno)
            self.filename, self.lineno, self.in_library = filename, lineno, in_library

    def __str__(self) -> str:
        if self.filename is None:
            return self.reason
        line = linecache.getline(self.filename, self.lineno).strip()
        excerpt = f"\n    {line}" if line else ""
        called = "".join(f"\n  called from {function} at {filename}:{lineno}"
                         for function, filename, lineno in self.callers)
        return (f"{self.reason}\n  at {self.filename}:{self.lineno}{excerpt}{self.inside()}"
                f"{called}")

    def library_where(self) -> str | None:
        """The library's file:line (torch's, the standard library's) where the user's line met
        the construct (None: none)."""
        if self.library_site is None:
            return None
        filename, lineno = self.library_site
        stdlib = sysconfig.get_paths()["stdlib"]
        short = filename[filename.rfind("/torch/") + 1:] if "/torch/" in filename else \
            os.path.relpath(filename, stdlib) if filename.startswith(stdlib) else \
            f"dynamo/{os.path.basename(filename)}"  # its twin of a C function (polyfills.py)
        return f"{short}:{lineno}"

    def inside(self) -> str:
        """Where in a library's code the user's line met the construct, as lines to append."""
        where = self.library_where()
        if where is None:
            return ""
        line = linecache.getline(*self.library_site).strip()  # type: ignore[misc]
        return f"\n  inside {self.library_name()} at {where}" + (f"\n    {line}" if line else "")

    def library_name(self) -> str:
        """Whose code `library_where` is in: torch's or the standard library's."""
        return "torch's code" if self.library_site and "/torch/" in self.library_site[0] \
            else "the standard library"


class NotAGraphValue(Unsupported):
    """A graph operation returned what a graph cannot hold (a dict, an object): the node is
    taken back, and a torch function written in Python is followed instead."""


class Raised(Unsupported):
    """An exception that the traced code raises (`raise KeyError(k)`, a missing dict key, an
    exhausted iterator): when a `try` of the traced code catches it, the trace goes on in the
    handler; uncaught, it stops the capture like any construct the frontend cannot follow."""

    def __init__(self, exception: BaseException, reason: str) -> None:
        super().__init__(reason)
        self.exception = exception
        self.frames = 0  # how many traced frames it has left, uncaught (1: the one it came from)
        self.explicit = False  # raised by a `raise` statement (not by a failing operation)


def python_error(error: Exception) -> Raised:
    """`error`, Python's own exception in its words, raised by the traced code."""
    name = type(error).__name__
    return Raised(error, f"{error} ({'an' if name[0] in 'AEIOU' else 'a'} {name} while tracing)")


def no_attribute(kind: str, name: str, reason: str | None = None) -> Raised:
    """The AttributeError of an object of type `kind` that lacks `name`, in CPython's words."""
    message = f"'{kind}' object has no attribute '{name}'"
    return Raised(AttributeError(message, name=name),
                  reason or f"{message} (an AttributeError while tracing)")


@contextlib.contextmanager
def raised_by_python(operation: str) -> Iterator[None]:
    """Around the trace's own evaluation, with Python, of one operation of the traced program
    on constants (`range(1.5)`, a key hashed, `format(1, "q")`): the TypeError, ValueError,
    KeyError or IndexError Python raises there is the program's, raised in the trace (where
    its `try` may catch it). Nothing else goes inside: there, such an error is dynamo's own."""
    try:
        yield
    except (TypeError, ValueError, KeyError, IndexError) as error:
        raise Raised(error.with_traceback(None),
                     f"{operation} raised {error_words(error)}") from None


def error_words(error: BaseException) -> str:
    """`Type: message` of an exception, for a warning or an error of dynamo's own; its type
    alone where its message cannot be made (a KeyError of an int too long to print, an
    exception whose `__str__` raises or recurses)."""
    try:
        return f"{type(error).__name__}: {error}"
    except Exception:
        return f"{type(error).__name__} (its message cannot be shown)"


class BackendError(RuntimeError):
    """A backend raised while compiling a graph."""
