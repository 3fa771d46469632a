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
// the croq dialect), and checks that only copies into such a buffer, MMA
// operand loads, accumulator stores and element reads and writes (which
// convert-croq-to-gpu addresses in the swizzled layout) touch it.
//
// A staging buffer of an epilogue, which warpgroup `mma.store`s fill and
// TMA stores read, and nothing else accesses, gets the same swizzled
// layout: its contents are only ever seen through TMA, which undoes the
// swizzle, and in it the eight rows a warp's accumulator store spans fall
// in different banks (a plain row-major layout of rows of a multiple of
// 128 bytes puts them all in the same banks: 8-way conflicts). The TMA
// stores are made with the buffer's swizzle, one box per panel.
//
//===----------------------------------------------------------------------===//

#include "Common.h"
#include "Croq/Conversion/Passes.h"
#include "Croq/Dialect/Croq/Utils/TileAlgebra.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::croq {
#define GEN_PASS_DEF_CROQPLANSHAREDLAYOUTPASS
#include "Croq/Conversion/Passes.h.inc"
} // namespace mlir::croq

using namespace mlir;
using namespace mlir::croq;
using namespace mlir::croq::detail;

/// The swizzle span of a shared buffer of `type` in the layout wgmma reads
/// (and TMA writes), or 0 when the buffer cannot have one: rows of 32, 64
/// or a multiple of 128 bytes, and a multiple of 8 rows.
static int64_t swizzleSpanFor(MemRefType type) {
  if (type.getRank() < 2 || type.getShape()[type.getRank() - 2] % 8)
    return 0;
  int64_t rowBytes = type.getShape().back() * getStorageBytes(type.getElementType());
  return rowBytes % 128 == 0 ? 128 : rowBytes == 64 ? 64 : rowBytes == 32 ? 32 : 0;
}

/// Whether `op` is a span_as that keeps the wgmma layout's rows (a view,
/// not an access).
static bool isRowPreservingReshape(Operation *op) {
  return isa<memref::ReinterpretCastOp>(op) &&
         rowPreservingReshape(op->getResult(0));
}

/// Whether a croq-level view reaches its buffer through such a span_as.
static bool throughReshape(Value view) {
  while (Operation *def = view.getDefiningOp()) {
    if (isRowPreservingReshape(def))
      return true;
    if (!isa<SubspanOp, ChunkAtOp, memref::SubViewOp>(def))
      return false;
    view = def->getOperand(0);
  }
  return false;
}

