//===- IRGenStmt.cpp - Croqtile statements to IR ----------------------------===//
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
// Statements
//===----------------------------------------------------------------------===//

/// Collects names a statement list assigns, in first-seen order.
/// Pseudo-variables of break / continue: set when the loop breaks, or when
/// the current iteration continues.
/// True when `body` breaks or continues its own loop (not a nested one).
static bool mayExit(ArrayRef<StmtPtr> body) {
  for (const StmtPtr &stmt : body) {
    if (stmt->kind == Stmt::Kind::Break || stmt->kind == Stmt::Kind::Continue)
      return true;
    if (stmt->kind == Stmt::Kind::Foreach || stmt->kind == Stmt::Kind::While)
      continue;
    if (mayExit(stmt->body) || mayExit(stmt->elseBody))
      return true;
  }
  return false;
}

/// True when `e` reads an element of `name` (`name.at(...)`).
static bool readsElementOf(const Expr &e, StringRef name) {
  return anyExpr(e, [&](const Expr &x) {
    return x.kind == Expr::Kind::Member && x.name == "at" && x.base &&
           x.base->kind == Expr::Kind::Name && x.base->name == name;
  });
}

bool IRGen::bodyHasMma(ArrayRef<StmtPtr> body) {
  for (const StmtPtr &stmt : body) {
    if (stmt->kind == Stmt::Kind::Mma || stmt->kind == Stmt::Kind::MmaFill ||
        stmt->kind == Stmt::Kind::MmaLoad || stmt->kind == Stmt::Kind::MmaScale)
      return true;
    if (bodyHasMma(stmt->body) || bodyHasMma(stmt->elseBody))
      return true;
  }
  return false;
}

namespace {
/// The writes of a body in source order, each once.
struct AssignedList {
  SmallVector<Assigned> items;
  llvm::StringSet<> names, waited;
  std::array<bool, kNumControlFlags> flags = {};

  void add(const std::string &name, llvm::SMLoc at = {}) {
    if (!name.empty() && names.insert(name).second) {
      Carried c(name);
      c.at = at;
      items.push_back({c});
    }
  }
  void add(ControlFlag flag) {
    if (!flags[static_cast<unsigned>(flag)]) {
      flags[static_cast<unsigned>(flag)] = true;
      items.push_back({Carried(flag)});
    }
  }
  void addWaited(const std::string &future) {
    if (waited.insert(future).second)
      items.push_back({Carried(future), /*waitedMma=*/true});
  }
};
} // namespace

static void collectAssigned(ArrayRef<StmtPtr> body, AssignedList &out);

/// The variable an MMA's accumulator operand names: `mc`, or the array of
/// `mc[i][j]` (all of whose elements it may change); empty for none.
static std::string accumulatorName(const Expr &e) {
  std::vector<const Expr *> indices;
  const Expr *name = subscriptedName(e, indices);
  return name ? name->name : std::string();
}

/// The variables `x++`, `--x`... inside `e` change, and the accumulators
/// a device call takes (`call f(acc)` may change their registers; the
/// other names it takes are not carried for it: carriedOf keeps frags and
/// mutable scalars, whose values the call leaves).
static void collectIncrements(const Expr *e, AssignedList &out) {
  if (!e)
    return;
  if ((e->kind == Expr::Kind::Postfix ||
       (e->kind == Expr::Kind::Unary && (e->name == "++" || e->name == "--"))) &&
      !e->args.empty() && e->args[0] && e->args[0]->kind == Expr::Kind::Name)
    out.add(e->args[0]->name);
  if (e->kind == Expr::Kind::DeviceCall)
    for (const ExprPtr &arg : e->args)
      if (arg && arg->kind == Expr::Kind::Name)
        out.add(arg->name);
  collectIncrements(e->base.get(), out);
  for (const ExprPtr &arg : e->args)
    collectIncrements(arg.get(), out);
}

static void collectAssigned(const Stmt *stmt, AssignedList &out) {
  for (const Expr *e : {stmt->value.get(), stmt->target.get(),
                        stmt->source.get(), stmt->dest.get(), stmt->mask.get(),
                        stmt->boundEvent.get(), stmt->padValue.get()})
    collectIncrements(e, out);
  for (const ExprPtr &operand : stmt->operands)
    collectIncrements(operand.get(), out);
  switch (stmt->kind) {
  case Stmt::Kind::Assign:
    if (stmt->target->kind == Expr::Kind::Name)
      out.add(stmt->target->name, stmt->target->loc);
    // `acc.at(i, j) = v` makes a new accumulator value.
    else if (stmt->target->kind == Expr::Kind::Member &&
             stmt->target->name == "at" && stmt->target->base &&
             stmt->target->base->kind == Expr::Kind::Name)
      out.add(stmt->target->base->name);
    break;
  case Stmt::Kind::Dma:
  case Stmt::Kind::DmaAny:
  case Stmt::Kind::MmaFill:
  case Stmt::Kind::MmaLoad:
    out.add(stmt->name, stmt->loc);
    break;
  case Stmt::Kind::MmaScale:
    out.add(accumulatorName(*stmt->operands[0]));
    break;
  case Stmt::Kind::Mma:
    // The accumulator changes here, or at the `wait` on the async form's
    // future (which may be declared in the same body).
    out.add(accumulatorName(*stmt->operands[0]));
    out.add(stmt->name);
    break;
  case Stmt::Kind::Wait:
    // Waiting on an async MMA's future updates its accumulator.
    for (const ExprPtr &operand : stmt->operands)
      if (operand->kind == Expr::Kind::Name)
        out.addWaited(operand->name);
    break;
  case Stmt::Kind::Swap:
    for (const ExprPtr &operand : stmt->operands)
      if (operand->kind == Expr::Kind::Name)
        out.add(operand->name);
    break;
  case Stmt::Kind::Asm:
    // Outputs assign scalars (an element output writes memory).
    for (const AsmOperand &o : stmt->asmOutputs)
      if (o.value->kind == Expr::Kind::Name)
        out.add(o.value->name);
    for (const AsmOperand &o : stmt->asmInputs)
      collectIncrements(o.value.get(), out);
    break;
  case Stmt::Kind::Break:
    out.add(ControlFlag::Break);
    out.add(ControlFlag::Continue);
    break;
  case Stmt::Kind::Continue:
    out.add(ControlFlag::Continue);
    break;
  case Stmt::Kind::Yield:
    out.add(ControlFlag::Yield);
    out.add(ControlFlag::Break);
    out.add(ControlFlag::Continue);
    break;
  default:
    break;
  }
  if (stmt->kind == Stmt::Kind::Parallel) {
    // break / continue / yield inside a parallel act within it: its
    // control flags do not flow out.
    AssignedList inner;
    collectAssigned(stmt->body, inner);
    for (const Assigned &a : inner.items) {
      if (a.what.isFlag())
        continue;
      if (a.waitedMma)
        out.addWaited(a.what.name);
      else
        out.add(a.what.name);
    }
    return;
  }
  collectAssigned(stmt->body, out);
  collectAssigned(stmt->elseBody, out);
}

static void collectAssigned(ArrayRef<StmtPtr> body, AssignedList &out) {
  for (const StmtPtr &stmt : body)
    collectAssigned(stmt.get(), out);
}

SmallVector<Carried> IRGen::carried(ArrayRef<StmtPtr> body) {
  AssignedList assigned;
  collectAssigned(body, assigned);
  return carriedOf(assigned.items);
}

