"""Inputs an adversarial user would try: each case once made the compiled check disagree with
the guards' own `holds`, or with `explain`, or raise. The check and `explain` must agree, and
both must say what evaluating the guard alone says."""

from __future__ import annotations

import collections
import enum
import gc
import math
import weakref

import numpy as np
import pytest
import sympy
import torch

from guards import (
    Alive,
    AttrSource,
    CacheLimitExceeded,
    ClassLacks,
    ClosureCellSource,
    DefaultSource,
    DictContains,
    DictKeys,
    Equals,
    GetItemSource,
    GlobalSource,
    GlobalState,
    GuardedCache,
    GuardSet,
    Identity,
    Length,
    LocalSource,
    ParameterSource,
    SameObject,
    ShapeGuard,
    SubmoduleSource,
    TensorMatch,
    TensorPropertySource,
    TypeMatch,
    TypeSource,
    key_expr,
    key_names,
)

L = LocalSource


def _verdict(guards: GuardSet, f_locals: dict, f_globals: dict | None = None) -> bool:
    """The check's answer, after asserting that `explain` agrees with it."""
    f_globals = f_globals or {}
    ok = guards.check(f_locals, f_globals)
    reasons = guards.explain(f_locals, f_globals)
    assert ok == (not reasons), (ok, reasons)
    return ok


def test_a_dense_layout_through_a_size_one_dim_stays_checked() -> None:
    # (B, 1, T) with T dynamic: stride(0) is checked against stride(1) * size(1), so the
    # stride of the size-1 dim must be checked too, or a sliced (B, 1, 20)[..., :7] passes
    guard = GuardSet([TensorMatch.of(L("x"), torch.randn(2, 1, 3), dynamic_dims=(2,))])
    assert _verdict(guard, {"x": torch.randn(2, 1, 7)})
    assert not _verdict(guard, {"x": torch.randn(2, 1, 20)[:, :, :7]})


def test_names_that_are_keywords_or_not_ascii() -> None:
    class Obj:
        pass

    o = Obj()
    setattr(o, "class", 1)
    assert _verdict(GuardSet([Equals(AttrSource(L("o"), "class"), 1)]), {"o": o})
    ligature = Obj()
    setattr(ligature, "\ufb01", 1)  # noqa: B010 ("ﬁ": code would set `fi`)
    ligature.fi = 1
    guards = GuardSet([Equals(AttrSource(L("o"), "\ufb01"), 1)])
    setattr(ligature, "\ufb01", 5)  # noqa: B010
    assert not _verdict(guards, {"o": ligature})
    assert _verdict(GuardSet([Equals(GetItemSource(L("d"), "m\u00b2"), 1)]), {"d": {"m\u00b2": 1}})
    apart = GuardSet([SameObject(GetItemSource(L("d"), "fi"), GetItemSource(L("d"), "\ufb01"))])
    assert not _verdict(apart, {"d": {"fi": object(), "\ufb01": object()}})


def test_dict_keys_of_a_str_subclass_are_not_str_keys() -> None:
    class Mode(str, enum.Enum):
        a = "a"

    guards = GuardSet([DictKeys(L("d"), ("a", "b"))])
    assert _verdict(guards, {"d": {"a": 1, "b": 2}})
    assert not _verdict(guards, {"d": {np.str_("a"): 1, "b": 2}})
    assert not _verdict(guards, {"d": {Mode.a: 1, "b": 2}})


def test_identity_keeps_the_type_guard_of_an_object_whose_class_can_change() -> None:
    class A:
        pass

    class B:
        pass

    obj = A()
    guards = GuardSet([Identity.of(L("x"), obj), TypeMatch(L("x"), A)])
    assert _verdict(guards, {"x": obj})
    obj.__class__ = B  # (torch.nn.utils.parametrize swaps a module's class so)
    assert not _verdict(guards, {"x": obj})
    assert len(GuardSet([Identity.of(L("f"), len), TypeMatch(L("f"), type(len))])) == 1


