"""Builtins, `operator` and `math` while tracing.

On constants they are computed right away. On tensors and symbolic numbers, operators become
graph nodes (`operator.add(x, y)`), with the result computed on the fake values. On containers,
functions and objects each builtin does what Python does, with trackers as the elements:
`len`, `isinstance`, `getattr`, `range`, `enumerate`, `zip`, `sorted`, ...
"""

from __future__ import annotations

import abc
import builtins
import collections
import contextlib
import dataclasses
import functools
import inspect
import itertools
import math
import operator
import reprlib
import sys
import types
import typing
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import torch

from dynamo.exc import Raised, Unsupported, error_words, python_error, raised_by_python
from dynamo.operators import BINARY
from dynamo.sources import CallSource, ModuleSource
from dynamo.variables.base import TrueVariable, VariableTracker
from dynamo.variables.constant import ConstantVariable, is_none, is_numpy_number, numpy_raising
from dynamo.variables.containers import (
    DictIteratorVariable,
    DictVariable,
    DictViewVariable,
    EnumerateIteratorVariable,
    FilterIteratorVariable,
    IteratorVariable,
    ListVariable,
    MapIteratorVariable,
    RangeIteratorVariable,
    RangeVariable,
    ReversedListIteratorVariable,
    SequenceVariable,
    SetVariable,
    SizeVariable,
    SliceVariable,
    SymbolicRangeIteratorVariable,
    TupleVariable,
    ZipIteratorVariable,
    admit_nans,
    constant_set,
    dict_key,
    holds_nan,
    iterate,
    pin_nan,
    same_or_equal,
)
from dynamo.variables.generators import lazy_map
from dynamo.variables.tensor import SymNodeVariable, TensorVariable, concrete_int, refuse_override
from fakecore import DataDependentError, sym_exp, sym_log
from guards import AttrSource, DictContains, DistinctObjects, Equals, Identity, SameObject
from guards.guard_kinds import ordered

if TYPE_CHECKING:
    from dynamo.interpreter import Translator

# Functions that compute a result from their arguments and nothing else.
PURE = frozenset(
    [getattr(operator, n) for n in (
        "add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and_", "or_", "xor",
        "lshift", "rshift", "neg", "pos", "invert", "not_", "eq", "ne", "lt", "le", "gt", "ge",
        "is_", "is_not", "contains", "getitem", "abs", "index", "truth", "concat",
    )]
    + [getattr(math, n) for n in dir(math) if callable(getattr(math, n))]
    + [abs, min, max, len, bool, int, float, str, round, divmod, pow, hash, chr, ord, repr,
       format, tuple, frozenset, sum, all, any, isinstance, issubclass, callable, sorted,
       complex, float.fromhex, int.from_bytes, bytes.fromhex]
)


def _int_first(key: list[VariableTracker]) -> bool:
    """Whether the first index of `key` past any `...` is an int (not a bool)."""
    items = [k for k in key if not (isinstance(k, ConstantVariable) and k.value is Ellipsis)]
    if not items:
        return False
    first = items[0]
    if isinstance(first, SymNodeVariable):
        return isinstance(first.value, torch.SymInt)
    return isinstance(first, ConstantVariable) and type(first.value) is int


def printed(value: VariableTracker) -> Any:
    """What text shows of a symbolic number, of a tuple, list or shape holding some (and
    constants otherwise), or of a dict of strings to these or constants (`"%(n)d" % {...}`):
    the plain values these inputs have (guards pin them, as formatting a single number does);
    None for anything else."""
    if isinstance(value, SymNodeVariable):
        return value.as_python()
    if isinstance(value, SequenceVariable) and value.python_type() in (tuple, list, torch.Size) \
            and any(isinstance(v, SymNodeVariable) for v in value.values) and all(
                isinstance(v, SymNodeVariable) or v.is_constant() for v in value.values):
        items = [v.as_python() if isinstance(v, SymNodeVariable) else v.as_constant()
                 for v in value.values]
        return value.python_type()(items)
    if isinstance(value, DictVariable) and value.python_type() is dict and \
            all(type(k) is str for k in value.entries) and all(
                isinstance(v, SymNodeVariable) or v.is_constant() for v in value.entries.values()):
        return {k: v.as_python() if isinstance(v, SymNodeVariable) else v.as_constant()
                for k, v in value.entries.items()}
    return None


_COMPARISONS = frozenset([operator.eq, operator.ne, operator.lt, operator.le, operator.gt,
                          operator.ge])


def _as_number(value: VariableTracker) -> VariableTracker:
    """A constant compared with a symbolic number, as the plain number Python compares: an
    int subclass's int (`IntEnum` members, bools), a complex with no imaginary part's real
    part. (A symbolic int does not know how to compare with those, and Python would then
    fall back to identity, giving False.)"""
    if not value.is_constant():
        return value
    v = value.as_constant()
    if isinstance(v, int) and type(v) is not int:
        return ConstantVariable(int(v))
    if isinstance(v, complex) and v.imag == 0:
        return ConstantVariable(v.real)
    return value


def _compare_number(fn: Any, args: list[VariableTracker]) -> VariableTracker | None:
    """`==`/`!=` between a symbolic number and a complex with an imaginary part: decided."""
    other = next((a for a in args if not isinstance(a, SymNodeVariable)), None)
    if other is not None and fn in (operator.eq, operator.ne) and other.is_constant() and isinstance(
            other.as_constant(), complex) and other.as_constant().imag != 0:
        return ConstantVariable(fn is operator.ne)
    return None


# Builtins whose result is not a number: given a symbolic number, they need its value.
_TEXT = frozenset([str, repr, format, ascii, hash, chr])

_INPLACE = {
    "iadd": operator.add, "isub": operator.sub, "imul": operator.mul,
    "itruediv": operator.truediv, "ifloordiv": operator.floordiv, "imod": operator.mod,
    "ipow": operator.pow, "imatmul": operator.matmul, "iand": operator.and_,
    "ior": operator.or_, "ixor": operator.xor, "ilshift": operator.lshift,
    "irshift": operator.rshift,
}
INPLACE_OPERATORS = {getattr(operator, k): v for k, v in _INPLACE.items()}
_SET_UPDATES = {operator.ior: "update", operator.iand: "intersection_update",
                operator.isub: "difference_update", operator.ixor: "symmetric_difference_update"}
_SET_OPERATORS = frozenset([operator.or_, operator.and_, operator.sub, operator.xor])
_ORDERS = {operator.lt: "<", operator.le: "<=", operator.gt: ">", operator.ge: ">="}


def _graph_value(v: VariableTracker) -> bool:
    return isinstance(v, (TensorVariable, SymNodeVariable))


def _number(v: VariableTracker) -> bool:
    return isinstance(v, SymNodeVariable) or v.is_constant() and type(v.as_constant()) in (
        int, float, bool)


def _op(tx: Translator, fn: Any, *args: Any) -> VariableTracker:
    args = [a if isinstance(a, VariableTracker) else ConstantVariable(a) for a in args]
    return BuiltinVariable(fn).call(tx, args, {})


_BITWISE = (operator.or_, operator.and_, operator.xor, operator.ior, operator.iand,
            operator.ixor)


def _symbolic_number_op(tx: Translator, fn: Any, args: list[VariableTracker]
                        ) -> VariableTracker | None:
    """Python's operations on symbolic numbers that torch's SymInt and SymFloat do not have,
    or have otherwise than Python (None: the op is traced as it is)."""
    if not all(map(_number, args)):
        return None
    kind = args[0].python_type()
    if fn is operator.invert and kind is int:
        return _op(tx, operator.sub, _op(tx, operator.neg, args[0]), 1)  # `~n` is `-n - 1`
    if fn is operator.invert and kind is float:
        raise Raised(TypeError("bad operand type for unary ~: 'float'"),
                     "bad operand type for unary ~: 'float'")
    if fn is operator.invert and kind is bool:
        raise Unsupported("~ of a symbolic bool (an int of it: -2 or -1)")
    if fn is operator.pos and kind is bool:  # `+True` is 1; torch's SymBool has no `+`
        return _op(tx, int, args[0])
    if fn is complex:
        raise Unsupported("complex() of a symbolic number (no symbolic complex numbers)")
    kinds = [a.python_type() for a in args]
    if fn in _BITWISE and float in kinds and len(args) == 2:
        # (torch's SymBool `|` is logical: `b | 2.0` gave 2.0, where Python raises)
        symbol = next(s for s, op in BINARY.items() if op is fn)
        message = (f"unsupported operand type(s) for {symbol}: '{kinds[0].__name__}' and "
                   f"'{kinds[1].__name__}'")
        raise Raised(TypeError(message), message)
    if fn in _BITWISE and bool in kinds and int in kinds:
        # a bool with an int is an int operation (`True | 2` is 3): torch's SymBool `|` is
        # logical (it gave 2)
        return _op(tx, fn, *(_op(tx, int, a) if k is bool else a for a, k in zip(args, kinds)))
    if fn in (operator.pow, pow) and len(args) == 2:
        return _float_pow(tx, *args)
    if fn is pow and len(args) == 3:
        base, exponent, modulus = args
        e = exponent.as_constant() if exponent.is_constant() else None
        if not (type(e) is int and 0 <= e <= 64 and all(
                a.python_type() is int for a in (base, modulus))):
            raise Unsupported("pow() with a modulus, of symbolic numbers (traced only for ints "
                              "and a constant exponent from 0 to 64)")
        if _op(tx, operator.eq, modulus, 0).truth(tx):
            raise Raised(ValueError("pow() 3rd argument cannot be 0"),
                         "pow() 3rd argument cannot be 0")
        return _op(tx, operator.mod, _op(tx, operator.pow, base, exponent), modulus)
    return None


def _float_pow(tx: Translator, base: VariableTracker, exponent: VariableTracker
               ) -> VariableTracker | None:
    """`base ** exponent` with a float result: torch's SymFloat power requires `base >= 0`
    (a negative base to a fractional power is complex). For a negative base, an integral
    constant exponent gives `(-base) ** e`, negated for an odd `e` (C's `pow` is symmetric
    so: the same bits); any other exponent specialises the operands."""
    if all(a.python_type() is not float for a in (base, exponent)) and \
            _decided(tx, operator.ge, exponent, 0) is not False:
        return None  # an int to a natural power: an int
    if not _decided(tx, operator.lt, base, 0):
        return None
    e = exponent.as_constant() if exponent.is_constant() else None
    if e is not None and math.isfinite(e) and float(e).is_integer():
        magnitude = _op(tx, operator.pow, _op(tx, operator.neg, base), exponent)
        return _op(tx, operator.neg, magnitude) if e % 2 else magnitude
    values = [a.as_python() if isinstance(a, SymNodeVariable) else a for a in (base, exponent)]
    return _op(tx, operator.pow, *values)