SmallVector<Carried> IRGen::carriedOf(ArrayRef<Assigned> assigned) {
  SmallVector<Carried> result;
  llvm::StringSet<> taken;
  std::array<bool, kNumControlFlags> takenFlags = {};
  for (const Assigned &a : assigned) {
    if (a.what.isFlag()) {
      unsigned i = static_cast<unsigned>(*a.what.flag);
      if (controlFlag(*a.what.flag) && !takenFlags[i]) {
        takenFlags[i] = true;
        result.push_back(a.what);
      }
      continue;
    }
    std::string name = a.what.name;
    if (a.waitedMma) {
      // wait f on an async MMA future: its accumulator changes.
      Symbol *f = lookup(name);
      if (!f || f->kind != Symbol::Kind::Future || !f->origin ||
          f->origin->kind != Stmt::Kind::Mma ||
          f->origin->operands[0]->kind != Expr::Kind::Name)
        continue;
      name = f->origin->operands[0]->name;
    }
    Symbol *s = lookup(name);
    if (!s || !taken.insert(name).second)
      continue;
    if (s->kind == Symbol::Kind::FragArray) {
      for (int k = 0, e = s->fragElements.size(); k < e; ++k)
        result.push_back(Carried::elementOf(name, k));
      continue;
    }
    if (s->kind == Symbol::Kind::Future || s->kind == Symbol::Kind::Frag ||
        (s->kind == Symbol::Kind::Scalar && s->isMutable)) {
      Carried c(name);
      c.at = a.what.at;
      result.push_back(c);
    }
    if (s->kind == Symbol::Kind::Frag && s->scaledSum)
      result.push_back(Carried(name, /*scaledSum=*/true));
  }
  return result;
}

/// Shared memory of one block on sm_90, opt-in included.
constexpr int64_t kMaxSharedBytes = 227 * 1024;

/// True for an expression that denotes a view rather than a scalar:
/// chunkat, subspan(...)[.step(...)][.at(...)], chunk(...).at(...), or a
/// buffer of an array (`bufs[i]`).
static bool isViewExpr(const Expr &e) {
  if (e.kind == Expr::Kind::Index)
    return !(e.base && e.base->kind == Expr::Kind::Member &&
             e.base->name == "span" && !e.base->hasArgs);
  if (e.kind != Expr::Kind::Member)
    return false;
  if (e.name == "chunkat" || e.name == "subspan" || e.name == "step" ||
      e.name == "span_as" || e.name == "sqz" ||
      (e.name == "from" && e.base && e.base->kind == Expr::Kind::Member &&
       e.base->name == "view"))
    return true;
  // `.at(...)` of a subspan or chunk is a tile; of anything else an element.
  if (e.name == "at" && e.base && e.base->kind == Expr::Kind::Member)
    return e.base->name == "subspan" || e.base->name == "chunk" ||
           e.base->name == "step";
  return false;
}

LogicalResult IRGen::statements(ArrayRef<StmtPtr> body) {
  for (size_t i = 0; i < body.size(); ++i) {
    if (failed(statement(*body[i])))
      return failure();
    // After a statement that may break, continue or yield, the rest of the
    // body runs only while none of them happened.
    bool exits = mayExit(body.slice(i, 1)) && controlFlag(ControlFlag::Continue);
    bool yields = mayYield(body.slice(i, 1)) && controlFlag(ControlFlag::Yield);
    if (i + 1 < body.size() && (exits || yields)) {
      Location l = loc(body[i + 1]->loc);
      Value stop = arith::ConstantIntOp::create(builder, l, builder.getI1Type(), 0);
      if (exits)
        stop = builder.createOrFold<arith::OrIOp>(
            l, controlFlag(ControlFlag::Break)->value, controlFlag(ControlFlag::Continue)->value);
      if (yields)
        stop = builder.createOrFold<arith::OrIOp>(l, stop,
                                                  controlFlag(ControlFlag::Yield)->value);
      Value one = arith::ConstantIntOp::create(builder, l, builder.getI1Type(), 1);
      Value go = builder.createOrFold<arith::XOrIOp>(l, stop, one);
      return guarded(go, body.drop_front(i + 1), l);
    }
  }
  return success();
}

LogicalResult IRGen::guarded(Value cond, ArrayRef<StmtPtr> body, Location l) {
  SmallVector<Carried> carriedNames = carried(body);
  SmallVector<Type> types;
  SmallVector<Value> before;
  for (const Carried &c : carriedNames) {
    before.push_back(carriedValue(c));
    types.push_back(before.back().getType());
  }
  auto ifOp = scf::IfOp::create(builder, l, types, cond,
                                /*withElseRegion=*/!types.empty());
  LogicalResult result = success();
  {
    OpBuilder::InsertionGuard guard(builder);
    Block *block = ifOp.thenBlock();
    setInsertionBeforeTerminator(block);
    push();
    shadow(carriedNames, before);
    result = statements(body);
    if (succeeded(result) && !types.empty())
      scf::YieldOp::create(builder, l, currentValues(carriedNames));
    pop();
  }
  if (failed(result))
    return failure();
  if (!types.empty()) {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToEnd(ifOp.elseBlock());
    scf::YieldOp::create(builder, l, before);
  }
  for (auto [c, value] : llvm::zip_equal(carriedNames, ifOp.getResults()))
    rebind(c, value);
  return success();
}

bool IRGen::loopExits(ArrayRef<StmtPtr> body) {
  if (!mayExit(body) && !(mayYield(body) && controlFlag(ControlFlag::Yield)))
    return false;
  Location l = builder.getUnknownLoc();
  Symbol flag{Symbol::Kind::Scalar,
              arith::ConstantIntOp::create(builder, l, builder.getI1Type(), 0)};
  flag.isMutable = true;
  declareFlag(ControlFlag::Break, flag);
  return true;
}

LogicalResult IRGen::keepingRowParts(const Stmt &stmt,
                                     function_ref<LogicalResult()> build) {
  // Whether a row frag holds parts is known statically, in program order;
  // a loop or branch that changes it would leave it different on the paths
  // out of it.
  SmallVector<bool> before;
  for (const RegisterTile &tile : tiles)
    before.push_back(tile.partial);
  if (failed(build()))
    return failure();
  // Tiles declared inside are the region's own.
  for (auto [was, tile] : llvm::zip_first(before, tiles))
    if (tile.partial != was)
      return fail(stmt.loc, "this statement's body " +
                                Twine(tile.partial ? "gathers" : "combines") +
                                " the row parts of a frag, which the code "
                                "after it would see as parts on some paths "
                                "and not on others",
                  "gather the parts and combine them (all_reduce_*) in the "
                  "same loop iteration or branch");
  return success();
}

LogicalResult IRGen::onOneThread(const Stmt &stmt) {
  // Host code that reads or writes tensor elements: the tensors live on
  // the GPU, so the statement runs there, in one thread of one block.
  Location l = loc(stmt.loc);
  emitWarning(l) << "host code that reads or writes tensor elements runs "
                      "on the GPU, in one thread";
  auto grid = ParallelOp::create(builder, l, Level::Block,
                                 ValueRange{constIndex(1, l)}, false, Value(),
                                 TypeRange{});
  return parallelBody(grid, {}, [&] {
    auto thread = ParallelOp::create(builder, l, Level::Thread,
                                     ValueRange{constIndex(1, l)}, false,
                                     Value(), TypeRange{});
    return parallelBody(thread, {}, [&] { return statement(stmt); });
  });
}

