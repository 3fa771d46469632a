//===- CroqToNVVMPipeline.cpp - croq to NVVM and PTX ----------------------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#include "Croq/Conversion/Passes.h"
#include "Croq/Dialect/Croq/Transforms/Passes.h"
#include "Croq/Pipelines/Pipelines.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;

/// The most shared memory one block may use on sm_<sm>, opt-in included.
static int64_t sharedMemoryPerBlock(unsigned sm) {
  if (sm >= 90)
    return 227 * 1024;
  if (sm == 80 || sm == 87)
    return 163 * 1024;
  if (sm >= 86)
    return 99 * 1024;
  if (sm >= 75)
    return 64 * 1024;
  return 48 * 1024;
}

/// sm_<N> with N >= 90 (elect.sync); with `a` also setmaxnreg and wgmma.
static std::pair<bool, bool> hopperFeatures(StringRef chip) {
  unsigned sm = 0;
  bool hopper = chip.consume_front("sm_") &&
                !chip.take_while(llvm::isDigit).getAsInteger(10, sm) &&
                sm >= 90;
  return {hopper, hopper && chip.ends_with("a")};
}

void mlir::croq::buildCroqPrepareGPUPipeline(
    OpPassManager &pm, const CroqPrepareGPUPipelineOptions &options) {
  auto [hopper, archSpecific] = hopperFeatures(options.chip.getValue());
  // Waits on TMA futures become waits on events their copies complete.
  pm.addPass(createCroqBindTmaFuturesPass());
  // A loop's block-scaled MMAs scale their sum once, after the loop.
  pm.addPass(createCroqFoldMmaScalesPass());
  // Roles get register budgets where setmaxnreg exists.
  if (archSpecific)
    pm.addPass(createCroqWarpSpecializePass());
  // Every shared-memory hazard gets its barrier, at a uniform point.
  pm.addPass(createCroqInsertBarriersPass());
  // Shared buffers that wgmma reads are stored in its swizzled layout.
  pm.addPass(createCroqPlanSharedLayoutPass());
  // wgmma batches stay in flight one K iteration; triggers after MMAs
  // commit and wait for them first.
  CroqPipelineMmaPassOptions mma;
  mma.deferMinSlots = options.mmaDeferMinSlots;
  pm.addPass(createCroqPipelineMmaPass(mma));
  // TMA copies name their host-built tensor maps; triggers the bytes.
  pm.addPass(createCroqMaterializeTmaPass());
  // Arrival counts and the phase parity each wait is owed.
  pm.addPass(createCroqAssignArrivalsPass());
  pm.addPass(createCroqAssignPhasesPass());
  // One thread acts for its group where only one may (elect.sync where the
  // warp is converged, from sm_90 on).
  CroqElectIssuersPassOptions elect;
  elect.useElectSync = hopper;
  pm.addPass(createCroqElectIssuersPass(elect));
}

void mlir::croq::buildCroqToNVVMPipeline(
    OpPassManager &pm, const CroqToNVVMPipelineOptions &options) {
  // Waits on TMA futures become event waits (again in croq-prepare-gpu,
  // where it finds nothing left), so that the protocol check sees them.
  pm.addPass(createCroqBindTmaFuturesPass());
  // Deadlocks and unwaited futures are compile errors, before anything is
  // lowered.
  pm.addPass(createCroqVerifyProtocolPass());
  // Returned tensors become output arguments of the host entry point.
  pm.addPass(createCroqResultsToOutputsPass());
  // Every lowering decision, each made by its own pass, as croq IR.
  CroqPrepareGPUPipelineOptions prepare;
  prepare.chip = options.chip.getValue();
  prepare.mmaDeferMinSlots = options.mmaDeferMinSlots.getValue();
  buildCroqPrepareGPUPipeline(pm, prepare);
  // The croq-to-gpu patterns lower what those passes decided.
  ConvertCroqToGPUPassOptions toGPU;
  toGPU.chip = options.chip.getValue();
  pm.addPass(createConvertCroqToGPUPass(toGPU));
  buildCroqGPUToNVVMPipeline(pm, options);
}

