"""The graph-break corpus: results, side effects and graph counts against eager."""

from __future__ import annotations

import re
import sys
import warnings

import pytest
import torch
from corpus_breaks import PROGRAMS


def _state(value):
    if isinstance(value, torch.Tensor):
        return value.clone()
    if isinstance(value, list):
        return [_state(v) for v in value]
    if isinstance(value, dict):
        return {k: _state(v) for k, v in value.items()}
    return dict(vars(value))


@pytest.mark.parametrize("name, fn, make, graphs, state", PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_break_program(name, fn, make, graphs, state) -> None:
    import dynamo

    compiled_graphs = []

    def counting(gm, example_inputs):
        compiled_graphs.append(gm)
        return gm.forward

    compiled = dynamo.compile(fn, backend=counting)
    for seed in (0, 1):
        eager_args, compiled_args = make(seed), make(seed)
        expected = fn(*eager_args)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the loop template runs eagerly, with a warning
            got = compiled(*compiled_args)
        torch.testing.assert_close(got, expected)
        for i in state:
            torch.testing.assert_close(_state(compiled_args[i]), _state(eager_args[i]))
        if isinstance(expected, tuple) and len(state) > 1:  # a mutated input returned
            assert got[1] is compiled_args[1]
        if seed == 0:
            first_call = len(compiled_graphs)
    assert first_call == graphs
    assert len(compiled_graphs) == graphs  # the second call hit the caches


def test_an_f_string_of_a_tensor_breaks_there_and_formats_for_real() -> None:
    import dynamo

    def f(x):
        y = x.relu() * 2
        text = f"{y.sum():.3f}|{y.shape[0]!r}|{y.mean()}"
        return y + 1, text

    x = torch.randn(4)
    explained = dynamo.explain(f)(x)
    assert explained.graph_count >= 2 and not explained.eager  # the frame is not given up
    assert any("formatting a tensor" in b.reason for b in explained.breaks)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result, text = dynamo.compile(f, backend="eager")(x)
    expected, expected_text = f(x)
    assert text == expected_text
    torch.testing.assert_close(result, expected)


def test_a_dict_keyed_by_a_tensor_made_in_the_frame_breaks_with_a_reason_in_words() -> None:
    import dynamo

    def f(x):
        y = x + 1
        scale = {}
        scale[y] = 2.0
        return y * scale[y]

    x = torch.randn(3)
    explained = dynamo.explain(f)(x)
    (reason,) = [b.reason for b in explained.breaks]
    assert reason.startswith("a dict key that is a Tensor made in the frame")
    assert explained.graph_count == 2 and not explained.eager  # before and after the break
    torch.testing.assert_close(dynamo.compile(f, backend="eager")(x), f(x))


def test_a_class_statement_is_a_break_and_the_class_is_made_for_real() -> None:
    import dynamo

    def f(x, k):
        y = x * 2

        class Local:
            scale = k

            def apply(self, t):
                return t * self.scale

        return Local().apply(y) + 1, Local.__qualname__

    compiled = dynamo.compile(f, backend="eager")
    for k in (2, 3, 3):
        x = torch.randn(3)
        got, expected = compiled(x, k), f(x, k)
        torch.testing.assert_close(got[0], expected[0])
        assert got[1] == expected[1]
    explained = dynamo.explain(f)(x, 2)
    assert explained.graph_count == 2 and not explained.eager
    assert [b.reason for b in explained.breaks] == ["calling __build_class__, a class statement"]


def test_manual_seed_breaks_even_after_torch_dynamo_wrapped_it() -> None:
    """Importing torch._dynamo (torch does it lazily) replaces `torch.manual_seed` with a
    wrapper; it must still be recognised, not traced as a graph operation."""
    import torch._dynamo  # noqa: F401

    import dynamo

    assert torch.manual_seed is not torch.random.manual_seed

    def f(x):
        torch.manual_seed(0)
        return x + torch.rand(3)

    explained = dynamo.explain(f)(torch.randn(3))
    assert [b.reason for b in explained.breaks] == [
        "torch.random.manual_seed() inside a compiled frame"]
    x = torch.randn(3)
    torch.testing.assert_close(dynamo.compile(f, backend="eager")(x), f(x))


def test_a_break_with_no_user_code_on_the_way_names_torchs_line() -> None:
    """nn.Transformer compiled directly: its break (a check of the mask's values) is in torch's
    code, and the reason says where; a user's line, when there is one, wins."""
    import dynamo

    model = torch.nn.Transformer(d_model=16, nhead=2, num_encoder_layers=1, num_decoder_layers=1,
                                 dim_feedforward=32, batch_first=True, dropout=0.0)
    args = (torch.randn(2, 5, 16), torch.randn(2, 4, 16), None,
            torch.nn.Transformer.generate_square_subsequent_mask(4))
    breaks = dynamo.explain(model)(*args).breaks
    assert breaks and all(b.filename and b.filename.endswith("transformer.py") for b in breaks)
    assert "\n  at " in str(breaks[0])

    def user(x):
        return x.sum().item() + 1  # the user's line, not torch's

    (error,) = dynamo.explain(user)(torch.randn(3)).breaks
    assert error.filename == __file__


def test_warnings_at_equal_breaks_in_two_modules_name_their_own_file(tmp_path) -> None:
    """Two modules with the same function (the same lines): their break runners are equal code
    objects, which must not share one site (the second module's file named the first's
    warnings)."""
    import importlib.util

    import dynamo

    source = ("import warnings\n\n"
              "def h(x):\n    warnings.warn('careful', stacklevel=2)\n\n"
              "def f(x):\n    y = x * 2\n    h(x)\n    return y + 1\n")
    fns = []
    for name in ("equal_breaks_a", "equal_breaks_b"):
        path = tmp_path / f"{name}.py"
        path.write_text(source)
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        fns.append(dynamo.compile(module.f, backend="eager"))

    def files():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for fn in fns:
                fn(torch.ones(2))
        return [w.filename.rsplit("/", 1)[-1] for w in caught]

    assert files() == files() == ["equal_breaks_a.py", "equal_breaks_b.py"]


def test_a_warning_at_a_break_names_the_users_line() -> None:
    """`warnings.warn` is made for real at a break, from the transformed frame: it is still
    attributed to the user's line (stacklevel=1), or to the user's caller (stacklevel=2: a
    library function warning about how it is called), as in eager."""
    import warnings

    import dynamo

    def library(x):
        warnings.warn("deprecated argument", DeprecationWarning, stacklevel=2)
        return x + 1

    def model(x):
        if x.shape[0] > 2:
            warnings.warn("a big batch", stacklevel=1)
        return library(x) * 2

    def records(fn):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fn(torch.ones(3))
        return [(w.category, str(w.message), w.filename, w.lineno) for w in caught]

    compiled = dynamo.compile(model, backend="eager")
    got, want = records(compiled), records(model)
    assert got == want and len(got) == 2 and all(w[2] == __file__ for w in got)


def test_an_operation_failing_on_a_value_only_the_trace_has_runs_the_frame_eagerly() -> None:
    """`if mask is None and not torch.compiler.is_compiling()` (SwitchTransformers) leaves
    `mask` None in the trace only: the subscript that fails on it is not run for real at a
    break (eager's call succeeds); the frame runs eagerly, as under torch.compile."""
    import dynamo

    def f(x, mask=None):
        y = x + 1
        if mask is None and not torch.compiler.is_compiling():
            mask = torch.ones(x.shape[0])
        return y * mask[:, None]

    x = torch.randn(3, 4)
    with pytest.warns(UserWarning, match="runs eagerly"):
        torch.testing.assert_close(dynamo.compile(f)(x), f(x))


def test_a_resume_function_keeps_the_ints_it_reads_from_objects_constant() -> None:
    """Only the ints handed to a resume function (a loop counter) are symbols; a module's
    `self.heads` read after the break stays a constant, so a size computed from it is known."""
    import dynamo

    class Chunks(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.heads = 2

        def forward(self, x):
            y = x.transpose(0, 1)  # not contiguous: `view` needs its sizes known
            print(end="")
            n = torch.div(y.size(1), self.heads * 2, rounding_mode="trunc")
            return y.view(y.size(0), n, self.heads * 2, y.size(2)) * 2

    model, x = Chunks(), torch.randn(12, 8, 16)
    report = dynamo.explain(model)(x)
    assert report.graph_count == 2 and len(report.breaks) == 1, str(report)
    torch.testing.assert_close(dynamo.compile(model)(x), model(x))


def _compiled_without_eager_frames(fn, *args):
    """`fn` compiled (no frame left to run eagerly) and its result."""
    import dynamo

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "... runs eagerly" fails the test
        return dynamo.compile(fn, backend="eager")(*args)


def test_a_list_or_dict_that_holds_itself_is_rebuilt_holding_itself() -> None:
    import dynamo

    class Node:
        pass

    def through_a_break(x):
        a = [x]
        a.append(a)
        node = Node()
        node.items = a
        a.append(node)
        dynamo.graph_break()
        return a[1] is a, node.items is a, a[2] is node

    def returned(x):
        a, d = [x], {"x": x}
        a.append(a)
        d["me"] = d
        return a, d

    x = torch.ones(2)
    assert _compiled_without_eager_frames(through_a_break, x) == (True, True, True)
    a, d = _compiled_without_eager_frames(returned, x)
    assert a[1] is a and d["me"] is d and a[0] is x


def test_locals_vars_dir_and_eval_after_a_break_see_the_users_variables() -> None:
    import dynamo

    def listed(x, n):
        a = n * 2
        dynamo.graph_break()
        return sorted(locals()), sorted(vars())

    def evaluated(x, n):
        a = n * 2  # noqa: F841 (read by eval)
        dynamo.graph_break()
        return eval("a + n")

    def named(x, n):
        a = n * 2  # noqa: F841 (read by dir)
        print(end="")
        return dir()

    x = torch.ones(2)
    for fn in (listed, evaluated, named):
        assert _compiled_without_eager_frames(fn, x, 3) == fn(x, 3)


def test_and_or_of_a_tensor_condition_as_a_value_break_at_the_branch() -> None:
    def either(x, n):
        return (x.sum() > 100) or n

    def both(x, n):
        y = (x.sum() > -100) and (x * n)
        return y + 1

    for x in (torch.randn(3), torch.full((3,), 50.0)):
        for fn in (either, both):
            torch.testing.assert_close(torch.as_tensor(_compiled_without_eager_frames(fn, x, 3)),
                                       torch.as_tensor(fn(x, 3)))


def test_unpacking_an_object_the_trace_cannot_see_into_breaks_there() -> None:
    import array
    import io

    sink = io.StringIO()

    class Pair:
        def __init__(self, a, b) -> None:
            self.a, self.b = a, b

        def __iter__(self):
            print("iter", file=sink)  # a break inside __iter__
            return iter((self.a, self.b))

    def pair(x):
        p, q = Pair(x, x * 2)
        return q - p

    def starred(x, obj):
        a, *rest = obj
        return x * a + sum(rest)

    def too_many(x, obj):
        try:
            a, b = obj
        except ValueError as error:
            return x, str(error)
        return x * a, b

    x = torch.randn(3)
    torch.testing.assert_close(_compiled_without_eager_frames(pair, x), pair(x))
    numbers = array.array("d", [2.0, 3.0, 4.0])
    torch.testing.assert_close(_compiled_without_eager_frames(starred, x, numbers),
                               starred(x, numbers))
    assert _compiled_without_eager_frames(too_many, x, numbers)[1] == too_many(x, numbers)[1]
    assert sink.getvalue() == "iter\n" * 2


def test_an_attribute_read_through_super_that_cannot_be_traced_breaks_there() -> None:
    # 3.12 reads `super().name` with LOAD_SUPER_ATTR: a getter that breaks is a graph break
    # there (made for real), as 3.11's LOAD_ATTR on the super object is, not an eager frame
    import io

    sink = io.StringIO()

    class Base:
        @property
        def scale(self):
            print("scale", file=sink)
            return 3.0

        def shift(self, x):
            print("shift", file=sink)
            return x + 1

    class Child(Base):
        def zero(self, x):
            return x * 2 + super().scale

        def two(self, x):
            return super().shift(x * 2) + super().scale

        def caught(self, x):
            try:
                return x + super().missing
            except AttributeError:
                return x - 1

    child, x = Child(), torch.randn(3)
    for method in ("zero", "two", "caught"):
        torch.testing.assert_close(
            _compiled_without_eager_frames(getattr(child, method), x), getattr(child, method)(x))
    assert sink.getvalue() == "scale\n" * 2 + "shift\nscale\n" * 2


@pytest.mark.skipif(sys.version_info < (3, 12), reason="PEP 695 syntax is Python 3.12's")
def test_generics_and_type_statements_inside_the_frame_name_the_construct() -> None:
    import dynamo

    namespace = {"torch": torch}
    exec(
        "def generic(x):\n"
        "    def inner[T](v: T) -> T:\n"
        "        return v\n"
        "    return inner(x) + 1\n"
        "def bounded(x):\n"
        "    def inner[T: int](v: T) -> T:\n"
        "        return v\n"
        "    return inner(x) + 1\n"
        "def alias(x):\n"
        "    type L = list[int]\n"
        "    return x + 1\n", namespace)
    expected = {"generic": "a PEP 695 type parameter", "bounded": "with a bound",
                "alias": "a `type X = ...` statement"}
    for name, words in expected.items():
        with pytest.raises(dynamo.Unsupported, match=re.escape(words)):
            dynamo.compile(namespace[name], backend="eager", fullgraph=True)(torch.ones(2))


@pytest.mark.skipif(sys.version_info < (3, 12), reason="PEP 695 syntax is Python 3.12's")
def test_a_type_statement_inside_the_frame_is_a_graph_break_with_a_lazy_value() -> None:
    # 3.12's CALL_INTRINSIC_1 INTRINSIC_TYPEALIAS ran the whole frame eagerly; it is applied
    # for real at a break, the value still evaluated only when read (`Later` is defined after
    # the function), and the new alias of each call matches the resume function's guards
    from counting import counting_backend

    import dynamo

    namespace = {"torch": torch}
    exec(
        "def f(x):\n"
        "    y = x + 1\n"
        "    type Pair = tuple[int, Later]\n"
        "    return y * 2, Pair, Pair.__value__\n"
        "class Later:\n"
        "    pass\n", namespace)
    backend, graphs = counting_backend("eager")
    compiled, later = dynamo.compile(namespace["f"], backend=backend), namespace["Later"]
    x = torch.randn(3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "... runs eagerly" fails the test
        for _ in range(3):
            doubled, alias, value = compiled(x)
            torch.testing.assert_close(doubled, (x + 1) * 2)
            assert type(alias).__name__ == "TypeAliasType" and alias.__name__ == "Pair"
            assert value == tuple[int, later]
    assert len(graphs) == 2


def test_a_break_at_a_method_load_hands_the_resume_function_both_values() -> None:
    # 3.12's LOAD_ATTR of `obj.name(...)` pushes two values (NULL and the attribute, or the
    # method and `self`); a break there (a `__class__` property that prints) handed the
    # resume function one, and the call took the int argument for the function
    class Claims:
        @property
        def __class__(self):
            print("class read")
            return Claims

        def __init__(self, v=1):
            self.v = v

    obj = Claims(3)

    def f(x):
        a = x + 1
        made = obj.__class__(5)
        return a * made.v

    x = torch.randn(3)
    torch.testing.assert_close(_compiled_without_eager_frames(f, x), f(x))


def test_unary_plus_of_an_object_whose_pos_breaks_is_a_graph_break() -> None:
    # 3.11's UNARY_POSITIVE and 3.12's CALL_INTRINSIC_1 (INTRINSIC_UNARY_POSITIVE): applied
    # for real at a break, as `-value` is, rather than the whole frame running eagerly
    class Positive:
        def __pos__(self):
            print("pos")
            return 5

    p = Positive()

    def f(x):
        a = x + 1
        return a * +p

    x = torch.randn(3)
    torch.testing.assert_close(_compiled_without_eager_frames(f, x), f(x))


def test_a_super_that_the_module_shadows_is_called_as_python_calls_it() -> None:
    # 3.12's LOAD_SUPER_ATTR calls a global `super` that is not the builtin (with no
    # arguments for `super().f`); the trace read the builtin's answer instead, and a global
    # `super` set after compiling recompiles
    import builtins

    import dynamo

    namespace = {"torch": torch, "_real": builtins.super, "calls": []}
    exec(
        "def fake(*args):\n"
        "    calls.append(len(args))\n"
        "    return _real(*args) if args else _real(B, B.inst)\n"
        "class A:\n"
        "    def f(self, x):\n"
        "        return x + 1\n"
        "class B(A):\n"
        "    def f(self, x):\n"
        "        return super().f(x) * 2\n"
        "    def g(self, x):\n"
        "        return super(B, self).f(x) * 3\n"
        "B.inst = B()\n"
        "def run(x):\n"
        "    calls.clear()\n"
        "    return B.inst.f(x) + B.inst.g(x), list(calls)\n", namespace)
    run, x = namespace["run"], torch.randn(3)
    compiled = dynamo.compile(run, backend="eager")
    for shadow in (False, True, False):
        if shadow:
            namespace["super"] = namespace["fake"]
        else:
            namespace.pop("super", None)
        expected, got = run(x), compiled(x)
        assert got[1] == expected[1]
        torch.testing.assert_close(got[0], expected[0])


def test_warnings_from_a_script_run_as_main_draw_no_deprecation_warning(tmp_path) -> None:
    # `__main__` of a script has a `__loader__` and no `__spec__`: handing its globals to
    # warn_explicit draws 3.12's DeprecationWarning "Module globals is missing a
    # __spec__.loader", an error where DeprecationWarnings are (eager warns and goes on)
    import subprocess

    script = tmp_path / "script.py"
    script.write_text(
        "import warnings, torch, dynamo\n"
        "def f(x):\n"
        "    y = x + 1\n"
        "    warnings.warn('from the user')\n"
        "    return y\n"
        "def g(x):\n"
        "    y = x + 1\n"
        "    del y\n"
        "    return y\n"
        "print(dynamo.compile(f, backend='eager')(torch.ones(2)).tolist())\n"
        "try:\n"
        "    dynamo.compile(g, backend='eager')(torch.ones(2))\n"
        "except UnboundLocalError:\n"
        "    print('unbound')\n")
    done = subprocess.run([sys.executable, "-W", "error::DeprecationWarning", str(script)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["[2.0,", "2.0]", "unbound"]
    assert "from the user" in done.stderr and "could not capture g" in done.stderr


def test_a_value_a_graph_operation_cannot_take_names_the_operation() -> None:
    from torch._higher_order_ops.associative_scan import associative_scan

    import dynamo

    def prefix_sums(x):  # Mamba's scan, in its generic mode
        return associative_scan(lambda a, b: a + b, x, dim=0, combine_mode="generic") * 2

    x = torch.randn(5, 3)
    report = dynamo.explain(prefix_sums)(x)
    assert [b.reason for b in report.breaks] == [
        "passing a function to a graph operation (associative_scan)"]
    torch.testing.assert_close(dynamo.compile(prefix_sums)(x), prefix_sums(x))


def test_warnings_from_a_module_with_no_loader() -> None:
    """A module made with `types.ModuleType` and `exec` has no loader: Python 3.12 refuses its
    globals in `warn_explicit`; the user's warning at a break, and dynamo's own warning naming
    that module's line, are still made."""
    import types

    import dynamo

    module = types.ModuleType("made_here")
    exec(compile("import warnings\n"
                 "def f(x):\n"
                 "    y = x + 1\n"
                 "    warnings.warn('from the module')\n"
                 "    return y * 2\n"
                 "def g(x):\n"
                 "    return f(x)\n", "<made_here>", "exec"), module.__dict__)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = dynamo.compile(module.g, backend="eager")(torch.ones(2))
    torch.testing.assert_close(out, torch.full((2,), 4.0))
    assert [(str(w.message), w.filename, w.lineno) for w in caught
            if "from the module" in str(w.message)] == [("from the module", "<made_here>", 4)]


def test_graph_break_breaks_with_its_message_and_torch_compiles_is_traced_through() -> None:
    import torch._dynamo

    import dynamo

    def ours(x):
        y = x + 1
        dynamo.graph_break("after the add")
        return y * 2

    def torchs(x):  # torch's private function: an empty torch function, not ours to know
        y = x + 1
        torch._dynamo.graph_break()
        return y * 2

    x = torch.ones(2)
    explained = dynamo.explain(ours)(x)
    assert explained.graph_count == 2
    assert explained.breaks[0].reason == "graph_break() called: after the add"
    assert torch.equal(dynamo.compile(ours, backend="eager")(x), ours(x))
    with pytest.raises(dynamo.Unsupported, match=r"graph_break\(\) called"):
        dynamo.compile(ours, backend="eager", fullgraph=True)(x)
    assert dynamo.explain(torchs)(x).graph_count == 1
    assert torch.equal(dynamo.compile(torchs, backend="eager", fullgraph=True)(x), torchs(x))


def test_vjp_fn_break_names_the_wrapped_tensor() -> None:
    """`vjp`'s `vjp_fn` keeps tensors a transform wrapped: the break says so, in words (it
    was `CALL met a case the interpreter does not handle (NotImplementedError: ...)`)."""
    def f(x, v):
        _, fn = torch.func.vjp(torch.sin, x)
        return fn(v)[0] * 2

    import dynamo

    x, v = torch.randn(3), torch.randn(3)
    report = dynamo.explain(f)(x, v)
    assert any("wrapped by a torch.func transform" in str(b) for b in report.breaks), report
    torch.testing.assert_close(dynamo.compile(f, backend="aot_eager")(x, v), f(x, v))


def test_index_at_inverts_position_past_extended_args() -> None:
    from dynamo.breaks import _index_at, _position
    from dynamo.bytecode import instructions

    names = ", ".join(f"x + {i}.5" for i in range(300))  # past 256 constants: EXTENDED_ARG
    scope: dict = {}
    exec(f"def f(x):\n    return [{names}]\n", scope)
    code = scope["f"].__code__
    reads = instructions(code)
    assert any(ins.opname == "EXTENDED_ARG" for ins in reads)
    for i, ins in enumerate(reads):
        if ins.opname != "EXTENDED_ARG":
            assert _index_at(code, _position(code, i)) == i


def test_registering_a_module_hook_in_the_frame_is_a_break_that_names_the_call() -> None:
    """`register_forward_hook` from the frame is made for real at a graph break whose reason
    names it (not the weak reference its handle makes inside torch's code); the hook runs on
    the module's call after the break, as in eager."""
    import dynamo

    model = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.ReLU())
    seen = []

    def f(x):
        handle = model[0].register_forward_hook(lambda mod, args, out: seen.append(out) or out * 2)
        y = model(x)
        handle.remove()
        return y

    x = torch.randn(2, 3)
    explained = dynamo.explain(f)(x)
    assert explained.breaks[0].reason == \
        "nn.Module.register_forward_hook() inside a compiled frame"
    assert explained.breaks[0].library_where() is None  # the user's line alone
    torch.testing.assert_close(dynamo.compile(f, backend="eager")(x), f(x))
    assert len(seen) == 3 and not model[0]._forward_hooks


def test_a_call_of_a_c_callable_outside_torch_names_it_and_the_users_line() -> None:
    """A Cython function (`np.random.rand`, a method of numpy's global RandomState), numpy's
    dispatcher (`np.sum`), a method descriptor, a Cython method of a C class and a builtin are
    named by module and qualified name, not by their type alone."""
    import time

    import numpy as np

    import dynamo

    rng = np.random.default_rng(0)
    calls = {
        "calling numpy.random.RandomState.rand (a cython_function_or_method, written in C)":
            lambda: np.random.rand(),
        "calling numpy.random.default_rng (a cython_function_or_method, written in C)":
            lambda: np.random.default_rng(0),
        "calling numpy.sum (a _ArrayFunctionDispatcher, written in C)": lambda: np.sum([1, 2]),
        "calling numpy.ndarray.sum (a method_descriptor, written in C)":
            lambda: np.ndarray.sum(rng.random(2)),
        "the method Generator.random, written in C": lambda: rng.random(),
        "calling time.perf_counter, a C function outside torch": lambda: time.perf_counter(),
    }
    for reason, call in calls.items():
        def f(x, call=call):
            y = x + 1
            call()
            return y * 2

        explained = dynamo.explain(f)(torch.ones(2))
        assert reason in [b.reason for b in explained.breaks]
    x = torch.ones(2)

    def draw(x):
        return x + np.random.rand()

    line = draw.__code__.co_firstlineno + 1
    with pytest.raises(dynamo.Unsupported) as raised:
        dynamo.compile(draw, backend="eager", fullgraph=True)(x)
    assert raised.value.reason == \
        "calling numpy.random.RandomState.rand (a cython_function_or_method, written in C)"
    assert f"at {__file__}:{line}\n    return x + np.random.rand()" in str(raised.value)
    np.random.seed(0)
    expected = draw(x)
    np.random.seed(0)
    torch.testing.assert_close(dynamo.compile(draw, backend="eager")(x), expected)


def test_a_break_on_a_class_or_builtin_names_it_not_its_type() -> None:
    import dynamo

    def f(x):
        y = x + 1
        str.maketrans("a", "b")
        return y * 2

    explained = dynamo.explain(f)(torch.ones(2))
    assert [b.reason for b in explained.breaks] == ["reading attribute 'maketrans' of str"]


def test_values_in_break_reasons_are_named_not_typed() -> None:
    """What a reason calls a class, a builtin or a C function ("passing time.perf_counter to
    a graph operation"), not "a type" or "a builtin_function_or_method"."""
    import time

    from dynamo.variables.builtins import BuiltinVariable
    from dynamo.variables.functions import OpaqueFunctionVariable
    from dynamo.variables.objects import UserClassVariable

    class Config:
        pass

    assert BuiltinVariable(len).words() == "len"
    assert UserClassVariable(Config).words() == "the class " + Config.__qualname__
    assert OpaqueFunctionVariable(time.perf_counter).words() == "time.perf_counter"


def _breaks_cleanly(f, make_args, reason: str, state=lambda: None) -> None:
    """`f` compiles to two graphs around a break (the first) whose reason starts with `reason`,
    gives eager's results and leaves eager's `state()` on two input sets, and under
    fullgraph=True raises that reason."""
    import dynamo

    explained = dynamo.explain(f)(*make_args(0))
    assert explained.graph_count == 2 and not explained.eager, str(explained)
    assert explained.breaks[0].reason.startswith(reason), str(explained)
    for seed in (1, 2):
        got = _compiled_without_eager_frames(f, *make_args(seed))
        compiled_state = state()
        torch.testing.assert_close(got, f(*make_args(seed)))
        assert compiled_state == state()
    with pytest.raises(dynamo.Unsupported, match=re.escape(reason)):
        dynamo.compile(f, backend="eager", fullgraph=True)(*make_args(0))


def test_del_of_a_slot_a_property_or_a_module_attribute_breaks_and_deletes_for_real() -> None:
    import types

    class Slotted:
        __slots__ = ("scale",)

    class Deleting:
        @property
        def scale(self):
            return 2

        @scale.deleter
        def scale(self):
            print("deleting scale")
            self.deleted = True

    slotted, deleting, module = Slotted(), Deleting(), types.ModuleType("settings")

    def make(seed):
        slotted.scale = seed
        module.scale = seed
        deleting.deleted = False
        return (torch.randn(3, generator=torch.Generator().manual_seed(seed)),)

    def del_slot(x):
        y = x * slotted.scale
        del slotted.scale
        return y + 1

    def del_property(x):
        y = x + 1
        del deleting.scale
        return y + deleting.deleted

    def del_module_attribute(x):
        y = x * module.scale
        del module.scale
        return y + 1

    _breaks_cleanly(del_slot, make, "deleting 'scale' of a ",
                         state=lambda: hasattr(slotted, "scale"))
    _breaks_cleanly(del_property, make, "print()", state=lambda: deleting.deleted)
    _breaks_cleanly(del_module_attribute, make, "deleting attribute 'scale' of a module",
                         state=lambda: hasattr(module, "scale"))


def test_a_dict_or_set_display_of_keys_the_trace_cannot_hold_breaks_and_builds_for_real() -> None:
    class Point:  # compares by value: not a key the trace holds
        def __init__(self, x):
            self.x = x

        def __eq__(self, other):
            return self.x == other.x

        def __hash__(self):
            return hash(self.x)

    def make(seed):
        return (torch.randn(3, generator=torch.Generator().manual_seed(seed)),)

    def tensor_keys(x):
        y = x + 1
        weights = {y: 2.0, "bias": 3}
        return y * weights[y] + weights["bias"]

    def point_keys(x):
        y = x + 1
        weights = {Point(1): 2.0, Point(2): 3.0}
        return y * len(weights)  # (a second break: the dict is looked into for real)

    def tensor_set(x):
        y = x + 1
        seen = {y, x}
        return y * (y in seen), x in seen

    def tensor_comprehensions(x):  # 3.12 inlines them: a break at MAP_ADD and SET_ADD
        y = x + 1
        ranks = {t: i for i, t in enumerate((y, x, y * 2))}
        seen = {t for t in (x, y) if t is not None}
        return y * ranks[y] + len(ranks), x in seen

    _breaks_cleanly(tensor_keys, make, "a dict key that is a Tensor made in the frame")
    _breaks_cleanly(tensor_comprehensions, make,
                    "a dict key that is a Tensor made in the frame")
    _breaks_cleanly(point_keys, make, "a dict key that is a Point")
    _breaks_cleanly(tensor_set, make, "a dict key that is a Tensor made in the frame")


def test_an_except_as_name_a_closure_captures_is_deleted_in_the_trace() -> None:
    import dynamo

    def caught(x):  # the handler's end empties the cell of `error` (DELETE_DEREF)
        y = x + 1
        try:
            raise ValueError("bad")
        except ValueError as error:
            words = [type(error).__name__]
            describe = lambda: str(error)  # noqa: E731, F821 (called inside the handler)
            words.append(describe())
        return y * 2, words

    def make_outer():
        scale = 3

        def inner(x):
            nonlocal scale
            y = x * scale
            del scale  # the caller's cell, emptied after the graph
            return y

        return inner, inner.__closure__[0]

    for seed in (0, 1):
        x = torch.randn(3, generator=torch.Generator().manual_seed(seed))
        got, expected = dynamo.compile(caught, backend="eager", fullgraph=True)(x), caught(x)
        torch.testing.assert_close(got[0], expected[0])
        assert got[1] == expected[1] == ["ValueError", "bad"]
        inner, cell = make_outer()
        torch.testing.assert_close(dynamo.compile(inner, backend="eager", fullgraph=True)(x),
                                   x * 3)
        with pytest.raises(ValueError, match="empty"):
            _ = cell.cell_contents


def test_an_unpacking_display_or_call_the_trace_cannot_hold_breaks_and_merges_for_real() -> None:
    import array
    import collections

    class Config(collections.abc.Mapping):  # a user mapping: `**` of it is not traced
        def __init__(self, **entries):
            self.entries = entries

        def __getitem__(self, key):
            return self.entries[key]

        def __iter__(self):
            return iter(self.entries)

        def __len__(self):
            return len(self.entries)

    config, floats = Config(scale=2), array.array("d", [1.0, 2.0])

    def total(**weights):
        return sum(weights.values())

    def make(seed):
        return (torch.randn(3, generator=torch.Generator().manual_seed(seed)),)

    def dict_update(x):  # DICT_UPDATE
        y = x + 1
        merged = {**config, "bias": 3}
        return y * merged["scale"] + merged["bias"]

    def dict_merge(x):  # DICT_MERGE
        y = x + 1
        return y * total(**config, bias=3)

    def set_update(x):  # SET_UPDATE: a tensor made in the frame
        y = x + 1
        seen = {*(y, x), 1}
        return y * len(seen)

    def list_extend(x):  # LIST_EXTEND: an iterable of C's
        y = x + 1
        items = [*floats, 3.0]
        return y * sum(items)

    _breaks_cleanly(dict_update, make, "** on a ")
    _breaks_cleanly(dict_merge, make, "** on a ")
    _breaks_cleanly(set_update, make, "a dict key that is a Tensor made in the frame")
    _breaks_cleanly(list_extend, make, "the method array.__iter__")


def test_an_unpacking_that_python_refuses_raises_its_error() -> None:
    def total(**weights):
        return sum(weights.values())

    def keyword_twice(x):  # traced, it merged the second `k` over the first
        return (x + 1) * total(**{"k": 1}, **{"k": 2})

    def not_a_mapping(x):
        return (x + 1) * len({**{"k": 1}, **x.dim()})

    def call_not_a_mapping(x):
        return (x + 1) * total(**{"k": 1}, **x.dim())

    x = torch.randn(3)
    for f, message in ((keyword_twice, "total() got multiple values for keyword argument 'k'"),
                       (not_a_mapping, "'int' object is not a mapping"),
                       (call_not_a_mapping, "total() argument after ** must be a mapping, not int")):
        with pytest.raises(TypeError, match=re.escape(message)):
            f(x)
        with pytest.raises(TypeError, match=re.escape(message)):
            _compiled_without_eager_frames(f, x)
