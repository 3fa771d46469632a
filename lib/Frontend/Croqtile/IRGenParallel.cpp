//===- IRGenParallel.cpp - Croqtile structure to IR -------------------------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#include "IRGenImpl.h"
#include "Levels.h"

using namespace mlir;
using namespace mlir::croq;
using namespace mlir::croq::croqtile;

//===----------------------------------------------------------------------===//
// Structure: parallel, foreach, with, if, inthreads
//===----------------------------------------------------------------------===//

LogicalResult IRGen::applyLaunchBounds(const Stmt &stmt, ParallelOp kernel) {
  auto constant = [&](const ExprPtr &e, int64_t lo, int64_t hi,
                      StringRef what) -> FailureOr<std::optional<int64_t>> {
    if (e->kind == Expr::Kind::Name && e->name == "_")
      return std::optional<int64_t>();
    FailureOr<int64_t> v = constantExpr(*e);
    if (failed(v))
      return failure();
    if (*v < lo || *v > hi)
      return fail(e->loc, what + Twine(" must be between ") + Twine(lo) +
                              " and " + Twine(hi) + ", got " + Twine(*v));
    return std::optional<int64_t>(*v);
  };
  for (const StmtAttribute &attr : stmt.attributes) {
    if (attr.name == "maxnreg") {
      if (attr.args.size() != 1)
        return fail(attr.loc, "[[maxnreg(n)]] takes one register count");
      FailureOr<std::optional<int64_t>> n =
          constant(attr.args[0], 24, 256, "a register count");
      if (failed(n) || !*n)
        return failed(n) ? failure()
                         : fail(attr.loc, "[[maxnreg(n)]] needs a number");
      kernel.setMaxRegisters(**n);
      continue;
    }
    if (attr.args.empty() || attr.args.size() > 2)
      return fail(attr.loc, "[[launch_bounds(threads[, blocks])]] takes one "
                            "or two values");
    FailureOr<std::optional<int64_t>> threads =
        constant(attr.args[0], 1, 1024, "the thread bound");
    if (failed(threads))
      return failure();
    if (*threads)
      kernel.setMaxThreads(**threads);
    if (attr.args.size() == 2) {
      FailureOr<std::optional<int64_t>> blocks =
          constant(attr.args[1], 1, 32, "the blocks per SM");
      if (failed(blocks))
        return failure();
      if (*blocks)
        kernel.setMinBlocks(**blocks);
    }
  }
  return success();
}

/// The portable limit of blocks in a cluster (16 needs the kernel's
/// non-portable cluster attribute, which croq does not set).
static constexpr int64_t kMaxClusterBlocks = 8;

LogicalResult IRGen::applyCluster(const Stmt &stmt, ParallelOp kernel) {
  const ParallelLevel &cluster = *stmt.clusterLevel;
  if (cluster.names.size() > 1)
    return fail(cluster.loc, "a cluster has one index, the block's rank in "
                             "it; it declares " +
                                 Twine(cluster.names.size()));
  FailureOr<SmallVector<ViewArg>> args = viewArgs(cluster.bounds);
  if (failed(args))
    return failure();
  FailureOr<Value> bound = argIndex(args->front());
  if (failed(bound))
    return failure();
  std::optional<int64_t> size = asConstant(*bound);
  if (!size)
    return fail(cluster.bounds.front()->loc,
                "a cluster's extent is a compile-time constant: the kernel "
                "is compiled for its cluster shape");
  if (*size < 1 || *size > kMaxClusterBlocks)
    return fail(cluster.bounds.front()->loc,
                "a cluster has 1 to " + Twine(kMaxClusterBlocks) +
                    " blocks, got " + Twine(*size));
  std::optional<int64_t> blocks = asConstant(kernel.getBounds().front());
  if (blocks && *blocks % *size != 0)
    return fail(cluster.bounds.front()->loc,
                "clusters of " + Twine(*size) + " blocks group the block "
                "level's first index, whose extent " + Twine(*blocks) +
                " is not a multiple of " + Twine(*size),
                "make the first extent a multiple of the cluster size, or "
                "pick a cluster size that divides it");
  kernel.setCluster(*size);
  return success();
}

bool IRGen::bodyIsOneWarpgroup(ArrayRef<StmtPtr> body) const {
  // Every parallel the body runs, through blocks, loops and branches (a
  // warpgroup inside `foreach k` is still the block's one warpgroup), must
  // be one warpgroup; and there must be one.
  bool any = false;
  std::function<bool(ArrayRef<StmtPtr>)> scan = [&](ArrayRef<StmtPtr> stmts) {
    for (const StmtPtr &inner : stmts) {
      if (inner->kind != Stmt::Kind::Parallel) {
        if (!scan(inner->body) || !scan(inner->elseBody))
          return false;
        continue;
      }
      auto planned = sema.levelPlans.find(inner.get());
      if (planned == sema.levelPlans.end() || planned->second.empty())
        return false;
      const LevelPlan &first = planned->second.front();
      if (first.level != Level::Warpgroup)
        return false;
      if (first.source)
        for (const ExprPtr &bound : first.source->bounds)
          if (foldConstant(*bound) != std::optional<int64_t>(1))
            return false;
      any = true;
    }
    return true;
  };
  return scan(body) && any;
}

