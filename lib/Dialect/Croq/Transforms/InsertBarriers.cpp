//===- InsertBarriers.cpp - barriers for shared-memory hazards ------------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//
//
// A memory hazard analysis in the manner of Triton's Membar: every pair of
// accesses to one shared (or global) buffer, at least one a write, by threads
// that may differ, gets a `croq.barrier` between them, and only such pairs
// do. The analysis walks each kernel in program order with the set of
// accesses made since the last barrier; loops are walked twice so that the
// accesses of one iteration meet the next one's, branches join, and the
// `inthreads.async` roles of one warpgroup parallel run side by side
// (cross-role order belongs to events, not barriers).
//
// A barrier goes before the later access, lifted to the region that holds
// both accesses; that point must be uniform over the barrier's threads (the
// block, or inside a role the warpgroup). When it is not, no barrier can
// order the pair and the pass fails at the later access.
//
// Accesses (writes W, reads R): dma.copy (R source, W target, at the issue
// for dma.copy.async), tma.copy (R source; its landing W is ordered by the
// mbarrier its waiters wait on, so it only has to follow earlier accesses),
// mma.load (R), mma (R shared operands), mma.store (W), and every other op
// with memory effects on shared memory (memref.load / store ...). An access
// by one thread of a thread-level parallel to its own elements (a load or
// store in the body, a copy whose view depends on the thread index) needs no
// barrier against another such access of the same parallel: Croqtile leaves
// order between a thread's element accesses to the program, with no
// implicit sync. Nor do two writes to global memory of one store
// statement (in different steps of a loop): if two threads wrote one
// element, the statement's own instances would race already.
// `croq.event.wait`, `croq.barrier` and a `croq.wait` on TMA stores (which
// ends in its group's barrier) order everything before them.
//
//===----------------------------------------------------------------------===//

#include "Croq/Analysis/Buffers.h"
#include "Croq/Analysis/DivergenceAnalysis.h"
#include "Croq/Analysis/ElementOverlap.h"
#include "Croq/Analysis/Evaluate.h"
#include "Croq/Analysis/Roles.h"
#include "Croq/Dialect/Croq/IR/CroqOps.h"
#include "Croq/Dialect/Croq/IR/CroqTypes.h"
#include "Croq/Dialect/Croq/Transforms/Passes.h"

#include "mlir/Analysis/DataFlowFramework.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "llvm/ADT/MapVector.h"

#include <functional>
#include <numeric>

namespace mlir::croq {
#define GEN_PASS_DEF_CROQINSERTBARRIERSPASS
#include "Croq/Dialect/Croq/Transforms/Passes.h.inc"
} // namespace mlir::croq

using namespace mlir;
using namespace mlir::croq;

namespace {

struct Access {
  Operation *op;
  Buffers buffers;
  bool write;
  /// The thread-level parallel whose thread makes this access to its own
  /// elements; null for a cooperative access.
  Operation *perThread;
  /// For an element access (memref.load / store, vector.load / store): its
  /// indices. Two element accesses of one thread-level body are the same
  /// thread's only with the same indices, which depend on a thread index.
  SmallVector<Value> indices = {};
  bool isElement = false;
  /// The memref an element access indexes, and the elements it covers
  /// along the last dimension (a vector's width).
  Value memref = {};
  int64_t width = 1;
  /// An atomic read-modify-write: atomics of any threads never need a
  /// barrier between them, only against plain accesses.
  bool atomic = false;
  /// A device function's access (croq.call): any element of the buffer,
  /// by whichever thread calls it.
  bool opaque = false;
  /// Made in an earlier iteration of a loop around the access it is
  /// compared with (pending across the loop's back edge): a value computed
  /// in that loop may differ between the two. `carriedBy` is the outermost
  /// such loop.
  bool carried = false;
  Operation *carriedBy = nullptr;
  /// Not an access: the mark of a trigger of this event (`op`), where it
  /// stands among the accesses. A wait on the event orders the accesses
  /// before the mark (its generation completes with the triggers), not
  /// those after it.
  Value triggered = {};
};

using State = SmallVector<Access>;

/// Forgets the accesses a barrier orders; the triggers' marks stay.
static void clearAccesses(State &state) {
  llvm::erase_if(state, [](const Access &a) { return !a.triggered; });
}

/// Appends to `into` the accesses of `from` it does not hold yet. Joining
/// the states of branches and loop iterations that start from one state
/// must not copy what they share: each join would double it, and a chain of
/// ifs (unrolled code) would grow the state exponentially.
static void join(State &into, const State &from) {
  auto same = [](const Access &a, const Access &b) {
    return a.op == b.op && a.write == b.write && a.memref == b.memref &&
           a.perThread == b.perThread;
  };
  size_t existing = into.size();
  for (const Access &access : from)
    if (llvm::none_of(ArrayRef(into).take_front(existing),
                      [&](const Access &a) { return same(a, access); }))
      into.push_back(access);
}

/// Shared memory, and global memory: a barrier also orders a block's
/// global accesses (code between levels that one thread runs, read by the
/// thread level after it). Local memory is the thread's own, and so is an
/// alloca (such as croq-assign-phases' phase bits).
static bool isTracked(Value v) {
  auto type = dyn_cast<MemRefType>(v.getType());
  if (!type || v.getDefiningOp<memref::AllocaOp>())
    return false;
  std::optional<Storage> storage = getStorage(type);
  return storage && *storage != Storage::Local;
}

/// The innermost enclosing croq.parallel when it is thread level.
static ParallelOp threadParallel(Operation *op) {
  auto parallel = op->getParentOfType<ParallelOp>();
  return parallel && parallel.getLevel() == Level::Thread ? parallel
                                                          : ParallelOp();
}

/// Whether the thread-level `op` accesses elements of its own thread.
static bool isPerThread(Operation *op) {
  if (!threadParallel(op))
    return false;
  // As convert-croq-to-gpu executes it.
  if (auto copy = dyn_cast<DmaCopyOp>(op))
    return isPerThreadCopy(copy);
  // Element accesses of a thread-level body are the thread's own.
  return !isa<MmaLoadOp, MmaStoreOp, MmaOp, TmaCopyOp>(op);
}

class Planner {
public:
  Planner(DataFlowSolver &solver) : solver(solver) {}

  LogicalResult run(ParallelOp kernel) {
    State state;
    walkBlock(kernel.getBody().front(), state);
    if (failed(status))
      return failure();
    for (auto [anchor, level] : anchors) {
      OpBuilder b(anchor);
      BarrierOp::create(b, anchor->getLoc(), level);
    }
    return success();
  }

private:
  void walkBlock(Block &block, State &state) {
    std::optional<State> rolesEntry;
    State rolesOut;
    for (Operation &op : block.without_terminator()) {
      auto role = dyn_cast<InThreadsOp>(&op);
      if (role && role.getAsync()) {
        // Roles of one parallel run side by side: each starts from the
        // state before the first of them.
        if (!rolesEntry) {
          rolesEntry = state;
          rolesOut = state;
        }
        State inner = *rolesEntry;
        walkBlock(role.getBody().front(), inner);
        join(rolesOut, inner);
        state = rolesOut;
        continue;
      }
      rolesEntry.reset();
      walkOp(&op, state);
    }
  }

