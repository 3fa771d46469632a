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
#include "mlir/Dialect/Arith/Transforms/Passes.h"
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
#define GEN_PASS_DEF_CROQMARKLAUNCHESPASS
#define GEN_PASS_DEF_CROQLOWERF8CONVERSIONSPASS
#define GEN_PASS_DEF_CROQCHECKLOWEREDPASS
#include "Croq/Conversion/Passes.h.inc"
} // namespace mlir::croq

#include <cmath>

using namespace mlir;
using namespace mlir::croq;
using namespace mlir::croq::detail;

namespace {

struct CroqCheckLoweredPass
    : mlir::croq::impl::CroqCheckLoweredPassBase<CroqCheckLoweredPass> {
  void runOnOperation() override {
    // The first op LLVM IR cannot take, in program order; a cast left by a
    // conversion only when no such op explains it.
    Operation *foreign = nullptr, *cast = nullptr;
    getOperation().getBodyRegion().walk([&](Operation *op) {
      if (isa_and_nonnull<LLVM::LLVMDialect, NVVM::NVVMDialect>(
              op->getDialect()))
        return WalkResult::advance();
      if (isa<UnrealizedConversionCastOp>(op)) {
        if (!cast)
          cast = op;
        return WalkResult::advance();
      }
      foreign = op;
      return WalkResult::interrupt();
    });
    Operation *at = foreign ? foreign : cast;
    if (!at)
      return;
    InFlightDiagnostic diag = at->emitError("internal error: croq did not ");
    if (foreign) {
      diag << "lower '" << foreign->getName() << "' to LLVM";
    } else {
      diag << "finish a type conversion here (";
      llvm::interleaveComma(cast->getOperandTypes(), diag);
      diag << " to ";
      llvm::interleaveComma(cast->getResultTypes(), diag);
      diag << ")";
    }
    diag.attachNote() << "this is a croq bug; please report it with the "
                         "program (croqc --emit=mlir shows the IR croq "
                         "started from)";
    signalPassFailure();
  }
};

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
        // `.maxntid` of a block whose size is a run-time value.
        if (std::optional<int64_t> n = h.getMaxThreads();
            n && !func.getKnownBlockSizeAttr())
          func->setAttr(NVVM::NVVMDialect::getMaxntidAttrName(),
                        DenseI32ArrayAttr::get(
                            &getContext(), {static_cast<int32_t>(*n), 1, 1}));
        // `.reqnctapercluster`: a plain launch forms the clusters.
        if (std::optional<int64_t> n = h.getCluster(); n && *n > 1)
          func->setAttr(NVVM::NVVMDialect::getClusterDimAttrName(),
                        DenseI32ArrayAttr::get(
                            &getContext(), {static_cast<int32_t>(*n), 1, 1}));
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

struct CroqMarkLaunchesPass
    : mlir::croq::impl::CroqMarkLaunchesPassBase<
          CroqMarkLaunchesPass> {
  void runOnOperation() override {
    getOperation().walk([&](gpu::LaunchFuncOp launch) {
      auto kernel = SymbolTable::lookupNearestSymbolFrom<gpu::GPUFuncOp>(
          launch, launch.getKernel());
      if (kernel && kernel->hasAttr(kCooperativeAttrName))
        launch->setAttr(kCooperativeAttrName, UnitAttr::get(&getContext()));
      if (auto cluster = kernel ? kernel->getAttrOfType<DenseI32ArrayAttr>(
                                      NVVM::NVVMDialect::getClusterDimAttrName())
                                : DenseI32ArrayAttr();
          cluster && !cluster.empty())
        launch->setAttr(kClusterBlocksAttrName,
                        IntegerAttr::get(IntegerType::get(&getContext(), 64),
                                         cluster[0]));
    });
  }
};

} // namespace

