//===- MaterializeTma.cpp - tensor maps and expected bytes as IR ----------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//
//
// Each TMA copy gets a tensor map over its whole global tensor with the
// shared tile as the box, created on the host before the kernel
// (`nvgpu.tma.create.descriptor`, which the host emitter turns into a
// cuTensorMapEncodeTiled call) and named by the copy's `map` operand. Each
// trigger that TMA loads complete on (D1 `bind e[i]`: the next trigger of
// that element in the block; D2 `trigger e after f`) gets the bytes they
// bring as its `expect_tx`.
//
//===----------------------------------------------------------------------===//

#include "Common.h"
#include "Croq/Analysis/Roles.h"
#include "Croq/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/IR/Dominance.h"

#include <numeric>

namespace mlir::croq {
#define GEN_PASS_DEF_CROQMATERIALIZETMAPASS
#include "Croq/Conversion/Passes.h.inc"
} // namespace mlir::croq

using namespace mlir;
using namespace mlir::croq;
using namespace mlir::croq::detail;

/// The global tensor a croq-level view looks into: a value defined outside
/// the kernel (a function argument), or null.
static Value viewedTensor(Value view, ParallelOp kernel) {
  view = viewSource(view);
  if (kernel->isAncestor(view.getParentRegion()->getParentOp()))
    return nullptr;
  auto type = dyn_cast<MemRefType>(view.getType());
  if (!type || !type.getLayout().isIdentity())
    return nullptr;
  return view;
}

/// The tensor dimension each dimension of the croq-level `view` of `tensor`
/// runs along, or failure when the view is not traced to it. Views keep
/// their rank, except that a rank-reducing memref.subview (`.sqz()`) drops
/// unit dimensions.
static FailureOr<SmallVector<unsigned>> tensorDims(Value view, Value tensor) {
  unsigned rank = cast<MemRefType>(view.getType()).getRank();
  auto dims = llvm::to_vector(llvm::seq<unsigned>(0, rank));
  while (view != tensor) {
    Operation *def = view.getDefiningOp();
    if (auto subview = dyn_cast_or_null<memref::SubViewOp>(def)) {
      llvm::SmallBitVector dropped = subview.getDroppedDims();
      SmallVector<unsigned> kept;
      for (unsigned d = 0, e = dropped.size(); d < e; ++d)
        if (!dropped[d])
          kept.push_back(d);
      for (unsigned &d : dims)
        d = kept[d];
    } else if (!isa_and_nonnull<SubspanOp, ChunkAtOp>(def)) {
      return failure();
    }
    view = def->getOperand(0);
  }
  return dims;
}

int64_t mlir::croq::detail::tileBytes(MemRefType type) {
  return type.getNumElements() * getStorageBytes(type.getElementType());
}

/// Builds the tensor maps on the host and gives each TMA copy its map;
/// gives each trigger the bytes of the TMA loads bound to its element.

/// Makes `value` available before `op`: it already is, or it is pure
/// arithmetic (an index cast of a mutable's value at the trigger) of values
/// that are, which moves above `op`.
static bool hoistAbove(Value value, Operation *op, DominanceInfo &dominance,
                       int depth = 0) {
  if (dominance.properlyDominates(value, op))
    return true;
  Operation *def = value.getDefiningOp();
  if (!def || depth > 8 || def->getNumRegions() || !isPure(def) ||
      def->getBlock() != op->getBlock())
    return false;
  for (Value operand : def->getOperands())
    if (!hoistAbove(operand, op, dominance, depth + 1))
      return false;
  def->moveBefore(op);
  return true;
}

