#!/usr/bin/env python3
"""Round 6 outsiders' harness: the 23 programs of valid/ against torch.

  python check.py prepare OUTDIR   compile every valid/*.co with croq, save to OUTDIR/NAME
  python check.py run OUTDIR       load OUTDIR/NAME with croq.load and check on the GPU
  python check.py _selftest [OUTDIR]   CPU self-test of the checks (torch on CPU; with
                                       OUTDIR, each call's arguments are checked against
                                       the saved module's croq-module.json)

`run` needs torch with CUDA and croq's python sources (no compiler): their
path comes from $CROQ_PY (default "python/src"). Each program runs in a
child process, restarted past a crash or a hang ($OUTSIDERS6_TIMEOUT
seconds a program, default 60). The last line is
`outsiders6: N passed, M failed`.

Each check builds its inputs from the program's `// REF:` comment and its
`__co__` signature, poisons the outputs (NaN, or an unlikely integer), runs
the kernel at several shapes (the smallest legal one, ragged tails, and
grids far past 132 blocks where the program allows) and compares with a
float64 reference. Two programs (r7_17, r7_19) are also called with a shape
their host checks must refuse. r7_01 and r7_09 do not compile yet (see
README.md): their checks report COMPILE-FAIL until they do.
"""
import math
import os
import sys

# harness.py (test/Outsiders/) holds the runner and the helpers; this file
# runs as a script from any directory, and `run` starts it again as the child.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from harness import (G, Failure, call, check, close, dev, equal,  # noqa: E402
                     garbage, main, randint, shaped, uniform, T)
from harness import (gemm_close as _gemm_close, gemm_operands as _operands,
                     gemm_ref as _gemm_ref, plain_gemm as _plain_gemm,
                     gemm_scale as _scale, rms as _rms,
                     round_to as _round_to)  # noqa: E402


# --------------------------------------------------------------------------
# helpers of this round
# --------------------------------------------------------------------------
def _refused(what, fn, *args):
    """A call whose host checks must refuse it (croq.CroqError): a chunkat
    count that does not divide, a failed host assertion. In the CPU
    self-test the fake module refuses nothing; only the arguments are
    checked."""
    if G.get("selftest"):
        call(fn, *args)
        return
    try:
        call(fn, *args)
    except Exception as e:
        if type(e).__name__ == "CroqError":
            return
        raise Failure(f"{what}: refused with {type(e).__name__}, not CroqError: {e}")
    raise Failure(f"{what}: the call was not refused")


# --------------------------------------------------------------------------
# the checks, one per program
# --------------------------------------------------------------------------
#
# The programs' constraints, read from their code and docs/Language.md:
# - A TMA copy needs every row of its global tensor a multiple of 16 bytes
#   apart: K % 8 for f16/bf16 operands loaded by TMA, K % 16 for fp8 ones,
#   N % 8 for an f16/bf16 result stored by `tma.copy` (r7_07, r7_23), H % 8
#   for r7_20's hidden tensor (kernel 2 loads it by TMA). TMA loads past
#   the tensor read zero, so M, N and K are otherwise ragged.
# - `dma.copy` of a tail tile zero-fills the part past the tensor; stores
#   (`dma.copy`, `mma.store`) into a tail tile are clipped: any shape.
# - chunkat needs its counts to divide (r7_17: M % 4, N % 8).
#
# GEMM inputs: "float" runs use uniform(-1, 1) values and a tolerance of
# about 1e-2 relative to the result's scale; "int" runs use small integers
# whose products and partial sums are exact in the accumulator, so the
# result is exact (f32 results) or is the exact sum rounded once to the
# output type, and is compared exactly.


@check("r7_01_pingpong_persistent_f16")
def _(m):
    # TMA: K % 8; clipped f16 mma.store (any N). 132 persistent blocks over
    # 128 x 128 tiles: 1, 4, 1 tile(s), then 3 x 4 = 12, 16 x 16 = 256 (two
    # rounds: both consumers of a block work) and 32 x 32 = 1024 (eight).
    _plain_gemm(m, "r7_pingpong_persistent", "float16", "float16",
                [(1, 8, 8), (129, 136, 72), (128, 128, 64), (300, 500, 1024),
                 (2000, 2000, 128), (4000, 4000, 64)],
                [(130, 264, 520), (1, 1, 8)])


