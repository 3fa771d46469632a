//===- Sema.h - Croqtile semantic analysis ----------------------*- C++ -*-===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//
//
// Sema runs between the parser and IRGen. It resolves the names of each
// function, scope by scope, and works out the static shapes of views,
// buffers and fragments from the declarations, index bounds and view
// operations. From them it learns what a statement cannot know from the
// statements before it:
//
//  - an accumulator's shape and element type, from the first MMA that
//    accumulates into it (`mc = mma.fill 0;` precedes the loads and the MMA,
//    and uses of `mc` may come before that MMA in program order);
//  - the operand role of each `mma.load`, from the MMA that uses it;
//  - the buffer a `dma.any` placeholder stands for, from the future it is
//    swapped with or the copy later assigned to it.
//
// It also checks the language rules that follow from a program's structure
// (where a statement may appear, level chains, exits, attributes, the
// built-ins' forms) and decides what IRGen builds from them: each parallel's
// completed levels, and the host statements that run on one GPU thread.
//
// IRGen reads these facts and generates each function once.
//
//===----------------------------------------------------------------------===//

#ifndef CROQ_LIB_FRONTEND_CROQTILE_SEMA_H
#define CROQ_LIB_FRONTEND_CROQTILE_SEMA_H

#include "AST.h"
#include "Levels.h"

#include "Croq/Dialect/Croq/IR/CroqTypes.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/Twine.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>

namespace mlir::croq::croqtile {

/// An accumulator made by `mma.fill`, as its first MMA shapes it.
struct AccumulatorFacts {
  /// [M, N]: rows of A and columns of B, after the layout.
  int64_t rows = 0, cols = 0;
  /// The element type of that MMA's A operand, which gives the
  /// accumulator's when `mma.fill` names none.
  std::string operandElement;
  /// Who holds it: the scope of that MMA (a warpgroup under a group-4
  /// level, else a warp).
  Level scope = Level::Warp;
};

/// The buffer of a copy's future: static extents (kDynamic where only the
/// run time knows), the element type and the storage.
struct BufferFacts {
  llvm::SmallVector<int64_t> shape;
  std::string element;
  std::string storage; // "shared", "local" or "global"
  /// The whole of an allocation of this shape, element type and storage,
  /// without strides of its own: a copy's `=> shared` buffer or a declared
  /// one. Only such a buffer can be made again from these facts.
  bool allocated = false;
};

/// A `dma.any` / `tma.any` placeholder.
struct PlaceholderFacts {
  /// The future the first swap or rotate of it exchanges it with, and that
  /// future's declaration; empty when no swap has it.
  std::string partner;
  const Stmt *partnerDecl = nullptr;
  /// The buffer it stands for, from the first statement that tells: a copy
  /// `=> shared` / `=> local` (or into a declared buffer) assigned to it, or
  /// the copy that made its partner. Unset when Sema cannot tell.
  std::optional<BufferFacts> buffer;
  bool buffered = false;
  /// The shared tile read by the TMA store first assigned to it, when a
  /// store tells what it stands for: the placeholder then names that tile.
  const Expr *storeSource = nullptr;
};

/// What Sema learns about a program.
struct SemaResult {
  /// Each `mma.load`'s part in the first MMA that uses it.
  llvm::DenseMap<const Stmt *, FragRole> loadRoles;
  llvm::DenseMap<const Stmt *, AccumulatorFacts> accumulators;
  llvm::DenseMap<const Stmt *, PlaceholderFacts> placeholders;
  /// Accumulators used by an MMA whose operand shapes Sema could not work
  /// out statically: the operand expression at fault.
  llvm::DenseMap<const Stmt *, const Expr *> unshapedAccumulators;
  /// The mma.fill of each accumulator that a standalone `mma.scale`
  /// scales: it is held as a scaled sum and the product of the MMAs since
  /// the last scale.
  llvm::DenseSet<const Stmt *> blockScaled;
  /// Each parallel's levels, completed (a kernel's chain that starts below
  /// the block level begins with an implicit block level of extent 1).
  llvm::DenseMap<const Stmt *, llvm::SmallVector<LevelPlan>> levelPlans;
  /// Host statements that read or write tensor elements: they run on the
  /// GPU, in one thread of one block.
  llvm::DenseSet<const Stmt *> onOneThread;
};

/// Reports an error at a location, with a hint (a note) unless it is empty.
using DiagnoseFn = llvm::function_ref<void(
    llvm::SMLoc, const llvm::Twine &message, const llvm::Twine &hint)>;

/// `__atomic_add`, `__atomic_cas`, ...: the atomic read-modify-write
/// built-ins.
bool isAtomicBuiltin(llvm::StringRef name);

/// The operators that apply element-wise to shapes.
bool isShapeOperator(llvm::StringRef op);

/// Whether `e` stands for a shape (an mdspan or ituple value) rather than
/// one value: a list or tuple, a name `isShapeName` accepts, `x.span`, shape
/// arithmetic, a pick from a shape (or `t[(i), ...]` of a tensor, which
/// `isTensorPick` tells), or an element-wise cdiv. Sema and IRGen share it.
bool isShapeValued(const Expr &e,
                   llvm::function_ref<bool(llvm::StringRef)> isShapeName,
                   llvm::function_ref<bool(const Expr &)> isTensorPick);

/// The accumulator element type of an MMA whose A operand has elements
/// `operandElement`, when `mma.fill` names none: f16 stays f16, 8-bit
/// integers accumulate in s32 and other floats in f32.
std::string defaultAccumulatorElement(llvm::StringRef operandElement);

/// Analyzes `program` and checks the language rules Sema owns: where each
/// statement may appear (host code or a parallel, a loop, a role, an
/// apply), the level rules of parallel chains, attributes, built-in calls
/// and the static rules of declarations. Reports the first broken rule, in
/// program order, and fails.
///
/// A fact Sema cannot establish (an accumulator's shape) is reported by
/// IRGen at the statement that needs it, in program order, and after the
/// errors of the statements it depends on (an accumulator's MMA operands),
/// so that the first error of a file is its cause.
FailureOr<SemaResult> analyze(const Program &program, DiagnoseFn diagnose);

} // namespace mlir::croq::croqtile

#endif // CROQ_LIB_FRONTEND_CROQTILE_SEMA_H
