#!/usr/bin/env python3
"""Round 9 outsiders' harness (functions prefixed r10_): the 25 programs of
valid/ against torch, run by ../harness.py's main() (`prepare OUTDIR`,
`run OUTDIR`, `_selftest [OUTDIR]`; child timeout $OUTSIDERS9_TIMEOUT,
default 120 s; last line `outsiders9: N passed, M failed`).

Each check poisons the outputs, runs the smallest legal shape, ragged
tails and grids far past 132 blocks, and compares with a float64 or exact
integer reference. r10_14, refused when the round was written
(README.md), compiles since the session after 76a79e8.
"""
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from harness import (G, Failure, call, check, close, dev, equal,  # noqa: E402
                     garbage, main, randint, shaped, uniform, T, cdiv)


def _fail(msg):
    raise Failure(msg)


@check("r10_01_softmax_smem_tree")
def _(m):
    torch = T()
    for R, C in [(1, 1), (3, 127), (5, 129), (20000, 33), (7, 3000)]:
        x = uniform((R, C), -8, 8)
        y = garbage((R, C), torch.float32)
        call(m.r10_softmax_tree, x, y)
        shaped("r10_softmax_tree", (R, C), lambda: close("Y", y, torch.softmax(x.double(), 1), 1e-6, 1e-4))


@check("r10_02_rmsnorm_warp_rows")
def _(m):
    torch = T()
    for R, C in [(1, 1), (5, 31), (9, 33), (20000, 100), (3, 4099)]:
        x = uniform((R, C), -2, 2, torch.float16)
        w = uniform((C,), 0.5, 1.5, torch.float16)
        y = garbage((R, C), torch.float16)
        eps = 1e-5
        call(m.r10_rmsnorm_warp, x, w, y, eps)
        xd = x.double()
        ref = xd * torch.rsqrt(xd.pow(2).mean(1, keepdim=True) + eps) * w.double()
        shaped("r10_rmsnorm_warp", (R, C), lambda: close("Y", y, ref, 2e-3, 2e-3))


@check("r10_03_layernorm_two_pass_while")
def _(m):
    torch = T()
    F = torch.nn.functional
    for R, C in [(1, 1), (3, 255), (4, 257), (10000, 64), (2, 5000)]:
        x = uniform((R, C), -3, 5)
        g = uniform((C,), 0.5, 1.5)
        bt = uniform((C,))
        y = garbage((R, C), torch.bfloat16)
        call(m.r10_layernorm, x, g, bt, y, 1e-5)
        ref = F.layer_norm(x.double(), (C,), g.double(), bt.double(), 1e-5)
        shaped("r10_layernorm", (R, C), lambda: close("Y", y, ref, 2e-2, 1e-2))


@check("r10_04_scan_three_kernels")
def _(m):
    torch = T()
    for N in [1, 511, 512, 513, 1_000_000, 1_048_577]:
        x = randint((N,), -1000, 1000)
        y = garbage((N,), torch.int32)
        call(m.r10_scan3, x, y)
        shaped("r10_scan3", (N,), lambda: equal("Y", y, x.cumsum(0, dtype=torch.int32)))


def _hist_ref(x, lo, w):
    torch = T()
    fb = torch.floor((x - lo) / w)
    ok = (fb >= 0) & (fb < 64)
    k = fb[ok].long()
    key = torch.floor(x[ok] * 1000).long()
    cnt = torch.bincount(k, minlength=64)
    mn = torch.full((64,), 2 ** 30, dtype=torch.int64, device=x.device)
    mx = torch.full((64,), -2 ** 30, dtype=torch.int64, device=x.device)
    mn.scatter_reduce_(0, k, key, "amin")
    mx.scatter_reduce_(0, k, key, "amax")
    return cnt, mn, mx


@check("r10_05_histogram_minmax_atomics")
def _(m):
    torch = T()
    for N in [1, 2047, 2049, 2_048_000, 100]:
        x = uniform((max(N, 0),), -5, 40)
        lo, w = -1.0, 0.5
        c, mn, mx = (garbage((64,), torch.int32) for _ in range(3))
        call(m.r10_hist_minmax, x, c, mn, mx, lo, w)
        rc, rmn, rmx = _hist_ref(x, lo, w)
        shaped("r10_hist_minmax", (N,), lambda: equal("Cnt", c, rc))
        shaped("r10_hist_minmax", (N,), lambda: equal("Mn", mn, rmn))
        shaped("r10_hist_minmax", (N,), lambda: equal("Mx", mx, rmx))


