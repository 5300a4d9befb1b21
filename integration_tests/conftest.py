import os
import sys
from pathlib import Path

if os.environ.get("INDUCTOR_LITE_TEST_DEVICE", "cpu") == "cpu":
    # Generated kernels run in Triton's interpreter, which must be chosen before anything
    # imports triton (diffusers does, when a test module imports it).
    os.environ.setdefault("INDUCTOR_LITE_TRITON_CPU", "1")
    os.environ.setdefault("TRITON_INTERPRET", "1")

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
sys.path.insert(0, str(Path(__file__).resolve().parent))  # hf_models

if os.environ.get("INDUCTOR_LITE_KERNEL_LOG"):  # nox's test sessions: see gpu_frontend.py
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "packages/inductor_lite/tests"))
    import gpu_frontend

    gpu_frontend.record(os.environ["INDUCTOR_LITE_KERNEL_LOG"])
