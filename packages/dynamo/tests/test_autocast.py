"""`torch.autocast` blocks inside a compiled frame: entered while tracing (the fake ops get
autocast's dtypes) and in the graph (`enter_autocast`/`exit_autocast` nodes), so the compiled
results, dtypes and gradients are eager's; a graph break inside a block closes it in the
partial graph and opens it again for the resume function. Torch functions that switch global
state are made for real at a graph break, never while tracing."""

from __future__ import annotations

import contextlib
import io
import warnings

import pytest
import torch

import dynamo

lin = torch.nn.Linear(8, 8)


def _compiled(fn, *args, backend="eager", fullgraph=True):
    graphs = []

    def counting(gm, example_inputs):
        graphs.append(gm)
        return dynamo.backends.lookup_backend(backend)(gm, example_inputs)

    return dynamo.compile(fn, backend=counting, fullgraph=fullgraph,
                          raise_backend_errors=True)(*args), len(graphs)


def mixed(x):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        low = lin(x)
        with torch.autocast("cpu", enabled=False):
            full = lin(x)
        inside = torch.is_autocast_enabled("cpu")
    return low.float() + full, low.dtype, full.dtype, inside, torch.is_autocast_enabled("cpu")


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_autocast_block_is_one_graph_with_eagers_dtypes_and_gradients(backend):
    x = torch.randn(4, 8, requires_grad=True)
    expected = mixed(x)
    result, graphs = _compiled(mixed, x, backend=backend)
    assert graphs == 1 and result[1:] == expected[1:] == (torch.bfloat16, torch.float32,
                                                          True, False)
    torch.testing.assert_close(result[0], expected[0])
    grad, = torch.autograd.grad(result[0].sum(), x)
    expected_grad, = torch.autograd.grad(expected[0].sum(), x)
    torch.testing.assert_close(grad, expected_grad)
    assert not torch.is_autocast_enabled("cpu")


@torch.autocast("cpu", dtype=torch.bfloat16)
def decorated(x):
    return lin(x)