LogicalResult IRGen::parallel(const Stmt &stmt) {
  bool outermost = !insideParallel();
  // Sema completed the chain and checked the level rules.
  auto planned = sema.levelPlans.find(&stmt);
  if (planned == sema.levelPlans.end())
    return internalError(stmt.loc, "a parallel without levels");
  ArrayRef<LevelPlan> plan = planned->second;

  // Streams: a parameter (<s>) or the seed's `stream s;` in the body.
  Value stream;
  std::string localStream;
  if (!stmt.streamName.empty()) {
    Symbol *s = lookup(stmt.streamName);
    if (!s || s->kind != Symbol::Kind::Stream)
      return fail(stmt.loc, "'" + stmt.streamName + "' is not a stream",
                  "declare a `stream " + stmt.streamName + "` parameter");
    stream = s->value;
  }
  for (const StmtPtr &inner : stmt.body)
    if (inner->kind == Stmt::Kind::StreamDecl) {
      if (!stmt.async || !outermost)
        return fail(inner->loc, "`stream " + inner->name +
                                    ";` only binds a parallel.async launch",
                    "write parallel.async ... : block { stream " +
                        inner->name + "; ... }");
      if (stream)
        return fail(inner->loc, "this parallel already has a stream");
      stream = StreamCreateOp::create(builder, loc(inner->loc),
                                      StreamType::get(context));
      localStream = inner->name;
    }

  SmallVector<Carried> carriedNames = carriedOutOfParallel(stmt.body);
  // A kernel gets host scalars by value, as CUDA's kernel arguments: what it
  // assigns is its threads' own copy, and the host's value stays.
  SmallVector<Carried> kernelCopies;
  if (outermost && !carriedNames.empty()) {
    for (const Carried &c : carriedNames) {
      Symbol *s = lookupCarried(c);
      if (!s || s->kind != Symbol::Kind::Scalar)
        return fail(stmt.loc, "a kernel cannot assign '" + c.name +
                                  "', which is defined outside it",
                    "write results to a tensor");
    }
    InFlightDiagnostic diag = emitWarning(
        loc(stmt.loc), "the kernel assigns its own copy of the host scalar '" +
                           carriedNames.front().name +
                           "': each thread starts from the host's value, and "
                           "the host's value does not change");
    diag.attachNote() << "write results to a tensor to bring them back";
    kernelCopies = std::move(carriedNames);
    carriedNames.clear();
  }

  // Build the chain; values assigned inside flow out as results.
  std::function<LogicalResult(size_t)> build = [&](size_t i) -> LogicalResult {
    const LevelPlan &lp = plan[i];
    Location l = loc(lp.source ? lp.source->loc : stmt.loc);
    SmallVector<Value> bounds;
    if (lp.source) {
      FailureOr<SmallVector<ViewArg>> args = viewArgs(lp.source->bounds);
      if (failed(args))
        return failure();
      for (const ViewArg &b : *args) {
        FailureOr<Value> v = argIndex(b);
        if (failed(v))
          return failure();
        if (std::optional<int64_t> c = asConstant(*v); c && *c <= 0)
          return fail(b.expr->loc, "parallel bounds must be positive, got " +
                                       Twine(*c));
        bounds.push_back(*v);
      }
      if (!lp.source->names.empty() &&
          lp.source->names.size() != bounds.size())
        return fail(lp.source->loc,
                    "parallel declares " + Twine(lp.source->names.size()) +
                        " indices but " + Twine(bounds.size()) + " bounds");
    } else {
      bounds.push_back(constIndex(1, l));
    }
    auto op = ParallelOp::create(builder, l, lp.level, bounds,
                                 i == 0 && stmt.async, i == 0 ? stream : Value(),
                                 typesOf(carriedNames));
    if (i == 0 && failed(applyLaunchBounds(stmt, op)))
      return failure();
    if (lp.level == Level::Thread && i + 1 == plan.size() &&
        bodyHasMma(stmt.body))
      warpgroupTileOwners.insert(op);
    if (lp.level == Level::Block && i + 1 == plan.size() &&
        bodyIsOneWarpgroup(stmt.body))
      warpgroupTileOwners.insert(op);
    if (i == 0 && stmt.clusterLevel && failed(applyCluster(stmt, op)))
      return failure();
    if (lp.source && lp.source->cooperative) {
      if (lp.level != Level::Block || !outermost)
        return fail(lp.source->loc, "<cooperative> qualifies the block level "
                                    "of a kernel: all its blocks run at once");
      op.setCooperative(true);
    }
    return parallelBody(op, carriedNames, [&]() -> LogicalResult {
      if (i == 0)
        shadow(kernelCopies);
      Block &block = op.getBody().front();
      if (lp.source) {
        Symbol tuple{Symbol::Kind::Shape, Value()};
        for (auto [j, name] : llvm::enumerate(lp.source->names)) {
          Symbol s{Symbol::Kind::Scalar, block.getArgument(j), bounds[j]};
          s.isParallelIndex = true;
          declare(name, s);
          tuple.elems.push_back(EVal{block.getArgument(j), bounds[j]});
        }
        if (!lp.source->tupleName.empty())
          declare(lp.source->tupleName, tuple);
      }
      if (i == 0 && stmt.clusterLevel && !stmt.clusterLevel->names.empty()) {
        // The cluster's index is the block's rank in its cluster.
        Location at = loc(stmt.clusterLevel->loc);
        Value size = constIndex(*op.getCluster(), at);
        Symbol rank{Symbol::Kind::Scalar,
                    ClusterRankOp::create(builder, at, builder.getIndexType()),
                    size};
        rank.isParallelIndex = true;
        declare(stmt.clusterLevel->names.front(), rank);
      }
      if (i == 0 && !localStream.empty())
        declare(localStream, Symbol{Symbol::Kind::Stream, stream});
      // `yield;` in the body ends the thread's part of it: a flag the rest of
      // the body, and the loops around the yield, test.
      if (i + 1 == plan.size() && mayYield(stmt.body)) {
        Symbol yielded{Symbol::Kind::Scalar,
                       arith::ConstantIntOp::create(builder, l, builder.getI1Type(), 0)};
        yielded.isMutable = true;
        declareFlag(ControlFlag::Yield, yielded);
      }
      return i + 1 < plan.size() ? build(i + 1) : statements(stmt.body);
    });
  };
  return build(0);
}

