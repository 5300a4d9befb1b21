"""Each kernel family against eager, with the kernel counts the issue asks for.

Graphs are captured with torch.fx.symbolic_trace and compiled by compile_fx; on CPU the kernels
run through Triton's interpreter (conftest.py).
"""

import re

import pytest
import torch
import torch.nn.functional as F
from torch.torch_version import TorchVersion

from fxtrace import make_fx
from inductor_lite import compile_fx, counters


def compile_and_check(fn, *inputs, atol=1e-5, rtol=1e-5, **kwargs):
    gm = torch.fx.symbolic_trace(fn)
    compiled = compile_fx(gm, list(inputs))
    out = compiled(*inputs)
    ref = fn(*inputs)
    refs = ref if isinstance(ref, (list, tuple)) else [ref]
    out = out if isinstance(ref, (list, tuple)) else [out]
    assert len(out) == len(refs)
    for got, want in zip(out, refs):
        assert got.shape == want.shape and got.dtype == want.dtype
        torch.testing.assert_close(got, want, atol=atol, rtol=rtol, equal_nan=True)
    return compiled


def source(compiled) -> str:
    return compiled.versions[-1][1].source


def test_layer_norm_is_one_kernel(device):
    w, b = torch.randn(48, device=device), torch.randn(48, device=device)
    compile_and_check(lambda x: F.layer_norm(x, (48,), w, b), torch.randn(6, 5, 48, device=device))
    assert counters["kernels"] == 1 and counters["fallbacks"] == 0


def test_softmax_is_one_kernel(device):
    compile_and_check(lambda x: x.softmax(-1), torch.randn(10, 37, device=device))
    assert counters["kernels"] == 1 and counters["fallbacks"] == 0


def test_log_softmax_is_one_kernel(device):
    compile_and_check(lambda x: F.log_softmax(x, -1), torch.randn(10, 37, device=device))
    assert counters["kernels"] == 1


def test_rms_norm_is_one_kernel(device):
    w = torch.randn(64, device=device)

    def rms_norm(x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w
    compile_and_check(rms_norm, torch.randn(9, 64, device=device))
    assert counters["kernels"] == 1 and counters["fallbacks"] == 0


def test_bias_gelu_is_one_extern_and_one_kernel(device):
    w, b = torch.randn(32, 16, device=device), torch.randn(16, device=device)
    compile_and_check(lambda x: F.gelu(x @ w + b), torch.randn(8, 32, device=device), atol=1e-4)
    assert counters["kernels"] == 1 and counters["extern_calls"] == 1
    assert counters["fallbacks"] == 0


def test_ten_pointwise_ops_are_one_kernel(device):
    def chain(x, y):
        a = x * 2 + y
        b = a.sin() - y.exp()
        c = torch.relu(b) / (y.abs() + 1)
        return torch.tanh(c).sigmoid() * 3
    compile_and_check(chain, torch.randn(33, 17, device=device), torch.randn(33, 17, device=device))
    assert counters["kernels"] == 1 and counters["lowered_ops"] >= 10


def test_broadcasting_and_scalars(device):
    compile_and_check(lambda x, y: (x + y) * 0.5 - 3, torch.randn(4, 1, 6, device=device),
                      torch.randn(5, 1, device=device))
    assert counters["kernels"] == 1


def test_type_promotion(device):
    compile_and_check(lambda i, x: (i + x, i * 2, i > x, i / 3),
                      torch.arange(12, device=device).reshape(3, 4), torch.randn(3, 4, device=device))
    assert counters["fallbacks"] == 0


def test_python_integer_division_and_modulo(device):
    a = torch.tensor([7, -7, 7, -7, 0, 5], device=device)
    b = torch.tensor([2, 2, -2, -2, 3, -3], device=device)
    compile_and_check(lambda a, b: (a // b, a % b, torch.div(a, b, rounding_mode="trunc")), a, b)
    assert counters["fallbacks"] == 0


def test_non_contiguous_inputs(device):
    x = torch.randn(16, 12, device=device).t()
    y = torch.randn(12, 32, device=device)[:, ::2]
    compile_and_check(lambda x, y: x.exp() + y, x, y)
    assert counters["kernels"] == 1


def test_odd_sizes(device):
    compile_and_check(lambda x: (x * x).sum(-1), torch.randn(37, 13, device=device))
    compile_and_check(lambda x: x.cos() + 1, torch.randn(1031, device=device))


@pytest.mark.parametrize("op", ["sum", "prod", "amax", "amin", "mean", "var", "argmax", "argmin"])
def test_reductions(op, device):
    x = torch.randn(6, 7, 5, device=device)
    compile_and_check(lambda x: getattr(x, op)(1), x, atol=1e-4, rtol=1e-4)
    compile_and_check(lambda x: getattr(x, op)(-1), x, atol=1e-4, rtol=1e-4)
    assert counters["fallbacks"] == 0


def test_reduction_of_everything_and_keepdim(device):
    x = torch.randn(6, 7, device=device)
    compile_and_check(lambda x: (x.sum(), x.amax(dim=0, keepdim=True), x.mean((0, 1))), x)


def test_any_all(device):
    x = torch.randn(5, 9, device=device) > 0.5
    compile_and_check(lambda x: (x.any(-1), x.all(0), x.sum(-1)), x)


def test_long_rows_loop(device):
    # Rows longer than a persistent block: the reduction loops, the epilogue loops again.
    x = torch.randn(3, 9000, device=device)
    compiled = compile_and_check(lambda x: (x.softmax(-1), x.argmax(-1)), x, atol=1e-6)
    assert "for roffset in range" in source(compiled)
    assert counters["kernels"] == 1


def test_rows_persistent_or_looped_are_both_right(device, monkeypatch):
    """Rows of 3000 get a persistent kernel and its looped form; the tuner times both (on a
    GPU), and either gives eager's result."""
    from inductor_lite import runtime

    w, b = torch.randn(3000, device=device), torch.randn(3000, device=device)
    fn = lambda x: F.layer_norm(x, (3000,), w, b).softmax(-1)  # noqa: E731
    x = torch.randn(4, 3000, device=device)
    compiled = compile_and_check(fn, x, atol=1e-6)
    assert "def kernel0_looped(" in source(compiled) and "looped=kernel0_looped" in source(compiled)
    chosen = []

    def last(self, key, args, xnumel, rnumel, on_gpu):
        chosen.append(self.candidates(xnumel, rnumel)[-1])
        return chosen[-1]
    monkeypatch.setattr(runtime.Launcher, "_choose", last)
    compile_and_check(fn, x, atol=1e-6)
    assert chosen and all(cfg["looped"] for cfg in chosen)


def test_views_do_not_copy(device):
    def views(x):
        return (x.t() + 1, x[1:, ::2] * 2, x.unsqueeze(0).expand(3, 8, 6) - 1,
                x.reshape(2, 24).sum(-1), x.select(1, 2).neg())
    compile_and_check(views, torch.randn(8, 6, device=device))
    assert counters["fallbacks"] == 0


def test_view_outputs_alias(device):
    compiled = compile_and_check(lambda x: x[2], torch.randn(4, 5, device=device))
    assert "as_strided" in source(compiled) and counters["kernels"] == 0


def test_views_that_add_dims_of_size_one_keep_eager_strides(device):
    """`x.unsqueeze(0)` of a (2, 3) input has stride 6 in its new dim (eager's; it addresses
    nothing), not 1; the view still shares the input's storage."""
    x = torch.randn(2, 3, device=device)
    for fn in (lambda x: x.unsqueeze(0), lambda x: x[None, :, None], lambda x: x.unsqueeze(1),
               lambda x: x.reshape(1, 6), lambda x: x.t().unsqueeze(2)):
        got, want = compile_fx(torch.fx.symbolic_trace(fn), [x])(x), fn(x)
        assert got.stride() == want.stride(), (got.stride(), want.stride())
        assert got.data_ptr() == want.data_ptr()


def test_view_outputs_of_temporaries_keep_eager_strides(device):
    # Not dense: stored with the traced strides (a broadcast row is stored once), not copied.
    def views(x):
        y = (x[0] + 1).expand(3, 6)
        return y, y.sum(), x.exp().diagonal(1), x.cos()[:, ::2]
    x = torch.randn(4, 6, device=device)
    got, want = compile_fx(torch.fx.symbolic_trace(views), [x])(x), views(x)
    for g, w in zip(got, want):
        assert g.stride() == w.stride()
        torch.testing.assert_close(g, w)


def test_view_outputs_of_temporaries_computed_before_a_write_keep_eager_strides(device):
    # The write into `a` computes the views that read it first: as outputs, with their strides.
    def views(a, b):
        y = torch.cat([-b, a], 1)
        t = (a + b).expand(2, 4, 6)
        a.mul_(-1)
        return y.chunk(3, 1)[-1], t
    args = [torch.randn(4, 6, device=device) for _ in range(2)]
    ours = [t.clone() for t in args]
    got = compile_fx(torch.fx.symbolic_trace(views), [t.clone() for t in args])(*ours)
    for g, w in zip(got, views(*args)):
        assert g.stride() == w.stride()
        torch.testing.assert_close(g, w)
    assert torch.equal(ours[0], args[0])


def test_gather_and_scatter_of_a_0d_tensor_by_a_1d_index(device):
    x, i = torch.tensor(5.0, device=device), torch.tensor([0, 0, 0], device=device)
    for fn in (lambda x, i: x.gather(0, i), lambda x, i: x.scatter_add(0, i, torch.ones_like(x)
               .expand(3)), lambda x, i: x.scatter(0, i, 2.0)):
        compile_and_check(fn, x, i)


def test_index_select_index_add_and_gather_by_a_0d_index(device):
    # a 0-d index keeps the dim (of size 1) in index_select and index_add, and reads one
    # element of a 1-d tensor in gather; an index computed in the graph reaches the kernels
    x = torch.tensor([[0.0, 5, 1, 2], [3, 0, 1, 1], [1, 1, 1, 1]], device=device)
    s = torch.arange(1.0, 5.0, device=device).reshape(1, 4)

    def fn(x, s):
        i = x[:, 0].argmax()
        return (x.index_select(0, i), x.index_select(1, i), x.index_add(0, i, s),
                x[0].gather(0, i))
    compile_and_check(fn, x, s)
    assert counters["fallbacks"] == 0
    # a source of fewer dims than the tensor, which eager refuses, is refused too (the
    # decomposition broadcast it)
    v, scalar = torch.zeros(4, device=device), torch.tensor(7.0, device=device)
    gm = torch.fx.symbolic_trace(lambda v, s: v.index_add(0, torch.tensor(2, device=device), s))
    with pytest.raises(RuntimeError, match="source"):
        compile_fx(gm, [v, scalar])


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64])
def test_accumulating_scatter_of_one_value_for_every_source(device, dtype):
    """Counting (a graph network's degrees): `index_add` of ones made in the graph, whose
    value is one element spread over the lanes of an atomic add."""
    def degrees(x, index):
        return x.index_add(0, index, torch.ones(index.shape[0], device=device, dtype=dtype))

    x = torch.zeros(6, device=device, dtype=dtype)
    compile_and_check(degrees, x, torch.tensor([1, 1, 2, 3, 3, 3, 0, 5, 5, 5, 5, 4, 4, 1, 2],
                                               device=device))
    assert counters["fallbacks"] == 0


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64])
def test_accumulating_scatters_under_deterministic_algorithms(device, dtype):
    """Atomic float additions land in any order on a GPU: under
    `torch.use_deterministic_algorithms(True)` a float `index_add`/`scatter_add` runs as
    aten (integer sums are the same in any order: still generated)."""
    def add_rows(x, index, src):
        return x.index_add(0, index, src), x.scatter_add(0, index[:, None].expand(-1, 3), src)

    x = torch.zeros(4, 3, device=device).to(dtype)
    index = torch.tensor([0, 2, 0, 3, 2], device=device)
    src = torch.arange(15, device=device).reshape(5, 3).to(dtype)
    previous = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(True)
    try:
        compile_and_check(add_rows, x, index, src)
    finally:
        torch.use_deterministic_algorithms(previous)
    atomic = dtype is torch.float32
    assert (counters["fallbacks"] > 0) == atomic




def test_empty_under_deterministic_algorithms_is_filled_as_eager_fills_it(device):
    """Under `torch.use_deterministic_algorithms(True)` eager fills `empty` (NaN, the largest
    integer) while `torch.utils.deterministic.fill_uninitialized_memory` is on: such an
    `empty` runs as aten, which reads that flag as it runs (the kernels' zeros were returned;
    outside deterministic mode any content is allowed: zeros, generated)."""
    def make(x):
        return (torch.empty(3, device=x.device), torch.empty(2, dtype=torch.int64,
                device=x.device), torch.empty_like(x), x.new_empty(2) + 1,
                torch.empty_permuted((2, 3), (1, 0), device=x.device))

    x = torch.randn(3, device=device)
    gm = make_fx(make)(x)
    compile_fx(gm, [x])(x)
    assert counters["fallbacks"] == 0
    previous = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(True)
    try:
        out = compile_fx(make_fx(make)(x), [x])(x)
        for got, want in zip(out, make(x)):
            torch.testing.assert_close(got, want, equal_nan=True)
    finally:
        torch.use_deterministic_algorithms(previous)

def test_indexing(device):
    x = torch.randn(10, 6, device=device)
    idx = torch.tensor([3, 0, -1, 9], device=device)
    emb = torch.randn(20, 8, device=device)
    tokens = torch.tensor([[1, 5], [19, 0]], device=device)
    compile_and_check(lambda x, i: (x[i], x.index_select(1, i.clamp(0, 5)), x.gather(1, i.abs()
                      .clamp(0, 5).expand(10, 4))), x, idx)
    compile_and_check(lambda e, t: F.embedding(t, e), emb, tokens)
    compile_and_check(lambda x: x.masked_fill(x > 0, -1.0).where(x < 0.5, x), x)
    assert counters["fallbacks"] == 0


def test_a_boolean_mask_index_is_not_read_as_integer_indices(device):
    # `target[mask]` feeding an op whose output size is static (index_copy into a buffer):
    # the mask's 0s and 1s were gathered as rows 0 and 1 (AdaptiveLogSoftmaxWithLoss's
    # gather indices, wrong values)
    target = torch.tensor([0, 4, 9, 2], device=device)
    mask = target < 3
    rows = mask.nonzero().squeeze()
    buf = torch.full((4,), -7, device=device)

    def fn(buf, rows, target, mask):
        return torch.ops.aten.index_copy.default(buf, 0, rows, target[mask])
    gm = make_fx(fn, "fake")(buf, rows, target, mask)
    got = compile_fx(gm, [buf, rows, target, mask])(buf, rows, target, mask)
    torch.testing.assert_close(got[0] if isinstance(got, (list, tuple)) else got,
                               fn(buf, rows, target, mask))


def test_cat_and_pad(device):
    a, b = torch.randn(3, 4, device=device), torch.randn(3, 2, device=device)
    compile_and_check(lambda a, b: (torch.cat([a, b], 1) * 2, F.pad(a, (1, 2))), a, b)
    assert counters["fallbacks"] == 0


def test_extern_kernels(device):
    x, w = torch.randn(2, 3, 8, 8, device=device), torch.randn(4, 3, 3, 3, device=device)
    q = torch.randn(2, 2, 5, 8, device=device)
    compile_and_check(lambda x, w: F.conv2d(x, w, padding=1).relu(), x, w, atol=1e-4)
    compile_and_check(lambda a, b: torch.bmm(a, b).sum(-1), torch.randn(2, 3, 4, device=device),
                      torch.randn(2, 4, 5, device=device), atol=1e-4)
    compile_and_check(lambda q: F.scaled_dot_product_attention(q, q, q, is_causal=True), q,
                      atol=1e-4)
    compile_and_check(lambda b, x, y: torch.baddbmm(b, x, y), torch.randn(2, 3, 5, device=device),
                      torch.randn(2, 3, 4, device=device), torch.randn(2, 4, 5, device=device),
                      atol=1e-4)
    assert counters["fallbacks"] == 0 and counters["extern_calls"] == 4


def test_fallback_runs_unlowered_ops(device, caplog):
    with caplog.at_level("INFO", logger="inductor_lite"):
        compile_and_check(lambda x: torch.topk(x, 3)[1] + 1, torch.randn(4, 9, device=device))
    assert counters["fallbacks"] >= 1 and counters["kernels"] == 1
    assert "run as aten fallbacks: aten.topk.default" in caplog.text  # which op, in words


def test_one_hot_checks_its_classes_by_an_extern_call_not_a_fallback(device):
    # one_hot's decomposition asserts its classes are in range (`aten._assert_async.msg` of an
    # `all` the kernels compute): a library call on purpose, which raises eager's error
    # (torch before 2.13, the GPU machine's 2.11, traces one_hot without them)
    classes = torch.tensor([0, 3, 1], device=device)
    compiled = compile_and_check(lambda i: F.one_hot(i, 4) * 2, classes)
    checks = 2 if TorchVersion(torch.__version__) >= "2.13" else 0
    assert counters["fallbacks"] == 0 and counters["extern_calls"] == checks, dict(counters)
    if not checks or device != "cpu":  # (on a GPU, a failed check is a device assert)
        return
    for bad, words in ((torch.tensor([0, 4, 1]), "smaller than num_classes"),
                       (torch.tensor([0, -1, 1]), "non-negative")):
        with pytest.raises(RuntimeError, match=words):
            compiled(bad.to(device))


def test_random_ops(device):
    x = torch.ones(64, 64, device=device)
    gm = torch.fx.symbolic_trace(lambda x: (F.dropout(x, 0.25, True), torch.rand_like(x)))
    compiled = compile_fx(gm, [x])
    torch.manual_seed(1)
    a, r = compiled(x)
    torch.manual_seed(1)
    a2, _ = compiled(x)
    assert torch.equal(a, a2)  # seeds come from torch's generator
    kept = (a != 0).float().mean().item()
    assert 0.7 < kept < 0.8 and torch.allclose(a[a != 0], torch.full_like(a[a != 0], 1 / 0.75))
    assert 0.45 < r.mean().item() < 0.55 and r.min() >= 0 and r.max() < 1
    assert counters["fallbacks"] == 0


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_rand_stays_below_one(dtype, device):
    # a float32 draw just below 1 rounds to 1.0 in half precision (one in 500 in bfloat16);
    # eager's rand never gives 1.0
    x = torch.ones(20000, device=device, dtype=dtype)
    gm = torch.fx.symbolic_trace(lambda x: (torch.rand_like(x), torch.rand_like(x) * 2))
    torch.manual_seed(0)
    r, r2 = compile_fx(gm, [x])(x)
    assert r.dtype == dtype and r.min() >= 0 and r.max() < 1 and r2.max() < 2
    assert 0.45 < r.float().mean().item() < 0.55


def test_float64_draws_are_eagers(device):
    # Triton's generator makes float32 numbers; cast up, a float64 draw would have 24 bits
    x = torch.ones(1000, device=device, dtype=torch.float64)
    gm = torch.fx.symbolic_trace(lambda x: (torch.rand_like(x), torch.randn_like(x) + x))
    compiled = compile_fx(gm, [x])
    torch.manual_seed(0)
    got = compiled(x)
    torch.manual_seed(0)
    expected = gm(x)
    torch.testing.assert_close(got, expected, rtol=0, atol=0)
    assert (got[0] != got[0].float().double()).any()


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_computed_in_float32(dtype, device):
    x = torch.randn(8, 40, device=device, dtype=dtype)
    compiled = compile_and_check(lambda x: (x.softmax(-1), x * 2 + 1), x, atol=1e-2, rtol=1e-2)
    assert ".to(tl.float32)" in source(compiled)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_compares_with_numbers_as_half_holds_them(dtype, device):
    h = torch.tensor([0.1, 0.3, 2049.0, -1.0], device=device, dtype=dtype)
    compile_and_check(lambda h: (h == 0.1, h < 0.3, h >= torch.tensor(0.3, device=device),
                                 h != 2049.3), h)


