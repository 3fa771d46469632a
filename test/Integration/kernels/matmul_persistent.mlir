// RUN: croq-translate --croq-to-ptx %s | FileCheck %s --check-prefix=PTX
// RUN: %if ptxas %{ croq-translate --croq-to-ptx %s -o %t.ptx && %ptxas -arch=sm_90a %t.ptx -o %t.cubin %}
// An f16 accumulator; the lanes' shared stores are fenced before the warp
// copies the tile out (the block is one warp, so its barrier is bar.sync 0).
// PTX: mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16
// PTX: bar.sync 0

// The seed's persistent schedule with warp-level MMA: a fixed grid of
// NUM_SMS = 132 blocks walks the 16 x 16 output tiles, tile_id =
// tile_iter # block_id, guarded by `if (tile_id < total_tiles)`. Each block
// is one warp: it stages 16 x 64 slices of lhs [M, K] and rhs [N, K] in
// shared memory and runs row.row MMAs over 16-wide K chunks (f16
// accumulator, as the seed's `mma.fill.f16`).
!sl = memref<16x64xf16, #gpu.address_space<workgroup>>
!so = memref<16x16xf16, #gpu.address_space<workgroup>>
!gl = memref<16x64xf16, strided<[?, 1], offset: ?>>
!sw = memref<16x16xf16, strided<[64, 1], offset: ?>, #gpu.address_space<workgroup>>
!acc = !croq.frag<acc, 16x16xf16>

func.func @matmul_persistent(%lhs: memref<?x?xf16>, %rhs: memref<?x?xf16>, %out: memref<?x?xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %c132 = arith.constant 132 : index
  %zero = arith.constant 0.0 : f32
  %m = memref.dim %lhs, %c0 : memref<?x?xf16>
  %k = memref.dim %lhs, %c1 : memref<?x?xf16>
  %n = memref.dim %rhs, %c0 : memref<?x?xf16>
  // int total_tiles = cdiv(M, 16) * cdiv(N, 16);
  %tm = arith.ceildivui %m, %c16 : index
  %tn = arith.ceildivui %n, %c16 : index
  %total = arith.muli %tm, %tn : index
  %iters = arith.ceildivui %total, %c132 : index
  %kt = arith.ceildivui %k, %c64 : index
  // parallel block_id by NUM_SMS : block
  croq.parallel (%block_id) by [%c132] : block {
    %lhs_s = memref.alloc() : !sl
    %rhs_s = memref.alloc() : !sl
    %out_s = memref.alloc() : !so
    croq.parallel (%w) by [%c1] : warp {
      scf.for %tile_iter = %c0 to %iters step %c1 {
        // tile_id = tile_iter # block_id
        %scaled = arith.muli %tile_iter, %c132 : index
        %tile_id = arith.addi %scaled, %block_id : index
        %live = arith.cmpi ult, %tile_id, %total : index
        scf.if %live {
          %block_m = arith.divui %tile_id, %tn : index
          %block_n = arith.remui %tile_id, %tn : index
          %mc0 = croq.mma.fill %zero : f32 -> !acc
          %mc = scf.for %iv_k = %c0 to %kt step %c1 iter_args(%acc_k = %mc0) -> (!acc) {
            %ga = croq.subspan %lhs[16, 64] at [%block_m, %iv_k] : memref<?x?xf16> -> !gl
            %gb = croq.subspan %rhs[16, 64] at [%block_n, %iv_k] : memref<?x?xf16> -> !gl
            croq.dma.copy %ga to %lhs_s : !gl to !sl
            croq.dma.copy %gb to %rhs_s : !gl to !sl
            %c4 = arith.constant 4 : index
            %next = scf.for %iv_warp = %c0 to %c4 step %c1 iter_args(%acc_w = %acc_k) -> (!acc) {
              %va = croq.chunkat %lhs_s[_, %iv_warp by 4] : !sl -> !sw
              %vb = croq.chunkat %rhs_s[_, %iv_warp by 4] : !sl -> !sw
              %ma = croq.mma.load %va : !sw -> !croq.frag<a, 16x16xf16>
              %mb = croq.mma.load %vb : !sw -> !croq.frag<b, 16x16xf16>
              %r = croq.mma row_row %acc_w, %ma, %mb : !acc, !croq.frag<a, 16x16xf16>, !croq.frag<b, 16x16xf16> -> !acc
              scf.yield %r : !acc
            }
            scf.yield %next : !acc
          }
          croq.mma.store %mc, %out_s : !acc, !so
          %go = croq.subspan %out[16, 16] at [%block_m, %block_n] : memref<?x?xf16> -> memref<16x16xf16, strided<[?, 1], offset: ?>>
          croq.dma.copy %out_s to %go : !so to memref<16x16xf16, strided<[?, 1], offset: ?>>
        }
      }
    }
  }
  return
}