def _decided(tx: Translator, compare: Any, a: VariableTracker, b: Any) -> bool | None:
    """`compare(a, b)` (a guard), or None where it turns on a value read from a tensor (an
    `.item()` under `capture_scalar_outputs`), which no guard decides: such a power is traced
    as torch's."""
    condition = _op(tx, compare, a, b)
    try:
        return bool(condition.value) if isinstance(condition, SymNodeVariable) else \
            condition.truth(tx)
    except DataDependentError:
        return None


def _is_object(v: VariableTracker) -> bool:
    from dynamo.variables.objects import ObjectVariable

    return isinstance(v, ObjectVariable)


def _reversed_range(tx: Translator, numbers: RangeVariable) -> IteratorVariable:
    """`reversed(range(a, b, s))` of symbolic bounds: empty, or over `range(last, a - s, -s)`
    where `last` is `a + (b - a - sign(s)) // s * s`."""
    def apply(fn, *args):
        return BuiltinVariable(fn).call(tx, [*args], {})

    start, step = numbers.start, ConstantVariable(numbers.step)
    if not apply(operator.lt if numbers.step > 0 else operator.gt, start, numbers.stop).truth(tx):
        return RangeIteratorVariable(range(0))
    span = apply(operator.sub, apply(operator.sub, numbers.stop, start),
                 ConstantVariable(1 if numbers.step > 0 else -1))
    last = apply(operator.add, start, apply(operator.mul, apply(operator.floordiv, span, step), step))
    return SymbolicRangeIteratorVariable(
        RangeVariable(last, apply(operator.sub, start, step), -numbers.step))


