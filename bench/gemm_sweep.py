"""The GEMM sweep of issue 14: croq's f16-output GEMMs against cuBLAS
(torch.mm, f16 in and out) and a Triton TMA GEMM, at seven shapes, in one
run on one GPU.

    python3 bench/gemm_sweep.py GEMM_BENCH_DIR [--rounds N] [--calls N]

GEMM_BENCH_DIR is what bench/build-gemm.sh wrote (host code of each croq
variant and the runtime's source); this builds it into one library with
nvcc. Every system computes C[M, N] = A[M, K] @ B[N, K]^T with f16 output.

Method:
- Each measurement times `--calls` back-to-back calls between two CUDA
  events (the host work of a call overlaps the previous call's kernel,
  as in a model's loop; a host path slower than the kernel shows). croq's
  calls are asynchronous (croq_rt_set_synchronous(0)) on torch's stream,
  with their ctypes arguments built once, as a C++ caller would.
- `graph` replays the same calls captured in a CUDA graph: the kernels'
  time without host work.
- Systems are interleaved: each round times every system once, in a
  rotating order; the table has the median over rounds.
- Each system's choice among its configurations (croq's tile-shape
  variants, Triton's configs) is made per shape by a tuning pass before
  the timed rounds, and reported.
- Every output is compared in full with an f32 reference.
- The SM clock is logged at the start and the end.
"""
import argparse
import ctypes
import glob
import math
import os
import statistics
import subprocess
import sys

import torch

SHAPES = [(2048, 2048, 2048), (4096, 4096, 4096), (8192, 8192, 8192),
          (4096, 14336, 4096), (4096, 4096, 14336), (8192, 1024, 8192),
          (1024, 1024, 16384)]
TUNING_ROUNDS = 3


def sm_clock():
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=clocks.sm,clocks.max.sm,temperature.gpu,power.draw",
             "--format=csv,noheader"], capture_output=True, text=True, timeout=20)
        return out.stdout.strip()
    except (OSError, subprocess.SubprocessError) as e:
        return f"unavailable ({e})"


def build_library(directory):
    lib = os.path.join(directory, "libgemm_bench.so")
    if not os.path.exists(lib):
        sources = sorted(glob.glob(os.path.join(directory, "*.cpp")))
        subprocess.run(["nvcc", "-O2", "-std=c++17", "-shared", "-Xcompiler", "-fPIC",
                        "-I", directory, *sources, "-lcuda", "-o", lib], check=True)
    return lib


class CroqGemm:
    """One croq variant, called through its C entry point."""

    def __init__(self, lib, name):
        self.name = name
        self.fn = getattr(lib, name)
        self.fn.restype = ctypes.c_int
        self.lib = lib

    def bind(self, a, b, c, *scalars):
        args = [ctypes.c_void_p(a.data_ptr()), ctypes.c_int64(a.shape[0]),
                ctypes.c_int64(a.shape[1]), ctypes.c_void_p(b.data_ptr()),
                ctypes.c_int64(b.shape[0]), ctypes.c_int64(b.shape[1]),
                ctypes.c_void_p(c.data_ptr()), ctypes.c_int64(c.shape[0]),
                ctypes.c_int64(c.shape[1])]
        args += [ctypes.c_int64(v) for v in scalars]
        fn, set_stream = self.fn, self.lib.croq_rt_set_default_stream

        def call():
            set_stream(ctypes.c_void_p(torch.cuda.current_stream().cuda_stream))
            if fn(*args) != 0:
                raise RuntimeError(f"{self.name} failed: "
                                   f"{self.lib.croq_rt_last_error().decode()}")
        return call