  void walkOp(Operation *op, State &state) {
    // A wait orders other threads' accesses before it, unless it is on a
    // local event (a thread's own count): those the other threads made
    // before their triggers. Where these threads trigger the event
    // themselves, what they access after their trigger (and so, in step,
    // what the others do) is not ordered by the wait: a warpgroup's copy
    // between `f = tma.copy.async ...` and `wait f` may still be writing
    // when the other warpgroup's wait returns.
    auto wait = dyn_cast<EventWaitOp>(op);
    if (wait && !wait.getEvent().getType().isThreadLocal()) {
      Value event = wait.getEvent();
      auto mark = llvm::find_if(
          state, [&](const Access &a) { return a.triggered == event; });
      if (mark == state.end()) {
        llvm::erase_if(state, [&](const Access &a) {
          return !a.triggered && waitOrders(event, a);
        });
        return;
      }
      size_t at = mark - state.begin();
      State after;
      for (auto [i, access] : llvm::enumerate(state))
        if (access.triggered || i > at)
          after.push_back(access);
      state = std::move(after);
      return;
    }
    // A wait on TMA stores (croq-bind-tma-futures marks it) ends in a
    // barrier of its group.
    if (isa<BarrierOp, GridBarrierOp, ClusterBarrierOp>(op) ||
        (isa<WaitOp>(op) && op->hasAttr(kTmaStoreWaitAttr))) {
      clearAccesses(state);
      return;
    }
    if (auto trigger = dyn_cast<EventTriggerOp>(op);
        trigger && !trigger.getEvent().getType().isThreadLocal()) {
      Value event = trigger.getEvent();
      llvm::erase_if(state,
                     [&](const Access &a) { return a.triggered == event; });
      Access mark{op, Buffers{}, /*write=*/false, /*perThread=*/nullptr};
      mark.triggered = event;
      state.push_back(mark);
    }
    if (isa<scf::ForOp, scf::WhileOp>(op)) {
      // Twice around: the second walk sees the first one's accesses
      // arriving over the back edge.
      State entry = state;
      State once = state;
      for (Region &r : op->getRegions())
        walkBlock(r.front(), once);
      State again = entry;
      size_t fresh = again.size();
      join(again, once);
      for (size_t i = fresh; i < again.size(); ++i) {
        again[i].carried = true;
        again[i].carriedBy = op;
      }
      for (Region &r : op->getRegions())
        walkBlock(r.front(), again);
      state = entry;
      join(state, again);
      return;
    }
    if (op->getNumRegions() > 1 || isa<scf::IfOp>(op)) {
      // Branches: each from the same state; the join of all (and of the
      // state itself when a branch may be skipped).
      State joined = state;
      for (Region &r : op->getRegions()) {
        if (r.empty())
          continue;
        State branch = state;
        walkBlock(r.front(), branch);
        join(joined, branch);
      }
      state = joined;
      return;
    }
    if (op->getNumRegions() == 1 && !isa<memref::GenericAtomicRMWOp>(op)) {
      if (!op->getRegion(0).empty())
        walkBlock(op->getRegion(0).front(), state);
      return;
    }
    SmallVector<Access> accesses = accessesOf(op);
    for (const Access &access : accesses)
      check(access, state);
    // A TMA load's tile is visible to the threads that wait for it: a
    // synchronous copy's whole group, or an event's waiters. A synchronous
    // copy in an inthreads region is waited by the region's threads only,
    // so the others need a barrier before they read the tile.
    auto tma = dyn_cast<TmaCopyOp>(op);
    bool waitedByAll = tma && (tma.getAsync() || tma.getEvent() ||
                               !tma->getParentOfType<InThreadsOp>());
    for (Access &access : accesses)
      if (!waitedByAll || !access.write)
        state.push_back(access);
  }

  SmallVector<Access> accessesOf(Operation *op) {
    SmallVector<Access> result;
    Operation *own = isPerThread(op) ? threadParallel(op).getOperation()
                                     : nullptr;
    auto add = [&](Value v, bool write) {
      if (!isTracked(v))
        return;
      result.push_back({op, buffersOf(v), write, own});
      ValueRange indices;
      int64_t width = 1;
      if (auto load = dyn_cast<memref::LoadOp>(op))
        indices = load.getIndices();
      else if (auto store = dyn_cast<memref::StoreOp>(op))
        indices = store.getIndices();
      // An n-D vector covers more than one row: a whole-buffer access.
      else if (auto load = dyn_cast<vector::LoadOp>(op);
               load && load.getVectorType().getRank() == 1) {
        indices = load.getIndices();
        width = load.getVectorType().getNumElements();
      } else if (auto store = dyn_cast<vector::StoreOp>(op);
                 store && store.getVectorType().getRank() == 1) {
        indices = store.getIndices();
        width = store.getVectorType().getNumElements();
      } else if (auto rmw = dyn_cast<memref::AtomicRMWOp>(op)) {
        indices = rmw.getIndices();
        result.back().atomic = true;
      } else if (auto rmw = dyn_cast<memref::GenericAtomicRMWOp>(op)) {
        indices = rmw.getIndices();
        result.back().atomic = true;
      } else {
        return;
      }
      result.back().isElement = true;
      result.back().indices.assign(indices.begin(), indices.end());
      result.back().memref = v;
      result.back().width = width;
    };
    if (auto copy = dyn_cast<DmaCopyOp>(op)) {
      add(copy.getSource(), false);
      add(copy.getTarget(), true);
      return result;
    }
    if (auto copy = dyn_cast<TmaCopyOp>(op)) {
      add(copy.getSource(), false);
      add(copy.getTarget(), true);
      return result;
    }
    if (auto call = dyn_cast<CallOp>(op)) {
      // A C++ device function may read and write all of each buffer it is
      // given; given the address of one element (`&x.at(i, j)`, a subview
      // of one element at run-time offsets), it is taken to access that
      // element, as a load and a store there would.
      for (Value arg : call.getArgs()) {
        auto element = arg.getDefiningOp<memref::SubViewOp>();
        bool one = element && isTracked(arg) &&
                   llvm::all_of(element.getStaticSizes(),
                                [](int64_t n) { return n == 1; }) &&
                   llvm::all_of(element.getStaticOffsets(), [](int64_t o) {
                     return ShapedType::isDynamic(o);
                   });
        size_t first = result.size();
        add(arg, false);
        add(arg, true);
        for (size_t i = first; i < result.size(); ++i) {
          Access &access = result[i];
          access.opaque = !one;
          if (!one)
            continue;
          access.isElement = true;
          access.memref = element.getSource();
          access.indices.assign(element.getOffsets().begin(),
                                element.getOffsets().end());
        }
      }
      return result;
    }
    if (auto rmw = dyn_cast<memref::GenericAtomicRMWOp>(op)) {
      // Its region only computes the new value; it has no effects of its
      // own to ask for. It reads the element as it writes it (a
      // compare-and-swap must see the plain writes before it).
      add(rmw.getMemref(), false);
      add(rmw.getMemref(), true);
      return result;
    }
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (!effects)
      return result;
    SmallVector<MemoryEffects::EffectInstance> instances;
    effects.getEffects(instances);
    for (const MemoryEffects::EffectInstance &e : instances) {
      Value v = e.getValue();
      if (!v)
        continue;
      if (isa<MemoryEffects::Write>(e.getEffect()))
        add(v, true);
      else if (isa<MemoryEffects::Read>(e.getEffect()))
        add(v, false);
    }
    return result;
  }

