//===- AST.cpp - utilities over the Croqtile syntax tree -------------------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#include "AST.h"

#include "llvm/Support/MathExtras.h"

std::optional<int64_t> mlir::croq::croqtile::foldConstant(const Expr &e) {
  if (e.kind == Expr::Kind::Int)
    return e.intValue;
  if (e.kind == Expr::Kind::Unary && e.name == "-")
    if (std::optional<int64_t> v = foldConstant(*e.args[0]))
      return -*v;
  if (e.kind != Expr::Kind::Binary)
    return std::nullopt;
  std::optional<int64_t> a = foldConstant(*e.args[0]),
                         b = foldConstant(*e.args[1]);
  if (!a || !b)
    return std::nullopt;
  int64_t r;
  if (e.name == "+" && !llvm::AddOverflow(*a, *b, r))
    return r;
  if (e.name == "-" && !llvm::SubOverflow(*a, *b, r))
    return r;
  if (e.name == "*" && !llvm::MulOverflow(*a, *b, r))
    return r;
  // INT64_MIN / -1 overflows.
  bool divisible = *b != 0 && !(*a == INT64_MIN && *b == -1);
  if (e.name == "/" && divisible)
    return *a / *b;
  if (e.name == "%" && divisible)
    return *a % *b;
  return std::nullopt;
}
