// RUN: croq-opt %s --croq-insert-barriers --croq-plan-shared-layout --croq-pipeline-mma --croq-materialize-tma --croq-assign-arrivals --croq-assign-phases --croq-elect-issuers --convert-croq-to-gpu --split-input-file | FileCheck %s
// Every case converted here also lowers all the way to PTX.
// RUN: croq-opt %s --croq-insert-barriers --croq-plan-shared-layout --croq-pipeline-mma --croq-materialize-tma --croq-assign-arrivals --croq-assign-phases --croq-elect-issuers --convert-croq-to-gpu --split-input-file | croq-opt --split-input-file --croq-to-nvvm=format=isa | FileCheck %s --check-prefix=PTX

// A host-level block parallel is a gpu.launch: block indices from
// gpu.block_id, the block size from the thread-level chain. Run-time
// extents past the first may pass CUDA's 65535 blocks in y and z, so such
// a grid is linearized into x (first extent fastest); constant extents
// within the limits keep y and z.
// CHECK-LABEL: func.func @launch_shape
// CHECK-SAME: (%[[M:.*]]: index, %[[N:.*]]: index,
// CHECK: %[[MN:.*]] = arith.muli %[[M]], %[[N]] : index
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %[[MN]], {{.*}} = %c1{{(_[0-9]+)?}}, {{.*}} = %c1{{(_[0-9]+)?}}) threads({{.*}}) in ({{.*}} = %c256{{(_[0-9]+)?}},
// CHECK: %[[B:.*]] = gpu.block_id x
// CHECK: %[[BX:.*]] = arith.remui %[[B]], %[[M]] : index
// CHECK: %[[BY:.*]] = arith.divui %[[B]], %[[M]] : index
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: %[[T:.*]] = arith.remui %[[TID]], %{{.*}} : index
// CHECK: memref.store {{.*}}[%[[BX]], %[[BY]], %[[T]]]
// CHECK: gpu.terminator
func.func @launch_shape(%m: index, %n: index, %out: memref<?x?x256xindex>) {
  %c256 = arith.constant 256 : index
  croq.parallel (%x, %y) by [%m, %n] : block {
    croq.parallel (%t) by [%c256] : thread {
      memref.store %t, %out[%x, %y, %t] : memref<?x?x256xindex>
    }
  }
  return
}

// CHECK-LABEL: func.func @launch_constant_shape
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %arg0, {{.*}} = %c300{{(_[0-9]+)?}}, {{.*}} = %c65535{{(_[0-9]+)?}})
// CHECK: gpu.block_id x
// CHECK: gpu.block_id y
// CHECK: gpu.block_id z
// CHECK-LABEL: func.func @launch_constant_rows
// CHECK: %[[ROWS:.*]] = arith.muli %arg0, %c65536{{(_[0-9]+)?}} : index
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %[[ROWS]], {{.*}} = %c1{{(_[0-9]+)?}}, {{.*}} = %c1{{(_[0-9]+)?}})
func.func @launch_constant_shape(%m: index, %out: memref<?x300x65535xindex>) {
  %c300 = arith.constant 300 : index
  %c65535 = arith.constant 65535 : index
  %c32 = arith.constant 32 : index
  croq.parallel (%x, %y, %z) by [%m, %c300, %c65535] : block {
    croq.parallel (%t) by [%c32] : thread {
      memref.store %t, %out[%x, %y, %z] : memref<?x300x65535xindex>
    }
  }
  return
}
func.func @launch_constant_rows(%m: index, %out: memref<?x65536xindex>) {
  %c65536 = arith.constant 65536 : index
  %c32 = arith.constant 32 : index
  croq.parallel (%x, %y) by [%m, %c65536] : block {
    croq.parallel (%t) by [%c32] : thread {
      memref.store %t, %out[%x, %y] : memref<?x65536xindex>
    }
  }
  return
}

// -----

// A warpgroup index is tid / 128, a warp index inside it (tid / 32) % 4, and
// thread indices are linearised row-major.
// CHECK-LABEL: func.func @level_indices
// CHECK: threads({{.*}}) in ({{.*}} = %[[BLOCK:.*]],
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: %[[G:.*]] = arith.divui %[[TID]], %[[C128:.*]] : index
// CHECK: %[[GI:.*]] = arith.remui %[[G]], %{{.*}} : index
// CHECK: %[[TID2:.*]] = gpu.thread_id x
// CHECK: %[[W:.*]] = arith.divui %[[TID2]], %{{.*}} : index
// CHECK: %[[WI:.*]] = arith.remui %[[W]], %{{.*}} : index
// CHECK: %[[TID3:.*]] = gpu.thread_id x
// CHECK: %[[L:.*]] = arith.remui %[[TID3]], %{{.*}} : index
// CHECK: %[[COL:.*]] = arith.remui %[[L]], %{{.*}} : index
// CHECK: %[[ROW:.*]] = arith.divui %[[L]], %{{.*}} : index
// CHECK: memref.store %{{.*}}, %{{.*}}[%[[GI]], %[[WI]], %[[ROW]], %[[COL]]]
func.func @level_indices(%out: memref<2x4x4x8xi32>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %v = arith.constant 7 : i32
  croq.parallel (%b) by [%c1] : block {
    croq.parallel (%g) by [%c2] : warpgroup {
      croq.parallel (%w) by [%c4] : warp {
        croq.parallel (%r, %c) by [%c4, %c8] : thread {
          memref.store %v, %out[%g, %w, %r, %c] : memref<2x4x4x8xi32>
        }
      }
    }
  }
  return
}

// -----

