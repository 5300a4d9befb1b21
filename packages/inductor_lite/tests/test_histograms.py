"""`histc`, `histogram` and `histogramdd` as generated scatter-adds, against eager
(histograms.py): with a given range, and with the range of the data."""

import pytest
import torch

from fxtrace import make_fx
from inductor_lite import compile_fx, counters


def check(fn, x, fallbacks=0):
    compiled = compile_fx(torch.fx.symbolic_trace(fn), [x])
    got, want = compiled(x), fn(x)
    assert got.dtype == want.dtype
    torch.testing.assert_close(got, want, atol=0, rtol=0)
    assert counters["fallbacks"] == fallbacks


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("bins, low, high", [(100, 0, 10), (7, -1.3, 2.9), (1, 0, 1)])
def test_histc(device, dtype, bins, low, high):
    x = torch.randn(5, 37, device=device, dtype=dtype)[:, ::2] * 3
    # the ends, bin edges (as the input's float type holds them), a NaN and infinities
    x[0, :4] = torch.tensor([low, high, float("nan"), float("inf")], dtype=dtype)
    x[1, :bins + 1] = torch.linspace(low, high, bins + 1, dtype=dtype)[:x.shape[1]]
    check(lambda x: torch.histc(x, bins, low, high), x)


def test_histc_of_a_0d_tensor(device):
    check(lambda x: torch.histc(x, 3, 0, 10), torch.tensor(9.99, device=device))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("bins", [1, 4, 10])
def test_histc_over_the_range_of_the_data(device, dtype, bins):
    x = (torch.randn(7, 19, device=device, dtype=dtype) * 5)[:, ::3]
    x[2, 1] = x.max()  # the last bin holds the maximum, as often as it occurs
    check(lambda x: torch.histc(x, bins), x)


@pytest.mark.parametrize("x", [torch.full((6,), -2.5), torch.tensor(3.0), torch.tensor([7.0])])
def test_histc_of_one_value_widens_its_range_by_one(device, x):
    # min == max: the range is [x - 1, x + 1], every element in the middle bin
    check(lambda x: torch.histc(x, 5, 4, 4), x.to(device))


def test_histc_of_an_empty_tensor_widens_the_given_range(device):
    check(lambda x: torch.histc(x, 3), torch.empty(0, device=device))


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_histc_over_a_range_that_is_not_finite_raises(device, bad):
    if device != "cpu":
        pytest.skip("on a GPU, the check is a device assert (eager's and the generated "
                    "`_assert_async`'s), which ends the process's CUDA context")
    x = torch.tensor([1.0, bad, 2.0], device=device)
    compiled = compile_fx(torch.fx.symbolic_trace(lambda x: torch.histc(x, 4)), [x])
    assert counters["fallbacks"] == 0
    for fn in (compiled, lambda x: torch.histc(x, 4)):
        with pytest.raises(RuntimeError, match="is not finite"):
            fn(x)


@pytest.mark.parametrize("x, low, high", [
    ([-1e38, 1e38, 0.0, 5e37, -9.9e37], 0, 0),  # over the data's range
    ([-1e38, 1e38, 0.0, 5e37, -9.9e37], -1e38, 1e38),
    ([-3e38, 3e38, 0.0], 0, 0),  # a width that overflows too
    ([-3e38, 3e38, 0.0], -3e38, 3e38),
])
def test_histc_where_its_interpolation_overflows(device, x, low, high):
    # float32 `(x - min) * bins` overflows: eager's CPU kernel's int64 of inf is INT64_MIN, whose
    # offset wraps to bin 0; a width that overflows makes its edges NaN: nothing is counted
    x = torch.tensor(x)
    fn = lambda x: torch.histc(x, 100, low, high)  # noqa: E731
    compiled = compile_fx(torch.fx.symbolic_trace(fn), [x.to(device)])
    assert counters["fallbacks"] == 0
    torch.testing.assert_close(compiled(x.to(device)).cpu(), fn(x), atol=0, rtol=0)


@pytest.fixture
def eager_kernel_on_the_cpu_only(device):
    """`histogram` and `histogramdd` have CPU kernels only: on another device eager raises
    NotImplementedError (and the lowerings refuse, leaving the aten op to raise it)."""
    if device != "cpu":
        pytest.skip("eager's histogram and histogramdd have no CUDA kernel")


