// RUN: croq-opt %s --croq-report-divergence --croq-check-divergence --mlir-timing -o /dev/null 2>&1 | FileCheck %s

// The divergence analysis is one analysis-manager entry: the remark pass
// computes it and preserves it, and the check reuses it.
// CHECK: CroqReportDivergencePass
// CHECK-NEXT: (A) croq::UniformityInfo
// CHECK-NEXT: CroqCheckDivergencePass
// CHECK-NOT: (A) croq::UniformityInfo
func.func @kernel(%n: index, %out: memref<?xindex>) {
  %c64 = arith.constant 64 : index
  croq.parallel (%b) by [%n] : block {
    croq.parallel (%t) by [%c64] : thread {
      memref.store %t, %out[%t] : memref<?xindex>
    }
  }
  return
}