// Code after an inner parallel waits for it: a block barrier (bar.sync 0);
// inside a warpgroup the barrier is the named barrier 15 - tid / 128 over
// 128 threads.
// CHECK-LABEL: func.func @transition_barriers
// CHECK: arith.remui
// CHECK: memref.store
// CHECK-NEXT: gpu.barrier
// CHECK: memref.load
// CHECK-LABEL: func.func @warpgroup_barrier
// CHECK: nvvm.barrier
// CHECK-SAME: number_of_threads
// CHECK-NOT: gpu.barrier
// CHECK: gpu.terminator
// CHECK-LABEL: func.func @warpgroup_barrier_ids
// CHECK: gpu.thread_id x
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: %[[G:.*]] = arith.divui %[[TID]], %{{.*}} : index
// CHECK: %[[ID:.*]] = arith.subi %c15, %[[G]] : index
// CHECK: %[[ID32:.*]] = arith.index_cast %[[ID]] : index to i32
// CHECK: nvvm.barrier id = %[[ID32]] number_of_threads = %{{.*}}
func.func @transition_barriers(%buf: memref<64xf32>) {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %v = arith.constant 1.0 : f32
  croq.parallel (%b) by [%c1] : block {
    croq.parallel (%t) by [%c64] : thread {
      memref.store %v, %buf[%t] : memref<64xf32>
    }
    %x = memref.load %buf[%c1] : memref<64xf32>
  }
  return
}

func.func @warpgroup_barrier() {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  croq.parallel (%b) by [%c1] : block {
    croq.parallel (%g) by [%c2] : warpgroup {
      croq.barrier warpgroup
    }
  }
  return
}

// The barrier id: 1 + tid / 128, as i32, with 128 threads.
func.func @warpgroup_barrier_ids() {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  croq.parallel (%b) by [%c1] : block {
    croq.parallel (%g) by [%c4] : warpgroup {
      croq.barrier warpgroup
    }
  }
  return
}

// -----

// A synchronous cooperative copy into shared memory: 16-byte vector accesses
// when the run-time alignment check passes, scalar ones otherwise. Nothing
// else touches the buffer, so croq-insert-barriers adds no barrier (the
// conversion adds none of its own). The shared buffer is a view of dynamic
// shared memory.
// CHECK-LABEL: func.func @dma_copy_to_shared
// CHECK: gpu.launch {{.*}} dynamic_shared_memory_size %[[SMEM:.*]]
// CHECK: %[[DYN:.*]] = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
// CHECK: %[[BUF:.*]] = memref.view %[[DYN]][%{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<64x64xf16, #gpu.address_space<workgroup>>
// CHECK: %[[TILE:.*]] = memref.subview %{{.*}}[%{{.*}}, %{{.*}}] [64, 64] [1, 1]
// CHECK-NOT: gpu.barrier
// CHECK: memref.extract_strided_metadata
// The 512 vectors are 4 per thread of the 128: unrolled, no loop.
// CHECK: scf.if
// CHECK-NOT: scf.for
// CHECK-COUNT-4: vector.load %[[TILE]]{{.*}} {alignment = 16 : i64} : memref<64x64xf16, strided<[?, 1], offset: ?>>, vector<8xf16>
// CHECK-NOT: scf.for
// CHECK: vector.store {{.*}}, %[[BUF]]{{.*}} {alignment = 16 : i64}
// CHECK: } else {
// CHECK: scf.for
// CHECK: memref.load %[[TILE]]
// CHECK: memref.store {{.*}}, %[[BUF]]
// CHECK-NOT: gpu.barrier
// CHECK: gpu.terminator
func.func @dma_copy_to_shared(%src: memref<?x?xf16>, %i: index, %j: index) {
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  croq.parallel (%b) by [%c1] : block {
    %s = memref.alloc() : memref<64x64xf16, #gpu.address_space<workgroup>>
    croq.parallel (%t) by [%c128] : thread {
      %tile = croq.subspan %src[64, 64] at [%i, %j] : memref<?x?xf16> -> memref<64x64xf16, strided<[?, 1], offset: ?>>
      croq.dma.copy %tile to %s : memref<64x64xf16, strided<[?, 1], offset: ?>> to memref<64x64xf16, #gpu.address_space<workgroup>>
    }
  }
  return
}

// -----