@check("r7_02_pingpong_bias_silu_bf16")
def _(m):
    # TMA: K % 8; clipped bf16 mma.store. A block owns 4 tiles of 64 x 128
    # (consumers alternate); (3000, 2100): 47 x 5 = 235 blocks.
    torch = T()
    F = torch.nn.functional
    for M, N, K in [(1, 1, 8), (65, 130, 72), (64, 512, 64), (200, 1000, 520),
                    (3000, 2100, 64), (100, 600, 1024)]:
        a, b = _operands(M, N, K, torch.bfloat16, "float")
        bias = uniform((N,), dtype=torch.bfloat16)
        c = garbage((M, N), torch.bfloat16)
        call(m.r7_pingpong_bias_silu, a, b, bias, c)
        ref = F.silu(_gemm_ref(a, b) + bias.double())
        sc = _scale(K, a, b)
        shaped("r7_pingpong_bias_silu", (M, N, K), lambda: close("c", c, ref, 1e-2 * sc, 1e-2))


@check("r7_03_cluster_mcast_bf16")
def _(m):
    # TMA: K % 8; clipped f32 store. Row tiles of 128 rounded up to clusters
    # of 2: (257, ...) has 3 row tiles in 4 blocks (the last loads zeros and
    # stores nothing); (2000, 1100): 16 x 9 = 144 blocks.
    _plain_gemm(m, "r7_cluster_mcast", "bfloat16", "float32",
                [(1, 1, 8), (129, 130, 72), (257, 200, 200), (128, 128, 64),
                 (2000, 1100, 128), (300, 64, 1024)],
                [(300, 300, 264)])


@check("r7_04_cluster_sync_mcast_affine")
def _(m):
    # D = 128 fixed; blocks of 32 rows rounded up to clusters of 4:
    # R = 129 has 5 row tiles in 8 blocks; R = 10000: 313 tiles, 316 blocks.
    torch = T()
    for R in [1, 31, 33, 128, 129, 10000]:
        x = torch.randn(R, 128, device=dev())
        w = torch.randn(128, device=dev())
        bv = torch.randn(128, device=dev())
        y = garbage((R, 128), torch.float32)
        call(m.r7_cluster_bcast_affine, x, w, bv, y)
        ref = x.double() * w.double() + bv.double()
        shaped("r7_cluster_bcast_affine", (R,), lambda: close("y", y, ref, 1e-6, 1e-6))


@check("r7_05_splitk_workspace_f16")
def _(m):
    # TMA: K % 8; f16 result by element stores (any N). 4 splits of
    # cdiv(cdiv(K, 64), 4) K tiles: K = 72 leaves splits 2 and 3 empty,
    # K = 520 (9 tiles, 3 a split) leaves split 3 empty. (1000, 1000):
    # 16 x 8 x 4 = 512 blocks.
    torch = T()
    for kind, (M, N, K) in [("float", (1, 1, 8)), ("float", (65, 130, 72)), ("float", (64, 128, 64)),
                            ("float", (200, 300, 1000)), ("float", (1000, 1000, 520)),
                            ("int", (130, 264, 256))]:
        a, b = _operands(M, N, K, torch.float16, kind)
        if kind == "int":
            bias = randint((N,), -3, 4).half()
        else:
            bias = uniform((N,), dtype=torch.float16)
        c = garbage((M, N), torch.float16)
        call(m.r7_splitk_ws, a, b, bias, c)
        ref = _gemm_ref(a, b) + bias.double()
        if kind == "int":
            ref = _round_to(ref, torch.float16)
        shaped("r7_splitk_ws", (M, N, K, kind), lambda: _gemm_close("c", c, ref, K, a, b, kind))


@check("r7_06_splitk_atomic_bf16")
def _(m):
    # dma.copy: any shape; the split count is an argument (splits past the
    # K tiles add zeros). (1000, 1000, 256, 8): 16 x 16 x 8 = 2048 blocks.
    # Atomics add in any order: integer runs are exact in f32 all the same.
    torch = T()
    for kind, (M, N, K, s) in [("float", (1, 1, 1, 1)), ("float", (65, 70, 100, 3)),
                               ("float", (64, 64, 64, 1)), ("float", (300, 200, 1000, 4)),
                               ("float", (1000, 1000, 256, 8)), ("float", (100, 100, 64, 5)),
                               ("int", (130, 70, 500, 3))]:
        a, b = _operands(M, N, K, torch.bfloat16, kind)
        c = garbage((M, N), torch.float32)
        call(m.r7_splitk_atomic, a, b, c, s)
        ref = _gemm_ref(a, b)
        shaped("r7_splitk_atomic", (M, N, K, s, kind), lambda: _gemm_close("c", c, ref, K, a, b, kind))


