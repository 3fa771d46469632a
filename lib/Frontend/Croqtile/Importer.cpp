//===- Importer.cpp - Croqtile source to croq IR --------------------------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#include "Croq/Frontend/Croqtile/Importer.h"
#include "Croq/Dialect/Croq/IR/CroqOps.h"
#include "Croq/InitAllDialects.h"

#include "IRGen.h"
#include "Lexer.h"
#include "Parser.h"

#include "Croq/Dialect/Croq/Transforms/Passes.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/ScopeExit.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;
using namespace mlir::croq;
using namespace mlir::croq::croqtile;

OwningOpRef<ModuleOp>
mlir::croq::importCroqtile(llvm::SourceMgr &sourceMgr, MLIRContext *context,
                           const CroqtileImportOptions &options) {
  auto locate = [&](llvm::SMLoc smloc) -> Location {
    unsigned id = smloc.isValid() ? sourceMgr.FindBufferContainingLoc(smloc) : 0;
    if (!id)
      return FileLineColLoc::get(
          context,
          sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID())
              ->getBufferIdentifier(),
          1, 1);
    auto [line, col] = sourceMgr.getLineAndColumn(smloc, id);
    return FileLineColLoc::get(
        context, sourceMgr.getMemoryBuffer(id)->getBufferIdentifier(), line,
        col);
  };
  ErrorFn error = [&](llvm::SMLoc loc, const llvm::Twine &message) {
    emitError(locate(loc), message);
    return false;
  };
  ErrorFn warning = [&](llvm::SMLoc loc, const llvm::Twine &message) {
    emitWarning(locate(loc), message);
    return true;
  };
  PreprocessorOptions ppOptions{options.defines, options.includeDirs};
  std::vector<Token> tokens;
  if (!preprocess(sourceMgr, ppOptions, tokens, error, warning))
    return nullptr;
  Program program;
  if (!parseProgram(sourceMgr, tokens, program, error))
    return nullptr;
  // Device C++ sees the command line's macros too.
  if (!program.deviceCode.empty()) {
    std::string defines;
    for (const std::string &define : options.defines) {
      StringRef name = StringRef(define).take_until([](char c) { return c == '='; });
      StringRef value = StringRef(define).drop_front(name.size());
      defines += "#define " + name.str() + " " +
                 (value.consume_front("=") ? value.str() : std::string("1")) +
                 "\n";
    }
    program.deviceCode = defines + program.deviceCode;
  }
  FailureOr<SemaResult> sema = analyze(
      program, [&](llvm::SMLoc loc, const Twine &message, const Twine &hint) {
        InFlightDiagnostic diag = emitError(locate(loc), message);
        if (!hint.isTriviallyEmpty())
          diag.attachNote() << "hint: " << hint;
      });
  if (failed(sema))
    return nullptr;
  OwningOpRef<ModuleOp> module =
      generateIR(context, sourceMgr, program, *sema);
  if (!module)
    return nullptr;
  // Errors here are at .co lines; a dump of the generated op (the default
  // "see current operation" note) would only show the importer's output.
  bool printOp = context->shouldPrintOpOnDiagnostic();
  context->printOpOnDiagnostic(false);
  auto restore = llvm::scope_exit(
      [&] { context->printOpOnDiagnostic(printOp); });
  // The command line's register cap, for kernels that set none.
  if (options.maxRegisters) {
    if (options.maxRegisters < 24 || options.maxRegisters > 256) {
      emitError(locate(llvm::SMLoc()))
          << "a kernel register cap of " << options.maxRegisters
          << " is outside 24 to 256 registers per thread";
      return nullptr;
    }
    module->walk([&](ParallelOp kernel) {
      if (kernel.getLevel() == Level::Block && !kernel.getParentParallel() &&
          !kernel.getMaxRegisters())
        kernel.setMaxRegisters(options.maxRegisters);
    });
  }
  if (failed(verify(*module)))
    return nullptr;
  // The importer is the frontend: a deadlock, an arrival mismatch or an
  // unwaited future is an error at its .co line here, not only later.
  PassManager pm(context);
  pm.addPass(createCroqVerifyProtocolPass());
  if (failed(pm.run(*module)))
    return nullptr;
  return module;
}

void mlir::croq::registerCroqtileImport() {
  static llvm::cl::list<std::string> defines(
      "D", llvm::cl::Prefix,
      llvm::cl::desc("Define a macro for --import-croqtile (NAME[=VALUE])"),
      llvm::cl::value_desc("NAME[=VALUE]"));
  static llvm::cl::list<std::string> includeDirs(
      "I", llvm::cl::Prefix,
      llvm::cl::desc("Add an #include directory for --import-croqtile"),
      llvm::cl::value_desc("DIR"));
  TranslateToMLIRRegistration registration(
      "import-croqtile", "import Croqtile source (.co) as croq IR",
      [](const std::shared_ptr<llvm::SourceMgr> &sourceMgr,
         MLIRContext *context) -> OwningOpRef<Operation *> {
        CroqtileImportOptions options;
        options.defines.assign(defines.begin(), defines.end());
        options.includeDirs.assign(includeDirs.begin(), includeDirs.end());
        return importCroqtile(*sourceMgr, context, options);
      },
      [](DialectRegistry &registry) { registerCroqDialects(registry); });
}
