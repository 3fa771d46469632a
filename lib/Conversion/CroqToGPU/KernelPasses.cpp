//===- KernelPasses.cpp - passes over outlined kernels ----------------------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#include "Croq/Conversion/CroqToGPU/CroqToGPU.h"
#include "Common.h"
#include "Croq/Analysis/DivergenceAnalysis.h"
#include "Croq/Analysis/Roles.h"
#include "Croq/Conversion/Passes.h"
#include "Croq/Dialect/Croq/IR/CroqOps.h"
#include "Croq/Dialect/Croq/Utils/TileAlgebra.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Func/Transforms/FuncConversions.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/DialectConversion.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <limits>

namespace mlir::croq {
#define GEN_PASS_DEF_CROQBOUNDKERNELREGISTERSPASS
#define GEN_PASS_DEF_CROQUNROLLFRAGMENTVECTORSPASS
#define GEN_PASS_DEF_CROQMARKCOOPERATIVELAUNCHESPASS
#include "Croq/Conversion/Passes.h.inc"
} // namespace mlir::croq

using namespace mlir;
using namespace mlir::croq;
using namespace mlir::croq::detail;

namespace {

struct CroqBoundKernelRegistersPass
    : mlir::croq::impl::CroqBoundKernelRegistersPassBase<
          CroqBoundKernelRegistersPass> {
  void runOnOperation() override {
    auto i32 = IntegerType::get(&getContext(), 32);
    for (auto func : getOperation().getOps<gpu::GPUFuncOp>()) {
      // [[launch_bounds(_, N)]] and [[maxnreg(N)]] of the kernel.
      SmallVector<LaunchHintsOp> hints;
      func.walk([&](LaunchHintsOp h) { hints.push_back(h); });
      for (LaunchHintsOp h : hints) {
        if (std::optional<int64_t> n = h.getMinBlocks())
          func->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                        IntegerAttr::get(i32, *n));
        if (std::optional<int64_t> n = h.getMaxRegisters())
          func->setAttr(NVVM::NVVMDialect::getMaxnregAttrName(),
                        IntegerAttr::get(i32, *n));
        // The host launches it with cuLaunchCooperativeKernel.
        if (h.getCooperative())
          func->setAttr(kCooperativeAttrName, UnitAttr::get(&getContext()));
        h.erase();
      }
      if (!func.isKernel() || !func.getKnownBlockSizeAttr() ||
          func->hasAttr(NVVM::NVVMDialect::getMinctasmAttrName()))
        continue;
      WalkResult moves = func.walk([](NVVM::SetMaxRegisterOp) {
        return WalkResult::interrupt();
      });
      if (moves.wasInterrupted())
        func->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                      IntegerAttr::get(IntegerType::get(&getContext(), 32), 1));
    }
  }
};

} // namespace

namespace {

struct CroqMarkCooperativeLaunchesPass
    : mlir::croq::impl::CroqMarkCooperativeLaunchesPassBase<
          CroqMarkCooperativeLaunchesPass> {
  void runOnOperation() override {
    getOperation().walk([&](gpu::LaunchFuncOp launch) {
      auto kernel = SymbolTable::lookupNearestSymbolFrom<gpu::GPUFuncOp>(
          launch, launch.getKernel());
      if (kernel && kernel->hasAttr(kCooperativeAttrName))
        launch->setAttr(kCooperativeAttrName, UnitAttr::get(&getContext()));
    });
  }
};

} // namespace

namespace {

struct CroqUnrollFragmentVectorsPass
    : mlir::croq::impl::CroqUnrollFragmentVectorsPassBase<
          CroqUnrollFragmentVectorsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    vector::populateVectorShapeCastLoweringPatterns(patterns);
    vector::populateVectorBroadcastLoweringPatterns(patterns);
    // The LLVM lowering of an n-D vector.to_elements (a fragment read back
    // for a store) extracts elements from the LLVM array directly.
    vector::populateVectorToElementsUnrollPatterns(patterns);
    vector::populateVectorFromElementsUnrollPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
