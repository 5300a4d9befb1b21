"""cummax, cummin, logcumsumexp, sort (argsort, msort) and median as generated kernels, against
eager: values and indices, NaNs and ties, and the cases that must fall back."""

import pytest
import torch

from inductor_lite import compile_fx, counters

NAN = float("nan")


def compile_and_check(fn, *inputs, atol=1e-5, rtol=1e-5, reference=None):
    """Compile `fn`'s graph and compare its outputs (values and indices) with eager's on the
    inputs' device, or on the device `reference`."""
    compiled = compile_fx(torch.fx.symbolic_trace(fn), list(inputs))
    out = compiled(*inputs)
    ref = fn(*(x if reference is None else x.to(reference) for x in inputs))
    out, ref = (out, ref) if isinstance(ref, (list, tuple)) else ([out], [ref])
    assert len(out) == len(ref)
    for got, want in zip(out, ref):
        assert got.shape == want.shape and got.dtype == want.dtype
        torch.testing.assert_close(got.to(want.device), want, atol=atol, rtol=rtol,
                                   equal_nan=True)


def _ties_and_nans(*size, device="cpu"):
    x = torch.randint(0, 4, size, device=device).float()
    x[x == 3] = NAN
    return x


def _generated():
    assert counters["fallbacks"] == 0 and counters["kernels"] >= 1


@pytest.mark.parametrize("fn, make", [
    (lambda x: torch.cummax(x, 1), lambda d: _ties_and_nans(5, 9, device=d)),
    (lambda x: torch.cummin(x, 1), lambda d: _ties_and_nans(5, 9, device=d)),
    (lambda x: torch.cummax(x, 0), lambda d: torch.randint(-3, 3, (7, 4), device=d)),
    (lambda x: torch.cummin(x.t(), -1), lambda d: torch.randn(6, 3, device=d)),  # strided
    (lambda x: torch.cummax(x, 0), lambda d: torch.tensor(2.0, device=d)),
    (lambda x: torch.cummin(x, 1), lambda d: torch.randint(0, 3, (3, 10), device=d).half()),
], ids=["max-nans", "min-nans", "int-dim0", "transposed", "0-d", "half"])
def test_cummax_cummin(fn, make, device):
    compile_and_check(fn, make(device), atol=0, rtol=0)
    _generated()


def test_cummax_ties_take_the_last_index(device):
    x = torch.tensor([[1.0, 2.0, 2.0, NAN, 2.0, NAN, 0.0, -0.0]], device=device)
    compile_and_check(lambda x: torch.cummax(x, 1), x, atol=0, rtol=0)
    compile_and_check(lambda x: torch.cummin(x, 1), x, atol=0, rtol=0)
    _generated()


def test_logcumsumexp(device):
    x = torch.randn(4, 13, device=device)
    x[0, 3], x[1, :2], x[2, 5], x[3, 7] = float("inf"), float("-inf"), NAN, float("-inf")
    compile_and_check(lambda x: torch.logcumsumexp(x, 1), x)
    compile_and_check(lambda x: torch.logcumsumexp(x, 0), torch.randn(9, 3, device=device))
    _generated()


@pytest.mark.parametrize("fn, make", [
    (lambda x: torch.sort(x, 1), lambda d: _ties_and_nans(6, 16, device=d)),
    (lambda x: torch.sort(x, 0, descending=True), lambda d: _ties_and_nans(11, 5, device=d)),
    (lambda x: torch.sort(x, stable=True, dim=1), lambda d: _ties_and_nans(3, 40, device=d)),
    (lambda x: torch.sort(x, stable=True, descending=True), lambda d: _ties_and_nans(2, 70,
                                                                                   device=d)),
    (lambda x: torch.sort(x.t(), 1), lambda d: torch.randn(7, 5, device=d)),  # strided
    (lambda x: torch.sort(x), lambda d: torch.randint(-100, 100, (4, 9), device=d).int()),
    (lambda x: torch.sort(x, descending=True), lambda d: torch.randn(3, 10, device=d).half()),
    (lambda x: torch.sort(x), lambda d: torch.tensor([0.0, -0.0, 0.0, -0.0, -1.0], device=d)),
    (lambda x: torch.sort(x, 0), lambda d: torch.tensor(1.5, device=d)),
    (lambda x: torch.argsort(x, 1), lambda d: _ties_and_nans(4, 12, device=d)),
    (lambda x: torch.argsort(x, stable=True), lambda d: _ties_and_nans(4, 33, device=d)),
    (lambda x: torch.msort(x), lambda d: torch.randn(9, 3, device=d)),
    (lambda x: torch.sort(x)[0], lambda d: torch.randn(3, 300, device=d)),  # values: any order
], ids=["ties-nans", "descending-dim0", "stable", "stable-descending", "transposed", "int32",
        "half", "signed-zeros", "0-d", "argsort", "argsort-stable", "msort", "values-only"])
