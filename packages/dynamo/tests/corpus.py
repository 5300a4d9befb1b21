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


# ----- objects, classes, inputs of many kinds ---------------------------------------------------

class Holder:
    factor = 3

    def __init__(self, bias):
        self.bias = bias

    @property
    def doubled(self):
        return self.bias * 2

    def apply(self, x):
        return x * self.factor + self.bias

    @staticmethod
    def static_add(x, y):
        return x + y

    @classmethod
    def make_factor(cls):
        return cls.factor * 10


HOLDER = Holder(0.5)


@program(t(3, 4))
def user_object_methods(x):
    return HOLDER.apply(x) + HOLDER.doubled + Holder.static_add(x, 1) + Holder.make_factor()


@program(lambda seed: (torch.randn(3, 4), Config(scale=2.0 + seed)), graphs=2)
def dataclass_input(x, cfg):
    return x * cfg.scale if cfg.use_relu else x


@program(lambda seed: (Point(torch.randn(3), torch.randn(3)),))
def namedtuple_input(p):
    return p.x * p.y, p[0] - p[1]


@program(lambda seed: ([torch.randn(2, 2) for _ in range(3)],))
def list_input(xs):
    return sum(xs), xs[0] @ xs[1], len(xs)


@program(lambda seed: ({"a": torch.randn(2), "b": torch.randn(2)},))
def dict_input(d):
    return {k: v * 2 for k, v in d.items()}, d["a"] + d["b"]


@program(lambda seed: ((torch.randn(2), (torch.randn(2), 3)),))
def nested_tuple_input(nested):
    a, (b, n) = nested
    return a * n + b


@program(lambda seed: (torch.randn(3), None), graphs=0)  # returns its input: no tensor work
def optional_input(x, mask):
    return x if mask is None else x * mask


@program(lambda seed: (torch.randn(3), seed + 1), graphs=2)
def int_input_specialises(x, n):
    return x * n + n


@program(lambda seed: (torch.randn(3), "relu"))
def string_input(x, act):
    return F.relu(x) if act == "relu" else torch.tanh(x)


@program(lambda seed: (torch.randn(3), torch.float64))
def dtype_input(x, dtype):
    return x.to(dtype) * 2


@program(lambda seed: (torch.randn(4, 4), (2, 8)))
def shape_tuple_input(x, shape):
    return x.reshape(shape)


@program(lambda seed: (torch.randn(3), torch.randn(3)))
def keyword_only_and_defaults(x, y, *, alpha=0.5, beta=None):
    return x * alpha + (y if beta is None else beta)


@program(lambda seed: (torch.randn(3), torch.randn(3), torch.randn(3)))
def star_args_frame(*xs):
    return sum(xs) / len(xs)


def _closure_maker(k):
    def inner(x):
        return x * k
    return inner


TRIPLE = _closure_maker(3)


@program(t(3))
def global_closure(x):
    return TRIPLE(x) + _closure_maker(2)(x)


class Base(torch.nn.Module):
    def forward(self, x):
        return x + 1


class Derived(Base):
    def forward(self, x):
        return super().forward(x) * 2


DERIVED = Derived()


@program(t(3))
def super_call_in_module(x):
    return DERIVED(x)


@program(t(3, 4))
def size_methods(x):
    s = x.size()
    return x.new_zeros(s), s[0] * s[1], s.numel(), x.size(-1), x.stride(0), x.dim()


@program(t(3, 4))
def string_formatting(x):
    label = "layer{}_{:02d}".format("x", 7)
    return x * len(label) + len(f"{3.14159:.2f}") + len("%d-%s" % (5, "a"))  # noqa: UP031 (the % operator on strings is the construct under test)


@program(t(3, 4))
def list_methods(x):
    items = [3, 1, 2]
    items.sort()
    items.insert(0, 9)
    items.reverse()
    last = items.pop(0)
    items.remove(9)
    return x * last + items.index(2) + items.count(3) + len(items)


@program(t(3, 4))
def dict_methods(x):
    d = dict(a=1, b=2)
    d.update({"c": 3})
    d.setdefault("d", 4)
    removed = d.pop("a")
    return x * sum(d.values()) + removed + len(list(d.keys()))


@program(t(3, 4))
def tuple_compare_and_in(x):
    shape = tuple(x.shape)
    return x * 2 if shape == (3, 4) and 4 in shape else x


