//===- CroqToGPU.cpp - croq to gpu / nvgpu conversion ---------------------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#include "Croq/Conversion/CroqToGPU/CroqToGPU.h"
#include "Common.h"
#include "Croq/Analysis/DivergenceAnalysis.h"
#include "Croq/Analysis/Roles.h"
#include "Croq/Conversion/Passes.h"
#include "Croq/Dialect/Croq/IR/CroqOps.h"
#include "Croq/Dialect/Croq/Utils/TileAlgebra.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Func/Transforms/FuncConversions.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/DialectConversion.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <limits>

namespace mlir::croq {
#define GEN_PASS_DEF_CONVERTCROQTOGPUPASS
#include "Croq/Conversion/Passes.h.inc"
} // namespace mlir::croq

using namespace mlir;
using namespace mlir::croq;
using namespace mlir::croq::detail;

//===----------------------------------------------------------------------===//
// Type conversion and pass
//===----------------------------------------------------------------------===//

void mlir::croq::populateCroqToGPUTypeConversions(TypeConverter &converter) {
  converter.addConversion([](Type type) { return type; });
  converter.addConversion([&converter](FutureType type) -> Type {
    return converter.convertType(type.getDataType());
  });
  converter.addConversion([](FragType type) -> Type {
    if (type.getScope() == Level::Warp)
      return fragVectorType(type);
    // A warpgroup accumulator lives in wgmma registers; an operand is the
    // shared-memory descriptor of its tile.
    if (type.getRole() == FragRole::Acc)
      return wgmmaAccType(type);
    // Sparsity metadata: a 32-bit register per wgmma.sp step.
    if (type.getRole() == FragRole::Meta)
      return VectorType::get({type.getShape()[1] / sparseWgmmaK(type.getElementType())},
                             IntegerType::get(type.getContext(), 32));
    return IntegerType::get(type.getContext(), 64);
  });
  converter.addConversion([](EventType type) -> Type {
    // A local event: each thread's own counts of triggers not yet waited.
    if (type.getStorage() == MemoryKind::Local)
      return MemRefType::get(
          {type.getNumElements()}, IntegerType::get(type.getContext(), 32),
          MemRefLayoutAttrInterface(),
          gpu::AddressSpaceAttr::get(type.getContext(),
                                     gpu::AddressSpace::Private));
    return mbarrierGroupType(type.getContext(), type.getNumElements());
  });
  converter.addConversion([](StreamType type) -> Type {
    return gpu::AsyncTokenType::get(type.getContext());
  });
}

void mlir::croq::configureCroqToGPUConversionLegality(
    ConversionTarget &target, const TypeConverter &converter) {
  target.addIllegalDialect<CroqDialect>();
  // Made by the block-level lowering; croq-bound-kernel-registers consumes
  // it after outlining.
  target.addLegalOp<LaunchHintsOp>();
  // Calls of C++ device functions stay until the kernel's conversion to
  // LLVM, where their pointer arguments exist (croq's ConvertToLLVM
  // interface, DeviceCalls.cpp).
  target.addLegalOp<CallOp>();
  // A wait on a local event that cannot complete fails the kernel.
  target.addLegalOp<cf::AssertOp>();
  // A TMA load of sub-byte elements moves them as bytes (tmaBoxes): a cast
  // between memrefs that lower to one LLVM descriptor, which
  // reconcile-unrealized-casts removes.
  target.addLegalOp<UnrealizedConversionCastOp>();
  // Local buffers become allocas.
  target.addDynamicallyLegalOp<memref::AllocOp>([](memref::AllocOp op) {
    return getStorage(op.getType()) != Storage::Local;
  });
  // Ops that carry croq types (futures, events, fragments) are retyped.
  target.addDynamicallyLegalOp<func::FuncOp>([&converter](func::FuncOp op) {
    return converter.isSignatureLegal(op.getFunctionType()) &&
           converter.isLegal(&op.getBody());
  });
  target.addDynamicallyLegalOp<func::ReturnOp, func::CallOp, arith::SelectOp>(
      [&converter](Operation *op) { return converter.isLegal(op); });
  // Element accesses of a buffer in the wgmma layout are addressed in it.
  mlir::croq::detail::markSwizzledElementAccessesLegal(target);
}

