#!/usr/bin/env python3
"""Round 8 outsiders' harness: the 25 programs of valid/ against torch,
run by ../harness.py's main() (`prepare OUTDIR`, `run OUTDIR`, `_selftest
[OUTDIR]`; the child's timeout is $OUTSIDERS8_TIMEOUT seconds, default
120; the last line `outsiders8: N passed, M failed`).

Each check poisons the outputs, runs the kernel at the smallest legal
shape, ragged tails in every dimension, odd K-tile counts and grids far
past 132 blocks, and compares with the float64 (or exact integer)
reference of the program's `// REF:` comment. The functions are prefixed
`r9_`. croq compiles all 25 (r9_03 and r9_05, refused when the round
was written, since the session after 76a79e8; see README.md).
"""
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from harness import (G, Failure, call, check, close, dev, equal,  # noqa: E402
                     garbage, main, randint, shaped, uniform, T, cdiv)
from harness import (gemm_close as _gemm_close, gemm_operands as _operands,
                     gemm_ref as _gemm_ref, plain_gemm as _plain_gemm,
                     gemm_scale as _scale, rms as _rms,
                     round_to as _round_to)  # noqa: E402


# --------------------------------------------------------------------------
# helpers of this round
# --------------------------------------------------------------------------
def _u32_from_i64(t):
    torch = T()
    return t.to(torch.uint32)


def _fail(msg):
    raise Failure(msg)


def _popcount(x64):
    torch = T()
    c = torch.zeros_like(x64)
    for i in range(32):
        c += (x64 >> i) & 1
    return c


# --------------------------------------------------------------------------
# The programs' constraints, read from their code and docs/Language.md:
# - dma.copy zero-fills the part of a tail tile past its tensor, and
#   stores (mma.store, dma.copy) are clipped: any shape.
# - TMA copies need rows 16 bytes apart: K % 8 for f16/bf16 operands that
#   TMA loads, M % 8 / N % 8 for r9_19's [K, M] / [K, N] operands, N % 8
#   for r9_25's TMA store of f16 rows.
# GEMM "int" runs use small integers whose sums are exact in f32 and are
# compared exactly (rounded once where the output is f16).
# Shapes: the smallest legal one, tails in M, N and K, K-tile counts of
# 1, 3 (odd), 5 and more, and grids of about a thousand blocks or more.
# --------------------------------------------------------------------------

def _tile_rowsums(S, NB, BN):
    """P[b, m] = sum over the columns of tile b (width BN, clipped) of S."""
    torch = T()
    M, N = S.shape
    Sp = torch.zeros(M, NB * BN, dtype=S.dtype, device=S.device)
    Sp[:, :N] = S
    return Sp.view(M, NB, BN).sum(2).t().contiguous()


