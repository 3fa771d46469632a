//===- Events.cpp - events as nvgpu mbarriers -------------------------------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#include "Croq/Conversion/CroqToGPU/CroqToGPU.h"
#include "Common.h"
#include "Croq/Analysis/DivergenceAnalysis.h"
#include "Croq/Analysis/Roles.h"
#include "Croq/Conversion/Passes.h"
#include "Croq/Dialect/Croq/IR/CroqOps.h"
#include "Croq/Dialect/Croq/Utils/TileAlgebra.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Func/Transforms/FuncConversions.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/DialectConversion.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <limits>

using namespace mlir;
using namespace mlir::croq;
using namespace mlir::croq::detail;

namespace mlir::croq::detail {

/// The innermost scf.for or scf.while around `op` inside its kernel (loops
/// around the launch do not count: every launch starts its events afresh).
Operation *innermostKernelLoop(Operation *op) {
  for (Operation *parent = op->getParentOp(); parent;
       parent = parent->getParentOp()) {
    if (isa<scf::ForOp, scf::WhileOp>(parent))
      return parent;
    // The kernel, before or after it became a gpu.launch.
    if (isa<gpu::LaunchOp>(parent))
      return nullptr;
    if (auto parallel = dyn_cast<ParallelOp>(parent);
        parallel && !parallel.getParentParallel())
      return nullptr;
  }
  return nullptr;
}

/// True when `v` is `iv rem n` (signed or unsigned) for the constant `n`.
bool isInductionModulo(Value v, Value iv, int64_t n) {
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
bool hasLoopGeneration(EventWaitOp wait) {
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

} // namespace mlir::croq::detail

namespace {

//===----------------------------------------------------------------------===//
// Events: nvgpu mbarriers
//===----------------------------------------------------------------------===//
//
// A shared event array is a group of mbarriers, one per element, initialised
// by thread 0 with the event's arrival count (set by `assignArrivals` from
// the threads that trigger it). A trigger is an arrive of each triggering
// thread; a wait spins on the parity of the generation it is owed: for
// `wait e[i]` inside a loop, generation `k / N` where k counts the loop's
// iterations and N is the array size; for `wait e.at(o)`, slot `o % N` and
// generation `o / N`. An event declared `ready` starts with generation 0
// complete, so its waits use the opposite parity.

struct EventAllocLowering : ScopedPattern<EventAllocOp> {
  using ScopedPattern::ScopedPattern;
  LogicalResult
  matchAndRewrite(EventAllocOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    EventType type = op.getEvent().getType();
    // The count is a decision of its own (croq-assign-arrivals, or the
    // program's event<N>); the pattern does not guess one.
    if (!op.getArrivals())
      return op.emitOpError("has no arrival count: run croq-assign-arrivals "
                            "before the croq-to-gpu patterns, or declare "
                            "the event with one (event<N>)");
    // One thread initialises every element; then the block may use them.
    Value group = createMBarriers(rewriter, loc, type.getNumElements(),
                                  *op.getArrivals());
    bool counts = llvm::any_of(op.getEvent().getUsers(), [](Operation *user) {
      return user->hasAttr(kCountPhasesAttrName);
    });
    // Each thread's phase bit per slot: the parity of the generation it
    // waits for next (a `ready` event starts one generation ahead).
    if (counts)
      analysis.phaseBits[op] = createPhaseBits(
          rewriter, loc, type.getNumElements(), op.getReady());
    rewriter.replaceOp(op, group);
    return success();
  }
};

struct EventTriggerLowering : ScopedPattern<EventTriggerOp> {
  using ScopedPattern::ScopedPattern;
  LogicalResult
  matchAndRewrite(EventTriggerOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    EventType type = op.getEvent().getType();
    auto tokenType = rewriter.getType<nvgpu::MBarrierTokenType>();
    SmallVector<Value> slots;
    if (Value order = adaptor.getOrder()) {
      slots.push_back(arith::RemUIOp::create(
          rewriter, loc, order, cIndex(rewriter, loc, type.getNumElements())));
    } else if (adaptor.getIndices().size() == type.getRank()) {
      slots.push_back(linearSlot(rewriter, loc, type, adaptor.getIndices()));
    } else {
      // Fewer subscripts: every remaining element.
      int64_t rest = 1;
      for (int64_t extent : type.getShape().drop_front(adaptor.getIndices().size()))
        rest *= extent;
      Value base = linearSlot(rewriter, loc, type, adaptor.getIndices());
      for (int64_t i = 0; i < rest; ++i)
        slots.push_back(arith::AddIOp::create(rewriter, loc, base,
                                              cIndex(rewriter, loc, i)));
    }
    // A role's trigger publishes what its MMAs computed or releases the
    // tiles they read: its wgmma groups complete first.
    if (op->hasAttr(kWaitWgmmaAttrName))
      waitWarpgroupMmas(rewriter, loc);
    if (int64_t bytes = analysis.tma.expectBytes.lookup(op)) {
      // The thread that issued the bound TMA loads expects their bytes;
      // the rest of the role (if any) arrives plainly.
      assert(slots.size() == 1 && "a TMA-bound trigger names one element");
      Value issues = issuer(rewriter, loc, op, analysis);
      auto expect = [&](OpBuilder &b) {
        nvgpu::MBarrierArriveExpectTxOp::create(b, loc, adaptor.getEvent(),
                                                cIndex(b, loc, bytes),
                                                slots.front(), Value());
      };
      if (!issues) {
        expect(rewriter);
      } else {
        auto ifOp = scf::IfOp::create(rewriter, loc, issues,
                                      /*withElseRegion=*/true);
        OpBuilder thenBuilder = ifOp.getThenBodyBuilder();
        expect(thenBuilder);
        OpBuilder elseBuilder = ifOp.getElseBodyBuilder();
        nvgpu::MBarrierArriveOp::create(elseBuilder, loc, tokenType,
                                        adaptor.getEvent(), slots.front());
      }
      rewriter.eraseOp(op);
      return success();
    }
    for (Value slot : slots)
      nvgpu::MBarrierArriveOp::create(rewriter, loc, tokenType,
                                      adaptor.getEvent(), slot);
    rewriter.eraseOp(op);
    return success();
  }
};

struct EventWaitLowering : ScopedPattern<EventWaitOp> {
  using ScopedPattern::ScopedPattern;
  LogicalResult
  matchAndRewrite(EventWaitOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    EventType type = op.getEvent().getType();
    Value n = cIndex(rewriter, loc, type.getNumElements());
    Value slot, generation;
    if (Value order = adaptor.getOrder()) {
      slot = arith::RemUIOp::create(rewriter, loc, order, n);
      generation = arith::DivUIOp::create(rewriter, loc, order, n);
    } else if (op->hasAttr(kCountPhasesAttrName)) {
      slot = linearSlot(rewriter, loc, type, adaptor.getIndices());
      Value bits = analysis.phaseBits.lookup(
          op.getEvent().getDefiningOp<EventAllocOp>());
      if (!bits)
        return op.emitOpError("needs per-thread phase bits, which only events "
                              "allocated in the kernel have");
      waitOnPhaseBit(rewriter, loc, adaptor.getEvent(), slot, bits, slot);
      rewriter.eraseOp(op);
      return success();
    } else {
      slot = linearSlot(rewriter, loc, type, adaptor.getIndices());
      // The D1 rule: the k-th iteration of the innermost loop waits for
      // generation k / N.
      if (auto loop =
              dyn_cast_or_null<scf::ForOp>(innermostKernelLoop(op))) {
        Value k = arith::DivUIOp::create(
            rewriter, loc,
            arith::SubIOp::create(rewriter, loc, loop.getInductionVar(),
                                  loop.getLowerBound()),
            loop.getStep());
        generation = arith::DivUIOp::create(rewriter, loc, k, n);
      } else {
        generation = cIndex(rewriter, loc, 0);
      }
    }
    auto alloc = op.getEvent().getDefiningOp<EventAllocOp>();
    if (alloc && alloc.getReady())
      generation = arith::AddIOp::create(rewriter, loc, generation,
                                         cIndex(rewriter, loc, 1));
    Value parity = arith::IndexCastOp::create(
        rewriter, loc, rewriter.getI1Type(),
        arith::RemUIOp::create(rewriter, loc, generation,
                               cIndex(rewriter, loc, 2)));
    nvgpu::MBarrierTryWaitParityOp::create(rewriter, loc, adaptor.getEvent(),
                                           parity,
                                           cIndex(rewriter, loc, 10000000), slot);
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void mlir::croq::detail::populateEventPatterns(TypeConverter &converter,
    RewritePatternSet &patterns, const LaunchAnalysis &analysis) {
  patterns.add<EventAllocLowering, EventTriggerLowering, EventWaitLowering>(
      converter, patterns.getContext(), analysis);
}
