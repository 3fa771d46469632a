//===- AssignPhases.cpp - the phase parity each event wait is owed --------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//
//
// An mbarrier wait names the parity of the phase it waits for. This pass
// decides, for every croq.event.wait, how that parity is known and writes
// its computation as IR before the wait (the `parity` operand): from the
// wait's order, from the iteration of its loop, or from a per-thread bit
// that the wait flips (see the pass description in Passes.td).
//
//===----------------------------------------------------------------------===//

#include "Common.h"
#include "Croq/Analysis/Roles.h"
#include "Croq/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::croq {
#define GEN_PASS_DEF_CROQASSIGNPHASESPASS
#include "Croq/Conversion/Passes.h.inc"
} // namespace mlir::croq

using namespace mlir;
using namespace mlir::croq;
using namespace mlir::croq::detail;

/// The innermost scf.for or scf.while around `op` inside its kernel (loops
/// around the launch do not count: every launch starts its events afresh).
static Operation *innermostKernelLoop(Operation *op) {
  for (Operation *parent = op->getParentOp(); parent;
       parent = parent->getParentOp()) {
    if (isa<scf::ForOp, scf::WhileOp>(parent))
      return parent;
    if (auto parallel = dyn_cast<ParallelOp>(parent);
        parallel && !parallel.getParentParallel())
      return nullptr;
  }
  return nullptr;
}

/// Which iteration's slot `index` is, relative to the current one, when it
/// is a function of the loop's induction variable `iv` over `n` slots: 0
/// for `iv % n`, -1 for the previous iteration's slot (`(iv - 1) % n`, or
/// `(iv + n - 1) % n` such as FA3's `(bn + 1) % 2`).
static std::optional<int64_t> slotIteration(Value index, Value iv, int64_t n) {
  Operation *def = index.getDefiningOp();
  if (!isa_and_nonnull<arith::RemSIOp, arith::RemUIOp>(def))
    return std::nullopt;
  std::optional<int64_t> divisor = getConstantIntValue(def->getOperand(1));
  if (!divisor || *divisor != n)
    return std::nullopt;
  Value x = def->getOperand(0);
  int64_t offset = 0;
  if (x != iv) {
    Operation *add = x.getDefiningOp();
    if (!isa_and_nonnull<arith::AddIOp, arith::SubIOp>(add) ||
        add->getOperand(0) != iv)
      return std::nullopt;
    std::optional<int64_t> c = getConstantIntValue(add->getOperand(1));
    if (!c)
      return std::nullopt;
    offset = isa<arith::AddIOp>(add) ? *c : -*c;
  }
  int64_t slot = ((offset % n) + n) % n;
  if (slot == 0)
    return 0;
  if (slot == n - 1)
    return -1;
  return std::nullopt;
}

/// True when `cond` is `iv == lb` (either way round): the first iteration
/// of `loop`.
static bool isFirstIteration(Value cond, scf::ForOp loop) {
  auto cmp = cond.getDefiningOp<arith::CmpIOp>();
  if (!cmp || cmp.getPredicate() != arith::CmpIPredicate::eq)
    return false;
  Value iv = loop.getInductionVar(), lb = loop.getLowerBound();
  Value other = cmp.getLhs() == iv   ? cmp.getRhs()
                : cmp.getRhs() == iv ? cmp.getLhs()
                                     : Value();
  if (!other)
    return false;
  std::optional<int64_t> a = getConstantIntValue(other);
  std::optional<int64_t> b = getConstantIntValue(lb);
  return other == lb || (a && b && *a == *b);
}

/// For a subscript `select c, a, b` of an N-slot event in a loop over `iv`:
/// true when `a` is the current iteration's slot and `b` the previous
/// iteration's (FA3's re-wait `bn == 0 ? stage : prev_stage`).
static bool selectsCurrentThenPrevious(arith::SelectOp select, Value iv,
                                       int64_t n) {
  std::optional<int64_t> a = slotIteration(select.getTrueValue(), iv, n);
  std::optional<int64_t> b = slotIteration(select.getFalseValue(), iv, n);
  return a && b && *a == 0 && *b == -1;
}

