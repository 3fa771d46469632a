//===- croq-opt.cpp - croq optimizer driver -------------------------------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//
//
// `croq-opt` parses croq and upstream IR, runs pass pipelines on it and
// prints the result. It registers the dialects croq IR uses, every upstream
// pass (the lowering pipeline is built from them), and the extensions and
// LLVM IR translations that the GPU-to-NVVM lowering and
// `gpu-module-to-binary` need.
//
//===----------------------------------------------------------------------===//

#include "Croq/InitAllDialects.h"
#include "Croq/InitAllPasses.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::croq::registerCroqPasses();
  mlir::croq::registerCroqPipelines();

  mlir::DialectRegistry registry;
  mlir::croq::registerCroqDialects(registry);

  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "croq optimizer driver\n", registry));
}
