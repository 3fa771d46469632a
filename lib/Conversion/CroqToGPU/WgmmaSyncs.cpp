//===- WgmmaSyncs.cpp - drop warpgroup MMA syncs that order nothing -------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//
//
// croq-elide-wgmma-syncs: each croq.mma on warpgroup fragments lowers with
// its own wgmma.fence, and each commit point (mma.commit, a wait on an MMA
// future, mma.store) with a commit and a wait. Over the kernel's CFG, a
// forward analysis tracks, per program point, whether a wgmma may have been
// issued since the last commit (`dirty`, joined by or) and how many commit
// groups can be in flight at most (`bound`, joined by max); the rewrite then
// drops what that proves redundant (Passes.td has the rules).
//
//===----------------------------------------------------------------------===//

#include "Croq/Conversion/Passes.h"
#include "Croq/Dialect/Croq/IR/CroqDialect.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/Dominance.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/PostOrderIterator.h"

#include <algorithm>
#include <optional>
#include <string>

namespace mlir::croq {
#define GEN_PASS_DEF_CROQELIDEWGMMASYNCSPASS
#define GEN_PASS_DEF_CROQUNROLLHINTEDLOOPSPASS
#define GEN_PASS_DEF_CROQUNROLLMMABATCHESPASS
#include "Croq/Conversion/Passes.h.inc"
} // namespace mlir::croq

using namespace mlir;

