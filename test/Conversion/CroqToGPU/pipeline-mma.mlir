// defer-min-slots=2 defers every ring that can be (the default, 4, keeps
// the rings of 2 and 3 slots here plain).
// RUN: croq-opt %s --croq-pipeline-mma="defer-min-slots=2" --split-input-file | FileCheck %s
// A second run changes nothing.
// RUN: croq-opt %s --croq-pipeline-mma="defer-min-slots=2" --croq-pipeline-mma="defer-min-slots=2" --split-input-file | FileCheck %s
// With defer-min-slots=3, and by default, the 2-slot ring keeps the plain
// form: a full commit, then the release of this iteration's slot.
// RUN: croq-opt %s --croq-pipeline-mma="defer-min-slots=3" --split-input-file | FileCheck %s --check-prefix=PLAIN
// RUN: croq-opt %s --croq-pipeline-mma --split-input-file | FileCheck %s --check-prefix=PLAIN
// PLAIN-LABEL: func.func @deferred_release
// PLAIN: scf.for
// PLAIN: croq.mma row_row
// PLAIN-NOT: pending
// PLAIN: croq.mma.commit{{$}}
// PLAIN-NEXT: croq.event.trigger

!ws = memref<64x16xf16, strided<[16, 1], offset: ?>, #gpu.address_space<workgroup>>
!acc = !croq.frag<acc, 64x64xf16, warpgroup>

// A consumer loop that ends `mma.commit; trigger empty[s]` keeps one K
// iteration of wgmma in flight: `pending 1`, the release of the previous
// iteration's slot from the second iteration on (the slot that iteration
// computed, carried in as a loop value), and after the loop a full commit,
// then the release of the last iteration's slot (the loop's result, which
// that commit covers). The trigger after the loop follows the MMAs, so it
// commits first.
// CHECK-LABEL: func.func @deferred_release
// CHECK: croq.mma.fill
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[R:.*]]:2 = scf.for %[[IV:.*]] = %[[LB:.*]] to %[[UB:.*]] step %{{.*}} iter_args(%{{.*}} = %{{.*}}, %[[PREV:.*]] = %[[ZERO]])
// CHECK-NEXT: %[[S:.*]] = arith.remsi %[[IV]]
// CHECK: croq.mma row_row
// CHECK: croq.mma.commit pending 1
// CHECK-NOT: croq.event.trigger
// CHECK: %[[NOTFIRST:.*]] = arith.cmpi ne, %[[IV]], %[[LB]] : index
// CHECK-NEXT: scf.if %[[NOTFIRST]] {
// CHECK-NEXT: croq.event.trigger %{{.*}}[%[[PREV]]]
// CHECK-NEXT: }
// CHECK-NEXT: scf.yield %{{.*}}, %[[S]]
// CHECK: croq.mma.commit{{$}}
// CHECK-NEXT: %[[RAN:.*]] = arith.cmpi slt, %[[LB]], %[[UB]] : index
// CHECK-NEXT: scf.if %[[RAN]] {
// CHECK-NEXT: croq.event.trigger %{{.*}}[%[[R]]#1]
// CHECK: croq.mma.commit{{$}}
// CHECK-NEXT: croq.event.trigger %{{.*}}[%{{.*}}]
// CHECK-NEXT: croq.mma.store %[[R]]#0
func.func @deferred_release(%n: index, %k: index, %out: memref<64x64xf16, #gpu.address_space<workgroup>>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f32
  croq.parallel (%b) by [%n] : block {
    %full = croq.event.alloc : !croq.event<shared, 2>
    %empty = croq.event.alloc : !croq.event<shared, 2>
    %a = memref.alloc() : memref<2x64x16xf16, #gpu.address_space<workgroup>>
    %bt = memref.alloc() : memref<2x64x16xf16, #gpu.address_space<workgroup>>
    croq.parallel (%p) by [%c1] : warpgroup {
      %init = croq.mma.fill %zero : f32 -> !acc
      %r = scf.for %i = %c0 to %k step %c1 iter_args(%acc = %init) -> (!acc) {
        %s = arith.remsi %i, %c2 : index
        croq.event.wait %full[%s] : !croq.event<shared, 2>
        %ta = memref.subview %a[%s, 0, 0] [1, 64, 16] [1, 1, 1] : memref<2x64x16xf16, #gpu.address_space<workgroup>> to !ws
        %tb = memref.subview %bt[%s, 0, 0] [1, 64, 16] [1, 1, 1] : memref<2x64x16xf16, #gpu.address_space<workgroup>> to !ws
        %ma = croq.mma.load %ta : !ws -> !croq.frag<a, 64x16xf16, warpgroup>
        %mb = croq.mma.load %tb : !ws -> !croq.frag<b, 64x16xf16, warpgroup>
        %next = croq.mma row_row %acc, %ma, %mb : !acc, !croq.frag<a, 64x16xf16, warpgroup>, !croq.frag<b, 64x16xf16, warpgroup> -> !acc
        croq.mma.commit
        croq.event.trigger %empty[%s] : !croq.event<shared, 2>
        scf.yield %next : !acc
      }
      croq.event.trigger %full[%c0] : !croq.event<shared, 2>
      croq.mma.store %r, %out : !acc, memref<64x64xf16, #gpu.address_space<workgroup>>
    }
  }
  return
}

