// RUN: croq-opt --croq-bind-tma-futures %s | FileCheck %s
// RUN: croq-opt --croq-bind-tma-futures --croq-assign-arrivals %s | FileCheck %s --check-prefix=ARRIVALS

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

// A placeholder made by the whole block, refilled and waited inside a
// one-thread role: the placeholder does not arrive (it marks its slot), so
// the event's only trigger is the role's copy, and a wait on a marked slot
// returns at once.
// CHECK-LABEL: func.func @placeholder_then_role
// CHECK: %[[E:.*]] = croq.event.alloc : <shared>
// CHECK: %[[N:.*]] = memref.alloca() : memref<1xi32, #gpu.address_space<private>>
// CHECK: %[[MARK:.*]] = memref.alloca() : memref<1xi8, #gpu.address_space<private>>
// CHECK: croq.dma.any
// CHECK-NOT: croq.event.trigger
// CHECK: %[[ONE:.*]] = arith.constant 1 : i8
// CHECK: memref.store %[[ONE]], %[[MARK]]
// CHECK: croq.inthreads
// CHECK: %[[F:.*]] = croq.tma.copy async
// CHECK-NEXT: croq.event.trigger %[[E]] after %[[F]] : <shared>
// CHECK: %[[ZERO:.*]] = arith.constant 0 : i8
// CHECK: memref.store %[[ZERO]], %[[MARK]]
// CHECK: %[[M:.*]] = memref.load %[[MARK]]
// CHECK: %[[PENDING:.*]] = arith.cmpi eq, %[[M]]
// CHECK: scf.if %[[PENDING]] {
// CHECK: croq.event.wait %[[E]] parity
// CHECK-NOT: croq.wait
// ARRIVALS-LABEL: func.func @placeholder_then_role
// ARRIVALS: croq.event.alloc arrivals 1 : <shared>
func.func @placeholder_then_role(%src: memref<?x64xf32>, %refill: i1) {
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  croq.parallel (%b) by [%c1] : block {
    %c0 = arith.constant 0 : index
    %tile = croq.subspan %src[16, 32] at [%b, %c0] : memref<?x64xf32> -> memref<16x32xf32, strided<[64, 1], offset: ?>>
    %buf = memref.alloc() : memref<16x32xf32, #gpu.address_space<workgroup>>
    %any = croq.dma.any %buf : memref<16x32xf32, #gpu.address_space<workgroup>> -> !croq.future<tma, async, memref<16x32xf32, #gpu.address_space<workgroup>>>
    croq.parallel (%t) by [%c128] : thread {
      %first = arith.cmpi eq, %t, %c0 : index
      croq.inthreads (%first) {
        %data = croq.future.data %any : !croq.future<tma, async, memref<16x32xf32, #gpu.address_space<workgroup>>> -> memref<16x32xf32, #gpu.address_space<workgroup>>
        %h = scf.if %refill -> (!croq.future<tma, async, memref<16x32xf32, #gpu.address_space<workgroup>>>) {
          %g = croq.tma.copy async %tile to %data : memref<16x32xf32, strided<[64, 1], offset: ?>> to memref<16x32xf32, #gpu.address_space<workgroup>> -> !croq.future<tma, async, memref<16x32xf32, #gpu.address_space<workgroup>>>
          scf.yield %g : !croq.future<tma, async, memref<16x32xf32, #gpu.address_space<workgroup>>>
        } else {
          scf.yield %any : !croq.future<tma, async, memref<16x32xf32, #gpu.address_space<workgroup>>>
        }
        croq.wait %h : !croq.future<tma, async, memref<16x32xf32, #gpu.address_space<workgroup>>>
      }
    }
  }
  return
}

// A future that leaves the region of warpgroup 0 (its result) and is
// waited in warpgroup 1: the copy is counted right after it in the region's
// threads and after the region in the others, so both wait for the phase
// the copy completes.
// CHECK-LABEL: func.func @carried_out_of_region
// CHECK: %[[EVENT:.*]] = croq.event.alloc : <shared>
// CHECK: %[[COUNT:.*]] = memref.alloca() : memref<1xi32
// CHECK: %[[FIRST:.*]] = arith.cmpi eq
// CHECK: %[[F:.*]] = croq.inthreads (%[[FIRST]]) else(
// CHECK: croq.tma.copy async
// CHECK-NEXT: croq.event.trigger %[[EVENT]] after
// CHECK: memref.store %{{.*}}, %[[COUNT]]
// CHECK: croq.yield
// CHECK: %[[TRUE:.*]] = arith.constant true
// CHECK: %[[OUTSIDE:.*]] = arith.xori %[[FIRST]], %[[TRUE]]
// CHECK: scf.if %[[OUTSIDE]] {
// CHECK: memref.load %[[COUNT]]
// CHECK: memref.store %{{.*}}, %[[COUNT]]
// CHECK: croq.inthreads
// CHECK-NOT: croq.wait
// CHECK: croq.event.wait %[[EVENT]]
func.func @carried_out_of_region(%src: memref<?x64xf32>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  croq.parallel (%b) by [%c1] : block {
    %c0 = arith.constant 0 : index
    %tile = croq.subspan %src[16, 32] at [%b, %c0] : memref<?x64xf32> -> memref<16x32xf32, strided<[64, 1], offset: ?>>
    %buf = memref.alloc() : memref<16x32xf32, #gpu.address_space<workgroup>>
    croq.parallel (%g) by [%c2] : warpgroup {
      %any = croq.dma.any %buf : memref<16x32xf32, #gpu.address_space<workgroup>> -> !croq.future<tma, async, memref<16x32xf32, #gpu.address_space<workgroup>>>
      %first = arith.cmpi eq, %g, %c0 : index
      %f = croq.inthreads (%first) else(%any : !croq.future<tma, async, memref<16x32xf32, #gpu.address_space<workgroup>>>) -> !croq.future<tma, async, memref<16x32xf32, #gpu.address_space<workgroup>>> {
        %d = croq.future.data %any : !croq.future<tma, async, memref<16x32xf32, #gpu.address_space<workgroup>>> -> memref<16x32xf32, #gpu.address_space<workgroup>>
        %k = croq.tma.copy async %tile to %d : memref<16x32xf32, strided<[64, 1], offset: ?>> to memref<16x32xf32, #gpu.address_space<workgroup>> -> !croq.future<tma, async, memref<16x32xf32, #gpu.address_space<workgroup>>>
        croq.yield %k : !croq.future<tma, async, memref<16x32xf32, #gpu.address_space<workgroup>>>
      }
      %second = arith.cmpi eq, %g, %c1 : index
      croq.inthreads (%second) {
        croq.wait %f : !croq.future<tma, async, memref<16x32xf32, #gpu.address_space<workgroup>>>
      }
    }
  }
  return
}
