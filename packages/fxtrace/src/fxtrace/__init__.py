"""fxtrace: dispatch-level graph capture.

`make_fx(fn, tracing_mode)(*args)` runs `fn` under a dispatch mode that records every aten op
into a `torch.fx.GraphModule`, on real, fake or symbolic tensors.
"""

from fxtrace.decompositions import core_aten_decompositions
from fxtrace.make_fx import make_fx
from fxtrace.proxy_mode import ProxyMode, opaque_call

__all__ = ["ProxyMode", "core_aten_decompositions", "make_fx", "opaque_call"]
