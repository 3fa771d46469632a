//===- IRGenExpr.cpp - Croqtile expressions to IR ---------------------------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#include "IRGenImpl.h"

#include "Croq/Analysis/Roles.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "llvm/ADT/StringSet.h"

#include <limits>

using namespace mlir;
using namespace mlir::croq;
using namespace mlir::croq::croqtile;

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
  if (!f || f.getWidth() >= 16)
    return success();
  StringRef name = isa<Float8E5M2Type>(type)     ? "f8_e5m2"
                   : isa<Float8E4M3FNType>(type) ? "f8_e4m3"
                   : isa<Float6E2M3FNType>(type) ? "f6_e2m3"
                   : isa<Float6E3M2FNType>(type) ? "f6_e3m2"
                                                 : "f4_e2m1";
  return fail(smloc, what + " on " + name + " values is not supported yet",
              "floats narrower than 16 bits can be copied, converted and "
              "used in expressions (which compute in f32); compute in f16 or "
              "f32 here");
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

/// The values `v` can take, [lo, hi), when it is a bounded index (a
/// parallel or loop index with constant bounds) shifted, scaled or reduced
/// by constants; none otherwise.
using IndexRange = std::pair<int64_t, int64_t>;

static std::optional<IndexRange>
indexRange(Value v, const llvm::DenseMap<Value, IndexRange> &known,
           unsigned depth = 0) {
  APInt c;
  if (matchPattern(v, m_ConstantInt(&c)))
    return std::make_pair(c.getSExtValue(), c.getSExtValue() + 1);
  if (depth > 8)
    return std::nullopt;
  if (auto it = known.find(v); it != known.end())
    return it->second;
  auto constantOf = [](Value x) -> std::optional<int64_t> {
    APInt k;
    if (matchPattern(x, m_ConstantInt(&k)))
      return k.getSExtValue();
    return std::nullopt;
  };
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    Operation *owner = arg.getOwner()->getParentOp();
    if (auto parallel = dyn_cast_or_null<ParallelOp>(owner)) {
      if (std::optional<int64_t> n = constantOf(parallel.getBounds()[arg.getArgNumber()]))
        return std::make_pair(int64_t(0), *n);
    } else if (auto loop = dyn_cast_or_null<scf::ForOp>(owner);
               loop && arg == loop.getInductionVar()) {
      std::optional<int64_t> lo = constantOf(loop.getLowerBound()),
                             hi = constantOf(loop.getUpperBound());
      if (lo && hi && *lo < *hi)
        return std::make_pair(*lo, *hi);
    }
    return std::nullopt;
  }
  Operation *def = v.getDefiningOp();
  if (!def || def->getNumOperands() != 2)
    return std::nullopt;
  std::optional<int64_t> k = constantOf(def->getOperand(1));
  auto r = indexRange(def->getOperand(0), known, depth + 1);
  if (!k || !r)
    return std::nullopt;
  if (isa<arith::AddIOp>(def))
    return std::make_pair(r->first + *k, r->second + *k);
  if (isa<arith::SubIOp>(def))
    return std::make_pair(r->first - *k, r->second - *k);
  if (isa<arith::MulIOp>(def) && *k > 0)
    return std::make_pair(r->first * *k, (r->second - 1) * *k + 1);
  if (isa<arith::RemSIOp, arith::RemUIOp>(def) && *k > 0 && r->first >= 0)
    return std::make_pair(int64_t(0), std::min(*k, r->second));
  if (isa<arith::DivSIOp, arith::DivUIOp>(def) && *k > 0 && r->first >= 0)
    return std::make_pair(r->first / *k, (r->second - 1) / *k + 1);
  return std::nullopt;
}

/// Narrows `known` by `cond` holding (`holds`) or not: comparisons of a
/// value with a constant, and `&&` of them when it holds. False when the
/// condition says something the ranges cannot express exactly.
static bool narrowByCondition(Value cond, bool holds,
                              llvm::DenseMap<Value, IndexRange> &known) {
  if (auto both = cond.getDefiningOp<arith::AndIOp>(); both && holds)
    return narrowByCondition(both.getLhs(), true, known) &&
           narrowByCondition(both.getRhs(), true, known);
  auto cmp = cond.getDefiningOp<arith::CmpIOp>();
  if (!cmp)
    return false;
  using P = arith::CmpIPredicate;
  Value x = cmp.getLhs();
  APInt c;
  P pred = cmp.getPredicate();
  if (!matchPattern(cmp.getRhs(), m_ConstantInt(&c))) {
    if (!matchPattern(cmp.getLhs(), m_ConstantInt(&c)))
      return false;
    x = cmp.getRhs();
    // c OP x is x OP' c with the comparison mirrored.
    pred = mirroredPredicate(cmp.getPredicate());
  }
  if (!holds) {
    if (pred == P::eq || pred == P::ne)
      return false;
    pred = arith::invertPredicate(pred);
  }
  // Only a variable itself (a parallel or loop index) is narrowed: the
  // ranges of what is computed from it follow from it, while narrowing a
  // computed value (`wg - 1 >= 0`) would leave the variable's range, and
  // so the index's, as wide as before.
  if (!isa<BlockArgument>(x))
    return false;
  std::optional<IndexRange> current = indexRange(x, known);
  if (!current)
    return false;
  int64_t k = c.getSExtValue();
  auto [lo, hi] = *current;
  switch (pred) {
  case P::slt: case P::ult: hi = std::min(hi, k); break;
  case P::sle: case P::ule: hi = std::min(hi, k + 1); break;
  case P::sgt: case P::ugt: lo = std::max(lo, k + 1); break;
  case P::sge: case P::uge: lo = std::max(lo, k); break;
  case P::eq: lo = std::max(lo, k); hi = std::min(hi, k + 1); break;
  default: return false;
  }
  if (lo >= hi)
    return false; // never taken: nothing to check
  known[x] = {lo, hi};
  return true;
}

FailureOr<EVal> IRGen::boundedValueAt(const Expr &k, Value bound, Location l) {
  // The k-th value of a variable bounded by `bound`, counted from the end
  // when negative (`i(-1)` is #i - 1); the bound stays.
  FailureOr<int64_t> c = constantExpr(k);
  if (failed(c))
    return failure();
  Value at = *c >= 0 ? constIndex(*c, l)
                     : builder.createOrFold<arith::AddIOp>(l, bound,
                                                           constIndex(*c, l));
  return EVal{at, bound};
}

std::string IRGen::outOfBoundsMessage(SMLoc smloc, const Twine &what,
                                      int64_t extent, StringRef noun) {
  return (what + " at line " + Twine(sourceMgr.FindLineNumber(smloc)) +
          " is out of bounds of its array of " + Twine(extent) + " " + noun)
      .str();
}

