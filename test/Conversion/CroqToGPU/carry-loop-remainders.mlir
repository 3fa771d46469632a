// RUN: croq-opt %s --pass-pipeline="builtin.module(gpu.module(croq-carry-loop-remainders))" | FileCheck %s

gpu.module @kernels {
  // A ring of 3 slots: the slot k % 3 and the phase (k / 3) % 2 become two
  // carried values, advanced by one compare and select per step; % 4 stays
  // (a mask).
  // CHECK-LABEL: func.func @ring_of_three
  // CHECK: arith.constant 4 : index
  // CHECK-NEXT: %[[C0:.*]] = arith.constant 0 : index
  // CHECK-NEXT: %[[C0B:.*]] = arith.constant 0 : index
  // CHECK-NEXT: scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[R:.*]] = %[[C0]], %[[Q:.*]] = %[[C0B]]) -> (index, index)
  // CHECK-NOT: arith.remsi %[[K]], %{{.*}}
  // CHECK: memref.store %[[R]]
  // CHECK: %[[PHASE:.*]] = arith.remui %[[Q]], %{{.*}} : index
  // CHECK: memref.store %[[PHASE]]
  // CHECK: arith.remui %[[K]], %c4
  // CHECK: %[[NEXT:.*]] = arith.addi %[[R]], %{{.*}} : index
  // CHECK: %[[WRAP:.*]] = arith.cmpi uge, %[[NEXT]], %{{.*}} : index
  // CHECK: %[[LESS:.*]] = arith.subi %[[NEXT]], %{{.*}} : index
  // CHECK: %[[R2:.*]] = arith.select %[[WRAP]], %[[LESS]], %[[NEXT]] : index
  // CHECK: %[[INC:.*]] = arith.select %[[WRAP]], %{{.*}}, %{{.*}} : index
  // CHECK: %[[Q2:.*]] = arith.addi %[[Q]], %[[INC]] : index
  // CHECK: scf.yield %[[R2]], %[[Q2]] : index, index
  func.func @ring_of_three(%n: index, %out: memref<?xindex>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %c4 = arith.constant 4 : index
    scf.for %k = %c0 to %n step %c1 {
      %slot = arith.remsi %k, %c3 : index
      memref.store %slot, %out[%k] : memref<?xindex>
      %round = arith.divui %k, %c3 : index
      %phase = arith.remui %round, %c2 : index
      memref.store %phase, %out[%slot] : memref<?xindex>
      %mask = arith.remui %k, %c4 : index
      memref.store %mask, %out[%mask] : memref<?xindex>
    }
    return
  }

  // From a lower bound of 7 by steps of 2: the remainder starts at 7 % 5
  // and the quotient at 7 / 5. A step larger than the divisor, a negative
  // lower bound, or one not known, leaves the division.
  // CHECK-LABEL: func.func @offset_start
  // CHECK: arith.constant 7 : index
  // CHECK-NEXT: %[[R0:.*]] = arith.constant 2 : index
  // CHECK-NEXT: %[[Q0:.*]] = arith.constant 1 : index
  // CHECK: iter_args(%{{.*}} = %[[R0]], %{{.*}} = %[[Q0]])
  // CHECK-LABEL: func.func @left_alone
  // CHECK: arith.remui
  // CHECK: arith.remsi
  // CHECK: arith.remui
  // CHECK-NOT: iter_args
  func.func @offset_start(%n: index, %out: memref<?xindex>) {
    %c2 = arith.constant 2 : index
    %c5 = arith.constant 5 : index
    %c7 = arith.constant 7 : index
    scf.for %k = %c7 to %n step %c2 {
      %r = arith.remui %k, %c5 : index
      memref.store %r, %out[%k] : memref<?xindex>
    }
    return
  }
  func.func @left_alone(%lb: index, %n: index, %out: memref<?xindex>) {
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %c7 = arith.constant 7 : index
    %cm1 = arith.constant -1 : index
    scf.for %k = %lb to %n step %c1 {
      %r = arith.remui %k, %c3 : index
      memref.store %r, %out[%k] : memref<?xindex>
    }
    scf.for %k = %cm1 to %n step %c1 {
      %r = arith.remsi %k, %c3 : index
      memref.store %r, %out[%c1] : memref<?xindex>
    }
    scf.for %k = %c1 to %n step %c7 {
      %r = arith.remui %k, %c3 : index
      memref.store %r, %out[%c1] : memref<?xindex>
    }
    return
  }

  // A loop that croq-to-gpu's type conversion gave i64 bounds (an index
  // value among its loop-carried ones): each bound a cast of an index
  // constant, the counter cast back to index where it is divided. The
  // remainder is carried all the same.
  // CHECK-LABEL: func.func @converted_to_i64
  // CHECK: scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %{{.*}}, %[[R:.*]] = %{{.*}}, %{{.*}} = %{{.*}}) -> (i64, index, index) : i64
  // CHECK-NOT: arith.remsi
  // CHECK: memref.store %[[R]]
  func.func @converted_to_i64(%n: i64, %out: memref<?xindex>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c6 = arith.constant 6 : index
    %lb = builtin.unrealized_conversion_cast %c0 : index to i64
    %step = builtin.unrealized_conversion_cast %c1 : index to i64
    %last = scf.for %k = %lb to %n step %step iter_args(%prev = %lb) -> (i64) : i64 {
      %kk = builtin.unrealized_conversion_cast %k : i64 to index
      %slot = arith.remsi %kk, %c6 : index
      memref.store %slot, %out[%c0] : memref<?xindex>
      scf.yield %k : i64
    }
    return
  }
}
