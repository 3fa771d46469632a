//===- Builders.cpp - IR builders the croq-to-gpu patterns share ------------===//
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

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

namespace mlir::croq::detail {

ParallelOp kernelOf(Operation *op) {
  ParallelOp kernel = op->getParentOfType<ParallelOp>();
  while (kernel && kernel.getParentParallel())
    kernel = kernel.getParentParallel();
  return kernel;
}

Value cIndex(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

Value threadId(OpBuilder &b, Location loc) {
  return gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
}

/// Rank of the executing thread in its cooperating group.
Value groupRank(OpBuilder &b, Location loc,
                       const LaunchAnalysis::Scope &scope) {
  Value tid = threadId(b, loc);
  // A run-time block's group is the block (LaunchAnalysis).
  if (scope.groupSize == scope.blockDim)
    return tid;
  return arith::RemUIOp::create(b, loc, tid, cIndex(b, loc, scope.groupSize));
}

/// A barrier over the threads of one group.
SmallVector<int64_t> warpgroupBarrierIds(int64_t warpgroups,
                                         uint32_t programIds) {
  SmallVector<int64_t> ids;
  for (int64_t id = kWarpgroupBarrierTop;
       id > 0 && static_cast<int64_t>(ids.size()) < warpgroups; --id)
    if (!(programIds & (1u << id)))
      ids.push_back(id);
  return ids;
}

GroupBarrier groupBarrierKind(Level level, int64_t groupSize,
                              int64_t blockDim) {
  if (groupSize != LaunchAnalysis::kRuntimeThreads && groupSize <= 1)
    return GroupBarrier::None;
  // A group as large as the block (a warpgroup barrier in a block of 64
  // threads) is the block.
  if (level == Level::Block || groupSize == blockDim ||
      (blockDim != LaunchAnalysis::kRuntimeThreads &&
       groupSize != LaunchAnalysis::kRuntimeThreads && groupSize > blockDim))
    return GroupBarrier::Block;
  return level == Level::Warp ? GroupBarrier::Warp : GroupBarrier::Warpgroup;
}

int64_t barrierThreads(Level level, const LaunchAnalysis::Scope &scope) {
  return level == Level::Block ? scope.blockDim : levelThreads(level);
}

void emitGroupBarrier(OpBuilder &b, Location loc, Level level,
                      int64_t groupSize, int64_t blockDim,
                      uint32_t programIds) {
  switch (groupBarrierKind(level, groupSize, blockDim)) {
  case GroupBarrier::None:
    return;
  case GroupBarrier::Block:
    gpu::BarrierOp::create(b, loc);
    return;
  case GroupBarrier::Warp: {
    Value mask = arith::ConstantIntOp::create(b, loc, b.getI32Type(), -1);
    NVVM::SyncWarpOp::create(b, loc, mask);
    return;
  }
  case GroupBarrier::Warpgroup:
    break;
  }
  // A warpgroup synchronises on a named barrier of its own, from the top
  // ids down, leaving the program's __bar_sync ids (croq.named_barrier) to
  // it; barrier 0 is the block's. The verifier made sure there are enough.
  Value tid = threadId(b, loc);
  Value group = arith::DivUIOp::create(b, loc, tid, cIndex(b, loc, 128));
  Value id;
  if (programIds == 0) {
    id = arith::SubIOp::create(b, loc, cIndex(b, loc, kWarpgroupBarrierTop),
                               group);
  } else {
    SmallVector<int64_t> ids =
        warpgroupBarrierIds((blockDim + 127) / 128, programIds);
    id = cIndex(b, loc, ids.back());
    for (int64_t w = static_cast<int64_t>(ids.size()) - 2; w >= 0; --w) {
      Value here = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                         group, cIndex(b, loc, w));
      id = arith::SelectOp::create(b, loc, here, cIndex(b, loc, ids[w]), id);
    }
  }
  Value id32 = arith::IndexCastOp::create(b, loc, b.getI32Type(), id);
  Value count = arith::ConstantIntOp::create(b, loc, b.getI32Type(), 128);
  NVVM::BarrierOp::create(b, loc, Type(), id32, count, /*reductionOp=*/nullptr,
                          /*reductionPredicate=*/Value());
}

void emitScopeBarrier(OpBuilder &b, Location loc,
                             const LaunchAnalysis::Scope &scope) {
  emitGroupBarrier(b, loc, scope.groupLevel, scope.groupSize, scope.blockDim,
                   scope.programBarrierIds);
}

Value linearSlot(OpBuilder &b, Location loc, EventType type,
                        ValueRange indices) {
  Value slot = cIndex(b, loc, 0);
  for (auto [d, extent] : llvm::enumerate(type.getShape())) {
    slot = arith::MulIOp::create(b, loc, slot, cIndex(b, loc, extent));
    if (d < indices.size())
      slot = arith::AddIOp::create(b, loc, slot, indices[d]);
  }
  return slot;
}

std::optional<int64_t> lowestSelectedThread(Operation *op,
                                            int64_t groupSize) {
  auto region = op->getParentOfType<InThreadsOp>();
  if (!region)
    return std::nullopt;
  // Every selected thread must reach the op: between the region and the
  // op only loops whose bounds are the same in every thread (a branch, or
  // a per-thread trip count, could leave the lowest thread out).
  for (Operation *at = op->getParentOp(); at != region; at = at->getParentOp()) {
    auto loop = dyn_cast<scf::ForOp>(at);
    if (!loop || dependsOnThreadIndex(loop.getLowerBound()) ||
        dependsOnThreadIndex(loop.getUpperBound()) ||
        dependsOnThreadIndex(loop.getStep()))
      return std::nullopt;
  }
  // roleSelection numbers threads row-major over the indices of the levels
  // below the block, innermost fastest: the thread id croq gives them.
  std::optional<llvm::BitVector> selected = roleSelection(region);
  auto parent = region->getParentOfType<ParallelOp>();
  if (!selected || selected->count() < 2 || !parent ||
      parent.getLevel() != Level::Thread)
    return std::nullopt;
  // Each instance of the group issues its own: its lowest selected thread,
  // which must be the same rank in every instance that selects any (a rank
  // test then picks it).
  int64_t size = selected->size();
  if (groupSize <= 0 || groupSize >= size || size % groupSize != 0)
    return selected->find_first();
  std::optional<int64_t> rank;
  for (int64_t first = 0; first < size; first += groupSize) {
    int found = selected->find_first_in(first, first + groupSize);
    if (found < 0)
      continue;
    if (rank && *rank != found - first)
      return std::nullopt;
    rank = found - first;
  }
  return rank;
}

/// True when every croq.inthreads around `op` tests only indices of
/// parallels at `level` or above, so that it keeps or drops whole instances
/// of that level (a cooperative op there still has all its threads).
bool selectsWholeGroups(Operation *op, Level level) {
  for (auto region = op->getParentOfType<InThreadsOp>(); region;
       region = region->getParentOfType<InThreadsOp>()) {
    bool whole = allSources(region.getPredicate(), [&](BlockArgument arg) {
      auto parallel = dyn_cast<ParallelOp>(arg.getOwner()->getParentOp());
      return parallel && static_cast<int>(parallel.getLevel()) >=
                             static_cast<int>(level);
    });
    if (!whole)
      return false;
  }
  return true;
}

/// True when `pred` holds for every pair of `lhs` and `rhs`.
static Value allHold(OpBuilder &b, Location loc, arith::CmpIPredicate pred,
                     ArrayRef<Value> lhs, ArrayRef<Value> rhs) {
  Value acc = arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1);
  for (auto [l, r] : llvm::zip_equal(lhs, rhs))
    acc = arith::AndIOp::create(b, loc, acc,
                                arith::CmpIOp::create(b, loc, pred, l, r));
  return acc;
}

