// RUN: croq-opt %s --croq-elect-issuers --split-input-file | FileCheck %s
// RUN: croq-opt %s --croq-elect-issuers=use-elect-sync --split-input-file | FileCheck %s --check-prefix=ELECT
// A second run keeps the elections it finds (an elect.sync nested in another
// would run on one lane only).
// RUN: croq-opt %s --croq-elect-issuers --croq-elect-issuers --split-input-file | FileCheck %s
// RUN: croq-opt %s --croq-elect-issuers=use-elect-sync --croq-elect-issuers=use-elect-sync --split-input-file | FileCheck %s --check-prefix=ELECT

// A store between levels runs once per block: thread 0 makes it. With
// use-elect-sync, where the warp is converged, elect.sync picks the lane in
// the first warp. A store to a thread's own alloca needs no election.
// CHECK-LABEL: func.func @store_between_levels
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK-NEXT: %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[FIRST:.*]] = arith.cmpi eq, %[[TID]], %[[C0]] : index
// CHECK-NEXT: scf.if %[[FIRST]] {
// CHECK-NEXT: memref.store %{{.*}}, %{{.*}}[%{{.*}}] : memref<?xi32>
// CHECK-NEXT: }
// CHECK-NEXT: memref.store %{{.*}}, %{{.*}}[%{{.*}}] : memref<1xi32>
// ELECT-LABEL: func.func @store_between_levels
// ELECT: %[[WARP:.*]] = arith.divui %{{.*}}, %{{.*}} : index
// ELECT: %[[FIRSTWARP:.*]] = arith.cmpi eq, %[[WARP]], %{{.*}} : index
// ELECT: %[[E:.*]] = scf.if %[[FIRSTWARP]] -> (i1) {
// ELECT: nvvm.elect.sync
// ELECT: scf.if %[[E]] {
// ELECT-NEXT: memref.store
// ELECT-NOT: nvvm.elect.sync
// ELECT-LABEL: func.func @tma_issuers
func.func @store_between_levels(%n: index, %out: memref<?xi32>) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  croq.parallel (%b) by [%n] : block {
    %one = arith.constant 1 : i32
    %own = memref.alloca() : memref<1xi32>
    memref.store %one, %out[%b] : memref<?xi32>
    memref.store %one, %own[%c0] : memref<1xi32>
    croq.parallel (%t) by [%c64] : thread {
    }
  }
  return
}

// -----

