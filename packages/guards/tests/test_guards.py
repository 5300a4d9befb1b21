"""Every guard kind, passing and failing, through the compiled check and through explain."""

from __future__ import annotations

import functools

import pytest
import torch

from guards import (
    Alive,
    AttrSource,
    ClassLacks,
    ClosureCellSource,
    DefaultSource,
    DictContains,
    DictKeys,
    DictKeySource,
    DistinctObjects,
    Equals,
    GetItemSource,
    GlobalSource,
    GlobalState,
    GuardSet,
    Identity,
    Length,
    LocalSource,
    ModuleTraining,
    ParameterSource,
    PlainSubclassLacks,
    SameObject,
    SubmoduleSource,
    TensorMatch,
    TensorPropertySource,
    TypeMatch,
    TypeSource,
)

X, Y = LocalSource("x"), LocalSource("y")


def _both(guard, f_locals, f_globals=None):
    """The compiled check's verdict and explain's, which must agree."""
    gs = GuardSet([guard])
    f_globals = f_globals or {}
    ok = gs.check(f_locals, f_globals)
    reasons = gs.explain(f_locals, f_globals)
    assert ok == (not reasons), (ok, reasons)
    return ok, reasons


def test_sources_print_and_fetch() -> None:
    def outer():
        captured = 5

        def inner(a, b=7, *, c=9):
            return captured

        return inner

    fn = outer()
    module = torch.nn.Sequential(torch.nn.Linear(2, 3))
    frame = ({"m": module, "fn": fn, "d": {"k": 1, "j": 2}, "t": torch.zeros(4, 5)}, {"g": [10, 11]})
    cases = {
        GetItemSource(GlobalSource("g"), 1): ("G['g'][1]", 11),
        ParameterSource(SubmoduleSource(LocalSource("m"), "0"), "bias"): (
            "L['m']._modules['0']._parameters['bias']", module[0].bias),
        ClosureCellSource(LocalSource("fn"), 0): ("L['fn'].__closure__[0].cell_contents", 5),
        DefaultSource(LocalSource("fn"), 0): ("L['fn'].__defaults__[0]", 7),
        DefaultSource(LocalSource("fn"), "c"): ("L['fn'].__kwdefaults__['c']", 9),
        DictKeySource(LocalSource("d"), 1): ("list(L['d'].keys())[1]", "j"),
        TypeSource(LocalSource("d")): ("type(L['d'])", dict),
        TensorPropertySource(LocalSource("t"), "size", 1): ("L['t'].size()[1]", 5),
        TensorPropertySource(LocalSource("t"), "stride", 0): ("L['t'].stride()[0]", 5),
        AttrSource(LocalSource("m"), "training"): ("L['m'].training", True),
    }
    for source, (expr, value) in cases.items():
        assert str(source) == expr
        fetched = source.fetch(*frame)
        assert fetched is value or (not isinstance(value, torch.Tensor) and fetched == value)
        assert eval(expr, {"L": frame[0], "G": frame[1]}) is fetched or fetched == value
    assert GetItemSource(X, 0) == GetItemSource(LocalSource("x"), 0)
    assert len({GetItemSource(X, 0), GetItemSource(X, 0), GetItemSource(X, 1)}) == 2


_KEY = torch.ones(1)


class _Plain:
    pass


class _PlainChild(_Plain):
    pass


class _Delegating(_PlainChild):
    def __getattr__(self, name):
        return 1


