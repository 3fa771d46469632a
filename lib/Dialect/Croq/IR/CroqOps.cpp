//===- CroqOps.cpp - croq operations --------------------------------------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#include "Croq/Dialect/Croq/IR/CroqOps.h"
#include "OpVerifiers.h"
#include "Croq/Dialect/Croq/Utils/TileAlgebra.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;
using namespace mlir::croq;
using namespace mlir::croq::detail;

//===----------------------------------------------------------------------===//
// Shared helpers
//===----------------------------------------------------------------------===//

namespace mlir::croq::detail {

std::optional<int64_t> getConstantIndex(Value value) {
  APInt constant;
  if (matchPattern(value, m_ConstantInt(&constant)))
    return constant.getSExtValue();
  return std::nullopt;
}

/// Device-side ops must sit inside a `croq.parallel`.
LogicalResult verifyInsideParallel(Operation *op, StringRef why) {
  if (op->getParentOfType<ParallelOp>())
    return success();
  return op->emitOpError("must be nested in a croq.parallel") << why;
}

FailureOr<Storage> verifyStorage(Operation *op, MemRefType type,
                                        StringRef which) {
  std::optional<Storage> storage = getStorage(type);
  if (!storage)
    return op->emitOpError() << which << " has unsupported memory space "
                             << type.getMemorySpace()
                             << "; use none (global), "
                                "#gpu.address_space<workgroup> (shared) or "
                                "#gpu.address_space<private> (local)";
  return *storage;
}

/// Source and destination of a copy agree in element type and shape; a
/// dynamic extent matches any extent.
LogicalResult verifyCopyShapes(Operation *op, MemRefType source,
                                      MemRefType target) {
  if (source.getElementType() != target.getElementType())
    return op->emitOpError("element types differ: ")
           << source.getElementType() << " => " << target.getElementType();
  if (source.getRank() != target.getRank())
    return op->emitOpError("ranks differ: ")
           << source.getRank() << " => " << target.getRank();
  for (auto [i, dims] :
       llvm::enumerate(llvm::zip_equal(source.getShape(), target.getShape()))) {
    auto [s, t] = dims;
    if (!ShapedType::isDynamic(s) && !ShapedType::isDynamic(t) && s != t)
      return op->emitOpError("shapes differ in dimension ")
             << i << ": " << s << " => " << t;
  }
  return success();
}

/// Checks the subscripts (and `at` order) that select event elements.
LogicalResult verifyEventSelection(Operation *op, EventType type,
                                          ValueRange indices, Value order) {
  unsigned rank = type.getRank();
  if (indices.size() > rank)
    return op->emitOpError("expected at most ")
           << rank << " subscripts for " << type << ", got "
           << indices.size();
  if (order) {
    if (rank != 1)
      return op->emitOpError("at(order) needs a 1-D event array, got ")
             << type;
    if (!indices.empty())
      return op->emitOpError("at(order) and subscripts are exclusive");
  }
  for (auto [i, index] : llvm::enumerate(indices)) {
    std::optional<int64_t> constant = getConstantIndex(index);
    int64_t extent = type.getShape()[i];
    if (constant && (*constant < 0 || *constant >= extent))
      return op->emitOpError("subscript ")
             << i << " is " << *constant << ", out of range [0, " << extent
             << ")";
  }
  return success();
}

/// Builds the type of a tile of `source` with `shape`: the source's strides,
/// a dynamic offset and the source's memory space.
FailureOr<MemRefType> inferTileType(Operation *op, MemRefType source,
                                           ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(source.getStridesAndOffset(strides, offset)))
    return op->emitOpError("source must have a strided layout, got ")
           << source;
  auto layout = StridedLayoutAttr::get(op->getContext(), ShapedType::kDynamic,
                                       strides);
  return MemRefType::get(shape, source.getElementType(), layout,
                         source.getMemorySpace());
}

LogicalResult verifyTileResult(Operation *op, MemRefType source,
                                      ArrayRef<int64_t> shape,
                                      MemRefType result) {
  FailureOr<MemRefType> expected = inferTileType(op, source, shape);
  if (failed(expected))
    return failure();
  if (*expected != result)
    return op->emitOpError("expected result type ")
           << *expected << ", got " << result;
  return success();
}

static void collectDims(Value value, int depth,
                        SmallVectorImpl<memref::DimOp> &dims) {
  Operation *def = value.getDefiningOp();
  if (!def || def->getNumRegions())
    return;
  if (auto dim = dyn_cast<memref::DimOp>(def)) {
    dims.push_back(dim);
    return;
  }
  if (depth == 0)
    return;
  for (Value operand : def->getOperands())
    collectDims(operand, depth - 1, dims);
}

