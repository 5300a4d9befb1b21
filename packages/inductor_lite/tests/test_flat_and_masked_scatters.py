"""put, masked_scatter and index_put with a boolean mask against eager, run as generated kernels
with no fallback (flat_and_masked_scatters.py), and the cases that fall back or raise."""

import pytest
import torch

from inductor_lite import compile_fx, counters

aten = torch.ops.aten


def compile_and_check(fn, *inputs, reference=None):
    """`fn` compiled against eager on the inputs' device, or on the device `reference`."""
    compiled = compile_fx(torch.fx.symbolic_trace(fn), list(inputs))
    got = compiled(*inputs)
    want = fn(*(x if reference is None else x.to(reference) for x in inputs))
    assert got.shape == want.shape and got.dtype == want.dtype
    assert got.stride() == want.stride()
    torch.testing.assert_close(got.to(want.device), want, equal_nan=True, atol=0, rtol=0)
    return compiled


def _generated():
    assert counters["fallbacks"] == 0 and counters["eager_graphs"] == 0


@pytest.mark.parametrize("accumulate", [False, True])
def test_put_with_repeated_and_negative_indices(device, accumulate):
    """Without accumulate the last source naming an element is the one left there (eager's CPU
    loop writes them in order, on every device here; CUDA eager's writes race); with it, every
    source is added."""
    x = torch.randn(3, 5, device=device)
    index = torch.tensor([6, 4, -1, 14, 6, -9, 0, 6], device=device)
    source = torch.arange(8.0, device=device)
    compile_and_check(lambda x, i, s: x.put(i, s, accumulate=accumulate), x, index, source,
                      reference=None if accumulate else "cpu")
    _generated()


def test_put_into_a_transposed_tensor_from_2d_indices(device):
    # the flat positions count in the transposed view's order, and the result keeps its sizes
    x = torch.randn(4, 3, device=device)
    index, source = torch.tensor([[0, 11], [5, 5]], device=device), torch.randn(2, 2, device=device)
    compile_and_check(lambda x, i, s: x.t().put(i, s), x, index, source, reference="cpu")
    _generated()


@pytest.mark.parametrize("accumulate", [False, True])
def test_put_of_integers_a_0d_tensor_and_one_source(device, accumulate):
    x = torch.randint(-5, 5, (2, 7), device=device)
    compile_and_check(lambda x, i, s: x.put(i, s, accumulate=accumulate), x,
                      torch.tensor([13, 0, 13], device=device), torch.tensor([7, 8, 9], device=device),
                      reference=None if accumulate else "cpu")
    compile_and_check(lambda x, i, s: x.put(i, s, accumulate=accumulate),
                      torch.tensor(2.0, device=device), torch.tensor([-1], device=device),
                      torch.tensor([5.0], device=device))
    _generated()


def test_put_index_out_of_range_raises(device):
    if device != "cpu":
        pytest.skip("on a GPU, the check is a device assert, compiled in by config.index_asserts "
                    "only (as eager's, it ends the process's CUDA context)")
    x, source = torch.randn(3, 4, device=device), torch.tensor([1.0, 2.0], device=device)
    index = torch.tensor([0, 12], device=device)
    compiled = compile_fx(torch.fx.symbolic_trace(lambda x, i, s: x.put(i, s)), [x, index, source])
    with pytest.raises(IndexError):
        compiled(x, index, source)


def test_put_of_halves_adding_falls_back(device):
    # (no atomic add of half in the kernels)
    x = torch.randn(3, 4, device=device).half()
    compile_and_check(lambda x, i, s: x.put(i, s, accumulate=True), x,
                      torch.tensor([1, 1], device=device), torch.ones(2, device=device).half())
    assert counters["fallbacks"] == 1


@pytest.mark.parametrize("mask_size", [(4, 5), (5,), ()], ids=["full", "broadcast", "0-d"])
def test_masked_scatter(device, mask_size):
    x = torch.randn(4, 5, device=device)
    mask = torch.rand(mask_size, device=device) > 0.5 if mask_size else \
        torch.tensor(True, device=device)
    source = torch.randn(3, 9, device=device)  # more elements than the mask takes
    compile_and_check(lambda x, m, s: x.masked_scatter(m, s), x, mask, source)
    _generated()


