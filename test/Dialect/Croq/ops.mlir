// RUN: croq-opt %s | croq-opt | FileCheck %s
// RUN: croq-opt %s --mlir-print-op-generic | croq-opt | FileCheck %s

// Round trips of every croq op and every form of its assembly.

!smem16 = memref<16x16xi32, #gpu.address_space<workgroup>>
!fut16 = !croq.future<dma, async, memref<16x16xi32, #gpu.address_space<workgroup>>>

// CHECK-LABEL: func.func @parallel_levels
// CHECK-SAME: (%[[N:.*]]: index, %[[S:.*]]: !croq.stream)
func.func @parallel_levels(%n: index, %s: !croq.stream) {
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c32 = arith.constant 32 : index
  // CHECK: croq.parallel (%[[BM:.*]], %[[BN:.*]]) by [%[[N]], %{{.*}}] : block {
  croq.parallel (%bm, %bn) by [%n, %c4] : block {
    // CHECK: croq.parallel (%{{.*}}) by [%{{.*}}] : warpgroup {
    croq.parallel (%g) by [%c2] : warpgroup {
      // CHECK: croq.parallel (%{{.*}}) by [%{{.*}}] : warp {
      croq.parallel (%w) by [%c4] : warp {
        // CHECK: croq.parallel (%{{.*}}, %{{.*}}) by [%{{.*}}, %{{.*}}] : thread {
        croq.parallel (%tx, %ty) by [%c4, %c4] : thread {
        }
      }
    }
    // CHECK: croq.barrier block
    croq.barrier block
  }
  // CHECK: croq.parallel (%{{.*}}) by [%[[N]]] : block async stream(%[[S]]) {
  croq.parallel (%b) by [%n] : block async stream(%s) {
    // CHECK: croq.parallel (%{{.*}}) by [%{{.*}}] : thread {
    croq.parallel (%t) by [%c32] : thread {
    }
  }
  // CHECK: croq.parallel (%{{.*}}) by [%[[N]]] : block stream(%[[S]]) {
  croq.parallel (%b) by [%n] : block stream(%s) {
  }
  // CHECK: croq.parallel (%{{.*}}) by [%[[N]]] : block {
  // CHECK-NEXT: } attributes {note = "kept"}
  croq.parallel (%b) by [%n] : block {
  } attributes {note = "kept"}
  return
}

// CHECK-LABEL: func.func @parallel_results
func.func @parallel_results(%n: index) {
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  croq.parallel (%b) by [%n] : block {
    %acc = croq.mma.fill %zero : f32 -> !croq.frag<acc, 64x64xf32>
    // CHECK: %[[R:.*]]:2 = croq.parallel (%{{.*}}) by [%{{.*}}] : warpgroup -> (!croq.frag<acc, 64x64xf32>, index) {
    // CHECK: croq.yield %{{.*}}, %{{.*}} : !croq.frag<acc, 64x64xf32>, index
    // CHECK-NEXT: }
    %r:2 = croq.parallel (%p) by [%c1] : warpgroup -> (!croq.frag<acc, 64x64xf32>, index) {
      croq.yield %acc, %p : !croq.frag<acc, 64x64xf32>, index
    }
  }
  return
}

// CHECK-LABEL: func.func @local_streams
func.func @local_streams(%n: index) {
  // CHECK: %[[S0:.*]] = croq.stream.create : !croq.stream
  // CHECK: %[[S1:.*]] = croq.stream.create : !croq.stream
  %s0 = croq.stream.create : !croq.stream
  %s1 = croq.stream.create : !croq.stream
  // CHECK: croq.parallel (%{{.*}}) by [%{{.*}}] : block async stream(%[[S0]])
  croq.parallel (%b) by [%n] : block async stream(%s0) {
  }
  // CHECK: croq.parallel (%{{.*}}) by [%{{.*}}] : block async stream(%[[S1]])
  croq.parallel (%b) by [%n] : block async stream(%s1) {
  }
  return
}

