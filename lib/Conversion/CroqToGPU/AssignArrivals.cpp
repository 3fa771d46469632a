//===- AssignArrivals.cpp - the arrival count of every event --------------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#include "Common.h"
#include "Croq/Analysis/Roles.h"
#include "Croq/Conversion/Passes.h"

#include <map>

namespace mlir::croq {
#define GEN_PASS_DEF_CROQASSIGNARRIVALSPASS
#include "Croq/Conversion/Passes.h.inc"
} // namespace mlir::croq

using namespace mlir;
using namespace mlir::croq;
using namespace mlir::croq::detail;

/// The threads that arrive on each element of the event in one run of
/// `trigger` in `role`, where its subscripts differ between the role's
/// threads (`trigger empty[ring + s]` with `ring = (p - 1) * S`: each
/// consumer warpgroup releases a ring of its own): std::nullopt where they
/// do not (every thread of the role arrives on the one element). Each
/// subscript must be a sum of terms that depend on the threads' parallel
/// indices alone and terms the same in every thread; the former, evaluated
/// for every thread of the role, must name each of their elements the same
/// number of times.
static FailureOr<std::optional<int64_t>>
perElementThreads(EventAllocOp alloc, EventTriggerOp trigger,
                  InThreadsOp role) {
  SmallVector<Value> subscripts(trigger.getIndices());
  if (trigger.getOrder())
    subscripts.push_back(trigger.getOrder());
  if (!llvm::any_of(subscripts, dependsOnInstanceIndex))
    return std::optional<int64_t>();
  auto fail = [&](const Twine &why) -> FailureOr<std::optional<int64_t>> {
    InFlightDiagnostic diag = alloc.emitOpError()
                              << "is triggered at an element that differs "
                                 "between the triggering threads, "
                              << why;
    diag.attachNote(trigger.getLoc()) << "the trigger";
    diag.attachNote() << "hint: declare the event with the count of each "
                         "element's arrivals per phase (event<N>)";
    return failure();
  };
  // The thread-dependent part of each subscript.
  SmallVector<SmallVector<Value>> perThread;
  for (Value subscript : subscripts) {
    SmallVector<Value> &terms = perThread.emplace_back();
    for (Value term : addendsOf(subscript)) {
      if (!dependsOnInstanceIndex(term))
        continue;
      bool threadOnly = allSources(term, [](BlockArgument arg) {
        auto level = dyn_cast<ParallelOp>(arg.getOwner()->getParentOp());
        return level && level.getLevel() != Level::Block;
      });
      if (!threadOnly)
        return fail("through a term croq cannot separate from the loop and "
                    "block values it adds");
      terms.push_back(term);
    }
  }
  // The instances that run the trigger: the role's, or, outside every
  // role, all those of the parallels around it (`f = tma.copy.async ... =>
  // s[p]` in the body of `parallel p by 2 : group-4`).
  Operation *runs = role ? role.getOperation() : trigger.getOperation();
  std::optional<llvm::BitVector> selected = roleSelection(runs);
  if (!selected)
    return fail("in a region whose threads croq cannot enumerate");
  // roleSelection enumerated these indices, so their extents are known.
  SmallVector<std::pair<BlockArgument, int64_t>> indices =
      *instanceIndices(runs);
  int64_t unit = instanceThreads(runs);
  std::map<SmallVector<int64_t>, int64_t> arrivals;
  DenseMap<Value, int64_t> bindings;
  for (unsigned linear : selected->set_bits()) {
    bindInstance(indices, linear, bindings);
    SmallVector<int64_t> element;
    for (ArrayRef<Value> terms : perThread) {
      int64_t sum = 0;
      for (Value term : terms) {
        std::optional<int64_t> v = evaluateIndex(term, bindings);
        if (!v)
          return fail("through a value croq cannot evaluate for each thread");
        sum += *v;
      }
      element.push_back(sum);
    }
    arrivals[element] += unit;
  }
  std::optional<int64_t> count;
  for (auto &[element, n] : arrivals) {
    if (count && *count != n)
      return fail("and its elements get different numbers of arrivals (" +
                  Twine(*count) + " and " + Twine(n) + ")");
    count = n;
  }
  return count;
}

/// Gives every event without `event<N>` its arrival count: the threads of
/// the role (croq.inthreads region) that triggers it, or the whole block;
/// where the triggered element differs between the role's threads, those
/// that trigger one element (perElementThreads). Fails where triggers of
/// one event run on different numbers of threads.
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
    // counts the triggering threads of all the cluster's blocks. (An event
    // is triggered across the cluster everywhere or nowhere:
    // croq-verify-protocol checked it.)
    auto acrossCluster = [](Operation *t) {
      return cast<EventTriggerOp>(t).getCluster();
    };
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
      FailureOr<std::optional<int64_t>> perElement = perElementThreads(
          alloc, cast<EventTriggerOp>(user), role);
      if (failed(perElement))
        return WalkResult::interrupt();
      if (*perElement)
        threads = *perElement;
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