class BuiltinVariable(TrueVariable):
    def __init__(self, fn: Any) -> None:
        self.fn = fn

    def python_type(self) -> type:
        return type(self.fn)

    def is_constant(self) -> bool:
        return True

    def as_constant(self) -> Any:
        return self.fn

    def words(self) -> str:
        from dynamo.variables.functions import c_callable_name

        return c_callable_name(self.fn) or super().words()

    def __repr__(self) -> str:
        return f"BuiltinVariable({getattr(self.fn, '__name__', self.fn)})"

    def getattr(self, tx: Translator, name: str) -> VariableTracker:
        from dynamo.variables.functions import UserFunctionVariable
        from dynamo.variables.objects import VALUE_BASES, BaseMethodVariable

        if self.fn is dict and name == "fromkeys":
            from dynamo.polyfills import dict_fromkeys

            return UserFunctionVariable(dict_fromkeys)
        member = getattr(self.fn, name, None)
        if self.fn in VALUE_BASES and getattr(member, "__objclass__", None) is self.fn:
            return BaseMethodVariable(self.fn, name)
        if self.fn in VALUE_BASES and member in PURE:  # `float.fromhex`, `int.from_bytes`
            return BuiltinVariable(member)
        method = BaseMethodVariable.of(member)  # object.__setattr__
        return method if method is not None else super().getattr(tx, name)

    def call(self, tx: Translator, args: list[VariableTracker],
             kwargs: dict[str, VariableTracker]) -> VariableTracker:
        fn = self.fn
        _refuse_subclass_operator(tx, fn, args)
        if fn in INPLACE_OPERATORS:
            return self._inplace(tx, args)
        if fn in _SET_METHOD_OF and len(args) == 2 and isinstance(args[0], SetVariable) and (
                isinstance(args[1], SetVariable) or args[1].is_constant()
                and type(args[1].as_constant()) in (set, frozenset)):
            # `a | b` of two sets is `a.union(b)`: made again as eager makes it (its order)
            return args[0].call_method(tx, _SET_METHOD_OF[fn], [args[1]], {})
        if fn in _COMPARISONS and len(args) == 2 and any(
                isinstance(a, SymNodeVariable) for a in args):
            decided = _compare_number(fn, args)
            if decided is not None:
                return decided
            args = [_as_number(a) for a in args]
        if _follows_operator(fn, args):
            return _user_operator(tx, fn, *args)
        if any(isinstance(a, SymNodeVariable) for a in args) and not kwargs:
            result = _symbolic_number_op(tx, fn, args)
            if result is not None:
                return result
        if fn in _UNARY_METHODS and len(args) == 1 and not kwargs and \
                _traced_method(args[0], _UNARY_METHODS[fn]):
            return args[0].call_method(tx, _UNARY_METHODS[fn], [], {})  # `-obj`: its `__neg__`
        handler = getattr(self, f"_call_{getattr(fn, '__name__', '')}", None)
        if handler is not None and getattr(builtins, fn.__name__, None) is fn:
            try:
                result = handler(tx, *args, **kwargs)
            except TypeError:  # arguments the handler cannot bind, or an error of its own
                _refuse_arguments_python_refuses(fn, handler, tx, args, kwargs)
                raise
            if result is not None:
                return result
        if fn in (operator.is_, operator.is_not):
            return self._on_objects(tx, args, kwargs)
        if fn is operator.getitem and isinstance(args[0], (SequenceVariable, DictVariable)):
            return args[0].getitem(tx, args[1])  # the element itself (a list in a tuple, say)
        if fn in (operator.add, operator.mul) and any(_holds_containers(a) for a in args):
            return _sequence_arith(tx, fn, *args)  # `[[1]] * 2`: one inner list, twice
        if fn is operator.contains and isinstance(args[0], SequenceVariable) and \
                args[1].is_constant() and args[0].is_constant():
            # identity first, item by item (two NaNs from the frame guarded one or two objects)
            return ConstantVariable(any(same_or_equal(tx, v, args[1]) for v in args[0].values))
        if fn in PURE and all(a.is_constant() for a in [*args, *kwargs.values()]):
            positional = [a.as_constant() for a in args]
            if fn in _BY_IDENTITY_FIRST and any(
                    isinstance(p, (tuple, frozenset, list, set)) for p in positional) and \
                    sum(map(holds_nan, positional)) > (len(positional) > 1):
                # items compared identity first (`(n,) == (m,)`, `n in (m,)`, a set of NaNs):
                # which NaN objects they are decides
                pin_nan(tx, *args)
            keywords = {k: v.as_constant() for k, v in kwargs.items()}
            on_numpy = any(map(is_numpy_number, [*positional, *keywords.values()]))
            try:
                with numpy_raising() if on_numpy else contextlib.nullcontext():
                    value = fn(*positional, **keywords)
            except Exception as error:
                if on_numpy and isinstance(error, FloatingPointError):
                    # numpy's arithmetic warns or raises by `np.seterr`, read at run time:
                    # where it would (`np.float64(1) / 0`), computed for real at a break
                    raise Unsupported(f"{getattr(fn, '__name__', fn)} of numpy scalars that "
                                      f"numpy would warn on ({error})") from None
                # the user's code raises here
                raise Raised(error, f"{getattr(fn, '__name__', fn)}() raised "
                             f"{type(error).__name__}: {error}") from None
            from dynamo.variables.builder import wrap_constant_result

            return wrap_constant_result(value)
        shown = [printed(a) for a in args] if fn in _TEXT or fn is operator.mod and \
            args[0].is_constant() and isinstance(args[0].as_constant(), str) else []
        if any(v is not None for v in shown):
            # Text (or a hash) of a symbolic number, or of a shape holding some: of the
            # numbers these inputs have.
            args = [a if v is None else ConstantVariable(v) for a, v in zip(args, shown)]
            return self.call(tx, args, kwargs)
        if fn in (operator.getitem, operator.setitem) and isinstance(args[0], TensorVariable):
            key = args[1].values if isinstance(args[1], TupleVariable) else [args[1]]
            if args[0].fake.dim() == 0 and _int_first(key):
                # torch rejects only index 0 of a 0-dim tensor, and for another int reads the
                # size of a dimension the tensor lacks: garbage, a crash on symbolic sizes
                raise Unsupported(f"{fn.__name__}: an int index into a 0-dim tensor "
                                  "(IndexError)")
            if fn is operator.getitem:
                selected = _select_symbols(tx, args[0], key)
                if selected is not None:
                    return selected
            return tx.output.call_function(fn, args, kwargs)
        if fn is math.prod and len(args) == 1 and isinstance(args[0], SequenceVariable) and \
                any(isinstance(a, SymNodeVariable) for a in args[0].values):
            product = kwargs.get("start", ConstantVariable(1))  # of sizes: stays symbolic
            for item in args[0].values:
                product = BuiltinVariable(operator.mul).call(tx, [product, item], {})
            return product
        if fn in (int, float) and len(args) == 1 and not kwargs and \
                isinstance(args[0], TensorVariable) and tx.output.capture_scalar_outputs:
            # `float(t)`, `int(t)`: the number `t.item()` is (an unbacked symbol), converted
            number = args[0].call_method(tx, "item", [], {})
            return self.call(tx, [number], {})
        if fn in (int, float) and len(args) == 1 and not kwargs and \
                isinstance(args[0], SymNodeVariable) and args[0].python_type() is fn:
            return args[0]  # `int(x.shape[0])`: the size itself, still symbolic
        if fn is float and len(args) == 1 and not kwargs and \
                isinstance(args[0], SymNodeVariable) and args[0].python_type() is int:
            return tx.output.call_function(torch.sym_float, args, {})  # (float() would guard)
        if fn in _SYM_MATH and len(args) == 1 and isinstance(args[0], SymNodeVariable):
            # torch's SymFloat-aware twin (`torch._sym_cos`) keeps the number symbolic
            # (`math.cos` asks for its value): a cosine learning-rate schedule is a few graphs,
            # not one per step
            return tx.output.call_function(_SYM_MATH[fn], args, {})
        if fn is operator.getitem and _is_object(args[0]):
            return self._on_objects(tx, args, kwargs)  # `obj[n]`, n symbolic: obj's __getitem__
        if fn is operator.contains and _is_object(args[0]):
            return self._on_objects(tx, args, kwargs)  # `t in obj`, t a tensor: obj's __contains__
        if any(_graph_value(a) for a in [*args, *kwargs.values()]):
            if fn in PURE:
                if any(isinstance(a, SymNodeVariable) for a in args) and any(
                        a.is_constant() and is_numpy_number(a.as_constant()) for a in args):
                    # numpy's own arithmetic (an int8 wraps, a numpy number results), not a
                    # Python number's: computed for real
                    raise Unsupported(f"{getattr(fn, '__name__', fn)} of a number made a symbol "
                                      "and a numpy scalar")
                if not any(isinstance(a, SequenceVariable) and not isinstance(a, SizeVariable)
                           or isinstance(a, (DictVariable, DictViewVariable)) for a in args):
                    return tx.output.call_function(fn, args, kwargs)
        return self._on_objects(tx, args, kwargs)

    # ----- operators on containers and objects ------------------------------------------------

    def _on_objects(self, tx: Translator, args: list[VariableTracker], kwargs) -> VariableTracker:
        fn = self.fn
        name = getattr(fn, "__name__", repr(fn))
        if fn is operator.getitem:
            obj, key = args
            if isinstance(obj, (SequenceVariable, DictVariable)):
                return obj.getitem(tx, key)
            return obj.call_method(tx, "__getitem__", [key], {})
        if fn is operator.setitem:
            return args[0].call_method(tx, "__setitem__", args[1:], {})
        if fn is operator.delitem:
            return args[0].call_method(tx, "__delitem__", args[1:], {})
        if fn is operator.contains:
            from dynamo.variables.user_objects import UserObjectVariable

            container, item = args
            if isinstance(container, DictVariable):
                return ConstantVariable(container.has_key(dict_key(item, tx, container)))
            if isinstance(container, DictViewVariable):
                return ConstantVariable(_view_contains(tx, container, item))
            if isinstance(container, UserObjectVariable) and container.defines("__contains__"):
                found = container.call_method(tx, "__contains__", [item], {})
                return ConstantVariable(found.truth(tx))
            if _own_contains(container):  # a module class's own (a ParameterDict's too)
                found = container.call_method(tx, "__contains__", [item], {})
                return ConstantVariable(found.truth(tx))
            if item.is_constant() and holds_nan(item.as_constant()) and (
                    isinstance(container, SetVariable) or container.is_constant()
                    and not isinstance(container, SequenceVariable)):
                pin_nan(tx, container)  # its items have no sources of their own
            if isinstance(container, IteratorVariable):  # takes items up to the one found
                return ConstantVariable(any(_in(tx, item, v) for v in _taken(tx, container)))
            return ConstantVariable(any(_in(tx, item, v) for v in container.items(tx)))
        if fn in (operator.is_, operator.is_not):
            same = _identical(tx, args[0], args[1])
            return ConstantVariable(same if fn is operator.is_ else not same)
        if fn is operator.or_ and all(isinstance(a, DictVariable) for a in args) \
                and args[1].kind is dict:  # `defaults | overrides`: a new dict of the first's kind
            a, b = args
            return DictVariable({**a.entries, **b.entries}, kind=a.kind,
                                default_factory=a.default_factory)
        if any(_set_like(a) for a in args) and (
                fn in _SET_OPERATORS or fn in _ORDERS or fn in (operator.eq, operator.ne)):
            return _set_operation(tx, fn, *args)
        if fn in (operator.lt, operator.le, operator.gt, operator.ge):
            sequences = _as_sequence(args[0]), _as_sequence(args[1])
            if None not in sequences and sequences[0].python_type() is sequences[1].python_type():
                # Python's order of sequences: the first items that differ decide
                a, b = sequences[0].values, sequences[1].values
                for x, y in zip(a, b):
                    if not _item_equal(tx, x, y):
                        return BuiltinVariable(fn).call(tx, [x, y], {})
                return ConstantVariable(fn(len(a), len(b)))
        if fn in (operator.eq, operator.ne) and not any(_graph_value(a) for a in args):
            sequences = _as_sequence(args[0]), _as_sequence(args[1])
            if None not in sequences:
                kinds = {issubclass(q.python_type(), list) for q in sequences}
                a, b = sequences[0].values, sequences[1].values
                equal = len(kinds) == 1 and len(a) == len(b) and all(
                    _item_equal(tx, x, y) for x, y in zip(a, b))
                return ConstantVariable(equal if fn is operator.eq else not equal)
            if isinstance(args[0], DictVariable) and isinstance(args[1], DictVariable):
                a, b = args[0].entries, args[1].entries
                equal = a.keys() == b.keys() and all(_item_equal(tx, a[k], b[k]) for k in a)
                return ConstantVariable(equal if fn is operator.eq else not equal)
            equal = _equal(tx, args[0], args[1])
            return equal if fn is operator.eq else ConstantVariable(not equal.truth(tx))
        if fn is operator.not_:
            return ConstantVariable(not args[0].truth(tx))
        if fn is operator.truth:
            return ConstantVariable(args[0].truth(tx))
        if fn in (operator.add, operator.mul) and any(isinstance(a, SequenceVariable) for a in args):
            return _sequence_arith(tx, fn, *args)
        if isinstance(fn, type) and issubclass(fn, BaseException):
            return make_exception(fn, args, kwargs)
        from dynamo.variables.user_objects import NewObjectVariable

        if fn is object and not args and not kwargs:  # a sentinel (`heapq.nlargest` makes one)
            return NewObjectVariable(object, None)
        if fn in _IDENTITY_SHOWN and len(args) == 1 and isinstance(args[0], NewObjectVariable) \
                and all(getattr(args[0].cls, method) is getattr(object, method)
                        for method in _IDENTITY_SHOWN[fn]):
            raise Unsupported(f"{name}() of {args[0].words()} made in the frame: it shows the "
                              "object's identity, known only when the program runs")
        on = f" on {', '.join(a.words() for a in args)}" if args else " with no arguments"
        raise Unsupported(f"{name}(){on}")

    def _inplace(self, tx: Translator, args: list[VariableTracker]) -> VariableTracker:
        target, value = args
        method = "__i" + _OPERATOR_METHODS[INPLACE_OPERATORS[self.fn]][0][2:]
        if _traced_method(target, method):
            result = target.call_method(tx, method, [value], {})
            if not (result.is_constant() and result.as_constant() is NotImplemented):
                return result
        if isinstance(target, TensorVariable):
            return tx.output.call_function(self.fn, args, {})
        if isinstance(target, ListVariable) and self.fn is operator.iadd:
            target.call_method(tx, "extend", [value], {})
            return target
        if isinstance(target, ListVariable) and self.fn is operator.imul:  # in place, too
            if target.source is not None:
                tx.output.side_effects.mutated(target)
            target.values[:] = target.values * concrete_int(value)
            return target
        if isinstance(target, SetVariable) and self.fn in _SET_UPDATES:
            target.call_method(tx, _SET_UPDATES[self.fn], [value], {})
            return target
        if isinstance(target, DictVariable) and self.fn is operator.ior and \
                isinstance(value, DictVariable):
            target.call_method(tx, "update", [value], {})
            return target
        return BuiltinVariable(INPLACE_OPERATORS[self.fn]).call(tx, args, {})

    # ----- builtins by name (a handler returning None falls through to the generic path) -----

    def _call_len(self, tx, obj, **_):
        if isinstance(obj, ConstantVariable) and isinstance(obj.value, range):
            return ConstantVariable(len(obj.value))  # not its numbers, one by one
        if isinstance(obj, SequenceVariable):
            return ConstantVariable(obj.length(tx))
        if isinstance(obj, SetVariable) or obj.is_constant():
            return ConstantVariable(len(obj.items(tx)))
        if isinstance(obj, DictVariable):
            return ConstantVariable(len(obj.items(tx)))
        if isinstance(obj, TensorVariable):
            if obj.fake.dim() == 0:  # eager's TypeError, which the frame's `try` may catch
                raise Raised(TypeError("len() of a 0-d tensor"),
                             "len() of a 0-d tensor (a TypeError while tracing)")
            return obj.call_method(tx, "size", [ConstantVariable(0)], {})
        from dynamo.variables.user_objects import UserObjectVariable

        if isinstance(obj, UserObjectVariable):  # its `__len__`'s result checked
            return obj.length(tx)
        return obj.call_method(tx, "__len__", [], {})

    def _call_isinstance(self, tx, obj, classes, **_):
        return ConstantVariable(instance_check(tx, obj, classes))

    def _call_issubclass(self, tx, sub, classes, **_):
        cls = classes.as_constant()
        try:
            answer = issubclass(sub.as_constant(), cls)
        except TypeError as error:
            raise Unsupported(f"issubclass(): {error}") from None
        if not answer:
            _guard_abc_registry(tx, cls)
        return ConstantVariable(answer)

    def _call_callable(self, tx, obj, **_):
        from dynamo.variables.functions import (
            BoundMethodVariable,
            NestedFunctionVariable,
            PartialVariable,
            UserFunctionVariable,
            UserMethodVariable,
        )

        if isinstance(obj, (UserFunctionVariable, NestedFunctionVariable, UserMethodVariable,
                            BoundMethodVariable, PartialVariable, BuiltinVariable)):
            return ConstantVariable(True)
        if obj.is_constant():
            return ConstantVariable(callable(obj.as_constant()))
        return ConstantVariable("__call__" in dir(obj.python_type()))

    def _call_getattr(self, tx, obj, name, default=None, **_):
        attr = _attribute_name(name)
        if default is None:
            return obj.getattr(tx, attr)
        try:
            return obj.getattr(tx, attr)
        except Unsupported:
            if _has_attribute(tx, obj, attr):
                raise
            return default

    def _call_hasattr(self, tx, obj, name, **_):
        return ConstantVariable(_has_attribute(tx, obj, _attribute_name(name)))

    def _call_hash(self, tx, obj, **_):
        from dynamo.variables.user_objects import UserObjectVariable

        if isinstance(obj, UserObjectVariable) and obj.defines_in_python("__hash__"):
            return obj.call_method(tx, "__hash__", [], {})  # a dataclass's, of its fields
        return None

    def _call_str(self, tx, obj=None, *rest, **kwargs):
        return None if rest or kwargs else user_text(tx, str, obj)

    def _call_repr(self, tx, obj, **_):
        return user_text(tx, repr, obj)

    def _call_vars(self, tx, obj=None, **_):
        from dynamo.variables.user_objects import UserObjectVariable

        if obj is None:
            return self._call_locals(tx)
        if isinstance(obj, UserObjectVariable):
            return obj.getattr(tx, "__dict__")
        return None

    def _call_locals(self, tx, **_):
        """A new dict of the traced function's bound variables (a function's `locals()`
        copies them), cells and free variables included."""
        code = tx.code
        entries = {}
        for name in code.co_varnames:
            if name in tx.locals or name in tx.frame_locals:
                entries[name] = tx.load_local(name)
        for name in (*code.co_cellvars, *code.co_freevars):
            try:
                entries[name] = tx.load_cell(name)
            except Unsupported:  # not bound yet
                continue
        return DictVariable(entries)

    def _call_setattr(self, tx, obj, name, value, **_):
        obj.setattr(tx, _attribute_name(name), value)
        return ConstantVariable(None)

    def _call_delattr(self, tx, obj, name, **_):
        obj.delattr(tx, _attribute_name(name))
        return ConstantVariable(None)

    def _call_type(self, tx, obj, *rest, **_):
        from dynamo.variables.user_objects import class_of

        if rest:
            raise Unsupported("type() with three arguments (creating a class)")
        return class_of(obj)

    def _call_range(self, tx, *args, **_):
        if any(isinstance(a, SymNodeVariable) for a in args) and len(args) <= 3 and all(
                isinstance(a, SymNodeVariable) and a.python_type() is int
                or a.is_constant() and type(a.as_constant()) is int for a in args):
            bounds = [ConstantVariable(0), *args] if len(args) == 1 else list(args)
            start, stop, step = [*bounds, ConstantVariable(1)][:3]
            if concrete_int(step):  # (a zero step raises below, as in Python)
                return RangeVariable(start, stop, concrete_int(step))
        bounds = [concrete_int(a) for a in args]
        with raised_by_python("range()"):
            return ConstantVariable(range(*bounds))

    def _call_iter(self, tx, obj, sentinel=None, **_):
        if sentinel is None:
            return iterate(tx, obj)
        if not self._call_callable(tx, obj).as_constant():
            message = ("iter(object, sentinel): object must be callable"  # (Python's words)
                       if sys.version_info >= (3, 12) else "iter(v, w): v must be callable")
            raise python_error(TypeError(message))
        from dynamo.polyfills import call_until
        from dynamo.variables.functions import UserFunctionVariable

        return UserFunctionVariable(call_until).call(tx, [obj, sentinel], {})

    def _call_next(self, tx, it, *default, **_):
        from dynamo.variables.generators import GeneratorVariable, UserIteratorVariable
        from dynamo.variables.user_objects import UserObjectVariable

        if isinstance(it, UserObjectVariable) and it.defines_in_python("__next__"):
            it = UserIteratorVariable(it)  # a user's iterator class: its `__next__`, inlined
        if not isinstance(it, IteratorVariable):
            raise Unsupported(f"next() on {it.words()}")
        if not default and isinstance(it, (GeneratorVariable, UserIteratorVariable)):
            # the StopIteration that ends it is its own: a generator's carries what its body
            # returned, a user's `__next__` raises one of its choosing (a value, a subclass)
            return it.call_method(tx, "__next__", [], {})
        value = it.next(tx)
        if value is None:
            if default:
                return default[0]
            raise Raised(StopIteration(), "next() on an exhausted iterator (StopIteration while "
                         "tracing)")
        return value

    # enumerate, zip, map, filter and reversed take the items of the iterators below one at a
    # time, when their own are taken (over a generator made in the trace: `lazy_map`).

    def _call_enumerate(self, tx, obj, start=None, **_):
        first = concrete_int(start) if start is not None else 0
        with raised_by_python("enumerate()"):
            first = operator.index(first)
        count = itertools.count(first)
        lazy = lazy_map(tx, lambda row: TupleVariable([ConstantVariable(next(count)), row[0]]),
                        [obj])
        return lazy if lazy is not None else EnumerateIteratorVariable(iterate(tx, obj), first)

    def _call_zip(self, tx, *iterables, strict=None, **_):
        strict = strict is not None and strict.truth(tx)
        lazy = None if strict else lazy_map(tx, TupleVariable, list(iterables))
        return lazy if lazy is not None else \
            ZipIteratorVariable([iterate(tx, it) for it in iterables], strict)

    def _call_map(self, tx, fn, *iterables, **_):
        lazy = lazy_map(tx, lambda row: fn.call(tx, row, {}), list(iterables))
        return lazy if lazy is not None else \
            MapIteratorVariable(fn, ZipIteratorVariable([iterate(tx, it) for it in iterables]))

    def _call_filter(self, tx, fn, iterable, **_):
        def keep(v: VariableTracker) -> bool:
            if fn.is_constant() and fn.as_constant() is None:
                return v.truth(tx)
            return fn.call(tx, [v], {}).truth(tx)

        lazy = lazy_map(tx, lambda row: row[0] if keep(row[0]) else None, [iterable])
        return lazy if lazy is not None else \
            FilterIteratorVariable(fn, ZipIteratorVariable([iterate(tx, iterable)]))

    def _call_reversed(self, tx, obj, **_):
        if isinstance(obj, RangeVariable) and obj.within_a_c_long():
            return _reversed_range(tx, obj)
        if isinstance(obj, ConstantVariable) and type(obj.value) is range:  # (no list made)
            return RangeIteratorVariable(obj.value[::-1], type(reversed(obj.value)))
        if isinstance(obj, ListVariable) and obj.kind is list:
            return ReversedListIteratorVariable(obj)
        if isinstance(obj, DictVariable):
            return DictIteratorVariable(obj, reverse=True)
        if isinstance(obj, DictViewVariable):
            return DictIteratorVariable(obj.dict, obj.view, reverse=True)
        if isinstance(obj, TensorVariable):
            # `Tensor.__reversed__`: the tensor itself when 0-d, else `flip(0)` (a tensor, not
            # an iterator over its rows)
            return obj if obj.fake.dim() == 0 else \
                obj.call_method(tx, "flip", [ConstantVariable(0)], {})
        from dynamo.variables.user_objects import UserObjectVariable, builtin_base

        if isinstance(obj, UserObjectVariable) and obj.defines_in_python("__reversed__"):
            # the class's own, a dict or list subclass's too (not the base's order)
            return iterate(tx, obj.call_method(tx, "__reversed__", [], {}))
        if isinstance(obj, UserObjectVariable) and builtin_base(obj.python_type()) is object:
            # as `reversed()` asks: the class's `__reversed__`, else the sequence protocol
            if obj.defines("__reversed__"):
                return iterate(tx, obj.call_method(tx, "__reversed__", [], {}))
            if not (obj.defines("__len__") and obj.defines("__getitem__")):
                message = f"'{obj.python_type().__name__}' object is not reversible"
                raise python_error(TypeError(message))
            count = obj.call_method(tx, "__len__", [], {}).as_constant()
            return IteratorVariable([obj.call_method(tx, "__getitem__", [ConstantVariable(i)], {})
                                     for i in reversed(range(count))])
        if not _reversible(obj.python_type()):  # (a generator, an iterator, a set)
            message = f"'{obj.python_type().__name__}' object is not reversible"
            raise python_error(TypeError(message))
        return IteratorVariable(list(reversed(obj.items(tx))))

    def _call_list(self, tx, obj=None, **_):
        return ListVariable(obj.items(tx) if obj is not None else [])

    def _call_tuple(self, tx, obj=None, **_):
        return TupleVariable(obj.items(tx) if obj is not None else [])

    def _call_set(self, tx, obj=None, **_):
        if obj is None:
            return SetVariable.made(())
        items = obj.items(tx)  # (once: an iterator's items are taken)
        admit_nans(tx, items)
        return SetVariable.made(tuple(v.as_constant() for v in items))

    def _call_dict(self, tx, obj=None, **kwargs):
        entries: dict = {}
        if obj is not None:
            store_entries(tx, entries, obj)
        entries.update(kwargs)
        return DictVariable(entries)

    def _call_sorted(self, tx, obj, key=None, reverse=None, **_):
        return ListVariable(sort_values(tx, obj.items(tx), key, reverse))

    def _call_divmod(self, tx, a, b, **_):
        if a.is_constant() and b.is_constant():
            return None  # folded like any pure builtin
        if isinstance(a, TensorVariable) or isinstance(b, TensorVariable):  # no __divmod__
            raise Raised(TypeError(f"unsupported operand type(s) for divmod(): "
                                   f"'{a.python_type().__name__}' and "
                                   f"'{b.python_type().__name__}'"),
                         "divmod() of a tensor (a TypeError)")
        return TupleVariable([BuiltinVariable(operator.floordiv).call(tx, [a, b], {}),
                              BuiltinVariable(operator.mod).call(tx, [a, b], {})])

    def _call_sum(self, tx, obj, start=None, **_):
        if start is not None and start.is_constant() and isinstance(start.as_constant(), (str, bytes)):
            kind, join = ("strings", "''") if isinstance(start.as_constant(), str) else ("bytes", "b''")
            message = f"sum() can't sum {kind} [use {join}.join(seq) instead]"  # (Python's words)
            raise python_error(TypeError(message))
        total = start if start is not None else ConstantVariable(0)
        for v in _taken(tx, obj):  # each added before the next is made, as a generator's are
            total = BuiltinVariable(operator.add).call(tx, [total, v], {})
        return total

    def _call_all(self, tx, obj, **_):
        return ConstantVariable(all(v.truth(tx) for v in _taken(tx, obj)))

    def _call_any(self, tx, obj, **_):
        return ConstantVariable(any(v.truth(tx) for v in _taken(tx, obj)))

    def _call_min(self, tx, *args, key=None, default=None):
        return self._extremum(tx, args, operator.lt, key, default)

    def _call_max(self, tx, *args, key=None, default=None):
        return self._extremum(tx, args, operator.gt, key, default)

    def _extremum(self, tx, args, better, key, default) -> VariableTracker | None:
        """The first value that no later one beats (by `key`, when given), as Python's
        min/max pick it; None: the generic path (tensors compared elementwise)."""
        name = "min" if better is operator.lt else "max"
        if not args or len(args) > 1 and default is not None:  # (Python's own words)
            misuse = (f"{name} expected at least 1 argument, got 0" if not args else
                      f"Cannot specify a default for {name}() with multiple positional arguments")
            raise python_error(TypeError(misuse))
        keyed = key is not None and not is_none(key)
        if not keyed and len(args) > 1 and any(isinstance(v, TensorVariable) for v in args):
            return None  # (with a key, the keys are compared: `max(ts, key=len)`)
        rank = (lambda v: key.call(tx, [v], {})) if keyed else (lambda v: v)
        best = best_rank = None
        # each item is ranked when taken, before the next is made (as a generator's are)
        for v in _taken(tx, args[0]) if len(args) == 1 else args:
            if not keyed and isinstance(v, TensorVariable):
                return None  # (the iterator's state is undone as the call breaks)
            v_rank = rank(v)
            if best is None or BuiltinVariable(better).call(tx, [v_rank, best_rank], {}).truth(tx):
                best, best_rank = v, v_rank
        if best is None:
            if default is None:
                words = (f"{name}() iterable argument is empty" if sys.version_info >= (3, 12)
                         else f"{name}() arg is an empty sequence")  # (Python's own words)
                raise python_error(ValueError(words))
            return default
        return best

    def _call_bool(self, tx, obj=None, **_):
        return ConstantVariable(obj.truth(tx) if obj is not None else False)

    def _call_slice(self, tx, *args, **_):
        return SliceVariable(list(args))

    def _call_super(self, tx, *args, **kwargs):
        if kwargs or len(args) > 2:
            message = "super() takes no keyword arguments" if kwargs else \
                f"super() expected at most 2 arguments, got {len(args)}"  # (Python's words)
            raise python_error(TypeError(message))
        return tx.make_super(args)

    def _call_print(self, tx, *args, **_):
        raise Unsupported("print()")

    def _call_id(self, tx, obj, **_):
        """The id of an object from the frame (a module, a tensor, an optimizer: GradScaler
        keys its state by `id(optimizer)`), a constant under a guard on its identity."""
        from dynamo.variables.objects import NNModuleVariable, ObjectVariable
        from dynamo.variables.tensor import TensorVariable
        from dynamo.variables.user_objects import NewObjectVariable

        value = None
        if isinstance(obj, TensorVariable) and obj.source is not None:
            value = tx.output.input_value(obj.source)
        elif isinstance(obj, ObjectVariable) and not isinstance(obj, NewObjectVariable) and \
                obj.source is not None:
            value = obj.value
        elif isinstance(obj, NNModuleVariable) and obj.make is None:
            # A module reached through its class's members (a parametrization's property keeps
            # its module in a closure): as stable as the class, which the module's own guards
            # pin (module class members are not guarded one by one)
            return ConstantVariable(id(obj.value))
        if value is None:
            raise Unsupported(f"id() of {obj.words()} (object identity is traced for objects "
                              "from the frame only)")
        if not isinstance(obj, NNModuleVariable):  # (a module's identity is guarded already)
            tx.output.add_guard(Identity.of(obj.source, value))
        return ConstantVariable(id(value))


