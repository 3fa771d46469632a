#!/usr/bin/env python3
"""Runs the Croqtile tutorial's complete kernels on a GPU, each against a
PyTorch reference of what its chapter says it computes.

  scripts/tutorial_gpu.py prepare TUTORIAL OUT   (here: croq compiles)
  scripts/tutorial_gpu.py run OUT [--only STR]    (on the GPU machine)

`prepare` extracts every code block of TUTORIAL (a checkout of
LancerLab/croqtile-tutorial) that defines a `__co__` function this script
has a reference for, compiles it with croq-translate (--croq-to-host) into
OUT/<id>.cpp, and copies croq's runtime beside it. `run` builds each with
nvcc into its own shared library and calls it through ctypes on random
inputs, output tensors poisoned (or zero where the program accumulates into
a fresh tensor), and prints one line per kernel and the totals. The
kernels are the tutorial's; the references are this script's.
"""
import ctypes
import json
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from upstream_tests import FENCE_RE, fragment_reason  # noqa: E402


def _torch():
    import torch
    return torch


def ints(*shape):
    return _torch().randint(-8, 8, shape, dtype=_torch().int32, device="cuda")


def filled(shape, value, dtype):
    torch = _torch()
    return torch.full(shape, value, dtype=getattr(torch, dtype), device="cuda")


def int_matmul(a, b):
    return (a.cpu().long() @ b.cpu().long()).int().cuda()


def add_case(*shape):
    def case():
        a, b = ints(*shape), ints(*shape)
        return [a, b], [filled(shape, -7, "int32")], [a + b]
    return case


def int_matmul_case(m, n, k):
    # The chapters' matmuls accumulate (`+=`) into a fresh output: it starts
    # at zero.
    def case():
        a, b = ints(m, k), ints(k, n)
        return [a, b], [filled((m, n), 0, "int32")], [int_matmul(a, b)]
    return case


def gemm_nk(m, n, k):
    # lhs [M, K], rhs [N, K], output [M, N] in f16, as the chapters' wgmma
    # kernels declare them.
    def case():
        torch = _torch()
        a = torch.randn(m, k, device="cuda").half()
        b = torch.randn(n, k, device="cuda").half()
        return [a, b], [filled((m, n), float("nan"), "float16")], [a.double() @ b.double().T]
    return case


def flash_case(b, s, t, h):
    # The optimization chapter's flash attention: Q [B, S, H, 128], K and V
    # [B, T, H, 128] in bf16, causal with the past T - S keys visible, the
    # scale 1 / sqrt(128) (the kernel's exp2 with log2(e) / sqrt(128)).
    def case():
        torch = _torch()
        q = torch.randn(b, s, h, 128, device="cuda").bfloat16()
        k = torch.randn(b, t, h, 128, device="cuda").bfloat16()
        v = torch.randn(b, t, h, 128, device="cuda").bfloat16()
        qf, kf, vf = (x.float().permute(0, 2, 1, 3) for x in (q, k, v))
        scores = (qf @ kf.transpose(-1, -2)) / 128 ** 0.5
        i = torch.arange(s, device="cuda").unsqueeze(1)
        j = torch.arange(t, device="cuda").unsqueeze(0)
        scores = scores.masked_fill(j > i + (t - s), float("-inf"))
        ref = (torch.softmax(scores, dim=-1) @ vf).permute(0, 2, 1, 3)
        return [q, k, v], [filled((b, s, h, 128), float("nan"), "bfloat16")], [ref]
    return case


def identity_case():
    a = ints(4)
    return [a], [filled((4,), -7, "int32")], [a]


