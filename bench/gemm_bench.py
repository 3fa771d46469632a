"""GEMM benchmark: croq's warp-specialized f16 GEMMs against cuBLAS
(torch.matmul, f16 in and out) measured in the same run. gemm_tma_co is
the Hopper kernel (a single-thread TMA producer, two wgmma consumer
warpgroups, 128x256x64 tiles, 4 stages, f32 output); gemm_tma_grouped_co is it
with a grouped (L2-friendly) tile order; gemm_tma_f16_co is it with f16 output staged in shared memory and stored by TMA (3 stages);
gemm_ws4_co / gemm_ws2_co are the mma.sync kernels (cp.async producer,
ldmatrix, f32 output).
TFLOP/s count 2*M*N*K per call."""
import torch

from benchlib import bench, load_kernels

K = load_kernels()


print(f"{'M=N=K':<8}{'kernel':<24}{'croq TFLOP/s':>14}{'cuBLAS TFLOP/s':>16}{'ratio':>8}")
for size in (4096, 8192):
    a = torch.randn(size, size, device="cuda").half()
    b = torch.randn(size, size, device="cuda").half()
    flops = 2 * size ** 3
    t_ref = bench(lambda: torch.matmul(a, b.T), reps=20, warmup=3)
    ref_tflops = flops / t_ref / 1e9
    for name, dtype in (("gemm_tma_grouped_co", torch.float32),
                        ("gemm_tma_co", torch.float32),
                        ("gemm_tma_f16_co", torch.float16),
                        ("gemm_tma_persistent_co", torch.float32),
                        ("gemm_ws4_co", torch.float32),
                        ("gemm_ws2_co", torch.float32)):
        c = torch.empty(size, size, device="cuda", dtype=dtype)
        kernel = getattr(K, name)
        t = bench(lambda: kernel(a, b, c), reps=20, warmup=3)
        tflops = flops / t / 1e9
        print(f"{size:<8}{name:<24}{tflops:>14.1f}{ref_tflops:>16.1f}"
              f"{tflops / ref_tflops:>8.3f}")
