// RUN: croq-opt %s --croq-prepare-gpu --convert-croq-to-gpu --split-input-file --verify-diagnostics | FileCheck %s

// A thread level that uses 8 of the 32 threads of each warp instance: the
// other lanes skip its body.
// CHECK-LABEL: func.func @partial_warp
// CHECK: gpu.launch {{.*}} threads({{.*}}) in (%{{.*}} = %c192
// CHECK: %[[LANE:.*]] = arith.remui %thread_id_x{{.*}}, %c32
// CHECK: %[[USED:.*]] = arith.cmpi ult, %[[LANE]], %c8
// CHECK: scf.if %[[USED]] {
// CHECK: memref.store
func.func @partial_warp(%b: memref<6x8xi32>) {
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  %c8 = arith.constant 8 : index
  croq.parallel (%x) by [%c1] : block {
    croq.parallel (%r) by [%c6] : warp {
      croq.parallel (%s) by [%c8] : thread {
        %v = arith.index_cast %s : index to i32
        memref.store %v, %b[%r, %s] : memref<6x8xi32>
      }
    }
  }
  return
}

// -----

func.func @too_many_threads(%b: memref<64xi32>) {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  croq.parallel (%x) by [%c1] : block {
    // expected-error @below {{an instance of a 'warp' parallel has 32 threads, but its nested parallels use 64; make the inner extents multiply to at most 32}}
    croq.parallel (%r) by [%c1] : warp {
      croq.parallel (%s) by [%c64] : thread {
        %v = arith.index_cast %s : index to i32
        memref.store %v, %b[%s] : memref<64xi32>
      }
    }
  }
  return
}

// -----

// A cooperative copy needs the whole warp; a thread level of 16 lanes
// cannot run it.
func.func @partial_copy(%a: memref<64x8xi32>) {
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  croq.parallel (%p) by [%c1] : block {
    %s = memref.alloc() : memref<64x8xi32, #gpu.address_space<workgroup>>
    croq.parallel (%w) by [%c1] : warp {
      croq.parallel (%t) by [%c16] : thread {
        // expected-error @below {{needs every thread of its group, but the thread level around it uses only 16 of the 32 threads of each instance; give that level 32 threads}}
        croq.dma.copy %a to %s : memref<64x8xi32> to memref<64x8xi32, #gpu.address_space<workgroup>>
      }
    }
  }
  return
}
