//===- CollectiveModels.cpp - upstream ops that threads run together ------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//
//
// CollectiveOpInterface for the gpu, nvgpu and nvvm ops that croq's
// lowering emits and that a group of threads must execute together, so
// that croq-check-divergence asks the interface instead of a list of ops.
//
//===----------------------------------------------------------------------===//

#include "Croq/Dialect/Croq/IR/CroqOps.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace mlir::croq;

namespace {

/// An op that every thread of one instance of `level` executes together.
template <typename OpTy, Level level>
struct Collective
    : CollectiveOpInterface::ExternalModel<Collective<OpTy, level>, OpTy> {
  std::optional<Level> getCollectiveLevel(Operation *) const { return level; }
};

/// `barrier.sync id, n` names its threads; `barrier.sync 0` is the block's.
struct NamedBarrier
    : CollectiveOpInterface::ExternalModel<NamedBarrier, NVVM::BarrierOp> {
  std::optional<Level> getCollectiveLevel(Operation *op) const {
    if (cast<NVVM::BarrierOp>(op).getNumberOfThreads())
      return std::nullopt;
    return Level::Block;
  }
};

template <Level level, typename... Ops>
void attach(MLIRContext *context) {
  (Ops::template attachInterface<Collective<Ops, level>>(*context), ...);
}

} // namespace

void mlir::croq::registerCollectiveOpInterfaceExternalModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, gpu::GPUDialect *) {
    attach<Level::Block, gpu::BarrierOp>(context);
    attach<Level::Warp, gpu::ShuffleOp>(context);
  });
  registry.addExtension(+[](MLIRContext *context, nvgpu::NVGPUDialect *) {
    attach<Level::Warpgroup, nvgpu::WarpgroupMmaOp, nvgpu::WarpgroupMmaStoreOp,
           nvgpu::WarpgroupGenerateDescriptorOp>(context);
    attach<Level::Warp, nvgpu::MmaSyncOp, nvgpu::LdMatrixOp>(context);
  });
  registry.addExtension(+[](MLIRContext *context, NVVM::NVVMDialect *) {
    // A cluster barrier needs (at least) every thread of the block.
    attach<Level::Block, NVVM::Barrier0Op, NVVM::ClusterArriveOp,
           NVVM::ClusterWaitOp>(context);
    NVVM::BarrierOp::attachInterface<NamedBarrier>(*context);
    attach<Level::Warpgroup, NVVM::SetMaxRegisterOp, NVVM::WgmmaMmaAsyncOp,
           NVVM::WgmmaFenceAlignedOp, NVVM::WgmmaGroupSyncAlignedOp,
           NVVM::WgmmaWaitGroupSyncOp>(context);
    attach<Level::Warp, NVVM::ShflOp, NVVM::VoteSyncOp, NVVM::ElectSyncOp,
           NVVM::MmaOp, NVVM::SyncWarpOp>(context);
  });
}
