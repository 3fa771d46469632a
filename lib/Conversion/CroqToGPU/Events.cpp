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
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
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


namespace {

//===----------------------------------------------------------------------===//
// Events: nvgpu mbarriers
//===----------------------------------------------------------------------===//
//
// A shared event array is a group of mbarriers, one per element, initialised
// by thread 0 with the event's arrival count (set by croq-assign-arrivals from
// the threads that trigger it). A trigger is an arrive of each triggering
// thread; a wait spins until the phase of the parity it names completes
// (its `parity` operand, which croq-assign-phases computes).

//
// A local event is each thread's own: a count per element, in registers, of
// the triggers its waits have not consumed. A wait with nothing to consume
// could never complete (no other thread reaches the counts), so it fails
// the kernel with that message instead of hanging.

/// The linear elements a trigger or wait selects: slot `o mod N` of
/// `at(o)`, one element, or every element under fewer subscripts.
static SmallVector<Value> selectedSlots(OpBuilder &b, Location loc,
                                        EventType type, ValueRange indices,
                                        Value order) {
  if (order)
    return {arith::RemUIOp::create(b, loc, order,
                                   cIndex(b, loc, type.getNumElements()))};
  if (indices.size() == type.getRank())
    return {linearSlot(b, loc, type, indices)};
  int64_t rest = 1;
  for (int64_t extent : type.getShape().drop_front(indices.size()))
    rest *= extent;
  Value base = linearSlot(b, loc, type, indices);
  SmallVector<Value> slots;
  for (int64_t i = 0; i < rest; ++i)
    slots.push_back(arith::AddIOp::create(b, loc, base, cIndex(b, loc, i)));
  return slots;
}

/// Adds `delta` to the local event counts of `slots`; with a negative
/// delta (a wait) each count must be positive first.
static void updateLocalCounts(OpBuilder &b, Location loc, Value counts,
                              ArrayRef<Value> slots, int32_t delta) {
  Type i32 = b.getI32Type();
  for (Value slot : slots) {
    Value count = memref::LoadOp::create(b, loc, counts, ValueRange{slot});
    if (delta < 0)
      cf::AssertOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, count,
                                arith::ConstantIntOp::create(b, loc, i32, 0)),
          "croq: a wait on a local event that this thread has not "
          "triggered; no other thread can trigger it, so it would never "
          "complete");
    Value next = arith::AddIOp::create(
        b, loc, count, arith::ConstantIntOp::create(b, loc, i32, delta));
    memref::StoreOp::create(b, loc, next, counts, ValueRange{slot});
  }
}

