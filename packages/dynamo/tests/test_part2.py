"""Graph breaks beyond the corpus: explain, logging, scalar capture, fullgraph, callees,
side effects' identity, and grad mode across a break."""

from __future__ import annotations

import io
import logging
import os
import subprocess
import sys
import warnings

import pytest
import torch
from counting import counting_backend
from torch import nn

import dynamo
from dynamo import logs
from dynamo.backends import lookup_backend


def _breaks_inside(x):
    dynamo.graph_break("here")
    return x


def _calls_breaking(x):
    return _breaks_inside(x) * 2


def test_a_break_in_a_callee_names_the_calls_that_led_there() -> None:
    def f(x):
        return _calls_breaking(x) + 1

    with pytest.raises(dynamo.Unsupported) as error:
        dynamo.compile(f, fullgraph=True)(torch.ones(3))
    lines = str(error.value).splitlines()
    assert lines[0] == "graph_break() called: here"
    assert lines[-2:] == [
        f"  called from _calls_breaking at {__file__}:{_calls_breaking.__code__.co_firstlineno + 1}",
        f"  called from f at {__file__}:{f.__code__.co_firstlineno + 1}"]


def test_explain_reports_a_break_inside_a_called_function_once() -> None:
    report = dynamo.explain(lambda x: _breaks_inside(x) + 1)(torch.ones(3))
    assert [b.reason for b in report.breaks] == ["graph_break() called: here"]


def _breaking(x):
    a = x * 2
    print(end="")
    if a.sum() > 0:
        return a + 1
    return a - 1


def test_explain_counts_graphs_breaks_and_ops() -> None:
    report = dynamo.explain(_breaking)(torch.ones(3))
    assert report.graph_count == 3 and report.graph_break_count == 2
    assert report.ops_per_graph == [["mul"], ["sum", "gt"], ["add"]]
    reasons = [b.reason for b in report.breaks]
    assert reasons[0] == "print()" and "tensor's value" in reasons[1]
    assert all(b.filename.endswith("test_part2.py") for b in report.breaks)
    text = str(report)
    assert "3 graph(s), 2 graph break(s)" in text and "test_part2.py:" in text
    assert any("L['x'] is a Tensor(3)" in g for g in report.guards)


def _nonzero_rows(x):
    idx = torch.nonzero(x > 0)
    if idx.shape[0] == 0:
        return x
    return x[idx[:, 0]]


def test_a_data_dependent_break_names_the_traced_line_only() -> None:
    """fakecore's errors name the innermost frame of the user's on the real stack: while
    tracing, that is the caller of the compiled function, not the line traced."""
    (brk,) = dynamo.explain(_nonzero_rows)(torch.randn(5)).breaks
    assert brk.lineno == _nonzero_rows.__code__.co_firstlineno + 2
    assert "depends on data" in brk.reason and " (at " not in brk.reason, brk.reason


def test_explain_takes_what_compile_returned_too() -> None:
    assert dynamo.explain(dynamo.compile(_breaking))(torch.ones(3)).graph_count == 3
    assert dynamo.explain(dynamo.compile(torch.nn.Linear(2, 2)))(torch.ones(1, 2)).graph_count == 1


def test_explain_of_what_compile_returned_keeps_its_options() -> None:
    # explained with compile's defaults, a `capture_scalar_outputs=True` compilation was
    # reported breaking at its `.item()`, and a `dynamic=True` one with static sizes
    def scaled(x):
        return x * x.sum().item()

    class Scaled(nn.Module):
        def forward(self, x):
            return scaled(x)

    for compiled in (dynamo.compile(scaled, capture_scalar_outputs=True),
                     dynamo.compile(Scaled(), capture_scalar_outputs=True)):
        report = dynamo.explain(compiled)(torch.ones(3))
        assert (report.graph_count, report.graph_break_count) == (1, 0), str(report)
    assert dynamo.explain(scaled)(torch.ones(3)).graph_break_count == 1  # (the default)
    report = dynamo.explain(dynamo.compile(lambda x: x + 1, dynamic=True))(torch.ones(3))
    assert any("Tensor(*)" in g for g in report.guards), report.guards


def test_explain_leaves_compiled_state_alone() -> None:
    compiled = dynamo.compile(_breaking)
    compiled(torch.ones(3))
    before = len(compiled.cache)
    dynamo.explain(_breaking)(torch.ones(3))
    assert len(compiled.cache) == before


