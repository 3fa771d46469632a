//===- Evaluate.h - integer expressions at compile time ---------*- C++ -*-===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//
//
// The analyses that enumerate threads (inthreads selections, the event
// protocol, element overlaps) evaluate index and i1 expressions over
// values they bind. One semantics serves both forms here: a recursive
// evaluation for a few queries, and an IndexProgram compiled once for the
// many evaluations of an enumeration.
//
//===----------------------------------------------------------------------===//

#ifndef CROQ_ANALYSIS_EVALUATE_H
#define CROQ_ANALYSIS_EVALUATE_H

#include "mlir/IR/Value.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/DenseMap.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace mlir::croq {

/// The value of an index or integer expression over constants and
/// `bindings` (arith add, sub, mul, div, rem, shifts, min, max, and, or,
/// xor, cmpi, select, casts; i32 arithmetic wraps), or std::nullopt where
/// it depends on anything else, divides by zero, or applies an unsigned
/// operation to a negative value.
std::optional<int64_t> evaluateIndex(Value v,
                                     const DenseMap<Value, int64_t> &bindings);

/// Expressions compiled for repeated evaluation under changing inputs: the
/// same values as evaluateIndex, without walking the IR each time.
class IndexProgram {
public:
  IndexProgram();
  ~IndexProgram();
  /// Makes `input` a value the caller sets (a loop counter, a thread
  /// coordinate). Declare inputs before compiling what uses them.
  void addInput(Value input);
  /// Compiles `root`; the result names it for `evaluate`.
  unsigned compile(Value root);
  /// Sets an input for the evaluations that follow.
  void set(Value input, int64_t value);
  /// The value of a compiled root under the inputs set, or std::nullopt.
  std::optional<int64_t> evaluate(unsigned root);

private:
  struct Step;
  int slotOf(Value v, unsigned depth);
  void order(int slot, std::vector<int> &into, std::vector<bool> &seen);

  std::vector<Step> steps;
  std::vector<int64_t> values;
  std::vector<bool> known;
  DenseMap<Value, int> slots;
  std::vector<std::vector<int>> roots;
};

} // namespace mlir::croq

#endif // CROQ_ANALYSIS_EVALUATE_H
