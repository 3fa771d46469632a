//===- VerifyRaces.h - shared buffers between async roles -------*- C++ -*-===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#ifndef CROQ_LIB_DIALECT_CROQ_TRANSFORMS_VERIFYRACES_H
#define CROQ_LIB_DIALECT_CROQ_TRANSFORMS_VERIFYRACES_H

#include "Croq/Dialect/Croq/IR/CroqOps.h"

namespace mlir::croq {

/// Reports, at the access, a shared buffer that one `inthreads.async` role
/// of `kernel` writes and another accesses with no event ordering the two:
/// no trigger after the write whose event the other role waits on before
/// its access. An error where the role waits on such an event only after
/// the access; a warning where no event connects them at all.
LogicalResult verifyRoleRaces(ParallelOp kernel);

} // namespace mlir::croq

#endif // CROQ_LIB_DIALECT_CROQ_TRANSFORMS_VERIFYRACES_H
