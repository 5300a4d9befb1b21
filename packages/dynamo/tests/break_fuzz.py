"""A seeded fuzzer for graph breaks at any position, for `dynamo.compile` (backend "eager").

A seed makes a case: a function `f(x, n, log)` of a tensor, an int and a list, and a few helper
functions it calls (a helper may call an earlier one), all built from randomly nested statements:
assignments of tensor arithmetic, `for`/`while` loops with `break`/`continue`/`else`, `if` on
Python values and on tensor values, `with` blocks (`torch.no_grad()`, `torch.enable_grad()` and
`Ctx`, a context manager class that appends to `log`), `try`/`except`/`finally` whose body may
raise, and early `return`s. Break points are sprinkled over statements and sub-expressions:
`print(..., file=SINK)`, `dynamo.graph_break()`, `note(log, v)` (appends `v` to `log`, returns
it), `.item()`/`.tolist()` used in Python arithmetic, and conditional expressions, chained
comparisons and `while` conditions on a tensor's value; so a break lands inside loops, blocks,
handlers, callees and deep in the value stack (a call's arguments, a subscript, a list
comprehension, a `return` expression). The case's source runs twice, eagerly and compiled,
each in its own namespace; each of two input sets is called twice. Any difference is a
failure: the return value (values, dtype, requires_grad), the exception (type and message),
`log`, the printed text, grad mode, the input `x` afterwards or the module global `COUNT`.

Seeds from 1,000,000 (`EXTENDED_SEEDS`) also draw: generator helpers (`yield` in a loop with
breaks in it, `yield from`) consumed by `for` loops, `next`, `list` and `sum`; `match` statements
(literal, sequence, mapping and class patterns, with guards); `global COUNT` and `nonlocal k`
writes; `del` of locals, list items and dict keys; dict and set comprehensions; `for v in` a
tensor; augmented assignment to list items and to attributes of a `Box`; and calls with `*args`
and `**kwargs`. Their draws are added to the older kinds' lists, so seeds below it make the cases
they always made.

    python packages/dynamo/tests/break_fuzz.py --start 0 --n 300   # a sweep of seeds
    python packages/dynamo/tests/break_fuzz.py --seed 17 --show      # one case, its source
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import random
import sys
import time
import traceback
import warnings

import torch

import dynamo

PRELUDE = '''
import io
import torch
import dynamo
SINK = io.StringIO()
class Ctx:
    def __init__(self, log, tag):
        self.log = log
        self.tag = tag
    def __enter__(self):
        self.log.append(("enter", self.tag))
        return self
    def __exit__(self, kind, value, tb):
        self.log.append(("exit", self.tag, kind is not None))
        return False
def note(log, v):
    log.append(v)
    return v
'''

# What the extended seeds' functions also use: a global counter, a small user object with match
# arguments, and a helper taking `*args` and `**kwargs`.
EXTENDED_PRELUDE = '''
COUNT = 0
class Box:
    __match_args__ = ("v",)
    def __init__(self, v):
        self.v = v
        self.hits = 0
def spread(*args, **kwargs):
    kwargs["log"].append(len(args))
    return sum(args[1:], args[0]) * kwargs.get("scale", 1)
'''

TENSOR_NAMES = ("x", "a", "b")

# Seeds from here on also draw the constructs of the module docstring's second paragraph.
EXTENDED_SEEDS = 1_000_000


@dataclasses.dataclass
class Case:
    seed: int
    source: str


class _Generator:
    """Writes one case's source; `depth` bounds the nesting of statements and expressions."""

    def __init__(self, rng: random.Random, extended: bool) -> None:
        self.rng = rng
        self.extended = extended
        self.helpers: list[str] = []  # names of the helpers written so far
        self.generators: list[str] = []  # names of the generator helpers written so far
        # whether the function being written has `bump`, a closure that writes its cell `k`
        # (a break after it makes the whole frame run eagerly, so only some functions have it)
        self.bumps = False
        self.tags = 0

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    # ----- expressions (each a tensor of x's shape) -----

    def tensor(self, depth: int) -> str:
        rng = self.rng
        if depth <= 0 or self.chance(0.3):
            return rng.choice(TENSOR_NAMES)
        e = self.tensor(depth - 1)
        kinds = [
            lambda: f"({e} + {self.tensor(depth - 1)})",
            lambda: f"({e} * {rng.choice(['0.5', '2', 'n', '-1'])})",
            lambda: f"{e}.sin()",
            lambda: f"torch.relu({e})",
            lambda: f"note(log, {e})",
            lambda: f"(print('p', n, file=SINK) or {e})",
            lambda: f"({e} + x.sum().item())",
            lambda: f"({e} * len(x.tolist()))",
            lambda: f"({e} * (1 if x.sum().item() > 0 else 2))",
            lambda: f"({e} if {self.tensor(depth - 1)}.sum() > 0 else {self.tensor(depth - 1)})",
            lambda: f"({e} if 0 < n < 4 else {self.tensor(depth - 1)})",
            lambda: f"({e} if -1 < x.max() < 1 else {self.tensor(depth - 1)})",
            lambda: f"[{e}, {self.tensor(depth - 1)}][n % 2]",
            lambda: f"sum([{e} * j for j in range(2)])",
            lambda: f"torch.stack([{e}, {self.tensor(depth - 1)}]).sum(0)",
            lambda: f"sum({e} * j for j in range(3))",
            lambda: f"torch.where({self.tensor(depth - 1)} > 0, {e}, other=note(log, b))",
            lambda: f"(y := {e})",
            lambda: f"(lambda t: note(log, t) * k)({e})",
            lambda: f"inner({e})",
            lambda: f"({e} if 0 < note(log, n) < 4 else a)",
            lambda: f"max({e}.sum().item(), 0) * {e}",
        ]
        if self.helpers:
            kinds.append(lambda: f"{rng.choice(self.helpers)}({e}, n, log)")
        if self.extended:
            kinds += self.extended_tensors(e, depth)
        return rng.choice(kinds)()

    def extended_tensors(self, e: str, depth: int) -> list:
        rng = self.rng
        kinds = [
            lambda: f"sum({{j: {e} * j for j in range(3)}}.values())",
            lambda: f"{{f'k{{j}}': {e} + j for j in range(2)}}['k1']",
            lambda: f"({e} * len({{round(v, 1) for v in x.tolist()}}))",
            lambda: f"({e} + sum(v * 2 for v in {rng.choice(TENSOR_NAMES)}))",  # (no `:=` there)
            lambda: f"({e} * COUNT)",
            lambda: f"spread({e}, {self.tensor(depth - 1)}, log=log, scale={rng.choice(['2', 'n'])})",
            lambda: f"spread(*[{e}, b], **{{'log': log}})",
            lambda: f"(box.v + {e})",
        ]
        if self.bumps:
            kinds.append(lambda: f"bump({e})")
        if self.helpers:
            helper = rng.choice(self.helpers)
            kinds += [lambda: f"{helper}(*[{e}, n, log])",
                      lambda: f"{helper}({e}, *[n], **{{'log': log}})",
                      lambda: f"{helper}(**{{'t': {e}, 'n': n, 'log': log}})"]
        if self.generators:
            g = rng.choice(self.generators)
            kinds += [lambda: f"({e} + sum({g}({e}, n, log)))",
                      lambda: f"next({g}({e}, n, log))",
                      lambda: f"torch.stack([{e}, *list({g}(a, n, log))]).sum(0)",
                      lambda: f"({e} + sum(v for v in {g}(b, n, log) if v.sum() > 0))"]
        return kinds

    def condition(self) -> str:
        rng = self.rng
        return rng.choice([
            "n > 2", "n % 2 == 0", f"{rng.choice(TENSOR_NAMES)}.sum() > 0",
            f"{rng.choice(TENSOR_NAMES)}.max().item() > 0.5", "x.tolist()[0] < 0", "len(log) > 2",
        ])

    # ----- statements (lists of lines, indented by the caller) -----

    def block(self, depth: int, in_loop: bool, size: int = 2) -> list[str]:
        lines: list[str] = []
        for _ in range(self.rng.randint(1, size)):
            lines += self.statement(depth, in_loop)
        return lines

    def statement(self, depth: int, in_loop: bool) -> list[str]:
        rng = self.rng
        simple = [
            lambda: [f"{rng.choice(TENSOR_NAMES[1:])} = {self.tensor(depth)}"],
            lambda: [f"acc = acc + {self.tensor(depth)}"],
            lambda: ["print('s', n, len(log), file=SINK)"],
            lambda: ["dynamo.graph_break()"],
            lambda: [f"log.append(round({rng.choice(TENSOR_NAMES)}.sum().item(), 3))"],
            lambda: [f"k = k + int({rng.choice(TENSOR_NAMES)}.sum().item() > 0)"],
            lambda: [f"{rng.choice(TENSOR_NAMES[1:])}.mul_({rng.choice(['2', 'n', 'k'])})"],
            lambda: [f"acc += {self.tensor(depth)}"],
            lambda: [f"a, b = b, {self.tensor(depth)}"],
            lambda: ["print(f'{x.sum().item():.3f}', k, file=SINK)"],
            lambda: ["log.extend(x.tolist()[:2])"],
            lambda: ["torch.set_grad_enabled(n > 3)"],
            lambda: ["def inner(t):", "    dynamo.graph_break()", "    return t * k + a"],
        ]
        if in_loop:
            simple += [lambda: [f"if {self.condition()}:", "    break"],
                       lambda: [f"if {self.condition()}:", "    continue"]]
        if self.extended:
            simple += self.extended_statements(depth)
        if depth <= 0 or self.chance(0.45):
            return rng.choice(simple)()
        nested = [self.for_loop, self.while_loop, self.if_statement, self.with_block,
                  self.try_statement, self.early_return]
        if self.extended:
            nested += [self.match_statement, self.for_over_tensor]
            if self.generators:
                nested.append(self.for_over_generator)
        return rng.choice(nested)(depth - 1, in_loop)

    def extended_statements(self, depth: int) -> list:
        rng = self.rng
        kinds = [
            lambda: [f"COUNT += {rng.choice(['1', 'n', 'len(log)'])}"],
            lambda: ["COUNT = COUNT * 2 + int(x.sum().item() > 0)"],
            lambda: [f"tmp = {self.tensor(depth)}", "acc = acc + tmp", "del tmp"],
            lambda: ["del y"],
            lambda: ["if len(items) > 1:", "    del items[0]"],
            lambda: [f"items.append({self.tensor(depth)})"],
            lambda: [f"items[-1] += {self.tensor(depth)}"],
            lambda: ["if 'p' in d:", "    del d['p']"],
            lambda: [f"d[{rng.choice(['n', 'k', repr('p')])}] = {self.tensor(depth)}"],
            lambda: ["acc = acc + sum(d.values(), a * 0) + sum(items, a * 0)"],
            lambda: [f"box.v += {self.tensor(depth)}"],
            lambda: ["box.hits += 1", "log.append(box.hits)"],
        ]
        if self.bumps:
            kinds.append(lambda: [f"acc = acc + bump({self.tensor(depth)})"])
        return kinds

    def match_statement(self, depth: int, in_loop: bool) -> list[str]:
        subject, cases = self.rng.choice([
            ("n", ["case 2 | 3:", "case m if m > k:"]),
            ("[n, k]", ["case [2, _]:", "case [p, q] if p < q:", "case [p, *rest] if x.sum() > 0:"]),
            ("{'n': n, 't': a}", ["case {'n': 5, 't': tt} if tt.sum() > 0:", "case {'n': 2}:"]),
            ("box", ["case Box(v=vv) if vv.max() > 0:", "case Box(vv) if len(log) > 1:"]),
            ("(n, a)", ["case (5, tt):", "case (_, tt) if tt.max().item() > 0.5:"]),
        ])
        lines = [f"match {subject}:"]
        for case in cases:
            lines += self.indented([case, *self.indented(self.block(depth, in_loop))])
        if self.chance(0.6):
            lines += self.indented(["case _:", *self.indented(self.block(depth, in_loop, 1))])
        return lines

    def for_over_tensor(self, depth: int, in_loop: bool) -> list[str]:
        iterated = self.rng.choice([*TENSOR_NAMES, "torch.stack([a, b])", "x.view(2, 2)"])
        return [f"for v in {iterated}:",
                *self.indented(["acc = acc + v.sum()", *self.block(depth, True)])]

    def for_over_generator(self, depth: int, in_loop: bool) -> list[str]:
        g = self.rng.choice(self.generators)
        return [f"for v in {g}({self.tensor(depth)}, n, log):",
                *self.indented(["acc = acc + v", *self.block(depth, True)])]

    def indented(self, lines: list[str]) -> list[str]:
        return ["    " + line for line in lines]

    def for_loop(self, depth: int, in_loop: bool) -> list[str]:
        lines = [f"for i in range({self.rng.choice(['n', '3', 'len(log) % 3 + 1'])}):"]
        lines += self.indented(["k = k + i", *self.block(depth, True)])
        if self.chance(0.3):
            lines += ["else:", *self.indented(self.block(depth, in_loop, 1))]
        return lines

    def while_loop(self, depth: int, in_loop: bool) -> list[str]:
        if self.chance(0.4):  # a data-dependent condition that ends
            return ["w = x.abs() + 2", "while w.max() > 1:",
                    *self.indented(["w = w * 0.5", *self.block(depth, False, 1)]),
                    "acc = acc + w"]
        self.tags += 1
        j = f"j{self.tags}"  # a counter of its own: a nested loop must not reset it
        lines = [f"{j} = 0", f"while {j} < n:"]
        lines += self.indented([f"{j} = {j} + 1", *self.block(depth, True)])
        if self.chance(0.3):
            lines += ["else:", *self.indented(self.block(depth, in_loop, 1))]
        return lines

    def if_statement(self, depth: int, in_loop: bool) -> list[str]:
        lines = [f"if {self.condition()}:", *self.indented(self.block(depth, in_loop))]
        if self.chance(0.5):
            lines += ["else:", *self.indented(self.block(depth, in_loop))]
        return lines

    def with_block(self, depth: int, in_loop: bool) -> list[str]:
        self.tags += 1
        manager = self.rng.choice([
            "torch.no_grad()", "torch.enable_grad()", f"Ctx(log, {self.tags})",
            f"Ctx([log, note(log, n)][0], {self.tags}), torch.no_grad()", "torch.set_grad_enabled(n > 3)",
        ])
        return [f"with {manager}:", *self.indented(self.block(depth, in_loop))]

    def try_statement(self, depth: int, in_loop: bool) -> list[str]:
        rng = self.rng
        body = self.block(depth, in_loop)
        if self.chance(0.6):
            error = rng.choice(["ValueError('bad')", "KeyError(n)", "ZeroDivisionError('z')"])
            raising = [f"if {self.condition()}:", f"    raise {error}"]
            body = raising + body if self.chance(0.5) else body + raising
        lines = ["try:", *self.indented(body)]
        caught = rng.choice(["ValueError", "(KeyError, ValueError)", "Exception"])
        if self.chance(0.8):
            lines += [f"except {caught} as e:",
                      *self.indented(["log.append(repr(e))", *self.block(depth, in_loop, 1)])]
        if self.chance(0.5) or len(lines) == 1 + len(body):
            lines += ["finally:", *self.indented(["log.append('finally')",
                                                  *self.block(depth, in_loop, 1)])]
        return lines

    def early_return(self, depth: int, in_loop: bool) -> list[str]:
        return [f"if {self.condition()}:", f"    return {self.tensor(depth + 1)}"]

    # ----- functions -----

    def function(self, name: str, first: str, depth: int) -> list[str]:
        body = self.locals(first)
        body += self.block(depth, False, 3)
        if first == "x" and self.chance(0.3):
            body.append(f"return acc, k, [y, {self.tensor(2)}]")
        else:
            body.append(f"return {self.rng.choice(['acc + a * b + k', self.tensor(2) + ' + acc * k'])}")
        parameters = "t, n, log" if first != "x" else "x, n, log"
        return [f"def {name}({parameters}):", *self.indented(body)]

    def locals(self, first: str) -> list[str]:
        """The first lines of a function: the locals its statements use."""
        body = [f"a = {first} * 1", f"b = {first} + 1", f"acc = {first} * 0", "k = 0", "y = a",
                "def inner(t):", "    return t * k + b"]
        if first != "x":
            body.insert(0, "x = t")
        if self.extended:
            body = ["global COUNT", *body, "items = [a, b]", "d = {'p': a}", "box = Box(b)"]
            self.bumps = self.chance(0.3)
            if self.bumps:
                body += ["def bump(v):", "    nonlocal k", "    k = k + 1", "    return v"]
            else:  # no closure over a cell the function writes: most frames can be captured
                body[body.index("    return t * k + b")] = "    return t * 2 + 1"
        return body

    def generator(self, name: str) -> list[str]:
        """A generator helper: yields in a loop whose body may break the graph or end it early."""
        body = self.locals("t")
        loop = ["k = k + i", *self.block(1, True), f"yield {self.tensor(1)}"]
        if self.chance(0.5):
            loop += self.block(0, True, 1)
        body += [f"for i in range({self.rng.choice(['3', 'n'])}):", *self.indented(loop)]
        if self.generators and self.chance(0.5):
            body.append(f"yield from {self.rng.choice(self.generators)}(acc + a, n, log)")
        else:
            body.append(f"yield from [acc, {self.tensor(1)}]")
        return [f"def {name}(t, n, log):", *self.indented(body)]


