"""What a graph that `make_fx` traced with symbolic sizes assumes of its inputs' sizes.

A symbolic trace decides on the example inputs' sizes as it goes: two dims of equal size share
one symbol (duck sizing), sizes 0 and 1 become constants, a branch on a size records a guard
in the trace's ShapeEnv. No frontend's guards check a graph traced by hand, so the compiled
graph checks them itself at every call (`TracedSizes`), with a few comparisons generated once,
and a call that breaks one raises ValueError naming the input, the dim and the relation.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import sympy
import torch

from fakecore import ShapeEnv


def symbol_expr(n: torch.SymInt) -> sympy.Expr:
    """The expression a SymInt was created as, also when a guard has since fixed its value."""
    return getattr(n.node, "_expr", n.node.expr)


def lambdified(expr: sympy.Basic, variables: dict[sympy.Symbol, str], env: dict) -> str:
    """Python computing `expr` from the variables holding its symbols: a call of the function
    sympy makes of it, put into `env` (the namespace of the generated check)."""
    fn = f"e{len(env)}"
    symbols = sorted(expr.free_symbols, key=str)
    env[fn] = sympy.lambdify(symbols, expr, modules="math")
    return f"{fn}({', '.join(variables[s] for s in symbols)})"


class TracedSizes:
    """What a graph traced with symbolic sizes by `make_fx` (no frontend's guards check it)
    assumes of its inputs' sizes: the placeholders' values and the trace's ShapeEnv
    (`gm.shape_env`). Each dim that the trace gave a symbol its input's size binds; a symbol
    that stands for several dims (duck sizing: sizes equal in the example share one) or ints
    needs them equal at every call; a dim the trace specialised (0 or 1) keeps its size; each
    symbol stays in its range (a size symbol is at least 2: the trace decided `s0 == 1` false
    without a guard) and the guards the trace recorded (`Eq(s0, 8)` where a branch compared
    the size with 8, `Eq(s1, s0)` where an int met a size) hold. The graph as traced is right
    only where they hold, whatever version runs it (or the graph as it came): a call where one
    fails raises ValueError naming the input, the dim and the relation.

    `check(args)` is generated as straight-line Python (its text is `.source`), built once:
    a rank and a read per input dim, a comparison per shared or specialised dim, one per
    symbol's bound and one call for all the guards."""

    def __init__(self, source: str, env: dict[str, Any],
                 failures: list[Callable[[tuple], str]]) -> None:
        self.source = source
        exec(compile(source, "<inductor_lite traced sizes>", "exec"), env)
        self._first_failure = env["first_failure"]
        self._failures = failures

    @classmethod
    def of(cls, gm: torch.fx.GraphModule, example_inputs: list | None = None
           ) -> TracedSizes | None:
        """The sizes `gm` assumes (and the float and bool arguments of `example_inputs` it
        holds as constants), or None when it has nothing to check: a graph without
        symbols of its own ShapeEnv (traced with static sizes: it is run as it came, sizes it
        fixed stay fixed), or a frontend's (`gm.meta["shape_env"]`: its guards check them)."""
        shape_env = getattr(gm, "shape_env", None)
        if not isinstance(shape_env, ShapeEnv) or "shape_env" in gm.meta:
            return None
        placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
        vals = [n.meta.get("val") for n in placeholders]

        def ours(n: Any) -> bool:
            return isinstance(n, torch.SymInt) and getattr(n.node, "shape_env", None) is shape_env
        if not any(ours(v) or isinstance(v, torch.Tensor) and any(map(ours, v.shape))
                   for v in vals):
            return None
        # a float (or bool) argument is a constant of the trace (no placeholder value): the
        # graph computes with the example's value whatever it is given
        consts = {i: e for i, (v, e) in enumerate(zip(vals, example_inputs or ()))
                  if v is None and type(e) in (float, bool)}
        return _traced_sizes(shape_env, [str(n.target) for n in placeholders], vals, consts)

    def check(self, args: Any) -> None:
        """Raise ValueError when `args` break an assumption of the trace."""
        failed = self._first_failure(args)
        if failed is not None:
            raise ValueError(f"compile_fx: {self._failures[failed](args)}")


def _traced_sizes(shape_env: ShapeEnv, names: list[str], vals: list,
                  consts: dict[int, Any] | None = None) -> TracedSizes:
    lines = [f"if len(args) != {len(vals)}: return 0"]
    failures: list[Callable[[tuple], str]] = [
        lambda args: f"the graph takes {len(vals)} inputs ({', '.join(names)}), got {len(args)}"]
    env: dict[str, Any] = {"Tensor": torch.Tensor}
    # symbol -> its variable in the check, where it is read (in words), and a reader of it
    bound: dict[sympy.Symbol, tuple[str, str, Callable[[tuple], Any]]] = {}

    def fail(condition: str, message: Callable[[tuple], str]) -> None:
        lines.append(f"if {condition}: return {len(failures)}")
        failures.append(message)

    def where(i: int, what: str = "", d: int | None = None) -> str:
        return f"input {i} ({names[i]!r})" + (f" {what} {d}" if what else "")

    # (code, words, reader, expression, whether it is a size or int): what binds symbols
    places: list[tuple[str, str, Callable[[tuple], Any], sympy.Expr, bool]] = []
    for i, v in enumerate(vals):
        if isinstance(v, torch.SymInt):
            expr = symbol_expr(v)
            fail(f"type(args[{i}]) is not int",
                 lambda args, i=i, expr=expr: f"{where(i)} is {type(args[i]).__name__} "
                 f"{args[i]!r}: the graph was traced with an int there ({expr})")
            places.append((f"args[{i}]", where(i), lambda args, i=i: args[i], expr, True))
        elif isinstance(v, torch.Tensor):
            rank = v.dim()
            fail(f"not isinstance(args[{i}], Tensor) or args[{i}].dim() != {rank}",
                 lambda args, i=i, rank=rank: f"{where(i)} is " + (
                     f"a tensor of {args[i].dim()} dims" if isinstance(args[i], torch.Tensor)
                     else type(args[i]).__name__) +
                 f": the graph was traced with a tensor of {rank} dims there")
            lines.append(f"size{i} = args[{i}].shape")
            places += [(f"size{i}[{d}]", where(i, "dim", d),
                        lambda args, i=i, d=d: args[i].shape[d],
                        symbol_expr(n) if isinstance(n, torch.SymInt) else sympy.Integer(n), True)
                       for d, n in enumerate(v.shape)]
            if v.layout is torch.strided:  # a stride that is a symbol of its own binds it too
                places += [(f"args[{i}].stride({d})", where(i, "stride", d),
                            lambda args, i=i, d=d: args[i].stride(d), symbol_expr(n), False)
                           for d, n in enumerate(v.stride()) if isinstance(n, torch.SymInt)]
    for i, value in (consts or {}).items():
        env[f"c{i}"] = repr(value)
        # (repr tells every two floats apart, -0.0 from 0.0, and a NaN from none but a NaN)
        fail(f"type(args[{i}]) is not {type(value).__name__} or repr(args[{i}]) != c{i}",
             lambda args, i=i, value=value: f"{where(i)} is {args[i]!r}: the graph was traced "
             f"with {value!r} there, a constant of the trace (make_fx traces a "
             f"{type(value).__name__} argument as a constant); trace it again with this value")
    later = []  # sizes that are expressions of symbols: compared once every symbol is bound
    for code, place, read, expr, is_size in places:
        if expr.is_Symbol and expr not in bound:
            bound[expr] = (f"v{len(bound)}", place, read)
            lines.append(f"v{len(bound) - 1} = {code}")
        elif not is_size:
            continue  # (strides: only read, where a symbol of their own is not yet bound)
        elif expr.is_Integer:
            fail(f"{code} != {int(expr)}",
                 lambda args, place=place, read=read, n=int(expr):
                 f"{place} is {read(args)}: the graph was traced with that size fixed at {n} "
                 "(a symbolic trace specialises sizes 0 and 1)")
        elif expr.is_Symbol:
            variable, first, first_read = bound[expr]
            fail(f"{code} != {variable}",
                 lambda args, place=place, read=read, first=first, first_read=first_read,
                 expr=expr: f"{place} is {read(args)} but {first} is {first_read(args)}: the "
                 f"graph was traced with them equal (one symbol, {expr}: sizes equal in the "
                 "example share one) and assumes they stay equal; trace it with examples "
                 "whose sizes differ where they may differ")
        else:
            later.append((code, place, read, expr))

    def value_of(expr: sympy.Basic) -> str:
        return lambdified(expr, {s: variable for s, (variable, _, _) in bound.items()}, env)

    for code, place, read, expr in later:
        if expr.free_symbols <= bound.keys():
            fail(f"{code} != {value_of(expr)}",
                 lambda args, place=place, read=read, expr=expr:
                 f"{place} is {read(args)}: the graph was traced with it equal to {expr}")
    facts: list[sympy.Basic] = []  # the ranges, then the guards

    def assumptions(args: tuple) -> str:
        """The facts this call breaks, in words."""
        values = {s: sympy.Integer(read(args)) for s, (_, _, read) in bound.items()}
        broken = [f for f in facts if f.xreplace(values) is not sympy.true]
        # a guard that fixed a size narrowed its range too: the guard says why
        broken = [f for f in broken if facts.index(f) >= ranges] or broken
        symbols = sorted(set().union(*(f.free_symbols for f in broken)), key=str)
        read = ", ".join(f"{bound[s][1]} ({s}) is {values[s]}" for s in symbols)
        return (f"{read}: the graph was traced assuming {' and '.join(map(str, broken))} "
                "(its trace decided on the sizes of the example inputs); trace it again with "
                "examples like these")

    for symbol, (variable, _, _) in bound.items():  # a size symbol is at least 2
        bounds = shape_env.var_to_range.get(symbol)
        for edge, relation, op in ((getattr(bounds, "lower", None), sympy.Ge, "<"),
                                   (getattr(bounds, "upper", None), sympy.Le, ">")):
            if edge is not None and edge.is_finite and relation(symbol, edge) is not sympy.true:
                facts.append(relation(symbol, edge))
                fail(f"{variable} {op} {int(edge)}", assumptions)
    # the guards the trace recorded over the inputs' symbols (ones over symbols no input binds,
    # data-dependent sizes, are the graph's runtime asserts)
    ranges = len(facts)
    guards = [g.expr for g in shape_env.guards if g.expr.free_symbols <= bound.keys()]
    if guards:
        facts += guards
        lines += ["try:", f"    holds = {value_of(sympy.And(*guards))}",
                  "except (ArithmeticError, ValueError):  # a size of 0 divides",
                  "    holds = False"]
        fail("not holds", assumptions)
    lines.append("return None")
    source = "def first_failure(args):\n" + "".join(f"    {line}\n" for line in lines)
    return TracedSizes(source, env, failures)