# The GEMMs checked the same way (harness.plain_gemm): check, function,
# operand and result dtypes, shapes, shapes in the sanitizer mode.
_PLAIN_GEMMS = [
    # 128 x 128 tiles, K tiles of 64: K = 8 (1), 192 (3), 200 (4, tail),
    # 1000 (16). (4096, 4224): 32 x 33 = 1056 blocks.
    ("r9_01_sync_tma_2wg_shared_tiles", "r9_sync_tma_2wg", "float16", "float32",
     [(1, 1, 8), (129, 130, 200), (128, 128, 192), (300, 500, 1000), (4096, 4224, 72)],
     [(257, 131, 328), (1, 1, 8)]),
    # Any shape. 128 x 128 tiles, K tiles of 32: 1, 3, 5, 32 tiles.
    # (4000, 4000): 32 x 32 = 1024 blocks.
    ("r9_02_dma_4wg_split_loads", "r9_dma_4wg", "bfloat16", "float32",
     [(1, 1, 1), (129, 131, 96), (128, 128, 160), (300, 500, 1000), (4000, 4000, 33)],
     [(257, 130, 75), (3, 5, 7)]),
    # 64 x 128 tiles (two 64-column warpgroup halves), K tiles of 64:
    # 1 (no prefetch), 2, 3 (odd: ends on buffer 0), 16. TMA: K % 8.
    # (3000, 3000): 47 x 24 = 1128 blocks.
    ("r9_03_mixed_sync_tma_async_dma", "r9_mixed_sync_async", "float16", "float32",
     [(1, 1, 8), (65, 129, 128), (64, 128, 192), (300, 500, 1000), (3000, 3000, 72)],
     [(130, 200, 200), (1, 1, 8)]),
    # 128 x 64 tiles, K tiles of 64. TMA (B): K % 8. (4000, 4000): 32 x 63
    # = 2016 blocks.
    ("r9_04_mixed_sync_dma_async_tma", "r9_mixed_async_tma", "float16", "float32",
     [(1, 1, 8), (129, 65, 200), (128, 64, 192), (300, 500, 1000), (4000, 4000, 136)],
     [(257, 70, 328), (1, 1, 8)]),
    # 64 x 128 tiles, K tiles of 64. TMA: K % 8. (3000, 3000): 1128 blocks.
    ("r9_05_async_tma_per_warpgroup", "r9_async_tma_per_wg", "float16", "float32",
     [(1, 1, 8), (65, 129, 200), (64, 128, 192), (300, 500, 1000), (3000, 3000, 72)],
     [(130, 200, 200)]),
    # 192 x 128 tiles, 3 stages, K tiles of 64: 1, 3, 4, 5, 16 tiles.
    # TMA: K % 8. (6000, 4000): 32 x 32 = 1024 blocks.
    ("r9_10_1p3c_ring3_odd_counts", "r9_1p3c_ring3", "float16", "float32",
     [(1, 1, 8), (193, 129, 200), (192, 128, 192), (385, 260, 1000), (6000, 4000, 320),
                 (200, 100, 256)],
     [(400, 300, 328), (1, 1, 8)]),
    # 132 persistent blocks over 64 x 128 tiles: 1; 3 x 2; 63 x 32 = 2016
    # tiles (16 rounds). bf16, K tiles of 32. TMA: K % 8.
    ("r9_17_frag_array_persistent_refill", "r9_frag_array_persistent", "bfloat16", "float32",
     [(1, 1, 8), (129, 200, 96), (64, 128, 160), (300, 500, 1000), (4000, 4000, 40)],
     [(257, 300, 328), (1, 1, 8)]),
    # 256 x 64 tiles, K tiles of 32: 1, 3, 7 (tail), 32. TMA: K % 8.
    # (4000, 4000): 16 x 63 = 1008 blocks.
    ("r9_21_4wg_per_instance_tma", "r9_4wg_per_instance_tma", "float16", "float32",
     [(1, 1, 8), (257, 65, 96), (256, 64, 200), (300, 500, 1000), (4000, 4000, 64)],
     [(513, 130, 328), (1, 1, 8)]),
    # 128 x 64 tiles; B by dma (any N), A by TMA (K % 8).
    # (4000, 4000): 2016 blocks.
    ("r9_24_async_dma_halves_shared", "r9_async_dma_halves", "float16", "float32",
     [(1, 1, 8), (129, 33, 200), (128, 64, 192), (300, 500, 1000), (4000, 4000, 72)],
     [(257, 130, 328), (1, 1, 8)]),
    # f16 output by TMA store: N % 8 and K % 8. 128 x 64 tiles.
    # (4000, 4000): 32 x 63 = 2016 blocks.
    ("r9_25_two_wg_store_block_tma_store", "r9_block_tma_store", "float16", "float16",
     [(1, 8, 8), (129, 72, 200), (128, 64, 192), (300, 504, 1000), (4000, 4000, 64)],
     [(257, 136, 328), (1, 8, 8)]),
]


for _name, _fn, _a, _c, _full, _small in _PLAIN_GEMMS:
    check(_name)(lambda m, fn=_fn, a=_a, c=_c, full=_full, small=_small:
                 _plain_gemm(m, fn, a, c, full, small))