def check_histogram(fn, *inputs, exact=True):
    compiled = compile_fx(torch.fx.symbolic_trace(fn), list(inputs))
    (hist, edges), (want_hist, want_edges) = compiled(*inputs), fn(*inputs)
    assert counters["fallbacks"] == 0
    torch.testing.assert_close(edges, want_edges, atol=0, rtol=0)
    # weights are added in another order than eager's
    torch.testing.assert_close(hist, want_hist, **({"atol": 0, "rtol": 0} if exact else {}))


@pytest.mark.usefixtures("eager_kernel_on_the_cpu_only")
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("bins, span", [(1, None), (6, None), (101, (-1.3, 2.9)),
                                        (37, (-7.0, 0.1))])
def test_histogram(device, dtype, bins, span):
    x = torch.randn(4, 31, device=device, dtype=dtype)[:, ::2] * 4
    low, high = span or (x.min().item(), x.max().item())
    # the edges eager's linspace makes, and the floats next to them: eager's search of the edges
    # next to the interpolated bin puts each on its side
    edges = torch.linspace(low, high, bins + 1, dtype=dtype, device=device)[:x.shape[1]]
    n = edges.numel()
    x[0, :n] = edges
    x[1, :n - 1], x[2, :n - 1] = (torch.nextafter(edges[:-1], edges[1:]),
                                  torch.nextafter(edges[1:], edges[:-1]))
    x[3, :5] = torch.tensor([float("nan"), low - 1, high + 1, low, high])
    if span is None:
        x[3, :3] = low  # (the range stays the data's)
    check_histogram(lambda x: torch.histogram(x, bins, range=span), x)


@pytest.mark.usefixtures("eager_kernel_on_the_cpu_only")
@pytest.mark.parametrize("density", [False, True])
def test_histogram_with_weights(device, density):
    x, w = torch.randn(9, 7, device=device), torch.rand(7, 9, device=device).t()
    check_histogram(lambda x, w: torch.histogram(x, 5, weight=w, density=density), x, w,
                    exact=False)


@pytest.mark.usefixtures("eager_kernel_on_the_cpu_only")
@pytest.mark.parametrize("fn", [
    lambda x: torch.histogram(x, 4, density=True),
    lambda x: torch.histogram(x, 1, density=True),
    lambda x: torch.histogram(x, 3, range=(2.0, 2.0)),  # widened by 0.5 on each side
])
def test_histogram_density_and_a_widened_range(device, fn):
    check_histogram(fn, torch.randn(20, device=device), exact=False)


@pytest.mark.usefixtures("eager_kernel_on_the_cpu_only")
@pytest.mark.parametrize("x", [torch.tensor(3.0), torch.full((5,), -1.5), torch.empty(0)])
def test_histogram_of_one_value_or_none(device, x):
    # one value: its range widened by 0.5 on each side; none: eager's range [0, 1]
    check_histogram(lambda x: torch.histogram(x, 3), x.to(device))


@pytest.mark.usefixtures("eager_kernel_on_the_cpu_only")
@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_histogram_over_a_range_that_is_not_finite_raises(device, bad):
    x = torch.tensor([1.0, bad, 2.0], device=device)
    compiled = compile_fx(torch.fx.symbolic_trace(lambda x: torch.histogram(x, 4)), [x])
    assert counters["fallbacks"] == 0
    for fn in (compiled, lambda x: torch.histogram(x, 4)):
        with pytest.raises(RuntimeError, match="is not finite"):
            fn(x)


@pytest.mark.usefixtures("eager_kernel_on_the_cpu_only")
@pytest.mark.parametrize("span", [None, (-1e38, 1e38)])
def test_histogram_where_its_interpolation_overflows(device, span):
    # float32 `(x - start) * bins` overflows: eager's search then reads outside its edges (its
    # bins are not checked); each value is counted in the bin of the edges returned
    x = torch.tensor([-1e38, 1e38, 0.0, 5e37, -9.9e37, 9.99e37], device=device)
    compiled = compile_fx(torch.fx.symbolic_trace(
        lambda x: torch.histogram(x, 100, range=span)), [x])
    hist, edges = compiled(x)
    torch.testing.assert_close(edges, torch.histogram(x, 100, range=span).bin_edges, atol=0,
                               rtol=0)
    torch.testing.assert_close(hist, torch.histogram(x, edges).hist, atol=0, rtol=0)


