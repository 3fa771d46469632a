//===- MergeInitBarriers.cpp - one barrier after event initialisations ----===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//
//
// convert-croq-to-gpu follows each event group's initialisation with the
// barrier that makes it visible before first use. Where groups are
// declared one after another, the barriers between them order nothing the
// last one does not: this pass removes them.
//
//===----------------------------------------------------------------------===//

#include "Croq/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::croq {
#define GEN_PASS_DEF_CROQMERGEINITBARRIERSPASS
#include "Croq/Conversion/Passes.h.inc"
} // namespace mlir::croq

using namespace mlir;

namespace {

/// A barrier at block or cluster scope: a gpu.barrier, or a cluster
/// arrive immediately followed by its wait.
struct Barrier {
  enum Scope { Block, Cluster };
  Scope scope;
  SmallVector<Operation *, 2> ops;
};

/// The barrier that starts at `op`, if one does.
std::optional<Barrier> barrierAt(Operation *op) {
  if (isa<gpu::BarrierOp>(op))
    return Barrier{Barrier::Block, {op}};
  if (isa<NVVM::ClusterArriveOp>(op))
    if (Operation *next = op->getNextNode();
        next && isa<NVVM::ClusterWaitOp>(next))
      return Barrier{Barrier::Cluster, {op, next}};
  return std::nullopt;
}

/// Whether `op`, between two barriers, touches nothing that happened
/// before the first: it has no memory effects, creates an event group, or
/// initialises groups created after the first barrier (`fresh`).
bool isInert(Operation *op, const DenseSet<Value> &fresh) {
  if (isa<nvgpu::MBarrierCreateOp>(op))
    return true;
  if (isMemoryEffectFree(op))
    return true;
  auto ifOp = dyn_cast<scf::IfOp>(op);
  if (!ifOp || ifOp->getNumResults() != 0)
    return false;
  WalkResult walk = ifOp->walk([&](Operation *inner) {
    if (inner == ifOp.getOperation() || isa<scf::YieldOp>(inner))
      return WalkResult::advance();
    if (auto init = dyn_cast<nvgpu::MBarrierInitOp>(inner))
      return fresh.contains(init.getBarriers()) ? WalkResult::advance()
                                                : WalkResult::interrupt();
    if (isa<NVVM::FenceMbarrierInitOp>(inner) || isMemoryEffectFree(inner))
      return WalkResult::advance();
    return WalkResult::interrupt();
  });
  return !walk.wasInterrupted();
}

struct CroqMergeInitBarriersPass
    : mlir::croq::impl::CroqMergeInitBarriersPassBase<
          CroqMergeInitBarriersPass> {
  void runOnOperation() override {
    SmallVector<Operation *> dead;
    getOperation().walk([&](Block *block) {
      std::optional<Barrier> pending;
      DenseSet<Value> fresh;
      for (Operation &op : *block) {
        // The wait of a cluster barrier already taken with its arrive.
        if (pending && llvm::is_contained(pending->ops, &op))
          continue;
        if (std::optional<Barrier> barrier = barrierAt(&op)) {
          if (pending && pending->scope <= barrier->scope)
            llvm::append_range(dead, pending->ops);
          pending = barrier;
          fresh.clear();
          continue;
        }
        if (!pending)
          continue;
        if (!isInert(&op, fresh)) {
          pending.reset();
          continue;
        }
        if (auto create = dyn_cast<nvgpu::MBarrierCreateOp>(op))
          fresh.insert(create.getBarriers());
      }
    });
    for (Operation *op : dead)
      op->erase();
  }
};

} // namespace