LogicalResult verifyNoInvalidDims(Operation *op) {
  for (OpOperand &operand : op->getOpOperands()) {
    SmallVector<memref::DimOp> dims;
    collectDims(operand.get(), /*depth=*/4, dims);
    for (memref::DimOp dim : dims) {
      std::optional<int64_t> index = dim.getConstantIndex();
      auto type = dyn_cast<MemRefType>(dim.getSource().getType());
      if (!index || !type || (*index >= 0 && *index < type.getRank()))
        continue;
      return op->emitOpError("operand #")
             << operand.getOperandNumber()
             << " is computed from the extent of dimension " << *index
             << " of a rank-" << type.getRank()
             << " memref (memref.dim), which does not exist; dimensions are "
                "0 to "
             << type.getRank() - 1;
    }
  }
  return success();
}

} // namespace mlir::croq::detail

//===----------------------------------------------------------------------===//
// Custom directives
//===----------------------------------------------------------------------===//

/// `_` | integer | SSA value, for subspan extents.
static ParseResult
parseTileExtents(OpAsmParser &parser,
                 SmallVectorImpl<OpAsmParser::UnresolvedOperand> &values,
                 DenseI64ArrayAttr &statics) {
  SmallVector<int64_t> staticValues;
  auto parseOne = [&]() -> ParseResult {
    if (succeeded(parser.parseOptionalKeyword("_"))) {
      staticValues.push_back(tile::kWholeDim);
      return success();
    }
    OpAsmParser::UnresolvedOperand operand;
    OptionalParseResult hasOperand = parser.parseOptionalOperand(operand);
    if (hasOperand.has_value()) {
      if (failed(*hasOperand))
        return failure();
      values.push_back(operand);
      staticValues.push_back(ShapedType::kDynamic);
      return success();
    }
    int64_t value;
    if (parser.parseInteger(value))
      return failure();
    staticValues.push_back(value);
    return success();
  };
  if (parser.parseCommaSeparatedList(parseOne))
    return failure();
  statics = parser.getBuilder().getDenseI64ArrayAttr(staticValues);
  return success();
}

static void printTileExtents(OpAsmPrinter &printer, Operation *,
                             OperandRange values, DenseI64ArrayAttr statics) {
  unsigned next = 0;
  llvm::interleaveComma(statics.asArrayRef(), printer, [&](int64_t value) {
    if (value == tile::kWholeDim)
      printer << "_";
    else if (ShapedType::isDynamic(value))
      printer << values[next++];
    else
      printer << value;
  });
}

/// `_` | `%index by (integer | %bound)`, for chunkat.
static ParseResult
parseChunkList(OpAsmParser &parser,
               SmallVectorImpl<OpAsmParser::UnresolvedOperand> &indices,
               SmallVectorImpl<OpAsmParser::UnresolvedOperand> &bounds,
               DenseI64ArrayAttr &statics) {
  SmallVector<int64_t> staticBounds;
  auto parseOne = [&]() -> ParseResult {
    if (succeeded(parser.parseOptionalKeyword("_"))) {
      staticBounds.push_back(tile::kWholeDim);
      return success();
    }
    OpAsmParser::UnresolvedOperand index;
    if (parser.parseOperand(index) || parser.parseKeyword("by"))
      return failure();
    indices.push_back(index);
    OpAsmParser::UnresolvedOperand bound;
    OptionalParseResult hasBound = parser.parseOptionalOperand(bound);
    if (hasBound.has_value()) {
      if (failed(*hasBound))
        return failure();
      bounds.push_back(bound);
      staticBounds.push_back(ShapedType::kDynamic);
      return success();
    }
    int64_t value;
    if (parser.parseInteger(value))
      return failure();
    staticBounds.push_back(value);
    return success();
  };
  if (parser.parseCommaSeparatedList(parseOne))
    return failure();
  statics = parser.getBuilder().getDenseI64ArrayAttr(staticBounds);
  return success();
}

static void printChunkList(OpAsmPrinter &printer, Operation *,
                           OperandRange indices, OperandRange bounds,
                           DenseI64ArrayAttr statics) {
  unsigned nextIndex = 0, nextBound = 0;
  llvm::interleaveComma(statics.asArrayRef(), printer, [&](int64_t bound) {
    if (bound == tile::kWholeDim) {
      printer << "_";
      return;
    }
    printer << indices[nextIndex++] << " by ";
    if (ShapedType::isDynamic(bound))
      printer << bounds[nextBound++];
    else
      printer << bound;
  });
}

// Custom directives of the generated assembly formats.
static ParseResult parseBudgets(OpAsmParser &parser,
                                DenseI32ArrayAttr &registers);
static void printBudgets(OpAsmPrinter &printer, Operation *,
                         DenseI32ArrayAttr registers);

#include "Croq/Dialect/Croq/IR/CroqInterfaces.cpp.inc"

#define GET_OP_CLASSES
#include "Croq/Dialect/Croq/IR/CroqOps.cpp.inc"

//===----------------------------------------------------------------------===//
// ParallelOp
//===----------------------------------------------------------------------===//

