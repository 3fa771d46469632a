//===- Buffers.h - the buffers a memref value names -------------*- C++ -*-===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#ifndef CROQ_ANALYSIS_BUFFERS_H
#define CROQ_ANALYSIS_BUFFERS_H

#include "mlir/IR/Value.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace mlir::croq {

/// The buffers a memref value may name: its allocations (memref.alloc /
/// alloca results, or kernel arguments for global tensors), or unknown.
struct Buffers {
  llvm::SmallPtrSet<Value, 4> roots;
  bool unknown = false;

  bool overlaps(const Buffers &other) const {
    if (unknown || other.unknown)
      return true;
    return llvm::any_of(roots, [&](Value r) { return other.roots.count(r); });
  }
};

/// The buffers a memref or future value may name, through views, future
/// data, swaps, rotations, selects and loop-carried and branch values.
Buffers buffersOf(Value value);

} // namespace mlir::croq

#endif // CROQ_ANALYSIS_BUFFERS_H
