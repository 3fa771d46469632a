// RUN: croq-opt %s --croq-plan-shared-layout --split-input-file --verify-diagnostics | FileCheck %s

// A swizzle asked of a copy into a buffer no warpgroup MMA reads: the
// buffer keeps the plain layout its loads index, and the copy drops the
// swizzle, with a warning (the program's result does not depend on it).

// CHECK-LABEL: func.func @tma_into_plain
// CHECK: croq.tma.copy %{{.*}} to %{{.*}} :
func.func @tma_into_plain(%g: memref<64x64xf16>, %out: memref<64x64xf16>) {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  croq.parallel (%b) by [%c1] : block {
    %s = memref.alloc() : memref<64x64xf16, #gpu.address_space<workgroup>>
    // expected-warning @below {{asks for a swizzled shared tile, but no warpgroup MMA reads this buffer, which keeps the plain layout its other accesses use; the copy is made without the swizzle}}
    croq.tma.copy swizzle(128) %g to %s : memref<64x64xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
    %v = memref.load %s[%c0, %c0] : memref<64x64xf16, #gpu.address_space<workgroup>>
    memref.store %v, %out[%c0, %c0] : memref<64x64xf16>
  }
  return
}

// -----

// CHECK-LABEL: func.func @dma_into_plain
// CHECK: croq.dma.copy %{{.*}} to %{{.*}} :
func.func @dma_into_plain(%g: memref<64x64xf16>) {
  %c1 = arith.constant 1 : index
  croq.parallel (%b) by [%c1] : block {
    %s = memref.alloc() : memref<64x64xf16, #gpu.address_space<workgroup>>
    // expected-warning @below {{asks for a swizzled shared tile, but no warpgroup MMA reads this buffer}}
    croq.dma.copy swizzle(128) %g to %s : memref<64x64xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
  }
  return
}
