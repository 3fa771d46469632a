// RUN: croq-translate --croq-to-ptx %s | FileCheck %s
// RUN: croq-translate --croq-to-ptx --croq-chip=sm_80 --croq-features=+ptx70 %s | FileCheck %s --check-prefix=SM80
// On sm_90a the divergence analysis proves the block-level code converged,
// so the store's thread is picked by elect.sync in warp 0; sm_80 compares
// the thread id.
// CHECK: .entry count_blocks_kernel(
// CHECK: elect.sync
// CHECK: bar.sync 0
// SM80: .entry count_blocks_kernel(
// SM80-NOT: elect.sync
// SM80: bar.sync 0

// Code between levels runs once per block: the read-modify-write of
// counts[b] is made by one thread, not 256 racing ones; the thread level
// then reads the updated value.
func.func @count_blocks(%counts: memref<?xi32>, %seen: memref<?x256xi32>) {
  %c0 = arith.constant 0 : index
  %c256 = arith.constant 256 : index
  %n = memref.dim %counts, %c0 : memref<?xi32>
  croq.parallel (%b) by [%n] : block {
    %old = memref.load %counts[%b] : memref<?xi32>
    %one = arith.constant 1 : i32
    %new = arith.addi %old, %one : i32
    memref.store %new, %counts[%b] : memref<?xi32>
    croq.parallel (%t) by [%c256] : thread {
      %v = memref.load %counts[%b] : memref<?xi32>
      memref.store %v, %seen[%b, %t] : memref<?x256xi32>
    }
  }
  return
}
