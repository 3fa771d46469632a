// RUN: croq-opt %s --split-input-file --pass-pipeline='builtin.module(gpu.module(croq-bound-kernel-registers))' | FileCheck %s

// A kernel that moves registers between warpgroups gets one block per SM,
// so that ptxas knows its entry register count.
// CHECK-LABEL: gpu.func @moves
// CHECK-SAME: nvvm.minctasm = 1 : i32
// CHECK-LABEL: gpu.func @keeps
// CHECK-NOT: nvvm.minctasm
// CHECK: gpu.return
gpu.module @kernels {
  gpu.func @moves() kernel attributes {known_block_size = array<i32: 256, 1, 1>} {
    nvvm.setmaxregister decrease 40
    gpu.return
  }
  gpu.func @keeps() kernel attributes {known_block_size = array<i32: 256, 1, 1>} {
    gpu.return
  }
}

// -----

// Without a known block size the bound would mean nothing: left alone.
// CHECK-LABEL: gpu.func @unknown_block
// CHECK-NOT: nvvm.minctasm
gpu.module @kernels {
  gpu.func @unknown_block() kernel {
    nvvm.setmaxregister increase 232
    gpu.return
  }
}
