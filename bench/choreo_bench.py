"""croq against choreo on choreo's own tuned GEMMs (issue 14), on the GPU.

    python3 bench/choreo_bench.py OUT [--rounds N] [--calls N]

OUT is what bench/choreo_prepare.py wrote and OUT/build.sh built (lib/).
Each kernel runs in its own process under a watchdog (a hang or a fault
fails that kernel only), at the shape it was tuned for, f16 in and f32 out:

- choreo: the stored .cu (as the tuner kept it, often hand-edited after
  generation), built with the flags it was tuned with; choreo-gen: the .cu
  exactly as choreo generated it (from its .cute.result), same flags;
  croq: croqc's build of the same .co.
- kernel time: choreo's launch repeated between two CUDA events (its host
  work done once); croq's calls replayed from a CUDA graph. Median over
  interleaved rounds.
- per call: back-to-back calls of the host entry point between two CUDA
  events: choreo's (which encodes its tensor maps, sets the attribute and
  synchronizes every call) and croq's (asynchronous, on torch's stream).
- cuBLAS: torch.mm at the same shape, f32 output where torch offers it.
- Every output is compared in full with an f32 reference.
"""
import argparse
import ctypes
import json
import math
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def run_one(out, kernel, rounds, calls):
    import torch
    sys.path.insert(0, HERE)
    from gemm_sweep import time_calls, time_graph

    m, n, k = kernel["shape"]
    torch.manual_seed(0)
    a = (torch.rand(m, k, device="cuda") * 2 - 1).half()
    b = (torch.rand(n, k, device="cuda") * 2 - 1).half()
    ref = a.float() @ b.float().T
    result = {"name": kernel["name"]}

    def check(c):
        if not torch.isfinite(c).all():
            return float("inf")
        return ((c - ref).norm() / ref.norm()).item()

    systems = {}
    for kind in ("choreo", "choreo-gen"):
        path = os.path.join(out, "lib", f"{kind}-{kernel['name']}.so")
        if not kernel.get(kind) or not os.path.exists(path):
            continue
        lib = ctypes.CDLL(path)
        fn = lib.croq_choreo_matmul
        fn.restype = ctypes.c_int
        fn.argtypes = [ctypes.c_void_p] * 3 + [ctypes.c_longlong] * 3 + \
            [ctypes.c_int, ctypes.POINTER(ctypes.c_float)]
        c = torch.full((m, n), float("nan"), device="cuda")
        ms = ctypes.c_float(0)

        def kernel_time(fn=fn, c=c, ms=ms):
            rc = fn(a.data_ptr(), b.data_ptr(), c.data_ptr(), m, n, k, calls, ctypes.byref(ms))
            if rc:
                raise RuntimeError(f"CUDA error {rc}")
            return ms.value

        def call(fn=fn, c=c):
            fn(a.data_ptr(), b.data_ptr(), c.data_ptr(), m, n, k, 0, None)
        systems[kind] = (kernel_time, call, c)

    # croq's build, and where lib/croq-alt.so exists (a tuning A/B: the same
    # sources built with other croqc options), that build too, interleaved.
    for kind in ("croq", "croq-alt"):
        path = os.path.join(out, "lib", f"{kind}.so")
        if not kernel.get("croq") or not os.path.exists(path):
            continue
        lib = ctypes.CDLL(path)
        lib.croq_rt_set_synchronous.argtypes = [ctypes.c_int]
        lib.croq_rt_set_default_stream.argtypes = [ctypes.c_void_p]
        lib.croq_rt_set_synchronous(0)
        fn = getattr(lib, f"croq_{kernel['name']}")
        fn.restype = ctypes.c_int
        c = torch.full((m, n), float("nan"), device="cuda")
        args = [ctypes.c_void_p(a.data_ptr()), ctypes.c_int64(m), ctypes.c_int64(k),
                ctypes.c_void_p(b.data_ptr()), ctypes.c_int64(n), ctypes.c_int64(k),
                ctypes.c_void_p(c.data_ptr()), ctypes.c_int64(m), ctypes.c_int64(n)]

        def call(fn=fn, args=args, lib=lib):
            lib.croq_rt_set_default_stream(ctypes.c_void_p(torch.cuda.current_stream().cuda_stream))
            if fn(*args):
                raise RuntimeError("croq call failed")
        systems[kind] = (lambda call=call: time_graph(call, calls), call, c)

    try:
        cublas_out = torch.empty(m, n, device="cuda")
        torch.mm(a, b.t(), out_dtype=torch.float32, out=cublas_out)
        cublas = lambda: torch.mm(a, b.t(), out_dtype=torch.float32, out=cublas_out)
        result["cublas_dtype"] = "f32"
    except (TypeError, RuntimeError):
        cublas_out = torch.empty(m, n, device="cuda", dtype=torch.float16)
        cublas = lambda: torch.mm(a, b.t(), out=cublas_out)
        result["cublas_dtype"] = "f16"

    def per_call(fn):
        fn()
        torch.cuda.synchronize()
        return time_calls(fn, calls)

    # Correctness first, on the output of one call each.
    for kind, (_, call, c) in list(systems.items()):
        try:
            call()
            torch.cuda.synchronize()
            result[f"{kind}_err"] = check(c)
        except Exception as e:  # noqa: BLE001
            result[f"{kind}_error"] = f"{type(e).__name__}: {e}"[:200]
            del systems[kind]
    kernel_ms = {s: [] for s in systems}
    call_ms = {s: [] for s in systems}
    kernel_ms["cublas"] = []
    order = list(systems) + ["cublas"]
    for r in range(rounds):
        for s in order[r % len(order):] + order[:r % len(order)]:
            if s == "cublas":
                kernel_ms[s].append(per_call(cublas))
                continue
            kernel_ms[s].append(systems[s][0]())
            call_ms[s].append(per_call(systems[s][1]))
    for s, v in kernel_ms.items():
        result[f"{s}_kernel_ms"] = statistics.median(v)
    for s, v in call_ms.items():
        result[f"{s}_call_ms"] = statistics.median(v)
    for kind, (_, _, c) in systems.items():
        result[f"{kind}_err_after"] = check(c)
    result["flops"] = 2.0 * m * n * k
    print(json.dumps(result))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--one")
    ap.add_argument("--timeout", type=int, default=120)
    args = ap.parse_args()
    with open(os.path.join(args.out, "manifest.json")) as f:
        manifest = json.load(f)
    if args.one:
        kernel = next(k for k in manifest["kernels"] if k["name"] == args.one)
        run_one(args.out, kernel, args.rounds, args.calls)
        return 0
    rows = []
    for kernel in manifest["kernels"]:
        start = time.time()
        try:
            p = subprocess.run([sys.executable, __file__, args.out, "--one", kernel["name"],
                                "--rounds", str(args.rounds), "--calls", str(args.calls)],
                               capture_output=True, text=True, timeout=args.timeout)
            line = next((l for l in p.stdout.splitlines() if l.startswith("{")), None)
            row = json.loads(line) if line else {"name": kernel["name"],
                                                 "error": (p.stderr or p.stdout)[-300:]}
        except subprocess.TimeoutExpired:
            row = {"name": kernel["name"], "error": f"timed out after {args.timeout} s"}
        row["kernel"] = kernel
        rows.append(row)
        # Each kernel's result as it comes (the table needs them all), so
        # that a run cut short still reports what it measured.
        print(f"# {kernel['name']}: {time.time() - start:.1f} s "
              + (f"ERROR {row['error']}" if "error" in row else
                 json.dumps({k: v for k, v in row.items() if k != "kernel"})),
              flush=True)

    ok = lambda e: e is not None and e < 1e-2
    print()
    print(f"{'run / kernel':<66}{'shape':>17}{'flags':>8}  {'TFLOP/s: croq':>13}{'choreo':>8}"
          f"{'gen':>7}{'cuBLAS':>8}  {'croq/choreo':>11}{'croq/gen':>9}  "
          f"{'per call ms: croq':>17}{'choreo':>8}  errors (croq, choreo, gen)")
    ratios, ratios_gen, ratios_alt, valid, failures = [], [], [], 0, 0
    for row in rows:
        kernel = row["kernel"]
        m, n, k = kernel["shape"]
        flops = 2.0 * m * n * k
        tf = {}
        for s in ("croq", "croq-alt", "choreo", "choreo-gen", "cublas"):
            ms = row.get(f"{s}_kernel_ms")
            tf[s] = flops / ms / 1e9 if ms else float("nan")
        errs = [row.get(f"{s}_err") for s in ("croq", "choreo", "choreo-gen")]
        # A kernel is valid when choreo's build of it computes right; croq
        # fails it when it does not.
        valid_kernel = ok(errs[1]) or ok(errs[2])
        if valid_kernel and not ok(errs[0]):
            failures += 1
        r = tf["croq"] / tf["choreo"] if ok(errs[0]) and ok(errs[1]) else float("nan")
        rg = tf["croq"] / tf["choreo-gen"] if ok(errs[0]) and ok(errs[2]) else float("nan")
        if not math.isnan(r):
            ratios.append(r)
            valid += 1
        if not math.isnan(rg):
            ratios_gen.append(rg)
        alt_err = row.get("croq-alt_err")
        ra = (tf["croq-alt"] / tf["choreo"]
              if ok(alt_err) and ok(errs[1]) else float("nan"))
        if not math.isnan(ra):
            ratios_alt.append(ra)
        fmt = lambda e: "-" if e is None else f"{e:.0e}"
        flags = ",".join(f.lstrip("-").split("=")[0][:4] for f in kernel["flags"]) or "-"
        print(f"{kernel['run'] + ' ' + kernel['kernel'][:24]:<66}{f'{m}x{n}x{k}':>17}{flags:>8}  "
              f"{tf['croq']:>13.1f}{tf['choreo']:>8.1f}{tf['choreo-gen']:>7.1f}{tf['cublas']:>8.1f}  "
              f"{r:>11.3f}{rg:>9.3f}  {row.get('croq_call_ms', float('nan')):>17.3f}"
              f"{row.get('choreo_call_ms', float('nan')):>8.3f}  "
              f"{fmt(errs[0])}, {fmt(errs[1])}, {fmt(errs[2])}"
              + ("" if valid_kernel else "  (invalid: choreo's builds do not compute it)")
              + (f"  {row['error'][:80]}" if "error" in row else ""))
        if "croq-alt_kernel_ms" in row:
            print(f"    alt build: {tf['croq-alt']:.1f} TFLOP/s, alt/choreo {ra:.3f}, "
                  f"alt/croq {tf['croq-alt'] / tf['croq']:.3f}, error {fmt(alt_err)}")
    geo = lambda xs: math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")
    print(f"kernel time: median of {args.rounds} interleaved rounds; cuBLAS: torch.mm "
          f"({rows[0].get('cublas_dtype', '?') if rows else '?'} output)")
    print(f"croq/choreo (stored .cu): geomean {geo(ratios):.3f} over {valid} kernels both "
          f"compute right; croq >= 1.0x on {sum(x >= 1.0 for x in ratios)}")
    print(f"croq/choreo (generated .cu): geomean {geo(ratios_gen):.3f} over {len(ratios_gen)}; "
          f"croq >= 1.0x on {sum(x >= 1.0 for x in ratios_gen)}")
    if ratios_alt:
        print(f"croq-alt/choreo (stored .cu): geomean {geo(ratios_alt):.3f} over "
              f"{len(ratios_alt)}; croq-alt >= 1.0x on {sum(x >= 1.0 for x in ratios_alt)}")
    print(f"choreo bench: {len(rows)} kernels, {failures} that choreo computes right "
          f"and croq does not")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
