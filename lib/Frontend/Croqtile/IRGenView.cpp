//===- IRGenView.cpp - Croqtile views to IR ---------------------------------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#include "IRGenImpl.h"
#include "Croq/Analysis/Roles.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"

using namespace mlir;
using namespace mlir::croq;
using namespace mlir::croq::croqtile;

/// Type of a tile of `source` with `shape` (strides kept, offset dynamic).
static MemRefType tileType(MemRefType source, ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(source.getStridesAndOffset(strides, offset)))
    return {};
  auto layout = StridedLayoutAttr::get(source.getContext(),
                                       ShapedType::kDynamic, strides);
  return MemRefType::get(shape, source.getElementType(), layout,
                         source.getMemorySpace());
}

Value IRGen::chunkAsSubspan(ChunkAtOp chunk, ArrayRef<int64_t> extents,
                            Location l) {
  auto sourceType = cast<MemRefType>(chunk.getSource().getType());
  SmallVector<int64_t> statics;
  SmallVector<Value> indices;
  unsigned next = 0;
  for (auto [d, bound] : llvm::enumerate(chunk.getStaticBounds())) {
    if (bound == tile::kWholeDim) {
      statics.push_back(tile::kWholeDim);
      indices.push_back(constIndex(0, l));
      continue;
    }
    statics.push_back(extents[d]);
    indices.push_back(chunk.getIndices()[next++]);
  }
  std::optional<SmallVector<int64_t>> shape =
      tile::subspanShape(sourceType.getShape(), statics);
  MemRefType result = shape ? tileType(sourceType, *shape) : MemRefType();
  if (!result)
    return chunk.getResult();
  return SubspanOp::create(builder, l, result, chunk.getSource(), ValueRange{},
                           builder.getDenseI64ArrayAttr(statics), indices,
                           ValueRange{})
      .getResult();
}

FailureOr<Value> IRGen::view(const Expr &e) {
  Location l = loc(e.loc);
  if (e.kind == Expr::Kind::Name) {
    Symbol *s = lookup(e.name);
    if (!s)
      return fail(e.loc, "use of undeclared name '" + e.name + "'",
                  "declare the tensor or name the future first");
    if (s->kind == Symbol::Kind::Tensor)
      return s->value;
    if (s->kind == Symbol::Kind::Future) {
      auto type = cast<FutureType>(s->value.getType());
      return FutureDataOp::create(builder, l, type.getDataType(), s->value)
          .getResult();
    }
    return fail(e.loc, "'" + e.name + "' is not a tensor or a future");
  }
  if (e.kind == Expr::Kind::Index) {
    FailureOr<Value> base = view(*e.base);
    if (failed(base))
      return failure();
    // buffers[i]: one buffer of an array of buffers.
    auto type = cast<MemRefType>(base->getType());
    if (static_cast<int64_t>(e.args.size()) >= type.getRank())
      return fail(e.loc, "[...] selects a buffer of an array of buffers; "
                         "use .at(...) for elements");
    SmallVector<OpFoldResult> offsets, sizes, strides;
    for (auto [d, arg] : llvm::enumerate(e.args)) {
      FailureOr<Value> i = indexExpr(*arg);
      std::string what = e.args.size() > 1
                             ? ("buffer index " + Twine(d)).str()
                             : "this buffer index";
      if (failed(i) ||
          failed(checkBufferIndex(arg->loc, *i, type.getDimSize(d), what)))
        return failure();
      offsets.push_back(*i);
      sizes.push_back(builder.getIndexAttr(1));
      strides.push_back(builder.getIndexAttr(1));
    }
    SmallVector<int64_t> shape;
    for (int64_t d = e.args.size(); d < type.getRank(); ++d) {
      offsets.push_back(builder.getIndexAttr(0));
      // A run-time extent (`u8 [1, N] bufs[2]`) is the buffer's own.
      sizes.push_back(type.isDynamicDim(d)
                          ? OpFoldResult(viewExtent(*base, d, l))
                          : OpFoldResult(builder.getIndexAttr(type.getDimSize(d))));
      strides.push_back(builder.getIndexAttr(1));
      shape.push_back(type.getDimSize(d));
    }
    auto resultType = cast<MemRefType>(memref::SubViewOp::inferRankReducedResultType(
        shape, type, offsets, sizes, strides));
    // Keep the offset dynamic, as croq views do.
    MemRefType tile = tileType(resultType, shape);
    return memref::SubViewOp::create(builder, l, tile ? tile : resultType, *base,
                                     offsets, sizes, strides)
        .getResult();
  }
  if (e.kind == Expr::Kind::Member) {
    if (e.name == "data")
      return view(*e.base);
    return viewMember(e);
  }
  return fail(e.loc, "expected a tensor, a buffer or a view");
}