@check("r9_06_apply_acc_epilogue_rowsum")
def _(m):
    # 128 x 96 tiles; TMA (A): K % 8. (3000, 3000): 24 x 32 = 768 blocks;
    # (4000, 3000): 32 x 32 = 1024.
    torch = T()
    for kind, (M, N, K) in [("float", (1, 1, 8)), ("float", (129, 97, 200)), ("float", (128, 96, 192)),
                            ("float", (300, 500, 1000)), ("float", (4000, 3000, 64)),
                            ("int", (257, 200, 328))]:
        a, b = _operands(M, N, K, torch.float16, kind)
        if kind == "int":
            rs = randint((M,), -2, 3).float()
            cb = randint((N,), -5, 6).float()
        else:
            rs = uniform((M,), 0.5, 1.5)
            cb = uniform((N,))
        NB = cdiv(N, 96)
        c = garbage((M, N), torch.float32)
        p = garbage((NB, M), torch.float32)
        call(m.r9_apply_epilogue, a, b, rs, cb, c, p)
        S = _gemm_ref(a, b)
        cref = torch.relu(S * rs.double()[:, None] + cb.double()[None, :])
        pref = _tile_rowsums(S, NB, 96)
        sc = _scale(K, a, b)
        tol = 0 if kind == "int" else 1e-2 * sc
        rt = 0 if kind == "int" else 1e-2
        shaped("r9_apply_epilogue", (M, N, K, kind), lambda: close("C", c, cref, tol * 2, rt))
        shaped("r9_apply_epilogue", (M, N, K, kind),
               lambda: close("P (tile row sums)", p, pref, tol * math.sqrt(96), rt))


@check("r9_07_store_shared_transpose_persistent")
def _(m):
    # 132 persistent blocks over 128 x 64 tiles: 1 tile; 3 x 3 = 9; 24 x 47
    # = 1128 tiles (9 rounds, the last partial). TMA: K % 8.
    torch = T()
    for kind, (M, N, K) in [("float", (1, 1, 8)), ("float", (129, 65, 200)), ("float", (300, 150, 1000)),
                            ("float", (3000, 3000, 64)), ("int", (257, 130, 136))]:
        a, b = _operands(M, N, K, torch.float16, kind)
        bias = randint((N,), -3, 4).float() if kind == "int" else uniform((N,))
        ct = garbage((N, M), torch.float32)
        call(m.r9_store_shared_transpose, a, b, bias, ct)
        ref = _gemm_ref(a, b).t() + bias.double()[:, None]
        shaped("r9_store_shared_transpose", (M, N, K, kind),
               lambda: _gemm_close("Ct", ct, ref, K, a, b, kind))


@check("r9_08_chained_qk_pv_2wg")
def _(m):
    # 128 query rows a block: M = 40000 is 313 blocks; L of 1, 64, 65,
    # 1000 (16 key blocks, a tail).
    torch = T()
    for kind, (M, L) in [("float", (1, 1)), ("float", (129, 65)), ("float", (128, 64)),
                         ("float", (300, 1000)), ("float", (40000, 130)), ("int", (257, 200))]:
        if kind == "int":
            q = randint((M, 64), -3, 4).half()
            k = randint((L, 64), -3, 4).half()
            v = randint((L, 64), -3, 4).half()
        else:
            q = uniform((M, 64), dtype=torch.float16)
            k = uniform((L, 64), dtype=torch.float16)
            v = uniform((L, 64), dtype=torch.float16)
        o = garbage((M, 64), torch.float32)
        call(m.r9_chained_qk_pv, q, k, v, o)
        s = (q.double() @ k.double().t()).half().double()
        ref = s @ v.double()
        if kind == "int":
            shaped("r9_chained_qk_pv", (M, L, kind), lambda: close("O", o, ref, 0, 0))
        else:
            sc = max(1.0, math.sqrt(L) * _rms(s) * _rms(v))
            shaped("r9_chained_qk_pv", (M, L, kind), lambda: close("O", o, ref, 1e-2 * sc, 1e-2))


