//===- BindTmaFutures.cpp - Waited TMA futures become event waits ---------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//
//
// A TMA load signals its completion on an mbarrier only. `wait f` on the
// future of a `croq.tma.copy async` therefore needs an event that the copy
// completes. This pass finds, for every waited TMA future, the copies that
// may have produced it and the shared buffers they write, gives each buffer
// a slot of an event, binds every such copy to the slot of its buffer and
// turns the waits into event waits.
//
//===----------------------------------------------------------------------===//

#include "Croq/Dialect/Croq/Transforms/Passes.h"

#include "Croq/Analysis/Buffers.h"
#include "Croq/Analysis/DivergenceAnalysis.h"
#include "Croq/Analysis/Roles.h"
#include "Croq/Dialect/Croq/IR/CroqOps.h"
#include "Croq/Dialect/Croq/IR/CroqTypes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/EquivalenceClasses.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::croq {
#define GEN_PASS_DEF_CROQBINDTMAFUTURESPASS
#include "Croq/Dialect/Croq/Transforms/Passes.h.inc"
} // namespace mlir::croq

using namespace mlir;
using namespace mlir::croq;

namespace {

bool isTmaFuture(Value v) {
  auto type = dyn_cast<FutureType>(v.getType());
  return type && type.getKind() == FutureKind::Tma;
}

/// Whether the body of `loop` runs at least once: then its results come
/// from its yield only.
bool runsAtLeastOnce(scf::ForOp loop) {
  std::optional<APInt> trips = loop.getStaticTripCount();
  return trips && !trips->isZero();
}

/// What a future may have come from: the async TMA copies and the
/// placeholders (`tma.any`) whose handles can reach it.
struct Origins {
  llvm::SetVector<TmaCopyOp> copies;
  llvm::SetVector<DmaAnyOp> placeholders;
  /// A value the trace cannot see through (e.g. a function argument).
  Value unknown;
};

class FutureTracer {
public:
  /// The origins of `future`, memoized. The reference stays valid while
  /// other futures are traced.
  const Origins &origins(Value future) {
    auto it = cache.find(future);
    if (it != cache.end())
      return *it->second;
    Origins result;
    SmallVector<Value> worklist{future};
    llvm::SmallPtrSet<Value, 16> visited;
    while (!worklist.empty()) {
      Value v = worklist.pop_back_val();
      if (!visited.insert(v).second)
        continue;
      step(v, worklist, result);
    }
    auto &slot = cache[future];
    slot = std::make_unique<Origins>(std::move(result));
    return *slot;
  }

private:
  /// Pushes the values `v` is a copy of, or records `v` as an origin.
  static void step(Value v, SmallVectorImpl<Value> &worklist, Origins &out) {
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      Operation *parent = arg.getOwner()->getParentOp();
      if (auto loop = dyn_cast<scf::ForOp>(parent)) {
        if (arg.getArgNumber() == 0) // The induction variable.
          return markUnknown(v, out);
        unsigned n = arg.getArgNumber() - 1;
        worklist.push_back(loop.getInitArgs()[n]);
        worklist.push_back(loop.getBody()->getTerminator()->getOperand(n));
        return;
      }
      if (auto loop = dyn_cast<scf::WhileOp>(parent)) {
        unsigned n = arg.getArgNumber();
        if (arg.getOwner() == loop.getBeforeBody()) {
          worklist.push_back(loop.getInits()[n]);
          worklist.push_back(loop.getYieldOp().getOperand(n));
        } else {
          worklist.push_back(loop.getConditionOp().getArgs()[n]);
        }
        return;
      }
      return markUnknown(v, out);
    }
    auto result = cast<OpResult>(v);
    Operation *op = result.getOwner();
    unsigned n = result.getResultNumber();
    if (auto copy = dyn_cast<TmaCopyOp>(op)) {
      out.copies.insert(copy);
      return;
    }
    if (auto any = dyn_cast<DmaAnyOp>(op)) {
      out.placeholders.insert(any);
      return;
    }
    if (isa<SwapOp>(op)) {
      worklist.push_back(op->getOperand(1 - n));
      return;
    }
    if (isa<RotateOp>(op)) {
      worklist.push_back(op->getOperand((n + 1) % op->getNumOperands()));
      return;
    }
    if (auto select = dyn_cast<arith::SelectOp>(op)) {
      worklist.push_back(select.getTrueValue());
      worklist.push_back(select.getFalseValue());
      return;
    }
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      worklist.push_back(loop.getBody()->getTerminator()->getOperand(n));
      if (!runsAtLeastOnce(loop))
        worklist.push_back(loop.getInitArgs()[n]);
      return;
    }
    if (auto loop = dyn_cast<scf::WhileOp>(op)) {
      worklist.push_back(loop.getConditionOp().getArgs()[n]);
      return;
    }
    if (auto region = dyn_cast<InThreadsOp>(op)) {
      // The region's future in its threads, the else value in the others.
      worklist.push_back(region.getYielded(n));
      worklist.push_back(region.getInits()[n]);
      return;
    }
    if (isa<scf::IfOp, scf::IndexSwitchOp>(op)) {
      for (Region &region : op->getRegions())
        if (!region.empty())
          worklist.push_back(region.front().getTerminator()->getOperand(n));
      return;
    }
    markUnknown(v, out);
  }

  static void markUnknown(Value v, Origins &out) {
    if (!out.unknown)
      out.unknown = v;
  }

  llvm::DenseMap<Value, std::unique_ptr<Origins>> cache;
};