def test_fullgraph_raises_at_the_first_break() -> None:
    with pytest.raises(dynamo.Unsupported, match=r"(?s)print\(\).*test_part2.py:\d+"):
        dynamo.compile(_breaking, fullgraph=True)(torch.ones(3))


def test_logging_topics(caplog) -> None:
    assert logs.configure("graph_breaks,recompiles") == ["graph_breaks", "recompiles"]
    with pytest.raises(ValueError, match="unknown topics"):
        logs.configure("nonsense")
    compiled = dynamo.compile(lambda x: x + 1)
    with caplog.at_level(logging.DEBUG, logger="dynamo"):
        dynamo.compile(_breaking)(torch.ones(3))
        compiled(torch.ones(3))
        compiled(torch.ones(4))
    messages = [r.getMessage() for r in caplog.records]
    assert any(m.startswith("graph break in _breaking: print()") for m in messages)
    assert any("recompiling" in m and "size(0) is 4, not 3" in m for m in messages)


def test_capture_scalar_outputs_keeps_item_in_the_graph() -> None:
    def f(x):
        return x * x.sum().item()

    graphs = []
    compiled = dynamo.compile(f, capture_scalar_outputs=True,
                              backend=lambda gm, ex: graphs.append(gm) or gm.forward)
    x = torch.randn(4)
    torch.testing.assert_close(compiled(x), f(x))
    assert len(graphs) == 1 and any(n.target == "item" for n in graphs[0].graph.nodes)
    assert dynamo.explain(f)(x).graph_break_count == 1  # by default, item() breaks


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_float_and_int_of_a_tensor_are_its_item_when_captured(backend) -> None:
    """Under `capture_scalar_outputs`, `float(t)` and `int(t)` are `t.item()` converted, in the
    graph (they broke it, where `.item()` did not); `float` of a symbolic int stays symbolic."""
    def f(x):
        return x * float(x.mean()) + int(x.sum().long()) + float(x.sum().long())

    compiled = dynamo.compile(f, backend=backend, fullgraph=True, capture_scalar_outputs=True)
    for x in (torch.tensor([1.0, 2, -1.5]), torch.tensor([3.0, 2, 7.25])):
        torch.testing.assert_close(compiled(x), f(x))

    def g(x):
        return x * float(x.shape[0])

    counting, graphs = counting_backend(backend)
    compiled = dynamo.compile(g, backend=counting, dynamic=True)
    for n in (3, 5, 7):
        torch.testing.assert_close(compiled(torch.ones(n)), g(torch.ones(n)))
    assert len(graphs) == 1  # (float() asked for the size's value: a graph per size)


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_fixed_slices_of_a_masked_tensor_compile_in_one_graph(backend) -> None:
    # the mask's count is unbacked: `[:2]` and `[1:]` are Min/Max of it, not a branch on it
    def f(x):
        return x[x > 0][:2] * 2, x[x > 0][1:] + 1, x[x > 0][-1:].roll(1)

    compiled = dynamo.compile(f, backend=backend, fullgraph=True, capture_scalar_outputs=True)
    for x in (torch.tensor([1.0, -1, 2, 3, -4]), torch.tensor([-1.0, -2]), torch.tensor([5.0])):
        for got, want in zip(compiled(x), f(x)):
            torch.testing.assert_close(got, want)


def _checked_count(x):
    n = (x > 0).sum().item()
    torch._check(n >= 2)
    return x[:n] * 2


def _narrowed_mask(x):
    return x[x > 0].narrow(0, 0, 1) * 2