@check("r7_07_gemm_bias_gelu_tma_store_bf16")
def _(m):
    # TMA: K % 8 and N % 8 (the bf16 result is TMA-stored, clipped).
    # (2000, 1200): 16 x 10 = 160 blocks.
    torch = T()
    F = torch.nn.functional
    for M, N, K in [(1, 8, 8), (129, 136, 72), (128, 128, 64), (300, 264, 520), (2000, 1200, 128)]:
        a, b = _operands(M, N, K, torch.bfloat16, "float")
        bias = uniform((N,), dtype=torch.bfloat16)
        c = garbage((M, N), torch.bfloat16)
        call(m.r7_gemm_bias_gelu, a, b, bias, c)
        ref = F.gelu(_gemm_ref(a, b) + bias.double(), approximate="tanh")
        sc = _scale(K, a, b)
        shaped("r7_gemm_bias_gelu", (M, N, K), lambda: close("c", c, ref, 1e-2 * sc, 1e-2))


@check("r7_08_fp8_rowscale_residual")
def _(m):
    # e4m3 operands (TMA: K % 16); clipped f16 store. Integer runs: A, B in
    # [-3, 3] (exact in e4m3), row scales 0.5, 1 or 2 and an integer
    # residual: the exact result, rounded once to f16. (1100, 2000):
    # 9 x 16 = 144 blocks.
    torch = T()
    for kind, (M, N, K) in [("float", (1, 1, 16)), ("float", (129, 130, 144)), ("float", (128, 128, 128)),
                            ("float", (300, 200, 1024)), ("float", (1100, 2000, 128)),
                            ("int", (130, 260, 528))]:
        a, b = _operands(M, N, K, torch.float8_e4m3fn, kind)
        if kind == "int":
            rs = 2.0 ** randint((M,), -1, 2).double()
            rs = rs.float()
            r = randint((M, N), -8, 9).half()
        else:
            rs = uniform((M,), 0.5, 2.0)
            r = uniform((M, N), dtype=torch.float16)
        c = garbage((M, N), torch.float16)
        call(m.r7_fp8_rowscale_residual, a, b, rs, r, c)
        ref = _gemm_ref(a, b) * rs.double()[:, None] + r.double()
        if kind == "int":
            ref = _round_to(ref, torch.float16)
        shaped("r7_fp8_rowscale_residual", (M, N, K, kind),
               lambda: _gemm_close("c", c, ref, K, a, b, kind, rtol=2e-2))


@check("r7_09_fp8_e5m2_swap_async")
def _(m):
    # e5m2 operands (TMA: K % 16); clipped f32 store. K <= 128 runs the
    # prologue and epilogue only (no steady-state iteration). Integers in
    # [-3, 3] are exact in e5m2; column scales of 0.5, 1, 2 keep the
    # integer runs exact. (3000, 1000): 47 x 8 = 376 blocks.
    torch = T()
    for kind, (M, N, K) in [("float", (1, 1, 16)), ("float", (65, 130, 144)), ("float", (64, 128, 128)),
                            ("float", (200, 300, 1024)), ("float", (3000, 1000, 256)),
                            ("int", (130, 200, 400))]:
        a, b = _operands(M, N, K, torch.float8_e5m2, kind)
        if kind == "int":
            cs = (2.0 ** randint((N,), -1, 2).double()).float()
        else:
            cs = uniform((N,), 0.5, 2.0)
        c = garbage((M, N), torch.float32)
        call(m.r7_fp8_e5m2_swap, a, b, cs, c)
        ref = _gemm_ref(a, b) * cs.double()
        shaped("r7_fp8_e5m2_swap", (M, N, K, kind),
               lambda: _gemm_close("c", c, ref, K, a, b, kind, rtol=2e-2))


