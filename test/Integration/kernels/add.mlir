// RUN: croq-translate --croq-to-ptx %s | FileCheck %s --check-prefix=PTX
// RUN: %if ptxas %{ croq-translate --croq-to-ptx %s -o %t.ptx && %ptxas -arch=sm_90a %t.ptx -o %t.cubin %}
// Local tiles live in the thread's local memory.
// PTX: .local .align {{[0-9]+}} .b8 __local_depot0
// PTX: bar.sync 0
// PTX: st.local.b32

// Elementwise c = a + b through shared and local tiles: each block stages a
// 32 x 32 tile of a and b in shared memory; each of its 128 threads copies a
// 1 x 8 strip into local buffers, adds, and writes the strip back to a
// shared result tile, which the block stores (tails clipped).
!st = memref<32x32xf32, #gpu.address_space<workgroup>>
!lt = memref<1x8xf32, #gpu.address_space<private>>

func.func @add(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %c128 = arith.constant 128 : index
  %m = memref.dim %a, %c0 : memref<?x?xf32>
  %n = memref.dim %a, %c1 : memref<?x?xf32>
  %gm = arith.ceildivui %m, %c32 : index
  %gn = arith.ceildivui %n, %c32 : index
  croq.parallel (%bm, %bn) by [%gm, %gn] : block {
    %sa = memref.alloc() : !st
    %sb = memref.alloc() : !st
    %sc = memref.alloc() : !st
    %ta = croq.subspan %a[32, 32] at [%bm, %bn] : memref<?x?xf32> -> memref<32x32xf32, strided<[?, 1], offset: ?>>
    %tb = croq.subspan %b[32, 32] at [%bm, %bn] : memref<?x?xf32> -> memref<32x32xf32, strided<[?, 1], offset: ?>>
    croq.dma.copy %ta to %sa : memref<32x32xf32, strided<[?, 1], offset: ?>> to !st
    croq.dma.copy %tb to %sb : memref<32x32xf32, strided<[?, 1], offset: ?>> to !st
    croq.parallel (%row, %col) by [%c32, %c4] : thread {
      %la = memref.alloc() : !lt
      %lb = memref.alloc() : !lt
      %va = croq.subspan %sa[1, 8] at [%row, %col] : !st -> memref<1x8xf32, strided<[32, 1], offset: ?>, #gpu.address_space<workgroup>>
      %vb = croq.subspan %sb[1, 8] at [%row, %col] : !st -> memref<1x8xf32, strided<[32, 1], offset: ?>, #gpu.address_space<workgroup>>
      croq.dma.copy %va to %la : memref<1x8xf32, strided<[32, 1], offset: ?>, #gpu.address_space<workgroup>> to !lt
      croq.dma.copy %vb to %lb : memref<1x8xf32, strided<[32, 1], offset: ?>, #gpu.address_space<workgroup>> to !lt
      scf.for %j = %c0 to %c8 step %c1 {
        %x = memref.load %la[%c0, %j] : !lt
        %y = memref.load %lb[%c0, %j] : !lt
        %z = arith.addf %x, %y : f32
        memref.store %z, %la[%c0, %j] : !lt
      }
      %vc = croq.subspan %sc[1, 8] at [%row, %col] : !st -> memref<1x8xf32, strided<[32, 1], offset: ?>, #gpu.address_space<workgroup>>
      croq.dma.copy %la to %vc : !lt to memref<1x8xf32, strided<[32, 1], offset: ?>, #gpu.address_space<workgroup>>
    }
    %tc = croq.subspan %c[32, 32] at [%bm, %bn] : memref<?x?xf32> -> memref<32x32xf32, strided<[?, 1], offset: ?>>
    croq.dma.copy %sc to %tc : !st to memref<32x32xf32, strided<[?, 1], offset: ?>>
  }
  return
}