def test_int_and_bool(device):
    i = torch.randint(-5, 5, (4, 6), device=device, dtype=torch.int32)
    compile_and_check(lambda i: (i * 3 - 1, i.amax(-1),
                                 (i > 0) & (i < 3), ~(i > 0)), i)


def test_mutated_input_is_written_back(device):
    def mutate(x, y):
        x.add_(y)
        return x * 2
    x, y = torch.randn(5, 3, device=device), torch.randn(5, 3, device=device)
    expected_x = x + y
    gm = torch.fx.symbolic_trace(mutate)
    compiled = compile_fx(gm, [x.clone(), y])
    out = compiled(x, y)
    torch.testing.assert_close(x, expected_x)
    torch.testing.assert_close(out, expected_x * 2)



@pytest.mark.parametrize("args", [(0, 5 * 2**30, 2**30), (2**31 - 2, 2**31 + 2), (2**40, 2**40 + 3),
                                  (2**33, 0, -2**31)])
def test_int64_arange_past_int32_is_computed_in_int64(device, args):
    """(Indices are 32-bit in the kernels: `xindex * 2**30` wrapped, and a start of 2**40
    failed to compile.)"""
    def add_range(a):
        return a + torch.arange(*args, device=a.device)

    n = len(range(*args))
    compile_and_check(add_range, torch.zeros(n, dtype=torch.int64, device=device))
    assert counters["kernels"] == 1 and counters["eager_graphs"] == 0


def test_index_values_that_fit_are_computed_in_int32(device):
    """(Triton 3.6 on an H200 computed adaptive pooling's window counts, in int64, as 0: the
    (5, 5) pooling of an (8, 9) input gave ±inf, where the same arithmetic in int32 was right;
    int64 division is slow there too.) Only values that may pass 2**31 are int64."""
    compiled = compile_and_check(lambda x: F.adaptive_avg_pool2d(x, (5, 5)),
                                 torch.randn(2, 3, 8, 9, device=device))
    assert "tl.int64) //" not in source(compiled) and "tl.cast(" not in source(compiled)
    wide = compile_and_check(lambda a: a + torch.arange(2**31 - 2, 2**31 + 2, device=a.device),
                             torch.zeros(4, dtype=torch.int64, device=device))
    assert "tl.cast(xindex, tl.int64)" in source(wide)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_a_half_norm_sums_in_float32_before_its_root(device, dtype):
    """(Summed in half, the squares of 300s overflowed to inf.)"""
    x = torch.full((2, 8), 300.0, dtype=dtype, device=device)
    compiled = compile_and_check(lambda x: torch.linalg.vector_norm(x, dim=1), x, atol=0, rtol=0)
    assert torch.isfinite(compiled(x)).all()


@pytest.mark.parametrize(("shape", "write"), [
    ((4, 5), lambda x: x.diagonal().zero_()),
    ((4, 5), lambda x: x.diagonal(1).add_(1)),
    ((4, 3, 4), lambda x: x.diagonal(-1, 0, 2).mul_(3)),
    ((4, 5), lambda x: x.t().diagonal().fill_(7)),
])
def test_writes_to_a_diagonal_are_compiled(device, shape, write):
    """(torch's decomposition of diagonal_scatter writes with copy_to, which functionalization
    made a diagonal_scatter again: such graphs ran as they came.)"""
    def fn(x):
        write(x)
        return x * 2

    x = torch.randn(shape, device=device)
    expected = x.clone()
    expected_out = fn(expected)
    compiled = compile_fx(make_fx(fn)(x.clone()), [x.clone()])
    out = compiled(x)
    torch.testing.assert_close(x, expected)
    torch.testing.assert_close(out, expected_out)
    assert counters["eager_graphs"] == 0 and counters["kernels"] >= 1


def test_a_written_input_has_its_version_counter_moved(device):
    """Kernels write through data pointers, which autograd does not see: a tensor saved for
    backward and then written by the compiled graph must fail backward as eager's does."""
    def mutate(x, y):
        x.mul_(2)
        return x.sum() + y.sum()
    x, y = torch.randn(3, device=device), torch.randn(3, device=device)
    compiled = compile_fx(torch.fx.symbolic_trace(mutate), [x.clone(), y])
    assert "def call(" in source(compiled)  # (generated, not the graph as it came)
    a = torch.randn(3, device=device, requires_grad=True)
    saved = (a * x).sum()  # saves x
    versions = x._version, y._version
    compiled(x, y)
    assert x._version > versions[0] and y._version == versions[1]
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        saved.backward()
    with torch.inference_mode():  # (inference tensors have no version counter)
        x = torch.ones(3, device=device)
        compiled = compile_fx(torch.fx.symbolic_trace(mutate), [x.clone(), y])
        torch.testing.assert_close(compiled(x, y), 6 + y.sum())
        torch.testing.assert_close(x, torch.full_like(x, 2))


@pytest.mark.parametrize("out_size", [(0,), (12,)])
def test_an_out_argument_of_another_size_is_resized_as_eager_does(device, out_size):
    """Eager resizes an `out=` tensor of another size; functionalized, the trace only copies
    into it (the kernel wrote past its storage): such a graph runs as it came."""
    def add_out(x, y, out):
        torch.add(x, y, out=out)
        return out * 2
    x, y = torch.randn(3, 4, device=device), torch.randn(3, 4, device=device)
    out = torch.empty(out_size, device=device)
    compiled = compile_fx(torch.fx.symbolic_trace(add_out), [x, y, torch.empty_like(out)])
    torch.testing.assert_close(compiled(x, y, out), (x + y) * 2)
    assert out.shape == (3, 4)
    torch.testing.assert_close(out, x + y)


def test_identical_reductions_returned_twice_are_two_tensors(device):
    """Lowering makes identical reductions one buffer; two outputs eager keeps apart are two
    tensors, and views of one value still alias."""
    def reductions(x):
        s = x.sum(1)
        return x.argmax(1), x.max(1).indices, s, x.sum(1, keepdim=True), s.view(2, -1)
    x = torch.randint(0, 3, (4, 5), device=device).float()
    a, b, s, kept, view = compile_and_check(reductions, x)(x)
    assert a.data_ptr() != b.data_ptr() and s.data_ptr() != kept.data_ptr()
    assert view.data_ptr() == s.data_ptr()


def test_dynamic_sizes_one_kernel_for_every_size(device):
    from fxtrace import make_fx

    def fn(x):
        return (x.softmax(-1) * 2).sum(0)
    gm = make_fx(fn, "symbolic")(torch.randn(4, 6, device=device))
    compiled = compile_fx(gm, [torch.randn(4, 6, device=device)])
    for shape in [(4, 6), (7, 9), (3, 33)]:
        x = torch.randn(*shape, device=device)
        torch.testing.assert_close(compiled(x), fn(x))
    assert len(compiled.versions) == 1 and counters["graphs"] == 1


def test_symbolic_rows_are_persistent_and_scanned_by_their_traced_size(device):
    """A row of symbolic length that was short when traced is reduced in one block (the
    block follows the length at launch, so longer rows are right too), and scanned."""
    def fn(x):
        return x.softmax(-1).cumsum(-1), x[:, -3:] * 2  # a negative start on a symbolic dim
    gm = torch.fx.symbolic_trace(fn)
    compiled = compile_fx(gm, [torch.randn(4, 6, device=device)])
    for shape in [(4, 6), (5, 7), (2, 3000), (3, 4)]:
        x = torch.randn(*shape, device=device)
        for got, want in zip(compiled(x), fn(x)):
            torch.testing.assert_close(got, want)
    assert len(compiled.versions) == 2 and counters["fallbacks"] == 0, dict(counters)
    assert "for roffset" not in source(compiled)


def test_static_graph_recompiles_symbolic_for_a_new_size(device):
    gm = torch.fx.symbolic_trace(lambda x: x.softmax(-1))
    compiled = compile_fx(gm, [torch.randn(4, 6, device=device)])
    for shape in [(4, 6), (5, 7), (2, 3)]:
        x = torch.randn(*shape, device=device)
        torch.testing.assert_close(compiled(x), x.softmax(-1))
    assert len(compiled.versions) == 2 and counters["graphs"] == 2


def _view_rows(x, n):
    return x.view(n, -1).sum(1)


def _unflatten_rows(x, n):
    return x.unflatten(0, (n, -1)).sum(0)


@pytest.mark.parametrize("fn", [_view_rows, _unflatten_rows])
def test_an_int_argument_of_zero_fails_the_guards_that_divide_by_it(device, fn):
    # n is any int once it changed: the guards `12 % n == 0` must not raise at n = 0, which
    # raises eager's error (from the trace of a version for it)
    x = torch.randn(12, device=device)
    compiled = compile_fx(torch.fx.symbolic_trace(fn), [x, 3])
    for n in (3, 4, 6):
        torch.testing.assert_close(compiled(x, n), fn(x, n))
    with pytest.raises(RuntimeError, match=r"\[0, -1\]"):
        compiled(x, 0)
    torch.testing.assert_close(compiled(x, 2), fn(x, 2))


def test_a_symbolic_bool_as_a_number_runs_as_aten(device):
    from fxtrace import make_fx

    x = torch.randn(9, device=device)
    gm = make_fx(lambda x: x * (x.shape[0] ** 0.5 > 2.5), tracing_mode="symbolic")(x)
    compiled = compile_fx(gm, [x])
    for n in (9, 4):
        y = torch.randn(n, device=device)
        torch.testing.assert_close(compiled(y), y * (n ** 0.5 > 2.5))


@pytest.mark.parametrize("norm", [lambda x: F.group_norm(x, 2), lambda x: F.instance_norm(x),
                                  lambda x: F.layer_norm(x, (x.shape[-1],))])
def test_norms_over_a_symbolic_size_divide_by_it_in_the_kernel(device, norm):
    # The count they divide by is `sym_float` of sizes: a kernel argument, converted there
    gm = torch.fx.symbolic_trace(norm)
    compiled = compile_fx(gm, [torch.randn(2, 4, 6, 6, device=device)])
    for shape in [(2, 4, 6, 6), (2, 4, 5, 7), (2, 4, 3, 6)]:
        x = torch.randn(*shape, device=device)
        torch.testing.assert_close(compiled(x), norm(x), atol=1e-5, rtol=1e-4)
    assert len(compiled.versions) == 2 and counters["eager_graphs"] == 0


def _interpolated_over_sizes(scale: float, mode: str, device: str):
    """`interpolate` by `scale`, compiled for one size and called with three."""
    def up(x):
        return F.interpolate(x, scale_factor=scale, mode=mode) * 2

    compiled = compile_fx(torch.fx.symbolic_trace(up), [torch.randn(1, 2, 4, 5, device=device)])
    for shape in [(1, 2, 4, 5), (1, 2, 7, 9), (1, 2, 6, 8)]:
        x = torch.randn(*shape, device=device)
        torch.testing.assert_close(compiled(x), up(x))
    return compiled


@pytest.mark.parametrize("scale, mode", [(2.0, "nearest"), (2.0, "bilinear"),
                                         (1.5, "bilinear"), (0.5, "nearest")])
def test_interpolate_by_a_scale_factor_over_symbolic_sizes_is_generated(device, scale, mode):
    """Nearest's source positions are indices times `s / (2.0 * s)`, a float of sizes: the
    wrapper computes it in Python, as eager does, and kernels take it as an argument. The
    size `floor(1.5 * s)` is `(3 * s) // 2`: float64 computes such a product exactly."""
    compiled = _interpolated_over_sizes(scale, mode, device)
    assert len(compiled.versions) == 2 and counters["eager_graphs"] == 0, dict(counters)
    if mode == "nearest":
        assert "hostf0 = " in source(compiled)


def test_fractional_powers_of_sizes_are_host_floats(device):
    """An attention scale of a symbolic head size (`d ** -0.5`, `d ** 0.5`, sdpa's default
    scale): a float the wrapper computes in Python, as eager does (a fractional power cannot
    be printed in a kernel; in the wrapper it was refused too, and the graph ran as aten)."""
    def fn(q):
        return (q / q.shape[-1] ** 0.5, q * q.shape[-1] ** -0.5,
                F.scaled_dot_product_attention(q, q, q))

    compiled = compile_fx(torch.fx.symbolic_trace(fn), [torch.randn(2, 3, 4, device=device)])
    for shape in [(2, 3, 4), (3, 5, 7), (4, 6, 16)]:
        q = torch.randn(*shape, device=device)
        got, want = compiled(q), fn(q)
        assert torch.equal(got[1], want[1])
        # (CUDA's eager divides by a number as a product with its reciprocal: an ulp off)
        assert device != "cpu" or torch.equal(got[0], want[0])
        torch.testing.assert_close(got[0], want[0])
        torch.testing.assert_close(got[2], want[2])
    assert len(compiled.versions) == 2 and counters["eager_graphs"] == 0, dict(counters)
    assert "hostf0 = " in source(compiled)


def test_a_float_modulo_of_sizes_is_a_host_float(device):
    """`(s1 / 2) % 1.5`: Python's float `%`, computed by the wrapper as the other host float
    operations are (it made the graph run as aten: 'cannot lower mod of floats')."""
    def fn(x):
        return x * ((x.shape[1] / 2) % 1.5), x * (x.shape[0] % (x.shape[1] * 0.3))

    compiled = compile_fx(torch.fx.symbolic_trace(fn), [torch.randn(3, 5, device=device)])
    for shape in [(3, 5), (4, 7), (6, 9)]:
        x = torch.randn(*shape, device=device)
        assert all(torch.equal(g, w) for g, w in zip(compiled(x), fn(x))), shape
    assert counters["eager_graphs"] == 0 and counters["kernels"] >= 1, dict(counters)
    assert " % " in source(compiled)


def test_sizes_computed_in_floats_are_generated(device):
    """`floor(1.7 * s)`: the wrapper and the kernels compute it as Python does, one float64
    product rounded once (more in test_symbolic_resampling.py)."""
    compiled = _interpolated_over_sizes(1.7, "nearest", device)
    assert len(compiled.versions) == 2 and counters["eager_graphs"] == 0, dict(counters)
    assert "tl.float64) * 1.7)" in source(compiled)


def test_arange_with_a_symbolic_step_is_generated(device):
    # (EmbeddingBag's offsets for 2-d input: arange(0, B * L, L))
    def offsets(a):
        return torch.arange(0, a.shape[0] * a.shape[1], a.shape[1], device=a.device) + a[:, 0]

    gm = torch.fx.symbolic_trace(offsets)
    compiled = compile_fx(gm, [torch.ones(3, 4, dtype=torch.int64, device=device)])
    for shape in [(3, 4), (5, 6), (7, 2)]:
        a = torch.randint(0, 100, shape, device=device)
        assert torch.equal(compiled(a), offsets(a))
    assert len(compiled.versions) == 2 and counters["fallbacks"] == 0


def test_requires_grad_runs_eagerly_with_right_gradients(device):
    w = torch.randn(6, 6, device=device, requires_grad=True)
    x = torch.randn(3, 6, device=device, requires_grad=True)
    gm = torch.fx.symbolic_trace(lambda x, w: (x @ w).softmax(-1).sum())
    compiled = compile_fx(gm, [x, w])
    out = compiled(x, w)
    out.backward()
    gx, gw = x.grad.clone(), w.grad.clone()
    x.grad = w.grad = None
    (x @ w).softmax(-1).sum().backward()
    torch.testing.assert_close(gx, x.grad)
    torch.testing.assert_close(gw, w.grad)
    assert counters["eager_graphs"] == 1 and counters["kernels"] == 0


def test_random_graph_without_grad_draws_as_with_grad(device):
    # Reentrant activation checkpointing runs the forward without grad and recomputes it
    # with grad from the same generator state: a dropout mask must be the same in both, or
    # the gradients are those of another mask than the output's.
    from torch.utils.checkpoint import checkpoint
    w = torch.randn(6, 6, device=device, requires_grad=True)
    gm = torch.fx.symbolic_trace(lambda x, w: F.dropout(x @ w, 0.5, training=True))
    x = torch.randn(3, 6, device=device)
    compiled = compile_fx(gm, [x, w])
    out = checkpoint(compiled, x, w, use_reentrant=True)
    out.sum().backward()
    kept = (out != 0).to(x.dtype)
    torch.testing.assert_close(w.grad, x.t() @ (kept * 2))
    # under inference mode nothing is recomputed with grad: the kernels run
    compiled.eager = lambda *args: pytest.fail("the graph ran as it came")
    with torch.inference_mode():
        assert compiled(x, w).shape == (3, 6)


def test_attention_without_dropout_runs_kernels_under_no_grad(device):
    # SDPA's aten ops are tagged as seeded (for their dropout); with dropout_p=0 (a model in
    # eval mode) they draw nothing, so `torch.no_grad()` with parameters that require grad
    # (the usual inference) runs the kernels, not the graph as it came.
    w = torch.randn(8, 8, device=device, requires_grad=True)
    gm = torch.fx.symbolic_trace(
        lambda x, w: F.scaled_dot_product_attention(x @ w, x, x, is_causal=True).relu())
    x = torch.randn(1, 2, 5, 8, device=device)
    compiled = compile_fx(gm, [x, w])
    assert not compiled.draws_random
    compiled.eager = lambda *args: pytest.fail("the graph ran as it came")
    with torch.no_grad():
        got = compiled(x, w)
        torch.testing.assert_close(got, gm(x, w), atol=1e-4, rtol=1e-4)
    # dropout on: still random, and so run as it came under no_grad with grad parameters
    gm = torch.fx.symbolic_trace(
        lambda x, w: F.scaled_dot_product_attention(x @ w, x, x, dropout_p=0.5).relu())
    compiled = compile_fx(gm, [x, w])
    with torch.no_grad():
        compiled(x, w)
        compiled(x, w)
    assert compiled.draws_random
    # said once and counted, as every graph run as it came is (it ran unseen, counted as
    # compiled)
    assert counters["eager_graphs"] == 1


def test_dump_folder(tmp_path, monkeypatch, device):
    from inductor_lite import config
    monkeypatch.setattr(config, "dump_dir", str(tmp_path))
    compile_and_check(lambda x: x.softmax(-1), torch.randn(4, 8, device=device))
    dumped = list(tmp_path.glob("*.py"))
    assert len(dumped) == 1
    text = dumped[0].read_text()
    assert "@triton.jit" in text and "def call(args):" in text


def test_a_damaged_module_in_the_cache_is_written_again(tmp_path, monkeypatch, device):
    """The cached module is used only when it is the source it stands for (a crash can leave a
    file cut short; an edited constant gave wrong results in every later process)."""
    from inductor_lite import config
    monkeypatch.setattr(config, "cache_dir", str(tmp_path))  # a str, as dump_dir takes
    fn = lambda x: x.softmax(-1) * 3  # noqa: E731
    compile_and_check(fn, torch.randn(4, 8, device=device))
    (module,) = (tmp_path / "modules").glob("g_*.py")
    module.write_text(module.read_text().replace("3", "5")[:-40])
    compile_and_check(fn, torch.randn(4, 8, device=device))