@pytest.mark.parametrize(
    "guard, good, bad, says",
    [
        (TypeMatch(X, int), 3, 3.0, "it is float"),
        (Equals(X, 3), 3, True, "it is True"),
        (Equals(X, 2.5), 2.5, 2.0, "it is 2.0"),
        (Equals(X, "relu"), "relu", "gelu", "it is 'gelu'"),
        (Equals(X, None), None, 0, "it is 0"),
        (Equals(X, (1, "a")), (1, "a"), (1, "b"), "it is (1, 'b')"),
        (Equals(X, (3,)), (3,), (3.0,), "it is (3.0,)"),
        (Equals(X, (3,)), (3,), (True,), "it is (True,)"),
        (Equals(X, 0.0), 0.0, -0.0, "it is -0.0"),
        (Equals(X, float("nan")), float("nan"), 1.0, "it is 1.0"),
        (Equals(X, frozenset({1})), frozenset({1}), frozenset({1.0}), "it is frozenset({1.0})"),
        (Equals(X, torch.Size([2, 3])), torch.Size([2, 3]), (2, 3), "it is (2, 3)"),
        (DictContains(X, "forward", False), {"a": 1}, {"forward": 1}, "it is there"),
        (DictContains(X, "a"), {"a": 1}, {}, "it is missing"),
        (Equals(X, torch.float16), torch.float16, torch.float32, "it is torch.float32"),
        (Equals(X, torch.device("cpu")), torch.device("cpu"), torch.device("meta"), "meta"),
        (Length(X, 2), [1, 2], [1], "it is 1"),
        (DictKeys(X, ("a", "b")), {"a": 1, "b": 2}, {"b": 2, "a": 1}, "('b', 'a')"),
        # tensor keys are themselves only (`==` on one-element tensors compares their values)
        (DictKeys(X, (_KEY,)), {_KEY: 1}, {torch.ones(1): 1}, "tensor([1.])"),
        (TensorMatch.of(X, torch.zeros(4, 5)), torch.ones(4, 5), torch.ones(4, 6),
         "size(1) is 6, not 5"),
        (TensorMatch.of(X, torch.zeros(4, 5)), torch.ones(4, 5), torch.ones(5, 4).t(),
         "stride(0) is 1, not 5"),
        (TensorMatch.of(X, torch.zeros(4, 5)), torch.ones(4, 5), torch.ones(4, 5).double(),
         "dtype is torch.float64"),
        (TensorMatch.of(X, torch.zeros(3)), torch.ones(3), torch.ones(3, requires_grad=True),
         "requires_grad is True"),
        (TensorMatch.of(X, torch.zeros(3)), torch.ones(3), torch.ones(3, device="meta"),
         "device is meta"),
        (TensorMatch.of(X, torch.zeros(3)), torch.ones(3), torch.nn.Parameter(torch.ones(3)),
         "it is a Parameter"),
        (TensorMatch.of(X, torch.zeros(3, 4), dynamic_dims=(0,)), torch.ones(9, 4),
         torch.ones(9, 5), "size(1) is 5, not 4"),
        (TensorMatch.of(X, torch.zeros(3, 4), dynamic_dims=(0, 1)), torch.ones(9, 7),
         torch.ones(7, 9).t(), "stride(0) is 1, not stride(1) * size(1) = 63"),
        (TensorMatch.of(X, torch.zeros(3, 8)[:, :4], dynamic_dims=(0,)), torch.ones(5, 8)[:, :4],
         torch.ones(5, 4), "stride(0) is 4, not 8"),
        (ModuleTraining(X, True), torch.nn.Linear(1, 1), torch.nn.Linear(1, 1).eval(),
         "it is False"),
        # `object`'s own `__getattribute__` does not count (no class can change it)
        (ClassLacks(X, ("zz", "__getattr__", "__getattribute__")), _PlainChild, _Delegating,
         "_Delegating has '__getattr__' now"),
    ],
)
def test_guard_passes_and_fails_with_a_reason(guard, good, bad, says) -> None:
    assert _both(guard, {"x": good}) == (True, [])
    ok, reasons = _both(guard, {"x": bad})
    assert not ok and len(reasons) == 1 and says in reasons[0]
    assert reasons[0].startswith(guard.describe())


def test_inference_tensors_do_not_match_normal_ones() -> None:
    with torch.inference_mode():
        inference = torch.ones(3)
    ok, reasons = _both(TensorMatch.of(X, torch.zeros(3)), {"x": inference})
    assert not ok and "is_inference" in reasons[0]


def test_identity_is_weak_and_fails_once_the_object_is_gone() -> None:
    def f():
        return 1

    guard = Identity.of(X, f)
    assert _both(guard, {"x": f}) == (True, [])
    ok, reasons = _both(guard, {"x": functools.partial(f)})
    assert not ok and "another object" in reasons[0]
    del f
    ok, reasons = _both(guard, {"x": lambda: 1})
    assert not ok and "no longer exists" in reasons[0]


def test_aliasing_and_non_aliasing() -> None:
    t, u = torch.ones(2), torch.ones(2)
    assert _both(SameObject(X, Y), {"x": t, "y": t}) == (True, [])
    assert not _both(SameObject(X, Y), {"x": t, "y": u})[0]
    distinct = DistinctObjects((X, Y, LocalSource("z")))
    assert _both(distinct, {"x": t, "y": u, "z": 3}) == (True, [])
    ok, reasons = _both(distinct, {"x": t, "y": u, "z": t})
    assert not ok and "L['x'] and L['z'] are the same object" in reasons[0]


