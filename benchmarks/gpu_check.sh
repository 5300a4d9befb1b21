#!/usr/bin/env bash
# inductor_lite for real on a GPU machine (H100/H200, torch 2.11, triton 3.6, Python 3.12, no
# network): the benchmark writes its section of docs/performance.md (eager, Inductor and
# inductor_lite in the same run), then its tests and the integration tests run their kernels on
# CUDA.
#
#     bash benchmarks/gpu_check.sh          from the repository root; commit docs/performance.md
#
# Nothing is installed: the machine's own Python (PYTHON, default python3) with its torch,
# triton, pytest and sympy, this repo's package sources on PYTHONPATH, and inductor_lite's entry
# points declared in a dist-info folder beside them (so torch.compile(backend="inductor_lite")
# finds it). Packages the machine lacks (dynamo's `bytecode`, the OpInfo tests' `expecttest`)
# must already be importable, e.g. from wheels unpacked into a folder on PYTHONPATH.
set -uo pipefail
cd "$(dirname "$0")/.."
export INDUCTOR_LITE_TEST_DEVICE=${INDUCTOR_LITE_TEST_DEVICE:-cuda}  # read by the tests
unset INDUCTOR_LITE_TRITON_CPU TRITON_INTERPRET                      # real kernels, not the interpreter

PY=${PYTHON:-python3}
meta=$(mktemp -d)
info="$meta/inductor_lite-0.1.0.dist-info"
mkdir -p "$info"
printf 'Metadata-Version: 2.1\nName: inductor_lite\nVersion: 0.1.0\n' > "$info/METADATA"
printf '[%s]\ninductor_lite = inductor_lite:compile_fx\n\n' dynamo.backends \
    torch_dynamo_backends > "$info/entry_points.txt"
sources=$(ls -d "$PWD"/packages/*/src | paste -sd:)
export PYTHONPATH="$meta:$sources${PYTHONPATH:+:$PYTHONPATH}"

"$PY" -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__,
      torch.cuda.get_device_name() if torch.cuda.is_available() else 'NO GPU')"

# The numbers first (each case reports its own failure), then the tests, spread over the cores
# when pytest-xdist is there.
"$PY" benchmarks/run.py --only inductor_lite   # says "GPU numbers pending" if no GPU was found
bench=$?
workers=$("$PY" -c "import xdist" 2>/dev/null && echo "-n 8")
"$PY" -m pytest -q -rfE -p no:cacheprovider $workers packages/inductor_lite/tests \
    integration_tests/test_inductor_lite.py
tests=$?
echo "tests exit $tests, benchmark exit $bench"
exit $((tests || bench))
