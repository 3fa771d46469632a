//===- IRGenMma.cpp - Croqtile MMA to IR ------------------------------------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#include "IRGenImpl.h"

using namespace mlir;
using namespace mlir::croq;
using namespace mlir::croq::croqtile;

//===----------------------------------------------------------------------===//
// MMA
//===----------------------------------------------------------------------===//

bool IRGen::isUnsignedOperand(Value view) {
  return cast<MemRefType>(view.getType()).getElementType().isInteger() &&
         unsignedTensors.contains(rootTensor(view));
}

Type IRGen::accumulatorType(const Stmt &fill, const AccumulatorFacts &facts,
                            bool report, const Stmt *mma) {
  // Not reported yet: the MMA that uses the accumulator reports it.
  std::optional<ScopedDiagnosticHandler> quiet;
  if (!report)
    quiet.emplace(context, [](Diagnostic &) { return success(); });
  Type element = elementType(
      fill.elemType.empty() ? defaultAccumulatorElement(facts.operandElement)
                            : fill.elemType,
      fill.loc);
  if (!element)
    return Type();
  // At the MMA, the shape's cause; the declaration gets a note.
  std::optional<ScopedDiagnosticHandler> noted;
  if (report && mma)
    noted.emplace(context, [&](Diagnostic &diag) {
      if (diag.getSeverity() == DiagnosticSeverity::Error)
        diag.attachNote(loc(fill.loc))
            << "the accumulator '" << fill.name << "' is declared here";
      return failure(); // on to the next handler, which prints it
    });
  return FragType::getChecked(
      [&] { return emitError(loc(mma ? mma->loc : fill.loc)); }, context,
      FragRole::Acc, ArrayRef<int64_t>{facts.rows, facts.cols}, element,
      facts.scope);
}

LogicalResult IRGen::reportUnshaped(const Symbol &acc, const Stmt *mma) {
  const Stmt &fill = *acc.origin;
  auto facts = sema.accumulators.find(&fill);
  if (facts != sema.accumulators.end()) {
    (void)accumulatorType(fill, facts->second, /*report=*/true, mma);
    return failure();
  }
  const Expr *operand = sema.unshapedAccumulators.lookup(&fill);
  InFlightDiagnostic diag =
      error(fill.loc, "cannot tell the shape of accumulator '" + fill.name +
                          "' before generating code: an operand of the MMA "
                          "that shapes it has no static shape croq can work "
                          "out from the declarations");
  diag.attachNote(loc(operand->loc))
      << "this operand: write its extents as constants, or as names of "
         "values that are not assigned again";
  return failure();
}

FailureOr<IRGen::AccumulatorRef> IRGen::accumulatorRef(const Expr &e,
                                                       StringRef use) {
  std::vector<const Expr *> indices;
  const Expr *nameExpr = subscriptedName(e, indices);
  Symbol *s = nameExpr ? lookup(nameExpr->name) : nullptr;
  if (s && s->kind == Symbol::Kind::Frag && indices.empty())
    return AccumulatorRef{s, e.name, Value()};
  if (!s || s->kind != Symbol::Kind::FragArray || indices.empty())
    return fail(e.loc, use + " takes an accumulator from mma.fill",
                "write `mc = mma.fill 0.0f;` (or `frag mc {0.0f};`) first");
  // Sema checked the subscript's rank and its constant indices.
  if (indices.size() != s->arrayShape.size())
    return internalError(e.loc, "an accumulator array indexed with the "
                                "wrong number of subscripts");
  Location l = loc(e.loc);
  Value index = constIndex(0, l);
  for (auto [arg, extent] : llvm::zip_equal(indices, s->arrayShape)) {
    FailureOr<Value> i = indexExpr(*arg);
    bool covered = false;
    if (failed(i) ||
        failed(checkBufferIndex(arg->loc, *i, extent, "this accumulator index",
                                "accumulators", &covered)))
      return failure();
    // An index neither proven in bounds nor checked by the host (one under
    // a condition, or read from memory) is checked where it is used.
    if (!covered) {
      Location at = loc(arg->loc);
      Value within = arith::AndIOp::create(
          builder, at,
          arith::CmpIOp::create(builder, at, arith::CmpIPredicate::sge, *i,
                                constIndex(0, at)),
          arith::CmpIOp::create(builder, at, arith::CmpIPredicate::slt, *i,
                                constIndex(extent, at)));
      cf::AssertOp::create(builder, at, within,
                           outOfBoundsMessage(arg->loc, "this accumulator index",
                                              extent, "accumulators"));
    }
    index = builder.createOrFold<arith::AddIOp>(
        l, builder.createOrFold<arith::MulIOp>(l, index, constIndex(extent, l)),
        *i);
  }
  return AccumulatorRef{s, nameExpr->name, index};
}

