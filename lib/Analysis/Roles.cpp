//===- Roles.cpp - threads of inthreads regions ---------------------------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#include "Croq/Analysis/Roles.h"
#include "Croq/Dialect/Croq/IR/CroqOps.h"
#include "Croq/Dialect/Croq/IR/CroqTypes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::croq;

int64_t mlir::croq::levelThreads(Level level) {
  switch (level) {
  case Level::Thread:
    return 1;
  case Level::Warp:
    return 32;
  case Level::Warpgroup:
    return 128;
  case Level::Block:
    break;
  }
  llvm_unreachable("a block instance has the kernel's block size");
}

ParallelOp mlir::croq::blockParallelOf(Operation *op) {
  auto parallel = dyn_cast<ParallelOp>(op);
  if (!parallel)
    parallel = op->getParentOfType<ParallelOp>();
  while (parallel && parallel.getLevel() != Level::Block)
    parallel = parallel.getParentParallel();
  return parallel;
}

InThreadsOp mlir::croq::roleOf(Operation *op) {
  auto region = op->getParentOfType<InThreadsOp>();
  while (region && !region.getAsync())
    region = region->getParentOfType<InThreadsOp>();
  return region;
}

std::optional<SmallVector<std::pair<BlockArgument, int64_t>>>
mlir::croq::instanceIndices(Operation *op) {
  SmallVector<ParallelOp> levels;
  for (ParallelOp p = op->getParentOfType<ParallelOp>();
       p && p.getLevel() != Level::Block; p = p->getParentOfType<ParallelOp>())
    levels.insert(levels.begin(), p);
  SmallVector<std::pair<BlockArgument, int64_t>> indices;
  for (ParallelOp p : levels)
    for (auto [arg, bound] : llvm::zip_equal(p.getIndices(), p.getBounds())) {
      APInt c;
      if (!matchPattern(bound, m_ConstantInt(&c)))
        return std::nullopt;
      indices.push_back({arg, c.getSExtValue()});
    }
  return indices;
}

void mlir::croq::bindInstance(
    ArrayRef<std::pair<BlockArgument, int64_t>> indices, int64_t linear,
    DenseMap<Value, int64_t> &bindings) {
  for (int i = indices.size() - 1; i >= 0; --i) {
    bindings[indices[i].first] = linear % indices[i].second;
    linear /= indices[i].second;
  }
}

int64_t mlir::croq::instanceThreads(Operation *op) {
  auto parent = op->getParentOfType<ParallelOp>();
  return !parent || parent.getLevel() == Level::Block
             ? 1
             : levelThreads(parent.getLevel());
}

/// Threads for which the predicates of the regions at and around `op` hold,
/// by enumerating the indices of the parallels around it (all bounds must
/// be constants).
std::optional<llvm::BitVector> mlir::croq::roleSelection(Operation *op) {
  std::optional<SmallVector<std::pair<BlockArgument, int64_t>>> indices =
      instanceIndices(op);
  if (!indices)
    return std::nullopt;
  int64_t combos = 1;
  for (auto &[arg, bound] : *indices)
    combos *= bound;
  if (combos > (1 << 16))
    return std::nullopt;
  auto innermost = dyn_cast<InThreadsOp>(op);
  if (!innermost)
    innermost = op->getParentOfType<InThreadsOp>();
  llvm::BitVector selected(combos);
  DenseMap<Value, int64_t> bindings;
  for (int64_t linear = 0; linear < combos; ++linear) {
    bindInstance(*indices, linear, bindings);
    // A thread runs `op` when the predicates of every croq.inthreads at
    // and around it hold.
    bool all = true;
    for (InThreadsOp r = innermost; r && all;
         r = r->getParentOfType<InThreadsOp>()) {
      std::optional<int64_t> holds = evaluateIndex(r.getPredicate(), bindings);
      if (!holds)
        return std::nullopt;
      all = *holds != 0;
    }
    if (all)
      selected.set(linear);
  }
  return selected;
}

