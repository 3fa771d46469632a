#!/usr/bin/env bash
# Compiles the sweep benchmark's croq GEMMs (test/Integration/croqtile,
# one file, its tile shape set by defines) to host code with cubins for
# sm_90a, with the runtime's source, into OUT; gemm_sweep.py builds them
# into one library on the GPU machine.
#   usage: build-gemm.sh BUILD_DIR OUT
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build}"
out="${2:-$build/gemm-bench}"
rm -rf "$out"
mkdir -p "$out"
# name, source (test/Integration/croqtile/SOURCE.co), defines. Each is a
# tile shape written in Croqtile; the sweep picks per problem shape the
# variant (and for split-K the split count) that gemm_sweep.py's tuning
# pass finds best.
while read -r name source flags; do
  # shellcheck disable=SC2086
  "$build/bin/croqc" "$root/test/Integration/croqtile/$source.co" --emit=host \
    -DGEMM="$name" $flags -o "$out/$name.cpp"
  echo "$name $source $flags" >> "$out/variants.txt"
done <<'VARIANTS'
croq_bn256_s4 gemm_f16_co -DBN=256 -DSTAGES=4
croq_bn128_s6 gemm_f16_co -DBN=128 -DSTAGES=6
croq_bn256_s4_g16 gemm_f16_co -DBN=256 -DSTAGES=4 -DGROUP_M=16
croq_persistent_bn256 gemm_persistent_f16_co -DBN=256 -DSTAGES=4
croq_persistent_bn128 gemm_persistent_f16_co -DBN=128 -DSTAGES=6
croq_staged_bn256_s3 gemm_f16_co -DBN=256 -DSTAGES=3 -DSTAGED_EPILOGUE
croq_persistent_staged_bn256_s3 gemm_persistent_f16_co -DBN=256 -DSTAGES=3 -DSTAGED_EPILOGUE
croq_turns_bn256_s4 gemm_f16_co -DBN=256 -DSTAGES=4 -DSHARED_STAGING
croq_persistent_turns_bn256_s4 gemm_persistent_f16_co -DBN=256 -DSTAGES=4 -DSHARED_STAGING
croq_bn256_s4_w0 gemm_f16_co -DBN=256 -DSTAGES=4 -DMMA_WAIT0
croq_staged_bn256_s3_w0 gemm_f16_co -DBN=256 -DSTAGES=3 -DSTAGED_EPILOGUE -DMMA_WAIT0
croq_staged_bn256_bk32_s6_w0 gemm_f16_co -DBN=256 -DBK=32 -DSTAGES=6 -DSTAGED_EPILOGUE -DMMA_WAIT0
croq_cluster2_bn256_s4 gemm_f16_co -DBN=256 -DSTAGES=4 -DCLUSTER=2
croq_cluster2_turns_bn256_s4 gemm_f16_co -DBN=256 -DSTAGES=4 -DSHARED_STAGING -DCLUSTER=2
croq_persistent_cluster2_bn256_s4 gemm_persistent_f16_co -DBN=256 -DSTAGES=4 -DCLUSTER=2
croq_persistent_cluster2_turns_bn256_s4 gemm_persistent_f16_co -DBN=256 -DSTAGES=4 -DSHARED_STAGING -DCLUSTER=2
croq_persistent_cluster2_staged_bn256_s3 gemm_persistent_f16_co -DBN=256 -DSTAGES=3 -DSTAGED_EPILOGUE -DCLUSTER=2
croq_persistent_staged_bn256_bk32_s6 gemm_persistent_f16_co -DBN=256 -DBK=32 -DSTAGES=6 -DSTAGED_EPILOGUE
croq_persistent_staged_bn256_bk32_s6_w0 gemm_persistent_f16_co -DBN=256 -DBK=32 -DSTAGES=6 -DSTAGED_EPILOGUE -DMMA_WAIT0
croq_persistent_staged_bn256_s3_d3 gemm_persistent_f16_co -DBN=256 -DSTAGES=3 -DSTAGED_EPILOGUE --mma-defer-min-slots=3
croq_staged_bn256_s3_d3 gemm_f16_co -DBN=256 -DSTAGES=3 -DSTAGED_EPILOGUE --mma-defer-min-slots=3
croq_stream_k_bn256_s4 gemm_stream_k_co -DBN=256 -DSTAGES=4
croq_stream_k_bn256_s3_d3 gemm_stream_k_co -DBN=256 -DSTAGES=3 --mma-defer-min-slots=3
croq_stream_k_bn128_s6 gemm_stream_k_co -DBN=128 -DSTAGES=6
croq_stream_k_staged_bn256_s3 gemm_stream_k_co -DBN=256 -DSTAGES=3 -DSTAGED_EPILOGUE
croq_stream_k_staged_bn256_s3_d3 gemm_stream_k_co -DBN=256 -DSTAGES=3 -DSTAGED_EPILOGUE --mma-defer-min-slots=3
croq_pingpong_bn128 gemm_pingpong_co -DBN=128
croq_pingpong_ordered_bn128 gemm_pingpong_co -DBN=128 -DORDERED
croq_pingpong_bm64_bn256 gemm_pingpong_co -DBM=64 -DBN=256 -DRING=2
croq_pingpong_cluster2_bn128 gemm_pingpong_co -DBN=128 -DCLUSTER=2
croq_splitk_bn256 gemm_splitk_co -DBN=256 -DSTAGES=4
croq_splitk_bn128 gemm_splitk_co -DBN=128 -DSTAGES=6
croq_splitk_staged_bn128 gemm_splitk_co -DBN=128 -DSTAGES=4 -DSTAGED_EPILOGUE
croq_splitk_turns_bn256 gemm_splitk_co -DBN=256 -DSTAGES=3 -DSHARED_STAGING
croq_splitk_mc2_bn128 gemm_splitk_co -DBN=128 -DSTAGES=6 -DCLUSTER=2
croq_splitk_mc2_bn256 gemm_splitk_co -DBN=256 -DSTAGES=4 -DCLUSTER=2
VARIANTS
cp "$root"/runtime/include/croq_runtime.h "$root"/runtime/lib/croq_runtime.cpp "$out/"
echo "gemm bench: $(wc -l < "$out/variants.txt") variants in $out"