def _stencil_ref(x):
    torch = T()
    F = torch.nn.functional
    xp = F.pad(x.double(), (1, 1, 1, 1))
    return 4 * xp[1:-1, 1:-1] - xp[:-2, 1:-1] - xp[2:, 1:-1] - xp[1:-1, :-2] - xp[1:-1, 2:]


@check("r10_06_stencil_pad_halo")
def _(m):
    torch = T()
    for H, W in [(1, 1), (31, 33), (32, 32), (65, 97), (2000, 2000)]:
        x = uniform((H, W))
        z = garbage((H, W), torch.float32)
        call(m.r10_stencil_halo, x, z)
        shaped("r10_stencil_halo", (H, W), lambda: close("Z", z, _stencil_ref(x), 1e-5, 1e-6))


@check("r10_07_transpose_strided_view")
def _(m):
    torch = T()
    for H, W in [(1, 1), (33, 47), (32, 48), (100, 1), (2000, 2000)]:
        x = uniform((H, W), dtype=torch.float16)
        y1 = garbage((W, H), torch.float16)
        y2 = garbage((W, H), torch.float16)
        call(m.r10_transpose2, x, y1, y2)
        shaped("r10_transpose2", (H, W), lambda: equal("Y1", y1, x.t()))
        shaped("r10_transpose2", (H, W), lambda: equal("Y2", y2, x.t()))


@check("r10_08_gather_scatter_index")
def _(m):
    torch = T()
    for RX, D, L, RS in [(1, 1, 1, 1), (10, 33, 601, 7), (500, 64, 5000, 100), (3, 129, 100000, 2)]:
        x = uniform((RX, D))
        i = randint((L,), 0, RX)
        g = garbage((L, D), torch.float32)
        j = randint((L,), -1, RS)
        v = randint((L, D), -100, 100)
        s0 = randint((RS, D), -5, 5)
        s = s0.clone()
        call(m.r10_gather_scatter, x, i, g, j, v, s)
        keep = j >= 0
        sref = s0.long().index_add(0, j[keep].long(), v[keep].long())
        shaped("r10_gather_scatter", (RX, D, L, RS), lambda: equal("G", g, x[i.long()]))
        shaped("r10_gather_scatter", (RX, D, L, RS), lambda: equal("S", s, sref))


@check("r10_09_topk_rows_local")
def _(m):
    torch = T()
    for R, C in [(1, 1), (3, 3), (129, 4), (200000, 17), (5, 1000)]:
        x = torch.stack([torch.randperm(C, device=dev()).float() * 0.5 - C / 4 for _ in range(R)]) \
            if R <= 200 else (torch.rand(R, C, device=dev()).argsort(1).float() - C / 2)
        v = garbage((R, 4), torch.float32)
        ix = garbage((R, 4), torch.int32)
        call(m.r10_topk4, x, v, ix)
        k = min(4, C)
        tv, ti = torch.topk(x, k, 1)
        vref = torch.full((R, 4), float("-inf"), device=dev())
        iref = torch.full((R, 4), -1, dtype=torch.int64, device=dev())
        vref[:, :k] = tv
        iref[:, :k] = ti
        shaped("r10_topk4", (R, C), lambda: equal("V", v, vref))
        shaped("r10_topk4", (R, C), lambda: equal("Ix", ix, iref))


def _segmax_ref(k, x):
    torch = T()
    N = k.numel()
    head = torch.ones(N, dtype=torch.bool, device=k.device)
    head[1:] = k[1:] != k[:-1]
    seg = head.long().cumsum(0) - 1
    ns = int(seg[-1]) + 1
    mx = torch.full((ns,), float("-inf"), dtype=torch.float64, device=k.device)
    mx.scatter_reduce_(0, seg, x.double(), "amax")
    ln = torch.bincount(seg, minlength=ns)
    M = torch.zeros(N, dtype=torch.float64, device=k.device)
    L = torch.zeros(N, dtype=torch.int64, device=k.device)
    M[head] = mx
    L[head] = ln
    return M, L


