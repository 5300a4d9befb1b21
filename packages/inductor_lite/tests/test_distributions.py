"""Random distributions (distributions.py) against their definitions.

The draws are Triton's, not eager's, so values are checked by what each distribution
guarantees (ranges, integers) and by statistics of large draws (the seed is fixed by conftest:
the tolerances, several standard errors wide, are safe and the outcome is the same every run).
Every graph must run generated code only; in-place ops (`x.uniform_()`) must write the input.
"""

import math

import pytest
import torch
import torch.nn.functional as F

from fxtrace import make_fx
from inductor_lite import compile_fx, counters

N = 1 << 14  # draws per statistical check: a standard error is std / 128


def generated(fn, *inputs):
    """`fn` compiled for `inputs`, asserting it runs as generated code only."""
    compiled = compile_fx(make_fx(fn)(*[x.clone() for x in inputs]), list(inputs))
    assert counters["fallbacks"] == 0 and counters.get("eager_graphs", 0) == 0
    assert counters["kernels"] >= 1
    return compiled


def assert_moments(values, mean, std, errors=6.0):
    """Sample mean and std within `errors` standard errors of the distribution's."""
    v = values.double().flatten()
    n = v.numel()
    assert abs(v.mean().item() - mean) < errors * std / math.sqrt(n), v.mean().item()
    # the std's standard error, about std / sqrt(2n) for the distributions checked here
    assert abs(v.std().item() - std) < errors * std / math.sqrt(n / 2) * 2, v.std().item()


def assert_differ(a, b):
    assert a.shape == b.shape and not torch.equal(a, b)


def test_uniform_inplace_range_statistics_and_fresh_draws(device):
    x = torch.empty(N, device=device)
    compiled = generated(lambda x: x.uniform_(-2.0, 3.0), x)
    out = compiled(x)
    assert out.min() >= -2 and out.max() < 3
    assert torch.equal(x, out)  # written back into the input
    assert_moments(out, 0.5, 5 / math.sqrt(12))
    assert_differ(out.clone(), compiled(x))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_uniform_half_non_contiguous(device, dtype):
    x = torch.zeros(130, 64, device=device, dtype=dtype).t()
    before = x.clone()
    compiled = generated(lambda x: x.uniform_(0.1, 0.3), x)
    out = compiled(x)
    assert out.dtype == dtype and out.shape == before.shape
    low, high = torch.tensor([0.1, 0.3], dtype=dtype).tolist()  # eager's bounds are the dtype's
    assert out.min() >= low and out.max() <= high and torch.equal(x, out)
    assert_moments(out, (low + high) / 2, (high - low) / math.sqrt(12), errors=8)


def test_normal_inplace_and_functional(device):
    x = torch.empty(N, device=device)
    compiled = generated(lambda x: x.normal_(1.5, 2.0), x)
    out = compiled(x)
    assert torch.equal(x, out)
    assert_moments(out, 1.5, 2.0)
    assert_differ(out.clone(), compiled(x))
    out = generated(lambda x: torch.normal(-1.0, 0.5, (N,), device=x.device), x)(x)
    assert out.shape == (N,)
    assert_moments(out, -1.0, 0.5)