# The wrappers that keep a `__repr__` from recursing: `reprlib.recursive_repr`'s and the
# copy of it that dataclasses put around the `__repr__` they make (before 3.13, which uses reprlib's)
_RECURSIVE_REPR_CODES = frozenset(wrapped(lambda self: "").__code__ for wrapped in (
    reprlib.recursive_repr(), getattr(dataclasses, "_recursive_repr", reprlib.recursive_repr())))


def user_text(tx: Translator, fn: Any, obj: VariableTracker) -> VariableTracker | None:
    """`str(obj)` or `repr(obj)` of a user object whose class writes the method in Python:
    the method inlined (`str` falls back to `__repr__` where the class keeps `object.__str__`),
    None for any other object. A `__repr__` wrapped against recursion (a dataclass's) is followed
    through to the method it wraps: the wrapper keys its guard against recursion by `id()`,
    which a trace cannot know, and a recursive value then breaks at the inlining depth."""
    from dynamo.variables.builder import wrap
    from dynamo.variables.user_objects import UserObjectVariable

    if not isinstance(obj, UserObjectVariable):
        return None
    kind = obj.python_type()
    name = "__str__" if fn is str and kind.__str__ is not object.__str__ else "__repr__"
    if not obj.defines_in_python(name):
        return None
    method = getattr(kind, name)
    if method.__code__ in _RECURSIVE_REPR_CODES:
        text = wrap(tx, method.__wrapped__, None).call(tx, [obj], {})
    else:
        text = obj.call_method(tx, name, [], {})
    if not (text.is_constant() and type(text.as_constant()) is str):
        raise Unsupported(f"{fn.__name__}() of {obj.words()}: its {name} gave {text.words()}, "
                          "not a constant string")
    return text


