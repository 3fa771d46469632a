//===- IRGen.cpp - Croqtile syntax tree to croq IR ------------------------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//
//
// Builds croq + upstream IR from the syntax tree and checks Croqtile's rules
// on the way, each with a located error and a hint.
//
// Values: program-control integers (`int`, parallel and foreach indices,
// symbolic dimensions) are `index`; a bounded variable carries its upper
// bound `#x` as a second value. Names reassigned in a loop, a branch or a
// nested parallel are threaded through scf.for iter_args, scf.if results or
// croq.parallel results, so the IR stays in SSA form.
//
// Fragments get their shape and role from the MMA that uses them, which may
// come later in the program: IRGen runs twice, and the first run records
// what each `mma.fill` / `mma.load` must produce.
//
//===----------------------------------------------------------------------===//

#include "IRGen.h"
#include "Parser.h"

#include "Croq/Dialect/Croq/IR/CroqOps.h"
#include "Croq/Analysis/Futures.h"
#include "Croq/Dialect/Croq/Utils/TileAlgebra.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/ScopeExit.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace mlir::croq;
using namespace mlir::croq::croqtile;
using llvm::SMLoc;
using llvm::StringRef;

namespace {

/// A value of an expression: the value and, for bounded variables, `#x`.
struct EVal {
  EVal() = default;
  EVal(Value value, Value bound = Value(), bool literal = false)
      : value(value), bound(bound), literal(literal) {}
  Value value;
  Value bound;
  bool literal = false;
  explicit operator bool() const { return static_cast<bool>(value); }
};

struct Symbol {
  enum class Kind { Scalar, Tensor, Event, Future, Frag, Stream };
  Kind kind;
  Value value;
  Value bound = nullptr;
  bool isMutable = false;
  bool isParallelIndex = false;
  /// The statement that made a fragment (for inference).
  const Stmt *origin = nullptr;
  /// Scope depth of the declaration (swap needs equal scopes).
  unsigned scope = 0;
};

} // namespace

namespace mlir::croq::croqtile {

class IRGen {
public:
  IRGen(MLIRContext *context, llvm::SourceMgr &sourceMgr, Inference &inference,
        bool finalPass)
      : context(context), builder(context), sourceMgr(sourceMgr),
        inference(inference), finalPass(finalPass) {}

  OwningOpRef<ModuleOp> run(const Program &program);

private:
  // Locations and diagnostics.
  Location loc(SMLoc smloc);
  InFlightDiagnostic error(SMLoc smloc, const Twine &message);
  LogicalResult fail(SMLoc smloc, const Twine &message, const Twine &hint = "");
  /// Fails at `smloc` when values of `type` cannot take part in `what`
  /// (arithmetic or a conversion): 8-bit floats only move, for now.
  LogicalResult checkArithmetic(SMLoc smloc, Type type, const Twine &what);
  /// Fails at `smloc` when `divisor` is the constant 0 (of `what`).
  LogicalResult checkDivisor(SMLoc smloc, Value divisor, StringRef what);
  /// Fails at `smloc` when `index` is a constant outside [0, extent) (an
  /// extent that is dynamic or unknown bounds nothing but negatives).
  LogicalResult checkIndex(SMLoc smloc, Value index, int64_t extent,
                           const Twine &what);

  // Scopes.
  void push() { scopes.emplace_back(); }
  void pop() { scopes.pop_back(); }
  Symbol *lookup(StringRef name);
  void declare(StringRef name, Symbol symbol) {
    symbol.scope = scopes.size();
    scopes.back()[name] = symbol;
  }
  /// Declares a name written in the source: a second declaration in one
  /// scope is an error.
  LogicalResult declareNew(StringRef name, SMLoc at, Symbol symbol) {
    if (scopes.back().count(name))
      return fail(at, "'" + name + "' is already declared in this scope",
                  "pick another name, or assign to a mutable variable");
    declare(name, symbol);
    return success();
  }
  /// Declares, in the innermost scope, copies of the symbols `names` bound
  /// to `values` (their current values when `values` is empty); each keeps
  /// the scope of its declaration, which swap checks.
  void shadow(ArrayRef<std::string> names, ValueRange values = {}) {
    for (auto [j, name] : llvm::enumerate(names)) {
      Symbol copy = *lookup(name);
      unsigned scope = copy.scope;
      if (!values.empty()) {
        // A loop-carried or branch-joined unsigned value stays unsigned.
        if (isUnsigned(copy.value))
          unsignedValues.insert(values[j]);
        copy.value = values[j];
      }
      declare(name, copy);
      scopes.back()[name].scope = scope;
    }
  }
  /// The current values of `names`.
  SmallVector<Value> currentValues(ArrayRef<std::string> names) {
    SmallVector<Value> values;
    for (const std::string &name : names)
      values.push_back(lookup(name)->value);
    return values;
  }
  /// Rebinds an existing name to a new value (keeps kind and origin).
  void rebind(StringRef name, Value value) {
    if (Symbol *s = lookup(name)) {
      if (isUnsigned(s->value))
        unsignedValues.insert(value);
      s->value = value;
    }
  }

  // Functions and statements.
  LogicalResult function(const Function &fn);
  LogicalResult statements(ArrayRef<StmtPtr> body);
  /// Runs `body` only where `cond` holds, threading reassigned names
  /// through scf.if results.
  LogicalResult guarded(Value cond, ArrayRef<StmtPtr> body, Location l);
  /// Declares the flags of a loop whose body breaks or continues.
  bool loopExits(ArrayRef<StmtPtr> body);
  LogicalResult statement(const Stmt &stmt);
  LogicalResult declaration(const Stmt &stmt);
  LogicalResult assignment(const Stmt &stmt);
  LogicalResult parallel(const Stmt &stmt);
  LogicalResult foreach(const Stmt &stmt);
  LogicalResult with(const Stmt &stmt);
  LogicalResult ifStmt(const Stmt &stmt);
  LogicalResult whileStmt(const Stmt &stmt);
  LogicalResult inthreads(const Stmt &stmt);
  LogicalResult copy(const Stmt &stmt);
  LogicalResult dmaAny(const Stmt &stmt);
  LogicalResult mmaFill(const Stmt &stmt);
  LogicalResult mmaLoad(const Stmt &stmt);
  LogicalResult mma(const Stmt &stmt);
  LogicalResult mmaStore(const Stmt &stmt);
  LogicalResult waitOrTrigger(const Stmt &stmt);
  LogicalResult swap(const Stmt &stmt);

  /// Names defined outside `body` that it reassigns, in a stable order.
  SmallVector<std::string> carried(ArrayRef<StmtPtr> body);

  // Expressions.
  FailureOr<EVal> expr(const Expr &e);
  FailureOr<Value> indexExpr(const Expr &e);
  FailureOr<int64_t> constantExpr(const Expr &e);
  FailureOr<Value> view(const Expr &e);
  FailureOr<Value> viewMember(const Expr &e);
  /// A shape assumption the host entry point checks before any launch:
  /// `ok` (built by `make` from host values) must hold, else the call fails
  /// with `message`. `values` are cloned before the kernel when they are
  /// computed inside it from host values only; false when they are not.
  bool checkOnHost(Location l, ArrayRef<Value> values,
                   function_ref<Value(OpBuilder &, ArrayRef<Value>)> make,
                   const Twine &message);
  Value viewExtent(Value view, int64_t d, Location l);
  /// Names of the current function's parameters.
  std::vector<std::string> paramNames;
  /// The buffer and indices of an element access `view.at(i, ...)`.
  FailureOr<std::pair<Value, SmallVector<Value>>> element(const Expr &at);
  FailureOr<EVal> binary(const Expr &e);
  Value coerce(Value value, Type type, Location l);
  /// Unsigned element types (u8 ... u64) lower to signless integers; these
  /// sets keep what is unsigned: tensors declared so, and the values read
  /// from them or computed from such values. Division, remainder,
  /// comparisons, right shifts and conversions of them are the unsigned
  /// forms.
  llvm::DenseSet<Value> unsignedTensors, unsignedValues;
  bool isUnsigned(Value v) { return unsignedValues.contains(v); }
  /// The tensor `buffer` is a view of (through views and future data).
  Value rootTensor(Value buffer);
  static bool isUnsignedName(StringRef type) {
    return type == "u8" || type == "u16" || type == "u32" || type == "u64";
  }
  Value constIndex(int64_t v, Location l) {
    return arith::ConstantIndexOp::create(builder, l, v);
  }
  Type elementType(StringRef name, SMLoc at);
  std::optional<int64_t> asConstant(Value v) {
    APInt c;
    if (v && matchPattern(v, m_ConstantInt(&c)))
      return c.getSExtValue();
    return std::nullopt;
  }
  /// The parallels whose bodies are being generated, innermost last: the
  /// regions of an op still being built (a while loop's) are not attached
  /// yet, so the IR around the insertion point cannot tell.
  SmallVector<ParallelOp> openParallels;
  bool insideParallel() {
    if (!openParallels.empty())
      return true;
    return builder.getInsertionBlock() &&
           builder.getInsertionBlock()->getParentOp() &&
           (isa<ParallelOp>(builder.getInsertionBlock()->getParentOp()) ||
            builder.getInsertionBlock()->getParentOp()->getParentOfType<ParallelOp>());
  }
  /// The scope that holds fragments made here: the nearest parallel level
  /// above `thread` (a `group-4` body, also through its `thread` level,
  /// makes warpgroup fragments; anything else warp fragments).
  Level fragmentScope() {
    if (!insideParallel())
      return Level::Warp;
    for (ParallelOp p = enclosingParallel(); p; p = p.getParentParallel())
      if (p.getLevel() != Level::Thread)
        return p.getLevel() == Level::Warpgroup ? Level::Warpgroup
                                                : Level::Warp;
    return Level::Warp;
  }
  ParallelOp enclosingParallel() {
    if (!openParallels.empty())
      return openParallels.back();
    Operation *op = builder.getInsertionBlock()->getParentOp();
    if (!op)
      return {};
    if (auto p = dyn_cast<ParallelOp>(op))
      return p;
    return op->getParentOfType<ParallelOp>();
  }
  LogicalResult checkFuturesWaited(func::FuncOp func);

  MLIRContext *context;
  OpBuilder builder;
  llvm::SourceMgr &sourceMgr;
  Inference &inference;
  bool finalPass;

public:
  /// The final pass stopped at a gap the failed inference pass left; the
  /// inference pass's first error is the one to report.
  bool deferredToInference = false;

private:
  std::vector<llvm::StringMap<Symbol>> scopes;
  SmallVector<Value> returned;
  bool hasReturn = false;
  unsigned inthreadsDepth = 0;
  OwningOpRef<ModuleOp> module;
};

} // namespace mlir::croq::croqtile

//===----------------------------------------------------------------------===//
// Diagnostics
//===----------------------------------------------------------------------===//

Location IRGen::loc(SMLoc smloc) {
  if (!smloc.isValid())
    return UnknownLoc::get(context);
  unsigned id = sourceMgr.FindBufferContainingLoc(smloc);
  if (!id)
    return UnknownLoc::get(context);
  auto [line, col] = sourceMgr.getLineAndColumn(smloc, id);
  StringRef file = sourceMgr.getMemoryBuffer(id)->getBufferIdentifier();
  return FileLineColLoc::get(context, file, line, col);
}

InFlightDiagnostic IRGen::error(SMLoc smloc, const Twine &message) {
  return emitError(loc(smloc), message);
}

LogicalResult IRGen::checkArithmetic(SMLoc smloc, Type type,
                                     const Twine &what) {
  auto f = dyn_cast<FloatType>(type);
  if (!f || f.getWidth() != 8)
    return success();
  StringRef name = isa<Float8E5M2Type>(type) ? "f8_e5m2" : "f8_e4m3";
  return fail(smloc, what + " on " + name + " values is not supported yet",
              "8-bit floats can be copied (dma.copy, tma.copy) and fed to "
              "MMA; compute in f16 or f32");
}