void ParallelOp::build(OpBuilder &builder, OperationState &state, Level level,
                       ValueRange bounds, bool async, Value stream,
                       TypeRange resultTypes) {
  state.addTypes(resultTypes);
  state.addOperands(bounds);
  if (stream)
    state.addOperands(stream);
  Properties &props = state.getOrAddProperties<Properties>();
  props.level = LevelAttr::get(builder.getContext(), level);
  if (async)
    props.async = builder.getUnitAttr();
  props.operandSegmentSizes = {static_cast<int32_t>(bounds.size()),
                               stream ? 1 : 0};
  Region *body = state.addRegion();
  Block *block = new Block();
  body->push_back(block);
  for (Value bound : bounds)
    block->addArgument(builder.getIndexType(), bound.getLoc());
  if (resultTypes.empty()) {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToEnd(block);
    YieldOp::create(builder, state.location);
  }
}

ParseResult ParallelOp::parse(OpAsmParser &parser, OperationState &result) {
  Builder &builder = parser.getBuilder();
  Type indexType = builder.getIndexType();
  SmallVector<OpAsmParser::Argument> indices;
  if (parser.parseArgumentList(indices, OpAsmParser::Delimiter::Paren,
                               /*allowType=*/false))
    return failure();
  for (OpAsmParser::Argument &index : indices)
    index.type = indexType;

  SmallVector<OpAsmParser::UnresolvedOperand> bounds;
  SMLoc boundsLoc;
  if (parser.parseKeyword("by") ||
      parser.getCurrentLocation(&boundsLoc) ||
      parser.parseOperandList(bounds, OpAsmParser::Delimiter::Square))
    return failure();
  if (bounds.size() != indices.size())
    return parser.emitError(boundsLoc)
           << "expected " << indices.size()
           << " bounds, one per index, got " << bounds.size();
  if (parser.resolveOperands(bounds, indexType, result.operands))
    return failure();

  Properties &props = result.getOrAddProperties<Properties>();
  SMLoc levelLoc;
  StringRef levelName;
  if (parser.parseColon() || parser.getCurrentLocation(&levelLoc) ||
      parser.parseKeyword(&levelName))
    return failure();
  std::optional<Level> level = symbolizeLevel(levelName);
  if (!level)
    return parser.emitError(levelLoc)
           << "unknown parallel level '" << levelName
           << "'; expected block, warpgroup (group-4), warp (group) or "
              "thread";
  props.level = LevelAttr::get(builder.getContext(), *level);

  if (succeeded(parser.parseOptionalKeyword("cooperative")))
    props.cooperative = builder.getUnitAttr();
  if (succeeded(parser.parseOptionalKeyword("cluster"))) {
    int64_t size;
    if (parser.parseLParen() || parser.parseInteger(size) ||
        parser.parseRParen())
      return failure();
    props.cluster = builder.getI64IntegerAttr(size);
  }
  if (succeeded(parser.parseOptionalKeyword("async")))
    props.async = builder.getUnitAttr();
  int32_t numStreams = 0;
  if (succeeded(parser.parseOptionalKeyword("stream"))) {
    OpAsmParser::UnresolvedOperand stream;
    if (parser.parseLParen() || parser.parseOperand(stream) ||
        parser.parseRParen() ||
        parser.resolveOperand(stream, StreamType::get(builder.getContext()),
                              result.operands))
      return failure();
    numStreams = 1;
  }
  props.operandSegmentSizes = {static_cast<int32_t>(bounds.size()),
                               numStreams};
  if (succeeded(parser.parseOptionalArrow()) &&
      (parser.parseLParen() || parser.parseTypeList(result.types) ||
       parser.parseRParen()))
    return failure();

  Region *body = result.addRegion();
  if (parser.parseRegion(*body, indices))
    return failure();
  ParallelOp::ensureTerminator(*body, builder, result.location);
  return parser.parseOptionalAttrDictWithKeyword(result.attributes);
}

void ParallelOp::print(OpAsmPrinter &printer) {
  printer << " (";
  llvm::interleaveComma(getIndices(), printer,
                        [&](BlockArgument arg) { printer << arg; });
  printer << ") by [" << getBounds() << "] : "
          << stringifyLevel(getLevel());
  if (getCooperative())
    printer << " cooperative";
  if (std::optional<int64_t> cluster = getCluster())
    printer << " cluster(" << *cluster << ")";
  if (getAsync())
    printer << " async";
  if (Value stream = getStream())
    printer << " stream(" << stream << ")";
  if (!getResults().empty()) {
    printer << " -> (" << getResultTypes() << ")";
  }
  printer << ' ';
  printer.printRegion(getBody(), /*printEntryBlockArgs=*/false,
                      /*printBlockTerminators=*/!getResults().empty());
  printer.printOptionalAttrDictWithKeyword(
      (*this)->getAttrs(),
      {getLevelAttrName(), getCooperativeAttrName(), getClusterAttrName(),
       getAsyncAttrName(), getOperandSegmentSizesAttrName()});
}