/// True when every index lies below its valid extent.
Value inBounds(OpBuilder &b, Location loc, ArrayRef<Value> indices,
                      ArrayRef<Value> valid) {
  return allHold(b, loc, arith::CmpIPredicate::slt, indices, valid);
}

Value loadOrZero(OpBuilder &b, Location loc, Value source, ValueRange indices,
                 Value inside, Value zero) {
  if (!inside)
    return memref::LoadOp::create(b, loc, source, indices);
  auto guard = scf::IfOp::create(b, loc, zero.getType(), inside,
                                 /*withElseRegion=*/true);
  OpBuilder thenB = guard.getThenBodyBuilder();
  scf::YieldOp::create(
      thenB, loc, memref::LoadOp::create(thenB, loc, source, indices).getResult());
  OpBuilder elseB = guard.getElseBodyBuilder();
  scf::YieldOp::create(elseB, loc, zero);
  return guard.getResult(0);
}

/// True when the valid extents cover the whole tile.
Value coversTile(OpBuilder &b, Location loc, ArrayRef<Value> valid,
                        ArrayRef<Value> sizes) {
  return allHold(b, loc, arith::CmpIPredicate::eq, valid, sizes);
}

/// True at run time when every row of `memref` starts `width`-aligned:
/// its offset and outer strides are multiples of `width` elements.
Value isAligned(OpBuilder &b, Location loc, Value memref,
                       int64_t width) {
  auto metadata = memref::ExtractStridedMetadataOp::create(b, loc, memref);
  Value widthValue = cIndex(b, loc, width);
  Value zero = cIndex(b, loc, 0);
  Value acc = arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1);
  SmallVector<Value> checks{metadata.getOffset()};
  for (Value stride : metadata.getStrides().drop_back())
    checks.push_back(stride);
  for (Value v : checks) {
    Value rem = arith::RemUIOp::create(b, loc, v, widthValue);
    Value ok =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, rem, zero);
    acc = arith::AndIOp::create(b, loc, acc, ok);
  }
  return acc;
}

