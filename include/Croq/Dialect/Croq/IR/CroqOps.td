//===- CroqOps.td - croq operations ------------------------*- tablegen -*-===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#ifndef CROQ_DIALECT_CROQ_IR_CROQOPS_TD
#define CROQ_DIALECT_CROQ_IR_CROQOPS_TD

include "Croq/Dialect/Croq/IR/CroqInterfaces.td"
include "Croq/Dialect/Croq/IR/CroqTypes.td"
include "mlir/IR/OpAsmInterface.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Croq_Event : Type<CPred<"::llvm::isa<::mlir::croq::EventType>($_self)">,
                      "croq event", "::mlir::croq::EventType">;
def Croq_Future : Type<CPred<"::llvm::isa<::mlir::croq::FutureType>($_self)">,
                       "croq future", "::mlir::croq::FutureType">;
def Croq_Frag : Type<CPred<"::llvm::isa<::mlir::croq::FragType>($_self)">,
                     "croq MMA fragment", "::mlir::croq::FragType">;
def Croq_Stream : Type<CPred<"::llvm::isa<::mlir::croq::StreamType>($_self)">,
                       "croq stream", "::mlir::croq::StreamType">;

//===----------------------------------------------------------------------===//
// Parallel structure
//===----------------------------------------------------------------------===//

