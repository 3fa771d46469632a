//===- croqc.cpp - Croqtile to a shared library in one command ------------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//
//
// `croqc kernel.co -o libkernel.so` imports Croqtile source (or reads croq
// IR), lowers it through croq-to-nvvm, and writes what --emit asks for: the
// croq IR, PTX, a cubin, the C++ host code, its C header, or (the default)
// a shared library of the host entry points with the kernels embedded,
// built with the croq runtime by nvcc or a C++ compiler, plus its header.
// Diagnostics of every stage carry the source's locations; MLIR's
// debugging flags (--mlir-print-ir-after-all, --mlir-timing, ...) apply to
// the pipeline.
//
//===----------------------------------------------------------------------===//

#include "Croq/Frontend/Croqtile/Importer.h"
#include "Croq/InitAllDialects.h"
#include "Croq/InitAllPasses.h"
#include "Croq/Pipelines/Pipelines.h"
#include "Croq/Target/HostLibrary.h"
#include "Croq/Target/Translations.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <deque>
#include <memory>
#include <optional>
#include <string>

using namespace mlir;
using namespace llvm;

namespace {
enum class Emit { Library, Mlir, Ptx, Cubin, Host, Header, Signatures };

cl::OptionCategory category("croqc options");

cl::opt<std::string> inputFile(cl::Positional, cl::desc("<input .co or .mlir>"),
                               cl::Required, cl::cat(category));
cl::opt<std::string> outputFile("o", cl::desc("Output file (default: from "
                                              "the input's name and --emit; "
                                              "'-' for stdout)"),
                                cl::value_desc("path"), cl::cat(category));
cl::opt<Emit> emit(
    "emit", cl::desc("What to write"), cl::init(Emit::Library),
    cl::values(
        clEnumValN(Emit::Library, "lib",
                   "a shared library of the entry points, and its C header "
                   "(default)"),
        clEnumValN(Emit::Mlir, "mlir", "the croq IR the importer builds"),
        clEnumValN(Emit::Ptx, "ptx", "one PTX file with every kernel"),
        clEnumValN(Emit::Cubin, "cubin", "one cubin with every kernel (ptxas)"),
        clEnumValN(Emit::Host, "host",
                   "C++ host code with the kernels' cubins embedded"),
        clEnumValN(Emit::Header, "header", "the C header of the entry points"),
        clEnumValN(Emit::Signatures, "signatures",
                   "the entry points' parameters as JSON (for bindings)")),
    cl::cat(category));
cl::list<std::string> defines("D", cl::Prefix,
                              cl::desc("Define a macro, as NAME or NAME=VALUE"),
                              cl::value_desc("macro"), cl::cat(category));
cl::list<std::string> includeDirs("I", cl::Prefix,
                                  cl::desc("Add an #include directory"),
                                  cl::value_desc("dir"), cl::cat(category));
cl::opt<std::string> arch("arch", cl::desc("Target GPU"), cl::init("sm_90a"),
                          cl::cat(category));
cl::opt<std::string> features("features",
                              cl::desc("PTX features (e.g. +ptx84)"),
                              cl::init("+ptx84"), cl::cat(category));
cl::opt<std::string> headerFile(
    "header", cl::desc("Where --emit=lib writes the C header (default: the "
                       "library's path with .h)"),
    cl::value_desc("path"), cl::cat(category));
cl::opt<std::string> cudaPath(
    "cuda-path",
    cl::desc("CUDA toolkit (default: $CUDA_PATH, $CUDA_HOME, /usr/local/cuda)"),
    cl::value_desc("dir"), cl::cat(category));
cl::opt<std::string> hostCompiler(
    "cxx",
    cl::desc("Compiler of the host library (default: the toolkit's nvcc, "
             "else clang++ or c++ on PATH)"),
    cl::value_desc("path"), cl::cat(category));
cl::opt<std::string> clangPath(
    "clang",
    cl::desc("clang++ that compiles the C++ device functions kernels call"),
    cl::init(croq::getDefaultClangPath()), cl::cat(category));
cl::opt<std::string> runtimeDir(
    "runtime-dir",
    cl::desc("croq runtime sources (include/croq_runtime.h, "
             "lib/croq_runtime.cpp); default: the install's or the source "
             "tree's"),
    cl::value_desc("dir"), cl::cat(category));
cl::opt<bool> fastMath(
    "fast-math",
    cl::desc("Approximate f32 division and square roots and flush f32 "
             "denormals to zero, as nvcc's --use_fast_math"),
    cl::init(false), cl::cat(category));
cl::opt<unsigned> maxRegisters(
    "maxnreg",
    cl::desc("Registers per thread for every kernel without its own "
             "[[maxnreg(N)]] (24 to 256; 0: croq chooses), as nvcc's "
             "-maxrregcount"),
    cl::init(0), cl::cat(category));
cl::opt<unsigned> mmaDeferMinSlots(
    "mma-defer-min-slots",
    cl::desc("A tuning knob: consumer rings of fewer slots wait for each "
             "wgmma batch before releasing its stages (default 4: rings "
             "of four or more keep one batch pending; 2 defers every ring "
             "that can be)"),
    cl::init(4), cl::cat(category));
cl::opt<bool> verbose("v", cl::desc("Print the commands croqc runs"),
                      cl::cat(category));
cl::opt<bool> keepTemps("keep-temps",
                        cl::desc("Keep the generated host code"),
                        cl::cat(category));
} // namespace