SmallVector<Carried> IRGen::carriedOutOfParallel(ArrayRef<StmtPtr> body) {
  SmallVector<Carried> carriedNames = carried(body);
  llvm::erase_if(carriedNames, [](const Carried &c) { return c.isFlag(); });
  return carriedNames;
}

SmallVector<Type> IRGen::typesOf(ArrayRef<Carried> carried) {
  SmallVector<Type> types;
  for (const Carried &c : carried)
    types.push_back(carriedValue(c).getType());
  return types;
}

LogicalResult IRGen::parallelBody(ParallelOp op,
                                  ArrayRef<Carried> carriedNames,
                                  function_ref<LogicalResult()> fill) {
  LogicalResult result = success();
  {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(&op.getBody().front());
    openParallels.push_back(op);
    llvm::scope_exit close([&] { openParallels.pop_back(); });
    push();
    parallelScopeDepths.push_back(scopes.size());
    llvm::scope_exit closeScope([&] { parallelScopeDepths.pop_back(); });
    shadow(carriedNames);
    result = fill();
    if (succeeded(result) && !carriedNames.empty())
      YieldOp::create(builder, op.getLoc(), currentValues(carriedNames));
    pop();
  }
  if (failed(result))
    return failure();
  for (auto [c, value] : llvm::zip_equal(carriedNames, op.getResults()))
    rebind(c, value);
  return success();
}

void IRGen::rebindTupleElement(StringRef var, EVal value) {
  // The innermost binding of each name is the visible one.
  llvm::StringSet<> seen;
  SmallVector<std::pair<std::string, Symbol>, 2> updated;
  for (auto it = scopes.rbegin(); it != scopes.rend(); ++it)
    for (auto &entry : *it) {
      if (!seen.insert(entry.getKey()).second)
        continue;
      const Symbol &sym = entry.getValue();
      if (sym.kind != Symbol::Kind::Shape)
        continue;
      auto pos = llvm::find(sym.elemNames, var);
      if (pos == sym.elemNames.end())
        continue;
      Symbol copy = sym;
      copy.elems[pos - sym.elemNames.begin()] = value;
      updated.emplace_back(entry.getKey().str(), copy);
    }
  for (auto &[name, sym] : updated) {
    unsigned scope = sym.scope;
    declare(name, sym);
    scopes.back()[name].scope = scope;
  }
}

/// `index in [3, 2, 1]`: the one name stands for the whole index tuple.
static bool isWholeTuple(const Within &w, size_t bounds) {
  return w.names.size() == 1 && w.tupleName.empty() && bounds > 1;
}

FailureOr<SmallVector<Value>> IRGen::withinBounds(const Within &w) {
  FailureOr<SmallVector<EVal>> bounds = spliceList(w.bounds);
  if (failed(bounds))
    return failure();
  // `index in [3, 2, 1]`: one name for all the bounds is their ituple.
  if (w.names.size() == 1 && w.tupleName.empty() && bounds->size() > 1) {
    SmallVector<Value> out;
    for (const EVal &b : *bounds)
      out.push_back(b.value);
    return out;
  }
  if (bounds->size() != w.names.size())
    return fail(w.loc, "declares " + Twine(w.names.size()) + " indices but " +
                           Twine(bounds->size()) + " bounds",
                "give one bound per index (x.span counts as one per "
                "dimension of x), or one name for the whole index tuple");
  SmallVector<Value> out;
  for (const EVal &b : *bounds)
    out.push_back(b.value);
  return out;
}

void IRGen::declareWithin(const Within &w, ValueRange values, ValueRange bounds) {
  Symbol tuple{Symbol::Kind::Shape, Value()};
  bool whole = isWholeTuple(w, values.size());
  for (auto [i, value, bound] : llvm::enumerate(values, bounds)) {
    if (!whole)
      declare(w.names[i], Symbol{Symbol::Kind::Scalar, value, bound});
    tuple.elems.push_back(EVal{value, bound});
  }
  if (whole) {
    declare(w.names.front(), tuple);
  } else if (!w.tupleName.empty()) {
    tuple.elemNames.assign(w.names.begin(), w.names.end());
    declare(w.tupleName, tuple);
  }
}

