//===- CroqTypes.h - croq types and attributes ------------------*- C++ -*-===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#ifndef CROQ_DIALECT_CROQ_IR_CROQTYPES_H
#define CROQ_DIALECT_CROQ_IR_CROQTYPES_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Types.h"

#include "Croq/Dialect/Croq/IR/CroqEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "Croq/Dialect/Croq/IR/CroqAttrs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "Croq/Dialect/Croq/IR/CroqTypes.h.inc"

namespace mlir::croq {

/// Where a memref lives, from Croqtile's point of view.
enum class Storage { Global, Shared, Local };

/// Classifies a memref by its memory space: none or `global` is global,
/// `#gpu.address_space<workgroup>` is shared, `private` is local. Returns
/// std::nullopt for any other memory space.
std::optional<Storage> getStorage(MemRefType type);

/// Printable name of a storage ("global", "shared", "local").
StringRef stringifyStorage(Storage storage);

/// The bytes one element of `elementType` (an integer or float) takes in
/// memory. Sub-byte types (f6, f4, i6, i4, i2) take one byte each, as LLVM
/// stores them and as upstream Croqtile's runtime holds them: croq never
/// packs them.
inline int64_t getStorageBytes(Type elementType) {
  return (elementType.getIntOrFloatBitWidth() + 7) / 8;
}

/// Whether `elementType` is narrower than its storage byte (bool and the
/// other 1-bit types too): vectors of it would pack, so memory is accessed
/// one element at a time, and TMA (which counts packed bits) cannot move it.
inline bool isSubByte(Type elementType) {
  return elementType.getIntOrFloatBitWidth() % 8 != 0;
}

} // namespace mlir::croq

#endif // CROQ_DIALECT_CROQ_IR_CROQTYPES_H