LogicalResult IRGen::checkDivisor(SMLoc smloc, Value divisor,
                                  StringRef what) {
  if (!isa<IntegerType, IndexType>(divisor.getType()) ||
      !matchPattern(divisor, m_Zero()))
    return success();
  return fail(smloc, "division by zero: the divisor of '" + what + "' is 0",
              "a divisor must be nonzero; check the constant or macro "
              "that gives it");
}

LogicalResult IRGen::checkIndex(SMLoc smloc, Value index, int64_t extent,
                                const Twine &what) {
  std::optional<int64_t> c = asConstant(index);
  if (!c)
    return success();
  if (*c < 0)
    return fail(smloc, what + " is " + Twine(*c) + "; indices start at 0");
  if (!ShapedType::isDynamic(extent) && extent >= 0 && *c >= extent)
    return fail(smloc, what + " is " + Twine(*c) + ", past the end: the "
                           "extent is " + Twine(extent),
                "valid indices are 0 to " + Twine(extent - 1));
  return success();
}

LogicalResult IRGen::fail(SMLoc smloc, const Twine &message,
                          const Twine &hint) {
  InFlightDiagnostic diag = error(smloc, message);
  if (!hint.isTriviallyEmpty())
    diag.attachNote() << "hint: " << hint;
  return failure();
}

Symbol *IRGen::lookup(StringRef name) {
  for (auto it = scopes.rbegin(); it != scopes.rend(); ++it) {
    auto found = it->find(name);
    if (found != it->end())
      return &found->second;
  }
  return nullptr;
}

//===----------------------------------------------------------------------===//
// Types and values
//===----------------------------------------------------------------------===//

Type IRGen::elementType(StringRef name, SMLoc at) {
  Type type = llvm::StringSwitch<Type>(name)
                  .Cases({"f32", "float", "tf32"}, builder.getF32Type())
                  .Cases({"f64", "double"}, builder.getF64Type())
                  .Cases({"f16", "half"}, builder.getF16Type())
                  .Cases({"bf16", "bfp16"}, builder.getBF16Type())
                  .Cases({"f8", "f8_e4m3"}, builder.getType<Float8E4M3FNType>())
                  .Case("f8_e5m2", builder.getType<Float8E5M2Type>())
                  .Cases({"s64", "u64"}, builder.getI64Type())
                  .Cases({"s32", "u32"}, builder.getI32Type())
                  .Cases({"s16", "u16"}, builder.getI16Type())
                  .Cases({"s8", "u8"}, builder.getI8Type())
                  .Case("int", builder.getIndexType())
                  .Case("bool", builder.getI1Type())
                  .Default(Type());
  if (!type)
    (void)fail(at, "unsupported element type '" + name + "'");
  return type;
}

Value IRGen::coerce(Value value, Type type, Location l) {
  Type from = value.getType();
  if (from == type)
    return value;
  if (from.isIndex() && type.isSignlessInteger())
    return builder.createOrFold<arith::IndexCastOp>(l, type, value);
  if (from.isSignlessInteger() && type.isIndex())
    return isUnsigned(value)
               ? builder.createOrFold<arith::IndexCastUIOp>(l, type, value)
               : builder.createOrFold<arith::IndexCastOp>(l, type, value);
  if (from.isIndex() && isa<FloatType>(type)) {
    Value i64 = builder.createOrFold<arith::IndexCastOp>(l, builder.getI64Type(), value);
    return arith::SIToFPOp::create(builder, l, type, i64);
  }
  if (from.isSignlessInteger() && isa<FloatType>(type)) {
    if (from.isInteger(1) || isUnsigned(value))
      return arith::UIToFPOp::create(builder, l, type, value);
    return arith::SIToFPOp::create(builder, l, type, value);
  }
  if (isa<FloatType>(from) && type.isSignlessInteger())
    return arith::FPToSIOp::create(builder, l, type, value);
  if (isa<FloatType>(from) && type.isIndex()) {
    Value i64 = arith::FPToSIOp::create(builder, l, builder.getI64Type(), value);
    return builder.createOrFold<arith::IndexCastOp>(l, type, i64);
  }
  if (isa<FloatType>(from) && isa<FloatType>(type))
    return from.getIntOrFloatBitWidth() > type.getIntOrFloatBitWidth()
               ? Value(arith::TruncFOp::create(builder, l, type, value))
               : Value(arith::ExtFOp::create(builder, l, type, value));
  if (from.isSignlessInteger() && type.isSignlessInteger()) {
    if (from.getIntOrFloatBitWidth() > type.getIntOrFloatBitWidth())
      return arith::TruncIOp::create(builder, l, type, value);
    if (isUnsigned(value)) {
      Value wide = arith::ExtUIOp::create(builder, l, type, value);
      unsignedValues.insert(wide);
      return wide;
    }
    return arith::ExtSIOp::create(builder, l, type, value);
  }
  return value;
}

