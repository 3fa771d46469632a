//===- Passes.td - croq conversion passes ------------------*- tablegen -*-===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#ifndef CROQ_CONVERSION_PASSES_TD
#define CROQ_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertCroqToGPUPass : Pass<"convert-croq-to-gpu", "::mlir::ModuleOp"> {
  let summary = "Lower croq parallel structure, views, copies and futures to "
                "gpu, scf, memref, vector, nvgpu and nvvm";
  let description = [{
    Lowers croq IR whose decisions the preparation passes have made, in
    this order: croq-plan-shared-layout (swizzle of wgmma buffers),
    croq-pipeline-mma (wgmma commits), croq-materialize-tma (tensor maps,
    expect_tx), croq-assign-arrivals (event counts), croq-assign-phases
    (wait parities) and croq-elect-issuers (single-thread stores and TMA
    issuers). Before it rewrites anything, it reports each missing decision
    at its op with the pass that makes it; croq-to-nvvm runs them all.

    Each host-level block `croq.parallel` becomes a `gpu.launch`: its indices
    are `gpu.block_id x/y/z`, the block size is the thread count of its
    level chain (a warpgroup is 128 threads, a warp 32), and its shared
    buffers become views of dynamic shared memory. Nested parallels are
    inlined with indices computed from `gpu.thread_id x` (a warpgroup index
    is `tid / 128`, a warp index `tid / 32`, thread indices linearised
    row-major), followed by a barrier of the enclosing scope when code
    follows them. `croq.inthreads` becomes `scf.if` (plus a scope barrier
    unless async); the roles of a `croq.warp_specialize` become one
    `scf.index_switch` (one `scf.if` for a single role).

    Views become `memref.subview`s. A synchronous `croq.dma.copy` is a
    cooperative copy by the threads of its scope (16-byte vector accesses
    when the layouts allow and the addresses are aligned at run time),
    followed by the scope's barrier; an async copy into shared memory issues
    `cp.async` and commits a group, and `croq.wait` waits for the groups and
    synchronises the scope. Futures become the data they refer to, and
    `croq.swap` / `croq.rotate` / `croq.dma.any` disappear. Warp-scope
    `croq.mma` becomes `nvgpu.mma.sync` (m16n8k16), warpgroup-scope
    `croq.mma` wgmma over croq's own shared-memory descriptors. TMA copies
    become `nvgpu.tma.async.load` / `store` with their tensor maps. Streams
    become `!gpu.async.token`s.

    Shared events become `nvgpu` mbarrier groups, triggers arrivals (with
    expect_tx from the issuer) and waits `mbarrier.try_wait.parity` of their
    parity; the budgets of a `croq.warp_specialize` (from
    croq-warp-specialize) become `nvvm.setmaxregister` at each role's entry,
    and its roles one dispatch. Ops this pass cannot lower
    (for the chip, or at all: local and global events) are reported at
    their own location.
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90a\"",
           "Target GPU: Hopper features (TMA, wgmma, setmaxnreg, mbarrier "
           "waits) are rejected at their op on a chip without them">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::cf::ControlFlowDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::NVVM::NVVMDialect",
    "::mlir::nvgpu::NVGPUDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def CroqAssignArrivalsPass : Pass<"croq-assign-arrivals", "::mlir::ModuleOp"> {
  let summary = "Give every event without an explicit count the number of "
                "threads that trigger it";
  let description = [{
    An mbarrier completes a phase when its arrival count is reached. For
    each `croq.event.alloc` without `arrivals N` (`event<N>` in Croqtile),
    the pass counts the threads that run its triggers and records the
    count as the op's `arrivals` attribute: the threads of the innermost
    `croq.inthreads` around the trigger, else the kernel's block size. It
    fails at the event when a count cannot be computed at compile time.
    An event that is never triggered gets 1. convert-croq-to-gpu runs it
    first when needed; the EventAlloc pattern of
    `populateCroqToGPUConversionPatterns` requires a count and fails at the
    event without one.

    ```mlir
    %full = croq.event.alloc : !croq.event<shared, 2>
    // becomes, when one warpgroup triggers it:
    %full = croq.event.alloc arrivals 128 : !croq.event<shared, 2>
    ```
  }];
}

def CroqPlanSharedLayoutPass
    : Pass<"croq-plan-shared-layout", "::mlir::ModuleOp"> {
  let summary = "Pick the swizzled layout of shared buffers that warpgroup "
                "MMAs read";
  let description = [{
    wgmma reads shared operands only in the layouts TMA writes. For each
    shared buffer (`memref.alloc` in workgroup memory) that a warpgroup
    `croq.mma.load` reads, the pass picks the swizzle span from the bytes of
    a row: 128 for a multiple of 128, else 64 or 32; and records it as the
    buffer's `croq.swizzle` attribute, which the croq dialect verifies. The
    croq-to-gpu patterns then address the buffer in that layout, for copies
    into it and for the wgmma descriptors that read it.

    It fails at the op when a warpgroup operand is not loaded from a shared
    buffer, when the buffer's rows are not 32, 64 or a multiple of 128
    bytes or its rows are not a multiple of 8, when a load asks for another
    swizzle, when a TMA copy fills the buffer without the same swizzle, and
    when anything but copies into the buffer and MMA operand loads uses it.

    ```mlir
    %a = memref.alloc() : memref<2x64x64xf16, #gpu.address_space<workgroup>>
    // becomes, when warpgroup MMAs read it (rows of 128 bytes):
    %a = memref.alloc() {croq.swizzle = 128 : i64} : memref<2x64x64xf16, #gpu.address_space<workgroup>>
    ```
  }];
}

def CroqPipelineMmaPass : Pass<"croq-pipeline-mma", "::mlir::ModuleOp"> {
  let summary = "Place the commits and waits of warpgroup MMAs";
  let description = [{
    wgmma runs asynchronously; `croq.mma.commit pending N` closes the batch
    issued so far and waits until at most N batches are in flight. The pass
    writes two decisions as such ops:
    - In a loop that issues warpgroup MMAs and ends `croq.mma.commit;
      croq.event.trigger ...` (releasing the stages its MMAs read, events of
      at least two elements), one K iteration stays in flight: the commit
      becomes `pending 1`, the triggers release the previous iteration's
      slots (from the second iteration on: the slot values each iteration
      computes are carried into the next as loop values, not recomputed),
      and after the loop a full commit precedes the release of the last
      iteration's slots (the loop's results). Rings of one slot keep the
      plain form, and so do slots that read a loop-carried value (a ring
      slot the program advances itself) or whose thread-dependent part
      comes from ops with regions or memory effects. A commit with an explicit
      depth (`mma.wait<N>`) is the program's choice and is kept.
    - Every other trigger that may follow warpgroup MMAs of its role or
      kernel (earlier in an enclosing block, or in a loop around it) gets a
      full `croq.mma.commit` before it: what it publishes or releases is
      complete.

    ```mlir
    scf.for %k = %c0 to %n step %c1 {
      ...  // wgmma on stage %s
      croq.mma.commit
      croq.event.trigger %empty[%s] : !croq.event<shared, 2>
    }
    // becomes
    %last = scf.for %k = %c0 to %n step %c1 iter_args(%prev = %c0) {
      ...
      croq.mma.commit pending 1
      scf.if (%k != %c0) { croq.event.trigger %empty[%prev] }
      scf.yield %s
    }
    croq.mma.commit
    scf.if (%c0 < %n) { croq.event.trigger %empty[%last] }
    ```
  }];
  let options = [
    Option<"deferMinSlots", "defer-min-slots", "unsigned", /*default=*/"4",
           "Rings of fewer slots keep the plain form (the batch waited for, "
           "its stages released at once): one batch pending holds a slot "
           "back until the next tile has arrived, which leaves a ring of S "
           "slots S - 1 loads in flight. A tuning knob; 2 defers every ring "
           "that can be (with 4, the default, croq reached choreo on 11 of 13 "
           "tuner kernels, with 2 on 5; bench/RESULTS.md)">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::scf::SCFDialect"
  ];
}

