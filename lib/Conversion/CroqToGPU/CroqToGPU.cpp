//===- CroqToGPU.cpp - croq to gpu / nvgpu conversion ---------------------===//
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
#define GEN_PASS_DEF_CONVERTCROQTOGPUPASS
#define GEN_PASS_DEF_CROQASSIGNARRIVALSPASS
#define GEN_PASS_DEF_CROQBOUNDKERNELREGISTERSPASS
#define GEN_PASS_DEF_CROQUNROLLFRAGMENTVECTORSPASS
#include "Croq/Conversion/Passes.h.inc"
} // namespace mlir::croq

using namespace mlir;
using namespace mlir::croq;
using namespace mlir::croq::detail;

//===----------------------------------------------------------------------===//
// LaunchAnalysis
//===----------------------------------------------------------------------===//


/// Parallels nested in `op` with no other parallel between them.
static SmallVector<ParallelOp> directChildren(ParallelOp op) {
  SmallVector<ParallelOp> children;
  op.getBody().walk<WalkOrder::PreOrder>([&](ParallelOp child) {
    children.push_back(child);
    return WalkResult::skip();
  });
  return children;
}

/// Product of the constant bounds of a thread-side parallel.
static FailureOr<int64_t> constantExtent(ParallelOp op) {
  int64_t total = 1;
  for (auto [i, bound] : llvm::enumerate(op.getBounds())) {
    APInt value;
    if (!matchPattern(bound, m_ConstantInt(&value)))
      return op.emitOpError("bound ")
             << i << " of a " << stringifyLevel(op.getLevel())
             << " parallel must be a compile-time constant: it sets the "
                "block size of the kernel";
    int64_t extent = value.getSExtValue();
    if (extent < 1)
      return op.emitOpError("bound ")
             << i << " of a " << stringifyLevel(op.getLevel())
             << " parallel is " << extent << "; it must be at least 1";
    // Saturates rather than wraps; the caller rejects anything this big.
    total = total > std::numeric_limits<int64_t>::max() / extent
                ? std::numeric_limits<int64_t>::max()
                : total * extent;
  }
  return total;
}

/// The most threads one block may have.
constexpr int64_t kMaxBlockThreads = 1024;

/// Threads used by the thread-side children of `op`, which must agree.
FailureOr<int64_t> LaunchAnalysis::childThreads(ParallelOp op) {
  std::optional<int64_t> common;
  ParallelOp first;
  for (ParallelOp child : directChildren(op)) {
    FailureOr<int64_t> extent = constantExtent(child);
    if (failed(extent))
      return failure();
    int64_t unit = levelThreads(child.getLevel());
    // Checked before multiplying: 2^62 warpgroups x 128 would wrap.
    if (*extent > kMaxBlockThreads / unit)
      return child.emitOpError("needs ")
             << *extent << " x " << unit
             << " threads per block; the limit is " << kMaxBlockThreads
             << ": give this parallel a smaller extent";
    instanceThreads[child] = unit;
    // Children of this child must fill exactly one of its instances.
    for (ParallelOp grandChild : directChildren(child)) {
      (void)grandChild;
      FailureOr<int64_t> inner = childThreads(child);
      if (failed(inner))
        return failure();
      if (*inner != unit)
        return child.emitOpError("an instance of a '")
               << stringifyLevel(child.getLevel()) << "' parallel has " << unit
               << " threads, but its nested parallels use " << *inner
               << "; make the inner extents multiply to " << unit;
      break;
    }
    int64_t threads = *extent * unit;
    if (common && *common != threads) {
      InFlightDiagnostic diag =
          child.emitOpError("sibling parallels in one block need equal thread "
                            "counts: this one uses ")
          << threads << " threads";
      diag.attachNote(first.getLoc()) << "and this one " << *common;
      return diag;
    }
    common = threads;
    first = child;
  }
  return common.value_or(1);
}

void LaunchAnalysis::recordScopes(ParallelOp kernel, int64_t blockDim) {
  kernel.getBody().walk([&](Operation *op) {
    Scope scope;
    scope.blockDim = blockDim;
    scope.groupLevel = Level::Block;
    scope.groupSize = blockDim;
    bool foundGroup = false;
    for (Operation *parent = op->getParentOp(); parent;
         parent = parent->getParentOp()) {
      if (isa<InThreadsOp>(parent))
        scope.inThreads = true;
      auto parallel = dyn_cast<ParallelOp>(parent);
      if (!parallel)
        continue;
      if (parallel == kernel)
        break;
      if (parallel.getLevel() == Level::Thread) {
        if (!foundGroup)
          scope.perThread = true;
        continue;
      }
      if (!foundGroup) {
        scope.groupLevel = parallel.getLevel();
        scope.groupSize = levelThreads(parallel.getLevel());
        foundGroup = true;
      }
    }
    // A collective op directly in a thread-level body cooperates with the
    // group above; perThread records only that per-thread data is in scope.
    if (scope.perThread && !foundGroup)
      scope.groupSize = blockDim;
    if (auto copy = dyn_cast<DmaCopyOp>(op)) {
      // A local buffer is each thread's own, at any level: every thread
      // copies its whole tile (isPerThreadCopy holds for it).
      bool local = llvm::any_of(
          ValueRange{copy.getSource(), copy.getTarget()}, [](Value side) {
            return getStorage(cast<MemRefType>(side.getType())) ==
                   Storage::Local;
          });
      if (scope.perThread || local)
        scope.copiesPerThread = isPerThreadCopy(copy);
      // Every warp (warpgroup) of the block copies the same tile: the block
      // copies it once, cooperatively (croq-insert-barriers orders it).
      else if (scope.groupLevel != Level::Block &&
               isGroupInvariantCopy(copy, kernel)) {
        scope.groupLevel = Level::Block;
        scope.groupSize = blockDim;
      }
    }
    scopes[op] = scope;
  });
}

LogicalResult LaunchAnalysis::analyze(ModuleOp module) {
  WalkResult result = module.walk([&](ParallelOp op) {
    if (op.getParentParallel())
      return WalkResult::advance();
    if (op.getLevel() != Level::Block) {
      op.emitOpError("a kernel is a block-level parallel; wrap this '")
          << stringifyLevel(op.getLevel())
          << "' parallel in `croq.parallel (...) by [...] : block`";
      return WalkResult::interrupt();
    }
    FailureOr<int64_t> blockDim = childThreads(op);
    if (failed(blockDim))
      return WalkResult::interrupt();
    if (*blockDim > kMaxBlockThreads) {
      op.emitOpError("needs ") << *blockDim
                               << " threads per block; the limit is "
                               << kMaxBlockThreads;
      return WalkResult::interrupt();
    }
    instanceThreads[op] = *blockDim;
    recordScopes(op, *blockDim);
    return WalkResult::skip();
  });
  return failure(result.wasInterrupted());
}

void mlir::croq::LaunchAnalysisDeleter::operator()(
    LaunchAnalysis *analysis) const {
  delete analysis;
}

LaunchAnalysisPtr mlir::croq::analyzeLaunches(ModuleOp module) {
  LaunchAnalysisPtr analysis(new LaunchAnalysis());
  if (failed(analysis->analyze(module)))
    return nullptr;
  return analysis;
}

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
  if (scope.groupSize == scope.blockDim)
    return tid;
  return arith::RemUIOp::create(b, loc, tid, cIndex(b, loc, scope.groupSize));
}

