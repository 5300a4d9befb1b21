"""fakecore: fake tensors and symbolic shapes.

Run PyTorch programs on tensors that have every piece of metadata and no data, with sizes that
may be symbols. The layers above use it to trace programs without computing anything.
"""

from fakecore.conversion import dense_dims
from fakecore.data_dependent import slice_of_one_broadcast_sizes
from fakecore.errors import DataDependentError, MixedRealFakeError, UnsupportedFakeOpError
from fakecore.fake_mode import FakeTensorMode, written_tensors
from fakecore.fake_tensor import FakeTensor
from fakecore.overlap import may_overlap, strides_overlap
from fakecore.shape_env import ShapeEnv, ShapeGuard, SizeOrigin
from fakecore.sym_functions import FloatTrueDiv, FloorDiv, PythonMod
from fakecore.sym_node import SymNode, observe_sym_ops, sym_exp, sym_log
from fakecore.value_ranges import ValueRange

__all__ = [
    "DataDependentError",
    "FakeTensor",
    "FakeTensorMode",
    "FloatTrueDiv",
    "FloorDiv",
    "MixedRealFakeError",
    "PythonMod",
    "ShapeEnv",
    "ShapeGuard",
    "SizeOrigin",
    "SymNode",
    "UnsupportedFakeOpError",
    "ValueRange",
    "dense_dims",
    "may_overlap",
    "strides_overlap",
    "written_tensors",
    "observe_sym_ops",
    "slice_of_one_broadcast_sizes",
    "sym_exp",
    "sym_log",
]
