"""GPU integration tests: every kernel against a PyTorch reference on fresh
random inputs, outputs poisoned before each launch. Each test is a sweep of
shapes: a grid far past the 132 SMs (at least 4 blocks per SM), ragged tails in
every dimension the kernel allows, K-tile counts that are odd and not
multiples of 2 x stages, and the smallest legal shape. Shapes a kernel cannot
take must be refused by its host entry point with a message (`rejects`).

  test_kernels.py LIB --list        names of the tests, one per line
  test_kernels.py LIB --one NAME    runs one test, prints PASS/FAIL NAME
  test_kernels.py LIB               runs every test in this process

suite.py runs each test in its own process under a watchdog (and, with
--sanitize, under compute-sanitizer). CROQ_SMALL=1 picks each sweep's small
shapes (the sanitizer mode)."""
import contextlib
import math
import os
import sys
import tempfile
import time
import traceback

import torch

from croqlib import Kernels

torch.manual_seed(int(time.time() * 1000) % (1 << 31))
K = Kernels(sys.argv[1])
MODE = sys.argv[2] if len(sys.argv) > 2 else "all"
SELECTED = sys.argv[3] if len(sys.argv) > 3 else None
SMALL = os.environ.get("CROQ_SMALL") == "1"
TESTS = []
results = []

# At least four blocks per SM of the H200's 132.
MANY_BLOCKS = 4 * 132


def sweep(full, small):
    """The shapes of one test: `small` in the sanitizer mode, else `full`."""
    return small if SMALL else full


def test(fn):
    TESTS.append(fn)
    return fn


def run(fn):
    try:
        fn()
        results.append((fn.__name__, None))
        print(f"PASS {fn.__name__}", flush=True)
    except Exception as e:  # noqa: BLE001 - report and go on
        results.append((fn.__name__, e))
        print(f"FAIL {fn.__name__}: {e}", flush=True)
        traceback.print_exc()


def poisoned(shape, dtype):
    if dtype.is_floating_point:
        return torch.full(shape, float("nan"), dtype=dtype, device="cuda")
    return torch.full(shape, -12345, dtype=dtype, device="cuda")


def expect_equal(got, ref, what):
    # NaN matches only where the reference is NaN (inf * 0 of an f16 scalar
    # past its range); an unwritten (poisoned) output still differs.
    if got.shape != ref.shape:
        raise AssertionError(f"{what}: shape {tuple(got.shape)}, want {tuple(ref.shape)}")
    same = got == ref
    if ref.is_floating_point():
        same |= got.isnan() & ref.isnan()
    if not bool(same.all()):
        bad = (~same).nonzero()
        raise AssertionError(f"{what}: {bad.shape[0]} elements differ, first at "
                             f"{bad[0].tolist()}: {got[tuple(bad[0])]} vs "
                             f"{ref[tuple(bad[0])]}")