LogicalResult IRGen::checkBufferIndex(SMLoc smloc, Value index, int64_t extent,
                                      const Twine &what, StringRef noun,
                                      bool *covered) {
  if (covered)
    *covered = false;
  if (failed(checkIndex(smloc, index, extent, what)))
    return failure();
  if (asConstant(index)) {
    if (covered)
      *covered = !ShapedType::isDynamic(extent);
    return success();
  }
  if (ShapedType::isDynamic(extent) || inthreadsDepth)
    return success();
  // Under a condition the index may be bounded by it. The enclosing ifs'
  // conditions narrow the ranges of the values they compare with constants
  // (`if (wg >= 1)`: wg in [1, #wg)); an access under any other condition
  // (an inthreads predicate, a while, `x != c`, `||`) is not checked.
  llvm::DenseMap<Value, IndexRange> known;
  // A loop around the access that may run no iteration (a run-time trip
  // count) may never make it: the host cannot check it before the launch.
  bool maybeSkipped = false;
  Block *at = builder.getInsertionBlock();
  for (Operation *p = at->getParentOp(); p && !isa<func::FuncOp>(p);
       at = p->getBlock(), p = p->getParentOp()) {
    if (isa<scf::WhileOp, InThreadsOp>(p))
      return success();
    if (auto loop = dyn_cast<scf::ForOp>(p)) {
      std::optional<int64_t> lo = asConstant(loop.getLowerBound());
      std::optional<int64_t> hi = asConstant(loop.getUpperBound());
      maybeSkipped |= !lo || !hi || *lo >= *hi;
    }
    auto branch = dyn_cast<scf::IfOp>(p);
    if (!branch)
      continue;
    bool taken = at->getParent() == &branch.getThenRegion();
    if (!narrowByCondition(branch.getCondition(), taken, known))
      return success();
  }
  // A bounded index whose range reaches past the array.
  std::optional<IndexRange> range = indexRange(index, known);
  if (range && (range->first < 0 || range->second > extent))
    return fail(smloc, what + " ranges over [" + Twine(range->first) + ", " +
                           Twine(range->second) + "), out of bounds of [0, " +
                           Twine(extent) + ")",
                "keep the index within the array for every value of its "
                "bounded variables");
  if (range && covered)
    *covered = true;
  if (range || !known.empty())
    return success();
  // A run-time index outside every condition: the host entry point checks
  // it before the launch when the host can compute it (a parameter, or a
  // bounded variable's run-time bound), and refuses the call otherwise.
  Location l = loc(smloc);
  std::string message = outOfBoundsMessage(smloc, what, extent, noun);
  auto within = [&](OpBuilder &b, Value v, Value lo) {
    Value hi = arith::ConstantIndexOp::create(b, l, extent);
    return arith::AndIOp::create(
        b, l, arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge, v, lo),
        arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, v, hi));
  };
  if (!maybeSkipped &&
      checkOnHost(
          l, {index},
          [&](OpBuilder &b, ArrayRef<Value> v) {
            return within(b, v[0], arith::ConstantIndexOp::create(b, l, 0));
          },
          message)) {
    if (covered)
      *covered = true;
    return success();
  }
  auto arg = dyn_cast<BlockArgument>(index);
  if (!arg)
    return success();
  Operation *owner = arg.getOwner()->getParentOp();
  Value bound;
  if (auto parallel = dyn_cast_or_null<ParallelOp>(owner)) {
    bound = parallel.getBounds()[arg.getArgNumber()];
  } else if (auto loop = dyn_cast_or_null<scf::ForOp>(owner);
             loop && arg == loop.getInductionVar() &&
             matchPattern(loop.getLowerBound(), m_Zero()) &&
             matchPattern(loop.getStep(), m_One())) {
    bound = loop.getUpperBound();
  }
  if (bound) {
    bool checked = checkOnHost(
        l, {bound},
        [&](OpBuilder &b, ArrayRef<Value> v) {
          // Values 0 to bound - 1: the bound is at most the extent.
          return arith::CmpIOp::create(
              b, l, arith::CmpIPredicate::sle, v[0],
              arith::ConstantIndexOp::create(b, l, extent));
        },
        message + " for some values of its bounded variable");
    if (covered)
      *covered = checked;
  }
  return success();
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

LogicalResult IRGen::internalError(SMLoc smloc, const Twine &what) {
  return fail(smloc, "croq internal error: " + what +
                         ", which semantic analysis should have rejected",
              "please report this program to the croq developers");
}