LogicalResult IRGen::statement(const Stmt &stmt) {
  // [[schedule(k_tiles(...))]]: an order for an MMA's K tiles, which Sema
  // checked. The result only differs in rounding; croq keeps the natural
  // order. The kernel attributes are applied where the kernel is built.
  for (const StmtAttribute &attr : stmt.attributes)
    if (attr.name == "schedule")
      emitWarning(loc(attr.loc)) << "croq does not apply [[schedule]]; the "
                                      "MMA runs its K tiles in order";
  if (!insideParallel() && sema.onOneThread.contains(&stmt))
    return onOneThread(stmt);
  switch (stmt.kind) {
  case Stmt::Kind::Block: {
    push();
    LogicalResult result = statements(stmt.body);
    // Rebinds of outer names already went to the outer symbols.
    pop();
    return result;
  }
  case Stmt::Kind::ShapeDecl:
    return shapeDecl(stmt);
  case Stmt::Kind::ScalarDecl:
  case Stmt::Kind::TensorDecl:
  case Stmt::Kind::EventDecl:
  case Stmt::Kind::StreamDecl:
    return declaration(stmt);
  case Stmt::Kind::Assign:
  case Stmt::Kind::ExprStmt:
    return assignment(stmt);
  case Stmt::Kind::Dma:
    return copy(stmt);
  case Stmt::Kind::DmaAny:
    return dmaAny(stmt);
  case Stmt::Kind::MmaFill:
    return mmaFill(stmt);
  case Stmt::Kind::MmaLoad:
    return mmaLoad(stmt);
  case Stmt::Kind::Mma:
    return mma(stmt);
  case Stmt::Kind::MmaStore:
    return mmaStore(stmt);
  case Stmt::Kind::MmaScale:
    return mmaScale(stmt);
  case Stmt::Kind::MmaCommit: {
    auto commit = MmaCommitOp::create(builder, loc(stmt.loc));
    if (stmt.arrivals)
      commit.setPending(*stmt.arrivals);
    return success();
  }
  case Stmt::Kind::Wait:
  case Stmt::Kind::Trigger:
    return waitOrTrigger(stmt);
  case Stmt::Kind::Swap:
    return swap(stmt);
  case Stmt::Kind::Print:
    return print(stmt);
  case Stmt::Kind::Assert:
    return assertStmt(stmt);
  case Stmt::Kind::Cpp:
    return cpp(stmt);
  case Stmt::Kind::Asm:
    return inlineAsm(stmt);
  case Stmt::Kind::Sync: {
    if (stmt.op == "global")
      return fail(stmt.loc, "sync.global is not supported yet",
                  "use sync.shared or sync.barrier : level");
    if (stmt.layout == "cluster") {
      // The blocks of a cluster: a cluster barrier, which also orders
      // their memory; a fence alone does not exist at this level yet.
      if (stmt.op == "fence")
        return fail(stmt.loc,
                    "sync.fence : cluster is not supported",
                    "sync.barrier : cluster orders the memory accesses of "
                    "every block of the cluster");
      ClusterBarrierOp::create(builder, loc(stmt.loc));
      return success();
    }
    Level level = Level::Block;
    if (stmt.op == "barrier" || stmt.op == "fence")
      level = llvm::StringSwitch<Level>(stmt.layout)
                  .Case("group-4", Level::Warpgroup)
                  .Case("group", Level::Warp)
                  .Case("thread", Level::Thread)
                  .Default(Level::Block);
    if (stmt.op == "fence") {
      // Orders this thread's memory accesses as the threads of `level` see
      // them; it waits for no other thread.
      FenceOp::create(builder, loc(stmt.loc), level);
      return success();
    }
    // One thread has nothing to wait for: the barrier is a no-op.
    if (level == Level::Thread) {
      emitWarning(loc(stmt.loc)) << "a barrier over one thread waits for "
                                    "nothing; croq emits none";
      return success();
    }
    // In the body of a cooperative block level, `sync.barrier : block`
    // waits for the whole grid.
    if (stmt.op == "barrier" && level == Level::Block &&
        enclosingParallel() &&
        enclosingParallel().getLevel() == Level::Block &&
        enclosingParallel().getCooperative()) {
      GridBarrierOp::create(builder, loc(stmt.loc));
      return success();
    }
    BarrierOp::create(builder, loc(stmt.loc), level);
    return success();
  }
  case Stmt::Kind::Parallel:
    return parallel(stmt);
  case Stmt::Kind::With:
    return with(stmt);
  case Stmt::Kind::Foreach:
    return keepingRowParts(stmt, [&] { return foreach(stmt); });
  case Stmt::Kind::Apply:
    return apply(stmt);
  case Stmt::Kind::InThreads:
    return keepingRowParts(stmt, [&] { return inthreads(stmt); });
  case Stmt::Kind::If:
    return keepingRowParts(stmt, [&] { return ifStmt(stmt); });
  case Stmt::Kind::While:
    return keepingRowParts(stmt, [&] { return whileStmt(stmt); });
  case Stmt::Kind::Yield: {
    // Sema placed it in a parallel, whose body declares the flag.
    Symbol *yielded = controlFlag(ControlFlag::Yield);
    if (!yielded)
      return internalError(stmt.loc, "yield has no parallel to end");
    Value yes = arith::ConstantIntOp::create(builder, loc(stmt.loc),
                                             builder.getI1Type(), 1);
    yielded->value = yes;
    // Inside a loop, the loop stops too (each enclosing loop checks the
    // flag before its next iteration).
    if (Symbol *brk = controlFlag(ControlFlag::Break))
      brk->value = yes;
    if (Symbol *cnt = controlFlag(ControlFlag::Continue))
      cnt->value = yes;
    return success();
  }
  case Stmt::Kind::Break:
  case Stmt::Kind::Continue: {
    Symbol *brk = controlFlag(ControlFlag::Break), *cnt = controlFlag(ControlFlag::Continue);
    // Sema placed it in a loop, which declares the flags.
    if (!brk || !cnt)
      return internalError(stmt.loc, "break or continue has no loop");
    Value yes = arith::ConstantIntOp::create(builder, loc(stmt.loc),
                                             builder.getI1Type(), 1);
    cnt->value = yes;
    if (stmt.kind == Stmt::Kind::Break)
      brk->value = yes;
    return success();
  }
  case Stmt::Kind::Return: {
    if (!stmt.value) {
      hasReturn = true;
      return success();
    }
    const Expr &e = *stmt.value;
    StringRef kind = currentFunction->returnKind;
    bool tensor = kind == "tensor";
    if (kind == "auto") {
      Symbol *s = e.kind == Expr::Kind::Name ? lookup(e.name) : nullptr;
      tensor = isViewExpr(e) ||
               (s && (s->kind == Symbol::Kind::Tensor ||
                      s->kind == Symbol::Kind::Future)) ||
               (e.kind == Expr::Kind::Member && e.name == "data");
    }
    if (tensor) {
      FailureOr<Value> v = view(e);
      if (failed(v))
        return failure();
      if (failed(checkReturnedTensor(e, cast<MemRefType>(v->getType()))))
        return failure();
      returned.push_back(*v);
    } else {
      FailureOr<EVal> v = expr(e);
      if (failed(v))
        return failure();
      Value result = v->value;
      if (kind == "scalar") {
        Type type = elementType(currentFunction->returnType, stmt.loc);
        if (!type)
          return failure();
        result = coerce(result, type, loc(stmt.loc));
      }
      returned.push_back(result);
    }
    hasReturn = true;
    return success();
  }
  }
  return fail(stmt.loc, "unsupported statement");
}

LogicalResult IRGen::checkInitializer(const Expr &e, Value value, Type element) {
  // A run-time float does not silently become an integer element; a
  // literal (`{0}`, `{1.0f}` for f16) converts as written.
  bool literal = asConstant(value).has_value() ||
                 matchPattern(value, m_Constant());
  if (!literal && isa<FloatType>(value.getType()) && !isa<FloatType>(element))
    return fail(e.loc, "a " + typeString(value.getType()) +
                           " value cannot initialise " +
                           typeString(element) + " elements",
                "convert it explicitly with __to<T>(...)");
  return success();
}