  /// An index of the form `t * k + base + r (+ j * L)`: `t` an index of
  /// the thread parallel `threads`, `k` a nonzero constant, `base` the same
  /// in every thread (defined outside `threads`), `r` ranging over `span`
  /// consecutive values inside the thread (loop counters, constants), and
  /// optionally a loop counter `j` of any trip count times a constant `L`
  /// (`loopStride`, 0 when absent: `j * 128 + t` of a strided loop), or
  /// several such terms, which sum to a multiple of their constants' gcd
  /// (`bn * 256 + h * 128 + t`: L = 128). Two
  /// threads' slots are disjoint when span <= |k| and, with a loop term, L
  /// is at least the range of the rest, so that an element determines its
  /// j and t.
  struct Slot {
    Value thread;
    int64_t stride = 1;
    int64_t span = 1;
    int64_t offset = 0;
    int64_t loopStride = 0;
    SmallVector<Value> base;
  };

  /// The scf.for whose counter `value` is, or null.
  static scf::ForOp counterLoop(Value value) {
    auto arg = dyn_cast<BlockArgument>(value);
    auto loop = arg ? dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp())
                    : scf::ForOp();
    return loop && arg == loop.getInductionVar() ? loop : scf::ForOp();
  }

  /// [lb, ub) of a loop counter with constant bounds and step 1, which a
  /// slot's span covers; nullopt for any other value.
  static std::optional<std::pair<int64_t, int64_t>> counterRange(Value value) {
    scf::ForOp loop = counterLoop(value);
    if (!loop)
      return std::nullopt;
    std::optional<int64_t> lb = getConstantIntValue(loop.getLowerBound());
    std::optional<int64_t> ub = getConstantIntValue(loop.getUpperBound());
    std::optional<int64_t> step = getConstantIntValue(loop.getStep());
    if (!lb || !ub || !step || *step != 1 || *ub <= *lb)
      return std::nullopt;
    return std::pair{*lb, *ub};
  }

  /// `value` as `j * c` (or `j`) of a loop counter `j`: |c|, else nullopt.
  /// A term `g * L` of an index: `g` a loop counter, or any value the
  /// same in every thread at one point of the program (`(it % 3) * 64` in
  /// a loop), times a nonzero constant; L, or 1 for a bare counter.
  static std::optional<int64_t> loopTerm(Value value) {
    if (counterLoop(value))
      return 1;
    auto sameInEveryThread = [](Value x) {
      return !getConstantIntValue(x) &&
             allSources(x, [](BlockArgument arg) {
               auto level =
                   dyn_cast<ParallelOp>(arg.getOwner()->getParentOp());
               return !level || level.getLevel() == Level::Block;
             });
    };
    if (auto mul = value.getDefiningOp<arith::MulIOp>())
      for (auto [x, y] : {std::pair{mul.getLhs(), mul.getRhs()},
                          std::pair{mul.getRhs(), mul.getLhs()}})
        if (std::optional<int64_t> c = getConstantIntValue(y);
            c && *c != 0 && (counterLoop(x) || sameInEveryThread(x)))
          return std::abs(*c);
    return std::nullopt;
  }

  /// `value` is the same for every thread of the block and in every
  /// iteration the barrier analysis compares: it depends on no index of a
  /// parallel below the block level (`w * 32` of a warp differs between
  /// warps) and on no loop around `threads` (iteration i meets i + 1).
  static bool uniformOverBlock(Value value, ParallelOp threads) {
    return allSources(value, [&](BlockArgument arg) {
      Operation *owner = arg.getOwner()->getParentOp();
      if (auto parallel = dyn_cast<ParallelOp>(owner))
        return parallel.getLevel() == Level::Block;
      return !(isa<scf::ForOp, scf::WhileOp>(owner) &&
               owner->isProperAncestor(threads));
    });
  }

  /// `v` is the same in every thread of `threads`: defined outside it, or
  /// pure arithmetic of such values.
  static bool isOutside(Value v, ParallelOp threads, int level = 0) {
    Operation *def = v.getDefiningOp();
    Operation *owner =
        def ? def : cast<BlockArgument>(v).getOwner()->getParentOp();
    if (!threads->isAncestor(owner))
      return true;
    if (!def || level > 8 || def->getNumRegions() || !isPure(def))
      return false;
    return llvm::all_of(def->getOperands(), [&](Value o) {
      return isOutside(o, threads, level + 1);
    });
  }

  /// An index `base + x / divisor` or `base + x % divisor` (signed or
  /// unsigned, a positive constant divisor), `base` the same in every
  /// thread of the block (a constant 0 when absent).
  struct DivMod {
    Value base, x;
    int64_t divisor;
    bool remainder;
  };
  static std::optional<DivMod> divModOf(Value index, ParallelOp threads) {
    Value base;
    if (auto add = index.getDefiningOp<arith::AddIOp>()) {
      for (auto [x, y] : {std::pair{add.getLhs(), add.getRhs()},
                          std::pair{add.getRhs(), add.getLhs()}})
        if (isOutside(y, threads) && uniformOverBlock(y, threads)) {
          base = y;
          index = x;
          break;
        }
      if (!base)
        return std::nullopt;
    }
    Operation *def = index.getDefiningOp();
    if (!def || !isa<arith::DivSIOp, arith::DivUIOp, arith::RemSIOp,
                     arith::RemUIOp>(def))
      return std::nullopt;
    std::optional<int64_t> c = getConstantIntValue(def->getOperand(1));
    if (!c || *c <= 0)
      return std::nullopt;
    DivMod result;
    result.base = base;
    result.x = def->getOperand(0);
    result.divisor = *c;
    result.remainder = isa<arith::RemSIOp, arith::RemUIOp>(def);
    return result;
  }

