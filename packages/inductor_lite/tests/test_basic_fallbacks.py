"""Basic ops that ran as eager fallbacks in the OpInfo sweep, now generated: values made from 0-d
CPU inputs read by kernels (`addr`, `prelu`, `column_stack` of a 0-d tensor), and the lowerings of
basic_extras.py (`narrow_copy`, `new_empty_strided`, `resize`, `as_strided_scatter`, `addbmm`)."""

import pytest
import torch
import torch.nn.functional as F

from inductor_lite import compile_fx, counters


def compile_and_check(fn, *inputs, exact=False):
    compiled = compile_fx(torch.fx.symbolic_trace(fn), list(inputs))
    got, want = compiled(*inputs), fn(*inputs)
    assert got.shape == want.shape and got.dtype == want.dtype
    if exact:
        assert torch.equal(got, want)
    else:
        torch.testing.assert_close(got, want, equal_nan=True)
    return compiled


def generated_only(kernels=None):
    assert counters["fallbacks"] == 0 and counters["eager_graphs"] == 0, dict(counters)
    if kernels is not None:
        assert counters["kernels"] == kernels, dict(counters)


# -- values larger than 0-d made from 0-d CPU inputs (host values) ---------------------------

@pytest.mark.parametrize("fn,inputs", [
    (lambda s, a, b: torch.addr(s, a, b), (torch.tensor(1.5), torch.randn(5), torch.randn(7))),
    (lambda x, w: F.prelu(x, w), (torch.randn(20), torch.tensor(0.25))),
    (lambda s, y: torch.column_stack([s, y]), (torch.tensor(2.0), torch.randn(1, 5))),
    (lambda s, y: s.expand(3, 4) * 2 + y, (torch.tensor(3.0), torch.randn(3, 4))),
], ids=["addr", "prelu", "column_stack", "expand-chain"])
def test_values_made_from_0d_cpu_inputs_are_computed_in_kernels(device, fn, inputs):
    # Kernels on CPU tensors only: eager refuses a CPU tensor of 1 dim or more beside a GPU one.
    if device != "cpu":
        pytest.skip("a larger CPU tensor beside GPU tensors: eager refuses it")
    compile_and_check(fn, *inputs)
    generated_only(kernels=1)


def test_a_0d_cpu_input_of_an_optimizer_step_stays_on_the_host(device):
    # What only kernels on the device read as a number stays a host value, read on the host.
    fn = lambda p, step: p * (0.1 / (1 - 0.9 ** step))  # noqa: E731
    compiled = compile_and_check(fn, torch.randn(4, 3, device=device), torch.tensor(3.0))
    generated_only(kernels=1)
    assert counters["extern_calls"] >= 2 and ".item()" in compiled.versions[-1][1].source


# -- basic_extras.py ---------------------------------------------------------------------------

@pytest.mark.parametrize("fn,x", [
    (lambda x: torch.narrow_copy(x, 1, 2, 3), torch.randn(4, 7)),
    (lambda x: torch.narrow_copy(x, 0, -2, 2), torch.randn(5, 3)),
    (lambda x: torch.narrow_copy(x.t(), 1, 1, 2) * 2, torch.randn(5, 3)),
    (lambda x: torch.narrow_copy(x, -1, 0, 0), torch.arange(12).reshape(3, 4)),
], ids=["middle", "negative-start", "transposed", "empty-int"])
def test_narrow_copy(device, fn, x):
    compile_and_check(fn, x.to(device))
    generated_only()


def test_new_empty_strided(device):
    fn = lambda x: x.new_empty_strided((3, 4), (1, 3))  # noqa: E731
    compiled = compile_fx(torch.fx.symbolic_trace(fn), [torch.randn(2, device=device)])
    out = compiled(torch.randn(2, device=device))
    assert out.shape == (3, 4) and out.dtype == torch.float32 and out.stride() == (1, 3)
    generated_only()


@pytest.mark.parametrize("fn,inputs", [
    (lambda x, y: x.clone().resize_as_(y) + 1, (torch.randn(3, 5), torch.randn(3, 5))),
    (lambda x, y: x.t().clone().resize_as_(y), (torch.randn(5, 3), torch.randn(3, 5))),
    (lambda x, y: (x * 2).resize_as_(y), (torch.randn(4, 5), torch.randn(2, 3))),
], ids=["same-size", "same-size-transposed", "smaller"])
def test_resize(device, fn, inputs):
    compile_and_check(fn, *[t.to(device) for t in inputs])
    generated_only()


@pytest.mark.parametrize("size,stride,offset,src", [
    ((2, 2), (1, 2), 0, torch.randn(2, 2)),
    ((2, 3), (5, 1), 1, torch.randn(2, 3)),
    ((), (), 4, torch.tensor(7.0)),
    ((3,), (2,), 0, torch.randn(3)),
], ids=["transposed", "offset", "0-d", "every-other"])
def test_as_strided_scatter(device, size, stride, offset, src):
    fn = lambda x, s: torch.as_strided_scatter(x, s, size, stride, offset)  # noqa: E731
    compile_and_check(fn, torch.randn(3, 4, device=device), src.to(device))
    generated_only()


def test_as_strided_scatter_through_an_overlapping_view_runs_as_aten(device):
    fn = lambda x, s: torch.as_strided_scatter(x, s, (2, 2), (1, 1))  # noqa: E731
    compile_and_check(fn, torch.randn(6, device=device), torch.randn(2, 2, device=device))
    assert counters["fallbacks"] == 1


@pytest.mark.parametrize("x,beta,alpha,dtype", [
    (torch.randn(5, 10), 1, 1, torch.float32),
    (torch.randn(1), 1, 1, torch.float32),
    (torch.randn(5, 10), 0.6, 0.2, torch.float32),
    (torch.full((5, 10), float("nan")), 0, 2, torch.float32),
    (torch.randn(10), 1, 1, torch.float64),
], ids=["plain", "broadcast", "scaled", "beta-0-ignores-nan", "float64"])
def test_addbmm_is_eagers_chain_of_addmm(device, x, beta, alpha, dtype):
    b1, b2 = torch.randn(6, 5, 7, dtype=dtype) * 9, torch.randn(6, 7, 10, dtype=dtype) * 9
    fn = lambda x, b1, b2: torch.addbmm(x, b1, b2, beta=beta, alpha=alpha)  # noqa: E731
    # (eager's CPU addbmm is that chain: the same bits; a GPU's may sum otherwise)
    compile_and_check(fn, x.to(device, dtype), b1.to(device), b2.to(device),
                      exact=device == "cpu")
    generated_only(kernels=0)
    assert counters["extern_calls"] == 6