LogicalResult IRGen::fillGlobal(const Stmt &stmt, Value buffer, Type element) {
  Location l = loc(stmt.value->loc);
  FailureOr<EVal> v = expr(*stmt.value);
  if (failed(v) || failed(checkInitializer(*stmt.value, v->value, element)))
    return failure();
  auto type = cast<MemRefType>(buffer.getType());
  SmallVector<Value> extents;
  Value total = constIndex(1, l);
  for (int64_t d = 0; d < type.getRank(); ++d) {
    extents.push_back(type.isDynamicDim(d)
                          ? Value(memref::DimOp::create(builder, l, buffer, d))
                          : constIndex(type.getDimSize(d), l));
    total = builder.createOrFold<arith::MulIOp>(l, total, extents.back());
  }
  // One thread per element, 256 to a block.
  constexpr int64_t kThreads = 256;
  Value threads = constIndex(kThreads, l);
  Value blocks = builder.createOrFold<arith::CeilDivSIOp>(l, total, threads);
  auto grid = ParallelOp::create(builder, l, Level::Block, ValueRange{blocks},
                                 false, Value(), TypeRange{});
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToStart(&grid.getBody().front());
  auto block = ParallelOp::create(builder, l, Level::Thread, ValueRange{threads},
                                  false, Value(), TypeRange{});
  builder.setInsertionPointToStart(&block.getBody().front());
  Value linear = builder.createOrFold<arith::AddIOp>(
      l, builder.createOrFold<arith::MulIOp>(l, grid.getBody().getArgument(0), threads),
      block.getBody().getArgument(0));
  Value inside = builder.createOrFold<arith::CmpIOp>(l, arith::CmpIPredicate::slt,
                                                     linear, total);
  auto guarded = scf::IfOp::create(builder, l, inside, /*withElseRegion=*/false);
  builder.setInsertionPointToStart(guarded.thenBlock());
  SmallVector<Value> indices(type.getRank());
  Value rest = linear;
  for (int64_t d = type.getRank() - 1; d >= 0; --d) {
    indices[d] = builder.createOrFold<arith::RemSIOp>(l, rest, extents[d]);
    rest = builder.createOrFold<arith::DivSIOp>(l, rest, extents[d]);
  }
  // Converted in the kernel: host code holds no f16 or bf16 values.
  Value fill = coerce(v->value, element, l);
  memref::StoreOp::create(builder, l, fill, buffer, indices);
  return success();
}

LogicalResult IRGen::checkReturnedTensor(const Expr &e, MemRefType type) {
  const Function &fn = *currentFunction;
  if (fn.returnKind != "tensor")
    return success();
  Type element = elementType(fn.returnType, fn.loc);
  if (!element)
    return failure();
  int64_t rank = fn.returnRank >= 0 ? fn.returnRank : fn.returnDims.size();
  std::string declared = fn.returnType + " " +
                         (fn.returnRank >= 0 ? "mdspan<" + std::to_string(rank) + ">"
                                             : "of rank " + std::to_string(rank));
  if (type.getElementType() != element || type.getRank() != rank)
    return fail(e.loc, "the function returns " + declared + ", but this is " +
                           typeString(type));
  // Constant extents the signature names must match; names and ? are the
  // caller's business.
  for (auto [d, dim] : llvm::enumerate(fn.returnDims))
    if (std::optional<int64_t> c = foldConstant(*dim);
        c && !type.isDynamicDim(d) && type.getDimSize(d) != *c)
      return fail(e.loc, "dimension " + Twine(d) + " of the returned tensor is " +
                             Twine(type.getDimSize(d)) + ", but the function "
                             "declares " + Twine(*c));
  return success();
}

LogicalResult IRGen::declaration(const Stmt &stmt) {
  Location l = loc(stmt.loc);
  if (stmt.kind == Stmt::Kind::StreamDecl) {
    // Handled where its parallel.async is built (see parallel()).
    if (!lookup(stmt.name))
      return fail(stmt.loc, "`stream " + stmt.name +
                                ";` belongs at the top of a parallel.async "
                                "block body",
                  "or pass a stream parameter and write parallel.async<" +
                      stmt.name + ">");
    return success();
  }
  if (stmt.kind == Stmt::Kind::ScalarDecl) {
    Value value;
    Type type;
    if (stmt.elemType.empty()) {
      // `mutable x = v;`
      FailureOr<EVal> v = expr(*stmt.value);
      if (failed(v))
        return failure();
      value = v->value;
      type = value.getType();
    } else if (!(type = elementType(stmt.elemType, stmt.loc))) {
      return failure();
    } else if (stmt.value) {
      FailureOr<EVal> v = stmt.value->kind == Expr::Kind::DeviceCall
                              ? deviceCall(*stmt.value, type,
                                           isUnsignedName(stmt.elemType))
                              : expr(*stmt.value);
      if (failed(v))
        return failure();
      value = withSignedness(coerce(v->value, type, l),
                             isUnsignedName(stmt.elemType), l);
    } else {
      value = arith::ConstantOp::create(builder, l, builder.getZeroAttr(type));
      if (isUnsignedName(stmt.elemType))
        unsignedValues.insert(value);
    }
    Symbol s{Symbol::Kind::Scalar, value};
    // A declared scalar is a variable: `f16 acc = 0; acc += ...` (only an
    // untyped `x = v;` binds an immutable name).
    s.isMutable = true;
    if (failed(declareNew(stmt.name, stmt.nameLoc, s)))
      return failure();
  } else if (stmt.kind == Stmt::Kind::TensorDecl) {
    Type element = elementType(stmt.elemType, stmt.loc);
    if (!element)
      return failure();
    if (element.isIndex())
      return fail(stmt.loc, "a tensor needs a sized element type; 'int' is "
                            "for scalars",
                  "use s32, s64, u32, ...");
    if (stmt.storage == "frag") {
      if (failed(tileDecl(stmt, element)))
        return failure();
      for (const StmtPtr &more : stmt.moreDecls)
        if (failed(declaration(*more)))
          return failure();
      return success();
    }
    std::string storage = stmt.storage.empty() ? "global" : stmt.storage;
    bool device = storage == "shared" || storage == "local";
    SmallVector<int64_t> shape;
    SmallVector<Value> dynamic;
    for (const ExprPtr &d : stmt.arrayDims) {
      FailureOr<int64_t> c = constantExpr(*d);
      if (failed(c))
        return failure();
      shape.push_back(*c);
    }
    FailureOr<SmallVector<ViewArg>> dims = viewArgs(stmt.dims);
    if (failed(dims))
      return failure();
    for (const ViewArg &d : *dims) {
      FailureOr<Value> v = argIndex(d);
      if (failed(v))
        return failure();
      if (std::optional<int64_t> c = asConstant(*v)) {
        if (*c <= 0)
          return fail(d.expr->loc, "tensor dimensions must be positive");
        shape.push_back(*c);
      } else {
        // A shared buffer may be sized at the launch (from the kernel's
        // arguments); a local one lives in registers.
        if (storage == "local")
          return fail(d.expr->loc, storage + " buffers need compile-time "
                                             "dimensions",
                      "use literals or #defines");
        shape.push_back(ShapedType::kDynamic);
        dynamic.push_back(*v);
      }
    }
    Attribute space;
    if (storage == "shared")
      space = gpu::AddressSpaceAttr::get(context, gpu::AddressSpace::Workgroup);
    else if (storage == "local")
      space = gpu::AddressSpaceAttr::get(context, gpu::AddressSpace::Private);
    // One block's shared memory holds at most 227 KiB (sm_90); the pipeline
    // checks the sum of a kernel's buffers, this catches one that alone
    // cannot fit (and keeps sizes far from overflow).
    if (storage == "shared") {
      int64_t bytes = llvm::divideCeil(element.getIntOrFloatBitWidth(), 8);
      bool overflow = false;
      for (int64_t extent : shape)
        if (!ShapedType::isDynamic(extent))
          overflow |= llvm::MulOverflow(bytes, extent, bytes);
      if (overflow || bytes > kMaxSharedBytes)
        return fail(stmt.loc, "this shared buffer needs " +
                                  (overflow ? std::string("more than 2^63")
                                            : std::to_string(bytes)) +
                                  " bytes; a block has at most " +
                                  Twine(kMaxSharedBytes) + " (227 KiB)",
                    "use a smaller tile");
    }
    auto type = MemRefType::get(shape, element, MemRefLayoutAttrInterface(), space);
    Value buffer = memref::AllocOp::create(builder, l, type, dynamic);
    if (isUnsignedName(stmt.elemType))
      unsignedTensors.insert(buffer);
    // `f16 [M, N] out{0.0f};` on the host: a kernel fills it.
    if (stmt.value && !device) {
      if (failed(fillGlobal(stmt, buffer, element)))
        return failure();
    } else if (stmt.value) {
      // `shared f32 [..] s{v};` / `local f32 [..] l{v};`: every element is v.
      FailureOr<EVal> v = expr(*stmt.value);
      if (failed(v) || failed(checkInitializer(*stmt.value, v->value, element)))
        return failure();
      Value fill = coerce(v->value, element, l);
      SmallVector<Value> lbs, ubs, steps;
      unsigned next = 0;
      for (int64_t extent : shape) {
        lbs.push_back(constIndex(0, l));
        ubs.push_back(ShapedType::isDynamic(extent) ? dynamic[next++]
                                                    : constIndex(extent, l));
        steps.push_back(constIndex(1, l));
      }
      scf::buildLoopNest(builder, l, lbs, ubs, steps,
                         [&](OpBuilder &b, Location loc, ValueRange ivs) {
                           memref::StoreOp::create(b, loc, fill, buffer, ivs);
                         });
    }
    if (failed(declareNew(stmt.name, stmt.nameLoc,
                          Symbol{Symbol::Kind::Tensor, buffer})))
      return failure();
  } else {
    std::string storage = stmt.storage.empty() ? "shared" : stmt.storage;
    MemoryKind kind = storage == "global"  ? MemoryKind::Global
                      : storage == "local" ? MemoryKind::Local
                                           : MemoryKind::Shared;
    SmallVector<int64_t> shape;
    for (const ExprPtr &d : stmt.arrayDims) {
      FailureOr<int64_t> c = constantExpr(*d);
      if (failed(c))
        return failure();
      shape.push_back(*c);
    }
    auto type = EventType::getChecked([&] { return emitError(l); }, context,
                                      kind, ArrayRef<int64_t>(shape));
    if (!type)
      return failure();
    auto alloc = EventAllocOp::create(builder, l, type, UnitAttr(), IntegerAttr());
    if (stmt.ready)
      alloc.setReady(true);
    if (stmt.arrivals)
      alloc.setArrivals(*stmt.arrivals);
    if (failed(declareNew(stmt.name, stmt.nameLoc,
                          Symbol{Symbol::Kind::Event, alloc.getEvent()})))
      return failure();
  }
  for (const StmtPtr &more : stmt.moreDecls)
    if (failed(declaration(*more)))
      return failure();
  return success();
}

