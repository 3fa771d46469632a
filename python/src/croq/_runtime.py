"""Calling croq's host entry points from Python, with ctypes.

Nothing here needs LLVM, MLIR or the CUDA toolkit: a Module is a
directory with the kernels' host library (the C++ host code croq emits,
built with croq's runtime, the kernels' cubins inside) and croq-module.json,
the entry points' parameters. Only calling needs the CUDA driver.
"""

import ctypes
import json
import os
import shutil
import sys

_META = "croq-module.json"
_LIBRARY = "libkernels.so"


class CompileError(Exception):
    """croq rejected the program; the message holds its diagnostics."""


class CroqError(RuntimeError):
    """A kernel could not be called or failed."""


# dtype name -> (typestr of __cuda_array_interface__, bytes)
_TYPESTR = {
    "float16": ("<f2", 2), "float32": ("<f4", 4), "float64": ("<f8", 8),
    "int8": ("|i1", 1), "int16": ("<i2", 2), "int32": ("<i4", 4),
    "int64": ("<i8", 8), "uint8": ("|u1", 1), "uint16": ("<u2", 2),
    "uint32": ("<u4", 4), "uint64": ("<u8", 8), "bool": ("|b1", 1),
    "bfloat16": (None, 2), "float8_e4m3fn": (None, 1), "float8_e5m2": (None, 1),
}
_FROM_TYPESTR = {v[0]: k for k, v in _TYPESTR.items() if v[0]}

_CTYPES = {
    "int64_t": ctypes.c_int64, "int32_t": ctypes.c_int32,
    "int16_t": ctypes.c_int16, "int8_t": ctypes.c_int8,
    "uint64_t": ctypes.c_uint64, "uint32_t": ctypes.c_uint32,
    "uint16_t": ctypes.c_uint16, "uint8_t": ctypes.c_uint8,
    "float": ctypes.c_float, "double": ctypes.c_double, "bool": ctypes.c_bool,
    "CUstream": ctypes.c_void_p, "void *": ctypes.c_void_p,
}


def _same_integer_bits(got, want):
    """True for 16-, 32- and 64-bit integers that differ only in sign: torch
    has no arithmetic on uint16/32/64 tensors, so unsigned data is held in
    the signed type of its width and the kernel reads its bits."""
    widths = {"int16": 16, "uint16": 16, "int32": 32, "uint32": 32,
              "int64": 64, "uint64": 64}
    return got in widths and widths.get(want) == widths[got]


def _torch():
    return sys.modules.get("torch")


def _torch_dtype_name(dtype):
    return str(dtype).replace("torch.", "")


def _tensor_view(obj, where):
    """(pointer, shape, contiguous, dtype name, torch device or None)."""
    torch = _torch()
    if torch is not None and isinstance(obj, torch.Tensor):
        if obj.device.type != "cuda":
            raise TypeError(f"{where} is a tensor on {obj.device}; croq kernels "
                            "take CUDA tensors (move it with .cuda())")
        return (obj.data_ptr(), tuple(obj.shape), obj.is_contiguous(),
                _torch_dtype_name(obj.dtype), obj.device)
    cai = getattr(obj, "__cuda_array_interface__", None)
    if cai is not None:
        shape = tuple(int(d) for d in cai["shape"])
        dtype = _FROM_TYPESTR.get(cai["typestr"])
        if dtype is None:
            raise TypeError(f"{where} has elements of type {cai['typestr']!r}, "
                            "which croq has no name for")
        itemsize = _TYPESTR[dtype][1]
        strides = cai.get("strides")
        contiguous = True
        if strides is not None:
            expected, step = [], itemsize
            for d in reversed(shape):
                expected.insert(0, step)
                step *= d
            contiguous = all(s == e for s, e, d in zip(strides, expected, shape)
                             if d > 1)
        return int(cai["data"][0]), shape, contiguous, dtype, None
    if hasattr(obj, "__dlpack__"):
        if torch is None:
            raise TypeError(f"{where} is a DLPack tensor; croq reads DLPack "
                            "through torch, which is not imported")
        return _tensor_view(torch.from_dlpack(obj), where)
    raise TypeError(f"{where} must be a CUDA tensor (torch, an object with "
                    f"__cuda_array_interface__ or __dlpack__), got "
                    f"{type(obj).__name__}")


