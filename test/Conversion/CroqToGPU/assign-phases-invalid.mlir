// RUN: croq-opt %s --croq-assign-phases --split-input-file --verify-diagnostics

// A wait that counts its phases at run time needs bits that live with the
// event in its kernel.
func.func @event_argument(%n: index, %e: !croq.event<shared, 2>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  croq.parallel (%b) by [%n] : block {
    scf.for %k = %c0 to %n step %c1 {
      %half = arith.divui %k, %c2 : index
      %s = arith.remui %half, %c2 : index
      // expected-error @below {{counts its phases at run time}}
      croq.event.wait %e[%s] : !croq.event<shared, 2>
    }
  }
  return
}
