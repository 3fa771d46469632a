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

#include <string>

namespace mlir {
class DialectRegistry;
class ConversionTarget;
class RewritePatternSet;
class TypeConverter;

namespace croq {

/// Maps croq types to what they lower to: a future to its data, a warp
/// fragment to the register vectors of nvgpu.mma.sync, a warpgroup
/// accumulator to the wgmma register struct and a warpgroup operand to its
/// shared-memory descriptor (i64), an event to an mbarrier group, a stream
/// to !gpu.async.token.
void populateCroqToGPUTypeConversions(TypeConverter &converter);

/// Makes the croq dialect illegal in `target`, and with it what the patterns
/// rewrite outside it: local `memref.alloc`s, and `func.func`, `func.return`,
/// `func.call` and `arith.select` ops that carry croq types (`converter`
/// must outlive `target`). The embedder declares what is legal besides.
void configureCroqToGPUConversionLegality(ConversionTarget &target,
                                          const TypeConverter &converter);

/// The pattern sets, by what they lower (each needs the type conversions of
/// populateCroqToGPUTypeConversions; `analysis` must outlive the patterns):
/// - levels: host-level block parallels to gpu.launch, nested parallels to
///   thread-id arithmetic, croq.inthreads to scf.if, croq.warp_specialize to
///   one dispatch with setmaxnreg (nvvm), barriers, streams;
void populateCroqToGPULevelPatterns(TypeConverter &converter,
                                    RewritePatternSet &patterns,
                                    const LaunchAnalysis &analysis);
/// - copies: views to memref.subview, dma.copy to cooperative loops or
///   cp.async (nvgpu), futures to their data, local buffers to allocas;
void populateCroqToGPUCopyPatterns(TypeConverter &converter,
                                   RewritePatternSet &patterns,
                                   const LaunchAnalysis &analysis);
/// - events: mbarrier groups (nvgpu); needs arrival counts
///   (croq-assign-arrivals), wait parities (croq-assign-phases) and the
///   issuers of expect_tx triggers (croq-elect-issuers);
void populateCroqToGPUEventPatterns(TypeConverter &converter,
                                    RewritePatternSet &patterns,
                                    const LaunchAnalysis &analysis);
/// - MMA: warp fragments to nvgpu.mma.sync, warpgroup ones to wgmma over
///   croq's descriptors (nvvm); needs the wgmma layout of their buffers
///   (croq-plan-shared-layout) and their commits (croq-pipeline-mma);
void populateCroqToGPUMmaPatterns(TypeConverter &converter,
                                  RewritePatternSet &patterns,
                                  const LaunchAnalysis &analysis);
/// - TMA: copies to nvgpu.tma.async.load / store; needs tensor maps
///   (croq-materialize-tma) and issuers (croq-elect-issuers).
void populateCroqToGPUTmaPatterns(TypeConverter &converter,
                                  RewritePatternSet &patterns,
                                  const LaunchAnalysis &analysis);

/// Upstream's structural type conversions of func (signatures, returns,
/// calls) and scf with `converter`, and their legality in `target`: the
/// croq patterns retype futures, events and fragments that flow through
/// them.
void populateCroqToGPUStructuralConversions(TypeConverter &converter,
                                            RewritePatternSet &patterns,
                                            ConversionTarget &target);

/// All of the above: croq ops to gpu / scf / memref / vector / nvgpu / nvvm.
/// `analysis` must outlive the patterns.
///
/// Preconditions: the decisions of the preparation passes are IR (run the
/// croq-prepare-gpu pipeline, i.e. buildCroqPrepareGPUPipeline): swizzles of
/// wgmma buffers (croq-plan-shared-layout), wgmma commits
/// (croq-pipeline-mma), tensor maps and expect_tx (croq-materialize-tma),
/// arrival counts (croq-assign-arrivals), wait parities
/// (croq-assign-phases) and issuers and store elections
/// (croq-elect-issuers). A pattern that meets an op without its decision
/// fails at the op with the name of the pass to run. Add the upstream
/// structural conversions for func and scf with the same converter (see
/// convert-croq-to-gpu).
void populateCroqToGPUConversionPatterns(TypeConverter &converter,
                                         RewritePatternSet &patterns,
                                         const LaunchAnalysis &analysis);

/// The clang++ croq-link-device-code runs unless told otherwise: LLVM's,
/// from the installation croq was built against.
std::string getDefaultClangPath();

/// Attaches to the croq dialect its ConvertToLLVMPatternInterface, which
/// lowers `croq.call` in the kernels' conversion to LLVM
/// (convert-gpu-to-nvvm, convert-to-llvm).
void registerConvertCroqToLLVMInterface(DialectRegistry &registry);

} // namespace croq
} // namespace mlir

#endif // CROQ_CONVERSION_CROQTOGPU_CROQTOGPU_H
