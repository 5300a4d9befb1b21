"""guards: state what a compiled artifact assumes about its inputs, and check it fast.

Sources name where values live (`L['x'].weight`); guards state facts about them (type,
identity, equality, tensor metadata, symbolic sizes, global state); a GuardSet compiles its
guards into one generated check function and explains failures in words; a GuardedCache
memoizes values under guard sets. Plain guards need only torch.
"""

from guards.cache import CacheLimitExceeded, GuardedCache
from guards.guard_kinds import (
    Alive,
    ClassLacks,
    DictContains,
    DictKeys,
    DistinctObjects,
    Equals,
    FiniteFloat,
    GlobalState,
    Guard,
    Identity,
    Length,
    ModuleTraining,
    PlainSubclassLacks,
    SameObject,
    TensorMatch,
    TypeMatch,
)
from guards.guard_set import GuardSet
from guards.shape import ShapeGuard, shape_guards
from guards.sources import (
    AttrSource,
    ChainedSource,
    ClosureCellSource,
    DefaultSource,
    DictKeySource,
    GetItemSource,
    GlobalSource,
    LocalSource,
    ParameterSource,
    Source,
    SubmoduleSource,
    TensorPropertySource,
    TypeSource,
    WeakKey,
    by_identity,
    hold,
    key_expr,
    key_names,
    weak_items,
)

__all__ = [
    "Alive", "AttrSource", "CacheLimitExceeded", "ChainedSource", "ClassLacks", "ClosureCellSource",
    "DefaultSource", "DictContains", "DictKeySource", "DictKeys", "DistinctObjects", "Equals", "FiniteFloat", "GetItemSource",
    "GlobalSource", "GlobalState", "Guard", "GuardSet", "GuardedCache", "Identity", "Length", "LocalSource",
    "ModuleTraining", "ParameterSource", "PlainSubclassLacks", "SameObject", "ShapeGuard", "Source", "SubmoduleSource",
    "TensorMatch", "TensorPropertySource", "TypeMatch", "TypeSource", "WeakKey", "by_identity", "hold", "key_expr",
    "key_names", "shape_guards", "weak_items",
]