  /// The extent of a thread coordinate (an index of a parallel), if
  /// constant.
  static std::optional<int64_t> coordinateExtent(BlockArgument arg) {
    auto level = cast<ParallelOp>(arg.getOwner()->getParentOp());
    return getConstantIntValue(level.getBounds()[arg.getArgNumber()]);
  }

  static std::optional<Slot> slotOf(Value index, ParallelOp threads,
                                    int depth = 0) {
    if (depth > 12)
      return std::nullopt;
    // An index of the thread parallel or of a warp or warpgroup level
    // around it: a coordinate of the executing thread.
    if (auto arg = dyn_cast<BlockArgument>(index)) {
      auto level = dyn_cast<ParallelOp>(arg.getOwner()->getParentOp());
      if (!level || level.getLevel() == Level::Block ||
          !level->isAncestor(threads))
        return std::nullopt;
      Slot slot;
      slot.thread = arg;
      return slot;
    }
    if (auto cast = index.getDefiningOp<arith::IndexCastOp>())
      return slotOf(cast.getIn(), threads, depth + 1);
    if (auto mul = index.getDefiningOp<arith::MulIOp>()) {
      for (auto [x, y] : {std::pair{mul.getLhs(), mul.getRhs()},
                          std::pair{mul.getRhs(), mul.getLhs()}}) {
        std::optional<int64_t> c = getConstantIntValue(y);
        std::optional<Slot> slot = slotOf(x, threads, depth + 1);
        if (!c || *c == 0 || !slot || !slot->base.empty())
          continue;
        // The in-thread values offset .. offset + span - 1 map to
        // c * offset .. c * (offset + span - 1), which runs downwards for a
        // negative c: the lowest is the new offset.
        int64_t first = slot->offset * *c;
        int64_t last = (slot->offset + slot->span - 1) * *c;
        slot->stride *= *c;
        slot->offset = std::min(first, last);
        slot->span = (slot->span - 1) * std::abs(*c) + 1;
        slot->loopStride *= std::abs(*c);
        return slot;
      }
      return std::nullopt;
    }
    // `x - c`: the slot of x, c lower.
    if (auto sub = index.getDefiningOp<arith::SubIOp>())
      if (std::optional<int64_t> c = getConstantIntValue(sub.getRhs()))
        if (std::optional<Slot> slot = slotOf(sub.getLhs(), threads, depth + 1)) {
          slot->offset -= *c;
          return slot;
        }
    if (auto add = index.getDefiningOp<arith::AddIOp>()) {
      // Adds `y` to the slot: a constant, a base, a loop term or an
      // in-thread counter, or a sum of those (`b * 512 + e * 128` beside
      // `t`).
      std::function<bool(Slot &, Value, int)> absorb = [&](Slot &slot, Value y,
                                                           int level) {
        if (std::optional<int64_t> c = getConstantIntValue(y)) {
          slot.offset += *c;
          return true;
        }
        if (isOutside(y, threads) && uniformOverBlock(y, threads)) {
          slot.base.push_back(y);
          return true;
        }
        // A loop counter times a constant, of any trip count. Several such
        // terms (`bn * 256 + h * 128`) sum to a multiple of their
        // constants' gcd, which is then the one term's L.
        if (std::optional<int64_t> l = loopTerm(y); l && !counterRange(y)) {
          slot.loopStride =
              slot.loopStride == 0 ? *l : std::gcd(slot.loopStride, *l);
          return true;
        }
        // A loop counter inside the thread: 0 <= r < trip count.
        if (auto range = counterRange(y)) {
          slot.offset += range->first;
          slot.span += range->second - range->first - 1;
          return true;
        }
        auto sum = y.getDefiningOp<arith::AddIOp>();
        return sum && level < 4 && absorb(slot, sum.getLhs(), level + 1) &&
               absorb(slot, sum.getRhs(), level + 1);
      };
      for (auto [x, y] : {std::pair{add.getLhs(), add.getRhs()},
                          std::pair{add.getRhs(), add.getLhs()}}) {
        std::optional<Slot> slot = slotOf(x, threads, depth + 1);
        if (slot && absorb(*slot, y, 0))
          return slot;
      }
      return std::nullopt;
    }
    return std::nullopt;
  }

  /// The thread parallel of two element accesses whose indices can be
  /// compared dimension by dimension (the same buffer, the same rank), or
  /// null. The rules below (sameThreadElement, disjointElements,
  /// enumeratedDisjoint) take it as `threads`.
  static ParallelOp comparableElements(const Access &a, const Access &b) {
    if (a.indices.size() != b.indices.size() || a.indices.empty() ||
        !sameValue(a.memref, b.memref, /*depth=*/8))
      return {};
    auto threads = dyn_cast_or_null<ParallelOp>(a.perThread);
    // Indices name elements only of a view that is the same memory for
    // every thread (and in both steps of a loop, for an access carried from
    // an earlier one), whose distinct indices are distinct elements.
    Operation *varying = a.carriedBy;
    if (!varying || (b.carriedBy && b.carriedBy->isAncestor(varying)))
      varying = b.carriedBy;
    if (!threads || !isStableDistinctView(a.memref, threads, varying) ||
        !isStableDistinctView(b.memref, threads, varying))
      return {};
    return threads;
  }

  /// The values `coordinate` takes over the places of `a` and `b` (the
  /// union of their ranges).
  static std::optional<std::pair<int64_t, int64_t>>
  coordinateRange(const Access &a, const Access &b, Value coordinate) {
    auto x = mlir::croq::coordinateRange(a.op, coordinate);
    auto y = mlir::croq::coordinateRange(b.op, coordinate);
    if (!x || !y)
      return std::nullopt;
    return std::pair{std::min(x->first, y->first),
                     std::max(x->second, y->second)};
  }