// -----

!ws = memref<64x16xf16, strided<[16, 1], offset: ?>, #gpu.address_space<workgroup>>
!acc = !croq.frag<acc, 64x64xf16, warpgroup>

// An explicit depth (mma.wait<2>) is the program's choice: the loop keeps
// its form, and the release in it, which follows MMAs, commits fully first.
// A trigger before any MMA gets no commit.
// CHECK-LABEL: func.func @explicit_depth
// CHECK-NOT: croq.mma.commit
// CHECK: croq.event.trigger %{{.*}}[%{{.*}}]
// CHECK-NOT: croq.mma.commit
// CHECK: scf.for
// CHECK: croq.mma.commit pending 2
// CHECK-NEXT: croq.mma.commit{{$}}
// CHECK-NEXT: croq.event.trigger
// CHECK-NEXT: scf.yield
func.func @explicit_depth(%n: index, %k: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f32
  croq.parallel (%b) by [%n] : block {
    %empty = croq.event.alloc : !croq.event<shared, 2>
    %a = memref.alloc() : memref<2x64x16xf16, #gpu.address_space<workgroup>>
    croq.parallel (%p) by [%c1] : warpgroup {
      croq.event.trigger %empty[%c1] : !croq.event<shared, 2>
      %init = croq.mma.fill %zero : f32 -> !acc
      %r = scf.for %i = %c0 to %k step %c1 iter_args(%acc = %init) -> (!acc) {
        %s = arith.remsi %i, %c2 : index
        %ta = memref.subview %a[%s, 0, 0] [1, 64, 16] [1, 1, 1] : memref<2x64x16xf16, #gpu.address_space<workgroup>> to !ws
        %ma = croq.mma.load %ta : !ws -> !croq.frag<a, 64x16xf16, warpgroup>
        %mb = croq.mma.load %ta : !ws -> !croq.frag<b, 64x16xf16, warpgroup>
        %next = croq.mma row_row %acc, %ma, %mb : !acc, !croq.frag<a, 64x16xf16, warpgroup>, !croq.frag<b, 64x16xf16, warpgroup> -> !acc
        croq.mma.commit pending 2
        croq.event.trigger %empty[%s] : !croq.event<shared, 2>
        scf.yield %next : !acc
      }
    }
  }
  return
}

// -----

!ws0 = memref<64x16xf16, strided<[16, 1], offset: ?>, #gpu.address_space<workgroup>>
!acc0 = !croq.frag<acc, 64x64xf16, warpgroup>

// `pending 0` (the program's mma.wait<0>) is a depth set too: the loop keeps
// its full commit and releases the stage it has just read, with no deferral.
// CHECK-LABEL: func.func @explicit_full_wait
// CHECK: scf.for
// CHECK: croq.mma.commit pending 0
// CHECK-NEXT: croq.event.trigger %{{.*}}[%{{.*}}]
// CHECK-NEXT: scf.yield
// CHECK-NOT: croq.mma.commit
func.func @explicit_full_wait(%n: index, %k: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f32
  croq.parallel (%b) by [%n] : block {
    %empty = croq.event.alloc : !croq.event<shared, 2>
    %a = memref.alloc() : memref<2x64x16xf16, #gpu.address_space<workgroup>>
    croq.parallel (%p) by [%c1] : warpgroup {
      %init = croq.mma.fill %zero : f32 -> !acc0
      %r = scf.for %i = %c0 to %k step %c1 iter_args(%acc = %init) -> (!acc0) {
        %s = arith.remsi %i, %c2 : index
        %ta = memref.subview %a[%s, 0, 0] [1, 64, 16] [1, 1, 1] : memref<2x64x16xf16, #gpu.address_space<workgroup>> to !ws0
        %ma = croq.mma.load %ta : !ws0 -> !croq.frag<a, 64x16xf16, warpgroup>
        %mb = croq.mma.load %ta : !ws0 -> !croq.frag<b, 64x16xf16, warpgroup>
        %next = croq.mma row_row %acc, %ma, %mb : !acc0, !croq.frag<a, 64x16xf16, warpgroup>, !croq.frag<b, 64x16xf16, warpgroup> -> !acc0
        croq.mma.commit pending 0
        croq.event.trigger %empty[%s] : !croq.event<shared, 2>
        scf.yield %next : !acc0
      }
    }
  }
  return
}