def test_masked_scatter_of_transposed_and_broadcast_inputs(device):
    # elements take sources in the result's row-major order, whatever the inputs' strides
    x, mask = torch.randn(5, 3, device=device), torch.rand(3, 5, device=device) > 0.3
    source = torch.arange(15, dtype=torch.int32, device=device)
    compile_and_check(lambda x, m, s: x.t().int().masked_scatter(m, s), x, mask, source)
    compile_and_check(lambda x, m, s: x[:1].masked_scatter(m.t(), s.float()), x, mask, source)
    _generated()


@pytest.mark.parametrize("size", [(), (1,), (1, 1)])
def test_masked_scatter_of_one_element(device, size):
    # its one element, where the mask holds, takes the source's first (it read index -1)
    x = torch.zeros(size, device=device)
    source = torch.tensor([5.0, 6.0], device=device)
    for mask in (torch.tensor(True, device=device), torch.tensor(False, device=device)):
        compile_and_check(lambda x, m, s: x.masked_scatter(m, s), x, mask, source)
    _generated()


def test_masked_scatter_with_too_small_a_source_raises(device):
    if device != "cpu":
        pytest.skip("on a GPU, the check is a device assert, compiled in by config.index_asserts "
                    "only (as eager's, it ends the process's CUDA context)")
    x, mask = torch.randn(2, 3, device=device), torch.ones(2, 3, dtype=torch.bool, device=device)
    source = torch.randn(5, device=device)
    compiled = compile_fx(torch.fx.symbolic_trace(lambda x, m, s: x.masked_scatter(m, s)),
                          [x, mask, source])
    with pytest.raises(IndexError):
        compiled(x, mask, source)


@pytest.mark.parametrize("accumulate", [False, True])
def test_index_put_with_a_mask_of_values_over_the_rows(device, accumulate):
    """`x[mask] = v` where `v` broadcasts over the selected rows: a `where` of the mask."""
    x = torch.randn(5, 4, 3, device=device)
    mask = torch.tensor([True, False, True, True, False], device=device)
    mask2 = torch.rand(4, 3, device=device) > 0.5
    for values in (torch.randn(4, 3, device=device), torch.randn(1, 1, 3, device=device),
                   torch.tensor(2.5, device=device)):
        compile_and_check(lambda x, m, v: aten.index_put(x, [m], v, accumulate), x, mask,
                          values)
    compile_and_check(lambda x, m, v: aten.index_put(x.transpose(0, 2), [m], v, accumulate),
                      x, mask2.t(), torch.randn(5, device=device))  # keeps the input's strides
    compile_and_check(lambda x, m, v: aten.index_put(x, [None, m], v, accumulate), x, mask2,
                      torch.randn(5, 1, device=device))
    _generated()


def test_index_put_with_values_per_selected_row_falls_back(device):
    # which values go where depends on how many rows the mask selects: eager's
    x, mask = torch.randn(4, 3, device=device), torch.tensor([True, False, True, False],
                                                             device=device)
    compile_and_check(lambda x, m, v: aten.index_put(x, [m], v), x, mask,
                      torch.randn(2, 3, device=device))
    assert counters["fallbacks"] == 1


def test_index_put_with_a_uint8_mask_does_as_eager(device):
    # torch 2.13 refuses it; older torch (the GPU machine's 2.11) reads it as a boolean mask.
    # Read as integer indices it wrote rows 0 and 1.
    x, mask = torch.randn(4, 3, device=device), torch.tensor([1, 0, 1, 1], dtype=torch.uint8,
                                                             device=device)
    values = torch.tensor(5.0, device=device)
    fn = lambda x, m, v: aten.index_put(x, [m], v)  # noqa: E731
    compiled = compile_fx(torch.fx.symbolic_trace(fn), [x, mask, values])
    try:
        want = fn(x, mask, values)
    except RuntimeError:
        with pytest.raises(RuntimeError, match="boolean masks"):
            compiled(x, mask, values)
    else:
        torch.testing.assert_close(compiled(x, mask, values), want)
