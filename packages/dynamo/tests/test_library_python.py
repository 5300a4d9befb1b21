"""The Python that libraries write around models, captured whole: objects and dataclasses made
inside the frame, dict subclasses (model outputs, registries), the special methods of user
classes, custom attribute access (configs), exceptions raised and caught, `is_compiling()`,
grad-mode decorators and `inspect.signature`. Each program compiles to one graph (as under
`torch.compile`), gives eager's results, and its guards notice the changes that matter."""

from __future__ import annotations

import collections
import collections.abc
import copy
import dataclasses
import inspect
import os
import re

import pytest
import torch

import dynamo


def _one_graph(fn, *args):
    """`fn` compiled with fullgraph=True: its result on `args`, and the number of graphs."""
    graphs = []

    def counting(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    return dynamo.compile(fn, backend=counting, fullgraph=True)(*args), graphs


class Pair:
    def __init__(self, a, b):
        self.a = a
        self.b = b

    def total(self):
        return self.a + self.b


def test_object_made_in_the_frame_is_returned_with_its_attributes():
    def f(x):
        p = Pair(x, x * 2)
        p.c = p.total()
        return p

    x = torch.randn(3)
    p, graphs = _one_graph(f, x)
    assert type(p) is Pair and p.a is x and len(graphs) == 1
    torch.testing.assert_close(p.c, x * 3)
    assert set(vars(p)) == {"a", "b", "c"}


def test_object_made_in_the_frame_can_refer_to_itself_and_be_stored_outside():
    holder = Pair(None, None)

    def f(x):
        p = Pair(x + 1, None)
        p.b = p
        holder.a = p
        return x * 2

    _one_graph(f, torch.ones(2))
    assert holder.a.b is holder.a
    torch.testing.assert_close(holder.a.a, torch.full((2,), 2.0))


def test_object_made_before_a_graph_break_is_one_object_after_it():
    log = []

    def f(x):
        p = Pair(x, x + 1)
        log.append(p)
        print(end="")  # a graph break: p is built for real here
        p.a = p.a * 10
        return p

    p = dynamo.compile(f)(torch.ones(2))
    assert log[0] is p
    torch.testing.assert_close(p.a, torch.full((2,), 10.0))


@dataclasses.dataclass
class Output:
    logits: torch.Tensor
    loss: torch.Tensor | None = None
    extra: list = dataclasses.field(default_factory=list)

    def __post_init__(self):
        if self.loss is None:
            self.loss = self.logits.sum()


@dataclasses.dataclass(frozen=True)
class Frozen:
    scale: float
    shift: torch.Tensor


def test_dataclasses_made_in_the_frame():
    def f(x):
        out = Output(x * 2)
        frozen = Frozen(3.0, x)
        names = [field.name for field in dataclasses.fields(out)]
        return out, frozen.shift * frozen.scale, names, dataclasses.is_dataclass(out)

    x = torch.randn(4)
    (out, scaled, names, is_dc), graphs = _one_graph(f, x)
    assert len(graphs) == 1 and names == ["logits", "loss", "extra"] and is_dc
    assert type(out) is Output and out.extra == []
    torch.testing.assert_close(out.loss, (x * 2).sum())
    torch.testing.assert_close(scaled, x * 3)


class ModelOutput(collections.OrderedDict):
    """A dict whose non-None fields are also attributes (as Hugging Face's ModelOutput)."""

    def __post_init__(self):
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if value is not None:
                self[field.name] = value

    def __setitem__(self, key, value):
        super().__setitem__(key, value)
        super().__setattr__(key, value)

    def __setattr__(self, name, value):
        if name in self.keys() and value is not None:
            super().__setitem__(name, value)
        super().__setattr__(name, value)

    def __getitem__(self, k):
        if isinstance(k, str):
            return dict(self.items())[k]
        return tuple(self[key] for key in self.keys())[k]


@dataclasses.dataclass
class LMOutput(ModelOutput):
    logits: torch.Tensor | None = None
    hidden: torch.Tensor | None = None
    attentions: tuple | None = None


def test_dict_subclass_output_made_in_the_frame():
    def f(x):
        out = LMOutput(logits=x * 2, hidden=x + 1)
        out.logits = out.logits - 1  # through its __setattr__: the item changes too
        return out, out[0], out["hidden"], len(out), "attentions" in out

    x = torch.randn(3)
    (got, first, hidden, size, has), graphs = _one_graph(f, x)
    want = f(x)
    assert len(graphs) == 1 and type(got) is LMOutput
    assert list(got.keys()) == list(want[0].keys()) == ["logits", "hidden"]
    torch.testing.assert_close(got.logits, want[0].logits)
    torch.testing.assert_close(got["logits"], want[0]["logits"])
    torch.testing.assert_close(first, want[1])
    torch.testing.assert_close(hidden, want[2])
    assert (size, has) == (2, False) and got.attentions is None


class Registry(dict):
    def get(self, key):
        return super().get(str(key)) or {}


REGISTRY = Registry({"a": {"scale": 2.0}})


def test_dict_subclass_from_the_frame_reads_its_items_and_guards_them():
    def f(x):
        return x * REGISTRY.get("a").get("scale", 1.0)

    compiled = dynamo.compile(f, fullgraph=True)
    torch.testing.assert_close(compiled(torch.ones(2)), torch.full((2,), 2.0))
    REGISTRY["a"] = {"scale": 5.0}
    try:
        torch.testing.assert_close(compiled(torch.ones(2)), torch.full((2,), 5.0))
    finally:
        REGISTRY["a"] = {"scale": 2.0}


class Interface(collections.abc.MutableMapping):
    """A registry in the style of Hugging Face's AttentionInterface: a mapping with
    Python special methods (and the ABC's `get`, `__contains__`, which catch KeyError)."""

    _global = {"double": lambda t: t * 2, "square": lambda t: t * t}

    def __init__(self):
        self._local = {}

    def __getitem__(self, key):
        if key in self._local:
            return self._local[key]
        return self._global[key]

    def __setitem__(self, key, value):
        self._local[key] = value

    def __delitem__(self, key):
        del self._local[key]

    def __iter__(self):
        return iter({**self._global, **self._local})

    def __len__(self):
        return len(self._global.keys() | self._local.keys())


FUNCTIONS = Interface()


def test_special_methods_of_user_classes_are_inlined():
    def f(x):
        y = FUNCTIONS["double"](x)
        if "square" in FUNCTIONS and "cube" not in FUNCTIONS:
            y = FUNCTIONS.get("square")(y)
        y = FUNCTIONS.get("cube", lambda t: t - 1)(y)
        return y + len(FUNCTIONS), sorted(FUNCTIONS), bool(FUNCTIONS)

    x = torch.randn(3)
    got, graphs = _one_graph(f, x)
    want = f(x)
    assert len(graphs) == 1 and got[1:] == want[1:]
    torch.testing.assert_close(got[0], want[0])


class Layers(collections.abc.Sequence):
    def __init__(self, scales):
        self.scales = scales

    def __getitem__(self, i):
        return self.scales[i]

    def __len__(self):
        return len(self.scales)


def test_iterating_a_sequence_abc_and_comparing_dataclasses():
    layers = Layers([1.0, 2.0, 3.0])
    a, b = Frozen(1.0, None), Frozen(1.0, None)

    def f(x):
        for scale in layers:
            x = x * scale
        return x + (a == b) + (a != Frozen(2.0, None))

    got, graphs = _one_graph(f, torch.ones(2))
    assert len(graphs) == 1
    torch.testing.assert_close(got, f(torch.ones(2)))


class Config:
    """Attribute names mapped through a class-level table (as Hugging Face's configs do)."""

    attribute_map = {"hidden_size": "n_embd"}

    def __init__(self, n_embd):
        self.n_embd = n_embd

    def __getattribute__(self, key):
        if key != "attribute_map" and key in super().__getattribute__("attribute_map"):
            key = super().__getattribute__("attribute_map")[key]
        return super().__getattribute__(key)


class Lenient:
    def __init__(self):
        self.known = 2

    def __getattr__(self, name):
        return 10


def test_custom_attribute_access_is_inlined_and_guarded():
    config, lenient = Config(4), Lenient()

    def f(x):
        return x * config.hidden_size + lenient.known + lenient.missing

    compiled = dynamo.compile(f, fullgraph=True)
    torch.testing.assert_close(compiled(torch.ones(1)), torch.tensor([16.0]))
    config.n_embd = 5
    torch.testing.assert_close(compiled(torch.ones(1)), torch.tensor([17.0]))
    lenient.missing = 0  # now found on the instance: __getattr__ is not called
    torch.testing.assert_close(compiled(torch.ones(1)), torch.tensor([7.0]))


def _lookup(table, key, default):
    try:
        return table[key]
    except KeyError:
        return default


class Strict:
    def check(self, n):
        if n > 2:
            raise ValueError(f"too many: {n}")
        return n


def test_exceptions_raised_and_caught_inside_the_frame():
    table = {"a": 1.0}
    strict = Strict()

    def f(x):
        y = x * _lookup(table, "a", 0.0) + _lookup(table, "b", 3.0)
        try:
            strict.check(5)
        except ValueError as error:
            y = y + len(str(error))
        try:
            y = y * [1, 2][4]
        except (IndexError, KeyError):
            y = y - 1
        try:
            raise KeyError("k")
        except LookupError:
            y = y * 2
        return y

    got, graphs = _one_graph(f, torch.ones(2))
    assert len(graphs) == 1
    torch.testing.assert_close(got, f(torch.ones(2)))


def test_an_uncaught_exception_still_stops_the_capture_with_its_reason():
    def f(x):
        return x * Strict().check(7)

    with pytest.raises(dynamo.Unsupported, match="too many: 7"):
        dynamo.compile(f, fullgraph=True)(torch.ones(1))
    with pytest.raises(ValueError, match="too many: 7"):
        dynamo.compile(f)(torch.ones(1))


def test_environment_variables_are_read_while_tracing_and_guarded():
    name = "DYNAMO_TEST_LIBRARY_PYTHON_FLAG"
    os.environ.pop(name, None)

    def f(x):
        return x + 1 if os.environ.get(name) is None else x - 1

    compiled = dynamo.compile(f, fullgraph=True)
    torch.testing.assert_close(compiled(torch.zeros(1)), torch.ones(1))
    os.environ[name] = "1"
    try:
        torch.testing.assert_close(compiled(torch.zeros(1)), -torch.ones(1))
    finally:
        del os.environ[name]


def test_is_compiling_is_true_while_tracing_only():
    def f(x):
        if torch.compiler.is_compiling():
            return x + 1
        return x - 1

    got, graphs = _one_graph(f, torch.zeros(1))
    torch.testing.assert_close(got, torch.ones(1))
    torch.testing.assert_close(f(torch.zeros(1)), -torch.ones(1))


class Rotary(torch.nn.Module):
    @torch.no_grad()
    def forward(self, x):
        return x * 2


def test_grad_mode_decorated_forward_and_inspect_signature():
    rotary = Rotary()

    def chunked(a, b):
        return a + b

    def f(x):
        n = len(inspect.signature(chunked).parameters)
        m = len(inspect.signature(rotary.forward).parameters)
        return rotary(x) + n + m

    x = torch.randn(3, requires_grad=True)
    got, graphs = _one_graph(f, x)
    assert len(graphs) == 1 and not got.requires_grad
    torch.testing.assert_close(got, f(x))


def test_iterating_the_views_of_a_signatures_parameters():
    """diffusers' attention asks which keyword arguments its processor takes:
    `set(inspect.signature(processor.__call__).parameters.keys())`."""

    class Processor:
        def __call__(self, attn, hidden_states, scale=1.0):
            return hidden_states

    processor = Processor()

    def f(x):
        parameters = inspect.signature(processor.__call__).parameters
        names = set(parameters.keys())
        defaults = [p.default for p in parameters.values() if p.default is not p.empty]
        pairs = dict(parameters.items())
        return x * len(names) + ("scale" in names) + sum(defaults) + len(pairs)

    x = torch.randn(3)
    got, graphs = _one_graph(f, x)
    assert len(graphs) == 1
    torch.testing.assert_close(got, f(x))


BIG = {f"k{i}": i for i in range(50)}


def test_a_dict_guards_only_the_values_the_code_reads():
    def f(x):
        return x * BIG["k3"]

    compiled = dynamo.compile(f)
    torch.testing.assert_close(compiled(torch.ones(1)), torch.tensor([3.0]))
    report = dynamo.explain(f)(torch.ones(1))
    assert not any("['k4']" in g for g in report.guards)
    BIG["k4"] = -1  # not read: the compiled entry still holds
    BIG["k3"] = 7
    try:
        torch.testing.assert_close(compiled(torch.ones(1)), torch.tensor([7.0]))
    finally:
        BIG["k3"], BIG["k4"] = 3, 4


class Settings:
    pass


def test_a_caught_attribute_error_is_guarded_to_stay_missing():
    settings = Settings()

    def f(x):
        try:
            return x + settings.scale
        except AttributeError:
            return x - 1

    compiled = dynamo.compile(f)
    torch.testing.assert_close(compiled(torch.zeros(1)), -torch.ones(1))
    settings.scale = 5
    torch.testing.assert_close(compiled(torch.zeros(1)), torch.full((1,), 5.0))


class Proto:
    k = 1

    def __init__(self, a):
        self.a = a * self.k


def test_a_class_reached_through_type_of_an_object_is_guarded():
    proto = Proto(1)

    def f(x):
        return x + type(proto).k + proto.__class__(x).a

    compiled = dynamo.compile(f, fullgraph=True)
    torch.testing.assert_close(compiled(torch.ones(1)), torch.full((1,), 3.0))
    Proto.k = 5
    try:
        torch.testing.assert_close(compiled(torch.ones(1)), torch.full((1,), 11.0))
    finally:
        Proto.k = 1


def test_containers_and_objects_made_inside_others_keep_their_identity():
    def f(x, seen):
        a = [x + 1]
        b = [a]
        p = Pair(x, None)
        out = [p]
        seen.append(p)
        return b, a, out

    seen = []
    (b, a, out), _ = _one_graph(f, torch.zeros(1), seen)
    assert b[0] is a and out[0] is seen[0] and type(seen[0]) is Pair
    torch.testing.assert_close(a[0], torch.ones(1))


def test_dict_of_a_dict_subclass_and_attribute_order():
    registry = Registry(ab=1, cd=2)

    def f(x, holder):
        holder.q = 1
        holder.p = 2
        holder.q = 3
        return x + 1, dict(registry), dict(registry, z=3)

    compiled, eager = Settings(), Settings()
    (_, plain, extended), _ = _one_graph(f, torch.zeros(1), compiled)
    f(torch.zeros(1), eager)
    assert plain == {"ab": 1, "cd": 2} and extended == {"ab": 1, "cd": 2, "z": 3}
    assert list(vars(compiled).items()) == list(vars(eager).items())



class ReadsItsOwn(dict):
    """A dict subclass with its own `__iter__`: dict() and dict.update() read it by `keys()`
    and its `__getitem__`, not by the items it stores."""

    def __iter__(self):
        return iter(list(dict.keys(self))[::-1])

    def __getitem__(self, key):
        return f"own {key}"


class StoredItemsAnyway(dict):
    def keys(self):  # not used: a dict keeping dict.__iter__ is copied by its stored items
        return ["b"]


def test_dict_of_a_dict_subclass_with_its_own_iter_reads_its_getitem():
    """With its own `__iter__`, a dict subclass is read by `keys()` and `__getitem__` in
    CPython's dict() and dict.update(), where the trace copied its stored items."""
    def f(x, mine, stored):
        updated = {}
        updated.update(mine)
        return x + 1, dict(mine), updated, dict(stored)

    (_, made, updated, stored), _ = _one_graph(
        f, torch.zeros(1), ReadsItsOwn(a=1, b=2), StoredItemsAnyway(a=1, b=2))
    assert made == updated == {"a": "own a", "b": "own b"}
    assert stored == {"a": 1, "b": 2}


class Lazy:
    def __init__(self):
        self.store = {}

    def __getattr__(self, key):
        try:
            return self.store[key]
        except KeyError:
            raise AttributeError(key) from None


class Gate:
    ready = False

    @property
    def value(self):
        if not self.ready:
            raise AttributeError("value")
        return 1


def test_hasattr_answered_by_the_objects_own_code_is_traced_and_guarded():
    lazy, gate = Lazy(), Gate()

    def f(x):
        return x + hasattr(lazy, "b") + 10 * hasattr(gate, "value")

    compiled = dynamo.compile(f, fullgraph=True)
    torch.testing.assert_close(compiled(torch.zeros(1)), torch.zeros(1))
    lazy.store["b"] = 1
    gate.ready = True
    torch.testing.assert_close(compiled(torch.zeros(1)), torch.full((1,), 11.0))


class AttrDict(dict):
    pass


class Forwarding:
    def __getattribute__(self, key):
        return super().__getattribute__(key)

    def __getattr__(self, key):
        return 42


def test_dict_subclass_init_vars_and_getattr_after_getattribute():
    def f(x):
        made = AttrDict(b=2)
        return x + Forwarding().missing, made, vars(Pair(x, 1))

    (y, made, attrs), graphs = _one_graph(f, torch.zeros(1))
    assert type(made) is AttrDict and made == {"b": 2} and len(graphs) == 1
    torch.testing.assert_close(y, torch.full((1,), 42.0))
    assert set(attrs) == {"a", "b"}


def test_changing_an_outside_dict_subclass_is_a_clean_graph_break():
    registry = Registry(a=1)

    def f(x):
        value = registry.pop("a", None)
        return x + 1, value

    report = dynamo.explain(f)(torch.zeros(1))
    assert report.eager == [] and len(report.breaks) == 1 and registry == {}
    registry["a"] = 1
    assert dynamo.compile(f)(torch.zeros(1))[1] == 1 and registry == {}


class MappedConfig:
    """Attribute names mapped on the way in, as Hugging Face's configs do."""

    attribute_map = {"hidden_size": "n_embd"}

    def __init__(self):
        self.n_embd = 4
        self.problem_type = None

    def __setattr__(self, key, value):
        if key in super().__getattribute__("attribute_map"):
            key = super().__getattribute__("attribute_map")[key]
        super().__setattr__(key, value)


class Slotted:
    __slots__ = ("scale",)

    def __init__(self, scale):
        self.scale = scale


VALIDATORS = {list: len, tuple: len}


def test_setting_attributes_through_the_classs_own_setattr_and_setters():
    config, gate, slotted = MappedConfig(), Gate(), Slotted(3.0)

    def f(x):
        if config.problem_type is None:
            config.problem_type = "regression"
        config.hidden_size = 8  # lands in n_embd
        return x * config.n_embd + slotted.scale + VALIDATORS[list]([1, 2])

    (y, graphs) = _one_graph(f, torch.ones(1))
    assert len(graphs) == 1 and config.problem_type == "regression"
    assert config.n_embd == 8 and "hidden_size" not in vars(config)
    torch.testing.assert_close(y, torch.full((1,), 13.0))
    slotted.scale = 1.0  # a slot is guarded like an attribute
    config.n_embd = 4
    torch.testing.assert_close(dynamo.compile(f)(torch.ones(1)), f(torch.ones(1)))
    assert not gate.ready


class RotaryLike(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)

    @torch.no_grad()
    def rope(self, x):
        return x * 2

    def forward(self, x):
        return self.fc(x) + self.rope(x)


def test_aot_eager_lowers_a_no_grad_block_that_changes_nothing(recwarn):
    model, x = RotaryLike(), torch.randn(2, 4)
    dynamo.reset()
    with torch.no_grad():  # the decorator's switch is no change: lowered, no warning
        torch.testing.assert_close(dynamo.compile(model, backend="aot_eager")(x), model(x))
    assert not [w for w in recwarn if "aot_eager" in str(w.message)]


class TwoLayers(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = torch.nn.ModuleList(torch.nn.Linear(4, 4) for _ in range(2))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def test_forward_hooks_of_submodules_are_inlined_and_guarded():
    model, seen = TwoLayers(), []
    for layer in model.layers:
        layer.register_forward_hook(lambda module, args, out: seen.append(out))
    model.layers[0].register_forward_pre_hook(lambda module, args: (args[0] * 2,))
    model.layers[1].register_forward_hook(lambda module, args, kwargs, out: out + 1,
                                          with_kwargs=True)
    x = torch.randn(2, 4)
    got, graphs = _one_graph(model.forward, x)
    recorded = list(seen)
    seen.clear()
    torch.testing.assert_close(got, model(x))
    assert len(graphs) == 1 and len(recorded) == len(seen) == 2
    for a, b in zip(recorded, seen):
        torch.testing.assert_close(a, b)
    model.layers[1].register_forward_hook(lambda module, args, out: out * 0)  # a new hook
    torch.testing.assert_close(dynamo.compile(model.forward)(x), model(x))


class LossHead(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 3)

    def forward(self, x, labels):
        logits = self.fc(torch.nn.ReLU()(x))
        loss = torch.nn.CrossEntropyLoss(label_smoothing=0.1)(logits, labels)
        return loss, torch.nn.Tanh()


def test_torch_modules_made_in_forward():
    model, x, y = LossHead(), torch.randn(4, 8), torch.tensor([0, 1, 2, 0])
    (loss, made), graphs = _one_graph(model, x, y)
    torch.testing.assert_close(loss, model(x, y)[0])
    assert len(graphs) == 1 and type(made) is torch.nn.Tanh
    assert dynamo.compile(model)(x, y)[1] is not made  # a new module per call, as in eager


def test_an_exception_leaving_the_frame_through_its_handlers_is_a_clean_break(recwarn):
    log = []

    def through_finally(x):
        try:
            y = x + 1
            if x.shape[0] > 1:
                raise ValueError("boom")
        finally:
            log.append(1)
        return y

    def handled_then_break(x, table):
        try:
            v = table["missing"]
        except KeyError:
            v = 2.0
        y = x * v
        print(end="")  # a graph break after the handler is done
        return y + 1

    with pytest.raises(ValueError, match="boom"):
        dynamo.compile(through_finally)(torch.ones(3))
    assert log == [1]
    report = dynamo.explain(handled_then_break)(torch.ones(2), {})
    assert report.graph_count == 2 and report.breaks[0].reason == "print()"
    assert not [w for w in recwarn if "runs eagerly" in str(w.message)]


def test_raise_from_is_a_graph_break_as_raise_is(recwarn):
    # a break where it raises, not a frame that runs eagerly (for the calls that do not raise too)
    log = []

    def f(x, table):
        y = x * 2
        log.append(1)
        if "k" not in table:
            raise KeyError("k") from None
        if table["k"] < 0:
            raise ValueError(f"bad {y.shape}") from OSError("o")
        return y * table["k"]

    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    compiled = dynamo.compile(f, backend=backend)
    for table in ({}, {"k": 3.0}, {"k": -1.0}, {}):
        log.clear()
        try:
            f(torch.ones(2), table)
        except Exception as error:
            with pytest.raises(type(error)) as got:
                compiled(torch.ones(2), table)
            assert (str(got.value), type(got.value.__cause__), got.value.__suppress_context__) \
                == (str(error), type(error.__cause__), error.__suppress_context__)
            assert got.traceback[-1].name == "f" and log == [1, 1]
        else:
            torch.testing.assert_close(compiled(torch.ones(2), table), f(torch.ones(2), table))
    assert len(graphs) == 1  # the path that returns (the raising ones use no tensor op)
    assert not [w for w in recwarn if "runs eagerly" in str(w.message)]


@dataclasses.dataclass(frozen=True)
class Key:
    a: int
    b: str


def test_hash_of_a_frozen_dataclass_is_its_fields_hash():
    key = Key(1, "x")
    table = {hash(key): 3.0}

    def f(x):
        return x * table[hash(Key(1, "x"))] + (hash(key) == hash(Key(1, "x")))

    got, graphs = _one_graph(f, torch.ones(1))
    assert len(graphs) == 1
    torch.testing.assert_close(got, torch.full((1,), 4.0))


class Settings2:
    def __init__(self):
        self.scale = 2.0
        self.table = {"a": [1, 2]}
        self.alias = self.table
        self.prefix_layers = 3


def test_deepcopy_and_delattr_of_objects_are_traced():
    settings = Settings2()

    def f(x):
        copied = copy.deepcopy(settings)
        copied.scale = 3.0
        copied.table["a"].append(3)
        copied.layers = copied.prefix_layers
        del copied.prefix_layers
        return x * copied.scale + len(copied.alias["a"]), copied

    (y, copied), graphs = _one_graph(f, torch.ones(1))
    assert len(graphs) == 1 and type(copied) is Settings2
    torch.testing.assert_close(y, torch.full((1,), 6.0))
    assert copied.alias is copied.table and copied.table == {"a": [1, 2, 3]}
    assert settings.table == {"a": [1, 2]} and settings.scale == 2.0  # the original is untouched
    assert copied.layers == 3 and not hasattr(copied, "prefix_layers")


Point = collections.namedtuple("Point", "a b")


def test_an_element_read_from_a_tuple_is_the_element_itself():
    holder = Settings()
    holder.p = Point([1], (2, [3]))

    def f(x):
        t = (1, [2])
        t[1].append(3)
        copied = copy.deepcopy(holder)
        copied.p.b[1].append(8)
        return x + 1, t, copied.p

    (_, t, p), _ = _one_graph(f, torch.ones(1))
    assert t == (1, [2, 3]) and p == Point([1], (2, [3, 8]))

    def repeated(x):
        a = [[1]] * 2
        a[0].append(5)
        return x + 1, a

    (_, a), _ = _one_graph(repeated, torch.ones(1))
    assert a == [[1, 5], [1, 5]] and a[0] is a[1]
    assert holder.p == Point([1], (2, [3]))


class Recorder:
    def __init__(self, log):
        self.log = log

    def __enter__(self):
        self.log.append("in")
        return self

    def __exit__(self, *exc):
        self.log.append("out")
        return False


def test_context_managers_written_in_python(recwarn):
    import contextlib

    def f(x, log):
        with contextlib.nullcontext():
            y = x + 1
        with Recorder(log) as recorder:
            y = y * len(recorder.log)
        with Recorder(log):
            print(end="")  # a graph break inside the block
            y = y - 1
        return y

    compiled_log, eager_log = [], []
    torch.testing.assert_close(dynamo.compile(f)(torch.ones(1), compiled_log),
                               f(torch.ones(1), eager_log))
    assert compiled_log == eager_log == ["in", "out", "in", "out"]
    assert not [w for w in recwarn if "runs eagerly" in str(w.message)]


SHARED = None


def test_values_reached_through_inputs_are_read_before_the_side_effects():
    global SHARED

    def rebind(x, a):
        p = a[0]
        a[0] = [9]
        return x + 1, p

    def pop(x, d):
        return x + 1, d.pop("k")

    def through_a_global(x, a):
        SHARED.insert(0, [0])
        a.append(7)
        return x + 1

    def at_a_break(x, a):
        p = a[1]
        a.reverse()
        print(end="")
        return x + len(p), p

    assert dynamo.compile(rebind)(torch.ones(1), [[1], [2]])[1] == [1]
    assert dynamo.compile(pop)(torch.ones(1), {"k": [1]})[1] == [1]
    a = [1]
    SHARED = [a]
    dynamo.compile(through_a_global)(torch.ones(1), a)
    assert a == [1, 7] and SHARED == [[0], [1, 7]]
    assert dynamo.compile(at_a_break)(torch.ones(1), [[1], [2, 3]])[1] == [2, 3]
    t = ([1],)
    assert dynamo.compile(lambda x, t: (x + 1, t))(torch.ones(1), t)[1] is t
    _, u, v = dynamo.compile(lambda x, t: (x + 1, *((t,),) * 2))(torch.ones(1), t)
    assert u is v  # one tuple made in the trace, returned twice


def test_min_max_keys_live_list_iteration_and_shallow_copies():
    obj = Pair([1], 2)

    def f(x, rows):
        grown = [1, 2]
        for value in grown:
            if len(grown) < 5:
                grown.append(value)
        it = iter(grown)
        grown.append(100)
        shallow = copy.copy(obj)
        shallow.b = 3
        return (x + 1, min(rows, key=len), max(rows, key=len), max([], default=7), list(it),
                copy.copy(rows), shallow.a is obj.a, shallow.b, obj.b)

    rows = [[3], [1, 2], [1]]
    got, graphs = _one_graph(f, torch.ones(1), rows)
    assert len(graphs) == 1 and got[1:] == f(torch.ones(1), rows)[1:]
    assert got[5] is not rows and got[5][0] is rows[0]


def test_min_max_misuse_raises_python_type_error():
    """`max()` raised the ValueError of an empty sequence (not the TypeError of a missing
    argument), and `max(a, b, default=d)` returned the larger value instead of raising."""
    def f(x):
        errors = []
        for call in (lambda: max(), lambda: min(key=len), lambda: max(1, 2, default=3),
                     lambda: min([], key=len)):
            try:
                call()
            except (TypeError, ValueError) as e:
                errors.append((type(e).__name__, str(e)))
        return x + len(errors), errors, max([], default=None), min(3, 2)

    got, graphs = _one_graph(f, torch.ones(1))
    expected = f(torch.ones(1))
    assert len(graphs) == 1 and got[1:] == expected[1:] and torch.equal(got[0], expected[0])


def _slice_assigned() -> list:
    values = [1, 2, 3]
    values[::2] = [1]
    return values


def test_builtins_and_methods_misused_on_constants_raise_pythons_errors():
    """Python's own TypeError or ValueError for a builtin or a list/dict method misused on
    constants is raised in the trace, where a `try` catches it: these failed inside dynamo (an
    internal error as the graph break's reason, with the handler's own signature for `bool(1,
    2)`), so under fullgraph=True no `try` of the program could catch them."""
    def f(x):
        errors = []
        for call in (lambda: bool(1, 2), lambda: len([1], [2]), lambda: range(1.5),
                     lambda: range(1, 5, 0), lambda: enumerate([1], start="a"),
                     lambda: [].insert("a", 1), lambda: {}.get(), lambda: {}.get(1, 2, 3),
                     lambda: {}.setdefault([1]), _slice_assigned):
            try:
                call()
            except (TypeError, ValueError) as e:
                errors.append((type(e).__name__, str(e)))
        return x + len(errors), errors, list(enumerate("ab", start=True)), bool(3)

    got, graphs = _one_graph(f, torch.ones(1))
    expected = f(torch.ones(1))
    assert len(graphs) == 1 and got[1:] == expected[1:] and torch.equal(got[0], expected[0])



def test_a_builtin_keyword_its_handler_names_otherwise_is_no_error():
    """`enumerate(iterable=...)` is valid Python, though the handler calls that argument
    `obj`: the misuse check called enumerate with a stand-in for it, whose TypeError ("'object'
    object is not iterable") the program's `try` caught, a wrong branch taken."""
    def f(x):
        try:
            return x + 1, list(enumerate(iterable=[5, 6]))
        except TypeError:
            return x - 1, []

    compiled = dynamo.compile(f, backend="eager")
    got, expected = compiled(torch.ones(1)), f(torch.ones(1))
    assert torch.equal(got[0], expected[0]) and got[1] == expected[1] == [(0, 5), (1, 6)]


class TwoSlots:
    __slots__ = ("a", "b")


def test_hasattr_yes_and_slots_are_guarded():
    holder, slotted = Settings(), TwoSlots()
    holder.b = 1

    def f(x):
        return x + hasattr(holder, "b") + 10 * hasattr(slotted, "b")

    def g(x):
        return x + getattr(slotted, "b", 100)

    compiled_f, compiled_g = dynamo.compile(f), dynamo.compile(g)
    for change in (lambda: delattr(holder, "b"), lambda: setattr(slotted, "b", 3),
                   lambda: delattr(slotted, "b")):
        torch.testing.assert_close(compiled_f(torch.zeros(1)), f(torch.zeros(1)))
        torch.testing.assert_close(compiled_g(torch.zeros(1)), g(torch.zeros(1)))
        change()
    torch.testing.assert_close(compiled_f(torch.zeros(1)), f(torch.zeros(1)))
    copied = dynamo.compile(lambda x, o: (x + 1, copy.copy(o)))(torch.zeros(1), slotted)[1]
    assert type(copied) is TwoSlots  # slots are not traced: copied for real


def test_slots_of_an_object_from_the_frame_are_written_in_one_graph():
    def step(state, x):
        state.a = state.a + 1  # a number, then a tensor, into slots
        state.b = x * state.a
        return state.b + 1

    compiled = dynamo.compile(step, fullgraph=True)
    ours, theirs = TwoSlots(), TwoSlots()
    ours.a = theirs.a = 1
    for _ in range(2):
        torch.testing.assert_close(compiled(ours, torch.ones(2)), step(theirs, torch.ones(2)))
        assert ours.a == theirs.a
        torch.testing.assert_close(ours.b, theirs.b)


def test_an_exception_after_a_break_inside_a_with_or_try_block():
    def in_no_grad(x, d):
        with torch.no_grad():
            print(end="")  # a graph break
            y = x + d["k"]  # a KeyError in the resumed part
        return y

    def in_a_loop(x, d):
        out = []
        for _ in range(2):
            try:
                print(end="")
                out.append(x + d["k"])
            except KeyError:
                out.append(x)
        return out

    with pytest.raises(KeyError):
        dynamo.compile(in_no_grad)(torch.zeros(1), {})
    assert torch.is_grad_enabled()
    got = dynamo.compile(in_a_loop)(torch.zeros(1), {})
    assert len(got) == 2 and all(torch.equal(t, torch.zeros(1)) for t in got)


def test_a_break_inside_a_with_inside_a_try_resumes(recwarn):
    log = []

    def f(x, flag):
        try:
            with Recorder(log):
                print(end="")  # a graph break two blocks deep
                if flag:
                    raise KeyError("x")
        except KeyError:
            return x - 1
        return x + 1

    compiled = dynamo.compile(f)
    torch.testing.assert_close(compiled(torch.zeros(1), True), -torch.ones(1))
    torch.testing.assert_close(compiled(torch.zeros(1), False), torch.ones(1))
    assert log == ["in", "out", "in", "out"]
    assert not [w for w in recwarn if "runs eagerly" in str(w.message)]


VERSION_PATTERN = re.compile(r"(\d+)\.(\d+)")


class Release(str):
    """A str subclass that compares as a version (as torch's TorchVersion does)."""

    def __ge__(self, other):
        return tuple(map(int, self.split("."))) >= tuple(map(int, other.split(".")))


RELEASE = Release("2.1")


def test_version_checks_and_compiled_patterns_run_in_the_graphs_trace() -> None:
    """diffusers' `is_torch_version("<", "2.1")`: packaging parses `torch.__version__` (a str
    subclass) with a compiled pattern; both are constants of the trace, guarded (a pattern by
    identity, the str subclass by value), so a bf16 upsampling block is one graph."""
    from packaging import version

    def f(x, text):
        if version.parse(torch.__version__) < version.parse("2.1"):
            x = x.float()
        found = VERSION_PATTERN.match(text)
        scale = int(found.group(1)) if found else -1
        return x * scale + (1 if RELEASE >= "2.0" else 0), found is None

    compiled = dynamo.compile(f, backend="eager", fullgraph=True)
    x = torch.randn(3)
    for text in ("3.4", "x", "5.6"):
        torch.testing.assert_close(compiled(x, text), f(x, text))
    global RELEASE, VERSION_PATTERN
    old = RELEASE, VERSION_PATTERN
    try:
        RELEASE, VERSION_PATTERN = Release("1.9"), re.compile(r"(\d)")
        torch.testing.assert_close(compiled(x, "7"), f(x, "7"))
    finally:
        RELEASE, VERSION_PATTERN = old
