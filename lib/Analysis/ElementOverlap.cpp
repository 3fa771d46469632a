//===- ElementOverlap.cpp - elements two threads' accesses share ----------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#include "Croq/Analysis/ElementOverlap.h"
#include "Croq/Analysis/Evaluate.h"
#include "Croq/Analysis/Roles.h"
#include "Croq/Dialect/Croq/IR/CroqOps.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/MathExtras.h"

#include <array>

using namespace mlir;
using namespace mlir::croq;

namespace {

/// A loop the enumeration steps through: an scf.for (its counter), or an
/// scf.while whose carried values it computes from their initial values
/// (a tree reduction's `while (h > 0) { ...; h = h >> 1; }`).
using Loop = Operation *;

/// The values that drive a loop's steps, compiled: an scf.for's lower and
/// upper bound and step; an scf.while's initial values, its condition,
/// the values the condition forwards to the body and those the body
/// yields.
using LoopPlan = SmallVector<unsigned, 4>;

/// The values a loop's steps evaluate: see LoopPlan.
SmallVector<Value> loopDrivers(Loop loop) {
  if (auto forOp = dyn_cast<scf::ForOp>(loop))
    return {forOp.getLowerBound(), forOp.getUpperBound(), forOp.getStep()};
  auto whileOp = cast<scf::WhileOp>(loop);
  SmallVector<Value> values(whileOp.getInits());
  scf::ConditionOp condition = whileOp.getConditionOp();
  values.push_back(condition.getCondition());
  llvm::append_range(values, condition.getArgs());
  llvm::append_range(values, whileOp.getYieldOp().getOperands());
  return values;
}

/// The values the enumeration sets for a loop's steps.
SmallVector<Value> loopInputs(Loop loop) {
  if (auto forOp = dyn_cast<scf::ForOp>(loop))
    return {forOp.getInductionVar()};
  auto whileOp = cast<scf::WhileOp>(loop);
  SmallVector<Value> values(whileOp.getBeforeArguments());
  llvm::append_range(values, whileOp.getAfterArguments());
  return values;
}

/// What one access does, gathered once: the loops between it and the
/// thread parallel (outermost first), and the conditions around it up to
/// the kernel with the value each must have for the access to run.
struct Side {
  const ElementAccess *access;
  SmallVector<Loop> loops;
  SmallVector<std::pair<Value, bool>> conditions;
  /// The same, compiled: each loop's bounds, each condition, each index.
  SmallVector<LoopPlan> loopBounds;
  SmallVector<std::pair<unsigned, bool>> tests;
  SmallVector<unsigned> indices;
};

class Enumeration {
public:
  Enumeration(ParallelOp threads, int64_t &budget)
      : threads(threads), budget(budget) {}

