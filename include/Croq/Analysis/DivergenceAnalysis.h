//===- DivergenceAnalysis.h - uniformity across parallel levels -*- C++ -*-===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//
//
// A sparse forward dataflow analysis that records, for every SSA value, the
// widest group of threads across which it is the same: a thread, a warp (32
// threads), a warpgroup (128), a block, or the whole grid. It runs on croq
// IR and on the gpu / nvgpu / nvvm IR croq lowers to, and uses the
// RegionBranchOpInterface of scf and croq region ops; values that leave a
// branch or a loop are joined with the uniformity of the condition or the
// trip count that steers them (structured sync and temporal divergence).
//
//===----------------------------------------------------------------------===//

#ifndef CROQ_ANALYSIS_DIVERGENCEANALYSIS_H
#define CROQ_ANALYSIS_DIVERGENCEANALYSIS_H

#include "mlir/Analysis/DataFlow/SparseAnalysis.h"
#include "mlir/Analysis/DataFlowFramework.h"
#include "mlir/Pass/AnalysisManager.h"

#include <optional>

namespace mlir::croq {
enum class Level : uint32_t;

/// The widest group of threads that agree on a value, narrowest first.
enum class UniformScope : uint8_t { Thread, Warp, Warpgroup, Block, Grid };

/// "warp", "warpgroup", ...
StringRef stringifyUniformScope(UniformScope scope);

/// The scope whose threads share the index of a parallel at `level`.
UniformScope levelScope(Level level);

/// Lattice value: unknown (not yet reached), or a scope. `tidLike` marks
/// values equal to the linear thread index modulo a multiple of 32 (or the
/// lane id): dividing them by 32 or 128 gives warp- or warpgroup-uniform
/// values.
class Uniformity {
public:
  Uniformity() = default;
  explicit Uniformity(UniformScope scope, bool tidLike = false)
      : scope(scope), tidLike(tidLike) {}

  static Uniformity getPessimisticValueState(Value) {
    return Uniformity(UniformScope::Thread);
  }

  bool isUninitialized() const { return !scope; }
  UniformScope getScope() const { return *scope; }
  bool isTidLike() const { return tidLike; }

  /// The narrower of two scopes (the join: agreement across both).
  static Uniformity join(const Uniformity &lhs, const Uniformity &rhs);
  /// Same as join: uniformity has one direction.
  static Uniformity meet(const Uniformity &lhs, const Uniformity &rhs) {
    return join(lhs, rhs);
  }

  bool operator==(const Uniformity &other) const {
    return scope == other.scope && tidLike == other.tidLike;
  }
  void print(raw_ostream &os) const;

private:
  std::optional<UniformScope> scope;
  bool tidLike = false;
};

class UniformityLattice : public dataflow::Lattice<Uniformity> {
public:
  using Lattice::Lattice;
};

/// The analysis. Load it into a DataFlowSolver together with the baseline
/// analyses (dead code, constant propagation); `runDivergenceAnalysis` does.
class DivergenceAnalysis
    : public dataflow::SparseForwardDataFlowAnalysis<UniformityLattice> {
public:
  using SparseForwardDataFlowAnalysis::SparseForwardDataFlowAnalysis;

  LogicalResult visitOperation(Operation *op,
                               ArrayRef<const UniformityLattice *> operands,
                               ArrayRef<UniformityLattice *> results) override;
  void visitNonControlFlowArguments(Operation *op,
                                    const RegionSuccessor &successor,
                                    ArrayRef<UniformityLattice *> argLattices,
                                    unsigned firstIndex) override;
  void setToEntryState(UniformityLattice *lattice) override;

private:
  void visitRegionSuccessors(ProgramPoint *point,
                             RegionBranchOpInterface branch,
                             RegionSuccessor successor,
                             ArrayRef<dataflow::AbstractSparseLattice *>
                                 lattices) override;
};

/// Runs the analysis on `root` (baseline analyses included).
LogicalResult runDivergenceAnalysis(Operation *root, DataFlowSolver &solver);

/// The divergence analysis of `root` (a module) for the analysis manager:
/// passes get it with getAnalysis<UniformityInfo>(), and share one run for
/// as long as the passes between them preserve it (those that change no IR
/// mark it preserved).
class UniformityInfo {
public:
  explicit UniformityInfo(Operation *root);
  /// False when the solver failed (reported at the op).
  bool isValid() const { return valid; }
  DataFlowSolver &getSolver() { return *solver; }
  bool isInvalidated(const AnalysisManager::PreservedAnalyses &pa) {
    return !pa.isPreserved<UniformityInfo>();
  }

private:
  std::unique_ptr<DataFlowSolver> solver;
  bool valid;
};

/// The uniformity of `value`, or Thread when the analysis did not reach it.
UniformScope getUniformScope(DataFlowSolver &solver, Value value);

/// The scope of the value that decides whether and how often `op`'s regions
/// run: an scf.if or croq.inthreads condition, an scf.for trip count, an
/// scf.while condition, a croq.parallel's indices. std::nullopt for ops
/// that do not branch.
std::optional<UniformScope> getControlScope(DataFlowSolver &solver,
                                            Operation *op);

/// The widest group of threads guaranteed to execute `op` together: the
/// narrowest control scope among the branches around it, starting from the
/// block inside a kernel (the grid on the host).
UniformScope getExecutionScope(DataFlowSolver &solver, Operation *op);

/// The threads of the block that runs `op`, where its gpu.launch or
/// gpu.func fixes them.
std::optional<int64_t> knownBlockThreads(Operation *op);

/// True when exactly one thread of its group executes `op`: it is guarded
/// by `x == c` with a thread-varying, thread-index-like `x`, or by
/// nvvm.elect.sync.
bool isSingleThreaded(DataFlowSolver &solver, Operation *op);

} // namespace mlir::croq

#endif // CROQ_ANALYSIS_DIVERGENCEANALYSIS_H
