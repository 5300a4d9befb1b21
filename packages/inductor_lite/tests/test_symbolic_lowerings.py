"""Lowerings traced with symbolic sizes: each op is traced by `make_fx(fn, "symbolic")`, compiled
once by compile_fx, and compared with eager at the traced sizes and at other sizes, called on
the same compiled object; no op may fall back to eager."""

import pytest
import torch
import torch.nn.functional as F

from fxtrace import make_fx
from inductor_lite import compile_fx, counters


def check_symbolic(fn, first: list, *others: list, atol=1e-5, rtol=1e-5):
    """Compile `fn` traced symbolically at `first`, then call it at `first` and each of
    `others`: one compiled graph, no fallback."""
    gm = make_fx(fn, "symbolic")(*first)
    compiled = compile_fx(gm, list(first))
    for inputs in (first, *others):
        got, want = compiled(*inputs), fn(*inputs)
        got = list(got) if isinstance(got, (list, tuple)) else [got]
        want = list(want) if isinstance(want, (list, tuple)) else [want]
        for g, w in zip(got, want, strict=True):
            assert g.shape == w.shape and g.dtype == w.dtype
            torch.testing.assert_close(g, w, atol=atol, rtol=rtol, equal_nan=True)
    assert len(compiled.versions) == 1
    assert counters["fallbacks"] == 0 and counters["eager_graphs"] == 0
    assert counters["kernels"] > 0
    return compiled


@pytest.mark.parametrize("affine", [True, False])
def test_group_norm(device, affine):
    def inputs(n, c, *spatial):
        x = torch.randn(n, c, *spatial, device=device)
        return [x, torch.randn(c, device=device), torch.randn(c, device=device)]

    def group_norm(x, w, b):
        return F.group_norm(x, 2, w if affine else None, b if affine else None)
    check_symbolic(group_norm, inputs(3, 4, 5), inputs(2, 6, 7), inputs(4, 10, 3))
    check_symbolic(group_norm, inputs(2, 4, 3, 5), inputs(3, 8, 6, 5))


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce(device, reduce, include_self):
    def inputs(n, m, k):
        x = torch.randn(n, m, device=device)
        index = torch.randint(0, n, (k, m), device=device)
        return [x, index, torch.randn(k, m, device=device)]

    def scatter_reduce(x, index, src):
        return x.scatter_reduce(0, index, src, reduce, include_self=include_self)
    check_symbolic(scatter_reduce, inputs(4, 3, 6), inputs(7, 5, 9))


def test_scatter_reduce_longer_than_traced_gets_a_version_of_its_own(device):
    """The gather reads every source per element: a symbolic length is guarded to at most
    `MAX_SOURCES`, and a longer one compiles again (here, to aten's loop)."""
    def scatter_sum(x, index, src):
        return x.scatter_reduce(0, index, src, "sum")
    x, index, src = (t.to(device) for t in (torch.randn(4, 3), torch.randint(0, 4, (6, 3)),
                                            torch.randn(6, 3)))
    compiled = compile_fx(make_fx(scatter_sum, "symbolic")(x, index, src), [x, index, src])
    assert counters["fallbacks"] == 0
    long_index, long_src = torch.randint(0, 4, (70, 3)).to(device), torch.randn(70, 3).to(device)
    torch.testing.assert_close(compiled(x, long_index, long_src),
                               scatter_sum(x, long_index, long_src))
    assert len(compiled.versions) == 2


