//===- IRGenFrag.cpp - Croqtile register tiles to IR -----------------------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//
//
// `frag T[dims] x {v};` declares a register tile: one logical [R] or [R, C]
// tile per instance of the parallel it is declared in, dealt out over that
// instance's threads as TileLayout describes. In a thread-level parallel
// the rows go round the threads; in a `group-4` body a [64, N] tile takes
// the wgmma accumulator layout and a [64] tile its rows, so that tiles and
// MMA accumulators line up element for element.
//
// `apply {i, j} in x.span body` runs the body once per logical element of a
// tile or a warpgroup accumulator. Each thread runs it for the elements it
// holds, so the loops are unrolled over the thread's registers, and every
// tile or accumulator access in the body must be one the thread holds: the
// apply's own indices on a tile of the same layout, or the row index on a
// tile of the rows. The built-ins reduce_max / reduce_sum (along rows),
// all_reduce_sum / all_reduce_max and copy act on whole tiles.
//
//===----------------------------------------------------------------------===//

#include "IRGenImpl.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

using namespace mlir;
using namespace mlir::croq;
using namespace mlir::croq::croqtile;

/// The most registers one thread's tile may take: beyond it the unrolled
/// applies grow without bound and the registers spill.
static constexpr int64_t kMaxTileRegisters = 1024;

/// The accumulator type whose layout a warpgroup tile of `cols` columns
/// shares (for croq.mma.coords).
static FragType layoutType(MLIRContext *context, int64_t cols) {
  return FragType::get(context, FragRole::Acc, {64, cols},
                       Float32Type::get(context), Level::Warpgroup);
}

/// A warpgroup accumulator of 64 rows, the only accumulators whose
/// elements an apply reaches.
static bool isWarpgroupAcc(FragType type) {
  return type.getScope() == Level::Warpgroup && type.getRole() == FragRole::Acc &&
         type.getShape()[0] == 64 && type.getShape()[1] % 8 == 0;
}

Value IRGen::overQuad(Value value, function_ref<Value(Value, Value)> combine,
                      Location l) {
  for (int64_t offset : {1, 2}) {
    Value other =
        gpu::ShuffleOp::create(
            builder, l, value,
            arith::ConstantIntOp::create(builder, l, builder.getI32Type(), offset),
            arith::ConstantIntOp::create(builder, l, builder.getI32Type(), 32),
            gpu::ShuffleMode::XOR)
            .getShuffleResult();
    value = combine(value, other);
  }
  return value;
}

/// A thread-level parallel that names the 128 threads of one warpgroup:
/// `t by 128 : thread` directly in a `group-4` body (the comma form
/// `p by n : group-4, t by 128 : thread`).
static bool namesWarpgroupThreads(ParallelOp p) {
  if (!p || p.getLevel() != Level::Thread)
    return false;
  ParallelOp parent = p.getParentParallel();
  return parent && parent.getLevel() == Level::Warpgroup &&
         p->getParentOp() == parent.getOperation() &&
         p.getStaticInstanceCount() == std::optional<int64_t>(128);
}

/// The shapes a warpgroup's frags take: a wgmma accumulator's [64, N] (N a
/// multiple of 8 up to 256) or its rows, [64].
static bool isWarpgroupTileShape(ArrayRef<int64_t> shape) {
  return (shape.size() == 2 && shape[0] == 64 && shape[1] % 8 == 0 &&
          shape[1] <= 256) ||
         (shape.size() == 1 && shape[0] == 64);
}


Value IRGen::registerBuffer(MemRefType type, Location l, ParallelOp owner) {
  // At the top of the kernel: LLVM keeps a private buffer in registers
  // only when its alloca is in the entry block, and one inside a loop
  // would take new stack space each iteration. Each thread runs the
  // kernel's body, so the buffer is still its own.
  OpBuilder::InsertionGuard guard(builder);
  ParallelOp kernel = openParallels.empty() ? owner : openParallels.front();
  for (ParallelOp p = kernel.getParentParallel(); p; p = p.getParentParallel())
    kernel = p;
  builder.setInsertionPointToStart(&kernel.getBody().front());
  return memref::AllocaOp::create(builder, l, type);
}

