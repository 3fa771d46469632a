//===- CroqDataOps.cpp - croq views, copies and MMA operations ------------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#include "Croq/Dialect/Croq/IR/CroqOps.h"
#include "Croq/Dialect/Croq/Utils/TileAlgebra.h"
#include "OpVerifiers.h"

#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::croq;
using namespace mlir::croq::detail;

//===----------------------------------------------------------------------===//
// Tile views
//===----------------------------------------------------------------------===//

SmallVector<int64_t> ChunkAtOp::inferTileShape() {
  auto sourceType = cast<MemRefType>(getSource().getType());
  std::optional<SmallVector<int64_t>> shape =
      tile::chunkatShape(sourceType.getShape(), getStaticBounds());
  return shape ? *shape : SmallVector<int64_t>();
}

LogicalResult ChunkAtOp::verify() {
  if (failed(verifyNoInvalidDims(*this)))
    return failure();
  auto sourceType = cast<MemRefType>(getSource().getType());
  ArrayRef<int64_t> bounds = getStaticBounds();
  if (bounds.size() != static_cast<size_t>(sourceType.getRank()))
    return emitOpError("expected ")
           << sourceType.getRank()
           << " entries, one per dimension of the source, got "
           << bounds.size();
  size_t numIndices = llvm::count_if(
      bounds, [](int64_t b) { return b != tile::kWholeDim; });
  size_t numDynamic = llvm::count_if(bounds, ShapedType::isDynamic);
  if (getIndices().size() != numIndices)
    return emitOpError("expected ")
           << numIndices << " indices, one per divided dimension, got "
           << getIndices().size();
  if (getBounds().size() != numDynamic)
    return emitOpError("expected ")
           << numDynamic << " dynamic bounds, got " << getBounds().size();
  for (auto [i, bound] : llvm::enumerate(bounds)) {
    if (bound == tile::kWholeDim || ShapedType::isDynamic(bound))
      continue;
    if (bound <= 0)
      return emitOpError("chunk count of dimension ")
             << i << " must be positive, got " << bound;
    int64_t dim = sourceType.getDimSize(i);
    if (!ShapedType::isDynamic(dim) && bound > dim)
      return emitOpError("chunk count ")
             << bound << " of dimension " << i << " exceeds its extent "
             << dim << " and would make an empty tile";
  }
  return verifyTileResult(*this, sourceType, inferTileShape(),
                          getResult().getType());
}

void ChunkAtOp::getAsmResultNames(OpAsmSetValueNameFn setNameFn) {
  setNameFn(getResult(), "tile");
}

SmallVector<int64_t> SubspanOp::inferTileShape() {
  auto sourceType = cast<MemRefType>(getSource().getType());
  std::optional<SmallVector<int64_t>> shape =
      tile::subspanShape(sourceType.getShape(), getStaticExtents());
  return shape ? *shape : SmallVector<int64_t>();
}

LogicalResult SubspanOp::verify() {
  if (failed(verifyNoInvalidDims(*this)))
    return failure();
  auto sourceType = cast<MemRefType>(getSource().getType());
  size_t rank = sourceType.getRank();
  ArrayRef<int64_t> extents = getStaticExtents();
  if (extents.size() != rank)
    return emitOpError("expected ")
           << rank << " extents, one per dimension of the source, got "
           << extents.size();
  size_t numDynamic = llvm::count_if(extents, ShapedType::isDynamic);
  if (getExtents().size() != numDynamic)
    return emitOpError("expected ")
           << numDynamic << " dynamic extents, got " << getExtents().size();
  if (getIndices().size() != rank)
    return emitOpError("expected ")
           << rank << " tile indices in 'at', got " << getIndices().size();
  if (!getSteps().empty() && getSteps().size() != rank)
    return emitOpError("expected ")
           << rank << " steps, one per dimension, got " << getSteps().size();
  for (auto [i, extent] : llvm::enumerate(extents)) {
    if (extent == tile::kWholeDim || ShapedType::isDynamic(extent))
      continue;
    if (extent <= 0)
      return emitOpError("extent of dimension ")
             << i << " must be positive, got " << extent;
    int64_t dim = sourceType.getDimSize(i);
    if (!ShapedType::isDynamic(dim) && extent > dim)
      return emitOpError("extent ")
             << extent << " of dimension " << i << " exceeds its size "
             << dim;
  }
  return verifyTileResult(*this, sourceType, inferTileShape(),
                          getResult().getType());
}