def make_exception(cls: type, args: list[VariableTracker], kwargs) -> VariableTracker:
    """An exception instance made while tracing: real, when its class's constructor is
    Python's own and its arguments are constants (a message, a key)."""
    python_init = any(isinstance(k.__dict__.get(m), types.FunctionType)
                      for k in cls.__mro__ for m in ("__init__", "__new__"))
    if python_init or kwargs or not all(a.is_constant() for a in args):
        raise Unsupported(f"creating the exception {cls.__qualname__} (with a constructor of its "
                          "own, or arguments that are not constants)")
    return ConstantVariable(cls(*[a.as_constant() for a in args]))


def _own_contains(obj: VariableTracker) -> bool:
    """Whether `obj` is a module whose class defines `__contains__` in Python, other than
    the containers whose items the tracker answers (ModuleDict)."""
    from dynamo.variables.objects import NNModuleVariable, class_attribute

    if not isinstance(obj, NNModuleVariable) or isinstance(obj.value, torch.nn.ModuleDict):
        return False
    return isinstance(class_attribute(type(obj.value), "__contains__")[1], types.FunctionType)


def _reversible(kind: type) -> bool:
    """Whether `reversed()` takes an object of this type: it has `__reversed__`, or is a
    sequence (`__len__` and `__getitem__`, a dict's excepted), as CPython asks; a class that
    sets `__reversed__ = None` refuses it."""
    if hasattr(kind, "__reversed__"):
        return kind.__reversed__ is not None
    return hasattr(kind, "__len__") and hasattr(kind, "__getitem__") and not issubclass(kind, dict)


def _attribute_name(name: VariableTracker) -> str:
    """The name given to getattr/hasattr/setattr/delattr, which Python requires to be a str:
    any other name is its TypeError (an object's `__dict__` would take an int key)."""
    attr = name.as_constant()
    if not isinstance(attr, str):
        message = f"attribute name must be string, not '{type(attr).__name__}'"
        raise python_error(TypeError(message))
    return attr


def _has_attribute(tx: Translator, obj: VariableTracker, name: str) -> bool:
    from dynamo.variables.functions import UserFunctionVariable
    from dynamo.variables.objects import (
        CompiledVariable,
        NNModuleVariable,
        PythonModuleVariable,
        UserClassVariable,
    )
    from dynamo.variables.user_objects import UserObjectVariable

    if isinstance(obj, (NNModuleVariable, UserObjectVariable, PythonModuleVariable,
                        UserClassVariable)):
        return obj.has_attribute(tx, name)
    if isinstance(obj, CompiledVariable) and not isinstance(
            obj.value, torch.nn.Module | functools.partial):
        # a compiled function: its own attributes (it passes none on to the function)
        return hasattr(type(obj.value), name) or obj.own_attribute(tx, name)
    if isinstance(obj, CompiledVariable):  # a compiled module or callable: what it wraps
        return (name == "_orig_mod" and isinstance(obj.value, torch.nn.Module)) or \
            _has_attribute(tx, obj.inner, name)
    if obj.is_constant():
        return hasattr(obj.as_constant(), name)
    if isinstance(obj, TensorVariable):
        if hasattr(obj.python_type(), name):  # the class's: a method, property or slot
            return True
        real = tx.output.input_value(obj.source) if obj.source is not None else None
        if real is None:  # made in the trace: setting an attribute on it is a break
            return False
        # an instance attribute (`x.tag`) lives on the real tensor, not on its fake: asked
        # of the real one, guarded (it may come and go between calls)
        present = name in real.__dict__
        tx.output.add_guard(DictContains(AttrSource(obj.source, "__dict__"), name, present))
        return present
    if isinstance(obj, UserFunctionVariable):  # its own attributes live in its __dict__
        try:
            obj.getattr(tx, name)  # guarded, present or absent
        except Raised as error:
            if isinstance(error.exception, AttributeError):
                return False
            raise
        return True
    return hasattr(obj.python_type(), name)


def _fn_identity(v: VariableTracker) -> Any:
    from dynamo.variables.functions import UserFunctionVariable

    return v.identity() if isinstance(v, UserFunctionVariable) else v.fn


def value_decides_identity(value: Any) -> bool:
    """Whether CPython keeps one object for this value, so that `is` follows from the type and
    value that `Equals` guards: None, `...`, NotImplemented, bools, small ints."""
    return value is None or value is Ellipsis or value is NotImplemented or \
        type(value) is bool or (type(value) is int and -5 <= value <= 256)


def _identical(tx: Translator, a: VariableTracker, b: VariableTracker) -> bool:
    """`a is b` for two trackers. The answer about an object from the frame holds for that very
    object only, so it is guarded by identity (unless the types alone decide it)."""
    from dynamo.variables.functions import UserFunctionVariable
    from dynamo.variables.objects import ObjectVariable, PythonModuleVariable
    from dynamo.variables.user_objects import NewObjectVariable

    if a is b:
        return True
    if isinstance(a, NewObjectVariable) or isinstance(b, NewObjectVariable):
        return False  # one tracker per object the trace made
    if a.source is not None and b.source is not None and isinstance(
            a, (TensorVariable, SequenceVariable, DictVariable, SetVariable)):
        # One tracker per tensor, list, dict or set of the frame: two are two objects, and
        # must stay two on later calls.
        tx.output.add_guard(DistinctObjects((a.source, b.source)))
        return False
    if isinstance(a, (ListVariable, DictVariable, SetVariable)) or isinstance(
            b, (ListVariable, DictVariable, SetVariable)):
        return False  # one tracker per container object
    if isinstance(a, RangeVariable) and isinstance(b, RangeVariable):
        # Which objects they are, guarded, not their numbers (pinned, if read)
        if a.source is None or b.source is None:
            return False  # one tracker per range the trace made
        same = a.real is b.real
        tx.output.add_guard(SameObject(a.source, b.source) if same
                            else DistinctObjects((a.source, b.source)))
        return same
    if a.is_constant() and b.is_constant():
        value_a, value_b = a.as_constant(), b.as_constant()
        same = value_a is value_b
        if not (value_decides_identity(value_a) or value_decides_identity(value_b)):
            # Equal constants from the frame need not be one object on the next call (two
            # `10**6`s, two strs, two NaNs): their value guards do not pin the answer
            if a.source is not None and b.source is not None:
                tx.output.add_guard(SameObject(a.source, b.source) if same
                                    else DistinctObjects((a.source, b.source)))
            elif same and (a.source or b.source) is not None:
                tx.output.add_guard(Identity.of(a.source or b.source, value_a))
            elif not same and (a.source or b.source) is not None and \
                    ordered(value_a) == ordered(value_b):
                raise Unsupported("`is` between a constant from the frame and an equal "
                                  "constant of the code (which object it is is not guarded)")
        return same
    from dynamo.variables.objects import TorchFunctionVariable

    functions = UserFunctionVariable | TorchFunctionVariable
    if isinstance(a, functions) and isinstance(b, functions):
        # each guarded by identity (when it has a source; one made per call, now)
        return _fn_identity(a) is _fn_identity(b)
    if isinstance(a, functions) and b.is_constant() or \
            isinstance(b, functions) and a.is_constant():
        # a function against a constant (an item of a set of constants: `fn in {fn}`)
        fn, constant = (a, b) if isinstance(a, functions) else (b, a)
        return _fn_identity(fn) is constant.as_constant()
    try:
        if a.python_type() is not b.python_type():
            return False  # the type guards already pin this answer
    except Unsupported:  # a tracker that does not know its type
        pass
    if isinstance(a, SymNodeVariable) or isinstance(b, SymNodeVariable):
        # Which int object a symbol stands for is not traced (`1 is 1` holds in CPython, two
        # equal big ints need not be one object): eager decides
        raise Unsupported("`is` between numbers made symbols")
    if isinstance(a, PythonModuleVariable) and isinstance(b, PythonModuleVariable):
        return a.module is b.module  # (each guarded by identity, or imported)
    for v in (a, b):
        if isinstance(v, ObjectVariable) and v.source is not None:
            tx.output.add_guard(Identity.of(v.source, v.value))
    value_a, value_b = getattr(a, "value", a), getattr(b, "value", b)
    if isinstance(value_a, VariableTracker) or isinstance(value_b, VariableTracker):
        if a.source is not None and b.source is not None and a.source != b.source:
            # a tracker that does not hold its object (a bound method, a partial): two from
            # the frame may be one object passed twice
            raise Unsupported(f"`is` between {a.words()} and {b.words()} from the frame "
                              "(which objects they are is not traced)")
        # one of them made in the trace, or each made by its own read (`d.values()` twice):
        # two objects
        return False
    return value_a is value_b


