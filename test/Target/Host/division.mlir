// RUN: croq-translate --croq-to-host %s | FileCheck %s

// An integer division in host code that would kill the caller's process
// (SIGFPE) is refused by the entry point instead: by a run-time value that
// is 0, by a constant 0, and the signed INT64_MIN / -1. A division by a
// non-zero constant other than -1 needs no check.
// CHECK-LABEL: extern "C" int divide(
// CHECK: if (t == 0) return croq_rt_fail("divide", "%s", "an integer division by zero ({{.*}}division.mlir:{{[0-9]+}})");
// CHECK-NEXT: if ([[N:v[0-9]+]] == INT64_MIN && t == -1) return croq_rt_fail("divide", "%s", "an integer division that overflows (INT64_MIN / -1) ({{.*}}division.mlir:{{[0-9]+}})");
// CHECK-NEXT: croq_rt_ceildiv([[N]], t)
// CHECK-NOT: == 0) return
// CHECK: return 0;
func.func @divide(%x: memref<?xf32> {croq.name = "x"}, %t: index {croq.name = "t"}) -> index {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  %q = arith.ceildivsi %n, %t : index
  %r = arith.divui %q, %c4 : index
  return %r : index
}

// CHECK-LABEL: extern "C" int by_constants(
// CHECK: if ({{v[0-9]+}} == 0) return croq_rt_fail("by_constants", "%s", "an integer division by zero
// CHECK: if ([[X:v[0-9]+]] == INT64_MIN && {{v[0-9]+}} == -1) return croq_rt_fail("by_constants", "%s", "an integer division that overflows
// CHECK-NOT: return croq_rt_fail
// CHECK: return 0;
func.func @by_constants(%x: memref<?xf32> {croq.name = "x"}) -> (index, index) {
  %c0 = arith.constant 0 : index
  %cm1 = arith.constant -1 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  %a = arith.remsi %n, %c0 : index
  %b = arith.divsi %n, %cm1 : index
  return %a, %b : index, index
}