LogicalResult IRGen::tileDecl(const Stmt &stmt, Type element) {
  Location l = loc(stmt.loc);
  ParallelOp owner = insideParallel() ? enclosingParallel() : ParallelOp();
  // A block of one warpgroup holds frags as that warpgroup does.
  bool warpgroup = owner && (owner.getLevel() == Level::Warpgroup ||
                             (owner.getLevel() == Level::Block &&
                              warpgroupTileOwners.contains(owner)));
  if (!owner || (owner.getLevel() != Level::Thread && !warpgroup))
    return fail(stmt.loc, "a frag tile is held by the threads of a parallel: "
                          "declare it in the body of a thread-level parallel "
                          "(`parallel t by T : thread`), of a warpgroup "
                          "(`: group-4`), or of a block whose threads are one "
                          "warpgroup (`parallel by 1 : group-4` in it)");
  if (!stmt.arrayDims.empty())
    return fail(stmt.arrayDims.front()->loc,
                "arrays of register tiles are not supported",
                "for MMA accumulators, declare an array of them, whose shape "
                "the MMA gives: `frag.f32 " + stmt.name + "[2] {0.0f};`; "
                "otherwise declare each tile");
  if (stmt.dims.empty() || stmt.dims.size() > 2)
    return fail(stmt.loc, "a frag is a 1-D or 2-D tile: frag T[R] x; or "
                          "frag T[R, C] x;");
  RegisterTile tile;
  tile.element = element;
  tile.isUnsigned = isUnsignedName(stmt.elemType);
  tile.owner = owner;
  for (const ExprPtr &d : stmt.dims) {
    FailureOr<int64_t> c = constantExpr(*d);
    if (failed(c))
      return failure();
    if (*c <= 0)
      return fail(d->loc, "frag dimensions must be positive");
    tile.shape.push_back(*c);
  }
  // The threads of one warpgroup named one by one hold its tiles of
  // accumulator shape as the warpgroup does when the body computes with
  // MMAs, so that they line up with the accumulators (a tile's logical
  // elements are the same either way); without MMAs they keep the thread
  // layout, so that frags of other shapes still line up with them.
  if (namesWarpgroupThreads(owner) && warpgroupTileOwners.contains(owner) &&
      isWarpgroupTileShape(tile.shape)) {
    warpgroup = true;
    tile.owner = owner.getParentParallel();
  }
  if (warpgroup) {
    // The wgmma accumulator layout, or its rows.
    tile.threads = 128;
    bool acc = tile.shape.size() == 2;
    if (!isWarpgroupTileShape(tile.shape))
      return fail(stmt.loc, "a warpgroup's frag is [64, N] (N a multiple of "
                            "8 up to 256: the layout of a wgmma accumulator) "
                            "or [64] (the rows of one)",
                  "declare other tiles in a thread-level parallel");
    tile.layout = acc ? TileLayout::WgmmaAcc : TileLayout::WgmmaRows;
  } else {
    // The instance's threads and this thread's rank: the thread parallel's
    // indices, row-major over its (constant) bounds.
    tile.layout = TileLayout::RowCyclic;
    tile.threads = 1;
    Value rank = constIndex(0, l);
    for (auto [bound, index] :
         llvm::zip_equal(owner.getBounds(), owner.getIndices())) {
      std::optional<int64_t> c = asConstant(bound);
      if (!c)
        return fail(stmt.loc, "a frag needs a thread-level parallel of "
                              "constant extent");
      tile.threads *= *c;
      rank = builder.createOrFold<arith::AddIOp>(
          l, builder.createOrFold<arith::MulIOp>(l, rank, constIndex(*c, l)),
          index);
    }
    tile.rank = rank;
  }
  int64_t registers = tile.registerCount();
  if (registers > kMaxTileRegisters)
    return fail(stmt.loc, "this frag takes " + Twine(registers) +
                              " registers in each thread (" +
                              Twine(tile.rowsPerThread()) + " rows of " +
                              Twine(tile.cols()) + "); croq allows " +
                              Twine(kMaxTileRegisters),
                "use a smaller tile or more threads");
  auto type = MemRefType::get(
      {registers}, element, MemRefLayoutAttrInterface(),
      gpu::AddressSpaceAttr::get(context, gpu::AddressSpace::Private));
  tile.registers = registerBuffer(type, l, owner);
  if (tile.layout == TileLayout::WgmmaRows)
    tile.snapshot = registerBuffer(type, l, owner);
  if (stmt.value) {
    FailureOr<EVal> v = expr(*stmt.value);
    if (failed(v) || failed(checkInitializer(*stmt.value, v->value, element)))
      return failure();
    Value fill = coerce(v->value, element, l);
    for (int64_t r = 0; r < registers; ++r)
      memref::StoreOp::create(builder, l, fill, tile.registers,
                              ValueRange{constIndex(r, l)});
  }
  Symbol symbol{Symbol::Kind::Tile, tile.registers};
  symbol.tile = tiles.size();
  tiles.push_back(std::move(tile));
  return declareNew(stmt.name, stmt.nameLoc, symbol);
}