def test_threads_calling_a_graph_with_a_new_size_compile_one_version(device):
    """Tracing uses process-wide state (module hooks, modes), and Triton's interpreter patches
    `triton.language` while a kernel runs: threads compile and interpret one at a time."""
    import threading

    fn = lambda x: (x * 2 + 1).relu().sum(-1)  # noqa: E731
    compiled = compile_fx(torch.fx.symbolic_trace(fn), [torch.randn(4, 8, device=device)])
    x = torch.randn(5, 8, device=device)
    barrier, errors = threading.Barrier(4), []

    def work():
        barrier.wait()
        try:
            torch.testing.assert_close(compiled(x), fn(x))
        except Exception as error:  # reported below, with the others
            errors.append(error)
    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and len(compiled.versions) == 2


def test_view_output_of_an_input_with_a_storage_offset(device):
    gm = torch.fx.symbolic_trace(lambda x: x.t())
    compiled = compile_fx(gm, [torch.randn(4, 4, device=device)])
    x = torch.randn(8, 4, device=device)[2:6]
    torch.testing.assert_close(compiled(x), x.t())


def test_scalar_index_and_constant_stores(device):
    compile_and_check(lambda x, i: torch.index_select(x, 0, i), torch.randn(1, device=device),
                      torch.tensor([0], device=device))
    compile_and_check(lambda x: (x.sum(-1) * 0 + 2, torch.ones(3, device=x.device)),
                      torch.randn(3, 4, device=device))
    assert counters["kernels"] >= 2


def test_infinite_float_arguments_of_fallbacks(device):
    compile_and_check(lambda x: torch.linalg.vector_norm(x, float("-inf")) + 1,
                      torch.randn(6, device=device))


def test_in_place_writes_of_decompositions_are_functionalized(device):
    # Decompositions run beneath functionalization; tracing the trace again removes their writes.
    compile_and_check(lambda a, b, t: F.cosine_embedding_loss(a, b, t, reduction="none"),
                      torch.randn(5, 5, device=device), torch.randn(5, 5, device=device),
                      torch.tensor([1, -1, 1, 1, -1], device=device))
    assert counters["eager_graphs"] == 0 and counters["kernels"] >= 1


def test_instance_norm_updates_its_running_statistics(device):
    # instance_norm's decomposition writes the statistics through a prim view, which the
    # functionalizing re-trace reads as the aten view it equals.
    mean, var = torch.zeros(3, device=device), torch.ones(3, device=device)
    x = torch.randn(2, 3, 5, device=device)
    fn = lambda x, m, v: F.instance_norm(x, m, v, use_input_stats=True)  # noqa: E731
    compiled = compile_fx(torch.fx.symbolic_trace(fn), [x, mean, var])
    mean2, var2 = mean.clone(), var.clone()
    torch.testing.assert_close(compiled(x, mean, var), fn(x, mean2, var2))
    torch.testing.assert_close((mean, var), (mean2, var2))
    assert counters["eager_graphs"] == 0 and counters["fallbacks"] == 0


def test_a_fallback_writing_into_a_shared_buffer_is_not_lowered(device):
    # Lazy values read buffers when they are computed, which may be after such a write: a graph
    # that still has one (functionalization could not take it) is run eagerly instead.
    from fxtrace import make_fx
    from inductor_lite.lowering import GraphLowering, GraphLoweringError

    def fn(x, i, v):
        y = x * 2
        y.put_(i, v, accumulate=True)  # (no atomic add of halves) an aten call writing into y
        return y + 1, y * 3
    gm = make_fx(fn, "fake")(torch.randn(5, device=device).half(),
                             torch.tensor([1, 3], device=device),
                             torch.randn(2, device=device).half())
    with pytest.raises(GraphLoweringError, match="writes into its arguments"):
        GraphLowering(gm).run()


def test_runtime_asserts_are_checked_on_the_host(device):
    # `torch._check` of a number read from a 0-d CPU tensor: the graph's `_assert_scalar` runs
    # in the wrapper, before the kernel that takes the number, and raises as eager does
    from fxtrace import make_fx

    def fn(s, y):
        v = s.item()
        torch._check(v > 0)
        torch._check((v < 100) | (v == 200))
        return y * v
    y = torch.arange(4.0, device=device)
    gm = make_fx(fn, "fake")(torch.tensor(2.0), y)
    compiled = compile_fx(gm, [torch.tensor(2.0), y])
    assert counters["kernels"] == 1 and counters["fallbacks"] == 0
    assert source(compiled).count("_assert_scalar") == 2
    for v in (3.0, 200.0):
        torch.testing.assert_close(compiled(torch.tensor(v), y), fn(torch.tensor(v), y))
    for v in (-1.0, 150.0):
        with pytest.raises(RuntimeError):
            fn(torch.tensor(v), y)
        with pytest.raises(RuntimeError, match="Runtime assertion failed for expression"):
            compiled(torch.tensor(v), y)


def test_cross_entropy_gathers_inside_a_reduction_kernel(device):
    x, t = torch.randn(16, 5, device=device), torch.randint(0, 5, (16,), device=device)
    compile_and_check(lambda x, t: (F.cross_entropy(x, t, reduction="none"), F.cross_entropy(x, t)),
                      x, t, atol=1e-5)
    assert counters["fallbacks"] == 0


def test_data_dependent_graph_runs_as_it_came(device):
    # a select at a tensor's value, read as a number
    x, i = torch.randn(3, device=device), torch.tensor(1, device=device)
    gm = torch.fx.symbolic_trace(lambda x, i: torch.ops.aten.select.int(
        x, 0, torch.ops.aten._local_scalar_dense.default(i)))
    compiled = compile_fx(gm, [x, i])
    torch.testing.assert_close(compiled(x, i), x[1])
    assert counters["eager_graphs"] == 1


def test_take_by_a_0d_and_a_2d_index(device):
    """`take` is an index of the flattened tensor (torch's decomposition read a 0-d index as a
    number, which made the whole graph eager)."""
    x, i = torch.randn((), device=device), torch.tensor(-1, device=device)
    gm = make_fx(lambda x, i: torch.take(x, i))(x, i)
    torch.testing.assert_close(compile_fx(gm, [x, i])(x, i), torch.take(x, i))
    compile_and_check(lambda x, i: torch.take(x.t(), i), torch.randn(3, 4, device=device),
                      torch.tensor([[0, 11], [-1, 5]], device=device))
    assert counters["fallbacks"] == 0 and counters["eager_graphs"] == 0


def test_index_select_of_a_0d_tensor(device):
    # read as one of one element; the result is 0-d for a 0-d or a one-element index
    x = torch.tensor(3.0, device=device)
    for i in (torch.tensor([0], device=device), torch.tensor(0, device=device)):
        compile_and_check(lambda x, i: torch.index_select(x, 0, i) * 2, x, i)
    assert counters["fallbacks"] == 0


def test_functional_rms_norm_is_one_kernel(device):
    # torch's rms_norm updates a temporary in place (mean.add_(eps)); that is lowered as add.
    w = torch.randn(64, device=device)
    compile_and_check(lambda x: F.rms_norm(x, (64,), w, eps=1e-6), torch.randn(16, 64, device=device))
    assert counters["kernels"] == 1 and counters["eager_graphs"] == 0


def test_symbolic_sizes_divided(device):
    from fxtrace import make_fx

    def fn(x):
        return x.view(x.shape[0], 2, x.shape[1] // 2).sum(-1)
    gm = make_fx(fn, "symbolic")(torch.randn(4, 8, device=device))
    compiled = compile_fx(gm, [torch.randn(4, 8, device=device)])
    for shape in [(4, 8), (3, 10)]:
        x = torch.randn(*shape, device=device)
        torch.testing.assert_close(compiled(x), fn(x))


def test_reads_through_a_reshape_fuse(device):
    # (2, 16, 64) -> (32, 64): the normalised rows are the same elements the reduction saw.
    w = torch.randn(64, device=device)

    def fn(x):
        return F.layer_norm(x + 1, (64,), w).view(32, 64) @ w.unsqueeze(1)
    compile_and_check(fn, torch.randn(2, 16, 64, device=device), atol=1e-4)
    assert counters["kernels"] == 1 and counters["extern_calls"] == 1


# -- what the guards check: a version runs only on inputs like those it was traced for ---------

def test_a_symbolic_version_is_not_run_on_other_strides(device):
    fn = lambda x: (x * 2 + 1).sum(-1)  # noqa: E731
    compiled = compile_and_check(fn, torch.randn(4, 6, device=device))
    compiled(torch.randn(5, 7, device=device))  # sizes are symbols from now on
    for x in (torch.randn(9, 8, device=device).t(), torch.randn(8, 9, device=device)[:, :5]):
        torch.testing.assert_close(compiled(x), fn(x))
    assert len(compiled.versions) == 4


def test_a_stride_that_changes_alone_becomes_a_kernel_argument(device):
    # `ids[:, -2:]` of a growing batch of sequences: the same sizes, a new stride(0) each call
    fn = lambda x: (x * 2 + 1).sum(-1)  # noqa: E731
    compiled = compile_and_check(fn, torch.randn(3, 5, device=device)[:, -2:])
    for width in range(6, 10):
        x = torch.randn(3, width, device=device)[:, -2:]
        torch.testing.assert_close(compiled(x), fn(x))
    assert len(compiled.versions) == 2 and counters["eager_graphs"] == 0
    assert ".stride(0)" in source(compiled) and "(3,)" in source(compiled)  # sizes stay static


def test_a_new_dtype_compiles_another_version_and_requires_grad_runs_as_it_came(device):
    fn = lambda x: x.softmax(-1)  # noqa: E731
    compiled = compile_and_check(fn, torch.randn(4, 6, device=device))
    x = torch.randn(4, 6, device=device, dtype=torch.float64)
    torch.testing.assert_close(compiled(x), fn(x))
    x = torch.randn(4, 6, device=device, requires_grad=True)
    compiled(x)[:, 0].sum().backward()
    assert x.grad is not None and len(compiled.versions) == 2
    assert counters["eager_graphs"] == 1


def test_only_the_sizes_that_change_become_symbols(device):
    lin = torch.nn.Linear(8, 4).to(device)
    gm = torch.fx.symbolic_trace(torch.nn.Sequential(lin, torch.nn.ReLU()))
    with torch.no_grad():
        compiled = compile_fx(gm, [torch.randn(2, 8, device=device)])
        for rows in (3, 5, 9):
            x = torch.randn(rows, 8, device=device)
            torch.testing.assert_close(compiled(x), lin(x).relu())
        assert len(compiled.versions) == 2
    # The batch dim is a symbol; the features and the weight stay static.
    assert "s0 = arg2.size(0)" in source(compiled) and "s1" not in source(compiled)
    assert "xnumel=4*s0" in source(compiled)


# -- CNNs: batch norm and pooling ------------------------------------------------------------

def _cnn(device):
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
        torch.nn.MaxPool2d(2), torch.nn.Conv2d(8, 8, 3, padding=1), torch.nn.BatchNorm2d(8),
        torch.nn.ReLU(), torch.nn.AvgPool2d(2), torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(),
        torch.nn.Linear(8, 4)).to(device)


def test_cnn_in_eval_mode_is_two_kernels_and_three_library_calls(device):
    model = _cnn(device).eval()
    x = torch.randn(2, 3, 16, 16, device=device)
    with torch.no_grad():
        compiled = compile_fx(torch.fx.symbolic_trace(model), [x])
        torch.testing.assert_close(compiled(x), model(x), atol=1e-5, rtol=1e-5)
    # conv, then batch norm + relu + max pool; conv, then batch norm + relu + both pools; addmm
    assert counters["kernels"] == 2 and counters["extern_calls"] == 3
    assert counters["fallbacks"] == 0


def test_batch_norm_in_training_updates_the_running_statistics(device):
    import copy

    model = _cnn(device).train()
    twin = copy.deepcopy(model)
    x = torch.randn(4, 3, 8, 8, device=device)
    with torch.no_grad():
        compiled = compile_fx(torch.fx.symbolic_trace(model), [x])
        for _ in range(2):
            torch.testing.assert_close(compiled(x), twin(x), atol=1e-5, rtol=1e-5)
    for (name, ours), (_, eager) in zip(model.named_buffers(), twin.named_buffers()):
        torch.testing.assert_close(ours, eager, msg=name)
    assert counters["fallbacks"] == 0 and counters["eager_graphs"] == 0


@pytest.mark.parametrize("kwargs", [
    dict(kernel_size=3, stride=2, padding=1),
    dict(kernel_size=(2, 3), stride=(2, 1), dilation=(1, 2)),
    dict(kernel_size=3, stride=2, ceil_mode=True),
])
def test_max_pool_values_and_indices(device, kwargs):
    x = torch.randn(2, 3, 9, 7, device=device)
    x[0, 0, 0, 0] = float("nan")
    x[0, 1, :2, :2] = float("-inf")  # a window all -inf beside padding: a real tap's index
    compile_and_check(lambda x: F.max_pool2d(x, return_indices=True, **kwargs), x)
    assert counters["kernels"] == 1 and counters["fallbacks"] == 0


def test_max_pool_index_of_a_large_window(device):
    """The index is a chain over the window's taps (a running comparison nested each earlier
    tap's Value twice: a 5x5 window did not compile in minutes); ties keep the first maximum."""
    x = torch.randint(0, 3, (2, 2, 9, 8), device=device).float()
    x[0, 0, 4, 4] = x[1, 1, 0, 0] = float("nan")
    compile_and_check(lambda x: F.max_pool2d(x, 7, stride=2, padding=3, return_indices=True), x)
    assert counters["kernels"] == 1 and counters["fallbacks"] == 0


@pytest.mark.parametrize("kwargs", [
    dict(kernel_size=3, stride=2, padding=1),
    dict(kernel_size=3, stride=2, padding=1, count_include_pad=False, ceil_mode=True),
    dict(kernel_size=2, divisor_override=3),
])
def test_avg_pool(device, kwargs):
    compile_and_check(lambda x: F.avg_pool2d(x, **kwargs), torch.randn(2, 3, 9, 7, device=device))
    assert counters["kernels"] == 1 and counters["fallbacks"] == 0


@pytest.mark.parametrize("out", [(3, 3), (2, 4), (5, 5)])
@pytest.mark.parametrize("memory_format", [torch.contiguous_format, torch.channels_last])
def test_adaptive_avg_pool_over_symbolic_sizes_is_one_version(device, out, memory_format):
    """Each output's window is index arithmetic on the input's sizes, summed over the largest
    window (outputs larger than the input too): one kernel serves every size."""
    def pool(x):
        return F.adaptive_avg_pool2d(x, out) * 2

    def image(h, w):
        return torch.randn(2, 3, h, w, device=device).to(memory_format=memory_format)
    compiled = compile_fx(torch.fx.symbolic_trace(pool), [image(8, 9)])
    for h, w in [(8, 9), (7, 10), (10, 13), (3, 4), (2, 5)]:
        x = image(h, w)
        got, want = compiled(x), pool(x)
        torch.testing.assert_close(got, want)
        assert got.stride() == want.stride()
    assert len(compiled.versions) == 2 and counters["kernels"] == 2, dict(counters)
    assert counters["fallbacks"] == 0 and counters["eager_graphs"] == 0


@pytest.mark.parametrize("out", [(3, 3), (2, 4), (5, 5)])
@pytest.mark.parametrize("memory_format", [torch.contiguous_format, torch.channels_last])
def test_adaptive_max_pool_over_symbolic_sizes_is_one_version(device, out, memory_format):
    """Values and indices (the first maximum, or the last NaN, as eager's) over the largest
    window, the windows index arithmetic on the input's sizes: one kernel serves every size."""
    def pool(x):
        values, indices = F.adaptive_max_pool2d(x, out, return_indices=True)
        return values * 2, indices

    def image(h, w):  # few distinct values: ties in most windows, and NaNs in some
        x = torch.randint(0, 4, (2, 3, h, w), device=device).float()
        x.view(-1)[::7] = float("nan")
        return x.to(memory_format=memory_format)
    compiled = compile_fx(torch.fx.symbolic_trace(pool), [image(8, 9)])
    for h, w in [(8, 9), (7, 10), (10, 13), (3, 4), (2, 5)]:
        x = image(h, w)
        for got, want in zip(compiled(x), pool(x)):
            torch.testing.assert_close(got, want, equal_nan=True)
            assert got.stride() == want.stride()
    assert len(compiled.versions) == 2 and counters["kernels"] == 2, dict(counters)
    assert counters["fallbacks"] == 0 and counters["eager_graphs"] == 0


@pytest.mark.parametrize("pool, size, out", [
    (F.adaptive_max_pool1d, (9,), 4), (F.adaptive_max_pool3d, (5, 3, 6), (2, 4, 3)),
    (F.adaptive_avg_pool3d, (5, 3, 6), (2, 4, 3))])
def test_adaptive_pool_1d_and_3d(device, pool, size, out):
    """1-d pooling is the 2-d op over a row; 3-d pools the last three dims alike."""
    x = torch.randint(0, 4, (2, 3, *size), device=device).float()
    kwargs = {} if pool is F.adaptive_avg_pool3d else {"return_indices": True}
    compile_and_check(lambda x: pool(x, out, **kwargs), x)
    assert counters["kernels"] == 1 and counters["fallbacks"] == 0


@pytest.mark.parametrize("pool, size, out", [
    (F.adaptive_max_pool2d, (1, 1), (3, 2)), (F.adaptive_avg_pool2d, (1, 1), (2, 3)),
    (F.adaptive_max_pool3d, (1, 1, 1), (2, 1, 3)), (F.adaptive_max_pool1d, (1,), 3)])
def test_adaptive_pool_of_one_element_windows(device, pool, size, out):
    """An input of one element per plane: every window is that element, a reduction over one
    element (rnumel 1), which is the element itself (its argmax 0) in a pointwise kernel."""
    x = torch.randint(0, 4, (2, 3, *size), device=device).float()
    x[0, 0].view(-1)[0] = float("nan")
    kwargs = {} if pool is F.adaptive_avg_pool2d else {"return_indices": True}
    compile_and_check(lambda x: pool(x, out, **kwargs), x)
    assert counters["fallbacks"] == 0


def test_float_functions_with_edge_values(device):
    x = torch.tensor([0.0, -0.0, 1e-6, -0.3, 2.0, float("inf"), float("nan"), -7.0], device=device)
    y = torch.tensor([-1.0, 2.0, float("nan"), 0.0, -0.0, 3.0, 1.0, float("inf")], device=device)
    compile_and_check(lambda x, y: (torch.hypot(x, y), torch.fmax(x, y), torch.fmin(x, y),
                                    torch.copysign(x, y), torch.signbit(y), torch.sinh(x)), x, y)
    assert counters["kernels"] == 1 and counters["fallbacks"] == 0


def test_empty_tensors_through_reshapes(device):
    x = torch.randn(0, 3, device=device)
    compile_and_check(lambda x: (x.tile(2, 3) + 1, torch.ones_like(x).roll(1, 0), x.fliplr() * 2), x)


def test_sparse_inputs_run_the_graph_as_it_came(device):
    fn = lambda a, b: torch.sparse.mm(a, b) * 2  # noqa: E731
    a, b = torch.eye(4, device=device).to_sparse_csr(), torch.randn(4, 3, device=device)
    compiled = compile_fx(torch.fx.symbolic_trace(fn), [a, b])
    torch.testing.assert_close(compiled(a, b), fn(a, b))
    assert counters["eager_graphs"] == 1
    dense = torch.eye(4, device=device)
    torch.testing.assert_close(compiled(dense, b), fn(dense, b))  # another version: dense
    assert len(compiled.versions) == 2
    from fxtrace import make_fx  # an aten graph: its sparse placeholder's value has no strides

    traced = compile_fx(make_fx(fn)(a, b), [a, b])
    torch.testing.assert_close(traced(a, b), fn(a, b))


