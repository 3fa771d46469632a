//===- VerifyClusters.h - the rules of multicast copies ---------*- C++ -*-===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#ifndef CROQ_LIB_DIALECT_CROQ_TRANSFORMS_VERIFYCLUSTERS_H
#define CROQ_LIB_DIALECT_CROQ_TRANSFORMS_VERIFYCLUSTERS_H

#include "Croq/Dialect/Croq/IR/CroqOps.h"

namespace mlir::croq {

/// Reports, at the copy, a multicast TMA load of `kernel` whose tile (or
/// whether it runs) differs between the blocks of a cluster, or that can
/// overwrite a buffer another block of the cluster still reads.
LogicalResult verifyClusterCopies(ParallelOp kernel);

} // namespace mlir::croq

#endif // CROQ_LIB_DIALECT_CROQ_TRANSFORMS_VERIFYCLUSTERS_H