void SubspanOp::getAsmResultNames(OpAsmSetValueNameFn setNameFn) {
  setNameFn(getResult(), "tile");
}

//===----------------------------------------------------------------------===//
// Copies
//===----------------------------------------------------------------------===//

/// Checks the optional future of a copy: its kind, asynchrony and data.
static LogicalResult verifyCopyFuture(Operation *op, Value future,
                                      FutureKind kind, bool async, Type target,
                                      StringRef what = "destination type") {
  if (!future)
    return success();
  auto type = cast<FutureType>(future.getType());
  if (type.getKind() != kind || type.getAsync() != async)
    return op->emitOpError("expected a ")
           << (async ? "async " : "synchronous ") << stringifyFutureKind(kind)
           << " future, got " << type;
  if (type.getDataType() != target)
    return op->emitOpError("future data type ")
           << type.getDataType() << " does not match the " << what << " "
           << target;
  return success();
}

LogicalResult DmaCopyOp::verify() {
  auto sourceType = cast<MemRefType>(getSource().getType());
  auto targetType = cast<MemRefType>(getTarget().getType());
  FailureOr<Storage> source = verifyStorage(*this, sourceType, "source");
  FailureOr<Storage> target = verifyStorage(*this, targetType, "destination");
  if (failed(source) || failed(target))
    return failure();
  if (getPartial()) {
    if (sourceType.getElementType() != targetType.getElementType() ||
        sourceType.getRank() != targetType.getRank())
      return emitOpError("a partial copy needs one element type and one "
                         "rank, got ")
             << sourceType << " => " << targetType;
  } else if (failed(verifyCopyShapes(*this, sourceType, targetType))) {
    return failure();
  }
  if (getSwizzle() && *source != Storage::Shared && *target != Storage::Shared)
    return emitOpError("swizzle applies to shared memory, but the copy is ")
           << stringifyStorage(*source) << " => " << stringifyStorage(*target);
  if (getAsync() && !getFuture())
    return emitOpError("an async copy must produce a future to wait on");
  return verifyCopyFuture(*this, getFuture(), FutureKind::Dma, getAsync(),
                          targetType);
}

bool TmaCopyOp::isLoad() {
  return getStorage(cast<MemRefType>(getTarget().getType())) ==
         Storage::Shared;
}