// A run-time warp count: the launch's block size is the warp parallel's
// extent times 32, computed on the host; the block's cooperative copy
// strides by the block size register, and each warp's index is tid / 32.
// CHECK-LABEL: func.func @runtime_block_size
// CHECK-SAME: (%{{.*}}: memref<?x?xf16>, %[[N:.*]]: index)
// CHECK: %[[C32:.*]] = arith.constant 32 : index
// CHECK: cf.assert %{{.*}}, "the run-time extents of the parallel at line {{[0-9]+}} make a block of fewer than 1 or more than 1024 threads"
// CHECK: %[[BX:.*]] = arith.muli %[[C32]], %[[N]] : index
// CHECK: cf.assert %{{.*}}, "the run-time extents of the parallel at line {{[0-9]+}} make a block of fewer than 1 or more than 1024 threads"
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}}) threads(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %[[BX]],
// CHECK: croq.launch_hints max_threads 1024
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: arith.divui %[[TID]], %{{.*}} : index
// CHECK: %[[STRIDE:.*]] = gpu.block_dim x
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %[[STRIDE]]
// CHECK: gpu.barrier
func.func @runtime_block_size(%src: memref<?x?xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  croq.parallel (%b) by [%c1] : block {
    %s = memref.alloc() : memref<64x64xf16, #gpu.address_space<workgroup>>
    croq.parallel (%w) by [%n] : warp {
      %tile = croq.subspan %src[64, 64] at [%c0, %c0] : memref<?x?xf16> -> memref<64x64xf16, strided<[?, 1], offset: ?>>
      croq.dma.copy %tile to %s : memref<64x64xf16, strided<[?, 1], offset: ?>> to memref<64x64xf16, #gpu.address_space<workgroup>>
      %v = memref.load %s[%w, %c0] : memref<64x64xf16, #gpu.address_space<workgroup>>
      memref.store %v, %src[%w, %c1] : memref<?x?xf16>
    }
  }
  return
}

// -----

// Async copies issue cp.async and commit a group; a wait drains the groups
// and synchronises the scope. Futures become their buffers; swap and
// dma.any disappear.
// CHECK-LABEL: func.func @async_copy_and_wait
// CHECK: nvgpu.device_async_copy %{{.*}}[{{.*}}], %{{.*}}[{{.*}}], 4 : memref<16x16xi32, strided<[256, 1], offset: ?>> to memref<16x16xi32, #gpu.address_space<workgroup>>
// CHECK: nvvm.cp.async.commit.group
// CHECK: nvvm.cp.async.wait.group 0
// CHECK-NEXT: gpu.barrier
// CHECK-NOT: croq.
func.func @async_copy_and_wait(%g: memref<128x256xi32>, %i: index, %j: index) {
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  croq.parallel (%b) by [%c1] : block {
    %s0 = memref.alloc() : memref<16x16xi32, #gpu.address_space<workgroup>>
    %s1 = memref.alloc() : memref<16x16xi32, #gpu.address_space<workgroup>>
    croq.parallel (%t) by [%c256] : thread {
      %tile = croq.chunkat %g[%i by 8, %j by 16] : memref<128x256xi32> -> memref<16x16xi32, strided<[256, 1], offset: ?>>
      %f = croq.dma.copy async %tile to %s0 : memref<16x16xi32, strided<[256, 1], offset: ?>> to memref<16x16xi32, #gpu.address_space<workgroup>> -> !croq.future<dma, async, memref<16x16xi32, #gpu.address_space<workgroup>>>
      %any = croq.dma.any %s1 : memref<16x16xi32, #gpu.address_space<workgroup>> -> !croq.future<dma, async, memref<16x16xi32, #gpu.address_space<workgroup>>>
      %x, %y = croq.swap %f, %any : !croq.future<dma, async, memref<16x16xi32, #gpu.address_space<workgroup>>>
      croq.wait %y : !croq.future<dma, async, memref<16x16xi32, #gpu.address_space<workgroup>>>
      %d = croq.future.data %y : !croq.future<dma, async, memref<16x16xi32, #gpu.address_space<workgroup>>> -> memref<16x16xi32, #gpu.address_space<workgroup>>
      %v = memref.load %d[%t, %t] : memref<16x16xi32, #gpu.address_space<workgroup>>
    }
  }
  return
}

// -----

// A per-thread copy into a local buffer: no cooperation, no barrier; the
// local buffer is a per-thread alloca.
// CHECK-LABEL: func.func @local_copy
// CHECK: memref.alloca() : memref<1x8xf32, #gpu.address_space<private>>
// CHECK: scf.for %{{.*}} = %[[C0:.*]] to %{{.*}} step %{{.*}}
// CHECK-NOT: gpu.barrier
// CHECK: gpu.terminator
func.func @local_copy(%g: memref<?x8xf32>) {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  croq.parallel (%b) by [%c1] : block {
    croq.parallel (%t) by [%c32] : thread {
      %l = memref.alloc() : memref<1x8xf32, #gpu.address_space<private>>
      %row = croq.subspan %g[1, 8] at [%t, %c0] : memref<?x8xf32> -> memref<1x8xf32, strided<[8, 1], offset: ?>>
      croq.dma.copy %row to %l : memref<1x8xf32, strided<[8, 1], offset: ?>> to memref<1x8xf32, #gpu.address_space<private>>
    }
  }
  return
}

// -----

// Streams: a local stream is a gpu.wait async token; parallel.async on it
// is an async launch with that dependency; a synchronous launch on a stream
// waits for it.
// CHECK-LABEL: func.func @streams
// CHECK-SAME: (%{{.*}}: index, %[[S:.*]]: !gpu.async.token)
// CHECK: %[[OWN:.*]] = gpu.wait async
// CHECK: gpu.launch async [%[[OWN]]]
// CHECK: %[[T:.*]] = gpu.launch async [%[[S]]]
// CHECK: gpu.wait [%[[T]]]
func.func @streams(%n: index, %s: !croq.stream) {
  %own = croq.stream.create : !croq.stream
  croq.parallel (%b) by [%n] : block async stream(%own) {
  }
  croq.parallel (%b) by [%n] : block stream(%s) {
  }
  return
}

// -----

// Warp-scope MMA: operand fragments are gathered per lane into m16n8k16
// register tiles; a 16x16 accumulator is two n8 tiles.
// PTX-LABEL: gpu.binary @warp_mma_kernel
// PTX-SAME: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// PTX-SAME: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// CHECK-LABEL: func.func @warp_mma
// CHECK: vector.broadcast %{{.*}} : f32 to vector<2x2x2xf32>
// CHECK: vector.from_elements {{.*}} : vector<1x4x2xf16>
// CHECK: vector.from_elements {{.*}} : vector<2x2x2xf16>
// CHECK: nvgpu.mma.sync({{.*}}) {mmaShape = [16, 8, 16]} : (vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
// CHECK: nvgpu.mma.sync({{.*}}) {mmaShape = [16, 8, 16]}
// CHECK-COUNT-8: memref.store {{.*}} : memref<16x16xf32>
func.func @warp_mma(%a: memref<16x16xf16>, %b: memref<16x16xf16>, %c: memref<16x16xf32>) {
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  croq.parallel (%x) by [%c1] : block {
    croq.parallel (%w) by [%c1] : warp {
      %acc = croq.mma.fill %zero : f32 -> !croq.frag<acc, 16x16xf32>
      %fa = croq.mma.load %a : memref<16x16xf16> -> !croq.frag<a, 16x16xf16>
      %fb = croq.mma.load %b : memref<16x16xf16> -> !croq.frag<b, 16x16xf16>
      %r = croq.mma row_row %acc, %fa, %fb : !croq.frag<acc, 16x16xf32>, !croq.frag<a, 16x16xf16>, !croq.frag<b, 16x16xf16> -> !croq.frag<acc, 16x16xf32>
      croq.mma.store %r, %c : !croq.frag<acc, 16x16xf32>, memref<16x16xf32>
    }
  }
  return
}

// -----

// A store between levels runs once per instance: thread 0 of the block
// makes it; a store inside the thread level is every thread's own. The two
// write different tensors: no barrier.
// CHECK-LABEL: func.func @elected_store
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[TID]], %{{.*}} : index
// CHECK: scf.if %[[FIRST]] {
// CHECK-NEXT: memref.store %{{.*}}, %{{.*}}[%{{.*}}] : memref<?xi32>
// CHECK-NEXT: }
// CHECK-NOT: gpu.barrier
// CHECK: arith.remui
// CHECK-NOT: scf.if
// CHECK: memref.store %{{.*}}, %{{.*}}[%{{.*}}] : memref<?x64xi32>
func.func @elected_store(%counts: memref<?xi32>, %all: memref<?x64xi32>, %n: index) {
  %c64 = arith.constant 64 : index
  croq.parallel (%b) by [%n] : block {
    %old = memref.load %counts[%b] : memref<?xi32>
    %one = arith.constant 1 : i32
    %new = arith.addi %old, %one : i32
    memref.store %new, %counts[%b] : memref<?xi32>
    croq.parallel (%t) by [%c64] : thread {
      %v = arith.index_cast %t : index to i32
      memref.store %v, %all[%b, %t] : memref<?x64xi32>
    }
  }
  return
}

