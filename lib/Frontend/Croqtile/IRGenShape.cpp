//===- IRGenShape.cpp - Croqtile mdspans and ituples to IR -----------------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//
//
// An mdspan (`[M, N]`, `x.span`, `s : [..]`) or ituple (`{a, b}`) is a
// compile-time list of index values; it has no IR of its own. Where a list
// of extents or indices is expected (a tensor's dimensions, parallel and
// foreach bounds, view arguments), a shape-valued entry stands for all of
// its elements.
//
//===----------------------------------------------------------------------===//

#include "IRGenImpl.h"

using namespace mlir;
using namespace mlir::croq;
using namespace mlir::croq::croqtile;

bool IRGen::isShapeValued(const Expr &e) {
  return croqtile::isShapeValued(
      e,
      [&](StringRef name) {
        Symbol *s = lookup(name);
        return s && s->kind == Symbol::Kind::Shape;
      },
      [&](const Expr &x) { return isTensorPick(x); });
}

bool IRGen::isTensorPick(const Expr &e) {
  if (e.kind != Expr::Kind::Index || !e.base ||
      e.base->kind != Expr::Kind::Name || e.args.empty() ||
      !llvm::all_of(e.args,
                    [](const ExprPtr &arg) {
                      return arg->parenthesized &&
                             arg->kind == Expr::Kind::Int;
                    }))
    return false;
  // One pick per dimension: fewer select a buffer of an array of buffers
  // (`bufs[(1)]`, as a macro `(1)` may write it).
  Symbol *s = lookup(e.base->name);
  auto type = s && s->kind == Symbol::Kind::Tensor
                  ? dyn_cast<MemRefType>(s->value.getType())
                  : MemRefType();
  return type && type.getRank() == static_cast<int64_t>(e.args.size());
}

FailureOr<SmallVector<EVal>> IRGen::spliceList(ArrayRef<ExprPtr> args) {
  SmallVector<EVal> out;
  for (const ExprPtr &arg : args) {
    if (isShapeValued(*arg)) {
      FailureOr<SmallVector<EVal>> elems = shapeOf(*arg);
      if (failed(elems))
        return failure();
      out.append(elems->begin(), elems->end());
      continue;
    }
    FailureOr<EVal> v = extentValue(*arg);
    if (failed(v))
      return failure();
    out.push_back(*v);
  }
  return out;
}

FailureOr<EVal> IRGen::extentValue(const Expr &e) {
  FailureOr<EVal> v = expr(e);
  if (failed(v))
    return failure();
  if (!v->value.getType().isIntOrIndex() || v->value.getType().isInteger(1))
    return fail(e.loc, "an extent or index must be an integer");
  return EVal{coerce(v->value, builder.getIndexType(), loc(e.loc)), v->bound,
              v->literal};
}

FailureOr<SmallVector<EVal>> IRGen::viewShape(const Expr &e) {
  FailureOr<Value> v = view(e);
  if (failed(v))
    return failure();
  Location l = loc(e.loc);
  auto type = cast<MemRefType>(v->getType());
  SmallVector<EVal> out;
  for (int64_t d = 0; d < type.getRank(); ++d)
    out.push_back(EVal{type.isDynamicDim(d) ? viewExtent(*v, d, l)
                                            : constIndex(type.getDimSize(d), l)});
  return out;
}

FailureOr<SmallVector<EVal>> IRGen::shapeArithmetic(StringRef op,
                                                     const Expr &lhsExpr,
                                                     const Expr &rhsExpr,
                                                     SMLoc at) {
  // Element-wise; a scalar operand applies to every element.
  Location l = loc(at);
  auto operand = [&](const Expr &x) -> FailureOr<SmallVector<EVal>> {
    if (isShapeValued(x))
      return shapeOf(x);
    FailureOr<Value> v = indexExpr(x);
    if (failed(v))
      return failure();
    return SmallVector<EVal>{EVal{*v}};
  };
  FailureOr<SmallVector<EVal>> lhs = operand(lhsExpr), rhs = operand(rhsExpr);
  if (failed(lhs) || failed(rhs))
    return failure();
  bool lhsShape = isShapeValued(lhsExpr), rhsShape = isShapeValued(rhsExpr);
  size_t n = lhsShape ? lhs->size() : rhs->size();
  if (lhsShape && rhsShape && lhs->size() != rhs->size())
    return fail(at, "'" + op + "' of shapes of rank " + Twine(lhs->size()) +
                        " and " + Twine(rhs->size()),
                "both sides need the same number of elements");
  SmallVector<EVal> out;
  for (size_t i = 0; i < n; ++i) {
    Value a = (*lhs)[lhsShape ? i : 0].value, b = (*rhs)[rhsShape ? i : 0].value;
    Value r;
    if (op == "+")
      r = builder.createOrFold<arith::AddIOp>(l, a, b);
    else if (op == "-")
      r = builder.createOrFold<arith::SubIOp>(l, a, b);
    else if (op == "*")
      r = builder.createOrFold<arith::MulIOp>(l, a, b);
    else {
      if (failed(checkDivisor(at, b, op)))
        return failure();
      r = op == "/"   ? builder.createOrFold<arith::DivSIOp>(l, a, b)
          : op == "%" ? builder.createOrFold<arith::RemSIOp>(l, a, b)
                      : builder.createOrFold<arith::CeilDivSIOp>(l, a, b);
    }
    out.push_back(EVal{r});
  }
  return out;
}