@pytest.mark.usefixtures("eager_kernel_on_the_cpu_only")
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("edges", [
    [-1.0, 0.0, 0.5, 0.5, 2.0],  # an empty bin
    [0.3, -2.0, 1.0, 0.0, 4.0, -1.0, 2.5],  # out of order: eager's binary search, as it goes
    [-0.5, 0.5],
])
def test_histogram_of_given_edges(device, dtype, edges):
    edges = torch.tensor(edges, device=device, dtype=dtype)
    x = torch.randn(6, 15, device=device, dtype=dtype)[:, ::2] * 2
    x[0, :edges.numel()] = edges
    x[1, :3] = torch.tensor([float("nan"), -9.0, 9.0])
    check_histogram(lambda x, e: torch.histogram(x, e), x, edges)


@pytest.mark.usefixtures("eager_kernel_on_the_cpu_only")
def test_histogram_of_given_edges_with_weights_and_density(device):
    x, w = torch.randn(40, device=device), torch.rand(40, device=device)
    edges = torch.randn(9, device=device).sort().values
    check_histogram(lambda x, e, w: torch.histogram(x, e, weight=w, density=True), x, edges, w,
                    exact=False)


def histogramdd(bins, **kwargs):
    def fn(x, weight=None):
        hist, edges = torch.histogramdd(x, bins, weight=weight, **kwargs)
        return hist, *edges
    return fn


@pytest.mark.usefixtures("eager_kernel_on_the_cpu_only")
@pytest.mark.parametrize("shape, bins, kwargs", [
    ((20, 2), [2, 3], {}),
    ((4, 5, 3), [2, 3, 4], {}),
    ((30, 2), [3, 2], {"range": [-1.0, 1.0, 0.0, 2.0]}),
    ((5, 1, 3), [1, 1, 1], {}),
    ((5, 0, 3), [2, 1, 3], {}),  # no points: eager's range [0, 1] in every dimension
    ((6, 2), [4, 3], {"density": True}),
])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_histogramdd(device, shape, bins, kwargs, dtype):
    x = torch.randn(shape, device=device, dtype=dtype)
    fn = histogramdd(bins, **kwargs)
    compiled = compile_fx(make_fx(fn)(x), [x])
    assert counters["fallbacks"] == 0
    exact = {} if kwargs.get("density") else {"atol": 0, "rtol": 0}
    for got, want in zip(compiled(x), fn(x)):
        torch.testing.assert_close(got, want, **exact)


@pytest.mark.usefixtures("eager_kernel_on_the_cpu_only")
def test_histogramdd_with_weights_and_density(device):
    x, w = torch.randn(5, 6, 3, device=device), torch.rand(5, 6, device=device)
    fn = histogramdd([3, 2, 2], density=True)
    compiled = compile_fx(make_fx(fn)(x, w), [x, w])
    assert counters["fallbacks"] == 0
    for got, want in zip(compiled(x, w), fn(x, w)):
        torch.testing.assert_close(got, want)


@pytest.mark.usefixtures("eager_kernel_on_the_cpu_only")
def test_histogramdd_over_a_range_that_is_not_finite_raises(device):
    fn = histogramdd([2, 2])
    compiled = compile_fx(make_fx(fn)(torch.randn(3, 2, device=device)),
                          [torch.randn(3, 2, device=device)])
    assert counters["fallbacks"] == 0
    x = torch.tensor([[0.0, 1.0], [2.0, float("nan")]], device=device)
    for run in (compiled, fn):
        with pytest.raises(RuntimeError, match="dimension 1's range .* is not finite"):
            run(x)


@pytest.mark.usefixtures("eager_kernel_on_the_cpu_only")
@pytest.mark.parametrize("density, edges", [
    (False, [[-1.0, 0.0, 0.5, 0.5, 2.0], [-2.0, 0.3, 1.0, 0.0]]),  # out of order: eager's search
    (False, [[-1.0, 0.0, 0.5, 0.5, 2.0], [-2.0, 0.0, 0.3, 1.0]]),  # an empty bin
    (True, [[-1.0, 0.0, 0.5, 2.0], [-2.0, 0.0, 0.3, 1.0]]),
])
def test_histogramdd_of_given_edges(device, density, edges):
    x = torch.randn(7, 4, 2, device=device)
    edges = [torch.tensor(e, device=device) for e in edges]
    x[0, :, 0], x[1, :, 1] = edges[0][:4], edges[1]
    fn = histogramdd(edges, density=density)
    compiled = compile_fx(make_fx(fn)(x), [x])
    assert counters["fallbacks"] == 0
    for got, want in zip(compiled(x), fn(x)):
        torch.testing.assert_close(got, want, **({} if density else {"atol": 0, "rtol": 0}))
