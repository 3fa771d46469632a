// RUN: croq-translate --croq-to-host %s | FileCheck %s

// An integer division by a run-time value is refused by the entry point
// when that value is 0 (it would kill the caller's process); a division by
// a constant needs no check.
// CHECK-LABEL: extern "C" int divide(
// CHECK: if (t == 0) return croq_rt_fail("divide", "%s", "an integer division by zero ({{.*}}division.mlir:{{[0-9]+}}): a run-time value that divides is 0");
// CHECK-NEXT: croq_rt_ceildiv({{.*}}, t)
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