def _checked_nonzero(x):
    indices = x.nonzero()  # (its count is kept with the input's fake: the same in a re-trace)
    torch._check(indices.shape[0] <= 2)
    return indices * 2


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
@pytest.mark.parametrize(("fn", "good", "bad"), [
    (_checked_count, [1.0, 2.0, -1.0], [-1.0, -2.0, 3.0]),
    (_narrowed_mask, [1.0, 2.0, -1.0], [-1.0, -2.0, -3.0]),
    (_checked_nonzero, [0.0, 2.0, -1.0], [1.0, 2.0, -1.0]),
], ids=["check", "narrow", "nonzero"])
def test_facts_assumed_of_data_dependent_values_are_checked_at_run_time(backend, fn, good,
                                                                         bad) -> None:
    # `torch._check(n >= 2)`, narrow's bounds check on an unbacked count, a check of nonzero's
    # count (which aot_eager's re-trace shares): the trace assumes them, the graph checks them
    # (they passed silently, returning what eager refuses to)
    graphs = []

    def spy(gm, example_inputs):
        graphs.append(gm)
        return lookup_backend(backend)(gm, example_inputs)

    compiled = dynamo.compile(fn, backend=spy, fullgraph=True, capture_scalar_outputs=True)
    good, bad = torch.tensor(good), torch.tensor(bad)
    torch.testing.assert_close(compiled(good), fn(good))
    with pytest.raises(RuntimeError):
        fn(bad)
    with pytest.raises(RuntimeError):
        compiled(bad)
    (gm,) = graphs
    assert any(n.target is torch.ops.aten._assert_scalar.default for n in gm.graph.nodes)
    with pytest.raises(RuntimeError, match="Runtime assertion failed for expression"):
        gm(bad)


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_split_by_captured_lengths_of_a_dynamic_input(backend) -> None:
    # split_with_sizes asserts `s0 == u0 + u1 + u2` at run time: no replacement of the input's
    # size by data-dependent symbols (its shape guard raised ValueError out of the call)
    def f(x, lengths):
        return torch.split(x * 2, lengths.tolist())

    compiled = dynamo.compile(f, backend=backend, dynamic=True, capture_scalar_outputs=True)
    for x, lengths in ((torch.arange(7.0), [2, 4, 1]), (torch.arange(5.0), [2, 2, 1])):
        for got, want in zip(compiled(x, torch.tensor(lengths)), f(x, torch.tensor(lengths))):
            torch.testing.assert_close(got, want)
    with pytest.raises(RuntimeError, match="split_with_sizes"):
        compiled(torch.arange(7.0), torch.tensor([2, 2, 1]))


def test_break_in_a_callee_compiles_the_callee_on_its_own() -> None:
    def helper(t):
        t = t + 1
        print(end="")
        return t * 2

    def f(x):
        return helper(x) - 3

    compiled = dynamo.compile(f)
    x = torch.randn(3)
    torch.testing.assert_close(compiled(x), f(x))
    (callee,) = [ref() for ref in compiled._callees._weak.values()]
    assert len(callee.cache) == 1 and callee.cache.entries[0][1].breaks


def test_side_effects_keep_identity_and_order() -> None:
    class Box:
        pass

    def f(x, items, box):
        items.append(x)
        box.first = items[0]
        print(end="")
        items.append(x * 2)
        box.last = items[-1]
        return items

    box, items = Box(), []
    x = torch.ones(2)
    out = dynamo.compile(f)(x, items, box)
    assert out is items and len(items) == 2 and items[0] is x
    assert box.first is x and box.last is items[1]


def test_grad_mode_is_restored_when_a_break_inside_no_grad_raises() -> None:
    def f(x):
        with torch.no_grad():
            y = x * 2
            raise_it()
        return y

    def raise_it():
        raise KeyError("inside")

    with pytest.raises(KeyError):
        dynamo.compile(f)(torch.ones(2, requires_grad=True))
    assert torch.is_grad_enabled()


class _ChattyBlock(nn.Module):
    """A transformer block whose forward prints a shape and branches on a tensor's value."""

    def __init__(self) -> None:
        super().__init__()
        self.ln = nn.LayerNorm(16)
        self.attn = nn.MultiheadAttention(16, 2, batch_first=True)
        self.mlp = nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 16))

    def forward(self, x):
        h = self.ln(x)
        print("block input", tuple(h.shape), end="\r")
        x = x + self.attn(h, h, h, need_weights=False)[0]
        if x.abs().max() > 100:  # a guard against blow-ups, on the data
            x = x / x.abs().max()
        return x + self.mlp(self.ln(x))


def test_transformer_block_with_print_and_a_data_dependent_branch() -> None:
    block = _ChattyBlock().eval()
    compiled = dynamo.compile(block)
    for scale in (1.0, 1000.0):
        x = torch.randn(2, 5, 16) * scale
        torch.testing.assert_close(compiled(x), block(x))
    report = dynamo.explain(block.forward)(torch.randn(2, 5, 16))
    assert report.graph_break_count == 2 and report.graph_count == 3