LogicalResult TmaCopyOp::verify() {
  if (getIssuer() == Issuer::Lowest && !(*this)->hasAttr("croq.issuer_thread"))
    return emitOpError("has issuer `lowest` but no 'croq.issuer_thread' "
                       "naming the thread");
  auto sourceType = cast<MemRefType>(getSource().getType());
  auto targetType = cast<MemRefType>(getTarget().getType());
  FailureOr<Storage> source = verifyStorage(*this, sourceType, "source");
  FailureOr<Storage> target = verifyStorage(*this, targetType, "destination");
  if (failed(source) || failed(target))
    return failure();
  bool load = *source == Storage::Global && *target == Storage::Shared;
  bool store = *source == Storage::Shared && *target == Storage::Global;
  if (!load && !store)
    return emitOpError("moves between global and shared memory, got ")
           << stringifyStorage(*source) << " => " << stringifyStorage(*target);
  if (failed(verifyCopyShapes(*this, sourceType, targetType)))
    return failure();
  if (getMulticast()) {
    if (!load)
      return emitOpError("multicast loads a tile into every block of the "
                         "cluster; a store cannot be multicast");
    if (failed(verifyInsideCluster(*this, "loads into every block of the "
                                          "cluster")))
      return failure();
  }
  if (sourceType.getRank() < 1 || sourceType.getRank() > 5)
    return emitOpError("TMA supports tiles of rank 1 to 5, got rank ")
           << sourceType.getRank();

  MemRefType globalType = load ? sourceType : targetType;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(globalType.getStridesAndOffset(strides, offset)) ||
      strides.back() != 1)
    return emitOpError("the innermost dimension of the global view must be "
                       "contiguous (stride 1), got ")
           << globalType;

  if (std::optional<int64_t> swizzle = getSwizzle()) {
    int64_t inner = targetType.getShape().back();
    unsigned bits = getStorageBytes(targetType.getElementType()) * 8;
    // Rows of several spans move as one box per span-wide panel.
    if (!ShapedType::isDynamic(inner) && (inner * bits / 8) % *swizzle)
      return emitOpError("swizzle(")
             << *swizzle << ") must divide the bytes of the innermost tile "
             << "extent, " << inner << " x " << bits << " bits = "
             << inner * bits / 8 << " bytes";
  }

  if (Value map = getTensorMap();
      map && !isa<nvgpu::TensorMapDescriptorType>(map.getType()))
    return emitOpError("map must be an !nvgpu.tensormap.descriptor, got ")
           << map.getType();

  if (Value event = getEvent()) {
    if (!getAsync() || !load)
      return emitOpError("binding an event needs an async global => shared "
                         "load");
    auto eventType = cast<EventType>(event.getType());
    if (eventType.getStorage() != MemoryKind::Shared)
      return emitOpError("TMA completes on a shared event, got ") << eventType;
    if (getEventIndices().size() != eventType.getRank())
      return emitOpError("the bound event must be a single element: expected ")
             << eventType.getRank() << " subscripts, got "
             << getEventIndices().size();
    if (failed(verifyEventSelection(*this, eventType, getEventIndices(),
                                    Value())))
      return failure();
    if (getFuture())
      return emitOpError("a copy bound to an event has no future; trigger the "
                         "event instead");
    return success();
  }
  if (getAsync() && !getFuture())
    return emitOpError("an async TMA copy needs either a bound event or a "
                       "future");
  // A store's future guards the shared tile it reads.
  if (store)
    return verifyCopyFuture(*this, getFuture(), FutureKind::Tma, getAsync(),
                            sourceType, "shared tile a store reads,");
  return verifyCopyFuture(*this, getFuture(), FutureKind::Tma, getAsync(),
                          targetType);
}

//===----------------------------------------------------------------------===//
// MMA
//===----------------------------------------------------------------------===//

/// A croq MMA is collective over the warp or warpgroup whose parallel body
/// it is in (a warp where no such parallel is around it).
static Level mmaGroup(Operation *op) {
  for (auto p = op->getParentOfType<ParallelOp>(); p;
       p = p->getParentOfType<ParallelOp>())
    if (p.getLevel() == Level::Warpgroup || p.getLevel() == Level::Warp)
      return p.getLevel();
  return Level::Warp;
}

std::optional<Level> MmaLoadOp::getCollectiveLevel() { return mmaGroup(*this); }
std::optional<Level> MmaOp::getCollectiveLevel() { return mmaGroup(*this); }
std::optional<Level> MmaStoreOp::getCollectiveLevel() {
  return mmaGroup(*this);
}
std::optional<Level> MmaCommitOp::getCollectiveLevel() {
  return mmaGroup(*this);
}

static LogicalResult verifyRole(Operation *op, FragType type,
                                ArrayRef<FragRole> roles, StringRef what) {
  if (llvm::is_contained(roles, type.getRole()))
    return success();
  return op->emitOpError() << what << " must be a fragment of role "
                           << llvm::join(llvm::map_range(roles,
                                                         [](FragRole r) {
                                                           return stringifyFragRole(
                                                               r);
                                                         }),
                                         " or ")
                           << ", got " << type;
}

