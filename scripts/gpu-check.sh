#!/usr/bin/env bash
# Every GPU check of the project in one place, so that a session's device
# time goes to running, not to typing commands.
#   scripts/gpu-check.sh prepare [TUTORIAL TUNER CUTLASS_INCLUDE]
#       here (LLVM, the build): the suite's bundle, the tutorial's and the
#       Python package's kernels, the GEMM sweep's variants and, given the
#       tuner and CUTLASS, the choreo bench.
#   scripts/gpu-check.sh run OUT [STAGE...]
#       on the GPU machine: each stage (default: all, in this order) under
#       its own timeout, its log in OUT/STAGE.log, its last line printed:
#       suite, python, tutorial, outsiders, outsiders4, outsiders5,
#       outsiders6, outsiders7, outsiders8, outsiders9, sweep, choreo, copy, sanitize.
# What `run` needs travels as the carry paths build/gpu-bundle,
# build/python-gpu, build/tutorial-gpu, build/outsiders, build/outsiders4,
# build/outsiders5, build/outsiders6, build/outsiders7, build/outsiders8, build/outsiders9, build/gemm-bench, build/choreo-bench
# (at most 8 a call).
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
# Where round N's saved modules go: build/outsidersN (round 3's in
# build/outsiders, the first round to have them).
outsiders_dir() { if [ "$1" = 3 ]; then echo outsiders; else echo "outsiders$1"; fi; }
what="${1:-}"
shift || true

case "$what" in
  prepare)
    set -e
    bash test/Integration/gpu/build-bundle.sh build build/gpu-bundle
    bench/build-gemm.sh build build/gemm-bench
    if [ -x /tmp/venv/bin/python ] || python3 -m venv /tmp/venv; then
      /tmp/venv/bin/pip install -q ./python
      rm -rf build/python-gpu
      CROQ_CACHE_DIR="$(mktemp -d)" /tmp/venv/bin/python scripts/python_gpu.py \
        prepare build/python-gpu
      # The outsiders' programs (test/Outsiders/roundN), saved modules in
      # build/outsidersN (round 3's in build/outsiders).
      for round in 3 4 5 6 7 8 9; do
        out="build/$(outsiders_dir "$round")"
        rm -rf "$out"
        CROQ_CACHE_DIR="$(mktemp -d)" /tmp/venv/bin/python \
          "test/Outsiders/round$round/check.py" prepare "$out" | tail -1
      done
    fi
    if [ $# -ge 1 ]; then
      rm -rf build/tutorial-gpu
      python3 scripts/tutorial_gpu.py prepare "$1" build/tutorial-gpu
    fi
    if [ $# -ge 3 ]; then
      python3 bench/choreo_prepare.py "$2" build/choreo-bench
      build/choreo-bench/build.sh "$3" 2
    fi
    du -sh build/gpu-bundle build/gemm-bench build/python-gpu \
      build/tutorial-gpu build/outsiders build/outsiders4 build/outsiders5 build/outsiders6 build/outsiders7 build/outsiders8 build/outsiders9 \
      build/choreo-bench \
      2>/dev/null
    ;;
  run)
    out="${1:?usage: gpu-check.sh run OUT [STAGE...]}"
    shift
    mkdir -p "$out"
    export PATH=/usr/local/cuda/bin:$PATH
    stages=("$@")
    [ ${#stages[@]} -eq 0 ] && stages=(suite python tutorial outsiders outsiders4
                                   outsiders5 outsiders6 sweep choreo sanitize)
    status=0
    for stage in "${stages[@]}"; do
      case "$stage" in
        # Seconds each stage took on an H200 (2026-12-04), with room.
        suite) cmd=(timeout 200 bash test/Integration/gpu/run.sh build/gpu-bundle tests --jobs 15) ;;
        python) cmd=(timeout 90 python3 scripts/python_gpu.py run build/python-gpu) ;;
        tutorial) cmd=(timeout 120 python3 scripts/tutorial_gpu.py run build/tutorial-gpu) ;;
        # A few seconds each on an H100 (2026-12-07); a hang stops at 300.
        outsiders|outsiders[4-9])
          round="${stage#outsiders}"
          round="${round:-3}"
          cmd=(env CROQ_PY="$root/python/src" timeout 300 python3
               "test/Outsiders/round$round/check.py" run "build/$(outsiders_dir "$round")") ;;
        sweep) cmd=(timeout 240 python3 bench/gemm_sweep.py build/gemm-bench --tuning) ;;
        choreo) cmd=(timeout 240 python3 bench/choreo_bench.py build/choreo-bench
                     --timeout 60 --rounds 3 --calls 10) ;;
        copy) cmd=(timeout 120 bash test/Integration/gpu/run.sh build/gpu-bundle copy) ;;
        sanitize) cmd=(timeout 300 bash test/Integration/gpu/run.sh build/gpu-bundle
                       sanitize --jobs 15 --timeout 200) ;;
        *) echo "gpu-check: unknown stage '$stage'" >&2; exit 2 ;;
      esac
      "${cmd[@]}" > "$out/$stage.log" 2>&1
      rc=$?
      [ $rc -eq 124 ] && echo "$stage: cut by its timeout" >> "$out/$stage.log"
      [ $rc -ne 0 ] && status=1
      echo "== $stage (exit $rc): $(grep -v '^\s*$' "$out/$stage.log" | tail -1)"
    done
    exit $status
    ;;
  *)
    sed -n '2,15p' "$0" >&2
    exit 2
    ;;
esac
