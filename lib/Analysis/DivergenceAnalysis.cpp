//===- DivergenceAnalysis.cpp - uniformity across parallel levels ---------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#include "Croq/Analysis/DivergenceAnalysis.h"
#include "Croq/Analysis/Roles.h"
#include "Croq/Dialect/Croq/IR/CroqOps.h"

#include "mlir/Analysis/DataFlow/ConstantPropagationAnalysis.h"
#include "mlir/Analysis/DataFlow/DeadCodeAnalysis.h"
#include "mlir/Analysis/DataFlow/Utils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::croq;
using namespace mlir::dataflow;

StringRef mlir::croq::stringifyUniformScope(UniformScope scope) {
  switch (scope) {
  case UniformScope::Thread:
    return "thread";
  case UniformScope::Warp:
    return "warp";
  case UniformScope::Warpgroup:
    return "warpgroup";
  case UniformScope::Block:
    return "block";
  case UniformScope::Grid:
    return "grid";
  }
  llvm_unreachable("unknown scope");
}

Uniformity Uniformity::join(const Uniformity &lhs, const Uniformity &rhs) {
  if (lhs.isUninitialized())
    return rhs;
  if (rhs.isUninitialized())
    return lhs;
  UniformScope scope = std::min(lhs.getScope(), rhs.getScope());
  return Uniformity(scope, lhs.tidLike && rhs.tidLike);
}

void Uniformity::print(raw_ostream &os) const {
  if (isUninitialized()) {
    os << "<uninitialized>";
    return;
  }
  os << stringifyUniformScope(*scope) << (tidLike ? " (thread index)" : "");
}

//===----------------------------------------------------------------------===//
// Transfer functions
//===----------------------------------------------------------------------===//

UniformScope mlir::croq::levelScope(Level level) {
  switch (level) {
  case Level::Thread:
    return UniformScope::Thread;
  case Level::Warp:
    return UniformScope::Warp;
  case Level::Warpgroup:
    return UniformScope::Warpgroup;
  case Level::Block:
    return UniformScope::Block;
  }
  llvm_unreachable("unknown level");
}

/// Ops whose results depend only on their operands, whatever thread runs
/// them.
static bool isThreadAgnostic(Operation *op) {
  // Free of memory effects, not necessarily speculatable: a division by a
  // run-time divisor (undefined for zero, so not pure) still gives every
  // thread the same quotient of the same operands.
  if (op->getNumRegions() != 0 || !isMemoryEffectFree(op))
    return false;
  Dialect *dialect = op->getDialect();
  return isa_and_nonnull<arith::ArithDialect, math::MathDialect,
                         vector::VectorDialect>(dialect) ||
         isa<memref::DimOp, memref::SubViewOp, memref::ViewOp,
             memref::ExtractStridedMetadataOp, memref::CastOp,
             memref::ReinterpretCastOp, ChunkAtOp, SubspanOp, FutureDataOp,
             SwapOp, RotateOp, DmaAnyOp, MmaFillOp>(op);
}

