//===- Common.h - shared pieces of the croq-to-gpu lowering -----*- C++ -*-===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//
//
// Private to lib/Conversion/CroqToGPU: the builders and helpers that the
// preparation passes and the pattern files of the croq-to-gpu lowering
// share.
//
//===----------------------------------------------------------------------===//

#ifndef CROQ_LIB_CONVERSION_CROQTOGPU_COMMON_H
#define CROQ_LIB_CONVERSION_CROQTOGPU_COMMON_H

#include "Croq/Analysis/LaunchAnalysis.h"
#include "Croq/Conversion/CroqToGPU/CroqToGPU.h"
#include "Croq/Dialect/Croq/IR/CroqOps.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Transforms/DialectConversion.h"

#include <optional>

namespace mlir::croq {
namespace detail {

/// Marks a shared buffer read by warpgroup MMAs with its swizzle span.
inline constexpr llvm::StringLiteral kSwizzleAttrName = "croq.swizzle";

/// One wgmma instruction: M rows per warpgroup, K per step (f16 / bf16).
inline constexpr int64_t kWgmmaM = 64;
/// One wgmma consumes 32 bytes of K: 16 f16 / bf16 or 32 f8 elements.
inline constexpr int64_t kWgmmaKBytes = 32;
inline int64_t wgmmaK(Type operandElement) {
  return kWgmmaKBytes * 8 / operandElement.getIntOrFloatBitWidth();
}
/// One sparse wgmma (wgmma.sp) consumes twice that of B's K, A holding half.
inline int64_t sparseWgmmaK(Type operandElement) {
  return 2 * wgmmaK(operandElement);
}

/// True for an event that lowers to mbarriers (a shared one); a local
/// event is a thread's own counters.
inline bool isMBarrierEvent(Value event) {
  return cast<EventType>(event.getType()).getStorage() == MemoryKind::Shared;
}

/// Base for patterns that need the launch analysis.
template <typename OpTy>
struct ScopedPattern : OpConversionPattern<OpTy> {
  ScopedPattern(const TypeConverter &converter, MLIRContext *context,
                const LaunchAnalysis &analysis)
      : OpConversionPattern<OpTy>(converter, context), analysis(analysis) {}
  const LaunchAnalysis &analysis;
};

//===----------------------------------------------------------------------===//
// Builders (CroqToGPU.cpp)
//===----------------------------------------------------------------------===//

Value cIndex(OpBuilder &b, Location loc, int64_t v);
/// The kernel (outermost croq.parallel) around `op`, or null.
ParallelOp kernelOf(Operation *op);
Value threadId(OpBuilder &b, Location loc);
/// The rank, in its instance of the cooperating group of `groupSize`
/// threads (the block when it is the block's size or unknown), of the
/// lowest thread the croq.inthreads around `op` selects in each instance,
/// when it selects several threads of a thread-level parallel, every one of
/// them reaches `op`, and that rank is the same in every instance that
/// selects any (Issuer::Lowest: one issue per instance); nullopt otherwise.
std::optional<int64_t> lowestSelectedThread(Operation *op, int64_t groupSize);
/// Rank of the executing thread in its cooperating group.
Value groupRank(OpBuilder &b, Location loc, const LaunchAnalysis::Scope &scope);
/// What emitGroupBarrier emits for a group: nothing (one thread), the
/// block's barrier, the warp's, or the warpgroup's named barrier.
enum class GroupBarrier { None, Block, Warp, Warpgroup };
GroupBarrier groupBarrierKind(Level level, int64_t size, int64_t blockDim);
/// The threads a croq.barrier of `level` synchronises in `scope`: the
/// block's, or those of one instance of the level.
int64_t barrierThreads(Level level, const LaunchAnalysis::Scope &scope);
/// A barrier over the `size` threads of one instance of `level`; a
/// warpgroup's takes its id from warpgroupBarrierIds(.., programIds).
void emitGroupBarrier(OpBuilder &b, Location loc, Level level, int64_t size,
                      int64_t blockDim, uint32_t programIds);
/// A barrier over the threads of the scope's group.
void emitScopeBarrier(OpBuilder &b, Location loc,
                      const LaunchAnalysis::Scope &scope);
/// Row-major delinearisation of `linear` over `extents`.
SmallVector<Value> delinearize(OpBuilder &b, Location loc, Value linear,
                               ArrayRef<Value> extents);
/// True when every index lies below its valid extent.
Value inBounds(OpBuilder &b, Location loc, ArrayRef<Value> indices,
               ArrayRef<Value> valid);
/// `source[indices]` where `inside` holds (everywhere when it is null),
/// `zero` elsewhere.
Value loadOrZero(OpBuilder &b, Location loc, Value source, ValueRange indices,
                 Value inside, Value zero);
/// True when the valid extents cover the whole tile.
Value coversTile(OpBuilder &b, Location loc, ArrayRef<Value> valid,
                 ArrayRef<Value> sizes);
/// True at run time when every row of `memref` starts `width`-aligned.
Value isAligned(OpBuilder &b, Location loc, Value memref, int64_t width);
/// The linear element of an event selected by subscripts (missing ones 0).
Value linearSlot(OpBuilder &b, Location loc, EventType type,
                 ValueRange indices);
/// True when every croq.inthreads around `op` keeps or drops whole
/// instances of `level`.
bool selectsWholeGroups(Operation *op, Level level);
/// The scope whose threads jointly hold MMA fragments where `scope` runs: a
/// warp (also a block of one warp) or a warpgroup (also a block of one
/// warpgroup); none elsewhere.
std::optional<Level> mmaScope(const LaunchAnalysis::Scope &scope);
/// The highest named barrier id; 0 is the block's (bar.sync 0).
constexpr int64_t kWarpgroupBarrierTop = 15;
/// The named barrier of each of `warpgroups` warpgroups: the highest ids
/// that the program's croq.named_barrier ops (bit i of `programIds`: id i)
/// leave free, warpgroup 0 the highest. Fewer than `warpgroups` when too
/// few are free.
SmallVector<int64_t> warpgroupBarrierIds(int64_t warpgroups,
                                         uint32_t programIds);

/// `value` as element type `to`: floats truncated or extended, integers
/// (signed) truncated or extended, and converted between the two.
/// `fence.proxy.async.shared::cta`: the thread's generic-proxy writes of
/// shared memory are seen by the async proxy (wgmma, TMA) after it.
void fenceAsyncProxy(OpBuilder &b, Location loc);
Value convertElement(OpBuilder &b, Location loc, Value value, Type to);
/// True on the one thread of a group that acts for it: rank 0, or, with
/// `electSync` (the code runs warp-converged), the lane elect.sync picks in
/// the group's first warp.
Value electOneThread(OpBuilder &b, Location loc, Value rank, bool electSync);
Type mbarrierGroupType(MLIRContext *context, int64_t count);
/// A group of `count` mbarriers that thread 0 initialises to `arrivals`
/// each, followed by a block barrier so that every thread may use them; in
/// a kernel of clusters (`clusterSize` > 1) a cluster barrier, so that the
/// other blocks may arrive on them and multicast into them.
Value createMBarriers(OpBuilder &b, Location loc, int64_t count,
                      int64_t arrivals, int64_t clusterSize = 1);
/// Every thread of every block of the cluster arrives, and waits for the
/// others: memory written before it is visible to the cluster after it.
void emitClusterBarrier(OpBuilder &b, Location loc);
/// The executing block's rank in its cluster, as an index.
Value clusterRank(OpBuilder &b, Location loc);
/// Per-thread phase bits, `count` of them, all starting at `start`.
/// For a view that may reach past the end of its buffer (a tail tile), the
/// extents that lie inside it; std::nullopt when it lies inside by
/// construction (Copies.cpp).
std::optional<SmallVector<Value>>
validExtents(ConversionPatternRewriter &rewriter, Location loc, Value view);
/// The sizes of a memref, constant or dynamic.
SmallVector<Value> memrefSizes(OpBuilder &b, Location loc, Value memref);
/// A waiter's phase bits for `count` slots, all `start`: its own count of
/// the generations each slot has completed (parity), as a memref that
/// loadPhaseBit and flipPhaseBit read and update.
Value createPhaseBits(OpBuilder &b, Location loc, int64_t count, bool start);
/// The same, with the memref created at `at` and its bits set at `init`.
Value createPhaseBits(OpBuilder &at, OpBuilder &init, Location loc,
                      int64_t count, bool start);
/// The phase bit of slot `slot` (index) of `bits`, as an i1.
Value loadPhaseBit(OpBuilder &b, Location loc, Value bits, Value slot);
/// Flips the phase bit of slot `slot` of `bits`.
void flipPhaseBit(OpBuilder &b, Location loc, Value bits, Value slot);
/// Replaces a copy by its destination (the data of its future), or erases
/// it when it has no future.
void replaceCopy(ConversionPatternRewriter &rewriter, Operation *copy,
                 Value destination);
/// Waits on mbarrier `slot` of `group` for the parity in `bits[bit]`, then
/// flips the bit.
void waitOnPhaseBit(OpBuilder &b, Location loc, Value group, Value slot,
                    Value bits, Value bit);

/// True when `trigger` may follow warpgroup MMAs of its role that no commit
/// has completed; croq-pipeline-mma puts a commit before each such trigger
/// (PipelineMma.cpp).
bool needsMmaCommit(EventTriggerOp trigger);
/// True when `access` (croq.mma.element / set_element) may run while
/// warpgroup MMAs that write its accumulator are in flight, and needs a
/// full croq.mma.commit before it.
bool needsMmaCompletion(Operation *access);
/// True when `op` runs between parallel levels and acts on memory, so that
/// one thread of its group must run it, and no election guards it yet
/// (ElectIssuers.cpp): a `memref.store` to memory other threads see, or a
/// `croq.call` / `llvm.inline_asm` without results.
bool needsElection(Operation *op, const LaunchAnalysis &analysis);
/// True when `op` sits in the election croq-elect-issuers builds.
bool isElected(Operation *op);
/// Whether `value`, used in `kernel`, can be computed before it (Levels.cpp).
bool isHostComputable(Value value, Operation *kernel);
/// Whether an MMA (mma.sync or wgmma) multiplies `operand` elements into
/// `acc` ones: f16 and f8 into f16 or f32, bf16 and f32 (as tf32) into f32,
/// s8 into s32 (WarpMma.cpp).
bool accumulatesInto(Type operand, Type acc);
/// Register type of a warp fragment, or null (WarpMma.cpp).
VectorType fragVectorType(FragType type);
/// Checks that a warp executes `op` and that `type` fits mma.sync; of a
/// croq.mma, also that its shape is one of an instruction's.
LogicalResult checkWarpFragment(Operation *op, const LaunchAnalysis &analysis,
                                FragType type);
/// The MMA layout of the croq.mma ops that consume an operand fragment.
FailureOr<MmaLayout> consumerLayout(MmaLoadOp load);

/// How an MMA of `layout` reads an operand fragment.
struct OperandGeometry {
  int64_t outer; // M for A, N for B
  int64_t k;
  bool kMajor; // the fragment is [K, outer]: its rows run along K (what
               // wgmma calls an MN-major operand)
};
OperandGeometry operandGeometry(FragType type, MmaLayout layout);

/// The (row, column) of a warpgroup accumulator that register `r` of the
/// executing thread holds (see croq.mma.coords).
std::pair<Value, Value> warpgroupAccCoords(OpBuilder &b, Location loc,
                                           int64_t r);
/// Register `r` of a converted warpgroup accumulator `acc` of `type`, and
/// `acc` with it replaced by `value`.
Value warpgroupAccElement(OpBuilder &b, Location loc, FragType type,
                          Value acc, int64_t r);
Value setWarpgroupAccElement(OpBuilder &b, Location loc, FragType type,
                             Value acc, int64_t r, Value value);

//===----------------------------------------------------------------------===//
// Warpgroup MMA (Wgmma.cpp)
//===----------------------------------------------------------------------===//

/// A converted view traced through memref.subview to the buffer it views:
/// the buffer, the view's origin in it, and the buffer dimension of each
/// view dimension.
struct RootedView {
  Value root;
  SmallVector<Value> origin;
  SmallVector<unsigned> dims;
};

/// A `span_as` of a shared view that keeps the rows of the swizzled wgmma
/// layout: a memref.reinterpret_cast, at its source's own offset, to a
/// contiguous matrix with the source's innermost extent, of a source whose
/// rows are one swizzle panel (32, 64 or 128 bytes) in groups of a multiple
/// of 8 (`shared f16 [1, 8, 8, 64]` as [64, 64]). Row R of the matrix is
/// then the source's flattened row R, and the swizzle pattern, which
/// repeats every 8 rows, agrees. Null for any other value.
memref::ReinterpretCastOp rowPreservingReshape(Value view);
/// Traces `view` through memref.subview ops, and row-preserving reshapes
/// (its origin then counts the source's flattened rows in the row
/// dimension, which swizzledOffset allows). Inside a dialect conversion,
/// pass `rewriter`: a view op that no pattern converts (a rank-reducing
/// subview, `.sqz()`) still names the croq op it was built on until the
/// conversion ends, and the walk continues from that op's converted value.
FailureOr<RootedView> rootView(OpBuilder &b, Location loc, Value view,
                               ConversionPatternRewriter *rewriter = nullptr);
/// What a croq-level view looks into: the value under its croq.subspan,
/// croq.chunkat and memref.subview ops and row-preserving reshapes.
Value viewSource(Value view);
/// The shared buffer a croq-level view looks into, or null.
memref::AllocOp viewedBuffer(Value view);
/// The buffers the data of `future` may be at run time (buffersOf: the
/// copies and `dma.any` placeholders whose futures reach it through loops,
/// branches, swaps, rotates and selects); failure when one is unknown or
/// not a whole shared allocation of the future's data shape, or an array of
/// them.
FailureOr<SmallVector<memref::AllocOp>> futureBuffers(Value future);
/// One buffer of `alloc`, an array of buffers of rank `rank` (or one).
MemRefType bufferType(memref::AllocOp alloc, int64_t rank);
/// The swizzle span of the buffer a converted view looks into, or 0.
/// Inside a dialect conversion pass `rewriter`, as for rootView.
int64_t swizzleSpan(Value view, ConversionPatternRewriter *rewriter = nullptr);
/// True when a converted shared view is the data of a future that names
/// one of several buffers at run time (carried by a loop, or swapped).
bool mayNameSeveralBuffers(Value view,
                           ConversionPatternRewriter *rewriter = nullptr);
/// swizzleSpan, or for the data of a future that names one of several
/// buffers, the span the op using it records (`recorded`, the swizzle
/// croq-plan-shared-layout gave them all); 0 when there is none.
int64_t swizzleSpanOrRecorded(Value view, std::optional<uint64_t> recorded,
                              ConversionPatternRewriter *rewriter);
/// The buffers a croq-level view may look into: its buffer, or every buffer
/// the data of a future it views may be at run time (none when unknown).
SmallVector<memref::AllocOp> viewedBuffers(Value view);
/// The wgmma layout span (croq-plan-shared-layout's `croq.swizzle`) of the
/// buffer a croq-level view looks into, or of all the buffers the data of
/// a future it views may be; 0 when there is none or they differ.
int64_t plannedSwizzle(Value view);
/// True when a buffer in `scope` is stored in the wgmma layout.
bool hasSwizzledBuffer(Operation *scope);
/// The element offset of buffer index `index` in the swizzled layout of
/// span `span`: panels of span bytes of each row, one after another.
Value swizzledOffset(OpBuilder &b, Location loc, MemRefType type,
                     ArrayRef<Value> index, int64_t span);
/// Where element `index` of a view of a swizzled buffer lives: the buffer
/// flattened (memref.collapse_shape) and the element's offset in it.
std::pair<Value, Value> swizzledElement(OpBuilder &b, Location loc,
                                        const RootedView &view,
                                        ArrayRef<Value> index, int64_t span);
/// Element reads and writes (memref.load / store) of a buffer stored in the
/// wgmma layout, addressed in it; a write is followed by the proxy fence
/// wgmma needs to see it.
void populateSwizzledElementPatterns(TypeConverter &converter,
                                     RewritePatternSet &patterns);
/// Makes those accesses illegal until addressed.
void markSwizzledElementAccessesLegal(ConversionTarget &target);
bool isWarpgroupFrag(Type type);
/// The LLVM struct that holds a warpgroup accumulator per thread.
Type wgmmaAccType(FragType type);
/// Commits the issued wgmma and waits until `pending` batches remain.
void waitWarpgroupMmas(OpBuilder &b, Location loc, uint64_t pending = 0);
Value fillWarpgroupAcc(OpBuilder &b, Location loc, FragType type, Value value);
LogicalResult lowerWarpgroupLoad(MmaLoadOp op, Value source,
                                 ConversionPatternRewriter &rewriter);
/// `meta` is the converted sparsity metadata of a sparse MMA, or null.
LogicalResult lowerWarpgroupMma(MmaOp op, Value acc, Value a, Value b,
                                Value meta, ConversionPatternRewriter &rewriter);
/// Stores a warpgroup accumulator into `target`. With `swizzled`, target
/// is a whole view of a buffer stored in the swizzled layout of span
/// `span` (an epilogue staging buffer, croq-plan-shared-layout).
void storeWarpgroupAcc(OpBuilder &b, Location loc, FragType type, Value acc,
                       Value target, std::optional<SmallVector<Value>> valid,
                       bool transpose, const RootedView *swizzled = nullptr,
                       int64_t span = 0);

//===----------------------------------------------------------------------===//
// TMA (Tma.cpp)
//===----------------------------------------------------------------------===//

/// The bytes of a statically shaped tile.
int64_t tileBytes(MemRefType type);
/// The condition under which the executing thread issues (null: always).
Value issuer(OpBuilder &b, Location loc, Operation *op,
             const LaunchAnalysis &analysis);

} // namespace detail
} // namespace mlir::croq

#endif // CROQ_LIB_CONVERSION_CROQTOGPU_COMMON_H
