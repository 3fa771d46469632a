//===- ElementOverlap.h - elements two threads' accesses share --*- C++ -*-===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//
//
// Whether two element accesses in the body of one thread-level parallel can
// touch one element from two different threads, decided by evaluating their
// indices for every thread. Pattern rules over index expressions (a slot
// `t * k + c`, disjoint ranges under `if (t < u)`) cover the common forms
// for any extent; this one covers what they cannot see through (strides
// that are powers of two of a loop counter, `t / s * 2s + t % s` pairs,
// conditions between two coordinates) where everything the indices depend
// on has compile-time bounds.
//
//===----------------------------------------------------------------------===//

#ifndef CROQ_ANALYSIS_ELEMENTOVERLAP_H
#define CROQ_ANALYSIS_ELEMENTOVERLAP_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>

namespace mlir::croq {
class ParallelOp;

/// An element access: `op` touches `width` consecutive elements of
/// `memref`, from `indices` along the last dimension.
struct ElementAccess {
  Operation *op;
  Value memref;
  ArrayRef<Value> indices;
  int64_t width = 1;
};

/// Whether element accesses of `view` in the body of `threads` can be told
/// apart by their indices: the view is the same memory in every thread (it
/// depends on no thread, warp or warpgroup coordinate and on nothing inside
/// the thread body) and in every step of the loops inside `varying` (the
/// loop, or null, whose steps the two accesses compared may differ in);
/// and its static strides send distinct indices to distinct elements
/// (`s.view(8, 64 : 32, 1)` does not: its rows overlap). Dynamic strides
/// are a tensor's, which croq's views keep apart.
bool isStableDistinctView(Value view, ParallelOp threads, Operation *varying);

/// The coordinates of a thread of `threads` and of the warp and warpgroup
/// levels between it and the block, outermost first, each with its extent;
/// std::nullopt where an extent is not a positive constant.
std::optional<SmallVector<std::pair<Value, int64_t>>>
threadCoordinates(ParallelOp threads);

/// True when no element is touched by `a` in one thread of `threads` and by
/// `b` in another, proven by evaluating both accesses' indices for every
/// thread (the coordinates of `threads` and of the warp and warpgroup levels
/// around it), every iteration of the loops between each access and
/// `threads`, and every iteration of the loops around `threads` that the
/// indices depend on. With `sameIteration`, both accesses are in one
/// iteration of those outer loops (the same step of a tree reduction);
/// otherwise any two. A branch condition or inthreads predicate around an
/// access that evaluates to false excludes the thread; one that cannot be
/// evaluated (a comparison of loaded data) is taken to hold. Elements are
/// keyed by the accesses' indices into their memref, which must be a view
/// the same in every thread and step with distinct addresses for distinct
/// indices. False when anything an index or loop bound depends on is not a
/// compile-time value, when a view is not such a one, or when the
/// evaluations would exceed `budget` (decremented by those made: one per
/// thread and per loop iteration).
bool threadsShareNoElement(const ElementAccess &a, const ElementAccess &b,
                           ParallelOp threads, bool sameIteration,
                           int64_t &budget);

} // namespace mlir::croq

#endif // CROQ_ANALYSIS_ELEMENTOVERLAP_H