bool MmaFillOp::isZero() {
  Attribute value;
  if (!matchPattern(getValue(), m_Constant(&value)))
    return false;
  if (auto f = dyn_cast<FloatAttr>(value))
    return f.getValue().isZero();
  auto i = dyn_cast<IntegerAttr>(value);
  return i && i.getValue().isZero();
}

LogicalResult MmaFillOp::verify() {
  return verifyRole(*this, getResult().getType(), {FragRole::Acc}, "result");
}

/// Checks that `type` is a warpgroup accumulator of 64 x N with register
/// `index` among the N / 2 a thread holds.
static LogicalResult verifyAccumulatorRegister(Operation *op, FragType type,
                                               int64_t index) {
  if (type.getRole() != FragRole::Acc ||
      (type.getScope() == Level::Warpgroup &&
       (type.getShape()[0] != 64 || type.getShape()[1] % 8)))
    return op->emitOpError("addresses the registers of an accumulator: a "
                           "warp's, or a warpgroup's of 64 x N (N a multiple "
                           "of 8), got ")
           << type;
  int64_t registers = type.getRegisterCount();
  if (index < 0 || index >= registers)
    return op->emitOpError("register ")
           << index << " is out of range: a thread holds " << registers
           << " of " << type;
  return success();
}

LogicalResult MmaScaleOp::verify() {
  FragType type = getSum().getType();
  if (type.getRole() != FragRole::Acc || type.getScope() != Level::Warpgroup ||
      !isa<FloatType>(type.getElementType()))
    return emitOpError("scales a warpgroup's float accumulator (wgmma's), "
                       "got ")
           << type;
  if (failed(verifyAccumulatorRegister(*this, type, 0)))
    return failure();
  if (Value rows = getRows()) {
    auto rowsType = cast<MemRefType>(rows.getType());
    int64_t m = type.getShape()[0];
    if (!isRowScaleShape(rowsType.getShape(), m))
      return emitOpError("takes one scale for each of the accumulator's ")
             << m << " rows, as a view of [" << m << "], [" << m << ", 1] or [1, "
             << m << "], got " << rowsType;
    if (!isa<FloatType>(rowsType.getElementType()))
      return emitOpError("row scales are floats, got ") << rowsType;
    if (failed(verifyStorage(*this, rowsType, "row scales")))
      return failure();
  }
  return success();
}

OpFoldResult MmaScaleOp::fold(FoldAdaptor) {
  // Adding a product that no MMA wrote, unscaled, keeps the sum.
  if (getRows() || getFactor())
    return {};
  auto fill = getProduct().getDefiningOp<MmaFillOp>();
  return fill && fill.isZero() ? OpFoldResult(getSum()) : OpFoldResult();
}

LogicalResult MmaCoordsOp::verify() {
  auto type = cast<FragType>(getFrag());
  if (type.getScope() != Level::Warpgroup)
    return emitOpError("gives the coordinates of a warpgroup accumulator's "
                       "registers, got ")
           << type;
  return verifyAccumulatorRegister(*this, type, getIndex());
}

LogicalResult MmaElementOp::verify() {
  if (getResult().getType() != getAcc().getType().getElementType())
    return emitOpError("result type ")
           << getResult().getType() << " is not the accumulator's element type";
  return verifyAccumulatorRegister(*this, getAcc().getType(), getIndex());
}

LogicalResult MmaSetElementOp::verify() {
  if (getValue().getType() != getAcc().getType().getElementType())
    return emitOpError("value type ")
           << getValue().getType() << " is not the accumulator's element type";
  return verifyAccumulatorRegister(*this, getAcc().getType(), getIndex());
}

