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
// role is made of whole warpgroups, chooses the budgets, and groups the
// roles in a croq.warp_specialize that declares them.
//
//===----------------------------------------------------------------------===//

#include "Croq/Analysis/DivergenceAnalysis.h"
#include "Croq/Analysis/Roles.h"
#include "Croq/Dialect/Croq/IR/CroqOps.h"
#include "Croq/Dialect/Croq/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::croq {
#define GEN_PASS_DEF_CROQWARPSPECIALIZEPASS
#include "Croq/Dialect/Croq/Transforms/Passes.h.inc"
} // namespace mlir::croq

using namespace mlir;
using namespace mlir::croq;

static constexpr int64_t kMinRegisters = 24;

/// A producer moves data and computes nothing worth registers.
static bool isProducer(InThreadsOp role) {
  bool copies = false, computes = false;
  role.getBody().walk([&](Operation *op) {
    if (isa<CopyOpInterface>(op))
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

/// The roles of a warpgroup parallel: the `inthreads.async` regions of its
/// body, or of the body of its thread level in the comma form `parallel p
/// by n : group-4, t by 128 : thread`.
static SmallVector<InThreadsOp> rolesOf(ParallelOp group) {
  Block *body = &group.getBody().front();
  for (Operation &op : *body)
    if (auto child = dyn_cast<ParallelOp>(op);
        child && child.getLevel() == Level::Thread)
      body = &child.getBody().front();
  SmallVector<InThreadsOp> roles;
  for (Operation &op : *body)
    if (auto role = dyn_cast<InThreadsOp>(op); role && role.getAsync())
      roles.push_back(role);
  return roles;
}

/// Whether `kernel` has one warpgroup parallel with roles: the blocks per
/// SM are the kernel's, so they are chosen only where one group's budgets
/// decide them (another group budgeted for one block would then ask for
/// registers two blocks do not have).
static bool hasOneRoleGroup(ParallelOp kernel) {
  int64_t groups = 0;
  kernel.getBody().walk([&](ParallelOp group) {
    if (group.getLevel() == Level::Warpgroup && !rolesOf(group).empty())
      ++groups;
  });
  return groups == 1;
}

/// A block's registers with `blocks` blocks per SM: ptxas's entry count
/// per thread, the pool the block gets at launch (entry count x threads:
/// budgets past it would make setmaxnreg.inc wait for registers nobody
/// frees), and what is left of the pool for the consumer threads that share
/// it, after warpgroups outside every role (the entry count), roles with
/// their own budget (setreg) and producers (`producerRegisters`); `share` is
/// each sharing thread's part, in setmaxnreg's steps of 8 and within the
/// kernel's cap.
struct RegisterPool {
  int64_t entry, pool, left, sharingThreads = 0, share = 0;
};

static RegisterPool registerPool(ArrayRef<InThreadsOp> roles,
                                 ArrayRef<bool> producer, int64_t blockThreads,
                                 int64_t blocks, int64_t producerRegisters,
                                 std::optional<uint64_t> cap = std::nullopt) {
  RegisterPool p;
  // A kernel's [[maxnreg(N)]] caps every thread at N, at entry as after any
  // setmaxnreg (ptxas rejects a setmaxnreg above it).
  p.entry = entryRegisters(blockThreads, blocks);
  if (cap)
    p.entry = std::min<int64_t>(p.entry, *cap);
  p.pool = p.entry * blockThreads;
  p.left = p.pool;
  int64_t selected = 0;
  for (auto [constRole, isProducer] : llvm::zip_equal(roles, producer)) {
    InThreadsOp role = constRole;
    int64_t threads = *countRoleThreads(role);
    selected += threads;
    if (std::optional<int32_t> fixed = role.getRegisters())
      p.left -= threads * *fixed;
    else if (isProducer)
      p.left -= threads * producerRegisters;
    else
      p.sharingThreads += threads;
  }
  p.left -= (blockThreads - selected) * p.entry;
  if (p.sharingThreads)
    p.share = p.left / p.sharingThreads / 8 * 8;
  if (cap)
    p.share = std::min<int64_t>(p.share, *cap / 8 * 8);
  return p;
}

/// Whether two blocks of an MMA kernel fit on one SM: their shared buffers
/// (static, each padded to the 1 KiB swizzle alignment, and the 1 KiB the
/// SM reserves per block) in its 227 KiB, and both ptxas's entry count for
/// two blocks and the consumers' share of a block's pool cover their
/// accumulators with 40 to spare. Kernels whose roles set their own budgets
/// (setreg) keep one block. A register cap ([[maxnreg(N)]], as nvcc's
/// -maxrregcount) bounds the entry count and the consumers' share, as it
/// will their budgets.
static bool twoBlocksFit(ParallelOp kernel, ArrayRef<InThreadsOp> roles,
                         ArrayRef<bool> producer, int64_t blockThreads,
                         int64_t producerRegisters,
                         std::optional<uint64_t> cap) {
  constexpr int64_t kSharedPerSM = 232448, kReserved = 1024, kAlign = 1024;
  int64_t shared = kReserved;
  bool known = true;
  kernel.getBody().walk([&](Operation *op) {
    if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
      MemRefType type = alloc.getType();
      if (getStorage(type) != Storage::Shared)
        return;
      if (!type.hasStaticShape()) {
        known = false;
        return;
      }
      int64_t bytes =
          type.getNumElements() * getStorageBytes(type.getElementType());
      shared += (bytes + kAlign - 1) / kAlign * kAlign;
    } else if (auto events = dyn_cast<EventAllocOp>(op)) {
      shared += 8 * events.getType().getNumElements();
    }
  });
  if (!known || 2 * shared > kSharedPerSM)
    return false;
  int64_t accumulators = 0;
  for (InThreadsOp role : roles) {
    if (InThreadsOp(role).getRegisters())
      return false;
    int64_t elements = 0;
    role.getBody().walk([&](MmaFillOp fill) {
      auto frag = cast<FragType>(fill.getType());
      int64_t count = 1;
      for (int64_t d : frag.getShape())
        count *= d;
      elements += count / levelThreads(frag.getScope());
    });
    accumulators = std::max(accumulators, elements);
  }
  if (accumulators == 0)
    return false;
  int64_t need = accumulators + 40;
  RegisterPool p =
      registerPool(roles, producer, blockThreads, 2, producerRegisters, cap);
  return p.entry >= need && p.sharingThreads > 0 && p.share >= need;
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
          << static_cast<int64_t>(producerRegisters);
      return signalPassFailure();
    }
    if (maxRegisters < kMinRegisters || maxRegisters > 256 ||
        maxRegisters % 8 != 0) {
      emitError(getOperation()->getLoc(), "croq-warp-specialize: "
                "max-registers must be a multiple of 8 in [24, 256], got ")
          << static_cast<int64_t>(maxRegisters);
      return signalPassFailure();
    }
    auto &uniformity = getAnalysis<UniformityInfo>();
    if (!uniformity.isValid())
      return signalPassFailure();
    DataFlowSolver &solver = uniformity.getSolver();
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
    SmallVector<InThreadsOp> roles = rolesOf(group);
    if (roles.empty())
      return success();
    // A role of single threads (`p == 0 && t == 0`) occupies its whole
    // warpgroup: the warpgroup test becomes the role, the thread test a
    // region inside it, so that setmaxnreg runs on the whole warpgroup.
    bool split = false;
    for (InThreadsOp role : roles) {
      FailureOr<bool> didSplit = splitThreadSelection(role, solver);
      if (failed(didSplit))
        return failure();
      split |= *didSplit;
    }
    // The new predicates need the analysis too.
    DataFlowSolver fresh;
    if (split && failed(runDivergenceAnalysis(getOperation(), fresh)))
      return failure();
    DataFlowSolver &uniformity = split ? fresh : solver;
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
      UniformScope scope = getUniformScope(uniformity, role.getPredicate());
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
      if (*threads == 0)
        return role.emitOpError("is a warp-specialized role that no "
                                "warpgroup runs: its predicate is false for "
                                "every index of the parallel; fix the "
                                "predicate or drop the role");
      producer.push_back(isProducer(role));
      (producer.back() ? producerThreads : consumerThreads) += *threads;
    }
    // A warpgroup that runs two roles would move its registers twice.
    if (std::optional<RoleOverlap> overlap = findRoleOverlap(roles)) {
      InFlightDiagnostic diag =
          overlap->later->emitError("this role and an earlier one both "
                                    "run on warpgroup ")
          << overlap->instance << "; give each warpgroup at most one role";
      diag.attachNote(overlap->earlier->getLoc()) << "the earlier role";
      return diag;
    }
    if (producerThreads + consumerThreads > blockThreads)
      return group.emitOpError("has roles that overlap: they select ")
             << producerThreads + consumerThreads << " threads of "
             << blockThreads
             << "; give each warpgroup at most one role";
    // Warpgroups outside every role keep the entry budget; a role the
    // program gave a budget (setreg) has it; producers get
    // producer-registers and the other consumers share what is left.
    // With [[launch_bounds(_, N)]], N blocks share the SM's register file.
    // Without one, two blocks per SM where their shared memory and
    // accumulators allow it (a 1P1C 64x128 tile): a block's epilogue then
    // overlaps the other's main loop. The choice is the kernel's min_blocks,
    // as [[launch_bounds(_, 2)]] would set it.
    auto kernel = group->getParentOfType<ParallelOp>();
    std::optional<uint64_t> cap;
    if (kernel && kernel.getLevel() == Level::Block)
      cap = kernel.getMaxRegisters();
    // Producers keep producer-registers, within the kernel's cap.
    int64_t producerBudget = producerRegisters;
    if (cap)
      producerBudget = std::min<int64_t>(producerBudget, *cap / 8 * 8);
    if (kernel && kernel.getLevel() == Level::Block && !kernel.getMinBlocks() &&
        hasOneRoleGroup(kernel) &&
        twoBlocksFit(kernel, roles, producer, blockThreads, producerBudget, cap))
      kernel.setMinBlocksAttr(
          IntegerAttr::get(IntegerType::get(kernel.getContext(), 64), 2));
    int64_t blocks = blocksPerSM(group);
    RegisterPool pool = registerPool(roles, producer, blockThreads, blocks,
                                     producerBudget, cap);
    int64_t left = pool.left, sharingThreads = pool.sharingThreads;
    if (left < sharingThreads * kMinRegisters) {
      InFlightDiagnostic diag = group.emitOpError("has roles that do not fit in ");
      if (blocks > 1)
        diag << "the " << pool.pool / 1024 << "K registers of a block "
             << "(launch_bounds asks for " << blocks << " blocks per SM)";
      else
        diag << "the 64K-register file";
      if (sharingThreads)
        diag << ": consumers would get "
             << std::max<int64_t>(left, 0) / sharingThreads / 8 * 8
             << " registers per thread (at least 24 needed); use fewer "
                "warpgroups or lower producer-registers";
      else
        diag << ": the budgets of its roles need "
             << pool.pool - left << " registers; lower the setreg counts";
      return diag;
    }
    int64_t consumerRegisters =
        sharingThreads
            ? std::min<int64_t>(maxRegisters, pool.share)
            : 0;
    for (InThreadsOp role : roles)
      if (std::optional<int32_t> fixed = role.getRegisters();
          fixed && cap && static_cast<uint64_t>(*fixed) > *cap)
        return role.emitOpError("sets ")
               << *fixed << " registers per thread, above the kernel's cap "
               << "of " << *cap << " ([[maxnreg]] or croqc --maxnreg); lower "
               << "the setreg count or raise the cap";
    SmallVector<int32_t> budgets;
    for (auto [role, isProducerRole] : llvm::zip_equal(roles, producer))
      budgets.push_back(role.getRegisters() ? *role.getRegisters()
                        : isProducerRole    ? producerBudget
                                            : consumerRegisters);
    if (canDispatchOnce(roles)) {
      // Only pure ops stand between the roles: they move before the first,
      // so that the roles are adjacent and share one dispatch.
      for (Operation *op = roles.front()->getNextNode(); op != roles.back();) {
        Operation *next = op->getNextNode();
        if (!isa<InThreadsOp>(op) || !cast<InThreadsOp>(op).getAsync())
          op->moveBefore(roles.front());
        op = next;
      }
      wrap(roles, budgets);
      return success();
    }
    // Roles that cannot share a dispatch get one each.
    for (auto [role, budget] : llvm::zip_equal(roles, budgets))
      wrap(role, budget);
    return success();
  }

  /// Moves adjacent `roles` into a croq.warp_specialize with `budgets`.
  static void wrap(ArrayRef<InThreadsOp> roles, ArrayRef<int32_t> budgets) {
    Operation *first = roles.front();
    OpBuilder b(first);
    auto specialized = WarpSpecializeOp::create(b, first->getLoc(), budgets);
    Operation *yield = specialized.getBody().front().getTerminator();
    for (InThreadsOp role : roles)
      role->moveBefore(yield);
  }

  /// Splits a role whose predicate is `uniform && rest` (conjuncts uniform
  /// at warpgroup and conjuncts that are not) into `inthreads.async
  /// (uniform) { inthreads (rest) { body } }`. Roles already uniform are
  /// left alone; roles with no uniform conjunct are reported by the caller.
  FailureOr<bool> splitThreadSelection(InThreadsOp role,
                                       DataFlowSolver &solver) {
    SmallVector<Value> conjuncts{role.getPredicate()}, uniform, rest;
    while (!conjuncts.empty()) {
      Value c = conjuncts.pop_back_val();
      if (getUniformScope(solver, c) >= UniformScope::Warpgroup) {
        uniform.push_back(c);
        continue;
      }
      if (auto andOp = c.getDefiningOp<arith::AndIOp>()) {
        conjuncts.push_back(andOp.getRhs());
        conjuncts.push_back(andOp.getLhs());
        continue;
      }
      rest.push_back(c);
    }
    if (rest.empty() || uniform.empty())
      return false;
    OpBuilder b(role);
    Location loc = role.getLoc();
    auto conjunction = [&](ArrayRef<Value> values) {
      Value acc = values.front();
      for (Value v : values.drop_front())
        acc = arith::AndIOp::create(b, loc, acc, v);
      return acc;
    };
    Value outer = conjunction(uniform);
    Value inner = conjunction(rest);
    role.getPredicateMutable().assign(outer);
    Block &block = role.getBody().front();
    b.setInsertionPointToStart(&block);
    auto selection = InThreadsOp::create(b, loc, inner, /*async=*/false);
    Block &selected = selection.getBody().front();
    // Everything but the two terminators moves into the selection.
    while (&block.back() != selection.getOperation() &&
           selection->getNextNode() != block.getTerminator())
      selection->getNextNode()->moveBefore(selected.getTerminator());
    return true;
  }

  /// The roles, which the caller has proved disjoint, can share one
  /// dispatch when only pure, region-free ops stand between them.
  static bool canDispatchOnce(ArrayRef<InThreadsOp> roles) {
    if (roles.size() < 2)
      return false;
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