def triton_systems():
    """Triton TMA GEMMs (host-built tensor descriptors), one per config;
    None when Triton or its descriptors are missing."""
    try:
        import triton
        import triton.language as tl
        from triton.tools.tensor_descriptor import TensorDescriptor
    except ImportError as e:
        print(f"triton: unavailable ({e})")
        return []

    @triton.jit
    def tma_gemm(a_desc, b_desc, c_desc, M, N, K, BM: tl.constexpr,
                 BN: tl.constexpr, BK: tl.constexpr, GROUP_M: tl.constexpr):
        pid = tl.program_id(0)
        tiles_m = tl.cdiv(M, BM)
        tiles_n = tl.cdiv(N, BN)
        width = GROUP_M * tiles_n
        first_m = (pid // width) * GROUP_M
        size_m = min(tiles_m - first_m, GROUP_M)
        pm = first_m + (pid % width) % size_m
        pn = (pid % width) // size_m
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, tl.cdiv(K, BK)):
            a = a_desc.load([pm * BM, k * BK])
            b = b_desc.load([pn * BN, k * BK])
            acc = tl.dot(a, b.T, acc)
        c_desc.store([pm * BM, pn * BN], acc.to(tl.float16))

    systems = []
    for bm, bn, bk, stages, warps in ((128, 256, 64, 3, 8), (128, 128, 64, 4, 8),
                                      (128, 256, 64, 4, 8), (128, 128, 64, 4, 4)):
        def bind(a, b, c, bm=bm, bn=bn, bk=bk, stages=stages, warps=warps):
            m, k = a.shape
            n = b.shape[0]
            a_d = TensorDescriptor.from_tensor(a, [bm, bk])
            b_d = TensorDescriptor.from_tensor(b, [bn, bk])
            c_d = TensorDescriptor.from_tensor(c, [bm, bn])
            grid = (triton.cdiv(m, bm) * triton.cdiv(n, bn),)

            def call():
                tma_gemm[grid](a_d, b_d, c_d, m, n, k, BM=bm, BN=bn, BK=bk,
                               GROUP_M=8, num_stages=stages, num_warps=warps)
            return call
        systems.append((f"triton_{bm}x{bn}x{bk}_s{stages}_w{warps}", bind))
    return systems


def time_calls(call, calls):
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(calls):
        call()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / calls


def time_graph(call, calls):
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        call()  # warm: tensor maps, attributes, caches
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(calls):
            call()
    graph.replay()
    torch.cuda.synchronize()
    times = []
    for _ in range(5):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        graph.replay()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / calls)
    return statistics.median(times)