/// A `memref.dim` with a constant index outside its memref's rank is
/// undefined, and upstream folds read past the shape on it: reject it
/// where croq uses it.
/// The memref.dim ops `value` is computed from, through a few levels of
/// region-free ops (a bound is often `dim / 16`).
std::optional<int64_t> ParallelOp::getStaticInstanceCount() {
  int64_t count = 1;
  for (Value bound : getBounds()) {
    std::optional<int64_t> c = getConstantIntValue(bound);
    if (!c)
      return std::nullopt;
    count *= *c;
  }
  return count;
}

LogicalResult ParallelOp::verify() {
  if (getBounds().empty())
    return emitOpError("expects at least one bound");
  if (failed(verifyNoInvalidDims(*this)))
    return failure();
  for (auto [i, bound] : llvm::enumerate(getBounds())) {
    std::optional<int64_t> constant = getConstantIndex(bound);
    if (constant && *constant <= 0)
      return emitOpError("bound ")
             << i << " must be positive, got " << *constant;
  }
  bool isBlock = getLevel() == Level::Block;
  if (getStream() && !isBlock)
    return emitOpError("a stream can only be bound to a block-level "
                       "parallel, not '")
           << stringifyLevel(getLevel()) << "'";
  if (getAsync() && !isBlock)
    return emitOpError("only a block-level parallel (a kernel launch) can "
                       "be async, not '")
           << stringifyLevel(getLevel()) << "'";
  if (getCooperative() && !isBlock)
    return emitOpError("only a block-level parallel (a kernel launch) can "
                       "be cooperative, not '")
           << stringifyLevel(getLevel()) << "'";
  if (getCluster() && (!isBlock || getParentParallel()))
    return emitOpError("only a kernel (an outermost block-level parallel) "
                       "is launched in clusters");
  if (getCluster() && getCooperative())
    return emitOpError("a cooperative kernel cannot also be launched in "
                       "clusters");
  if (!isBlock && (getMaxThreads() || getMinBlocks() || getMaxRegisters()))
    return emitOpError("max_threads, min_blocks and max_registers are launch "
                       "bounds of a kernel: only a block-level parallel takes "
                       "them");
  if (isBlock && !getResults().empty())
    return emitOpError("a block-level parallel is a kernel launch and cannot "
                       "yield values; write results to a tensor");
  if (ParallelOp parent = getParentParallel()) {
    if (getAsync())
      return emitOpError("only the outermost parallel can be async");
    if (static_cast<int>(parent.getLevel()) <=
        static_cast<int>(getLevel()))
      return emitOpError("a '")
             << stringifyLevel(getLevel())
             << "' parallel cannot be nested in a '"
             << stringifyLevel(parent.getLevel())
             << "' parallel; levels must decrease from block to warpgroup, "
                "warp and thread";
  }
  return success();
}

LogicalResult ParallelOp::verifyRegions() {
  Block &body = getBody().front();
  if (body.getNumArguments() != getBounds().size())
    return emitOpError("expected ")
           << getBounds().size() << " body arguments, one per bound, got "
           << body.getNumArguments();
  for (BlockArgument arg : body.getArguments())
    if (!arg.getType().isIndex())
      return emitOpError("body arguments must be of index type, got ")
             << arg.getType();
  return success();
}

void ParallelOp::getSuccessorRegions(RegionBranchPoint point,
                                     SmallVectorImpl<RegionSuccessor> &regions) {
  // Each instance enters the body once; the indices are not forwarded from
  // operands, so dataflow analyses see them as region entry values.
  if (point.isParent()) {
    regions.push_back(RegionSuccessor(&getBody()));
    return;
  }
  regions.push_back(
      RegionSuccessor(getOperation(), getOperation()->getResults()));
}

void ParallelOp::getRegionInvocationBounds(
    ArrayRef<Attribute>, SmallVectorImpl<InvocationBounds> &invocationBounds) {
  invocationBounds.emplace_back(1, 1);
}

//===----------------------------------------------------------------------===//
// InThreadsOp
//===----------------------------------------------------------------------===//

void InThreadsOp::build(OpBuilder &builder, OperationState &state,
                        Value predicate, bool async) {
  state.addOperands(predicate);
  if (async)
    state.getOrAddProperties<Properties>().async = builder.getUnitAttr();
  Region *body = state.addRegion();
  body->push_back(new Block());
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToEnd(&body->front());
  YieldOp::create(builder, state.location);
}

void InThreadsOp::build(OpBuilder &builder, OperationState &state,
                        Value predicate, ValueRange inits) {
  // The body's yield is the caller's to build: it yields the region's
  // futures.
  state.addOperands(predicate);
  state.addOperands(inits);
  state.addTypes(inits.getTypes());
  state.addRegion()->push_back(new Block());
}