std::optional<RoleOverlap>
mlir::croq::findRoleOverlap(ArrayRef<InThreadsOp> roles, Operation **unknown) {
  SmallVector<std::pair<InThreadsOp, llvm::BitVector>> selections;
  for (InThreadsOp role : roles) {
    std::optional<llvm::BitVector> selected = roleSelection(role);
    if (!selected) {
      if (unknown)
        *unknown = role;
      return std::nullopt;
    }
    for (auto &[other, taken] : selections) {
      if (taken.size() != selected->size() || !taken.anyCommon(*selected))
        continue;
      llvm::BitVector both = taken;
      both &= *selected;
      return RoleOverlap{other, role, both.find_first()};
    }
    selections.emplace_back(role, std::move(*selected));
  }
  return std::nullopt;
}

std::optional<int64_t> mlir::croq::countRoleThreads(InThreadsOp region) {
  std::optional<llvm::BitVector> selected = roleSelection(region);
  if (!selected)
    return std::nullopt;
  return static_cast<int64_t>(selected->count()) * instanceThreads(region);
}

/// Calls `visit` on each block argument `value` is computed from (through
/// any ops), once each, until it returns false; false then.
bool mlir::croq::computesSameValue(Value x, Value y, int depth) {
  if (x == y)
    return true;
  Operation *dx = x.getDefiningOp(), *dy = y.getDefiningOp();
  // Equal operands give an equal result where the op is pure, or an
  // integer division or remainder (`i / C` twice: not speculatable, but a
  // function of its operands). Not inline assembly, which may read memory
  // while declaring no effects.
  bool function =
      dx &&
      (isPure(dx) ||
       isa<arith::DivSIOp, arith::DivUIOp, arith::RemSIOp, arith::RemUIOp,
           arith::CeilDivSIOp, arith::CeilDivUIOp, arith::FloorDivSIOp>(dx));
  if (!dx || !dy || depth == 0 || dx->getNumRegions() || !function ||
      cast<OpResult>(x).getResultNumber() !=
          cast<OpResult>(y).getResultNumber())
    return false;
  return OperationEquivalence::isEquivalentTo(
      dx, dy,
      [&](Value ox, Value oy) {
        return success(computesSameValue(ox, oy, depth - 1));
      },
      /*markEquivalent=*/nullptr, OperationEquivalence::IgnoreLocations);
}

bool mlir::croq::allSources(Value value, function_ref<bool(BlockArgument)> visit) {
  SmallVector<Value> worklist{value};
  llvm::SmallPtrSet<Value, 16> visited;
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    if (!visited.insert(v).second)
      continue;
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      if (!visit(arg))
        return false;
      continue;
    }
    if (Operation *def = v.getDefiningOp())
      llvm::append_range(worklist, def->getOperands());
  }
  return true;
}

/// The leaves of the tree of `OpTy` (a binary op) rooted at `root`.
template <typename OpTy>
static SmallVector<Value> leavesOf(Value root) {
  SmallVector<Value> worklist{root}, leaves;
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    if (auto op = v.getDefiningOp<OpTy>())
      worklist.append({op.getLhs(), op.getRhs()});
    else
      leaves.push_back(v);
  }
  return leaves;
}

SmallVector<Value> mlir::croq::conjunctsOf(Value condition) {
  return leavesOf<arith::AndIOp>(condition);
}

SmallVector<Value> mlir::croq::addendsOf(Value sum) {
  return leavesOf<arith::AddIOp>(sum);
}

bool mlir::croq::dependsOnInstanceIndex(Value value) {
  return !allSources(value, [](BlockArgument arg) {
    auto parallel = dyn_cast<ParallelOp>(arg.getOwner()->getParentOp());
    return !parallel || parallel.getLevel() == Level::Block;
  });
}

/// True when `value` depends on the index of a thread-level parallel.
bool mlir::croq::dependsOnThreadIndex(Value value) {
  return !allSources(value, [](BlockArgument arg) {
    auto parallel = dyn_cast<ParallelOp>(arg.getOwner()->getParentOp());
    return !parallel || parallel.getLevel() != Level::Thread;
  });
}

