func.func @role_dispatch(%n: index, %out: memref<2xindex>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  croq.parallel (%b) by [%n] : block {
    croq.parallel (%p) by [%c2] : warpgroup {
      %producer = arith.cmpi eq, %p, %c0 : index
      %consumer = arith.cmpi eq, %p, %c1 : index
      croq.warp_specialize registers(40, 32) {
        croq.inthreads async (%producer) {
        }
        croq.inthreads async (%consumer) {
        }
      }
    }
  }
  return
}