/// Picks the swizzle span of every shared buffer that warpgroup MMAs read
/// and checks that nothing else reads or writes such a buffer.
static LogicalResult planSwizzledBuffers(ModuleOp module) {
  DenseSet<Operation *> operandBuffers;
  WalkResult result = module.walk([&](MmaLoadOp load) {
    // Sparsity metadata is read into registers, from any layout.
    if (load.getResult().getType().getScope() != Level::Warpgroup ||
        load.getResult().getType().getRole() == FragRole::Meta)
      return WalkResult::advance();
    memref::AllocOp alloc = viewedBuffer(load.getSource());
    // The data of a future that a loop carries or a swap exchanged: one of
    // several buffers, picked at run time. Each gets the layout, and the
    // load records its span (the descriptor is built from the address).
    if (auto data = viewSource(load.getSource()).getDefiningOp<FutureDataOp>();
        !alloc && data &&
        getStorage(cast<MemRefType>(data.getType())) == Storage::Shared) {
      FailureOr<SmallVector<memref::AllocOp>> buffers =
          futureBuffers(data.getFuture());
      int64_t span = 0;
      bool uniform = succeeded(buffers) && !buffers->empty();
      if (uniform) {
        int64_t rank = cast<MemRefType>(data.getType()).getRank();
        MemRefType type = bufferType(buffers->front(), rank);
        span = swizzleSpanFor(type);
        uniform = span && llvm::all_of(*buffers, [&](memref::AllocOp a) {
                    return bufferType(a, rank) == type &&
                           getStorage(type) == Storage::Shared;
                  });
      }
      if (!uniform) {
        load.emitOpError("is a warpgroup MMA operand from the data of a "
                         "future that names one of several buffers at run "
                         "time, which croq cannot trace to shared buffers "
                         "of one shape that wgmma can read; copy into an "
                         "array of buffers (`shared f16 [64, 64] s[2]`) and "
                         "read `s[k % 2]`");
        return WalkResult::interrupt();
      }
      if (std::optional<uint64_t> swizzle = load.getSwizzle();
          swizzle && static_cast<int64_t>(*swizzle) != span) {
        load.emitOpError("reads with swizzle(")
            << *swizzle << "), but its buffers are stored with swizzle "
            << span << "; write swizzle(" << span << ")";
        return WalkResult::interrupt();
      }
      load.setSwizzle(static_cast<uint64_t>(span));
      for (memref::AllocOp buffer : *buffers) {
        buffer->setAttr(kSwizzleAttrName,
                        IntegerAttr::get(IntegerType::get(load.getContext(), 64),
                                         span));
        operandBuffers.insert(buffer);
      }
      return WalkResult::advance();
    }
    if (viewSource(load.getSource()).getDefiningOp<memref::ReinterpretCastOp>()) {
      load.emitOpError("is a warpgroup MMA operand through a span_as or "
                       "strided view that does not keep the rows of its "
                       "shared buffer; wgmma reads a matrix [R, C] of a "
                       "contiguous buffer whose innermost extent is C, with "
                       "rows of 32, 64 or 128 bytes and R a multiple of 8");
      return WalkResult::interrupt();
    }
    if (!alloc || getStorage(alloc.getType()) != Storage::Shared) {
      load.emitOpError("is a warpgroup MMA operand, which wgmma reads from "
                       "shared memory; load it from a view of a shared "
                       "buffer");
      return WalkResult::interrupt();
    }
    MemRefType type = alloc.getType();
    int64_t rowBytes = type.getShape().back() * getStorageBytes(type.getElementType());
    int64_t span = swizzleSpanFor(type);
    if (!span) {
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
    operandBuffers.insert(alloc);
    return WalkResult::advance();
  });
  if (result.wasInterrupted())
    return failure();
  result = module.walk([&](Operation *op) {
    // Views, and the casts that give a buffer the type of the views it
    // stands beside (a `dma.any` placeholder's buffer), access nothing.
    if (isa<SubspanOp, ChunkAtOp, memref::SubViewOp, memref::CastOp>(op) ||
        isRowPreservingReshape(op))
      return WalkResult::advance();
    for (OpOperand &operand : op->getOpOperands()) {
      if (!isa<MemRefType>(operand.get().getType()))
        continue;
      memref::AllocOp alloc = viewedBuffer(operand.get());
      if (!alloc || alloc == op || !operandBuffers.contains(alloc))
        continue;
      int64_t span = cast<IntegerAttr>(alloc->getAttr(kSwizzleAttrName)).getInt();
      if (isa<memref::ReinterpretCastOp>(op)) {
        op->emitOpError("reshapes a shared buffer that warpgroup MMAs read, "
                        "whose rows of ")
            << alloc.getType().getShape().back() << " x "
            << alloc.getType().getElementType()
            << " are stored in the swizzled wgmma layout; a span_as of it "
               "must be a matrix [R, "
            << alloc.getType().getShape().back()
            << "] (the same rows, R a multiple of 8) of a buffer whose rows "
               "are 32, 64 or 128 bytes";
        return WalkResult::interrupt();
      }
      // Through a span_as, only wgmma and element accesses, which address
      // the rows they name.
      if (throughReshape(operand.get()) &&
          !isa<MmaLoadOp, memref::LoadOp, memref::StoreOp>(op)) {
        op->emitOpError("reaches a shared buffer that warpgroup MMAs read "
                        "through a span_as; copy into or store to the "
                        "buffer itself");
        return WalkResult::interrupt();
      }
      // A warp MMA (ldmatrix) reads plain rows, not the swizzled layout.
      if (auto load = dyn_cast<MmaLoadOp>(op);
          load && (load.getResult().getType().getScope() != Level::Warpgroup ||
                   load.getResult().getType().getRole() == FragRole::Meta)) {
        op->emitOpError("loads a warp MMA operand from a shared buffer that "
                        "warpgroup MMAs read, which is stored in the "
                        "swizzled wgmma layout; give the warp MMA's operand "
                        "a buffer of its own");
        return WalkResult::interrupt();
      }
      // Warpgroup operand loads, and the address queries
      // croq-bind-tma-futures makes to tell a future's buffer, do not see
      // the layout.
      if (isa<MmaLoadOp, DmaAnyOp, memref::ExtractAlignedPointerAsIndexOp,
              memref::ExtractStridedMetadataOp>(op))
        continue;
      // Element reads and writes, and accumulator stores, are addressed in
      // the swizzled layout by convert-croq-to-gpu (SwizzledElementAccess,
      // MmaStoreLowering).
      if (isa<memref::LoadOp, memref::StoreOp>(op))
        continue;
      if (auto store = dyn_cast<MmaStoreOp>(op);
          store && &operand == &store.getTargetMutable())
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
        // A TMA copy writes the layout it is told: without a swizzle of
        // its own it takes the buffer's (as a DMA copy does); a different
        // one would scramble the tile.
        if (!copy.getSwizzle()) {
          copy.setSwizzle(static_cast<decltype(*copy.getSwizzle())>(span));
          continue;
        }
        if (static_cast<int64_t>(*copy.getSwizzle()) == span)
          continue;
        op->emitOpError("fills a buffer that warpgroup MMAs read, which is "
                        "stored with swizzle ")
            << span << "; write tma.copy.swiz<" << span
            << "> or drop the swizzle";
        return WalkResult::interrupt();
      }
      op->emitOpError("accesses a shared buffer that warpgroup MMAs read, "
                      "which is stored in the swizzled wgmma layout; only "
                      "copies into it, MMA operand loads and stores, and "
                      "element reads and writes may use it, so give this "
                      "access a buffer of its own");
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (result.wasInterrupted())
    return failure();
  // The data of a future that names one of several such buffers at run
  // time is addressed only by copies into it and MMA operand loads (the
  // swizzle needs the buffer, which is known only at run time).
  result = module.walk([&](Operation *op) {
    if (isa<SubspanOp, ChunkAtOp, memref::SubViewOp, MmaLoadOp, DmaAnyOp,
            FutureDataOp, memref::ExtractAlignedPointerAsIndexOp,
            memref::ExtractStridedMetadataOp>(op) ||
        isRowPreservingReshape(op))
      return WalkResult::advance();
    for (OpOperand &operand : op->getOpOperands()) {
      if (!isa<MemRefType>(operand.get().getType()) ||
          viewedBuffer(operand.get()) ||
          !viewSource(operand.get()).getDefiningOp<FutureDataOp>() ||
          !plannedSwizzle(operand.get()))
        continue;
      auto copy = dyn_cast<CopyOpInterface>(op);
      if (copy && operand.get() == copy.getTarget())
        continue;
      op->emitOpError("accesses the data of a future that names one of "
                      "several buffers warpgroup MMAs read (carried by a "
                      "loop, or swapped); their swizzled layout is "
                      "addressed only by copies into them and MMA operand "
                      "loads, so access the elements through the buffers "
                      "themselves (an array `s[2]` read as `s[k % 2]`)");
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (result.wasInterrupted())
    return failure();
  // A copy into the data of a future that names one of several buffers at
  // run time writes their layout, which it records (as a copy into a
  // buffer takes the buffer's). futureDataSpan: the span of those buffers,
  // or 0 when the target is not such data or they have no layout.
  auto futureDataSpan = [](Value target) -> int64_t {
    return viewSource(target).getDefiningOp<FutureDataOp>()
               ? plannedSwizzle(target)
               : 0;
  };
  auto mismatch = [](Operation *copy, int64_t span) {
    copy->emitOpError("fills buffers that warpgroup MMAs read, which are "
                      "stored with swizzle ")
        << span << "; write the copy with swizzle " << span
        << " or drop the swizzle";
    return WalkResult::interrupt();
  };
  auto recordSpan = [&](auto copy) {
    int64_t span = futureDataSpan(copy.getTarget());
    if (!span)
      return WalkResult::advance();
    if (copy.getSwizzle() && static_cast<int64_t>(*copy.getSwizzle()) != span)
      return mismatch(copy, span);
    copy.setSwizzle(static_cast<std::decay_t<decltype(*copy.getSwizzle())>>(span));
    return WalkResult::advance();
  };
  result = module.walk([&](Operation *op) {
    if (auto copy = dyn_cast<DmaCopyOp>(op))
      return recordSpan(copy);
    if (auto copy = dyn_cast<TmaCopyOp>(op); copy && copy.isLoad())
      return recordSpan(copy);
    return WalkResult::advance();
  });
  if (result.wasInterrupted())
    return failure();
  // A swizzle is the layout of a buffer wgmma reads. Into any other buffer,
  // whose layout stays plain (its loads index it plainly), a copy is made
  // without it: the swizzle was only a layout request.
  auto plainTarget = [](Operation *copy, Value shared) {
    if (plannedSwizzle(shared))
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

/// True when `view` is a whole [rows, columns] plane of `alloc`: the
/// buffer itself, or a chain of memref.subview ops that slice only its
/// leading dimensions, or croq.subspan / croq.chunkat tiles of the whole
/// plane at index 0. Accumulator pairs then start at even columns and TMA
/// boxes at a row of a multiple of 8, which the swizzled layout needs.
static bool isWholePlane(Value view, memref::AllocOp alloc) {
  ArrayRef<int64_t> shape = alloc.getType().getShape();
  int64_t rows = shape[shape.size() - 2], cols = shape.back();
  auto plane = [&](Type type) {
    auto memref = dyn_cast<MemRefType>(type);
    return memref && memref.getRank() >= 2 &&
           memref.getShape()[memref.getRank() - 2] == rows &&
           memref.getShape().back() == cols;
  };
  auto zero = [](Value v) { return getConstantIntValue(v) == std::optional<int64_t>(0); };
  while (view != alloc.getResult()) {
    Operation *def = view.getDefiningOp();
    if (auto subview = dyn_cast_or_null<memref::SubViewOp>(def)) {
      ArrayRef<int64_t> offsets = subview.getStaticOffsets();
      if (!plane(subview.getType()) || offsets.size() < 2 ||
          offsets[offsets.size() - 1] != 0 || offsets[offsets.size() - 2] != 0)
        return false;
      view = subview.getSource();
    } else if (auto tile = dyn_cast_or_null<SubspanOp>(def)) {
      if (!plane(tile.getType()) || !llvm::all_of(tile.getIndices(), zero))
        return false;
      view = tile.getSource();
    } else if (auto tile = dyn_cast_or_null<ChunkAtOp>(def)) {
      if (!plane(tile.getType()) || !llvm::all_of(tile.getIndices(), zero))
        return false;
      view = tile.getSource();
    } else {
      return false;
    }
  }
  return true;
}

/// Gives every epilogue staging buffer (see the file comment) the swizzled
/// layout, and its TMA stores the swizzle. A buffer some other access
/// touches, a transposed or masked `mma.store` fills, or an access reaches
/// through a view other than a whole plane (isWholePlane), keeps the plain
/// layout.
static void planEpilogueBuffers(ModuleOp module) {
  DenseMap<memref::AllocOp, SmallVector<Operation *>> accesses;
  DenseSet<memref::AllocOp> plain;
  module.walk([&](Operation *op) {
    // Views, placeholders (a `tma.any` names the tile a store reads), and
    // the address queries croq-bind-tma-futures makes, do not access the
    // buffer.
    if (isa<SubspanOp, ChunkAtOp, memref::SubViewOp, DmaAnyOp,
            memref::ExtractAlignedPointerAsIndexOp,
            memref::ExtractStridedMetadataOp>(op))
      return;
    for (OpOperand &operand : op->getOpOperands()) {
      if (!isa<MemRefType>(operand.get().getType()))
        continue;
      memref::AllocOp alloc = viewedBuffer(operand.get());
      if (!alloc || alloc == op || getStorage(alloc.getType()) != Storage::Shared ||
          alloc->hasAttr(kSwizzleAttrName))
        continue;
      auto store = dyn_cast<MmaStoreOp>(op);
      auto copy = dyn_cast<TmaCopyOp>(op);
      bool staged =
          isWholePlane(operand.get(), alloc) &&
          ((store && &operand == &store.getTargetMutable() &&
           store.getValue().getType().getScope() == Level::Warpgroup &&
           !store.getTranspose() && !store.getRows() && !store.getCols()) ||
          (copy && !copy.isLoad() && &operand == &copy.getSourceMutable() &&
           // One box per panel moves a 2-D tile.
           llvm::all_of(cast<MemRefType>(operand.get().getType())
                            .getShape()
                            .drop_back(2),
                        [](int64_t d) { return d == 1; }) &&
           (!copy.getSwizzle() ||
            static_cast<int64_t>(*copy.getSwizzle()) ==
                swizzleSpanFor(alloc.getType()))));
      if (!staged)
        plain.insert(alloc);
      accesses[alloc].push_back(op);
    }
  });
  for (auto &[alloc, ops] : accesses) {
    int64_t span = swizzleSpanFor(alloc.getType());
    if (plain.contains(alloc) || !span || !alloc.getType().hasStaticShape() ||
        !llvm::any_of(ops, [](Operation *op) { return isa<MmaStoreOp>(op); }) ||
        !llvm::any_of(ops, [](Operation *op) { return isa<TmaCopyOp>(op); }))
      continue;
    auto spanAttr = IntegerAttr::get(IntegerType::get(alloc.getContext(), 64), span);
    alloc->setAttr(kSwizzleAttrName, spanAttr);
    for (Operation *op : ops)
      if (auto copy = dyn_cast<TmaCopyOp>(op))
        copy.setSwizzleAttr(spanAttr);
  }
}

namespace {

struct CroqPlanSharedLayoutPass
    : mlir::croq::impl::CroqPlanSharedLayoutPassBase<CroqPlanSharedLayoutPass> {
  void runOnOperation() override {
    if (failed(planSwizzledBuffers(getOperation())))
      return signalPassFailure();
    planEpilogueBuffers(getOperation());
  }
};

} // namespace
