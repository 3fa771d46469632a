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

/// The mma.sync tile: m16n8k16.
static constexpr int64_t kTileM = 16, kTileN = 8, kTileK = 16;

/// Register type of a fragment, or null when it has no mma.sync form.
VectorType fragVectorType(FragType type) {
  int64_t elements = type.getShape()[0] * type.getShape()[1];
  switch (type.getRole()) {
  case FragRole::A:
    return VectorType::get({elements / (kTileM * kTileK), 4, 2},
                           type.getElementType());
  case FragRole::B:
    return VectorType::get({elements / (kTileN * kTileK), 2, 2},
                           type.getElementType());
  case FragRole::Acc:
    return VectorType::get({elements / (kTileM * kTileN), 2, 2},
                           type.getElementType());
  }
  llvm_unreachable("unknown role");
}

/// Checks that a warp executes `op` and that `type` fits m16n8k16 tiles.
LogicalResult checkWarpFragment(Operation *op,
                                       const LaunchAnalysis &analysis,
                                       FragType type) {
  const LaunchAnalysis::Scope &scope = analysis.getScope(op);
  if (mmaScope(scope) != Level::Warp || scope.perThread)
    return op->emitOpError("is lowered to warp-level mma.sync and must run in "
                           "the body of a warp parallel (`: group`); at "
                           "warpgroup scope use warpgroup fragments "
                           "(!croq.frag<..., warpgroup>), which lower to "
                           "wgmma");
  Type element = type.getElementType();
  if (type.getRole() != FragRole::Acc && !element.isF16())
    return op->emitOpError("mma.sync operands must be f16, got ") << element;
  if (type.getRole() == FragRole::Acc && !element.isF16() && !element.isF32())
    return op->emitOpError("mma.sync accumulates in f16 or f32, got ")
           << element;
  return success();
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
    if (from != element) {
      if (isa<FloatType>(from) && isa<FloatType>(element))
        value = convertFloat(rewriter, loc, value, element);
      else if (isa<IntegerType>(from) && isa<FloatType>(element))
        value = arith::SIToFPOp::create(rewriter, loc, element, value);
      else
        return op.emitOpError("cannot fill a ") << element << " fragment with "
                                                << from;
    }
    if (type.getScope() == Level::Warpgroup) {
      rewriter.replaceOp(op, fillWarpgroupAcc(rewriter, loc, type, value));
      return success();
    }
    rewriter.replaceOpWithNewOp<vector::BroadcastOp>(op, vectorType, value);
    return success();
  }
};

