"""inductor_lite against eager and Inductor on a GPU: fused memory-bound kernels and the GPT.

    python benchmarks/run.py --only inductor_lite     the GPU run; writes docs/performance.md
    INDUCTOR_LITE_TRITON_CPU=1 TRITON_INTERPRET=1 python benchmarks/inductor_lite_bench.py --self-check
                                                      tiny sizes on CPU, kernels through Triton's
                                                      interpreter: checks every case's results and
                                                      the report's code path; writes nothing

Each case runs eagerly, through `torch.compile(backend="inductor")` (the peer) and through
`torch.compile(backend="inductor_lite")`, in the same process, under `no_grad`, float32. Each is
timed two ways, both medians of `triton.testing.do_bench` (which flushes the L2 cache before each
run): its device time, a CUDA graph of one call replayed (what the kernels cost, free of the host's
launch work), and its whole call (the host's work included: guards, wrappers, launches). The goals
are read on device time; the whole call is reported beside it, because at ~70 µs a kernel costs
about what `torch.compile`'s host path does, and host time the L2 flush does not hide lands in
the whole-call figure (it moved one kernel's time by 20 µs between runs). Achieved
bandwidth counts the op's minimal traffic (each input read once, each output written once) over
the device time, and is shown as a share of the device's copy bandwidth, measured in the same run
by copying a 1 GiB tensor. A compiled result that differs from eager's is reported, never timed.
Without a CUDA device nothing is measured and docs/performance.md keeps the last GPU run's
section (its stamp says when and where). On a GPU machine: benchmarks/gpu_check.sh.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

if "--self-check" in sys.argv:  # the interpreter must be chosen before triton is imported
    os.environ.setdefault("INDUCTOR_LITE_TRITON_CPU", "1")
    os.environ.setdefault("TRITON_INTERPRET", "1")

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from models import GPT  # noqa: E402
from timing import median_seconds  # noqa: E402

GOAL_EAGER = 1.5  # speed-up over eager on each fused memory-bound kernel
F32 = 4  # bytes


class Case(NamedTuple):  # not a dataclass: report.py loads this file outside sys.modules
    label: str
    fn: Callable
    inputs: tuple
    bytes: int | None  # minimal traffic; None where the case is not memory-bound


def softmax(x):
    return x.softmax(-1)


def layer_norm(x, w, b):
    return F.layer_norm(x, x.shape[-1:], w, b)


def rms_norm(x, w):
    return F.rms_norm(x, x.shape[-1:], w, eps=1e-6)


def bias_gelu(y, b):
    return F.gelu(y + b)


def linear_gelu(x, w, b):
    return F.gelu(x @ w + b)


def pointwise_chain(x, y):  # ten ops
    z = torch.sin(x * 2.0 + 1.0) * y
    z = torch.tanh(z - 0.5) + x
    return torch.sigmoid(torch.relu(z) * 0.5 + y)


def cases(device: str, tiny: bool) -> list[Case]:
    def randn(*shape):
        return torch.randn(*shape, device=device)

    rows, cols = (16, 64) if tiny else (8192, 4096)
    m, k, n = (16, 32, 64) if tiny else (8192, 1024, 4096)
    gpt_sizes = (dict(vocab=64, d_model=32, n_heads=2, n_layers=1, max_len=16), (2, 8)) if tiny \
        else (dict(vocab=8192, d_model=512, n_heads=8, n_layers=6, max_len=1024), (8, 512))
    numel = rows * cols
    gpt = GPT(**gpt_sizes[0]).eval().requires_grad_(False).to(device)
    tokens = torch.randint(0, gpt_sizes[0]["vocab"], gpt_sizes[1], device=device)
    d = gpt_sizes[0]["d_model"]
    return [
        Case(f"softmax ({rows}, {cols})", softmax, (randn(rows, cols),), 2 * numel * F32),
        Case(f"layer norm ({rows}, {cols})", layer_norm, (randn(rows, cols), randn(cols),
                                                          randn(cols)), (2 * numel + 2 * cols) * F32),
        Case(f"RMS norm ({rows}, {cols})", rms_norm, (randn(rows, cols), randn(cols)),
             (2 * numel + cols) * F32),
        Case(f"bias + GELU on ({m}, {n})", bias_gelu, (randn(m, n), randn(n)),
             (2 * m * n + n) * F32),
        Case(f"gelu(x @ w + b), ({m}, {k}) @ ({k}, {n}), mm included", linear_gelu,
             (randn(m, k), randn(k, n) / math.sqrt(k), randn(n)), None),
        Case(f"ten-op pointwise chain ({rows}, {cols})", pointwise_chain,
             (randn(rows, cols), randn(rows, cols)), 3 * numel * F32),
        Case(f"GPT forward ({gpt_sizes[0]['n_layers']} blocks, d={d}), tokens {gpt_sizes[1]}",
             gpt, (tokens,), None),
    ]


def timer(device: str) -> Callable[[Callable], float]:
    """Seconds per call: the device's median on a GPU; on CPU (the self-check) a rough median."""
    if device == "cuda":
        import triton.testing

        return lambda fn: triton.testing.do_bench(fn, warmup=25, rep=200,
                                                  return_mode="median") * 1e-3
    return lambda fn: median_seconds(fn, repeats=3, warmup=1)


