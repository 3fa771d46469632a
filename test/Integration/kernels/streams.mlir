// RUN: croq-translate --croq-to-ptx %s | FileCheck %s --check-prefix=PTX
// RUN: %if ptxas %{ croq-translate --croq-to-host %s | FileCheck %s --check-prefix=HOST %}
// PTX: .entry spin_streams_kernel(
// Host code: two owned streams, two launches that do not wait, joins before
// returning; a launch on the caller's stream returns at once.
// HOST-LABEL: extern "C" int spin_streams(void *arg0, int64_t arg0_size0, void *arg1, int64_t arg1_size0, int64_t arg2) {
// HOST: croq_rt_stream_create(&[[S0:v[0-9]+]], "spin_streams")
// HOST: croq_rt_stream_create(&[[S1:v[0-9]+]], "spin_streams")
// HOST: croq_rt_launch({{.*}}, [[S0]], params, 0, 0)
// HOST: croq_rt_launch({{.*}}, [[S1]], params, 0, 0)
// HOST: croq_rt_stream_join([[S0]], "spin_streams")
// HOST: croq_rt_stream_join([[S1]], "spin_streams")
// HOST-NEXT: return 0;
// HOST-LABEL: extern "C" int spin_serial(
// HOST: croq_rt_launch({{.*}}, nullptr, params, 1, 0)
// HOST: croq_rt_launch({{.*}}, nullptr, params, 1, 0)
// HOST-LABEL: extern "C" int spin_on(void *arg0, int64_t arg0_size0, int64_t arg1, CUstream arg2) {
// HOST: croq_rt_launch({{.*}}, arg2, params, 0, 0)
// HOST-NOT: croq_rt_stream_sync
// HOST: return 0;

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
