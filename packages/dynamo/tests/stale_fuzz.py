"""A seeded fuzzer for stale answers of `dynamo.compile` (backend "eager", breaks allowed).

A seed makes a case: a function `f(x, d=3, *, kw=2.0)` whose body reads state that can change
between calls (globals of many types, an object and its class, an nn.Module with a submodule
and hooks, dicts, lists and an alias of one, closure cells, defaults, tensor properties, an
enum, named tuples, frozen dataclasses, helper functions and partials, another module's
globals; and, drawn after those, a partial's args and keywords, a defaultdict's factory, numpy
and float-subclass zeros, itertools, builtins a global shadows, attributes and a global the
body deletes; and, drawn after all those, attributes and `__getattr__` added to and removed
from an object's class or base, `__match_args__` under a `match`, a descriptor's `__get__`, an
autograd.Function's `forward`, what `__len__`/`__bool__` return, negative bases of `**`, and
tensor-subclass inputs that shadow Tensor's methods), mixes the values into a tensor through
branches, loops and arithmetic, sometimes breaks the graph (a print, a sink whose `write`
changes state, a branch on a tensor's value) and sometimes writes state itself; and a list of
steps, each a few statements that change that state between calls. The case runs twice,
eagerly and compiled, each in its own namespace made from the same source; every step
applies its changes to both, then calls both twice. Any difference is a failure: in the
results (values, dtypes, strides, requires_grad, sign of zero, Python types, a tensor's
class), exceptions, printed text, the state afterwards or grad mode; so is a recompilation on
the second, unchanged call of a body that writes nothing, or a new compilation whose guards
do not hold for the call it was made for. A step of changes that cannot matter (no-ops, or
state the body never reads) that recompiles is reported as a spurious recompilation, not a
failure.

    python packages/dynamo/tests/stale_fuzz.py --start 0 --n 1000   # a sweep of seeds
    python packages/dynamo/tests/stale_fuzz.py --seed 17 --show      # one case, as a script
    python packages/dynamo/tests/stale_fuzz.py --seed 17 --minimize  # shrunk to a repro script
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import enum
import math
import random
import re
import sys
import time
import traceback
import types
import warnings
from collections.abc import Callable, Iterator

import torch

import dynamo
import dynamo.frontend

# The source of a case's namespace; the body of `f` replaces __BODY__. `r` collects values the
# body reads, `acc` is the tensor it returns.
NAMESPACE_SOURCE = r'''
import collections, dataclasses, enum, functools, io, itertools, math, operator, sys, types
import numpy as np
import torch
import torch.nn as nn
SINK = io.StringIO()
class Mode(enum.Enum):
    A = 1
    B = 2
Mode.A.w = 1
Mode.B.w = 2
class Inner:
    def __init__(self, scale=0.5, k=2):
        self.scale = scale
        self.k = k
class Cfg:
    factor = 3
    def __init__(self):
        self.scale = 1.5
        self.n = 2
        self.flag = True
        self.name = 'ab'
        self.cfg = Inner()
class SubCfg(Cfg):
    factor = 7
class Cfg2:
    factor = 5
    def __init__(self):
        self.scale = 2.5
        self.n = 4
        self.flag = False
        self.name = 'xyz'
        self.cfg = Inner(1.25, 3)
    @property
    def twice(self):
        return self.scale * 2
    def get_scale(self, m=1):
        return self.scale * m
class Sub(nn.Module):
    def __init__(self, beta=0.25):
        super().__init__()
        self.beta = beta
    def forward(self, x):
        return x * self.beta
class M(nn.Module):
    def __init__(self, alpha=2.0):
        super().__init__()
        self.alpha = alpha
        self.sub = Sub()
gi = 2
gf = 0.5
gb = True
gs = 'ab'
gt = (1, 2)
gl = [1, 2, 3]
gd = {'a': 1, 'b': 2.0}
gn = None
gmode = Mode.A
P = collections.namedtuple('P', 'a b')
@dataclasses.dataclass(frozen=True)
class DC:
    u: int = 1
    v: float = 2.0
gnt = P(1, 2)
gdc = DC()
def h1(a, k=2):
    return a * k
def h2(a, k=3):
    return a + k
def _make_h3():
    hc = 1.5
    def h3(a):
        return a * hc
    def set_hc(v):
        nonlocal hc
        hc = v
    return h3, set_hc
h3, set_hc = _make_h3()
gfn = h1
gp = functools.partial(h1, k=2)
OM = types.ModuleType(__name__ + '_other')
sys.modules[OM.__name__] = OM
exec("val = 2\ndef oh(a):\n    return a * val\n", OM.__dict__)
oh = OM.oh
gdk = {1: 'one', 2.5: 'x'}
ga = gl
class F(float):
    pass
gz = 0.0
gx = 1.5
gpa = functools.partial(h1, 2, k=3)
gdd = collections.defaultdict(int, {'a': 1})
git = iter(gl)
class Bare:
    pass
class BareChild(Bare):
    pass
go = BareChild()
def drop(owner, name):
    if name in vars(owner):
        delattr(owner, name)
def answers(v):
    def __getattr__(self, name):
        if name.startswith('_'):
            raise AttributeError(name)
        return v
    return __getattr__
class Pt:
    __match_args__ = ('a', 'b')
    def __init__(self, a=1, b=2):
        self.a, self.b = a, b
class PtSub(Pt):
    __match_args__ = ('b',)
gm = Pt()
class Getter:
    def __get__(self, obj, owner=None):
        return 1
class Getter2:
    def __get__(self, obj, owner=None):
        return 2 if obj is None else 3
class HoldsGetter:
    d = Getter()
gh = HoldsGetter()
class Twice(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2
    @staticmethod
    def backward(ctx, g):
        return g * 2
class Sized:
    def __init__(self, n):
        self.n = n
    def __len__(self):
        return self.n
class Truthy:
    def __init__(self, v):
        self.v = v
    def __bool__(self):
        return self.v
gsz = Sized(2)
gtr = Truthy(True)
gneg = -2.0
gni = -2
class OwnT(torch.Tensor):
    __torch_function__ = torch._C._disabled_torch_function_impl
    def double(self):
        return self * 2
    def __len__(self):
        return 42
class OwnT2(torch.Tensor):
    __torch_function__ = torch._C._disabled_torch_function_impl
    @property
    def ndim(self):
        return 7
    def __add__(self, other):
        return torch.sub(self, other)
def _same_kind(t, like):
    return t if type(like) is torch.Tensor else t.as_subclass(type(like))
class MutatingSink:
    def write(self, s):
        if s.strip():
            obj.n = obj.n + 1 if isinstance(obj.n, (int, float)) else 1
            gl.append(5)
            gd['m'] = len(s)
            mod.alpha = 0.5
            set_c1(7)
    def flush(self):
        pass
MSINK = MutatingSink()
def mutate():
    obj.n = obj.n + 1 if isinstance(obj.n, (int, float)) else 1
    gl.append(6)
    gd['m'] = 3
    mod.alpha = 0.25
obj = Cfg()
mod = M()
X = torch.randn(3, 4)
def _make():
    c1 = 1.5
    c2 = [1, 2]
    def f(x, d=3, *, kw=2.0):
        global gi, gl, gd, gs, gx, gneg
        r = []
        acc = x * 1.0
__BODY__
        return acc, r
    def set_c1(v):
        nonlocal c1
        c1 = v
    def set_c2(v):
        nonlocal c2
        c2 = v
    def get_c2():
        return c2
    return f, set_c1, set_c2, get_c2
f, set_c1, set_c2, get_c2 = _make()
'''

# The namespace's state a step may change, by root: the names above, plus "cls" (the classes'
# attributes), "h" (the helper functions), "X" (the tensor argument), "grad" (grad mode), and
# the builtins of SHADOWS (a global of that name).
# Each read or write names the roots whose change may change what it does.

READS: list[tuple[str, set[str]]] = [
    ("gi", {"gi"}), ("gf", {"gf"}), ("gb", {"gb"}), ("gt[0]", {"gt"}), ("gt[-1]", {"gt"}),
    ("len(gt)", {"gt"}), ("sum(gt)", {"gt"}), ("gl[0]", {"gl"}), ("gl[-1]", {"gl"}),
    ("len(gl)", {"gl"}), ("sum(gl)", {"gl"}), ("gd['a']", {"gd"}), ("gd.get('c', 0.25)", {"gd"}),
    ("gd.get('a', 0.5)", {"gd"}), ("len(gd)", {"gd"}), ("len(gs)", {"gs"}),
    ("(gn if gn is not None else 1.5)", {"gn"}),
    ("obj.scale", {"obj"}), ("obj.n", {"obj"}), ("obj.cfg.scale", {"obj"}),
    ("obj.cfg.k", {"obj"}), ("getattr(obj, 'extra', 0.75)", {"obj"}),
    ("obj.factor", {"obj", "cls"}), ("type(obj).factor", {"obj", "cls"}),
    ("Cfg.factor", {"cls"}), ("len(obj.name)", {"obj"}), ("getattr(obj.cfg, 'k', 9)", {"obj"}),
    ("mod.alpha", {"mod"}), ("mod.sub.beta", {"mod"}), ("(1.0 if mod.training else 2.0)", {"mod"}),
    ("(3 if mod.sub.training else 4)", {"mod"}), ("getattr(mod, 'gamma', 0.1)", {"mod"}),
    ("c1", {"c1"}), ("c2[0]", {"c2"}), ("len(c2)", {"c2"}), ("d", {"d"}), ("kw", {"kw"}),
    ("x.shape[0]", {"X"}), ("x.shape[-1]", {"X"}), ("x.ndim", {"X"}), ("x.numel()", {"X"}),
    ("(1 if x.is_contiguous() else 2)", {"X"}), ("(5 if x.requires_grad else 6)", {"X"}),
    ("(7 if x.dtype == torch.float32 else 8)", {"X"}),
    ("(9 if x.device.type == 'cpu' else 10)", {"X"}),
    ("x.size(0)", {"X"}), ("x.stride(0)", {"X"}), ("(1 if x.is_floating_point() else 2)", {"X"}),
    ("gmode.value", {"gmode"}), ("(1 if gmode is Mode.A else 2)", {"gmode"}),
    ("(1 if gmode == Mode.B else 3)", {"gmode"}),
    ("(1 if isinstance(obj, Cfg) else 2)", {"obj"}), ("(1 if type(obj) is Cfg else 2)", {"obj"}),
    ("(1 if isinstance(gi, int) else 2)", {"gi"}), ("(1 if type(gi) is bool else 0)", {"gi"}),
    ("(1 if isinstance(gn, str) else 0)", {"gn"}),
    ("(1 if isinstance(mod.sub, Sub) else 0)", {"mod"}),
    ("(1 if 'a' in gd else 0)", {"gd"}), ("(1 if 2 in gl else 0)", {"gl"}),
    ("(1 if gs in gd else 0)", {"gs", "gd"}), ("(1 if 'a' in gs else 0)", {"gs"}),
    ("(1 if 3 in gt else 0)", {"gt"}), ("(1 if hasattr(obj, 'extra') else 0)", {"obj"}),
    ("(1 if hasattr(obj.cfg, 'k') else 0)", {"obj"}),
    ("(1 if hasattr(mod, 'gamma') else 0)", {"mod"}),
    ("(1 if gs == 'ab' else 2)", {"gs"}), ("(1 if gs.startswith('a') else 2)", {"gs"}),
    ("sum(v for v in gd.values())", {"gd"}), ("sum(len(k) for k in gd)", {"gd"}),
    ("(gd[gs] if gs in gd else 0.5)", {"gs", "gd"}), ("len(get_c2())", {"c2"}),
    ("(1 if obj.flag else 0)", {"obj"}), ("(2 if gl else 3)", {"gl"}), ("(2 if gd else 3)", {"gd"}),
    ("(2 if gt else 3)", {"gt"}),
    ("(1 if callable(getattr(obj, 'extra', None)) else 0)", {"obj"}),
    ("len([k for k in gd if k in gs])", {"gd", "gs"}), ("max(gl, default=0)", {"gl"}),
    ("(1 if obj.cfg is not None else 0)", {"obj"}), ("len(mod._modules)", {"mod"}),
    ("(1 if 'gamma' in mod.__dict__ else 0)", {"mod"}),
    ("obj.twice", {"obj", "cls"}), ("obj.get_scale()", {"obj", "cls"}),
    ("obj.get_scale(2)", {"obj", "cls"}),
    ("gnt.a", {"gnt"}), ("gnt[1]", {"gnt"}), ("gdc.u", {"gdc"}), ("gdc.v", {"gdc"}),
    ("gfn(2)", {"gfn", "h"}), ("gp(3)", {"gp", "h"}), ("h3(2)", {"h"}), ("oh(2)", {"OM"}),
    ("h1(2)", {"h"}),
    ("(1 if gdk.get(1) == 'one' else 0)", {"gdk"}), ("len(gdk)", {"gdk"}),
    ("(1 if True in gdk else 0)", {"gdk"}),
    ("x._version", {"X"}), ("(1 if x.is_leaf else 0)", {"X"}), ("(1 if x.grad is None else 0)", {"X"}),
    ("x.dim()", {"X"}), ("x.storage_offset()", {"X"}), ("(1 if x.shape == (3, 4) else 0)", {"X"}),
    ("len(x)", {"X"}), ("x.T.shape[0]", {"X"}), ("(1 if torch.is_grad_enabled() else 0)", {"grad"}),
    ("Mode(gmode.value).value", {"gmode"}), ("getattr(obj, gs, 0)", {"obj", "gs"}),
    ("(1 if isinstance(gfn, functools.partial) else 0)", {"gfn"}), ("gl.count(2)", {"gl"}),
    ("(1 if x.dtype.is_floating_point else 0)", {"X"}), ("x.element_size()", {"X"}),
    ("gmode.w", {"gmode"}), ("len(ga)", {"ga", "gl"}), ("ga[-1]", {"ga", "gl"}),
    ("(1 if ga is gl else 0)", {"ga", "gl"}),
]

# Writes the body may make (a body with one never expects an unchanged call not to recompile).
WRITES: list[tuple[str, set[str]]] = [
    ("obj.n = obj.n + 1", {"obj"}), ("gl.append(len(gl))", {"gl"}),
    ("gd['w'] = gd.get('w', 0) + 1", {"gd"}), ("gi = gi + 1", {"gi"}),
    ("mod.alpha = mod.alpha * 2", {"mod"}), ("obj.cfg.scale = obj.cfg.scale + 0.5", {"obj"}),
    ("set_c1(c1 + 1)", {"c1"}), ("gs = gs + 'a'", {"gs"}), ("obj.last = acc", {"obj"}),
    ("mod.counter = getattr(mod, 'counter', 0) + 1", {"mod"}), ("gd.pop('a', None)", {"gd"}),
    ("get_c2().append(1)", {"c2"}), ("obj.extra = gi", {"obj", "gi"}), ("gd = {'a': 1}", {"gd"}),
    ("gl = gl + [1]", {"gl"}), ("obj.cfg = Inner(obj.n, 1)", {"obj"}),
    ("ga.append(7)", {"ga", "gl"}), ("mutate()", {"obj", "gl", "gd", "mod"}),
    ("print('m', file=MSINK)", {"obj", "gl", "gd", "mod", "c1"}),
    ("for i in range(len(gl)):\n    print(i, file=SINK)\n    acc = acc + gl[i]", {"gl"}),
    # over a copy of the items: eager raises if the sink resizes `gd` while a loop iterates
    # over it, and a trace that resized it before the loop does not (docs/dynamo.md, known gaps)
    ("for k, v in list(gd.items()):\n    print(k, file=MSINK)\n    acc = acc + len(k)",
     {"gd", "obj", "gl", "mod", "c1"}),
    ("for v in gl:\n    print(v, file=MSINK)\n    acc = acc + v\n    if len(gl) > 8:\n        break",
     {"gd", "obj", "gl", "mod", "c1"}),
    ("v0 = obj.n\nprint('m', file=MSINK)\nacc = acc + v0 * 10 + obj.n",
     {"obj", "gl", "gd", "mod", "c1"}),
    ("v0 = len(gl)\nmutate()\nacc = acc + v0 * 10 + len(gl) + mod.alpha",
     {"obj", "gl", "gd", "mod"}),
]

# Leaves of the arithmetic expressions: values that change (and so may become symbols).
OPERANDS: list[tuple[str, set[str]]] = [
    ("gi", {"gi"}), ("gf", {"gf"}), ("obj.n", {"obj"}), ("obj.scale", {"obj"}), ("d", {"d"}),
    ("kw", {"kw"}), ("c1", {"c1"}), ("mod.alpha", {"mod"}), ("gl[0]", {"gl"}),
    ("gd['a']", {"gd"}), ("x.shape[0]", {"X"}), ("x.shape[-1]", {"X"}), ("len(gl)", {"gl"}),
    ("gb", {"gb"}), ("gnt.a", {"gnt"}), ("gdc.v", {"gdc"}), ("obj.cfg.k", {"obj"}),
    ("x.numel()", {"X"}),
]
LITERALS = ["0", "1", "2", "-2", "3", "0.5", "-1.5", "7", "True"]
BINARY_OPERATORS = ["+", "-", "*", "/", "//", "%", "**", "==", "<", ">=", "!=", "and", "or",
                    "&", "|", "^", "<<"]
# prefixes of a call or an operator applied to one expression ("divmod(7, " takes it second)
UNARY_PREFIXES = ["abs(", "int(", "float(", "round(", "math.floor(", "math.ceil(", "math.sqrt(",
                  "(-", "(not ", "bool(", "math.trunc(", "operator.index(", "divmod(7, ",
                  "pow(2, ", "str(", "hash(", "math.isfinite(", "math.copysign(1.0, ",
                  "(lambda v: v * 2)(", "math.log2("]

# Newer kinds of state (generated after the others, see `generate`): a global and instance
# attributes the body deletes (`factor` also a class attribute), zeros of numpy and of a float
# subclass, a partial's arguments, a defaultdict's factory, itertools over a list and a global
# iterator; and builtins that a global comes to shadow (`SHADOWS`, what the step binds).
NEW_READS: list[tuple[str, set[str]]] = [
    ("(gx if 'gx' in globals() else -1.0)", {"gx"}), ("globals().get('gx', 0.5)", {"gx"}),
    ("getattr(obj, 'extra', 0.75)", {"obj"}), ("(1 if hasattr(obj, 'extra') else 0)", {"obj"}),
    ("obj.factor", {"obj", "cls"}), ("(1 if 'factor' in obj.__dict__ else 0)", {"obj"}),
    ("math.copysign(1.0, gz)", {"gz"}), ("math.copysign(2.0, -gz)", {"gz"}),
    ("math.copysign(1.0, gz * 3)", {"gz"}), ("(1 if isinstance(gz, F) else 0)", {"gz"}),
    ("(1 if type(gz) is float else 0)", {"gz"}), ("(abs(gz) + gz)", {"gz"}),
    ("(1 if gz == 0 else 2)", {"gz"}),
    ("gpa.args[0]", {"gpa"}), ("len(gpa.args)", {"gpa"}), ("gpa.keywords.get('k', 0)", {"gpa"}),
    ("len(gpa.keywords)", {"gpa"}), ("(1 if gpa.func is h1 else 0)", {"gpa"}),
    ("gpa()", {"gpa", "h"}), ("sum(gpa.args)", {"gpa"}),
    ("gdd.get('q', 0.5)", {"gdd"}), ("len(gdd)", {"gdd"}), ("(1 if 'q' in gdd else 0)", {"gdd"}),
    ("(1 if gdd.default_factory is int else 0)", {"gdd"}),
    ("(gdd.default_factory() if gdd.default_factory is not None else -1)", {"gdd"}),
    ("sum(itertools.islice(gl, 2))", {"gl"}), ("sum(itertools.chain(gl, gt))", {"gl", "gt"}),
    ("len(list(itertools.combinations(gl, 2)))", {"gl"}),
    ("list(itertools.accumulate(gl, initial=0))[-1]", {"gl"}),
    ("next(itertools.cycle(gl), -1)", {"gl"}), ("len(list(itertools.pairwise(gl)))", {"gl"}),
    ("next(itertools.dropwhile(lambda v: v < 2, gl), 0)", {"gl"}),
    ("sum(a * b for a, b in zip(gl, itertools.count(1)))", {"gl"}),
    ("len(list(itertools.zip_longest(gl, gt)))", {"gl", "gt"}),
    ("sum(itertools.starmap(operator.mul, itertools.product(gl, repeat=2)))", {"gl"}),
    ("abs(gi)", {"gi"}), ("len(gl)", {"gl"}), ("min(gl, default=0)", {"gl"}), ("max(gt, default=1)", {"gt"}),
    ("round(gf)", {"gf"}), ("(1 if isinstance(gf, float) else 0)", {"gf"}),
]
NEW_WRITES: list[tuple[str, set[str]]] = [
    ("if hasattr(obj, 'extra'):\n    del obj.extra", {"obj"}),
    ("if 'factor' in obj.__dict__:\n    del obj.factor", {"obj"}),
    # raises AttributeError where only the class has it
    ("if hasattr(obj, 'factor'):\n    del obj.factor", {"obj", "cls"}),
    ("if 'gx' in globals():\n    del gx", {"gx"}), ("gx = gi * 2", {"gx", "gi"}),
    ("obj.factor = gi", {"obj", "gi"}), ("obj.extra = gf", {"obj", "gf"}),
    ("acc = acc + gdd['q']", {"gdd"}), ("gdd['a'] = gdd['a'] + 1", {"gdd"}),
    ("gpa.keywords['k'] = len(gl)", {"gpa", "gl"}),
    ("acc = acc + next(git, -1)", {"git", "gl"}),
    ("for v in itertools.islice(git, 2):\n    acc = acc + v", {"git", "gl"}),
]
# (the shadowing `len` still grows with the list: a loop that stops at `len(gl) > 8` stops)
SHADOWS = {"abs": "lambda v: 42", "len": "lambda v: v.__len__() + 1", "min": "max", "max": "lambda *a, **k: -1",
           "round": "math.floor", "sum": "lambda v, *a: -5", "int": "float",
           "isinstance": "lambda o, c: False", "hasattr": "lambda o, n: True"}

# The latest kinds (generated after the newer ones, see `generate`): a class attribute or a
# `__getattr__` added to an object's class or its base after the body found no attribute
# (hasattr, getattr's default, AttributeError caught), and removed again; a class's
# `__match_args__` under a `match` on a class pattern; a descriptor's `__get__`; an
# autograd.Function's `forward`; `__len__`/`__bool__` answers (0, a numpy int, a bool, a float);
# negative bases of `**`; and inputs of tensor subclasses (torch-function off) that shadow
# Tensor's methods, switched with plain tensors.
LATEST_READS: list[tuple[str, set[str]]] = [
    ("getattr(go, 'zz', 5)", {"go"}), ("(1 if hasattr(go, 'zz') else 0)", {"go"}),
    ("getattr(obj, 'zz', 5)", {"obj"}), ("(1 if hasattr(obj, 'zz') else 0)", {"obj"}),
    ("getattr(obj, 'extra', 0.75)", {"obj"}), ("getattr(go, 'yy', 0.5)", {"go"}),
    ("gh.d", {"gh"}), ("HoldsGetter.d", {"gh"}), ("type(gh).d", {"gh"}),
    ("getattr(gh, 'd', 0)", {"gh"}),
    ("len(gsz)", {"gsz"}), ("(1 if gsz else 0)", {"gsz"}), ("(1 if not gtr else 2)", {"gtr"}),
    ("bool(gtr)", {"gtr"}), ("len(Sized(gi))", {"gi", "gsz"}),
    ("(1 if Sized(gi) else 0)", {"gi", "gsz"}),
    ("(1 if Truthy(gb) else 0)", {"gb"}), ("len(Sized(gsz.n))", {"gsz"}),
    ("gneg ** x.shape[0]", {"gneg", "X"}), ("gni ** x.shape[-1]", {"gni", "X"}),
    ("gneg ** d", {"gneg", "d"}), ("gni ** gi", {"gni", "gi"}), ("gneg ** 3", {"gneg"}),
    ("(-2) ** len(gl)", {"gl"}), ("gni ** 2 * gneg", {"gni", "gneg"}),
    ("len(x)", {"X"}), ("x.ndim", {"X"}), ("(1 if type(x) is torch.Tensor else 0)", {"X"}),
    ("(1 if isinstance(x, OwnT) else 0)", {"X"}), ("x.double().dtype", {"X"}),
    ("(x + 1).sum()", {"X"}), ("x.double().sum()", {"X"}),
]
# statements that read (and do not write) the latest kinds' state
LATEST_BLOCKS: list[tuple[str, set[str]]] = [
    ("try:\n    acc = acc + go.zz\nexcept AttributeError:\n    acc = acc - 1", {"go"}),
    ("try:\n    r.append(obj.zz)\nexcept AttributeError as e:\n    r.append(str(e))", {"obj"}),
    ("match gm:\n    case Pt(1, b):\n        acc = acc + b\n    case Pt(a) if a != 2:\n"
     "        acc = acc * a\n    case _:\n        acc = acc - 1", {"gm"}),
    ("match gm:\n    case PtSub(b=2):\n        r.append('sub')\n    case Pt(v):\n"
     "        r.append(v)\n    case object(a=v):\n        r.append(-v)", {"gm"}),
    ("acc = acc + Twice.apply(x)", {"Twice", "X"}), ("acc = Twice.apply(acc)", {"Twice"}),
    ("acc = acc + x.double()", {"X"}), ("acc = acc * (x + 1)", {"X"}),
    ("acc = acc * gneg ** acc.round()", {"gneg"}), ("acc = acc + (-2.0) ** x.shape[0]", {"X"}),
    ("if gsz:\n    acc = acc + len(gsz)\nelse:\n    acc = acc - 1", {"gsz"}),
    ("if gtr:\n    acc = acc + 1\nelif Truthy(gi):\n    acc = acc - 1", {"gtr", "gi"}),
    ("n = 0\nfor _ in range(len(Sized(gsz.n))):\n    n = n + 1\nacc = acc + n", {"gsz"}),
]
LATEST_WRITES: list[tuple[str, set[str]]] = [
    ("gsz.n = gsz.n + 1", {"gsz"}), ("gm.a = gm.a + 1", {"gm"}), ("gneg = -gneg", {"gneg"}),
    ("if 'zz' in vars(go):\n    del go.zz", {"go"}), ("go.zz = gi", {"go", "gi"}),
]


@dataclasses.dataclass(frozen=True)
class Mutation:
    """A statement run between calls, the root of the state it changes, and whether it leaves
    every value as it was (a recompilation after it is spurious)."""

    statement: str
    root: str
    no_op: bool = False


@dataclasses.dataclass(frozen=True)
class Case:
    seed: int
    dynamic: bool | None
    body: tuple[str, ...]  # snippets of f's body, in order
    reads: frozenset[str]  # the roots the body reads
    writes: bool  # whether the body writes state
    steps: tuple[tuple[Mutation, ...], ...]  # the changes before each call after the first


@dataclasses.dataclass
class Outcome:
    failure: tuple[str, str] | None  # kind, detail
    compiles: int
    spurious: list[str]  # steps that cannot change an answer and recompiled


# ----- generation ---------------------------------------------------------------------------


def _expression(rng: random.Random, depth: int = 0) -> tuple[str, set[str]]:
    """A random int/float/bool expression over OPERANDS, and the roots it reads."""
    if depth > 2 or rng.random() < 0.3:
        return rng.choice(OPERANDS) if rng.random() < 0.75 else (rng.choice(LITERALS), set())
    kind = rng.random()
    a, a_roots = _expression(rng, depth + 1)
    if kind < 0.55:
        b, b_roots = _expression(rng, depth + 1)
        op = rng.choice(BINARY_OPERATORS)
        if op == "**":
            b, b_roots = rng.choice(["2", "0.5", "-1", "0", "3"]), set()
        elif op == "<<":
            b, b_roots = rng.choice(["1", "2"]), set()
        return f"({a} {op} {b})", a_roots | b_roots
    if kind < 0.65:
        b, b_roots = _expression(rng, depth + 1)
        return f"{rng.choice(['min', 'max'])}({a}, {b})", a_roots | b_roots
    prefix = rng.choice(UNARY_PREFIXES)
    if prefix == "pow(2, ":  # an exponent like hash(0.5) == 2 ** 60 would never finish
        return f"pow(2, min({a}, 64))", a_roots
    return f"{prefix}{a})", a_roots


def _snippet(rng: random.Random, writes: bool, arithmetic: bool) -> tuple[str, set[str]]:
    """A piece of f's body and the roots it reads ("WRITE" among them if it writes)."""
    k = rng.random()
    if writes and k < 0.3:
        statement, roots = rng.choice(WRITES)
        return statement, roots | {"WRITE"}
    if k < 0.40:
        if arithmetic and rng.random() < 0.5:
            expression, roots = _expression(rng)
            return f"r.append({expression})", roots
        read, roots = rng.choice(READS)
        return f"acc = acc {rng.choice(['+', '-', '*'])} {read}", roots
    if k < 0.65:
        a, a_roots = rng.choice(READS)
        b, b_roots = rng.choice(READS)
        condition = rng.choice([f"{a} == {b}", a, f"{a} > 1", f"not {a}"])
        return f"if {condition}:\n    acc = acc + 1\nelse:\n    acc = acc * 2", a_roots | b_roots
    if k < 0.8:
        read, roots = rng.choice(READS)
        return f"r.append({read})", roots
    if k < 0.85:
        iterable, roots = rng.choice([("gl", {"gl"}), ("gd", {"gd"}), ("gt", {"gt"}),
                                      ("get_c2()", {"c2"}), ("gd.values()", {"gd"}),
                                      ("gd.items()", {"gd"})])
        return (f"for v in {iterable}:\n"
                "    acc = acc + (v if not isinstance(v, (str, tuple)) else len(v))"), roots
    if k < 0.94:  # a graph break
        read, roots = rng.choice([*READS, ("acc.shape", set()), ("'brk'", set())])
        return f"print({read}, file=SINK)", roots
    if k < 0.96:  # a graph break on a tensor's value
        return "if acc.sum() > 0:\n    acc = acc - 1", set()
    if k < 0.975:
        return "acc = mod.sub(acc)", {"mod"}
    read, roots = rng.choice(READS)
    return f"acc = acc.to(torch.float64) if {read} else acc", roots


