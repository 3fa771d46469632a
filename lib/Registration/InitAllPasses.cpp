//===- InitAllPasses.cpp - croq pass registration -------------------------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#include "Croq/InitAllPasses.h"
#include "Croq/Conversion/Passes.h"
#include "Croq/Dialect/Croq/Transforms/Passes.h"
#include "Croq/Pipelines/Pipelines.h"

void mlir::croq::registerCroqPasses() {
  registerCroqConversionPasses();
  registerCroqTransformsPasses();
}

void mlir::croq::registerCroqPipelines() { registerCroqToNVVMPipeline(); }
