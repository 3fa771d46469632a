//===- Importer.h - Croqtile source to croq IR ------------------*- C++ -*-===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#ifndef CROQ_FRONTEND_CROQTILE_IMPORTER_H
#define CROQ_FRONTEND_CROQTILE_IMPORTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <string>
#include <vector>

namespace llvm {
class SourceMgr;
} // namespace llvm

namespace mlir::croq {

struct CroqtileImportOptions {
  /// `NAME` or `NAME=VALUE`, as `-D`.
  std::vector<std::string> defines;
  /// `#include` search directories, as `-I`.
  std::vector<std::string> includeDirs;
  /// Registers per thread of every kernel without its own `[[maxnreg(N)]]`
  /// (nvcc's -maxrregcount); 0 leaves the choice to croq. Outside 24 to
  /// 256 it is an error.
  unsigned maxRegisters = 0;
};

/// Preprocesses, parses and checks the main buffer of `sourceMgr` as
/// Croqtile and builds a module of croq and upstream ops, one func.func per
/// `__co__` function. Diagnostics go to the context's handler with
/// `file:line:col` locations (a SourceMgrDiagnosticHandler on `sourceMgr`
/// shows the source line and a caret); the result is null after an error.
OwningOpRef<ModuleOp> importCroqtile(llvm::SourceMgr &sourceMgr,
                                     MLIRContext *context,
                                     const CroqtileImportOptions &options);

/// `type` as a Croqtile program writes it, for messages to its author:
/// `shared f16 [64, 64]` for a memref, `f8_e4m3` for Float8E4M3FN, `frag
/// f32 [64, 64] (acc, held by a warpgroup)`; other types as MLIR prints
/// them.
std::string spellCroqtileType(Type type);

/// Registers `--import-croqtile` (with `-D` and `-I`) for croq-translate.
void registerCroqtileImport();

} // namespace mlir::croq

#endif // CROQ_FRONTEND_CROQTILE_IMPORTER_H