def generate(seed: int) -> Case:
    """The case of `seed`."""
    rng = random.Random(seed)
    gen = _Generator(rng, extended=seed >= EXTENDED_SEEDS)
    lines = PRELUDE.strip("\n").split("\n")
    if gen.extended:
        lines += EXTENDED_PRELUDE.strip("\n").split("\n")
        for i in range(rng.randint(1, 2)):
            lines += gen.generator(f"g{i}")
            gen.generators.append(f"g{i}")
    for i in range(rng.randint(0, 2)):
        lines += gen.function(f"h{i}", "t", 1)
        gen.helpers.append(f"h{i}")
    lines += gen.function("f", "x", 2)
    return Case(seed, "\n".join(lines) + "\n")


# ----- running ------------------------------------------------------------------------------


def _comparable(value: object) -> object:
    """What of `value` eager and compiled must agree on, as a comparable value."""
    if isinstance(value, torch.Tensor):
        values = value.detach().double().tolist()
        return ("tensor", tuple(value.shape), value.dtype, value.requires_grad,
                [round(v, 4) if math.isfinite(v) else repr(v) for v in _flat(values)])
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, [_comparable(item) for item in value])
    if isinstance(value, dict):
        return ("dict", [(repr(key), _comparable(item)) for key, item in value.items()])
    if isinstance(value, float):
        return ("float", round(value, 4) if math.isfinite(value) else repr(value))
    return (type(value).__name__, repr(value))