LogicalResult MmaLoadOp::verify() {
  FragType fragType = getResult().getType();
  auto sourceType = cast<MemRefType>(getSource().getType());
  if (failed(verifyRole(*this, fragType,
                        {FragRole::A, FragRole::B, FragRole::Acc,
                         FragRole::Meta},
                        "result")))
    return failure();
  if (fragType.getRole() == FragRole::Meta) {
    // Sparsity metadata: two 2-bit positions per group of four along K,
    // two groups a byte.
    ArrayRef<int64_t> shape = fragType.getShape();
    if (!sourceType.getElementType().isInteger(8) ||
        sourceType.getShape() != ArrayRef<int64_t>{shape[0], shape[1] / 8})
      return emitOpError("loads the sparsity metadata of a ")
             << shape[0] << "x" << shape[1] << " tile from an i8 view of ["
             << shape[0] << ", " << shape[1] / 8 << "], got " << sourceType;
    if (failed(verifyStorage(*this, sourceType, "source")))
      return failure();
    if (getSwizzle())
      return emitOpError("reads sparsity metadata, which is not swizzled");
    return success();
  }
  if (fragType.getRole() == FragRole::Acc &&
      fragType.getScope() != Level::Warp)
    return emitOpError("loads an accumulator only at warp scope; start a "
                       "warpgroup accumulator with croq.mma.fill, got ")
           << fragType;
  FailureOr<Storage> storage = verifyStorage(*this, sourceType, "source");
  if (failed(storage))
    return failure();
  if (*storage == Storage::Local)
    return emitOpError("an MMA operand is read from shared memory (or, for "
                       "a warp MMA, global memory), not from local memory; "
                       "copy the tile to a shared buffer first");
  if (fragType.getElementType() != sourceType.getElementType())
    return emitOpError("fragment element type ")
           << fragType.getElementType() << " differs from the view's "
           << sourceType.getElementType();
  if (sourceType.getShape() != fragType.getShape())
    return emitOpError("view shape does not match the fragment shape ")
           << fragType;
  if (getSwizzle() && *storage != Storage::Shared)
    return emitOpError("swizzle applies to shared memory");
  return success();
}