# Python's binary operators and ordering comparisons, and the special methods that implement
# them: the left operand's, and the reflected one the right operand is asked for after it
_OPERATOR_METHODS = {
    **{getattr(operator, f"__{name}__"): (f"__{name}__", f"__r{name}__") for name in (
        "add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or", "xor",
        "lshift", "rshift")},
    operator.lt: ("__lt__", "__gt__"), operator.le: ("__le__", "__ge__"),
    operator.gt: ("__gt__", "__lt__"), operator.ge: ("__ge__", "__le__"),
}
# Unary operators and the special methods implementing them
_UNARY_METHODS = {operator.neg: "__neg__", operator.pos: "__pos__", operator.invert: "__invert__",
                  abs: "__abs__", operator.abs: "__abs__"}
_SYMBOLS = {operator.lt: "<", operator.le: "<=", operator.gt: ">", operator.ge: ">="}


# Builtins that show an object's identity, where its class keeps these methods of `object`
_IDENTITY_SHOWN = {hash: ("__hash__",), repr: ("__repr__",), str: ("__str__", "__repr__")}


_SPECIAL_METHODS = {
    operator.eq: ("__eq__",), operator.ne: ("__ne__", "__eq__"),
    operator.getitem: ("__getitem__",), operator.setitem: ("__setitem__",),
    operator.delitem: ("__delitem__",), operator.contains: ("__contains__",),
    len: ("__len__",), operator.index: ("__index__",), int: ("__int__", "__index__"),
    float: ("__float__",), bool: ("__bool__",), operator.truth: ("__bool__",),
    hash: ("__hash__",), iter: ("__iter__",), reversed: ("__reversed__",),
    round: ("__round__",), divmod: ("__divmod__", "__rdivmod__"),
    pow: ("__pow__", "__rpow__"), format: ("__format__",), str: ("__str__",),
    repr: ("__repr__",),
}


# Operations on constants that compare items of containers identity first, as Python does
_BY_IDENTITY_FIRST = frozenset([operator.eq, operator.ne, operator.lt, operator.le, operator.gt,
                                operator.ge, operator.contains, min, max, sorted, frozenset])


_SET_METHOD_OF = {operator.or_: "union", operator.and_: "intersection",
                  operator.sub: "difference", operator.xor: "symmetric_difference"}


def _refuse_subclass_operator(tx: Translator, fn: Any, args: list[VariableTracker]) -> None:
    """A break at an operator (or builtin) on a tensor subclass traced as a plain tensor whose
    class implements it itself (`__add__`, `__getitem__`, `__len__`): the graph would apply
    torch.Tensor's."""
    if not any(isinstance(a, TensorVariable) and a.cls is not None for a in args):
        return
    if fn in INPLACE_OPERATORS:
        names = _OPERATOR_METHODS[INPLACE_OPERATORS[fn]]
        names = ("__i" + names[0][2:], *names)
    else:
        names = _OPERATOR_METHODS.get(fn) or _SPECIAL_METHODS.get(fn) or (
            (_UNARY_METHODS[fn],) if fn in _UNARY_METHODS else ())
    for a in args:
        if isinstance(a, TensorVariable) and names:
            refuse_override(tx.output, a.cls, a.source, tuple(names),
                            str(getattr(fn, '__name__', fn)))


def _traced_method(v: VariableTracker, name: str) -> bool:
    """Whether `v` is a user object whose class has special method `name` for the trace to
    follow: one written in Python, or one inherited from `list`."""
    from dynamo.variables.user_objects import UserObjectVariable, builtin_base

    return isinstance(v, UserObjectVariable) and (v.defines_in_python(name) or (
        builtin_base(v.python_type()) is list and hasattr(list, name)))


def _follows_operator(fn: Any, args: list[VariableTracker]) -> bool:
    """Whether `fn(*args)` is an operator that a user object's special method implements, or
    one between user objects (of Python classes over object or list) and constants that no
    special method implements (a TypeError)."""
    from dynamo.variables.user_objects import UserObjectVariable, builtin_base

    def python_object(v: VariableTracker) -> bool:
        return isinstance(v, UserObjectVariable) and builtin_base(v.python_type()) in (
            object, list)

    names = _OPERATOR_METHODS.get(fn)
    return names is not None and len(args) == 2 and (
        _traced_method(args[0], names[0]) or _traced_method(args[1], names[1]) or (
            any(map(python_object, args))
            and all(python_object(a) or isinstance(a, ConstantVariable) for a in args)))


def _user_operator(tx: Translator, fn: Any, a: VariableTracker,
                   b: VariableTracker) -> VariableTracker:
    """`a <op> b` with a user object that defines the operator, as Python does it:
    `a.__op__(b)`, else `b.__rop__(a)` (tried first when b's class is a subclass of a's), and a
    TypeError when both answer NotImplemented."""
    method, reflected = _OPERATOR_METHODS[fn]
    comparison = fn in _SYMBOLS  # reflected even between two objects of one type
    if isinstance(a, TensorVariable) and issubclass(b.python_type(), (int, float, complex)):
        # torch.Tensor's operator takes a number subclass as the number it is, before any
        # reflected method of its class is asked (`x * c` called `c.__rmul__`)
        raise Unsupported(f"{_SYMBOLS.get(fn, method)} of a tensor and {b.words()}, a number "
                          "of a subclass with operators of its own")
    left = (a, method, b) if _traced_method(a, method) else None
    right = (b, reflected, a) if _traced_method(b, reflected) and (
        comparison or a.python_type() is not b.python_type()) else None
    first = right is not None and b.python_type() is not a.python_type() and issubclass(
        b.python_type(), a.python_type())
    for call in (right, left) if first else (left, right):
        if call is not None:
            result = call[0].call_method(tx, call[1], [call[2]], {})
            if not (result.is_constant() and result.as_constant() is NotImplemented):
                return result
    names = f"'{a.python_type().__name__}' and '{b.python_type().__name__}'"
    message = (f"'{_SYMBOLS[fn]}' not supported between instances of {names}" if comparison
               else f"unsupported operand type(s) for {method.strip('_')}: {names}")
    raise python_error(TypeError(message))


def _equal(tx: Translator, a: VariableTracker, b: VariableTracker) -> VariableTracker:
    """`a == b` for objects: the `__eq__` of their class, inlined (the reflected one when it
    answers NotImplemented), else identity, as Python does."""
    from dynamo.variables.functions import BoundMethodVariable, UserMethodVariable
    from dynamo.variables.objects import BaseMethodVariable
    from dynamo.variables.user_objects import UserObjectVariable

    # two bound methods (made anew at each read) are equal when they bind one object to equal
    # functions
    if isinstance(a, UserMethodVariable) and isinstance(b, UserMethodVariable):
        return ConstantVariable(_identical(tx, a.obj, b.obj) and
                                _equal(tx, a.function, b.function).truth(tx))
    if isinstance(a, BoundMethodVariable) and isinstance(b, BoundMethodVariable):
        return ConstantVariable(a.name == b.name and _identical(tx, a.obj, b.obj))
    if isinstance(a, BaseMethodVariable) and isinstance(b, BaseMethodVariable):
        # `o.__setattr__ == o.__setattr__`: one slot of one class, bound to one object (or
        # both unbound: the one descriptor)
        return ConstantVariable(a.base is b.base and a.name == b.name and (
            a.obj is b.obj or None not in (a.obj, b.obj) and _identical(tx, a.obj, b.obj)))
    for x, y in ((a, b), (b, a)):
        if isinstance(x, UserObjectVariable) and x.python_type().__eq__ is not object.__eq__:
            result = x.call_method(tx, "__eq__", [y], {})
            if not (result.is_constant() and result.as_constant() is NotImplemented):
                return result
    return ConstantVariable(_identical(tx, a, b))


def _in(tx: Translator, item: VariableTracker, element: VariableTracker) -> bool:
    """One step of `item in container`: `element is item or element == item`."""
    if item is element:
        return True
    if item.is_constant() and element.is_constant():
        return same_or_equal(tx, element, item)  # (identity first: a NaN found)
    if _graph_value(item) or _graph_value(element):
        other = element if _graph_value(item) else item
        if other.is_constant() and other.as_constant() is None:
            return False  # a tensor is never equal to None
        raise Unsupported("`in` comparing a tensor by value (its truth depends on the data)")
    return BuiltinVariable(operator.eq).call(tx, [element, item], {}).truth(tx)


def _item_equal(tx: Translator, a: VariableTracker, b: VariableTracker) -> bool:
    """`a is b or a == b`: how a sequence's or dict's `==` compares its items."""
    if a is not b and a.is_constant() and b.is_constant():
        return same_or_equal(tx, a, b)
    return a is b or BuiltinVariable(operator.eq).call(tx, [a, b], {}).truth(tx)


