//===- PipelineMma.cpp - where warpgroup MMA commits and waits go ---------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//
//
// wgmma is asynchronous: a batch of issued MMAs completes only when a
// `wgmma.wait_group` says so. This pass decides where those waits go and
// writes them as croq.mma.commit ops: one K iteration stays in flight in
// consumer loops (the releases of each iteration's stages move one
// iteration later), and a trigger that publishes or releases what a role's
// MMAs touched first commits and waits for them, as does a copy or an
// element write into a buffer the role's MMAs read and a thread's first
// read or write of accumulator registers (croq.mma.element / set_element /
// scale).
//
//===----------------------------------------------------------------------===//

#include "Common.h"
#include "Croq/Analysis/Roles.h"
#include "Croq/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::croq {
#define GEN_PASS_DEF_CROQPIPELINEMMAPASS
#include "Croq/Conversion/Passes.h.inc"
} // namespace mlir::croq

using namespace mlir;
using namespace mlir::croq;
using namespace mlir::croq::detail;

/// Where a walk out of regions stops: at the kernel (outermost parallel)
/// and at the outermost inthreads region, or with `rolesOnly` only at an
/// outermost inthreads.async role (a plain inthreads is then a branch).
static bool endsWalk(Operation *parent, bool rolesOnly) {
  if (!parent)
    return true;
  if (auto parallel = dyn_cast<ParallelOp>(parent))
    return !parallel.getParentParallel();
  auto role = dyn_cast<InThreadsOp>(parent);
  return role && (!rolesOnly || role.getAsync()) &&
         !parent->getParentOfType<InThreadsOp>();
}

/// True when warpgroup MMAs may have been issued before `op` runs, within
/// its role (outermost croq.inthreads.async) or kernel: an earlier op of an
/// enclosing block holds one, or a loop around `op` does (the previous
/// iteration's). A plain inthreads is a branch, walked out of like an if
/// (`inthreads (t == 0) trigger empty[s]` after the MMAs of its threads).
static bool followsWgmma(Operation *op) {
  for (Operation *at = op; at; at = at->getParentOp()) {
    for (Operation *prev = at->getPrevNode(); prev; prev = prev->getPrevNode())
      if (containsWarpgroupMma(prev))
        return true;
    Operation *parent = at->getParentOp();
    if (endsWalk(parent, /*rolesOnly=*/true))
      return false;
    if (isa<LoopLikeOpInterface>(parent) && containsWarpgroupMma(parent))
      return true;
  }
  return false;
}

