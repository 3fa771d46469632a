//===- Tma.cpp - TMA copies and their host-built tensor maps --------------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#include "Common.h"
#include "Croq/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::croq {
#define GEN_PASS_DEF_CROQPASSTENSORMAPSBYPOINTERPASS
#include "Croq/Conversion/Passes.h.inc"
} // namespace mlir::croq

using namespace mlir;
using namespace mlir::croq;

namespace mlir::croq::detail {

//===----------------------------------------------------------------------===//
// TMA: tensor maps built by the host, cp.async.bulk.tensor on the device
//===----------------------------------------------------------------------===//
//
// Each TMA copy gets a tensor map over its whole global tensor, with the
// shared tile as the box, created on the host before the launch
// (`nvgpu.tma.create.descriptor`, which the host emitter turns into a
// cuTensorMapEncodeTiled call) and passed to the kernel. The coordinates
// of a copy are its global view's origin, innermost first. Out-of-range
// boxes (tail tiles) are zero-filled on loads and clipped on stores by
// the hardware.
//
// Loads complete on an mbarrier: the event the copy is bound to (D1
// `bind e[i]`, D2 the trigger that names its future with `after`), whose
// trigger by the issuing thread becomes `arrive.expect_tx` with the bytes
// of every copy bound to it; a synchronous load uses a barrier of its own
// and a per-thread phase. The issuing thread is the op's issuer
// (croq-elect-issuers).

/// The condition under which the executing thread issues (null: every
/// thread does), from the op's issuer (croq-elect-issuers).
Value issuer(OpBuilder &b, Location loc, Operation *op,
             const LaunchAnalysis &analysis) {
  // The patterns check that croq-elect-issuers gave the op its issuer.
  auto who = op->getAttrOfType<IssuerAttr>("issuer");
  if (who.getValue() == Issuer::Each)
    return Value();
  if (who.getValue() == Issuer::Lowest) {
    // The rank croq-elect-issuers found, in each instance of the group,
    // while the croq.inthreads around the op could still be enumerated
    // (the op verifiers require it).
    auto thread = op->getAttrOfType<IntegerAttr>("croq.issuer_thread");
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                 groupRank(b, loc, analysis.getScope(op)),
                                 cIndex(b, loc, thread.getInt()));
  }
  return electOneThread(b, loc, groupRank(b, loc, analysis.getScope(op)),
                        who.getValue() == Issuer::Elected);
}

/// Runs `body` on the issuing thread only.
static void onIssuer(OpBuilder &b, Location loc, Value condition,
                     function_ref<void(OpBuilder &)> body) {
  if (!condition) {
    body(b);
    return;
  }
  auto ifOp = scf::IfOp::create(b, loc, condition, /*withElseRegion=*/false);
  OpBuilder inner = ifOp.getThenBodyBuilder();
  body(inner);
}

/// D2: the trigger that names the future of `copy` with `after`, or null.
static EventTriggerOp boundTrigger(TmaCopyOp copy) {
  if (!copy.getFuture())
    return nullptr;
  for (Operation *user : copy.getFuture().getUsers())
    if (auto trigger = dyn_cast<EventTriggerOp>(user);
        trigger && llvm::is_contained(trigger.getAfter(), copy.getFuture()))
      return trigger;
  return nullptr;
}

static Value eventSlot(OpBuilder &b, Location loc, EventType type,
                       Value order, ValueRange indices) {
  if (order)
    return arith::RemUIOp::create(b, loc, order,
                                  cIndex(b, loc, type.getNumElements()));
  return linearSlot(b, loc, type, indices);
}

static FailureOr<SmallVector<Value>>
tmaCoordinates(ConversionPatternRewriter &rewriter, Location loc,
               Value globalView) {
  FailureOr<RootedView> view = rootView(rewriter, loc, globalView, &rewriter);
  if (failed(view))
    return failure();
  // Innermost dimension first, as the tensor map lists them.
  return llvm::to_vector(llvm::reverse(view->origin));
}

