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
static LogicalResult assignArrivals(ModuleOp module,
                                    const LaunchAnalysis &analysis) {
  WalkResult result = module.walk([&](EventAllocOp alloc) {
    if (alloc.getArrivals() || !analysis.hasScope(alloc))
      return WalkResult::advance();
    std::optional<int64_t> count;
    for (Operation *user : alloc.getEvent().getUsers()) {
      if (!isa<EventTriggerOp>(user))
        continue;
      // The threads that run the trigger: those of its innermost region
      // (whose count includes the regions around it).
      InThreadsOp role = user->getParentOfType<InThreadsOp>();
      std::optional<int64_t> threads =
          role ? countRoleThreads(role)
               : std::optional(analysis.getScope(user).blockDim);
      if (!threads) {
        alloc.emitOpError("cannot count the threads that trigger this "
                          "event; declare it with an explicit arrival count "
                          "(event<N>)");
        return WalkResult::interrupt();
      }
      if (*threads == 0) {
        InFlightDiagnostic diag = alloc.emitOpError(
            "is triggered in a region that no thread runs (its predicate is "
            "false for every index), so its arrival count would be 0");
        diag.attachNote(user->getLoc()) << "the trigger";
        return WalkResult::interrupt();
      }
      count = count ? count : threads;
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