def test_guards_on_two_objects_that_shared_an_id_are_two_guards() -> None:
    class C:
        pass

    def a_new_object_with_the_id_of_a_dead_one(make_guard):
        x = C()
        old, dead = make_guard(x), id(x)
        del x
        gc.collect()
        kept = []
        for _ in range(100000):
            y = C()
            if id(y) == dead:
                return old, y
            kept.append(y)
        pytest.skip("CPython gave no freed id back")

    old, y = a_new_object_with_the_id_of_a_dead_one(lambda o: Identity.of(L("f"), o))
    assert old != Identity.of(L("f"), y)
    assert not _verdict(GuardSet([Identity.of(L("f"), y), old]), {"f": y})
    old, y = a_new_object_with_the_id_of_a_dead_one(lambda o: Alive.of(o, "model"))
    assert old != Alive.of(y, "model") and len(GuardSet([old, Alive.of(y, "model")])) == 2


def test_a_key_found_by_identity_is_held_weakly_and_its_id_passes_for_no_other() -> None:
    """An optimizer's state is keyed by parameters, and the sources, guards and checks made for
    `state[p]` live in caches longer than the parameters may: they hold such a key weakly. Once
    it is gone their guard set is gone, and an object that takes its id passes none of them
    (`DictKeys` compares ids; a dead key's expression reads `d[None]`)."""
    class C:
        pass

    def guard_sets(key):
        d = L("d")
        return [GuardSet([DictKeys(d, (key,))]), GuardSet([DictContains(d, key)]),
                GuardSet([Equals(GetItemSource(d, key), 1)])]

    key = C()
    frames = [{"d": {key: 1}}, {"d": {key: 1, None: 1}}, {"d": {key: 1, None: 1}}]
    old, ref, dead = guard_sets(key), weakref.ref(key), id(key)
    name = key_expr(key)
    assert all(_verdict(g, f) and not g.gone() for g, f in zip(old, frames))
    source = GetItemSource(L("d"), key)
    del key, frames
    gc.collect()
    assert ref() is None and all(g.gone() for g in old)
    assert name.removesuffix("()") not in key_names()
    kept = []
    for _ in range(100000):
        y = C()
        if id(y) == dead:
            break
        kept.append(y)
    else:
        pytest.skip("CPython gave no freed id back")
    frames = [{"d": {y: 1}}, {"d": {y: 1, None: 1}}, {"d": {y: 1, None: 1}}]
    assert not any(_verdict(g, f) for g, f in zip(old, frames))
    assert all(_verdict(g, f) for g, f in zip(guard_sets(y), frames))
    assert GetItemSource(L("d"), y) != source and key_expr(y) != name


@pytest.mark.parametrize("make", [lambda: torch.nn.Linear(2, 2), lambda: torch.ones(2)])
def test_a_tuple_key_holds_its_identity_items_weakly(make) -> None:
    """A tuple key holding a module or a tensor (`d[(module, "scale")]`) holds each such item
    weakly, as a key of its own would be: its sources, guards and written name keep no dropped
    module alive. While it lives the key is the same key to them all; once it is gone, their
    guard sets are gone."""
    obj, other = make(), make()
    key = (obj, "scale")
    d = L("d")
    guards = [GuardSet([Equals(GetItemSource(d, key), 2)]), GuardSet([DictKeys(d, (key, 1))]),
              GuardSet([DictContains(d, key)]), GuardSet([DictContains(d, (obj, 1), False)])]
    frame = {"d": {key: 2, 1: 3}}
    assert all(_verdict(g, frame) and not g.gone() for g in guards)
    moved = {"d": {(other, "scale"): 2, 1: 3, (obj, 1): 0}}
    assert not any(_verdict(g, moved) for g in guards)
    source = GetItemSource(d, (obj, "scale"))
    assert source == GetItemSource(d, key) and hash(source) == hash(GetItemSource(d, key))
    assert source != GetItemSource(d, (other, "scale")) and source.key[0] is obj
    assert key_expr(key) == f"({source.weak_keys[0].name}(), 'scale')"
    ref = weakref.ref(obj)
    del obj, key, frame, moved
    gc.collect()
    assert ref() is None and all(g.gone() for g in guards)
    assert not any(_verdict(g, {"d": {(other, "scale"): 2, 1: 3}}) for g in guards)