def rel_error(got, ref):
    got = got.float()
    if not torch.isfinite(got).all():
        return float("inf")
    return ((got - ref).norm() / ref.norm()).item()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("bench_dir")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--shapes", default="")
    parser.add_argument("--sync", action="store_true",
                        help="croq's calls wait for their kernels (the host "
                        "path before asynchronous calls)")
    parser.add_argument("--tuning", action="store_true",
                        help="print every configuration's TFLOP/s from the "
                        "tuning pass, not only the best of each system")
    args = parser.parse_args()
    shapes = SHAPES
    if args.shapes:
        shapes = [tuple(int(x) for x in s.split("x")) for s in args.shapes.split(",")]

    lib = ctypes.CDLL(build_library(args.bench_dir))
    lib.croq_rt_set_synchronous.argtypes = [ctypes.c_int]
    lib.croq_rt_set_default_stream.argtypes = [ctypes.c_void_p]
    lib.croq_rt_last_error.restype = ctypes.c_char_p
    lib.croq_rt_set_synchronous(1 if args.sync else 0)
    croq = []
    with open(os.path.join(args.bench_dir, "variants.txt")) as f:
        for line in f:
            if not line.strip():
                continue
            name, source = line.split()[:2]
            gemm = CroqGemm(lib, name)
            if source == "gemm_splitk_co":
                # The split count is the kernel's argument: tuned per shape.
                for splits in (2, 3, 4, 6, 8):
                    croq.append((f"{name}_x{splits}",
                                 lambda a, b, c, g=gemm, s=splits: g.bind(a, b, c, s)))
            else:
                croq.append((name, gemm.bind))
    triton = triton_systems()
    cublas = [("cublas", lambda a, b, c: (lambda: torch.mm(a, b.t(), out=c)))]

    print(f"GPU: {torch.cuda.get_device_name()}; torch {torch.__version__}; "
          f"croq calls {'synchronous' if args.sync else 'asynchronous'}")
    print(f"SM clock at start (sm, max sm, temperature, power): {sm_clock()}")
    rows, failures = [], 0
    for m, n, k in shapes:
        torch.manual_seed(0)
        a = torch.randn(m, k, device="cuda").half()
        b = torch.randn(n, k, device="cuda").half()
        ref = a.float() @ b.float().T
        flops = 2.0 * m * n * k
        best = {}
        # Tuning pass: each configuration checked once, then timed in
        # TUNING_ROUNDS rounds of a rotating order (the GPU's clock drifts
        # as it heats, which would favour the configurations timed first);
        # its best time counts. The best of each system goes on to the
        # interleaved rounds.
        for system, configs in (("croq", croq), ("triton", triton), ("cublas", cublas)):
            valid = []
            for name, bind in configs:
                c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)
                try:
                    call = bind(a, b, c)
                    call()
                    torch.cuda.synchronize()
                except Exception as e:  # a config that does not compile or fit
                    print(f"  {m}x{n}x{k} {name}: {type(e).__name__}: {str(e)[:200]}")
                    continue
                err = rel_error(c, ref)
                if not err < 1e-2:
                    print(f"FAIL {m}x{n}x{k} {name}: relative error {err}")
                    failures += 1
                    continue
                valid.append([name, call, float("inf"), err, c])
            for r in range(TUNING_ROUNDS):
                shift = r * len(valid) // TUNING_ROUNDS
                for entry in valid[shift:] + valid[:shift]:
                    entry[2] = min(entry[2], time_calls(entry[1], args.calls))
            for name, _, t, _, _ in valid:
                if args.tuning:
                    print(f"  tuning {m}x{n}x{k} {name}: {flops / t / 1e9:.1f} TFLOP/s")
            if valid:
                best[system] = tuple(min(valid, key=lambda e: e[2]))
        times = {s: [] for s in best}
        order = list(best)
        for r in range(args.rounds):
            for s in order[r % len(order):] + order[:r % len(order)]:
                times[s].append(time_calls(best[s][1], args.calls))
        med = {s: statistics.median(v) for s, v in times.items()}
        graph = {}
        for s in ("croq", "cublas"):
            if s in best:
                try:
                    graph[s] = time_graph(best[s][1], args.calls)
                except Exception as e:  # synchronous calls cannot be captured
                    print(f"  {m}x{n}x{k} {s}: no graph ({type(e).__name__}: {str(e)[:120]})")
                    graph[s] = float("nan")
        rows.append(((m, n, k), best, med, graph, flops))
        # Outputs checked again after the rounds (the last call's result).
        for s, (name, _, _, _, c) in best.items():
            err = rel_error(c, ref)
            if not err < 1e-2:
                print(f"FAIL {m}x{n}x{k} {name} after the rounds: relative error {err}")
                failures += 1
        del a, b, ref
        torch.cuda.empty_cache()

    print(f"SM clock at end: {sm_clock()}")
    print()
    print(f"{'shape (MxNxK)':<18}{'croq':>8}{'cuBLAS':>8}{'Triton':>8}"
          f"{'croq/cuBLAS':>12}{'croq/Triton':>12}{'croq graph':>11}{'cuBLAS graph':>13}"
          f"  croq variant; Triton config; croq rel. err")
    ratios_cublas, ratios_triton = [], []
    for (m, n, k), best, med, graph, flops in rows:
        tf = {s: flops / med[s] / 1e9 for s in med}
        rc = tf["croq"] / tf["cublas"] if "croq" in tf and "cublas" in tf else float("nan")
        rt = tf["croq"] / tf["triton"] if "croq" in tf and "triton" in tf else float("nan")
        if not math.isnan(rc):
            ratios_cublas.append(rc)
        if not math.isnan(rt):
            ratios_triton.append(rt)
        g = {s: flops / graph[s] / 1e9 for s in graph if not math.isnan(graph[s])}
        print(f"{f'{m}x{n}x{k}':<18}{tf.get('croq', float('nan')):>8.1f}"
              f"{tf.get('cublas', float('nan')):>8.1f}{tf.get('triton', float('nan')):>8.1f}"
              f"{rc:>12.3f}{rt:>12.3f}{g.get('croq', float('nan')):>11.1f}"
              f"{g.get('cublas', float('nan')):>13.1f}"
              f"  {best.get('croq', ('-',))[0]}; {best.get('triton', ('-',))[0]};"
              f" {best['croq'][3] if 'croq' in best else float('nan'):.1e}")
    geo = lambda xs: math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")
    print(f"TFLOP/s: median of {args.rounds} interleaved rounds of {args.calls} "
          f"back-to-back calls; graph: the same calls replayed from a CUDA graph")
    print(f"geomean croq/cuBLAS {geo(ratios_cublas):.3f}; croq/Triton {geo(ratios_triton):.3f}; "
          f"shapes at >= 1.0x cuBLAS: {sum(r >= 1.0 for r in ratios_cublas)}/{len(ratios_cublas)}")
    print(f"gemm sweep: {len(rows)} shapes, {failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
