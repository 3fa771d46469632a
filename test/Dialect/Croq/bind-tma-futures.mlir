// RUN: croq-opt --croq-bind-tma-futures %s | FileCheck %s

// One copy, one buffer: a one-slot event at the top of the kernel with each
// thread's count of copies into it, the trigger right after the copy and
// the count raised; the wait takes the parity of the latest copy. The DMA
// future stays in a croq.wait.
// CHECK-LABEL: func.func @mixed_wait
// CHECK: croq.parallel
// CHECK-NEXT: %[[E:.*]] = croq.event.alloc : <shared>
// CHECK-NEXT: %[[N:.*]] = memref.alloca() : memref<1xi32, #gpu.address_space<private>>
// CHECK: memref.store %{{.*}}, %[[N]]
// CHECK: %[[T:.*]] = croq.tma.copy async
// CHECK-NEXT: croq.event.trigger %[[E]] after %[[T]] : <shared>
// CHECK: %[[OLD:.*]] = memref.load %[[N]]
// CHECK: %[[NEW:.*]] = arith.addi %[[OLD]]
// CHECK: memref.store %[[NEW]], %[[N]]
// CHECK: %[[D:.*]] = croq.dma.copy async
// CHECK: %[[COUNT:.*]] = memref.load %[[N]]
// CHECK: %[[PHASE:.*]] = arith.subi %[[COUNT]]
// CHECK: %[[P:.*]] = arith.trunci %[[PHASE]] : i32 to i1
// CHECK: croq.event.wait %[[E]] parity %[[P]] : <shared>
// CHECK-NEXT: croq.wait %[[D]] : !croq.future<dma, async, memref<16x32xf32, #gpu.address_space<workgroup>>>
func.func @mixed_wait(%src: memref<?x64xf32>) {
  %c1 = arith.constant 1 : index
  croq.parallel (%b) by [%c1] : block {
    %c0 = arith.constant 0 : index
    %tile = croq.subspan %src[16, 32] at [%b, %c0] : memref<?x64xf32> -> memref<16x32xf32, strided<[64, 1], offset: ?>>
    %buf0 = memref.alloc() : memref<16x32xf32, #gpu.address_space<workgroup>>
    %t = croq.tma.copy async %tile to %buf0 : memref<16x32xf32, strided<[64, 1], offset: ?>> to memref<16x32xf32, #gpu.address_space<workgroup>> -> !croq.future<tma, async, memref<16x32xf32, #gpu.address_space<workgroup>>>
    %buf1 = memref.alloc() : memref<16x32xf32, #gpu.address_space<workgroup>>
    %d = croq.dma.copy async %tile to %buf1 : memref<16x32xf32, strided<[64, 1], offset: ?>> to memref<16x32xf32, #gpu.address_space<workgroup>> -> !croq.future<dma, async, memref<16x32xf32, #gpu.address_space<workgroup>>>
    croq.wait %t, %d : !croq.future<tma, async, memref<16x32xf32, #gpu.address_space<workgroup>>>, !croq.future<dma, async, memref<16x32xf32, #gpu.address_space<workgroup>>>
  }
  return
}

// Two copies into two buffers, chosen by a select: a two-slot event; each
// copy's slot is a constant, the wait's slot is the one whose buffer has
// the address of the future's data.
// CHECK-LABEL: func.func @selected
// CHECK: %[[E:.*]] = croq.event.alloc : <shared, 2>
// CHECK: %[[A:.*]] = croq.tma.copy async
// CHECK-NEXT: %[[S0:.*]] = arith.constant 0 : index
// CHECK-NEXT: croq.event.trigger %[[E]][%[[S0]]] after %[[A]]
// CHECK: %[[B:.*]] = croq.tma.copy async
// CHECK: %[[S1:.*]] = arith.constant 1 : index
// CHECK-NEXT: croq.event.trigger %[[E]][%[[S1]]] after %[[B]]
// CHECK: %[[F:.*]] = arith.select
// CHECK: %[[DATA:.*]] = croq.future.data %[[F]]
// CHECK: memref.extract_aligned_pointer_as_index %[[DATA]]
// CHECK: %[[SAME:.*]] = arith.cmpi eq
// CHECK: %[[SLOT:.*]] = arith.select %[[SAME]]
// CHECK: croq.event.wait %[[E]][%[[SLOT]]] parity %{{.*}} : <shared, 2>
// CHECK-NOT: croq.wait
func.func @selected(%src: memref<?x64xf32>, %c: i1) {
  %c1 = arith.constant 1 : index
  croq.parallel (%b) by [%c1] : block {
    %c0 = arith.constant 0 : index
    %tile = croq.subspan %src[16, 32] at [%b, %c0] : memref<?x64xf32> -> memref<16x32xf32, strided<[64, 1], offset: ?>>
    %buf0 = memref.alloc() : memref<16x32xf32, #gpu.address_space<workgroup>>
    %a = croq.tma.copy async %tile to %buf0 : memref<16x32xf32, strided<[64, 1], offset: ?>> to memref<16x32xf32, #gpu.address_space<workgroup>> -> !croq.future<tma, async, memref<16x32xf32, #gpu.address_space<workgroup>>>
    %buf1 = memref.alloc() : memref<16x32xf32, #gpu.address_space<workgroup>>
    %b2 = croq.tma.copy async %tile to %buf1 : memref<16x32xf32, strided<[64, 1], offset: ?>> to memref<16x32xf32, #gpu.address_space<workgroup>> -> !croq.future<tma, async, memref<16x32xf32, #gpu.address_space<workgroup>>>
    %f = arith.select %c, %a, %b2 : !croq.future<tma, async, memref<16x32xf32, #gpu.address_space<workgroup>>>
    croq.wait %f : !croq.future<tma, async, memref<16x32xf32, #gpu.address_space<workgroup>>>
  }
  return
}
