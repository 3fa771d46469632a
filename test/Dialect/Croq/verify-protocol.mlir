// RUN: croq-opt %s --croq-verify-protocol --split-input-file --verify-diagnostics

// The 1P1C ring without the consumer's bootstrap: the producer's first
// `wait empty` can never complete.
func.func @negative_missing_bootstrap(%k: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  croq.parallel (%b) by [%c1] : block {
    // expected-note @below {{the event is declared here}}
    %empty = croq.event.alloc : !croq.event<shared, 2>
    %full = croq.event.alloc : !croq.event<shared, 2>
    croq.parallel (%p) by [%c2] : warpgroup {
      %producer = arith.cmpi eq, %p, %c0 : index
      croq.inthreads async (%producer) {
        scf.for %i = %c0 to %k step %c1 {
          %s = arith.remui %i, %c2 : index
          // expected-error @below {{deadlock: no trigger can satisfy this wait; every trigger of its event comes after a wait that is itself blocked}}
          // expected-note @below {{hint: give the event its first generation}}
          croq.event.wait %empty[%s] : !croq.event<shared, 2>
          croq.event.trigger %full[%s] : !croq.event<shared, 2>
        }
      }
      %consumer = arith.cmpi eq, %p, %c1 : index
      croq.inthreads async (%consumer) {
        scf.for %i = %c0 to %k step %c1 {
          %s = arith.remui %i, %c2 : index
          croq.event.wait %full[%s] : !croq.event<shared, 2>
          croq.event.trigger %empty[%s] : !croq.event<shared, 2>
        }
      }
    }
  }
  return
}

// -----

// The same ring with the bootstrap, and with `ready`, is accepted.
func.func @bootstrap_and_ready(%k: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  croq.parallel (%b) by [%c1] : block {
    %empty = croq.event.alloc : !croq.event<shared, 2>
    %full = croq.event.alloc : !croq.event<shared, 2>
    %empty2 = croq.event.alloc ready : !croq.event<shared, 2>
    %full2 = croq.event.alloc : !croq.event<shared, 2>
    croq.parallel (%p) by [%c2] : warpgroup {
      %producer = arith.cmpi eq, %p, %c0 : index
      croq.inthreads async (%producer) {
        scf.for %i = %c0 to %k step %c1 {
          %s = arith.remui %i, %c2 : index
          croq.event.wait %empty[%s] : !croq.event<shared, 2>
          croq.event.trigger %full[%s] : !croq.event<shared, 2>
          croq.event.wait %empty2 at(%i) : !croq.event<shared, 2>
          croq.event.trigger %full2 at(%i) : !croq.event<shared, 2>
        }
      }
      %consumer = arith.cmpi eq, %p, %c1 : index
      croq.inthreads async (%consumer) {
        scf.for %s = %c0 to %c2 step %c1 {
          croq.event.trigger %empty[%s] : !croq.event<shared, 2>
        }
        scf.for %i = %c0 to %k step %c1 {
          %s = arith.remui %i, %c2 : index
          croq.event.wait %full[%s] : !croq.event<shared, 2>
          croq.event.trigger %empty[%s] : !croq.event<shared, 2>
          croq.event.wait %full2 at(%i) : !croq.event<shared, 2>
          croq.event.trigger %empty2 at(%i) : !croq.event<shared, 2>
        }
      }
    }
  }
  return
}

// -----

// One thread of warpgroup 0 and all 128 threads of warpgroup 1 trigger the
// same event: no arrival count fits both.
func.func @negative_arrival_counts(%k: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c128 = arith.constant 128 : index
  croq.parallel (%b) by [%c1] : block {
    %e = croq.event.alloc ready : !croq.event<shared>
    croq.parallel (%p, %t) by [%c2, %c128] : thread {
      %p0 = arith.cmpi eq, %p, %c0 : index
      %t0 = arith.cmpi eq, %t, %c0 : index
      %single = arith.andi %p0, %t0 : i1
      croq.inthreads async (%single) {
        // expected-note @below {{the other role triggers it here}}
        croq.event.trigger %e : !croq.event<shared>
      }
      %p1 = arith.cmpi eq, %p, %c1 : index
      croq.inthreads async (%p1) {
        // expected-error @below {{arrival counts do not match across roles: 128 threads trigger this event here and 1 in another role}}
        // expected-note @below {{hint: trigger the event from one role, or declare it event<N> with the total arrivals}}
        croq.event.trigger %e : !croq.event<shared>
      }
    }
  }
  return
}

