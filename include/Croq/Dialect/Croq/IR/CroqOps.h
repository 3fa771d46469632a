//===- CroqOps.h - croq operations ------------------------------*- C++ -*-===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#ifndef CROQ_DIALECT_CROQ_IR_CROQOPS_H
#define CROQ_DIALECT_CROQ_IR_CROQOPS_H

#include "Croq/Dialect/Croq/IR/CroqDialect.h"
#include "Croq/Dialect/Croq/IR/CroqTypes.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <optional>

#include "Croq/Dialect/Croq/IR/CroqInterfaces.h.inc"

namespace mlir {
class DialectRegistry;
namespace croq {
/// Attaches CollectiveOpInterface to the upstream gpu, nvgpu and nvvm ops
/// that threads execute together.
void registerCollectiveOpInterfaceExternalModels(DialectRegistry &registry);

/// The C++ type a `croq.call` passes for `type` (an element type, or a
/// scalar passed by value), as croq's device prelude names it: `f32`,
/// `s32`, `f16`... Empty for a type a call cannot pass (8-bit floats by
/// value).
StringRef getDeviceCallTypeName(Type type, bool byValue);
} // namespace croq
} // namespace mlir

#define GET_OP_CLASSES
#include "Croq/Dialect/Croq/IR/CroqOps.h.inc"

#endif // CROQ_DIALECT_CROQ_IR_CROQOPS_H