/// Extent `d` of a view, from its source's extent where the view is a
/// chunkat (the extent over the chunk count), so that it does not depend on
/// the tile's indices.
Value IRGen::viewExtent(Value view, int64_t d, Location l, bool ofWindows) {
  auto type = cast<MemRefType>(view.getType());
  if (!type.isDynamicDim(d))
    return arith::ConstantIndexOp::create(builder, l, type.getDimSize(d));
  if (auto chunk = view.getDefiningOp<ChunkAtOp>()) {
    Value whole = viewExtent(chunk.getSource(), d, l, ofWindows);
    ArrayRef<int64_t> statics = chunk.getStaticBounds();
    if (statics[d] == tile::kWholeDim)
      return whole;
    Value count;
    if (statics[d] == ShapedType::kDynamic) {
      unsigned i = llvm::count(statics.take_front(d), ShapedType::kDynamic);
      count = chunk.getBounds()[i];
    } else {
      count = arith::ConstantIndexOp::create(builder, l, statics[d]);
    }
    return arith::DivSIOp::create(builder, l, whole, count);
  }
  // A subspan's tile has its extents wherever it is (a tail tile is clipped
  // by the copies that read it, not by its shape).
  if (auto subspan = view.getDefiningOp<SubspanOp>()) {
    ArrayRef<int64_t> statics = subspan.getStaticExtents();
    if (d < static_cast<int64_t>(statics.size()) &&
        statics[d] == ShapedType::kDynamic) {
      unsigned i = llvm::count(statics.take_front(d), ShapedType::kDynamic);
      return subspan.getExtents()[i];
    }
    // `_` keeps the source's extent.
    if (d < static_cast<int64_t>(statics.size()) &&
        statics[d] == tile::kWholeDim)
      return viewExtent(subspan.getSource(), d, l, ofWindows);
  }
  // A future's data is the buffer its copy wrote: an allocation's extents.
  if (auto data = view.getDefiningOp<FutureDataOp>())
    if (auto copy = data.getFuture().getDefiningOp<DmaCopyOp>())
      return viewExtent(copy.getTarget(), d, l, ofWindows);
  if (auto alloc = view.getDefiningOp<memref::AllocOp>()) {
    unsigned i = llvm::count(type.getShape().take_front(d), ShapedType::kDynamic);
    return alloc.getDynamicSizes()[i];
  }
  // `span_as`, `view(...).from(...)` and subscripts of buffer arrays: the
  // extent the view was made with, not a dim of the view, which would tie
  // it to the kernel-side origin (and keep it from a host check).
  if (!ofWindows)
    return memref::DimOp::create(builder, l, view, d);
  if (auto reshape = view.getDefiningOp<memref::ReinterpretCastOp>())
    return getValueOrCreateConstantIndexOp(builder, l,
                                           reshape.getMixedSizes()[d]);
  if (auto sub = view.getDefiningOp<memref::SubViewOp>()) {
    llvm::SmallBitVector dropped = sub.getDroppedDims();
    SmallVector<OpFoldResult> sizes = sub.getMixedSizes();
    int64_t kept = -1;
    for (auto [i, size] : llvm::enumerate(sizes))
      if (!dropped.test(i) && ++kept == d)
        return getValueOrCreateConstantIndexOp(builder, l, size);
  }
  return memref::DimOp::create(builder, l, view, d);
}

