"""Guard check time: a compiled GuardSet against PyTorch's C++ guard manager.

The peer is what `torch.compile(fn, backend="eager")` builds: after one call, the cache entry's
guard manager, timed on the same frame locals. Ours guards the same things (tensor metadata of
every tensor, constant values, module training flags, global state) with one generated Python
function. Three frames: two 64x64 tensors; a module whose 200 parameters are reached through
its attributes; fifty Python ints.
"""

from __future__ import annotations

import sys
import timeit
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))


class _Layers(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layers = torch.nn.ModuleList(torch.nn.Linear(4, 4) for _ in range(100))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def _peer_check(fn, code, args: tuple, f_locals: dict):
    from torch._dynamo.eval_frame import _debug_get_cache_entry_list

    torch._dynamo.reset()
    torch.compile(fn, backend="eager")(*args)
    manager = _debug_get_cache_entry_list(code)[0].guard_manager
    if not manager.check(f_locals):
        raise RuntimeError("the peer's guards fail on the frame they were built for")
    return lambda: manager.check(f_locals)


def _microseconds(check) -> float:
    number = 20000
    return min(timeit.repeat(check, number=number, repeat=7)) / number * 1e6


def _two_tensors():
    from guards import GlobalState, GuardSet, LocalSource, TensorMatch

    def f(x, y):
        return x + y

    x, y = torch.randn(64, 64), torch.randn(64, 64)
    frame = {"x": x, "y": y}
    ours = GuardSet([TensorMatch.of(LocalSource("x"), x), TensorMatch.of(LocalSource("y"), y),
                     GlobalState()])
    return ours, frame, _peer_check(f, f.__code__, (x, y), frame)


def _module_parameters():
    from guards import (
        GlobalState,
        GuardSet,
        LocalSource,
        ModuleTraining,
        ParameterSource,
        SubmoduleSource,
        TensorMatch,
    )

    model = _Layers()
    x = torch.randn(2, 4)
    frame = {"self": model, "x": x}
    layers = SubmoduleSource(LocalSource("self"), "layers")
    ours = GuardSet([TensorMatch.of(LocalSource("x"), x), GlobalState()])
    for i, layer in enumerate(model.layers):
        source = SubmoduleSource(layers, str(i))
        ours.add(ModuleTraining(source, layer.training))
        for name, p in layer.named_parameters():
            ours.add(TensorMatch.of(ParameterSource(source, name), p))
    peer = _peer_check(model, _Layers.forward.__code__, (x,), frame)
    return ours, frame, peer


def _constants():
    from guards import Equals, GlobalState, GuardSet, LocalSource, TensorMatch

    names = [f"a{i}" for i in range(50)]
    namespace: dict = {}
    # A frame with no tensor has nothing to compile: the ints scale one tensor.
    exec(f"def f(x, {', '.join(names)}):\n    return x * ({' + '.join(names)})\n", namespace)
    f = namespace["f"]
    x = torch.randn(4)
    frame = {"x": x, **{n: i for i, n in enumerate(names)}}
    ours = GuardSet([Equals(LocalSource(n), frame[n]) for n in names]
                    + [TensorMatch.of(LocalSource("x"), x), GlobalState()])
    return ours, frame, _peer_check(f, f.__code__, (x, *range(50)), frame)


def run() -> str:
    lines = [
        "## guards: checking a frame's guards",
        "",
        "Microseconds per check (best of 7 runs of 20000), ours (one generated Python function) "
        "against the guard manager `torch.compile(fn, backend=\"eager\")` builds (C++).",
        "",
        "| frame | ours µs | peer µs | ours / peer | goal |",
        "| --- | --- | --- | --- | --- |",
    ]
    for label, make, goal in (
        ("two 64×64 tensors", _two_tensors, "within 2×"),
        ("200 parameters through module attributes", _module_parameters, "≤ 1×"),
        ("50 Python ints (and one tensor)", _constants, "≤ 1×"),
    ):
        ours, frame, peer = make()
        check, f_globals = ours.check, {}  # (the frame's globals exist already: not timed)
        if not check(frame, f_globals):
            raise RuntimeError(f"our guards fail on the frame they were built for: {label}")
        o = _microseconds(lambda: check(frame, f_globals))  # noqa: B023
        p = _microseconds(peer)
        lines.append(f"| {label} | {o:.2f} | {p:.2f} | {o / p:.2f} | {goal} |")
    return "\n".join(lines) + "\n"
