"""One GEMM shape, croq's variants beside cuBLAS, in a form to run under
ncu: each system is warmed up, then called once between
cudaProfilerStart and cudaProfilerStop.

    ncu --profile-from-start off --clock-control none --section ... \
        python3 bench/gemm_profile.py GEMM_BENCH_DIR MxNxK VARIANT[,VARIANT]
"""
import ctypes
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gemm_sweep import CroqGemm, build_library  # noqa: E402


def main():
    bench_dir, shape, variants = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
    m, n, k = (int(x) for x in shape.split("x"))
    lib = ctypes.CDLL(build_library(bench_dir))
    lib.croq_rt_set_synchronous.argtypes = [ctypes.c_int]
    lib.croq_rt_set_default_stream.argtypes = [ctypes.c_void_p]
    lib.croq_rt_last_error.restype = ctypes.c_char_p
    lib.croq_rt_set_synchronous(0)
    a = torch.randn(m, k, device="cuda").half()
    b = torch.randn(n, k, device="cuda").half()
    c = torch.empty(m, n, device="cuda", dtype=torch.float16)
    calls = []
    for v in variants:
        name, _, splits = v.partition(":")
        extra = [int(splits)] if splits else []
        calls.append(CroqGemm(lib, name).bind(a, b, c, *extra))
    calls.append(lambda: torch.mm(a, b.t(), out=c))
    for call in calls:
        for _ in range(5):
            call()
    torch.cuda.synchronize()
    torch.cuda.profiler.start()
    for call in calls:
        call()
    torch.cuda.synchronize()
    torch.cuda.profiler.stop()


if __name__ == "__main__":
    main()