/// Keeps one K iteration of wgmma in flight while the next is issued. In a
/// consumer loop that ends `mma.commit; trigger e[slot(iv)]` (releasing the
/// tiles its MMAs read), the commit becomes `mma.commit pending 1` (the
/// previous iteration's batch is complete) and the triggers release the
/// previous iteration's slots (the values its triggers named, carried into
/// the next iteration); after the loop a full commit releases the last.
/// Rings of one slot keep the plain form,
/// where the producer would wait for a release that comes after the
/// consumer's next wait.
static void deferWarpgroupMmaWaits(ModuleOp module, unsigned minSlots) {
  SmallVector<MmaCommitOp> commits;
  module.walk([&](MmaCommitOp commit) { commits.push_back(commit); });
  for (MmaCommitOp commit : commits) {
    auto loop = dyn_cast<scf::ForOp>(commit->getParentOp());
    // A depth that is set (the program's mma.wait<N>, or an earlier run's
    // choice) is kept, and so is every commit of its loop.
    if (!loop || commit.getPending() ||
        llvm::any_of(loop.getBody()->getOps<MmaCommitOp>(),
                     [](MmaCommitOp c) { return c.getPending().has_value(); }))
      continue;
    if (!containsWarpgroupMma(loop))
      continue;
    SmallVector<EventTriggerOp> triggers;
    bool movable = true;
    for (Operation *op = commit->getNextNode(); op != loop.getBody()->getTerminator();
         op = op->getNextNode()) {
      // A local event's trigger is its thread's own count: it stays.
      if (auto trigger = dyn_cast<EventTriggerOp>(op);
          trigger && trigger.getEvent().getType().isThreadLocal())
        continue;
      if (auto trigger = dyn_cast<EventTriggerOp>(op)) {
        movable &= trigger.getAfter().empty() &&
                   trigger.getEvent().getType().getNumElements() >=
                       std::max<int64_t>(2, minSlots);
        triggers.push_back(trigger);
        continue;
      }
      // A read or write of accumulator registers after the commit relies
      // on it completing every batch: it keeps the full wait.
      movable &= isMemoryEffectFree(op) && op->getNumRegions() == 0 &&
                 !isa<MmaElementOp, MmaSetElementOp, MmaScaleOp>(op);
    }
    if (!movable || triggers.empty())
      continue;

    // The slots the previous iteration released are recomputed from the
    // values it computed: those that change with the iteration and are the
    // same in every thread (`k % S`) are carried into the next iteration as
    // loop values (zeros into the first, which releases nothing) and out of the
    // loop for the last release; the rest of each slot (`(p - 1) * S + s`,
    // whose thread-dependent terms croq-assign-arrivals reads) is cloned onto
    // them, the counter itself taken as `k - step` and the last `k`.
    SmallVector<Value> carried;
    SmallVector<Operation *> recomputed;
    bool sliced = true;
    std::function<void(Value)> slice = [&](Value v) {
      if (!sliced || !loop.getRegion().isAncestor(v.getParentRegion()) ||
          v == loop.getInductionVar() || llvm::is_contained(carried, v))
        return;
      Operation *def = v.getDefiningOp();
      bool perIteration = !allSources(v, [&](BlockArgument arg) {
        return arg.getOwner()->getParentOp() != loop.getOperation();
      });
      if (def && perIteration && v.getType().isIntOrIndex() &&
          !dependsOnInstanceIndex(v)) {
        carried.push_back(v);
        return;
      }
      // Loop-carried values (a slot the program advances itself), and
      // thread-dependent values of ops with regions or effects, which
      // cannot be recomputed: the plain form.
      if (!def || !isMemoryEffectFree(def) || def->getNumRegions()) {
        sliced = false;
        return;
      }
      if (llvm::is_contained(recomputed, def))
        return;
      for (Value operand : def->getOperands())
        slice(operand);
      recomputed.push_back(def);
    };
    for (EventTriggerOp trigger : triggers)
      for (Value operand : trigger->getOperands())
        slice(operand);
    if (!sliced)
      continue;
    Location loc = commit.getLoc();
    IRRewriter rewriter(loop);
    SmallVector<Value> inits;
    for (Value v : carried)
      inits.push_back(arith::ConstantOp::create(
          rewriter, loc, rewriter.getZeroAttr(v.getType())));
    FailureOr<LoopLikeOpInterface> replaced =
        cast<LoopLikeOpInterface>(loop.getOperation())
            .replaceWithAdditionalYields(
                rewriter, inits, /*replaceInitOperandUsesInLoop=*/false,
                [&](OpBuilder &, Location, ArrayRef<BlockArgument>) {
                  return SmallVector<Value>(carried);
                });
    if (failed(replaced))
      continue;
    loop = cast<scf::ForOp>(replaced->getOperation());
    Value iv = loop.getInductionVar();
    unsigned firstArg = loop.getNumRegionIterArgs() - carried.size();
    unsigned firstResult = loop.getNumResults() - carried.size();
    IRMapping previous, last;
    for (auto [i, v] : llvm::enumerate(carried)) {
      previous.map(v, loop.getRegionIterArgs()[firstArg + i]);
      last.map(v, loop.getResult(firstResult + i));
    }
    // In the loop: release the previous iteration's slots.
    OpBuilder b(loop.getBody()->getTerminator());
    Value notFirst = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                           iv, loop.getLowerBound());
    auto ifOp = scf::IfOp::create(b, loc, notFirst, /*withElseRegion=*/false);
    OpBuilder inLoop = ifOp.getThenBodyBuilder();
    auto readsCounter = [&](Operation *op) {
      return llvm::is_contained(op->getOperands(), iv);
    };
    bool counter = llvm::any_of(recomputed, readsCounter) ||
                   llvm::any_of(triggers, [&](EventTriggerOp trigger) {
                     return readsCounter(trigger);
                   });
    if (counter)
      previous.map(iv, arith::SubIOp::create(inLoop, loc, iv, loop.getStep()));
    // After the loop: a full commit, then the last iteration's slots.
    b.setInsertionPointAfter(loop);
    MmaCommitOp::create(b, loc);
    Value ran = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                      loop.getLowerBound(),
                                      loop.getUpperBound());
    auto lastIf = scf::IfOp::create(b, loc, ran, /*withElseRegion=*/false);
    OpBuilder after = lastIf.getThenBodyBuilder();
    if (counter) {
      Value span = arith::SubIOp::create(
          after, loc,
          arith::SubIOp::create(after, loc, loop.getUpperBound(),
                                loop.getLowerBound()),
          cIndex(after, loc, 1));
      last.map(iv,
               arith::AddIOp::create(
                   after, loc, loop.getLowerBound(),
                   arith::MulIOp::create(
                       after, loc,
                       arith::DivUIOp::create(after, loc, span, loop.getStep()),
                       loop.getStep())));
    }
    for (auto [builder, map] :
         {std::pair<OpBuilder *, IRMapping *>{&inLoop, &previous},
          {&after, &last}}) {
      for (Operation *op : recomputed)
        builder->clone(*op, *map);
      for (EventTriggerOp trigger : triggers)
        builder->clone(*trigger, *map);
    }
    for (EventTriggerOp trigger : triggers)
      trigger.erase();
    commit.setPending(1);
  }
}

