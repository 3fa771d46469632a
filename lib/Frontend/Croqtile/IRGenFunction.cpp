//===- IRGenFunction.cpp - Croqtile functions to IR -------------------------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#include "IRGenImpl.h"
#include "Sema.h"

#include "llvm/ADT/MapVector.h"

#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace mlir::croq;

/// The async op whose future a loop's body yields as `yielded`, through
/// swaps and rotations, when the body issues it unconditionally and waits
/// for it nowhere in the body: the last iteration's copy is in flight when
/// the loop ends. Null otherwise (a guarded prefetch is an scf.if result).
static Operation *inFlightAtExit(scf::ForOp loop, Value yielded) {
  Value v = yielded;
  while (true) {
    if (auto swap = v.getDefiningOp<SwapOp>()) {
      v = cast<OpResult>(v).getResultNumber() == 0 ? swap.getRhs()
                                                   : swap.getLhs();
      continue;
    }
    if (auto rotate = v.getDefiningOp<RotateOp>()) {
      unsigned n = rotate.getNumOperands();
      v = rotate.getOperand((cast<OpResult>(v).getResultNumber() + 1) % n);
      continue;
    }
    break;
  }
  Operation *def = v.getDefiningOp();
  if (!def || def->getParentOp() != loop || getAsyncFuture(def) != v)
    return nullptr;
  bool waitedInBody = llvm::any_of(v.getUsers(), [&](Operation *user) {
    return isa<WaitOp>(user) && loop->isAncestor(user);
  });
  return waitedInBody ? nullptr : def;
}
using namespace mlir::croq::croqtile;

//===----------------------------------------------------------------------===//
// Functions and the module
//===----------------------------------------------------------------------===//

LogicalResult IRGen::function(const Function &fn) {
  Location l = loc(fn.loc);
  SmallVector<Type> argTypes;
  for (const Param &p : fn.params) {
    if (p.kind == "stream") {
      argTypes.push_back(StreamType::get(context));
      continue;
    }
    Type element = elementType(p.elemType, p.loc);
    if (!element)
      return failure();
    if (p.kind == "scalar") {
      argTypes.push_back(element);
      continue;
    }
    SmallVector<int64_t> shape;
    for (const ExprPtr &d : p.dims) {
      if (std::optional<int64_t> c = foldConstant(*d)) {
        if (*c <= 0)
          return fail(d->loc, "tensor dimensions must be positive");
        shape.push_back(*c);
      } else if (d->kind == Expr::Kind::Name) {
        shape.push_back(ShapedType::kDynamic);
      } else {
        return fail(d->loc, "a parameter dimension is a constant, a name or ?",
                    "a run-time extent is a name: `f32 [M, K] a` binds M "
                    "and K");
      }
    }
    argTypes.push_back(MemRefType::get(shape, element));
  }
  currentFunction = &fn;
  paramNames.clear();
  for (const auto &p : fn.params)
    paramNames.push_back(p.name);
  builder.setInsertionPointToEnd(module->getBody());
  auto func = func::FuncOp::create(builder, l, fn.name,
                                   builder.getFunctionType(argTypes, {}));
  Block *entry = func.addEntryBlock();
  builder.setInsertionPointToStart(entry);
  scopes.clear();
  returned.clear();
  hasReturn = false;
  push();
  llvm::StringMap<Value> dims;
  for (auto [i, p] : llvm::enumerate(fn.params)) {
    Value arg = entry->getArgument(i);
    if (p.name.empty()) {
      // An unnamed parameter is passed but cannot be used.
      if (p.kind == "tensor")
        func.setArgAttr(i, "croq.name", builder.getStringAttr("arg" + Twine(i)));
      continue;
    }
    // The host entry point's parameter takes the Croqtile name; an unsigned
    // element type (lowered to signless integers) is recorded for the
    // entry point's description (u8 is a uint8 tensor to its callers).
    func.setArgAttr(i, "croq.name", builder.getStringAttr(p.name));
    if (isUnsignedName(p.elemType))
      func.setArgAttr(i, "croq.unsigned", builder.getUnitAttr());
    if (p.kind == "stream") {
      declare(p.name, Symbol{Symbol::Kind::Stream, arg});
      continue;
    }
    if (p.kind == "scalar") {
      Value v = arg;
      if (p.elemType == "int")
        v = arg; // int parameters are index values
      declare(p.name, Symbol{Symbol::Kind::Scalar, v});
      continue;
    }
    if (isUnsignedName(p.elemType))
      unsignedTensors.insert(arg);
    declare(p.name, Symbol{Symbol::Kind::Tensor, arg});
    // Symbolic dimensions: bound on first use, checked on later ones.
    for (auto [d, dim] : llvm::enumerate(p.dims)) {
      if (dim->kind != Expr::Kind::Name || dim->name == "?")
        continue;
      Location dl = loc(dim->loc);
      Value extent = memref::DimOp::create(builder, dl, arg, d);
      auto it = dims.find(dim->name);
      if (it == dims.end()) {
        dims[dim->name] = extent;
        if (lookup(dim->name))
          return fail(dim->loc, "dimension name '" + dim->name +
                                    "' clashes with a parameter");
        declare(dim->name, Symbol{Symbol::Kind::Scalar, extent});
        continue;
      }
      Value same = builder.createOrFold<arith::CmpIOp>(dl, arith::CmpIPredicate::eq,
                                         extent, it->second);
      cf::AssertOp::create(builder, dl, same,
                           "dimension " + dim->name + " of '" + p.name +
                               "' differs from its earlier use");
    }
  }
  if (failed(statements(fn.body)))
    return failure();
  // A local or global event that nothing waits on or triggers has no
  // effect; only shared events have a GPU form, so unused ones of the other
  // storages are dropped here, and used ones are rejected where they lower.
  SmallVector<EventAllocOp> unused;
  func.walk([&](EventAllocOp alloc) {
    if (alloc.getEvent().use_empty() &&
        alloc.getEvent().getType().getStorage() != MemoryKind::Shared)
      unused.push_back(alloc);
  });
  for (EventAllocOp alloc : unused)
    alloc.erase();
  if (fn.returnKind == "void" && !returned.empty())
    return fail(fn.loc, "a void function returns no value");
  builder.setInsertionPointToEnd(entry);
  if (fn.returnKind == "scalar" && returned.empty()) {
    // As in C++, falling off the end returns an unspecified value; croq
    // returns zero and says so.
    Type type = elementType(fn.returnType, fn.loc);
    if (!type)
      return failure();
    emitWarning(l) << "function '" << fn.name
                   << "' returns no value; its result is 0";
    returned.push_back(arith::ConstantOp::create(builder, l, builder.getZeroAttr(type)));
  }
  // `__co__ auto f(...)` that returns nothing is void.
  if (fn.returnKind != "void" && fn.returnKind != "auto" && returned.empty())
    return fail(fn.loc, "function '" + fn.name + "' returns nothing",
                "end it with `return x;`, or declare it void");
  func::ReturnOp::create(builder, l, returned);
  func.setFunctionType(builder.getFunctionType(
      argTypes, ValueRange(returned).getTypes()));
  pop();
  return checkFuturesWaited(func);
}