LogicalResult IRGen::with(const Stmt &stmt) {
  push();
  llvm::scope_exit close([&] { pop(); });
  for (const Within &w : stmt.withins) {
    FailureOr<SmallVector<Value>> bounds = withinBounds(w);
    if (failed(bounds))
      return failure();
    // A with-variable ranges over its bound: an empty range has no index.
    for (Value b : *bounds)
      if (std::optional<int64_t> c = asConstant(b); c && *c <= 0)
        return fail(w.loc, "this with bound is " + Twine(*c) +
                               "; a with index needs a positive bound");
    // Outside foreach a with-variable's value is 0.
    SmallVector<Value> zeros(bounds->size(), constIndex(0, loc(w.loc)));
    declareWithin(w, zeros, *bounds);
  }
  if (failed(bindWhere(stmt)))
    return failure();
  return statements(stmt.body);
}

LogicalResult IRGen::bindWhere(const Stmt &stmt) {
  llvm::StringSet<> declared;
  for (const Within &w : stmt.withins)
    for (const std::string &name : w.names)
      declared.insert(name);
  for (const WhereBinding &b : stmt.whereBindings) {
    for (const std::string *name : {&b.alias, &b.target})
      if (!declared.contains(*name))
        return fail(b.loc, "'" + *name + "' is not an index of this with",
                    "a where-binding relates two indices the with declares");
    if (b.alias == b.target)
      continue;
    Symbol *alias = lookup(b.alias), *target = lookup(b.target);
    if (!alias || !target || alias->kind != Symbol::Kind::Scalar ||
        target->kind != Symbol::Kind::Scalar)
      return fail(b.loc, "a where-binding relates two single indices; a "
                         "whole index tuple cannot be bound");
    std::optional<int64_t> aliasBound = asConstant(alias->bound);
    std::optional<int64_t> targetBound = asConstant(target->bound);
    if (aliasBound && targetBound && *aliasBound != *targetBound)
      return fail(b.loc, "where binds '" + b.alias + "' to '" + b.target +
                             "', but their bounds differ (" +
                             Twine(*aliasBound) + " and " +
                             Twine(*targetBound) + ")",
                  "the two indices take the same values, so their ranges "
                  "must be equal");
    // The alias follows the target, in its own name and in the index tuples
    // it belongs to.
    Symbol redirect = *target;
    redirect.aliasOf = b.target;
    declare(b.alias, redirect);
    for (auto &scope : scopes)
      for (auto &entry : scope)
        if (entry.getValue().kind == Symbol::Kind::Shape)
          for (auto [i, elemName] : llvm::enumerate(entry.getValue().elemNames))
            if (elemName == b.alias) {
              elemName = b.target;
              entry.getValue().elems[i] = EVal{redirect.value, redirect.bound};
            }
  }
  return success();
}

