"""Small programs for the capture corpus: each is called eagerly and compiled, on two inputs.

A program is a function plus a maker of its arguments (called with a seed, so the two calls
get different values; sizes may differ by seed too). `graphs` is how many graphs a compiled
run over both inputs should build: 1 when the second call hits the cache, 2 when it must
recompile (a new size with static shapes).
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import math
import operator

import torch
import torch.nn.functional as F

PROGRAMS: list[tuple[str, object, object, int]] = []


def program(make, graphs: int = 1):
    def add(fn):
        PROGRAMS.append((fn.__name__, fn, make, graphs))
        return fn
    return add


def t(*shape):
    return lambda seed: (torch.randn(*shape, generator=torch.Generator().manual_seed(seed)),)


def tt(*shape):
    def make(seed):
        g = torch.Generator().manual_seed(seed)
        return torch.randn(*shape, generator=g), torch.randn(*shape, generator=g)
    return make


def sized(seed):
    return (torch.randn(2 + seed, 3, generator=torch.Generator().manual_seed(seed)),)


SCALE = 3.0
Point = collections.namedtuple("Point", ["x", "y"])


@dataclasses.dataclass
class Config:
    scale: float = 2.0
    use_relu: bool = True


CONFIG = Config()


def helper(x, k=2):
    return x * k + 1


def outer_helper(x):
    return helper(x, k=3) - helper(x)


# ----- arithmetic and torch functions -------------------------------------------------------

@program(tt(3, 4))
def add_mul(x, y):
    return x + y * 2


@program(tt(3, 4))
def sub_div_pow(x, y):
    return (x - y) / (y.abs() + 1) ** 2


@program(tt(4, 4))
def matmul_op(x, y):
    return x @ y


@program(tt(3, 4))
def comparisons(x, y):
    return (x > y).float() + (x <= 0).float()


@program(t(3, 4))
def unary(x):
    return -x, +x, ~(x > 0), abs(x)


@program(t(3, 4))
def torch_functions(x):
    return torch.sin(x) + torch.cos(x) * torch.exp(-x.abs())


@program(t(3, 4))
def reductions(x):
    return x.sum(), x.mean(dim=1), x.max(dim=0).values, x.argmin()


@program(t(3, 4))
def named_tuple_result(x):
    values, indices = torch.max(x, dim=1)
    result = torch.min(x, 0)
    return values + result.values.sum(), indices


@program(t(3, 4))
def functional(x):
    return F.softmax(x, dim=-1), F.relu(x), F.gelu(x), F.layer_norm(x, (4,))


@program(t(2, 3, 4))
def tensor_methods(x):
    return x.view(6, 4).t().contiguous().reshape(-1), x.permute(2, 0, 1).flatten(1)


@program(t(3, 4))
def inplace_on_temporary(x):
    y = x.clone()
    y.add_(1)
    y.mul_(2)
    return y


@program(t(3, 4))
def augmented_assignment(x):
    y = x * 1
    y += 2
    y *= x
    return y


@program(t(4, 6))
def indexing(x):
    return x[0], x[:, 1], x[1:3, ::2], x[..., -1], x[None, 0]


@program(t(4, 6))
def tensor_index(x):
    idx = torch.tensor([0, 2])
    return x[idx], x[x > 0]


@program(t(4, 6))
def setitem(x):
    y = x.clone()
    y[0] = 0
    y[:, 1] = y[:, 2] * 2
    return y


@program(t(3, 4))
def factories(x):
    return x + torch.ones(3, 4) + torch.zeros_like(x) + torch.arange(4) + torch.full((1,), 2.0)


@program(t(3, 4))
def dtype_conversions(x):
    return x.to(torch.float64).sum(), x.int(), x.type_as(torch.ones(1, dtype=torch.float16))


@program(t(3, 4))
def where_and_clamp(x):
    return torch.where(x > 0, x, torch.zeros_like(x)).clamp(max=0.5)


@program(t(3, 4))
def cat_stack_split(x):
    a, b = x.split(2, dim=1)
    return torch.cat([a, b], dim=0), torch.stack((a, b)), x.chunk(2)


@program(t(3, 4))
def einsum_and_bmm(x):
    return torch.einsum("ij,kj->ik", x, x), torch.bmm(x[None], x.t()[None])


@program(t(3, 4))
def tensor_attributes(x):
    return x.T, x.mT, x.ndim, x.dtype == torch.float32, x.device.type == "cpu", x.is_cuda


@program(t(3, 4))
def dropout_eval(x):
    return F.dropout(x, p=0.5, training=False)


# ----- Python values --------------------------------------------------------------------------

@program(t(3, 4))
def constants_fold(x):
    n = 3 * 4 + 2 ** 3 - 7 // 2
    return x * n + math.sqrt(16) + math.pi


@program(t(3, 4))
def strings_and_fstrings(x):
    name = f"scale_{2}"
    key = "a" + "b"
    return x * len(name) + len(key) * (1 if name.startswith("scale") else 0)


@program(t(3, 4))
def tuples_and_lists(x):
    items = [x, x * 2, x * 3]
    items.append(x * 4)
    first, *rest = items
    return first + sum(rest), tuple(items)[1:]


@program(t(3, 4))
def dicts(x):
    d = {"a": x, "b": x * 2}
    d["c"] = d["a"] + d["b"]
    total = 0
    for key, v in d.items():
        total = total + v * len(key)
    return total, {k: v.sum() for k, v in d.items()}, d.get("z", 7)


@program(t(3, 4))
def sets_and_membership(x):
    s = {1, 2, 3}
    s.add(4)
    return x * (5 if 4 in s else 0) + (1 if 7 not in s else 2)


@program(t(3, 4))
def comprehensions(x):
    squares = [x * i for i in range(3)]
    evens = {i: x + i for i in range(4) if i % 2 == 0}
    gen = sum(y.sum() for y in squares)
    return squares[-1], evens[2], gen


@program(t(3, 4))
def builtins_on_values(x):
    values = [3, 1, 2]
    return x * max(values) + min(values) + abs(-2) + sum(values) + len(values), sorted(values)


@program(t(3, 4))
def enumerate_zip_map_reversed(x):
    out = x
    for i, (a, b) in enumerate(zip([1, 2], [3, 4])):
        out = out + i * a * b
    for v in reversed(list(map(lambda k: k * 2, range(3)))):
        out = out - v
    return out


@program(t(3, 4))
def all_any_isinstance(x):
    ok = all([True, 1]) and not any([0, False]) and isinstance(x, torch.Tensor)
    return x * 2 if ok and isinstance(3, (int, float)) else x


@program(t(3, 4))
def named_tuples(x):
    p = Point(x, x * 2)
    return p.x + p.y, p[0], Point(1, y=2).y


@program(t(3, 4))
def slices_and_ranges(x):
    r = range(1, 10, 3)
    return x[:, slice(1, 3)] * r[1] + len(r)


@program(t(3, 4))
def while_loop(x):
    i, out = 0, x
    while i < 4:
        out = out * 0.5
        i += 1
    return out


@program(t(3, 4))
def nested_loops_and_break(x):
    out = x
    for i in range(5):
        if i == 3:
            break
        for j in range(2):
            if j:
                continue
            out = out + i
    return out


@program(t(3, 4))
def ternary_and_boolops(x):
    a = 0 or 5
    b = 3 and 4
    return x * a if b > 3 else x


@program(t(3, 4))
def assert_on_constants(x):
    assert x.dim() == 2, "two dims"
    assert isinstance(x, torch.Tensor)
    return x + 1


@program(t(3, 4))
def math_and_operator(x):
    return x * math.floor(2.7) + operator.mul(2, 3) + math.log(math.e)


@program(t(3, 4))
def functools_partial(x):
    add2 = functools.partial(torch.add, other=2)
    return add2(x)


@program(t(3, 4))
def kwargs_and_star_args(x):
    def f(a, *rest, scale=1, **extra):
        return a * scale + len(rest) + extra.get("bias", 0)
    args = (x, 1, 2)
    kw = {"scale": 3, "bias": 4}
    return f(*args, **kw)


# ----- functions, closures, globals -----------------------------------------------------------

@program(t(3, 4))
def global_helper(x):
    return helper(x) + outer_helper(x)


@program(t(3, 4))
def global_constant(x):
    return x * SCALE


@program(t(3, 4))
def global_object_attrs(x):
    y = x * CONFIG.scale
    return F.relu(y) if CONFIG.use_relu else y


@program(t(3, 4))
def closures(x):
    k = 3

    def inner(y):
        return y * k

    g = lambda y: inner(y) + k  # noqa: E731
    return g(x)


@program(t(3, 4))
def nested_closure_write(x):
    total = x

    def bump():
        nonlocal total
        total = total + 1

    bump()
    bump()
    return total


@program(t(3, 4))
def recursion_bounded(x):
    def power(y, n):
        return y if n == 1 else y * power(y, n - 1)
    return power(x, 4)


@program(t(3, 4))
def default_arguments(x):
    def f(a, b=2, *, c=3):
        return a * b + c
    return f(x), f(x, 5, c=1)


@program(t(3, 4))
def import_inside(x):
    import math as m

    from torch.nn import functional as fn
    return fn.relu(x) * m.tau


@program(t(3, 4))
def grad_mode_contexts(x):
    with torch.no_grad():
        a = x * 2
    with torch.enable_grad():
        b = x * 3
    return a + b, torch.is_grad_enabled()


# ----- shapes ---------------------------------------------------------------------------------

@program(sized, graphs=2)
def shape_arithmetic(x):
    n, m = x.shape
    return x.view(n * m), x.reshape(x.size(0), -1).sum(1), x.numel(), len(x)


@program(sized, graphs=2)
def branch_on_shape(x):
    if x.shape[0] > 2:
        return x * 2
    return x - 1


@program(sized, graphs=2)
def iterate_over_tensor(x):
    return [row.sum() for row in x]


@program(t(3, 4))
def new_tensor_from_shape(x):
    return torch.zeros(x.shape) + x.new_ones(x.size()), torch.empty(x.shape[1]).fill_(1)
