"""What generated wrappers call at run time: kernel launches with block sizes, and seeds.

A `Launcher` wraps one jitted kernel. It computes the grid from `xnumel` and picks block sizes:
on a GPU (with `config.autotune`) it times a few candidate configurations once per size class
(powers of two of `xnumel`, `rnumel`) and keeps the fastest, remembered on disk by kernel source
hash; elsewhere (Triton's CPU interpreter) it takes one default.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from . import config
from .triton_helpers import INDEX_ERROR

# Rows up to this long are reduced in one block (32 fp32 values a thread at 8 warps): a looped
# kernel reads the row once per reduction and again for its epilogue.
PERSISTENT_RNUMEL = 8192
LOOPED_TOO_RNUMEL = 2048  # over this, a looped kernel is generated too, and the tuner picks

_TUNING_LOCK = threading.Lock()
# Triton's interpreter patches `triton.language` while a kernel runs: one kernel at a time.
_INTERPRETER_LOCK = threading.Lock()


def _next_pow2(n: int) -> int:
    return 1 << max(int(n) - 1, 0).bit_length()


def with_strides(t: torch.Tensor | None, size: tuple, stride: tuple, dtype: torch.dtype,
                 what: str) -> torch.Tensor | None:
    """`t`, or a copy of it with `stride`, which the code reading it assumes (None, an output
    a library call leaves out, stays None). A result of other sizes or dtype than the trace saw
    (a custom op whose fake kernel disagrees with its kernel, or was registered again after
    compiling) is an error: the kernels reading it would read past its end or misread it."""
    if t is not None and (t.shape != size or t.dtype != dtype):
        raise RuntimeError(
            f"{what} returned a tensor of sizes {tuple(t.shape)} and dtype {t.dtype} where "
            f"the trace (its fake kernel) gave {tuple(size)} and {dtype}")
    if t is None or t.numel() == 0 or all(
            a == b for a, b, n in zip(t.stride(), stride, size) if n != 1):
        return t  # strides of size-1 dims address nothing (and may make the layout overlap)
    return torch.empty_strided(size, stride, dtype=t.dtype, device=t.device).copy_(t)


def candidates(kind: str, xnumel: int, rnumel: int, looped_too: bool = False) -> list[dict]:
    """The configurations a kernel of `kind` ("pointwise", "persistent", "looped") may be
    launched with, the untuned default first; `looped_too`: a persistent kernel's looped
    alternative's too (marked "looped"). Code generation reads them as well: a mask whose every
    block fits its static size evenly is left out."""
    if kind == "pointwise":
        return [{"XBLOCK": b, "num_warps": w} for b, w in
                ((1024, 4), (512, 4), (256, 4), (2048, 8), (128, 4))]
    out = []
    # a persistent kernel with a looped twin: rows longer than a persistent block at launch (a
    # symbolic row traced short) are looped; only rows past 2048 weigh the twin
    if kind == "persistent" and looped_too and _next_pow2(rnumel) > PERSISTENT_RNUMEL:
        kind = "looped"
    elif kind == "persistent" and _next_pow2(rnumel) <= LOOPED_TOO_RNUMEL:
        looped_too = False
    if kind == "persistent":
        r = _next_pow2(rnumel)
        for elems, warps in ((1024, 4), (4096, 8), (2048, 4), (8192, 8), (8192, 16)):
            x = max(1, min(elems // r, _next_pow2(xnumel)))
            cfg = {"XBLOCK": x, "RBLOCK": r, "num_warps": warps}
            out += [cfg] if cfg not in out else []
        if not looped_too:
            return out
    for elems, r, warps in ((2048, 2048, 8), (1024, 1024, 4), (2048, 512, 4), (2048, 256, 4),
                            (4096, 4096, 16)):
        r = min(r, _next_pow2(rnumel))
        cfg = {"XBLOCK": max(1, min(elems // r, _next_pow2(xnumel))), "RBLOCK": r,
               "num_warps": warps}
        out.append(cfg | {"looped": True} if looped_too else cfg)
    return out


class Launcher:
    """Launches `fn` (a jitted kernel) of kind "pointwise", "persistent" or "looped".

    A persistent kernel over long rows may come with `looped`, the same kernel looping over the
    row: which is faster depends on the kernel and the device, so the tuner times both kinds'
    candidates; untuned, `fn` runs."""

    def __init__(self, fn: Any, kind: str, source_hash: str, mutates: bool,
                 looped: Any = None) -> None:
        self.fn = fn
        self.kind = kind
        self.source_hash = source_hash
        self.mutates = mutates
        self.looped = looped
        # (size classes, on a GPU) -> the launch of the configuration chosen for them
        self.launches: dict[tuple, Callable[[tuple, int, int], None]] = {}

    def candidates(self, xnumel: int, rnumel: int) -> list[dict]:
        return candidates(self.kind, xnumel, rnumel, looped_too=self.looped is not None)

    def __call__(self, *args: Any, xnumel: int, rnumel: int = 1) -> None:
        xnumel, rnumel = int(xnumel), int(rnumel)
        if xnumel == 0:
            return
        on_gpu = _on_gpu(args)
        key = (_next_pow2(xnumel), _next_pow2(rnumel), on_gpu)
        launch = self.launches.get(key)
        if launch is None:
            launch = self.launches[key] = self._prepare(
                self._choose(key, args, xnumel, rnumel, on_gpu), on_gpu)
        launch(args, xnumel, rnumel)

    def _prepare(self, cfg: dict, on_gpu: bool) -> Callable[[tuple, int, int], None]:
        """A launch of configuration `cfg`, its block sizes and options worked out once: it runs
        on every call of the kernel, so it does no more than it must."""
        fn = self.looped if cfg.get("looped") else self.fn
        options = {k: v for k, v in cfg.items() if k not in ("num_warps", "looped")}
        if on_gpu:
            options["num_warps"] = cfg["num_warps"]
            if config.index_asserts:
                options["debug"] = True  # keeps the kernel's bounds checks (see triton_helpers)
        xblock, pointwise = cfg["XBLOCK"], self.kind == "pointwise"

        def launch(args: tuple, xnumel: int, rnumel: int) -> None:
            grid = ((xnumel + xblock - 1) // xblock,)
            sizes = (xnumel,) if pointwise else (xnumel, rnumel)
            try:
                if on_gpu:
                    fn.run(*args, *sizes, grid=grid, warmup=False, **options)
                else:  # Triton's interpreter, in numpy: quiet about lanes that divide by zero
                    # (masked ones, or real ones: eager does not warn)
                    # (the collection after it runs outside the lock: a finalizer it runs may
                    # call a compiled graph, whose launch takes the lock)
                    with _collect_cycles():
                        with _INTERPRETER_LOCK, _quiet_numpy(), _gc_paused():
                            fn.run(*args, *sizes, grid=grid, warmup=False, **options)
            except Exception as e:
                # Triton's interpreter raises a failed bounds check as an error of its own.
                if INDEX_ERROR in str(e):
                    raise IndexError(f"{INDEX_ERROR}: an index tensor read by generated kernel "
                                     f"{getattr(fn, '__name__', '')} holds a value outside the "
                                     "dim it indexes") from None
                raise
        return launch

    def _choose(self, key: tuple, args: tuple, xnumel: int, rnumel: int, on_gpu: bool) -> dict:
        candidates = self.candidates(xnumel, rnumel)
        if not (on_gpu and config.autotune and not self.mutates):
            return candidates[0]
        stored = _tuning_file()
        name = f"{self.source_hash}:{key[0]}:{key[1]}"
        with _TUNING_LOCK:
            known = _read_tuning(stored)
        if known.get(name) in candidates:  # (one from another version's candidates: timed anew)
            return known[name]
        from triton.testing import do_bench

        timings, error = [], None
        for cfg in candidates:
            try:
                launch = self._prepare(cfg, on_gpu)
                timings.append((do_bench(lambda run=launch: run(args, xnumel, rnumel),
                                         warmup=5, rep=20), cfg))
            except Exception as e:  # a configuration the device cannot run (too many registers)
                error = e
        if not timings:  # the kernel itself fails: say why
            raise error
        best = min(timings, key=lambda t: t[0])[1]
        with _TUNING_LOCK:
            known = _read_tuning(stored)
            known[name] = best
            stored.parent.mkdir(parents=True, exist_ok=True)
            tmp = stored.with_suffix(f".{os.getpid()}.tmp")  # other processes may be reading
            tmp.write_text(json.dumps(known))
            tmp.replace(stored)
        return best


@contextlib.contextmanager
def _collect_cycles() -> Any:
    """Frees the reference cycles a launch in Triton's interpreter leaves: its copies of the
    arguments to the host are made by recursive closures (`GridExecutor._init_args_hst`,
    `_restore_args_dev`) whose dicts hold every argument's storage, so each buffer a kernel
    touched (outputs, temporaries) lived until the collector's next pass, not its last use (a
    loop with a graph break kept one buffer per iteration). With the collector paused while
    the kernel runs, the cycles stay in the youngest generation, which a cheap pass frees."""
    try:
        yield
    finally:
        gc.collect(0)


@contextlib.contextmanager
def _gc_paused() -> Any:
    """The collector paused (see `_collect_cycles`); taken under the interpreter's lock, so
    threads launching kernels do not see each other's pause as the user's setting."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _quiet_numpy() -> Any:
    import numpy  # Triton's interpreter runs on it

    return numpy.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore")


def _on_gpu(args: tuple) -> bool:
    return any(isinstance(a, torch.Tensor) and not a.is_cpu for a in args)


def _tuning_file():
    return Path(config.cache_dir) / "tuning.json"


def _read_tuning(stored: Path) -> dict:
    """The tuning results stored, or none where the file is missing or damaged (it is only
    ever replaced whole, but a crash may leave it empty): they are timed anew."""
    try:
        known = json.loads(stored.read_text())
    except (OSError, ValueError):
        return {}
    return known if isinstance(known, dict) else {}


def seeds(count: int) -> list[int]:
    """Seeds for the graph's random ops, drawn from torch's generator (so manual_seed applies)."""
    return torch.randint(0, 2**31 - 1, (count,)).tolist()