def test_meta_and_quantized_inputs_run_the_graph_as_it_came(device):
    """Kernels cannot run on meta tensors (Triton raised "0 active drivers"), and quantized
    ones have no meta tensors to trace with: both run the graph as it came, as sparse ones do;
    a version made for the device does not take a meta tensor (get_device() is -1 on both)."""
    fn = lambda a: a * 2 + 1  # noqa: E731
    compiled = compile_fx(torch.fx.symbolic_trace(fn), [torch.ones(3, device=device)])
    torch.testing.assert_close(compiled(torch.ones(3, device=device)), torch.full((3,), 3.0,
                                                                                   device=device))
    meta = compiled(torch.ones(3, device="meta"))
    assert meta.device.type == "meta" and meta.shape == (3,)
    quantized = torch.quantize_per_tensor(torch.randn(3), 0.1, 0, torch.quint8)
    dequantize = lambda q: q.dequantize() * 2  # noqa: E731
    compiled = compile_fx(torch.fx.symbolic_trace(dequantize), [quantized])
    torch.testing.assert_close(compiled(quantized), dequantize(quantized))


def test_meta_and_sparse_tensors_made_in_the_graph_run_it_as_it_came(device):
    """Only the inputs' kinds were checked: a meta tensor made in the graph reached the kernels
    (Triton's "0 active drivers"), a sparse output raised "Cannot access storage of Sparse"."""
    fns = [lambda a, i: (a + 1, torch.ones(3, device="meta") * 2),
           lambda a, i: a.to("meta") * 2,
           lambda a, i: torch.sparse_coo_tensor(i, a + 1, (4,)) * 2]
    from fxtrace import make_fx

    x, i = torch.randn(3, device=device), torch.tensor([[0, 1, 2]], device=device)
    for fn in fns:
        compiled = compile_fx(make_fx(fn)(x, i), [x, i])
        for got, want in zip(torch.utils._pytree.tree_leaves(compiled(x, i)),
                             torch.utils._pytree.tree_leaves(fn(x, i))):
            assert (got.device, got.layout, got.shape) == (want.device, want.layout, want.shape)
            if got.device.type != "meta":
                torch.testing.assert_close(got.to_dense(), want.to_dense())


def test_library_call_on_arguments_laid_out_as_traced(device):
    # GPT-2's attention: q, k, v are transposed views of one projection; the attention kernel's
    # output follows its query's layout, so its arguments must have the strides the trace saw
    # (a reshape of its output read as the traced strides gave wrong values).
    b, t, h, d = 2, 8, 4, 8
    w = torch.randn(h * d, h * d, device=device)

    def fn(x):
        q, k, v = (x * 0.5).split(h * d, dim=2)
        q, k, v = (y.view(b, t, h, d).transpose(1, 2) for y in (q, k, v))
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return out.transpose(1, 2).reshape(b, t, h * d) @ w
    compile_and_check(fn, torch.randn(b, t, 3 * h * d, device=device), atol=1e-4, rtol=1e-4)
    assert counters["fallbacks"] == 0


def test_with_strides_copies_only_a_result_laid_out_otherwise(device):
    from inductor_lite.runtime import with_strides

    t = torch.randn(4, 6, device=device)
    assert with_strides(t, (4, 6), (6, 1), t.dtype, "op") is t
    moved = with_strides(t.t().contiguous().t(), (4, 6), (6, 1), t.dtype, "op")
    assert moved.stride() == (6, 1) and torch.equal(moved, t)


def test_channels_last_cnn(device):
    # Convolutions on channels-last tensors return channels-last results; kernels reading them
    # must index them so.
    model = _cnn(device).eval().to(memory_format=torch.channels_last)
    with torch.no_grad():
        for x in (torch.randn(2, 3, 16, 16, device=device).to(memory_format=torch.channels_last),
                  torch.randn(2, 3, 16, 16, device=device)):
            compiled = compile_fx(torch.fx.symbolic_trace(model), [x])
            torch.testing.assert_close(compiled(x), model(x), atol=1e-5, rtol=1e-5)
        conv_relu = model[:3]  # its result keeps the convolution's layout, as in eager
        compiled = compile_fx(torch.fx.symbolic_trace(conv_relu), [x])
        assert compiled(x).stride() == conv_relu(x).stride()
    assert counters["fallbacks"] == 0 and counters["eager_graphs"] == 0


def test_a_float_read_from_a_scalar_tensor_is_a_guarded_constant(device):
    # As torch.compile(dynamic=True) passes layer norm's eps: a 0-d CPU tensor read with .item().
    fn = lambda x, eps: F.layer_norm(x, (8,), eps=eps.item())  # noqa: E731
    x = torch.randn(3, 8, device=device)
    compiled = compile_and_check(fn, x, torch.tensor(1e-5))
    assert counters["eager_graphs"] == 0 and counters["kernels"] == 1
    torch.testing.assert_close(compiled(x, torch.tensor(10.0)), fn(x, torch.tensor(10.0)))
    assert len(compiled.versions) == 2  # another value, another version


def test_a_float_read_from_a_cpu_input_is_a_kernel_argument(device):
    # torch.compile and dynamo pass a float argument that changed between calls as a 0-d
    # float64 CPU tensor read with .item(): the wrapper reads it on the host, and one kernel
    # serves every value (its sign of zero, NaN and infinities included).
    fn = lambda x, s: x * s.item() + 2 * s.item()  # noqa: E731
    x = torch.randn(3, 8, device=device)
    compiled = compile_and_check(fn, x, torch.tensor(2.5, dtype=torch.float64))
    assert counters["eager_graphs"] == 0 and counters["kernels"] == 1, dict(counters)
    assert "zuf0 = arg1.item()" in source(compiled)
    for value in (-0.0, 0.0, -3.25, float("nan"), float("inf"), 1e30):
        s = torch.tensor(value, dtype=torch.float64)
        torch.testing.assert_close(compiled(x, s), fn(x, s), equal_nan=True)
        assert torch.equal(compiled(x, s).signbit(), fn(x, s).signbit())
    assert len(compiled.versions) == 1 and counters["kernels"] == 1


def test_numbers_computed_from_0d_cpu_inputs_are_computed_on_the_host(device):
    # An optimizer's step size: 0-d CPU tensors (its step count) and what is computed from
    # them run as aten ops on the host, never in a kernel (on a GPU a kernel cannot touch CPU
    # memory); kernels take the numbers as arguments, read on the host. The step count is
    # updated in place, on the host too.
    def step(p, g, count):
        count.add_(1)
        size = 0.1 / (1 - 0.9 ** count)
        p.add_(g * (-size).item())
        return p * (count * 2)

    p, g = torch.randn(3, 8, device=device), torch.randn(3, 8, device=device)
    counter = torch.tensor(0.0)
    compiled = compile_fx(torch.fx.symbolic_trace(step), [p.clone(), g, counter.clone()])
    got_p, got_count = p.clone(), counter.clone()
    for _ in range(3):
        got = compiled(got_p, g, got_count)
        want = step(p, g, counter)
        torch.testing.assert_close(got, want)
    torch.testing.assert_close(got_p, p)
    assert got_count.item() == counter.item() == 3 and got_count.device.type == "cpu"
    assert len(compiled.versions) == 1 and counters["eager_graphs"] == 0
    assert counters["kernels"] >= 1 and counters["extern_calls"] >= 3


def test_kernels_compute_larger_values_made_from_host_values(device):
    # A value larger than 0-d made from a 0-d CPU input, read by an op on CPU tensors, is
    # computed in that op's kernel from the input's number (read on the host), not as aten
    # calls. (Eager cannot concatenate a CPU tensor with a GPU one: CPU kernels only.)
    if device != "cpu":
        pytest.skip("eager cannot concatenate a CPU tensor with a GPU one: CPU kernels only")
    fn = lambda x, s: torch.cat([x, s.reshape(1) * 2])  # noqa: E731
    compile_and_check(fn, torch.randn(5), torch.tensor(3.0))
    assert counters["kernels"] == 1 and counters["fallbacks"] == 0


def test_after_max_versions_the_graph_runs_as_it_came(device):
    from inductor_lite.compile_fx import MAX_VERSIONS

    fn = lambda x: x * 2  # noqa: E731
    dtypes = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64,
              torch.int32, torch.int16, torch.int8, torch.uint8, torch.float32, torch.int8]
    compiled = compile_and_check(fn, torch.ones(4, device=device))
    for dtype in dtypes:  # a version per dtype, until the limit
        x = torch.ones(4, device=device, dtype=dtype)
        torch.testing.assert_close(compiled(x), fn(x))
    assert len(compiled.versions) == MAX_VERSIONS + 1 and counters["eager_graphs"] == 1


# -- scans -------------------------------------------------------------------------------------

@pytest.mark.parametrize("fn,x", [
    (lambda x: x.cumsum(-1) * 2, torch.randn(4, 9)),
    (lambda x: x.cumsum(0), torch.randn(5, 7)),
    (lambda x: x.cumprod(1), torch.rand(3, 6, 4) + 0.5),
    (lambda m: m.long().cumsum(-1) - 1, torch.rand(2, 10) > 0.3),  # position ids from a mask
    (lambda x: x.cumsum(-1), torch.randn(4, 33).half()),
    (lambda x: x.cumsum(0), torch.tensor(3.0)),
    (lambda x: x.cumprod(1), torch.randn(4, 1)),
    (lambda x: (x * 2 + 1).cumsum(0), torch.randn(5, 5)),  # rows and columns alike
], ids=["last-dim", "first-dim", "cumprod", "mask", "half", "0-d", "one-long", "square"])
def test_scans_are_one_kernel(device, fn, x):
    # Half sums in another order (ours in fp32, in a tree) differ by an fp16 step of the running
    # sum (2 ** -7 at 8 to 16): measured 2026-11-26 against eager on an H200.
    tol = 1e-2 if x.dtype == torch.half else 1e-3
    compile_and_check(fn, x.to(device), atol=tol, rtol=tol)
    assert counters["kernels"] == 1 and counters["fallbacks"] == 0


def test_softmax_then_cumsum_is_one_kernel(device):
    # Top-p sampling's running probability mass: the scan reads the softmax of its own row.
    compile_and_check(lambda x: x.softmax(-1).cumsum(-1), torch.randn(3, 40, device=device))
    assert counters["kernels"] == 1 and counters["fallbacks"] == 0


def test_a_scan_over_long_rows_falls_back(device):
    compile_and_check(lambda x: x.cumsum(-1), torch.randn(2, 9000, device=device), atol=1e-3)
    assert counters["kernels"] == 0 and counters["fallbacks"] == 1


def test_float_and_bool_arguments_are_guarded_constants(device):
    fn = lambda x, s: x * s  # noqa: E731
    x = torch.randn(4, device=device)
    compiled = compile_and_check(fn, x, 2.0)
    torch.testing.assert_close(compiled(x, 3.0), fn(x, 3.0))  # not the version traced for 2.0

    g = lambda x, flag: x * flag + 1  # noqa: E731
    compiled = compile_and_check(g, x, True)
    torch.testing.assert_close(compiled(x, False), g(x, False))
    assert len(compiled.versions) == 2


# -- scatters ------------------------------------------------------------------------------------

def _aten_index_put(x, indices, v, accumulate=False):
    return torch.ops.aten.index_put(x, indices, v, accumulate)


@pytest.mark.parametrize("fn,args", [
    (lambda x, i, v: _aten_index_put(x, [i], v) * 2,
     (torch.randn(10), torch.tensor([1, 4, -3]), torch.randn(3))),
    (lambda x, i, v: _aten_index_put(x, [i], v, True),  # repeated indices add up
     (torch.randn(10), torch.tensor([1, 1, 7, -1]), torch.randn(4))),
    (lambda x, i, v: _aten_index_put(x, [i], v), (torch.randn(6, 4), torch.tensor([0, 5]),
                                                  torch.randn(2, 4))),
    (lambda x, i, j: _aten_index_put(x, [i, j], torch.tensor(9.0)),
     (torch.randn(6, 4), torch.tensor([0, 5]), torch.tensor([3, 1]))),
    (lambda x, i, v: _aten_index_put(x, [None, i], v), (torch.randn(3, 6, 2),
                                                        torch.tensor([4, 0]), torch.randn(3, 2, 2))),
    (lambda x, i, v: x.index_copy(1, i, v) + 1, (torch.randn(3, 5), torch.tensor([4, 0]),
                                                 torch.randn(3, 2))),
    (lambda x, i, v: x.index_add(0, i, v), (torch.randn(5, 3), torch.tensor([1, 1, 3]),
                                            torch.randn(3, 3))),
    (lambda x, i, v: _aten_index_put(x, [i], v, True), (torch.arange(6), torch.tensor([2, 2, 5]),
                                                        torch.tensor([1, 2, 3]))),
    (lambda x, i, s: x.scatter(1, i, s), (torch.randn(3, 5), torch.tensor([[4], [0], [2]]),
                                          torch.randn(3, 2))),
    (lambda x, i, s: x.scatter_add(0, i, s), (torch.zeros(4, 3), torch.tensor([[1, 1, 0],
                                                                              [1, 3, 0]]),
                                              torch.randn(2, 3))),
    (lambda x, w: torch.zeros_like(x @ w).scatter(1, (x @ w).argmax(-1, keepdim=True), 1.0),
     (torch.randn(5, 4), torch.randn(4, 3))),  # indices computed in the graph (top-1 routing)
], ids=["put", "accumulate", "rows", "two-indices", "middle-dim", "index_copy", "index_add",
        "int-accumulate", "scatter", "scatter_add", "computed-indices"])
def test_scatters_write_into_a_copy(device, fn, args):
    from fxtrace import make_fx

    args = tuple(a.to(device) for a in args)
    gm = make_fx(fn)(*args)
    compiled = compile_fx(gm, list(args))
    torch.testing.assert_close(compiled(*args), fn(*args))
    assert counters["kernels"] >= 2 and counters["fallbacks"] == 0
    assert counters["eager_graphs"] == 0


def test_equal_int_arguments_sharing_a_symbol_are_both_checked(device):
    # Ints that vary become symbols, each its own (no duck sizing): equal at the call that
    # made them symbols, they are not assumed equal, so a later call where they differ is
    # right and needs no other version.
    fn = lambda x, a, b: x * a + b  # noqa: E731
    x = torch.randn(4, device=device)
    compiled = compile_and_check(fn, x, 3, 3)
    torch.testing.assert_close(compiled(x, 4, 4), fn(x, 4, 4))
    torch.testing.assert_close(compiled(x, 5, 7), fn(x, 5, 7))
    assert len(compiled.versions) == 2


# -- regressions -------------------------------------------------------------------------------

def test_squared_symbolic_sizes_keep_their_parentheses(device):
    # An outer product's dims are one symbol: the padded numel is (s0 + 1)**2, printed as a
    # product.
    fn = lambda x: F.pad(torch.outer(x, x), (1, 0, 1, 0)) * 2  # noqa: E731
    compiled = compile_and_check(fn, torch.randn(3, device=device))
    x = torch.randn(5, device=device)
    torch.testing.assert_close(compiled(x), fn(x))
    assert "((s0 + 1) * (s0 + 1))" in source(compiled)


def test_values_read_before_an_input_is_written_keep_the_old_values(device):
    def fn(x, y):
        a = x + 1  # of the x before the write, computed lazily (one reader: the output)
        b = x.t() * 3
        x.mul_(2)
        y.add_(b)
        return a

    x, y = torch.randn(4, 4, device=device), torch.randn(4, 4, device=device)
    compiled = compile_fx(torch.fx.symbolic_trace(fn), [x.clone(), y.clone()])
    x2, y2 = x.clone(), y.clone()
    torch.testing.assert_close(compiled(x, y), fn(x2, y2))
    torch.testing.assert_close((x, y), (x2, y2))


def test_an_input_written_from_other_elements_of_itself(device):
    # Programs run one after another in the interpreter: each must read the old elements.
    def fn(x, y):
        x.copy_(x.flip(0))
        return y + 1

    x, y = torch.randn(5000, device=device), torch.randn(3, device=device)
    compiled = compile_fx(torch.fx.symbolic_trace(fn), [x.clone(), y])
    x2 = x.clone()
    torch.testing.assert_close(compiled(x, y), fn(x2, y))
    torch.testing.assert_close(x, x2)


def test_a_symbolic_size_one_by_a_guard_broadcasts(device):
    from fxtrace import make_fx

    def fn(x):
        return x.reshape(4, -1).expand(4, 3) * 2  # (4, s0 // 4) with s0 // 4 == 1 guarded
    x = torch.arange(4.0, device=device)
    compiled = compile_fx(make_fx(fn, "symbolic")(x), [x])
    torch.testing.assert_close(compiled(x), fn(x))


def test_an_input_written_while_another_shares_its_memory(device):
    def fn(a, b):
        a.add_(1)
        return b.sum()

    compiled = compile_fx(torch.fx.symbolic_trace(fn), [torch.zeros(4, device=device),
                                                        torch.zeros(3, device=device)])
    base = torch.zeros(4, device=device)
    assert compiled(base, base[1:]).item() == 3.0  # b is a view of a: runs as it came
    assert compiled(torch.zeros(4, device=device), torch.zeros(3, device=device)).item() == 0.0
    assert len(compiled.versions) == 2 and counters["eager_graphs"] == 1


def test_as_strided_of_an_input_with_another_storage_offset(device):
    fn = lambda x: torch.as_strided(x, (2, 2), (1, 2), 1) * 10  # noqa: E731
    compiled = compile_and_check(fn, torch.arange(8.0, device=device)[:6])
    x = torch.arange(8.0, device=device)[2:]  # the same sizes and strides, offset 2
    torch.testing.assert_close(compiled(x), fn(x))


def test_bool_sums_and_products_do_not_wrap(device):
    a = torch.tensor([True, False, True, False], device=device)
    b = torch.tensor([True, True, False, False], device=device)
    compile_and_check(lambda a, b: (a + b, a * b), a, b)


def test_relu_and_round_edge_values(device):
    x = torch.tensor([float("nan"), -1.0, 2.0, 8388609.0, 8388611.0, 2.5, -0.5, -2.5, 0.49999997,
                      -0.3, 1e30, float("-inf")], device=device)
    compiled = compile_and_check(lambda x: (torch.relu(x), torch.round(x)), x)
    assert torch.equal(torch.round(x).signbit(), compiled(x)[1].signbit())  # -0.0 stays


def test_atan2_pow_and_atan_edge_values(device):
    inf, nan = float("inf"), float("nan")
    y = torch.tensor([-0.0, 0.0, 0.0, -0.0, inf, inf, -inf, 1.0, 1.0, -1.0, 2.0, nan], device=device)
    x = torch.tensor([-1.0, -0.0, 0.0, 0.0, inf, -inf, 3.0, inf, -inf, -inf, 0.0, 1.0], device=device)
    a = torch.tensor([1.0, 1.0, 1.0, -1.0, -1.0, -1.0, -0.0, -0.0, -2.0, -0.5, nan, -8.0],
                     device=device)
    b = torch.tensor([nan, inf, -inf, inf, -inf, nan, -1.0, -2.0, inf, inf, 0.0, 1 / 3],
                     device=device)
    compiled = compile_and_check(lambda y, x, a, b: (torch.atan2(y, x), torch.pow(a, b),
                                                     torch.atan(x * y)), y, x, a, b)
    assert torch.equal(compiled(y, x, a, b)[0].signbit(), torch.atan2(y, x).signbit())


def test_zeros_keep_their_sign_through_negation_and_odd_functions(device):
    """Triton negates a float as 0 - x (and reads a -0.0 literal so): kernels multiply by -1."""
    x = torch.tensor([0.0, -0.0, 1.5, -2.0], device=device)
    fns = lambda x: (-x, torch.tanh(x), torch.asinh(x), x ** 3, x * -0.0, -(x * x))  # noqa: E731
    compiled = compile_and_check(fns, x)
    for got, want in zip(compiled(x), fns(x)):
        assert torch.equal(got.signbit(), want.signbit()), (got, want)


