//===- croq-translate.cpp - croq translation driver -----------------------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//
//
// `croq-translate` imports Croqtile source (`--import-croqtile`), converts
// croq IR to PTX (`--croq-to-ptx`), a cubin
// (`--croq-to-cubin`) or C++ host code with the kernels embedded
// (`--croq-to-host`), and carries the upstream MLIR <-> LLVM IR translations.
//
//===----------------------------------------------------------------------===//

#include "Croq/Frontend/Croqtile/Importer.h"
#include "Croq/Target/Translations.h"

#include "mlir/InitAllTranslations.h"
#include "mlir/Support/LogicalResult.h"
#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"

int main(int argc, char **argv) {
  mlir::registerAllTranslations();
  mlir::croq::registerCroqTranslations();
  mlir::croq::registerCroqtileImport();
  return mlir::failed(
      mlir::mlirTranslateMain(argc, argv, "croq translation driver\n"));
}
