//===- core.cpp - croq for the Python extension ---------------------------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#include "core.h"

#include "Croq/Frontend/Croqtile/Importer.h"
#include "Croq/InitAllDialects.h"
#include "Croq/Pipelines/Pipelines.h"
#include "Croq/Target/HostLibrary.h"
#include "Croq/Target/Translations.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace {
/// Runs croq-to-nvvm on a copy of `module`, serializing to `format`.
OwningOpRef<ModuleOp> lower(ModuleOp module, MLIRContext &context,
                            const croq_python::CompileRequest &request,
                            const char *format) {
  OwningOpRef<ModuleOp> copy(module.clone());
  PassManager pm(&context);
  croq::CroqToNVVMPipelineOptions options;
  options.chip = request.arch;
  options.toolkit = croq::findCudaToolkit(request.toolkit);
  options.format = format;
  options.fastMath = request.fastMath;
  croq::buildCroqToNVVMPipeline(pm, options);
  if (failed(pm.run(*copy)))
    return nullptr;
  return copy;
}
} // namespace

croq_python::CompileResult
croq_python::compile(const CompileRequest &request) {
  CompileResult result;
  DialectRegistry registry;
  croq::registerCroqDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // Errors name the source line; the IR op behind each one is croq's
  // business, as croqc leaves it out.
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(request.source, request.filename),
      llvm::SMLoc());
  llvm::raw_string_ostream diagnostics(result.diagnostics);
  SourceMgrDiagnosticHandler handler(sourceMgr, &context, diagnostics);

  OwningOpRef<ModuleOp> module;
  if (request.isMlir) {
    if (request.maxRegisters) {
      result.diagnostics = "maxnreg applies to Croqtile sources; in croq IR, "
                           "give the kernel's croq.parallel max_registers\n";
      return result;
    }
    module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  } else {
    croq::CroqtileImportOptions options;
    options.defines = request.defines;
    options.includeDirs = request.includeDirs;
    options.maxRegisters = request.maxRegisters;
    module = croq::importCroqtile(sourceMgr, &context, options);
  }
  if (!module)
    return result;
  llvm::raw_string_ostream mlirOs(result.mlir);
  module->print(mlirOs);

  OwningOpRef<ModuleOp> ptx = lower(*module, context, request, "isa");
  if (!ptx)
    return result;
  for (const croq::KernelImage &image : croq::getKernelImages(*ptx))
    result.ptx += image.image;
  // The entry points are the same whichever image the host code embeds.
  llvm::raw_string_ostream headerOs(result.header),
      signaturesOs(result.signatures);
  if (failed(croq::emitHostHeader(*ptx, headerOs)) ||
      failed(croq::describeEntryPoints(*ptx, signaturesOs)))
    return result;
  // The host code embeds cubins, which ptxas makes: without it the PTX
  // and the IR are still the module's.
  std::string toolkit = croq::findCudaToolkit(request.toolkit);
  if (!llvm::sys::fs::exists(toolkit + "/bin/ptxas")) {
    result.libraryError = "ptxas is not in " + toolkit +
                          "/bin, and the kernels' cubins need it; install "
                          "the CUDA toolkit or pass toolkit=DIR";
    result.ok = true;
    return result;
  }
  OwningOpRef<ModuleOp> cubins = lower(*module, context, request, "bin");
  if (!cubins)
    return result;
  llvm::raw_string_ostream hostOs(result.host);
  if (failed(croq::emitHostCode(*cubins, hostOs)))
    return result;
  result.ok = true;
  return result;
}

std::string croq_python::buildLibrary(const std::string &host,
                                      const std::string &output,
                                      const std::string &runtimeDir,
                                      const std::string &toolkit) {
  croq::HostLibraryOptions options;
  options.runtimeDir = runtimeDir;
  options.toolkit = toolkit;
  std::string error;
  if (failed(croq::buildHostLibrary(host, output, options, error)))
    return error.empty() ? "building the host library failed" : error;
  return "";
}
