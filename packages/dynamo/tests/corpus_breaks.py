"""Programs with graph breaks: every template below with every kind of break.

A template is a function body with `{B}` where a break goes (an expression over the tensor
named by `{T}`); a kind of break is such an expression. Templates cover the positions a break
can take (start, middle, end, under values on the stack, inside a callee, a module or a method,
between side effects, inside a loop, ...); `graphs` is how many graphs the first call compiles
(no kind of break adds tensor work of its own, so the count depends on the template only).
`state` names the arguments whose state after the call must match eager's (side effects).
Every kind of break leaves values that are the same on every call (a value that differs, an
`id()` say, would be guarded and recompile each call).
"""

from __future__ import annotations

import binascii  # noqa: F401 (used by the generated programs)

import torch
from torch import nn  # noqa: F401 (used by the generated programs)

import dynamo

KINDS = {
    "print": 'print("break", end="")',
    "graph_break": "dynamo.graph_break()",
    "disabled": "disabled_identity({T})",
    "c_function": 'binascii.crc32(b"k")',
    "numpy": "{T}.numpy() is not None",
    "new_object": "bytearray() is not None",
    "callee": "breaking_callee({T})",
}


@dynamo.disable
def disabled_identity(t):
    return t


def breaking_callee(t):
    print(end="")
    return t


def one_of(value):
    return 1


def kw_helper(t, flag=None):
    return t * 2 if flag is None else t * 3


FLAG = True


class Counter:
    def __init__(self):
        self.count = 0


def _tensor(seed):
    return torch.randn(3, generator=torch.Generator().manual_seed(seed))


# name: (parameters, body, graphs, make(seed) -> args, names of arguments whose state matters)
TEMPLATES = {
    "start": ("x", "v = {B}\n    return x * 2", 1),
    "middle": ("x", "a = x + 1\n    v = {B}\n    return a * 3", 2),
    "end_unused": ("x", "a = x.sin()\n    {B}\n    return a", 1),
    "under_stack_values": ("x", "y = (x * 2) * one_of({B})\n    return y", 2),
    "in_callee": ("x", "return inner_{K}(x) - 1", 3),
    "in_module": ("x", "return MODULE_{K}(x)", 2),
    "keyword_argument": ("x", "v = kw_helper(x, flag={B})\n    return v + 1", 1),
    "two_breaks": ("x", "a = x + 1\n    {B}\n    b = a * 2\n    {B}\n    return b - 1", 3),
    "list_side_effect": ("x, log", "log.append(x.sum())\n    {B}\n    log.append(x.mean())\n"
                         "    return x + 1, log", 2),
    "attribute_side_effect": ("x, obj", "obj.count = obj.count + 1\n    {B}\n"
                              "    return x * obj.count", 1),
    "constant_branch": ("x", "if FLAG:\n        v = {B}\n    return x - 1", 1),
    "many_locals": ("x", 'n = 3\n    items = [x, x * 2]\n    d = {{"k": x + 1}}\n    v = {B}\n'
                    '    return items[1] + d["k"] * n', 2),
    "after_no_grad": ("x", "with torch.no_grad():\n        a = x * 2\n    v = {B}\n"
                      "    return a + 1", 2),
    "in_loop": ("x", "for i in range(3):\n        x = x + i\n        v = {B}\n    return x", 2),
    "value_returned": ("x", "v = {B}\n    return x * 2, v", 1),
    "returns_input": ("x", "v = {B}\n    return x", 0),
    "in_method": ("x", "return HELPER_{K}.run(x)", 2),
    "after_inplace_on_input": ("x", "x.add_(1)\n    v = {B}\n    return x * 2", 2),
    "dict_side_effect": ("x, d", 'd["a"] = x * 2\n    v = {B}\n    d["b"] = d["a"] + 1\n'
                         "    return d", 2),
    "callee_of_callee": ("x", "return outer_{K}(x)", 4),
    "null_on_stack": ("x", "return x.add(one_of({B}))", 1),
    "tensor_branch_after": ("x", "v = {B}\n    if x.sum() > -100:\n        return x * 2\n"
                            "    return x * 3", 2),
    "in_no_grad": ("x", "with torch.no_grad():\n        a = x * 2\n        v = {B}\n"
                   "        b = a + 1\n    return b * x, b.requires_grad", 2),
    "in_try": ("x", "try:\n        a = x + 1\n        v = {B}\n        a = a * 2\n"
               "    except ValueError:\n        a = a - 1\n    return a", 2),
    "in_finally": ("x", "try:\n        a = x + 1\n    finally:\n        v = {B}\n"
                   "    return a * 2", 2),
    "raise_caught": ("x", 'try:\n        a = x * 2\n        v = {B}\n        raise ValueError("x")\n'
                     "    except ValueError:\n        a = a + 1\n    return a", 2),
}

HELPERS = '''
def inner_{K}(a):
    b = a + 1
    v = {B_a}
    return b * 2


def outer_{K}(a):
    return inner_{K}(a * 2) - 1


class Module_{K}(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)

    def forward(self, x):
        h = self.lin(x)
        v = {B_x}
        return h.relu()


class Helper_{K}:
    def run(self, x):
        y = x * 3
        v = {B_x}
        return y + 1


MODULE_{K} = Module_{K}()
HELPER_{K} = Helper_{K}()
'''


def _make(params: str):
    def make(seed):
        args = [_tensor(seed)]
        if "log" in params:
            args.append([])
        if "obj" in params:
            args.append(Counter())
        if ", d" in params:
            args.append({})
        return args
    return make


PROGRAMS: list[tuple[str, object, object, int, list[int]]] = []
for kind, expression in KINDS.items():
    exec(HELPERS.format(K=kind, B_a=expression.format(T="a"), B_x=expression.format(T="x")),
         globals())
    for name, (params, body, graphs) in TEMPLATES.items():
        source = f"def {name}_{kind}({params}):\n    " + body.format(
            B=expression.format(T="x"), K=kind)
        exec(source, globals())
        fn = globals()[f"{name}_{kind}"]
        state = [i for i, p in enumerate(params.split(", ")) if p in ("log", "obj", "d", "x")]
        PROGRAMS.append((f"{name}-{kind}", fn, _make(params), graphs, state))
