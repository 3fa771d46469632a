//===- Wgmma.cpp - warpgroup MMA over swizzled shared tiles ---------------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#include "Common.h"
#include "Croq/Analysis/Buffers.h"

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

using namespace mlir;
using namespace mlir::croq;

namespace mlir::croq::detail {

//===----------------------------------------------------------------------===//
// Warpgroup MMA: wgmma over swizzled shared tiles
//===----------------------------------------------------------------------===//
//
// A warpgroup operand fragment is a wgmma shared-memory matrix descriptor of
// a K-major tile. wgmma reads such tiles only in the layouts TMA writes, so
// every shared buffer that warpgroup MMAs read is stored swizzled with span
// S bytes (croq-plan-shared-layout picks S and marks the buffer
// `croq.swizzle`): its columns are cut into panels of S / e elements (e
// bytes each), a panel is an [R, S / e] tile, and 16-byte chunk c of row r
// of a panel sits at chunk c ^ ((r * S / 128) % (S / 16)). That is the
// TMA `.swiz<S>` layout of an [R, S / e] box, so TMA and cooperative copies
// may both fill the buffer. Only copies into it, MMA operand loads and
// element reads and writes (addressed in the layout, below) may touch it
// (checked by that pass).
//
// A warpgroup accumulator is the wgmma register layout: per thread, N / 2
// f32 (or N / 4 packed f16x2) of an LLVM struct. Each croq.mma issues its
// K / 16 wgmma.mma_async after a fence; they stay in flight until a commit
// closes the batch (one wgmma commit group) and waits: `mma.commit [pending
// N]` waits until N batches remain, while an MMA future's `wait`, a trigger
// of the role that issued them and an `mma.store` wait for all.



bool isWarpgroupFrag(Type type) {
  auto frag = dyn_cast<FragType>(type);
  return frag && frag.getScope() == Level::Warpgroup;
}

/// How many elements of a warpgroup fragment in the accumulator layout one
/// 32-bit register holds: consecutive registers of croq.mma.element's
/// numbering share it.
static int64_t accElementsPerRegister(Type element) {
  unsigned bits = element.getIntOrFloatBitWidth();
  return bits < 32 ? 32 / bits : 1;
}

/// `value` as the integer of its width (an 8-bit float as i8).
static Value asInteger(OpBuilder &b, Location loc, Value value) {
  Type type = value.getType();
  if (type.isInteger())
    return value;
  return arith::BitcastOp::create(
      b, loc, b.getIntegerType(type.getIntOrFloatBitWidth()), value);
}

Type wgmmaAccType(FragType type) {
  MLIRContext *context = type.getContext();
  int64_t n = type.getShape()[1];
  // 16-bit elements (an f16 accumulator; an f16 or bf16 A operand in
  // registers) two to a 32-bit register, 8-bit ones (an 8-bit A operand in
  // registers) four.
  if (int64_t perRegister = accElementsPerRegister(type.getElementType());
      perRegister > 1)
    return LLVM::LLVMStructType::getLiteral(
        context,
        SmallVector<Type>(n / 2 / perRegister, IntegerType::get(context, 32)));
  return LLVM::LLVMStructType::getLiteral(
      context, SmallVector<Type>(n / 2, type.getElementType()));
}

/// The shared buffer a croq-level view looks into, through croq.subspan,
/// croq.chunkat, memref.subview and the data of a copy's future; null when
/// it is not a buffer's view.
Value viewSource(Value view) {
  while (Operation *def = view.getDefiningOp()) {
    if (auto data = dyn_cast<FutureDataOp>(def)) {
      Operation *copy = data.getFuture().getDefiningOp();
      if (auto tma = dyn_cast_or_null<TmaCopyOp>(copy)) {
        view = tma.getTarget();
        continue;
      }
      if (auto dma = dyn_cast_or_null<DmaCopyOp>(copy)) {
        view = dma.getTarget();
        continue;
      }
      break;
    }
    if (!isa<SubspanOp, ChunkAtOp, memref::SubViewOp>(def) &&
        !rowPreservingReshape(view))
      break;
    view = def->getOperand(0);
  }
  return view;
}

memref::ReinterpretCastOp rowPreservingReshape(Value view) {
  auto reshape = view.getDefiningOp<memref::ReinterpretCastOp>();
  if (!reshape)
    return {};
  auto source = cast<MemRefType>(reshape.getSource().getType());
  MemRefType result = reshape.getType();
  if (getStorage(source) != Storage::Shared || !source.hasStaticShape() ||
      !result.hasStaticShape() || source.getRank() < 2 ||
      result.getRank() != 2)
    return {};
  int64_t cols = source.getShape().back();
  int64_t rowBytes = cols * getStorageBytes(source.getElementType());
  if (result.getShape()[1] != cols ||
      (rowBytes != 32 && rowBytes != 64 && rowBytes != 128) ||
      source.getShape()[source.getRank() - 2] % 8 || result.getShape()[0] % 8)
    return {};
  ArrayRef<int64_t> strides = reshape.getStaticStrides();
  if (strides.size() != 2 || strides[0] != cols || strides[1] != 1)
    return {};
  // The source's rows must be contiguous as well (a window of memory
  // strides over a tile of a wider buffer is not).
  if (!source.isStrided())
    return {};
  auto [sourceStrides, sourceOffset] = source.getStridesAndOffset();
  int64_t expected = 1;
  for (int64_t d = source.getRank() - 1; d >= 0; --d) {
    if (source.getShape()[d] != 1 && sourceStrides[d] != expected)
      return {};
    expected *= source.getShape()[d];
  }
  // At the source's own offset: 0, or the offset its metadata reports
  // (span_as keeps the view's start).
  OpFoldResult offset = reshape.getMixedOffsets().front();
  auto meta = dyn_cast_if_present<Value>(offset)
                  ? cast<Value>(offset).getDefiningOp<memref::ExtractStridedMetadataOp>()
                  : memref::ExtractStridedMetadataOp();
  bool atSourceOffset = (isConstantIntValue(offset, 0) && sourceOffset == 0) ||
                        (meta && meta.getSource() == reshape.getSource() &&
                         cast<Value>(offset) == meta.getOffset());
  return atSourceOffset ? reshape : memref::ReinterpretCastOp();
}

memref::AllocOp viewedBuffer(Value view) {
  return viewSource(view).getDefiningOp<memref::AllocOp>();
}

MemRefType bufferType(memref::AllocOp alloc, int64_t rank) {
  MemRefType type = alloc.getType();
  return MemRefType::get(type.getShape().take_back(rank),
                         type.getElementType(), MemRefLayoutAttrInterface(),
                         type.getMemorySpace());
}

/// The buffers the data of `future` may be at run time (buffersOf), each a
/// whole shared allocation of the future's data shape, or an array of such
/// buffers (`shared f16 [64, 64] s[2]`, whose elements are whole buffers):
/// the descriptor is built from the data's address, so a copy into a view
/// of a buffer would be read at the buffer's start.
FailureOr<SmallVector<memref::AllocOp>> futureBuffers(Value future) {
  auto data = cast<MemRefType>(cast<FutureType>(future.getType()).getDataType());
  // One whole buffer of the data's shape (its layout aside).
  auto whole = MemRefType::get(data.getShape(), data.getElementType(),
                               MemRefLayoutAttrInterface(),
                               data.getMemorySpace());
  Buffers names = buffersOf(future);
  if (names.unknown)
    return failure();
  SmallVector<memref::AllocOp> buffers;
  for (Value root : names.roots) {
    auto alloc = root.getDefiningOp<memref::AllocOp>();
    if (!alloc || alloc.getType().getRank() < data.getRank() ||
        !alloc.getType().getLayout().isIdentity() ||
        bufferType(alloc, data.getRank()) != whole)
      return failure();
    buffers.push_back(alloc);
  }
  return buffers;
}

static int64_t elementBytes(MemRefType type) {
  return getStorageBytes(type.getElementType());
}

/// `v` as the dialect conversion has converted it so far (itself outside a
/// conversion, or when nothing replaced it).
static Value remappedView(Value v, ConversionPatternRewriter *rewriter) {
  Value converted = rewriter ? rewriter->getRemappedValue(v) : Value();
  return converted ? converted : v;
}

FailureOr<RootedView> rootView(OpBuilder &b, Location loc, Value view,
                               ConversionPatternRewriter *rewriter) {
  unsigned rank = cast<MemRefType>(view.getType()).getRank();
  RootedView result{view, SmallVector<Value>(rank, cIndex(b, loc, 0)),
                    llvm::to_vector(llvm::seq<unsigned>(0, rank))};
  auto remapped = [&](Value v) { return remappedView(v, rewriter); };
  result.root = remapped(result.root);
  while (true) {
    // A row-preserving reshape to [rows, cols]: origin (R, c) is the
    // source's flattened row R, counted in its row dimension.
    if (memref::ReinterpretCastOp reshape =
            rowPreservingReshape(result.root)) {
      unsigned sourceRank = reshape.getSource().getType().getRank();
      SmallVector<Value> origin(sourceRank, cIndex(b, loc, 0));
      origin[sourceRank - 2] = result.origin[0];
      origin[sourceRank - 1] = result.origin[1];
      for (unsigned &d : result.dims)
        d += sourceRank - 2;
      result.origin = std::move(origin);
      result.root = remapped(reshape.getSource());
      continue;
    }
    auto subview = result.root.getDefiningOp<memref::SubViewOp>();
    if (!subview)
      break;
    if (!llvm::all_of(subview.getStaticStrides(),
                      [](int64_t s) { return s == 1; }))
      return failure();
    llvm::SmallBitVector dropped = subview.getDroppedDims();
    SmallVector<OpFoldResult> offsets = subview.getMixedOffsets();
    SmallVector<Value> origin;
    SmallVector<unsigned> sourceDim; // result dim -> source dim
    for (auto [d, offset] : llvm::enumerate(offsets)) {
      Value o = getValueOrCreateConstantIndexOp(b, loc, offset);
      if (!dropped[d]) {
        o = arith::AddIOp::create(b, loc, o, result.origin[sourceDim.size()]);
        sourceDim.push_back(d);
      }
      origin.push_back(o);
    }
    for (unsigned &d : result.dims)
      d = sourceDim[d];
    result.origin = std::move(origin);
    result.root = remapped(subview.getSource());
  }
  return result;
}

/// What a converted view looks into: the value under its memref.subview
/// ops and row-preserving reshapes.
static Value convertedViewSource(Value view,
                                 ConversionPatternRewriter *rewriter) {
  view = remappedView(view, rewriter);
  while (Operation *def = view.getDefiningOp()) {
    if (!isa<memref::SubViewOp>(def) && !rowPreservingReshape(view))
      break;
    view = remappedView(def->getOperand(0), rewriter);
  }
  return view;
}

/// The swizzle span of the buffer a converted view looks into, or 0.
int64_t swizzleSpan(Value view, ConversionPatternRewriter *rewriter) {
  view = convertedViewSource(view, rewriter);
  Operation *def = view.getDefiningOp();
  if (!def)
    return 0;
  auto attr = def->getAttrOfType<IntegerAttr>(kSwizzleAttrName);
  return attr ? attr.getInt() : 0;
}

/// True when a converted shared view looks into a value that is not a
/// buffer: the data of a future carried by a loop or swapped, one of
/// several buffers at run time.
bool mayNameSeveralBuffers(Value view, ConversionPatternRewriter *rewriter) {
  auto type = dyn_cast<MemRefType>(view.getType());
  if (!type || getStorage(type) != Storage::Shared)
    return false;
  view = convertedViewSource(view, rewriter);
  return !view.getDefiningOp<memref::AllocOp>() &&
         !view.getDefiningOp<memref::ViewOp>();
}

int64_t swizzleSpanOrRecorded(Value view, std::optional<uint64_t> recorded,
                              ConversionPatternRewriter *rewriter) {
  int64_t span = swizzleSpan(view, rewriter);
  if (!span && recorded && mayNameSeveralBuffers(view, rewriter))
    span = static_cast<int64_t>(*recorded);
  return span;
}

SmallVector<memref::AllocOp> viewedBuffers(Value view) {
  if (memref::AllocOp alloc = viewedBuffer(view))
    return {alloc};
  if (auto data = viewSource(view).getDefiningOp<FutureDataOp>())
    if (FailureOr<SmallVector<memref::AllocOp>> buffers =
            futureBuffers(data.getFuture());
        succeeded(buffers))
      return *buffers;
  return {};
}

int64_t plannedSwizzle(Value view) {
  int64_t span = 0;
  for (auto [i, buffer] : llvm::enumerate(viewedBuffers(view))) {
    auto attr = buffer->getAttrOfType<IntegerAttr>(kSwizzleAttrName);
    if (!attr || (i && attr.getInt() != span))
      return 0;
    span = attr.getInt();
  }
  return span;
}

bool hasSwizzledBuffer(Operation *scope) {
  return scope && scope->walk([](Operation *op) {
                          return op->hasAttr(kSwizzleAttrName)
                                     ? WalkResult::interrupt()
                                     : WalkResult::advance();
                        })
                      .wasInterrupted();
}

/// Where buffer index `index` lies in the swizzled layout of span `span`
/// (see the section comment): its 16-byte chunk counted from the buffer's
/// start, and the element's place in that chunk.
struct SwizzledPlace {
  Value chunks, inChunk;
};

static SwizzledPlace swizzledPlace(OpBuilder &b, Location loc, MemRefType type,
                                   ArrayRef<Value> index, int64_t span) {
  ArrayRef<int64_t> shape = type.getShape();
  int64_t rank = shape.size(), rows = shape[rank - 2], cols = shape[rank - 1];
  int64_t perRow = span / elementBytes(type);
  int64_t perChunk = 16 / elementBytes(type);
  auto c = [&](int64_t v) { return cIndex(b, loc, v); };
  Value lead = c(0);
  for (int64_t d = 0; d < rank - 2; ++d)
    lead = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, lead, c(shape[d])), index[d]);
  Value r = index[rank - 2], col = index[rank - 1];
  Value panel = arith::DivUIOp::create(b, loc, col, c(perRow));
  Value inPanel = arith::RemUIOp::create(b, loc, col, c(perRow));
  Value chunk = arith::DivUIOp::create(b, loc, inPanel, c(perChunk));
  Value inChunk = arith::RemUIOp::create(b, loc, inPanel, c(perChunk));
  Value pattern = arith::RemUIOp::create(
      b, loc,
      arith::DivUIOp::create(b, loc, arith::MulIOp::create(b, loc, r, c(span)),
                             c(128)),
      c(span / 16));
  Value swizzled = arith::XOrIOp::create(b, loc, chunk, pattern);
  // A swizzled buffer's rows are whole spans (croq-plan-shared-layout
  // picks the span so): its panels, rows and buffers are whole chunks.
  Value chunks = arith::MulIOp::create(b, loc, lead, c(rows * cols / perChunk));
  chunks = arith::AddIOp::create(
      b, loc, chunks,
      arith::MulIOp::create(b, loc, panel, c(rows * perRow / perChunk)));
  chunks = arith::AddIOp::create(
      b, loc, chunks, arith::MulIOp::create(b, loc, r, c(perRow / perChunk)));
  chunks = arith::AddIOp::create(b, loc, chunks, swizzled);
  return {chunks, inChunk};
}