@program(t(3, 4))
def chained_comparison(x):
    n = x.shape[1]
    return x + 1 if 0 < n <= 4 else x


@program(t(3, 4))
def walrus_and_conditional_expr(x):
    if (n := x.shape[0]) > 2:
        return x * n
    return x


@program(t(3, 4))
def try_finally_no_exception(x):
    try:
        y = x * 2
    finally:
        z = 1
    return y + z


@program(t(3, 4))
def with_set_grad_enabled(x):
    with torch.set_grad_enabled(False):
        y = x * 2
    return y + 1


@program(t(4, 4))
def lambda_in_map_filter(x):
    cols = list(filter(lambda i: i % 2 == 0, range(4)))
    return torch.stack(list(map(lambda i: x[:, i], cols)), dim=1)


@program(t(3, 4))
def torch_size_constructor(x):
    return x.view(torch.Size([4, 3])), torch.Size([1, 2]) + (3,)


@program(t(3, 4))
def math_on_shapes(x):
    return x * math.ceil(x.shape[0] / 2) + math.gcd(x.shape[0], 6)


# ----- generated: the same pattern over many torch functions and operators -----------------------

def _generate(name, fn):
    fn.__name__ = name
    PROGRAMS.append((name, fn, t(3, 4), 1))


_UNARY = {
    "sin": torch.sin, "cos": torch.cos, "tanh": torch.tanh, "sigmoid": torch.sigmoid,
    "exp": torch.exp, "log1p_abs": lambda x: torch.log1p(x.abs()),
    "sqrt_abs": lambda x: torch.sqrt(x.abs()), "rsqrt": lambda x: torch.rsqrt(x.abs() + 1),
    "floor": torch.floor, "ceil": torch.ceil, "round": torch.round, "trunc": torch.trunc,
    "frac": torch.frac, "sign": torch.sign, "neg": torch.neg,
    "reciprocal": lambda x: torch.reciprocal(x.abs() + 1), "erf": torch.erf, "atan": torch.atan,
    "silu": F.silu, "mish": F.mish, "softplus": F.softplus, "elu": F.elu,
    "leaky_relu": F.leaky_relu, "hardtanh": F.hardtanh, "logsigmoid": F.logsigmoid,
    "softsign": F.softsign, "hardswish": F.hardswish, "relu6": F.relu6, "selu": F.selu,
    "celu": F.celu,
}
for _name, _fn in _UNARY.items():
    _generate(f"unary_{_name}", (lambda f: lambda x: f(x) * 2 + 1)(_fn))

_METHODS = {
    "cumsum": lambda x: x.cumsum(0), "flip": lambda x: x.flip(0), "roll": lambda x: x.roll(1, 1),
    "transpose": lambda x: x.transpose(0, 1), "unsqueeze": lambda x: x.unsqueeze(1),
    "squeeze": lambda x: x[None].squeeze(0), "expand": lambda x: x[:1].expand(5, 4),
    "repeat": lambda x: x.repeat(2, 1), "masked_fill": lambda x: x.masked_fill(x > 0, 0.0),
    "norm": lambda x: x.norm(), "std": lambda x: x.std(dim=0), "var": lambda x: x.var(),
    "log_softmax": lambda x: x.log_softmax(-1), "argsort": lambda x: x.argsort(dim=1),
    "topk": lambda x: x.topk(2).values, "sort": lambda x: x.sort(dim=0)[0],
    "cummax": lambda x: x.cummax(0).values, "tril": lambda x: x.tril(), "diag": lambda x: x.diag(),
    "narrow": lambda x: x.narrow(1, 1, 2), "unbind": lambda x: x.unbind(0),
    "clamp_min": lambda x: x.clamp_min(0), "lerp": lambda x: x.lerp(x * 2, 0.3),
    "addmm": lambda x: torch.addmm(x[:, :3], x, x.t()[:, :3]), "outer": lambda x: x[0].outer(x[1]),
    "nan_to_num": lambda x: (x / 0).nan_to_num(), "where_scalar": lambda x: x.where(x > 0, 1.0),
    "gather": lambda x: x.gather(1, torch.tensor([[0], [1], [2]])),
    "index_select": lambda x: x.index_select(1, torch.tensor([3, 0])),
    "scatter_add": lambda x: torch.zeros(3, 4).scatter_add(1, torch.tensor([[0], [1], [2]]), x),
}
for _name, _fn in _METHODS.items():
    _generate(f"method_{_name}", _fn)