  /// Two element accesses of one thread-level body that only the same
  /// thread can make to one element: the same buffer, and a dimension whose
  /// index is a disjoint slot of the same thread index in both (the other
  /// dimensions are then free).
  static bool sameThreadElement(const Access &a, const Access &b,
                                ParallelOp threads) {
    // The same element expression in the same block (a read-modify-write
    // like `s.at(t / 32, t % 32) += 1`): two threads meet only where the
    // expression maps them to one element, and there their writes already
    // race with each other; no barrier could order them. A write under a
    // condition the read is not under (a broadcast) is not exempt.
    // The indices must not move with a loop, inside the thread body or
    // around it: then one iteration's write meets the next iteration's read
    // of another thread (s[t + j] in a loop over j).
    auto loopInvariant = [&](Value index) {
      return allSources(index, [&](BlockArgument arg) {
        Operation *owner = arg.getOwner()->getParentOp();
        return !(isa<scf::ForOp, scf::WhileOp>(owner) &&
                 owner->isProperAncestor(a.op));
      });
    };
    if (a.op->getBlock() == b.op->getBlock() && a.width == b.width &&
        llvm::all_of(llvm::zip_equal(a.indices, b.indices),
                     [](auto pair) {
                       return sameValue(std::get<0>(pair), std::get<1>(pair),
                                        8);
                     }) &&
        llvm::all_of(a.indices, loopInvariant) &&
        llvm::any_of(a.indices,
                     [](Value i) { return dependsOnThreadIndex(i); }))
      return true;
    // Each thread is one tuple of coordinates: the indices of the thread
    // parallel and of the warp and warpgroup levels around it. An element
    // is one thread's only when the indices pin every coordinate that
    // varies (extent above 1): `s[t]` in `parallel w by 2 : group-4, t by
    // 128 : thread` is the element of two threads, (0, t) and (1, t).
    llvm::SmallSetVector<Value, 4> coordinates, pinned;
    // A coordinate that the conditions around both accesses fix to one
    // value (`inthreads.async (g == 1)`, `if (t == 0)`) does not vary
    // between them.
    for (ParallelOp level = threads; level && level.getLevel() != Level::Block;
         level = level.getParentParallel())
      for (Value index : level.getIndices()) {
        auto range = coordinateRange(a, b, index);
        if (!range || range->first != range->second)
          coordinates.insert(index);
      }
    // Whether slots x and y (spans widened by a vector access) determine
    // their thread: then it is pinned.
    auto pin = [&](const Slot &x, const Slot &y, int64_t xWidth,
                   int64_t yWidth) {
      if (x.thread != y.thread || x.stride != y.stride ||
          x.loopStride != y.loopStride || x.base.size() != y.base.size())
        return;
      int64_t xSpan = x.span + xWidth - 1, ySpan = y.span + yWidth - 1;
      int64_t lo = std::min(x.offset, y.offset);
      int64_t hi = std::max(x.offset + xSpan, y.offset + ySpan);
      if (hi - lo > std::abs(x.stride))
        return;
      // With a loop term j * L, the thread part t * k + r must stay within
      // L values, so that one element is one (j, t).
      if (x.loopStride != 0) {
        auto range = coordinateRange(a, b, x.thread);
        if (!range || std::abs(x.stride) * (range->second - range->first) +
                              (hi - lo) >
                          x.loopStride)
          return;
      }
      if (llvm::all_of(llvm::zip_equal(x.base, y.base), [](auto pair) {
            return sameValue(std::get<0>(pair), std::get<1>(pair), 8);
          }))
        pinned.insert(x.thread);
    };
    for (size_t d = 0; d < a.indices.size(); ++d) {
      std::optional<Slot> x = slotOf(a.indices[d], threads);
      std::optional<Slot> y = slotOf(b.indices[d], threads);
      // A vector access along the last dimension covers `width` elements.
      bool last = d + 1 == a.indices.size();
      if (x && y)
        pin(*x, *y, last ? a.width : 1, last ? b.width : 1);
    }
    // Two dimensions `base + X / c` and `base' + X % c` of one X determine
    // X (an epilogue's `r = (e * 128 + t) / 64; q = (e * 128 + t) % 64`):
    // X pins its thread as one dimension would.
    SmallVector<std::optional<DivMod>> aParts, bParts;
    for (auto [ia, ib] : llvm::zip_equal(a.indices, b.indices)) {
      aParts.push_back(divModOf(ia, threads));
      bParts.push_back(divModOf(ib, threads));
    }
    for (size_t d0 = 0; d0 < a.indices.size(); ++d0)
      for (size_t d1 = 0; d1 < a.indices.size(); ++d1) {
        const std::optional<DivMod> &qa = aParts[d0], &ra = aParts[d1];
        const std::optional<DivMod> &qb = bParts[d0], &rb = bParts[d1];
        if (!qa || !ra || !qb || !rb || qa->remainder || !ra->remainder ||
            qb->remainder || !rb->remainder || qa->divisor != ra->divisor ||
            qb->divisor != qa->divisor || rb->divisor != qa->divisor ||
            !sameValue(qa->x, ra->x, 8) || !sameValue(qb->x, rb->x, 8) ||
            !sameValue(qa->base, qb->base, 8) ||
            !sameValue(ra->base, rb->base, 8) ||
            (d1 + 1 == a.indices.size() && (a.width != 1 || b.width != 1)))
          continue;
        std::optional<Slot> x = slotOf(qa->x, threads);
        std::optional<Slot> y = slotOf(qb->x, threads);
        if (x && y)
          pin(*x, *y, 1, 1);
      }
    // Every coordinate fixed by the inthreads around both (`t == 0`): one
    // thread makes both accesses, in program order.
    if (coordinates.empty())
      return true;
    return !pinned.empty() &&
           llvm::all_of(coordinates, [&](Value c) { return pinned.contains(c); });
  }

  /// Two element accesses of one thread-level body that no two threads can
  /// make to one element: in some dimension, the values their indices take
  /// over all threads (and loop counters) lie in disjoint ranges around the
  /// same base (`s[t]` and `s[t + 128]` for t < 128).
  static bool disjointElements(const Access &a, const Access &b,
                               ParallelOp threads) {
    // [lo, hi] of a slot's values where `op` runs, relative to its base
    // (the coordinate narrowed by the conditions around `op`: `s[t]` and
    // `s[t + 128]` under `if (t < 128)`).
    auto range = [&](const Slot &slot, int64_t width, Operation *op)
        -> std::optional<std::pair<int64_t, int64_t>> {
      // A loop term of unknown trip count has no bounded range.
      if (slot.loopStride != 0)
        return std::nullopt;
      auto values = mlir::croq::coordinateRange(op, slot.thread);
      if (!values)
        return std::nullopt;
      int64_t first = slot.stride * values->first;
      int64_t last = slot.stride * values->second;
      return std::pair{slot.offset + std::min(first, last),
                       slot.offset + std::max(first, last) + slot.span +
                           width - 2};
    };
    for (size_t d = 0; d < a.indices.size(); ++d) {
      bool last = d + 1 == a.indices.size();
      // Constant indices: `o[0]` and `o[1]`.
      std::optional<int64_t> ca = getConstantIntValue(a.indices[d]);
      std::optional<int64_t> cb = getConstantIntValue(b.indices[d]);
      if (ca && cb &&
          (*ca + (last ? a.width : 1) <= *cb || *cb + (last ? b.width : 1) <= *ca))
        return true;
      if (!last || (a.width == 1 && b.width == 1))
        if (halves(a, a.indices[d], b, b.indices[d]) ||
            halves(b, b.indices[d], a, a.indices[d]))
          return true;
      std::optional<Slot> x = slotOf(a.indices[d], threads);
      std::optional<Slot> y = slotOf(b.indices[d], threads);
      if (!x || !y || x->base.size() != y->base.size() ||
          !llvm::all_of(llvm::zip_equal(x->base, y->base), [](auto pair) {
            return sameValue(std::get<0>(pair), std::get<1>(pair), 8);
          }))
        continue;
      auto rx = range(*x, last ? a.width : 1, a.op);
      auto ry = range(*y, last ? b.width : 1, b.op);
      if (rx && ry && (rx->second < ry->first || ry->second < rx->first))
        return true;
      // One stride k over the same thread index: the values of each lie in
      // fixed residues mod |k| (`s[2t + 3]` odd, `s[2t]` even), so disjoint
      // residues never meet, whatever the threads.
      if (x->thread == y->thread && x->stride == y->stride &&
          std::abs(x->stride) > 1 && x->loopStride == 0 &&
          y->loopStride == 0) {
        int64_t k = std::abs(x->stride);
        int64_t xSpan = x->span + (last ? a.width : 1) - 1;
        int64_t ySpan = y->span + (last ? b.width : 1) - 1;
        if (xSpan + ySpan <= k) {
          auto mod = [&](int64_t v) { return ((v % k) + k) % k; };
          bool meet = false;
          for (int64_t i = 0; i < xSpan && !meet; ++i)
            for (int64_t j = 0; j < ySpan && !meet; ++j)
              meet = mod(x->offset + i) == mod(y->offset + j);
          if (!meet)
            return true;
        }
      }
    }
    return false;
  }

