//===- IRGenCopy.cpp - Croqtile copies and events to IR ---------------------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#include "IRGenImpl.h"

#include "llvm/ADT/SmallBitVector.h"

using namespace mlir;
using namespace mlir::croq;
using namespace mlir::croq::croqtile;

//===----------------------------------------------------------------------===//
// Copies and futures
//===----------------------------------------------------------------------===//


FailureOr<Value> IRGen::transposedView(const Stmt &stmt, Value source) {
  auto type = cast<MemRefType>(source.getType());
  int64_t rank = type.getRank();
  SmallVector<unsigned> perm;
  llvm::SmallBitVector seen(rank);
  for (int64_t d : stmt.permutation) {
    if (d < 0 || d >= rank || seen.test(d))
      return fail(stmt.loc, "dma.transp<...> needs a permutation of the " +
                                Twine(rank) + " dimensions of its source");
    seen.set(d);
    perm.push_back(d);
  }
  if (static_cast<int64_t>(perm.size()) != rank)
    return fail(stmt.loc, "dma.transp<...> needs a permutation of the " +
                              Twine(rank) + " dimensions of its source");
  AffineMap map = AffineMap::getPermutationMap(perm, context);
  return memref::TransposeOp::create(builder, loc(stmt.loc), source,
                                     AffineMapAttr::get(map))
      .getResult();
}

bool IRGen::dependsOnThreadIndex(Value v) {
  // The thread-level parallels the insertion point is in.
  llvm::SmallPtrSet<Block *, 4> threadBodies;
  for (ParallelOp p : openParallels)
    if (p.getLevel() == Level::Thread)
      threadBodies.insert(&p.getBody().front());
  for (Operation *op = builder.getInsertionBlock()->getParentOp(); op;
       op = op->getParentOp())
    if (auto p = dyn_cast<ParallelOp>(op); p && p.getLevel() == Level::Thread)
      threadBodies.insert(&p.getBody().front());
  if (threadBodies.empty())
    return false;
  SmallVector<Value> worklist{v};
  llvm::SmallPtrSet<Value, 16> seen;
  // A value carried through a loop or joined after a branch depends on what
  // flows in (the operands of the op) and on what its regions yield.
  auto carriedInto = [&](Operation *op) {
    worklist.append(op->operand_begin(), op->operand_end());
    for (Region &region : op->getRegions())
      for (Block &block : region)
        if (block.mightHaveTerminator())
          worklist.append(block.getTerminator()->operand_begin(),
                          block.getTerminator()->operand_end());
  };
  while (!worklist.empty()) {
    Value x = worklist.pop_back_val();
    if (!seen.insert(x).second)
      continue;
    if (auto arg = dyn_cast<BlockArgument>(x)) {
      if (threadBodies.contains(arg.getOwner()))
        return true;
      // An index of another parallel depends on its bounds alone.
      Operation *parent = arg.getOwner()->getParentOp();
      if (isa_and_nonnull<ParallelOp>(parent))
        worklist.append(parent->operand_begin(), parent->operand_end());
      else if (parent && !isa<func::FuncOp>(parent))
        carriedInto(parent);
      continue;
    }
    Operation *def = x.getDefiningOp();
    if (!def)
      continue;
    if (def->getNumRegions() > 0)
      carriedInto(def);
    else
      worklist.append(def->operand_begin(), def->operand_end());
  }
  return false;
}

