// RUN: croq-opt %s --croq-insert-barriers --verify-diagnostics


// Only threads below 16 write and then read another thread's element: the
// barrier the read needs cannot go inside the inthreads region.
func.func @no_uniform_point(%out: memref<128xf32>) {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c128 = arith.constant 128 : index
  %one = arith.constant 1.0 : f32
  croq.parallel (%b) by [%c1] : block {
    %s = memref.alloc() : memref<128xf32, #gpu.address_space<workgroup>>
    croq.parallel (%t) by [%c128] : thread {
      %low = arith.cmpi ult, %t, %c16 : index
      croq.inthreads (%low) {
        // expected-note @below {{the earlier access}}
        memref.store %one, %s[%t] : memref<128xf32, #gpu.address_space<workgroup>>
        // expected-error @below {{this read of shared memory must wait for an earlier write of the same buffer by other threads, but no barrier can go between them: only part of the block runs the code around them}}
        // expected-note @below {{hint: croq inserts barriers where threads may share an element, and could not prove these accesses}}
        %x = memref.load %s[%c0] : memref<128xf32, #gpu.address_space<workgroup>>
        memref.store %x, %out[%t] : memref<128xf32>
      }
    }
  }
  return
}

// The same in global memory, which the message names.
func.func @no_uniform_point_global(%g: memref<128xf32>, %out: memref<128xf32>) {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c128 = arith.constant 128 : index
  %one = arith.constant 1.0 : f32
  croq.parallel (%b) by [%c1] : block {
    croq.parallel (%t) by [%c128] : thread {
      %low = arith.cmpi ult, %t, %c16 : index
      croq.inthreads (%low) {
        // expected-note @below {{the earlier access}}
        memref.store %one, %g[%t] : memref<128xf32>
        // expected-error @below {{this read of global memory must wait for an earlier write of the same buffer by other threads}}
        // expected-note @below {{hint: croq inserts barriers where threads may share an element, and could not prove these accesses}}
        %x = memref.load %g[%c0] : memref<128xf32>
        memref.store %x, %out[%t] : memref<128xf32>
      }
    }
  }
  return
}