def _mutation(rng: random.Random) -> Mutation:
    num = rng.choice(["0", "1", "2", "3", "-1", "0.5", "2.5", "True", "7", "1.25"])
    choices = [
        Mutation(f"gi = {rng.choice(['0', '1', '2', '5', '2.0', 'True', 'False', '-3'])}", "gi"),
        Mutation("gi = int(str(gi)) if type(gi) is int else gi", "gi", no_op=True),
        Mutation("gf = " + rng.choice(["0.5", "1.5", "-0.0", "0.0", "2", 'float("inf")', "1e-3"]),
                 "gf"),
        Mutation(f"gb = {rng.choice(['True', 'False', '0', '1', 'None'])}", "gb"),
        Mutation("gs = " + rng.choice(['"a"', '"b"', '"ab"', '"xyz"', '""']), "gs"),
        Mutation("gs = ''.join(list(gs))", "gs", no_op=True),
        Mutation(f"gt = {rng.choice(['(1, 2)', '(3,)', '(1, 2, 3)', '(1.5, 2)', '()', '(True, 2)'])}",
                 "gt"),
        Mutation("gt = tuple(list(gt))", "gt", no_op=True),
        Mutation(f"gl.append({num})", "gl"), Mutation(f"gl[0] = {num}", "gl"),
        Mutation("gl.pop() if gl else None", "gl"), Mutation(f"gl = [{num}, 2]", "gl"),
        Mutation(f"gl.insert(0, {num})", "gl"), Mutation("gl.clear()", "gl"),
        Mutation("gl.reverse()", "gl"), Mutation("gl[:] = list(gl)", "gl", no_op=True),
        Mutation(f"gd['a'] = {num}", "gd"), Mutation("gd.pop('a', None)", "gd"),
        Mutation(f"gd['c'] = {num}", "gd"), Mutation(f"gd = {{'b': {num}, 'a': 2}}", "gd"),
        Mutation("gd.clear()", "gd"), Mutation("gd = dict(reversed(list(gd.items())))", "gd"),
        Mutation(f"gd[gs] = {num}", "gd"), Mutation("gd = dict(gd)", "gd", no_op=True),
        Mutation("gn = " + rng.choice(["None", "3", '"ab"', "0.5"]), "gn"),
        Mutation(f"gmode = Mode.{rng.choice('AB')}", "gmode"),
        Mutation(f"obj.scale = {num}", "obj"), Mutation(f"obj.n = {num}", "obj"),
        Mutation(f"obj.extra = {num}", "obj"), Mutation("obj.__dict__.pop('extra', None)", "obj"),
        Mutation(f"obj.cfg.scale = {num}", "obj"), Mutation(f"obj.cfg = Inner({num}, 4)", "obj"),
        Mutation("obj = Cfg()", "obj"), Mutation("obj = Cfg2()", "obj"),
        Mutation("obj = SubCfg()", "obj"),
        Mutation(f"obj.factor = {num}", "obj"), Mutation("obj.__dict__.pop('factor', None)", "obj"),
        Mutation("obj.cfg.__dict__.pop('k', None)", "obj"),
        Mutation("obj.name = " + rng.choice(['"a"', '"xyz"', '"ab"']), "obj"),
        Mutation(f"obj.flag = {rng.choice(['True', 'False', '0', '[]', '[1]'])}", "obj"),
        Mutation("obj.scale = obj.scale", "obj", no_op=True), Mutation("obj.cfg = None", "obj"),
        Mutation("obj.extra = lambda: 1", "obj"),
        Mutation(f"Cfg.factor = {num}", "cls"), Mutation(f"SubCfg.factor = {num}", "cls"),
        Mutation(f"Cfg2.factor = {num}", "cls"),
        Mutation(f"mod.alpha = {num}", "mod"), Mutation("mod.train()", "mod"),
        Mutation("mod.eval()", "mod"),
        Mutation(f"mod.sub.train({rng.choice(['True', 'False'])})", "mod"),
        Mutation(f"mod.sub.beta = {num}", "mod"), Mutation(f"mod.gamma = {num}", "mod"),
        Mutation("mod.__dict__.pop('gamma', None)", "mod"), Mutation("mod = M()", "mod"),
        Mutation(f"mod.sub = Sub({num})", "mod"),
        Mutation("mod.alpha = mod.alpha", "mod", no_op=True),
        Mutation(f"set_c1({num})", "c1"), Mutation(f"set_c2([{num}, 5])", "c2"),
        Mutation(f"get_c2().append({num})", "c2"), Mutation(f"get_c2()[0] = {num}", "c2"),
        Mutation(f"f.__defaults__ = ({num},)", "d"),
        Mutation(f"f.__kwdefaults__ = {{'kw': {num}}}", "kw"),
        Mutation(f"X = torch.randn({rng.choice(['3, 4', '2, 4', '3, 5', '4', '2, 3, 4'])})", "X"),
        Mutation("X = torch.randn(4, 3).t()", "X"), Mutation("X = X.double()", "X"),
        Mutation("X = X.float()", "X"), Mutation("X = torch.randn(3, 4, requires_grad=True)", "X"),
        Mutation("X = X.detach()", "X"), Mutation("X = torch.arange(12).reshape(3, 4)", "X"),
        Mutation("X = X.clone()", "X"), Mutation("X = X[:, :2]", "X"),
        Mutation("X = _same_kind(torch.empty_strided(X.size(), X.stride(), dtype=X.dtype)"
                 ".copy_(X).requires_grad_(X.requires_grad), X)", "X", no_op=True),
        Mutation("X.add_(1) if not X.requires_grad else None", "X"), Mutation("X = X[1:]", "X"),
        Mutation("X = X * 1", "X"),
        Mutation("obj.__class__ = Cfg2", "obj"), Mutation("obj.__class__ = SubCfg", "obj"),
        Mutation(f"Cfg.get_scale = lambda self, m=1: {num} * m", "cls"),
        Mutation(f"Cfg.twice = property(lambda self: {num})", "cls"),
        Mutation(f"obj.get_scale = lambda m=1: {num}", "obj"),
        Mutation(f"Cfg.get_scale.__defaults__ = ({num},)", "cls"),
        Mutation("gnt = P(3, 4)", "gnt"), Mutation("gnt = P(1, 2)", "gnt", no_op=True),
        Mutation(f"gnt = P({num}, 2)", "gnt"),
        Mutation("gdc = DC(5)", "gdc"), Mutation("gdc = DC()", "gdc", no_op=True),
        Mutation(f"gdc = DC(1, {num})", "gdc"),
        Mutation("gfn = h2", "gfn"), Mutation("gfn = h1", "gfn"),
        Mutation(f"gfn = functools.partial(h2, k={num})", "gfn"),
        Mutation(f"h1.__defaults__ = ({num},)", "h"), Mutation("h1.__code__ = h2.__code__", "h"),
        Mutation(f"h2.__defaults__ = ({num},)", "h"),
        Mutation(f"gp = functools.partial(h1, k={num})", "gp"), Mutation(f"set_hc({num})", "h"),
        Mutation(f"OM.val = {num}", "OM"), Mutation("OM.oh = lambda a: a - 1", "OM"),
        Mutation("gdk[True] = 'T'", "gdk"), Mutation("gdk[1] = 'one'", "gdk"),
        Mutation("gdk.pop(1, None)", "gdk"), Mutation("gdk[1.0] = 'f'", "gdk"),
        Mutation("gdk = {True: 'one'}", "gdk"),
        Mutation(f"torch.set_grad_enabled({rng.choice(['True', 'False'])})", "grad"),
        Mutation("mod.sub.register_forward_hook(lambda m, i, o: o + 1)", "mod"),
        Mutation("mod.sub.forward = lambda x: x * 10", "mod"),
        Mutation("mod.sub.__dict__.pop('forward', None)", "mod"),
        Mutation("mod.sub._forward_hooks.clear()", "mod"),
        Mutation("mod.sub.register_forward_pre_hook(lambda m, i: (i[0] * 3,))", "mod"),
        Mutation(f"Mode.A.w = {num}", "gmode"),
        Mutation("ga = list(gl)", "ga"), Mutation("ga = gl", "ga"),
        Mutation(f"obj.cfg = obj.cfg if obj.cfg is not None else Inner({num})", "obj"),
    ]
    return rng.choice(choices)