def copy_bandwidth(device: str, time_of: Callable, tiny: bool) -> float:
    """Bytes per second of a large device-to-device copy (read + write)."""
    src = torch.randn(2**12 if tiny else 2**28, device=device)
    dst = torch.empty_like(src)
    return 2 * src.numel() * F32 / time_of(lambda: dst.copy_(src))


def measure(case: Case, device: str, time_of: Callable) -> dict:
    """Device and whole-call times of eager, Inductor and inductor_lite (None where compiling or
    checking failed)."""
    import torch._dynamo

    import inductor_lite

    expected = case.fn(*case.inputs)
    result = {"notes": []}
    runs = {"eager": lambda: case.fn(*case.inputs)}
    for name in ("inductor", "inductor_lite"):
        torch._dynamo.reset()
        inductor_lite.metrics.reset()
        compiled = torch.compile(case.fn, backend=name, fullgraph=True)
        try:
            got = compiled(*case.inputs)
            torch.testing.assert_close(got, expected, atol=2e-3, rtol=2e-3)
        except Exception as error:  # a benchmark reports failures, it does not stop on them
            result["notes"].append(f"{name}: {type(error).__name__}: {str(error)[:120]}")
            continue
        runs[name] = lambda c=compiled: c(*case.inputs)
        if name == "inductor_lite":
            counters = inductor_lite.metrics.counters
            result["kernels"] = counters["kernels"]
            if counters["eager_graphs"]:
                result["notes"].append("inductor_lite ran the aten graph eagerly")
        time_both(name, runs[name], device, time_of, result)
    time_both("eager", runs["eager"], device, time_of, result)
    torch._dynamo.reset()
    return result


def time_both(name: str, run: Callable, device: str, time_of: Callable, result: dict) -> None:
    """`result[name]`: device time (a CUDA graph of one call, replayed; on CPU the call), and
    `result[name + " call"]`: the whole call's."""
    result[name + " call"] = time_of(run)
    if device != "cuda":
        result[name] = result[name + " call"]
        return
    try:
        result[name] = time_of(graphed(run).replay)
    except Exception as error:
        result[name] = None
        result["notes"].append(f"{name}: no CUDA graph: {type(error).__name__}: {str(error)[:120]}")


