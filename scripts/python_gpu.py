#!/usr/bin/env python3
"""The croq Python package on a GPU, through croq.load (the GPU machine has
no LLVM): kernels compiled and saved here, called there on torch tensors
against torch references, across shapes.

  python_gpu.py prepare OUT   # here: croq.compile each kernel, Module.save
  python_gpu.py run OUT       # there: croq.load, call, compare; prints
                              # 'python package on the GPU: N passed, M failed'
"""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KERNELS = {
    # name: (source, defines)
    "elementwise": ("""
__co__ void scale(global f32 [N] a, f32 s) {
  parallel p by cdiv(N, 256) : block, t by 256 : thread
    if (p # t < N)
      a.at(p # t) = a.at(p # t) * s;
}
__co__ int axpy(global f16 [N] x, global f32 [N] y, f32 alpha) {
  parallel p by cdiv(N, 128) : block, t by 128 : thread
    if (p # t < N)
      y.at(p # t) = y.at(p # t) + alpha * x.at(p # t);
  return N;
}
""", None),
    "gemm_tma": (os.path.join(ROOT, "test/Integration/croqtile/gemm_tma_f16_co.co"), None),
    "mma": (os.path.join(ROOT, "test/Integration/croqtile/mma_co.co"), None),
    "results": (os.path.join(ROOT, "test/Integration/croqtile/results_co.co"), None),
    "streams": (os.path.join(ROOT, "test/Integration/croqtile/streams_co.co"), None),
    "stream_param": (os.path.join(ROOT, "test/Integration/kernels/streams.mlir"), None),
}


def prepare(out):
    import croq  # the installed package, with its compiler
    os.makedirs(out, exist_ok=True)
    for name, (source, defines) in KERNELS.items():
        m = croq.compile(source, defines=defines)
        m.save(os.path.join(out, name))
        print(f"{name}: {' '.join(m.functions)}")