def _new_snippet(rng: random.Random, writes: bool) -> tuple[str, set[str]]:
    """A piece of f's body of the newer kinds, and the roots it reads."""
    if writes and rng.random() < 0.4:
        statement, roots = rng.choice(NEW_WRITES)
        return statement, roots | {"WRITE"}
    read, roots = rng.choice(NEW_READS)
    if rng.random() < 0.3:
        return f"if {read}:\n    acc = acc + 1\nelse:\n    acc = acc * 2", roots
    if rng.random() < 0.2:
        return f"print({read}, file=SINK)", roots
    return rng.choice([f"r.append({read})", f"acc = acc + {read}"]), roots


def _new_mutation(rng: random.Random) -> Mutation:
    num = rng.choice(["0", "1", "2", "3", "-1", "0.5", "2.5", "True", "7", "1.25"])
    name = rng.choice(list(SHADOWS))
    factory = rng.choice(["int", "float", "bool", "None", "lambda: 2.5", f"lambda: {num}"])
    zero = rng.choice(["0.0", "-0.0", "np.float64(-0.0)", "np.float64(0.0)", "np.float32(-0.0)",
                       "F(-0.0)", "F(0.0)", "np.float64(0.5)", "F(-1.5)", "np.int64(0)"])
    choices = [
        Mutation(f"{name} = {SHADOWS[name]}", name), Mutation(f"globals().pop('{name}', None)", name),
        Mutation(f"gx = {num}", "gx"), Mutation("globals().pop('gx', None)", "gx"),
        Mutation(f"obj.extra = {num}", "obj"), Mutation(f"obj.factor = {num}", "obj"),
        Mutation("obj.__dict__.pop('extra', None)", "obj"),
        Mutation("obj.__dict__.pop('factor', None)", "obj"),
        Mutation(f"gz = {zero}", "gz"), Mutation("gz = type(gz)(gz)", "gz", no_op=True),
        Mutation(f"gpa = functools.partial(h1, {num}, k={num})", "gpa"),
        Mutation(f"gpa = functools.partial(h2, {num})", "gpa"),
        Mutation(f"gpa = functools.partial(h1, k={num})", "gpa"),
        Mutation(f"gpa = functools.partial(gpa, k={num})", "gpa"),
        Mutation(f"gpa = functools.partial(gpa, {num})", "gpa"),
        Mutation(f"gpa.keywords['k'] = {num}", "gpa"), Mutation("gpa.keywords.pop('k', None)", "gpa"),
        Mutation("gpa = functools.partial(gpa.func, *gpa.args, **gpa.keywords)", "gpa",
                 no_op=True),
        Mutation(f"gdd.default_factory = {factory}", "gdd"),
        Mutation(f"gdd = collections.defaultdict({factory})", "gdd"),
        Mutation("gdd.pop('q', None)", "gdd"), Mutation(f"gdd['q'] = {num}", "gdd"),
        Mutation("gdd = collections.defaultdict(gdd.default_factory, gdd)", "gdd", no_op=True),
        Mutation("git = iter(gl)", "git"), Mutation("git = itertools.chain(gl, gt)", "git"),
        Mutation("git = itertools.cycle(gl)", "git"), Mutation("git = itertools.islice(gl, 1, None)", "git"),
        Mutation(f"git = itertools.count({num})", "git"), Mutation("git = itertools.accumulate(gl)", "git"),
        Mutation(f"gl.append({num})", "gl"), Mutation("gl.clear()", "gl"),
        Mutation(f"gl[:] = [{num}, 3]", "gl"), Mutation("gl.reverse()", "gl"),
    ]
    return rng.choice(choices)