/// A barrier over the threads of one group.
static void emitGroupBarrier(OpBuilder &b, Location loc, Level level,
                             int64_t groupSize, int64_t blockDim) {
  if (groupSize <= 1)
    return;
  if (level == Level::Block || groupSize == blockDim) {
    gpu::BarrierOp::create(b, loc);
    return;
  }
  if (level == Level::Warp) {
    Value mask = arith::ConstantIntOp::create(b, loc, b.getI32Type(), -1);
    NVVM::SyncWarpOp::create(b, loc, mask);
    return;
  }
  // A warpgroup synchronises on named barrier 1 + its index; barrier 0 is
  // the block's.
  Value tid = threadId(b, loc);
  Value group = arith::DivUIOp::create(b, loc, tid, cIndex(b, loc, 128));
  Value id = arith::AddIOp::create(b, loc, group, cIndex(b, loc, 1));
  Value id32 = arith::IndexCastOp::create(b, loc, b.getI32Type(), id);
  Value count = arith::ConstantIntOp::create(b, loc, b.getI32Type(), 128);
  NVVM::BarrierOp::create(b, loc, Type(), id32, count, /*reductionOp=*/nullptr,
                          /*reductionPredicate=*/Value());
}

void emitScopeBarrier(OpBuilder &b, Location loc,
                             const LaunchAnalysis::Scope &scope) {
  emitGroupBarrier(b, loc, scope.groupLevel, scope.groupSize, scope.blockDim);
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

Value convertFloat(OpBuilder &b, Location loc, Value value, Type to) {
  Type from = value.getType();
  if (from == to)
    return value;
  if (from.getIntOrFloatBitWidth() > to.getIntOrFloatBitWidth())
    return arith::TruncFOp::create(b, loc, to, value);
  return arith::ExtFOp::create(b, loc, to, value);
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

Value createMBarriers(OpBuilder &b, Location loc, int64_t count,
                      int64_t arrivals) {
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
  gpu::BarrierOp::create(b, loc);
  return group;
}

Value createPhaseBits(OpBuilder &b, Location loc, int64_t count, bool start) {
  Value bits =
      memref::AllocaOp::create(b, loc, MemRefType::get({count}, b.getI1Type()));
  Value value = arith::ConstantIntOp::create(b, loc, b.getI1Type(), start);
  for (int64_t i = 0; i < count; ++i)
    memref::StoreOp::create(b, loc, value, bits, ValueRange{cIndex(b, loc, i)});
  return bits;
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
  Value parity = memref::LoadOp::create(b, loc, bits, bit);
  nvgpu::MBarrierTryWaitParityOp::create(b, loc, group, parity,
                                         cIndex(b, loc, 10000000), slot);
  Value flipped = arith::XOrIOp::create(
      b, loc, parity, arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1));
  memref::StoreOp::create(b, loc, flipped, bits, bit);
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

static SmallVector<Value> memrefSizes(OpBuilder &b, Location loc, Value memref) {
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

//===----------------------------------------------------------------------===//
// Parallel structure
//===----------------------------------------------------------------------===//

namespace {


/// Moves the body of a croq region op before `op`, replacing the block
/// arguments, and drops its croq.yield.
static void inlineBody(ConversionPatternRewriter &rewriter, Region &body,
                       Operation *op, ValueRange replacements) {
  Block *block = &body.front();
  rewriter.eraseOp(block->getTerminator());
  rewriter.inlineBlockBefore(block, op, replacements);
}

/// `value`, used in `kernel`, computed before it: values from outside are
/// themselves, pure region-free ops of such values are cloned at the
/// builder's point; a kernel index or anything else fails.
static FailureOr<Value> hostValue(ConversionPatternRewriter &b, Value value,
                                  Operation *kernel, IRMapping &map) {
  if (Value mapped = map.lookupOrNull(value))
    return mapped;
  Operation *def = value.getDefiningOp();
  Operation *owner =
      def ? def : cast<BlockArgument>(value).getOwner()->getParentOp();
  // From outside the kernel (a function argument may already have been
  // converted: its replacement).
  if (!owner || !kernel->isAncestor(owner)) {
    Value remapped = b.getRemappedValue(value);
    return remapped ? remapped : value;
  }
  if (!def || def->getNumRegions() || !isPure(def))
    return failure();
  for (Value operand : def->getOperands()) {
    FailureOr<Value> host = hostValue(b, operand, kernel, map);
    if (failed(host))
      return failure();
    if (*host != operand)
      map.map(operand, *host);
  }
  Operation *clone = b.clone(*def, map);
  return clone->getResult(cast<OpResult>(value).getResultNumber());
}

/// Whether hostValue can compute `value` before `kernel`.
static bool isHostComputable(Value value, Operation *kernel) {
  Operation *def = value.getDefiningOp();
  Operation *owner =
      def ? def : cast<BlockArgument>(value).getOwner()->getParentOp();
  if (!owner || !kernel->isAncestor(owner))
    return true;
  return def && !def->getNumRegions() && isPure(def) &&
         llvm::all_of(def->getOperands(), [&](Value operand) {
           return isHostComputable(operand, kernel);
         });
}

/// A host-level block parallel becomes a gpu.launch.
struct KernelLaunchLowering : ScopedPattern<ParallelOp> {
  using ScopedPattern::ScopedPattern;

  LogicalResult
  matchAndRewrite(ParallelOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (op.getParentParallel())
      return failure();
    Location loc = op.getLoc();
    ValueRange bounds = adaptor.getBounds();
    if (bounds.size() > 3)
      return rewriter.notifyMatchFailure(op, "more than 3 grid dimensions");
    int64_t blockDim = analysis.getInstanceThreads(op);

    // Shared buffers become views of the launch's dynamic shared memory.
    SmallVector<memref::AllocOp> sharedAllocs;
    int64_t sharedBytes = 0;
    // Byte offsets: constants until a buffer with run-time extents, values
    // (computed on the host) from there on.
    SmallVector<OpFoldResult> offsets;
    op.getBody().walk([&](memref::AllocOp alloc) {
      if (getStorage(alloc.getType()) != Storage::Shared)
        return;
      sharedAllocs.push_back(alloc);
    });
    // A buffer with run-time extents (a tile of a tensor of symbolic
    // shape) is sized on the host: its extents are computed there and the
    // offsets of the buffers after it, and the launch's size, become values.
    Value dynamicBytes;
    IRMapping hostMap;
    for (memref::AllocOp alloc : sharedAllocs) {
      MemRefType type = alloc.getType();
      // verifyLowerable checked the layout and that run-time extents are
      // computable on the host.
      assert(type.getLayout().isIdentity());
      int64_t elementBytes = type.getElementTypeBitWidth() / 8;
      if (type.hasStaticShape() && !dynamicBytes) {
        // 1024-byte alignment suits every TMA swizzle mode.
        sharedBytes = llvm::alignTo(sharedBytes, 1024);
        offsets.push_back(rewriter.getIndexAttr(sharedBytes));
        sharedBytes += type.getNumElements() * elementBytes;
        continue;
      }
      if (!dynamicBytes)
        dynamicBytes = cIndex(rewriter, loc, sharedBytes);
      Value c1023 = cIndex(rewriter, loc, 1023), c1024 = cIndex(rewriter, loc, 1024);
      Value aligned = arith::MulIOp::create(
          rewriter, loc,
          arith::DivUIOp::create(rewriter, loc,
                                 arith::AddIOp::create(rewriter, loc,
                                                       dynamicBytes, c1023),
                                 c1024),
          c1024);
      offsets.push_back(aligned);
      Value bytes = cIndex(rewriter, loc, elementBytes);
      unsigned next = 0;
      for (int64_t extent : type.getShape()) {
        Value e;
        if (!ShapedType::isDynamic(extent)) {
          e = cIndex(rewriter, loc, extent);
        } else {
          FailureOr<Value> host = hostValue(
              rewriter, alloc.getDynamicSizes()[next++], op, hostMap);
          if (failed(host))
            return op.emitOpError("cannot size a shared buffer on the host");
          e = *host;
        }
        bytes = arith::MulIOp::create(rewriter, loc, bytes, e);
      }
      dynamicBytes = arith::AddIOp::create(rewriter, loc, aligned, bytes);
    }

    auto toIndex = [&](Value v) { return v; };
    Value one = cIndex(rewriter, loc, 1);
    Value gx = toIndex(bounds[0]);
    Value gy = bounds.size() > 1 ? bounds[1] : one;
    Value gz = bounds.size() > 2 ? bounds[2] : one;
    Value bx = cIndex(rewriter, loc, blockDim);
    Value smem =
        dynamicBytes
            ? Value(arith::IndexCastOp::create(rewriter, loc,
                                               rewriter.getI32Type(),
                                               dynamicBytes))
            : Value(arith::ConstantIntOp::create(
                  rewriter, loc, rewriter.getI32Type(), sharedBytes));
    Type tokenType;
    SmallVector<Value> deps;
    if (op.getAsync() || adaptor.getStream())
      tokenType = rewriter.getType<gpu::AsyncTokenType>();
    if (Value stream = adaptor.getStream())
      deps.push_back(stream);
    auto launch = gpu::LaunchOp::create(rewriter, loc, gx, gy, gz, bx, one, one,
                                        smem, tokenType, deps);

    Block &launchBody = launch.getBody().front();
    rewriter.setInsertionPointToStart(&launchBody);
    SmallVector<Value> blockIds;
    gpu::Dimension dims[] = {gpu::Dimension::x, gpu::Dimension::y,
                             gpu::Dimension::z};
    for (size_t i = 0; i < bounds.size(); ++i)
      blockIds.push_back(gpu::BlockIdOp::create(rewriter, loc, dims[i]));
    Value base;
    if (!sharedAllocs.empty())
      base = gpu::DynamicSharedMemoryOp::create(
          rewriter, loc,
          MemRefType::get({ShapedType::kDynamic}, rewriter.getI8Type(),
                          MemRefLayoutAttrInterface(),
                          sharedAllocs.front().getType().getMemorySpace()));
    auto terminator = gpu::TerminatorOp::create(rewriter, loc);
    inlineBody(rewriter, op.getBody(), terminator, blockIds);

    for (auto [alloc, offset] : llvm::zip_equal(sharedAllocs, offsets)) {
      rewriter.setInsertionPoint(alloc);
      Value byteOffset =
          getValueOrCreateConstantIndexOp(rewriter, alloc.getLoc(), offset);
      auto view = rewriter.replaceOpWithNewOp<memref::ViewOp>(
          alloc, alloc.getType(), base, byteOffset, alloc.getDynamicSizes());
      if (Attribute swizzle = alloc->getAttr(kSwizzleAttrName))
        view->setAttr(kSwizzleAttrName, swizzle);
    }

    if (!op.getAsync() && adaptor.getStream()) {
      // parallel<s>: launch on the stream, then wait for it.
      rewriter.setInsertionPointAfter(launch);
      gpu::WaitOp::create(rewriter, loc, Type(),
                          ValueRange{launch.getAsyncToken()});
    }
    rewriter.eraseOp(op);
    return success();
  }
};

/// A nested parallel is inlined; its indices come from the thread id.
struct NestedParallelLowering : ScopedPattern<ParallelOp> {
  using ScopedPattern::ScopedPattern;

  LogicalResult
  matchAndRewrite(ParallelOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!op.getParentParallel() && !op->getParentOfType<gpu::LaunchOp>())
      return failure();
    if (op.getLevel() == Level::Block)
      return failure();
    Location loc = op.getLoc();
    int64_t unit = levelThreads(op.getLevel());
    SmallVector<Value> extents(adaptor.getBounds());
    Value total = extents.front();
    for (Value e : ArrayRef(extents).drop_front())
      total = arith::MulIOp::create(rewriter, loc, total, e);
    // Index of this thread's instance among its siblings:
    // (tid / unit) % (instances per parent instance).
    Value tid = threadId(rewriter, loc);
    Value linear = tid;
    if (unit > 1)
      linear = arith::DivUIOp::create(rewriter, loc, linear,
                                      cIndex(rewriter, loc, unit));
    linear = arith::RemUIOp::create(rewriter, loc, linear, total);
    SmallVector<Value> indices = delinearize(rewriter, loc, linear, extents);

    // Each thread takes the values its own instance yields.
    SmallVector<Value> yielded(
        cast<YieldOp>(op.getBody().front().getTerminator()).getValues());
    inlineBody(rewriter, op.getBody(), op, indices);
    rewriter.replaceOp(op, yielded);
    return success();
  }
};

/// A role's register budget (croq-warp-specialize) as setmaxnreg at the
/// start of `block`, relative to the kernel's entry count
/// (croq-bound-kernel-registers makes that count known to ptxas).
static void emitRoleRegisters(ConversionPatternRewriter &rewriter,
                              Location loc, InThreadsOp role, Block *block,
                              int64_t blockDim) {
  auto budget = role->getAttrOfType<IntegerAttr>(kMaxRegistersAttrName);
  if (!budget)
    return;
  int64_t entry = entryRegisters(blockDim);
  int64_t regs = budget.getInt();
  if (regs == entry)
    return;
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPointToStart(block);
  NVVM::SetMaxRegisterOp::create(
      rewriter, loc, static_cast<int32_t>(regs),
      regs < entry ? NVVM::SetMaxRegisterAction::decrease
                   : NVVM::SetMaxRegisterAction::increase);
}

struct InThreadsLowering : ScopedPattern<InThreadsOp> {
  using ScopedPattern::ScopedPattern;

  LogicalResult
  matchAndRewrite(InThreadsOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    int64_t blockDim = analysis.getScope(op).blockDim;
    if (op->hasAttr(kRoleIndexAttrName))
      return lowerRoles(op, rewriter, blockDim);
    auto ifOp = scf::IfOp::create(rewriter, loc, adaptor.getPredicate(),
                                  /*withElseRegion=*/false);
    Block *thenBlock = ifOp.thenBlock();
    inlineBody(rewriter, op.getBody(), thenBlock->getTerminator(), {});
    emitRoleRegisters(rewriter, loc, op, thenBlock, blockDim);
    rewriter.eraseOp(op);
    return success();
  }

  /// The adjacent, disjoint roles starting at `first` become one
  /// scf.index_switch on the role the executing warpgroup plays.
  LogicalResult lowerRoles(InThreadsOp first,
                           ConversionPatternRewriter &rewriter,
                           int64_t blockDim) const {
    SmallVector<InThreadsOp> roles;
    for (Operation *op = first; op; op = op->getNextNode()) {
      auto role = dyn_cast<InThreadsOp>(op);
      auto index = role ? role->getAttrOfType<IntegerAttr>(kRoleIndexAttrName)
                        : IntegerAttr();
      if (!index || index.getInt() != static_cast<int64_t>(roles.size()))
        break;
      roles.push_back(role);
    }
    // A later role is lowered with the first (the dialect verifier checks
    // that roles count up from 0, adjacent).
    if (roles.empty())
      return rewriter.notifyMatchFailure(first, "not the first role");
    Location loc = first.getLoc();
    // Role ids by predicate; warpgroups without a role get roles.size(),
    // which no case matches.
    Value id = cIndex(rewriter, loc, roles.size());
    for (int64_t i = roles.size() - 1; i >= 0; --i) {
      Value predicate = rewriter.getRemappedValue(roles[i].getPredicate());
      id = arith::SelectOp::create(rewriter, loc, predicate,
                                   cIndex(rewriter, loc, i), id);
    }
    auto cases = llvm::to_vector(
        llvm::seq<int64_t>(0, static_cast<int64_t>(roles.size())));
    auto dispatch = scf::IndexSwitchOp::create(
        rewriter, loc, TypeRange(), id, cases, cases.size());
    {
      OpBuilder::InsertionGuard guard(rewriter);
      Block *none = rewriter.createBlock(&dispatch.getDefaultRegion());
      scf::YieldOp::create(rewriter, loc);
      (void)none;
    }
    for (auto [i, role] : llvm::enumerate(roles)) {
      OpBuilder::InsertionGuard guard(rewriter);
      Block *block = rewriter.createBlock(&dispatch.getCaseRegions()[i]);
      auto yield = scf::YieldOp::create(rewriter, role.getLoc());
      inlineBody(rewriter, role.getBody(), yield, {});
      emitRoleRegisters(rewriter, role.getLoc(), role, block, blockDim);
    }
    for (InThreadsOp role : roles)
      rewriter.eraseOp(role);
    return success();
  }
};

struct BarrierLowering : ScopedPattern<BarrierOp> {
  using ScopedPattern::ScopedPattern;

  LogicalResult
  matchAndRewrite(BarrierOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    const LaunchAnalysis::Scope &scope = analysis.getScope(op);
    int64_t size = op.getLevel() == Level::Block
                       ? scope.blockDim
                       : levelThreads(op.getLevel());
    emitGroupBarrier(rewriter, op.getLoc(), op.getLevel(), size,
                     scope.blockDim);
    rewriter.eraseOp(op);
    return success();
  }
};

/// `stream s;` creates a stream owned by the host function.
struct StreamCreateLowering : OpConversionPattern<StreamCreateOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(StreamCreateOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto wait = gpu::WaitOp::create(rewriter, op.getLoc(),
                                    rewriter.getType<gpu::AsyncTokenType>(),
                                    ValueRange());
    wait->setAttr("croq.owned_stream", rewriter.getUnitAttr());
    rewriter.replaceOp(op, wait.getAsyncToken());
    return success();
  }
};

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
  if (bits == 0 || bits > 128 || 128 % bits != 0)
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
static void buildStridedLoop(OpBuilder &b, Location loc, Value rank,
                             Value count, Value stride,
                             function_ref<void(OpBuilder &, Value)> body) {
  auto loop = scf::ForOp::create(b, loc, rank, count, stride);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  body(b, loop.getInductionVar());
}

/// Emits the element loop of a copy of `sizes` elements, `width` elements
/// per access, by `groupSize` threads of which this one is `rank`.
/// `access(b, indices, width)` moves one access.
static void
buildCopyLoop(OpBuilder &b, Location loc, ArrayRef<Value> sizes, int64_t width,
              Value rank, int64_t groupSize,
              function_ref<void(OpBuilder &, ArrayRef<Value>, int64_t)> access) {
  SmallVector<Value> extents(sizes);
  extents.back() = arith::DivUIOp::create(b, loc, extents.back(),
                                          cIndex(b, loc, width));
  Value count = extents.front();
  for (Value e : ArrayRef(extents).drop_front())
    count = arith::MulIOp::create(b, loc, count, e);
  buildStridedLoop(
      b, loc, rank, count, cIndex(b, loc, groupSize),
      [&](OpBuilder &b, Value linear) {
        SmallVector<Value> indices = delinearize(b, loc, linear, extents);
        if (width > 1)
          indices.back() = arith::MulIOp::create(b, loc, indices.back(),
                                                 cIndex(b, loc, width));
        access(b, indices, width);
      });
}

/// For a view made by croq.subspan, which may reach past the end of the
/// buffer it views (a tail tile), the extents that lie inside the buffer:
/// `min(extent, max(dim - origin, 0))`, through nested views. std::nullopt
/// when the view lies inside its buffer by construction.
static std::optional<SmallVector<Value>>
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
    if (op.getSwizzle())
      return rewriter.notifyMatchFailure(op, "swizzled dma.copy");
    LaunchAnalysis::Scope scope = analysis.getScope(op);
    if (scope.copiesPerThread)
      scope.groupSize = 1;
    Value rank = scope.groupSize == 1 ? cIndex(rewriter, loc, 0)
                                      : groupRank(rewriter, loc, scope);
    SmallVector<Value> sizes = memrefSizes(rewriter, loc, target);
    Type elementType = sourceType.getElementType();
    bool async = op.getAsync() && getStorage(targetType) == Storage::Shared &&
                 getStorage(sourceType) == Storage::Global;

    // A buffer that warpgroup MMAs read is written in its swizzled layout
    // (16-byte chunks stay whole, so the vector path still applies).
    int64_t span = swizzleSpan(target);
    FailureOr<RootedView> targetRoot = failure();
    if (span && failed(targetRoot = rootView(rewriter, loc, target)))
      return op.emitOpError("cannot trace the destination to its swizzled "
                            "buffer through unit-stride views");
    auto at = [&](OpBuilder &b, ArrayRef<Value> idx)
        -> std::pair<Value, SmallVector<Value>> {
      if (!span)
        return {target, SmallVector<Value>(idx)};
      return {targetRoot->root, swizzledIndices(b, loc, *targetRoot, idx, span)};
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
      unsigned bytes = width * sourceType.getElementTypeBitWidth() / 8;
      Value v = vector::LoadOp::create(b, loc, vecType, source, idx,
                                       /*nontemporal=*/false, llvm::MaybeAlign(bytes));
      vector::StoreOp::create(b, loc, v, dst, dstIdx, /*nontemporal=*/false,
                              llvm::MaybeAlign(bytes));
    };
    std::optional<SmallVector<Value>> sourceValid =
        validExtents(rewriter, loc, op.getSource());
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
      buildCopyLoop(thenBuilder, loc, sizes, width, rank, scope.groupSize,
                    vectorAccess);
      OpBuilder elseBuilder = ifOp.getElseBodyBuilder();
      buildCopyLoop(elseBuilder, loc, sizes, 1, rank, scope.groupSize,
                    scalarAccess);
    } else {
      buildCopyLoop(rewriter, loc, sizes, 1, rank, scope.groupSize,
                    scalarAccess);
    }

    if (async) {
      NVVM::CpAsyncCommitGroupOp::create(rewriter, loc);
    } else {
      // wgmma reads a swizzled buffer through the async proxy.
      if (span)
        NVVM::FenceProxyOp::create(
            rewriter, loc, NVVM::ProxyKind::async_shared,
            NVVM::SharedSpaceAttr::get(rewriter.getContext(),
                                       NVVM::SharedSpace::shared_cta));
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
    bool anyCopy = llvm::any_of(op.getFutures(), [](Value f) {
      return cast<FutureType>(f.getType()).getKind() == FutureKind::Dma;
    });
    if (anyCopy) {
      NVVM::CpAsyncWaitGroupOp::create(rewriter, op.getLoc(), 0);
      // cp.async writes are generic-proxy writes; wgmma reads swizzled
      // buffers through the async proxy.
      bool intoSwizzled = llvm::any_of(adaptor.getFutures(), [&](Value f) {
        return isa<MemRefType>(f.getType()) && swizzleSpan(f) != 0;
      });
      if (intoSwizzled)
        NVVM::FenceProxyOp::create(
            rewriter, op.getLoc(), NVVM::ProxyKind::async_shared,
            NVVM::SharedSpaceAttr::get(rewriter.getContext(),
                                       NVVM::SharedSpace::shared_cta));
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


//===----------------------------------------------------------------------===//
// Events: nvgpu mbarriers
//===----------------------------------------------------------------------===//
//
// A shared event array is a group of mbarriers, one per element, initialised
// by thread 0 with the event's arrival count (set by `assignArrivals` from
// the threads that trigger it). A trigger is an arrive of each triggering
// thread; a wait spins on the parity of the generation it is owed: for
// `wait e[i]` inside a loop, generation `k / N` where k counts the loop's
// iterations and N is the array size; for `wait e.at(o)`, slot `o % N` and
// generation `o / N`. An event declared `ready` starts with generation 0
// complete, so its waits use the opposite parity.


/// The innermost scf.for or scf.while around `op` inside its kernel (loops
/// around the launch do not count: every launch starts its events afresh).
static Operation *innermostKernelLoop(Operation *op) {
  for (Operation *parent = op->getParentOp(); parent;
       parent = parent->getParentOp()) {
    if (isa<scf::ForOp, scf::WhileOp>(parent))
      return parent;
    // The kernel, before or after it became a gpu.launch.
    if (isa<gpu::LaunchOp>(parent))
      return nullptr;
    if (auto parallel = dyn_cast<ParallelOp>(parent);
        parallel && !parallel.getParentParallel())
      return nullptr;
  }
  return nullptr;
}

/// True when `v` is `iv rem n` (signed or unsigned) for the constant `n`.
static bool isInductionModulo(Value v, Value iv, int64_t n) {
  Operation *def = v.getDefiningOp();
  if (!isa_and_nonnull<arith::RemSIOp, arith::RemUIOp>(def))
    return false;
  std::optional<int64_t> divisor = getConstantIntValue(def->getOperand(1));
  return def->getOperand(0) == iv && divisor && *divisor == n;
}

/// True when the D1 rule, generation (iv - lb) / N of the loop around a
/// subscripted wait, is the number of earlier waits on its slot: the wait
/// runs once per iteration (directly in the body, step 1) of the only kernel
/// loop around it, on slot `iv % N` or the event's only slot; or it runs at
/// most once (no loop). Other waits count at run time: each thread keeps a
/// phase bit per slot and flips it after each wait (the model's "waiter's
/// own counter"), e.g. in persistent kernels whose K loop restarts per tile.
static bool hasLoopGeneration(EventWaitOp wait) {
  Operation *loop = innermostKernelLoop(wait);
  if (!loop)
    return true;
  auto forOp = dyn_cast<scf::ForOp>(loop);
  if (!forOp || wait->getBlock() != forOp.getBody() ||
      innermostKernelLoop(forOp))
    return false;
  std::optional<int64_t> step = getConstantIntValue(forOp.getStep());
  if (!step || *step != 1)
    return false;
  EventType type = wait.getEvent().getType();
  int64_t slots = type.getNumElements();
  return slots == 1 ||
         (type.getRank() == 1 && wait.getIndices().size() == 1 &&
          isInductionModulo(wait.getIndices()[0], forOp.getInductionVar(),
                            slots));
}

struct EventAllocLowering : ScopedPattern<EventAllocOp> {
  using ScopedPattern::ScopedPattern;
  LogicalResult
  matchAndRewrite(EventAllocOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    EventType type = op.getEvent().getType();
    // The count is a decision of its own (croq-assign-arrivals, or the
    // program's event<N>); the pattern does not guess one.
    if (!op.getArrivals())
      return op.emitOpError("has no arrival count: run croq-assign-arrivals "
                            "before the croq-to-gpu patterns, or declare "
                            "the event with one (event<N>)");
    // One thread initialises every element; then the block may use them.
    Value group = createMBarriers(rewriter, loc, type.getNumElements(),
                                  *op.getArrivals());
    bool counts = llvm::any_of(op.getEvent().getUsers(), [](Operation *user) {
      return user->hasAttr(kCountPhasesAttrName);
    });
    // Each thread's phase bit per slot: the parity of the generation it
    // waits for next (a `ready` event starts one generation ahead).
    if (counts)
      analysis.phaseBits[op] = createPhaseBits(
          rewriter, loc, type.getNumElements(), op.getReady());
    rewriter.replaceOp(op, group);
    return success();
  }
};

struct EventTriggerLowering : ScopedPattern<EventTriggerOp> {
  using ScopedPattern::ScopedPattern;
  LogicalResult
  matchAndRewrite(EventTriggerOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    EventType type = op.getEvent().getType();
    auto tokenType = rewriter.getType<nvgpu::MBarrierTokenType>();
    SmallVector<Value> slots;
    if (Value order = adaptor.getOrder()) {
      slots.push_back(arith::RemUIOp::create(
          rewriter, loc, order, cIndex(rewriter, loc, type.getNumElements())));
    } else if (adaptor.getIndices().size() == type.getRank()) {
      slots.push_back(linearSlot(rewriter, loc, type, adaptor.getIndices()));
    } else {
      // Fewer subscripts: every remaining element.
      int64_t rest = 1;
      for (int64_t extent : type.getShape().drop_front(adaptor.getIndices().size()))
        rest *= extent;
      Value base = linearSlot(rewriter, loc, type, adaptor.getIndices());
      for (int64_t i = 0; i < rest; ++i)
        slots.push_back(arith::AddIOp::create(rewriter, loc, base,
                                              cIndex(rewriter, loc, i)));
    }
    // A role's trigger publishes what its MMAs computed or releases the
    // tiles they read: its wgmma groups complete first.
    if (op->hasAttr(kWaitWgmmaAttrName))
      waitWarpgroupMmas(rewriter, loc);
    if (int64_t bytes = analysis.tma.expectBytes.lookup(op)) {
      // The thread that issued the bound TMA loads expects their bytes;
      // the rest of the role (if any) arrives plainly.
      assert(slots.size() == 1 && "a TMA-bound trigger names one element");
      Value issues = issuer(rewriter, loc, op, analysis);
      auto expect = [&](OpBuilder &b) {
        nvgpu::MBarrierArriveExpectTxOp::create(b, loc, adaptor.getEvent(),
                                                cIndex(b, loc, bytes),
                                                slots.front(), Value());
      };
      if (!issues) {
        expect(rewriter);
      } else {
        auto ifOp = scf::IfOp::create(rewriter, loc, issues,
                                      /*withElseRegion=*/true);
        OpBuilder thenBuilder = ifOp.getThenBodyBuilder();
        expect(thenBuilder);
        OpBuilder elseBuilder = ifOp.getElseBodyBuilder();
        nvgpu::MBarrierArriveOp::create(elseBuilder, loc, tokenType,
                                        adaptor.getEvent(), slots.front());
      }
      rewriter.eraseOp(op);
      return success();
    }
    for (Value slot : slots)
      nvgpu::MBarrierArriveOp::create(rewriter, loc, tokenType,
                                      adaptor.getEvent(), slot);
    rewriter.eraseOp(op);
    return success();
  }
};

struct EventWaitLowering : ScopedPattern<EventWaitOp> {
  using ScopedPattern::ScopedPattern;
  LogicalResult
  matchAndRewrite(EventWaitOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    EventType type = op.getEvent().getType();
    Value n = cIndex(rewriter, loc, type.getNumElements());
    Value slot, generation;
    if (Value order = adaptor.getOrder()) {
      slot = arith::RemUIOp::create(rewriter, loc, order, n);
      generation = arith::DivUIOp::create(rewriter, loc, order, n);
    } else if (op->hasAttr(kCountPhasesAttrName)) {
      slot = linearSlot(rewriter, loc, type, adaptor.getIndices());
      Value bits = analysis.phaseBits.lookup(
          op.getEvent().getDefiningOp<EventAllocOp>());
      if (!bits)
        return op.emitOpError("needs per-thread phase bits, which only events "
                              "allocated in the kernel have");
      waitOnPhaseBit(rewriter, loc, adaptor.getEvent(), slot, bits, slot);
      rewriter.eraseOp(op);
      return success();
    } else {
      slot = linearSlot(rewriter, loc, type, adaptor.getIndices());
      // The D1 rule: the k-th iteration of the innermost loop waits for
      // generation k / N.
      if (auto loop =
              dyn_cast_or_null<scf::ForOp>(innermostKernelLoop(op))) {
        Value k = arith::DivUIOp::create(
            rewriter, loc,
            arith::SubIOp::create(rewriter, loc, loop.getInductionVar(),
                                  loop.getLowerBound()),
            loop.getStep());
        generation = arith::DivUIOp::create(rewriter, loc, k, n);
      } else {
        generation = cIndex(rewriter, loc, 0);
      }
    }
    auto alloc = op.getEvent().getDefiningOp<EventAllocOp>();
    if (alloc && alloc.getReady())
      generation = arith::AddIOp::create(rewriter, loc, generation,
                                         cIndex(rewriter, loc, 1));
    Value parity = arith::IndexCastOp::create(
        rewriter, loc, rewriter.getI1Type(),
        arith::RemUIOp::create(rewriter, loc, generation,
                               cIndex(rewriter, loc, 2)));
    nvgpu::MBarrierTryWaitParityOp::create(rewriter, loc, adaptor.getEvent(),
                                           parity,
                                           cIndex(rewriter, loc, 10000000), slot);
    rewriter.eraseOp(op);
    return success();
  }
};

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

static constexpr int64_t kTileM = 16, kTileN = 8, kTileK = 16;

/// Register type of a fragment, or null when it has no mma.sync form.
static VectorType fragVectorType(FragType type) {
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
static LogicalResult checkWarpFragment(Operation *op,
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
struct OperandGeometry {
  int64_t outer; // M for A, N for B
  int64_t k;
  bool kMajor; // the fragment is [K, outer]
};

static OperandGeometry operandGeometry(FragType type, MmaLayout layout) {
  bool aRow = layout == MmaLayout::RowRow || layout == MmaLayout::RowCol;
  bool bRow = layout == MmaLayout::RowRow || layout == MmaLayout::ColRow;
  bool kMajor = type.getRole() == FragRole::A ? !aRow : !bRow;
  ArrayRef<int64_t> shape = type.getShape();
  return kMajor ? OperandGeometry{shape[1], shape[0], true}
                : OperandGeometry{shape[0], shape[1], false};
}

/// The MMA layout of the croq.mma ops that consume an operand fragment.
static FailureOr<MmaLayout> consumerLayout(MmaLoadOp load) {
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

struct MmaStoreLowering : ScopedPattern<MmaStoreOp> {
  using ScopedPattern::ScopedPattern;
  LogicalResult
  matchAndRewrite(MmaStoreOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    FragType type = op.getValue().getType();
    if (type.getScope() == Level::Warpgroup) {
      storeWarpgroupAcc(rewriter, op.getLoc(), type, adaptor.getValue(),
                        adaptor.getTarget(),
                        validExtents(rewriter, op.getLoc(), op.getTarget()),
                        op.getTranspose());
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
    std::optional<SmallVector<Value>> valid =
        validExtents(rewriter, loc, op.getTarget());
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

} // namespace

//===----------------------------------------------------------------------===//
// Type conversion and pass
//===----------------------------------------------------------------------===//

void mlir::croq::populateCroqToGPUTypeConversions(TypeConverter &converter) {
  converter.addConversion([](Type type) { return type; });
  converter.addConversion([&converter](FutureType type) -> Type {
    return converter.convertType(type.getDataType());
  });
  converter.addConversion([](FragType type) -> Type {
    if (type.getScope() == Level::Warp)
      return fragVectorType(type);
    // A warpgroup accumulator lives in wgmma registers; an operand is the
    // shared-memory descriptor of its tile.
    if (type.getRole() == FragRole::Acc)
      return wgmmaAccType(type);
    return IntegerType::get(type.getContext(), 64);
  });
  converter.addConversion([](EventType type) -> Type {
    return mbarrierGroupType(type.getContext(), type.getNumElements());
  });
  converter.addConversion([](StreamType type) -> Type {
    return gpu::AsyncTokenType::get(type.getContext());
  });
}

void mlir::croq::populateCroqToGPUConversionPatterns(
    TypeConverter &converter, RewritePatternSet &patterns,
    const LaunchAnalysis &analysis) {
  MLIRContext *context = patterns.getContext();
  patterns.add<KernelLaunchLowering, NestedParallelLowering, InThreadsLowering,
               BarrierLowering, DmaCopyLowering, WaitLowering, MmaFillLowering,
               MmaLoadLowering, MmaLowering, MmaStoreLowering,
               MmaCommitLowering, EventAllocLowering, EventTriggerLowering,
               EventWaitLowering>(converter, context, analysis);
  populateTmaPatterns(converter, patterns, analysis);
  patterns.add<StreamCreateLowering, ChunkAtLowering, SubspanLowering,
               ForwardFirstOperand<FutureDataOp>, ForwardFirstOperand<DmaAnyOp>,
               SwapLowering, RotateLowering, SelectLowering,
               LocalAllocLowering>(converter, context);
}

namespace {


/// What the target chip has, from its name (sm_90a: sm 90, arch-specific).
struct ChipFeatures {
  unsigned sm = 0;
  bool archSpecific = false;

  explicit ChipFeatures(StringRef chip) {
    archSpecific = chip.ends_with("a");
    if (!chip.consume_front("sm_") ||
        chip.take_while(llvm::isDigit).getAsInteger(10, sm))
      sm = 0;
  }
  /// The Hopper op `op` needs and this chip lacks, or empty.
  StringRef missing(Operation *op) const {
    bool hopper = sm >= 90;
    bool hopperA = sm == 90 && archSpecific;
    bool ampere = sm >= 80;
    if (isa<TmaCopyOp>(op) && !hopper)
      return "tma.copy needs sm_90 or newer (TMA)";
    if (auto copy = dyn_cast<DmaCopyOp>(op);
        copy && copy.getAsync() && !ampere &&
        getStorage(copy.getTarget().getType()) == Storage::Shared)
      return "an asynchronous copy into shared memory (cp.async) needs "
             "sm_80 or newer";
    if (auto mma = dyn_cast<MmaOp>(op);
        mma && mma.getAcc().getType().getScope() == Level::Warp && !ampere)
      return "a warp MMA (mma.sync m16n8k16) needs sm_80 or newer";
    if (isa<EventAllocOp>(op) && !hopper)
      return "events need sm_90 or newer (mbarrier waits)";
    if (auto mma = dyn_cast<MmaOp>(op);
        mma && mma.getAcc().getType().getScope() == Level::Warpgroup &&
        !hopperA)
      return "a warpgroup MMA (wgmma, in a group-4 parallel) needs sm_90a";
    if (op->hasAttr(kMaxRegistersAttrName) && !(hopper && archSpecific))
      return "a register budget (croq.max_registers, setmaxnreg) needs an "
             "arch-specific chip of sm_90 or newer, such as sm_90a";
    return {};
  }
};

/// Ops that cannot be lowered (for `chip`, or at all yet); each is reported
/// where it stands.
static LogicalResult reportUnsupported(ModuleOp module, StringRef chip) {
  ChipFeatures features(chip);
  WalkResult result = module.walk([&](Operation *op) {
    if (StringRef why = features.missing(op); !why.empty()) {
      op->emitOpError("cannot be lowered for ") << chip << ": " << why;
      return WalkResult::interrupt();
    }
    // Ops that device threads execute, outside any kernel.
    if (isa<DmaCopyOp, TmaCopyOp, MmaFillOp, MmaLoadOp, MmaOp, MmaStoreOp,
            MmaCommitOp, BarrierOp, InThreadsOp, EventTriggerOp, EventWaitOp,
            EventAllocOp>(op) &&
        !op->getParentOfType<ParallelOp>()) {
      op->emitOpError("runs on device threads, but is not inside a kernel: "
                      "put it in the body of a block-level croq.parallel");
      return WalkResult::interrupt();
    }
    StringRef why;
    if (auto alloc = dyn_cast<EventAllocOp>(op);
        alloc && alloc.getEvent().getType().getStorage() != MemoryKind::Shared)
      why = "only shared events lower (to mbarriers); local and global "
            "events are not implemented yet";
    else if (auto copy = dyn_cast<TmaCopyOp>(op);
             copy && copy.getAsync() && !copy.isLoad())
      why = "asynchronous TMA stores are not supported; use a synchronous "
            "tma.copy for the store";
    else if (auto copy = dyn_cast<DmaCopyOp>(op); copy && copy.getSwizzle())
      why = "swizzled cooperative copies are not implemented yet; drop "
            "swizzle(...)";
    else
      return WalkResult::advance();
    op->emitOpError("cannot be lowered to GPU code: ") << why;
    return WalkResult::interrupt();
  });
  return failure(result.wasInterrupted());
}

/// Checks that a warpgroup executes `op` and that `type` fits wgmma.
static LogicalResult checkWarpgroupFragment(Operation *op,
                                            const LaunchAnalysis &analysis,
                                            FragType type) {
  const LaunchAnalysis::Scope &scope = analysis.getScope(op);
  if (mmaScope(scope) != Level::Warpgroup)
    return op->emitOpError("uses warpgroup fragment ")
           << type << ", which must be used in the body of a group-4 parallel";
  if (scope.inThreads && !selectsWholeGroups(op, Level::Warpgroup))
    return op->emitOpError("is a warpgroup MMA, but the croq.inthreads "
                           "around it selects only some of the warpgroup's "
                           "threads; select whole warpgroups");
  Type element = type.getElementType();
  ArrayRef<int64_t> shape = type.getShape();
  if (type.getRole() == FragRole::Acc) {
    if (!element.isF16() && !element.isF32())
      return op->emitOpError("wgmma accumulates in f16 or f32, got ")
             << element;
    if (shape[0] != kWgmmaM || shape[1] % 8 || shape[1] > 256)
      return op->emitOpError("a warpgroup accumulator is 64 x N with N a "
                             "multiple of 8 up to 256 (one wgmma), got ")
             << type << "; split the tile across warpgroups";
    return success();
  }
  if (!element.isF16() && !element.isBF16())
    return op->emitOpError("wgmma operands here must be f16 or bf16, got ")
           << element;
  if (shape[1] % kWgmmaK)
    return op->emitOpError("wgmma consumes K in steps of 16, got ") << type;
  if (type.getRole() == FragRole::A && shape[0] != kWgmmaM)
    return op->emitOpError("a warpgroup A operand is 64 x K, got ") << type;
  return success();
}

/// Checks, before rewriting anything, the preconditions that depend on
/// where ops run, so that each failure is reported once at its op.
static LogicalResult verifyLowerable(ModuleOp module,
                                     const LaunchAnalysis &analysis) {
  auto checkFragments = [&](Operation *op) -> LogicalResult {
    SmallVector<Type> types(op->getOperandTypes());
    llvm::append_range(types, op->getResultTypes());
    for (Type type : types)
      if (auto frag = dyn_cast<FragType>(type))
        if (failed(frag.getScope() == Level::Warpgroup
                       ? checkWarpgroupFragment(op, analysis, frag)
                       : checkWarpFragment(op, analysis, frag)))
          return failure();
    return success();
  };
  WalkResult result = module.walk([&](Operation *op) {
    if (!analysis.hasScope(op))
      return WalkResult::advance();
    const LaunchAnalysis::Scope &scope = analysis.getScope(op);
    if (auto alloc = dyn_cast<memref::AllocOp>(op);
        alloc && getStorage(alloc.getType()) == Storage::Shared) {
      // Run-time extents are sized on the host at the launch, so they must
      // be computable there (from the kernel's arguments, not its indices);
      // swizzled buffers (TMA, wgmma) need static tiles.
      ParallelOp kernel = kernelOf(alloc);
      bool hostSized = llvm::all_of(alloc.getDynamicSizes(), [&](Value v) {
        return kernel && isHostComputable(v, kernel);
      });
      if (!alloc.getType().getLayout().isIdentity() || !hostSized ||
          (!alloc.getType().hasStaticShape() &&
           alloc->hasAttr(kSwizzleAttrName))) {
        alloc.emitOpError("a shared buffer needs extents known at the launch "
                          "(constants, or computed from the kernel's "
                          "arguments) and, when TMA or wgmma use it, "
                          "static ones; got ")
            << alloc.getType();
        return WalkResult::interrupt();
      }
    }
    if (auto copy = dyn_cast<DmaCopyOp>(op)) {
      bool cooperative = !scope.copiesPerThread && scope.groupSize > 1;
      if (cooperative && scope.inThreads &&
          !selectsWholeGroups(copy, scope.groupLevel)) {
        copy.emitOpError("is a cooperative copy by a ")
            << stringifyLevel(scope.groupLevel)
            << ", but the croq.inthreads around it selects only some of its "
               "threads; select whole instances (test indices of the '"
            << stringifyLevel(scope.groupLevel)
            << "' level or above) or copy outside the inthreads region";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    }
    if (isa<MmaLoadOp, MmaOp, MmaStoreOp>(op) && failed(checkFragments(op)))
      return WalkResult::interrupt();
    if (auto load = dyn_cast<MmaLoadOp>(op); load && failed(consumerLayout(load)))
      return WalkResult::interrupt();
    if (auto mma = dyn_cast<MmaOp>(op);
        mma && isWarpgroupFrag(mma.getAcc().getType()) &&
        mma.getLayout() != MmaLayout::RowRow) {
      mma.emitOpError("is a warpgroup MMA, which reads K-major tiles: A as "
                      "[M, K] and B as [N, K]; use mma.row.row and store B "
                      "as [N, K]");
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

/// Code between parallel levels runs once per instance of the outer level:
/// a store there is made by one elected thread of the group (pure code may
/// run redundantly, collective ops cooperate). Wraps each such store in
/// `scf.if (rank == 0)`.
static void electStores(ModuleOp module, const LaunchAnalysis &analysis,
                        bool useElectSync) {
  DataFlowSolver solver;
  if (useElectSync && failed(runDivergenceAnalysis(module, solver)))
    useElectSync = false;
  SmallVector<memref::StoreOp> stores;
  module.walk([&](memref::StoreOp store) {
    if (!analysis.hasScope(store))
      return;
    const LaunchAnalysis::Scope &scope = analysis.getScope(store);
    if (scope.perThread || scope.groupSize <= 1)
      return;
    // Buffers private to a thread need no election.
    if (getStorage(store.getMemRefType()) == Storage::Local)
      return;
    stores.push_back(store);
  });
  // TMA issues and their expect_tx triggers elect their thread the same way.
  if (useElectSync)
    module.walk([&](Operation *op) {
      if (isa<TmaCopyOp, EventTriggerOp>(op) && analysis.hasScope(op) &&
          getExecutionScope(solver, op) >= UniformScope::Warp)
        op->setAttr(kElectSyncAttrName, UnitAttr::get(op->getContext()));
    });
  for (memref::StoreOp store : stores) {
    const LaunchAnalysis::Scope &scope = analysis.getScope(store);
    OpBuilder b(store);
    Location loc = store.getLoc();
    Value rank = groupRank(b, loc, scope);
    // Where the warp is converged, elect.sync picks a lane of the group's
    // first warp (a warp-uniform test) instead of comparing thread ids.
    Value elected = electOneThread(
        b, loc, rank,
        useElectSync && getExecutionScope(solver, store) >= UniformScope::Warp);
    auto ifOp = scf::IfOp::create(b, loc, elected, /*withElseRegion=*/false);
    store->moveBefore(ifOp.thenBlock()->getTerminator());
  }
}

/// Gives every event without `event<N>` its arrival count: the threads of
/// the role (croq.inthreads region) that triggers it, or the whole block.
static LogicalResult assignArrivals(ModuleOp module,
                                    const LaunchAnalysis &analysis) {
  WalkResult result = module.walk([&](EventAllocOp alloc) {
    if (alloc.getArrivals() || !analysis.hasScope(alloc))
      return WalkResult::advance();
    std::optional<int64_t> count;
    for (Operation *user : alloc.getEvent().getUsers()) {
      if (!isa<EventTriggerOp>(user))
        continue;
      // The threads that run the trigger: those of its innermost region
      // (whose count includes the regions around it).
      InThreadsOp role = user->getParentOfType<InThreadsOp>();
      std::optional<int64_t> threads =
          role ? countRoleThreads(role)
               : std::optional(analysis.getScope(user).blockDim);
      if (!threads) {
        alloc.emitOpError("cannot count the threads that trigger this "
                          "event; declare it with an explicit arrival count "
                          "(event<N>)");
        return WalkResult::interrupt();
      }
      if (*threads == 0) {
        InFlightDiagnostic diag = alloc.emitOpError(
            "is triggered in a region that no thread runs (its predicate is "
            "false for every index), so its arrival count would be 0");
        diag.attachNote(user->getLoc()) << "the trigger";
        return WalkResult::interrupt();
      }
      count = count ? count : threads;
    }
    alloc.setArrivals(count.value_or(1));
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

struct CroqAssignArrivalsPass
    : mlir::croq::impl::CroqAssignArrivalsPassBase<CroqAssignArrivalsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    LaunchAnalysisPtr analysis = analyzeLaunches(module);
    if (!analysis || failed(assignArrivals(module, *analysis)))
      signalPassFailure();
  }
};

struct ConvertCroqToGPUPass
    : mlir::croq::impl::ConvertCroqToGPUPassBase<ConvertCroqToGPUPass> {
  using ConvertCroqToGPUPassBase::ConvertCroqToGPUPassBase;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(reportUnsupported(module, chip)) ||
        failed(planSwizzledBuffers(module)))
      return signalPassFailure();
    deferWarpgroupMmaWaits(module);
    module.walk([](EventWaitOp wait) {
      if (!wait.getOrder() && !hasLoopGeneration(wait))
        wait->setAttr(kCountPhasesAttrName, UnitAttr::get(wait.getContext()));
    });
    module.walk([](EventTriggerOp trigger) {
      if (!trigger->hasAttr(kDeferredAttrName) && followsWgmma(trigger))
        trigger->setAttr(kWaitWgmmaAttrName, UnitAttr::get(trigger.getContext()));
    });
    LaunchAnalysisPtr analysis = analyzeLaunches(module);
    if (!analysis || failed(verifyLowerable(module, *analysis)) ||
        failed(assignArrivals(module, *analysis)) ||
        failed(planTmaCopies(module, analysis->tma)))
      return signalPassFailure();
    markPerThreadIssues(module, *analysis);
    electStores(module, *analysis, useElectSync);

    MLIRContext *context = &getContext();
    TypeConverter converter;
    populateCroqToGPUTypeConversions(converter);

    ConversionTarget target(*context);
    target.addIllegalDialect<CroqDialect>();
    target.addLegalDialect<arith::ArithDialect, gpu::GPUDialect,
                           LLVM::LLVMDialect, memref::MemRefDialect,
                           NVVM::NVVMDialect,
                           nvgpu::NVGPUDialect, scf::SCFDialect,
                           vector::VectorDialect>();
    target.addDynamicallyLegalOp<memref::AllocOp>([](memref::AllocOp op) {
      return getStorage(op.getType()) != Storage::Local;
    });
    target.addDynamicallyLegalOp<func::FuncOp>([&](func::FuncOp op) {
      return converter.isSignatureLegal(op.getFunctionType()) &&
             converter.isLegal(&op.getBody());
    });
    target.addDynamicallyLegalOp<func::ReturnOp, func::CallOp,
                                 arith::SelectOp>(
        [&](Operation *op) { return converter.isLegal(op); });

    RewritePatternSet patterns(context);
    populateCroqToGPUConversionPatterns(converter, patterns, *analysis);
    populateFunctionOpInterfaceTypeConversionPattern<func::FuncOp>(patterns,
                                                                   converter);
    populateReturnOpTypeConversionPattern(patterns, converter);
    populateCallOpTypeConversionPattern(patterns, converter);
    scf::populateSCFStructuralTypeConversionsAndLegality(converter, patterns,
                                                         target);
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      return signalPassFailure();
    module.walk([](memref::ViewOp view) { view->removeAttr(kSwizzleAttrName); });
  }
};

} // namespace

namespace {

struct CroqBoundKernelRegistersPass
    : mlir::croq::impl::CroqBoundKernelRegistersPassBase<
          CroqBoundKernelRegistersPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<gpu::GPUFuncOp>()) {
      if (!func.isKernel() || !func.getKnownBlockSizeAttr())
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
