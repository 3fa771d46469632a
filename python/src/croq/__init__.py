"""croq from Python: compile Croqtile kernels and call them on GPU tensors.

    import croq, torch
    m = croq.compile("kernel.co", defines={"TILE": 64})
    m.scale(torch.ones(1000, device="cuda"), 2.0)
    m.save("kernels/")            # what the kernels need to run
    m = croq.load("kernels/")     # elsewhere: only the CUDA driver needed

`compile` needs croq's compiler (this package's extension, which links
LLVM/MLIR) and, to build the kernels' host library, the CUDA toolkit and a
C++ compiler; `load` and the callables need only the CUDA driver.
"""

from ._runtime import CompileError, CroqError, Function, Module, load
from ._compile import compile, cache_dir

__all__ = ["compile", "load", "cache_dir", "Module", "Function",
           "CompileError", "CroqError"]
__version__ = "0.1.0"
