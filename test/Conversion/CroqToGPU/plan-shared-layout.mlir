// RUN: croq-opt %s --croq-plan-shared-layout --split-input-file | FileCheck %s

// The span follows the bytes of a row: 64 f16 (128 bytes) gives 128, 32 f16
// (64 bytes) gives 64. A buffer that no warpgroup MMA reads keeps the plain
// layout.
// CHECK-LABEL: func.func @spans
// CHECK: memref.alloc() {croq.swizzle = 128 : i64} : memref<2x64x64xf16, #gpu.address_space<workgroup>>
// CHECK: memref.alloc() {croq.swizzle = 64 : i64} : memref<64x32xf16, #gpu.address_space<workgroup>>
// CHECK: memref.alloc() : memref<64x64xf16, #gpu.address_space<workgroup>>
func.func @spans(%n: index, %g: memref<64x64xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  croq.parallel (%b) by [%n] : block {
    %a = memref.alloc() : memref<2x64x64xf16, #gpu.address_space<workgroup>>
    %bt = memref.alloc() : memref<64x32xf16, #gpu.address_space<workgroup>>
    %plain = memref.alloc() : memref<64x64xf16, #gpu.address_space<workgroup>>
    croq.dma.copy %g to %plain : memref<64x64xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
    croq.parallel (%p) by [%c1] : warpgroup {
      %ta = memref.subview %a[%c0, 0, 0] [1, 64, 16] [1, 1, 1] : memref<2x64x64xf16, #gpu.address_space<workgroup>> to memref<64x16xf16, strided<[64, 1], offset: ?>, #gpu.address_space<workgroup>>
      %ma = croq.mma.load %ta : memref<64x16xf16, strided<[64, 1], offset: ?>, #gpu.address_space<workgroup>> -> !croq.frag<a, 64x16xf16, warpgroup>
      %tb = memref.subview %bt[0, 0] [64, 16] [1, 1] : memref<64x32xf16, #gpu.address_space<workgroup>> to memref<64x16xf16, strided<[32, 1]>, #gpu.address_space<workgroup>>
      %mb = croq.mma.load %tb : memref<64x16xf16, strided<[32, 1]>, #gpu.address_space<workgroup>> -> !croq.frag<b, 64x16xf16, warpgroup>
    }
  }
  return
}
