"""The outsiders' harness, shared by round3/check.py and round4/check.py.

Each round's check.py registers one check a program with @check(NAME) and
hands its command line to main(), which gives it:

  python check.py prepare OUTDIR       compile every valid/*.co with croq, save to OUTDIR/NAME
  python check.py run OUTDIR           load OUTDIR/NAME with croq.load and check on the GPU
  python check.py _selftest [OUTDIR]   CPU self-test of the checks

`run` is a parent process that starts the checks in a child process (the
same check.py, `_child OUTDIR NAME...`) and restarts it past a crash, a
hang or a sticky CUDA error. A check.py imports this module by putting
test/Outsiders/ first on sys.path, in the parent and in the child alike.
"""
import glob
import math
import os
import sys
import time
import traceback

G = {}
CHECKS = {}


def program_names(here):
    return [os.path.splitext(os.path.basename(p))[0]
            for p in sorted(glob.glob(os.path.join(here, "valid", "*.co")))]


# --------------------------------------------------------------------------
# prepare
# --------------------------------------------------------------------------
def prepare(here, outdir):
    import croq
    os.makedirs(outdir, exist_ok=True)
    ok = bad = 0
    for name in program_names(here):
        path = os.path.join(here, "valid", name + ".co")
        t0 = time.time()
        try:
            m = croq.compile(path)
            m.save(os.path.join(outdir, name))
            dt = time.time() - t0
            print(f"COMPILED {name} ({dt:.1f}s)", flush=True)
            ok += 1
        except Exception as e:  # croq.CompileError or anything else
            dt = time.time() - t0
            lines = [l for l in str(e).splitlines() if l.strip()]
            first = next((l for l in lines if "error" in l), lines[0] if lines else repr(e))
            print(f"COMPILE-FAIL {name}: {first} ({dt:.1f}s)", flush=True)
            bad += 1
    print(f"prepare: {ok} compiled, {bad} failed")


# --------------------------------------------------------------------------
# run: a parent that restarts a child process past a crash or a hang
# --------------------------------------------------------------------------
def run(script, outdir, label, timeout):
    """Checks every registered program in children of `script` (its
    `_child` command), `timeout` seconds a program; the last line is
    `LABEL: N passed, M failed`. Returns M."""
    import queue
    import subprocess
    import threading
    outdir = os.path.abspath(outdir)
    env = dict(os.environ)
    env["CROQ_PY"] = os.path.abspath(os.environ.get("CROQ_PY", "python/src"))
    names = list(CHECKS)
    results = {}
    i = 0
    t_start = time.time()
    while i < len(names):
        p = subprocess.Popen([sys.executable, os.path.abspath(script), "_child", outdir] + names[i:],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             bufsize=1, env=env)
        q = queue.Queue()

        def pump(stream=p.stdout):
            for line in stream:
                q.put(line)
            q.put(None)
        threading.Thread(target=pump, daemon=True).start()
        current = None
        sticky = False       # the child said it exits after a sticky CUDA error
        reported = False     # the child reported a result
        started = time.time()
        while True:
            try:
                line = q.get(timeout=5)
            except queue.Empty:
                limit = timeout if current else timeout * 2
                if time.time() - started > limit:
                    p.kill()
                    p.wait()
                    if current is None:
                        current = names[i]
                    results[current] = False
                    print(f"FAIL {current}: timed out after {limit:.0f}s (hang or deadlock?)", flush=True)
                    i = names.index(current) + 1
                    break
                continue
            if line is None:
                rc = p.wait()
                if current is not None:
                    results[current] = False
                    print(f"FAIL {current}: the checking process died (rc={rc})", flush=True)
                    i = names.index(current) + 1
                elif sticky or reported:
                    pass  # a new child goes on after the last result
                elif i < len(names) and names[i] not in results:
                    # died before starting anything: give up on the rest
                    for n in names[i:]:
                        results[n] = False
                        print(f"FAIL {n}: the checking process could not start (rc={rc})", flush=True)
                    i = len(names)
                break
            line = line.rstrip("\n")
            if line.startswith("@START "):
                current = line.split(" ", 1)[1]
                started = time.time()
            elif line.startswith("PASS ") or line.startswith("FAIL "):
                name = line.split()[1].rstrip(":")
                results[name] = line.startswith("PASS ")
                print(line, flush=True)
                reported = True
                current = None
                i = names.index(name) + 1
                started = time.time()
            elif line.startswith("@STICKY"):
                sticky = True  # child exits; the next loop restarts after the current one
            else:
                print("    | " + line, flush=True)
    passed = sum(1 for v in results.values() if v)
    failed = len(names) - passed
    print(f"(run took {time.time() - t_start:.0f}s)")
    print(f"{label}: {passed} passed, {failed} failed")
    return failed


