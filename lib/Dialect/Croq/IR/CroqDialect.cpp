//===- CroqDialect.cpp - croq dialect registration ------------------------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#include "Croq/Dialect/Croq/IR/CroqDialect.h"
#include "Croq/Dialect/Croq/IR/CroqOps.h"
#include "Croq/Dialect/Croq/IR/CroqTypes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::croq;

#include "Croq/Dialect/Croq/IR/CroqDialect.cpp.inc"

void CroqDialect::initialize() {
  registerTypes();
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "Croq/Dialect/Croq/IR/CroqOps.cpp.inc"
      >();
}

/// `croq.swizzle` (croq-plan-shared-layout): the swizzle span in bytes of
/// a shared buffer that warpgroup MMAs read, on its allocation (or, inside
/// the croq-to-gpu conversion, on the view of dynamic shared memory that
/// replaced it).
static LogicalResult verifySwizzleAttr(Operation *op, Attribute value) {
  auto span = dyn_cast<IntegerAttr>(value);
  if (!span || !span.getType().isInteger(64))
    return op->emitError("'croq.swizzle' must be an i64 span in bytes");
  int64_t bytes = span.getInt();
  if (bytes != 32 && bytes != 64 && bytes != 128)
    return op->emitError("'croq.swizzle' is ")
           << bytes << "; a wgmma swizzle span is 32, 64 or 128 bytes";
  if (!isa<memref::AllocOp, memref::ViewOp>(op))
    return op->emitError("'croq.swizzle' belongs on the memref.alloc of a "
                         "shared buffer");
  auto type = cast<MemRefType>(op->getResult(0).getType());
  if (getStorage(type) != Storage::Shared || type.getRank() < 2)
    return op->emitError("'croq.swizzle' needs a shared buffer of rank 2 or "
                         "more, got ")
           << type;
  return success();
}

LogicalResult CroqDialect::verifyOperationAttribute(Operation *op,
                                                    NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name == "croq.swizzle")
    return verifySwizzleAttr(op, attr.getValue());
  // The program's host C++ code (outside __co__ functions), in source order,
  // kept for the tools that build the whole program.
  if (name == "croq.host_code") {
    auto chunks = dyn_cast<ArrayAttr>(attr.getValue());
    if (!isa<ModuleOp>(op) || !chunks ||
        !llvm::all_of(chunks, [](Attribute a) { return isa<StringAttr>(a); }))
      return op->emitError("'croq.host_code' is an array of strings on a "
                           "module");
    return success();
  }
  bool isBudget = name == "croq.max_registers";
  if (!isBudget && name != "croq.role")
    return success();
  auto role = dyn_cast<InThreadsOp>(op);
  if (!role || !role.getAsync())
    return op->emitError("'")
           << name << "' belongs on a croq.inthreads async role";
  auto value = dyn_cast<IntegerAttr>(attr.getValue());
  if (!value)
    return op->emitError("'") << name << "' must be an integer";
  int64_t v = value.getValue().getSExtValue();
  if (!isBudget) {
    if (v < 0)
      return op->emitError("'croq.role' must be nonnegative, got ") << v;
    // Roles are numbered 0, 1, ... and adjacent: one switch dispatches them.
    if (v > 0) {
      auto prev = dyn_cast_or_null<InThreadsOp>(op->getPrevNode());
      auto prevIndex =
          prev ? prev->getAttrOfType<IntegerAttr>("croq.role") : IntegerAttr();
      if (!prevIndex || prevIndex.getValue().getSExtValue() != v - 1)
        return op->emitError("'croq.role' is ")
               << v << " but the op before it is not role " << v - 1
               << "; roles are numbered 0, 1, ... in order, adjacent";
    }
    return success();
  }
  // setmaxnreg takes 24 to 256 registers per thread in steps of 8.
  if (v < 24 || v > 256 || v % 8 != 0)
    return op->emitError("'croq.max_registers' is ")
           << v << "; setmaxnreg needs a multiple of 8 from 24 to 256";
  return success();
}
