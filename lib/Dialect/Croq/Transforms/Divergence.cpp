//===- Divergence.cpp - divergence report and checks ----------------------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#include "Croq/Analysis/DivergenceAnalysis.h"
#include "Croq/Dialect/Croq/IR/CroqOps.h"
#include "Croq/Dialect/Croq/Transforms/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::croq {
#define GEN_PASS_DEF_CROQREPORTDIVERGENCEPASS
#define GEN_PASS_DEF_CROQCHECKDIVERGENCEPASS
#include "Croq/Dialect/Croq/Transforms/Passes.h.inc"
} // namespace mlir::croq

using namespace mlir;
using namespace mlir::croq;

/// Ops in a region, terminators aside.
static int64_t countOps(Region &region) {
  int64_t count = 0;
  region.walk([&](Operation *op) {
    if (!op->hasTrait<OpTrait::IsTerminator>())
      ++count;
  });
  return count;
}

namespace {

struct CroqReportDivergencePass
    : mlir::croq::impl::CroqReportDivergencePassBase<CroqReportDivergencePass> {
  void runOnOperation() override {
    auto &uniformity = getAnalysis<UniformityInfo>();
    if (!uniformity.isValid())
      return signalPassFailure();
    // Remarks only: the analysis stays valid for the next pass.
    markAllAnalysesPreserved();
    DataFlowSolver &solver = uniformity.getSolver();
    getOperation()->walk([&](Operation *op) {
      if (!isa<scf::IfOp, scf::IndexSwitchOp, scf::ForOp, scf::WhileOp,
               InThreadsOp, ParallelOp>(op))
        return;
      std::optional<UniformScope> scope = getControlScope(solver, op);
      if (!scope)
        return;
      if (*scope >= UniformScope::Warp) {
        // By location: attaching the op would print its whole kernel.
        emitRemark(op->getLoc()) << "uniform at "
                                 << stringifyUniformScope(*scope);
        return;
      }
      InFlightDiagnostic remark =
          emitRemark(op->getLoc(), "divergent within warp");
      if (auto ifOp = dyn_cast<scf::IfOp>(op)) {
        int64_t thenOps = countOps(ifOp.getThenRegion());
        int64_t elseOps = countOps(ifOp.getElseRegion());
        remark.attachNote()
            << "a warp whose lanes disagree runs both sides one after the "
               "other: "
            << thenOps << " ops then " << elseOps << " ops, "
            << thenOps + elseOps << " in all";
      } else if (auto sw = dyn_cast<scf::IndexSwitchOp>(op)) {
        int64_t total = countOps(sw.getDefaultRegion());
        for (Region &region : sw.getCaseRegions())
          total += countOps(region);
        remark.attachNote() << "a warp whose lanes disagree runs every case "
                               "it takes one after the other: up to "
                            << total << " ops";
      }
    });
  }
};

/// The level a collective op needs its executing threads to agree at.
static std::optional<UniformScope> requiredScope(Operation *op,
                                                 DataFlowSolver &solver) {
  auto collective = dyn_cast<CollectiveOpInterface>(op);
  std::optional<Level> level =
      collective ? collective.getCollectiveLevel() : std::nullopt;
  // A cooperative copy's lowering, which the group's threads split.
  if (auto copyLevel = op->getAttrOfType<LevelAttr>(kCollectiveAttrName))
    level = copyLevel.getValue();
  // A thread-level group is one thread: nothing to agree on.
  if (!level || *level == Level::Thread)
    return std::nullopt;
  return levelScope(*level);
}

/// How an error names a collective op: by what the program wrote, where
/// the op has a source-level counterpart, else by its IR name.
static std::string collectiveName(Operation *op) {
  if (isa<gpu::BarrierOp, BarrierOp, NVVM::Barrier0Op>(op))
    return "this barrier (sync.shared)";
  if (isa<NVVM::SyncWarpOp>(op))
    return "this warp barrier (bar.warp.sync)";
  if (op->hasAttr(kCollectiveAttrName))
    return "this copy, which the threads of its group split among them,";
  if (isa<nvgpu::MmaSyncOp, NVVM::MmaOp, nvgpu::LdMatrixOp>(op))
    return "this warp MMA (mma.sync: '" + op->getName().getStringRef().str() +
           "')";
  if (isa<nvgpu::WarpgroupMmaOp, nvgpu::WarpgroupMmaStoreOp,
          NVVM::WgmmaMmaAsyncOp, NVVM::WgmmaFenceAlignedOp,
          NVVM::WgmmaGroupSyncAlignedOp, NVVM::WgmmaWaitGroupSyncOp>(op))
    return "this warpgroup MMA (wgmma: '" +
           op->getName().getStringRef().str() + "')";
  if (isa<gpu::ShuffleOp, NVVM::ShflOp>(op))
    return "this warp shuffle";
  return "'" + op->getName().getStringRef().str() + "'";
}

/// `scope`, widened to the block where the block is no larger than one
/// group of that scope: in a block of one warpgroup (a warp-specialized
/// role that takes all of it), what its warpgroup agrees on the block does.
static UniformScope widenToBlock(UniformScope scope, Operation *op) {
  if (scope >= UniformScope::Block || scope < UniformScope::Warp)
    return scope;
  std::optional<int64_t> threads = knownBlockThreads(op);
  int64_t group = scope == UniformScope::Warp ? 32 : 128;
  return threads && *threads <= group ? UniformScope::Block : scope;
}

static bool isSingleThreadIssue(Operation *op) {
  return isa<nvgpu::TmaAsyncLoadOp, nvgpu::TmaAsyncStoreOp,
             nvgpu::MBarrierArriveExpectTxOp,
             NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp,
             NVVM::MBarrierArriveExpectTxOp>(op);
}

struct CroqCheckDivergencePass
    : mlir::croq::impl::CroqCheckDivergencePassBase<CroqCheckDivergencePass> {
  // Which upstream ops are collective is their CollectiveOpInterface: make
  // sure the models are attached wherever the pass runs.
  void getDependentDialects(DialectRegistry &registry) const override {
    CroqCheckDivergencePassBase::getDependentDialects(registry);
    registerCollectiveOpInterfaceExternalModels(registry);
  }

  void runOnOperation() override {
    auto &uniformity = getAnalysis<UniformityInfo>();
    if (!uniformity.isValid())
      return signalPassFailure();
    markAllAnalysesPreserved();
    DataFlowSolver &solver = uniformity.getSolver();
    bool failedAny = false;
    getOperation()->walk([&](Operation *op) {
      if (isSingleThreadIssue(op) && !isSingleThreaded(solver, op)) {
        emitError(op->getLoc(),
                  "is meant to be issued by one thread, but every thread of "
                  "its group executes it; guard it with a single-thread "
                  "condition (tid == 0 or elect.sync)");
        failedAny = true;
        return;
      }
      std::optional<UniformScope> required = requiredScope(op, solver);
      if (!required)
        return;
      UniformScope actual = widenToBlock(getExecutionScope(solver, op), op);
      if (actual >= *required)
        return;
      // A barrier is the source's sync.shared (or one croq placed).
      std::string what = collectiveName(op);
      InFlightDiagnostic diag = emitError(op->getLoc())
                                << what << " is collective over a "
                                << stringifyUniformScope(*required)
                                << ", but the control around it is only "
                                << (actual == UniformScope::Thread
                                        ? std::string("per thread")
                                        : "uniform at " +
                                              stringifyUniformScope(actual).str());
      diag.attachNote() << "hint: make the branches around it "
                        << stringifyUniformScope(*required)
                        << "-uniform (test a "
                        << stringifyUniformScope(*required)
                        << " index), or move it out of them";
      failedAny = true;
    });
    if (failedAny)
      signalPassFailure();
  }
};

} // namespace