FailureOr<int> IRGen::tileOperand(const Expr &e, StringRef what) {
  Symbol *s = e.kind == Expr::Kind::Name ? lookup(e.name) : nullptr;
  if (!s || s->kind != Symbol::Kind::Tile)
    return fail(e.loc, what + " takes frag tiles (frag T[..] x;)");
  return s->tile;
}

LogicalResult IRGen::apply(const Stmt &stmt) {
  // Sema checked its form (`apply {i, j} in x.span`) and its body.
  const Expr &span = *stmt.source;
  Symbol *s = lookup(span.base->name);
  ApplyPoint point;
  int64_t registers;
  if (s && s->kind == Symbol::Kind::Frag) {
    if (s->unshaped)
      return reportUnshaped(*s);
    if (failed(rejectBlockScaled(*s, span.base->loc, span.base->name)))
      return failure();
    // A warpgroup MMA accumulator: the wgmma layout.
    auto type = cast<FragType>(s->value.getType());
    if (!isWarpgroupAcc(type))
      return fail(span.loc, "apply runs over warpgroup accumulators (of a "
                            "group-4 MMA); '" + span.base->name + "' is not one",
                  "store a warp's accumulator (mma.store) and work on the "
                  "stored tile");
    point.layout = TileLayout::WgmmaAcc;
    point.owner = nullptr;
    point.rows = 64;
    point.cols = type.getShape()[1];
    registers = point.cols / 2;
  } else {
    FailureOr<int> id = tileOperand(*span.base, "apply");
    if (failed(id))
      return failure();
    const RegisterTile &tile = tiles[*id];
    point.layout = tile.layout;
    point.owner = tile.owner;
    point.rows = tile.rows();
    point.cols = tile.cols();
    registers = tile.registerCount();
    if (stmt.operands.size() != tile.shape.size())
      return fail(stmt.loc, "this apply names " + Twine(stmt.operands.size()) +
                                " indices, but the frag has " +
                                Twine(tile.shape.size()) + " dimensions");
  }
  if (point.layout == TileLayout::WgmmaAcc && stmt.operands.size() != 2)
    return fail(stmt.loc, "this apply names " + Twine(stmt.operands.size()) +
                              " indices, but '" + span.base->name +
                              "' has 2 dimensions");
  for (const ExprPtr &name : stmt.operands) {
    if (name->name == "_")
      return fail(name->loc, "'_' cannot name an index");
    point.names.push_back(name->name);
  }
  Location l = loc(stmt.loc);
  // Runs the body at `at` with the indices bound to `row` (and `col`),
  // under `inside` when it is set.
  auto body = [&](const ApplyPoint &at, Value row, Value col,
                  Value inside) -> LogicalResult {
    applyPoint = at;
    auto reset = llvm::scope_exit([&] { applyPoint.reset(); });
    push();
    declare(at.names[0], Symbol{Symbol::Kind::Scalar, row,
                                constIndex(at.rows, l)});
    if (at.names.size() > 1)
      declare(at.names[1], Symbol{Symbol::Kind::Scalar, col,
                                  constIndex(at.cols, l)});
    LogicalResult result =
        inside ? guarded(inside, stmt.body, l) : statements(stmt.body);
    pop();
    return result;
  };
  if (point.layout != TileLayout::RowCyclic) {
    // Each of the warpgroup's threads runs the body for its own registers:
    // a thread-level parallel of its 128 threads, so that stores in the
    // body are each thread's (not one elected thread's, as between
    // levels). What the body assigns (accumulators) flows out as results.
    // In a thread-level parallel that names the warpgroup's threads, each
    // already runs alone.
    auto eachRegister = [&]() -> LogicalResult {
      // The registers' elements, as croq.mma.coords places them: register
      // r of a row tile is the row of accumulator register 2r.
      for (int64_t r = 0; r < registers; ++r) {
        ApplyPoint at = point;
        at.reg = r;
        bool rows = point.layout == TileLayout::WgmmaRows;
        auto coords = MmaCoordsOp::create(
            builder, l, layoutType(context, rows ? 8 : point.cols),
            rows ? 2 * r : r);
        if (failed(body(at, coords.getRow(), coords.getCol(), Value())))
          return failure();
      }
      return success();
    };
    ParallelOp enclosing = enclosingParallel();
    if (namesWarpgroupThreads(enclosing))
      return eachRegister();
    // Inside a warp or a thread parallel of some other size, the threads
    // that hold the registers are not this region's.
    if (enclosing && (enclosing.getLevel() == Level::Thread ||
                      enclosing.getLevel() == Level::Warp))
      return fail(stmt.loc,
                  "this apply runs over '" + span.base->name +
                      "', whose elements the 128 threads of a warpgroup "
                      "hold, but it is inside a " +
                      stringifyLevel(enclosing.getLevel()) +
                      "-level parallel that is not those threads",
                  "write the apply in the warpgroup's body (or in a "
                  "`parallel t by 128 : thread` directly in it)");
    SmallVector<Carried> carriedNames = carriedOutOfParallel(stmt.body);
    auto threads = ParallelOp::create(builder, l, Level::Thread,
                                      ValueRange{constIndex(128, l)},
                                      /*async=*/false, Value(),
                                      typesOf(carriedNames));
    return parallelBody(threads, carriedNames, eachRegister);
  }
  // A copy: the body may declare frags, which grow `tiles`.
  const RegisterTile tile = tiles[s->tile];
  // Rows past the tile's end (R not a multiple of T) are no thread's.
  bool ragged = tile.rows() % tile.threads != 0;
  for (int64_t q = 0; q < tile.rowsPerThread(); ++q) {
    Value row = builder.createOrFold<arith::AddIOp>(
        l, constIndex(q * tile.threads, l), tile.rank);
    Value inside;
    if (ragged && (q + 1) * tile.threads > tile.rows())
      inside = builder.createOrFold<arith::CmpIOp>(
          l, arith::CmpIPredicate::ult, row, constIndex(tile.rows(), l));
    for (int64_t c = 0; c < tile.cols(); ++c) {
      ApplyPoint at = point;
      at.q = q;
      at.col = c;
      if (failed(body(at, row, constIndex(c, l), inside)))
        return failure();
    }
  }
  return success();
}