/// Element offset of buffer index `index` in the swizzled layout of span
/// `span` (see the section comment).
Value swizzledOffset(OpBuilder &b, Location loc, MemRefType type,
                     ArrayRef<Value> index, int64_t span) {
  SwizzledPlace place = swizzledPlace(b, loc, type, index, span);
  Value offset = arith::MulIOp::create(b, loc, place.chunks,
                                       cIndex(b, loc, 16 / elementBytes(type)));
  return arith::AddIOp::create(b, loc, offset, place.inChunk);
}

/// Where element `index` of a view of a swizzled buffer lives: the buffer
/// flattened to one dimension, and the element's offset in it. The
/// flattened buffer is not a view of the buffer as croq-plan-shared-layout
/// sees views, so the access is not addressed twice (SwizzledElementAccess).
std::pair<Value, Value> swizzledElement(OpBuilder &b, Location loc,
                                        const RootedView &view,
                                        ArrayRef<Value> index, int64_t span) {
  auto type = cast<MemRefType>(view.root.getType());
  SmallVector<Value> full(view.origin);
  for (auto [d, i] : llvm::zip_equal(view.dims, index))
    full[d] = arith::AddIOp::create(b, loc, full[d], i);
  Value offset = swizzledOffset(b, loc, type, full, span);
  ReassociationIndices all =
      llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()));
  Value flat = memref::CollapseShapeOp::create(
      b, loc, view.root, ArrayRef<ReassociationIndices>{all});
  return {flat, offset};
}