def CroqMaterializeTmaPass : Pass<"croq-materialize-tma", "::mlir::ModuleOp"> {
  let summary = "Build the tensor map of every TMA copy and the bytes each "
                "TMA-completed trigger expects";
  let description = [{
    For each `croq.tma.copy` in a kernel, the pass creates before the
    kernel a tensor map over the whole global tensor the copy's global view
    looks into, with the shared tile as its box and the copy's swizzle
    (`nvgpu.tma.create.descriptor` of the tensor cast to an unranked memref;
    one per kernel, tensor and box type), and names it with the copy's `map`
    operand. Each trigger that TMA loads complete on gets the bytes they
    bring as its `expect_tx`: for a load bound with `bind %e[i]` (D1), the
    next trigger of the same element in the same block; for `trigger %e
    after %f` (D2), that trigger. Copies that already have a map are left
    alone.

    It fails at the op when the global view is not of a row-major tensor
    argument of the kernel, when the box is not static, contiguous in
    shared memory, at most 256 per dimension and a multiple of 16 bytes
    innermost, when a swizzled load fills a buffer that no warpgroup MMA
    reads (run croq-plan-shared-layout first), when a D1 load has no
    trigger after it, and when a D2 trigger binds a future twice, binds a
    non-TMA future, or selects its element with a value computed after the
    copy.

    ```mlir
    croq.parallel (%b) by [%n] : block {
      croq.tma.copy %g to %s : memref<64x64xf16, ...> to memref<64x64xf16, #gpu.address_space<workgroup>>
    }
    // becomes
    %u = memref.cast %arg : memref<?x?xf16> to memref<*xf16>
    %m = nvgpu.tma.create.descriptor %u box[%c64, %c64] : memref<*xf16> -> !nvgpu.tensormap.descriptor<...>
    croq.parallel (%b) by [%n] : block {
      croq.tma.copy %g to %s map(%m : !nvgpu.tensormap.descriptor<...>) : ...
    }
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::nvgpu::NVGPUDialect"
  ];
}

def CroqElectIssuersPass : Pass<"croq-elect-issuers", "::mlir::ModuleOp"> {
  let summary = "Pick the single thread that acts for its group";
  let description = [{
    Code between parallel levels runs once per instance of the outer level,
    but every thread of the instance executes it. Where only one may act:
    - A `memref.store` there (not to a local buffer or an alloca) is wrapped
      in `scf.if` of the election test: rank 0 in the group
      (`gpu.thread_id x`, modulo the group size), or, with `use-elect-sync`
      where the divergence analysis proves the warp converged, the lane
      `nvvm.elect.sync` picks in the group's first warp.
    - So is a `croq.call` or an `llvm.inline_asm` without results there:
      what a device function does to memory, one thread does.
    - Each `croq.tma.copy` in a kernel, and each trigger with `expect_tx`,
      gets its `issuer`: `each` where the group is one thread or a
      `croq.inthreads` picks single threads, else `elected` or `first`
      by the same rule.
    - A `croq.event.trigger cluster` that, with `use-elect-sync`, the
      divergence analysis proves warp-converged gets `warp_arrivals`: one
      lane arrives for its warp (a release at cluster scope per warp, not
      per thread).
    - A `croq.barrier` directly before a TMA store with a cooperative
      issuer (only side-effect-free ops between), over the same threads as
      the store's group, is erased: the store's lowering fences the writes
      to its tile and synchronises the group itself.

    ```mlir
    croq.parallel (%b) by [%n] : block {
      memref.store %v, %out[%b] : memref<?xf32>
      croq.parallel (%t) by [%c64] : thread { ... }
    }
    // becomes
    croq.parallel (%b) by [%n] : block {
      %tid = gpu.thread_id x
      %first = arith.cmpi eq, %tid, %c0 : index
      scf.if %first { memref.store %v, %out[%b] : memref<?xf32> }
      ...
    }
    ```
  }];
  let options = [
    Option<"useElectSync", "use-elect-sync", "bool", /*default=*/"false",
           "Elect single threads with elect.sync (sm_90+) where the "
           "divergence analysis proves the warp converged">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::NVVM::NVVMDialect",
    "::mlir::scf::SCFDialect"
  ];
}

def CroqAssignPhasesPass : Pass<"croq-assign-phases", "::mlir::ModuleOp"> {
  let summary = "Make the phase parity every event wait is owed an operand";
  let description = [{
    An mbarrier wait names the parity of the phase it waits for. For each
    `croq.event.wait` without `parity`, the pass computes that parity in IR
    before the wait, from the rule that applies (an event declared `ready`
    starts one generation ahead):
    - `at(%o)`: generation `o / N` of an N-element array.
    - The D1 rule, for a wait in the only loop around it in the kernel
      (step 1), on slot `iv % N` or the event's only slot: iteration
      `k = iv - lb` waits for generation `k / N`. FA3's re-wait
      `arith.select (iv == lb), iv % N, prev` of the previous iteration's
      slot targets generation `(k - 1) / N` after the first iteration; it
      assumes each trigger of the event runs once in every iteration (a
      warning says so when one does not), and a wait under `scf.if`s in the
      loop body beside such a re-wait (FA3's epilogue) takes the rule too. A
      wait in no loop targets generation 0.
    - Any other wait counts at run time: e.g. in a persistent kernel whose K
      loop restarts per tile, or under an `if` its triggers share. The event
      gets one phase bit per element per thread (`memref.alloca` after its
      `croq.event.alloc`), each such wait loads its slot's bit as the parity
      and stores it flipped after the wait. These bits stay in registers
      when every slot index is a constant; otherwise they live in local
      memory.
    - The waits of one event in one warp-specialized role (roles run on
      disjoint threads) use the same rule: when any of them counts, or they
      sit in several loops or places, they all count. A re-wait of the
      previous slot cannot be counted (it would wait for a generation its
      producer fills after it): that is an error.

    It fails at a wait that must count at run time on an event not
    allocated in the kernel.

    ```mlir
    scf.for %k = %c0 to %n step %c1 {
      %s = arith.remui %k, %c2 : index
      croq.event.wait %full[%s] : !croq.event<shared, 2>
    }
    // becomes
    scf.for %k = %c0 to %n step %c1 {
      %s = arith.remui %k, %c2 : index
      // ((k - 0) / 1) / 2, modulo 2, as i1
      croq.event.wait %full[%s] parity %p : !croq.event<shared, 2>
    }
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::memref::MemRefDialect"
  ];
}

def CroqBoundKernelRegistersPass
    : Pass<"croq-bound-kernel-registers", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Let ptxas know the entry register count of kernels that "
                "move registers between warpgroups";
  let description = [{
    `setmaxnreg` takes effect only when ptxas knows how many registers each
    thread has at kernel entry; otherwise it ignores the instruction. Every
    kernel `gpu.func` that contains `nvvm.setmaxregister` and has a known
    block size gets `nvvm.minctasm = 1`, which with the block size fixes
    that count at the register file divided by the block's threads.

    It also moves the launch hints of `croq.launch_hints` onto the kernel:
    `min_blocks` and `max_registers` as `nvvm.minctasm` / `nvvm.maxnreg`,
    `cooperative` as the `croq.cooperative` unit attribute, which the host
    code reads to launch the kernel cooperatively.
  }];
  let dependentDialects = ["::mlir::NVVM::NVVMDialect"];
}