FailureOr<SmallVector<EVal>> IRGen::shapeOf(const Expr &e) {
  switch (e.kind) {
  case Expr::Kind::List:
  case Expr::Kind::Tuple:
    return spliceList(e.args);
  case Expr::Kind::Name: {
    Symbol *s = lookup(e.name);
    if (!s || s->kind != Symbol::Kind::Shape)
      return fail(e.loc, "'" + e.name + "' is not an mdspan or ituple");
    return s->elems;
  }
  case Expr::Kind::Member:
    return viewShape(*e.base);
  case Expr::Kind::Binary:
    return shapeArithmetic(e.name, *e.args[0], *e.args[1], e.loc);
  case Expr::Kind::Call:
    // isShapeValued admits only cdiv here.
    return shapeArithmetic("cdiv", *e.args[0], *e.args[1], e.loc);
  case Expr::Kind::Index: {
    // `x.span[(2), (0)]`: the elements at these positions, in this order;
    // `t[(1), (0)]` of a tensor `t` is `t.span[(1), (0)]`. In a list that
    // picks some elements in parentheses, a bare value is an extent of its
    // own (`x.span[1, (0)]`); without any, bare values pick (`s[0]`).
    FailureOr<SmallVector<EVal>> base =
        isTensorPick(e) ? viewShape(*e.base) : shapeOf(*e.base);
    if (failed(base))
      return failure();
    bool mixed = llvm::any_of(
        e.args, [](const ExprPtr &arg) { return arg->parenthesized; });
    SmallVector<EVal> out;
    for (const ExprPtr &arg : e.args) {
      if (mixed && !arg->parenthesized) {
        FailureOr<EVal> v = extentValue(*arg);
        if (failed(v))
          return failure();
        out.push_back(*v);
        continue;
      }
      FailureOr<int64_t> i = constantExpr(*arg);
      if (failed(i))
        return failure();
      if (*i < 0 || *i >= static_cast<int64_t>(base->size()))
        return fail(arg->loc, "element " + Twine(*i) + " of a shape of rank " +
                                  Twine(base->size()));
      out.push_back((*base)[*i]);
    }
    return out;
  }
  default:
    return fail(e.loc, "expected a shape: [a, b], {a, b}, x.span or an mdspan name");
  }
}

FailureOr<SmallVector<ViewArg>> IRGen::viewArgs(ArrayRef<ExprPtr> args) {
  SmallVector<ViewArg> out;
  for (const ExprPtr &arg : args) {
    if (!isShapeValued(*arg)) {
      out.push_back(ViewArg{arg.get(), std::nullopt});
      continue;
    }
    FailureOr<SmallVector<EVal>> elems = shapeOf(*arg);
    if (failed(elems))
      return failure();
    for (const EVal &v : *elems)
      out.push_back(ViewArg{arg.get(), v});
  }
  return out;
}

FailureOr<EVal> IRGen::argValue(const ViewArg &arg) {
  if (arg.value)
    return *arg.value;
  return expr(*arg.expr);
}

FailureOr<Value> IRGen::argIndex(const ViewArg &arg) {
  if (arg.value)
    return arg.value->value;
  return indexExpr(*arg.expr);
}

LogicalResult IRGen::shapeDecl(const Stmt &stmt) {
  if (!isShapeValued(*stmt.value))
    return fail(stmt.value->loc, "'" + stmt.name + "' is declared as a shape, "
                                 "but this is one value",
                "write [a, b], {a, b} or x.span");
  FailureOr<SmallVector<EVal>> elems = shapeOf(*stmt.value);
  if (failed(elems))
    return failure();
  if (stmt.rank && static_cast<int64_t>(elems->size()) != *stmt.rank)
    return fail(stmt.value->loc, "'" + stmt.name + "' is declared of rank " +
                                     Twine(*stmt.rank) + " but has " +
                                     Twine(elems->size()) + " elements");
  Symbol s{Symbol::Kind::Shape, Value()};
  s.elems = std::move(*elems);
  return declareNew(stmt.name, stmt.nameLoc, s);
}