class Function:
    """One `__co__` function: call it with tensors and scalars, in the
    order of its parameters. It returns its scalar results (None, one value
    or a tuple).

    A call queues its kernels on torch's current stream and returns, as
    torch's operators do: a kernel's fault surfaces at the next
    synchronization. `sync=True` waits for the kernels and raises CroqError
    for a fault."""

    def __init__(self, module, signature):
        self._module = module
        self.name = signature["name"]
        self.params = signature["params"]
        self.results = signature["results"]
        self._entry = None

    def __repr__(self):
        args = ", ".join(p.get("source_name", p["name"]) for p in self.params)
        return f"<croq function {self.name}({args})>"

    def _bind(self):
        if self._entry is None:
            lib = self._module._library()
            entry = getattr(lib, self.name)
            entry.restype = ctypes.c_int
            self._entry = entry
        return self._entry

    def __call__(self, *args, sync=False):
        if len(args) != len(self.params):
            names = ", ".join(p.get("source_name", p["name"]) for p in self.params)
            raise TypeError(f"{self.name}() takes {len(self.params)} arguments "
                            f"({names}), got {len(args)}")
        cargs, keep, device, streams = [], [], None, []
        for param, value in zip(self.params, args):
            where = f"{self.name}: argument '{param.get('source_name', param['name'])}'"
            if param["kind"] == "tensor":
                ptr, shape, contiguous, dtype, dev = _tensor_view(value, where)
                want = param["shape"]
                if dtype != param["dtype"] and not _same_integer_bits(
                        dtype, param["dtype"]):
                    raise TypeError(f"{where} has dtype {dtype}; the kernel "
                                    f"takes {param['dtype']}")
                if len(shape) != len(want):
                    raise ValueError(f"{where} has {len(shape)} dimensions "
                                     f"{list(shape)}; the kernel takes "
                                     f"{len(want)}")
                for d, (got, need) in enumerate(zip(shape, want)):
                    if need >= 0 and got != need:
                        raise ValueError(f"{where}: dimension {d} is {got}, "
                                         f"the kernel takes {need}")
                if not contiguous:
                    raise ValueError(f"{where} is not contiguous (row-major); "
                                     "pass .contiguous()")
                if dev is not None:
                    if device is not None and dev != device:
                        raise ValueError(f"{where} is on {dev}, another "
                                         f"argument on {device}")
                    device = dev
                cargs.append(ctypes.c_void_p(ptr))
                cargs.extend(ctypes.c_int64(d) for d in shape)
                keep.append(value)
            elif param["kind"] == "stream":
                streams.append((len(cargs), value, where))
                cargs.append(None)
            else:
                cargs.append(_scalar(param["ctype"], value, where))
        # Streams after the tensors: None is the tensors' device's current
        # torch stream.
        for index, value, where in streams:
            cargs[index] = ctypes.c_void_p(_stream_handle(value, device, where))
        outs = [_CTYPES[r]() for r in self.results]
        cargs.extend(ctypes.byref(o) for o in outs)
        entry = self._bind()
        lib = self._module._library()
        lib.croq_rt_set_default_stream(ctypes.c_void_p(self._stream(device)))
        synchronous = lib.croq_rt_set_synchronous(1 if sync else 0)
        try:
            rc = entry(*cargs)
        finally:
            lib.croq_rt_set_synchronous(synchronous)
            lib.croq_rt_set_default_stream(None)
        if rc != 0:
            message = lib.croq_rt_last_error().decode(errors="replace")
            raise CroqError(message or f"{self.name} failed with CUresult {rc}")
        values = [o.value for o in outs]
        return None if not values else values[0] if len(values) == 1 else tuple(values)

    @staticmethod
    def _stream(device):
        """The current torch stream of `device` (None: the default)."""
        torch = _torch()
        if torch is None or not torch.cuda.is_available():
            return None
        stream = torch.cuda.current_stream(device)
        return stream.cuda_stream or None