def test_global_state_guard_sees_grad_mode_and_default_dtype() -> None:
    guard = GlobalState()
    assert _both(guard, {}) == (True, [])
    with torch.no_grad():
        ok, reasons = _both(guard, {})
    assert not ok and "grad mode is False, not True" in reasons[0]
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        assert not _both(guard, {})[0]
    finally:
        torch.set_default_dtype(previous)


def test_alive_guard() -> None:
    class Box:
        pass

    box = Box()
    guard = Alive.of(box, "the box")
    assert _both(guard, {}) == (True, [])
    del box
    ok, reasons = _both(guard, {})
    assert not ok and reasons == ["the box is alive failed: it has been freed"]


def test_a_source_that_cannot_be_read_fails_the_check_without_raising() -> None:
    gs = GuardSet([Equals(AttrSource(X, "missing"), 1), TensorMatch.of(Y, torch.ones(2))])
    assert gs.check({"x": object(), "y": torch.ones(2)}, {}) is False
    assert gs.check({"y": torch.ones(2)}, {}) is False
    assert gs.check({"x": 5, "y": "not a tensor"}, {}) is False
    reasons = gs.explain({"y": torch.ones(2)}, {})
    assert reasons == ["L['x'].missing == 1 failed: L['x'] could not be read (KeyError: 'x')"]


def test_fetching_a_missing_key_adds_nothing_to_a_defaultdict() -> None:
    import collections

    source = GetItemSource(X, "a")
    d = collections.defaultdict(list)
    with pytest.raises(KeyError):
        source.fetch({"x": d}, {})
    assert GuardSet([Equals(source, 1)]).explain({"x": d}, {}) and dict(d) == {}


def test_duplicates_and_implied_guards_are_dropped() -> None:
    t = torch.ones(2)
    gs = GuardSet([TypeMatch(X, torch.Tensor), TensorMatch.of(X, t), TensorMatch.of(X, t),
                   Equals(Y, (1, 2)), Length(Y, 2), TypeMatch(Y, tuple)])
    assert [type(g).__name__ for g in gs] == ["TensorMatch", "Equals"]


def test_generated_check_fetches_each_value_once_and_reads_well() -> None:
    model = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.Linear(3, 1))
    root = LocalSource("self")
    gs = GuardSet()
    for i, layer in enumerate(model):
        sub = SubmoduleSource(root, str(i))
        for name, p in layer.named_parameters():
            gs.add(TensorMatch.of(ParameterSource(sub, name), p))
        gs.add(ModuleTraining(sub, True))
    assert gs.check({"self": model}, {})
    assert gs.source.count("L['self']") == 1
    assert gs.source.count("._modules") == 1  # one read of the table, for both children
    assert gs.source.count("['0']") == 1
    assert gs.source.startswith("def check(L, G):")
    model[1].eval()
    assert not gs.check({"self": model}, {})
    assert gs.explain({"self": model}, {}) == [
        "L['self']._modules['1'].training is True failed: it is False"
    ]


def test_equality_guards_on_enum_members_and_int_subclasses() -> None:
    import enum

    class Kind(enum.IntEnum):
        A = 1
        B = 2

    guards = GuardSet([Equals(LocalSource("k"), Kind.A), Equals(LocalSource("t"), (Kind.B, 3))])
    assert guards.check({"k": Kind.A, "t": (Kind.B, 3)}, {})
    assert not guards.check({"k": Kind.B, "t": (Kind.B, 3)}, {})
    assert not guards.check({"k": 1, "t": (Kind.B, 3)}, {})  # equal, but not the same type


def test_equal_constants_of_other_types_are_not_merged_away() -> None:
    for a, b, value in ((1, True, 1), (0.0, -0.0, 0.0)):
        gs = GuardSet([Equals(X, a), Equals(X, b)])
        assert len(gs) == 2 and not gs.check({"x": value}, {})


