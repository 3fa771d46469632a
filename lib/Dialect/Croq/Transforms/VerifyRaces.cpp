//===- VerifyRaces.cpp - shared buffers between async roles ---------------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//
//
// `inthreads.async` roles run side by side; croq-insert-barriers orders
// accesses within a role, and between roles only events do. This check
// looks, for each shared buffer that one role writes (W) and another
// accesses (A), for the event pairing that orders them:
//
//   forward: the writer triggers an event after W, and the other role waits
//            on it before A (the `full` of a ring);
//   reverse: the other role triggers an event after A, and the writer waits
//            on it before W (the `empty`: A is done before W overwrites).
//
// "Before" and "after" are program order in the nearest block that holds
// both operations (a wait before the loop that holds A precedes it; one
// after A in the same loop body does not, since it cannot order A's first
// iteration). A read needs the forward pairing, unless the buffer holds
// data written before the roles and the reverse pairing orders the read
// first; two writes need one of the two. (A writer that reuses the buffer
// in a loop without waiting for the reader is croq-verify-protocol's
// run-ahead error.) A pair with no event between the roles at all is a warning
// (the seed chapter's skeleton is such a program, with its events left to
// a later chapter); the other failures are errors. Roles that synchronise with named barriers (`__bar_sync`) are
// left alone, as are buffers reached through device calls or views croq
// cannot trace. Event indices are not compared: the check finds missing
// orderings, not a wait on the wrong slot.
//
//===----------------------------------------------------------------------===//

#include "VerifyRaces.h"

#include "Croq/Analysis/Buffers.h"
#include "Croq/Analysis/Roles.h"
#include "Croq/Dialect/Croq/IR/CroqTypes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::croq;

namespace {

struct Access {
  Operation *op;
  Value root;
  bool write;
};

struct RoleOps {
  InThreadsOp region;
  SmallVector<Access> accesses;
  SmallVector<EventTriggerOp> triggers;
  SmallVector<EventWaitOp> waits;
  bool namedBarriers = false;
};

} // namespace

static bool isSharedMemRef(Value v) {
  auto type = dyn_cast<MemRefType>(v.getType());
  return type && getStorage(type) == Storage::Shared;
}

/// Calls `visit(value, write)` for each shared memref `op` reads or writes.
static void forEachSharedAccess(Operation *op,
                                function_ref<void(Value, bool)> visit) {
  auto add = [&](Value v, bool write) {
    if (isSharedMemRef(v))
      visit(v, write);
  };
  if (auto copy = dyn_cast<DmaCopyOp>(op)) {
    add(copy.getSource(), false);
    add(copy.getTarget(), true);
    return;
  }
  if (auto copy = dyn_cast<TmaCopyOp>(op)) {
    add(copy.getSource(), false);
    add(copy.getTarget(), true);
    return;
  }
  // A device function's accesses are its own business: nothing to pair.
  if (isa<CallOp>(op))
    return;
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects)
    return;
  SmallVector<MemoryEffects::EffectInstance> instances;
  effects.getEffects(instances);
  for (const MemoryEffects::EffectInstance &e : instances) {
    if (!e.getValue())
      continue;
    if (isa<MemoryEffects::Write>(e.getEffect()))
      add(e.getValue(), true);
    else if (isa<MemoryEffects::Read>(e.getEffect()))
      add(e.getValue(), false);
  }
}

/// True when `a` comes before `b` in the nearest block holding both (each
/// through its ancestor there); false when they are in different regions of
/// one operation.
static bool precedes(Operation *a, Operation *b) {
  for (Operation *x = a; x; x = x->getParentOp()) {
    Block *block = x->getBlock();
    if (!block)
      return false;
    if (Operation *y = block->findAncestorOpInBlock(*b))
      return x != y && x->isBeforeInBlock(y);
  }
  return false;
}

/// The innermost loop holding both `a` and `b`, below `stop`.
static Operation *commonLoop(Operation *a, Operation *b, Operation *stop) {
  for (Operation *p = a->getParentOp(); p && p != stop; p = p->getParentOp())
    if (isa<scf::ForOp, scf::WhileOp>(p) && p->isProperAncestor(b))
      return p;
  return nullptr;
}

static bool onSharedEvent(Value event) {
  return !cast<EventType>(event.getType()).isThreadLocal();
}

/// An event `from` triggers after `first` that `to` waits on before
/// `second`; the trigger, or null.
static EventTriggerOp orderingTrigger(const RoleOps &from, Operation *first,
                                      const RoleOps &to, Operation *second) {
  for (EventTriggerOp trigger : from.triggers) {
    if (!precedes(first, trigger))
      continue;
    for (EventWaitOp wait : to.waits)
      if (wait.getEvent() == trigger.getEvent() && precedes(wait, second))
        return trigger;
  }
  return {};
}

/// The memref and indices of an element access (memref.load / store).
static std::optional<std::pair<Value, ValueRange>> elementOf(Operation *op) {
  if (auto load = dyn_cast<memref::LoadOp>(op))
    return std::pair{load.getMemRef(), load.getIndices()};
  if (auto store = dyn_cast<memref::StoreOp>(op))
    return std::pair{store.getMemRef(), store.getIndices()};
  return std::nullopt;
}

