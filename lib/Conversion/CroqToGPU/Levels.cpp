//===- Levels.cpp - parallel levels, roles and barriers ---------------------===//
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

using namespace mlir;
using namespace mlir::croq;
using namespace mlir::croq::detail;

namespace mlir::croq::detail {

/// Whether the host can run `def` in place of the kernel: an op of values
/// without memory effects or regions. A division may trap on a zero, which
/// the host entry point refuses before computing it; a block's cluster rank
/// exists only in the kernel.
static bool runsOnHost(Operation *def) {
  return !def->getNumRegions() && isMemoryEffectFree(def) &&
         !isa<ClusterRankOp>(def);
}

/// Whether hostValue can compute `value` before `kernel`.
bool isHostComputable(Value value, Operation *kernel) {
  Operation *def = value.getDefiningOp();
  Operation *owner =
      def ? def : cast<BlockArgument>(value).getOwner()->getParentOp();
  if (!owner || !kernel->isAncestor(owner))
    return true;
  return def && runsOnHost(def) &&
         llvm::all_of(def->getOperands(), [&](Value operand) {
           return isHostComputable(operand, kernel);
         });
}

} // namespace mlir::croq::detail

namespace {

/// Moves the body of a croq region op before `op`, replacing the block
/// arguments, and drops its croq.yield.
static void inlineBody(ConversionPatternRewriter &rewriter, Region &body,
                       Operation *op, ValueRange replacements) {
  Block *block = &body.front();
  rewriter.eraseOp(block->getTerminator());
  rewriter.inlineBlockBefore(block, op, replacements);
}

/// `value`, used in `kernel`, computed before it: values from outside are
/// themselves, pure region-free ops of such values are cloned at the
/// builder's point; a kernel index or anything else fails.
static FailureOr<Value> hostValue(ConversionPatternRewriter &b, Value value,
                                  Operation *kernel, IRMapping &map) {
  if (Value mapped = map.lookupOrNull(value))
    return mapped;
  Operation *def = value.getDefiningOp();
  Operation *owner =
      def ? def : cast<BlockArgument>(value).getOwner()->getParentOp();
  // From outside the kernel (a function argument may already have been
  // converted: its replacement).
  if (!owner || !kernel->isAncestor(owner)) {
    Value remapped = b.getRemappedValue(value);
    return remapped ? remapped : value;
  }
  if (!def || !runsOnHost(def))
    return failure();
  for (Value operand : def->getOperands()) {
    FailureOr<Value> host = hostValue(b, operand, kernel, map);
    if (failed(host))
      return failure();
    if (*host != operand)
      map.map(operand, *host);
  }
  Operation *clone = b.clone(*def, map);
  return clone->getResult(cast<OpResult>(value).getResultNumber());
}

/// The most blocks a grid may have in y and in z.
constexpr int64_t kMaxGridYZ = 65535;

/// A host-level block parallel becomes a gpu.launch.
struct KernelLaunchLowering : ScopedPattern<ParallelOp> {
  using ScopedPattern::ScopedPattern;

