# -*- Python -*- lit configuration for croq.

import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "CROQ"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".co", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.croq_obj_root, "test")
config.excludes = ["CMakeLists.txt", "README.md", "lit.cfg.py", "lit.site.cfg.py", "tools", "Inputs"]

config.substitutions.append(("%PATH%", config.environment["PATH"]))
llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

# As upstream and Triton do: every FileCheck variable is scoped to its
# CHECK-LABEL block and no prefix may go unused.
config.environment["FILECHECK_OPTS"] = "-enable-var-scope --allow-unused-prefixes=false"

tool_dirs = [config.croq_tools_dir, config.llvm_tools_dir]
tools = ["croq-opt", "croq-translate", "croqc", "croq-pattern-embedder"]
llvm_config.add_tool_substitutions(tools, tool_dirs)

# ptxas from the CUDA toolkit assembles the PTX tests produce.
ptxas = os.environ.get("CROQ_PTXAS", "/usr/local/cuda/bin/ptxas")
if os.path.exists(ptxas):
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))

# The Python package installs into a venv (test/Python).
try:
    import venv  # noqa: F401
    config.available_features.add("python-venv")
except ImportError:
    pass

# croqc builds host libraries against the toolkit's cuda.h and libcuda.
if os.path.exists("/usr/local/cuda/include/cuda.h"):
    config.available_features.add("cuda-toolkit")

# croq-link-device-code compiles C++ device functions with LLVM's clang++
# against the CUDA toolkit's headers.
if os.path.exists(os.path.join(config.llvm_tools_dir, "clang++")) and \
        os.path.exists("/usr/local/cuda/include/cuda_fp16.h"):
    config.available_features.add("cuda-clang")

# Host C++ built by LLVM's clang++ with compiler-rt's builtins (the
# runtime's unit tests, whose references are the compiler's _Float16 and
# __bf16 conversions).
import glob
clangxx = os.path.join(config.llvm_tools_dir, "clang++")
if os.path.exists(clangxx) and glob.glob(os.path.join(
        config.llvm_tools_dir, "..", "lib", "clang", "*", "lib", "*",
        "libclang_rt.builtins-x86_64.a")):
    config.available_features.add("compiler-rt")
    config.substitutions.append(("%clangxx", clangxx))

# A usable NVIDIA GPU runs the integration suite; elsewhere it is UNSUPPORTED.
import shutil
import subprocess
if shutil.which("nvidia-smi"):
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True,
                             timeout=30).stdout
        if "GPU" in out:
            config.available_features.add("cuda-gpu")
    except (OSError, subprocess.SubprocessError):
        pass
config.substitutions.append(("%croq_src_root", os.path.dirname(os.path.dirname(__file__))))
config.substitutions.append(("%croq_obj_root", config.croq_obj_root))

# An out-of-tree project configured against croq's build tree, with the
# compiler and generator croq was configured with.
config.substitutions.append(("%cmake_configure",
    '"%s" -G "%s" -DCMAKE_MAKE_PROGRAM="%s" -DCMAKE_CXX_COMPILER="%s" '
    '-DCMAKE_BUILD_TYPE="%s" -DCroq_DIR="%s/lib/cmake/croq"' % (
        config.cmake_command, config.cmake_generator,
        config.cmake_make_program, config.cxx_compiler,
        config.cmake_build_type or "Release", config.croq_obj_root)))
# The same without Croq_DIR, for a project given its own (an install).
config.substitutions.append(("%configure_project",
    '"%s" -G "%s" -DCMAKE_MAKE_PROGRAM="%s" -DCMAKE_CXX_COMPILER="%s" '
    '-DCMAKE_BUILD_TYPE="%s"' % (
        config.cmake_command, config.cmake_generator,
        config.cmake_make_program, config.cxx_compiler,
        config.cmake_build_type or "Release")))
config.substitutions.append(("%cmake", '"%s"' % config.cmake_command))
