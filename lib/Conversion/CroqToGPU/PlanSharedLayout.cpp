//===- PlanSharedLayout.cpp - the layout of shared buffers wgmma reads ----===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//
//
// wgmma reads its shared operands in the swizzled layouts TMA writes. This
// pass picks the swizzle span of every shared buffer that warpgroup MMAs
// read, records it as the buffer's `croq.swizzle` attribute (verified by
// the croq dialect), and checks that only copies into such a buffer and
// MMA operand loads touch it.
//
//===----------------------------------------------------------------------===//

#include "Common.h"
#include "Croq/Conversion/Passes.h"
#include "Croq/Dialect/Croq/Utils/TileAlgebra.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::croq {
#define GEN_PASS_DEF_CROQPLANSHAREDLAYOUTPASS
#include "Croq/Conversion/Passes.h.inc"
} // namespace mlir::croq

using namespace mlir;
using namespace mlir::croq;
using namespace mlir::croq::detail;

/// Picks the swizzle span of every shared buffer that warpgroup MMAs read
/// and checks that nothing else reads or writes such a buffer.
static LogicalResult planSwizzledBuffers(ModuleOp module) {
  WalkResult result = module.walk([&](MmaLoadOp load) {
    if (load.getResult().getType().getScope() != Level::Warpgroup)
      return WalkResult::advance();
    memref::AllocOp alloc = viewedBuffer(load.getSource());
    if (!alloc || getStorage(alloc.getType()) != Storage::Shared) {
      load.emitOpError("is a warpgroup MMA operand, which wgmma reads from "
                       "shared memory; load it from a view of a shared "
                       "buffer");
      return WalkResult::interrupt();
    }
    MemRefType type = alloc.getType();
    int64_t rowBytes = type.getShape().back() * getStorageBytes(type.getElementType());
    int64_t span = rowBytes % 128 == 0 ? 128
                   : rowBytes == 64    ? 64
                   : rowBytes == 32    ? 32
                                       : 0;
    if (!span || type.getRank() < 2 || type.getShape()[type.getRank() - 2] % 8) {
      load.emitOpError("reads buffer ")
          << type << " with wgmma, which needs rows of 32, 64 or a multiple "
          << "of 128 bytes and a multiple of 8 rows; reshape the buffer";
      return WalkResult::interrupt();
    }
    if (std::optional<int64_t> swizzle = load.getSwizzle();
        swizzle && *swizzle != span) {
      load.emitOpError("reads with swizzle(")
          << *swizzle << "), but the buffer's rows of " << rowBytes
          << " bytes are stored with swizzle " << span
          << "; write swizzle(" << span << ")";
      return WalkResult::interrupt();
    }
    alloc->setAttr(kSwizzleAttrName,
                   IntegerAttr::get(IntegerType::get(load.getContext(), 64),
                                    span));
    return WalkResult::advance();
  });
  if (result.wasInterrupted())
    return failure();
  result = module.walk([&](Operation *op) {
    if (isa<SubspanOp, ChunkAtOp, memref::SubViewOp>(op))
      return WalkResult::advance();
    for (OpOperand &operand : op->getOpOperands()) {
      if (!isa<MemRefType>(operand.get().getType()))
        continue;
      memref::AllocOp alloc = viewedBuffer(operand.get());
      if (!alloc || alloc == op || !alloc->hasAttr(kSwizzleAttrName))
        continue;
      int64_t span = cast<IntegerAttr>(alloc->getAttr(kSwizzleAttrName)).getInt();
      // Operand loads, and the address queries croq-bind-tma-futures makes
      // to tell a future's buffer, do not see the layout.
      if (isa<MmaLoadOp, memref::ExtractAlignedPointerAsIndexOp,
              memref::ExtractStridedMetadataOp>(op))
        continue;
      if (auto copy = dyn_cast<DmaCopyOp>(op);
          copy && &operand == &copy.getTargetMutable()) {
        // A copy writes the buffer's layout; a swizzle it names must be it.
        if (!copy.getSwizzle() || static_cast<int64_t>(*copy.getSwizzle()) == span)
          continue;
        op->emitOpError("fills a buffer that warpgroup MMAs read, which is "
                        "stored with swizzle ")
            << span << "; write dma.copy.swiz<" << span << "> or drop the swizzle";
        return WalkResult::interrupt();
      }
      if (auto copy = dyn_cast<TmaCopyOp>(op);
          copy && &operand == &copy.getTargetMutable()) {
        if (copy.getSwizzle() &&
            static_cast<int64_t>(*copy.getSwizzle()) == span)
          continue;
        op->emitOpError("fills a buffer that warpgroup MMAs read, which is "
                        "stored with swizzle ")
            << span << "; write tma.copy.swiz<" << span << ">";
        return WalkResult::interrupt();
      }
      op->emitOpError("accesses a shared buffer that warpgroup MMAs read, "
                      "which is stored in the swizzled wgmma layout; only "
                      "copies into it and MMA operand loads may use it, so "
                      "give this access a buffer of its own");
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (result.wasInterrupted())
    return failure();
  // A swizzle is the layout of a buffer wgmma reads. Into any other buffer,
  // whose layout stays plain (its loads index it plainly), a copy is made
  // without it: the swizzle was only a layout request.
  auto plainTarget = [](Operation *copy, Value shared) {
    memref::AllocOp alloc = viewedBuffer(shared);
    if (alloc && alloc->hasAttr(kSwizzleAttrName))
      return false;
    copy->emitWarning("asks for a swizzled shared tile, but no warpgroup MMA "
                      "reads this buffer, which keeps the plain layout its "
                      "other accesses use; the copy is made without the "
                      "swizzle");
    return true;
  };
  module.walk([&](DmaCopyOp copy) {
    if (copy.getSwizzle() && plainTarget(copy, copy.getTarget()))
      copy.removeSwizzleAttr();
  });
  module.walk([&](TmaCopyOp copy) {
    if (copy.getSwizzle() && copy.isLoad() &&
        plainTarget(copy, copy.getTarget()))
      copy.removeSwizzleAttr();
  });
  return success();
}

namespace {

struct CroqPlanSharedLayoutPass
    : mlir::croq::impl::CroqPlanSharedLayoutPassBase<CroqPlanSharedLayoutPass> {
  void runOnOperation() override {
    if (failed(planSwizzledBuffers(getOperation())))
      signalPassFailure();
  }
};

} // namespace
