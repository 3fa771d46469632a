//===- ResultsToOutputs.cpp - Returned tensors as output arguments --------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#include "Croq/Dialect/Croq/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::croq {
#define GEN_PASS_DEF_CROQRESULTSTOOUTPUTSPASS
#include "Croq/Dialect/Croq/Transforms/Passes.h.inc"
} // namespace mlir::croq

using namespace mlir;
using namespace mlir::croq;

namespace {

struct ResultsToOutputs
    : croq::impl::CroqResultsToOutputsPassBase<ResultsToOutputs> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal() && failed(convert(func)))
        return signalPassFailure();
  }

  LogicalResult convert(func::FuncOp func) {
    FunctionType type = func.getFunctionType();
    SmallVector<unsigned> tensorResults;
    for (auto [i, t] : llvm::enumerate(type.getResults()))
      if (isa<MemRefType>(t))
        tensorResults.push_back(i);
    if (tensorResults.empty())
      return success();
    SmallVector<func::ReturnOp> returns;
    func.walk([&](func::ReturnOp r) { returns.push_back(r); });
    if (returns.size() != 1)
      return func.emitError("a function that returns tensors needs exactly "
                            "one return");
    func::ReturnOp ret = returns.front();
    // Each returned tensor: an allocation in the function's entry block.
    SmallVector<memref::AllocOp> allocs;
    for (unsigned i : tensorResults) {
      auto alloc = ret.getOperand(i).getDefiningOp<memref::AllocOp>();
      if (!alloc || alloc->getBlock() != &func.getBody().front() ||
          alloc.getType().getMemorySpace())
        return ret.emitError("result ")
               << i << " is not a global tensor this function declares; "
               << "return a tensor declared in the function's body";
      if (llvm::is_contained(allocs, alloc))
        return ret.emitError("the same tensor is returned twice");
      allocs.push_back(alloc);
    }
    Block &entry = func.getBody().front();
    for (auto [n, alloc] : llvm::enumerate(allocs)) {
      MemRefType t = alloc.getType();
      unsigned index = func.getNumArguments();
      if (failed(func.insertArgument(index, t, {}, alloc.getLoc())))
        return failure();
      std::string name =
          allocs.size() == 1 ? "result" : "result" + std::to_string(n);
      func.setArgAttr(index, "croq.name",
                      StringAttr::get(func.getContext(), name));
      Value arg = entry.getArgument(index);
      // Run-time extents of the declaration must match the caller's tensor:
      // checked as early as their values allow, before any launch when they
      // come from the arguments.
      Operation *after = nullptr; // the last op that defines an extent
      for (Value size : alloc.getDynamicSizes())
        if (Operation *def = size.getDefiningOp();
            def && def->getBlock() == &entry &&
            (!after || after->isBeforeInBlock(def)))
          after = def;
      OpBuilder b(&entry, after ? std::next(after->getIterator()) : entry.begin());
      unsigned dynamic = 0;
      for (int64_t d = 0; d < t.getRank(); ++d) {
        if (!t.isDynamicDim(d))
          continue;
        Value want = alloc.getDynamicSizes()[dynamic++];
        Value have = memref::DimOp::create(b, alloc.getLoc(), arg, d);
        Value same = arith::CmpIOp::create(b, alloc.getLoc(),
                                           arith::CmpIPredicate::eq, have, want);
        cf::AssertOp::create(b, alloc.getLoc(), same,
                             "dimension " + std::to_string(d) + " of '" + name +
                                 "' differs from the shape the function "
                                 "declares");
      }
      alloc.replaceAllUsesWith(arg);
      alloc.erase();
    }
    // Drop the tensor results.
    SmallVector<Value> kept;
    SmallVector<Type> keptTypes;
    for (auto [i, v] : llvm::enumerate(ret.getOperands()))
      if (!llvm::is_contained(tensorResults, i)) {
        kept.push_back(v);
        keptTypes.push_back(v.getType());
      }
    ret->setOperands(kept);
    func.setFunctionType(FunctionType::get(
        func.getContext(), func.getArgumentTypes(), keptTypes));
    return success();
  }
};

} // namespace
