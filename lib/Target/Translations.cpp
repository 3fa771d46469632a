//===- Translations.cpp - croq-translate registrations --------------------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#include "Croq/InitAllDialects.h"
#include "Croq/Pipelines/Pipelines.h"
#include "Croq/Target/Translations.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/Support/CommandLine.h"

using namespace mlir;

namespace {
struct TranslateOptions {
  llvm::cl::opt<std::string> chip{
      "croq-chip", llvm::cl::desc("Target GPU for croq translations"),
      llvm::cl::init("sm_90a")};
  llvm::cl::opt<std::string> features{
      "croq-features",
      llvm::cl::desc("PTX features for croq translations (e.g. +ptx84)"),
      llvm::cl::init("+ptx84")};
  llvm::cl::opt<std::string> toolkit{
      "croq-cuda-toolkit",
      llvm::cl::desc("CUDA toolkit whose ptxas assembles cubins"),
      llvm::cl::init("/usr/local/cuda")};
  llvm::cl::opt<std::string> clang{
      "croq-clang",
      llvm::cl::desc("clang++ that compiles the C++ device functions kernels "
                     "call"),
      llvm::cl::init(croq::getDefaultClangPath())};
  llvm::cl::opt<unsigned> mmaDeferMinSlots{
      "croq-mma-defer-min-slots",
      llvm::cl::desc("croq translations' croq-pipeline-mma: the fewest ring "
                     "slots with which a wgmma batch stays in flight (croqc's "
                     "--mma-defer-min-slots)"),
      llvm::cl::init(4)};
};
} // namespace

static TranslateOptions &options() {
  static TranslateOptions opts;
  return opts;
}

static void registerDialects(DialectRegistry &registry) {
  croq::registerCroqDialects(registry);
}

/// Runs croq-to-nvvm with `format` on `op`, which must be a module.
static FailureOr<ModuleOp> lower(Operation *op, StringRef format) {
  auto module = dyn_cast<ModuleOp>(op);
  if (!module)
    return op->emitError("expected a builtin.module");
  PassManager pm(op->getContext());
  croq::CroqToNVVMPipelineOptions pipeline;
  pipeline.chip = options().chip;
  pipeline.features = options().features;
  pipeline.toolkit = options().toolkit;
  pipeline.clang = options().clang;
  pipeline.mmaDeferMinSlots = options().mmaDeferMinSlots;
  pipeline.format = format.str();
  croq::buildCroqToNVVMPipeline(pm, pipeline);
  if (failed(pm.run(module)))
    return failure();
  return module;
}

SmallVector<croq::KernelImage> croq::getKernelImages(ModuleOp module) {
  SmallVector<KernelImage> images;
  for (auto binary : module.getOps<gpu::BinaryOp>())
    for (Attribute object : binary.getObjects())
      images.push_back({binary.getSymName(),
                        cast<gpu::ObjectAttr>(object).getObject().getValue()});
  return images;
}

void mlir::croq::registerCroqTranslations() {
  (void)options();
  TranslateFromMLIRRegistration ptx(
      "croq-to-ptx", "lower croq IR and print the PTX of every kernel",
      [](Operation *op, raw_ostream &os) -> LogicalResult {
        FailureOr<ModuleOp> module = lower(op, "isa");
        if (failed(module))
          return failure();
        for (const KernelImage &image : getKernelImages(*module))
          os << "// kernel module @" << image.module << "\n" << image.image;
        return success();
      },
      registerDialects);

  TranslateFromMLIRRegistration cubin(
      "croq-to-cubin",
      "lower croq IR and write the cubin of its kernel (ptxas from the CUDA "
      "toolkit)",
      [](Operation *op, raw_ostream &os) -> LogicalResult {
        FailureOr<ModuleOp> module = lower(op, "bin");
        if (failed(module))
          return failure();
        SmallVector<KernelImage> images = getKernelImages(*module);
        if (images.size() != 1)
          return op->emitError("--croq-to-cubin writes one kernel module, "
                               "this input has ")
                 << images.size()
                 << "; use --croq-to-host to embed them all";
        os << images.front().image;
        return success();
      },
      registerDialects);

  TranslateFromMLIRRegistration host(
      "croq-to-host",
      "lower croq IR and print C++ host entry points with the kernels' "
      "cubins embedded",
      [](Operation *op, raw_ostream &os) -> LogicalResult {
        FailureOr<ModuleOp> module = lower(op, "bin");
        if (failed(module))
          return failure();
        return emitHostCode(*module, os);
      },
      registerDialects);

  TranslateFromMLIRRegistration header(
      "croq-to-host-header",
      "lower croq IR and print the C header of --croq-to-host's entry points",
      [](Operation *op, raw_ostream &os) -> LogicalResult {
        FailureOr<ModuleOp> module = lower(op, "isa");
        if (failed(module))
          return failure();
        return emitHostHeader(*module, os);
      },
      registerDialects);
}
