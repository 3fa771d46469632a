//===- LaunchAnalysis.cpp - where each croq op runs -------------------------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#include "Croq/Analysis/LaunchAnalysis.h"
#include "Croq/Analysis/Roles.h"

#include "mlir/IR/Matchers.h"

#include <limits>

using namespace mlir;
using namespace mlir::croq;

//===----------------------------------------------------------------------===//
// LaunchAnalysis
//===----------------------------------------------------------------------===//

/// Parallels nested in `op` with no other parallel between them.
static SmallVector<ParallelOp> directChildren(ParallelOp op) {
  SmallVector<ParallelOp> children;
  op.getBody().walk<WalkOrder::PreOrder>([&](ParallelOp child) {
    children.push_back(child);
    return WalkResult::skip();
  });
  return children;
}

/// Product of the constant bounds of a thread-side parallel. Where
/// `runtimeAllowed`, a bound that is not a constant makes the product
/// kRuntimeThreads (the launch computes it).
static FailureOr<int64_t> constantExtent(ParallelOp op, bool runtimeAllowed) {
  int64_t total = 1;
  bool runtime = false;
  for (auto [i, bound] : llvm::enumerate(op.getBounds())) {
    APInt value;
    if (!matchPattern(bound, m_ConstantInt(&value))) {
      if (runtimeAllowed) {
        runtime = true;
        continue;
      }
      return op.emitOpError("bound ")
             << i << " of a " << stringifyLevel(op.getLevel())
             << " parallel must be a compile-time constant: it sets how many "
                "threads run each instance of the level above, which is "
                "fixed; only the outermost thread-side parallel of a kernel, "
                "alone in its block, may have a run-time extent";
    }
    int64_t extent = value.getSExtValue();
    if (extent < 1)
      return op.emitOpError("bound ")
             << i << " of a " << stringifyLevel(op.getLevel())
             << " parallel is " << extent << "; it must be at least 1";
    // Saturates rather than wraps; the caller rejects anything this big.
    total = total > std::numeric_limits<int64_t>::max() / extent
                ? std::numeric_limits<int64_t>::max()
                : total * extent;
  }
  return runtime ? LaunchAnalysis::kRuntimeThreads : total;
}

/// Threads used by the thread-side children of `op`, which must agree.
FailureOr<int64_t> LaunchAnalysis::childThreads(ParallelOp op) {
  std::optional<int64_t> common;
  ParallelOp first;
  SmallVector<ParallelOp> children = directChildren(op);
  // The block's size may be a run-time value when one thread-side parallel
  // sets it alone: the launch computes it from that parallel's extents.
  bool runtimeAllowed = !op.getParentParallel() && children.size() == 1 &&
                        op.getCluster().value_or(1) == 1;
  for (ParallelOp child : children) {
    FailureOr<int64_t> extent = constantExtent(child, runtimeAllowed);
    if (failed(extent))
      return failure();
    int64_t unit = levelThreads(child.getLevel());
    // Checked before multiplying: 2^62 warpgroups x 128 would wrap.
    if (*extent != kRuntimeThreads && *extent > kMaxBlockThreads / unit)
      return child.emitOpError("needs ")
             << *extent << " x " << unit
             << " threads per block; the limit is " << kMaxBlockThreads
             << ": give this parallel a smaller extent";
    instanceThreads[child] = unit;
    // Children of this child must fill exactly one of its instances.
    for (ParallelOp grandChild : directChildren(child)) {
      FailureOr<int64_t> inner = childThreads(child);
      if (failed(inner))
        return failure();
      // Reported at the nested parallel, whose extents are the mistake.
      if (*inner != unit) {
        InFlightDiagnostic diag =
            grandChild.emitOpError("uses ")
            << *inner << " threads of each instance of the '"
            << stringifyLevel(child.getLevel())
            << "' parallel around it, which has " << unit
            << "; make the extents here multiply to " << unit;
        diag.attachNote(child.getLoc())
            << "the '" << stringifyLevel(child.getLevel()) << "' parallel";
        return diag;
      }
      break;
    }
    int64_t threads = *extent == kRuntimeThreads ? kRuntimeThreads
                                                 : *extent * unit;
    if (common && *common != threads) {
      InFlightDiagnostic diag =
          child.emitOpError("sibling parallels in one block need equal thread "
                            "counts: this one uses ")
          << threads << " threads";
      diag.attachNote(first.getLoc()) << "and this one " << *common;
      return diag;
    }
    common = threads;
    first = child;
  }
  return common.value_or(1);
}

/// A kernel whose block size is a run-time value: an op whose lowering
/// needs the thread count at compile time is an error at its location.
static LogicalResult checkRuntimeBlock(ParallelOp kernel) {
  ParallelOp sized = directChildren(kernel).front();
  auto pointAtExtent = [&](InFlightDiagnostic &diag) {
    diag.attachNote(sized.getLoc())
        << "this parallel's run-time extent sets it; make the extent a "
           "compile-time constant";
  };
  if (kernel.getCooperative()) {
    InFlightDiagnostic diag = kernel.emitOpError(
        "is a cooperative launch, whose grid must fit the GPU at once, which "
        "croq checks for its block size; but this kernel's block size is a "
        "run-time value");
    pointAtExtent(diag);
    return failure();
  }
  WalkResult result = kernel.getBody().walk([&](Operation *op) {
    StringRef why;
    if (auto alloc = dyn_cast<EventAllocOp>(op);
        alloc && alloc.getEvent().getType().getStorage() == MemoryKind::Shared)
      why = "a shared event's arrivals are counted in threads";
    else if (auto region = dyn_cast<InThreadsOp>(op);
             region && region.getAsync())
      why = "warp-specialized roles are given threads and registers";
    else if (isa<TmaCopyOp>(op))
      why = "the thread that issues a TMA copy is chosen among the block's";
    else if (isa<NamedBarrierOp>(op))
      why = "named barrier ids are assigned after the block's warpgroups";
    if (why.empty())
      return WalkResult::advance();
    InFlightDiagnostic diag =
        op->emitOpError("needs the block's thread count at compile time (")
        << why << "), but this kernel's block size is a run-time value";
    pointAtExtent(diag);
    return WalkResult::interrupt();
  });
  return failure(result.wasInterrupted());
}