/// The wgmma shared-memory descriptor of the K-major tile whose first
/// element is at `view`'s origin (whose row is a multiple of 8, so the
/// swizzle pattern starts there): start address, leading offset 1 (unused
/// by K-major swizzled tiles), stride 8 rows of the span between row
/// groups, and the swizzle mode.
static Value wgmmaDescriptor(OpBuilder &b, Location loc,
                             const RootedView &view, int64_t span) {
  auto type = cast<MemRefType>(view.root.getType());
  // The view's first 16-byte chunk in the root (wgmma addresses shared
  // memory in 16-byte units; the origin starts a chunk).
  Value chunks = swizzledPlace(b, loc, type, view.origin, span).chunks;
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, view.root);
  // A root that is not a whole allocation (the data of a future that names
  // an element of a buffer array, `s[k % 2]`) starts at its offset, a whole
  // number of buffers.
  if (!type.getLayout().isIdentity()) {
    auto meta = memref::ExtractStridedMetadataOp::create(b, loc, view.root);
    chunks = arith::AddIOp::create(
        b, loc, chunks,
        arith::DivUIOp::create(b, loc, meta.getOffset(),
                               cIndex(b, loc, 16 / elementBytes(type))));
  }
  Type i64 = b.getI64Type();
  auto c64 = [&](int64_t v) {
    return arith::ConstantIntOp::create(b, loc, i64, v);
  };
  // The root's descriptor, the same for every view of it (so computed once,
  // outside the loops), plus the view's chunk: a shared address stays below
  // 2^18 and the root is aligned to its swizzle pattern, so the start field
  // (address bits 4-17) takes the sum without carrying into the others.
  // Each k step's descriptor is then one add to the stage's.
  Value start = arith::IndexCastUIOp::create(b, loc, i64, base);
  start = arith::ShRUIOp::create(
      b, loc, arith::AndIOp::create(b, loc, start, c64(0x3FFFF)), c64(4));
  int64_t mode = span == 128 ? 1 : span == 64 ? 2 : 3;
  uint64_t fields = (uint64_t(1) << 16) | (uint64_t((8 * span) >> 4) << 32) |
                    (uint64_t(mode) << 62);
  Value root =
      arith::OrIOp::create(b, loc, start, c64(static_cast<int64_t>(fields)));
  return arith::AddIOp::create(
      b, loc, root, arith::IndexCastUIOp::create(b, loc, i64, chunks));
}

/// Static facts about the buffer behind a warpgroup operand fragment.
struct OperandBuffer {
  int64_t span;
  int64_t rows;
  int64_t elementBytes;
};

static FailureOr<OperandBuffer> operandBuffer(Value fragment) {
  auto load = fragment.getDefiningOp<MmaLoadOp>();
  if (!load)
    return failure();
  // A buffer, or the data of a future that names one of several (of one
  // type) at run time, whose span the load records.
  Value source = viewSource(load.getSource());
  auto type = cast<MemRefType>(source.getType());
  int64_t span = 0;
  if (auto alloc = source.getDefiningOp<memref::AllocOp>()) {
    if (auto attr = alloc->getAttrOfType<IntegerAttr>(kSwizzleAttrName))
      span = attr.getInt();
  } else if (source.getDefiningOp<FutureDataOp>() && load.getSwizzle()) {
    span = static_cast<int64_t>(*load.getSwizzle());
  }
  if (!span)
    return failure();
  return OperandBuffer{span, type.getShape()[type.getRank() - 2],
                       elementBytes(type)};
}

/// The descriptor advanced by k elements of K: for a K-major operand
/// within a swizzle row by bytes, across panels by whole panels; for an
/// MN-major one (rows along K) by k rows of the panel.
static Value advanceDescriptor(OpBuilder &b, Location loc, Value descriptor,
                               const OperandBuffer &buffer, int64_t k,
                               bool mnMajor) {
  int64_t offset;
  if (mnMajor) {
    offset = k * buffer.span;
  } else {
    int64_t bytes = k * buffer.elementBytes;
    offset =
        (bytes / buffer.span) * buffer.rows * buffer.span + bytes % buffer.span;
  }
  if (offset == 0)
    return descriptor;
  return arith::AddIOp::create(
      b, loc, descriptor,
      arith::ConstantIntOp::create(b, loc, b.getI64Type(), offset >> 4));
}

/// The descriptor of an MN-major operand: wgmma steps along M or N from
/// one swizzle panel (span bytes wide) to the next by the leading byte
/// offset, which K-major tiles leave unused. A panel is `rows` rows of the
/// span.
static Value mnMajorDescriptor(OpBuilder &b, Location loc, Value descriptor,
                               const OperandBuffer &buffer) {
  Type i64 = b.getI64Type();
  auto c64 = [&](int64_t v) {
    return arith::ConstantIntOp::create(b, loc, i64, v);
  };
  int64_t leading = (buffer.rows * buffer.span) >> 4;
  Value cleared =
      arith::AndIOp::create(b, loc, descriptor, c64(~(int64_t(0x3FFF) << 16)));
  return arith::OrIOp::create(b, loc, cleared, c64(leading << 16));
}

/// Closes the batch of issued wgmma (a commit group) and waits until at
/// most `pending` batches are in flight.
void waitWarpgroupMmas(OpBuilder &b, Location loc,
                              uint64_t pending) {
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  NVVM::WgmmaWaitGroupSyncOp::create(b, loc, pending);
}

Value fillWarpgroupAcc(OpBuilder &b, Location loc, FragType type,
                              Value value) {
  auto structType = cast<LLVM::LLVMStructType>(wgmmaAccType(type));
  Value element = value;
  Type elementType = type.getElementType();
  if (int64_t perRegister = accElementsPerRegister(elementType);
      perRegister > 1) {
    // Several elements per 32-bit register.
    Value bits = elementType.isF16() || elementType.isBF16()
                     ? value
                     : asInteger(b, loc, value);
    Value packed = vector::BroadcastOp::create(
        b, loc, VectorType::get({perRegister}, bits.getType()), bits);
    element = LLVM::BitcastOp::create(b, loc, b.getI32Type(), packed);
  }
  Value result = LLVM::PoisonOp::create(b, loc, structType);
  for (int64_t i = 0, e = structType.getBody().size(); i < e; ++i)
    result = LLVM::InsertValueOp::create(b, loc, result, element, i);
  return result;
}

static std::pair<Value, Value> warpgroupAccBase(OpBuilder &b, Location loc);

