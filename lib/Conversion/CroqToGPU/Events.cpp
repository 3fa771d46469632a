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
    // Which generation a wait is owed is a decision of its own.
    if (!adaptor.getParity())
      return op.emitOpError("has no phase parity: run croq-assign-phases "
                            "before the croq-to-gpu patterns");
    Location loc = op.getLoc();
    EventType type = op.getEvent().getType();
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
