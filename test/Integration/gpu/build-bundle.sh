#!/usr/bin/env bash
# Compiles every integration kernel here (croq-translate --croq-to-host, with
# cubins for sm_90a) into BUNDLE, together with the runtime's source, so that
# run.sh can build and run them on a GPU machine without LLVM/MLIR.
#   usage: [CROQ_PYTHON=python] build-bundle.sh BUILD_DIR BUNDLE
set -euo pipefail
root="$(cd "$(dirname "$0")/../../.." && pwd)"
build="${1:-$root/build}"
bundle="${2:-$build/gpu-bundle}"
rm -rf "$bundle"
mkdir -p "$bundle"
for kernel in "$root"/test/Integration/kernels/*.mlir; do
  name="$(basename "$kernel" .mlir)"
  "$build/bin/croq-translate" --croq-to-host "$kernel" -o "$bundle/$name.cpp"
done
# The same kernels written in Croqtile, through the importer.
# A `// GPU-VARIANT: NAME FLAGS` line builds the file again with FLAGS as
# NAME.cpp, for kernels whose tile shape is a define: its -D options go to
# the importer, its --croq-* options (e.g. --croq-mma-defer-min-slots=3) to
# the lowering.
for source in "$root"/test/Integration/croqtile/*.co; do
  name="$(basename "$source" .co)"
  "$build/bin/croq-translate" --import-croqtile "$source" |
    "$build/bin/croq-translate" --croq-to-host -o "$bundle/$name.cpp"
  { grep '^// GPU-VARIANT: ' "$source" || true; } | while read -r _ _ variant flags; do
    defines=() lowering=()
    for flag in $flags; do
      case "$flag" in
        --croq-*) lowering+=("$flag") ;;
        *) defines+=("$flag") ;;
      esac
    done
    "$build/bin/croq-translate" --import-croqtile "${defines[@]}" "$source" |
      "$build/bin/croq-translate" --croq-to-host "${lowering[@]}" -o "$bundle/$variant.cpp"
  done
done
cp "$root"/runtime/include/croq_runtime.h "$root"/runtime/lib/croq_runtime.cpp "$bundle/"
# Kernels for the Python package's run (run.sh calls them through
# croq.load): compiled and saved by a Python with the package installed,
# $CROQ_PYTHON (e.g. a venv after `pip install ./python`).
if [ -n "${CROQ_PYTHON:-}" ]; then
  CROQ_CACHE_DIR="$bundle/.croq-cache" "$CROQ_PYTHON" \
    "$root/scripts/python_gpu.py" prepare "$bundle/python"
  rm -rf "$bundle/.croq-cache"
fi
echo "bundle: $(ls "$bundle" | wc -l) files in $bundle"
