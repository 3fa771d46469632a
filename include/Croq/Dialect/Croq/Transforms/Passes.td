//===- Passes.td - croq dialect passes ---------------------*- tablegen -*-===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#ifndef CROQ_DIALECT_CROQ_TRANSFORMS_PASSES_TD
#define CROQ_DIALECT_CROQ_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def CroqReportDivergencePass : Pass<"croq-report-divergence"> {
  let summary = "Report the uniformity of every branch, loop and croq region";
  let description = [{
    Runs the divergence analysis and emits one remark on every `scf.if`,
    `scf.index_switch`, `scf.for`, `scf.while`, `croq.inthreads` and
    `croq.parallel`: `uniform at <level>` (warp, warpgroup, block or grid)
    when the condition, trip count or index that steers it is the same
    across that level, else `divergent within warp`. A branch divergent
    within a warp gets a note that both sides run one after the other, with
    their op counts. Works on croq IR and on the gpu / nvgpu / nvvm IR it
    lowers to.
  }];
}

def CroqCheckDivergencePass : Pass<"croq-check-divergence"> {
  let summary = "Reject collective operations under divergent control";
  let description = [{
    Errors, built on the divergence analysis, for:
    - warp-collective operations (mma.sync, ldmatrix, shuffles, votes,
      elect) under control that is not warp-uniform;
    - warpgroup-collective operations (wgmma, setmaxnreg, warpgroup-scope
      croq.mma) under control that is not warpgroup-uniform;
    - block barriers under control that is not block-uniform;
    - TMA copies and `mbarrier.arrive.expect_tx` executed by every thread
      of a group instead of one.
  }];
}

def CroqBindTmaFuturesPass : Pass<"croq-bind-tma-futures", "ModuleOp"> {
  let summary = "Give every waited TMA future the event that its copy completes";
  let description = [{
    A TMA load completes on an mbarrier, so `wait f` on the future of a
    `croq.tma.copy async` becomes a wait on an event the copy is bound to.
    The pass traces each waited TMA future back, through `croq.swap`,
    `croq.rotate`, `arith.select` and the values that `scf.for`, `scf.if`,
    `scf.index_switch` and `scf.while` carry, to the copies that may have
    produced it. Each shared buffer those copies write gets one element of
    an event allocated at the top of the kernel: buffers that one future
    may name (a double-buffered pipeline that swaps its futures) share an
    event array, one slot per buffer. After each copy the pass adds
    `croq.event.trigger %e[slot] after %f`, and each `croq.wait` on TMA
    futures becomes `croq.event.wait %e[slot] parity %p`. Where the buffer
    is only known at run time the slot is computed from the address of the
    future's data. Each thread counts the copies it issued into each slot
    (a private array beside the event), and a wait takes the parity of its
    slot's latest copy: a future waited twice, or a copy whose future is
    never waited, does not put later waits out of step. A `tma.any`
    placeholder in such a group marks its buffer's slot in a second private
    array, and a wait whose slot is marked returns at once, as one on a
    `dma.any` does; the placeholder does not arrive, so every phase of an
    event is a copy's and has the copy's arrival count.

    A future that leaves a plain `croq.inthreads` region as its result (a
    copy made in one role and waited in another) is traced through the
    region's yield and its else value. The threads the region leaves out
    count the copy right after the region (an `scf.if` on the negated
    predicate), so every thread of the block waits for the phase the copy
    completes. The pass fails where the future a region yields is not a
    copy made directly in its body (under a loop or a branch, or through a
    swap, rotate or select inside it: the others could not tell which copy
    to count), where that copy does not write the buffer of the else
    value, and where the region copies into that buffer a second time.

    The future of an asynchronous TMA store (`%f = croq.tma.copy async
    %tile to %global`, whose data is the shared tile it reads) is not
    bound: its wait stays a `croq.wait`, marked `croq.tma_stores`, which
    the lowering makes a wait for the executing threads' bulk stores to
    have read their tiles, then a barrier of the executing group. The pass
    checks that every write to the tile in the store's role that can
    follow the store (after it, or before it inside a loop around both)
    comes after such a wait, and after the store where the write does.

    It fails on a future whose origin it cannot see (a function argument),
    on a future that may come from a TMA load or a TMA store, on a
    write to a tile an asynchronous TMA store may still be reading, on a
    future that a
    `croq.event.trigger ... after` already binds to an event of the
    program's own, and on a future made under an inthreads role (that does
    not yield it), a branch or a loop that only some of the waiting threads
    run (a thread counts only its own copies, so one that made none would
    not wait).

    ```mlir
    %f = croq.tma.copy async %src to %buf : ... -> !croq.future<tma, async, memref<64x64xf16, 3>>
    croq.wait %f : !croq.future<tma, async, memref<64x64xf16, 3>>
    // becomes
    %e = croq.event.alloc : !croq.event<shared>   // at the top of the kernel
    %f = croq.tma.copy async %src to %buf : ...
    croq.event.trigger %e after %f : !croq.event<shared>, !croq.future<...>
    // ... one more in this thread's count of copies into %e
    croq.event.wait %e parity %p : !croq.event<shared>
    ```
  }];
  let dependentDialects = ["arith::ArithDialect", "gpu::GPUDialect",
                           "memref::MemRefDialect", "scf::SCFDialect"];
}