/// [lo, hi] of `index` where `op` runs, for `c`, `t + c` or `t - c` with t
/// a thread coordinate narrowed by the conditions around op.
static std::optional<std::pair<int64_t, int64_t>> indexRange(Operation *op,
                                                             Value index) {
  if (std::optional<int64_t> c = getConstantIntValue(index))
    return std::pair{*c, *c};
  int64_t shift = 0;
  if (auto add = index.getDefiningOp<arith::AddIOp>()) {
    std::optional<int64_t> c = getConstantIntValue(add.getRhs());
    if (!c)
      return std::nullopt;
    shift = *c;
    index = add.getLhs();
  } else if (auto sub = index.getDefiningOp<arith::SubIOp>()) {
    std::optional<int64_t> c = getConstantIntValue(sub.getRhs());
    if (!c)
      return std::nullopt;
    shift = -*c;
    index = sub.getLhs();
  }
  auto range = coordinateRange(op, index);
  if (!range)
    return std::nullopt;
  return std::pair{range->first + shift, range->second + shift};
}

/// Two element accesses of one memref that some dimension keeps apart
/// (`s[p]` in a role of p < 32 and in one of 32 <= p < 64).
static bool disjointElements(Operation *a, Operation *b) {
  auto x = elementOf(a), y = elementOf(b);
  if (!x || !y || x->first != y->first || x->second.size() != y->second.size())
    return false;
  for (auto [i, j] : llvm::zip_equal(x->second, y->second)) {
    auto ri = indexRange(a, i), rj = indexRange(b, j);
    if (ri && rj && (ri->second < rj->first || rj->second < ri->first))
      return true;
  }
  return false;
}

LogicalResult mlir::croq::verifyRoleRaces(ParallelOp kernel) {
  SmallVector<RoleOps> roles;
  kernel.getBody().walk<WalkOrder::PreOrder>([&](InThreadsOp region) {
    if (!region.getAsync())
      return WalkResult::skip();
    RoleOps &role = roles.emplace_back();
    role.region = region;
    region.getBody().walk([&](Operation *op) {
      if (auto t = dyn_cast<EventTriggerOp>(op); t && onSharedEvent(t.getEvent()))
        role.triggers.push_back(t);
      if (auto w = dyn_cast<EventWaitOp>(op); w && onSharedEvent(w.getEvent()))
        role.waits.push_back(w);
      role.namedBarriers |= isa<NamedBarrierOp>(op);
      forEachSharedAccess(op, [&](Value v, bool write) {
        Buffers buffers = buffersOf(v);
        if (buffers.unknown)
          return;
        for (Value root : buffers.roots)
          role.accesses.push_back({op, root, write});
      });
    });
    return WalkResult::skip();
  });
  if (roles.size() < 2)
    return success();

  // Buffers written outside every async role (before the roles start).
  llvm::DenseSet<Value> writtenOutside;
  kernel.getBody().walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (auto region = dyn_cast<InThreadsOp>(op); region && region.getAsync())
      return WalkResult::skip();
    forEachSharedAccess(op, [&](Value v, bool write) {
      if (!write)
        return;
      for (Value root : buffersOf(v).roots)
        writtenOutside.insert(root);
    });
    return WalkResult::advance();
  });

  // Warned once per pair of roles and buffer.
  llvm::DenseSet<std::pair<std::pair<Operation *, Operation *>, Value>> warned;
  for (const RoleOps &writer : roles) {
    for (const RoleOps &other : roles) {
      if (&writer == &other || writer.namedBarriers || other.namedBarriers)
        continue;
      for (const Access &w : writer.accesses) {
        if (!w.write)
          continue;
        for (const Access &a : other.accesses) {
          if (a.root != w.root || disjointElements(w.op, a.op))
            continue;
          EventTriggerOp forward = orderingTrigger(writer, w.op, other, a.op);
          EventTriggerOp reverse = orderingTrigger(other, a.op, writer, w.op);
          if (forward)
            continue;
          if (reverse && (a.write || writtenOutside.contains(w.root)))
            continue;
          // The other role waits on the writer's event, but not before
          // this access.
          EventWaitOp late;
          for (EventTriggerOp t : writer.triggers)
            for (EventWaitOp wait : other.waits)
              if (!late && wait.getEvent() == t.getEvent() &&
                  precedes(w.op, t))
                late = wait;
          // A wait later in a loop orders the next iteration's access; an
          // access under an `if` in that loop may run only from the second
          // iteration on (`if (k > 0)`), so only an unconditional one is
          // known to race in the first.
          if (late) {
            Operation *loop = commonLoop(a.op, late, other.region);
            bool guarded = false;
            for (Operation *p = a.op->getParentOp(); loop && p != loop;
                 p = p->getParentOp())
              guarded |= isa<scf::IfOp>(p);
            if (guarded)
              continue;
            InFlightDiagnostic diag = emitError(
                a.op->getLoc(), "this access to a shared buffer that another "
                                "role writes comes before the wait that "
                                "orders it after the write: it races with "
                                "the write");
            diag.attachNote(w.op->getLoc()) << "the other role's write";
            diag.attachNote(late.getLoc()) << "the wait, after the access";
            return failure();
          }
          // No event at all between the two roles on this buffer: the
          // seed chapter's 1P1C skeleton, which leaves the events to a later
          // chapter. It compiles, and says that it races.
          Operation *first = writer.region, *second = other.region;
          if (second < first)
            std::swap(first, second);
          if (!warned.insert({{first, second}, w.root}).second)
            continue;
          InFlightDiagnostic diag = emitWarning(
              a.op->getLoc(), "this access to a shared buffer races with "
                              "another role's write: no event orders them, "
                              "so the result depends on timing");
          diag.attachNote(w.op->getLoc()) << "the other role's write";
          diag.attachNote()
              << "hint: trigger an event after the write (`trigger "
                 "full[s];`) and wait on it before this access (`wait "
                 "full[s];`)";
        }
      }
    }
  }
  return success();
}