static LogicalResult materializeTma(ModuleOp module) {
  DenseMap<std::tuple<Operation *, Value, Type>, Value> cache;
  DenseMap<Operation *, int64_t> expectBytes;
  WalkResult result = module.walk([&](TmaCopyOp copy) {
    ParallelOp kernel = kernelOf(copy);
    if (!kernel)
      return WalkResult::advance();
    bool load = copy.isLoad();
    Value globalView = load ? copy.getSource() : copy.getTarget();
    Value sharedView = load ? copy.getTarget() : copy.getSource();
    auto tileType = cast<MemRefType>(sharedView.getType());
    // A copy that has a map (from an earlier run, or the program) keeps it;
    // the bytes are counted afresh either way.
    if (!copy.getTensorMap()) {
      Value tensor = viewedTensor(globalView, kernel);
      if (!tensor) {
        copy.emitOpError("TMA needs a view of a row-major tensor argument of "
                         "the kernel, to build its tensor map on the host");
        return WalkResult::interrupt();
      }
      if (!tileType.hasStaticShape()) {
        copy.emitOpError("a TMA box needs a static shape, got ") << tileType;
        return WalkResult::interrupt();
      }
      // The box lands contiguously in shared memory.
      SmallVector<int64_t> strides;
      int64_t offset;
      if (failed(tileType.getStridesAndOffset(strides, offset)) ||
          strides != computeSuffixProduct(tileType.getShape())) {
        copy.emitOpError("TMA moves a box that is contiguous in shared memory, "
                         "but this shared view is strided (")
            << tileType << "); copy a whole buffer or a slice of its outer "
            << "dimensions";
        return WalkResult::interrupt();
      }
      if (llvm::any_of(tileType.getShape(), [](int64_t d) { return d > 256; }) ||
          tileType.getShape().back() * getStorageBytes(tileType.getElementType()) * 8 % 128) {
        copy.emitOpError("a TMA box has at most 256 elements per dimension and "
                         "an innermost extent of a multiple of 16 bytes, got ")
            << tileType;
        return WalkResult::interrupt();
      }
      if (copy.getSwizzle() && load) {
        if (!plannedSwizzle(sharedView)) {
          copy.emitOpError("writes a swizzled tile that only warpgroup MMAs can "
                           "read, but none reads this buffer; drop the swizzle");
          return WalkResult::interrupt();
        }
      }
      MLIRContext *context = copy.getContext();
      int64_t swizzle = copy.getSwizzle() ? *copy.getSwizzle() : 0;
      auto swizzleKind = swizzle == 128 ? nvgpu::TensorMapSwizzleKind::SWIZZLE_128B
                         : swizzle == 64 ? nvgpu::TensorMapSwizzleKind::SWIZZLE_64B
                         : swizzle == 32 ? nvgpu::TensorMapSwizzleKind::SWIZZLE_32B
                                         : nvgpu::TensorMapSwizzleKind::SWIZZLE_NONE;
      // A swizzled box is at most one span wide: a tile of wider rows (a
      // buffer of several panels) moves as one box per panel.
      SmallVector<int64_t> boxShape(tileType.getShape());
      int64_t rowBytes =
          tileType.getShape().back() * getStorageBytes(tileType.getElementType());
      if (swizzle && rowBytes > swizzle) {
        if (rowBytes % swizzle ||
            llvm::any_of(tileType.getShape().drop_back(2),
                         [](int64_t d) { return d != 1; })) {
          copy.emitOpError("moves rows of ")
              << rowBytes << " bytes with swizzle(" << swizzle
              << "): a tile wider than the swizzle span moves one span-wide "
                 "box per panel, which needs rows of a multiple of the span "
                 "and a 2-D tile";
          return WalkResult::interrupt();
        }
        boxShape.back() = swizzle / getStorageBytes(tileType.getElementType());
      }
      // The box has the tensor's rank: a view that dropped unit dimensions
      // (`.sqz()`) moves a box of extent 1 in each of them.
      auto tensorType = cast<MemRefType>(tensor.getType());
      // The tensor map needs each outer dimension's stride a multiple of 16
      // bytes. The host checks it at the call; a stride fixed by static
      // inner extents is refused here, at the copy.
      {
        SmallVector<int64_t> tensorStrides;
        int64_t tensorOffset;
        int64_t bytes = getStorageBytes(tensorType.getElementType());
        if (succeeded(tensorType.getStridesAndOffset(tensorStrides,
                                                     tensorOffset)))
          for (int64_t d = 0, e = tensorType.getRank() - 1; d < e; ++d) {
            int64_t stride = tensorStrides[d];
            if (ShapedType::isDynamic(stride) || stride * bytes % 16 == 0)
              continue;
            int64_t multiple = 16 / std::gcd<int64_t>(16, bytes);
            copy.emitOpError("TMA needs the rows of a tensor a multiple of 16 "
                             "bytes apart, but dimension ")
                << d << " of this tensor (" << tensorType << ") steps "
                << stride * bytes << " bytes; pad its inner extent to a "
                << "multiple of " << multiple << " elements, or copy with "
                << "dma.copy";
            return WalkResult::interrupt();
          }
      }
      FailureOr<SmallVector<unsigned>> dims = tensorDims(globalView, tensor);
      if (failed(dims) || dims->empty() ||
          dims->back() != tensorType.getRank() - 1) {
        copy.emitOpError("TMA moves tiles whose innermost dimension is the "
                         "tensor's innermost one; this view is not traced to "
                         "its tensor that way");
        return WalkResult::interrupt();
      }
      SmallVector<int64_t> tensorBox(tensorType.getRank(), 1);
      for (auto [viewDim, tensorDim] : llvm::enumerate(*dims))
        tensorBox[tensorDim] = boxShape[viewDim];
      boxShape = std::move(tensorBox);
      // croq stores sub-byte elements one a byte (isSubByte): TMA moves
      // those bytes, as 8-bit elements.
      Type boxElement = tileType.getElementType();
      if (isSubByte(boxElement))
        boxElement = IntegerType::get(context, 8);
      auto box = MemRefType::get(
          boxShape, boxElement, MemRefLayoutAttrInterface(),
          gpu::AddressSpaceAttr::get(context, gpu::AddressSpace::Workgroup));
      auto descriptorType = nvgpu::TensorMapDescriptorType::get(
          context, box, swizzleKind, nvgpu::TensorMapL2PromoKind::L2PROMO_128B,
          nvgpu::TensorMapOOBKind::OOB_ZERO,
          nvgpu::TensorMapInterleaveKind::INTERLEAVE_NONE);
      Value &descriptor = cache[{kernel, tensor, descriptorType}];
      if (!descriptor) {
        OpBuilder b(kernel);
        Location loc = copy.getLoc();
        Value unranked = memref::CastOp::create(
            b, loc,
            UnrankedMemRefType::get(tensorType.getElementType(),
                                    tensorType.getMemorySpace()),
            tensor);
        SmallVector<Value> boxDims;
        for (int64_t d : boxShape)
          boxDims.push_back(cIndex(b, loc, d));
        descriptor = nvgpu::TmaCreateDescriptorOp::create(b, loc, descriptorType,
                                                          unranked, boxDims);
      }
      copy.getTensorMapMutable().assign(descriptor);
    }
    if (!load)
      return WalkResult::advance();

    // D1: the next trigger of the bound element in the same block expects
    // the bytes.
    if (Value event = copy.getEvent()) {
      EventTriggerOp trigger;
      for (Operation *op = copy->getNextNode(); op && !trigger;
           op = op->getNextNode())
        if (auto t = dyn_cast<EventTriggerOp>(op);
            t && t.getEvent() == event && t.getAfter().empty() &&
            t.getIndices().size() == copy.getEventIndices().size() &&
            llvm::all_of(llvm::zip_equal(t.getIndices(),
                                         copy.getEventIndices()),
                         [](auto pair) {
                           return computesSameValue(std::get<0>(pair),
                                                    std::get<1>(pair));
                         }) &&
            !t.getOrder())
          trigger = t;
      if (!trigger) {
        copy.emitOpError("is bound to an event element that is not "
                         "triggered after it in the same block; the trigger "
                         "is what expects the copy's bytes, so add `trigger` "
                         "of the same element after the copy");
        return WalkResult::interrupt();
      }
      expectBytes[trigger] += tileBytes(tileType);
    }
    return WalkResult::advance();
  });
  if (result.wasInterrupted())
    return failure();

  // D2: `trigger e after f...` binds each TMA future to e's element.
  DominanceInfo dominance(module);
  DenseSet<Operation *> bound;
  result = module.walk([&](EventTriggerOp trigger) {
    for (Value future : trigger.getAfter()) {
      auto copy = future.getDefiningOp<TmaCopyOp>();
      if (!copy || !copy.isLoad() || copy.getEvent()) {
        trigger.emitOpError("`after` takes futures of unbound asynchronous "
                            "TMA loads");
        return WalkResult::interrupt();
      }
      if (!bound.insert(copy).second) {
        trigger.emitOpError("binds a TMA future that another trigger already "
                            "bound; each copy completes one event element");
        return WalkResult::interrupt();
      }
      SmallVector<Value> slotValues(trigger.getIndices());
      if (trigger.getOrder())
        slotValues.push_back(trigger.getOrder());
      for (Value v : slotValues)
        if (!hoistAbove(v, copy, dominance)) {
          trigger.emitOpError("selects its event element with a value "
                              "computed after the TMA copy it binds; the copy "
                              "needs the element when it is issued, so compute "
                              "the index before the copy");
          return WalkResult::interrupt();
        }
      expectBytes[trigger] +=
          tileBytes(cast<MemRefType>(copy.getTarget().getType()));
    }
    return WalkResult::advance();
  });
  if (result.wasInterrupted())
    return failure();
  for (auto [op, bytes] : expectBytes)
    cast<EventTriggerOp>(op).setExpectTx(bytes);
  return success();
}

namespace {

struct CroqMaterializeTmaPass
    : mlir::croq::impl::CroqMaterializeTmaPassBase<CroqMaterializeTmaPass> {
  void runOnOperation() override {
    if (failed(materializeTma(getOperation())))
      signalPassFailure();
  }
};

} // namespace
