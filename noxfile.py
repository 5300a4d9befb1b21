"""Every command a developer or CI runs.

    nox -s demo            the main demo (examples/demo.py)
    nox -s tests           every package and integration_tests/ in one environment
    nox -s tests-<name>    one package with only its declared dependencies (proves "usable alone")
    nox -s tests-3.12      every package on Python 3.12 (downloads a torch for 3.12)
    nox -s lint            ruff and the import-linter layering contracts
    nox -s conformance     the long OpInfo sweeps; they write docs/conformance.md
    nox -s bench           the benchmarks; they write docs/performance.md
    nox -s fuzz            a long sweep of dynamo's stale-answer fuzzer (2000 seeds)

TORCH_SPEC chooses the torch that environments get (default ``torch==2.13.0``, the CPU build on
the development machines' disk). ``TORCH_SPEC=system`` builds environments on top of the
interpreter's own site-packages and installs no torch: for GPU machines that already have one.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

import nox

ROOT = Path(__file__).parent
PACKAGES = sorted(p.parent.name for p in ROOT.glob("packages/*/pyproject.toml"))
TORCH_SPEC = os.environ.get("TORCH_SPEC", "torch==2.13.0")
# Pinned: a new release can change the Python the tests trace (5.24 gave ModelOutput a metaclass).
TRANSFORMERS = "transformers==5.24.0"
DIFFUSERS = "diffusers==0.42.1"
VENV_PARAMS = ["--system-site-packages"] if TORCH_SPEC == "system" else []

nox.options.sessions = ["lint", "tests"]
nox.options.reuse_existing_virtualenvs = True


def _local_deps(name: str) -> list[str]:
    """`name` and, transitively, the packages of this repo it (or its tests) depend on, dependencies
    first."""
    project = tomllib.loads((ROOT / "packages" / name / "pyproject.toml").read_text())["project"]
    declared = project.get("dependencies", []) + project.get("optional-dependencies", {}).get("test", [])
    deps = [d for d in declared if d.split()[0] in PACKAGES]
    order: list[str] = []
    for dep in deps:
        for item in _local_deps(dep.split()[0]):
            if item not in order:
                order.append(item)
    return [*order, name]


def _install(session: nox.Session, names: list[str], *extra: str) -> None:
    if TORCH_SPEC != "system":
        session.install(TORCH_SPEC, "numpy")  # torch warns at import without numpy
    args: list[str] = []
    for name in names:
        args += ["-e", f"packages/{name}[test]"]
    session.install(*args, *extra)


def _triton_env() -> dict[str, str]:
    """inductor_lite's kernels run on CPU tensors through Triton's interpreter, which must be
    chosen before triton is imported. GPU machines (TORCH_SPEC=system) run them for real."""
    return {} if TORCH_SPEC == "system" else {"INDUCTOR_LITE_TRITON_CPU": "1",
                                              "TRITON_INTERPRET": "1"}


def _pytest(session: nox.Session, *paths: str) -> None:
    """pytest over `paths`; then, where inductor_lite's kernels ran in Triton's interpreter,
    each kernel they launched through Triton's compiler for a GPU (its tests/gpu_frontend.py:
    the interpreter accepts code that compiler refuses)."""
    env = {"HYPOTHESIS_PROFILE": "ci", **_triton_env()}
    frontend = "packages/inductor_lite/tests" in paths and "TRITON_INTERPRET" in env
    if frontend:
        env["INDUCTOR_LITE_KERNEL_LOG"] = kernel_log = session.create_tmp() + "/kernels"
        for old in Path(kernel_log).glob("kernels.*.jsonl"):
            old.unlink()
    session.run(
        "pytest", "-n", os.environ.get("PYTEST_WORKERS", "2"), "-q", *paths, *session.posargs,
        env=env,
    )
    if frontend:
        session.run("python", "packages/inductor_lite/tests/gpu_frontend.py", kernel_log)


@nox.session(venv_params=VENV_PARAMS)
def demo(session: nox.Session) -> None:
    """The main demo (examples/demo.py)."""
    _install(session, PACKAGES)
    session.run("python", "examples/demo.py", env=_triton_env())


@nox.session(venv_params=VENV_PARAMS)
def tests(session: nox.Session) -> None:
    """Every package's tests and the integration tests, in one environment."""
    # transformers, diffusers: real models for the integration tests, built from configs (no
    # download).
    _install(session, PACKAGES, TRANSFORMERS, DIFFUSERS)
    paths = [f"packages/{name}/tests" for name in PACKAGES]
    if (ROOT / "integration_tests").is_dir():
        paths.append("integration_tests")
    _pytest(session, *paths)


def _package_tests(package: str):
    def session_fn(session: nox.Session) -> None:
        _install(session, _local_deps(package))
        _pytest(session, f"packages/{package}/tests")

    session_fn.__doc__ = f"{package}'s tests with only its declared dependencies installed."
    return session_fn


for _name in PACKAGES:
    nox.session(name=f"tests-{_name}", venv_params=VENV_PARAMS)(_package_tests(_name))


@nox.session(name="tests-3.12", python="3.12", venv_params=VENV_PARAMS)
def tests_312(session: nox.Session) -> None:
    """Every package's tests on Python 3.12 (its bytecode differs from 3.11's). Needs a torch for
    3.12: the development machines hold only a 3.11 build, so this downloads a large one; CI
    leaves it out."""
    tests(session)


@nox.session(venv_params=VENV_PARAMS)
def lint(session: nox.Session) -> None:
    """ruff, and the import-linter contracts of .importlinter (layers, forbidden torch modules)."""
    _install(session, PACKAGES, "ruff", "import-linter")
    session.run("ruff", "check", ".")
    session.run("lint-imports")


@nox.session(venv_params=VENV_PARAMS)
def conformance(session: nox.Session) -> None:
    """The full OpInfo sweeps, ours beside PyTorch's own implementation; writes docs/conformance.md."""
    _install(session, PACKAGES)
    session.run("python", "conformance/run.py", *session.posargs, env=_triton_env())


@nox.session(venv_params=VENV_PARAMS)
def bench(session: nox.Session) -> None:
    """The benchmarks, ours beside the peer in the same run; writes docs/performance.md."""
    # a Hugging Face GPT-2 and a diffusers UNet in the dynamo benchmark
    _install(session, PACKAGES, TRANSFORMERS, DIFFUSERS)
    session.run("python", "benchmarks/run.py", *session.posargs)


@nox.session(venv_params=VENV_PARAMS)
def fuzz(session: nox.Session) -> None:
    """A long sweep of dynamo's stale-answer fuzzer (packages/dynamo/tests/stale_fuzz.py): seeds
    1000 to 2999 (tests/test_stale_fuzz.py samples 0 to 127); fails if a case fails. Other seeds:
    `nox -s fuzz -- --start 50000 --n 500`."""
    _install(session, _local_deps("dynamo"))
    session.run("python", "packages/dynamo/tests/stale_fuzz.py",
                *(session.posargs or ["--start", "1000", "--n", "2000"]))