/// The subscript of a slot's copy count: the event's subscript, or 0 for a
/// one-slot event.
Value countIndex(OpBuilder &b, Location loc, ArrayRef<Value> slot) {
  return slot.empty() ? Value(arith::ConstantIndexOp::create(b, loc, 0))
                      : slot.front();
}

/// An element of a buffer array: `a[i]` of `shared T [..] a[n]` is a
/// rank-reducing subview of the array's alloc that picks leading indices
/// and keeps the element's whole extent.
struct ArrayPick {
  Value root;
  /// The picked leading indices, and the array's extents there.
  SmallVector<OpFoldResult> indices;
  SmallVector<int64_t> extents;
};

std::optional<ArrayPick> arrayPick(Value buffer) {
  while (auto cast = buffer.getDefiningOp<memref::CastOp>())
    buffer = cast.getSource();
  auto view = buffer.getDefiningOp<memref::SubViewOp>();
  if (!view || !view.getSource().getDefiningOp<memref::AllocOp>())
    return std::nullopt;
  MemRefType array = view.getSourceType();
  int64_t picked = array.getRank() - view.getType().getRank();
  if (picked <= 0 || !array.hasStaticShape())
    return std::nullopt;
  ArrayPick pick{view.getSource(), {}, {}};
  for (auto [d, offset, size, stride] :
       llvm::enumerate(view.getMixedOffsets(), view.getMixedSizes(),
                       view.getMixedStrides())) {
    std::optional<int64_t> n = getConstantIntValue(size);
    if (getConstantIntValue(stride) != 1 || !n)
      return std::nullopt;
    if (static_cast<int64_t>(d) < picked) {
      if (*n != 1)
        return std::nullopt;
      pick.indices.push_back(offset);
      pick.extents.push_back(array.getDimSize(d));
    } else if (getConstantIntValue(offset) != 0 ||
               *n != array.getDimSize(d)) {
      return std::nullopt;
    }
  }
  return pick;
}

/// What a buffer is for slot assignment: the alloc of the array it is an
/// element of (elements `a[0]` and `a[k % 2]` may be the same buffer), or
/// itself.
Value slotOwner(Value buffer) {
  if (std::optional<ArrayPick> pick = arrayPick(buffer))
    return pick->root;
  return buffer;
}

/// The slots of a slot owner: one per element of an array alloc that
/// `arrayPick` takes elements of, else one.
int64_t slotCount(Value owner, int64_t picked) {
  auto type = cast<MemRefType>(owner.getType());
  int64_t n = 1;
  for (int64_t d = 0; d < picked; ++d)
    n *= type.getDimSize(d);
  return n;
}

/// One event per group of buffers that a future may name: slot `i` of the
/// event belongs to `buffers[i]`.
struct BufferGroup {
  /// The buffers, each a plain buffer (one slot) or the alloc of a buffer
  /// array (`shared T [..] a[n]`: one slot per element).
  SmallVector<Value> buffers;
  /// The first slot of each buffer, and the slots in all.
  SmallVector<int64_t> firstSlot;
  int64_t numSlots = 0;
  Value event;
  /// Each thread's count of the copies issued into each slot: a wait is
  /// for the completion of its slot's latest copy, whatever the number of
  /// waits before it.
  Value issued;
  /// Where a `tma.any` may name one of the buffers: per thread and slot,
  /// whether the slot's latest future is a placeholder (then a wait on it
  /// returns at once). A placeholder does not arrive on the event, so every
  /// phase of a slot is a copy's, with the copy's arrival count.
  Value placeholder;
};

/// Binds the TMA futures that `waits` wait on, in one module.
class Binder {
public:
  Binder(ModuleOp module, DominanceInfo &dominance, DataFlowSolver &solver)
      : dominance(dominance), solver(solver) {
    unsigned next = 0;
    module.walk<WalkOrder::PreOrder>([&](Operation *op) { order[op] = next++; });
  }

  /// The error at `copy`, a copy into the buffer of a future its inthreads
  /// region yields that is not the yielded copy; the note at `where`.
  static LogicalResult secondCopyError(TmaCopyOp copy, Location where,
                                       StringRef note) {
    InFlightDiagnostic diag = copy.emitOpError(
        "copies into a buffer whose TMA future the inthreads region around "
        "it yields, but is not the copy it yields: the threads outside the "
        "region would count one copy fewer");
    diag.attachNote(where) << note;
    diag.attachNote() << "hint: make one copy into the buffer in the region, "
                         "the one whose future it yields";
    return diag;
  }