def _flush_c_stdout():
    """Flushes C's stdout (the host code's and the device's println),
    so that what a program printed comes out before its PASS / FAIL line
    and never in the middle of one."""
    try:
        import ctypes
        ctypes.CDLL(None).fflush(None)
    except Exception:
        pass


def child(outdir, names):
    sys.path.insert(0, os.environ.get("CROQ_PY", "python/src"))
    sys.modules["croq._croq"] = None
    import croq  # noqa: F401
    import torch
    G["croq"] = croq
    G["torch"] = torch
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    for name in names:
        print(f"@START {name}", flush=True)
        t0 = time.time()
        try:
            path = os.path.join(outdir, name)
            if not os.path.isdir(path):
                raise Failure("no compiled module (COMPILE-FAIL in prepare?)")
            m = croq.load(path)
            torch.manual_seed(1234)
            CHECKS[name](m)
            torch.cuda.synchronize()
            result = f"PASS {name} ({time.time() - t0:.1f}s)"
        except _Failure as e:
            result = f"FAIL {name}: {e}"
        except Exception as e:
            msg = " ".join(f"{type(e).__name__}: {e}".split())
            result = f"FAIL {name}: {msg[:600]}"
        _flush_c_stdout()
        print(result, flush=True)
        try:
            torch.cuda.synchronize()
        except Exception:
            print("@STICKY", flush=True)
            os._exit(3)


# --------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------
class _Failure(Exception):
    pass


def Failure(msg):
    """A check failed. In the CPU self-test of the harness (no kernels run,
    outputs keep their garbage) failures are only counted."""
    if G.get("selftest"):
        G["selftest_fails"] = G.get("selftest_fails", 0) + 1
        if "shape" in msg.split(":")[0 if msg.startswith("shape") else -1] or " shape " in msg:
            print("   selftest note:", msg[:200])
        return _NoRaise(msg)
    return _Failure(msg)


class _NoRaise(Exception):
    pass


def check(name):
    def deco(f):
        CHECKS[name] = f
        return f
    return deco


def T():
    return G["torch"]


def dev():
    return "cpu" if G.get("selftest") else "cuda"


def garbage(shape, dtype):
    """An output buffer pre-filled with NaN (floats) or an unlikely integer."""
    torch = T()
    if dtype.is_floating_point:
        return torch.full(shape, float("nan"), device=dev(), dtype=torch.float32).to(dtype)
    if dtype == torch.bool:
        return torch.ones(shape, device=dev(), dtype=torch.bool)
    fill = {torch.int8: -77, torch.uint8: 177, torch.int16: -12345,
            torch.int32: -123456789, torch.int64: -1234567890123}[dtype]
    return torch.full(shape, fill, device=dev(), dtype=dtype)


def uniform(shape, lo=-1.0, hi=1.0, dtype=None):
    torch = T()
    t = torch.rand(shape, device=dev(), dtype=torch.float32) * (hi - lo) + lo
    return t.to(dtype) if dtype is not None else t


def randint(shape, lo, hi, dtype=None):
    torch = T()
    return torch.randint(lo, hi, shape, device=dev(), dtype=dtype or torch.int32)


def call(fn, *args):
    return fn(*args, sync=True)


def _fmt_idx(flat, shape):
    idx = []
    for s in reversed(shape):
        idx.append(flat % s if s else 0)
        flat //= max(s, 1)
    return tuple(reversed(idx))


