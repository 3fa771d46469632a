//===- Passes.h - croq conversion passes ------------------------*- C++ -*-===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#ifndef CROQ_CONVERSION_PASSES_H
#define CROQ_CONVERSION_PASSES_H

#include "Croq/Conversion/CroqToGPU/CroqToGPU.h"
#include "mlir/Pass/Pass.h"

namespace mlir::croq {

#define GEN_PASS_DECL
#define GEN_PASS_REGISTRATION
#include "Croq/Conversion/Passes.h.inc"

} // namespace mlir::croq

#endif // CROQ_CONVERSION_PASSES_H
