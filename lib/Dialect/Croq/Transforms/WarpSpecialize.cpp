//===- WarpSpecialize.cpp - register budgets for warpgroup roles ----------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//
//
// The roles of a warp-specialized kernel are the `croq.inthreads async`
// regions of a warpgroup parallel. Producers (copies only) need few
// registers, consumers (MMA, arithmetic) as many as the file allows; Hopper
// moves registers between warpgroups with setmaxnreg. This pass proves each
// role is made of whole warpgroups and chooses the budgets.
//
//===----------------------------------------------------------------------===//

#include "Croq/Analysis/DivergenceAnalysis.h"
#include "Croq/Analysis/Roles.h"
#include "Croq/Dialect/Croq/IR/CroqOps.h"
#include "Croq/Dialect/Croq/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::croq {
#define GEN_PASS_DEF_CROQWARPSPECIALIZEPASS
#include "Croq/Dialect/Croq/Transforms/Passes.h.inc"
} // namespace mlir::croq

using namespace mlir;
using namespace mlir::croq;

static constexpr int64_t kRegisterFile = 64 * 1024;
static constexpr int64_t kMinRegisters = 24;

/// A producer moves data and computes nothing worth registers.
static bool isProducer(InThreadsOp role) {
  bool copies = false, computes = false;
  role.getBody().walk([&](Operation *op) {
    if (isa<DmaCopyOp, TmaCopyOp>(op))
      copies = true;
    else if (isa<MmaOp, MmaLoadOp, MmaFillOp>(op))
      computes = true;
    else if (op->getDialect() &&
             isa<arith::ArithDialect>(op->getDialect()) &&
             llvm::any_of(op->getResultTypes(), [](Type t) {
               return isa<FloatType>(getElementTypeOrSelf(t));
             }) && !isa<arith::ConstantOp>(op))
      computes = true;
  });
  return copies && !computes;
}

namespace {

struct CroqWarpSpecializePass
    : mlir::croq::impl::CroqWarpSpecializePassBase<CroqWarpSpecializePass> {
  using CroqWarpSpecializePassBase::CroqWarpSpecializePassBase;

  void runOnOperation() override {
    if (producerRegisters < kMinRegisters || producerRegisters > 256 ||
        producerRegisters % 8 != 0) {
      emitError(getOperation()->getLoc(), "croq-warp-specialize: "
                "producer-registers must be a multiple of 8 in [24, 256], got ")
          << producerRegisters;
      return signalPassFailure();
    }
    DataFlowSolver solver;
    if (failed(runDivergenceAnalysis(getOperation(), solver)))
      return signalPassFailure();
    WalkResult result = getOperation()->walk([&](ParallelOp group) {
      if (group.getLevel() != Level::Warpgroup)
        return WalkResult::advance();
      return succeeded(specialize(group, solver)) ? WalkResult::advance()
                                                  : WalkResult::interrupt();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }

  LogicalResult specialize(ParallelOp group, DataFlowSolver &solver) {
    SmallVector<InThreadsOp> roles;
    for (Operation &op : group.getBody().front())
      if (auto role = dyn_cast<InThreadsOp>(op); role && role.getAsync())
        roles.push_back(role);
    if (roles.empty())
      return success();
    // The warpgroups of the block: this parallel's extents.
    int64_t warpgroups = 1;
    for (Value bound : group.getBounds()) {
      std::optional<int64_t> extent = getConstantIntValue(bound);
      if (!extent)
        return group.emitOpError("has inthreads.async roles but a warpgroup "
                                 "count that is not a constant; roles need "
                                 "a static block shape");
      warpgroups *= *extent;
    }
    int64_t blockThreads = warpgroups * levelThreads(Level::Warpgroup);
    int64_t producerThreads = 0, consumerThreads = 0;
    SmallVector<bool> producer;
    for (InThreadsOp role : roles) {
      UniformScope scope = getUniformScope(solver, role.getPredicate());
      if (scope < UniformScope::Warpgroup)
        return role.emitOpError("is a warp-specialized role but its "
                                "predicate is uniform only at ")
               << stringifyUniformScope(scope)
               << "; select whole warpgroups (test the warpgroup index)";
      std::optional<int64_t> threads = countRoleThreads(role);
      if (!threads)
        return role.emitOpError("selects a number of threads that cannot be "
                                "computed at compile time; roles need "
                                "constant predicates over parallel indices");
      producer.push_back(isProducer(role));
      (producer.back() ? producerThreads : consumerThreads) += *threads;
    }
    if (producerThreads + consumerThreads > blockThreads)
      return group.emitOpError("has roles that overlap: they select ")
             << producerThreads + consumerThreads << " threads of "
             << blockThreads
             << "; give each warpgroup at most one role";
    int64_t idleThreads =
        blockThreads - producerThreads - consumerThreads;
    // Warpgroups outside every role keep the entry budget.
    int64_t entry = entryRegisters(blockThreads);
    int64_t left = kRegisterFile - producerThreads * producerRegisters -
                   idleThreads * entry;
    int64_t consumerRegisters =
        consumerThreads ? std::min<int64_t>(maxRegisters,
                                            left / consumerThreads / 8 * 8)
                        : 0;
    if (consumerThreads && consumerRegisters < kMinRegisters)
      return group.emitOpError("has roles that do not fit in the 64K-register "
                               "file: consumers would get ")
             << consumerRegisters
             << " registers per thread (at least 24 needed); use fewer "
                "warpgroups or lower producer-registers";
    auto i32 = IntegerType::get(&getContext(), 32);
    for (auto [role, isProducerRole] : llvm::zip_equal(roles, producer))
      role->setAttr(kMaxRegistersAttrName,
                    IntegerAttr::get(i32, isProducerRole ? producerRegisters
                                                         : consumerRegisters));
    if (canDispatchOnce(roles)) {
      // Only pure ops stand between the roles: they move before the first,
      // so that the roles are adjacent and lower to one switch.
      for (Operation *op = roles.front()->getNextNode(); op != roles.back();) {
        Operation *next = op->getNextNode();
        if (!isa<InThreadsOp>(op) || !cast<InThreadsOp>(op).getAsync())
          op->moveBefore(roles.front());
        op = next;
      }
      for (auto [index, role] : llvm::enumerate(roles))
        role->setAttr(kRoleIndexAttrName, IntegerAttr::get(i32, index));
    }
    return success();
  }

  /// The roles can share one dispatch when no warpgroup runs two of them
  /// and only pure, region-free ops stand between them.
  static bool canDispatchOnce(ArrayRef<InThreadsOp> roles) {
    if (roles.size() < 2)
      return false;
    std::optional<llvm::BitVector> taken;
    for (InThreadsOp role : roles) {
      std::optional<llvm::BitVector> selected = roleSelection(role);
      if (!selected)
        return false;
      if (!taken) {
        taken = *selected;
        continue;
      }
      if (taken->anyCommon(*selected))
        return false;
      *taken |= *selected;
    }
    llvm::SmallPtrSet<Operation *, 4> isRole;
    for (InThreadsOp role : roles)
      isRole.insert(role);
    for (Operation *op = roles.front()->getNextNode(); op != roles.back();
         op = op->getNextNode())
      if (!isRole.contains(op) &&
          (op->getNumRegions() || !isMemoryEffectFree(op)))
        return false;
    return true;
  }
};

} // namespace
