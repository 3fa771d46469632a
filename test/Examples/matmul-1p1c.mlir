// The README's worked example verifies, round-trips and lowers to PTX.
// RUN: croq-opt %S/../../examples/matmul_1p1c.mlir | croq-opt | FileCheck %s
// RUN: croq-translate --croq-to-ptx %S/../../examples/matmul_1p1c.mlir -o %t.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_90a %t.ptx -o %t.cubin %}
// PTX: wgmma.mma_async.sync.aligned.m64n64k16.f16.f16.f16

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
