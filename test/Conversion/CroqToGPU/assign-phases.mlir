// RUN: croq-opt %s --croq-assign-phases --split-input-file | FileCheck %s
// RUN: croq-opt %s --croq-assign-phases --split-input-file | croq-opt --croq-assign-phases --split-input-file | FileCheck %s --check-prefix=AGAIN

// croq-assign-phases writes the parity each wait is owed as IR before it.
// A second run leaves waits that already have one alone.
// AGAIN-COUNT-20: parity
// AGAIN-NOT: parity {{.*}} parity

// The only wait of a step-1 loop, on slot iv % N: generation
// (iv - lb) / N. A trigger needs no parity.
// CHECK-LABEL: func.func @loop_generation
// CHECK: croq.event.trigger %{{.*}}[%{{.*}}]
// CHECK: scf.for %[[IV:.*]] = %[[LB:.*]] to %{{.*}} step %{{.*}} {
// CHECK-NEXT: %[[S:.*]] = arith.remui %[[IV]], %{{.*}} : index
// CHECK-NEXT: %[[K:.*]] = arith.subi %[[IV]], %[[LB]] : index
// CHECK-NEXT: %[[N:.*]] = arith.constant 2 : index
// CHECK-NEXT: %[[GEN:.*]] = arith.divui %[[K]], %[[N]] : index
// CHECK-NEXT: %[[TWO:.*]] = arith.constant 2 : index
// CHECK-NEXT: %[[R:.*]] = arith.remui %[[GEN]], %[[TWO]] : index
// CHECK-NEXT: %[[P:.*]] = arith.index_cast %[[R]] : index to i1
// CHECK-NEXT: croq.event.wait %{{.*}}[%[[S]]] parity %[[P]]
func.func @loop_generation(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  croq.parallel (%b) by [%n] : block {
    %full = croq.event.alloc : !croq.event<shared, 2>
    croq.parallel (%p) by [%c2] : warpgroup {
      %producer = arith.cmpi eq, %p, %c0 : index
      croq.inthreads async (%producer) {
        scf.for %k = %c0 to %c64 step %c1 {
          %s = arith.remui %k, %c2 : index
          croq.event.trigger %full[%s] : !croq.event<shared, 2>
        }
      }
      %consumer = arith.cmpi eq, %p, %c1 : index
      croq.inthreads async (%consumer) {
        scf.for %k = %c0 to %c64 step %c1 {
          %s = arith.remui %k, %c2 : index
          croq.event.wait %full[%s] : !croq.event<shared, 2>
        }
      }
    }
  }
  return
}

// -----

// `at(%o)` names generation o / N; `ready` starts one generation ahead.
// A wait outside any loop is owed generation 0 (parity 1 when ready).
// CHECK-LABEL: func.func @order_and_ready
// CHECK-SAME: (%{{.*}}: index, %[[O:.*]]: index)
// CHECK: %[[N:c2_.*]] = arith.constant 2 : index
// CHECK-NEXT: %[[GEN:.*]] = arith.divui %[[O]], %[[N]] : index
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[AHEAD:.*]] = arith.addi %[[GEN]], %[[ONE]] : index
// CHECK-NEXT: %[[TWO:.*]] = arith.constant 2 : index
// CHECK-NEXT: %[[R:.*]] = arith.remui %[[AHEAD]], %[[TWO]] : index
// CHECK-NEXT: %[[P:.*]] = arith.index_cast %[[R]] : index to i1
// CHECK-NEXT: croq.event.wait %{{.*}} at(%[[O]]) parity %[[P]]
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT: arith.constant 1 : index
// CHECK-NEXT: %[[NEXT:.*]] = arith.addi %[[ZERO]], %{{.*}} : index
// CHECK-NEXT: arith.constant 2 : index
// CHECK-NEXT: %[[R2:.*]] = arith.remui %[[NEXT]], %{{.*}} : index
// CHECK-NEXT: %[[P2:.*]] = arith.index_cast %[[R2]] : index to i1
// CHECK-NEXT: croq.event.wait %{{.*}}[%{{.*}}] parity %[[P2]]
func.func @order_and_ready(%n: index, %o: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  croq.parallel (%b) by [%n] : block {
    %empty = croq.event.alloc ready : !croq.event<shared, 2>
    croq.parallel (%p) by [%c2] : warpgroup {
      %producer = arith.cmpi eq, %p, %c0 : index
      croq.inthreads async (%producer) {
        croq.event.wait %empty at(%o) : !croq.event<shared, 2>
        croq.event.wait %empty[%c1] : !croq.event<shared, 2>
      }
      %consumer = arith.cmpi eq, %p, %c1 : index
      croq.inthreads async (%consumer) {
        croq.event.trigger %empty at(%o) : !croq.event<shared, 2>
      }
    }
  }
  return
}