bool IRGen::checkOnHost(
    Location l, ArrayRef<Value> values,
    function_ref<Value(OpBuilder &, ArrayRef<Value>)> make,
    const Twine &message) {
  Operation *kernel = enclosingKernel();
  // The host code of the function: the block the kernels are launched from.
  Operation *here = kernel;
  Block *hostBlock = kernel ? kernel->getBlock() : builder.getInsertionBlock();
  // Checked before the first launch of the host block (a launch, or host
  // control flow holding one) when its values can be computed there, else
  // before this kernel (or here, in host code). A check is not hoisted out
  // of host control flow: it holds only where that code runs.
  auto tryAt = [&](OpBuilder::InsertPoint at, Operation *anchor) -> bool {
    OpBuilder host(builder.getContext());
    host.restoreInsertionPoint(at);
    IRMapping mapping;
    // Whether `v` can be used where the check goes, without a copy.
    auto available = [&](Value v) {
      if (!anchor)
        return !kernel || !kernel->isAncestor(v.getParentRegion()->getParentOp());
      if (auto arg = dyn_cast<BlockArgument>(v))
        return arg.getOwner() == hostBlock;
      Operation *def = v.getDefiningOp();
      return def->getBlock() == hostBlock && def->isBeforeInBlock(anchor);
    };
    std::function<Value(Value)> hoist = [&](Value v) -> Value {
      if (Value mapped = mapping.lookupOrNull(v))
        return mapped;
      if (available(v))
        return v;
      Operation *def = v.getDefiningOp();
      // A block's rank in its cluster exists only in the kernel.
      if (!def || def->getNumRegions() || isa<ClusterRankOp>(def) ||
          !(isMemoryEffectFree(def) || isa<memref::DimOp>(def)))
        return Value();
      for (Value operand : def->getOperands())
        if (!hoist(operand))
          return Value();
      for (Value operand : def->getOperands())
        mapping.map(operand, hoist(operand));
      Operation *clone = host.clone(*def, mapping);
      return clone->getResult(cast<OpResult>(v).getResultNumber());
    };
    SmallVector<Value> hosted;
    for (Value v : values) {
      Value h = hoist(v);
      if (!h)
        return false;
      hosted.push_back(h);
    }
    Value ok = make(host, hosted);
    cf::AssertOp::create(host, l, ok, message.str());
    return true;
  };
  // The first kernel launched before this point.
  Operation *first = nullptr;
  for (Operation &op : *hostBlock) {
    if (&op == here || (!here && builder.getInsertionPoint() != hostBlock->end() &&
                        &op == &*builder.getInsertionPoint()))
      break;
    // A launch, or host control flow around one.
    if (isa<ParallelOp>(op) ||
        op.walk([](ParallelOp) { return WalkResult::interrupt(); })
            .wasInterrupted()) {
      first = &op;
      break;
    }
  }
  if (first && tryAt(OpBuilder::InsertPoint(hostBlock, first->getIterator()), first))
    return true;
  if (kernel)
    return tryAt(OpBuilder::InsertPoint(hostBlock, kernel->getIterator()), nullptr);
  return tryAt(builder.saveInsertionPoint(), nullptr);
}

bool mlir::croq::croqtile::isContiguous(MemRefType type) {
  if (type.getLayout().isIdentity())
    return true;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)))
    return false;
  int64_t expected = 1;
  for (int64_t d = type.getRank() - 1; d >= 0; --d) {
    if (type.getDimSize(d) == 1)
      continue; // a unit dimension's stride does not matter
    if (ShapedType::isDynamic(strides[d]) || strides[d] != expected)
      return false;
    if (d > 0 && type.isDynamicDim(d))
      return false;
    expected *= type.getDimSize(d);
  }
  return true;
}

/// Whether `a` and `b` are the same expression, written the same way.
static bool sameExpr(const Expr &a, const Expr &b) {
  if (a.kind != b.kind || a.name != b.name || a.intValue != b.intValue ||
      a.floatValue != b.floatValue || a.hasArgs != b.hasArgs ||
      a.args.size() != b.args.size() || !a.base != !b.base ||
      a.typeArgs != b.typeArgs)
    return false;
  if (a.base && !sameExpr(*a.base, *b.base))
    return false;
  for (auto [x, y] : llvm::zip(a.args, b.args))
    if (!x != !y || (x && !sameExpr(*x, *y)))
      return false;
  return true;
}

