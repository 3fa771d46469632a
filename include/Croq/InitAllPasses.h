//===- InitAllPasses.h - croq pass registration -----------------*- C++ -*-===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#ifndef CROQ_INITALLPASSES_H
#define CROQ_INITALLPASSES_H

namespace mlir::croq {

/// Registers croq's passes (conversions included) with the global registry.
void registerCroqPasses();

/// Registers croq's named pipelines (`croq-to-nvvm`).
void registerCroqPipelines();

} // namespace mlir::croq

#endif // CROQ_INITALLPASSES_H