def test_zeros_of_either_sign_differ_for_float_subclasses_and_other_numbers() -> None:
    # np.float64 is a float subclass, np.float32 and Decimal are not floats: `==` says their
    # -0.0 and 0.0 are equal, and `math.copysign(1.0, t[0])` of a tuple guarded whole told them
    # apart (a stale entry returned the other sign's result)
    import decimal

    import numpy as np

    class MyFloat(float):
        pass

    for negative, positive in ((np.float64(-0.0), np.float64(0.0)), (MyFloat(-0.0), MyFloat(0.0)),
                               (np.float32(-0.0), np.float32(0.0)),
                               (decimal.Decimal("-0"), decimal.Decimal("0")),
                               (np.complex64(complex(0, -0.0)), np.complex64(0))):
        for a, b in ((negative, positive), ((negative,), (positive,)),
                     (frozenset([negative]), frozenset([positive]))):
            guards = GuardSet([Equals(X, a)])
            assert guards.check({"x": a}, {}) and Equals(X, a).holds(a)
            assert not guards.check({"x": b}, {}) and not Equals(X, a).holds(b)
            assert "failed" in guards.explain({"x": b}, {})[0]


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("layout", [torch.jagged, torch.strided])
def test_a_nested_tensor_is_refused_by_a_tensor_match(layout) -> None:
    # a jagged tensor's sizes hold a nested int (`j1`) that the check read as a name: a guard
    # that never held, though explain said it did; a strided one's shape raised an internal error
    t = torch.nested.nested_tensor([torch.ones(2, 3), torch.ones(4, 3)], layout=layout)
    with pytest.raises(TypeError, match="nested tensor"):
        TensorMatch.of(X, t)


def test_equal_frozensets_that_iterate_in_another_order_differ() -> None:
    one_nine, nine_one = frozenset([1, 9]), frozenset([9, 1])
    assert one_nine == nine_one and list(one_nine) != list(nine_one)
    for value in (one_nine, (one_nine, 2)):
        guards = GuardSet([Equals(X, value)])
        assert guards.check({"x": value}, {}) and Equals(X, value).holds(value)
        other = nine_one if value is one_nine else (nine_one, 2)
        assert not guards.check({"x": other}, {}) and not Equals(X, value).holds(other)
        assert "failed" in guards.explain({"x": other}, {})[0]


@pytest.mark.parametrize("value", [[1, 2], {"layers": [1, 2]}, (1, [2])])
def test_equality_guards_take_constants_only(value) -> None:
    # A list or dict can change in place after the guard is made: the guard would then expect
    # the changed value, and a cache keyed on it would hit stale entries.
    with pytest.raises(TypeError, match="can change in place"):
        Equals(LocalSource("cfg"), value)
    assert Equals(LocalSource("cfg"), (1, (2, "a"))).holds((1, (2, "a")))


def test_a_dynamic_dim_out_of_range_raises() -> None:
    with pytest.raises(IndexError, match="dynamic dim 5"):
        TensorMatch.of(X, torch.randn(3, 4), (5,))


def test_odd_local_names_and_keys_make_valid_checks() -> None:
    import enum

    class Color(enum.Enum):
        RED = 1

    gs = GuardSet([Length(LocalSource("_"), 1), Equals(X, 3)])  # `_` once shadowed `L`
    assert _both(gs.guards[0], {"_": [0], "x": 3}) == (True, [])
    assert gs.check({"_": [0], "x": 3}, {}) and not gs.check({"_": [0], "x": 4}, {})
    d = {torch.float32: 3, float("inf"): 4, Color.RED: 5}
    for key, value in ((torch.float32, 3), (float("inf"), 4), (Color.RED, 5)):
        guard = Equals(GetItemSource(X, key), value)
        assert _both(guard, {"x": d}) == (True, [])
        assert _both(guard, {"x": {**d, key: -1}})[0] is False


def test_constants_checked_together_may_also_be_compared_by_identity() -> None:
    a, b = LocalSource("a"), LocalSource("b")
    gs = GuardSet([Equals(a, 1), Equals(b, 2), DistinctObjects((a, b))])
    assert gs.check({"a": 1, "b": 2}, {})
    gs = GuardSet([Equals(a, 1), Equals(b, 1), SameObject(a, b)])
    assert gs.check({"a": 1, "b": 1}, {})


def test_tensors_of_another_layout_do_not_match_strided_ones() -> None:
    # a sparse or mkldnn tensor can have the sizes, and even the strides, of a dense one
    cases = [torch.ones(1).to_sparse()]
    if torch.backends.mkldnn.is_available():
        cases.append(torch.ones(3).to_mkldnn())
    for other in cases:
        ok, reasons = _both(TensorMatch.of(X, torch.zeros(other.shape)), {"x": other})
        assert not ok and "layout" in reasons[0]


