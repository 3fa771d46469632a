#!/usr/bin/env bash
# Builds the libFuzzer target for the Croqtile importer (clang-22, ASan) in
# build-fuzz/ and runs it for SECONDS (default 300) from a corpus seeded with
# every .co file of the test suite. Crashing inputs are written to
# build-fuzz/artifacts/. Exits non-zero when the fuzzer found a crash.
#   usage: scripts/fuzz-importer.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-300}
BUILD_DIR=build-fuzz
scripts/setup.sh
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake -G Ninja -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DLLVM_USE_LINKER=lld -DCROQ_ENABLE_FUZZER=ON \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit
fi
cmake --build "$BUILD_DIR" --target croq-import-fuzzer
corpus="$BUILD_DIR/corpus"
mkdir -p "$corpus" "$BUILD_DIR/artifacts"
find test -name '*.co' -exec cp {} "$corpus/" \;
"$BUILD_DIR/tools/croq-import-fuzzer/croq-import-fuzzer" "$corpus" \
  -max_total_time="$seconds" -max_len=8192 -timeout=20 -rss_limit_mb=4096 \
  -artifact_prefix="$BUILD_DIR/artifacts/" -print_final_stats=1