LogicalResult IRGen::padCopy(const Stmt &stmt, Value source) {
  // dma.pad<{low}, {high}, {mid}, v> x => s: a buffer of low + n + (n - 1)
  // * mid + high elements in each dimension of extent n, filled with v,
  // with x's elements at low, low + mid + 1, ...: the fill, then a copy
  // into the strided interior.
  Location l = loc(stmt.loc);
  auto type = cast<MemRefType>(source.getType());
  int64_t rank = type.getRank();
  if (static_cast<int64_t>(stmt.padLow.size()) != rank ||
      static_cast<int64_t>(stmt.padHigh.size()) != rank ||
      static_cast<int64_t>(stmt.padMid.size()) != rank)
    return fail(stmt.loc, "dma.pad<{low}, {high}, {mid}, value> needs " +
                              Twine(rank) + " paddings in each of its three "
                              "lists, one per dimension of the source");
  for (const std::vector<int64_t> *widths :
       {&stmt.padLow, &stmt.padHigh, &stmt.padMid})
    if (llvm::any_of(*widths, [](int64_t w) { return w < 0; }))
      return fail(stmt.loc, "dma.pad paddings cannot be negative");
  // `f = dma.pad.async ...; wait f;`: croq pads synchronously, so the
  // wait finds the buffer complete.
  if (stmt.async) {
    if (stmt.name.empty())
      return fail(stmt.loc, "an async dma.pad needs a name to wait on",
                  "write `f = dma.pad.async ...;` and `wait f;`, or drop "
                  ".async");
    emitWarning(loc(stmt.loc))
        << "dma.pad.async is made synchronously: the padded buffer is "
           "complete before the next statement, so `wait " << stmt.name
        << "` waits for nothing";
  }
  SmallVector<Value> extents, padded;
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d) {
    Value n = viewExtent(source, d, l);
    extents.push_back(n);
    // low + n + (n - 1) * mid + high
    Value gaps = builder.createOrFold<arith::MulIOp>(
        l, builder.createOrFold<arith::SubIOp>(l, n, constIndex(1, l)),
        constIndex(stmt.padMid[d], l));
    Value out = builder.createOrFold<arith::AddIOp>(
        l, builder.createOrFold<arith::AddIOp>(l, n, gaps),
        constIndex(stmt.padLow[d] + stmt.padHigh[d], l));
    padded.push_back(out);
    std::optional<int64_t> c = asConstant(out);
    shape.push_back(c ? *c : ShapedType::kDynamic);
  }
  Value target;
  if (stmt.dest) {
    FailureOr<Value> dest = view(*stmt.dest);
    if (failed(dest))
      return failure();
    target = *dest;
    auto destType = cast<MemRefType>(target.getType());
    bool fits = destType.getRank() == rank;
    for (int64_t d = 0; fits && d < rank; ++d)
      fits = ShapedType::isDynamic(shape[d]) || destType.isDynamicDim(d) ||
             destType.getDimSize(d) == shape[d];
    if (!fits)
      return fail(stmt.loc, "dma.pad makes a tile of the padded shape; the "
                            "destination's shape differs");
  } else {
    if (stmt.destStorage == "global")
      return fail(stmt.loc, "=> global is not a destination",
                  "pad into a view of a global tensor");
    bool shared = stmt.destStorage == "shared";
    // As for dma.copy: a tile that differs between the threads of a thread
    // level needs a buffer per thread.
    if (shared && dependsOnThreadIndex(source)) {
      shared = false;
      emitWarning(l) << "each thread pads its own tile here, so each gets "
                          "its own buffer: in local memory, not shared";
    }
    SmallVector<Value> dynamicSizes;
    for (int64_t d = 0; d < rank; ++d)
      if (ShapedType::isDynamic(shape[d]))
        dynamicSizes.push_back(padded[d]);
    auto bufferType = MemRefType::get(
        shape, type.getElementType(), MemRefLayoutAttrInterface(),
        gpu::AddressSpaceAttr::get(context, shared ? gpu::AddressSpace::Workgroup
                                                   : gpu::AddressSpace::Private));
    target = memref::AllocOp::create(builder, l, bufferType, dynamicSizes);
  }
  FailureOr<EVal> v = expr(*stmt.padValue);
  if (failed(v) ||
      failed(checkInitializer(*stmt.padValue, v->value, type.getElementType())))
    return failure();
  Value fill = coerce(v->value, type.getElementType(), l);
  auto store = [&](OpBuilder &b, Location loc, ValueRange ivs) {
    memref::StoreOp::create(b, loc, fill, target, ivs);
  };
  SmallVector<Value> steps(rank, constIndex(1, l));
  if (llvm::any_of(stmt.padMid, [](int64_t m) { return m != 0; })) {
    // Gaps between the source's elements: the whole buffer, which the copy
    // then overwrites where the source goes.
    SmallVector<Value> zeros(rank, constIndex(0, l));
    scf::buildLoopNest(builder, l, zeros, padded, steps, store);
  } else {
    // Only the border, each element once: dimension d's strips below and
    // above the source take the source's range in the dimensions before d
    // and the whole extent in those after it.
    for (int64_t d = 0; d < rank; ++d) {
      Value end = builder.createOrFold<arith::AddIOp>(
          l, constIndex(stmt.padLow[d], l), extents[d]);
      std::pair<Value, Value> strips[] = {
          {constIndex(0, l), constIndex(stmt.padLow[d], l)}, {end, padded[d]}};
      for (auto [strip, range] : llvm::enumerate(strips)) {
        if ((strip == 0 ? stmt.padLow[d] : stmt.padHigh[d]) == 0)
          continue;
        SmallVector<Value> lbs, ubs;
        for (int64_t j = 0; j < rank; ++j) {
          if (j < d) {
            lbs.push_back(constIndex(stmt.padLow[j], l));
            ubs.push_back(builder.createOrFold<arith::AddIOp>(
                l, constIndex(stmt.padLow[j], l), extents[j]));
          } else if (j == d) {
            lbs.push_back(range.first);
            ubs.push_back(range.second);
          } else {
            lbs.push_back(constIndex(0, l));
            ubs.push_back(padded[j]);
          }
        }
        scf::buildLoopNest(builder, l, lbs, ubs, steps, store);
      }
    }
  }
  SmallVector<OpFoldResult> offsets, sizes, strides;
  for (int64_t d = 0; d < rank; ++d) {
    offsets.push_back(builder.getIndexAttr(stmt.padLow[d]));
    std::optional<int64_t> n = asConstant(extents[d]);
    sizes.push_back(n ? OpFoldResult(builder.getIndexAttr(*n))
                      : OpFoldResult(extents[d]));
    strides.push_back(builder.getIndexAttr(stmt.padMid[d] + 1));
  }
  Value interior =
      memref::SubViewOp::create(builder, l, target, offsets, sizes, strides);
  DmaCopyOp::create(builder, l, TypeRange{}, source, interior, ValueRange{},
                    /*async=*/false, IntegerAttr(), /*partial=*/false);
  if (!stmt.name.empty()) {
    // As a copy's future, the name is bound again by each padded copy.
    Symbol padded{Symbol::Kind::Tensor, target};
    padded.origin = &stmt;
    declare(stmt.name, padded);
    return success();
  }
  return success();
}