  LogicalResult
  matchAndRewrite(ParallelOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (op.getParentParallel())
      return failure();
    Location loc = op.getLoc();
    ValueRange bounds = adaptor.getBounds();
    int64_t blockDim = analysis.getInstanceThreads(op);
    bool runtimeBlock = blockDim == LaunchAnalysis::kRuntimeThreads;
    // A block of run-time size may have at most this many threads.
    int64_t most = std::min<int64_t>(
        op.getMaxThreads().value_or(LaunchAnalysis::kMaxBlockThreads),
        LaunchAnalysis::kMaxBlockThreads);
    if (std::optional<int64_t> most = op.getMaxThreads();
        most && !runtimeBlock && blockDim > *most)
      return op.emitOpError("launch bounds allow ")
             << *most << " threads per block, but this kernel's block has "
             << blockDim;

    // Shared buffers become views of the launch's dynamic shared memory.
    SmallVector<memref::AllocOp> sharedAllocs;
    int64_t sharedBytes = 0;
    // Byte offsets: constants until a buffer with run-time extents, values
    // (computed on the host) from there on.
    SmallVector<OpFoldResult> offsets;
    op.getBody().walk([&](memref::AllocOp alloc) {
      if (getStorage(alloc.getType()) != Storage::Shared)
        return;
      sharedAllocs.push_back(alloc);
    });
    // A buffer with run-time extents (a tile of a tensor of symbolic
    // shape) is sized on the host: its extents are computed there and the
    // offsets of the buffers after it, and the launch's size, become values.
    Value dynamicBytes;
    IRMapping hostMap;
    for (memref::AllocOp alloc : sharedAllocs) {
      MemRefType type = alloc.getType();
      // verifyLowerable checked the layout and that run-time extents are
      // computable on the host.
      assert(type.getLayout().isIdentity());
      int64_t elementBytes = getStorageBytes(type.getElementType());
      if (type.hasStaticShape() && !dynamicBytes) {
        // 1024-byte alignment suits every TMA swizzle mode.
        sharedBytes = llvm::alignTo(sharedBytes, 1024);
        offsets.push_back(rewriter.getIndexAttr(sharedBytes));
        sharedBytes += type.getNumElements() * elementBytes;
        continue;
      }
      if (!dynamicBytes)
        dynamicBytes = cIndex(rewriter, loc, sharedBytes);
      Value c1023 = cIndex(rewriter, loc, 1023), c1024 = cIndex(rewriter, loc, 1024);
      Value aligned = arith::MulIOp::create(
          rewriter, loc,
          arith::DivUIOp::create(rewriter, loc,
                                 arith::AddIOp::create(rewriter, loc,
                                                       dynamicBytes, c1023),
                                 c1024),
          c1024);
      offsets.push_back(aligned);
      Value bytes = cIndex(rewriter, loc, elementBytes);
      unsigned next = 0;
      for (int64_t extent : type.getShape()) {
        Value e;
        if (!ShapedType::isDynamic(extent)) {
          e = cIndex(rewriter, loc, extent);
        } else {
          FailureOr<Value> host = hostValue(
              rewriter, alloc.getDynamicSizes()[next++], op, hostMap);
          if (failed(host))
            return op.emitOpError("cannot size a shared buffer on the host");
          e = *host;
        }
        bytes = arith::MulIOp::create(rewriter, loc, bytes, e);
      }
      dynamicBytes = arith::AddIOp::create(rewriter, loc, aligned, bytes);
    }

    Value one = cIndex(rewriter, loc, 1);
    // CUDA launches up to 2^31 - 1 blocks in x but only 65535 in y and z.
    // The second and later extents go to y and z when they are constants
    // within those limits; otherwise (a run-time row count, say) the whole
    // grid is linearized into x, first extent fastest, and the body
    // recovers each index from blockIdx.x. A cluster spans x, so a
    // clustered grid keeps its dimensions.
    bool linearize = false;
    if (bounds.size() > 1 && op.getCluster().value_or(1) <= 1) {
      int64_t z = 1;
      for (size_t i = 1; i < bounds.size() && !linearize; ++i) {
        std::optional<int64_t> extent = getConstantIntValue(bounds[i]);
        if (!extent) {
          linearize = true;
        } else if (i == 1) {
          linearize = *extent > kMaxGridYZ;
        } else {
          z *= *extent;
          linearize = z > kMaxGridYZ;
        }
      }
    }
    Value gx = bounds[0], gy = one, gz = one;
    if (linearize) {
      for (Value bound : bounds.drop_front())
        gx = arith::MulIOp::create(rewriter, loc, gx, bound);
    } else {
      gy = bounds.size() > 1 ? bounds[1] : one;
      // A grid of more than three dimensions folds the third and later
      // ones into z (row-major); the body recovers them from blockIdx.z.
      gz = bounds.size() > 2 ? bounds[2] : one;
      for (size_t i = 3; i < bounds.size(); ++i)
        gz = arith::MulIOp::create(rewriter, loc, gz, bounds[i]);
    }
    Value bx;
    if (!runtimeBlock) {
      bx = cIndex(rewriter, loc, blockDim);
    } else {
      // The one thread-side parallel that sets the block's size
      // (LaunchAnalysis): its extents, computed on the host, times the
      // threads of one of its instances.
      ParallelOp sized;
      op.getBody().walk<WalkOrder::PreOrder>([&](ParallelOp child) {
        sized = child;
        return WalkResult::interrupt();
      });
      // The host entry point refuses a size the GPU cannot launch, or the
      // kernel's launch bounds forbid: each extent at least 1 (a negative
      // pair would multiply to a valid count) and the product at most the
      // bound (each extent checked first, so that it cannot overflow).
      std::string where;
      if (auto fileLoc = sized.getLoc()->findInstanceOf<FileLineColLoc>())
        where = " at line " + std::to_string(fileLoc.getLine());
      std::string message = "the run-time extents of the parallel" + where +
                            " make a block of fewer than 1 or more than " +
                            std::to_string(most) + " threads";
      Value maxThreads = cIndex(rewriter, loc, most);
      auto within = [&](Value v) {
        return arith::AndIOp::create(
            rewriter, loc,
            arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::sge, v,
                                  one),
            arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::sle, v,
                                  maxThreads));
      };
      bx = cIndex(rewriter, loc, levelThreads(sized.getLevel()));
      for (Value bound : sized.getBounds()) {
        FailureOr<Value> host = hostValue(rewriter, bound, op, hostMap);
        if (failed(host))
          return sized.emitOpError(
              "has a run-time extent that the launch cannot compute: it must "
              "come from the kernel's arguments, not from values the kernel "
              "computes");
        cf::AssertOp::create(rewriter, loc, within(*host), message);
        bx = arith::MulIOp::create(rewriter, loc, bx, *host);
      }
      cf::AssertOp::create(rewriter, loc, within(bx), message);
    }
    Value smem =
        dynamicBytes
            ? Value(arith::IndexCastOp::create(rewriter, loc,
                                               rewriter.getI32Type(),
                                               dynamicBytes))
            : Value(arith::ConstantIntOp::create(
                  rewriter, loc, rewriter.getI32Type(), sharedBytes));
    Type tokenType;
    SmallVector<Value> deps;
    if (op.getAsync() || adaptor.getStream())
      tokenType = rewriter.getType<gpu::AsyncTokenType>();
    if (Value stream = adaptor.getStream())
      deps.push_back(stream);
    auto launch = gpu::LaunchOp::create(rewriter, loc, gx, gy, gz, bx, one, one,
                                        smem, tokenType, deps);