def _flat(values: object) -> list:
    return [v for item in values for v in _flat(item)] if isinstance(values, list) else [values]


def _inputs(seed: int) -> list[tuple[torch.Tensor, int]]:
    generator = torch.Generator().manual_seed(seed)
    return [(torch.randn(4, generator=generator), 2),
            ((torch.randn(4, generator=generator) * 2).requires_grad_(), 5)]


def _call(fn, namespace: dict, x: torch.Tensor, n: int) -> tuple:
    """Everything eager and compiled must agree on after `fn(x, n, log)` on a copy of `x`."""
    x = x.detach().clone().requires_grad_(x.requires_grad)
    sink = namespace["SINK"]
    sink.seek(0)
    sink.truncate()
    log: list = []
    torch.set_grad_enabled(True)
    try:
        result = ("returned", _comparable(fn(x, n, log)))
    except Exception as error:
        result = ("raised", type(error).__name__, str(error)[:200])
    return (result, _comparable(log), sink.getvalue(), torch.is_grad_enabled(), _comparable(x),
            namespace.get("COUNT"))


_ASPECTS = ("result", "log", "printed text", "grad mode", "input afterwards", "global COUNT")


def run(case: Case) -> str | None:
    """Run `case` eagerly and compiled; what differs first, or None."""
    dynamo.reset()
    try:
        eager, compiled = {}, {}
        for namespace in (eager, compiled):
            exec(compile(case.source, f"<break_fuzz case {case.seed}>", "exec"), namespace)
        compiled_f = dynamo.compile(compiled["f"], backend="eager")
        for k, (x, n) in enumerate(_inputs(case.seed)):
            for call in (1, 2):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    expected = _call(eager["f"], eager, x, n)
                    got = _call(compiled_f, compiled, x, n)
                for aspect, e, g in zip(_ASPECTS, expected, got):
                    if e != g:
                        return f"{aspect} differs at input {k} call {call}: eager {e!r}\n  compiled {g!r}"
        return None
    finally:
        torch.set_grad_enabled(True)
        dynamo.reset()


def sweep(start: int, count: int) -> int:
    """Run seeds start .. start + count - 1, print what fails; returns the number of failures."""
    began = time.time()
    failures = 0
    for seed in range(start, start + count):
        case = generate(seed)
        try:
            failure = run(case)
        except Exception:
            failure = "harness error: " + traceback.format_exc()[-600:]
        if failure:
            failures += 1
            print(f"seed {seed}: {failure}", flush=True)
    print(f"seeds {start}..{start + count - 1}: {failures} failures, {time.time() - began:.0f} s")
    return failures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--start", type=int, default=0, help="first seed of a sweep")
    parser.add_argument("--n", type=int, default=100, help="number of seeds in a sweep")
    parser.add_argument("--seed", type=int, help="run one case")
    parser.add_argument("--show", action="store_true", help="print the case's source")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    if args.seed is None:
        return 1 if sweep(args.start, args.n) else 0
    case = generate(args.seed)
    if args.show:
        print(case.source)
    failure = run(case)
    print(f"seed {case.seed}: {failure or 'no failure'}")
    return 1 if failure else 0


if __name__ == "__main__":
    sys.exit(main())
