#!/bin/sh
# tests/gpu/check_gpu.sh PREFIX DEBDIR: everything that needs a GPU, in one
# go: build and run the CUDA kernel tests (run_gpu_tests.sh), the command
# line end to end on the GPU (tests/e2e/gpu.sh), and the GPT-2 small
# benchmark against PyTorch (bench/gpu_bench.sh).
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-/tmp/carve-gpu}
export BUILD
QUICK=1 sh "$here/tests/gpu/run_gpu_tests.sh" "$1" "$2"
status=$?
export LD_LIBRARY_PATH="$1/runlib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
echo "== tests/e2e/gpu.sh"
SRCDIR=$here CARVE=$BUILD/carve bash "$here/tests/e2e/gpu.sh" || status=1
echo "== bench/gpu_bench.sh"
bash "$here/bench/gpu_bench.sh" "$BUILD/carve" || status=1
exit $status