/// Reports a driver error (not one of the program's) and fails.
static LogicalResult error(const Twine &message) {
  WithColor::error(errs(), "croqc") << message << "\n";
  return failure();
}

/// The default output for `emit`, in the current directory, named after the
/// input.
static std::string defaultOutput() {
  StringRef stem = sys::path::stem(inputFile);
  switch (emit) {
  case Emit::Library:
    return ("lib" + stem + ".so").str();
  case Emit::Mlir:
    return "-";
  case Emit::Ptx:
    return (stem + ".ptx").str();
  case Emit::Cubin:
    return (stem + ".cubin").str();
  case Emit::Host:
    return (stem + ".cpp").str();
  case Emit::Header:
    return (stem + ".h").str();
  case Emit::Signatures:
    return "-";
  }
  llvm_unreachable("unknown emit kind");
}

/// Writes `text` to `path` ('-' is stdout).
static LogicalResult writeFile(StringRef path, StringRef text) {
  std::string message;
  std::unique_ptr<ToolOutputFile> out = openOutputFile(path, &message);
  if (!out)
    return error("cannot write " + path + ": " + message);
  out->os() << text;
  out->keep();
  return success();
}

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  // Pass names for --mlir-print-ir-after=... and the other debugging flags.
  registerAllPasses();
  croq::registerCroqPasses();
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  registerPassManagerCLOptions();
  registerDefaultTimingManagerCLOptions();
  // --help lists croqc's options and MLIR's debugging ones
  // (--mlir-print-ir-after-all, --mlir-timing), not the hundreds of LLVM
  // backend options linked in, which still work.
  static cl::OptionCategory mlirCategory("MLIR debugging options");
  for (auto &[name, option] : cl::getRegisteredOptions())
    if (name.starts_with("mlir-"))
      option->addCategory(mlirCategory);
  cl::HideUnrelatedOptions({&category, &mlirCategory});
  cl::ParseCommandLineOptions(
      argc, argv,
      "croqc: Croqtile source to a shared library, PTX, a cubin or host code\n");

  DialectRegistry registry;
  croq::registerCroqDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // A compiler's user gets the error at the Croqtile line, not a dump of
  // the IR op behind it: that note only with --mlir-print-op-on-diagnostic.
  if (cl::getRegisteredOptions()["mlir-print-op-on-diagnostic"]
          ->getNumOccurrences() == 0)
    context.printOpOnDiagnostic(false);

  SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  std::string message;
  std::unique_ptr<MemoryBuffer> input = openInputFile(inputFile, &message);
  if (!input)
    return failed(error("cannot read " + inputFile + ": " + message));
  sourceMgr.AddNewSourceBuffer(std::move(input), SMLoc());

  if (maxRegisters && (maxRegisters < 24 || maxRegisters > 256))
    return failed(error("--maxnreg=" + Twine(maxRegisters) +
                        " is outside 24 to 256 registers per thread"));
  OwningOpRef<ModuleOp> module;
  if (StringRef(inputFile).ends_with(".mlir")) {
    if (maxRegisters)
      return failed(error("--maxnreg applies to Croqtile sources; in croq "
                          "IR, give the kernel's croq.parallel "
                          "max_registers"));
    module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  } else {
    // A Croqtile user wrote `tma.copy`, not the croq.tma.copy op: an error
    // a croq op reports about itself (emitOpError's "'croq.x' op " prefix)
    // names the construct as the language spells it ("tma.copy: ..."), at
    // the Croqtile line.
    // Holds the spelled types the diagnostics' arguments refer to.
    auto spelledTypes = std::make_shared<std::deque<std::string>>();
    context.getDiagEngine().registerHandler([spelledTypes](Diagnostic &diag) {
      MutableArrayRef<DiagnosticArgument> args = diag.getArguments();
      if (args.size() >= 3 &&
          args[0].getKind() == DiagnosticArgument::DiagnosticArgumentKind::String &&
          args[0].getAsString() == "'" &&
          args[2].getKind() == DiagnosticArgument::DiagnosticArgumentKind::String &&
          args[2].getAsString() == "' op " &&
          args[1].getKind() == DiagnosticArgument::DiagnosticArgumentKind::String &&
          args[1].getAsString().starts_with("croq.")) {
        StringRef name = args[1].getAsString().drop_front(strlen("croq."));
        static const llvm::StringMap<StringRef> spelled = {
            {"event.trigger", "trigger"}, {"event.wait", "wait"},
            {"event.alloc", "event"},     {"mma", "MMA"},
            {"wait", "wait"},
        };
        if (auto it = spelled.find(name); it != spelled.end())
          name = it->second;
        args[0] = DiagnosticArgument(StringRef());
        args[1] = DiagnosticArgument(name);
        args[2] = DiagnosticArgument(StringRef(": "));
      }
      // Types as the program writes them ('shared f16 [64, 64]', not
      // 'memref<64x64xf16, #gpu.address_space<workgroup>>'), quoted as
      // MLIR quotes a type argument.
      for (DiagnosticArgument &arg : args)
        if (arg.getKind() == DiagnosticArgument::DiagnosticArgumentKind::Type)
          arg = DiagnosticArgument(StringRef(spelledTypes->emplace_back(
              "'" + croq::spellCroqtileType(arg.getAsType()) + "'")));
      return failure(); // printed by the source manager's handler
    });
    croq::CroqtileImportOptions options;
    options.defines.assign(defines.begin(), defines.end());
    options.includeDirs.assign(includeDirs.begin(), includeDirs.end());
    options.maxRegisters = maxRegisters;
    module = croq::importCroqtile(sourceMgr, &context, options);
  }
  if (!module)
    return 1;

  std::string output = outputFile.empty() ? defaultOutput() : outputFile;
  if (emit == Emit::Mlir) {
    std::string text;
    raw_string_ostream os(text);
    module->print(os);
    return failed(writeFile(output, text));
  }

  std::string toolkit = croq::findCudaToolkit(cudaPath);
  bool cubins =
      emit != Emit::Ptx && emit != Emit::Header && emit != Emit::Signatures;
  if (cubins && !sys::fs::exists(toolkit + "/bin/ptxas"))
    return failed(error("ptxas is not in " + toolkit +
                        "/bin, and cubins need it; pass --cuda-path=DIR, "
                        "set CUDA_PATH, or use --emit=ptx"));
  PassManager pm(&context);
  if (failed(applyPassManagerCLOptions(pm)))
    return 1;
  DefaultTimingManager timing;
  applyDefaultTimingManagerCLOptions(timing);
  TimingScope timingScope = timing.getRootScope();
  pm.enableTiming(timingScope);
  croq::CroqToNVVMPipelineOptions pipeline;
  pipeline.chip = arch;
  pipeline.features = features;
  pipeline.toolkit = toolkit;
  pipeline.clang = clangPath;
  pipeline.format = cubins ? "bin" : "isa";
  pipeline.fastMath = fastMath;
  pipeline.mmaDeferMinSlots = mmaDeferMinSlots;
  croq::buildCroqToNVVMPipeline(pm, pipeline);
  if (failed(pm.run(*module)))
    return 1;

  SmallVector<croq::KernelImage> objects = croq::getKernelImages(*module);

  std::string text;
  raw_string_ostream os(text);
  switch (emit) {
  case Emit::Mlir:
    break;
  case Emit::Ptx:
  case Emit::Cubin:
    if (objects.size() > 1)
      return failed(error("expected one kernel image, got " +
                          Twine(objects.size())));
    if (objects.empty())
      return failed(error(inputFile + " has no kernel (no parallel in a "
                          "__co__ function), so there is no " +
                          (emit == Emit::Ptx ? "PTX" : "cubin") + " to write"));
    os << objects.front().image;
    return failed(writeFile(output, text));
  case Emit::Host:
    if (failed(croq::emitHostCode(*module, os)))
      return 1;
    return failed(writeFile(output, text));
  case Emit::Header:
    if (failed(croq::emitHostHeader(*module, os)))
      return 1;
    return failed(writeFile(output, text));
  case Emit::Signatures:
    if (failed(croq::describeEntryPoints(*module, os)))
      return 1;
    return failed(writeFile(output, text));
  case Emit::Library: {
    if (output == "-")
      return failed(error("a shared library cannot go to stdout; give -o"));
    std::string header;
    raw_string_ostream headerOs(header);
    if (failed(croq::emitHostCode(*module, os)) ||
        failed(croq::emitHostHeader(*module, headerOs)))
      return 1;
    std::string headerPath = headerFile;
    if (headerPath.empty()) {
      SmallString<256> path(output);
      sys::path::replace_extension(path, ".h");
      headerPath = std::string(path);
    }
    croq::HostLibraryOptions library;
    library.toolkit = toolkit;
    library.runtimeDir = runtimeDir;
    library.compiler = hostCompiler;
    library.executable = sys::fs::getMainExecutable(
        argv[0], reinterpret_cast<void *>(&defaultOutput));
    library.verbose = verbose;
    library.keepTemps = keepTemps;
    std::string message;
    if (failed(croq::buildHostLibrary(text, output, library, message)))
      return failed(error(message));
    // The header goes beside the library it declares, once that is built.
    if (failed(writeFile(headerPath, header)))
      return 1;
    return 0;
  }
  }
  return 0;
}