@check("r9_09_three_kernels_workspace_attention")
def _(m):
    # Kernel 1: cdiv(M, 64) x cdiv(L, 64) blocks (20000 x 130: 313 x 3 =
    # 939); kernel 2: cdiv(M, 8) (2500); kernel 3: cdiv(M, 64).
    torch = T()
    for M, L, scale in [(1, 1, 0.125), (65, 63, 0.125), (64, 64, 0.5), (300, 1000, 0.125),
                        (20000, 130, 0.25), (7, 257, 1.0)]:
        q = uniform((M, 64), dtype=torch.float16)
        k = uniform((L, 64), dtype=torch.float16)
        vt = uniform((64, L), dtype=torch.float16)
        o = garbage((M, 64), torch.float32)
        call(m.r9_attention_3k, q, k, vt, scale, o)
        p = torch.softmax(scale * (q.double() @ k.double().t()), 1).half().double()
        ref = p @ vt.double().t()
        shaped("r9_attention_3k", (M, L, scale), lambda: close("O", o, ref, 2e-3, 1e-2))


def _row_norm_ref(x):
    torch = T()
    xd = x.double()
    mx = xd.amax(1, keepdim=True)
    mn = xd.amin(1, keepdim=True)
    sm = xd.sum(1, keepdim=True)
    C = x.shape[1]
    return (xd - mn) / (mx - mn + 1) + sm / C


@check("r9_11_three_thread_event_rows")
def _(m):
    # 100 persistent blocks over rows: R = 1 (99 blocks do nothing), 99,
    # 100, 101 (one block runs 2 rows), 250 (3 or 2 rows), 1000 (10 each,
    # 5 generations of each slot).
    torch = T()
    for R, C in [(1, 1), (99, 3), (100, 129), (101, 128), (250, 3000), (1000, 200)]:
        x = uniform((R, C), -2.0, 3.0)
        y = garbage((R, C), torch.float32)
        call(m.r9_three_thread_event, x, y)
        shaped("r9_three_thread_event", (R, C),
               lambda: close("Y", y, _row_norm_ref(x), 1e-5 * max(1.0, C / 100), 1e-5))


def _banded_ref(a, b, BM=128, BN=64, BK=64):
    torch = T()
    M, K = a.shape
    N = b.shape[0]
    nk = cdiv(K, BK)
    out = torch.zeros(M, N, dtype=torch.float64, device=a.device)
    ad, bd = a.double(), b.double()
    for bm in range(cdiv(M, BM)):
        ke = min(nk, bm + 1)
        for kb in range(3):
            if kb >= ke:
                continue
            cols = [bn for bn in range(cdiv(N, BN)) if bn % 3 == kb]
            if not cols:
                continue
            r0, r1 = bm * BM, min(M, bm * BM + BM)
            k0, k1 = kb * BK, min(K, ke * BK)
            part = ad[r0:r1, k0:k1] @ bd[:, k0:k1].t()
            for bn in cols:
                c0, c1 = bn * BN, min(N, bn * BN + BN)
                out[r0:r1, c0:c1] = part[:, c0:c1]
    return out


@check("r9_12_banded_k_while_per_block")
def _(m):
    # 128 x 64 tiles. Trip counts ke - kb from 0 to 9. TMA: K % 8.
    # (2000, 4000): 16 x 63 = 1008 blocks.
    torch = T()
    for kind, (M, N, K) in [("float", (1, 1, 8)), ("float", (129, 200, 8)), ("float", (1000, 300, 640)),
                            ("float", (2000, 4000, 200)), ("int", (700, 250, 456)), ("float", (300, 70, 1000))]:
        a, b = _operands(M, N, K, torch.float16, kind)
        c = garbage((M, N), torch.float32)
        call(m.r9_banded_k_while, a, b, c)
        ref = _banded_ref(a, b)
        shaped("r9_banded_k_while", (M, N, K, kind), lambda: _gemm_close("C", c, ref, K, a, b, kind))


