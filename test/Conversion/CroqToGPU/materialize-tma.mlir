// RUN: croq-opt %s --croq-materialize-tma --split-input-file | FileCheck %s
// RUN: croq-opt %s --croq-materialize-tma --croq-materialize-tma --split-input-file | FileCheck %s

// A TMA copy names a tensor map built before the kernel over its whole
// tensor, with its tile as the box; two copies of the same tensor and box
// share one. The D1 trigger after a bound load expects the bytes of every
// load bound to its element (2 x 64 x 64 x 2 bytes). Running the pass again
// changes nothing.
// CHECK-LABEL: func.func @bound
// CHECK-SAME: (%[[N:.*]]: index, %[[G:.*]]: memref<?x?xf16>)
// CHECK: %[[U:.*]] = memref.cast %[[G]] : memref<?x?xf16> to memref<*xf16>
// CHECK: %[[M:.*]] = nvgpu.tma.create.descriptor %[[U]] box[%{{.*}}, %{{.*}}] : memref<*xf16> -> <tensor = memref<64x64xf16, #gpu.address_space<workgroup>>, swizzle = none, l2promo = l2promo_128b, oob = zero, interleave = none>
// CHECK-NOT: nvgpu.tma.create.descriptor
// CHECK: croq.parallel
// CHECK: croq.tma.copy async %{{.*}} to %{{.*}} bind %{{.*}}[%{{.*}}] map(%[[M]] :
// CHECK: croq.tma.copy async %{{.*}} to %{{.*}} bind %{{.*}}[%{{.*}}] map(%[[M]] :
// CHECK: croq.event.trigger %{{.*}}[%{{.*}}] expect_tx(16384) : <shared, 2>
// CHECK: croq.event.trigger %{{.*}}[%{{.*}}] : <shared, 2>{{$}}
func.func @bound(%n: index, %g: memref<?x?xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  croq.parallel (%b) by [%n] : block {
    %full = croq.event.alloc : !croq.event<shared, 2>
    %a = memref.alloc() : memref<64x64xf16, #gpu.address_space<workgroup>>
    %bt = memref.alloc() : memref<64x64xf16, #gpu.address_space<workgroup>>
    %ta = croq.subspan %g[64, 64] at [%b, %c0] : memref<?x?xf16> -> memref<64x64xf16, strided<[?, 1], offset: ?>>
    %tb = croq.subspan %g[64, 64] at [%b, %c1] : memref<?x?xf16> -> memref<64x64xf16, strided<[?, 1], offset: ?>>
    croq.tma.copy async %ta to %a bind %full[%c0] : memref<64x64xf16, strided<[?, 1], offset: ?>> to memref<64x64xf16, #gpu.address_space<workgroup>>, !croq.event<shared, 2>
    croq.tma.copy async %tb to %bt bind %full[%c0] : memref<64x64xf16, strided<[?, 1], offset: ?>> to memref<64x64xf16, #gpu.address_space<workgroup>>, !croq.event<shared, 2>
    croq.event.trigger %full[%c0] : !croq.event<shared, 2>
    croq.event.trigger %full[%c1] : !croq.event<shared, 2>
  }
  return
}

// -----

// D2: `trigger e after f` expects the bytes of the loads whose futures it
// names; a store copy has a map and no event.
// CHECK-LABEL: func.func @after
// CHECK: %[[M:.*]] = nvgpu.tma.create.descriptor
// CHECK: croq.parallel
// CHECK: %[[F:.*]] = croq.tma.copy async %{{.*}} to %{{.*}} map(%[[M]] :
// CHECK: croq.event.trigger %{{.*}} at(%{{.*}}) after %[[F]] expect_tx(8192)
// CHECK: croq.tma.copy %{{.*}} to %{{.*}} map(%[[M]] :
func.func @after(%n: index, %g: memref<?x?xf16>) {
  %c0 = arith.constant 0 : index
  croq.parallel (%b) by [%n] : block {
    %full = croq.event.alloc : !croq.event<shared, 2>
    %a = memref.alloc() : memref<64x64xf16, #gpu.address_space<workgroup>>
    %ta = croq.subspan %g[64, 64] at [%b, %c0] : memref<?x?xf16> -> memref<64x64xf16, strided<[?, 1], offset: ?>>
    %f = croq.tma.copy async %ta to %a : memref<64x64xf16, strided<[?, 1], offset: ?>> to memref<64x64xf16, #gpu.address_space<workgroup>> -> !croq.future<tma, async, memref<64x64xf16, #gpu.address_space<workgroup>>>
    croq.event.trigger %full at(%b) after %f : !croq.event<shared, 2>, !croq.future<tma, async, memref<64x64xf16, #gpu.address_space<workgroup>>>
    croq.tma.copy %a to %ta : memref<64x64xf16, #gpu.address_space<workgroup>> to memref<64x64xf16, strided<[?, 1], offset: ?>>
  }
  return
}