_BINARY = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul, "truediv": operator.truediv,
    "pow": lambda a, b: operator.pow(abs(a) if isinstance(a, torch.Tensor) else a, b),
    "lt": operator.lt, "ge": operator.ge, "eq": operator.eq, "maximum": torch.maximum,
    "atan2": torch.atan2,
}
_OPERANDS = {
    "tt": lambda x: (x, x * 0.5 + 1),
    "ts": lambda x: (x, 2),
    "st": lambda x: (3.0, x),
    "tshape": lambda x: (x, x.shape[0]),
}
for _name, _op in _BINARY.items():
    for _kind, _pick in _OPERANDS.items():
        if _name in ("maximum", "atan2") and _kind != "tt":
            continue
        _generate(f"binary_{_name}_{_kind}", (lambda op, pick: lambda x: op(*pick(x)))(_op, _pick))

_REDUCTIONS = {"sum": torch.sum, "mean": torch.mean, "amax": torch.amax, "amin": torch.amin,
               "prod": torch.prod, "logsumexp": torch.logsumexp}
for _name, _fn in _REDUCTIONS.items():
    for _dim, _keep in ((0, False), (1, True), (-1, False)):
        _generate(f"reduce_{_name}_dim{_dim}_{'keep' if _keep else 'drop'}",
                  (lambda f, d, k: lambda x: f(x, dim=d, keepdim=k))(_fn, _dim, _keep))


# ----- a few models' worth of patterns ------------------------------------------------------------

@program(tt(2, 4, 8))
def attention_scores(q, k):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    mask = torch.triu(torch.ones(4, 4, dtype=torch.bool), diagonal=1)
    return scores.masked_fill(mask, float("-inf")).softmax(-1)


@program(tt(2, 4, 8))
def sdpa(q, k):
    return F.scaled_dot_product_attention(q[None], k[None], k[None], is_causal=True)


@program(t(2, 3, 8, 8))
def conv_pool_norm(x):
    w = torch.ones(4, 3, 3, 3) / 27
    y = F.conv2d(x, w, padding=1)
    y = F.batch_norm(y, torch.zeros(4), torch.ones(4), training=False)
    return F.max_pool2d(F.relu(y), 2), F.adaptive_avg_pool2d(y, 1).flatten(1)


@program(t(4, 8))
def rms_norm(x):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)


@program(lambda seed: (torch.randint(0, 10, (2, 5)),))
def embedding_lookup(idx):
    table = torch.arange(40.0).view(10, 4)
    return F.embedding(idx, table).sum(1), F.one_hot(idx, 10).sum(1)


@program(tt(4, 3))
def losses(x, y):
    return F.mse_loss(x, y), F.cross_entropy(x, torch.tensor([0, 1, 2, 1])), F.l1_loss(x, y)


@program(t(2, 6))
def rotary_like(x):
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]
    angle = torch.arange(half) * 0.1
    return torch.cat([x1 * angle.cos() - x2 * angle.sin(), x1 * angle.sin() + x2 * angle.cos()], -1)


@program(t(3, 4))
def residual_loop_with_enumerate_of_weights(x):
    weights = [torch.eye(4) * (i + 1) for i in range(3)]
    for i, w in enumerate(weights):
        x = x + (x @ w) * 0.1 * i
    return x


@program(t(3, 4))
def early_return_in_loop(x):
    for i in range(10):
        if i * x.shape[0] > 6:
            return x * i
    return x


@program(t(3, 4))
def nested_function_returning_tuple(x):
    def stats(y):
        return y.mean(), y.std(), y.shape
    mean, std, shape = stats(x)
    return (x - mean) / std, shape[0]


@program(t(3, 4))
def conditional_import_of_constant(x):
    from math import pi
    return x * pi


@program(t(3, 4))
def dict_of_lists(x):
    groups = {"a": [x, x + 1], "b": [x * 2]}
    return {k: torch.stack(v).sum(0) for k, v in groups.items()}


@program(t(3, 4))
def zip_strict_and_star_unpack(x):
    parts = x.unbind(0)
    total = x.new_zeros(4)
    for a, b in zip(parts, [1, 2, 3], strict=True):
        total = total + a * b
    return total, [*parts, total]
