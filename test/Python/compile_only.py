"""Compile-only checks of the croq Python package (no GPU needed).
usage: compile_only.py CROQ_SOURCE_ROOT SAVE_DIR"""
import os
import subprocess
import sys

import croq

root, saved = sys.argv[1:3]
two = os.path.join(root, "test", "Pipelines", "multi-kernel.co")

m = croq.compile(two)
print(f"ptx: {m.ptx.count('.entry ')} entries, "
      f"{'one' if m.ptx.count('.version') == 1 else 'several'} .version")
print("mlir:", "croq IR" if "croq.parallel" in m.mlir else "missing")
print("functions:", " ".join(repr(f)[len("<croq function "):-1]
                             for f in m.functions.values()))
print("cached:", "same module, no compile" if croq.compile(two) is m else "recompiled")


class Fake:
    """A CUDA array by __cuda_array_interface__ (never dereferenced here)."""
    def __init__(self, shape, typestr="<f4", strides=None):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr,
                                         "data": (0x10000, False),
                                         "strides": strides, "version": 3}


def attempt(what, call):
    try:
        call()
        print(what, "accepted")
    except (TypeError, ValueError) as e:
        print(f"{type(e).__name__}: {e}")


attempt("object", lambda: m.scale(object(), 2.0))
attempt("f16", lambda: m.scale(Fake((4,), "<f2"), 2.0))
attempt("rank", lambda: m.scale(Fake((4, 4)), 2.0))
attempt("strides", lambda: m.twice(Fake((4,), strides=(8,)), Fake((4,))))
attempt("count", lambda: m.twice(Fake((4,))))
try:
    m.scale(Fake((4,)), 2.0)
    print("call without a GPU: returned")
except croq.CroqError as e:
    print("call without a GPU: CroqError", e)

try:
    croq.compile("__co__ void f(global f32 [N] a) { parallel p by 4 : block "
                 "{ a.at(q) = 1.0; } }")
except croq.CompileError as e:
    print("CompileError:", str(e).splitlines()[0])

src = ("__co__ void fill(global f32 [N] a) {\n"
       "  parallel p by cdiv(N, BLOCK) : block, t by BLOCK : thread\n"
       "    a.at(p # t) = 1.0;\n}\n")
d = croq.compile(src, defines={"BLOCK": 64})
print("defines: BLOCK=64", "compiles" if "fill_kernel" in d.ptx else "failed")
# croqc's knobs: --fast-math and --maxnreg.
q = croq.compile("__co__ void q(global f32 [N] a, global f32 [N] b) {\n"
                 "  parallel p by cdiv(N, 64) : block, t by 64 : thread\n"
                 "    if (p # t < N) a.at(p # t) = a.at(p # t) / b.at(p # t);\n}\n",
                 fast_math=True, maxnreg=64)
print("fast_math:", "div.approx.ftz" if "div.approx.ftz.f32" in q.ptx else q.ptx[:0] + "precise",
      "maxnreg:", ".maxnreg 64" if ".maxnreg 64" in q.ptx else "none")
try:
    croq.compile(two, maxnreg=300)
except ValueError as e:
    print("ValueError:", e)

# Without ptxas: the PTX and IR, and callables that say what is missing.
n = croq.compile(os.path.join(root, "examples", "scale.co"), toolkit="/nonexistent")
try:
    n.scale(Fake((4,)), 1.0)
except croq.CroqError as e:
    print("no ptxas:", "PTX" if ".entry" in n.ptx else "no PTX", "and", e)
# A function may be called like a module attribute.
p = croq.compile("__co__ int path(int n) { return n; }\n"
                 "__co__ void small(global s16 [4] a, s16 x) {\n"
                 "  parallel t by 4 : thread a.at(t) = x;\n}\n"
                 "__co__ void bits(global u32 [4] a, global u8 [4] b) {\n"
                 "  parallel t by 4 : thread a.at(t) = b.at(t);\n}\n")
print("named path:", type(p.path).__name__, p.functions["path"])
try:
    p.small(Fake((4,), "<i2"), 40000)
except OverflowError as e:
    print("OverflowError:", e)

# u32 data in torch's int32 (no uint32 arithmetic there) passes the
# checks; int8 for u8 (torch has uint8) does not.
for what, a, b in (("int32 as u32", "<i4", "|u1"), ("int8 as u8", "<u4", "|i1")):
    try:
        p.bits(Fake((4,), a), Fake((4,), b))
    except croq.CroqError:
        print(what + ": checked, then no GPU")
    except TypeError as e:
        print(what + ":", e)

m.save(saved)
# A process that cannot import the compiler extension still loads it.
code = ("import sys; sys.modules['croq._croq'] = None; import croq; "
        f"m = croq.load({saved!r}); print('loaded without the compiler:', "
        "' '.join(m.functions))")
print(subprocess.run([sys.executable, "-c", code], capture_output=True,
                     text=True).stdout.strip())
try:
    croq.load(os.path.join(saved, "nothing"))
except FileNotFoundError:
    print("no saved module: FileNotFoundError")
