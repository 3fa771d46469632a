//===- Copies.cpp - views, copies and futures -------------------------------===//
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
#include <numeric>

using namespace mlir;
using namespace mlir::croq;
using namespace mlir::croq::detail;

namespace mlir::croq::detail {

/// For a view made by croq.subspan, which may reach past the end of the
/// buffer it views (a tail tile), the extents that lie inside the buffer:
/// `min(extent, max(dim - origin, 0))`, through nested views. std::nullopt
/// when the view lies inside its buffer by construction.
std::optional<SmallVector<Value>>
validExtents(ConversionPatternRewriter &rewriter, Location loc, Value view) {
  Operation *def = view.getDefiningOp();
  if (auto chunk = dyn_cast_or_null<ChunkAtOp>(def)) {
    // A chunk lies inside its source; only a clamped source clamps it.
    std::optional<SmallVector<Value>> parent =
        validExtents(rewriter, loc, chunk.getSource());
    if (!parent)
      return std::nullopt;
    Value source = rewriter.getRemappedValue(chunk.getSource());
    SmallVector<Value> dims = memrefSizes(rewriter, loc, source);
    auto type = cast<MemRefType>(chunk.getResult().getType());
    SmallVector<Value> result;
    unsigned nextIndex = 0, nextBound = 0;
    Value zero = cIndex(rewriter, loc, 0);
    for (auto [d, bound] : llvm::enumerate(chunk.getStaticBounds())) {
      if (bound == tile::kWholeDim) {
        result.push_back((*parent)[d]);
        continue;
      }
      Value boundValue =
          ShapedType::isDynamic(bound)
              ? rewriter.getRemappedValue(chunk.getBounds()[nextBound++])
              : cIndex(rewriter, loc, bound);
      Value extent = type.isDynamicDim(d)
                         ? Value(arith::DivUIOp::create(rewriter, loc, dims[d],
                                                        boundValue))
                         : cIndex(rewriter, loc, type.getDimSize(d));
      Value index = rewriter.getRemappedValue(chunk.getIndices()[nextIndex++]);
      Value origin = arith::MulIOp::create(rewriter, loc, index, extent);
      Value remaining = arith::MaxSIOp::create(
          rewriter, loc, arith::SubIOp::create(rewriter, loc, (*parent)[d], origin),
          zero);
      result.push_back(arith::MinSIOp::create(rewriter, loc, extent, remaining));
    }
    return result;
  }
  if (auto sub = dyn_cast_or_null<memref::SubViewOp>(def)) {
    // A subview (`.sqz()` of a tail tile, a pick of a tile's element)
    // keeps what lies inside the clamped view it looks into: a kept
    // dimension its elements from the offset on, and a dropped dimension
    // whose index lies outside empties the whole view.
    std::optional<SmallVector<Value>> parent =
        validExtents(rewriter, loc, sub.getSource());
    if (!parent)
      return std::nullopt;
    llvm::SmallBitVector dropped = sub.getDroppedDims();
    Value zero = cIndex(rewriter, loc, 0);
    Value outside;
    SmallVector<Value> result;
    for (auto [d, offset, size, stride] :
         llvm::enumerate(sub.getMixedOffsets(), sub.getMixedSizes(),
                         sub.getMixedStrides())) {
      Value at = getValueOrCreateConstantIndexOp(rewriter, loc, offset);
      Value remaining = arith::MaxSIOp::create(
          rewriter, loc, arith::SubIOp::create(rewriter, loc, (*parent)[d], at),
          zero);
      if (dropped[d]) {
        Value empty = arith::CmpIOp::create(
            rewriter, loc, arith::CmpIPredicate::eq, remaining, zero);
        outside = outside ? arith::OrIOp::create(rewriter, loc, outside, empty)
                          : empty;
        continue;
      }
      Value step = getValueOrCreateConstantIndexOp(rewriter, loc, stride);
      Value count = arith::CeilDivSIOp::create(rewriter, loc, remaining, step);
      result.push_back(arith::MinSIOp::create(
          rewriter, loc, getValueOrCreateConstantIndexOp(rewriter, loc, size),
          count));
    }
    if (outside)
      for (Value &extent : result)
        extent = arith::SelectOp::create(rewriter, loc, outside, zero, extent);
    return result;
  }
  auto subspan = dyn_cast_or_null<SubspanOp>(def);
  if (!subspan)
    return std::nullopt;
  Value source = rewriter.getRemappedValue(subspan.getSource());
  std::optional<SmallVector<Value>> parent =
      validExtents(rewriter, loc, subspan.getSource());
  SmallVector<Value> dims =
      parent ? *parent : memrefSizes(rewriter, loc, source);
  SmallVector<Value> result;
  unsigned nextExtent = 0;
  Value zero = cIndex(rewriter, loc, 0);
  for (auto [d, extent] : llvm::enumerate(subspan.getStaticExtents())) {
    Value extentValue;
    if (extent == tile::kWholeDim)
      extentValue = dims[d];
    else if (ShapedType::isDynamic(extent))
      extentValue = rewriter.getRemappedValue(subspan.getExtents()[nextExtent++]);
    else
      extentValue = cIndex(rewriter, loc, extent);
    Value stride = subspan.getSteps().empty()
                       ? extentValue
                       : rewriter.getRemappedValue(subspan.getSteps()[d]);
    Value index = rewriter.getRemappedValue(subspan.getIndices()[d]);
    Value origin = arith::MulIOp::create(rewriter, loc, index, stride);
    Value remaining = arith::MaxSIOp::create(
        rewriter, loc, arith::SubIOp::create(rewriter, loc, dims[d], origin),
        zero);
    result.push_back(
        arith::MinSIOp::create(rewriter, loc, extentValue, remaining));
  }
  return result;
}

} // namespace mlir::croq::detail