// -----

// A producer that never waits for the consumer can run phases ahead.
func.func @negative_run_ahead(%k: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  croq.parallel (%b) by [%c1] : block {
    %full = croq.event.alloc : !croq.event<shared, 2>
    croq.parallel (%p) by [%c2] : warpgroup {
      %producer = arith.cmpi eq, %p, %c0 : index
      croq.inthreads async (%producer) {
        scf.for %i = %c0 to %k step %c1 {
          %s = arith.remui %i, %c2 : index
          // expected-error @below {{this trigger can run more than one phase ahead of its waiter}}
          // expected-note @below {{hint: wait in this loop on an event the waiter triggers once it has consumed the data (the full / empty pairing)}}
          croq.event.trigger %full[%s] : !croq.event<shared, 2>
        }
      }
      %consumer = arith.cmpi eq, %p, %c1 : index
      croq.inthreads async (%consumer) {
        scf.for %i = %c0 to %k step %c1 {
          %s = arith.remui %i, %c2 : index
          // expected-note @below {{the waiter is here}}
          croq.event.wait %full[%s] : !croq.event<shared, 2>
        }
      }
    }
  }
  return
}

// -----

// Each consumer releases its own part of a shared ring once
// (`trigger empty[ring + s]`, ring fixed outside the loop): no slot runs
// ahead of the producer's waits.
func.func @rings_released_once_each(%k: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  croq.parallel (%b) by [%c1] : block {
    %empty = croq.event.alloc : !croq.event<shared, 4>
    croq.parallel (%p) by [%c3] : warpgroup {
      %producer = arith.cmpi eq, %p, %c0 : index
      croq.inthreads async (%producer) {
        scf.for %i = %c0 to %k step %c1 {
          %s = arith.remui %i, %c2 : index
          croq.event.wait %empty[%s] : !croq.event<shared, 4>
        }
      }
      %consumer = arith.cmpi ugt, %p, %c0 : index
      croq.inthreads async (%consumer) {
        %q = arith.subi %p, %c1 : index
        %ring = arith.muli %q, %c2 : index
        scf.for %s = %c0 to %c2 step %c1 {
          %slot = arith.addi %ring, %s : index
          croq.event.trigger %empty[%slot] : !croq.event<shared, 4>
        }
        // The base computed in the loop from values fixed outside it.
        scf.for %s = %c0 to %c2 step %c1 {
          %base = arith.muli %q, %c2 : index
          %slot = arith.addi %s, %base : index
          croq.event.trigger %empty[%slot] : !croq.event<shared, 4>
        }
      }
    }
  }
  return
}

// -----

// `trigger e[s + (1 - s)]` names slot 1 in both iterations: an addend
// that changes with the loop is no base, and the slot runs ahead.
func.func @negative_run_ahead_varying_base(%k: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  croq.parallel (%b) by [%c1] : block {
    %empty = croq.event.alloc : !croq.event<shared, 4>
    croq.parallel (%p) by [%c2] : warpgroup {
      %producer = arith.cmpi eq, %p, %c0 : index
      croq.inthreads async (%producer) {
        scf.for %i = %c0 to %k step %c1 {
          %s = arith.remui %i, %c2 : index
          // expected-note @below {{the waiter is here}}
          croq.event.wait %empty[%s] : !croq.event<shared, 4>
        }
      }
      %consumer = arith.cmpi eq, %p, %c1 : index
      croq.inthreads async (%consumer) {
        scf.for %s = %c0 to %c2 step %c1 {
          %rest = arith.subi %c1, %s : index
          %slot = arith.addi %s, %rest : index
          // expected-error @below {{this trigger can run more than one phase ahead of its waiter}}
          // expected-note @below {{hint: wait in this loop on an event the waiter triggers once it has consumed the data (the full / empty pairing)}}
          croq.event.trigger %empty[%slot] : !croq.event<shared, 4>
        }
      }
    }
  }
  return
}

// -----

func.func @negative_unwaited_future(%g: memref<64xf32>) {
  %c1 = arith.constant 1 : index
  croq.parallel (%b) by [%c1] : block {
    %s = memref.alloc() : memref<64xf32, #gpu.address_space<workgroup>>
    // expected-error @below {{the future of this async operation is never waited}}
    // expected-note @below {{hint: add croq.wait on it before its data is read}}
    %f = croq.dma.copy async %g to %s : memref<64xf32> to memref<64xf32, #gpu.address_space<workgroup>> -> !croq.future<dma, async, memref<64xf32, #gpu.address_space<workgroup>>>
  }
  return
}

