#!/usr/bin/env python3
"""Round 5 outsiders' harness: the 24 programs of valid/ against torch.

  python check.py prepare OUTDIR   compile every valid/*.co with croq, save to OUTDIR/NAME
  python check.py run OUTDIR       load OUTDIR/NAME with croq.load and check on the GPU
  python check.py _selftest [OUTDIR]   CPU self-test of the checks (torch on CPU; with
                                       OUTDIR, each call's arguments are checked against
                                       the saved module's croq-module.json)

`run` needs torch with CUDA and croq's python sources (no compiler): their
path comes from $CROQ_PY (default "python/src"). Each program runs in a
child process, restarted past a crash or a hang ($OUTSIDERS5_TIMEOUT
seconds a program, default 30). The last line is
`outsiders5: N passed, M failed`.

Each check builds its inputs from the program's `// REF:` comment and its
`__co__` signature, poisons the outputs (NaN, or an unlikely integer), runs
the kernel at several shapes (ragged tails and grids past 132 blocks where
the program allows) and compares with a float64 reference.
"""
import math
import os
import sys

# harness.py (test/Outsiders/) holds the runner and the helpers; this file
# runs as a script from any directory, and `run` starts it again as the child.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from harness import (G, call, check, close, dev, equal,  # noqa: E402
                     garbage, main, randint, shaped, uniform, T)
from harness import (gemm_close as _gemm_close, gemm_operands as _operands,
                     gemm_ref as _gemm_ref, plain_gemm as _plain_gemm)  # noqa: E402


# --------------------------------------------------------------------------
# the checks, one per program
# --------------------------------------------------------------------------
#
# The programs' constraints, read from their code and docs/Language.md:
# - A TMA copy needs every row of its global tensor a multiple of 16 bytes
#   apart: K % 8 for f16/bf16 operands loaded by TMA, K % 16 for fp8 ones,
#   C % 4 for an f32 tensor, N % 8 for an f16 output stored by `tma.copy`
#   (r6_01) or a bf16 [K, N] operand (r6_06). TMA loads past the tensor read
#   zero, so M, N and K are otherwise ragged.
# - `dma.copy` of a tail tile zero-fills the part past the tensor; stores
#   (`dma.copy`, `mma.store`) into a tail tile are clipped: any shape.
#
# GEMM inputs: "float" runs use uniform(-1, 1) values and a tolerance of
# about 1e-2 relative to the result's scale; "int" runs use small integers
# whose products and partial sums are exact in the accumulator, so the
# result is exact (f32 results) or is the exact sum rounded once to the
# output type, and is compared exactly.


@check("r6_01_ws_gemm_f16_d1")
def _(m):
    # TMA: K % 8, N % 8 (the f16 result is TMA-stored). 128 x 128 tiles;
    # K = 1024 runs the 3-slot ring 16 times; 9 x 16 = 144 blocks last.
    _plain_gemm(m, "r6_gemm_ws_d1", "float16", "float16",
                [(1, 8, 8), (129, 136, 72), (128, 128, 64), (200, 264, 1024), (1100, 2048, 128)],
                [(130, 264, 520)])


@check("r6_02_ws_gemm_bf16_d2")
def _(m):
    # TMA: K % 8; the f32 result is a clipped mma.store (any N). 64 x 128
    # tiles, 4-slot ring (K = 704: 11 tiles); 16 x 9 = 144 blocks last.
    _plain_gemm(m, "r6_gemm_ws_d2", "bfloat16", "float32",
                [(1, 1, 8), (65, 200, 72), (64, 128, 64), (130, 300, 704), (1000, 1100, 128)],
                [(100, 193, 200)])


@check("r6_03_ws_gemm_fp8_1p2c")
def _(m):
    # e4m3 operands (TMA: K % 16), f16 result staged and dma.copy'd
    # (clipped). Integers in [-3, 3] are exact in e4m3; the exact sums are
    # rounded once to f16. 128 x 128 tiles, 9 x 16 = 144 blocks last.
    _plain_gemm(m, "r6_gemm_fp8_1p2c", "float8_e4m3fn", "float16",
                [(1, 1, 16), (129, 130, 144), (128, 128, 128), (200, 300, 1024), (1100, 2000, 128)],
                [(130, 260, 528)])


@check("r6_04_tma_handoff_rowsum")
def _(m):
    # TMA of f32 X: C % 4. 64-row blocks; 157 blocks last.
    torch = T()
    for R, C in [(1, 4), (63, 60), (65, 132), (64, 64), (300, 1000), (10000, 68)]:
        x = torch.randn(R, C, device=dev())
        out = garbage((R,), torch.float32)
        call(m.r6_rowsum_tma_handoff, x, out)
        ref = x.double().sum(1)
        shaped("r6_rowsum_tma_handoff", (R, C), lambda: close("out", out, ref, 1e-5 * math.sqrt(C), 1e-5))


