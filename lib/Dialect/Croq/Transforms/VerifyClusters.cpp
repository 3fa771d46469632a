//===- VerifyClusters.cpp - the rules of multicast copies -----------------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//
//
// A multicast TMA load is issued by the first block of a cluster and lands
// in every block of it. Two rules make that a correct program, and
// croq-verify-protocol checks both:
// - every block of the cluster asks for the same tile at the same point:
//   the copy's coordinates, and the loops and branches around it, are the
//   same in every block of the cluster (they do not depend on the block's
//   rank or on the first block index, along which clusters are formed);
// - in a loop, no block overwrites a buffer another block still reads:
//   before the copy, its role waits on an event that every block's
//   readers release across the cluster (`trigger.cluster`). A synchronous
//   multicast load is ordered by a cluster barrier instead (croq-to-gpu),
//   so it must be where every thread of the block runs it.
// A trigger across the cluster arrives on the same element in every block,
// as often in each: its element and the control flow around it are
// checked the same way, and so is the control flow around a cluster
// barrier (`sync.barrier : cluster`), which every block must reach as often.
// An event is triggered across the cluster everywhere or nowhere.
//
//===----------------------------------------------------------------------===//

#include "VerifyClusters.h"

#include "Croq/Analysis/Roles.h"
#include "Croq/Dialect/Croq/IR/CroqOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseMap.h"

using namespace mlir;
using namespace mlir::croq;

namespace {

/// Which values are the same in every block of a kernel's cluster.
class ClusterUniformity {
public:
  explicit ClusterUniformity(ParallelOp kernel)
      : kernel(kernel), blocks(kernel.getCluster().value_or(1)) {}

  /// The first value `value` depends on that differs between the blocks of
  /// a cluster, or null when it is the same in all of them.
  Value varyingSource(Value value) {
    auto [it, inserted] = memo.try_emplace(value, Value());
    if (!inserted)
      return it->second;
    Value source = compute(value);
    memo[value] = source;
    return source;
  }

private:
  Value compute(Value value) {
    if (auto arg = dyn_cast<BlockArgument>(value)) {
      Operation *owner = arg.getOwner()->getParentOp();
      // Along the first index the blocks of a cluster are consecutive.
      if (owner == kernel.getOperation())
        return arg.getArgNumber() == 0 ? value : Value();
      if (!kernel->isProperAncestor(owner))
        return Value();
      // Inner parallel levels and inthreads index threads, not blocks.
      if (isa<ParallelOp>(owner))
        return Value();
      if (auto loop = dyn_cast<scf::ForOp>(owner)) {
        if (arg == loop.getInductionVar()) {
          for (Value bound :
               {loop.getLowerBound(), loop.getUpperBound(), loop.getStep()})
            if (Value v = varyingSource(bound))
              return v;
          return Value();
        }
      }
      // A loop-carried value: croq does not follow it around the loop.
      return value;
    }
    Operation *op = value.getDefiningOp();
    if (!kernel->isProperAncestor(op))
      return Value();
    if (isa<ClusterRankOp>(op))
      return value;
    // `x / (k * C)` of the first block index is the cluster's, the same in
    // all of its blocks.
    if (isa<arith::DivUIOp, arith::DivSIOp, arith::FloorDivSIOp>(op)) {
      APInt divisor;
      Value dividend = op->getOperand(0);
      if (auto cast = dividend.getDefiningOp<arith::IndexCastOp>())
        dividend = cast.getIn();
      auto arg = dyn_cast<BlockArgument>(dividend);
      if (arg && arg.getOwner()->getParentOp() == kernel.getOperation() &&
          arg.getArgNumber() == 0 &&
          matchPattern(op->getOperand(1), m_ConstantInt(&divisor)) &&
          divisor.getSExtValue() > 0 && divisor.getSExtValue() % blocks == 0)
        return Value();
    }
    // Memory and regions: croq does not follow values through them.
    if (op->getNumRegions() != 0 || !isMemoryEffectFree(op))
      return value;
    for (Value operand : op->getOperands())
      if (Value v = varyingSource(operand))
        return v;
    return Value();
  }