  /// Finds the copy behind each future an inthreads region yields, and
  /// checks what lets the threads outside the region count it as the
  /// region's threads do: the copy is made directly in the region's body
  /// (or yielded so by a region nested there), into the buffer of the
  /// future it replaces, and it is the region's only copy into that buffer.
  LogicalResult findCarried(ModuleOp module) {
    // The copy each result names; none where the else value passes through.
    llvm::DenseMap<std::pair<Operation *, unsigned>, TmaCopyOp> yieldedCopy;
    WalkResult walk = module.walk([&](InThreadsOp region) -> WalkResult {
      Block &body = region.getBody().front();
      llvm::SmallPtrSet<Operation *, 4> yielded;
      llvm::SetVector<Value> yieldedBuffers;
      for (unsigned n = 0, e = region.getNumResults(); n < e; ++n) {
        Value init = region.getInits()[n];
        Value value = region.getYielded(n);
        if (value == init)
          continue;
        TmaCopyOp copy = value.getDefiningOp<TmaCopyOp>();
        if (copy && copy->getBlock() != &body)
          copy = nullptr;
        if (auto inner = value.getDefiningOp<InThreadsOp>();
            inner && inner->getBlock() == &body) {
          unsigned k = cast<OpResult>(value).getResultNumber();
          if (inner.getInits()[k] == init) {
            copy = yieldedCopy.lookup({inner, k});
            if (!copy)
              continue; // Passes through the inner region as well.
          }
        }
        if (!copy) {
          InFlightDiagnostic diag = region.emitOpError(
              "yields a TMA future that is not a copy made directly in its "
              "body: the threads outside the region cannot tell which copy "
              "to count");
          diag.attachNote(value.getLoc()) << "the future comes from here";
          diag.attachNote() << "hint: make the copy directly in the region's "
                               "body, not under an if or a loop, and swap, "
                               "rotate or select futures outside the region";
          return diag;
        }
        auto data = copy.getTarget().getDefiningOp<FutureDataOp>();
        if (!data || data.getFuture() != init) {
          // Into the data of an earlier copy of the region: the buffer is
          // copied twice.
          if (auto earlier =
                  data ? data.getFuture().getDefiningOp<TmaCopyOp>() : nullptr;
              earlier && region->isProperAncestor(earlier))
            return secondCopyError(earlier, copy.getLoc(),
                                   "the copy it yields");
          InFlightDiagnostic diag = copy.emitOpError(
              "makes the TMA future an inthreads region yields, but not in "
              "the buffer of the future it replaces, which the threads "
              "outside the region keep");
          diag.attachNote(region.getLoc()) << "the region is here";
          diag.attachNote() << "hint: copy into the future's own buffer "
                               "(`f = tma.copy.async ... => shared;` for an f "
                               "declared before the region), so that every "
                               "thread reads the data where the copy puts it";
          return diag;
        }
        yieldedCopy[{region, n}] = copy;
        yielded.insert(copy);
        targetBuffers(copy, yieldedBuffers);
        carried[copy].push_back({region, n});
      }
      if (yielded.empty())
        return WalkResult::advance();
      // Another copy into a yielded buffer would be counted only by the
      // region's threads.
      WalkResult others = region.getBody().walk([&](TmaCopyOp other) {
        if (yielded.contains(other))
          return WalkResult::advance();
        llvm::SetVector<Value> buffers;
        targetBuffers(other, buffers);
        if (llvm::none_of(buffers,
                          [&](Value b) { return yieldedBuffers.contains(b); }))
          return WalkResult::advance();
        return WalkResult(
            secondCopyError(other, region.getLoc(), "the region is here"));
      });
      return others;
    });
    return failure(walk.wasInterrupted());
  }