def close(what, out, ref, atol, rtol):
    torch = T()
    o = out.double()
    r = ref.double()
    if o.shape != r.shape:
        raise Failure(f"{what}: shape {tuple(o.shape)} != {tuple(r.shape)}")
    err = (o - r).abs()
    ok = err <= atol + rtol * r.abs()
    ok |= (torch.isnan(o) & torch.isnan(r)) | ((o == r) & torch.isinf(r))
    if not bool(ok.all()):
        bad = (~ok).flatten()
        n = int(bad.sum())
        first = int(bad.nonzero()[0])
        idx = _fmt_idx(first, list(o.shape))
        finite_err = torch.where(torch.isfinite(err), err, torch.zeros_like(err))
        raise Failure(f"{what}: {n} of {o.numel()} elements off; first at {idx}: "
                      f"got {o.flatten()[first].item():.6g}, want {r.flatten()[first].item():.6g}; "
                      f"max finite abs err {finite_err.max().item():.3g}; "
                      f"NaNs in output {int(torch.isnan(o).sum())}")


def equal(what, out, ref):
    torch = T()
    if out.shape != ref.shape:
        raise Failure(f"{what}: shape {tuple(out.shape)} != {tuple(ref.shape)}")
    o = out.to(torch.int64) if not out.dtype.is_floating_point else out
    r = ref.to(o.dtype)
    ne = (o != r)
    if out.dtype.is_floating_point:
        ne &= ~(torch.isnan(o) & torch.isnan(r))
    if bool(ne.any()):
        flat = ne.flatten()
        n = int(flat.sum())
        first = int(flat.nonzero()[0])
        idx = _fmt_idx(first, list(o.shape))
        raise Failure(f"{what}: {n} of {o.numel()} elements differ; first at {idx}: "
                      f"got {o.flatten()[first].item()}, want {r.flatten()[first].item()}")


def bits_equal(what, out, ref):
    """Bitwise equality of two float tensors of the same dtype."""
    torch = T()
    ib = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[out.element_size()]
    o = out.contiguous().view(ib).to(torch.int64)
    r = ref.to(out.dtype).contiguous().view(ib).to(torch.int64)
    ne = o != r
    if bool(ne.any()):
        flat = ne.flatten()
        first = int(flat.nonzero()[0])
        raise Failure(f"{what}: {int(flat.sum())} of {o.numel()} differ; first at {first}: "
                      f"got {out.flatten()[first].float().item()} (bits {o.flatten()[first].item():#x}), "
                      f"want {ref.to(out.dtype).flatten()[first].float().item()} (bits {r.flatten()[first].item():#x})")


def shaped(what, shape, f):
    """Run f(), prefixing a Failure with the shape it was checking."""
    try:
        f()
    except _NoRaise:
        pass
    except _Failure as e:
        raise Failure(f"{what} {shape}: {e}")


def cdiv(a, b):
    return (a + b - 1) // b


# --------------------------------------------------------------------------
# the CPU self-test
# --------------------------------------------------------------------------
def selftest(outdir=None):
    """CPU self-test of the harness itself: every check runs against a fake
    module whose functions do nothing, so only the references, the argument
    lists and the comparisons are exercised (all comparisons fail)."""
    import torch
    G["torch"] = torch
    G["selftest"] = True

    import json

    class Fake:
        """Checks each call's arguments against the saved module's
        croq-module.json (when OUTDIR has it): count, dtypes, ranks and
        static extents of tensors, kinds of scalars."""
        def __init__(self, meta):
            self.meta = {f["name"]: f for f in meta["functions"]} if meta else None

        def __getattr__(self, n):
            def f(*args, sync=False):
                assert sync is True
                if self.meta is not None:
                    assert n in self.meta, f"no function {n}"
                    params = self.meta[n]["params"]
                    assert len(args) == len(params), f"{n}: {len(args)} args for {len(params)} params"
                    for a, p in zip(args, params):
                        if p["kind"] == "tensor":
                            assert isinstance(a, torch.Tensor), (n, p["name"])
                            assert str(a.dtype) == "torch." + p["dtype"], (n, p["name"], a.dtype, p["dtype"])
                            assert a.dim() == len(p["shape"]), (n, p["name"], a.shape, p["shape"])
                            for got, want in zip(a.shape, p["shape"]):
                                assert want < 0 or got == want, (n, p["name"], a.shape, p["shape"])
                            assert a.is_contiguous(), (n, p["name"])
                        else:
                            ct = p.get("ctype")
                            want = {"bool": bool, "int64_t": int, "float": float, "double": float}.get(ct)
                            assert want is None or type(a) is want, (n, p["name"], type(a), ct)
                return 0
            return f
    bad = 0
    for name, chk in CHECKS.items():
        G["selftest_fails"] = 0
        meta = None
        if outdir and os.path.exists(os.path.join(outdir, name, "croq-module.json")):
            meta = json.load(open(os.path.join(outdir, name, "croq-module.json")))
        try:
            torch.manual_seed(1234)
            chk(Fake(meta))
            print(f"ok   {name} ({G['selftest_fails']} comparisons failed, as expected;"
                  f" {'arguments checked' if meta else 'no module to check arguments against'})")
        except Exception:
            bad += 1
            print(f"BUG  {name}:")
            traceback.print_exc()
    print(f"selftest: {bad} harness errors")


