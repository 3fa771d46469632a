// The seed's 1P1C matmul (tutorial chapter 5, with chapter 6's events) in
// croq IR: warpgroup 0 loads tiles into a two-slot ring, warpgroup 1 runs the
// MMAs; `full` / `empty` events hand the slots back and forth, and the
// consumer bootstraps `empty` (here with `ready`, Croqtile's `= ready`).
//
//   croq-opt examples/matmul_1p1c.mlir

#smem = #gpu.address_space<workgroup>

func.func @matmul(%lhs: memref<?x?xf16>, %rhs: memref<?x?xf16>,
                  %out: memref<?x?xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %zero = arith.constant 0.0 : f32
  %m = memref.dim %lhs, %c0 : memref<?x?xf16>
  %n = memref.dim %rhs, %c0 : memref<?x?xf16>
  %k = memref.dim %lhs, %c1 : memref<?x?xf16>
  %gm = arith.ceildivui %m, %c64 : index
  %gn = arith.ceildivui %n, %c64 : index
  %kt = arith.ceildivui %k, %c128 : index

  // parallel {block_m, block_n} by [cdiv(M, 64), cdiv(N, 64)] : block
  croq.parallel (%bm, %bn) by [%gm, %gn] : block {
    %full = croq.event.alloc : !croq.event<shared, 2>
    %empty = croq.event.alloc ready : !croq.event<shared, 2>
    %lhs_s = memref.alloc() : memref<2x64x128xf16, #smem>
    %rhs_s = memref.alloc() : memref<2x64x128xf16, #smem>
    %out_s = memref.alloc() : memref<64x64xf16, #smem>

    // parallel p1 by 2 : group-4 (an implicit `thread by 128` inside)
    croq.parallel (%p1) by [%c2] : warpgroup {
      %producer = arith.cmpi eq, %p1, %c0 : index
      croq.inthreads async (%producer) {
        scf.for %iv = %c0 to %kt step %c1 {
          %stage = arith.remui %iv, %c2 : index
          croq.event.wait %empty[%stage] : !croq.event<shared, 2>
          %a = croq.subspan %lhs[64, 128] at [%bm, %iv] : memref<?x?xf16> -> memref<64x128xf16, strided<[?, 1], offset: ?>>
          %b = croq.chunkat %rhs[%bn by %gn, %iv by %kt] : memref<?x?xf16> -> memref<?x?xf16, strided<[?, 1], offset: ?>>
          %a_s = memref.subview %lhs_s[%stage, 0, 0] [1, 64, 128] [1, 1, 1] : memref<2x64x128xf16, #smem> to memref<64x128xf16, strided<[128, 1], offset: ?>, #smem>
          %b_s = memref.subview %rhs_s[%stage, 0, 0] [1, 64, 128] [1, 1, 1] : memref<2x64x128xf16, #smem> to memref<64x128xf16, strided<[128, 1], offset: ?>, #smem>
          croq.dma.copy %a to %a_s : memref<64x128xf16, strided<[?, 1], offset: ?>> to memref<64x128xf16, strided<[128, 1], offset: ?>, #smem>
          croq.dma.copy %b to %b_s : memref<?x?xf16, strided<[?, 1], offset: ?>> to memref<64x128xf16, strided<[128, 1], offset: ?>, #smem>
          croq.event.trigger %full[%stage] : !croq.event<shared, 2>
        }
      }
      %consumer = arith.cmpi eq, %p1, %c1 : index
      croq.inthreads async (%consumer) {
        %mc0 = croq.mma.fill %zero : f32 -> !croq.frag<acc, 64x64xf16, warpgroup>
        %mc = scf.for %iv = %c0 to %kt step %c1 iter_args(%acc = %mc0) -> (!croq.frag<acc, 64x64xf16, warpgroup>) {
          %stage = arith.remui %iv, %c2 : index
          croq.event.wait %full[%stage] : !croq.event<shared, 2>
          %a_s = memref.subview %lhs_s[%stage, 0, 0] [1, 64, 128] [1, 1, 1] : memref<2x64x128xf16, #smem> to memref<64x128xf16, strided<[128, 1], offset: ?>, #smem>
          %b_s = memref.subview %rhs_s[%stage, 0, 0] [1, 64, 128] [1, 1, 1] : memref<2x64x128xf16, #smem> to memref<64x128xf16, strided<[128, 1], offset: ?>, #smem>
          %next = scf.for %w = %c0 to %c8 step %c1 iter_args(%acc_w = %acc) -> (!croq.frag<acc, 64x64xf16, warpgroup>) {
            %a_w = croq.chunkat %a_s[_, %w by 8] : memref<64x128xf16, strided<[128, 1], offset: ?>, #smem> -> memref<64x16xf16, strided<[128, 1], offset: ?>, #smem>
            %b_w = croq.chunkat %b_s[_, %w by 8] : memref<64x128xf16, strided<[128, 1], offset: ?>, #smem> -> memref<64x16xf16, strided<[128, 1], offset: ?>, #smem>
            %ma = croq.mma.load %a_w : memref<64x16xf16, strided<[128, 1], offset: ?>, #smem> -> !croq.frag<a, 64x16xf16, warpgroup>
            %mb = croq.mma.load %b_w : memref<64x16xf16, strided<[128, 1], offset: ?>, #smem> -> !croq.frag<b, 64x16xf16, warpgroup>
            %r = croq.mma row_row %acc_w, %ma, %mb : !croq.frag<acc, 64x64xf16, warpgroup>, !croq.frag<a, 64x16xf16, warpgroup>, !croq.frag<b, 64x16xf16, warpgroup> -> !croq.frag<acc, 64x64xf16, warpgroup>
            scf.yield %r : !croq.frag<acc, 64x64xf16, warpgroup>
          }
          croq.mma.commit
          croq.event.trigger %empty[%stage] : !croq.event<shared, 2>
          scf.yield %next : !croq.frag<acc, 64x64xf16, warpgroup>
        }
        croq.mma.store %mc, %out_s : !croq.frag<acc, 64x64xf16, warpgroup>, memref<64x64xf16, #smem>
        %o = croq.subspan %out[64, 64] at [%bm, %bn] : memref<?x?xf16> -> memref<64x64xf16, strided<[?, 1], offset: ?>>
        croq.dma.copy %out_s to %o : memref<64x64xf16, #smem> to memref<64x64xf16, strided<[?, 1], offset: ?>>
      }
    }
  }
  return
}
