//===- IRGenFrag.cpp - Croqtile register tiles to IR -----------------------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//
//
// `frag T[dims] x {v};` declares a register tile: a logical [R] or [R, C]
// tile of one instance of the thread-level parallel it is declared in,
// dealt out over that instance's threads as RegisterTile describes.
// `apply {i, j} in x.span body` runs the body once per logical element;
// each thread runs it for the elements of its own rows, so the loops are
// unrolled over the thread's registers and every access of a tile inside
// the body must be one the thread holds: a tile of the same rows indexed
// by the apply's own indices. The built-ins reduce_max / reduce_sum (along
// the rows), all_reduce_sum / all_reduce_max and copy act on whole tiles.
//
//===----------------------------------------------------------------------===//

#include "IRGenImpl.h"

#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace mlir::croq;
using namespace mlir::croq::croqtile;

/// The most registers one thread's tile may take: beyond it the unrolled
/// applies grow without bound and the registers spill.
static constexpr int64_t kMaxTileRegisters = 1024;

LogicalResult IRGen::tileDecl(const Stmt &stmt, Type element) {
  Location l = loc(stmt.loc);
  ParallelOp owner = insideParallel() ? enclosingParallel() : ParallelOp();
  if (!owner || owner.getLevel() != Level::Thread)
    return fail(stmt.loc, "a frag tile is held by the threads of a "
                          "thread-level parallel: declare it in the body of "
                          "`parallel t by T : thread`",
                "frags of a warpgroup in the wgmma layout (beside an MMA "
                "accumulator) are not supported yet");
  if (stmt.dims.empty() || stmt.dims.size() > 2 || !stmt.arrayDims.empty())
    return fail(stmt.loc, "a frag is a 1-D or 2-D tile: frag T[R] x; or "
                          "frag T[R, C] x;");
  RegisterTile tile;
  tile.element = element;
  tile.owner = owner;
  for (const ExprPtr &d : stmt.dims) {
    FailureOr<int64_t> c = constantExpr(*d);
    if (failed(c))
      return failure();
    if (*c <= 0)
      return fail(d->loc, "frag dimensions must be positive");
    tile.shape.push_back(*c);
  }
  // The instance's threads and this thread's rank: the thread parallel's
  // indices, row-major over its (constant) bounds.
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
  int64_t registers = tile.rowsPerThread() * tile.cols();
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
  {
    // At the top of the kernel: LLVM keeps a private buffer in registers
    // only when its alloca is in the entry block, and one inside a loop
    // would take new stack space each iteration. Each thread runs the
    // kernel's body, so the buffer is still its own.
    OpBuilder::InsertionGuard guard(builder);
    ParallelOp kernel = openParallels.empty() ? owner : openParallels.front();
    for (ParallelOp p = kernel.getParentParallel(); p; p = p.getParentParallel())
      kernel = p;
    builder.setInsertionPointToStart(&kernel.getBody().front());
    tile.registers = memref::AllocaOp::create(builder, l, type);
  }
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
  const Expr &span = *stmt.source;
  if (span.kind != Expr::Kind::Member || span.name != "span" || span.hasArgs ||
      !span.base)
    return fail(span.loc, "apply runs over a frag's elements: apply {i, j} "
                          "in x.span");
  if (span.base->kind == Expr::Kind::Name)
    if (Symbol *s = lookup(span.base->name); s && s->kind == Symbol::Kind::Frag)
      return fail(span.loc, "apply over an MMA accumulator is not supported "
                            "yet",
                  "store the accumulator (mma.store) and work on the stored "
                  "tile");
  FailureOr<int> id = tileOperand(*span.base, "apply");
  if (failed(id))
    return failure();
  if (applyPoint)
    return fail(stmt.loc, "apply cannot be nested in another apply");
  const RegisterTile tile = tiles[*id];
  if (stmt.operands.size() != tile.shape.size())
    return fail(stmt.loc, "this apply names " + Twine(stmt.operands.size()) +
                              " indices, but the frag has " +
                              Twine(tile.shape.size()) + " dimensions");
  ApplyPoint point{*id, 0, 0, {}};
  for (const ExprPtr &name : stmt.operands) {
    if (name->name == "_")
      return fail(name->loc, "'_' cannot name an index");
    point.names.push_back(name->name);
  }
  Location l = loc(stmt.loc);
  // Rows past the tile's end (R not a multiple of T) are no thread's.
  bool ragged = tile.rows() % tile.threads != 0;
  for (int64_t q = 0; q < tile.rowsPerThread(); ++q) {
    Value row = builder.createOrFold<arith::AddIOp>(
        l, constIndex(q * tile.threads, l), tile.rank);
    for (int64_t c = 0; c < tile.cols(); ++c) {
      point.q = q;
      point.col = c;
      applyPoint = point;
      auto reset = llvm::scope_exit([&] { applyPoint.reset(); });
      push();
      Symbol i{Symbol::Kind::Scalar, row, constIndex(tile.rows(), l)};
      declare(point.names[0], i);
      if (point.names.size() > 1)
        declare(point.names[1], Symbol{Symbol::Kind::Scalar, constIndex(c, l),
                                       constIndex(tile.cols(), l)});
      LogicalResult result = success();
      if (ragged && (q + 1) * tile.threads > tile.rows()) {
        Value inside = builder.createOrFold<arith::CmpIOp>(
            l, arith::CmpIPredicate::ult, row, constIndex(tile.rows(), l));
        result = guarded(inside, stmt.body, l);
      } else {
        result = statements(stmt.body);
      }
      pop();
      if (failed(result))
        return failure();
    }
  }
  return success();
}