def test_floor_ceil_trunc_round_of_integers(device):
    i = torch.tensor([-3, 0, 7], device=device)
    compile_and_check(lambda i: (i.floor(), i.ceil(), i.trunc(), i.round()), i)


def test_parameters_requiring_grad_run_eagerly(device):
    model = torch.nn.LayerNorm(3).to(device)
    x = torch.randn(4, 3, device=device)
    compiled = compile_fx(torch.fx.symbolic_trace(model), [x])
    out = compiled(x)
    assert out.requires_grad
    out.sum().backward()
    grad = model.weight.grad.clone()
    model.weight.grad = None
    model(x).sum().backward()
    torch.testing.assert_close(grad, model.weight.grad)
    with torch.no_grad():  # another version: grad mode decides
        assert not compiled(x).requires_grad


def test_negative_zero_and_nan_constants_are_guarded_exactly(device):
    fn = lambda a, s: 1 / (a * s)  # noqa: E731
    a = torch.ones(2, device=device)
    compiled = compile_and_check(fn, a, 0.0)
    torch.testing.assert_close(compiled(a, -0.0), fn(a, -0.0))
    compiled = compile_and_check(fn, a, float("nan"))
    compiled(a, float("nan"))
    assert len(compiled.versions) == 1  # NaN is the same constant

    g = lambda x, eps: x / eps.item()  # noqa: E731
    compiled = compile_and_check(g, a, torch.tensor(0.0))
    torch.testing.assert_close(compiled(a, torch.tensor(-0.0)), g(a, torch.tensor(-0.0)))


def test_a_load_whose_index_simplifies_to_one_element(device):
    # Every element the slice reads has column 0 of w: the load of w is one address.
    fn = lambda x, w: (x * w).reshape(2, 4)[:, ::2]  # noqa: E731
    compile_and_check(fn, torch.randn(4, 2, device=device), torch.randn(2, device=device))


def test_int_scalars_outside_the_dtype_wrap_as_in_eager(device):
    u = torch.tensor([0, 100, 255], device=device, dtype=torch.uint8)
    i8 = torch.tensor([0, 100, -100], device=device, dtype=torch.int8)
    i32 = torch.tensor([1, 3], device=device, dtype=torch.int32)
    compile_and_check(lambda u: (u * -1, u > -1, u == -1, u > 256), u)
    compile_and_check(lambda i: (i + 200, i < 200, i > -200), i8)
    compile_and_check(lambda i: (i * 2**33, i == 2**32 + 1), i32)


def test_log1p_and_expm1_keep_their_precision_near_zero(device):
    inf = float("inf")
    x = torch.tensor([1e-8, -1e-8, 1e-4, 0.5, -0.5, 3.0, -0.9999, 0.0, -0.0, 80.0, -80.0, inf,
                      -inf, float("nan"), -1.0], device=device)
    compile_and_check(lambda x: (torch.log1p(x), torch.expm1(x)), x, atol=0, rtol=1e-6)


def test_index_printer_writes_max_and_min_as_integer_arithmetic():
    import sympy

    from inductor_lite.triton_codegen import IndexPrinter

    a, b = sympy.symbols("a b", integer=True)
    for expr in (sympy.Max(a, 1), sympy.Min(a, b, 3), 2 * sympy.Max(a, b) + (a + 1) ** 2):
        text = IndexPrinter({}).doprint(expr)
        for va in range(-3, 4):
            for vb in range(-3, 4):
                assert eval(text, {"a": va, "b": vb}) == expr.subs({a: va, b: vb}), text


def test_bfloat16_results_round_to_nearest(device):
    x = torch.tensor([9.1, 0.1, -3.3, 1.0, float("inf"), float("nan"), 3.4e38], device=device)
    compile_and_check(lambda a: (a.bfloat16(), a.bfloat16().exp()), x, atol=0, rtol=0)


def test_a_returned_view_of_a_written_input_stays_a_view(device):
    def g(y):
        y.add_(1)
        return y[0]

    y = torch.zeros(2, 2, device=device)
    view = compile_fx(torch.fx.symbolic_trace(g), [y.clone()])(y)
    view.fill_(7)  # reaches y, as through eager's view
    assert y.tolist() == [[7.0, 7.0], [1.0, 1.0]]


def test_a_written_input_returned_runs_generated_kernels(device):
    """`a.mul_(2); return a` (what torch.compile hands over for an in-place method that returns
    its input): the outputs come back as views of the input, computed by kernels."""
    def f(a):
        a.mul_(2)
        return a, a[1:].t()

    x = torch.randn(6, 5, device=device).t()  # not contiguous
    expected_in = x.clone()
    expected = f(expected_in)
    compiled = compile_fx(torch.fx.symbolic_trace(f), [x.clone()])
    out = compiled(x)
    torch.testing.assert_close(x, expected_in)
    for got, want in zip(out, expected):
        torch.testing.assert_close(got, want)
        assert got.stride() == want.stride() and got.data_ptr() == want.data_ptr() - \
            expected_in.data_ptr() + x.data_ptr()
    assert counters["eager_graphs"] == 0 and counters["kernels"] == 1, dict(counters)


def test_sizes_with_max_in_kernels_and_library_calls_leaving_out_an_output(device):
    import torch._dynamo

    def f(x, w):
        y = x[:, 8:]  # (2, s - 8): the bmm's strides hold Max(1, s - 8)
        z = torch.bmm(w, y.unsqueeze(0).expand(3, -1, -1))
        return z.transpose(0, 1).reshape(3, -1) + 1

    torch._dynamo.reset()
    x, w = torch.randn(2, 12, device=device), torch.randn(3, 1, 2, device=device)
    compiled = torch.compile(f, backend="inductor_lite", dynamic=True)
    torch.testing.assert_close(compiled(x, w), f(x, w))

    att = torch.nn.MultiheadAttention(8, 2, batch_first=True).eval().requires_grad_(False).to(device)

    def mha(x, w_in, b_in, w_out, b_out):  # its second output (the weights) is None
        return torch._native_multi_head_attention(x, x, x, 8, 2, w_in, b_in, w_out, b_out,
                                                  None, False)[0] + 1

    args = [torch.randn(2, 5, 8, device=device), att.in_proj_weight, att.in_proj_bias,
            att.out_proj.weight, att.out_proj.bias]
    compile_and_check(mha, *args)


def test_var_and_std_with_a_correction_above_the_count_are_infinite(device):
    # eager's divisor is max(N - correction, 0)
    compile_and_check(lambda a: (a.var(0, correction=5), a.std(1, correction=7)),
                      torch.randn(4, 6, device=device))


def test_a_fractional_correction_over_a_symbolic_count(device):
    # the divisor N - 1.5 (it was N - 1: the correction's fraction dropped)
    def spread(a):
        return a.var(1, correction=1.5), a.std(1, correction=0.5), a.var(1, correction=8.5)

    compiled = compile_fx(torch.fx.symbolic_trace(spread), [torch.randn(3, 5, device=device)])
    for shape in [(3, 5), (3, 7), (2, 9)]:
        a = torch.randn(*shape, device=device)
        for got, want in zip(compiled(a), spread(a)):
            torch.testing.assert_close(got, want, equal_nan=True)


@pytest.mark.parametrize("name", ["s**2", "s**0.5", "2**s", "s**-1", "int(s)", "floor(s)",
                                  "(s-1)/(s+1)"])
def test_numbers_computed_from_a_changing_float_argument(device, name):
    """A float argument seen to change is a symbol read on the host; what the graph computes
    from it is a kernel argument expression where kernels can write it (whole powers, sums,
    products, quotients), else the graph runs as its aten graph: never a failure."""
    import math

    import torch._dynamo

    numbers = {"s**2": lambda s: s ** 2, "s**0.5": lambda s: s ** 0.5, "2**s": lambda s: 2 ** s,
               "s**-1": lambda s: s ** -1, "int(s)": int, "floor(s)": math.floor,
               "(s-1)/(s+1)": lambda s: (s - 1) / (s + 1)}[name]

    def f(x, s):
        return x * numbers(s) + s

    torch._dynamo.reset()
    compiled = torch.compile(f, backend="inductor_lite")
    x = torch.randn(4, 5, device=device)
    for s in (0.5, 1.5, 2.75):  # (torch.compile's own tracing fails on a negative s ** 2)
        torch.testing.assert_close(compiled(x, s), f(x, s))


def test_a_quotient_of_a_changing_float_argument_is_generated(device):
    """`1 / s` and `20.0 / s` are FloatTrueDiv (fakecore's, torch's): printed as a division in
    the kernel's argument expression (they made the graph run as its aten graph)."""
    import torch._dynamo

    def f(x, s):
        return x * (1 / s) + F.softplus(x, beta=s, threshold=20.0 / s)

    torch._dynamo.reset()
    compiled = torch.compile(f, backend="inductor_lite")
    x = torch.randn(4, 5, device=device) * 5
    for s in (0.5, 1.5, -2.75):
        torch.testing.assert_close(compiled(x, s), f(x, s))
    assert counters["eager_graphs"] == 0 and counters["graphs"] == 2


def test_a_pad_the_graph_computes_from_a_symbolic_size(device):
    """A pad amount computed from a dynamic size (as HF models pad a mask to a length) is a
    size expression, one kernel for every size."""
    import torch._dynamo

    def f(x):
        return F.pad(x * 2, (0, 16 - x.shape[-1])) + 1

    torch._dynamo.reset()
    compiled = torch.compile(f, backend="inductor_lite", dynamic=True)
    for n in (5, 7):
        x = torch.randn(3, n, device=device)
        torch.testing.assert_close(compiled(x), f(x))
    assert counters["kernels"] == 1 and counters["fallbacks"] == 0


def test_graphs_autograd_must_see_run_as_they_came(device):
    import torch._dynamo

    def no_grad_inside(x):
        with torch.no_grad():
            y = x * 2
        return y + x

    def detached(x):
        return x * x.detach()

    def asks(x):
        x.requires_grad_()
        return (x * x).sum()

    for fn in (no_grad_inside, detached):
        torch._dynamo.reset()
        x = torch.tensor([1.0, 2.0, 3.0], device=device, requires_grad=True)
        torch.compile(fn, backend="inductor_lite")(x).sum().backward()
        got, x.grad = x.grad, None
        fn(x).sum().backward()
        torch.testing.assert_close(got, x.grad)
    torch._dynamo.reset()
    x = torch.ones(3, device=device)
    assert torch.compile(asks, backend="inductor_lite")(x).requires_grad and x.requires_grad


def _grad_switching_update(leave_grad_on: bool) -> torch.fx.GraphModule:
    """An optimizer step's graph: grad turned off, a parameter updated in place."""
    graph = torch.fx.Graph()
    p, g = graph.placeholder("p"), graph.placeholder("g")
    graph.call_function(torch._C._set_grad_enabled, (False,))
    graph.call_method("add_", (p, g), {"alpha": -0.5})
    if leave_grad_on:
        graph.call_function(torch._C._set_grad_enabled, (True,))
    graph.output(())
    return torch.fx.GraphModule(torch.nn.Module(), graph)


@pytest.mark.parametrize("leave_grad_on", [True, False])
def test_a_graph_that_turns_grad_off_before_its_ops_is_compiled(device, leave_grad_on):
    """Parameters require grad, but no op runs with grad on: autograd sees nothing, so the
    graph gets kernels; they run without grad (in-place writes into leaves), and the grad mode
    is left as the graph's switches leave it."""
    param = torch.nn.Parameter(torch.ones(6, device=device))
    grad = torch.arange(6.0, device=device)
    counters.clear()
    compiled = compile_fx(_grad_switching_update(leave_grad_on), [param, grad])
    try:
        compiled(param, grad)
        assert torch.is_grad_enabled() is leave_grad_on
    finally:
        torch._C._set_grad_enabled(True)
    torch.testing.assert_close(param.detach(), 1 - 0.5 * grad)
    assert counters["kernels"] >= 1 and counters["eager_graphs"] == 0


# -- out-of-range indices: an error, never a read or write outside a tensor -------------------

@pytest.mark.parametrize("fn,good,bad", [
    (lambda a, i: a[i] * 2, [0, 1], [0, 7]),
    (lambda a, i: a[i] * 2, [0, -1], [0, -6]),  # below -size after wrapping
    (lambda a, i: F.embedding(i, a) * 2, [0, 1], [0, 50]),
    (lambda a, i: a.gather(0, i.view(1, 2).expand(1, 2)), [0, 1], [9, 2]),
    (lambda a, i: a.index_select(1, i).sum(1), [0, 2], [0, 3]),  # read inside a reduction
    (lambda a, i: torch.ops.aten.index_put(a, [i], torch.tensor(1.0)), [0, 1], [0, 6]),
    (lambda a, i: a.scatter(0, i.view(1, 2), 7.0), [0, 1], [8, 2]),
    (lambda a, i: a.index_put_((i,), torch.tensor(1.0)), [0, 1], [0, 40]),  # into the input
    # Negative indices count from the end in `x[i]`; for these ops eager raises
    (lambda a, i: a.gather(0, i.view(1, 2).expand(1, 2)), [0, 1], [-1, 0]),
    (lambda a, i: a.scatter_add(0, i.view(1, 2), torch.ones(1, 2)), [0, 1], [0, -1]),
    (lambda a, i: a.index_select(0, i), [0, 1], [-1, 0]),
    (lambda a, i: F.embedding(i, a), [0, 1], [0, -2]),
    # (their decompositions are `index_put`s, which count a negative index from the end)
    (lambda a, i: a.index_add(0, i, torch.ones(2, 3)), [0, 1], [0, -1]),
    (lambda a, i: a.index_copy(0, i, torch.ones(2, 3)), [0, 1], [-1, 0]),
], ids=["index", "negative", "embedding", "gather", "in-reduction", "index_put", "scatter",
        "index_put_", "gather-negative", "scatter-negative", "index_select-negative",
        "embedding-negative", "index_add-negative", "index_copy-negative"])
def test_out_of_range_indices_raise_and_touch_no_memory(fn, good, bad):
    from inductor_lite import config

    if not config.triton_on_cpu:
        pytest.skip("bounds are checked for sure only by Triton's interpreter")
    base = torch.zeros(20, 3)
    a = base[5:10]  # addresses outside `a` are still inside `base`
    compiled = compile_fx(torch.fx.symbolic_trace(fn), [a.clone(), torch.tensor(good)])
    with pytest.raises(IndexError, match="index out of bounds"):
        compiled(a, torch.tensor(bad))
    assert not base.any(), "memory outside the indexed tensor was written"
    assert "helpers.check_index" in source(compiled)
    torch.testing.assert_close(compiled(a, torch.tensor(good)), fn(a.clone(), torch.tensor(good)))


def test_index_fill_counts_a_negative_index_from_the_end(device):
    # its decomposition is an `index_copy`, which eager (and so the kernels) refuse it for
    fn = lambda a, i: a.index_fill(1, i, -3.0) * 2  # noqa: E731
    a = torch.randn(4, 5, device=device)
    compile_and_check(fn, a, torch.tensor([0, -1], device=device))
    if device == "cpu":  # (bounds are checked for sure only by Triton's interpreter)
        compiled = compile_fx(torch.fx.symbolic_trace(fn), [a, torch.tensor([0, -1])])
        with pytest.raises(IndexError):
            compiled(a, torch.tensor([-6]))


def test_bernoulli_of_a_probability_outside_0_1_runs_as_its_aten_call(device):
    # eager refuses it; `rand < p` would draw all ones (or all zeros) without a word
    x = torch.zeros(4, device=device)
    def draw(p):
        return lambda t: t.bernoulli(p) + 1

    for p in (1.5, -0.5, float("nan")):
        compiled = compile_fx(torch.fx.symbolic_trace(draw(p)), [x])
        with pytest.raises(RuntimeError, match="bernoulli"):
            compiled(x)
    counters.clear()
    compile_and_check(lambda t: t.bernoulli(1.0) + 1, x)
    assert counters["fallbacks"] == 0


def test_indices_read_under_a_cat_are_read_only_where_the_cat_reads(device):
    # In the rows that come from `b`, the index tensor's own addresses are out of range: they
    # must be neither read nor checked.
    fn = lambda a, i, b: torch.cat([b, a[i] + 1]) * 2  # noqa: E731
    a, b = torch.randn(5, 3, device=device), torch.randn(4, 3, device=device)
    compile_and_check(fn, a, torch.tensor([4, -1], device=device), b)
    assert counters["fallbacks"] == 0


# -- outputs that alias inputs -------------------------------------------------------------------

def _fill_first_column(x):
    x.select(1, 0).fill_(5.0)  # x[:, 0] = 5, written through a view
    return x


def _write_row_return_column(x):
    x[0].add_(1)
    return x[:, 0]


@pytest.mark.parametrize("fn", [
    _fill_first_column, lambda x: x[1:].mul_(3), lambda x: x.t().add_(1),
    _write_row_return_column, lambda x: x.view(12)[3:].add_(1),
], ids=["returned-input", "slice", "transpose", "other-view", "view-of-view"])
def test_views_of_inputs_written_through_a_view_are_returned_as_views(device, fn):
    x = torch.randn(3, 4, device=device)
    x_eager = x.clone()
    want = fn(x_eager)
    got = compile_fx(torch.fx.symbolic_trace(fn), [x.clone()])(x)
    torch.testing.assert_close(x, x_eager)
    torch.testing.assert_close(got, want)
    assert got.stride() == want.stride()
    assert got.data_ptr() - x.data_ptr() == want.data_ptr() - x_eager.data_ptr()
    got.add_(100)  # a later write through the output reaches the input, as in eager
    want.add_(100)
    torch.testing.assert_close(x, x_eager)
    assert counters["eager_graphs"] == 0, dict(counters)


def test_a_torch_compiled_setitem_returns_its_input(device):
    import torch._dynamo

    def f(x):
        x[:, 0] = 5.0
        return x

    torch._dynamo.reset()
    x = torch.randn(3, 4, device=device)
    assert torch.compile(f, backend="inductor_lite", fullgraph=True)(x) is x
    assert (x[:, 0] == 5).all()


@pytest.mark.parametrize("fn", [
    lambda x: x.detach(), lambda x: x.view(torch.int32), lambda x: torch.ops.aten.alias(x),
    lambda x: x.t().detach(),
], ids=["detach", "view-dtype", "alias", "detach-of-view"])
def test_aliases_of_inputs_are_returned_as_views(device, fn):
    from fxtrace import make_fx

    x = torch.randn(3, 4, device=device)
    want = fn(x)
    got = compile_fx(make_fx(fn)(x.clone()), [x.clone()])(x)
    assert torch.equal(got, want) and got.stride() == want.stride()
    assert got.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
    assert counters["eager_graphs"] == 0 and counters["kernels"] == 0, dict(counters)


@pytest.mark.parametrize("fn", [
    lambda x: x.unsqueeze_(0), lambda x: x.t_(), lambda x: x.transpose_(0, 1) * 2,
    lambda x: x.resize_(2, 2) + 1,
], ids=["unsqueeze_", "t_", "transpose_", "resize_"])
def test_in_place_view_ops_on_inputs_run_the_graph_as_it_came(device, fn):
    x = torch.randn(3, 4, device=device)
    x_eager = x.clone()
    want = fn(x_eager)
    compiled = compile_fx(torch.fx.symbolic_trace(fn), [x.clone()])
    got = compiled(x)
    assert torch.equal(got, want) and x.shape == x_eager.shape and x.stride() == x_eager.stride()
    assert counters["eager_graphs"] == 1
    y = torch.randn(3, 4, device=device)  # every later call too, on its own input
    assert torch.equal(compiled(y.clone()), fn(y.clone()))


