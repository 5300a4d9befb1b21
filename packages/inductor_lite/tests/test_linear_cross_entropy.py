"""`F.linear_cross_entropy` with chunking options (linear_cross_entropy.py): its custom ops
traced as a matmul and a cross entropy, compared with eager, with no fallback."""

import pytest
import torch
import torch.nn.functional as F

pytest.importorskip("torch.nn.modules.linear_cross_entropy",
                    reason="F.linear_cross_entropy's options came in torch 2.12")
from torch.nn import LinearCrossEntropyOptions  # noqa: E402

from fxtrace import make_fx  # noqa: E402
from inductor_lite import compile_fx, counters  # noqa: E402


def compiled_and_eager(fn, *inputs):
    """(compiled result, eager result) of `fn` on `inputs`."""
    compiled = compile_fx(make_fx(fn)(*[x.clone() for x in inputs]), list(inputs))
    return compiled(*inputs), fn(*inputs)


def chunked(reduction, ignore_index=-100, bias=False, weighted=False):
    options = LinearCrossEntropyOptions(batch_chunk_size=3)

    def fn(x, w, t, b, cw):
        return F.linear_cross_entropy(x, w, t, linear_bias=b if bias else None,
                                      weight=cw if weighted else None, reduction=reduction,
                                      ignore_index=ignore_index, options=options)
    return fn


def inputs(n=7, features=5, classes=11, dtype=torch.float32, device="cpu", ignore_index=-100):
    x = torch.randn(features, n, dtype=dtype, device=device).t()  # not contiguous
    w = torch.randn(classes, features, dtype=dtype, device=device)
    t = torch.randint(0, classes, (n,), device=device)
    t[1::2] = ignore_index
    b = torch.randn(classes, dtype=dtype, device=device)
    cw = torch.rand(classes, dtype=dtype, device=device) + 0.5
    return x, w, t, b, cw


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("ignore_index", [-100, 4])
@pytest.mark.parametrize("bias,weighted", [(False, False), (True, True)])
def test_generated_and_equal_to_eager(device, reduction, ignore_index, bias, weighted):
    got, expected = compiled_and_eager(chunked(reduction, ignore_index, bias, weighted),
                                       *inputs(device=device, ignore_index=ignore_index))
    assert counters["fallbacks"] == 0 and counters.get("eager_graphs", 0) == 0
    torch.testing.assert_close(got, expected)


def test_float64_and_an_unbatched_input(device):
    x, w, t, b, cw = inputs(dtype=torch.float64, device=device)
    got, expected = compiled_and_eager(chunked("mean", bias=True), x[0], w, t[0], b, cw)
    assert counters["fallbacks"] == 0 and got.shape == ()
    torch.testing.assert_close(got, expected)


def test_mean_of_rows_all_ignored_is_nan(device):
    x, w, t, b, cw = inputs(device=device)
    t.fill_(-100)
    got, expected = compiled_and_eager(chunked("mean", weighted=True), x, w, t, b, cw)
    assert counters["fallbacks"] == 0 and got.isnan() and expected.isnan()


def test_half_input_accumulated_in_float32_is_left_to_the_op(device):
    got, expected = compiled_and_eager(chunked("sum"), *inputs(dtype=torch.bfloat16,
                                                                device=device))
    assert counters["fallbacks"] == 1
    torch.testing.assert_close(got, expected)


def test_a_target_out_of_range_raises(device):
    from inductor_lite import config

    if not config.triton_on_cpu:
        pytest.skip("bounds are checked for sure only by Triton's interpreter")
    x, w, t, b, cw = inputs(device=device)
    fn = chunked("none")
    compiled = compile_fx(make_fx(fn)(x, w, t, b, cw), [x, w, t, b, cw])
    t[0] = 11
    with pytest.raises(IndexError, match="index out of bounds"):
        compiled(x, w, t, b, cw)