LogicalResult MmaOp::verify() {
  FragType acc = getAcc().getType();
  FragType a = getA().getType();
  FragType b = getB().getType();
  // A warpgroup MMA may take A from registers: a fragment in the
  // accumulator layout (wgmma's RS form), of a 16-bit or 8-bit type, [M, K].
  bool registerA = a.getRole() == FragRole::Acc;
  if (failed(verifyRole(*this, acc, {FragRole::Acc}, "accumulator")) ||
      failed(verifyRole(*this, a, {FragRole::A, FragRole::Acc}, "operand A")) ||
      failed(verifyRole(*this, b, {FragRole::B}, "operand B")))
    return failure();
  Value meta = getMeta();
  if (meta) {
    auto metaType = cast<FragType>(meta.getType());
    if (failed(verifyRole(*this, metaType, {FragRole::Meta}, "metadata")))
      return failure();
    if (acc.getScope() != Level::Warpgroup || registerA ||
        getLayout() != MmaLayout::RowRow || getAsync())
      return emitOpError("is sparse only as a synchronous warpgroup MMA "
                         "(wgmma.sp) of row.row operands from shared memory");
    if (metaType.getElementType() != a.getElementType() ||
        metaType.getShape() != ArrayRef<int64_t>{acc.getShape()[0],
                                                 b.getShape()[1]})
      return emitOpError("sparsity metadata ")
             << metaType << " is not that of A's " << acc.getShape()[0] << "x"
             << b.getShape()[1] << " tile of " << a.getElementType();
  }
  unsigned aBits = a.getElementType().getIntOrFloatBitWidth();
  if (registerA && (a.getScope() != Level::Warpgroup ||
                    (aBits != 16 && aBits != 8) ||
                    (getLayout() != MmaLayout::RowRow &&
                     (aBits == 8 || getLayout() != MmaLayout::RowCol))))
    return emitOpError("takes operand A from registers (a fragment in the "
                       "accumulator layout) only at warpgroup scope, of a "
                       "16-bit type as [M, K] (row.row or row.col), or of an "
                       "8-bit type as row.row (both K-major); got ")
           << a << " with layout " << stringifyMmaLayout(getLayout());
  if (a.getElementType() != b.getElementType())
    return emitOpError("operand element types differ: ")
           << a.getElementType() << " and " << b.getElementType();
  if ((getUnsignedA() || getUnsignedB()) &&
      (!a.getElementType().isInteger(8) || meta))
    return emitOpError("reads unsigned operands only of 8-bit integers, "
                       "dense; got ")
           << a.getElementType();
  if (a.getScope() != acc.getScope() || b.getScope() != acc.getScope())
    return emitOpError("the accumulator and the operands must be held by "
                       "the same scope, got ")
           << acc << ", " << a << " and " << b;

  MmaLayout layout = getLayout();
  bool aRow = layout == MmaLayout::RowRow || layout == MmaLayout::RowCol;
  bool bRow = layout == MmaLayout::RowRow || layout == MmaLayout::ColRow;
  int64_t m = acc.getShape()[0], n = acc.getShape()[1];
  int64_t aM = a.getShape()[aRow ? 0 : 1], aK = a.getShape()[aRow ? 1 : 0];
  int64_t bN = b.getShape()[bRow ? 0 : 1], bK = b.getShape()[bRow ? 1 : 0];
  // A sparse A holds half of its K.
  if (aM != m || bN != n || (meta ? 2 * aK : aK) != bK)
    return emitOpError("operand shapes do not agree for ")
           << stringifyMmaLayout(layout) << ": accumulator " << m << "x" << n
           << ", A is " << (aRow ? "[M, K]" : "[K, M]") << " = " << a
           << ", B is " << (bRow ? "[N, K]" : "[K, N]") << " = " << b;

  Type resultType = getResult().getType();
  if (getAsync()) {
    auto futureType = dyn_cast<FutureType>(resultType);
    if (!futureType || futureType.getKind() != FutureKind::Mma ||
        futureType.getDataType() != acc)
      return emitOpError("the async form yields a future of the accumulator ")
             << acc << ", got " << resultType;
    return success();
  }
  if (resultType != acc)
    return emitOpError("result type ")
           << resultType << " differs from the accumulator " << acc;
  return success();
}

void MmaOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  // On Hopper the operands may describe shared memory that wgmma reads when
  // it executes, not when the fragment was formed.
  effects.emplace_back(MemoryEffects::Read::get());
}

LogicalResult MmaStoreOp::verify() {
  FragType fragType = getValue().getType();
  auto targetType = cast<MemRefType>(getTarget().getType());
  if (failed(verifyRole(*this, fragType, {FragRole::Acc}, "stored value")))
    return failure();
  if (failed(verifyStorage(*this, targetType, "destination")))
    return failure();
  Type from = fragType.getElementType(), to = targetType.getElementType();
  if (from.isInteger() != to.isInteger())
    return emitOpError("cannot convert fragment elements ")
           << from << " to " << to << "; both must be integers or floats";
  SmallVector<int64_t> shape(fragType.getShape());
  if (getTranspose())
    std::reverse(shape.begin(), shape.end());
  if (targetType.getShape() != ArrayRef<int64_t>(shape))
    return emitOpError(getTranspose()
                           ? "view shape is not the transposed fragment shape "
                           : "view shape does not match the fragment shape ")
           << fragType;
  return success();
}

LogicalResult MmaCommitOp::verify() {
  return verifyInsideParallel(*this, "; it fences MMAs issued by device "
                                     "threads");
}

void MmaCommitOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  // Waits for in-flight MMAs, which read shared memory and write registers.
  effects.emplace_back(MemoryEffects::Read::get());
  effects.emplace_back(MemoryEffects::Write::get());
}