/// A barrier and a per-thread phase for one synchronous TMA load, made at
/// the start of its kernel.
static std::pair<Value, Value> syncTmaBarrier(OpBuilder &b, Location loc,
                                              gpu::LaunchOp launch,
                                              int64_t clusterSize,
                                              int64_t instances) {
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&launch.getBody().front());
  Value group =
      createMBarriers(b, loc, instances, /*arrivals=*/1, clusterSize);
  return {group, createPhaseBits(b, loc, /*count=*/1, /*start=*/false)};
}

/// `tile` as a view of the box's rank: the box is the tile with unit
/// dimensions inserted (the tensor dimensions a `.sqz()` dropped), so each
/// tile dimension expands into the box dimensions that multiply to it.
/// Null when the shapes do not match that way.
static Value expandToBox(OpBuilder &b, Location loc, Value tile,
                         ArrayRef<int64_t> box) {
  ArrayRef<int64_t> shape = cast<MemRefType>(tile.getType()).getShape();
  SmallVector<ReassociationIndices> groups(shape.size());
  size_t j = 0;
  for (auto [i, extent] : llvm::enumerate(shape)) {
    int64_t product = 1;
    do {
      if (j == box.size())
        return Value();
      product *= box[j];
      groups[i].push_back(j++);
    } while (product != extent || (i + 1 == shape.size() && j < box.size()));
    if (product != extent)
      return Value();
  }
  return memref::ExpandShapeOp::create(b, loc, box, tile, groups);
}

/// The shared boxes a TMA copy moves, with their coordinates: the tile
/// itself, or, when the tensor map's box is narrower than the tile (a
/// swizzled buffer of several panels), one box per panel at the panel's
/// address (see swizzledOffset) and columns.
static FailureOr<SmallVector<std::pair<Value, SmallVector<Value>>>>
tmaBoxes(ConversionPatternRewriter &b, Location loc, Value sharedView,
         Value descriptor, ArrayRef<Value> coords) {
  auto tile = cast<MemRefType>(sharedView.getType());
  MemRefType box =
      cast<nvgpu::TensorMapDescriptorType>(descriptor.getType()).getTensor();
  if (box.getElementType() != tile.getElementType()) {
    // Sub-byte elements, one a byte (materializeTma's byte box): the same
    // memory as bytes. Both memref types lower to one LLVM descriptor, so
    // the cast disappears when the kernel reaches LLVM.
    auto bytes = MemRefType::get(tile.getShape(), box.getElementType(),
                                 tile.getLayout(), tile.getMemorySpace());
    sharedView =
        UnrealizedConversionCastOp::create(b, loc, bytes, sharedView).getResult(0);
    tile = bytes;
  }
  SmallVector<std::pair<Value, SmallVector<Value>>> boxes;
  int64_t boxInner = box.getShape().back(), tileInner = tile.getShape().back();
  if (boxInner == tileInner) {
    if (box.getRank() != tile.getRank())
      sharedView = expandToBox(b, loc, sharedView, box.getShape());
    if (!sharedView)
      return failure();
    boxes.push_back({sharedView, SmallVector<Value>(coords)});
    return boxes;
  }
  FailureOr<RootedView> view = rootView(b, loc, sharedView, &b);
  int64_t span = swizzleSpan(sharedView, &b);
  if (failed(view) || !span)
    return failure();
  auto rootType = cast<MemRefType>(view->root.getType());
  int64_t rows = rootType.getShape()[rootType.getRank() - 2];
  Value origin = swizzledOffset(b, loc, rootType, view->origin, span);
  int64_t rank = box.getRank();
  SmallVector<int64_t> strides(rank, boxInner);
  strides.back() = 1;
  for (int64_t d = rank - 3; d >= 0; --d)
    strides[d] = strides[d + 1] * box.getShape()[d + 1];
  auto flat = memref::ReinterpretCastOp::create(
      b, loc,
      MemRefType::get({ShapedType::kDynamic}, tile.getElementType(),
                      MemRefLayoutAttrInterface(), tile.getMemorySpace()),
      view->root, OpFoldResult(b.getIndexAttr(0)),
      ArrayRef<OpFoldResult>{b.getIndexAttr(rootType.getNumElements())},
      ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
  for (int64_t p = 0; p < tileInner / boxInner; ++p) {
    Value offset = arith::AddIOp::create(b, loc, origin,
                                         cIndex(b, loc, p * rows * boxInner));
    auto type = MemRefType::get(
        box.getShape(), tile.getElementType(),
        StridedLayoutAttr::get(b.getContext(), ShapedType::kDynamic, strides),
        tile.getMemorySpace());
    SmallVector<OpFoldResult> sizes, strideAttrs;
    for (auto [extent, stride] : llvm::zip_equal(box.getShape(), strides)) {
      sizes.push_back(b.getIndexAttr(extent));
      strideAttrs.push_back(b.getIndexAttr(stride));
    }
    Value panel = memref::ReinterpretCastOp::create(b, loc, type, flat,
                                                    OpFoldResult(offset), sizes,
                                                    strideAttrs);
    SmallVector<Value> at(coords);
    at.front() = arith::AddIOp::create(b, loc, at.front(),
                                       cIndex(b, loc, p * boxInner));
    boxes.push_back({panel, at});
  }
  return boxes;
}

} // namespace mlir::croq::detail

