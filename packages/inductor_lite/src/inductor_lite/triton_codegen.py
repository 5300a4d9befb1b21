"""Triton source for one scheduled kernel.

A pointwise kernel covers `xnumel` elements, `XBLOCK` per program: `xindex` is a block of flat
positions and each node's index variables are digits of it. A reduction kernel covers a tile of
`XBLOCK` outputs by `RBLOCK` reduced elements: `xindex` is a column `[XBLOCK, 1]`, `rindex` a row
`[1, RBLOCK]`. When every row fits in one block (a *persistent* reduction, chosen when `rnumel` is
small) the kernel loads each row once and computes reductions and their epilogue in registers;
otherwise each reduction loops over the row in chunks of `RBLOCK`, and the r-space stores after it
loop again. Loop bodies are emitted with common subexpressions shared (`CSE`); values of buffers
computed in the same kernel are recomputed from their definition instead of loaded; half-precision
values are loaded into float32 and rounded only when stored.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field

import sympy
import torch
from sympy.printing.str import StrPrinter

from fakecore.sym_functions import FloorDiv as PythonFloorDiv
from fakecore.sym_functions import PythonMod

from .ir import (
    FloorDiv,
    IndirectIndex,
    LoweringError,
    ModularIndexing,
    Reduction,
    Scan,
    Scatter,
    Value,
)
from .runtime import LOOPED_TOO_RNUMEL, PERSISTENT_RNUMEL, candidates
from .scheduler import (
    RINDEX,
    XINDEX,
    Kernel,
    NodeInKernel,
    body,
    ranges_of,
    simplify_index,
    store_index,
)

TL_DTYPES = {
    torch.float32: "tl.float32", torch.float16: "tl.float16", torch.bfloat16: "tl.bfloat16",
    torch.float64: "tl.float64", torch.int64: "tl.int64", torch.int32: "tl.int32",
    torch.int16: "tl.int16", torch.int8: "tl.int8", torch.uint8: "tl.uint8", torch.bool: "tl.int1",
    torch.uint64: "tl.uint64",
}

# name -> format over the operands' variables
OPS = {
    "add": "{0} + {1}", "sub": "{0} - {1}", "mul": "{0} * {1}", "truediv": "{0} / {1}",
    "floordiv": "helpers.floordiv({0}, {1})", "truncdiv": "helpers.truncdiv({0}, {1})",
    "floordiv_float": "helpers.floordiv_float({0}, {1})", "truncdiv_float": "helpers.trunc({0} / {1})",
    "remainder": "helpers.remainder({0}, {1})", "fmod": "{0} % {1}",
    "neg": "-{0}", "abs": "tl.abs({0})", "exp": "tl.exp({0})", "exp2": "tl.exp2({0})",
    "log": "tl.log({0})", "log2": "tl.log2({0})", "log10": "tl.log2({0}) * 0.30102999566398120",
    "sqrt": "tl.sqrt({0})", "rsqrt": "tl.rsqrt({0})", "sin": "tl.sin({0})", "cos": "tl.cos({0})",
    "tan": "tl.sin({0}) / tl.cos({0})", "sigmoid": "tl.sigmoid({0})",
    "tanh": "helpers.tanh({0})", "erf": "tl.erf({0})", "floor": "tl.floor({0})",
    "ceil": "tl.ceil({0})", "trunc": "helpers.trunc({0})", "round": "helpers.round_half_even({0})",
    "reciprocal": "1.0 / {0}", "log1p": "helpers.log1p({0})", "expm1": "helpers.expm1({0})",
    "relu": "helpers.relu({0})", "sign": "helpers.sign({0})", "pow": "helpers.pow({0}, {1})",
    "maximum": "helpers.maximum({0}, {1})", "minimum": "helpers.minimum({0}, {1})",
    "atan2": "helpers.atan2({0}, {1})", "erfc": "helpers.erfc({0})", "cosh": "helpers.cosh({0})",
    "sinh": "helpers.sinh({0})", "hypot": "helpers.hypot({0}, {1})",
    "fmax": "helpers.fmax({0}, {1})", "fmin": "helpers.fmin({0}, {1})",
    "signbit": "helpers.signbit({0})", "copysign": "helpers.copysign({0}, {1})",
    "asinh": "helpers.asinh({0})", "acosh": "helpers.acosh({0})",
    "atanh": "helpers.atanh({0})", "atan": "helpers.atan({0})",
    # (1 - x) * (1 + x), not 1 - x * x, which cancels near |x| = 1 (acos lost 500 ulps there)
    "asin": "helpers.atan2({0}, tl.sqrt((1.0 - {0}) * (1.0 + {0})))",
    "acos": "helpers.atan2(tl.sqrt((1.0 - {0}) * (1.0 + {0})), {0})",
    "clamp_min": "helpers.clamp_min({0}, {1})", "clamp_max": "helpers.clamp_max({0}, {1})",
    "bitwise_and": "{0} & {1}", "bitwise_or": "{0} | {1}", "bitwise_xor": "{0} ^ {1}",
    "shift_left": "helpers.shift_left({0}, {1})", "shift_right": "helpers.shift_right({0}, {1})",
    "bitwise_not": "~{0}", "logical_not": "{0} == 0",
    "logical_and": "helpers.both({0} != 0, {1} != 0)",
    "logical_or": "helpers.either({0} != 0, {1} != 0)", "logical_xor": "({0} != 0) != ({1} != 0)",
    "isnan": "{0} != {0}", "isinf": "tl.abs({0}) == float('inf')",
    "eq": "{0} == {1}", "ne": "{0} != {1}", "lt": "{0} < {1}", "le": "{0} <= {1}",
    "gt": "{0} > {1}", "ge": "{0} >= {1}", "where": "tl.where({0}, {1}, {2})",
    "fma": "tl.fma({0}, {1}, {2})",  # rounded once (eager's linspace on an FMA-capable CPU)
}



def identity(kind: str, dtype: torch.dtype) -> str:
    """The value a reduction starts from (what masked-off lanes contribute)."""
    if kind in ("sum", "any", "xor_sum"):
        return "0"
    if kind in ("prod", "all"):
        return "1"
    low = kind in ("max", "argmax")
    if dtype.is_floating_point:
        return "float('-inf')" if low else "float('inf')"
    info = torch.iinfo(dtype) if dtype != torch.bool else torch.iinfo(torch.int32)
    return str(info.min if low else info.max)

COMBINE = {"sum": "{0} + {1}", "prod": "{0} * {1}", "max": "helpers.maximum({0}, {1})",
           "min": "helpers.minimum({0}, {1})", "any": "{0} | {1}", "all": "{0} & {1}"}
FINISH = {"sum": "tl.sum({0}, 1)", "prod": "helpers.prod({0}, 1)", "max": "helpers.max2({0}, 1)",
          "min": "helpers.min2({0}, 1)", "any": "tl.max({0}, 1)", "all": "tl.min({0}, 1)"}


def cast(text: str, dtype: torch.dtype) -> str:
    """`text` converted to `dtype`; to bfloat16 rounded to nearest even (Triton's interpreter
    truncates); to float16 through float32, as c10's `Half(float)` converts a double (a
    float64 value halfway between two halves after rounding to float32 goes to the even one:
    Triton's direct conversion rounds it once; a no-op step for float32 values)."""
    if dtype == torch.bfloat16:
        return f"helpers.to_bfloat16({text})"
    if dtype == torch.float16:
        return f"{text}.to(tl.float32).to(tl.float16)"
    return f"{text}.to({TL_DTYPES[dtype]})"