def _view_contains(tx: Translator, view: DictViewVariable, item: VariableTracker) -> bool:
    """`item in view`: a key present; a `(key, value)` pair whose value is or equals the
    dict's; a value that is or equals one of the dict's."""
    if view.view == "keys":
        return view.dict.has_key(dict_key(item, tx, view.dict))
    if view.view == "values":
        return any(_in(tx, item, v) for v in view.items(tx))
    pair = _as_sequence(item)
    if pair is None or not issubclass(pair.python_type(), tuple) or len(pair.values) != 2:
        return False
    key, value = pair.values
    k = dict_key(key, tx)
    return view.dict.has_key(k) and _in(tx, value, view.dict.lookup(k))


def _set_like(v: VariableTracker) -> bool:
    """A dict's keys or items view (its values view is not a set)."""
    return isinstance(v, DictViewVariable) and v.view != "values"


def _set_operation(tx: Translator, fn: Any, a: VariableTracker, b: VariableTracker
                   ) -> VariableTracker:
    """`|`, `&`, `-`, `^` (with any iterable) or a comparison (with a set or another set-like
    view) of a dict's keys or items view, as on the sets of their items."""
    if fn in _SET_OPERATORS:
        return SetVariable(fn(constant_set(tx, a), constant_set(tx, b)))
    if not all(_set_like(v) or issubclass(v.python_type(), (set, frozenset)) for v in (a, b)):
        if fn in _ORDERS:
            raise Raised(TypeError(f"'{_ORDERS[fn]}' not supported between instances of "
                                   f"'{a.python_type().__name__}' and "
                                   f"'{b.python_type().__name__}'"),
                         "ordering a dict view and what is not a set (a TypeError)")
        return ConstantVariable(fn is operator.ne)  # never equal to what is not a set
    return ConstantVariable(fn(constant_set(tx, a), constant_set(tx, b)))


def _sequence_arith(tx, fn, a: VariableTracker, b: VariableTracker) -> VariableTracker:
    if fn is operator.add:
        if type(a.python_type()) is not type(b.python_type()) and not (
            issubclass(a.python_type(), tuple) and issubclass(b.python_type(), tuple)
        ):
            raise Unsupported(f"adding {a.python_type().__name__} and {b.python_type().__name__}")
        result = a.items(tx) + b.items(tx)
        if isinstance(a, SizeVariable) or isinstance(b, SizeVariable):
            return SizeVariable(result)  # torch.Size + tuple, and tuple + torch.Size
        return ListVariable(result) if isinstance(a, ListVariable) else TupleVariable(result)
    sequence, count = (a, b) if isinstance(a, SequenceVariable) else (b, a)
    result = sequence.items(tx) * concrete_int(count)
    kind = type(sequence) if isinstance(sequence, (ListVariable, SizeVariable)) else TupleVariable
    return kind(result)


def _select_symbols(tx: Translator, tensor: TensorVariable,
                    key: list[VariableTracker]) -> VariableTracker | None:
    """`x[i]`, `x[:, i]`, `x[..., i, 0]` with symbolic ints `i` (a timestep, a position) among
    basic indices (ints, slices, None, one Ellipsis): the tensor indexed with a full slice at
    each symbol, then each symbol's dim selected, the last first (`__index__` would specialise
    them; torch.compile rewrites them so too). None for other keys."""
    kinds = []
    for item in key:
        value = item.as_constant() if item.is_constant() else item
        if isinstance(item, SymNodeVariable) and item.python_type() is int:
            kinds.append("symbol")
        elif isinstance(item, SliceVariable) or type(value) is int:
            kinds.append("dim")  # an output dim (a slice), or none (an int): only counted here
        elif value is None or value is Ellipsis:
            kinds.append(value)
        else:
            return None
    if "symbol" not in kinds or kinds.count(Ellipsis) > 1:
        return None
    taken = sum(kind in ("symbol", "dim") for kind in kinds)
    selects, dim = [], 0
    for item, kind in zip(key, kinds):
        if kind == "symbol":
            selects.append((dim, item))
        if kind is Ellipsis:
            dim += tensor.fake.dim() - taken
        elif kind in ("symbol", None) or isinstance(item, SliceVariable):
            dim += 1
    full = SliceVariable([ConstantVariable(None), ConstantVariable(None)])
    out = tensor if all(kind == "symbol" for kind in kinds) else tx.output.call_function(
        operator.getitem, [tensor, TupleVariable(
            [full if kind == "symbol" else item for item, kind in zip(key, kinds)])], {})
    for dim, index in reversed(selects):
        out = tx.output.call_function(torch.select, [out, ConstantVariable(dim), index], {})
    return out


def _holds_containers(v: VariableTracker) -> bool:
    """Whether a sequence holds lists, dicts or sets (whose identity its copies must keep)."""
    return isinstance(v, SequenceVariable) and any(
        isinstance(x, (ListVariable, DictVariable, SetVariable)) or _holds_containers(x)
        for x in v.values)


def _as_sequence(v: VariableTracker) -> SequenceVariable | None:
    """`v` as a sequence tracker: a tuple or list constant becomes one of its items."""
    if isinstance(v, SequenceVariable):
        return v
    if v.is_constant() and type(v.as_constant()) in (tuple, list):
        kind = TupleVariable if type(v.as_constant()) is tuple else ListVariable
        return kind([ConstantVariable(x) for x in v.as_constant()])
    return None


def is_builtin_callable(value: Any) -> bool:
    """Whether `value` is handled by BuiltinVariable: a builtin, or from `operator`/`math`."""
    if not callable(value):  # None has no `__name__` either, like a nameless builtin
        return False
    try:
        hash(value)
    except TypeError:
        return False
    module = getattr(value, "__module__", None)
    name = getattr(value, "__name__", "")
    return (isinstance(name, str) and getattr(builtins, name, None) is value
            or module in ("_operator", "operator", "math"))


def _taken(tx: Translator, iterable: VariableTracker) -> Iterator[VariableTracker]:
    """The items of `iterable`, each taken when asked for (`any`/`all` stop early)."""
    iterator = iterate(tx, iterable)
    while (value := iterator.next(tx)) is not None:
        yield value


def store_entries(tx: Translator, entries: dict, obj: VariableTracker) -> None:
    """Store the entries of `obj` into `entries` as `dict(obj)` and `dict.update(obj)` do: a
    dict's all at once (a dict subclass's stored items, where CPython copies them); a
    mapping's (anything with `keys`) keys listed first, then each key's item read and stored
    before the next is read; otherwise its pairs, each stored before the next is taken
    (`one_by_one`), so code making them sees the dict grow."""
    from dynamo.variables.containers import one_by_one
    from dynamo.variables.objects import NNModuleVariable
    from dynamo.variables.user_objects import UserObjectVariable

    if isinstance(obj, UserObjectVariable) and _merged_by_stored_items(obj):
        obj = obj.base_items(tx)
    if isinstance(obj, DictVariable):
        entries.update(obj.entries)
    elif isinstance(obj, UserObjectVariable | NNModuleVariable) and \
            hasattr(obj.python_type(), "keys"):
        # A mapping (ChainMap, UserDict, a Mapping subclass)
        for key in obj.call_method(tx, "keys", [], {}).items(tx):
            entries[dict_key(key, tx)] = obj.call_method(tx, "__getitem__", [key], {})
    else:
        for pair in one_by_one(tx, obj):
            key, value = pair.items(tx)
            entries[dict_key(key, tx)] = value


def _merged_by_stored_items(obj: VariableTracker) -> bool:
    """Whether `dict(obj)` and `dict.update(obj)` copy the items a dict subclass's instance
    stores: CPython does for a dict subclass keeping `dict.__iter__`; any other (one with its
    own `__iter__`, an OrderedDict subclass) it reads by `keys()` and `__getitem__`, which give
    those items too unless the class defines them."""
    from dynamo.variables.user_objects import builtin_base

    cls = obj.python_type()
    base = builtin_base(cls)
    if base is dict and cls.__iter__ is dict.__iter__:
        return True
    return base in (dict, collections.OrderedDict) and not (
        obj.defines_in_python("keys") or obj.defines_in_python("__getitem__"))


def sort_values(tx: Translator, values: list[VariableTracker], key: VariableTracker | None,
                reverse: VariableTracker | None) -> list[VariableTracker]:
    """`sorted(values, key=key, reverse=reverse)`: Python's stable sort, each comparison a
    traced `<` of the keys (constants, or symbolic sizes decided under a guard)."""
    keys = values if key is None or is_none(key) else [key.call(tx, [v], {}) for v in values]

    def less(i: int, j: int) -> int:
        return -1 if BuiltinVariable(operator.lt).call(tx, [keys[i], keys[j]], {}).truth(tx) \
            else 0

    order = list(range(len(values)))
    backwards = reverse is not None and reverse.truth(tx)
    if backwards:  # reversed, sorted, reversed again: equal keys keep their order
        order.reverse()
    order.sort(key=functools.cmp_to_key(less))
    if backwards:
        order.reverse()
    return [values[i] for i in order]


# ----- isinstance, as Python answers it (Objects/abstract.c) ------------------------------------

_TYPE_INSTANCECHECK = type.__instancecheck__
_LEGACY_TENSOR_TYPE = type(torch.FloatTensor)  # `torch.tensortype`
_PROTOCOL_INSTANCECHECK = type(typing.Protocol).__instancecheck__
_OBJECT_CLASS = object.__dict__["__class__"]


def legacy_tensor_instancecheck(cls: Any, obj: VariableTracker) -> bool:
    """`isinstance(x, torch.LongTensor)` (a legacy tensor type, whose metaclass answers in C:
    diffusers' Euler schedulers ask it of the timestep): a tensor of its dtype, on its kind of
    device (`torch.cuda.*`: CUDA, else CPU) and layout (`torch.sparse.*`: sparse), as C's
    `Tensor_instancecheck`; anything that is not a tensor, False. A tensor's dtype, device and
    layout are fixed in the trace (an input's guard checks them)."""
    if isinstance(obj, TensorVariable):
        fake = obj.fake
        return (fake.dtype == cls.dtype
                and fake.device.type == ("cuda" if cls.is_cuda else "cpu")
                and fake.layout == (torch.sparse_coo if cls.is_sparse else torch.strided))
    kind = obj.python_type()
    if isinstance(kind, type) and not issubclass(kind, torch.Tensor):
        return False
    raise Unsupported(f"isinstance() with {cls.__qualname__} of a {kind!r}")


# `abc.get_cache_token()`, asked by each check: a number that changes whenever a class is
# registered with any ABC (`Sequence.register(C)`), after which an ABC may say yes where it said no
_ABC_TOKEN = CallSource(AttrSource(ModuleSource("abc"), "get_cache_token"))