void mlir::croq::populateCroqToGPUStructuralConversions(
    TypeConverter &converter, RewritePatternSet &patterns,
    ConversionTarget &target) {
  populateFunctionOpInterfaceTypeConversionPattern<func::FuncOp>(patterns,
                                                                 converter);
  populateReturnOpTypeConversionPattern(patterns, converter);
  populateCallOpTypeConversionPattern(patterns, converter);
  scf::populateSCFStructuralTypeConversionsAndLegality(converter, patterns,
                                                       target);
}

void mlir::croq::populateCroqToGPUConversionPatterns(
    TypeConverter &converter, RewritePatternSet &patterns,
    const LaunchAnalysis &analysis) {
  populateCroqToGPULevelPatterns(converter, patterns, analysis);
  populateCroqToGPUCopyPatterns(converter, patterns, analysis);
  populateCroqToGPUEventPatterns(converter, patterns, analysis);
  populateCroqToGPUMmaPatterns(converter, patterns, analysis);
  populateCroqToGPUTmaPatterns(converter, patterns, analysis);
  mlir::croq::detail::populateSwizzledElementPatterns(converter, patterns);
}

namespace {

/// What the target chip has, from its name (sm_90a: sm 90, arch-specific).
struct ChipFeatures {
  unsigned sm = 0;
  bool archSpecific = false;