namespace {

/// What an op does to the warpgroup MMA state.
enum class Effect { None, Mma, Fence, Commit, Wait, Unknown };

Effect effectOf(Operation *op);

/// Whether calling `callee` leaves the warpgroup MMA state alone: a
/// libdevice math function (`__nv_expf` and the like, declarations until
/// they are linked), or a function defined here whose body, and every
/// callee's, issues no warpgroup instruction. `visiting` breaks recursion.
bool calleeLeavesMmaAlone(FunctionOpInterface callee,
                          llvm::SmallPtrSetImpl<Operation *> &visiting) {
  if (callee.isExternal())
    return callee.getName().starts_with("__nv_");
  if (!visiting.insert(callee).second)
    return true;
  WalkResult result = callee.getCallableRegion()->walk([&](Operation *op) {
    if (auto call = dyn_cast<CallOpInterface>(op)) {
      auto inner =
          dyn_cast_or_null<FunctionOpInterface>(call.resolveCallable());
      return inner && calleeLeavesMmaAlone(inner, visiting)
                 ? WalkResult::advance()
                 : WalkResult::interrupt();
    }
    return effectOf(op) == Effect::None ? WalkResult::advance()
                                        : WalkResult::interrupt();
  });
  return !result.wasInterrupted();
}

Effect effectOf(Operation *op) {
  if (isa<NVVM::WgmmaMmaAsyncOp>(op))
    return Effect::Mma;
  if (isa<NVVM::WgmmaFenceAlignedOp>(op))
    return Effect::Fence;
  if (isa<NVVM::WgmmaGroupSyncAlignedOp>(op))
    return Effect::Commit;
  if (isa<NVVM::WgmmaWaitGroupSyncOp>(op))
    return Effect::Wait;
  if (auto asmOp = dyn_cast<LLVM::InlineAsmOp>(op)) {
    StringRef text = asmOp.getAsmString();
    // A register-A wgmma of the lowering is a wgmma and nothing else.
    if (text.contains("wgmma.mma_async") && !text.contains("commit_group") &&
        !text.contains("wait_group") && !text.contains("fence"))
      return Effect::Mma;
    return text.contains("wgmma") ? Effect::Unknown : Effect::None;
  }
  // A callee may issue warpgroup instructions of its own, unless it is
  // known not to (math functions, most device functions).
  if (auto call = dyn_cast<CallOpInterface>(op)) {
    auto callee = dyn_cast_or_null<FunctionOpInterface>(call.resolveCallable());
    llvm::SmallPtrSet<Operation *, 4> visiting;
    return callee && calleeLeavesMmaAlone(callee, visiting) ? Effect::None
                                                            : Effect::Unknown;
  }
  return Effect::None;
}

constexpr int64_t kUnbounded = std::numeric_limits<int64_t>::max() / 2;

struct State {
  bool dirty = false;
  int64_t bound = 0;
  bool operator==(const State &o) const {
    return dirty == o.dirty && bound == o.bound;
  }
  void join(const State &o) {
    dirty |= o.dirty;
    bound = std::max(bound, o.bound);
  }
  void apply(Operation *op) {
    switch (effectOf(op)) {
    case Effect::Mma:
      dirty = true;
      break;
    case Effect::Commit:
      dirty = false;
      bound = std::min(bound + 1, kUnbounded);
      break;
    case Effect::Wait:
      bound = std::min<int64_t>(
          bound, cast<NVVM::WgmmaWaitGroupSyncOp>(op).getGroup());
      break;
    case Effect::Unknown:
      dirty = true;
      bound = kUnbounded;
      break;
    case Effect::Fence:
    case Effect::None:
      break;
    }
  }
};

/// The state before each op of `region`'s blocks, to a fixed point, from
/// `entry` at its entry block.
DenseMap<Operation *, State> analyze(Region &region, State entry) {
  DenseMap<Block *, State> in;
  DenseMap<Block *, bool> reached;
  SmallVector<Block *> order;
  for (Block *block : llvm::ReversePostOrderTraversal<Block *>(&region.front()))
    order.push_back(block);
  reached[&region.front()] = true;
  in[&region.front()] = entry;
  bool changed = true;
  for (int sweep = 0; changed; ++sweep) {
    changed = false;
    // Widening: a loop that commits without a wait bounding it would raise
    // the count one step per sweep; past a few sweeps it is unbounded.
    if (sweep == 8)
      for (auto &[block, state] : in)
        state.bound = kUnbounded;
    for (Block *block : order) {
      if (!reached.lookup(block))
        continue;
      State state = in[block];
      for (Operation &op : *block)
        state.apply(&op);
      for (Block *succ : block->getSuccessors()) {
        State joined = state;
        if (reached.lookup(succ))
          joined.join(in[succ]);
        if (!reached.lookup(succ) || !(joined == in[succ])) {
          in[succ] = joined;
          reached[succ] = true;
          changed = true;
        }
      }
    }
  }
  DenseMap<Operation *, State> before;
  for (Block *block : order) {
    if (!reached.lookup(block))
      continue;
    State state = in[block];
    for (Operation &op : *block) {
      before[&op] = state;
      state.apply(&op);
    }
  }
  return before;
}

/// Ops a fence may look past to an earlier wgmma: they read no register of
/// an MMA and write none (integer and pointer arithmetic for descriptors,
/// and reading the elements of an accumulator struct, which only names its
/// registers for the next wgmma).
bool touchesNoMmaRegister(Operation *op) {
  if (isa<LLVM::ExtractValueOp>(op))
    return true;
  if (op->getNumRegions() || !isMemoryEffectFree(op))
    return false;
  // Not i32: register-A operands and f16 or s32 accumulators are i32s.
  auto scalar = [](Type t) {
    return t.isIndex() || t.isInteger(64) || t.isInteger(1) ||
           isa<LLVM::LLVMPointerType>(t);
  };
  return llvm::all_of(op->getOperandTypes(), scalar) &&
         llvm::all_of(op->getResultTypes(), scalar);
}

/// The constraint letter of an accumulator element in inline assembly, or
/// none for a type the pinning below does not handle.
std::optional<char> registerClass(Type t) {
  if (t.isF32())
    return 'f';
  if (t.isInteger(32))
    return 'r';
  return std::nullopt;
}

/// Pins the accumulators of the batch after `fence` to their registers
/// before the fence, as CUTLASS's warpgroup_fence_operand does: an empty
/// volatile asm that reads and writes every element. Without it, the copies
/// that give each element of a freshly filled accumulator (128 copies of one
/// zero) its own register are scheduled between the fence and an MMA, and
/// ptxas then injects another warpgroup.arrive (C7519), or a wait (C7517).
/// The zeros often reach the MMA through a loop's block argument (the K
/// loop's first trip), so only an accumulator that an MMA produced goes
/// unpinned.
void pinAccumulators(Operation *fence) {
  OpBuilder b(fence);
  for (Operation *next = fence->getNextNode(); next;
       next = next->getNextNode()) {
    Effect e = effectOf(next);
    if (e == Effect::None)
      continue;
    auto mma = dyn_cast<NVVM::WgmmaMmaAsyncOp>(next);
    if (e != Effect::Mma)
      break;
    if (!mma)
      continue;
    Value acc = mma.getInouts();
    Operation *def = acc.getDefiningOp();
    if (isa_and_nonnull<NVVM::WgmmaMmaAsyncOp>(def))
      continue;
    // The pin goes before the fence, so its operand must be defined there.
    if (def && def->getBlock() == fence->getBlock() &&
        !def->isBeforeInBlock(fence))
      continue;
    auto type = cast<LLVM::LLVMStructType>(acc.getType());
    std::string outputs, inputs;
    bool handled = true;
    for (auto [i, t] : llvm::enumerate(type.getBody())) {
      std::optional<char> c = registerClass(t);
      if (!c) {
        handled = false;
        break;
      }
      outputs += (i ? ",=" : "=") + std::string(1, *c);
      inputs += "," + std::to_string(i);
    }
    if (!handled)
      continue;
    Location loc = mma.getLoc();
    SmallVector<Value> elements;
    for (int64_t i = 0, n = type.getBody().size(); i < n; ++i)
      elements.push_back(LLVM::ExtractValueOp::create(b, loc, acc, i));
    auto pin = LLVM::InlineAsmOp::create(
        b, loc, type, elements, /*asm_string=*/"", outputs + inputs,
        /*has_side_effects=*/true, /*is_align_stack=*/false,
        LLVM::TailCallKind::None,
        LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT),
        /*operand_attrs=*/ArrayAttr());
    // Every MMA of the batch that reads this accumulator reads the pin.
    acc.replaceUsesWithIf(pin.getResult(0), [&](OpOperand &use) {
      return use.getOwner() == mma.getOperation();
    });
  }
}