def Croq_ParallelOp : Croq_Op<"parallel", [
    AttrSizedOperandSegments,
    RecursiveMemoryEffects,
    SingleBlockImplicitTerminator<"::mlir::croq::YieldOp">,
    DeclareOpInterfaceMethods<RegionBranchOpInterface,
                              ["getRegionInvocationBounds"]>
  ]> {
  let summary = "run a body once per instance of a parallel level";
  let description = [{
    `croq.parallel` is Croqtile's `parallel {a, b} by [x, y] : level`. Its
    body runs SPMD once per instance; the block arguments are the instance
    indices, `0 <= %a < %x`, linearised row-major when there are several.
    Levels from outer to inner are `block` (a CTA of the grid), `warpgroup`
    (Croqtile's `group-4`: 128 threads), `warp` (`group`: 32 threads) and
    `thread`; a nested `croq.parallel` must use a strictly smaller level.
    A block-level parallel at host level is a kernel launch: with `async` the
    launch does not wait for completion, and `stream(%s)` enqueues it on a
    stream. `max_threads` and `min_blocks` (Croqtile's
    `[[launch_bounds(T, N)]]`) bound the block's threads (checked against
    the kernel's block size) and ask for at least N resident blocks per SM;
    `max_registers`
    (`[[maxnreg(N)]]`) caps the registers per thread of the kernel.
    A `cooperative` kernel (`: block<cooperative>`) is launched with all
    its blocks resident at once, so that `croq.grid_barrier` can wait for
    every block. `cluster(C)` (Croqtile's `parallel {cm} by [C] : cluster`
    around the block level) launches the kernel in thread-block clusters
    of C consecutive blocks along the first index (blockIdx.x), which must
    be a multiple of C; `croq.cluster_rank` is a block's rank in its
    cluster, and `croq.tma.copy multicast` and `croq.event.trigger
    cluster` act on every block of it.

    ```mlir
    croq.parallel (%bm, %bn) by [%gm, %gn] : block async stream(%s) {
      %r = croq.parallel (%p) by [%c2] : warpgroup -> (index) {
        ...
        croq.yield %v : index
      }
    }
    ```
  }];
  let arguments = (ins
    Variadic<Index>:$bounds,
    Optional<Croq_Stream>:$stream,
    Croq_LevelAttr:$level,
    UnitAttr:$cooperative,
    UnitAttr:$async,
    OptionalAttr<ConfinedAttr<I64Attr, [IntMinValue<1>]>>:$max_threads,
    OptionalAttr<ConfinedAttr<I64Attr, [IntMinValue<1>]>>:$min_blocks,
    OptionalAttr<ConfinedAttr<I64Attr, [IntMinValue<24>, IntMaxValue<256>]>>:$max_registers,
    OptionalAttr<ConfinedAttr<I64Attr, [IntMinValue<1>, IntMaxValue<8>]>>:$cluster
  );
  let results = (outs Variadic<AnyType>:$results);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [
    OpBuilder<(ins "::mlir::croq::Level":$level, "::mlir::ValueRange":$bounds,
                   CArg<"bool", "false">:$async,
                   CArg<"::mlir::Value", "{}">:$stream,
                   CArg<"::mlir::TypeRange", "{}">:$resultTypes)>
  ];
  let extraClassDeclaration = [{
    /// The instance indices, one per bound.
    ::mlir::Block::BlockArgListType getIndices() {
      return getBody().getArguments();
    }
    /// The nearest enclosing `croq.parallel`, if any.
    ParallelOp getParentParallel() {
      return (*this)->getParentOfType<ParallelOp>();
    }
    /// How many instances the bounds make, when they are all constants.
    std::optional<int64_t> getStaticInstanceCount();
  }];
}

def Croq_LaunchHintsOp : Croq_Op<"launch_hints"> {
  let summary = "the launch bounds a kernel body is compiled with";
  let description = [{
    Emitted by `convert-croq-to-gpu` at the top of a `gpu.launch` body for a
    block-level `croq.parallel` with `min_blocks` or `max_registers`, so
    that the bounds survive kernel outlining; `croq-bound-kernel-registers`
    turns it into `nvvm.minctasm` / `nvvm.maxnreg` on the kernel function
    and erases it. `max_threads` bounds a block whose size is a run-time
    value (`nvvm.maxntid`; a block of constant size gets `nvvm.reqntid`
    from its launch instead).

    ```mlir
    croq.launch_hints min_blocks 2 max_registers 72
    croq.launch_hints max_threads 256
    ```
  }];
  let arguments = (ins
    OptionalAttr<ConfinedAttr<I64Attr, [IntMinValue<1>]>>:$min_blocks,
    OptionalAttr<ConfinedAttr<I64Attr, [IntMinValue<24>, IntMaxValue<256>]>>:$max_registers,
    UnitAttr:$cooperative,
    OptionalAttr<ConfinedAttr<I64Attr, [IntMinValue<1>, IntMaxValue<8>]>>:$cluster,
    OptionalAttr<ConfinedAttr<I64Attr, [IntMinValue<1>, IntMaxValue<1024>]>>:$max_threads
  );
  let assemblyFormat = "(`min_blocks` $min_blocks^)? (`max_registers` $max_registers^)? (`cooperative` $cooperative^)? (`cluster` $cluster^)? (`max_threads` $max_threads^)? attr-dict";
}

def Croq_InThreadsOp : Croq_Op<"inthreads", [
    RecursiveMemoryEffects,
    SingleBlockImplicitTerminator<"::mlir::croq::YieldOp">,
    DeclareOpInterfaceMethods<RegionBranchOpInterface,
                              ["getEntrySuccessorRegions",
                               "getEntrySuccessorOperands"]>
  ]> {
  let summary = "a statically partitioned thread region";
  let description = [{
    `croq.inthreads` runs its body on the threads for which `predicate`
    holds. The predicate may only combine indices of enclosing
    `croq.parallel` ops with constants, so the set of threads is known at
    compile time. Without `async` the region is followed by a barrier of the
    enclosing parallel scope; with `async` (Croqtile's `inthreads.async`)
    regions run concurrently as independent programs, and only the outermost
    `croq.inthreads` may be asynchronous.

    A region that is not async may give TMA futures to the code after it
    (Croqtile's `f = tma.copy.async ...` inside an `inthreads` for a future
    declared before it, waited in another role). Result `i` is the future
    the body yields in the threads the predicate selects, and `else` operand
    `i` in the others. A TMA future names a copy of the block, completed on
    an mbarrier that every thread can wait on, so croq-bind-tma-futures
    counts each yielded copy in the threads outside the region too: a wait
    on the result in any thread waits for the region's copy. Both values
    must hold the data of the same buffers.

    ```mlir
    %f = croq.inthreads (%is_loader) else(%any : !croq.future<tma, async, memref<64x64xf16, 3>>)
        -> !croq.future<tma, async, memref<64x64xf16, 3>> {
      %g = croq.tma.copy async %tile to %buffer : ...
      croq.yield %g : !croq.future<tma, async, memref<64x64xf16, 3>>
    }
    ```

    An async region may carry `registers`, the registers per thread its
    warpgroups run with (Croqtile's `setreg_inc` / `setreg_dec`: 24 to 256
    in steps of 8). croq-warp-specialize gives the role that budget instead
    of one it computes; a region with `registers` that does not become a
    warp-specialized role is an error in the lowering.

    ```mlir
    %is_producer = arith.cmpi eq, %p, %c0 : index
    croq.inthreads async (%is_producer) {
      ...
    }
    croq.inthreads async registers(240) (%is_consumer) { ... }
    ```
  }];
  let arguments = (ins I1:$predicate, Variadic<Croq_FutureType>:$inits,
                       UnitAttr:$async, OptionalAttr<I32Attr>:$registers);
  let results = (outs Variadic<Croq_FutureType>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    (`async` $async^)? (`registers` `(` $registers^ `)`)? ` ` `(` $predicate `)`
    (`else` `(` $inits^ `:` type($inits) `)` `->` type($results))?
    $body attr-dict
  }];
  let hasVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [
    OpBuilder<(ins "::mlir::Value":$predicate, CArg<"bool", "false">:$async)>,
    OpBuilder<(ins "::mlir::Value":$predicate, "::mlir::ValueRange":$inits)>
  ];
  let extraClassDeclaration = [{
    /// The value the body yields for result `i` (the selected threads').
    ::mlir::Value getYielded(unsigned i) {
      return getBody().front().getTerminator()->getOperand(i);
    }
  }];
}

def Croq_WarpSpecializeOp : Croq_Op<"warp_specialize", [
    RecursiveMemoryEffects,
    SingleBlockImplicitTerminator<"::mlir::croq::YieldOp">,
    DeclareOpInterfaceMethods<RegionBranchOpInterface>
  ]> {
  let summary = "the warpgroup roles of a warp-specialized kernel and their "
                "register budgets";
  let description = [{
    Groups the roles of a warpgroup parallel: its body holds only
    `croq.inthreads async` ops, each selecting whole warpgroups, no
    warpgroup in two of them (croq-warp-specialize proves both; the
    conversion rejects overlapping roles, and croq-check-divergence a
    register move under control that is not warpgroup-uniform). `registers` gives each role, in order, the
    registers per thread it runs with (`setmaxnreg`: 24 to 256 in steps of
    8); a budget equal to the kernel's entry count moves nothing. With two
    or more roles, the lowering dispatches once on the role the executing
    warpgroup plays (one `scf.index_switch`). croq-warp-specialize creates
    it; sm_90a is needed to lower it.

    ```mlir
    croq.warp_specialize registers(40, 232) {
      croq.inthreads async (%producer) { ... }
      croq.inthreads async (%consumer) { ... }
    }
    ```
  }];
  let arguments = (ins DenseI32ArrayAttr:$registers);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    `registers` `(` custom<Budgets>($registers) `)` $body attr-dict
  }];
  let hasVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [
    OpBuilder<(ins "::llvm::ArrayRef<int32_t>":$registers)>
  ];
  let extraClassDeclaration = [{
    /// The roles, in order.
    ::llvm::SmallVector<InThreadsOp> getRoles();
  }];
}

def Croq_YieldOp : Croq_Op<"yield", [
    Pure, ReturnLike, Terminator,
    ParentOneOf<["ParallelOp", "InThreadsOp", "WarpSpecializeOp"]>
  ]> {
  let summary = "terminator of croq region ops";
  let description = [{
    Ends the body of `croq.parallel` and `croq.inthreads`, and carries the
    values a nested `croq.parallel` yields. An empty yield is implicit in the
    custom assembly of both ops.

    ```mlir
    croq.yield %acc : !croq.frag<acc, 64x64xf32>
    ```
  }];
  let arguments = (ins Variadic<AnyType>:$values);
  let builders = [OpBuilder<(ins), [{ /* nothing to build */ }]>];
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
  let hasVerifier = 1;
}

def Croq_BarrierOp : Croq_Op<"barrier", [
    DeclareOpInterfaceMethods<Croq_CollectiveOpInterface>]> {
  let summary = "barrier over all threads of one parallel level";
  let description = [{
    Croqtile's `sync.barrier : level` (and `sync.shared`, a block barrier).
    Every thread of the executing `level` instance arrives and waits; a
    `warpgroup` barrier synchronises 128 threads, a `warp` barrier 32.

    ```mlir
    croq.barrier block
    ```
  }];
  let arguments = (ins Croq_LevelAttr:$level);
  let assemblyFormat = "$level attr-dict";
  let hasVerifier = 1;
}