bool mlir::croq::isPerThreadCopy(DmaCopyOp copy) {
  for (Value side : {copy.getSource(), copy.getTarget()}) {
    auto type = cast<MemRefType>(side.getType());
    if (getStorage(type) == Storage::Local || dependsOnThreadIndex(side))
      return true;
  }
  // A copy between global views in a thread body is the thread's own.
  return getStorage(cast<MemRefType>(copy.getSource().getType())) !=
             Storage::Shared &&
         getStorage(cast<MemRefType>(copy.getTarget().getType())) !=
             Storage::Shared;
}

/// True unless `value` is provably the same in every instance of the
/// parallels nested in `kernel`: computed by region-free ops that read no
/// memory from values defined outside `kernel`, the kernel's own indices,
/// and induction variables of loops whose bounds are themselves the same.
/// Results of branches and loops, loop-carried values and loads are
/// assumed to differ (a mutable scalar or a break flag can carry a warp
/// index).
static bool dependsOnGroupIndex(Value value, Operation *kernel, int depth);

bool mlir::croq::mayDifferBetweenInstances(Value value, Operation *kernel) {
  return dependsOnGroupIndex(value, kernel, 0);
}

static bool dependsOnGroupIndex(Value value, Operation *kernel, int depth) {
  if (depth > 32)
    return true;
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    Operation *owner = arg.getOwner()->getParentOp();
    if (owner == kernel || !kernel->isAncestor(owner))
      return false;
    if (auto loop = dyn_cast<scf::ForOp>(owner);
        loop && arg == loop.getInductionVar())
      return llvm::any_of(
          ValueRange{loop.getLowerBound(), loop.getUpperBound(),
                     loop.getStep()},
          [&](Value v) { return dependsOnGroupIndex(v, kernel, depth + 1); });
    return true;
  }
  Operation *def = value.getDefiningOp();
  if (!kernel->isAncestor(def))
    return false;
  // A shared buffer is one per block, wherever it is declared.
  if (auto alloc = dyn_cast<memref::AllocOp>(def);
      alloc && getStorage(alloc.getType()) == Storage::Shared)
    return llvm::any_of(alloc.getDynamicSizes(), [&](Value v) {
      return dependsOnGroupIndex(v, kernel, depth + 1);
    });
  if (def->getNumRegions() || !isMemoryEffectFree(def))
    return true;
  return llvm::any_of(def->getOperands(), [&](Value v) {
    return dependsOnGroupIndex(v, kernel, depth + 1);
  });
}

bool mlir::croq::isGroupInvariantCopy(Operation *op, Operation *kernel) {
  auto copy = cast<CopyOpInterface>(op);
  for (Value side : {copy.getSource(), copy.getTarget()}) {
    // A local buffer is each thread's own: its copy is per thread.
    if (getStorage(cast<MemRefType>(side.getType())) == Storage::Local ||
        dependsOnGroupIndex(side, kernel, 0))
      return false;
  }
  for (Operation *p = copy->getParentOp(); p && p != kernel;
       p = p->getParentOp()) {
    if (auto parallel = dyn_cast<ParallelOp>(p)) {
      if (parallel.getLevel() == Level::Thread)
        return false;
      continue;
    }
    if (auto loop = dyn_cast<scf::ForOp>(p)) {
      if (llvm::any_of(ValueRange{loop.getLowerBound(), loop.getUpperBound(),
                                  loop.getStep()},
                       [&](Value v) { return dependsOnGroupIndex(v, kernel, 0); }))
        return false;
      continue;
    }
    if (auto branch = dyn_cast<scf::IfOp>(p)) {
      if (dependsOnGroupIndex(branch.getCondition(), kernel, 0))
        return false;
      continue;
    }
    // croq.inthreads, while loops and anything else: not proven uniform.
    return false;
  }
  return true;
}