/// The sparsity metadata register of each wgmma.sp step, as the executing
/// thread supplies it (sparsity selector 0). For 16-bit types a step is 32
/// of K, 4 bytes a row: the first two lanes of each quad supply rows
/// r = 16 warp + lane / 4 and r + 8, lane 2q + h bytes 2h, 2h + 1 of each
/// (the others repeat them). For 8-bit floats a step is 64 of K, 8 bytes
/// a row: lane l supplies 4 bytes of row r + 8 (l mod 2), from byte
/// 4 ((l / 2) mod 2).
static Value loadSparseMetadata(OpBuilder &b, Location loc, FragType type,
                                Value source,
                                const std::optional<SmallVector<Value>> &valid) {
  Type element = type.getElementType();
  bool eightBit = element.getIntOrFloatBitWidth() == 8;
  int64_t step = sparseWgmmaK(element), stepBytes = step / 8;
  int64_t steps = type.getShape()[1] / step;
  // Row 16 warp + lane / 4, as an accumulator's register 0.
  Value row = warpgroupAccBase(b, loc).first;
  Value lane = arith::RemUIOp::create(b, loc, threadId(b, loc), cIndex(b, loc, 32));
  Value odd = arith::RemUIOp::create(b, loc, lane, cIndex(b, loc, 2));
  Type i32 = b.getI32Type();
  // A byte of the view; past the end of its tensor (a tail tile of a
  // global view) 0, which reads as positions (0, 1) below.
  Value zeroByte = arith::ConstantIntOp::create(b, loc, b.getI8Type(), 0);
  auto byteAt = [&](Value r, Value c) -> Value {
    Value v = loadOrZero(b, loc, source, {r, c},
                         valid ? inBounds(b, loc, {r, c}, *valid) : Value(),
                         zeroByte);
    return arith::ExtUIOp::create(b, loc, i32, v);
  };
  auto shifted = [&](Value v, int64_t bits) -> Value {
    return bits ? Value(arith::ShLIOp::create(
                      b, loc, v, arith::ConstantIntOp::create(b, loc, i32, bits)))
                : v;
  };
  Value result = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(VectorType::get({steps}, i32),
                                     b.getI32IntegerAttr(0).getValue()));
  for (int64_t s = 0; s < steps; ++s) {
    Value word;
    if (!eightBit) {
      Value col = arith::AddIOp::create(
          b, loc, cIndex(b, loc, s * stepBytes),
          arith::MulIOp::create(b, loc, odd, cIndex(b, loc, 2)));
      Value col1 = arith::AddIOp::create(b, loc, col, cIndex(b, loc, 1));
      Value row8 = arith::AddIOp::create(b, loc, row, cIndex(b, loc, 8));
      word = byteAt(row, col);
      word = arith::OrIOp::create(b, loc, word, shifted(byteAt(row, col1), 8));
      word = arith::OrIOp::create(b, loc, word, shifted(byteAt(row8, col), 16));
      word = arith::OrIOp::create(b, loc, word, shifted(byteAt(row8, col1), 24));
    } else {
      Value r = arith::AddIOp::create(
          b, loc, row, arith::MulIOp::create(b, loc, odd, cIndex(b, loc, 8)));
      Value half = arith::RemUIOp::create(
          b, loc, arith::DivUIOp::create(b, loc, lane, cIndex(b, loc, 2)),
          cIndex(b, loc, 2));
      Value col = arith::AddIOp::create(
          b, loc, cIndex(b, loc, s * stepBytes),
          arith::MulIOp::create(b, loc, half, cIndex(b, loc, 4)));
      for (int64_t i = 0; i < 4; ++i) {
        Value c = arith::AddIOp::create(b, loc, col, cIndex(b, loc, i));
        Value v = shifted(byteAt(r, c), 8 * i);
        word = i ? Value(arith::OrIOp::create(b, loc, word, v)) : v;
      }
    }
    // A group of all-zero metadata, (0, 0) (a tile clipped at the end of
    // the tensor, whose values are zeros), is one the PTX ISA leaves
    // undefined: it reads as (0, 1).
    Value any = word;
    for (int64_t shift : {1, 2, 3})
      any = arith::OrIOp::create(
          b, loc, any,
          arith::ShRUIOp::create(b, loc, word,
                                 arith::ConstantIntOp::create(b, loc, i32, shift)));
    Value lowBits = arith::ConstantIntOp::create(b, loc, i32, 0x11111111);
    Value empty = arith::XOrIOp::create(
        b, loc, arith::AndIOp::create(b, loc, any, lowBits), lowBits);
    word = arith::OrIOp::create(b, loc, word, shifted(empty, 2));
    result = vector::InsertOp::create(b, loc, word, result, s);
  }
  return result;
}

/// Whether index `v` is provably a multiple of `m`: a constant, a product
/// with such a factor, or a sum or difference of such values.
static bool isMultipleOf(Value v, int64_t m, int depth = 0) {
  if (m <= 1)
    return true;
  if (std::optional<int64_t> c = getConstantIntValue(v))
    return *c % m == 0;
  Operation *def = v.getDefiningOp();
  if (!def || depth > 16)
    return false;
  if (isa<arith::MulIOp>(def))
    return isMultipleOf(def->getOperand(0), m, depth + 1) ||
           isMultipleOf(def->getOperand(1), m, depth + 1);
  if (isa<arith::AddIOp, arith::SubIOp>(def))
    return isMultipleOf(def->getOperand(0), m, depth + 1) &&
           isMultipleOf(def->getOperand(1), m, depth + 1);
  if (isa<arith::IndexCastOp, arith::IndexCastUIOp>(def))
    return isMultipleOf(def->getOperand(0), m, depth + 1);
  return false;
}

LogicalResult lowerWarpgroupLoad(MmaLoadOp op, Value source,
                                        ConversionPatternRewriter &rewriter) {
  Location loc = op.getLoc();
  if (op.getResult().getType().getRole() == FragRole::Meta) {
    rewriter.replaceOp(op, loadSparseMetadata(
                               rewriter, loc, op.getResult().getType(), source,
                               validExtents(rewriter, loc, op.getSource())));
    return success();
  }
  int64_t span = swizzleSpanOrRecorded(source, op.getSwizzle(), &rewriter);
  if (!span)
    return op.emitOpError("reads a shared buffer without a wgmma layout: run "
                          "croq-plan-shared-layout before the croq-to-gpu "
                          "patterns");
  FailureOr<RootedView> view = failure();
  if (failed(view = rootView(rewriter, loc, source, &rewriter)))
    return op.emitOpError("cannot trace this operand to a swizzled shared "
                          "buffer through unit-stride views");
  // The descriptor starts a group of 8 swizzled rows, at a 16-byte chunk.
  auto type = cast<MemRefType>(view->root.getType());
  int64_t rank = type.getRank();
  int64_t chunk = std::max<int64_t>(1, 16 / elementBytes(type));
  if (!isMultipleOf(view->origin[rank - 2], 8) ||
      !isMultipleOf(view->origin[rank - 1], chunk))
    return op.emitOpError("reads a tile that croq cannot prove starts at a "
                          "row that is a multiple of 8 and a column that is "
                          "a multiple of ")
           << chunk << " of its shared buffer, where wgmma's layout groups "
              "rows and 16-byte chunks; take the operand as a chunkat or "
              "subspan tile of such extents";
  rewriter.replaceOp(op, wgmmaDescriptor(rewriter, loc, *view, span));
  return success();
}

/// `{$0, ..., $(n-1)}`: the accumulator registers of an inline wgmma.
static std::string accRegisterList(int64_t n) {
  std::string list = "{";
  for (int64_t i = 0; i < n; ++i)
    list += (i ? ", $" : "$") + std::to_string(i);
  return list + "}";
}

/// One wgmma in inline PTX (for the forms NVVM's op lacks): `ptx` writes
/// the accumulator registers as $0 ... $(n-1) (accRegisterList) and then
/// `inputs` with constraints `inputKinds` ("r,l,..."); the accumulator
/// `acc` is tied in and out.
static Value inlineWgmma(OpBuilder &b, Location loc, Value acc, bool f32Acc,
                         StringRef ptx, StringRef inputKinds,
                         ValueRange inputs) {
  auto structType = cast<LLVM::LLVMStructType>(acc.getType());
  int64_t n = structType.getBody().size();
  std::string constraints;
  llvm::raw_string_ostream cs(constraints);
  for (int64_t i = 0; i < n; ++i)
    cs << (i ? "," : "") << "=" << (f32Acc ? "f" : "r");
  cs << "," << inputKinds;
  for (int64_t i = 0; i < n; ++i)
    cs << "," << i;
  SmallVector<Value> operands(inputs);
  for (int64_t i = 0; i < n; ++i)
    operands.push_back(LLVM::ExtractValueOp::create(b, loc, acc, i));
  auto dialect =
      LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT);
  return LLVM::InlineAsmOp::create(b, loc, structType, operands, ptx,
                                   constraints, /*has_side_effects=*/true,
                                   /*is_align_stack=*/false,
                                   LLVM::TailCallKind::None, dialect,
                                   /*operand_attrs=*/ArrayAttr())
      .getResult(0);
}