// CHECK-LABEL: func.func @inthreads_forms
func.func @inthreads_forms(%n: index) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c128 = arith.constant 128 : index
  croq.parallel (%b) by [%n] : block {
    croq.parallel (%p, %t) by [%c2, %c128] : thread {
      %is0 = arith.cmpi eq, %p, %c0 : index
      %t0 = arith.cmpi eq, %t, %c0 : index
      %both = arith.andi %is0, %t0 : i1
      // CHECK: croq.inthreads async (%{{.*}}) {
      croq.inthreads async (%both) {
        // CHECK: croq.inthreads (%{{.*}}) {
        croq.inthreads (%t0) {
        }
      }
      %ne0 = arith.cmpi ne, %p, %c0 : index
      // CHECK: croq.inthreads (%{{.*}}) {
      // CHECK: } {tag = "consumer"}
      croq.inthreads (%ne0) {
      } {tag = "consumer"}
      %buf = memref.alloc() : memref<8x8xf16, #gpu.address_space<workgroup>>
      %any = croq.dma.any %buf : memref<8x8xf16, #gpu.address_space<workgroup>> -> !croq.future<tma, async, memref<8x8xf16, #gpu.address_space<workgroup>>>
      // CHECK: %{{.*}} = croq.inthreads (%{{.*}}) else(%{{.*}} : !croq.future<tma, async, memref<8x8xf16, #gpu.address_space<workgroup>>>) -> !croq.future<tma, async, memref<8x8xf16, #gpu.address_space<workgroup>>> {
      // CHECK: croq.yield %{{.*}} : !croq.future<tma
      %f = croq.inthreads (%is0) else(%any : !croq.future<tma, async, memref<8x8xf16, #gpu.address_space<workgroup>>>) -> !croq.future<tma, async, memref<8x8xf16, #gpu.address_space<workgroup>>> {
        croq.yield %any : !croq.future<tma, async, memref<8x8xf16, #gpu.address_space<workgroup>>>
      }
    }
  }
  return
}

// CHECK-LABEL: func.func @events
func.func @events(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  croq.parallel (%b) by [%n] : block {
    // CHECK: %[[E:.*]] = croq.event.alloc : <shared>
    %e = croq.event.alloc : !croq.event<shared>
    // CHECK: %[[FULL:.*]] = croq.event.alloc : <shared, 2>
    %full = croq.event.alloc : !croq.event<shared, 2>
    // CHECK: %[[EMPTY:.*]] = croq.event.alloc ready : <shared, 2>
    %empty = croq.event.alloc ready : !croq.event<shared, 2>
    // CHECK: %[[GRID:.*]] = croq.event.alloc arrivals 1 : <shared, 2x3>
    %grid = croq.event.alloc arrivals 1 : !croq.event<shared, 2x3>
    // CHECK: croq.event.alloc ready arrivals 256 : <local>
    %l = croq.event.alloc ready arrivals 256 : !croq.event<local>
    // CHECK: croq.event.trigger %[[E]] : <shared>
    croq.event.trigger %e : !croq.event<shared>
    // CHECK: croq.event.wait %[[E]] : <shared>
    croq.event.wait %e : !croq.event<shared>
    // CHECK: croq.event.trigger %[[FULL]][%{{.*}}] : <shared, 2>
    croq.event.trigger %full[%c1] : !croq.event<shared, 2>
    // CHECK: croq.event.wait %[[EMPTY]][%{{.*}}] : <shared, 2>
    croq.event.wait %empty[%c0] : !croq.event<shared, 2>
    // Fewer subscripts than the rank select every remaining element.
    // CHECK: croq.event.trigger %[[GRID]][%{{.*}}] : <shared, 2x3>
    croq.event.trigger %grid[%c1] : !croq.event<shared, 2x3>
    // CHECK: croq.event.trigger %[[GRID]] : <shared, 2x3>
    croq.event.trigger %grid : !croq.event<shared, 2x3>
    // CHECK: croq.event.wait %[[GRID]][%{{.*}}, %{{.*}}] : <shared, 2x3>
    croq.event.wait %grid[%c1, %c0] : !croq.event<shared, 2x3>
    // CHECK: croq.event.trigger %[[FULL]] at(%{{.*}}) : <shared, 2>
    croq.event.trigger %full at(%b) : !croq.event<shared, 2>
    // CHECK: croq.event.wait %[[FULL]] at(%{{.*}}) : <shared, 2>
    croq.event.wait %full at(%b) : !croq.event<shared, 2>
  }
  return
}