def _parameter_guards(model: torch.nn.Module) -> GuardSet:
    gs = GuardSet()
    for i, layer in enumerate(model):
        for name, p in layer.named_parameters():
            gs.add(TensorMatch.of(ParameterSource(SubmoduleSource(LocalSource("m"), str(i)), name),
                                  p))
    return gs


def test_many_parameters_are_checked_together_and_each_change_is_caught() -> None:
    with torch.inference_mode():
        inference = torch.ones(3, 4)
    changes = {
        "dtype": lambda p: setattr(p, "data", p.data.double()),
        "requires_grad": lambda p: p.requires_grad_(False),
        "size(1)": lambda p: setattr(p, "data", torch.ones(3, 5)),
        "stride(0)": lambda p: setattr(p, "data", torch.ones(4, 3).t()),
        "is_inference": lambda p: setattr(p, "data", inference),
        "is a Tensor": lambda p: p.__setattr__("__class__", torch.Tensor),
    }
    for what, change in changes.items():
        model = torch.nn.Sequential(*[torch.nn.Linear(4, 3) for _ in range(10)])
        gs = _parameter_guards(model)
        assert "___tensors" in gs.source and gs.check({"m": model}, {})
        change(model[7].weight)
        assert not gs.check({"m": model}, {}), what
        reasons = gs.explain({"m": model}, {})
        assert len(reasons) == 1 and what in reasons[0], (what, reasons)
        assert reasons[0].startswith("L['m']._modules['7']._parameters['weight']")


def test_a_dynamic_stride_is_left_out_and_strides_after_it_follow_it() -> None:
    def last(width: int, keep: int = 1) -> torch.Tensor:
        return torch.zeros(2, width)[:, -keep:]

    guard = TensorMatch.of(X, last(5), dynamic_strides=(0,))
    gs = GuardSet([guard])
    assert guard.strides == (None, None)
    for value in (last(5), last(9), last(1)):  # (2, 1) of any stride(0)
        assert gs.check({"x": value}, {}) and guard.holds(value)
    assert not gs.check({"x": last(9, 2)}, {})  # the sizes still count
    assert not gs.check({"x": torch.zeros(2, 1, dtype=torch.int64)}, {})
    from guards.guard_kinds import DenseAfter

    t = TensorMatch.of(X, torch.zeros(3, 4, 10)[:, :, :5], dynamic_strides=(1,))
    assert t.strides == (DenseAfter(1), None, 1)
    gs = GuardSet([t])
    for width, ok in ((10, True), (7, True), (5, True)):
        assert gs.check({"x": torch.zeros(3, 4, width)[:, :, :5]}, {}) == ok
    assert not gs.check({"x": torch.zeros(6, 4, 10)[::2, :, :5]}, {})  # stride(0) != 4*stride(1)
    with pytest.raises(IndexError, match="dynamic dim 2"):
        TensorMatch.of(X, last(5), dynamic_strides=(2,))


def test_contiguity_stands_for_the_strides_exactly() -> None:
    import itertools
    import random

    rng = random.Random(0)
    storage = torch.zeros(400)
    for _ in range(400):
        sizes = tuple(rng.choice((0, 1, 2, 3)) for _ in range(rng.randint(0, 3)))
        example = torch.zeros(sizes)
        guard = TensorMatch.of(X, example)
        gs = GuardSet([guard])
        for strides in itertools.islice(
                itertools.product(*[(0, 1, 2, 3, 6, 9) for _ in sizes]), 0, None, 7):
            value = storage.as_strided(sizes, strides)
            assert gs.check({"x": value}, {}) == guard.holds(value), (sizes, strides)


def test_global_state_tells_autocast_devices_and_dtypes_apart():
    plain = GuardSet([GlobalState()])
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert not plain.check({}, {})
        bf16 = GuardSet([GlobalState()])
        assert bf16.check({}, {})
        with torch.autocast("cpu", dtype=torch.float16):
            assert not bf16.check({}, {})
            assert "autocast is (('cpu', torch.float16),)" in bf16.explain({}, {})[0]
    assert plain.check({}, {}) and not bf16.check({}, {})


class _EqualToAll:
    """Equal to everything, with one hash: a constant table keyed by equality merges these."""

    def __eq__(self, other: object) -> bool:
        return True

    def __hash__(self) -> int:
        return 0


class _EqualTypes(type):
    def __eq__(cls, other: object) -> bool:
        return True

    def __hash__(cls) -> int:
        return 0


