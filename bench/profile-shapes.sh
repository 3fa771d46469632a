#!/usr/bin/env bash
# On the GPU machine: ncu of croq's GEMM variants beside cuBLAS at the
# shapes where croq trails it, each kernel's speed-of-light, occupancy,
# warp-state and launch sections (--clock-control none: the clocks the
# benchmark sees). One file per shape in OUT.
#   usage: bench/profile-shapes.sh GEMM_BENCH_DIR OUT [MxNxK=VARIANT[,VARIANT]...]
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bench="$1"
out="$2"
shift 2
mkdir -p "$out"
[ $# -eq 0 ] && set -- 1024x1024x16384=croq_splitk_bn256:4 \
  4096x14336x4096=croq_cluster2_turns_bn256_s4,croq_persistent_cluster2_bn256_s4
status=0
for job in "$@"; do
  shape="${job%%=*}"
  variants="${job#*=}"
  timeout 240 ncu --profile-from-start off --clock-control none \
    --section SpeedOfLight --section LaunchStats --section Occupancy \
    --section WarpStateStats --section ComputeWorkloadAnalysis \
    --section MemoryWorkloadAnalysis \
    python3 "$here/gemm_profile.py" "$bench" "$shape" "$variants" \
    > "$out/ncu-$shape.txt" 2>&1 || status=1
  grep -E "^  [a-z_0-9]+.*\(|Duration|SM Frequency|Compute \(SM\) Throughput|L2 Cache Throughput|DRAM Throughput" \
    "$out/ncu-$shape.txt"
done
exit $status