FailureOr<Value> IRGen::spanAs(const Expr &e) {
  Location l = loc(e.loc);
  FailureOr<Value> source = view(*e.base);
  if (failed(source))
    return failure();
  auto type = cast<MemRefType>(source->getType());
  if (!isContiguous(type))
    return fail(e.loc, "span_as gives a view another shape, but this view "
                       "is not contiguous in memory",
                "copy the view into a buffer and take span_as of the buffer");
  FailureOr<SmallVector<EVal>> extents = spliceList(e.args);
  if (failed(extents))
    return failure();
  SmallVector<OpFoldResult> sizes, strides;
  SmallVector<int64_t> shape;
  for (const EVal &x : *extents) {
    std::optional<int64_t> c = asConstant(x.value);
    if (c && *c <= 0)
      return fail(e.loc, "span_as extents must be positive, got " + Twine(*c));
    shape.push_back(c.value_or(ShapedType::kDynamic));
    sizes.push_back(c ? OpFoldResult(builder.getIndexAttr(*c)) : OpFoldResult(x.value));
  }
  // Row-major strides of the new shape.
  Value stride = constIndex(1, l);
  strides.resize(shape.size());
  SmallVector<int64_t> staticStrides(shape.size());
  bool dynamicStride = false;
  for (int64_t d = shape.size() - 1; d >= 0; --d) {
    std::optional<int64_t> c = asConstant(stride);
    strides[d] = c ? OpFoldResult(builder.getIndexAttr(*c)) : OpFoldResult(stride);
    staticStrides[d] = c && !dynamicStride ? *c : ShapedType::kDynamic;
    dynamicStride |= !c;
    stride = builder.createOrFold<arith::MulIOp>(l, stride, (*extents)[d].value);
  }
  // The element counts must agree: known now, or checked before the launch.
  Value count = constIndex(1, l);
  for (int64_t d = 0; d < type.getRank(); ++d)
    count = builder.createOrFold<arith::MulIOp>(l, count, viewExtent(*source, d, l));
  std::optional<int64_t> have = asConstant(count), want = asConstant(stride);
  // `x.span_as(|x.span|)` (or `|x|`) flattens x: the counts agree by
  // construction.
  bool flattens = false;
  // `span_as([|x.span|])`, chapter 7's bracketed spelling, is the same.
  const Expr *only = e.args.size() == 1 ? e.args[0].get() : nullptr;
  if (only && only->kind == Expr::Kind::List && only->args.size() == 1)
    only = only->args[0].get();
  if (only && only->kind == Expr::Kind::Count) {
    const Expr &inner = *only->args[0];
    const Expr *counted =
        inner.kind == Expr::Kind::Member && inner.name == "span" &&
                !inner.hasArgs
            ? inner.base.get()
            : &inner;
    flattens = counted && sameExpr(*counted, *e.base);
  }
  // Or the new extents multiply to the same value the source's do
  // (`span_as([|x.span|])`, `span_as(M * 64)` of an [M, 64] view).
  flattens |= computesSameValue(count, stride);
  if (flattens)
    have = want = 0;
  if (have && want && *have != *want)
    return fail(e.loc, "span_as makes a view of " + Twine(*want) +
                           " elements from one of " + Twine(*have));
  if ((!have || !want) &&
      !checkOnHost(
          l, {count, stride},
          [&](OpBuilder &b, ArrayRef<Value> v) -> Value {
            return arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, v[0], v[1]);
          },
          "the span_as at line " + Twine(sourceMgr.getLineAndColumn(e.loc).first) +
              " changes the number of elements"))
    return fail(e.loc, "cannot check before the launch that this span_as "
                       "keeps the number of elements",
                "compute its extents from the function's parameters and "
                "constants");
  auto layout = StridedLayoutAttr::get(context, ShapedType::kDynamic, staticStrides);
  auto result = MemRefType::get(shape, type.getElementType(), layout,
                                type.getMemorySpace());
  auto meta = memref::ExtractStridedMetadataOp::create(builder, l, *source);
  return memref::ReinterpretCastOp::create(builder, l, result, *source,
                                           OpFoldResult(meta.getOffset()), sizes,
                                           strides)
      .getResult();
}