class IndexPrinter(StrPrinter):
    """sympy index expressions as Triton/Python integer arithmetic."""

    def __init__(self, names: dict[sympy.Symbol, str], kernel: bool = False) -> None:
        super().__init__()
        self.names = names
        self.kernel = kernel  # inside a kernel (Triton) rather than the wrapper (Python)

    def _print_Symbol(self, expr):
        return self.names.get(expr, expr.name)

    def _print(self, expr, **kwargs):
        # fakecore's `%` and `//` print themselves as Python's operators, which round down;
        # Triton's round toward zero (`(4 - s0) % 4` of a roll by a symbolic shift)
        if self.kernel and isinstance(expr, (PythonMod, PythonFloorDiv)):
            a, b = expr.args
            if not (a.is_nonnegative and b.is_positive):
                name = "remainder" if isinstance(expr, PythonMod) else "floordiv"
                return f"helpers.{name}({self._print(a)}, {self._print(b)})"
        return super()._print(expr, **kwargs)

    def _print_Float(self, expr):
        if self.kernel:  # (only `floor`/`ceil` of a float times a size are printed there)
            raise LoweringError(f"the float {expr} in a kernel's index arithmetic")
        # every digit of the float (StrPrinter's 15 significant digits made the wrapper's
        # `log(s0) == 1.3862943611198906` compare with 1.38629436111989: False at s0 = 4)
        value = float(expr)
        return repr(value) if math.isfinite(value) else f"float('{value}')"

    def atom(self, expr) -> str:
        text = self._print(expr)
        return text if (expr.is_Atom or isinstance(expr, (FloorDiv, ModularIndexing))) else f"({text})"

    def _print_FloorDiv(self, expr):
        return f"({self.atom(expr.args[0])} // {self.atom(expr.args[1])})"

    def _print_ModularIndexing(self, expr):
        a, div, mod = expr.args
        inner = self.atom(a) if div == 1 else f"({self.atom(a)} // {self.atom(div)})"
        return f"({inner} % {self.atom(mod)})"

    def _floor_of(self, num, den) -> str:
        # Triton's `//` rounds toward zero: in a kernel, a numerator or denominator that may
        # be negative floors through the helper (the wrapper's Python `//` floors already)
        if self.kernel and not (num.is_integer and den.is_integer):
            # (`floor(s0 / (1 - s1))`: a FloatTrueDiv, a divisor not known nonzero; a float
            # in `//` or the helper was a TypeError when the kernel ran) the aten graph runs
            raise LoweringError(f"the floor of {num / den} of sizes in a kernel")
        if self.kernel and not (num.is_nonnegative and den.is_positive):
            return f"helpers.floordiv({self._print(num)}, {self._print(den)})"
        return f"({self.atom(num)} // {self.atom(den)})"

    def _print_floor(self, expr):
        if (scaled := self._scaled_size("floor", expr.args[0])) is not None:
            return scaled
        num, den = sympy.fraction(sympy.together(expr.args[0]))
        if not self.kernel and not (num.is_integer and den.is_integer):
            return self._float_rounded("floor", expr.args[0])
        return self._floor_of(num, den)

    def _print_ceiling(self, expr):
        if (scaled := self._scaled_size("ceil", expr.args[0])) is not None:
            return scaled
        num, den = sympy.fraction(sympy.together(expr.args[0]))
        if not self.kernel and not (num.is_integer and den.is_integer):
            return self._float_rounded("ceil", expr.args[0])
        return f"(-{self._floor_of(-num, den)})"

    def _scaled_size(self, name: str, arg: sympy.Expr) -> str | None:
        """`floor`/`ceil` (`name`) of a float times a size (`1.7*s0`, `interpolate`'s output
        size by a scale factor, as lowering.py's `scaled_size` admits it) as the graph
        computes it: the size made a float64 and multiplied, one rounding, in the wrapper's
        Python as in a kernel; None for other arguments."""
        scale, size = arg.as_coeff_Mul()
        if not (isinstance(scale, sympy.Float) and size.is_integer and size.free_symbols):
            return None
        if self.kernel:
            return f"tl.{name}(tl.cast({self._print(size)}, tl.float64) * {float(scale)!r})" \
                ".to(tl.int64)"
        return f"math.{name}(float({self._print(size)}) * {float(scale)!r})"

    def _float_rounded(self, name: str, arg: sympy.Expr) -> str:
        # The wrapper's Python: `math.floor(math.log2(s0))` is an int, computed as eager does
        # (`log(s0) // log(2)` was a float, an empty_strided TypeError as a size, and 2.0 for
        # s0 = 8)
        return f"math.{name}({self._print(arg)})"

    def _print_Pow(self, expr):
        base, exp = expr.args
        # A whole exponent, also as a float (`s ** 2` of a float argument is `zuf0**2.0`);
        # a negative one only of a float (`1 / s`).
        whole = exp.is_number and exp.is_finite and float(exp).is_integer()
        if whole and 0 < int(exp) <= 8:
            return "(" + " * ".join([self.atom(base)] * int(exp)) + ")"
        if whole and -8 <= int(exp) < 0 and not base.is_integer:
            return "(1.0 / (" + " * ".join([self.atom(base)] * -int(exp)) + "))"
        if not self.kernel and exp.is_integer and exp.is_nonnegative:
            # a power by a size in the wrapper's Python (`(-2) ** s0`; bare, `-2 ** s0` would
            # be `-(2 ** s0)`)
            return f"(({self._print(base)}) ** {self.atom(exp)})"
        if not self.kernel and exp.is_number and exp.is_finite:
            # the wrapper's Python, in float64 as eager computes it (`math.sqrt(x.shape[-1])`,
            # `x.shape[-1] ** -0.5`: an attention scale of a symbolic head size)
            if exp == sympy.Rational(1, 2):
                return f"math.sqrt({self._print(base)})"
            return f"({self.atom(base)} ** {float(exp)!r})"
        # Not expressible here (a fractional power of a float argument): the graph then runs
        # as its aten graph, as compile_fx does for any LoweringError.
        raise LoweringError(f"index power {expr}")

    # Functions of sizes the wrapper computes in Python as floats (`math.log2(n)` is
    # `log(s0)/log(2)`, `math.cos(n)` is `cos(s0)`: fakecore's sym_* functions): `math`'s.
    # StrPrinter wrote their bare names, a NameError when `call` ran.
    _MATH_FUNCTIONS = frozenset({"log", "exp", "sin", "cos", "tan", "sinh", "cosh", "tanh",
                                 "asin", "acos", "atan", "asinh", "acosh", "atanh"})

    def _print_Function(self, expr):
        name = type(expr).__name__
        if self.kernel:
            if name in self._MATH_FUNCTIONS:
                # (`floor(log(s0)/log(2))`, an int a kernel reads: a bare `log` was a
                # NameError when the kernel ran) the graph runs as its aten graph
                raise LoweringError(f"the function {expr} of sizes in a kernel")
            return super()._print_Function(expr)
        if name in self._MATH_FUNCTIONS and len(expr.args) == 1:
            return f"math.{name}({self._print(expr.args[0])})"
        # Anything else would be a NameError in `call`: the graph runs as its aten graph.
        raise LoweringError(f"no Python for the function {expr} of sizes")

    def _print_Mul(self, expr):
        # `math.log2(n)` is `log(s0)/log(2)` in sympy: printed as `math.log2`, whose value is
        # eager's (`math.log(n) / math.log(2)` is off by an ulp for a third of the sizes).
        inverse = sympy.Pow(sympy.log(2), -1)
        if not self.kernel and inverse in expr.args:
            logs = [f for f in expr.args if isinstance(f, sympy.log)]
            if len(logs) == 1:
                rest = sympy.Mul(*[f for f in expr.args if f is not logs[0] and f != inverse])
                text = f"math.log2({self._print(logs[0].args[0])})"
                return text if rest == 1 else f"({self.atom(rest)} * {text})"
        return super()._print_Mul(expr)

    def _print_Abs(self, expr):
        if self.kernel:  # (`Abs(...)` was a NameError when the kernel ran)
            return f"tl.abs({self._print(expr.args[0])})"
        return f"abs({self._print(expr.args[0])})"

    def _print_FloatTrueDiv(self, expr):  # `1 / s` of a float argument (fakecore's, torch's)
        return f"({self.atom(expr.args[0])} / {self.atom(expr.args[1])})"

    def _print_Mod(self, expr):
        return f"({self.atom(expr.args[0])} % {self.atom(expr.args[1])})"

    def _print_Max(self, expr):
        return self._extreme(expr.args, "tl.maximum" if self.kernel else "max")

    def _print_Min(self, expr):
        return self._extreme(expr.args, "tl.minimum" if self.kernel else "min")

    def _extreme(self, args, fn: str) -> str:
        text = self._print(args[0])
        for other in args[1:]:
            text = f"{fn}({text}, {self._print(other)})"
        return text

    # Conditions of runtime asserts, which the wrapper checks in Python (StrPrinter writes
    # `Eq(a, b)`, and `~a` for not: -2, true, of a bool).
    def _print_Relational(self, expr):
        return f"({self._print(expr.lhs)} {expr.rel_op} {self._print(expr.rhs)})"

    def _print_And(self, expr):
        return "(" + " and ".join(self._print(a) for a in expr.args) + ")"

    def _print_Or(self, expr):
        return "(" + " or ".join(self._print(a) for a in expr.args) + ")"

    def _print_Not(self, expr):
        return f"(not {self._print(expr.args[0])})"

    def _print_Piecewise(self, expr):
        # `torch.sym_ite` of sizes in the wrapper's Python (narrow's end at a start read from
        # data, `start + length + (size if start < 0 and start + length == 0 else 0)`)
        if self.kernel or expr.args[-1].cond is not sympy.true:
            raise LoweringError(f"no Python for {expr} of sizes")
        text = self._print(expr.args[-1].expr)
        for value, cond in reversed(expr.args[:-1]):
            text = f"({self._print(value)} if {self._print(cond)} else {text})"
        return text


