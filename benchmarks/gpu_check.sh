#!/usr/bin/env bash
# inductor_lite for real on a GPU machine (H100, torch 2.11, triton 3.6, Python 3.12, no network):
# its tests and the integration tests run their kernels on CUDA, then the benchmark writes its
# section of docs/performance.md (eager, Inductor and inductor_lite in the same run).
#
#     bash benchmarks/gpu_check.sh          from the repository root; commit docs/performance.md
#
# Nothing is downloaded: a venv on top of the machine's own torch, triton, pytest and sympy
# (--system-site-packages), with this repo's packages installed editable (their entry points make
# torch.compile(backend="inductor_lite") work). VENV=path reuses a venv that already has them.
set -uo pipefail
cd "$(dirname "$0")/.."
export INDUCTOR_LITE_TEST_DEVICE=${INDUCTOR_LITE_TEST_DEVICE:-cuda}  # read by the tests
unset INDUCTOR_LITE_TRITON_CPU TRITON_INTERPRET                      # real kernels, not the interpreter

VENV=${VENV:-${TMPDIR:-/tmp}/inductor_lite_gpu_venv}
if [ ! -x "$VENV/bin/python" ]; then
    "${PYTHON:-python3.12}" -m venv --system-site-packages "$VENV" || exit 1
    if ! "$VENV/bin/python" -m pip install -q --no-index --no-deps --no-build-isolation \
        -e packages/fakecore -e packages/fxtrace -e packages/guards -e packages/dynamo \
        -e packages/inductor_lite; then
        # No setuptools/wheel to build with offline: put the sources on the path and declare
        # inductor_lite's entry points by hand.
        site=$("$VENV/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
        ls -d "$PWD"/packages/*/src > "$site/stack_sources.pth"
        info="$site/inductor_lite-0.1.0.dist-info"
        mkdir -p "$info"
        printf 'Metadata-Version: 2.1\nName: inductor_lite\nVersion: 0.1.0\n' > "$info/METADATA"
        printf '[%s]\ninductor_lite = inductor_lite:compile_fx\n\n' dynamo.backends \
            torch_dynamo_backends > "$info/entry_points.txt"
    fi
fi
PY="$VENV/bin/python"
"$PY" -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__,
      torch.cuda.get_device_name() if torch.cuda.is_available() else 'NO GPU')"

"$PY" -m pytest -q packages/inductor_lite/tests integration_tests/test_inductor_lite.py
tests=$?
"$PY" benchmarks/run.py --only inductor_lite   # says "GPU numbers pending" if no GPU was found
bench=$?
echo "tests exit $tests, benchmark exit $bench"
exit $((tests || bench))
