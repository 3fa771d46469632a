//===- CroqTypes.cpp - croq types and attributes --------------------------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#include "Croq/Dialect/Croq/IR/CroqTypes.h"
#include "Croq/Dialect/Croq/IR/CroqDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::croq;

#include "Croq/Dialect/Croq/IR/CroqEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "Croq/Dialect/Croq/IR/CroqAttrs.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "Croq/Dialect/Croq/IR/CroqTypes.cpp.inc"

void CroqDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "Croq/Dialect/Croq/IR/CroqTypes.cpp.inc"
      >();
}

void CroqDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "Croq/Dialect/Croq/IR/CroqAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// Storage of memrefs
//===----------------------------------------------------------------------===//

std::optional<Storage> mlir::croq::getStorage(MemRefType type) {
  Attribute space = type.getMemorySpace();
  if (!space)
    return Storage::Global;
  auto gpuSpace = dyn_cast<gpu::AddressSpaceAttr>(space);
  if (!gpuSpace)
    return std::nullopt;
  switch (gpuSpace.getValue()) {
  case gpu::AddressSpace::Global:
    return Storage::Global;
  case gpu::AddressSpace::Workgroup:
    return Storage::Shared;
  case gpu::AddressSpace::Private:
    return Storage::Local;
  }
  return std::nullopt;
}

StringRef mlir::croq::stringifyStorage(Storage storage) {
  switch (storage) {
  case Storage::Global:
    return "global";
  case Storage::Shared:
    return "shared";
  case Storage::Local:
    return "local";
  }
  llvm_unreachable("unknown storage");
}

//===----------------------------------------------------------------------===//
// Keyword helpers
//===----------------------------------------------------------------------===//

/// Parses a keyword naming a value of an enum; on failure reports what was
/// expected at the keyword's location.
template <typename EnumT>
static FailureOr<EnumT>
parseEnumKeyword(AsmParser &parser,
                 function_ref<std::optional<EnumT>(StringRef)> symbolize,
                                         StringRef what, StringRef expected) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef keyword;
  if (parser.parseKeyword(&keyword))
    return failure();
  std::optional<EnumT> value = symbolize(keyword);
  if (!value) {
    parser.emitError(loc) << "unknown " << what << " '" << keyword
                          << "'; expected " << expected;
    return failure();
  }
  return *value;
}

static void printShape(AsmPrinter &printer, ArrayRef<int64_t> shape) {
  llvm::interleave(shape, printer.getStream(), "x");
}

//===----------------------------------------------------------------------===//
// EventType
//===----------------------------------------------------------------------===//

Type EventType::parse(AsmParser &parser) {
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseLess())
    return {};
  FailureOr<MemoryKind> storage = parseEnumKeyword<MemoryKind>(
      parser, [](StringRef s) { return symbolizeMemoryKind(s); }, "event storage", "shared, local or global");
  if (failed(storage))
    return {};
  SmallVector<int64_t> shape;
  if (succeeded(parser.parseOptionalComma()) &&
      parser.parseDimensionList(shape, /*allowDynamic=*/false,
                                /*withTrailingX=*/false))
    return {};
  if (parser.parseGreater())
    return {};
  return getChecked([&] { return parser.emitError(loc); },
                    parser.getContext(), *storage, shape);
}

void EventType::print(AsmPrinter &printer) const {
  printer << "<" << stringifyMemoryKind(getStorage());
  if (!getShape().empty()) {
    printer << ", ";
    printShape(printer, getShape());
  }
  printer << ">";
}

/// The most events one array may hold: 32 KiB of mbarriers.
constexpr int64_t kMaxEvents = 4096;

LogicalResult
EventType::verify(function_ref<InFlightDiagnostic()> emitError,
                  MemoryKind storage, ArrayRef<int64_t> shape) {
  int64_t total = 1;
  for (int64_t dim : shape) {
    if (dim <= 0)
      return emitError() << "event array dimensions must be positive, got "
                         << dim;
    if (llvm::MulOverflow(total, dim, total) || total > kMaxEvents)
      return emitError() << "an event array holds at most " << kMaxEvents
                         << " events (one 8-byte mbarrier each in shared "
                            "memory)";
  }
  return success();
}

int64_t EventType::getNumElements() const {
  int64_t total = 1;
  for (int64_t dim : getShape())
    total *= dim;
  return total;
}

//===----------------------------------------------------------------------===//
// FutureType
//===----------------------------------------------------------------------===//

Type FutureType::parse(AsmParser &parser) {
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseLess())
    return {};
  FailureOr<FutureKind> kind = parseEnumKeyword<FutureKind>(
      parser, [](StringRef s) { return symbolizeFutureKind(s); }, "future kind", "dma, tma or mma");
  if (failed(kind) || parser.parseComma())
    return {};
  bool async = succeeded(parser.parseOptionalKeyword("async"));
  if (async && parser.parseComma())
    return {};
  Type dataType;
  if (parser.parseType(dataType) || parser.parseGreater())
    return {};
  return getChecked([&] { return parser.emitError(loc); },
                    parser.getContext(), *kind, async, dataType);
}

void FutureType::print(AsmPrinter &printer) const {
  printer << "<" << stringifyFutureKind(getKind()) << ", ";
  if (getAsync())
    printer << "async, ";
  printer << getDataType() << ">";
}