def test_tuple_keys_held_weakly_in_many_presence_checks() -> None:
    """Presence checks of values reached through others are batched (one pass over all): a
    tuple key holding weak items is checked as the key it stands for there too."""
    mods = [torch.nn.Linear(1, 1) for _ in range(20)]
    guards = GuardSet([DictContains(AttrSource(L("o"), f"a{i}"), (m, "s"), i % 2 == 0)
                       for i, m in enumerate(mods)])
    o = type("O", (), {})()
    for i, m in enumerate(mods):
        setattr(o, f"a{i}", {(m, "s"): 1} if i % 2 == 0 else {})
    assert _verdict(guards, {"o": o})
    o.a1 = {(mods[1], "s"): 1}
    assert not _verdict(guards, {"o": o})


@pytest.mark.parametrize("keys", [
    lambda m: ((1,), (True,)), lambda m: ((1,), (1.0,)), lambda m: ((0.0,), (-0.0,)),
    lambda m: (((m, 1),), ((m, True),)), lambda m: (((m, 1), "a"), ((m, 1.0), "a"))])
def test_dict_keys_guards_of_equal_but_different_keys_are_two_guards(keys) -> None:
    """`(1,) == (True,)`, yet a dict keyed by `True` iterates `True`: the two DictKeys guards
    ask different things, and a set of both holds for no dict (it once kept one of them)."""
    module = torch.nn.Linear(1, 1)
    first, second = keys(module)
    a, b = DictKeys(L("d"), first), DictKeys(L("d"), second)
    assert a != b
    both = GuardSet([a, b])
    for ks in (first, second):
        assert not _verdict(both, {"d": dict.fromkeys(ks)})
        assert _verdict(GuardSet([DictKeys(L("d"), ks)]), {"d": dict.fromkeys(ks)})
    same = DictKeys(L("d"), first)
    assert same == a and hash(same) == hash(a) and len({a, same, b}) == 2


def test_nans_of_opposite_signs_are_two_constants() -> None:
    """`math.copysign(1.0, c)` is -1.0 for `float("-nan")` and 1.0 for `float("nan")`, but
    `float.hex` writes both as "nan": a graph traced for one passed for the other."""
    nan, negative_nan = float("nan"), float("-nan")
    assert math.copysign(1.0, negative_nan) == -1.0
    for make in (lambda v: v, lambda v: (v,), lambda v: complex(0.0, v), np.float64):
        guards = GuardSet([Equals(L("c"), make(nan))])
        assert _verdict(guards, {"c": make(float("nan"))})
        assert not _verdict(guards, {"c": make(negative_nan)})
    keys = GuardSet([DictKeys(L("d"), (nan,))])
    assert _verdict(keys, {"d": {nan: 1}}) and not _verdict(keys, {"d": {negative_nan: 1}})


def test_a_dict_keys_guard_keeps_its_hash_once_a_weak_key_dies() -> None:
    module = torch.nn.Linear(1, 1)
    guard = DictKeys(L("d"), ((module, "s"), 1))
    before = hash(guard)
    table = {guard}
    del module
    gc.collect()
    assert hash(guard) == before and guard in table


def test_global_state_sees_torch_function_switched_off() -> None:
    guards = GuardSet([GlobalState()])
    assert _verdict(guards, {})
    with torch._C.DisableTorchFunctionSubclass():
        assert not _verdict(guards, {})


def test_a_nan_key_is_found_by_identity() -> None:
    key_expr(float("nan"))  # another NaN, named first
    nan = float("nan")
    assert _verdict(GuardSet([Equals(GetItemSource(L("d"), nan), 3)]), {"d": {nan: 3}})