// CHECK-LABEL: func.func @global_event
func.func @global_event() {
  // CHECK: croq.event.alloc : <global, 4>
  %g = croq.event.alloc : !croq.event<global, 4>
  return
}

// CHECK-LABEL: func.func @views
func.func @views(%lhs: memref<?x?xf16>, %s: memref<64x128xf16, #gpu.address_space<workgroup>>,
                 %i: index, %j: index, %nb: index) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c32 = arith.constant 32 : index
  // CHECK: croq.chunkat %{{.*}}[%{{.*}} by %{{.*}}, %{{.*}} by 4] : memref<?x?xf16> -> memref<?x?xf16, strided<[?, 1], offset: ?>>
  %a = croq.chunkat %lhs[%i by %nb, %j by 4] : memref<?x?xf16> -> memref<?x?xf16, strided<[?, 1], offset: ?>>
  // CHECK: croq.chunkat %{{.*}}[_, %{{.*}} by 8] : memref<64x128xf16, #gpu.address_space<workgroup>> -> memref<64x16xf16, strided<[128, 1], offset: ?>, #gpu.address_space<workgroup>>
  %b = croq.chunkat %s[_, %j by 8] : memref<64x128xf16, #gpu.address_space<workgroup>> -> memref<64x16xf16, strided<[128, 1], offset: ?>, #gpu.address_space<workgroup>>
  // CHECK: croq.subspan %{{.*}}[64, 128] at [%{{.*}}, %{{.*}}] : memref<?x?xf16> -> memref<64x128xf16, strided<[?, 1], offset: ?>>
  %c = croq.subspan %lhs[64, 128] at [%i, %j] : memref<?x?xf16> -> memref<64x128xf16, strided<[?, 1], offset: ?>>
  // CHECK: croq.subspan %{{.*}}[32, _] at [%{{.*}}, %{{.*}}] step [%{{.*}}, %{{.*}}] : memref<64x128xf16, #gpu.address_space<workgroup>> -> memref<32x128xf16, strided<[128, 1], offset: ?>, #gpu.address_space<workgroup>>
  %d = croq.subspan %s[32, _] at [%i, %c0] step [%c32, %c2] : memref<64x128xf16, #gpu.address_space<workgroup>> -> memref<32x128xf16, strided<[128, 1], offset: ?>, #gpu.address_space<workgroup>>
  // CHECK: croq.subspan %{{.*}}[%{{.*}}, 16] at [%{{.*}}, %{{.*}}] : memref<?x?xf16> -> memref<?x16xf16, strided<[?, 1], offset: ?>>
  %e = croq.subspan %lhs[%nb, 16] at [%i, %j] : memref<?x?xf16> -> memref<?x16xf16, strided<[?, 1], offset: ?>>
  // Views compose.
  // CHECK: croq.subspan %{{.*}}[16, 16] at
  %f = croq.subspan %c[16, 16] at [%i, %j] : memref<64x128xf16, strided<[?, 1], offset: ?>> -> memref<16x16xf16, strided<[?, 1], offset: ?>>
  return
}