// -----

// The slot is not `iv % 2` of the loop, so the loop cannot name the
// generation: each thread keeps a bit per slot, packed into one i64 (bit s
// for slot s) allocated at the top of the kernel body, where LLVM keeps it
// in a register, and set to `ready` where the event is declared; it reads
// the slot's bit as the parity and flips it after the wait.
// CHECK-LABEL: func.func @counted
// CHECK: croq.parallel
// CHECK-NEXT: %[[BITS:.*]] = memref.alloca() : memref<1xi64>
// CHECK-NEXT: %[[E:.*]] = croq.event.alloc ready
// CHECK-NEXT: %[[READY:.*]] = arith.constant 3 : i64
// CHECK-NEXT: %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT: memref.store %[[READY]], %[[BITS]][%[[C0]]] : memref<1xi64>
// CHECK: scf.for
// CHECK: %[[S:.*]] = arith.remui %{{.*}}, %{{.*}} : index
// CHECK: %[[SLOT:.*]] = arith.addi %{{.*}}, %[[S]] : index
// CHECK: %[[WORD:.*]] = memref.load %[[BITS]][%{{.*}}] : memref<1xi64>
// CHECK-NEXT: %[[SHIFT:.*]] = arith.index_castui %[[SLOT]] : index to i64
// CHECK-NEXT: %[[SHIFTED:.*]] = arith.shrui %[[WORD]], %[[SHIFT]] : i64
// CHECK-NEXT: %[[P:.*]] = arith.trunci %[[SHIFTED]] : i64 to i1
// CHECK-NEXT: croq.event.wait %[[E]][%[[S]]] parity %[[P]]
// CHECK: %[[OLD:.*]] = memref.load %[[BITS]]
// CHECK: %[[MASK:.*]] = arith.shli %{{.*}}, %{{.*}} : i64
// CHECK-NEXT: %[[NEW:.*]] = arith.xori %[[OLD]], %[[MASK]] : i64
// CHECK-NEXT: memref.store %[[NEW]], %[[BITS]]
func.func @counted(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  croq.parallel (%b) by [%n] : block {
    %e = croq.event.alloc ready : !croq.event<shared, 2>
    croq.parallel (%p) by [%c2] : warpgroup {
      %first = arith.cmpi eq, %p, %c0 : index
      croq.inthreads async (%first) {
        scf.for %k = %c0 to %c8 step %c1 {
          %half = arith.divui %k, %c2 : index
          %s = arith.remui %half, %c2 : index
          croq.event.wait %e[%s] : !croq.event<shared, 2>
        }
      }
      %second = arith.cmpi eq, %p, %c1 : index
      croq.inthreads async (%second) {
        scf.for %k = %c0 to %c8 step %c1 {
          %s = arith.remui %k, %c2 : index
          croq.event.trigger %e[%s] : !croq.event<shared, 2>
        }
      }
    }
  }
  return
}

// -----

// A parity the program (or an earlier pass) gave is kept.
// CHECK-LABEL: func.func @given
// CHECK: croq.event.wait %{{.*}} parity %arg1
// CHECK-NOT: arith.index_cast
func.func @given(%n: index, %p: i1) {
  croq.parallel (%b) by [%n] : block {
    %e = croq.event.alloc : !croq.event<shared>
    croq.event.wait %e parity %p : !croq.event<shared>
  }
  return
}

