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


# A device-side assert (eager's index checks, a kernel's `config.index_asserts`) ends the
# process's CUDA context: every later test of the process would fail. Under pytest-xdist, the
# worker exits after the test that met it has been reported, and xdist starts a fresh one for
# the tests left (and reports that test's worker as crashed too).
_CONTEXT_LOST = pytest.StashKey[bool]()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    yield
    if call.excinfo is not None and "device-side assert triggered" in str(call.excinfo.value):
        item.stash[_CONTEXT_LOST] = True


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    yield
    if item.stash.get(_CONTEXT_LOST, False) and os.environ.get("PYTEST_XDIST_WORKER"):
        os._exit(1)


@pytest.fixture(autouse=True)
def fresh_counters():
    inductor_lite.metrics.reset()
    torch.manual_seed(0)
    yield


@pytest.fixture
def device() -> str:
    return DEVICE