// -----

// The element index is pure arithmetic at the trigger (the importer casts a
// u32 mutable there) of a value that exists before the copy: it moves above
// the copy, which needs the element when it is issued.
// CHECK-LABEL: func.func @index_after_copy
// CHECK: %[[I:.*]] = arith.index_castui
// CHECK-NEXT: %[[F:.*]] = croq.tma.copy async
// CHECK: croq.event.trigger %{{.*}} at(%[[I]]) after %[[F]] expect_tx(8192)
func.func @index_after_copy(%n: index, %g: memref<?x?xf16>, %order: i32) {
  %c0 = arith.constant 0 : index
  croq.parallel (%b) by [%n] : block {
    %full = croq.event.alloc : !croq.event<shared, 2>
    %a = memref.alloc() : memref<64x64xf16, #gpu.address_space<workgroup>>
    %ta = croq.subspan %g[64, 64] at [%b, %c0] : memref<?x?xf16> -> memref<64x64xf16, strided<[?, 1], offset: ?>>
    %f = croq.tma.copy async %ta to %a : memref<64x64xf16, strided<[?, 1], offset: ?>> to memref<64x64xf16, #gpu.address_space<workgroup>> -> !croq.future<tma, async, memref<64x64xf16, #gpu.address_space<workgroup>>>
    %i = arith.index_castui %order : i32 to index
    croq.event.trigger %full at(%i) after %f : !croq.event<shared, 2>, !croq.future<tma, async, memref<64x64xf16, #gpu.address_space<workgroup>>>
  }
  return
}

// -----

// A view that dropped unit dimensions (`.sqz()` of one batch and head of a
// [B, S, H, D] tensor) moves a box of the tensor's rank, of extent 1 in
// each dropped dimension.
// CHECK-LABEL: func.func @squeezed
// CHECK: nvgpu.tma.create.descriptor %{{.*}} box[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : memref<*xf16> -> <tensor = memref<1x64x1x64xf16, #gpu.address_space<workgroup>>
func.func @squeezed(%n: index, %g: memref<?x?x?x64xf16>) {
  %c0 = arith.constant 0 : index
  croq.parallel (%b, %h) by [%n, %n] : block {
    %a = memref.alloc() : memref<64x64xf16, #gpu.address_space<workgroup>>
    %dim = memref.dim %g, %c0 : memref<?x?x?x64xf16>
    %head = croq.subspan %g[1, 128, 1, 64] at [%b, %c0, %h, %c0] : memref<?x?x?x64xf16> -> memref<1x128x1x64xf16, strided<[?, ?, 64, 1], offset: ?>>
    %sqz = memref.subview %head[0, 0, 0, 0] [1, 128, 1, 64] [1, 1, 1, 1] : memref<1x128x1x64xf16, strided<[?, ?, 64, 1], offset: ?>> to memref<128x64xf16, strided<[?, 1], offset: ?>>
    %tile = croq.subspan %sqz[64, 64] at [%c0, %c0] : memref<128x64xf16, strided<[?, 1], offset: ?>> -> memref<64x64xf16, strided<[?, 1], offset: ?>>
    croq.tma.copy %tile to %a : memref<64x64xf16, strided<[?, 1], offset: ?>> to memref<64x64xf16, #gpu.address_space<workgroup>>
  }
  return
}
