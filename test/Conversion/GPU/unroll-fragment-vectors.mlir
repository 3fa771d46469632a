// RUN: croq-opt %s --pass-pipeline='builtin.module(gpu.module(croq-unroll-fragment-vectors))' | FileCheck %s

// A one-tile fragment built from one ldmatrix result folds to an n-D
// shape_cast; it becomes an insert into the leading dimension, which the NVVM
// conversion handles.
// CHECK-LABEL: func.func @one_tile
// CHECK-NOT: vector.shape_cast
// CHECK: %[[UNDEF:.*]] = ub.poison : vector<1x4x2xf16>
// CHECK: vector.insert %{{.*}}, %[[UNDEF]] [0] : vector<4x2xf16> into vector<1x4x2xf16>
// CHECK-NOT: vector.shape_cast
gpu.module @kernels {
  func.func @one_tile(%v: vector<4x2xf16>) -> vector<1x4x2xf16> {
    %r = vector.shape_cast %v : vector<4x2xf16> to vector<1x4x2xf16>
    return %r : vector<1x4x2xf16>
  }
}
