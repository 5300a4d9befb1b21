"""Reading and assembling code objects on this Python (3.11 or 3.12)."""

from __future__ import annotations

import types

import pytest
import torch
from bytecode import BinaryOp, Instr
from corpus import PROGRAMS

from dynamo.bytecode import assemble, editable, instructions


def _rebuilt(fn, code):
    rebuilt = types.FunctionType(code, fn.__globals__, fn.__name__, fn.__defaults__,
                                 fn.__closure__)
    rebuilt.__kwdefaults__ = fn.__kwdefaults__
    return rebuilt


@pytest.mark.parametrize("name, fn, make, graphs", PROGRAMS[:60], ids=[p[0] for p in PROGRAMS[:60]])
def test_round_trip_computes_the_same(name, fn, make, graphs) -> None:
    code = assemble(editable(fn.__code__))
    assert code.co_stacksize >= fn.__code__.co_stacksize - 1
    assert {line for *_, line in code.co_lines()} == {line for *_, line in fn.__code__.co_lines()}
    args = make(0)
    torch.manual_seed(0)
    expected = fn(*args)
    torch.manual_seed(0)
    torch.testing.assert_close(_rebuilt(fn, code)(*args), expected)


def test_an_edited_function_keeps_its_exception_table() -> None:
    def f(x):
        try:
            y = 1 / x
        except ZeroDivisionError:
            y = -1
        return y

    instrs = editable(f.__code__)
    start = next(i for i, ins in enumerate(instrs)
                 if isinstance(ins, Instr) and ins.name == "RESUME") + 1
    instrs[start:start] = [Instr("LOAD_FAST", "x"), Instr("LOAD_CONST", 1),
                           Instr("BINARY_OP", BinaryOp.ADD), Instr("STORE_FAST", "x")]
    g = _rebuilt(f, assemble(instrs))  # x + 1 first: -1 now divides by zero, and is caught
    assert (g(0), g(1), g(-1)) == (1.0, 0.5, -1)


def test_extended_args_in_a_large_function() -> None:
    body = " + ".join(f"{i}.5" for i in range(300))
    namespace: dict = {}
    exec(f"def big(x):\n    return x + {body}\n", namespace)
    big = namespace["big"]
    instrs = editable(big.__code__)
    instrs.insert(1, Instr("NOP"))
    assert _rebuilt(big, assemble(instrs))(1) == big(1)
    reads = instructions(big.__code__)
    assert any(ins.opname == "LOAD_CONST" and ins.arg > 255 for ins in reads)


def test_read_instructions_have_jump_targets() -> None:
    def f(x):
        total = 0
        for i in range(x):
            if i % 2:
                total += i
        return total

    reads = instructions(f.__code__)
    jumps = [ins for ins in reads if ins.target is not None]
    assert jumps and all(0 <= ins.target < len(reads) for ins in jumps)
    assert not any("FORWARD_IF" in ins.opname or "BACKWARD_IF" in ins.opname for ins in reads)