FailureOr<int64_t> IRGen::applyRegister(const Expr &at, TileLayout layout,
                                        Operation *owner,
                                        ArrayRef<int64_t> shape) {
  const std::string &name = at.base->name;
  if (!applyPoint)
    return fail(at.loc, "the elements of '" + name + "' are spread over the "
                        "threads: read and write them inside an apply",
                "write apply {i, j} in " + name + ".span { ... }");
  const ApplyPoint &point = *applyPoint;
  auto isName = [&](const ExprPtr &e, size_t k) {
    return k < point.names.size() && e->kind == Expr::Kind::Name &&
           e->name == point.names[k];
  };
  std::string hint =
      "inside `apply {" + llvm::join(point.names, ", ") + "}`, index a frag "
      "of the same layout with the apply's own indices, or a frag of its "
      "rows with the row index";
  int64_t rows = shape[0], cols = shape.size() > 1 ? shape[1] : 1;
  bool rowTile = shape.size() == 1;
  // Which layouts line up: the same one; a warpgroup's rows beside its
  // accumulator layout.
  bool compatible =
      rows == point.rows &&
      (layout == point.layout
           ? (layout != TileLayout::RowCyclic || owner == point.owner)
           : layout == TileLayout::WgmmaRows &&
                 point.layout == TileLayout::WgmmaAcc);
  if (!compatible)
    return fail(at.loc, "'" + name + "' and the apply's frag are laid out "
                        "differently over the threads, so the element may be "
                        "another thread's", hint);
  if (at.args.size() != shape.size())
    return fail(at.loc, ".at takes " + Twine(shape.size()) +
                            " indices here, got " + Twine(at.args.size()));
  if (!isName(at.args[0], 0))
    return fail(at.args[0]->loc, "the row of '" + name + "' must be the "
                                 "apply's row index '" + point.names[0] + "': "
                                 "another row may be another thread's", hint);
  if (!rowTile && (point.names.size() != 2 || !isName(at.args[1], 1) ||
                   cols != point.cols))
    return fail(at.args[1]->loc, "the column of '" + name + "' must be the "
                                 "apply's column index over a frag of " +
                                 Twine(cols) + " columns",
                hint);
  switch (point.layout) {
  case TileLayout::RowCyclic:
    return point.q * cols + (rowTile ? 0 : point.col);
  case TileLayout::WgmmaAcc:
    // Accumulator register r lies in row register (r mod 4) / 2.
    return rowTile ? (point.reg % 4) / 2 : point.reg;
  case TileLayout::WgmmaRows:
    return point.reg;
  }
  llvm_unreachable("unknown layout");
}

