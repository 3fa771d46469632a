//===- Spelling.cpp - croq types as Croqtile writes them ------------------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#include "Croq/Dialect/Croq/IR/CroqDialect.h"
#include "Croq/Dialect/Croq/IR/CroqTypes.h"
#include "Croq/Frontend/Croqtile/Importer.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::croq;

/// `[64, 64]`, with `?` for a run-time extent.
static void printShape(raw_ostream &os, ArrayRef<int64_t> shape) {
  os << "[";
  llvm::interleaveComma(shape, os, [&](int64_t d) {
    if (ShapedType::isDynamic(d))
      os << "?";
    else
      os << d;
  });
  os << "]";
}

std::string mlir::croq::spellCroqtileType(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (isa<Float8E4M3FNType>(type))
    os << "f8_e4m3";
  else if (isa<Float8E5M2Type>(type))
    os << "f8_e5m2";
  else if (isa<Float6E2M3FNType>(type))
    os << "f6_e2m3";
  else if (isa<Float6E3M2FNType>(type))
    os << "f6_e3m2";
  else if (isa<Float4E2M1FNType>(type))
    os << "f4_e2m1";
  else if (auto memref = dyn_cast<MemRefType>(type)) {
    std::optional<Storage> storage = getStorage(memref);
    if (storage == Storage::Shared)
      os << "shared ";
    else if (storage == Storage::Local)
      os << "local ";
    os << spellCroqtileType(memref.getElementType()) << " ";
    printShape(os, memref.getShape());
  } else if (auto frag = dyn_cast<FragType>(type)) {
    os << "frag " << spellCroqtileType(frag.getElementType()) << " ";
    printShape(os, frag.getShape());
    os << " (" << stringifyFragRole(frag.getRole()) << ", held by a "
       << (frag.getScope() == Level::Warpgroup ? "warpgroup" : "warp") << ")";
  } else if (auto future = dyn_cast<FutureType>(type)) {
    os << "future of " << spellCroqtileType(future.getDataType());
  } else {
    os << type;
  }
  return text;
}