/// True when `branch` is the `scf.if (iv != lb)` of a deferred release: the
/// first iteration of its loop skips it.
static bool isDeferredRelease(scf::IfOp branch) {
  auto loop = dyn_cast<scf::ForOp>(branch->getParentOp());
  auto test = branch.getCondition().getDefiningOp<arith::CmpIOp>();
  return loop && test && test.getPredicate() == arith::CmpIPredicate::ne &&
         test.getLhs() == loop.getInductionVar() &&
         test.getRhs() == loop.getLowerBound();
}

/// True when a commit has completed the warpgroup MMAs issued before `op`:
/// the nearest op before it with effects (looking out of enclosing
/// `scf.if`s and plain inthreads regions) is a full `croq.mma.commit`, or
/// the `pending 1` commit of a deferred release.
static bool committedBefore(Operation *op) {
  bool deferred = false;
  for (Operation *at = op;;) {
    Operation *prev = at->getPrevNode();
    // Pure ops and other triggers issue no MMA.
    while (prev && prev->getNumRegions() == 0 &&
           (isMemoryEffectFree(prev) || isa<EventTriggerOp>(prev)))
      prev = prev->getPrevNode();
    if (prev) {
      auto commit = dyn_cast<MmaCommitOp>(prev);
      uint64_t pending = commit ? commit.getPending().value_or(0) : 0;
      return commit && (pending == 0 || (deferred && pending == 1));
    }
    if (auto region = dyn_cast<InThreadsOp>(at->getParentOp());
        region && !region.getAsync()) {
      at = region;
      continue;
    }
    auto branch = dyn_cast<scf::IfOp>(at->getParentOp());
    if (!branch)
      return false;
    deferred |= isDeferredRelease(branch);
    at = branch;
  }
}

/// Where the commit before `trigger` goes: before the plain inthreads
/// regions around it that issue no MMA themselves (`inthreads (t == 0)
/// trigger e;`), so that every thread that issued the MMAs waits (the
/// commit is warp-aligned); inside a region that issues MMAs, before the
/// trigger.
static Operation *commitAnchor(EventTriggerOp trigger) {
  Operation *at = trigger;
  while (auto region = dyn_cast<InThreadsOp>(at->getParentOp())) {
    if (region.getAsync() || containsWarpgroupMma(region))
      break;
    at = region;
  }
  return at;
}

bool mlir::croq::detail::needsMmaCommit(EventTriggerOp trigger) {
  // A local event publishes nothing to other threads.
  if (trigger.getEvent().getType().isThreadLocal())
    return false;
  return followsWgmma(trigger) && !committedBefore(commitAnchor(trigger));
}

/// Where a full commit completes the warpgroup MMAs that may be in flight
/// at `op`. Walking back through its block and out of enclosing regions (up
/// to its role or kernel): nowhere when a full commit comes first; right
/// after the nearest op that holds a warpgroup MMA, which is as uniform as
/// that MMA (the commit is a warp-aligned instruction, so it may not go
/// into a branch around `op`); or, when only a loop around `op` holds one
/// (the previous iteration's), before `op`'s ancestor in the loop body.
static std::optional<OpBuilder::InsertPoint> completionPoint(Operation *op) {
  for (Operation *at = op; at; at = at->getParentOp()) {
    for (Operation *prev = at->getPrevNode(); prev; prev = prev->getPrevNode()) {
      if (auto commit = dyn_cast<MmaCommitOp>(prev);
          commit && commit.getPending().value_or(0) == 0)
        return std::nullopt;
      if (containsWarpgroupMma(prev))
        return OpBuilder::InsertPoint(prev->getBlock(),
                                      std::next(Block::iterator(prev)));
    }
    // A role (inthreads.async) issues its own MMAs; a plain inthreads is a
    // branch, walked out of like an if.
    Operation *parent = at->getParentOp();
    if (endsWalk(parent, /*rolesOnly=*/true))
      return std::nullopt;
    if (isa<LoopLikeOpInterface>(parent) && containsWarpgroupMma(parent))
      return OpBuilder::InsertPoint(at->getBlock(), Block::iterator(at));
  }
  return std::nullopt;
}

/// True when `acc` may hold what an MMA wrote: not a chain of
/// croq.mma.set_element from a croq.mma.fill (an A operand for registers
/// being built).
static bool mayComeFromMma(Value acc) {
  while (auto set = acc.getDefiningOp<MmaSetElementOp>())
    acc = set.getAcc();
  return !acc.getDefiningOp<MmaFillOp>();
}

