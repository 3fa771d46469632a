//===- UniformityTest.cpp - the divergence lattice ------------------------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#include "Croq/Analysis/DivergenceAnalysis.h"

#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

using namespace mlir::croq;

namespace {

TEST(Uniformity, LevelsAreOrderedNarrowestFirst) {
  EXPECT_LT(UniformScope::Thread, UniformScope::Warp);
  EXPECT_LT(UniformScope::Warp, UniformScope::Warpgroup);
  EXPECT_LT(UniformScope::Warpgroup, UniformScope::Block);
  EXPECT_LT(UniformScope::Block, UniformScope::Grid);
}

TEST(Uniformity, JoinTakesTheNarrowerScope) {
  Uniformity warp(UniformScope::Warp), block(UniformScope::Block);
  EXPECT_EQ(Uniformity::join(warp, block), warp);
  EXPECT_EQ(Uniformity::join(block, warp), warp);
  EXPECT_EQ(Uniformity::join(block, block), block);
  Uniformity thread(UniformScope::Thread);
  EXPECT_EQ(Uniformity::join(thread, Uniformity(UniformScope::Grid)), thread);
}

TEST(Uniformity, UninitializedIsTheIdentity) {
  Uniformity unknown;
  EXPECT_TRUE(unknown.isUninitialized());
  Uniformity warpgroup(UniformScope::Warpgroup);
  EXPECT_EQ(Uniformity::join(unknown, warpgroup), warpgroup);
  EXPECT_EQ(Uniformity::join(warpgroup, unknown), warpgroup);
  EXPECT_TRUE(Uniformity::join(unknown, unknown).isUninitialized());
}

TEST(Uniformity, ThreadIndexMarkNeedsBothSides) {
  Uniformity tid(UniformScope::Thread, /*tidLike=*/true);
  Uniformity other(UniformScope::Thread);
  EXPECT_TRUE(Uniformity::join(tid, tid).isTidLike());
  EXPECT_FALSE(Uniformity::join(tid, other).isTidLike());
  // Joining with a uniform value keeps the scope narrow but not the mark.
  EXPECT_FALSE(Uniformity::join(tid, Uniformity(UniformScope::Grid)).isTidLike());
}

TEST(Uniformity, JoinIsCommutativeAssociativeIdempotent) {
  std::vector<Uniformity> values{Uniformity()};
  for (UniformScope s : {UniformScope::Thread, UniformScope::Warp,
                         UniformScope::Warpgroup, UniformScope::Block,
                         UniformScope::Grid})
    for (bool tid : {false, true})
      values.push_back(Uniformity(s, tid));
  for (const Uniformity &a : values) {
    EXPECT_EQ(Uniformity::join(a, a), a);
    for (const Uniformity &b : values) {
      EXPECT_EQ(Uniformity::join(a, b), Uniformity::join(b, a));
      for (const Uniformity &c : values)
        EXPECT_EQ(Uniformity::join(Uniformity::join(a, b), c),
                  Uniformity::join(a, Uniformity::join(b, c)));
    }
  }
}

TEST(Uniformity, PrintsLevels) {
  std::string text;
  llvm::raw_string_ostream os(text);
  Uniformity(UniformScope::Warpgroup).print(os);
  EXPECT_EQ(text, "warpgroup");
  EXPECT_EQ(stringifyUniformScope(UniformScope::Grid), "grid");
}

} // namespace