def CroqVerifyProtocolPass : Pass<"croq-verify-protocol"> {
  let summary = "Check the event and future protocol of every kernel";
  let description = [{
    Runs on croq IR before lowering and reports, at the op:
    - a deadlock: a `croq.event.wait` that no trigger can satisfy in the
      first phase (e.g. a producer waiting on `empty` when the consumer
      triggers `empty` only after waiting on `full`, without the bootstrap
      triggers or `ready`);
    - arrival counts that differ across roles: an event triggered by roles
      of different thread counts never completes a generation consistently;
    - a trigger that can run more than one phase ahead of its waiter: its
      loop never waits on an event the waiting role triggers;
    - an async future that is never waited;
    - a multicast TMA load whose tile, or whether it runs, differs between
      the blocks of a cluster (it depends on the block's rank or on the
      first block index), or that in a loop does not first wait on an
      event released across the cluster (`trigger.cluster`);
    - a race between `async` roles on a shared buffer: one role writes it
      and another accesses it with no event triggered after the write and
      waited before the access (an error when the role waits on such an
      event only after the access, a warning when no event connects the two
      roles at all: the seed chapter's skeleton, whose events come in a
      later chapter, compiles with it).
    Roles are the `croq.inthreads` regions of a kernel; their thread counts
    are computed by evaluating the predicates over the parallel indices.
    Elements of an event array are told apart where their indices are
    constants; a run-time index may name any element.
  }];
}

def CroqWarpSpecializePass : Pass<"croq-warp-specialize"> {
  let summary = "Give the inthreads.async roles of a warpgroup parallel "
                "register budgets";
  let description = [{
    Every `croq.inthreads async` directly in the body of a `warpgroup`
    parallel is a role. The divergence analysis must prove each role's
    predicate uniform across a warpgroup (a role is a set of whole
    warpgroups); otherwise the pass fails at the role.

    A role is a producer when it copies (`croq.dma.copy`, `croq.tma.copy`)
    and does no MMA and no floating-point arithmetic; every other role is a
    consumer. Producers get `producer-registers` per thread; consumers share
    what is left of the 64K-register file, rounded down to a multiple of 8
    and capped at `max-registers`. The roles move into a
    `croq.warp_specialize` op that declares the budgets, one per role, which
    convert-croq-to-gpu lowers to `nvvm.setmaxregister` at each role's
    entry. The pass fails when
    the roles cannot fit in the register file (fewer than 24 registers per
    consumer thread), when two roles select the same warpgroup (it would
    move its registers twice), and when a role selects no warpgroup.

    When no warpgroup runs two roles (checked by evaluating the predicates
    over the parallel indices) and only pure ops stand between them, those
    ops move before the first role and all the roles share one
    `croq.warp_specialize`, which convert-croq-to-gpu lowers to a single
    `scf.index_switch` on the role the warpgroup plays; otherwise each role
    gets a `croq.warp_specialize` of its own (one branch per role).

    ```mlir
    croq.inthreads async (%producer) { ... }
    croq.inthreads async (%consumer) { ... }
    // becomes
    croq.warp_specialize registers(40, 232) {
      croq.inthreads async (%producer) { ... }
      croq.inthreads async (%consumer) { ... }
    }
    ```

    Example: 1 producer and 2 consumer warpgroups get 40 and 232 registers.

    A kernel without `[[launch_bounds(_, N)]]` whose consumers hold MMA
    accumulators gets `min_blocks = 2` on its block parallel when two of its
    blocks fit on an SM: their static shared buffers (each padded to 1 KiB,
    plus the 1 KiB the SM reserves per block) in 227 KiB, and the registers
    of two blocks (ptxas's entry count, and the consumers' share of half the
    file) cover the accumulators with 40 to spare, so that one block's
    epilogue overlaps the other's main loop. With min_blocks N (written or
    chosen), the budgets share 64K / N registers.
  }];
  let options = [
    Option<"producerRegisters", "producer-registers", "int64_t",
           /*default=*/"40",
           "registers per thread of a producer role (24 to 256, multiple of 8)">,
    Option<"maxRegisters", "max-registers", "int64_t", /*default=*/"240",
           "most registers per thread given to a consumer role">
  ];
}