def run(out):
    sys.path.insert(0, os.path.join(ROOT, "python", "src"))
    sys.modules["croq._croq"] = None  # the compiler is not there
    import torch
    import croq
    passed = failed = 0

    def check(what, ok, detail=""):
        nonlocal passed, failed
        if ok:
            passed += 1
        else:
            failed += 1
            print(f"FAIL {what} {detail}")

    ew = croq.load(os.path.join(out, "elementwise"))
    for n in (1, 127, 256, 257, 100003, (1 << 20) + 3):
        a = torch.randn(n, device="cuda")
        ref = a * 1.5
        ew.scale(a, 1.5)
        torch.cuda.synchronize()
        check(f"scale n={n}", torch.equal(a, ref))
        x = torch.randn(n, device="cuda").half()
        y = torch.randn(n, device="cuda")
        ref = y + 0.25 * x.float()
        r = ew.axpy(x, y, 0.25)
        check(f"axpy n={n}", r == n and torch.allclose(y, ref, atol=1e-5),
              f"returned {r}")
    # On a non-default stream: ordered with torch's work on it.
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        a = torch.ones(1 << 22, device="cuda")
        a.mul_(3.0)
        ew.scale(a, 2.0)
        a.add_(1.0)
    s.synchronize()
    check("scale on a side stream", bool((a == 7.0).all()))
    # A call returns once its kernel is queued; sync=True waits for it.
    a = torch.ones(1 << 20, device="cuda")
    torch.cuda._sleep(200_000_000)
    ew.scale(a, 2.0)
    queued = not torch.cuda.current_stream().query()
    torch.cuda.synchronize()
    check("asynchronous call", queued and bool((a == 2.0).all()),
          f"queued={queued}")
    torch.cuda._sleep(200_000_000)
    ew.scale(a, 2.0, sync=True)
    done = torch.cuda.current_stream().query()
    check("sync=True waits", done and bool((a == 4.0).all()), f"done={done}")
    # Back-to-back asynchronous calls, as a training loop makes them.
    a = torch.ones(4097, device="cuda")
    for _ in range(200):
        ew.scale(a, 1.0078125)
    check("200 queued calls", torch.allclose(a, torch.full_like(a, 1.0078125 ** 200)))
    # Argument checks raise before any launch.
    for bad, exc in ((lambda: ew.scale(torch.ones(4), 1.0), TypeError),
                     (lambda: ew.scale(torch.ones(4, device="cuda").half(), 1.0), TypeError),
                     (lambda: ew.scale(torch.ones(4, 4, device="cuda")[:, 0], 1.0), ValueError),
                     (lambda: ew.axpy(torch.ones(8, device="cuda").half(),
                                      torch.ones(9, device="cuda"), 1.0), croq.CroqError)):
        try:
            bad()
            check(f"rejects {exc.__name__}", False, "accepted")
        except exc as e:
            check(f"rejects {exc.__name__}", True)
            print(f"  {exc.__name__}: {e}")

    g = croq.load(os.path.join(out, "gemm_tma"))
    for m_, n_, k_ in ((128, 256, 64), (300, 200, 136), (4000, 4304, 320),
                       (2048, 2048, 2048)):
        a = torch.randn(m_, k_, device="cuda").half()
        b = torch.randn(n_, k_, device="cuda").half()
        c = torch.full((m_, n_), float("nan"), device="cuda").half()
        g.gemm_tma_f16_co(a, b, c)
        ref = (a.double() @ b.double().T)
        err = ((c.double() - ref).abs() / (ref.abs() + 1)).max().item()
        check(f"gemm {m_}x{n_}x{k_}", err < 2e-2, f"max rel err {err}")

    mm = croq.load(os.path.join(out, "mma"))
    for m_, n_, k_ in ((16, 16, 16), (64, 48, 128), (512, 512, 48)):
        a = torch.randn(m_, k_, device="cuda").half()
        b = torch.randn(n_, k_, device="cuda").half()
        c = torch.full((m_, n_), float("nan"), device="cuda")
        mm.mma_rr_co(a, b, c)
        ref = a.double() @ b.double().T
        err = (c.double() - ref).abs().max().item()
        check(f"mma_rr {m_}x{n_}x{k_}", err < 1e-2, f"max err {err}")

    res = croq.load(os.path.join(out, "results"))
    x = torch.randn(37, 64, device="cuda")
    y = torch.empty_like(x)
    res.returns_co(x, y)
    check("returns_co", torch.allclose(y, 2 + x.abs().sqrt(), atol=1e-5))
    r = res.scalar_co(torch.zeros(5, 7, device="cuda"), 3)
    check("scalar_co", r == 5 * 2 + 3 + 7, f"returned {r}")
    # The function's own streams start after torch's queued work: y is
    # written (after a long sleep) before the kernel reads it.
    st = croq.load(os.path.join(out, "streams"))
    for trial in range(3):
        x = torch.ones(32, device="cuda")
        y = torch.zeros(32, device="cuda")
        torch.cuda._sleep(200_000_000)
        y.fill_(2.0)
        st.spin_streams_co(x, y, 1)
        torch.cuda.synchronize()
        want = 2.0 * 0.999 + 0.001
        check(f"owned streams after torch's work ({trial})",
              torch.allclose(y, torch.full_like(y, want)), f"y[0]={y[0].item()}")
    # A stream argument is the stream the kernel runs on: the call returns
    # at once and the work is ordered on that stream.
    sp = croq.load(os.path.join(out, "stream_param"))
    mine = torch.cuda.Stream()
    x = torch.zeros(32, device="cuda")
    torch.cuda.synchronize()
    with torch.cuda.stream(mine):
        pass
    sp.spin_on(x, 20_000_000, mine)
    busy = not mine.query()
    mine.synchronize()
    want = 1.0 - 0.999 ** 20_000_000
    check("stream argument", busy and torch.allclose(x, torch.full_like(x, want), atol=1e-3),
          f"busy={busy} x[0]={x[0].item()}")
    print(f"python package on the GPU: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("prepare", "run"):
        sys.exit(__doc__)
    sys.exit(prepare(sys.argv[2]) if sys.argv[1] == "prepare" else run(sys.argv[2]))