@check("r6_05_wgmma_rs_f16")
def _(m):
    # A (TMA, unswizzled) and B (TMA, swizzled): K % 8; clipped f32
    # mma.store. A * 0.5 is exact in f16 (for these magnitudes).
    torch = T()
    for kind, (M, N, K) in [("float", (1, 1, 8)), ("float", (65, 70, 72)), ("float", (64, 64, 64)),
                            ("float", (200, 130, 520)), ("float", (1000, 1000, 128)),   # 256 blocks
                            ("int", (130, 100, 200))]:
        a, b = _operands(M, N, K, torch.float16, kind)
        c = garbage((M, N), torch.float32)
        call(m.r6_wgmma_rs_f16, a, b, c)
        ref = _gemm_ref(a.double() * 0.5, b)
        shaped("r6_wgmma_rs_f16", (M, N, K, kind), lambda: _gemm_close("c", c, ref, K, a, b, kind))


@check("r6_06_wgmma_rs_bf16_rowcol")
def _(m):
    # A by dma.copy (any K), B [K, N] by TMA: N % 8. relu(A) @ B, f32 out.
    torch = T()
    for kind, (M, N, K) in [("float", (1, 8, 1)), ("float", (65, 136, 70)), ("float", (64, 128, 64)),
                            ("float", (200, 264, 520)), ("float", (1000, 1200, 128)),   # 160 blocks
                            ("int", (130, 200, 136))]:
        a, b_nk = _operands(M, N, K, torch.bfloat16, kind)
        b = b_nk.t().contiguous()          # [K, N]
        c = garbage((M, N), torch.float32)
        call(m.r6_wgmma_rs_bf16_rowcol, a, b, c)
        ref = torch.relu(a.double()) @ b.double()
        shaped("r6_wgmma_rs_bf16_rowcol", (M, N, K, kind),
               lambda: _gemm_close("c", c, ref, K, a, b, kind))


@check("r6_07_wgmma_rs_fp8")
def _(m):
    # e4m3 A from registers, B from shared (TMA: K % 16); clipped f16
    # mma.store. 128 x 64 tiles, 9 x 16 = 144 blocks last.
    _plain_gemm(m, "r6_wgmma_rs_fp8", "float8_e4m3fn", "float16",
                [(1, 1, 16), (129, 65, 144), (128, 64, 128), (200, 130, 1024), (1100, 1000, 128)],
                [(130, 100, 528)])


@check("r6_08_warp_mma_rowcol")
def _(m):
    # dma.copy tiles and a clipped dma.copy store: any shape. B is [K, N].
    torch = T()
    for kind, (M, N, K) in [("float", (1, 1, 1)), ("float", (33, 65, 40)), ("float", (32, 32, 16)),
                            ("float", (300, 200, 1000)), ("float", (500, 500, 64)),   # 16 x 16 blocks
                            ("int", (70, 130, 100))]:
        a, b_nk = _operands(M, N, K, torch.float16, kind)
        b = b_nk.t().contiguous()
        c = garbage((M, N), torch.float32)
        call(m.r6_warp_mma_rowcol, a, b, c)
        ref = a.double() @ b.double()
        shaped("r6_warp_mma_rowcol", (M, N, K, kind), lambda: _gemm_close("c", c, ref, K, a, b, kind))


def _first_argmax(x):
    """The smallest column index of each row's maximum (float64)."""
    torch = T()
    xd = x.double()
    mx = xd.max(1, keepdim=True).values
    C = x.shape[1]
    idx = torch.arange(C, device=x.device).expand_as(xd)
    return torch.where(xd == mx, idx, torch.full_like(idx, C)).min(1).values


@check("r6_09_row_argmax_devfn")
def _(m):
    # Ties go to the smallest column: the integer runs make many.
    torch = T()
    for kind, (R, C) in [("float", (1, 1)), ("float", (5, 31)), ("float", (7, 33)),
                         ("float", (10000, 300)), ("int", (1000, 100)), ("int", (3, 2000))]:
        if kind == "int":
            x = randint((R, C), -3, 4).half()
        else:
            x = torch.randn(R, C, device=dev()).half()
        out = garbage((R,), torch.int32)
        call(m.r6_row_argmax, x, out)
        shaped("r6_row_argmax", (R, C, kind), lambda: equal("out", out, _first_argmax(x)))


@check("r6_10_row_softmax")
def _(m):
    torch = T()
    for R, C in [(1, 1), (2, 255), (3, 256), (4, 257), (1000, 300), (2, 5000)]:
        x = torch.randn(R, C, device=dev()) * 3
        y = garbage((R, C), torch.float32)
        call(m.r6_row_softmax, x, y)
        ref = torch.softmax(x.double(), dim=1)
        shaped("r6_row_softmax", (R, C), lambda: close("y", y, ref, 1e-6, 1e-4))