def _scalar(ctype_name, value, where):
    """`value` as the C scalar `ctype_name`, range-checked."""
    ctype = _CTYPES.get(ctype_name)
    if ctype is None:
        raise CroqError(f"{where}: no Python type for C type {ctype_name}")
    if ctype_name in ("float", "double"):
        return ctype(float(value))
    if ctype_name == "bool":
        return ctype(bool(value))
    number = int(value)
    bits = ctypes.sizeof(ctype) * 8
    unsigned = ctype_name.startswith("uint")
    low, high = (0, 2**bits - 1) if unsigned else (-2**(bits - 1), 2**(bits - 1) - 1)
    if not low <= number <= high:
        raise OverflowError(f"{where} is {number}, outside {ctype_name} "
                            f"[{low}, {high}]")
    return ctype(number)


def _stream_handle(value, device, where):
    """A CUstream for a stream parameter: a torch Stream, a raw handle, or
    None for the current torch stream."""
    if value is None:
        return Function._stream(device)
    handle = getattr(value, "cuda_stream", value)
    if not isinstance(handle, int):
        raise TypeError(f"{where} must be a torch.cuda.Stream, a CUstream "
                        f"handle (int) or None, got {type(value).__name__}")
    return handle or None


class Module:
    """Compiled kernels: `.ptx`, `.mlir`, `.header`, and one Function per
    `__co__` function, as an attribute and in `.functions`."""

    def __init__(self, path, meta):
        self.path = path
        self._meta = meta
        self._lib = None
        self.functions = {}
        for signature in meta["functions"]:
            function = Function(self, signature)
            self.functions[function.name] = function

    def __getattr__(self, name):
        # Only for names that are not the module's own attributes: a
        # function called `path` is m.functions["path"].
        functions = self.__dict__.get("functions", {})
        if name in functions:
            return functions[name]
        raise AttributeError(f"croq module has no function or attribute "
                             f"{name!r}")

    def _text(self, name):
        path = os.path.join(self.path, name)
        if not os.path.isfile(path):
            return None
        with open(path) as f:
            return f.read()

    @property
    def ptx(self):
        return self._text("kernels.ptx")

    @property
    def mlir(self):
        return self._text("kernels.mlir")

    @property
    def header(self):
        return self._text("kernels.h")

    def __repr__(self):
        return f"<croq module {sorted(self.functions)} at {self.path}>"

    def _library(self):
        if self._lib is not None:
            return self._lib
        error = self._meta.get("library_error")
        if error:
            raise CroqError("the kernels compiled, but their host library "
                            f"could not be built: {error}")
        path = os.path.join(self.path, _LIBRARY)
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            if "libcuda" in str(e):
                raise CroqError("calling croq kernels needs the NVIDIA driver "
                                "(libcuda.so.1), which is not installed here; "
                                "compiling works without it") from None
            raise CroqError(f"cannot load {path}: {e}") from None
        lib.croq_rt_last_error.restype = ctypes.c_char_p
        lib.croq_rt_set_default_stream.argtypes = [ctypes.c_void_p]
        lib.croq_rt_set_default_stream.restype = None
        lib.croq_rt_set_synchronous.argtypes = [ctypes.c_int]
        lib.croq_rt_set_synchronous.restype = ctypes.c_int
        self._lib = lib
        return lib

    def save(self, path):
        """Writes what the kernels need to `path` (a directory), for
        croq.load on a machine with only the CUDA driver."""
        os.makedirs(path, exist_ok=True)
        for name in os.listdir(self.path):
            shutil.copy2(os.path.join(self.path, name), os.path.join(path, name))
        return path


def _write_module(path, signatures, ptx, mlir, header, library_error):
    meta = dict(signatures)
    meta["format"] = 1
    if library_error:
        meta["library_error"] = library_error
    for name, text in (("kernels.ptx", ptx), ("kernels.mlir", mlir),
                       ("kernels.h", header)):
        with open(os.path.join(path, name), "w") as f:
            f.write(text)
    with open(os.path.join(path, _META), "w") as f:
        json.dump(meta, f, indent=1)


def load(path):
    """The Module saved at `path` (by Module.save, or croq's cache)."""
    meta_path = os.path.join(path, _META)
    if not os.path.isfile(meta_path):
        raise FileNotFoundError(f"croq.load: {path} holds no saved croq module "
                                f"({_META} is missing)")
    with open(meta_path) as f:
        meta = json.load(f)
    return Module(os.path.abspath(path), meta)
