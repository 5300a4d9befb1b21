"""Kernels run on CPU tensors through Triton's interpreter (chosen before triton is imported);
on a machine with a GPU, tests run there for real (INDUCTOR_LITE_TEST_DEVICE=cuda)."""

import os
import sys
from pathlib import Path

if os.environ.get("INDUCTOR_LITE_TEST_DEVICE", "cpu") == "cpu":
    os.environ.setdefault("INDUCTOR_LITE_TRITON_CPU", "1")
    os.environ.setdefault("TRITON_INTERPRET", "1")

import pytest  # noqa: E402
import torch  # noqa: E402

import inductor_lite  # noqa: E402

DEVICE = os.environ.get("INDUCTOR_LITE_TEST_DEVICE", "cpu")

if os.environ.get("INDUCTOR_LITE_KERNEL_LOG"):  # nox's test sessions: see gpu_frontend.py
    sys.path.insert(0, str(Path(__file__).parent))
    import gpu_frontend

    gpu_frontend.record(os.environ["INDUCTOR_LITE_KERNEL_LOG"])


@pytest.fixture(autouse=True)
def fresh_counters():
    inductor_lite.metrics.reset()
    torch.manual_seed(0)
    yield


@pytest.fixture
def device() -> str:
    return DEVICE