// -----

// FA3's loop: the wait of iteration k picks the previous iteration's slot,
// (k + 1) % 2, except at k = 0 (a select); its generation is the select of
// k / 2 and max((k - 1) / 2, 0). A wait under an `if` in the loop (the
// epilogue) follows the same rule: generation k / 2 for slot k % 2.
// CHECK-LABEL: func.func @previous_slot
// CHECK: scf.for %[[IV:.*]] = %[[LB:.*]] to
// CHECK: %[[SEL:.*]] = arith.select %[[FIRST:.*]], %{{.*}}, %{{.*}} : index
// CHECK-NEXT: %[[K:.*]] = arith.subi %[[IV]], %[[LB]] : index
// CHECK-NEXT: %[[N:.*]] = arith.constant 2 : index
// CHECK-NEXT: %[[NOW:.*]] = arith.divui %[[K]], %[[N]] : index
// CHECK-NEXT: %[[M1:.*]] = arith.constant -1 : index
// CHECK-NEXT: %[[KM1:.*]] = arith.addi %[[K]], %[[M1]] : index
// CHECK-NEXT: arith.constant 2 : index
// CHECK-NEXT: %[[PREV:.*]] = arith.divsi %[[KM1]], %{{.*}} : index
// CHECK-NEXT: %[[Z:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[PREV0:.*]] = arith.maxsi %[[PREV]], %[[Z]] : index
// CHECK-NEXT: %[[GEN:.*]] = arith.select %[[FIRST]], %[[NOW]], %[[PREV0]] : index
// CHECK: croq.event.wait %{{.*}}[%[[SEL]]] parity
// CHECK: scf.if
// CHECK: %[[K2:.*]] = arith.subi %[[IV]], %[[LB]] : index
// CHECK-NEXT: arith.constant 2
// CHECK-NEXT: %[[G2:.*]] = arith.divui %[[K2]]
// CHECK: croq.event.wait %{{.*}} parity
// CHECK-NOT: memref.alloca
func.func @previous_slot(%n: index, %last: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  croq.parallel (%b) by [%n] : block {
    %vf = croq.event.alloc : !croq.event<shared, 2>
    croq.parallel (%p) by [%c2] : warpgroup {
      %producer = arith.cmpi eq, %p, %c0 : index
      croq.inthreads async (%producer) {
        scf.for %k = %c0 to %n step %c1 {
          %s = arith.remsi %k, %c2 : index
          croq.event.trigger %vf[%s] : !croq.event<shared, 2>
        }
      }
      %consumer = arith.cmpi eq, %p, %c1 : index
      croq.inthreads async (%consumer) {
        scf.for %k = %c0 to %n step %c1 {
          %s = arith.remsi %k, %c2 : index
          %k1 = arith.addi %k, %c1 : index
          %prev = arith.remsi %k1, %c2 : index
          %first = arith.cmpi eq, %k, %c0 : index
          %pick = arith.select %first, %s, %prev : index
          croq.event.wait %vf[%pick] : !croq.event<shared, 2>
          %end = arith.cmpi eq, %k, %last : index
          scf.if %end {
            croq.event.wait %vf[%s] : !croq.event<shared, 2>
          }
        }
      }
    }
  }
  return
}

// -----