LogicalResult IRGen::foreach(const Stmt &stmt) {
  struct LoopPlan {
    std::string name;
    Value lower, upper, step, bound;
    Location loc;
    /// The named index tuple this loop completes (its last index), of the
    /// `tupleSize` innermost loops so far.
    std::string tupleName = {};
    size_t tupleSize = 0;
  };
  SmallVector<EVal> loopIndices;
  SmallVector<LoopPlan> loops;
  for (const Within &w : stmt.withins) {
    FailureOr<SmallVector<Value>> bounds = withinBounds(w);
    if (failed(bounds))
      return failure();
    Location l = loc(w.loc);
    bool whole = isWholeTuple(w, bounds->size());
    for (auto [i, bound] : llvm::enumerate(*bounds))
      loops.push_back({whole ? std::string() : w.names[i], constIndex(0, l),
                       bound, constIndex(1, l), bound, l});
    if (whole || !w.tupleName.empty()) {
      loops.back().tupleName = whole ? w.names.front() : w.tupleName;
      loops.back().tupleSize = bounds->size();
    }
  }
  // `foreach index` over a named index tuple runs each of its indices:
  // by their names (`with index = {x, y}`), or, for a tuple of unnamed
  // indices (`with index in [4, 2]`), one loop per element, the tuple then
  // naming the loops' indices. Loops nest in the order written.
  struct Range {
    const Expr *expr;
    std::string name;            // a with-variable, or
    const Symbol *whole = nullptr; // a tuple of unnamed indices
  };
  SmallVector<Range> ranges;
  for (const ExprPtr &range : stmt.ranges) {
    Symbol *s = lookup(range->name);
    if (s && s->kind == Symbol::Kind::Shape && !range->args.empty())
      return fail(range->loc, "a range of an index tuple is not supported",
                  "give the range to each index: foreach x(1:), y");
    if (s && s->kind == Symbol::Kind::Shape && !s->elemNames.empty()) {
      for (const std::string &name : s->elemNames)
        ranges.push_back({range.get(), name});
      continue;
    }
    if (s && s->kind == Symbol::Kind::Shape) {
      for (const EVal &elem : s->elems)
        if (!elem.bound)
          return fail(range->loc, "foreach " + range->name + " needs an index "
                                  "tuple of bounded variables");
      ranges.push_back({range.get(), range->name, s});
      continue;
    }
    ranges.push_back({range.get(), range->name});
  }
  for (const Range &entry : ranges) {
    const Expr *range = entry.expr;
    const std::string &rangeName = entry.name;
    Location l = loc(range->loc);
    if (entry.whole) {
      for (const EVal &elem : entry.whole->elems)
        loops.push_back({std::string(), constIndex(0, l), elem.bound,
                         constIndex(1, l), elem.bound, l});
      loops.back().tupleName = rangeName;
      loops.back().tupleSize = entry.whole->elems.size();
      continue;
    }
    Symbol *s = lookup(rangeName);
    if (!s || s->kind != Symbol::Kind::Scalar || !s->bound)
      return fail(range->loc, "foreach " + rangeName +
                                  " needs a bounded variable declared by "
                                  "with or an enclosing foreach",
                  "write `with " + rangeName + " in N { foreach " +
                      rangeName + " ... }` or `foreach " + rangeName +
                      " in N`");
    Value lower = constIndex(0, l), upper = s->bound, step = constIndex(1, l);
    if (!range->args.empty()) {
      if (range->args[0]) {
        FailureOr<Value> v = indexExpr(*range->args[0]);
        if (failed(v))
          return failure();
        lower = *v;
      }
      if (range->args.size() > 1 && range->args[1]) {
        FailureOr<Value> v = indexExpr(*range->args[1]);
        if (failed(v))
          return failure();
        upper = builder.createOrFold<arith::AddIOp>(l, s->bound, *v);
      }
      if (range->args.size() > 2 && range->args[2]) {
        FailureOr<Value> v = indexExpr(*range->args[2]);
        if (failed(v))
          return failure();
        if (std::optional<int64_t> c = asConstant(*v); c && *c <= 0)
          return fail(range->args[2]->loc, "a foreach step must be positive");
        step = *v;
      }
    }
    loops.push_back({range->alias.empty() ? rangeName : range->alias, lower,
                     upper, step, s->bound, l});
  }
  // vectorize(i, n) names one of this foreach's indices.
  if (const Expr *v = stmt.vectorizeIndex;
      v && llvm::none_of(loops, [&](const LoopPlan &lp) { return lp.name == v->name; }))
    return fail(v->loc, "vectorize(" + v->name + ", n) names no index of this "
                        "foreach");
  // unroll(n): a positive constant; larger than a known trip count is a
  // mistake. The innermost loop carries it to croq-unroll-hinted-loops.
  std::optional<int64_t> unroll;
  if (stmt.unroll) {
    FailureOr<int64_t> factor = constantExpr(*stmt.unroll);
    if (failed(factor))
      return failure();
    if (*factor <= 0)
      return fail(stmt.unroll->loc, "unroll factor must be positive, got " +
                                        Twine(*factor));
    unroll = *factor;
    for (const LoopPlan &lp : loops) {
      std::optional<int64_t> lo = asConstant(lp.lower), hi = asConstant(lp.upper),
                             st = asConstant(lp.step);
      if (lo && hi && st && *st > 0) {
        int64_t trips = *hi > *lo ? (*hi - *lo + *st - 1) / *st : 0;
        if (*unroll > trips)
          return fail(stmt.loc, "unroll factor (" + Twine(*unroll) +
                                    ") exceeds the loop extent (" +
                                    Twine(trips) + ")");
      }
    }
  }
  // A loop that breaks keeps a flag across iterations; once it is set, the
  // remaining iterations do nothing.
  push();
  bool exits = loopExits(stmt.body);
  SmallVector<Carried> carriedNames = carried(stmt.body);
  // `foreach ... if (cond)`: each iteration's body runs where cond holds.
  auto maskValue = [&]() -> FailureOr<Value> {
    FailureOr<EVal> cond = expr(*stmt.mask);
    if (failed(cond))
      return failure();
    return truthValue(cond->value, loc(stmt.mask->loc));
  };
  auto loopBody = [&](Location l) -> LogicalResult {
    if (!exits && stmt.mask) {
      FailureOr<Value> cond = maskValue();
      if (failed(cond))
        return failure();
      return guarded(*cond, stmt.body, l);
    }
    if (!exits)
      return statements(stmt.body);
    Symbol cont{Symbol::Kind::Scalar,
                arith::ConstantIntOp::create(builder, l, builder.getI1Type(), 0)};
    cont.isMutable = true;
    declareFlag(ControlFlag::Continue, cont);
    Value one = arith::ConstantIntOp::create(builder, l, builder.getI1Type(), 1);
    Value running = builder.createOrFold<arith::XOrIOp>(
        l, controlFlag(ControlFlag::Break)->value, one);
    // A thread that yielded (in this loop or an inner one) stops.
    if (Symbol *yielded = controlFlag(ControlFlag::Yield); yielded && mayYield(stmt.body))
      running = builder.createOrFold<arith::AndIOp>(
          l, running, builder.createOrFold<arith::XOrIOp>(l, yielded->value, one));
    if (stmt.mask) {
      FailureOr<Value> cond = maskValue();
      if (failed(cond))
        return failure();
      running = builder.createOrFold<arith::AndIOp>(l, running, *cond);
    }
    return guarded(running, stmt.body, l);
  };

  std::function<LogicalResult(size_t)> build = [&](size_t i) -> LogicalResult {
    const LoopPlan &lp = loops[i];
    SmallVector<Value> inits;
    for (const Carried &c : carriedNames)
      inits.push_back(carriedValue(c));
    auto loop = scf::ForOp::create(builder, lp.loc, lp.lower, lp.upper, lp.step,
                                   inits);
    if (unroll && i + 1 == loops.size())
      loop->setAttr(kUnrollAttrName, builder.getI64IntegerAttr(*unroll));
    OpBuilder::InsertionGuard guard(builder);
    Block *body = loop.getBody();
    setInsertionBeforeTerminator(body);
    push();
    shadow(carriedNames, loop.getRegionIterArgs());
    if (!lp.name.empty()) {
      declare(lp.name, Symbol{Symbol::Kind::Scalar, loop.getInductionVar(), lp.bound});
      rebindTupleElement(lp.name, EVal{loop.getInductionVar(), lp.bound});
    }
    loopIndices.push_back(EVal{loop.getInductionVar(), lp.bound});
    llvm::scope_exit popIndex([&] { loopIndices.pop_back(); });
    if (!lp.tupleName.empty()) {
      Symbol tuple{Symbol::Kind::Shape, Value()};
      tuple.elems.assign(loopIndices.end() - lp.tupleSize, loopIndices.end());
      declare(lp.tupleName, tuple);
    }
    LogicalResult result = i + 1 < loops.size() ? build(i + 1)
                                                : loopBody(lp.loc);
    if (succeeded(result) && !carriedNames.empty()) {
      SmallVector<Value> values;
      for (auto [j, c] : llvm::enumerate(carriedNames)) {
        Value v = carriedValue(c);
        if (v.getType() != inits[j].getType()) {
          pop();
          auto before = dyn_cast<FutureType>(inits[j].getType());
          auto after = dyn_cast<FutureType>(v.getType());
          bool kinds = before && after &&
                       (before.getKind() != after.getKind() ||
                        before.getAsync() != after.getAsync());
          auto describe = [](Type type) -> std::string {
            auto future = dyn_cast<FutureType>(type);
            if (!future)
              return typeString(type);
            StringRef kind = future.getKind() == FutureKind::Tma   ? "TMA"
                             : future.getKind() == FutureKind::Dma ? "DMA"
                                                                   : "MMA";
            return (future.getAsync() ? "an asynchronous " : "a synchronous ") +
                   kind.str() + " " + typeString(type);
          };
          return fail(stmt.loc,
                      "'" + c.name + "' changes type inside the loop: " +
                          describe(inits[j].getType()) + " before it, " +
                          describe(v.getType()) + " after an iteration",
                      kinds ? "a future keeps its kind: make it before the "
                              "loop as the loop makes it (both asynchronous, "
                              "both DMA or both TMA), or start it as a "
                              "placeholder (`f = dma.any;`)"
                            : "keep one buffer shape per future");
        }
        values.push_back(v);
      }
      scf::YieldOp::create(builder, lp.loc, values);
    }
    pop();
    if (failed(result))
      return failure();
    for (auto [c, value] : llvm::zip_equal(carriedNames, loop.getResults()))
      rebind(c, value);
    return success();
  };
  LogicalResult result = build(0);
  pop();
  return result;
}