@dataclass
class Scope:
    """Lines of one straight-line region and the Values already computed in it (CSE)."""

    indent: str
    parent: Scope | None = None
    lines: list[str] = field(default_factory=list)
    cache: dict = field(default_factory=dict)

    def lookup(self, key):
        scope = self
        while scope is not None:
            if key in scope.cache:
                return scope.cache[key]
            scope = scope.parent
        return None


class KernelCodegen:
    """Generates the source of one `Kernel`; `args` lists its parameters in order."""

    def __init__(self, kernel: Kernel, dtypes: dict[str, torch.dtype],
                 hints: dict[sympy.Symbol, int], looped: bool = False) -> None:
        """`looped`: a reduction loops over its rows whatever their length, in a kernel named
        `<kernel>_looped` (the alternative the tuner weighs against a persistent one)."""
        self.kernel = kernel
        self.name = f"{kernel.name}_looped" if looped else kernel.name
        self.dtypes = dtypes  # buffer name -> dtype, for every buffer it may load
        # Persistent code is right for every row length (RBLOCK follows rnumel at launch); the
        # size seen while tracing decides whether it is also fast.
        rows = _hint(kernel.rnumel, hints) if kernel.is_reduction else 0
        self.persistent = kernel.is_reduction and not looped and rows <= PERSISTENT_RNUMEL
        # Rows this long may be faster looped: the wrapper also generates that kernel (not for
        # scans, which hold their row in one block).
        # A symbolic row may be called far longer than traced (past Triton's largest block,
        # 2**20 elements): the launcher then takes the looped kernel (`runtime.candidates`).
        symbolic = not sympy.sympify(kernel.rnumel).is_number
        self.weigh_looped = self.persistent and (rows > LOOPED_TOO_RNUMEL or symbolic) and \
            not any(node.space == "scan" for node in kernel.nodes)
        self.pointers: dict[str, str] = {}  # buffer name -> parameter name
        self.sizes: set[sympy.Symbol] = set()
        self.seeds: list[str] = []
        self.counter = 0
        self.results: dict[str, str] = {}  # reduction buffer -> its result variable
        self.x_fits, self.r_fits = self.blocks_fit()
        self.index_names: dict[sympy.Symbol, str] = {}
        # The shape of a one-element block: every block of a kernel has the same rank.
        self.unit = "[1, 1]" if kernel.is_reduction else "[1]"
        self.ranges = ranges_of(kernel)

    # -- parameters ------------------------------------------------------------------------
    def pointer(self, name: str) -> str:
        if name not in self.pointers:
            self.pointers[name] = f"ptr_{name}"
        return self.pointers[name]

    def print_index(self, expr: sympy.Expr, scope: Scope, wide: bool = False) -> str:
        """`wide`: computed in int64 (an int64 value such as `arange`'s, which may pass 2**31;
        indices are 32-bit, and `xindex * 2**30` or `xindex + 2**40` wrapped or failed)."""
        expr = simplify_index(expr, self.ranges)
        names = {}
        for s in expr.free_symbols:
            if isinstance(s, IndirectIndex):
                names[s] = self.indirect(s, scope)
            else:
                if s not in (XINDEX, RINDEX):
                    self.sizes.add(s)
                if wide:  # (a cast, not `.to`: Triton passes an int argument equal to 1
                    # as a Python int on a GPU)
                    names[s] = f"tl.cast({s.name}, tl.int64)"
        return IndexPrinter(names, kernel=True).doprint(expr)

    def indirect(self, s: IndirectIndex, scope: Scope) -> str:
        key = ("indirect", s)
        found = scope.lookup(key)
        if found:
            return found
        v = self.value(s.value, scope)
        size = self.print_index(s.dim_size, scope)
        wrapped = self.emit(scope, key, f"tl.where({v} < 0, {v} + {size}, {v})") if s.wraps \
            else v
        self.emit(scope, ("in_bounds", s), f"({wrapped} >= 0) & ({wrapped} < {size})")
        return wrapped

    def bounds_check(self, index: sympy.Expr, lanes: str, scope: Scope) -> str | None:
        """Whether the indices read from memory that `index` holds are inside their dims (None
        when it holds none), asserted for the lanes of `lanes`: an out-of-range index must
        raise, not read or write outside a tensor."""
        indirect = [s for s in sorted(index.free_symbols, key=str) if isinstance(s, IndirectIndex)]
        for s in indirect:
            self.indirect(s, scope)
        oks = [scope.lookup(("in_bounds", s)) for s in indirect]
        if not oks:
            return None
        ok = oks[0]
        for other in oks[1:]:
            ok = self.emit(scope, None, f"helpers.both({ok}, {other})")
        key = ("checked", ok, lanes)
        if scope.lookup(key) is None:
            scope.lines.append(f"{scope.indent}helpers.check_index({ok}, {lanes})")
            scope.cache[key] = True
        return ok

    # -- values ----------------------------------------------------------------------------
    def emit(self, scope: Scope, key, text: str) -> str:
        """`text` as a new variable; a value (with a `key`) whose text is already a variable in
        reach is that variable (two Values of one expression: a mean loaded at two indices)."""
        if key is not None:
            found = scope.lookup(("text", text))
            if found:
                scope.cache[key] = found
                return found
        name = f"tmp{self.counter}"
        self.counter += 1
        scope.lines.append(f"{scope.indent}{name} = {text}")
        if key is not None:
            scope.cache[key] = name
            scope.cache[("text", text)] = name
        return name

    def value(self, v: Value, scope: Scope) -> str:
        found = scope.lookup(v)
        if found:
            return found
        if v.op == "load":
            return self.load(v, scope)
        if v.op == "constant":
            c = v.args[0]
            negative_zero = isinstance(c, float) and c == 0 and math.copysign(1.0, c) < 0
            text = f"tl.full({self.unit}, {_literal(abs(c) if negative_zero else c)}, " \
                f"{TL_DTYPES[v.dtype]})" + (" * -1.0" if negative_zero else "")  # (-0.0 is 0 - 0.0)
        elif v.op == "index" and v.dtype is torch.int64:
            # computed in int32 where every step provably fits (Triton 3.6 on an H200
            # computed adaptive pooling's `(8*(x // 5 % 5) + 12) // 5 - 8*(x // 5 % 5) // 5`
            # as 0 in int64, and int64 division is slow there), else in int64
            bound = _magnitude(simplify_index(v.args[0], self.ranges), self.ranges)
            index = self.print_index(v.args[0], scope, wide=bound is None or bound >= 2**31)
            text = f"({index}) + tl.zeros({self.unit}, tl.int64)"
        elif v.op == "index":  # a float kernel argument, fp32 (1.0 * s keeps the sign of 0)
            text = f"tl.full({self.unit}, 1.0, tl.float32) * ({self.print_index(v.args[0], scope)})"
        elif v.op in ("rand", "randn", "randint"):  # randint: uint32 bits
            seed = v.args[0]
            if seed not in self.seeds:
                self.seeds.append(seed)
            offset = self.print_index(v.args[1], scope)
            text = f"tl.{v.op}({seed}, ({offset}) + tl.zeros({self.unit}, tl.int32))"
        elif v.op == "to_dtype":
            text = cast(self.value(v.args[0], scope), v.args[1])
        elif v.op in ("index_lt", "index_in"):
            i, n = self.print_index(v.args[0], scope), self.print_index(v.args[1], scope)
            text = f"({i}) < ({n})" if v.op == "index_lt" else f"(({i}) >= 0) & (({i}) < ({n}))"
            if not {XINDEX, RINDEX} & set().union(*(sympy.sympify(a).free_symbols
                                                    for a in v.args)):
                # the same for every lane (`61 < s0`, a cat's branch at a fixed row): a block,
                # as a mask must be (the interpreter refuses a scalar's dtype)
                text = f"tl.full({self.unit}, 1, tl.int1) & ({text})"
        elif v.op == "neg" and v.dtype.is_floating_point:  # -x is 0 - x, losing the sign of 0
            text = f"{self.value(v.args[0], scope)} * -1.0"
        else:
            operands = [self.value(a, scope) for a in v.args]
            text = OPS[v.op].format(*operands)
        return self.emit(scope, v, text)

    def load(self, v: Value, scope: Scope) -> str:
        name, index = v.args[:2]
        condition = v.args[2] if len(v.args) > 2 else None  # only where this holds (cat, pad)
        producer = self.kernel.node(name)
        if producer is not None and isinstance(producer.buffer.data, (Reduction, Scan)):
            result = self.results[name]
            if producer.buffer.dtype in (torch.float16, torch.bfloat16):
                # the half value the buffer holds, as eager and Inductor read it back
                rounded = cast(result, producer.buffer.dtype)
                result = self.emit(scope, v, f"{rounded}.to(tl.float32)")
            return result
        if producer is not None:
            # Computed by this kernel for this very element: recompute it here.
            out = self.value(body(producer), scope)
            scope.cache[v] = out
            return out
        index = simplify_index(sympy.sympify(index), self.ranges)  # what is printed decides
        text_index = self.print_index(index, scope)
        symbols = index.free_symbols
        uses_r = _varies_along_r(index)
        lanes = "xmask & rmask" if (uses_r and self.kernel.is_reduction) else "xmask"
        if condition is not None:
            lanes = _and_mask(lanes, self.value(condition, scope))
        in_bounds = self.bounds_check(index, lanes, scope)
        if not uses_r and XINDEX not in symbols and condition is None and in_bounds is None:
            # The same element for every lane: a scalar load needs no mask.
            text = f"tl.load({self.pointer(name)} + ({text_index}))"
        else:
            # Out-of-range lanes are masked off too, for when asserts are compiled out (GPU).
            mask = lanes if in_bounds is None else _and_mask(lanes, in_bounds)
            if XINDEX not in symbols and RINDEX not in symbols:
                text_index += ") + (tl.zeros_like(xindex)"  # a masked load needs a block address
            text = f"tl.load({self.pointer(name)} + ({text_index}), {mask}, other=0)"
        if self.dtypes[name] in (torch.float16, torch.bfloat16):
            text += ".to(tl.float32)"
        return self.emit(scope, v, text)

    # -- stores and reductions -------------------------------------------------------------
    def store(self, node: NodeInKernel, scope: Scope, value: str | None = None) -> None:
        """Store `node`'s value (its body's, unless `value` names the result already made)."""
        buffer = node.buffer
        target = buffer.mutates or buffer.name
        value = value or self.value(body(node), scope)
        address = store_index(node)
        index = self.store_address(address, scope, row=node.space == "r")
        mask = "xmask & rmask" if node.space in ("r", "scan") else "xmask"
        in_bounds = self.bounds_check(address, mask, scope)
        if in_bounds is not None:  # a scatter's loaded index
            mask = _and_mask(mask, in_bounds)
        write, value = "tl.store", cast(value, buffer.dtype)
        if isinstance(buffer.data, Scatter) and buffer.data.accumulate:
            write = "tl.atomic_add"  # programs may add to the same element
            # A value of one element, spread over the lanes: Triton 3.7's interpreter reads an
            # atomic's values as a contiguous block, so it must be one (`where` makes it).
            value = f"tl.where({mask}, {value}, 0)"
        scope.lines.append(f"{scope.indent}{write}({self.pointer(target)} + ({index}), "
                           f"{value}, {mask})")

    def scan(self, node: NodeInKernel, scope: Scope) -> None:
        """A cumulative sum or product along the row, which one block holds whole; any other
        `scan_type` is the helper of that name, given the row, its lanes and their indices."""
        kind = node.buffer.data.scan_type
        v = self.value(body(node), scope)
        if kind not in ("sum", "prod"):
            lanes = self.emit(scope, None, "xmask & rmask")
            if body(node).dtype == torch.bfloat16:
                # exact, and needed: the interpreter's scan of a bfloat16 row let later, smaller
                # values win (cummax of a rounded gelu, fuzzer seed 1003383)
                v = f"{v}.to(tl.float32)"
            row = self.emit(scope, None, f"tl.where({lanes}, {v}, 0)")
            text = f"helpers.{kind}({row}, {lanes}, rindex)"
            if node.buffer.dtype == torch.int64:  # positions along the row: int32 in Triton
                text = cast(text, torch.int64)
            result = self.results[node.buffer.name] = self.emit(scope, None, text)
            if node.buffer.name in self.kernel.stored:
                self.store(node, scope, result)
            return
        start = identity(kind, body(node).dtype)
        masked = self.emit(scope, None, f"tl.where(xmask & rmask, {v}, {start})")
        text = f"tl.cum{kind}({masked}, 1)"
        if kind == "sum" and body(node).dtype.is_floating_point:
            text += " + 0.0"  # eager's sum starts from +0.0: a cumsum of -0.0s is 0.0
        result = self.results[node.buffer.name] = self.emit(scope, None, text)
        if node.buffer.name in self.kernel.stored:
            self.store(node, scope, result)

    def store_address(self, index: sympy.Expr, scope: Scope, row: bool = False) -> str:
        """A store's offset as a block of the lanes that store: also when it is the same for
        every lane (one output) or, for a store over the row, for every lane of a row (a
        reduction's result expanded along the row: `x.mean(-1, keepdim=True).expand(4, 300)`)."""
        text = self.print_index(index, scope)
        if XINDEX not in index.free_symbols:
            text += ") + (tl.zeros_like(xindex)"
        if row and RINDEX not in index.free_symbols:
            text += ") + (tl.zeros_like(rindex)"
        return text

    def reduce(self, node: NodeInKernel, outer: Scope) -> None:
        data = node.buffer.data
        kind = data.reduction_type
        start = identity(kind, body(node).dtype)
        if not self.kernel.is_reduction:  # one element per output (rnumel 1): that element
            if kind in ("argmax", "argmin"):
                result = self.emit(outer, None, "tl.zeros_like(xindex).to(tl.int64)")
            else:
                result = self.emit(outer, None, cast(self.value(body(node), outer),
                                                     _acc_dtype(body(node).dtype)))
        elif self.persistent:
            v = self.value(body(node), outer)
            masked = self.emit(outer, None, f"tl.where(xmask & rmask, {v}, {start})")
            result = self.finish(kind, masked, "rindex", outer)
        else:
            acc = self.emit(outer, None, f"tl.full([XBLOCK, RBLOCK], {start}, "
                                         f"{TL_DTYPES[_acc_dtype(body(node).dtype)]})")
            acc_index = None
            if kind in ("argmax", "argmin"):
                acc_index = self.emit(outer, None, "tl.full([XBLOCK, RBLOCK], 0, tl.int64)")
            loop = self.loop(outer)
            v = self.value(body(node), loop)
            masked = self.emit(loop, None, f"tl.where(xmask & rmask, {v}, {start})")
            if acc_index is None:
                loop.lines.append(f"{loop.indent}{acc} = {COMBINE[kind].format(acc, masked)}")
            else:
                better = ">" if kind == "argmax" else "<"
                take = self.emit(loop, None, f"({masked} {better} {acc}) | "
                                             f"(({masked} != {masked}) & ({acc} == {acc}))")
                loop.lines.append(f"{loop.indent}{acc_index} = tl.where({take}, rindex, {acc_index})")
                loop.lines.append(f"{loop.indent}{acc} = tl.where({take}, {masked}, {acc})")
            outer.lines += loop.lines
            result = self.finish(kind, acc, acc_index, outer)
        self.results[node.buffer.name] = result
        outer.cache[("result", node.buffer.name)] = result
        if node.buffer.name in self.kernel.stored:
            self.store_result(node, result, outer)

    def finish(self, kind: str, v: str, index: str | None, scope: Scope) -> str:
        """Combine the [XBLOCK, RBLOCK] tile `v` (masked lanes already neutral) along rows."""
        if kind in ("argmax", "argmin"):
            best = "helpers.max2" if kind == "argmax" else "helpers.min2"
            m = self.emit(scope, None, f"{best}({v}, 1)[:, None]")
            hit = self.emit(scope, None, f"({v} == {m}) | (({m} != {m}) & ({v} != {v}))")
            return self.emit(scope, None, f"tl.min(tl.where({hit}, {index}, rnumel), 1)[:, None]"
                                          f".to(tl.int64)")
        return self.emit(scope, None, FINISH[kind].format(v) + "[:, None]")

    def store_result(self, node: NodeInKernel, result: str, scope: Scope) -> None:
        index = self.store_address(store_index(node), scope)
        scope.lines.append(f"{scope.indent}tl.store({self.pointer(node.buffer.name)} + ({index}), "
                           f"{cast(result, node.buffer.dtype)}, xmask)")

    def loop(self, outer: Scope) -> Scope:
        scope = Scope(outer.indent + "    ", parent=outer)
        scope.lines += [f"{outer.indent}for roffset in range(0, rnumel, RBLOCK):",
                        f"{scope.indent}rindex = roffset + tl.arange(0, RBLOCK)[None, :]",
                        f"{scope.indent}rmask = {self.mask('r')}"]
        return scope

    def mask(self, axis: str) -> str:
        """The definition of `xmask` or `rmask` (`axis` "x" or "r"): a constant where every
        block fits (`blocks_fit`)."""
        if not (self.x_fits if axis == "x" else self.r_fits):
            return f"{axis}index < {axis}numel"
        shape = "[1, RBLOCK]" if axis == "r" else "[XBLOCK, 1]" if self.kernel.is_reduction \
            else "[XBLOCK]"
        return f"tl.full({shape}, 1, tl.int1)"

    def blocks_fit(self) -> tuple[bool, bool]:
        """Whether every block the launcher may pick covers `xnumel` (and `rnumel`) evenly: then
        no lane is ever out of range, and that mask is a constant Triton folds away (unmasked,
        vectorized loads). Static sizes only."""
        k = self.kernel
        kind = ("pointwise" if not k.is_reduction else "persistent" if self.persistent else
                "looped")
        xnumel, rnumel = sympy.sympify(k.xnumel), sympy.sympify(k.rnumel)
        if not (xnumel.is_Integer and rnumel.is_Integer):
            return False, False
        xnumel, rnumel = int(xnumel), int(rnumel)
        configs = candidates(kind, xnumel, rnumel)
        return (all(xnumel % c["XBLOCK"] == 0 for c in configs),
                k.is_reduction and rnumel > 0 and all(rnumel % c["RBLOCK"] == 0 for c in configs))

    # -- the kernel ------------------------------------------------------------------------
    def generate(self) -> str:
        k = self.kernel
        top = Scope("    ")
        if k.is_reduction:
            top.lines += ["    xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:, None]",
                          f"    xmask = {self.mask('x')}"]
            if self.persistent:
                top.lines += ["    rindex = tl.arange(0, RBLOCK)[None, :]",
                              f"    rmask = {self.mask('r')}"]
        else:
            top.lines += ["    xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)",
                          f"    xmask = {self.mask('x')}"]
        pending: Scope | None = None
        for node in k.nodes:
            if node.space == "scan":
                self.scan(node, top)
            elif node.space == "red":
                if pending is not None:
                    top.lines += pending.lines
                    pending = None
                self.reduce(node, top)
            elif node.buffer.name in k.stored or node.buffer.mutates:
                if node.space == "r" and not self.persistent:
                    pending = pending or self.loop(top)
                    self.store(node, pending)
                else:
                    self.store(node, top)
        if pending is not None:
            top.lines += pending.lines
        params = [*self.pointers.values(), *sorted(str(s) for s in self.sizes), *self.seeds,
                  "xnumel"]
        if k.is_reduction:
            params.append("rnumel")
        consts = ["XBLOCK: tl.constexpr"] + (["RBLOCK: tl.constexpr"] if k.is_reduction else [])
        header = f"@triton.jit\ndef {self.name}({', '.join(params + consts)}):"
        return "\n".join([header, *top.lines]) + "\n"

    @property
    def args(self) -> tuple[list[str], list[str], list[str]]:
        """(buffers by pointer order, size symbols, seeds): what the wrapper passes."""
        return list(self.pointers), sorted(str(s) for s in self.sizes), list(self.seeds)