  bool run(const ElementAccess &a, const ElementAccess &b, bool sameIteration) {
    ParallelOp kernel = blockParallelOf(threads);
    std::optional<SmallVector<std::pair<Value, int64_t>>> coords =
        threadCoordinates(threads);
    if (!coords)
      return false;
    coordinates = std::move(*coords);
    auto type = dyn_cast<MemRefType>(a.memref.getType());
    if (!kernel || !type || a.indices.size() != b.indices.size() ||
        a.indices.size() != static_cast<size_t>(type.getRank()) ||
        !isStableDistinctView(a.memref, threads,
                              sameIteration ? nullptr : kernel) ||
        !isStableDistinctView(b.memref, threads,
                              sameIteration ? nullptr : kernel))
      return false;
    shape = type.getShape();
    Side sa, sb;
    sa.access = &a;
    sb.access = &b;
    if (!gather(sa, kernel) || !gather(sb, kernel))
      return false;
    // First, so that a loop inside an independent one can be common.
    dropIndependentLoops({&sa, &sb});
    // Loops of the thread body around both accesses, with the same bounds
    // in every thread: in one iteration (sameIteration), both accesses are
    // in one step of them, which the threads reach together (a barrier can
    // go at their back edges, where the pairs across steps are compared).
    // Their steps are enumerated once for both sides, as the loops around
    // the thread parallel are.
    if (sameIteration) {
      size_t n = 0;
      while (n < sa.loops.size() && n < sb.loops.size() &&
             sa.loops[n] == sb.loops[n] && uniformBounds(sa.loops[n]))
        ++n;
      commonLoops.assign(sa.loops.begin(), sa.loops.begin() + n);
      sa.loops.erase(sa.loops.begin(), sa.loops.begin() + n);
      sb.loops.erase(sb.loops.begin(), sb.loops.begin() + n);
    }
    gatherOuterLoops({&sa, &sb}, kernel);
    compile({&sa, &sb});
    if (sameIteration)
      return forEachOuter(0, [&] {
        owners.clear();
        return visitSide(sa, /*fill=*/true) && visitSide(sb, /*fill=*/false);
      });
    return forEachOuter(0, [&] { return visitSide(sa, /*fill=*/true); }) &&
           forEachOuter(0, [&] { return visitSide(sb, /*fill=*/false); });
  }

private:
  /// Drops the loops of the thread body that nothing the enumeration
  /// evaluates depends on (neither an index, a condition nor another
  /// loop's bounds reads its counter or carried values: a persistent
  /// kernel's tile loop of run-time trip count around a tree reduction).
  /// Every step of one touches the elements any other does, so the steps
  /// need not be enumerated, nor its bounds known.
  void dropIndependentLoops(ArrayRef<Side *> sides) {
    for (bool changed = true; changed;) {
      changed = false;
      llvm::SmallPtrSet<Operation *, 8> used;
      auto mark = [&](Value v) {
        allSources(v, [&](BlockArgument arg) {
          used.insert(arg.getOwner()->getParentOp());
          return true;
        });
      };
      for (Side *side : sides) {
        for (Value index : side->access->indices)
          mark(index);
        for (auto [condition, expected] : side->conditions)
          mark(condition);
        for (Loop loop : side->loops)
          for (Value driver : loopDrivers(loop))
            mark(driver);
      }
      for (Loop loop : commonLoops)
        for (Value driver : loopDrivers(loop))
          mark(driver);
      auto drop = [&](SmallVector<Loop> &loops) {
        size_t before = loops.size();
        llvm::erase_if(loops, [&](Loop loop) { return !used.contains(loop); });
        changed |= loops.size() != before;
      };
      for (Side *side : sides)
        drop(side->loops);
      drop(commonLoops);
    }
  }

  /// Whether `loop`'s steps are the same in every thread: an scf.for's
  /// bounds are constants or values computed outside the thread body; an
  /// scf.while's initial values are, and its condition and updates are
  /// computed from its own carried values and such values alone.
  bool uniformBounds(Loop loop) {
    auto uniform = [&](Value v) {
      return matchPattern(v, m_Constant()) ||
             !threads->isAncestor(v.getParentBlock()->getParentOp());
    };
    if (auto forOp = dyn_cast<scf::ForOp>(loop))
      return llvm::all_of(ValueRange{forOp.getLowerBound(),
                                     forOp.getUpperBound(), forOp.getStep()},
                          uniform);
    auto whileOp = cast<scf::WhileOp>(loop);
    if (!llvm::all_of(whileOp.getInits(), uniform))
      return false;
    SmallVector<Value> drivers = loopDrivers(loop);
    return llvm::all_of(
        ArrayRef(drivers).drop_front(whileOp.getInits().size()),
        [&](Value v) {
          return allSources(v, [&](BlockArgument arg) {
            Operation *owner = arg.getOwner()->getParentOp();
            return owner == loop || !threads->isAncestor(owner);
          });
        });
  }

  /// The loops and conditions around one access. Between the access and
  /// the thread parallel, only loops, branches, inthreads regions and the
  /// warp_specialize around roles are understood.
  bool gather(Side &side, ParallelOp kernel) {
    Operation *op = side.access->op;
    for (Operation *child = op, *p = op->getParentOp();
         p && p != kernel.getOperation(); child = p, p = p->getParentOp()) {
      bool inside = threads->isProperAncestor(p);
      if (auto loop = dyn_cast<scf::ForOp>(p)) {
        if (inside)
          side.loops.insert(side.loops.begin(), loop);
        continue;
      }
      // In a while loop's body (not its condition region): each step's
      // carried values are evaluated from the ones before.
      if (auto loop = dyn_cast<scf::WhileOp>(p);
          loop && inside && child->getParentRegion() == &loop.getAfter()) {
        side.loops.insert(side.loops.begin(), loop);
        continue;
      }
      if (auto branch = dyn_cast<scf::IfOp>(p)) {
        side.conditions.push_back(
            {branch.getCondition(),
             child->getParentRegion() == &branch.getThenRegion()});
        continue;
      }
      if (auto region = dyn_cast<InThreadsOp>(p)) {
        side.conditions.push_back({region.getPredicate(), true});
        continue;
      }
      // The roles' register budgets (croq-warp-specialize): every thread
      // runs its body.
      if (isa<WarpSpecializeOp>(p))
        continue;
      if (inside)
        return false;
    }
    return true;
  }