namespace {

//===----------------------------------------------------------------------===//
// Views
//===----------------------------------------------------------------------===//

/// Builds the subview of `source` with per-dimension offsets and sizes.
static Value buildTile(ConversionPatternRewriter &rewriter, Location loc,
                       Value source, ArrayRef<Value> offsets,
                       ArrayRef<OpFoldResult> sizes, MemRefType resultType) {
  SmallVector<OpFoldResult> ofrOffsets(offsets.begin(), offsets.end());
  SmallVector<OpFoldResult> strides(offsets.size(), rewriter.getIndexAttr(1));
  return memref::SubViewOp::create(rewriter, loc, resultType, source,
                                   ofrOffsets, sizes, strides);
}

struct ChunkAtLowering : OpConversionPattern<ChunkAtOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ChunkAtOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value source = adaptor.getSource();
    auto resultType = cast<MemRefType>(op.getResult().getType());
    SmallVector<Value> dims = memrefSizes(rewriter, loc, source);
    SmallVector<Value> offsets;
    SmallVector<OpFoldResult> sizes;
    unsigned nextIndex = 0, nextBound = 0;
    for (auto [d, bound] : llvm::enumerate(op.getStaticBounds())) {
      if (bound == tile::kWholeDim) {
        offsets.push_back(cIndex(rewriter, loc, 0));
        sizes.push_back(resultType.isDynamicDim(d)
                            ? OpFoldResult(dims[d])
                            : rewriter.getIndexAttr(resultType.getDimSize(d)));
        continue;
      }
      Value boundValue = ShapedType::isDynamic(bound)
                             ? adaptor.getBounds()[nextBound++]
                             : cIndex(rewriter, loc, bound);
      Value extent = resultType.isDynamicDim(d)
                         ? Value(arith::DivUIOp::create(rewriter, loc, dims[d],
                                                        boundValue))
                         : cIndex(rewriter, loc, resultType.getDimSize(d));
      Value index = adaptor.getIndices()[nextIndex++];
      offsets.push_back(arith::MulIOp::create(rewriter, loc, index, extent));
      sizes.push_back(resultType.isDynamicDim(d)
                          ? OpFoldResult(extent)
                          : rewriter.getIndexAttr(resultType.getDimSize(d)));
    }
    rewriter.replaceOp(op, buildTile(rewriter, loc, source, offsets, sizes,
                                     resultType));
    return success();
  }
};