@check("r9_13_segment_sum_data_trip")
def _(m):
    # One block a segment: G = 20000 blocks; segment lengths 0 .. 1300
    # (up to 6 chunks, ragged last chunk), empty segments included.
    torch = T()
    for G, maxlen in [(1, 1), (1, 0), (5, 300), (300, 1300), (20000, 100), (3, 2000)]:
        lens = randint((G,), 0, maxlen + 1)
        if G > 2:
            lens[0] = 0
            lens[1] = maxlen
        offs = torch.zeros(G + 1, dtype=torch.int32, device=dev())
        offs[1:] = lens.cumsum(0).to(torch.int32)
        N = max(1, int(offs[-1]))
        x = uniform((N,), -1.0, 1.0)
        if N > 4:
            x[:4] = torch.tensor([0.0, -0.0, 1e-30, -1e-30], device=dev())
        s = garbage((G,), torch.float32)
        p = garbage((G,), torch.int32)
        call(m.r9_segment_sum, x, offs, s, p)
        sref = torch.zeros(G, dtype=torch.float64, device=dev())
        pref = torch.zeros(G, dtype=torch.int64, device=dev())
        seg = torch.repeat_interleave(torch.arange(G, device=dev()), lens.long())
        xs = x[:int(offs[-1])]
        sref.index_add_(0, seg, xs.double())
        pref.index_add_(0, seg, (xs > 0).long())
        shaped("r9_segment_sum", (G, maxlen), lambda: close("S", s, sref, 1e-5 * math.sqrt(maxlen + 1), 1e-5))
        shaped("r9_segment_sum", (G, maxlen), lambda: equal("P", p, pref))


@check("r9_14_device_scalar_results")
def _(m):
    # 128 threads a block: N = 2,000,000 is 15625 blocks. deg -1 (clamped
    # to 0), 3, 10 (clamped to 7).
    torch = T()
    for N, deg in [(1, 3), (127, -1), (129, 10), (2_000_000, 5)]:
        bits64 = torch.randint(0, 2 ** 32, (N,), device=dev(), dtype=torch.int64)
        if N > 3:
            bits64[:3] = torch.tensor([0, 2 ** 32 - 1, 1], device=dev())
        bits = _u32_from_i64(bits64)
        x = uniform((N,), -1.5, 1.5)
        coef = uniform((8,))
        pc = garbage((N,), torch.int32)
        y = garbage((N,), torch.float32)
        z = garbage((N,), torch.float64)
        r = call(m.r9_device_scalars, bits, x, coef, pc, y, z, deg)
        d = min(max(deg, 0), 7)
        cref = _popcount(bits64)
        xd = x.double()
        v = torch.zeros_like(xd)
        for j in range(d, -1, -1):
            v = v * xd + coef.double()[j]
        S = ("r9_device_scalars", (N, deg))
        shaped(*S, lambda: equal("PC", pc, cref))
        shaped(*S, lambda: close("Y", y, cref.double() * v, 1e-4, 1e-5))
        shaped(*S, lambda: equal("Z", z, xd * xd + cref.double()))
        if r != cdiv(N, 128):
            shaped(*S, lambda: _fail(f"returned {r!r}, want {cdiv(N, 128)}"))


def _tile_box_ref(x, TH=48, TW=40):
    torch = T()
    F = torch.nn.functional
    H, W = x.shape
    th, tw = cdiv(H, TH), cdiv(W, TW)
    xp = torch.zeros(th * TH, tw * TW, dtype=torch.float64, device=x.device)
    xp[:H, :W] = x.double()
    tiles = xp.view(th, TH, tw, TW).permute(0, 2, 1, 3).reshape(th * tw, 1, TH, TW)
    box = F.conv2d(F.pad(tiles, (1, 1, 1, 1)), torch.ones(1, 1, 3, 3, dtype=torch.float64, device=x.device))
    z = box.view(th, tw, TH, TW).permute(0, 2, 1, 3).reshape(th * TH, tw * TW)
    return z[:H, :W]