FailureOr<std::pair<Value, SmallVector<Value>>>
IRGen::tileElement(const Expr &at, const Symbol &s) {
  const RegisterTile &tile = tiles[s.tile];
  // Row parts are only accumulated further, each by its own statement.
  if (tile.partial && applyPoint &&
      (applyPoint->layout != TileLayout::WgmmaAcc || accumulatingTile != s.tile))
    return fail(at.loc, "'" + at.base->name + "' holds each thread's part of "
                        "its rows here (an apply over a 2-D tile wrote it, and "
                        "a row spans the four threads of a quad)",
                "combine the parts with all_reduce_sum or all_reduce_max "
                "first");
  FailureOr<int64_t> reg = applyRegister(at, tile.layout, tile.owner, tile.shape);
  if (failed(reg))
    return failure();
  return std::make_pair(tile.registers,
                        SmallVector<Value>{constIndex(*reg, loc(at.loc))});
}

FailureOr<int64_t> IRGen::accRegister(const Expr &at, const Symbol &acc) {
  if (acc.unshaped)
    return reportUnshaped(acc);
  auto type = cast<FragType>(acc.value.getType());
  if (!isWarpgroupAcc(type))
    return fail(at.loc, "only the elements of warpgroup accumulators (of a "
                        "group-4 MMA) can be read and written with .at",
                "store the accumulator (mma.store) and work on the stored "
                "tile");
  return applyRegister(at, TileLayout::WgmmaAcc, nullptr, type.getShape());
}