def CroqFastMathPass : Pass<"croq-fast-math", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Approximate f32 division and square roots and flush f32 "
                "denormals in kernels (nvcc's --use_fast_math)";
  let description = [{
    The kernels' f32 operations (f64 and f16 ones are left as they are, as
    nvcc leaves them), once in the LLVM dialect, get the fast-math flags `arcp` (a division may multiply by an approximate
    reciprocal), `afn` (approximate functions, square roots) and
    `contract` (fused multiply-adds, which croq forms anyway); every
    `llvm.func` gets `denormal_fp_math_f32 = "preserve-sign"`, which makes
    the NVPTX backend flush f32 denormals (`.ftz`). No-NaN and no-infinity
    assumptions are not made: nvcc's --use_fast_math does not make them
    either. croqc's `--fast-math` and the croq-to-nvvm pipeline's
    `fast-math` option run it.

    ```mlir
    %q = llvm.fdiv %a, %b : f32
    // becomes
    %q = llvm.fdiv %a, %b {fastmathFlags = #llvm.fastmath<contract, afn, arcp>} : f32
    ```
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def CroqCheckLoweredPass
    : Pass<"croq-check-lowered", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Report what the kernel lowering left unconverted";
  let description = [{
    Runs last in the kernel pipeline, after `reconcile-unrealized-casts`.
    Every op of a kernel module must then be one LLVM IR can take (the llvm
    and nvvm dialects). An op of another dialect, or a
    `builtin.unrealized_conversion_cast` a conversion left behind, is
    reported at its own location, naming the op that was not lowered (for
    a cast: the op that produced its operand), as an internal error of
    croq. Without it, the first sign would be a translation failure at
    `gpu-module-to-binary` that names only the cast.
  }];
}