@check("r9_15_transp_pad_ragged_tiles")
def _(m):
    # 48 x 40 tiles: (2000, 3000) is 42 x 75 = 3150 blocks.
    torch = T()
    for H, W in [(1, 1), (49, 41), (48, 40), (47, 39), (2000, 3000), (3, 1000)]:
        x = uniform((H, W))
        y = garbage((W, H), torch.float32)
        z = garbage((H, W), torch.float32)
        call(m.r9_transp_pad, x, y, z)
        shaped("r9_transp_pad", (H, W), lambda: equal("Y", y, x.t()))
        shaped("r9_transp_pad", (H, W), lambda: close("Z", z, _tile_box_ref(x), 1e-5, 1e-6))


@check("r9_16_s8_elements_into_wgmma_tile")
def _(m):
    # 128 x 64 tiles, K tiles of 64. TMA (B): K % 8. (4000, 4000): 32 x 63
    # = 2016 blocks.
    torch = T()
    for kind, (M, N, K) in [("float", (1, 1, 8)), ("float", (129, 65, 200)), ("float", (128, 64, 192)),
                            ("float", (300, 500, 1000)), ("float", (4000, 4000, 72)),
                            ("int", (257, 130, 328))]:
        a = randint((M, K), -128, 128).to(torch.int8)
        if kind == "int":
            b = randint((N, K), -3, 4).half()
        else:
            b = uniform((N, K), dtype=torch.float16)
        c = garbage((M, N), torch.float32)
        call(m.r9_s8_hand_tile, a, b, c)
        ad = 0.5 * a.double()
        ref = ad @ b.double().t()
        shaped("r9_s8_hand_tile", (M, N, K, kind), lambda: _gemm_close("C", c, ref, K, ad, b, kind))


@check("r9_18_frag_array_scalar_ops")
def _(m):
    # 64 x 128 tiles. TMA: K % 8. (4000, 4000): 63 x 32 = 2016 blocks.
    torch = T()
    for kind, (M, N, K), alpha, beta in [("float", (1, 1, 8), 2.0, 0.5), ("float", (65, 129, 200), -0.5, 1.0),
                                         ("float", (4000, 4000, 64), 1.5, -2.0),
                                         ("int", (130, 300, 328), 2.0, 3.0)]:
        a, b = _operands(M, N, K, torch.float16, kind)
        c = garbage((M, N), torch.float32)
        call(m.r9_frag_array_scalar_ops, a, b, c, alpha, beta)
        ref = alpha * _gemm_ref(a, b) + beta
        shaped("r9_frag_array_scalar_ops", (M, N, K, kind),
               lambda: _gemm_close("C", c, ref, K, a, b, kind))


@check("r9_19_colcol_wgmma_2wg_panels")
def _(m):
    # At [K, M], Bt [K, N]: M % 8, N % 8. 128 x 64 tiles, K tiles of 32:
    # 1, 2 (tail), 3, 32. (4096, 4096): 32 x 64 = 2048 blocks.
    torch = T()
    for kind, (M, N, K) in [("float", (8, 8, 1)), ("float", (136, 72, 33)), ("float", (128, 64, 96)),
                            ("float", (1000, 504, 1000)), ("float", (4096, 4096, 32)),
                            ("int", (264, 136, 200))]:
        a, b = _operands(M, N, K, torch.float16, kind)
        at = a.t().contiguous()
        bt = b.t().contiguous()
        c = garbage((M, N), torch.float32)
        call(m.r9_colcol_2wg, at, bt, c)
        ref = _gemm_ref(a, b)
        shaped("r9_colcol_2wg", (M, N, K, kind), lambda: _gemm_close("C", c, ref, K, a, b, kind))