LogicalResult IRGen::namedBarrier(const Expr &e) {
  SmallVector<Value> operands;
  for (const ExprPtr &arg : e.args) {
    FailureOr<EVal> v = expr(*arg);
    if (failed(v))
      return failure();
    if (!v->value.getType().isIntOrIndex() || v->value.getType().isInteger(1))
      return fail(arg->loc, "a barrier id or thread count is an integer");
    operands.push_back(coerce(v->value, builder.getI32Type(), loc(arg->loc)));
  }
  // The op's own rules, in the program's words.
  if (std::optional<int64_t> id = getConstantIntValue(operands[0]);
      id && (*id < 0 || *id > 15))
    return fail(e.args[0]->loc, e.name + "'s barrier id " + Twine(*id) +
                                    " is out of range: a block has 16 "
                                    "barriers, 0 to 15");
  if (std::optional<int64_t> count = getConstantIntValue(operands[1]);
      count && (*count <= 0 || *count % 32))
    return fail(e.args[1]->loc,
                e.name + " counts whole warps: " + Twine(*count) +
                    " threads is not a positive multiple of 32",
                "count the threads of the warps that meet at the barrier");
  NamedBarrierOp::create(builder, loc(e.loc), e.name == "__bar_arrive",
                         operands[0], operands[1]);
  return success();
}

/// `call croq::cuda::setreg_inc(n)` / `setreg_dec(n)`: the register budget
/// of the warp-specialized role whose body holds the call
/// (croq.inthreads's `registers`, which croq-warp-specialize honours). The
/// role starts with the budget wherever the call sits in its body; whether
/// registers grow or shrink follows from the kernel's entry count, which
/// croq chooses (croq-bound-kernel-registers).
LogicalResult IRGen::setRegisters(const Expr &e) {
  // Sema checked that the call sits directly in a role's body, once, with a
  // count setmaxnreg takes.
  auto role = dyn_cast_or_null<InThreadsOp>(
      builder.getInsertionBlock()->getParentOp());
  FailureOr<int64_t> count = constantExpr(*e.args[0]);
  if (failed(count))
    return failure();
  if (!role)
    return internalError(e.loc, "a register budget outside a role");
  role.setRegisters(static_cast<int32_t>(*count));
  return success();
}

/// True when `e` reads the name `name`.
static bool mentionsName(const Expr &e, StringRef name) {
  return anyExpr(e, [&](const Expr &x) {
    return x.kind == Expr::Kind::Name && x.name == name;
  });
}

