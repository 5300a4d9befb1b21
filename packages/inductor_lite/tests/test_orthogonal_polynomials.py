"""The orthogonal polynomials of torch.special (orthogonal_polynomials.py) against eager: their
exact points, closed forms, recurrences, odd degrees (negative, fractional, NaN, infinite), with
every element generated (no fallback)."""

import pytest
import torch

from inductor_lite import compile_fx, counters

POLYNOMIALS = [
    "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
    "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
    "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w", "hermite_polynomial_h",
    "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p",
]
# (no NaN: where x is NaN from the start, most of eager's recurrences return a variable they
# never set; its value is whatever the stack held)
POINTS = [-8.4, -1.76, -1.0, -0.3, 0.0, 1e-30, 0.2, 0.5, 0.999, 1.0, 1.0001, 2.5, 100.0,
          float("inf"), float("-inf")]
DEGREES = [-3.0, -0.5, 0.0, 0.7, 1.0, 2.0, 3.6, 5.0, 7.0, 9.0, 12.0, 30.0, float("nan"),
           float("inf")]


def of(op):
    return lambda x, n: op(x, n)


def compiled(fn, *inputs):
    gm = torch.fx.symbolic_trace(fn)
    return compile_fx(gm, list(inputs))(*inputs)


@pytest.mark.parametrize("name", POLYNOMIALS)
def test_polynomial_over_points_and_degrees(name, device):
    op = getattr(torch.special, name)
    # n broadcast over the rows, x read through a transpose (non-contiguous)
    x = torch.tensor(POINTS, device=device)[None, :].expand(3, -1).t()
    n = torch.tensor(DEGREES, device=device)[:, None, None]
    out = compiled(lambda x, n: op(x, n), x, n)
    # CPU eager is the reference on every device: its acosf and its int64 of a NaN degree are
    # what the kernels follow (CUDA eager's differ)
    torch.testing.assert_close(out.cpu(), op(x.cpu(), n.cpu()), equal_nan=True)
    assert counters["kernels"] == 1 and counters["fallbacks"] == 0


@pytest.mark.parametrize("name", ["chebyshev_polynomial_u", "hermite_polynomial_h",
                                  "legendre_polynomial_p"])
def test_polynomial_of_a_number_degree_and_zero_dim_tensors(name, device):
    op = getattr(torch.special, name)
    x = torch.randn(7, 5, device=device)
    torch.testing.assert_close(compiled(lambda x: op(x, 6), x), op(x, 6))
    a, b = torch.tensor(0.3, device=device), torch.tensor(4.0, device=device)
    torch.testing.assert_close(compiled(lambda a, b: op(a, b), a, b), op(a, b))
    assert counters["fallbacks"] == 0


def test_recurrence_stops_where_every_lane_is_nan(device):
    # Past float32's range T_n(2) is inf, then NaN, where eager stops: a loop to the degree
    # (a billion steps) would not end
    x = torch.tensor([2.0, -3.0, 0.25, float("nan")], device=device)
    n = torch.tensor([1e9, 1e9, 3.0, 1e9], device=device)
    op = torch.special.chebyshev_polynomial_t
    # CPU eager is the reference on every device: CUDA eager's recurrence returns a variable it
    # never set where x is NaN from the start (the CPU one starts it at x)
    torch.testing.assert_close(compiled(lambda x, n: op(x, n), x, n).cpu(),
                               op(x.cpu(), n.cpu()), equal_nan=True)


def test_float64_recurrences_are_generated_and_chebyshev_runs_as_aten(device):
    x = torch.linspace(-2, 2, 9, dtype=torch.float64, device=device)
    n = torch.arange(9, dtype=torch.float64, device=device)
    for op in (torch.special.hermite_polynomial_he, torch.special.laguerre_polynomial_l):
        torch.testing.assert_close(compiled(of(op), x, n), op(x, n))
    assert counters["fallbacks"] == 0
    op = torch.special.chebyshev_polynomial_t  # (its acos is only float32-precise)
    torch.testing.assert_close(compiled(lambda x, n: op(x, n), x, n), op(x, n))
    assert counters["fallbacks"] == 1