// -----

// RUN: croq-opt %s --croq-plan-shared-layout --croq-pipeline-mma --croq-materialize-tma --croq-assign-arrivals --croq-assign-phases --croq-elect-issuers="use-elect-sync=true" --convert-croq-to-gpu --split-input-file | FileCheck %s --check-prefix=ELECT
// With use-elect-sync, a store between levels under warp-uniform control is
// made by the lane elect.sync picks in the group's first warp (the election
// runs in that warp only; the others take false).
// ELECT-LABEL: func.func @elected_by_elect_sync
// ELECT: %[[W:.*]] = arith.divui %{{.*}}, %{{.*}} : index
// ELECT: %[[W0:.*]] = arith.cmpi eq, %[[W]], %{{.*}} : index
// ELECT: %[[E:.*]] = scf.if %[[W0]] -> (i1) {
// ELECT-NEXT: %[[S:.*]] = nvvm.elect.sync -> i1
// ELECT-NEXT: scf.yield %[[S]] : i1
// ELECT: scf.if %[[E]] {
// ELECT-NEXT: memref.store
func.func @elected_by_elect_sync(%counts: memref<?xi32>, %n: index) {
  %c64 = arith.constant 64 : index
  croq.parallel (%b) by [%n] : block {
    %one = arith.constant 1 : i32
    memref.store %one, %counts[%b] : memref<?xi32>
    croq.parallel (%t) by [%c64] : thread {
    }
  }
  return
}

// -----

// A shared event is a group of mbarriers, one per element, initialised by
// thread 0 with the arrivals of the role that triggers it (here the 128
// threads of warpgroup 0) before the block goes on. A subscripted wait in a
// loop waits for the parity croq-assign-phases computed (assign-phases.mlir
// shows how); a trigger is one arrival per thread.
// CHECK-LABEL: func.func @event_ring
// CHECK: %[[BARS:.*]] = nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[TID]], %{{.*}} : index
// CHECK: scf.if %[[FIRST]] {
// CHECK: nvgpu.mbarrier.init %[[BARS]][%{{.*}}], %[[C128:.*]] :
// CHECK: nvgpu.mbarrier.init %[[BARS]][%{{.*}}], %[[C128]] :
// CHECK: }
// CHECK-NEXT: gpu.barrier
// CHECK: scf.for %[[IV:.*]] = %[[LB:.*]] to
// CHECK: %[[SLOT:.*]] = arith.remsi %[[IV]], %{{.*}} : index
// CHECK: %[[LIN:.*]] = arith.addi %{{.*}}, %[[SLOT]] : index
// CHECK: nvgpu.mbarrier.arrive %[[BARS]][%[[LIN]]]
// CHECK: scf.for %[[IV2:.*]] = %[[LB2:.*]] to
// CHECK: %[[SLOT2:.*]] = arith.remsi %[[IV2]], %{{.*}} : index
// CHECK: %[[PARITY:.*]] = arith.index_cast %{{.*}} : index to i1
// CHECK: %[[LIN2:.*]] = arith.addi %{{.*}}, %[[SLOT2]] : index
// CHECK: nvgpu.mbarrier.try_wait.parity %[[BARS]][%[[LIN2]]], %[[PARITY]],
func.func @event_ring(%n: index, %out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  croq.parallel (%b) by [%n] : block {
    %full = croq.event.alloc : !croq.event<shared, 2>
    croq.parallel (%p) by [%c2] : warpgroup {
      %producer = arith.cmpi eq, %p, %c0 : index
      croq.inthreads async (%producer) {
        scf.for %k = %c0 to %c64 step %c1 {
          %s = arith.remsi %k, %c2 : index
          croq.event.trigger %full[%s] : !croq.event<shared, 2>
        }
      }
      %consumer = arith.cmpi eq, %p, %c1 : index
      croq.inthreads async (%consumer) {
        scf.for %k = %c0 to %c64 step %c1 {
          %s = arith.remsi %k, %c2 : index
          croq.event.wait %full[%s] : !croq.event<shared, 2>
        }
      }
    }
  }
  return
}