  /// A run-time value the same in every thread of the block at one point of
  /// the program: no thread index and no counter of a loop inside the
  /// thread body (whose threads may be at different iterations).
  static bool sameInBlock(Value v) {
    return allSources(v, [](BlockArgument arg) {
      Operation *owner = arg.getOwner()->getParentOp();
      if (auto level = dyn_cast<ParallelOp>(owner))
        return level.getLevel() == Level::Block;
      if (isa<scf::ForOp, scf::WhileOp>(owner))
        return !owner->getParentOfType<ParallelOp>() ||
               owner->getParentOfType<ParallelOp>().getLevel() ==
                   Level::Block;
      return true;
    });
  }

  /// The bound `u` of a condition `t < u` around `op` (then side), `u` the
  /// same in every thread.
  static SmallVector<Value> upperBounds(Operation *op, Value coordinate) {
    SmallVector<Value> bounds;
    auto level =
        cast<ParallelOp>(cast<BlockArgument>(coordinate).getOwner()->getParentOp());
    for (Operation *child = op, *p = op->getParentOp();
         p && p != level.getOperation(); child = p, p = p->getParentOp()) {
      auto ifOp = dyn_cast<scf::IfOp>(p);
      if (!ifOp || child->getParentRegion() != &ifOp.getThenRegion())
        continue;
      for (Value v : conjunctsOf(ifOp.getCondition())) {
        auto test = v.getDefiningOp<arith::CmpIOp>();
        if (!test)
          continue;
        using P = arith::CmpIPredicate;
        P pred = test.getPredicate();
        if ((pred == P::slt || pred == P::ult) && test.getLhs() == coordinate &&
            sameInBlock(test.getRhs()))
          bounds.push_back(test.getRhs());
        if ((pred == P::sgt || pred == P::ugt) && test.getRhs() == coordinate &&
            sameInBlock(test.getLhs()))
          bounds.push_back(test.getLhs());
      }
    }
    return bounds;
  }

  /// `s[t]` (at `low`, by `a`) and `s[t + u]` (at `high`, by `b`), both under
  /// `if (t < u)` for one run-time u (a tree reduction's step, `u = 128 >>
  /// s`): t < u <= t' + u, so no element is both. Not across a loop's back
  /// edge, where u may have changed.
  static bool halves(const Access &a, Value low, const Access &b, Value high) {
    if (a.carried || b.carried)
      return false;
    auto t = dyn_cast<BlockArgument>(low);
    auto level = t ? dyn_cast<ParallelOp>(t.getOwner()->getParentOp())
                   : ParallelOp();
    auto add = high.getDefiningOp<arith::AddIOp>();
    if (!level || level.getLevel() == Level::Block || !add)
      return false;
    Value u = add.getLhs() == t ? add.getRhs()
              : add.getRhs() == t ? add.getLhs()
                                  : Value();
    if (!u || !sameInBlock(u))
      return false;
    auto guarded = [&](const Access &access) {
      return llvm::any_of(upperBounds(access.op, t), [&](Value bound) {
        return computesSameValue(bound, u, 8);
      });
    };
    return guarded(a) && guarded(b);
  }

  static bool sameValue(Value x, Value y, int depth) {
    if (!x || !y)
      return x == y;
    return computesSameValue(x, y, depth);
  }

  /// Two element accesses of one thread-level body that no two threads can
  /// make to one element, found by evaluating their indices for every
  /// thread (ElementOverlap.h): for index forms the slot rules do not
  /// cover, where every bound is a compile-time value. Remembered per pair
  /// of accesses; all the evaluations of one kernel share one budget.
  bool enumeratedDisjoint(const Access &a, const Access &b,
                          ParallelOp threads) {
    bool sameIteration = !a.carried && !b.carried;
    // An op names its element access, except a device call, which may take
    // the addresses of several elements of one buffer.
    bool cacheable = !isa<CallOp>(a.op) && !isa<CallOp>(b.op);
    auto key = std::make_tuple(a.op, b.op, a.memref.getAsOpaquePointer(),
                               unsigned(sameIteration));
    if (auto it = enumerated.find(key); cacheable && it != enumerated.end())
      return it->second;
    bool disjoint = threadsShareNoElement(
        {a.op, a.memref, a.indices, a.width},
        {b.op, b.memref, b.indices, b.width}, threads, sameIteration,
        enumerationBudget);
    if (cacheable)
      enumerated[key] = disjoint;
    return disjoint;
  }

  /// The async roles whose threads trigger `event`; null for a trigger
  /// outside every role (every thread of the block triggers it).
  const llvm::SmallPtrSet<Operation *, 4> &triggeringRoles(Value event) {
    auto [it, inserted] = triggerRoles.try_emplace(event);
    if (inserted)
      for (Operation *user : event.getUsers())
        if (auto trigger = dyn_cast<EventTriggerOp>(user))
          it->second.insert(roleOf(trigger).getOperation());
    return it->second;
  }