  ParallelOp kernel;
  int64_t blocks;
  llvm::DenseMap<Value, Value> memo;
};

/// The index operands that select the part of a buffer or tensor a view
/// names, from the view back to its root; false when the root is not an
/// argument of the function or an allocation (a view chosen by a region,
/// or carried around a loop), which croq does not follow.
static bool viewIndices(Value view, SmallVectorImpl<Value> &indices) {
  while (Operation *op = view.getDefiningOp()) {
    if (op->getNumRegions() != 0)
      return false;
    Value next;
    for (Value operand : op->getOperands()) {
      if (isa<MemRefType>(operand.getType()) && !next)
        next = operand;
      else if (operand.getType().isIntOrIndex())
        indices.push_back(operand);
    }
    if (!next)
      return true;
    view = next;
  }
  auto arg = cast<BlockArgument>(view);
  return isa<func::FuncOp>(arg.getOwner()->getParentOp());
}

static void noteSource(InFlightDiagnostic &diag, Operation *op, Value source) {
  Operation *def = source ? source.getDefiningOp() : nullptr;
  if (!source)
    diag.attachNote(op->getLoc())
        << "it is a view croq does not follow (chosen by a region or "
           "carried around a loop)";
  else if (isa_and_nonnull<ClusterRankOp>(def))
    diag.attachNote(def->getLoc())
        << "it depends on the block's rank in its cluster";
  else if (def)
    diag.attachNote(def->getLoc())
        << "it depends on this value, which croq does not follow (it comes "
           "from memory or from a region)";
  else if (isa<ParallelOp>(
               cast<BlockArgument>(source).getOwner()->getParentOp()))
    diag.attachNote(op->getLoc())
        << "it depends on the block level's first index, along which the "
           "clusters are formed";
  else
    diag.attachNote(op->getLoc())
        << "it depends on a value carried around a loop, which croq does "
           "not follow";
}

static LogicalResult reportVarying(Operation *op, Value source,
                                   const Twine &what) {
  bool copy = isa<TmaCopyOp>(op);
  InFlightDiagnostic diag = op->emitError();
  if (isa<ClusterBarrierOp>(op))
    diag << "a cluster barrier waits until every block of the cluster "
            "reaches it, but "
         << what << " differs between the blocks of a cluster";
  else if (copy)
    diag << "a multicast load gives every block of the cluster the first "
            "block's tile, in the first block's buffer and on its event, but "
         << what << " differs between the blocks of a cluster";
  else
    diag << "a trigger across the cluster arrives on the same element in "
            "every block, as often in each, but "
         << what << " differs between the blocks of a cluster";
  noteSource(diag, op, source);
  if (copy)
    diag.attachNote() << "hint: multicast the operand that the blocks of a "
                         "cluster share (indexed by the other block indices, "
                         "or by the first one divided by the cluster size), "
                         "and copy the others with a plain tma.copy";
  return failure();
}

/// The first of `values` that differs between the blocks of a cluster; a
/// null `Value` with `found` when none does.
static bool findVarying(ArrayRef<Value> values, ClusterUniformity &uniformity,
                        Value &varying) {
  for (Value v : values)
    if ((varying = uniformity.varyingSource(v)))
      return true;
  return false;
}

/// `op`'s operands that `what` names, and the loops, branches and
/// inthreads regions around it up to its kernel, are the same in every
/// block of the cluster.
static LogicalResult verifyUniform(Operation *op, ArrayRef<Value> operands,
                                   const Twine &what, ParallelOp kernel,
                                   ClusterUniformity &uniformity) {
  Value varying;
  if (findVarying(operands, uniformity, varying))
    return reportVarying(op, varying, what);
  for (Operation *p = op->getParentOp(); p != kernel.getOperation();
       p = p->getParentOp()) {
    SmallVector<Value> controls;
    if (auto branch = dyn_cast<scf::IfOp>(p))
      controls.push_back(branch.getCondition());
    else if (auto loop = dyn_cast<scf::ForOp>(p))
      controls.append({loop.getLowerBound(), loop.getUpperBound(),
                       loop.getStep()});
    else if (auto loop = dyn_cast<scf::WhileOp>(p))
      controls.push_back(loop.getConditionOp().getCondition());
    else if (auto region = dyn_cast<InThreadsOp>(p))
      controls.push_back(region.getPredicate());
    else if (!isa<ParallelOp, WarpSpecializeOp>(p))
      // Other regions (index_switch, execute_region): not followed.
      return reportVarying(op, p->getNumResults() ? p->getResult(0) : Value(),
                           "whether it runs");
    if (findVarying(controls, uniformity, varying))
      return reportVarying(op, varying, "whether it runs");
  }
  return success();
}

/// The tile, its destination, its event slot and whether it runs are the
/// same in every block of the cluster.
static LogicalResult verifySameTile(TmaCopyOp copy, ParallelOp kernel,
                                    ClusterUniformity &uniformity) {
  SmallVector<Value> tile, destination;
  if (!viewIndices(copy.getSource(), tile))
    return reportVarying(copy, Value(), "the tile it loads");
  if (!viewIndices(copy.getTarget(), destination))
    return reportVarying(copy, Value(), "the buffer it loads into");
  destination.append(copy.getEventIndices().begin(),
                     copy.getEventIndices().end());
  if (failed(verifyUniform(copy, tile, "the tile it loads", kernel,
                           uniformity)) ||
      failed(verifyUniform(copy, destination,
                           "the buffer or event element it loads into",
                           kernel, uniformity)))
    return failure();
  return success();
}

/// True when `a` and `b` compute the same index: one value, equal
/// constants, or the same side-effect-free op of such operands (`k % 2`
/// written twice), up to `depth` ops deep.
static bool sameIndex(Value a, Value b, unsigned depth = 4) {
  if (a == b)
    return true;
  APInt x, y;
  if (matchPattern(a, m_ConstantInt(&x)) && matchPattern(b, m_ConstantInt(&y)))
    return x.getSExtValue() == y.getSExtValue();
  Operation *p = a.getDefiningOp(), *q = b.getDefiningOp();
  if (depth == 0 || !p || !q || p->getName() != q->getName() ||
      !isMemoryEffectFree(p) || p->getNumRegions() != 0 ||
      p->getNumOperands() != q->getNumOperands() ||
      p->getAttrDictionary() != q->getAttrDictionary())
    return false;
  for (auto [u, v] : llvm::zip_equal(p->getOperands(), q->getOperands()))
    if (!sameIndex(u, v, depth - 1))
      return false;
  return true;
}

/// True when `slot` is `order % slots` (signed or unsigned remainder by
/// the constant), the slot that `at(order)` of `slots` elements selects.
static bool isRingSlot(Value slot, Value order, int64_t slots) {
  Operation *rem = slot.getDefiningOp();
  if (!rem || !isa<arith::RemSIOp, arith::RemUIOp>(rem))
    return false;
  APInt n;
  return matchPattern(rem->getOperand(1), m_ConstantInt(&n)) &&
         n.getSExtValue() == slots && sameIndex(rem->getOperand(0), order);
}

/// The shared allocation a view of it comes from, or null.
static Value rootBuffer(Value view) {
  while (Operation *op = view.getDefiningOp()) {
    if (op->getNumRegions() != 0 || op->getNumOperands() == 0 ||
        !isa<MemRefType>(op->getOperand(0).getType()))
      return view;
    view = op->getOperand(0);
  }
  return Value();
}

/// An asynchronous multicast that may overwrite its buffer (in a loop, or
/// after another copy into it) first waits, in the innermost loop around
/// it (or before it in the kernel), on an element of an event that only
/// `trigger.cluster` releases and that names the same slot as the copy's
/// destination (one of the event's indices is one of the destination's).
static LogicalResult verifyReleased(TmaCopyOp copy, ParallelOp kernel) {
  if (!copy.getAsync())
    return success();
  Operation *scope = copy->getParentOfType<LoopLikeOpInterface>();
  if (scope && !kernel->isProperAncestor(scope))
    scope = nullptr;
  Value root = rootBuffer(copy.getTarget());
  if (!scope) {
    bool reused = false;
    kernel.getBody().walk([&](Operation *op) {
      auto other = dyn_cast<CopyOpInterface>(op);
      if (other && op != copy.getOperation() &&
          op->getBlock()->findAncestorOpInBlock(*copy) &&
          op->isBeforeInBlock(op->getBlock()->findAncestorOpInBlock(*copy)) &&
          rootBuffer(other.getTarget()) == root)
        reused = true;
    });
    if (!reused)
      return success();
    scope = kernel;
  }
  SmallVector<Value> destination;
  viewIndices(copy.getTarget(), destination);
  bool released = false;
  scope->walk([&](EventWaitOp wait) {
    Operation *anchor = wait->getBlock()->findAncestorOpInBlock(*copy);
    if (released || !anchor || !wait->isBeforeInBlock(anchor))
      return;
    bool anyTrigger = false, allCluster = true;
    for (Operation *user : wait.getEvent().getUsers())
      if (auto trigger = dyn_cast<EventTriggerOp>(user)) {
        anyTrigger = true;
        allCluster &= trigger.getCluster();
      }
    // One slot (or a scalar event), or the slot the destination names:
    // an index of both, or for `wait e.at(o)` on N slots (slot o % N) a
    // destination index `o % N`.
    int64_t slots = wait.getEvent().getType().getNumElements();
    bool sameSlot =
        slots == 1 ||
        llvm::any_of(wait.getIndices(), [&](Value i) {
          return llvm::any_of(destination,
                              [&](Value d) { return sameIndex(i, d); });
        }) ||
        (wait.getOrder() && llvm::any_of(destination, [&](Value d) {
           return isRingSlot(d, wait.getOrder(), slots);
         }));
    released = anyTrigger && allCluster && sameSlot;
  });
  if (released)
    return success();
  InFlightDiagnostic diag = copy.emitError(
      "this multicast load writes the buffer of every block of the "
      "cluster, but nothing before it waits until the other blocks have "
      "finished reading that buffer");
  diag.attachNote() << "hint: wait, before the copy, on the element of "
                       "an event that the buffer's readers release with "
                       "`trigger.cluster`, indexed as the buffer is (`wait "
                       "empty[s]; tma.copy.async<full[s]>.multicast ... => "
                       "b[s]`)";
  return failure();
}

} // namespace

