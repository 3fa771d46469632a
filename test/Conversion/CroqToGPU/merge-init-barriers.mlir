// RUN: croq-opt %s --croq-merge-init-barriers --split-input-file | FileCheck %s

!group = !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>

// Two groups initialised one after the other: the block barrier between
// them goes, the one after the last stays.
// CHECK-LABEL: func.func @block_barriers
// CHECK: nvgpu.mbarrier.init %[[A:.*]][
// CHECK-NOT: gpu.barrier
// CHECK: %[[B:.*]] = nvgpu.mbarrier.create
// CHECK: nvgpu.mbarrier.init %[[B]][
// CHECK: gpu.barrier
// CHECK-NEXT: return
func.func @block_barriers(%first: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = nvgpu.mbarrier.create -> !group
  scf.if %first {
    nvgpu.mbarrier.init %a[%c0], %c1 : !group
  }
  gpu.barrier
  %b = nvgpu.mbarrier.create -> !group
  %c128 = arith.constant 128 : index
  scf.if %first {
    nvgpu.mbarrier.init %b[%c0], %c128 : !group
  }
  gpu.barrier
  return
}

// -----

!group = !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>

// Cluster barriers after cluster-visible initialisations: one remains. A
// cluster barrier is not removed before a block barrier.
// CHECK-LABEL: func.func @cluster_barriers
// CHECK: nvvm.fence.mbarrier.init
// CHECK-NOT: nvvm.cluster
// CHECK: nvgpu.mbarrier.create
// CHECK: nvvm.fence.mbarrier.init
// CHECK: nvvm.cluster.arrive
// CHECK-NEXT: nvvm.cluster.wait
// CHECK: nvgpu.mbarrier.create
// CHECK: gpu.barrier
// CHECK-NEXT: return
func.func @cluster_barriers(%first: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = nvgpu.mbarrier.create -> !group
  scf.if %first {
    nvgpu.mbarrier.init %a[%c0], %c1 : !group
    nvvm.fence.mbarrier.init
  }
  nvvm.cluster.arrive
  nvvm.cluster.wait
  %b = nvgpu.mbarrier.create -> !group
  scf.if %first {
    nvgpu.mbarrier.init %b[%c0], %c1 : !group
    nvvm.fence.mbarrier.init
  }
  nvvm.cluster.arrive
  nvvm.cluster.wait
  %c = nvgpu.mbarrier.create -> !group
  scf.if %first {
    nvgpu.mbarrier.init %c[%c0], %c1 : !group
  }
  gpu.barrier
  return
}

// -----

!group = !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>

// A store between the barriers, or the use of a group initialised before
// the first, keeps both.
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-4: gpu.barrier
func.func @kept(%first: i1, %m: memref<4xf32, #gpu.address_space<workgroup>>, %x: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = nvgpu.mbarrier.create -> !group
  scf.if %first {
    nvgpu.mbarrier.init %a[%c0], %c1 : !group
  }
  gpu.barrier
  memref.store %x, %m[%c0] : memref<4xf32, #gpu.address_space<workgroup>>
  gpu.barrier
  scf.if %first {
    nvgpu.mbarrier.init %a[%c1], %c1 : !group
  }
  gpu.barrier
  %b = nvgpu.mbarrier.create -> !group
  scf.if %first {
    nvgpu.mbarrier.init %b[%c0], %c1 : !group
    memref.store %x, %m[%c1] : memref<4xf32, #gpu.address_space<workgroup>>
  }
  gpu.barrier
  return
}
