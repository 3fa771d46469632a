//===- CroqTypesTest.cpp - tests of croq type construction ----------------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#include "Croq/Dialect/Croq/IR/CroqOps.h"
#include "Croq/InitAllDialects.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::croq;

namespace {

class CroqTypesTest : public ::testing::Test {
protected:
  CroqTypesTest() { context.loadDialect<CroqDialect>(); }
  MLIRContext context;
};

TEST_F(CroqTypesTest, EventArrayCountsElements) {
  auto type = EventType::get(&context, MemoryKind::Shared, {2, 3});
  EXPECT_EQ(type.getRank(), 2u);
  EXPECT_EQ(type.getNumElements(), 6);
  EXPECT_EQ(EventType::get(&context, MemoryKind::Shared, {}).getNumElements(),
            1);
}

TEST_F(CroqTypesTest, CheckedConstructionRejectsBadParameters) {
  std::string message;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    message = diag.str();
    return success();
  });
  auto emitErr = [&] { return mlir::emitError(UnknownLoc::get(&context)); };
  EXPECT_FALSE(
      EventType::getChecked(emitErr, &context, MemoryKind::Shared,
                            ArrayRef<int64_t>{0}));
  EXPECT_NE(message.find("must be positive"), std::string::npos);

  Type f16 = Float16Type::get(&context);
  EXPECT_FALSE(FragType::getChecked(emitErr, &context, FragRole::Acc,
                                    ArrayRef<int64_t>{64}, f16));
  EXPECT_NE(message.find("2-D tile"), std::string::npos);

  // An mma future must carry an accumulator, not a memref.
  Type memref = MemRefType::get({16, 16}, f16);
  EXPECT_FALSE(FutureType::getChecked(emitErr, &context, FutureKind::Mma,
                                      true, memref));
  EXPECT_TRUE(FutureType::getChecked(emitErr, &context, FutureKind::Dma,
                                     true, memref));
}

TEST_F(CroqTypesTest, StorageFollowsGpuAddressSpaces) {
  Type f32 = Float32Type::get(&context);
  auto shared = gpu::AddressSpaceAttr::get(&context,
                                           gpu::AddressSpace::Workgroup);
  auto local = gpu::AddressSpaceAttr::get(&context, gpu::AddressSpace::Private);
  EXPECT_EQ(getStorage(MemRefType::get({4}, f32)), Storage::Global);
  EXPECT_EQ(getStorage(MemRefType::get({4}, f32, MemRefLayoutAttrInterface(),
                                       shared)),
            Storage::Shared);
  EXPECT_EQ(getStorage(MemRefType::get({4}, f32, MemRefLayoutAttrInterface(),
                                       local)),
            Storage::Local);
  // Numeric memory spaces are not accepted: they say nothing portable.
  auto numeric = IntegerAttr::get(IntegerType::get(&context, 64), 3);
  EXPECT_EQ(getStorage(MemRefType::get({4}, f32, MemRefLayoutAttrInterface(),
                                       numeric)),
            std::nullopt);
}

} // namespace