LogicalResult IRGen::copy(const Stmt &stmt) {
  Location l = loc(stmt.loc);
  bool isTma = stmt.op == "tma";
  // A hint croq parses but does not apply.
  for (const auto &[at, hint] : stmt.ignoredHints)
    emitWarning(loc(at), "'." + hint + "' is a cache hint croq does not "
                         "apply yet; the copy is made without it");
  FailureOr<Value> source = view(*stmt.source);
  if (failed(source))
    return failure();
  if (stmt.copyKind == "pad")
    return padCopy(stmt, *source);
  if (!stmt.permutation.empty()) {
    // dma.transp<p...>: a copy of the source seen through the permutation.
    FailureOr<Value> permuted = transposedView(stmt, *source);
    if (failed(permuted))
      return failure();
    source = permuted;
  }
  auto sourceType = cast<MemRefType>(source->getType());
  Symbol *existing = stmt.name.empty() ? nullptr : lookup(stmt.name);
  if (existing && existing->kind != Symbol::Kind::Future)
    existing = nullptr;
  Value target;
  if (stmt.dest) {
    FailureOr<Value> dest = view(*stmt.dest);
    if (failed(dest))
      return failure();
    target = *dest;
  } else {
    // `=> shared` / `=> local`: reuse the buffer of the future being
    // reassigned (double buffering), or allocate one of the source's shape.
    if (stmt.destStorage == "global")
      return fail(stmt.loc, "=> global is not a destination",
                  "copy into a view of a global tensor");
    if (existing) {
      target = FutureDataOp::create(
                   builder, l,
                   cast<FutureType>(existing->value.getType()).getDataType(),
                   existing->value)
                   .getResult();
      // The buffer is reused: one shared buffer cannot take a tile that
      // differs between the threads (each needs its own, in local memory).
      if (stmt.destStorage == "shared" && dependsOnThreadIndex(*source) &&
          getStorage(cast<MemRefType>(target.getType())) == Storage::Shared)
        return fail(stmt.loc,
                    "each thread copies its own tile here, but '" +
                        stmt.name + "' holds one buffer in shared memory "
                        "(from its first copy or its dma.any), which every "
                        "thread would write",
                    "copy into a new future, or copy a tile that is the "
                    "same in every thread");
    } else {
      // A source with run-time extents gives a buffer with run-time extents
      // (the lowering asks for static shapes where it needs them).
      SmallVector<Value> dynamicSizes;
      // A chunkat's extent comes from its source's, so that the buffer can
      // be sized before the launch, not from the tile's indices.
      for (int64_t d = 0; d < sourceType.getRank(); ++d)
        if (sourceType.isDynamicDim(d))
          dynamicSizes.push_back(viewExtent(*source, d, l));
      bool shared = stmt.destStorage == "shared";
      // `=> shared` inside a thread level, of data that differs between
      // its threads (the source uses their indices: chapter 2's
      // `lhs.chunkat(tr, tc) => shared` under `parallel {tr, tc} by [4, 8]`):
      // each thread needs a buffer of its own, which is local memory.
      if (shared && dependsOnThreadIndex(*source)) {
        shared = false;
        emitWarning(l) << "each thread copies its own tile here, so each "
                            "gets its own buffer: in local memory, not shared";
      }
      Attribute space = gpu::AddressSpaceAttr::get(
          context, shared ? gpu::AddressSpace::Workgroup
                          : gpu::AddressSpace::Private);
      auto type = MemRefType::get(sourceType.getShape(),
                                  sourceType.getElementType(),
                                  MemRefLayoutAttrInterface(), space);
      target = memref::AllocOp::create(builder, l, type, dynamicSizes);
      // A copy of unsigned elements holds unsigned elements.
      if (unsignedTensors.contains(rootTensor(*source)))
        unsignedTensors.insert(target);
    }
  }
  auto targetType = cast<MemRefType>(target.getType());
  if (isTma && stmt.copyKind == "load" &&
      (getStorage(sourceType) != Storage::Global ||
       getStorage(targetType) != Storage::Shared))
    return fail(stmt.loc,
                "tma.load loads a global tile into shared memory, but this "
                "copies " + stringifyStorage(*getStorage(sourceType)) +
                    " => " + stringifyStorage(*getStorage(targetType)),
                "use tma.copy for a store into global memory");
  // A dma.copy between views whose extents differ covers the destination:
  // past the source's extent it is zero, and source elements past the
  // destination's are left (upstream's conditional copy).
  bool partial = false;
  {
    if (sourceType.getElementType() != targetType.getElementType())
      return fail(stmt.loc, "copy element types differ: " +
                                typeString(sourceType.getElementType()) +
                                " => " + typeString(targetType.getElementType()),
                  "copy between tensors of the same element type");
    bool shapesMatch = sourceType.getRank() == targetType.getRank();
    for (int64_t d = 0; shapesMatch && d < sourceType.getRank(); ++d) {
      int64_t s = sourceType.getDimSize(d), t = targetType.getDimSize(d);
      shapesMatch = ShapedType::isDynamic(s) || ShapedType::isDynamic(t) || s == t;
    }
    // A source larger than its destination in a dimension both know at
    // compile time would drop elements: upstream's "DMA to-buffer is too
    // small", and for differing extents its conditional copy only
    // zero-fills past a smaller source.
    if (!shapesMatch && !isTma && sourceType.getRank() == targetType.getRank())
      for (int64_t d = 0; d < sourceType.getRank(); ++d) {
        int64_t s = sourceType.getDimSize(d), t = targetType.getDimSize(d);
        if (!ShapedType::isDynamic(s) && !ShapedType::isDynamic(t) && s > t)
          return fail(stmt.loc,
                      "this copy's source has " + Twine(s) +
                          " elements in dimension " + Twine(d) +
                          " and its destination only " + Twine(t) +
                          ": it would drop elements",
                      "copy a view of the destination's shape (subspan or "
                      "chunkat of the source); a smaller source is "
                      "zero-filled");
      }
    if (!shapesMatch && !isTma &&
        sourceType.getRank() == targetType.getRank()) {
      partial = true;
    } else if (!shapesMatch) {
      auto shape = [](MemRefType t) {
        std::string s = "[";
        for (int64_t d = 0; d < t.getRank(); ++d)
          s += (d ? ", " : "") +
               (t.isDynamicDim(d) ? std::string("?")
                                  : std::to_string(t.getDimSize(d)));
        return s + "]";
      };
      return fail(stmt.loc, "copy shapes differ: " + shape(sourceType) +
                                " => " + shape(targetType),
                  isTma ? "a TMA copy moves equal shapes; use dma.copy, "
                          "which zero-fills past a smaller source, or copy "
                          "views of equal shape"
                        : "copy views of one rank");
    }
    // A dimension known on one side only: equal at run time, checked by
    // the host before the launch (a chunkat of a tensor whose tile is not
    // the buffer's shape would copy part of it).
    if (sourceType.getRank() == targetType.getRank()) {
      Location l = loc(stmt.loc);
      // Whether every dimension the source knows only at run time was
      // checked on the host to be the destination's.
      bool sourceChecked = true;
      for (int64_t d = 0; d < sourceType.getRank(); ++d) {
        int64_t sd = sourceType.getDimSize(d), td = targetType.getDimSize(d);
        if (ShapedType::isDynamic(sd) == ShapedType::isDynamic(td))
          continue;
        Value dynamicSide = ShapedType::isDynamic(sd) ? Value(*source) : target;
        int64_t fixed = ShapedType::isDynamic(sd) ? td : sd;
        // A window's extent (view(rows, _).from(...), span_as) is the
        // kernel's: a copy from it is partial, as documented.
        Value extent = viewExtent(dynamicSide, d, l, /*ofWindows=*/false);
        bool checked = checkOnHost(
            l, {extent},
            [&](OpBuilder &b, ArrayRef<Value> v) -> Value {
              Value want = arith::ConstantIndexOp::create(b, l, fixed);
              return arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq,
                                           v[0], want);
            },
            "the copy at line " +
                Twine(sourceMgr.getLineAndColumn(stmt.loc).first) +
                " moves a tile whose dimension " + Twine(d) +
                " is not " + Twine(fixed) +
                " for these shapes (a chunkat of a tensor extent that its "
                "tile does not divide into " + Twine(fixed) + ")");
        sourceChecked &= checked || !ShapedType::isDynamic(sd);
        // Known only in the kernel (a tail tile's extent computed
        // there): the copy covers the destination, zero beyond the source.
        if (!checked && !isTma) {
          partial = true;
          continue;
        }
        if (!checked)
          return fail(stmt.loc,
                      "cannot check before the launch that dimension " +
                          Twine(d) + " of this copy is " + Twine(fixed),
                      "copy views whose shapes follow from the function's "
                      "parameters and constants, or use dma.copy, which "
                      "zero-fills past a smaller source");
      }
      // A chunk of run-time extents that the host checked, loaded by TMA:
      // the same tile as a subspan of the destination's extents, whose
      // origin in the kernel is a product, not a division by the chunk
      // count. (TMA bounds its boxes itself; a DMA copy of a subspan would
      // guard each element against the tensor's end, which a chunk cannot
      // pass.)
      if (auto chunk = source->getDefiningOp<ChunkAtOp>();
          chunk && isTma && sourceChecked && !partial &&
          targetType.hasStaticShape() && !sourceType.hasStaticShape())
        *source = chunkAsSubspan(chunk, targetType.getShape(), l);
    }
  }
  // A GPU copies asynchronously only from global into shared memory
  // (cp.async, TMA); any other direction is a plain copy.
  if (stmt.async && !isTma) {
    auto storageName = [](Type t) {
      return stringifyStorage(
          getStorage(cast<MemRefType>(t)).value_or(Storage::Global));
    };
    StringRef from = storageName(sourceType), to = storageName(target.getType());
    // `=> shared` made local above, as each thread copies its own tile.
    if (from == "global" && to == "local" && stmt.destStorage == "shared")
      return fail(stmt.loc, "each thread copies its own tile here (the tile "
                            "depends on the thread's indices), so its buffer "
                            "is local, and a GPU copies asynchronously only "
                            "into shared memory",
                  "drop .async, or copy the block's whole tile into shared "
                  "memory outside the thread level and let each thread read "
                  "its part");
    if (from != "global" || to != "shared")
      return fail(stmt.loc, "a GPU cannot copy asynchronously from " + from +
                                Twine(" to ") + to + " memory; only global to "
                                "shared copies are asynchronous",
                  "drop .async to copy synchronously");
  }
  if (stmt.async && stmt.name.empty() && !stmt.boundEvent)
    return fail(stmt.loc, "an async " + stmt.op +
                              ".copy needs a named future or an event",
                "write `f = " + stmt.op + ".copy.async ...;` and `wait f;`");
  SmallVector<Value> after;
  for (const std::string &name : stmt.after) {
    Symbol *f = lookup(name);
    if (!f || f->kind != Symbol::Kind::Future)
      return fail(stmt.loc, "'after " + name + "' needs a future",
                  "name the copy this one must follow");
    after.push_back(f->value);
  }
  IntegerAttr swizzle;
  if (stmt.swizzle) {
    if (*stmt.swizzle != 32 && *stmt.swizzle != 64 && *stmt.swizzle != 128)
      return fail(stmt.loc, ".swiz<" + Twine(*stmt.swizzle) +
                                "> is not a swizzle span",
                  "use .swiz<32>, .swiz<64> or .swiz<128>");
    swizzle = builder.getI64IntegerAttr(*stmt.swizzle);
  }
  bool futureWanted = !stmt.name.empty() && !stmt.boundEvent;
  // A TMA store's future guards the shared tile it reads: its data is the
  // source, which the store may still be reading until the future is
  // waited.
  bool tmaStore = isTma && getStorage(cast<MemRefType>(target.getType())) ==
                               Storage::Global;
  Type futureType;
  if (futureWanted)
    futureType = FutureType::get(context,
                                 isTma ? FutureKind::Tma : FutureKind::Dma,
                                 stmt.async,
                                 tmaStore ? source->getType() : targetType);
  Value future;
  if (isTma) {
    if (!after.empty())
      return fail(stmt.loc, "'after' orders DMA copies; TMA completion binds "
                            "to an event with `trigger e after f`");
    Value event;
    SmallVector<Value> eventIndices;
    if (stmt.boundEvent) {
      const Expr *ev = stmt.boundEvent.get();
      if (ev->kind == Expr::Kind::Index) {
        for (const ExprPtr &arg : ev->args) {
          FailureOr<Value> i = indexExpr(*arg);
          if (failed(i))
            return failure();
          eventIndices.push_back(*i);
        }
        ev = ev->base.get();
      }
      Symbol *s = ev->kind == Expr::Kind::Name ? lookup(ev->name) : nullptr;
      if (!s || s->kind != Symbol::Kind::Event)
        return fail(stmt.boundEvent->loc, "tma.copy.async<...> binds an event",
                    "write tma.copy.async<full[stage]>");
      event = s->value;
    }
    // A swizzle span is the bytes of the shared tile's rows.
    if (swizzle) {
      auto shared = getStorage(cast<MemRefType>(target.getType())) ==
                            Storage::Shared
                        ? cast<MemRefType>(target.getType())
                        : cast<MemRefType>(source->getType());
      int64_t inner = shared.getShape().back();
      int64_t bytes = inner * getStorageBytes(shared.getElementType());
      // The wgmma layout's span (croq-plan-shared-layout): the rows' bytes
      // when they are 32 or 64, else 128, rows of several spans stored as
      // panels of 128 bytes each.
      int64_t span = bytes % 128 == 0 ? 128 : bytes;
      if (!ShapedType::isDynamic(inner) && span != swizzle.getInt())
        return fail(stmt.loc, ".swiz<" + Twine(swizzle.getInt()) +
                                  "> needs shared rows of " +
                                  Twine(swizzle.getInt()) +
                                  (swizzle.getInt() == 128
                                       ? " bytes or a multiple of them"
                                       : " bytes") +
                                  "; this tile's rows are " +
                                  Twine(inner) + " x " +
                                  typeString(shared.getElementType()) +
                                  " = " + Twine(bytes) + " bytes",
                    bytes == 32 || bytes == 64 || bytes % 128 == 0
                        ? "use .swiz<" + Twine(span) + ">"
                        : Twine("use rows of 32, 64 or 128 bytes, or no "
                                "swizzle"));
    }
    auto op = TmaCopyOp::create(builder, l, futureType ? TypeRange{futureType}
                                                       : TypeRange{},
                                *source, target, event, eventIndices,
                                /*tensorMap=*/Value(), stmt.async, swizzle,
                                /*issuer=*/IssuerAttr(), stmt.multicast);
    if (futureType)
      future = op.getFuture();
  } else {
    if (stmt.boundEvent)
      return fail(stmt.boundEvent->loc, "dma.copy.async<event> is not "
                                        "supported; bind TMA copies to events",
                  "use f = dma.copy.async ...; wait f;");
    auto op = DmaCopyOp::create(builder, l,
                                futureType ? TypeRange{futureType} : TypeRange{},
                                *source, target, after, stmt.async, swizzle,
                                partial);
    if (futureType)
      future = op.getFuture();
  }
  if (future) {
    if (existing) {
      existing->value = future;
    } else {
      Symbol s{Symbol::Kind::Future, future};
      s.origin = &stmt;
      declare(stmt.name, s);
    }
  }
  return success();
}