def test_in_place_view_ops_on_temporaries_and_views_are_compiled(device):
    compile_and_check(lambda x: (x * 2).t_() + 1, torch.randn(3, 4, device=device))
    compile_and_check(lambda x: x[1:].unsqueeze_(0) * 2, torch.randn(3, 4, device=device))
    assert counters["eager_graphs"] == 0 and counters["kernels"] == 2


def test_writes_into_views_whose_elements_overlap_run_as_they_came(device):
    """Eager updates an element shared by overlapping windows once per window; a functional
    trace would compute it once: such a graph runs as it came."""
    import torch._dynamo

    def windows(x):
        x.unfold(0, 3, 2).mul_(2)
        return x

    def strided(x):
        x.as_strided((3, 3), (1, 1)).add_(1)
        return x

    for fn, x in ((windows, torch.arange(9.0, device=device)), (strided, torch.zeros(5, device=device))):
        torch._dynamo.reset()
        ours, eager = x.clone(), x.clone()
        torch.testing.assert_close(torch.compile(fn, backend="inductor_lite")(ours), fn(eager))
        torch.testing.assert_close(ours, eager)
    assert counters["eager_graphs"] == 2


def test_a_cat_of_empty_pieces_only(device):
    compile_and_check(lambda x: torch.cat([x[:0], x[:0]]) + 1, torch.randn(4, device=device))


def test_zero_and_negative_zero_constants_are_two_values(device):
    # `0.0 == -0.0`: kernels and reductions keyed by their bodies must still tell them apart
    fn = lambda x: (1 / (x * 0.0).amax(-1), 1 / (x * -0.0).amax(-1), x * 0.0, x * -0.0)  # noqa: E731
    x = torch.ones(2, 4, device=device)
    compiled = compile_and_check(fn, x)
    for got, want in zip(compiled(x), fn(x)):
        assert torch.equal(got.signbit(), want.signbit())


@pytest.mark.parametrize("name", ["tanh", "erfc", "asinh", "sinh", "cosh"])
def test_math_functions_keep_their_precision_at_tiny_and_huge_values(device, name):
    # Near zero, 1 - e and 1 - erf cancel; past 88, exp overflows where sinh and cosh do not
    x = torch.tensor([1e-20, 1e-8, 1e-4, 0.1, 0.5, 1.0, 4.0, 5.0, 9.0, 88.5, 89.0, 1e20],
                     device=device)
    x = torch.cat([x, -x, torch.tensor([0.0, -0.0], device=device)])
    fn = getattr(torch, name)
    compiled = compile_fx(torch.fx.symbolic_trace(lambda t: fn(t)), [x])
    got, want = compiled(x), fn(x.double()).float()
    torch.testing.assert_close(got, want, rtol=2e-6, atol=0)
    assert torch.equal(got.signbit(), want.signbit())


@pytest.mark.parametrize("name", ["sinh", "cosh"])
def test_sinh_and_cosh_past_88_are_as_precise_as_below(device, name):
    # exp(a - log 2) took a - log(2) rounded (4e-6 near 88 in float32): 1.6e-6 off in
    # float32 (eager: 1e-7), 5e-14 in float64 near 700; exp(a / 2) squared and halved is not
    fn = getattr(torch, name)
    x = torch.linspace(88.0, 89.4, 701, device=device)
    x = torch.cat([x, -x])
    compiled = compile_fx(torch.fx.symbolic_trace(lambda t: fn(t)), [x])
    # (on a GPU, Triton's float32 exp is ex2.approx of a log2(e): 2.6e-6 relative at a = 44.5)
    rtol = 5e-7 if device == "cpu" else 6e-6
    torch.testing.assert_close(compiled(x), fn(x.double()).float(), rtol=rtol, atol=0)
    if name == "cosh":  # float64 sinh runs as an aten call (FP32_PRECISE)
        y = torch.tensor([88.5, 100.0, 300.0, 700.0, 709.5, 710.4], dtype=torch.float64,
                         device=device)
        compiled = compile_fx(torch.fx.symbolic_trace(lambda t: fn(t)), [y])
        torch.testing.assert_close(compiled(y), fn(y), rtol=1e-15, atol=0)


def test_powers_with_large_results_are_as_precise_as_eagers(device):
    """exp2(b * log2|a|) in float32 loses precision as |b * log2 a| grows (10 ** 30 was 4e-6
    off, 7 ** 9 was 40353580): computed in float64, then rounded."""
    x = torch.tensor([10., 3., 1.5, 0.5, 2., 7.], device=device)
    y = torch.tensor([30., 60., 200., -100., 127., 9.], device=device)
    compile_and_check(lambda x, y: x ** y, x, y, atol=0, rtol=1.3e-6)


def test_fractional_powers_of_negative_infinity_and_zero(device):
    a = torch.tensor([float("-inf"), -0.0, 0.0, 4.0, -2.0], device=device)
    fn = lambda a: (a ** 1.5, a ** -0.5, a ** 0.5, a ** -1.5)  # noqa: E731
    compiled = compile_and_check(fn, a)
    for got, want in zip(compiled(a), fn(a)):
        numbers = ~want.isnan()  # (a NaN's sign means nothing)
        assert torch.equal(got.signbit()[numbers], want.signbit()[numbers])


def test_attention_reads_transposed_keys_in_place_and_softmax_is_one_kernel(device):
    """q @ k.T reads k's transpose as strides (no copy), and the masked softmax written out for
    the second bmm, through a reshape, is one kernel: the division joins the reduction's."""
    mask = torch.ones(16, 16, dtype=torch.bool, device=device).tril()

    def attention(q, k, v):
        scores = (q @ k.transpose(-2, -1)) * 0.25
        return scores.masked_fill(~mask, float("-inf")).softmax(dim=-1) @ v
    q, k, v = (torch.randn(2, 3, 16, 8, device=device) for _ in range(3))
    compile_and_check(attention, q, k, v)
    assert counters["kernels"] == 1 and counters["extern_calls"] == 2


def test_masks_are_left_out_only_where_every_block_fits(device):
    """A static power-of-two size that every candidate block divides needs no mask (Triton then
    loads unmasked); a size some block overshoots keeps its mask, and must stay correct."""
    fits = compile_and_check(lambda x: x.softmax(-1), torch.randn(16, 64, device=device))
    assert "rmask = tl.full" in source(fits) and "xmask = tl.full" in source(fits)
    ragged = compile_and_check(lambda x: x.softmax(-1), torch.randn(10, 37, device=device))
    assert "rmask = rindex < rnumel" in source(ragged) and "xmask = xindex < xnumel" in source(ragged)
    empty_rows = compile_and_check(lambda x: x.sum(-1), torch.randn(8, 0, device=device))
    assert "rmask = tl.full" not in source(empty_rows)


def test_half_precision_fills_hold_what_the_half_tensor_holds(device):
    """A fill of a half or bfloat16 tensor is rounded to that dtype first: bf16(1.001) is 1,
    half(1e-8) is 0 and half(70000) is inf, also as a 0-d constant a kernel reads."""
    b = torch.full((4,), 1000.0, dtype=torch.bfloat16, device=device)
    h = torch.tensor([1.0, 2.0, 3.0, 4.0], dtype=torch.float16, device=device)

    def fills(x, y):  # (made from the inputs, so that the fills are ops of the graph)
        out = (x * x.new_full((), 1.001) - x, x * torch.full_like(x, 1.001) - x,
               y * y.new_full((), 1e-8) * 1e8)
        if device == "cpu":  # (CUDA's eager refuses a half fill that overflows)
            out += (torch.where(y > 2, y, y.new_full((), 70000.0)) - 65000,)
        return out
    compile_and_check(fills, b, h, atol=0, rtol=0)


def test_tanh_next_to_one_rounds_as_eager(device):
    # tanh(9) is 1 - 3.05e-8, 0.99999994 in float32: float32's -m / (2 + m) made it 1.0, and
    # a cast to int 1, not eager's 0 (program_fuzz seed 1008464)
    x = torch.arange(-12, 13, dtype=torch.int32, device=device)
    compile_and_check(lambda t: (torch.tanh(t), torch.tanh(t).to(torch.int32)), x, atol=0, rtol=0)


def test_float64_expm1_and_tanh_keep_float64_precision(device):
    # (the float32 form's series near zero is sized for float32)
    x = torch.linspace(-3, 3, 601, dtype=torch.float64, device=device)
    x = torch.cat([x, torch.tensor([1e-300, -1e-20, 1e-8, 60.0], dtype=torch.float64,
                                   device=device)])
    fn = lambda t: (torch.expm1(t), torch.tanh(t))  # noqa: E731
    compiled = compile_fx(torch.fx.symbolic_trace(fn), [x])
    for got, want in zip(compiled(x), fn(x)):
        torch.testing.assert_close(got, want, rtol=1e-14, atol=0)


def test_integer_shifts_as_torch_shifts(device):
    """Shifts by a negative amount or by the width or more give 0 (left) or the sign (right),
    as in torch, where Triton (as C) leaves them undefined; narrow ints wrap."""
    a = torch.tensor([1, -8, 5, 2**62, -(2**40), 7], dtype=torch.int64, device=device)
    s = torch.tensor([0, 1, 3, 63, 64, -1], device=device)
    b = torch.tensor([1, -8, 5, 100, -128, 127], dtype=torch.int8, device=device)
    u = torch.tensor([200, 3, 255, 1, 0, 128], dtype=torch.uint8, device=device)

    def shifts(a, s, b, u):
        return (a << 3, a >> 2, a << s, a >> s, torch.bitwise_left_shift(a, 70), b << 3,
                b >> 9, b << 9, u << 1, u >> 1, torch.bitwise_right_shift(b, s.to(torch.int8)))
    compile_and_check(shifts, a, s, b, u, atol=0, rtol=0)
    assert counters["fallbacks"] == 0 and counters["kernels"] == 1


def test_a_write_through_a_row_of_an_overlapping_view_runs_as_it_came(device):
    # `v2[0]` does not overlap itself, but `v2` does: eager's write shows in both rows
    def fn(a):
        v2 = (a * 1).as_strided((2, 2), (1, 1), 0)
        v2[0].mul_(3)
        return v2 + 0

    compile_and_check(fn, torch.arange(4.0, device=device))


@pytest.mark.parametrize("make", [lambda d: torch.randn(8, 1, device=d).expand(8, 4),
                                  lambda d: torch.randn(5, 1, 3, device=d)])
def test_writes_into_expanded_tensors_run_as_they_came(device, make):
    # eager allows `fill_`/`zero_` of an expanded (overlapping) tensor; a functional trace cannot
    def into_input(a):
        a.select(0, 2).fill_(0.25)
        return a * 2

    def into_temporary(x):
        x.exp().expand(5, 5, 3).zero_()
        return x + 1

    fn = into_input if make(device).shape == (8, 4) else into_temporary
    torch.manual_seed(0)
    want = fn(make(device))
    torch.manual_seed(0)
    x = make(device)
    torch.testing.assert_close(compile_fx(torch.fx.symbolic_trace(fn), [x])(x), want)


def test_index_fill_of_a_broadcast_scalar(device):
    fn = lambda a, i: (a.index_fill(0, i, -2) - a.amax(-1, keepdim=True)).exp()  # noqa: E731
    compile_and_check(fn, torch.randn(17, 7, device=device), torch.tensor([4], device=device))


def test_float64_to_bfloat16(device):
    compile_and_check(lambda a: (a + 2).double().to(torch.bfloat16),
                      torch.tensor([-1.0, 0.0, 1.0, 2.5, 3.0], device=device))


def test_unfold_of_a_temporary_of_a_permuted_input_with_symbolic_sizes(device):
    import torch._dynamo

    def fn(a):
        return torch.sign(torch.where(a > 0, a, 0.0).unfold(1, 2, 2).select(3, 1))

    a = torch.randn(3, 7, 3, 7, generator=torch.Generator().manual_seed(0)).to(device)
    a = a.permute(0, 3, 2, 1)
    torch._dynamo.reset()
    torch.testing.assert_close(torch.compile(fn, backend="inductor_lite", dynamic=True)(a), fn(a))


def test_cat_branches_index_with_their_own_loaded_indices(device):
    # each branch of the cat loads the index under its own condition; two branches' indices
    # once shared a name (their sympy hashes collide: `x - 1` and `x - 2`)
    def fn(a, idx):
        v5 = (a * 1)[..., None]
        v8 = torch.stack([v5, v5 * 2], 3)
        return torch.cat([v8, v8, v8[:, :, :1]], 2)[idx, :, None]

    g = torch.Generator().manual_seed(1)
    compile_and_check(fn, torch.randn(129, 5, generator=g).to(device),
                      torch.tensor([100], device=device))


def test_a_cat_branch_condition_the_same_for_every_lane(device):
    # `v1[61:62]` of a cat with symbolic sizes: each branch's condition (`61 < s0`) is one
    # value for all lanes, made a block as a mask must be
    import torch._dynamo

    def fn(a):
        return torch.where(torch.cat([a, a, a[:1]], 0)[61:62] > 0, 1.5, 2)

    torch._dynamo.reset()
    a = torch.randn(129, device=device)
    torch.testing.assert_close(torch.compile(fn, backend="inductor_lite", dynamic=True)(a), fn(a))


def test_a_value_read_through_a_view_fallback_is_computed_before_the_input_is_written(device):
    # `unfold` of a non-contiguous input is an aten view of it; `masked_fill` reads that view,
    # then the input is written in place: the returned value is of the input before the write
    def fn(a):
        v = a.unfold(2, 2, 1)
        out = v.masked_fill(v[5:6] > 0, float("-inf"))
        a.add_(a)
        return out.mT

    def make():
        base = torch.randn(15, 7, 9, generator=torch.Generator().manual_seed(0)).to(device)
        return base[1::2, 1::2, 1::2]

    x, y = make(), make()
    torch.testing.assert_close(compile_fx(torch.fx.symbolic_trace(fn), [make()])(y), fn(x))
    torch.testing.assert_close(y, x)


def test_a_cat_inside_a_cat_and_a_pad_of_a_cat_mask_each_branch(device):
    # a load under the inner cat is masked by both cats' conditions (the outer one replaced
    # the inner one: a read past the input's end, a roll's index out of range)
    def nested(x):
        v = torch.cat([x, x.roll(1, 0)], 0)
        return torch.cat([v, v], 0)

    def padded(x):
        return F.pad(torch.cat([x, x.roll(1, 0)], 0), (0, 0, 1, 1))

    for fn in (nested, padded):
        compile_and_check(fn, torch.arange(12.0, device=device).view(4, 3))


def test_as_strided_of_an_input_the_graph_writes_into_counts_from_its_storage(device):
    # eager's view counts from the start of the input's storage; functionalized, it would be
    # taken of the input's new value, a tensor of the input's elements alone
    def shifted(x):
        x.add_(1)
        return x.as_strided((2, 2), (2, 1), 0) * 1

    def strided(x):
        x.mul_(2)
        return x.as_strided((3,), (4,), 1) + 0

    for fn, make in ((shifted, lambda: torch.arange(10.0, device=device)[3:]),
                     (strided, lambda: torch.arange(12.0, device=device).view(3, 4)[:, 1:])):
        x, reference = make(), make()
        compiled = compile_fx(torch.fx.symbolic_trace(fn), [make()])
        torch.testing.assert_close(compiled(x), fn(reference))
        torch.testing.assert_close(x, reference)


def _dynamic(fn):
    import torch._dynamo

    torch._dynamo.reset()
    return torch.compile(fn, backend="inductor_lite", dynamic=True)


def test_slices_and_selects_at_symbolic_negative_starts_and_steps(device):
    # `x[-k:]` wraps by the size when k's sign is decided by the trace's guards; `x[::k]` is a
    # symbolic step (it raised a TypeError, and the graph ran eagerly)
    cases = (lambda x, k: x[-k:] * 2, lambda x, k: x[k - 7:k] + 1, lambda x, k: x[1:, -k:] * 1,
             lambda x, k: x.select(1, -k) * 1, lambda x, k: x[::k] * 2)
    x = torch.arange(20.0, device=device).view(4, 5)
    for fn in cases:
        compiled = _dynamic(fn)
        for k in (2, 3):
            torch.testing.assert_close(compiled(x, k), fn(x, k))
    assert counters["eager_graphs"] == 0


def test_python_modulo_of_a_symbolic_shift_inside_a_kernel(device):
    # the roll's start `(4 - s0) % 4` rounds down in Python, toward zero in Triton
    def fn(x, k):
        y = x.roll(k, 0) * 2
        x.add_(1)
        return y

    compiled = _dynamic(fn)
    for k in (3, 5, 6, -1):
        x, reference = (torch.arange(12.0, device=device).view(4, 3) for _ in range(2))
        torch.testing.assert_close(compiled(x, k), fn(reference, k))
        torch.testing.assert_close(x, reference)


def test_a_view_of_an_input_that_starts_past_its_storages_start_is_a_view(device):
    def fn(x):
        return x[1:], x.view(-1)[2:9], x.t().t()

    x = torch.arange(30.0, device=device)[5:26].view(3, 7)
    compiled = compile_fx(torch.fx.symbolic_trace(fn), [x])
    for got, want in zip(compiled(x), fn(x)):
        assert got.storage_offset() == want.storage_offset() and got.stride() == want.stride()
        assert got.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()


def test_index_put_of_a_transposed_input_keeps_its_strides(device):
    def fn(x, i, v):
        return x.index_put((i,), v, accumulate=True), x.index_put((i,), v)

    x = torch.randn(7, 5, device=device).t()
    i, v = torch.tensor([0, 1, 1, 0], device=device), torch.randn(7, device=device)
    compiled = compile_and_check(fn, x, i, v)
    for got, want in zip(compiled(x, i, v), fn(x, i, v)):
        assert got.stride() == want.stride()


def test_a_reduction_expanded_along_the_row_and_returned(device):
    # the store runs over the row, its address the same for every lane of it
    from fxtrace import make_fx

    cases = ((lambda a: (a.mean(-1, keepdim=True).expand(4, 300),), (4, 300)),
             (lambda a: (a.std(-1).view(1, 1).expand(3, 1, 1),), (3,)),
             (lambda a: (a - a.mean(-1, keepdim=True), a.var(-1, keepdim=True).expand(4, 7)),
              (4, 7)),
             (lambda a: (a.mean(-1, keepdim=True).expand(5000, 1),), (5000,)))
    for fn, size in cases:
        x = torch.randn(size, device=device)
        for got, want in zip(compile_fx(make_fx(fn)(x), [x])(x), fn(x)):
            torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)


def test_writes_into_a_temporary_or_an_input_keep_its_layout_in_the_outputs(device):
    """The functional ops of such writes (`scatter`, `slice_scatter`) return contiguous tensors
    where eager's results keep the layout of what was written into."""
    from fxtrace import make_fx

    def into_temporary(a, i):
        y = a * 2
        y.scatter_(1, i, 1.0)
        return y

    def into_input(a):
        a[:, 1:][2:] = 5
        return torch.where(a > 0, a, a)

    a = torch.randn(5, 4, device=device).t()
    i = torch.tensor([[0, 2], [1, 1], [4, 0], [3, 3]], device=device)
    for fn, args in ((into_temporary, (a, i)),
                     (into_input, (torch.randn(4, 4, 3, device=device).transpose(1, 2),))):
        theirs = [t.clone() if t.is_floating_point() else t for t in args]
        compiled = compile_fx(make_fx(fn)(*theirs), list(theirs))
        ours = [t.clone() if t.is_floating_point() else t for t in args]
        got, want = compiled(*ours), fn(*args)
        torch.testing.assert_close(got, want)
        assert got.stride() == want.stride() and torch.equal(ours[0], args[0])


