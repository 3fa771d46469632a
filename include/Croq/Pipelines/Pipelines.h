//===- Pipelines.h - croq pass pipelines ------------------------*- C++ -*-===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#ifndef CROQ_PIPELINES_PIPELINES_H
#define CROQ_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassOptions.h"

namespace mlir {
class OpPassManager;

namespace croq {

/// LLVM's clang++ (croq-link-device-code; see CroqToGPU.h).
std::string getDefaultClangPath();

struct CroqPrepareGPUPipelineOptions
    : public PassPipelineOptions<CroqPrepareGPUPipelineOptions> {
  PassOptions::Option<std::string> chip{
      *this, "chip", llvm::cl::desc("Target GPU, e.g. sm_90a or sm_80"),
      llvm::cl::init("sm_90a")};
  PassOptions::Option<unsigned> mmaDeferMinSlots{
      *this, "mma-defer-min-slots",
      llvm::cl::desc("croq-pipeline-mma's defer-min-slots: consumer rings "
                     "of fewer slots wait for each wgmma batch before "
                     "releasing its stages"),
      llvm::cl::init(4)};
};

/// The preparation passes, in order: croq-bind-tma-futures,
/// croq-warp-specialize (sm_90a),
/// croq-insert-barriers, croq-plan-shared-layout, croq-pipeline-mma,
/// croq-materialize-tma, croq-assign-arrivals, croq-assign-phases and
/// croq-elect-issuers (elect.sync from sm_90). After them,
/// convert-croq-to-gpu (or the populateCroqToGPU* patterns) can lower.
void buildCroqPrepareGPUPipeline(OpPassManager &pm,
                                 const CroqPrepareGPUPipelineOptions &options);

struct CroqToNVVMPipelineOptions
    : public PassPipelineOptions<CroqToNVVMPipelineOptions> {
  PassOptions::Option<std::string> chip{
      *this, "chip", llvm::cl::desc("Target GPU, e.g. sm_90a or sm_80"),
      llvm::cl::init("sm_90a")};
  PassOptions::Option<std::string> features{
      *this, "features", llvm::cl::desc("PTX features, e.g. +ptx84"),
      llvm::cl::init("+ptx84")};
  PassOptions::Option<int> optLevel{
      *this, "opt-level", llvm::cl::desc("NVVM optimisation level"),
      llvm::cl::init(3)};
  PassOptions::Option<unsigned> mmaDeferMinSlots{
      *this, "mma-defer-min-slots",
      llvm::cl::desc("croq-pipeline-mma's defer-min-slots: consumer rings "
                     "of fewer slots wait for each wgmma batch before "
                     "releasing its stages"),
      llvm::cl::init(4)};
  PassOptions::Option<bool> fastMath{
      *this, "fast-math",
      llvm::cl::desc("Approximate f32 division and square roots and flush "
                     "f32 denormals to zero (the NVVM target's fast and ftz "
                     "flags; nvcc's --use_fast_math)"),
      llvm::cl::init(false)};
  PassOptions::Option<std::string> format{
      *this, "format",
      llvm::cl::desc("What gpu-module-to-binary produces: isa (PTX text), "
                     "bin (cubin, through ptxas) or none (stop at NVVM)"),
      llvm::cl::init("isa")};
  PassOptions::Option<std::string> toolkit{
      *this, "toolkit", llvm::cl::desc("CUDA toolkit path, for ptxas"),
      llvm::cl::init("/usr/local/cuda")};
  PassOptions::Option<std::string> clang{
      *this, "clang",
      llvm::cl::desc("clang++ that compiles the C++ device functions kernels "
                     "call (croq-link-device-code)"),
      llvm::cl::init(getDefaultClangPath())};
};

/// croq IR -> gpu / nvgpu -> outlined kernels in NVVM -> gpu.binary (PTX or
/// cubin), leaving the host functions with gpu.launch_func ops.
void buildCroqToNVVMPipeline(OpPassManager &pm,
                             const CroqToNVVMPipelineOptions &options);

/// What croq-to-nvvm runs after convert-croq-to-gpu: the merge of the
/// barriers after event initialisations, the divergence check,
/// kernel outlining, the NVVM lowering of the kernels and their
/// serialization. An embedder that converts croq IR with its own conversion
/// target runs this next.
void buildCroqGPUToNVVMPipeline(OpPassManager &pm,
                                const CroqToNVVMPipelineOptions &options);

/// Registers `croq-prepare-gpu` and `croq-to-nvvm` with the global pass
/// registry.
void registerCroqToNVVMPipeline();

} // namespace croq
} // namespace mlir

#endif // CROQ_PIPELINES_PIPELINES_H
