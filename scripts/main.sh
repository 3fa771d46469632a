#!/usr/bin/env bash
# The main job: set up, build croq, and run the worked examples through
# croq-opt (parse, verify, print). Lowering to PTX and running on the GPU
# join this job as they land (see README, "Status").
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}

scripts/setup.sh
cmake --build "$BUILD_DIR"

for example in examples/*.mlir; do
  echo "== croq-opt $example"
  "$BUILD_DIR/bin/croq-opt" "$example"
done