/// An event triggered across the cluster in one place and in its own block
/// in another: no one arrival count completes its phases.
static LogicalResult verifyOneTriggerScope(EventAllocOp alloc) {
  SmallVector<EventTriggerOp> triggers;
  alloc->getParentOp()->walk([&](EventTriggerOp trigger) {
    if (trigger.getEvent() == alloc.getEvent())
      triggers.push_back(trigger);
  });
  auto remote = llvm::find_if(
      triggers, [](EventTriggerOp t) { return t.getCluster(); });
  auto local = llvm::find_if(
      triggers, [](EventTriggerOp t) { return !t.getCluster(); });
  if (remote == triggers.end() || local == triggers.end())
    return success();
  InFlightDiagnostic diag = local->emitError(
      "this trigger arrives in its own block only, but the event is "
      "triggered across the cluster elsewhere, so no one arrival count "
      "completes its phases");
  diag.attachNote(remote->getLoc()) << "trigger.cluster here";
  diag.attachNote(alloc.getLoc()) << "the event is declared here";
  diag.attachNote() << "hint: trigger the event the same way everywhere "
                       "(`trigger.cluster e` in every place, or a second "
                       "event for the block's own arrivals)";
  return failure();
}

LogicalResult mlir::croq::verifyClusterCopies(ParallelOp kernel) {
  // Events first: a multicast's release check below assumes each event is
  // triggered one way.
  WalkResult events = kernel.getBody().walk([&](EventAllocOp alloc) {
    return failed(verifyOneTriggerScope(alloc)) ? WalkResult::interrupt()
                                                : WalkResult::advance();
  });
  if (events.wasInterrupted())
    return failure();
  ClusterUniformity uniformity(kernel);
  WalkResult result = kernel.getBody().walk([&](Operation *op) {
    if (auto copy = dyn_cast<TmaCopyOp>(op); copy && copy.getMulticast()) {
      // A synchronous multicast waits at a cluster barrier, which every
      // thread of every block must reach: the block's own body, or an
      // inner level's where every instance loads the same tile under the
      // same control flow (the block then issues it once).
      if (!copy.getAsync() &&
          (copy->getParentOfType<InThreadsOp>() ||
           (copy->getParentOfType<ParallelOp>() != kernel &&
            !isGroupInvariantCopy(copy, kernel)))) {
        copy.emitError("a synchronous multicast load waits at a cluster "
                       "barrier that every thread of every block reaches, "
                       "so it must be in the block's own body, or load the "
                       "same tile in every instance of an inner level, not "
                       "be in an inthreads region")
                .attachNote()
            << "hint: bind it to an event (tma.copy.async<e>.multicast) "
               "whose producer waits on an event released with "
               "trigger.cluster";
        return WalkResult::interrupt();
      }
      if (failed(verifySameTile(copy, kernel, uniformity)) ||
          failed(verifyReleased(copy, kernel)))
        return WalkResult::interrupt();
    }
    // A cluster barrier: every block of the cluster reaches it as often.
    if (isa<ClusterBarrierOp>(op) &&
        failed(verifyUniform(op, {}, "whether it runs", kernel, uniformity)))
      return WalkResult::interrupt();
    // A trigger across the cluster: the same element in every block, as
    // often (the arrival count is C times the triggering threads).
    if (auto trigger = dyn_cast<EventTriggerOp>(op);
        trigger && trigger.getCluster()) {
      SmallVector<Value> slot(trigger.getIndices());
      if (Value order = trigger.getOrder())
        slot.push_back(order);
      if (failed(verifyUniform(trigger, slot, "the element it arrives on",
                               kernel, uniformity)))
        return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}