  /// The loops around the thread parallel whose counters the accesses'
  /// indices, inner loop bounds or conditions depend on (or their bounds
  /// do), outermost first. Other block arguments stay unbound: an index
  /// that depends on one has no value, a condition is taken to hold.
  void gatherOuterLoops(ArrayRef<Side *> sides, ParallelOp kernel) {
    llvm::SetVector<Value> roots;
    auto addRoots = [&](Value v) {
      allSources(v, [&](BlockArgument arg) {
        roots.insert(arg);
        return true;
      });
    };
    for (Loop loop : commonLoops)
      for (Value bound : loopDrivers(loop))
        addRoots(bound);
    for (Side *side : sides) {
      for (Value index : side->access->indices)
        addRoots(index);
      for (Loop loop : side->loops)
        for (Value bound : loopDrivers(loop))
          addRoots(bound);
      for (auto [condition, expected] : side->conditions)
        addRoots(condition);
    }
    SmallVector<scf::ForOp> around;
    for (Operation *p = threads->getParentOp(); p && p != kernel.getOperation();
         p = p->getParentOp())
      if (auto loop = dyn_cast<scf::ForOp>(p))
        around.insert(around.begin(), loop);
    // Inner loops' bounds first: an outer counter they use is bound too.
    // Then each needed outer loop's own bounds, innermost first, so that
    // the closure is complete in one sweep.
    for (scf::ForOp loop : llvm::reverse(around))
      if (roots.contains(loop.getInductionVar())) {
        for (Value bound :
             {loop.getLowerBound(), loop.getUpperBound(), loop.getStep()})
          addRoots(bound);
      }
    for (scf::ForOp loop : around)
      if (roots.contains(loop.getInductionVar()))
        outerLoops.push_back(loop.getOperation());
    // The common loops of the thread body, inside those.
    llvm::append_range(outerLoops, commonLoops);
  }

  /// Compiles every value the enumeration evaluates, after declaring the
  /// values it binds.
  void compile(ArrayRef<Side *> sides) {
    for (auto [coordinate, extent] : coordinates)
      program.addInput(coordinate);
    for (Loop loop : outerLoops)
      for (Value input : loopInputs(loop))
        program.addInput(input);
    for (Side *side : sides)
      for (Loop loop : side->loops)
        for (Value input : loopInputs(loop))
          program.addInput(input);
    auto bounds = [&](Loop loop) {
      LoopPlan plan;
      for (Value v : loopDrivers(loop))
        plan.push_back(program.compile(v));
      return plan;
    };
    for (Loop loop : outerLoops)
      outerBounds.push_back(bounds(loop));
    for (Side *side : sides) {
      for (Loop loop : side->loops)
        side->loopBounds.push_back(bounds(loop));
      for (auto [condition, expected] : side->conditions)
        side->tests.push_back({program.compile(condition), expected});
      for (Value index : side->access->indices)
        side->indices.push_back(program.compile(index));
    }
  }

  /// Calls `body` for every iteration of the outer loops from `i` on;
  /// false as soon as a bound has no value or `body` returns false.
  bool forEachOuter(size_t i, function_ref<bool()> body) {
    if (i == outerLoops.size())
      return body();
    return forEachIteration(outerLoops[i], outerBounds[i],
                            [&] { return forEachOuter(i + 1, body); });
  }

  /// Sets `loop`'s counter (or carried values) to each step's in turn.
  bool forEachIteration(Loop op, const LoopPlan &bounds,
                        function_ref<bool()> body) {
    if (auto whileOp = dyn_cast<scf::WhileOp>(op))
      return forEachStep(whileOp, bounds, body);
    auto loop = cast<scf::ForOp>(op);
    std::optional<int64_t> lb = program.evaluate(bounds[0]);
    std::optional<int64_t> ub = program.evaluate(bounds[1]);
    std::optional<int64_t> step = program.evaluate(bounds[2]);
    if (!lb || !ub || !step || *step <= 0 || loop.getUnsignedCmp())
      return false;
    Value counter = loop.getInductionVar();
    for (int64_t v = *lb; v < *ub; v += *step) {
      if (--budget < 0)
        return false;
      program.set(counter, v);
      if (!body())
        return false;
    }
    return true;
  }

