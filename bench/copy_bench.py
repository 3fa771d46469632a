"""Copy benchmark: f32 tiles global -> shared -> global, through croq's
cooperative dma.copy (@copy_f32, 64 x 64 tiles; copy_rows_*, tiles of a
few long rows) and through two TMA copies (copy_tma_bench_co, 64 x 128;
copy_rows_tma*, rows of 256), against a device-to-device copy (torch's
copy_) measured in the same run, interleaved. Bandwidth counts bytes read
plus bytes written. Usage: copy_bench.py LIB [BASELINE_LIB], where
BASELINE_LIB holds the first three kernels built by another croq (an A/B
of a compiler change), reported as 'old:' columns.

croq's calls are asynchronous on torch's stream (croq_rt_set_synchronous(0)),
as torch's copy is, and each time is CALLS back-to-back calls between two
events (median over repetitions): a synchronous call would add the host's
wake-up and the next launch's latency to every kernel, which the D2D copy
does not pay."""
import ctypes
import sys

import torch

from benchlib import bench, load_kernels
from croqlib import Kernels

K = load_kernels()
OLD = Kernels(sys.argv[2]) if len(sys.argv) > 2 else None
CALLS = 10
for lib in [K.lib] + ([OLD.lib] if OLD is not None else []):
    lib.croq_rt_set_synchronous.argtypes = [ctypes.c_int]
    lib.croq_rt_set_default_stream.argtypes = [ctypes.c_void_p]
    lib.croq_rt_set_synchronous(0)
    lib.croq_rt_set_default_stream(
        ctypes.c_void_p(torch.cuda.current_stream().cuda_stream))


def timed(fn):
    """Milliseconds per call of fn, over CALLS back-to-back calls."""
    def calls():
        for _ in range(CALLS):
            fn()
    return bench(calls, reps=20, warmup=2) / CALLS

KERNELS = ["copy_f32", "copy_co", "copy_tma_bench_co", "copy_rows_co", "copy_rows_4x2048",
           "copy_rows_16x512", "copy_rows_8x1024_t512", "copy_rows_tma",
           "copy_rows_tma_16"]
OLD_KERNELS = ["copy_f32", "copy_co", "copy_tma_bench_co"]

systems = [(name, getattr(K, name)) for name in KERNELS]
if OLD is not None:
    systems += [("old:" + name, getattr(OLD, name)) for name in OLD_KERNELS]

print(f"{'shape':<18}{'kernel':<26}{'GB/s':>8}{'D2D GB/s':>10}{'/D2D':>7}")
best = {}
for m, n in ((8192, 8192), (16384, 16384), (16384, 16448)):
    src = torch.randn(m, n, device="cuda")
    dst = torch.empty_like(src)
    nbytes = 2 * src.numel() * 4
    for name, fn in systems:
        dst.zero_()
        t = timed(lambda: fn(src, dst))
        torch.cuda.synchronize()
        assert torch.equal(dst, src), name
        t_ref = timed(lambda: dst.copy_(src))
        ratio = t_ref / t
        print(f"{m}x{n} f32{'':<{18 - len(f'{m}x{n} f32')}}{name:<26}"
              f"{nbytes / t / 1e6:>8.0f}{nbytes / t_ref / 1e6:>10.0f}{ratio:>7.3f}")
        best[name] = min(best.get(name, ratio), ratio)
print("worst ratio to the D2D copy over the shapes:")
for name, ratio in best.items():
    print(f"  {name:<26}{ratio:.3f}")
