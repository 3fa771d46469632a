// RUN: croq-translate --croq-to-ptx %s | FileCheck %s --check-prefix=PTX
// RUN: %if ptxas %{ croq-translate --croq-to-ptx %s -o %t.ptx && %ptxas -arch=sm_90a %t.ptx -o %t.cubin %}
// RUN: %if ptxas %{ croq-translate --croq-chip=sm_80 --croq-features=+ptx70 --croq-to-ptx %s -o %t80.ptx && %ptxas -arch=sm_80 %t80.ptx -o %t80.cubin %}
// The 16-byte fast path and the block barrier after the cooperative copy.
// PTX-LABEL: .entry copy_f32_kernel(
// PTX: ld.global.v4.b32
// PTX: st.shared.v4.b32
// PTX: bar.sync 0
// PTX-LABEL: .entry copy_f16_kernel(

// Tiled copies global -> shared -> global through croq.dma.copy, with tail
// tiles when 64 does not divide the extents. The copy benchmark runs
// @copy_f32; the tests run both on tail shapes.
!tile = memref<64x64xf32, #gpu.address_space<workgroup>>
!htile = memref<32x128xf16, #gpu.address_space<workgroup>>

func.func @copy_f32(%src: memref<?x?xf32>, %dst: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c256 = arith.constant 256 : index
  %m = memref.dim %src, %c0 : memref<?x?xf32>
  %n = memref.dim %src, %c1 : memref<?x?xf32>
  %gm = arith.ceildivui %m, %c64 : index
  %gn = arith.ceildivui %n, %c64 : index
  croq.parallel (%bm, %bn) by [%gm, %gn] : block {
    %s = memref.alloc() : !tile
    croq.parallel (%t) by [%c256] : thread {
      %in = croq.subspan %src[64, 64] at [%bm, %bn] : memref<?x?xf32> -> memref<64x64xf32, strided<[?, 1], offset: ?>>
      croq.dma.copy %in to %s : memref<64x64xf32, strided<[?, 1], offset: ?>> to !tile
      %out = croq.subspan %dst[64, 64] at [%bm, %bn] : memref<?x?xf32> -> memref<64x64xf32, strided<[?, 1], offset: ?>>
      croq.dma.copy %s to %out : !tile to memref<64x64xf32, strided<[?, 1], offset: ?>>
    }
  }
  return
}

// f16 tiles of 32 x 128 with a chunkat on the way out: the output tile is
// written as two 32 x 64 halves.
func.func @copy_f16(%src: memref<?x?xf16>, %dst: memref<?x?xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c32 = arith.constant 32 : index
  %c128 = arith.constant 128 : index
  %m = memref.dim %src, %c0 : memref<?x?xf16>
  %n = memref.dim %src, %c1 : memref<?x?xf16>
  %gm = arith.ceildivui %m, %c32 : index
  %gn = arith.ceildivui %n, %c128 : index
  croq.parallel (%bm, %bn) by [%gm, %gn] : block {
    %s = memref.alloc() : !htile
    croq.parallel (%t) by [%c128] : thread {
      %in = croq.subspan %src[32, 128] at [%bm, %bn] : memref<?x?xf16> -> memref<32x128xf16, strided<[?, 1], offset: ?>>
      croq.dma.copy %in to %s : memref<32x128xf16, strided<[?, 1], offset: ?>> to !htile
      %out = croq.subspan %dst[32, 128] at [%bm, %bn] : memref<?x?xf16> -> memref<32x128xf16, strided<[?, 1], offset: ?>>
      scf.for %h = %c0 to %c2 step %c1 {
        %sh = croq.chunkat %s[_, %h by 2] : !htile -> memref<32x64xf16, strided<[128, 1], offset: ?>, #gpu.address_space<workgroup>>
        %oh = croq.chunkat %out[_, %h by 2] : memref<32x128xf16, strided<[?, 1], offset: ?>> -> memref<32x64xf16, strided<[?, 1], offset: ?>>
        croq.dma.copy %sh to %oh : memref<32x64xf16, strided<[128, 1], offset: ?>, #gpu.address_space<workgroup>> to memref<32x64xf16, strided<[?, 1], offset: ?>>
      }
    }
  }
  return
}