LogicalResult InThreadsOp::verify() {
  if (failed(verifyInsideParallel(
          *this, "; inthreads partitions the threads of a parallel and is "
                 "illegal at host level")))
    return failure();
  if (getAsync() && (*this)->getParentOfType<InThreadsOp>())
    return emitOpError("only the outermost croq.inthreads can be async");
  if (getInits().getTypes() != getResultTypes())
    return emitOpError("has ")
           << getNumResults() << " results of types (" << getResultTypes()
           << ") but " << getInits().size() << " else values of types ("
           << getInits().getTypes() << "); they must match";
  if (getNumResults() && getAsync())
    return emitOpError("is async, and an async region is a program of its "
                       "own: it yields nothing to the code after it");
  for (Type type : getResultTypes())
    if (cast<FutureType>(type).getKind() != FutureKind::Tma)
      return emitOpError("yields a future of type ")
             << type
             << ", which is not a TMA future; only a TMA copy completes on "
                "an mbarrier that threads outside the region can wait on";
  if (std::optional<int32_t> registers = getRegisters()) {
    if (!getAsync())
      return emitOpError("sets a register budget, which only an async region "
                         "(a warp-specialized role) has");
    if (*registers < 24 || *registers > 256 || *registers % 8 != 0)
      return emitOpError("asks for ")
             << *registers
             << " registers per thread; setmaxnreg needs a multiple of 8 "
                "from 24 to 256";
  }

  // The thread set must be static: walk the predicate's def chain, which may
  // only contain pure arith ops over constants and parallel indices.
  bool usesIndex = false;
  SmallVector<Value> worklist{getPredicate()};
  llvm::SmallPtrSet<Value, 16> visited;
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    if (!visited.insert(value).second)
      continue;
    if (auto arg = dyn_cast<BlockArgument>(value)) {
      if (isa_and_nonnull<ParallelOp>(arg.getOwner()->getParentOp())) {
        usesIndex = true;
        continue;
      }
      InFlightDiagnostic diag = emitOpError(
          "predicate must depend only on parallel indices and constants, "
          "but it uses a block argument of ");
      diag << arg.getOwner()->getParentOp()->getName()
           << "; use an if (scf.if) for a runtime condition";
      diag.attachNote(arg.getLoc()) << "defined here";
      return diag;
    }
    Operation *def = value.getDefiningOp();
    if (matchPattern(value, m_Constant()))
      continue;
    if (isa<arith::ArithDialect>(def->getDialect()) && isPure(def) &&
        def->getNumRegions() == 0) {
      llvm::append_range(worklist, def->getOperands());
      continue;
    }
    InFlightDiagnostic diag = emitOpError(
        "predicate must depend only on parallel indices and constants, but "
        "it uses the result of '");
    diag << def->getName()
         << "'; use an if (scf.if) for a runtime condition";
    diag.attachNote(def->getLoc()) << "defined here";
    return diag;
  }
  if (!usesIndex)
    return emitOpError("predicate must test at least one parallel index");
  return success();
}

OperandRange InThreadsOp::getEntrySuccessorOperands(RegionSuccessor successor) {
  // The threads the predicate leaves out hold the else values; the body
  // takes no arguments.
  if (successor.isParent())
    return getInits();
  return OperandRange(getOperation()->operand_end(),
                      getOperation()->operand_end());
}

void InThreadsOp::getSuccessorRegions(
    RegionBranchPoint point, SmallVectorImpl<RegionSuccessor> &regions) {
  // The body runs on the selected threads; the others skip it.
  if (point.isParent())
    regions.push_back(RegionSuccessor(&getBody()));
  regions.push_back(RegionSuccessor(getOperation(), getOperation()->getResults()));
}

void InThreadsOp::getEntrySuccessorRegions(
    ArrayRef<Attribute> operands, SmallVectorImpl<RegionSuccessor> &regions) {
  if (auto condition = dyn_cast_or_null<BoolAttr>(operands[0])) {
    if (condition.getValue())
      regions.push_back(RegionSuccessor(&getBody()));
    else
      regions.push_back(
          RegionSuccessor(getOperation(), getOperation()->getResults()));
    return;
  }
  getSuccessorRegions(RegionBranchPoint::parent(), regions);
}

//===----------------------------------------------------------------------===//
// WarpSpecializeOp
//===----------------------------------------------------------------------===//

static ParseResult parseBudgets(OpAsmParser &parser,
                                DenseI32ArrayAttr &registers) {
  SmallVector<int32_t> values;
  if (parser.parseCommaSeparatedList([&] {
        int32_t v;
        if (parser.parseInteger(v))
          return failure();
        values.push_back(v);
        return success();
      }))
    return failure();
  registers = parser.getBuilder().getDenseI32ArrayAttr(values);
  return success();
}