/// Every future of an async copy must reach a wait (or a trigger ... after),
/// through swaps, loop-carried values and branches.
LogicalResult IRGen::checkFuturesWaited(func::FuncOp func) {
  // Data of an async future is read only after a wait on that future.
  DominanceInfo dominance(func);
  // Each unwaited future: where its wait goes, and its first read.
  llvm::MapVector<Value, std::pair<Operation *, Operation *>> implicitWaits;
  WalkResult reads = func.walk([&](FutureDataOp data) {
    Value future = data.getFuture();
    if (!cast<FutureType>(future.getType()).getAsync())
      return WalkResult::advance();
    for (OpOperand &use : data.getData().getUses()) {
      Operation *user = use.getOwner();
      // Naming the buffer a new copy writes is not a read.
      if (isa<DmaCopyOp, TmaCopyOp>(user) && use.getOperandNumber() == 1)
        continue;
      // Shape queries read no data.
      if (isa<memref::DimOp>(user))
        continue;
      // Waited before the read, or, for a future carried out of a loop,
      // waited in the body before every iteration yields it.
      std::function<bool(Value, Operation *, unsigned)> waitedBefore =
          [&](Value f, Operation *at, unsigned depth) {
            if (llvm::any_of(f.getUsers(), [&](Operation *w) {
                  return isa<WaitOp>(w) && dominance.properlyDominates(w, at);
                }))
              return true;
            // A TMA future completes the event it is bound to (`trigger e
            // after f`): a wait on that event waits for the copy.
            for (Operation *user : f.getUsers()) {
              auto trigger = dyn_cast<EventTriggerOp>(user);
              if (!trigger || !llvm::is_contained(trigger.getAfter(), f))
                continue;
              if (llvm::any_of(trigger.getEvent().getUsers(), [&](Operation *w) {
                    return isa<EventWaitOp>(w) && dominance.properlyDominates(w, at);
                  }))
                return true;
            }
            auto result = dyn_cast<OpResult>(f);
            if (!result || depth > 8)
              return false;
            // A future that swap, rotate or select passed on is one of
            // their operands: waited when each of them was, before `at`.
            Operation *owner = result.getOwner();
            if (isa<SwapOp, RotateOp, arith::SelectOp>(owner))
              return llvm::all_of(owner->getOperands(), [&](Value operand) {
                return !isa<FutureType>(operand.getType()) ||
                       waitedBefore(operand, at, depth + 1);
              });
            auto loop = dyn_cast<scf::ForOp>(owner);
            if (!loop)
              return false;
            Operation *yield = loop.getBody()->getTerminator();
            return waitedBefore(yield->getOperand(result.getResultNumber()),
                                yield, depth + 1);
          };
      if (waitedBefore(future, user, 0))
        continue;
      // Read before any wait (chapter 6's epilogue as printed): croq waits
      // for the copy where the future is first read after it is made, and
      // says so. The wait goes in the future's block, before the read.
      Operation *anchor = future.getParentBlock()->findAncestorOpInBlock(*user);
      if (!anchor) {
        InFlightDiagnostic diag = emitError(
            user->getLoc(), "reads the data of an async future that no wait "
                            "can reach here");
        diag.attachNote(future.getLoc()) << "the future comes from here";
        diag.attachNote() << "hint: add `wait` on the future before the read";
        return WalkResult::interrupt();
      }
      auto [it, isNew] = implicitWaits.insert({future, {anchor, user}});
      if (!isNew && anchor->isBeforeInBlock(it->second.first))
        it->second.first = anchor;
    }
    return WalkResult::advance();
  });
  if (reads.wasInterrupted())
    return failure();
  // One wait and one warning per place: the futures read there together.
  llvm::MapVector<Operation *, SmallVector<Value>> byAnchor;
  for (auto &[future, place] : implicitWaits)
    byAnchor[place.first].push_back(future);
  for (auto &[anchor, futures] : byAnchor) {
    OpBuilder b(anchor);
    WaitOp::create(b, anchor->getLoc(), futures);
    InFlightDiagnostic diag =
        emitWarning(implicitWaits.lookup(futures.front()).second->getLoc(),
                    "reads the data of " +
                        Twine(futures.size() == 1 ? "an async future that was"
                                                  : "async futures that were") +
                        " not waited; croq waits for " +
                        (futures.size() == 1 ? "it" : "them") + " first");
    diag.attachNote(futures.front().getLoc()) << "the futures come from here";
    diag.attachNote() << "hint: write the `wait` (chapter 6's epilogue needs "
                         "`wait lf0, rf0;`)";
  }
  WalkResult result = func.walk([&](Operation *op) {
    Value future = getAsyncFuture(op);
    if (!future || isAwaited(future))
      return WalkResult::advance();
    InFlightDiagnostic diag = emitError(
        op->getLoc(), "the future of this async operation is never waited");
    diag.attachNote() << "hint: add `wait` on its future before the data is "
                         "read (chapter 6's epilogue needs `wait lf0, rf0;`)";
    return WalkResult::interrupt();
  });
  if (result.wasInterrupted())
    return failure();
  // A prefetch of the next iteration's tile that every iteration issues:
  // the last one's future leaves the loop, and something must wait for it
  // before the block ends (a load still in flight then is a fault).
  result = func.walk([&](scf::ForOp loop) {
    auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
    for (auto [n, carried] : llvm::enumerate(loop.getResults())) {
      if (!isa<FutureType>(carried.getType()) || isAwaited(carried))
        continue;
      Operation *copy = inFlightAtExit(loop, yield.getOperand(n));
      if (!copy)
        continue;
      InFlightDiagnostic diag = emitError(
          copy->getLoc(),
          "every iteration issues this copy, and the last one's is still in "
          "flight when the loop ends: nothing after the loop waits for the "
          "future that carries it");
      diag.attachNote() << "hint: wait for it after the loop, or guard the "
                           "prefetch (`if (k + 1 < n)`) so that the last "
                           "iteration issues none";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

OwningOpRef<ModuleOp> IRGen::run(const Program &program) {
  module = ModuleOp::create(UnknownLoc::get(context));
  if (!program.hostCode.empty()) {
    SmallVector<Attribute> chunks;
    for (const std::string &chunk : program.hostCode)
      chunks.push_back(builder.getStringAttr(chunk));
    module->getOperation()->setAttr("croq.host_code", builder.getArrayAttr(chunks));
  }
  for (const Function &fn : program.functions)
    if (failed(function(fn)))
      return nullptr;
  std::string deviceCode = program.deviceCode + deviceCodeExtra;
  if (!deviceCode.empty())
    module->getOperation()->setAttr("croq.device_code",
                                    builder.getStringAttr(deviceCode));
  return std::move(module);
}

OwningOpRef<ModuleOp>
mlir::croq::croqtile::generateIR(MLIRContext *context,
                                 llvm::SourceMgr &sourceMgr,
                                 const Program &program,
                                 const SemaResult &sema) {
  context->loadDialect<CroqDialect, arith::ArithDialect, cf::ControlFlowDialect,
                       LLVM::LLVMDialect,
                       math::MathDialect,
                       func::FuncDialect, gpu::GPUDialect,
                       memref::MemRefDialect, scf::SCFDialect>();
  IRGen irgen(context, sourceMgr, sema);
  OwningOpRef<ModuleOp> module = irgen.run(program);
  return module;
}
