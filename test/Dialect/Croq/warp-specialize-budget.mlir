// RUN: croq-opt %s --croq-warp-specialize=producer-registers=168 --verify-diagnostics

// Three producers at 168 registers leave 1024 registers, 8 per thread of the
// consumer: below the 24 that setmaxnreg allows.
func.func @over_budget(%g: memref<64xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  croq.parallel (%b) by [%n] : block {
    %s = memref.alloc() : memref<64xf32, #gpu.address_space<workgroup>>
    // expected-error @below {{has roles that do not fit in the 64K-register file: consumers would get 8 registers per thread (at least 24 needed); use fewer warpgroups or lower producer-registers}}
    croq.parallel (%p) by [%c4] : warpgroup {
      %producer = arith.cmpi ult, %p, %c3 : index
      croq.inthreads async (%producer) {
        croq.dma.copy %g to %s : memref<64xf32> to memref<64xf32, #gpu.address_space<workgroup>>
      }
      %consumer = arith.cmpi eq, %p, %c3 : index
      croq.inthreads async (%consumer) {
        %v = memref.load %s[%c0] : memref<64xf32, #gpu.address_space<workgroup>>
        %w = arith.mulf %v, %v : f32
        memref.store %w, %g[%c0] : memref<64xf32>
      }
    }
  }
  return
}
