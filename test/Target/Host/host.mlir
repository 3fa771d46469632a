// REQUIRES: ptxas
// RUN: croq-translate --croq-to-host %s | FileCheck %s

// The entry point: a device pointer and extents per tensor, shape checks for
// static extents, the cubin embedded, the launch with the memref calling
// convention, and a synchronising plain parallel.
// CHECK: #include "croq_runtime.h"
// CHECK: static const unsigned char croq_image_fill_kernel[] = {
// CHECK: static croq_module croq_module_fill_kernel = {"fill_kernel", croq_image_fill_kernel, sizeof(croq_image_fill_kernel), nullptr, {}};
// CHECK-LABEL: extern "C" int fill(void *arg0, int64_t arg0_size0, int64_t arg0_size1) {
// CHECK: if (arg0_size1 != 64) return croq_rt_fail("fill", "argument 0: dimension 1 is %lld, expected 64", (long long)arg0_size1);
// CHECK: void * p0 = arg0;
// CHECK: void * p1 = arg0;
// CHECK: int64_t p2 = 0;
// CHECK: int64_t p3 = arg0_size0;
// CHECK: int64_t p4 = arg0_size1;
// CHECK: int64_t p5 = 1 * arg0_size1;
// CHECK: int64_t p6 = 1;
// CHECK: croq_rt_launch(&croq_module_fill_kernel, "fill_kernel", "fill", {{.*}}, nullptr, params, 1, 0)
// CHECK: return 0;
func.func @fill(%x: memref<?x64xf32>) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %rows = memref.dim %x, %c0 : memref<?x64xf32>
  croq.parallel (%r) by [%rows] : block {
    croq.parallel (%t) by [%c64] : thread {
      %one = arith.constant 1.0 : f32
      memref.store %one, %x[%r, %t] : memref<?x64xf32>
    }
  }
  return
}
