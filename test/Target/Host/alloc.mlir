// REQUIRES: ptxas
// RUN: croq-translate --croq-to-host %s | FileCheck %s

// A global tensor the host function declares: allocated stream-ordered from
// croq's pool before the first kernel that uses it, passed to kernels as a
// tensor argument is, and freed by its owner on every return path.
// CHECK-LABEL: extern "C" int twice(void *arg0, int64_t arg0_size0) {
// CHECK: croq_rt_allocation [[WS:v[0-9]+]]_owner;
// CHECK-NEXT: if (int err = croq_rt_alloc(&[[WS]]_owner.ptr, 4LL * 2LL * [[N:v[0-9]+]], "twice", "a global tensor declared at line {{[0-9]+}}")) return err;
// CHECK-NEXT: void *const [[WS]] = [[WS]]_owner.ptr;
// CHECK: void * p5 = [[WS]];
// CHECK: int64_t p8 = 2LL;
// CHECK: int64_t p9 = [[N]];
// CHECK: croq_rt_launch(&croq_module_croq_kernels, "twice_kernel",
// CHECK: void * p0 = [[WS]];
// CHECK: croq_rt_launch(&croq_module_croq_kernels, "twice_kernel_1",
// CHECK: return 0;
func.func @twice(%x: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  %ws = memref.alloc(%n) : memref<2x?xf32>
  croq.parallel (%i) by [%n] : block {
    croq.parallel (%t) by [%c1] : thread {
      %v = memref.load %x[%i] : memref<?xf32>
      memref.store %v, %ws[%c1, %i] : memref<2x?xf32>
    }
  }
  croq.parallel (%i) by [%n] : block {
    croq.parallel (%t) by [%c1] : thread {
      %v = memref.load %ws[%c1, %i] : memref<2x?xf32>
      %w = arith.addf %v, %v : f32
      memref.store %w, %x[%i] : memref<?xf32>
    }
  }
  return
}
