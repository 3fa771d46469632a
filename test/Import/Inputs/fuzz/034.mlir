func.func @over_budget(%g: memref<64xf32>, %n: index) {
  %c3 = arith.constant 256 : index
  %c4 = arith.constant 4 : index
  croq.parallel (%b) by [%n] : block {
    %s = memref.alloc() : memref<64xf32, #gpu.address_space<workgroup>>
    croq.parallel (%p) by [%c4] : warpgroup {
      %producer = arith.cmpi ult, %p, %c3 : index
      croq.inthreads async (%producer) {
        croq.dma.copy %g to %s : memref<64xf32> to memref<64xf32, #gpu.address_space<workgroup>>
      }
      %consumer = arith.cmpi eq, %p, %c3 : index
      croq.inthreads async (%consumer) {
      }
    }
  }
  return
}
