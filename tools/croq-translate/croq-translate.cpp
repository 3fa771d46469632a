//===- croq-translate.cpp - croq translation driver -----------------------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//
//
// `croq-translate` converts between croq IR and other formats. It carries the
// upstream translations (MLIR <-> LLVM IR, for the tail of the lowering);
// croq's own translations register next to them as they land: the Croqtile
// importer (`--import-croqtile`) and the PTX / cubin / host-code exporters.
//
//===----------------------------------------------------------------------===//

#include "mlir/InitAllTranslations.h"
#include "mlir/Support/LogicalResult.h"
#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"

int main(int argc, char **argv) {
  mlir::registerAllTranslations();
  return mlir::failed(
      mlir::mlirTranslateMain(argc, argv, "croq translation driver\n"));
}