FailureOr<Value> IRGen::windowView(const Expr &from) {
  // x.view(sizes).from(origin): the window of x at `origin` with x's own
  // steps. x.view(sizes : strides).from(origin): the window's elements are
  // `strides` elements apart in memory (memory-layout strides, not steps of
  // x's indices), starting at x's element `origin`.
  Location l = loc(from.loc);
  const Expr &viewExpr = *from.base;
  FailureOr<Value> source = view(*viewExpr.base);
  if (failed(source))
    return failure();
  auto type = cast<MemRefType>(source->getType());
  int64_t rank = type.getRank();
  size_t nSizes = viewExpr.intValue ? viewExpr.intValue : viewExpr.args.size();
  ArrayRef<ExprPtr> sizeArgs(viewExpr.args.data(), nSizes);
  ArrayRef<ExprPtr> strideArgs(viewExpr.args.data() + nSizes,
                               viewExpr.args.size() - nSizes);
  // `_` as an extent keeps the rest of its dimension, from the origin on.
  SmallVector<EVal> sizes;
  SmallVector<size_t> rest;
  for (const ExprPtr &arg : sizeArgs) {
    if (arg->kind == Expr::Kind::Name && arg->name == "_") {
      if (!strideArgs.empty())
        return fail(arg->loc, "'_' keeps the rest of a dimension, which a "
                              "view with memory strides does not have",
                    "write the extent");
      rest.push_back(sizes.size());
      sizes.push_back(EVal{});
      continue;
    }
    FailureOr<SmallVector<EVal>> one = spliceList(ArrayRef<ExprPtr>(arg));
    if (failed(one))
      return failure();
    sizes.append(one->begin(), one->end());
  }
  FailureOr<SmallVector<EVal>> steps = spliceList(strideArgs);
  FailureOr<SmallVector<EVal>> origin = spliceList(from.args);
  if (failed(steps) || failed(origin))
    return failure();
  for (size_t d : rest) {
    if (d >= origin->size())
      break; // the count check below reports it
    Value extent = builder.createOrFold<memref::DimOp>(l, *source, d);
    sizes[d].value = builder.createOrFold<arith::SubIOp>(
        l, extent, (*origin)[d].value);
  }
  if (static_cast<int64_t>(origin->size()) != rank ||
      (steps->empty() && static_cast<int64_t>(sizes.size()) != rank) ||
      (!steps->empty() && steps->size() != sizes.size()))
    return fail(from.loc, ".view(...).from(...) takes one origin per dimension "
                          "of the source (" + Twine(rank) + " here), and as "
                          "many strides as extents");
  auto fold = [&](Value v) -> OpFoldResult {
    if (std::optional<int64_t> c = asConstant(v))
      return builder.getIndexAttr(*c);
    return v;
  };
  SmallVector<int64_t> shape;
  for (auto [d, size] : llvm::enumerate(sizes)) {
    std::optional<int64_t> cs = asConstant(size.value);
    if (cs && *cs <= 0)
      return fail(from.loc, "extent " + Twine(d) + " of this view must be positive");
    shape.push_back(cs.value_or(ShapedType::kDynamic));
  }
  for (auto [d, start] : llvm::enumerate(*origin))
    if (std::optional<int64_t> c = asConstant(start.value); c && *c < 0)
      return fail(from.loc, "origin " + Twine(d) + " of this view is negative");
  if (steps->empty()) {
    // Unit steps of the source's indices: a subview.
    SmallVector<OpFoldResult> offsets, sizesOf, stridesOf;
    for (int64_t d = 0; d < rank; ++d) {
      std::optional<int64_t> cs = asConstant(sizes[d].value),
                             co = asConstant((*origin)[d].value);
      if (cs && co && !type.isDynamicDim(d) && *co + *cs > type.getDimSize(d))
        return fail(from.loc, "dimension " + Twine(d) + " of this view reaches " +
                                  Twine(*co + *cs - 1) + ", past the extent " +
                                  Twine(type.getDimSize(d)));
      // A Value keeps the offset dynamic, as the other croq views have it.
      offsets.push_back((*origin)[d].value);
      sizesOf.push_back(fold(sizes[d].value));
      stridesOf.push_back(builder.getIndexAttr(1));
    }
    auto inferred = cast<MemRefType>(memref::SubViewOp::inferResultType(
        type, offsets, sizesOf, stridesOf));
    return memref::SubViewOp::create(builder, l, inferred, *source, offsets,
                                     sizesOf, stridesOf)
        .getResult();
  }
  // Memory-layout strides: the window starts at the source's element
  // `origin` and steps `strides` elements per index.
  auto meta = memref::ExtractStridedMetadataOp::create(builder, l, *source);
  Value offset = meta.getOffset();
  for (int64_t d = 0; d < rank; ++d)
    offset = builder.createOrFold<arith::AddIOp>(
        l, offset,
        builder.createOrFold<arith::MulIOp>(l, (*origin)[d].value,
                                            meta.getStrides()[d]));
  SmallVector<OpFoldResult> sizesOf, stridesOf;
  SmallVector<int64_t> staticStrides;
  for (auto [size, stride] : llvm::zip_equal(sizes, *steps)) {
    std::optional<int64_t> ct = asConstant(stride.value);
    if (ct && *ct <= 0)
      return fail(from.loc, "the strides of a view must be positive");
    sizesOf.push_back(fold(size.value));
    stridesOf.push_back(fold(stride.value));
    staticStrides.push_back(ct.value_or(ShapedType::kDynamic));
  }
  // The last element lies inside a contiguous source, when all is known.
  if (type.hasStaticShape() && type.getLayout().isIdentity()) {
    int64_t last = 0, elements = type.getNumElements();
    bool known = true;
    SmallVector<int64_t> srcStrides;
    int64_t srcOffset;
    (void)type.getStridesAndOffset(srcStrides, srcOffset); // identity: row-major
    for (int64_t d = 0; d < rank && known; ++d) {
      std::optional<int64_t> c = asConstant((*origin)[d].value);
      known = c.has_value();
      last += known ? *c * srcStrides[d] : 0;
    }
    for (auto [shapeD, strideD] : llvm::zip_equal(shape, staticStrides)) {
      known &= !ShapedType::isDynamic(shapeD) && !ShapedType::isDynamic(strideD);
      last += known ? (shapeD - 1) * strideD : 0;
    }
    if (known && last >= elements)
      return fail(from.loc, "the last element of this view is element " +
                                Twine(last) + " of the source, which has " +
                                Twine(elements));
  }
  auto layout = StridedLayoutAttr::get(context, ShapedType::kDynamic, staticStrides);
  auto result = MemRefType::get(shape, type.getElementType(), layout,
                                type.getMemorySpace());
  return memref::ReinterpretCastOp::create(builder, l, result, *source,
                                           OpFoldResult(offset), sizesOf,
                                           stridesOf)
      .getResult();
}