int64_t mlir::croq::blocksPerSM(Operation *op) {
  for (Operation *parent = op->getParentOp(); parent;
       parent = parent->getParentOp()) {
    if (auto parallel = dyn_cast<ParallelOp>(parent);
        parallel && parallel.getLevel() == Level::Block)
      return static_cast<int64_t>(parallel.getMinBlocks().value_or(1));
    // Lowered, the block parallel is a gpu.launch whose body starts with
    // its launch_hints.
    if (auto launch = dyn_cast<gpu::LaunchOp>(parent)) {
      for (auto hints : launch.getBody().front().getOps<LaunchHintsOp>())
        return static_cast<int64_t>(hints.getMinBlocks().value_or(1));
      return 1;
    }
  }
  return 1;
}

/// The values thread coordinate `coordinate` (an index of a parallel
/// level, of constant extent) takes where `op` runs: its extent, narrowed
/// by the conjuncts of the conditions around `op` that compare it with a
/// constant (`if (t < 128)`, the then side only; `inthreads (g == 1)`).
std::optional<std::pair<int64_t, int64_t>>
mlir::croq::coordinateRange(Operation *op, Value coordinate) {
  auto arg = dyn_cast<BlockArgument>(coordinate);
  auto level = arg ? dyn_cast<ParallelOp>(arg.getOwner()->getParentOp())
                   : ParallelOp();
  if (!level)
    return std::nullopt;
  std::optional<int64_t> extent =
      getConstantIntValue(level.getBounds()[arg.getArgNumber()]);
  if (!extent || *extent <= 0)
    return std::nullopt;
  int64_t lo = 0, hi = *extent - 1;
  auto narrow = [&](Value condition) {
    for (Value v : conjunctsOf(condition)) {
      auto test = v.getDefiningOp<arith::CmpIOp>();
      if (!test)
        continue;
      arith::CmpIPredicate pred = test.getPredicate();
      Value x = test.getLhs(), y = test.getRhs();
      if (y == coordinate) {
        std::swap(x, y);
        pred = mirroredPredicate(pred);
      }
      std::optional<int64_t> c = getConstantIntValue(y);
      if (x != coordinate || !c)
        continue;
      switch (pred) {
      case arith::CmpIPredicate::eq:
        lo = std::max(lo, *c);
        hi = std::min(hi, *c);
        break;
      case arith::CmpIPredicate::slt:
      case arith::CmpIPredicate::ult:
        hi = std::min(hi, *c - 1);
        break;
      case arith::CmpIPredicate::sle:
      case arith::CmpIPredicate::ule:
        hi = std::min(hi, *c);
        break;
      case arith::CmpIPredicate::sgt:
      case arith::CmpIPredicate::ugt:
        lo = std::max(lo, *c + 1);
        break;
      case arith::CmpIPredicate::sge:
      case arith::CmpIPredicate::uge:
        lo = std::max(lo, *c);
        break;
      default:
        break;
      }
    }
  };
  for (Operation *child = op, *p = op->getParentOp();
       p && p != level.getOperation(); child = p, p = p->getParentOp()) {
    if (auto ifOp = dyn_cast<scf::IfOp>(p);
        ifOp && child->getParentRegion() == &ifOp.getThenRegion())
      narrow(ifOp.getCondition());
  }
  for (auto region = op->getParentOfType<InThreadsOp>(); region;
       region = region->getParentOfType<InThreadsOp>())
    narrow(region.getPredicate());
  if (lo > hi)
    return std::nullopt;
  return std::pair{lo, hi};
}

arith::CmpIPredicate
mlir::croq::mirroredPredicate(arith::CmpIPredicate predicate) {
  using P = arith::CmpIPredicate;
  switch (predicate) {
  case P::slt: return P::sgt;
  case P::sle: return P::sge;
  case P::sgt: return P::slt;
  case P::sge: return P::sle;
  case P::ult: return P::ugt;
  case P::ule: return P::uge;
  case P::ugt: return P::ult;
  case P::uge: return P::ule;
  default: return predicate;
  }
}