// CHECK-LABEL: func.func @dma_and_futures
func.func @dma_and_futures(%lhs: memref<128x256xi32>, %i: index, %j: index) {
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  croq.parallel (%b) by [%c8] : block {
    %buf0 = memref.alloc() : !smem16
    %buf1 = memref.alloc() : !smem16
    %tile = croq.chunkat %lhs[%i by 8, %j by 16] : memref<128x256xi32> -> memref<16x16xi32, strided<[256, 1], offset: ?>>
    // CHECK: croq.dma.copy %{{.*}} to %{{.*}} : memref<16x16xi32, strided<[256, 1], offset: ?>> to memref<16x16xi32, #gpu.address_space<workgroup>>
    croq.dma.copy %tile to %buf0 : memref<16x16xi32, strided<[256, 1], offset: ?>> to !smem16
    // CHECK: %[[SYNC:.*]] = croq.dma.copy %{{.*}} to %{{.*}} : {{.*}} -> !croq.future<dma, memref<16x16xi32, #gpu.address_space<workgroup>>>
    %sync = croq.dma.copy %tile to %buf0 : memref<16x16xi32, strided<[256, 1], offset: ?>> to !smem16 -> !croq.future<dma, !smem16>
    // CHECK: %[[F0:.*]] = croq.dma.copy async %{{.*}} to %{{.*}} : {{.*}} -> !croq.future<dma, async, memref<16x16xi32, #gpu.address_space<workgroup>>>
    %f0 = croq.dma.copy async %tile to %buf0 : memref<16x16xi32, strided<[256, 1], offset: ?>> to !smem16 -> !fut16
    // CHECK: %[[F1:.*]] = croq.dma.any %{{.*}} : memref<16x16xi32, #gpu.address_space<workgroup>> -> <dma, async, memref<16x16xi32, #gpu.address_space<workgroup>>>
    %f1 = croq.dma.any %buf1 : !smem16 -> !fut16
    // CHECK: croq.dma.copy async %{{.*}} to %{{.*}} after %[[F0]] : {{.*}}, !croq.future<dma, async, {{.*}}> -> !croq.future
    %f2 = croq.dma.copy async %tile to %buf1 after %f0 : memref<16x16xi32, strided<[256, 1], offset: ?>> to !smem16, !fut16 -> !fut16
    // CHECK: croq.dma.copy swizzle(64) %{{.*}} to %{{.*}} :
    croq.dma.copy swizzle(64) %tile to %buf1 : memref<16x16xi32, strided<[256, 1], offset: ?>> to !smem16
    // CHECK: croq.wait %[[F0]], %{{.*}} : !croq.future<dma, async, {{.*}}>, !croq.future<dma, async, {{.*}}>
    croq.wait %f0, %f2 : !fut16, !fut16
    // CHECK: croq.future.data %[[F0]] : <dma, async, {{.*}}> -> memref<16x16xi32, #gpu.address_space<workgroup>>
    %d = croq.future.data %f0 : !fut16 -> !smem16
    // CHECK: croq.swap %[[F0]], %[[F1]] : <dma, async, {{.*}}>
    %s0, %s1 = croq.swap %f0, %f1 : !fut16
    // CHECK: croq.rotate %{{.*}}, %{{.*}}, %{{.*}} : !croq.future<dma, async, {{.*}}>, !croq.future<dma, async, {{.*}}>, !croq.future<dma, async, {{.*}}>
    %r0, %r1, %r2 = croq.rotate %s0, %s1, %f2 : !fut16, !fut16, !fut16
    %pick = arith.cmpi eq, %i, %j : index
    %sel = arith.select %pick, %r0, %r1 : !fut16
    croq.wait %sel, %r2 : !fut16, !fut16
  }
  return
}

// CHECK-LABEL: func.func @tma
func.func @tma(%lhs: memref<?x?xf16>, %out: memref<?x?xf16>, %bm: index, %k: index) {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  croq.parallel (%b) by [%c1] : block {
    %full = croq.event.alloc : !croq.event<shared, 2>
    %s = memref.alloc() : memref<64x64xf16, #gpu.address_space<workgroup>>
    %g = croq.subspan %lhs[64, 64] at [%bm, %k] : memref<?x?xf16> -> memref<64x64xf16, strided<[?, 1], offset: ?>>
    // CHECK: croq.tma.copy %{{.*}} to %{{.*}} : memref<64x64xf16, strided<[?, 1], offset: ?>> to memref<64x64xf16, #gpu.address_space<workgroup>>
    croq.tma.copy %g to %s : memref<64x64xf16, strided<[?, 1], offset: ?>> to memref<64x64xf16, #gpu.address_space<workgroup>>
    // CHECK: croq.tma.copy async swizzle(128) %{{.*}} to %{{.*}} bind %{{.*}}[%{{.*}}] : {{.*}}, !croq.event<shared, 2>
    croq.tma.copy async swizzle(128) %g to %s bind %full[%c0] : memref<64x64xf16, strided<[?, 1], offset: ?>> to memref<64x64xf16, #gpu.address_space<workgroup>>, !croq.event<shared, 2>
    // CHECK: %[[TF:.*]] = croq.tma.copy async swizzle(128) %{{.*}} to %{{.*}} : {{.*}} -> !croq.future<tma, async, memref<64x64xf16, #gpu.address_space<workgroup>>>
    %tf = croq.tma.copy async swizzle(128) %g to %s : memref<64x64xf16, strided<[?, 1], offset: ?>> to memref<64x64xf16, #gpu.address_space<workgroup>> -> !croq.future<tma, async, memref<64x64xf16, #gpu.address_space<workgroup>>>
    // CHECK: croq.event.trigger %{{.*}} at(%{{.*}}) after %[[TF]] : <shared, 2>, !croq.future<tma, async,
    croq.event.trigger %full at(%k) after %tf : !croq.event<shared, 2>, !croq.future<tma, async, memref<64x64xf16, #gpu.address_space<workgroup>>>
    // CHECK: croq.dma.any %{{.*}} -> <tma, async
    %tany = croq.dma.any %s : memref<64x64xf16, #gpu.address_space<workgroup>> -> !croq.future<tma, async, memref<64x64xf16, #gpu.address_space<workgroup>>>
    %o = croq.subspan %out[64, 64] at [%bm, %c0] : memref<?x?xf16> -> memref<64x64xf16, strided<[?, 1], offset: ?>>
    // CHECK: croq.tma.copy %{{.*}} to %{{.*}} : memref<64x64xf16, #gpu.address_space<workgroup>> to memref<64x64xf16, strided<[?, 1], offset: ?>>
    croq.tma.copy %s to %o : memref<64x64xf16, #gpu.address_space<workgroup>> to memref<64x64xf16, strided<[?, 1], offset: ?>>
  }
  return
}