FailureOr<Value> IRGen::squeeze(const Expr &e) {
  Location l = loc(e.loc);
  // The language's rule: the unit extents come from a reshape or explicit
  // extents somewhere in the chain (a chunkat's may follow them).
  bool explicitExtents = false;
  for (const Expr *base = e.base.get(); base && !explicitExtents;
       base = base->base.get())
    explicitExtents = base->kind == Expr::Kind::Member &&
                      (base->name == "subspan" || base->name == "span_as" ||
                       base->name == "from");
  if (!explicitExtents)
    return fail(e.loc, ".sqz() drops the unit extents of a subspan, span_as "
                       "or view(...).from(...) before it in the chain",
                "write the tile as a subspan with unit extents");
  // The extents known to be 1 are dropped; a run-time extent stays, even
  // where it is 1 at run time (the view's rank is part of its type).
  FailureOr<Value> source = view(*e.base);
  if (failed(source))
    return failure();
  auto type = cast<MemRefType>(source->getType());
  SmallVector<OpFoldResult> offsets, sizes, strides;
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    offsets.push_back(builder.getIndexAttr(0));
    strides.push_back(builder.getIndexAttr(1));
    if (type.isDynamicDim(d))
      sizes.push_back(viewExtent(*source, d, l));
    else
      sizes.push_back(builder.getIndexAttr(type.getDimSize(d)));
    if (type.getDimSize(d) != 1)
      shape.push_back(type.getDimSize(d));
  }
  if (shape.size() == static_cast<size_t>(type.getRank()))
    return *source;
  if (shape.empty())
    shape.push_back(1); // a single element stays a one-element view
  auto result = cast<MemRefType>(memref::SubViewOp::inferRankReducedResultType(
      shape, type, offsets, sizes, strides));
  return memref::SubViewOp::create(builder, l, result, *source, offsets, sizes,
                                   strides)
      .getResult();
}