def CroqExternDynamicSharedMemoryPass
    : Pass<"croq-extern-dynamic-shared-memory", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Declare a kernel's dynamic shared memory `.extern`, aligned "
                "for every TMA swizzle mode";
  let description = [{
    The GPU-to-NVVM conversion gives `gpu.dynamic_shared_memory` an
    `internal` zero-sized `llvm.mlir.global` in address space 3. The NVPTX
    backend demotes an internal global used by one kernel into that kernel
    as a static `.shared .b8` of one byte, so ptxas lays it out among the
    kernel's other static shared variables (the mbarriers): a buffer
    addressed from it can overlap them, or start anywhere in the window.
    Where it lands depends on ptxas and changes under compute-sanitizer.

    This pass gives every zero-sized address-space-3 global of the module
    external linkage, so that it prints as `.extern .shared .b8 name[]`,
    the dynamic shared memory window proper, which starts after all static
    shared variables, and raises its alignment to 1024 bytes: the buffer
    offsets croq computes are aligned for every TMA swizzle mode relative
    to that base.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def CroqLinkDeviceCodePass
    : Pass<"croq-link-device-code", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Compile the C++ device functions that kernels call and "
                "link them into the kernel module";
  let description = [{
    A `croq.call` becomes, in the kernel's conversion to LLVM, a call of an
    extern "C" shim `__croq_call_<callee>`, declared with the callee's C++
    spelling (`croq.callee`) and the C++ types of its result and parameters
    (`croq.signature`). This pass writes, after croq's prelude (the CUDA
    half, bfloat16 and fp8 headers, and croq's element type names `f32`,
    `s32`...), the `__device__` code of the file the module came from (the
    top module's `croq.device_code`, which the Croqtile importer fills), and
    after it one shim per declaration, which calls the callee. C++ resolves
    the templates, namespaces, overloads and conversions. clang compiles
    this, device side only, to LLVM IR, which the pass imports into the
    kernel module as LLVM dialect functions: the shims' definitions replace
    their declarations, and the NVVM serialization inlines them like any
    function of the module. clang's errors are reported at the first call,
    with clang's messages (located in the `.co` file) as a note.

    A callee that the file's device code never names stays external, under
    its own name, with a warning: the PTX then needs separate linking
    (`ptxas -c`, then `nvlink`) with code that defines it
    `extern "C" __device__`. A qualified or templated callee must be
    declared in the file.
  }];
  let options = [
    Option<"clang", "clang", "std::string",
           /*default=*/"::mlir::croq::getDefaultClangPath()",
           "clang++ that compiles the device functions (CUDA, device side)">,
    Option<"toolkit", "toolkit", "std::string", /*default=*/"\"/usr/local/cuda\"",
           "CUDA toolkit whose headers the device functions include">
  ];
  let dependentDialects = ["::mlir::DLTIDialect", "::mlir::LLVM::LLVMDialect",
                           "::mlir::NVVM::NVVMDialect"];
}

def CroqCheckSharedMemoryPass
    : Pass<"croq-check-shared-memory", "::mlir::ModuleOp"> {
  let summary = "Reject a launch whose kernel needs more shared memory than "
                "one block may have";
  let description = [{
    For every `gpu.launch_func` with a constant dynamic shared memory size,
    adds the static shared variables of its kernel's `gpu.module` (the
    mbarriers of events and TMA copies), the padding that aligns the
    dynamic window (`croq-extern-dynamic-shared-memory`) and the dynamic
    size (croq's buffers), and fails at the launch when the sum exceeds
    `limit` bytes, with the breakdown and what to change. The pipeline sets
    the limit from the chip: 232448 bytes (227 KiB) on sm_90.
  }];
  let options = [
    Option<"limit", "limit", "int64_t", /*default=*/"232448",
           "most shared memory bytes one block may use">
  ];
}

def CroqPassTensorMapsByPointerPass
    : Pass<"croq-pass-tensor-maps-by-pointer", "::mlir::ModuleOp"> {
  let summary = "Pass TMA tensor maps to kernels as pointers";
  let description = [{
    After kernel outlining, a `!nvgpu.tensormap.descriptor` kernel argument
    stands for a pointer to the 128-byte tensor map in global memory (the
    host runtime places it there). The GPU-to-NVVM signature conversion
    does not know nvgpu types, so this pass makes such arguments
    `!llvm.ptr`, casts them back to the descriptor type at kernel entry
    (the NVGPU-to-NVVM conversion folds the casts away), and casts the
    matching `gpu.launch_func` operands on the host.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def CroqMergeKernelModulesPass
    : Pass<"croq-merge-kernel-modules", "::mlir::ModuleOp"> {
  let summary = "Put every outlined kernel in one gpu.module";
  let description = [{
    `gpu-kernel-outlining` gives each kernel a `gpu.module` of its own, and
    each module serializes to a PTX or cubin image of its own. A source
    file with several kernels should give one PTX file, as nvcc does for a
    `.cu` file, that ptxas assembles as it is, and one image for the host
    to load. This pass moves the contents of all the kernel modules into
    the first one, renamed `croq_kernels`, and points each
    `gpu.launch_func` at it. A symbol that two modules define (a helper
    function, a shared-memory global) is renamed uniquely in the module it
    comes from first; external declarations of one type are kept once.
    A module with a single kernel module is left as it is.

    ```mlir
    gpu.module @a_kernel { gpu.func @a_kernel() kernel { ... } }
    gpu.module @b_kernel { gpu.func @b_kernel() kernel { ... } }
    gpu.launch_func @a_kernel::@a_kernel ...
    // becomes
    gpu.module @croq_kernels {
      gpu.func @a_kernel() kernel { ... }
      gpu.func @b_kernel() kernel { ... }
    }
    gpu.launch_func @croq_kernels::@a_kernel ...
    ```

    It fails when the modules carry different attributes (targets, data
    layouts): their code could not share one image.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def CroqMarkLaunchesPass
    : Pass<"croq-mark-launches", "::mlir::ModuleOp"> {
  let summary = "Mark the host launches of cooperative and clustered kernels";
  let description = [{
    After `croq-bound-kernel-registers` marks a kernel `croq.cooperative`
    (from its `block<cooperative>` parallel), each `gpu.launch_func` of that
    kernel gets the same unit attribute, which survives serialization: the
    host code reads it there and launches with cuLaunchCooperativeKernel.
    A kernel with `nvvm.cluster_dim` (a `cluster(C)` parallel) gives its
    launches `croq.cluster_blocks = C`, from which the host code refuses a
    grid whose first extent C does not divide.
  }];
}

def CroqMergeInitBarriersPass
    : Pass<"croq-merge-init-barriers", "::mlir::ModuleOp"> {
  let summary = "One barrier after a kernel's consecutive event initialisations";
  let description = [{
    Each shared event group is initialised by thread 0 and followed by a
    barrier (a block barrier, or a cluster barrier when other blocks of
    the cluster arrive on it) before any thread uses it. A kernel that
    declares several groups one after another so waits once per group; the
    cluster barriers among them cost a round trip across the cluster each.

    This pass removes a barrier when the next barrier of the same block
    follows it with nothing in between but operations without memory
    effects and the initialisations of event groups created after it:
    nothing between the two can observe what the first one orders, and
    the second orders all of it. A cluster barrier is kept before a block
    barrier (the block barrier does not order the other blocks); a block
    barrier before a cluster barrier goes.

    ```mlir
    scf.if %first { nvgpu.mbarrier.init %a[...] ... nvvm.fence.mbarrier.init }
    nvvm.cluster.arrive
    nvvm.cluster.wait            // removed, with the arrive
    %b = nvgpu.mbarrier.create ...
    scf.if %first { nvgpu.mbarrier.init %b[...] ... nvvm.fence.mbarrier.init }
    nvvm.cluster.arrive
    nvvm.cluster.wait
    ```
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def CroqCarryLoopRemaindersPass
    : Pass<"croq-carry-loop-remainders", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Carry `k % S` and `k / S` of a loop counter as loop values";
  let description = [{
    A ring of S slots indexes its slot with `k % S` and its phase with
    `(k / S) % 2`, where k counts the loop. For S not a power of two each
    is a 64-bit multiply-high sequence in the kernel's hottest loop (the
    index type is 64 bits wide), on the path between one MMA batch and the
    next. This pass gives the loop two carried values per such divisor
    instead, the remainder and the quotient, advanced by the step with one
    compare and select.

    It applies to `arith.remui`, `arith.remsi`, `arith.divui` and
    `arith.divsi` of an scf.for's counter by a constant S > 1 that is not a
    power of two, where the loop's lower bound is a constant of at least 0
    and its step a constant between 1 and S (the counter is then never
    negative, so signed and unsigned agree, and one step wraps the
    remainder at most once).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::scf::SCFDialect"];
}

def CroqLowerF8ConversionsPass
    : Pass<"croq-lower-f8-conversions", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Lower conversions of 8-bit and sub-byte floats";
  let description = [{
    The NVVM lowering of `arith` has no conversion to or from `f8E4M3FN`,
    `f8E5M2`, `f6E2M3FN`, `f6E3M2FN` and `f4E2M1FN`. In kernels:

    - `arith.extf` from an 8-bit float becomes `nvvm.convert.f8x2.to.f16x2`
      (then `arith.extf` from f16), and `arith.truncf` to one becomes
      `nvvm.convert.f32x2.to.f8x2`, rounding to nearest, saturating to the
      largest finite value (from f32, after `arith.extf` / `arith.truncf`
      to f32 for other types). Needs sm_89 or newer.
    - The 6- and 4-bit floats have conversion instructions only from
      sm_100, so their conversions are integer operations: `arith.extf`
      decodes sign, exponent and mantissa into an f32 (a subnormal as its
      mantissa times the smallest subnormal); `arith.truncf` rounds an f32
      to nearest even and saturates to the largest finite value (the
      formats have no infinity; NaN becomes the largest magnitude).

    First, other arithmetic on these types (negation, comparisons, min and
    max, and conversions to and from integers) is rewritten to run in f32
    between an `arith.extf` and an `arith.truncf` (MLIR's arith emulation
    of unsupported floats).
  }];
  let dependentDialects = ["::mlir::NVVM::NVVMDialect",
                           "::mlir::vector::VectorDialect"];
}

def CroqUnrollFragmentVectorsPass
    : Pass<"croq-unroll-fragment-vectors", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Unroll n-D vector shape casts, broadcasts and element "
                "lists in kernels";
  let description = [{
    MMA fragments are n-D vectors (`tiles x pairs x 2`). Canonicalization
    folds some of their constructions into `vector.shape_cast` or
    `vector.broadcast` of n-D vectors, which the NVVM conversion has no
    pattern for, and fragments are read back with n-D `vector.to_elements`,
    whose LLVM lowering extracts elements from the LLVM array of rows
    without extracting the row first (an `llvm.extractelement` verifier
    error). This pass rewrites them into extracts and inserts of 1-D
    vectors, and n-D `to_elements` / `from_elements` into 1-D ones, with
    the upstream vector patterns.
  }];
  let dependentDialects = ["::mlir::vector::VectorDialect"];
}

def CroqElideWgmmaSyncsPass
    : Pass<"croq-elide-wgmma-syncs", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Drop warpgroup MMA fences, commits and waits that order "
                "nothing";
  let description = [{
    The lowering of each `croq.mma` on warpgroup fragments opens with a
    `wgmma.fence`, and each `mma.commit`, MMA future wait and `mma.store`
    closes a commit group and waits. Over the kernel's control flow graph
    (after scf is lowered to cf), this pass removes:

    - a `wgmma.fence` right after another warpgroup MMA or fence of the
      same block, with only integer arithmetic and struct element reads in
      between: PTX orders accumulator accesses of consecutive wgmma of one
      shape, and no other instruction touched a register. So a batch of
      MMAs has one fence, before its first MMA;
    - a `wgmma.commit_group` that no warpgroup MMA precedes on any path
      since the last commit, when the next commit/wait of its block is
      `wait_group 0` (an empty group that the wait drains anyway);
    - a `wgmma.wait_group N` where at most N groups can be in flight on
      every path (after `wait_group 0` with no commit since, say).

    Calls and inline assembly that may issue warpgroup instructions make the
    state unknown, which keeps everything after them. A call of a
    libdevice function (`__nv_*`, the math of an epilogue) or of a function
    of the module whose body and callees issue none leaves it alone: the
    empty commit and wait of an `mma.store` after an epilogue `apply` that
    calls `__exp` go, and with them the `warpgroup.arrive` ptxas injected
    there (C7519).

    Three rewrites keep ptxas from adding synchronization of its own:

    - the accumulators of each batch's MMAs are pinned to their registers
      before its fence (an empty volatile asm over them, as CUTLASS's
      `warpgroup_fence_operand`), unless an MMA produced them; otherwise
      the copies that spread a zero-filled accumulator over its registers
      land after the fence, and ptxas injects a `warpgroup.arrive` (C7519)
      or a wait (C7517);
    - a drain (a commit, then `wait_group 0`) that opens a conditional
      block and one that opens the block where its paths meet become one
      drain before the branch (a role's trigger under an `if` on one
      thread), which the whole warpgroup runs;
    - a drain that opens a loop body moves to the end of each iteration
      when no MMA is in flight on entry: ptxas otherwise reads the
      accumulator's zeroing on the entry path as a write during a wgmma
      and serializes every wgmma of the kernel (C7515).
  }];
}

def CroqUnrollMmaBatchesPass
    : Pass<"croq-unroll-mma-batches", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Fully unroll short loops of warpgroup MMAs";
  let description = [{
    A `foreach {kk} in [BK / 16]` over the K steps of a tile issues one
    batch of warpgroup MMAs. This pass fully unrolls such loops (constant
    bounds, at most 16 iterations, a warpgroup MMA in the body itself and no
    nested loop), so that the batch is straight-line code:
    croq-elide-wgmma-syncs then sees consecutive MMAs and keeps one fence
    for the batch. (LLVM would unroll the loop later anyway, after the
    fences are fixed.)
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect"];
}

def CroqUnrollHintedLoopsPass
    : Pass<"croq-unroll-hinted-loops", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Unroll the loops the program asks to unroll";
  let description = [{
    `foreach ... : unroll(n)` puts `croq.unroll = n` on its innermost
    `scf.for`. This pass unrolls each such loop in the kernels by n (the
    remainder of a trip count that n does not divide runs in a loop of its
    own), fully when n covers a constant trip count. A loop whose
    iterations each wait on memory (the loads of a reduction, say) then
    has n iterations' loads in flight at once. The loop nest's other loops
    are left to LLVM.

    ```mlir
    scf.for %i = %c0 to %c22 step %c1 {
      ...
    } {croq.unroll = 22 : i64}
    ```
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect"];
}

#endif // CROQ_CONVERSION_PASSES_TD