def test_sort(fn, make, device):
    # An unstable sort leaves equal elements in the order of eager's CPU sort (std::sort's, up
    # to 16 elements) on every device; CUDA eager's leaves them as its own algorithm happens to
    compile_and_check(fn, make(device), atol=0, rtol=0, reference="cpu")
    _generated()


def test_unstable_sort_indices_of_long_rows_fall_back(device):
    # eager's std::sort orders equal elements of rows past 16 as it happens to: not known here
    compile_and_check(lambda x: torch.sort(x, 1), _ties_and_nans(3, 17, device=device),
                      atol=0, rtol=0)
    assert counters["fallbacks"] == 1


@pytest.mark.parametrize("x", [
    torch.randint(-9, 9, (3, 4)),  # int64: the key holds 32 bits
    torch.randn(2, 4097),  # longer than a block
], ids=["int64", "long-row"])
def test_sorts_refused(x, device):
    compile_and_check(lambda x: torch.sort(x, stable=True), x.to(device), atol=0, rtol=0)
    assert counters["fallbacks"] == 1


@pytest.mark.parametrize("make", [
    lambda d: torch.randn(5, 6, device=d),
    lambda d: torch.randn(4, 6, device=d),  # even: the lower of the middle two
    lambda d: _ties_and_nans(3, 7, device=d),  # a NaN makes it NaN
    lambda d: torch.randint(0, 5, (11,), device=d).int(),
], ids=["odd", "even", "nan", "int"])
def test_median_of_a_tensor(make, device):
    compile_and_check(lambda x: torch.median(x), make(device), atol=0, rtol=0)
    _generated()


def _nans_in_some_rows(device):
    """Rows of no NaN, one NaN, NaNs only and NaNs but one, an even number of others too."""
    x = torch.randn(5, 7, device=device)
    x[1, 2] = x[2, :4] = x[3] = x[4, 1:] = NAN
    return x


@pytest.mark.parametrize("make", [
    _nans_in_some_rows,
    lambda d: torch.randn(4, 6, device=d).t(),  # strided, no NaN
    lambda d: torch.full((4,), NAN, device=d),  # NaNs only: NaN
    lambda d: _ties_and_nans(3, 8, device=d).half(),
    lambda d: torch.randint(0, 5, (11,), device=d).int(),  # no NaN to skip
], ids=["nans", "transposed", "all-nan", "half", "int"])
def test_nanmedian_of_a_tensor(make, device):
    """The median of the elements that are not NaN: at (count - 1) // 2 of the sorted tensor."""
    compile_and_check(lambda x: torch.nanmedian(x), make(device), atol=0, rtol=0)
    _generated()


@pytest.mark.parametrize("median", [torch.median, torch.nanmedian])
@pytest.mark.parametrize("dim, keepdim", [(1, False), (0, True), (-1, True)])
def test_median_values_along_a_dim(device, median, dim, keepdim):
    """Only the values are read: lowered; the indices (eager's choice among equal elements)
    fall back."""
    x = _nans_in_some_rows(device)
    compile_and_check(lambda x: median(x, dim, keepdim).values, x, atol=0, rtol=0)
    compile_and_check(lambda x: median(x.t() * 2, dim).values, x, atol=0, rtol=0)
    _generated()
    compile_and_check(lambda x: median(x, dim, keepdim), x, atol=0, rtol=0)
    assert counters["fallbacks"] == 1


def test_median_along_a_dim_of_one_element_or_a_0d_tensor(device):
    # the index is 0 there: both outputs are lowered
    compile_and_check(lambda x: torch.nanmedian(x, 1), torch.randn(3, 1, device=device))
    compile_and_check(lambda x: torch.median(x, 0, keepdim=True),
                      torch.tensor(2.0, device=device))
    _generated()
