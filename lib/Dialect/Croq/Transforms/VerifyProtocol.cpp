//===- VerifyProtocol.cpp - event and future protocol checks --------------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#include "VerifyClusters.h"
#include "VerifyRaces.h"

#include "Croq/Analysis/Futures.h"
#include "Croq/Analysis/Roles.h"
#include "Croq/Dialect/Croq/IR/CroqOps.h"
#include "Croq/Dialect/Croq/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

#include <functional>

namespace mlir::croq {
#define GEN_PASS_DEF_CROQVERIFYPROTOCOLPASS
#include "Croq/Dialect/Croq/Transforms/Passes.h.inc"
} // namespace mlir::croq

using namespace mlir;
using namespace mlir::croq;

namespace {

/// A role: the threads of one croq.inthreads region (or, for `region ==
/// nullptr`, the kernel's code outside every inthreads).
struct Role {
  InThreadsOp region;
  std::optional<int64_t> threads;
  /// Event operations in program order, each loop body taken once.
  SmallVector<Operation *> trace;
};

/// True for a trigger or wait on a local event.
static bool onLocalEvent(Operation *op) {
  Value event = isa<EventTriggerOp>(op) ? cast<EventTriggerOp>(op).getEvent()
                                        : cast<EventWaitOp>(op).getEvent();
  return cast<EventType>(event.getType()).isThreadLocal();
}

/// True for an scf.for whose constant bounds give it no iteration.
static bool neverRuns(Operation *op) {
  auto forOp = dyn_cast<scf::ForOp>(op);
  if (!forOp)
    return false;
  std::optional<APInt> trips = forOp.getStaticTripCount();
  return trips && trips->isZero();
}

/// The loop that never runs around `op`, if any (below `stop`).
static Operation *deadLoopAround(Operation *op, Operation *stop) {
  for (Operation *p = op->getParentOp(); p && p != stop; p = p->getParentOp())
    if (neverRuns(p))
      return p;
  return nullptr;
}

/// Appends the event operations under `op` in program order; each loop
/// body is taken once (the first iteration), and both sides of a branch
/// are assumed possible unless the first iteration decides it. With
/// `runs`, an inthreads nested in the role traced is entered only when
/// `runs` says the threads traced run it.
/// Whether the condition of `ifOp` holds in the first iteration of every
/// loop around it (each counter at its constant lower bound), if that is
/// known: `if (k >= 2) wait empty.at(k - 2);` is skipped the first time.
static std::optional<bool> holdsFirstTime(scf::IfOp ifOp) {
  DenseMap<Value, int64_t> first;
  for (Operation *p = ifOp->getParentOp(); p; p = p->getParentOp())
    if (auto loop = dyn_cast<scf::ForOp>(p))
      if (std::optional<int64_t> lb = getConstantIntValue(loop.getLowerBound()))
        first[loop.getInductionVar()] = *lb;
  std::optional<int64_t> holds = evaluateIndex(ifOp.getCondition(), first);
  if (!holds)
    return std::nullopt;
  return *holds != 0;
}

static void traceEventsFrom(Operation *root, Operation *from,
                            SmallVectorImpl<Operation *> &trace,
                            function_ref<bool(InThreadsOp)> runs) {
  Operation *op = root;
  from->walk<WalkOrder::PreOrder>([&](Operation *inner) {
    // Nothing in a loop of no iterations happens.
    if (neverRuns(inner))
      return WalkResult::skip();
    // The first iteration takes one side of a branch it can decide.
    if (auto ifOp = dyn_cast<scf::IfOp>(inner); ifOp && inner != op)
      if (std::optional<bool> holds = holdsFirstTime(ifOp)) {
        Region &taken = *holds ? ifOp.getThenRegion() : ifOp.getElseRegion();
        for (Block &block : taken)
          for (Operation &nested : block)
            traceEventsFrom(root, &nested, trace, runs);
        return WalkResult::skip();
      }
    // A local event is each thread's own count: it orders nothing between
    // roles (its waits are checked on their own, below).
    if (isa<EventWaitOp, EventTriggerOp>(inner) && !onLocalEvent(inner))
      trace.push_back(inner);
    // Another role; an inthreads nested in the role traced (an elected
    // lane) belongs to it.
    if (inner != op && isa<InThreadsOp>(inner) && !isa<InThreadsOp>(op))
      return WalkResult::skip();
    if (auto nested = dyn_cast<InThreadsOp>(inner);
        nested && inner != op && runs && !runs(nested))
      return WalkResult::skip();
    return WalkResult::advance();
  });
}

static void traceEvents(Operation *op, SmallVectorImpl<Operation *> &trace,
                        function_ref<bool(InThreadsOp)> runs = nullptr) {
  traceEventsFrom(op, op, trace, runs);
}

/// The threads of `role` split by the inthreads regions nested in it that
/// they run: each class (threads that run the same nested regions) is a
/// separate trace of the role, so that `inthreads (p == 1) { trigger e; }`
/// beside `inthreads (p == 2) { wait e; }` orders two warpgroups of one
/// role rather than blocking the role on itself. A role whose nested
/// selections are unknown, or that has none, is one trace.
static SmallVector<SmallVector<Operation *>> roleTraces(InThreadsOp role) {
  // A barrier of the role's threads couples the classes (each waits there
  // for the others), which separate traces would not see: one trace.
  SmallVector<InThreadsOp> nested;
  bool barrier = false;
  role.getBody().walk([&](Operation *op) {
    if (auto inner = dyn_cast<InThreadsOp>(op))
      nested.push_back(inner);
    barrier |= isa<BarrierOp, GridBarrierOp, ClusterBarrierOp>(op);
  });
  std::optional<llvm::BitVector> selected = roleSelection(role);
  SmallVector<llvm::BitVector> selections;
  for (InThreadsOp inner : nested) {
    std::optional<llvm::BitVector> s = roleSelection(inner);
    if (!s || !selected || s->size() != selected->size())
      break;
    selections.push_back(std::move(*s));
  }
  SmallVector<SmallVector<Operation *>> traces;
  if (nested.empty() || barrier || selections.size() != nested.size()) {
    traceEvents(role, traces.emplace_back());
    return traces;
  }
  // One class per distinct set of nested regions a selected thread runs.
  llvm::SetVector<llvm::BitVector> classes;
  for (unsigned thread : selected->set_bits()) {
    llvm::BitVector runs(nested.size());
    for (auto [i, s] : llvm::enumerate(selections))
      if (s.test(thread))
        runs.set(i);
    classes.insert(runs);
  }
  for (const llvm::BitVector &runs : classes)
    traceEvents(role, traces.emplace_back(), [&](InThreadsOp inner) {
      return runs.test(llvm::find(nested, inner) - nested.begin());
    });
  return traces;
}

/// True for a loop that triggers distinct elements, one per iteration
/// (`foreach s in [S] trigger e[s]` with S no larger than the array): the
/// bootstrap pattern, which cannot run ahead.
static bool triggersEachSlotOnce(EventTriggerOp trigger, Operation *loop) {
  auto forOp = dyn_cast<scf::ForOp>(loop);
  auto type = cast<EventType>(trigger.getEvent().getType());
  if (!forOp)
    return false;
  // `trigger e[s]`, `trigger e[0][s]` (the other subscripts fixed outside
  // the loop), `trigger e[base + s]` (a base fixed outside the loop: one
  // consumer's part of a shared array) or `trigger e.at(s)` of a 1-D event.
  Value iv = forOp.getInductionVar();
  // The same in every iteration: defined outside the loop, or computed in
  // it by pure ops from such values (`cw * S` written inline).
  std::function<bool(Value, unsigned)> isInvariant = [&](Value v,
                                                         unsigned depth) {
    if (!forOp->isAncestor(v.getParentRegion()->getParentOp()))
      return true;
    Operation *def = v.getDefiningOp();
    if (!def || depth > 8 || def->getNumRegions() || !isPure(def))
      return false;
    return llvm::all_of(def->getOperands(),
                        [&](Value operand) { return isInvariant(operand, depth + 1); });
  };
  auto stepsWithIv = [&](Value index) {
    if (index == iv)
      return true;
    auto add = index.getDefiningOp<arith::AddIOp>();
    return add && ((add.getLhs() == iv && isInvariant(add.getRhs(), 0)) ||
                   (add.getRhs() == iv && isInvariant(add.getLhs(), 0)));
  };
  std::optional<int64_t> dim;
  if (trigger.getIndices().empty() && type.getRank() == 1 &&
      trigger.getOrder() == iv)
    dim = 0;
  for (auto [d, index] : llvm::enumerate(trigger.getIndices())) {
    if (stepsWithIv(index)) {
      if (dim)
        return false;
      dim = d;
    } else if (!getConstantIntValue(index) && !isInvariant(index, 0)) {
      return false;
    }
  }
  if (!dim || static_cast<int64_t>(trigger.getIndices().size()) !=
                  (trigger.getIndices().empty() ? 0 : type.getRank()))
    return false;
  APInt lb, ub, step;
  return matchPattern(forOp.getLowerBound(), m_ConstantInt(&lb)) &&
         matchPattern(forOp.getUpperBound(), m_ConstantInt(&ub)) &&
         matchPattern(forOp.getStep(), m_ConstantInt(&step)) &&
         lb.getSExtValue() == 0 && step.getSExtValue() == 1 &&
         ub.getSExtValue() <= type.getShape()[*dim];
}

/// The elements of its event that a trigger or wait names over every
/// iteration of the loops and every index of the parallels around it
/// (constant bounds, at most 4096 combinations), or std::nullopt when they
/// cannot be enumerated.
static std::optional<llvm::DenseSet<int64_t>> reachedElements(Operation *op) {
  auto trigger = dyn_cast<EventTriggerOp>(op);
  auto wait = dyn_cast<EventWaitOp>(op);
  Value event = trigger ? trigger.getEvent() : wait.getEvent();
  ValueRange indices = trigger ? trigger.getIndices() : wait.getIndices();
  Value order = trigger ? trigger.getOrder() : wait.getOrder();
  auto type = cast<EventType>(event.getType());
  // Only a full subscript or an order names one element.
  if (!order && indices.size() != type.getShape().size())
    return std::nullopt;
  SmallVector<std::tuple<Value, int64_t, int64_t, int64_t>> vars;
  int64_t combos = 1;
  for (Operation *p = op->getParentOp(); p; p = p->getParentOp()) {
    if (auto loop = dyn_cast<scf::ForOp>(p)) {
      std::optional<int64_t> lb = getConstantIntValue(loop.getLowerBound());
      std::optional<int64_t> ub = getConstantIntValue(loop.getUpperBound());
      std::optional<int64_t> st = getConstantIntValue(loop.getStep());
      if (!lb || !ub || !st || *st <= 0)
        return std::nullopt;
      vars.push_back({loop.getInductionVar(), *lb, std::max(*lb, *ub), *st});
      combos *= std::max<int64_t>(1, (*ub - *lb + *st - 1) / *st);
    } else if (auto level = dyn_cast<ParallelOp>(p)) {
      for (auto [arg, bound] :
           llvm::zip_equal(level.getIndices(), level.getBounds())) {
        std::optional<int64_t> n = getConstantIntValue(bound);
        if (!n)
          return std::nullopt;
        vars.push_back({arg, 0, *n, 1});
        combos *= std::max<int64_t>(1, *n);
      }
    }
    if (combos > 4096)
      return std::nullopt;
  }
  llvm::DenseSet<int64_t> reached;
  DenseMap<Value, int64_t> bindings;
  std::function<bool(size_t)> visit = [&](size_t i) -> bool {
    if (i == vars.size()) {
      if (order) {
        std::optional<int64_t> o = evaluateIndex(order, bindings);
        if (!o)
          return false;
        int64_t n = type.getNumElements();
        reached.insert(((*o % n) + n) % n);
        return true;
      }
      int64_t linear = 0;
      for (auto [index, extent] : llvm::zip_equal(indices, type.getShape())) {
        std::optional<int64_t> c = evaluateIndex(index, bindings);
        if (!c || *c < 0 || *c >= extent)
          return false;
        linear = linear * extent + *c;
      }
      reached.insert(linear);
      return true;
    }
    auto [var, lo, hi, step] = vars[i];
    for (int64_t v = lo; v < hi; v += step) {
      bindings[var] = v;
      if (!visit(i + 1))
        return false;
    }
    return true;
  };
  if (!visit(0))
    return std::nullopt;
  return reached;
}

static Operation *innermostLoop(Operation *op, Operation *stop) {
  for (Operation *p = op->getParentOp(); p && p != stop; p = p->getParentOp())
    if (isa<scf::ForOp, scf::WhileOp>(p))
      return p;
  return nullptr;
}

struct CroqVerifyProtocolPass
    : mlir::croq::impl::CroqVerifyProtocolPassBase<CroqVerifyProtocolPass> {
  void runOnOperation() override {
    bool failedAny = false;
    getOperation()->walk([&](ParallelOp kernel) {
      if (kernel.getLevel() != Level::Block || kernel.getParentParallel())
        return;
      if (failed(verifyKernel(kernel)) || failed(verifyClusterCopies(kernel)) ||
          failed(verifyRoleRaces(kernel)))
        failedAny = true;
    });
    getOperation()->walk([&](Operation *op) {
      Value future = getAsyncFuture(op);
      if (!future || isAwaited(future))
        return;
      InFlightDiagnostic diag = emitError(
          op->getLoc(), "the future of this async operation is never waited");
      diag.attachNote() << "hint: add croq.wait on it before its data is read";
      failedAny = true;
    });
    if (failedAny)
      signalPassFailure();
  }

  LogicalResult verifyKernel(ParallelOp kernel) {
    // Roles.
    SmallVector<Role> roles;
    kernel.getBody().walk<WalkOrder::PreOrder>([&](InThreadsOp region) {
      for (SmallVector<Operation *> &trace : roleTraces(region)) {
        Role role;
        role.region = region;
        role.threads = countRoleThreads(region);
        role.trace = std::move(trace);
        roles.push_back(std::move(role));
      }
      return WalkResult::skip();
    });
    Role shared;
    traceEvents(kernel, shared.trace);
    if (!shared.trace.empty())
      roles.push_back(std::move(shared));
    auto roleOf = [&](Operation *op) -> Role * {
      InThreadsOp region = op->getParentOfType<InThreadsOp>();
      while (region && region->getParentOfType<InThreadsOp>())
        region = region->getParentOfType<InThreadsOp>();
      for (Role &role : roles)
        if (role.region == region)
          return &role;
      return nullptr;
    };

    // Arrival counts: every role that triggers an event must bring the same
    // number of threads.
    llvm::MapVector<Value, SmallVector<Operation *>> triggers, waits;
    llvm::MapVector<Value, SmallVector<Operation *>> localTriggers, localWaits;
    kernel.walk([&](Operation *op) {
      if (!isa<EventTriggerOp, EventWaitOp>(op))
        return;
      bool local = onLocalEvent(op);
      if (auto t = dyn_cast<EventTriggerOp>(op))
        (local ? localTriggers : triggers)[t.getEvent()].push_back(op);
      if (auto w = dyn_cast<EventWaitOp>(op))
        (local ? localWaits : waits)[w.getEvent()].push_back(op);
    });
    // A local event's wait consumes its own threads' triggers: a role that
    // waits on one it never triggers (and that does not start ready) would
    // wait forever.
    for (auto &[event, ops] : localWaits) {
      auto alloc = event.getDefiningOp<EventAllocOp>();
      if (alloc && alloc.getReady())
        continue;
      for (Operation *wait : ops) {
        Role *role = roleOf(wait);
        bool triggered = llvm::any_of(localTriggers.lookup(event),
                                      [&](Operation *t) {
                                        return roleOf(t) == role;
                                      });
        if (triggered)
          continue;
        InFlightDiagnostic diag = emitError(
            wait->getLoc(), "this wait is on a local event, which only its "
                            "own thread triggers, but these threads never "
                            "trigger it: it would never complete");
        diag.attachNote() << "hint: use a shared event to signal between "
                             "threads or roles";
        return failure();
      }
    }
    for (auto &[event, ops] : triggers) {
      auto alloc = event.getDefiningOp<EventAllocOp>();
      if (alloc && alloc.getArrivals())
        continue; // event<N> fixes the count.
      Operation *first = nullptr;
      std::optional<int64_t> firstCount;
      for (Operation *op : ops) {
        Role *role = roleOf(op);
        if (!role || !role->region || !role->threads)
          continue;
        if (!first) {
          first = op;
          firstCount = role->threads;
          continue;
        }
        if (roleOf(first) != role && *role->threads != *firstCount) {
          InFlightDiagnostic diag = emitError(
              op->getLoc(), "arrival counts do not match across roles: ")
              << *role->threads << " threads trigger this event here and "
              << *firstCount << " in another role, so no count completes "
                                "its generations";
          diag.attachNote(first->getLoc()) << "the other role triggers it here";
          diag.attachNote() << "hint: trigger the event from one role, or "
                               "declare it event<N> with the total arrivals";
          return failure();
        }
      }
    }

    // Deadlock: play the first phase. A role advances over triggers and over
    // waits on events that some trigger (or `ready`) has completed.
    // Elements are told apart where the indices are constants: `trigger
    // full[0]` does not complete `full[1]`. A trigger at a run-time index
    // may complete any element; a wait at one needs some element completed.
    llvm::DenseSet<Value> completed;       // every element may be complete
    llvm::DenseSet<Value> anyCompleted;    // some element is complete
    llvm::DenseSet<std::pair<Value, int64_t>> completedElements;
    for (auto &[event, ops] : waits)
      if (auto alloc = event.getDefiningOp<EventAllocOp>(); alloc && alloc.getReady())
        completed.insert(event);
    auto element = [](Value event, ValueRange indices,
                      Value order) -> std::optional<int64_t> {
      auto type = cast<EventType>(event.getType());
      // D2's `e.at(order)` is element order % N of generation order / N:
      // a constant order below N names an element of the first phase.
      if (order) {
        APInt c;
        int64_t elements = type.getNumElements();
        if (!indices.empty() || !matchPattern(order, m_ConstantInt(&c)) ||
            c.getSExtValue() < 0 || c.getSExtValue() >= elements)
          return std::nullopt;
        return c.getSExtValue();
      }
      if (indices.size() != type.getShape().size())
        return std::nullopt;
      int64_t linear = 0;
      for (auto [index, extent] : llvm::zip_equal(indices, type.getShape())) {
        APInt c;
        if (!matchPattern(index, m_ConstantInt(&c)))
          return std::nullopt;
        linear = linear * extent + c.getSExtValue();
      }
      return linear;
    };
    auto satisfied = [&](EventWaitOp wait) {
      Value event = wait.getEvent();
      if (completed.contains(event))
        return true;
      std::optional<int64_t> at =
          element(event, wait.getIndices(), wait.getOrder());
      return at ? completedElements.contains({event, *at})
                : anyCompleted.contains(event);
    };
    // A trigger that several traces hold (the classes of one role that all
    // run it) completes its element only when every one of them has come
    // to it: the event counts the arrivals of all the role's threads.
    llvm::DenseMap<Operation *, int64_t> arrivalsLeft;
    for (const Role &role : roles)
      for (Operation *op : role.trace)
        if (isa<EventTriggerOp>(op))
          ++arrivalsLeft[op];
    SmallVector<size_t> position(roles.size(), 0);
    for (bool progress = true; progress;) {
      progress = false;
      for (auto [i, role] : llvm::enumerate(roles)) {
        while (position[i] < role.trace.size()) {
          Operation *op = role.trace[position[i]];
          if (auto t = dyn_cast<EventTriggerOp>(op);
              t && --arrivalsLeft[op] > 0) {
            // Arrived; the element waits for the other classes.
          } else if (t) {
            Value event = t.getEvent();
            anyCompleted.insert(event);
            if (std::optional<int64_t> at =
                    element(event, t.getIndices(), t.getOrder()))
              completedElements.insert({event, *at});
            else
              completed.insert(event);
          } else if (!satisfied(cast<EventWaitOp>(op))) {
            break;
          }
          ++position[i];
          progress = true;
        }
      }
    }
    for (auto [i, role] : llvm::enumerate(roles)) {
      if (position[i] >= role.trace.size())
        continue;
      auto wait = cast<EventWaitOp>(role.trace[position[i]]);
      // Every trigger of the event sits in a loop that never runs.
      SmallVector<Operation *> eventTriggers = triggers.lookup(wait.getEvent());
      if (!eventTriggers.empty() &&
          llvm::all_of(eventTriggers, [&](Operation *t) {
            return deadLoopAround(t, kernel);
          })) {
        InFlightDiagnostic diag = emitError(
            wait.getLoc(), "this wait can never be satisfied: every trigger "
                           "of its event is in a loop that runs 0 times");
        diag.attachNote(deadLoopAround(eventTriggers.front(), kernel)->getLoc())
            << "this loop has a constant trip count of 0";
        return failure();
      }
      // No trigger anywhere names the element this wait needs.
      if (std::optional<int64_t> at =
              element(wait.getEvent(), wait.getIndices(), wait.getOrder());
          at && !eventTriggers.empty() &&
          llvm::none_of(eventTriggers, [&](Operation *op) {
            auto t = cast<EventTriggerOp>(op);
            std::optional<int64_t> to =
                element(t.getEvent(), t.getIndices(), t.getOrder());
            return !to || *to == *at;
          })) {
        InFlightDiagnostic diag = emitError(
            wait.getLoc(), "deadlock: no trigger completes the element this "
                           "wait needs (linear index ")
            << *at << "); its event's triggers name other elements";
        diag.attachNote(eventTriggers.front()->getLoc())
            << "a trigger of another element";
        return failure();
      }
      InFlightDiagnostic diag = emitError(
          wait.getLoc(), "deadlock: no trigger can satisfy this wait; ")
          << (eventTriggers.empty()
                  ? "nothing triggers its event"
                  : "every trigger of its event comes after a wait that is "
                    "itself blocked");
      if (Operation *alloc = wait.getEvent().getDefiningOp())
        diag.attachNote(alloc->getLoc()) << "the event is declared here";
      if (eventTriggers.empty())
        diag.attachNote() << "hint: trigger the event where what the wait "
                             "needs is ready, or drop the wait";
      else
        diag.attachNote() << "hint: give the event its first generation: "
                             "trigger every slot once before the loop that "
                             "waits on it (the bootstrap `foreach s in [S] "
                             "trigger empty[s];`), or declare it `= ready`";
      return failure();
    }

    // An element a wait reaches in some iteration that no trigger ever
    // names (`trigger full[0]` against `wait full[k % 2]`): that wait
    // blocks for good.
    for (auto &[event, ops] : waits) {
      auto alloc = event.getDefiningOp<EventAllocOp>();
      if (!alloc || alloc.getReady() ||
          cast<EventType>(event.getType()).isThreadLocal())
        continue;
      llvm::DenseSet<int64_t> triggered;
      bool known = !triggers.lookup(event).empty();
      for (Operation *t : triggers.lookup(event)) {
        std::optional<llvm::DenseSet<int64_t>> r = reachedElements(t);
        if (!r || deadLoopAround(t, kernel)) {
          known &= !!r;
          continue;
        }
        triggered.insert(r->begin(), r->end());
      }
      if (!known)
        continue;
      for (Operation *w : ops) {
        // A wait under a condition may skip the iterations that would
        // name the missing element.
        bool conditional = false;
        for (Operation *p = w->getParentOp(); p && p != kernel;
             p = p->getParentOp())
          conditional |= isa<scf::IfOp, scf::IndexSwitchOp, scf::WhileOp>(p);
        std::optional<llvm::DenseSet<int64_t>> r =
            conditional ? std::nullopt : reachedElements(w);
        if (!r || deadLoopAround(w, kernel))
          continue;
        SmallVector<int64_t> missing;
        for (int64_t e : *r)
          if (!triggered.contains(e))
            missing.push_back(e);
        if (missing.empty())
          continue;
        llvm::sort(missing);
        InFlightDiagnostic diag =
            emitError(w->getLoc(), "deadlock: in some iteration this wait "
                                   "needs element ")
            << missing.front() << " (linear index) of its event, which no "
            << "trigger ever completes";
        diag.attachNote(triggers.lookup(event).front()->getLoc())
            << "the event's triggers name other elements";
        diag.attachNote() << "hint: trigger the element each wait needs, "
                             "e.g. `trigger full[st];` with the wait's slot";
        return failure();
      }
    }

    // Deadlock past the first phase: each wait of a role takes a generation
    // of its event of its own (the wait flips that thread's phase), so a role
    // that waits on an event more often than the event's elements complete
    // (its triggers' runs, plus one for a `ready` event's elements) blocks
    // for good. Counted where every count is known: constant trip counts,
    // no branch or while around the op inside its role, one role
    // triggering, straight in its region, and no event<N>.
    auto runs = [&](Operation *op, Operation *stop) -> std::optional<int64_t> {
      int64_t n = 1;
      for (Operation *p = op->getParentOp(); p && p != stop;
           p = p->getParentOp()) {
        if (isa<scf::IfOp, scf::WhileOp, scf::IndexSwitchOp, InThreadsOp>(p))
          return std::nullopt;
        auto loop = dyn_cast<scf::ForOp>(p);
        if (!loop)
          continue;
        std::optional<APInt> trips = loop.getStaticTripCount();
        if (!trips)
          return std::nullopt;
        n *= trips->getSExtValue();
      }
      return n;
    };
    // The elements one trigger or wait covers: all those its subscripts
    // leave free (`trigger e[0]` of e[2][2] covers a row).
    auto covered = [](Operation *op) -> int64_t {
      auto trigger = dyn_cast<EventTriggerOp>(op);
      auto wait = dyn_cast<EventWaitOp>(op);
      Value event = trigger ? trigger.getEvent() : wait.getEvent();
      ValueRange indices = trigger ? trigger.getIndices() : wait.getIndices();
      Value order = trigger ? trigger.getOrder() : wait.getOrder();
      if (order)
        return 1;
      int64_t n = 1;
      for (int64_t extent :
           cast<EventType>(event.getType()).getShape().drop_front(indices.size()))
        n *= extent;
      return n;
    };
    for (auto &[event, ops] : triggers) {
      auto alloc = event.getDefiningOp<EventAllocOp>();
      if (!alloc || alloc.getArrivals() ||
          cast<EventType>(event.getType()).isThreadLocal())
        continue;
      Role *triggerRole = nullptr;
      std::optional<int64_t> completions = 0;
      for (Operation *t : ops) {
        Role *role = roleOf(t);
        if (!role || !role->region || (triggerRole && role != triggerRole)) {
          completions.reset();
          break;
        }
        triggerRole = role;
        // A subscript that differs between the role's threads (`c = p - 1`
        // of two consumer warpgroups) completes several elements per run.
        auto trigger = cast<EventTriggerOp>(t);
        bool perGroup = llvm::any_of(
            llvm::concat<const Value>(
                trigger.getIndices(),
                trigger.getOrder() ? ValueRange(trigger.getOrder())
                                   : ValueRange()),
            dependsOnInstanceIndex);
        std::optional<int64_t> n =
            perGroup ? std::nullopt : runs(t, role->region);
        if (!n) {
          completions.reset();
          break;
        }
        *completions += *n * covered(t);
      }
      if (!completions)
        continue;
      if (alloc.getReady())
        *completions += cast<EventType>(event.getType()).getNumElements();
      llvm::MapVector<Role *, std::pair<int64_t, Operation *>> waited;
      bool known = true;
      for (Operation *w : waits.lookup(event)) {
        Role *role = roleOf(w);
        std::optional<int64_t> n =
            role && role->region ? runs(w, role->region) : std::nullopt;
        if (!n || role == triggerRole) {
          known = false;
          break;
        }
        auto &[count, first] = waited[role];
        count += *n * covered(w);
        if (!first)
          first = w;
      }
      if (!known)
        continue;
      for (auto &[role, entry] : waited) {
        auto [count, first] = entry;
        if (count <= *completions)
          continue;
        InFlightDiagnostic diag =
            emitError(first->getLoc(), "deadlock: this role waits for ")
            << count << " element generations of the event, but its "
            << "triggers complete only " << *completions;
        diag.attachNote(ops.front()->getLoc())
            << "its triggers (the runs of these statements) complete it";
        diag.attachNote() << "hint: trigger the event once per wait, e.g. "
                             "release each slot after consuming it (`trigger "
                             "empty[st];` in the consumer's loop)";
        return failure();
      }
    }

    // Run-ahead: a loop that triggers an event other roles wait on must also
    // wait on something those roles trigger, or it can run more than one
    // phase ahead (parity only tells two phases apart).
    for (auto &[event, ops] : triggers) {
      llvm::SetVector<Role *> waiterRoles;
      for (Operation *w : waits.lookup(event))
        if (Role *r = roleOf(w))
          waiterRoles.insert(r);
      for (Operation *trigger : ops) {
        Role *role = roleOf(trigger);
        if (!role || !role->region)
          continue;
        Operation *loop = innermostLoop(trigger, role->region);
        if (!loop || triggersEachSlotOnce(cast<EventTriggerOp>(trigger), loop))
          continue;
        for (Role *waiter : waiterRoles) {
          if (waiter == role)
            continue;
          bool backPressure = false;
          loop->walk([&](EventWaitOp w) {
            for (Operation *t : triggers.lookup(w.getEvent()))
              if (roleOf(t) == waiter)
                backPressure = true;
          });
          if (backPressure)
            continue;
          InFlightDiagnostic diag = emitError(
              trigger->getLoc(), "this trigger can run more than one phase "
                                 "ahead of its waiter: its loop never waits "
                                 "on an event the waiting role triggers, and "
                                 "a wait only tells two phases apart");
          diag.attachNote(waits.lookup(event).front()->getLoc())
              << "the waiter is here";
          diag.attachNote() << "hint: wait in this loop on an event the "
                               "waiter triggers once it has consumed the "
                               "data (the full / empty pairing)";
          return failure();
        }
      }
    }
    return success();
  }
};

} // namespace