namespace {

static bool isF8(Type type) {
  return isa<Float8E4M3FNType, Float8E5M2Type>(type);
}

/// `value`, a float, as an f32: truncated or extended. (From f64 this rounds
/// once more than a direct conversion to a narrow float would.)
static Value toF32(PatternRewriter &rewriter, Location loc, Value value) {
  Type f32 = rewriter.getF32Type();
  if (value.getType().getIntOrFloatBitWidth() > 32)
    return arith::TruncFOp::create(rewriter, loc, f32, value);
  if (!value.getType().isF32())
    return arith::ExtFOp::create(rewriter, loc, f32, value);
  return value;
}

/// `value`, an f32, as a float of type `to`: truncated or extended.
static Value fromF32(PatternRewriter &rewriter, Location loc, Value value,
                     Type to) {
  if (to.getIntOrFloatBitWidth() > 32)
    return arith::ExtFOp::create(rewriter, loc, to, value);
  if (!to.isF32())
    return arith::TruncFOp::create(rewriter, loc, to, value);
  return value;
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
    Value value = toF32(rewriter, loc, op.getIn());
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

/// The FN floats narrower than a byte, which the H200 has no conversion
/// instruction for (sm_100 has): sign, `exponentBits`, `mantissaBits`, all
/// encodings finite.
struct SmallFloat {
  unsigned exponentBits, mantissaBits;
  unsigned width() const { return 1 + exponentBits + mantissaBits; }
  int bias() const { return (1 << (exponentBits - 1)) - 1; }
  /// The encoding of the largest finite magnitude: every bit set.
  int64_t maxCode() const { return (int64_t(1) << (width() - 1)) - 1; }
};

static std::optional<SmallFloat> smallFloat(Type type) {
  if (isa<Float6E2M3FNType>(type))
    return SmallFloat{2, 3};
  if (isa<Float6E3M2FNType>(type))
    return SmallFloat{3, 2};
  if (isa<Float4E2M1FNType>(type))
    return SmallFloat{2, 1};
  return std::nullopt;
}

/// Integer and f32 constants and operations for the software conversions.
struct BitBuilder {
  PatternRewriter &rewriter;
  Location loc;
  Type i32 = rewriter.getI32Type();
  Type f32 = rewriter.getF32Type();
  Value i(int64_t v) { return arith::ConstantIntOp::create(rewriter, loc, i32, v); }
  Value f(double v) {
    return arith::ConstantFloatOp::create(rewriter, loc, cast<FloatType>(f32),
                                          APFloat(static_cast<float>(v)));
  }
  Value shr(Value a, int64_t b) { return arith::ShRUIOp::create(rewriter, loc, a, i(b)); }
  Value shl(Value a, int64_t b) { return arith::ShLIOp::create(rewriter, loc, a, i(b)); }
  Value band(Value a, int64_t b) { return arith::AndIOp::create(rewriter, loc, a, i(b)); }
  Value bor(Value a, Value b) { return arith::OrIOp::create(rewriter, loc, a, b); }
  Value add(Value a, Value b) { return arith::AddIOp::create(rewriter, loc, a, b); }
  Value cmp(arith::CmpIPredicate p, Value a, Value b) {
    return arith::CmpIOp::create(rewriter, loc, p, a, b);
  }
  Value select(Value c, Value a, Value b) {
    return arith::SelectOp::create(rewriter, loc, c, a, b);
  }
};

/// `arith.extf` from a sub-byte float: its fields decoded into an f32 (a
/// subnormal as its mantissa times the smallest subnormal), then extended
/// or truncated (exactly) to the result type.
struct ExtendSmallFloat : OpRewritePattern<arith::ExtFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::ExtFOp op,
                                PatternRewriter &rewriter) const override {
    std::optional<SmallFloat> sf = smallFloat(op.getIn().getType());
    if (!sf)
      return failure();
    BitBuilder b{rewriter, op.getLoc()};
    unsigned e = sf->exponentBits, m = sf->mantissaBits;
    Value code = arith::BitcastOp::create(
        rewriter, b.loc, rewriter.getIntegerType(sf->width()), op.getIn());
    Value w = arith::ExtUIOp::create(rewriter, b.loc, b.i32, code);
    Value sign = b.band(b.shr(w, e + m), 1);
    Value exponent = b.band(b.shr(w, m), (1 << e) - 1);
    Value mantissa = b.band(w, (1 << m) - 1);
    Value normalBits = b.bor(
        b.bor(b.shl(sign, 31),
              b.shl(b.add(exponent, b.i(127 - sf->bias())), 23)),
        b.shl(mantissa, 23 - m));
    Value normal = arith::BitcastOp::create(rewriter, b.loc, b.f32, normalBits);
    Value magnitude = arith::MulFOp::create(
        rewriter, b.loc,
        arith::UIToFPOp::create(rewriter, b.loc, b.f32, mantissa),
        b.f(std::ldexp(1.0, 1 - sf->bias() - static_cast<int>(m))));
    Value subnormal = b.select(
        b.cmp(arith::CmpIPredicate::ne, sign, b.i(0)),
        arith::NegFOp::create(rewriter, b.loc, magnitude), magnitude);
    Value value = b.select(b.cmp(arith::CmpIPredicate::eq, exponent, b.i(0)),
                           subnormal, normal);
    rewriter.replaceOp(op, fromF32(rewriter, b.loc, value, op.getType()));
    return success();
  }
};