/// The drain (a commit, then wait_group 0) that opens `block` before
/// anything else touches warpgroup MMA state, if there is one.
std::optional<std::pair<Operation *, Operation *>> leadingDrain(Block *block) {
  Operation *commit = nullptr;
  for (Operation &op : *block) {
    Effect e = effectOf(&op);
    if (e == Effect::None)
      continue;
    if (!commit && e == Effect::Commit) {
      commit = &op;
      continue;
    }
    if (commit && e == Effect::Wait &&
        cast<NVVM::WgmmaWaitGroupSyncOp>(op).getGroup() == 0)
      return std::make_pair(commit, &op);
    return std::nullopt;
  }
  return std::nullopt;
}

/// Hoists the drain of a conditional block above its branch when the block
/// where both paths meet drains too: `A: cond_br c, B, C; B: drain; ...;
/// br C; C: drain`, B issuing no MMA after its drain. (A trigger of a role
/// that issued MMAs runs under an `if` on its lowest thread, each drained
/// first.) One drain at the end of A waits at the same point on both paths,
/// and the warpgroup runs it together, where B's ran only in the threads
/// that took the branch: ptxas otherwise injects a warpgroup.arrive.
bool hoistConditionalDrain(Block *a) {
  auto branch = dyn_cast<LLVM::CondBrOp>(a->getTerminator());
  if (!branch)
    return false;
  for (auto edge : {std::pair(branch.getTrueDest(), branch.getFalseDest()),
                    std::pair(branch.getFalseDest(), branch.getTrueDest())}) {
    Block *b = edge.first, *c = edge.second;
    if (b == c || b->getSinglePredecessor() != a ||
        b->getSuccessors().size() != 1 || b->getSuccessors()[0] != c ||
        !b->getArguments().empty())
      continue;
    if (llvm::any_of(c->getPredecessors(),
                     [&](Block *pred) { return pred != a && pred != b; }))
      continue;
    std::optional<std::pair<Operation *, Operation *>> inB = leadingDrain(b);
    std::optional<std::pair<Operation *, Operation *>> inC = leadingDrain(c);
    if (!inB || !inC)
      continue;
    bool issues = false;
    for (Operation *op = inB->second->getNextNode(); op; op = op->getNextNode())
      issues |= effectOf(op) != Effect::None;
    if (issues)
      continue;
    inB->first->moveBefore(branch);
    inB->second->moveBefore(branch);
    inC->second->erase();
    inC->first->erase();
    return true;
  }
  return false;
}