    Block &launchBody = launch.getBody().front();
    rewriter.setInsertionPointToStart(&launchBody);
    SmallVector<Value> blockIds;
    gpu::Dimension dims[] = {gpu::Dimension::x, gpu::Dimension::y,
                             gpu::Dimension::z};
    if (linearize) {
      // blockIdx.x = i0 + n0 * (i1 + n1 * (i2 + ...)).
      Value rest = gpu::BlockIdOp::create(rewriter, loc, dims[0]);
      for (size_t i = 0; i + 1 < bounds.size(); ++i) {
        blockIds.push_back(
            arith::RemUIOp::create(rewriter, loc, rest, bounds[i]));
        rest = arith::DivUIOp::create(rewriter, loc, rest, bounds[i]);
      }
      blockIds.push_back(rest);
    } else {
      for (size_t i = 0; i < std::min<size_t>(bounds.size(), 3); ++i)
        blockIds.push_back(gpu::BlockIdOp::create(rewriter, loc, dims[i]));
      if (bounds.size() > 3) {
        // blockIdx.z = ((i2 * n3 + i3) * n4 + i4) ...: peel from the last.
        Value rest = blockIds.pop_back_val();
        SmallVector<Value> folded(bounds.size() - 2);
        for (size_t i = bounds.size() - 1; i >= 3; --i) {
          folded[i - 2] =
              arith::RemUIOp::create(rewriter, loc, rest, bounds[i]);
          rest = arith::DivUIOp::create(rewriter, loc, rest, bounds[i]);
        }
        folded[0] = rest;
        blockIds.append(folded.begin(), folded.end());
      }
    }
    Value base;
    if (!sharedAllocs.empty())
      base = gpu::DynamicSharedMemoryOp::create(
          rewriter, loc,
          MemRefType::get({ShapedType::kDynamic}, rewriter.getI8Type(),
                          MemRefLayoutAttrInterface(),
                          sharedAllocs.front().getType().getMemorySpace()));
    // Launch bounds travel with the body through kernel outlining.
    // A block of run-time size is bounded by its launch bounds, or by the
    // most a block may have (`.maxntid`, without which ptxas ignores
    // `.minnctapersm`).
    IntegerAttr maxThreads =
        runtimeBlock ? rewriter.getI64IntegerAttr(most) : IntegerAttr();
    if (op.getMinBlocksAttr() || op.getMaxRegistersAttr() ||
        op.getCooperative() || op.getClusterAttr() || maxThreads)
      LaunchHintsOp::create(rewriter, loc, op.getMinBlocksAttr(),
                            op.getMaxRegistersAttr(),
                            op.getCooperativeAttr(), op.getClusterAttr(),
                            maxThreads);
    auto terminator = gpu::TerminatorOp::create(rewriter, loc);
    // An asynchronous TMA store may still be reading shared memory at the
    // end: each thread waits for its own before the block leaves.
    bool storesInFlight = op.getBody()
                              .walk([](TmaCopyOp copy) {
                                return copy.getAsync() && !copy.isLoad()
                                           ? WalkResult::interrupt()
                                           : WalkResult::advance();
                              })
                              .wasInterrupted();
    inlineBody(rewriter, op.getBody(), terminator, blockIds);
    if (storesInFlight) {
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPoint(terminator);
      NVVM::CpAsyncBulkWaitGroupOp::create(rewriter, loc, 0,
                                           rewriter.getUnitAttr());
    }
    if (op.getCluster().value_or(1) > 1) {
      // No block leaves while another may still arrive on its events or
      // multicast into its shared memory.
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPoint(terminator);
      emitClusterBarrier(rewriter, loc);
    }

