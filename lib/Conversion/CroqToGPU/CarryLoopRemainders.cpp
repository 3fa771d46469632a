//===- CarryLoopRemainders.cpp - `k % S` as a loop-carried value ----------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//
//
// A ring's slot `k % S` and phase `(k / S) % 2` divide the loop counter by
// a constant in every step. For S a power of two LLVM makes that a mask and
// a shift; otherwise a 64-bit multiply-high. This pass carries the
// remainder and the quotient through the loop instead (see Passes.td).
//
//===----------------------------------------------------------------------===//

#include "Croq/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::croq {
#define GEN_PASS_DEF_CROQCARRYLOOPREMAINDERSPASS
#include "Croq/Conversion/Passes.h.inc"
} // namespace mlir::croq

using namespace mlir;

namespace {

/// The remainders and quotients of one loop's counter by one divisor.
struct Divisions {
  SmallVector<Operation *> remainders, quotients;
};

/// Replaces `loop` by one that also carries its counter's remainder and
/// quotient by each divisor found, and their uses by those values.
/// The constant `v` is, also through the casts of croq-to-gpu's type
/// conversion (a loop with index values among its loop-carried ones has
/// i64 bounds, each a cast of the index constant).
std::optional<int64_t> constantThroughCasts(Value v) {
  if (auto cast = v.getDefiningOp<UnrealizedConversionCastOp>();
      cast && cast->getNumOperands() == 1)
    v = cast->getOperand(0);
  return getConstantIntValue(v);
}

void carry(scf::ForOp loop, IRRewriter &rewriter) {
  std::optional<int64_t> lb = constantThroughCasts(loop.getLowerBound());
  std::optional<int64_t> step = constantThroughCasts(loop.getStep());
  Value iv = loop.getInductionVar();
  if (!lb || !step || *lb < 0 || *step < 1 || loop.getUnsignedCmp() ||
      !(iv.getType().isIndex() || iv.getType().isInteger(64)))
    return;
  // The counter as an index: itself, or its casts (an i64 loop, see
  // constantThroughCasts).
  SmallVector<Value> counters;
  if (iv.getType().isIndex())
    counters.push_back(iv);
  for (Operation *user : iv.getUsers())
    if (isa<arith::IndexCastOp, arith::IndexCastUIOp,
            UnrealizedConversionCastOp>(user) &&
        user->getNumOperands() == 1 && user->getNumResults() == 1 &&
        user->getResult(0).getType().isIndex())
      counters.push_back(user->getResult(0));
  SmallVector<Operation *> users;
  for (Value counter : counters)
    for (Operation *user : counter.getUsers())
      if (user->getOperand(0) == counter)
        users.push_back(user);
  llvm::MapVector<int64_t, Divisions> byDivisor;
  for (Operation *user : users) {
    if (!isa<arith::RemUIOp, arith::RemSIOp, arith::DivUIOp, arith::DivSIOp>(
            user))
      continue;
    std::optional<int64_t> divisor = getConstantIntValue(user->getOperand(1));
    if (!divisor || *divisor < 2 || llvm::isPowerOf2_64(*divisor) ||
        *step > *divisor)
      continue;
    Divisions &d = byDivisor[*divisor];
    if (isa<arith::RemUIOp, arith::RemSIOp>(user))
      d.remainders.push_back(user);
    else
      d.quotients.push_back(user);
  }
  if (byDivisor.empty())
    return;
  Location loc = loop.getLoc();
  rewriter.setInsertionPoint(loop);
  SmallVector<Value> inits;
  for (auto &[divisor, d] : byDivisor) {
    inits.push_back(arith::ConstantIndexOp::create(rewriter, loc, *lb % divisor));
    inits.push_back(arith::ConstantIndexOp::create(rewriter, loc, *lb / divisor));
  }
  int64_t stepValue = *step;
  auto divisors = llvm::to_vector(llvm::make_first_range(byDivisor));
  FailureOr<LoopLikeOpInterface> replaced =
      cast<LoopLikeOpInterface>(loop.getOperation())
          .replaceWithAdditionalYields(
              rewriter, inits, /*replaceInitOperandUsesInLoop=*/false,
              [&](OpBuilder &b, Location loc, ArrayRef<BlockArgument> args) {
                // r + step wraps past the divisor at most once per step.
                SmallVector<Value> next;
                Value stepC = arith::ConstantIndexOp::create(b, loc, stepValue);
                Value zero = arith::ConstantIndexOp::create(b, loc, 0);
                Value one = arith::ConstantIndexOp::create(b, loc, 1);
                for (auto [i, divisor] : llvm::enumerate(divisors)) {
                  Value divisorC = arith::ConstantIndexOp::create(b, loc, divisor);
                  Value r = arith::AddIOp::create(b, loc, args[2 * i], stepC);
                  Value wraps = arith::CmpIOp::create(
                      b, loc, arith::CmpIPredicate::uge, r, divisorC);
                  next.push_back(arith::SelectOp::create(
                      b, loc, wraps, arith::SubIOp::create(b, loc, r, divisorC),
                      r));
                  next.push_back(arith::AddIOp::create(
                      b, loc, args[2 * i + 1],
                      arith::SelectOp::create(b, loc, wraps, one, zero)));
                }
                return next;
              });
  if (failed(replaced))
    return;
  auto newLoop = cast<scf::ForOp>(replaced->getOperation());
  unsigned first = newLoop.getNumRegionIterArgs() - 2 * divisors.size();
  for (auto [i, entry] : llvm::enumerate(byDivisor)) {
    Value remainder = newLoop.getRegionIterArgs()[first + 2 * i];
    Value quotient = newLoop.getRegionIterArgs()[first + 2 * i + 1];
    for (Operation *op : entry.second.remainders)
      rewriter.replaceOp(op, remainder);
    for (Operation *op : entry.second.quotients)
      rewriter.replaceOp(op, quotient);
  }
}

struct CroqCarryLoopRemaindersPass
    : mlir::croq::impl::CroqCarryLoopRemaindersPassBase<
          CroqCarryLoopRemaindersPass> {
  void runOnOperation() override {
    SmallVector<scf::ForOp> loops;
    getOperation().walk([&](scf::ForOp loop) { loops.push_back(loop); });
    IRRewriter rewriter(&getContext());
    for (scf::ForOp loop : loops)
      carry(loop, rewriter);
  }
};

} // namespace
