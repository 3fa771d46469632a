//===- WarpMma.cpp - warp-level MMA as nvgpu.mma.sync -----------------------===//
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

using namespace mlir;
using namespace mlir::croq;
using namespace mlir::croq::detail;

namespace mlir::croq::detail {

/// The mma.sync instruction tile is m16n8 by 256 bits of K: m16n8k16 for
/// f16 and bf16, m16n8k8 for tf32 (f32 operands), m16n8k32 for s8. Each
/// operand register holds 32 bits, `perRegister` elements along K.
static constexpr int64_t kTileM = 16, kTileN = 8;

namespace {
struct WarpTile {
  int64_t k;
  int64_t perRegister;
};
} // namespace

static WarpTile warpTile(Type operand) {
  int64_t bits = operand.getIntOrFloatBitWidth();
  return {256 / bits, 32 / bits};
}

/// Number of instruction tiles of an operand fragment: its (outer, K) tiles
/// in the orientation its MMA reads, which the type alone does not say, so
/// the larger of the two. They agree unless a fragment pads a tile.
static int64_t operandTiles(FragType type) {
  int64_t outer = type.getRole() == FragRole::A ? kTileM : kTileN;
  int64_t k = warpTile(type.getElementType()).k;
  ArrayRef<int64_t> shape = type.getShape();
  return std::max(llvm::divideCeil(shape[0], outer) * llvm::divideCeil(shape[1], k),
                  llvm::divideCeil(shape[1], outer) * llvm::divideCeil(shape[0], k));
}

/// Register type of a fragment, or null when it has no mma.sync form.
VectorType fragVectorType(FragType type) {
  Type element = type.getElementType();
  // An accumulator tile's four registers: two rows of two columns.
  if (type.getRole() == FragRole::Acc)
    return VectorType::get({type.getRegisterCount() / 4, 2, 2}, element);
  int64_t registers = type.getRole() == FragRole::A ? 4 : 2;
  return VectorType::get(
      {operandTiles(type), registers, warpTile(element).perRegister}, element);
}

bool accumulatesInto(Type operand, Type acc) {
  if (operand.isF16() || isa<Float8E4M3FNType, Float8E5M2Type>(operand))
    return acc.isF16() || acc.isF32();
  if (operand.isBF16() || operand.isF32())
    return acc.isF32();
  return operand.isInteger(8) && acc.isInteger(32);
}

namespace {
/// An (M, N, K) instruction shape.
struct WarpShape {
  int64_t m, n, k;
  bool operator==(const WarpShape &o) const {
    return m == o.m && n == o.n && k == o.k;
  }
};
} // namespace

/// The warp MMA shapes of the language for operands of type `operand`:
/// those of PTX's mma.sync and wmma that sm_80 and newer have (croq lowers
/// each to m16n8 tiles, padding the smaller ones).
static ArrayRef<WarpShape> warpMmaShapes(Type operand) {
  static constexpr WarpShape half[] = {{16, 8, 16}, {16, 8, 8},
                                       {16, 16, 16}, {32, 8, 16},
                                       {8, 32, 16},  {8, 8, 4}};
  static constexpr WarpShape bf16[] = {{16, 8, 16}, {16, 8, 8}, {16, 16, 16},
                                       {32, 8, 16}, {8, 32, 16}};
  static constexpr WarpShape tf32[] = {{16, 8, 8}, {16, 8, 4}, {16, 16, 8}};
  static constexpr WarpShape s8[] = {{16, 8, 16}, {16, 8, 32}, {8, 8, 16},
                                     {16, 16, 16}, {32, 8, 16}, {8, 32, 16}};
  if (operand.isF16())
    return half;
  if (operand.isBF16())
    return bf16;
  if (operand.isF32())
    return tf32;
  if (operand.isInteger(8))
    return s8;
  return {};
}

/// True when `op` is in the body of a thread-level parallel that names the
/// 32 threads of the warp it is directly in: the comma form `parallel w by
/// n : group, lane by 32 : thread`, whose lanes run the body together as
/// the warp would.
static bool inWarpLanes(Operation *op) {
  auto lanes = op->getParentOfType<ParallelOp>();
  if (!lanes || lanes.getLevel() != Level::Thread)
    return false;
  auto warp = dyn_cast_or_null<ParallelOp>(lanes->getParentOp());
  return warp && warp.getLevel() == Level::Warp &&
         lanes.getStaticInstanceCount() == std::optional<int64_t>(32);
}

/// Checks that a warp executes `op` and that `type` has an mma.sync form.
LogicalResult checkWarpFragment(Operation *op,
                                       const LaunchAnalysis &analysis,
                                       FragType type) {
  const LaunchAnalysis::Scope &scope = analysis.getScope(op);
  if (mmaScope(scope) != Level::Warp ||
      (scope.perThread && !inWarpLanes(op)))
    return op->emitOpError("is lowered to warp-level mma.sync and must run in "
                           "the body of a warp parallel (`: group`); at "
                           "warpgroup scope use warpgroup fragments "
                           "(!croq.frag<..., warpgroup>), which lower to "
                           "wgmma");
  Type element = type.getElementType();
  if (type.getRole() != FragRole::Acc && !element.isF16() &&
      !element.isBF16() && !element.isF32() && !element.isInteger(8))
    return op->emitOpError("mma.sync operands are f16, bf16, f32 (as tf32) "
                           "or s8, got ")
           << element;
  if (type.getRole() == FragRole::Acc && !element.isF16() &&
      !element.isF32() && !element.isInteger(32))
    return op->emitOpError("mma.sync accumulates in f16, f32 or s32, got ")
           << element;
  auto mma = dyn_cast<MmaOp>(op);
  if (!mma)
    return success();
  Type operand = mma.getA().getType().getElementType();
  if (!accumulatesInto(operand, mma.getAcc().getType().getElementType()))
    return op->emitOpError("mma.sync cannot accumulate ")
           << operand << " products in "
           << mma.getAcc().getType().getElementType()
           << "; f16 accumulates in f16 or f32, bf16 and f32 (tf32) in f32, "
              "s8 in s32";
  // A warp MMA has the shape of one mma.sync or wmma instruction or, as
  // croq extends the language, covers an accumulator of several m16n8
  // instruction tiles, each over one instruction's K. A deeper K is split
  // by the program (a loop of MMAs), as the language has it.
  OperandGeometry a = operandGeometry(mma.getA().getType(), mma.getLayout());
  OperandGeometry b = operandGeometry(mma.getB().getType(), mma.getLayout());
  WarpShape shape{a.outer, b.outer, a.k};
  ArrayRef<WarpShape> shapes = warpMmaShapes(operand);
  int64_t deepest = warpTile(operand).k;
  bool wholeTiles = shape.m % kTileM == 0 && shape.n % kTileN == 0;
  bool oneK = shape.k == deepest || shape.k == deepest / 2;
  if (a.k == b.k && ((wholeTiles && oneK) || llvm::is_contained(shapes, shape)))
    return success();
  InFlightDiagnostic diag = op->emitOpError("a warp MMA of shape m")
                            << shape.m << "n" << shape.n << "k" << a.k
                            << " is neither an mma.sync or wmma shape "
                               "for "
                            << operand << " operands (";
  llvm::interleaveComma(shapes, diag, [&](const WarpShape &s) {
    diag << "m" << s.m << "n" << s.n << "k" << s.k;
  });
  diag << ") nor whole m16n8 instruction tiles over K = " << deepest << " or "
       << deepest / 2;
  if (wholeTiles)
    diag << "; split K into several MMAs (a foreach over K slices)";
  else if (oneK)
    diag << "; make M a multiple of 16 and N one of 8, or use a shape listed";
  else
    diag << "; use a shape listed, or whole m16n8 tiles over one of those K";
  return diag;
}

/// Logical (M or N, K) extents of an operand fragment and whether its
/// first dimension is K, from the MMA layout that consumes it.
OperandGeometry operandGeometry(FragType type, MmaLayout layout) {
  bool aRow = layout == MmaLayout::RowRow || layout == MmaLayout::RowCol;
  bool bRow = layout == MmaLayout::RowRow || layout == MmaLayout::ColRow;
  bool kMajor = type.getRole() == FragRole::A ? !aRow : !bRow;
  ArrayRef<int64_t> shape = type.getShape();
  return kMajor ? OperandGeometry{shape[1], shape[0], true}
                : OperandGeometry{shape[0], shape[1], false};
}

/// The MMA layout of the croq.mma ops that consume an operand fragment.
FailureOr<MmaLayout> consumerLayout(MmaLoadOp load) {
  SmallVector<MmaLayout> layouts;
  for (Operation *user : load.getResult().getUsers()) {
    auto mma = dyn_cast<MmaOp>(user);
    if (!mma)
      return load.emitOpError("an operand fragment may only feed croq.mma, "
                              "but it is used by ")
             << user->getName();
    if (!llvm::is_contained(layouts, mma.getLayout()))
      layouts.push_back(mma.getLayout());
  }
  if (layouts.empty())
    return load.emitOpError("operand fragment has no croq.mma user, so its "
                            "layout is unknown");
  llvm::sort(layouts);
  // Only the half of the layout that names this operand matters.
  FragType type = load.getResult().getType();
  for (MmaLayout other : ArrayRef(layouts).drop_front())
    if (operandGeometry(type, other).kMajor !=
        operandGeometry(type, layouts.front()).kMajor)
      return load.emitOpError("is used by MMAs of layouts ")
             << stringifyMmaLayout(layouts.front()) << " and "
             << stringifyMmaLayout(other)
             << ", which read it in different orders; load the operand once "
                "per layout";
  return layouts.front();
}

} // namespace mlir::croq::detail