  explicit ChipFeatures(StringRef chip) {
    archSpecific = chip.ends_with("a");
    if (!chip.consume_front("sm_") ||
        chip.take_while(llvm::isDigit).getAsInteger(10, sm))
      sm = 0;
  }
  /// The Hopper op `op` needs and this chip lacks, or empty.
  StringRef missing(Operation *op) const {
    bool hopper = sm >= 90;
    bool hopperA = sm == 90 && archSpecific;
    bool ampere = sm >= 80;
    if (isa<TmaCopyOp>(op) && !hopper)
      return "tma.copy needs sm_90 or newer (TMA)";
    if (auto copy = dyn_cast<DmaCopyOp>(op);
        copy && copy.getAsync() && !ampere &&
        getStorage(copy.getTarget().getType()) == Storage::Shared)
      return "an asynchronous copy into shared memory (cp.async) needs "
             "sm_80 or newer";
    if (auto mma = dyn_cast<MmaOp>(op);
        mma && mma.getAcc().getType().getScope() == Level::Warp && !ampere)
      return "a warp MMA (mma.sync m16n8k16) needs sm_80 or newer";
    if (auto alloc = dyn_cast<EventAllocOp>(op);
        alloc && alloc.getEvent().getType().getStorage() == MemoryKind::Shared &&
        !hopper)
      return "shared events need sm_90 or newer (mbarrier waits)";
    if (auto kernel = dyn_cast<ParallelOp>(op);
        kernel && kernel.getCluster() && !hopper)
      return "thread-block clusters need sm_90 or newer";
    // croq-elect-issuers chose elect.sync for a chip that has it; prepare
    // and convert for the same chip.
    auto issuer = op->getAttrOfType<IssuerAttr>("issuer");
    if (((issuer && issuer.getValue() == Issuer::Elected) ||
         isa<NVVM::ElectSyncOp>(op)) &&
        !hopper)
      return "elect.sync (chosen by croq-elect-issuers with use-elect-sync) "
             "needs sm_90 or newer; prepare for the chip you convert for";
    if (auto mma = dyn_cast<MmaOp>(op);
        mma && mma.getAcc().getType().getScope() == Level::Warpgroup &&
        !hopperA)
      return "a warpgroup MMA (wgmma, in a group-4 parallel) needs sm_90a";
    if (isa<WarpSpecializeOp>(op) && !(hopper && archSpecific))
      return "register budgets of warpgroup roles (croq.warp_specialize, "
             "setmaxnreg) need an arch-specific chip of sm_90 or newer, such "
             "as sm_90a";
    return {};
  }
};

/// Ops that cannot be lowered (for `chip`, or at all yet); each is reported
/// where it stands.
static LogicalResult reportUnsupported(ModuleOp module, StringRef chip) {
  ChipFeatures features(chip);
  WalkResult result = module.walk([&](Operation *op) {
    if (StringRef why = features.missing(op); !why.empty()) {
      op->emitOpError("cannot be lowered for ") << chip << ": " << why;
      return WalkResult::interrupt();
    }
    // Ops that device threads execute, outside any kernel (a global
    // event is declared there, and reported below).
    bool globalEvent =
        isa<EventAllocOp>(op) &&
        cast<EventAllocOp>(op).getEvent().getType().getStorage() ==
            MemoryKind::Global;
    if (isa<DmaCopyOp, TmaCopyOp, MmaFillOp, MmaLoadOp, MmaOp, MmaStoreOp,
            MmaCommitOp, BarrierOp, ClusterBarrierOp, InThreadsOp,
            EventTriggerOp, EventWaitOp, EventAllocOp>(op) &&
        !globalEvent && !op->getParentOfType<ParallelOp>()) {
      op->emitOpError("runs on device threads, but is not inside a kernel: "
                      "put it in the body of a block-level croq.parallel");
      return WalkResult::interrupt();
    }
    // A TMA load completes only on an mbarrier: its wait is an event wait.
    // What croq-bind-tma-futures leaves (and marks) are TMA stores' waits.
    if (auto wait = dyn_cast<WaitOp>(op);
        wait && !wait->hasAttr(kTmaStoreWaitAttr) &&
        llvm::any_of(wait.getFutures(), [](Value f) {
          return cast<FutureType>(f.getType()).getKind() == FutureKind::Tma;
        })) {
      op->emitOpError("waits on a TMA future; run croq-bind-tma-futures "
                      "first to make it a wait on an event");
      return WalkResult::interrupt();
    }
    StringRef why;
    if (globalEvent)
      why = "global events (flags that blocks would spin on across the "
            "grid) are not implemented; a block's threads synchronise with "
            "shared events, and blocks with sync.barrier in a "
            "`block<cooperative>` kernel";
    else
      return WalkResult::advance();
    op->emitOpError("cannot be lowered to GPU code: ") << why;
    return WalkResult::interrupt();
  });
  return failure(result.wasInterrupted());
}

/// Checks that a warpgroup executes `op` and that `type` fits wgmma.
static LogicalResult checkWarpgroupFragment(Operation *op,
                                            const LaunchAnalysis &analysis,
                                            FragType type) {
  const LaunchAnalysis::Scope &scope = analysis.getScope(op);
  if (mmaScope(scope) != Level::Warpgroup)
    return op->emitOpError("uses warpgroup fragment ")
           << type << ", which must be used in the body of a group-4 parallel";
  if (scope.inThreads && !selectsWholeGroups(op, Level::Warpgroup))
    return op->emitOpError("is a warpgroup MMA, but the croq.inthreads "
                           "around it selects only some of the warpgroup's "
                           "threads; select whole warpgroups");
  // Sparsity metadata: its type's verifier checked the shape.
  if (type.getRole() == FragRole::Meta)
    return success();
  Type element = type.getElementType();
  ArrayRef<int64_t> shape = type.getShape();
  if (type.getRole() == FragRole::Acc) {
    // bf16 and 8-bit registers in this layout can only be an A operand
    // (wgmma's RS form); an MMA's accumulator is f16, f32 or s32.
    auto mma = dyn_cast<MmaOp>(op);
    bool accumulates = !mma || mma.getAcc().getType() == type ||
                       mma.getResult().getType() == type;
    bool registerA = element.isBF16() || element.isInteger(8) ||
                     isa<Float8E4M3FNType, Float8E5M2Type>(element);
    if (!element.isF16() && !element.isF32() && !element.isInteger(32) &&
        !(registerA && !(mma && accumulates)))
      return op->emitOpError("wgmma accumulates in f16, f32 or s32, got ")
             << element;
    // Its 64 rows are the fragment type's rule (FragType::verify).
    if (shape[1] % 8 || shape[1] > 256)
      return op->emitOpError("a warpgroup accumulator is 64 x N with N a "
                             "multiple of 8 up to 256 (one wgmma), got ")
             << type << "; split the tile across warpgroups";
    if (mma && accumulates) {
      Type operand = mma.getA().getType().getElementType();
      if (!accumulatesInto(operand, element))
        return op->emitOpError("wgmma cannot accumulate ")
               << operand << " products in " << element
               << "; f16 and f8 accumulate in f16 or f32, bf16 and f32 "
                  "(tf32) in f32, s8 in s32";
      // Integer wgmma has N of 8, 16, 24 or a multiple of 16.
      if (operand.isInteger(8) && shape[1] > 24 && shape[1] % 16)
        return op->emitOpError("an s8 wgmma has N of 8, 16, 24 or a "
                               "multiple of 16, got ")
               << type;
    }
    return success();
  }
  if (!element.isF16() && !element.isBF16() && !element.isF32() &&
      !element.isInteger(8) &&
      !isa<Float8E4M3FNType, Float8E5M2Type>(element))
    return op->emitOpError("wgmma operands here must be f16, bf16, f32 (as "
                           "tf32), s8, f8E4M3FN or f8E5M2, got ")
           << element;
  // The layout of the MMA that reads the operand (row.row where none does
  // yet: consumerLayout reports that).
  MmaLayout layout = MmaLayout::RowRow;
  if (auto mma = dyn_cast<MmaOp>(op))
    layout = mma.getLayout();
  else if (auto load = dyn_cast<MmaLoadOp>(op))
    for (Operation *user : load.getResult().getUsers())
      if (auto mma = dyn_cast<MmaOp>(user)) {
        layout = mma.getLayout();
        break;
      }
  OperandGeometry geometry = operandGeometry(type, layout);
  if (geometry.kMajor && element.getIntOrFloatBitWidth() != 16)
    return op->emitOpError("wgmma reads ")
           << element << " operands only with K contiguous (A as [M, K], B "
              "as [N, K], mma.row.row); got "
           << type << " for " << stringifyMmaLayout(layout);
  if (geometry.k % wgmmaK(element))
    return op->emitOpError("is a warpgroup MMA operand with K = ")
           << geometry.k << ", but wgmma consumes K in steps of "
           << wgmmaK(element) << " for " << element << " (" << type
           << "); make the operand's K a multiple of " << wgmmaK(element)
           << " (e.g. slice the shared tile in steps of " << wgmmaK(element)
           << ")";
  if (type.getRole() == FragRole::A && geometry.outer != kWgmmaM)
    return op->emitOpError("a warpgroup A operand has M = 64, got ") << type;
  return success();
}

/// The decisions the preparation passes make, which the patterns lower but
/// do not make: each missing one is reported at its op with the pass that
/// makes it.
static LogicalResult verifyPrepared(ModuleOp module,
                                    const LaunchAnalysis &analysis) {
  WalkResult result = module.walk([&](Operation *op) {
    auto missing = [&](StringRef what, StringRef pass) {
      op->emitOpError("has no ")
          << what << ": run " << pass << " before convert-croq-to-gpu";
      return WalkResult::interrupt();
    };
    if (auto alloc = dyn_cast<EventAllocOp>(op);
        alloc && isMBarrierEvent(alloc.getEvent()) && !alloc.getArrivals())
      return missing("arrival count", "croq-assign-arrivals");
    if (needsElection(op, analysis))
      return missing("election of the one thread of its group that runs it "
                     "(it runs between parallel levels)",
                     "croq-elect-issuers");
    if (auto wait = dyn_cast<EventWaitOp>(op);
        wait && isMBarrierEvent(wait.getEvent()) && !wait.getParity())
      return missing("phase parity", "croq-assign-phases");
    if (auto copy = dyn_cast<TmaCopyOp>(op); copy && kernelOf(copy)) {
      if (!copy.getTensorMap())
        return missing("tensor map", "croq-materialize-tma");
      if (!copy.getIssuer())
        return missing("issuer", "croq-elect-issuers");
    }
    if (auto trigger = dyn_cast<EventTriggerOp>(op);
        trigger && needsMmaCommit(trigger))
      return missing("commit of the warpgroup MMAs before it",
                     "croq-pipeline-mma");
    if (needsMmaCompletion(op))
      return missing("commit of the warpgroup MMAs that write its "
                     "accumulator",
                     "croq-pipeline-mma");
    if (auto trigger = dyn_cast<EventTriggerOp>(op);
        trigger && !trigger.getAfter().empty() && !trigger.getExpectTx())
      return missing("expect_tx for the TMA loads it binds",
                     "croq-materialize-tma");
    if (auto trigger = dyn_cast<EventTriggerOp>(op);
        trigger && trigger.getExpectTx() && !trigger.getIssuer())
      return missing("issuer", "croq-elect-issuers");
    // The roles of one dispatch must be disjoint: the switch runs one role
    // per warpgroup.
    if (auto specialized = dyn_cast<WarpSpecializeOp>(op)) {
      Operation *unknown = nullptr;
      std::optional<RoleOverlap> overlap =
          findRoleOverlap(specialized.getRoles(), &unknown);
      if (unknown) {
        unknown->emitOpError("is a role whose threads cannot be computed "
                             "at compile time; roles need constant "
                             "predicates over parallel indices");
        return WalkResult::interrupt();
      }
      if (overlap) {
        overlap->later->emitOpError(
            "shares warpgroups with an earlier role of its "
            "croq.warp_specialize; one dispatch runs one role per warpgroup, "
            "so give each its own warpgroups");
        return WalkResult::interrupt();
      }
    }
    if (auto load = dyn_cast<MmaLoadOp>(op);
        load && load.getResult().getType().getScope() == Level::Warpgroup &&
        load.getResult().getType().getRole() != FragRole::Meta) {
      memref::AllocOp buffer = viewedBuffer(load.getSource());
      if (buffer && !buffer->hasAttr(kSwizzleAttrName))
        return missing("shared layout for the buffer it reads",
                       "croq-plan-shared-layout");
    }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

/// True when `v` may be computed from the indices of the thread-level
/// parallel `threads` (a value from outside its body is not). Values that
/// loops and branches carry (a mutable assigned under an `if`, in a loop)
/// follow what their regions yield.
static bool usesThreadIndex(Value v, ParallelOp threads) {
  SmallVector<Value> work{v};
  DenseSet<Value> seen;
  auto yieldedBy = [&](Operation *op) {
    for (Region &region : op->getRegions())
      for (Block &block : region)
        if (!block.empty() && block.back().hasTrait<OpTrait::IsTerminator>())
          llvm::append_range(work, block.back().getOperands());
  };
  while (!work.empty()) {
    Value at = work.pop_back_val();
    if (!seen.insert(at).second)
      continue;
    if (auto arg = dyn_cast<BlockArgument>(at)) {
      Operation *owner = arg.getOwner()->getParentOp();
      if (owner == threads)
        return true;
      // An induction variable or a loop-carried value: the loop's operands
      // and what its body yields.
      if (owner && threads->isProperAncestor(owner)) {
        llvm::append_range(work, owner->getOperands());
        yieldedBy(owner);
      }
      continue;
    }
    Operation *def = at.getDefiningOp();
    if (!threads->isProperAncestor(def))
      continue;
    llvm::append_range(work, def->getOperands());
    yieldedBy(def);
  }
  return false;
}

/// An MMA that the threads of a thread-level body run together (`group-4,
/// t by 128 : thread`; `group, lane by 32 : thread`) reads and writes one
/// tile for them all: a view that differs between the threads would give
/// each its own part of different tiles.
static LogicalResult checkSharedMmaOperands(Operation *op) {
  auto threads = op->getParentOfType<ParallelOp>();
  if (!threads || threads.getLevel() != Level::Thread)
    return success();
  for (Value operand : op->getOperands()) {
    if (isa<FragType>(operand.getType()) || !usesThreadIndex(operand, threads))
      continue;
    return op->emitOpError("runs once for all the threads of its "
                           "thread-level parallel, which do it together, "
                           "but this operand is computed from their index, "
                           "so it differs between them; index MMA tiles by "
                           "the warp or warpgroup, not the thread");
  }
  return success();
}

/// Checks, before rewriting anything, the preconditions that depend on
/// where ops run, so that each failure is reported once at its op.
static LogicalResult verifyLowerable(ModuleOp module,
                                     const LaunchAnalysis &analysis) {
  auto checkFragments = [&](Operation *op) -> LogicalResult {
    SmallVector<Type> types(op->getOperandTypes());
    llvm::append_range(types, op->getResultTypes());
    for (Type type : types)
      if (auto frag = dyn_cast<FragType>(type))
        if (failed(frag.getScope() == Level::Warpgroup
                       ? checkWarpgroupFragment(op, analysis, frag)
                       : checkWarpFragment(op, analysis, frag)))
          return failure();
    if (isa<MmaLoadOp, MmaStoreOp, MmaOp>(op))
      return checkSharedMmaOperands(op);
    return success();
  };
  WalkResult result = module.walk([&](Operation *op) {
    if (!analysis.hasScope(op))
      return WalkResult::advance();
    const LaunchAnalysis::Scope &scope = analysis.getScope(op);
    if (auto alloc = dyn_cast<memref::AllocOp>(op);
        alloc && getStorage(alloc.getType()) == Storage::Shared) {
      // Run-time extents are sized on the host at the launch, so they must
      // be computable there (from the kernel's arguments, not its indices);
      // swizzled buffers (TMA, wgmma) need static tiles.
      ParallelOp kernel = kernelOf(alloc);
      bool hostSized = llvm::all_of(alloc.getDynamicSizes(), [&](Value v) {
        return kernel && isHostComputable(v, kernel);
      });
      if (!alloc.getType().getLayout().isIdentity() || !hostSized ||
          (!alloc.getType().hasStaticShape() &&
           alloc->hasAttr(kSwizzleAttrName))) {
        alloc.emitOpError("a shared buffer needs extents known at the launch "
                          "(constants, or computed from the kernel's "
                          "arguments) and, when TMA or wgmma use it, "
                          "static ones; got ")
            << alloc.getType();
        return WalkResult::interrupt();
      }
    }
    if (auto copy = dyn_cast<DmaCopyOp>(op)) {
      bool cooperative = !scope.copiesPerThread && scope.manyThreads();
      if (cooperative && scope.inThreads &&
          !selectsWholeGroups(copy, scope.groupLevel)) {
        copy.emitOpError("is a cooperative copy by a ")
            << stringifyLevel(scope.groupLevel)
            << ", but the croq.inthreads around it selects only some of its "
               "threads; select whole instances (test indices of the '"
            << stringifyLevel(scope.groupLevel)
            << "' level or above) or copy outside the inthreads region";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    }
    // Code between levels runs once per instance of the level: a device
    // function or assembly without results runs in one elected thread
    // (croq-elect-issuers); one with results would give them to one thread.
    if (isa<CallOp, LLVM::InlineAsmOp>(op) && op->getNumResults() != 0 &&
        !scope.perThread && scope.manyThreads()) {
      op->emitOpError("gives a value to every thread of its ")
          << stringifyLevel(scope.groupLevel) << " ("
          << (scope.groupSize == LaunchAnalysis::kRuntimeThreads
                  ? std::string("a run-time count of")
                  : std::to_string(scope.groupSize))
          << " threads), but the level's code runs once, in one thread; "
             "call it from the body of a thread-level parallel, where each "
             "thread has its own";
      return WalkResult::interrupt();
    }
    if (auto named = dyn_cast<NamedBarrierOp>(op)) {
      // croq's warpgroup barriers take the highest ids the program leaves.
      std::optional<int64_t> id = getConstantIntValue(named.getId());
      if (id && (*id <= 0 || *id > kWarpgroupBarrierTop)) {
        named.emitOpError("uses barrier id ")
            << *id << "; named barriers are 1 to " << kWarpgroupBarrierTop
            << " (barrier 0 is the block's, sync.shared)";
        return WalkResult::interrupt();
      }
      int64_t warpgroups = scope.runtimeBlock()
                               ? 0
                               : (scope.blockDim + 127) / 128;
      if (warpgroups > 1 &&
          static_cast<int64_t>(
              warpgroupBarrierIds(warpgroups, scope.programBarrierIds)
                  .size()) < warpgroups) {
        named.emitOpError("leaves croq too few named barriers: this "
                          "kernel's ")
            << warpgroups << " warpgroups need one each besides the "
            << llvm::popcount(scope.programBarrierIds)
            << " ids the program uses; use fewer distinct ids";
        return WalkResult::interrupt();
      }
    }
    if (isa<MmaLoadOp, MmaOp, MmaStoreOp>(op) && failed(checkFragments(op)))
      return WalkResult::interrupt();
    if (auto load = dyn_cast<MmaLoadOp>(op);
        load && load.getResult().getType().getRole() != FragRole::Acc &&
        load.getResult().getType().getRole() != FragRole::Meta &&
        failed(consumerLayout(load)))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

struct ConvertCroqToGPUPass
    : mlir::croq::impl::ConvertCroqToGPUPassBase<ConvertCroqToGPUPass> {
  using ConvertCroqToGPUPassBase::ConvertCroqToGPUPassBase;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // What the chip cannot run first: no preparation pass would help.
    if (failed(reportUnsupported(module, chip)))
      return signalPassFailure();
    auto &launches = getAnalysis<LaunchAnalysis>();
    if (!launches.isValid() || failed(verifyPrepared(module, launches)) ||
        failed(verifyLowerable(module, launches)))
      return signalPassFailure();

    MLIRContext *context = &getContext();
    TypeConverter converter;
    populateCroqToGPUTypeConversions(converter);

    ConversionTarget target(*context);
    target.addIllegalDialect<CroqDialect>();
    target.addLegalDialect<arith::ArithDialect, gpu::GPUDialect,
                           LLVM::LLVMDialect, memref::MemRefDialect,
                           NVVM::NVVMDialect,
                           nvgpu::NVGPUDialect, scf::SCFDialect,
                           vector::VectorDialect>();
    configureCroqToGPUConversionLegality(target, converter);

    RewritePatternSet patterns(context);
    populateCroqToGPUConversionPatterns(converter, patterns, launches);
    populateCroqToGPUStructuralConversions(converter, patterns, target);
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      return signalPassFailure();
    module.walk([](memref::ViewOp view) { view->removeAttr(kSwizzleAttrName); });
  }
};

} // namespace