LogicalResult IRGen::dmaAny(const Stmt &stmt) {
  Location l = loc(stmt.loc);
  auto factsIt = sema.placeholders.find(&stmt);
  const PlaceholderFacts *facts =
      factsIt == sema.placeholders.end() ? nullptr : &factsIt->second;
  // The buffer of the future it is swapped with, when that is declared
  // already; else the one Sema worked out from the copy that defines it.
  Symbol *partner = facts && facts->partnerDecl ? lookup(facts->partner)
                                                : nullptr;
  if (partner && (partner->kind != Symbol::Kind::Future ||
                  partner->origin != facts->partnerDecl))
    partner = nullptr;
  // A placeholder for TMA stores names the shared tile they read, made here
  // as the store makes it (`st = tma.any; ... wait st; ... st = tma.copy.async
  // out_s => g;`): a wait on it waits for no store, and one that receives a
  // store's future waits until that store has read the tile.
  if (!partner && facts && facts->storeSource) {
    FailureOr<Value> tile = view(*facts->storeSource);
    if (failed(tile)) {
      emitRemark(l) << "the placeholder stands for the tile the TMA store "
                       "assigned to '"
                    << stmt.name << "' reads";
      return failure();
    }
    auto type = FutureType::get(context, FutureKind::Tma, true,
                                tile->getType());
    Value future = DmaAnyOp::create(builder, l, type, *tile);
    Symbol s{Symbol::Kind::Future, future};
    s.origin = &stmt;
    declare(stmt.name, s);
    return success();
  }
  MemRefType memref;
  if (partner) {
    memref = cast<MemRefType>(
        cast<FutureType>(partner->value.getType()).getDataType());
  } else if (facts && facts->buffer && facts->buffer->allocated) {
    const BufferFacts &buffer = *facts->buffer;
    Type element = elementType(buffer.element, stmt.loc);
    if (!element)
      return failure();
    Attribute space;
    if (buffer.storage == "shared" || buffer.storage == "local")
      space = gpu::AddressSpaceAttr::get(
          context, buffer.storage == "shared" ? gpu::AddressSpace::Workgroup
                                              : gpu::AddressSpace::Private);
    memref = MemRefType::get(buffer.shape, element, MemRefLayoutAttrInterface(),
                             space);
  } else {
    return fail(stmt.loc, "cannot tell which buffer this " + stmt.op +
                              ".any stands for",
                "swap it with a future, or assign a copy `=> shared` to '" +
                    stmt.name + "' later");
  }
  SmallVector<Value> dynamicSizes;
  if (!memref.hasStaticShape()) {
    // Run-time extents: those of the partner's buffer.
    if (!partner)
      return fail(stmt.loc, "this " + stmt.op + ".any stands for a buffer "
                                "with run-time extents, and no future to "
                                "take them from is in scope",
                  "declare the placeholder after the future it is swapped "
                  "with");
    Value data = FutureDataOp::create(
        builder, l, cast<FutureType>(partner->value.getType()).getDataType(),
        partner->value);
    for (int64_t d = 0; d < memref.getRank(); ++d)
      if (memref.isDynamicDim(d))
        dynamicSizes.push_back(viewExtent(data, d, l));
  }
  // The placeholder's own buffer is plain; typed as the partner's view (a
  // buffer of an array, `buf[0]`, is a strided view) so the two swap.
  auto plain = MemRefType::get(memref.getShape(), memref.getElementType(),
                               MemRefLayoutAttrInterface(),
                               memref.getMemorySpace());
  Value buffer = memref::AllocOp::create(builder, l, plain, dynamicSizes);
  if (plain != memref) {
    if (!memref::CastOp::areCastCompatible(plain, memref))
      return fail(stmt.loc, "this " + stmt.op + ".any stands for a view "
                                "whose layout a buffer of its own cannot "
                                "have",
                  "swap it with a future of a whole buffer");
    buffer = memref::CastOp::create(builder, l, memref, buffer);
  }
  auto placeholderType =
      FutureType::get(context, stmt.op == "tma" ? FutureKind::Tma
                                                : FutureKind::Dma,
                      true, memref);
  Value future = DmaAnyOp::create(builder, l, placeholderType, buffer);
  Symbol s{Symbol::Kind::Future, future};
  s.origin = &stmt;
  declare(stmt.name, s);
  return success();
}