def test_identity_guards_on_equal_but_distinct_objects_keep_their_own_constants() -> None:
    a, b = _EqualToAll(), _EqualToAll()
    s, t = tuple([1000, 2000]), tuple([1000, 2000])  # equal tuples, two objects (no weakrefs)
    cases = ((a, b), (s, t), (frozenset([a]), frozenset([b])))
    for first, second in cases:
        gs = GuardSet([Identity.of(X, first), Identity.of(Y, second)])
        assert gs.check({"x": first, "y": second}, {})
        assert not gs.check({"x": first, "y": first}, {}), gs.source
        assert not gs.check({"x": second, "y": second}, {}), gs.source
        assert len(gs.explain({"x": second, "y": first}, {})) == 2


def test_type_guards_on_classes_that_compare_equal_keep_their_own_constants() -> None:
    A = _EqualTypes("A", (), {})
    B = _EqualTypes("B", (), {})
    gs = GuardSet([TypeMatch(X, A), TypeMatch(Y, B)])
    assert gs.check({"x": A(), "y": B()}, {})
    assert not gs.check({"x": A(), "y": A()}, {}), gs.source
    assert not gs.check({"x": B(), "y": B()}, {}), gs.source


def test_equality_guards_on_equal_constants_of_other_types_stay_apart() -> None:
    names = [LocalSource(n) for n in "abcdefgh"]
    values = [1, True, 1.0, (1,), (True,), (1.0,), frozenset([1]), frozenset([True])]
    for together in (False, True):  # constants read straight from the frame are batched
        guards = [Equals(s, v) for s, v in zip(names, values)]
        if not together:  # a guard on a child of each value keeps them out of the batch
            guards += [Length(GetItemSource(LocalSource("z"), i), 0) for i in range(2)]
        gs = GuardSet(guards)
        frame = {s.name: v for s, v in zip(names, values)} | {"z": [[], []]}
        assert gs.check(frame, {})
        for i in range(len(values)):  # a value of another type in any one place fails
            for j in range(len(values)):
                if values[j] is not values[i] and not (
                        type(values[i]) is type(values[j]) and values[i] == values[j]):
                    swapped = {**frame, names[i].name: values[j]}
                    assert not gs.check(swapped, {}), (i, j, gs.source)
                    assert gs.explain(swapped, {})


def test_batched_constants_compare_value_and_type_bit_for_bit() -> None:
    import numpy as np

    class Int(int):
        pass

    class Str(str):
        pass

    class Float(float):
        pass

    nan = float("nan")
    values = [None, True, 0, 7, 2**70, -0.0, 1.5, nan, 1j, "a", (1, "b"), torch.device("cpu")]
    names = [f"v{i}" for i in range(len(values))]
    gs = GuardSet([Equals(LocalSource(n), v) for n, v in zip(names, values)])
    frame = dict(zip(names, values))
    assert "___marshal" in gs.source and gs.check(frame, {})
    assert gs.check({**frame, "v7": float("nan")}, {})  # another NaN object, the same bits
    look_alikes = {1: [1, np.bool_(True)], 2: [False, 0.0, np.int64(0), Int(0), torch.tensor(0)],
                   4: [float(2**70)], 5: [0.0, Float(-0.0)], 6: [np.float64(1.5), Float(1.5)],
                   8: [complex(0, 1.0000000000000002)], 9: [Str("a"), b"a"],
                   10: [(True, "b"), (1.0, "b"), [1, "b"]], 11: ["cpu"]}
    for i, others in look_alikes.items():
        for other in others:
            assert not gs.check({**frame, names[i]: other}, {}), (i, other)
            assert gs.explain({**frame, names[i]: other}, {}), (i, other)


def test_identity_on_a_freed_object_fails_for_a_value_of_none() -> None:
    import gc

    class Thing:
        pass

    thing = Thing()
    before = GuardSet([Identity.of(X, thing)])
    assert before.check({"x": thing}, {})  # compiled while the object lives
    after = GuardSet([Identity.of(X, thing)])
    del thing
    gc.collect()
    for gs in (before, after):  # `after` is compiled once the object is gone
        assert not gs.check({"x": None}, {}), gs.source
        reasons = gs.explain({"x": None}, {})
        assert len(reasons) == 1 and "no longer exists" in reasons[0]
    none = GuardSet([Identity.of(X, None)])  # None itself is held strongly, and matches
    assert none.check({"x": None}, {}) and not none.check({"x": 0}, {})