@check("r10_10_segmented_max_heads")
def _(m):
    torch = T()
    for N, nk in [(1, 1), (255, 3), (257, 257), (1_000_000, 5000), (3000, 1)]:
        k = randint((N,), 0, nk).sort().values.to(torch.int32)
        x = uniform((N,), -10, 10)
        M = garbage((N,), torch.float32)
        L = garbage((N,), torch.int32)
        call(m.r10_segmax, k, x, M, L)
        mref, lref = _segmax_ref(k, x)
        shaped("r10_segmax", (N, nk), lambda: equal("M", M, mref.float()))
        shaped("r10_segmax", (N, nk), lambda: equal("Len", L, lref))


def _bisect_ref(x):
    """Replays the kernel's f32 bisection (the step count and result)."""
    torch = T()
    lo = torch.zeros_like(x)
    hi = torch.maximum(torch.ones_like(x), x)
    it = torch.zeros(x.shape, dtype=torch.int32, device=x.device)
    act = (hi - lo) > 1e-4
    while bool(act.any()):
        mid = 0.5 * (lo + hi)
        up = mid * mid * mid > x
        hi = torch.where(act & up, mid, hi)
        lo = torch.where(act & ~up, mid, lo)
        it = it + act.int()
        act = act & ((hi - lo) > 1e-4) & (it < 40)
    return 0.5 * (lo + hi), it


@check("r10_11_bisection_nested_if")
def _(m):
    torch = T()
    for N in [1, 127, 129, 1000, 1_000_000]:
        x = uniform((N,), 0, 1000)
        y = garbage((N,), torch.float32)
        nb = cdiv(N, 128)
        bb = garbage((nb,), torch.int32)
        call(m.r10_bisect, x, y, bb)
        root, it = _bisect_ref(x)
        idx = torch.arange(N, device=dev())
        b, t = idx // 128, idx % 128
        out = torch.where(b % 2 == 1, it.float(), root)
        out = torch.where(t < 32, out + 1, torch.where(t % 3 == 1, -out, out))
        shaped("r10_bisect", (N,), lambda: close("Y", y, out.double(), 1e-4, 1e-5))
        shaped("r10_bisect", (N,), lambda: equal("B", bb, torch.arange(nb, device=dev())))


@check("r10_12_warp_search_break_shuffle")
def _(m):
    torch = T()
    for R, C in [(1, 1), (7, 31), (9, 33), (20000, 200), (3, 5000)]:
        x = uniform((R, C))
        t = uniform((R,), 0.9, 1.05)
        f = garbage((R,), torch.int32)
        call(m.r10_first_above, x, t, f)
        hit = x > t[:, None]
        ref = torch.where(hit.any(1), hit.int().argmax(1), torch.full((R,), C, device=dev()))
        shaped("r10_first_above", (R, C), lambda: equal("F", f, ref))


@check("r10_13_ring3_dma_elementwise_1p1c")
def _(m):
    torch = T()
    for N in [1, 511, 513, 160 * 512 * 3 + 7, 1_000_000]:
        x, yi = uniform((N,)), uniform((N,))
        z = garbage((N,), torch.float32)
        call(m.r10_ring3_axpy, x, yi, z, 1.5)
        ref = 1.5 * x.double() + yi.double() ** 2
        shaped("r10_ring3_axpy", (N,), lambda: close("Z", z, ref, 1e-6, 1e-6))


def _rowstats(m, fn):
    torch = T()
    for R in [1, 15, 17, 16 * 140, 16 * 140 * 3 + 5, 200000]:
        x = uniform((R, 64), -2, 2)
        yn = garbage((R, 64), torch.float32)
        s = garbage((R,), torch.float32)
        call(getattr(m, fn), x, yn, s)
        sref = (x.double() ** 2).sum(1)
        yref = x.double() / torch.sqrt(sref / 64 + 1e-6)[:, None]
        shaped(fn, (R,), lambda: close("S", s, sref, 1e-4, 1e-5))
        shaped(fn, (R,), lambda: close("Yn", yn, yref, 1e-4, 1e-4))


