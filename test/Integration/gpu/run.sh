#!/usr/bin/env bash
# On the GPU machine: builds the bundle made by build-bundle.sh into one
# shared library and runs the integration tests (each in its own process
# under a watchdog), then the benchmarks.
#   usage: run.sh BUNDLE [tests|sanitize|bench|copy|all] [suite.py options...]
# `sanitize` runs the whole suite at small shapes under compute-sanitizer
# memcheck, racecheck and synccheck.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bundle="$1"
what="${2:-all}"
shift $(( $# >= 2 ? 2 : $# ))
lib="$bundle/libcroq_kernels.so"
nvcc -O2 -std=c++17 -shared -Xcompiler -fPIC -I"$bundle" \
  "$bundle"/*.cpp -lcuda -o "$lib"
status=0
case "$what" in
  tests|all)
    python3 "$here/suite.py" "$lib" "$@" || status=1
    # The same kind of kernels through the Python package (croq.load), when
    # build-bundle.sh saved them.
    if [ -d "$bundle/python" ]; then
      python3 "$here/../../../scripts/python_gpu.py" run "$bundle/python" || status=1
    fi ;;
  sanitize) python3 "$here/suite.py" "$lib" --sanitize "$@" || status=1 ;;
  copy) python3 "$here/../../../bench/copy_bench.py" "$lib" || status=1 ;;
esac
if [ "$what" = bench ] || [ "$what" = all ]; then
  python3 "$here/../../../bench/copy_bench.py" "$lib" || status=1
  python3 "$here/../../../bench/gemm_bench.py" "$lib" || status=1
fi
exit $status
