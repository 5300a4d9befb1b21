"""The tests' generated kernels through Triton's compiler for a GPU, on a machine without one.

Triton's interpreter, which runs the kernels of the CPU tests, accepts code that Triton's
compiler for a GPU refuses: there an int argument equal to 1 arrives as a Python int (a
constant), on which `s0.to(tl.int64)` is an AttributeError. With INDUCTOR_LITE_KERNEL_LOG set
to a folder, the tests' conftest calls `record`, which notes every kernel launched (its module
file, its name, and the signature a GPU launch would compile it for); then

    python packages/inductor_lite/tests/gpu_frontend.py FOLDER

compiles each noted kernel to Triton's IR for an sm_90 target, in a process without the
interpreter, and exits 1 naming those that do not compile. nox's test sessions run both.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import threading
from pathlib import Path
from typing import Any

import torch

_POINTERS = {torch.float32: "*fp32", torch.float16: "*fp16", torch.bfloat16: "*bf16",
             torch.float64: "*fp64", torch.int64: "*i64", torch.int32: "*i32",
             torch.int16: "*i16", torch.int8: "*i8", torch.uint8: "*u8", torch.bool: "*i1",
             torch.uint64: "*u64"}


def _signature(names: list[str], values: list[Any], options: dict) -> tuple[dict, dict]:
    """The argument types and constants Triton's GPU launcher derives from `values`."""
    types, constants = {}, {}
    for name, value in zip(names, values):
        if isinstance(value, torch.Tensor):
            types[name] = _POINTERS.get(value.dtype, "*fp32")
        elif isinstance(value, bool):
            types[name] = "i1"
        elif isinstance(value, int) and value != 1:
            types[name] = "i32" if -2**31 <= value < 2**31 else "i64"
        elif isinstance(value, float):
            types[name] = "fp32"
        else:  # 1 and None are specialized into the kernel
            types[name], constants[name] = "constexpr", value
    for name in names[len(values):]:
        types[name], constants[name] = "constexpr", options[name]
    return types, constants


def record(folder: str) -> None:
    """Note each kernel launched from now on in FOLDER/kernels.<pid>.jsonl (once a process:
    both test folders' conftests ask)."""
    from inductor_lite import runtime

    if getattr(runtime.Launcher._prepare, "records", False):
        return
    path = Path(folder) / f"kernels.{os.getpid()}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    seen: set[str] = set()
    lock = threading.Lock()
    prepare = runtime.Launcher._prepare

    def recording_prepare(self: Any, cfg: dict, on_gpu: bool) -> Any:
        launch = prepare(self, cfg, on_gpu)
        fn = self.looped if cfg.get("looped") else self.fn
        code = getattr(fn, "fn", fn).__code__
        names = list(code.co_varnames[:code.co_argcount])
        options = {k: v for k, v in cfg.items() if k not in ("num_warps", "looped")}

        def recorded(args: tuple, xnumel: int, rnumel: int) -> None:
            sizes = (xnumel,) if self.kind == "pointwise" else (xnumel, rnumel)
            types, constants = _signature(names, [*args, *sizes], options)
            line = json.dumps({"file": code.co_filename, "name": code.co_name,
                               "types": types, "constants": constants}, sort_keys=True)
            with lock:
                if line not in seen:
                    seen.add(line)
                    with path.open("a") as f:
                        f.write(line + "\n")
            launch(args, xnumel, rnumel)
        return recorded
    recording_prepare.records = True  # type: ignore[attr-defined]
    runtime.Launcher._prepare = recording_prepare


def check(folder: str) -> list[str]:
    """Each noted kernel compiled to Triton's IR for an sm_90 target: the failures."""
    assert os.environ.get("TRITON_INTERPRET") != "1", "the interpreter replaces the compiler"
    from triton._C.libtriton import ir
    from triton.backends.compiler import GPUTarget
    from triton.compiler.compiler import ASTSource, make_backend

    from inductor_lite.runtime import Launcher

    target = GPUTarget("cuda", 90, 32)
    backend = make_backend(target)
    options = backend.parse_options({})
    modules: dict[str, Any] = {}
    failures, lines = [], set()
    for log in sorted(Path(folder).glob("kernels.*.jsonl")):
        lines.update(log.read_text().splitlines())
    gone = 0
    for line in sorted(lines):
        noted = json.loads(line)
        if not Path(noted["file"]).exists():  # (a test's own cache folder, removed)
            gone += 1
            continue
        if noted["file"] not in modules:
            spec = importlib.util.spec_from_file_location(f"noted{len(modules)}", noted["file"])
            modules[noted["file"]] = module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
        kernel = getattr(modules[noted["file"]], noted["name"])
        kernel = kernel.fn if isinstance(kernel, Launcher) else kernel  # (a looped twin: bare)
        context = ir.context()
        ir.load_dialects(context)
        backend.load_dialects(context)
        try:
            ASTSource(kernel, noted["types"], constexprs=noted["constants"]).make_ir(
                target, options, backend.get_codegen_implementation(options),
                backend.get_module_map(), context)
        except Exception as e:  # the compiler's error, with the kernel's line
            failures.append(f"{noted['file']}: {noted['name']} {noted['types']}:\n{e}")
    print(f"{len(lines) - gone} kernels compiled for an sm_90 target, {len(failures)} failed "
          f"({gone} whose module is gone)")
    return failures


if __name__ == "__main__":
    failed = check(sys.argv[1])
    print("\n\n".join(failed))
    sys.exit(1 if failed else 0)