check("r10_14_ring2_tma_rowstats_d2")(lambda m: _rowstats(m, "r10_ring2_rowstats"))
check("r10_25_ring2_tma_rowsums_serial")(lambda m: _rowstats(m, "r10_ring2_rowsums"))


@check("r10_15_ring4_two_consumers_colsum")
def _(m):
    torch = T()
    for R, C in [(1, 1), (33, 255), (32, 257), (129, 40000), (1000, 300)]:
        x = uniform((R, C))
        cs = garbage((C,), torch.float32)
        nb = cdiv(C, 256)
        ns = garbage((nb,), torch.int32)
        call(m.r10_ring4_colsum, x, cs, ns)
        shaped("r10_ring4_colsum", (R, C), lambda: close("Cs", cs, x.double().sum(0), 1e-5 * math.sqrt(R), 1e-5))
        shaped("r10_ring4_colsum", (R, C), lambda: equal("Nsl", ns, torch.full((nb,), cdiv(R, 32), device=dev())))


def _tf32(t):
    torch = T()
    return (t.contiguous().view(torch.int32) & ~0x1FFF).view(torch.float32)


def _gemm(what, out, ref, K, tol):
    close(what, out, ref, tol * max(1.0, math.sqrt(K)), tol)


@check("r10_16_mma_sync_tf32_ragged")
def _(m):
    torch = T()
    for M, N, K in [(1, 1, 1), (33, 31, 13), (32, 32, 8), (300, 500, 1000), (2000, 2000, 24)]:
        a, b = uniform((M, K)), uniform((N, K))
        c = garbage((M, N), torch.float32)
        call(m.r10_mma_tf32, a, b, c)
        ref = _tf32(a).double() @ _tf32(b).double().t()
        shaped("r10_mma_tf32", (M, N, K), lambda: _gemm("C", c, ref, K, 1e-4))


@check("r10_17_mma_sync_s8_epilogue")
def _(m):
    torch = T()
    for M, N, K in [(1, 1, 1), (65, 33, 31), (64, 32, 32), (300, 500, 1000), (2000, 2000, 64)]:
        a = randint((M, K), -128, 128).to(torch.int8)
        b = randint((N, K), -128, 128).to(torch.int8)
        sh = randint((M,), -1000, 1000)
        c = garbage((M, N), torch.int32)
        call(m.r10_mma_s8, a, b, sh, c)
        ref = (a.long() @ b.long().t() + sh.long()[:, None]).clamp(-2 ** 20, 2 ** 20)
        shaped("r10_mma_s8", (M, N, K), lambda: equal("C", c, ref))


@check("r10_18_mma_sync_bf16_colcol")
def _(m):
    torch = T()
    for M, N, K in [(1, 1, 1), (33, 65, 17), (32, 64, 16), (300, 500, 1000), (2000, 2000, 32)]:
        at = uniform((K, M), dtype=torch.bfloat16)
        bt = uniform((K, N), dtype=torch.bfloat16)
        c = garbage((M, N), torch.float32)
        call(m.r10_mma_bf16_colcol, at, bt, c)
        ref = at.double().t() @ bt.double()
        shaped("r10_mma_bf16_colcol", (M, N, K), lambda: _gemm("C", c, ref, K, 1e-4))


@check("r10_19_mma_sync_f16_acc_f16_persistent")
def _(m):
    torch = T()
    for kind, (M, N, K) in [("int", (1, 1, 1)), ("int", (17, 33, 20)), ("int", (300, 200, 48)),
                            ("float", (1000, 1000, 64)), ("int", (16, 16, 16))]:
        if kind == "int":
            a = randint((M, K), -2, 3).half()
            b = randint((N, K), -2, 3).half()
        else:
            a = uniform((M, K), dtype=torch.float16)
            b = uniform((N, K), dtype=torch.float16)
        c = garbage((M, N), torch.float16)
        call(m.r10_mma_f16acc, a, b, c)
        ref = a.double() @ b.double().t()
        tol = 0 if kind == "int" else 2e-2 * math.sqrt(K)
        shaped("r10_mma_f16acc", (M, N, K, kind), lambda: close("C", c, ref, tol, 0 if kind == "int" else 1e-2))