def test_dtypes_and_signs_of_reductions_casts_and_relu(device):
    """relu(-0.0) is -0.0 on CPU and 0.0 on CUDA, in eager as in the kernels."""
    x = torch.tensor([[0, 3, 0], [0, 0, 0]], dtype=torch.uint8, device=device)
    for fn in (lambda t: t.any(), lambda t: t.any(1), lambda t: t.any(1, keepdim=True)):
        compiled = compile_fx(torch.fx.symbolic_trace(fn), [x])
        got, want = compiled(x), fn(x)
        assert got.dtype == want.dtype == torch.uint8 and torch.equal(got, want)
    zeros = torch.tensor([-0.0, 0.0, -1.0, float("nan")], device=device)
    got = compile_and_check(lambda t: torch.relu(t), zeros)(zeros)
    assert torch.signbit(got).tolist() == torch.signbit(torch.relu(zeros)).tolist()
    rows = torch.randn(4, 300, device=device) * 100  # summed as bfloat16, as eager casts first
    # (partial sums pass near zero; CUDA's eager scan is 2 off the float64 sum there, where
    # the kernels' float accumulator is 1 off)
    atol = 1e-3 if device == "cpu" else 2.0
    for fn in (lambda t: t.sum(1, dtype=torch.bfloat16),
               lambda t: t.cumsum(1, dtype=torch.float16)):
        compile_and_check(fn, rows, atol=atol, rtol=1e-2)


def test_float64_math_is_as_precise_as_eager(device):
    x = torch.linspace(-0.99, 0.99, 101, dtype=torch.float64, device=device)
    for fn in (lambda t: t.erfc(), lambda t: t.asin(), lambda t: t.acos(), lambda t: t.atan(),
               lambda t: t.sinh(), lambda t: torch.atan2(t, t.flip(0) + 0.5)):
        compile_and_check(fn, x, atol=1e-14, rtol=1e-14)


def test_half_compared_with_ints_rounds_them_to_half(device):
    from fxtrace import make_fx

    h = torch.tensor([2048.0, 2, 60000.0], dtype=torch.float16, device=device)
    compile_and_check(lambda t: (t == 2049, t < 2049, t >= 60001), h)  # 2049 is 2048 in half
    gm = make_fx(lambda t, n: t == n, "symbolic")(h, 2)
    compiled = compile_fx(gm, [h, 2])
    for n in (2049, 60001, 3):  # a kernel argument, rounded in the kernel
        assert compiled(h, n).tolist() == (h == n).tolist()


def test_the_example_inputs_are_not_kept_alive(device):
    """A frontend passes its real tensors (parameters, globals) as example inputs: the compiled
    graph keeps their sizes and strides, not the tensors."""
    import gc
    import weakref

    x = torch.randn(6, 4, device=device)
    compiled = compile_fx(torch.fx.symbolic_trace(lambda t: torch.relu(t) * 2), [x])
    ref = weakref.ref(x)
    del x
    gc.collect()
    assert ref() is None
    y = torch.randn(6, 4, device=device)
    torch.testing.assert_close(compiled(y), torch.relu(y) * 2)


def test_an_input_with_the_negative_bit_is_read_as_its_values(device):
    """`c.conj().imag` means the negation of its bytes, which kernels would read as they are:
    such a graph runs as its aten graph, and a version made for plain tensors does not take
    one."""
    gm = torch.fx.symbolic_trace(lambda x: x * 2)
    compiled = compile_fx(gm, [torch.randn(2, 3, device=device)])
    plain = torch.randn(2, 3, device=device)
    negated = torch.randn(2, 3, dtype=torch.complex64, device=device).conj().imag
    assert negated.is_neg()
    for x in (plain, negated, torch._neg_view(plain)):
        torch.testing.assert_close(compiled(x), x * 2)


@pytest.mark.parametrize("reduce", [lambda x: x.max(), lambda x: x.min(1),
                                    lambda x: x.argmax(1)])
def test_max_and_min_of_nothing_raise_as_eager_does(device, reduce):
    """They have no identity (the fake kernels accept the empty reduction)."""
    x = torch.randn(3, 0, device=device)
    with pytest.raises((RuntimeError, IndexError)) as expected:
        reduce(x)
    with pytest.raises(expected.type):  # (argmax's fake kernel raises as it compiles)
        compile_fx(torch.fx.symbolic_trace(reduce), [x])(x)


@pytest.mark.parametrize("requires_grad", [False, True])
def test_global_module_hooks_do_not_run_on_the_compiled_graph(device, requires_grad):
    """The graph (run as it came, or as its aten graph) is called by its forward: a user's
    global module hook would otherwise see it, with a tuple output (fakes while tracing)."""
    seen = []
    handle = torch.nn.modules.module.register_module_forward_hook(
        lambda mod, i, o: seen.append(type(mod).__name__))
    try:
        x = torch.randn(4, 3, device=device, requires_grad=requires_grad)
        compiled = compile_and_check(lambda t: (t * 2).relu(), x)
        compiled(x)
        assert seen == []
    finally:
        handle.remove()


def test_a_half_sum_or_cumsum_read_in_its_kernel_is_the_half_value_it_stores(device):
    """0.1 + 0.2 in half is 0.2998046875: a mask or difference of the sum in the same kernel
    reads that value, not the float32 accumulator (the mask contradicted the sum returned)."""
    def f(x):
        s, c = x.sum(-1), x.cumsum(-1)
        return s, s > 0.2998046875, c, c > 0.2998046875, x.sum(-1, keepdim=True) - 0.2998046875

    compile_and_check(f, torch.tensor([[0.1, 0.2]], dtype=torch.float16, device=device),
                      atol=0, rtol=0)
    compile_and_check(lambda x: x.sum(-1, keepdim=True) - 1.0,
                      torch.tensor([[1.0, 2**-8, 2**-9, 2**-10]], dtype=torch.bfloat16,
                                   device=device), atol=0, rtol=0)


def test_a_write_into_a_view_whose_symbolic_strides_overlap_later_gets_a_version_of_its_own(device):
    """Overlap is decided by the first call's sizes and strides; where they are symbols (a stride
    seen to change, an `as_strided` view by an int seen to change), the version is guarded to
    serve only calls whose views do not overlap either."""
    def into_input(x):
        x.add_(1)
        return x

    def into_temporary(x, k):
        y = x * 1
        y.as_strided((3, 4), (k, 1)).add_(1)
        return y

    compiled = compile_fx(torch.fx.symbolic_trace(into_input),
                          [torch.zeros(20, device=device).as_strided((3, 4), (4, 1))])
    for k in (4, 5, 2, 6, 2):  # row strides; under 4 the rows overlap
        want, got = (torch.zeros(20, device=device).as_strided((3, 4), (k, 1)) for _ in range(2))
        torch.testing.assert_close(compiled(got), into_input(want))
        torch.testing.assert_close(got, want)
    x = torch.zeros(20, device=device)
    compiled = compile_fx(torch.fx.symbolic_trace(into_temporary), [x, 4])
    for k in (4, 5, 2, 6, 2):
        torch.testing.assert_close(compiled(x, k), into_temporary(x, k))


def test_inverse_hyperbolic_and_erfc_keep_fp32_precision(device):
    # atanh near 0 (was 0 below 6e-8, as log((1 + x) / (1 - x)) rounds to log(1)), acosh near 1
    # (x * x - 1 cancelled: 1000 ulps) and past 1.8e19 (x * x overflowed: inf), acos near 1,
    # erfc's tail (exp(-z * z) of a rounded z * z: 1e-5 relative near 9)
    small = torch.logspace(-12, -1, 200, device=device)
    compile_and_check(lambda x: torch.atanh(x), torch.cat([small, -small, torch.tensor([-0.0], device=device)]),
                      atol=0, rtol=1e-6)
    compile_and_check(lambda x: torch.acosh(x), torch.cat([1 + small, torch.tensor([1e20, 3e38], device=device)]),
                      atol=0, rtol=1e-6)
    compile_and_check(lambda x: torch.acos(x), 1 - torch.logspace(-7, -1, 200, device=device), atol=0, rtol=1e-6)
    compile_and_check(lambda x: torch.erfc(x), torch.linspace(3, 9, 200, device=device), atol=0, rtol=1e-6)
    x = torch.tensor([-0.0, 1e-10, -1e-10], device=device)
    got = compile_fx(torch.fx.symbolic_trace(lambda x: torch.atanh(x)), [x])(x)
    assert torch.equal(torch.signbit(got), torch.signbit(torch.atanh(x)))


def test_signed_zeros_of_clamp_fmax_fmin_and_cumsum(device):
    # Eager's clamp keeps x where it equals a bound; fmax/fmin give their first operand where
    # the two are equal; a cumsum starts from +0.0. (On CPU: CUDA's kernels take -0.0 < 0.0
    # and start a cumsum from its first element, which the kernels do not follow: the zeros'
    # signs differ there, documented in docs/inductor_lite.md.)
    nan = float("nan")
    x = torch.tensor([-0.0, 0.0, -1.0, nan, 2.0], device=device)
    lo = torch.tensor([0.0, -0.0, -0.0, 0.0, nan], device=device)
    fns = [lambda x, lo: x.clamp(0, 1), lambda x, lo: x.clamp(min=-0.0, max=0.0),
           lambda x, lo: x.clamp(min=lo), lambda x, lo: torch.nn.functional.relu6(x),
           lambda x, lo: torch.fmax(x, lo), lambda x, lo: torch.fmin(x, lo),
           lambda x, lo: torch.fmax(lo, x), lambda x, lo: x.view(1, 5).mul(0).cumsum(1)]
    for fn in fns:
        got = compile_fx(torch.fx.symbolic_trace(fn), [x, lo])(x, lo)
        want = fn(x, lo)
        torch.testing.assert_close(got, want, equal_nan=True)
        assert device != "cpu" or torch.equal(torch.signbit(got), torch.signbit(want)), fn



def _run(fn, *inputs):
    """`fn(*inputs)`, or the message of the RuntimeError it raises."""
    try:
        return fn(*inputs)
    except RuntimeError as e:
        return str(e)


def _compiled_run(fn, *inputs):
    """`fn` compiled and run, or the message of the RuntimeError either step raises (fakecore
    raises eager's error while tracing where the CPU kernel refuses the call's dtypes and
    numbers, see its eager_checks; else the graph's aten call raises it)."""
    return _run(lambda *xs: compile_fx(torch.fx.symbolic_trace(fn), list(xs))(*xs), *inputs)


_M = [True, False, True, False]
NUMBERS_EAGER_REFUSES = {  # a Python number the result's dtype cannot hold
    "clamp_int8": (lambda x: x.clamp(-1000, 1000), torch.int8),
    "clamp_min_int8": (lambda x: x.clamp(min=300), torch.int8),
    "clamp_half": (lambda x: x.clamp(-1e6, 1e6), torch.float16),
    "clamp_float": (lambda x: x.clamp(max=3.5e38), torch.float32),
    "where_int8": (lambda x: torch.where(torch.tensor(_M, device=x.device), x, 300), torch.int8),
    "masked_fill_uint8": (lambda x: x.masked_fill(torch.tensor(_M, device=x.device), 300),
                          torch.uint8),
    "masked_fill_uint8_float": (lambda x: x.masked_fill(torch.tensor(_M, device=x.device), -1.0),
                                torch.uint8),
    "masked_fill_half": (lambda x: x.masked_fill(torch.tensor(_M, device=x.device), 1e6),
                         torch.float16),
    "masked_fill_bfloat16": (lambda x: x.masked_fill(torch.tensor(_M, device=x.device), 1e39),
                             torch.bfloat16),
    "full_int8": (lambda x: x + torch.full((4,), 300, dtype=torch.int8, device=x.device),
                  torch.int8),
    "fill_int8": (lambda x: x.clone().fill_(-129), torch.int8),
    "add_alpha_int8": (lambda x: x.add(x, alpha=300), torch.int8),
    "sub_alpha_half": (lambda x: x.sub(x, alpha=1e6), torch.float16),
}


@pytest.mark.parametrize("name", NUMBERS_EAGER_REFUSES)
def test_a_number_the_dtype_cannot_hold_raises_as_eager(name, device):
    """Kernels wrapped it (`int8.clamp(-1000, 1000)` gave -24, a half `masked_fill` of 1e6
    gave inf): the op runs as its aten call, which raises eager's error."""
    fn, dtype = NUMBERS_EAGER_REFUSES[name]
    x = torch.tensor([0, 1, 100, 7], dtype=dtype, device=device)
    want = _run(fn, x)
    got = _compiled_run(fn, x)
    if isinstance(want, torch.Tensor):  # CUDA's eager converts a half bound and alpha
        assert device != "cpu" and dtype == torch.float16 and torch.equal(got, want)
        return
    assert "without overflow" in want and got == want


def test_numbers_eager_converts_stay_constants_of_kernels(device):
    """-1 is 255 to uint8, any number is a bool, infinities and NaN are floats, and a where
    of a half and 1e6 is inf on CPU (eager's scalar_tensor does not check halves there). On
    a GPU eager's where refuses 1e6 and its clamp ignores a NaN bound: those two run as
    their aten calls there."""
    m = torch.tensor(_M, device=device)
    u8 = torch.tensor([0, 1, 255, 7], dtype=torch.uint8, device=device)
    h = torch.tensor([0, 1, 2, -3], dtype=torch.float16, device=device)
    compile_and_check(lambda m, u8, h: (
        u8.masked_fill(m, -1), u8.clamp(-255, 255), (u8 > 1).masked_fill(m, 300),
        h.masked_fill(m, float("-inf")), h.clamp(max=float("nan")),
        h.clamp(-65504.0, 65504.0), torch.full((2,), 3e38, device=m.device)), m, u8, h)
    assert counters["fallbacks"] == (0 if device == "cpu" else 1), dict(counters)
    where = lambda m, h: torch.where(m, h, 1e6)  # noqa: E731
    want = _run(where, m, h)
    got = _run(compile_fx(torch.fx.symbolic_trace(where), [m, h]), m, h)
    assert got == want if isinstance(want, str) else torch.equal(got, want)
    assert isinstance(want, str) == (device != "cpu")


def test_a_complex_masked_fill_checks_the_number_as_eager(device):
    """A complex dtype holds a number its real part's float dtype holds (checking it asked
    torch.iinfo, a TypeError: the graph failed to compile)."""
    c = torch.tensor([1 + 2j, 3j, -1, 4], dtype=torch.complex64, device=device)
    m = torch.tensor(_M, device=device)
    compile_and_check(lambda c, m: c.masked_fill(m, 2.0) * 2, c, m)
    too_big = lambda c, m: c.masked_fill(m, 1e39)  # noqa: E731
    want = _run(too_big, c, m)
    assert isinstance(want, str) and "without overflow" in want
    assert _compiled_run(too_big, c, m) == want


def test_nan_to_num_by_a_number_the_dtype_cannot_hold_runs_as_eager(device):
    """Eager's nan_to_num casts its numbers unchecked (`posinf=1e39` of a float tensor is
    inf): the op stays whole, where its decomposition's `where` of a scalar_tensor raised."""
    x = torch.tensor([float("inf"), float("-inf"), float("nan"), 1.0], device=device)
    compile_and_check(lambda x: (x.nan_to_num(posinf=1e39, neginf=-1e39) * 2,
                                 x.clone().nan_to_num_(nan=1e39) + 1), x)
    compile_and_check(lambda x: torch.nan_to_num(x, 0.0, 1e30, -1e30), x)
    assert counters["fallbacks"] == 2, dict(counters)