bool mlir::croq::detail::needsMmaCompletion(Operation *access) {
  Value acc;
  if (auto element = dyn_cast<MmaElementOp>(access))
    acc = element.getAcc();
  else if (auto set = dyn_cast<MmaSetElementOp>(access))
    acc = set.getAcc();
  else if (auto scale = dyn_cast<MmaScaleOp>(access))
    return (mayComeFromMma(scale.getProduct()) ||
            mayComeFromMma(scale.getSum())) &&
           completionPoint(access).has_value();
  else
    return false;
  return mayComeFromMma(acc) && completionPoint(access).has_value();
}

/// The buffers that warpgroup MMAs read their operands from.
static DenseSet<Operation *> wgmmaOperandBuffers(ModuleOp module) {
  DenseSet<Operation *> buffers;
  module.walk([&](MmaLoadOp load) {
    // Sparsity metadata is in registers once loaded.
    if (load.getResult().getType().getRole() == FragRole::Meta)
      return;
    bool feedsWgmma = llvm::any_of(load->getUsers(), [](Operation *user) {
      auto mma = dyn_cast<MmaOp>(user);
      return mma && isWarpgroupFrag(mma.getAcc().getType());
    });
    if (!feedsWgmma)
      return;
    for (memref::AllocOp alloc : viewedBuffers(load.getSource()))
      buffers.insert(alloc);
  });
  return buffers;
}

namespace {

struct CroqPipelineMmaPass
    : mlir::croq::impl::CroqPipelineMmaPassBase<CroqPipelineMmaPass> {
  using CroqPipelineMmaPassBase::CroqPipelineMmaPassBase;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // A role's trigger publishes what its MMAs computed or releases the
    // tiles they read: its wgmma groups complete first, unless a commit
    // before it (a deferred release's `pending 1`, the program's, or a run
    // of this pass) already waited for them.
    SmallVector<EventTriggerOp> triggers;
    module.walk([&](EventTriggerOp trigger) {
      if (needsMmaCommit(trigger))
        triggers.push_back(trigger);
    });
    for (EventTriggerOp trigger : triggers) {
      OpBuilder b(commitAnchor(trigger));
      MmaCommitOp::create(b, trigger.getLoc());
    }
    // A copy overwrites a buffer that warpgroup MMAs of its own role (or
    // kernel) read only after those MMAs completed: in the synchronous
    // form, without events, the next iteration's tile would otherwise land
    // under the wgmma still reading the last one.
    DenseSet<Operation *> operands = wgmmaOperandBuffers(module);
    SmallVector<Operation *> writes;
    module.walk([&](CopyOpInterface copy) {
      if (llvm::any_of(viewedBuffers(copy.getTarget()),
                       [&](memref::AllocOp a) { return operands.contains(a); }))
        writes.push_back(copy);
    });
    // So does a thread's write of one element (a tile filled by hand).
    module.walk([&](memref::StoreOp store) {
      if (memref::AllocOp alloc = viewedBuffer(store.getMemref());
          alloc && operands.contains(alloc))
        writes.push_back(store);
    });
    for (Operation *write : writes)
      if (std::optional<OpBuilder::InsertPoint> at = completionPoint(write)) {
        // Before the barrier that orders the copy after the other threads'
        // reads, as their warpgroups' MMAs read the buffer too: the nearest
        // one before the write (other copies may come between), and the
        // barriers right before it.
        Block::iterator point = at->getPoint();
        for (Block::iterator it = point; it != at->getBlock()->begin();) {
          --it;
          if (containsWarpgroupMma(&*it) || isa<MmaCommitOp>(*it))
            break;
          if (!isa<BarrierOp>(*it))
            continue;
          point = it;
          while (point != at->getBlock()->begin() &&
                 isa<BarrierOp>(*std::prev(point)))
            --point;
          break;
        }
        OpBuilder b(write->getContext());
        b.setInsertionPoint(at->getBlock(), point);
        MmaCommitOp::create(b, write->getLoc());
      }
    // A thread reads or writes accumulator registers only after the MMAs
    // that write them completed. The first access of a run commits; the
    // ones after it find that commit.
    SmallVector<Operation *> accesses;
    module.walk([&](Operation *op) {
      if (isa<MmaElementOp, MmaSetElementOp, MmaScaleOp>(op))
        accesses.push_back(op);
    });
    for (Operation *access : accesses)
      if (!needsMmaCompletion(access))
        continue;
      else if (std::optional<OpBuilder::InsertPoint> at = completionPoint(access)) {
        OpBuilder b(access->getContext());
        b.restoreInsertionPoint(*at);
        MmaCommitOp::create(b, access->getLoc());
      }
    // Then the releases at the end of a consumer loop, whoever wrote their
    // commit, move one iteration later.
    deferWarpgroupMmaWaits(module, deferMinSlots);
  }
};

} // namespace

