"""The user's source line behind a traced op, for `node.meta["stack_trace"]`."""

from __future__ import annotations

import sys
import traceback

# Frames of these top-level modules are machinery, not the user's program.
_MACHINERY = frozenset(
    {"torch", "fakecore", "fxtrace", "contextlib", "functools", "sympy", "typing"}
)


def user_stack_trace(limit: int = 8) -> str:
    """The innermost user frames (outermost first), formatted as a traceback."""
    frames = []
    frame = sys._getframe(1)
    while frame is not None and len(frames) < limit:
        module = frame.f_globals.get("__name__", "")
        if module.partition(".")[0] not in _MACHINERY:
            frames.append((frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name))
        frame = frame.f_back
    summary = traceback.StackSummary.from_list([(f, n, name, None) for f, n, name in reversed(frames)])
    return "".join(summary.format())
