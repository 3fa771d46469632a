// RUN: croq-translate --croq-to-ptx %s | FileCheck %s --check-prefix=PTX
// RUN: %if ptxas %{ croq-translate --croq-to-ptx %s -o %t.ptx && %ptxas -arch=sm_90a %t.ptx -o %t.cubin %}
// RUN: %if ptxas %{ croq-translate --croq-chip=sm_80 --croq-features=+ptx70 --croq-to-ptx %s -o %t80.ptx && %ptxas -arch=sm_80 %t80.ptx -o %t80.cubin %}
// PTX: cp.async.ca.shared.global
// PTX: cp.async.commit_group
// PTX: cp.async.wait_group 0
// PTX: bar.sync 0

// Chapter 6's double-buffered matmul (s32): lhs [128, 256] x rhs [256, 256],
// an 8 x 16 grid of 16 x 16-thread blocks, K split into 16 tiles of 16. Tile
// k+1 loads asynchronously into one buffer while tile k is consumed from the
// other; `swap` exchanges the futures. The tutorial's epilogue reads lf0 /
// rf0 without waiting: the wait is added here.
!sm = memref<16x16xi32, #gpu.address_space<workgroup>>
!fut = !croq.future<dma, async, memref<16x16xi32, #gpu.address_space<workgroup>>>
!gl = memref<16x16xi32, strided<[256, 1], offset: ?>>

func.func @matmul_db(%lhs: memref<128x256xi32>, %rhs: memref<256x256xi32>,
                     %out: memref<128x256xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0 : i32
  croq.parallel (%px, %py) by [%c8, %c16] : block {
    %b0 = memref.alloc() : !sm
    %b1 = memref.alloc() : !sm
    %b2 = memref.alloc() : !sm
    %b3 = memref.alloc() : !sm
    croq.parallel (%qx, %qy) by [%c16, %c16] : thread {
      // Prologue: tile 0 (with tile_k in 16, tile_k is 0 outside foreach).
      %l0 = croq.chunkat %lhs[%px by 8, %c0 by 16] : memref<128x256xi32> -> !gl
      %r0 = croq.chunkat %rhs[%c0 by 16, %py by 16] : memref<256x256xi32> -> !gl
      %lf0 = croq.dma.copy async %l0 to %b0 : !gl to !sm -> !fut
      %rf0 = croq.dma.copy async %r0 to %b1 : !gl to !sm -> !fut
      %lf1 = croq.dma.any %b2 : !sm -> !fut
      %rf1 = croq.dma.any %b3 : !sm -> !fut
      // foreach tile_k(1:)
      %res:5 = scf.for %k = %c1 to %c16 step %c1
          iter_args(%a0 = %lf0, %a1 = %lf1, %r0i = %rf0, %r1i = %rf1, %acc = %zero)
          -> (!fut, !fut, !fut, !fut, i32) {
        %lt = croq.chunkat %lhs[%px by 8, %k by 16] : memref<128x256xi32> -> !gl
        %rt = croq.chunkat %rhs[%k by 16, %py by 16] : memref<256x256xi32> -> !gl
        %lbuf = croq.future.data %a1 : !fut -> !sm
        %rbuf = croq.future.data %r1i : !fut -> !sm
        %nl1 = croq.dma.copy async %lt to %lbuf : !gl to !sm -> !fut
        %nr1 = croq.dma.copy async %rt to %rbuf : !gl to !sm -> !fut
        croq.wait %a0, %r0i : !fut, !fut
        %ld = croq.future.data %a0 : !fut -> !sm
        %rd = croq.future.data %r0i : !fut -> !sm
        %sum = scf.for %kk = %c0 to %c16 step %c1 iter_args(%s = %acc) -> i32 {
          %x = memref.load %ld[%qx, %kk] : !sm
          %y = memref.load %rd[%kk, %qy] : !sm
          %p = arith.muli %x, %y : i32
          %s2 = arith.addi %s, %p : i32
          scf.yield %s2 : i32
        }
        %nl0, %nl1s = croq.swap %a0, %nl1 : !fut
        %nr0, %nr1s = croq.swap %r0i, %nr1 : !fut
        scf.yield %nl0, %nl1s, %nr0, %nr1s, %sum : !fut, !fut, !fut, !fut, i32
      }
      // Epilogue on the last tile, after the wait the tutorial omits.
      croq.wait %res#0, %res#2 : !fut, !fut
      %ld = croq.future.data %res#0 : !fut -> !sm
      %rd = croq.future.data %res#2 : !fut -> !sm
      %total = scf.for %kk = %c0 to %c16 step %c1 iter_args(%s = %res#4) -> i32 {
        %x = memref.load %ld[%qx, %kk] : !sm
        %y = memref.load %rd[%kk, %qy] : !sm
        %p = arith.muli %x, %y : i32
        %s2 = arith.addi %s, %p : i32
        scf.yield %s2 : i32
      }
      // output.at(px # qx, py # qy)
      %row0 = arith.muli %px, %c16 : index
      %row = arith.addi %row0, %qx : index
      %col0 = arith.muli %py, %c16 : index
      %col = arith.addi %col0, %qy : index
      memref.store %total, %out[%row, %col] : memref<128x256xi32>
    }
  }
  return
}