def _latest_snippet(rng: random.Random, writes: bool) -> tuple[str, set[str]]:
    """A piece of f's body of the latest kinds, and the roots it reads."""
    if writes and rng.random() < 0.3:
        statement, roots = rng.choice(LATEST_WRITES)
        return statement, roots | {"WRITE"}
    if rng.random() < 0.4:
        return rng.choice(LATEST_BLOCKS)
    read, roots = rng.choice(LATEST_READS)
    if rng.random() < 0.3:
        return f"if {read}:\n    acc = acc + 1\nelse:\n    acc = acc * 2", roots
    return rng.choice([f"r.append({read})", f"acc = acc + {read}"]), roots


def _latest_mutation(rng: random.Random) -> Mutation:
    num = rng.choice(["0", "1", "2", "3", "-1", "0.5", "2.5", "True", "7", "1.25"])
    base = rng.choice(["Bare", "BareChild"])
    getter = rng.choice([f"lambda self, name: {num}", f"answers({num})"])
    match_args = rng.choice(["('b', 'a')", "('a',)", "()", "('a', 'b')", "('c',)", "['a']"])
    forward = rng.choice([f"lambda ctx, x: x * {num}", "lambda ctx, x: x + 1",
                          "lambda ctx, x: x.sum() + x"])
    length = rng.choice(["0", "3", "np.int64(2)", "True", "-1", "2.0", "False", "np.int32(0)"])
    truth = rng.choice(["True", "False", "1", "None", "np.bool_(False)", "np.bool_(True)"])
    choices = [
        Mutation(f"{base}.zz = {num}", "go"), Mutation(f"drop({base}, 'zz')", "go"),
        Mutation(f"{base}.__getattr__ = {getter}", "go"),
        Mutation(f"drop({base}, '__getattr__')", "go"),
        Mutation("go = Bare()", "go"), Mutation("go = BareChild()", "go"),
        Mutation(f"go.zz = {num}", "go"), Mutation("drop(go, 'zz')", "go"),
        Mutation(f"Cfg.zz = {num}", "obj"), Mutation("drop(Cfg, 'zz')", "obj"),
        Mutation(f"Cfg.extra = {num}", "obj"), Mutation("drop(Cfg, 'extra')", "obj"),
        Mutation(f"Cfg.__getattr__ = answers({num})", "obj"),
        Mutation("drop(Cfg, '__getattr__')", "obj"),
        Mutation(f"Pt.__match_args__ = {match_args}", "gm"),
        Mutation(f"PtSub.__match_args__ = {match_args}", "gm"),
        Mutation("drop(PtSub, '__match_args__')", "gm"),
        Mutation("Pt.__match_args__ = tuple(Pt.__match_args__)", "gm", no_op=True),
        Mutation(f"gm = Pt({num}, {rng.choice(['1', '2', '3'])})", "gm"),
        Mutation("gm = PtSub(1, 2)", "gm"), Mutation(f"gm.a = {num}", "gm"),
        Mutation(f"gm.b = {num}", "gm"),
        Mutation(f"Getter.__get__ = lambda self, o, t=None: {num}", "gh"),
        Mutation(f"Getter2.__get__ = lambda self, o, t=None: {num}", "gh"),
        Mutation("HoldsGetter.d = Getter2()", "gh"), Mutation("HoldsGetter.d = Getter()", "gh"),
        Mutation(f"gh.__dict__['d'] = {num}", "gh"), Mutation("gh.__dict__.pop('d', None)", "gh"),
        Mutation("Getter.__set__ = lambda self, o, v: None", "gh"),
        Mutation("drop(Getter, '__set__')", "gh"), Mutation("gh = HoldsGetter()", "gh"),
        Mutation(f"Twice.forward = staticmethod({forward})", "Twice"),
        Mutation("Twice.forward = staticmethod(lambda x: x - 1); "
                 "Twice.setup_context = staticmethod(lambda ctx, inputs, output: None)", "Twice"),
        Mutation("Twice.forward = staticmethod(lambda ctx, x: x * 2); drop(Twice, 'setup_context')",
                 "Twice"),
        Mutation(f"gsz.n = {length}", "gsz"), Mutation(f"gsz = Sized({length})", "gsz"),
        Mutation("Sized.__len__ = lambda self: self.n + 1", "gsz"),
        Mutation("Sized.__len__ = lambda self: self.n", "gsz"),
        Mutation("Sized.__bool__ = lambda self: False", "gsz"),
        Mutation("drop(Sized, '__bool__')", "gsz"),
        Mutation(f"gtr.v = {truth}", "gtr"), Mutation(f"gtr = Truthy({truth})", "gtr"),
        Mutation("gneg = " + rng.choice(["-2.0", "2.0", "-0.5", "-1", "-2", "3", "0.0", "-0.0",
                                         "np.float64(-2.0)"]), "gneg"),
        Mutation("gneg = -gneg", "gneg"),
        Mutation("gni = " + rng.choice(["-2", "2", "-3", "0", "-1", "True"]), "gni"),
        Mutation("X = X.as_subclass(OwnT)", "X"), Mutation("X = X.as_subclass(OwnT2)", "X"),
        Mutation("X = X.as_subclass(torch.Tensor)", "X"),
        Mutation("X = torch.randn(3, 4).as_subclass(OwnT)", "X"),
    ]
    return rng.choice(choices)


