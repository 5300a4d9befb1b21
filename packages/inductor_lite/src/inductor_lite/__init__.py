"""inductor_lite: a Triton code generator backend for FX graphs.

    compiled = inductor_lite.compile_fx(gm, example_inputs)   # a torch.compile-style backend

Also reachable by name, as `backend="inductor_lite"`, from PyTorch's own compile frontend and
from `dynamo.compile` (entry points). `config` holds the options,
`metrics.counters` what was generated.
"""

from . import config, metrics
from .compile_fx import compile_fx
from .metrics import counters

__all__ = ["compile_fx", "config", "counters", "metrics"]
