#!/usr/bin/env python3
"""Round 4 outsiders' harness: the 30 programs of valid/ against torch.

  python check.py prepare OUTDIR   compile every valid/*.co with croq, save to OUTDIR/NAME
  python check.py run OUTDIR       load OUTDIR/NAME with croq.load and check on the GPU
  python check.py _selftest [OUTDIR]   CPU self-test of the checks (torch on CPU; with
                                       OUTDIR, each call's arguments are checked against
                                       the saved module's croq-module.json)

`run` needs torch with CUDA and croq's python sources (no compiler): their
path comes from $CROQ_PY (default "python/src"). Each program runs in a
child process, restarted past a crash or a hang ($OUTSIDERS4_TIMEOUT
seconds a program, default 30: several hangs still fit the
stage's 300 s in scripts/gpu-check.sh). The last line is
`outsiders4: N passed, M failed`.

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
from harness import (Failure, _Failure, call, check, close, dev, equal,  # noqa: E402
                     garbage, main, randint, shaped, uniform, T)
from harness import (gemm_close as _gemm_close, gemm_operands as _operands,
                     gemm_ref as _gemm_ref, plain_gemm as _plain_gemm,
                     round_to as _round_to)  # noqa: E402


# --------------------------------------------------------------------------
# the checks, one per program
# --------------------------------------------------------------------------
#
# The programs' constraints, read from their code and docs/Language.md:
# - A TMA copy needs every row of its global tensor a multiple of 16 bytes
#   apart (the host refuses the call otherwise): K % 8 == 0 for f16/bf16
#   operands loaded by TMA, K % 16 == 0 for s8 ones, N % 4 (f32) or N % 8
#   (f16) for an output stored by `tma.copy`. Otherwise TMA loads past the
#   tensor read zero and TMA stores are clipped, so M, N and K are ragged.
# - `dma.copy` of a tail tile zero-fills the part past the tensor, and
#   `mma.store` into a tail tile is clipped: such programs take any shape.
#
# GEMM inputs: "float" runs use uniform(-1, 1) values and a tolerance of
# about 1e-2 relative to the result's scale; "int" runs use small integers
# whose products and partial sums are exact in the accumulator, so the
# result is exact (f32 accumulators) or is the exact sum rounded once to the
# output type, and is compared exactly.


@check("v01_tma_wgmma_4stage_bf16_d1")
def _(m):
    # TMA: K % 8 (bf16 operands), N % 4 (the f32 result is TMA-stored).
    # K up to 16 tiles runs the 4-slot ring round four times; the last
    # float shape is a grid of 16 x 9 = 144 blocks.
    _plain_gemm(m, "gemm_bf16_4stage", "bfloat16", "float32",
                [(1, 4, 8), (65, 132, 72), (64, 128, 64), (200, 260, 1024), (1000, 1100, 256)],
                [(130, 260, 520)])


@check("v02_tma_wgmma_3stage_d2_ready")
def _(m):
    # TMA: K % 8; the f32 result is an mma.store clipped to the tensor (any N).
    # 11 K tiles over 3 slots; the last float shape is 16 x 11 = 176 blocks.
    _plain_gemm(m, "gemm_d2_3stage", "float16", "float32",
                [(1, 1, 8), (65, 200, 72), (64, 192, 64), (130, 400, 704), (1000, 2000, 128)],
                [(100, 193, 200)])


@check("v03_two_producer_warpgroups")
def _(m):
    # TMA: K % 8, N % 8 (the f16 result is TMA-stored). 144 blocks last.
    _plain_gemm(m, "gemm_2prod", "float16", "float16",
                [(1, 8, 8), (65, 136, 72), (64, 128, 64), (130, 264, 520), (1100, 1024, 128)],
                [(70, 136, 200)])


@check("v04_warp_mma_bf16_alpha")
def _(m):
    # dma.copy tiles (zero-filled tails) and clipped mma.store: any shape.
    torch = T()
    shapes = [("float", (1, 1, 1), 1.5), ("float", (33, 65, 40), -0.75), ("float", (32, 64, 32), 1.0),
              ("float", (300, 500, 1000), 0.5), ("float", (1000, 1000, 64), 2.0),   # 32 x 16 blocks
              ("int", (70, 130, 100), 1.5)]
    for kind, (M, N, K), alpha in shapes:
        a, b = _operands(M, N, K, torch.bfloat16, kind)
        c = garbage((M, N), torch.float32)
        call(m.gemm_bf16_warp, a, b, c, alpha)
        ref = alpha * _gemm_ref(a, b)
        shaped("gemm_bf16_warp", (M, N, K, kind, alpha),
               lambda: _gemm_close("c", c, ref, K, a, b, kind))


@check("v05_warp_mma_tf32_relu")
def _(m):
    # REF: relu(a @ b.T) "(tf32 precision)". mma.sync .tf32 reads the f32
    # registers' top 19 bits (the hardware truncates; croq emits no
    # cvt.rna.tf32). Float runs (randn) pass when the result matches, to
    # f32 accumulation error, the product of the truncated operands, of the
    # round-to-nearest ones, or of the plain f32 ones. Integer runs are
    # exact in tf32 and so exact.
    torch = T()

    def trunc(t):
        return (t.view(torch.int32) & ~0x1FFF).view(torch.float32)

    def rna(t):  # round to nearest (ties away) at 10 mantissa bits
        i = t.view(torch.int32)
        return ((i + 0x1000) & ~0x1FFF).view(torch.float32)

    for kind, (M, N, K) in [("float", (1, 1, 1)), ("float", (65, 33, 40)), ("float", (64, 32, 32)),
                            ("float", (1000, 700, 100)),          # 16 x 22 blocks
                            ("int", (100, 70, 200))]:
        if kind == "int":
            a = randint((M, K), -4, 5).float()
            b = randint((N, K), -4, 5).float()
        else:
            a = torch.randn(M, K, device=dev())
            b = torch.randn(N, K, device=dev())
        c = garbage((M, N), torch.float32)
        call(m.gemm_tf32_relu, a, b, c)

        def cmp():
            if kind == "int":
                close("c", c, torch.relu(_gemm_ref(a, b)), 0, 0)
                return
            tol = 1e-4 * math.sqrt(K)
            errs = []
            for name, f in (("truncated-tf32", trunc), ("rounded-tf32", rna), ("f32", lambda t: t)):
                try:
                    close(f"c vs the {name} reference", c, torch.relu(_gemm_ref(f(a), f(b))), tol, 1e-4)
                    return
                except _Failure as e:
                    errs.append(str(e))
            raise Failure(" | ".join(errs))
        shaped("gemm_tf32_relu", (M, N, K, kind), cmp)


@check("v06_warp_mma_s8_dequant")
def _(m):
    # dma.copy tiles: any shape. The s32 sums are exact; the dequantization
    # is f32 (acc * sa[row]) * sb[col] rounded to f16, as the kernel does it,
    # so the reference is computed the same way and allowed one f16 rounding.
    torch = T()
    for M, N, K in [(1, 1, 1), (33, 40, 70), (32, 32, 64), (500, 300, 200), (1000, 1000, 64)]:  # 32 x 32 blocks
        a = randint((M, K), -128, 128, torch.int8)
        b = randint((N, K), -128, 128, torch.int8)
        sa = uniform((M,), 0.005, 0.02)
        sb = uniform((N,), 0.005, 0.02)
        c = garbage((M, N), torch.float16)
        call(m.igemm_dequant, a, b, sa, sb, c)
        acc = _gemm_ref(a, b).round().long()     # exact: |sum| < 2^53
        ref = ((acc.float() * sa[:, None]) * sb[None, :]).half()
        shaped("igemm_dequant", (M, N, K), lambda: close("c", c, ref.double(), 1e-6, 1e-3))


@check("v07_row_sum_sumsq_shared")
def _(m):
    torch = T()
    for M, N in [(1, 1), (3, 128), (5, 129), (200, 1000), (1000, 33), (2, 20000)]:
        x = torch.randn(M, N, device=dev())
        s = garbage((M,), torch.float32)
        q = garbage((M,), torch.float32)
        call(m.row_sums, x, s, q)
        xd = x.double()
        shaped("row_sums", (M, N), lambda: close("s", s, xd.sum(1), 1e-5 * math.sqrt(N), 1e-5))
        shaped("row_sums", (M, N), lambda: close("q", q, (xd * xd).sum(1), 1e-5, 1e-5))


@check("v08_log_softmax_tree")
def _(m):
    torch = T()
    for M, N in [(1, 1), (2, 255), (3, 256), (4, 257), (1000, 300), (2, 5000)]:
        x = torch.randn(M, N, device=dev()) * 3
        y = garbage((M, N), torch.float32)
        call(m.log_softmax, x, y)
        ref = torch.log_softmax(x.double(), dim=1)
        shaped("log_softmax", (M, N), lambda: close("y", y, ref, 1e-4, 1e-5))


@check("v09_layernorm_warp_devfn")
def _(m):
    torch = T()
    F = torch.nn.functional
    for M, N in [(1, 1), (3, 31), (5, 77), (2000, 256), (4, 3000)]:   # 500 blocks for M = 2000
        x = (torch.randn(M, N, device=dev()) * 2 + 0.5).bfloat16()
        g = uniform((N,), 0.5, 1.5)
        b = uniform((N,), -0.5, 0.5)
        y = garbage((M, N), torch.bfloat16)
        call(m.layernorm, x, g, b, y)
        ref = F.layer_norm(x.double(), (N,), g.double(), b.double(), eps=1e-5)
        shaped("layernorm", (M, N), lambda: close("y", y, ref, 1e-2, 1e-2))


@check("v10_transpose_padded_smem")
def _(m):
    torch = T()
    for M, N in [(1, 1), (31, 7), (33, 65), (1000, 1500)]:     # 32 x 47 blocks
        x = torch.randn(M, N, device=dev())
        y = garbage((N, M), torch.float32)
        call(m.transpose, x, y)
        shaped("transpose", (M, N), lambda: equal("y", y, x.t()))


@check("v11_stencil5_clamped_halo")
def _(m):
    torch = T()
    F = torch.nn.functional
    for M, N in [(1, 1), (16, 16), (17, 33), (1, 100), (100, 1), (500, 700)]:   # 32 x 44 blocks
        x = torch.randn(M, N, device=dev())
        y = garbage((M, N), torch.float32)
        call(m.jacobi5, x, y)
        p = F.pad(x.double()[None, None], (1, 1, 1, 1), mode="replicate")[0, 0]
        ref = 0.2 * (p[1:-1, 1:-1] + p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:])
        shaped("jacobi5", (M, N), lambda: close("y", y, ref, 1e-5, 1e-5))


@check("v12_histogram_shared_global_atomics")
def _(m):
    torch = T()
    for N in [1, 1023, 1025, 100000, 2_000_000]:    # 1954 blocks last
        keys = randint((N,), -1_000_000, 1_000_000)
        hist = torch.zeros(64, device=dev(), dtype=torch.int32)   # "hist must start zeroed"
        call(m.hist64, keys, hist)
        ref = torch.bincount((keys & 63).long(), minlength=64)
        shaped("hist64", (N,), lambda: equal("hist", hist, ref))


@check("v13_chunkat_3d_bias")
def _(m):
    torch = T()
    for _rep in range(2):
        x = torch.randn(8, 64, 128, device=dev())
        bias = torch.randn(128, device=dev())
        y = garbage((8, 64, 128), torch.float32)
        call(m.bias3d, x, bias, y)
        ref = (x + bias[None, None, :]) * 0.5       # f32, as the kernel computes it
        shaped("bias3d", (8, 64, 128), lambda: close("y", y, ref, 0, 1e-6))


@check("v14_subspan_step_windows")
def _(m):
    torch = T()
    x = torch.randn(1028, device=dev())
    y = garbage((256,), torch.float32)
    call(m.window_mean, x, y)
    ref = x.double().unfold(0, 8, 4).mean(1)
    shaped("window_mean", (1028,), lambda: close("y", y, ref, 1e-6, 1e-6))


@check("v15_span_as_colsum")
def _(m):
    torch = T()
    for Tn in [1, 7, 500]:
        x = torch.randn(Tn, 1024, device=dev())
        y = garbage((Tn, 32), torch.float32)
        call(m.chunk_colsum, x, y)
        ref = x.double().view(-1, 32, 32).sum(1)
        shaped("chunk_colsum", (Tn,), lambda: close("y", y, ref, 1e-5, 1e-5))


@check("v16_gemv_sqz_rows")
def _(m):
    torch = T()
    for M in [1, 7, 133, 20000]:
        a = torch.randn(M, 256, device=dev())
        v = torch.randn(256, device=dev())
        y = torch.zeros(M, device=dev())      # "y must start zeroed" (atomics add into it)
        call(m.gemv_rows, a, v, y)
        ref = a.double() @ v.double()
        shaped("gemv_rows", (M,), lambda: close("y", y, ref, 2e-4, 1e-5))


@check("v17_saxpy_foreach_tail")
def _(m):
    torch = T()
    for N, alpha in [(1, 2.0), (511, -0.75), (513, 0.5), (1_000_000, 3.25)]:    # 1954 blocks last
        x = torch.randn(N, device=dev())
        y0 = torch.randn(N, device=dev())
        y = y0.clone()
        call(m.saxpy, x, y, alpha)
        ref = alpha * x.double() + y0.double()
        shaped("saxpy", (N, alpha), lambda: close("y", y, ref, 1e-6, 1e-6))


@check("v18_devfn_gelu_bias")
def _(m):
    torch = T()
    F = torch.nn.functional
    for M, N in [(1, 1), (7, 33), (9, 65), (1000, 1000)]:     # 125 x 32 blocks
        x = torch.randn(M, N, device=dev()) * 2
        bias = torch.randn(N, device=dev())
        y = garbage((M, N), torch.float16)
        call(m.bias_gelu, x, bias, y)
        ref = F.gelu(x.double() + bias.double()[None, :])     # the erf form
        shaped("bias_gelu", (M, N), lambda: close("y", y, ref, 1e-3, 2e-3))


@check("v19_println_clamp")
def _(m):
    # Each call prints a host line and, from thread 0 of block 0, a device
    # line; they show up in the log as "    | " lines.
    torch = T()
    for N, lo, hi in [(1, -0.5, 0.75), (255, -1.0, 1.0), (257, 0.0, 0.0), (100000, -2.0, 0.25)]:
        x = torch.randn(N, device=dev()) * 2
        y = garbage((N,), torch.float32)
        call(m.clamp_dbg, x, y, lo, hi)
        shaped("clamp_dbg", (N, lo, hi), lambda: equal("y", y, x.clamp(lo, hi)))


@check("v20_int_bool_params")
def _(m):
    # The result's low 32 bits do not depend on whether the shift is done in
    # 32 or 64 bits (x << shift wraps), so the reference works on the low 32
    # bits and reads them as s32.
    torch = T()
    U = 0xFFFFFFFF

    def s32(v):
        v = v & U
        return v - (v >= (1 << 31)).long() * (1 << 32)
    for N in [1, 127, 129, 500_000]:
        x = randint((N,), -(1 << 31), (1 << 31) - 1)
        for shift, mask, neg in [(0, 0x0FFFFFF0, False), (5, -1, True), (31, -1, False),
                                 (3, 0x55555555, True), (12, -256, False)]:
            y = garbage((N,), torch.int32)
            call(m.shift_mask, x, y, shift, mask, neg)
            v = ((x.long() & U) << shift) & (mask & U)
            ref = s32(-v if neg else v)
            shaped("shift_mask", (N, shift, hex(mask), neg), lambda: equal("y", y, ref))


@check("v21_host_return_crop")
def _(m):
    # `__co__ auto crop_scale(...)` returning `f32 [64, 64] out`: the returned
    # tensor is a trailing output argument `result` the caller allocates
    # (docs/Language.md, python/README.md). The origin is not checked at run
    # time, so every window here lies inside the image.
    torch = T()
    for M, N, r0, c0 in [(64, 64, 0, 0), (100, 200, 30, 117), (1000, 77, 900, 13), (65, 300, 1, 236)]:
        img = torch.randn(M, N, device=dev())
        out = garbage((64, 64), torch.float32)
        call(m.crop_scale, img, r0, c0, out)
        shaped("crop_scale", (M, N, r0, c0), lambda: equal("result", out, 2 * img[r0:r0 + 64, c0:c0 + 64]))


@check("v22_wgmma_store_global_ragged")
def _(m):
    # f16 accumulator (mma.fill.f16). TMA: K % 8. Integer runs use values in
    # [-2, 2] and K <= 256: every partial sum is an integer of at most 1024,
    # exact in f16, so the result is exact. Float runs allow the f16
    # accumulator's rounding (2e-2 of the result's scale). 256 blocks last.
    _plain_gemm(m, "gemm_ragged", "float16", "float16",
                [(1, 1, 8), (65, 70, 72), (64, 64, 64), (200, 300, 256), (1000, 1000, 128)],
                [(130, 70, 256), (1, 65, 8)], rtol=2e-2, int_range=2)


@check("v23_two_wg_smem_tma_store")
def _(m):
    # TMA: K % 8, N % 8 (f16 result TMA-stored). 16 x 12 = 192 blocks last.
    _plain_gemm(m, "gemm_2wg", "float16", "float16",
                [(1, 8, 8), (65, 136, 72), (128, 128, 64), (300, 264, 520), (2000, 1504, 64)],
                [(130, 136, 200)])


@check("v24_persistent_refill_acc")
def _(m):
    # 132 persistent blocks over cdiv(M, 64) * cdiv(N, 128) tiles: 4, 1, 256
    # (two rounds) and 47 x 24 = 1128 (nine rounds). TMA: K % 8.
    _plain_gemm(m, "gemm_persistent", "float16", "float32",
                [(1, 1, 8), (65, 130, 72), (64, 128, 64), (1000, 2000, 128), (3000, 3000, 64)],
                [(200, 300, 200)])


@check("v25_persistent_ws_bias_epilogue")
def _(m):
    # Persistent warp-specialized GEMM + bias, f16 written element-wise
    # (guarded). TMA: K % 8. K = 192 (3 K tiles on a 2-slot ring: the
    # slots' phases shift from tile to tile) and 256 / 376 tiles per grid.
    torch = T()
    for kind, (M, N, K) in [("float", (1, 1, 8)), ("float", (65, 130, 72)), ("float", (64, 128, 192)),
                            ("float", (1000, 2000, 192)), ("float", (3000, 1000, 72)),
                            ("int", (200, 300, 200))]:
        a, b = _operands(M, N, K, torch.float16, kind)
        if kind == "int":
            bias = randint((N,), -8, 9).float()
        else:
            bias = uniform((N,))
        c = garbage((M, N), torch.float16)
        call(m.gemm_ws_bias, a, b, bias, c)
        ref = _gemm_ref(a, b) + bias.double()[None, :]
        if kind == "int":
            ref = _round_to(ref, torch.float16)
        shaped("gemm_ws_bias", (M, N, K, kind), lambda: _gemm_close("c", c, ref, K, a, b, kind))


@check("v26_gemm_bias_silu_bf16")
def _(m):
    # bf16 GEMM + bias + silu (v * sigmoid(v), f32) rounded to bf16: not exact
    # even for integer inputs, so every run uses the tolerance (1e-2 of the
    # result plus 1e-2 of its scale). TMA: K % 8; N tile 96. 16 x 11 blocks.
    torch = T()
    F = torch.nn.functional
    for kind, (M, N, K) in [("float", (1, 1, 8)), ("float", (65, 97, 72)), ("float", (64, 96, 64)),
                            ("float", (130, 500, 520)), ("float", (1000, 1000, 128)),
                            ("int", (100, 200, 136))]:
        a, b = _operands(M, N, K, torch.bfloat16, kind)
        bias = uniform((N,))
        c = garbage((M, N), torch.bfloat16)
        call(m.gemm_silu, a, b, bias, c)
        ref = F.silu(_gemm_ref(a, b) + bias.double()[None, :])
        shaped("gemm_silu", (M, N, K, kind), lambda: _gemm_close("c", c, ref, K, a, b, "float"))


@check("v27_wgmma_colrow_at_a")
def _(m):
    # A is stored [K, M]; REF: c = a.float().T @ b.float().T. TMA of A needs
    # M % 8, of B K % 8; the f32 result is a clipped mma.store (any N).
    torch = T()
    for kind, (M, N, K) in [("float", (8, 1, 8)), ("float", (72, 70, 72)), ("float", (64, 64, 64)),
                            ("float", (200, 130, 520)), ("float", (1000, 1000, 128)),   # 256 blocks
                            ("int", (136, 100, 200))]:
        a_mk, b = _operands(M, N, K, torch.float16, kind)
        a = a_mk.t().contiguous()            # [K, M]
        c = garbage((M, N), torch.float32)
        call(m.gemm_at, a, b, c)
        ref = a.double().t() @ b.double().t()
        shaped("gemm_at", (M, N, K, kind), lambda: _gemm_close("c", c, ref, K, a, b, kind))


@check("v28_dma_pad_conv1d")
def _(m):
    torch = T()
    F = torch.nn.functional
    for B in [1, 3, 1000]:
        x = torch.randn(B, 256, device=dev())
        w = torch.randn(5, device=dev())
        y = garbage((B, 256), torch.float32)
        call(m.conv1d_pad, x, w, y)
        ref = F.conv1d(x.double()[:, None, :], w.double()[None, None, :], padding=2)[:, 0, :]
        shaped("conv1d_pad", (B,), lambda: close("y", y, ref, 1e-5, 1e-5))


@check("v29_dma_transp_batched")
def _(m):
    torch = T()
    x = torch.randn(16, 32, 64, device=dev())
    y = garbage((16, 64, 32), torch.float32)
    call(m.batched_transpose, x, y)
    shaped("batched_transpose", (16, 32, 64), lambda: equal("y", y, x.transpose(1, 2)))


@check("v30_wgmma_s8_n48")
def _(m):
    # s8 wgmma, exact s32. TMA: K % 16. 16 x 21 = 336 blocks last.
    torch = T()
    for M, N, K in [(1, 1, 16), (65, 49, 144), (64, 48, 128), (200, 100, 512), (1000, 1000, 256)]:
        a = randint((M, K), -128, 128, torch.int8)
        b = randint((N, K), -128, 128, torch.int8)
        c = garbage((M, N), torch.int32)
        call(m.igemm_wg, a, b, c)
        ref = _gemm_ref(a, b).round().long()
        shaped("igemm_wg", (M, N, K), lambda: equal("c", c, ref))


if __name__ == "__main__":
    main(__file__, __doc__, "outsiders4", "OUTSIDERS4_TIMEOUT", 30)
