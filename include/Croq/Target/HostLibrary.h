//===- HostLibrary.h - host code to a shared library ------------*- C++ -*-===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//
//
// Builds the host code of emitHostCode, with the croq runtime, into a shared
// library, as croqc and the Python package do: the CUDA toolkit, the runtime
// sources and a compiler are found (or given), and each missing piece is
// reported with what to pass.
//
//===----------------------------------------------------------------------===//

#ifndef CROQ_TARGET_HOSTLIBRARY_H
#define CROQ_TARGET_HOSTLIBRARY_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace mlir::croq {

struct HostLibraryOptions {
  /// The CUDA toolkit; empty: $CUDA_PATH, $CUDA_HOME, /usr/local/cuda.
  std::string toolkit;
  /// The runtime sources (include/croq_runtime.h, lib/croq_runtime.cpp);
  /// empty: those installed beside `executable` (share/croq/runtime) or of
  /// the source tree croq was built from.
  std::string runtimeDir;
  /// nvcc or a C++ compiler; empty: the toolkit's nvcc, else clang++, c++
  /// or g++ on PATH.
  std::string compiler;
  /// A path of the running program, to find an installed runtime from.
  std::string executable;
  /// Print the commands run; keep the generated source.
  bool verbose = false;
  bool keepTemps = false;
};

/// The CUDA toolkit directory `requested` names, else the environment's or
/// the default one.
std::string findCudaToolkit(StringRef requested = "");

/// Compiles `hostCode` and the runtime into the shared library `output`.
/// On failure `error` says what went wrong and what to pass.
LogicalResult buildHostLibrary(StringRef hostCode, StringRef output,
                               const HostLibraryOptions &options,
                               std::string &error);

} // namespace mlir::croq

#endif // CROQ_TARGET_HOSTLIBRARY_H
