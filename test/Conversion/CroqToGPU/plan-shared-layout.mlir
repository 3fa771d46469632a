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

// -----

// An epilogue staging buffer, which warpgroup mma.stores fill and TMA
// stores read, gets the swizzled layout of its rows (512 bytes: span 128)
// and its TMA store the swizzle. One that anything else reads, or that a
// transposed store fills, keeps the plain layout.
// CHECK-LABEL: func.func @epilogue
// CHECK: memref.alloc() {croq.swizzle = 128 : i64} : memref<2x64x256xf16, #gpu.address_space<workgroup>>
// CHECK: memref.alloc() : memref<64x64xf16, #gpu.address_space<workgroup>>
// CHECK: memref.alloc() : memref<64x64xf16, #gpu.address_space<workgroup>>
// CHECK: croq.tma.copy swizzle(128) %{{.*}} to %{{.*}} : memref<64x256xf16, strided<[256, 1], offset: ?>, #gpu.address_space<workgroup>> to memref<64x256xf16, strided<[?, 1], offset: ?>>
// CHECK: croq.tma.copy %{{.*}} to %{{.*}} : memref<64x64xf16, #gpu.address_space<workgroup>> to memref<64x64xf16, strided<[?, 1], offset: ?>>
// CHECK: croq.tma.copy %{{.*}} to %{{.*}} : memref<64x64xf16, #gpu.address_space<workgroup>> to memref<64x64xf16, strided<[?, 1], offset: ?>>
func.func @epilogue(%n: index, %out: memref<?x?xf16>, %other: memref<64x64xf16>,
                    %acc: !croq.frag<acc, 64x256xf32, warpgroup>,
                    %acc64: !croq.frag<acc, 64x64xf32, warpgroup>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  croq.parallel (%b) by [%n] : block {
    %s = memref.alloc() : memref<2x64x256xf16, #gpu.address_space<workgroup>>
    %read = memref.alloc() : memref<64x64xf16, #gpu.address_space<workgroup>>
    %transposed = memref.alloc() : memref<64x64xf16, #gpu.address_space<workgroup>>
    croq.parallel (%p) by [%c1] : warpgroup {
      %half = memref.subview %s[%p, 0, 0] [1, 64, 256] [1, 1, 1] : memref<2x64x256xf16, #gpu.address_space<workgroup>> to memref<64x256xf16, strided<[256, 1], offset: ?>, #gpu.address_space<workgroup>>
      croq.mma.store %acc, %half : !croq.frag<acc, 64x256xf32, warpgroup>, memref<64x256xf16, strided<[256, 1], offset: ?>, #gpu.address_space<workgroup>>
      %g = memref.subview %out[%c0, %c0] [64, 256] [1, 1] : memref<?x?xf16> to memref<64x256xf16, strided<[?, 1], offset: ?>>
      croq.tma.copy %half to %g : memref<64x256xf16, strided<[256, 1], offset: ?>, #gpu.address_space<workgroup>> to memref<64x256xf16, strided<[?, 1], offset: ?>>
      croq.mma.store %acc64, %read : !croq.frag<acc, 64x64xf32, warpgroup>, memref<64x64xf16, #gpu.address_space<workgroup>>
      %g2 = memref.subview %out[%c0, %c0] [64, 64] [1, 1] : memref<?x?xf16> to memref<64x64xf16, strided<[?, 1], offset: ?>>
      croq.tma.copy %read to %g2 : memref<64x64xf16, #gpu.address_space<workgroup>> to memref<64x64xf16, strided<[?, 1], offset: ?>>
      croq.dma.copy %read to %other : memref<64x64xf16, #gpu.address_space<workgroup>> to memref<64x64xf16>
      croq.mma.store transpose %acc64, %transposed : !croq.frag<acc, 64x64xf32, warpgroup>, memref<64x64xf16, #gpu.address_space<workgroup>>
      croq.tma.copy %transposed to %g2 : memref<64x64xf16, #gpu.address_space<workgroup>> to memref<64x64xf16, strided<[?, 1], offset: ?>>
    }
  }
  return
}

