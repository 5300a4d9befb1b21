"""cdist and pdist as generated reductions, against eager (distances.py)."""

import pytest
import torch
import torch.nn.functional as F

from inductor_lite import compile_fx, counters

P = [0.0, 1.0, 2.0, 3.5, float("inf")]


def compile_and_check(fn, *inputs, fallbacks=0):
    compiled = compile_fx(torch.fx.symbolic_trace(fn), list(inputs))
    got, want = compiled(*inputs), fn(*inputs)
    assert got.shape == want.shape and got.dtype == want.dtype
    torch.testing.assert_close(got, want, atol=1e-5, rtol=1e-5)
    assert counters["fallbacks"] == fallbacks


@pytest.mark.parametrize("p", P)
def test_cdist(device, p):
    a, b = torch.randn(2, 5, 7, device=device), torch.randn(2, 6, 7, device=device)
    a[0, 1] = b[0, 2]  # a distance of 0 (and, for p = 0, no differing elements)
    compile_and_check(lambda a, b: torch.cdist(a, b, p), a, b)


def test_cdist_of_many_rows_without_the_matrix_product(device):
    a, b = torch.randn(30, 4, device=device).t(), torch.randn(3, 4, device=device)
    compile_and_check(lambda a, b: torch.cdist(a.t(), b, compute_mode="donot_use_mm_for_euclid_dist"),
                      a, b)


def test_cdist_of_many_rows_by_the_matrix_product_falls_back(device):
    # (torch.cdist itself takes that form before any aten op: the op called directly)
    a, b = torch.randn(30, 4, device=device), torch.randn(3, 4, device=device)
    compile_and_check(lambda a, b: torch.ops.aten._cdist_forward(a, b, 2.0, None), a, b,
                      fallbacks=1)


@pytest.mark.parametrize("p", P)
@pytest.mark.parametrize("n", [2, 9])
def test_pdist(device, p, n):
    x = torch.randn(n, 4, device=device, dtype=torch.float64 if p == 3.5 else torch.float32)
    x[n - 1] = x[0]
    compile_and_check(lambda x: F.pdist(x, p), x)


def test_pdist_pairs_of_many_rows(device):
    # the pair's row from a float root, corrected: every one of 2415 pairs in place (and a
    # distance of vectors of one element, no reduction)
    x = torch.arange(70.0, device=device)[:, None] ** 2
    compile_and_check(lambda x: F.pdist(x, 1.0), x)