def test_explain_of_a_shape_guard_never_parses_or_excuses_a_value(capsys) -> None:
    n = sympy.Symbol("n", integer=True)
    at_least_two = GuardSet([ShapeGuard(sympy.Ge(n, 2), ((n, L("n")),))])
    code = "__import__('builtins').print('ran') or 5"  # a str from the frame is not code
    for value in ("3", None, code):
        assert not _verdict(at_least_two, {"n": value})
    assert "ran" not in capsys.readouterr().out
    a, b = sympy.symbols("a b", integer=True)
    quotient = GuardSet([ShapeGuard(sympy.Ne(3 / a, 3), ((a, L("a")),))])
    assert not _verdict(quotient, {"a": 0})  # the check divides by zero: it fails
    assert _verdict(quotient, {"a": 2})


def test_failure_words_when_a_value_cannot_describe_itself() -> None:
    class NoRepr:
        def __repr__(self) -> str:
            raise RuntimeError("no repr")

    (reason,) = GuardSet([Equals(L("x"), 0.5)]).explain({"x": NoRepr()}, {})
    assert "checking it raised" not in reason and "NoRepr" in reason


def test_the_cache_limit_message_says_which_entries_hold() -> None:
    cache = GuardedCache(limit=2)
    cache.add(GuardSet([Equals(L("n"), 1)]), "one")
    cache.add(GuardSet([TypeMatch(L("n"), int)]), "any int")
    with pytest.raises(CacheLimitExceeded) as error:
        cache.add(GuardSet([]), "more", f_locals={"n": 3})
    assert "entry 0: L['n'] == 1 failed: it is 3" in str(error.value)
    assert "entry 1: none (its guards hold)" in str(error.value)
    by_global = GuardedCache(limit=1)
    by_global.add(GuardSet([Equals(GlobalSource("g"), 1)]), "a")
    with pytest.raises(CacheLimitExceeded, match="entry 0: G\\['g'\\] == 1 failed"):
        by_global.add(GuardSet([]), "b", f_globals={"g": 2})


def _symbolic_guards(program, example: dict) -> GuardSet:
    """The guards tracing `program` on symbols of `example`'s ints and floats records."""
    from fakecore import ShapeEnv, SizeOrigin
    from guards import shape_guards

    env = ShapeEnv()
    symbols = {n: (env.create_symfloat if type(v) is float else env.create_symint)(
        v, SizeOrigin(L(n), "value")) for n, v in example.items()}
    assert bool(program(**symbols)) == program(**example)
    return GuardSet(shape_guards(env) + [TypeMatch(L(n), type(v)) for n, v in example.items()])


def test_modulo_and_comparisons_of_int_quotients_are_computed_in_floats() -> None:
    def mod(a, b, c):
        return b % (a / c) == 0  # 6 % 2.0 == 0; 2 % 0.1 != 0, though 2 % Fraction(1, 10) == 0

    guards = _symbolic_guards(mod, {"a": 4, "b": 6, "c": 2})
    assert not _verdict(guards, {"a": 2, "b": 2, "c": 20})

    def below(a, c, f):
        return a / c < f  # 1 / 10 rounds to the float 0.1, which the exact 1/10 is below

    guards = _symbolic_guards(below, {"a": 2, "c": 7, "f": 0.5})
    assert not _verdict(guards, {"a": 1, "c": 10, "f": 0.1})

    guards = _symbolic_guards(lambda a: a % torch.sym_sqrt(a) >= 1, {"a": 7})
    assert _verdict(guards, {"a": 8})  # explain evaluates `8 % (2 * sqrt(2))` too


def test_a_missing_item_of_a_defaultdict_fails_the_check_without_adding_it() -> None:
    counts = collections.defaultdict(int)
    assert not _verdict(GuardSet([Equals(GetItemSource(L("x"), "k"), 0)]), {"x": counts})
    assert dict(counts) == {}


def test_ints_too_long_to_print_and_sparse_tensors() -> None:
    big = 10 ** 5000  # past `sys.get_int_max_str_digits()`: `repr` raises
    assert _verdict(GuardSet([Equals(L("n"), big)]), {"n": big})
    assert not _verdict(GuardSet([Equals(L("n"), big)]), {"n": 3})
    assert _verdict(GuardSet([Equals(GetItemSource(L("d"), big), 1)]), {"d": {big: 1}})
    assert "too large to print" in Equals(L("n"), big).describe()
    for sparse in (torch.eye(3).to_sparse_csr(), torch.eye(3).to_sparse()):
        guards = GuardSet([TensorMatch.of(L("x"), sparse)])
        assert _verdict(guards, {"x": sparse}) and not _verdict(guards, {"x": torch.eye(3)})


