#!/usr/bin/env bash
# On the GPU machine: builds the bundle made by build-bundle.sh into one
# shared library and runs the integration tests, then the benchmarks.
#   usage: run.sh BUNDLE [tests|bench|all]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bundle="$1"
what="${2:-all}"
lib="$bundle/libcroq_kernels.so"
nvcc -O2 -std=c++17 -shared -Xcompiler -fPIC -I"$bundle" \
  "$bundle"/*.cpp -lcuda -o "$lib"
status=0
if [ "$what" != bench ]; then
  python3 "$here/test_kernels.py" "$lib" || status=1
fi
if [ "$what" != tests ]; then
  python3 "$here/../../../bench/copy_bench.py" "$lib" || status=1
  python3 "$here/../../../bench/gemm_bench.py" "$lib" || status=1
fi
exit $status