def CroqInsertBarriersPass : Pass<"croq-insert-barriers"> {
  let summary = "Place a barrier between every conflicting pair of "
                "shared-memory accesses, and only there";
  let description = [{
    A shared-memory hazard analysis in the manner of Triton's Membar. Each
    kernel (block-level `croq.parallel`) is walked in program order with the
    shared accesses made since the last barrier: loops twice (one
    iteration's accesses meet the next one's), branches joined, and the
    `inthreads.async` roles of one parallel side by side. A read after a
    write, a write after a read or a write after a write of one buffer by
    threads that may differ gets a `croq.barrier` before the later access,
    lifted to the region that holds both:

    - `block` level, or `warpgroup` inside an `inthreads.async` role (cross-
      role order belongs to events);
    - at a point that the divergence analysis proves uniform over those
      threads; where none exists (both accesses inside one `inthreads` that
      only part of the block runs) the pass fails at the later access.

    Writes: `dma.copy` targets (at the issue of `dma.copy.async`), `tma.copy`
    targets (which only have to follow earlier accesses: their waiters'
    mbarrier wait orders the landing), `mma.store`, stores. Reads: copy
    sources, `mma.load`, shared `mma` operands, loads. An access a thread
    makes to its own elements in a thread-level parallel needs no barrier
    against another such access of the same parallel (Croqtile gives them
    program order, with no implicit sync). `croq.event.wait` and
    `croq.barrier` order everything before them.

    `convert-croq-to-gpu` emits no hazard barriers of its own: run this pass
    first (the `croq-to-nvvm` pipeline does).
  }];
  let dependentDialects = ["mlir::croq::CroqDialect"];
}


def CroqFoldMmaScalesPass : Pass<"croq-fold-mma-scales"> {
  let summary = "Scale a loop's block-scaled MMAs once, after the loop";
  let description = [{
    A loop whose accumulator is `croq.mma.scale %acc, %p rows %R times %F`
    of a product `%p` that croq.mma computed from zero, with scales that do
    not change in the loop, carries the products' sum instead and scales it
    once after the loop: `mma.row.row.scale` written on each wgmma of a K
    block then runs as one batch of wgmma and one rescale, as `mma.row.row`
    then `mma.scale` would. The loop must not write the scales' memory, and
    the accumulator must be used only by the scale. The result differs from
    scaling each product only by rounding (one rounding of the scaled sum
    instead of one per product).

    ```mlir
    %s = scf.for %i = %c0 to %c4 step %c1 iter_args(%a = %s0) -> (!acc) {
      %p = croq.mma row_row %zero, %x, %y : ...
      %t = croq.mma.scale %a, %p rows %R : memref<64x1xf32> times %F : f32 : !acc
      scf.yield %t : !acc
    }
    // becomes
    %q = scf.for %i = %c0 to %c4 step %c1 iter_args(%b = %zero2) -> (!acc) {
      %p = croq.mma row_row %b, %x, %y : ...
      scf.yield %p : !acc
    }
    %s = croq.mma.scale %s0, %q rows %R : memref<64x1xf32> times %F : f32 : !acc
    ```
  }];
}

def CroqResultsToOutputsPass : Pass<"croq-results-to-outputs", "ModuleOp"> {
  let summary = "Make the tensors a host function returns output arguments";
  let description = [{
    A `__co__` function may return the tensors it declares (`f32 [M, N] c;
    ... return c;`). A host entry point cannot allocate device memory its
    caller would have to free, so each returned tensor becomes an argument
    the caller passes, appended after the others in result order and named
    `result` (`result0`, `result1`, ... for several). The allocation is
    replaced by the argument; a dimension computed at run time is checked
    against the argument's extent before anything runs. Scalar results
    stay results (the host emitter writes them through pointers).

    A returned tensor must be one the function allocates in its body; the
    pass fails at the return of anything else (a parameter, a view).
  }];
  let dependentDialects = ["cf::ControlFlowDialect", "memref::MemRefDialect",
                           "arith::ArithDialect"];
}

#endif // CROQ_DIALECT_CROQ_TRANSFORMS_PASSES_TD
