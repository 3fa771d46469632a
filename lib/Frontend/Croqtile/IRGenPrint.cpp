//===- IRGenPrint.cpp - Croqtile print, println and assert to IR ----------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//
//
// `print(a, "b", c)` / `println(...)` concatenate their arguments, as
// gpu.printf with a format built here; the same op prints from host code
// (the host emitter writes printf) and from kernels (vprintf). `print!` /
// `println!` print at compile time, as remarks, and need constants.
// `assert(c, "m")` is checked at compile time when c is a constant, else it
// is a cf.assert: a host check before any launch, or __assertfail in a
// kernel.
//
//===----------------------------------------------------------------------===//

#include "IRGenImpl.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

using namespace mlir;
using namespace mlir::croq;
using namespace mlir::croq::croqtile;

/// `text` as a printf format: `%` doubled.
static std::string formatLiteral(StringRef text) {
  std::string out;
  for (char c : text) {
    if (c == '%')
      out += '%';
    out += c;
  }
  return out;
}

LogicalResult IRGen::appendPrinted(const Expr &e, std::string &format,
                                   SmallVectorImpl<Value> &args) {
  Location l = loc(e.loc);
  if (e.kind == Expr::Kind::String) {
    format += formatLiteral(e.name);
    return success();
  }
  if (isShapeValued(e)) {
    FailureOr<SmallVector<EVal>> elems = shapeOf(e);
    if (failed(elems))
      return failure();
    format += "[";
    for (auto [i, v] : llvm::enumerate(*elems)) {
      format += i ? ", %lld" : "%lld";
      args.push_back(coerce(v.value, builder.getI64Type(), l));
    }
    format += "]";
    return success();
  }
  FailureOr<EVal> v = expr(e);
  if (failed(v))
    return failure();
  Value x = v->value;
  Type type = x.getType();
  if (isa<FloatType>(type)) {
    if (failed(checkArithmetic(e.loc, type, "printing")))
      return failure();
    format += "%f";
    args.push_back(coerce(x, builder.getF64Type(), l));
    return success();
  }
  if (type.isInteger(1)) {
    format += "%d";
    args.push_back(arith::ExtUIOp::create(builder, l, builder.getI32Type(), x));
    return success();
  }
  if (type.isIndex() || type.getIntOrFloatBitWidth() > 32) {
    format += isUnsigned(x) ? "%llu" : "%lld";
    args.push_back(coerce(x, builder.getI64Type(), l));
    return success();
  }
  format += isUnsigned(x) ? "%u" : "%d";
  args.push_back(coerce(x, builder.getI32Type(), l));
  return success();
}

LogicalResult IRGen::print(const Stmt &stmt) {
  Location l = loc(stmt.loc);
  std::string format;
  SmallVector<Value> args;
  if (!stmt.isStatic) {
    for (const ExprPtr &operand : stmt.operands)
      if (failed(appendPrinted(*operand, format, args)))
        return failure();
    if (stmt.newline)
      format += "\n";
    gpu::PrintfOp::create(builder, l, builder.getStringAttr(format), args);
    return success();
  }
  // print!: every value is known now.
  std::string text;
  llvm::raw_string_ostream os(text);
  auto constant = [&](Value v, SMLoc at) -> LogicalResult {
    APInt ci;
    APFloat cf(0.0);
    if (matchPattern(v, m_ConstantInt(&ci))) {
      if (v.getType().isInteger(1) || isUnsigned(v))
        os << ci.getZExtValue();
      else
        os << ci.getSExtValue();
    }
    else if (matchPattern(v, m_ConstantFloat(&cf)))
      os << cf.convertToDouble();
    else
      return fail(at, (stmt.newline ? "println!" : "print!") +
                          Twine(" prints at compile time, but this is only "
                                "known at run time"),
                  "use print/println (without !) to print at run time");
    return success();
  };
  for (const ExprPtr &operand : stmt.operands) {
    if (operand->kind == Expr::Kind::String) {
      os << operand->name;
    } else if (isShapeValued(*operand)) {
      FailureOr<SmallVector<EVal>> elems = shapeOf(*operand);
      if (failed(elems))
        return failure();
      os << "[";
      for (auto [i, v] : llvm::enumerate(*elems)) {
        if (i)
          os << ", ";
        if (failed(constant(v.value, operand->loc)))
          return failure();
      }
      os << "]";
    } else {
      FailureOr<EVal> v = expr(*operand);
      if (failed(v) || failed(constant(v->value, operand->loc)))
        return failure();
    }
  }
  emitRemark(l) << text;
  return success();
}

LogicalResult IRGen::assertStmt(const Stmt &stmt) {
  Location l = loc(stmt.loc);
  FailureOr<EVal> v = expr(*stmt.value);
  if (failed(v))
    return failure();
  Value cond = truthValue(v->value, l);
  std::string message = stmt.source
                            ? stmt.source->name
                            : "assertion failed at line " +
                                  std::to_string(sourceMgr.getLineAndColumn(stmt.loc).first);
  if (std::optional<int64_t> c = asConstant(cond)) {
    if (*c)
      return success();
    return fail(stmt.loc, "assertion failed: " + message);
  }
  cf::AssertOp::create(builder, l, cond, message);
  return success();
}
