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

} // namespace mlir::croq

#endif // CROQ_DIALECT_CROQ_IR_CROQTYPES_H