// CHECK-LABEL: func.func @mma
func.func @mma(%a: memref<16x16xf16, #gpu.address_space<workgroup>>,
               %bt: memref<16x16xf16, #gpu.address_space<workgroup>>,
               %out: memref<16x16xf32>,
               %wacc: !croq.frag<acc, 64x32xf32, warpgroup>,
               %wa: !croq.frag<a, 64x16xf16, warpgroup>,
               %wb: !croq.frag<b, 32x16xf16, warpgroup>) {
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  croq.parallel (%b) by [%c1] : block {
    croq.parallel (%w) by [%c1] : warp {
      // CHECK: %[[ACC:.*]] = croq.mma.fill %{{.*}} : f32 -> <acc, 16x16xf32>
      %acc = croq.mma.fill %zero : f32 -> !croq.frag<acc, 16x16xf32>
      // CHECK: %[[MA:.*]] = croq.mma.load %{{.*}} : memref<16x16xf16, #gpu.address_space<workgroup>> -> <a, 16x16xf16>
      %ma = croq.mma.load %a : memref<16x16xf16, #gpu.address_space<workgroup>> -> !croq.frag<a, 16x16xf16>
      // CHECK: %[[MB:.*]] = croq.mma.load swizzle(32) %{{.*}} : memref<16x16xf16, #gpu.address_space<workgroup>> -> <b, 16x16xf16>
      %mb = croq.mma.load swizzle(32) %bt : memref<16x16xf16, #gpu.address_space<workgroup>> -> !croq.frag<b, 16x16xf16>
      // CHECK: %[[R:.*]] = croq.mma row_row %[[ACC]], %[[MA]], %[[MB]] : <acc, 16x16xf32>, <a, 16x16xf16>, <b, 16x16xf16> -> !croq.frag<acc, 16x16xf32>
      %r = croq.mma row_row %acc, %ma, %mb : !croq.frag<acc, 16x16xf32>, !croq.frag<a, 16x16xf16>, !croq.frag<b, 16x16xf16> -> !croq.frag<acc, 16x16xf32>
      // The scope is printed only when it is not the default (warp).
      // CHECK: croq.mma row_row %{{.*}} : <acc, 64x32xf32, warpgroup>, <a, 64x16xf16, warpgroup>, <b, 32x16xf16, warpgroup> -> !croq.frag<acc, 64x32xf32, warpgroup>
      %wr = croq.mma row_row %wacc, %wa, %wb : !croq.frag<acc, 64x32xf32, warpgroup>, !croq.frag<a, 64x16xf16, warpgroup>, !croq.frag<b, 32x16xf16, warpgroup> -> !croq.frag<acc, 64x32xf32, warpgroup>
      // CHECK: croq.mma row_col
      %r2 = croq.mma row_col %r, %ma, %mb : !croq.frag<acc, 16x16xf32>, !croq.frag<a, 16x16xf16>, !croq.frag<b, 16x16xf16> -> !croq.frag<acc, 16x16xf32>
      // CHECK: croq.mma col_row
      %r3 = croq.mma col_row %r2, %ma, %mb : !croq.frag<acc, 16x16xf32>, !croq.frag<a, 16x16xf16>, !croq.frag<b, 16x16xf16> -> !croq.frag<acc, 16x16xf32>
      // CHECK: croq.mma col_col
      %r4 = croq.mma col_col %r3, %ma, %mb : !croq.frag<acc, 16x16xf32>, !croq.frag<a, 16x16xf16>, !croq.frag<b, 16x16xf16> -> !croq.frag<acc, 16x16xf32>
      // CHECK: %[[AF:.*]] = croq.mma async row_row %{{.*}} -> !croq.future<mma, async, !croq.frag<acc, 16x16xf32>>
      %af = croq.mma async row_row %r4, %ma, %mb : !croq.frag<acc, 16x16xf32>, !croq.frag<a, 16x16xf16>, !croq.frag<b, 16x16xf16> -> !croq.future<mma, async, !croq.frag<acc, 16x16xf32>>
      // CHECK: croq.wait %[[AF]]
      croq.wait %af : !croq.future<mma, async, !croq.frag<acc, 16x16xf32>>
      // CHECK: %[[DONE:.*]] = croq.future.data %[[AF]]
      %done = croq.future.data %af : !croq.future<mma, async, !croq.frag<acc, 16x16xf32>> -> !croq.frag<acc, 16x16xf32>
      // CHECK: croq.mma.commit{{$}}
      croq.mma.commit
      // CHECK: croq.mma.commit pending 1
      croq.mma.commit pending 1
      // CHECK: croq.mma.store %[[DONE]], %{{.*}} : <acc, 16x16xf32>, memref<16x16xf32>
      croq.mma.store %done, %out : !croq.frag<acc, 16x16xf32>, memref<16x16xf32>
    }
  }
  return
}