LogicalResult
FutureType::verify(function_ref<InFlightDiagnostic()> emitError,
                   FutureKind kind, bool async, Type dataType) {
  if (kind == FutureKind::Mma) {
    auto frag = dyn_cast<FragType>(dataType);
    if (!frag || frag.getRole() != FragRole::Acc)
      return emitError() << "an mma future refers to an accumulator "
                            "fragment, got "
                         << dataType;
    if (!async)
      return emitError() << "an mma future is always async";
    return success();
  }
  if (!isa<MemRefType>(dataType))
    return emitError() << "a " << stringifyFutureKind(kind)
                       << " future refers to a memref, got " << dataType;
  return success();
}

//===----------------------------------------------------------------------===//
// FragType
//===----------------------------------------------------------------------===//

Type FragType::parse(AsmParser &parser) {
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseLess())
    return {};
  FailureOr<FragRole> role = parseEnumKeyword<FragRole>(
      parser, [](StringRef s) { return symbolizeFragRole(s); }, "fragment role", "a, b or acc");
  if (failed(role) || parser.parseComma())
    return {};
  SmallVector<int64_t> shape;
  Type elementType;
  if (parser.parseDimensionList(shape, /*allowDynamic=*/false,
                                /*withTrailingX=*/true) ||
      parser.parseType(elementType))
    return {};
  Level scope = Level::Warp;
  if (succeeded(parser.parseOptionalComma())) {
    FailureOr<Level> parsed = parseEnumKeyword<Level>(
        parser, [](StringRef s) { return symbolizeLevel(s); },
        "fragment scope", "warp or warpgroup");
    if (failed(parsed))
      return {};
    scope = *parsed;
  }
  if (parser.parseGreater())
    return {};
  return getChecked([&] { return parser.emitError(loc); },
                    parser.getContext(), *role, shape, elementType, scope);
}

void FragType::print(AsmPrinter &printer) const {
  printer << "<" << stringifyFragRole(getRole()) << ", ";
  printShape(printer, getShape());
  printer << "x" << getElementType();
  if (getScope() != Level::Warp)
    printer << ", " << stringifyLevel(getScope());
  printer << ">";
}

/// The largest extent of a register fragment.
constexpr int64_t kMaxFragExtent = 256;

int64_t FragType::getRegisterCount() const {
  ArrayRef<int64_t> shape = getShape();
  if (getScope() == Level::Warpgroup)
    return shape[1] / 2;
  // m16n8 tiles, padded at the edges.
  return llvm::divideCeil(shape[0], 16) * llvm::divideCeil(shape[1], 8) * 4;
}

/// `type` as the IR prints it, without the quotes of a diagnostic.
static std::string typeName(Type type) {
  std::string name;
  llvm::raw_string_ostream os(name);
  os << type;
  return name;
}

LogicalResult FragType::verify(function_ref<InFlightDiagnostic()> emitError,
                               FragRole role, ArrayRef<int64_t> shape,
                               Type elementType, Level scope) {
  if (scope != Level::Warp && scope != Level::Warpgroup)
    return emitError() << "a fragment is held by a warp or a warpgroup, not "
                          "a "
                       << stringifyLevel(scope);
  if (shape.size() != 2)
    return emitError() << "a fragment is a 2-D tile, got rank "
                       << shape.size();
  if (llvm::any_of(shape, [](int64_t d) { return d <= 0; }))
    return emitError() << "fragment dimensions must be positive";
  // A fragment lives in registers: one warpgroup accumulator is at most
  // 64 x 256 (wgmma), and no MMA tile needs an extent past 256.
  if (llvm::any_of(shape, [](int64_t d) { return d > kMaxFragExtent; }))
    return emitError() << "a fragment extent is at most " << kMaxFragExtent
                       << " (it lives in registers), got " << shape[0] << "x"
                       << shape[1];
  if (!elementType.isIntOrFloat())
    return emitError() << "fragment element type must be an integer or "
                          "float, got "
                       << elementType;
  // wgmma computes 64 rows per warpgroup: a larger tile is split across
  // warpgroups, a smaller one is no wgmma's.
  if (role == FragRole::Acc && scope == Level::Warpgroup && shape[0] != 64)
    return emitError() << "a warpgroup's accumulator has 64 rows (wgmma's M "
                          "per warpgroup), got "
                       << shape[0] << "x" << shape[1];
  if (role == FragRole::Meta) {
    // One wgmma.sp step covers 32 elements of K of a 16-bit type, 64 of an
    // 8-bit float.
    unsigned bits = elementType.getIntOrFloatBitWidth();
    bool known = elementType.isF16() || elementType.isBF16() ||
                 isa<Float8E4M3FNType, Float8E5M2Type>(elementType);
    int64_t step = bits == 16 ? 32 : 64;
    if (scope != Level::Warpgroup || !known || shape[0] != 64 ||
        shape[1] % step)
      return emitError() << "sparsity metadata is a warpgroup's, of a 64 x K "
                            "tile of f16, bf16, f8E4M3FN or f8E5M2 with K a "
                            "multiple of its wgmma.sp step (32, or 64 for "
                            "8-bit floats), got "
                         << shape[0] << "x" << shape[1] << "x"
                         << typeName(elementType) << " at "
                         << stringifyLevel(scope) << " scope";
  }
  return success();
}
