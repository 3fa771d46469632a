// RUN: croq-opt %s --split-input-file --croq-insert-barriers | FileCheck %s

// croq-insert-barriers alone: a barrier for each shared-memory hazard
// between different threads, lifted to a point the whole block reaches;
// none where every thread touches only its own element.

// CHECK-LABEL: func.func @raw_across_threads
// CHECK: memref.store
// CHECK: }
// CHECK-NEXT: croq.barrier block
// CHECK-NEXT: croq.parallel
// Threads write their elements, then every thread reads another one.
func.func @raw_across_threads(%out: memref<128xf32>) {
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  %c127 = arith.constant 127 : index
  croq.parallel (%b) by [%c1] : block {
    %s = memref.alloc() : memref<128xf32, #gpu.address_space<workgroup>>
    croq.parallel (%t) by [%c128] : thread {
      %v = arith.index_cast %t : index to i32
      %f = arith.sitofp %v : i32 to f32
      memref.store %f, %s[%t] : memref<128xf32, #gpu.address_space<workgroup>>
    }
    croq.parallel (%t) by [%c128] : thread {
      %r = arith.subi %c127, %t : index
      %x = memref.load %s[%r] : memref<128xf32, #gpu.address_space<workgroup>>
      memref.store %x, %out[%t] : memref<128xf32>
    }
  }
  return
}

// -----

// CHECK-LABEL: func.func @own_elements
// CHECK-NOT: croq.barrier
// CHECK: return
// A thread reads back only what it wrote itself: no barrier.
func.func @own_elements(%out: memref<128xf32>) {
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  %one = arith.constant 1.0 : f32
  croq.parallel (%b) by [%c1] : block {
    %s = memref.alloc() : memref<128xf32, #gpu.address_space<workgroup>>
    croq.parallel (%t) by [%c128] : thread {
      memref.store %one, %s[%t] : memref<128xf32, #gpu.address_space<workgroup>>
      %x = memref.load %s[%t] : memref<128xf32, #gpu.address_space<workgroup>>
      memref.store %x, %out[%t] : memref<128xf32>
    }
  }
  return
}

// -----

// CHECK-LABEL: func.func @loop_carried
// CHECK: scf.for
// CHECK-NEXT: croq.barrier block
// CHECK-NEXT: croq.parallel
// CHECK: memref.store
// CHECK: }
// CHECK-NEXT: croq.barrier block
// CHECK-NEXT: croq.parallel
// The next iteration's writes must wait for this iteration's reads (WAR
// across the loop's back edge) and the reads for the writes (RAW).
func.func @loop_carried(%g: memref<?x128xf32>, %out: memref<128xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  %c127 = arith.constant 127 : index
  croq.parallel (%b) by [%c1] : block {
    %s = memref.alloc() : memref<128xf32, #gpu.address_space<workgroup>>
    scf.for %k = %c0 to %n step %c1 {
      croq.parallel (%t) by [%c128] : thread {
        %x = memref.load %g[%k, %t] : memref<?x128xf32>
        memref.store %x, %s[%t] : memref<128xf32, #gpu.address_space<workgroup>>
      }
      croq.parallel (%t) by [%c128] : thread {
        %r = arith.subi %c127, %t : index
        %x = memref.load %s[%r] : memref<128xf32, #gpu.address_space<workgroup>>
        memref.store %x, %out[%t] : memref<128xf32>
      }
    }
  }
  return
}
