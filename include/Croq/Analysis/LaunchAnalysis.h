//===- LaunchAnalysis.h - where each croq op runs ---------------*- C++ -*-===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//
//
// For each kernel (a host-level block croq.parallel), the block size its
// level chain implies and, for each op in it, the cooperating thread group
// that executes it. The preparation passes and the croq-to-gpu patterns
// read it; get it from the analysis manager (getAnalysis<LaunchAnalysis>())
// or build one with analyzeLaunches.
//
//===----------------------------------------------------------------------===//

#ifndef CROQ_ANALYSIS_LAUNCHANALYSIS_H
#define CROQ_ANALYSIS_LAUNCHANALYSIS_H

#include "Croq/Dialect/Croq/IR/CroqOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypeInterfaces.h"
#include "mlir/Pass/AnalysisManager.h"
#include "llvm/ADT/DenseMap.h"

#include <memory>

namespace mlir::croq {

class LaunchAnalysis {
public:
  LaunchAnalysis() = default;
  /// For the analysis manager: analyses every kernel under `op` (a module),
  /// reporting at the op where a level chain has no consistent block shape;
  /// isValid() is then false.
  explicit LaunchAnalysis(Operation *op);

  /// False when the analysis reported an error.
  bool isValid() const { return valid; }

  /// The thread count of a block whose size is a run-time value (a
  /// run-time extent of the kernel's outermost thread-side parallel): the
  /// launch computes it, the kernel reads it from the block size register.
  static constexpr int64_t kRuntimeThreads = ShapedType::kDynamic;
  /// The most threads one block may have.
  static constexpr int64_t kMaxBlockThreads = 1024;

  /// Where an op inside a kernel runs.
  struct Scope {
    /// Threads per block of the enclosing kernel, or kRuntimeThreads.
    int64_t blockDim = 1;
    /// Blocks per cluster of the enclosing kernel (1: no cluster).
    int64_t clusterSize = 1;
    /// The innermost enclosing parallel above thread level: its instance is
    /// the group that executes collective ops cooperatively. Its size is
    /// kRuntimeThreads for the block of a run-time block size.
    Level groupLevel = Level::Block;
    int64_t groupSize = 1;
    /// True when the innermost enclosing parallel is thread level.
    bool perThread = false;
    /// True inside a croq.inthreads region.
    bool inThreads = false;
    /// For a copy in a thread-level body: true when it moves data of the
    /// executing thread alone (a local buffer, or a view that depends on a
    /// thread index), false when the group above copies cooperatively.
    bool copiesPerThread = false;
    /// True when the kernel issues warpgroup MMAs (wgmma): an mma.commit
    /// that whole warpgroups execute waits for their batches, at any level.
    bool warpgroupMma = false;
    /// The named barrier ids the kernel's program uses by constant
    /// (`__bar_sync(id, n)`): bit i for id i. croq's own barriers avoid them.
    uint32_t programBarrierIds = 0;

    /// True when the block's thread count is known only at the launch.
    bool runtimeBlock() const { return blockDim == kRuntimeThreads; }
    /// True when the group is several threads (a run-time block is).
    bool manyThreads() const {
      return groupSize == kRuntimeThreads || groupSize > 1;
    }
  };

  /// Scope of `op`, which must be inside a kernel.
  const Scope &getScope(Operation *op) const {
    auto it = scopes.find(op);
    assert(it != scopes.end() && "op outside an analysed kernel");
    return it->second;
  }
  bool hasScope(Operation *op) const { return scopes.count(op); }

  /// Threads in one instance of a nested parallel; block size of a kernel
  /// (kRuntimeThreads when the launch computes it).
  int64_t getInstanceThreads(ParallelOp op) const {
    return instanceThreads.lookup(op);
  }

  LogicalResult analyze(ModuleOp module);

  /// Its scopes name ops; any pass that adds or moves ops invalidates it.
  bool isInvalidated(const AnalysisManager::PreservedAnalyses &pa) {
    return !pa.isPreserved<LaunchAnalysis>();
  }

private:
  FailureOr<int64_t> analyzeLevel(ParallelOp op, int64_t blockDim);
  FailureOr<int64_t> childThreads(ParallelOp op);
  void recordScopes(ParallelOp kernel, int64_t blockDim);

  DenseMap<Operation *, Scope> scopes;
  DenseMap<Operation *, int64_t> instanceThreads;
  bool valid = true;
};

/// True when `op` is or holds a warpgroup MMA (wgmma).
bool containsWarpgroupMma(Operation *op);

/// Builds the analysis for every kernel in `module`; reports (and returns
/// null) when a level chain has no consistent block shape.
std::unique_ptr<LaunchAnalysis> analyzeLaunches(ModuleOp module);
using LaunchAnalysisPtr = std::unique_ptr<LaunchAnalysis>;

} // namespace mlir::croq

#endif // CROQ_ANALYSIS_LAUNCHANALYSIS_H
