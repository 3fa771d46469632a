#!/usr/bin/env bash
# Runs croq over upstream Croqtile programs it was not written for and prints
# each case's outcome and the totals.
#   usage: scripts/upstream-tests.sh [options] PATH...
#   PATH: a checkout of LancerLab/croqtile, of LancerLab/croqtile-tutorial,
#         a directory of .co files, a .co or a .md file.
#   options: see scripts/upstream_tests.py --help (--report FILE, --jobs N,
#            --filter STR, --quiet).
# Builds croq-translate first when the build tree exists.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
if [ -f "$BUILD_DIR/build.ninja" ]; then
  cmake --build "$BUILD_DIR" --target croq-translate >/dev/null
fi
exec python3 scripts/upstream_tests.py --croq "$BUILD_DIR/bin/croq-translate" "$@"
