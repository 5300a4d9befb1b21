"""Scheduling: which computed buffers share a kernel, and which never reach memory.

Every `ComputedBuffer` iterates over a space: `(xnumel, rnumel)` — the number of outputs and the
number of elements each output combines (1 for a pointwise buffer). Buffers are taken in program
order and each joins the kernel being built when its space fits that kernel's and everything it
reads from that kernel is the element the same program computed (same index, so no other program
is involved):

- a pointwise buffer fits a pointwise kernel of the same numel;
- in a reduction kernel `(x, r)`, a reduction of the same `(x, r)` fits, and so does a pointwise
  buffer over `x * r` elements whose sizes split into an `x` part and an `r` part ("r-space":
  layer norm's normalised output) or over `x` elements ("x-space": a mean);
- a pointwise kernel whose sizes split that way becomes the prologue of a reduction;
- a scan (cumulative sum or product) along a dim of `r` elements is a node over `(x, r)` that
  computes every element of its rows at once; what follows it in the kernel reads its elements.

Extern calls (template kernels among them) end the current kernel. A buffer that only its own
kernel reads, and that is no output, is never stored: it is recomputed in registers where it is
read. Each node's index variables are expressed in the kernel's `xindex`/`rindex`, so comparing
what a buffer stores with what a later node loads is comparing two sympy expressions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import sympy

from .ir import (
    Buffer,
    BufferView,
    ComputedBuffer,
    ExternBuffer,
    FloorDiv,
    IndirectIndex,
    ModularIndexing,
    Reduction,
    Scan,
    Scatter,
    Value,
    product,
)

XINDEX = sympy.Symbol("xindex", integer=True, nonnegative=True)
RINDEX = sympy.Symbol("rindex", integer=True, nonnegative=True)


def unravel(var: sympy.Symbol, sizes: Sequence[sympy.Expr]) -> list[sympy.Expr]:
    """The digits of `var` in the mixed radix `sizes` (outermost first; size-1 dims are 0)."""
    out: list[sympy.Expr] = []
    first = next((d for d, s in enumerate(sizes) if s != 1), None)
    for d, s in enumerate(sizes):
        if s == 1:
            out.append(sympy.Integer(0))
            continue
        stride = product([t for t in sizes[d + 1:]])
        out.append(FloorDiv(var, stride) if d == first else ModularIndexing(var, stride, s))
    return out


def simplify_index(expr: sympy.Expr, ranges: dict | None = None) -> sympy.Expr:
    """Merge digits back into runs: `c*(v % m) + c*m*(v // m)` is `c*v`, and the same for
    `ModularIndexing` digits next to each other. With `ranges` (a kernel's index variables and
    their extents), digits of `k*q + v` with `0 <= v < k` are digits of `q` (or `v` itself),
    and digits are merged inside other digits too: what a reshape of a reshape leaves."""
    expr = sympy.expand(expr)
    if ranges:
        expr = _drop_remainders(expr, ranges)
    return _merge_digits(expr)


def _merge_digits(expr: sympy.Expr) -> sympy.Expr:
    """`expr` with neighbouring digits of one variable merged, until nothing merges."""
    changed = True
    while changed and isinstance(expr, sympy.Add):
        changed = False
        terms = [_split_term(t) for t in expr.args]
        for i, (ci, fi) in enumerate(terms):
            if not isinstance(fi, ModularIndexing):
                continue
            var, div, mod = fi.args
            for j, (cj, fj) in enumerate(terms):
                if i == j or not _same(cj, ci * mod):
                    continue
                merged = None
                if isinstance(fj, FloorDiv) and fj.args[0] == var and _same(fj.args[1], div * mod):
                    merged = FloorDiv(var, div)
                elif (isinstance(fj, ModularIndexing) and fj.args[0] == var
                      and _same(fj.args[1], div * mod)):
                    merged = ModularIndexing(var, div, mod * fj.args[2])
                if merged is not None:
                    rest = [c * f for k, (c, f) in enumerate(terms) if k not in (i, j)]
                    expr = sympy.expand(sympy.Add(*rest, ci * merged))
                    changed = True
                    break
            if changed:
                break
    return expr


def _drop_remainders(expr: sympy.Expr, ranges: dict) -> sympy.Expr:
    for _ in range(8):
        replaced = {}
        for f in expr.atoms(FloorDiv, ModularIndexing):
            simpler = _without_remainder(f, ranges)
            if simpler is not None and simpler != f:
                replaced[f] = simpler
        if not replaced:
            return expr
        expr = sympy.expand(expr.xreplace(replaced))
    return expr


def _without_remainder(f: sympy.Expr, ranges: dict) -> sympy.Expr | None:
    a, div = f.args[0], f.args[1]
    mod = f.args[2] if isinstance(f, ModularIndexing) else None
    if div == 0 or mod == 0:  # a dim of size 0: the kernel has nothing to index
        return None
    merged = _merge_digits(sympy.expand(a))
    if merged != a:
        return f.func(merged, *f.args[1:])
    terms = list(sympy.Add.make_args(sympy.expand(a)))
    if mod is not None and div.is_Integer and mod.is_Integer:
        # Terms that are multiples of div*mod do not change the digit.
        kept = [t for t in terms if not (t.as_coeff_Mul()[0] % (div * mod) == 0)]
        if len(kept) < len(terms):
            return ModularIndexing(sympy.Add(*kept), div, mod)
        if div == 1 and len(terms) == 1 and terms[0] in ranges and (ranges[terms[0]] - mod).is_nonpositive:
            return terms[0]  # v % m with v < m
    for t in terms:
        extent = ranges.get(t)
        rest = [u for u in terms if u is not t]
        if extent is None or not rest or not div.is_Integer:
            continue
        k = sympy.gcd_list([u.as_coeff_Mul()[0] for u in rest])
        if k.is_Integer and k > 1 and (extent - k).is_nonpositive and div % k == 0:
            q = sympy.expand(sympy.Add(*rest) / k)
            return FloorDiv(q, div // k) if mod is None else ModularIndexing(q, div // k, mod)
    return None


def _split_term(term: sympy.Expr) -> tuple[sympy.Expr, sympy.Expr]:
    """`term` as (coefficient, the one FloorDiv/ModularIndexing factor) where it has one."""
    if isinstance(term, (FloorDiv, ModularIndexing)):
        return sympy.Integer(1), term
    if isinstance(term, sympy.Mul):
        funcs = [a for a in term.args if isinstance(a, (FloorDiv, ModularIndexing))]
        if len(funcs) == 1:
            return sympy.Mul(*[a for a in term.args if a is not funcs[0]]), funcs[0]
    return term, sympy.Integer(1)


def _same(a: sympy.Expr, b: sympy.Expr) -> bool:
    return a == b or sympy.expand(a - b) == 0


@dataclass
class NodeInKernel:
    """A computed buffer placed in a kernel: its index variables in kernel coordinates."""

    buffer: ComputedBuffer
    index: list[sympy.Expr]
    rindex: list[sympy.Expr]
    # "x" (one value per output), "r" (per element of the reduced space), "red", "scan"
    space: str


@dataclass
class Kernel:
    """One generated kernel: nodes in program order over `xnumel` outputs of `rnumel` each."""

    name: str
    xnumel: sympy.Expr
    rnumel: sympy.Expr
    nodes: list[NodeInKernel] = field(default_factory=list)
    stored: set[str] = field(default_factory=set)

    @property
    def is_reduction(self) -> bool:
        return self.rnumel != 1

    def node(self, name: str) -> NodeInKernel | None:
        return next((n for n in self.nodes if n.buffer.name == name), None)


def space_of(buffer: ComputedBuffer) -> tuple[sympy.Expr, sympy.Expr]:
    data = buffer.data
    if isinstance(data, Reduction):
        return product(data.size), product(data.rsize)
    if isinstance(data, Scan):
        return product(_rows(data)), data.size[data.dim]
    return product(data.size), sympy.Integer(1)


def _rows(scan: Scan) -> list[sympy.Expr]:
    return [n for d, n in enumerate(scan.size) if d != scan.dim]


def place(buffer: ComputedBuffer, xnumel: sympy.Expr, rnumel: sympy.Expr) -> NodeInKernel | None:
    """`buffer`'s loop variables in a kernel over (xnumel, rnumel), or None if it does not fit."""
    data = buffer.data
    if isinstance(data, Reduction):
        if _same(product(data.size), xnumel) and _same(product(data.rsize), rnumel):
            return NodeInKernel(buffer, unravel(XINDEX, data.size), unravel(RINDEX, data.rsize),
                                "red")
        return None
    if isinstance(data, Scan):
        if not (_same(product(_rows(data)), xnumel) and _same(data.size[data.dim], rnumel)):
            return None
        index = unravel(XINDEX, _rows(data))
        index.insert(data.dim, RINDEX)
        return NodeInKernel(buffer, index, [], "scan")
    size, numel = data.size, product(data.size)
    if rnumel == 1 or _same(numel, xnumel):
        if _same(numel, xnumel):
            return NodeInKernel(buffer, unravel(XINDEX, size), [], "x")
        return None
    if not _same(numel, xnumel * rnumel):
        return None
    for k in range(len(size) + 1):
        if _same(product(size[:k]), xnumel) and _same(product(size[k:]), rnumel):
            return NodeInKernel(buffer, unravel(XINDEX, size[:k]) + unravel(RINDEX, size[k:]), [],
                                "r")
    return None