@check("r7_10_ragged_dma_n96_f16")
def _(m):
    # dma.copy: any shape. 128 x 96 tiles; (2000, 1000): 16 x 11 = 176
    # blocks. Integer runs: |sums| <= 9 K <= 1800, exact in f16.
    _plain_gemm(m, "r7_ragged_n96", "float16", "float16",
                [(1, 1, 1), (129, 97, 70), (128, 96, 64), (300, 200, 1000), (2000, 1000, 64)],
                [(130, 100, 200), (3, 5, 7)])


@check("r7_11_flash_attn_bf16")
def _(m):
    # dma.copy: any sequence lengths (key tail masked, query tail clipped).
    # (40, 512, 128): 4 x 40 = 160 blocks. P is rounded to bf16 before
    # P V: about 4e-3 of O's scale (|V| ~ 1).
    torch = T()
    for BH, SQ, SK in [(1, 1, 1), (2, 100, 70), (1, 128, 64), (3, 300, 1000),
                       (64, 256, 256), (40, 512, 128)]:
        q = torch.randn(BH, SQ, 64, device=dev()).bfloat16()
        k = torch.randn(BH, SK, 64, device=dev()).bfloat16()
        v = torch.randn(BH, SK, 64, device=dev()).bfloat16()
        o = garbage((BH, SQ, 64), torch.float32)
        scale = 0.125
        call(m.r7_flash_attn, q, k, v, o, scale)
        p = torch.softmax(q.double() @ k.double().transpose(1, 2) * scale, -1)
        ref = p @ v.double()
        shaped("r7_flash_attn", (BH, SQ, SK), lambda: close("o", o, ref, 2e-2, 2e-2))


@check("r7_12_layernorm_f16")
def _(m):
    # One block per row: R = 10000 is 10000 blocks.
    torch = T()
    F = torch.nn.functional
    for R, D, eps in [(1, 1, 1e-5), (3, 255, 1e-5), (4, 257, 1e-6), (10000, 64, 1e-5), (5, 3000, 1e-5)]:
        x = (torch.randn(R, D, device=dev()) * 2 + 0.5).half()
        w = uniform((D,), 0.5, 1.5, torch.float16)
        bs = uniform((D,), -0.5, 0.5, torch.float16)
        y = garbage((R, D), torch.float16)
        call(m.r7_layernorm, x, w, bs, y, eps)
        ref = F.layer_norm(x.double(), (D,), w.double(), bs.double(), eps)
        shaped("r7_layernorm", (R, D, eps), lambda: close("y", y, ref, 5e-3, 5e-3))


@check("r7_13_add_rmsnorm_warp_bf16")
def _(m):
    # 8 rows a block: R = 10000 is 1250 blocks. H is bf16(X + Res), exact;
    # Y within about one bf16 rounding.
    torch = T()
    for R, D, eps in [(1, 1, 1e-6), (7, 31, 1e-5), (9, 33, 1e-6), (10000, 256, 1e-5), (3, 3000, 1e-6)]:
        x = torch.randn(R, D, device=dev()).bfloat16()
        res = torch.randn(R, D, device=dev()).bfloat16()
        w = uniform((D,), 0.5, 1.5, torch.bfloat16)
        h = garbage((R, D), torch.bfloat16)
        y = garbage((R, D), torch.bfloat16)
        call(m.r7_add_rmsnorm, x, res, w, h, y, eps)
        href = (x.float() + res.float()).bfloat16()
        hd = href.double()
        ref = hd * torch.rsqrt(hd.pow(2).mean(-1, keepdim=True) + eps) * w.double()
        shaped("r7_add_rmsnorm", (R, D, eps), lambda: equal("h", h, href))
        shaped("r7_add_rmsnorm", (R, D, eps), lambda: close("y", y, ref, 1e-3, 1e-2))


@check("r7_14_transpose_batched_f16")
def _(m):
    # Exact. (64, 130, 70): 3 x 5 x 64 = 960 blocks.
    torch = T()
    for B, M, N in [(1, 1, 1), (2, 31, 33), (3, 64, 32), (5, 1000, 300), (64, 130, 70)]:
        x = torch.randn(B, M, N, device=dev()).half()
        y = garbage((B, N, M), torch.float16)
        call(m.r7_transpose_batched, x, y)
        shaped("r7_transpose_batched", (B, M, N), lambda: equal("y", y, x.transpose(1, 2)))


