// RUN: croq-opt %s --canonicalize | FileCheck %s

// An unscaled croq.mma.scale of a product no MMA wrote (a zero fill) is its
// sum; with a scale it is kept (0 times an infinite scale is NaN).
// CHECK-LABEL: func.func @scale_of_zero
// CHECK-SAME: (%[[S:.*]]: !croq.frag<acc, 64x64xf32, warpgroup>, %[[R:.*]]: memref<64xf32>, %[[F:.*]]: f32)
// CHECK-NEXT: arith.constant
// CHECK-NEXT: %[[Z:.*]] = croq.mma.fill
// CHECK-NEXT: %[[K:.*]] = croq.mma.scale %[[S]], %[[Z]] rows %[[R]]
// CHECK-NEXT: return %[[S]], %[[K]]
func.func @scale_of_zero(%s: !croq.frag<acc, 64x64xf32, warpgroup>, %rows: memref<64xf32>, %f: f32)
    -> (!croq.frag<acc, 64x64xf32, warpgroup>, !croq.frag<acc, 64x64xf32, warpgroup>) {
  %zero = arith.constant 0.0 : f32
  %z = croq.mma.fill %zero : f32 -> !croq.frag<acc, 64x64xf32, warpgroup>
  %0 = croq.mma.scale %s, %z : !croq.frag<acc, 64x64xf32, warpgroup>
  %1 = croq.mma.scale %s, %z rows %rows : memref<64xf32> times %f : f32 : !croq.frag<acc, 64x64xf32, warpgroup>
  return %0, %1 : !croq.frag<acc, 64x64xf32, warpgroup>, !croq.frag<acc, 64x64xf32, warpgroup>
}