@pytest.mark.parametrize("reduce", ["sum", "mean", "max", "min", "prod"])
@pytest.mark.parametrize("by", ["lengths", "offsets"])
def test_segment_reduce(device, reduce, by):
    def inputs(lengths, columns):
        lengths = torch.tensor(lengths, device=device)
        data = torch.randn(int(lengths.sum()), columns, device=device, dtype=torch.float64)
        if by == "offsets":
            return [data, torch.cat([lengths.new_zeros(1), lengths.cumsum(0)])]
        return [data, lengths]

    def segment_reduce(data, bounds):
        return torch.segment_reduce(data, reduce, **{by: bounds}, axis=0, initial=0.5)
    check_symbolic(segment_reduce, inputs([2, 0, 3, 2], 3), inputs([4, 1, 0, 3, 1, 2], 5))


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag(device, mode):
    def inputs(rows, columns, bag_sizes):
        offsets = torch.tensor([0, *bag_sizes[:-1]], device=device).cumsum(0)
        indices = torch.randint(0, rows, (sum(bag_sizes),), device=device)
        return [torch.randn(rows, columns, device=device), indices, offsets]

    def embedding_bag(weight, indices, offsets):
        return F.embedding_bag(indices, weight, offsets, mode=mode)
    check_symbolic(embedding_bag, inputs(10, 3, [2, 0, 4]), inputs(7, 5, [3, 1, 0, 2, 5]))


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_2d(device, mode, padding, align_corners):
    def inputs(n, c, h, w, gh, gw):
        return [torch.randn(n, c, h, w, device=device),
                torch.rand(n, gh, gw, 2, device=device) * 2.6 - 1.3]

    def grid_sample(x, grid):
        return F.grid_sample(x, grid, mode, padding, align_corners=align_corners)
    check_symbolic(grid_sample, inputs(3, 4, 5, 6, 7, 8), inputs(2, 3, 9, 4, 5, 6),
                   atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
def test_grid_sample_3d(device, mode, padding):
    def inputs(n, c, d, h, w, gd, gh, gw):
        return [torch.randn(n, c, d, h, w, device=device),
                torch.rand(n, gd, gh, gw, 3, device=device) * 2.6 - 1.3]

    def grid_sample(x, grid):
        return F.grid_sample(x, grid, mode, padding, align_corners=False)
    check_symbolic(grid_sample, inputs(2, 4, 5, 6, 7, 8, 9, 10), inputs(3, 2, 4, 5, 6, 4, 7, 5))


@pytest.mark.parametrize("accumulate", [False, True])
def test_put(device, accumulate):
    def inputs(rows, columns, sources):
        numel = rows * columns
        index = torch.randint(-numel, numel, (sources,), device=device)
        index[-1] = index[0]  # a repeated element: the last source wins
        return [torch.randn(rows, columns, device=device), index,
                torch.randn(sources, device=device)]

    def put(x, index, source):
        return x.put(index, source, accumulate=accumulate)
    check_symbolic(put, inputs(3, 4, 5), inputs(6, 2, 9))


def test_put_with_a_source_longer_than_its_index_raises_as_eager(device):
    """The index's element count (2 x 3) and the source's (6) are other symbols: the lowering
    guards them equal, and other counts compile a version that runs the aten op, which
    raises."""
    def put(x, index, source):
        return x.put(index, source)
    x, index, source = (t.to(device) for t in (torch.randn(4, 5),
                                               torch.tensor([[0, 5, -1], [2, 7, 5]]),
                                               torch.randn(6)))
    compiled = compile_fx(make_fx(put, "symbolic")(x, index, source), [x, index, source])
    assert counters["fallbacks"] == 0
    with pytest.raises(IndexError, match="same number of elements"):
        put(x, index, torch.randn(7).to(device))
    with pytest.raises(IndexError, match="same number of elements"):
        compiled(x, index, torch.randn(7).to(device))
    assert len(compiled.versions) == 2


def test_masked_scatter(device):
    def inputs(rows, columns):
        mask = torch.rand(rows, 1, device=device) > 0.4  # broadcast over the columns
        return [torch.randn(rows, columns, device=device), mask,
                torch.randn(rows + 1, columns, device=device)]
    check_symbolic(lambda x, mask, source: x.masked_scatter(mask, source), inputs(5, 3),
                   inputs(8, 6))


@pytest.mark.parametrize("dtype", [torch.int32, torch.float32])
def test_mode(device, dtype):
    if device != "cpu":
        pytest.skip("mode is lowered for CPU tensors only (eager on a GPU chooses among equal "
                    "values its own way): there it runs as aten")
    def inputs(rows, length):
        x = torch.randint(0, 3, (rows, length), device=device).to(dtype)
        if dtype.is_floating_point:
            x[0, 1] = float("nan")
        return [x]
    check_symbolic(lambda x: torch.mode(x, 1), inputs(4, 7), inputs(3, 16), inputs(5, 2))
    # (a row past 16 elements is std::sort's introsort: another version, the aten op)
    compiled = compile_fx(make_fx(lambda x: torch.mode(x, 1), "symbolic")(*inputs(4, 7)),
                          inputs(4, 7))
    x = inputs(3, 20)[0]
    for got, want in zip(compiled(x), torch.mode(x, 1), strict=True):
        torch.testing.assert_close(got, want, equal_nan=True)
    assert len(compiled.versions) == 2


@pytest.mark.parametrize("replacement", [False, True])
def test_multinomial(device, replacement):
    """Random draws: checked by what every draw must be (a category of nonzero probability;
    distinct ones without replacement), at two numbers of categories, one compilation."""
    def multinomial(probs):
        return torch.multinomial(probs, 3, replacement)

    def probs(rows, categories):
        p = torch.rand(rows, categories, device=device)
        p[:, 1] = 0
        return p
    first = probs(4, 6)
    compiled = compile_fx(make_fx(multinomial, "symbolic")(first), [first])
    for p in (first, probs(5, 7)):
        drawn = compiled(p)
        assert drawn.shape == (p.shape[0], 3) and drawn.dtype == torch.int64
        assert bool((p.gather(1, drawn) > 0).all())
        if not replacement:
            assert all(len(set(row.tolist())) == 3 for row in drawn)
    assert len(compiled.versions) == 1
    assert counters["fallbacks"] == 0 and counters["eager_graphs"] == 0


@pytest.mark.parametrize("right", [False, True])
def test_searchsorted(device, right):
    """A search of a symbolic number of boundaries takes the steps of its traced size (5: 3
    steps), guarded to fewer than 8 boundaries; 12 compile a version of their own."""
    def inputs(rows, boundaries, values):
        sequence = torch.randint(0, 9, (rows, boundaries), device=device).sort(-1).values
        return [sequence.float(), torch.randint(-1, 10, (rows, values), device=device).float()]

    def search(sequence, values):
        return torch.searchsorted(sequence, values, right=right)
    compiled = check_symbolic(search, inputs(3, 5, 4), inputs(4, 7, 6), inputs(2, 6, 9))
    sequence, values = inputs(3, 12, 4)
    torch.testing.assert_close(compiled(sequence, values), search(sequence, values))
    assert len(compiled.versions) == 2
