//===- Futures.h - where futures are waited ---------------------*- C++ -*-===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#ifndef CROQ_ANALYSIS_FUTURES_H
#define CROQ_ANALYSIS_FUTURES_H

#include "mlir/IR/Operation.h"

namespace mlir::croq {

/// True when `future` reaches a croq.wait or a croq.event.trigger ... after,
/// following it through swap / rotate / select and through loop-carried and
/// branch values.
bool isAwaited(Value future);

/// The future an asynchronous copy or MMA produces that must be waited, or
/// null. A TMA store's is not among them: the block waits for its stores
/// before it ends.
Value getAsyncFuture(Operation *op);

} // namespace mlir::croq

#endif // CROQ_ANALYSIS_FUTURES_H
