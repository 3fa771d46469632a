func.func @f(%a: memref<?xf32>) {
  %big = arith.constant 2147483647 : index
  %d = memref.dim %a, %big : memref<?xf32>
  %c1 = arith.constant 1 : index
  %n = arith.addi %d, %c1 : index
  croq.parallel (%b) by [%n] : block {
    croq.parallel (%t) by [%c1] : thread {
      %x = arith.constant 1.0 : f32
      memref.store %x, %a[%b] : memref<?xf32>
    }
  }
  return
}