def generate(seed: int) -> Case:
    """The case of `seed`."""
    rng = random.Random(seed)
    count = rng.randint(1, 6)
    writes = rng.random() < 0.35
    arithmetic = rng.random() < 0.5
    snippets = [_snippet(rng, writes, arithmetic) for _ in range(count)]
    steps = tuple(tuple(_mutation(rng) for _ in range(rng.choice([0, 1, 1, 1, 2, 3])))
                  for _ in range(rng.randint(3, 8)))
    # The newer kinds come from a generator of their own, after the others: a seed keeps the
    # snippets and changes it had before they were added (the seeds of fixed bugs that
    # test_stale_fuzz.py samples), and some seeds get none.
    more = random.Random(f"{seed} more")
    if more.random() < 0.6:
        snippets += [_new_snippet(more, writes) for _ in range(more.randint(1, 3))]
        steps = tuple(step + tuple(_new_mutation(more) for _ in range(more.choice([0, 1, 1, 2])))
                      for step in steps)
    latest = random.Random(f"{seed} latest")  # the latest kinds, after those for the same reason
    if latest.random() < 0.6:
        snippets += [_latest_snippet(latest, writes) for _ in range(latest.randint(1, 3))]
        steps = tuple(step + tuple(_latest_mutation(latest)
                                   for _ in range(latest.choice([0, 1, 1, 2])))
                      for step in steps)
    reads = frozenset().union(*(roots for _, roots in snippets))
    reads |= {name for name in SHADOWS  # a builtin read by name (not a method: `x.sum()`)
              if any(re.search(rf"(?<![.\w]){name}\b", s) for s, _ in snippets)}
    return Case(seed=seed, dynamic=rng.choice([None, None, True, False]),
                body=tuple(snippet for snippet, _ in snippets), reads=reads - {"WRITE"},
                writes="WRITE" in reads, steps=steps)


