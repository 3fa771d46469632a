// RUN: croq-opt %s --croq-elect-issuers=use-elect-sync --convert-croq-to-gpu=chip=sm_80 --verify-diagnostics

// Prepared for Hopper (elect.sync), converted for Ampere: an error at the
// election, not an LLVM selection failure.
func.func @elected_for_another_chip(%n: index, %out: memref<?xi32>) {
  %c64 = arith.constant 64 : index
  croq.parallel (%b) by [%n] : block {
    %one = arith.constant 1 : i32
    // expected-error @below {{'nvvm.elect.sync' op cannot be lowered for sm_80: elect.sync (chosen by croq-elect-issuers with use-elect-sync) needs sm_90 or newer}}
    memref.store %one, %out[%b] : memref<?xi32>
    croq.parallel (%t) by [%c64] : thread {
    }
  }
  return
}