// -----

// An event declared `ready` has generation 0 complete: the first wait (in
// explicit order 0) is for parity 1, which a fresh mbarrier reports done.
// CHECK-LABEL: func.func @event_ready_at
// CHECK-SAME: (%{{.*}}: index, %[[ORDER:.*]]: index)
// CHECK: nvgpu.mbarrier.init
// CHECK: %[[GEN:.*]] = arith.divui %[[ORDER]], %[[N:.*]] : index
// CHECK: %[[NEXT:.*]] = arith.addi %[[GEN]], %{{.*}} : index
// CHECK: %[[P:.*]] = arith.remui %[[NEXT]], %{{.*}} : index
// CHECK: %[[PARITY:.*]] = arith.index_cast %[[P]] : index to i1
// CHECK: %[[SLOT:.*]] = arith.remui %[[ORDER]], %{{.*}} : index
// CHECK: nvgpu.mbarrier.try_wait.parity %{{.*}}[%[[SLOT]]], %[[PARITY]],
func.func @event_ready_at(%n: index, %o: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  croq.parallel (%b) by [%n] : block {
    %empty = croq.event.alloc ready : !croq.event<shared, 2>
    croq.parallel (%p) by [%c2] : warpgroup {
      %producer = arith.cmpi eq, %p, %c0 : index
      croq.inthreads async (%producer) {
        croq.event.wait %empty at(%o) : !croq.event<shared, 2>
      }
      %consumer = arith.cmpi eq, %p, %c1 : index
      croq.inthreads async (%consumer) {
        croq.event.trigger %empty at(%o) : !croq.event<shared, 2>
      }
    }
  }
  return
}

// -----

// A role's register budget becomes setmaxnreg at its entry: down from the
// entry count (255 for 256 threads) for both roles here. A
// croq.warp_specialize of one role is a branch.
// CHECK-LABEL: func.func @role_registers
// CHECK: scf.if
// CHECK-NEXT: nvvm.setmaxregister decrease 40
// CHECK: scf.if
// CHECK-NEXT: nvvm.setmaxregister decrease 240
func.func @role_registers(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  croq.parallel (%b) by [%n] : block {
    croq.parallel (%p) by [%c2] : warpgroup {
      %producer = arith.cmpi eq, %p, %c0 : index
      croq.warp_specialize registers(40) {
        croq.inthreads async (%producer) {
        }
      }
      %consumer = arith.cmpi eq, %p, %c1 : index
      croq.warp_specialize registers(240) {
        croq.inthreads async (%consumer) {
        }
      }
    }
  }
  return
}

// -----

// The roles of one croq.warp_specialize share one dispatch: the role id is
// chosen by the
// predicates (2, no role, otherwise) and each case starts with its budget.
// CHECK-LABEL: func.func @role_dispatch
// CHECK: %[[P0:.*]] = arith.cmpi eq, %{{.*}}, %c0
// CHECK: %[[P1:.*]] = arith.cmpi eq, %{{.*}}, %c1
// CHECK: %[[NONE:.*]] = arith.constant 2 : index
// CHECK: %[[ONE:.*]] = arith.constant 1 : index
// CHECK: %[[ID1:.*]] = arith.select %[[P1]], %[[ONE]], %[[NONE]] : index
// CHECK: %[[ZERO:.*]] = arith.constant 0 : index
// CHECK: %[[ID:.*]] = arith.select %[[P0]], %[[ZERO]], %[[ID1]] : index
// CHECK: scf.index_switch %[[ID]]
// CHECK-NEXT: case 0 {
// CHECK-NEXT: nvvm.setmaxregister decrease 40
// CHECK: memref.store %{{.*}}, %{{.*}}[%c0]
// CHECK: case 1 {
// CHECK-NEXT: nvvm.setmaxregister decrease 240
// CHECK: memref.store %{{.*}}, %{{.*}}[%c1]
// CHECK: default {
// CHECK-NOT: scf.if
// CHECK: gpu.terminator
func.func @role_dispatch(%n: index, %out: memref<2xindex>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  croq.parallel (%b) by [%n] : block {
    croq.parallel (%p) by [%c2] : warpgroup {
      %producer = arith.cmpi eq, %p, %c0 : index
      %consumer = arith.cmpi eq, %p, %c1 : index
      croq.warp_specialize registers(40, 240) {
        croq.inthreads async (%producer) {
          memref.store %b, %out[%c0] : memref<2xindex>
        }
        croq.inthreads async (%consumer) {
          memref.store %b, %out[%c1] : memref<2xindex>
        }
      }
    }
  }
  return
}

// -----

