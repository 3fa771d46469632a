"""Copy benchmark: f32 tiles global -> shared -> global, through croq's
cooperative dma.copy (@copy_f32, 64 x 64 tiles; copy_rows_*, tiles of a
few long rows) and through two TMA copies (copy_tma_bench_co, 64 x 128;
copy_rows_tma*, rows of 256), against a device-to-device copy (torch's
copy_) measured in the same run, interleaved. Bandwidth counts bytes read
plus bytes written. Usage: copy_bench.py LIB [BASELINE_LIB], where
BASELINE_LIB holds the first three kernels built by another croq (an A/B
of a compiler change), reported as 'old:' columns."""
import sys

import torch

from benchlib import bench, load_kernels
from croqlib import Kernels

K = load_kernels()
OLD = Kernels(sys.argv[2]) if len(sys.argv) > 2 else None

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
        t = bench(lambda: fn(src, dst))
        assert torch.equal(dst, src), name
        t_ref = bench(lambda: dst.copy_(src))
        ratio = t_ref / t
        print(f"{m}x{n} f32{'':<{18 - len(f'{m}x{n} f32')}}{name:<26}"
              f"{nbytes / t / 1e6:>8.0f}{nbytes / t_ref / 1e6:>10.0f}{ratio:>7.3f}")
        best[name] = min(best.get(name, ratio), ratio)
print("worst ratio to the D2D copy over the shapes:")
for name, ratio in best.items():
    print(f"  {name:<26}{ratio:.3f}")