std::optional<Level> mmaScope(const LaunchAnalysis::Scope &scope) {
  if (scope.groupLevel == Level::Warp ||
      (scope.groupLevel == Level::Block && scope.blockDim == 32))
    return Level::Warp;
  if (scope.groupLevel == Level::Warpgroup ||
      (scope.groupLevel == Level::Block && scope.blockDim == 128))
    return Level::Warpgroup;
  return std::nullopt;
}

void fenceAsyncProxy(OpBuilder &b, Location loc) {
  NVVM::FenceProxyOp::create(
      b, loc, NVVM::ProxyKind::async_shared,
      NVVM::SharedSpaceAttr::get(b.getContext(), NVVM::SharedSpace::shared_cta));
}

Value convertElement(OpBuilder &b, Location loc, Value value, Type to) {
  Type from = value.getType();
  if (from == to)
    return value;
  bool fromFloat = isa<FloatType>(from), toFloat = isa<FloatType>(to);
  unsigned fromBits = from.getIntOrFloatBitWidth();
  unsigned toBits = to.getIntOrFloatBitWidth();
  if (fromFloat && toFloat)
    return fromBits > toBits ? Value(arith::TruncFOp::create(b, loc, to, value))
                             : Value(arith::ExtFOp::create(b, loc, to, value));
  if (!fromFloat && toFloat)
    return arith::SIToFPOp::create(b, loc, to, value);
  if (fromFloat)
    return arith::FPToSIOp::create(b, loc, to, value);
  if (fromBits > toBits)
    return arith::TruncIOp::create(b, loc, to, value);
  return arith::ExtSIOp::create(b, loc, to, value);
}

