"""Graph breaks in frames whose variables a nested function captured: the resume functions
share the frame's cell objects, so writes before and after the break reach every closure."""

from __future__ import annotations

import io
import traceback
import warnings

import torch
from counting import counting_backend
from torch import nn

import dynamo


def _compiled_and_eager(fn, *inputs):
    """`fn` compiled (no frame may run eagerly) and run on each of `inputs`, against eager;
    the results, eager's then compiled's, and the graphs the compiled runs made."""
    backend, graphs = counting_backend("eager")
    compiled = dynamo.compile(fn, backend=backend)
    results = []
    for args in inputs:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a frame run eagerly warns
            got = compiled(*args)
        expected = fn(*args)
        torch.testing.assert_close(_tensors(got), _tensors(expected))
        results.append((expected, got))
    return results, graphs


def _tensors(value):
    if isinstance(value, tuple):
        return tuple(v for v in value if isinstance(v, torch.Tensor))
    return value


def _lambda_then_break(x):
    k = x * 2
    scaled = lambda t: t * k  # noqa: E731
    print(end="", file=io.StringIO())
    k = k + 1  # the lambda made before the break sees this write
    return scaled(x), scaled


def test_a_lambda_made_before_a_break_sees_a_write_after_it() -> None:
    results, graphs = _compiled_and_eager(_lambda_then_break, (torch.randn(3),),
                                          (torch.randn(3),))
    assert len(graphs) == 2
    (_, (_, scaled)), _ = results
    torch.testing.assert_close(scaled.__closure__[0].cell_contents, scaled(torch.ones(3)))


def _nonlocal_written_after_the_break(x):
    total = x

    def add(t):
        nonlocal total
        total = total + t

    add(x)
    print(end="", file=io.StringIO())
    add(x * 2)  # written through the nested function's cell: the frame reads it below
    return total * 3


def test_a_nested_function_writes_a_variable_the_frame_reads_after_the_break() -> None:
    _, graphs = _compiled_and_eager(_nonlocal_written_after_the_break, (torch.randn(3),),
                                    (torch.randn(3),))
    assert len(graphs) == 2


def _closures_on_both_sides(x):
    y = x + 1
    before = lambda: y  # noqa: E731
    print(end="", file=io.StringIO())
    after = lambda: y * 2  # noqa: E731
    y = y * 3
    return before() + after(), before, after


def test_closures_made_on_both_sides_of_a_break_hold_the_same_cell() -> None:
    results, graphs = _compiled_and_eager(_closures_on_both_sides, (torch.randn(3),),
                                          (torch.randn(3),))
    assert len(graphs) == 2
    for _, (_, before, after) in results:
        assert before.__closure__[0] is after.__closure__[0]


def _break_in_a_loop(x):
    scale = 1
    times = lambda t: t * scale  # noqa: E731
    outputs = []
    for _ in range(3):
        scale = scale + 1
        print(end="", file=io.StringIO())
        outputs.append(times(x))
    return torch.stack(outputs)


def test_a_break_inside_a_loop_over_a_closure() -> None:
    _, graphs = _compiled_and_eager(_break_in_a_loop, (torch.randn(3),), (torch.randn(3),))
    assert len(graphs) == 4  # before the loop, and one per iteration's print


class _Checkpointed(nn.Module):
    """The shape of a checkpointed layer: a `custom_forward` over a local, then `.item()`."""

    def __init__(self) -> None:
        super().__init__()
        self.first, self.second = nn.Linear(4, 4), nn.Linear(4, 4)

    def forward(self, x):
        module = self.first

        def custom_forward(*inputs):
            return module(*inputs)

        y = custom_forward(x)
        if y.sum().item() > 0:
            module = self.second  # custom_forward runs the second layer from now on
        return custom_forward(y)


def test_a_forward_with_a_custom_forward_breaks_at_item() -> None:
    model = _Checkpointed()
    with torch.no_grad():
        model.first.weight.copy_(torch.eye(4))
        model.first.bias.zero_()
        _, graphs = _compiled_and_eager(model, (torch.ones(2, 4),), (-torch.ones(2, 4),))
    assert len(graphs) == 3  # up to the `.item()`, and one for each way it went