// One wait of the event counts at run time (its slot is not a function of
// the iteration), so the event's other wait, which the D1 rule would
// cover, counts too: both load and flip the phase bits.
// CHECK-LABEL: func.func @one_rule_per_event
// CHECK: %[[BITS:.*]] = memref.alloca() : memref<1xi64>
// CHECK: %[[E:.*]] = croq.event.alloc
// CHECK: memref.load %[[BITS]]
// CHECK: croq.event.wait %[[E]]
// CHECK: memref.load %[[BITS]]
// CHECK: croq.event.wait %[[E]]
func.func @one_rule_per_event(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  croq.parallel (%b) by [%n] : block {
    %e = croq.event.alloc : !croq.event<shared, 2>
    croq.parallel (%p) by [%c2] : warpgroup {
      %first = arith.cmpi eq, %p, %c0 : index
      croq.inthreads async (%first) {
        scf.for %k = %c0 to %n step %c1 {
          %s = arith.remui %k, %c2 : index
          croq.event.wait %e[%s] : !croq.event<shared, 2>
          %half = arith.divui %k, %c2 : index
          %t = arith.remui %half, %c2 : index
          croq.event.wait %e[%t] : !croq.event<shared, 2>
        }
      }
      %second = arith.cmpi eq, %p, %c1 : index
      croq.inthreads async (%second) {
        scf.for %k = %c0 to %n step %c1 {
          %s = arith.remui %k, %c2 : index
          croq.event.trigger %e[%s] : !croq.event<shared, 2>
        }
      }
    }
  }
  return
}

// -----

// A wait under an `if` whose triggers are conditional too (both sides skip
// the first %start iterations): the D1 rule would be a generation ahead of
// the slot's fills, so the event counts at run time.
// CHECK-LABEL: func.func @skip_prefix
// CHECK: memref.alloca() : memref<1xi64>
// CHECK: croq.event.alloc
func.func @skip_prefix(%n: index, %start: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  croq.parallel (%b) by [%n] : block {
    %full = croq.event.alloc : !croq.event<shared, 2>
    croq.parallel (%p) by [%c2] : warpgroup {
      %producer = arith.cmpi eq, %p, %c0 : index
      croq.inthreads async (%producer) {
        scf.for %k = %c0 to %n step %c1 {
          %live = arith.cmpi uge, %k, %start : index
          scf.if %live {
            %s = arith.remui %k, %c2 : index
            croq.event.trigger %full[%s] : !croq.event<shared, 2>
          }
        }
      }
      %consumer = arith.cmpi eq, %p, %c1 : index
      croq.inthreads async (%consumer) {
        scf.for %k = %c0 to %n step %c1 {
          %live = arith.cmpi uge, %k, %start : index
          scf.if %live {
            %s = arith.remui %k, %c2 : index
            croq.event.wait %full[%s] : !croq.event<shared, 2>
          }
        }
      }
    }
  }
  return
}

// -----

// An event waited before its loop and in it: the loop's generations would
// not count the first wait, so the event counts at run time.
// CHECK-LABEL: func.func @prologue_wait
// CHECK: memref.alloca() : memref<1xi64>
// CHECK: croq.event.alloc
func.func @prologue_wait(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  croq.parallel (%b) by [%n] : block {
    %full = croq.event.alloc : !croq.event<shared, 2>
    croq.parallel (%p) by [%c2] : warpgroup {
      %producer = arith.cmpi eq, %p, %c0 : index
      croq.inthreads async (%producer) {
        scf.for %k = %c0 to %n step %c1 {
          %s = arith.remui %k, %c2 : index
          croq.event.trigger %full[%s] : !croq.event<shared, 2>
        }
      }
      %consumer = arith.cmpi eq, %p, %c1 : index
      croq.inthreads async (%consumer) {
        croq.event.wait %full[%c0] : !croq.event<shared, 2>
        scf.for %k = %c1 to %n step %c1 {
          %s = arith.remui %k, %c2 : index
          croq.event.wait %full[%s] : !croq.event<shared, 2>
        }
      }
    }
  }
  return
}

// -----

