//===- FoldMmaScales.cpp - One scale per K block of a block-scaled MMA ----===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//
//
// `mma.row.row.scale` written on each wgmma of a K block scales each
// product on its own: every MMA waits for the last, and every thread
// rescales all its registers after each. When the scales do not change
// within a loop, the products can be summed first and scaled once:
//
//   %s = scf.for ... iter_args(%a = %s0) {
//     %p = croq.mma %zero, %x, %y
//     %t = croq.mma.scale %a, %p rows %R times %F
//     scf.yield %t
//   }
// becomes
//   %q = scf.for ... iter_args(%b = %zero) {
//     %p = croq.mma %b, %x, %y
//     scf.yield %p
//   }
//   %s = croq.mma.scale %s0, %q rows %R times %F
//
// which is (s0 + sum_i p_i * r * f) computed as s0 + (sum_i p_i) * r * f,
// the form upstream's compiler emits ("hoisted" scaling). The scales'
// views and loads may be in the loop (where the statement wrote them) if
// they are the same in every iteration: they move before it. The loop
// must run at least once (a constant trip count) and not write the
// scales' memory, and the sum must be used only by the scale.
//
//===----------------------------------------------------------------------===//

#include "Croq/Dialect/Croq/IR/CroqOps.h"
#include "Croq/Dialect/Croq/Transforms/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::croq {
#define GEN_PASS_DEF_CROQFOLDMMASCALESPASS
#include "Croq/Dialect/Croq/Transforms/Passes.h.inc"
} // namespace mlir::croq

using namespace mlir;
using namespace mlir::croq;

/// The tensor or buffer a view is taken from.
static Value viewRoot(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (auto chunk = dyn_cast<ChunkAtOp>(def))
      v = chunk.getSource();
    else if (auto span = dyn_cast<SubspanOp>(def))
      v = span.getSource();
    else if (auto view = dyn_cast<ViewLikeOpInterface>(def))
      v = view.getViewSource();
    else
      break;
  }
  return v;
}

/// True when nothing in `loop` may write the memory of `rows`: every write
/// its ops declare is to another tensor or buffer.
static bool keepsScales(scf::ForOp loop, Value rows) {
  if (!rows)
    return true;
  Value root = viewRoot(rows);
  WalkResult walk = loop.getBody()->walk([&](Operation *op) {
    if (op->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
      return WalkResult::advance();
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (!effects)
      return WalkResult::interrupt();
    SmallVector<MemoryEffects::EffectInstance> instances;
    effects.getEffects(instances);
    for (const MemoryEffects::EffectInstance &e : instances) {
      if (!isa<MemoryEffects::Write>(e.getEffect()))
        continue;
      Value written = e.getValue();
      if (!written || viewRoot(written) == root)
        return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return !walk.wasInterrupted();
}

/// True when `v` has the same value in every iteration of `loop`: defined
/// outside it, or in its body by an op without memory effects (or a load
/// of memory the loop does not write) of such values. With `hoist`, moves
/// those ops before the loop.
static bool isLoopInvariant(scf::ForOp loop, Value v, bool hoist) {
  if (loop.isDefinedOutsideOfLoop(v))
    return true;
  Operation *def = v.getDefiningOp();
  if (!def || def->getBlock() != loop.getBody() || def->getNumRegions())
    return false;
  auto load = dyn_cast<memref::LoadOp>(def);
  if (!isMemoryEffectFree(def) &&
      !(load && keepsScales(loop, load.getMemRef())))
    return false;
  for (Value operand : def->getOperands())
    if (!isLoopInvariant(loop, operand, hoist))
      return false;
  if (hoist)
    def->moveBefore(loop);
  return true;
}

/// True when `v` is an accumulator no MMA wrote: a fill of zero.
static bool isZeroProduct(Value v) {
  auto fill = v.getDefiningOp<MmaFillOp>();
  return fill && fill.isZero();
}

/// Folds the scale of iter_arg `index` of `loop` out of it, if it can.
static bool foldScale(scf::ForOp loop, unsigned index) {
  BlockArgument sum = loop.getRegionIterArgs()[index];
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  auto scale = yield.getOperand(index).getDefiningOp<MmaScaleOp>();
  if (!scale || scale->getBlock() != loop.getBody() || scale.getSum() != sum ||
      !sum.hasOneUse() || !scale->hasOneUse())
    return false;
  auto mma = scale.getProduct().getDefiningOp<MmaOp>();
  if (!mma || mma.getAsync() || mma->getBlock() != loop.getBody() ||
      !mma->hasOneUse() || !isZeroProduct(mma.getAcc()))
    return false;
  // The scale after the loop reads the scales even where the loop would
  // not run: only loops that run at least once fold.
  std::optional<APInt> trips = loop.getStaticTripCount();
  if (!trips || trips->isZero())
    return false;
  Value rows = scale.getRows(), factor = scale.getFactor();
  for (Value v : {rows, factor})
    if (v && !isLoopInvariant(loop, v, /*hoist=*/false))
      return false;
  if (!keepsScales(loop, rows))
    return false;
  for (Value v : {rows, factor})
    if (v)
      (void)isLoopInvariant(loop, v, /*hoist=*/true);

  // The products' sum starts from a zero of its own before the loop.
  OpBuilder b(loop);
  auto zeroFill = mma.getAcc().getDefiningOp<MmaFillOp>();
  Operation *zeroValue = b.clone(*zeroFill.getValue().getDefiningOp());
  Value zero = MmaFillOp::create(b, zeroFill.getLoc(), zeroFill.getType(),
                                 zeroValue->getResult(0));
  Value init = loop.getInitArgs()[index];
  loop.getInitArgsMutable()[index].assign(zero);
  mma.getAccMutable().assign(sum);
  yield.setOperand(index, mma.getResult());
  // The old zero fill may still be used (as the loop's own init, after
  // CSE): canonicalization removes it when it is not.
  scale.erase();

  b.setInsertionPointAfter(loop);
  Value result = loop.getResult(index);
  auto scaled = MmaScaleOp::create(b, loop.getLoc(), result.getType(), init,
                                   result, rows, factor);
  result.replaceAllUsesExcept(scaled.getResult(), scaled);
  return true;
}

namespace {

struct CroqFoldMmaScalesPass
    : croq::impl::CroqFoldMmaScalesPassBase<CroqFoldMmaScalesPass> {
  void runOnOperation() override {
    // Each loop on its own: a scale folded out of one follows it, where
    // the loop around it sees a product that croq.mma did not compute and
    // so leaves it.
    getOperation()->walk([](scf::ForOp loop) {
      for (unsigned i = 0, e = loop.getNumRegionIterArgs(); i < e; ++i)
        (void)foldScale(loop, i);
    });
  }
};

} // namespace