@check("r9_20_rs_register_a_apply_relu")
def _(m):
    # 128 x 64 tiles. TMA: K % 8. (4000, 4000): 2016 blocks.
    torch = T()
    for kind, (M, N, K) in [("float", (1, 1, 8)), ("float", (129, 65, 200)), ("float", (128, 64, 192)),
                            ("float", (300, 500, 1000)), ("float", (4000, 4000, 64)),
                            ("int", (257, 130, 328))]:
        a, b = _operands(M, N, K, torch.float16, kind)
        c = garbage((M, N), torch.float32)
        call(m.r9_rs_relu, a, b, c)
        ar = a.double().clamp(min=0)
        ref = ar @ b.double().t()
        shaped("r9_rs_relu", (M, N, K, kind), lambda: _gemm_close("C", c, ref, K, a, b, kind))


def _prefix_max_ref(a, b, BK=32):
    torch = T()
    K = a.shape[1]
    ad, bd = a.double(), b.double()
    s = torch.zeros(a.shape[0], b.shape[0], dtype=torch.float64, device=a.device)
    mx = torch.full_like(s, float("-inf"))
    for t in range(cdiv(K, BK)):
        s = s + ad[:, t * BK:(t + 1) * BK] @ bd[:, t * BK:(t + 1) * BK].t()
        mx = torch.maximum(mx, s)
    return s, mx


@check("r9_22_acc_read_inside_k_loop")
def _(m):
    # 128 x 64 tiles, K tiles of 32: 1, 3, 7 (tail), 32 tiles. TMA: K % 8.
    # (4000, 4000): 32 x 63 = 2016 blocks.
    torch = T()
    for kind, (M, N, K) in [("float", (1, 1, 8)), ("float", (129, 65, 96)), ("float", (128, 64, 200)),
                            ("float", (300, 500, 1000)), ("float", (4000, 4000, 64)),
                            ("int", (257, 130, 328))]:
        a, b = _operands(M, N, K, torch.bfloat16, kind)
        c = garbage((M, N), torch.float32)
        mx = garbage((M, N), torch.float32)
        call(m.r9_acc_in_loop, a, b, c, mx)
        s, mref = _prefix_max_ref(a, b)
        shaped("r9_acc_in_loop", (M, N, K, kind), lambda: _gemm_close("C", c, s, K, a, b, kind))
        shaped("r9_acc_in_loop", (M, N, K, kind), lambda: _gemm_close("Mx", mx, mref, K, a, b, kind))


def _loop_forms_ref(x):
    torch = T()
    R, C = x.shape
    xd = x.double()
    y = xd.clone()
    if C > 2:
        y[:, 1:C - 1] = xd[:, 0:C - 2] + xd[:, 2:C] - 2 * xd[:, 1:C - 1]
    ev = xd[:, 0::2].sum(1)
    pad = 0 if C % 8 == 0 else 8
    e = ev + float(torch.tensor(float(R * C), dtype=torch.float32)) * 0.001 + pad
    return y, e


@check("r9_23_loop_index_forms")
def _(m):
    # 128 rows a block: R = 100000 is 782 blocks.
    torch = T()
    for R, C in [(1, 1), (1, 2), (3, 3), (129, 9), (100000, 16), (300, 1000)]:
        x = uniform((R, C))
        y = garbage((R, C), torch.float32)
        e = garbage((R,), torch.float32)
        call(m.r9_loop_forms, x, y, e)
        yref, eref = _loop_forms_ref(x)
        shaped("r9_loop_forms", (R, C), lambda: close("Y", y, yref, 1e-5, 1e-6))
        shaped("r9_loop_forms", (R, C), lambda: close("E", e, eref, 1e-4 * max(1.0, math.sqrt(C)), 1e-5))


if __name__ == "__main__":
    main(__file__, __doc__, "outsiders8", "OUTSIDERS8_TIMEOUT", 120)
