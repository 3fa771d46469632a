// RUN: croq-translate --croq-to-ptx %s | FileCheck %s
// CHECK: .entry count_blocks_kernel(

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