@check("r6_11_gemm_rowmax")
def _(m):
    # TMA: K % 8; N any (the tail is masked to -inf). 157 blocks last.
    torch = T()
    for kind, (M, N, K) in [("float", (1, 1, 8)), ("float", (65, 129, 72)), ("float", (64, 128, 64)),
                            ("float", (200, 500, 520)), ("float", (10000, 200, 64)),
                            ("int", (130, 300, 200))]:
        a, b = _operands(M, N, K, torch.float16, kind)
        out = garbage((M,), torch.float32)
        call(m.r6_gemm_rowmax, a, b, out)
        ref = _gemm_ref(a, b).amax(1)
        shaped("r6_gemm_rowmax", (M, N, K, kind), lambda: _gemm_close("rowmax", out, ref, K, a, b, kind))


@check("r6_12_silu_ragged")
def _(m):
    # f32 silu rounded to bf16: within about one bf16 rounding.
    torch = T()
    F = torch.nn.functional
    for N in [1, 255, 1023, 1025, 3000, 1_000_000]:      # 977 blocks last
        x = (torch.randn(N, device=dev()) * 4).bfloat16()
        y = garbage((N,), torch.bfloat16)
        call(m.r6_silu_ragged, x, y)
        ref = F.silu(x.double())
        shaped("r6_silu_ragged", (N,), lambda: close("y", y, ref, 1e-5, 8e-3))


@check("r6_13_window_mean_step")
def _(m):
    # W = (S - 8) // 4 + 1 (S = 30 leaves two rows unused). 2000 blocks last.
    torch = T()
    for B, S in [(1, 8), (3, 28), (2, 30), (20, 404)]:
        W = (S - 8) // 4 + 1
        x = torch.randn(B, S, 64, device=dev())
        y = garbage((B, W, 64), torch.float32)
        call(m.r6_window_mean, x, y)
        ref = x.double().unfold(1, 8, 4).mean(-1)
        shaped("r6_window_mean", (B, S), lambda: close("y", y, ref, 1e-6, 1e-5))


@check("r6_14_span_as_colsum")
def _(m):
    torch = T()
    for NB in [1, 7, 500]:
        x = torch.randn(NB, 1024, device=dev()).half()
        out = garbage((NB, 64), torch.float32)
        call(m.r6_span_as_colsum, x, out)
        ref = x.double().view(-1, 16, 64).sum(1)
        shaped("r6_span_as_colsum", (NB,), lambda: close("out", out, ref, 1e-5, 1e-5))


@check("r6_15_fma_async_tiles")
def _(m):
    torch = T()
    for M, N in [(1, 1), (31, 33), (32, 32), (65, 100), (500, 700)]:     # 16 x 22 blocks last
        a = torch.randn(M, N, device=dev())
        b = torch.randn(M, N, device=dev())
        cin = torch.randn(M, N, device=dev())
        out = garbage((M, N), torch.float32)
        call(m.r6_fma_async_tiles, a, b, cin, out)
        ref = a.double() * b.double() + cin.double()
        shaped("r6_fma_async_tiles", (M, N), lambda: close("out", out, ref, 1e-6, 1e-6))


@check("r6_16_gemv_swap")
def _(m):
    # K a multiple of 128 (K = 128: no steady-state iteration). 157 blocks last.
    torch = T()
    for M, K in [(1, 128), (33, 256), (100, 1024), (5000, 384)]:
        a = torch.randn(M, K, device=dev())
        x = torch.randn(K, device=dev())
        y = garbage((M,), torch.float32)
        call(m.r6_gemv_swap, a, x, y)
        ref = a.double() @ x.double()
        shaped("r6_gemv_swap", (M, K), lambda: close("y", y, ref, 1e-5 * math.sqrt(K), 1e-5))


@check("r6_17_gemm_tma_swap_async")
def _(m):
    # f16 accumulator. TMA: K % 8; clipped mma.store. Integer runs use
    # [-2, 2] and K <= 256: partial sums are integers of at most 1024, exact
    # in f16. Float runs allow 2e-2 of the result's scale. 256 blocks last.
    _plain_gemm(m, "r6_gemm_tma_swap", "float16", "float16",
                [(1, 1, 8), (65, 70, 72), (64, 64, 64), (200, 300, 256), (1000, 1000, 128)],
                [(130, 70, 256), (1, 65, 8)], rtol=2e-2, int_range=2)