/// `index == k ? then : otherwise`, of fragments (an scf.if: arith.select
/// does not take them).
static Value chooseIf(OpBuilder &builder, Location l, Value index, int64_t k,
                      Value then, Value otherwise) {
  Value here = arith::CmpIOp::create(
      builder, l, arith::CmpIPredicate::eq, index,
      arith::ConstantIndexOp::create(builder, l, k));
  auto choice = scf::IfOp::create(builder, l, then.getType(), here,
                                  /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToEnd(choice.thenBlock());
  scf::YieldOp::create(builder, l, then);
  builder.setInsertionPointToEnd(choice.elseBlock());
  scf::YieldOp::create(builder, l, otherwise);
  return choice.getResult(0);
}

Value IRGen::accumulatorValue(const AccumulatorRef &acc, Location l) {
  if (!acc.index)
    return acc.symbol->value;
  ArrayRef<Value> elements = acc.symbol->fragElements;
  if (std::optional<int64_t> k = asConstant(acc.index))
    return elements[*k];
  // The element the index names (the last one past the others; the index
  // is checked in bounds).
  Value value = elements.back();
  for (int64_t k = elements.size() - 2; k >= 0; --k)
    value = chooseIf(builder, l, acc.index, k, elements[k], value);
  return value;
}

void IRGen::setAccumulator(const AccumulatorRef &acc, Value value,
                           Location l) {
  if (!acc.index) {
    acc.symbol->value = value;
    return;
  }
  SmallVector<Value, 0> &elements = acc.symbol->fragElements;
  if (std::optional<int64_t> k = asConstant(acc.index)) {
    elements[*k] = value;
    return;
  }
  for (auto [k, element] : llvm::enumerate(elements))
    element = chooseIf(builder, l, acc.index, k, value, element);
}

LogicalResult IRGen::mmaFill(const Stmt &stmt) {
  Location l = loc(stmt.loc);
  FailureOr<EVal> v = expr(*stmt.value);
  if (failed(v))
    return failure();
  // The fill value; an index literal is an i64 (croq.mma.fill converts it
  // to the element type).
  Value value = v->value;
  if (value.getType().isIndex())
    value = coerce(value, builder.getI64Type(), l);
  // `mma.fill acc[i][j], v;`: an element of an array of accumulators.
  if (stmt.target) {
    FailureOr<AccumulatorRef> acc = accumulatorRef(*stmt.target, "mma.fill");
    if (failed(acc))
      return failure();
    if (acc->symbol->unshaped)
      return success();
    setAccumulator(
        *acc,
        MmaFillOp::create(builder, l, acc->symbol->fragElements[0].getType(),
                          value),
        l);
    return success();
  }
  // `mma.fill acc, v;` of an existing fragment refills it: same type; of
  // an array, each element.
  Symbol *existing = stmt.refill ? lookup(stmt.name) : nullptr;
  if (existing && existing->kind == Symbol::Kind::FragArray) {
    if (existing->unshaped)
      return success();
    Value fill = MmaFillOp::create(
        builder, l, existing->fragElements[0].getType(), value);
    for (Value &element : existing->fragElements)
      element = fill;
    return success();
  }
  if (existing && existing->kind == Symbol::Kind::Frag) {
    Value fill = MmaFillOp::create(builder, l, existing->value.getType(), value);
    // A block-scaled accumulator's sum restarts; nothing is left to scale.
    if (existing->scaledSum) {
      existing->scaledSum = fill;
      existing->value = existing->zeroProduct;
      return success();
    }
    existing->value = fill;
    return success();
  }
  // The shape comes from the first MMA that accumulates into it, which
  // Sema found.
  auto facts = sema.accumulators.find(&stmt);
  if (facts == sema.accumulators.end() &&
      !sema.unshapedAccumulators.count(&stmt))
    return fail(stmt.loc, "cannot tell the shape of this accumulator: no "
                          "MMA uses '" + stmt.name + "'",
                "use it as the first operand of mma.row.row / mma.row.col");
  Type type = facts == sema.accumulators.end()
                  ? Type()
                  : accumulatorType(stmt, facts->second, /*report=*/false);
  bool unshaped = !type;
  if (unshaped)
    type = FragType::get(context, FragRole::Acc, {16, 16},
                         builder.getF32Type(), fragmentScope());
  Value fill = MmaFillOp::create(builder, l, type, value);
  Symbol s{Symbol::Kind::Frag, fill};
  s.origin = &stmt;
  s.unshaped = unshaped;
  if (!stmt.arrayDims.empty()) {
    // `frag mc[2][3] {v};`: each accumulator starts at v (Sema checked the
    // extents).
    s.kind = Symbol::Kind::FragArray;
    s.value = Value();
    int64_t count = 1;
    for (const ExprPtr &dim : stmt.arrayDims) {
      FailureOr<int64_t> extent = constantExpr(*dim);
      if (failed(extent))
        return failure();
      s.arrayShape.push_back(*extent);
      count *= *extent;
    }
    s.fragElements.assign(count, fill);
    declare(stmt.name, s);
    return success();
  }
  if (sema.blockScaled.contains(&stmt) && !unshaped) {
    // The sum starts at the value; the MMAs accumulate into a product
    // from zero, which each mma.scale adds to the sum.
    s.scaledSum = fill;
    s.zeroProduct = s.value = zeroFill(cast<FragType>(type), l);
  }
  declare(stmt.name, s);
  return success();
}

Value IRGen::loadRegisters(Value frag, Value registers, int64_t count,
                           Location l) {
  for (int64_t r = 0; r < count; ++r)
    frag = MmaSetElementOp::create(
        builder, l,
        memref::LoadOp::create(builder, l, registers,
                               ValueRange{constIndex(r, l)}),
        frag, r);
  return frag;
}

Value IRGen::zeroFill(FragType type, Location l) {
  Value zero = arith::ConstantOp::create(
      builder, l, builder.getZeroAttr(type.getElementType()));
  return MmaFillOp::create(builder, l, type, zero);
}

LogicalResult IRGen::rejectBlockScaled(const Symbol &acc, SMLoc at,
                                       StringRef name) {
  if (!acc.scaledSum)
    return success();
  return fail(at, "'" + name + "' is block-scaled (mma.scale scales it): it "
                  "takes only MMAs, mma.scale, mma.fill and mma.store",
              "store it to a buffer and work on the buffer");
}

FailureOr<Value> IRGen::scaledSum(const Stmt &stmt, Value sum, Value product) {
  Location l = loc(stmt.loc);
  auto type = cast<FragType>(sum.getType());
  if (type.getScope() != Level::Warpgroup || !isa<FloatType>(type.getElementType()))
    return fail(stmt.loc, "a block-scaled MMA scales a warpgroup's float "
                          "accumulator (wgmma); this one is " +
                              typeString(type),
                "run it in a `parallel ... : group-4` body");
  FailureOr<Value> rows = view(*stmt.scaleA);
  if (failed(rows))
    return failure();
  auto rowsType = cast<MemRefType>(rows->getType());
  int64_t m = type.getShape()[0];
  if (!MmaScaleOp::isRowScaleShape(rowsType.getShape(), m))
    return fail(stmt.scaleA->loc,
                "the row scales of a block-scaled MMA are one for each of "
                "the accumulator's " + Twine(m) + " rows, but this view is " +
                    typeString(rowsType),
                "pass a view of [" + Twine(m) + ", 1], as `scale_a.subspan(" +
                    Twine(m) + ", 1).at(block_m, k)`");
  if (!isa<FloatType>(rowsType.getElementType()))
    return fail(stmt.scaleA->loc, "the row scales of a block-scaled MMA are "
                                  "floats, but this view holds " +
                                      typeString(rowsType.getElementType()));
  FailureOr<EVal> factor = expr(*stmt.scaleB);
  if (failed(factor))
    return failure();
  Type factorType = factor->value.getType();
  if (!factorType.isIntOrIndexOrFloat() || factorType.isInteger(1))
    return fail(stmt.scaleB->loc, "the tile scale of a block-scaled MMA is a "
                                  "number");
  Value f = coerce(factor->value, builder.getF32Type(), l);
  return MmaScaleOp::create(builder, l, type, sum, product, *rows, f)
      .getResult();
}

LogicalResult IRGen::mmaScale(const Stmt &stmt) {
  const Expr &accExpr = *stmt.operands[0];
  Symbol *acc = accExpr.kind == Expr::Kind::Name ? lookup(accExpr.name) : nullptr;
  if (!acc || acc->kind != Symbol::Kind::Frag)
    return fail(accExpr.loc, "mma.scale scales an accumulator from mma.fill");
  if (acc->unshaped)
    return reportUnshaped(*acc);
  if (!acc->scaledSum)
    return internalError(stmt.loc, "the accumulator of mma.scale is not "
                                   "block-scaled");
  FailureOr<Value> sum = scaledSum(stmt, acc->scaledSum, acc->value);
  if (failed(sum))
    return failure();
  acc->scaledSum = *sum;
  acc->value = acc->zeroProduct;
  return success();
}

LogicalResult IRGen::mmaLoad(const Stmt &stmt) {
  if (stmt.swizzle && *stmt.swizzle != 32 && *stmt.swizzle != 64 &&
      *stmt.swizzle != 128)
    return fail(stmt.loc, ".swiz<" + Twine(*stmt.swizzle) +
                              "> is not a swizzle span",
                "use .swiz<32>, .swiz<64> or .swiz<128>");
  Location l = loc(stmt.loc);
  FailureOr<Value> source = view(*stmt.source);
  if (failed(source))
    return failure();
  auto type = cast<MemRefType>(source->getType());
  if (!type.hasStaticShape() || type.getRank() != 2)
    return fail(stmt.source->loc, "mma.load needs a 2-D view with a static "
                                  "shape, got " + typeString(type));
  if (stmt.refill)
    return mmaLoadInto(stmt, *source);
  auto it = sema.loadRoles.find(&stmt);
  if (it != sema.loadRoles.end() && it->second == FragRole::Meta) {
    if (stmt.swizzle)
      return fail(stmt.loc, "sparsity metadata is read as it is stored, not "
                            "swizzled",
                  "drop .swiz<" + Twine(*stmt.swizzle) + ">");
    // Sparsity metadata: its fragment names A's element type, which the
    // sparse MMA that reads it knows; it loads the view there.
    Symbol s{Symbol::Kind::Tensor, *source};
    s.origin = &stmt;
    declare(stmt.name, s);
    return success();
  }
  if (it == sema.loadRoles.end())
    return fail(stmt.loc, "no MMA uses '" + stmt.name +
                              "', so its operand role is unknown",
                "pass it to mma.row.row / mma.row.col, or drop the load");
  auto fragType =
      FragType::getChecked([&] { return emitError(l); }, context, it->second,
                           type.getShape(), type.getElementType(),
                           fragmentScope());
  if (!fragType)
    return failure();
  auto op = MmaLoadOp::create(builder, l, fragType, *source,
                              stmt.swizzle ? builder.getI64IntegerAttr(*stmt.swizzle)
                                           : IntegerAttr());
  // An MMA reads the fragment's bytes as unsigned (.u8) when they are.
  if (isUnsignedOperand(*source))
    unsignedValues.insert(op.getResult());
  Symbol s{Symbol::Kind::Frag, op.getResult()};
  s.origin = &stmt;
  declare(stmt.name, s);
  return success();
}

LogicalResult IRGen::mmaLoadInto(const Stmt &stmt, Value source) {
  // Each of the warpgroup's threads reads its own elements of the view
  // into its registers of the tile, as an apply over the tile would.
  Location l = loc(stmt.loc);
  Symbol *s = lookup(stmt.name);
  FailureOr<int> id = s && s->kind == Symbol::Kind::Tile
                          ? FailureOr<int>(s->tile)
                          : FailureOr<int>(failure());
  if (failed(id))
    return fail(stmt.nameLoc, "'" + stmt.name + "' is not a register tile");
  const RegisterTile &tile = tiles[*id];
  auto type = cast<MemRefType>(source.getType());
  if (tile.layout != TileLayout::WgmmaAcc)
    return fail(stmt.nameLoc,
                "mma.load src, " + stmt.name + " fills a warpgroup's [64, K] "
                "tile (wgmma's A from registers), but '" + stmt.name +
                    "' is not held by a warpgroup",
                "declare it in the block whose warpgroup uses it, or in "
                "the warpgroup's body");
  if (ArrayRef<int64_t>(tile.shape) != type.getShape() ||
      tile.element != type.getElementType())
    return fail(stmt.loc, "mma.load src, " + stmt.name + " loads a " +
                              typeString(type) + " view into a frag of " +
                              typeString(MemRefType::get(tile.shape,
                                                         tile.element)) +
                              ": shapes and element types must match");
  ParallelOp enclosing = enclosingParallel();
  if (!enclosing || enclosing.getLevel() != Level::Warpgroup)
    return fail(stmt.loc, "mma.load src, " + stmt.name + " runs in the "
                          "warpgroup that holds the tile: write it in a "
                          "`parallel ... : group-4` body");
  Value registers = tile.registers;
  int64_t count = tile.registerCount(), cols = tile.cols();
  auto threads =
      ParallelOp::create(builder, l, Level::Thread,
                         ValueRange{constIndex(128, l)}, /*async=*/false,
                         Value(), TypeRange{});
  return parallelBody(threads, {}, [&]() -> LogicalResult {
    for (int64_t r = 0; r < count; ++r) {
      auto coords = MmaCoordsOp::create(
          builder, l,
          FragType::get(context, FragRole::Acc, {64, cols},
                        builder.getF32Type(), Level::Warpgroup),
          r);
      Value v = memref::LoadOp::create(
          builder, l, source, ValueRange{coords.getRow(), coords.getCol()});
      memref::StoreOp::create(builder, l, v, registers,
                              ValueRange{constIndex(r, l)});
    }
    return success();
  });
}

LogicalResult IRGen::mma(const Stmt &stmt) {
  Location l = loc(stmt.loc);
  const Expr &accExpr = *stmt.operands[0];
  FailureOr<AccumulatorRef> accRef =
      accumulatorRef(accExpr, "the first MMA operand");
  if (failed(accRef))
    return failure();
  Symbol *acc = accRef->symbol;
  const std::string &accName = accRef->name;
  // Operands: fragments from mma.load, or views (D2) loaded here.
  SmallVector<Value> operands;
  SmallVector<Symbol *> operandSymbols;
  for (int i = 1; i <= 2; ++i) {
    const Expr &e = *stmt.operands[i];
    Symbol *s = e.kind == Expr::Kind::Name ? lookup(e.name) : nullptr;
    if (s && s->kind == Symbol::Kind::Frag) {
      if (failed(rejectBlockScaled(*s, e.loc, e.name)))
        return failure();
      operands.push_back(s->value);
      operandSymbols.push_back(s);
      continue;
    }
    if (s && s->kind == Symbol::Kind::Tile) {
      // A warpgroup's [64, K] tile in the accumulator layout is wgmma's A
      // operand from registers (the RS form): its registers as an
      // accumulator-layout fragment. 8-bit operands are K-major only.
      const RegisterTile &tile = tiles[s->tile];
      unsigned bits = tile.element.getIntOrFloatBitWidth();
      bool layoutOk = bits == 8 ? stmt.layout == "row_row"
                                : StringRef(stmt.layout).starts_with("row");
      if (i != 1 || tile.layout != TileLayout::WgmmaAcc ||
          (bits != 16 && bits != 8) || !layoutOk)
        return fail(e.loc, "a frag is an MMA operand only as A, from the "
                           "registers of a warpgroup's [64, K] tile: of f16 "
                           "or bf16 with a row.row or row.col layout, or of "
                           "an 8-bit type with row.row",
                    "store the frag to a shared buffer and use that as the "
                    "operand");
      auto type = FragType::get(context, FragRole::Acc, tile.shape,
                                tile.element, Level::Warpgroup);
      operands.push_back(loadRegisters(zeroFill(type, l), tile.registers,
                                       tile.registerCount(), l));
      if (tile.isUnsigned)
        unsignedValues.insert(operands.back());
      operandSymbols.push_back(nullptr);
      continue;
    }
    FailureOr<Value> v = view(e);
    if (failed(v))
      return failure();
    auto type = cast<MemRefType>(v->getType());
    if (!type.hasStaticShape() || type.getRank() != 2)
      return fail(e.loc, "an MMA operand view needs a static 2-D shape");
    auto fragType = FragType::getChecked(
        [&] { return emitError(loc(e.loc)); }, context,
        i == 1 ? FragRole::A : FragRole::B, type.getShape(),
        type.getElementType(), fragmentScope());
    if (!fragType)
      return failure();
    operands.push_back(MmaLoadOp::create(builder, l, fragType, *v, IntegerAttr()));
    operandSymbols.push_back(nullptr);
    if (isUnsignedOperand(*v))
      unsignedValues.insert(operands.back());
  }
  // The operands are fine: an accumulator its mma.fill could not type is
  // this MMA's error.
  if (acc->unshaped)
    return reportUnshaped(*acc, &stmt);
  if (accRef->index && stmt.async)
    return fail(stmt.loc, "an async MMA into an element of an array of "
                          "accumulators is not supported",
                "drop .async, or declare the accumulator on its own");
  Value accValue = accumulatorValue(*accRef, l);
  auto a = cast<FragType>(operands[0].getType());
  auto b = cast<FragType>(operands[1].getType());
  bool aRow = StringRef(stmt.layout).starts_with("row");
  bool bRow = StringRef(stmt.layout).ends_with("row");
  int64_t m = a.getShape()[aRow ? 0 : 1], ka = a.getShape()[aRow ? 1 : 0];
  int64_t n = b.getShape()[bRow ? 0 : 1], kb = b.getShape()[bRow ? 1 : 0];
  auto accType = cast<FragType>(accValue.getType());
  // Operands held at another scope than this MMA's (loaded outside the
  // group-4 parallel, or inside a different one).
  {
    Level here = fragmentScope();
    for (auto [i, symbol] : llvm::enumerate(operandSymbols)) {
      auto type = cast<FragType>(operands[i].getType());
      if (type.getScope() == here)
        continue;
      const Expr &e = *stmt.operands[i + 1];
      return fail(e.loc,
                  "'" + (symbol ? e.name : std::string("this operand")) +
                      "' is a " + stringifyLevel(type.getScope()) +
                      " fragment, but this MMA runs at " +
                      stringifyLevel(here) + " scope",
                  "load it with mma.load inside the same parallel as the MMA");
    }
  }
  std::string layoutName = stmt.layout;
  std::replace(layoutName.begin(), layoutName.end(), '_', '.');
  // mma.row.row.sp: A holds half of K, the metadata says which half.
  Value meta;
  if (stmt.operands.size() > 3) {
    if (2 * ka != kb)
      return fail(stmt.loc, "A of a sparse MMA holds the two kept elements "
                            "of each four along K, so its K is half of B's: "
                            "A is " + Twine(a.getShape()[0]) + "x" +
                                Twine(a.getShape()[1]) + " and B is " +
                                Twine(b.getShape()[0]) + "x" +
                                Twine(b.getShape()[1]),
                  "pass A as [M, K / 2] and B as [N, K]");
    FailureOr<Value> m = sparseMetadata(stmt, accType, a, kb);
    if (failed(m))
      return failure();
    meta = *m;
    ka *= 2;
  }
  if (ka != kb)
    return fail(stmt.loc, "MMA operand shapes do not agree: A is " +
                              Twine(a.getShape()[0]) + "x" + Twine(a.getShape()[1]) +
                              " and B is " + Twine(b.getShape()[0]) + "x" +
                              Twine(b.getShape()[1]) + " for mma." +
                              layoutName +
                              ", so their K extents " + Twine(ka) + " and " +
                              Twine(kb) + " differ",
                "row.row takes A [M, K] and B [N, K]; row.col takes B [K, N]");
  if ((accType.getShape()[0] != m || accType.getShape()[1] != n))
    return fail(stmt.loc, "the accumulator '" + accName + "' is " +
                              Twine(accType.getShape()[0]) + "x" +
                              Twine(accType.getShape()[1]) +
                              " but the operands make a " + Twine(m) + "x" +
                              Twine(n) + " product",
                "use one accumulator per MMA shape");
  if (a.getElementType() != b.getElementType())
    return fail(stmt.loc, "the MMA operands have different element types: A "
                          "is " + typeString(a.getElementType()) + " and B "
                          "is " + typeString(b.getElementType()),
                "load both operands from tensors of one element type");
  // Integer products accumulate in integers, float products in floats.
  if (a.getElementType().isInteger() != accType.getElementType().isInteger())
    return fail(stmt.loc,
                "an MMA of " +
                    (a.getElementType().isInteger()
                         ? (unsignedValues.contains(operands[0]) ? "u" : "s") +
                               Twine(a.getElementType().getIntOrFloatBitWidth())
                         : Twine(typeString(a.getElementType()))) +
                    " operands accumulates in " +
                    (a.getElementType().isInteger() ? "s32" : "f16 or f32") +
                    ", but '" + accName + "' holds " +
                    typeString(accType.getElementType()),
                a.getElementType().isInteger()
                    ? "fill the accumulator as s32: `mma.fill.s32 0`"
                    : "fill the accumulator as a float: `mma.fill.f32 0.0f`");
  // A from registers (the RS form) is an accumulator-layout fragment.
  if ((a.getRole() != FragRole::A && a.getRole() != FragRole::Acc) ||
      b.getRole() != FragRole::B)
    return fail(stmt.loc, "an operand fragment is used as both A and B",
                "load the operand once per role");
  auto layout = *symbolizeMmaLayout(stmt.layout);
  bool unsignedA = unsignedValues.contains(operands[0]);
  bool unsignedB = unsignedValues.contains(operands[1]);
  if (stmt.async && acc->scaledSum)
    return fail(stmt.loc, "an async MMA into the block-scaled '" +
                              accName + "' is not supported",
                "drop .async: mma.scale waits for the product anyway");
  if (stmt.scaleA) {
    // mma.row.row.scale: the product from zero, scaled into the sum.
    Value product = MmaOp::create(builder, l, accType, layout,
                                  zeroFill(accType, l), operands[0],
                                  operands[1], meta, /*async=*/false);
    if (acc->scaledSum) {
      FailureOr<Value> scaled = scaledSum(stmt, acc->scaledSum, product);
      if (failed(scaled))
        return failure();
      acc->scaledSum = *scaled;
      return success();
    }
    FailureOr<Value> scaled = scaledSum(stmt, accValue, product);
    if (failed(scaled))
      return failure();
    setAccumulator(*accRef, *scaled, l);
    return success();
  }
  if (stmt.async) {
    Type futureType = FutureType::get(context, FutureKind::Mma, true, accType);
    auto op = MmaOp::create(builder, l, futureType, layout, accValue,
                            operands[0], operands[1], /*meta=*/Value(),
                            /*async=*/true, unsignedA, unsignedB);
    Symbol s{Symbol::Kind::Future, op.getResult()};
    s.origin = &stmt;
    declare(stmt.name, s);
    return success();
  }
  auto op = MmaOp::create(builder, l, accType, layout, accValue, operands[0],
                          operands[1], meta, /*async=*/false, unsignedA,
                          unsignedB);
  setAccumulator(*accRef, op.getResult(), l);
  return success();
}

FailureOr<Value> IRGen::sparseMetadata(const Stmt &stmt, FragType acc,
                                       FragType a, int64_t k) {
  Location l = loc(stmt.loc);
  const Expr &e = *stmt.operands[3];
  Symbol *s = e.kind == Expr::Kind::Name ? lookup(e.name) : nullptr;
  auto role = s && s->origin ? sema.loadRoles.find(s->origin)
                             : sema.loadRoles.end();
  if (!s || s->kind != Symbol::Kind::Tensor || !s->origin ||
      s->origin->kind != Stmt::Kind::MmaLoad || role == sema.loadRoles.end() ||
      role->second != FragRole::Meta)
    return fail(e.loc, "the sparsity metadata of a sparse MMA is loaded with "
                       "mma.load before the MMA",
                "write `me = mma.load meta_s.chunkat(_, k);` and pass `me`");
  if (acc.getScope() != Level::Warpgroup || stmt.layout != "row_row")
    return fail(stmt.loc, "a sparse MMA is a warpgroup's wgmma.sp, of "
                          "row.row operands",
                "run it in a `parallel ... : group-4` body, A as [M, K / 2] "
                "and B as [N, K]");
  auto view = cast<MemRefType>(s->value.getType());
  int64_t m = acc.getShape()[0];
  if (!view.getElementType().isInteger(8) ||
      view.getShape() != ArrayRef<int64_t>{m, k / 8})
    return fail(e.loc, "the sparsity metadata of this " + Twine(m) + " x " +
                           Twine(k) + " MMA is a u8 view of [" + Twine(m) +
                           ", " + Twine(k / 8) + "] (two 2-bit positions per "
                           "four elements of K), got " + typeString(view));
  auto type = FragType::getChecked([&] { return emitError(l); }, context,
                                   FragRole::Meta, ArrayRef<int64_t>{m, k},
                                   a.getElementType(), Level::Warpgroup);
  if (!type)
    return failure();
  return MmaLoadOp::create(builder, loc(s->origin->loc), type, s->value,
                           IntegerAttr())
      .getResult();
}

LogicalResult IRGen::mmaStore(const Stmt &stmt) {
  for (const auto &[at, hint] : stmt.ignoredHints)
    emitWarning(loc(at), "mma.store.async is made synchronously: croq "
                         "stores the accumulator before the next statement, "
                         "which the async form allows");
  FailureOr<AccumulatorRef> accRef =
      accumulatorRef(*stmt.operands[0], "mma.store");
  if (failed(accRef))
    return failure();
  Symbol *acc = accRef->symbol;
  if (acc->unshaped)
    return reportUnshaped(*acc);
  Value accValue = accumulatorValue(*accRef, loc(stmt.loc));
  FailureOr<Value> dest = view(*stmt.dest);
  if (failed(dest))
    return failure();
  auto type = cast<MemRefType>(dest->getType());
  auto frag = cast<FragType>(accValue.getType());
  SmallVector<int64_t> shape(frag.getShape());
  if (stmt.transpose)
    std::swap(shape[0], shape[1]);
  if (frag.getElementType().isInteger() != type.getElementType().isInteger())
    return fail(stmt.loc, "mma.store cannot convert the accumulator's " +
                              typeString(frag.getElementType()) +
                              " elements to " +
                              typeString(type.getElementType()),
                "store into a tensor of integers for an integer accumulator, "
                "of floats for a float one");
  // A view whose extents are the accumulator's or known only at run time
  // (`c.view(rows, 64).from(...)` of a tail tile, the tutorial's grouped
  // GEMM): the store is masked to the view, as mma.store.mask would be.
  Value implicitRows, implicitCols;
  if (type.getShape() != ArrayRef<int64_t>(shape) && !stmt.transpose &&
      stmt.operands.size() == 1 && type.getRank() == 2 &&
      llvm::all_of(llvm::seq<int64_t>(0, 2), [&](int64_t d) {
        return type.isDynamicDim(d) || type.getDimSize(d) == shape[d];
      })) {
    Location l = loc(stmt.loc);
    if (type.isDynamicDim(0))
      implicitRows = memref::DimOp::create(builder, l, *dest, 0);
    if (type.isDynamicDim(1)) {
      implicitCols = memref::DimOp::create(builder, l, *dest, 1);
      // The mask's columns come after its rows.
      if (!implicitRows)
        implicitRows = constIndex(shape[0], l);
    }
    auto [strides, offset] = type.getStridesAndOffset();
    auto meta = memref::ExtractStridedMetadataOp::create(builder, l, *dest);
    SmallVector<OpFoldResult> sizes, steps;
    for (int64_t d = 0; d < 2; ++d) {
      sizes.push_back(builder.getIndexAttr(shape[d]));
      steps.push_back(ShapedType::isDynamic(strides[d])
                          ? OpFoldResult(meta.getStrides()[d])
                          : OpFoldResult(builder.getIndexAttr(strides[d])));
    }
    auto full = MemRefType::get(
        shape, type.getElementType(),
        StridedLayoutAttr::get(context, ShapedType::kDynamic, strides),
        type.getMemorySpace());
    *dest = memref::ReinterpretCastOp::create(builder, l, full, *dest,
                                              OpFoldResult(meta.getOffset()),
                                              sizes, steps)
                .getResult();
    type = full;
  }
  if (type.getShape() != ArrayRef<int64_t>(shape))
    return fail(stmt.dest->loc,
                Twine(stmt.transpose ? "mma.store.transp: the view is not "
                                       "the accumulator's transposed "
                                     : "mma.store: the view is not the "
                                       "accumulator's ") +
                    Twine(shape[0]) + "x" + Twine(shape[1]) + " shape",
                "store into a view of that shape");
  // mma.store.mask: the valid rows (and columns) of the view.
  Value rows = implicitRows, cols = implicitCols;
  if (stmt.operands.size() > 1) {
    FailureOr<Value> r = indexExpr(*stmt.operands[1]);
    if (failed(r))
      return failure();
    rows = *r;
  }
  if (stmt.operands.size() > 2) {
    FailureOr<Value> c = indexExpr(*stmt.operands[2]);
    if (failed(c))
      return failure();
    cols = *c;
  }
  // A block-scaled accumulator: the sum, with what was not scaled yet.
  Value value = acc->scaledSum
                    ? Value(MmaScaleOp::create(builder, loc(stmt.loc),
                                               acc->scaledSum, accValue,
                                               Value(), Value()))
                    : accValue;
  MmaStoreOp::create(builder, loc(stmt.loc), value, *dest, stmt.transpose,
                     rows, cols);
  return success();
}
