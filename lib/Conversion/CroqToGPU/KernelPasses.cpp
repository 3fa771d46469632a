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
#define GEN_PASS_DEF_CROQLOWERF8CONVERSIONSPASS
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

static bool isF8(Type type) {
  return isa<Float8E4M3FNType, Float8E5M2Type>(type);
}

/// `arith.extf` from an 8-bit float: the byte through cvt to f16, then
/// extended.
struct ExtendF8 : OpRewritePattern<arith::ExtFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::ExtFOp op,
                                PatternRewriter &rewriter) const override {
    Type from = op.getIn().getType();
    if (!isF8(from))
      return failure();
    Location loc = op.getLoc();
    auto i8 = rewriter.getI8Type();
    Value byte = arith::BitcastOp::create(rewriter, loc, i8, op.getIn());
    Value zero = arith::ConstantIntOp::create(rewriter, loc, i8, 0);
    Value pair = vector::FromElementsOp::create(
        rewriter, loc, VectorType::get({2}, i8), ValueRange{byte, zero});
    Value halves = NVVM::ConvertF8x2ToF16x2Op::create(
        rewriter, loc, VectorType::get({2}, rewriter.getF16Type()), pair,
        /*relu=*/false, from);
    Value half = vector::ExtractOp::create(rewriter, loc, halves, 0);
    Type to = op.getType();
    rewriter.replaceOp(op, to.isF16() ? half
                                      : arith::ExtFOp::create(rewriter, loc,
                                                              to, half)
                                            .getResult());
    return success();
  }
};

/// `arith.truncf` to an 8-bit float: from f32 through cvt.rn.satfinite.
struct TruncateToF8 : OpRewritePattern<arith::TruncFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::TruncFOp op,
                                PatternRewriter &rewriter) const override {
    Type to = op.getType();
    if (!isF8(to))
      return failure();
    Location loc = op.getLoc();
    Value value = op.getIn();
    auto f32 = rewriter.getF32Type();
    if (value.getType().getIntOrFloatBitWidth() > 32)
      value = arith::TruncFOp::create(rewriter, loc, f32, value);
    else if (!value.getType().isF32())
      value = arith::ExtFOp::create(rewriter, loc, f32, value);
    // `b` lands in the low byte: element 0 of the pair.
    auto i8 = rewriter.getI8Type();
    Value pair = NVVM::ConvertF32x2ToF8x2Op::create(
        rewriter, loc, VectorType::get({2}, i8), value, value,
        NVVM::FPRoundingMode::RN, NVVM::SaturationMode::SATFINITE,
        /*relu=*/false, to);
    Value byte = vector::ExtractOp::create(rewriter, loc, pair, 0);
    rewriter.replaceOpWithNewOp<arith::BitcastOp>(op, to, byte);
    return success();
  }
};

/// An integer to or from an 8-bit float goes through f32 (whose extf /
/// truncf the patterns above then lower).
template <typename OpTy, bool toF8>
struct IntegerF8ThroughF32 : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    Type f8 = toF8 ? op.getType() : op.getIn().getType();
    if (!isF8(f8))
      return failure();
    Location loc = op.getLoc();
    auto f32 = rewriter.getF32Type();
    if constexpr (toF8) {
      Value wide = OpTy::create(rewriter, loc, f32, op.getIn());
      rewriter.replaceOpWithNewOp<arith::TruncFOp>(op, f8, wide);
    } else {
      Value wide = arith::ExtFOp::create(rewriter, loc, f32, op.getIn());
      rewriter.replaceOpWithNewOp<OpTy>(op, op.getType(), wide);
    }
    return success();
  }
};

struct CroqLowerF8ConversionsPass
    : mlir::croq::impl::CroqLowerF8ConversionsPassBase<
          CroqLowerF8ConversionsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ExtendF8, TruncateToF8,
                 IntegerF8ThroughF32<arith::SIToFPOp, true>,
                 IntegerF8ThroughF32<arith::UIToFPOp, true>,
                 IntegerF8ThroughF32<arith::FPToSIOp, false>,
                 IntegerF8ThroughF32<arith::FPToUIOp, false>>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
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
