//===- croq-embed-ptx.cpp - croq embedded through its installed package ---===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//
//
// A compiler outside croq's tree that uses only croq's public headers and
// Croq::Croq: it reads a Croqtile (.co) or croq IR (.mlir) file, runs the
// croq-to-nvvm pipeline and prints the PTX of its kernels.
//
//===----------------------------------------------------------------------===//

#include "Croq/Frontend/Croqtile/Importer.h"
#include "Croq/InitAllDialects.h"
#include "Croq/Pipelines/Pipelines.h"
#include "Croq/Target/Translations.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

static llvm::cl::opt<std::string> inputFile(llvm::cl::Positional,
                                            llvm::cl::desc("<.co or .mlir>"),
                                            llvm::cl::Required);

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  llvm::cl::ParseCommandLineOptions(argc, argv, "croq through its package\n");

  // One call registers what croq's pipeline needs.
  DialectRegistry registry;
  croq::registerCroqDialects(registry);
  MLIRContext context(registry);

  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> input = openInputFile(inputFile, &error);
  if (!input) {
    llvm::errs() << error << "\n";
    return 1;
  }
  llvm::SourceMgr sources;
  sources.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  SourceMgrDiagnosticHandler diagnostics(sources, &context);

  OwningOpRef<ModuleOp> module =
      llvm::StringRef(inputFile).ends_with(".mlir")
          ? parseSourceFile<ModuleOp>(sources, &context)
          : croq::importCroqtile(sources, &context, {});
  if (!module)
    return 1;

  PassManager pm(&context);
  croq::CroqToNVVMPipelineOptions options;
  options.format = "isa";
  croq::buildCroqToNVVMPipeline(pm, options);
  if (failed(pm.run(*module)))
    return 1;
  for (const croq::KernelImage &image : croq::getKernelImages(*module))
    llvm::outs() << image.image;
  return 0;
}