def _source(case: Case) -> str:
    lines = [" " * 8 + line for snippet in case.body for line in snippet.split("\n")]
    return NAMESPACE_SOURCE.replace("__BODY__", "\n".join(lines) or " " * 8 + "pass")


# ----- running ------------------------------------------------------------------------------

MODULE_PREFIX = "stale_fuzz_case_"  # the modules a case makes (in sys.modules while it runs)
SNAPSHOT = ["ga", "gi", "gf", "gb", "gs", "gt", "gl", "gd", "gn", "gmode", "obj", "mod", "X", "gdk",
            "gx", "gz", "gdd", "go", "gm", "gh", "gsz", "gtr", "gneg", "gni"]


class CompileCounter:
    """Counts the frames dynamo converts (a function's and its resume functions')."""

    def __init__(self) -> None:
        self.count = 0

    @contextlib.contextmanager
    def counting(self) -> Iterator[CompileCounter]:
        convert = dynamo.frontend.convert_frame

        def counted(*args, **kwargs):
            self.count += 1
            return convert(*args, **kwargs)

        dynamo.frontend.convert_frame = counted
        try:
            yield self
        finally:
            dynamo.frontend.convert_frame = convert


def _comparable(value: object, depth: int = 0) -> object:
    """What of `value` eager and compiled must agree on, as a comparable value."""
    if isinstance(value, torch.Tensor):
        t = value.detach()
        t = torch.view_as_real(t) if t.is_complex() else t
        values = t.tolist() if t.dtype == torch.bool else t.double().nan_to_num(1e300).tolist()
        signs = torch.signbit(t).tolist() if t.is_floating_point() else None
        return ("tensor", type(value).__name__, tuple(t.shape), t.stride(), value.dtype,
                value.requires_grad, values, signs)
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, [_comparable(item, depth) for item in value])
    if isinstance(value, dict):
        return ("dict", [(_comparable(k, depth), _comparable(v, depth)) for k, v in value.items()])
    if isinstance(value, float):
        kind = type(value).__name__  # float, a numpy float or a subclass
        return (kind, "nan") if math.isnan(value) else (kind, value, math.copysign(1, value))
    if isinstance(value, (int, str, complex, type(None), enum.Enum)):
        return (type(value).__name__, repr(value))
    if isinstance(value, torch.nn.Module):
        if depth > 2:
            return ("module", type(value).__name__)
        attributes = sorted((k, v) for k, v in vars(value).items()
                            if not k.startswith("_") and k != "training")
        return ("module", type(value).__name__, value.training,
                [(k, _comparable(v, depth + 1)) for k, v in attributes],
                [(k, _comparable(v, depth + 1)) for k, v in value._modules.items()],
                len(value._forward_hooks), len(value._forward_pre_hooks))
    if callable(value):
        return ("callable", type(value).__name__, getattr(value, "__name__", None))
    if hasattr(value, "__dict__") and depth <= 2:
        return ("object", type(value).__name__,
                [(k, _comparable(v, depth + 1)) for k, v in sorted(vars(value).items())])
    return (type(value).__name__, repr(value)[:50])