Value electOneThread(OpBuilder &b, Location loc, Value rank, bool electSync) {
  if (!electSync)
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, rank,
                                 cIndex(b, loc, 0));
  Value warp = arith::DivUIOp::create(b, loc, rank, cIndex(b, loc, 32));
  Value firstWarp = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                          warp, cIndex(b, loc, 0));
  // elect.sync needs the whole warp: only the first warp evaluates it.
  auto ifOp = scf::IfOp::create(b, loc, TypeRange{b.getI1Type()}, firstWarp,
                                /*withElseRegion=*/true);
  OpBuilder thenBuilder = ifOp.getThenBodyBuilder();
  scf::YieldOp::create(thenBuilder, loc,
                       ValueRange{NVVM::ElectSyncOp::create(
                           thenBuilder, loc, thenBuilder.getI1Type(), Value())});
  OpBuilder elseBuilder = ifOp.getElseBodyBuilder();
  scf::YieldOp::create(elseBuilder, loc,
                       ValueRange{arith::ConstantIntOp::create(
                           elseBuilder, loc, elseBuilder.getI1Type(), 0)});
  return ifOp.getResult(0);
}

Type mbarrierGroupType(MLIRContext *context, int64_t count) {
  return nvgpu::MBarrierGroupType::get(
      context, gpu::AddressSpaceAttr::get(context, gpu::AddressSpace::Workgroup),
      count);
}

void emitClusterBarrier(OpBuilder &b, Location loc) {
  NVVM::ClusterArriveOp::create(b, loc, /*aligned=*/UnitAttr());
  NVVM::ClusterWaitOp::create(b, loc, /*aligned=*/UnitAttr());
}

Value clusterRank(OpBuilder &b, Location loc) {
  Value rank = NVVM::ClusterId::create(b, loc, b.getI32Type());
  return arith::IndexCastUIOp::create(b, loc, b.getIndexType(), rank);
}

Value createMBarriers(OpBuilder &b, Location loc, int64_t count,
                      int64_t arrivals, int64_t clusterSize) {
  Value group = nvgpu::MBarrierCreateOp::create(
      b, loc, mbarrierGroupType(b.getContext(), count));
  Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                      threadId(b, loc), cIndex(b, loc, 0));
  auto ifOp = scf::IfOp::create(b, loc, first, /*withElseRegion=*/false);
  OpBuilder inner = ifOp.getThenBodyBuilder();
  Value expected = cIndex(inner, loc, arrivals);
  for (int64_t i = 0; i < count; ++i)
    nvgpu::MBarrierInitOp::create(inner, loc, group, expected,
                                  cIndex(inner, loc, i), Value());
  if (clusterSize == 1) {
    gpu::BarrierOp::create(b, loc);
    return group;
  }
  // The initialisation is visible to the cluster before any block's
  // remote arrival or multicast reaches these barriers.
  NVVM::FenceMbarrierInitOp::create(inner, loc);
  emitClusterBarrier(b, loc);
  return group;
}

/// Up to 64 slots keep their bits in one i64 (bit s for slot s), stored in
/// a one-element alloca that LLVM promotes to a register: the slot index
/// is a run-time value, and an array of bits indexed by it would live in
/// local memory (a local load and store per wait). More slots take an i1
/// array.
static constexpr int64_t kPackedPhaseBits = 64;

Value createPhaseBits(OpBuilder &at, OpBuilder &init, Location loc,
                      int64_t count, bool start) {
  if (count <= kPackedPhaseBits) {
    Value word = memref::AllocaOp::create(
        at, loc, MemRefType::get({1}, at.getI64Type()));
    uint64_t ones = count == 64 ? ~uint64_t(0) : (uint64_t(1) << count) - 1;
    Value value = arith::ConstantIntOp::create(init, loc, init.getI64Type(),
                                               start ? int64_t(ones) : 0);
    memref::StoreOp::create(init, loc, value, word,
                            ValueRange{cIndex(init, loc, 0)});
    return word;
  }
  Value bits = memref::AllocaOp::create(
      at, loc, MemRefType::get({count}, at.getI1Type()));
  Value value = arith::ConstantIntOp::create(init, loc, init.getI1Type(), start);
  for (int64_t i = 0; i < count; ++i)
    memref::StoreOp::create(init, loc, value, bits,
                            ValueRange{cIndex(init, loc, i)});
  return bits;
}