def Croq_NamedBarrierOp : Croq_Op<"named_barrier"> {
  let summary = "a hardware named barrier over a number of threads";
  let description = [{
    Croqtile's `__bar_sync(id, count)` and `__bar_arrive(id, count)`: the
    executing thread arrives at named barrier `id` (0 to 15) of its block,
    which completes when `count` threads (a multiple of 32) have arrived;
    with `sync` it also waits for that. croq's own warpgroup barriers use
    the top ids (15 for warpgroup 0, 14 for 1, ...): a kernel with W
    warpgroups leaves ids 0 to 15 - W to the program, and barrier 0 is the
    block's `sync.shared`.

    ```mlir
    croq.named_barrier %id, %count          // bar.sync
    croq.named_barrier arrive %id, %count   // bar.arrive
    ```
  }];
  let arguments = (ins UnitAttr:$arrive, I32:$id, I32:$count);
  let assemblyFormat = "(`arrive` $arrive^)? $id `,` $count attr-dict";
  let hasVerifier = 1;
}

def Croq_GridBarrierOp : Croq_Op<"grid_barrier"> {
  let summary = "barrier over every block of a cooperative kernel";
  let description = [{
    Croqtile's `sync.barrier : block` in the body of a `block<cooperative>`
    parallel: every thread of every block of the grid arrives, and none
    goes on before all have; memory written before it is visible to every
    thread after it. Only a cooperative kernel, whose blocks are all
    resident at once, can wait for the whole grid.

    ```mlir
    croq.grid_barrier
    ```
  }];
  let assemblyFormat = "attr-dict";
  let hasVerifier = 1;
}

def Croq_ClusterBarrierOp : Croq_Op<"cluster_barrier", [
    DeclareOpInterfaceMethods<Croq_CollectiveOpInterface>]> {
  let summary = "barrier over every thread of a thread-block cluster";
  let description = [{
    Croqtile's `sync.barrier : cluster`: every thread of every block of the
    executing block's cluster arrives, and none goes on before all have.
    Memory written before it (shared or global) by any thread of the
    cluster is visible to every thread of the cluster after it
    (`barrier.cluster.arrive`, which releases, and `barrier.cluster.wait`,
    which acquires, at cluster scope). It must be in the body of a
    block-level `croq.parallel` launched in clusters, outside its inner
    levels and inthreads regions, under loops and branches that are the
    same in every block of the cluster (croq-verify-protocol checks them).

    ```mlir
    croq.cluster_barrier
    ```
  }];
  let assemblyFormat = "attr-dict";
  let hasVerifier = 1;
}

def Croq_ClusterRankOp : Croq_Op<"cluster_rank", [Pure]> {
  let summary = "the rank of the executing block in its thread-block cluster";
  let description = [{
    Croqtile's cluster index (`cm` of `parallel {cm} by [C] : cluster`):
    the rank, `0 <= %r < C`, of the executing block in its cluster of C
    blocks (`%cluster_ctarank`). Only the body of a block-level
    `croq.parallel` with `cluster(C)` has one.

    ```mlir
    %cm = croq.cluster_rank : index
    ```
  }];
  let results = (outs Index:$rank);
  let assemblyFormat = "attr-dict `:` type($rank)";
  let hasVerifier = 1;
}

def Croq_FenceOp : Croq_Op<"fence"> {
  let summary = "a memory fence for the threads of one parallel level";
  let description = [{
    Croqtile's `sync.fence : level`: the executing thread's memory accesses
    before the fence are seen by the threads of its `level` instance before
    those after it. Unlike `croq.barrier` it waits for no other thread. On
    the GPU every level is within one block: `membar.cta`.

    ```mlir
    croq.fence block
    ```
  }];
  let arguments = (ins Croq_LevelAttr:$level);
  let assemblyFormat = "$level attr-dict";
}

//===----------------------------------------------------------------------===//
// Device functions
//===----------------------------------------------------------------------===//