def _magnitude(expr: sympy.Expr, ranges: dict) -> int | None:
    """A bound of `|expr|` and of every intermediate value computing it takes, or None where
    a size symbol (or anything but integer arithmetic on the kernel's indices) is in it."""
    expr = sympy.sympify(expr)
    if expr.is_Integer:
        return abs(int(expr))
    if expr in ranges:
        extent = sympy.sympify(ranges[expr])
        return int(extent) if extent.is_Integer else None
    if isinstance(expr, ModularIndexing):
        a, _, mod = expr.args
        bounds = [_magnitude(a, ranges), _magnitude(mod, ranges)]
    elif isinstance(expr, (FloorDiv, PythonFloorDiv, PythonMod, sympy.Mod, sympy.Add, sympy.Mul)):
        bounds = [_magnitude(a, ranges) for a in expr.args]
    else:
        return None
    if None in bounds:
        return None
    if isinstance(expr, sympy.Add):
        return sum(bounds)
    if isinstance(expr, sympy.Mul):
        return max(math.prod(bounds), *bounds)
    return max(bounds)  # a quotient or remainder is no larger than its operands


def _and_mask(lanes: str, ok: str) -> str:
    """`lanes & ok` as a load or store mask, also when `ok` is one scalar (an index loaded once):
    Triton's interpreter gives no boolean block for `&` or `where` of a block and a scalar."""
    return f"(helpers.both({lanes}, {ok}) != 0)"


def _varies_along_r(index: sympy.Expr) -> bool:
    """Whether an index differs between the lanes of a row (rindex, or a value loaded by it)."""
    for s in sympy.sympify(index).free_symbols:
        if s == RINDEX or (isinstance(s, IndirectIndex) and _value_varies_along_r(s.value)):
            return True
    return False


@functools.cache
def _value_varies_along_r(v: Value) -> bool:
    if v.op in ("load", "index", "rand", "randn", "randint", "index_in", "index_lt"):
        if any(isinstance(a, sympy.Expr) and _varies_along_r(a) for a in v.args):
            return True
    return any(isinstance(a, Value) and _value_varies_along_r(a) for a in v.args)


def _acc_dtype(dtype: torch.dtype) -> torch.dtype:
    return torch.int32 if dtype == torch.bool else dtype


def _literal(value: object) -> str:
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return f"float('{value}')"
    return repr(value)


def _hint(e: sympy.Expr, hints: dict[sympy.Symbol, int]) -> int:
    value = e.xreplace(hints)
    return int(value) if value.is_Integer else 1 << 30

