"""Options, each read from an environment variable at import and settable from Python.

    INDUCTOR_LITE_TRITON_CPU=1   run generated kernels on CPU tensors through Triton's
                                 interpreter (default: CPU graphs run the aten graph eagerly)
    INDUCTOR_LITE_DUMP=folder    write each graph's generated module (kernels and wrapper) there
    INDUCTOR_LITE_AUTOTUNE=0     on a GPU, take each kernel's default block sizes without measuring
    INDUCTOR_LITE_CACHE=folder   where generated modules and tuning results are kept
    INDUCTOR_LITE_INDEX_ASSERTS=1  on a GPU, compile kernels in Triton's debug mode, so that an
                                 index read from memory outside its dim stops the kernel with a
                                 device assert (default: such lanes read 0 and write nothing;
                                 Triton's interpreter always checks)
"""

import os
from pathlib import Path

# Triton decides at import whether its functions are interpreted: set it before anyone imports it.
if os.environ.get("INDUCTOR_LITE_TRITON_CPU") == "1":
    os.environ.setdefault("TRITON_INTERPRET", "1")

triton_on_cpu: bool = os.environ.get("INDUCTOR_LITE_TRITON_CPU") == "1"
dump_dir: str | None = os.environ.get("INDUCTOR_LITE_DUMP") or None
autotune: bool = os.environ.get("INDUCTOR_LITE_AUTOTUNE", "1") == "1"
cache_dir: Path = Path(os.environ.get("INDUCTOR_LITE_CACHE") or
                       Path.home() / ".cache" / "inductor_lite")
index_asserts: bool = os.environ.get("INDUCTOR_LITE_INDEX_ASSERTS") == "1"
