"""The errors fakecore raises, and how they find the user's line.

Every error names what went wrong in the user's terms: the aten op and the line of the user's
program that reached it. `user_frame()` finds that line by walking the Python stack past the
frames of torch, sympy and the stack's own packages.
"""

from __future__ import annotations

import sys

# Frames of these top-level modules are machinery, not the user's program.
_LIBRARY_MODULES = frozenset(
    {"torch", "sympy", "contextlib", "functools", "typing_extensions", "fakecore", "fxtrace",
     "guards", "dynamo", "inductor_lite"}
)


def user_frame() -> str | None:
    """'file:line in function' of the innermost frame that is the user's own code, or None."""
    frame = sys._getframe(1)
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if module.partition(".")[0] not in _LIBRARY_MODULES:
            return f"{frame.f_code.co_filename}:{frame.f_lineno} in {frame.f_code.co_name}"
        frame = frame.f_back
    return None


def _at_user_line(message: str) -> str:
    where = user_frame()
    return f"{message} (at {where})" if where else message


class DataDependentError(RuntimeError):
    """A decision needed the value of data the fake tensors do not have.

    Raised when a Python branch, a size or an index depends on an unbacked symbol (the result of
    `nonzero`, `item()`, ...), or when such an op runs in a mode without a ShapeEnv.
    """

    def __init__(self, message: str) -> None:
        super().__init__(_at_user_line(message))
        self.reason = message  # without the location (a tracer names the traced line itself)


class UnsupportedFakeOpError(RuntimeError):
    """An op has no meta kernel and no decomposition, so it cannot run on fake tensors."""

    def __init__(self, op: object, reason: str) -> None:
        super().__init__(_at_user_line(f"cannot fake {op}: {reason}"))
        self.op = op
        self.reason = f"cannot fake {op}: {reason}"  # without the location


class MixedRealFakeError(RuntimeError):
    """A real tensor met fake tensors in one op, and the mode does not convert real inputs."""

    def __init__(self, op: object) -> None:
        super().__init__(
            _at_user_line(
                f"{op} got a real tensor together with fake tensors; convert it with "
                "mode.from_tensor(t), or create the mode with allow_non_fake_inputs=True"
            )
        )
        self.op = op
