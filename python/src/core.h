//===- core.h - what the Python extension asks of croq -----------*- C++ -*-===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//
//
// Plain C++ types only: the extension is compiled with RTTI, croq and MLIR
// without, so no MLIR class crosses this header.
//
//===----------------------------------------------------------------------===//

#ifndef CROQ_PYTHON_CORE_H
#define CROQ_PYTHON_CORE_H

#include <string>
#include <vector>

namespace croq_python {

struct CompileRequest {
  std::string source;
  /// The name diagnostics give the source (its path, or "<string>").
  std::string filename;
  bool isMlir = false;
  std::vector<std::string> defines;
  std::vector<std::string> includeDirs;
  std::string arch = "sm_90a";
  std::string toolkit;
  /// croqc's --fast-math and --maxnreg (0: croq chooses).
  bool fastMath = false;
  unsigned maxRegisters = 0;
};

struct CompileResult {
  bool ok = false;
  /// Every diagnostic, with its location and source line.
  std::string diagnostics;
  /// The croq IR the importer built, the PTX of all kernels, the C++ host
  /// code with their cubins, its C header, and the entry points as JSON.
  std::string mlir, ptx, host, header, signatures;
  /// Why there is no host code (cubins need the toolkit's ptxas), or empty.
  std::string libraryError;
};

CompileResult compile(const CompileRequest &request);

/// Builds `host` with the runtime at `runtimeDir` into `output`; an empty
/// string, or what went wrong.
std::string buildLibrary(const std::string &host, const std::string &output,
                         const std::string &runtimeDir,
                         const std::string &toolkit);

} // namespace croq_python

#endif // CROQ_PYTHON_CORE_H