namespace {

//===----------------------------------------------------------------------===//
// Warp-level MMA: nvgpu.mma.sync m16n8k16
//===----------------------------------------------------------------------===//
//
// A fragment lives in the registers of one warp as the operand tiles of
// m16n8k16 instructions: A as `count x 4 x 2`, B as `count x 2 x 2` and the
// accumulator as `count x 2 x 2` vectors, tiles numbered row-major over
// (m, k), (n, k) and (m, n). Lane `l` holds, with g = l / 4 and
// c = 2 * (l % 4): A pairs (g, c), (g + 8, c), (g, c + 8), (g + 8, c + 8);
// B pairs (k = c, n = g) and (k = c + 8, n = g) along k; C pairs (g, c) and
// (g + 8, c) along n (the PTX ISA's fragment layouts).

static Value laneId(OpBuilder &b, Location loc) {
  return arith::RemUIOp::create(b, loc, threadId(b, loc), cIndex(b, loc, 32));
}

struct MmaFillLowering : ScopedPattern<MmaFillOp> {
  using ScopedPattern::ScopedPattern;
  LogicalResult
  matchAndRewrite(MmaFillOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    FragType type = op.getResult().getType();
    VectorType vectorType = type.getScope() == Level::Warp
                                ? fragVectorType(type)
                                : VectorType();
    Location loc = op.getLoc();
    Type element = type.getElementType();
    Value value = adaptor.getValue();
    Type from = value.getType();
    if (!from.isIntOrFloat())
      return op.emitOpError("cannot fill a ") << element << " fragment with "
                                              << from;
    value = convertElement(rewriter, loc, value, element);
    if (type.getScope() == Level::Warpgroup) {
      rewriter.replaceOp(op, fillWarpgroupAcc(rewriter, loc, type, value));
      return success();
    }
    rewriter.replaceOpWithNewOp<vector::BroadcastOp>(op, vectorType, value);
    return success();
  }
};

/// The first row and column of the executing lane's accumulator elements
/// in each m16n8 tile: g = lane / 4 and 2 (lane % 4).
static std::pair<Value, Value> accumulatorLane(OpBuilder &b, Location loc) {
  Value lane = laneId(b, loc);
  Value g = arith::DivUIOp::create(b, loc, lane, cIndex(b, loc, 4));
  Value c = arith::MulIOp::create(
      b, loc, arith::RemUIOp::create(b, loc, lane, cIndex(b, loc, 4)),
      cIndex(b, loc, 2));
  return {g, c};
}

/// Position of register `index` of a warp accumulator in its vector:
/// tile, row half, column.
static SmallVector<int64_t> warpAccPosition(int64_t index) {
  return {index / 4, index / 2 % 2, index % 2};
}

/// Row and column in the M x N tile of register `index` of the executing
/// lane's part of a warp accumulator (numbered as croq.mma.element does),
/// from the lane's (g, c) of accumulatorLane.
static std::pair<Value, Value> accumulatorRegisterAt(OpBuilder &b,
                                                     Location loc,
                                                     FragType type, Value g,
                                                     Value c, int64_t index) {
  int64_t nTiles = llvm::divideCeil(type.getShape()[1], kTileN);
  SmallVector<int64_t> at = warpAccPosition(index);
  int64_t mi = at[0] / nTiles, ni = at[0] % nTiles;
  Value row = arith::AddIOp::create(b, loc, g,
                                    cIndex(b, loc, mi * kTileM + at[1] * 8));
  Value col =
      arith::AddIOp::create(b, loc, c, cIndex(b, loc, ni * kTileN + at[2]));
  return {row, col};
}

/// A warp accumulator from memory, each lane reading the elements it
/// holds (the layout MmaStoreLowering writes): rows g and g + 8, columns
/// c and c + 1 of each m16n8 tile. Elements past the view's tensor, or of
/// padded tiles, are zero.
static LogicalResult lowerAccumulatorLoad(MmaLoadOp op, Value source,
                                          ConversionPatternRewriter &rewriter) {
  FragType type = op.getResult().getType();
  Location loc = op.getLoc();
  int64_t m = type.getShape()[0], n = type.getShape()[1];
  std::optional<SmallVector<Value>> valid =
      validExtents(rewriter, loc, op.getSource());
  if (!valid && (m % kTileM || n % kTileN))
    valid = SmallVector<Value>{cIndex(rewriter, loc, m),
                               cIndex(rewriter, loc, n)};
  Type element = type.getElementType();
  auto [g, c] = accumulatorLane(rewriter, loc);
  Value zero =
      arith::ConstantOp::create(rewriter, loc, rewriter.getZeroAttr(element));
  SmallVector<Value> elements;
  for (int64_t r = 0; r < type.getRegisterCount(); ++r) {
    auto [row, col] = accumulatorRegisterAt(rewriter, loc, type, g, c, r);
    SmallVector<Value> where{row, col};
    elements.push_back(loadOrZero(
        rewriter, loc, source, where,
        valid ? inBounds(rewriter, loc, where, *valid) : Value(), zero));
  }
  rewriter.replaceOpWithNewOp<vector::FromElementsOp>(op, fragVectorType(type),
                                                      elements);
  return success();
}

struct MmaLoadLowering : ScopedPattern<MmaLoadOp> {
  using ScopedPattern::ScopedPattern;
  LogicalResult
  matchAndRewrite(MmaLoadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    FragType type = op.getResult().getType();
    if (type.getScope() == Level::Warpgroup)
      return lowerWarpgroupLoad(op, adaptor.getSource(), rewriter);
    if (type.getRole() == FragRole::Acc)
      return lowerAccumulatorLoad(op, adaptor.getSource(), rewriter);
    // verifyLowerable checked the scope, element types and the layout.
    MmaLayout layout = *consumerLayout(op);
    OperandGeometry geometry = operandGeometry(type, layout);
    bool isA = type.getRole() == FragRole::A;
    int64_t tileOuter = isA ? kTileM : kTileN;
    WarpTile tile = warpTile(type.getElementType());
    int64_t halfK = tile.k / 2;
    Location loc = op.getLoc();
    Value source = adaptor.getSource();
    VectorType vecType = fragVectorType(type);
    int64_t outerTiles = llvm::divideCeil(geometry.outer, tileOuter);
    int64_t kTiles = llvm::divideCeil(geometry.k, tile.k);
    // A fragment smaller than its instruction tiles is padded with zeros.
    bool padded = geometry.outer % tileOuter || geometry.k % tile.k;

    // A tail tile of a tensor: elements past its end read as zero.
    std::optional<SmallVector<Value>> valid =
        validExtents(rewriter, loc, op.getSource());
    Type elementType = cast<MemRefType>(source.getType()).getElementType();
    // Per lane, element by element: any layout, any memory.
    auto buildScalar = [&](OpBuilder &b) -> Value {
      Value lane = laneId(b, loc);
      Value g = arith::DivUIOp::create(b, loc, lane, cIndex(b, loc, 4));
      Value c = arith::MulIOp::create(
          b, loc, arith::RemUIOp::create(b, loc, lane, cIndex(b, loc, 4)),
          cIndex(b, loc, tile.perRegister));
      Value zero =
          arith::ConstantOp::create(b, loc, b.getZeroAttr(elementType));
      auto element = [&](int64_t outerBase, Value outerLane, int64_t kBase,
                         Value kLane) -> Value {
        Value outer = arith::AddIOp::create(b, loc, outerLane,
                                            cIndex(b, loc, outerBase));
        Value k = arith::AddIOp::create(b, loc, kLane, cIndex(b, loc, kBase));
        SmallVector<Value> idx = geometry.kMajor ? SmallVector<Value>{k, outer}
                                                 : SmallVector<Value>{outer, k};
        Value inside;
        if (padded)
          inside = inBounds(b, loc, {outer, k},
                            {cIndex(b, loc, geometry.outer),
                             cIndex(b, loc, geometry.k)});
        if (valid) {
          Value inTensor = inBounds(b, loc, idx, *valid);
          inside = inside ? arith::AndIOp::create(b, loc, inside, inTensor)
                          : inTensor;
        }
        return loadOrZero(b, loc, source, idx, inside, zero);
      };
      SmallVector<Value> elements;
      for (int64_t ot = 0; ot < outerTiles; ++ot)
        for (int64_t kt = 0; kt < kTiles; ++kt) {
          int64_t o0 = ot * tileOuter, k0 = kt * tile.k;
          // A registers: (g, c), (g + 8, c), (g, c + K/2), (g + 8, c + K/2);
          // B registers: (k = c, n = g), (k = c + K/2, n = g). Each holds
          // `perRegister` elements along k.
          SmallVector<std::pair<int64_t, int64_t>> registers =
              isA ? SmallVector<std::pair<int64_t, int64_t>>{{0, 0},
                                                             {8, 0},
                                                             {0, halfK},
                                                             {8, halfK}}
                  : SmallVector<std::pair<int64_t, int64_t>>{{0, 0},
                                                             {0, halfK}};
          for (auto [dOuter, dk] : registers)
            for (int64_t e = 0; e < tile.perRegister; ++e)
              elements.push_back(element(o0 + dOuter, g, k0 + dk + e, c));
        }
      // Tiles the other orientation of the type would need (see
      // operandTiles) are never read.
      elements.resize(vecType.getNumElements(), zero);
      return vector::FromElementsOp::create(b, loc, vecType, elements);
    };

    // ldmatrix reads 8x8 matrices of 32-bit words whose rows are 16
    // contiguous bytes, lane l getting word l % 4 of row l / 4: exactly
    // one operand register. Each A tile is one x4 (the four registers'
    // 8 x 16-byte quadrants in order), each B tile one x2; lane l points at
    // row l % 8 of matrix l / 8.
    auto sourceType = cast<MemRefType>(source.getType());
    SmallVector<int64_t> strides;
    int64_t offset;
    bool contiguousK =
        !geometry.kMajor && sourceType.getRank() == 2 &&
        succeeded(sourceType.getStridesAndOffset(strides, offset)) &&
        strides.back() == 1;
    if (!contiguousK || padded ||
        getStorage(sourceType) != Storage::Shared) {
      rewriter.replaceOp(op, buildScalar(rewriter));
      return success();
    }
    auto buildLdmatrix = [&](OpBuilder &b) -> Value {
      Value lane = laneId(b, loc);
      int64_t matrices = isA ? 4 : 2;
      Value row = arith::RemUIOp::create(b, loc, lane, cIndex(b, loc, 8));
      Value matrix = arith::RemUIOp::create(
          b, loc, arith::DivUIOp::create(b, loc, lane, cIndex(b, loc, 8)),
          cIndex(b, loc, matrices));
      // A: matrix 1 and 3 are 8 rows down, 2 and 3 K/2 columns right; B:
      // matrix 1 is K/2 columns right.
      Value rowOffset, colOffset;
      if (isA) {
        rowOffset = arith::MulIOp::create(
            b, loc, arith::RemUIOp::create(b, loc, matrix, cIndex(b, loc, 2)),
            cIndex(b, loc, 8));
        colOffset = arith::MulIOp::create(
            b, loc, arith::DivUIOp::create(b, loc, matrix, cIndex(b, loc, 2)),
            cIndex(b, loc, halfK));
      } else {
        rowOffset = cIndex(b, loc, 0);
        colOffset =
            arith::MulIOp::create(b, loc, matrix, cIndex(b, loc, halfK));
      }
      Value laneRow = arith::AddIOp::create(b, loc, row, rowOffset);
      auto tileType = VectorType::get({matrices, tile.perRegister},
                                      sourceType.getElementType());
      // Assembled from scalars, like the per-lane form: inserting whole
      // tiles folds to n-D broadcasts that the NVVM lowering lacks.
      SmallVector<Value> elements;
      for (int64_t ot = 0; ot < outerTiles; ++ot)
        for (int64_t kt = 0; kt < kTiles; ++kt) {
          Value outer = arith::AddIOp::create(
              b, loc, laneRow, cIndex(b, loc, ot * tileOuter));
          Value k = arith::AddIOp::create(b, loc, colOffset,
                                          cIndex(b, loc, kt * tile.k));
          Value words = nvgpu::LdMatrixOp::create(
              b, loc, tileType, source, ValueRange{outer, k},
              /*transpose=*/false, static_cast<uint32_t>(matrices));
          for (int64_t m = 0; m < matrices; ++m)
            for (int64_t e = 0; e < tile.perRegister; ++e)
              elements.push_back(vector::ExtractOp::create(
                  b, loc, words, ArrayRef<int64_t>{m, e}));
        }
      elements.resize(vecType.getNumElements(),
                      arith::ConstantOp::create(
                          b, loc, b.getZeroAttr(sourceType.getElementType())));
      return vector::FromElementsOp::create(b, loc, vecType, elements);
    };
    // Rows must start on 16 bytes: checked at run time, as views may have
    // dynamic offsets; the scalar form covers the rest.
    Value aligned = isAligned(rewriter, loc, source,
                              128 / sourceType.getElementTypeBitWidth());
    auto ifOp = scf::IfOp::create(rewriter, loc, TypeRange{vecType}, aligned,
                                  /*withElseRegion=*/true);
    OpBuilder thenBuilder = ifOp.getThenBodyBuilder();
    scf::YieldOp::create(thenBuilder, loc, buildLdmatrix(thenBuilder));
    OpBuilder elseBuilder = ifOp.getElseBodyBuilder();
    scf::YieldOp::create(elseBuilder, loc, buildScalar(elseBuilder));
    rewriter.replaceOp(op, ifOp.getResults());
    return success();
  }
};

/// One m16n8 mma.sync as nvvm.mma.sync, for what the nvgpu lowering of
/// MLIR 22 does not express: bf16 operands (it has no bf16 form) and s8
/// products that wrap (it always saturates; wgmma's s8 wraps, and so
/// does C++). Each register of `a` and `b` is passed as its 32 bits.
static Value directMmaSync(OpBuilder &b, Location loc, Value a, Value bv,
                           Value c, int64_t k, NVVM::MMATypes type,
                           NVVM::MMATypes bType) {
  auto registers = [&](Value v) {
    auto type = cast<VectorType>(v.getType());
    SmallVector<Value> words;
    for (int64_t r = 0; r < type.getDimSize(0); ++r)
      words.push_back(vector::BitCastOp::create(
                          b, loc, VectorType::get({1}, b.getI32Type()),
                          vector::ExtractOp::create(b, loc, v, r))
                          .getResult());
    for (Value &word : words)
      word = vector::ExtractOp::create(b, loc, word, 0);
    return words;
  };
  auto cType = cast<VectorType>(c.getType());
  Type element = cType.getElementType();
  SmallVector<Value> accumulators;
  for (int64_t half = 0; half < 2; ++half)
    for (int64_t e = 0; e < 2; ++e)
      accumulators.push_back(
          vector::ExtractOp::create(b, loc, c, ArrayRef<int64_t>{half, e}));
  auto structType = LLVM::LLVMStructType::getLiteral(
      b.getContext(), SmallVector<Type>(4, element));
  std::optional<NVVM::MMAIntOverflow> overflow;
  if (type == NVVM::MMATypes::s8 || type == NVVM::MMATypes::u8)
    overflow = NVVM::MMAIntOverflow::wrapped;
  Value d = NVVM::MmaOp::create(
      b, loc, structType, registers(a), registers(bv), accumulators,
      ArrayRef<int64_t>{kTileM, kTileN, k}, std::nullopt, overflow,
      std::array<NVVM::MMATypes, 2>{type, bType},
      std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                     NVVM::MMALayout::col});
  SmallVector<Value> results;
  for (int64_t i = 0; i < 4; ++i)
    results.push_back(LLVM::ExtractValueOp::create(b, loc, d, i));
  return vector::FromElementsOp::create(b, loc, cType, results);
}

