//===- EmbedderTest.cpp - croq-to-gpu patterns from another compiler ------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
// Uses the conversion the way an embedding compiler would: only the public
// headers, its own conversion target, croq's type conversions and patterns.
//
//===----------------------------------------------------------------------===//

#include "Croq/Conversion/CroqToGPU/CroqToGPU.h"
#include "Croq/Conversion/Passes.h"
#include "Croq/InitAllDialects.h"
#include "Croq/Pipelines/Pipelines.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/DialectConversion.h"

#include "gtest/gtest.h"

using namespace mlir;

namespace {

// A block of 64 threads, each storing its index.
constexpr const char *kKernel = R"mlir(
func.func @store_index(%out: memref<64xindex>) {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  croq.parallel (%b) by [%c1] : block {
    croq.parallel (%t) by [%c64] : thread {
      memref.store %t, %out[%t] : memref<64xindex>
    }
  }
  return
}
)mlir";

// An event: its arrival count is croq-assign-arrivals' decision.
constexpr const char *kEvent = R"mlir(
func.func @event(%n: index) {
  croq.parallel (%b) by [%n] : block {
    %e = croq.event.alloc : !croq.event<shared>
    croq.event.trigger %e : !croq.event<shared>
    croq.event.wait %e : !croq.event<shared>
  }
  return
}
)mlir";

/// Converts `module` with the public pieces only; true on success.
bool convert(ModuleOp module) {
  MLIRContext *context = module.getContext();
  croq::LaunchAnalysisPtr analysis = croq::analyzeLaunches(module);
  if (!analysis)
    return false;
  TypeConverter converter;
  croq::populateCroqToGPUTypeConversions(converter);
  RewritePatternSet patterns(context);
  croq::populateCroqToGPUConversionPatterns(converter, patterns, *analysis);
  ConversionTarget target(*context);
  target.addIllegalDialect("croq");
  target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
  return succeeded(applyPartialConversion(module, target, std::move(patterns)));
}

/// Converts `module` with only the level and copy pattern sets.
bool convertLevelsAndCopies(ModuleOp module) {
  MLIRContext *context = module.getContext();
  croq::LaunchAnalysisPtr analysis = croq::analyzeLaunches(module);
  if (!analysis)
    return false;
  TypeConverter converter;
  croq::populateCroqToGPUTypeConversions(converter);
  RewritePatternSet patterns(context);
  croq::populateCroqToGPULevelPatterns(converter, patterns, *analysis);
  croq::populateCroqToGPUCopyPatterns(converter, patterns, *analysis);
  ConversionTarget target(*context);
  target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
  croq::configureCroqToGPUConversionLegality(target, converter);
  return succeeded(applyPartialConversion(module, target, std::move(patterns)));
}

/// The diagnostics of a conversion of `module` that must fail.
std::string conversionErrors(ModuleOp module) {
  std::string message;
  ScopedDiagnosticHandler capture(module.getContext(), [&](Diagnostic &d) {
    message += d.str();
    return success();
  });
  EXPECT_FALSE(convert(module));
  return message;
}

struct Embedder : ::testing::Test {
  Embedder() {
    DialectRegistry registry;
    croq::registerCroqDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }
  MLIRContext context;
};

TEST_F(Embedder, ConvertsAKernelWithThePublicPatterns) {
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(kKernel, &context);
  ASSERT_TRUE(module);
  ASSERT_TRUE(convert(*module));
  int launches = 0;
  module->walk([&](gpu::LaunchOp) { ++launches; });
  EXPECT_EQ(launches, 1);
}

TEST_F(Embedder, APatternSetByItself) {
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(kKernel, &context);
  ASSERT_TRUE(module);
  ASSERT_TRUE(convertLevelsAndCopies(*module));
  bool croqLeft = false;
  module->walk([&](Operation *op) {
    croqLeft |= op->getDialect() &&
                op->getDialect()->getNamespace() == "croq";
  });
  EXPECT_FALSE(croqLeft);
}

TEST_F(Embedder, AnEventWithoutACountIsAnErrorNotAGarbageCount) {
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(kEvent, &context);
  ASSERT_TRUE(module);
  std::string message = conversionErrors(*module);
  EXPECT_NE(message.find("has no arrival count: run croq-assign-arrivals"),
            std::string::npos)
      << message;
}

TEST_F(Embedder, AWaitWithoutAParityNamesThePassThatGivesIt) {
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(kEvent, &context);
  ASSERT_TRUE(module);
  PassManager pm(&context);
  pm.addPass(croq::createCroqAssignArrivalsPass());
  ASSERT_TRUE(succeeded(pm.run(*module)));
  std::string message = conversionErrors(*module);
  EXPECT_NE(message.find("has no phase parity: run croq-assign-phases"),
            std::string::npos)
      << message;
}

TEST_F(Embedder, ThePreparationPipelineThenThePatterns) {
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(kEvent, &context);
  ASSERT_TRUE(module);
  PassManager pm(&context);
  croq::buildCroqPrepareGPUPipeline(pm, croq::CroqPrepareGPUPipelineOptions());
  ASSERT_TRUE(succeeded(pm.run(*module)));
  EXPECT_TRUE(convert(*module));
  int waits = 0;
  module->walk([&](Operation *op) {
    waits += op->getName().getStringRef() == "nvgpu.mbarrier.try_wait.parity";
  });
  EXPECT_EQ(waits, 1);
}

} // namespace