def test_item_keys_without_a_literal_keep_their_own_names() -> None:
    import enum

    class Color(enum.Enum):
        RED = 1

    class Echo:  # a container whose items tell equal keys of other types apart
        def __getitem__(self, key):
            return key

    one, true = (Color.RED, 1), (Color.RED, True)  # equal tuples, with no literal
    a, b = _EqualToAll(), _EqualToAll()
    gs = GuardSet([Equals(GetItemSource(X, one), one), Equals(GetItemSource(X, true), true),
                   Identity.of(GetItemSource(X, a), a), Identity.of(GetItemSource(X, b), b)])
    assert gs.check({"x": Echo()}, {}), gs.source
    assert gs.explain({"x": Echo()}, {}) == []


def test_finite_float_guard_refuses_nan_infinities_and_other_types() -> None:
    from guards import FiniteFloat

    gs = GuardSet([FiniteFloat(LocalSource("s"))])
    for value, ok in ((0.5, True), (-0.0, True), (float("nan"), False), (float("inf"), False),
                      (-float("inf"), False), (1, False), (True, False)):
        assert gs.check({"s": value}, {}) is ok, value
        assert (gs.explain({"s": value}, {}) == []) is ok


def test_dict_keys_that_are_big_tensors_are_described_by_their_metadata() -> None:
    """An optimizer's state is keyed by parameters: their values would make a message of
    hundreds of kilobytes."""
    params = tuple(torch.randn(64, 64) for _ in range(3))
    guard = DictKeys(X, params)
    assert len(guard.describe()) < 400 and "64, 64" in guard.describe()
    failure = guard.failure(dict.fromkeys(params[:2]))
    assert len(failure) < 300 and failure.startswith("they are (")


def test_long_values_are_cut_and_changed_keys_named() -> None:
    """`sys.modules`' keys, a tuple of thousands of ints: a message stays readable."""
    keys = tuple(f"module_{i}" for i in range(3000))
    guard = DictKeys(X, keys)
    assert len(guard.describe()) < 400 and "(3000 items)" in guard.describe()
    changed = dict.fromkeys(("added_one", *keys[1:]))
    failure = guard.failure(changed)
    assert len(failure) < 1200, len(failure)
    assert "added ('added_one',)" in failure and "removed ('module_0',)" in failure
    assert guard.failure(dict.fromkeys(reversed(keys))).endswith("(the same keys in another order)")
    big = Equals(X, tuple(range(5000)))
    assert len(big.describe()) < 400 and "(5000 items)" in big.describe()
    many = GuardSet([Equals(GetItemSource(X, i), i) for i in range(3000)])
    assert many.check({"x": list(range(3000))}, {})  # (registering sources was quadratic)


def test_a_tuple_of_constants_is_compared_item_by_type_then_as_a_whole() -> None:
    guard = GuardSet([Equals(X, (1, 2.5, "a"))])
    assert guard.check({"x": (1, 2.5, "a")}, {}) and guard.check({"x": tuple([1, 2.5, "a"])}, {})
    for other in ((1.0, 2.5, "a"), (True, 2.5, "a"), (1, 2.5), (1, 2.5, "b"), [1, 2.5, "a"]):
        assert not guard.check({"x": other}, {}), other


def test_a_failed_dict_keys_guard_on_small_tensor_keys_is_one_line() -> None:
    """A small tensor's repr spans lines (`Parameter containing:\ntensor(...)`): the recompile
    log and the cache-limit warning promise a line per failing guard."""
    bias = torch.nn.Parameter(torch.randn(3))
    big = torch.nn.Parameter(torch.randn(4, 4))
    for keys in ((bias,), (big, bias)):
        reasons = GuardSet([DictKeys(LocalSource("d"), ())]).explain({"d": dict.fromkeys(keys)}, {})
        assert len(reasons) == 1 and "\n" not in reasons[0] and "Parameter containing" in reasons[0]


def test_an_equal_looking_value_of_another_class_says_so() -> None:
    import collections

    def make():
        return collections.namedtuple("Pair", "a b")(1.0, 2.0)  # a new class each time

    reasons = GuardSet([Equals(LocalSource("p"), make())]).explain({"p": make()}, {})
    assert reasons == ["L['p'] == Pair(a=1.0, b=2.0) failed: it is Pair(a=1.0, b=2.0), of "
                       "another class named Pair"]