std::optional<LogicalResult> IRGen::tileBuiltin(const Expr &e) {
  bool reduce = e.name == "reduce_max" || e.name == "reduce_sum";
  bool allReduce = e.name == "all_reduce_sum" || e.name == "all_reduce_max";
  bool copy = e.name == "copy";
  if (!reduce && !allReduce && !copy)
    return std::nullopt;
  Location l = loc(e.loc);
  if (allReduce) {
    FailureOr<int> id = tileOperand(*e.args[0], e.name);
    if (failed(id))
      return failure();
    RegisterTile &tile = tiles[*id];
    // A row of a thread-level tile is one thread's: nothing to combine.
    if (tile.layout == TileLayout::RowCyclic && tile.shape.size() == 1)
      return success();
    if (tile.layout != TileLayout::WgmmaRows || !tile.partial)
      return fail(e.args[0]->loc,
                  e.name + " combines the parts of each row that the threads "
                           "of a quad hold after an apply over a 2-D tile "
                           "wrote them; '" + e.args[0]->name +
                      "' holds whole rows here",
                  "reduce a 2-D tile with reduce_sum / reduce_max, or "
                  "accumulate into a frag of its rows in an apply over it");
    // The two butterfly shuffles of the wgmma rows.
    bool isMax = e.name == "all_reduce_max";
    if (isMax != (tile.partialOp == PartialOp::Max))
      return fail(e.loc, "'" + e.args[0]->name + "' gathered its row parts "
                         "with " + (isMax ? "a sum" : "a maximum") +
                         "; combine them with " +
                         (isMax ? "all_reduce_sum" : "all_reduce_max"));
    Type type = tile.element;
    if (!isa<FloatType>(type) || type.getIntOrFloatBitWidth() != 32)
      return fail(e.loc, e.name + " combines f32 rows, got " + typeString(type));
    for (int64_t h = 0; h < 2; ++h) {
      Value acc = overQuad(
          memref::LoadOp::create(builder, l, tile.registers,
                                 ValueRange{constIndex(h, l)}),
          [&](Value x, Value y) -> Value {
            return isMax ? Value(arith::MaximumFOp::create(builder, l, x, y))
                         : Value(arith::AddFOp::create(builder, l, x, y));
          },
          l);
      if (!isMax) {
        // Each of the four threads started from the rows' value before the
        // parts: count it once.
        Value before = memref::LoadOp::create(builder, l, tile.snapshot,
                                              ValueRange{constIndex(h, l)});
        Value three = arith::ConstantOp::create(builder, l,
                                                builder.getF32FloatAttr(3.0f));
        acc = arith::SubFOp::create(
            builder, l, acc, arith::MulFOp::create(builder, l, three, before));
      }
      memref::StoreOp::create(builder, l, acc, tile.registers,
                              ValueRange{constIndex(h, l)});
    }
    tile.partial = false;
    return success();
  }
  FailureOr<int> dst = tileOperand(*e.args[0], e.name);
  if (failed(dst))
    return failure();
  RegisterTile &to = tiles[*dst];
  auto load = [&](Value registers, int64_t r) -> Value {
    return memref::LoadOp::create(builder, l, registers,
                                  ValueRange{constIndex(r, l)});
  };
  auto store = [&](Value v, int64_t r) {
    memref::StoreOp::create(builder, l, coerce(v, to.element, l),
                            to.registers, ValueRange{constIndex(r, l)});
  };
  if (copy) {
    FailureOr<int> src = tileOperand(*e.args[1], e.name);
    if (failed(src))
      return failure();
    const RegisterTile &from = tiles[*src];
    if (to.shape != from.shape || to.layout != from.layout ||
        (to.layout == TileLayout::RowCyclic && to.owner != from.owner))
      return fail(e.loc, "copy needs frags of one shape held by the same "
                         "threads");
    if (from.partial)
      return fail(e.args[1]->loc, "'" + e.args[1]->name + "' holds each "
                                  "thread's part of its rows here",
                  "combine the parts with all_reduce_sum or all_reduce_max "
                  "first");
    for (int64_t r = 0; r < to.registerCount(); ++r)
      store(load(from.registers, r), r);
    to.partial = false;
    return success();
  }
  FailureOr<int64_t> dim = constantExpr(*e.args[2]);
  if (failed(dim))
    return failure();
  if (*dim != 1)
    return fail(e.args[2]->loc, e.name + " reduces along dimension 1 (each "
                                         "row), got " + Twine(*dim));
  // The source: a tile, or a warpgroup accumulator.
  const Expr &srcExpr = *e.args[1];
  Symbol *accSymbol = srcExpr.kind == Expr::Kind::Name ? lookup(srcExpr.name)
                                                       : nullptr;
  bool fromAcc = accSymbol && accSymbol->kind == Symbol::Kind::Frag;
  if (fromAcc && failed(rejectBlockScaled(*accSymbol, srcExpr.loc, srcExpr.name)))
    return failure();
  const RegisterTile *from = nullptr;
  TileLayout layout;
  int64_t rows, cols;
  Type type;
  if (fromAcc) {
    if (accSymbol->unshaped)
      return reportUnshaped(*accSymbol);
    auto accType = cast<FragType>(accSymbol->value.getType());
    if (!isWarpgroupAcc(accType))
      return fail(srcExpr.loc, e.name + " reduces warpgroup accumulators (of "
                                        "a group-4 MMA); '" + srcExpr.name +
                                        "' is not one");
    layout = TileLayout::WgmmaAcc;
    rows = 64;
    cols = accType.getShape()[1];
    type = accType.getElementType();
  } else {
    FailureOr<int> src = tileOperand(srcExpr, e.name);
    if (failed(src))
      return failure();
    from = &tiles[*src];
    layout = from->layout;
    rows = from->rows();
    cols = from->cols();
    type = from->element;
    if (from->shape.size() != 2)
      return fail(e.loc, e.name + "(dst, src, 1) reduces each row of a 2-D "
                                  "frag [R, C] into a 1-D frag [R]");
  }
  bool rowsMatch =
      to.shape.size() == 1 && to.rows() == rows &&
      (layout == TileLayout::RowCyclic
           ? to.layout == TileLayout::RowCyclic && to.owner == from->owner
           : to.layout == TileLayout::WgmmaRows);
  if (!rowsMatch)
    return fail(e.loc, e.name + "(dst, src, 1) reduces each row of a 2-D "
                                "frag [R, C] into a 1-D frag [R] of its rows");
  if (failed(checkArithmetic(e.loc, type, e.name)))
    return failure();
  bool isMax = e.name == "reduce_max";
  bool isFloat = isa<FloatType>(type);
  auto combine = [&](Value acc, Value v) -> Value {
    if (!acc)
      return v;
    if (isMax)
      return isFloat ? Value(arith::MaximumFOp::create(builder, l, acc, v))
                     : Value(arith::MaxSIOp::create(builder, l, acc, v));
    return isFloat ? Value(arith::AddFOp::create(builder, l, acc, v))
                   : Value(arith::AddIOp::create(builder, l, acc, v));
  };
  to.partial = false;
  if (layout == TileLayout::RowCyclic) {
    for (int64_t q = 0; q < from->rowsPerThread(); ++q) {
      Value acc;
      for (int64_t c = 0; c < cols; ++c)
        acc = combine(acc, load(from->registers, q * cols + c));
      store(acc, q);
    }
    return success();
  }
  // The wgmma layout: a thread holds N / 4 columns of each of its two rows;
  // the four lanes of its quad (lanes 4k ... 4k + 3) hold the rest, and two
  // butterfly shuffles give each of them the whole row.
  for (int64_t h = 0; h < 2; ++h) {
    Value acc;
    for (int64_t r = 0; r < cols / 2; ++r) {
      if ((r % 4) / 2 != h)
        continue;
      Value v = fromAcc ? Value(MmaElementOp::create(builder, l, type,
                                                     accSymbol->value, r))
                        : load(from->registers, r);
      acc = combine(acc, v);
    }
    // Shuffles move 32-bit values.
    if (isFloat && type.getIntOrFloatBitWidth() < 32)
      acc = coerce(acc, builder.getF32Type(), l);
    store(overQuad(acc, combine, l), h);
  }
  return success();
}