namespace {
/// How a wait's generation follows from the iteration of its loop: the
/// loop (null: none, generation 0) and, for FA3's re-wait, the condition of
/// its select (the first iteration picks the current slot, the others the
/// previous iteration's).
struct LoopGeneration {
  scf::ForOp loop;
  Value firstIteration;
  /// The wait is under an `if`, where the rule differs from the run-time
  /// count (so does a re-wait: `firstIteration` is set).
  bool underIf = false;
};
} // namespace

/// The D1 rule (the language reference: `wait e[i]` inside `foreach iv`
/// waits for generation iv / N) applies to a wait when it is not in a
/// kernel loop and runs at most once, or when it is in the only kernel loop
/// (step 1), directly in its body or under `scf.if`s there, and waits on
/// slot `iv % N`, the previous iteration's slot, a select between the two
/// (`bn == 0 ? stage : prev_stage`), or, directly in the body, the event's
/// only slot. The wait of iteration k then targets the generation of the
/// iteration whose slot it picks, (k + d) / N. Other waits count at run
/// time: each thread keeps a phase bit per slot and flips it after each
/// wait (the model's "waiter's own counter"), e.g. in persistent kernels
/// whose K loop restarts per tile.
static std::optional<LoopGeneration> loopGeneration(EventWaitOp wait) {
  Operation *loop = innermostKernelLoop(wait);
  if (!loop)
    return LoopGeneration{};
  auto forOp = dyn_cast<scf::ForOp>(loop);
  if (!forOp || innermostKernelLoop(forOp))
    return std::nullopt;
  std::optional<int64_t> step = getConstantIntValue(forOp.getStep());
  if (!step || *step != 1)
    return std::nullopt;
  bool direct = wait->getBlock() == forOp.getBody();
  for (Operation *p = wait->getParentOp(); p != forOp; p = p->getParentOp())
    if (!isa<scf::IfOp>(p))
      return std::nullopt;
  EventType type = wait.getEvent().getType();
  int64_t slots = type.getNumElements();
  LoopGeneration result{forOp, Value(), !direct};
  if (slots == 1 && direct)
    return result;
  if (type.getRank() != 1 || wait.getIndices().size() != 1)
    return std::nullopt;
  Value index = wait.getIndices()[0];
  Value iv = forOp.getInductionVar();
  if (std::optional<int64_t> d = slotIteration(index, iv, slots);
      d && *d == 0)
    return result;
  // FA3's `bn == 0 ? stage : prev_stage`: the current slot in the first
  // iteration, the previous iteration's after it.
  if (auto select = index.getDefiningOp<arith::SelectOp>();
      select && isFirstIteration(select.getCondition(), forOp) &&
      selectsCurrentThenPrevious(select, iv, slots)) {
    result.firstIteration = select.getCondition();
    return result;
  }
  return std::nullopt;
}

/// True when `wait` picks, with a select, between its loop's current slot
/// and the previous iteration's (FA3's re-wait), whatever loop it is in.
static bool isPreviousSlotRewait(EventWaitOp wait) {
  auto loop = wait->getParentOfType<scf::ForOp>();
  if (!loop || wait.getIndices().size() != 1)
    return false;
  auto select = wait.getIndices()[0].getDefiningOp<arith::SelectOp>();
  return select &&
         selectsCurrentThenPrevious(select, loop.getInductionVar(),
                                    wait.getEvent().getType().getNumElements());
}

/// True when every trigger of `event` runs once in each iteration of a
/// step-1 loop (directly in its body, or in an inthreads region there), the
/// producers the D1 rule assumes.
static bool triggeredEveryIteration(Value event) {
  for (Operation *user : event.getUsers()) {
    auto trigger = dyn_cast<EventTriggerOp>(user);
    if (!trigger)
      continue;
    // An inthreads region (an elected lane) runs every iteration too.
    Operation *parent = trigger->getParentOp();
    while (isa<InThreadsOp>(parent) && !cast<InThreadsOp>(parent).getAsync())
      parent = parent->getParentOp();
    auto loop = dyn_cast<scf::ForOp>(parent);
    std::optional<int64_t> step =
        loop ? getConstantIntValue(loop.getStep()) : std::nullopt;
    if (!step || *step != 1 || innermostKernelLoop(loop))
      return false;
  }
  return true;
}

