//===- AssignArrivals.cpp - the arrival count of every event --------------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#include "Common.h"
#include "Croq/Analysis/Roles.h"
#include "Croq/Conversion/Passes.h"

namespace mlir::croq {
#define GEN_PASS_DEF_CROQASSIGNARRIVALSPASS
#include "Croq/Conversion/Passes.h.inc"
} // namespace mlir::croq

using namespace mlir;
using namespace mlir::croq;
using namespace mlir::croq::detail;

/// Gives every event without `event<N>` its arrival count: the threads of
/// the role (croq.inthreads region) that triggers it, or the whole block.
/// Fails where triggers of one event run on different numbers of threads.
static LogicalResult assignArrivals(ModuleOp module,
                                    const LaunchAnalysis &analysis) {
  WalkResult result = module.walk([&](EventAllocOp alloc) {
    if (!analysis.hasScope(alloc) || !isMBarrierEvent(alloc.getEvent()))
      return WalkResult::advance();
    std::optional<int64_t> count;
    Operation *first = nullptr;
    // The triggers in program order, so that errors name them in order.
    SmallVector<Operation *> triggers;
    alloc->getParentOp()->walk([&](EventTriggerOp trigger) {
      if (trigger.getEvent() == alloc.getEvent())
        triggers.push_back(trigger);
    });
    // An arrival across the cluster reaches every block's element: each
    // counts the triggering threads of all the cluster's blocks.
    auto acrossCluster = [](Operation *t) {
      return cast<EventTriggerOp>(t).getCluster();
    };
    if (llvm::any_of(triggers, acrossCluster) &&
        !llvm::all_of(triggers, acrossCluster)) {
      Operation *local = *llvm::find_if_not(triggers, acrossCluster);
      Operation *remote = *llvm::find_if(triggers, acrossCluster);
      InFlightDiagnostic diag = alloc.emitOpError(
          "is triggered across the cluster in one place and in its own "
          "block in another, so no one arrival count completes its phases");
      diag.attachNote(remote->getLoc()) << "trigger.cluster here";
      diag.attachNote(local->getLoc()) << "a block's own trigger here";
      return WalkResult::interrupt();
    }
    // event<N>: the program's count (of the whole cluster's arrivals, for
    // one triggered across it).
    if (alloc.getArrivals())
      return WalkResult::advance();
    for (Operation *user : triggers) {
      // The threads that run the trigger: those of its innermost region
      // (whose count includes the regions around it). A branch on thread
      // indices inside it selects threads croq cannot count.
      InThreadsOp role = user->getParentOfType<InThreadsOp>();
      for (Operation *at = user->getParentOp();
           at && at != role.getOperation() && !isa<ParallelOp>(at);
           at = at->getParentOp()) {
        auto branch = dyn_cast<scf::IfOp>(at);
        if (!branch || !dependsOnThreadIndex(branch.getCondition()))
          continue;
        InFlightDiagnostic diag = alloc.emitOpError(
            "is triggered under a branch on thread indices, so croq cannot "
            "count the threads that arrive; select them with inthreads "
            "(...) instead of if, or declare the event with its arrival "
            "count (event<N>)");
        diag.attachNote(user->getLoc()) << "the trigger";
        return WalkResult::interrupt();
      }
      std::optional<int64_t> threads =
          role ? countRoleThreads(role)
               : std::optional(analysis.getScope(user).blockDim);
      if (!threads) {
        alloc.emitOpError("cannot count the threads that trigger this "
                          "event; declare it with an explicit arrival count "
                          "(event<N>)");
        return WalkResult::interrupt();
      }
      if (acrossCluster(user))
        *threads *= analysis.getScope(user).clusterSize;
      if (*threads == 0) {
        InFlightDiagnostic diag = alloc.emitOpError(
            "is triggered in a region that no thread runs (its predicate is "
            "false for every index), so its arrival count would be 0");
        diag.attachNote(user->getLoc()) << "the trigger";
        return WalkResult::interrupt();
      }
      if (count && *count != *threads) {
        // A phase completes when a fixed number of threads arrive: triggers
        // by regions of different sizes would leave one of them waiting for
        // arrivals that never come.
        InFlightDiagnostic diag = alloc.emitOpError()
                                  << "is triggered by " << *count
                                  << " threads in one place and by "
                                  << *threads
                                  << " in another, so no one arrival count "
                                     "completes its phases";
        diag.attachNote(first->getLoc())
            << "triggered here by " << *count << " threads";
        diag.attachNote(user->getLoc())
            << "triggered here by " << *threads << " threads";
        diag.attachNote() << "hint: trigger it from regions of the same "
                             "threads, or declare it with the count that "
                             "each phase's arrivals add up to (event<N>)";
        return WalkResult::interrupt();
      }
      if (!count) {
        count = threads;
        first = user;
      }
    }
    alloc.setArrivals(count.value_or(1));
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

namespace {

struct CroqAssignArrivalsPass
    : mlir::croq::impl::CroqAssignArrivalsPassBase<CroqAssignArrivalsPass> {
  void runOnOperation() override {
    auto &analysis = getAnalysis<LaunchAnalysis>();
    if (!analysis.isValid() || failed(assignArrivals(getOperation(), analysis)))
      return signalPassFailure();
    // Counts are attributes: every op keeps its place and its scope.
    markAnalysesPreserved<LaunchAnalysis>();
  }
};

} // namespace
