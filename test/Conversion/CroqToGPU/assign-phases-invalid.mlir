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

// -----

// FA3's re-wait of the previous iteration's slot inside a loop nested in
// another (a persistent tile loop): the event must count at run time, which
// would wait for a generation the producer fills only after this wait.
func.func @rewait_counted(%n: index, %t: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  croq.parallel (%b) by [%n] : block {
    %vf = croq.event.alloc : !croq.event<shared, 2>
    croq.parallel (%p) by [%c2] : warpgroup {
      %producer = arith.cmpi eq, %p, %c0 : index
      croq.inthreads async (%producer) {
        scf.for %k = %c0 to %n step %c1 {
          %s = arith.remui %k, %c2 : index
          croq.event.trigger %vf[%s] : !croq.event<shared, 2>
        }
      }
      %consumer = arith.cmpi eq, %p, %c1 : index
      croq.inthreads async (%consumer) {
        scf.for %tile = %c0 to %t step %c1 {
          scf.for %k = %c0 to %n step %c1 {
            %s = arith.remui %k, %c2 : index
            %k1 = arith.addi %k, %c1 : index
            %prev = arith.remui %k1, %c2 : index
            %first = arith.cmpi eq, %k, %c0 : index
            %pick = arith.select %first, %s, %prev : index
            // expected-error @below {{waits again on the previous iteration's slot, which only the D1 rule (generation from the loop's iteration) can phase, but this event counts its waits at run time}}
            croq.event.wait %vf[%pick] : !croq.event<shared, 2>
          }
        }
      }
    }
  }
  return
}

// -----

// A re-wait of the previous slot whose producer triggers under an `if`:
// phased by the D1 rule, with a warning that it assumes a trigger in every
// iteration.
func.func @rewait_conditional_trigger(%n: index, %more: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  croq.parallel (%b) by [%n] : block {
    %vf = croq.event.alloc : !croq.event<shared, 2>
    croq.parallel (%p) by [%c2] : warpgroup {
      %producer = arith.cmpi eq, %p, %c0 : index
      croq.inthreads async (%producer) {
        scf.for %k = %c0 to %n step %c1 {
          %s = arith.remui %k, %c2 : index
          scf.if %more {
            croq.event.trigger %vf[%s] : !croq.event<shared, 2>
          }
        }
      }
      %consumer = arith.cmpi eq, %p, %c1 : index
      croq.inthreads async (%consumer) {
        scf.for %k = %c0 to %n step %c1 {
          %s = arith.remui %k, %c2 : index
          %k1 = arith.addi %k, %c1 : index
          %prev = arith.remui %k1, %c2 : index
          %first = arith.cmpi eq, %k, %c0 : index
          %pick = arith.select %first, %s, %prev : index
          // expected-warning @below {{phases this event's waits from the loop's iteration (a re-wait of the previous iteration's slot needs it), which assumes each of its triggers runs once in every iteration}}
          croq.event.wait %vf[%pick] : !croq.event<shared, 2>
        }
      }
    }
  }
  return
}