LogicalResult IRGen::assignment(const Stmt &stmt) {
  Location l = loc(stmt.loc);
  if (stmt.kind == Stmt::Kind::ExprStmt) {
    const Expr &e = *stmt.value;
    if (e.kind == Expr::Kind::DeviceCall &&
        (e.name == "croq::cuda::setreg_inc" ||
         e.name == "croq::cuda::setreg_dec"))
      return setRegisters(e);
    if (e.kind == Expr::Kind::DeviceCall)
      return success(succeeded(deviceCall(e, Type())));
    if (e.kind == Expr::Kind::Call && StringRef(e.name).starts_with("__atomic_"))
      return success(succeeded(expr(e)));
    if (e.kind == Expr::Kind::Call)
      if (std::optional<LogicalResult> done = tileBuiltin(e))
        return *done;
    if (e.kind == Expr::Kind::Call &&
        (e.name == "__bar_sync" || e.name == "__bar_arrive"))
      return namedBarrier(e);
    // Sema accepted it: `x++` or `--x`.
    return success(succeeded(expr(e)));
  }
  const Expr &target = *stmt.target;
  // f = select(c, f0, f1, ...): one of several futures.
  if (stmt.value->kind == Expr::Kind::Call && stmt.value->name == "select" &&
      target.kind == Expr::Kind::Name && stmt.op == "=") {
    const Expr &call = *stmt.value;
    if (call.args.size() < 3)
      return fail(call.loc, "select takes a condition and at least two "
                            "futures");
    FailureOr<EVal> cond = expr(*call.args[0]);
    if (failed(cond))
      return failure();
    SmallVector<Symbol *> choices;
    for (size_t i = 1; i < call.args.size(); ++i) {
      const Expr &arg = *call.args[i];
      Symbol *f = arg.kind == Expr::Kind::Name ? lookup(arg.name) : nullptr;
      if (!f || f->kind != Symbol::Kind::Future)
        return fail(arg.loc, "select chooses among futures; this is not one");
      if (!choices.empty() && f->value.getType() != choices[0]->value.getType())
        return fail(arg.loc, "select needs futures of one type");
      choices.push_back(f);
    }
    // The condition is the index of the future picked, as upstream's code
    // generation reads it (`*futures[c]`): select(k % 2, f0, f1) is f0 for
    // even k; a bool counts as 0 or 1. An index past the last picks the last.
    if (std::optional<int64_t> k = asConstant(cond->value);
        k && !cond->value.getType().isInteger(1) &&
        (*k < 0 || *k >= static_cast<int64_t>(choices.size())))
      return fail(call.args[0]->loc,
                  "select picks future " + Twine(*k) + " of " +
                      Twine(choices.size()),
                  "the first argument counts from 0 to the number of "
                  "futures minus one");
    Value picked = choices.back()->value;
    Value c = cond->value;
    if (c.getType().isInteger(1))
      c = arith::ExtUIOp::create(builder, l, builder.getI64Type(), c);
    for (int i = choices.size() - 2; i >= 0; --i) {
      Value is = builder.createOrFold<arith::CmpIOp>(
          l, arith::CmpIPredicate::eq, coerce(c, builder.getIndexType(), l),
          constIndex(i, l));
      picked = arith::SelectOp::create(builder, l, is, choices[i]->value, picked);
    }
    Symbol s = *choices[0];
    s.value = picked;
    if (Symbol *existing = lookup(target.name);
        existing && existing->kind == Symbol::Kind::Future) {
      existing->value = picked;
      return success();
    }
    return declareNew(target.name, target.loc, s);
  }
  // `ma = tile.chunkat(_, k);`: a name for a view (D2's MMA operands).
  if (stmt.op == "=" && target.kind == Expr::Kind::Name &&
      isViewExpr(*stmt.value) && !isShapeValued(*stmt.value)) {
    Symbol *existing = lookup(target.name);
    if (!existing || existing->kind == Symbol::Kind::Tensor) {
      FailureOr<Value> v = view(*stmt.value);
      if (failed(v))
        return failure();
      if (existing && existing->value.getType() == v->getType()) {
        // Views are not carried out of loops and branches.
        if (existing->scope != scopes.size())
          return fail(target.loc, "'" + target.name + "' names a view "
                                  "declared outside this loop or branch; a "
                                  "view cannot be rebound inside one",
                      "give the new view its own name");
        existing->value = *v;
        return success();
      }
      if (existing)
        return fail(target.loc, "'" + target.name + "' names a view of "
                                "another shape here",
                    "give the new view its own name");
      return declareNew(target.name, target.loc,
                        Symbol{Symbol::Kind::Tensor, *v});
    }
  }
  // `b = {6, 8};` / `s = a.span / 2;`: the first assignment names a shape.
  if (stmt.op == "=" && target.kind == Expr::Kind::Name &&
      isShapeValued(*stmt.value)) {
    Symbol *existing = lookup(target.name);
    if (existing && existing->kind != Symbol::Kind::Shape)
      return fail(target.loc, "'" + target.name + "' is not a shape; a shape "
                              "cannot be assigned to it");
    FailureOr<SmallVector<EVal>> elems = shapeOf(*stmt.value);
    if (failed(elems))
      return failure();
    if (existing && existing->scope == scopes.size())
      return internalError(target.loc, "the shape '" + target.name +
                                           "' defined twice in one scope");
    Symbol s{Symbol::Kind::Shape, Value()};
    s.elems = std::move(*elems);
    declare(target.name, s);
    return success();
  }
  // A row tile written in an apply over a 2-D tile of the wgmma layout
  // holds each thread's part of its rows (see RegisterTile::partial): the
  // write must accumulate, and its own read of the tile is the one read of
  // the parts allowed.
  int partialRows = -1;
  if (target.kind == Expr::Kind::Member && target.name == "at" &&
      target.hasArgs && target.base->kind == Expr::Kind::Name && applyPoint &&
      applyPoint->layout == TileLayout::WgmmaAcc)
    if (Symbol *s = lookup(target.base->name);
        s && s->kind == Symbol::Kind::Tile &&
        tiles[s->tile].layout == TileLayout::WgmmaRows) {
      FailureOr<PartialOp> op = rowAccumulation(stmt);
      if (failed(op))
        return failure();
      RegisterTile &rows = tiles[s->tile];
      if (rows.partial && rows.partialOp != *op)
        return fail(stmt.loc, "'" + target.base->name + "' accumulates "
                              "row parts with another operation here; "
                              "combine them with all_reduce first");
      partialRows = s->tile;
    }
  // In an apply over a frag of rows each row is held by the four threads of
  // a quad, which all run the body: an update of memory would be made four
  // times (a plain store of the row's value writes it four times alike).
  if (applyPoint && applyPoint->layout == TileLayout::WgmmaRows &&
      target.kind == Expr::Kind::Member && target.name == "at" &&
      target.base && target.base->kind == Expr::Kind::Name)
    if (Symbol *s = lookup(target.base->name);
        (!s || (s->kind != Symbol::Kind::Tile &&
                s->kind != Symbol::Kind::Frag)) &&
        (stmt.op != "=" || readsElementOf(*stmt.value, target.base->name)))
      return fail(stmt.loc, "an update of memory in an apply over a frag of "
                            "rows: each row is held by the four threads of "
                            "a quad, which would all update it",
                  "compute the row's value in the frag and store it with `=`");
  // `r = call f(...)` / `x.at(i) = call f(...)`: the result takes the type
  // of what it is assigned to.
  Type callResult;
  bool callUnsigned = false;
  if (stmt.value->kind == Expr::Kind::DeviceCall) {
    const Expr *root = target.kind == Expr::Kind::Member && target.name == "at"
                           ? target.base.get()
                           : &target;
    Symbol *s = root && root->kind == Expr::Kind::Name ? lookup(root->name)
                                                       : nullptr;
    if (s && root == &target && s->kind == Symbol::Kind::Scalar && s->isMutable) {
      callResult = s->value.getType();
      callUnsigned = isUnsigned(s->value);
    } else if (s && root != &target && s->kind == Symbol::Kind::Tensor) {
      callResult = cast<MemRefType>(s->value.getType()).getElementType();
      callUnsigned = unsignedTensors.contains(rootTensor(s->value));
    } else if (s && root != &target && s->kind == Symbol::Kind::Tile) {
      callResult = tiles[s->tile].element;
    }
    if (!callResult || stmt.op != "=")
      return fail(stmt.value->loc, "the result of `call` needs a type",
                  "declare it (`int r = call f(...);`) or assign it with `=` "
                  "to a mutable scalar or an element");
  }
  // Through the store too: the write's own access of the tile.
  accumulatingTile = partialRows;
  auto resetAccumulating = llvm::scope_exit([&] { accumulatingTile = -1; });
  FailureOr<EVal> rhs = callResult
                           ? deviceCall(*stmt.value, callResult, callUnsigned)
                           : expr(*stmt.value);
  if (failed(rhs))
    return failure();
  auto combine = [&](Value old, Value value) -> FailureOr<Value> {
    if (stmt.op == "=")
      return value;
    StringRef op = StringRef(stmt.op).drop_back();
    // A float narrower than 16 bits updates in f32, rounded once where it
    // is stored, as `x = x + v` would.
    if (auto f = dyn_cast<FloatType>(old.getType()); f && f.getWidth() < 16)
      old = coerce(old, builder.getF32Type(), l);
    value = coerce(value, old.getType(), l);
    bool isFloat = isa<FloatType>(old.getType());
    if ((op == "/" || op == "%") && !isFloat &&
        failed(checkDivisor(stmt.loc, value, stmt.op)))
      return failure();
    if (op == "+") return isFloat ? Value(arith::AddFOp::create(builder, l, old, value)) : Value(builder.createOrFold<arith::AddIOp>(l, old, value));
    if (op == "-") return isFloat ? Value(arith::SubFOp::create(builder, l, old, value)) : Value(builder.createOrFold<arith::SubIOp>(l, old, value));
    if (op == "*") return isFloat ? Value(arith::MulFOp::create(builder, l, old, value)) : Value(builder.createOrFold<arith::MulIOp>(l, old, value));
    bool isUnsignedOp = !isFloat && (isUnsigned(old) || isUnsigned(value));
    if (op == "/") return isFloat ? Value(arith::DivFOp::create(builder, l, old, value)) : isUnsignedOp ? Value(builder.createOrFold<arith::DivUIOp>(l, old, value)) : Value(builder.createOrFold<arith::DivSIOp>(l, old, value));
    return isFloat ? Value(arith::RemFOp::create(builder, l, old, value)) : isUnsignedOp ? Value(builder.createOrFold<arith::RemUIOp>(l, old, value)) : Value(builder.createOrFold<arith::RemSIOp>(l, old, value));
  };
  // `acc += v`: every element of an accumulator with a scalar, register by
  // register in each thread.
  auto updateAccumulator = [&](Value acc) -> FailureOr<Value> {
    auto type = cast<FragType>(acc.getType());
    Type element = type.getElementType();
    if (!rhs->value.getType().isIntOrIndexOrFloat() ||
        rhs->value.getType().isInteger(1))
      return fail(stmt.value->loc, "'" + stmt.op +
                                       "' on an accumulator "
                                       "takes a number");
    if (element.isInteger() && isa<FloatType>(rhs->value.getType()))
      return fail(stmt.value->loc,
                  "'" + stmt.op +
                      "' of a float on an integer accumulator "
                      "would truncate the float first",
                  "use an integer, or accumulate in f32");
    Value v = coerce(rhs->value, element, l);
    for (int64_t r = 0; r < type.getRegisterCount(); ++r) {
      Value e = MmaElementOp::create(builder, l, element, acc, r);
      FailureOr<Value> c = combine(e, v);
      if (failed(c))
        return failure();
      acc = MmaSetElementOp::create(builder, l, *c, acc, r);
    }
    return acc;
  };
  if (target.kind == Expr::Kind::Name) {
    Symbol *s = lookup(target.name);
    if (stmt.op == "=") {
      if (s && s->kind == Symbol::Kind::Scalar && s->isMutable) {
        s->value = coerce(rhs->value, s->value.getType(), l);
        return success();
      }
      if (s && s->scope == scopes.size() && s->kind == Symbol::Kind::Scalar)
        return internalError(target.loc, "the immutable '" + target.name +
                                             "' assigned twice in one scope");
      // The first assignment declares an immutable scalar. One in an inner
      // scope that reads the outer name of its own (`i = i + 1` in a loop
      // body) shadows it, which is rarely what was meant: say so.
      if (s && s->kind == Symbol::Kind::Scalar &&
          mentionsName(*stmt.value, target.name))
        emitWarning(loc(target.loc))
            << "this declares a new '" << target.name
            << "' for this block, computed from the outer one, which keeps "
               "its value; to update the outer one, declare it `mutable`";
      declare(target.name, Symbol{Symbol::Kind::Scalar, rhs->value, rhs->bound});
      return success();
    }
    if (s && s->kind == Symbol::Kind::Frag && stmt.op == "%=")
      return fail(target.loc, "an accumulator takes +=, -=, *= and /= with "
                              "a scalar, not %=");
    if (s && s->kind == Symbol::Kind::Frag &&
        failed(rejectBlockScaled(*s, target.loc, target.name)))
      return failure();
    if (s && s->kind == Symbol::Kind::Frag &&
        cast<FragType>(s->value.getType()).getRole() == FragRole::Acc) {
      FailureOr<Value> acc = updateAccumulator(s->value);
      if (failed(acc))
        return failure();
      s->value = *acc;
      return success();
    }
    if (!s || s->kind != Symbol::Kind::Scalar || !s->isMutable)
      return fail(target.loc, "'" + stmt.op + "' needs a mutable scalar",
                  "declare it as `mutable int " + target.name + " = 0;`");
    FailureOr<Value> v = combine(s->value, rhs->value);
    if (failed(v))
      return failure();
    s->value = *v;
    return success();
  }
  if (target.kind == Expr::Kind::Member && target.name == "at" &&
      target.hasArgs && target.base->kind == Expr::Kind::Name)
    if (Symbol *s = lookup(target.base->name); s && s->kind == Symbol::Kind::Frag) {
      if (failed(rejectBlockScaled(*s, target.loc, target.base->name)))
        return failure();
      // `acc.at(i, j) op= v` of a warpgroup accumulator, inside an apply: a
      // new accumulator value with the thread's register replaced.
      FailureOr<int64_t> r = accRegister(target, *s);
      if (failed(r))
        return failure();
      Type element = cast<FragType>(s->value.getType()).getElementType();
      Value old;
      if (stmt.op != "=")
        old = MmaElementOp::create(builder, l, element, s->value, *r);
      FailureOr<Value> v = stmt.op == "=" ? FailureOr<Value>(rhs->value)
                                          : combine(old, rhs->value);
      if (failed(v))
        return failure();
      s->value = MmaSetElementOp::create(builder, l, coerce(*v, element, l),
                                         s->value, *r);
      return success();
    }
  if (target.kind == Expr::Kind::Member && target.name == "at" && target.hasArgs) {
    auto access = element(target);
    if (failed(access))
      return failure();
    Value *buffer = &access->first;
    SmallVector<Value> &indices = access->second;
    auto type = cast<MemRefType>(buffer->getType());
    Value old;
    if (stmt.op != "=") {
      old = memref::LoadOp::create(builder, l, *buffer, indices);
      if (unsignedTensors.contains(rootTensor(*buffer)))
        unsignedValues.insert(old);
    }
    Type element = type.getElementType();
    FailureOr<Value> v =
        stmt.op == "=" ? FailureOr<Value>(rhs->value) : combine(old, rhs->value);
    if (failed(v))
      return failure();
    if (partialRows >= 0 && !tiles[partialRows].partial) {
      // Before the first part lands: the whole rows' values, which every
      // thread of a quad starts from (all_reduce_sum counts them once).
      RegisterTile &rows = tiles[partialRows];
      for (int64_t h = 0; h < 2; ++h)
        memref::StoreOp::create(
            builder, l,
            memref::LoadOp::create(builder, l, rows.registers,
                                   ValueRange{constIndex(h, l)}),
            rows.snapshot, ValueRange{constIndex(h, l)});
    }
    memref::StoreOp::create(builder, l, coerce(*v, element, l), *buffer,
                            indices);
    if (partialRows >= 0) {
      tiles[partialRows].partial = true;
      tiles[partialRows].partialOp = *rowAccumulation(stmt);
    }
    return success();
  }
  // `mc[i] *= v`: an element of an array of accumulators, as `mc *= v`.
  if (target.kind == Expr::Kind::Index && stmt.op != "=") {
    std::vector<const Expr *> indices;
    const Expr *nameExpr = subscriptedName(target, indices);
    Symbol *s = nameExpr ? lookup(nameExpr->name) : nullptr;
    if (s && s->kind == Symbol::Kind::FragArray) {
      if (stmt.op == "%=")
        return fail(target.loc, "an accumulator takes +=, -=, *= and /= "
                                "with a scalar, not %=");
      FailureOr<AccumulatorRef> acc =
          accumulatorRef(target, "'" + stmt.op + "'");
      if (failed(acc))
        return failure();
      if (acc->symbol->unshaped)
        return fail(target.loc,
                    "'" + stmt.op +
                        "' on an accumulator whose "
                        "shape no MMA has set yet",
                    "use it after the MMA that shapes it");
      FailureOr<Value> updated = updateAccumulator(accumulatorValue(*acc, l));
      if (failed(updated))
        return failure();
      setAccumulator(*acc, *updated, l);
      return success();
    }
  }
  return fail(target.loc, "cannot assign to this expression",
              "assign to a name or to an element `t.at(i, j)`");
}