  /// Whether a wait on `event`, in a flow that has not triggered it,
  /// orders `access`: only where the threads that made the access trigger
  /// the event (after it). A consumer's wait on `full`, which only the
  /// producer triggers, does not order the consumer's own threads'
  /// accesses of the iteration before.
  bool waitOrders(Value event, const Access &access) {
    const llvm::SmallPtrSet<Operation *, 4> &roles = triggeringRoles(event);
    if (roles.contains(nullptr))
      return true;
    InThreadsOp role = roleOf(access.op);
    return role && roles.contains(role.getOperation());
  }

  /// The memory a memref value names, where its type says.
  static std::optional<Storage> storageOf(Value v) {
    if (auto type = dyn_cast_or_null<MemRefType>(v ? v.getType() : Type()))
      return getStorage(type);
    return std::nullopt;
  }

  /// A store of the block's own code: between the block level and the
  /// levels inside it, outside every inthreads region. One thread of the
  /// block makes it (croq-elect-issuers), every thread reaches it.
  static bool isBlockStore(Operation *op) {
    if (!isa<memref::StoreOp>(op))
      return false;
    for (Operation *parent = op->getParentOp(); parent;
         parent = parent->getParentOp()) {
      if (auto level = dyn_cast<ParallelOp>(parent))
        return level.getLevel() == Level::Block;
      if (isa<InThreadsOp>(parent))
        return false;
    }
    return false;
  }

  bool conflicts(const Access &earlier, const Access &later) {
    if (earlier.triggered || (!earlier.write && !later.write))
      return false;
    if (!earlier.buffers.overlaps(later.buffers))
      return false;
    if (earlier.atomic && later.atomic)
      return false;
    // Two stores of the block's own code are one thread's, in its program
    // order (a `dma.pad` border filled element by element), once
    // croq-elect-issuers elects that thread by its id for both.
    if (earlier.write && later.write && isBlockStore(earlier.op) &&
        isBlockStore(later.op)) {
      for (Operation *store : {earlier.op, later.op})
        store->setAttr(kSameIssuerAttr, UnitAttr::get(store->getContext()));
      return false;
    }
    // What a device function touches is unknown: any element, of any
    // thread's.
    if (earlier.opaque || later.opaque)
      return true;
    // One store statement's element writes to global memory, in different
    // threads or steps of a loop: two of them on one element race, since
    // the statement's instances in one step already do, and no barrier
    // between steps would make the program's result its own (threads
    // writing their own outputs in a persistent loop, under a ragged-tail
    // guard). Writes of different statements keep their order (an
    // initialisation, then the values).
    if (earlier.write && later.write && earlier.op == later.op &&
        earlier.isElement && !earlier.atomic &&
        isa<memref::StoreOp, vector::StoreOp>(earlier.op) &&
        storageOf(earlier.memref) == Storage::Global)
      return false;
    bool sameBody = earlier.perThread && earlier.perThread == later.perThread;
    // Element accesses of one thread-level body: the same thread's only
    // where their indices prove it (s[t] and s[t], not s[t] and s[0]).
    if (sameBody && earlier.isElement && later.isElement) {
      ParallelOp threads = comparableElements(earlier, later);
      return !threads || (!sameThreadElement(earlier, later, threads) &&
                          !disjointElements(earlier, later, threads) &&
                          !enumeratedDisjoint(earlier, later, threads));
    }
    // Per-thread copies of one body move each thread's own data.
    if (sameBody && !earlier.isElement && !later.isElement)
      return false;
    // One op writing the same elements again (the next iteration of a
    // cooperative copy): the same threads write the same elements.
    if (!earlier.isElement && earlier.op == later.op &&
        earlier.write == later.write)
      return false;
    return true;
  }

  /// Orders `access` after every conflicting pending access: a barrier
  /// lifted above a loop does not order the loop's own earlier iterations,
  /// so the remaining accesses are checked again.
  void check(const Access &access, State &state) {
    while (true) {
      auto it = llvm::find_if(
          state, [&](const Access &p) { return conflicts(p, access); });
      if (it == state.end())
        return;
      Access pending = *it;
      size_t before = state.size();
      place(pending, access, state);
      if (state.size() == before)
        return;
    }
  }

  /// The memory an access touches, for diagnostics.
  static StringRef memoryName(const Access &access) {
    std::optional<Storage> storage = storageOf(access.memref);
    // An access of whole buffers (a copy, a device call): their roots.
    if (!storage && !access.buffers.unknown && !access.buffers.roots.empty()) {
      storage = storageOf(*access.buffers.roots.begin());
      for (Value root : access.buffers.roots)
        if (storageOf(root) != storage)
          storage.reset();
    }
    if (storage == Storage::Global)
      return "global memory";
    if (storage == Storage::Shared)
      return "shared memory";
    return "memory";
  }

  /// A barrier between `earlier` and `later`, before `later` lifted to the
  /// region that holds both.
  void place(const Access &earlier, const Access &later, State &state) {
    Operation *anchor = later.op;
    Region *common = earlier.op->getParentRegion();
    while (common && !common->isAncestor(anchor->getParentRegion()))
      common = common->getParentRegion();
    while (anchor->getParentRegion() != common)
      anchor = anchor->getParentOp();
    bool inRole = static_cast<bool>(roleOf(anchor));
    Level level = inRole ? Level::Warpgroup : Level::Block;
    UniformScope required =
        inRole ? UniformScope::Warpgroup : UniformScope::Block;
    // An access of the previous iteration (`s[t + u]` read under an `if` in
    // one step of a loop, written in the step before): any point of the
    // loop's body before `later` orders it, so the barrier can go where
    // the body starts to hold `later`, outside the `if`.
    if (earlier.carried && getExecutionScope(solver, anchor) < required)
      for (Operation *loop = anchor->getParentOp(); loop;
           loop = loop->getParentOp()) {
        if (!isa<scf::ForOp, scf::WhileOp>(loop) ||
            !loop->isProperAncestor(earlier.op))
          continue;
        Operation *top = later.op;
        while (top->getParentOp() != loop)
          top = top->getParentOp();
        if (getExecutionScope(solver, top) >= required)
          anchor = top;
        break;
      }
    if (getExecutionScope(solver, anchor) < required) {
      status = failure();
      state.clear();
      // The second walk of a loop meets the same pair again.
      if (!reported.insert(later.op).second)
        return;
      InFlightDiagnostic diag =
          later.op->emitError()
          << (later.write ? "this write to " : "this read of ")
          << memoryName(later) << " must wait for an earlier "
          << (earlier.write ? "write" : "read")
          << " of the same buffer by other threads, but no barrier can go "
             "between them: only part of the "
          << (inRole ? "warpgroup" : "block")
          << " runs the code around them";
      diag.attachNote(earlier.op->getLoc()) << "the earlier access";
      diag.attachNote()
          << "hint: croq inserts barriers where threads may share an "
             "element, and could not prove these accesses' elements "
             "disjoint; make the region's condition uniform over the "
          << (inRole ? "warpgroup" : "block")
          << ", move one access out of it, or index so that each thread's "
             "elements are its own (t * k + c, or disjoint ranges under the "
             "condition)";
      // The proof steps through a while loop whose carried values start
      // from compile-time values and change by arithmetic on themselves (a
      // tree reduction's `h = h >> 1`); name what it needs, and the form
      // over a count of steps.
      if (auto whileOp = later.op->getParentOfType<scf::WhileOp>())
        diag.attachNote(whileOp.getLoc())
            << "croq's proof steps through a while loop only when the values "
               "it updates start from compile-time constants and change by "
               "arithmetic on themselves; here it cannot tell which elements "
               "each step's condition selects. Start them from constants, or "
               "loop over a count of steps: `foreach s in [8] { h = 128 >> "
               "s; if (t < h) ... }`";
      return;
    }
    auto [it, inserted] = anchors.insert({anchor, level});
    (void)it;
    (void)inserted;
    // Everything before the barrier is ordered; accesses inside the anchor
    // (a region holding `later`) may still be pending.
    llvm::erase_if(state, [&](const Access &a) {
      return !a.triggered && !anchor->isProperAncestor(a.op);
    });
  }