/// The four A registers of 8-bit K step `step` (32 columns) from a 64 x K
/// operand in the accumulator layout. There, register w of lane
/// l = 4 g + q holds chunk w (columns 8w ... 8w + 7) at rows g and g + 8,
/// columns 8w + 2q and 8w + 2q + 1: bytes (g, 2q), (g, 2q + 1), (g + 8, 2q),
/// (g + 8, 2q + 1). wgmma's 8-bit A layout wants, in register 2h + r, row
/// g + 8r at columns 16h + 4q ... 16h + 4q + 3 of the step: the two pairs
/// of chunk 2h + q / 2 that lanes 2 (q mod 2) and 2 (q mod 2) + 1 of the
/// same quad hold. Each comes by a shuffle within the quad (both chunks
/// are sent, and the lane keeps the one it needs).
static SmallVector<Value, 4> eightBitARegisters(OpBuilder &b, Location loc,
                                                Value a, int64_t step) {
  Type i32 = b.getI32Type();
  auto constant = [&](int64_t v) {
    return arith::ConstantIntOp::create(b, loc, v, 32).getResult();
  };
  Value lane = arith::IndexCastUIOp::create(
      b, loc, i32,
      arith::RemUIOp::create(b, loc, threadId(b, loc), cIndex(b, loc, 32)));
  Value q = arith::AndIOp::create(b, loc, lane, constant(3));
  Value quad = arith::AndIOp::create(b, loc, lane, constant(~3));
  Value firstSource = arith::OrIOp::create(
      b, loc, quad,
      arith::ShLIOp::create(b, loc, arith::AndIOp::create(b, loc, q, constant(1)),
                            constant(1)));
  Value lowChunk = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, q,
                                         constant(2));
  Value width = constant(32);
  auto fetch = [&](int64_t h, int64_t s) {
    Value source = arith::AddIOp::create(b, loc, firstSource, constant(s));
    Value chunk[2];
    for (int64_t c = 0; c < 2; ++c)
      chunk[c] = gpu::ShuffleOp::create(
                     b, loc,
                     LLVM::ExtractValueOp::create(b, loc, a, 4 * step + 2 * h + c),
                     source, width, gpu::ShuffleMode::IDX)
                     .getShuffleResult();
    return arith::SelectOp::create(b, loc, lowChunk, chunk[0], chunk[1])
        .getResult();
  };
  SmallVector<Value, 4> registers;
  for (int64_t h = 0; h < 2; ++h) {
    Value first = fetch(h, 0), second = fetch(h, 1);
    // Row g: the low halves; row g + 8: the high halves.
    registers.push_back(arith::OrIOp::create(
        b, loc, arith::AndIOp::create(b, loc, first, constant(0xFFFF)),
        arith::ShLIOp::create(b, loc, second, constant(16))));
    registers.push_back(arith::OrIOp::create(
        b, loc, arith::ShRUIOp::create(b, loc, first, constant(16)),
        arith::AndIOp::create(b, loc, second,
                              constant(static_cast<int32_t>(0xFFFF0000)))));
  }
  return registers;
}

/// wgmma with A from registers (the RS form): `a` is the 64 x K operand in
/// the accumulator layout, packed into 32-bit registers. For 16-bit
/// elements the four registers of K step s are a's registers 4s ... 4s + 3;
/// 8-bit ones are permuted within each quad (eightBitARegisters). NVVM's
/// wgmma op takes A only as a descriptor, so this one is inline PTX, the
/// accumulator registers tied in and out.
static LogicalResult
lowerRegisterAWarpgroupMma(MmaOp op, Value acc, Value a, Value b,
                           ConversionPatternRewriter &rewriter) {
  Location loc = op.getLoc();
  FragType accType = op.getAcc().getType();
  FragType aType = op.getA().getType();
  FragType bType = op.getB().getType();
  FailureOr<OperandBuffer> bBuffer = operandBuffer(op.getB());
  if (failed(bBuffer))
    return op.emitOpError("operand B of a warpgroup MMA must come from "
                          "croq.mma.load of a shared buffer");
  Type aElement = aType.getElementType();
  if (aElement != bType.getElementType())
    return op.emitOpError("operand types differ: ") << aElement << " and "
                                                    << bType.getElementType();
  bool bMnMajor = operandGeometry(bType, op.getLayout()).kMajor;
  if (bMnMajor)
    b = mnMajorDescriptor(rewriter, loc, b, *bBuffer);
  int64_t n = accType.getShape()[1], k = aType.getShape()[1];
  Type accElement = accType.getElementType();
  bool f32Acc = accElement.isF32();
  auto structType = cast<LLVM::LLVMStructType>(acc.getType());
  int64_t accRegisters = structType.getBody().size();
  bool eightBit = aElement.getIntOrFloatBitWidth() == 8;
  bool integer = aElement.isInteger(8);
  if (eightBit && bMnMajor)
    return op.emitOpError("reads 8-bit B transposed; wgmma reads 8-bit "
                          "operands only K-major: write B as [N, K] "
                          "(row.row)");
  std::string abType =
      aElement.isBF16()                  ? "bf16"
      : aElement.isF16()                 ? "f16"
      : isa<Float8E4M3FNType>(aElement)  ? "e4m3"
      : isa<Float8E5M2Type>(aElement)    ? "e5m2"
      : integer && op.getUnsignedA()     ? "u8"
                                         : "s8";
  std::string bName =
      integer ? (op.getUnsignedB() ? "u8" : "s8") : abType;
  int64_t kStep = wgmmaK(aElement);
  std::string ptx;
  llvm::raw_string_ostream os(ptx);
  os << "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\nwgmma.mma_async.sync.aligned.m64n"
     << n << "k" << kStep << "."
     << (integer ? "s32" : f32Acc ? "f32" : "f16") << "." << abType << "."
     << bName << " " << accRegisterList(accRegisters) << ", {$"
     << accRegisters << ", $" << accRegisters + 1 << ", $" << accRegisters + 2
     << ", $" << accRegisters + 3 << "}, $" << accRegisters + 4 << ", p";
  // Float types scale A and B by 1; 16-bit ones may read B transposed.
  if (!integer)
    os << ", 1, 1";
  if (!eightBit)
    os << ", " << (bMnMajor ? 1 : 0);
  os << ";\n}";
  // Every step's A registers before the fence: shuffles between the
  // fence and a wgmma would make ptxas serialize the batch (C7515).
  SmallVector<SmallVector<Value>> aRegisters;
  for (int64_t kk = 0; kk < k; kk += kStep) {
    SmallVector<Value> &step = aRegisters.emplace_back();
    if (eightBit) {
      llvm::append_range(step, eightBitARegisters(rewriter, loc, a, kk / kStep));
      continue;
    }
    for (int64_t i = 0; i < 4; ++i)
      step.push_back(LLVM::ExtractValueOp::create(rewriter, loc, a, kk / 4 + i));
  }
  NVVM::WgmmaFenceAlignedOp::create(rewriter, loc);
  Value d = acc;
  for (int64_t kk = 0; kk < k; kk += kStep) {
    SmallVector<Value> inputs(aRegisters[kk / kStep]);
    inputs.push_back(advanceDescriptor(rewriter, loc, b, *bBuffer, kk, bMnMajor));
    d = inlineWgmma(rewriter, loc, d, f32Acc, ptx, "r,r,r,r,l", inputs);
  }
  rewriter.replaceOp(op, d);
  return success();
}