def _eval_of_a_cell_variable(x):
    k = x + 1
    read = lambda: k  # noqa: E731
    first = eval("k * 2")  # (reads the frame's variables, the cell's too)
    print(end="", file=io.StringIO())
    k = k + 1
    return first + eval("k * 3") + read(), sorted(dir())


def test_eval_and_dir_at_a_break_see_the_cell_variables() -> None:
    results, graphs = _compiled_and_eager(_eval_of_a_cell_variable, (torch.randn(3),),
                                          (torch.randn(3),))
    for (_, expected_names), (_, got_names) in results:
        assert got_names == expected_names
    assert len(graphs) == 3


def _outcome(fn, *args):
    """What calling `fn` gives: its result, or the type, message and traceback line of what it
    raised."""
    try:
        return "returned", fn(*args)
    except Exception as error:
        line = traceback.extract_tb(error.__traceback__)[-1].lineno
        return "raised", type(error), str(error), line


def _same_outcome(fn, *args) -> tuple:
    got = _outcome(dynamo.compile(fn, backend="eager"), *args)
    expected = _outcome(fn, *args)
    if expected[0] == "returned" and not isinstance(expected[1], str):
        assert got[0] == "returned"
        torch.testing.assert_close(got[1], expected[1])
    else:
        assert got == expected
    return expected


def _deleted_cell_read_after_a_break(x):
    y = x + 1
    read = lambda: y  # noqa: E731, F841, F821
    del y
    print(end="", file=io.StringIO())
    return y  # noqa: F821


def _deleted_cell_read_by_the_closure_after_a_break(x):
    y = x + 1
    read = lambda: y  # noqa: E731, F821
    del y
    print(end="", file=io.StringIO())
    return read()


def _deleted_cell_assigned_again_after_a_break(x):
    y = x + 1
    read = lambda: y  # noqa: E731
    del y
    print(end="", file=io.StringIO())
    y = x * 3  # the closure made before the break sees this value
    return read(), y


def _cell_deleted_in_a_loop_that_breaks(x):
    total = x
    for i in range(3):
        y = x + i
        read = lambda: y  # noqa: E731, F821, B023
        total = total + read()
        del y
        print(end="", file=io.StringIO())
    return total, y  # noqa: F821


def _deleted_cell_caught_after_a_break(x):
    y = x + 1
    read = lambda: y  # noqa: E731, F841, F821
    del y
    print(end="", file=io.StringIO())
    try:
        return y  # noqa: F821
    except UnboundLocalError as error:  # (a NameError of a free variable is not one)
        return str(error)


def _deleted_cell_deleted_again_after_a_break(x):
    y = x + 1
    read = lambda: y  # noqa: E731, F841, F821
    del y
    print(end="", file=io.StringIO())
    del y  # noqa: F821
    return x


def _deleted_local_read_after_a_break(x):
    y = x + 1
    del y
    print(end="", file=io.StringIO())
    return y  # noqa: F821


def test_a_deleted_cell_read_after_a_break_raises_unbound_local_error() -> None:
    # The frame's own cell, empty, read by the frame: UnboundLocalError, as in eager (the
    # resume function takes the cell in its closure, where an empty one raised NameError)
    for fn in (_deleted_cell_read_after_a_break, _cell_deleted_in_a_loop_that_breaks,
               _deleted_cell_deleted_again_after_a_break, _deleted_local_read_after_a_break):
        outcome = _same_outcome(fn, torch.randn(3))
        assert outcome[1:3] == (UnboundLocalError, "cannot access local variable 'y' where "
                                                   "it is not associated with a value")
    _, message = _same_outcome(_deleted_cell_caught_after_a_break, torch.randn(3))
    assert "local variable 'y'" in message


def test_a_deleted_cell_stays_shared_with_its_closure_after_a_break() -> None:
    outcome = _same_outcome(_deleted_cell_read_by_the_closure_after_a_break, torch.randn(3))
    assert outcome[1] is NameError and "free variable 'y'" in outcome[2]
    _same_outcome(_deleted_cell_assigned_again_after_a_break, torch.randn(3))