@check("r7_15_histogram_u8")
def _(m):
    # 4096 bytes a block: N = 1_000_000 is 245 blocks. The skewed run
    # piles most bytes into a few bins (contended atomics).
    torch = T()
    for kind, N in [("uniform", 1), ("uniform", 255), ("uniform", 4097), ("uniform", 1_000_000),
                    ("skewed", 300_000)]:
        if kind == "skewed":
            x = (randint((N,), 0, 4) * randint((N,), 0, 2) * 85).to(torch.uint8)
        else:
            x = randint((N,), 0, 256).to(torch.uint8)
        hist = garbage((256,), torch.int32)
        call(m.r7_histogram_u8, x, hist)
        ref = torch.bincount(x.long(), minlength=256)
        shaped("r7_histogram_u8", (N, kind), lambda: equal("H", hist, ref))


@check("r7_16_colsum_atomic_bf16")
def _(m):
    # 64 x 256 panels: (10000, 300) is 157 x 2 = 314 blocks.
    torch = T()
    for R, C in [(1, 1), (63, 255), (65, 257), (10000, 300), (100, 20000)]:
        x = torch.randn(R, C, device=dev()).bfloat16()
        out = garbage((C,), torch.float32)
        call(m.r7_colsum_atomic, x, out)
        ref = x.double().sum(0)
        shaped("r7_colsum_atomic", (R, C), lambda: close("out", out, ref, 1e-5 * math.sqrt(R), 1e-5))


@check("r7_17_chunkat_batched_tiles")
def _(m):
    # M % 4 and N % 8 (chunkat). (64, 100, 64): 64 x 32 = 2048 blocks.
    # (2, 6, 8): 4 does not divide 6, which the host must refuse.
    torch = T()
    for B, M, N in [(1, 4, 8), (3, 12, 40), (2, 400, 800), (64, 100, 64)]:
        x = torch.randn(B, M, N, device=dev())
        cb = torch.randn(N, device=dev())
        sc = torch.randn(B, device=dev())
        y = garbage((B, M, N), torch.float32)
        call(m.r7_chunkat_tiles, x, cb, sc, y)
        ref = x.double() * sc.double()[:, None, None] + cb.double()
        shaped("r7_chunkat_tiles", (B, M, N), lambda: close("y", y, ref, 1e-6, 1e-6))
    for B, M, N in [(2, 6, 8), (2, 8, 12)]:
        x = torch.randn(B, M, N, device=dev())
        y = garbage((B, M, N), torch.float32)
        shaped("r7_chunkat_tiles", (B, M, N),
               lambda: _refused("chunkat that does not divide", m.r7_chunkat_tiles, x,
                                torch.zeros(N, device=dev()), torch.ones(B, device=dev()), y))


@check("r7_18_subspan_tail_affine")
def _(m):
    # Any shape (clipped tiles). (1000, 1000): 32 x 16 = 512 blocks.
    torch = T()
    for M, N in [(1, 1), (31, 65), (32, 64), (33, 63), (1000, 1000)]:
        x = torch.randn(M, N, device=dev()).half()
        cs = torch.randn(N, device=dev())
        rb = torch.randn(M, device=dev())
        y = garbage((M, N), torch.float16)
        call(m.r7_subspan_tail_affine, x, cs, rb, y)
        ref = x.double() * cs.double() + rb.double()[:, None]
        shaped("r7_subspan_tail_affine", (M, N), lambda: close("y", y, ref, 2e-3, 2e-3))


@check("r7_19_swiglu_big_grid_bf16")
def _(m):
    # (8192, 512): 2 x 8192 = 16384 blocks. X [T, 2F + 2] fails the host
    # assertion and must be refused (run last: a host assertion that
    # aborts the process instead would end this check only).
    torch = T()
    F_ = torch.nn.functional
    for Tn, F in [(1, 1), (3, 255), (2, 257), (8192, 512), (100, 3000)]:
        x = (torch.randn(Tn, 2 * F, device=dev()) * 3).bfloat16()
        y = garbage((Tn, F), torch.bfloat16)
        call(m.r7_swiglu, x, y)
        ref = F_.silu(x[:, :F].double()) * x[:, F:].double()
        shaped("r7_swiglu", (Tn, F), lambda: close("y", y, ref, 1e-4, 1e-2))
    x = torch.randn(4, 2 * 10 + 2, device=dev()).bfloat16()
    y = garbage((4, 10), torch.bfloat16)
    shaped("r7_swiglu", (4, 10, "X of 22 columns"),
           lambda: _refused("X [T, 2F + 2] (host assertion)", m.r7_swiglu, x, y))