def Croq_CallOp : Croq_Op<"call", [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "a call of a device function written in C++";
  let description = [{
    Croqtile's `call f(args)` in the body of a parallel: the executing
    thread calls the C++ device function `callee`, spelled as in C++
    (`warp_topk<8>`, `ns::f`). A buffer or view operand is passed as a
    generic pointer to its first element; a scalar is passed by value. The
    result, if any, is one scalar. Integers are signless: `unsigned_args`
    (one flag per operand) and `unsigned_result` say which the C++ side
    takes as unsigned (`u32`, `u32 *`). What the function touches is
    unknown: the call may read and write any memory.

    The call stays in croq IR until the kernel's conversion to LLVM (the
    croq dialect's ConvertToLLVMPatternInterface), where it becomes an
    `llvm.call` of an extern "C" shim. croq-link-device-code then compiles
    the file's `__device__` functions with those shims and links them into
    the kernel.

    ```mlir
    croq.call "warp_topk<8>"(%vals, %ids) : (memref<8xf32>, memref<8xi32>) -> ()
    %r = croq.call "lane_sum"(%s, %n) : (memref<32xf32, #gpu.address_space<workgroup>>, i32) -> f32
    ```
  }];
  let arguments = (ins
    StrAttr:$callee,
    Variadic<AnyTypeOf<[AnyMemRef, AnySignlessInteger, AnyFloat, Index]>>:$args,
    OptionalAttr<DenseBoolArrayAttr>:$unsigned_args,
    UnitAttr:$unsigned_result
  );
  let results = (outs Optional<AnyTypeOf<[AnySignlessInteger, AnyFloat]>>:$result);
  let assemblyFormat = [{
    $callee `(` $args `)` attr-dict `:` functional-type($args, $result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Streams
//===----------------------------------------------------------------------===//

def Croq_StreamCreateOp : Croq_Op<"stream.create"> {
  let summary = "a stream owned by the enclosing host function";
  let description = [{
    The seed's `stream s;` inside a `parallel.async` body: a stream owned by
    one call of the enclosing host function. Launches on different streams
    may overlap on the GPU; the function joins every stream it created
    before it returns.

    ```mlir
    %s = croq.stream.create : !croq.stream
    croq.parallel (%i) by [%n] : block async stream(%s) { ... }
    ```
  }];
  let results = (outs Res<Croq_Stream, "", [MemAlloc]>:$stream);
  let assemblyFormat = "attr-dict `:` type($stream)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Events
//===----------------------------------------------------------------------===//

def Croq_EventAllocOp : Croq_Op<"event.alloc"> {
  let summary = "declare an event or an array of events";
  let description = [{
    Croqtile's `shared event full[STAGES];`. The arrival count of each
    generation is derived by the compiler from the threads that statically
    trigger the event; `arrivals` overrides it (`event<N>`). With `ready`
    (`= ready`), generation 0 starts complete, which replaces the bootstrap
    triggers of a full/empty protocol.

    ```mlir
    %full = croq.event.alloc : !croq.event<shared, 2>
    %empty = croq.event.alloc ready : !croq.event<shared, 2>
    %e = croq.event.alloc arrivals 1 : !croq.event<shared>
    ```
  }];
  let arguments = (ins
    UnitAttr:$ready,
    OptionalAttr<ConfinedAttr<I64Attr, [IntPositive]>>:$arrivals
  );
  let results = (outs Res<Croq_Event, "", [MemAlloc]>:$event);
  let assemblyFormat = [{
    (`ready` $ready^)? (`arrivals` $arrivals^)? attr-dict `:` type($event)
  }];
  let hasVerifier = 1;
}

def Croq_EventTriggerOp : Croq_Op<"event.trigger", [AttrSizedOperandSegments]> {
  let summary = "arrive on the current generation of events";
  let description = [{
    `trigger e[i]`: the executing thread arrives on the current generation
    of the selected element. With fewer subscripts than the array rank, it
    arrives on every remaining element. `at(%o)` (Croqtile's `e.at(o)`)
    selects slot `o % N` of a 1-D array by order. `after` binds the bytes of
    asynchronous TMA loads to the arrival (`trigger e after f`).

    `cluster` (Croqtile's `trigger.cluster e`) arrives on the element in
    every block of the executing block's cluster, its own included: each
    block's event then counts the arrivals of the whole cluster. With
    `warp_arrivals` (croq-elect-issuers' choice, where the divergence
    analysis proves each warp converged at the trigger) one lane of each
    warp arrives for the warp's 32 threads once they have all reached it.

    `expect_tx(N)` says that TMA loads complete N bytes on the selected
    element in this generation: the issuing thread's arrival expects them
    (`mbarrier.arrive.expect_tx`). croq-materialize-tma sets it from the
    loads bound to the element (by `bind` or `after`). `issuer<...>` says
    which thread of the group makes that arrival; the others arrive plainly
    (croq-elect-issuers).

    ```mlir
    croq.event.trigger %full[%stage] : !croq.event<shared, 2>
    croq.event.trigger %full at(%o) after %f : !croq.event<shared, 2>, !croq.future<tma, async, memref<64x64xf16, #gpu.address_space<workgroup>>>
    croq.event.trigger %full[%stage] expect_tx(16384) : !croq.event<shared, 2>
    ```
  }];
  let arguments = (ins
    Arg<Croq_Event, "", [MemRead, MemWrite]>:$event,
    Variadic<Index>:$indices,
    Optional<Index>:$order,
    Variadic<Croq_Future>:$after,
    OptionalAttr<ConfinedAttr<I64Attr, [IntPositive]>>:$expectTx,
    OptionalAttr<Croq_IssuerAttr>:$issuer,
    UnitAttr:$cluster,
    UnitAttr:$warpArrivals
  );
  let assemblyFormat = [{
    (`cluster` $cluster^)? (`warp_arrivals` $warpArrivals^)? $event (`[` $indices^ `]`)? (`at` `(` $order^ `)`)? (`after` $after^)?
    (`expect_tx` `(` $expectTx^ `)`)? (`issuer` `` $issuer^)?
    attr-dict `:` type($event)
    (`,` type($after)^)?
  }];
  let hasVerifier = 1;
}

def Croq_EventWaitOp : Croq_Op<"event.wait", [AttrSizedOperandSegments]> {
  let summary = "block until the owed generation of events completes";
  let description = [{
    `wait e[i]`: blocks until the generation of the selected element that
    this waiter is owed has completed, then advances the waiter's own count.
    Waiters do not arrive. `at(%o)` selects slot `o % N` of a 1-D array and
    generation `o / N` explicitly.

    `parity %p` makes the owed generation explicit: the wait is for the
    completion of the selected element's phase of parity `%p` (mbarrier
    phases alternate 0, 1, 0, ...), and it keeps no count of its own.
    croq-assign-phases computes it for every wait; the croq-to-gpu patterns
    lower only waits that have it.

    ```mlir
    croq.event.wait %empty[%stage] : !croq.event<shared, 2>
    croq.event.wait %full at(%o) : !croq.event<shared, 2>
    croq.event.wait %full[%stage] parity %p : !croq.event<shared, 2>
    ```
  }];
  let arguments = (ins
    Arg<Croq_Event, "", [MemRead, MemWrite]>:$event,
    Variadic<Index>:$indices,
    Optional<Index>:$order,
    Optional<I1>:$parity
  );
  let assemblyFormat = [{
    $event (`[` $indices^ `]`)? (`at` `(` $order^ `)`)? (`parity` $parity^)?
    attr-dict `:` type($event)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Futures
//===----------------------------------------------------------------------===//

def Croq_WaitOp : Croq_Op<"wait", [
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "wait for asynchronous futures";
  let description = [{
    `wait f, g`: blocks until the work behind each future has completed and
    its data is visible to the executing scope. Only asynchronous futures can
    be waited.

    ```mlir
    croq.wait %lf0, %rf0 : !croq.future<dma, async, memref<16x16xi32, #gpu.address_space<workgroup>>>, !croq.future<dma, async, memref<16x16xi32, #gpu.address_space<workgroup>>>
    ```
  }];
  let arguments = (ins Variadic<Croq_Future>:$futures);
  let assemblyFormat = "$futures attr-dict `:` type($futures)";
  let hasVerifier = 1;
}

def Croq_FutureDataOp : Croq_Op<"future.data", [Pure]> {
  let summary = "the data a future refers to";
  let description = [{
    Croqtile's `f.data`: the destination buffer of a copy, or the
    accumulator of an asynchronous MMA.

    ```mlir
    %buf = croq.future.data %f : !croq.future<dma, async, memref<16x16xi32, #gpu.address_space<workgroup>>> -> memref<16x16xi32, #gpu.address_space<workgroup>>
    ```
  }];
  let arguments = (ins Croq_Future:$future);
  let results = (outs AnyType:$data);
  let assemblyFormat = "$future attr-dict `:` type($future) `->` type($data)";
  let hasVerifier = 1;
}

def Croq_DmaAnyOp : Croq_Op<"dma.any", [Pure]> {
  let summary = "a placeholder future over a buffer";
  let description = [{
    Croqtile's `f = dma.any;` (and `tma.any`, with a `tma` future type): a
    future that refers to `buffer` and has no work behind it, so that
    `croq.swap` has a partner in a double-buffered pipeline. Waiting on it
    completes at once.

    ```mlir
    %lf1 = croq.dma.any %buf1 : memref<16x16xi32, #gpu.address_space<workgroup>> -> !croq.future<dma, async, memref<16x16xi32, #gpu.address_space<workgroup>>>
    ```
  }];
  let arguments = (ins AnyMemRef:$buffer);
  let results = (outs Croq_Future:$future);
  let assemblyFormat = "$buffer attr-dict `:` type($buffer) `->` type($future)";
  let hasVerifier = 1;
}

def Croq_SwapOp : Croq_Op<"swap", [Pure, AllTypesMatch<["lhs", "rhs", "newLhs", "newRhs"]>]> {
  let summary = "exchange two future handles";
  let description = [{
    `swap(a, b)`: the results are the operands exchanged; buffers do not
    move. Both futures must be of the same kind, asynchrony and data type.
    The op folds away: it only renames SSA values.

    ```mlir
    %a2, %b2 = croq.swap %a, %b : !croq.future<dma, async, memref<16x16xi32, #gpu.address_space<workgroup>>>
    ```
  }];
  let arguments = (ins Croq_Future:$lhs, Croq_Future:$rhs);
  let results = (outs Croq_Future:$newLhs, Croq_Future:$newRhs);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($lhs)";
  let hasFolder = 1;
}

def Croq_RotateOp : Croq_Op<"rotate", [Pure, SameOperandsAndResultType]> {
  let summary = "rotate future handles";
  let description = [{
    `rotate(a, b, c)`: `a <- b, b <- c, c <- a`. The i-th result is operand
    `(i + 1) % n`. Like `croq.swap`, it folds away.

    ```mlir
    %a2, %b2, %c2 = croq.rotate %a, %b, %c : !croq.future<dma, async, memref<64xf32, #gpu.address_space<workgroup>>>, !croq.future<dma, async, memref<64xf32, #gpu.address_space<workgroup>>>, !croq.future<dma, async, memref<64xf32, #gpu.address_space<workgroup>>>
    ```
  }];
  let arguments = (ins Variadic<Croq_Future>:$futures);
  let results = (outs Variadic<Croq_Future>:$rotated);
  let assemblyFormat = "$futures attr-dict `:` type($futures)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Tile views
//===----------------------------------------------------------------------===//

def Croq_ChunkAtOp : Croq_Op<"chunkat", [Pure, AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmResultNames"]>]> {
  let summary = "the tile at given indices of an even division of a view";
  let description = [{
    Croqtile's `t.chunkat(i, _, k)` and `t.chunk(n0, _, n2).at(i, _, k)`.
    Each dimension is either `_` (kept whole) or `%i by N`: divided into `N`
    tiles of extent `dim / N` (integer division), of which tile `%i` is
    selected, at origin `%i * (dim / N)`. `N` is the upper bound of the
    bounded variable `%i` (`#i`), given as a constant or an SSA value.

    ```mlir
    %t = croq.chunkat %rhs[%bn by %nbn, %k by 4] : memref<?x?xf16> -> memref<?x?xf16, strided<[?, 1], offset: ?>>
    %u = croq.chunkat %s[_, %w by 8] : memref<64x128xf16, #gpu.address_space<workgroup>> -> memref<64x16xf16, strided<[128, 1], offset: ?>, #gpu.address_space<workgroup>>
    ```
  }];
  let arguments = (ins
    AnyMemRef:$source,
    Variadic<Index>:$indices,
    Variadic<Index>:$bounds,
    DenseI64ArrayAttr:$static_bounds
  );
  let results = (outs AnyMemRef:$result);
  let assemblyFormat = [{
    $source `[` custom<ChunkList>($indices, $bounds, $static_bounds) `]`
    attr-dict `:` type($source) `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Tile shape implied by the source shape and the static bounds.
    ::llvm::SmallVector<int64_t> inferTileShape();
  }];
}

def Croq_SubspanOp : Croq_Op<"subspan", [Pure, AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmResultNames"]>]> {
  let summary = "the tile of given extents at tile indices of a view";
  let description = [{
    Croqtile's `t.subspan(e0, e1).at(c0, c1)` and
    `t.subspan(e0, e1).step(s0, s1).at(c0, c1)`. The tile has extents `e`
    (`_` keeps the whole dimension); `.at` takes **tile indices**, so the
    origin is `c_k * e_k`, or `c_k * s_k` with a step (one SSA step per
    dimension).

    ```mlir
    %a = croq.subspan %lhs[64, 128] at [%bm, %k] : memref<?x?xf16> -> memref<64x128xf16, strided<[?, 1], offset: ?>>
    %b = croq.subspan %s[64, _] at [%w, %c0] step [%c32, %c1] : memref<128x64xf16> -> memref<64x64xf16, strided<[64, 1], offset: ?>>
    ```
  }];
  let arguments = (ins
    AnyMemRef:$source,
    Variadic<Index>:$extents,
    DenseI64ArrayAttr:$static_extents,
    Variadic<Index>:$indices,
    Variadic<Index>:$steps
  );
  let results = (outs AnyMemRef:$result);
  let assemblyFormat = [{
    $source `[` custom<TileExtents>($extents, $static_extents) `]`
    `at` ` ` `[` $indices `]`
    (`step` ` ` `[` $steps^ `]`)?
    attr-dict `:` type($source) `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Tile shape implied by the source shape and the static extents.
    ::llvm::SmallVector<int64_t> inferTileShape();
  }];
}

//===----------------------------------------------------------------------===//
// Copies
//===----------------------------------------------------------------------===//

def Croq_DmaCopyOp : Croq_Op<"dma.copy", [Croq_CopyOpInterface]> {
  let summary = "cooperative copy between views";
  let description = [{
    `dma.copy src => dst`: every thread of the executing scope takes part in
    the copy, which is followed by a barrier of that scope. With `async`
    (`dma.copy.async`) the copy is issued without waiting and the result is
    an asynchronous future that `croq.wait` completes; a synchronous copy may
    still name a (non-waitable) future. `after` orders the copy after the
    given futures. Source and destination have equal element types and, in
    general, equal shapes. With `partial` their extents may differ (Croqtile's
    copy of a tile into a larger or smaller buffer): the copy covers the
    destination, whose elements past the source's extent in any dimension
    become zero, and source elements past the destination's are not read.

    ```mlir
    croq.dma.copy %a to %s : memref<64x128xf16, strided<[?, 1], offset: ?>> to memref<64x128xf16, #gpu.address_space<workgroup>>
    %f = croq.dma.copy async %a to %s : memref<16x16xi32, strided<[?, 1], offset: ?>> to memref<16x16xi32, #gpu.address_space<workgroup>> -> !croq.future<dma, async, memref<16x16xi32, #gpu.address_space<workgroup>>>
    ```
  }];
  let arguments = (ins
    Arg<AnyMemRef, "", [MemRead]>:$source,
    Arg<AnyMemRef, "", [MemWrite]>:$target,
    Variadic<Croq_Future>:$after,
    UnitAttr:$async,
    OptionalAttr<Croq_SwizzleAttr>:$swizzle,
    UnitAttr:$partial
  );
  let results = (outs Optional<Croq_Future>:$future);
  let assemblyFormat = [{
    (`async` $async^)? (`partial` $partial^)? (`swizzle` `(` $swizzle^ `)`)?
    $source `to` $target
    (`after` $after^)? attr-dict `:` type($source) `to` type($target)
    (`,` type($after)^)? (`->` type($future)^)?
  }];
  let hasVerifier = 1;
}

def Croq_TmaCopyOp : Croq_Op<"tma.copy", [AttrSizedOperandSegments,
    Croq_CopyOpInterface]> {
  let summary = "tensor-memory-accelerator copy between global and shared";
  let description = [{
    `tma.copy[.swiz<N>] g => s` loads a tile from global into shared memory
    (or stores one, `s => g`) with the Hopper TMA engine; the tensor map is
    built on the host. Synchronous, the executing scope waits for it. With
    `async` and `bind %e[%i]` (D1 `tma.copy.async<e[i]>`), completion is
    bound to the event, whose next trigger by the issuing thread expects the
    bytes. With `async` and no event (D2), the result is a future for
    `croq.event.trigger ... after` or `croq.wait`. An async store
    (`shared => global`) does not wait for the TMA engine to read its tile:
    its future's data is that tile, and `croq.wait` on it waits until the
    tile has been read (the block also waits for its stores at its end). `swizzle(N)` must divide the bytes of
    the innermost tile extent: a tile of rows wider than N bytes lies in
    the buffer as panels N bytes wide, and moves as one box per panel.

    `multicast` (Croqtile's `tma.copy.multicast`) loads one tile into the
    same buffer of every block of the cluster: block 0 of the cluster
    issues it, and each block's event (or, synchronous, each block) waits
    for the tile's bytes. The tile must be the same for every block of the
    cluster.

    `map(%m : type)` names the tensor map the copy uses: an
    `!nvgpu.tensormap.descriptor` over the whole global tensor with the
    tile (or, for a tile of several panels, one panel) as its box, built
    before the kernel. croq-materialize-tma creates
    it; the croq-to-gpu patterns lower only copies that have one.
    `issuer<...>` says which threads of the executing group issue the copy
    (croq-elect-issuers).

    ```mlir
    croq.tma.copy async swizzle(128) %g to %s bind %full[%st] : memref<64x64xf16, strided<[?, 1], offset: ?>> to memref<64x64xf16, #gpu.address_space<workgroup>>, !croq.event<shared, 2>
    croq.tma.copy %g to %s map(%m : !nvgpu.tensormap.descriptor<tensor = memref<64x64xf16, #gpu.address_space<workgroup>>, swizzle = none, l2promo = l2promo_128b, oob = zero, interleave = none>) issuer<first> : memref<64x64xf16, strided<[?, 1], offset: ?>> to memref<64x64xf16, #gpu.address_space<workgroup>>
    ```
  }];
  let arguments = (ins
    Arg<AnyMemRef, "", [MemRead]>:$source,
    Arg<AnyMemRef, "", [MemWrite]>:$target,
    Optional<Croq_Event>:$event,
    Variadic<Index>:$eventIndices,
    Optional<AnyType>:$tensorMap,
    UnitAttr:$async,
    OptionalAttr<Croq_SwizzleAttr>:$swizzle,
    OptionalAttr<Croq_IssuerAttr>:$issuer,
    UnitAttr:$multicast
  );
  let results = (outs Optional<Croq_Future>:$future);
  let assemblyFormat = [{
    (`async` $async^)? (`multicast` $multicast^)? (`swizzle` `(` $swizzle^ `)`)? $source `to` $target
    (`bind` $event^ (`[` $eventIndices^ `]`)?)?
    (`map` `(` $tensorMap^ `:` type($tensorMap) `)`)? (`issuer` `` $issuer^)?
    attr-dict `:` type($source) `to` type($target) (`,` type($event)^)?
    (`->` type($future)^)?
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// True for global -> shared, false for shared -> global.
    bool isLoad();
  }];
}

//===----------------------------------------------------------------------===//
// MMA
//===----------------------------------------------------------------------===//

def Croq_MmaFillOp : Croq_Op<"mma.fill", [Pure]> {
  let summary = "an accumulator fragment filled with one value";
  let description = [{
    `mc = mma.fill.f16 0.0f`: the value is converted to the fragment's
    element type.

    ```mlir
    %mc = croq.mma.fill %zero : f32 -> !croq.frag<acc, 64x64xf16>
    ```
  }];
  let arguments = (ins AnyTypeOf<[AnyFloat, AnySignlessInteger]>:$value);
  let results = (outs Croq_Frag:$result);
  let assemblyFormat = "$value attr-dict `:` type($value) `->` type($result)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// True for a fill with a constant zero: an accumulator no MMA wrote.
    bool isZero();
  }];
}

def Croq_MmaLoadOp : Croq_Op<"mma.load", [
    DeclareOpInterfaceMethods<Croq_CollectiveOpInterface>]> {
  let summary = "an operand or accumulator fragment loaded from a view";
  let description = [{
    `ma = mma.load[.swiz<N>] view`. At warp scope this loads registers; at
    warpgroup scope on Hopper it describes the shared-memory tile for wgmma,
    which reads it when the MMA executes (see `croq.mma`). `swizzle` must
    match the swizzle the tile was written with. A warp accumulator may be
    loaded too (`mc = mma.load c_tile;` then `mma.row.col mc, ma, mb;`
    accumulates onto C).

    ```mlir
    %ma = croq.mma.load %tile : memref<16x16xf16, strided<[64, 1], offset: ?>, #gpu.address_space<workgroup>> -> !croq.frag<a, 16x16xf16>
    ```
  }];
  let arguments = (ins
    Arg<AnyMemRef, "", [MemRead]>:$source,
    OptionalAttr<Croq_SwizzleAttr>:$swizzle
  );
  let results = (outs Croq_Frag:$result);
  let assemblyFormat = [{
    (`swizzle` `(` $swizzle^ `)`)? $source attr-dict `:` type($source) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Croq_MmaOp : Croq_Op<"mma", [
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>,
    DeclareOpInterfaceMethods<Croq_CollectiveOpInterface>]> {
  let summary = "matrix multiply-accumulate on fragments";
  let description = [{
    `mma.row.row acc, a, b`: `acc[m, n] += sum_k A[m, k] * B[n, k]`. The
    layout names A then B: `row` A is `[M, K]`, `col` A is `[K, M]`; `row` B
    is `[N, K]` and `col` B is `[K, N]`. The synchronous form returns the new
    accumulator. With `async` (D2 `mma.row.row.async`) the result is a future
    whose data is the new accumulator, read with `croq.future.data` after
    `croq.wait`. On Hopper the operands may describe shared memory that is
    read when the MMA executes, so the op reads memory.

    With `sparse(%meta)` (Croqtile's `mma.row.row.sp acc, a, b, meta`) A is
    2:4 structured-sparse along K, a warpgroup's wgmma.sp: `a` holds the
    two kept elements of each group of four, [M, K / 2], and `meta` (a
    `meta` fragment of M x K) their positions; B is [N, K].

    Integer operands are 8-bit and signed; `unsigned_a` / `unsigned_b`
    read A's / B's bytes as unsigned (mma.sync's and wgmma's `.u8`).

    ```mlir
    %mc1 = croq.mma row_row %mc, %ma, %mb : !croq.frag<acc, 16x16xf32>, !croq.frag<a, 16x16xf16>, !croq.frag<b, 16x16xf16> -> !croq.frag<acc, 16x16xf32>
    %mc2 = croq.mma row_row %mc, %sa, %sb sparse(%me : !croq.frag<meta, 64x32xf16, warpgroup>) : !croq.frag<acc, 64x64xf32, warpgroup>, !croq.frag<a, 64x16xf16, warpgroup>, !croq.frag<b, 64x32xf16, warpgroup> -> !croq.frag<acc, 64x64xf32, warpgroup>
    ```
  }];
  let arguments = (ins
    Croq_MmaLayoutAttr:$layout,
    Croq_Frag:$acc,
    Croq_Frag:$a,
    Croq_Frag:$b,
    Optional<Croq_Frag>:$meta,
    UnitAttr:$async,
    UnitAttr:$unsigned_a,
    UnitAttr:$unsigned_b
  );
  let results = (outs AnyTypeOf<[Croq_Frag, Croq_Future]>:$result);
  let assemblyFormat = [{
    (`async` $async^)? $layout $acc `,` $a `,` $b
    (`sparse` `(` $meta^ `:` qualified(type($meta)) `)`)? attr-dict `:`
    type($acc) `,` type($a) `,` type($b) `->` type($result)
  }];
  let builders = [
    OpBuilder<(ins "Type":$result, "MmaLayout":$layout, "Value":$acc,
                   "Value":$a, "Value":$b, "bool":$async), [{
      build($_builder, $_state, result, layout, acc, a, b, Value(), async,
            /*unsigned_a=*/false, /*unsigned_b=*/false);
    }]>
  ];
  let hasVerifier = 1;
}

def Croq_MmaCoordsOp : Croq_Op<"mma.coords", [Pure]> {
  let summary = "the accumulator element a thread's register holds";
  let description = [{
    The (row, column) of the element that register `index` of the executing
    thread holds in an accumulator of type `frag`. A warpgroup accumulator
    of 64 x N is held as N / 2 elements per thread in the wgmma layout: in
    warp w of the warpgroup, lane l holds in register r row
    16w + l / 4 + 8 ((r mod 4) / 2) and column 8 (r / 4) + 2 (l mod 4) + r mod 2.
    Register tiles of a warpgroup (`frag` in a `group-4` body) are laid out
    the same way, so that an `apply` over them and over an accumulator agree.

    ```mlir
    %row, %col = croq.mma.coords[5] : !croq.frag<acc, 64x128xf32, warpgroup>
    ```
  }];
  let arguments = (ins TypeAttrOf<Croq_Frag>:$frag, I64Attr:$index);
  let results = (outs Index:$row, Index:$col);
  let assemblyFormat = "`[` $index `]` attr-dict `:` $frag";
  let hasVerifier = 1;
}

def Croq_MmaElementOp : Croq_Op<"mma.element", [Pure]> {
  let summary = "one register of the executing thread's part of an accumulator";
  let description = [{
    Register `index` of the accumulator `acc` as the executing thread holds
    it, of a warp's or a warpgroup's (see `FragType::getRegisterCount`, and
    `croq.mma.coords` for which element a warpgroup register is). The MMAs
    that computed `acc` must have completed: croq-pipeline-mma commits
    before it.

    ```mlir
    %v = croq.mma.element %acc[5] : !croq.frag<acc, 64x128xf32, warpgroup> -> f32
    ```
  }];
  let arguments = (ins Croq_Frag:$acc, I64Attr:$index);
  let results = (outs AnyTypeOf<[AnyFloat, AnySignlessInteger]>:$result);
  let assemblyFormat = "$acc `[` $index `]` attr-dict `:` type($acc) `->` type($result)";
  let hasVerifier = 1;
}

def Croq_MmaSetElementOp : Croq_Op<"mma.set_element", [Pure,
    AllTypesMatch<["acc", "result"]>]> {
  let summary = "an accumulator with one register of this thread replaced";
  let description = [{
    `acc` with register `index` of the executing thread set to `value`.

    ```mlir
    %acc2 = croq.mma.set_element %v, %acc[5] : f32, !croq.frag<acc, 64x128xf32, warpgroup>
    ```
  }];
  let arguments = (ins AnyTypeOf<[AnyFloat, AnySignlessInteger]>:$value,
                       Croq_Frag:$acc, I64Attr:$index);
  let results = (outs Croq_Frag:$result);
  let assemblyFormat = "$value `,` $acc `[` $index `]` attr-dict `:` type($value) `,` type($acc)";
  let hasVerifier = 1;
}

def Croq_MmaScaleOp : Croq_Op<"mma.scale", [AttrSizedOperandSegments,
    AllTypesMatch<["sum", "product", "result"]>]> {
  let summary = "an accumulator plus a product scaled by row and tile factors";
  let description = [{
    `result[i, j] = sum[i, j] + product[i, j] * rows[i] * factor`, computed
    in f32 by each thread on its own registers: the block-scaled MMA of
    8-bit floats, where the product of one K block (an accumulator that
    croq.mma computed from zero) is dequantized by A's scale for each row
    and B's scale for the tile before it is added. `rows` is a view of M
    scales, shaped `[M]`, `[M, 1]` or `[1, M]`; rows of it past the end of
    its tensor read as 0. Either scale may be left out (a factor of 1).

    Croqtile's `mma.row.row.scale mc, ma, mb, sa, sb` is an MMA into a
    zero product, then this op; its `mma.scale mc, sa, sb` scales what
    the MMAs into `mc` have accumulated since the last scale (see
    docs/Language.md). The MMAs that computed `product` must have
    completed: croq-pipeline-mma commits before it.

    ```mlir
    %s1 = croq.mma.scale %s0, %p rows %sa : memref<64x1xf32, strided<[?, 1], offset: ?>> times %sb : f32 : !croq.frag<acc, 64x128xf32, warpgroup>
    ```
  }];
  let arguments = (ins Croq_Frag:$sum, Croq_Frag:$product,
                       Arg<Optional<AnyMemRef>, "", [MemRead]>:$rows,
                       Optional<AnyFloat>:$factor);
  let results = (outs Croq_Frag:$result);
  let assemblyFormat = [{
    $sum `,` $product (`rows` $rows^ `:` type($rows))?
    (`times` $factor^ `:` type($factor))? attr-dict `:` qualified(type($result))
  }];
  let extraClassDeclaration = [{
    /// True for the shape of a view of row scales for `rows` rows: [rows],
    /// [rows, 1] or [1, rows].
    static bool isRowScaleShape(::llvm::ArrayRef<int64_t> shape, int64_t rows) {
      return (shape.size() == 1 && shape[0] == rows) ||
             (shape.size() == 2 && ((shape[0] == rows && shape[1] == 1) ||
                                    (shape[0] == 1 && shape[1] == rows)));
    }
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Croq_MmaStoreOp : Croq_Op<"mma.store", [AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<Croq_CollectiveOpInterface>]> {
  let summary = "store an accumulator fragment to a view";
  let description = [{
    `mma.store acc, view`, executed collectively by the fragment's scope.
    Values are converted to the view's element type when both are floats or
    both are integers. With `transpose` (Croqtile's `mma.store.transp`),
    element (i, j) of the accumulator lands at (j, i) of the view, whose
    shape is then the fragment's transposed.

    `rows` and `cols` (Croqtile's `mma.store.mask acc, view, rows[, cols]`)
    store only the elements of the view's first `rows` rows and first `cols`
    columns; a view past the end of its tensor is clipped to the tensor as
    well.

    ```mlir
    croq.mma.store %mc, %out : !croq.frag<acc, 64x64xf16>, memref<64x64xf16, #gpu.address_space<workgroup>>
    croq.mma.store transpose %mc, %outT : !croq.frag<acc, 64x32xf32>, memref<32x64xf32>
    croq.mma.store %mc, %tile rows %r cols %c : !croq.frag<acc, 64x128xf16>, memref<64x128xf16, strided<[?, 1], offset: ?>>
    ```
  }];
  let arguments = (ins Croq_Frag:$value, Arg<AnyMemRef, "", [MemWrite]>:$target,
                       UnitAttr:$transpose, Optional<Index>:$rows,
                       Optional<Index>:$cols);
  let assemblyFormat = "(`transpose` $transpose^)? $value `,` $target (`rows` $rows^)? (`cols` $cols^)? attr-dict `:` type($value) `,` type($target)";
  let builders = [
    OpBuilder<(ins "Value":$value, "Value":$target, "bool":$transpose), [{
      build($_builder, $_state, value, target, transpose, Value(), Value());
    }]>
  ];
  let hasVerifier = 1;
}

def Croq_MmaCommitOp : Croq_Op<"mma.commit", [
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>,
    DeclareOpInterfaceMethods<Croq_CollectiveOpInterface>]> {
  let summary = "commit issued MMAs and wait for them";
  let description = [{
    D1's `mma.commit`: closes the batch of issued warpgroup MMAs and waits
    until at most `pending` batches are in flight. Needed before a
    shared-memory stage that in-flight MMAs read is released.

    Without `pending` the commit waits for every batch, and the depth is
    croq's to choose: croq-pipeline-mma may keep one K iteration in flight
    (`pending 1`). A depth that is set, `pending 0` included, is a decision
    made (the program's `mma.wait<N>`, or croq-pipeline-mma's) and is kept.

    ```mlir
    croq.mma.commit
    croq.mma.commit pending 1
    ```
  }];
  let arguments = (ins
    OptionalAttr<ConfinedAttr<I64Attr, [IntMinValue<0>, IntMaxValue<7>]>>:$pending
  );
  let builders = [
    // A full commit whose depth croq chooses.
    OpBuilder<(ins), [{ build($_builder, $_state, IntegerAttr()); }]>
  ];
  let assemblyFormat = "(`pending` $pending^)? attr-dict";
  let hasVerifier = 1;
}

#endif // CROQ_DIALECT_CROQ_IR_CROQOPS_TD
