// RUN: croq-opt %s --croq-warp-specialize --croq-plan-shared-layout --croq-pipeline-mma --croq-materialize-tma --croq-assign-arrivals --croq-assign-phases --croq-elect-issuers --convert-croq-to-gpu --croq-report-divergence --verify-diagnostics

// The single dispatch of warp-specialized roles switches on a value the
// analysis proves warpgroup-uniform (it comes from the warpgroup index), so
// setmaxnreg inside each case is legal. The stores in each role are
// elected to one thread, which is the only divergence.
func.func @role_dispatch(%n: index, %out: memref<2xindex>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  croq.parallel (%b) by [%n] : block {
    croq.parallel (%p) by [%c2] : warpgroup {
      %producer = arith.cmpi eq, %p, %c0 : index
      // expected-remark @below {{uniform at warpgroup}}
      croq.inthreads async (%producer) {
        // expected-remark @below {{divergent within warp}}
        // expected-note @below {{runs both sides one after the other: 1 ops then 0 ops, 1 in all}}
        memref.store %b, %out[%c0] : memref<2xindex>
      }
      %consumer = arith.cmpi eq, %p, %c1 : index
      croq.inthreads async (%consumer) {
        // expected-remark @below {{divergent within warp}}
        // expected-note @below {{runs both sides one after the other: 1 ops then 0 ops, 1 in all}}
        memref.store %b, %out[%c1] : memref<2xindex>
      }
    }
  }
  return
}
