// RUN: croq-opt %s --pass-pipeline="builtin.module(gpu.module(croq-unroll-mma-batches))" | FileCheck %s

!acc = !llvm.struct<(f32, f32, f32, f32)>

// The K steps of a tile (4 MMAs) become straight-line code; a loop of 32
// iterations and a loop without an MMA stay loops.
// CHECK-LABEL: llvm.func @steps
// CHECK-NOT: scf.for
// CHECK-COUNT-4: nvvm.wgmma.mma_async
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK-LABEL: llvm.func @long
// CHECK: scf.for
// CHECK-LABEL: llvm.func @no_mma
// CHECK: scf.for
gpu.module @k {
  llvm.func @steps(%da: i64, %db: i64, %acc: !acc) -> !acc {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%a = %acc) -> (!acc) {
      nvvm.wgmma.fence.aligned
      %n = nvvm.wgmma.mma_async %da, %db, %a, <m = 64, n = 8, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, <one>, <col>] : !acc -> !acc
      scf.yield %n : !acc
    }
    llvm.return %r : !acc
  }
  llvm.func @long(%da: i64, %db: i64, %acc: !acc) -> !acc {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %r = scf.for %i = %c0 to %c32 step %c1 iter_args(%a = %acc) -> (!acc) {
      nvvm.wgmma.fence.aligned
      %n = nvvm.wgmma.mma_async %da, %db, %a, <m = 64, n = 8, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, <one>, <col>] : !acc -> !acc
      scf.yield %n : !acc
    }
    llvm.return %r : !acc
  }
  llvm.func @no_mma(%p: !llvm.ptr, %x: f32) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    scf.for %i = %c0 to %c4 step %c1 {
      llvm.store %x, %p : f32, !llvm.ptr
    }
    llvm.return
  }
}
