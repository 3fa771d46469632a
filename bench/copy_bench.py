"""Copy benchmark: f32 tiles global -> shared -> global through croq.dma.copy
(@copy_f32) and through two TMA copies (copy_tma_bench_co, Croqtile),
against a device-to-device copy (torch's copy_) measured in the same run.
Prints a table; bandwidth counts bytes read plus bytes written."""
import torch

from benchlib import bench, load_kernels

K = load_kernels()


rows = []
for m, n in ((8192, 8192), (16384, 16384), (16384, 16448)):
    src = torch.randn(m, n, device="cuda")
    dst = torch.empty_like(src)
    nbytes = 2 * src.numel() * 4
    t_croq = bench(lambda: K.copy_f32(src, dst))
    assert torch.equal(dst, src)
    dst.zero_()
    t_tma = bench(lambda: K.copy_tma_bench_co(src, dst))
    assert torch.equal(dst, src)
    t_ref = bench(lambda: dst.copy_(src))
    rows.append((f"{m}x{n} f32", nbytes / t_croq / 1e6, nbytes / t_tma / 1e6,
                 nbytes / t_ref / 1e6))

print(f"{'shape':<18}{'croq dma.copy GB/s':>20}{'croq TMA GB/s':>15}"
      f"{'D2D copy GB/s':>16}{'dma/D2D':>9}{'TMA/D2D':>9}")
for name, croq, tma, ref in rows:
    print(f"{name:<18}{croq:>20.0f}{tma:>15.0f}{ref:>16.0f}"
          f"{croq / ref:>9.2f}{tma / ref:>9.2f}")
