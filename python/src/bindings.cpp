//===- bindings.cpp - the croq Python extension ---------------------------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#include "core.h"

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

namespace nb = nanobind;

NB_MODULE(_croq, m) {
  m.doc() = "croq's compiler, for croq.compile (no GPU needed)";
  m.def(
      "compile",
      [](const std::string &source, const std::string &filename, bool isMlir,
         const std::vector<std::string> &defines,
         const std::vector<std::string> &includeDirs, const std::string &arch,
         const std::string &toolkit, bool fastMath, unsigned maxRegisters) {
        croq_python::CompileRequest request;
        request.source = source;
        request.filename = filename;
        request.isMlir = isMlir;
        request.defines = defines;
        request.includeDirs = includeDirs;
        request.arch = arch;
        request.toolkit = toolkit;
        request.fastMath = fastMath;
        request.maxRegisters = maxRegisters;
        croq_python::CompileResult result;
        {
          // Compiling runs no Python code: other threads may run.
          nb::gil_scoped_release release;
          result = croq_python::compile(request);
        }
        nb::dict out;
        out["ok"] = result.ok;
        out["diagnostics"] = result.diagnostics;
        out["mlir"] = result.mlir;
        out["ptx"] = result.ptx;
        out["host"] = result.host;
        out["header"] = result.header;
        out["signatures"] = result.signatures;
        out["library_error"] = result.libraryError;
        return out;
      },
      nb::arg("source"), nb::arg("filename"), nb::arg("is_mlir"),
      nb::arg("defines"), nb::arg("include_dirs"), nb::arg("arch"),
      nb::arg("toolkit"), nb::arg("fast_math") = false,
      nb::arg("max_registers") = 0u);
  m.def(
      "build_library",
      [](const std::string &host, const std::string &output,
         const std::string &runtimeDir, const std::string &toolkit) {
        nb::gil_scoped_release release;
        return croq_python::buildLibrary(host, output, runtimeDir, toolkit);
      },
      nb::arg("host"), nb::arg("output"), nb::arg("runtime_dir"),
      nb::arg("toolkit"));
}
