//===- IRGen.h - Croqtile syntax tree to croq IR ----------------*- C++ -*-===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#ifndef CROQ_LIB_FRONTEND_CROQTILE_IRGEN_H
#define CROQ_LIB_FRONTEND_CROQTILE_IRGEN_H

#include "AST.h"
#include "Sema.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/SourceMgr.h"

namespace mlir::croq::croqtile {

/// Builds the module for `program`, which Sema analyzed into `sema`, or
/// reports errors and returns null.
OwningOpRef<ModuleOp> generateIR(MLIRContext *context,
                                 llvm::SourceMgr &sourceMgr,
                                 const Program &program,
                                 const SemaResult &sema);

} // namespace mlir::croq::croqtile

#endif // CROQ_LIB_FRONTEND_CROQTILE_IRGEN_H
