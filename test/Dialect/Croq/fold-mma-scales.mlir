// RUN: croq-opt %s --croq-fold-mma-scales --split-input-file | FileCheck %s

!acc = !croq.frag<acc, 64x128xf32, warpgroup>
!a = !croq.frag<a, 64x32xf8E4M3FN, warpgroup>
!b = !croq.frag<b, 128x32xf8E4M3FN, warpgroup>

// The products of the loop sum from a zero of their own; the scale follows
// the loop, on the sum the loop started from.
// CHECK-LABEL: func.func @folds
// CHECK-SAME: (%[[S0:[^:]*]]: !croq.frag<acc, 64x128xf32, warpgroup>, %{{.*}}, %{{.*}}, %[[R:[^:]*]]: memref<64x1xf32>, %[[F:[^:]*]]: f32, %[[OUT:[^:]*]]: memref<64x1xf32>)
// CHECK: %[[Z:.*]] = croq.mma.fill
// CHECK: %[[Q:.*]] = scf.for {{.*}} iter_args(%[[B:.*]] = %[[Z]])
// The old zero fill is left for canonicalization to remove.
// CHECK-NEXT: arith.constant
// CHECK-NEXT: croq.mma.fill
// CHECK-NEXT: %[[P:.*]] = croq.mma {{ *}}row_row %[[B]]
// CHECK-NEXT: memref.store
// CHECK-NEXT: scf.yield %[[P]]
// CHECK: %[[T:.*]] = croq.mma.scale %[[S0]], %[[Q]] rows %[[R]] : memref<64x1xf32> times %[[F]]
// CHECK: return %[[T]]
func.func @folds(%s0: !acc, %x: !a, %y: !b, %rows: memref<64x1xf32>, %f: f32,
                 %out: memref<64x1xf32>) -> !acc {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %s = scf.for %i = %c0 to %c4 step %c1 iter_args(%a = %s0) -> (!acc) {
    %zero = arith.constant 0.0 : f32
    %z = croq.mma.fill %zero : f32 -> !acc
    %p = croq.mma row_row %z, %x, %y : !acc, !a, !b -> !acc
    // A write to other memory does not stop it.
    memref.store %f, %out[%c0, %c0] : memref<64x1xf32>
    %t = croq.mma.scale %a, %p rows %rows : memref<64x1xf32> times %f : f32 : !acc
    scf.yield %t : !acc
  }
  return %s : !acc
}

// -----

!acc = !croq.frag<acc, 64x128xf32, warpgroup>
!a = !croq.frag<a, 64x32xf8E4M3FN, warpgroup>
!b = !croq.frag<b, 128x32xf8E4M3FN, warpgroup>

// Scales that change in the loop, a loop that writes the scales, a sum
// read in the loop, and a loop that may not run keep the scale where it is.
// CHECK-LABEL: func.func @keeps
// CHECK-COUNT-4: croq.mma.scale %arg{{[0-9]+}}, %{{.*}} rows
func.func @keeps(%s0: !acc, %x: !a, %y: !b, %rows: memref<64x4xf32>, %f: f32,
                 %n: index) -> (!acc, !acc, !acc, !acc) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %s1 = scf.for %i = %c0 to %c4 step %c1 iter_args(%a = %s0) -> (!acc) {
    %z = croq.mma.fill %zero : f32 -> !acc
    %p = croq.mma row_row %z, %x, %y : !acc, !a, !b -> !acc
    %r = croq.subspan %rows[64, 1] at [%c0, %i] : memref<64x4xf32> -> memref<64x1xf32, strided<[4, 1], offset: ?>>
    %t = croq.mma.scale %a, %p rows %r : memref<64x1xf32, strided<[4, 1], offset: ?>> times %f : f32 : !acc
    scf.yield %t : !acc
  }
  %r0 = croq.subspan %rows[64, 1] at [%c0, %c0] : memref<64x4xf32> -> memref<64x1xf32, strided<[4, 1], offset: ?>>
  %s2 = scf.for %i = %c0 to %c4 step %c1 iter_args(%a = %s0) -> (!acc) {
    %z = croq.mma.fill %zero : f32 -> !acc
    %p = croq.mma row_row %z, %x, %y : !acc, !a, !b -> !acc
    memref.store %f, %rows[%c0, %i] : memref<64x4xf32>
    %t = croq.mma.scale %a, %p rows %r0 : memref<64x1xf32, strided<[4, 1], offset: ?>> times %f : f32 : !acc
    scf.yield %t : !acc
  }
  %s3 = scf.for %i = %c0 to %c4 step %c1 iter_args(%a = %s0) -> (!acc) {
    %z = croq.mma.fill %zero : f32 -> !acc
    %p = croq.mma row_row %z, %x, %y : !acc, !a, !b -> !acc
    %e = croq.mma.element %a[0] : !acc -> f32
    %t = croq.mma.scale %a, %p rows %r0 : memref<64x1xf32, strided<[4, 1], offset: ?>> times %e : f32 : !acc
    scf.yield %t : !acc
  }
  %s4 = scf.for %i = %c0 to %n step %c1 iter_args(%a = %s0) -> (!acc) {
    %z = croq.mma.fill %zero : f32 -> !acc
    %p = croq.mma row_row %z, %x, %y : !acc, !a, !b -> !acc
    %t = croq.mma.scale %a, %p rows %r0 : memref<64x1xf32, strided<[4, 1], offset: ?>> times %f : f32 : !acc
    scf.yield %t : !acc
  }
  return %s1, %s2, %s3, %s4 : !acc, !acc, !acc, !acc
}

// -----

!acc = !croq.frag<acc, 64x128xf32, warpgroup>
!a = !croq.frag<a, 64x32xf8E4M3FN, warpgroup>
!b = !croq.frag<b, 128x32xf8E4M3FN, warpgroup>

// One zero fill (after CSE) both starts the sum and is each product's
// accumulator: the scale after the loop still starts from it.
// CHECK-LABEL: func.func @shared_fill
// CHECK: %[[Z:.*]] = croq.mma.fill
// CHECK: %[[Q:.*]] = scf.for
// CHECK: croq.mma.scale %[[Z]], %[[Q]] rows
func.func @shared_fill(%x: !a, %y: !b, %rows: memref<64x1xf32>, %f: f32) -> !acc {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %z = croq.mma.fill %zero : f32 -> !acc
  %s = scf.for %i = %c0 to %c4 step %c1 iter_args(%a = %z) -> (!acc) {
    %p = croq.mma row_row %z, %x, %y : !acc, !a, !b -> !acc
    %t = croq.mma.scale %a, %p rows %rows : memref<64x1xf32> times %f : f32 : !acc
    scf.yield %t : !acc
  }
  return %s : !acc
}