LogicalResult DivergenceAnalysis::visitOperation(
    Operation *op, ArrayRef<const UniformityLattice *> operands,
    ArrayRef<UniformityLattice *> results) {
  auto setAll = [&](Uniformity value) {
    for (UniformityLattice *result : results)
      propagateIfChanged(result, result->join(value));
  };
  // Sources.
  if (auto tid = dyn_cast<gpu::ThreadIdOp>(op)) {
    setAll(Uniformity(UniformScope::Thread,
                      tid.getDimension() == gpu::Dimension::x));
    return success();
  }
  if (isa<gpu::LaneIdOp, NVVM::LaneIdOp>(op)) {
    setAll(Uniformity(UniformScope::Thread, /*tidLike=*/true));
    return success();
  }
  if (isa<NVVM::ThreadIdXOp>(op)) {
    setAll(Uniformity(UniformScope::Thread, /*tidLike=*/true));
    return success();
  }
  if (isa<NVVM::ThreadIdYOp, NVVM::ThreadIdZOp>(op)) {
    setAll(Uniformity(UniformScope::Thread));
    return success();
  }
  if (isa<gpu::BlockIdOp, NVVM::BlockIdXOp, NVVM::BlockIdYOp,
          NVVM::BlockIdZOp, gpu::DynamicSharedMemoryOp>(op)) {
    setAll(Uniformity(UniformScope::Block));
    return success();
  }
  // A warp's index, and a value broadcast from one lane, are the same
  // across the warp.
  if (isa<gpu::SubgroupIdOp, NVVM::WarpIdOp, gpu::SubgroupBroadcastOp>(op)) {
    setAll(Uniformity(UniformScope::Warp));
    return success();
  }
  if (isa<gpu::GridDimOp, gpu::BlockDimOp>(op)) {
    setAll(Uniformity(UniformScope::Grid));
    return success();
  }
  // A thread's coordinates in a fragment, and its registers' values: each
  // thread's own, whatever is known of the fragment (a loop-carried
  // accumulator's lattice may not be initialized when these are visited).
  if (isa<MmaCoordsOp, MmaElementOp>(op)) {
    setAll(Uniformity(UniformScope::Thread));
    return success();
  }
  // What a C++ device function returns is unknown: each thread's own.
  if (isa<CallOp>(op)) {
    setAll(Uniformity(UniformScope::Thread));
    return success();
  }
  if (matchPattern(op, m_Constant())) {
    setAll(Uniformity(UniformScope::Grid));
    return success();
  }
  // Memory a thread has of its own (an alloca, a `local` buffer, the slot a
  // scalar keeps across an inthreads region): what it holds is that
  // thread's, whatever the address. A shared buffer is the block's.
  auto ownMemory = [](Value memref) {
    auto type = dyn_cast<MemRefType>(memref.getType());
    return type && (memref.getDefiningOp<memref::AllocaOp>() ||
                    getStorage(type) == Storage::Local);
  };
  if (isa<memref::AllocaOp, memref::AllocOp>(op)) {
    Value memref = op->getResult(0);
    std::optional<Storage> storage =
        getStorage(cast<MemRefType>(memref.getType()));
    // The space's uniformity, or less where a run-time extent is.
    Uniformity space(ownMemory(memref)            ? UniformScope::Thread
                     : storage == Storage::Shared ? UniformScope::Block
                                                  : UniformScope::Grid);
    for (const UniformityLattice *operand : operands)
      space = Uniformity::join(space, operand->getValue());
    setAll(Uniformity(space.getScope()));
    return success();
  }
  if (auto load = dyn_cast<memref::LoadOp>(op); load && ownMemory(load.getMemRef())) {
    setAll(Uniformity(UniformScope::Thread));
    return success();
  }

  // The join of the operands, with the thread-index rules.
  Uniformity joined;
  for (const UniformityLattice *operand : operands)
    joined = Uniformity::join(joined, operand->getValue());
  if (joined.isUninitialized())
    return success(); // Wait for the operands.

  if (isa<arith::DivUIOp, arith::DivSIOp, arith::RemUIOp, arith::RemSIOp>(
          op)) {
    const Uniformity &lhs = operands[0]->getValue();
    APInt divisor;
    bool constant = matchPattern(op->getOperand(1), m_ConstantInt(&divisor));
    if (!lhs.isUninitialized() && lhs.isTidLike() && constant &&
        divisor.getSExtValue() > 0) {
      int64_t k = divisor.getSExtValue();
      if (isa<arith::DivUIOp, arith::DivSIOp>(op)) {
        // tid / 128k is the same across a warpgroup, tid / 32k across a warp.
        UniformScope scope = k % 128 == 0  ? UniformScope::Warpgroup
                             : k % 32 == 0 ? UniformScope::Warp
                                           : UniformScope::Thread;
        setAll(Uniformity(scope));
      } else {
        // tid % 32k still numbers the lanes of each warp in order.
        setAll(Uniformity(UniformScope::Thread, k % 32 == 0));
      }
      return success();
    }
    if (!lhs.isUninitialized() && lhs.getScope() >= UniformScope::Warp &&
        isa<arith::RemUIOp, arith::RemSIOp, arith::DivUIOp, arith::DivSIOp>(
            op)) {
      setAll(Uniformity(joined.getScope()));
      return success();
    }
  }
  if (isa<arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtUIOp,
          arith::ExtSIOp>(op)) {
    setAll(joined); // Keeps the thread-index mark.
    return success();
  }
  if (isThreadAgnostic(op)) {
    setAll(Uniformity(joined.getScope()));
    return success();
  }
  // Loads: uniform where the address is (see the header for the caveat);
  // atomics and everything unknown are per thread.
  if (isa<memref::LoadOp, vector::LoadOp>(op)) {
    setAll(Uniformity(joined.getScope()));
    return success();
  }
  setAll(Uniformity(UniformScope::Thread));
  return success();
}

