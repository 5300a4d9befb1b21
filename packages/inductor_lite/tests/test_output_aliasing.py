"""Outputs that alias inputs or each other keep aliasing as eager's do; half means round once."""

import gc

import pytest
import torch

from fxtrace import make_fx
from inductor_lite import compile_fx, counters


def _compiled(fn, *args, dynamic=False):
    gm = make_fx(fn, tracing_mode="symbolic" if dynamic else "real")(*args)
    return compile_fx(gm, list(args))


def test_view_of_relaid_output_aliases_it(device):
    def f(x):
        x[1:].mul_(2)
        y = x * 2          # laid out like the transposed input, copied into that order
        return y, y[0], y[:, 1:]
    x = torch.randn(3, 4, device=device).t()
    y, a, b = _compiled(f, x.clone())(x.clone())
    y.zero_()              # a write through the first output shows in its views
    assert (a == 0).all() and (b == 0).all()


def test_view_of_strided_input_symbolic_sizes(device):
    def f(x):
        x.mul_(2)
        return x.view(-1, *x.shape[2:])
    base = torch.randn(3, 4, 3, 8, device=device)
    x, expected = base.clone()[1:, :, :, ::2], base.clone()[1:, :, :, ::2]
    out = _compiled(f, x.clone(), dynamic=True)(x)
    ref = f(expected)
    out.add_(100)
    ref.add_(100)
    torch.testing.assert_close(x, expected)


def test_view_of_temporary_read_twice_keeps_its_strides(device):
    def f(x):
        y = x.tanh().unsqueeze(0).expand(2, *x.shape)  # read twice: stored
        return y[..., ::2], y.sum()
    x = torch.randn(4, 2, 2, device=device)
    view, total = _compiled(f, x)(x)
    assert view.stride() == (0, 4, 2, 2)  # eager's; it was (16, 4, 2, 2), stored densely
    torch.testing.assert_close(view, f(x)[0])
    torch.testing.assert_close(total, f(x)[1])


def test_split_pieces_are_views_of_the_input_they_write(device):
    def returned(x):
        a, b = x.chunk(2)  # split's pieces are getitems of one node: views all the same
        a.add_(1)
        return b

    x, expected = torch.zeros(4, 2, device=device), torch.zeros(4, 2, device=device)
    out, ref = _compiled(returned, x.clone())(x), returned(expected)
    out.fill_(5)  # eager's `b` is a view of x: the write reaches it (it was a copy)
    ref.fill_(5)
    torch.testing.assert_close(x, expected)

    def relaid(x):
        x[1:].mul_(2)
        y = x * 2          # copied into the transposed input's order: its pieces along
        return y, *y.chunk(2, 1)

    y, a, b = _compiled(relaid, torch.randn(3, 4, device=device).t())(
        torch.randn(3, 4, device=device).t())
    y.zero_()
    assert (a == 0).all() and (b == 0).all()

    def overlapping(x):  # a piece of an overlapping view: runs as it came
        x.unfold(0, 3, 1).chunk(4)[0].mul_(2)
        return x + 0

    def storage(x):  # an as_strided view of an input written through a piece: as it came
        x.split(2)[0].add_(1)
        return x.as_strided((2,), (1,), 1) * 1

    for f, make in ((overlapping, lambda: torch.arange(1., 7., device=device)),
                    (storage, lambda: torch.arange(1., 13., device=device)[4:].view(4, 2))):
        x, expected = make(), make()  # (the storage offset is the graph's to read)
        torch.testing.assert_close(_compiled(f, make())(x), f(expected))
        torch.testing.assert_close(x, expected)


def test_half_mean_rounds_once(device):
    x = (torch.randn(8, 5, device=device) * 10).half()
    torch.testing.assert_close(_compiled(lambda t: t.mean(-1), x)(x), x.mean(-1), atol=0, rtol=0)


@torch.library.custom_op("inductor_lite_tests::rowsum", mutates_args=())
def _rowsum(x: torch.Tensor) -> torch.Tensor:
    return x.sum(1)


@_rowsum.register_fake
def _(x):
    return x.new_empty(x.shape[1:])  # wrong: the kernel's result has x.shape[:1]


def test_library_call_of_other_sizes_than_its_fake_is_an_error(device):
    # the kernel reading the result would read past its end (it gave [7., 7., 1.])
    gm = make_fx(lambda x: _rowsum(x) * 2 + 1, tracing_mode="fake")(torch.ones(2, 3))
    compiled = compile_fx(gm, [torch.ones(2, 3)])
    with pytest.raises(RuntimeError, match=r"rowsum.*sizes \(2,\).*gave \(3,\)"):
        compiled(torch.ones(2, 3, device=device))