# (chapter, __co__ function, a regex its block matches, cases, comparison)
TABLE = [
    ("tutorial/ch00-installation.md", "identity", r"s32 \[4\] input", [identity_case], "exact"),
    ("tutorial/ch01-hello-croqtile.md", "ele_add", r"s32 \[4, 8\] lhs", [add_case(4, 8)], "exact"),
    ("tutorial/ch02-data-movement.md", "tiled_add_2d", r"s32 \[64, 128\] lhs", [add_case(64, 128)], "exact"),
    ("tutorial/ch03-parallelism.md", "matmul", r"s32 \[128, 256\] lhs", [int_matmul_case(128, 256, 256)], "exact"),
    ("tutorial/ch06-synchronization.md", "matmul", r"s32 \[M, K\] lhs", [int_matmul_case(128, 256, 256)], "exact"),
    ("tutorial/ch04-mma.md", "matmul_wgmma", r"global f16 \[M, K\] lhs",
     [gemm_nk(64, 64, 128), gemm_nk(256, 512, 384), gemm_nk(64 * 24, 64 * 24, 128)], "gemm"),
    ("tutorial/ch04-mma.md", "matmul_wgmma_2group", r"global f16 \[M, K\] lhs",
     [gemm_nk(128, 64, 128), gemm_nk(256, 512, 384), gemm_nk(128 * 12, 64 * 24, 128)], "gemm"),
    ("tutorial/ch06-synchronization.md", "matmul", r"global f16 \[M, K\] lhs",
     [gemm_nk(64, 64, 128), gemm_nk(256, 512, 384), gemm_nk(64 * 24, 64 * 24, 256)], "gemm"),
    # The first, sequential version, with past keys (KV_SEQ > Q_SEQ).
    ("optimization/flash-attention-causal-prefill.md", "flash_atten",
     r"global bf16\[B, Q_SEQ, H, DIM\] Q, global",
     [flash_case(1, 128, 128, 1), flash_case(2, 256, 384, 3), flash_case(1, 100, 164, 2),
      flash_case(4, 1024, 1024, 8)], "gemm"),
    # v2 (TMA producer, warp-specialized consumers in the comma form
    # `group-4, t by 128 : thread`) and v3 (QK / PV overlap with mma.wait<1>)
    # mask without past keys: KV_SEQ == Q_SEQ.
    ("optimization/flash-attention-causal-prefill.md", "flash_atten",
     r"group-4, t by 128 : thread",
     [flash_case(1, 128, 128, 1), flash_case(2, 256, 256, 3), flash_case(1, 100, 100, 2),
      flash_case(2, 1000, 1000, 4), flash_case(4, 1024, 1024, 8)], "gemm"),
    ("optimization/flash-attention-causal-prefill.md", "flash_atten",
     r"mma\.wait<1>;",
     [flash_case(1, 128, 128, 1), flash_case(2, 256, 256, 3), flash_case(1, 100, 100, 2),
      flash_case(2, 1000, 1000, 4), flash_case(4, 1024, 1024, 8)], "gemm"),
]


def prepare(tutorial, out):
    croq = os.path.join(REPO, "build", "bin", "croq-translate")
    os.makedirs(out, exist_ok=True)
    manifest = []
    for chapter, function, signature, _, _ in TABLE:
        text = open(os.path.join(tutorial, chapter)).read()
        for m in FENCE_RE.finditer(text):
            body = m.group(2)
            if not re.search(r"__co__[^(]*\b" + function + r"\s*\(", body) or \
                    not re.search(signature, body) or fragment_reason(body):
                continue
            line = text.count("\n", 0, m.start()) + 2
            ident = f"{os.path.basename(chapter).split('-')[0]}_{function}_{line}"
            src = os.path.join(out, ident + ".co")
            open(src, "w").write(body)
            imp = subprocess.run([croq, "--import-croqtile", src], capture_output=True, text=True)
            host = subprocess.run([croq, "--croq-to-host", "-o", os.path.join(out, ident + ".cpp")],
                                  input=imp.stdout, capture_output=True, text=True) if imp.returncode == 0 else imp
            ok = imp.returncode == 0 and host.returncode == 0
            manifest.append({"id": ident, "chapter": f"{chapter}:{line}", "function": function,
                             "signature": signature, "compiled": ok,
                             "error": "" if ok else (imp.stderr or host.stderr).strip().splitlines()[0]})
            print(("compiled " if ok else "FAILED   ") + f"{chapter}:{line} {function}")
    for f in ("include/croq_runtime.h", "lib/croq_runtime.cpp"):
        shutil.copy(os.path.join(REPO, "runtime", f), out)
    json.dump(manifest, open(os.path.join(out, "manifest.json"), "w"), indent=1)