FailureOr<Value> IRGen::viewMember(const Expr &e) {
  Location l = loc(e.loc);
  if (e.name == "span_as" && e.hasArgs)
    return spanAs(e);
  if (e.name == "sqz" && e.hasArgs && e.args.empty())
    return squeeze(e);
  if (e.name == "from" && e.base && e.base->kind == Expr::Kind::Member &&
      e.base->name == "view")
    return windowView(e);
  if (e.name == "view")
    return fail(e.loc, ".view(...) needs its origin: .view(sizes).from(origin)");
  bool chunkAt = e.name == "at" && e.base &&
                 e.base->kind == Expr::Kind::Member && e.base->name == "chunk";
  if (e.name == "chunkat" || chunkAt) {
    FailureOr<Value> source = view(chunkAt ? *e.base->base : *e.base);
    if (failed(source))
      return failure();
    Value base = *source;
    auto type = cast<MemRefType>(base.getType());
    int64_t rank = type.getRank();
    // chunkat(i, _, k), or chunk(n0, _, n2).at(i, _, k); an index tuple
    // stands for its elements.
    FailureOr<SmallVector<ViewArg>> idxArgs = viewArgs(e.args);
    if (failed(idxArgs))
      return failure();
    FailureOr<SmallVector<ViewArg>> factorArgs =
        e.name == "at" ? viewArgs(e.base->args) : SmallVector<ViewArg>();
    if (failed(factorArgs))
      return failure();
    const SmallVector<ViewArg> &idx = *idxArgs;
    const SmallVector<ViewArg> *factors = e.name == "at" ? &*factorArgs : nullptr;
    if (static_cast<int64_t>(idx.size()) != rank)
      return fail(e.loc, e.name + " takes one entry per dimension: " +
                             Twine(rank) + " here, got " + Twine(idx.size()),
                  "use `_` to keep a dimension whole");
    if (factors && static_cast<int64_t>(factors->size()) != rank)
      return fail(e.base->loc, "chunk takes one count per dimension: " +
                                   Twine(rank) + " here, got " +
                                   Twine(factors->size()));
    SmallVector<Value> indices, bounds;
    SmallVector<int64_t> statics;
    for (int64_t d = 0; d < rank; ++d) {
      const Expr &arg = *idx[d].expr;
      if (idx[d].isWildcard()) {
        statics.push_back(tile::kWholeDim);
        continue;
      }
      FailureOr<EVal> v = argValue(idx[d]);
      if (failed(v))
        return failure();
      Value bound = v->bound;
      if (factors) {
        FailureOr<Value> f = argIndex((*factors)[d]);
        if (failed(f))
          return failure();
        bound = *f;
      }
      if (!bound)
        return fail(arg.loc, "a chunkat index must be a bounded variable "
                             "(a parallel, foreach or with index) or `_`",
                    "chunkat divides the dimension by the index's bound "
                    "#i; use subspan(...).at(...) for explicit extents");
      indices.push_back(coerce(v->value, builder.getIndexType(), l));
      if (failed(checkIndex(arg.loc, indices.back(),
                            asConstant(bound).value_or(ShapedType::kDynamic),
                            "chunk index " + Twine(d))))
        return failure();
      if (std::optional<int64_t> c = asConstant(bound)) {
        if (*c <= 0)
          return fail(arg.loc, "chunk count must be positive, got " + Twine(*c));
        statics.push_back(*c);
      } else {
        statics.push_back(ShapedType::kDynamic);
        bounds.push_back(bound);
      }
    }
    std::optional<SmallVector<int64_t>> shape =
        tile::chunkatShape(type.getShape(), statics);
    if (!shape)
      return fail(e.loc, "chunkat makes an empty tile: a chunk count exceeds "
                         "its dimension");
    // A chunk count must divide its dimension: the tiles cover it exactly.
    // Known here: an error; known at run time: a host check.
    auto root = dyn_cast<BlockArgument>(base);
    bool isParam = root && isa<func::FuncOp>(root.getOwner()->getParentOp());
    std::string tensor =
        isParam && root.getArgNumber() < paramNames.size()
            ? "'" + paramNames[root.getArgNumber()] + "'"
            : std::string("the view");
    unsigned dynamicBound = 0;
    // Dimensions whose run-time chunk count is their extent (`foreach r in
    // [R]` over a dimension R): tiles of one, with nothing to check.
    SmallVector<int64_t> tileShape(*shape);
    bool allStatic = true;
    for (int64_t d = 0; d < rank; ++d) {
      int64_t count = statics[d];
      if (count == tile::kWholeDim)
        continue;
      Value bound = count == ShapedType::kDynamic ? bounds[dynamicBound++]
                                                  : Value();
      int64_t dim = type.getShape()[d];
      if (bound && computesSameValue(bound, viewExtent(base, d, l))) {
        tileShape[d] = 1;
        continue;
      }
      allStatic &= !ShapedType::isDynamic(tileShape[d]);
      if (!bound && dim != ShapedType::kDynamic) {
        if (dim % count != 0)
          return fail(idx[d].expr->loc,
                      Twine(chunkAt ? "chunk(...).at" : "chunkat") +
                          " divides dimension " + Twine(d) + " (" + Twine(dim) +
                          ") into " + Twine(count) +
                          " chunks, which does not divide it",
                      "use a chunk count that divides the dimension, or "
                      "subspan(...).at(...) tiles, which handle tails");
        continue;
      }
      Value extent = viewExtent(base, d, l);
      Value chunks =
          bound ? bound : Value(arith::ConstantIndexOp::create(builder, l, count));
      bool checked = checkOnHost(
          l, {extent, chunks},
          [&](OpBuilder &b, ArrayRef<Value> v) -> Value {
            Value zero = arith::ConstantIndexOp::create(b, l, 0);
            Value rem = arith::RemSIOp::create(b, l, v[0], v[1]);
            return arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, rem,
                                         zero);
          },
          "dimension " + Twine(d) + " of " + tensor +
              " is not a multiple of the chunk count of the chunkat at line " +
              Twine(sourceMgr.getLineAndColumn(e.loc).first) +
              ": its tiles would not cover it (pad the tensor, or use "
              "subspan(...).at(...) tiles, which handle tails)");
      if (!checked)
        return fail(idx[d].expr->loc,
                    "cannot check before the launch that this chunk count "
                    "divides dimension " + Twine(d) + " of " + tensor,
                    "compute the chunk count from the function's "
                    "parameters and constants");
    }
    MemRefType result = tileType(type, *shape);
    if (!result)
      return fail(e.loc, "cannot take a tile of this view");
    auto chunk = ChunkAtOp::create(builder, l, result, base, indices, bounds,
                                   builder.getDenseI64ArrayAttr(statics));
    // Tiles of one along a whole dimension have a static extent: the same
    // tile as a subspan, which `.sqz()` can drop.
    if (allStatic && tileShape != *shape) {
      Value tile = chunkAsSubspan(chunk, tileShape, l);
      if (tile != chunk.getResult()) {
        chunk.erase();
        return tile;
      }
    }
    return chunk.getResult();
  }
  // subspan(e...)[.step(s...)][.at(i...)]
  const Expr *at = nullptr, *step = nullptr, *subspan = nullptr;
  const Expr *cursor = &e;
  while (cursor && cursor->kind == Expr::Kind::Member) {
    if (cursor->name == "at" && !at)
      at = cursor;
    else if (cursor->name == "step" && !step)
      step = cursor;
    else if (cursor->name == "subspan" || cursor->name == "modspan") {
      subspan = cursor;
      break;
    } else {
      break;
    }
    cursor = cursor->base.get();
  }
  if (!subspan) {
    if (e.name == "at")
      return fail(e.loc, ".at(...) on a tensor reads one element; a view "
                         "needs subspan(...).at(...) or chunk(...).at(...)");
    return fail(e.loc, "unknown view operation '." + e.name + "'",
                "views are chunkat, chunk().at(), subspan().step().at(), "
                "[i] and .data");
  }
  FailureOr<Value> source = view(*subspan->base);
  if (failed(source))
    return failure();
  auto type = cast<MemRefType>(source->getType());
  int64_t rank = type.getRank();
  FailureOr<SmallVector<ViewArg>> spanArgs = viewArgs(subspan->args);
  FailureOr<SmallVector<ViewArg>> atArgs =
      at ? viewArgs(at->args) : SmallVector<ViewArg>();
  FailureOr<SmallVector<ViewArg>> stepArgs =
      step ? viewArgs(step->args) : SmallVector<ViewArg>();
  if (failed(spanArgs) || failed(atArgs) || failed(stepArgs))
    return failure();
  if (static_cast<int64_t>(spanArgs->size()) != rank)
    return fail(subspan->loc, "subspan takes one extent per dimension: " +
                                  Twine(rank) + " here, got " +
                                  Twine(spanArgs->size()));
  SmallVector<Value> extents, indices, steps;
  SmallVector<int64_t> statics;
  for (const ViewArg &arg : *spanArgs) {
    if (arg.isWildcard()) {
      statics.push_back(tile::kWholeDim);
      continue;
    }
    FailureOr<Value> v = argIndex(arg);
    if (failed(v))
      return failure();
    if (std::optional<int64_t> c = asConstant(*v)) {
      if (*c <= 0)
        return fail(arg.expr->loc, "subspan extents must be positive, got " + Twine(*c));
      statics.push_back(*c);
    } else {
      statics.push_back(ShapedType::kDynamic);
      extents.push_back(*v);
    }
  }
  for (int64_t d = 0; d < rank; ++d) {
    if (!at) {
      indices.push_back(constIndex(0, l));
      continue;
    }
    if (static_cast<int64_t>(atArgs->size()) != rank)
      return fail(at->loc, ".at takes one tile index per dimension: " +
                               Twine(rank) + " here, got " +
                               Twine(atArgs->size()));
    FailureOr<Value> v = argIndex((*atArgs)[d]);
    if (failed(v))
      return failure();
    // A tile index past the last tile is caught with the shape known;
    // a negative one always.
    int64_t tiles = ShapedType::kDynamic;
    if (!step && statics[d] != tile::kWholeDim &&
        !ShapedType::isDynamic(statics[d]) &&
        !ShapedType::isDynamic(type.getDimSize(d)))
      tiles = llvm::divideCeil(type.getDimSize(d), statics[d]);
    if (failed(checkIndex((*atArgs)[d].expr->loc, *v, tiles,
                          "tile index " + Twine(d))))
      return failure();
    indices.push_back(*v);
  }
  if (step) {
    if (static_cast<int64_t>(stepArgs->size()) != rank)
      return fail(step->loc, ".step takes one step per dimension");
    for (const ViewArg &arg : *stepArgs) {
      FailureOr<Value> v = argIndex(arg);
      if (failed(v))
        return failure();
      steps.push_back(*v);
    }
  }
  std::optional<SmallVector<int64_t>> shape =
      tile::subspanShape(type.getShape(), statics);
  if (!shape)
    return fail(subspan->loc, "a subspan extent exceeds its dimension");
  MemRefType result = tileType(type, *shape);
  if (!result)
    return fail(e.loc, "cannot take a tile of this view");
  return SubspanOp::create(builder, l, result, *source, extents,
                           builder.getDenseI64ArrayAttr(statics), indices,
                           steps)
      .getResult();
}