LogicalResult IRGen::ifStmt(const Stmt &stmt) {
  FailureOr<EVal> cond = expr(*stmt.value);
  if (failed(cond))
    return failure();
  // Any scalar, true where it is not zero (as in C, and as ?: takes it).
  return ifThenElse(loc(stmt.loc), truthValue(cond->value, loc(stmt.value->loc)),
                    stmt.body,
                    stmt.hasElse ? &stmt.elseBody : nullptr);
}

LogicalResult IRGen::ifThenElse(Location l, Value c,
                                const std::vector<StmtPtr> &thenBody,
                                const std::vector<StmtPtr> *elseBody) {
  SmallVector<Carried> carriedNames = carried(thenBody);
  static const std::vector<StmtPtr> none;
  const std::vector<StmtPtr> &otherwise = elseBody ? *elseBody : none;
  for (const Carried &c : carried(otherwise))
    if (llvm::none_of(carriedNames, [&](const Carried &t) {
          return t.flag == c.flag && t.name == c.name &&
                 t.scaledSum == c.scaledSum && t.element == c.element;
        }))
      carriedNames.push_back(c);
  SmallVector<Type> types;
  SmallVector<Value> before;
  for (const Carried &c : carriedNames) {
    before.push_back(carriedValue(c));
    types.push_back(before.back().getType());
  }
  auto ifOp = scf::IfOp::create(builder, l, types, c,
                                /*withElseRegion=*/!types.empty() || elseBody);
  auto branch = [&](Block *block, const std::vector<StmtPtr> &body) {
    OpBuilder::InsertionGuard guard(builder);
    setInsertionBeforeTerminator(block);
    push();
    shadow(carriedNames, before);
    LogicalResult result = statements(body);
    if (succeeded(result) && !types.empty())
      scf::YieldOp::create(builder, l, currentValues(carriedNames));
    pop();
    return result;
  };
  if (failed(branch(ifOp.thenBlock(), thenBody)))
    return failure();
  if (ifOp.elseBlock() && failed(branch(ifOp.elseBlock(), otherwise)))
    return failure();
  for (auto [c, value] : llvm::zip_equal(carriedNames, ifOp.getResults()))
    rebind(c, value);
  return success();
}

