//===- TileAlgebra.h - Croqtile view and bound arithmetic -------*- C++ -*-===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//
//
// The shape algebra behind Croqtile's tile views and bounded integers, on
// static extents. Every function propagates `kDynamic` (an unknown value) and
// returns std::nullopt when the result is undefined: a non-positive divisor,
// an empty tile, or a signed overflow. Op verifiers and the importer use it
// to infer static shapes; lowerings emit the same arithmetic on SSA values.
//
//===----------------------------------------------------------------------===//

#ifndef CROQ_DIALECT_CROQ_UTILS_TILEALGEBRA_H
#define CROQ_DIALECT_CROQ_UTILS_TILEALGEBRA_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <limits>
#include <optional>

namespace mlir::croq::tile {

/// An unknown (runtime) extent, equal to `ShapedType::kDynamic`.
inline constexpr int64_t kDynamic = std::numeric_limits<int64_t>::min();
/// Croqtile's `_` in `chunkat` / `subspan`: keep the whole dimension.
inline constexpr int64_t kWholeDim = -1;

/// Extent of `dim` divided into `bound` tiles (`chunkat`): `dim / bound`,
/// integer division. `bound == kWholeDim` keeps `dim`.
std::optional<int64_t> chunkExtent(int64_t dim, int64_t bound);

/// Tile shape of `chunkat` with one bound (or kWholeDim) per dimension.
std::optional<llvm::SmallVector<int64_t>>
chunkatShape(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> bounds);

/// Tile shape of `subspan(extents)`: an extent of kWholeDim keeps the
/// dimension; an extent larger than a static dimension is undefined.
std::optional<llvm::SmallVector<int64_t>>
subspanShape(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> extents);

/// Element origin of tile `index` along one dimension: `index * step`, where
/// the step defaults to the tile extent (`.at` takes tile indices).
std::optional<int64_t> tileOrigin(int64_t index, int64_t extent,
                                  std::optional<int64_t> step = std::nullopt);

/// Element origins of `subspan(extents)[.step(steps)].at(indices)`.
std::optional<llvm::SmallVector<int64_t>>
subspanOrigin(llvm::ArrayRef<int64_t> indices, llvm::ArrayRef<int64_t> extents,
              llvm::ArrayRef<int64_t> steps = {});

/// Origin of a view taken from a view: origins add up per dimension.
std::optional<llvm::SmallVector<int64_t>>
composeOrigins(llvm::ArrayRef<int64_t> outer, llvm::ArrayRef<int64_t> inner);

/// A Croqtile bounded integer: a current value and its upper bound `#x`.
struct BoundedInt {
  int64_t value;
  int64_t bound;
  bool operator==(const BoundedInt &other) const {
    return value == other.value && bound == other.bound;
  }
};

/// `a # b`: value `a * #b + b`, bound `#a * #b`.
std::optional<BoundedInt> compose(BoundedInt a, BoundedInt b);

/// `cdiv(a, b)`: `(a + b - 1) / b` for positive `b`.
std::optional<int64_t> ceilDiv(int64_t a, int64_t b);

} // namespace mlir::croq::tile

#endif // CROQ_DIALECT_CROQ_UTILS_TILEALGEBRA_H