def test_autocast_subclass_and_decorator():
    def f(x):
        with torch.cpu.amp.autocast():
            a = lin(x)
        return a, decorated(x)

    x = torch.randn(4, 8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # torch.cpu.amp.autocast is deprecated
        expected = f(x)
        result, graphs = _compiled(f, x)
    assert graphs == 1
    for got, want in zip(result, expected):
        assert got.dtype == want.dtype == torch.bfloat16
        torch.testing.assert_close(got, want)


def test_a_graph_break_inside_the_block_reopens_it_for_the_rest():
    def f(x):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            y = lin(x)
            print("inside")
            z = lin(y.float())
        return z.float() * 2, y.dtype, z.dtype

    x = torch.randn(4, 8)
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        expected = f(x)
        compiled = dynamo.compile(f, backend="eager")
        for _ in range(2):  # the first call compiles, the second runs the cached entries
            result = compiled(x)
            assert result[1:] == expected[1:] == (torch.bfloat16, torch.bfloat16)
            assert torch.equal(result[0], expected[0])
            assert not torch.is_autocast_enabled("cpu")


def test_state_is_restored_when_the_trace_fails_inside_the_block():
    def f(x):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            print("inside")
            return lin(x)

    with contextlib.redirect_stdout(io.StringIO()), pytest.raises(dynamo.Unsupported):
        dynamo.compile(f, backend="eager", fullgraph=True)(torch.randn(2, 8))
    assert not torch.is_autocast_enabled("cpu")
    assert torch.get_autocast_dtype("cpu") == torch.bfloat16  # the default, untouched


def test_compiled_under_an_outer_autocast_recompiles():
    def f(x):
        return lin(x)

    compiled = dynamo.compile(f, backend="eager")
    x = torch.randn(2, 8)
    assert compiled(x).dtype == torch.float32
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert compiled(x).dtype == torch.bfloat16
    assert compiled(x).dtype == torch.float32


def test_a_block_without_dtype_follows_the_devices_autocast_dtype():
    # torch.autocast("cpu") takes torch.get_autocast_dtype("cpu"): set_autocast_dtype after
    # compiling must recompile, not keep the dtype the trace saw
    def f(x):
        with torch.autocast("cpu"):
            return lin(x)

    def g(x):  # an explicit dtype decides it: no guard needed, still right
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return lin(x)

    compiled, compiled_g = dynamo.compile(f, backend="eager"), dynamo.compile(g, backend="eager")
    x = torch.randn(2, 8)
    before = torch.get_autocast_dtype("cpu")
    try:
        torch.set_autocast_dtype("cpu", torch.float16)
        assert compiled(x).dtype == torch.float16 == f(x).dtype
        assert compiled_g(x).dtype == torch.bfloat16
        torch.set_autocast_dtype("cpu", torch.bfloat16)
        assert compiled(x).dtype == torch.bfloat16 == f(x).dtype
        assert compiled_g(x).dtype == torch.bfloat16
    finally:
        torch.set_autocast_dtype("cpu", before)


@pytest.mark.parametrize("writes_an_input", [False, True])
def test_aot_eager_under_an_outer_autocast_runs_its_graph(writes_an_input):
    """The frontend's trace fills the outer block's cache of casts with casts of fakes; the
    aten lowering of the same fakes must trace its casts, not take those (fake constants in
    the graph: a graph that raised on every call, or a real-and-fake mix reaching the user)."""
    counter = torch.zeros(())
    raised = []

    def f(x):
        if writes_an_input:
            counter.add_(1)
        return lin(x)

    def backend(gm, example_inputs):
        run = dynamo.backends.lookup_backend("aot_eager")(gm, example_inputs)

        def watched(*args):
            try:
                return run(*args)
            except Exception as error:
                raised.append(error)
                raise
        return watched

    compiled = dynamo.compile(f, backend=backend, raise_backend_errors=True)
    x = torch.randn(2, 8)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        for _ in range(2):
            got, expected = compiled(x), lin(x)
            assert got.dtype == torch.bfloat16
            torch.testing.assert_close(got, expected)
    assert raised == []
    assert counter.item() == (2 if writes_an_input else 0)


class _CastsToFloat(torch.autograd.Function):
    @staticmethod
    @torch.amp.custom_fwd(device_type="cpu", cast_inputs=torch.float32)
    def forward(ctx, x):
        return x * 2

    @staticmethod
    @torch.amp.custom_bwd(device_type="cpu")
    def backward(ctx, g):
        return g * 2


class _MatMul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a @ b

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        return g @ b.t(), a.t() @ g


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_a_function_applied_inside_a_block_sees_the_block(backend):
    """custom_fwd's casts and the dtypes of the forward's ops are autocast's, also through the
    aten graph (where the Function's apply is one call, run inside the blocks open there)."""
    def f(x, w):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return _CastsToFloat.apply(x.to(torch.bfloat16)), _MatMul.apply(x, w)

    x, w = torch.randn(4, 4, requires_grad=True), torch.randn(4, 4)
    (got, got_mm), _ = _compiled(f, x, w, backend=backend)
    want, want_mm = f(x, w)
    assert (got.dtype, got_mm.dtype) == (want.dtype, want_mm.dtype) == (torch.float32,
                                                                       torch.bfloat16)
    torch.testing.assert_close((got, got_mm), (want, want_mm))
    got.sum().backward()
    assert x.grad is not None


def test_global_state_setters_run_for_real_at_a_graph_break():
    precision = torch._tensor_str.PRINT_OPTS.precision

    def f(x, digits):
        torch.set_printoptions(precision=digits)
        return x + 1

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            explained = dynamo.explain(f)(torch.ones(2), 3)
            dynamo.compile(f, backend="eager")(torch.ones(2), 2)
        assert torch._tensor_str.PRINT_OPTS.precision == 2
        assert any("global state" in b.reason for b in explained.breaks)
    finally:
        torch.set_printoptions(precision=precision)


@torch.inference_mode()
def inferred(x):
    return lin(x) + 1


def test_inference_mode_blocks_and_decorators():
    def f(x):
        trained = lin(x)
        with torch.inference_mode():
            frozen = lin(x) * 2
            inside = torch.is_inference_mode_enabled()
        return trained, frozen, inferred(x), inside

    x = torch.randn(2, 8)
    expected = f(x)
    for backend in ("eager", "aot_eager"):  # aot_eager leaves such a graph as it is: a warning
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = dynamo.compile(f, backend=backend)(x)
        assert result[3] is True and not torch.is_inference_mode_enabled()
        for got, want in zip(result[:3], expected[:3]):
            torch.testing.assert_close(got, want)
            assert (got.is_inference(), got.requires_grad) == (want.is_inference(),
                                                               want.requires_grad)
    assert dynamo.explain(f)(x).graph_count == 1


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_a_model_built_in_inference_mode_is_captured_outside_it(backend):
    """Its parameters are inference tensors that require grad: faking them outside inference
    mode raised inside the interpreter ("LOAD_FAST met a case the interpreter does not
    handle"), and the frame ran eagerly with a warning."""
    with torch.inference_mode():
        model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.GELU())
    x = torch.randn(2, 4)
    with torch.no_grad():
        expected = model(x)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            got, graphs = _compiled(model, x, backend=backend)
    torch.testing.assert_close(got, expected)
    assert graphs == 1 and not got.is_inference()