/// Sparse wgmma (wgmma.mma_async.sp): A's descriptor covers its K / 2
/// kept elements, B's the step's whole K, and each step takes its metadata
/// register. NVVM has no sparse wgmma op, so this one is inline PTX, the
/// accumulator registers tied in and out.
static LogicalResult lowerSparseWarpgroupMma(MmaOp op, Value acc, Value a,
                                             Value b, Value meta,
                                             ConversionPatternRewriter &rewriter) {
  Location loc = op.getLoc();
  FragType accType = op.getAcc().getType();
  FragType aType = op.getA().getType();
  FailureOr<OperandBuffer> aBuffer = operandBuffer(op.getA());
  FailureOr<OperandBuffer> bBuffer = operandBuffer(op.getB());
  if (failed(aBuffer) || failed(bBuffer))
    return op.emitOpError("operands of a warpgroup MMA must come from "
                          "croq.mma.load of a shared buffer");
  Type element = aType.getElementType();
  bool eightBit = element.getIntOrFloatBitWidth() == 8;
  std::string abType = element.isF16()    ? "f16"
                       : element.isBF16() ? "bf16"
                       : isa<Float8E4M3FNType>(element) ? "e4m3"
                                                         : "e5m2";
  int64_t n = accType.getShape()[1], k = op.getB().getType().getShape()[1];
  int64_t step = sparseWgmmaK(element);
  Type accElement = accType.getElementType();
  bool f32Acc = accElement.isF32();
  auto structType = cast<LLVM::LLVMStructType>(acc.getType());
  int64_t accRegisters = structType.getBody().size();
  std::string ptx;
  llvm::raw_string_ostream os(ptx);
  os << "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
     << "wgmma.mma_async.sp.sync.aligned.m64n" << n << "k" << step << "."
     << (f32Acc ? "f32" : "f16") << "." << abType << "." << abType << " "
     << accRegisterList(accRegisters) << ", $" << accRegisters << ", $"
     << accRegisters + 1 << ", $" << accRegisters + 2 << ", 0, p, 1, 1"
     << (eightBit ? "" : ", 0, 0") << ";\n}";
  NVVM::WgmmaFenceAlignedOp::create(rewriter, loc);
  Value d = acc;
  for (int64_t kk = 0; kk < k; kk += step) {
    Value inputs[] = {
        advanceDescriptor(rewriter, loc, a, *aBuffer, kk / 2, false),
        advanceDescriptor(rewriter, loc, b, *bBuffer, kk, false),
        vector::ExtractOp::create(rewriter, loc, meta, kk / step)};
    d = inlineWgmma(rewriter, loc, d, f32Acc, ptx, "l,l,r", inputs);
  }
  rewriter.replaceOp(op, d);
  return success();
}

LogicalResult lowerWarpgroupMma(MmaOp op, Value acc, Value a, Value b,
                                Value meta,
                                ConversionPatternRewriter &rewriter) {
  Location loc = op.getLoc();
  FragType accType = op.getAcc().getType();
  FragType aType = op.getA().getType();
  if (meta)
    return lowerSparseWarpgroupMma(op, acc, a, b, meta, rewriter);
  if (aType.getRole() == FragRole::Acc)
    return lowerRegisterAWarpgroupMma(op, acc, a, b, rewriter);
  FailureOr<OperandBuffer> aBuffer = operandBuffer(op.getA());
  FailureOr<OperandBuffer> bBuffer = operandBuffer(op.getB());
  if (failed(aBuffer) || failed(bBuffer))
    return op.emitOpError("operands of a warpgroup MMA must come from "
                          "croq.mma.load of a shared buffer");
  MLIRContext *context = op.getContext();
  // f32 operands multiply as tf32; an f32 accumulator is f32.
  auto wgmmaType = [&](Type t, bool operand, bool isUnsigned = false) {
    NVVM::WGMMATypes kind = t.isF16()                  ? NVVM::WGMMATypes::f16
                            : t.isBF16()               ? NVVM::WGMMATypes::bf16
                            : isa<Float8E4M3FNType>(t) ? NVVM::WGMMATypes::e4m3
                            : isa<Float8E5M2Type>(t)   ? NVVM::WGMMATypes::e5m2
                            : t.isInteger(8) && isUnsigned ? NVVM::WGMMATypes::u8
                            : t.isInteger(8)           ? NVVM::WGMMATypes::s8
                            : t.isInteger(32)          ? NVVM::WGMMATypes::s32
                            : operand                  ? NVVM::WGMMATypes::tf32
                                                       : NVVM::WGMMATypes::f32;
    return NVVM::WGMMATypesAttr::get(context, kind);
  };
  // Integer products wrap in the s32 accumulator, as C++ integers would.
  NVVM::MMAIntOverflowAttr overflow;
  if (aType.getElementType().isInteger(8))
    overflow = NVVM::MMAIntOverflowAttr::get(context,
                                             NVVM::MMAIntOverflow::wrapped);
  // A K-major operand is A [M, K] or B [N, K]; an MN-major one (A [K, M]
  // of col.*, B [K, N] of *.col) is read transposed, which wgmma allows for
  // 16-bit types (verifyLowerable checked that).
  OperandGeometry aGeometry = operandGeometry(aType, op.getLayout());
  OperandGeometry bGeometry =
      operandGeometry(op.getB().getType(), op.getLayout());
  bool aMnMajor = aGeometry.kMajor, bMnMajor = bGeometry.kMajor;
  int64_t n = accType.getShape()[1], k = aGeometry.k;
  Type bElement = op.getB().getType().getElementType();
  int64_t kStep = wgmmaK(aType.getElementType());
  auto shape = NVVM::MMAShapeAttr::get(context, kWgmmaM, n, kStep);
  auto scaleOut = NVVM::WGMMAScaleOutAttr::get(context, NVVM::WGMMAScaleOut::one);
  auto scaleIn = NVVM::WGMMAScaleInAttr::get(context, NVVM::WGMMAScaleIn::one);
  // NVVM's row A and col B are K-major (no transpose).
  auto layoutA = NVVM::MMALayoutAttr::get(
      context, aMnMajor ? NVVM::MMALayout::col : NVVM::MMALayout::row);
  auto layoutB = NVVM::MMALayoutAttr::get(
      context, bMnMajor ? NVVM::MMALayout::row : NVVM::MMALayout::col);
  if (aMnMajor)
    a = mnMajorDescriptor(rewriter, loc, a, *aBuffer);
  if (bMnMajor)
    b = mnMajorDescriptor(rewriter, loc, b, *bBuffer);
  Type structType = acc.getType();
  NVVM::WgmmaFenceAlignedOp::create(rewriter, loc);
  Value d = acc;
  for (int64_t kk = 0; kk < k; kk += kStep) {
    Value da = advanceDescriptor(rewriter, loc, a, *aBuffer, kk, aMnMajor);
    Value db = advanceDescriptor(rewriter, loc, b, *bBuffer, kk, bMnMajor);
    d = NVVM::WgmmaMmaAsyncOp::create(
        rewriter, loc, structType, d, da, db, shape,
        wgmmaType(aType.getElementType(), true, op.getUnsignedA()),
        wgmmaType(bElement, true, op.getUnsignedB()),
        wgmmaType(accType.getElementType(), false), scaleOut, scaleIn,
        scaleIn, layoutA, layoutB, overflow);
  }
  rewriter.replaceOp(op, d);
  return success();
}

/// The accumulator element register 0 of the executing thread holds: in
/// warp w of the warpgroup, lane l holds row 16w + l / 4, column 2 (l % 4).
static std::pair<Value, Value> warpgroupAccBase(OpBuilder &b, Location loc) {
  Value rank = arith::RemUIOp::create(b, loc, threadId(b, loc), cIndex(b, loc, 128));
  Value warp = arith::DivUIOp::create(b, loc, rank, cIndex(b, loc, 32));
  Value lane = arith::RemUIOp::create(b, loc, rank, cIndex(b, loc, 32));
  Value row = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, warp, cIndex(b, loc, 16)),
      arith::DivUIOp::create(b, loc, lane, cIndex(b, loc, 4)));
  Value col = arith::MulIOp::create(
      b, loc, arith::RemUIOp::create(b, loc, lane, cIndex(b, loc, 4)),
      cIndex(b, loc, 2));
  return {row, col};
}