def body(node: NodeInKernel) -> Value:
    data = node.buffer.data
    if isinstance(data, Reduction):
        return data.fn(node.index, node.rindex)
    return data.fn(node.index)


def loads(value: Value, out: list | None = None, seen: set | None = None) -> list:
    """Every (buffer name, index) loaded by a Value tree."""
    out = [] if out is None else out
    seen = set() if seen is None else seen
    if value in seen:
        return out
    seen.add(value)
    if value.op == "load":
        out.append(value.args[:2])
    for a in value.args:
        if isinstance(a, Value):
            loads(a, out, seen)
    for a in value.args:
        if isinstance(a, sympy.Expr):
            for s in a.free_symbols:
                if isinstance(s, IndirectIndex):
                    loads(s.value, out, seen)
    return out


def node_reads(node: NodeInKernel) -> list:
    """Every (buffer name, index) a node loads: its body's, and a scatter's index loads."""
    out = loads(body(node))
    if isinstance(node.buffer.data, Scatter):
        for s in node.buffer.data.target(node.index).free_symbols:
            if isinstance(s, IndirectIndex):
                loads(s.value, out)
    return out


def store_index(node: NodeInKernel, ranges: dict | None = None) -> sympy.Expr:
    data = node.buffer.data
    if isinstance(data, Scatter):
        return simplify_index(data.target(node.index), ranges)
    return simplify_index(node.buffer.layout.index(node.index), ranges)