static void printBudgets(OpAsmPrinter &printer, Operation *,
                         DenseI32ArrayAttr registers) {
  llvm::interleaveComma(registers.asArrayRef(), printer);
}

void WarpSpecializeOp::build(OpBuilder &builder, OperationState &state,
                             ArrayRef<int32_t> registers) {
  state.getOrAddProperties<Properties>().registers =
      builder.getDenseI32ArrayAttr(registers);
  Region *body = state.addRegion();
  body->push_back(new Block());
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToEnd(&body->front());
  YieldOp::create(builder, state.location);
}

SmallVector<InThreadsOp> WarpSpecializeOp::getRoles() {
  return llvm::to_vector(getBody().front().getOps<InThreadsOp>());
}

LogicalResult WarpSpecializeOp::verify() {
  if (failed(verifyInsideParallel(*this, "; roles partition the threads of "
                                         "a kernel")))
    return failure();
  Block &body = getBody().front();
  int64_t roles = 0;
  for (Operation &op : body.without_terminator()) {
    auto role = dyn_cast<InThreadsOp>(op);
    if (!role || !role.getAsync())
      return emitOpError("holds only croq.inthreads async roles, got ")
             << op.getName();
    ++roles;
  }
  if (roles == 0)
    return emitOpError("needs at least one role");
  if (static_cast<int64_t>(getRegisters().size()) != roles)
    return emitOpError("has ")
           << roles << " roles but " << getRegisters().size()
           << " register budgets; give each role one";
  for (int32_t budget : getRegisters())
    if (budget < 24 || budget > 256 || budget % 8 != 0)
      return emitOpError("gives a role ")
             << budget
             << " registers; setmaxnreg needs a multiple of 8 from 24 to 256";
  return success();
}

void WarpSpecializeOp::getSuccessorRegions(
    RegionBranchPoint point, SmallVectorImpl<RegionSuccessor> &regions) {
  // Every thread enters the body; its roles select their warpgroups.
  if (point.isParent())
    regions.push_back(RegionSuccessor(&getBody()));
  else
    regions.push_back(
        RegionSuccessor(getOperation(), getOperation()->getResults()));
}

//===----------------------------------------------------------------------===//
// YieldOp
//===----------------------------------------------------------------------===//

LogicalResult YieldOp::verify() {
  Operation *parent = (*this)->getParentOp();
  TypeRange expected = parent->getResultTypes();
  if (getValues().getTypes() != expected)
    return emitOpError("yields ")
           << getValues().size() << " values of types ("
           << getValues().getTypes() << ") but its parent "
           << parent->getName() << " returns (" << expected << ")";
  return success();
}

//===----------------------------------------------------------------------===//
// BarrierOp, StreamCreateOp
//===----------------------------------------------------------------------===//

std::optional<Level> BarrierOp::getCollectiveLevel() {
  // A thread-level barrier synchronises nothing.
  if (getLevel() == Level::Thread)
    return std::nullopt;
  return getLevel();
}

LogicalResult NamedBarrierOp::verify() {
  if (!(*this)->getParentOfType<ParallelOp>())
    return emitOpError("must be nested in a croq.parallel; a barrier "
                       "synchronises device threads");
  APInt id, count;
  if (!matchPattern(getId(), m_ConstantInt(&id)))
    return emitOpError("needs a constant barrier id, so that croq can keep "
                       "its own barriers apart");
  if (id.getSExtValue() < 0 || id.getSExtValue() > 15)
    return emitOpError("barrier id ")
           << id.getSExtValue() << " is out of range: a block has 16 (0 to 15)";
  if (matchPattern(getCount(), m_ConstantInt(&count)) &&
      (count.getSExtValue() <= 0 || count.getSExtValue() % 32))
    return emitOpError("counts whole warps: ")
           << count.getSExtValue() << " threads is not a positive multiple "
           << "of 32";
  return success();
}

LogicalResult GridBarrierOp::verify() {
  ParallelOp parallel = (*this)->getParentOfType<ParallelOp>();
  if (!parallel || parallel.getLevel() != Level::Block ||
      !parallel.getCooperative())
    return emitOpError("waits for every block of the grid, so it must be in "
                       "the body of a cooperative block-level croq.parallel "
                       "(`: block<cooperative>`), outside its inner levels");
  return success();
}

LogicalResult mlir::croq::detail::verifyInsideCluster(Operation *op,
                                              StringRef what) {
  ParallelOp kernel;
  for (auto p = op->getParentOfType<ParallelOp>(); p;
       p = p->getParentOfType<ParallelOp>())
    kernel = p;
  // Lowered already: the cluster is the launch's.
  if (!kernel)
    return success(op->getParentOfType<gpu::LaunchOp>() ||
                   op->getParentOfType<gpu::GPUFuncOp>());
  if (kernel.getLevel() == Level::Block && kernel.getCluster())
    return success();
  return op->emitOpError()
         << what
         << ", so it must be in a kernel launched in clusters: write the "
            "block level inside `parallel {r} by [C] : cluster`";
}