// CHECK-LABEL: func.func @warp_specialize
// CHECK: croq.warp_specialize registers(40, 232) {
// CHECK-NEXT: croq.inthreads async (%{{.*}}) {
// CHECK: croq.inthreads async (%{{.*}}) {
func.func @warp_specialize(%n: index) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  croq.parallel (%b) by [%n] : block {
    croq.parallel (%p) by [%c2] : warpgroup {
      %producer = arith.cmpi eq, %p, %c0 : index
      %consumer = arith.cmpi ne, %p, %c0 : index
      croq.warp_specialize registers(40, 232) {
        croq.inthreads async (%producer) {
        }
        croq.inthreads async (%consumer) {
        }
      }
    }
  }
  return
}

// The registers of a warpgroup accumulator: where each lies, reading and
// replacing one; A from registers (an accumulator-layout fragment).
// CHECK-LABEL: func.func @accumulator_registers
// CHECK: %{{.*}}, %{{.*}} = croq.mma.coords[5] : !croq.frag<acc, 64x128xf32, warpgroup>
// CHECK: croq.mma.element %{{.*}}[5] : <acc, 64x128xf32, warpgroup> -> f32
// CHECK: croq.mma.set_element %{{.*}}, %{{.*}}[5] : f32, <acc, 64x128xf32, warpgroup>
// CHECK: croq.mma row_col %{{.*}}, %{{.*}}, %{{.*}} : <acc, 64x128xf32, warpgroup>, <acc, 64x64xbf16, warpgroup>, <b, 64x128xbf16, warpgroup>
func.func @accumulator_registers(%acc: !croq.frag<acc, 64x128xf32, warpgroup>,
                                 %p: !croq.frag<acc, 64x64xbf16, warpgroup>,
                                 %v: !croq.frag<b, 64x128xbf16, warpgroup>) -> !croq.frag<acc, 64x128xf32, warpgroup> {
  %row, %col = croq.mma.coords[5] : !croq.frag<acc, 64x128xf32, warpgroup>
  %x = croq.mma.element %acc[5] : !croq.frag<acc, 64x128xf32, warpgroup> -> f32
  %y = croq.mma.set_element %x, %acc[5] : f32, !croq.frag<acc, 64x128xf32, warpgroup>
  %r = croq.mma row_col %y, %p, %v : !croq.frag<acc, 64x128xf32, warpgroup>, !croq.frag<acc, 64x64xbf16, warpgroup>, !croq.frag<b, 64x128xbf16, warpgroup> -> !croq.frag<acc, 64x128xf32, warpgroup>
  return %r : !croq.frag<acc, 64x128xf32, warpgroup>
}

