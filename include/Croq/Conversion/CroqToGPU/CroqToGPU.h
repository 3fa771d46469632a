//===- CroqToGPU.h - croq to gpu / nvgpu conversion -------------*- C++ -*-===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#ifndef CROQ_CONVERSION_CROQTOGPU_CROQTOGPU_H
#define CROQ_CONVERSION_CROQTOGPU_CROQTOGPU_H

#include "Croq/Analysis/LaunchAnalysis.h"
#include "mlir/Support/LLVM.h"

namespace mlir {
class RewritePatternSet;
class TypeConverter;

namespace croq {

/// Maps croq types to what they lower to: a future to its data, a warp
/// fragment to the register vectors of nvgpu.mma.sync, a warpgroup
/// accumulator to the wgmma register struct and a warpgroup operand to its
/// shared-memory descriptor (i64), an event to an mbarrier group, a stream
/// to !gpu.async.token.
void populateCroqToGPUTypeConversions(TypeConverter &converter);

/// Patterns lowering croq ops to gpu / scf / memref / vector / nvgpu / nvvm.
/// `analysis` must outlive the patterns.
void populateCroqToGPUConversionPatterns(TypeConverter &converter,
                                         RewritePatternSet &patterns,
                                         const LaunchAnalysis &analysis);

} // namespace croq
} // namespace mlir

#endif // CROQ_CONVERSION_CROQTOGPU_CROQTOGPU_H