std::optional<Level> ClusterBarrierOp::getCollectiveLevel() {
  return Level::Block;
}

LogicalResult ClusterBarrierOp::verify() {
  if (failed(verifyInsideCluster(*this, "waits for every block of its "
                                        "cluster")))
    return failure();
  // Lowered levels (inside a gpu.launch) have been checked already.
  ParallelOp parallel = (*this)->getParentOfType<ParallelOp>();
  if (parallel && (parallel.getLevel() != Level::Block ||
                   (*this)->getParentOfType<InThreadsOp>()))
    return emitOpError("waits for every thread of every block of the "
                       "cluster, so it must be in the body of the "
                       "block-level croq.parallel, outside its inner levels "
                       "and inthreads regions");
  return success();
}

LogicalResult ClusterRankOp::verify() {
  return verifyInsideCluster(*this, "is a block's rank in its cluster");
}

LogicalResult BarrierOp::verify() {
  if (getLevel() == Level::Thread)
    return emitOpError("a barrier needs a level of several threads: warp, "
                       "warpgroup or block");
  return verifyInsideParallel(*this, "; a barrier synchronises device threads");
}

LogicalResult StreamCreateOp::verify() {
  if ((*this)->getParentOfType<ParallelOp>())
    return emitOpError("creates a host-owned stream and must be at host "
                       "level; move it out of the croq.parallel");
  return success();
}

//===----------------------------------------------------------------------===//
// CallOp
//===----------------------------------------------------------------------===//

StringRef mlir::croq::getDeviceCallTypeName(Type type, bool byValue) {
  if (type.isIndex())
    return "s64";
  if (auto integer = dyn_cast<IntegerType>(type)) {
    switch (integer.getWidth()) {
    case 1:
      return "bool";
    case 8:
      return "s8";
    case 16:
      return "s16";
    case 32:
      return "s32";
    case 64:
      return "s64";
    default:
      return "";
    }
  }
  if (type.isF32())
    return "f32";
  if (type.isF64())
    return "f64";
  if (type.isF16())
    return "f16";
  if (type.isBF16())
    return "bf16";
  if (byValue)
    return "";
  if (isa<Float8E4M3FNType>(type))
    return "f8_e4m3";
  if (isa<Float8E5M2Type>(type))
    return "f8_e5m2";
  return "";
}

/// `name`, `ns::name` or either with template arguments: what C++ can call.
static bool isCalleeSpelling(StringRef callee) {
  // `::f`: the global namespace's f.
  callee.consume_front("::");
  StringRef name = callee.take_until([](char c) { return c == '<'; });
  StringRef rest = callee.drop_front(name.size());
  if (name.empty() || name.ends_with(":"))
    return false;
  SmallVector<StringRef> parts;
  name.split(parts, "::");
  for (StringRef part : parts)
    if (part.empty() || llvm::isDigit(part.front()) ||
        !llvm::all_of(part, [](char c) { return llvm::isAlnum(c) || c == '_'; }))
      return false;
  if (rest.empty())
    return true;
  int depth = 0, parens = 0;
  for (char c : rest) {
    if (c == '(')
      ++parens;
    else if (c == ')')
      --parens;
    else if (parens == 0 && c == '<')
      ++depth;
    else if (parens == 0 && c == '>' && --depth < 0)
      return false;
    if (c == ';' || c == '{' || c == '}' || c == '"')
      return false;
  }
  return depth == 0 && rest.ends_with(">");
}

LogicalResult CallOp::verify() {
  if (!isCalleeSpelling(getCallee()))
    return emitOpError("callee '")
           << getCallee()
           << "' is not a C++ function name (`f`, `ns::f`, `f<8>`)";
  for (auto [i, arg] : llvm::enumerate(getArgs())) {
    auto memref = dyn_cast<MemRefType>(arg.getType());
    Type element = memref ? memref.getElementType() : arg.getType();
    if (getDeviceCallTypeName(element, /*byValue=*/!memref).empty())
      return emitOpError("argument ")
             << i << " of type " << arg.getType()
             << " cannot be passed to a C++ device function";
  }
  if (std::optional<ArrayRef<bool>> flags = getUnsignedArgs();
      flags && flags->size() != getArgs().size())
    return emitOpError("has ") << getArgs().size() << " arguments but "
                               << flags->size() << " unsigned_args flags";
  if (getUnsignedResult() && !getResult())
    return emitOpError("unsigned_result needs a result");
  if (getResult() &&
      getDeviceCallTypeName(getResult().getType(), /*byValue=*/true).empty())
    return emitOpError("a C++ device function cannot return ")
           << getResult().getType();
  // After convert-croq-to-gpu the call sits in the launch or kernel that
  // its parallel became.
  Operation *op = getOperation();
  if (op->getParentOfType<gpu::LaunchOp>() ||
      op->getParentOfType<gpu::GPUFuncOp>())
    return success();
  return detail::verifyInsideParallel(
      *this, "; device functions run on device threads");
}

