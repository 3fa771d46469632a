// RUN: croq-opt %s --croq-assign-arrivals --split-input-file --verify-diagnostics

// An event triggered by a one-warpgroup role and by the whole block: no
// one arrival count completes its phases, so either count would hang.
func.func @mixed_counts(%n: index) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  croq.parallel (%b) by [%n] : block {
    // expected-error @below {{is triggered by 128 threads in one place and by 256 in another, so no one arrival count completes its phases}}
    // expected-note @below {{hint: trigger it from regions of the same threads}}
    %e = croq.event.alloc : !croq.event<shared>
    croq.parallel (%p) by [%c2] : warpgroup {
      %producer = arith.cmpi eq, %p, %c0 : index
      croq.inthreads async (%producer) {
        // expected-note @below {{triggered here by 128 threads}}
        croq.event.trigger %e : !croq.event<shared>
      }
      // expected-note @below {{triggered here by 256 threads}}
      croq.event.trigger %e : !croq.event<shared>
      croq.event.wait %e : !croq.event<shared>
    }
  }
  return
}