/// Moves a drain at the top of a loop body to the end of each iteration.
/// croq waits for a loop's MMAs where a later write needs them done: often
/// the first op of the next iteration, whose drain is then empty on the
/// first trip. ptxas reads such a loop as one whose accumulator registers
/// are written by the copies that zero them on entry while a wgmma may be
/// in flight, and serializes every wgmma of the kernel (C7515). Waiting at
/// the end of each iteration instead is the same wait on every back edge
/// (the loop header between them does nothing but branch), and nothing to
/// wait for on entry when no warpgroup MMA is in flight there.
/// `body` is a loop's first block: its only predecessor is the header,
/// which the preheader and the latches (blocks `body` dominates) reach.
bool rotateLoopDrain(Block *body, const DenseMap<Operation *, State> &before,
                     DominanceInfo &dominance,
                     PostDominanceInfo &postDominance) {
  if (!body->getSinglePredecessor())
    return false;
  Block *header = body->getSinglePredecessor();
  std::optional<std::pair<Operation *, Operation *>> drain = leadingDrain(body);
  if (!drain)
    return false;
  auto [commit, wait] = *drain;
  for (Operation &op : *header)
    if (effectOf(&op) != Effect::None || op.getNumRegions())
      return false;
  SmallVector<Block *> latches;
  for (Block *pred : header->getPredecessors()) {
    if (dominance.dominates(body, pred)) {
      latches.push_back(pred);
      continue;
    }
    // An entry edge: nothing may be in flight there.
    auto it = before.find(pred->getTerminator());
    if (it == before.end() || it->second.dirty || it->second.bound != 0)
      return false;
  }
  // One latch that every iteration reaches (the form scf.for and
  // scf.while lower to): a drain at the end of each of several latches
  // would run in only the threads that took each one.
  if (latches.size() != 1 || !postDominance.postDominates(latches[0], body))
    return false;
  Block *latch = latches[0];
  // In a one-block body, the drain must end up behind something that
  // touches MMA state, or it would open the body again.
  if (latch == body &&
      llvm::none_of(llvm::make_range(std::next(wait->getIterator()),
                                     body->end()),
                    [](Operation &op) { return effectOf(&op) != Effect::None; }))
    return false;
  OpBuilder b(latch->getTerminator());
  b.clone(*commit);
  b.clone(*wait);
  wait->erase();
  commit->erase();
  return true;
}

