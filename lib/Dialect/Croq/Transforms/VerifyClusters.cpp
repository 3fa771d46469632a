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
//   multicast load is ordered by a cluster barrier instead (croq-to-gpu).
//
//===----------------------------------------------------------------------===//

#include "VerifyClusters.h"

#include "Croq/Dialect/Croq/IR/CroqOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
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

/// The index operands that select the tile a view of a global tensor
/// names, from the view back to the tensor.
static void viewIndices(Value view, SmallVectorImpl<Value> &indices) {
  while (Operation *op = view.getDefiningOp()) {
    Value next;
    for (Value operand : op->getOperands()) {
      if (isa<MemRefType>(operand.getType()) && !next)
        next = operand;
      else if (operand.getType().isIntOrIndex())
        indices.push_back(operand);
    }
    if (!next)
      return;
    view = next;
  }
}

static LogicalResult reportVarying(Operation *copy, Value source,
                                   const Twine &what) {
  InFlightDiagnostic diag =
      copy->emitError() << "a multicast load gives every block of the "
                           "cluster the first block's tile, but "
                        << what
                        << " differs between the blocks of a cluster";
  Operation *def = source.getDefiningOp();
  if (isa_and_nonnull<ClusterRankOp>(def))
    diag.attachNote(def->getLoc())
        << "it depends on the block's rank in its cluster";
  else if (def)
    diag.attachNote(def->getLoc())
        << "it depends on this value, which croq does not follow (it comes "
           "from memory or from a region)";
  else if (isa<ParallelOp>(cast<BlockArgument>(source).getOwner()->getParentOp()))
    diag.attachNote(copy->getLoc())
        << "it depends on the block level's first index, along which the "
           "clusters are formed";
  else
    diag.attachNote(copy->getLoc())
        << "it depends on a value carried around a loop, which croq does "
           "not follow";
  diag.attachNote() << "hint: multicast the operand that the blocks of a "
                       "cluster share (indexed by the other block indices, "
                       "or by the first one divided by the cluster size), "
                       "and copy the others with a plain tma.copy";
  return failure();
}

/// The loops and branches around `copy`, up to its kernel, are the same in
/// every block of the cluster, and so are its coordinates.
static LogicalResult verifySameTile(TmaCopyOp copy, ParallelOp kernel,
                                    ClusterUniformity &uniformity) {
  SmallVector<Value> indices;
  viewIndices(copy.getSource(), indices);
  for (Value index : indices)
    if (Value v = uniformity.varyingSource(index))
      return reportVarying(copy, v, "the tile it loads");
  for (Operation *p = copy->getParentOp(); p != kernel.getOperation();
       p = p->getParentOp()) {
    SmallVector<Value> controls;
    if (auto branch = dyn_cast<scf::IfOp>(p))
      controls.push_back(branch.getCondition());
    else if (auto loop = dyn_cast<scf::ForOp>(p))
      controls.append({loop.getLowerBound(), loop.getUpperBound(),
                       loop.getStep()});
    else if (auto loop = dyn_cast<scf::WhileOp>(p))
      controls.push_back(loop.getConditionOp().getCondition());
    for (Value control : controls)
      if (Value v = uniformity.varyingSource(control))
        return reportVarying(copy, v, "whether it runs");
  }
  return success();
}

/// A multicast copy in a loop of its role waits first, in that loop, on an
/// event that every block's readers release across the cluster.
static LogicalResult verifyReleased(TmaCopyOp copy) {
  if (!copy.getAsync())
    return success();
  Operation *loop = copy->getParentOfType<LoopLikeOpInterface>();
  auto role = copy->getParentOfType<InThreadsOp>();
  if (!loop || (role && !role->isProperAncestor(loop)))
    return success();
  bool released = false;
  loop->walk([&](EventWaitOp wait) {
    Operation *anchor = wait->getBlock()->findAncestorOpInBlock(*copy);
    if (released || !anchor || !wait->isBeforeInBlock(anchor))
      return;
    Value event = wait.getEvent();
    bool anyTrigger = false, allCluster = true;
    for (Operation *user : event.getUsers())
      if (auto trigger = dyn_cast<EventTriggerOp>(user)) {
        anyTrigger = true;
        allCluster &= trigger.getCluster();
      }
    released = anyTrigger && allCluster;
  });
  if (released)
    return success();
  InFlightDiagnostic diag = copy.emitError(
      "this multicast load writes the buffer of every block of the "
      "cluster, but nothing in its loop waits until the other blocks have "
      "finished reading it");
  diag.attachNote() << "hint: wait, before the copy, on an event that the "
                       "buffer's readers release with `trigger.cluster`, "
                       "as they release the slot in every block of the "
                       "cluster";
  return failure();
}

} // namespace

LogicalResult mlir::croq::verifyClusterCopies(ParallelOp kernel) {
  ClusterUniformity uniformity(kernel);
  WalkResult result = kernel.getBody().walk([&](TmaCopyOp copy) {
    if (!copy.getMulticast())
      return WalkResult::advance();
    if (failed(verifySameTile(copy, kernel, uniformity)) ||
        failed(verifyReleased(copy)))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}
