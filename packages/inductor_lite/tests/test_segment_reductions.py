"""`segment_reduce` as a generated masked reduction, against eager (segment_reductions.py)."""

import pytest
import torch

from inductor_lite import compile_fx, counters

REDUCTIONS = ["sum", "mean", "max", "min", "prod"]
# segments of 0 (empty), 1, 2 and 4 rows of 7
LENGTHS = [0, 1, 2, 4]
OFFSETS = [0, 0, 1, 3, 7]


def compile_and_check(fn, *inputs, fallbacks=0):
    compiled = compile_fx(torch.fx.symbolic_trace(fn), list(inputs))
    got, want = compiled(*inputs), fn(*inputs)
    assert got.shape == want.shape and got.dtype == want.dtype
    torch.testing.assert_close(got, want, equal_nan=True)
    assert counters["fallbacks"] == fallbacks and (fallbacks or counters["kernels"] >= 1)


def with_a_nan(x):
    x[(4,) + (0,) * (x.dim() - 1)] = float("nan")  # in the last segment
    return x


@pytest.mark.parametrize("reduce", REDUCTIONS)
@pytest.mark.parametrize("initial", [None, 2])
def test_segment_reduce_by_lengths(device, reduce, initial):
    x = with_a_nan(torch.randn(7, 3, device=device))
    lengths = torch.tensor(LENGTHS, device=device)
    compile_and_check(lambda x, n: torch.segment_reduce(x, reduce, lengths=n, initial=initial),
                      x, lengths)


@pytest.mark.parametrize("reduce", REDUCTIONS)
def test_segment_reduce_by_offsets_of_a_strided_3d_input(device, reduce):
    x = with_a_nan(torch.randn(3, 7, 2, device=device).transpose(0, 1))
    offsets = torch.tensor(OFFSETS, device=device, dtype=torch.int32)
    compile_and_check(lambda x, o: torch.segment_reduce(x, reduce, offsets=o, initial=-1.5),
                      x, offsets)


@pytest.mark.parametrize("reduce", ["sum", "mean", "max"])
def test_segment_reduce_float64_one_segment_and_unsafe_lengths(device, reduce):
    x = torch.randn(7, device=device, dtype=torch.float64)
    compile_and_check(lambda x, n: torch.segment_reduce(x, reduce, lengths=n), x,
                      torch.tensor([7], device=device))
    # with unsafe=True the lengths may cover only the first rows
    compile_and_check(lambda x, n: torch.segment_reduce(x, reduce, lengths=n, unsafe=True), x,
                      torch.tensor([2, 0, 3], device=device, dtype=torch.int32))


@pytest.mark.parametrize("reduce", REDUCTIONS)
def test_segment_reduce_by_rows_of_lengths_and_offsets(device, reduce):
    # a row of segments per leading index of the data, along dim 1
    x = with_a_nan(torch.randn(7, 5, 2, device=device).transpose(0, 1))
    lengths = torch.tensor([[0, 3, 4], [7, 0, 0], [1, 1, 5], [2, 2, 3], [0, 0, 7]],
                           device=device)
    offsets = torch.cat([torch.zeros(5, 1, dtype=torch.int64, device=device),
                         lengths.cumsum(1)], 1)
    compile_and_check(lambda x, n: torch.segment_reduce(x, reduce, lengths=n, axis=1), x,
                      lengths)
    compile_and_check(lambda x, o: torch.segment_reduce(x, reduce, offsets=o, axis=1,
                                                        initial=0.5), x, offsets)


def test_segment_reduce_of_a_row_of_lengths_eager_refuses_raises(device):
    if device != "cpu":
        pytest.skip("bounds are checked by Triton's interpreter: on a GPU the kernels' check is "
                    "a device assert, only with config.index_asserts (eager's may be one too)")
    x = torch.randn(3, 7, device=device)
    lengths = torch.tensor([[3, 4], [2, 4], [7, 0]], device=device)  # row 1 sums to 6
    fn = lambda x, n: torch.segment_reduce(x, "max", lengths=n, axis=1)  # noqa: E731
    with pytest.raises(RuntimeError):
        fn(x, lengths)
    compiled = compile_fx(torch.fx.symbolic_trace(fn), [x, lengths])
    assert counters["fallbacks"] == 0
    with pytest.raises(IndexError, match="index out of bounds"):
        compiled(x, lengths)


@pytest.mark.parametrize("kind, bounds, unsafe", [
    ("lengths", [2, 2], False),  # they do not sum to the 7 rows: eager refuses
    ("lengths", [3, -1, 5], True),  # a negative length: eager refuses
    ("lengths", [3, 5], True),  # past the data: eager reads outside it
    ("offsets", [0, 4, 2], False),  # decreasing: eager refuses
    ("offsets", [0, 3, 9], False),  # past the data: eager reads outside it
    ("offsets", [-1, 3], False),  # before the data: eager reads outside it
])
def test_segment_reduce_of_bounds_eager_refuses_raises(device, kind, bounds, unsafe):
    if device != "cpu":
        pytest.skip("bounds are checked by Triton's interpreter: on a GPU the kernels' check is "
                    "a device assert, only with config.index_asserts (eager's may be one too)")
    x = torch.randn(7, 2, device=device)
    bounds = torch.tensor(bounds, device=device)
    fn = lambda x, b: torch.segment_reduce(x, "sum", unsafe=unsafe, **{kind: b})  # noqa: E731
    if not (kind == "lengths" and unsafe and bounds.sum() > 7 and bounds.min() >= 0) \
            and not (kind == "offsets" and (bounds.min() < 0 or bounds.max() > 7)):
        with pytest.raises(RuntimeError):
            fn(x, bounds)
    compiled = compile_fx(torch.fx.symbolic_trace(fn), [x, bounds])
    assert counters["fallbacks"] == 0
    with pytest.raises(IndexError, match="index out of bounds"):
        compiled(x, bounds)


def test_segment_reduce_of_half_floats_runs_the_aten_op(device):
    x = torch.randn(7, 2, device=device, dtype=torch.float16)
    compile_and_check(lambda x, n: torch.segment_reduce(x, "sum", lengths=n), x,
                      torch.tensor(LENGTHS, device=device), fallbacks=1)
