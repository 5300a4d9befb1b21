"""Counters of what compilation produced, for tests and curious users.

    graphs        graphs compiled to generated code
    eager_graphs  graphs run as their aten graph instead (CPU without the interpreter, training)
    kernels       Triton kernels generated
    fused_buffers computed buffers that share a kernel with another buffer
    lowered_ops   aten ops lowered to loop IR (inlined into kernels)
    extern_calls  library calls chosen on purpose (matmul, convolution, attention)
    fallbacks     ops with no lowering, run by aten
"""

from collections import Counter

counters: Counter = Counter()


def reset() -> None:
    counters.clear()