// -----

!ws1 = memref<64x16xf16, strided<[16, 1], offset: ?>, #gpu.address_space<workgroup>>
!acc1 = !croq.frag<acc, 64x64xf32, warpgroup>

// A read of the accumulator after the release relies on the commit before
// the release completing every batch: the loop keeps its full wait.
// CHECK-LABEL: func.func @element_after_release
// CHECK: scf.for
// CHECK-NOT: pending 1
// CHECK: croq.mma.commit{{$}}
// CHECK-NEXT: croq.event.trigger
// CHECK-NEXT: croq.mma.element
func.func @element_after_release(%n: index, %k: index, %out: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f32
  croq.parallel (%b) by [%n] : block {
    %empty = croq.event.alloc : !croq.event<shared, 2>
    %a = memref.alloc() : memref<2x64x16xf16, #gpu.address_space<workgroup>>
    croq.parallel (%p) by [%c1] : warpgroup {
      %init = croq.mma.fill %zero : f32 -> !acc1
      %r = scf.for %i = %c0 to %k step %c1 iter_args(%acc = %init) -> (!acc1) {
        %s = arith.remsi %i, %c2 : index
        %ta = memref.subview %a[%s, 0, 0] [1, 64, 16] [1, 1, 1] : memref<2x64x16xf16, #gpu.address_space<workgroup>> to !ws1
        %ma = croq.mma.load %ta : !ws1 -> !croq.frag<a, 64x16xf16, warpgroup>
        %mb = croq.mma.load %ta : !ws1 -> !croq.frag<b, 64x16xf16, warpgroup>
        %next = croq.mma row_row %acc, %ma, %mb : !acc1, !croq.frag<a, 64x16xf16, warpgroup>, !croq.frag<b, 64x16xf16, warpgroup> -> !acc1
        croq.event.trigger %empty[%s] : !croq.event<shared, 2>
        %x = croq.mma.element %next[0] : !acc1 -> f32
        scf.yield %next : !acc1
      }
    }
  }
  return
}

// -----

// A thread's element write into a tile the warpgroup's MMAs read waits for
// the previous iteration's MMAs, before the thread-level parallel that
// writes (as a copy into it would).
// CHECK-LABEL: func.func @element_write_after_mma
// CHECK: scf.for
// CHECK-NEXT: croq.mma.commit{{$}}
// CHECK-NEXT: croq.parallel
// CHECK: memref.store
// CHECK-NOT: croq.mma.commit
// CHECK: croq.mma row_row
func.func @element_write_after_mma(%n: index, %v: f16) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %zero = arith.constant 0.0 : f32
  croq.parallel (%b) by [%c1] : block {
    %s = memref.alloc() : memref<64x64xf16, #gpu.address_space<workgroup>>
    croq.parallel (%g) by [%c1] : warpgroup {
      %acc = croq.mma.fill %zero : f32 -> !croq.frag<acc, 64x64xf32, warpgroup>
      %r = scf.for %k = %c0 to %n step %c1 iter_args(%a = %acc) -> (!croq.frag<acc, 64x64xf32, warpgroup>) {
        croq.parallel (%t) by [%c128] : thread {
          %row = arith.remui %t, %c64 : index
          memref.store %v, %s[%row, %k] : memref<64x64xf16, #gpu.address_space<workgroup>>
        }
        %fa = croq.mma.load %s : memref<64x64xf16, #gpu.address_space<workgroup>> -> !croq.frag<a, 64x64xf16, warpgroup>
        %fb = croq.mma.load %s : memref<64x64xf16, #gpu.address_space<workgroup>> -> !croq.frag<b, 64x64xf16, warpgroup>
        %next = croq.mma row_row %a, %fa, %fb : !croq.frag<acc, 64x64xf32, warpgroup>, !croq.frag<a, 64x64xf16, warpgroup>, !croq.frag<b, 64x64xf16, warpgroup> -> !croq.frag<acc, 64x64xf32, warpgroup>
        scf.yield %next : !croq.frag<acc, 64x64xf32, warpgroup>
      }
    }
  }
  return
}