OPS_EAGER_REFUSES = {
    # (pinned memory needs CUDA; where there is, the aten call makes it)
    "pin_memory": (lambda x: torch.ones(x.shape[0], pin_memory=True), torch.float32),
    "argmax_bool": (lambda x: (x > 2).argmax(1), torch.int64),
    "argmin_bool": (lambda x: (x > 2).argmin(), torch.int64),
    "var_int": (lambda x: x.var(), torch.int64),
    "std_int": (lambda x: x.std(1), torch.int32),
    "floordiv_by_0": (lambda x: x // 0, torch.int64),
    "trunc_div_by_0": (lambda x: torch.div(x, 0, rounding_mode="trunc"), torch.int32),
    "remainder_by_0": (lambda x: x % 0, torch.int64),
    "fmod_by_0": (lambda x: torch.fmod(x, 0), torch.int16),
    "sub_bool": (lambda x: (x > 2) - 0.5, torch.int64),
    "rsub_bool": (lambda x: 1 - (x > 2), torch.int64),
    "sub_bool_number": (lambda x: x - True, torch.float16),
    # a number that wraps to 0 in the tensor's dtype is 0 to eager
    "floordiv_by_256_int8": (lambda x: x // 256, torch.int8),
    "remainder_by_2_32_int32": (lambda x: x % 2**32, torch.int32),
    "fmod_by_minus_2_16_int16": (lambda x: torch.fmod(x, -2**16), torch.int16),
    "floor_div_by_2_40_uint8": (lambda x: torch.div(x, 2**40, rounding_mode="floor"), torch.uint8),
    # ops eager's kernels do not implement for bools
    "floor_bool": (lambda x: (x > 2).floor(), torch.int64),
    "round_bool": (lambda x: (x > 2).round(), torch.int64),
    "abs_bool": (lambda x: (x > 2).abs(), torch.int64),
    "relu_bool": (lambda x: torch.relu(x > 2), torch.int64),
    "remainder_bool": (lambda x: (x > 2) % True, torch.int64),
    "fmod_bool": (lambda x: torch.fmod(x > 2, True), torch.int64),
    "clamp_bool": (lambda x: (x > 2).clamp(min=True), torch.int64),
    "div_trunc_bool": (lambda x: torch.div(x > 2, True, rounding_mode="trunc"), torch.int64),
}


# Refused while tracing on the CPU: fakecore runs the CPU kernel on empty tensors (eager_checks)
REFUSED_BY_THE_CPU_KERNELS_DTYPES = {
    "sub_bool", "rsub_bool", "sub_bool_number", "floor_bool", "round_bool", "abs_bool",
    "relu_bool", "remainder_bool", "fmod_bool", "clamp_bool", "div_trunc_bool"}


@pytest.mark.parametrize("name", OPS_EAGER_REFUSES)
def test_ops_eager_refuses_run_as_aten(name, device):
    """argmax of bools, var of integers, an integer `//`, `%` or fmod by the number 0, a
    subtraction with a bool operand: eager raises (the divisions on the CPU); kernels returned
    values. Where the dtypes alone make the CPU kernel refuse, compiling raises eager's error."""
    fn, dtype = OPS_EAGER_REFUSES[name]
    x = torch.arange(6, device=device).reshape(2, 3).to(dtype)
    want = _run(fn, x)
    if name in REFUSED_BY_THE_CPU_KERNELS_DTYPES and x.device.type == "cpu":
        assert _compiled_run(fn, x) == want
        return
    got = _run(compile_fx(torch.fx.symbolic_trace(fn), [x]), x)
    if isinstance(want, str):
        assert got == want
    else:  # a GPU does not check divisors: the aten call gives eager's values
        assert torch.equal(got, want)
    assert counters["fallbacks"] == 1, dict(counters)


def test_host_float_arithmetic_is_eagers_one_node_at_a_time(device):
    # A float read on the host after the aten step that computes it (a host value), and
    # arithmetic on it: the wrapper computes each node in Python once the float is read, as
    # eager does. sympy's expression of a node is simplified across nodes: `(v + 1e16) - 1e16`
    # was `v` (eager: 0.0 or 2.0), `(v * 2 - v) / v` was 1 (eager: inf once `v * 2` overflows).
    from fxtrace import make_fx

    def fn(s, y):
        v = (s * 3).item()
        return y * ((v + 1e16) - 1e16), y * ((v * 2 - v) / v)
    y = torch.arange(4.0, device=device)
    gm = make_fx(fn, "fake")(torch.tensor(2.0, dtype=torch.float64), y)
    compiled = compile_fx(gm, [torch.tensor(2.0, dtype=torch.float64), y])
    for v in (0.1, 0.7, 3e307, -0.3):
        s = torch.tensor(v, dtype=torch.float64)
        for got, want in zip(compiled(s, y), fn(s, y)):
            torch.testing.assert_close(got, want, equal_nan=True, atol=0, rtol=0)
    assert counters["eager_graphs"] == 0 and counters["kernels"] >= 1, dict(counters)
    text = source(compiled)
    assert text.index(".item()") < text.index("hostf0 = ") < text.index("    kernel0(")


def test_host_float_algebra_that_simplifies_to_a_number_is_computed(device):
    # `v * 2 - v - v` is 0 to sympy; 1e308 * 2 is inf to IEEE: not lowered as the sympy number
    # (the wrapper computes each node, as eager does)
    from fxtrace import make_fx

    def fn(s, y):
        v = s.item()
        return y * (v * 2 - v - v) + v * 0
    y = torch.arange(4.0, device=device)
    gm = make_fx(fn, "fake")(torch.tensor(2.0, dtype=torch.float64), y)
    compiled = compile_fx(gm, [torch.tensor(2.0, dtype=torch.float64), y])
    for v in (3.0, 1e308, float("nan"), -3.0):
        s = torch.tensor(v, dtype=torch.float64)
        got, want = compiled(s, y), fn(s, y)
        torch.testing.assert_close(got, want, equal_nan=True)
        assert torch.equal(got.signbit(), want.signbit())
    assert counters["eager_graphs"] == 0, dict(counters)


def test_host_float_algebra_that_cancels_a_number_is_computed(device):
    # `(v + w) - v` is `w` to sympy; at v = inf it is NaN to IEEE: not lowered as `w`
    from fxtrace import make_fx

    def fn(s, t, y):
        v, w = s.item(), t.item()
        return y * ((v + w) - v)
    y = torch.arange(4.0, device=device)
    example = (torch.tensor(2.0, dtype=torch.float64), torch.tensor(3.0, dtype=torch.float64), y)
    compiled = compile_fx(make_fx(fn, "fake")(*example), list(example))
    for v in (3.0, float("inf"), float("nan")):
        args = (torch.tensor(v, dtype=torch.float64), example[1], y)
        torch.testing.assert_close(compiled(*args), fn(*args), equal_nan=True)
    assert counters["eager_graphs"] == 0, dict(counters)


def test_a_host_float_fills_as_a_float(device):
    # `torch.full` / `fill_` by a float read on the host: the fill was taken for a size
    # expression and converted to int64 in the kernel (`hostf0.to(tl.int64)`: the interpreter
    # raised, a GPU truncated 0.75 to 0); a result other than float32 runs the aten call
    from fxtrace import make_fx

    def fn(s, y):
        v = s.item()
        return (torch.full((2,), v * 0.5, device=y.device), y.new_full((3,), v),
                torch.full_like(y, v + 1), y.clone().fill_(v),
                torch.full((2,), v, dtype=torch.float64, device=y.device),
                torch.full((2,), v, dtype=torch.int64, device=y.device),
                torch.full((2,), v, dtype=torch.float16, device=y.device))
    y = torch.arange(4.0, device=device)
    example = (torch.tensor(1.5, dtype=torch.float64), y)
    compiled = compile_fx(make_fx(fn, "fake")(*example), list(example))
    for v in (1.5, 0.75, -2.3):
        s = torch.tensor(v, dtype=torch.float64)
        for got, want in zip(compiled(s, y), fn(s, y)):
            assert got.dtype == want.dtype and torch.equal(got, want), (v, got, want)
    assert counters["eager_graphs"] == 0 and counters["kernels"] >= 1, dict(counters)


def test_a_host_float_operation_repeated_is_computed_once(device):
    # every parameter's update of a single-tensor optimizer takes `-lr`: one line, not one
    # per parameter; `v * 0.0` and `v * -0.0` stay apart
    from fxtrace import make_fx

    def fn(s, a, b, c):
        v = s.item()
        return a * -v, b * -v, c * -v, a * (v * 0.0), b * (v * -0.0)
    args = (torch.tensor(0.5, dtype=torch.float64), torch.ones(2, device=device),
            torch.ones(3, device=device), torch.ones(5, device=device))
    compiled = compile_fx(make_fx(fn, "fake")(*args), list(args))
    for v in (0.5, float("inf"), 2.0):
        s = torch.tensor(v, dtype=torch.float64)
        for got, want in zip(compiled(s, *args[1:]), fn(s, *args[1:])):
            torch.testing.assert_close(got, want, equal_nan=True, atol=0, rtol=0)
            assert torch.equal(got.signbit(), want.signbit())
    text = source(compiled)
    assert len(re.findall(r"hostf\d+ = -", text)) == 1, text
    assert "* 0.0" in text and "* (-0.0)" in text, text


@torch.library.custom_op("inductor_lite_test::two_outputs", mutates_args=())
def _two_outputs(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return x + 1, x.new_zeros(3)


@_two_outputs.register_fake
def _(x):
    return torch.empty_like(x), x.new_empty(2)  # the second output's size is wrong


def test_an_output_of_a_library_call_of_other_sizes_than_the_trace_is_named(device):
    fn = lambda x: _two_outputs(x)[1] * 2  # noqa: E731
    x = torch.randn(4, device=device)
    compiled = compile_fx(torch.fx.symbolic_trace(fn), [x])
    with pytest.raises(RuntimeError, match="output 1 of inductor_lite_test.two_outputs.default "
                                           r"returned a tensor of sizes \(3,\)"):
        compiled(x)


def test_an_integer_division_by_a_changing_int_runs_as_aten(device):
    """An int argument seen to change is known only at run time: it may be 0, or wrap to 0
    in the tensor's dtype (256 for int8); the aten call raises where eager does (kernels
    returned zeros). A size divisor (positive) is still generated."""
    def fn(x, n):
        return x // n, x % n, torch.fmod(x, n), torch.div(x, n, rounding_mode="trunc")
    for dtype in (torch.int8, torch.int64):
        x = torch.tensor([-128, -7, -1, 0, 3, 127], device=device).to(dtype)
        compiled = compile_fx(torch.fx.symbolic_trace(fn), [x, 3])
        for n in (3, 5, 0, 256, -3):
            want, got = _run(fn, x, n), _run(compiled, x, n)
            if isinstance(want, str):
                assert got == want, (dtype, n)
            else:
                assert all(torch.equal(g, w) for g, w in zip(got, want)), (dtype, n)

    def by_size(x):
        return x // x.shape[0], x % x.shape[0]
    counters.clear()
    for rows in (4, 5):
        x = torch.arange(-10, 10, device=device)[:rows * 2].reshape(rows, 2)
        compiled = compile_fx(torch.fx.symbolic_trace(by_size), [x])
        assert all(torch.equal(g, w) for g, w in zip(compiled(x), by_size(x)))
    assert counters["fallbacks"] == 0, dict(counters)


def test_an_integer_division_by_a_size_expression_known_nonzero_is_generated(device):
    """A divisor of sizes that the ShapeEnv's ranges make nonzero (`s0 - 1`, `s1 // 2`,
    `1 - s0`: sizes are at least 2) cannot be 0: it is generated, as a size is."""
    def fn(x):
        return (x // (x.shape[0] - 1), x % (x.shape[1] // 2),
                torch.div(x, 1 - x.shape[0], rounding_mode="floor"))
    for dtype in (torch.int32, torch.int64):
        counters.clear()
        x = torch.zeros(3, 4, device=device, dtype=dtype)
        compiled = compile_fx(torch.fx.symbolic_trace(fn), [x])
        for rows, cols in ((3, 4), (2, 2), (4, 5), (5, 7)):
            x = torch.arange(-17, rows * cols - 17, device=device).to(dtype).reshape(rows, cols)
            assert all(torch.equal(g, w) for g, w in zip(compiled(x), fn(x))), (dtype, rows)
        assert len(compiled.versions) == 2 and counters["fallbacks"] == 0, dict(counters)


def test_a_float_constant_cast_to_an_integer_casts_as_a_tensor_does(device):
    """A float constant out of the integer dtype's range (or NaN) converts as the kernels'
    cast of a tensor does: it was wrapped as an int (1e10 to int32 gave 1410065408, CPU eager
    gives -2**31)."""
    i = torch.arange(4, device=device, dtype=torch.int32)
    fns = [lambda i: i + torch.full((4,), 1e10, device=i.device).to(torch.int32),
           lambda i: i + torch.full((4,), -3e9, dtype=torch.float64, device=i.device).int(),
           lambda i: i.long() + torch.full((4,), 1e20, device=i.device).long(),
           lambda i: i.to(torch.int8) + torch.full((4,), 300.7, device=i.device).to(torch.int8)]
    for fn in fns:
        compiled = compile_fx(torch.fx.symbolic_trace(fn), [i])
        got, want = compiled(i), fn(i)
        if device == "cpu" or fn is fns[-1]:  # (out of range, the cast is the device's own)
            assert torch.equal(got, want), (got, want)


def test_float64_to_half_rounds_through_float32_as_eager(device):
    """c10 converts a double to half through float (`Half(float)`): a value just above the
    midpoint of two halves becomes the midpoint in float32, which rounds to even. Triton's
    direct conversion rounded it once, up (1 + 2**-11 + 2**-40 gave 1.0009765625, eager 1.0)."""
    v = 1 + 2**-11 + 2**-40
    a = torch.tensor([v, -v, 1 + 2**-8 + 2**-40, 3.0], dtype=torch.float64, device=device)
    for fn in [lambda a: (a * 1).half(), lambda a: (a * 1).half().float() + 1,
               lambda a: (a * 1).sum(dtype=torch.float16),
               lambda a: (a * 1).cumsum(0, dtype=torch.float16)]:
        got, want = compile_fx(torch.fx.symbolic_trace(fn), [a])(a), fn(a)
        assert got.dtype == want.dtype and torch.equal(got, want), (got, want)


def test_a_float_constant_cast_to_another_float_dtype_rounds_as_a_tensor_does(device):
    """An explicit cast of a constant to a narrower float dtype rounds, also when a wider cast
    follows (folding kept the Python float: `full(0.1).double()` gave 0.1, eager
    0.10000000149011612; `.bfloat16().float()` kept every bit)."""
    x = torch.zeros(4, dtype=torch.float64, device=device)
    v, b = 1 + 2**-11 + 2**-40, 1 + 2**-8 + 3 * 2**-11
    fns = [lambda x: x + torch.full((4,), 0.1, device=x.device).double(),
           lambda x: x + torch.full((4,), 0.1, dtype=torch.float64, device=x.device).float()
           .double(),
           lambda x: x + torch.full((4,), b, device=x.device).bfloat16().double(),
           lambda x: x + torch.full((4,), v, dtype=torch.float64, device=x.device).half()
           .double(),
           lambda x: (x + 1, torch.full((4,), v, dtype=torch.float64, device=x.device).half())]
    for fn in fns:
        got, want = compile_fx(torch.fx.symbolic_trace(fn), [x])(x), fn(x)
        got, want = (got, want) if isinstance(want, tuple) else ((got,), (want,))
        assert all(g.dtype == w.dtype and torch.equal(g, w) for g, w in zip(got, want)), \
            (got, want)


def test_a_float64_pow_is_as_precise_as_eager(device):
    """A float64 `pow` by another exponent than the written-out ones keeps `log|a|` and its
    product by `b` in two parts (special_functions.pow_float64): `exp2(b * log2|a|)` in
    float64 was hundreds of ulps off where `b * log2|a|` is large (`1e200 ** 1.5` gave
    1.00000000000009e300)."""
    x = torch.tensor([1e200, 3.7e150, 12345.678, 0.5], dtype=torch.float64, device=device)
    y = torch.tensor([1.5, -1.3, 7.25, 300.3], dtype=torch.float64, device=device)
    for fn in [lambda x, y: (x * 1) ** 1.5, lambda x, y: 10.0 ** (y * 2),
               lambda x, y: (x * 1) ** y]:
        got, want = compile_fx(torch.fx.symbolic_trace(fn), [x, y])(x, y), fn(x, y)
        # (on CUDA, libdevice's pow and exp: within 2 and 1 ulps, so 3.5 ulps apart at most)
        torch.testing.assert_close(got, want, rtol=4e-16 if device == "cpu" else 8e-16, atol=0)
    assert counters["fallbacks"] == 0


def test_an_integer_tensor_in_half_arithmetic_is_converted_to_half_first(device):
    """Eager converts a tensor operand to the result's dtype (2049 is 2048 in half); computed
    as float32, `int64 + 0-d half` gave 2050. Python numbers stay float, as in eager."""
    ints = torch.tensor([2049, 4097, -2049, 3], device=device)
    for dtype in (torch.float16, torch.bfloat16):
        h = torch.tensor(0.5, dtype=dtype, device=device)
        for fn in (lambda a, h: a + h, lambda a, h: a * (h * 2), lambda a, h: h / a,
                   lambda a, h: torch.div(a, h + 2.5, rounding_mode="floor"),
                   lambda a, h: (a > 0) + h + 1.0001):
            compiled = compile_fx(torch.fx.symbolic_trace(fn), [ints, h])
            got, want = compiled(ints, h), fn(ints, h)
            assert got.dtype == want.dtype and torch.equal(got, want), (fn, got, want)


def test_a_one_element_second_operand_of_a_half_mul_or_div_is_not_rounded_on_cpu(device):
    """CPU eager's `mul` and `div` of a half type read a second operand of one element as it
    is (`original_scalar_value`): `half_x * tensor(0.1)` multiplies by float32 0.1, not
    half(0.1), unlike `add` or `tensor(0.1) * half_x`, which convert it first."""
    if device != "cpu":
        pytest.skip("eager's CPU kernels for half types")
    x = torch.randn(512) * 10
    for dtype in (torch.float16, torch.bfloat16):
        h = x.to(dtype)
        for s in (torch.tensor(0.1), torch.tensor([2049]), torch.tensor(-0.3)):
            for fn in (lambda a, s: a * s, lambda a, s: a / s, lambda a, s: s * a,
                       lambda a, s: a + s, lambda a, s: a.clone().mul_(s),
                       lambda a, s: torch.div(a, s, rounding_mode="floor"),
                       lambda a, s: torch.div(a, s, rounding_mode="trunc")):
                compiled = compile_fx(torch.fx.symbolic_trace(fn), [h, s])
                got, want = compiled(h, s), fn(h, s)
                assert got.dtype == want.dtype and torch.equal(got, want), (dtype, s, got, want)


def test_a_tensor_operand_of_a_half_addcmul_addcdiv_or_xlogy_is_converted_first(device):
    """CPU eager converts a 0-d operand of another dtype to the half result's dtype in
    `addcmul`, `addcdiv` and `xlogy` (torch's decompositions compute with it in float32:
    `addcmul(h, h, tensor(0.1))` was an ulp off in 1 of 10 values)."""
    if device != "cpu":
        pytest.skip("eager's CPU kernels for half types")
    torch.manual_seed(0)
    x, y = torch.randn(1024), torch.randn(1024)
    for dtype in (torch.float16, torch.bfloat16):
        a, b = x.to(dtype), y.to(dtype)
        for s in (torch.tensor(0.1), torch.tensor(-0.3), torch.tensor(2049)):
            for fn in (lambda a, b, s: torch.addcmul(a, b, s, value=3),
                       lambda a, b, s: torch.addcmul(s, a, b),
                       lambda a, b, s: torch.addcdiv(a, b, s),
                       lambda a, b, s: torch.addcdiv(a, s, b, value=-2)):
                compiled = compile_fx(torch.fx.symbolic_trace(fn), [a, b, s])
                got, want = compiled(a, b, s), fn(a, b, s)
                assert got.dtype == want.dtype and torch.equal(got, want), (dtype, s, got, want)
            # eager also rounds the log to half; the kernels keep it in float32
            fn = lambda a, b, s: torch.xlogy(a, s.abs())  # noqa: E731
            got = compile_fx(torch.fx.symbolic_trace(fn), [a, b, s])(a, b, s)
            want = (a.float() * s.abs().to(dtype).float().log()).to(dtype)
            assert torch.equal(got, want), (dtype, s, got, want)


def test_a_tensor_operand_of_a_half_remainder_fmod_or_pow_is_converted_first(device):
    """Eager converts a tensor operand of another dtype to the half result's dtype in `%`,
    `fmod` and `**` too (c79247f converted it only in add/sub/mul/div): `half_x % tensor(0.1)`
    is `% half(0.1)`, `tensor(2049) % half_x` is `2048 % half_x`, and `-11.25 ** tensor(2049)`
    is inf (2049 is 2048 in half), not -inf."""
    x = torch.tensor([3.5, -11.2578125, 23.015625, 0.31591796875, -4.8125, 7.0, -2.0, 1.5],
                     device=device)
    for dtype in (torch.float16, torch.bfloat16):
        h = x.to(dtype)
        for s in (torch.tensor(0.1), torch.tensor(-0.3), torch.tensor(2049), torch.tensor(257),
                  torch.tensor(5.0013)):
            s = s.to(device)
            for fn in (lambda a, s: a % s, lambda a, s: s % a, lambda a, s: torch.fmod(a, s),
                       lambda a, s: torch.fmod(s, a), lambda a, s: torch.remainder(a, s)):
                compiled = compile_fx(torch.fx.symbolic_trace(fn), [h, s])
                got, want = compiled(h, s), fn(h, s)
                assert got.dtype == want.dtype and torch.equal(got, want), (dtype, s, got, want)
            if s.dtype == torch.int64 or s.item() == 5.0013:  # (whole powers: exact)
                fn = lambda a, s: a ** s  # noqa: E731
                compiled = compile_fx(torch.fx.symbolic_trace(fn), [h, s])
                got, want = compiled(h, s), fn(h, s)
                assert got.dtype == want.dtype and torch.equal(got, want), (dtype, s, got, want)



def test_an_int_constant_cast_to_float_is_rounded_once(device):
    """`full(2**60 + 2**36 + 1).float()` is rounded once, as torch converts it (through a
    Python float it was rounded twice: 2**60)."""
    x = torch.zeros(5, device=device)
    for dtype in (torch.float32, torch.float16, torch.float64):
        def fn(x, dtype=dtype):
            big = torch.full((5,), 2**60 + 2**36 + 1, dtype=torch.int64, device=x.device)
            return big.to(dtype) + x.to(dtype)

        got = compile_fx(torch.fx.symbolic_trace(fn), [x])(x)
        assert torch.equal(got, fn(x)), (dtype, got, fn(x))


def test_arange_with_bool_bounds_and_step(device):
    """`arange(False, True, True)` (an OpInfo sample): bools are ints to Python, Boolean atoms
    to sympy (an internal TypeError)."""
    x = torch.zeros(1, device=device)
    for dtype in (torch.float32, torch.float16, torch.int64):
        def fn(x, dtype=dtype):
            return torch.arange(False, True, True, dtype=dtype, device=x.device) + x.to(dtype)

        got = compile_fx(torch.fx.symbolic_trace(fn), [x])(x)
        assert torch.equal(got, fn(x)), (dtype, got)
