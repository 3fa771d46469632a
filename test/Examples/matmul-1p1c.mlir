// The README's worked example verifies and round-trips.
// RUN: croq-opt %S/../../examples/matmul_1p1c.mlir | croq-opt | FileCheck %s

// CHECK-LABEL: func.func @matmul
// CHECK: croq.parallel ({{.*}}) by [{{.*}}] : block {
// CHECK: croq.event.alloc ready : <shared, 2>
// CHECK: croq.parallel ({{.*}}) by [{{.*}}] : warpgroup {
// CHECK: croq.inthreads async
// CHECK: croq.event.wait
// CHECK: croq.event.trigger
// CHECK: croq.inthreads async
// CHECK: croq.mma row_row
// CHECK: croq.mma.commit
