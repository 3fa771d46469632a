//===- Passes.h - croq dialect passes ---------------------------*- C++ -*-===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#ifndef CROQ_DIALECT_CROQ_TRANSFORMS_PASSES_H
#define CROQ_DIALECT_CROQ_TRANSFORMS_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir::croq {

#define GEN_PASS_DECL
#define GEN_PASS_REGISTRATION
#include "Croq/Dialect/Croq/Transforms/Passes.h.inc"

} // namespace mlir::croq

#endif // CROQ_DIALECT_CROQ_TRANSFORMS_PASSES_H
