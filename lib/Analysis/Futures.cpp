//===- Futures.cpp - where futures are waited -----------------------------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#include "Croq/Analysis/Futures.h"
#include "Croq/Dialect/Croq/IR/CroqOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;
using namespace mlir::croq;

Value mlir::croq::getAsyncFuture(Operation *op) {
  if (auto copy = dyn_cast<DmaCopyOp>(op); copy && copy.getAsync())
    return copy.getFuture();
  if (auto copy = dyn_cast<TmaCopyOp>(op);
      copy && copy.getAsync() && copy.isLoad())
    return copy.getFuture();
  if (auto mma = dyn_cast<MmaOp>(op); mma && mma.getAsync())
    return mma.getResult();
  return {};
}

bool mlir::croq::isAwaited(Value future) {
  SmallVector<Value> worklist{future};
  llvm::SmallPtrSet<Value, 16> visited;
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    if (!visited.insert(v).second)
      continue;
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      if (isa<WaitOp, EventTriggerOp>(user))
        return true;
      if (isa<SwapOp, RotateOp, arith::SelectOp>(user)) {
        llvm::append_range(worklist, user->getResults());
      } else if (auto loop = dyn_cast<scf::ForOp>(user)) {
        unsigned n = use.getOperandNumber() - loop.getNumControlOperands();
        worklist.push_back(loop.getRegionIterArg(n));
        worklist.push_back(loop.getResult(n));
      } else if (auto loop = dyn_cast<scf::WhileOp>(user)) {
        unsigned n = use.getOperandNumber();
        worklist.push_back(loop.getBeforeArguments()[n]);
      } else if (isa<scf::YieldOp, scf::ConditionOp, YieldOp>(user)) {
        Operation *parent = user->getParentOp();
        unsigned n = use.getOperandNumber();
        if (isa<scf::ConditionOp>(user)) {
          if (n == 0)
            continue; // The condition itself.
          --n;
          auto loop = cast<scf::WhileOp>(parent);
          worklist.push_back(loop.getAfterArguments()[n]);
          worklist.push_back(loop.getResult(n));
          continue;
        }
        if (n < parent->getNumResults())
          worklist.push_back(parent->getResult(n));
        if (auto loop = dyn_cast<scf::ForOp>(parent))
          worklist.push_back(loop.getRegionIterArg(n));
        if (auto loop = dyn_cast<scf::WhileOp>(parent);
            loop && user->getParentRegion() == &loop.getAfter())
          worklist.push_back(loop.getBeforeArguments()[n]);
      }
    }
  }
  return false;
}
