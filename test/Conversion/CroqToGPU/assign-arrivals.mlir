// RUN: croq-opt %s --croq-assign-arrivals | FileCheck %s
// RUN: croq-opt %s --croq-insert-barriers --croq-plan-shared-layout --croq-pipeline-mma --croq-materialize-tma --croq-assign-arrivals --croq-assign-phases --croq-elect-issuers --convert-croq-to-gpu | FileCheck %s --check-prefix=LOWERED

// An event's arrival count is the number of threads that trigger it: one
// warpgroup role (128), the whole block (256) for a trigger outside roles;
// an explicit count stays, and an event nobody triggers gets 1.
// CHECK-LABEL: func.func @counts
// CHECK: croq.event.alloc arrivals 128 : <shared, 2>
// CHECK: croq.event.alloc arrivals 3 : <shared>
// CHECK: croq.event.alloc arrivals 1 : <shared>
// CHECK: croq.event.alloc arrivals 256 : <shared>
// The conversion assigns them the same way before it lowers them.
// LOWERED-LABEL: func.func @counts
// LOWERED: %[[C128:.*]] = arith.constant 128 : index
// LOWERED: nvgpu.mbarrier.init %{{.*}}[%{{.*}}], %[[C128]]
func.func @counts(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  croq.parallel (%b) by [%n] : block {
    %full = croq.event.alloc : !croq.event<shared, 2>
    %fixed = croq.event.alloc arrivals 3 : !croq.event<shared>
    %unused = croq.event.alloc : !croq.event<shared>
    %all = croq.event.alloc : !croq.event<shared>
    croq.parallel (%p) by [%c2] : warpgroup {
      %producer = arith.cmpi eq, %p, %c0 : index
      croq.inthreads async (%producer) {
        croq.event.trigger %full[%c0] : !croq.event<shared, 2>
      }
      %consumer = arith.cmpi eq, %p, %c1 : index
      croq.inthreads async (%consumer) {
        croq.event.wait %full[%c0] : !croq.event<shared, 2>
      }
      croq.event.trigger %all : !croq.event<shared>
    }
  }
  return
}

// Rings of their own: two consumer warpgroups (one role of 256 threads)
// release slots [0, 2) and [2, 4) of one event (`trigger empty[ring + s]`,
// ring = (p - 1) * 2): each element gets the 128 arrivals of one
// warpgroup per phase, not the role's 256.
// CHECK-LABEL: func.func @ring_per_consumer
// CHECK: croq.event.alloc arrivals 128 : <shared, 4>
func.func @ring_per_consumer(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  croq.parallel (%b) by [%n] : block {
    %empty = croq.event.alloc : !croq.event<shared, 4>
    croq.parallel (%p) by [%c3] : warpgroup {
      %consumers = arith.cmpi ugt, %p, %c0 : index
      croq.inthreads async (%consumers) {
        %q = arith.subi %p, %c1 : index
        %ring = arith.muli %q, %c2 : index
        scf.for %s = %c0 to %c2 step %c1 {
          %slot = arith.addi %ring, %s : index
          croq.event.trigger %empty[%slot] : !croq.event<shared, 4>
        }
      }
    }
  }
  return
}

// Outside every role, the parallels around the trigger name its threads:
// each warpgroup of `parallel p by 2 : group-4` triggers its own element
// (`f = tma.copy.async ... => s[p]`, bound to an event by
// croq-bind-tma-futures), so each element gets 128 arrivals per phase;
// a warp of each warpgroup's threads (`parallel w by 4 : group` inside)
// changes nothing.
// CHECK-LABEL: func.func @element_per_instance
// CHECK: croq.event.alloc arrivals 128 : <shared, 2>
// CHECK: croq.event.alloc arrivals 128 : <shared, 2>
func.func @element_per_instance(%n: index) {
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  croq.parallel (%b) by [%n] : block {
    %e = croq.event.alloc : !croq.event<shared, 2>
    %f = croq.event.alloc : !croq.event<shared, 2>
    croq.parallel (%p) by [%c2] : warpgroup {
      croq.event.trigger %e[%p] : !croq.event<shared, 2>
      croq.parallel (%w) by [%c4] : warp {
        croq.event.trigger %f[%p] : !croq.event<shared, 2>
      }
    }
  }
  return
}