std::pair<Value, Value> warpgroupAccCoords(OpBuilder &b, Location loc,
                                           int64_t r) {
  auto [row, col] = warpgroupAccBase(b, loc);
  row = arith::AddIOp::create(b, loc, row, cIndex(b, loc, 8 * ((r % 4) / 2)));
  col = arith::AddIOp::create(b, loc, col, cIndex(b, loc, 8 * (r / 4) + r % 2));
  return {row, col};
}

Value warpgroupAccElement(OpBuilder &b, Location loc, FragType type,
                          Value acc, int64_t r) {
  Type element = type.getElementType();
  int64_t perRegister = accElementsPerRegister(element);
  if (perRegister == 1)
    return LLVM::ExtractValueOp::create(b, loc, acc, r);
  // Several elements per 32-bit register.
  Type bits = b.getIntegerType(element.getIntOrFloatBitWidth());
  Type lanes = VectorType::get({perRegister}, element.isF16() || element.isBF16()
                                                  ? element
                                                  : bits);
  Value packed = LLVM::BitcastOp::create(
      b, loc, lanes, LLVM::ExtractValueOp::create(b, loc, acc, r / perRegister));
  Value v = vector::ExtractOp::create(b, loc, packed, r % perRegister);
  return v.getType() == element ? v : arith::BitcastOp::create(b, loc, element, v);
}

Value setWarpgroupAccElement(OpBuilder &b, Location loc, FragType type,
                             Value acc, int64_t r, Value value) {
  Type element = type.getElementType();
  int64_t perRegister = accElementsPerRegister(element);
  if (perRegister == 1)
    return LLVM::InsertValueOp::create(b, loc, acc, value, r);
  if (!element.isF16() && !element.isBF16())
    value = asInteger(b, loc, value);
  Value packed = LLVM::BitcastOp::create(
      b, loc, VectorType::get({perRegister}, value.getType()),
      LLVM::ExtractValueOp::create(b, loc, acc, r / perRegister));
  packed = vector::InsertOp::create(b, loc, value, packed, r % perRegister);
  Value word = LLVM::BitcastOp::create(b, loc, b.getI32Type(), packed);
  return LLVM::InsertValueOp::create(b, loc, acc, word, r / perRegister);
}

/// Stores a wgmma accumulator: warp w of the warpgroup holds rows
/// [16w, 16w + 16); lane l holds, for each 8-column block j, rows
/// 16w + l / 4 (+ 8) and columns 8j + 2 (l % 4) (+ 1), registers 4j + 2h + e
/// (f32) or half e of register 2j + h (f16).
void storeWarpgroupAcc(OpBuilder &b, Location loc, FragType type, Value acc,
                       Value target, std::optional<SmallVector<Value>> valid,
                       bool transpose, const RootedView *swizzled,
                       int64_t span) {
  waitWarpgroupMmas(b, loc);
  Value rowBase, colBase;
  std::tie(rowBase, colBase) = warpgroupAccBase(b, loc);
  Type from = type.getElementType();
  auto targetType = cast<MemRefType>(target.getType());
  Type to = targetType.getElementType();
  int64_t n = type.getShape()[1];
  auto element = [&](OpBuilder &b, int64_t j, int64_t h, int64_t e) -> Value {
    Value v;
    if (from.isF16()) {
      Value pair = LLVM::BitcastOp::create(
          b, loc, VectorType::get({2}, b.getF16Type()),
          LLVM::ExtractValueOp::create(b, loc, acc, 2 * j + h));
      v = vector::ExtractOp::create(b, loc, pair, e);
    } else {
      v = LLVM::ExtractValueOp::create(b, loc, acc, 4 * j + 2 * h + e);
    }
    return convertElement(b, loc, v, to);
  };
  // Element (row, col) of the fragment goes to (col, row) when transposed.
  auto at = [&](Value row, Value col) -> SmallVector<Value> {
    if (transpose)
      return {col, row};
    return {row, col};
  };
  // Where a target index lives: in the target, or, for a swizzled staging
  // buffer, at its swizzled place in the buffer (a pair of columns from an
  // even column stays inside its 16-byte chunk).
  auto place = [&](OpBuilder &b, SmallVector<Value> where)
      -> std::pair<Value, SmallVector<Value>> {
    if (!swizzled)
      return {target, where};
    auto [flat, offset] = swizzledElement(b, loc, *swizzled, where, span);
    return {flat, {offset}};
  };
  // The pair of adjacent columns a thread holds in register block (j, h),
  // and its store where the pair is aligned.
  VectorType pairType = VectorType::get({2}, to);
  auto pairOf = [&](OpBuilder &b, int64_t j, int64_t h) -> Value {
    return vector::FromElementsOp::create(
        b, loc, pairType, ValueRange{element(b, j, h, 0), element(b, j, h, 1)});
  };
  auto storePair = [&](OpBuilder &b, Value pair, Value dst, ValueRange indices) {
    vector::StoreOp::create(b, loc, pair, dst, indices, /*nontemporal=*/false,
                            llvm::MaybeAlign(2 * to.getIntOrFloatBitWidth() / 8));
  };
  // Each thread holds pairs of adjacent columns: one vector store each where
  // the target rows are contiguous and pairs aligned, else element stores,
  // guarded in a tail tile (elements past the end of the tensor dropped).
  // A transposed pair is not contiguous: element stores.
  // Unswizzled, untransposed stores go through a view of each of the
  // thread's two rows from column 0, so that every store is at a constant
  // offset from one of two addresses and a tail tile checks each row once.
  // (Indexing the target directly gives LLVM a product of a row and the
  // run-time row stride per element, which its straight-line strength
  // reduction rewrites in quadratic time: a third of the GEMM's compile.)
  // The views stay inside the target's static shape.
  SmallVector<int64_t> strides;
  int64_t offset;
  bool contiguous = !transpose &&
                    succeeded(targetType.getStridesAndOffset(strides, offset)) &&
                    strides.back() == 1;
  ArrayRef<int64_t> shape = targetType.getShape();
  bool byRows = !swizzled && !transpose && targetType.getRank() == 2 &&
                !ShapedType::isDynamic(shape[0]) && shape[0] >= kWgmmaM &&
                !ShapedType::isDynamic(shape[1]) && shape[1] >= n;
  auto emitByRows = [&](OpBuilder &b, bool guarded, bool paired) {
    for (int64_t h = 0; h < 2; ++h) {
      Value row = arith::AddIOp::create(b, loc, rowBase, cIndex(b, loc, 8 * h));
      OpBuilder rowBuilder = b;
      if (guarded)
        rowBuilder = scf::IfOp::create(b, loc,
                                       inBounds(b, loc, row, (*valid)[0]),
                                       /*withElseRegion=*/false)
                         .getThenBodyBuilder();
      SmallVector<OpFoldResult> offsets = {row, b.getIndexAttr(0)};
      SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1), b.getIndexAttr(n)};
      SmallVector<OpFoldResult> steps(2, b.getIndexAttr(1));
      Value view = memref::SubViewOp::create(rowBuilder, loc, target, offsets,
                                             sizes, steps);
      Value zero = cIndex(rowBuilder, loc, 0);
      for (int64_t j = 0; j < n / 8; ++j) {
        Value col =
            arith::AddIOp::create(rowBuilder, loc, colBase, cIndex(rowBuilder, loc, 8 * j));
        if (paired) {
          storePair(rowBuilder, pairOf(rowBuilder, j, h), view, {zero, col});
          continue;
        }
        if (guarded && contiguous) {
          // A masked pair: one store without a branch, whatever part of it
          // lies inside (LLVM splits it after its scalar optimizations).
          auto inside = [&](int64_t e) -> Value {
            Value c = arith::AddIOp::create(rowBuilder, loc, col,
                                            cIndex(rowBuilder, loc, e));
            return inBounds(rowBuilder, loc, c, (*valid)[1]);
          };
          Value mask = vector::FromElementsOp::create(
              rowBuilder, loc, VectorType::get({2}, rowBuilder.getI1Type()),
              ValueRange{inside(0), inside(1)});
          vector::MaskedStoreOp::create(rowBuilder, loc, view,
                                        ValueRange{zero, col}, mask,
                                        pairOf(rowBuilder, j, h));
          continue;
        }
        for (int64_t e = 0; e < 2; ++e) {
          Value c = arith::AddIOp::create(rowBuilder, loc, col,
                                          cIndex(rowBuilder, loc, e));
          Value v = element(rowBuilder, j, h, e);
          OpBuilder inner = rowBuilder;
          if (guarded)
            inner = scf::IfOp::create(rowBuilder, loc,
                                      inBounds(rowBuilder, loc, c, (*valid)[1]),
                                      /*withElseRegion=*/false)
                        .getThenBodyBuilder();
          memref::StoreOp::create(inner, loc, v, view, ValueRange{zero, c});
        }
      }
    }
  };
  auto emit = [&](OpBuilder &b, bool guarded, bool paired) {
    if (byRows)
      return emitByRows(b, guarded, paired);
    for (int64_t j = 0; j < n / 8; ++j)
      for (int64_t h = 0; h < 2; ++h) {
        Value row = arith::AddIOp::create(b, loc, rowBase, cIndex(b, loc, 8 * h));
        Value col = arith::AddIOp::create(b, loc, colBase, cIndex(b, loc, 8 * j));
        if (paired) {
          auto [dst, indices] = place(b, {row, col});
          storePair(b, pairOf(b, j, h), dst, indices);
          continue;
        }
        for (int64_t e = 0; e < 2; ++e) {
          Value c = arith::AddIOp::create(b, loc, col, cIndex(b, loc, e));
          Value v = element(b, j, h, e);
          SmallVector<Value> where = at(row, c);
          OpBuilder inner = b;
          if (guarded)
            inner = scf::IfOp::create(b, loc, inBounds(b, loc, where, *valid),
                                      /*withElseRegion=*/false)
                        .getThenBodyBuilder();
          auto [dst, indices] = place(inner, where);
          memref::StoreOp::create(inner, loc, v, dst, indices);
        }
      }
  };
  if (!valid && !contiguous) {
    emit(b, /*guarded=*/false, /*paired=*/false);
    return;
  }
  Value fast = arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1);
  if (valid)
    fast = arith::AndIOp::create(
        b, loc, fast,
        coversTile(b, loc, *valid,
                   at(cIndex(b, loc, kWgmmaM), cIndex(b, loc, n))));
  // Pairs are aligned where the view starts at an even column: in a
  // swizzled buffer, an even column of the buffer (known when constant).
  if (contiguous && swizzled) {
    Value column = swizzled->origin[swizzled->dims.back()];
    std::optional<int64_t> fixed = getConstantIntValue(column);
    if (!fixed || *fixed % 2)
      fast = arith::AndIOp::create(
          b, loc, fast,
          arith::CmpIOp::create(
              b, loc, arith::CmpIPredicate::eq,
              arith::RemUIOp::create(b, loc, column, cIndex(b, loc, 2)),
              cIndex(b, loc, 0)));
  } else if (contiguous) {
    fast = arith::AndIOp::create(b, loc, fast, isAligned(b, loc, target, 2));
  }
  auto ifOp = scf::IfOp::create(b, loc, fast, /*withElseRegion=*/true);
  OpBuilder thenBuilder = ifOp.getThenBodyBuilder();
  emit(thenBuilder, /*guarded=*/false, contiguous);
  OpBuilder elseBuilder = ifOp.getElseBodyBuilder();
  emit(elseBuilder, valid.has_value(), /*paired=*/false);
}

} // namespace mlir::croq::detail