struct CroqElideWgmmaSyncsPass
    : mlir::croq::impl::CroqElideWgmmaSyncsPassBase<CroqElideWgmmaSyncsPass> {
  void runOnOperation() override {
    getOperation().walk([&](FunctionOpInterface func) {
      if (func.isExternal())
        return;
      Region &body = *func.getCallableRegion();
      // A kernel starts with nothing in flight; another function may be
      // called with its caller's groups in flight.
      State entry;
      if (!func->hasAttr("nvvm.kernel") && !func->hasAttr("gpu.kernel"))
        entry = State{/*dirty=*/true, kUnbounded};
      // Fences: one per batch of MMAs.
      SmallVector<Operation *> dead;
      for (Block &block : body) {
        for (Operation &op : block) {
          if (effectOf(&op) != Effect::Fence)
            continue;
          for (Operation *prev = op.getPrevNode(); prev;
               prev = prev->getPrevNode()) {
            Effect e = effectOf(prev);
            if (e == Effect::Mma || e == Effect::Fence) {
              dead.push_back(&op);
              break;
            }
            if (e != Effect::None || !touchesNoMmaRegister(prev))
              break;
          }
        }
      }
      for (Operation *op : dead)
        op->erase();
      SmallVector<Operation *> fences;
      body.walk([&](NVVM::WgmmaFenceAlignedOp fence) {
        fences.push_back(fence);
      });
      for (Operation *fence : fences)
        pinAccumulators(fence);
      // One rotation at a time, each on a fresh analysis.
      DenseMap<Operation *, State> before;
      DominanceInfo dominance(func);
      PostDominanceInfo postDominance(func);
      for (bool hoisted = true; hoisted;)
        hoisted = llvm::any_of(
            body, [&](Block &block) { return hoistConditionalDrain(&block); });
      for (bool rotated = true; rotated;) {
        before = analyze(body, entry);
        rotated = llvm::any_of(body, [&](Block &block) {
          return rotateLoopDrain(&block, before, dominance, postDominance);
        });
      }
      // Empty commit groups that a wait_group 0 drains next.
      dead.clear();
      for (auto &[op, state] : before) {
        if (effectOf(op) != Effect::Commit || state.dirty)
          continue;
        for (Operation *next = op->getNextNode(); next;
             next = next->getNextNode()) {
          Effect e = effectOf(next);
          if (e == Effect::None || e == Effect::Fence)
            continue;
          if (e == Effect::Wait &&
              cast<NVVM::WgmmaWaitGroupSyncOp>(next).getGroup() == 0)
            dead.push_back(op);
          break;
        }
      }
      for (Operation *op : dead)
        op->erase();
      // Waits for fewer groups than can be in flight.
      dead.clear();
      before = analyze(body, entry);
      for (auto &[op, state] : before)
        if (auto wait = dyn_cast<NVVM::WgmmaWaitGroupSyncOp>(op);
            wait && state.bound <= static_cast<int64_t>(wait.getGroup()))
          dead.push_back(op);
      for (Operation *op : dead)
        op->erase();
    });
  }
};

struct CroqUnrollHintedLoopsPass
    : mlir::croq::impl::CroqUnrollHintedLoopsPassBase<
          CroqUnrollHintedLoopsPass> {
  void runOnOperation() override {
    SmallVector<scf::ForOp> loops;
    getOperation().walk([&](scf::ForOp loop) {
      if (loop->hasAttr(croq::kUnrollAttrName))
        loops.push_back(loop);
    });
    for (scf::ForOp loop : loops) {
      uint64_t factor =
          loop->getAttrOfType<IntegerAttr>(croq::kUnrollAttrName).getInt();
      loop->removeAttr(croq::kUnrollAttrName);
      std::optional<APInt> trips = loop.getStaticTripCount();
      bool full = trips && trips->getZExtValue() <= factor;
      if (full ? failed(loopUnrollFull(loop))
               : failed(loopUnrollByFactor(loop, factor))) {
        loop.emitOpError("could not be unrolled by ") << factor;
        return signalPassFailure();
      }
    }
  }
};

struct CroqUnrollMmaBatchesPass
    : mlir::croq::impl::CroqUnrollMmaBatchesPassBase<
          CroqUnrollMmaBatchesPass> {
  void runOnOperation() override {
    SmallVector<scf::ForOp> loops;
    getOperation().walk([&](scf::ForOp loop) {
      std::optional<APInt> trips = loop.getStaticTripCount();
      if (!trips || trips->getSExtValue() < 1 || trips->getSExtValue() > 16)
        return;
      bool mma = false, nested = false;
      for (Operation &op : *loop.getBody()) {
        mma |= effectOf(&op) == Effect::Mma;
        nested |= op.walk([](LoopLikeOpInterface) {
                      return WalkResult::interrupt();
                    }).wasInterrupted();
      }
      if (mma && !nested)
        loops.push_back(loop);
    });
    for (scf::ForOp loop : loops)
      if (failed(loopUnrollFull(loop))) {
        loop.emitOpError("could not be unrolled");
        return signalPassFailure();
      }
  }
};

} // namespace
