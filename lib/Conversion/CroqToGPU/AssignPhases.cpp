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
#include "Croq/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

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

/// True when `v` is `iv rem n` (signed or unsigned) for the constant `n`.
static bool isInductionModulo(Value v, Value iv, int64_t n) {
  Operation *def = v.getDefiningOp();
  if (!isa_and_nonnull<arith::RemSIOp, arith::RemUIOp>(def))
    return false;
  std::optional<int64_t> divisor = getConstantIntValue(def->getOperand(1));
  return def->getOperand(0) == iv && divisor && *divisor == n;
}

/// True when the D1 rule, generation (iv - lb) / N of the loop around a
/// subscripted wait, is the number of earlier waits on its slot: the wait
/// runs once per iteration (directly in the body, step 1) of the only kernel
/// loop around it, on slot `iv % N` or the event's only slot; or it runs at
/// most once (no loop). Other waits count at run time: each thread keeps a
/// phase bit per slot and flips it after each wait (the model's "waiter's
/// own counter"), e.g. in persistent kernels whose K loop restarts per tile.
static bool hasLoopGeneration(EventWaitOp wait) {
  Operation *loop = innermostKernelLoop(wait);
  if (!loop)
    return true;
  auto forOp = dyn_cast<scf::ForOp>(loop);
  if (!forOp || wait->getBlock() != forOp.getBody() ||
      innermostKernelLoop(forOp))
    return false;
  std::optional<int64_t> step = getConstantIntValue(forOp.getStep());
  if (!step || *step != 1)
    return false;
  EventType type = wait.getEvent().getType();
  int64_t slots = type.getNumElements();
  return slots == 1 ||
         (type.getRank() == 1 && wait.getIndices().size() == 1 &&
          isInductionModulo(wait.getIndices()[0], forOp.getInductionVar(),
                            slots));
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
    SmallVector<EventWaitOp> waits;
    getOperation().walk([&](EventWaitOp wait) {
      if (!wait.getParity())
        waits.push_back(wait);
    });
    // Per-thread phase bits of the events whose waits count at run time.
    DenseMap<Operation *, Value> bits;
    for (EventWaitOp wait : waits)
      if (failed(assign(wait, bits)))
        return signalPassFailure();
  }

  LogicalResult assign(EventWaitOp wait, DenseMap<Operation *, Value> &bits) {
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
    if (hasLoopGeneration(wait)) {
      // The D1 rule: the k-th iteration of the loop waits for generation
      // k / N.
      Value generation;
      if (auto loop = dyn_cast_or_null<scf::ForOp>(innermostKernelLoop(wait))) {
        Value k = arith::DivUIOp::create(
            b, loc,
            arith::SubIOp::create(b, loc, loop.getInductionVar(),
                                  loop.getLowerBound()),
            loop.getStep());
        generation = arith::DivUIOp::create(b, loc, k, slots());
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
      OpBuilder atAlloc(alloc->getContext());
      atAlloc.setInsertionPointAfter(alloc);
      slotBits = createPhaseBits(atAlloc, alloc.getLoc(),
                                 type.getNumElements(), ready);
    }
    Value slot = linearSlot(b, loc, type, wait.getIndices());
    Value parity = memref::LoadOp::create(b, loc, slotBits, slot);
    wait.getParityMutable().assign(parity);
    b.setInsertionPointAfter(wait);
    Value flipped = arith::XOrIOp::create(
        b, loc, parity, arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1));
    memref::StoreOp::create(b, loc, flipped, slotBits, slot);
    return success();
  }
};

} // namespace