LogicalResult IRGen::swap(const Stmt &stmt) {
  SmallVector<Symbol *> symbols;
  for (const ExprPtr &operand : stmt.operands) {
    Symbol *s = operand->kind == Expr::Kind::Name ? lookup(operand->name) : nullptr;
    if (!s || s->kind != Symbol::Kind::Future)
      return fail(operand->loc, stmt.op + " exchanges futures; this is not one",
                  "swap the futures returned by dma.copy / tma.copy / dma.any");
    symbols.push_back(s);
  }
  if (stmt.op == "swap" && symbols.size() != 2)
    return fail(stmt.loc, "swap takes two futures");
  if (symbols.size() < 2)
    return fail(stmt.loc, "rotate takes at least two futures");
  // A future as the message tells it: its engine, asynchrony and buffer.
  auto describe = [&](Type type) {
    auto future = cast<FutureType>(type);
    return (Twine("a") + (future.getAsync() ? "n async " : " synchronous ") +
            stringifyFutureKind(future.getKind()) + " " +
            typeString(type))
        .str();
  };
  for (size_t i = 1; i < symbols.size(); ++i) {
    if (symbols[i]->value.getType() != symbols[0]->value.getType())
      return fail(stmt.operands[i]->loc,
                  stmt.op + " needs futures of the same kind, asynchrony and "
                            "buffer shape: " +
                      describe(symbols[0]->value.getType()) + " and " +
                      describe(symbols[i]->value.getType()),
                  "swap async copies with async copies of the same tile");
    if (symbols[i]->scope != symbols[0]->scope)
      return fail(stmt.operands[i]->loc,
                  stmt.op + " needs futures declared in the same scope",
                  "declare both futures at the same level, e.g. with "
                  "dma.any next to the first copy");
  }
  Location l = loc(stmt.loc);
  SmallVector<Value> values;
  for (Symbol *s : symbols)
    values.push_back(s->value);
  SmallVector<Value> results;
  if (stmt.op == "swap") {
    auto op = SwapOp::create(builder, l, values[0].getType(),
                             values[0].getType(), values[0], values[1]);
    results = {op.getNewLhs(), op.getNewRhs()};
  } else {
    auto op = RotateOp::create(builder, l, ValueRange(values).getTypes(), values);
    results.assign(op.getRotated().begin(), op.getRotated().end());
  }
  // Names keep their places; the handles (and what they stand for) move.
  SmallVector<const Stmt *> origins;
  for (Symbol *s : symbols)
    origins.push_back(s->origin);
  for (size_t i = 0; i < symbols.size(); ++i) {
    symbols[i]->value = results[i];
    symbols[i]->origin = origins[(i + 1) % symbols.size()];
  }
  return success();
}