struct MmaLowering : ScopedPattern<MmaOp> {
  using ScopedPattern::ScopedPattern;
  LogicalResult
  matchAndRewrite(MmaOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    FragType acc = op.getAcc().getType();
    if (acc.getScope() == Level::Warpgroup)
      return lowerWarpgroupMma(op, adaptor.getAcc(), adaptor.getA(),
                               adaptor.getB(), adaptor.getMeta(), rewriter);
    OperandGeometry a = operandGeometry(op.getA().getType(), op.getLayout());
    Type operand = op.getA().getType().getElementType();
    WarpTile tile = warpTile(operand);
    int64_t m = acc.getShape()[0], n = acc.getShape()[1];
    // Fragments that do not fill whole tiles were padded with zeros.
    int64_t mTiles = llvm::divideCeil(m, kTileM), nTiles = llvm::divideCeil(n, kTileN),
            kTiles = llvm::divideCeil(a.k, tile.k);
    Location loc = op.getLoc();
    Value result = adaptor.getAcc();
    for (int64_t mi = 0; mi < mTiles; ++mi)
      for (int64_t ni = 0; ni < nTiles; ++ni) {
        int64_t cIndexTile = mi * nTiles + ni;
        Value c = vector::ExtractOp::create(rewriter, loc, result, cIndexTile);
        for (int64_t ki = 0; ki < kTiles; ++ki) {
          Value av = vector::ExtractOp::create(rewriter, loc, adaptor.getA(),
                                               mi * kTiles + ki);
          Value bv = vector::ExtractOp::create(rewriter, loc, adaptor.getB(),
                                               ni * kTiles + ki);
          auto integer = [](bool isUnsigned) {
            return isUnsigned ? NVVM::MMATypes::u8 : NVVM::MMATypes::s8;
          };
          c = operand.isBF16() || operand.isInteger(8)
                  ? directMmaSync(
                        rewriter, loc, av, bv, c, tile.k,
                        operand.isBF16() ? NVVM::MMATypes::bf16
                                         : integer(op.getUnsignedA()),
                        operand.isBF16() ? NVVM::MMATypes::bf16
                                         : integer(op.getUnsignedB()))
                  : nvgpu::MmaSyncOp::create(
                        rewriter, loc, av, bv, c,
                        ArrayRef<int64_t>{kTileM, kTileN, tile.k},
                        /*tf32Enabled=*/operand.isF32())
                        .getResult();
        }
        result = vector::InsertOp::create(rewriter, loc, c, result, cIndexTile);
      }
    // mma.sync completes synchronously: an async MMA's future is its result.
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// The extents of `op`'s view that may be written: the view clipped to its
/// tensor and to the op's `rows` / `cols` masks; none when all of it.
static std::optional<SmallVector<Value>>
storedExtents(ConversionPatternRewriter &rewriter, MmaStoreOp op) {
  Location loc = op.getLoc();
  std::optional<SmallVector<Value>> valid =
      validExtents(rewriter, loc, op.getTarget());
  if (!op.getRows() && !op.getCols())
    return valid;
  auto type = cast<MemRefType>(op.getTarget().getType());
  if (!valid) {
    valid.emplace();
    for (int64_t d = 0; d < type.getRank(); ++d)
      valid->push_back(cIndex(rewriter, loc, type.getDimSize(d)));
  }
  if (Value rows = op.getRows())
    (*valid)[0] = arith::MinSIOp::create(rewriter, loc, (*valid)[0], rows);
  if (Value cols = op.getCols())
    (*valid)[1] = arith::MinSIOp::create(rewriter, loc, (*valid)[1], cols);
  return valid;
}

/// True when a warpgroup MMA of `op`'s function loads an operand from
/// `alloc`, through views or the data of futures.
static bool readByWarpgroupMma(Operation *op, memref::AllocOp alloc) {
  auto function = op->getParentOfType<FunctionOpInterface>();
  if (!alloc || !function)
    return false;
  return function
      ->walk([&](MmaLoadOp load) {
        if (load.getResult().getType().getScope() == Level::Warpgroup &&
            llvm::is_contained(viewedBuffers(load.getSource()), alloc))
          return WalkResult::interrupt();
        return WalkResult::advance();
      })
      .wasInterrupted();
}

struct MmaStoreLowering : ScopedPattern<MmaStoreOp> {
  using ScopedPattern::ScopedPattern;
  LogicalResult
  matchAndRewrite(MmaStoreOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    FragType type = op.getValue().getType();
    std::optional<SmallVector<Value>> valid = storedExtents(rewriter, op);
    if (type.getScope() == Level::Warpgroup) {
      // An epilogue staging buffer, and a buffer warpgroup MMAs read, are
      // stored swizzled (see croq-plan-shared-layout): every store is
      // addressed in the layout here.
      int64_t span = swizzleSpan(adaptor.getTarget(), &rewriter);
      FailureOr<RootedView> root = failure();
      if (span && failed(root = rootView(rewriter, op.getLoc(),
                                         adaptor.getTarget(), &rewriter)))
        return op.emitOpError("stores into a shared buffer stored in a "
                              "swizzled layout through a view croq cannot "
                              "trace to it; store through unit-stride views");
      storeWarpgroupAcc(rewriter, op.getLoc(), type, adaptor.getValue(),
                        adaptor.getTarget(), valid, op.getTranspose(),
                        span ? &*root : nullptr, span);
      // wgmma reads the tile through the async proxy (a TMA store of a
      // staging buffer fences for itself).
      if (span && readByWarpgroupMma(op, viewedBuffer(op.getTarget())))
        fenceAsyncProxy(rewriter, op.getLoc());
      rewriter.eraseOp(op);
      return success();
    }
    int64_t m = type.getShape()[0], n = type.getShape()[1];
    Location loc = op.getLoc();
    // Rows and columns of padded tiles are not the fragment's.
    if (m % kTileM || n % kTileN) {
      if (!valid) {
        valid.emplace();
        auto targetType = cast<MemRefType>(op.getTarget().getType());
        for (int64_t d = 0; d < targetType.getRank(); ++d)
          valid->push_back(
              cIndex(rewriter, loc, targetType.getDimSize(d)));
      }
    }
    Value target = adaptor.getTarget();
    Type to = cast<MemRefType>(target.getType()).getElementType();
    // Into a buffer warpgroup MMAs read: each element at its place in the
    // swizzled layout, then the proxy fence.
    int64_t span = swizzleSpan(target, &rewriter);
    FailureOr<RootedView> root = failure();
    if (span && failed(root = rootView(rewriter, loc, target, &rewriter)))
      return op.emitOpError("stores into a shared buffer stored in a "
                            "swizzled layout through a view croq cannot "
                            "trace to it; store through unit-stride views");
    auto storeAt = [&](OpBuilder &b, Value v, ArrayRef<Value> where) {
      if (!span) {
        memref::StoreOp::create(b, loc, v, target, where);
        return;
      }
      auto [flat, offset] = swizzledElement(b, loc, *root, where, span);
      memref::StoreOp::create(b, loc, v, flat, offset);
    };
    auto [g, c] = accumulatorLane(rewriter, loc);
    for (int64_t r = 0; r < type.getRegisterCount(); ++r) {
      Value v = vector::ExtractOp::create(rewriter, loc, adaptor.getValue(),
                                          warpAccPosition(r));
      v = convertElement(rewriter, loc, v, to);
      auto [row, col] = accumulatorRegisterAt(rewriter, loc, type, g, c, r);
      // mma.store.transp: element (row, col) lands at (col, row).
      SmallVector<Value> where{row, col};
      if (op.getTranspose())
        std::swap(where[0], where[1]);
      if (!valid) {
        storeAt(rewriter, v, where);
        continue;
      }
      // A tail tile: elements past the tensor's end are not stored.
      auto guard = scf::IfOp::create(rewriter, loc,
                                     inBounds(rewriter, loc, where, *valid),
                                     /*withElseRegion=*/false);
      OpBuilder inner = guard.getThenBodyBuilder();
      storeAt(inner, v, where);
    }
    if (span && readByWarpgroupMma(op, viewedBuffer(op.getTarget())))
      fenceAsyncProxy(rewriter, loc);
    rewriter.eraseOp(op);
    return success();
  }
};

/// True when `op`, a commit, waits for wgmma batches: it runs in a group-4
/// body (or a 128-thread block), or in a kernel that issues wgmma and whole
/// warps execute it: wgmma.commit_group and wait_group are warp-aligned,
/// and a warp without batches in flight passes them at once. So a commit
/// in the block around several warpgroups (croq-pipeline-mma's, before a
/// copy overwrites the tiles they read) or in a warp-level body of a
/// warpgroup role (before a warp's release) waits for the MMAs.
static bool waitsForWgmma(Operation *op, const LaunchAnalysis::Scope &scope) {
  if (mmaScope(scope) == Level::Warpgroup)
    return true;
  if (!scope.warpgroupMma)
    return false;
  bool wholeWarps = scope.groupLevel != Level::Block ||
                    (!scope.runtimeBlock() && scope.blockDim % 32 == 0);
  return wholeWarps &&
         (!scope.inThreads || selectsWholeGroups(op, Level::Warp));
}

/// mma.sync is synchronous: a commit has nothing left to wait for. Where
/// it may follow wgmma (waitsForWgmma), it waits for the batches in flight.
struct MmaCommitLowering : ScopedPattern<MmaCommitOp> {
  using ScopedPattern::ScopedPattern;
  LogicalResult
  matchAndRewrite(MmaCommitOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (waitsForWgmma(op, analysis.getScope(op)))
      waitWarpgroupMmas(rewriter, op.getLoc(), op.getPending().value_or(0));
    rewriter.eraseOp(op);
    return success();
  }
};

/// The registers of a warpgroup accumulator: the wgmma layout, as
/// croq.mma.coords documents it.
struct MmaCoordsLowering : ScopedPattern<MmaCoordsOp> {
  using ScopedPattern::ScopedPattern;
  LogicalResult
  matchAndRewrite(MmaCoordsOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto [row, col] = warpgroupAccCoords(rewriter, op.getLoc(), op.getIndex());
    rewriter.replaceOp(op, {row, col});
    return success();
  }
};

struct MmaElementLowering : ScopedPattern<MmaElementOp> {
  using ScopedPattern::ScopedPattern;
  LogicalResult
  matchAndRewrite(MmaElementOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (op.getAcc().getType().getScope() == Level::Warp) {
      rewriter.replaceOpWithNewOp<vector::ExtractOp>(
          op, adaptor.getAcc(), warpAccPosition(op.getIndex()));
      return success();
    }
    rewriter.replaceOp(op, warpgroupAccElement(rewriter, op.getLoc(),
                                               op.getAcc().getType(),
                                               adaptor.getAcc(), op.getIndex()));
    return success();
  }
};

struct MmaSetElementLowering : ScopedPattern<MmaSetElementOp> {
  using ScopedPattern::ScopedPattern;
  LogicalResult
  matchAndRewrite(MmaSetElementOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (op.getAcc().getType().getScope() == Level::Warp) {
      rewriter.replaceOpWithNewOp<vector::InsertOp>(
          op, adaptor.getValue(), adaptor.getAcc(),
          warpAccPosition(op.getIndex()));
      return success();
    }
    rewriter.replaceOp(op, setWarpgroupAccElement(
                               rewriter, op.getLoc(), op.getAcc().getType(),
                               adaptor.getAcc(), op.getIndex(),
                               adaptor.getValue()));
    return success();
  }
};

/// croq.mma.scale on a warpgroup accumulator: each thread its registers,
/// in f32. A thread holds two rows (register r is in the second when
/// (r mod 4) / 2 is 1), so it reads two row scales.
struct MmaScaleLowering : ScopedPattern<MmaScaleOp> {
  using ScopedPattern::ScopedPattern;
  LogicalResult
  matchAndRewrite(MmaScaleOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    FragType type = op.getSum().getType();
    Location loc = op.getLoc();
    Type f32 = rewriter.getF32Type();
    Value factor = adaptor.getFactor()
                       ? convertElement(rewriter, loc, adaptor.getFactor(), f32)
                       : Value();
    SmallVector<Value, 2> rowFactors;
    if (op.getRows()) {
      auto rowsType = cast<MemRefType>(op.getRows().getType());
      std::optional<SmallVector<Value>> valid =
          validExtents(rewriter, loc, op.getRows());
      Value zero = cIndex(rewriter, loc, 0);
      // A row past the end of the scales' tensor scales by 0.
      Value noScale = arith::ConstantOp::create(
          rewriter, loc, rewriter.getZeroAttr(rowsType.getElementType()));
      for (int64_t half = 0; half < 2; ++half) {
        Value row = warpgroupAccCoords(rewriter, loc, 2 * half).first;
        SmallVector<Value> where{row};
        if (rowsType.getRank() == 2)
          where = rowsType.getShape()[0] == 1 ? SmallVector<Value>{zero, row}
                                              : SmallVector<Value>{row, zero};
        Value scale = loadOrZero(
            rewriter, loc, adaptor.getRows(), where,
            valid ? inBounds(rewriter, loc, where, *valid) : Value(), noScale);
        scale = convertElement(rewriter, loc, scale, f32);
        if (factor)
          scale = arith::MulFOp::create(rewriter, loc, scale, factor);
        rowFactors.push_back(scale);
      }
    }
    Type element = type.getElementType();
    Value sum = adaptor.getSum();
    for (int64_t r = 0; r < type.getRegisterCount(); ++r) {
      Value scale = rowFactors.empty() ? factor : rowFactors[(r % 4) / 2];
      Value p = convertElement(
          rewriter, loc,
          warpgroupAccElement(rewriter, loc, type, adaptor.getProduct(), r), f32);
      Value a = convertElement(
          rewriter, loc, warpgroupAccElement(rewriter, loc, type, sum, r), f32);
      Value v = scale ? Value(LLVM::FMAOp::create(rewriter, loc, p, scale, a))
                      : Value(arith::AddFOp::create(rewriter, loc, a, p));
      sum = setWarpgroupAccElement(rewriter, loc, type, sum, r,
                                   convertElement(rewriter, loc, v, element));
    }
    rewriter.replaceOp(op, sum);
    return success();
  }
};

} // namespace

void mlir::croq::populateCroqToGPUMmaPatterns(TypeConverter &converter,
    RewritePatternSet &patterns, const LaunchAnalysis &analysis) {
  patterns.add<MmaFillLowering, MmaLoadLowering, MmaLowering, MmaStoreLowering,
               MmaCommitLowering, MmaCoordsLowering, MmaElementLowering,
               MmaSetElementLowering, MmaScaleLowering>(converter, patterns.getContext(),
                                      analysis);
}