using namespace mlir::croq::detail;

namespace {

struct TmaCopyLowering : ScopedPattern<TmaCopyOp> {
  using ScopedPattern::ScopedPattern;
  LogicalResult
  matchAndRewrite(TmaCopyOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value descriptor = adaptor.getTensorMap();
    if (!descriptor)
      return op.emitOpError("has no tensor map: run croq-materialize-tma "
                            "before the croq-to-gpu patterns");
    if (!op.getIssuer())
      return op.emitOpError("has no issuer: run croq-elect-issuers before the "
                            "croq-to-gpu patterns");
    bool load = op.isLoad();
    Value globalView = load ? adaptor.getSource() : adaptor.getTarget();
    Value sharedView = load ? adaptor.getTarget() : adaptor.getSource();
    FailureOr<SmallVector<Value>> coords =
        tmaCoordinates(rewriter, loc, globalView);
    if (!descriptor || failed(coords))
      return op.emitOpError("cannot take TMA coordinates from this view; "
                            "TMA needs unit-stride tiles of a tensor argument");
    FailureOr<SmallVector<std::pair<Value, SmallVector<Value>>>> boxes =
        tmaBoxes(rewriter, loc, sharedView, descriptor, *coords);
    if (failed(boxes))
      return op.emitOpError("moves a tile wider than its swizzle span, but "
                            "the tile is not a view of a swizzled buffer");
    LaunchAnalysis::Scope scope = analysis.getScope(op);
    Value issues = issuer(rewriter, loc, op, analysis);
    bool cooperative = op.getIssuer() != Issuer::Each;
    // A multicast load: the cluster's first block issues it, into the
    // same buffer and onto the same barrier of every block.
    Value loads = issues, mask;
    if (op.getMulticast()) {
      Value leader = arith::CmpIOp::create(rewriter, loc,
                                           arith::CmpIPredicate::eq,
                                           clusterRank(rewriter, loc),
                                           cIndex(rewriter, loc, 0));
      loads = issues ? arith::AndIOp::create(rewriter, loc, issues, leader)
                     : leader;
      mask = arith::ConstantIntOp::create(rewriter, loc, rewriter.getI16Type(),
                                          (1 << scope.clusterSize) - 1);
    }

    if (!load) {
      // One thread stores for an inthreads of several threads that are not
      // whole groups (issuer<lowest>): the group's barriers around the
      // store would wait for the threads the region leaves out.
      if (op.getIssuer() == Issuer::Lowest)
        return op.emitOpError(
            "is a TMA store that one thread issues for the threads of its "
            "croq.inthreads, which are only some of the group's threads: "
            "the group's barriers around the store would wait for the "
            "others; write the store outside the inthreads (croq elects the "
            "thread that issues it) or select whole groups");
      // The group's shared writes become visible to the async proxy, then
      // one thread stores. A synchronous store waits until the tile has
      // been read; an asynchronous one leaves that to the wait on its
      // future (croq-bind-tma-futures checked that one comes before the
      // tile is written again) and to the kernel's end.
      fenceAsyncProxy(rewriter, loc);
      if (cooperative)
        emitScopeBarrier(rewriter, loc, scope);
      onIssuer(rewriter, loc, issues, [&](OpBuilder &b) {
        for (auto &[box, at] : *boxes)
          nvgpu::TmaAsyncStoreOp::create(b, loc, box, descriptor, at, Value());
        NVVM::CpAsyncBulkCommitGroupOp::create(b, loc);
        if (!op.getAsync())
          NVVM::CpAsyncBulkWaitGroupOp::create(b, loc, 0, b.getUnitAttr());
      });
      if (op.getAsync()) {
        replaceCopy(rewriter, op, adaptor.getSource());
        return success();
      }
      if (cooperative)
        emitScopeBarrier(rewriter, loc, scope);
      rewriter.eraseOp(op);
      return success();
    }

    Value group, slot;
    if (op.getEvent()) {
      group = adaptor.getEvent();
      slot = eventSlot(rewriter, loc, op.getEvent().getType(), Value(),
                       adaptor.getEventIndices());
    } else if (EventTriggerOp trigger = boundTrigger(op)) {
      group = rewriter.getRemappedValue(trigger.getEvent());
      SmallVector<Value> indices;
      for (Value v : trigger.getIndices())
        indices.push_back(rewriter.getRemappedValue(v));
      Value order =
          trigger.getOrder() ? rewriter.getRemappedValue(trigger.getOrder())
                             : Value();
      slot = eventSlot(rewriter, loc, trigger.getEvent().getType(), order,
                       indices);
    } else if (op.getAsync()) {
      return op.emitOpError("is an asynchronous TMA load that completes no "
                            "event; name its future in `trigger e after f` "
                            "or bind it with tma.copy.async<e>");
    }

    if (group) {
      onIssuer(rewriter, loc, loads, [&](OpBuilder &b) {
        for (auto &[box, at] : *boxes)
          nvgpu::TmaAsyncLoadOp::create(b, loc, box, group, descriptor, at,
                                        slot, mask, Value());
      });
      replaceCopy(rewriter, op, sharedView);
      return success();
    }

    // Synchronous: the group's earlier reads of the tile finish, one thread
    // issues with its own barrier expecting the bytes, and everyone waits.
    auto launch = op->getParentOfType<gpu::LaunchOp>();
    if (!launch)
      return op.emitOpError("synchronous TMA outside a kernel");
    // Each instance of the issuing group (a warp, a warpgroup) issues its
    // own tile and waits for it: one barrier each, since a barrier counts
    // one arrival per phase.
    Value zero = cIndex(rewriter, loc, 0);
    // Several threads each issuing their own copy would arrive on the one
    // barrier of their instance more often than it counts.
    if (!cooperative && scope.manyThreads())
      return op.emitOpError(
          "is a synchronous TMA load that several threads issue, each its "
          "own, but it waits on one barrier per instance of its group: "
          "select one thread of each instance (e.g. inthreads (t == 0), the "
          "same thread in each), or bind the copy to an event");
    int64_t instances = 1;
    Value instance = zero;
    if (cooperative && scope.groupLevel != Level::Block &&
        !scope.runtimeBlock() &&
        scope.groupSize > 1 && scope.blockDim > scope.groupSize) {
      instances = scope.blockDim / scope.groupSize;
      instance = arith::DivUIOp::create(rewriter, loc, threadId(rewriter, loc),
                                        cIndex(rewriter, loc, scope.groupSize));
    }
    Value barrier, phase;
    std::tie(barrier, phase) =
        syncTmaBarrier(rewriter, loc, launch, scope.clusterSize, instances);
    int64_t bytes = tileBytes(cast<MemRefType>(sharedView.getType()));
    if (op.getMulticast()) {
      // Every block has finished with the buffer's previous tile, and
      // expects this one, before the first block overwrites all of them:
      // the whole block reaches the copy.
      if (scope.inThreads || scope.perThread ||
          scope.groupLevel != Level::Block)
        return op.emitOpError(
            "is a synchronous multicast load, which every thread of every "
            "block of the cluster reaches at once; here only some threads "
            "do: put it in the block's body, or bind it to an event "
            "(tma.copy.async<e>.multicast) whose producer waits on an event "
            "triggered across the cluster");
      emitClusterBarrier(rewriter, loc);
    }
    auto issueLoad = [&](OpBuilder &b) {
      for (auto &[box, at] : *boxes)
        nvgpu::TmaAsyncLoadOp::create(b, loc, box, barrier, descriptor, at,
                                      instance, mask, Value());
    };
    // Each block expects the bytes; only the cluster's first block loads
    // a multicast tile.
    onIssuer(rewriter, loc, issues, [&](OpBuilder &b) {
      nvgpu::MBarrierArriveExpectTxOp::create(b, loc, barrier,
                                              cIndex(b, loc, bytes), instance,
                                              Value());
      if (!op.getMulticast())
        issueLoad(b);
    });
    if (op.getMulticast())
      onIssuer(rewriter, loc, loads, issueLoad);
    waitOnPhaseBit(rewriter, loc, barrier, instance, phase, zero);
    replaceCopy(rewriter, op, sharedView);
    return success();
  }
};

struct CroqPassTensorMapsByPointerPass
    : mlir::croq::impl::CroqPassTensorMapsByPointerPassBase<
          CroqPassTensorMapsByPointerPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto pointerType = LLVM::LLVMPointerType::get(&getContext());
    module.walk([&](gpu::GPUFuncOp func) {
      if (!func.isKernel() || func.isExternal())
        return;
      Block &entry = func.getBody().front();
      OpBuilder b = OpBuilder::atBlockBegin(&entry);
      SmallVector<Type> inputs(func.getArgumentTypes());
      for (BlockArgument arg : entry.getArguments()) {
        Type type = arg.getType();
        if (!isa<nvgpu::TensorMapDescriptorType>(type))
          continue;
        arg.setType(pointerType);
        inputs[arg.getArgNumber()] = pointerType;
        auto cast = UnrealizedConversionCastOp::create(b, arg.getLoc(), type,
                                                       ValueRange{arg});
        arg.replaceAllUsesExcept(cast.getResult(0), cast);
      }
      func.setFunctionType(FunctionType::get(&getContext(), inputs,
                                             func.getResultTypes()));
    });
    module.walk([&](gpu::LaunchFuncOp launch) {
      OpBuilder b(launch);
      for (OpOperand &operand : launch->getOpOperands()) {
        if (!isa<nvgpu::TensorMapDescriptorType>(operand.get().getType()))
          continue;
        operand.set(UnrealizedConversionCastOp::create(
                        b, launch.getLoc(), pointerType, operand.get())
                        .getResult(0));
      }
    });
  }
};

} // namespace

void mlir::croq::populateCroqToGPUTmaPatterns(TypeConverter &converter,
                                             RewritePatternSet &patterns,
                                             const LaunchAnalysis &analysis) {
  patterns.add<TmaCopyLowering>(converter, patterns.getContext(), analysis);
}