@check("r7_20_mlp_three_kernels")
def _(m):
    # TMA: K % 8 and H % 8 (kernel 2 loads the hidden tensor by TMA).
    # Kernel 3 is one block per row: M = 2000 is 2000 blocks. The weights
    # are scaled by 1/sqrt(fan-in); hid is rounded to f16 in the kernel and
    # in the reference, which may differ by one f16 ulp where the f32 sums
    # are summed in other orders.
    torch = T()
    for M, K, H, O in [(1, 8, 8, 1), (65, 72, 136, 70), (64, 64, 64, 64), (300, 520, 200, 1000),
                       (2000, 128, 256, 300)]:
        x = uniform((M, K), dtype=torch.float16)
        w1 = (uniform((H, K)) / math.sqrt(K)).half()
        b1 = uniform((H,), -0.1, 0.1)
        w2 = (uniform((O, H)) / math.sqrt(H)).half()
        b2 = uniform((O,), -0.1, 0.1)
        out = garbage((M, O), torch.float32)
        call(m.r7_mlp, x, w1, b1, w2, b2, out)
        hid = torch.relu(x.double() @ w1.double().t() + b1.double()).half().double()
        ref = torch.log_softmax(hid @ w2.double().t() + b2.double(), 1)
        shaped("r7_mlp", (M, K, H, O), lambda: close("out", out, ref, 5e-3, 5e-3))


@check("r7_21_online_softmax_rows")
def _(m):
    # One block per row; C < 128 leaves threads without columns (m = -inf).
    torch = T()
    for R, C in [(1, 1), (2, 127), (3, 128), (4, 129), (1000, 300), (2, 5000)]:
        x = (torch.randn(R, C, device=dev()) * 3).bfloat16()
        y = garbage((R, C), torch.float32)
        call(m.r7_online_softmax, x, y)
        ref = torch.softmax(x.double(), dim=1)
        shaped("r7_online_softmax", (R, C), lambda: close("y", y, ref, 1e-6, 1e-4))


@check("r7_22_batched_gemm_tma3d")
def _(m):
    # TMA of the 3-D tensors: K % 8; a tile past M or N of one batch must
    # read zeros, not the next batch's rows. (64, 128, 128): 2 x 2 x 64 =
    # 256 blocks.
    torch = T()
    for kind, (BT, M, N, K) in [("float", (1, 1, 1, 8)), ("float", (3, 65, 70, 72)),
                                ("float", (2, 64, 64, 64)), ("float", (4, 200, 130, 520)),
                                ("float", (64, 128, 128, 64)), ("int", (5, 100, 70, 136))]:
        if kind == "int":
            a = randint((BT, M, K), -3, 4).half()
            b = randint((BT, N, K), -3, 4).half()
        else:
            a = uniform((BT, M, K), dtype=torch.float16)
            b = uniform((BT, N, K), dtype=torch.float16)
        c = garbage((BT, M, N), torch.float32)
        call(m.r7_batched_gemm, a, b, c)
        ref = a.double() @ b.double().transpose(1, 2)
        shaped("r7_batched_gemm", (BT, M, N, K, kind), lambda: _gemm_close("c", c, ref, K, a, b, kind))


@check("r7_23_pingpong_ready_tma_store")
def _(m):
    # TMA: K % 8, N % 8 (the f16 result is TMA-stored from each consumer's
    # staging buffer). Tiles as in r7_01: up to 1024 over 132 blocks.
    _plain_gemm(m, "r7_pingpong_ready", "float16", "float16",
                [(1, 8, 8), (129, 136, 72), (128, 128, 64), (300, 504, 1024),
                 (2000, 2000, 128), (4000, 4000, 64)],
                [(130, 264, 520), (1, 8, 8)])


if __name__ == "__main__":
    main(__file__, __doc__, "outsiders6", "OUTSIDERS6_TIMEOUT", 60)