//===----------------------------------------------------------------------===//
// Events
//===----------------------------------------------------------------------===//

LogicalResult EventAllocOp::verify() {
  EventType type = getEvent().getType();
  bool inParallel = (*this)->getParentOfType<ParallelOp>() != nullptr;
  if (type.getStorage() == MemoryKind::Global) {
    if (inParallel)
      return emitOpError("a global event must be declared at host level, "
                         "outside any croq.parallel");
  } else if (!inParallel) {
    return emitOpError("a ")
           << stringifyMemoryKind(type.getStorage())
           << " event must be declared inside a croq.parallel";
  }
  return success();
}

LogicalResult EventTriggerOp::verify() {
  if (getIssuer() == Issuer::Lowest && !(*this)->hasAttr("croq.issuer_thread"))
    return emitOpError("has issuer `lowest` but no 'croq.issuer_thread' "
                       "naming the thread");
  EventType type = getEvent().getType();
  if (failed(verifyEventSelection(*this, type, getIndices(), getOrder())))
    return failure();
  bool single = getIndices().size() == type.getRank() || getOrder();
  if (getExpectTx() && !single)
    return emitOpError("expect_tx must select a single event element");
  if (getIssuer() && !getExpectTx())
    return emitOpError("an issuer picks the thread that expects TMA bytes, "
                       "but this trigger has no expect_tx");
  if (getWarpArrivals() && !getCluster())
    return emitOpError("warp_arrivals applies to a trigger across the "
                       "cluster");
  if (getCluster()) {
    if (getExpectTx() || !getAfter().empty())
      return emitOpError("arrives across the cluster, and so cannot expect "
                         "TMA bytes: each block's own trigger expects those "
                         "of its copies, multicast ones included");
    if (failed(verifyInsideCluster(*this, "arrives in every block of the "
                                          "cluster")))
      return failure();
  }
  if (getAfter().empty())
    return success();
  if (!single)
    return emitOpError("trigger ... after must select a single event element");
  for (auto [i, future] : llvm::enumerate(getAfter())) {
    auto futureType = cast<FutureType>(future.getType());
    if (futureType.getKind() != FutureKind::Tma || !futureType.getAsync())
      return emitOpError("'after' takes asynchronous tma futures, but "
                         "future ")
             << i << " is " << futureType;
  }
  return success();
}

LogicalResult EventWaitOp::verify() {
  return verifyEventSelection(*this, getEvent().getType(), getIndices(),
                              getOrder());
}

//===----------------------------------------------------------------------===//
// Futures
//===----------------------------------------------------------------------===//

LogicalResult WaitOp::verify() {
  if (getFutures().empty())
    return emitOpError("expects at least one future");
  for (auto [i, future] : llvm::enumerate(getFutures()))
    if (!cast<FutureType>(future.getType()).getAsync())
      return emitOpError("future ")
             << i << " is not asynchronous; only async futures can be waited";
  return success();
}

void WaitOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  // Completing asynchronous work publishes its writes: order all accesses.
  effects.emplace_back(MemoryEffects::Read::get());
  effects.emplace_back(MemoryEffects::Write::get());
}

LogicalResult FutureDataOp::verify() {
  Type dataType = getFuture().getType().getDataType();
  if (getData().getType() != dataType)
    return emitOpError("result type ")
           << getData().getType() << " does not match the future's data type "
           << dataType;
  return success();
}

LogicalResult DmaAnyOp::verify() {
  FutureType type = getFuture().getType();
  if (type.getKind() == FutureKind::Mma || !type.getAsync())
    return emitOpError("a placeholder is an async dma or tma future, got ")
           << type;
  if (type.getDataType() != getBuffer().getType())
    return emitOpError("future data type ")
           << type.getDataType() << " does not match the buffer type "
           << getBuffer().getType();
  return success();
}

LogicalResult SwapOp::fold(FoldAdaptor,
                           SmallVectorImpl<OpFoldResult> &results) {
  results.push_back(getRhs());
  results.push_back(getLhs());
  return success();
}

LogicalResult RotateOp::verify() {
  if (getFutures().size() < 2)
    return emitOpError("rotates at least two futures, got ")
           << getFutures().size();
  if (getRotated().size() != getFutures().size())
    return emitOpError("expected ")
           << getFutures().size() << " results, one per future, got "
           << getRotated().size();
  return success();
}

LogicalResult RotateOp::fold(FoldAdaptor,
                             SmallVectorImpl<OpFoldResult> &results) {
  OperandRange futures = getFutures();
  for (size_t i = 0, e = futures.size(); i < e; ++i)
    results.push_back(futures[(i + 1) % e]);
  return success();
}
