"""`torch.lu_unpack` (lu_unpacking.py) against eager: P, L and U exactly equal, every graph
generated code only; eager's check of the pivots raises its error."""

import re

import pytest
import torch

from fxtrace import make_fx
from inductor_lite import compile_fx, counters


def generated(fn, *inputs):
    """`fn` compiled for `inputs`, asserting it runs as generated code only."""
    compiled = compile_fx(make_fx(fn)(*[x.clone() for x in inputs]), list(inputs))
    assert counters["fallbacks"] == 0 and counters.get("eager_graphs", 0) == 0
    assert counters["kernels"] >= 1
    return compiled


def factorization(shape, dtype, device):
    lu, pivots = torch.linalg.lu_factor(torch.randn(shape, dtype=torch.float64))
    return lu.to(dtype).to(device), pivots.to(device)


def assert_same(got, expected):
    for g, e in zip(got, expected):
        assert g.shape == e.shape and g.dtype == e.dtype
        assert torch.equal(g, e)
        assert torch.equal(g.signbit(), e.signbit())


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 6), (2, 3, 5, 4), (1, 1)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_factors_and_permutation(device, shape, dtype):
    lu, pivots = factorization(shape, dtype, device)
    lu[..., -1, 0] = -0.0  # a signed zero below the diagonal stays one
    compiled = generated(torch.lu_unpack, lu, pivots)
    assert_same(compiled(lu, pivots), torch.lu_unpack(lu, pivots))


@pytest.mark.parametrize("unpack_data,unpack_pivots", [(True, False), (False, True)])
def test_flags(device, unpack_data, unpack_pivots):
    lu, pivots = factorization((3, 5, 5), torch.float32, device)
    fn = lambda a, p: torch.lu_unpack(a, p, unpack_data, unpack_pivots)  # noqa: E731
    compiled = generated(fn, lu, pivots)
    assert_same(compiled(lu, pivots), fn(lu, pivots))


def test_non_contiguous_and_other_pivots(device):
    lu, pivots = factorization((4, 6, 6), torch.float32, device)
    lu = lu.transpose(-1, -2)[::2]
    pivots = pivots[::2].flip(-1).contiguous()  # swaps eager's factorization did not make
    compiled = generated(torch.lu_unpack, lu, pivots)
    assert_same(compiled(lu, pivots), torch.lu_unpack(lu, pivots))


def test_pivot_out_of_range_raises_eagers_error(device):
    if device != "cpu":
        pytest.skip("on a GPU, the generated check (`_assert_async`) is a device assert, which "
                    "ends the process's CUDA context")
    lu, pivots = factorization((4, 4), torch.float32, device)
    compiled = generated(torch.lu_unpack, lu, pivots)
    bad = pivots.clone()
    bad[1] = 5
    with pytest.raises(RuntimeError) as expected:
        torch.lu_unpack(lu, bad)
    with pytest.raises(RuntimeError, match=re.escape(str(expected.value))):
        compiled(lu, bad)


def test_many_swaps_are_left_to_aten(device):
    lu, pivots = factorization((65, 65), torch.float32, device)
    compiled = compile_fx(make_fx(torch.lu_unpack)(lu, pivots), [lu, pivots])
    assert counters["fallbacks"] == 1
    assert_same(compiled(lu, pivots), torch.lu_unpack(lu, pivots))


@pytest.mark.parametrize("pivots_shape", [(1, 4), (4,), (3, 3), (3, 5)])
def test_pivots_not_of_lus_batch_and_k_stay_with_aten(device, pivots_shape):
    """Eager reads them as pivots of LU's batch dims and k, out of bounds where there are
    fewer (so nothing runs here): decomposed, P had the pivots' batch dims, (1, 4, 4) or
    (4, 4) where eager's is (3, 4, 4)."""
    lu = torch.randn(3, 4, 4, device=device)
    pivots = torch.ones(pivots_shape, dtype=torch.int32, device=device)
    compile_fx(make_fx(torch.lu_unpack, "fake")(lu, pivots), [lu, pivots])
    assert counters["fallbacks"] == 1