FailureOr<std::pair<Value, SmallVector<Value>>>
IRGen::tileElement(const Expr &at, const Symbol &s) {
  const RegisterTile &tile = tiles[s.tile];
  const std::string &name = at.base->name;
  if (!applyPoint)
    return fail(at.loc, "the elements of frag '" + name + "' are spread over "
                        "the threads: read and write them inside an apply",
                "write apply {i, j} in " + name + ".span { ... }");
  const ApplyPoint &point = *applyPoint;
  const RegisterTile &span = tiles[point.tile];
  Location l = loc(at.loc);
  auto isName = [&](const ExprPtr &e, size_t k) {
    return k < point.names.size() && e->kind == Expr::Kind::Name &&
           e->name == point.names[k];
  };
  std::string hint =
      "inside `apply {" + llvm::join(point.names, ", ") + "}`, index a frag "
      "of the same rows with the apply's own indices";
  if (tile.owner != span.owner || tile.rows() != span.rows())
    return fail(at.loc, "frag '" + name + "' and the apply's frag hold "
                        "different rows, so the element may be another "
                        "thread's", hint);
  if (at.args.size() != tile.shape.size())
    return fail(at.loc, ".at takes " + Twine(tile.shape.size()) +
                            " indices here, got " + Twine(at.args.size()));
  if (!isName(at.args[0], 0))
    return fail(at.args[0]->loc, "the row of frag '" + name + "' must be the "
                                 "apply's row index '" + point.names[0] + "': "
                                 "another row may be another thread's", hint);
  int64_t reg = point.q * tile.cols();
  if (tile.shape.size() == 2) {
    if (span.shape.size() != 2 || !isName(at.args[1], 1) ||
        tile.cols() != span.cols())
      return fail(at.args[1]->loc, "the column of frag '" + name + "' must "
                                   "be the apply's column index over a frag "
                                   "of " + Twine(tile.cols()) + " columns",
                  hint);
    reg += point.col;
  }
  return std::make_pair(tile.registers,
                        SmallVector<Value>{constIndex(reg, l)});
}

std::optional<LogicalResult> IRGen::tileBuiltin(const Expr &e) {
  bool reduce = e.name == "reduce_max" || e.name == "reduce_sum";
  bool allReduce = e.name == "all_reduce_sum" || e.name == "all_reduce_max";
  bool copy = e.name == "copy";
  if (!reduce && !allReduce && !copy)
    return std::nullopt;
  size_t arity = reduce ? 3 : allReduce ? 1 : 2;
  if (e.args.size() != arity)
    return fail(e.loc, e.name + " takes " + Twine(arity) +
                           (arity == 1 ? " argument" : " arguments"),
                reduce ? "write " + e.name + "(dst, src, 1)"
                : copy ? std::string("write copy(dst, src)")
                       : "write " + e.name + "(x)");
  if (applyPoint)
    return fail(e.loc, e.name + " acts on whole frags: call it outside apply");
  Location l = loc(e.loc);
  if (allReduce) {
    // Each row is one thread's whole, so a row value is already the
    // reduction over the threads that share it.
    if (failed(tileOperand(*e.args[0], e.name)))
      return failure();
    return success();
  }
  FailureOr<int> dst = tileOperand(*e.args[0], e.name);
  FailureOr<int> src = failed(dst) ? FailureOr<int>(failure())
                                   : tileOperand(*e.args[1], e.name);
  if (failed(src))
    return failure();
  const RegisterTile &to = tiles[*dst];
  const RegisterTile &from = tiles[*src];
  if (to.owner != from.owner)
    return fail(e.loc, e.name + " of frags that different thread "
                                "parallels hold");
  if (copy) {
    if (to.shape != from.shape)
      return fail(e.loc, "copy needs frags of one shape");
    int64_t registers = to.rowsPerThread() * to.cols();
    for (int64_t r = 0; r < registers; ++r) {
      Value v = memref::LoadOp::create(builder, l, from.registers,
                                       ValueRange{constIndex(r, l)});
      memref::StoreOp::create(builder, l, coerce(v, to.element, l),
                              to.registers, ValueRange{constIndex(r, l)});
    }
    return success();
  }
  FailureOr<int64_t> dim = constantExpr(*e.args[2]);
  if (failed(dim))
    return failure();
  if (*dim != 1)
    return fail(e.args[2]->loc, e.name + " reduces along dimension 1 (each "
                                         "row), got " + Twine(*dim));
  if (from.shape.size() != 2 || to.shape.size() != 1 ||
      to.rows() != from.rows())
    return fail(e.loc, e.name + "(dst, src, 1) reduces each row of a 2-D "
                                "frag [R, C] into a 1-D frag [R]");
  Type type = from.element;
  if (failed(checkArithmetic(e.loc, type, e.name)))
    return failure();
  bool isMax = e.name == "reduce_max";
  bool isFloat = isa<FloatType>(type);
  for (int64_t q = 0; q < from.rowsPerThread(); ++q) {
    Value acc;
    for (int64_t c = 0; c < from.cols(); ++c) {
      Value v = memref::LoadOp::create(
          builder, l, from.registers,
          ValueRange{constIndex(q * from.cols() + c, l)});
      if (!acc) {
        acc = v;
        continue;
      }
      if (isMax)
        acc = isFloat ? Value(arith::MaximumFOp::create(builder, l, acc, v))
                      : Value(arith::MaxSIOp::create(builder, l, acc, v));
      else
        acc = isFloat ? Value(arith::AddFOp::create(builder, l, acc, v))
                      : Value(arith::AddIOp::create(builder, l, acc, v));
    }
    memref::StoreOp::create(builder, l, coerce(acc, to.element, l),
                            to.registers, ValueRange{constIndex(q, l)});
  }
  return success();
}
