//===- OpVerifiers.h - checks shared by croq op verifiers -------*- C++ -*-===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//
//
// Private to lib/Dialect/Croq/IR: the checks that the verifiers in
// CroqOps.cpp (structure, events, futures) and CroqDataOps.cpp (views,
// copies, MMA) share. Each reports at `op` and fails.
//
//===----------------------------------------------------------------------===//

#ifndef CROQ_LIB_DIALECT_CROQ_IR_OPVERIFIERS_H
#define CROQ_LIB_DIALECT_CROQ_IR_OPVERIFIERS_H

#include "Croq/Dialect/Croq/IR/CroqOps.h"

#include <optional>

namespace mlir::croq::detail {

/// The value of a constant index, or std::nullopt.
std::optional<int64_t> getConstantIndex(Value value);
/// Device-side ops must sit inside a `croq.parallel`; `why` ends the message.
LogicalResult verifyInsideParallel(Operation *op, StringRef why);
/// The storage of `type`, which must be global, shared or local; `which`
/// names the operand.
FailureOr<Storage> verifyStorage(Operation *op, MemRefType type,
                                 StringRef which);
/// Source and destination of a copy agree in element type and shape; a
/// dynamic extent matches any extent.
LogicalResult verifyCopyShapes(Operation *op, MemRefType source,
                               MemRefType target);
/// The subscripts (and `at` order) that select event elements.
LogicalResult verifyEventSelection(Operation *op, EventType type,
                                   ValueRange indices, Value order);
/// The type of a tile of `source` with `shape`: the source's strides, a
/// dynamic offset and the source's memory space.
FailureOr<MemRefType> inferTileType(Operation *op, MemRefType source,
                                    ArrayRef<int64_t> shape);
/// A view op's result is the tile type of `shape` over `source`.
LogicalResult verifyTileResult(Operation *op, MemRefType source,
                               ArrayRef<int64_t> shape, MemRefType result);
/// No operand is computed from `memref.dim` of a dimension its memref does
/// not have (upstream folds would read past the shape).
LogicalResult verifyNoInvalidDims(Operation *op);

/// Fails, naming `what`, unless `op` is inside a block-level croq.parallel
/// with `cluster(C)`; after that parallel became a gpu.launch (or a
/// kernel), it is not checked here.
LogicalResult verifyInsideCluster(Operation *op, StringRef what);

} // namespace mlir::croq::detail

#endif // CROQ_LIB_DIALECT_CROQ_IR_OPVERIFIERS_H
