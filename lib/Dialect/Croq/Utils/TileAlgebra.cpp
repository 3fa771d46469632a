//===- TileAlgebra.cpp - Croqtile view and bound arithmetic ---------------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#include "Croq/Dialect/Croq/Utils/TileAlgebra.h"

#include "mlir/IR/BuiltinTypeInterfaces.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir::croq::tile;
using llvm::ArrayRef;
using llvm::SmallVector;

static_assert(kDynamic == mlir::ShapedType::kDynamic,
              "tile::kDynamic must match ShapedType::kDynamic");

static std::optional<int64_t> mul(int64_t a, int64_t b) {
  if (a == kDynamic || b == kDynamic)
    return kDynamic;
  int64_t r;
  if (llvm::MulOverflow(a, b, r) || r == kDynamic)
    return std::nullopt;
  return r;
}

static std::optional<int64_t> add(int64_t a, int64_t b) {
  if (a == kDynamic || b == kDynamic)
    return kDynamic;
  int64_t r;
  if (llvm::AddOverflow(a, b, r) || r == kDynamic)
    return std::nullopt;
  return r;
}

std::optional<int64_t> mlir::croq::tile::chunkExtent(int64_t dim,
                                                     int64_t bound) {
  if (bound == kWholeDim)
    return dim;
  if (bound != kDynamic && bound <= 0)
    return std::nullopt;
  if (dim != kDynamic && dim < 0)
    return std::nullopt;
  if (dim == kDynamic || bound == kDynamic)
    return kDynamic;
  if (dim / bound == 0)
    return std::nullopt;
  return dim / bound;
}

std::optional<SmallVector<int64_t>>
mlir::croq::tile::chunkatShape(ArrayRef<int64_t> shape,
                               ArrayRef<int64_t> bounds) {
  if (shape.size() != bounds.size())
    return std::nullopt;
  SmallVector<int64_t> result;
  for (auto [dim, bound] : llvm::zip_equal(shape, bounds)) {
    std::optional<int64_t> extent = chunkExtent(dim, bound);
    if (!extent)
      return std::nullopt;
    result.push_back(*extent);
  }
  return result;
}

std::optional<SmallVector<int64_t>>
mlir::croq::tile::subspanShape(ArrayRef<int64_t> shape,
                               ArrayRef<int64_t> extents) {
  if (shape.size() != extents.size())
    return std::nullopt;
  SmallVector<int64_t> result;
  for (auto [dim, extent] : llvm::zip_equal(shape, extents)) {
    if (extent == kWholeDim) {
      result.push_back(dim);
      continue;
    }
    if (extent != kDynamic &&
        (extent <= 0 || (dim != kDynamic && extent > dim)))
      return std::nullopt;
    result.push_back(extent);
  }
  return result;
}

std::optional<int64_t>
mlir::croq::tile::tileOrigin(int64_t index, int64_t extent,
                             std::optional<int64_t> step) {
  int64_t stride = step ? *step : extent;
  if (index != kDynamic && index < 0)
    return std::nullopt;
  if (stride != kDynamic && stride <= 0)
    return std::nullopt;
  return mul(index, stride);
}

std::optional<SmallVector<int64_t>>
mlir::croq::tile::subspanOrigin(ArrayRef<int64_t> indices,
                                ArrayRef<int64_t> extents,
                                ArrayRef<int64_t> steps) {
  if (indices.size() != extents.size() ||
      (!steps.empty() && steps.size() != extents.size()))
    return std::nullopt;
  SmallVector<int64_t> result;
  for (auto [i, index] : llvm::enumerate(indices)) {
    std::optional<int64_t> step;
    if (!steps.empty())
      step = steps[i];
    std::optional<int64_t> origin = tileOrigin(index, extents[i], step);
    if (!origin)
      return std::nullopt;
    result.push_back(*origin);
  }
  return result;
}

std::optional<SmallVector<int64_t>>
mlir::croq::tile::composeOrigins(ArrayRef<int64_t> outer,
                                 ArrayRef<int64_t> inner) {
  if (outer.size() != inner.size())
    return std::nullopt;
  SmallVector<int64_t> result;
  for (auto [o, i] : llvm::zip_equal(outer, inner)) {
    std::optional<int64_t> sum = add(o, i);
    if (!sum)
      return std::nullopt;
    result.push_back(*sum);
  }
  return result;
}

std::optional<BoundedInt> mlir::croq::tile::compose(BoundedInt a,
                                                    BoundedInt b) {
  if ((a.bound != kDynamic && a.bound <= 0) ||
      (b.bound != kDynamic && b.bound <= 0))
    return std::nullopt;
  std::optional<int64_t> scaled = mul(a.value, b.bound);
  if (!scaled)
    return std::nullopt;
  std::optional<int64_t> value = add(*scaled, b.value);
  std::optional<int64_t> bound = mul(a.bound, b.bound);
  if (!value || !bound)
    return std::nullopt;
  return BoundedInt{*value, *bound};
}

std::optional<int64_t> mlir::croq::tile::ceilDiv(int64_t a, int64_t b) {
  if (b != kDynamic && b <= 0)
    return std::nullopt;
  if (a == kDynamic || b == kDynamic)
    return kDynamic;
  if (a < 0)
    return std::nullopt;
  return a / b + (a % b != 0);
}
