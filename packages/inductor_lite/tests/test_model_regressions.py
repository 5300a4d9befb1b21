"""Minimal programs of what real models (Hugging Face architectures) met in inductor_lite: each
compiles to generated code and gives eager's values."""

import torch

from inductor_lite import compile_fx, counters


def _relative_shift_then_mask(q, r, mask):
    # Funnel's attention: an einsum's result (a permuted matmul) reshaped as views, sliced, and
    # written in place
    scores = torch.einsum("binh,tnh->bnit", q, r)
    b, n, s, m = scores.shape
    scores = torch.reshape(scores, [b, n, m, s])[:, :, 1:, :]
    scores = torch.reshape(scores, [b, n, s, m - 1])[..., :s]
    scores.mul_(mask)
    return scores


def test_a_write_through_views_of_a_permuted_matmul_result_is_compiled(device):
    # functionalization scatters the write back through the views (slice_scatter) and takes
    # the views again of the result: torch's decomposition laid it out contiguous, where the
    # permuted base's `view` could not be taken, and the graph ran as it came
    q, r = torch.randn(2, 8, 4, 16, device=device), torch.randn(16, 4, 16, device=device)
    mask = torch.randn(8, 8, device=device)
    compiled = compile_fx(torch.fx.symbolic_trace(_relative_shift_then_mask), [q, r, mask])
    torch.testing.assert_close(compiled(q, r, mask), _relative_shift_then_mask(q, r, mask))
    assert counters["eager_graphs"] == 0 and counters["fallbacks"] == 0, dict(counters)
    assert counters["kernels"] >= 1



def _positions(x):
    # XLNet's and Funnel's relative positions: whole float bounds and steps, an integer result
    return x + torch.arange(0, 16, 2.0, dtype=torch.int64, device=x.device) + torch.arange(
        8.0, 0.0, -1.0, dtype=torch.int64, device=x.device)


def test_an_integer_arange_of_whole_float_bounds_is_generated(device):
    x = torch.arange(8, device=device)
    compiled = compile_fx(torch.fx.symbolic_trace(_positions), [x])
    assert torch.equal(compiled(x), _positions(x))
    assert counters["fallbacks"] == 0 and counters["eager_graphs"] == 0, dict(counters)



def _chunks(q):
    # Longformer's `_chunk`: heads split off, then windows overlapping by half, as_strided
    q = q.view(16, 2, 2, 4).transpose(0, 1).transpose(1, 2).reshape(4, 16, 4).view(4, 4, 4, 4)
    return q.as_strided((4, 7, 4, 4), (4, 32, 16, 1))


def _rescaled_query_chunks(x, w):
    q = torch.nn.functional.linear(x, w)
    q.div_(2.0)  # (Longformer's `query /= math.sqrt(head_dim)`)
    return _chunks(q) * 1.0


def _chunks_of_next_layer(x, w):
    s = torch.nn.functional.linear(x, w)
    s.select(2, 0).add_(1.0)  # (a write: what is made from `s` is made from a written tensor)
    k = _chunks(torch.nn.functional.linear(s, w))
    return s, torch.einsum("bcxd,bcyd->bcxy", k, k)


def test_as_strided_chunks_of_a_rescaled_or_multiplied_tensor_are_compiled(device):
    # A tensor only rescaled in place keeps its layout when functionalized, and a matmul lays
    # its result out afresh: the as_strided views read what eager's read, where the whole graph
    # ran as it came (Longformer's encoder ran eagerly)
    x, w = torch.randn(16, 2, 8, device=device), torch.randn(8, 8, device=device)
    for fn in (_rescaled_query_chunks, _chunks_of_next_layer):
        counters.clear()
        compiled = compile_fx(torch.fx.symbolic_trace(fn), [x, w])
        torch.testing.assert_close(compiled(x, w), fn(x, w))
        assert counters["eager_graphs"] == 0 and counters["graphs"] == 1, (fn, dict(counters))
