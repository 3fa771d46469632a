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

// -----

// The element a warpgroup triggers depends on its index in a way croq
// cannot separate from the loop counter (`p * s`): its count is the
// program's to give.
func.func @element_per_thread_unknown(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  croq.parallel (%b) by [%n] : block {
    // expected-error @below {{is triggered at an element that differs between the triggering threads, through a term croq cannot separate from the loop and block values it adds}}
    // expected-note @below {{hint: declare the event with the count of each element's arrivals per phase (event<N>)}}
    %empty = croq.event.alloc : !croq.event<shared, 4>
    croq.parallel (%p) by [%c2] : warpgroup {
      %all = arith.cmpi uge, %p, %c0 : index
      croq.inthreads async (%all) {
        scf.for %s = %c0 to %c2 step %c1 {
          %slot = arith.muli %p, %s : index
          // expected-note @below {{the trigger}}
          croq.event.trigger %empty[%slot] : !croq.event<shared, 4>
        }
      }
    }
  }
  return
}

// -----

// Warpgroups 0 and 1 trigger element 0, warpgroup 2 element 1
// (`p / 2`): 256 arrivals on one element and 128 on the other, which no
// one count completes.
func.func @element_counts_differ(%n: index) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  croq.parallel (%b) by [%n] : block {
    // expected-error @below {{and its elements get different numbers of arrivals (256 and 128)}}
    // expected-note @below {{hint: declare the event with the count of each element's arrivals per phase (event<N>)}}
    %e = croq.event.alloc : !croq.event<shared, 2>
    croq.parallel (%p) by [%c3] : warpgroup {
      %all = arith.cmpi uge, %p, %c0 : index
      croq.inthreads async (%all) {
        %slot = arith.divui %p, %c2 : index
        // expected-note @below {{the trigger}}
        croq.event.trigger %e[%slot] : !croq.event<shared, 2>
      }
    }
  }
  return
}

// -----

// Outside every role too: warpgroups 0 and 1 trigger element 0 and
// warpgroup 2 element 1.
func.func @element_counts_differ_outside_roles(%n: index) {
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  croq.parallel (%b) by [%n] : block {
    // expected-error @below {{and its elements get different numbers of arrivals (256 and 128)}}
    // expected-note @below {{hint: declare the event with the count of each element's arrivals per phase (event<N>)}}
    %e = croq.event.alloc : !croq.event<shared, 2>
    croq.parallel (%p) by [%c3] : warpgroup {
      %slot = arith.divui %p, %c2 : index
      // expected-note @below {{the trigger}}
      croq.event.trigger %e[%slot] : !croq.event<shared, 2>
    }
  }
  return
}
