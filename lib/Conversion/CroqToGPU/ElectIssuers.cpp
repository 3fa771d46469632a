//===- ElectIssuers.cpp - the single thread that acts for a group ---------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//
//
// Code between parallel levels runs once per instance of the outer level,
// but every thread of that instance executes it. This pass decides which
// thread acts where only one may: stores there are wrapped in the election
// test, and TMA copies and their expect_tx arrivals get an `issuer`.
//
//===----------------------------------------------------------------------===//

#include "Common.h"
#include "Croq/Analysis/DivergenceAnalysis.h"
#include "Croq/Analysis/Roles.h"
#include "Croq/Conversion/Passes.h"

#include "mlir/Analysis/DataFlowFramework.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::croq {
#define GEN_PASS_DEF_CROQELECTISSUERSPASS
#include "Croq/Conversion/Passes.h.inc"
} // namespace mlir::croq

using namespace mlir;
using namespace mlir::croq;
using namespace mlir::croq::detail;

/// Code between parallel levels runs once per instance of the outer level:
/// a store there is made by one elected thread of the group (pure code may
/// run redundantly, collective ops cooperate). Wraps each such store in
/// `scf.if (rank == 0)` (or the elect.sync test), and gives each TMA issue
/// its issuer.
/// True when `cond` is an election electOneThread builds: `rank == 0` of the
/// thread id (modulo the group size), or the elect.sync result of the
/// group's first warp.
static bool isElection(Value cond) {
  if (auto branch = cond.getDefiningOp<scf::IfOp>())
    return !branch.getThenRegion().getOps<NVVM::ElectSyncOp>().empty();
  auto test = cond.getDefiningOp<arith::CmpIOp>();
  if (!test || test.getPredicate() != arith::CmpIPredicate::eq ||
      !matchPattern(test.getRhs(), m_Zero()))
    return false;
  Value rank = test.getLhs();
  if (auto rem = rank.getDefiningOp<arith::RemUIOp>())
    rank = rem.getLhs();
  return rank.getDefiningOp<gpu::ThreadIdOp>() != nullptr;
}

bool mlir::croq::detail::isElected(Operation *op) {
  auto branch = dyn_cast<scf::IfOp>(op->getParentOp());
  return branch && op->getParentRegion() == &branch.getThenRegion() &&
         isElection(branch.getCondition());
}

bool mlir::croq::detail::needsElection(Operation *op,
                                       const LaunchAnalysis &analysis) {
  auto store = dyn_cast<memref::StoreOp>(op);
  bool opaque = isa<CallOp, LLVM::InlineAsmOp>(op) && op->getNumResults() == 0;
  if ((!store && !opaque) || !analysis.hasScope(op))
    return false;
  const LaunchAnalysis::Scope &scope = analysis.getScope(op);
  if (scope.perThread || !scope.manyThreads())
    return false;
  // Buffers private to a thread need no election: local buffers, and
  // allocas such as the phase bits of croq-assign-phases.
  if (store && (getStorage(store.getMemRefType()) == Storage::Local ||
                store.getMemRef().getDefiningOp<memref::AllocaOp>()))
    return false;
  // A call given the registers of a frag or an accumulator (the importer's
  // private allocas) is every thread's: each passes its own part. So is
  // one whose memory is all the thread's own (local buffers); one that also
  // reaches shared or global memory stays elected, its effects once.
  if (isa<CallOp>(op)) {
    bool registers = false, allLocal = true, anyMemory = false;
    for (Value v : op->getOperands()) {
      auto type = dyn_cast<MemRefType>(v.getType());
      if (!type)
        continue;
      anyMemory = true;
      bool local = getStorage(type) == Storage::Local;
      allLocal &= local;
      registers |= local && v.getDefiningOp<memref::AllocaOp>();
    }
    if (registers || (anyMemory && allLocal))
      return false;
  }
  return !isElected(op);
}

/// True when the threads that run `op` are whole warps of a block of
/// `blockDim` threads: every warp of its innermost croq.inthreads (or of
/// the block) is selected entirely or not at all.
static bool runsOnWholeWarps(Operation *op, int64_t blockDim) {
  if (blockDim == LaunchAnalysis::kRuntimeThreads || blockDim % 32 != 0)
    return false;
  auto role = op->getParentOfType<InThreadsOp>();
  if (!role)
    return true;
  std::optional<llvm::BitVector> selected = roleSelection(role);
  if (!selected || selected->size() == 0 ||
      blockDim % selected->size() != 0)
    return false;
  // Instances of warps or warpgroups: each is whole warps.
  if ((blockDim / selected->size()) % 32 == 0)
    return true;
  if (selected->size() % 32 != 0)
    return false;
  for (unsigned warp = 0; warp < selected->size(); warp += 32) {
    unsigned count = 0;
    for (unsigned lane = 0; lane < 32; ++lane)
      count += selected->test(warp + lane);
    if (count != 0 && count != 32)
      return false;
  }
  return true;
}

/// elect.sync names all 32 lanes: only a group of whole warps may use it (a
/// block of fewer threads, or of a run-time count, has a partial warp).
static bool wholeWarps(const LaunchAnalysis::Scope &scope) {
  return scope.groupLevel != Level::Block ||
         (!scope.runtimeBlock() && scope.blockDim % 32 == 0);
}