def test_a_dropped_output_is_freed_without_the_collector(device):
    """Triton's interpreter copies a kernel's arguments to the host with recursive closures,
    a reference cycle that held every buffer the kernel touched until gc's next pass: a loop
    whose iterations each ran a graph kept all their buffers alive at once."""
    import gc

    from torch.multiprocessing.reductions import StorageWeakRef

    def f(x):
        return x.sin() + 1
    x = torch.randn(64, device=device)
    compiled = _compiled(f, x)
    compiled(x)
    enabled = gc.isenabled()
    gc.disable()
    try:
        out = compiled(x)
        storage = StorageWeakRef(out.untyped_storage())
        del out
        assert storage.expired()
    finally:
        if enabled:
            gc.enable()


def test_a_finalizer_the_launchs_collection_runs_may_call_a_compiled_graph(device):
    """The young-generation pass after a launch on Triton's interpreter runs finalizers (a
    `__del__` of an object in a cycle, a `weakref.finalize`): one that calls a compiled graph
    launches a kernel. Run while the launch held the interpreter's lock, it deadlocked."""
    import threading

    def f(x):
        return x.sin() + 1
    x = torch.randn(8, device=device)
    compiled = _compiled(f, x)
    compiled(x)
    seen = []

    class Cleanup:
        def __init__(self):
            self.me = self  # a cycle: only the collector frees it

        def __del__(self):
            seen.append(compiled(x))

    def run():
        Cleanup()
        seen.append(compiled(x))
        if device != "cpu":  # (only the interpreter's launches collect: here the finalizer runs)
            gc.collect()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(timeout=60)
    assert not thread.is_alive(), "deadlocked"
    assert len(seen) == 2
    for out in seen:
        torch.testing.assert_close(out, f(x))


def _shift_columns_by_product(x):
    y = x * 1.0
    y[:, 1:3].mul_(y[:, :2])  # eager reads y[:, 1] after writing it (views not dense: allowed)
    return y


def _shift_columns_by_addcmul(x):
    y = x * 1.0
    y[:, 1:3].addcmul_(y[:, :2], y[:, 2:])  # (decomposed into out-of-place ops and a write)
    return y


def _shift_columns_by_copy(x):
    y = x * 1.0
    y[:, 1:3] = y[:, :2]
    return y


@pytest.mark.parametrize("fn", [_shift_columns_by_product, _shift_columns_by_addcmul,
                                _shift_columns_by_copy], ids=["mul_", "addcmul_", "copy_"])
def test_a_write_reading_another_view_of_what_it_writes_runs_as_eager(fn, device):
    # A functional trace reads the old values of the elements the op writes, eager's kernel
    # the ones it has just written: the graph runs as it came
    x = torch.randn(8, 4, device=device)
    counters.clear()
    torch.testing.assert_close(_compiled(fn, x.clone())(x.clone()), fn(x.clone()))
    assert counters["eager_graphs"] == 1, dict(counters)


def test_a_write_reading_a_disjoint_view_of_its_tensor_is_compiled(device):
    def f(x):
        y = x * 1.0
        y[:4].add_(y[4:])
        return y
    x = torch.randn(8, 4, device=device)
    counters.clear()
    torch.testing.assert_close(_compiled(f, x.clone())(x.clone()), f(x.clone()))
    assert counters["eager_graphs"] == 0 and counters["graphs"] == 1, dict(counters)


def _disjoint_interleaved_columns_by_addcmul(x):
    y = x * 1.0
    y[:, 0::2].addcmul_(y[:, 1::2], y[:, 1::2])  # (decomposed: the same check while decomposing)
    return y


@pytest.mark.parametrize("fn", [
    lambda x: torch.nn.functional.pad(x, (1, 2, 2, 1), mode="circular"),
    _disjoint_interleaved_columns_by_addcmul], ids=["circular_pad", "addcmul_"])
def test_a_write_reading_interleaved_but_other_elements_is_compiled(fn, device):
    # Circular padding copies columns of its output into others: their stretches of memory
    # interleave, their elements differ
    x = torch.randn(1, 2, 5, 6, device=device)
    counters.clear()
    torch.testing.assert_close(_compiled(fn, x.clone())(x.clone()), fn(x.clone()))
    assert counters["eager_graphs"] == 0 and counters["graphs"] == 1, dict(counters)