/// `generation % 2` as the i1 parity mbarrier.try_wait.parity takes; an
/// event that starts `ready` is one generation ahead.
static Value parityOf(OpBuilder &b, Location loc, Value generation,
                      bool ready) {
  if (ready)
    generation =
        arith::AddIOp::create(b, loc, generation, cIndex(b, loc, 1));
  return arith::IndexCastOp::create(
      b, loc, b.getI1Type(),
      arith::RemUIOp::create(b, loc, generation, cIndex(b, loc, 2)));
}

namespace {

struct CroqAssignPhasesPass
    : mlir::croq::impl::CroqAssignPhasesPassBase<CroqAssignPhasesPass> {
  void runOnOperation() override {
    splitWholeWaits();
    SmallVector<EventWaitOp> waits;
    getOperation().walk([&](EventWaitOp wait) {
      if (!wait.getParity() && isMBarrierEvent(wait.getEvent()))
        waits.push_back(wait);
    });
    // The waits one thread may run on one event use one rule: those of an
    // event in one warp-specialized role (the roles run on disjoint
    // threads). The D1 rule and the run-time count agree on waits that run
    // once per iteration of one loop. They differ on FA3's re-wait of the
    // previous iteration's slot, which only the D1 rule phases (it assumes
    // triggers once per iteration), and on waits under an `if`, which the
    // D1 rule phases only beside such a re-wait (FA3's epilogue) and the
    // count otherwise (an `if` its triggers share). Waits in several loops
    // or places count at run time, and a re-wait cannot be counted.
    DenseMap<EventWaitOp, LoopGeneration> generations;
    llvm::MapVector<std::pair<Value, Operation *>, SmallVector<EventWaitOp>>
        groups;
    for (EventWaitOp wait : waits) {
      if (wait.getOrder())
        continue;
      groups[{wait.getEvent(), roleOf(wait)}].push_back(wait);
    }
    DenseSet<EventWaitOp> counted;
    for (auto &[key, groupWaits] : groups) {
      bool count = false, rewait = false, underIf = false;
      Operation *site = nullptr;
      for (EventWaitOp wait : groupWaits) {
        std::optional<LoopGeneration> g = loopGeneration(wait);
        Operation *here = g ? g->loop.getOperation() : nullptr;
        if (!g || (site && here != site) || (!here && groupWaits.size() > 1))
          count = true;
        site = here;
        if (g) {
          rewait |= bool(g->firstIteration);
          underIf |= g->underIf;
          generations[wait] = *g;
        }
      }
      if (!count && !rewait && underIf)
        count = true;
      if (count) {
        for (EventWaitOp wait : groupWaits) {
          if (isPreviousSlotRewait(wait)) {
            wait.emitOpError("waits again on the previous iteration's slot, "
                             "which only the D1 rule (generation from the "
                             "loop's iteration) can phase, but this event "
                             "counts its waits at run time: it is waited in "
                             "several loops or places, or in a nested loop");
            return signalPassFailure();
          }
          counted.insert(wait);
        }
        continue;
      }
      if (rewait && !triggeredEveryIteration(key.first))
        groupWaits.front().emitWarning(
            "phases this event's waits from the loop's iteration (a re-wait "
            "of the previous iteration's slot needs it), which assumes each "
            "of its triggers runs once in every iteration");
    }
    // Per-thread phase bits of the events whose waits count at run time.
    DenseMap<Operation *, Value> bits;
    for (EventWaitOp wait : waits) {
      auto it = generations.find(wait);
      const LoopGeneration *g =
          it == generations.end() || counted.contains(wait) ? nullptr
                                                            : &it->second;
      if (failed(assign(wait, g, bits)))
        return signalPassFailure();
    }
  }

  /// `wait e` or `wait e[i]` with fewer subscripts than the event's rank
  /// waits on every element it selects, and each element is owed its own
  /// generation: such a wait becomes one wait per element, each of which
  /// gets its own parity below.
  void splitWholeWaits() {
    SmallVector<EventWaitOp> whole;
    getOperation().walk([&](EventWaitOp wait) {
      if (!wait.getParity() && !wait.getOrder() &&
          isMBarrierEvent(wait.getEvent()) &&
          wait.getIndices().size() < wait.getEvent().getType().getRank())
        whole.push_back(wait);
    });
    for (EventWaitOp wait : whole) {
      OpBuilder b(wait);
      Location loc = wait.getLoc();
      ArrayRef<int64_t> rest = wait.getEvent().getType().getShape().drop_front(
          wait.getIndices().size());
      int64_t count = 1;
      for (int64_t extent : rest)
        count *= extent;
      for (int64_t linear = 0; linear < count; ++linear) {
        SmallVector<Value> indices(wait.getIndices());
        SmallVector<int64_t> tail(rest.size());
        for (int64_t d = rest.size() - 1, r = linear; d >= 0; --d) {
          tail[d] = r % rest[d];
          r /= rest[d];
        }
        for (int64_t t : tail)
          indices.push_back(cIndex(b, loc, t));
        EventWaitOp::create(b, loc, wait.getEvent(), indices, Value(), Value());
      }
      wait.erase();
    }
  }

  LogicalResult assign(EventWaitOp wait, const LoopGeneration *loopGen,
                       DenseMap<Operation *, Value> &bits) {
    OpBuilder b(wait);
    Location loc = wait.getLoc();
    EventType type = wait.getEvent().getType();
    auto alloc = wait.getEvent().getDefiningOp<EventAllocOp>();
    bool ready = alloc && alloc.getReady();
    auto slots = [&] { return cIndex(b, loc, type.getNumElements()); };
    if (Value order = wait.getOrder()) {
      wait.getParityMutable().assign(parityOf(
          b, loc, arith::DivUIOp::create(b, loc, order, slots()), ready));
      return success();
    }
    if (loopGen) {
      // The D1 rule: iteration k waits for generation k / N; FA3's re-wait
      // for the previous iteration's, (k - 1) / N, after the first.
      Value generation;
      if (scf::ForOp loop = loopGen->loop) {
        Value k = arith::SubIOp::create(b, loc, loop.getInductionVar(),
                                        loop.getLowerBound());
        generation = arith::DivUIOp::create(b, loc, k, slots());
        if (Value first = loopGen->firstIteration) {
          Value earlier = arith::AddIOp::create(b, loc, k, cIndex(b, loc, -1));
          Value previous = arith::MaxSIOp::create(
              b, loc, arith::DivSIOp::create(b, loc, earlier, slots()),
              cIndex(b, loc, 0));
          generation =
              arith::SelectOp::create(b, loc, first, generation, previous);
        }
      } else {
        generation = cIndex(b, loc, 0);
      }
      wait.getParityMutable().assign(parityOf(b, loc, generation, ready));
      return success();
    }
    // The waiter's own count: a bit per slot, the parity of the generation
    // it waits for next, flipped after each wait.
    if (!alloc || !kernelOf(alloc))
      return wait.emitOpError("counts its phases at run time (it is not the "
                              "only wait of a step-1 loop on slot `iv % N`), "
                              "which needs per-thread phase bits, which only "
                              "events allocated in the kernel have");
    Value &slotBits = bits[alloc];
    if (!slotBits) {
      // The alloca at the top of the kernel body, which becomes the
      // kernel's entry block (LLVM promotes only entry-block allocas to
      // registers; the events' initialization branches on the thread
      // before `alloc`); its initial bits where the event is declared, so
      // that a declaration run again (in a loop) starts them again with
      // its barriers.
      OpBuilder atEntry =
          OpBuilder::atBlockBegin(&kernelOf(alloc).getBody().front());
      OpBuilder atAlloc(alloc->getContext());
      atAlloc.setInsertionPointAfter(alloc);
      slotBits = createPhaseBits(atEntry, atAlloc, alloc.getLoc(),
                                 type.getNumElements(), ready);
    }
    Value slot = linearSlot(b, loc, type, wait.getIndices());
    wait.getParityMutable().assign(loadPhaseBit(b, loc, slotBits, slot));
    b.setInsertionPointAfter(wait);
    flipPhaseBit(b, loc, slotBits, slot);
    return success();
  }
};

} // namespace