struct MmaLoadLowering : ScopedPattern<MmaLoadOp> {
  using ScopedPattern::ScopedPattern;
  LogicalResult
  matchAndRewrite(MmaLoadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    FragType type = op.getResult().getType();
    if (type.getScope() == Level::Warpgroup)
      return lowerWarpgroupLoad(op, adaptor.getSource(), rewriter);
    // verifyLowerable checked the scope, element types and the layout.
    MmaLayout layout = *consumerLayout(op);
    OperandGeometry geometry = operandGeometry(type, layout);
    bool isA = type.getRole() == FragRole::A;
    int64_t tileOuter = isA ? kTileM : kTileN;
    if (geometry.outer % tileOuter || geometry.k % kTileK)
      return op.emitOpError("fragment ")
             << type << " is not a whole number of m16n8k16 tiles";
    Location loc = op.getLoc();
    Value source = adaptor.getSource();
    VectorType vecType = fragVectorType(type);
    int64_t outerTiles = geometry.outer / tileOuter;
    int64_t kTiles = geometry.k / kTileK;

    // A tail tile of a tensor: elements past its end read as zero.
    std::optional<SmallVector<Value>> valid =
        validExtents(rewriter, loc, op.getSource());
    // Per lane, element by element: any layout, any memory.
    auto buildScalar = [&](OpBuilder &b) -> Value {
      Value lane = laneId(b, loc);
      Value g = arith::DivUIOp::create(b, loc, lane, cIndex(b, loc, 4));
      Value c = arith::MulIOp::create(
          b, loc, arith::RemUIOp::create(b, loc, lane, cIndex(b, loc, 4)),
          cIndex(b, loc, 2));
      auto element = [&](int64_t outerBase, Value outerLane, int64_t kBase,
                         Value kLane) {
        Value outer = arith::AddIOp::create(b, loc, outerLane,
                                            cIndex(b, loc, outerBase));
        Value k = arith::AddIOp::create(b, loc, kLane, cIndex(b, loc, kBase));
        SmallVector<Value> idx = geometry.kMajor ? SmallVector<Value>{k, outer}
                                                 : SmallVector<Value>{outer, k};
        if (!valid)
          return memref::LoadOp::create(b, loc, source, idx).getResult();
        Type elementType = cast<MemRefType>(source.getType()).getElementType();
        auto guard = scf::IfOp::create(b, loc, elementType,
                                       inBounds(b, loc, idx, *valid),
                                       /*withElseRegion=*/true);
        OpBuilder thenB = guard.getThenBodyBuilder();
        scf::YieldOp::create(
            thenB, loc,
            memref::LoadOp::create(thenB, loc, source, idx).getResult());
        OpBuilder elseB = guard.getElseBodyBuilder();
        scf::YieldOp::create(elseB, loc,
                             arith::ConstantOp::create(
                                 elseB, loc, elseB.getZeroAttr(elementType))
                                 .getResult());
        return guard.getResult(0);
      };
      SmallVector<Value> elements;
      for (int64_t ot = 0; ot < outerTiles; ++ot)
        for (int64_t kt = 0; kt < kTiles; ++kt) {
          int64_t o0 = ot * tileOuter, k0 = kt * kTileK;
          if (isA) {
            // (g, c), (g + 8, c), (g, c + 8), (g + 8, c + 8), pairs along k.
            for (auto [dm, dk] : {std::pair{0, 0}, {8, 0}, {0, 8}, {8, 8}})
              for (int64_t e = 0; e < 2; ++e)
                elements.push_back(element(o0 + dm, g, k0 + dk + e, c));
          } else {
            // (k = c, n = g) and (k = c + 8, n = g), pairs along k.
            for (int64_t dk : {0, 8})
              for (int64_t e = 0; e < 2; ++e)
                elements.push_back(element(o0, g, k0 + dk + e, c));
          }
        }
      return vector::FromElementsOp::create(b, loc, vecType, elements);
    };

    // ldmatrix reads 8x8 b16 matrices whose rows are 16 contiguous bytes:
    // each A tile is one x4 (the four 8x8 quadrants in the fragment's
    // order), each B tile one x2; lane l points at row l % 8 of matrix
    // l / 8. The lanes' pairs come out exactly as mma.sync wants them.
    auto sourceType = cast<MemRefType>(source.getType());
    SmallVector<int64_t> strides;
    int64_t offset;
    bool contiguousK =
        !geometry.kMajor && sourceType.getRank() == 2 &&
        succeeded(sourceType.getStridesAndOffset(strides, offset)) &&
        strides.back() == 1;
    if (!contiguousK || getStorage(sourceType) != Storage::Shared ||
        sourceType.getElementTypeBitWidth() != 16) {
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
      // A: matrix 1 and 3 are 8 rows down, 2 and 3 8 columns right; B:
      // matrix 1 is 8 columns right.
      Value rowOffset, colOffset;
      if (isA) {
        rowOffset = arith::MulIOp::create(
            b, loc, arith::RemUIOp::create(b, loc, matrix, cIndex(b, loc, 2)),
            cIndex(b, loc, 8));
        colOffset = arith::MulIOp::create(
            b, loc, arith::DivUIOp::create(b, loc, matrix, cIndex(b, loc, 2)),
            cIndex(b, loc, 8));
      } else {
        rowOffset = cIndex(b, loc, 0);
        colOffset = arith::MulIOp::create(b, loc, matrix, cIndex(b, loc, 8));
      }
      Value laneRow = arith::AddIOp::create(b, loc, row, rowOffset);
      auto tileType = VectorType::get({matrices, 2}, sourceType.getElementType());
      // Assembled from scalars, like the per-lane form: inserting whole
      // tiles folds to n-D broadcasts that the NVVM lowering lacks.
      SmallVector<Value> elements;
      for (int64_t ot = 0; ot < outerTiles; ++ot)
        for (int64_t kt = 0; kt < kTiles; ++kt) {
          Value outer = arith::AddIOp::create(
              b, loc, laneRow, cIndex(b, loc, ot * tileOuter));
          Value k = arith::AddIOp::create(b, loc, colOffset,
                                          cIndex(b, loc, kt * kTileK));
          Value pairs = nvgpu::LdMatrixOp::create(
              b, loc, tileType, source, ValueRange{outer, k},
              /*transpose=*/false, static_cast<uint32_t>(matrices));
          for (int64_t m = 0; m < matrices; ++m)
            for (int64_t e = 0; e < 2; ++e)
              elements.push_back(vector::ExtractOp::create(
                  b, loc, pairs, ArrayRef<int64_t>{m, e}));
        }
      return vector::FromElementsOp::create(b, loc, vecType, elements);
    };
    // Rows must start on 16 bytes: checked at run time, as views may have
    // dynamic offsets; the scalar form covers the rest.
    Value aligned = isAligned(rewriter, loc, source, 8);
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

struct MmaLowering : ScopedPattern<MmaOp> {
  using ScopedPattern::ScopedPattern;
  LogicalResult
  matchAndRewrite(MmaOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    FragType acc = op.getAcc().getType();
    if (acc.getScope() == Level::Warpgroup)
      return lowerWarpgroupMma(op, adaptor.getAcc(), adaptor.getA(),
                               adaptor.getB(), rewriter);
    OperandGeometry a = operandGeometry(op.getA().getType(), op.getLayout());
    int64_t m = acc.getShape()[0], n = acc.getShape()[1];
    if (m % kTileM || n % kTileN || a.k % kTileK)
      return op.emitOpError("shape ")
             << m << "x" << n << "x" << a.k
             << " is not a whole number of m16n8k16 tiles";
    int64_t mTiles = m / kTileM, nTiles = n / kTileN, kTiles = a.k / kTileK;
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
          c = nvgpu::MmaSyncOp::create(rewriter, loc, av, bv, c,
                                       ArrayRef<int64_t>{kTileM, kTileN, kTileK});
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

struct MmaStoreLowering : ScopedPattern<MmaStoreOp> {
  using ScopedPattern::ScopedPattern;
  LogicalResult
  matchAndRewrite(MmaStoreOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    FragType type = op.getValue().getType();
    std::optional<SmallVector<Value>> valid = storedExtents(rewriter, op);
    if (type.getScope() == Level::Warpgroup) {
      storeWarpgroupAcc(rewriter, op.getLoc(), type, adaptor.getValue(),
                        adaptor.getTarget(), valid, op.getTranspose());
      rewriter.eraseOp(op);
      return success();
    }
    int64_t m = type.getShape()[0], n = type.getShape()[1];
    if (m % kTileM || n % kTileN)
      return op.emitOpError("fragment ")
             << type << " is not a whole number of 16x8 tiles";
    Location loc = op.getLoc();
    Value target = adaptor.getTarget();
    Type to = cast<MemRefType>(target.getType()).getElementType();
    Value lane = laneId(rewriter, loc);
    Value g = arith::DivUIOp::create(rewriter, loc, lane, cIndex(rewriter, loc, 4));
    Value c = arith::MulIOp::create(
        rewriter, loc,
        arith::RemUIOp::create(rewriter, loc, lane, cIndex(rewriter, loc, 4)),
        cIndex(rewriter, loc, 2));
    int64_t nTiles = n / kTileN;
    for (int64_t mi = 0; mi < m / kTileM; ++mi)
      for (int64_t ni = 0; ni < nTiles; ++ni)
        for (int64_t half = 0; half < 2; ++half)
          for (int64_t e = 0; e < 2; ++e) {
            Value v = vector::ExtractOp::create(
                rewriter, loc, adaptor.getValue(),
                ArrayRef<int64_t>{mi * nTiles + ni, half, e});
            v = convertFloat(rewriter, loc, v, to);
            Value row = arith::AddIOp::create(
                rewriter, loc, g, cIndex(rewriter, loc, mi * kTileM + half * 8));
            Value col = arith::AddIOp::create(
                rewriter, loc, c, cIndex(rewriter, loc, ni * kTileN + e));
            // mma.store.transp: element (row, col) lands at (col, row).
            SmallVector<Value> where{row, col};
            if (op.getTranspose())
              std::swap(where[0], where[1]);
            if (!valid) {
              memref::StoreOp::create(rewriter, loc, v, target, where);
              continue;
            }
            // A tail tile: elements past the tensor's end are not stored.
            auto guard = scf::IfOp::create(
                rewriter, loc, inBounds(rewriter, loc, where, *valid),
                /*withElseRegion=*/false);
            OpBuilder inner = guard.getThenBodyBuilder();
            memref::StoreOp::create(inner, loc, v, target, where);
          }
    rewriter.eraseOp(op);
    return success();
  }
};

/// mma.sync is synchronous: a commit has nothing left to wait for. At
/// warpgroup scope it waits for every wgmma group in flight.
struct MmaCommitLowering : ScopedPattern<MmaCommitOp> {
  using ScopedPattern::ScopedPattern;
  LogicalResult
  matchAndRewrite(MmaCommitOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (mmaScope(analysis.getScope(op)) == Level::Warpgroup)
      waitWarpgroupMmas(rewriter, op.getLoc(), op.getPending());
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
    rewriter.replaceOp(op, setWarpgroupAccElement(
                               rewriter, op.getLoc(), op.getAcc().getType(),
                               adaptor.getAcc(), op.getIndex(),
                               adaptor.getValue()));
    return success();
  }
};

} // namespace

void mlir::croq::populateCroqToGPUMmaPatterns(TypeConverter &converter,
    RewritePatternSet &patterns, const LaunchAnalysis &analysis) {
  patterns.add<MmaFillLowering, MmaLoadLowering, MmaLowering, MmaStoreLowering,
               MmaCommitLowering, MmaCoordsLowering, MmaElementLowering,
               MmaSetElementLowering>(converter, patterns.getContext(),
                                      analysis);
}