    for (auto [alloc, offset] : llvm::zip_equal(sharedAllocs, offsets)) {
      rewriter.setInsertionPoint(alloc);
      Value byteOffset =
          getValueOrCreateConstantIndexOp(rewriter, alloc.getLoc(), offset);
      auto view = rewriter.replaceOpWithNewOp<memref::ViewOp>(
          alloc, alloc.getType(), base, byteOffset, alloc.getDynamicSizes());
      if (Attribute swizzle = alloc->getAttr(kSwizzleAttrName))
        view->setAttr(kSwizzleAttrName, swizzle);
    }

    if (!op.getAsync() && adaptor.getStream()) {
      // parallel<s>: launch on the stream, then wait for it.
      rewriter.setInsertionPointAfter(launch);
      gpu::WaitOp::create(rewriter, loc, Type(),
                          ValueRange{launch.getAsyncToken()});
    }
    rewriter.eraseOp(op);
    return success();
  }
};

/// A nested parallel is inlined; its indices come from the thread id.
struct NestedParallelLowering : ScopedPattern<ParallelOp> {
  using ScopedPattern::ScopedPattern;

  LogicalResult
  matchAndRewrite(ParallelOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!op.getParentParallel() && !op->getParentOfType<gpu::LaunchOp>())
      return failure();
    if (op.getLevel() == Level::Block)
      return failure();
    Location loc = op.getLoc();
    int64_t unit = levelThreads(op.getLevel());
    SmallVector<Value> extents(adaptor.getBounds());
    Value total = extents.front();
    for (Value e : ArrayRef(extents).drop_front())
      total = arith::MulIOp::create(rewriter, loc, total, e);
    // Index of this thread's instance among its siblings:
    // (tid / unit) % (instances per parent instance).
    Value tid = threadId(rewriter, loc);
    Value linear = tid;
    if (unit > 1)
      linear = arith::DivUIOp::create(rewriter, loc, linear,
                                      cIndex(rewriter, loc, unit));
    linear = arith::RemUIOp::create(rewriter, loc, linear, total);
    SmallVector<Value> indices = delinearize(rewriter, loc, linear, extents);