// -----

// Views that are not whole planes of the buffer (here a column offset)
// keep the plain layout: an accumulator pair from an odd column, or a TMA
// box from a row that is not a multiple of 8, would straddle the swizzle.
// CHECK-LABEL: func.func @epilogue_part_of_a_plane
// CHECK: memref.alloc() : memref<64x256xf16, #gpu.address_space<workgroup>>
// CHECK-NOT: swizzle
func.func @epilogue_part_of_a_plane(%n: index, %out: memref<?x?xf16>,
                                    %acc: !croq.frag<acc, 64x128xf32, warpgroup>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  croq.parallel (%b) by [%n] : block {
    %s = memref.alloc() : memref<64x256xf16, #gpu.address_space<workgroup>>
    croq.parallel (%p) by [%c1] : warpgroup {
      %part = memref.subview %s[0, 128] [64, 128] [1, 1] : memref<64x256xf16, #gpu.address_space<workgroup>> to memref<64x128xf16, strided<[256, 1], offset: 128>, #gpu.address_space<workgroup>>
      croq.mma.store %acc, %part : !croq.frag<acc, 64x128xf32, warpgroup>, memref<64x128xf16, strided<[256, 1], offset: 128>, #gpu.address_space<workgroup>>
      %g = memref.subview %out[%c0, %c0] [64, 256] [1, 1] : memref<?x?xf16> to memref<64x256xf16, strided<[?, 1], offset: ?>>
      croq.tma.copy %s to %g : memref<64x256xf16, #gpu.address_space<workgroup>> to memref<64x256xf16, strided<[?, 1], offset: ?>>
    }
  }
  return
}

// -----

// A cast that gives a buffer the type of the views beside it (the buffer
// of a `dma.any` placeholder, which a swap can hand to a wgmma operand)
// accesses nothing: the buffer takes the layout wgmma reads it in.
// CHECK-LABEL: func.func @placeholder_cast
// CHECK: memref.alloc() {croq.swizzle = 128 : i64} : memref<64x64xf16, #gpu.address_space<workgroup>>
// CHECK: memref.cast
// CHECK: croq.dma.any
func.func @placeholder_cast(%n: index) {
  %c1 = arith.constant 1 : index
  croq.parallel (%b) by [%n] : block {
    %s = memref.alloc() : memref<64x64xf16, #gpu.address_space<workgroup>>
    %cast = memref.cast %s : memref<64x64xf16, #gpu.address_space<workgroup>> to memref<64x64xf16, strided<[64, 1], offset: ?>, #gpu.address_space<workgroup>>
    %f = croq.dma.any %cast : memref<64x64xf16, strided<[64, 1], offset: ?>, #gpu.address_space<workgroup>> -> <dma, async, memref<64x64xf16, strided<[64, 1], offset: ?>, #gpu.address_space<workgroup>>>
    croq.parallel (%p) by [%c1] : warpgroup {
      %d = croq.future.data %f : <dma, async, memref<64x64xf16, strided<[64, 1], offset: ?>, #gpu.address_space<workgroup>>> -> memref<64x64xf16, strided<[64, 1], offset: ?>, #gpu.address_space<workgroup>>
      %t = memref.subview %d[0, 0] [64, 16] [1, 1] : memref<64x64xf16, strided<[64, 1], offset: ?>, #gpu.address_space<workgroup>> to memref<64x16xf16, strided<[64, 1], offset: ?>, #gpu.address_space<workgroup>>
      %m = croq.mma.load %t : memref<64x16xf16, strided<[64, 1], offset: ?>, #gpu.address_space<workgroup>> -> !croq.frag<a, 64x16xf16, warpgroup>
    }
  }
  return
}
