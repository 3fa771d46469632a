// RUN: croq-translate --croq-to-ptx %s | FileCheck %s --check-prefix=PTX
// RUN: %if ptxas %{ croq-translate --croq-to-ptx %s -o %t.ptx && %ptxas -arch=sm_90a %t.ptx -o %t.cubin %}
// RUN: %if ptxas %{ croq-translate --croq-chip=sm_80 --croq-features=+ptx70 --croq-to-ptx %s -o %t80.ptx && %ptxas -arch=sm_80 %t80.ptx -o %t80.cubin %}
// Each 16x16x16 step is two m16n8k16 MMAs.
// PTX-LABEL: .entry matmul_rr_kernel(
// PTX-COUNT-2: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// PTX-LABEL: .entry matmul_rc_kernel(
// PTX-COUNT-2: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32

// Warp-level MMA matmuls: one warp per 16 x 16 output tile, K in steps of
// 16, operands loaded straight from global memory. f16 operands, f32
// accumulation. @matmul_rr: A [M, K] x B [N, K]^T (row.row); @matmul_rc:
// A [M, K] x B [K, N] (row.col).
!ga = memref<16x16xf16, strided<[?, 1], offset: ?>>
!gc = memref<16x16xf32, strided<[?, 1], offset: ?>>

func.func @matmul_rr(%a: memref<?x?xf16>, %b: memref<?x?xf16>, %c: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  %m = memref.dim %a, %c0 : memref<?x?xf16>
  %k = memref.dim %a, %c1 : memref<?x?xf16>
  %n = memref.dim %b, %c0 : memref<?x?xf16>
  %gm = arith.divui %m, %c16 : index
  %gn = arith.divui %n, %c16 : index
  %kt = arith.divui %k, %c16 : index
  croq.parallel (%bm, %bn) by [%gm, %gn] : block {
    croq.parallel (%w) by [%c1] : warp {
      %acc0 = croq.mma.fill %zero : f32 -> !croq.frag<acc, 16x16xf32>
      %acc = scf.for %kk = %c0 to %kt step %c1 iter_args(%acc_i = %acc0) -> (!croq.frag<acc, 16x16xf32>) {
        %ta = croq.subspan %a[16, 16] at [%bm, %kk] : memref<?x?xf16> -> !ga
        %tb = croq.subspan %b[16, 16] at [%bn, %kk] : memref<?x?xf16> -> !ga
        %fa = croq.mma.load %ta : !ga -> !croq.frag<a, 16x16xf16>
        %fb = croq.mma.load %tb : !ga -> !croq.frag<b, 16x16xf16>
        %r = croq.mma row_row %acc_i, %fa, %fb : !croq.frag<acc, 16x16xf32>, !croq.frag<a, 16x16xf16>, !croq.frag<b, 16x16xf16> -> !croq.frag<acc, 16x16xf32>
        scf.yield %r : !croq.frag<acc, 16x16xf32>
      }
      %tc = croq.subspan %c[16, 16] at [%bm, %bn] : memref<?x?xf32> -> !gc
      croq.mma.store %acc, %tc : !croq.frag<acc, 16x16xf32>, !gc
    }
  }
  return
}

func.func @matmul_rc(%a: memref<?x?xf16>, %b: memref<?x?xf16>, %c: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  %m = memref.dim %a, %c0 : memref<?x?xf16>
  %k = memref.dim %a, %c1 : memref<?x?xf16>
  %n = memref.dim %b, %c1 : memref<?x?xf16>
  %gm = arith.divui %m, %c16 : index
  %gn = arith.divui %n, %c16 : index
  %kt = arith.divui %k, %c16 : index
  croq.parallel (%bm, %bn) by [%gm, %gn] : block {
    croq.parallel (%w) by [%c1] : warp {
      %acc0 = croq.mma.fill %zero : f32 -> !croq.frag<acc, 16x16xf32>
      %acc = scf.for %kk = %c0 to %kt step %c1 iter_args(%acc_i = %acc0) -> (!croq.frag<acc, 16x16xf32>) {
        %ta = croq.subspan %a[16, 16] at [%bm, %kk] : memref<?x?xf16> -> !ga
        %tb = croq.subspan %b[16, 16] at [%kk, %bn] : memref<?x?xf16> -> !ga
        %fa = croq.mma.load %ta : !ga -> !croq.frag<a, 16x16xf16>
        %fb = croq.mma.load %tb : !ga -> !croq.frag<b, 16x16xf16>
        %r = croq.mma row_col %acc_i, %fa, %fb : !croq.frag<acc, 16x16xf32>, !croq.frag<a, 16x16xf16>, !croq.frag<b, 16x16xf16> -> !croq.frag<acc, 16x16xf32>
        scf.yield %r : !croq.frag<acc, 16x16xf32>
      }
      %tc = croq.subspan %c[16, 16] at [%bm, %bn] : memref<?x?xf32> -> !gc
      croq.mma.store %acc, %tc : !croq.frag<acc, 16x16xf32>, !gc
    }
  }
  return
}