/// A TMA store with a cooperative issuer synchronises its group before
/// the issue (each writer's proxy fence, then the group's barrier: see the
/// TMA lowering). croq-insert-barriers, which runs before the issuer is
/// known, put a croq.barrier before the store for its read of the tile; when
/// only side-effect-free code lies between the two and the croq.barrier is
/// over the same threads, it orders nothing the store's own barrier does not,
/// and is erased.
static void eraseBarriersStoresSubsume(ModuleOp module,
                                       const LaunchAnalysis &analysis) {
  SmallVector<BarrierOp> subsumed;
  module.walk([&](TmaCopyOp store) {
    if (store.isLoad() || !store.getIssuer() ||
        *store.getIssuer() == Issuer::Each || !analysis.hasScope(store))
      return;
    const LaunchAnalysis::Scope &scope = analysis.getScope(store);
    GroupBarrier own =
        groupBarrierKind(scope.groupLevel, scope.groupSize, scope.blockDim);
    for (Operation *prev = store->getPrevNode(); prev;
         prev = prev->getPrevNode()) {
      if (auto barrier = dyn_cast<BarrierOp>(prev)) {
        Level level = barrier.getLevel();
        if (own != GroupBarrier::None &&
            groupBarrierKind(level, barrierThreads(level, scope),
                             scope.blockDim) == own)
          subsumed.push_back(barrier);
        return;
      }
      // Inline assembly with outputs and no side effects declared may
      // still read memory (a "memory" clobber): it stops the walk too.
      if (!isMemoryEffectFree(prev) || isa<LLVM::InlineAsmOp, CallOp>(prev))
        return;
    }
  });
  for (BarrierOp barrier : subsumed)
    barrier.erase();
}

static void electIssuers(ModuleOp module, const LaunchAnalysis &analysis,
                         DataFlowSolver *solver) {
  // Without the analysis (no use-elect-sync), elect by thread id.
  bool useElectSync = solver;
  // Stores, and calls and assembly without results.
  SmallVector<Operation *> actions;
  module.walk([&](Operation *op) {
    // A store elected by an earlier run keeps its election.
    if (needsElection(op, analysis))
      actions.push_back(op);
  });
  // TMA issues and their expect_tx arrivals: each executing thread where
  // the group is one thread or a croq.inthreads picks single threads, else
  // one thread of the group, picked like the stores'.
  module.walk([&](Operation *op) {
    auto trigger = dyn_cast<EventTriggerOp>(op);
    if ((!isa<TmaCopyOp>(op) && !(trigger && trigger.getExpectTx())) ||
        !analysis.hasScope(op) || op->hasAttr("issuer"))
      return;
    const LaunchAnalysis::Scope &scope = analysis.getScope(op);
    bool someThreads =
        scope.perThread && !selectsWholeGroups(op, scope.groupLevel);
    // A croq.inthreads of several threads, not whole groups: its lowest
    // thread issues, once for the region.
    std::optional<int64_t> lowest =
        scope.manyThreads() && someThreads
            ? lowestSelectedThread(op, scope.groupSize)
            : std::nullopt;
    Issuer who =
        !scope.manyThreads() ? Issuer::Each
        : lowest             ? Issuer::Lowest
        : someThreads        ? Issuer::Each
        : useElectSync && wholeWarps(scope) &&
                getExecutionScope(*solver, op) >= UniformScope::Warp
            ? Issuer::Elected
            : Issuer::First;
    op->setAttr("issuer", IssuerAttr::get(op->getContext(), who));
    if (lowest)
      op->setAttr("croq.issuer_thread",
                  IntegerAttr::get(IntegerType::get(op->getContext(), 64),
                                   *lowest));
  });
  // Each arrival across the cluster is C remote arrivals: where every warp
  // reaches the trigger converged and whole (its role selects whole warps),
  // one lane arrives for all 32.
  if (solver)
    module.walk([&](EventTriggerOp trigger) {
      if (trigger.getCluster() && analysis.hasScope(trigger) &&
          getExecutionScope(*solver, trigger) >= UniformScope::Warp &&
          runsOnWholeWarps(trigger, analysis.getScope(trigger).blockDim))
        trigger.setWarpArrivals(true);
    });
  for (Operation *action : actions) {
    const LaunchAnalysis::Scope &scope = analysis.getScope(action);
    OpBuilder b(action);
    Location loc = action->getLoc();
    Value rank = groupRank(b, loc, scope);
    // Where the warp is converged, elect.sync picks a lane of the group's
    // first warp (a warp-uniform test) instead of comparing thread ids.
    // Stores croq-insert-barriers ordered by one thread's program order
    // are that thread's: the first, by id.
    Value elected = electOneThread(
        b, loc, rank,
        useElectSync && !action->hasAttr(kSameIssuerAttr) &&
            wholeWarps(scope) &&
            getExecutionScope(*solver, action) >= UniformScope::Warp);
    auto ifOp = scf::IfOp::create(b, loc, elected, /*withElseRegion=*/false);
    action->moveBefore(ifOp.thenBlock()->getTerminator());
  }
}

namespace {

struct CroqElectIssuersPass
    : mlir::croq::impl::CroqElectIssuersPassBase<CroqElectIssuersPass> {
  using CroqElectIssuersPassBase::CroqElectIssuersPassBase;
  void runOnOperation() override {
    auto &analysis = getAnalysis<LaunchAnalysis>();
    if (!analysis.isValid())
      return signalPassFailure();
    // elect.sync where the divergence analysis proves the warp converged.
    DataFlowSolver *solver = nullptr;
    if (useElectSync) {
      auto &uniformity = getAnalysis<UniformityInfo>();
      if (uniformity.isValid())
        solver = &uniformity.getSolver();
    }
    electIssuers(getOperation(), analysis, solver);
    eraseBarriersStoresSubsume(getOperation(), analysis);
  }
};

} // namespace