void DivergenceAnalysis::visitNonControlFlowArguments(
    Operation *op, const RegionSuccessor &successor,
    ArrayRef<UniformityLattice *> argLattices, unsigned firstIndex) {
  auto set = [&](UniformityLattice *lattice, Uniformity value) {
    propagateIfChanged(lattice, lattice->join(value));
  };
  if (auto parallel = dyn_cast<ParallelOp>(op)) {
    // Each index is the same across one instance of its level.
    for (UniformityLattice *lattice : argLattices)
      set(lattice, Uniformity(levelScope(parallel.getLevel())));
    return;
  }
  if (auto loop = dyn_cast<scf::ForOp>(op)) {
    // The induction variable: lb + i * step, as uniform as lb and step.
    Uniformity scope = Uniformity::join(
        getLatticeElement(loop.getLowerBound())->getValue(),
        getLatticeElement(loop.getStep())->getValue());
    if (!scope.isUninitialized())
      set(argLattices.front(), Uniformity(scope.getScope()));
    return;
  }
  if (auto launch = dyn_cast<gpu::LaunchOp>(op)) {
    // blocks(3), threads(3), grid size(3), block size(3).
    for (auto [i, lattice] : llvm::enumerate(argLattices)) {
      if (i < 3)
        set(lattice, Uniformity(UniformScope::Block));
      else if (i < 6)
        set(lattice, Uniformity(UniformScope::Thread, i == 3));
      else if (i < 12)
        set(lattice, Uniformity(UniformScope::Grid));
      else
        set(lattice, Uniformity(UniformScope::Block)); // attributions
    }
    return;
  }
  SparseForwardDataFlowAnalysis::visitNonControlFlowArguments(
      op, successor, argLattices, firstIndex);
}

void DivergenceAnalysis::setToEntryState(UniformityLattice *lattice) {
  // Arguments of host functions and kernels are the same for every thread;
  // anything else the analysis cannot see is per thread.
  auto arg = dyn_cast<BlockArgument>(lattice->getAnchor());
  Operation *owner = arg ? arg.getOwner()->getParentOp() : nullptr;
  bool entryArg = false;
  if (arg && arg.getOwner()->isEntryBlock()) {
    if (auto kernel = dyn_cast_or_null<gpu::GPUFuncOp>(owner))
      entryArg = kernel.isKernel();
    else if (isa_and_nonnull<func::FuncOp>(owner))
      // A host function; a device function's arguments can differ per
      // thread.
      entryArg = !owner->getParentOfType<gpu::GPUModuleOp>();
  }
  propagateIfChanged(lattice, lattice->join(Uniformity(
                                  entryArg ? UniformScope::Grid
                                           : UniformScope::Thread)));
}

/// The value(s) that steer `branch` to `successor`.
static SmallVector<Value> controlValues(Operation *branch,
                                        RegionSuccessor successor) {
  if (auto ifOp = dyn_cast<scf::IfOp>(branch))
    return {ifOp.getCondition()};
  if (auto loop = dyn_cast<scf::ForOp>(branch))
    return {loop.getLowerBound(), loop.getUpperBound(), loop.getStep()};
  if (auto loop = dyn_cast<scf::WhileOp>(branch))
    return {loop.getConditionOp().getCondition()};
  if (auto sw = dyn_cast<scf::IndexSwitchOp>(branch))
    return {sw.getArg()};
  if (auto inthreads = dyn_cast<InThreadsOp>(branch))
    return {inthreads.getPredicate()};
  return {};
}

