"""`torch.combinations` (combinations.py) against eager: exactly equal, every graph generated
code only, from a torch-level graph (as a frontend captures it) and through `torch.compile`."""

import pytest
import torch

from inductor_lite import compile_fx, counters


def compiled_combinations(x, r, with_replacement):
    """`torch.combinations` compiled for `x` from its torch-level graph."""
    gm = torch.fx.symbolic_trace(lambda x: torch.combinations(x, r, with_replacement))
    return compile_fx(gm, [x])


def assert_generated_and_equal(x, r, with_replacement):
    got = compiled_combinations(x, r, with_replacement)(x)
    assert counters["fallbacks"] == 0 and counters.get("eager_graphs", 0) == 0
    expected = torch.combinations(x, r, with_replacement)
    assert got.shape == expected.shape and got.dtype == expected.dtype
    assert torch.equal(got, expected)


@pytest.mark.parametrize("with_replacement", [False, True])
@pytest.mark.parametrize("r", [0, 1, 2, 3, 4])
@pytest.mark.parametrize("n", [0, 1, 5])
def test_sizes(device, n, r, with_replacement):
    assert_generated_and_equal(torch.randn(n, device=device), r, with_replacement)


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.bool, torch.float64])
def test_dtypes(device, dtype):
    x = torch.tensor([3, 0, 1, 1, 2, 0, 7], device=device).to(dtype)
    assert_generated_and_equal(x, 3, False)
    assert_generated_and_equal(x, 2, True)


def test_non_contiguous(device):
    x = torch.randn(4, 9, device=device)[1, ::2]
    assert_generated_and_equal(x, 2, False)
    assert_generated_and_equal(x, 3, True)


def test_through_a_frontend(device):
    # (torch.compile's frontend: inductor_lite's tests need no other package of this repo)
    import torch._dynamo

    torch._dynamo.reset()
    f = torch.compile(lambda x: torch.combinations(x, 3) * 2, backend=compile_fx)
    x = torch.randn(6, device=device)
    assert torch.equal(f(x), torch.combinations(x, 3) * 2)
    assert counters["kernels"] >= 1
    assert counters["fallbacks"] == 0 and counters.get("eager_graphs", 0) == 0


def test_eagers_error_for_a_matrix(device):
    x = torch.randn(2, 2, device=device)
    with pytest.raises(RuntimeError, match="Expect a 1D vector"):
        compiled_combinations(x, 2, False)(x)


@pytest.mark.parametrize("call", [
    lambda x: torch.combinations(input=x, r=3),
    lambda x: torch.ops.aten.combinations.default(self=x, r=3),
])
def test_tensor_by_keyword(device, call):
    x = torch.randn(5, device=device)
    got = compile_fx(torch.fx.symbolic_trace(call), [x])(x)
    assert counters["fallbacks"] == 0 and counters.get("eager_graphs", 0) == 0
    assert torch.equal(got, torch.combinations(x, 3))
