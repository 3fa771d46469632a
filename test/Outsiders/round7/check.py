#!/usr/bin/env python3
"""Round 7 outsiders' harness: the 22 programs of valid/ against torch.

  python check.py prepare OUTDIR   compile every valid/*.co with croq, save to OUTDIR/NAME
  python check.py run OUTDIR       load OUTDIR/NAME with croq.load and check on the GPU
  python check.py _selftest [OUTDIR]   CPU self-test of the checks (torch on CPU; with
                                       OUTDIR, each call's arguments are checked against
                                       the saved module's croq-module.json)

`run` needs torch with CUDA and croq's python sources (no compiler): their
path comes from $CROQ_PY (default "python/src"). Each program runs in a
child process, restarted past a crash or a hang ($OUTSIDERS7_TIMEOUT
seconds a program, default 90). The last line is
`outsiders7: N passed, M failed`.

Each check builds its inputs from the program's `// REF:` comment and its
`__co__` signature, poisons the outputs (NaN, or an unlikely integer), runs
the kernel at several shapes (the smallest legal one, ragged tails, and
grids of thousands to tens of thousands of blocks where the program
allows) and compares with a float64 (or exact integer) reference. The
programs prefix their functions `r8_`. All 22 compile (see README.md for
r8_18 and r8_19, which did not at first).
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
def _garbage_u32(shape):
    """harness.garbage has no uint32 entry: an unlikely u32 value."""
    torch = T()
    return torch.full(shape, 0xDEADBEEF, device=dev(), dtype=torch.int64).to(torch.uint32)


def _u32_to_i64(t):
    torch = T()
    return t.to(torch.int64) & 0xFFFFFFFF


# --------------------------------------------------------------------------
# The programs' constraints, read from their code and docs/Language.md:
# - dma.copy zero-fills the part of a tail tile past its tensor and
#   clips stores (mma.store, dma.copy) to the tensor: any shape.
# - TMA copies need rows 16 bytes apart: K % 8 for f16/bf16 operands
#   loaded by TMA (r8_04, r8_05, r8_17), N % 8 for r8_05's TMA store and
#   r8_17's B [K, N].
# GEMM "int" runs use small integers whose sums are exact in the
# accumulator, and compare exactly (rounded once to f16/bf16 outputs).
# --------------------------------------------------------------------------

@check("r8_01_mma_sync_f16_rowrow")
def _(m):
    # 64 x 64 block tiles of 2 x 2 warps. (4000, 4000): 63 x 63 = 3969 blocks.
    _plain_gemm(m, "r8_mma_sync_f16", "float16", "float32",
                [(1, 1, 1), (65, 70, 33), (64, 64, 32), (300, 200, 1000), (4000, 4000, 64)],
                [(130, 100, 70), (3, 5, 7)])


@check("r8_02_mma_sync_bf16_rowcol_bias")
def _(m):
    # B is [K, N] (mma.row.col). 32 x 64 tiles: (3000, 2000): 94 x 32 = 3008 blocks.
    torch = T()
    for kind, (M, N, K) in [("float", (1, 1, 1)), ("float", (33, 65, 17)), ("float", (32, 64, 16)),
                            ("float", (300, 200, 1000)), ("float", (3000, 2000, 48)),
                            ("int", (70, 130, 100))]:
        a, bt = _operands(M, N, K, torch.bfloat16, kind)
        b = bt.t().contiguous()                      # [K, N]
        if kind == "int":
            bias = randint((N,), -3, 4).float()
        else:
            bias = uniform((N,))
        c = garbage((M, N), torch.bfloat16)
        call(m.r8_mma_rowcol_bf16, a, b, bias, c)
        ref = torch.relu(a.double() @ b.double() + bias.double())
        if kind == "int":
            shaped("r8_mma_rowcol_bf16", (M, N, K, kind), lambda: close("c", c, _round_to(ref, torch.bfloat16), 0, 0))
        else:
            sc = _scale(K, a, bt)
            shaped("r8_mma_rowcol_bf16", (M, N, K, kind), lambda: close("c", c, ref, 1e-2 * sc, 1e-2))


@check("r8_03_ring3_d1_dma_f16")
def _(m):
    # 3 stages, K tiles of 64: 1, 3, 5, 7 + a tail, 16 tiles. (2000, 2000): 32 x 32 = 1024 blocks.
    _plain_gemm(m, "r8_ring3_d1", "float16", "float32",
                [(1, 1, 1), (65, 70, 192), (64, 64, 320), (300, 200, 453), (2000, 2000, 128),
                 (100, 100, 1024)],
                [(130, 100, 200), (3, 5, 7)])


@check("r8_04_ring5_d2_tma_bf16")
def _(m):
    # TMA: K % 8. 5 stages, K tiles of 32: 1, 5, 7, 32 tiles. 64 x 80 tiles:
    # (4000, 4000): 63 x 50 = 3150 blocks.
    _plain_gemm(m, "r8_ring5_d2", "bfloat16", "float32",
                [(1, 1, 8), (65, 81, 160), (64, 80, 224), (300, 500, 1000), (4000, 4000, 96)],
                [(130, 170, 200), (1, 1, 8)])


@check("r8_05_ring3_d1_tma_1p2c_f16")
def _(m):
    # TMA: K % 8 and N % 8 (TMA store of f16 rows). 3 stages, K tiles of 64.
    # (3000, 3000): 24 x 24 = 576 blocks.
    _plain_gemm(m, "r8_ring3_1p2c", "float16", "float16",
                [(1, 8, 8), (129, 136, 200), (128, 128, 192), (300, 504, 1000), (3000, 3000, 64)],
                [(130, 264, 328)])


def _collatz_ref(x, cap):
    torch = T()
    x = x.to(torch.int64).clone()
    n = torch.zeros_like(x)
    active = x > 1
    while bool(active.any()):
        n = torch.where(active, n + 1, n)
        over = active & (n > cap)
        n = torch.where(over, torch.full_like(n, -1), n)
        active = active & ~over
        even = (x % 2) == 0
        x = torch.where(active & even, x // 2, torch.where(active, 3 * x + 1, x))
        active = active & (x > 1)
    return n.to(torch.int32)


@check("r8_06_collatz_while_break")
def _(m):
    # 256 threads a block: N = 4,000,000 is 15625 blocks.
    torch = T()
    for N, hi, cap in [(1, 2, 10), (255, 50, 5), (257, 1000, 1000), (4_000_000, 1_000_000, 300),
                       (10000, 100_000_000, 1000)]:
        x = randint((N,), -5, hi)
        if N > 3:
            x[:3] = torch.tensor([1, 0, 27], device=dev(), dtype=torch.int32)
        st = garbage((N,), torch.int32)
        call(m.r8_collatz, x, st, cap)
        shaped("r8_collatz", (N, hi, cap), lambda: equal("Steps", st, _collatz_ref(x, cap)))


@check("r8_07_row_scan_break_continue")
def _(m):
    # 128 rows a block: R = 100000 is 782 blocks.
    torch = T()
    for R, C in [(1, 1), (5, 33), (129, 7), (100000, 20), (300, 1000)]:
        x = randint((R, C), -3, 10)
        if C > 3 and R > 2:
            x[0, :] = 5          # no zero: the whole row
            x[1, 0] = 0          # break at once
        s = garbage((R,), torch.int32)
        cnt = garbage((R,), torch.int32)
        call(m.r8_row_scan, x, s, cnt)
        stop = (x == 0).to(torch.int64).cumsum(1) == 0
        keep = stop & (x > 0)
        sref = (x.to(torch.int64) * keep).sum(1)
        cref = keep.sum(1)
        shaped("r8_row_scan", (R, C), lambda: equal("S", s, sref))
        shaped("r8_row_scan", (R, C), lambda: equal("Cnt", cnt, cref))


def _warp_branches_ref(x):
    torch = T()
    R, C = x.shape
    Cp = cdiv(C, 256) * 256
    xp = torch.zeros(R, Cp, device=x.device, dtype=torch.float64)
    xp[:, :C] = x.double()
    j = torch.arange(Cp, device=x.device) % 256
    w = j // 32
    d = torch.where(xp > 0.5, xp * 4, xp + 2)
    stage = torch.where(w < 4, xp * 2, torch.where(w < 6, xp + 1, d * d))
    rev = stage.view(R, Cp // 256, 256).flip(-1).reshape(R, Cp)
    return (rev - xp)[:, :C]


@check("r8_08_warp_branches_barrier")
def _(m):
    # (20000, 300): 20000 x 2 = 40000 blocks.
    torch = T()
    for R, C in [(1, 1), (3, 255), (2, 257), (20000, 300), (2, 3000)]:
        x = uniform((R, C), -1.0, 2.0)
        y = garbage((R, C), torch.float32)
        call(m.r8_warp_branches, x, y)
        shaped("r8_warp_branches", (R, C), lambda: close("Y", y, _warp_branches_ref(x), 1e-5, 1e-6))


def _nested_ref(x):
    torch = T()
    N = x.numel()
    loc = torch.arange(N, device=x.device) % 256
    g, w, l = loc // 128, (loc // 32) % 4, loc % 32
    y = x.double()
    y = torch.where(((g == 0) & (w == 0)) | (l == 31), y - 1, y)
    y = torch.where((g == 1) & (w >= 2) & (l < 16), x.double() * 10, y)
    return y


@check("r8_09_nested_levels_inthreads")
def _(m):
    # 256 threads a block: N = 5,000,000 is 19532 blocks.
    torch = T()
    for N in [1, 255, 257, 5_000_000]:
        x = uniform((N,))
        y = garbage((N,), torch.float32)
        call(m.r8_nested_inthreads, x, y)
        shaped("r8_nested_inthreads", (N,), lambda: close("Y", y, _nested_ref(x), 1e-6, 1e-6))


@check("r8_10_rotate_select_futures")
def _(m):
    # One block per row: R = 20000 is 20000 blocks. C of 1, 2, 3, 6 chunks.
    torch = T()
    for R, C, pick in [(1, 1, 0), (3, 255, 1), (2, 257, 0), (4, 513, 1), (5, 256 * 5 + 3, 0),
                       (20000, 300, 1)]:
        x = uniform((R, C))
        w = uniform((R, 256))
        z = uniform((R, 256))
        y = garbage((R, C), torch.float32)
        call(m.r8_rotate_select, x, w, z, y, pick)
        c = torch.arange(C, device=dev())
        sel = (z if pick else w).double()[:, c % 256]
        ref = x.double() * 2 + (c // 256).double() + sel
        shaped("r8_rotate_select", (R, C, pick), lambda: close("Y", y, ref, 1e-5, 1e-6))


@check("r8_11_block_scan_warp_shuffle")
def _(m):
    # One block per row: R = 20000 is 20000 blocks.
    torch = T()
    for R, C in [(1, 1), (3, 31), (2, 257), (20000, 100), (4, 5000)]:
        x = randint((R, C), -1000, 1000)
        y = garbage((R, C), torch.int32)
        call(m.r8_block_scan, x, y)
        shaped("r8_block_scan", (R, C), lambda: equal("Y", y, x.to(torch.int64).cumsum(1)))


@check("r8_12_masked_logsoftmax_warp")
def _(m):
    # 8 rows a block: R = 100000 is 12500 blocks.
    torch = T()
    for R, C in [(1, 1), (7, 31), (9, 33), (100000, 64), (3, 3000)]:
        x = (torch.randn(R, C, device=dev()) * 3).half()
        L = randint((R,), 0, C + 3)
        L[0] = C
        y = garbage((R, C), torch.float32)
        call(m.r8_masked_logsoftmax, x, L, y)
        col = torch.arange(C, device=dev())[None, :]
        valid = col < L.clamp(max=C)[:, None]
        xd = x.double().masked_fill(~valid, float("-inf"))
        ls = torch.log_softmax(xd, 1)
        ref = torch.where(valid, ls, torch.zeros_like(ls))
        shaped("r8_masked_logsoftmax", (R, C), lambda: close("Y", y, ref, 1e-5, 1e-5))


@check("r8_13_int_types_conversions")
def _(m):
    # 128 threads a block: N = 3,000,000 is 23438 blocks.
    torch = T()
    for N in [1, 127, 129, 3_000_000]:
        x = randint((N,), 0, 256).to(torch.uint8)
        y = randint((N,), -32768, 32768).to(torch.int16)
        z64 = torch.randint(0, 2 ** 32, (N,), device=dev(), dtype=torch.int64)
        z = z64.to(torch.uint32)
        f = uniform((N,), -1e6, 1e6)
        o1 = garbage((N,), torch.int32)
        o2 = _garbage_u32((N,))
        o3 = garbage((N,), torch.uint8)
        o4 = garbage((N,), torch.int8)
        o5 = garbage((N,), torch.float32)
        o6 = garbage((N,), torch.int32)
        o7 = garbage((N,), torch.int32)
        call(m.r8_int_types, x, y, z, f, o1, o2, o3, o4, o5, o6, o7)
        xi, yi = x.to(torch.int64), y.to(torch.int64)
        r1 = (xi * 3 - yi) >> 1
        r2 = z64 // (xi + 1) + z64 % 7
        r3 = (xi + 200) % 256
        r4 = (yi + 128) % 256 - 128
        r5 = (z64 >> 4).to(torch.float32)
        r6 = torch.trunc(f.double()).to(torch.int64)
        r7 = (z64 > 3000000000).to(torch.int64)
        S = ("r8_int_types", (N,))
        shaped(*S, lambda: equal("O1 (x*3 - y) >> 1", o1, r1))
        shaped(*S, lambda: equal("O2 unsigned div/rem", _u32_to_i64(o2), r2))
        shaped(*S, lambda: equal("O3 u8 wrap", o3, r3))
        shaped(*S, lambda: equal("O4 s8 truncation", o4, r4))
        shaped(*S, lambda: equal("O5 u32 -> f32", o5, r5))
        shaped(*S, lambda: equal("O6 f32 -> s32", o6, r6))
        shaped(*S, lambda: equal("O7 unsigned compare", o7, r7))


def _math_ref(x, w):
    torch = T()
    xd, wd = x.double(), w.double()
    rows = [
        torch.sin(xd), torch.exp2(xd), torch.log1p(xd.abs()), torch.atan2(xd, wd),
        torch.erf(xd), torch.pow(wd, xd), xd * wd + 1, torch.floor(xd),
        torch.sign(xd) * torch.floor(xd.abs() + 0.5), torch.trunc(xd), torch.sigmoid(xd),
        torch.nn.functional.gelu(xd, approximate="tanh"), torch.log1p(torch.exp(xd)),
        torch.nan_to_num(torch.sign(xd), nan=0.0), torch.isfinite(xd).double(),
        torch.tanh(xd) + torch.cosh(xd / 8),
    ]
    return torch.stack(rows)


@check("r8_14_math_builtins")
def _(m):
    # The last 6 elements of X are inf, -inf, NaN, 2.5, -2.5, 0.5 (round:
    # half away from zero). Special values are checked on the rows whose
    # value there is unambiguous (floor, round, trunc, sign, isfinite).
    torch = T()
    for N in [1, 255, 100_000]:
        x = uniform((N,), -10.0, 10.0)
        w = uniform((N,), 0.5, 2.0)
        nsp = 0
        if N >= 16:
            sp = torch.tensor([float("inf"), float("-inf"), float("nan"), 2.5, -2.5, 0.5], device=dev())
            nsp = sp.numel()
            x[-nsp:] = sp
        y = garbage((16, N), torch.float32)
        call(m.r8_math, x, w, y)
        ref = _math_ref(x, w)
        nf = N - nsp
        shaped("r8_math", (N,), lambda: close("Y[:, finite]", y[:, :nf], ref[:, :nf], 1e-5, 1e-5))
        if nsp:
            rows = [7, 8, 9, 13, 14]
            shaped("r8_math", (N, "special"),
                   lambda: close("Y[floor, round, trunc, sign, isfinite][:, special]",
                                 y[rows, nf:], ref[rows, nf:], 0, 0))


def _host_seq_ref(x, a, b, shift, iters):
    torch = T()
    xd = x.double()
    y = torch.relu(a * xd + b)
    mx = y.amax(0)
    C = x.shape[1]
    if shift > 0:
        idx = (torch.arange(C, device=x.device) + shift) % C
        z = y / (mx + 1) + xd[:, idx]
    else:
        z = y - mx
    for _ in range(iters):
        z = z * 0.5 + 1
    return z


@check("r8_15_host_sequence")
def _(m):
    # The returned tensor is the trailing argument. (1000, 3000): 63 x 188 blocks.
    torch = T()
    for R, C, a, b, shift, iters in [(1, 1, 1.5, -0.25, 0, 0), (17, 33, 2.0, 0.5, 5, 3),
                                     (300, 1000, -1.0, 0.25, 0, 2), (1000, 3000, 0.5, 0.0, 1, 1)]:
        x = uniform((R, C))
        z = garbage((R, C), torch.float32)
        call(m.r8_host_sequence, x, a, b, shift, iters, z)
        ref = _host_seq_ref(x, a, b, shift, iters)
        shaped("r8_host_sequence", (R, C, shift, iters), lambda: close("Z", z, ref, 1e-5, 1e-5))


@check("r8_16_views_window_step_sqz")
def _(m):
    # Kernel 1: B blocks (20000); kernel 2: (1000, 1000) is 125 x 125 blocks.
    torch = T()
    for H, W, B in [(16, 16, 1), (17, 33, 5), (100, 37, 40), (1000, 1000, 20000)]:
        x = uniform((H, W))
        h8, w8 = cdiv(H, 8), cdiv(W, 8)
        o = garbage((B, 16, 16), torch.float32)
        d = garbage((4 * h8, 4 * w8), torch.float32)
        call(m.r8_views, x, o, d)
        bi = torch.arange(B, device=dev())
        oy = (7 * bi) % (H - 16 + 1)
        ox = (13 * bi) % (W - 16 + 1)
        r = oy[:, None, None] + torch.arange(16, device=dev())[None, :, None]
        c = ox[:, None, None] + torch.arange(16, device=dev())[None, None, :]
        oref = x.double()[r, c]
        xp = torch.zeros(8 * h8, 8 * w8, device=dev(), dtype=torch.float64)
        xp[:H, :W] = x.double()
        dref = xp.view(h8, 8, w8, 8)[:, :4, :, :4].reshape(4 * h8, 4 * w8)
        shaped("r8_views", (H, W, B), lambda: equal("O", o, oref.float()))
        shaped("r8_views", (H, W, B), lambda: equal("D", d, dref.float()))


@check("r8_17_wgmma_rowcol_swiz64_bf16")
def _(m):
    # TMA: K % 8, N % 8. B is [K, N]. (4096, 4096): 64 x 64 = 4096 blocks.
    torch = T()
    for kind, (M, N, K) in [("float", (1, 8, 8)), ("float", (65, 72, 40)), ("float", (64, 64, 32)),
                            ("float", (300, 200, 1000)), ("float", (4096, 4096, 64)),
                            ("int", (130, 136, 200))]:
        a, bt = _operands(M, N, K, torch.bfloat16, kind)
        b = bt.t().contiguous()
        c = garbage((M, N), torch.float32)
        call(m.r8_wgmma_rowcol, a, b, c)
        ref = a.double() @ b.double()
        shaped("r8_wgmma_rowcol", (M, N, K, kind), lambda: _gemm_close("c", c, ref, K, a, bt, kind))


@check("r8_18_grid_y_past_65535")
def _(m):
    # The grid is [cdiv(C, 64), R]: R = 70000 passes CUDA's 65535 limit of
    # grid y, so croq launches it linearized into x.
    torch = T()
    for R, C in [(1, 1), (3, 65), (1000, 1000), (65535, 64), (70000, 64)]:
        x = uniform((R, C))
        s = uniform((R,))
        bc = uniform((C,))
        y = garbage((R, C), torch.float32)
        call(m.r8_grid_y, x, s, bc, y)
        ref = x.double() * s.double()[:, None] + bc.double()
        shaped("r8_grid_y", (R, C), lambda: close("Y", y, ref, 1e-6, 1e-6))


@check("r8_19_while_tree_reduction")
def _(m):
    # One block per row: R = 30000 is 30000 blocks.
    torch = T()
    for R, C in [(1, 1), (3, 255), (2, 257), (30000, 64), (4, 5000)]:
        x = uniform((R, C))
        s = garbage((R,), torch.float32)
        mx = garbage((R,), torch.float32)
        call(m.r8_while_reduce, x, s, mx)
        shaped("r8_while_reduce", (R, C), lambda: close("S", s, x.double().sum(1), 1e-5 * math.sqrt(C), 1e-5))
        shaped("r8_while_reduce", (R, C), lambda: equal("Mx", mx, x.double().amax(1).float()))


@check("r8_20_persistent_mma_sync_break")
def _(m):
    # 132 persistent blocks over 64 x 32 tiles: 1 tile, then 32 x 63 = 2016
    # (16 rounds). f16 accumulation: float runs with K <= 256 and a loose
    # tolerance; integer runs exact (|sums| <= 4 K <= 800, exact in f16).
    torch = T()
    for kind, (M, N, K) in [("float", (1, 1, 1)), ("float", (65, 33, 17)), ("float", (64, 32, 16)),
                            ("float", (300, 200, 256)), ("float", (2000, 2000, 64)),
                            ("int", (130, 70, 200)), ("int", (2048, 1000, 32))]:
        a, b = _operands(M, N, K, torch.float16, kind, -2, 2)
        c = garbage((M, N), torch.float16)
        call(m.r8_persistent_break, a, b, c)
        ref = _gemm_ref(a, b)
        if kind == "int":
            shaped("r8_persistent_break", (M, N, K, kind), lambda: close("c", c, ref, 0, 0))
        else:
            sc = _scale(K, a, b)
            shaped("r8_persistent_break", (M, N, K, kind), lambda: close("c", c, ref, 2e-2 * sc, 2e-2))


@check("r8_21_yield_elu_huge_grid")
def _(m):
    # 128 threads a block: N = 8,000,000 is 62500 blocks.
    torch = T()
    F = torch.nn.functional
    for N, alpha in [(1, 1.0), (127, 0.5), (129, 1.5), (8_000_000, 1.0)]:
        x = (torch.randn(N, device=dev()) * 3).bfloat16()
        y = garbage((N,), torch.bfloat16)
        call(m.r8_yield_elu, x, y, alpha)
        ref = F.elu(x.double(), alpha)
        shaped("r8_yield_elu", (N, alpha), lambda: close("Y", y, ref, 1e-3, 1e-2))


@check("r8_22_async_swap_mma_sync_colrow")
def _(m):
    # A is [K, M] (mma.col.row). K tiles of 16: 1 (no steady state), 2, 3, 63.
    # (2000, 2000): 63 x 63 = 3969 blocks.
    torch = T()
    for kind, (M, N, K) in [("float", (1, 1, 1)), ("float", (33, 65, 17)), ("float", (32, 32, 16)),
                            ("float", (300, 200, 48)), ("float", (100, 100, 1000)),
                            ("float", (2000, 2000, 64)), ("int", (70, 130, 100))]:
        at, b = _operands(M, N, K, torch.float16, kind)
        a = at.t().contiguous()                       # [K, M]
        c = garbage((M, N), torch.float32)
        call(m.r8_async_swap_colrow, a, b, c)
        ref = at.double() @ b.double().t()
        shaped("r8_async_swap_colrow", (M, N, K, kind), lambda: _gemm_close("c", c, ref, K, at, b, kind))


if __name__ == "__main__":
    main(__file__, __doc__, "outsiders7", "OUTSIDERS7_TIMEOUT", 90)
