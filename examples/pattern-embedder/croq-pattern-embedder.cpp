//===- croq-pattern-embedder.cpp - croq's lowering inside another compiler ===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//
//
// Lowers croq IR to serialized GPU kernels the way a compiler that embeds
// croq would, using only croq's public headers: croq's preparation passes
// (buildCroqPrepareGPUPipeline), then a conversion with a target and a
// pattern list of its own (croq's type conversions, pattern sets and
// structural conversions), then croq's kernel pipeline
// (buildCroqGPUToNVVMPipeline). It prints the module, which for every
// integration kernel is what `croq-opt --croq-to-nvvm` prints.
//
//   usage: croq-pattern-embedder [--chip=sm_90a] [--format=isa] FILE.mlir
//
//===----------------------------------------------------------------------===//

#include "Croq/Conversion/CroqToGPU/CroqToGPU.h"
#include "Croq/Dialect/Croq/Transforms/Passes.h"
#include "Croq/InitAllDialects.h"
#include "Croq/Pipelines/Pipelines.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Transforms/DialectConversion.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;

static llvm::cl::opt<std::string> inputFile(llvm::cl::Positional,
                                            llvm::cl::desc("<input .mlir>"),
                                            llvm::cl::init("-"));
static llvm::cl::opt<std::string> chip("chip", llvm::cl::desc("Target GPU"),
                                       llvm::cl::init("sm_90a"));
static llvm::cl::opt<std::string>
    format("format", llvm::cl::desc("isa (PTX), bin (cubin) or none"),
           llvm::cl::init("isa"));

/// The embedder's own conversion: every op it does not know stays legal;
/// croq says what of its own must go.
static LogicalResult convertCroq(ModuleOp module) {
  MLIRContext *context = module.getContext();
  croq::LaunchAnalysisPtr launches = croq::analyzeLaunches(module);
  if (!launches)
    return failure();
  TypeConverter converter;
  croq::populateCroqToGPUTypeConversions(converter);
  ConversionTarget target(*context);
  target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
  croq::configureCroqToGPUConversionLegality(target, converter);

  RewritePatternSet patterns(context);
  croq::populateCroqToGPUConversionPatterns(converter, patterns, *launches);
  croq::populateCroqToGPUStructuralConversions(converter, patterns, target);
  return applyPartialConversion(module, target, std::move(patterns));
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  llvm::cl::ParseCommandLineOptions(argc, argv, "croq embedded in a compiler\n");

  DialectRegistry registry;
  croq::registerCroqDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();

  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> input =
      openInputFile(inputFile, &error);
  if (!input) {
    llvm::errs() << error << "\n";
    return 1;
  }
  llvm::SourceMgr sources;
  sources.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  SourceMgrDiagnosticHandler diagnostics(sources, &context);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sources, &context);
  if (!module)
    return 1;

  croq::CroqToNVVMPipelineOptions options;
  options.chip = chip;
  options.format = format;
  PassManager prepare(&context);
  prepare.addPass(croq::createCroqVerifyProtocolPass());
  prepare.addPass(croq::createCroqResultsToOutputsPass());
  croq::CroqPrepareGPUPipelineOptions prepareOptions;
  prepareOptions.chip = chip;
  croq::buildCroqPrepareGPUPipeline(prepare, prepareOptions);
  if (failed(prepare.run(*module)) || failed(convertCroq(*module)))
    return 1;
  PassManager lower(&context);
  croq::buildCroqGPUToNVVMPipeline(lower, options);
  if (failed(lower.run(*module)))
    return 1;
  module->print(llvm::outs());
  llvm::outs() << "\n";
  return 0;
}