def call(lib, function, tensors):
    fn = getattr(lib, function)
    fn.restype = ctypes.c_int
    args = []
    for t in tensors:
        assert t.is_cuda and t.is_contiguous()
        args.append(ctypes.c_void_p(t.data_ptr()))
        args.extend(ctypes.c_int64(d) for d in t.shape)
    return fn(*args)


# Each kernel runs in a child process under this watchdog, so that a hang
# fails that kernel instead of stopping the run.
WATCHDOG_S = 120


def run_one(out, ident):
    """Builds and runs one kernel of the manifest; prints its verdict."""
    import torch
    manifest = json.load(open(os.path.join(out, "manifest.json")))
    entry = next(e for e in manifest if e["id"] == ident)
    table = {(c, f, s): (cases, check) for c, f, s, cases, check in TABLE}
    so = os.path.join(out, entry["id"] + ".so")
    build = subprocess.run(["nvcc", "-O2", "-std=c++17", "-shared", "-Xcompiler", "-fPIC",
                            "-I", out, os.path.join(out, entry["id"] + ".cpp"),
                            os.path.join(out, "croq_runtime.cpp"), "-lcuda", "-o", so],
                           capture_output=True, text=True)
    if build.returncode:
        return f"nvcc: {build.stderr.strip()[:300]}"
    lib = ctypes.CDLL(so)
    chapter = entry["chapter"].rsplit(":", 1)[0]
    cases, check = table[(chapter, entry["function"], entry["signature"])]
    for make in cases:
        inputs, outputs, refs = make()
        rc = call(lib, entry["function"], inputs + outputs)
        torch.cuda.synchronize()
        if rc:
            return f"returned {rc}"
        for got, ref in zip(outputs, refs):
            if check == "exact":
                if not torch.equal(got, ref.to(got.dtype)):
                    return f"{(got != ref).sum().item()} elements differ (shape {list(got.shape)})"
            else:
                g, r = got.double(), ref.double()
                rel = float("inf") if torch.isnan(g).any() else ((g - r).norm() / r.norm()).item()
                if rel > 2e-2:
                    return f"relative error {rel:.3g} at {list(got.shape)}"
    return None


def run(out, only=None):
    manifest = json.load(open(os.path.join(out, "manifest.json")))
    passed = failed = 0
    for entry in manifest:
        name = f"{entry['chapter']} {entry['function']}"
        if only and only not in name:
            continue
        if not entry["compiled"]:
            print(f"FAIL {name}: does not compile: {entry['error']}")
            failed += 1
            continue
        try:
            child = subprocess.run([sys.executable, os.path.abspath(__file__), "run-one", out,
                                    entry["id"]], capture_output=True, text=True,
                                   timeout=WATCHDOG_S)
            lines = child.stdout.strip().splitlines()
            verdict = lines[-1] if lines else ""
            if child.returncode or not verdict.startswith("OK"):
                error = verdict[len("ERROR "):] if verdict.startswith("ERROR ") else \
                    f"exit {child.returncode}: {child.stderr.strip()[-300:]}"
            else:
                error = None
        except subprocess.TimeoutExpired:
            error = f"did not finish within {WATCHDOG_S} s (a hang)"
        if error:
            print(f"FAIL {name}: {error}", flush=True)
            failed += 1
        else:
            cases = next(c for ch, f, sig, c, _ in TABLE
                         if (ch, f, sig) == (entry["chapter"].rsplit(":", 1)[0],
                                             entry["function"], entry["signature"]))
            print(f"PASS {name} ({len(cases)} shapes)", flush=True)
            passed += 1
    print(f"tutorial on the GPU: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "prepare":
        prepare(sys.argv[2], sys.argv[3])
    elif len(sys.argv) in (3, 5) and sys.argv[1] == "run":
        only = sys.argv[4] if len(sys.argv) == 5 and sys.argv[3] == "--only" else None
        sys.exit(run(sys.argv[2], only))
    elif len(sys.argv) == 4 and sys.argv[1] == "run-one":
        error = run_one(sys.argv[2], sys.argv[3])
        print(f"ERROR {error}" if error else "OK")
    else:
        sys.exit(__doc__)