LogicalResult IRGen::whileStmt(const Stmt &stmt) {
  Location l = loc(stmt.loc);
  push();
  bool exits = loopExits(stmt.body);
  SmallVector<Carried> carriedNames = carried(stmt.body);
  SmallVector<Value> inits = currentValues(carriedNames);
  SmallVector<Type> types(ValueRange(inits).getTypes());
  LogicalResult result = success();
  auto bind = [&](ValueRange args) {
    push();
    shadow(carriedNames, args);
  };
  auto loop = scf::WhileOp::create(
      builder, l, types, inits,
      [&](OpBuilder &b, Location bl, ValueRange args) {
        OpBuilder::InsertionGuard guard(builder);
        builder.setInsertionPointToEnd(b.getInsertionBlock());
        bind(args);
        FailureOr<EVal> cond = expr(*stmt.value);
        Value c;
        if (succeeded(cond)) {
          c = truthValue(cond->value, bl);
          if (exits) {
            // Stop once the body broke.
            Value one = arith::ConstantIntOp::create(builder, bl,
                                                     builder.getI1Type(), 1);
            Value running = builder.createOrFold<arith::XOrIOp>(
                bl, controlFlag(ControlFlag::Break)->value, one);
            if (Symbol *yielded = controlFlag(ControlFlag::Yield);
                yielded && mayYield(stmt.body))
              running = builder.createOrFold<arith::AndIOp>(
                  bl, running,
                  builder.createOrFold<arith::XOrIOp>(bl, yielded->value, one));
            c = builder.createOrFold<arith::AndIOp>(bl, running, c);
          }
        } else {
          result = failure();
          c = arith::ConstantIntOp::create(builder, bl, builder.getI1Type(), 0);
        }
        scf::ConditionOp::create(builder, bl, c, args);
        pop();
      },
      [&](OpBuilder &b, Location bl, ValueRange args) {
        OpBuilder::InsertionGuard guard(builder);
        builder.setInsertionPointToEnd(b.getInsertionBlock());
        bind(args);
        if (exits) {
          Symbol cont{Symbol::Kind::Scalar,
                      arith::ConstantIntOp::create(builder, bl,
                                                   builder.getI1Type(), 0)};
          cont.isMutable = true;
          declareFlag(ControlFlag::Continue, cont);
        }
        if (succeeded(result) && failed(statements(stmt.body)))
          result = failure();
        SmallVector<Value> values;
        for (auto [j, c] : llvm::enumerate(carriedNames)) {
          Value v = carriedValue(c);
          values.push_back(v.getType() == types[j] ? v : args[j]);
          if (v.getType() != types[j] && succeeded(result))
            result = fail(stmt.loc, "'" + c.name + "' changes type inside the "
                                                 "loop");
        }
        scf::YieldOp::create(builder, bl, values);
        pop();
      });
  if (succeeded(result))
    for (auto [c, value] : llvm::zip_equal(carriedNames, loop.getResults()))
      rebind(c, value);
  pop();
  return result;
}

/// True when `e` only combines parallel indices and constants.
static bool isStaticPredicate(const Expr &e,
                              const std::function<Symbol *(StringRef)> &lookup,
                              bool &usesIndex, SMLoc &culprit) {
  switch (e.kind) {
  case Expr::Kind::Int:
  case Expr::Kind::Bool:
    return true;
  case Expr::Kind::Name: {
    Symbol *s = lookup(e.name);
    if (s && s->isParallelIndex) {
      usesIndex = true;
      return true;
    }
    culprit = e.loc;
    return false;
  }
  case Expr::Kind::Unary:
  case Expr::Kind::Binary:
  case Expr::Kind::Ternary:
    for (const ExprPtr &arg : e.args)
      if (!isStaticPredicate(*arg, lookup, usesIndex, culprit))
        return false;
    return true;
  default:
    culprit = e.loc;
    return false;
  }
}

/// True when evaluating `e` may change a variable or call out.
static bool hasSideEffects(const Expr &e) {
  return anyExpr(e, [](const Expr &x) {
    return x.kind == Expr::Kind::Postfix || x.kind == Expr::Kind::DeviceCall ||
           (x.kind == Expr::Kind::Unary && (x.name == "++" || x.name == "--"));
  });
}