// TMA issues: a copy a whole warpgroup runs is issued by one thread of it
// (first, or elected under use-elect-sync), and so is the arrival that
// expects its bytes; where a croq.inthreads picks a single thread, that
// thread issues its own. A trigger without expect_tx needs no issuer.
// CHECK-LABEL: func.func @tma_issuers
// CHECK: croq.tma.copy async {{.*}} issuer<first>
// CHECK: croq.event.trigger {{.*}} expect_tx(8192) issuer<first>
// CHECK: croq.event.trigger %{{.*}}[%{{.*}}] : <shared, 2>{{$}}
// CHECK: croq.tma.copy async {{.*}} issuer<each>
// CHECK: croq.event.trigger {{.*}} expect_tx(8192) issuer<each>
// ELECT: croq.tma.copy async {{.*}} issuer<elected>
// ELECT: croq.event.trigger {{.*}} expect_tx(8192) issuer<elected>
// ELECT: croq.tma.copy async {{.*}} issuer<each>
func.func @tma_issuers(%n: index, %g: memref<?x?xf16>, %m: !nvgpu.tensormap.descriptor<tensor = memref<64x64xf16, #gpu.address_space<workgroup>>, swizzle = none, l2promo = l2promo_128b, oob = zero, interleave = none>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  croq.parallel (%b) by [%n] : block {
    %full = croq.event.alloc : !croq.event<shared, 2>
    %a = memref.alloc() : memref<64x64xf16, #gpu.address_space<workgroup>>
    %ta = croq.subspan %g[64, 64] at [%b, %c0] : memref<?x?xf16> -> memref<64x64xf16, strided<[?, 1], offset: ?>>
    croq.parallel (%w) by [%c1] : warpgroup {
      croq.tma.copy async %ta to %a bind %full[%c0] map(%m : !nvgpu.tensormap.descriptor<tensor = memref<64x64xf16, #gpu.address_space<workgroup>>, swizzle = none, l2promo = l2promo_128b, oob = zero, interleave = none>) : memref<64x64xf16, strided<[?, 1], offset: ?>> to memref<64x64xf16, #gpu.address_space<workgroup>>, !croq.event<shared, 2>
      croq.event.trigger %full[%c0] expect_tx(8192) : !croq.event<shared, 2>
      croq.event.trigger %full[%c1] : !croq.event<shared, 2>
      croq.parallel (%t) by [%c128] : thread {
        %one = arith.cmpi eq, %t, %c0 : index
        croq.inthreads (%one) {
          croq.tma.copy async %ta to %a bind %full[%c1] map(%m : !nvgpu.tensormap.descriptor<tensor = memref<64x64xf16, #gpu.address_space<workgroup>>, swizzle = none, l2promo = l2promo_128b, oob = zero, interleave = none>) : memref<64x64xf16, strided<[?, 1], offset: ?>> to memref<64x64xf16, #gpu.address_space<workgroup>>, !croq.event<shared, 2>
          croq.event.trigger %full[%c1] expect_tx(8192) : !croq.event<shared, 2>
        }
      }
    }
  }
  return
}

// -----

// A TMA store a whole warpgroup runs synchronises the warpgroup before its
// issue: the croq.barrier croq-insert-barriers put just before it (only
// pure view arithmetic between) is the same barrier, and goes. A barrier
// with a store to memory after it, or one over other threads (the block's,
// before a warpgroup's store), stays.
// CHECK-LABEL: func.func @barriers_tma_stores_subsume
// CHECK: memref.store
// CHECK-NOT: croq.barrier
// CHECK: croq.tma.copy {{.*}} issuer<first>
// CHECK: croq.barrier warpgroup
// CHECK: scf.if
// CHECK-NEXT: memref.store
// CHECK: croq.tma.copy {{.*}} issuer<first>
// CHECK: croq.barrier block
// CHECK-NEXT: croq.tma.copy {{.*}} issuer<first>
func.func @barriers_tma_stores_subsume(%n: index, %g: memref<?x?xf16>, %flag: memref<1xi32, #gpu.address_space<workgroup>>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c128 = arith.constant 128 : index
  %v = arith.constant 1.0 : f16
  %one = arith.constant 1 : i32
  croq.parallel (%b) by [%n] : block {
    %a = memref.alloc() : memref<64x64xf16, #gpu.address_space<workgroup>>
    croq.parallel (%w) by [%c2] : warpgroup {
      croq.parallel (%t) by [%c128] : thread {
        memref.store %v, %a[%t, %c0] : memref<64x64xf16, #gpu.address_space<workgroup>>
      }
      croq.barrier warpgroup
      %row = arith.addi %b, %w : index
      %ta = croq.subspan %g[64, 64] at [%row, %c0] : memref<?x?xf16> -> memref<64x64xf16, strided<[?, 1], offset: ?>>
      croq.tma.copy %a to %ta : memref<64x64xf16, #gpu.address_space<workgroup>> to memref<64x64xf16, strided<[?, 1], offset: ?>>
      croq.barrier warpgroup
      memref.store %one, %flag[%c0] : memref<1xi32, #gpu.address_space<workgroup>>
      croq.tma.copy %a to %ta : memref<64x64xf16, #gpu.address_space<workgroup>> to memref<64x64xf16, strided<[?, 1], offset: ?>>
      croq.barrier block
      croq.tma.copy %a to %ta : memref<64x64xf16, #gpu.address_space<workgroup>> to memref<64x64xf16, strided<[?, 1], offset: ?>>
    }
  }
  return
}

// -----

// A store croq-insert-barriers ordered by one thread's program order
// (croq.same_issuer) is thread 0's by id, with use-elect-sync too: elect.sync
// may pick another lane for the next one.
// CHECK-LABEL: func.func @same_issuer
// CHECK: arith.cmpi eq
// CHECK: memref.store {{.*}} {croq.same_issuer}
// ELECT-LABEL: func.func @same_issuer
// ELECT-NOT: nvvm.elect.sync
// ELECT: %[[TID:.*]] = gpu.thread_id x
// ELECT: %[[FIRST:.*]] = arith.cmpi eq, %[[TID]], %{{.*}} : index
// ELECT-NEXT: scf.if %[[FIRST]] {
// ELECT-NEXT: memref.store {{.*}} {croq.same_issuer}
// ELECT-NOT: nvvm.elect.sync
// ELECT: return
func.func @same_issuer(%n: index) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  croq.parallel (%b) by [%n] : block {
    %s = memref.alloc() : memref<64xf32, #gpu.address_space<workgroup>>
    memref.store %zero, %s[%c0] {croq.same_issuer} : memref<64xf32, #gpu.address_space<workgroup>>
    croq.parallel (%t) by [%c64] : thread {
    }
  }
  return
}