// The slot is not `iv % 2` of the loop, so (iv - lb) / 2 would not count the
// earlier waits on it: each thread keeps a phase bit per slot instead.
// CHECK-LABEL: func.func @wait_counts_phases
// CHECK: %[[BITS:.*]] = memref.alloca() : memref<1xi64>
// CHECK: memref.store %c0_i64, %[[BITS]]
// CHECK: scf.for
// CHECK: %[[W:.*]] = memref.load %[[BITS]][%{{.*}}] : memref<1xi64>
// CHECK: %[[SH:.*]] = arith.shrui %[[W]]
// CHECK: %[[P:.*]] = arith.trunci %[[SH]] : i64 to i1
// CHECK: nvgpu.mbarrier.try_wait.parity %{{.*}}[%{{.*}}], %[[P]]
// CHECK: %[[F:.*]] = arith.xori %{{.*}}, %{{.*}} : i64
// CHECK: memref.store %[[F]], %[[BITS]][%{{.*}}] : memref<1xi64>
func.func @wait_counts_phases(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  croq.parallel (%b) by [%n] : block {
    %e = croq.event.alloc : !croq.event<shared, 2>
    croq.parallel (%p) by [%c2] : warpgroup {
      %first = arith.cmpi eq, %p, %c0 : index
      croq.inthreads async (%first) {
        scf.for %k = %c0 to %c8 step %c1 {
          %half = arith.divui %k, %c2 : index
          %s = arith.remui %half, %c2 : index
          croq.event.wait %e[%s] : !croq.event<shared, 2>
        }
      }
      %second = arith.cmpi eq, %p, %c1 : index
      croq.inthreads async (%second) {
        scf.for %k = %c0 to %c8 step %c1 {
          %s = arith.remui %k, %c2 : index
          croq.event.trigger %e[%s] : !croq.event<shared, 2>
        }
      }
    }
  }
  return
}

// -----

// A wait in a while loop counts its phases at run time too.
// CHECK-LABEL: func.func @wait_in_while
// CHECK: memref.alloca() : memref<1xi64>
// CHECK: scf.while
// CHECK: nvgpu.mbarrier.try_wait.parity
// CHECK: arith.xori
func.func @wait_in_while(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  croq.parallel (%b) by [%n] : block {
    %e = croq.event.alloc : !croq.event<shared>
    croq.parallel (%p) by [%c2] : warpgroup {
      %first = arith.cmpi eq, %p, %c0 : index
      croq.inthreads async (%first) {
        %r = scf.while (%i = %c0) : (index) -> index {
          %go = arith.cmpi ult, %i, %n : index
          scf.condition(%go) %i : index
        } do {
        ^bb0(%i: index):
          croq.event.wait %e : !croq.event<shared>
          %next = arith.addi %i, %c1 : index
          scf.yield %next : index
        }
      }
      %second = arith.cmpi eq, %p, %c1 : index
      croq.inthreads async (%second) {
        croq.event.trigger %e : !croq.event<shared>
      }
    }
  }
  return
}

// -----

// Warpgroup MMA. The buffers that wgmma reads are stored swizzled (span 128):
// the cooperative copies into them write the swizzled layout (an xor of the
// 16-byte chunk with the row) and fence the async proxy. An operand is a
// descriptor built from the buffer's address; the MMA is a fence and four
// m64n64k16 wgmma (K = 64) advancing both descriptors by 32 bytes (2 in
// descriptor units); the store waits for the batch first.
// CHECK-LABEL: func.func @warpgroup_mma
// CHECK: arith.xori
// CHECK: vector.store
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK: %[[A:.*]] = memref.extract_aligned_pointer_as_index
// CHECK: %[[B:.*]] = memref.extract_aligned_pointer_as_index
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: nvvm.wgmma.mma_async %{{.*}}, %{{.*}}, %{{.*}}, <m = 64, n = 64, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, <one>, <col>]
// CHECK: arith.addi %{{.*}}, %c2_i64
// CHECK: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.mma_async
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: llvm.extractvalue
func.func @warpgroup_mma(%a: memref<64x64xf16>, %b: memref<64x64xf16>,
                         %out: memref<64x64xf32>) {
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  croq.parallel (%blk) by [%c1] : block {
    %sa = memref.alloc() : memref<64x64xf16, #gpu.address_space<workgroup>>
    %sb = memref.alloc() : memref<64x64xf16, #gpu.address_space<workgroup>>
    croq.parallel (%g) by [%c1] : warpgroup {
      croq.dma.copy %a to %sa : memref<64x64xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
      croq.dma.copy %b to %sb : memref<64x64xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
      %acc = croq.mma.fill %zero : f32 -> !croq.frag<acc, 64x64xf32, warpgroup>
      %fa = croq.mma.load %sa : memref<64x64xf16, #gpu.address_space<workgroup>> -> !croq.frag<a, 64x64xf16, warpgroup>
      %fb = croq.mma.load %sb : memref<64x64xf16, #gpu.address_space<workgroup>> -> !croq.frag<b, 64x64xf16, warpgroup>
      %r = croq.mma row_row %acc, %fa, %fb : !croq.frag<acc, 64x64xf32, warpgroup>, !croq.frag<a, 64x64xf16, warpgroup>, !croq.frag<b, 64x64xf16, warpgroup> -> !croq.frag<acc, 64x64xf32, warpgroup>
      croq.mma.store %r, %out : !croq.frag<acc, 64x64xf32, warpgroup>, memref<64x64xf32>
    }
  }
  return
}

// -----