    // Each thread takes the values its own instance yields.
    SmallVector<Value> yielded(
        cast<YieldOp>(op.getBody().front().getTerminator()).getValues());
    inlineBody(rewriter, op.getBody(), op, indices);
    rewriter.replaceOp(op, yielded);
    return success();
  }
};

/// A role's register budget (croq.warp_specialize) as setmaxnreg at the
/// start of `block`, relative to the kernel's entry count
/// (croq-bound-kernel-registers makes that count known to ptxas). A budget
/// equal to the entry count is still set (`inc` to the same count): the
/// warpgroup-aligned instruction tells ptxas that the role's warpgroups run
/// converged, without which it serializes their wgmma (C7520: a wait after
/// each one, about 15% of a GEMM's time).
static void emitRoleRegisters(ConversionPatternRewriter &rewriter,
                              Location loc, int64_t regs, Block *block,
                              int64_t blockDim, int64_t blocks) {
  int64_t entry = entryRegisters(blockDim, blocks);
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPointToStart(block);
  NVVM::SetMaxRegisterOp::create(
      rewriter, loc, static_cast<int32_t>(regs),
      regs < entry ? NVVM::SetMaxRegisterAction::decrease
                   : NVVM::SetMaxRegisterAction::increase);
}

/// `croq.inthreads` becomes `scf.if` on its predicate.
struct InThreadsLowering : ScopedPattern<InThreadsOp> {
  using ScopedPattern::ScopedPattern;

  LogicalResult
  matchAndRewrite(InThreadsOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (op.getRegisters() && !isa<WarpSpecializeOp>(op->getParentOp()))
      return op.emitOpError("sets a register budget (setreg), but is not a "
                            "warp-specialized role: only async regions that "
                            "select whole warpgroups of a warpgroup parallel "
                            "move registers; run croq-warp-specialize, or "
                            "drop the setreg");
    if (op.getNumResults() == 0) {
      auto ifOp = scf::IfOp::create(rewriter, op.getLoc(),
                                    adaptor.getPredicate(),
                                    /*withElseRegion=*/false);
      inlineBody(rewriter, op.getBody(), ifOp.thenBlock()->getTerminator(), {});
      rewriter.eraseOp(op);
      return success();
    }
    // The futures the region yields: its values in the selected threads,
    // the else values in the others (the structural conversion of scf.if
    // converts the types).
    auto ifOp = scf::IfOp::create(rewriter, op.getLoc(), op.getResultTypes(),
                                  adaptor.getPredicate(),
                                  /*withElseRegion=*/true);
    Block &body = op.getBody().front();
    auto yield = cast<YieldOp>(body.getTerminator());
    rewriter.setInsertionPoint(yield);
    rewriter.replaceOpWithNewOp<scf::YieldOp>(yield, yield.getValues());
    rewriter.inlineBlockBefore(&body, ifOp.thenBlock(),
                               ifOp.thenBlock()->end());
    rewriter.setInsertionPointToEnd(ifOp.elseBlock());
    scf::YieldOp::create(rewriter, op.getLoc(), op.getInits());
    rewriter.replaceOp(op, ifOp.getResults());
    return success();
  }
};

