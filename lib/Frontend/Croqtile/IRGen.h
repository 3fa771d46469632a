//===- IRGen.h - Croqtile syntax tree to croq IR ----------------*- C++ -*-===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#ifndef CROQ_LIB_FRONTEND_CROQTILE_IRGEN_H
#define CROQ_LIB_FRONTEND_CROQTILE_IRGEN_H

#include "AST.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/SourceMgr.h"

namespace mlir::croq::croqtile {

/// What a first IRGen run learns about values whose type depends on later
/// statements: fragment shapes and roles, and placeholder futures' types.
struct Inference {
  llvm::DenseMap<const Stmt *, Type> fillTypes;
  llvm::DenseMap<const Stmt *, int> loadRoles;
  llvm::DenseMap<const Stmt *, Type> anyTypes;
  /// The future a placeholder is swapped with; its buffer gives the
  /// placeholder's run-time extents.
  llvm::DenseMap<const Stmt *, std::string> anyPartners;
  /// The inference pass failed somewhere: what it could not learn past
  /// that point is not an error of its own.
  bool incomplete = false;
};

/// Builds the module for `program`, or reports errors and returns null.
OwningOpRef<ModuleOp> generateIR(MLIRContext *context,
                                 llvm::SourceMgr &sourceMgr,
                                 const Program &program);

} // namespace mlir::croq::croqtile

#endif // CROQ_LIB_FRONTEND_CROQTILE_IRGEN_H