// Element writes and reads of a buffer wgmma reads are addressed in its
// swizzled layout (span 128: the 16-byte chunk xor the row), through the
// buffer flattened. A fill loop (and the branch around it) is followed by one
// proxy fence, not one per element, before the barrier the MMA waits at;
// the read after the MMA needs none.
// CHECK-LABEL: func.func @swizzled_elements
// CHECK: scf.if
// CHECK: scf.for
// CHECK-NOT: gpu.barrier
// CHECK: arith.xori
// CHECK: %[[FLAT:.*]] = memref.collapse_shape %{{.*}} {{\[}}[0, 1]] : memref<64x64xf16, #gpu.address_space<workgroup>> into memref<4096xf16, #gpu.address_space<workgroup>>
// CHECK: memref.store %{{.*}}, %[[FLAT]][%{{.*}}] : memref<4096xf16, #gpu.address_space<workgroup>>
// CHECK-NOT: nvvm.fence.proxy
// CHECK: }
// CHECK-NEXT: }
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NOT: nvvm.fence.proxy
// CHECK: gpu.barrier
// CHECK: nvvm.wgmma.mma_async
// CHECK: arith.xori
// CHECK: memref.load %{{.*}}[%{{.*}}] : memref<4096xf16, #gpu.address_space<workgroup>>
// CHECK-NOT: nvvm.fence.proxy
func.func @swizzled_elements(%out: memref<64x64xf32>, %echo: memref<64xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f16
  croq.parallel (%blk) by [%c1] : block {
    %sa = memref.alloc() : memref<64x64xf16, #gpu.address_space<workgroup>>
    croq.parallel (%t) by [%c128] : thread {
      %low = arith.cmpi ult, %t, %c64 : index
      scf.if %low {
        scf.for %j = %c0 to %c64 step %c1 {
          memref.store %one, %sa[%t, %j] : memref<64x64xf16, #gpu.address_space<workgroup>>
        }
      }
    }
    croq.parallel (%g) by [%c1] : warpgroup {
      %acc = croq.mma.fill %zero : f32 -> !croq.frag<acc, 64x64xf32, warpgroup>
      %fa = croq.mma.load %sa : memref<64x64xf16, #gpu.address_space<workgroup>> -> !croq.frag<a, 64x64xf16, warpgroup>
      %fb = croq.mma.load %sa : memref<64x64xf16, #gpu.address_space<workgroup>> -> !croq.frag<b, 64x64xf16, warpgroup>
      %r = croq.mma row_row %acc, %fa, %fb : !croq.frag<acc, 64x64xf32, warpgroup>, !croq.frag<a, 64x64xf16, warpgroup>, !croq.frag<b, 64x64xf16, warpgroup> -> !croq.frag<acc, 64x64xf32, warpgroup>
      croq.mma.store %r, %out : !croq.frag<acc, 64x64xf32, warpgroup>, memref<64x64xf32>
    }
    croq.parallel (%t) by [%c128] : thread {
      %row = arith.remui %t, %c64 : index
      %v = memref.load %sa[%row, %c3] : memref<64x64xf16, #gpu.address_space<workgroup>>
      memref.store %v, %echo[%row] : memref<64xf16>
    }
  }
  return
}

// -----

// A synchronous TMA load at block scope: a barrier of its own (count 1), a
// per-thread phase, the first thread expects the bytes and issues the copy
// with the tile's origin as coordinates (innermost first), everyone waits
// and flips its phase. The tensor map is built before the launch.
// CHECK-LABEL: func.func @tma_sync_load
// CHECK: %[[U:.*]] = memref.cast %{{.*}} : memref<?x?xf32> to memref<*xf32>
// CHECK: %[[MAP:.*]] = nvgpu.tma.create.descriptor %[[U]] box[%c32{{.*}}, %c32{{.*}}] : memref<*xf32> -> <tensor = memref<32x32xf32, #gpu.address_space<workgroup>>, swizzle = none
// CHECK: gpu.launch
// CHECK: %[[BAR:.*]] = nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>>
// CHECK: nvgpu.mbarrier.init %[[BAR]][%{{.*}}], %c1
// CHECK: %[[PHASE:.*]] = memref.alloca() : memref<1xi64>
// CHECK: nvgpu.mbarrier.arrive.expect_tx %[[BAR]][%{{.*}}], %c4096
// CHECK-NEXT: nvgpu.tma.async.load %[[MAP]][%[[COL:.*]], %[[ROW:.*]]], %[[BAR]]
// CHECK: %[[W:.*]] = memref.load %[[PHASE]]
// CHECK: %[[SH:.*]] = arith.shrui %[[W]]
// CHECK: %[[P:.*]] = arith.trunci %[[SH]] : i64 to i1
// CHECK: nvgpu.mbarrier.try_wait.parity %[[BAR]][%{{.*}}], %[[P]]
func.func @tma_sync_load(%g: memref<?x?xf32>, %n: index) {
  %c32 = arith.constant 32 : index
  %c128 = arith.constant 128 : index
  croq.parallel (%bm, %bn) by [%n, %n] : block {
    %s = memref.alloc() : memref<32x32xf32, #gpu.address_space<workgroup>>
    %tile = croq.subspan %g[32, 32] at [%bm, %bn] : memref<?x?xf32> -> memref<32x32xf32, strided<[?, 1], offset: ?>>
    croq.tma.copy %tile to %s : memref<32x32xf32, strided<[?, 1], offset: ?>> to memref<32x32xf32, #gpu.address_space<workgroup>>
    croq.parallel (%t) by [%c128] : thread {
      %c0 = arith.constant 0 : index
      %v = memref.load %s[%c0, %c0] : memref<32x32xf32, #gpu.address_space<workgroup>>
    }
  }
  return
}

// -----

// Every warp would copy the same tile: the block copies it once, its 128
// threads taking 16-byte chunks in turn.
// CHECK-LABEL: func.func @group_invariant_copy
// CHECK: scf.for %{{.*}} = %thread_id_x{{[_0-9]*}} to %{{.*}} step %c128
// CHECK: nvgpu.device_async_copy
func.func @group_invariant_copy(%g: memref<64x32xf32>) {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  croq.parallel (%b) by [%c1] : block {
    %s = memref.alloc() : memref<64x32xf32, #gpu.address_space<workgroup>>
    croq.parallel (%w) by [%c4] : warp {
      %f = croq.dma.copy async %g to %s : memref<64x32xf32> to memref<64x32xf32, #gpu.address_space<workgroup>> -> !croq.future<dma, async, memref<64x32xf32, #gpu.address_space<workgroup>>>
      croq.wait %f : !croq.future<dma, async, memref<64x32xf32, #gpu.address_space<workgroup>>>
    }
  }
  return
}

// -----