Value IRGen::rootTensor(Value buffer) {
  while (true) {
    if (auto data = buffer.getDefiningOp<FutureDataOp>()) {
      Operation *producer = data.getFuture().getDefiningOp();
      if (auto copy = dyn_cast_or_null<DmaCopyOp>(producer)) {
        buffer = copy.getTarget();
        continue;
      }
      return buffer;
    }
    Operation *def = buffer.getDefiningOp();
    if (!def || isa<memref::AllocOp>(def) || def->getNumOperands() == 0 ||
        !isa<MemRefType>(def->getOperand(0).getType()))
      return buffer;
    buffer = def->getOperand(0);
  }
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

FailureOr<int64_t> IRGen::constantExpr(const Expr &e) {
  FailureOr<EVal> v = expr(e);
  if (failed(v))
    return failure();
  std::optional<int64_t> c = asConstant(v->value);
  if (!c) {
    (void)fail(e.loc, "expected a compile-time constant",
               "use a literal or a #define");
    return failure();
  }
  return *c;
}

FailureOr<Value> IRGen::indexExpr(const Expr &e) {
  FailureOr<EVal> v = expr(e);
  if (failed(v))
    return failure();
  Type type = v->value.getType();
  if (!type.isIndex() && !type.isSignlessInteger())
    return fail(e.loc, "expected an integer, got a value of type " +
                           llvm::Twine(std::string(
                               [&] {
                                 std::string s;
                                 llvm::raw_string_ostream os(s);
                                 os << type;
                                 return s;
                               }())));
  return coerce(v->value, builder.getIndexType(), loc(e.loc));
}

FailureOr<EVal> IRGen::binary(const Expr &e) {
  Location l = loc(e.loc);
  StringRef op = e.name;
  FailureOr<EVal> lhs = expr(*e.args[0]);
  FailureOr<EVal> rhs = expr(*e.args[1]);
  if (failed(lhs) || failed(rhs))
    return failure();
  if (op == "#") {
    // a # b = a * #b + b, bound #a * #b.
    if (!lhs->bound || !rhs->bound)
      return fail(e.loc, "both operands of '#' must be bounded variables "
                         "(parallel, foreach or with indices)",
                  "compose indices such as `tile_iter # block_id`");
    Value a = coerce(lhs->value, builder.getIndexType(), l);
    Value b = coerce(rhs->value, builder.getIndexType(), l);
    Value scaled = builder.createOrFold<arith::MulIOp>(l, a, rhs->bound);
    Value value = builder.createOrFold<arith::AddIOp>(l, scaled, b);
    Value bound = builder.createOrFold<arith::MulIOp>(l, lhs->bound, rhs->bound);
    return EVal{value, bound};
  }
  if (op.starts_with("#")) {
    // #+ #- #* #/ #%: the operation on both the value and the bound.
    if (!lhs->bound)
      return fail(e.loc, "'" + op + "' needs a bounded variable on its left");
    Value c = coerce(rhs->value, builder.getIndexType(), l);
    Value a = coerce(lhs->value, builder.getIndexType(), l);
    if ((op == "#/" || op == "#%") && failed(checkDivisor(e.loc, c, op)))
      return failure();
    auto apply = [&](Value x) -> Value {
      if (op == "#+") return builder.createOrFold<arith::AddIOp>(l, x, c);
      if (op == "#-") return builder.createOrFold<arith::SubIOp>(l, x, c);
      if (op == "#*") return builder.createOrFold<arith::MulIOp>(l, x, c);
      if (op == "#/") return builder.createOrFold<arith::DivSIOp>(l, x, c);
      return builder.createOrFold<arith::RemSIOp>(l, x, c);
    };
    return EVal{apply(a), apply(lhs->bound)};
  }
  // Pick the operation type: floats win, then element integers, then index;
  // literals adapt to the other side.
  Type lt = lhs->value.getType(), rt = rhs->value.getType();
  Type type = lt;
  if (lt != rt) {
    if (lhs->literal && !rhs->literal)
      type = rt;
    else if (rhs->literal && !lhs->literal)
      type = lt;
    else if (isa<FloatType>(lt) != isa<FloatType>(rt))
      type = isa<FloatType>(lt) ? lt : rt;
    else if (lt.isIndex() || rt.isIndex())
      type = lt.isIndex() ? rt : lt;
    else
      type = lt.getIntOrFloatBitWidth() >= rt.getIntOrFloatBitWidth() ? lt : rt;
  }
  bool logical = op == "&&" || op == "||";
  if (failed(checkArithmetic(e.loc, lt, "'" + op + "'")) ||
      failed(checkArithmetic(e.loc, rt, "'" + op + "'")))
    return failure();
  if (logical)
    type = builder.getI1Type();
  Value a = coerce(lhs->value, type, l), b = coerce(rhs->value, type, l);
  if (logical) {
    auto toBool = [&](Value v) -> Value {
      if (v.getType().isInteger(1))
        return v;
      Value zero = arith::ConstantOp::create(builder, l, builder.getZeroAttr(v.getType()));
      return isa<FloatType>(v.getType())
                 ? Value(arith::CmpFOp::create(builder, l, arith::CmpFPredicate::UNE, v, zero))
                 : Value(builder.createOrFold<arith::CmpIOp>(l, arith::CmpIPredicate::ne, v, zero));
    };
    a = toBool(lhs->value);
    b = toBool(rhs->value);
    if (op == "&&")
      return EVal{builder.createOrFold<arith::AndIOp>(l, a, b)};
    return EVal{builder.createOrFold<arith::OrIOp>(l, a, b)};
  }
  bool isFloat = isa<FloatType>(type);
  // C's usual conversions: an unsigned operand makes the operation unsigned.
  bool isUnsignedOp = !isFloat && (isUnsigned(lhs->value) ||
                                   isUnsigned(rhs->value));
  if (op == "==" || op == "!=" || op == "<" || op == ">" || op == "<=" ||
      op == ">=") {
    if (isFloat) {
      auto pred = llvm::StringSwitch<arith::CmpFPredicate>(op)
                      .Case("==", arith::CmpFPredicate::OEQ)
                      .Case("!=", arith::CmpFPredicate::UNE)
                      .Case("<", arith::CmpFPredicate::OLT)
                      .Case(">", arith::CmpFPredicate::OGT)
                      .Case("<=", arith::CmpFPredicate::OLE)
                      .Default(arith::CmpFPredicate::OGE);
      return EVal{arith::CmpFOp::create(builder, l, pred, a, b)};
    }
    auto pred = llvm::StringSwitch<arith::CmpIPredicate>(op)
                    .Case("==", arith::CmpIPredicate::eq)
                    .Case("!=", arith::CmpIPredicate::ne)
                    .Case("<", isUnsignedOp ? arith::CmpIPredicate::ult
                                            : arith::CmpIPredicate::slt)
                    .Case(">", isUnsignedOp ? arith::CmpIPredicate::ugt
                                            : arith::CmpIPredicate::sgt)
                    .Case("<=", isUnsignedOp ? arith::CmpIPredicate::ule
                                             : arith::CmpIPredicate::sle)
                    .Default(isUnsignedOp ? arith::CmpIPredicate::uge
                                          : arith::CmpIPredicate::sge);
    return EVal{builder.createOrFold<arith::CmpIOp>(l, pred, a, b)};
  }
  EVal result;
  result.literal = lhs->literal && rhs->literal;
  if (isFloat) {
    if (op == "+") result.value = arith::AddFOp::create(builder, l, a, b);
    else if (op == "-") result.value = arith::SubFOp::create(builder, l, a, b);
    else if (op == "*") result.value = arith::MulFOp::create(builder, l, a, b);
    else if (op == "/") result.value = arith::DivFOp::create(builder, l, a, b);
    else if (op == "%") result.value = arith::RemFOp::create(builder, l, a, b);
    else
      return fail(e.loc, "operator '" + op + "' needs integer operands");
    return result;
  }
  if ((op == "/" || op == "%") && failed(checkDivisor(e.loc, b, op)))
    return failure();
  if (op == "+") result.value = builder.createOrFold<arith::AddIOp>(l, a, b);
  else if (op == "-") result.value = builder.createOrFold<arith::SubIOp>(l, a, b);
  else if (op == "*") result.value = builder.createOrFold<arith::MulIOp>(l, a, b);
  else if (op == "/") result.value = isUnsignedOp ? builder.createOrFold<arith::DivUIOp>(l, a, b) : builder.createOrFold<arith::DivSIOp>(l, a, b);
  else if (op == "%") result.value = isUnsignedOp ? builder.createOrFold<arith::RemUIOp>(l, a, b) : builder.createOrFold<arith::RemSIOp>(l, a, b);
  else if (op == "&") result.value = builder.createOrFold<arith::AndIOp>(l, a, b);
  else if (op == "|") result.value = builder.createOrFold<arith::OrIOp>(l, a, b);
  else if (op == "^") result.value = builder.createOrFold<arith::XOrIOp>(l, a, b);
  else if (op == "<<") result.value = builder.createOrFold<arith::ShLIOp>(l, a, b);
  else if (op == ">>") result.value = isUnsignedOp ? builder.createOrFold<arith::ShRUIOp>(l, a, b) : builder.createOrFold<arith::ShRSIOp>(l, a, b);
  else
    return fail(e.loc, "unsupported operator '" + op + "'");
  if (isUnsignedOp)
    unsignedValues.insert(result.value);
  return result;
}

FailureOr<EVal> IRGen::expr(const Expr &e) {
  Location l = loc(e.loc);
  switch (e.kind) {
  case Expr::Kind::Int:
    return EVal{constIndex(e.intValue, l), Value(), true};
  case Expr::Kind::Float: {
    Type type = e.isF32 ? Type(builder.getF32Type()) : Type(builder.getF64Type());
    return EVal{arith::ConstantOp::create(builder, l, builder.getFloatAttr(type, e.floatValue)),
                Value(), true};
  }
  case Expr::Kind::Bool:
    return EVal{arith::ConstantIntOp::create(builder, l, builder.getI1Type(), e.intValue),
                Value(), true};
  case Expr::Kind::Name: {
    if (e.name == "_")
      return fail(e.loc, "'_' only stands for a whole dimension in chunkat "
                         "and subspan");
    Symbol *s = lookup(e.name);
    if (!s)
      return fail(e.loc, "use of undeclared name '" + e.name + "'",
                  "declare it (`int " + e.name + " = ...;`), bind it in a "
                  "parallel, foreach or with, or #define it");
    if (s->kind != Symbol::Kind::Scalar)
      return fail(e.loc, "'" + e.name + "' is not a scalar here");
    return EVal{s->value, s->bound};
  }
  case Expr::Kind::Unary: {
    FailureOr<EVal> v = expr(*e.args[0]);
    if (failed(v))
      return failure();
    Value x = v->value;
    if (e.name == "-") {
      if (isa<FloatType>(x.getType()))
        return EVal{arith::NegFOp::create(builder, l, x), Value(), v->literal};
      Value zero = arith::ConstantOp::create(builder, l, builder.getZeroAttr(x.getType()));
      return EVal{builder.createOrFold<arith::SubIOp>(l, zero, x), Value(), v->literal};
    }
    if (e.name == "!") {
      if (!x.getType().isInteger(1)) {
        Value zero = arith::ConstantOp::create(builder, l, builder.getZeroAttr(x.getType()));
        x = isa<FloatType>(x.getType())
                ? Value(arith::CmpFOp::create(builder, l, arith::CmpFPredicate::UNE, x, zero))
                : Value(builder.createOrFold<arith::CmpIOp>(l, arith::CmpIPredicate::ne, x, zero));
      }
      Value one = arith::ConstantIntOp::create(builder, l, builder.getI1Type(), 1);
      return EVal{builder.createOrFold<arith::XOrIOp>(l, x, one)};
    }
    if (e.name == "~") {
      Value ones = arith::ConstantOp::create(builder, l, builder.getIntegerAttr(x.getType(), -1));
      return EVal{builder.createOrFold<arith::XOrIOp>(l, x, ones)};
    }
    return fail(e.loc, "'" + e.name + "' as a prefix operator is only a "
                                      "statement here; write `x += 1;`");
  }
  case Expr::Kind::Postfix:
    return fail(e.loc, "'x" + e.name + "' is only allowed as a statement");
  case Expr::Kind::Binary:
    return binary(e);
  case Expr::Kind::Ternary: {
    FailureOr<EVal> c = expr(*e.args[0]);
    FailureOr<EVal> a = expr(*e.args[1]);
    FailureOr<EVal> b = expr(*e.args[2]);
    if (failed(c) || failed(a) || failed(b))
      return failure();
    Type type = a->literal ? b->value.getType() : a->value.getType();
    Value cond = c->value;
    if (!cond.getType().isInteger(1))
      return fail(e.args[0]->loc, "the condition of ?: must be a boolean");
    return EVal{builder.createOrFold<arith::SelectOp>(l, cond, coerce(a->value, type, l),
                                        coerce(b->value, type, l))};
  }
  case Expr::Kind::Bound: {
    FailureOr<EVal> v = expr(*e.args[0]);
    if (failed(v))
      return failure();
    if (!v->bound)
      return fail(e.loc, "'#' takes the bound of a bounded variable; this "
                         "value has none",
                  "use a parallel, foreach or with index");
    return EVal{v->bound};
  }
  case Expr::Kind::Count: {
    const Expr &inner = *e.args[0];
    if (inner.kind != Expr::Kind::Member || inner.name != "span" ||
        inner.hasArgs || !inner.base)
      return fail(e.loc, "|...| counts the elements of a view: write "
                         "|x.span|");
    FailureOr<Value> v = view(*inner.base);
    if (failed(v))
      return failure();
    auto type = cast<MemRefType>(v->getType());
    Value total = constIndex(1, l);
    for (int64_t d = 0; d < type.getRank(); ++d)
      total = builder.createOrFold<arith::MulIOp>(l, total,
                                    memref::DimOp::create(builder, l, *v, d));
    return EVal{total};
  }
  case Expr::Kind::Call: {
    if (e.name == "cdiv") {
      if (e.args.size() != 2)
        return fail(e.loc, "cdiv takes two arguments");
      FailureOr<Value> a = indexExpr(*e.args[0]);
      FailureOr<Value> b = indexExpr(*e.args[1]);
      if (failed(a) || failed(b) ||
          failed(checkDivisor(e.args[1]->loc, *b, "cdiv")))
        return failure();
      return EVal{builder.createOrFold<arith::CeilDivSIOp>(l, *a, *b)};
    }
    if (e.name == "__max" || e.name == "__min") {
      FailureOr<EVal> a = expr(*e.args[0]);
      FailureOr<EVal> b = expr(*e.args[1]);
      if (failed(a) || failed(b))
        return failure();
      Type type = a->value.getType();
      Value bv = coerce(b->value, type, l);
      if (isa<FloatType>(type))
        return EVal{e.name == "__max" ? Value(arith::MaximumFOp::create(builder, l, a->value, bv))
                                      : Value(arith::MinimumFOp::create(builder, l, a->value, bv))};
      return EVal{e.name == "__max" ? Value(builder.createOrFold<arith::MaxSIOp>(l, a->value, bv))
                                    : Value(builder.createOrFold<arith::MinSIOp>(l, a->value, bv))};
    }
    if (e.name == "__to") {
      FailureOr<EVal> a = expr(*e.args[0]);
      Type type = elementType(e.typeArgs.front(), e.loc);
      if (failed(a) || !type)
        return failure();
      return EVal{coerce(a->value, type, l)};
    }
    return fail(e.loc, "unknown function '" + e.name + "'",
                "__co__ functions cannot call functions; the built-ins are "
                "cdiv, __max, __min and __to<T>");
  }
  case Expr::Kind::Member: {
    if (e.name == "span") {
      FailureOr<Value> v = view(*e.base);
      if (failed(v))
        return failure();
      if (!e.hasArgs || e.args.size() != 1)
        return fail(e.loc, "use x.span(i) for one extent, or |x.span| for "
                           "the element count");
      FailureOr<int64_t> d = constantExpr(*e.args[0]);
      if (failed(d))
        return failure();
      auto type = cast<MemRefType>(v->getType());
      if (*d < 0 || *d >= type.getRank())
        return fail(e.loc, "dimension " + Twine(*d) + " is out of range");
      return EVal{memref::DimOp::create(builder, l, *v, *d)};
    }
    if (e.name == "at" && e.hasArgs) {
      auto access = element(e);
      if (failed(access))
        return failure();
      Value loaded = memref::LoadOp::create(builder, l, access->first,
                                            access->second);
      if (unsignedTensors.contains(rootTensor(access->first)))
        unsignedValues.insert(loaded);
      return EVal{loaded};
    }
    return fail(e.loc, "'." + e.name + "' is not a scalar");
  }
  case Expr::Kind::Index:
  case Expr::Kind::Range:
    break;
  }
  return fail(e.loc, "this expression is not a scalar");
}

FailureOr<std::pair<Value, SmallVector<Value>>>
IRGen::element(const Expr &at) {
  if (!insideParallel())
    return fail(at.loc, "host code cannot read or write elements of a "
                        "tensor: croq's host code computes scalars and "
                        "launches kernels",
                "move the access into a parallel");
  FailureOr<Value> buffer = view(*at.base);
  if (failed(buffer))
    return failure();
  SmallVector<Value> indices;
  for (const ExprPtr &arg : at.args) {
    FailureOr<Value> i = indexExpr(*arg);
    if (failed(i))
      return failure();
    indices.push_back(*i);
  }
  auto type = cast<MemRefType>(buffer->getType());
  if (static_cast<int64_t>(indices.size()) != type.getRank())
    return fail(at.loc, ".at takes " + Twine(type.getRank()) +
                            " indices here, got " + Twine(indices.size()));
  for (auto [d, index] : llvm::enumerate(indices))
    if (failed(checkIndex(at.args[d]->loc, index, type.getDimSize(d),
                          "element index " + Twine(d))))
      return failure();
  return std::make_pair(*buffer, std::move(indices));
}

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
          failed(checkIndex(arg->loc, *i, type.getDimSize(d), what)))
        return failure();
      offsets.push_back(*i);
      sizes.push_back(builder.getIndexAttr(1));
      strides.push_back(builder.getIndexAttr(1));
    }
    SmallVector<int64_t> shape;
    for (int64_t d = e.args.size(); d < type.getRank(); ++d) {
      offsets.push_back(builder.getIndexAttr(0));
      sizes.push_back(builder.getIndexAttr(type.getDimSize(d)));
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
Value IRGen::viewExtent(Value view, int64_t d, Location l) {
  auto type = cast<MemRefType>(view.getType());
  if (!type.isDynamicDim(d))
    return arith::ConstantIndexOp::create(builder, l, type.getDimSize(d));
  if (auto chunk = view.getDefiningOp<ChunkAtOp>()) {
    Value whole = viewExtent(chunk.getSource(), d, l);
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
  // A future's data is the buffer its copy wrote: an allocation's extents.
  if (auto data = view.getDefiningOp<FutureDataOp>())
    if (auto copy = data.getFuture().getDefiningOp<DmaCopyOp>())
      return viewExtent(copy.getTarget(), d, l);
  if (auto alloc = view.getDefiningOp<memref::AllocOp>()) {
    unsigned i = llvm::count(type.getShape().take_front(d), ShapedType::kDynamic);
    return alloc.getDynamicSizes()[i];
  }
  return memref::DimOp::create(builder, l, view, d);
}

bool IRGen::checkOnHost(
    Location l, ArrayRef<Value> values,
    function_ref<Value(OpBuilder &, ArrayRef<Value>)> make,
    const Twine &message) {
  // The outermost parallel around the insertion point is the kernel.
  Operation *kernel = nullptr;
  for (Operation *p = builder.getInsertionBlock()->getParentOp(); p;
       p = p->getParentOp())
    if (isa<ParallelOp>(p))
      kernel = p;
  OpBuilder host(builder.getContext());
  if (kernel)
    host.setInsertionPoint(kernel);
  else
    host.setInsertionPoint(builder.getInsertionBlock(),
                           builder.getInsertionPoint());
  IRMapping mapping;
  std::function<Value(Value)> hoist = [&](Value v) -> Value {
    if (!kernel || !kernel->isAncestor(v.getParentRegion()->getParentOp()))
      return v;
    if (Value mapped = mapping.lookupOrNull(v))
      return mapped;
    Operation *def = v.getDefiningOp();
    if (!def || def->getNumRegions() ||
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
}

FailureOr<Value> IRGen::viewMember(const Expr &e) {
  Location l = loc(e.loc);
  bool chunkAt = e.name == "at" && e.base &&
                 e.base->kind == Expr::Kind::Member && e.base->name == "chunk";
  if (e.name == "chunkat" || chunkAt) {
    FailureOr<Value> source = view(chunkAt ? *e.base->base : *e.base);
    if (failed(source))
      return failure();
    Value base = *source;
    auto type = cast<MemRefType>(base.getType());
    int64_t rank = type.getRank();
    // chunkat(i, _, k), or chunk(n0, _, n2).at(i, _, k).
    const std::vector<ExprPtr> &idx = e.args;
    const std::vector<ExprPtr> *factors =
        e.name == "at" ? &e.base->args : nullptr;
    if (static_cast<int64_t>(idx.size()) != rank)
      return fail(e.loc, e.name + " takes one entry per dimension: " +
                             Twine(rank) + " here, got " + Twine(idx.size()),
                  "use `_` to keep a dimension whole");
    SmallVector<Value> indices, bounds;
    SmallVector<int64_t> statics;
    for (int64_t d = 0; d < rank; ++d) {
      const Expr &arg = *idx[d];
      if (arg.kind == Expr::Kind::Name && arg.name == "_") {
        statics.push_back(tile::kWholeDim);
        continue;
      }
      FailureOr<EVal> v = expr(arg);
      if (failed(v))
        return failure();
      Value bound = v->bound;
      if (factors) {
        FailureOr<Value> f = indexExpr(*(*factors)[d]);
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
    for (int64_t d = 0; d < rank; ++d) {
      int64_t count = statics[d];
      if (count == tile::kWholeDim)
        continue;
      Value bound = count == ShapedType::kDynamic ? bounds[dynamicBound++]
                                                  : Value();
      int64_t dim = type.getShape()[d];
      if (!bound && dim != ShapedType::kDynamic) {
        if (dim % count != 0)
          return fail(idx[d]->loc,
                      "chunkat divides dimension " + Twine(d) + " (" +
                          Twine(dim) + ") into " + Twine(count) +
                          " chunks, which does not divide it",
                      "use a chunk count that divides the dimension, or "
                      "subspan(...).at(...) tiles, which handle tails");
        continue;
      }
      Value extent = memref::DimOp::create(builder, l, base, d);
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
        return fail(idx[d]->loc,
                    "cannot check before the launch that this chunk count "
                    "divides dimension " + Twine(d) + " of " + tensor,
                    "compute the chunk count from the function's "
                    "parameters and constants");
    }
    MemRefType result = tileType(type, *shape);
    if (!result)
      return fail(e.loc, "cannot take a tile of this view");
    return ChunkAtOp::create(builder, l, result, base, indices, bounds,
                             builder.getDenseI64ArrayAttr(statics))
        .getResult();
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
  if (static_cast<int64_t>(subspan->args.size()) != rank)
    return fail(subspan->loc, "subspan takes one extent per dimension: " +
                                  Twine(rank) + " here, got " +
                                  Twine(subspan->args.size()));
  SmallVector<Value> extents, indices, steps;
  SmallVector<int64_t> statics;
  for (const ExprPtr &arg : subspan->args) {
    if (arg->kind == Expr::Kind::Name && arg->name == "_") {
      statics.push_back(tile::kWholeDim);
      continue;
    }
    FailureOr<Value> v = indexExpr(*arg);
    if (failed(v))
      return failure();
    if (std::optional<int64_t> c = asConstant(*v)) {
      if (*c <= 0)
        return fail(arg->loc, "subspan extents must be positive, got " + Twine(*c));
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
    if (static_cast<int64_t>(at->args.size()) != rank)
      return fail(at->loc, ".at takes one tile index per dimension: " +
                               Twine(rank) + " here, got " +
                               Twine(at->args.size()));
    FailureOr<Value> v = indexExpr(*at->args[d]);
    if (failed(v))
      return failure();
    // A tile index past the last tile is caught with the shape known;
    // a negative one always.
    int64_t tiles = ShapedType::kDynamic;
    if (!step && statics[d] != tile::kWholeDim &&
        !ShapedType::isDynamic(statics[d]) &&
        !ShapedType::isDynamic(type.getDimSize(d)))
      tiles = llvm::divideCeil(type.getDimSize(d), statics[d]);
    if (failed(checkIndex(at->args[d]->loc, *v, tiles,
                          "tile index " + Twine(d))))
      return failure();
    indices.push_back(*v);
  }
  if (step) {
    if (static_cast<int64_t>(step->args.size()) != rank)
      return fail(step->loc, ".step takes one step per dimension");
    for (const ExprPtr &arg : step->args) {
      FailureOr<Value> v = indexExpr(*arg);
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

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

/// Collects names a statement list assigns, in first-seen order.
/// Pseudo-variables of break / continue: set when the loop breaks, or when
/// the current iteration continues.
static constexpr const char *kBreakFlag = "\x02break";
static constexpr const char *kContinueFlag = "\x02continue";

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

static void collectAssigned(ArrayRef<StmtPtr> body,
                            SmallVectorImpl<std::string> &names,
                            llvm::StringSet<> &seen) {
  auto add = [&](const std::string &name) {
    if (!name.empty() && seen.insert(name).second)
      names.push_back(name);
  };
  for (const StmtPtr &stmt : body) {
    switch (stmt->kind) {
    case Stmt::Kind::Assign:
      if (stmt->target->kind == Expr::Kind::Name)
        add(stmt->target->name);
      break;
    case Stmt::Kind::ExprStmt:
      if (stmt->value->kind == Expr::Kind::Postfix &&
          stmt->value->args[0]->kind == Expr::Kind::Name)
        add(stmt->value->args[0]->name);
      break;
    case Stmt::Kind::Dma:
    case Stmt::Kind::DmaAny:
    case Stmt::Kind::MmaFill:
    case Stmt::Kind::MmaLoad:
      add(stmt->name);
      break;
    case Stmt::Kind::Mma:
      // The accumulator changes here, or at the `wait` on the async form's
      // future (which may be declared in the same body).
      if (stmt->operands[0]->kind == Expr::Kind::Name)
        add(stmt->operands[0]->name);
      add(stmt->name);
      break;
    case Stmt::Kind::Wait:
      // Waiting on an async MMA's future updates its accumulator.
      for (const ExprPtr &operand : stmt->operands)
        if (operand->kind == Expr::Kind::Name)
          add("\x01" + operand->name);
      break;
    case Stmt::Kind::Swap:
      for (const ExprPtr &operand : stmt->operands)
        if (operand->kind == Expr::Kind::Name)
          add(operand->name);
      break;
    case Stmt::Kind::Break:
      add(kBreakFlag);
      add(kContinueFlag);
      break;
    case Stmt::Kind::Continue:
      add(kContinueFlag);
      break;
    default:
      break;
    }
    collectAssigned(stmt->body, names, seen);
    collectAssigned(stmt->elseBody, names, seen);
  }
}

SmallVector<std::string> IRGen::carried(ArrayRef<StmtPtr> body) {
  SmallVector<std::string> names, result;
  llvm::StringSet<> seen;
  collectAssigned(body, names, seen);
  llvm::StringSet<> taken;
  for (const std::string &raw : names) {
    std::string name = raw;
    if (!name.empty() && name[0] == '\x01') {
      // wait f on an async MMA future: its accumulator changes.
      Symbol *f = lookup(name.substr(1));
      if (!f || f->kind != Symbol::Kind::Future || !f->origin ||
          f->origin->kind != Stmt::Kind::Mma ||
          f->origin->operands[0]->kind != Expr::Kind::Name)
        continue;
      name = f->origin->operands[0]->name;
    }
    Symbol *s = lookup(name);
    if (!s || !taken.insert(name).second)
      continue;
    if (s->kind == Symbol::Kind::Future || s->kind == Symbol::Kind::Frag ||
        (s->kind == Symbol::Kind::Scalar && s->isMutable))
      result.push_back(name);
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
    return true;
  if (e.kind != Expr::Kind::Member)
    return false;
  if (e.name == "chunkat" || e.name == "subspan" || e.name == "step")
    return true;
  // `.at(...)` of a subspan or chunk is a tile; of anything else an element.
  if (e.name == "at" && e.base && e.base->kind == Expr::Kind::Member)
    return e.base->name == "subspan" || e.base->name == "chunk" ||
           e.base->name == "step";
  return false;
}

LogicalResult IRGen::statements(ArrayRef<StmtPtr> body) {
  bool failedAny = false;
  for (size_t i = 0; i < body.size(); ++i) {
    if (failed(statement(*body[i]))) {
      if (finalPass)
        return failure();
      // The first pass goes on learning from the statements after an
      // error (an MMA later in the body gives an accumulator its shape), so
      // that the final pass stops at the real first error, not at an
      // inference this one never reached.
      failedAny = true;
      continue;
    }
    // After a statement that may break or continue, the rest of the body
    // runs only while neither happened.
    if (i + 1 < body.size() && mayExit(body.slice(i, 1)) &&
        lookup(kContinueFlag)) {
      Location l = loc(body[i + 1]->loc);
      Value stop = builder.createOrFold<arith::OrIOp>(
          l, lookup(kBreakFlag)->value, lookup(kContinueFlag)->value);
      Value one = arith::ConstantIntOp::create(builder, l, builder.getI1Type(), 1);
      Value go = builder.createOrFold<arith::XOrIOp>(l, stop, one);
      return failure(failed(guarded(go, body.drop_front(i + 1), l)) ||
                     failedAny);
    }
  }
  return failure(failedAny);
}

LogicalResult IRGen::guarded(Value cond, ArrayRef<StmtPtr> body, Location l) {
  SmallVector<std::string> carriedNames = carried(body);
  SmallVector<Type> types;
  SmallVector<Value> before;
  for (const std::string &name : carriedNames) {
    before.push_back(lookup(name)->value);
    types.push_back(before.back().getType());
  }
  auto ifOp = scf::IfOp::create(builder, l, types, cond,
                                /*withElseRegion=*/!types.empty());
  LogicalResult result = success();
  {
    OpBuilder::InsertionGuard guard(builder);
    Block *block = ifOp.thenBlock();
    if (block->mightHaveTerminator())
      builder.setInsertionPoint(block->getTerminator());
    else
      builder.setInsertionPointToEnd(block);
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
  for (auto [name, value] : llvm::zip_equal(carriedNames, ifOp.getResults()))
    rebind(name, value);
  return success();
}

bool IRGen::loopExits(ArrayRef<StmtPtr> body) {
  if (!mayExit(body))
    return false;
  Location l = builder.getUnknownLoc();
  Symbol flag{Symbol::Kind::Scalar,
              arith::ConstantIntOp::create(builder, l, builder.getI1Type(), 0)};
  flag.isMutable = true;
  declare(kBreakFlag, flag);
  return true;
}

LogicalResult IRGen::statement(const Stmt &stmt) {
  switch (stmt.kind) {
  case Stmt::Kind::Block: {
    push();
    LogicalResult result = statements(stmt.body);
    // Rebinds of outer names already went to the outer symbols.
    pop();
    return result;
  }
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
  case Stmt::Kind::MmaCommit: {
    if (!insideParallel())
      return fail(stmt.loc, "mma." + stmt.op + " runs on device threads; "
                                                "move it into a parallel");
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
  case Stmt::Kind::Sync: {
    if (!insideParallel())
      return fail(stmt.loc, "sync." + stmt.op + " synchronises device "
                                                "threads; move it into a "
                                                "parallel");
    if (stmt.op == "global" || stmt.op == "fence")
      return fail(stmt.loc, "sync." + stmt.op + " is not supported yet",
                  "use sync.shared or sync.barrier : level");
    Level level = Level::Block;
    if (stmt.op == "barrier")
      level = llvm::StringSwitch<Level>(stmt.layout)
                  .Case("group-4", Level::Warpgroup)
                  .Case("group", Level::Warp)
                  .Case("thread", Level::Thread)
                  .Default(Level::Block);
    if (level == Level::Thread)
      return fail(stmt.loc, "a barrier over one thread is meaningless",
                  "use group, group-4 or block");
    BarrierOp::create(builder, loc(stmt.loc), level);
    return success();
  }
  case Stmt::Kind::Parallel:
    return parallel(stmt);
  case Stmt::Kind::With:
    return with(stmt);
  case Stmt::Kind::Foreach:
    return foreach(stmt);
  case Stmt::Kind::InThreads:
    return inthreads(stmt);
  case Stmt::Kind::If:
    return ifStmt(stmt);
  case Stmt::Kind::While:
    return whileStmt(stmt);
  case Stmt::Kind::Break:
  case Stmt::Kind::Continue: {
    Symbol *brk = lookup(kBreakFlag), *cnt = lookup(kContinueFlag);
    if (!brk || !cnt)
      return fail(stmt.loc, (stmt.kind == Stmt::Kind::Break ? "break" : "continue") +
                                Twine(" outside a loop"),
                  "use it inside foreach or while");
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
    if (insideParallel())
      return fail(stmt.loc, "return inside a parallel is not supported",
                  "guard the work with if instead");
    FailureOr<Value> v = view(*stmt.value);
    if (failed(v))
      return failure();
    returned.push_back(*v);
    hasReturn = true;
    return success();
  }
  }
  return fail(stmt.loc, "unsupported statement");
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
    Type type = elementType(stmt.elemType, stmt.loc);
    if (!type)
      return failure();
    Value value;
    if (stmt.value) {
      FailureOr<EVal> v = expr(*stmt.value);
      if (failed(v))
        return failure();
      value = coerce(v->value, type, l);
    } else {
      value = arith::ConstantOp::create(builder, l, builder.getZeroAttr(type));
    }
    if (isUnsignedName(stmt.elemType))
      unsignedValues.insert(value);
    Symbol s{Symbol::Kind::Scalar, value};
    s.isMutable = stmt.isMutable;
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
    std::string storage = stmt.storage.empty() ? "global" : stmt.storage;
    bool device = storage == "shared" || storage == "local";
    if (device && !insideParallel())
      return fail(stmt.loc, storage + " tensors can only be declared inside "
                                      "a parallel",
                  "move the declaration into the block-level parallel");
    if (!device && insideParallel())
      return fail(stmt.loc, "a global tensor cannot be declared inside a "
                            "parallel",
                  "declare it before the parallel, at host level");
    SmallVector<int64_t> shape;
    SmallVector<Value> dynamic;
    for (const ExprPtr &d : stmt.arrayDims) {
      FailureOr<int64_t> c = constantExpr(*d);
      if (failed(c))
        return failure();
      shape.push_back(*c);
    }
    for (const ExprPtr &d : stmt.dims) {
      FailureOr<Value> v = indexExpr(*d);
      if (failed(v))
        return failure();
      if (std::optional<int64_t> c = asConstant(*v)) {
        if (*c <= 0)
          return fail(d->loc, "tensor dimensions must be positive");
        shape.push_back(*c);
      } else {
        // A shared buffer may be sized at the launch (from the kernel's
        // arguments); a local one lives in registers.
        if (storage == "local")
          return fail(d->loc, storage + " buffers need compile-time "
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
    if (stmt.value && !device)
      return fail(stmt.value->loc,
                  "a global tensor cannot be initialised in its declaration",
                  "fill it in a kernel, or pass it in filled");
    Value buffer = memref::AllocOp::create(builder, l, type, dynamic);
    if (isUnsignedName(stmt.elemType))
      unsignedTensors.insert(buffer);
    // `shared f32 [..] s{v};` / `local f32 [..] l{v};`: every element is v.
    if (stmt.value) {
      FailureOr<EVal> v = expr(*stmt.value);
      if (failed(v))
        return failure();
      Value fill = coerce(v->value, element, l);
      SmallVector<Value> lbs, ubs, steps;
      for (int64_t extent : shape) {
        lbs.push_back(constIndex(0, l));
        ubs.push_back(constIndex(extent, l));
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
    if (kind != MemoryKind::Global && !insideParallel())
      return fail(stmt.loc, storage + " events can only be declared inside a "
                                      "parallel",
                  "declare them in the block-level parallel");
    SmallVector<int64_t> shape;
    for (const ExprPtr &d : stmt.arrayDims) {
      FailureOr<int64_t> c = constantExpr(*d);
      if (failed(c))
        return failure();
      if (*c <= 0)
        return fail(d->loc, "event arrays need a positive size");
      shape.push_back(*c);
    }
    auto type = EventType::getChecked([&] { return emitError(l); }, context,
                                      kind, ArrayRef<int64_t>(shape));
    if (!type)
      return failure();
    auto alloc = EventAllocOp::create(builder, l, type, UnitAttr(), IntegerAttr());
    if (stmt.ready)
      alloc.setReady(true);
    if (stmt.arrivals) {
      if (*stmt.arrivals <= 0)
        return fail(stmt.loc, "event<N> needs a positive arrival count");
      alloc.setArrivals(*stmt.arrivals);
    }
    if (failed(declareNew(stmt.name, stmt.nameLoc,
                          Symbol{Symbol::Kind::Event, alloc.getEvent()})))
      return failure();
  }
  for (const StmtPtr &more : stmt.moreDecls)
    if (failed(declaration(*more)))
      return failure();
  return success();
}

LogicalResult IRGen::assignment(const Stmt &stmt) {
  Location l = loc(stmt.loc);
  if (stmt.kind == Stmt::Kind::ExprStmt) {
    const Expr &e = *stmt.value;
    if (e.kind != Expr::Kind::Postfix &&
        !(e.kind == Expr::Kind::Unary && (e.name == "++" || e.name == "--")))
      return fail(stmt.loc, "this expression has no effect as a statement");
    const Expr &target = *e.args[0];
    Symbol *s = target.kind == Expr::Kind::Name ? lookup(target.name) : nullptr;
    if (!s || s->kind != Symbol::Kind::Scalar || !s->isMutable)
      return fail(target.loc, "'" + e.name + "' needs a mutable scalar",
                  "declare it as `mutable int x = 0;`");
    Type type = s->value.getType();
    if (failed(checkArithmetic(target.loc, type, "'" + e.name + "'")))
      return failure();
    Value one = coerce(constIndex(1, l), type, l);
    bool increment = e.name == "++";
    if (isa<FloatType>(type))
      s->value = increment
                     ? Value(arith::AddFOp::create(builder, l, s->value, one))
                     : Value(arith::SubFOp::create(builder, l, s->value, one));
    else
      s->value =
          increment
              ? Value(builder.createOrFold<arith::AddIOp>(l, s->value, one))
              : Value(builder.createOrFold<arith::SubIOp>(l, s->value, one));
    return success();
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
      isViewExpr(*stmt.value)) {
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
  FailureOr<EVal> rhs = expr(*stmt.value);
  if (failed(rhs))
    return failure();
  auto combine = [&](Value old, Value value) -> FailureOr<Value> {
    if (stmt.op == "=")
      return value;
    Expr fake(Expr::Kind::Binary, stmt.loc);
    StringRef op = StringRef(stmt.op).drop_back();
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
  if (target.kind == Expr::Kind::Name) {
    Symbol *s = lookup(target.name);
    if (stmt.op == "=") {
      if (s && s->kind == Symbol::Kind::Scalar && s->isMutable) {
        s->value = coerce(rhs->value, s->value.getType(), l);
        return success();
      }
      if (s && s->scope == scopes.size() && s->kind == Symbol::Kind::Scalar)
        return fail(target.loc, "'" + target.name +
                                    "' is immutable and already defined in "
                                    "this scope",
                    "declare it as `mutable int " + target.name + " = ...;`");
      // The first assignment declares an immutable scalar.
      declare(target.name, Symbol{Symbol::Kind::Scalar, rhs->value, rhs->bound});
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
    if ((stmt.op != "=" || rhs->value.getType() != element) &&
        (failed(checkArithmetic(stmt.loc, element,
                                stmt.op == "=" ? Twine("a conversion")
                                               : "'" + stmt.op + "'")) ||
         failed(checkArithmetic(stmt.loc, rhs->value.getType(),
                                "a conversion"))))
      return failure();
    FailureOr<Value> v =
        stmt.op == "=" ? FailureOr<Value>(rhs->value) : combine(old, rhs->value);
    if (failed(v))
      return failure();
    memref::StoreOp::create(builder, l, coerce(*v, element, l), *buffer,
                            indices);
    return success();
  }
  return fail(target.loc, "cannot assign to this expression",
              "assign to a name or to an element `t.at(i, j)`");
}

//===----------------------------------------------------------------------===//
// Structure: parallel, foreach, with, if, inthreads
//===----------------------------------------------------------------------===//

static std::optional<Level> levelFromName(StringRef name) {
  return llvm::StringSwitch<std::optional<Level>>(name)
      .Case("block", Level::Block)
      .Case("group-4", Level::Warpgroup)
      .Case("group", Level::Warp)
      .Case("thread", Level::Thread)
      .Default(std::nullopt);
}

/// The Croqtile name of `level` (levelFromName's inverse).
static StringRef levelName(Level level) {
  switch (level) {
  case Level::Block:
    return "block";
  case Level::Warpgroup:
    return "group-4";
  case Level::Warp:
    return "group";
  case Level::Thread:
    return "thread";
  }
  llvm_unreachable("unknown level");
}

/// Whether a parallel statement is nested anywhere in `body`.
static bool containsParallel(const std::vector<StmtPtr> &body) {
  for (const StmtPtr &s : body)
    if (s->kind == Stmt::Kind::Parallel || containsParallel(s->body) ||
        containsParallel(s->elseBody))
      return true;
  return false;
}

LogicalResult IRGen::parallel(const Stmt &stmt) {
  bool outermost = !insideParallel();
  // Complete the level chain as Croqtile's pbfill does.
  struct LevelPlan {
    const ParallelLevel *source; // null: an implicit `by 1`
    Level level;
  };
  SmallVector<LevelPlan> plan;
  bool anyAnnotated = llvm::any_of(
      stmt.levels, [](const ParallelLevel &p) { return !p.level.empty(); });
  bool allAnnotated = llvm::all_of(
      stmt.levels, [](const ParallelLevel &p) { return !p.level.empty(); });
  if (anyAnnotated && !allAnnotated)
    return fail(stmt.loc, "unable to infer the parallel-by level(s): some "
                          "levels are annotated and some are not",
                "annotate every level (`: block`, `: group-4`, `: group`, "
                "`: thread`)");
  if (allAnnotated) {
    for (const ParallelLevel &p : stmt.levels)
      plan.push_back({&p, *levelFromName(p.level)});
  } else if (stmt.levels.size() == 1 && outermost &&
             containsParallel(stmt.body)) {
    // `parallel p by 8 { parallel q by 64 ... }`: the outer of two
    // unannotated levels is the block level, as Croqtile infers it.
    plan.push_back({&stmt.levels[0], Level::Block});
  } else if (stmt.levels.size() == 1) {
    if (outermost)
      plan.push_back({nullptr, Level::Block});
    plan.push_back({&stmt.levels[0], Level::Thread});
  } else if (stmt.levels.size() == 2 && outermost) {
    plan.push_back({&stmt.levels[0], Level::Block});
    plan.push_back({&stmt.levels[1], Level::Thread});
  } else {
    return fail(stmt.loc, "unable to infer the parallel-by level(s)",
                "annotate the levels (`: block`, `: thread`, ...)");
  }
  // Level rules.
  if (stmt.async && !outermost)
    return fail(stmt.loc, "only the outermost parallel can be .async",
                "drop .async from this nested parallel");
  if (!stmt.streamName.empty() && plan.front().level != Level::Block)
    return fail(stmt.loc, "a stream can only be bound to a block-level "
                          "parallel",
                "annotate the level `: block`, or drop <" + stmt.streamName +
                    ">");
  if (outermost && plan.front().level != Level::Block)
    return fail(stmt.loc, "the outermost parallel must be the block level",
                "annotate it `: block`");
  if (!outermost && plan.front().level == Level::Block)
    return fail(stmt.loc, "a block-level parallel cannot be nested in "
                          "another parallel");
  // The chain continues the levels of the parallel around it.
  if (ParallelOp outer = enclosingParallel();
      outer && static_cast<int>(outer.getLevel()) <=
                   static_cast<int>(plan.front().level))
    return fail(plan.front().source ? plan.front().source->loc : stmt.loc,
                "a '" + levelName(plan.front().level) +
                    "' parallel cannot be nested in a '" +
                    levelName(outer.getLevel()) + "' parallel",
                "levels go block, group-4, group, thread from the outside "
                "in");
  for (size_t i = 0; i + 1 < plan.size(); ++i) {
    if (static_cast<int>(plan[i + 1].level) >= static_cast<int>(plan[i].level))
      return fail(plan[i + 1].source ? plan[i + 1].source->loc : stmt.loc,
                  "parallel levels must go from block to group-4, group and "
                  "thread");
    if (plan[i].level == Level::Warpgroup && plan[i + 1].level == Level::Warp)
      return fail(plan[i + 1].source->loc,
                  "an explicit group inside group-4 is not supported",
                  "use `: thread` inside a group-4 level");
  }
  // A group-4 level's threads: 128 per warpgroup.
  for (size_t i = 0; i + 1 < plan.size(); ++i) {
    if (plan[i].level != Level::Warpgroup || plan[i + 1].level != Level::Thread)
      continue;
    int64_t total = 1;
    bool known = true;
    for (const ExprPtr &b : plan[i + 1].source->bounds) {
      if (b->kind != Expr::Kind::Int) {
        known = false;
        break;
      }
      total *= b->intValue;
    }
    if (known && total != 128)
      return fail(plan[i + 1].source->loc,
                  "a group-4 level has 128 threads, but this thread level "
                  "has " + Twine(total),
                  "make the thread extents multiply to 128");
  }

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

  SmallVector<std::string> carriedNames = carried(stmt.body);
  if (outermost && !carriedNames.empty())
    return fail(stmt.loc, "a kernel cannot assign '" + carriedNames.front() +
                              "', which is defined outside it",
                "write results to a tensor");

  // Build the chain; values assigned inside flow out as results.
  std::function<LogicalResult(size_t)> build = [&](size_t i) -> LogicalResult {
    const LevelPlan &lp = plan[i];
    Location l = loc(lp.source ? lp.source->loc : stmt.loc);
    SmallVector<Value> bounds;
    if (lp.source) {
      for (const ExprPtr &b : lp.source->bounds) {
        FailureOr<Value> v = indexExpr(*b);
        if (failed(v))
          return failure();
        if (std::optional<int64_t> c = asConstant(*v); c && *c <= 0)
          return fail(b->loc, "parallel bounds must be positive, got " +
                                  Twine(*c));
        bounds.push_back(*v);
      }
    } else {
      bounds.push_back(constIndex(1, l));
    }
    SmallVector<Type> resultTypes;
    for (const std::string &name : carriedNames)
      resultTypes.push_back(lookup(name)->value.getType());
    auto op = ParallelOp::create(builder, l, lp.level, bounds,
                                 i == 0 && stmt.async, i == 0 ? stream : Value(),
                                 resultTypes);
    OpBuilder::InsertionGuard guard(builder);
    Block &block = op.getBody().front();
    builder.setInsertionPointToStart(&block);
    openParallels.push_back(op);
    auto close = llvm::make_scope_exit([&] { openParallels.pop_back(); });
    push();
    shadow(carriedNames);
    if (lp.source)
      for (auto [j, name] : llvm::enumerate(lp.source->names)) {
        Symbol s{Symbol::Kind::Scalar, block.getArgument(j), bounds[j]};
        s.isParallelIndex = true;
        declare(name, s);
      }
    if (i == 0 && !localStream.empty())
      declare(localStream, Symbol{Symbol::Kind::Stream, stream});
    LogicalResult result = i + 1 < plan.size() ? build(i + 1)
                                               : statements(stmt.body);
    if (succeeded(result) && !carriedNames.empty())
      YieldOp::create(builder, l, currentValues(carriedNames));
    pop();
    if (failed(result))
      return failure();
    for (auto [name, value] : llvm::zip_equal(carriedNames, op.getResults()))
      rebind(name, value);
    return success();
  };
  return build(0);
}

LogicalResult IRGen::with(const Stmt &stmt) {
  push();
  for (const Within &w : stmt.withins)
    for (auto [name, boundExpr] : llvm::zip_equal(w.names, w.bounds)) {
      FailureOr<Value> bound = indexExpr(*boundExpr);
      if (failed(bound)) {
        pop();
        return failure();
      }
      // Outside foreach a with-variable's value is 0.
      declare(name, Symbol{Symbol::Kind::Scalar, constIndex(0, loc(w.loc)), *bound});
    }
  LogicalResult result = statements(stmt.body);
  pop();
  return result;
}

LogicalResult IRGen::foreach(const Stmt &stmt) {
  struct LoopPlan {
    std::string name;
    Value lower, upper, step, bound;
    Location loc;
  };
  SmallVector<LoopPlan> loops;
  for (const Within &w : stmt.withins)
    for (auto [name, boundExpr] : llvm::zip_equal(w.names, w.bounds)) {
      FailureOr<Value> bound = indexExpr(*boundExpr);
      if (failed(bound))
        return failure();
      Location l = loc(w.loc);
      loops.push_back({name, constIndex(0, l), *bound, constIndex(1, l), *bound, l});
    }
  for (const ExprPtr &range : stmt.ranges) {
    Symbol *s = lookup(range->name);
    Location l = loc(range->loc);
    if (!s || s->kind != Symbol::Kind::Scalar || !s->bound)
      return fail(range->loc, "foreach " + range->name +
                                  " needs a bounded variable declared by "
                                  "with or an enclosing foreach",
                  "write `with " + range->name + " in N { foreach " +
                      range->name + " ... }` or `foreach " + range->name +
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
    loops.push_back({range->name, lower, upper, step, s->bound, l});
  }
  // A loop that breaks keeps a flag across iterations; once it is set, the
  // remaining iterations do nothing.
  push();
  bool exits = loopExits(stmt.body);
  SmallVector<std::string> carriedNames = carried(stmt.body);
  auto loopBody = [&](Location l) -> LogicalResult {
    if (!exits)
      return statements(stmt.body);
    Symbol cont{Symbol::Kind::Scalar,
                arith::ConstantIntOp::create(builder, l, builder.getI1Type(), 0)};
    cont.isMutable = true;
    declare(kContinueFlag, cont);
    Value one = arith::ConstantIntOp::create(builder, l, builder.getI1Type(), 1);
    Value running = builder.createOrFold<arith::XOrIOp>(
        l, lookup(kBreakFlag)->value, one);
    return guarded(running, stmt.body, l);
  };

  std::function<LogicalResult(size_t)> build = [&](size_t i) -> LogicalResult {
    const LoopPlan &lp = loops[i];
    SmallVector<Value> inits;
    for (const std::string &name : carriedNames)
      inits.push_back(lookup(name)->value);
    auto loop = scf::ForOp::create(builder, lp.loc, lp.lower, lp.upper, lp.step,
                                   inits);
    OpBuilder::InsertionGuard guard(builder);
    Block *body = loop.getBody();
    if (body->mightHaveTerminator())
      builder.setInsertionPoint(body->getTerminator());
    else
      builder.setInsertionPointToEnd(body);
    push();
    shadow(carriedNames, loop.getRegionIterArgs());
    declare(lp.name, Symbol{Symbol::Kind::Scalar, loop.getInductionVar(), lp.bound});
    LogicalResult result = i + 1 < loops.size() ? build(i + 1)
                                                : loopBody(lp.loc);
    if (succeeded(result) && !carriedNames.empty()) {
      SmallVector<Value> values;
      for (auto [j, name] : llvm::enumerate(carriedNames)) {
        Value v = lookup(name)->value;
        if (v.getType() != inits[j].getType()) {
          pop();
          return fail(stmt.loc, "'" + name + "' changes type inside the loop",
                      "keep one buffer shape per future");
        }
        values.push_back(v);
      }
      scf::YieldOp::create(builder, lp.loc, values);
    }
    pop();
    if (failed(result))
      return failure();
    for (auto [name, value] : llvm::zip_equal(carriedNames, loop.getResults()))
      rebind(name, value);
    return success();
  };
  LogicalResult result = build(0);
  pop();
  return result;
}

LogicalResult IRGen::ifStmt(const Stmt &stmt) {
  Location l = loc(stmt.loc);
  FailureOr<EVal> cond = expr(*stmt.value);
  if (failed(cond))
    return failure();
  Value c = cond->value;
  if (!c.getType().isInteger(1))
    return fail(stmt.value->loc, "an if condition must be a comparison or a "
                                 "bool");
  SmallVector<std::string> carriedNames = carried(stmt.body);
  {
    llvm::StringSet<> seen;
    for (const std::string &name : carriedNames)
      seen.insert(name);
    for (const std::string &name : carried(stmt.elseBody))
      if (seen.insert(name).second)
        carriedNames.push_back(name);
  }
  SmallVector<Type> types;
  SmallVector<Value> before;
  for (const std::string &name : carriedNames) {
    before.push_back(lookup(name)->value);
    types.push_back(before.back().getType());
  }
  auto ifOp = scf::IfOp::create(builder, l, types, c,
                                /*withElseRegion=*/!types.empty() || stmt.hasElse);
  auto branch = [&](Block *block, const std::vector<StmtPtr> &body) {
    OpBuilder::InsertionGuard guard(builder);
    if (block->mightHaveTerminator())
      builder.setInsertionPoint(block->getTerminator());
    else
      builder.setInsertionPointToEnd(block);
    push();
    shadow(carriedNames, before);
    LogicalResult result = statements(body);
    if (succeeded(result) && !types.empty())
      scf::YieldOp::create(builder, l, currentValues(carriedNames));
    pop();
    return result;
  };
  if (failed(branch(ifOp.thenBlock(), stmt.body)))
    return failure();
  if (ifOp.elseBlock() && failed(branch(ifOp.elseBlock(), stmt.elseBody)))
    return failure();
  for (auto [name, value] : llvm::zip_equal(carriedNames, ifOp.getResults()))
    rebind(name, value);
  return success();
}

LogicalResult IRGen::whileStmt(const Stmt &stmt) {
  Location l = loc(stmt.loc);
  push();
  bool exits = loopExits(stmt.body);
  SmallVector<std::string> carriedNames = carried(stmt.body);
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
        if (succeeded(cond) && cond->value.getType().isInteger(1)) {
          c = cond->value;
          if (exits) {
            // Stop once the body broke.
            Value one = arith::ConstantIntOp::create(builder, bl,
                                                     builder.getI1Type(), 1);
            Value running = builder.createOrFold<arith::XOrIOp>(
                bl, lookup(kBreakFlag)->value, one);
            c = builder.createOrFold<arith::AndIOp>(bl, running, c);
          }
        } else {
          if (succeeded(cond))
            result = fail(stmt.value->loc, "a while condition must be a "
                                           "comparison or a bool");
          else
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
          declare(kContinueFlag, cont);
        }
        if (succeeded(result) && failed(statements(stmt.body)))
          result = failure();
        SmallVector<Value> values;
        for (auto [j, name] : llvm::enumerate(carriedNames)) {
          Value v = lookup(name)->value;
          values.push_back(v.getType() == types[j] ? v : args[j]);
          if (v.getType() != types[j] && succeeded(result))
            result = fail(stmt.loc, "'" + name + "' changes type inside the "
                                                 "loop");
        }
        scf::YieldOp::create(builder, bl, values);
        pop();
      });
  if (succeeded(result))
    for (auto [name, value] : llvm::zip_equal(carriedNames, loop.getResults()))
      rebind(name, value);
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

LogicalResult IRGen::inthreads(const Stmt &stmt) {
  if (!insideParallel())
    return fail(stmt.loc, "inthreads partitions the threads of a parallel "
                          "and is illegal at host level",
                "move it into a parallel");
  if (stmt.async && inthreadsDepth > 0)
    return fail(stmt.loc, "only the outermost inthreads can be async",
                "drop .async from the nested inthreads");
  bool usesIndex = false;
  SMLoc culprit;
  if (!isStaticPredicate(*stmt.value,
                         [&](StringRef n) { return lookup(n); }, usesIndex,
                         culprit))
    return fail(culprit, "an inthreads predicate may only use parallel "
                         "indices and constants",
                "use if (...) for a condition on run-time values");
  if (!usesIndex)
    return fail(stmt.value->loc, "an inthreads predicate must test a "
                                 "parallel index",
                "e.g. inthreads.async (p1 == 0)");
  FailureOr<EVal> cond = expr(*stmt.value);
  if (failed(cond))
    return failure();
  if (!cond->value.getType().isInteger(1))
    return fail(stmt.value->loc, "an inthreads predicate must be a "
                                 "comparison");
  SmallVector<std::string> carriedNames = carried(stmt.body);
  if (!carriedNames.empty())
    return fail(stmt.loc, "inthreads cannot assign '" + carriedNames.front() +
                              "', which is defined outside it",
                "declare it inside the inthreads region");
  auto op = InThreadsOp::create(builder, loc(stmt.loc), cond->value, stmt.async);
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPoint(op.getBody().front().getTerminator());
  push();
  ++inthreadsDepth;
  LogicalResult result = statements(stmt.body);
  --inthreadsDepth;
  pop();
  return result;
}

//===----------------------------------------------------------------------===//
// Copies and futures
//===----------------------------------------------------------------------===//

static std::string typeString(Type type) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << type;
  return s;
}

LogicalResult IRGen::copy(const Stmt &stmt) {
  Location l = loc(stmt.loc);
  bool isTma = stmt.op == "tma";
  // Said once, in the final pass: a hint croq parses but does not apply.
  if (finalPass)
    for (const auto &[at, hint] : stmt.ignoredHints)
      emitWarning(loc(at), "'." + hint + "' is a cache hint croq does not "
                           "apply yet; the copy is made without it");
  FailureOr<Value> source = view(*stmt.source);
  if (failed(source))
    return failure();
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
    if (!insideParallel())
      return fail(stmt.loc, "=> " + stmt.destStorage +
                                " allocates a buffer and is only legal inside "
                                "a parallel");
    if (stmt.destStorage == "global")
      return fail(stmt.loc, "=> global is not a destination",
                  "copy into a view of a global tensor");
    bool placeholder = existing && existing->origin &&
                       existing->origin->kind == Stmt::Kind::DmaAny &&
                       !finalPass;
    if (existing && !placeholder) {
      target = FutureDataOp::create(
                   builder, l,
                   cast<FutureType>(existing->value.getType()).getDataType(),
                   existing->value)
                   .getResult();
    } else {
      // A source with run-time extents gives a buffer with run-time extents
      // (the lowering asks for static shapes where it needs them).
      SmallVector<Value> dynamicSizes;
      // A chunkat's extent comes from its source's, so that the buffer can
      // be sized before the launch, not from the tile's indices.
      for (int64_t d = 0; d < sourceType.getRank(); ++d)
        if (sourceType.isDynamicDim(d))
          dynamicSizes.push_back(viewExtent(*source, d, l));
      Attribute space = gpu::AddressSpaceAttr::get(
          context, stmt.destStorage == "shared" ? gpu::AddressSpace::Workgroup
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
  if (finalPass || !existing) {
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
    if (!shapesMatch) {
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
                  "copy views of equal shape (subspan / chunkat the larger "
                  "one)");
    }
    // A dimension known on one side only: equal at run time, checked by
    // the host before the launch (a chunkat of a tensor whose tile is not
    // the buffer's shape would copy part of it).
    if (finalPass && sourceType.getRank() == targetType.getRank()) {
      Location l = loc(stmt.loc);
      for (int64_t d = 0; d < sourceType.getRank(); ++d) {
        int64_t sd = sourceType.getDimSize(d), td = targetType.getDimSize(d);
        if (ShapedType::isDynamic(sd) == ShapedType::isDynamic(td))
          continue;
        Value dynamicSide = ShapedType::isDynamic(sd) ? Value(*source) : target;
        int64_t fixed = ShapedType::isDynamic(sd) ? td : sd;
        Value extent = viewExtent(dynamicSide, d, l);
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
        if (!checked)
          return fail(stmt.loc,
                      "cannot check before the launch that dimension " +
                          Twine(d) + " of this copy is " + Twine(fixed),
                      "copy views whose shapes follow from the function's "
                      "parameters and constants");
      }
    }
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
  Type futureType;
  if (futureWanted)
    futureType = FutureType::get(context,
                                 isTma ? FutureKind::Tma : FutureKind::Dma,
                                 stmt.async, targetType);
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
    if (swizzle && finalPass) {
      auto shared = getStorage(cast<MemRefType>(target.getType())) ==
                            Storage::Shared
                        ? cast<MemRefType>(target.getType())
                        : cast<MemRefType>(source->getType());
      int64_t inner = shared.getShape().back();
      int64_t bytes = inner * shared.getElementTypeBitWidth() / 8;
      if (!ShapedType::isDynamic(inner) && bytes != swizzle.getInt())
        return fail(stmt.loc, ".swiz<" + Twine(swizzle.getInt()) +
                                  "> needs shared rows of " +
                                  Twine(swizzle.getInt()) +
                                  " bytes; this tile's rows are " +
                                  Twine(inner) + " x " +
                                  typeString(shared.getElementType()) +
                                  " = " + Twine(bytes) + " bytes",
                    bytes == 32 || bytes == 64 || bytes == 128
                        ? "use .swiz<" + Twine(bytes) + ">"
                        : Twine("use rows of 32, 64 or 128 bytes, or no "
                                "swizzle"));
    }
    auto op = TmaCopyOp::create(builder, l, futureType ? TypeRange{futureType}
                                                       : TypeRange{},
                                *source, target, event, eventIndices,
                                /*tensorMap=*/Value(), stmt.async, swizzle,
                                /*issuer=*/IssuerAttr());
    if (futureType)
      future = op.getFuture();
  } else {
    if (stmt.boundEvent)
      return fail(stmt.boundEvent->loc, "dma.copy.async<event> is not "
                                        "supported; bind TMA copies to events",
                  "use f = dma.copy.async ...; wait f;");
    auto op = DmaCopyOp::create(builder, l,
                                futureType ? TypeRange{futureType} : TypeRange{},
                                *source, target, after, stmt.async, swizzle);
    if (futureType)
      future = op.getFuture();
  }
  if (future) {
    if (existing) {
      if (existing->origin && existing->origin->kind == Stmt::Kind::DmaAny &&
          !finalPass)
        inference.anyTypes[existing->origin] = future.getType();
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
  Type type = inference.anyTypes.lookup(&stmt);
  if (!type) {
    if (finalPass)
      return fail(stmt.loc, "cannot tell which buffer this " + stmt.op +
                                ".any stands for",
                  "swap it with a future, or assign a copy to '" + stmt.name +
                      "' later");
    // First pass: a stand-in, replaced once a swap or a copy reveals it.
    type = FutureType::get(
        context, stmt.op == "tma" ? FutureKind::Tma : FutureKind::Dma, true,
        MemRefType::get({1}, builder.getI8Type()));
  }
  auto futureType = cast<FutureType>(type);
  auto memref = cast<MemRefType>(futureType.getDataType());
  SmallVector<Value> dynamicSizes;
  if (!memref.hasStaticShape()) {
    // Run-time extents: those of the partner's buffer.
    Symbol *partner = lookup(inference.anyPartners.lookup(&stmt));
    if (!partner || partner->kind != Symbol::Kind::Future)
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
  Value buffer = memref::AllocOp::create(builder, l, memref, dynamicSizes);
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
  // Teach the first pass what a placeholder stands for.
  if (!finalPass)
    for (Symbol *s : symbols)
      if (s->origin && s->origin->kind == Stmt::Kind::DmaAny)
        for (auto [i, other] : llvm::enumerate(symbols))
          if (!(other->origin && other->origin->kind == Stmt::Kind::DmaAny)) {
            inference.anyTypes[s->origin] = other->value.getType();
            inference.anyPartners[s->origin] = stmt.operands[i]->name;
          }
  for (size_t i = 1; i < symbols.size(); ++i) {
    if (symbols[i]->value.getType() != symbols[0]->value.getType() && finalPass)
      return fail(stmt.operands[i]->loc,
                  stmt.op + " needs futures of the same kind, asynchrony and "
                            "buffer shape: " +
                      typeString(symbols[0]->value.getType()) + " and " +
                      typeString(symbols[i]->value.getType()),
                  "swap async copies with async copies of the same tile");
    if (symbols[i]->scope != symbols[0]->scope)
      return fail(stmt.operands[i]->loc,
                  stmt.op + " needs futures declared in the same scope",
                  "declare both futures at the same level, e.g. with "
                  "dma.any next to the first copy");
  }
  if (symbols[0]->value.getType() != symbols[1]->value.getType()) {
    // First pass with an unresolved placeholder: just exchange the handles.
    std::swap(symbols[0]->value, symbols[1]->value);
    return success();
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
                             /*issuer=*/IssuerAttr());
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

//===----------------------------------------------------------------------===//
// MMA
//===----------------------------------------------------------------------===//

LogicalResult IRGen::mmaFill(const Stmt &stmt) {
  Location l = loc(stmt.loc);
  FailureOr<EVal> v = expr(*stmt.value);
  if (failed(v))
    return failure();
  Type type = inference.fillTypes.lookup(&stmt);
  if (!type) {
    // The MMA that would give the shape failed in the inference pass: its
    // error, reported by generateIR, is the real one.
    if (finalPass && inference.incomplete) {
      deferredToInference = true;
      return failure();
    }
    if (finalPass)
      return fail(stmt.loc, "cannot tell the shape of this accumulator: no "
                            "MMA uses '" + stmt.name + "'",
                  "use it as the first operand of mma.row.row / mma.row.col");
    Type element = stmt.elemType.empty() ? Type(builder.getF32Type())
                                         : elementType(stmt.elemType, stmt.loc);
    if (!element)
      return failure();
    type = FragType::get(context, FragRole::Acc, {16, 16}, element,
                         fragmentScope());
  }
  Value value = v->value;
  if (value.getType().isIndex())
    value = coerce(value, builder.getI64Type(), l);
  Value fill = MmaFillOp::create(builder, l, type, value);
  Symbol s{Symbol::Kind::Frag, fill};
  s.origin = &stmt;
  declare(stmt.name, s);
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
  auto it = inference.loadRoles.find(&stmt);
  FragRole role = it == inference.loadRoles.end()
                      ? FragRole::A
                      : static_cast<FragRole>(it->second);
  if (finalPass && it == inference.loadRoles.end())
    return fail(stmt.loc, "no MMA uses '" + stmt.name +
                              "', so its operand role is unknown",
                "pass it to mma.row.row / mma.row.col, or drop the load");
  auto fragType =
      FragType::getChecked([&] { return emitError(l); }, context, role,
                           type.getShape(), type.getElementType(),
                           fragmentScope());
  if (!fragType)
    return failure();
  auto op = MmaLoadOp::create(builder, l, fragType, *source,
                              stmt.swizzle ? builder.getI64IntegerAttr(*stmt.swizzle)
                                           : IntegerAttr());
  Symbol s{Symbol::Kind::Frag, op.getResult()};
  s.origin = &stmt;
  declare(stmt.name, s);
  return success();
}

LogicalResult IRGen::mma(const Stmt &stmt) {
  Location l = loc(stmt.loc);
  if (!insideParallel())
    return fail(stmt.loc, "MMA runs on device threads; move it into a "
                          "parallel");
  const Expr &accExpr = *stmt.operands[0];
  Symbol *acc = accExpr.kind == Expr::Kind::Name ? lookup(accExpr.name) : nullptr;
  if (!acc || acc->kind != Symbol::Kind::Frag)
    return fail(accExpr.loc, "the first MMA operand must be an accumulator "
                             "from mma.fill",
                "write `mc = mma.fill 0.0f;` first");
  // Operands: fragments from mma.load, or views (D2) loaded here.
  SmallVector<Value> operands;
  SmallVector<Symbol *> operandSymbols;
  for (int i = 1; i <= 2; ++i) {
    const Expr &e = *stmt.operands[i];
    Symbol *s = e.kind == Expr::Kind::Name ? lookup(e.name) : nullptr;
    if (s && s->kind == Symbol::Kind::Frag) {
      operands.push_back(s->value);
      operandSymbols.push_back(s);
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
  }
  auto a = cast<FragType>(operands[0].getType());
  auto b = cast<FragType>(operands[1].getType());
  bool aRow = StringRef(stmt.layout).starts_with("row");
  bool bRow = StringRef(stmt.layout).ends_with("row");
  int64_t m = a.getShape()[aRow ? 0 : 1], ka = a.getShape()[aRow ? 1 : 0];
  int64_t n = b.getShape()[bRow ? 0 : 1], kb = b.getShape()[bRow ? 1 : 0];
  auto accType = cast<FragType>(acc->value.getType());
  // Record what the operands and the accumulator must be.
  if (!finalPass) {
    if (operandSymbols[0] && operandSymbols[0]->origin)
      inference.loadRoles[operandSymbols[0]->origin] = static_cast<int>(FragRole::A);
    if (operandSymbols[1] && operandSymbols[1]->origin)
      inference.loadRoles[operandSymbols[1]->origin] = static_cast<int>(FragRole::B);
    if (acc->origin && acc->origin->kind == Stmt::Kind::MmaFill &&
        !inference.fillTypes.count(acc->origin)) {
      Type element = acc->origin->elemType.empty()
                         ? a.getElementType()
                         : elementType(acc->origin->elemType, acc->origin->loc);
      // Checked: an accumulator too large for registers is reported at
      // its mma.fill.
      inference.fillTypes[acc->origin] = FragType::getChecked(
          [&] { return emitError(loc(acc->origin->loc)); }, context,
          FragRole::Acc, ArrayRef<int64_t>{m, n}, element, fragmentScope());
    }
  }
  // Operands held at another scope than this MMA's (loaded outside the
  // group-4 parallel, or inside a different one).
  if (finalPass) {
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
  if (ka != kb)
    return fail(stmt.loc, "MMA operand shapes do not agree: A is " +
                              Twine(a.getShape()[0]) + "x" + Twine(a.getShape()[1]) +
                              " and B is " + Twine(b.getShape()[0]) + "x" +
                              Twine(b.getShape()[1]) + " for mma." +
                              layoutName +
                              ", so their K extents " + Twine(ka) + " and " +
                              Twine(kb) + " differ",
                "row.row takes A [M, K] and B [N, K]; row.col takes B [K, N]");
  if (finalPass && (accType.getShape()[0] != m || accType.getShape()[1] != n))
    return fail(stmt.loc, "the accumulator '" + accExpr.name + "' is " +
                              Twine(accType.getShape()[0]) + "x" +
                              Twine(accType.getShape()[1]) +
                              " but the operands make a " + Twine(m) + "x" +
                              Twine(n) + " product",
                "use one accumulator per MMA shape");
  if (finalPass && a.getElementType() != b.getElementType())
    return fail(stmt.loc, "the MMA operands have different element types: A "
                          "is " + typeString(a.getElementType()) + " and B "
                          "is " + typeString(b.getElementType()),
                "load both operands from tensors of one element type");
  if (a.getRole() != FragRole::A || b.getRole() != FragRole::B) {
    if (finalPass)
      return fail(stmt.loc, "an operand fragment is used as both A and B",
                  "load the operand once per role");
    return success(); // The first pass only learns roles.
  }
  auto layout = *symbolizeMmaLayout(stmt.layout);
  if (stmt.async) {
    Type futureType = FutureType::get(context, FutureKind::Mma, true, accType);
    auto op = MmaOp::create(builder, l, futureType, layout, acc->value,
                            operands[0], operands[1], /*async=*/true);
    Symbol s{Symbol::Kind::Future, op.getResult()};
    s.origin = &stmt;
    declare(stmt.name, s);
    return success();
  }
  auto op = MmaOp::create(builder, l, accType, layout, acc->value, operands[0],
                          operands[1], /*async=*/false);
  acc->value = op.getResult();
  return success();
}

LogicalResult IRGen::mmaStore(const Stmt &stmt) {
  const Expr &accExpr = *stmt.operands[0];
  Symbol *acc = accExpr.kind == Expr::Kind::Name ? lookup(accExpr.name) : nullptr;
  if (!acc || acc->kind != Symbol::Kind::Frag)
    return fail(accExpr.loc, "mma.store stores an accumulator fragment");
  FailureOr<Value> dest = view(*stmt.dest);
  if (failed(dest))
    return failure();
  auto type = cast<MemRefType>(dest->getType());
  auto frag = cast<FragType>(acc->value.getType());
  SmallVector<int64_t> shape(frag.getShape());
  if (stmt.transpose)
    std::swap(shape[0], shape[1]);
  if (finalPass && frag.getElementType().isInteger() !=
                       type.getElementType().isInteger())
    return fail(stmt.loc, "mma.store cannot convert the accumulator's " +
                              typeString(frag.getElementType()) +
                              " elements to " +
                              typeString(type.getElementType()),
                "store into a tensor of integers for an integer accumulator, "
                "of floats for a float one");
  if (finalPass && type.getShape() != ArrayRef<int64_t>(shape))
    return fail(stmt.dest->loc,
                Twine(stmt.transpose ? "mma.store.transp: the view is not "
                                       "the accumulator's transposed "
                                     : "mma.store: the view is not the "
                                       "accumulator's ") +
                    Twine(shape[0]) + "x" + Twine(shape[1]) + " shape",
                "store into a view of that shape");
  auto store = MmaStoreOp::create(builder, loc(stmt.loc), acc->value, *dest);
  store.setTranspose(stmt.transpose);
  return success();
}

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
      if (d->kind == Expr::Kind::Int) {
        if (d->intValue <= 0)
          return fail(d->loc, "tensor dimensions must be positive");
        shape.push_back(d->intValue);
      } else if (d->kind == Expr::Kind::Name) {
        shape.push_back(ShapedType::kDynamic);
      } else {
        return fail(d->loc, "a parameter dimension is a literal, a name or ?");
      }
    }
    argTypes.push_back(MemRefType::get(shape, element));
  }
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
    // The host entry point names the tensor in its run-time errors.
    func.setArgAttr(i, "croq.name", builder.getStringAttr(p.name));
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
  if (fn.returnKind == "void" && !returned.empty())
    return fail(fn.loc, "a void function returns no value");
  if (fn.returnKind != "void" && returned.empty())
    return fail(fn.loc, "function '" + fn.name + "' must return a tensor");
  builder.setInsertionPointToEnd(entry);
  func::ReturnOp::create(builder, l, returned);
  func.setFunctionType(builder.getFunctionType(
      argTypes, ValueRange(returned).getTypes()));
  pop();
  return checkFuturesWaited(func);
}

/// Every future of an async copy must reach a wait (or a trigger ... after),
/// through swaps, loop-carried values and branches.
LogicalResult IRGen::checkFuturesWaited(func::FuncOp func) {
  if (!finalPass)
    return success();
  // Data of an async future is read only after a wait on that future.
  DominanceInfo dominance(func);
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
            auto result = dyn_cast<OpResult>(f);
            auto loop = result ? dyn_cast<scf::ForOp>(result.getOwner())
                               : scf::ForOp();
            if (!loop || depth > 8)
              return false;
            Operation *yield = loop.getBody()->getTerminator();
            return waitedBefore(yield->getOperand(result.getResultNumber()),
                                yield, depth + 1);
          };
      if (waitedBefore(future, user, 0))
        continue;
      InFlightDiagnostic diag = emitError(
          user->getLoc(), "reads the data of an async future before it is "
                          "waited");
      diag.attachNote(future.getLoc()) << "the future comes from here";
      diag.attachNote() << "hint: add `wait` on the future first (chapter "
                           "6's epilogue needs `wait lf0, rf0;`)";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (reads.wasInterrupted())
    return failure();
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
  bool ok = true;
  for (const Function &fn : program.functions) {
    // The first pass learns from every function, even after a failure.
    if (succeeded(function(fn)))
      continue;
    ok = false;
    if (finalPass)
      return nullptr;
  }
  if (!ok)
    return nullptr;
  return std::move(module);
}

OwningOpRef<ModuleOp>
mlir::croq::croqtile::generateIR(MLIRContext *context,
                                 llvm::SourceMgr &sourceMgr,
                                 const Program &program) {
  context->loadDialect<CroqDialect, arith::ArithDialect, cf::ControlFlowDialect,
                       func::FuncDialect, gpu::GPUDialect,
                       memref::MemRefDialect, scf::SCFDialect>();
  Inference inference;
  // The first error of the inference pass: its location, message and notes.
  std::optional<std::tuple<Location, std::string,
                           SmallVector<std::pair<Location, std::string>>>>
      firstError;
  {
    // The first run only learns types; its diagnostics would repeat (or
    // precede the inference that resolves them), so they are dropped unless
    // the program fails there for good.
    ScopedDiagnosticHandler quiet(context, [&](Diagnostic &d) {
      if (getenv("CROQ_IMPORT_DEBUG"))
        llvm::errs() << "first pass: " << d.str() << "\n";
      if (d.getSeverity() == DiagnosticSeverity::Error && !firstError) {
        SmallVector<std::pair<Location, std::string>> notes;
        for (Diagnostic &note : d.getNotes())
          notes.emplace_back(note.getLocation(), note.str());
        firstError.emplace(d.getLocation(), d.str(), std::move(notes));
      }
      return success();
    });
    IRGen first(context, sourceMgr, inference, /*finalPass=*/false);
    inference.incomplete = !first.run(program);
  }
  IRGen second(context, sourceMgr, inference, /*finalPass=*/true);
  OwningOpRef<ModuleOp> module = second.run(program);
  if (!module && second.deferredToInference && firstError) {
    auto &[where, message, notes] = *firstError;
    InFlightDiagnostic diag = emitError(where, message);
    for (auto &[noteLoc, note] : notes)
      diag.attachNote(noteLoc) << note;
  }
  return module;
}