  /// Fails, with an error at the op, where a wait cannot be bound.
  LogicalResult bind(ArrayRef<WaitOp> waits) {
    // Buffers that one future may name, or one copy may write, share an
    // event.
    llvm::EquivalenceClasses<Value> classes;
    llvm::SetVector<TmaCopyOp> copies;
    llvm::DenseMap<TmaCopyOp, llvm::SetVector<Value>> copyBuffers;
    llvm::SetVector<DmaAnyOp> placeholders;
    auto join = [&](const llvm::SetVector<Value> &buffers) {
      for (Value b : buffers) {
        Value owner = slotOwner(b);
        if (std::optional<ArrayPick> pick = arrayPick(b))
          picked[owner] = std::max<int64_t>(picked.lookup(owner),
                                            pick->indices.size());
        classes.insert(owner);
        classes.unionSets(slotOwner(buffers.front()), owner);
      }
    };
    for (WaitOp wait : waits) {
      for (Value future : wait.getFutures()) {
        if (!isTmaFuture(future))
          continue;
        const Origins &from = tracer.origins(future);
        if (failed(checkWaitable(wait, from)))
          return failure();
        // A store's wait stays a croq.wait: the lowering waits for the
        // executing threads' bulk stores.
        if (isStoreFuture(from)) {
          for (TmaCopyOp store : from.copies)
            storeWaits[store].push_back(wait);
          continue;
        }
        join(futureBuffers(from));
        placeholders.insert(from.placeholders.begin(), from.placeholders.end());
        for (TmaCopyOp copy : from.copies) {
          if (!copies.insert(copy))
            continue;
          targetBuffers(copy, copyBuffers[copy]);
          join(copyBuffers[copy]);
        }
      }
    }

    // One event per class, at the top of the kernel of its first copy or
    // placeholder.
    llvm::DenseMap<Value, BufferGroup *> groupOf;
    SmallVector<std::unique_ptr<BufferGroup>> groups;
    SmallVector<std::pair<Operation *, Value>> members;
    for (TmaCopyOp copy : copies)
      members.push_back({copy, slotOwner(copyBuffers[copy].front())});
    llvm::DenseSet<Value> withPlaceholders;
    for (DmaAnyOp any : placeholders) {
      members.push_back({any, slotOwner(any.getBuffer())});
      withPlaceholders.insert(
          classes.getLeaderValue(slotOwner(any.getBuffer())));
    }
    for (auto [origin, member] : members) {
      Value leader = classes.getLeaderValue(member);
      if (groupOf.count(leader))
        continue;
      auto group = std::make_unique<BufferGroup>();
      for (auto it = classes.findLeader(leader); it != classes.member_end();
           ++it)
        group->buffers.push_back(*it);
      // Slots in program order of the buffers.
      llvm::sort(group->buffers, [&](Value a, Value b) {
        return position(a) < position(b);
      });
      for (Value buffer : group->buffers) {
        group->firstSlot.push_back(group->numSlots);
        group->numSlots += slotCount(buffer, picked.lookup(buffer));
      }
      ParallelOp kernel = blockParallelOf(origin);
      if (!kernel)
        return origin->emitOpError("makes a TMA future outside any kernel");
      OpBuilder b(origin->getContext());
      b.setInsertionPointToStart(&kernel.getBody().front());
      SmallVector<int64_t> shape;
      if (group->numSlots > 1)
        shape.push_back(group->numSlots);
      auto type = EventType::get(origin->getContext(), MemoryKind::Shared, shape);
      group->event =
          EventAllocOp::create(b, origin->getLoc(), type, UnitAttr(), IntegerAttr())
              .getEvent();
      // Private arrays of one element per slot, all zero.
      Location loc = origin->getLoc();
      auto perSlot = [&](Type element) -> Value {
        auto type = MemRefType::get(
            {group->numSlots}, element,
            MemRefLayoutAttrInterface(),
            gpu::AddressSpaceAttr::get(b.getContext(),
                                       gpu::AddressSpace::Private));
        Value array = memref::AllocaOp::create(b, loc, type);
        Value zero = arith::ConstantIntOp::create(
            b, loc, 0, element.getIntOrFloatBitWidth());
        for (int64_t i = 0, e = group->numSlots; i < e; ++i)
          memref::StoreOp::create(
              b, loc, zero, array,
              ValueRange{arith::ConstantIndexOp::create(b, loc, i)});
        return array;
      };
      group->issued = perSlot(b.getI32Type());
      if (withPlaceholders.contains(leader))
        group->placeholder = perSlot(b.getI8Type());
      groupOf[leader] = group.get();
      groups.push_back(std::move(group));
    }
    auto groupFor = [&](Value buffer) {
      return groupOf.lookup(classes.getLeaderValue(slotOwner(buffer)));
    };

    // Each copy completes its buffer's slot.
    for (TmaCopyOp copy : copies) {
      OpBuilder b(copy->getContext());
      b.setInsertionPointAfter(copy);
      BufferGroup *group = groupFor(copyBuffers[copy].front());
      FailureOr<SmallVector<Value>> slot =
          slotOf(b, copy.getLoc(), *group, copyBuffers[copy], copy.getTarget(), copy);
      if (failed(slot))
        return failure();
      complete(b, copy.getLoc(), *group, *slot, copy.getFuture());
      // The threads outside a region that yields the future count the copy
      // after it, so that every thread waits for the same phase.
      for (auto [region, n] : carried.lookup(copy)) {
        Location loc = region.getLoc();
        b.setInsertionPointAfter(region);
        Value one = arith::ConstantIntOp::create(b, loc, 1, 1);
        Value outside =
            arith::XOrIOp::create(b, loc, region.getPredicate(), one);
        auto branch = scf::IfOp::create(b, loc, outside, /*withElse=*/false);
        b.setInsertionPointToStart(branch.thenBlock());
        Value data = FutureDataOp::create(
            b, loc, cast<FutureType>(region.getResult(n).getType()).getDataType(),
            region.getResult(n));
        FailureOr<SmallVector<Value>> at =
            slotOf(b, loc, *group, copyBuffers[copy], data, branch);
        if (failed(at))
          return failure();
        count(b, loc, *group, *at);
        if (data.use_empty())
          data.getDefiningOp()->erase();
      }
    }

    // Each placeholder marks its buffer's slot, so that a wait that
    // receives it returns (as a wait on a dma.any does).
    for (DmaAnyOp any : placeholders) {
      OpBuilder b(any->getContext());
      b.setInsertionPointAfter(any);
      BufferGroup *group = groupFor(any.getBuffer());
      llvm::SetVector<Value> buffer;
      buffer.insert(any.getBuffer());
      FailureOr<SmallVector<Value>> slot =
          slotOf(b, any.getLoc(), *group, buffer, any.getBuffer(), any);
      if (failed(slot))
        return failure();
      markPlaceholder(b, any.getLoc(), *group, *slot, true);
    }

    for (auto &[store, waitsOfStore] : storeWaits)
      if (failed(checkStoreReuse(store, waitsOfStore)))
        return failure();

    // Each wait waits on the slots of its futures' buffers.
    for (WaitOp wait : waits) {
      OpBuilder b(wait);
      SmallVector<Value> others;
      for (Value future : wait.getFutures()) {
        if (!isTmaFuture(future) || isStoreFuture(tracer.origins(future))) {
          others.push_back(future);
          continue;
        }
        llvm::SetVector<Value> buffers = futureBuffers(tracer.origins(future));
        BufferGroup *group = groupFor(buffers.front());
        Value data = FutureDataOp::create(
            b, wait.getLoc(), cast<FutureType>(future.getType()).getDataType(),
            future);
        FailureOr<SmallVector<Value>> slot =
            slotOf(b, wait.getLoc(), *group, buffers, data, wait);
        if (failed(slot))
          return failure();
        waitLatest(b, wait.getLoc(), *group, *slot);
        if (data.use_empty())
          data.getDefiningOp()->erase();
      }
      if (others.empty()) {
        wait.erase();
        continue;
      }
      wait.getFuturesMutable().assign(others);
      // What is left of TMA futures are stores': the lowering waits for
      // the executing threads' bulk stores (the attribute records that this
      // pass has checked them).
      if (llvm::any_of(others, isTmaFuture))
        wait->setAttr(kTmaStoreWaitAttr, UnitAttr::get(wait.getContext()));
    }
    return success();
  }

private:
  /// Arrives on `slot` of the group's event, bound to the copy of
  /// `future`, and counts one more phase of the slot.
  static void complete(OpBuilder &b, Location loc, const BufferGroup &group,
                       ArrayRef<Value> slot, Value future) {
    EventTriggerOp::create(b, loc, group.event, slot, Value(),
                           ValueRange{future},
                           /*expectTx=*/IntegerAttr(), /*issuer=*/IssuerAttr());
    count(b, loc, group, slot);
  }

