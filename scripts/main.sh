#!/usr/bin/env bash
# The main job: set up and build croq, then compile the seed's Croqtile
# programs with croqc: the control-flow chapter's programs
# (test/Import/seeds, with the macros the chapter gives them) to PTX, and
# its runnable kernels with chapter 6's and the rest of the Croqtile suite
# (test/Integration/croqtile) to PTX, each assembled by ptxas. Where an
# NVIDIA GPU is present, the suite is built into one host library and run
# against PyTorch references, followed by the benchmarks.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}

scripts/setup.sh
cmake --build "$BUILD_DIR"

out="$BUILD_DIR/main-job"
mkdir -p "$out"
ptxas=/usr/local/cuda/bin/ptxas
compiled=0
compile() { # SOURCE [-D...]
  local source="$1" name
  shift
  name=$(basename "$source" .co)
  "$BUILD_DIR/bin/croqc" "$source" "$@" --emit=ptx -o "$out/$name.ptx"
  if [ -x "$ptxas" ]; then
    "$ptxas" -arch=sm_90a "$out/$name.ptx" -o "$out/$name.cubin"
  fi
  echo "== $source -> $out/$name.ptx$([ -x "$ptxas" ] && echo ', ptxas ok')"
  compiled=$((compiled + 1))
}
# The chapter's programs, with the constants its text defines.
compile test/Import/seeds/control_flow_snippets.co -DMATMUL_STAGES=4
compile test/Import/seeds/matmul_1p1c_skeleton.co -DMATMUL_WARP_M=64 \
  -DMATMUL_WARP_N=64 -DMATMUL_TILE_K=128 -DMATMUL_WARP_K=16
compile test/Import/seeds/matmul_persistent.co -DMATMUL_WARP_M=64 \
  -DMATMUL_WARP_N=64 -DMATMUL_TILE_K=64 -DMATMUL_WARP_K=16 -DNUM_SMS=132
for source in test/Integration/croqtile/*.co; do
  compile "$source"
done
echo "main job: $compiled Croqtile programs compiled to PTX"

if command -v nvidia-smi >/dev/null && nvidia-smi -L 2>/dev/null | grep -q GPU; then
  # The Python package too, in a venv of its own (PyPI gives its build
  # tools); without it the Python run is skipped, and said so.
  if python3 -m venv "$BUILD_DIR/venv" &&
     "$BUILD_DIR/venv/bin/python" -m pip install --quiet ./python; then
    export CROQ_PYTHON="$BUILD_DIR/venv/bin/python"
  else
    echo "main job: the Python package did not install; its GPU run is skipped"
  fi
  test/Integration/gpu/build-bundle.sh "$BUILD_DIR" "$BUILD_DIR/gpu-bundle"
  test/Integration/gpu/run.sh "$BUILD_DIR/gpu-bundle" all
else
  echo "no NVIDIA GPU here: the programs compiled to PTX only (see $out)"
fi
