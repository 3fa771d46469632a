"""croq.compile: Croqtile source to a Module, cached by the source's hash."""

import hashlib
import json
import os
import shutil
import tempfile

from ._runtime import CompileError, Module, _write_module, load

_VERSION = "0.1.0"
_memo = {}


def cache_dir():
    """Where compiled modules are kept: $CROQ_CACHE_DIR, else
    ~/.cache/croq."""
    return os.environ.get("CROQ_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "croq")


def _defines_list(defines):
    if defines is None:
        return []
    if isinstance(defines, dict):
        return [k if v is None else f"{k}={v}" for k, v in sorted(defines.items())]
    return [str(d) for d in defines]


def _read_source(source_or_path):
    """(text, filename, is_mlir, directory) of a path or of source text."""
    looks_like_path = (isinstance(source_or_path, os.PathLike) or
                       ("\n" not in source_or_path and
                        source_or_path.endswith((".co", ".mlir"))))
    if looks_like_path:
        path = os.fspath(source_or_path)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"croq.compile: no such file: {path}")
        with open(path) as f:
            return f.read(), path, path.endswith(".mlir"), os.path.dirname(
                os.path.abspath(path))
    return source_or_path, "<string>", False, None


def _included(text, includes):
    """The files an #include could read, with their contents' hashes, so
    that a changed header is a new key (croq does not report which it read:
    every file of the include directories counts)."""
    if "#include" not in text:
        return []
    out = []
    for directory in includes:
        for root, _, files in os.walk(directory):
            for name in sorted(files):
                path = os.path.join(root, name)
                try:
                    if os.path.getsize(path) > (1 << 20):
                        continue
                    with open(path, "rb") as f:
                        out.append([path, hashlib.sha256(f.read()).hexdigest()])
                except OSError:
                    continue
    return out


def compile(source_or_path, defines=None, arch="sm_90a", include_dirs=None,
            toolkit=None, fast_math=False, maxnreg=None):
    """Compiles Croqtile source (text, or a .co / .mlir path) for `arch`.

    `fast_math` and `maxnreg` are croqc's --fast-math and --maxnreg=N
    (nvcc's --use_fast_math and -maxrregcount=N).

    Returns a Module with `.ptx`, `.mlir` and one callable per `__co__`
    function. Errors in the program raise CompileError with croq's
    diagnostics. The result is cached by a hash of the source and options:
    compiling the same source again loads it. Without the CUDA toolkit or a
    C++ compiler the module still has its PTX and IR; its callables then
    say what is missing.
    """
    if maxnreg and not 24 <= maxnreg <= 256:  # 0 or None: croq chooses
        raise ValueError(f"maxnreg={maxnreg} is outside 24 to 256 registers "
                         "per thread")
    text, filename, is_mlir, directory = _read_source(source_or_path)
    defines = _defines_list(defines)
    includes = [os.fspath(d) for d in (include_dirs or [])]
    if directory:
        includes.append(directory)
    toolkit = os.fspath(toolkit) if toolkit else ""
    key = hashlib.sha256(json.dumps(
        [_VERSION, text, is_mlir, defines, includes, arch, toolkit,
         bool(fast_math), maxnreg or 0,
         _included(text, includes)]).encode()).hexdigest()
    if key in _memo:
        return _memo[key]
    cached = os.path.join(cache_dir(), key[:32])
    if os.path.isfile(os.path.join(cached, "croq-module.json")):
        module = load(cached)
        _memo[key] = module
        return module

    from . import _croq  # the compiler: needs LLVM/MLIR, unlike load()
    result = _croq.compile(text, filename, is_mlir, defines, includes, arch,
                           toolkit, bool(fast_math), int(maxnreg or 0))
    if not result["ok"]:
        raise CompileError(result["diagnostics"].rstrip() or
                           f"croq could not compile {filename}")
    package = os.path.dirname(os.path.abspath(__file__))
    runtime = os.path.join(package, "runtime")
    if not os.path.isfile(os.path.join(runtime, "include", "croq_runtime.h")):
        runtime = ""  # not installed: croq's own source tree
    library_error = result["library_error"]
    if library_error:
        # PTX and IR without host code: not cached, so that a compile with
        # the toolkit builds the library.
        staging = tempfile.mkdtemp(prefix="croq-")
        _write_module(staging, json.loads(result["signatures"]), result["ptx"],
                      result["mlir"], result["header"], library_error)
        return load(staging)
    os.makedirs(cache_dir(), exist_ok=True)
    staging = tempfile.mkdtemp(prefix=key[:8] + "-", dir=cache_dir())
    try:
        library_error = _croq.build_library(
            result["host"], os.path.join(staging, "libkernels.so"), runtime,
            toolkit)
        _write_module(staging, json.loads(result["signatures"]), result["ptx"],
                      result["mlir"], result["header"], library_error or None)
        if library_error:
            # Not cached either: the module knows why it cannot run.
            temporary = tempfile.mkdtemp(prefix="croq-")
            os.rmdir(temporary)
            os.replace(staging, temporary)
            return load(temporary)
        try:
            # Atomic: a process compiling the same source at once either
            # finds this directory or leaves its own in place.
            os.rename(staging, cached)
        except OSError:
            if not os.path.isfile(os.path.join(cached, "croq-module.json")):
                raise
            shutil.rmtree(staging, ignore_errors=True)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    module = load(cached)
    _memo[key] = module
    return module