// CHECK-LABEL: func.func @fence
// CHECK: croq.fence block
func.func @fence() {
  croq.fence block
  return
}

// CHECK-LABEL: func.func @device_call
// CHECK: croq.call "ns::f<8>"(%{{.*}}, %{{.*}}) : (memref<4xf32, #gpu.address_space<private>>, i32) -> ()
// CHECK: croq.call "g"(%{{.*}}) : (f16) -> f32
func.func @device_call(%n: i32, %h: f16) {
  %c1 = arith.constant 1 : index
  croq.parallel (%t) by [%c1] : thread {
    %b = memref.alloc() : memref<4xf32, #gpu.address_space<private>>
    croq.call "ns::f<8>"(%b, %n) : (memref<4xf32, #gpu.address_space<private>>, i32) -> ()
    %r = croq.call "g"(%h) : (f16) -> f32
    croq.yield
  }
  return
}

// CHECK-LABEL: func.func @mma_scale
// CHECK: croq.mma.scale %{{.*}}, %{{.*}} rows %{{.*}} : memref<64x1xf32> times %{{.*}} : f32 : !croq.frag<acc, 64x128xf32, warpgroup>
// CHECK: croq.mma.scale %{{.*}}, %{{.*}} rows %{{.*}} : memref<64xf32> : !croq.frag<acc, 64x128xf16, warpgroup>
// CHECK: croq.mma.scale %{{.*}}, %{{.*}} : !croq.frag<acc, 64x128xf32, warpgroup>
func.func @mma_scale(%s: !croq.frag<acc, 64x128xf32, warpgroup>,
                     %p: !croq.frag<acc, 64x128xf32, warpgroup>,
                     %h: !croq.frag<acc, 64x128xf16, warpgroup>,
                     %rows: memref<64x1xf32>, %flat: memref<64xf32>, %f: f32) {
  %0 = croq.mma.scale %s, %p rows %rows : memref<64x1xf32> times %f : f32 : !croq.frag<acc, 64x128xf32, warpgroup>
  %1 = croq.mma.scale %h, %h rows %flat : memref<64xf32> : !croq.frag<acc, 64x128xf16, warpgroup>
  %2 = croq.mma.scale %0, %p : !croq.frag<acc, 64x128xf32, warpgroup>
  return
}

// CHECK-LABEL: func.func @sparse_mma
// CHECK: %[[ME:.*]] = croq.mma.load %{{.*}} : memref<64x4xi8, #gpu.address_space<workgroup>> -> <meta, 64x32xf16, warpgroup>
// CHECK: croq.mma row_row %{{.*}}, %{{.*}}, %{{.*}} sparse(%[[ME]] : !croq.frag<meta, 64x32xf16, warpgroup>) : <acc, 64x64xf32, warpgroup>, <a, 64x16xf16, warpgroup>, <b, 64x32xf16, warpgroup> -> !croq.frag<acc, 64x64xf32, warpgroup>
func.func @sparse_mma(%acc: !croq.frag<acc, 64x64xf32, warpgroup>,
                      %a: !croq.frag<a, 64x16xf16, warpgroup>,
                      %b: !croq.frag<b, 64x32xf16, warpgroup>,
                      %m: memref<64x4xi8, #gpu.address_space<workgroup>>) {
  %me = croq.mma.load %m : memref<64x4xi8, #gpu.address_space<workgroup>> -> !croq.frag<meta, 64x32xf16, warpgroup>
  %0 = croq.mma row_row %acc, %a, %b sparse(%me : !croq.frag<meta, 64x32xf16, warpgroup>) : !croq.frag<acc, 64x64xf32, warpgroup>, !croq.frag<a, 64x16xf16, warpgroup>, !croq.frag<b, 64x32xf16, warpgroup> -> !croq.frag<acc, 64x64xf32, warpgroup>
  return
}