  DataFlowSolver &solver;
  DenseMap<Value, llvm::SmallPtrSet<Operation *, 4>> triggerRoles;
  llvm::MapVector<Operation *, Level> anchors;
  llvm::SmallPtrSet<Operation *, 4> reported;
  LogicalResult status = success();
  DenseMap<std::tuple<Operation *, Operation *, const void *, unsigned>, bool>
      enumerated;
  /// Thread-iterations the enumeration may evaluate in one kernel, about a
  /// second's work.
  int64_t enumerationBudget = int64_t(1) << 22;
};

struct CroqInsertBarriersPass
    : mlir::croq::impl::CroqInsertBarriersPassBase<CroqInsertBarriersPass> {
  /// A store that every thread of a thread-level parallel makes to one
  /// shared element (its index the same in every thread, no condition
  /// around it in the thread body) of a value computed from the thread's
  /// index: the element keeps one of them, which one depends on the
  /// schedule. No barrier orders the threads of one statement.
  /// Whether `value` is computed from a device call's or inline assembly's
  /// result, which may be the same in every thread (a warp's sum).
  static bool computedByOpaqueOp(Value value) {
    SmallVector<Value> work{value};
    DenseSet<Value> seen;
    while (!work.empty()) {
      Value v = work.pop_back_val();
      Operation *def = v.getDefiningOp();
      if (!def || !seen.insert(v).second)
        continue;
      if (isa<CallOp, LLVM::InlineAsmOp>(def))
        return true;
      llvm::append_range(work, def->getOperands());
    }
    return false;
  }

  /// Whether `value` is one and the same in every thread of `threads` and
  /// of the warp and warpgroup levels between it and the block: an index
  /// expression (through casts) that evaluates alike for every coordinate,
  /// such as `t / 256` over 256 threads. Those threads all write the same
  /// value, which no schedule changes.
  static bool sameInEveryThread(Value value, ParallelOp threads) {
    while (Operation *def = value.getDefiningOp()) {
      if (!isa<arith::SIToFPOp, arith::UIToFPOp, arith::IndexCastOp,
               arith::IndexCastUIOp, arith::ExtSIOp, arith::ExtUIOp,
               arith::TruncIOp>(def))
        break;
      value = def->getOperand(0);
    }
    if (!value.getType().isIntOrIndex())
      return false;
    std::optional<SmallVector<std::pair<Value, int64_t>>> coordinates =
        threadCoordinates(threads);
    if (!coordinates)
      return false;
    int64_t count = 1;
    for (auto [index, extent] : *coordinates)
      count *= extent;
    if (count > 4096)
      return false;
    IndexProgram program;
    for (auto [index, extent] : *coordinates)
      program.addInput(index);
    unsigned root = program.compile(value);
    std::optional<int64_t> first;
    for (int64_t thread = 0; thread < count; ++thread) {
      int64_t rest = thread;
      for (auto [index, extent] : llvm::reverse(*coordinates)) {
        program.set(index, rest % extent);
        rest /= extent;
      }
      std::optional<int64_t> v = program.evaluate(root);
      if (!v || (first && *first != *v))
        return false;
      first = v;
    }
    return true;
  }

  static LogicalResult rejectSharedElementRaces(ParallelOp kernel) {
    WalkResult result = kernel.walk([&](memref::StoreOp store) {
      if (getStorage(store.getMemRefType()) != Storage::Shared ||
          !dependsOnThreadIndex(store.getValueToStore()) ||
          computedByOpaqueOp(store.getValueToStore()))
        return WalkResult::advance();
      ParallelOp threads;
      for (Operation *p = store->getParentOp(); p; p = p->getParentOp()) {
        if (auto parallel = dyn_cast<ParallelOp>(p)) {
          threads = parallel;
          break;
        }
        if (!isa<scf::ForOp>(p))
          return WalkResult::advance();
      }
      if (!threads || threads.getLevel() != Level::Thread)
        return WalkResult::advance();
      int64_t count = 1;
      for (Value bound : threads.getBounds()) {
        std::optional<int64_t> c = getConstantIntValue(bound);
        if (!c)
          return WalkResult::advance();
        count *= *c;
      }
      if (count < 2 ||
          mayDifferBetweenInstances(store.getMemRef(), kernel) ||
          llvm::any_of(store.getIndices(), [&](Value i) {
            return mayDifferBetweenInstances(i, kernel);
          }) ||
          sameInEveryThread(store.getValueToStore(), threads))
        return WalkResult::advance();
      InFlightDiagnostic diag =
          store->emitError("every thread of a parallel of ")
          << count
          << " writes a value of its own to this one shared element: which "
             "value it keeps depends on the schedule";
      diag.attachNote() << "hint: write it from one thread (`if (t == 0)`), "
                           "index it by the thread, or reduce the values "
                           "(an atomic, or a tree over the threads)";
      return WalkResult::interrupt();
    });
    return failure(result.wasInterrupted());
  }

  void runOnOperation() override {
    auto &uniformity = getAnalysis<UniformityInfo>();
    if (!uniformity.isValid())
      return signalPassFailure();
    DataFlowSolver &solver = uniformity.getSolver();
    SmallVector<ParallelOp> kernels;
    getOperation()->walk([&](ParallelOp op) {
      if (op.getLevel() == Level::Block && !op->getParentOfType<ParallelOp>())
        kernels.push_back(op);
    });
    bool failedAny = false;
    for (ParallelOp kernel : kernels) {
      failedAny |= failed(rejectSharedElementRaces(kernel));
      Planner planner(solver);
      failedAny |= failed(planner.run(kernel));
    }
    if (failedAny)
      signalPassFailure();
  }
};

} // namespace