// A copy whose view depends on the warp index stays the warp's own: its 32
// lanes take the chunks in turn.
// CHECK-LABEL: func.func @warp_dependent_copy
// CHECK: %[[LANE:.*]] = arith.remui %thread_id_x{{[_0-9]*}}, %c32
// CHECK: scf.for %{{.*}} = %[[LANE]] to %{{.*}} step %c32
func.func @warp_dependent_copy(%g: memref<64x32xf32>) {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  croq.parallel (%b) by [%c1] : block {
    %s = memref.alloc() : memref<64x32xf32, #gpu.address_space<workgroup>>
    croq.parallel (%w) by [%c4] : warp {
      %row = arith.muli %w, %c16 : index
      %src = memref.subview %g[%row, 0] [16, 32] [1, 1] : memref<64x32xf32> to memref<16x32xf32, strided<[32, 1], offset: ?>>
      %dst = memref.subview %s[%row, 0] [16, 32] [1, 1] : memref<64x32xf32, #gpu.address_space<workgroup>> to memref<16x32xf32, strided<[32, 1], offset: ?>, #gpu.address_space<workgroup>>
      croq.dma.copy %src to %dst : memref<16x32xf32, strided<[32, 1], offset: ?>> to memref<16x32xf32, strided<[32, 1], offset: ?>, #gpu.address_space<workgroup>>
    }
  }
  return
}

// -----

// A shared buffer with a run-time extent is sized on the host: its offset
// (after a static one, aligned to 1024 bytes) and the launch's size are
// computed before the launch.
// CHECK-LABEL: func.func @host_sized_shared
// CHECK: %[[OFFSET:.*]] = arith.muli %{{.*}}, %c1024 : index
// CHECK: %[[BYTES:.*]] = arith.muli %{{.*}}, %{{.*}} : index
// CHECK: %[[END:.*]] = arith.addi %[[OFFSET]], %[[BYTES]] : index
// CHECK: %[[SMEM:.*]] = arith.index_cast %[[END]] : index to i32
// CHECK: gpu.launch {{.*}} dynamic_shared_memory_size %[[SMEM]]
// CHECK: memref.view %{{.*}}[%[[OFFSET]]][%{{.*}}] : memref<?xi8, #gpu.address_space<workgroup>> to memref<?xf32, #gpu.address_space<workgroup>>
func.func @host_sized_shared(%g: memref<?xf32>, %n: index) {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  croq.parallel (%b) by [%c1] : block {
    %fixed = memref.alloc() : memref<100xf32, #gpu.address_space<workgroup>>
    %size = arith.divsi %n, %c4 : index
    %s = memref.alloc(%size) : memref<?xf32, #gpu.address_space<workgroup>>
    %f = croq.dma.copy %g to %s : memref<?xf32> to memref<?xf32, #gpu.address_space<workgroup>> -> !croq.future<dma, memref<?xf32, #gpu.address_space<workgroup>>>
  }
  return
}

// -----

// An extent that divides by a run-time value is computed on the host too
// (whose entry point refuses a zero divisor first: Target/Host/division.mlir).
// CHECK-LABEL: func.func @host_sized_shared_runtime_divisor
// CHECK-SAME: (%[[G:.*]]: memref<?xf32>, %[[N:.*]]: index)
// CHECK: %[[M:.*]] = memref.dim %[[G]]
// CHECK: arith.divsi %[[M]], %[[N]] : index
// CHECK: gpu.launch
func.func @host_sized_shared_runtime_divisor(%g: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  croq.parallel (%b) by [%n] : block {
    %m = memref.dim %g, %c0 : memref<?xf32>
    %size = arith.divsi %m, %n : index
    %s = memref.alloc(%size) : memref<?xf32, #gpu.address_space<workgroup>>
    %v = arith.constant 1.0 : f32
    memref.store %v, %s[%c0] : memref<?xf32, #gpu.address_space<workgroup>>
  }
  return
}

// -----

// A plain region that yields a TMA future is an scf.if with results: the
// region's future where the predicate holds, the else value elsewhere (a
// future converts to its data).
// CHECK-LABEL: func.func @inthreads_yields_future
// CHECK: %[[R:.*]] = scf.if %{{.*}} -> (memref<16xf32, #gpu.address_space<workgroup>>) {
// CHECK: scf.yield %{{.*}} : memref<16xf32, #gpu.address_space<workgroup>>
// CHECK: } else {
// CHECK: scf.yield %{{.*}} : memref<16xf32, #gpu.address_space<workgroup>>
// CHECK: memref.load %[[R]]
func.func @inthreads_yields_future(%out: memref<256xf32>) {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %c256 = arith.constant 256 : index
  croq.parallel (%b) by [%c1] : block {
    %buf = memref.alloc() : memref<16xf32, #gpu.address_space<workgroup>>
    croq.parallel (%t) by [%c256] : thread {
      %any = croq.dma.any %buf : memref<16xf32, #gpu.address_space<workgroup>> -> !croq.future<tma, async, memref<16xf32, #gpu.address_space<workgroup>>>
      %first = arith.cmpi ult, %t, %c1 : index
      %f = croq.inthreads (%first) else(%any : !croq.future<tma, async, memref<16xf32, #gpu.address_space<workgroup>>>) -> !croq.future<tma, async, memref<16xf32, #gpu.address_space<workgroup>>> {
        croq.yield %any : !croq.future<tma, async, memref<16xf32, #gpu.address_space<workgroup>>>
      }
      %d = croq.future.data %f : !croq.future<tma, async, memref<16xf32, #gpu.address_space<workgroup>>> -> memref<16xf32, #gpu.address_space<workgroup>>
      %v = memref.load %d[%c0] : memref<16xf32, #gpu.address_space<workgroup>>
      memref.store %v, %out[%t] : memref<256xf32>
    }
  }
  return
}