def _guard_abc_registry(tx: Translator, classes: Any) -> None:
    """A no from an ABC (of `classes`) holds until a class is registered with an ABC."""
    if type(classes) is tuple:
        parts = classes
    elif isinstance(classes, types.UnionType):
        parts = classes.__args__
    else:
        parts = (classes,)
    if any(isinstance(c, abc.ABCMeta) for c in parts):
        tx.output.add_guard(Equals(_ABC_TOKEN, abc.get_cache_token()))


def class_override(kind: type) -> Any:
    """What `kind` (or a base) puts in place of `object.__class__` (a property, a class
    attribute), or None when `obj.__class__` is `type(obj)` for its instances."""
    for klass in kind.__mro__:
        member = vars(klass).get("__class__", _OBJECT_CLASS)
        if member is not _OBJECT_CLASS:
            return member
    return None


def class_attribute(tx: Translator, obj: VariableTracker) -> VariableTracker:
    """`obj.__class__` as Python reads it: `type(obj)` unless its class overrides `__class__`
    (a property, traced, or a class attribute: mocks and proxies claim another class so). Not
    asked: a `__getattribute__` of the class's own (Hugging Face's configs map names there;
    none is known to answer `__class__` with another class)."""
    from dynamo.variables.builder import wrap
    from dynamo.variables.user_objects import class_of

    kind = obj.python_type()
    member = class_override(kind)
    if member is None:
        return class_of(obj)
    if isinstance(member, property) and member.fget is not None:
        return wrap(tx, member.fget, None).call(tx, [obj], {})
    if not hasattr(type(member), "__get__"):  # a class attribute: that object itself
        return wrap(tx, member, None)
    raise Unsupported(f"reading __class__ of a {kind.__qualname__}, which is a "
                      f"{type(member).__qualname__}")


def instance_check(tx: Translator, obj: VariableTracker, classes: VariableTracker) -> bool:
    """`isinstance(obj, classes)`: a tuple or `X | Y` is asked item by item; a class whose
    metaclass defines `__instancecheck__` in Python is asked that (inlined); an ABC as
    `ABCMeta` answers (`abc_instancecheck`); any other class by the MRO of `type(obj)` and
    then of `obj.__class__`."""
    from dynamo.variables.builder import wrap_constant_result
    from dynamo.variables.functions import UserFunctionVariable
    from dynamo.variables.objects import UserClassVariable

    cls = classes.as_constant()
    if type(cls) is tuple or isinstance(cls, types.UnionType):
        parts = classes.items(tx) if type(cls) is tuple else \
            [wrap_constant_result(c) for c in cls.__args__]
        return any(instance_check(tx, obj, part) for part in parts)
    if isinstance(cls, type) and _made_by_twin_of(obj, cls):
        return True  # `itertools.count(3)`, `operator.itemgetter(1)`: their twin's generator
        # or function stands for the C object
    kind = obj.python_type()
    if kind is cls:
        return True
    if not isinstance(cls, type):  # `typing.Union[...]` asks about the type, as here
        try:
            return issubclass(kind, cls)
        except TypeError as error:
            raise Unsupported(f"isinstance(): {error}") from None
    check = type(cls).__instancecheck__
    if check is _TYPE_INSTANCECHECK:
        return type_instancecheck(tx, cls, obj)
    if check is abc.ABCMeta.__instancecheck__:
        return abc_instancecheck(tx, cls, obj)
    if check is _PROTOCOL_INSTANCECHECK and getattr(cls, "_is_runtime_protocol", False):
        return protocol_instancecheck(tx, cls, obj)
    if type(cls) is _LEGACY_TENSOR_TYPE:
        return legacy_tensor_instancecheck(cls, obj)
    if not isinstance(check, types.FunctionType):
        raise Unsupported(f"isinstance() with {cls.__qualname__}, whose metaclass "
                          f"{type(cls).__qualname__} answers it in C")
    if not isinstance(classes, UserClassVariable):
        classes = UserClassVariable(cls)
    try:
        return UserFunctionVariable(check).call(tx, [classes, obj], {}).truth(tx)
    except Raised:  # what the check raises, as Python would
        raise
    except Unsupported as error:
        raise Unsupported(f"isinstance() with {cls.__qualname__}: its metaclass's "
                          f"{check.__qualname__} could not be traced ({error.reason})") from None


_signature = functools.cache(inspect.signature)


def _refuse_arguments_python_refuses(fn: Any, handler: Any, tx: Translator,
                                     args: list[VariableTracker],
                                     kwargs: dict[str, VariableTracker]) -> None:
    """A builtin's handler takes the positional arguments the builtin takes: ones it cannot
    bind (`bool(1, 2)`), Python refuses too. The builtin, called with stand-ins for them,
    refuses them before it looks at any (its TypeError, in its words, raised in the trace).
    A keyword the handler names otherwise (`enumerate(iterable=...)`) is no misuse: where the
    builtin's own signature binds the call, it is not traced (a stand-in would fail there).
    Returns where the handler binds them (its TypeError was another)."""
    try:
        _signature(handler.__func__).bind(None, tx, *args, **kwargs)
        return
    except TypeError:
        pass
    with contextlib.suppress(ValueError, TypeError):  # (ValueError: no signature to read)
        _signature(fn).bind(*args, **kwargs)
        raise Unsupported(f"{fn.__name__}() with keywords {sorted(kwargs)}")
    try:
        fn(*[object() for _ in args], **{name: object() for name in kwargs})
    except TypeError as error:
        raise Raised(error.with_traceback(None),
                     f"{fn.__name__}() raised {error_words(error)}") from None
    raise Unsupported(f"{fn.__name__}() with {len(args)} positional arguments")


def _made_by_twin_of(obj: VariableTracker, cls: type) -> bool:
    """Whether `obj` is what the Python twin (`polyfills.py`) of the C class `cls` made: the
    generator of `itertools.count`'s, the function `operator.itemgetter`'s returns."""
    from dynamo.polyfills import POLYFILLS
    from dynamo.polyfills import __file__ as polyfills_file

    try:
        twin = POLYFILLS.get(cls)
    except TypeError:
        return False
    code = getattr(getattr(obj, "frame", None), "code", None) or getattr(obj, "code", None)
    if twin is None or not isinstance(code, types.CodeType) or \
            code.co_filename != polyfills_file:
        return False
    return code.co_qualname in (twin.__name__, f"_{twin.__name__}") or \
        code.co_qualname.startswith(f"{twin.__name__}.<locals>.")


def protocol_instancecheck(tx: Translator, cls: type, obj: VariableTracker) -> bool:
    """`isinstance(obj, P)` for a `runtime_checkable` Protocol, as typing answers it: a
    subclass of `P` is one; otherwise `obj` must have each of P's members, and a method among
    them must not be None on `obj`. `hasattr` is traced (its answers guarded), the members
    are the class's, read for real."""
    if type_instancecheck(tx, cls, obj):  # (a data protocol refuses `issubclass`)
        return True
    members = getattr(cls, "__protocol_attrs__", None)  # Python 3.12
    if members is None:
        members = typing._get_protocol_attrs(cls)
    for name in sorted(members):
        found = BuiltinVariable(hasattr).call(tx, [obj, ConstantVariable(name)], {})
        if not found.as_constant():
            return False
        if callable(getattr(cls, name, None)) and is_none(obj.getattr(tx, name)):
            return False
    return True


def type_instancecheck(tx: Translator, cls: type, obj: VariableTracker) -> bool:
    """`type.__instancecheck__(cls, obj)`: `cls` in the MRO of `type(obj)`, or of
    `obj.__class__` when that is another class."""
    kind = obj.python_type()
    if cls in kind.__mro__:
        return True
    try:
        claimed = class_attribute(tx, obj).as_constant()
    except Raised as error:  # a `__class__` property that raises AttributeError: no class
        if isinstance(error.exception, AttributeError):
            return False
        raise
    return claimed is not kind and isinstance(claimed, type) and cls in claimed.__mro__


class InstanceCheckVariable(VariableTracker):
    """`super().__instancecheck__` inside a metaclass's own `__instancecheck__` (torch's
    `_ParameterMeta` ends so), when the next in line is `type`'s or `ABCMeta`'s: called with
    an object, that check's answer about it, for the class `cls`."""

    def __init__(self, cls: Any, check: Any) -> None:
        self.cls = cls
        self.check = check

    def call(self, tx: Translator, args: list[VariableTracker],
             kwargs: dict[str, VariableTracker]) -> VariableTracker:
        if len(args) != 1 or kwargs:
            raise Unsupported("super().__instancecheck__() with other than one argument")
        if self.check is abc.ABCMeta.__instancecheck__:
            return ConstantVariable(abc_instancecheck(tx, self.cls, args[0]))
        return ConstantVariable(type_instancecheck(tx, self.cls, args[0]))

    @staticmethod
    def of_super(cls: Any, bound: VariableTracker) -> InstanceCheckVariable | None:
        """`super(cls, bound).__instancecheck__` when `bound` is a class and the check found
        after `cls` in its metaclass's MRO is `type`'s or `ABCMeta`'s; else None."""
        from dynamo.variables.objects import UserClassVariable

        if not isinstance(bound, UserClassVariable):
            return None
        mro = type(bound.cls).__mro__
        if cls not in mro:
            return None
        for klass in mro[mro.index(cls) + 1:]:
            check = vars(klass).get("__instancecheck__")
            if check is not None:
                known = check is _TYPE_INSTANCECHECK or check is abc.ABCMeta.__instancecheck__
                return InstanceCheckVariable(bound.cls, check) if known else None
        return None


def abc_instancecheck(tx: Translator, cls: Any, obj: VariableTracker) -> bool:
    """`ABCMeta.__instancecheck__(cls, obj)`: the ABC asked about `obj.__class__` and
    `type(obj)` (run for real: on classes, with the ABC's own cache); a no is guarded by the
    registry of ABCs (a later `register` may change it)."""
    kind = obj.python_type()
    claimed = class_attribute(tx, obj).as_constant()
    try:
        answer = issubclass(claimed, cls) or (claimed is not kind and issubclass(kind, cls))
    except TypeError as error:
        raise Unsupported(f"isinstance(): {error}") from None
    if not answer:
        _guard_abc_registry(tx, cls)
    return answer


# math functions torch has SymFloat-aware twins of (`torch._sym_cos`, ...), and fakecore
# (`sym_log`, `sym_exp`)
_SYM_MATH = {getattr(math, n): getattr(torch, f"_sym_{n}") for n in (
    "sqrt", "cos", "sin", "tan", "cosh", "sinh", "tanh", "acos", "asin", "atan", "log2")}
_SYM_MATH.update({math.log: sym_log, math.exp: sym_exp})  # (fakecore's: torch has none)