void DivergenceAnalysis::visitRegionSuccessors(
    ProgramPoint *point, RegionBranchOpInterface branch,
    RegionSuccessor successor, ArrayRef<AbstractSparseLattice *> lattices) {
  const auto *predecessors = getOrCreateFor<PredecessorState>(point, point);
  auto asLattices = [&](ArrayRef<AbstractSparseLattice *> range) {
    return ArrayRef<UniformityLattice *>(
        reinterpret_cast<UniformityLattice *const *>(range.data()),
        range.size());
  };
  if (!predecessors->allPredecessorsKnown()) {
    setAllToEntryStates(asLattices(lattices));
    return;
  }
  for (Operation *pred : predecessors->getKnownPredecessors()) {
    std::optional<OperandRange> operands;
    if (pred == branch)
      operands = branch.getEntrySuccessorOperands(successor);
    else if (auto terminator = dyn_cast<RegionBranchTerminatorOpInterface>(pred))
      operands = terminator.getSuccessorOperands(successor);
    if (!operands) {
      setAllToEntryStates(asLattices(lattices));
      return;
    }
    ValueRange inputs = predecessors->getSuccessorInputs(pred);
    unsigned firstIndex = 0;
    if (inputs.size() != lattices.size()) {
      if (!inputs.empty())
        firstIndex = isa<OpResult>(inputs.front())
                         ? cast<OpResult>(inputs.front()).getResultNumber()
                         : cast<BlockArgument>(inputs.front()).getArgNumber();
      visitNonControlFlowArguments(branch, successor, asLattices(lattices),
                                   firstIndex);
    }
    for (auto [operand, lattice] :
         llvm::zip(*operands, lattices.drop_front(firstIndex))) {
      const AbstractSparseLattice *value = getLatticeElementFor(point, operand);
      propagateIfChanged(lattice, lattice->join(*value));
    }
  }
  // Control dependence: values that leave a branch or a loop are only as
  // uniform as what steers it (threads took different sides, or left the
  // loop in different iterations). Inside a loop, carried values stay as
  // uniform as their updates among the threads still iterating.
  if (!successor.isParent())
    return;
  for (Value control : controlValues(branch, successor)) {
    const auto *value = static_cast<const UniformityLattice *>(
        getLatticeElementFor(point, control));
    if (value->getValue().isUninitialized())
      continue;
    Uniformity scope(value->getValue().getScope());
    for (AbstractSparseLattice *lattice : lattices)
      propagateIfChanged(lattice, static_cast<UniformityLattice *>(lattice)
                                      ->join(scope));
  }
}

//===----------------------------------------------------------------------===//
// Queries
//===----------------------------------------------------------------------===//

LogicalResult mlir::croq::runDivergenceAnalysis(Operation *root,
                                                DataFlowSolver &solver) {
  loadBaselineAnalyses(solver);
  solver.load<DivergenceAnalysis>();
  return solver.initializeAndRun(root);
}

UniformityInfo::UniformityInfo(Operation *root)
    : solver(std::make_unique<DataFlowSolver>()),
      valid(succeeded(runDivergenceAnalysis(root, *solver))) {}

UniformScope mlir::croq::getUniformScope(DataFlowSolver &solver, Value value) {
  const auto *lattice = solver.lookupState<UniformityLattice>(value);
  if (!lattice || lattice->getValue().isUninitialized())
    return UniformScope::Thread;
  return lattice->getValue().getScope();
}

std::optional<UniformScope> mlir::croq::getControlScope(DataFlowSolver &solver,
                                                        Operation *op) {
  if (auto parallel = dyn_cast<ParallelOp>(op))
    return levelScope(parallel.getLevel());
  SmallVector<Value> values = controlValues(op, RegionSuccessor(op, op->getResults()));
  if (values.empty())
    return std::nullopt;
  UniformScope scope = UniformScope::Grid;
  for (Value v : values)
    scope = std::min(scope, getUniformScope(solver, v));
  return scope;
}

