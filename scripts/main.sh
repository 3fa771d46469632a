#!/usr/bin/env bash
# The main job: set up and build croq, compile every integration kernel
# (test/Integration/kernels: the seed's and chapter 6's programs in croq IR)
# to PTX for sm_90a and assemble it with ptxas, then, where an NVIDIA GPU is
# present, build them with the croq runtime and run them against PyTorch
# references, followed by the copy benchmark.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}

scripts/setup.sh
cmake --build "$BUILD_DIR"

ptx_dir="$BUILD_DIR/ptx"
mkdir -p "$ptx_dir"
ptxas=/usr/local/cuda/bin/ptxas
for kernel in test/Integration/kernels/*.mlir; do
  name=$(basename "$kernel" .mlir)
  "$BUILD_DIR/bin/croq-translate" --croq-to-ptx "$kernel" -o "$ptx_dir/$name.ptx"
  echo "== $kernel -> $ptx_dir/$name.ptx"
  if [ -x "$ptxas" ]; then
    "$ptxas" -arch=sm_90a "$ptx_dir/$name.ptx" -o "$ptx_dir/$name.cubin"
    echo "   ptxas: ok"
  fi
done

if command -v nvidia-smi >/dev/null && nvidia-smi -L 2>/dev/null | grep -q GPU; then
  test/Integration/gpu/build-bundle.sh "$BUILD_DIR" "$BUILD_DIR/gpu-bundle"
  test/Integration/gpu/run.sh "$BUILD_DIR/gpu-bundle" all
else
  echo "no NVIDIA GPU here: kernels compiled to PTX only (see $ptx_dir)"
fi
