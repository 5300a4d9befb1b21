"""`as_strided` (and `unfold`) of values the graph computes, lowered as index remappings
(strided_views.py), against eager: no fallback, and the cases that must stay fallbacks."""

import pytest
import torch

from fxtrace import make_fx
from inductor_lite import compile_fx, counters


def check(fn, *inputs, symbolic_sizes=()):
    """Compile `fn` (symbolically traced at `inputs` when other sizes are given), compare with
    eager at `inputs` and at each of `symbolic_sizes` (lists of inputs)."""
    gm = make_fx(fn, "symbolic")(*inputs) if symbolic_sizes else torch.fx.symbolic_trace(fn)
    compiled = compile_fx(gm, list(inputs))
    for args in (inputs, *symbolic_sizes):
        got, want = compiled(*args), fn(*args)
        assert got.shape == want.shape and got.dtype == want.dtype
        torch.testing.assert_close(got, want)
    return compiled


def assert_generated():
    assert counters["fallbacks"] == 0 and counters["eager_graphs"] == 0, dict(counters)
    assert counters["kernels"] >= 1


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.float16])
def test_overlapping_windows_of_a_computed_value(device, dtype):
    x = torch.arange(35, device=device).reshape(5, 7).to(dtype)
    check(lambda x: (x * 2).as_strided((3, 3, 7), (7, 7, 1)) + 1, x)  # 3 rows, step 1 row
    assert_generated()


def test_window_at_an_offset_with_odd_strides(device):
    check(lambda x: (x + 1).as_strided((3, 4), (5, 2), 3) * 2, torch.randn(4, 5, device=device))
    assert_generated()


def test_a_transposed_base(device):
    """Eager's `x.t() * 2` is laid out transposed, so the view reads its storage in that order,
    whatever layout the kernels give the product."""
    def fn(x):
        return (x.t() * 2).as_strided((5, 3), (2, 3), 1).exp()
    check(fn, torch.randn(3, 6, device=device))
    assert_generated()


def test_a_view_of_a_buffer_read_twice(device):
    def fn(x):
        y = x.sin()
        return y.sum() + y.view(2, 3, 4).permute(2, 0, 1).as_strided((4, 4), (4, 3)).cos()
    check(fn, torch.randn(6, 4, device=device))
    assert_generated()


def test_as_strided_copy(device):
    check(lambda x: torch.as_strided_copy(x * 3, (2, 2, 2), (1, 3, 2)),
          torch.randn(2, 4, device=device))
    assert_generated()


def test_longformer_chunks(device):
    """Longformer's `_chunk`: heads moved next to the batch (a copy), then overlapping
    windows of 2w rows every w rows."""
    def chunk(x):  # (seq 16, batch 2, 2 heads of 4) and w = 2: 7 windows of 4 rows
        q = (x * 0.5).view(16, 2, 2, 4).transpose(0, 1).transpose(1, 2).reshape(4, 16, 4)
        chunks = q.view(4, 4, 4, 4).as_strided((4, 7, 4, 4), (64, 8, 4, 1))
        return torch.einsum("bcxd,bcyd->bcxy", chunks, chunks)
    check(chunk, torch.randn(16, 2, 8, device=device))
    assert_generated()


def test_unfold_of_a_computed_value(device):
    check(lambda x: (x - 1).unfold(1, 3, 2).sum(-1), torch.randn(3, 8, device=device))
    assert_generated()


def test_symbolic_sizes(device):
    def fn(x):
        n, d = x.shape
        return (x * 2).as_strided((n - 1, 2, d), (d, d, 1)) + (x + 1).unfold(0, 2, 1).mT
    compiled = check(fn, torch.randn(5, 3, device=device),
                     symbolic_sizes=[[torch.randn(7, 4, device=device)],
                                     [torch.randn(4, 6, device=device)]])
    assert len(compiled.versions) == 1
    assert_generated()


def test_view_of_a_row_runs_eagerly(device):
    """A slice starts past its storage's start: the storage holds elements the value does
    not, which the view reads (the graph runs as it came, as before)."""
    check(lambda x: (x * 2)[1:].as_strided((3, 4), (4, 1), 2) + 1, torch.randn(4, 4, device=device))
    assert counters["eager_graphs"] == 1


@pytest.mark.parametrize("base", ["computed", "input"])
def test_view_past_the_end_falls_back_to_eagers_error(device, base):
    """A kernel would read past the buffer (and eager raises): the aten call runs."""
    def fn(x):
        return (x * 2 if base == "computed" else x).as_strided((4, 3, 7), (7, 7, 1)) + 1
    with pytest.raises(RuntimeError, match="out of bounds for storage"):
        compile_fx(torch.fx.symbolic_trace(fn), [torch.randn(5, 7, device=device)])(
            torch.randn(5, 7, device=device))
    assert counters["fallbacks"] == 1


def test_view_of_an_input_reads_its_storage(device):
    """An input's storage is eager's own: the view is a strided view of it, inside a row of a
    bigger tensor too."""
    rows = torch.randn(6, 7, device=device)[:, :4]
    check(lambda x: x.as_strided((3, 2, 4), (7, 7, 1), 2) * 2, rows)
    assert_generated()


def test_view_of_a_written_tensor_runs_eagerly(device):
    """The rule of compile_fx `_views_storage_of_written_tensor` stays: the whole graph runs
    as it came."""
    def fn(x):
        y = x * 2
        y.t()[1].add_(1)
        return y.as_strided((3, 3), (1, 2)) + 1
    check(fn, torch.randn(3, 4, device=device))
    assert counters["eager_graphs"] == 1