def graphed(run: Callable) -> torch.cuda.CUDAGraph:
    """A CUDA graph of one call of `run` (warmed up on a side stream first, as capture needs)."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            run()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        run()
    return graph


def table(results: list[tuple[Case, dict]], copy_bw: float) -> list[str]:
    lines = [
        "| case | eager µs | Inductor µs | inductor_lite µs (kernels) | speed-up over eager "
        "| over Inductor | inductor_lite GB/s (share of copy) | goal ≥ 1.5× eager "
        "| whole call: eager / Inductor / inductor_lite µs | whole call over Inductor |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    over_eager, over_inductor, call_over_inductor = [], [], []
    for case, r in results:
        eager, peer, ours = (r.get(k) for k in ("eager", "inductor", "inductor_lite"))
        us = [f"{t * 1e6:.1f}" if t else "failed" for t in (eager, peer, ours)]
        calls = [r.get(k + " call") for k in ("eager", "inductor", "inductor_lite")]
        call_us = " / ".join(f"{t * 1e6:.1f}" if t else "failed" for t in calls)
        vs_eager = eager / ours if ours and eager else None
        vs_peer = peer / ours if ours and peer else None
        call_vs_peer = calls[1] / calls[2] if calls[1] and calls[2] else None
        over_eager += [vs_eager] if vs_eager else []
        over_inductor += [vs_peer] if vs_peer else []
        call_over_inductor += [call_vs_peer] if call_vs_peer else []
        bandwidth = goal = "—"
        if case.bytes and ours:
            bandwidth = f"{case.bytes / ours / 1e9:.0f} ({case.bytes / ours / copy_bw:.0%})"
        if case.bytes:
            goal = "met" if vs_eager and vs_eager >= GOAL_EAGER else "**not met**"
        lines.append(
            f"| {case.label} | {us[0]} | {us[1]} | {us[2]} ({r.get('kernels', '—')}) "
            f"| {_times(vs_eager)} | {_times(vs_peer)} | {bandwidth} | {goal} | {call_us} "
            f"| {_times(call_vs_peer)} |")
    mean = _geomean(over_inductor)
    lines.append(f"| **geometric mean** | | | | {_times(_geomean(over_eager))} "
                 f"| {_times(mean)} | | goal: ≥ 1.00× Inductor "
                 f"({'met' if mean and mean >= 1 else '**not met**'}) | "
                 f"| {_times(_geomean(call_over_inductor))} |")
    notes = [f"- {case.label}: {note}" for case, r in results for note in r["notes"]]
    return lines + ([""] + notes if notes else [])


def _geomean(values: list[float]) -> float | None:
    return math.exp(sum(map(math.log, values)) / len(values)) if values else None


def _times(x: float | None) -> str:
    return f"{x:.2f}×" if x else "—"


HEADING = "## inductor_lite: generated Triton kernels against eager and Inductor (GPU)"


def run(**_options) -> str | None:
    if not torch.cuda.is_available():  # the section keeps the last GPU run's numbers
        return None
    time_of = timer("cuda")
    with torch.no_grad():
        copy_bw = copy_bandwidth("cuda", time_of, tiny=False)
        results = [(case, measure(case, "cuda", time_of)) for case in cases("cuda", tiny=False)]
    lines = [
        HEADING,
        "",
        f"Device: {torch.cuda.get_device_name()}; copy bandwidth {copy_bw / 1e9:.0f} GB/s "
        "(1 GiB tensor copied, read + write). Float32, `no_grad`; times are medians of "
        "`triton.testing.do_bench` (L2 flushed before each run). Device time: a CUDA graph of "
        "one call, replayed; whole call: the compiled function called from Python, the host's "
        "work (guards, wrappers, launches) included where the L2 flush does not hide it. "
        "Speed-ups are eager's (or Inductor's) time over inductor_lite's: above 1 means "
        "inductor_lite is faster. GB/s counts each case's minimal traffic over the device time; "
        "matmul-bound cases show none. Goals (read on device time): ≥ 1.5× eager on each fused "
        "memory-bound kernel; ≥ Inductor's speed on the geometric mean.",
        "",
        *table(results, copy_bw),
    ]
    return "\n".join(lines) + "\n"


def self_check() -> None:
    """Every case at tiny sizes on CPU through the interpreter: results checked, table built.
    The times it prints are the interpreter's and measure nothing."""
    import inductor_lite

    if not inductor_lite.config.triton_on_cpu:
        raise SystemExit("set INDUCTOR_LITE_TRITON_CPU=1 TRITON_INTERPRET=1")
    time_of = timer("cpu")
    with torch.no_grad():
        copy_bw = copy_bandwidth("cpu", time_of, tiny=True)
        results = [(case, measure(case, "cpu", time_of)) for case in cases("cpu", tiny=True)]
    print("SELF-CHECK on CPU through Triton's interpreter: not performance numbers.\n")
    print("\n".join(table(results, copy_bw)))
    failed = [c.label for c, r in results if not (r.get("inductor_lite") and r.get("inductor"))]
    if failed:
        raise SystemExit(f"self-check failed: {failed}")
    print("\nself-check passed: every case compiled and matched eager")


if __name__ == "__main__":
    self_check() if "--self-check" in sys.argv else print(run())