UniformScope mlir::croq::getExecutionScope(DataFlowSolver &solver,
                                           Operation *op) {
  UniformScope scope = UniformScope::Grid;
  for (Operation *parent = op->getParentOp(); parent;
       parent = parent->getParentOp()) {
    if (isa<gpu::LaunchOp, gpu::GPUFuncOp>(parent) ||
        (isa<ParallelOp>(parent) &&
         cast<ParallelOp>(parent).getLevel() == Level::Block)) {
      scope = std::min(scope, UniformScope::Block);
      break;
    }
    if (isa<ParallelOp>(parent))
      continue; // Every instance runs its body; not a branch.
    if (std::optional<UniformScope> control = getControlScope(solver, parent))
      scope = std::min(scope, *control);
  }
  return scope;
}

std::optional<int64_t> mlir::croq::knownBlockThreads(Operation *op) {
  if (auto launch = op->getParentOfType<gpu::LaunchOp>()) {
    int64_t n = 1;
    for (Value size : {launch.getBlockSizeX(), launch.getBlockSizeY(),
                       launch.getBlockSizeZ()}) {
      std::optional<int64_t> c = getConstantIntValue(size);
      if (!c)
        return std::nullopt;
      n *= *c;
    }
    return n;
  }
  if (auto func = op->getParentOfType<gpu::GPUFuncOp>())
    if (std::optional<ArrayRef<int32_t>> known = func.getKnownBlockSize()) {
      int64_t n = 1;
      for (int32_t d : *known)
        n *= d;
      return n;
    }
  return std::nullopt;
}

bool mlir::croq::isSingleThreaded(DataFlowSolver &solver, Operation *op) {
  // A kernel of one thread runs everything on one thread.
  if (knownBlockThreads(op) == 1)
    return true;
  for (Operation *parent = op->getParentOp(); parent;
       parent = parent->getParentOp()) {
    Value cond;
    if (auto ifOp = dyn_cast<scf::IfOp>(parent);
        ifOp && op->getParentRegion() != &ifOp.getElseRegion() &&
        ifOp.getThenRegion().isAncestor(op->getParentRegion()))
      cond = ifOp.getCondition();
    else if (auto inthreads = dyn_cast<InThreadsOp>(parent))
      cond = inthreads.getPredicate();
    if (!cond)
      continue;
    if (cond.getDefiningOp<NVVM::ElectSyncOp>())
      return true;
    // x == c (or an and of conditions containing one) with x per thread.
    for (Value v : conjunctsOf(cond)) {
      if (v.getDefiningOp<NVVM::ElectSyncOp>())
        return true;
      // An election in one warp: `if (warp == 0) elect.sync else false`.
      if (auto ifOp = v.getDefiningOp<scf::IfOp>()) {
        unsigned i = cast<OpResult>(v).getResultNumber();
        bool elected = llvm::all_of(ifOp->getRegions(), [&](Region &r) {
          if (r.empty())
            return false;
          Value y = r.front().getTerminator()->getOperand(i);
          return y.getDefiningOp<NVVM::ElectSyncOp>() ||
                 matchPattern(y, m_Zero());
        });
        if (elected)
          return true;
      }
      auto cmp = v.getDefiningOp<arith::CmpIOp>();
      if (!cmp || cmp.getPredicate() != arith::CmpIPredicate::eq)
        continue;
      for (auto [a, b] : {std::pair{cmp.getLhs(), cmp.getRhs()},
                          std::pair{cmp.getRhs(), cmp.getLhs()}}) {
        const auto *lattice = solver.lookupState<UniformityLattice>(a);
        bool perThread = lattice && !lattice->getValue().isUninitialized() &&
                         lattice->getValue().getScope() == UniformScope::Thread;
        bool threadIndex =
            perThread && (lattice->getValue().isTidLike() ||
                          isa_and_nonnull<ParallelOp>(
                              isa<BlockArgument>(a)
                                  ? cast<BlockArgument>(a).getOwner()->getParentOp()
                                  : nullptr));
        if (threadIndex &&
            getUniformScope(solver, b) >= UniformScope::Warp)
          return true;
      }
    }
  }
  return false;
}