@check("r6_18_host_pipeline_devfn")
def _(m):
    # `__co__ auto` returning `f32 [N] y`: a trailing output argument.
    torch = T()
    for N in [1, 255, 257, 100_000]:           # 391 blocks last
        for passes, clip in [(0, False), (0, True), (1, False), (3, True), (5, False)]:
            x = torch.randn(N, device=dev()) * 5
            y = garbage((N,), torch.float32)
            call(m.r6_host_pipeline, x, passes, clip, y)
            ref = 3 * torch.tanh(x.double() / 3) if clip else x.double()
            for _p in range(passes):
                ref = ref * 0.5 + 1
            shaped("r6_host_pipeline", (N, passes, clip), lambda: close("y", y, ref, 1e-5, 1e-5))


@check("r6_19_colsumsq_events")
def _(m):
    torch = T()
    for R, C in [(1, 1), (31, 127), (64, 129), (1000, 300), (100, 20000)]:   # 157 blocks last
        x = torch.randn(R, C, device=dev()).half()
        out = garbage((C,), torch.float32)
        call(m.r6_colsumsq_events, x, out)
        ref = x.double().pow(2).sum(0)
        shaped("r6_colsumsq_events", (R, C), lambda: close("out", out, ref, 1e-5, 1e-5))


@check("r6_20_persistent_seed")
def _(m):
    # 132 persistent blocks over cdiv(M, 64) * cdiv(N, 128) tiles: 1, 6,
    # 256 (two rounds) and 47 x 24 = 1128 (nine). f16 accumulation: integer
    # runs in [-2, 2] with K <= 256 are exact.
    _plain_gemm(m, "r6_persistent_seed", "float16", "float16",
                [(1, 1, 8), (130, 129, 72), (64, 128, 64), (1000, 2000, 128), (3000, 3000, 64)],
                [(200, 300, 256), (65, 70, 40)], rtol=2e-2, int_range=2)


@check("r6_21_two_streams")
def _(m):
    # The kernels run on two side streams: the inputs (made on the current
    # stream) are synchronized before the call and the results after it.
    torch = T()
    gpu = not G.get("selftest")
    streams = (torch.cuda.Stream(), torch.cuda.Stream()) if gpu else (None, None)
    for N, P in [(1, 1), (255, 129), (257, 127), (1_000_000, 300_000)]:
        a = torch.randn(N, device=dev())
        b = (torch.randn(P, device=dev()) * 10).bfloat16()
        ya = garbage((N,), torch.float32)
        yb = garbage((P,), torch.bfloat16)
        if gpu:
            torch.cuda.synchronize()
        call(m.r6_two_streams, a, ya, b, yb, streams[0], streams[1])
        if gpu:
            torch.cuda.synchronize()
        shaped("r6_two_streams", (N, P), lambda: equal("ya", ya, 2 * a))
        shaped("r6_two_streams", (N, P), lambda: equal("yb", yb, (b.float() + 1).bfloat16()))


@check("r6_22_rmsnorm_bf16")
def _(m):
    torch = T()
    for R, D, eps in [(1, 1, 1e-6), (3, 31, 1e-5), (5, 77, 1e-6), (1000, 256, 1e-5), (4, 3000, 1e-6)]:
        x = (torch.randn(R, D, device=dev()) * 2).bfloat16()
        w = uniform((D,), 0.5, 1.5, torch.bfloat16)
        y = garbage((R, D), torch.bfloat16)
        call(m.r6_rmsnorm, x, w, y, eps)
        xd = x.double()
        ref = xd * torch.rsqrt(xd.pow(2).mean(-1, keepdim=True) + eps) * w.double()
        shaped("r6_rmsnorm", (R, D, eps), lambda: close("y", y, ref, 1e-3, 1e-2))


@check("r6_23_ch6_pipeline_bf16")
def _(m):
    # dma.copy staging (zero-filled tails) and a clipped dma.copy store: any
    # shape. bf16 result: integer runs' exact sums rounded once to bf16.
    _plain_gemm(m, "r6_ch6_pipeline_bf16", "bfloat16", "bfloat16",
                [(1, 1, 1), (65, 70, 72), (64, 64, 64), (200, 130, 520), (1000, 1000, 128)],
                [(130, 100, 200), (33, 65, 40)])


@check("r6_24_tma_handoff_wgmma")
def _(m):
    # K is fixed at 64; clipped f32 mma.store. 16 x 9 = 144 blocks last.
    torch = T()
    for kind, (M, N) in [("float", (1, 1)), ("float", (65, 129)), ("float", (64, 128)),
                         ("float", (1000, 1100)), ("int", (130, 300))]:
        a, b = _operands(M, N, 64, torch.float16, kind)
        c = garbage((M, N), torch.float32)
        call(m.r6_tma_handoff_wgmma, a, b, c)
        ref = _gemm_ref(a, b)
        shaped("r6_tma_handoff_wgmma", (M, N, kind), lambda: _gemm_close("c", c, ref, 64, a, b, kind))


if __name__ == "__main__":
    main(__file__, __doc__, "outsiders5", "OUTSIDERS5_TIMEOUT", 30)