// -----

// D2's `e.at(order)` with a constant order below the element count names
// one element: triggering at(0) and waiting at(1) hangs (upstream's
// trigger_after_incremented_join.co, `trigger full.at(order++)`).
func.func @negative_order_elements() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  croq.parallel (%b) by [%c1] : block {
    %full = croq.event.alloc : !croq.event<shared, 2>
    // expected-note @below {{a trigger of another element}}
    croq.event.trigger %full at(%c0) : !croq.event<shared, 2>
    // expected-error @below {{deadlock: no trigger completes the element this wait needs (linear index 1); its event's triggers name other elements}}
    croq.event.wait %full at(%c1) : !croq.event<shared, 2>
  }
  return
}

// -----

// The same element, and an order past the first phase, are accepted.
func.func @order_elements(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  croq.parallel (%b) by [%c1] : block {
    %full = croq.event.alloc : !croq.event<shared, 2>
    croq.event.trigger %full at(%c1) : !croq.event<shared, 2>
    croq.event.wait %full at(%c1) : !croq.event<shared, 2>
    croq.event.trigger %full at(%c3) : !croq.event<shared, 2>
    croq.event.wait %full at(%c3) : !croq.event<shared, 2>
  }
  return
}

// -----

// Two warpgroups of one role take turns: the second waits on an event the
// first triggers. Each set of threads that runs the same nested inthreads
// regions is traced on its own, so the second's wait does not block the
// first's trigger.
func.func @turns_within_a_role(%k: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  croq.parallel (%b) by [%c1] : block {
    %turn = croq.event.alloc : !croq.event<shared>
    croq.parallel (%p) by [%c3] : warpgroup {
      %consumers = arith.cmpi sgt, %p, %c0 : index
      croq.inthreads async (%consumers) {
        %second = arith.cmpi eq, %p, %c2 : index
        croq.inthreads (%second) {
          croq.event.wait %turn : !croq.event<shared>
        }
        %first = arith.cmpi eq, %p, %c1 : index
        croq.inthreads (%first) {
          croq.event.trigger %turn : !croq.event<shared>
        }
      }
    }
  }
  return
}

// -----

// The same turns with the waiting warpgroup also the triggering one: it
// waits for itself.
func.func @negative_turn_waits_for_itself(%k: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  croq.parallel (%b) by [%c1] : block {
    // expected-note @below {{the event is declared here}}
    %turn = croq.event.alloc : !croq.event<shared>
    croq.parallel (%p) by [%c3] : warpgroup {
      %consumers = arith.cmpi sgt, %p, %c0 : index
      croq.inthreads async (%consumers) {
        %second = arith.cmpi eq, %p, %c2 : index
        croq.inthreads (%second) {
          // expected-error @below {{deadlock: no trigger can satisfy this wait}}
          // expected-note @below {{hint: give the event its first generation}}
          croq.event.wait %turn : !croq.event<shared>
        }
        croq.inthreads (%second) {
          croq.event.trigger %turn : !croq.event<shared>
        }
      }
    }
  }
  return
}

// -----

// A trigger that every warpgroup of a role runs needs the arrivals of all
// of them: here warpgroup 2 first waits for `f`, which the other role
// triggers only after `e` completes, so `e` never gets warpgroup 2's
// arrivals.
func.func @negative_role_trigger_needs_every_class(%k: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  croq.parallel (%b) by [%c1] : block {
    %e = croq.event.alloc : !croq.event<shared>
    // expected-note @below {{the event is declared here}}
    %f = croq.event.alloc : !croq.event<shared>
    croq.parallel (%p) by [%c3] : warpgroup {
      %consumers = arith.cmpi sge, %p, %c1 : index
      croq.inthreads async (%consumers) {
        %second = arith.cmpi eq, %p, %c2 : index
        croq.inthreads (%second) {
          // expected-error @below {{deadlock: no trigger can satisfy this wait}}
          // expected-note @below {{hint: give the event its first generation}}
          croq.event.wait %f : !croq.event<shared>
        }
        croq.event.trigger %e : !croq.event<shared>
      }
      %producer = arith.cmpi eq, %p, %c0 : index
      croq.inthreads async (%producer) {
        croq.event.wait %e : !croq.event<shared>
        croq.event.trigger %f : !croq.event<shared>
      }
    }
  }
  return
}