def _state(namespace: dict) -> list:
    state = [(name, _comparable(namespace[name]) if name in namespace else "<unbound>")
             for name in SNAPSHOT]
    cells = [cell.cell_contents for cell in namespace["f"].__closure__ or ()]
    return [*state, ("cells", [_comparable(c) for c in cells if not callable(c)])]


def _call(fn: Callable, namespace: dict) -> tuple:
    """Everything eager and compiled must agree on after `fn(X)`: result or exception, printed
    text, the state afterwards, grad mode."""
    sink = namespace["SINK"]
    sink.seek(0)
    sink.truncate()
    try:
        result = ("returned", _comparable(fn(namespace["X"])))
    except Exception as error:
        result = ("raised", type(error).__name__, str(error)[:200])
    printed = re.sub(r"0x[0-9a-f]+", "0x?", sink.getvalue())
    return result, printed, _state(namespace), torch.is_grad_enabled()


def _namespace(case: Case, tag: str) -> dict:
    torch.manual_seed(case.seed)
    module = types.ModuleType(f"{MODULE_PREFIX}{case.seed}_{tag}")
    sys.modules[module.__name__] = module
    exec(compile(_source(case), f"<stale_fuzz case {case.seed}>", "exec"), module.__dict__)
    return module.__dict__


def run(case: Case) -> Outcome:
    """Run `case` eagerly and compiled, each in a namespace of its own."""
    dynamo.reset()
    try:
        with torch.random.fork_rng(), CompileCounter().counting() as counter:
            return _run(case, counter)
    finally:
        torch.set_grad_enabled(True)
        for name in [name for name in sys.modules if name.startswith(MODULE_PREFIX)]:
            del sys.modules[name]
        dynamo.reset()