/// `a` and `b` are the same element access: `x.at(i, j)` of the same name
/// with the same index names.
static bool sameAccess(const Expr &a, const Expr &b) {
  if (a.kind != Expr::Kind::Member || b.kind != Expr::Kind::Member ||
      a.name != "at" || b.name != "at" || !a.base || !b.base ||
      a.base->kind != Expr::Kind::Name || b.base->kind != Expr::Kind::Name ||
      a.base->name != b.base->name || a.args.size() != b.args.size())
    return false;
  for (auto [x, y] : llvm::zip_equal(a.args, b.args))
    if (x->kind != Expr::Kind::Name || y->kind != Expr::Kind::Name ||
        x->name != y->name)
      return false;
  return true;
}

FailureOr<PartialOp> IRGen::rowAccumulation(const Stmt &stmt) {
  const Expr &target = *stmt.target;
  const Expr &value = *stmt.value;
  if (stmt.op == "+=")
    return PartialOp::Sum;
  if (stmt.op == "=") {
    if (value.kind == Expr::Kind::Binary && value.name == "+" &&
        (sameAccess(*value.args[0], target) || sameAccess(*value.args[1], target)))
      return PartialOp::Sum;
    StringRef callee = value.name;
    if (value.kind == Expr::Kind::Call && value.args.size() == 2 &&
        (callee == "__max" || callee == "__fmaxf" || callee == "__fmax") &&
        (sameAccess(*value.args[0], target) || sameAccess(*value.args[1], target)))
      return PartialOp::Max;
  }
  return fail(stmt.loc, "a frag of rows written in an apply over a 2-D tile "
                        "gathers each thread's part of a row (a row spans the "
                        "four threads of a quad), so the write must "
                        "accumulate",
              "write x.at(i) += e or x.at(i) = __max(x.at(i), e), then "
              "combine the parts with all_reduce_sum / all_reduce_max");
}