def test_a_failure_shows_a_tensor_or_a_long_value_in_one_short_line() -> None:
    (reason,) = GuardSet([Equals(L("y"), 1.5)]).explain({"y": torch.ones(100, 100)}, {})
    assert reason == "L['y'] == 1.5 failed: it is a Tensor(100, 100) of torch.float32"
    (reason,) = GuardSet([Equals(L("y"), 1.5)]).explain({"y": list(range(1000))}, {})
    assert reason.endswith("...") and len(reason) < 150 and "\n" not in reason


def test_an_entry_whose_run_time_class_is_gone_is_dropped() -> None:
    """TypeMatch holds a class made at run time weakly: once it is freed the check fails for
    good, so `gone()` says so and the cache drops the entry instead of counting it."""
    import gc

    def make():
        class Point:
            pass
        return Point()

    cache = GuardedCache(limit=2)
    for step in range(5):
        x = make()
        cache.add(GuardSet([TypeMatch(L("x"), type(x))]), step, f_locals={"x": x}, f_globals={})
        del x
        gc.collect()
    assert len(cache) == 1 and cache.entries[0][0].gone()


def test_explain_never_raises_on_an_exception_it_cannot_print() -> None:
    class Unprintable(Exception):
        def __str__(self):
            raise RuntimeError("no message")

    class Raises:
        @property
        def a(self):
            raise Unprintable

        def __len__(self):
            raise Unprintable

        def __repr__(self):
            raise Unprintable

    for guard in (Equals(AttrSource(L("x"), "a"), 1), Length(L("x"), 1), Equals(L("x"), 1)):
        assert GuardSet([guard]).explain({"x": Raises()}, {})[0].startswith(guard.describe())
    huge = 10**5000  # its KeyError cannot print the key
    guard = Equals(GetItemSource(L("d"), huge), 1)
    assert "KeyError" in GuardSet([guard]).explain({"d": {}}, {})[0]


def test_a_shape_guard_with_an_unbound_symbol_is_refused() -> None:
    import sympy
    with pytest.raises(ValueError, match="no source binds G"):
        ShapeGuard(sympy.Ne(sympy.Symbol("G"), 0), ())  # the check read the globals dict `G`


def test_an_identity_guard_names_its_object() -> None:
    def scale(x):
        return x
    assert "the function test_an_identity_guard_names_its_object.<locals>.scale with id" in \
        Identity.of(L("f"), scale).describe()
    m = torch.nn.Linear(1, 1)
    assert "the Linear object" in Identity.of(L("m"), m).describe()


class EqualsAnything:
    def __eq__(self, other):
        return True

    __hash__ = object.__hash__