/// `arith.truncf` to a sub-byte float: from f32, rounding to nearest even
/// and saturating to the largest finite value (the formats have no
/// infinity; NaN becomes the largest magnitude too).
struct TruncateToSmallFloat : OpRewritePattern<arith::TruncFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::TruncFOp op,
                                PatternRewriter &rewriter) const override {
    Type to = op.getType();
    std::optional<SmallFloat> sf = smallFloat(to);
    if (!sf)
      return failure();
    BitBuilder b{rewriter, op.getLoc()};
    unsigned m = sf->mantissaBits;
    int bias = sf->bias();
    Value value = toF32(rewriter, b.loc, op.getIn());
    Value bits = arith::BitcastOp::create(rewriter, b.loc, b.i32, value);
    Value sign = b.shr(bits, 31);
    Value absBits = b.band(bits, 0x7fffffff);
    Value a = arith::BitcastOp::create(rewriter, b.loc, b.f32, absBits);
    // Below the smallest normal: a multiple of the smallest subnormal,
    // rounded to nearest even by the f32 addition of 2^23.
    Value scaled = arith::MulFOp::create(rewriter, b.loc, a,
                                         b.f(std::ldexp(1.0, m + bias - 1)));
    Value rounded = arith::SubFOp::create(
        rewriter, b.loc, arith::AddFOp::create(rewriter, b.loc, scaled, b.f(8388608.0)),
        b.f(8388608.0));
    Value sub = arith::FPToUIOp::create(rewriter, b.loc, b.i32, rounded);
    // A normal: the exponent rebiased and the mantissa rounded to nearest
    // even on the combined code, so that a carry reaches the exponent.
    Value exponent = b.add(b.shr(absBits, 23), b.i(bias - 127));
    Value mantissa = b.band(absBits, 0x7fffff);
    Value kept = b.shr(mantissa, 23 - m);
    Value rest = b.band(mantissa, (1 << (23 - m)) - 1);
    Value half = b.i(1 << (22 - m));
    Value up = arith::OrIOp::create(
        rewriter, b.loc, b.cmp(arith::CmpIPredicate::ugt, rest, half),
        arith::AndIOp::create(
            rewriter, b.loc, b.cmp(arith::CmpIPredicate::eq, rest, half),
            b.cmp(arith::CmpIPredicate::ne, b.band(kept, 1), b.i(0))));
    Value normal = b.add(b.add(b.shl(exponent, m), kept),
                         arith::ExtUIOp::create(rewriter, b.loc, b.i32, up));
    Value isSub = arith::CmpFOp::create(rewriter, b.loc, arith::CmpFPredicate::OLT,
                                        a, b.f(std::ldexp(1.0, 1 - bias)));
    Value code = b.select(isSub, sub, normal);
    // Saturate: past the largest finite value, and NaN (unordered).
    Value tooLarge = arith::OrIOp::create(
        rewriter, b.loc, b.cmp(arith::CmpIPredicate::ugt, absBits, b.i(0x7f800000)),
        b.cmp(arith::CmpIPredicate::sgt, code, b.i(sf->maxCode())));
    code = b.select(tooLarge, b.i(sf->maxCode()), code);
    Value out = b.bor(b.shl(sign, sf->width() - 1), code);
    Value narrow = arith::TruncIOp::create(
        rewriter, b.loc, rewriter.getIntegerType(sf->width()), out);
    rewriter.replaceOpWithNewOp<arith::BitcastOp>(op, to, narrow);
    return success();
  }
};

struct CroqLowerF8ConversionsPass
    : mlir::croq::impl::CroqLowerF8ConversionsPassBase<
          CroqLowerF8ConversionsPass> {
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    // Arithmetic on these floats (negation, comparison, min/max, and the
    // conversions to and from integers) runs in f32 between an extf and a
    // truncf, by MLIR's arith emulation; those two are lowered below.
    {
      Type narrow[] = {Float8E4M3FNType::get(context),
                       Float8E5M2Type::get(context),
                       Float6E2M3FNType::get(context),
                       Float6E3M2FNType::get(context),
                       Float4E2M1FNType::get(context)};
      TypeConverter converter;
      arith::populateEmulateUnsupportedFloatsConversions(
          converter, narrow, Float32Type::get(context));
      RewritePatternSet emulation(context);
      arith::populateEmulateUnsupportedFloatsPatterns(emulation, converter);
      ConversionTarget target(*context);
      arith::populateEmulateUnsupportedFloatsLegality(target, converter);
      target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
      if (failed(applyPartialConversion(getOperation(), target,
                                        std::move(emulation))))
        return signalPassFailure();
    }
    RewritePatternSet patterns(&getContext());
    patterns.add<ExtendF8, TruncateToF8, ExtendSmallFloat,
                 TruncateToSmallFloat>(&getContext());
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
