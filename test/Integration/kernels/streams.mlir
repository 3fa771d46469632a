// Two `parallel.async` launches, each on a stream the function owns (the
// seed's `stream s;`). Each kernel is one block of 32 threads iterating
// x = 0.999 x + 0.001, so the two can run side by side; the function joins
// both streams before it returns. @spin_serial makes the same two launches
// synchronously, one after the other, for comparison.
func.func @spin_streams(%x: memref<?xf32>, %y: memref<?xf32>, %iters: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %scale = arith.constant 0.999 : f32
  %shift = arith.constant 0.001 : f32
  %s0 = croq.stream.create : !croq.stream
  %s1 = croq.stream.create : !croq.stream
  croq.parallel (%b) by [%c1] : block async stream(%s0) {
    croq.parallel (%t) by [%c32] : thread {
      %v0 = memref.load %x[%t] : memref<?xf32>
      %v = scf.for %i = %c0 to %iters step %c1 iter_args(%a = %v0) -> f32 {
        %m = arith.mulf %a, %scale : f32
        %n = arith.addf %m, %shift : f32
        scf.yield %n : f32
      }
      memref.store %v, %x[%t] : memref<?xf32>
    }
  }
  croq.parallel (%b) by [%c1] : block async stream(%s1) {
    croq.parallel (%t) by [%c32] : thread {
      %v0 = memref.load %y[%t] : memref<?xf32>
      %v = scf.for %i = %c0 to %iters step %c1 iter_args(%a = %v0) -> f32 {
        %m = arith.mulf %a, %scale : f32
        %n = arith.addf %m, %shift : f32
        scf.yield %n : f32
      }
      memref.store %v, %y[%t] : memref<?xf32>
    }
  }
  return
}

func.func @spin_serial(%x: memref<?xf32>, %y: memref<?xf32>, %iters: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %scale = arith.constant 0.999 : f32
  %shift = arith.constant 0.001 : f32
  croq.parallel (%b) by [%c1] : block {
    croq.parallel (%t) by [%c32] : thread {
      %v0 = memref.load %x[%t] : memref<?xf32>
      %v = scf.for %i = %c0 to %iters step %c1 iter_args(%a = %v0) -> f32 {
        %m = arith.mulf %a, %scale : f32
        %n = arith.addf %m, %shift : f32
        scf.yield %n : f32
      }
      memref.store %v, %x[%t] : memref<?xf32>
    }
  }
  croq.parallel (%b) by [%c1] : block {
    croq.parallel (%t) by [%c32] : thread {
      %v0 = memref.load %y[%t] : memref<?xf32>
      %v = scf.for %i = %c0 to %iters step %c1 iter_args(%a = %v0) -> f32 {
        %m = arith.mulf %a, %scale : f32
        %n = arith.addf %m, %shift : f32
        scf.yield %n : f32
      }
      memref.store %v, %y[%t] : memref<?xf32>
    }
  }
  return
}

// parallel.async<s> on a caller's stream: returns at once.
func.func @spin_on(%x: memref<?xf32>, %iters: index, %s: !croq.stream) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %scale = arith.constant 0.999 : f32
  %shift = arith.constant 0.001 : f32
  croq.parallel (%b) by [%c1] : block async stream(%s) {
    croq.parallel (%t) by [%c32] : thread {
      %v0 = memref.load %x[%t] : memref<?xf32>
      %v = scf.for %i = %c0 to %iters step %c1 iter_args(%a = %v0) -> f32 {
        %m = arith.mulf %a, %scale : f32
        %n = arith.addf %m, %shift : f32
        scf.yield %n : f32
      }
      memref.store %v, %x[%t] : memref<?xf32>
    }
  }
  return
}