@pytest.mark.parametrize("make, error, message", [
    (lambda: TypeMatch(L("x"), 3), TypeError, "TypeMatch needs a class, not an int"),
    (lambda: TypeMatch("x", int), TypeError, "TypeMatch needs guards Sources"),
    (lambda: TensorMatch.of(L("n"), 3), TypeError, "TensorMatch.of needs a tensor, not an int"),
    (lambda: GuardSet([3]), TypeError, "GuardSet needs guards, not an int"),
    (lambda: ShapeGuard("s0 > 2", {}), TypeError, "ShapeGuard needs a sympy expression"),
    (lambda: ShapeGuard(sympy.Symbol("s0") > 2, ((sympy.Symbol("s0"), "x"),)), TypeError,
     "ShapeGuard needs each binding as a pair"),
    (lambda: Equals(AttrSource("x", "y"), 1), TypeError, "AttrSource needs a Source as its base"),
    (lambda: GetItemSource("x", 0), TypeError, "GetItemSource needs a Source as its base"),
    (lambda: AttrSource(L("x"), 3), TypeError, "AttrSource needs a str attribute name"),
    (lambda: L(3), TypeError, "LocalSource needs a str name"),
    (lambda: GuardedCache("8"), TypeError, "GuardedCache needs an int limit, not a str"),
    (lambda: GuardedCache(total_limit=2.5), TypeError, "int total_limit, not a float"),
    (lambda: GuardedCache(-1), ValueError, "limit of at least 1, not -1"),
    (lambda: DictKeys(L("d"), [["a"]]), TypeError, "DictKeys needs hashable keys, not a list"),
    (lambda: DictKeys(L("d"), "ab"), TypeError, "DictKeys needs a tuple of keys, not a str"),
    (lambda: DictContains(L("d"), ["a"], True), TypeError, "DictContains needs hashable keys"),
    (lambda: DictContains(L("d"), "a", 1), TypeError, "DictContains needs a bool"),
    (lambda: Equals(L("x"), EqualsAnything()), TypeError, "holds an EqualsAnything"),
    (lambda: Equals(L("x"), torch.ones(2)), TypeError, "holds a Tensor"),
    (lambda: Equals(L("x"), (1, torch.ones(2))), TypeError, "holds a Tensor"),
    # (a str of names was its characters: `ClassLacks(s, "zz")` guarded 'z')
    (lambda: ClassLacks(L("x"), "zz"), TypeError, "ClassLacks needs a tuple of names"),
    (lambda: ClassLacks(L("x"), (1,)), TypeError, "ClassLacks needs str names"),
    # (each wrote `[0]` in the check, where fetch and explain read with "0" and failed)
    (lambda: ClosureCellSource(L("g"), "0"), TypeError, "ClosureCellSource needs an int index"),
    (lambda: TensorPropertySource(L("t"), "size", "0"), TypeError, "needs an int dim"),
    (lambda: TensorPropertySource(L("t"), "bogus", 0), TypeError, "needs 'size', 'stride'"),
    (lambda: TensorPropertySource(L("t"), "storage_offset", 0), TypeError, "needs no dim"),
    (lambda: DefaultSource(L("f"), 0.5), TypeError, "DefaultSource needs an int index or a str"),
])
def test_misuse_is_refused_where_a_guard_source_or_cache_is_made(make, error, message) -> None:
    # each was accepted, then raised an AttributeError inside a check or another method, or
    # made a check that never held (a list key) or held for any value (an `__eq__` saying yes)
    with pytest.raises(error, match=message):
        make()


def test_equality_guards_take_the_constants_dynamo_guards() -> None:
    class Color(enum.Enum):
        RED = 1

    class Version(str):  # a TorchVersion: a str whose class compares by its own `__eq__`
        def __eq__(self, other):
            return str.__eq__(self, other)

        __hash__ = str.__hash__

    values = [None, True, 3, 2.5, 1j, "a", b"a", np.bool_(True), np.int64(3), np.float32(1.5),
              Color.RED, Version("2.1"), torch.float16, torch.device("cpu"), torch.strided,
              torch.channels_last, range(3), slice(1, None), Ellipsis, NotImplemented,
              (lambda: 0).__code__, torch.Size([2, 3]), frozenset({1, "a"}), (1, (None, "x"))]
    for value in values:
        assert _verdict(GuardSet([Equals(L("x"), value)]), {"x": value}), value


def test_names_given_as_str_subclasses_are_written_as_plain_strs() -> None:
    """numpy's `np.str_("w")` (a module's parameter registered by such a name) wrote the
    check's expression as `np.str_('w')`, a NameError inside the check: it never held, and
    `explain`, which fetches, found nothing wrong."""
    model = torch.nn.Module()
    model.register_parameter(np.str_("w"), torch.nn.Parameter(torch.ones(2)))
    model.add_module(np.str_("sub"), torch.nn.Linear(2, 2))
    model.sub.n = 3
    frame = {np.str_("m"): model}
    guards = GuardSet([
        TensorMatch.of(ParameterSource(L(np.str_("m")), np.str_("w")), model.w),
        Equals(AttrSource(SubmoduleSource(L("m"), np.str_("sub")), np.str_("n")), 3),
        ClassLacks(TypeSource(L("m")), (np.str_("zz"),)),
    ])
    assert guards.check(frame, {}) and guards.explain(frame, {}) == []
    model.sub.n = 4
    assert not guards.check(frame, {})