struct SubspanLowering : OpConversionPattern<SubspanOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(SubspanOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value source = adaptor.getSource();
    auto resultType = cast<MemRefType>(op.getResult().getType());
    SmallVector<Value> dims = memrefSizes(rewriter, loc, source);
    SmallVector<Value> offsets;
    SmallVector<OpFoldResult> sizes;
    unsigned nextExtent = 0;
    for (auto [d, extent] : llvm::enumerate(op.getStaticExtents())) {
      Value extentValue;
      if (extent == tile::kWholeDim)
        extentValue = dims[d];
      else if (ShapedType::isDynamic(extent))
        extentValue = adaptor.getExtents()[nextExtent++];
      else
        extentValue = cIndex(rewriter, loc, extent);
      Value stride =
          adaptor.getSteps().empty() ? extentValue : adaptor.getSteps()[d];
      offsets.push_back(arith::MulIOp::create(
          rewriter, loc, adaptor.getIndices()[d], stride));
      sizes.push_back(resultType.isDynamicDim(d)
                          ? OpFoldResult(extentValue)
                          : rewriter.getIndexAttr(resultType.getDimSize(d)));
    }
    rewriter.replaceOp(op, buildTile(rewriter, loc, source, offsets, sizes,
                                     resultType));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Copies and futures
//===----------------------------------------------------------------------===//

/// Elements per 16-byte access, or 1 when the innermost dimension cannot be
/// split into 16-byte vectors (not contiguous, or a static extent that is
/// not a multiple).
static int64_t vectorWidth(MemRefType source, MemRefType target) {
  unsigned bits = source.getElementTypeBitWidth();
  // A vector of sub-byte elements would pack them; memory holds one a byte.
  if (bits == 0 || bits > 128 || 128 % bits != 0 ||
      isSubByte(source.getElementType()))
    return 1;
  int64_t width = 128 / bits;
  for (MemRefType type : {source, target}) {
    SmallVector<int64_t> strides;
    int64_t offset;
    if (failed(type.getStridesAndOffset(strides, offset)) ||
        strides.back() != 1)
      return 1;
    int64_t inner = type.getShape().back();
    if (ShapedType::isDynamic(inner) || inner % width != 0)
      return 1;
  }
  return width;
}

/// The loop `for (i = rank; i < count; i += stride)` with `body(i)`.
static scf::ForOp buildStridedLoop(OpBuilder &b, Location loc, Value rank,
                                   Value count, Value stride,
                                   function_ref<void(OpBuilder &, Value)> body) {
  auto loop = scf::ForOp::create(b, loc, rank, count, stride);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  body(b, loop.getInductionVar());
  return loop;
}

/// Emits the element loop of a copy of `sizes` elements, `width` elements
/// per access, by `groupSize` threads of which this one is `rank`.
/// `access(b, indices, width)` moves one access.
/// Returns the loop, or null where the accesses are unrolled without one.
static scf::ForOp
buildCopyLoop(OpBuilder &b, Location loc, ArrayRef<Value> sizes, int64_t width,
              Value rank, Value groupSize,
              function_ref<void(OpBuilder &, ArrayRef<Value>, int64_t)> access) {
  SmallVector<Value> extents(sizes);
  extents.back() = b.createOrFold<arith::DivUIOp>(loc, extents.back(),
                                                  cIndex(b, loc, width));
  Value count = extents.front();
  for (Value e : ArrayRef(extents).drop_front())
    count = b.createOrFold<arith::MulIOp>(loc, count, e);
  auto accessAt = [&](OpBuilder &b, Value linear) {
    SmallVector<Value> indices = delinearize(b, loc, linear, extents);
    if (width > 1)
      indices.back() = arith::MulIOp::create(b, loc, indices.back(),
                                             cIndex(b, loc, width));
    access(b, indices, width);
  };
  // When the group's threads divide the accesses evenly at compile time,
  // each thread makes a known number of them: unrolled (fully up to
  // kFullUnroll, else kPartialUnroll per iteration), so that its loads can
  // all be in flight at once without relying on ptxas to unroll a loop
  // whose bounds depend on the thread index. (On the copy benchmark the
  // rolled form measured the same: bench/RESULTS.md, 2026-12-07.)
  constexpr int64_t kFullUnroll = 16, kPartialUnroll = 8;
  std::optional<int64_t> total = getConstantIntValue(count);
  std::optional<int64_t> threads = getConstantIntValue(groupSize);
  if (width > 1 && total && threads && *threads > 0 &&
      *total % *threads == 0) {
    int64_t trips = *total / *threads;
    int64_t unroll = trips <= kFullUnroll ? trips : std::gcd(trips, kPartialUnroll);
    auto unrolled = [&](OpBuilder &b, Value first) {
      for (int64_t j = 0; j < unroll; ++j)
        accessAt(b, j == 0 ? first
                           : Value(arith::AddIOp::create(
                                 b, loc, first, cIndex(b, loc, j * *threads))));
    };
    if (unroll == trips) {
      unrolled(b, rank);
      return nullptr;
    }
    return buildStridedLoop(b, loc, rank, count,
                            cIndex(b, loc, unroll * *threads), unrolled);
  }
  return buildStridedLoop(b, loc, rank, count, groupSize, accessAt);
}

struct DmaCopyLowering : ScopedPattern<DmaCopyOp> {
  using ScopedPattern::ScopedPattern;

  LogicalResult
  matchAndRewrite(DmaCopyOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value source = adaptor.getSource();
    Value target = adaptor.getTarget();
    auto sourceType = cast<MemRefType>(source.getType());
    auto targetType = cast<MemRefType>(target.getType());
    // The layout comes from the buffer (croq-plan-shared-layout); a swizzle
    // the copy names must agree with it. Into the data of a future that
    // names one of several buffers at run time, the copy records theirs.
    int64_t span = swizzleSpanOrRecorded(target, op.getSwizzle(), &rewriter);
    if (op.getSwizzle() && static_cast<int64_t>(*op.getSwizzle()) != span)
      return op.emitOpError("names swizzle(")
             << *op.getSwizzle() << "), but its destination is not stored "
             << "with that swizzle: run croq-plan-shared-layout before "
                "convert-croq-to-gpu";
    LaunchAnalysis::Scope scope = analysis.getScope(op);
    if (scope.copiesPerThread)
      scope.groupSize = 1;
    Value rank = scope.groupSize == 1 ? cIndex(rewriter, loc, 0)
                                      : groupRank(rewriter, loc, scope);
    // A run-time block's threads copy together: as many as the launch gave.
    Value groupSize =
        scope.groupSize == LaunchAnalysis::kRuntimeThreads
            ? Value(gpu::BlockDimOp::create(rewriter, loc, gpu::Dimension::x))
            : cIndex(rewriter, loc, scope.groupSize);
    SmallVector<Value> sizes = memrefSizes(rewriter, loc, target);
    Type elementType = sourceType.getElementType();
    bool async = op.getAsync() && getStorage(targetType) == Storage::Shared &&
                 getStorage(sourceType) == Storage::Global;

    // A buffer that warpgroup MMAs read is written in its swizzled layout
    // (16-byte chunks stay whole, so the vector path still applies).
    FailureOr<RootedView> targetRoot = failure();
    if (span && failed(targetRoot = rootView(rewriter, loc, target, &rewriter)))
      return op.emitOpError("cannot trace the destination to its swizzled "
                            "buffer through unit-stride views");
    auto at = [&](OpBuilder &b, ArrayRef<Value> idx)
        -> std::pair<Value, SmallVector<Value>> {
      if (!span)
        return {target, SmallVector<Value>(idx)};
      auto [flat, offset] = swizzledElement(b, loc, *targetRoot, idx, span);
      return {flat, {offset}};
    };
    auto vectorAccess = [&](OpBuilder &b, ArrayRef<Value> idx, int64_t width) {
      auto [dst, dstIdx] = at(b, idx);
      if (async) {
        nvgpu::DeviceAsyncCopyOp::create(
            b, loc, b.getType<nvgpu::DeviceAsyncTokenType>(), dst, dstIdx,
            source, idx, b.getIndexAttr(width), Value(), UnitAttr());
        return;
      }
      auto vecType = VectorType::get({width}, elementType);
      unsigned bytes = width * getStorageBytes(sourceType.getElementType());
      Value v = vector::LoadOp::create(b, loc, vecType, source, idx,
                                       /*nontemporal=*/false, llvm::MaybeAlign(bytes));
      vector::StoreOp::create(b, loc, v, dst, dstIdx, /*nontemporal=*/false,
                              llvm::MaybeAlign(bytes));
    };
    std::optional<SmallVector<Value>> sourceValid =
        validExtents(rewriter, loc, op.getSource());
    // A partial copy covers the destination: past the source's own extents
    // it writes zero, like past a tail tile's end.
    if (op.getPartial()) {
      SmallVector<Value> sourceSizes = memrefSizes(rewriter, loc, source);
      if (!sourceValid)
        sourceValid = sourceSizes;
      else
        for (auto [valid, size] : llvm::zip_equal(*sourceValid, sourceSizes))
          valid = arith::MinSIOp::create(rewriter, loc, valid, size);
    }
    std::optional<SmallVector<Value>> targetValid =
        validExtents(rewriter, loc, op.getTarget());
    auto plainAccess = [&](OpBuilder &b, ArrayRef<Value> idx) {
      auto [dst, dstIdx] = at(b, idx);
      // cp.async moves 4, 8 or 16 bytes; narrower elements go synchronously.
      if (async && sourceType.getElementTypeBitWidth() == 32) {
        nvgpu::DeviceAsyncCopyOp::create(
            b, loc, b.getType<nvgpu::DeviceAsyncTokenType>(), dst, dstIdx,
            source, idx, b.getIndexAttr(1), Value(), UnitAttr());
        return;
      }
      Value v = memref::LoadOp::create(b, loc, source, idx);
      memref::StoreOp::create(b, loc, v, dst, dstIdx);
    };
    // Tail tiles: elements past the end of the destination are skipped,
    // elements past the end of the source are filled with zero.
    auto scalarAccess = [&](OpBuilder &b, ArrayRef<Value> idx, int64_t) {
      if (!sourceValid && !targetValid)
        return plainAccess(b, idx);
      Value writable = targetValid ? inBounds(b, loc, idx, *targetValid)
                                   : Value(arith::ConstantIntOp::create(
                                         b, loc, b.getI1Type(), 1));
      auto guard = scf::IfOp::create(b, loc, writable, /*withElseRegion=*/false);
      OpBuilder inner = guard.getThenBodyBuilder();
      if (!sourceValid)
        return plainAccess(inner, idx);
      Value readable = inBounds(inner, loc, idx, *sourceValid);
      auto pick = scf::IfOp::create(inner, loc, readable, /*withElseRegion=*/true);
      OpBuilder readBuilder = pick.getThenBodyBuilder();
      plainAccess(readBuilder, idx);
      OpBuilder zeroBuilder = pick.getElseBodyBuilder();
      Value zero = arith::ConstantOp::create(
          zeroBuilder, loc, zeroBuilder.getZeroAttr(elementType));
      auto [dst, dstIdx] = at(zeroBuilder, idx);
      memref::StoreOp::create(zeroBuilder, loc, zero, dst, dstIdx);
    };

    int64_t width = vectorWidth(sourceType, targetType);
    // The group's threads split a cooperative copy: croq-check-divergence
    // needs every one of them to reach it (kCollectiveAttrName).
    Operation *copyRoot = nullptr;
    if (width > 1) {
      Value aligned = arith::AndIOp::create(
          rewriter, loc, isAligned(rewriter, loc, source, width),
          isAligned(rewriter, loc, target, width));
      for (auto &valid : {sourceValid, targetValid})
        if (valid)
          aligned = arith::AndIOp::create(
              rewriter, loc, aligned, coversTile(rewriter, loc, *valid, sizes));
      auto ifOp = scf::IfOp::create(rewriter, loc, aligned,
                                    /*withElseRegion=*/true);
      OpBuilder thenBuilder = ifOp.getThenBodyBuilder();
      buildCopyLoop(thenBuilder, loc, sizes, width, rank, groupSize,
                    vectorAccess);
      OpBuilder elseBuilder = ifOp.getElseBodyBuilder();
      buildCopyLoop(elseBuilder, loc, sizes, 1, rank, groupSize,
                    scalarAccess);
      copyRoot = ifOp;
    } else {
      copyRoot = buildCopyLoop(rewriter, loc, sizes, 1, rank, groupSize,
                               scalarAccess);
    }
    if (copyRoot && scope.groupSize != 1)
      copyRoot->setAttr(kCollectiveAttrName,
                        LevelAttr::get(op.getContext(), scope.groupLevel));

    if (async) {
      NVVM::CpAsyncCommitGroupOp::create(rewriter, loc);
    } else {
      // wgmma reads a swizzled buffer through the async proxy.
      if (span)
        fenceAsyncProxy(rewriter, loc);
    }
    replaceCopy(rewriter, op, target);
    return success();
  }
};

struct WaitLowering : ScopedPattern<WaitOp> {
  using ScopedPattern::ScopedPattern;

  LogicalResult
  matchAndRewrite(WaitOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    // A wait on TMA futures that croq-bind-tma-futures left is a wait for
    // stores (the checks before conversion reject any other).
    if (op->hasAttr(kTmaStoreWaitAttr)) {
      // Each thread waits for the bulk stores it issued (none but the
      // issuer's have any) to have read their tiles; then the group may
      // write them again.
      NVVM::CpAsyncBulkWaitGroupOp::create(rewriter, op.getLoc(), 0,
                                           rewriter.getUnitAttr());
      const LaunchAnalysis::Scope &scope = analysis.getScope(op);
      if (scope.manyThreads())
        emitScopeBarrier(rewriter, op.getLoc(), scope);
    }
    bool anyCopy = llvm::any_of(op.getFutures(), [](Value f) {
      return cast<FutureType>(f.getType()).getKind() == FutureKind::Dma;
    });
    if (anyCopy) {
      NVVM::CpAsyncWaitGroupOp::create(rewriter, op.getLoc(), 0);
      // cp.async writes are generic-proxy writes; wgmma reads swizzled
      // buffers through the async proxy.
      // A future a loop carries may name a swizzled buffer (when the
      // function has any): fenced too.
      bool intoSwizzled = llvm::any_of(adaptor.getFutures(), [&](Value f) {
        return isa<MemRefType>(f.getType()) &&
               (swizzleSpan(f, &rewriter) != 0 ||
                (mayNameSeveralBuffers(f, &rewriter) &&
                 hasSwizzledBuffer(op->getParentOfType<FunctionOpInterface>())));
      });
      if (intoSwizzled)
        fenceAsyncProxy(rewriter, op.getLoc());
    }
    if (llvm::any_of(op.getFutures(), [](Value f) {
          auto type = cast<FutureType>(f.getType());
          return type.getKind() == FutureKind::Mma &&
                 isWarpgroupFrag(type.getDataType());
        }))
      waitWarpgroupMmas(rewriter, op.getLoc());
    rewriter.eraseOp(op);
    return success();
  }
};

/// Ops that become their first operand: a future's data is the (converted)
/// future itself, and a placeholder future is its buffer.
template <typename OpTy>
struct ForwardFirstOperand : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, adaptor.getOperands().front());
    return success();
  }
};