def ranges_of(kernel: Kernel) -> dict:
    return {XINDEX: kernel.xnumel, RINDEX: kernel.rnumel}


def _fits(kernel: Kernel, node: NodeInKernel, node_loads: list) -> bool:
    """Whatever `node` reads from `kernel` is the element computed by the same program."""
    for name, index in node_loads:
        producer = kernel.node(name)
        if producer is None:
            continue
        if producer.buffer.mutates is not None:
            return False
        if producer.space in ("r", "scan") and node.space == "x":
            return False
        ranges = ranges_of(kernel)
        if not _same(simplify_index(index, ranges), store_index(producer, ranges)):
            return False
    return True


def _reads_mutated(kernel: Kernel, node_loads: list) -> bool:
    written = {n.buffer.mutates for n in kernel.nodes if n.buffer.mutates}
    return any(name in written for name, _ in node_loads)


def schedule(buffers: Sequence[Buffer], outputs: Sequence[object]) -> list[Kernel | ExternBuffer]:
    """Group `buffers` (program order) into kernels and extern calls; mark what is stored."""
    steps: list[Kernel | ExternBuffer] = []
    current: Kernel | None = None
    node_loads: dict[str, list] = {}
    for buffer in buffers:
        if isinstance(buffer, ExternBuffer):
            steps.append(buffer)
            current = None
            continue
        if not isinstance(buffer, ComputedBuffer):
            continue
        x, r = space_of(buffer)
        placed = None
        if current is not None and buffer.mutates is None and not any(
                n.buffer.mutates for n in current.nodes):
            placed = place(buffer, current.xnumel, current.rnumel)
            if placed is None and not current.is_reduction and r != 1:
                placed = _as_prologue(current, buffer, x, r)
            if placed is not None:
                node_loads[buffer.name] = node_reads(placed)
                if not _fits(current, placed, node_loads[buffer.name]) or _reads_mutated(
                        current, node_loads[buffer.name]):
                    placed = None
        if placed is None:
            current = Kernel(f"kernel{sum(isinstance(s, Kernel) for s in steps)}", x, r)
            steps.append(current)
            placed = place(buffer, x, r)
            node_loads[buffer.name] = node_reads(placed)
        current.nodes.append(placed)
    _mark_stored(steps, outputs, node_loads)
    return steps


def _as_prologue(kernel: Kernel, buffer: ComputedBuffer, x: sympy.Expr,
                 r: sympy.Expr) -> NodeInKernel | None:
    """Turn a pointwise kernel into a reduction kernel (x, r) if all its nodes split so."""
    replaced = [place(n.buffer, x, r) for n in kernel.nodes]
    if any(n is None or n.space != "r" for n in replaced):
        return None
    kernel.xnumel, kernel.rnumel, kernel.nodes = x, r, replaced
    return place(buffer, x, r)


def _mark_stored(steps: list, outputs: Sequence[object], node_loads: dict[str, list]) -> None:
    """A kernel stores a buffer when anything outside that kernel reads it."""
    home = {n.buffer.name: s for s in steps if isinstance(s, Kernel) for n in s.nodes}
    needed: set[str] = set()
    for out in outputs:
        if isinstance(out, BufferView):
            needed.add(out.buffer.name)
        elif isinstance(out, Buffer):
            needed.add(out.name)
    for step in steps:
        if isinstance(step, ExternBuffer):
            needed |= extern_reads(step)
        else:
            for n in step.nodes:
                if n.buffer.mutates:
                    needed |= {n.buffer.name, n.buffer.mutates}
                for name, _ in node_loads[n.buffer.name]:
                    if home.get(name) is not step:
                        needed.add(name)
    for step in steps:
        if isinstance(step, Kernel):
            step.stored = {n.buffer.name for n in step.nodes if n.buffer.name in needed}


def extern_reads(step: ExternBuffer) -> set[str]:
    names: set[str] = set()

    def visit(a: object) -> None:
        if isinstance(a, BufferView):
            names.add(a.buffer.name)
        elif isinstance(a, Buffer):
            names.add(a.name)
        elif isinstance(a, (list, tuple)):
            for b in a:
                visit(b)
        elif isinstance(a, dict):
            for b in a.values():
                visit(b)
    visit(step.args)
    visit(step.kwargs)
    if step.parent is not None:
        names.add(step.parent)
    return names

