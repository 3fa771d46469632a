//===- TileAlgebraTest.cpp - tests of the view and bound algebra ----------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#include "Croq/Dialect/Croq/Utils/TileAlgebra.h"

#include "gtest/gtest.h"

using namespace mlir::croq::tile;
using llvm::SmallVector;

namespace {

TEST(ChunkAt, ExtentIsIntegerDivision) {
  EXPECT_EQ(chunkExtent(128, 8), 16);
  // Croqtile divides without rounding up: 100 / 8 = 12, the tail is dropped.
  EXPECT_EQ(chunkExtent(100, 8), 12);
  EXPECT_EQ(chunkExtent(64, 1), 64);
}

TEST(ChunkAt, WholeDimensionKeepsExtent) {
  EXPECT_EQ(chunkExtent(96, kWholeDim), 96);
  EXPECT_EQ(chunkExtent(kDynamic, kWholeDim), kDynamic);
}

TEST(ChunkAt, UnknownDimOrBoundIsDynamic) {
  EXPECT_EQ(chunkExtent(kDynamic, 4), kDynamic);
  EXPECT_EQ(chunkExtent(256, kDynamic), kDynamic);
}

TEST(ChunkAt, InvalidBoundsHaveNoExtent) {
  EXPECT_EQ(chunkExtent(128, 0), std::nullopt);
  EXPECT_EQ(chunkExtent(128, -3), std::nullopt);
  // More chunks than elements would make an empty tile.
  EXPECT_EQ(chunkExtent(4, 8), std::nullopt);
}

TEST(ChunkAt, ShapeOfMatmulOperand) {
  // rhs.chunkat(block_n, iv_k) on [N, K] = [256, 512] with #block_n = 4 and
  // #iv_k = 4 is a [64, 128] tile.
  auto shape = chunkatShape({256, 512}, {4, 4});
  ASSERT_TRUE(shape);
  EXPECT_EQ(*shape, (SmallVector<int64_t>{64, 128}));
  // lhs_load_s.chunkat(_, iv_warp) on [64, 128] with #iv_warp = 8.
  auto slice = chunkatShape({64, 128}, {kWholeDim, 8});
  ASSERT_TRUE(slice);
  EXPECT_EQ(*slice, (SmallVector<int64_t>{64, 16}));
}

TEST(ChunkAt, ShapeNeedsOneEntryPerDimension) {
  EXPECT_EQ(chunkatShape({64, 64}, {2}), std::nullopt);
}

TEST(Subspan, ShapeAndWholeDimension) {
  auto shape = subspanShape({kDynamic, kDynamic}, {64, 128});
  ASSERT_TRUE(shape);
  EXPECT_EQ(*shape, (SmallVector<int64_t>{64, 128}));
  auto whole = subspanShape({32, 48}, {kWholeDim, 16});
  ASSERT_TRUE(whole);
  EXPECT_EQ(*whole, (SmallVector<int64_t>{32, 16}));
  EXPECT_EQ(subspanShape({32, 48}, {64, 16}), std::nullopt);
  EXPECT_EQ(subspanShape({32, 48}, {0, 16}), std::nullopt);
}

TEST(Subspan, AtTakesTileIndices) {
  // lhs.subspan(64, 128).at(3, 2): the origin is (3 * 64, 2 * 128).
  auto origin = subspanOrigin({3, 2}, {64, 128});
  ASSERT_TRUE(origin);
  EXPECT_EQ(*origin, (SmallVector<int64_t>{192, 256}));
}

TEST(Subspan, StepReplacesExtentAsStride) {
  // subspan(64, 64).step(32, 1).at(3, 5): origin (3 * 32, 5 * 1).
  auto origin = subspanOrigin({3, 5}, {64, 64}, {32, 1});
  ASSERT_TRUE(origin);
  EXPECT_EQ(*origin, (SmallVector<int64_t>{96, 5}));
}

TEST(Subspan, DynamicIndexGivesDynamicOrigin) {
  auto origin = subspanOrigin({kDynamic, 1}, {64, 16});
  ASSERT_TRUE(origin);
  EXPECT_EQ(*origin, (SmallVector<int64_t>{kDynamic, 16}));
}

TEST(Subspan, ComposedViewsAddOrigins) {
  // s.subspan(128, 64).at(st, 0).subspan(64, 64).at(w, 0) with st = 1, w = 1
  // has origin (st * 128 + w * 64, 0) = (192, 0).
  auto outer = subspanOrigin({1, 0}, {128, 64});
  auto inner = subspanOrigin({1, 0}, {64, 64});
  ASSERT_TRUE(outer && inner);
  auto origin = composeOrigins(*outer, *inner);
  ASSERT_TRUE(origin);
  EXPECT_EQ(*origin, (SmallVector<int64_t>{192, 0}));
}

TEST(Subspan, NegativeIndexHasNoOrigin) {
  EXPECT_EQ(tileOrigin(-1, 64), std::nullopt);
}

TEST(Compose, ValueAndBound) {
  // tile_iter # block_id with #block_id = NUM_SMS = 132: tile_iter = 2,
  // block_id = 5 gives 2 * 132 + 5; the bound is #tile_iter * 132.
  auto composed = compose({2, 10}, {5, 132});
  ASSERT_TRUE(composed);
  EXPECT_EQ(composed->value, 2 * 132 + 5);
  EXPECT_EQ(composed->bound, 10 * 132);
}

TEST(Compose, RowMajorLinearisation) {
  // px # qx with #qx = 16: px = 3, qx = 7 is row 55 of 8 * 16.
  auto composed = compose({3, 8}, {7, 16});
  ASSERT_TRUE(composed);
  EXPECT_EQ(*composed, (BoundedInt{55, 128}));
}

TEST(Compose, UnknownValuesStayUnknown) {
  auto composed = compose({kDynamic, 4}, {1, 8});
  ASSERT_TRUE(composed);
  EXPECT_EQ(composed->value, kDynamic);
  EXPECT_EQ(composed->bound, 32);
  auto dynamicBound = compose({1, kDynamic}, {2, 8});
  ASSERT_TRUE(dynamicBound);
  EXPECT_EQ(dynamicBound->bound, kDynamic);
}

TEST(Compose, RejectsNonPositiveBoundsAndOverflow) {
  EXPECT_EQ(compose({1, 0}, {0, 4}), std::nullopt);
  EXPECT_EQ(compose({1, 4}, {0, -2}), std::nullopt);
  int64_t big = int64_t(1) << 40;
  EXPECT_EQ(compose({big, big}, {0, big}), std::nullopt);
}

TEST(CeilDiv, RoundsUp) {
  EXPECT_EQ(ceilDiv(100, 64), 2);
  EXPECT_EQ(ceilDiv(128, 64), 2);
  EXPECT_EQ(ceilDiv(0, 64), 0);
  EXPECT_EQ(ceilDiv(kDynamic, 64), kDynamic);
  EXPECT_EQ(ceilDiv(10, 0), std::nullopt);
}

} // namespace