Value createPhaseBits(OpBuilder &b, Location loc, int64_t count, bool start) {
  return createPhaseBits(b, b, loc, count, start);
}

Value loadPhaseBit(OpBuilder &b, Location loc, Value bits, Value slot) {
  if (cast<MemRefType>(bits.getType()).getElementType().isInteger(1))
    return memref::LoadOp::create(b, loc, bits, slot);
  Value word = memref::LoadOp::create(b, loc, bits, ValueRange{cIndex(b, loc, 0)});
  Value shift = arith::IndexCastUIOp::create(b, loc, b.getI64Type(), slot);
  Value shifted = arith::ShRUIOp::create(b, loc, word, shift);
  return arith::TruncIOp::create(b, loc, b.getI1Type(), shifted);
}

void flipPhaseBit(OpBuilder &b, Location loc, Value bits, Value slot) {
  if (cast<MemRefType>(bits.getType()).getElementType().isInteger(1)) {
    Value bit = memref::LoadOp::create(b, loc, bits, slot);
    Value flipped = arith::XOrIOp::create(
        b, loc, bit, arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1));
    memref::StoreOp::create(b, loc, flipped, bits, slot);
    return;
  }
  Value zero = cIndex(b, loc, 0);
  Value word = memref::LoadOp::create(b, loc, bits, ValueRange{zero});
  Value shift = arith::IndexCastUIOp::create(b, loc, b.getI64Type(), slot);
  Value mask = arith::ShLIOp::create(
      b, loc, arith::ConstantIntOp::create(b, loc, b.getI64Type(), 1), shift);
  memref::StoreOp::create(b, loc, arith::XOrIOp::create(b, loc, word, mask),
                          bits, ValueRange{zero});
}

void replaceCopy(ConversionPatternRewriter &rewriter, Operation *copy,
                 Value destination) {
  if (copy->getNumResults())
    rewriter.replaceOp(copy, destination);
  else
    rewriter.eraseOp(copy);
}

/// Waits on mbarrier `slot` of `group` for the parity held in the thread's
/// phase bit `bits[bit]`, then flips the bit: the waiter's own count of the
/// generations it has seen.
void waitOnPhaseBit(OpBuilder &b, Location loc, Value group,
                           Value slot, Value bits, Value bit) {
  Value parity = loadPhaseBit(b, loc, bits, bit);
  nvgpu::MBarrierTryWaitParityOp::create(b, loc, group, parity,
                                         cIndex(b, loc, 10000000), slot);
  flipPhaseBit(b, loc, bits, bit);
}

/// Row-major delinearisation of `linear` over `extents`.
SmallVector<Value> delinearize(OpBuilder &b, Location loc, Value linear,
                                      ArrayRef<Value> extents) {
  SmallVector<Value> result(extents.size());
  for (int i = extents.size() - 1; i >= 0; --i) {
    if (i == 0) {
      result[i] = linear;
      break;
    }
    result[i] = arith::RemUIOp::create(b, loc, linear, extents[i]);
    linear = arith::DivUIOp::create(b, loc, linear, extents[i]);
  }
  return result;
}

SmallVector<Value> memrefSizes(OpBuilder &b, Location loc, Value memref) {
  auto type = cast<MemRefType>(memref.getType());
  SmallVector<Value> sizes;
  for (int64_t i = 0; i < type.getRank(); ++i) {
    if (type.isDynamicDim(i))
      sizes.push_back(memref::DimOp::create(b, loc, memref, i));
    else
      sizes.push_back(cIndex(b, loc, type.getDimSize(i)));
  }
  return sizes;
}

} // namespace mlir::croq::detail
