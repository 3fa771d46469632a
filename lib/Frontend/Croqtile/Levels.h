//===- Levels.h - Croqtile parallel level inference -------------*- C++ -*-===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//
//
// The levels of a `parallel` chain, completed as Croqtile's pbfill does when
// some or all are not annotated. Sema and IRGen both need them: Sema for the
// scope of the fragments made under them, IRGen to build the levels.
//
//===----------------------------------------------------------------------===//

#ifndef CROQ_LIB_FRONTEND_CROQTILE_LEVELS_H
#define CROQ_LIB_FRONTEND_CROQTILE_LEVELS_H

#include "AST.h"

#include "Croq/Dialect/Croq/IR/CroqTypes.h"

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>

namespace mlir::croq::croqtile {

/// One level of a completed chain.
struct LevelPlan {
  const ParallelLevel *source; // null: an implicit `by 1`
  Level level;
};

/// Why a chain has no levels.
struct LevelError {
  llvm::SMLoc loc;
  std::string message, hint;
};

/// The level named `name` (`block`, `group-4`, `group`, `thread`).
std::optional<Level> levelFromName(StringRef name);
/// The Croqtile name of `level` (levelFromName's inverse).
StringRef levelName(Level level);

/// The levels of `stmt`, a parallel, nested in a parallel of level
/// `enclosing` (none: a kernel's outermost), completed. A kernel's chain
/// that starts below the block level runs in one block: callers add that
/// level.
FailureOr<SmallVector<LevelPlan>>
planLevels(const Stmt &stmt, std::optional<Level> enclosing, LevelError &error);

} // namespace mlir::croq::croqtile

#endif // CROQ_LIB_FRONTEND_CROQTILE_LEVELS_H
