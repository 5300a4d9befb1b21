"""`torch.hash_tensor` as an xor reduction of the elements' 64-bit patterns.

Eager's hash (mode 0, the only one) widens each element to 64 bits, a float to float64 and an
integer or bool to int64, and xors the bit patterns over the reduced dims into a uint64. A
kernel does the same: the bits of a float64 as they are, of a float32 converted to float64
(exact, subnormals too) except a NaN, whose pattern a conversion need not keep: there it is
built as the CPU's conversion makes it, quiet, with the same sign and the payload shifted up
by the 29 bits float64's mantissa has more. Half floats are refused (kernels read them as
float32, through a conversion that may not keep a NaN's payload either), and so are the
dtypes and modes eager refuses and a reduction over no element, on which eager raises.
"""

from __future__ import annotations

import sympy
import torch

from . import triton_codegen
from .ir import LoweringError, Pointwise, Value, constant, loader, op, to_dtype
from .lowering import RESULT_ONLY_DTYPES, aten, reduction, register

triton_codegen.OPS.update({
    "float64_bits": "{0}.to(tl.int64, bitcast=True)",
    "float32_bits": "{0}.to(tl.int32, bitcast=True)",
})
triton_codegen.COMBINE["xor_sum"] = "{0} ^ {1}"
triton_codegen.FINISH["xor_sum"] = "tl.xor_sum({0}, 1)"
RESULT_ONLY_DTYPES[aten.hash_tensor.default] = torch.uint64

INTEGERS = (torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64)
QUIET_NAN = 0x7FF8 << 48  # float64's exponent of a NaN and its quiet bit
SIGN = -(1 << 63)


def _int64(value: int) -> Value:
    return constant(value, torch.int64)


def _widened_bits(v: Value) -> Value:
    """The bit pattern (an int64) of `v` widened to 64 bits as eager's hash widens it."""
    if v.dtype == torch.float64:
        return op("float64_bits", v, dtype=torch.int64)
    if v.dtype in INTEGERS:
        return to_dtype(v, torch.int64)
    widened = op("float64_bits", to_dtype(v, torch.float64), dtype=torch.int64)
    bits = to_dtype(op("float32_bits", v, dtype=torch.int32), torch.int64)  # sign-extended
    payload = op("mul", op("bitwise_and", bits, _int64(0x7FFFFF)), _int64(1 << 29))
    negative = op("lt", bits, _int64(0), dtype=torch.bool)
    nan = op("bitwise_or", Value("where", (negative, _int64(SIGN | QUIET_NAN),
                                           _int64(QUIET_NAN)), torch.int64), payload)
    return Value("where", (op("isnan", v, dtype=torch.bool), nan, widened), torch.int64)


@register(aten.hash_tensor.default)
def _hash_tensor(lower, node, x, dim=(), keepdim=False, *, mode=0):
    if mode != 0:
        raise LoweringError(f"hash_tensor mode {mode} (eager knows mode 0 only)")
    if x.dtype not in (torch.float32, torch.float64, *INTEGERS):
        raise LoweringError(f"hash_tensor of {x.dtype}")
    dims = [dim] if isinstance(dim, int) else list(dim)
    reduced = [x.size[d % len(x.size)] for d in dims] if dims and x.size else x.size
    if not all(sympy.sympify(s).is_positive for s in reduced):
        raise LoweringError("hash_tensor over a dim that may be empty (eager raises)")
    load = loader(x)
    bits = Pointwise(x.size, torch.int64, x.device, lambda idx: _widened_bits(load(idx)))
    return reduction(lower, bits, dims or None, keepdim, "xor_sum", torch.uint64)

