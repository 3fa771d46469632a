//===- CroqDialect.cpp - croq dialect registration ------------------------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#include "Croq/Dialect/Croq/IR/CroqDialect.h"
#include "Croq/Dialect/Croq/IR/CroqOps.h"
#include "Croq/Dialect/Croq/IR/CroqTypes.h"

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

LogicalResult CroqDialect::verifyOperationAttribute(Operation *op,
                                                    NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
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