@contextlib.contextmanager
def captured_stderr():
    """Captures what C code writes to file descriptor 2."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile(mode="w+b") as tmp:
        os.dup2(tmp.fileno(), 2)
        text = []
        try:
            yield text
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            tmp.seek(0)
            text.append(tmp.read().decode(errors="replace"))


def rejects(kernel, args, *needles, what=""):
    """The host entry point refuses `args` before launching: a non-zero
    return and a message holding every needle; outputs stay untouched."""
    outputs = [a.clone() for a in args if isinstance(a, torch.Tensor)]
    with captured_stderr() as text:
        try:
            kernel(*args)
            raised = None
        except RuntimeError as e:
            raised = e
    message = text[0] if text else ""
    if raised is None:
        raise AssertionError(f"{what}: accepted a shape it cannot take")
    for needle in needles:
        if needle not in message:
            raise AssertionError(f"{what}: message {message.strip()!r} "
                                 f"does not mention {needle!r}")
    after = [a for a in args if isinstance(a, torch.Tensor)]
    for before, now in zip(outputs, after):
        if not torch.equal(before.nan_to_num(7.0), now.nan_to_num(7.0)):
            raise AssertionError(f"{what}: launched although it refused")


def both(ir_name, co_name):
    """Runs a test body once with the croq-IR kernel, once with the Croqtile one."""
    def wrap(body):
        def run_ir():
            body(getattr(K, ir_name))
        def run_co():
            body(getattr(K, co_name))
        run_ir.__name__ = body.__name__
        run_co.__name__ = body.__name__ + "[croqtile]"
        test(run_ir)
        test(run_co)
        return body
    return wrap


@both("divergent", "divergent_co")
def divergent_glossary_kernel(kernel):
    # 3907 blocks at the largest n; tails of one and 255 threads.
    for n in sweep((1, 255, 256, 257, 1000003), (1, 300)):
        data = torch.rand(n + 64, device="cuda")
        x = data.clone()
        kernel(data, n)
        head = x[:n]
        ref = torch.where(head > 0.5, head * 4.0, head + 2.0)
        ref = ref * ref
        expect_equal(data[:n], ref, f"n={n}")
        # Threads past n must not touch memory.
        expect_equal(data[n:], x[n:], f"n={n} tail")


@both("copy_f32", "copy_co")
def tiled_copy_f32_with_tails(kernel):
    # 64x64 tiles: 4160 blocks at 4096x4160; tails in both dimensions.
    for shape in sweep(((1, 1), (64, 64), (1000, 777), (129, 65), (3, 5),
                        (4096, 4160)), ((1, 1), (129, 65))):
        src = torch.randn(shape, device="cuda")
        dst = poisoned(shape, torch.float32)
        kernel(src, dst)
        expect_equal(dst, src, f"shape {shape}")


@test
def tma_copy_benchmark_kernel():
    # The copy benchmark's TMA kernel, 64x128 tiles: 2080 blocks at
    # 4096x4160, tails in both dimensions, the smallest TMA-legal shape.
    for shape in sweep(((1, 4), (64, 128), (100, 132), (63, 260), (4096, 4160)),
                       ((1, 4), (63, 260))):
        src = torch.randn(shape, device="cuda")
        dst = poisoned(shape, torch.float32)
        K.copy_tma_bench_co(src, dst)
        expect_equal(dst, src, f"shape {shape}")


@test
def copy_rows_tails():
    # The copy benchmark's row-shaped tiles (copy_rows_co.co): 8 x 1024 by
    # 256 threads (8 unrolled 16-byte accesses each), 4 x 2048, 16 x 512,
    # 8 x 1024 by 512 threads, and TMA tiles of 32 and 16 rows of 256.
    # 4160 x 4100 is 2600 blocks of 8 x 1024 with tails in both dimensions;
    # 3 x 5 is smaller than every tile and not 16-byte aligned.
    for name in ("copy_rows_co", "copy_rows_4x2048", "copy_rows_16x512",
                 "copy_rows_8x1024_t512", "copy_rows_tma", "copy_rows_tma_16"):
        tma = "tma" in name
        shapes = ((1, 4), (8, 1024), (33, 260), (4160, 4100), (4096, 4096)) if tma \
            else ((1, 1), (3, 5), (8, 1024), (33, 2049), (4160, 4100), (4096, 4096))
        for shape in sweep(shapes, shapes[:1] + shapes[2:3]):
            src = torch.randn(shape, device="cuda")
            dst = poisoned(shape, torch.float32)
            getattr(K, name)(src, dst)
            expect_equal(dst, src, f"{name} shape {shape}")


@test
def tiled_copy_f16_with_tails():
    # 32x128 tiles: 1088 blocks at 2048x2100.
    for shape in sweep(((1, 1), (32, 128), (100, 300), (77, 1000), (2048, 2100)),
                       ((1, 1), (77, 130))):
        src = torch.randn(shape, device="cuda").half()
        dst = poisoned(shape, torch.float16)
        K.copy_f16(src, dst)
        expect_equal(dst, src, f"shape {shape}")


@both("add", "add_co")
def elementwise_add_shared_local(kernel):
    # 32x32 tiles: 1120 blocks at 1000x1100.
    for shape in sweep(((1, 1), (64, 64), (100, 77), (33, 1), (1000, 1100)),
                       ((1, 1), (33, 65))):
        a = torch.randn(shape, device="cuda")
        b = torch.randn(shape, device="cuda")
        c = poisoned(shape, torch.float32)
        kernel(a, b, c)
        expect_equal(c, a + b, f"shape {shape}")


@both("matmul_db", "matmul_db_co")
def double_buffered_matmul_swap(kernel):
    # The kernel's tensors have constant shapes (128 blocks): the only shape
    # it accepts. Another one is refused by the host.
    rejects(kernel, (torch.zeros(64, 256, dtype=torch.int32, device="cuda"),
                     torch.zeros(256, 256, dtype=torch.int32, device="cuda"),
                     poisoned((64, 256), torch.int32)),
            "matmul_db", what="matmul_db at 64x256")
    lhs = torch.randint(-8, 8, (128, 256), dtype=torch.int32, device="cuda")
    rhs = torch.randint(-8, 8, (256, 256), dtype=torch.int32, device="cuda")
    out = poisoned((128, 256), torch.int32)
    kernel(lhs, rhs, out)
    ref = (lhs.cpu().long() @ rhs.cpu().long()).int()
    expect_equal(out.cpu(), ref, "matmul")


def relative_error(got, ref):
    got, ref = got.double(), ref.double()
    if torch.isnan(got).any():
        return float("inf")
    return ((got - ref).norm() / ref.norm()).item()


def check_matmul(kernel, shapes, rhs_is_nk, tolerance, what,
                 out_dtype=torch.float32):
    """f16 lhs [M, K] times rhs ([N, K] when rhs_is_nk, else [K, N]) into a
    poisoned output, against a float64 reference."""
    for m, n, k in shapes:
        a = torch.randn(m, k, device="cuda").half()
        b = torch.randn(*((n, k) if rhs_is_nk else (k, n)), device="cuda").half()
        c = poisoned((m, n), out_dtype)
        kernel(a, b, c)
        ref = a.double() @ (b.double().T if rhs_is_nk else b.double())
        err = relative_error(c, ref)
        assert err < tolerance, f"{what} {m}x{n}x{k}: relative error {err}"


# 16x16 tiles, M / 16 by N / 16 blocks: 1024 blocks at 512x512, three K
# steps at K = 48.
WARP_MMA_SHAPES = sweep(((16, 16, 16), (64, 48, 128), (512, 512, 48),
                         (256, 256, 512)), ((16, 16, 16), (32, 48, 48)))


@both("matmul_rr", "mma_rr_co")
def warp_mma_row_row(kernel):
    check_matmul(kernel, WARP_MMA_SHAPES, True, 1e-3, "row.row")


@both("matmul_rc", "mma_rc_co")
def warp_mma_row_col(kernel):
    check_matmul(kernel, WARP_MMA_SHAPES, False, 1e-3, "row.col")


@test
def warp_mma_in_lanes():
    # mma_lanes_co: the MMA in the body of `w by 2 : group, lane by 32 :
    # thread`, which the lanes run together. Up to 8192 blocks; odd K steps.
    check_matmul(K.mma_lanes_co,
                 sweep(((16, 32, 16), (64, 96, 48), (512, 512, 48),
                        (2048, 2048, 32)), ((16, 32, 16), (32, 64, 48))),
                 True, 1e-3, "warp MMA in a lanes body")


# Ragged in every dimension: 125 x 63 = 7875 blocks of 16 x 16 at
# 2000 x 1000, K tails of every residue, and the smallest tile.
MMA_TYPE_SHAPES = sweep(((16, 16, 16), (100, 75, 70), (2000, 1000, 40),
                         (33, 17, 129)), ((16, 16, 16), (37, 21, 45)))


def check_warp_mma_float(kernel, dtype, tolerance, what):
    """lhs [M, K] times rhs [N, K] of `dtype` into f32, on MMA_TYPE_SHAPES."""
    for m, n, k in MMA_TYPE_SHAPES:
        a = torch.randn(m, k, device="cuda").to(dtype)
        b = torch.randn(n, k, device="cuda").to(dtype)
        c = poisoned((m, n), torch.float32)
        kernel(a, b, c)
        err = relative_error(c, a.double() @ b.double().T)
        assert err < tolerance, f"{what} {m}x{n}x{k}: relative error {err}"


@test
def warp_mma_bf16():
    check_warp_mma_float(K.mma_bf16_co, torch.bfloat16, 1e-5, "bf16 mma.sync")


@test
def warp_mma_tf32():
    # tf32 keeps 10 bits of mantissa (the hardware truncates the f32
    # operands), so the bound is tf32's precision.
    check_warp_mma_float(K.mma_tf32_co, torch.float32, 2e-3, "tf32 mma.sync")


@test
def warp_mma_s8():
    for m, n, k in MMA_TYPE_SHAPES:
        a = torch.randint(-128, 128, (m, k), dtype=torch.int8, device="cuda")
        b = torch.randint(-128, 128, (k, n), dtype=torch.int8, device="cuda")
        c = poisoned((m, n), torch.int32)
        K.mma_s8_co(a, b, c)
        ref = (a.cpu().long() @ b.cpu().long()).int()
        expect_equal(c.cpu(), ref, f"s8 mma.sync {m}x{n}x{k}")


@test
def warp_mma_accumulator_arrays():
    # frag_array_co.co: a warp's 2 x 3 accumulators indexed by loop indices
    # (32 x 48 tiles; 2000 x 1000 is 63 x 21 = 1323 blocks, ragged), and the
    # element a parameter picks, which the host checks.
    for m, n, k in MMA_TYPE_SHAPES:
        a = torch.randn(m, k, device="cuda").half()
        b = torch.randn(n, k, device="cuda").half()
        c = poisoned((m, n), torch.float32)
        K.mma_frag_array_co(a, b, c)
        err = relative_error(c, a.double() @ b.double().T)
        assert err < 1e-3, f"accumulator array {m}x{n}x{k}: relative error {err}"
        a, b = a / 4, b / 4
        c = poisoned((m, n), torch.float16)
        K.mma_frag_decl_co(a, b, c)
        err = relative_error(c, a.double() @ b.double().T + 1.5)
        assert err < 1e-2, f"declared accumulator {m}x{n}x{k}: relative error {err}"
        a = torch.randint(-128, 128, (m, k), dtype=torch.int8, device="cuda")
        b = torch.randint(-128, 128, (k, n), dtype=torch.int8, device="cuda")
        ref = (a.cpu().long() @ b.cpu().long()).int()
        for pick in (0, 1, 2):
            c = poisoned((m, n), torch.int32)
            K.mma_frag_pick_co(a, b, c, pick)
            expect_equal(c.cpu(), ref + (5 if pick == 2 else 0),
                         f"accumulator mc[0][{pick}] {m}x{n}x{k}")
    a = torch.zeros(16, 32, dtype=torch.int8, device="cuda")
    b = torch.zeros(32, 16, dtype=torch.int8, device="cuda")
    for pick in (3, -1):
        rejects(K.mma_frag_pick_co, (a, b, poisoned((16, 16), torch.int32), pick),
                "out of bounds of its array of 3 accumulators",
                what=f"pick = {pick}")


@test
def mma_unsigned_bytes():
    # mma_u8_co: u8 A (0..255) times s8 B on mma.sync; wgmma_u8_co: u8
    # times u8 on wgmma. Products past 2^31 cannot occur at these K.
    for m, n, k in MMA_TYPE_SHAPES:
        a = torch.randint(0, 256, (m, k), dtype=torch.uint8, device="cuda")
        b = torch.randint(-128, 128, (k, n), dtype=torch.int8, device="cuda")
        c = poisoned((m, n), torch.int32)
        K.mma_u8_co(a, b, c)
        expect_equal(c.cpu(), (a.cpu().long() @ b.cpu().long()).int(),
                     f"u8 x s8 mma.sync {m}x{n}x{k}")
        b = torch.randint(0, 256, (n, k), dtype=torch.uint8, device="cuda")
        c = poisoned((m, n), torch.int32)
        K.wgmma_u8_co(a, b, c)
        expect_equal(c.cpu(), (a.cpu().long() @ b.cpu().long().T).int(),
                     f"u8 x u8 wgmma {m}x{n}x{k}")


@test
def warp_mma_loaded_accumulator_epilogue():
    # C = 2 (C + A B^T + bias): the accumulator loaded from C, then a
    # scalar added and multiplied into every element.
    for m, n, k in MMA_TYPE_SHAPES:
        a = torch.randn(m, k, device="cuda").half()
        b = torch.randn(n, k, device="cuda").half()
        c = torch.randn(m, n, device="cuda")
        ref = 2 * (c.double() + a.double() @ b.double().T + 0.75)
        K.mma_loadc_co(a, b, c, 0.75)
        err = relative_error(c, ref)
        assert err < 1e-3, f"loaded accumulator {m}x{n}x{k}: relative error {err}"


@test
def warp_mma_padded_tiles():
    # 8 x 8 x 4 tiles (f16 accumulator from 1.5) and 16 x 8 x 8 ones, each
    # padded into m16n8k16 instructions.
    for m, n, k in MMA_TYPE_SHAPES:
        a = (torch.randn(m, k, device="cuda") / 4).half()
        b = (torch.randn(k, n, device="cuda") / 4).half()
        c = poisoned((m, n), torch.float16)
        K.mma_small_co(a, b, c)
        ref = 1.5 + a.double() @ b.double()
        err = relative_error(c, ref)
        assert err < 5e-3, f"8x8x4 mma {m}x{n}x{k}: relative error {err}"
        c = poisoned((m, n), torch.float32)
        K.mma_k8_co(a, b, c)
        err = relative_error(c, a.double() @ b.double())
        assert err < 1e-3, f"16x8x8 mma {m}x{n}x{k}: relative error {err}"


@test
def cooperative_grid_barrier():
    # Three rounds of write, grid barrier, read another block's element,
    # grid barrier: one block, a ragged block, 132 and 528 blocks (up to
    # four per SM, all resident). A grid the GPU cannot hold at once is
    # refused before the launch.
    for n in sweep((1, 300, 132 * 256, 528 * 256 - 17), (1, 300, 2 * 256 + 5)):
        a = torch.zeros(n, dtype=torch.int32, device="cuda")
        b = torch.zeros(n, dtype=torch.int32, device="cuda")
        K.grid_sync_co(a, b)
        mirrored = torch.arange(n - 1, -1, -1, dtype=torch.int64)
        expect_equal(b.cpu(), (9 * mirrored + 3).int(),
                     f"grid barrier, {n} elements")
    n = 100000 * 256
    a = torch.zeros(n, dtype=torch.int32, device="cuda")
    b = torch.zeros(n, dtype=torch.int32, device="cuda")
    rejects(K.grid_sync_co, (a, b), "cooperative kernel", "must all run at once",
            what="a cooperative grid of 100000 blocks")


@test
def named_barriers():
    # __bar_arrive(2, 256) and __bar_sync(1, 256) in every thread of
    # 256-thread blocks (a count that does not match would hang): each
    # block reverses its 256 elements; 1 to 4000 blocks, a ragged tail.
    for n in sweep((1, 300, 256 * 4000 - 3), (1, 300)):
        a = torch.randn(n, device="cuda")
        b = poisoned((n,), torch.float32)
        K.named_barrier_co(a, b)
        j = torch.arange(n)
        src = (j // 256) * 256 + 255 - j % 256
        ref = torch.where(src < n, a.cpu()[src.clamp(max=n - 1)],
                          torch.zeros(()))
        expect_equal(b.cpu(), ref, f"named barriers, {n} elements")


@test
def role_with_a_run_time_guard():
    # role_guard_co: warpgroup 1 reverses each 128-element tile through
    # shared memory, on croq's barrier 13 beside the program's 15;
    # warpgroup 0's threads t < limit wait for it and store. 1 to 2001
    # blocks, ragged tails; limit 0 (no thread stores), 1, 77, 128, 1000.
    for n in sweep((1, 300, 128 * 2000 + 5), (1, 300)):
        a = torch.randn(n, device="cuda")
        j = torch.arange(n)
        src = (j // 128) * 128 + 127 - j % 128
        ref = torch.where(src < n, a.cpu()[src.clamp(max=n - 1)],
                          torch.zeros(())) + 1
        for limit in (0, 1, 77, 128, 1000):
            b = poisoned((n,), torch.float32)
            K.role_guard_co(a, b, limit)
            stored = (j % 128) < limit
            expect_equal(b.cpu()[stored], ref[stored], f"N = {n}, limit = {limit}")
            assert torch.isnan(b.cpu()[~stored]).all(), \
                f"N = {n}, limit = {limit}: threads past the limit stored"


@test
def roles_over_a_two_dimensional_event_array():
    # events_2d_co: 4 rounds through two slots of full[1][2] / empty[1][2],
    # started by `trigger empty[0][s]` for each slot; 1 to 2345 blocks,
    # ragged tails.
    for n in sweep((1, 300, 128 * 2344 + 5), (1, 300)):
        x = torch.randn(n, device="cuda")
        y = poisoned((n,), torch.float32)
        K.events_2d_co(x, y)
        ref = torch.zeros_like(x)
        for _ in range(4):
            ref = ref + x * 2  # the kernel's f32 additions, in its order
        expect_equal(y, ref, f"N = {n}")


@test
def epilogue_indices_by_div_and_mod():
    # divmod_epilogue_co: 64x64 tiles, each thread 32 elements at
    # ((e * 128 + t) / 64, (e * 128 + t) % 64); ragged M and N, 1 to 4096
    # blocks.
    for m, n in sweep(((1, 1), (64, 64), (100, 77), (4096, 4096)), ((1, 1), (100, 77))):
        x = torch.randn(m, n, device="cuda")
        y = poisoned((m, n), torch.float32)
        K.divmod_epilogue_co(x, y)
        expect_equal(y, x + 1, f"{m}x{n}")


@test
def pairwise_shared_algorithms():
    # pairwise_shared_co: each thread swaps or combines a pair of shared
    # elements of its own under a condition only some threads meet, with
    # barriers only between the steps. Ragged last segments, up to 701
    # blocks; all exact.
    for n in sweep((1, 511, 512, 1000, 512 * 300 + 17), (1, 1000)):
        keys = torch.randn(n, device="cuda")
        ref = torch.cat([keys, torch.full((-n % 512,), float("inf"),
                                          device="cuda")])
        ref = ref.view(-1, 512).sort(dim=1).values.flatten()[:n]
        K.bitonic_sort_co(keys)
        expect_equal(keys, ref, f"bitonic sort, {n} keys")
    for t in sweep((1, 3, 500), (1, 3)):
        a = torch.randn(t, 32, 32, device="cuda")
        ref = a.transpose(1, 2).contiguous()
        K.transpose_in_place_co(a)
        expect_equal(a, ref, f"transpose in place, {t} tiles")
    for n in sweep((1, 255, 256, 1000, 256 * 700 + 5), (1, 1000)):
        x = torch.randint(-1000, 1000, (n,), dtype=torch.int32, device="cuda")
        y = poisoned((n,), torch.int32)
        padded = torch.cat([x, torch.zeros(-n % 256, dtype=torch.int32,
                                           device="cuda")]).view(-1, 256)
        ref = (padded.cumsum(dim=1, dtype=torch.int32) - padded).flatten()[:n]
        K.blelloch_scan_co(x, y)
        expect_equal(y, ref, f"Blelloch scan, {n} elements")
    for r in sweep((1, 7, 400), (1, 7)):
        x = torch.randn(r, 128, device="cuda")
        ref = x.sort(dim=1).values
        K.odd_even_sort_co(x)
        expect_equal(x, ref, f"odd-even sort, {r} rows")
    for r in sweep((1, 7, 1000, 5000), (1, 7)):
        x = torch.randint(-1000, 1000, (r, 256), dtype=torch.int32, device="cuda")
        y = poisoned((r,), torch.int32)
        K.halving_sum_co(x, y)
        expect_equal(y, x.sum(dim=1, dtype=torch.int32), f"halving tree sum, {r} rows")


@test
def span_as_wgmma_operands():
    # span_as_wgmma_co: a TMA box [1, 4, 16, 64] of an NHWC image read by
    # wgmma as the [64, 64] matrix of its pixels (a 1x1 convolution; ragged
    # H, W, C and OC, odd K-tile counts, up to 324 blocks), and groups of 8
    # rows of 32 bytes as a [64, 16] operand and element by element.
    shapes = ((1, 4, 16, 64, 64), (2, 7, 19, 72, 80), (3, 33, 45, 136, 200))
    for nb, h, w, c, oc in sweep(shapes, shapes[:2]):
        x = torch.randn(nb, h, w, c, device="cuda").half()
        wt = torch.randn(oc, c, device="cuda").half()
        y = poisoned((nb, h, w, oc), torch.float32)
        K.conv1x1_span_as_co(x, wt, y)
        ref = torch.einsum("nhwc,oc->nhwo", x.float(), wt.float())
        torch.testing.assert_close(
            y, ref, rtol=1e-3, atol=1e-2,
            msg=lambda m: f"conv1x1 {nb}x{h}x{w}x{c} -> {oc}: {m}")
    for g, n in sweep(((1, 64), (8, 64), (13, 100), (300, 520)),
                      ((1, 64), (13, 100))):
        a = torch.randn(g, 8, 16, device="cuda").half()
        b = torch.randn(n, 16, device="cuda").half()
        c = poisoned((g * 8, n), torch.float32)
        out = poisoned((g, 8, 16), torch.float16)
        K.span_as_rows_co(a, b, c, out)
        ref = a.view(-1, 16).float() @ b.float().T
        torch.testing.assert_close(c, ref, rtol=1e-3, atol=1e-2,
                                   msg=lambda m: f"rows {g}x8x16, N = {n}: {m}")
        expect_equal(out, a, f"elements through span_as, G = {g}")


@test
def f8_arithmetic():
    # e4m3 + e5m2 into f16 (each extended exactly, the f32 sum rounded once)
    # and e4m3 * 2 stored as e4m3 (round to nearest; |2a| <= 448 fits), over
    # 1 to 1172 blocks with a ragged tail; bit-exact against torch.
    for n in sweep((1, 300, 300001), (1, 300)):
        a = (torch.rand(n, device="cuda") * 400 - 200).to(torch.float8_e4m3fn)
        a = torch.where(a.float().abs() > 224, torch.zeros_like(a.float()),
                        a.float()).to(torch.float8_e4m3fn)
        b = (torch.randn(n, device="cuda") * 8).to(torch.float8_e5m2)
        total = poisoned((n,), torch.float16)
        scaled = torch.zeros(n, dtype=torch.float8_e4m3fn, device="cuda")
        K.f8_ops_co(a, b, total, scaled)
        expect_equal(total.cpu(), (a.float() + b.float()).half().cpu(),
                     f"e4m3 + e5m2, {n} elements")
        expect_equal(scaled.view(torch.uint8).cpu(),
                     (a.float() * 2).to(torch.float8_e4m3fn).view(torch.uint8).cpu(),
                     f"e4m3 * 2, {n} elements")


def small_float_table(e, m):
    """The values of the 2^(1+e+m) codes of an FN float with `e` exponent
    and `m` mantissa bits (no infinities, no NaN), as float64."""
    bias = 2 ** (e - 1) - 1
    codes = torch.arange(2 ** (1 + e + m), dtype=torch.int64)
    sign = codes >> (e + m)
    exponent = (codes >> m) & (2 ** e - 1)
    mantissa = (codes & (2 ** m - 1)).double()
    normal = (1 + mantissa / 2 ** m) * torch.pow(2.0, (exponent - bias).double())
    subnormal = mantissa * 2.0 ** (1 - bias - m)
    value = torch.where(exponent == 0, subnormal, normal)
    return torch.where(sign == 1, -value, value)


def small_float_encode(x, e, m):
    """Codes of the f32 values `x` rounded to nearest, ties to the even code,
    saturating at the largest magnitude."""
    table = small_float_table(e, m)[: 2 ** (e + m)]  # the positive codes
    a = x.double().abs()[:, None]
    d = (table[None, :] - a).abs()
    best = d.min(dim=1, keepdim=True).values
    parity = torch.arange(table.numel()) % 2
    tied = torch.where(d == best, parity[None, :], torch.full_like(d, 2).long())
    code = tied.argmin(dim=1)
    # Past the largest magnitude (where the distances above round alike).
    code = torch.where(a[:, 0] >= table[-1], table.numel() - 1, code)
    sign = (torch.signbit(x.cpu())).long()
    return ((sign << (e + m)) | code).to(torch.uint8)


@test
def subbyte_elements():
    # f6_e2m3, f6_e3m2, f4_e2m1 and 6/4/2-bit integers, one a byte, over 1
    # to 1172 blocks with a ragged tail: every code decoded exactly, f32
    # values (ties, subnormal ties, zeros of both signs, values past the
    # largest) rounded to nearest even and saturated, integers extended
    # with and without sign, and a 4-bit add that wraps.
    formats = {"e2m3": (2, 3), "e3m2": (3, 2), "e2m1": (2, 1)}
    for n in sweep((1, 300, 300001), (1, 300)):
        codes = {k: torch.randint(0, 2 ** (1 + e + m), (n,), dtype=torch.uint8)
                 for k, (e, m) in formats.items()}
        values = {k: small_float_table(*formats[k])[codes[k].long()]
                  for k in formats}
        # Inputs to round: random magnitudes, and each format's ties.
        x = torch.randn(n) * torch.pow(2.0, torch.randint(-6, 6, (n,)).float())
        special = torch.tensor([0.0, -0.0, 1.0625, 1.1875, 0.0625, -0.0625,
                                0.1875, 7.75, 100.0, -1e30, 3e38, 0.25,
                                0.03125, 30.0, 5.0, 0.75, 2.5, -3.5],
                               dtype=torch.float32)
        x[: min(n, special.numel())] = special[: min(n, special.numel())]
        ints = {bits: torch.randint(0, 2 ** bits, (n,), dtype=torch.uint8)
                for bits in (6, 4, 2)}
        uints = {bits: torch.randint(0, 2 ** bits, (n,), dtype=torch.uint8)
                 for bits in (6, 4, 2)}
        cuda = lambda t: t.cuda()
        outs = [poisoned((n,), torch.float32)] + \
            [torch.full((n,), 0xAA, dtype=torch.uint8, device="cuda")
             for _ in range(3)]
        isum = poisoned((n,), torch.int32)
        u4next = torch.full((n,), 0xAA, dtype=torch.uint8, device="cuda")
        K.subbyte_co(cuda(codes["e2m3"]), cuda(codes["e3m2"]),
                     cuda(codes["e2m1"]), cuda(x), *outs,
                     cuda(ints[6]), cuda(uints[6]), cuda(ints[4]),
                     cuda(uints[4]), cuda(ints[2]), cuda(uints[2]), isum,
                     u4next)
        want = (values["e2m3"] + values["e3m2"] * 2 + values["e2m1"] * 4).float()
        expect_equal(outs[0].cpu(), want, f"sub-byte floats decoded, {n}")
        for out, k in zip(outs[1:], formats):
            expect_equal(out.cpu(), small_float_encode(x, *formats[k]),
                         f"f32 rounded to {k}, {n}")
        signed = {b: torch.where(v.long() >= 2 ** (b - 1), v.long() - 2 ** b,
                                 v.long()) for b, v in ints.items()}
        want_i = signed[6]
        for bits, scale, part in ((6, 64, uints[6].long()), (4, 16, signed[4]),
                                  (4, 16, uints[4].long()), (2, 4, signed[2]),
                                  (2, 4, uints[2].long())):
            want_i = want_i * scale + part
        want_i = want_i.int()
        expect_equal(isum.cpu(), want_i, f"sub-byte integers, {n}")
        expect_equal(u4next.cpu(), ((uints[4].long() + 1) % 16).to(torch.uint8),
                     f"u4 + 1 wraps, {n}")
        bits = torch.randint(0, 2, (n,), dtype=torch.uint8, device="cuda")
        copied = torch.full((n,), 0xAA, dtype=torch.uint8, device="cuda")
        K.bits_co(bits, copied)
        expect_equal(copied.cpu(), bits.cpu(), f"u1 to bin1, {n}")
        # Negation, max and conversions between formats of one width, in
        # f32: -a flips the sign bit, max(a, -a) = |a| (+0 for both zeros),
        # e2m3 to e3m2 rounds to nearest even, e4m3 to e5m2 as torch does.
        e = torch.randint(0, 256, (n,), dtype=torch.uint8)
        e = torch.where((e & 0x7F) == 0x7F, torch.zeros_like(e), e)  # no NaN
        outs = [torch.full((n,), 0xAA, dtype=torch.uint8, device="cuda")
                for _ in range(6)]
        K.narrow_ops_co(cuda(codes["e2m3"]), cuda(e), *outs)
        expect_equal(outs[0].cpu(), codes["e2m3"] ^ 0x20, f"-e2m3, {n}")
        expect_equal(outs[1].cpu(),
                     small_float_encode(values["e2m3"].float(), 3, 2),
                     f"e2m3 to e3m2, {n}")
        want_e5 = e.view(torch.float8_e4m3fn).float().to(torch.float8_e5m2)
        expect_equal(outs[2].cpu(), want_e5.view(torch.uint8), f"e4m3 to e5m2, {n}")
        expect_equal(outs[3].cpu(), codes["e2m3"] & 0x1F, f"max(a, -a), {n}")
        expect_equal(outs[4].cpu(), codes["e2m3"] & 0x1F, f"__abs(a), {n}")
        expect_equal(outs[5].cpu(),
                     small_float_encode((values["e2m3"] + 0.25).float(), 2, 3),
                     f"a += 0.25, rounded once, {n}")


@test
def activations():
    # activations_co.co: __sigmoid, __gelu (tanh form), __softplus, __sign,
    # __isfinite on f32 and f16, with zeros, infinities and NaN among the
    # inputs; 1 to 7813 blocks with ragged tails.
    def reference(x):
        f = x.float()
        gelu = 0.5 * f * (1 + torch.tanh(0.7978845608028654 *
                                         (f + 0.044715 * f ** 3)))
        return torch.stack([torch.sigmoid(f), gelu, torch.log1p(torch.exp(f)),
                            torch.sign(torch.nan_to_num(f, nan=0.0)),
                            torch.isfinite(f).float()])
    for n in sweep((1, 129, 1_000_000), (1, 129)):
        x = torch.randn(n, device="cuda") * 4
        x[0] = 0.0
        if n > 3:
            x[1], x[2], x[3] = float("inf"), float("-inf"), float("nan")
        for dtype, kernel, tol in ((torch.float32, K.activations_co, 1e-5),
                                   (torch.float16, K.activations_f16_co, 2e-3)):
            xs = x.to(dtype)
            y = poisoned((5, n), dtype)
            kernel(xs, y)
            want = reference(xs).to(dtype).float()
            got = y.float()
            # Where both are NaN (sigmoid and gelu of NaN), they agree.
            same = (got == want) | (got.isnan() & want.isnan())
            close = (got - want).abs() <= tol * (1 + want.abs())
            bad = ~(same | close)
            if bad.any():
                i = bad.nonzero()[0].tolist()
                raise AssertionError(f"activation {i[0]} of x = {xs[i[1]].item()} "
                                     f"({dtype}, N = {n}): {got[tuple(i)]} vs "
                                     f"{want[tuple(i)]}")


@test
def rounding():
    # rounding_co: __floor, __ceil, __round (half away from zero), __trunc
    # (toward zero) in f32 and f16, with halves, negative halves, -0.0,
    # infinities and NaN; 1 to 7813 blocks with ragged tails.
    def reference(x):
        d = x.double()
        away = torch.sign(d) * torch.floor(d.abs() + 0.5)
        return torch.stack([torch.floor(d), torch.ceil(d), away, torch.trunc(d)])
    for n in sweep((1, 129, 1_000_000), (1, 129)):
        x = torch.randn(n, device="cuda") * 100
        special = [2.5, -2.5, 0.5, -0.5, -0.0, 1.0, -1.0, 3.7, -3.7,
                   float("inf"), float("-inf"), float("nan")]
        k = min(n, len(special))
        x[:k] = torch.tensor(special[:k], device="cuda")
        for dtype, kernel in ((torch.float32, K.rounding_co),
                              (torch.float16, K.rounding_f16_co)):
            xs = x.to(dtype)
            y = poisoned((4, n), dtype)
            kernel(xs, y)
            # Rows: floor, ceil, round, trunc.
            expect_equal(y, reference(xs).to(dtype), f"rounding, {dtype}, N = {n}")


@test
def store_tails():
    # store_tail_co.co: mma.store into c.view(rows, cols) of a tail tile,
    # masked to the view (the sanitizer run sees any store past M or N).
    # 1 to 9471 blocks, ragged in both dimensions.
    for m, n in sweep(((1, 1), (64, 64), (65, 127), (300, 1000), (6000, 6001)),
                      ((1, 1), (65, 127))):
        a = torch.randn(m, 64, device="cuda").half()
        b = torch.randn(64, 64, device="cuda").half()
        np_ = (n + 63) // 64 * 64
        c = poisoned((m, n), torch.float32)
        K.store_rows_co(a, b, c)
        want = (a.float() @ b.float().t()).repeat(1, np_ // 64)[:, :n]
        if not torch.allclose(c, want, atol=1e-2, rtol=1e-3):
            bad = ~torch.isclose(c, want, atol=1e-2, rtol=1e-3)
            i = bad.nonzero()[0].tolist()
            raise AssertionError(f"masked mma.store, M = {m}, N = {n}: "
                                 f"{bad.sum().item()} wrong, first at {i}: "
                                 f"{c[tuple(i)].item()} vs {want[tuple(i)].item()}")


@test
def swizzled_elements():
    # swizzled_elements_co.co: the threads fill the two wgmma operand tiles
    # element by element (A doubled, zeros past M, N and K) in the swizzled
    # layout, and read A's last K tile back. 1 to 2209 blocks; K of 1, 64,
    # 65 and 200 (one to four K tiles, the last ragged).
    for m, n, k in sweep(((1, 1, 1), (64, 128, 64), (65, 129, 65),
                          (300, 1000, 200), (3000, 5888, 130)),
                         ((1, 1, 1), (65, 129, 65), (130, 300, 200))):
        a = torch.randn(m, k, device="cuda").half()
        b = torch.randn(n, k, device="cuda").half()
        c = poisoned((m, n), torch.float32)
        echo = poisoned((m, 64), torch.float16)
        K.swizzled_elements_co(a, b, c, echo)
        want = (2 * a.float()) @ b.float().t()
        if not torch.allclose(c, want, atol=5e-2, rtol=1e-3):
            bad = ~torch.isclose(c, want, atol=5e-2, rtol=1e-3)
            i = bad.nonzero()[0].tolist()
            raise AssertionError(f"element-filled wgmma, {m}x{n}x{k}: "
                                 f"{bad.sum().item()} wrong, first at {i}: "
                                 f"{c[tuple(i)].item()} vs {want[tuple(i)].item()}")
        last = (k - 1) // 64 * 64
        tile = torch.zeros(m, 64, device="cuda", dtype=torch.float16)
        tile[:, :k - last] = a[:, last:] * 2
        expect_equal(echo, tile, f"element reads of the swizzled tile, "
                                 f"{m}x{n}x{k}")


@test
def chained_mma():
    # chained_mma_co.co: T = X A^T stored from the accumulator into the
    # shared tile the next MMA reads (swizzled), Y = T B^T; the transp
    # kernel stores T transposed and reads it as a col A, the panel kernel
    # the same through a view of a tile's second panel. T is rounded to
    # f16 in both, as the reference does. 1 to 4277 blocks, ragged M, N.
    for m, n in sweep(((1, 1), (64, 128), (65, 129), (300, 1000), (6000, 5000)),
                      ((1, 1), (65, 129), (130, 300))):
        x = torch.randn(m, 64, device="cuda").half()
        a = (torch.randn(64, 64, device="cuda") / 8).half()
        b = torch.randn(n, 64, device="cuda").half()
        t = (x.float() @ a.float().t()).half().float()
        want = t @ b.float().t()
        for name in ("chained_mma_co", "chained_mma_transp_co",
                     "chained_mma_panel_co"):
            y = poisoned((m, n), torch.float32)
            getattr(K, name)(x, a, b, y)
            if not torch.allclose(y, want, atol=5e-2, rtol=2e-3):
                bad = ~torch.isclose(y, want, atol=5e-2, rtol=2e-3)
                i = bad.nonzero()[0].tolist()
                raise AssertionError(
                    f"{name}, M = {m}, N = {n}: "
                    f"{bad.sum().item()} wrong, first at {i}: "
                    f"{y[tuple(i)].item()} vs {want[tuple(i)].item()}")


@test
def future_swap_wgmma():
    # future_swap_wgmma_co.co: the prologue / steady-state pipeline whose
    # wgmma operands are the data of swapped futures (two buffers each).
    # 1, 2, 3 and 7 K tiles, ragged K; up to 2016 blocks.
    check_matmul(K.future_swap_wgmma_co,
                 sweep(((1, 1, 1), (64, 64, 64), (65, 130, 128),
                        (300, 200, 190), (2000, 4000, 448)),
                       ((1, 1, 1), (65, 130, 190))),
                 True, 1e-3, "swapped-future wgmma")


@test
def future_swap_tma_buffer_arrays():
    # future_swap_tma_array_co: the same pipeline with TMA into elements of
    # buffer arrays (tile 0 into a_s[0], tile k into a_s[k % 2]), the
    # swapped futures' element found from their address. 1, 2, 3 and 7 K
    # tiles (TMA: K % 8), ragged M and N, up to 2016 blocks.
    check_matmul(K.future_swap_tma_array_co,
                 sweep(((1, 1, 8), (64, 64, 64), (65, 130, 128),
                        (300, 200, 184), (2000, 4000, 448)),
                       ((1, 1, 8), (65, 130, 184))),
                 True, 1e-3, "swapped-future wgmma, TMA into buffer arrays")


@test
def mma_store_squeezed_tail_tiles():
    # store_sqz_co.co: each slab s of out [S, M, N] gets s + 1 through
    # mma.store into `out.subspan(1, 64, 64).at(s, bm, bn).sqz()`. Ragged M
    # and N: a tail tile must not spill into the next slab (or past the
    # last); up to 32 x 16 x 3 = 1536 blocks.
    for m, n, slabs in sweep(((1, 8, 1), (65, 70, 4), (64, 64, 2), (300, 200, 3),
                              (2000, 1000, 3)), ((1, 8, 1), (65, 70, 4))):
        a = torch.ones(m, 16, device="cuda").half()
        b = torch.ones(n, 16, device="cuda").half()
        out = poisoned((slabs, m, n), torch.float32)
        K.store_sqz_co(a, b, out)
        want = (torch.arange(slabs, device="cuda") + 1).float()[:, None, None]
        expect_equal(out, want.expand(slabs, m, n).contiguous(),
                     f"squeezed tail tiles, {slabs} x {m} x {n}")


@test
def grid_dims():
    # grid_dims_co.co: five run-time block extents, linearized into x; each
    # element holds its own linear index. 256 x 16 x 17 = 69632 blocks past
    # the first extent (z, before linearization, refused them) and a second
    # extent of 70000 run; 70000 constant rows (grid_rows_co) and constant
    # extents kept in y and z (grid_planes_co) as well.
    for shape in sweep(((1, 1, 1, 1, 1), (3, 2, 5, 7, 4), (1000, 1, 2, 3, 65),
                        (2, 3, 1, 1, 1), (1, 1, 256, 16, 17), (2, 70000, 1, 1, 1)),
                       ((1, 1, 1, 1, 1), (3, 2, 5, 7, 4), (1, 70000, 1, 1, 1))):
        x = poisoned(shape + (32,), torch.int32)
        K.grid_dims_co(x)
        want = torch.arange(x.numel(), dtype=torch.int32, device="cuda")
        expect_equal(x, want.view(x.shape), f"grid {shape}")
    for c in sweep((1, 3), (1,)):
        x = poisoned((70000, c, 32), torch.int32)
        K.grid_rows_co(x)
        want = torch.arange(x.numel(), dtype=torch.int32, device="cuda")
        expect_equal(x, want.view(x.shape), f"70000 rows of {c}")
    for a in sweep((1, 7, 300), (1, 7)):
        x = poisoned((a, 3, 4, 5, 32), torch.int32)
        K.grid_planes_co(x)
        want = torch.arange(x.numel(), dtype=torch.int32, device="cuda")
        expect_equal(x, want.view(x.shape), f"planes of {a}")


@test
def guards():
    # guards_co.co: accesses narrowed by conditions on the thread index. A
    # block tree reduction (1 to 3907 blocks, ragged tails); a guarded
    # epilogue over 1 to 2000 rows; a ring whose producer skips its first
    # two empty waits, over 1 to 600 blocks and 1 to 65 tiles (odd counts,
    # fewer tiles than slots).
    for n in sweep((1, 255, 256, 257, 1_000_000), (1, 257)):
        blocks = (n + 255) // 256
        x = torch.randint(-8, 8, (n,), device="cuda").float()
        sums = poisoned((blocks,), torch.float32)
        K.tree_sum_co(x, sums)
        want = torch.zeros(blocks * 256, device="cuda")
        want[:n] = x
        expect_equal(sums, want.view(blocks, 256).sum(1), f"tree sum, N = {n}")
    for m in sweep((1, 7, 2000), (1, 7)):
        c = poisoned((m, 192), torch.float32)
        K.guarded_columns_co(c)
        want = torch.empty(192)
        want[:64] = 4.0
        want[64:128] = 2.0
        want[128:] = 3.0
        expect_equal(c.cpu(), want.expand(m, 192), f"guarded columns, M = {m}")
    for g, k in sweep(((1, 1), (1, 2), (3, 3), (600, 8), (133, 65)),
                      ((1, 1), (3, 3))):
        x = torch.randint(-8, 8, (g, k, 128), device="cuda").float()
        y = poisoned((g, 128), torch.float32)
        K.conditional_ring_co(x, y)
        expect_equal(y, x.sum(1), f"conditional ring, G = {g}, K = {k}")


@test
def partial_copies():
    # Copies between views of different extents: a tail tile of `rows` rows
    # (computed in the kernel) into a 32 x 32 buffer, synchronously and with
    # cp.async, zero past the source; a 32 x 16 tile into a 32 x 16 buffer.
    # 1 to 9376 blocks, ragged tails and the smallest shape.
    for n in sweep((1, 31, 32, 33, 300001), (1, 33)):
        blocks = (n + 31) // 32
        a = torch.randn(n, 32, device="cuda")
        padded = poisoned((blocks * 32, 32), torch.float32)
        padded_async = poisoned((blocks * 32, 32), torch.float32)
        narrow = poisoned((n, 16), torch.float32)
        K.partial_copy_co(a, padded, padded_async, narrow)
        want = torch.zeros(blocks * 32, 32)
        want[:n] = a.cpu()
        expect_equal(padded.cpu(), want, f"zero past a smaller source, {n}")
        expect_equal(padded_async.cpu(), want,
                     f"zero past a smaller source (cp.async), {n}")
        expect_equal(narrow.cpu(), a.cpu()[:, :16],
                     f"a narrow tile, {n}")
        # dma.pad.async, made synchronously: columns 0 and 33 are the pad
        # value, rows past the tensor's end (a tail tile) zero.
        out = poisoned((blocks * 32, 34), torch.float32)
        K.pad_async_co(a, out)
        want = torch.zeros(blocks * 32, 34)
        want[:, 0] = 7.0
        want[:, 33] = 7.0
        want[:n, 1:33] = a.cpu()
        expect_equal(out.cpu(), want, f"dma.pad.async, {n}")


@test
def tutorial_double_buffer():
    # Chapter 6.1's double-buffered matmul: its block and thread grids and
    # `256 / #tile_k` fix the shape at 128 x 256 x 256; the shared tiles'
    # run-time extents (M / 8 x K / 16, K / 16 x N / 16) are sized on the
    # host. It accumulates into the output, which starts at zero.
    for _ in range(2):
        lhs = torch.randint(-8, 8, (128, 256), dtype=torch.int32, device="cuda")
        rhs = torch.randint(-8, 8, (256, 256), dtype=torch.int32, device="cuda")
        out = torch.zeros(128, 256, dtype=torch.int32, device="cuda")
        K.double_buffer_co(lhs, rhs, out)
        ref = (lhs.cpu().long() @ rhs.cpu().long()).int()
        expect_equal(out.cpu(), ref, "tutorial double buffer")


@test
def unsigned_elements():
    # u32 values across the whole range (bit patterns in int32 tensors),
    # u8 values past 127: division, remainder, shift, comparison and
    # conversions must be the unsigned ones. 600 blocks, a ragged tail.
    for m in sweep((32, 32 * 600 + 5), (37,)):
        wide_a = torch.randint(0, 2**32, (m,), dtype=torch.int64)
        wide_a[:4] = torch.tensor([0, 2**31, 2**32 - 1, 2**31 + 1])
        a = ((wide_a + 2**31) % 2**32 - 2**31).to(torch.int32).cuda()
        b8 = torch.randint(0, 256, (m,), dtype=torch.int64)
        b = ((b8 + 128) % 256 - 128).to(torch.int8).cuda()
        q = poisoned((m,), torch.int32)
        big = poisoned((m,), torch.int32)
        f = poisoned((m,), torch.float32)
        wide = poisoned((m,), torch.int32)
        K.unsigned_co(a, q, big, f, b, wide)
        want_q = (wide_a // 3 + wide_a % 5 + (wide_a >> 1)) % 2**32
        want_q = ((want_q + 2**31) % 2**32 - 2**31).to(torch.int32)
        expect_equal(q.cpu(), want_q, f"u32 / % >>, M = {m}")
        expect_equal(big.cpu(), (wide_a > 2**31).to(torch.int32),
                     f"u32 >, M = {m}")
        expect_equal(f.cpu(), wide_a.to(torch.float32), f"u32 to f32, M = {m}")
        expect_equal(wide.cpu(), b8.to(torch.int32), f"u8 to s32, M = {m}")


@test
def conversions_take_the_named_signedness():
    # __to<s32> of a u8 and `s32 w = <u32>` are signed, __to<u32> of a
    # signed value unsigned (signedness_co): negative values shift,
    # divide, compare and convert as signed ones. 300 blocks, a tail.
    for m in sweep((1, 128 * 300 + 7), (37,)):
        b8 = torch.randint(0, 256, (m,), dtype=torch.int64)
        b8[:3] = torch.tensor([0, 99, 255])[:m]
        b = ((b8 + 128) % 256 - 128).to(torch.int8).cuda()
        wide_a = torch.randint(0, 2**32, (m,), dtype=torch.int64)
        wide_a[:3] = torch.tensor([2**31, 2**32 - 1, 5])[:m]
        signed_a = (wide_a + 2**31) % 2**32 - 2**31
        a = signed_a.to(torch.int32).cuda()
        h, d, e, u = (poisoned((m,), torch.int32) for _ in range(4))
        f = poisoned((m,), torch.float32)
        K.signedness_co(b, a, h, d, e, f, u)
        v = b8 - 100
        expect_equal(h.cpu(), (v >> 1).to(torch.int32), f"s32 >> 1, M = {m}")
        want_d = torch.div(signed_a, 3, rounding_mode="trunc")
        expect_equal(d.cpu(), want_d.to(torch.int32), f"s32 / 3, M = {m}")
        want_e = wide_a // 7
        expect_equal(e.cpu(), ((want_e + 2**31) % 2**32 - 2**31).to(torch.int32),
                     f"u32 / 7, M = {m}")
        expect_equal(f.cpu(), (torch.where(v < 0, 1000.0, 0.0) + v).to(torch.float32),
                     f"s32 < 0 and to f32, M = {m}")
        expect_equal(u.cpu(), ((v % 2**32) >> 28).to(torch.int32), f"u32 >> 28, M = {m}")


def check_col_major_a(kernel, shapes, b_is_nk, what):
    """A column-major: lhs [K, M]; rhs [N, K] (col.row) or [K, N] (col.col)."""
    for m, n, k in shapes:
        a = torch.randn(k, m, device="cuda").half()
        b = torch.randn(*((n, k) if b_is_nk else (k, n)), device="cuda").half()
        c = poisoned((m, n), torch.float32)
        kernel(a, b, c)
        ref = a.double().T @ (b.double().T if b_is_nk else b.double())
        err = relative_error(c, ref)
        assert err < 1e-3, f"{what} {m}x{n}x{k}: relative error {err}"


@test
def warp_mma_col_row():
    check_col_major_a(K.mma_cr_co, WARP_MMA_SHAPES, True, "col.row")


@test
def warp_mma_col_col():
    check_col_major_a(K.mma_cc_co, WARP_MMA_SHAPES, False, "col.col")


def check_transposed_matmul(kernel, shapes, tolerance, what):
    """C = A B^T stored transposed: f16 lhs [M, K], rhs [N, K], out [N, M]."""
    for m, n, k in shapes:
        a = torch.randn(m, k, device="cuda").half()
        b = torch.randn(n, k, device="cuda").half()
        ct = poisoned((n, m), torch.float32)
        kernel(a, b, ct)
        ref = (a.double() @ b.double().T).T
        err = relative_error(ct, ref)
        assert err < tolerance, f"{what} {m}x{n}x{k}: relative error {err}"


@test
def warp_mma_store_transposed():
    # mma.store.transp of a warp (mma.sync) accumulator; 1024 blocks at
    # 512x512, an odd K-step count, the smallest tile.
    check_transposed_matmul(K.mma_transp_co, WARP_MMA_SHAPES, 1e-3,
                            "mma.store.transp, warp")


@test
def wgmma_store_transposed():
    # mma.store.transp of a warpgroup (wgmma) accumulator into shared, then
    # copied out: ragged M, N and K tails (zero-filled loads, clipped
    # store), 576 blocks at 1536x1536, one and three K tiles.
    check_transposed_matmul(
        K.wgmma_transp_co,
        sweep(((64, 64, 64), (100, 72, 200), (1536, 1536, 192),
               (128, 320, 64)), ((64, 64, 64), (100, 72, 200))),
        1e-3, "mma.store.transp, warpgroup")


@test
def tensor_initialisers():
    # shared f32 [32, 64] s{2.0f} then +1 per element by the threads;
    # local f32 [8] l{3.0f} with l[1] += t. 600 blocks; M ragged against
    # the 32-row tile; one block.
    for m in sweep((32, 32 * 600, 1000), (32, 40)):
        out_s = poisoned((m, 64), torch.float32)
        out_l = poisoned((m, 8), torch.float32)
        K.tensor_init_co(out_s, out_l)
        expect_equal(out_s, torch.full((m, 64), 3.0, device="cuda"),
                     f"shared initialiser, M = {m}")
        ref = torch.full((m, 8), 3.0, device="cuda")
        ref[:, 1] += torch.arange(m, device="cuda").float() % 32
        expect_equal(out_l, ref, f"local initialiser, M = {m}")


@test
def select_over_futures():
    # f = select(which, fa, fb): which indexes the futures (fa for 0, fb
    # for 1; past the last, the last). 600 blocks, a ragged M (the tail
    # tile's copies clip), one block.
    for m in sweep((32, 32 * 600, 1000), (32, 40)):
        a = torch.randn(m, 64, device="cuda")
        b = torch.randn(m, 64, device="cuda")
        for which, ref in ((0, a), (1, b), (7, b)):
            out = poisoned((m, 64), torch.float32)
            K.select_co(a, b, out, which)
            expect_equal(out, ref, f"select({which}, fa, fb), M = {m}")


@test
def warp_gemm_async_copies():
    # Every warp of a 2x2 group copies the block's 32x32 tiles with
    # cp.async in the K loop: the barriers croq-insert-barriers places keep
    # the next copy from overwriting a tile other warps read. 1024 blocks at
    # 1024x1024; ragged M, N and K; one K tile; an odd count of K tiles.
    check_matmul(K.warp_gemm_async_co,
                 sweep(((32, 32, 32), (100, 72, 200), (1024, 1024, 96),
                        (1000, 1100, 168)), ((32, 32, 32), (100, 72, 96))),
                 True, 1e-3, "warp GEMM with cp.async tiles")


@test
def nested_inthreads_clamp():
    # Corner threads (ty in {0, 3}, tx in {0, 15}) raise their 4x4 patches
    # of a 16x64 shared tile to at least v; no barrier inside the regions
    # (that hung the block). 700 blocks at M = 11200, a ragged last tile.
    for m in sweep((16, 48, 11200, 1000), (16, 40)):
        data = torch.randn(m, 64, device="cuda")
        v = 0.25
        ref = data.clone()
        rows = torch.arange(m, device="cuda") % 16
        cols = torch.arange(64, device="cuda")
        corner = (((rows // 4) == 0) | ((rows // 4) == 3))[:, None] & \
            (((cols // 4) == 0) | ((cols // 4) == 15))[None, :]
        ref = torch.where(corner & (ref < v), torch.full_like(ref, v), ref)
        K.clamp_corners_co(data, v)
        expect_equal(data, ref, f"clamp M = {m}")


@both("matmul_persistent", "matmul_persistent_co")
def persistent_schedule_warp_mma(kernel):
    # Tile counts below, at and far above NUM_SMS = 132 (4225 tiles at
    # 1040x1040), and K tails.
    for m, n, k in sweep(((16, 16, 64), (256, 128, 256), (400, 560, 200),
                          (1040, 1040, 72)), ((16, 16, 64), (48, 40, 72))):
        a = (torch.randn(m, k, device="cuda") / 4).half()
        b = (torch.randn(n, k, device="cuda") / 4).half()
        out = poisoned((m, n), torch.float16)
        kernel(a, b, out)
        err = relative_error(out, a.double() @ b.double().T)
        # An f16 accumulator, as in the seed.
        assert err < 1e-2, f"{m}x{n}x{k}: relative error {err}"


@test
def code_between_levels_runs_once():
    n = 3 if SMALL else 1000
    counts = torch.randint(0, 100, (n,), dtype=torch.int32, device="cuda")
    before = counts.clone()
    seen = poisoned((n, 256), torch.int32)
    K.count_blocks(counts, seen)
    expect_equal(counts, before + 1, "counts")
    expect_equal(seen, (before + 1)[:, None].expand(n, 256).contiguous(), "seen")


@test
def break_and_continue_croqtile():
    x = poisoned((32,), torch.int32)
    K.loops_co(x)
    ref = torch.tensor([sum(i for i in range(t) if i % 2 == 0) + t + 1
                        for t in range(32)], dtype=torch.int32)
    expect_equal(x.cpu(), ref, "break/continue")


def check_ring_sum(kernel, rows_per_block, what):
    # 64 tiles per block through a two-slot ring: every slot's mbarrier
    # completes 32 phases, so a wrong parity or arrival count hangs or
    # reads a stale tile. Small integers keep the float sums exact.
    for m in sweep((rows_per_block, rows_per_block * 133,
                    rows_per_block * MANY_BLOCKS), (rows_per_block,)):
        x = torch.randint(-8, 8, (m, 4096), device="cuda").float()
        out = poisoned((m,), torch.float32)
        kernel(x, out)
        expect_equal(out, x.sum(dim=1), f"{what}, M = {m}")
    # A ragged M makes input.chunkat(bm, k) rows / cdiv(M, rows) high, not
    # the ring slot's height: refused by the host.
    m = rows_per_block + 3
    rejects(kernel, (torch.zeros(m, 4096, device="cuda"),
                     poisoned((m,), torch.float32)), "input", what=what)


@test
def event_ring_one_producer_one_consumer():
    check_ring_sum(K.ring_sum_co, 128, "1P1C ring sum")


@test
def event_whole_array_waits():
    # whole_wait_co.co: `wait full;` and `trigger empty;` of 3-element
    # events. K / 96 rounds (odd, even, many: each slot's phase flips every
    # round), ragged M (tail rows read as zero, not stored), 1 to 2049
    # blocks. A wait on one element only would read slots still being
    # filled.
    for m, k in sweep(((1, 96), (130, 288), (128 * 133 + 5, 96 * 64),
                       (128 * 2049, 96 * 3), (300, 96 * 65)),
                      ((1, 96), (300, 96 * 5))):
        x = torch.randint(-8, 8, (m, k), device="cuda").float()
        out = poisoned((m,), torch.float32)
        K.whole_wait_co(x, out)
        expect_equal(out, x.sum(dim=1), f"whole-array waits, M = {m}, K = {k}")


@test
def runtime_block_sizes():
    # runtime_threads_co.co: blocks whose size the launch computes. W warps
    # per block (1 to 32, so 32 to 1024 threads) over M blocks (1 to 1500),
    # each block copying its [1, W, 32] tiles into shared memory sized at
    # the launch; then T threads per block (1 to 1024, ragged N, up to
    # 300001 blocks). A size of 0 or past 1024 threads, and T = 0 (which
    # also divides N), are refused before the launch.
    for m, w in sweep(((1, 1), (3, 17), (200, 32), (1500, 5), (7, 31)),
                      ((1, 1), (3, 17))):
        a = torch.randint(-1000, 1000, (m, w, 32), dtype=torch.int32, device="cuda")
        b = torch.randint(-1000, 1000, (m, w, 32), dtype=torch.int32, device="cuda")
        out = poisoned((m, w, 32), torch.int32)
        K.runtime_warps_co(a, b, out)
        expect_equal(out, a + b * 3, f"run-time warp count, M = {m}, W = {w}")
    for n, t in sweep(((1, 1), (300_001, 1), (1000, 33), (300_001, 256),
                       (5000, 1024), (1023, 1000)),
                      ((1, 1), (1000, 33))):
        x = torch.randn(n, device="cuda")
        y = poisoned((n,), torch.float32)
        K.runtime_threads_co(x, y, t)
        lane = (torch.arange(n, device="cuda") % t).float()
        expect_equal(y, x * 2.0 + lane, f"run-time thread count, N = {n}, T = {t}")
    for t, needle in ((1025, "1024 threads"), (0, "division by zero"),
                      (-4, "fewer than 1")):
        rejects(K.runtime_threads_co,
                (torch.zeros(64, device="cuda"), poisoned((64,), torch.float32), t),
                needle, what=f"T = {t}")
    # Launch bounds of 256 threads: T = 256 runs, 257 is refused.
    x = torch.randn(5000, device="cuda")
    y = poisoned((5000,), torch.float32)
    K.runtime_bounded_co(x, y, 256)
    lane = (torch.arange(5000, device="cuda") % 256).float()
    expect_equal(y, x * 2.0 + lane, "run-time thread count under launch bounds")
    rejects(K.runtime_bounded_co, (x, poisoned((5000,), torch.float32), 257),
            "256 threads", what="T = 257 under launch_bounds(256)")
    a = torch.zeros(2, 33, 32, dtype=torch.int32, device="cuda")
    rejects(K.runtime_warps_co, (a, a.clone(), poisoned((2, 33, 32), torch.int32)),
            "1024 threads", what="W = 33")


@test
def buffer_array_subscripts_checked_on_the_host():
    # buffer_index_co.co: s[r] for r in [rounds] and s[pick] of a 4-buffer
    # array; 1 to 2000 blocks. Every legal (rounds, pick) runs; a bound
    # past 4, a pick of 4 and of -1 are refused before the launch.
    for n in sweep((1, 2000), (3,)):
        x = torch.randn(n, 64, device="cuda")
        for rounds, pick in ((1, 0), (4, 0), (4, 3), (3, 2)):
            y = poisoned((n, 64), torch.float32)
            K.buffer_index_co(x, y, rounds, pick)
            expect_equal(y, x + pick, f"N = {n}, rounds = {rounds}, pick = {pick}")
    x = torch.zeros(2, 64, device="cuda")
    for rounds, pick in ((5, 0), (4, 4), (4, -1)):
        rejects(K.buffer_index_co, (x, poisoned((2, 64), torch.float32), rounds, pick),
                "out of bounds of its array of 4 buffers",
                what=f"rounds = {rounds}, pick = {pick}")


@test
def inthreads_assigning_outer_scalars():
    # inthreads_assign_co.co: threads 0-31 set v = 7 + x, threads 64-95 set
    # w = 2 and triple v; the rest keep v = 1, w = 0.5. 1 to 2344 blocks,
    # ragged tails.
    for n in sweep((1, 127, 1000, 300_001), (1, 1000)):
        x = torch.randint(-100, 100, (n,), dtype=torch.int32, device="cuda")
        y = poisoned((n,), torch.int32)
        K.inthreads_assign_co(x, y)
        t = torch.arange(n, device="cuda") % 128
        v = torch.where(t < 32, x + 7, torch.ones_like(x))
        second = (t >= 64) & (t < 96)
        v = torch.where(second, v * 3, v)
        expect_equal(y, v * 10 + second.int(), f"inthreads assignments, N = {n}")


@test
def synchronous_tma_in_two_warpgroups():
    # tma_groups_co.co: rhs loaded once per block, lhs per warpgroup, each
    # on its own barrier; 128x64 tiles, ragged M, N, K (TMA zero-fills
    # and clips), 1 to 2176 blocks, odd K-tile counts.
    check_matmul(K.tma_groups_co,
                 sweep(((1, 8, 8), (300, 200, 136), (4000, 4304, 320),
                        (2048, 2048, 2048), (129, 72, 1000)),
                       ((1, 8, 8), (300, 200, 136))),
                 True, 2e-3, "synchronous TMA in two warpgroups", torch.float16)
    # Clusters of 2 along M, the rhs tile multicast from the warpgroups'
    # body: M a whole number of clusters (256 rows), 2 to 1088 blocks.
    check_matmul(K.tma_groups_cluster_co,
                 sweep(((256, 8, 8), (256, 200, 136), (4096, 1000, 320),
                        (2048, 2048, 2048)),
                       ((256, 8, 8), (256, 200, 136))),
                 True, 2e-3, "synchronous multicast in two warpgroups",
                 torch.float16)
    # Thread 0 of each warpgroup loads its 64 rows; everyone reads them.
    # M a multiple of 128 (the kernel has no tail), 1 to 2048 blocks.
    for m in sweep((128, 384, 128 * 2048), (128, 384)):
        x = torch.randn(m, 64, device="cuda").half()
        y = poisoned((m, 64), torch.float16)
        K.tma_lowest_co(x, y)
        expect_equal(y, x, f"per-warpgroup TMA from one thread, M = {m}")


@test
def tma_futures_across_inthreads_regions():
    # tma_roles_co.co: warpgroup 0 loads each 64x64 K tile of x and w into
    # the buffers of two placeholders, warpgroup 1 waits on the futures the
    # loader's region yields and sums x + 2 w over the K tiles. Ragged M and
    # K (TMA zero-fills), 1 to 2048 blocks, odd and even K-tile counts.
    for m, k in sweep(((1, 8), (64, 64), (200, 136), (300, 1000),
                       (64 * 2048, 200), (129, 8)),
                      ((1, 8), (200, 136))):
        x = torch.randn(m, k, device="cuda").half()
        w = torch.randn(m, k, device="cuda").half()
        y = poisoned((m, 64), torch.float32)
        K.tma_roles_co(x, w, y)
        tiles = (k + 63) // 64
        pad = torch.zeros(m, tiles * 64, device="cuda")
        pad[:, :k] = x.float() + 2 * w.float()
        ref = pad.view(m, tiles, 64).sum(1)
        torch.testing.assert_close(y, ref, rtol=1e-5, atol=1e-4,
                                   msg=lambda e: f"tma_roles_co M={m} K={k}: {e}")
    # tma_roles_once_co.co (upstream's form): one load, waited by the other
    # warpgroup, which stores the tile; 1 to 2048 blocks, ragged tails.
    for m, n in sweep(((1, 8), (100, 200), (64 * 32, 128 * 64), (65, 136)),
                      ((1, 8), (100, 200))):
        x = torch.randn(m, n, device="cuda").half()
        y = poisoned((m, n), torch.float16)
        K.tma_roles_once_co(x, y)
        expect_equal(y, x, f"tma_roles_once_co M={m} N={n}")
    # tma_roles_wgmma_co.co: the handed-over futures' data as wgmma
    # operands (K = 64); 1 to 2048 blocks, ragged M and N.
    for m, n in sweep(((1, 8), (100, 200), (64 * 32, 128 * 64), (65, 136)),
                      ((1, 8), (100, 200))):
        a = torch.randn(m, 64, device="cuda").half()
        b = torch.randn(n, 64, device="cuda").half()
        c = poisoned((m, n), torch.float32)
        K.tma_roles_wgmma_co(a, b, c)
        err = relative_error(c, a.double() @ b.double().T)
        assert err < 1e-3, f"tma_roles_wgmma_co M={m} N={n}: relative error {err}"


@test
def short_circuit_reads():
    # short_circuit_co.co: guarded reads at ragged tails (1 to 2344 blocks);
    # x is a tensor of exactly N elements, so an unguarded read past it is
    # a memcheck error in the sanitizer mode.
    for n in sweep((1, 127, 1000, 300_001), (1, 130)):
        x = torch.randint(-100, 100, (n,), dtype=torch.int32, device="cuda")
        y = poisoned((n,), torch.int32)
        K.short_circuit_co(x, y)
        ref = (x > 0).int() * 1000 + x
        ref = torch.where(x > 50, torch.full_like(x, -1), ref)
        expect_equal(y, ref, f"short-circuit reads, N = {n}")


@test
def event_ring_one_producer_two_consumers():
    # `empty` completes only when both consumer warpgroups (256 threads)
    # have arrived; the consumers run with 232 registers, the producer 40.
    check_ring_sum(K.ring_sum_1p2c_co, 256, "1P2C ring sum")


# The kernel's bounds are M / 128, N / 128 and K / 32: shapes are multiples of
# the tile. 528 blocks at 3072x2816 with three K tiles (odd, not a multiple
# of 2 x stages); K long enough for the ring to wrap many times.
GEMM_WS_SHAPES = sweep(((128, 128, 32), (3072, 2816, 96), (256, 384, 1024),
                        (1024, 512, 2048)), ((128, 128, 32), (128, 256, 96)))


@test
def warp_specialized_gemm_four_stages():
    check_matmul(K.gemm_ws4_co, GEMM_WS_SHAPES, True, 1e-5, "1P2C GEMM, STAGES 4")


@test
def warp_specialized_gemm_two_stages():
    check_matmul(K.gemm_ws2_co, GEMM_WS_SHAPES, True, 1e-5, "1P2C GEMM, STAGES 2")


# The seed's 1P1C matmul tiles 64x64 with K slices of 128; tails in M, N and
# K (zero-filled copies, clipped stores); 1584 blocks at 2112x3072 with three
# K slices.
SEED_1P1C_SHAPES = sweep(((64, 64, 128), (192, 320, 1024), (100, 72, 200),
                          (2112, 3000, 328)), ((64, 64, 128), (100, 72, 200)))


@test
def seed_1p1c_wgmma_two_stages():
    # f16 accumulation, as the seed declares (mma.fill.f16).
    check_matmul(K.matmul_1p1c_co, SEED_1P1C_SHAPES, True, 1e-2,
                 "seed 1P1C wgmma, STAGES 2", torch.float16)


@test
def seed_1p1c_wgmma_four_stages():
    check_matmul(K.matmul_1p1c_s4_co, SEED_1P1C_SHAPES, True, 1e-2,
                 "seed 1P1C wgmma, STAGES 4", torch.float16)


@test
def seed_1p1c_wgmma_named_swizzle():
    # dma.copy.swiz<128>: the copies name the layout the buffers have.
    check_matmul(K.matmul_1p1c_swiz_co, SEED_1P1C_SHAPES, True, 1e-2,
                 "seed 1P1C wgmma, dma.copy.swiz<128>", torch.float16)


@test
def tma_issued_by_one_warp_role():
    # A role of one warp (threads 32..63) issues the TMA load once, from its
    # lowest thread; its other threads arrive plainly. Ragged M, and 313
    # blocks at M = 10000.
    for m in sweep((32, 33, 100, 10000), (33, 100)):
        src = torch.randn(m, 32, device="cuda")
        dst = poisoned((m, 32), torch.float32)
        K.tma_subwarp_co(src, dst)
        expect_equal(dst, src + 1, f"one-warp TMA role {m}x32")


@test
def tma_copy_both_ways():
    # Tails in both dimensions: the load zero-fills, the store clips.
    # 32x32 tiles: 2112 blocks at 1500x1400.
    for m, n in sweep(((32, 32), (64, 64), (100, 72), (257, 36), (1500, 1400)),
                      ((32, 32), (100, 72))):
        src = torch.randn(m, n, device="cuda")
        dst = poisoned((m, n), torch.float32)
        K.tma_copy_co(src, dst)
        expect_equal(dst, src + 1, f"TMA copy {m}x{n}")
    # 70 f32 columns put rows 280 bytes apart, which TMA cannot address:
    # the host names the tensor and the dimension to pad.
    rejects(K.tma_copy_co, (torch.zeros(64, 70, device="cuda"),
                            poisoned((64, 70), torch.float32)),
            "'src'", "dimension 1", "multiple of 4 elements",
            what="TMA copy 64x70")


# Tiles of 64x64x64; tails in M, N and K (TMA needs K to be a multiple of 8
# halves: 16-byte rows, and N too for an f16 output); 1155 blocks at
# 2200x2104 with 5 K tiles.
TMA_WS_SHAPES = sweep(((64, 64, 64), (192, 320, 1024), (100, 72, 200),
                       (2200, 2104, 320)), ((64, 64, 64), (100, 72, 200)))


@test
def tma_warp_specialized_d1():
    check_matmul(K.tma_ws_d1_co, TMA_WS_SHAPES, True, 1e-2,
                 "TMA 1P1C (D1 forms, f16 accumulation)", torch.float16)


@test
def tma_warp_specialized_d2():
    check_matmul(K.tma_ws_d2_co, TMA_WS_SHAPES, True, 1e-5,
                 "TMA 1P1C (D2 forms, f32 accumulation)")


@test
def tma_warpgroup_producer_stacked_ring():
    # An elected thread of the producer warpgroup issues; 128 arrivals.
    check_matmul(K.tma_ws_stacked_co, TMA_WS_SHAPES, True, 1e-2,
                 "TMA 1P1C, whole-warpgroup producer, stacked ring",
                 torch.float16)


@test
def tma_async_mma_d2():
    check_matmul(K.tma_mma_async_co, TMA_WS_SHAPES, True, 1e-5,
                 "D2 async MMA with `wait f` (f32 accumulation)")


GEMM_TMA_SHAPES = sweep(((128, 256, 64), (256, 512, 1024), (300, 200, 136),
                         (4000, 4304, 320)), ((128, 256, 64), (300, 200, 136)))


@test
def tma_wgmma_gemm_one_producer_two_consumers():
    # 128x256x64 tiles, 4 stages: 544 blocks at 4000x4304 with 5 K tiles.
    check_matmul(K.gemm_tma_co, GEMM_TMA_SHAPES, True,
                 1e-5, "TMA 1P2C GEMM 128x256x64")


@test
def tma_wgmma_gemm_squeezed_stages():
    # A stages squeezed out of one 3-D shared buffer: TMA writes and wgmma
    # reads them swizzled through the rank-reducing views. 128x128x64
    # tiles; the smallest shape, ragged M, N and K (an odd K-tile count),
    # 34 x 34 = 1156 blocks.
    shapes = sweep(((1, 8, 8), (128, 128, 64), (300, 200, 136), (128 * 34, 128 * 34, 192)),
                   ((1, 8, 8), (300, 200, 136)))
    check_matmul(K.sqz_stages_co, shapes, True, 1e-5, "squeezed-stage GEMM")


# The smallest shape; ragged M, N and K with 9 K tiles; 32 x 33 = 1056
# blocks of 128-row tiles (2112 of 64 rows, 528 of 256) with 3 K tiles.
WGMMA_FORM_SHAPES = sweep(((1, 8, 8), (300, 264, 520), (4096, 4224, 136)),
                          ((1, 8, 8), (300, 264, 520)))


def check_wgmma_forms(cases):
    """Each (kernel, what) at WGMMA_FORM_SHAPES, f32 out, exact to 1e-5."""
    for kernel, what in cases:
        check_matmul(kernel, WGMMA_FORM_SHAPES, True, 1e-5, what)


@test
def tma_wgmma_gemm_synchronous_warpgroups():
    # No events: synchronous copies into one A and one B tile, which two
    # (four) warpgroups read with wgmma and the next K step overwrites (an
    # outsider's program raced here: the next copy landed under wgmmas
    # still reading); with DMA copies the threads copy (tails read as zero).
    check_wgmma_forms([
        (K.gemm_sync_warpgroups_co, "synchronous GEMM, two warpgroups"),
        (K.gemm_sync_wg4, "synchronous GEMM, four warpgroups"),
        (K.gemm_sync_dma, "synchronous GEMM, two warpgroups, DMA copies")])


@test
def tma_wgmma_gemm_release_forms():
    # Ring slots released from each warp of the consumer warpgroup, and (no
    # roles) from thread 0 of each of two warpgroups, with one and two
    # slots: each release after the releasing threads' wgmmas completed.
    check_wgmma_forms([
        (K.gemm_release_forms_co, "GEMM, slots released by each consumer warp"),
        (K.gemm_release_no_roles, "GEMM without roles, one slot released by thread 0"),
        (K.gemm_release_no_roles_s2, "GEMM without roles, two slots released by thread 0")])


@test
def register_tiles():
    # frag tiles of a thread parallel: a row softmax of [200, 16] tiles over
    # 64 threads (200 rows do not divide: 8 threads hold 4 rows, the rest
    # 3), and a [1000] tile over 128 threads and a row sum of [8, 125] (8
    # rows, 120 threads idle). One block and 1500 blocks.
    for b in sweep((1, 7, 1500), (1, 3)):
        x = torch.randn(b, 200, 16, device="cuda")
        y = poisoned((b, 200, 16), torch.float32)
        rowsum = poisoned((b, 200), torch.float32)
        K.frag_softmax_co(x, y, rowsum)
        e = torch.exp(x - x.amax(dim=2, keepdim=True))
        assert relative_error(y, e / e.sum(dim=2, keepdim=True)) < 1e-5, \
            f"frag softmax, B = {b}"
        assert relative_error(rowsum, e.sum(dim=2)) < 1e-5, f"frag copy, B = {b}"
        x = torch.randn(b, 1000, device="cuda")
        y = poisoned((b, 1000), torch.float32)
        sums = poisoned((b, 8), torch.float32)
        K.frag_sum_co(x, y, sums)
        assert relative_error(y, x * 2 + 1) < 1e-6, f"frag fma, B = {b}"
        assert relative_error(sums, x.view(b, 8, 125).sum(dim=2)) < 1e-5, \
            f"frag reduce_sum, B = {b}"


@test
def warpgroup_register_tiles():
    # apply over a wgmma accumulator and over [64, 128] / [64] tiles of a
    # warpgroup: a masked row softmax of Q K^T (K = 64), reduce_max over the
    # accumulator and reduce_sum over a tile (quad shuffles), and row parts
    # accumulated in an apply, then all_reduce_sum / all_reduce_max. 1 to
    # 1600 blocks, M ragged against the 64-row tile.
    for m in sweep((1, 64, 100, 102_400), (1, 100)):
        q = torch.randn(m, 64, device="cuda").half()
        k = torch.randn(128, 64, device="cuda").half()
        p = poisoned((m, 128), torch.float32)
        rowmax = poisoned((m,), torch.float32)
        rowsum = poisoned((m,), torch.float32)
        rowmax2 = poisoned((m,), torch.float32)
        K.wg_frag_co(q, k, p, rowmax, rowsum, rowmax2)
        s = q.float() @ k.float().T
        rows = torch.arange(m, device="cuda").remainder(64).unsqueeze(1)
        cols = torch.arange(128, device="cuda").unsqueeze(0)
        s = s.masked_fill(cols > rows + 32, float("-inf"))
        assert relative_error(rowmax, s.amax(dim=1)) < 1e-4, \
            f"reduce_max over the accumulator, M = {m}"
        assert relative_error(p, torch.softmax(s, dim=1)) < 1e-4, \
            f"warpgroup frag softmax, M = {m}"
        e = torch.exp(s - s.amax(dim=1, keepdim=True))
        assert relative_error(rowsum, e.sum(dim=1) + 1) < 1e-4, \
            f"partial row sums and all_reduce_sum, M = {m}"
        assert relative_error(rowmax2, s.amax(dim=1)) < 1e-6, \
            f"partial row maxima and all_reduce_max, M = {m}"


@test
def foreach_aliases_and_masks():
    # foreach c = a(1:-1), foreach a(0:-7), foreach a(7:), each masked by
    # `if (r < N && r % 3 != 0)`: the smallest N, a ragged tail, 1200 blocks.
    for n in sweep((1, 300, 153_600), (1, 300)):
        out = poisoned((n, 8), torch.int32)
        K.foreach_forms_co(out)
        r = torch.arange(n, device="cuda").unsqueeze(1)
        c = torch.arange(8, device="cuda").unsqueeze(0)
        ref = (c * 10 + r % 7).int()
        ref[:, 0] = -1
        ref[:, 7] = -2
        ref = torch.where(r % 3 != 0, ref, torch.full_like(ref, -12345))
        expect_equal(out, ref, f"foreach aliases and masks, N = {n}")


@test
def yield_ends_the_thread():
    # yield from inside two loops, and past the tail: thread r yields at
    # step r % 70 of 64. The smallest N, a ragged tail, 1300 blocks.
    for n in sweep((1, 300, 166_400), (1, 300)):
        out = poisoned((n,), torch.int32)
        steps = poisoned((n,), torch.int32)
        K.yield_co(out, steps)
        k = torch.arange(n, device="cuda") % 70
        never = k >= 64
        poison = torch.full((n,), -12345, dtype=torch.int32, device="cuda")
        ref_out = torch.where(never, torch.full_like(poison, 64), poison)
        last = torch.where(never, torch.full_like(k, 64), 4 * (k // 4))
        ref_steps = torch.where(last >= 4, last.int(), poison)
        expect_equal(out, ref_out, f"yield: out, N = {n}")
        expect_equal(steps, ref_steps, f"yield: steps, N = {n}")


@test
def dma_pad():
    # dma.pad of [2, 4] tiles into shared ([7, 13]: low {1, 2}, high {3, 1},
    # mid {1, 2}, value -1) and of [1, 4] rows into local ([1, 6], value 9):
    # one block, 150 and 2000 blocks.
    for m in sweep((2, 300, 4000), (2, 300)):
        x = torch.randn(m, 4, device="cuda")
        y = poisoned((m // 2 * 7, 13), torch.float32)
        z = poisoned((m, 6), torch.float32)
        K.pad_co(x, y, z)
        ref = torch.full((m // 2, 7, 13), -1.0, device="cuda")
        ref[:, 1:4:2, 2:12:3] = x.view(m // 2, 2, 4)
        expect_equal(y, ref.view(m // 2 * 7, 13), f"dma.pad into shared, M = {m}")
        refz = torch.full((m, 6), 9.0, device="cuda")
        refz[:, 1:5] = x
        expect_equal(z, refz, f"dma.pad into local, M = {m}")


@test
def host_element_statements():
    # A host loop over elements (one GPU thread), then a parallel (1 to 157
    # blocks), then a host read-modify-write and a filtered host loop
    # (foreach ... if (a.at(i) < 0)): in program order.
    for n in sweep((1, 129, 20_000), (1, 129)):
        a = poisoned((n,), torch.int32)
        K.host_elements_co(a)
        i = torch.arange(n, device="cuda", dtype=torch.int32)
        ref = torch.where(i % 2 == 0, i * 3, torch.full_like(i, -2))
        ref[0] += 7
        expect_equal(a, ref, f"host element statements, N = {n}")


@test
def flash_attention():
    # Flash attention (head dim 64, scale 1/8): S = Q K^T on wgmma, the
    # online softmax on register tiles, O += P V with P from registers (RS)
    # and V MN-major. The smallest shapes, ragged S and T (a masked KV
    # tail), one KV tile and five, 200 blocks.
    for s, t in sweep(((1, 1), (64, 64), (100, 72), (300, 320), (12_800, 64)),
                      ((1, 1), (100, 72))):
        q = torch.randn(s, 64, device="cuda").half()
        k = torch.randn(t, 64, device="cuda").half()
        v = torch.randn(t, 64, device="cuda").half()
        o = poisoned((s, 64), torch.float32)
        K.flash_co(q, k, v, o)
        p = torch.softmax((q.float() @ k.float().T) * 0.125, dim=1)
        err = relative_error(o, p @ v.float())
        # P is rounded to f16 before P V.
        assert err < 2e-3, f"flash attention S = {s}, T = {t}: relative error {err}"


@test
def flash_attention_warp_specialized():
    # Multi-head flash attention (head dim 64, scale 1/8) in the tutorial's
    # warp-specialized form: TMA of per-head views squeezed out of
    # [B, S, H, 64] tensors (the batch and head coordinates must reach the
    # tensor map), setreg budgets, comma-form frags, and P V of the previous
    # KV tile waited on its slot. The smallest shapes, ragged S and T, one
    # KV tile and five (an odd count), 320 blocks.
    for b, s, t, h in sweep(((1, 1, 1, 1), (1, 64, 64, 1), (2, 100, 72, 3),
                             (1, 300, 320, 2), (4, 64 * 40, 64, 2)),
                            ((1, 1, 1, 1), (2, 100, 72, 3))):
        q = torch.randn(b, s, h, 64, device="cuda").half()
        k = torch.randn(b, t, h, 64, device="cuda").half()
        v = torch.randn(b, t, h, 64, device="cuda").half()
        o = poisoned((b, s, h, 64), torch.float16)
        K.flash_ws_co(q, k, v, o)
        qf, kf, vf = (x.float().permute(0, 2, 1, 3) for x in (q, k, v))
        p = torch.softmax((qf @ kf.transpose(-1, -2)) * 0.125, dim=-1)
        ref = (p @ vf).permute(0, 2, 1, 3)
        err = relative_error(o, ref)
        # P and O are rounded to f16.
        assert err < 5e-3, (f"warp-specialized flash attention B = {b}, S = {s}, "
                            f"T = {t}, H = {h}: relative error {err}")


@test
def wgmma_mn_major_operands():
    # wgmma reading B as [K, N] (row.col), A as [K, M] (col.row) and both
    # (col.col), through the transposed descriptors: 64x128 block tiles, K
    # in 64-wide tiles; the smallest shape, ragged M, N and K tails, one K
    # tile and five, 640 blocks at 2048x2560.
    shapes = sweep(((1, 1, 1), (64, 128, 64), (100, 200, 72),
                    (2048, 2560, 320)), ((1, 1, 1), (100, 200, 72)))
    for name, a_km, b_kn in (("wgmma_rc_co", False, True),
                             ("wgmma_cr_co", True, False),
                             ("wgmma_cc_co", True, True)):
        for m, n, k in shapes:
            a = torch.randn(m, k, device="cuda").half()
            b = torch.randn(n, k, device="cuda").half()
            c = poisoned((m, n), torch.float32)
            getattr(K, name)(a.T.contiguous() if a_km else a,
                             b.T.contiguous() if b_kn else b, c)
            err = relative_error(c, a.double() @ b.double().T)
            assert err < 1e-3, f"{name} {m}x{n}x{k}: relative error {err}"


@test
def tma_wgmma_gemm_fp8():
    # f8 e4m3 operands, 32 K elements per wgmma, 128x128x128 tiles: the
    # smallest shape, ragged M, N and K tails (TMA zero-fills, the store
    # clips), and 1088 blocks with 4 K tiles. Small integers are exact in
    # e4m3, so the f32 result is exact too.
    for m, n, k in sweep(((1, 8, 16), (128, 128, 128), (300, 200, 144),
                          (4000, 4300, 400)), ((1, 8, 16), (300, 200, 144))):
        a = torch.randint(-4, 5, (m, k), device="cuda").float()
        b = torch.randint(-4, 5, (n, k), device="cuda").float()
        c = poisoned((m, n), torch.float32)
        K.gemm_fp8_co(a.to(torch.float8_e4m3fn), b.to(torch.float8_e4m3fn), c)
        expect_equal(c, a @ b.T, f"f8 e4m3 TMA GEMM {m}x{n}x{k}")


@test
def tma_wgmma_gemm_tf32_and_s8():
    # wgmma of f32 operands as tf32 (K tiles of 32) and of s8 into s32 (K
    # tiles of 128): the smallest shape, ragged M, N and K tails, and
    # 32 x 34 = 1088 blocks with several K tiles. Small integers are exact
    # in tf32, so both results are exact.
    for m, n, k in sweep(((1, 8, 16), (128, 128, 128), (300, 200, 144),
                          (4000, 4300, 400)), ((1, 8, 16), (300, 200, 144))):
        a = torch.randint(-8, 9, (m, k), device="cuda")
        b = torch.randint(-8, 9, (n, k), device="cuda")
        ref = a.cpu().long() @ b.cpu().long().T
        c = poisoned((m, n), torch.float32)
        K.gemm_tf32_co(a.float(), b.float(), c)
        expect_equal(c.cpu(), ref.float(), f"tf32 TMA GEMM {m}x{n}x{k}")
        c = poisoned((m, n), torch.int32)
        K.gemm_s8_co(a.to(torch.int8), b.to(torch.int8), c)
        expect_equal(c.cpu(), ref.int(), f"s8 TMA GEMM {m}x{n}x{k}")


@test
def tma_without_swizzle_into_wgmma_operands():
    # tma_plain_wgmma_co: unswizzled TMA copies into buffers wgmma reads
    # take the buffers' 64-byte swizzle. 64x64 tiles; ragged M, N and K
    # (zero-filled by TMA), 1 to 4096 blocks, odd K-tile counts.
    check_matmul(K.tma_plain_wgmma_co,
                 sweep(((1, 8, 8), (64, 64, 32), (300, 200, 136),
                        (4096, 4096, 96), (129, 72, 1000)),
                       ((1, 8, 8), (300, 200, 136))),
                 True, 1e-3, "TMA without a swizzle into wgmma operands")


@test
def tma_wgmma_gemm_two_panel_k_tiles():
    # 128-wide K tiles (rows of 256 bytes, two 128-byte swizzle panels, one
    # TMA box each): the smallest shape, ragged M, N and K (K = 136: a
    # second K tile of one panel's worth, the rest zero-filled), 1024 blocks
    # with 5 K tiles.
    check_matmul(K.gemm_tma_bk128_co,
                 sweep(((1, 8, 8), (128, 128, 128), (300, 200, 136),
                        (4096, 4096, 640)), ((1, 8, 8), (300, 200, 136))),
                 True, 1e-5, "TMA 1P2C GEMM, K tiles of two panels")


@test
def tma_wgmma_gemm_grouped_tile_order():
    # 3 row tiles (a partial strip of GROUP_M = 8) and 17 x 4 tiles.
    check_matmul(K.gemm_tma_grouped_co,
                 sweep(((128, 256, 64), (300, 200, 136), (2176, 1024, 256),
                        (4000, 4300, 200)), ((300, 200, 136),)), True, 1e-5,
                 "TMA 1P2C GEMM, grouped tile order")


def check_gemm_f16(kernel, what):
    # The sweep benchmark's kernels: f16 stored from registers, grouped
    # order. 128x256 tiles: 32 x 17 = 544 blocks at 4000x4304 (a partial
    # GROUP_M strip, ragged M, N and K); 128x128: 1088 blocks there.
    check_matmul(kernel,
                 sweep(((1, 8, 8), (128, 256, 64), (300, 200, 136),
                        (4000, 4304, 320), (2048, 2048, 2048),
                        (1024, 1024, 4160)), ((1, 8, 8), (300, 200, 136))),
                 True, 2e-3, what, torch.float16)


@test
def tma_wgmma_gemm_f16_output():
    check_gemm_f16(K.gemm_f16_co, "f16-output GEMM, 128x256x64, 4 stages")


@test
def tma_wgmma_gemm_f16_output_bn128():
    check_gemm_f16(K.gemm_f16_bn128, "f16-output GEMM, 128x128x64, 6 stages")


@test
def tma_wgmma_gemm_persistent_f16_output():
    # 132 blocks over 544 tiles at 4000x4304 (4 or 5 each, the last tile
    # iteration guarded), 16 x 16 tiles at 2048^3, fewer tiles than blocks.
    check_gemm_f16(K.gemm_persistent_f16_co,
                   "persistent f16-output GEMM, 128x256x64, 4 stages")


@test
def tma_wgmma_gemm_persistent_f16_output_bn128():
    check_gemm_f16(K.gemm_persistent_f16_bn128,
                   "persistent f16-output GEMM, 128x128x64, 6 stages")


@test
def tma_wgmma_gemm_pingpong_consumers():
    # Each consumer warpgroup takes whole 128x128 tiles in turn, on a ring
    # of its own: 1088 tiles over 132 blocks at 4000x4304 (8 or 9 each, so
    # the first consumer has one more than the second in some blocks), one
    # tile (the second consumer idle) at the smallest shape.
    check_gemm_f16(K.gemm_pingpong_co,
                   "persistent ping-pong GEMM, 128x128x64, 2 rings of 3")


@test
def tma_wgmma_gemm_pingpong_consumers_ordered():
    # The same, the consumers handing the main loop to each other.
    check_gemm_f16(K.gemm_pingpong_ordered,
                   "persistent ping-pong GEMM, main loops in turn")


@test
def tma_wgmma_gemm_pingpong_consumers_bm64():
    # 64x256 tiles, one accumulator per consumer, rings of 2: 63 x 17 =
    # 1071 tiles at 4000x4304.
    check_gemm_f16(K.gemm_pingpong_bm64,
                   "persistent ping-pong GEMM, 64x256x64, 2 rings of 2")


@test
def tma_wgmma_gemm_pingpong_consumers_cluster2():
    # Clusters of two blocks on two row tiles of one column strip, the rhs
    # tile multicast, each consumer's ring released across the cluster: 16
    # x 34 = 544 cluster tiles at 4000x4304 (the last row tile of 32 past
    # M in its second block), one cluster tile at the smallest shape.
    check_gemm_f16(K.gemm_pingpong_cluster2,
                   "persistent ping-pong GEMM, clusters of 2, multicast")


@test
def tma_wgmma_gemm_staged_epilogue():
    # The epilogue staged in a swizzled shared buffer and stored with TMA,
    # one box per 64-column panel: ragged tails clipped by TMA.
    check_gemm_f16(K.gemm_f16_staged,
                   "f16-output GEMM, TMA-stored epilogue, 3 stages")


@test
def tma_wgmma_gemm_persistent_staged_epilogue():
    # The staging buffer is reused by each block's next tile: the TMA store
    # must have read it before the next tile's accumulators land.
    check_gemm_f16(K.gemm_persistent_f16_staged,
                   "persistent f16-output GEMM, TMA-stored epilogue, 3 stages")


@test
def tma_wgmma_gemm_persistent_staged_epilogue_batch_in_flight():
    # The sweep's persistent staged GEMM with one wgmma batch in flight in
    # its 3-slot ring (--croq-mma-defer-min-slots=3): each stage is
    # released one K step late, after the wgmma that read it.
    check_gemm_f16(K.gemm_persistent_f16_staged_d3,
                   "persistent f16-output GEMM, TMA-stored epilogue, 3 stages, "
                   "a batch in flight")


@test
def tma_wgmma_gemm_stream_k():
    # Stream-K over 132 blocks after whole waves: the tiles of the whole
    # waves one per block, the k iterations of the rest divided evenly, the
    # tiles split between blocks finished by the consumer that arrives last.
    # 300x200x136 has 9 k iterations for 132 blocks (each tile in 3 pieces
    # of one iteration); 1024x1024x4160, 32 tiles of 65 k tiles, in pieces
    # of 15-16 over up to 5 blocks (3 with 128-wide tiles); 4000x4304x320,
    # 544 tiles: 4 whole waves, then 16 tiles in pieces (1088 and 8 waves
    # then 32 tiles with 128-wide tiles); (1, 8, 8) and (128, 256, 64) are
    # one whole tile.
    check_gemm_f16(K.gemm_stream_k_co,
                   "stream-K f16-output GEMM, 128x256x64, 4 stages")


@test
def tma_wgmma_gemm_stream_k_bn128():
    check_gemm_f16(K.gemm_stream_k_bn128,
                   "stream-K f16-output GEMM, 128x128x64, 6 stages")


@test
def tma_wgmma_gemm_stream_k_batch_in_flight():
    check_gemm_f16(K.gemm_stream_k_s3,
                   "stream-K f16-output GEMM, 3 stages, a batch in flight")


@test
def tma_wgmma_gemm_stream_k_staged_epilogue():
    check_gemm_f16(K.gemm_stream_k_staged,
                   "stream-K f16-output GEMM, 3 stages, TMA epilogue")


@test
def tma_wgmma_gemm_staged_epilogue_bk32_full_waits():
    # 32-wide K tiles (64-byte rows: the 64-byte swizzle), 6 stages, each
    # stage released right after a full wgmma wait (mma.wait<0>): K = 136
    # and 320 leave a ragged last K tile.
    check_gemm_f16(K.gemm_f16_staged_bk32,
                   "f16-output GEMM, BK 32, 6 stages, mma.wait<0>, TMA epilogue")


@test
def tma_wgmma_gemm_persistent_staged_epilogue_bk32_full_waits():
    check_gemm_f16(K.gemm_persistent_f16_staged_bk32,
                   "persistent f16-output GEMM, BK 32, 6 stages, mma.wait<0>, "
                   "TMA epilogue")


@test
def tma_wgmma_gemm_staged_epilogue_consumer_turns():
    # One staging buffer for both consumer warpgroups, which take turns
    # (the second waits on an event the first triggers after its TMA store
    # has read the buffer): 4 stages fit beside it.
    check_gemm_f16(K.gemm_f16_turns,
                   "f16-output GEMM, one staging buffer in turns, 4 stages")


@test
def cluster_multicast_gemm_f16_output():
    # Clusters of 2 row tiles share the rhs tile, which the first block
    # multicasts; the consumers release each stage across the cluster.
    # The grid rounds the row tiles up to whole clusters: at M = 300 (3
    # row tiles) and 4000 (32), and at 1 x 8, a block past the last row
    # tile loads zeros and stores nothing. 2048^3: 256 blocks, 128
    # clusters; 4000x4304: 544 blocks.
    check_gemm_f16(K.gemm_f16_cluster2,
                   "f16-output GEMM, clusters of 2, rhs multicast")


@test
def cluster_multicast_gemm_f16_output_consumer_turns():
    check_gemm_f16(K.gemm_f16_cluster2_turns,
                   "f16-output GEMM, clusters of 2, staging in turns")


@test
def cluster_multicast_gemm_persistent():
    # 66 clusters of 2 walk tiles of 2 row tiles: 272 of them at
    # 4000x4304 (32 row tiles, 17 column strips), 4 or 5 per cluster; at
    # M = 300 a cluster's second row tile is past the end.
    check_gemm_f16(K.gemm_persistent_f16_cluster2,
                   "persistent f16-output GEMM, clusters of 2")


@test
def cluster_multicast_gemm_persistent_consumer_turns():
    check_gemm_f16(K.gemm_persistent_f16_cluster2_turns,
                   "persistent f16-output GEMM, clusters of 2, staging in turns")


@test
def cluster_multicast_gemm_persistent_staged_epilogue():
    # Each consumer's asynchronous TMA store of a tile is waited before its
    # next tile's epilogue; the cluster's blocks exit together, each after
    # its own stores.
    check_gemm_f16(K.gemm_persistent_f16_cluster2_staged,
                   "persistent f16-output GEMM, clusters of 2, TMA-stored "
                   "epilogue")


@test
def wgmma_a_from_registers_loaded_into_a_frag():
    # `mma.load src, frag;` fills a register tile that two MMAs of each K
    # step read (out = 2 lhs rhs^T): 64^3 blocks, ragged M, N and K, 4096
    # blocks at 4096 x 4096.
    for m, n, k in sweep(((64, 64, 16), (100, 70, 40), (4096, 4096, 48),
                          (192, 320, 160)), ((64, 64, 16), (100, 70, 40))):
        a = torch.randn(m, k, device="cuda").half()
        b = torch.randn(n, k, device="cuda").half()
        c = poisoned((m, n), torch.float32)
        K.wgmma_rs_load_co(a, b, c)
        err = relative_error(c, 2 * (a.double() @ b.double().T))
        assert err < 1e-3, f"RS wgmma {m}x{n}x{k}: relative error {err}"


@test
def wgmma_8bit_a_from_registers():
    # wgmma_rs_load_co.co's fp8, s8 and u8 x s8 kernels: the register tile's bytes
    # are shuffled into wgmma's 8-bit A layout. Small integers, so the
    # products and sums are exact; ragged M, N and K (zero-filled tails),
    # odd K-step counts, 4096 blocks at 4096 x 4096.
    for m, n, k in sweep(((64, 64, 32), (100, 70, 48), (4096, 4096, 96),
                          (192, 320, 160), (1, 8, 16)),
                         ((64, 64, 32), (100, 70, 48))):
        a = torch.randint(-4, 5, (m, k), device="cuda").float()
        b = torch.randint(-4, 5, (n, k), device="cuda").float()
        c = poisoned((m, n), torch.float32)
        K.wgmma_rs_fp8_co(a.to(torch.float8_e4m3fn), b.to(torch.float8_e4m3fn), c)
        expect_equal(c, a @ b.T, f"RS wgmma e4m3 {m}x{n}x{k}")
        a8 = torch.randint(-128, 128, (m, k), device="cuda", dtype=torch.int8)
        b8 = torch.randint(-128, 128, (n, k), device="cuda", dtype=torch.int8)
        c8 = poisoned((m, n), torch.int32)
        K.wgmma_rs_s8_co(a8, b8, c8)
        expect_equal(c8, (a8.double() @ b8.double().T).int(),
                     f"RS wgmma s8 {m}x{n}x{k}")
        u8 = torch.randint(0, 256, (m, k), device="cuda", dtype=torch.uint8)
        c8 = poisoned((m, n), torch.int32)
        K.wgmma_rs_u8s8_co(u8, b8, c8)
        expect_equal(c8, (u8.double() @ b8.double().T).int(),
                     f"RS wgmma u8 x s8 {m}x{n}x{k}")


def blockscale_inputs(m, n, k):
    """f8 operands of small integers (exact in e4m3), and power-of-two
    scales for each row and 128-wide K block of A and each 128 x 128 tile
    of B, so that every product and sum is exact in f32."""
    kb, nb = (k + 127) // 128, (n + 127) // 128
    a = torch.randint(-4, 5, (m, k), device="cuda").float()
    b = torch.randint(-4, 5, (n, k), device="cuda").float()
    sa = 2.0 ** torch.randint(-2, 3, (m, kb), device="cuda").float()
    sb = 2.0 ** torch.randint(-2, 3, (nb, kb), device="cuda").float()
    ref = torch.zeros(m, n, dtype=torch.float64, device="cuda")
    cols = torch.arange(n, device="cuda") // 128
    for j in range(kb):
        part = a[:, 128 * j:128 * (j + 1)].double() @ \
            b[:, 128 * j:128 * (j + 1)].double().T
        ref += part * sa[:, j:j + 1].double() * sb[cols, j][None, :].double()
    return (a.to(torch.float8_e4m3fn), b.to(torch.float8_e4m3fn), sa, sb,
            ref)


@test
def blockscale_gemm_fp8():
    # mma.row.row.scale on each wgmma (synchronous, 64 x 128 tiles) and
    # mma.scale after each K block (warp-specialized, 128 x 128 tiles): the
    # smallest shape, ragged M, N and K (the last K block part zeros, the
    # scales of rows past M never read), 3 and 4 K blocks, and 2142 / 1088
    # blocks at 4000 x 4300.
    for m, n, k in sweep(((1, 8, 16), (64, 128, 128), (300, 200, 400),
                          (4000, 4300, 272)), ((1, 8, 16), (300, 200, 400))):
        a, b, sa, sb, ref = blockscale_inputs(m, n, k)
        for name in ("blockscale_fused_co", "blockscale_ws_co"):
            c = poisoned((m, n), torch.float32)
            getattr(K, name)(a, sa, b, sb, c)
            expect_equal(c, ref.float(), f"{name} {m}x{n}x{k}")
        # f16 accumulator, A's scales stored [KB, M].
        c = poisoned((m, n), torch.float16)
        K.blockscale_t_co(a, sa.T.contiguous(), b, sb, c)
        err = relative_error(c, ref)
        assert err < 5e-3, f"blockscale_t_co {m}x{n}x{k}: relative error {err}"


def sparse_inputs(m, n, k, dtype):
    """A [m, k] with two nonzeros (small integers, exact in every operand
    type) in each group of four along K, as its packed values [m, k / 2]
    and u8 metadata [m, k / 8] (positions of 2 bits, two groups a byte, the
    first in the low nibble); rhs [n, k]; the exact product."""
    pairs = torch.tensor([(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)],
                         device="cuda")
    idx = pairs[torch.randint(0, 6, (m, k // 4), device="cuda")]
    vals = torch.randint(1, 5, (m, k // 4, 2), device="cuda").float()
    vals *= torch.randint(0, 2, vals.shape, device="cuda").float() * 2 - 1
    dense = torch.zeros(m, k // 4, 4, device="cuda")
    dense.scatter_(2, idx, vals)
    nibble = idx[..., 0] | (idx[..., 1] << 2)
    meta = (nibble[:, 0::2] | (nibble[:, 1::2] << 4)).to(torch.uint8)
    rhs = torch.randint(-4, 5, (n, k), device="cuda").float()
    ref = dense.reshape(m, k) @ rhs.T
    return (vals.reshape(m, k // 2).to(dtype), meta.contiguous(),
            rhs.to(dtype), ref)


@test
def sparse_wgmma_gemm():
    # 2:4 sparse A on wgmma.sp, f16 and bf16 (64 x 64 tiles, 64 of K each)
    # and f8 e4m3 (64 x 128, 128 of K): the smallest shape, ragged M, N
    # and K (a last K tile partly past the end, its metadata clipped), and
    # 4096 / 2048 blocks at 4096^2. Small integers: the result is exact.
    kernels = ((K.sparse_co, torch.float16, 16), (K.sparse_bf16_co,
               torch.bfloat16, 16), (K.sparse_e4m3_co, torch.float8_e4m3fn, 32))
    for kernel, dtype, align in kernels:
        for m, n, k in sweep(((1, 8, 2 * align), (64, 64, 128),
                              (200, 136, 13 * align), (4096, 4096, 256)),
                             ((1, 8, 2 * align), (200, 136, 13 * align))):
            packed, meta, rhs, ref = sparse_inputs(m, n, k, dtype)
            c = poisoned((m, n), torch.float32)
            kernel(packed, meta, rhs, c)
            expect_equal(c, ref, f"sparse {dtype} {m}x{n}x{k}")


def check_cluster_sync(kernel, blocks, what):
    # Row tiles of 64 in whole clusters: 64 * blocks * j rows. 4096x4096
    # (64 x 32 = 2048 blocks), ragged N and K, one K tile, odd K tiles.
    r = 64 * blocks
    check_matmul(kernel,
                 sweep(((r, 128, 64), (r, 200, 136), (8 * r, 1000, 520),
                        (4096, 4096, 1024), (2 * r, 384, 4160)),
                       ((r, 128, 64), (r, 200, 136))),
                 True, 2e-3, what, torch.float16)
    # A grid whose row tiles are not whole clusters is refused by name.
    a = torch.zeros(64 * (blocks + 1), 64, device="cuda").half()
    b = torch.zeros(128, 64, device="cuda").half()
    c = torch.zeros(64 * (blocks + 1), 128, device="cuda").half()
    try:
        kernel(a, b, c)
        raise AssertionError(f"{what}: accepted {blocks + 1} row tiles")
    except RuntimeError:
        pass


@test
def cluster_multicast_gemm_synchronous():
    check_cluster_sync(K.gemm_cluster_sync_co, 2,
                       "synchronous multicast GEMM, clusters of 2")


@test
def cluster_multicast_gemm_synchronous_cluster4():
    check_cluster_sync(K.gemm_cluster4_sync_co, 4,
                       "synchronous multicast GEMM, clusters of 4")


@test
def tma_wgmma_gemm_persistent_staged_epilogue_consumer_turns():
    # The persistent form: a second event hands the buffer back to the
    # first consumer for the block's next tile (4 or 5 tiles per block at
    # 4000x4304).
    check_gemm_f16(K.gemm_persistent_f16_turns,
                   "persistent f16-output GEMM, one staging buffer in turns, "
                   "4 stages")


def check_splitk(kernel, what, tma_partials=False):
    # splits x tiles blocks: 4 x 32 at 1024x1024 with 128x256 tiles; K
    # tile counts that the splits do not divide (the last split's extra
    # tiles load zeros), a split with no K tile at all (3 K tiles over 4),
    # ragged M and N, and 1 split. Partials stored with TMA need rows of a
    # multiple of 16 bytes: N = 257 (f32 rows of 1028 bytes) is refused
    # with an error there, and N = 260 runs instead.
    for m, n, k, splits in sweep(((1024, 1024, 16384, 4), (1024, 1024, 4160, 3),
                                  (300, 200, 136, 4), (129, 257, 192, 2),
                                  (2048, 2048, 512, 1), (1, 8, 8, 2)),
                                 ((300, 200, 136, 4), (1, 8, 8, 2))):
        if tma_partials and n % 4:
            a = torch.randn(m, k, device="cuda").half()
            b = torch.randn(n, k, device="cuda").half()
            c = poisoned((m, n), torch.float16)
            try:
                kernel(a, b, c, splits)
                raise AssertionError(f"{what} {m}x{n}x{k}: accepted rows of "
                                     f"{4 * n} bytes for its TMA partials")
            except RuntimeError:
                pass
            n += 4 - n % 4
        a = torch.randn(m, k, device="cuda").half()
        b = torch.randn(n, k, device="cuda").half()
        c = poisoned((m, n), torch.float16)
        kernel(a, b, c, splits)
        err = relative_error(c, a.double() @ b.double().T)
        assert err < 2e-3, f"{what} {m}x{n}x{k}, {splits} splits: relative error {err}"


@test
def tma_wgmma_gemm_split_k():
    check_splitk(K.gemm_splitk_co, "split-K GEMM, 128x256x64")
    a = torch.zeros(64, 64, device="cuda").half()
    c = torch.zeros(64, 64, device="cuda").half()
    try:
        K.gemm_splitk_co(a, a, c, 0)
        raise AssertionError("split-K GEMM accepted 0 splits")
    except RuntimeError:
        pass


@test
def tma_wgmma_gemm_split_k_staged_partials():
    # f32 partial tiles staged in shared memory and stored with TMA (the
    # workspace's tail rows clipped): two buffers at 128x128, one in turns
    # at 128x256.
    check_splitk(K.gemm_splitk_staged_bn128, "split-K GEMM, 128x128, TMA partials",
                 tma_partials=True)
    check_splitk(K.gemm_splitk_turns, "split-K GEMM, 128x256, TMA partials in turns",
                 tma_partials=True)


@test
def tma_wgmma_gemm_split_k_bn128():
    check_splitk(K.gemm_splitk_bn128, "split-K GEMM, 128x128x64")
    # Clusters of 2 row tiles sharing the rhs tile by multicast; the row
    # tiles rounded up to whole clusters (129 and 300 rows: 2 and 3 tiles).
    check_splitk(K.gemm_splitk_mc2_bn128, "split-K GEMM, 128x128x64, clusters of 2")


def check_splitk_cluster(kernel, splits, what):
    # The blocks of a cluster share an output tile and add their partials
    # after a cluster barrier. 1024^2 x 16384: 32 tiles, 128 blocks (at
    # 128 x 256, 4 splits); 2048^2 x 4096: 512 blocks, several per SM over
    # time, so a cluster's blocks must not wait for later clusters; 65 K
    # tiles that the splits do not divide (the last split's extra tiles
    # load zeros); 3 K tiles over 4 splits (one split adds only zeros);
    # ragged M and N (partials of columns past N are never stored, and
    # the sums skip them); the smallest shape.
    for m, n, k in sweep(((1024, 1024, 16384), (2048, 2048, 4096),
                          (1024, 1024, 4160), (300, 200, 136), (129, 257, 192),
                          (1, 8, 8)),
                         ((300, 200, 136), (129, 257, 192), (1, 8, 8))):
        a = torch.randn(m, k, device="cuda").half()
        b = torch.randn(n, k, device="cuda").half()
        c = poisoned((m, n), torch.float16)
        kernel(a, b, c)
        err = relative_error(c, a.double() @ b.double().T)
        assert err < 2e-3, f"{what} {m}x{n}x{k}, {splits} splits: relative error {err}"


@test
def tma_wgmma_gemm_split_k_cluster_reduce():
    check_splitk_cluster(K.gemm_splitk_cluster_co, 4,
                         "split-K GEMM added in clusters, 128x256")
    check_splitk_cluster(K.gemm_splitk_cluster2, 2,
                         "split-K GEMM added in clusters, 128x256")
    check_splitk_cluster(K.gemm_splitk_cluster4_bn128, 4,
                         "split-K GEMM added in clusters, 128x128")


@test
def tma_wgmma_gemm_f16_output_tma_store():
    check_matmul(K.gemm_tma_f16_co, GEMM_TMA_SHAPES, True,
                 2e-3, "TMA 1P2C GEMM, f16 output through a TMA store",
                 torch.float16)


@test
def seed_persistent_wgmma():
    # 256 tiles over 132 blocks: the second tile_iter runs on some blocks
    # only (the guard); M and N have tails.
    check_matmul(K.persistent_wgmma_co,
                 sweep(((64, 64, 64), (640, 704, 256), (1000, 1000, 192),
                        (2100, 2200, 72)), ((64, 64, 64), (100, 72, 72))), True,
                 1e-2, "seed persistent wgmma (f16 accumulation)",
                 torch.float16)


@test
def tma_wgmma_gemm_persistent_warp_specialized():
    # 64 tiles (one per block), 256 tiles (two rounds, the ring's phases
    # continue across tiles), and tails in M, N and K.
    check_matmul(K.gemm_tma_persistent_co,
                 sweep(((128, 256, 64), (1024, 2048, 512), (2048, 4096, 256),
                        (300, 520, 136), (4000, 4300, 200)),
                       ((128, 256, 64), (300, 520, 136))), True, 1e-5,
                 "persistent warp-specialized TMA GEMM")


def spin_reference(x, iters):
    # The kernel's recurrence, applied in float32 on the CPU.
    v = x.cpu().clone()
    for _ in range(iters):
        v = v * torch.tensor(0.999, dtype=torch.float32) + torch.tensor(
            0.001, dtype=torch.float32)
    return v


@test
def parallel_async_streams_overlap():
    iters = 2_000_000
    x = torch.rand(32, device="cuda")
    y = torch.rand(32, device="cuda")
    xr, yr = spin_reference(x, 200), spin_reference(y, 200)
    x2, y2 = x.clone(), y.clone()
    K.spin_streams(x2, y2, 200)
    torch.testing.assert_close(x2.cpu(), xr, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(y2.cpu(), yr, rtol=1e-5, atol=1e-6)
    if SMALL:
        # Under the sanitizer only the results count, not the overlap.
        xc, yc = x.clone(), y.clone()
        K.spin_streams_co(xc, yc, 200)
        torch.testing.assert_close(xc.cpu(), xr, rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(yc.cpu(), yr, rtol=1e-5, atol=1e-6)
        return

    # Event timing on two caller streams: kernel A alone, then A and B.
    s0, s1 = torch.cuda.Stream(), torch.cuda.Stream()
    K.spin_on(x.clone(), iters, s0)  # warm-up (module load)
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record(s0)
    K.spin_on(x.clone(), iters, s0)
    end.record(s0)
    torch.cuda.synchronize()
    alone = start.elapsed_time(end)

    xa, ya = x.clone(), y.clone()
    torch.cuda.synchronize()
    start, end0, end1 = (torch.cuda.Event(enable_timing=True) for _ in range(3))
    start.record(s0)
    s1.wait_event(start)
    K.spin_on(xa, iters, s0)
    K.spin_on(ya, iters, s1)
    end0.record(s0)
    end1.record(s1)
    torch.cuda.synchronize()
    both = max(start.elapsed_time(end0), start.elapsed_time(end1))
    print(f"  one kernel {alone:.2f} ms; two on two streams {both:.2f} ms "
          f"(serial would be {2 * alone:.2f} ms)")
    assert both < 1.5 * alone, "launches on two streams did not overlap"

    # The function's own streams: wall clock against the serial version.
    K.spin_streams(x.clone(), y.clone(), iters)
    t0 = time.perf_counter()
    K.spin_serial(x.clone(), y.clone(), iters)
    serial = time.perf_counter() - t0
    t0 = time.perf_counter()
    K.spin_streams(x.clone(), y.clone(), iters)
    overlapped = time.perf_counter() - t0
    print(f"  spin_serial {serial * 1e3:.2f} ms; spin_streams "
          f"{overlapped * 1e3:.2f} ms")
    assert overlapped < 0.75 * serial, "local streams did not overlap"

    # The Croqtile version (`parallel.async ... { stream s0; ... }`).
    xc, yc = x.clone(), y.clone()
    K.spin_streams_co(xc, yc, 200)
    torch.testing.assert_close(xc.cpu(), xr, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(yc.cpu(), yr, rtol=1e-5, atol=1e-6)
    K.spin_streams_co(x.clone(), y.clone(), iters)
    t0 = time.perf_counter()
    K.spin_streams_co(x.clone(), y.clone(), iters)
    overlapped_co = time.perf_counter() - t0
    print(f"  spin_streams_co {overlapped_co * 1e3:.2f} ms")
    assert overlapped_co < 0.75 * serial, "Croqtile local streams did not overlap"



# The language beyond the seed chapter (issue 12): shapes as values, level
# inference, returned tensors and scalars, printing, masked MMA stores.

@test
def shapes_as_values():
    # 16x32 tiles from a named mdspan, picked by the block's index tuple:
    # 600+ blocks at 400x1100, ragged in both dimensions; one partial tile.
    for m, n in sweep(((16, 32), (400, 1100), (17, 33), (5, 7)), ((16, 32), (17, 40))):
        a = torch.randn(m, n, device="cuda")
        out = poisoned((m, n), torch.float32)
        K.shapes_co(a, out)
        expect_equal(out, a * 2 + 6, f"shapes_co {m}x{n}")


@test
def level_inference_and_implied_block():
    a = poisoned((64,), torch.int32)
    b = poisoned((2, 4, 32), torch.int32)
    K.levels_co(a, b)
    expect_equal(a, torch.arange(64, device="cuda", dtype=torch.int32) * 3,
                 "outermost thread level")
    x, y, z = torch.meshgrid(torch.arange(2), torch.arange(4), torch.arange(32),
                             indexing="ij")
    expect_equal(b, (x * 1000 + y * 100 + z).int().cuda(), "block, group, thread")


@test
def returned_tensor_and_scalar():
    # The returned tensor is the last argument; its initializer's kernel
    # runs first. 600 blocks, 1 block, and a mismatched output refused.
    for m in sweep((1, 7, 600), (1, 7)):
        x = torch.randn(m, 64, device="cuda")
        y = poisoned((m, 64), torch.float32)
        K.returns_co(x, y)
        ref = 1.0 + torch.sqrt(torch.abs(x)) + 1.0
        torch.testing.assert_close(y, ref, rtol=1e-6, atol=1e-6)
    rejects(K.returns_co, [torch.randn(8, 64, device="cuda"),
                           poisoned((9, 64), torch.float32)],
            "returns_co", "'result'", what="returned tensor of the wrong shape")
    for m, n, k in ((3, 5, 7), (1, 1, 0), (100, 2, -4)):
        got = K.scalar_co(torch.zeros(m, n, device="cuda"), k)
        assert got == 2 * m + k + n, f"scalar_co({m}x{n}, {k}) = {got}"


@test
def println_from_host_and_threads():
    a = torch.tensor([7, -3, 11, 0], dtype=torch.int32, device="cuda")
    sys.stdout.flush()
    saved = os.dup(1)
    with tempfile.TemporaryFile(mode="w+b") as tmp:
        os.dup2(tmp.fileno(), 1)
        try:
            K.print_co(a)
            torch.cuda.synchronize()
        finally:
            sys.stdout.flush()
            os.dup2(saved, 1)
            os.close(saved)
        tmp.seek(0)
        text = tmp.read().decode()
    lines = sorted(l for l in text.splitlines() if l.startswith("croq "))
    want = sorted(["croq host 4"] + [f"croq thread {p} holds {v}"
                                     for p, v in enumerate([7, -3, 11, 0])])
    assert lines == want, f"printed {lines}, expected {want}"


@test
def masked_mma_store():
    # Rows at or past `rows` and each tile's columns 8..15 stay poisoned.
    for m, n, rows in sweep(((16, 16, 16), (512, 512, 300), (64, 48, 0), (64, 48, 64)),
                            ((16, 16, 9), (32, 48, 20))):
        a = torch.randn(m, 16, device="cuda").half()
        b = torch.randn(16, n, device="cuda").half()
        c = poisoned((m, n), torch.float32)
        K.mask_co(a, b, c, rows)
        ref = a.double() @ b.double()
        keep = torch.zeros(m, n, dtype=torch.bool, device="cuda")
        keep[:rows, :] = True
        keep[:, (torch.arange(n, device="cuda") % 16) >= 8] = False
        assert torch.isnan(c[~keep]).all(), f"mask_co {m}x{n} rows {rows}: masked elements written"
        if keep.any():
            err = relative_error(c[keep], ref[keep])
            assert err < 1e-3, f"mask_co {m}x{n} rows {rows}: relative error {err}"


@test
def strided_window_span_as_and_sqz():
    # view(16, 8 : 3, 2).from(1, 5) reads up to element 128; 600 blocks of 32 rows at
    # M = 19200; a ragged last block; a flat tensor of the wrong size refused.
    for m in sweep((47, 1000, 19200), (47, 70)):
        a = torch.randn(m, 64, device="cuda")
        win = poisoned((16, 8), torch.float32)
        flat = poisoned((m * 64,), torch.float32)
        col = poisoned((m,), torch.float32)
        K.views_co(a, win, flat, col)
        # Element (x, y) is 3x + 2y elements past a[1, 5] in memory.
        x, y = torch.meshgrid(torch.arange(16), torch.arange(8), indexing="ij")
        expect_equal(win, a.flatten()[(64 + 5 + 3 * x + 2 * y).cuda()],
                     f"strided window, M = {m}")
        expect_equal(flat, (a + 1).flatten(), f"span_as, M = {m}")
        expect_equal(col, a[:, 3].contiguous(), f"sqz, M = {m}")
    rejects(K.views_co, [torch.randn(47, 64, device="cuda"), poisoned((16, 8), torch.float32),
                         poisoned((47 * 64 - 1,), torch.float32), poisoned((47,), torch.float32)],
            "views_co", "span_as", "number of elements", what="span_as of the wrong size")


@test
def view_extent_rest_of_dimension():
    # `_` as a view extent: columns 5 to N - 1 of each 16-row tile, copied
    # through a 16 x 64 buffer (partial where N - 5 < 64 or on the ragged
    # last tile); columns 0 to 4 stay as they were. N = 6 (one column),
    # 40, 69 (the buffer's width); M up to 16 * 300 + 3 rows (301 blocks).
    for m, n in sweep(((1, 6), (16, 40), (37, 69), (16 * 300 + 3, 33)),
                      ((1, 6), (37, 69))):
        a = torch.randn(m, n, device="cuda")
        out = poisoned((m, n), torch.float32)
        K.view_rest_co(a, out)
        expect_equal(out[:, 5:], a[:, 5:], f"view(rows, _), M = {m}, N = {n}")
        assert torch.isnan(out[:, :5]).all(), f"columns before the origin written, M = {m}, N = {n}"


@test
def chunkat_of_a_reshaped_window():
    # view_chunk_co: block b copies rows b*T .. b*T + T - 1 of the [B*T, 16]
    # reshape in 4 chunks of T/4 rows; up to 2000 blocks; the smallest
    # legal T (4). T not a multiple of 4 is refused on the host.
    for b, t in sweep(((1, 4), (2000, 8), (300, 100), (3, 404)), ((1, 4), (3, 12))):
        q = torch.randn(b, t, 16, device="cuda")
        out = poisoned((b, t, 16), torch.float32)
        K.view_chunk_co(q, out)
        expect_equal(out, q, f"B = {b}, T = {t}")
    for t in (6, 5, 1):
        rejects(K.view_chunk_co, (torch.randn(2, t, 16, device="cuda"),
                                  poisoned((2, t, 16), torch.float32)),
                "not a multiple of the chunk count", what=f"T = {t}")


@test
def sqz_of_a_chunkat_tile():
    # sqz_chunk_co: 4 blocks per [32, 8] slice, each an [8, 8] tile through
    # shared memory; 1 to 3000 slices (12000 blocks).
    for n in sweep((1, 7, 3000), (1, 7)):
        a = torch.randn(n, 32, 8, device="cuda")
        out = poisoned((n * 32, 8), torch.float32)
        K.sqz_chunk_co(a, out)
        expect_equal(out, a.reshape(n * 32, 8), f"N = {n}")


@test
def sqz_of_whole_dimension_chunks():
    # rows_sqz_co: chunkat(b, r, _) over [B, R, 64] with b in [B], r in [R]:
    # one row a tile; 1 to 3000 blocks, 1 to 5 rows each.
    for b, r in sweep(((1, 1), (3000, 2), (7, 5)), ((1, 1), (7, 5))):
        x = torch.randn(b, r, 64, device="cuda")
        out = poisoned((b, r, 64), torch.float32)
        K.rows_sqz_co(x, out)
        expect_equal(out, x * 2, f"B = {b}, R = {r}")


@test
def tma_load_waited_through_its_future():
    # Two phases of the copy's own event per block; 600+ blocks; a ragged
    # last tile (TMA clips it); one block.
    for m in sweep((16, 1000, 16 * 600), (16, 40)):
        x = torch.randn(m, 64, device="cuda")
        y = poisoned((m, 64), torch.float32)
        K.tma_future_co(x, y)
        expect_equal(y, x, f"tma_future_co, M = {m}")


def sweep_tma_pipeline(name, full, small, ref):
    """Runs the elementwise TMA pipeline kernel `name` over [M, K] f32
    shapes and compares its output with ref(input) exactly."""
    kernel = getattr(K, name)
    for m, k in sweep(full, small):
        x = torch.randn(m, k, device="cuda")
        y = poisoned((m, k), torch.float32)
        kernel(x, y)
        expect_equal(y, ref(x), f"{name}, M = {m}, K = {k}")


@test
def tma_pipeline_of_swapped_futures():
    # Two buffers whose futures swap each K step; which slot a wait takes is
    # known only at run time. One K tile (the loop never runs), an odd tile
    # count, a ragged last tile in M and in K (TMA clips both), 600+ blocks.
    sweep_tma_pipeline("tma_swap_co",
                       ((16, 32), (48, 96), (40, 200), (16 * 600, 160)),
                       ((16, 32), (40, 200)), lambda x: x * 2)


@test
def tma_pipeline_of_rotated_futures():
    # Three buffers rotated, two loads ahead of the consumed tile; at least
    # two K tiles. Two tiles (the loop never runs), an odd count, ragged
    # tails, 1000+ blocks.
    sweep_tma_pipeline("tma_rotate_co",
                       ((8, 64), (24, 96), (13, 232), (8 * 1200, 160)),
                       ((8, 64), (13, 232)), lambda x: x + 1)


@test
def tma_pipeline_with_a_guarded_prefetch():
    # The prefetch of tile k + 1 is under an if; the placeholder arrives on
    # its slot where it is made. One tile (no prefetch at all), two, an odd
    # count, ragged tails, 600+ blocks.
    sweep_tma_pipeline("tma_guarded_co",
                       ((16, 32), (16, 64), (40, 200), (16 * 600, 160)),
                       ((16, 32), (40, 200)), lambda x: x - 1)


@test
def tma_stores_waited_before_the_tile_is_rewritten():
    # Each block stores a tile per column step with an asynchronous TMA
    # store and waits for it only before it writes the staging tile again;
    # the last store is waited at the block's end. One column tile (no wait
    # receives a store), two, an odd count, ragged M and N (the load
    # zero-fills, the store clips), a tile smaller than the box, 600+
    # blocks; 32 threads (a warp stores) and 128 (an elected thread of four
    # warps, the wait the block's).
    for name in ("tma_store_async_co", "tma_store_async_wide_co"):
        sweep_tma_pipeline(name,
                           ((16, 32), (16, 64), (40, 200), (5, 12),
                            (16 * 600, 160)),
                           ((16, 32), (40, 200)), lambda x: x * 3)


@test
def tma_waits_not_paired_with_copies():
    # A future waited three times; in the K loop each tile waited once or
    # twice. One tile, two, an odd count, a ragged M, 600+ blocks.
    sweep_tma_pipeline("tma_rewait_co",
                       ((16, 32), (16, 64), (40, 224), (16 * 600, 160)),
                       ((16, 32), (40, 224)), lambda x: x)


def sweep_block_frag(kernel, name, shapes, atol):
    """Runs a block-level-frag kernel over [N, K] shapes of B: block bn's
    A is all (bn + 1), so C[m, n] is (bn + 1) times the sum of row n of B."""
    for n, k in shapes:
        b = torch.randn(n, k, device="cuda").half()
        c = poisoned((64, n), torch.float32)
        kernel(b, c)
        scale = (torch.arange(n, device="cuda") // 64 + 1).float()
        ref = (b.float().sum(dim=1) * scale).expand(64, n)
        torch.testing.assert_close(c, ref, rtol=1e-3, atol=atol,
                                   msg=lambda m: f"{name}, N = {n}, K = {k}: {m}")


@test
def wgmma_a_from_a_block_level_frag():
    # A frag declared in a block of one warpgroup is wgmma's A from
    # registers; block bn's A is all (bn + 1). 300 blocks, one, seven (N a
    # multiple of the 64-wide tile: the kernel stores whole tiles).
    ns = sweep((64, 64 * 7, 64 * 300), (64, 64 * 7))
    sweep_block_frag(K.wgmma_block_frag_co, "wgmma_block_frag_co",
                     [(n, 16) for n in ns], atol=1e-2)


@test
def wgmma_a_from_a_block_level_frag_in_a_k_loop():
    # The same frag with the warpgroup inside `foreach k`: an odd K-tile
    # count, one tile, a ragged last tile (TMA fills zeros), 300 blocks.
    sweep_block_frag(K.wgmma_block_frag_k_co, "wgmma_block_frag_k_co",
                     sweep(((64, 16), (64 * 7, 48), (64 * 300, 200), (64, 8)),
                           ((64, 8), (64 * 7, 40))), atol=5e-2)
    # Rows of 13 halves are 26 bytes apart; TMA needs a multiple of 16.
    rejects(K.wgmma_block_frag_k_co,
            [torch.randn(64, 13, device="cuda").half(), poisoned((64, 64), torch.float32)],
            "wgmma_block_frag_k_co", "multiple of 16 bytes", what="K = 13")


@test
def shifted_bounded_chunk_indices():
    # Eight chunks; N must divide by 8 (refused otherwise).
    for n in sweep((8, 8 * 1000, 8 * 100000), (8, 64)):
        x = torch.randn(n, device="cuda")
        y = poisoned((n,), torch.float32)
        K.shifted_chunks_co(x, y)
        c = n // 8
        ref = torch.cat([x[c:], x[-c:]])
        expect_equal(y, ref, f"shifted chunks, N = {n}")
    rejects(K.shifted_chunks_co, [torch.randn(12, device="cuda"), poisoned((12,), torch.float32)],
            "shifted_chunks_co", "multiple of the chunk count", what="N not a multiple of 8")


@test
def tutorial_chapter6_as_printed():
    # The program fixes its shapes (M 128, N 256, K 256); its output starts
    # at zero (the tutorial's host tensor) and accumulates `+=`.
    for _ in range(sweep(3, 1)):
        a = torch.randint(-8, 8, (128, 256), dtype=torch.int32, device="cuda")
        b = torch.randint(-8, 8, (256, 256), dtype=torch.int32, device="cuda")
        c = torch.zeros(128, 256, dtype=torch.int32, device="cuda")
        K.ch6_as_printed_co(a, b, c)
        expect_equal(c, (a.cpu().long() @ b.cpu().long()).int().cuda(), "chapter 6.1 as printed")


@test
def per_thread_tiles_copied_to_shared():
    # Each thread's own 16x16 tile (the program fixes the shape).
    for _ in range(sweep(3, 1)):
        a = torch.randint(-100, 100, (64, 128), dtype=torch.int32, device="cuda")
        b = torch.randint(-100, 100, (64, 128), dtype=torch.int32, device="cuda")
        c = poisoned((64, 128), torch.int32)
        K.per_thread_tiles_co(a, b, c)
        expect_equal(c, a + b, "per-thread tiles")


@test
def dma_transposing_copies():
    # The first 16 rows of input, transposed; a 3-D permutation <2, 0, 1>.
    for m in sweep((16, 100, 4096), (16, 40)):
        x = torch.randn(m, 32, device="cuda")
        y = poisoned((32, m), torch.float32)
        c = torch.randn(4, 6, 8, device="cuda")
        d = poisoned((8, 4, 6), torch.float32)
        K.transp_co(x, y, c, d)
        expect_equal(y[:, :16], x[:16].T.contiguous(), f"dma.transp<1, 0>, M = {m}")
        assert torch.isnan(y[:, 16:]).all(), "dma.transp wrote past its tile"
        expect_equal(d, c.permute(2, 0, 1).contiguous(), "dma.transp<2, 0, 1>")


@test
def atomics():
    # A per-block shared histogram merged into global memory, global
    # max/min/exchange/compare-and-swap and an f32 sum: 1 to 1200 blocks, a
    # ragged tail (N not a multiple of 256), the smallest N.
    for n in sweep((1, 255, 256, 1000, 300_001), (1, 1000)):
        # Non-negative inputs: C's % keeps the sign, and a negative v % 16
        # would index counts out of range.
        x = torch.randint(0, 5000, (n,), dtype=torch.int32, device="cuda")
        hist = torch.zeros(16, dtype=torch.int32, device="cuda")
        stats = torch.tensor([-(2**31), 2**31 - 1, -77, -1], dtype=torch.int32,
                             device="cuda")
        total = torch.zeros(1, dtype=torch.float32, device="cuda")
        K.atomics_co(x, hist, stats, total)
        xs = x.long()
        expect_equal(hist.long(), torch.bincount(xs % 16, minlength=16),
                     f"histogram, N = {n}")
        assert stats[0].item() == x.max().item(), f"atomic max, N = {n}"
        assert stats[1].item() == x.min().item(), f"atomic min, N = {n}"
        assert (x == stats[2]).any().item(), f"atomic exchange, N = {n}"
        assert 0 <= stats[3].item() < n, f"compare-and-swap, N = {n}"
        assert total.item() == 0.5 * n, f"atomic f32 add, N = {n}: {total.item()}"


@test
def device_calls():
    # C++ device functions called from Croqtile (device_call_co.co): a warp
    # sum by shuffles, a shared row scaled in place through a pointer, an f16
    # by value. 1 to 2344 blocks, ragged tails, the smallest N. Small
    # integers keep the f32 sums exact.
    for n in sweep((1, 31, 127, 128, 1000, 300_001), (1, 1000)):
        x = torch.randint(-8, 9, (n,), device="cuda").float()
        h = torch.randn(n, device="cuda").half()
        sums = poisoned((n,), torch.float32)
        hout = poisoned((n,), torch.float16)
        K.device_call_co(x, sums, h, hout)
        padded = torch.zeros((n + 31) // 32 * 32, device="cuda")
        padded[:n] = x
        ref = padded.view(-1, 32).sum(1).repeat_interleave(32)[:n] * 0.5
        expect_equal(sums, ref, f"warp sums, N = {n}")
        expect_equal(hout, -h, f"f16 by value, N = {n}")
    # `&counts.at(k, 1)` to an atomicAdd: a histogram of 1 to 300001 keys
    # over 1 to 1000 bins.
    for n, e in sweep(((1, 1), (127, 3), (300_001, 1000)), ((1, 1), (1000, 7))):
        keys = torch.randint(0, e, (n,), dtype=torch.int32, device="cuda")
        counts = torch.full((e, 2), 7, dtype=torch.int32, device="cuda")
        K.device_call_address_co(keys, counts)
        ref = torch.stack((torch.full((e,), 7, device="cuda"),
                           7 + torch.bincount(keys, minlength=e)), 1).int()
        expect_equal(counts, ref, f"histogram through &counts.at, N = {n}")


@test
def host_control_flow_around_launches():
    # host_control_co.co: a host loop of `iters` launches (its counter an
    # argument), a host if picking the kernel, and a host while returning
    # its count; 1 to 2344 blocks.
    for n in sweep((1, 127, 300_001), (1, 300)):
        for iters, mode in ((0, 1), (1, 1), (5, 1), (3, 0)):
            x = torch.randn(n, device="cuda")
            ref = x.clone()
            for it in range(iters):
                ref = ref * 2 + it if mode > 0 else ref - 1
            K.host_steps_co(x, iters, mode)
            torch.testing.assert_close(x, ref, rtol=1e-5, atol=1e-5,
                                       msg=lambda m: f"host loop, N = {n}, {iters} steps, mode {mode}: {m}")
        for limit in (0, 1, 10, 50):
            x = torch.randint(-100, 100, (n,), dtype=torch.int32, device="cuda")
            want = x + sum(range(math.isqrt(limit - 1) + 1 if limit > 0 else 0))
            rounds = K.host_while_co(x, limit)
            expect_equal(x, want, f"host while, N = {n}, limit {limit}")
            assert rounds == (math.isqrt(limit - 1) + 1 if limit > 0 else 0), \
                f"host while returned {rounds} for limit {limit}"


@test
def half_scalar_parameters():
    # host_control_co.co: f16 and bf16 scalars passed as floats and rounded
    # by the entry point as torch rounds them (0.1, a tie, values past the
    # range); 1 to 2344 blocks.
    for n in sweep((1, 1000, 300_001), (1, 1000)):
        for alpha, beta in ((0.1, 0.1), (1.0009765625 + 2 ** -11, -3.3),
                            (70000.0, 1e-3), (-2.5, 3e38)):
            y = torch.randn(n, device="cuda").half()
            z = torch.randn(n, device="cuda").bfloat16()
            want_y = torch.tensor(alpha).half().cuda() * y
            want_z = z + torch.tensor(beta).bfloat16().cuda()
            K.half_scalars_co(y, z, alpha, beta)
            expect_equal(y, want_y, f"f16 scalar {alpha}, N = {n}")
            expect_equal(z, want_z, f"bf16 scalar {beta}, N = {n}")


@test
def tma_of_subbyte_elements():
    # tma_subbyte_co.co: f6_e2m3 tiles of 16 x 64 in by TMA (one element a
    # byte), doubled into f32, and re-encoded as f4_e2m1 tiles out by TMA.
    # Ragged M (zero-filled and clipped rows); 1 to 4096 blocks.
    for m in sweep((1, 15, 17, 1000, 65536), (1, 17)):
        codes = torch.randint(0, 64, (m, 64), dtype=torch.uint8)
        values = small_float_table(2, 3)[codes.long()].float()
        y = poisoned((m, 64), torch.float32)
        z = torch.full((m, 64), 0xAA, dtype=torch.uint8, device="cuda")
        K.tma_subbyte_co(codes.cuda(), y, z)
        expect_equal(y.cpu(), values * 2, f"f6 tiles through TMA, M = {m}")
        expect_equal(z.cpu(), small_float_encode(values.flatten(), 2, 1).reshape(m, 64),
                     f"f4 tiles through a TMA store, M = {m}")


@test
def device_calls_on_registers():
    # device_call_registers_co.co: a warp's accumulator doubled by a device
    # function after each K step's MMA (C = 2 (C + A_k B_k^T)), ragged, up
    # to 7875 blocks; a thread's row of a register tile changed in place,
    # 1 to 2344 blocks.
    for m, n, k in MMA_TYPE_SHAPES:
        a = torch.randn(m, k, device="cuda").half()
        b = torch.randn(n, k, device="cuda").half()
        c = poisoned((m, n), torch.float32)
        K.device_call_acc_co(a, b, c)
        ref = torch.zeros(m, n, dtype=torch.float64, device="cuda")
        for k0 in range(0, k, 16):
            ref = 2 * (ref + a[:, k0:k0 + 16].double() @ b[:, k0:k0 + 16].double().T)
        err = relative_error(c, ref)
        assert err < 1e-3, f"accumulator through a device call {m}x{n}x{k}: relative error {err}"
    for rows in sweep((1, 127, 1000, 300_001), (1, 1000)):
        x = torch.randn(rows, 4, device="cuda")
        y = poisoned((rows, 4), torch.float32)
        K.device_call_tile_co(x, y)
        i = torch.arange(rows, device="cuda").unsqueeze(1) % 128
        j = torch.arange(4, device="cuda").unsqueeze(0)
        expect_equal(y, x + (i + j).float(), f"register tile through a device call, N = {rows}")


@test
def device_call_from_a_cok_block():
    # device_call_cok_co: cubic(x) from a __cok__ block; 1 to 2344 blocks.
    for n in sweep((1, 129, 300_001), (1, 129)):
        x = torch.randn(n, device="cuda")
        y = poisoned((n,), torch.float32)
        K.device_call_cok_co(x, y)
        assert relative_error(y, x.double() ** 3) < 1e-6, f"__cok__ cubic, N = {n}"


@test
def placeholder_beside_a_buffer_array():
    # any_array_co: dma.any swapped with the future of buf[0]; 1 to 4688
    # blocks, a ragged tail.
    for n in sweep((1, 65, 300_001), (1, 65)):
        a = torch.randn(n, device="cuda")
        c = poisoned((n,), torch.float32)
        K.any_array_co(a, c)
        expect_equal(c, a + 1, f"N = {n}")


@test
def local_events():
    # local_events_co.co: each thread triggers its own local event 0 to 3
    # times and waits as often, and waits once on a `ready` one; 1 to 2344
    # blocks, ragged tails.
    for n in sweep((1, 127, 128, 300_001), (1, 1000)):
        x = torch.randint(0, 4, (n,), dtype=torch.int32, device="cuda")
        y = poisoned((n,), torch.int32)
        K.local_events_co(x, y)
        expect_equal(y, x * 11, f"local events, N = {n}")


@test
def inline_asm():
    # asm_co.co: mad.lo into a scalar, a "+r" update of an element, a 64-bit
    # product and an f32 add; 1 to 1172 blocks, ragged tails.
    for n in sweep((1, 255, 256, 300_001), (1, 1000)):
        x = torch.randint(-40000, 40000, (n,), dtype=torch.int32, device="cuda")
        y = poisoned((n,), torch.int32)
        wide = poisoned((n,), torch.int64)
        f = torch.randn(n, device="cuda")
        f_in = f.clone()
        K.asm_co(x, y, wide, f)
        i = torch.arange(n, dtype=torch.int32, device="cuda")
        expect_equal(y, x * 3 + 1 + i, f"mad.lo and a read-write operand, N = {n}")
        expect_equal(wide, x.long() * x.long(), f"mul.wide.s32, N = {n}")
        expect_equal(f, f_in + 0.5, f"add.f32, N = {n}")


def main():
    if MODE == "--list":
        for fn in TESTS:
            print(fn.__name__)
        return 0
    chosen = [fn for fn in TESTS if MODE != "--one" or fn.__name__ == SELECTED]
    if not chosen:
        print(f"FAIL {SELECTED}: no such test")
        return 1
    for fn in chosen:
        run(fn)
    passed = sum(1 for _, e in results if e is None)
    failed = len(results) - passed
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


sys.exit(main())