@check("r10_20_views_spanas_window_sqz")
def _(m):
    torch = T()
    for N, off, Gn in [(16, 0, 1), (48, 32, 3), (160, 7, 5), (1_000_000, 999_984, 20000)]:
        x = uniform((N,))
        y = garbage((N // 16, 16), torch.float32)
        p = uniform((Gn, 64))
        cs = garbage((Gn, 4), torch.float32)
        call(m.r10_views, x, y, off, p, cs)
        ref = x.view(-1, 16).double() * 2 + x[off:off + 16].double()
        shaped("r10_views", (N, off, Gn), lambda: close("Y", y, ref, 1e-6, 1e-6))
        shaped("r10_views", (N, off, Gn), lambda: close("Cs", cs, p.double().view(Gn, 4, 16).sum(2), 1e-5, 1e-6))


@check("r10_21_returned_tensor_workspace")
def _(m):
    torch = T()
    F = torch.nn.functional
    for R, C in [(1, 1), (129, 3), (5, 257), (3000, 700)]:
        x = uniform((R, C), -30, 30)
        out = garbage((R, C), torch.float32)
        call(m.r10_returned, x, out)
        z = x.double() - x.double().amax(1, keepdim=True)
        ref = F.softplus(z) + torch.arange(C, device=dev()).double() / C
        shaped("r10_returned", (R, C), lambda: close("Out", out, ref, 1e-5, 1e-5))


@check("r10_22_scalar_co_helper_count")
def _(m):
    torch = T()
    for N in [1, 255, 257, 1_000_000]:
        x = uniform((N,))
        out = garbage((N,), torch.float32)
        cnt = garbage((1,), torch.int32)
        r = call(m.r10_compact, x, out, cnt)
        want = x[x > 0].sort().values
        n = want.numel()
        shaped("r10_compact", (N,), lambda: equal("Cnt", cnt, torch.tensor([n], device=dev())))
        shaped("r10_compact", (N,), lambda: equal("Out", out[:n].sort().values, want))
        if r != cdiv(N, 256):
            shaped("r10_compact", (N,), lambda: _fail(f"returned {r!r}, want {cdiv(N, 256)}"))


@check("r10_23_block_uniform_early_exit")
def _(m):
    torch = T()
    for R, act in [(1, 0), (1, 1), (5, 3), (9, 9), (20000, 12345), (20000, 0)]:
        x = uniform((R, 128))
        y = garbage((R, 128), torch.float32)
        sm = garbage((R,), torch.float32)
        y0, sm0 = y.clone(), sm.clone()
        call(m.r10_early_exit, x, torch.tensor([act], dtype=torch.int32, device=dev()), y, sm)
        yref, sref = y0.double(), sm0.double()
        yref[:act] = x[:act].flip(1).double()
        sref[:act] = x[:act].double().sum(1)
        shaped("r10_early_exit", (R, act), lambda: close("Y", y, yref, 0, 0))
        shaped("r10_early_exit", (R, act), lambda: close("Sm", sm, sref, 1e-5, 1e-5))


def _diverge_ref(x):
    torch = T()
    N = x.numel()
    nb = cdiv(N, 256)
    xp = torch.zeros(nb * 256, dtype=torch.float64, device=x.device)
    xp[:N] = x.double()
    v = torch.where(xp > 0.5, xp * 4, xp + 2) ** 2
    v = v.view(nb, 256)
    o = v - v.roll(-1, 1) + v.roll(1, 1)
    blk = torch.arange(nb, device=x.device)[:, None]
    o = torch.where(blk % 3 == 2, v.flip(1), o)
    return o.flatten()[:N]


@check("r10_24_divergent_reconverge_shared")
def _(m):
    torch = T()
    for N in [1, 255, 257, 768, 1_000_000]:
        x = uniform((N,), -1, 2)
        y = garbage((N,), torch.float32)
        call(m.r10_diverge, x, y)
        shaped("r10_diverge", (N,), lambda: close("Y", y, _diverge_ref(x), 1e-5, 1e-5))


if __name__ == "__main__":
    main(__file__, __doc__, "outsiders9", "OUTSIDERS9_TIMEOUT", 120)