LogicalResult IRGen::waitOrTrigger(const Stmt &stmt) {
  Location l = loc(stmt.loc);
  bool isWait = stmt.kind == Stmt::Kind::Wait;
  SmallVector<Value> futures;
  SmallVector<Symbol *> mmaFutures;
  for (const ExprPtr &operand : stmt.operands) {
    const Expr *base = operand.get();
    const Expr *at = nullptr;
    SmallVector<const Expr *> subscripts;
    if (base->kind == Expr::Kind::Member && base->name == "at" && base->hasArgs) {
      at = base;
      base = base->base.get();
    }
    while (base->kind == Expr::Kind::Index) {
      for (auto it = base->args.rbegin(); it != base->args.rend(); ++it)
        subscripts.insert(subscripts.begin(), it->get());
      base = base->base.get();
    }
    Symbol *s = base->kind == Expr::Kind::Name ? lookup(base->name) : nullptr;
    if (!s)
      return fail(operand->loc, "use of undeclared name '" +
                                    (base->kind == Expr::Kind::Name ? base->name
                                                                    : std::string("?")) +
                                    "'",
                  "declare the event (`shared event e;`) or name the future");
    if (s->kind == Symbol::Kind::Future) {
      if (!isWait)
        return fail(operand->loc, "trigger takes events; '" + base->name +
                                      "' is a future",
                    "wait on futures, trigger events");
      if (!cast<FutureType>(s->value.getType()).getAsync())
        return fail(operand->loc, "'" + base->name +
                                      "' is the future of a synchronous copy; "
                                      "it cannot be waited",
                    "use .async on the copy, or drop the wait");
      futures.push_back(s->value);
      if (s->origin && s->origin->kind == Stmt::Kind::Mma)
        mmaFutures.push_back(s);
      continue;
    }
    // The buffer of a dma.pad.async, padded synchronously: complete.
    if (isWait && s->kind == Symbol::Kind::Tensor && s->origin &&
        s->origin->kind == Stmt::Kind::Dma && s->origin->async &&
        s->origin->copyKind == "pad" && subscripts.empty() && !at)
      continue;
    if (s->kind != Symbol::Kind::Event)
      return fail(operand->loc, "'" + base->name + "' is not an event or a future");
    auto type = cast<EventType>(s->value.getType());
    SmallVector<Value> indices;
    if (subscripts.size() > type.getRank())
      return fail(operand->loc, "'" + base->name + "' has " +
                                    Twine(type.getRank()) + " dimensions, got " +
                                    Twine(subscripts.size()) + " subscripts");
    for (auto [d, sub] : llvm::enumerate(subscripts)) {
      FailureOr<Value> i = indexExpr(*sub);
      if (failed(i))
        return failure();
      if (std::optional<int64_t> c = asConstant(*i);
          c && (*c < 0 || *c >= type.getShape()[d]))
        return fail(sub->loc, "event index " + Twine(*c) +
                                  " is out of range: '" + base->name +
                                  "' has " + Twine(type.getShape()[d]) +
                                  " elements",
                    "index with a value in [0, " +
                        Twine(type.getShape()[d]) + ")");
      indices.push_back(*i);
    }
    Value order;
    if (at) {
      if (type.getRank() != 1 || !subscripts.empty())
        return fail(at->loc, ".at(order) applies to a 1-D event array");
      FailureOr<Value> o = indexExpr(*at->args.front());
      if (failed(o))
        return failure();
      order = *o;
    }
    if (isWait) {
      EventWaitOp::create(builder, l, s->value, indices, order,
                          /*parity=*/Value());
    } else {
      SmallVector<Value> after;
      for (const std::string &name : stmt.after) {
        Symbol *f = lookup(name);
        if (!f || f->kind != Symbol::Kind::Future)
          return fail(stmt.loc, "'after " + name + "' needs a TMA future");
        auto ft = cast<FutureType>(f->value.getType());
        if (ft.getKind() != FutureKind::Tma || !ft.getAsync())
          return fail(stmt.loc, "'after " + name +
                                    "' needs the future of a tma.copy.async",
                      "wait on DMA futures; bind TMA loads with after");
        after.push_back(f->value);
      }
      if (!after.empty() && indices.size() != type.getRank() && !order)
        return fail(stmt.loc, "trigger ... after binds bytes to one event "
                              "element; index it");
      EventTriggerOp::create(builder, l, s->value, indices, order, after,
                             /*expectTx=*/IntegerAttr(),
                             /*issuer=*/IssuerAttr(), stmt.cluster);
    }
  }
  if (!futures.empty()) {
    WaitOp::create(builder, l, futures);
    // An awaited async MMA's accumulator is its future's data.
    for (Symbol *f : mmaFutures) {
      const Stmt *mmaStmt = f->origin;
      if (Symbol *acc = lookup(mmaStmt->operands[0]->name))
        acc->value = FutureDataOp::create(
                         builder, l,
                         cast<FutureType>(f->value.getType()).getDataType(),
                         f->value)
                         .getResult();
    }
  }
  return success();
}