//===----------------------------------------------------------------------===//
// Element reads and writes of a swizzled buffer
//===----------------------------------------------------------------------===//
//
// A thread may read or write single elements of a buffer that warpgroup
// MMAs read (fill a tile by hand, scale it in place, read the tile back):
// each access goes to where the element lives in the swizzled layout. The
// writes are generic-proxy writes, which wgmma (an async-proxy reader) sees
// only after a `fence.proxy.async.shared::cta` by the writing thread; the
// barrier croq-insert-barriers puts before the MMA then orders it. One
// fence follows a loop or branch that does nothing but element work, so a
// fill loop pays for one fence, not one per element.

using namespace mlir::croq::detail;

namespace {

/// True when `op` (a memref.load or memref.store) reads or writes a buffer
/// stored in the wgmma layout through the buffer's own indices. Once
/// addressed, it accesses the buffer flattened (memref.collapse_shape),
/// which no longer looks like the buffer's view.
bool needsSwizzledAddress(Value memref) {
  // The buffer is a memref.alloc, or, once converted, its memref.view of
  // the kernel's dynamic shared memory (a pattern's new accesses name it).
  Operation *buffer = viewSource(memref).getDefiningOp();
  return buffer && buffer->hasAttr(kSwizzleAttrName);
}

/// True when nothing in `op` but element reads and writes touches memory.
bool onlyElementWork(Operation *op) {
  return !op->walk([](Operation *inner) {
              if (isa<scf::ForOp, scf::IfOp, scf::YieldOp, memref::LoadOp,
                      memref::StoreOp>(inner) ||
                  isMemoryEffectFree(inner))
                return WalkResult::advance();
              return WalkResult::interrupt();
            })
              .wasInterrupted();
}

template <typename AccessOp>
struct SwizzledElementAccess : OpConversionPattern<AccessOp> {
  using OpConversionPattern<AccessOp>::OpConversionPattern;
  using OpAdaptor = typename OpConversionPattern<AccessOp>::OpAdaptor;

  LogicalResult
  matchAndRewrite(AccessOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value view = adaptor.getMemref();
    int64_t span = swizzleSpan(view, &rewriter);
    FailureOr<RootedView> root = rootView(rewriter, loc, view, &rewriter);
    if (!span || failed(root))
      return op.emitOpError("accesses a buffer that warpgroup MMAs read "
                            "through a view croq cannot trace to it "
                            "(strided, or a future's data); access the "
                            "buffer through unit-stride views");
    auto [flat, offset] = swizzledElement(
        rewriter, loc, *root, SmallVector<Value>(adaptor.getIndices()), span);
    if constexpr (std::is_same_v<AccessOp, memref::LoadOp>) {
      rewriter.replaceOpWithNewOp<memref::LoadOp>(op, flat, offset);
    } else {
      memref::StoreOp::create(rewriter, loc, adaptor.getValue(), flat,
                              offset);
      placeProxyFence(rewriter, op, loc);
      rewriter.eraseOp(op);
    }
    return success();
  }

  /// A fence after `store`, or after the outermost loop or branch around
  /// it that does only element work; an earlier fence the same straight
  /// run of element work ends in is moved here.
  static void placeProxyFence(ConversionPatternRewriter &rewriter,
                              Operation *store, Location loc) {
    Operation *after = store;
    while (Operation *parent = after->getParentOp()) {
      if (!isa<scf::ForOp, scf::IfOp>(parent) || !onlyElementWork(parent))
        break;
      after = parent;
    }
    if (isa_and_nonnull<NVVM::FenceProxyOp>(after->getNextNode()))
      return;
    for (Operation *prev = after->getPrevNode(); prev;
         prev = prev->getPrevNode()) {
      if (isa<NVVM::FenceProxyOp>(prev)) {
        rewriter.eraseOp(prev);
        break;
      }
      if (!isa<memref::LoadOp, memref::StoreOp>(prev) &&
          !isMemoryEffectFree(prev))
        break;
    }
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointAfter(after);
    fenceAsyncProxy(rewriter, loc);
  }
};

} // namespace

void mlir::croq::detail::populateSwizzledElementPatterns(
    TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<SwizzledElementAccess<memref::LoadOp>,
               SwizzledElementAccess<memref::StoreOp>>(converter,
                                                       patterns.getContext());
}

void mlir::croq::detail::markSwizzledElementAccessesLegal(
    ConversionTarget &target) {
  target.addDynamicallyLegalOp<memref::LoadOp>([](memref::LoadOp op) {
    return !needsSwizzledAddress(op.getMemref());
  });
  target.addDynamicallyLegalOp<memref::StoreOp>([](memref::StoreOp op) {
    return !needsSwizzledAddress(op.getMemref());
  });
}
