//===- croq-import-fuzzer.cpp - libFuzzer target for the importer ---------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//
//
// Feeds arbitrary bytes to the Croqtile importer. Any input must be imported
// or rejected with diagnostics; a crash, an assertion or a sanitizer report
// is a bug. Run through scripts/fuzz-importer.sh.
//
//===----------------------------------------------------------------------===//

#include "Croq/Frontend/Croqtile/Importer.h"
#include "Croq/InitAllDialects.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static mlir::MLIRContext *context = [] {
    mlir::DialectRegistry registry;
    mlir::croq::registerCroqDialects(registry);
    auto *ctx = new mlir::MLIRContext(registry);
    ctx->loadAllAvailableDialects();
    // Single-threaded: keeps runs deterministic and fast.
    ctx->disableMultithreading();
    return ctx;
  }();
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(
          llvm::StringRef(reinterpret_cast<const char *>(data), size),
          "fuzz.co"),
      llvm::SMLoc());
  mlir::ScopedDiagnosticHandler quiet(
      context, [](mlir::Diagnostic &) { return mlir::success(); });
  mlir::croq::CroqtileImportOptions options;
  (void)mlir::croq::importCroqtile(sourceMgr, context, options);
  return 0;
}
