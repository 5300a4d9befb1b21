"""topk and kthvalue as generated kernels where only their values are read, against eager:
dims, both orders, k at its ends, ties, NaN, infinities, signed zeros, int and half dtypes,
strided inputs, the LLM top-k filter through torch.compile, and the cases that fall back."""

import pytest
import torch

from inductor_lite import compile_fx, counters

NAN, INF = float("nan"), float("inf")


def compile_and_check(fn, *inputs):
    """Compile `fn`'s graph and compare its output with eager's, exactly (NaN equal to NaN)."""
    compiled = compile_fx(torch.fx.symbolic_trace(fn), list(inputs))
    got, want = compiled(*inputs), fn(*inputs)
    assert got.shape == want.shape and got.dtype == want.dtype
    torch.testing.assert_close(got, want, atol=0, rtol=0, equal_nan=True)


def _generated():
    assert counters["fallbacks"] == 0 and counters["kernels"] >= 1


def _special_rows(device):
    """Rows of ties, NaNs, infinities and both zeros, and one of random numbers."""
    return torch.tensor([[3.0, 1.0, 3.0, 1.0, 2.0, 3.0, 0.0],
                         [1.0, NAN, -1.0, NAN, 2.0, 0.5, -2.0],
                         [INF, -INF, 0.0, INF, -1.0, -INF, 1.0],
                         [0.0, -0.0, 1.0, -0.0, 0.0, -1.0, 0.0],
                         [0.3, -1.2, 0.7, 2.2, -0.4, 1.9, -0.8]], device=device)


@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("k", [1, 3, 7])
def test_topk_values_of_ties_nans_infinities_and_zeros(device, largest, k):
    """NaN is above every number (first of the largest, last of the smallest)."""
    x = _special_rows(device)
    compile_and_check(lambda x: torch.topk(x, k, largest=largest)[0], x)
    _generated()


def test_topk_values_along_other_dims_and_strides(device):
    x = torch.randn(5, 6, 7, device=device)
    compile_and_check(lambda x: torch.topk(x, 2, dim=0).values, x)
    compile_and_check(lambda x: torch.topk(x, 4, dim=1, largest=False).values * 2, x)
    compile_and_check(lambda x: torch.topk(x.transpose(0, 2), 3).values, x)  # strided rows
    compile_and_check(lambda x: torch.topk(x[:, ::2, 1:], 5, sorted=True).values, x)
    compile_and_check(lambda x: torch.topk(x, 1, sorted=False).values, x)  # one order only
    _generated()


@pytest.mark.parametrize("dtype", [torch.int32, torch.int16, torch.int8, torch.uint8,
                                   torch.float16, torch.bfloat16])
def test_topk_and_kthvalue_values_of_other_dtypes(device, dtype):
    x = torch.randint(0, 9, (4, 11), device=device).to(dtype)
    compile_and_check(lambda x: torch.topk(x, 4).values, x)
    compile_and_check(lambda x: torch.topk(x, 3, 0, largest=False).values, x)
    compile_and_check(lambda x: torch.kthvalue(x, 6).values, x)
    _generated()


@pytest.mark.parametrize("dim, keepdim", [(-1, False), (0, True), (1, True)])
@pytest.mark.parametrize("k", [1, 2, 5])
def test_kthvalue_values(device, dim, keepdim, k):
    """The k-th smallest, NaN above every number."""
    x = _special_rows(device)
    compile_and_check(lambda x: torch.kthvalue(x, k, dim, keepdim).values, x)
    compile_and_check(lambda x: torch.kthvalue(x.t(), k, dim, keepdim)[0] + 1, x)
    _generated()


def test_a_zero_among_tied_zeros_is_a_zero(device):
    """Which sign of tied zeros comes first is eager's algorithm's choice: equal values."""
    x = torch.tensor([[0.0, -0.0, 1.0, -0.0, 0.0]], device=device)
    compiled = compile_fx(torch.fx.symbolic_trace(lambda x: torch.topk(x, 3).values), [x])
    assert compiled(x).tolist() == [[1.0, 0.0, 0.0]]  # -0.0 == 0.0
    _generated()


def test_the_llm_top_k_filter_through_torch_compile(device):
    """Sampling's filter: every logit below the k-th largest of its row is -inf."""
    import torch._dynamo

    def top_k_probabilities(logits):
        logits = logits / 0.7
        v, _ = torch.topk(logits, 5)
        logits[logits < v[..., -1:]] = -INF
        return torch.softmax(logits, dim=-1)

    torch._dynamo.reset()
    compiled = torch.compile(top_k_probabilities, backend="inductor_lite")
    logits = torch.randn(3, 50, device=device)
    torch.testing.assert_close(compiled(logits), top_k_probabilities(logits))
    assert (compiled(logits) > 0).sum(-1).tolist() == [5, 5, 5]
    assert counters["eager_graphs"] == 0
    _generated()


def test_rows_of_a_symbolic_length(device):
    """One version for every row of at least k elements; a shorter row raises eager's error."""
    import torch._dynamo

    def f(x):
        return torch.topk(x, 3).values * 2 + torch.kthvalue(x, 2, keepdim=True).values

    torch._dynamo.reset()
    compiled = torch.compile(f, backend="inductor_lite", dynamic=True)
    for size in [(3, 8), (4, 11), (2, 3)]:
        x = torch.randn(size, device=device)
        torch.testing.assert_close(compiled(x), f(x), atol=0, rtol=0)
    assert counters["graphs"] == 1
    _generated()
    with pytest.raises(RuntimeError, match="k not in range"):
        compiled(torch.randn(4, 2, device=device))


@pytest.mark.parametrize("size", [(1,), (3, 1), (1, 1)])
def test_rows_of_one_element_through_torch_compile(device, size):
    """A row of one element is its own sort (a scan kernel over it had no row index)."""
    import torch._dynamo

    def f(x):
        return torch.topk(x, 1).values * 2, torch.kthvalue(x, 1, keepdim=True).values + 1

    torch._dynamo.reset()
    compiled = torch.compile(f, backend="inductor_lite")
    x = torch.randn(size, device=device)
    for got, want in zip(compiled(x), f(x)):
        torch.testing.assert_close(got, want, atol=0, rtol=0)
    _generated()


@pytest.mark.parametrize("fn", [
    lambda x: torch.topk(x, 3)[1],  # the indices are read
    lambda x: torch.topk(x, 3).values + torch.kthvalue(x, 2).indices[:, None],
    lambda x: torch.topk(x, 3, sorted=False).values,  # eager's order
    lambda x: torch.topk(x.double(), 3).values,  # the sort key holds 32 bits
    lambda x: torch.kthvalue(x.long(), 2).values,
], ids=["indices", "kthvalue-indices", "unsorted", "float64", "int64"])
def test_what_falls_back(device, fn):
    compile_and_check(fn, torch.randn(4, 9, device=device))
    assert counters["fallbacks"] == 1
