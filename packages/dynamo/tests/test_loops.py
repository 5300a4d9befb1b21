"""Graph breaks inside loops: long loops, nested loops, while loops, `break`, loops over inputs,
and operators applied for real."""

from __future__ import annotations

import torch
from torch import nn

import dynamo


def _compiled(fn):
    graphs = []
    compiled = dynamo.compile(fn, backend=lambda gm, ex: graphs.append(gm) or gm.forward)
    return compiled, graphs


def test_a_long_loop_neither_recurses_nor_recompiles_per_iteration() -> None:
    def f(x, n):
        for i in range(n):
            x = x * 0.999 + i
            print(end="")
        return x

    compiled, graphs = _compiled(f)
    x = torch.randn(4)
    torch.testing.assert_close(compiled(x, 2000), f(x, 2000))  # past the recursion limit
    assert len(graphs) == 2  # the first iteration's, and the rest's (a symbolic counter)


def test_the_break_at_the_header_of_a_loop_whose_body_broke_names_its_iterator() -> None:
    def f(x, n):
        total = 0.0
        for k in range(n):
            total += (x * k).sum().item()
        return total

    explained = dynamo.explain(f)(torch.ones(3), 3)
    assert [b.reason for b in explained.breaks] == [
        "Tensor.item() reads the tensor's data",
        "the next item of a range_iterator from outside the trace (a loop's iterator that a "
        "graph break in its body handed on, or one passed in)"]
    assert explained.result == 9.0


def test_a_list_comprehension_breaking_per_item_does_not_recompile_per_item(recwarn) -> None:
    """The half-built list a break hands on is appended to, not read: its length is not
    guarded (it was, so each item recompiled until the cache limit made the frame eager)."""
    def f(x):
        return [t.item() for t in x]

    compiled, graphs = _compiled(f)
    x = torch.arange(20.0)
    assert compiled(x) == f(x) and compiled(x + 1) == f(x + 1)
    assert len(graphs) <= 6 and not [w for w in recwarn if "cache size limit" in str(w.message)]


def test_a_break_in_an_inner_loop_with_both_counters_live_stays_compiled(recwarn) -> None:
    def f(x):
        for i in range(4):
            for j in range(3):
                x = x * 1.1 + i - j
                print(end="")
        return x

    compiled, graphs = _compiled(f)
    x = torch.randn(3)
    for _ in range(2):
        torch.testing.assert_close(compiled(x), f(x))
    assert len(graphs) <= 3 and not [w for w in recwarn if "cache size limit" in str(w.message)]


def test_nested_loops_while_loops_and_break() -> None:
    def f(x):
        i = 0
        while i < 3:
            for j in range(2):
                x = x + i * j
                dynamo.graph_break()
                if j == 1 and i == 2:
                    break
            i += 1
        return x

    compiled, graphs = _compiled(f)
    x = torch.randn(3)
    torch.testing.assert_close(compiled(x), f(x))
    torch.testing.assert_close(compiled(x + 1), f(x + 1))


def test_loop_over_an_input_list_with_a_break_inside() -> None:
    def f(tensors):
        total = tensors[0] * 0
        for t in tensors:
            total = total + t.sin()
            print(end="")
        return total

    compiled, graphs = _compiled(f)
    tensors = [torch.randn(3) for _ in range(5)]
    torch.testing.assert_close(compiled(tensors), f(tensors))


def test_operators_the_trace_cannot_apply_run_for_real() -> None:
    class Table(dict):
        def __getitem__(self, key):  # a custom lookup the trace does not follow
            return super().get(key, 0.5)

    class Holder(nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = nn.Parameter(torch.ones(()))

    table, holder = Table(a=2.0), Holder()

    def f(x):
        y = x * table["a"] + table["missing"]
        holder.scale = nn.Parameter(torch.full((), 3.0))  # registers a parameter: for real
        return y * holder.scale

    compiled, graphs = _compiled(f)
    x = torch.randn(3)
    expected = f(x)
    holder.scale = nn.Parameter(torch.ones(()))
    torch.testing.assert_close(compiled(x), expected)
    assert float(holder.scale.detach()) == 3.0
    report = dynamo.explain(f)(x)
    assert report.eager == [] and report.graph_break_count >= 2


def test_a_loop_over_parameters_of_many_shapes_breaking_per_item(recwarn) -> None:
    """A parameter keeps static sizes, but the item of a loop over parameters of many shapes,
    one break per item, gets symbols for the dims seen to change: a few compilations, not one
    per shape until the cache size limit makes the frame eager."""
    widths = [3, 4, 5, 6, 7, 8, 9, 10]
    model = nn.Sequential(*[nn.Linear(a, b) for a, b in zip(widths, widths[1:])])

    def norms(params):
        total = []
        for p in params:
            total.append((p * 2).sum().item())  # a break per parameter
        return total

    compiled, graphs = _compiled(norms)
    for _ in range(2):
        assert compiled(list(model.parameters())) == norms(list(model.parameters()))
    assert len(graphs) <= 8 and not [w for w in recwarn if "cache size limit" in str(w.message)]