_ASPECTS = ("result", "printed text", "state afterwards", "grad mode")


def _run(case: Case, counter: CompileCounter) -> Outcome:
    eager, compiled = _namespace(case, "eager"), _namespace(case, "compiled")
    compiled_f = dynamo.compile(compiled["f"], backend="eager", dynamic=case.dynamic)
    spurious: list[str] = []

    def failed(kind: str, detail: str) -> Outcome:
        return Outcome((kind, detail), counter.count, spurious)

    for i, step in enumerate(((), *case.steps)):
        grad = torch.is_grad_enabled()  # each namespace's changes start from the same grad mode
        for namespace in (eager, compiled):
            torch.manual_seed(case.seed * 1000 + i)
            torch.set_grad_enabled(grad)
            for mutation in step:
                with contextlib.suppress(Exception):  # the same error in both namespaces
                    exec(mutation.statement, namespace)
        for call in (1, 2):
            where = f"step {i} call {call}"
            before = counter.count
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                grad = torch.is_grad_enabled()
                expected = _call(eager["f"], eager)
                torch.set_grad_enabled(grad)
                got = _call(compiled_f, compiled)
            for warning in caught:
                if "do not hold for the inputs" in str(warning.message):
                    return failed("guards do not hold", f"{where}: {warning.message}")
            for aspect, e, g in zip(_ASPECTS, expected, got):
                if e != g:
                    return failed(f"{aspect} differs", f"{where}: eager {e!r}\n  compiled {g!r}")
            compiles = counter.count - before
            if not compiles or case.writes:
                continue
            if call == 2:
                return failed("recompiled unchanged", f"{where}: {compiles} compilations")
            roots = {mutation.root for mutation in step}
            if step and all(mutation.no_op for mutation in step) and not (
                    "X" in roots and any("_version" in line for line in case.body)):
                # (a copy of X is X again, but for its version counter: `copy_` counts)
                spurious.append(f"step {i}: no-op changes recompiled: {_statements(step)}")
            elif step and not roots & (case.reads | {"X", "grad"}):
                spurious.append(f"step {i}: changes to unread state recompiled: {_statements(step)}")
    return Outcome(None, counter.count, spurious)


def _statements(step: tuple[Mutation, ...]) -> str:
    return "; ".join(mutation.statement for mutation in step)


# ----- reporting ----------------------------------------------------------------------------


def script(case: Case) -> str:
    """`case` as a script that prints eager's and the compiled answers at each step. It runs
    both in one namespace (the fuzzer gives each its own), so a body that writes state may
    need splitting."""
    lines = ["import torch", "import dynamo", f"torch.manual_seed({case.seed})",
             _source(case).strip("\n"),
             f"compiled_f = dynamo.compile(f, backend='eager', dynamic={case.dynamic})",
             "def check(step):",
             "    for name, fn in (('eager', f), ('compiled', compiled_f)):",
             "        SINK.seek(0); SINK.truncate()",
             "        try: result = fn(X)",
             "        except Exception as error: result = repr(error)",
             "        print(step, name, result, repr(SINK.getvalue()))",
             "check(0)"]
    for i, step in enumerate(case.steps, 1):
        lines += [mutation.statement for mutation in step]
        lines.append(f"check({i})")
    return "\n".join(lines) + "\n"


def minimize(case: Case, kind: str) -> Case:
    """A smaller case that still fails with `kind` ("spurious": still recompiles spuriously):
    steps, snippets of the body and single changes dropped while that holds."""

    def still_fails(smaller: Case) -> bool:
        try:
            outcome = run(smaller)
        except Exception:
            return False
        if kind == "spurious":
            return outcome.failure is None and bool(outcome.spurious)
        return outcome.failure is not None and outcome.failure[0] == kind

    def smaller_cases(case: Case) -> Iterator[Case]:
        for i in reversed(range(len(case.steps))):
            yield dataclasses.replace(case, steps=case.steps[:i] + case.steps[i + 1:])
        for i in reversed(range(len(case.body))):
            yield dataclasses.replace(case, body=case.body[:i] + case.body[i + 1:])
        for i, step in enumerate(case.steps):
            for j in reversed(range(len(step))):
                shorter = (*case.steps[:i], step[:j] + step[j + 1:], *case.steps[i + 1:])
                yield dataclasses.replace(case, steps=shorter)

    shrunk = True
    while shrunk:
        shrunk = False
        for smaller in smaller_cases(case):
            if still_fails(smaller):
                case, shrunk = smaller, True
                break
    return case


def describe(case: Case, outcome: Outcome) -> str:
    """What failed in `case` (or recompiled spuriously), and the commands that reproduce it."""
    command = f"python packages/dynamo/tests/stale_fuzz.py --seed {case.seed}"
    what = (f"{outcome.failure[0]} at {outcome.failure[1]}" if outcome.failure
            else "spurious recompilation: " + "; ".join(outcome.spurious))
    return (f"seed {case.seed}: {what}\n  the case as a script: {command} --show\n"
            f"  shrunk to a repro:    {command} --minimize")


def sweep(start: int, count: int) -> int:
    """Run seeds start .. start + count - 1, print what fails; returns the number of failures
    (spurious recompilations are printed, not counted)."""
    began = time.time()
    failures = spurious = compiles = 0
    for seed in range(start, start + count):
        case = generate(seed)
        try:
            outcome = run(case)
        except Exception:
            outcome = Outcome(("harness error", traceback.format_exc()[-600:]), 0, [])
        compiles += outcome.compiles
        failures += outcome.failure is not None
        spurious += outcome.failure is None and bool(outcome.spurious)
        if outcome.failure or outcome.spurious:
            print(describe(case, outcome), flush=True)
    print(f"seeds {start}..{start + count - 1}: {failures} failures, {spurious} with spurious "
          f"recompilations, {compiles} compilations, {time.time() - began:.0f} s")
    return failures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--start", type=int, default=0, help="first seed of a sweep")
    parser.add_argument("--n", type=int, default=100, help="number of seeds in a sweep")
    parser.add_argument("--seed", type=int, help="run one case")
    parser.add_argument("--show", action="store_true", help="print the case as a script")
    parser.add_argument("--minimize", action="store_true",
                        help="shrink a failing case and print it as a script")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    if args.seed is None:
        return 1 if sweep(args.start, args.n) else 0
    case = generate(args.seed)
    outcome = run(case)
    print(describe(case, outcome) if outcome.failure or outcome.spurious
          else f"seed {case.seed}: no failure ({outcome.compiles} compilations)")
    if args.minimize and (outcome.failure or outcome.spurious):
        case = minimize(case, outcome.failure[0] if outcome.failure else "spurious")
        print(describe(case, run(case)))
        print(script(case))
    elif args.show or args.minimize:
        print(script(case))
    return 1 if outcome.failure else 0


if __name__ == "__main__":
    sys.exit(main())