# --------------------------------------------------------------------------
# the command line
# --------------------------------------------------------------------------
def main(script, doc, label, timeout_env, timeout_default):
    """A check.py's command line. `script` is its __file__ (the programs are
    in valid/ beside it; `run`'s children run it again), `doc` what it
    prints on a wrong command line, `label` what the summary line of `run`
    starts with, and $`timeout_env` (default `timeout_default`) the seconds
    `run` gives each program."""
    argv = sys.argv
    if len(argv) >= 2 and argv[1] == "_selftest":
        selftest(argv[2] if len(argv) >= 3 else None)
    elif len(argv) >= 3 and argv[1] == "prepare":
        prepare(os.path.dirname(os.path.abspath(script)), argv[2])
    elif len(argv) >= 3 and argv[1] == "run":
        failed = run(script, argv[2], label,
                     float(os.environ.get(timeout_env, str(timeout_default))))
        # A failure fails the command (gpu-check.sh's stage status).
        sys.exit(1 if failed else 0)
    elif len(argv) >= 3 and argv[1] == "_child":
        child(argv[2], argv[3:])
    else:
        print(doc)
        sys.exit(2)


# --------------------------------------------------------------------------
# GEMM checks shared by the rounds: c = A B^T against float64
# --------------------------------------------------------------------------
def gemm_ref(a, b_nk):
    return a.double() @ b_nk.double().t()


def rms(t):
    return max(float(t.double().pow(2).mean().sqrt()), 1e-30) if t.numel() else 1.0


def gemm_scale(K, a, b):
    """The scale of a GEMM's result: sqrt(K) rms(a) rms(b), at least 1."""
    return max(1.0, math.sqrt(max(K, 1)) * rms(a) * rms(b))


def gemm_operands(M, N, K, dtype, kind, lo=-3, hi=3):
    """A [M, K] and B [N, K] of `dtype`: uniform floats or integers in
    [lo, hi] (made through f32, which every dtype, fp8 included, takes)."""
    if kind == "int":
        return (randint((M, K), lo, hi + 1).float().to(dtype),
                randint((N, K), lo, hi + 1).float().to(dtype))
    return uniform((M, K), dtype=dtype), uniform((N, K), dtype=dtype)


def gemm_close(what, out, ref, K, a, b, kind, rtol=1e-2):
    """Exact for integer inputs (ref holds the exact result, rounded by the
    caller where the output type rounds); else |err| <= rtol * (|ref| +
    scale), scale being the RMS of the result, sqrt(K) rms(a) rms(b)."""
    if kind == "int":
        close(what, out, ref, 0, 0)
    else:
        scale = max(1.0, math.sqrt(max(K, 1)) * rms(a) * rms(b))
        close(what, out, ref, rtol * scale, rtol)


def round_to(ref, dtype):
    """The float64 `ref` rounded once to `dtype`, as a kernel's final
    conversion of an exact f32 sum rounds it."""
    return ref.to(dtype).double()


def plain_gemm(m, fn, in_dtype, out_dtype, float_shapes, int_shapes, rtol=1e-2, int_range=3):
    """c = A B^T (A [M, K], B [N, K] of in_dtype) into a poisoned out_dtype
    [M, N]."""
    torch = T()
    dt = getattr(torch, in_dtype)
    odt = getattr(torch, out_dtype)
    for kind, shapes in (("float", float_shapes), ("int", int_shapes)):
        for M, N, K in shapes:
            a, b = gemm_operands(M, N, K, dt, kind, -int_range, int_range)
            c = garbage((M, N), odt)
            call(getattr(m, fn), a, b, c)
            ref = gemm_ref(a, b)
            if kind == "int" and odt != torch.float32:
                ref = round_to(ref, odt)
            shaped(fn, (M, N, K, kind), lambda: gemm_close("c", c, ref, K, a, b, kind, rtol))
