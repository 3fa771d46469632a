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