void LaunchAnalysis::recordScopes(ParallelOp kernel, int64_t blockDim) {
  uint32_t programBarrierIds = 0;
  kernel.getBody().walk([&](NamedBarrierOp named) {
    std::optional<int64_t> id = getConstantIntValue(named.getId());
    if (id && *id >= 0 && *id < 32)
      programBarrierIds |= 1u << *id;
  });
  bool warpgroupMma = containsWarpgroupMma(kernel);
  kernel.getBody().walk([&](Operation *op) {
    Scope scope;
    scope.blockDim = blockDim;
    scope.programBarrierIds = programBarrierIds;
    scope.warpgroupMma = warpgroupMma;
    scope.clusterSize = kernel.getCluster().value_or(1);
    scope.groupLevel = Level::Block;
    scope.groupSize = blockDim;
    bool foundGroup = false;
    for (Operation *parent = op->getParentOp(); parent;
         parent = parent->getParentOp()) {
      if (isa<InThreadsOp>(parent))
        scope.inThreads = true;
      auto parallel = dyn_cast<ParallelOp>(parent);
      if (!parallel)
        continue;
      if (parallel == kernel)
        break;
      if (parallel.getLevel() == Level::Thread) {
        if (!foundGroup)
          scope.perThread = true;
        continue;
      }
      if (!foundGroup) {
        scope.groupLevel = parallel.getLevel();
        scope.groupSize = levelThreads(parallel.getLevel());
        foundGroup = true;
      }
    }
    // A collective op directly in a thread-level body cooperates with the
    // group above; perThread records only that per-thread data is in scope.
    if (scope.perThread && !foundGroup)
      scope.groupSize = blockDim;
    if (auto copy = dyn_cast<DmaCopyOp>(op)) {
      // A local buffer is each thread's own, at any level: every thread
      // copies its whole tile (isPerThreadCopy holds for it).
      bool local = llvm::any_of(
          ValueRange{copy.getSource(), copy.getTarget()}, [](Value side) {
            return getStorage(cast<MemRefType>(side.getType())) ==
                   Storage::Local;
          });
      if (scope.perThread || local)
        scope.copiesPerThread = isPerThreadCopy(copy);
      // Every warp (warpgroup) of the block copies the same tile: the block
      // copies it once, cooperatively (croq-insert-barriers orders it).
      else if (scope.groupLevel != Level::Block &&
               isGroupInvariantCopy(copy, kernel)) {
        scope.groupLevel = Level::Block;
        scope.groupSize = blockDim;
      }
    }
    // The same for a synchronous TMA copy (one that completes no event):
    // the block issues it once, and every thread waits for it. Issued by
    // each group, the copies would load the same tile twice and arrive on
    // its barrier more often than it counts.
    if (auto copy = dyn_cast<TmaCopyOp>(op);
        copy && !copy.getAsync() && !copy.getEvent() && !scope.perThread &&
        scope.groupLevel != Level::Block && isGroupInvariantCopy(copy, kernel)) {
      scope.groupLevel = Level::Block;
      scope.groupSize = blockDim;
    }
    scopes[op] = scope;
  });
}

LogicalResult LaunchAnalysis::analyze(ModuleOp module) {
  WalkResult result = module.walk([&](ParallelOp op) {
    if (op.getParentParallel())
      return WalkResult::advance();
    if (op.getLevel() != Level::Block) {
      op.emitOpError("a kernel is a block-level parallel; wrap this '")
          << stringifyLevel(op.getLevel())
          << "' parallel in `croq.parallel (...) by [...] : block`";
      return WalkResult::interrupt();
    }
    FailureOr<int64_t> blockDim = childThreads(op);
    if (failed(blockDim))
      return WalkResult::interrupt();
    if (*blockDim == kRuntimeThreads && failed(checkRuntimeBlock(op)))
      return WalkResult::interrupt();
    if (*blockDim != kRuntimeThreads && *blockDim > kMaxBlockThreads) {
      op.emitOpError("needs ") << *blockDim
                               << " threads per block; the limit is "
                               << kMaxBlockThreads;
      return WalkResult::interrupt();
    }
    instanceThreads[op] = *blockDim;
    recordScopes(op, *blockDim);
    return WalkResult::skip();
  });
  return failure(result.wasInterrupted());
}

LaunchAnalysis::LaunchAnalysis(Operation *op) {
  auto module = dyn_cast<ModuleOp>(op);
  valid = module && succeeded(analyze(module));
}

bool mlir::croq::containsWarpgroupMma(Operation *op) {
  return op
      ->walk([](MmaOp mma) {
        return mma.getAcc().getType().getScope() == Level::Warpgroup
                   ? WalkResult::interrupt()
                   : WalkResult::advance();
      })
      .wasInterrupted();
}

std::unique_ptr<LaunchAnalysis> mlir::croq::analyzeLaunches(ModuleOp module) {
  auto analysis = std::make_unique<LaunchAnalysis>(module);
  return analysis->isValid() ? std::move(analysis) : nullptr;
}