  /// An scf.while's steps: its carried values from their initial values,
  /// the condition evaluated before each step and the body's updates after
  /// it, until the condition fails (or the budget runs out).
  bool forEachStep(scf::WhileOp loop, const LoopPlan &plan,
                   function_ref<bool()> body) {
    size_t n = loop.getInits().size();
    size_t forwarded = loop.getAfterArguments().size();
    SmallVector<int64_t> carried;
    for (size_t i = 0; i < n; ++i) {
      std::optional<int64_t> v = program.evaluate(plan[i]);
      if (!v)
        return false;
      carried.push_back(*v);
    }
    while (true) {
      if (--budget < 0)
        return false;
      for (auto [arg, v] : llvm::zip(loop.getBeforeArguments(), carried))
        program.set(arg, v);
      std::optional<int64_t> go = program.evaluate(plan[n]);
      if (!go)
        return false;
      if (!*go)
        return true;
      for (size_t i = 0; i < forwarded; ++i) {
        std::optional<int64_t> v = program.evaluate(plan[n + 1 + i]);
        if (!v)
          return false;
        program.set(loop.getAfterArguments()[i], *v);
      }
      if (!body())
        return false;
      for (size_t i = 0; i < n; ++i) {
        std::optional<int64_t> v = program.evaluate(plan[n + 1 + forwarded + i]);
        if (!v)
          return false;
        carried[i] = *v;
      }
    }
  }

  /// Every thread's elements for `side`: recorded with their thread when
  /// `fill`, else checked against those recorded. False on an element of
  /// two threads, or when something has no value.
  bool visitSide(const Side &side, bool fill) {
    int64_t count = 1;
    for (auto [index, extent] : coordinates)
      if (llvm::MulOverflow(count, extent, count))
        return false;
    for (int64_t thread = 0; thread < count; ++thread) {
      if (--budget < 0)
        return false;
      int64_t rest = thread;
      for (auto [index, extent] : llvm::reverse(coordinates)) {
        program.set(index, rest % extent);
        rest /= extent;
      }
      if (!visitInner(side, 0, thread, fill))
        return false;
    }
    return true;
  }

  bool visitInner(const Side &side, size_t depth, int64_t thread, bool fill) {
    if (depth < side.loops.size()) {
      return forEachIteration(side.loops[depth], side.loopBounds[depth], [&] {
        return visitInner(side, depth + 1, thread, fill);
      });
    }
    for (auto [test, expected] : side.tests) {
      std::optional<int64_t> value = program.evaluate(test);
      if (value && (*value != 0) != expected)
        return true;
    }
    const ElementAccess &access = *side.access;
    int64_t key = 0;
    for (auto [d, index] : llvm::enumerate(side.indices)) {
      std::optional<int64_t> value = program.evaluate(index);
      if (!value)
        return false;
      bool last = d + 1 == side.indices.size();
      int64_t extent = shape[d];
      // One key per element: a linear index within static extents (a 1-D
      // buffer's index is its own key).
      if (shape.size() > 1) {
        if (ShapedType::isDynamic(extent) || *value < 0 ||
            *value + (last ? access.width : 1) > extent)
          return false;
        key = key * extent + *value;
      } else {
        key = *value;
      }
    }
    // DenseMap keeps the two largest keys for itself.
    if (key < 0 || key > (int64_t(1) << 62))
      return false;
    for (int64_t i = 0; i < access.width; ++i) {
      if (fill) {
        auto [it, inserted] = owners.try_emplace(key + i, thread);
        if (!inserted && it->second != thread)
          it->second = kSeveral;
        continue;
      }
      auto it = owners.find(key + i);
      if (it != owners.end() && it->second != thread)
        return false;
    }
    return true;
  }

  static constexpr int64_t kSeveral = -1;

  ParallelOp threads;
  int64_t &budget;
  SmallVector<std::pair<Value, int64_t>> coordinates;
  SmallVector<Loop> outerLoops;
  /// With sameIteration: the loops of the thread body around both accesses
  /// with the same bounds in every thread, outermost first.
  SmallVector<Loop> commonLoops;
  SmallVector<LoopPlan> outerBounds;
  ArrayRef<int64_t> shape;
  IndexProgram program;
  /// Element key -> the one thread that touched it, or kSeveral.
  DenseMap<int64_t, int64_t> owners;
};

} // namespace

