#!/usr/bin/env bash
# The whole test suite: builds croq, then runs the lit tests, the GoogleTest
# unit tests (ctest) and the check that docs/generated matches the TableGen
# sources. Exits non-zero when anything fails.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}

scripts/setup.sh
cmake --build "$BUILD_DIR"

status=0
echo "== lit"
cmake --build "$BUILD_DIR" --target check-croq-lit || status=1
echo "== unit tests"
ctest --test-dir "$BUILD_DIR" --output-on-failure || status=1
echo "== generated docs"
cmake --build "$BUILD_DIR" --target croq-doc-check || {
  echo "docs/generated is stale: run 'cmake --build $BUILD_DIR --target croq-doc-update'"
  status=1
}
if [ "$status" -ne 0 ]; then
  echo "croq tests: FAILED"
else
  echo "croq tests: all passed"
fi
exit "$status"