Symbol *IRGen::lookup(StringRef name) {
  for (auto it = scopes.rbegin(); it != scopes.rend(); ++it) {
    auto found = it->find(name);
    if (found == it->end())
      continue;
    // `where a <-> b`: a is another name of b (never of itself).
    if (!found->second.aliasOf.empty() && found->second.aliasOf != name)
      return lookup(found->second.aliasOf);
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
                  .Case("f6_e2m3", builder.getType<Float6E2M3FNType>())
                  .Case("f6_e3m2", builder.getType<Float6E3M2FNType>())
                  .Case("f4_e2m1", builder.getType<Float4E2M1FNType>())
                  .Cases({"s64", "u64"}, builder.getI64Type())
                  .Cases({"s32", "u32"}, builder.getI32Type())
                  .Cases({"s16", "u16"}, builder.getI16Type())
                  .Cases({"s8", "u8"}, builder.getI8Type())
                  .Cases({"s6", "u6"}, builder.getIntegerType(6))
                  .Cases({"s4", "u4"}, builder.getIntegerType(4))
                  .Cases({"s2", "u2"}, builder.getIntegerType(2))
                  .Cases({"u1", "bin1"}, builder.getI1Type())
                  .Case("int", builder.getIndexType())
                  .Case("bool", builder.getI1Type())
                  .Default(Type());
  if (!type)
    (void)fail(at, "unsupported element type '" + name + "'");
  return type;
}

Value IRGen::truthValue(Value v, Location l) {
  if (v.getType().isInteger(1))
    return v;
  Value zero = arith::ConstantOp::create(builder, l, builder.getZeroAttr(v.getType()));
  return isa<FloatType>(v.getType())
             ? Value(arith::CmpFOp::create(builder, l, arith::CmpFPredicate::UNE, v, zero))
             : Value(builder.createOrFold<arith::CmpIOp>(l, arith::CmpIPredicate::ne, v, zero));
}

Value IRGen::coerce(Value value, Type type, Location l) {
  Type from = value.getType();
  if (from == type)
    return value;
  // To a bool: true where not zero, as C converts (`bool s = p + q;` is
  // true for 2), not the low bit.
  if (type.isInteger(1) && (from.isIntOrIndex() || isa<FloatType>(from)))
    return truthValue(value, l);
  if (from.isIndex() && type.isSignlessInteger())
    return builder.createOrFold<arith::IndexCastOp>(l, type, value);
  // A bool is 0 or 1 as a number, as C promotes it (an i1 true is -1 to a
  // sign extension).
  if (from.isSignlessInteger() && type.isIndex())
    return isUnsigned(value) || from.isInteger(1)
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
  if (isa<FloatType>(from) && isa<FloatType>(type)) {
    unsigned fromBits = from.getIntOrFloatBitWidth();
    unsigned toBits = type.getIntOrFloatBitWidth();
    // Two formats of one width (f8_e4m3 and f8_e5m2, f16 and bf16, the
    // f6s): through f32, which holds both exactly.
    if (fromBits == toBits) {
      Value wide = arith::ExtFOp::create(builder, l, builder.getF32Type(), value);
      return arith::TruncFOp::create(builder, l, type, wide);
    }
    return fromBits > toBits
               ? Value(arith::TruncFOp::create(builder, l, type, value))
               : Value(arith::ExtFOp::create(builder, l, type, value));
  }
  if (from.isSignlessInteger() && type.isSignlessInteger()) {
    if (from.getIntOrFloatBitWidth() > type.getIntOrFloatBitWidth())
      return arith::TruncIOp::create(builder, l, type, value);
    if (isUnsigned(value) || from.isInteger(1)) {
      Value wide = arith::ExtUIOp::create(builder, l, type, value);
      if (isUnsigned(value))
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

/// True when evaluating `e` reads elements of memory or calls a device
/// function: what C's `&&`, `||` and `?:` evaluate only where their
/// condition lets them (`i < N && x.at(i) > 0` must not read past x).
static bool readsMemory(const Expr &e) {
  return anyExpr(e, [](const Expr &x) {
    return (x.kind == Expr::Kind::Member && x.name == "at") ||
           x.kind == Expr::Kind::DeviceCall;
  });
}

FailureOr<Type> IRGen::ternaryType(const Expr &e, const EVal &a,
                                   const EVal &b) {
  // A literal arm takes the other's type; otherwise the wider, floats
  // before integers, as the arithmetic operators pick theirs. f16 and bf16
  // (or the two f8s) hold different values: neither is the result's type.
  Type at = a.value.getType(), bt = b.value.getType();
  if (a.literal && !b.literal)
    return bt;
  if (at == bt || b.literal)
    return at;
  if (isa<FloatType>(at) != isa<FloatType>(bt))
    return isa<FloatType>(at) ? at : bt;
  if (isa<FloatType>(at) &&
      at.getIntOrFloatBitWidth() == bt.getIntOrFloatBitWidth())
    return FailureOr<Type>(fail(
        e.loc, "the arms of ?: are " + typeString(at) + " and " +
                   typeString(bt) + ": neither type holds the other's values",
        "convert one arm first, e.g. with __to<f32>(...)"));
  if (at.isIndex() || bt.isIndex())
    return at.isIndex() ? bt : at;
  return at.getIntOrFloatBitWidth() >= bt.getIntOrFloatBitWidth() ? at : bt;
}

FailureOr<EVal> IRGen::shortCircuit(const Expr &e) {
  Location l = loc(e.loc);
  bool isTernary = e.kind == Expr::Kind::Ternary;
  FailureOr<EVal> c = expr(*e.args[0]);
  if (failed(c))
    return failure();
  // A condition is any scalar, true where it is not zero (as in C and
  // `if`).
  Value cond = truthValue(c->value, l);
  // The arms, each in its branch; their type is known once both are built.
  auto branch = scf::IfOp::create(builder, l, TypeRange{}, cond,
                                  /*withElseRegion=*/true);
  auto arm = [&](Block *block, const Expr *operand,
                 bool value) -> FailureOr<EVal> {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPoint(block->getTerminator());
    if (!operand)
      return EVal{arith::ConstantIntOp::create(builder, l, builder.getI1Type(),
                                               value)};
    FailureOr<EVal> v = expr(*operand);
    if (failed(v) || isTernary)
      return v;
    return EVal{truthValue(v->value, l)};
  };
  bool isAnd = e.name == "&&";
  const Expr *thenOperand = isTernary || isAnd ? e.args[1].get() : nullptr;
  const Expr *elseOperand = isTernary ? e.args[2].get()
                            : isAnd   ? nullptr
                                      : e.args[1].get();
  FailureOr<EVal> a = arm(branch.thenBlock(), thenOperand, true);
  FailureOr<EVal> b = arm(branch.elseBlock(), elseOperand, false);
  if (failed(a) || failed(b))
    return failure();
  FailureOr<Type> armType = ternaryType(e, *a, *b);
  if (failed(armType))
    return failure();
  Type type = *armType;
  for (auto [block, v] : {std::pair(branch.thenBlock(), a->value),
                          std::pair(branch.elseBlock(), b->value)}) {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPoint(block->getTerminator());
    Value coerced = coerce(v, type, l);
    block->getTerminator()->erase();
    builder.setInsertionPointToEnd(block);
    scf::YieldOp::create(builder, l, coerced);
  }
  auto result = scf::IfOp::create(builder, l, TypeRange{type}, cond,
                                  /*withElseRegion=*/true);
  result.getThenRegion().takeBody(branch.getThenRegion());
  result.getElseRegion().takeBody(branch.getElseRegion());
  branch.erase();
  return EVal{result.getResult(0)};
}

FailureOr<EVal> IRGen::binary(const Expr &e) {
  Location l = loc(e.loc);
  StringRef op = e.name;
  if ((op == "&&" || op == "||") && readsMemory(*e.args[1]))
    return shortCircuit(e);
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
    // bf16 and f16 (two formats of one width, 16 bits or more): neither
    // holds the other, so neither is the type of the operation.
    else if (isa<FloatType>(lt) && lt.getIntOrFloatBitWidth() >= 16 &&
             lt.getIntOrFloatBitWidth() == rt.getIntOrFloatBitWidth())
      return fail(e.loc, "'" + op + "' of " + typeString(lt) + " and " +
                             typeString(rt) + ": neither type holds the "
                             "other's values",
                  "convert one operand first, e.g. assign it to an f32 "
                  "variable");
    else if (lt.isIndex() || rt.isIndex())
      type = lt.isIndex() ? rt : lt;
    else
      type = lt.getIntOrFloatBitWidth() >= rt.getIntOrFloatBitWidth() ? lt : rt;
  }
  // A literal takes the other operand's integer type only where it fits
  // (`u4v + 1`); one that does not (`s6v * 1000`) makes the operation s32,
  // or s64, instead of wrapping the literal silently.
  if (auto it = dyn_cast<IntegerType>(type); it && it.getWidth() > 1 &&
                                             it.getWidth() < 64) {
    for (auto [mine, other] : {std::pair(&*lhs, &*rhs), std::pair(&*rhs, &*lhs)}) {
      std::optional<int64_t> c =
          mine->literal ? asConstant(mine->value) : std::nullopt;
      if (!c)
        continue;
      unsigned w = it.getWidth();
      int64_t lo = -(int64_t(1) << (w - 1));
      int64_t hi = isUnsigned(other->value) ? (int64_t(1) << w) - 1
                                            : (int64_t(1) << (w - 1)) - 1;
      if (*c >= lo && *c <= hi)
        continue;
      bool fits32 = *c >= INT32_MIN && *c <= INT32_MAX;
      if (w < 32 || !fits32)
        type = fits32 ? builder.getI32Type() : builder.getI64Type();
    }
  }
  bool logical = op == "&&" || op == "||";
  // Bools in arithmetic and comparisons are the ints 0 and 1 (C's
  // promotion): `c < d` of two bools compares 0 and 1, where a signed i1
  // comparison would take true for -1. Bitwise `&`, `|`, `^` of bools give
  // the same 0 or 1 in i1, and stay conditions.
  bool bitwise = op == "&" || op == "|" || op == "^";
  if (!logical && !bitwise && type.isInteger(1))
    type = builder.getI32Type();
  // Floats narrower than 16 bits (f8, f6, f4) compute in f32, as CUDA's
  // __nv_fp8 and CUTLASS's sub-byte float types convert.
  if (auto f = dyn_cast<FloatType>(type); f && f.getWidth() < 16)
    type = builder.getF32Type();
  if (logical)
    type = builder.getI1Type();
  Value a = coerce(lhs->value, type, l), b = coerce(rhs->value, type, l);
  if (logical) {
    a = truthValue(lhs->value, l);
    b = truthValue(rhs->value, l);
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
  // `i - 1`, `i + 2`: a bounded variable shifted by a constant keeps its
  // bound (`x.chunkat(i - 1)` is the previous chunk).
  if ((op == "+" || op == "-") && !isFloat) {
    if (lhs->bound && !rhs->bound && asConstant(rhs->value))
      result.bound = lhs->bound;
    else if (op == "+" && rhs->bound && !lhs->bound && asConstant(lhs->value))
      result.bound = rhs->bound;
  }
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

static bool isMemoryArgument(const Expr &e,
                             llvm::function_ref<Symbol *(StringRef)> lookup);

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
    if (!s && e.name == "inf")
      // Croqtile's infinity (`frag f32[64] m {-inf};`), an f32 literal.
      return EVal{arith::ConstantOp::create(
                      builder, l,
                      builder.getF32FloatAttr(std::numeric_limits<float>::infinity())),
                  Value(), true};
    if (!s)
      return fail(e.loc, "use of undeclared name '" + e.name + "'",
                  "declare it (`int " + e.name + " = ...;`), bind it in a "
                  "parallel, foreach or with, or #define it");
    if (s->kind == Symbol::Kind::Shape)
      return fail(e.loc, "'" + e.name + "' is a shape, not one value",
                  "use " + e.name + "(i) for one element, or |" + e.name +
                      "| for the product of its elements");
    if (s->kind != Symbol::Kind::Scalar)
      return fail(e.loc, "'" + e.name + "' is not a scalar here");
    return EVal{s->value, s->bound};
  }
  case Expr::Kind::List:
  case Expr::Kind::Tuple:
    return fail(e.loc, "a shape is not one value here",
                "take one element with (i), or count them with |...|");
  case Expr::Kind::String:
    return fail(e.loc, "a string literal is only an argument of println, "
                       "print and assert");
  case Expr::Kind::Unary: {
    if (e.name == "++" || e.name == "--")
      return increment(e, /*postfix=*/false);
    if (e.name == "&")
      return fail(e.loc, "the address of an element (`&x.at(i)`) is only an "
                         "argument of a device function call",
                  "pass it to `call f(&x.at(i))`, or read the element");
    FailureOr<EVal> v = expr(*e.args[0]);
    if (failed(v))
      return failure();
    Value x = v->value;
    // A bool negated or complemented is the int 0 or 1 first (C's
    // promotion: -true is -1, ~true is -2).
    if ((e.name == "-" || e.name == "~") && x.getType().isInteger(1))
      x = coerce(x, builder.getI32Type(), l);
    if (e.name == "-") {
      if (isa<FloatType>(x.getType()))
        return EVal{arith::NegFOp::create(builder, l, x), Value(), v->literal};
      Value zero = arith::ConstantOp::create(builder, l, builder.getZeroAttr(x.getType()));
      return EVal{builder.createOrFold<arith::SubIOp>(l, zero, x), Value(), v->literal};
    }
    if (e.name == "!") {
      x = truthValue(x, l);
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
    return increment(e, /*postfix=*/true);
  case Expr::Kind::Binary:
    return binary(e);
  case Expr::Kind::Ternary: {
    if (readsMemory(*e.args[1]) || readsMemory(*e.args[2]))
      return shortCircuit(e);
    FailureOr<EVal> c = expr(*e.args[0]);
    FailureOr<EVal> a = expr(*e.args[1]);
    FailureOr<EVal> b = expr(*e.args[2]);
    if (failed(c) || failed(a) || failed(b))
      return failure();
    FailureOr<Type> armType = ternaryType(e, *a, *b);
    if (failed(armType))
      return failure();
    Type type = *armType;
    Value cond = truthValue(c->value, l);
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
    if (isShapeValued(inner) &&
        !(inner.kind == Expr::Kind::Member && inner.name == "span")) {
      // |s| of an mdspan or ituple: the product of its elements.
      FailureOr<SmallVector<EVal>> elems = shapeOf(inner);
      if (failed(elems))
        return failure();
      Value total = constIndex(1, l);
      for (const EVal &v : *elems)
        total = builder.createOrFold<arith::MulIOp>(l, total, v.value);
      return EVal{total};
    }
    // |t| of a tensor, buffer, view or future: the same as |t.span|.
    bool whole = inner.kind == Expr::Kind::Member && inner.name == "span" &&
                 !inner.hasArgs && inner.base;
    if (!whole && !isMemoryArgument(inner, [&](StringRef n) { return lookup(n); }))
      return fail(e.loc, "|...| counts the elements of a view or a shape: "
                         "write |x| or |x.span|");
    FailureOr<Value> v = view(whole ? *inner.base : inner);
    if (failed(v))
      return failure();
    auto type = cast<MemRefType>(v->getType());
    Value total = constIndex(1, l);
    for (int64_t d = 0; d < type.getRank(); ++d)
      total = builder.createOrFold<arith::MulIOp>(l, total,
                                    builder.createOrFold<memref::DimOp>(l, *v, d));
    return EVal{total};
  }
  case Expr::Kind::Call: {
    if (e.base) {
      // `t(1)(-2)`: the k-th value of the bounded variable `t(1)` stands
      // for, counted from its bound when negative.
      FailureOr<EVal> inner = expr(*e.base);
      if (failed(inner))
        return failure();
      if (!inner->bound || e.args.size() != 1)
        return fail(e.loc, "x(k) takes one value of a bounded variable; this "
                           "is not one");
      return boundedValueAt(*e.args[0], inner->bound, l);
    }
    if (Symbol *s = lookup(e.name); s && s->kind == Symbol::Kind::Shape) {
      // `s(i)`: element i of an mdspan or ituple.
      if (e.args.size() != 1)
        return fail(e.loc, e.name + "(i) takes one element index");
      FailureOr<int64_t> i = constantExpr(*e.args[0]);
      if (failed(i))
        return failure();
      if (*i < 0 || *i >= static_cast<int64_t>(s->elems.size()))
        return fail(e.args[0]->loc, "element " + Twine(*i) + " of '" + e.name +
                                        "', which has " + Twine(s->elems.size()));
      return s->elems[*i];
    }
    if (Symbol *s = lookup(e.name);
        s && s->kind == Symbol::Kind::Scalar && s->bound && e.args.size() == 1) {
      // `i(k)` of a bounded variable: its k-th value, counted from the end
      // when negative (`i(-1)` is #i - 1); the bound stays.
      return boundedValueAt(*e.args[0], s->bound, l);
    }
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
    if (e.name == "__alignup" || e.name == "__aligndown") {
      // The multiple of b at or above (below) a.
      if (e.args.size() != 2)
        return fail(e.loc, e.name + " takes two arguments");
      FailureOr<Value> a = indexExpr(*e.args[0]);
      FailureOr<Value> b = indexExpr(*e.args[1]);
      if (failed(a) || failed(b) ||
          failed(checkDivisor(e.args[1]->loc, *b, e.name)))
        return failure();
      Value q = e.name == "__alignup"
                    ? builder.createOrFold<arith::CeilDivSIOp>(l, *a, *b)
                    : builder.createOrFold<arith::FloorDivSIOp>(l, *a, *b);
      return EVal{builder.createOrFold<arith::MulIOp>(l, q, *b)};
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
      // The named type's signedness, whatever the operand's was.
      return EVal{withSignedness(coerce(a->value, type, l),
                                 isUnsignedName(e.typeArgs.front()), l)};
    }
    if (std::optional<FailureOr<EVal>> math = mathBuiltin(e))
      return *math;
    if (std::optional<FailureOr<EVal>> atomic = atomicBuiltin(e))
      return *atomic;
    return fail(e.loc, "unknown function '" + e.name + "'",
                "__co__ functions cannot call functions; the built-ins are "
                "cdiv, __max, __min, __to<T>, the math functions (__sqrt, "
                "__exp, __sin, ...) and the atomics (__atomic_add, ...)");
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
      return EVal{builder.createOrFold<memref::DimOp>(l, *v, *d)};
    }
    if (e.name == "at" && e.hasArgs && e.base->kind == Expr::Kind::Name)
      if (Symbol *s = lookup(e.base->name); s && s->kind == Symbol::Kind::Frag) {
        if (failed(rejectBlockScaled(*s, e.loc, e.base->name)))
          return failure();
        // An element of a warpgroup accumulator, inside an apply.
        FailureOr<int64_t> r = accRegister(e, *s);
        if (failed(r))
          return failure();
        auto type = cast<FragType>(s->value.getType());
        return EVal{MmaElementOp::create(builder, l, type.getElementType(),
                                         s->value, *r)};
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
    if (e.base && isShapeValued(*e.base) && e.args.size() == 1) {
      // `s[i]`: element i of a shape.
      FailureOr<SmallVector<EVal>> elems = shapeOf(e);
      if (failed(elems))
        return failure();
      return elems->front();
    }
    break;
  case Expr::Kind::DeviceCall:
    return fail(e.loc, "the result of `call` needs a type",
                "declare it (`int r = call f(...);`), assign it to a mutable "
                "scalar, or make the call a statement of its own");
  case Expr::Kind::Range:
    break;
  }
  return fail(e.loc, "this expression is not a scalar");
}

FailureOr<EVal> IRGen::increment(const Expr &e, bool postfix) {
  Location l = loc(e.loc);
  const Expr &target = *e.args[0];
  Symbol *s = target.kind == Expr::Kind::Name ? lookup(target.name) : nullptr;
  if (!s || s->kind != Symbol::Kind::Scalar || !s->isMutable)
    return fail(target.loc, "'" + e.name + "' needs a mutable scalar",
                "declare it as `mutable int x = 0;`");
  Type type = s->value.getType();
  if (type.isInteger(1))
    return fail(e.loc, "'" + e.name + "' of a bool",
                "assign it: `x = true;`");
  if (failed(checkArithmetic(target.loc, type, "'" + e.name + "'")))
    return failure();
  Value old = s->value;
  Value one = coerce(constIndex(1, l), type, l);
  bool up = e.name == "++";
  Value updated =
      isa<FloatType>(type)
          ? (up ? Value(arith::AddFOp::create(builder, l, old, one))
                : Value(arith::SubFOp::create(builder, l, old, one)))
          : (up ? builder.createOrFold<arith::AddIOp>(l, old, one)
                : builder.createOrFold<arith::SubIOp>(l, old, one));
  if (isUnsigned(old))
    unsignedValues.insert(updated);
  s->value = updated;
  // x++ is the value before, ++x the value after.
  return EVal{postfix ? old : updated};
}

/// Whether a call argument stands for memory (passed as a pointer) rather
/// than for a value.
static bool isMemoryArgument(const Expr &e,
                             llvm::function_ref<Symbol *(StringRef)> lookup) {
  switch (e.kind) {
  case Expr::Kind::Name: {
    Symbol *s = lookup(e.name);
    return s && (s->kind == Symbol::Kind::Tensor ||
                 s->kind == Symbol::Kind::Future ||
                 s->kind == Symbol::Kind::Tile ||
                 s->kind == Symbol::Kind::Frag);
  }
  case Expr::Kind::Index:
    return e.base && isMemoryArgument(*e.base, lookup);
  case Expr::Kind::Member:
    if (e.name == "span")
      return false;
    if (e.name == "at")
      // `.at(...)` of a subspan or chunk is a tile; otherwise an element.
      return e.base && e.base->kind == Expr::Kind::Member &&
             (e.base->name == "subspan" || e.base->name == "chunk" ||
              e.base->name == "step");
    return e.base && (e.name == "data" || isMemoryArgument(*e.base, lookup));
  default:
    return false;
  }
}

/// The constant `v` computes, looking through the extents of static
/// dimensions (`memref.dim`) and integer arithmetic on constants.
static std::optional<int64_t> foldedConstant(Value v, int depth = 0) {
  APInt c;
  if (matchPattern(v, m_ConstantInt(&c)))
    return c.getSExtValue();
  Operation *def = v.getDefiningOp();
  if (!def || depth > 16)
    return std::nullopt;
  if (auto dim = dyn_cast<memref::DimOp>(def)) {
    std::optional<int64_t> d = dim.getConstantIndex();
    auto type = dyn_cast<MemRefType>(dim.getSource().getType());
    if (d && type && *d < type.getRank() && !type.isDynamicDim(*d))
      return type.getDimSize(*d);
    return std::nullopt;
  }
  if (isa<arith::IndexCastOp, arith::ExtSIOp, arith::TruncIOp>(def))
    return foldedConstant(def->getOperand(0), depth + 1);
  if (def->getNumOperands() != 2)
    return std::nullopt;
  std::optional<int64_t> a = foldedConstant(def->getOperand(0), depth + 1);
  std::optional<int64_t> b = foldedConstant(def->getOperand(1), depth + 1);
  if (!a || !b)
    return std::nullopt;
  if (isa<arith::AddIOp>(def))
    return *a + *b;
  if (isa<arith::SubIOp>(def))
    return *a - *b;
  if (isa<arith::MulIOp>(def))
    return *a * *b;
  if (isa<arith::DivSIOp>(def) && *b != 0)
    return *a / *b;
  if (isa<arith::RemSIOp>(def) && *b != 0)
    return *a % *b;
  if (isa<arith::CeilDivSIOp>(def) && *b > 0 && *a >= 0)
    return (*a + *b - 1) / *b;
  return std::nullopt;
}

FailureOr<std::string> IRGen::deviceCallee(const Expr &e) {
  // Template arguments that name Croqtile values (`f<buf.span(0), 72>`)
  // are compile-time constants that C++ cannot see: they are evaluated here
  // and passed as numbers; the others stay C++ text.
  bool rewritten = false;
  SmallVector<std::string> args;
  for (auto [text, arg] : llvm::zip_equal(e.templateText, e.templateExprs)) {
    if (!arg || !anyExpr(*arg, [&](const Expr &x) {
          return x.kind == Expr::Kind::Name && lookup(x.name) != nullptr;
        })) {
      args.push_back(text);
      continue;
    }
    FailureOr<EVal> v = extentValue(*arg);
    if (failed(v))
      return failure();
    std::optional<int64_t> c = foldedConstant(v->value);
    // `x.span(i)` of a run-time dimension: the extent as the view's shape
    // arithmetic knows it.
    if (auto dim = v->value.getDefiningOp<memref::DimOp>(); !c && dim)
      if (std::optional<int64_t> d = dim.getConstantIndex())
        c = foldedConstant(viewExtent(dim.getSource(), *d, loc(arg->loc)));
    if (!c)
      return fail(arg->loc, "a template argument of a device function is "
                            "fixed when the device code compiles, but croq "
                            "does not know this value at compile time",
                  "write the constant, or pass the value as an ordinary "
                  "argument");
    args.push_back(std::to_string(*c));
    rewritten = true;
  }
  if (!rewritten)
    return e.name;
  return e.calleeBase + "<" + llvm::join(args, ", ") + ">";
}

FailureOr<EVal> IRGen::deviceCall(const Expr &e, Type result,
                                  bool unsignedResult) {
  FailureOr<std::string> callee = deviceCallee(e);
  if (failed(callee))
    return failure();
  Location l = loc(e.loc);
  SmallVector<Value> args;
  SmallVector<bool> unsignedArgs;
  // Accumulators passed to the call: their registers go through a private
  // buffer, read back after it (the function may change them); one buffer
  // for an accumulator passed twice.
  SmallVector<std::pair<Symbol *, Value>> accumulators;
  for (const ExprPtr &arg : e.args) {
    // `mc[i]` of an array of accumulators.
    std::vector<const Expr *> indices;
    if (const Expr *base = subscriptedName(*arg, indices);
        base && !indices.empty())
      if (Symbol *s = lookup(base->name);
          s && s->kind == Symbol::Kind::FragArray)
        return fail(arg->loc, "an element of an array of accumulators "
                              "cannot be passed to a device function",
                    "pass an element's registers through an accumulator of "
                    "its own");
    // A register tile or an accumulator passes as a pointer to the
    // executing thread's registers of it, in their order (as upstream's
    // `float *` to the thread's fragment array).
    if (Symbol *s = arg->kind == Expr::Kind::Name ? lookup(arg->name) : nullptr;
        s && (s->kind == Symbol::Kind::Tile || s->kind == Symbol::Kind::Frag ||
              s->kind == Symbol::Kind::FragArray)) {
      if (s->kind == Symbol::Kind::FragArray)
        return fail(arg->loc, "'" + arg->name + "' is an array of "
                              "accumulators; a device function takes one",
                    "pass an element's registers through a frag of its own");
      Value registers;
      Type element;
      if (s->kind == Symbol::Kind::Tile) {
        const RegisterTile &tile = tiles[s->tile];
        if (tile.partial)
          return fail(arg->loc, "'" + arg->name + "' holds each thread's "
                                "part of its rows until all_reduce_* "
                                "combines them",
                      "call all_reduce_sum / all_reduce_max on it first");
        registers = tile.registers;
        element = tile.element;
      } else {
        if (s->unshaped)
          return reportUnshaped(*s);
        if (s->scaledSum)
          return fail(arg->loc, "'" + arg->name + "' is a block-scaled "
                                "accumulator, which a device function "
                                "cannot take",
                      "store it with mma.store and pass the buffer");
        auto frag = cast<FragType>(s->value.getType());
        element = frag.getElementType();
        if (auto same = llvm::find_if(
                accumulators, [&](const auto &a) { return a.first == s; });
            same != accumulators.end()) {
          args.push_back(same->second);
          unsignedArgs.push_back(false);
          continue;
        }
        auto type = MemRefType::get(
            {frag.getRegisterCount()}, element, MemRefLayoutAttrInterface(),
            gpu::AddressSpaceAttr::get(context, gpu::AddressSpace::Private));
        registers = registerBuffer(type, l, ParallelOp());
        for (int64_t r = 0; r < frag.getRegisterCount(); ++r)
          memref::StoreOp::create(
              builder, l, MmaElementOp::create(builder, l, element, s->value, r),
              registers, ValueRange{constIndex(r, l)});
        accumulators.push_back({s, registers});
      }
      if (getDeviceCallTypeName(element, false).empty())
        return fail(arg->loc, "a device function cannot take " +
                                  typeString(element) + " elements");
      args.push_back(registers);
      unsignedArgs.push_back(false);
      continue;
    }
    // Memory passes as a pointer to its first element: a tensor, buffer or
    // view, or `&x.at(i, j)`, the one-element view at that element.
    bool address = arg->kind == Expr::Kind::Unary && arg->name == "&";
    if (address || isMemoryArgument(*arg, [&](StringRef n) { return lookup(n); })) {
      FailureOr<Value> v = address ? elementAddress(*arg) : view(*arg);
      if (failed(v))
        return failure();
      auto type = cast<MemRefType>(v->getType());
      if (getDeviceCallTypeName(type.getElementType(), false).empty())
        return fail(arg->loc, Twine("a device function cannot take ") +
                                  (address ? "a pointer to " : "") +
                                  typeString(type.getElementType()) +
                                  " elements");
      if (!address && !isContiguous(type))
        emitWarning(loc(arg->loc))
            << "this view is not known to be contiguous (" << type
            << "): the device function gets only the address of its first "
               "element, and must know the strides itself";
      args.push_back(*v);
      unsignedArgs.push_back(unsignedTensors.contains(rootTensor(*v)));
      continue;
    }
    FailureOr<EVal> v = expr(*arg);
    if (failed(v))
      return failure();
    Value value = v->value;
    unsignedArgs.push_back(isUnsigned(value));
    // Croqtile's `int` is C++'s.
    if (value.getType().isIndex())
      value = coerce(value, builder.getI32Type(), l);
    if (getDeviceCallTypeName(value.getType(), true).empty())
      return fail(arg->loc, "a device function cannot take a " +
                                typeString(value.getType()) + " by value");
    args.push_back(value);
  }
  Type callResult = result && result.isIndex() ? builder.getI32Type() : result;
  if (callResult && getDeviceCallTypeName(callResult, true).empty())
    return fail(e.loc, "a device function cannot return " +
                           typeString(callResult));
  auto call = CallOp::create(
      builder, l, callResult ? TypeRange(callResult) : TypeRange(),
      builder.getStringAttr(*callee), args,
      llvm::is_contained(unsignedArgs, true)
          ? builder.getDenseBoolArrayAttr(unsignedArgs)
          : DenseBoolArrayAttr(),
      unsignedResult && callResult && isa<IntegerType>(callResult));
  for (auto [s, registers] : accumulators)
    s->value = loadRegisters(
        s->value, registers,
        cast<FragType>(s->value.getType()).getRegisterCount(), l);
  if (!result)
    return EVal{};
  Value value = call.getResult();
  if (unsignedResult)
    unsignedValues.insert(value);
  if (result != callResult)
    value = coerce(value, result, l);
  if (unsignedResult)
    unsignedValues.insert(value);
  return EVal{value};
}

FailureOr<std::pair<Value, SmallVector<Value>>>
IRGen::element(const Expr &at) {
  if (at.base->kind == Expr::Kind::Name)
    if (Symbol *s = lookup(at.base->name); s && s->kind == Symbol::Kind::Tile)
      return tileElement(at, *s);
  if (at.base->kind == Expr::Kind::Name)
    if (Symbol *s = lookup(at.base->name); s && s->kind == Symbol::Kind::Future)
      return fail(at.base->loc, "'" + at.base->name +
                                    "' is a future, not a tensor",
                  "read the copied data as " + at.base->name + ".data.at(...)");
  // `x.subspan(4, 4).at(1, 2)` is the tile at tile indices (1, 2) in a
  // copy; read as an element it would be another place. Say which.
  if (at.base->kind == Expr::Kind::Member &&
      (at.base->name == "subspan" || at.base->name == "modspan" ||
       at.base->name == "step" || at.base->name == "chunk"))
    return fail(at.loc, "`" + at.base->name + "(...).at(...)` selects a "
                            "tile by its tile indices, not an element",
                "read an element of the tile with a second .at: "
                "x.subspan(...).at(tile...).at(i, j)");
  FailureOr<Value> buffer = view(*at.base);
  if (failed(buffer))
    return failure();
  FailureOr<SmallVector<ViewArg>> args = viewArgs(at.args);
  if (failed(args))
    return failure();
  SmallVector<Value> indices;
  for (const ViewArg &arg : *args) {
    FailureOr<Value> i = argIndex(arg);
    if (failed(i))
      return failure();
    indices.push_back(*i);
  }
  auto type = cast<MemRefType>(buffer->getType());
  if (static_cast<int64_t>(indices.size()) != type.getRank())
    return fail(at.loc, ".at takes " + Twine(type.getRank()) +
                            " indices here, got " + Twine(indices.size()));
  for (auto [d, index] : llvm::enumerate(indices))
    if (failed(checkIndex((*args)[d].expr->loc, index, type.getDimSize(d),
                          "element index " + Twine(d))))
      return failure();
  return std::make_pair(*buffer, std::move(indices));
}

FailureOr<Value> IRGen::elementAddress(const Expr &e) {
  const Expr &target = *e.args[0];
  auto lookupName = [&](StringRef n) { return lookup(n); };
  bool registers = false;
  if (target.kind == Expr::Kind::Name ||
      (target.kind == Expr::Kind::Member && target.base &&
       target.base->kind == Expr::Kind::Name))
    if (Symbol *s = lookup(target.kind == Expr::Kind::Name ? target.name
                                                           : target.base->name))
      registers = s->kind == Symbol::Kind::Tile || s->kind == Symbol::Kind::Frag;
  if (registers)
    return fail(target.loc, "this is held in registers, which have no "
                            "address",
                "copy it into a local buffer (`local f32 [..] b;`) and pass "
                "`&b.at(i)`");
  // `&t` of a tensor or view: its first element, as `t` itself passes.
  if (isMemoryArgument(target, lookupName))
    return view(target);
  if (target.kind != Expr::Kind::Member || target.name != "at" ||
      !target.hasArgs || !target.base)
    return fail(e.loc, "& takes the address of a tensor element, "
                       "`&x.at(i, ...)`");
  FailureOr<std::pair<Value, SmallVector<Value>>> at = element(target);
  if (failed(at))
    return failure();
  Location l = loc(e.loc);
  auto [buffer, indices] = *at;
  int64_t rank = cast<MemRefType>(buffer.getType()).getRank();
  SmallVector<OpFoldResult> offsets = getAsOpFoldResult(ValueRange(indices));
  SmallVector<OpFoldResult> ones(rank, builder.getIndexAttr(1));
  return memref::SubViewOp::create(builder, l, buffer, offsets, ones, ones)
      .getResult();
}

std::optional<FailureOr<EVal>> IRGen::mathBuiltin(const Expr &e) {
  // Croqtile's math built-ins on floats, as math dialect ops (lowered to
  // libdevice or PTX instructions); `__abs` also takes integers.
  using Unary = Value (*)(OpBuilder &, Location, Value);
  using Binary = Value (*)(OpBuilder &, Location, Value, Value);
#define CROQ_UNARY(OP) [](OpBuilder &b, Location l, Value x) -> Value { return OP::create(b, l, x); }
#define CROQ_BINARY(OP) [](OpBuilder &b, Location l, Value x, Value y) -> Value { return OP::create(b, l, x, y); }
  static const llvm::StringMap<Unary> unary = {
      {"__sqrt", CROQ_UNARY(math::SqrtOp)},   {"__rsqrt", CROQ_UNARY(math::RsqrtOp)},
      {"__exp", CROQ_UNARY(math::ExpOp)},     {"__exp2", CROQ_UNARY(math::Exp2Op)},
      {"__expm1", CROQ_UNARY(math::ExpM1Op)}, {"__log", CROQ_UNARY(math::LogOp)},
      {"__log2", CROQ_UNARY(math::Log2Op)},   {"__log10", CROQ_UNARY(math::Log10Op)},
      {"__log1p", CROQ_UNARY(math::Log1pOp)}, {"__sin", CROQ_UNARY(math::SinOp)},
      {"__cos", CROQ_UNARY(math::CosOp)},     {"__tan", CROQ_UNARY(math::TanOp)},
      {"__asin", CROQ_UNARY(math::AsinOp)},   {"__acos", CROQ_UNARY(math::AcosOp)},
      {"__atan", CROQ_UNARY(math::AtanOp)},   {"__sinh", CROQ_UNARY(math::SinhOp)},
      {"__cosh", CROQ_UNARY(math::CoshOp)},   {"__tanh", CROQ_UNARY(math::TanhOp)},
      {"__erf", CROQ_UNARY(math::ErfOp)},     {"__floor", CROQ_UNARY(math::FloorOp)},
      {"__ceil", CROQ_UNARY(math::CeilOp)},   {"__round", CROQ_UNARY(math::RoundOp)},
      {"__fabs", CROQ_UNARY(math::AbsFOp)},
      // Toward zero: floor of x >= 0, ceil of x < 0 (both libdevice's; the
      // NVVM conversion has no math.trunc). NaN and -0.0 pass through floor.
      {"__trunc",
       [](OpBuilder &b, Location l, Value x) -> Value {
         Value zero = arith::ConstantOp::create(b, l, b.getZeroAttr(x.getType()));
         Value negative = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLT, x, zero);
         return arith::SelectOp::create(b, l, negative, math::CeilOp::create(b, l, x),
                                        math::FloorOp::create(b, l, x));
       }},
  };
  static const llvm::StringMap<Binary> binary = {
      {"__pow", CROQ_BINARY(math::PowFOp)},
      {"__atan2", CROQ_BINARY(math::Atan2Op)},
  };
#undef CROQ_UNARY
#undef CROQ_BINARY
  // CUDA's float spellings are the same functions: __expf, __exp2f, ...
  StringRef name = e.name;
  if (name.size() > 3 && name.ends_with("f") && !unary.count(name) &&
      !binary.count(name) &&
      (unary.count(name.drop_back()) || binary.count(name.drop_back())))
    name = name.drop_back();
  bool isAbs = name == "__abs";
  bool isFma = name == "__fma" || name == "__fmaf";
  bool isRcp = name == "__frcp_rn" || name == "__frcp";
  // Upstream's activation built-ins (its runtime's numerics::), computed
  // in f32 (f64 for f64) and returned in the argument's type.
  bool isComposite = name == "__sigmoid" || name == "__gelu" ||
                     name == "__softplus" || name == "__sign" ||
                     name == "__isfinite";
  auto u = unary.find(name);
  auto bi = binary.find(name);
  if (!isAbs && !isFma && !isRcp && !isComposite && u == unary.end() &&
      bi == binary.end())
    return std::nullopt;
  size_t arity = isFma ? 3 : bi != binary.end() ? 2 : 1;
  if (e.args.size() != arity)
    return FailureOr<EVal>(fail(e.loc, e.name + " takes " + Twine(arity) +
                                           (arity == 1 ? " argument" : " arguments")));
  Location l = loc(e.loc);
  SmallVector<Value> args;
  for (const ExprPtr &arg : e.args) {
    FailureOr<EVal> v = expr(*arg);
    if (failed(v))
      return FailureOr<EVal>(failure());
    args.push_back(v->value);
  }
  Type first = args[0].getType();
  if (isAbs && first.isIntOrIndex() && !first.isInteger(1)) {
    // |x| of an integer: x < 0 ? -x : x (of any width, index included); an
    // unsigned value is its own magnitude.
    Value x = args[0];
    if (isUnsigned(x))
      return FailureOr<EVal>(EVal{x});
    Value zero = arith::ConstantOp::create(builder, l, builder.getZeroAttr(first));
    Value negative = builder.createOrFold<arith::CmpIOp>(l, arith::CmpIPredicate::slt, x, zero);
    Value negated = builder.createOrFold<arith::SubIOp>(l, zero, x);
    return FailureOr<EVal>(EVal{builder.createOrFold<arith::SelectOp>(l, negative, negated, x)});
  }
  // The widest float argument sets the type; integers alone compute in f32,
  // as C's float overloads would.
  Type type;
  for (Value v : args)
    if (auto f = dyn_cast<FloatType>(v.getType());
        f && (!type || f.getWidth() > type.getIntOrFloatBitWidth()))
      type = f;
  // Floats narrower than 16 bits compute in f32 here too.
  if (!type || type.getIntOrFloatBitWidth() < 16)
    type = builder.getF32Type();
  for (Value &v : args)
    v = coerce(v, type, l);
  if (isAbs)
    return FailureOr<EVal>(EVal{math::AbsFOp::create(builder, l, args[0])});
  if (isFma)
    return FailureOr<EVal>(EVal{math::FmaOp::create(builder, l, args[0], args[1], args[2])});
  if (isRcp) {
    Value one = arith::ConstantOp::create(builder, l, builder.getFloatAttr(type, 1.0));
    return FailureOr<EVal>(EVal{arith::DivFOp::create(builder, l, one, args[0])});
  }
  if (isComposite)
    return FailureOr<EVal>(EVal{activation(name, args[0], l)});
  if (u != unary.end())
    return FailureOr<EVal>(EVal{u->second(builder, l, args[0])});
  return FailureOr<EVal>(EVal{bi->second(builder, l, args[0], args[1])});
}

Value IRGen::activation(StringRef name, Value x, Location l) {
  Type type = x.getType();
  Type math = type.getIntOrFloatBitWidth() < 32 ? builder.getF32Type() : type;
  x = coerce(x, math, l);
  auto c = [&](double v) -> Value {
    return arith::ConstantOp::create(builder, l, builder.getFloatAttr(math, v));
  };
  Value y;
  if (name == "__sigmoid") {
    // 1 / (1 + exp(-x))
    Value e = math::ExpOp::create(builder, l, arith::NegFOp::create(builder, l, x));
    y = arith::DivFOp::create(builder, l, c(1.0),
                              arith::AddFOp::create(builder, l, c(1.0), e));
  } else if (name == "__softplus") {
    // log(1 + exp(x))
    y = math::Log1pOp::create(builder, l, math::ExpOp::create(builder, l, x));
  } else if (name == "__gelu") {
    // The tanh form: x / 2 * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3))).
    Value x3 = arith::MulFOp::create(
        builder, l, x, arith::MulFOp::create(builder, l, x, x));
    Value inner = arith::AddFOp::create(
        builder, l, x, arith::MulFOp::create(builder, l, c(0.044715), x3));
    Value t = math::TanhOp::create(
        builder, l,
        arith::MulFOp::create(builder, l, c(0.7978845608028654), inner));
    y = arith::MulFOp::create(
        builder, l, arith::MulFOp::create(builder, l, x, c(0.5)),
        arith::AddFOp::create(builder, l, c(1.0), t));
  } else if (name == "__sign") {
    // (x > 0) - (x < 0): 0 for zeros and NaN.
    Value positive = arith::CmpFOp::create(builder, l, arith::CmpFPredicate::OGT, x, c(0.0));
    Value negative = arith::CmpFOp::create(builder, l, arith::CmpFPredicate::OLT, x, c(0.0));
    y = arith::SelectOp::create(
        builder, l, positive, c(1.0),
        arith::SelectOp::create(builder, l, negative, c(-1.0), c(0.0)));
  } else {
    // __isfinite: 1 where |x| < inf (false for NaN), else 0.
    Value finite = arith::CmpFOp::create(
        builder, l, arith::CmpFPredicate::OLT,
        math::AbsFOp::create(builder, l, x),
        c(std::numeric_limits<double>::infinity()));
    y = arith::SelectOp::create(builder, l, finite, c(1.0), c(0.0));
  }
  return coerce(y, type, l);
}

std::optional<FailureOr<EVal>> IRGen::atomicBuiltin(const Expr &e) {
  // `__atomic_OP(x.at(i...), v)`: one read-modify-write of the element, as
  // CUDA's atomicOP; the value is the element's old value.
  // `__atomic_cas(x.at(i...), expected, desired)` writes `desired` where the
  // element equals `expected`.
  if (!isAtomicBuiltin(e.name))
    return std::nullopt;
  auto failed_ = [](LogicalResult) { return FailureOr<EVal>(failure()); };
  // Sema checked its arguments' form and that it runs in a thread-level
  // parallel's body.
  bool cas = e.name == "__atomic_cas";
  const Expr &target = *e.args[0];
  if (applyPoint && applyPoint->layout == TileLayout::WgmmaRows)
    return failed_(fail(e.loc, e.name + " in an apply over a frag of rows: "
                               "each row is held by the four threads of a "
                               "quad, which would all run it"));
  auto access = element(target);
  if (failed(access))
    return FailureOr<EVal>(failure());
  auto [buffer, indices] = *access;
  auto type = cast<MemRefType>(buffer.getType());
  Type elem = type.getElementType();
  auto space = dyn_cast_or_null<gpu::AddressSpaceAttr>(type.getMemorySpace());
  if (space && space.getValue() == gpu::AddressSpace::Private)
    return failed_(fail(target.loc, e.name + " on a local buffer: atomics "
                                    "update shared or global memory"));
  bool isFloat = isa<FloatType>(elem);
  if (!(elem.isInteger(32) || elem.isInteger(64) || elem.isF32() ||
        elem.isF64() || elem.isF16() || elem.isBF16()))
    return failed_(fail(target.loc, e.name + " on " + typeString(elem) +
                                        " elements: atomics take 32- or "
                                        "64-bit integers, f16, bf16, f32 or "
                                        "f64"));
  bool bitwise = e.name == "__atomic_and" || e.name == "__atomic_or" ||
                 e.name == "__atomic_xor";
  if (isFloat && (bitwise || cas))
    return failed_(fail(e.loc, e.name + " takes integer elements, not " +
                                   typeString(elem)));
  Location l = loc(e.loc);
  SmallVector<Value> operands;
  for (size_t i = 1; i < e.args.size(); ++i) {
    FailureOr<EVal> v = expr(*e.args[i]);
    if (failed(v))
      return FailureOr<EVal>(failure());
    operands.push_back(coerce(v->value, elem, l));
  }
  bool isUnsignedElem = unsignedTensors.contains(rootTensor(buffer));
  Value old;
  if (cas) {
    auto rmw = memref::GenericAtomicRMWOp::create(builder, l, buffer, indices);
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(rmw.getBody());
    Value current = rmw.getCurrentValue();
    Value equal = arith::CmpIOp::create(builder, l, arith::CmpIPredicate::eq,
                                        current, operands[0]);
    Value next = arith::SelectOp::create(builder, l, equal, operands[1], current);
    memref::AtomicYieldOp::create(builder, l, next);
    old = rmw.getResult();
  } else {
    using K = arith::AtomicRMWKind;
    Value v = operands[0];
    K kind;
    if (e.name == "__atomic_add" || e.name == "__atomic_sub") {
      kind = isFloat ? K::addf : K::addi;
      if (e.name == "__atomic_sub")
        v = isFloat ? Value(arith::NegFOp::create(builder, l, v))
                    : Value(arith::SubIOp::create(
                          builder, l,
                          arith::ConstantOp::create(builder, l, builder.getZeroAttr(elem)),
                          v));
    } else if (e.name == "__atomic_exch") {
      kind = K::assign;
    } else if (e.name == "__atomic_min") {
      kind = isFloat ? K::minnumf : isUnsignedElem ? K::minu : K::mins;
    } else if (e.name == "__atomic_max") {
      kind = isFloat ? K::maxnumf : isUnsignedElem ? K::maxu : K::maxs;
    } else if (e.name == "__atomic_and") {
      kind = K::andi;
    } else if (e.name == "__atomic_or") {
      kind = K::ori;
    } else {
      kind = K::xori;
    }
    old = memref::AtomicRMWOp::create(builder, l, kind, v, buffer, indices);
  }
  if (isUnsignedElem)
    unsignedValues.insert(old);
  return FailureOr<EVal>(EVal{old});
}
