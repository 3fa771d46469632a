//===- FastMath.cpp - nvcc's --use_fast_math for croq's kernels ------------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//
//
// Approximate f32 division and square roots, and f32 denormals flushed to
// zero, in every kernel of a gpu.module lowered to the LLVM dialect: the
// fast-math flags the NVPTX backend reads per instruction, and the
// denormal mode it reads per function.
//
//===----------------------------------------------------------------------===//

#include "Croq/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace mlir::croq {
#define GEN_PASS_DEF_CROQFASTMATHPASS
#include "Croq/Conversion/Passes.h.inc"
} // namespace mlir::croq

using namespace mlir;

namespace {

struct CroqFastMathPass
    : mlir::croq::impl::CroqFastMathPassBase<CroqFastMathPass> {
  void runOnOperation() override {
    constexpr LLVM::FastmathFlags fast = LLVM::FastmathFlags::arcp |
                                         LLVM::FastmathFlags::afn |
                                         LLVM::FastmathFlags::contract;
    MLIRContext *context = &getContext();
    getOperation().walk([&](Operation *op) {
      if (auto func = dyn_cast<LLVM::LLVMFuncOp>(op)) {
        func.setDenormalFpMathF32Attr(
            StringAttr::get(context, "preserve-sign,preserve-sign"));
        return;
      }
      // nvcc's --use_fast_math changes f32 arithmetic only.
      auto flags = dyn_cast<LLVM::FastmathFlagsInterface>(op);
      auto isF32 = [](Type t) { return getElementTypeOrSelf(t).isF32(); };
      if (!flags || !llvm::all_of(op->getOperandTypes(), isF32) ||
          !llvm::all_of(op->getResultTypes(), isF32))
        return;
      op->setAttr(flags.getFastmathAttrName(),
                  LLVM::FastmathFlagsAttr::get(
                      context, flags.getFastmathAttr().getValue() | fast));
    });
  }
};

} // namespace
