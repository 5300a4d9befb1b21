"""Hand-written Triton kernels as steps of a graph: for what no loop nest of the IR expresses.

A sequential recursion (CTC loss's log-alpha over time, each step reading its neighbours'
values of the step before) is no Pointwise, Reduction or Scan, and a kernel per step costs a
launch per step. Its lowering writes the kernel by hand instead, as a `@triton.jit` function of
its own module, and adds a `TemplateKernel`: the buffer the kernel fills, the kernel, its
arguments (Buffers, read whole through their pointers, and ints or size expressions) and the
extent of its launch. Like an extern call it is a step of its own: it ends the kernel being
built, and every buffer it reads is stored. The wrapper copies the kernel's source into the
generated module and launches it through `runtime.Launcher` as a "persistent" kernel over
(`xnumel`, `rnumel`): programs of XBLOCK rows, each row one block of RBLOCK lanes. So its
arguments are the output buffer, then `args`, then `xnumel, rnumel, XBLOCK: tl.constexpr,
RBLOCK: tl.constexpr`.
"""

from __future__ import annotations

import hashlib
import inspect
from dataclasses import dataclass
from typing import Any

import sympy

from .ir import ExternBuffer


@dataclass
class TemplateKernel(ExternBuffer):
    """The buffer `kernel` (a `triton.jit` function) fills, reading `args`, launched over
    `xnumel` rows of `rnumel` lanes."""

    kernel: Any = None
    xnumel: sympy.Expr = sympy.Integer(1)
    rnumel: sympy.Expr = sympy.Integer(1)


def kernel_source(step: TemplateKernel, name: str) -> str:
    """The module text defining `step`'s kernel as `name`, and its launcher, also `name`."""
    function = step.kernel.fn  # (the Python function under `triton.jit`, or its interpreter)
    text = inspect.getsource(function)
    text = text[text.index(f"def {function.__name__}("):]  # (without the decorator)
    source = "@triton.jit\n" + text.replace(f"def {function.__name__}(", f"def {name}(", 1)
    digest = hashlib.sha256(source.encode()).hexdigest()[:16]
    return f"{source}\n\n{name} = runtime.Launcher({name}, 'persistent', {digest!r}, mutates=False)"