void mlir::croq::buildCroqGPUToNVVMPipeline(
    OpPassManager &pm, const CroqToNVVMPipelineOptions &options) {
  // One barrier after consecutive event initialisations, not one each.
  pm.addPass(createCroqMergeInitBarriersPass());
  // A barrier that only part of its threads reach hangs: a compile error.
  pm.addPass(createCroqCheckDivergencePass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // Constants stay inside kernels rather than becoming kernel arguments.
  pm.addPass(createGpuLaunchSinkIndexComputationsPass());
  pm.addPass(createGpuKernelOutliningPass());
  // One module for all kernels: one PTX file, one image.
  pm.addPass(createCroqMergeKernelModulesPass());
  pm.addPass(createCroqPassTensorMapsByPointerPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createCroqBoundKernelRegistersPass());
  pm.addPass(createCroqMarkLaunchesPass());
  // Drop host values that only fed the sunk kernel computations.
  pm.addPass(createCanonicalizerPass());

  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  target.features = options.features;
  target.optLevel = options.optLevel;
  // libdevice's reflection of __nvvm_reflect("__CUDA_FTZ") and friends.
  target.fastFlag = options.fastMath;
  target.ftzFlag = options.fastMath;
  pm.addPass(createGpuNVVMAttachTarget(target));

  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  kernels.addPass(createConvertNVGPUToNVVMPass());
  kernels.addPass(memref::createExpandStridedMetadataPass());
  kernels.addPass(createLowerAffinePass());
  kernels.addPass(createCroqUnrollHintedLoopsPass());
  kernels.addPass(createCroqUnrollMmaBatchesPass());
  // A ring's `k % S` and `k / S` as carried values, not divisions.
  kernels.addPass(createCroqCarryLoopRemaindersPass());
  kernels.addPass(createSCFToControlFlowPass());
  // Fragments are n-D vectors; canonicalization can leave n-D shape casts
  // and broadcasts of them, which the NVVM conversion does not unroll.
  kernels.addPass(createCroqLowerF8ConversionsPass());
  kernels.addPass(createCroqUnrollFragmentVectorsPass());
  kernels.addPass(createConvertGpuOpsToNVVMOps());
  // One wgmma.fence per batch of MMAs, no empty commit groups or waits that
  // wait for nothing, over the kernel's control flow graph.
  kernels.addPass(createCroqElideWgmmaSyncsPass());
  kernels.addPass(createCroqExternDynamicSharedMemoryPass());
  // The C++ device functions kernels call, compiled and linked.
  CroqLinkDeviceCodePassOptions link;
  link.toolkit = options.toolkit;
  link.clang = options.clang;
  kernels.addPass(createCroqLinkDeviceCodePass(link));
  kernels.addPass(createConvertNVVMToLLVMPass());
  kernels.addPass(createReconcileUnrealizedCastsPass());
  if (options.fastMath)
    kernels.addPass(createCroqFastMathPass());
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createCSEPass());
  kernels.addPass(createCroqCheckLoweredPass());
  // Buffers, events and alignment padding fit the block's shared memory.
  CroqCheckSharedMemoryPassOptions sharedLimit;
  unsigned sm = 0;
  StringRef chip = options.chip.getValue();
  if (chip.consume_front("sm_"))
    (void)chip.take_while(llvm::isDigit).getAsInteger(10, sm);
  sharedLimit.limit = sharedMemoryPerBlock(sm);
  pm.addPass(createCroqCheckSharedMemoryPass(sharedLimit));

  if (options.format == "none")
    return;
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = options.format;
  binary.toolkitPath = options.toolkit;
  pm.addPass(createGpuModuleToBinaryPass(binary));
}

void mlir::croq::registerCroqToNVVMPipeline() {
  PassPipelineRegistration<CroqPrepareGPUPipelineOptions>(
      "croq-prepare-gpu",
      "Make every lowering decision of croq IR for NVIDIA GPUs as IR, each by "
      "its own pass, in the order convert-croq-to-gpu needs them",
      buildCroqPrepareGPUPipeline);
  PassPipelineRegistration<CroqToNVVMPipelineOptions>(
      "croq-to-nvvm",
      "Lower croq IR to outlined NVVM kernels and serialize them (PTX or "
      "cubin); host functions keep their gpu.launch_func ops",
      buildCroqToNVVMPipeline);
}