def test_a_metaclass_whose_eq_says_yes_passes_for_no_constant() -> None:
    """`exact` compared types with `==`: an object whose metaclass and class both say yes to
    anything passed `Equals` for an enum member, a frozenset, a tuple, `0.0` or `...` (a cache
    entry run on a value it was never compiled for), and `holds` (so `explain`) said yes where
    the check's own type test said no (a dtype, a str, None)."""
    class Color(enum.Enum):
        RED = 1

    class Yes(type):
        def __eq__(cls, other):
            return True

        __hash__ = type.__hash__

    class Anything(metaclass=Yes):
        def __eq__(self, other):
            return True

        __hash__ = object.__hash__

    for value in (Color.RED, frozenset({1}), (1, Color.RED), range(3), 0.0, -0.0, Ellipsis,
                  torch.float32, torch.device("cpu"), "a", None, 2**70):
        assert not _verdict(GuardSet([Equals(L("x"), value)]), {"x": Anything()}), value
    assert not _verdict(GuardSet([DictKeys(L("d"), (Color.RED,))]), {"d": {Anything(): 1}})
    ints = GuardSet([DictKeys(L("d"), (1, "a", None))])  # (keys that are their own literals)
    assert _verdict(ints, {"d": {1: 0, "a": 0, None: 0}})
    for keys in ((Anything(), "a", None), (True, "a", None), (1.0, "a", None), (1, "a")):
        assert not _verdict(ints, {"d": dict.fromkeys(keys)}), keys


@pytest.mark.filterwarnings("ignore:Sparse")
def test_a_sparse_tensor_of_another_structure_fails_and_a_quantized_one_is_refused() -> None:
    """Sparse tensors of one shape, dtype and layout passed for one another whatever their
    sparse and dense dims, coalescing or block size (a trace of one run on the other); and a
    quantized tensor matched one of any other scheme (per tensor for per channel)."""
    indices = torch.tensor([[0, 0], [1, 1]])
    pairs = [
        (torch.ones(2, 3).to_sparse(), torch.ones(2, 3).to_sparse(1), "sparse_dim() is 1, not 2"),
        (torch.ones(2, 3).to_sparse(), torch.sparse_coo_tensor(indices, torch.ones(2), (2, 3)),
         "is_coalesced() is False, not True"),
        (torch.ones(4, 4).to_sparse_bsr((2, 2)), torch.ones(4, 4).to_sparse_bsr((1, 1)),
         "blocksize is (1, 1), not (2, 2)"),
        (torch.ones(2, 3, 2).to_sparse_csr(dense_dim=1), torch.ones(2, 3, 2).to_sparse_csr(),
         "dense_dim() is 0, not 1"),
    ]
    for example, other, words in pairs:
        guards = GuardSet([TensorMatch.of(L("x"), example)])
        assert _verdict(guards, {"x": example})
        assert not _verdict(guards, {"x": other})
        assert words in guards.explain({"x": other}, {})[0]
    quantized = torch.quantize_per_tensor(torch.ones(2, 3), 0.1, 0, torch.qint8)
    with pytest.raises(TypeError, match="quantized tensor has a scheme"):
        TensorMatch.of(L("x"), quantized)


def test_dict_keys_checks_the_types_of_the_keys_it_compares() -> None:
    """The check compared `tuple(d.keys())` with the keys but took their types from iterating
    `d`: a dict subclass whose `keys()` differs from its iteration passed with an `np.str_` key
    where `holds` and `explain` said the guard fails."""
    class Keys(dict):
        def keys(self):
            return (np.str_("a"),)

    assert not _verdict(GuardSet([DictKeys(L("d"), ("a",))]), {"d": Keys({"a": 0})})