  /// Counts one more phase of `slot`, whose latest future is a copy's.
  static void count(OpBuilder &b, Location loc, const BufferGroup &group,
                    ArrayRef<Value> slot) {
    Value at = countIndex(b, loc, slot);
    Value count = memref::LoadOp::create(b, loc, group.issued, at);
    Value one = arith::ConstantIntOp::create(b, loc, 1, 32);
    memref::StoreOp::create(b, loc, arith::AddIOp::create(b, loc, count, one),
                            group.issued, at);
    markPlaceholder(b, loc, group, slot, false);
  }

  /// Records whether the latest future of `slot` is a placeholder, where
  /// the group has placeholders.
  static void markPlaceholder(OpBuilder &b, Location loc,
                              const BufferGroup &group, ArrayRef<Value> slot,
                              bool isPlaceholder) {
    if (!group.placeholder)
      return;
    memref::StoreOp::create(
        b, loc, arith::ConstantIntOp::create(b, loc, isPlaceholder, 8),
        group.placeholder, countIndex(b, loc, slot));
  }

  /// Waits for the phase of `slot` that its latest copy completes: phase
  /// number (issued - 1), whose parity is that number's low bit. Where the
  /// slot's latest future is a placeholder, returns at once.
  static void waitLatest(OpBuilder &b, Location loc, const BufferGroup &group,
                         ArrayRef<Value> slot) {
    OpBuilder::InsertionGuard guard(b);
    if (group.placeholder) {
      Value marked = memref::LoadOp::create(b, loc, group.placeholder,
                                            countIndex(b, loc, slot));
      Value pending = arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::eq, marked,
          arith::ConstantIntOp::create(b, loc, 0, 8));
      auto branch = scf::IfOp::create(b, loc, pending, /*withElseRegion=*/false);
      b.setInsertionPointToStart(branch.thenBlock());
    }
    Value count =
        memref::LoadOp::create(b, loc, group.issued, countIndex(b, loc, slot));
    Value one = arith::ConstantIntOp::create(b, loc, 1, 32);
    Value phase = arith::SubIOp::create(b, loc, count, one);
    Value parity = arith::TruncIOp::create(b, loc, b.getI1Type(), phase);
    EventWaitOp::create(b, loc, group.event, slot, Value(), parity);
  }

  /// The buffers a TMA copy may write: its target, or, where the target is
  /// the data of an earlier future (`f = tma.copy ... => shared` with `f`
  /// declared), the buffers of that future's origins.
  void targetBuffers(TmaCopyOp copy, llvm::SetVector<Value> &out) {
    SmallVector<Value> worklist{copy.getTarget()};
    llvm::SmallPtrSet<Value, 8> visited;
    while (!worklist.empty()) {
      Value target = worklist.pop_back_val();
      if (!visited.insert(target).second)
        continue;
      auto data = target.getDefiningOp<FutureDataOp>();
      if (!data) {
        out.insert(target);
        continue;
      }
      const Origins &from = tracer.origins(data.getFuture());
      for (TmaCopyOp earlier : from.copies)
        worklist.push_back(earlier.getTarget());
      for (DmaAnyOp any : from.placeholders)
        worklist.push_back(any.getBuffer());
      if (from.unknown)
        out.insert(target);
    }
  }

  /// The buffers a future may hold the data of.
  llvm::SetVector<Value> futureBuffers(const Origins &from) {
    llvm::SetVector<Value> buffers;
    for (TmaCopyOp copy : from.copies)
      targetBuffers(copy, buffers);
    for (DmaAnyOp any : from.placeholders)
      buffers.insert(any.getBuffer());
    return buffers;
  }

  /// The op between `origin` and the region it shares with `wait` that may
  /// run `origin` on only some of the threads that run `wait`: an inthreads
  /// role, or a branch or loop whose condition or trip count varies within
  /// the block. Null where every thread that waits made the future (each
  /// thread counts its own copies, so one that did not would not wait).
  Operation *narrowingParent(Operation *origin, WaitOp wait) {
    for (Operation *parent = origin->getParentOp(); parent;
         parent = parent->getParentOp()) {
      if (parent->isProperAncestor(wait))
        return nullptr;
      if (auto parallel = dyn_cast<ParallelOp>(parent)) {
        if (parallel.getLevel() == Level::Block)
          return nullptr;
        continue; // Every instance runs its body.
      }
      // A region that yields the future counts its copy in the threads
      // outside it too.
      if (auto region = dyn_cast<InThreadsOp>(parent);
          region && llvm::any_of(carried.lookup(origin), [&](auto &entry) {
            return entry.first == region;
          }))
        continue;
      // A role whose predicate the analysis cannot scope counts as narrow.
      std::optional<UniformScope> control = getControlScope(solver, parent);
      if (control ? *control < UniformScope::Block : isa<InThreadsOp>(parent))
        return parent;
    }
    return nullptr;
  }

  LogicalResult checkThreads(WaitOp wait, Operation *origin) {
    Operation *narrowing = narrowingParent(origin, wait);
    if (!narrowing)
      return success();
    InFlightDiagnostic diag = wait.emitOpError(
        "waits on a TMA future that some of the waiting threads did not make");
    diag.attachNote(origin->getLoc()) << "the future is made here";
    diag.attachNote(narrowing->getLoc())
        << "only some threads of the block run this "
        << (isa<InThreadsOp>(narrowing) ? "role" : "branch");
    diag.attachNote()
        << "hint: make the future where every thread that waits on it runs "
           "(croq elects the one thread that issues a TMA copy, so the copy "
           "needs no thread guard), or wait inside the same role or branch";
    return diag;
  }

  /// Whether a future comes from TMA stores (and placeholders) only.
  static bool isStoreFuture(const Origins &from) {
    return !from.copies.empty() &&
           llvm::none_of(from.copies, [](TmaCopyOp c) { return c.isLoad(); });
  }

  /// The error where `store`'s tile may be written again before a wait on
  /// its future: the store reads the tile until then. Every write to the
  /// tile's buffer in the store's role that can follow the store (after it
  /// in program order, or before it in a loop around both) must come after
  /// one of `waits`, which must come after the store where the write does.
  /// Writes in other roles are other threads', which an event orders after
  /// the storing role's wait.
  LogicalResult checkStoreReuse(TmaCopyOp store, ArrayRef<WaitOp> waits) {
    Buffers tile = buffersOf(store.getSource());
    if (tile.unknown)
      return success();
    ParallelOp kernel = blockParallelOf(store);
    if (!kernel)
      return success();
    InThreadsOp role = roleOf(store);
    auto writesTile = [&](Operation *op) {
      auto effects = dyn_cast<MemoryEffectOpInterface>(op);
      if (!effects)
        return false;
      SmallVector<MemoryEffects::EffectInstance> instances;
      effects.getEffects(instances);
      return llvm::any_of(instances, [&](MemoryEffects::EffectInstance &e) {
        Value v = e.getValue();
        return isa<MemoryEffects::Write>(e.getEffect()) && v &&
               isa<MemRefType>(v.getType()) && buffersOf(v).overlaps(tile);
      });
    };
    WalkResult walk = kernel.getBody().walk([&](Operation *write) {
      if (write == store.getOperation() || !writesTile(write) ||
          roleOf(write) != role || !mayFollow(store, write))
        return WalkResult::advance();
      bool storeFirst = dominance.properlyDominates(store.getOperation(), write);
      bool waited = llvm::any_of(waits, [&](WaitOp wait) {
        return dominance.properlyDominates(wait.getOperation(), write) &&
               (!storeFirst ||
                dominance.properlyDominates(store.getOperation(), wait));
      });
      if (waited)
        return WalkResult::advance();
      InFlightDiagnostic diag = write->emitOpError(
          "writes a shared tile that an asynchronous TMA store may still be "
          "reading");
      diag.attachNote(store.getLoc()) << "the store is here";
      diag.attachNote() << "hint: wait on the store's future before writing "
                           "the tile again (`wait f;`), or drop .async";
      return WalkResult::interrupt();
    });
    return failure(walk.wasInterrupted());
  }

  /// Whether `later` may run after `first` in the same thread: it follows
  /// in the block that holds both, or precedes there inside a loop.
  static bool mayFollow(Operation *first, Operation *later) {
    Block *common = first->getBlock();
    while (common && !common->findAncestorOpInBlock(*later))
      common = common->getParentOp() ? common->getParentOp()->getBlock()
                                     : nullptr;
    if (!common)
      return false;
    Operation *a = common->findAncestorOpInBlock(*first);
    Operation *b = common->findAncestorOpInBlock(*later);
    if (a->isBeforeInBlock(b))
      return true;
    for (Operation *p = common->getParentOp(); p; p = p->getParentOp()) {
      if (isa<scf::ForOp, scf::WhileOp>(p))
        return true;
      if (auto parallel = dyn_cast<ParallelOp>(p);
          parallel && parallel.getLevel() == Level::Block)
        return false;
    }
    return false;
  }

  /// The error for a waited future that cannot be bound, or success.
  LogicalResult checkWaitable(WaitOp wait, const Origins &from) {
    if (from.unknown) {
      InFlightDiagnostic diag = wait.emitOpError(
          "waits on a TMA future whose copy this function cannot see");
      diag.attachNote(from.unknown.getLoc()) << "the future comes from here";
      diag.attachNote()
          << "hint: wait where the tma.copy.async is, or bind the copy to an "
             "event (`trigger e after f;`) and wait on the event";
      return diag;
    }
    for (DmaAnyOp any : from.placeholders)
      if (failed(checkThreads(wait, any)))
        return failure();
    for (TmaCopyOp copy : from.copies) {
      if (failed(checkThreads(wait, copy)))
        return failure();
      if (!copy.isLoad()) {
        auto load = llvm::find_if(from.copies,
                                  [](TmaCopyOp c) { return c.isLoad(); });
        if (load == from.copies.end())
          continue;
        InFlightDiagnostic diag = wait.emitOpError(
            "waits on a future that may be a TMA load's or a TMA store's");
        diag.attachNote(copy.getLoc()) << "the store is here";
        diag.attachNote(TmaCopyOp(*load)->getLoc()) << "the load is here";
        diag.attachNote() << "hint: keep the futures of loads and of stores "
                             "in different variables";
        return diag;
      }
      Operation *binder = nullptr;
      for (Operation *user : copy.getFuture().getUsers())
        if (auto trigger = dyn_cast<EventTriggerOp>(user);
            trigger && llvm::is_contained(trigger.getAfter(), copy.getFuture()))
          binder = trigger;
      if (binder) {
        InFlightDiagnostic diag = wait.emitOpError(
            "waits on a TMA future that is also bound to an event");
        diag.attachNote(binder->getLoc()) << "the copy is bound here";
        diag.attachNote() << "hint: wait on the event, or drop the binding "
                             "and wait on the future alone";
        return diag;
      }
    }
    return success();
  }

  /// The event subscript for `memref`, which is one of `candidates` (all in
  /// `group`): none for a one-slot event; a constant where there is one
  /// plain candidate; the element's slot where `memref` picks an element of
  /// an array; else the slot of the buffer (or array element) at the same
  /// address.
  FailureOr<SmallVector<Value>> slotOf(OpBuilder &b, Location loc,
                                       const BufferGroup &group,
                                       const llvm::SetVector<Value> &candidates,
                                       Value memref, Operation *anchor) {
    if (group.numSlots == 1)
      return SmallVector<Value>{};
    auto firstSlot = [&](Value owner) {
      return group.firstSlot[llvm::find(group.buffers, owner) -
                             group.buffers.begin()];
    };
    auto constant = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    llvm::SetVector<Value> owners;
    for (Value candidate : candidates)
      owners.insert(slotOwner(candidate));
    // An element picked here: its slot from its indices.
    if (std::optional<ArrayPick> pick = arrayPick(memref);
        pick && owners.size() == 1 && owners.front() == pick->root) {
      Value slot;
      for (auto [index, extent] : llvm::zip(pick->indices, pick->extents)) {
        Value i = getValueOrCreateConstantIndexOp(b, loc, index);
        slot = slot ? arith::AddIOp::create(
                          b, loc,
                          arith::MulIOp::create(b, loc, slot, constant(extent)),
                          i)
                    : i;
      }
      if (int64_t first = firstSlot(pick->root))
        slot = arith::AddIOp::create(b, loc, slot, constant(first));
      return SmallVector<Value>{slot};
    }
    if (owners.size() == 1 && !arrayPick(candidates.front()))
      return SmallVector<Value>{constant(firstSlot(owners.front()))};
    // The address of the first element identifies a buffer, and the offset
    // from an array's first element its element.
    auto address = [&](Value m) -> Value {
      Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, m);
      auto meta = memref::ExtractStridedMetadataOp::create(b, loc, m);
      int64_t bytes =
          getStorageBytes(cast<MemRefType>(m.getType()).getElementType());
      Value offset = arith::MulIOp::create(
          b, loc, meta.getOffset(), constant(bytes));
      return arith::AddIOp::create(b, loc, base, offset);
    };
    Value here = address(memref);
    Value slot;
    for (Value owner : owners) {
      int64_t slots = slotCount(owner, picked.lookup(owner));
      // The first plain buffer is the default: its address is not needed.
      if (!slot && slots == 1) {
        slot = constant(firstSlot(owner));
        continue;
      }
      if (!dominance.properlyDominates(owner, anchor)) {
        InFlightDiagnostic diag =
            emitError(loc, "cannot tell which buffer this TMA future names: "
                           "a buffer it may name is not visible here");
        diag.attachNote(owner.getLoc()) << "the buffer is declared here";
        return failure();
      }
      Value start = address(owner);
      Value mine;
      if (slots == 1) {
        Value same = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                           here, start);
        mine = arith::SelectOp::create(b, loc, same,
                                       constant(firstSlot(owner)), slot);
      } else {
        // Element (here - start) / (bytes of one element) of the array.
        auto type = cast<MemRefType>(owner.getType());
        int64_t element = getStorageBytes(type.getElementType());
        for (int64_t d = picked.lookup(owner); d < type.getRank(); ++d)
          element *= type.getDimSize(d);
        Value offset = arith::SubIOp::create(b, loc, here, start);
        Value index = arith::DivUIOp::create(b, loc, offset, constant(element));
        mine = arith::AddIOp::create(b, loc, index, constant(firstSlot(owner)));
        if (slot) {
          Value after = arith::CmpIOp::create(
              b, loc, arith::CmpIPredicate::uge, here, start);
          Value before = arith::CmpIOp::create(
              b, loc, arith::CmpIPredicate::ult, here,
              arith::AddIOp::create(b, loc, start, constant(element * slots)));
          Value inside = arith::AndIOp::create(b, loc, after, before);
          mine = arith::SelectOp::create(b, loc, inside, mine, slot);
        }
      }
      slot = mine;
    }
    return SmallVector<Value>{slot};
  }

  /// Program order of a value's definition.
  std::pair<unsigned, unsigned> position(Value v) {
    if (Operation *def = v.getDefiningOp())
      return {order.lookup(def), cast<OpResult>(v).getResultNumber()};
    auto arg = cast<BlockArgument>(v);
    return {order.lookup(arg.getOwner()->getParentOp()), arg.getArgNumber()};
  }

  FutureTracer tracer;
  /// The waits on each asynchronous TMA store's future.
  llvm::MapVector<TmaCopyOp, SmallVector<WaitOp>> storeWaits;
  /// For each buffer array whose elements futures name: how many leading
  /// dimensions its elements pick.
  llvm::DenseMap<Value, int64_t> picked;
  /// The inthreads regions (and their result) a copy's future leaves.
  llvm::DenseMap<Operation *, SmallVector<std::pair<InThreadsOp, unsigned>, 1>>
      carried;
  llvm::DenseMap<Operation *, unsigned> order;
  DominanceInfo &dominance;
  DataFlowSolver &solver;
};

struct BindTmaFutures
    : croq::impl::CroqBindTmaFuturesPassBase<BindTmaFutures> {
  void runOnOperation() override {
    SmallVector<WaitOp> waits;
    bool regionsYield = false;
    getOperation().walk([&](Operation *op) {
      if (auto wait = dyn_cast<WaitOp>(op);
          wait && llvm::any_of(wait.getFutures(), isTmaFuture))
        waits.push_back(wait);
      if (auto region = dyn_cast<InThreadsOp>(op))
        regionsYield |= region.getNumResults() != 0;
    });
    if (waits.empty() && !regionsYield)
      return;
    auto &uniformity = getAnalysis<UniformityInfo>();
    if (!uniformity.isValid())
      return signalPassFailure();
    Binder binder(getOperation(), getAnalysis<DominanceInfo>(),
                  uniformity.getSolver());
    if (failed(binder.findCarried(getOperation())) ||
        failed(binder.bind(waits)))
      signalPassFailure();
  }
};

} // namespace