LogicalResult IRGen::inthreads(const Stmt &stmt) {
  // The predicate is a conjunction. Its conjuncts over parallel indices and
  // constants select the region's threads (the analyses and warp
  // specialization read them); the others test run-time values and guard
  // the body, as an `if` inside the region. A thread runs the body exactly
  // when the whole predicate holds.
  SmallVector<const Expr *> conjuncts;
  std::function<void(const Expr &)> flatten = [&](const Expr &e) {
    if (e.kind == Expr::Kind::Binary && e.name == "&&") {
      flatten(*e.args[0]);
      flatten(*e.args[1]);
      return;
    }
    conjuncts.push_back(&e);
  };
  flatten(*stmt.value);
  SmallVector<const Expr *> selects, guards;
  bool usesIndex = false;
  for (const Expr *c : conjuncts) {
    SMLoc culprit;
    bool uses = false;
    if (isStaticPredicate(*c, [&](StringRef n) { return lookup(n); }, uses,
                          culprit)) {
      selects.push_back(c);
      usesIndex |= uses;
      continue;
    }
    if (hasSideEffects(*c))
      return fail(c->loc, "an inthreads predicate cannot change variables "
                          "or call functions",
                  "compute the value before the inthreads region");
    guards.push_back(c);
  }
  if (!usesIndex)
    return fail(stmt.value->loc,
                guards.empty()
                    ? "an inthreads predicate must test a parallel index"
                    : "an inthreads predicate needs a conjunct of parallel "
                      "indices and constants that selects its threads; the "
                      "rest may test run-time values",
                guards.empty()
                    ? "e.g. inthreads.async (p1 == 0)"
                    : "e.g. inthreads.async (p1 == 0 && t < limit), or "
                      "use if (...) for a condition on run-time values alone");
  auto conjunction = [&](ArrayRef<const Expr *> parts) -> FailureOr<Value> {
    Value all;
    for (const Expr *part : parts) {
      FailureOr<EVal> v = expr(*part);
      if (failed(v))
        return failure();
      if (!v->value.getType().isInteger(1))
        return fail(part->loc, "an inthreads predicate must be a "
                               "comparison");
      all = all ? arith::AndIOp::create(builder, loc(part->loc), all, v->value)
                      .getResult()
                : v->value;
    }
    return all;
  };
  FailureOr<Value> cond = conjunction(selects);
  if (failed(cond))
    return failure();
  SmallVector<Carried> carriedNames = carried(stmt.body);
  if (llvm::any_of(carriedNames, [](const Carried &c) { return c.isFlag(); }))
    return fail(stmt.loc, "break, continue and yield cannot leave an "
                          "inthreads region",
                "end the work with an if inside the region instead");
  // A scalar the region assigns keeps its value in the threads the region
  // leaves out: each thread holds it in its own memory across the region (a
  // slot at the kernel's entry, which LLVM promotes back to a register).
  // A TMA future names a copy of the block, which any thread can wait on:
  // the region yields it (croq.inthreads results). Roles of
  // inthreads.async are separate programs, and other futures, frags and
  // events are not values of one thread.
  Location l = loc(stmt.loc);
  SmallVector<Value> slots;
  SmallVector<Carried> scalars, futures;
  for (const Carried &c : carriedNames) {
    Value before = carriedValue(c);
    auto future = dyn_cast<FutureType>(before.getType());
    if (!stmt.async && !c.scaledSum && future) {
      if (future.getKind() != FutureKind::Tma)
        return fail(c.at.isValid() ? c.at : stmt.loc,
                    "inthreads cannot assign the future '" + c.name +
                        "', which is defined outside it: an asynchronous "
                        "DMA completes only in the threads that issued it",
                    "wait for it inside the region, or make it with "
                    "tma.copy.async, whose future every thread can wait on");
      futures.push_back(c);
      continue;
    }
    if (stmt.async || c.scaledSum ||
        !isa<IntegerType, FloatType, IndexType>(before.getType()))
      return fail(c.at.isValid() ? c.at : stmt.loc,
                  "inthreads" + Twine(stmt.async ? ".async" : "") +
                      " cannot assign '" + c.name +
                      "', which is defined outside it",
                  stmt.async ? "declare it inside the region: a role is a "
                               "program of its own"
                             : "only scalars and TMA futures carry out of "
                               "an inthreads region; declare it inside the "
                               "region");
    scalars.push_back(c);
    Operation *kernel = enclosingKernel();
    if (!kernel)
      return internalError(stmt.loc, "an inthreads region outside a parallel");
    OpBuilder atEntry(builder.getContext());
    atEntry.setInsertionPointToStart(&kernel->getRegion(0).front());
    auto type = MemRefType::get(
        {}, before.getType(), MemRefLayoutAttrInterface(),
        gpu::AddressSpaceAttr::get(builder.getContext(),
                                   gpu::AddressSpace::Private));
    slots.push_back(memref::AllocaOp::create(atEntry, l, type));
    memref::StoreOp::create(builder, l, before, slots.back());
  }
  InThreadsOp op =
      futures.empty()
          ? InThreadsOp::create(builder, l, *cond, stmt.async)
          : InThreadsOp::create(builder, l, *cond, currentValues(futures));
  LogicalResult result = success();
  {
    OpBuilder::InsertionGuard guard(builder);
    Block &body = op.getBody().front();
    if (futures.empty())
      builder.setInsertionPoint(body.getTerminator());
    else
      builder.setInsertionPointToEnd(&body);
    push();
    shadow(carriedNames);
    ++inthreadsDepth;
    if (guards.empty()) {
      result = statements(stmt.body);
    } else {
      FailureOr<Value> guard = conjunction(guards);
      result = failed(guard) ? failure()
                             : ifThenElse(l, *guard, stmt.body, nullptr);
    }
    --inthreadsDepth;
    if (succeeded(result))
      for (auto [value, slot] : llvm::zip_equal(currentValues(scalars), slots))
        memref::StoreOp::create(builder, l, value, slot);
    if (!futures.empty())
      YieldOp::create(builder, l, currentValues(futures));
    pop();
  }
  if (failed(result))
    return failure();
  for (auto [c, slot] : llvm::zip_equal(scalars, slots))
    rebind(c, memref::LoadOp::create(builder, l, slot));
  for (auto [c, value] : llvm::zip_equal(futures, op.getResults()))
    rebind(c, value);
  return success();
}