/// The roles of a croq.warp_specialize start with their register budgets:
/// one role is an `scf.if`; several become one scf.index_switch on the role
/// the executing warpgroup plays.
struct WarpSpecializeLowering : ScopedPattern<WarpSpecializeOp> {
  using ScopedPattern::ScopedPattern;

  LogicalResult
  matchAndRewrite(WarpSpecializeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    int64_t blockDim = analysis.getScope(op).blockDim;
    int64_t blocks = blocksPerSM(op);
    SmallVector<InThreadsOp> roles = op.getRoles();
    ArrayRef<int32_t> budgets = op.getRegisters();
    if (roles.size() == 1) {
      InThreadsOp role = roles.front();
      Value predicate = rewriter.getRemappedValue(role.getPredicate());
      auto ifOp = scf::IfOp::create(rewriter, role.getLoc(), predicate,
                                    /*withElseRegion=*/false);
      Block *thenBlock = ifOp.thenBlock();
      inlineBody(rewriter, role.getBody(), thenBlock->getTerminator(), {});
      emitRoleRegisters(rewriter, role.getLoc(), budgets.front(), thenBlock,
                        blockDim, blocks);
      rewriter.eraseOp(op);
      return success();
    }
    Location loc = roles.front().getLoc();
    // Role ids by predicate; warpgroups without a role get roles.size(),
    // which no case matches.
    Value id = cIndex(rewriter, loc, roles.size());
    for (int64_t i = roles.size() - 1; i >= 0; --i) {
      Value predicate = rewriter.getRemappedValue(roles[i].getPredicate());
      id = arith::SelectOp::create(rewriter, loc, predicate,
                                   cIndex(rewriter, loc, i), id);
    }
    auto cases = llvm::to_vector(
        llvm::seq<int64_t>(0, static_cast<int64_t>(roles.size())));
    auto dispatch = scf::IndexSwitchOp::create(
        rewriter, loc, TypeRange(), id, cases, cases.size());
    {
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.createBlock(&dispatch.getDefaultRegion());
      scf::YieldOp::create(rewriter, loc);
    }
    for (auto [i, role] : llvm::enumerate(roles)) {
      OpBuilder::InsertionGuard guard(rewriter);
      Block *block = rewriter.createBlock(&dispatch.getCaseRegions()[i]);
      auto yield = scf::YieldOp::create(rewriter, role.getLoc());
      inlineBody(rewriter, role.getBody(), yield, {});
      emitRoleRegisters(rewriter, role.getLoc(), budgets[i], block, blockDim,
                        blocks);
    }
    rewriter.eraseOp(op);
    return success();
  }
};

struct BarrierLowering : ScopedPattern<BarrierOp> {
  using ScopedPattern::ScopedPattern;

  LogicalResult
  matchAndRewrite(BarrierOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    const LaunchAnalysis::Scope &scope = analysis.getScope(op);
    int64_t threads = barrierThreads(op.getLevel(), scope);
    // The block's last group would be partial: its barrier would wait for
    // threads that do not exist.
    if (op.getLevel() != Level::Block && !scope.runtimeBlock() &&
        scope.blockDim > threads && scope.blockDim % threads != 0)
      return op.emitOpError("synchronises groups of ")
             << threads << " threads, but the block's " << scope.blockDim
             << " threads leave its last group partial (it would wait for "
                "threads that do not exist); make the block a multiple of "
             << threads << " threads, or synchronise the block";
    emitGroupBarrier(rewriter, op.getLoc(), op.getLevel(), threads,
                     scope.blockDim, scope.programBarrierIds);
    rewriter.eraseOp(op);
    return success();
  }
};