def test_normal_of_a_tensor_mean_broadcasts(device):
    mean = torch.tensor([-10.0, 0.0, 10.0, 100.0], device=device).reshape(4, 1)
    compiled = generated(lambda m: torch.normal(m.expand(4, N // 4), 2.0), mean)
    out = compiled(mean)
    assert out.shape == (4, N // 4)
    for row, m in enumerate([-10.0, 0.0, 10.0, 100.0]):
        assert_moments(out[row], m, 2.0)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_normal_of_tensors_broadcasts_std(device, dtype):
    mean = torch.tensor([-10.0, 0.0, 10.0], device=device, dtype=dtype).reshape(3, 1)
    std = torch.tensor([0.5, 2.0, -0.0, 4.0], device=device, dtype=dtype).repeat_interleave(
        N // 16)[::4]  # non-contiguous, a -0.0 (eager accepts it: that column is the mean)
    compiled = generated(torch.normal, mean, std)
    out = compiled(mean, std)
    assert out.shape == (3, N // 16) and out.dtype == dtype
    blocks = out.reshape(3, 4, N // 64)
    for row, m in enumerate([-10.0, 0.0, 10.0]):
        for column, s in enumerate([0.5, 2.0, 0.0, 4.0]):
            if s == 0:
                assert torch.equal(blocks[row, column], torch.full_like(blocks[row, column], m))
            else:
                assert_moments(blocks[row, column], m, s, errors=8)
    out = generated(lambda s: torch.normal(1.0, s), std)(std)
    assert_moments(out.reshape(4, N // 64)[1], 1.0, 2.0, errors=8)


@pytest.mark.parametrize("bad", [-1.0, -1e-30, float("nan"), float("-inf")])
@pytest.mark.parametrize("fn", [
    lambda m, s: torch.normal(m, s), lambda m, s: torch.normal(2.0, s),
    lambda m, s: torch.normal(m, s[1]),  # a 0-d std
])
def test_normal_of_a_bad_std_tensor_raises_as_in_eager(device, fn, bad):
    if device != "cpu":
        pytest.skip("on a GPU, the generated check (`_assert_async`) is a device assert, which "
                    "ends the process's CUDA context (eager's is a host check there too)")
    mean, std = torch.zeros(5, device=device), torch.ones(5, device=device)
    compiled = generated(fn, mean, std)
    assert compiled(mean, std).shape == (5,)
    std[1] = bad
    with pytest.raises(RuntimeError, match="normal expects all elements of std >= 0.0"):
        fn(mean, std)
    with pytest.raises(RuntimeError, match="normal expects all elements of std >= 0.0"):
        compiled(mean, std)


def test_normal_of_an_empty_std_tensor(device):
    std = torch.ones(0, 3, device=device)
    assert generated(lambda s: torch.normal(0.0, s), std)(std).shape == (0, 3)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_exponential(device, dtype):
    x = torch.empty(N, device=device, dtype=dtype)
    compiled = generated(lambda x: x.exponential_(4.0), x)
    out = compiled(x)
    assert out.min() >= 0 and torch.equal(x, out)
    assert_moments(out, 0.25, 0.25, errors=8)
    assert_differ(out.clone(), compiled(x))


def test_cauchy_quartiles(device):
    # no mean nor variance: its quartiles are median -+ sigma
    out = generated(lambda x: x.cauchy_(2.0, 0.5), torch.empty(N, device=device))(
        torch.empty(N, device=device))
    q = torch.quantile(out.double(), torch.tensor([0.25, 0.5, 0.75], dtype=torch.float64,
                                                  device=device))
    torch.testing.assert_close(q, torch.tensor([1.5, 2.0, 2.5], dtype=torch.float64,
                                               device=device), atol=0.05, rtol=0)


@pytest.mark.parametrize("p", [0.3, 0.95])
def test_geometric_integers_from_one(device, p):
    x = torch.empty(N, device=device)
    out = generated(lambda x: x.geometric_(p), x)(x)
    assert out.min() >= 1 and torch.equal(out, out.floor()) and torch.equal(x, out)
    assert_moments(out, 1 / p, math.sqrt(1 - p) / p, errors=8)
    # P(X = 1) = p
    assert abs((out == 1).double().mean().item() - p) < 6 * math.sqrt(p * (1 - p) / N)


def test_log_normal(device):
    out = generated(lambda x: x.log_normal_(0.5, 0.25), torch.empty(N, device=device))(
        torch.empty(N, device=device))
    assert out.min() > 0
    assert_moments(out.log(), 0.5, 0.25)


@pytest.mark.parametrize("dtype", [torch.int64, torch.int8, torch.float16])
def test_randint_range_and_uniformity(device, dtype):
    compiled = generated(lambda: torch.randint(-3, 7, (N,), dtype=dtype, device=device))
    out = compiled()
    assert out.dtype == dtype and out.min() == -3 and out.max() == 6
    assert torch.equal(out, out.floor()) if dtype.is_floating_point else True
    counts = torch.bincount((out.long() + 3).cpu(), minlength=10).double()
    expected = N / 10
    assert (counts - expected).abs().max() < 6 * math.sqrt(expected)
    assert_differ(out, compiled())


@pytest.mark.filterwarnings("ignore:from is out of bounds", "ignore:to - 1 is out of bounds")
def test_randint_like(device):
    x = torch.empty(64, 130, device=device).t()  # non-contiguous: the result takes its strides
    a, b = generated(lambda x: (torch.randint_like(x, 5), torch.randint_like(x, 2**31, 2**32 - 1)),
                     x)(x)
    assert a.shape == b.shape == x.shape and a.dtype == torch.float32
    assert set(a.unique().tolist()) == {0, 1, 2, 3, 4}
    # (float32 rounds these integers, as eager's cast does: 2**32 - 2 is 2**32)
    assert b.min() >= 2**31 and b.max() <= 2**32 and torch.equal(b, b.floor())
    big = generated(lambda: torch.randint(2**31, 2**32 - 1, (N,), device=device))()
    assert big.min() >= 2**31 and big.max() < 2**32 - 1
    assert_moments(big, (2**31 + 2**32 - 2) / 2, (2**31 - 1) / math.sqrt(12))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_rrelu_eval_is_leaky_relu(device, dtype):
    x = torch.randn(37, 11, device=device, dtype=dtype)
    x[0, :3] = torch.tensor([0.0, -0.0, float("nan")])
    out = generated(lambda x: F.rrelu(x, 0.1, 0.3), x)(x)
    torch.testing.assert_close(out, F.rrelu(x, 0.1, 0.3), rtol=0, atol=0, equal_nan=True)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_rrelu_training_draws_a_slope_per_negative(device, dtype):
    x = torch.randn(N, device=device, dtype=dtype)
    noise = torch.empty_like(x)

    def rrelu(x, noise):
        return torch.ops.aten.rrelu_with_noise_(x.clone(), noise, 0.1, 0.3, True)
    compiled = generated(rrelu, x, noise)
    out = compiled(x, noise)
    negative = x <= 0
    assert torch.equal(out[~negative], x[~negative]) and torch.equal(noise[~negative],
                                                                   torch.ones_like(x)[~negative])
    slopes = noise[negative]
    assert slopes.min() >= 0.1 and slopes.max() <= 0.3  # (0.3 as a bfloat16 rounds it up)
    # eager multiplies by the float slope; the noise holds it rounded to the dtype
    torch.testing.assert_close(out[negative], (x[negative].float() * slopes.float()).to(dtype),
                               rtol=0 if dtype == torch.float32 else 2**-7, atol=0)
    assert_moments(slopes, 0.2, 0.2 / math.sqrt(12), errors=8)


def test_draws_repeat_under_manual_seed(device):
    x = torch.empty(1000, device=device)
    compiled = generated(lambda x: (x.exponential_(), torch.randint_like(x, 100)), x)
    torch.manual_seed(3)
    first = [t.clone() for t in compiled(x)]
    torch.manual_seed(3)
    second = compiled(x)
    assert all(torch.equal(a, b) for a, b in zip(first, second))


@pytest.mark.parametrize("fn, error", [
    (lambda x: torch.ops.aten.geometric(x, 1.0), "geometric_ expects p to be in"),
    (lambda x: torch.ops.aten.uniform(x, 3.0, 2.0), "uniform_ expects"),
    (lambda x: torch.ops.aten.normal_functional(x, 0.0, -1.0), "normal expects std >= 0.0"),
    (lambda x: torch.ops.aten.exponential(x, -1.0), "exponential_ expects lambda > 0.0"),
    (lambda x: torch.ops.aten.cauchy(x, 0.0, 0.0), "cauchy_ expects sigma > 0.0"),
    (lambda x: torch.ops.aten.log_normal(x, 0.0, 0.0), "log_normal_ expects std > 0.0"),
    (lambda x: torch.ops.aten.randint(3, 3, (4,)), "random_ expects 'from' to be less than 'to'"),
    (lambda x: torch.ops.aten.randint(0, 300, (4,), dtype=torch.int8), "to - 1 is out of bounds"),
])
def test_arguments_eager_refuses_raise_as_in_eager(device, fn, error):
    x = torch.empty(8, device=device)
    with pytest.raises(RuntimeError, match=error):
        fn(x)
    with pytest.raises(RuntimeError, match=error):  # (make_fx would raise tracing: fx's trace)
        compile_fx(torch.fx.symbolic_trace(fn), [x])(x)
    assert counters["kernels"] == 0


def test_half_rrelu_on_the_cpu_raises_as_in_eager():
    def rrelu(x, noise):
        return torch.ops.aten.rrelu_with_noise_functional(x, noise, 0.1, 0.3, True)
    x = torch.randn(8, dtype=torch.float16)
    with pytest.raises(NotImplementedError, match="not implemented for 'Half'"):
        rrelu(x, x.clone())
    compiled = compile_fx(torch.fx.symbolic_trace(rrelu), [x, x.clone()])
    with pytest.raises(NotImplementedError, match="not implemented for 'Half'"):
        compiled(x, x.clone())


@pytest.mark.parametrize("fn", [
    lambda x: x.double().exponential_(),  # float64: 24-bit draws would be wrong
    lambda x: torch.randint(0, 2**33, (8,), device=x.device),  # eager draws 64 bits
])
def test_refused_cases_fall_back(device, fn):
    x = torch.empty(8, device=device)
    compiled = compile_fx(make_fx(fn)(x.clone()), [x])
    assert counters["fallbacks"] >= 1
    got, want = compiled(x.clone()), fn(x.clone())
    assert got.shape == want.shape and got.dtype == want.dtype