std::optional<SmallVector<std::pair<Value, int64_t>>>
mlir::croq::threadCoordinates(ParallelOp threads) {
  SmallVector<std::pair<Value, int64_t>> coordinates;
  SmallVector<ParallelOp> levels;
  for (ParallelOp level = threads; level && level.getLevel() != Level::Block;
       level = level.getParentParallel())
    levels.push_back(level);
  for (ParallelOp level : llvm::reverse(levels))
    for (auto [index, bound] :
         llvm::zip_equal(level.getIndices(), level.getBounds())) {
      std::optional<int64_t> extent = getConstantIntValue(bound);
      if (!extent || *extent <= 0)
        return std::nullopt;
      coordinates.push_back({index, *extent});
    }
  return coordinates;
}

bool mlir::croq::isStableDistinctView(Value view, ParallelOp threads,
                                      Operation *varying) {
  ParallelOp kernel = blockParallelOf(threads);
  if (!kernel)
    return false;
  auto isStable = [&](Value v) {
    return allSources(v, [&](BlockArgument arg) {
      Operation *owner = arg.getOwner()->getParentOp();
      // Outside the kernel, or an index of its blocks: one value per block.
      if (owner == kernel.getOperation() || !kernel->isProperAncestor(owner))
        return true;
      // A warp, warpgroup or thread coordinate, or anything inside the
      // thread body, differs between threads.
      if (isa<ParallelOp>(owner) || threads->isAncestor(owner))
        return false;
      // A loop around the thread parallel: one value in one step, unless
      // the two accesses may be in different steps of it.
      return !varying || !varying->isAncestor(owner);
    });
  };
  // A view may also pick, by a value that varies, one of several disjoint
  // parts of a stable one: a chunkat tile, or a slice of extent 1 of a
  // subview (`ring[k % 2]` of `shared f32 [32, 32] ring[2]`) whose stride
  // spans the rest. Two threads' views are then the same part or disjoint
  // parts, and distinct indices into one part are distinct elements.
  for (Value v = view;;) {
    if (auto tile = v.getDefiningOp<ChunkAtOp>()) {
      if (!llvm::all_of(tile.getBounds(), isStable))
        return false;
      v = tile.getSource();
      continue;
    }
    auto slice = v.getDefiningOp<memref::SubViewOp>();
    if (!slice) {
      if (!isStable(v))
        return false;
      break;
    }
    auto source = cast<MemRefType>(slice.getSource().getType());
    SmallVector<int64_t> strides;
    int64_t offset;
    if (!llvm::all_of(slice.getSizes(), isStable) ||
        !llvm::all_of(slice.getStrides(), isStable))
      return false;
    ArrayRef<int64_t> sizes = slice.getStaticSizes();
    for (auto [d, offsetValue] : llvm::enumerate(slice.getMixedOffsets())) {
      auto dynamic = dyn_cast<Value>(offsetValue);
      if (!dynamic || isStable(dynamic))
        continue;
      if (sizes[d] != 1 || failed(source.getStridesAndOffset(strides, offset)))
        return false;
      int64_t span = 0;
      for (auto [e, size] : llvm::enumerate(sizes)) {
        if (e == d || size == 1)
          continue;
        if (ShapedType::isDynamic(size) || ShapedType::isDynamic(strides[e]))
          return false;
        span += strides[e] * (size - 1);
      }
      if (ShapedType::isDynamic(strides[d]) || strides[d] <= span)
        return false;
    }
    v = slice.getSource();
  }
  auto type = cast<MemRefType>(view.getType());
  if (type.getLayout().isIdentity())
    return true;
  if (!type.isStrided())
    return false;
  SmallVector<int64_t> strides = type.getStridesAndOffset().first;
  // Static strides, each above the span of the smaller ones (dynamic ones
  // are the strides of a tensor, which croq's views keep apart); a
  // run-time extent only along the largest stride.
  SmallVector<std::pair<int64_t, int64_t>> dims;
  for (auto [stride, extent] : llvm::zip_equal(strides, type.getShape())) {
    if (extent == 1 || ShapedType::isDynamic(stride))
      continue;
    if (stride <= 0)
      return false;
    dims.push_back({stride, extent});
  }
  llvm::sort(dims);
  int64_t span = 0;
  for (auto [i, dim] : llvm::enumerate(dims)) {
    auto [stride, extent] = dim;
    if (stride <= span)
      return false;
    if (ShapedType::isDynamic(extent))
      return i + 1 == dims.size();
    span += stride * (extent - 1);
  }
  return true;
}

bool mlir::croq::threadsShareNoElement(const ElementAccess &a,
                                       const ElementAccess &b,
                                       ParallelOp threads, bool sameIteration,
                                       int64_t &budget) {
  if (budget <= 0)
    return false;
  return Enumeration(threads, budget).run(a, b, sameIteration);
}