// Waits of one event in two roles run on disjoint threads: each role's
// loop keeps the D1 rule (no phase bits).
// CHECK-LABEL: func.func @two_roles
// CHECK-NOT: memref.alloca
// CHECK: croq.event.wait %{{.*}} parity
// CHECK: croq.event.wait %{{.*}} parity
func.func @two_roles(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  croq.parallel (%b) by [%n] : block {
    %full = croq.event.alloc arrivals 128 : !croq.event<shared, 2>
    croq.parallel (%p) by [%c3] : warpgroup {
      %producer = arith.cmpi eq, %p, %c0 : index
      croq.inthreads async (%producer) {
        scf.for %k = %c0 to %n step %c1 {
          %s = arith.remui %k, %c2 : index
          croq.event.trigger %full[%s] : !croq.event<shared, 2>
        }
      }
      %first = arith.cmpi eq, %p, %c1 : index
      croq.inthreads async (%first) {
        scf.for %k = %c0 to %n step %c1 {
          %s = arith.remui %k, %c2 : index
          croq.event.wait %full[%s] : !croq.event<shared, 2>
        }
      }
      %second = arith.cmpi eq, %p, %c2 : index
      croq.inthreads async (%second) {
        scf.for %k = %c0 to %n step %c1 {
          %s = arith.remui %k, %c2 : index
          croq.event.wait %full[%s] : !croq.event<shared, 2>
        }
      }
    }
  }
  return
}

// -----

// FA3's re-wait in a loop with a run-time lower bound, the first iteration
// tested as `lb == iv`, and the trigger in an elected-lane region: the D1
// rule, (iv - lb) relative.
// CHECK-LABEL: func.func @rewait_dynamic_lb
// CHECK-NOT: memref.alloca
// CHECK: arith.maxsi
// CHECK: croq.event.wait %{{.*}} parity
func.func @rewait_dynamic_lb(%n: index, %lb: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  croq.parallel (%b) by [%n] : block {
    %vf = croq.event.alloc : !croq.event<shared, 2>
    croq.parallel (%p) by [%c2] : warpgroup {
      %producer = arith.cmpi eq, %p, %c0 : index
      croq.inthreads async (%producer) {
        scf.for %k = %lb to %n step %c1 {
          %s = arith.remui %k, %c2 : index
          croq.inthreads (%producer) {
            croq.event.trigger %vf[%s] : !croq.event<shared, 2>
          }
        }
      }
      %consumer = arith.cmpi eq, %p, %c1 : index
      croq.inthreads async (%consumer) {
        scf.for %k = %lb to %n step %c1 {
          %s = arith.remui %k, %c2 : index
          %k1 = arith.addi %k, %c1 : index
          %prev = arith.remui %k1, %c2 : index
          %first = arith.cmpi eq, %lb, %k : index
          %pick = arith.select %first, %s, %prev : index
          croq.event.wait %vf[%pick] : !croq.event<shared, 2>
        }
      }
    }
  }
  return
}

// -----

// `wait e` of a 3-element event and `wait g[%i]` of a 2x2 one wait on every
// element they select, each owed its own generation: one wait per element,
// each with its own parity (here the waiter's own bit per slot, since the
// waits are not on slot iv % N of a loop).
// CHECK-LABEL: func.func @whole_waits
// CHECK-COUNT-3: croq.event.trigger
// CHECK: croq.event.wait %[[E:.*]][%[[C0:.*]]] parity
// CHECK: croq.event.wait %[[E]][%[[C1:.*]]] parity
// CHECK: croq.event.wait %[[E]][%[[C2:.*]]] parity
// CHECK: croq.event.wait %[[G:.*]][%[[I:.*]], %{{.*}}] parity
// CHECK: croq.event.wait %[[G]][%[[I]], %{{.*}}] parity
// CHECK-NOT: croq.event.wait
func.func @whole_waits(%n: index, %i: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  croq.parallel (%b) by [%n] : block {
    %e = croq.event.alloc : !croq.event<shared, 3>
    %g = croq.event.alloc : !croq.event<shared, 2x2>
    croq.parallel (%p) by [%c2] : warpgroup {
      %producer = arith.cmpi eq, %p, %c0 : index
      croq.inthreads async (%producer) {
        croq.event.trigger %e : !croq.event<shared, 3>
        croq.event.trigger %g[%i] : !croq.event<shared, 2x2>
        croq.event.trigger %g[%i, %c1] : !croq.event<shared, 2x2>
      }
      %consumer = arith.cmpi eq, %p, %c1 : index
      croq.inthreads async (%consumer) {
        croq.event.wait %e : !croq.event<shared, 3>
        croq.event.wait %g[%i] : !croq.event<shared, 2x2>
      }
    }
  }
  return
}