/// `__bar_sync` / `__bar_arrive`: bar.sync / bar.arrive.
struct NamedBarrierLowering : OpConversionPattern<NamedBarrierOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(NamedBarrierOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (op.getArrive())
      rewriter.replaceOpWithNewOp<NVVM::BarrierArriveOp>(op, adaptor.getId(),
                                                         adaptor.getCount());
    else
      rewriter.replaceOpWithNewOp<NVVM::BarrierOp>(
          op, Type(), adaptor.getId(), adaptor.getCount(),
          /*reductionOp=*/nullptr, /*reductionPredicate=*/Value());
    return success();
  }
};

/// The arrival count and generation of the grid barrier, a global of the
/// module that kernel outlining copies into each kernel's module; the host
/// runtime zeroes it before each cooperative launch (so two launches of
/// one kernel must not run at the same time).
static constexpr StringLiteral kGridBarrierName = "__croq_grid_barrier";

struct ClusterRankLowering : ScopedPattern<ClusterRankOp> {
  using ScopedPattern::ScopedPattern;

  LogicalResult
  matchAndRewrite(ClusterRankOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    // A cluster of one block: the rank is 0.
    if (analysis.getScope(op).clusterSize == 1)
      rewriter.replaceOp(op, cIndex(rewriter, op.getLoc(), 0));
    else
      rewriter.replaceOp(op, clusterRank(rewriter, op.getLoc()));
    return success();
  }
};

/// `sync.barrier : cluster`: barrier.cluster.arrive (release) and
/// barrier.cluster.wait (acquire) in every thread; a block barrier when
/// the clusters are of one block.
struct ClusterBarrierLowering : ScopedPattern<ClusterBarrierOp> {
  using ScopedPattern::ScopedPattern;

  LogicalResult
  matchAndRewrite(ClusterBarrierOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    const LaunchAnalysis::Scope &scope = analysis.getScope(op);
    if (scope.clusterSize == 1)
      emitGroupBarrier(rewriter, op.getLoc(), Level::Block, scope.blockDim,
                       scope.blockDim, scope.programBarrierIds);
    else
      emitClusterBarrier(rewriter, op.getLoc());
    rewriter.eraseOp(op);
    return success();
  }
};

/// A barrier over every block of a cooperative kernel: a block barrier;
/// thread 0 of each block reads the generation, arrives on the count, and
/// the last block to arrive resets the count and advances the generation
/// while the others spin until it does (membar.gl orders each block's
/// writes before its arrival and the others' after the release); a block
/// barrier again.
struct GridBarrierLowering : ScopedPattern<GridBarrierOp> {
  using ScopedPattern::ScopedPattern;

