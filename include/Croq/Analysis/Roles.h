//===- Roles.h - threads of inthreads regions -------------------*- C++ -*-===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#ifndef CROQ_ANALYSIS_ROLES_H
#define CROQ_ANALYSIS_ROLES_H

#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <optional>

namespace mlir::croq {
class InThreadsOp;

/// Threads of a block for which `region`'s predicate holds, found by
/// evaluating it over every value of the indices of the parallels around
/// it; std::nullopt when a bound or the predicate is not a compile-time
/// value.
std::optional<int64_t> countRoleThreads(InThreadsOp region);

} // namespace mlir::croq

#endif // CROQ_ANALYSIS_ROLES_H
