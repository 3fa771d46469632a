func.func @role_dispatch(%n: index, %out: memref<2xindex>) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  croq.parallel (%b) by [%n] : block {
    croq.parallel (%p) by [%c2] : warpgroup {
      %producer = arith.cmpi eq, %p, %c0 : index
      croq.inthreads async (%producer) {
      } {croq.max_registers = 240 : i32, croq.role = 3 : i32}
    }
  }
  return
}