struct EventAllocLowering : ScopedPattern<EventAllocOp> {
  using ScopedPattern::ScopedPattern;
  LogicalResult
  matchAndRewrite(EventAllocOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    EventType type = op.getEvent().getType();
    if (!isMBarrierEvent(op.getEvent())) {
      // Local: every count 0, or 1 (one completed generation) when ready.
      auto countsType = cast<MemRefType>(getTypeConverter()->convertType(type));
      Value counts = memref::AllocaOp::create(rewriter, loc, countsType);
      Value start = arith::ConstantIntOp::create(rewriter, loc,
                                                 rewriter.getI32Type(),
                                                 op.getReady() ? 1 : 0);
      for (int64_t i = 0; i < type.getNumElements(); ++i)
        memref::StoreOp::create(rewriter, loc, start, counts,
                                ValueRange{cIndex(rewriter, loc, i)});
      rewriter.replaceOp(op, counts);
      return success();
    }
    // The count is a decision of its own (croq-assign-arrivals, or the
    // program's event<N>); the pattern does not guess one.
    if (!op.getArrivals())
      return op.emitOpError("has no arrival count: run croq-assign-arrivals "
                            "before the croq-to-gpu patterns, or declare "
                            "the event with one (event<N>)");
    // One thread initialises every element; then the block may use them.
    Value group =
        createMBarriers(rewriter, loc, type.getNumElements(),
                        *op.getArrivals(), analysis.getScope(op).clusterSize);
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
    SmallVector<Value> slots = selectedSlots(
        rewriter, loc, type, adaptor.getIndices(), adaptor.getOrder());
    if (!isMBarrierEvent(op.getEvent())) {
      if (op.getCluster() || op.getExpectTx() || !op.getAfter().empty())
        return op.emitOpError("triggers a local event, which counts its "
                              "own thread's triggers: it cannot arrive "
                              "across the cluster or wait for copies");
      updateLocalCounts(rewriter, loc, adaptor.getEvent(), slots, 1);
      rewriter.eraseOp(op);
      return success();
    }
    if (std::optional<uint64_t> bytes = op.getExpectTx()) {
      // The thread that issued the bound TMA loads expects their bytes;
      // the rest of the role (if any) arrives plainly.
      if (!op.getIssuer())
        return op.emitOpError("has no issuer: run croq-elect-issuers before "
                              "the croq-to-gpu patterns");
      Value issues = issuer(rewriter, loc, op, analysis);
      auto expect = [&](OpBuilder &b) {
        nvgpu::MBarrierArriveExpectTxOp::create(b, loc, adaptor.getEvent(),
                                                cIndex(b, loc, *bytes),
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
    if (op.getCluster()) {
      // The same barrier in every block of the cluster: each address mapped
      // into that block's shared memory (mapa). The release is at CTA
      // scope, as CUTLASS's ClusterBarrier arrives: what it orders are the
      // arriving threads' own reads of a buffer (completed, in registers)
      // before the waiter's TMA overwrites it; a release at cluster scope
      // drains every outstanding memory access first (ERRBAR), which cost
      // the consumers 40% of their issue cycles.
      MLIRContext *context = rewriter.getContext();
      auto shared = LLVM::LLVMPointerType::get(
          context, static_cast<unsigned>(NVVM::NVVMMemorySpace::Shared));
      auto cluster = LLVM::LLVMPointerType::get(
          context,
          static_cast<unsigned>(NVVM::NVVMMemorySpace::SharedCluster));
      int64_t blocks = analysis.getScope(op).clusterSize;
      // With warp arrivals the warp's lanes meet (ordering their reads
      // before lane 0's release) and lane 0 arrives for all of them.
      Value count;
      OpBuilder::InsertionGuard guard(rewriter);
      if (op.getWarpArrivals()) {
        auto i32 = rewriter.getI32Type();
        NVVM::SyncWarpOp::create(
            rewriter, loc, arith::ConstantIntOp::create(rewriter, loc, i32, -1));
        Value lane = NVVM::LaneIdOp::create(rewriter, loc, i32);
        Value first = arith::CmpIOp::create(
            rewriter, loc, arith::CmpIPredicate::eq, lane,
            arith::ConstantIntOp::create(rewriter, loc, i32, 0));
        auto ifOp = scf::IfOp::create(rewriter, loc, first,
                                      /*withElseRegion=*/false);
        rewriter.setInsertionPoint(ifOp.thenBlock()->getTerminator());
        count = arith::ConstantIntOp::create(rewriter, loc, i32, 32);
      }
      for (Value slot : slots) {
        Value address = nvgpu::MBarrierGetOp::create(
            rewriter, loc, rewriter.getI32Type(), adaptor.getEvent(), slot);
        Value local = LLVM::IntToPtrOp::create(rewriter, loc, shared, address);
        for (int64_t rank = 0; rank < blocks; ++rank) {
          Value remote = NVVM::MapaOp::create(
              rewriter, loc, cluster, local,
              arith::ConstantIntOp::create(rewriter, loc,
                                           rewriter.getI32Type(), rank));
          NVVM::MBarrierArriveOp::create(rewriter, loc, Type(), remote,
                                         count, NVVM::MemScopeKind::CTA,
                                         /*relaxed=*/false);
        }
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
    if (!isMBarrierEvent(op.getEvent())) {
      EventType type = op.getEvent().getType();
      updateLocalCounts(rewriter, op.getLoc(), adaptor.getEvent(),
                        selectedSlots(rewriter, op.getLoc(), type,
                                      adaptor.getIndices(), adaptor.getOrder()),
                        -1);
      rewriter.eraseOp(op);
      return success();
    }
    // Which generation a wait is owed is a decision of its own.
    if (!adaptor.getParity())
      return op.emitOpError("has no phase parity: run croq-assign-phases "
                            "before the croq-to-gpu patterns");
    Location loc = op.getLoc();
    EventType type = op.getEvent().getType();
    // One parity names one element's phase.
    if (!adaptor.getOrder() && adaptor.getIndices().size() != type.getRank())
      return op.emitOpError("waits on several elements with one parity: "
                            "croq-assign-phases gives each element a wait "
                            "of its own");
    Value slot =
        adaptor.getOrder()
            ? arith::RemUIOp::create(rewriter, loc, adaptor.getOrder(),
                                     cIndex(rewriter, loc,
                                            type.getNumElements()))
            : linearSlot(rewriter, loc, type, adaptor.getIndices());
    nvgpu::MBarrierTryWaitParityOp::create(rewriter, loc, adaptor.getEvent(),
                                           adaptor.getParity(),
                                           cIndex(rewriter, loc, 10000000), slot);
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void mlir::croq::populateCroqToGPUEventPatterns(TypeConverter &converter,
    RewritePatternSet &patterns, const LaunchAnalysis &analysis) {
  patterns.add<EventAllocLowering, EventTriggerLowering, EventWaitLowering>(
      converter, patterns.getContext(), analysis);
}