struct SwapLowering : OpConversionPattern<SwapOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SwapOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, {adaptor.getRhs(), adaptor.getLhs()});
    return success();
  }
};

struct RotateLowering : OpConversionPattern<RotateOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(RotateOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    ValueRange futures = adaptor.getFutures();
    SmallVector<Value> rotated;
    for (size_t i = 0, e = futures.size(); i < e; ++i)
      rotated.push_back(futures[(i + 1) % e]);
    rewriter.replaceOp(op, rotated);
    return success();
  }
};

/// `select(c, f0, f1)` over futures (or other croq values): a select of
/// what they lower to.
struct SelectLowering : OpConversionPattern<arith::SelectOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(arith::SelectOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Type type = getTypeConverter()->convertType(op.getType());
    if (!type)
      return rewriter.notifyMatchFailure(op, "unconvertible select type");
    rewriter.replaceOpWithNewOp<arith::SelectOp>(
        op, type, adaptor.getCondition(), adaptor.getTrueValue(),
        adaptor.getFalseValue());
    return success();
  }
};

/// Local buffers live in registers or local memory: an alloca per thread.
struct LocalAllocLowering : OpConversionPattern<memref::AllocOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(memref::AllocOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (getStorage(op.getType()) != Storage::Local)
      return failure();
    rewriter.replaceOpWithNewOp<memref::AllocaOp>(
        op, op.getType(), adaptor.getDynamicSizes(), adaptor.getSymbolOperands(),
        op.getAlignmentAttr());
    return success();
  }
};

} // namespace

void mlir::croq::populateCroqToGPUCopyPatterns(TypeConverter &converter,
    RewritePatternSet &patterns, const LaunchAnalysis &analysis) {
  MLIRContext *context = patterns.getContext();
  patterns.add<DmaCopyLowering, WaitLowering>(converter, context, analysis);
  patterns.add<ChunkAtLowering, SubspanLowering,
               ForwardFirstOperand<FutureDataOp>, ForwardFirstOperand<DmaAnyOp>,
               SwapLowering, RotateLowering, SelectLowering,
               LocalAllocLowering>(converter, context);
}
