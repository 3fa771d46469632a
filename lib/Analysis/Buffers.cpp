//===- Buffers.cpp - the buffers a memref value names ---------------------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#include "Croq/Analysis/Buffers.h"
#include "Croq/Dialect/Croq/IR/CroqOps.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace mlir::croq;

Buffers mlir::croq::buffersOf(Value value) {
  Buffers result;
  SmallVector<Value> worklist{value};
  llvm::SmallPtrSet<Value, 16> visited;
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    if (!visited.insert(v).second)
      continue;
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      Operation *owner = arg.getOwner()->getParentOp();
      if (auto loop = dyn_cast<scf::ForOp>(owner)) {
        if (arg.getArgNumber() == 0) {
          result.unknown = true;
          continue;
        }
        unsigned i = arg.getArgNumber() - 1;
        worklist.push_back(loop.getInitArgs()[i]);
        worklist.push_back(loop.getBody()->getTerminator()->getOperand(i));
        continue;
      }
      // A kernel argument (a global tensor) is a buffer of its own.
      if (isa<FunctionOpInterface>(owner)) {
        result.roots.insert(v);
        continue;
      }
      result.unknown = true;
      continue;
    }
    Operation *def = v.getDefiningOp();
    if (isa<memref::AllocOp, memref::AllocaOp>(def)) {
      result.roots.insert(v);
      continue;
    }
    if (auto loop = dyn_cast<scf::ForOp>(def)) {
      unsigned i = cast<OpResult>(v).getResultNumber();
      worklist.push_back(loop.getInitArgs()[i]);
      worklist.push_back(loop.getBody()->getTerminator()->getOperand(i));
      continue;
    }
    if (auto ifOp = dyn_cast<scf::IfOp>(def)) {
      unsigned i = cast<OpResult>(v).getResultNumber();
      for (Region &r : ifOp->getRegions())
        if (!r.empty())
          worklist.push_back(r.front().getTerminator()->getOperand(i));
      continue;
    }
    if (auto region = dyn_cast<InThreadsOp>(def)) {
      // A future the region yields: its value in the region's threads, the
      // else value in the others.
      unsigned i = cast<OpResult>(v).getResultNumber();
      worklist.push_back(region.getYielded(i));
      worklist.push_back(region.getInits()[i]);
      continue;
    }
    if (auto copy = dyn_cast<DmaCopyOp>(def)) {
      worklist.push_back(copy.getTarget());
      continue;
    }
    if (auto copy = dyn_cast<TmaCopyOp>(def)) {
      worklist.push_back(copy.getTarget());
      continue;
    }
    // Views (subspan, chunkat, subview, cast, ...), future.data, dma.any,
    // swap, rotate, select: the buffers of their memref / future operands.
    bool any = false;
    for (Value operand : def->getOperands())
      if (isa<MemRefType, FutureType>(operand.getType())) {
        worklist.push_back(operand);
        any = true;
      }
    if (!any)
      result.unknown = true;
  }
  return result;
}