def test_a_break_inside_an_autocast_block_exits_this_calls_block() -> None:
    """The block open at the break is closed by this call's `__exit__`, which restores what was
    on before this call (the first call's, called again, restored that call's outer autocast)."""
    linear = torch.nn.Linear(4, 4)

    def f(x):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            print(end="")
        return linear(x)

    compiled, x = dynamo.compile(f), torch.randn(3, 4)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        compiled(x)
    assert compiled(x).dtype == torch.float32 and not torch.is_autocast_enabled("cpu")


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_a_graph_raising_inside_a_block_leaves_the_block(backend):
    """An index out of range inside an autocast block: the error reaches the caller as
    eager's does, and autocast is off again after it (the graph's exit node never ran)."""
    def f(t, idx):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            z = (t @ t)[idx]
        return z

    compiled = dynamo.compile(f, backend=backend)
    t = torch.randn(3, 3)
    assert compiled(t, torch.tensor([0])).dtype == torch.bfloat16
    with pytest.raises(IndexError):
        compiled(t, torch.tensor([7]))
    assert not torch.is_autocast_enabled("cpu")
    assert (t @ t).dtype == torch.float32


def _full_precision(x, buf):
    with torch.autocast("cpu", enabled=False):
        y = torch.mm(x, x.t()).double()
    if buf is not None:
        buf.copy_(y[0])  # a write into an input: functionalized, the aten graph is traced again
    return y


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
@pytest.mark.parametrize("writes_an_input", [False, True])
def test_a_disabled_block_inside_an_outer_autocast_keeps_full_precision(backend,
                                                                       writes_an_input):
    """The aten graph holds the casts of the blocks it was traced in, not their enter and exit:
    run (or traced again) inside the outer block, its matmul was cast to bfloat16 a second
    time, with the float64 result eager's dtype (values thousands off)."""
    x = torch.randn(32, 32) * 100
    buf = torch.zeros(32, dtype=torch.float64) if writes_an_input else None
    compiled = dynamo.compile(_full_precision, backend=backend)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        expected = _full_precision(x, None)
        for _ in range(2):
            got = compiled(x, buf)
            assert got.dtype == torch.float64
            torch.testing.assert_close(got, expected)
    if buf is not None:
        torch.testing.assert_close(buf, expected[0])


def test_aot_eager_lowers_a_block_inside_an_outer_autocast():
    """The inner block's own settings turned autocast's cache on again in the lowering, which
    then took the frontend's casts of the same fakes (fake constants: the graph was refused and
    ran eagerly, with a warning)."""
    def f(x, w):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return lin(x), _MatMul.apply(x, w), _CastsToFloat.apply(x.to(torch.bfloat16))

    x, w = torch.randn(4, 8), torch.randn(8, 8)
    with torch.autocast("cpu", dtype=torch.float16):
        expected = f(x, w)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            got, graphs = _compiled(f, x, w, backend="aot_eager")
    assert graphs == 1
    assert [t.dtype for t in got] == [t.dtype for t in expected] == [
        torch.bfloat16, torch.bfloat16, torch.float32]
    torch.testing.assert_close(got, expected)
