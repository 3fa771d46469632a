//===- CroqToGPU.h - croq to gpu / nvgpu conversion -------------*- C++ -*-===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#ifndef CROQ_CONVERSION_CROQTOGPU_CROQTOGPU_H
#define CROQ_CONVERSION_CROQTOGPU_CROQTOGPU_H

#include "mlir/Support/LLVM.h"

#include <memory>

namespace mlir {
class ModuleOp;
class RewritePatternSet;
class TypeConverter;

namespace croq {

/// What the conversion needs to know about where each croq op runs: the
/// cooperating thread group and the block size of its kernel. Computed once
/// from the croq.parallel nesting before any op is rewritten.
class LaunchAnalysis;

/// Deletes a LaunchAnalysis where its type is complete, so that code that
/// sees only this header can own one.
struct LaunchAnalysisDeleter {
  void operator()(LaunchAnalysis *analysis) const;
};
using LaunchAnalysisPtr = std::unique_ptr<LaunchAnalysis, LaunchAnalysisDeleter>;

/// Builds the analysis for every kernel in `module`; reports (and returns
/// null) when a level chain has no consistent block shape.
LaunchAnalysisPtr analyzeLaunches(ModuleOp module);

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