LogicalResult IRGen::cpp(const Stmt &stmt) {
  // The code cannot name the kernel's variables: it is a function's body.
  std::string name = "__croq_cpp_" + std::to_string(cppBlocks++);
  auto [line, column] = sourceMgr.getLineAndColumn(stmt.loc);
  unsigned id = sourceMgr.FindBufferContainingLoc(stmt.loc);
  std::string file =
      id ? sourceMgr.getMemoryBuffer(id)->getBufferIdentifier().str() : "";
  deviceCodeExtra += "\n__device__ __forceinline__ void " + name +
                     "() {\n#line " + std::to_string(line) + " \"" + file +
                     "\"\n" + stmt.cxx + "\n}\n";
  CallOp::create(builder, loc(stmt.loc), TypeRange(),
                 builder.getStringAttr(name), ValueRange(),
                 /*unsigned_args=*/DenseBoolArrayAttr(),
                 /*unsigned_result=*/false);
  return success();
}

/// The LLVM type of a PTX register constraint letter, or null.
static Type asmRegisterType(OpBuilder &b, char letter) {
  switch (letter) {
  case 'h':
    return b.getI16Type();
  case 'r':
    return b.getI32Type();
  case 'l':
    return b.getI64Type();
  case 'f':
    return b.getF32Type();
  case 'd':
    return b.getF64Type();
  default:
    return nullptr;
  }
}