  LogicalResult
  matchAndRewrite(GridBarrierOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *context = op.getContext();
    const LaunchAnalysis::Scope &scope = analysis.getScope(op);
    auto i32 = rewriter.getI32Type();
    auto type = MemRefType::get(
        {2}, i32, MemRefLayoutAttrInterface(),
        gpu::AddressSpaceAttr::get(context, gpu::AddressSpace::Global));
    auto module = op->getParentOfType<ModuleOp>();
    if (!SymbolTable::lookupSymbolIn(module, kGridBarrierName)) {
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(module.getBody());
      memref::GlobalOp::create(
          rewriter, loc, kGridBarrierName, rewriter.getStringAttr("public"),
          type,
          DenseElementsAttr::get(RankedTensorType::get({2}, i32),
                                 rewriter.getI32IntegerAttr(0)),
          /*constant=*/false, /*alignment=*/IntegerAttr());
    }
    emitGroupBarrier(rewriter, loc, Level::Block, scope.blockDim,
                     scope.blockDim, scope.programBarrierIds);
    Value barrier =
        memref::GetGlobalOp::create(rewriter, loc, type, kGridBarrierName);
    Value first = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq,
                                        threadId(rewriter, loc),
                                        cIndex(rewriter, loc, 0));
    auto ifFirst = scf::IfOp::create(rewriter, loc, first,
                                     /*withElseRegion=*/false);
    {
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPoint(ifFirst.thenBlock()->getTerminator());
      Value count = cIndex(rewriter, loc, 0), generation = cIndex(rewriter, loc, 1);
      auto constant = [&](int32_t v) {
        return arith::ConstantIntOp::create(rewriter, loc, i32, v).getResult();
      };
      auto rmw = [&](arith::AtomicRMWKind kind, Value value, Value index) {
        return memref::AtomicRMWOp::create(rewriter, loc, kind, value, barrier,
                                           ValueRange{index})
            .getResult();
      };
      Value blocks = cIndex(rewriter, loc, 1);
      for (gpu::Dimension d :
           {gpu::Dimension::x, gpu::Dimension::y, gpu::Dimension::z})
        blocks = arith::MulIOp::create(
            rewriter, loc, blocks, gpu::GridDimOp::create(rewriter, loc, d));
      Value lastArrival = arith::IndexCastOp::create(
          rewriter, loc, i32,
          arith::SubIOp::create(rewriter, loc, blocks, cIndex(rewriter, loc, 1)));
      Value seen = rmw(arith::AtomicRMWKind::addi, constant(0), generation);
      NVVM::MembarOp::create(rewriter, loc, NVVM::MemScopeKind::GPU);
      Value arrived = rmw(arith::AtomicRMWKind::addi, constant(1), count);
      Value last = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq,
                                         arrived, lastArrival);
      auto ifLast = scf::IfOp::create(rewriter, loc, last,
                                      /*withElseRegion=*/true);
      {
        OpBuilder::InsertionGuard inner(rewriter);
        rewriter.setInsertionPoint(ifLast.thenBlock()->getTerminator());
        rmw(arith::AtomicRMWKind::assign, constant(0), count);
        NVVM::MembarOp::create(rewriter, loc, NVVM::MemScopeKind::GPU);
        rmw(arith::AtomicRMWKind::addi, constant(1), generation);
        rewriter.setInsertionPoint(ifLast.elseBlock()->getTerminator());
        auto spin = scf::WhileOp::create(rewriter, loc, TypeRange{},
                                         ValueRange{});
        rewriter.createBlock(&spin.getBefore());
        Value now = rmw(arith::AtomicRMWKind::addi, constant(0), generation);
        Value waiting = arith::CmpIOp::create(
            rewriter, loc, arith::CmpIPredicate::eq, now, seen);
        scf::ConditionOp::create(rewriter, loc, waiting, ValueRange{});
        rewriter.createBlock(&spin.getAfter());
        scf::YieldOp::create(rewriter, loc);
      }
      NVVM::MembarOp::create(rewriter, loc, NVVM::MemScopeKind::GPU);
    }
    emitGroupBarrier(rewriter, loc, Level::Block, scope.blockDim,
                     scope.blockDim, scope.programBarrierIds);
    rewriter.eraseOp(op);
    return success();
  }
};

/// A fence within the block: membar.cta.
struct FenceLowering : OpConversionPattern<FenceOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(FenceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<NVVM::MembarOp>(op, NVVM::MemScopeKind::CTA);
    return success();
  }
};

/// `stream s;` creates a stream owned by the host function.
struct StreamCreateLowering : OpConversionPattern<StreamCreateOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(StreamCreateOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto wait = gpu::WaitOp::create(rewriter, op.getLoc(),
                                    rewriter.getType<gpu::AsyncTokenType>(),
                                    ValueRange());
    rewriter.replaceOp(op, wait.getAsyncToken());
    return success();
  }
};

} // namespace

void mlir::croq::populateCroqToGPULevelPatterns(TypeConverter &converter,
    RewritePatternSet &patterns, const LaunchAnalysis &analysis) {
  MLIRContext *context = patterns.getContext();
  patterns.add<KernelLaunchLowering, NestedParallelLowering, InThreadsLowering,
               WarpSpecializeLowering, BarrierLowering, GridBarrierLowering,
               ClusterBarrierLowering, ClusterRankLowering>(
      converter, context, analysis);
  patterns.add<StreamCreateLowering, FenceLowering, NamedBarrierLowering>(
      converter, context);
}
