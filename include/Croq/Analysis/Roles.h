//===- Roles.h - threads of inthreads regions -------------------*- C++ -*-===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#ifndef CROQ_ANALYSIS_ROLES_H
#define CROQ_ANALYSIS_ROLES_H

#include "Croq/Analysis/Evaluate.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Value.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>

namespace mlir::croq {
class InThreadsOp;
class DmaCopyOp;
class ParallelOp;
enum class Level : uint32_t;

/// Threads in one instance of a thread-side level (thread, warp,
/// warpgroup); a block instance has the kernel's block size instead.
int64_t levelThreads(Level level);

/// The block-level croq.parallel (a kernel's blocks) that is `op` or holds
/// it, or null.
ParallelOp blockParallelOf(Operation *op);
/// The warp-specialized role (croq.inthreads async region) that holds
/// `op`, or null.
InThreadsOp roleOf(Operation *op);

/// Threads of a block for which `region`'s predicate holds, found by
/// evaluating it over every value of the indices of the parallels around
/// it; std::nullopt when a bound or the predicate is not a compile-time
/// value.
std::optional<int64_t> countRoleThreads(InThreadsOp region);

/// The predicate of a comparison with its operands exchanged: `c < t` is
/// `t > c`.
arith::CmpIPredicate mirroredPredicate(arith::CmpIPredicate predicate);

/// The values thread coordinate `coordinate` (an index of a parallel
/// level of constant extent) takes where `op` runs: its extent, narrowed by
/// the conjuncts of the `scf.if` conditions (then side) and inthreads
/// predicates around `op` that compare it with a constant; std::nullopt
/// when unknown or empty.
std::optional<std::pair<int64_t, int64_t>> coordinateRange(Operation *op,
                                                           Value coordinate);

/// Calls `visit` on every block argument `value` is computed from; false as
/// soon as one call returns false.
bool allSources(Value value, function_ref<bool(BlockArgument)> visit);

/// True when `value` depends on the index of a thread-level parallel.
bool dependsOnThreadIndex(Value value);
/// True unless `value` is provably the same in every instance of the
/// parallels nested in `kernel` (every warp, warpgroup and thread): computed
/// by region-free ops that read no memory from values defined outside
/// `kernel`, its own indices, and counters of loops whose bounds are the
/// same. Loop-carried values, branch results and loads may differ.
bool mayDifferBetweenInstances(Value value, Operation *kernel);
/// True when `x` and `y` compute the same value: the same SSA value, or the
/// same pure op (name, attributes) of operands that do, up to `depth` ops
/// deep (the importer does not share `k % 2` written twice).
bool computesSameValue(Value x, Value y, int depth = 8);
/// The conjuncts of a condition: the leaves of its tree of arith.andi.
SmallVector<Value> conjunctsOf(Value condition);
/// The terms of a sum: the leaves of its tree of arith.addi.
SmallVector<Value> addendsOf(Value sum);
/// True when `value` depends on the index of a parallel below the block
/// level (a thread, warp or warpgroup index): it may differ between the
/// threads of a block.
bool dependsOnInstanceIndex(Value value);

/// For a copy in a thread-level body: true when it moves data of the
/// executing thread alone (a local buffer, a view that depends on a thread
/// index, or global views), false when the group above copies
/// cooperatively.
bool isPerThreadCopy(DmaCopyOp copy);

/// For a copy in the body of a warp or warpgroup parallel: true when every
/// instance of the group copies the same data (no view, loop bound or
/// branch condition between the copy and `kernel` depends on a parallel
/// index below the block, and no croq.inthreads selects a subset): the
/// whole block then copies cooperatively, once, instead of each group
/// writing the same elements.
bool isGroupInvariantCopy(Operation *copy, Operation *kernel);

/// The indices of the parallels around `op` below the block level,
/// outermost first, with their extents; none when an extent is not a
/// compile-time constant.
std::optional<SmallVector<std::pair<BlockArgument, int64_t>>>
instanceIndices(Operation *op);
/// Binds `indices` (instanceIndices) to the values of instance `linear`
/// (the indices linearised row-major).
void bindInstance(ArrayRef<std::pair<BlockArgument, int64_t>> indices,
                  int64_t linear, DenseMap<Value, int64_t> &bindings);
/// Threads in one instance of the innermost parallel around `op` (1 when
/// that is the block).
int64_t instanceThreads(Operation *op);

/// Which instances of the parallels around `op` (instanceIndices,
/// linearised row-major) run it: those for which the predicates of `op`
/// (a croq.inthreads) and of the croq.inthreads around it hold, all of
/// them outside every region; none when a bound or a predicate is not a
/// compile-time constant.
std::optional<llvm::BitVector> roleSelection(Operation *op);

/// Two of a block's roles that some instance runs both of: `later` shares
/// instance `instance` (a bit of roleSelection) with the earlier `earlier`.
struct RoleOverlap {
  Operation *earlier, *later;
  int64_t instance;
};

/// The first overlap among `roles` (croq.inthreads regions of one block, in
/// order); std::nullopt when they are disjoint, or when the selection of a
/// role cannot be computed, which is then returned in `*unknown`.
std::optional<RoleOverlap> findRoleOverlap(ArrayRef<InThreadsOp> roles,
                                           Operation **unknown = nullptr);

/// Registers per thread at entry of a kernel bounded to `blocksPerSM`
/// blocks of `blockThreads` per SM (what ptxas allocates under .maxntid
/// and .minnctapersm): the 64K-register file divided evenly, in the
/// allocation unit of 8, at most 255.
inline int64_t entryRegisters(int64_t blockThreads, int64_t blocksPerSM = 1) {
  int64_t even = (64 * 1024 / blocksPerSM / blockThreads) / 8 * 8;
  return even < 255 ? even : 255;
}

/// The blocks per SM the block-level parallel around `op` asks for
/// (`[[launch_bounds(_, N)]]`, its min_blocks; once lowered, the
/// launch_hints of its gpu.launch), 1 without one.
int64_t blocksPerSM(Operation *op);

} // namespace mlir::croq

#endif // CROQ_ANALYSIS_ROLES_H