def test_class_lacks_guards_on_one_class_are_joined_into_one_check() -> None:
    class Config:
        pass

    guards = GuardSet([ClassLacks(LocalSource("c"), ("a", "__getattr__")),
                       ClassLacks(LocalSource("c"), ("b", "__getattr__"))])
    assert guards.guards == [ClassLacks(LocalSource("c"), ("a", "__getattr__", "b"))]
    assert guards.check({"c": Config}, {})
    Config.b = 1
    assert not guards.check({"c": Config}, {})


def test_a_value_guard_replacing_the_type_guard_it_implies_keeps_the_order() -> None:
    items = [GetItemSource(LocalSource("xs"), i) for i in range(3)]
    guards = GuardSet([TypeMatch(s, int) for s in items])
    guards.add(Equals(items[1], 5))
    assert guards.guards == [TypeMatch(items[0], int), TypeMatch(items[2], int),
                             Equals(items[1], 5)]
    assert guards.check({"xs": [1, 5, 3]}, {}) and not guards.check({"xs": [1, 6, 3]}, {})
    guards.add(TypeMatch(items[1], int))  # implied: nothing added
    assert len(guards) == 3


def test_replacing_implied_guards_does_not_compare_against_every_guard(monkeypatch) -> None:
    # Each item's type guard replaced by its value guard (a list of constants summed): a pass
    # over every guard at each replacement made adding n guards quadratic.
    n = 400
    items = [GetItemSource(LocalSource("xs"), i) for i in range(n)]
    guards = GuardSet()
    compared = [0]
    eq = TypeMatch.__eq__

    def counting(self, other):
        compared[0] += 1
        return eq(self, other)

    monkeypatch.setattr(TypeMatch, "__eq__", counting)
    for s in items:
        guards.add(TypeMatch(s, int))
    for i, s in enumerate(items):
        guards.add(Equals(s, i))
    assert compared[0] <= 4 * n
    assert guards.guards == [Equals(s, i) for i, s in enumerate(items)]
    assert guards.check({"xs": list(range(n))}, {})


def test_a_copied_or_unpickled_guard_set_replaces_its_guards() -> None:
    import copy
    import pickle

    a = LocalSource("a")
    guards = GuardSet([TypeMatch(a, int), ClassLacks(LocalSource("c"), ("x",))])
    for again in (copy.deepcopy(guards), pickle.loads(pickle.dumps(guards))):
        again.add(Equals(a, 3))  # implies the type guard: it replaces it
        again.add(ClassLacks(LocalSource("c"), ("y",)))  # joined with the first
        assert again.guards == [ClassLacks(LocalSource("c"), ("x", "y")), Equals(a, 3)]
    assert len(guards) == 2


def test_a_plain_subclass_guard_fails_once_its_class_gains_a_name_or_an_override() -> None:
    class Sub(torch.Tensor):
        __torch_function__ = torch._C._disabled_torch_function_impl

    class SubSub(Sub):
        pass

    x = torch.ones(2).as_subclass(SubSub)
    gs = GuardSet([PlainSubclassLacks(TypeSource(X), ("double",)),
                   PlainSubclassLacks(TypeSource(X), ("__iter__",))])  # joined: one check
    assert gs.check({"x": x}, {}) and len(gs) == 1
    Sub.double = lambda self: self
    assert not gs.check({"x": x}, {})
    assert "Sub has 'double' now" in gs.explain({"x": x}, {})[0]
    del Sub.double
    assert gs.check({"x": x}, {})
    Sub.__torch_function__ = classmethod(lambda cls, func, types, args=(), kwargs=None: 0)
    assert not gs.check({"x": x}, {})
    assert "overrides torch-function or dispatch now" in gs.explain({"x": x}, {})[0]


def test_a_class_whose_metaclass_refuses_its_name_is_still_named() -> None:
    """`TypeMatch`'s failure names the class found; a metaclass whose `__getattribute__` raises
    for `__qualname__` made `explain` (and a recompilation's reasons) raise."""
    class Refusing(type):
        def __getattribute__(cls, name):
            if name in ("__qualname__", "__name__"):
                raise RuntimeError("no name")
            return type.__getattribute__(cls, name)

    class Odd(metaclass=Refusing):
        pass

    gs = GuardSet([TypeMatch(X, int)])
    reasons = gs.explain({"x": Odd()}, {})
    assert len(reasons) == 1 and "Odd" in reasons[0], reasons