/// GCC's template syntax in LLVM's: %N -> $N, %[name] -> $index, %% -> %,
/// %= -> ${:uid}, $ -> $$. Fails on a name or number no operand has.
static FailureOr<std::string>
llvmAsmTemplate(StringRef gcc, ArrayRef<std::string> names,
                std::string &bad) {
  std::string out;
  for (size_t i = 0; i < gcc.size(); ++i) {
    char c = gcc[i];
    if (c == '$') {
      out += "$$";
      continue;
    }
    if (c != '%' || i + 1 == gcc.size()) {
      out += c;
      continue;
    }
    char n = gcc[i + 1];
    if (n == '%') {
      out += '%';
      ++i;
    } else if (n == '=') {
      out += "${:uid}";
      ++i;
    } else if (n == '[') {
      size_t close = gcc.find(']', i);
      if (close == StringRef::npos) {
        bad = gcc.substr(i).str();
        return failure();
      }
      StringRef name = gcc.slice(i + 2, close);
      auto it = llvm::find(names, name);
      if (it == names.end()) {
        bad = "%[" + name.str() + "]";
        return failure();
      }
      out += "$" + std::to_string(it - names.begin());
      i = close;
    } else if (llvm::isDigit(n)) {
      size_t j = i + 1;
      while (j < gcc.size() && llvm::isDigit(gcc[j]))
        ++j;
      unsigned index = 0;
      (void)gcc.slice(i + 1, j).getAsInteger(10, index);
      if (index >= names.size()) {
        bad = gcc.slice(i, j).str();
        return failure();
      }
      out += "$" + std::to_string(index);
      i = j - 1;
    } else {
      // PTX register names (%r1, %tid.x) pass through.
      out += c;
    }
  }
  return out;
}

LogicalResult IRGen::inlineAsm(const Stmt &stmt) {
  Location l = loc(stmt.loc);
  // Operands in GCC's numbering: outputs, then inputs.
  SmallVector<std::string> names;
  for (const AsmOperand &o : stmt.asmOutputs)
    names.push_back(o.name);
  for (const AsmOperand &o : stmt.asmInputs)
    names.push_back(o.name);

  // The register type of a constraint's class letter.
  auto registerOf = [&](const AsmOperand &o, StringRef c,
                        StringRef which) -> FailureOr<Type> {
    Type type = c.size() == 1 ? asmRegisterType(builder, c[0]) : Type();
    if (!type)
      return fail(o.loc, "unsupported " + which + " constraint \"" +
                             o.constraint + "\"",
                  "use a PTX register class: h (16-bit), r (32-bit), l "
                  "(64-bit), f (f32) or d (f64)" +
                      Twine(which == "input" ? ", or n for a constant" : ""));
    return type;
  };
  SmallVector<std::string> constraints;
  SmallVector<Type> outputTypes;
  SmallVector<Value> operands;
  SmallVector<std::string> tied;
  SmallVector<Value> tiedValues;
  for (auto [i, o] : llvm::enumerate(stmt.asmOutputs)) {
    StringRef c = o.constraint;
    bool readWrite = c.consume_front("+");
    if (!readWrite && !c.consume_front("="))
      return fail(o.loc, "an output constraint starts with '=' or '+', got \"" +
                             o.constraint + "\"");
    c.consume_front("&");
    FailureOr<Type> type = registerOf(o, c, "output");
    if (failed(type))
      return failure();
    outputTypes.push_back(*type);
    constraints.push_back("=" + c.str());
    if (readWrite) {
      FailureOr<EVal> v = expr(*o.value);
      if (failed(v))
        return failure();
      tiedValues.push_back(coerce(v->value, *type, l));
      tied.push_back(std::to_string(i));
    }
  }
  for (const AsmOperand &o : stmt.asmInputs) {
    StringRef c = o.constraint;
    FailureOr<EVal> v = expr(*o.value);
    if (failed(v))
      return failure();
    if (c == "n") {
      if (!asConstant(v->value))
        return fail(o.loc, "an \"n\" operand must be a compile-time constant");
      operands.push_back(coerce(v->value, builder.getI32Type(), l));
      constraints.push_back("n");
      continue;
    }
    FailureOr<Type> type = registerOf(o, c, "input");
    if (failed(type))
      return failure();
    operands.push_back(coerce(v->value, *type, l));
    constraints.push_back(c.str());
  }
  // "+r" reads its output: an input tied to it, after the others (LLVM
  // numbers operands outputs first, then inputs in order).
  for (const std::string &t : tied)
    constraints.push_back(t);
  llvm::append_range(operands, tiedValues);
  for (const std::string &clobber : stmt.asmClobbers)
    if (clobber == "memory")
      constraints.push_back("~{memory}");
    else if (clobber != "cc")
      return fail(stmt.loc, "unsupported clobber \"" + clobber + "\"",
                  "PTX has no named registers to clobber; use \"memory\"");
  // The tied inputs come last, so GCC's numbering of the other inputs
  // holds; a template that names a "+" operand's input by number is not
  // expressible this way.
  std::string bad;
  FailureOr<std::string> text = llvmAsmTemplate(stmt.cxx, names, bad);
  if (failed(text))
    return fail(stmt.loc, "the assembly template refers to " + bad +
                              ", which is not one of its operands");
  Type result;
  if (outputTypes.size() == 1)
    result = outputTypes.front();
  else if (outputTypes.size() > 1)
    result = LLVM::LLVMStructType::getLiteral(context, outputTypes);
  auto op = LLVM::InlineAsmOp::create(
      builder, l, result ? TypeRange(result) : TypeRange(), operands, *text,
      llvm::join(constraints, ","),
      /*has_side_effects=*/stmt.isVolatile || outputTypes.empty(),
      /*is_align_stack=*/false, LLVM::TailCallKind::None,
      LLVM::AsmDialectAttr::get(context, LLVM::AsmDialect::AD_ATT),
      /*operand_attrs=*/ArrayAttr());
  // The outputs, to their scalars or elements.
  for (auto [i, o] : llvm::enumerate(stmt.asmOutputs)) {
    Value v = outputTypes.size() == 1
                  ? op.getResult(0)
                  : Value(LLVM::ExtractValueOp::create(builder, l, op.getResult(0),
                                                       ArrayRef<int64_t>{int64_t(i)}));
    const Expr &target = *o.value;
    if (target.kind == Expr::Kind::Name) {
      Symbol *s = lookup(target.name);
      if (!s || s->kind != Symbol::Kind::Scalar || !s->isMutable)
        return fail(target.loc, "an asm output needs a mutable scalar or an "
                                "element",
                    "declare it as `mutable int " + target.name + " = 0;`");
      s->value = coerce(v, s->value.getType(), l);
      continue;
    }
    if (target.kind != Expr::Kind::Member || target.name != "at")
      return fail(target.loc, "an asm output needs a mutable scalar or an "
                              "element (`x.at(i)`)");
    auto access = element(target);
    if (failed(access))
      return failure();
    auto [buffer, indices] = *access;
    Type element = cast<MemRefType>(buffer.getType()).getElementType();
    memref::StoreOp::create(builder, l, coerce(v, element, l), buffer, indices);
  }
  return success();
}
