"""Shared by the GPU benchmarks: loads the kernels' library (argv[1]) and
times a callable with CUDA events (median over repetitions)."""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "test",
                                "Integration", "gpu"))
from croqlib import Kernels  # noqa: E402


def load_kernels():
    return Kernels(sys.argv[1])


def bench(fn, reps=50, warmup=5):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e))
    times.sort()
    return times[len(times) // 2]