def test_decorated_functions_and_dict_methods_reached_through_super() -> None:
    import functools

    def logged(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            return fn(*args, **kwargs)
        return wrapper

    class Registry(dict):
        def lookup(self, key):
            return super().get(key, 1.0)  # dict's own method, reached through super()

    registry = Registry(scale=2.0)

    @logged
    def f(x, name="scale"):
        code_names = f.__code__.co_varnames if hasattr(f, "__code__") else ()
        factor = registry.lookup(name)
        return x * factor * len(code_names), x.__class__ is torch.Tensor

    x = torch.randn(3)
    compiled = dynamo.compile(f)
    torch.testing.assert_close(compiled(x), f(x))
    torch.testing.assert_close(compiled(x, name="missing"), f(x, name="missing"))
    report = dynamo.explain(f)(x)
    assert report.eager == [] and report.graph_count == 1 and not report.breaks
    registry["scale"] = 3.0  # the items it read are guarded
    torch.testing.assert_close(compiled(x), f(x))


def test_breaks_with_captured_variables() -> None:
    def after(x):
        k = 3
        y = x * 2
        print(end="")
        g = lambda t: t * k  # noqa: E731 (the closure is made after the break)
        return g(y) + k

    def before(x):
        k = 3
        g = lambda t: t * k  # noqa: E731
        print(end="")
        k = 5  # the closure must see this write: its cell cannot be copied at the break
        return g(x)

    def read_only(x):
        k = 3
        g = lambda t: t * k  # noqa: E731 (made before the break; k is never written again)
        print(end="")
        return g(x) + k

    def comprehension(x):
        k = 3
        parts = [x * k for _ in range(2)]  # a closure on 3.11, dropped once it has run
        print(end="")
        k = 5
        return parts[0] + parts[1] * k

    x = torch.randn(3)
    torch.testing.assert_close(dynamo.compile(comprehension)(x), comprehension(x))
    assert dynamo.explain(comprehension)(x).eager == []
    torch.testing.assert_close(dynamo.compile(after)(x), after(x))
    assert dynamo.explain(after)(x).graph_count == 2
    torch.testing.assert_close(dynamo.compile(read_only)(x), read_only(x))
    assert dynamo.explain(read_only)(x).eager == []
    # the resume function shares the frame's cells with the closure made before the break
    torch.testing.assert_close(dynamo.compile(before)(x), before(x))
    assert dynamo.explain(before)(x).eager == []


def test_a_method_handed_to_a_resume_function_is_guarded_by_name_and_owner():
    import contextlib
    import io

    def f(x, name):
        method = getattr(x, name)
        print("", end="")  # `method` crosses the break: a bound method of the tensor
        return method(2)

    def train(losses, x):
        for _ in range(3):
            loss = (x * 2).sum()
            losses.append(loss.item())  # the break leaves `losses.append` on the stack
        return losses

    compiled = dynamo.compile(f, backend="eager")
    x = torch.ones(2)
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert torch.equal(compiled(x, "add"), x + 2)
        assert torch.equal(compiled(x, "mul"), x * 2)  # was add's result, from the cache
        looped = dynamo.compile(train, backend="eager")
        assert looped([], x) == train([], x)
        compiled_once = [len(r.cache.entries) for r in looped._resumes.values()]
        for step in range(2, 5):  # a new list, a new bound method and new floats every call
            assert looped([], x * step) == train([], x * step)
    assert compiled_once == [len(r.cache.entries) for r in looped._resumes.values()]


def test_logging_calls_cost_nothing_when_disabled_and_one_break_when_enabled():
    import io

    stream = io.StringIO()
    log = logging.getLogger("dynamo-test-logging-calls")
    log.addHandler(logging.StreamHandler(stream))
    log.propagate = False
    log.setLevel(logging.INFO)

    def f(x):
        y = x * 2
        log.debug("debug %s", 1)  # disabled: traced as `isEnabledFor`, nothing else
        log.info("info %d", 2)  # enabled: a graph break, the record made for real
        return y + 1

    # The logger's level cache is cold (a first look fills it under the logging lock): the
    # trace asks for real first, so that the break is the call's own.
    explained = dynamo.explain(f)(torch.ones(1))
    assert [b.reason.split(" (")[0] for b in explained.breaks] == [
        "logging.Logger.info() at an enabled level"]
    stream.truncate(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compiled = dynamo.compile(f, backend="eager")
        for _ in range(2):
            assert torch.equal(compiled(torch.ones(1)), torch.full((1,), 3.0))
    assert stream.getvalue().endswith("info 2\ninfo 2\n")
    log.setLevel(logging.WARNING)  # clears the cache
    assert dynamo.explain(f)(torch.ones(1)).graph_count == 1  # no break at all


def test_a_logging_call_whose_argument_breaks_is_still_one_clear_break():
    import io

    stream = io.StringIO()
    log = logging.getLogger("dynamo-test-logging-item")
    log.addHandler(logging.StreamHandler(stream))
    log.propagate = False
    log.setLevel(logging.INFO)

    def f(x):
        loss = (x * 2).sum()
        # `log.info` is loaded before `.item()` breaks: the resume function gets the bound
        # method on its stack, a call at an enabled level still (not a break deep in logging)
        log.info("loss %.1f", loss.item())
        return loss + 1

    explained = dynamo.explain(f)(torch.ones(2))
    assert [b.reason.split(" (")[0] for b in explained.breaks] == [
        "Tensor.item() reads the tensor's data", "logging.Logger.info() at an enabled level"]
    stream.truncate(0)
    stream.seek(0)
    compiled = dynamo.compile(f, backend="eager")
    for _ in range(2):
        assert torch.equal(compiled(torch.ones(2)), torch.tensor(5.0))
    assert stream.getvalue() == "loss 4.0\nloss 4.0\n"
    log.setLevel(logging.WARNING)
    assert len(dynamo.explain(f)(torch.ones(2)).breaks) == 1  # the `.item()` alone


def _missing_key(d, x):
    y = x + 1
    print(end="")
    return d["missing"] + y  # the user's line a traceback must show


def test_an_exception_at_a_break_shows_the_users_line_in_its_traceback() -> None:
    import traceback

    with pytest.raises(KeyError) as error:
        dynamo.compile(_missing_key)({}, torch.ones(2))
    last = traceback.extract_tb(error.value.__traceback__)[-1]
    assert (last.filename, last.name) == (__file__, "_missing_key")
    assert last.line == 'return d["missing"] + y  # the user\'s line a traceback must show'


def test_dynamos_warnings_name_the_users_call(monkeypatch) -> None:
    monkeypatch.setattr(dynamo.frontend, "CACHE_SIZE_LIMIT", 1)
    compiled = dynamo.compile(lambda x: x + 1)
    compiled(torch.ones(1))
    with pytest.warns(UserWarning, match="cache size limit") as record:
        compiled(torch.ones(2, 2))  # a second entry: past the limit
    assert record[0].filename == __file__


def test_a_break_inside_torchs_code_names_torchs_line_too() -> None:
    def sample(loc):
        return torch.distributions.Normal(loc, torch.ones(2), validate_args=True).log_prob(loc)

    with pytest.raises(dynamo.Unsupported) as error:
        dynamo.compile(sample, fullgraph=True)(torch.zeros(2))
    assert "inside torch's code at torch/distributions/" in str(error.value)
    report = dynamo.explain(sample)(torch.zeros(2))
    assert "(inside torch's code at torch/distributions/" in str(report)


def test_log_records_print_once_when_the_application_has_a_handler(capfd) -> None:
    topic = logs.logger("graph_breaks")
    topic.handlers.clear()  # made anew, on this test's stderr
    logs.configure("graph_breaks")
    root = logging.getLogger()
    handler = logging.StreamHandler()  # the application's basicConfig
    root.addHandler(handler)
    try:
        dynamo.compile(_breaking)(torch.ones(3))
    finally:
        root.removeHandler(handler)
        topic.handlers.clear()
    assert capfd.readouterr().err.count("graph break in _breaking: print()") == 1



class _Scaled:
    factor = 2

    def scale(self):
        return self.factor


class _Swapped(_Scaled):
    def forward(self, x):
        # zero-argument super() reads the first parameter's slot: `self`'s cell is handed on
        # by value, not shared, and the nested function writes it
        def swap():
            nonlocal self
            self = _Swapped3()

        swap()
        print(end="", file=io.StringIO())
        return x * super().scale()


class _Swapped3(_Swapped):
    factor = 3


def _refused_break(x):
    return _Swapped.forward(_Swapped(), x)


def test_a_break_the_retrace_refuses_is_not_logged(caplog) -> None:
    """The break is logged once the trace up to it is made: one the retrace refuses (a nested
    function wrote the frame's cell a method's super() reads) runs the frame eagerly, and no
    break happens."""
    logs.configure("graph_breaks")
    with caplog.at_level(logging.DEBUG, logger="dynamo.graph_breaks"), \
            pytest.warns(UserWarning, match="runs eagerly.*written again"):
        torch.testing.assert_close(dynamo.compile(_Swapped.forward)(_Swapped(), torch.ones(3)),
                                   _refused_break(torch.ones(3)))
    assert "graph break in _Swapped.forward" not in caplog.text
    with caplog.at_level(logging.DEBUG, logger="dynamo.graph_breaks"):
        dynamo.compile(_breaking)(torch.ones(3))
    assert "graph break in _breaking" in caplog.text

_APPLICATION = """
import logging, torch, dynamo
logging.basicConfig(level=logging.DEBUG)
def f(x):
    x = x + 1
    print(end="")
    return x * 2
dynamo.compile(f)(torch.ones(2))
"""


def test_only_the_topics_switched_on_log_under_an_application_at_debug_level() -> None:
    def dynamo_records(topics: str) -> list[str]:
        env = {k: v for k, v in os.environ.items() if k != logs.ENV_VAR}
        if topics:
            env[logs.ENV_VAR] = topics
        run = subprocess.run([sys.executable, "-c", _APPLICATION], env=env, check=True,
                             capture_output=True, text=True)
        return [line for line in run.stderr.splitlines() if "dynamo." in line]

    assert dynamo_records("") == []
    switched_on = dynamo_records("graph_breaks")
    assert switched_on and all("dynamo.graph_breaks" in line for line in switched_on)


def test_a_value_a_resume_function_cannot_take_is_reported_at_the_users_line() -> None:
    """The sparse result of a call made for real at a break: the resume function's failure was
    reported at the `def` line, naming dynamo's own `L['___stack0']` alone."""
    def f(x):
        y = x.sin()
        s = y.to_sparse()
        return s

    report = dynamo.explain(f)(torch.randn(3))
    assert len(report.eager) == 1
    assert "the value the call made for real at the graph break gave" in report.eager[0]
    assert "s = y.to_sparse()" in report.eager[0]


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_squeeze_of_a_data_dependent_dim_breaks(backend) -> None:
    """Traced, `squeeze` assumes a data-dependent size is not 1; with one nonzero the graph's
    output had another rank (and with an input written, an internal error reached the user)."""
    def f(x, buf):
        buf.add_(1)
        return x.nonzero().squeeze(), torch.squeeze(x.nonzero(), 1)

    compiled = dynamo.compile(f, backend=backend)
    buf, eager_buf = torch.zeros(2), torch.zeros(2)
    for x in (torch.tensor([0.0, 3.0, 0.0]), torch.tensor([1.0, 3.0, 0.0])):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            got = compiled(x, buf)
        expected = f(x, eager_buf)
        assert [t.shape for t in got] == [t.shape for t in expected]
        torch.testing.assert_close(got, expected)
    torch.testing.assert_close(buf, eager_buf)
    assert "squeeze of a dim whose size depends on data" in str(
        dynamo.explain(f)(torch.ones(3), torch.zeros(2)).breaks[0])


@pytest.mark.parametrize("squeeze", [
    lambda t: torch.Tensor.squeeze(t), lambda t: torch.squeeze(input=t),
    lambda t: torch.ops.aten.squeeze.default(t), lambda t: torch.ops.aten.squeeze.dim(t, 0),
    lambda t: torch.squeeze_copy(t)])
def test_squeeze_of_a_data_dependent_dim_breaks_however_called(squeeze) -> None:
    """Not only `t.squeeze()` and `torch.squeeze(t)`: the unbound method, `input=`, the aten
    ops and `squeeze_copy` traced the data-dependent size as not 1 too (an input written:
    BadGraphOutputs reached the user)."""
    def f(x, buf):
        buf.add_(1)
        return squeeze(x.nonzero()) * 2

    compiled = dynamo.compile(f, backend="aot_eager")
    buf, eager_buf = torch.zeros(2), torch.zeros(2)
    x = torch.tensor([0.0, 3.0, 0.0])
    got, expected = compiled(x, buf), f(x, eager_buf)
    assert got.shape == expected.shape
    torch.testing.assert_close(got, expected)
    torch.testing.assert_close(buf, eager_buf)
    static = dynamo.explain(lambda t: squeeze(t) + 1)(torch.ones(1, 1))
    assert static.graph_break_count == 0
