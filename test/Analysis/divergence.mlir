// RUN: croq-opt %s --croq-report-divergence --split-input-file --verify-diagnostics

// The glossary's kernel: the data-dependent branch is divergent within a
// warp, and so is the bounds check `idx < n` (a warp straddling n splits).
func.func @glossary(%data: memref<?xf32>, %n: index) {
  %c256 = arith.constant 256 : index
  %blocks = arith.ceildivui %n, %c256 : index
  // expected-remark @below {{uniform at block}}
  croq.parallel (%b) by [%blocks] : block {
    // expected-remark @below {{divergent within warp}}
    croq.parallel (%t) by [%c256] : thread {
      %b256 = arith.muli %b, %c256 : index
      %idx = arith.addi %b256, %t : index
      %in = arith.cmpi ult, %idx, %n : index
      // expected-remark @below {{divergent within warp}}
      // expected-note @below {{a warp whose lanes disagree runs both sides one after the other: 10 ops then 0 ops, 10 in all}}
      scf.if %in {
        %v = memref.load %data[%idx] : memref<?xf32>
        %half = arith.constant 0.5 : f32
        %big = arith.cmpf ogt, %v, %half : f32
        // expected-remark @below {{divergent within warp}}
        // expected-note @below {{a warp whose lanes disagree runs both sides one after the other: 2 ops then 2 ops, 4 in all}}
        %r = scf.if %big -> f32 {
          %four = arith.constant 4.0 : f32
          %a = arith.mulf %v, %four : f32
          scf.yield %a : f32
        } else {
          %two = arith.constant 2.0 : f32
          %c = arith.addf %v, %two : f32
          scf.yield %c : f32
        }
        %sq = arith.mulf %r, %r : f32
        memref.store %sq, %data[%idx] : memref<?xf32>
      }
    }
  }
  return
}

// -----

// Conditions on tid / 32 are uniform across a warp, on tid / 128 across a
// warpgroup; tid % 32 is per thread.
func.func @thread_index_math() {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  %c3 = arith.constant 3 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %tid = gpu.thread_id x
    %warp = arith.divui %tid, %c32 : index
    %w3 = arith.cmpi eq, %warp, %c3 : index
    // expected-remark @below {{uniform at warp}}
    scf.if %w3 {
    }
    %group = arith.divui %tid, %c128 : index
    %g0 = arith.cmpi eq, %group, %c0 : index
    // expected-remark @below {{uniform at warpgroup}}
    scf.if %g0 {
    }
    %lane = arith.remui %tid, %c32 : index
    %l0 = arith.cmpi eq, %lane, %c0 : index
    // expected-remark @below {{divergent within warp}}
    // expected-note @below {{0 ops then 0 ops, 0 in all}}
    scf.if %l0 {
    }
    // A block-uniform condition from the block id.
    %b0 = arith.cmpi eq, %bx, %c0 : index
    // expected-remark @below {{uniform at block}}
    scf.if %b0 {
    }
    gpu.terminator
  }
  return
}

// -----

// The seed's persistent guard: tile_iter # block_id against a host value is
// the same for the whole block.
func.func @persistent(%total: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c132 = arith.constant 132 : index
  %iters = arith.ceildivui %total, %c132 : index
  // expected-remark @below {{uniform at block}}
  croq.parallel (%block_id) by [%c132] : block {
    // expected-remark @below {{uniform at grid}}
    scf.for %tile_iter = %c0 to %iters step %c1 {
      %scaled = arith.muli %tile_iter, %c132 : index
      %tile_id = arith.addi %scaled, %block_id : index
      %live = arith.cmpi ult, %tile_id, %total : index
      // expected-remark @below {{uniform at block}}
      scf.if %live {
      }
    }
  }
  return
}

// -----

// inthreads.async partitions on a warpgroup index are warpgroup-uniform;
// one on a thread index is not.
func.func @partitions() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c128 = arith.constant 128 : index
  // expected-remark @below {{uniform at block}}
  croq.parallel (%b) by [%c1] : block {
    // expected-remark @below {{uniform at warpgroup}}
    croq.parallel (%p1) by [%c2] : warpgroup {
      %producer = arith.cmpi eq, %p1, %c0 : index
      // expected-remark @below {{uniform at warpgroup}}
      croq.inthreads async (%producer) {
      }
      %consumer = arith.cmpi eq, %p1, %c1 : index
      // expected-remark @below {{uniform at warpgroup}}
      croq.inthreads async (%consumer) {
      }
      // expected-remark @below {{divergent within warp}}
      croq.parallel (%t) by [%c128] : thread {
        %t0 = arith.cmpi eq, %t, %c0 : index
        // expected-remark @below {{divergent within warp}}
        croq.inthreads (%t0) {
        }
      }
    }
  }
  return
}

// -----

// A loop whose trip count differs per thread: its results are divergent
// (threads leave in different iterations), even though every iteration adds
// a uniform value; a branch on such a result diverges.
func.func @temporal(%out: memref<256xindex>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %c256 = arith.constant 256 : index
  // expected-remark @below {{uniform at block}}
  croq.parallel (%b) by [%c1] : block {
    // expected-remark @below {{divergent within warp}}
    croq.parallel (%t) by [%c256] : thread {
      // expected-remark @below {{divergent within warp}}
      %sum = scf.for %i = %c0 to %t step %c1 iter_args(%acc = %c0) -> index {
        %next = arith.addi %acc, %c5 : index
        // Inside, the count is uniform among the threads still looping.
        %small = arith.cmpi ult, %i, %c5 : index
        // expected-remark @below {{uniform at grid}}
        scf.if %small {
        }
        scf.yield %next : index
      }
      %big = arith.cmpi ugt, %sum, %c5 : index
      // expected-remark @below {{divergent within warp}}
      // expected-note @below {{1 ops then 0 ops, 1 in all}}
      scf.if %big {
        memref.store %sum, %out[%t] : memref<256xindex>
      }
      // A uniform loop keeps a uniform value uniform.
      // expected-remark @below {{uniform at grid}}
      %u = scf.for %i = %c0 to %c5 step %c1 iter_args(%acc = %c0) -> index {
        %next = arith.addi %acc, %c5 : index
        scf.yield %next : index
      }
      %ub = arith.cmpi ugt, %u, %c5 : index
      // expected-remark @below {{uniform at grid}}
      scf.if %ub {
      }
      // while loops: the condition decides.
      // expected-remark @below {{divergent within warp}}
      %w = scf.while (%x = %c0) : (index) -> index {
        %go = arith.cmpi ult, %x, %t : index
        scf.condition(%go) %x : index
      } do {
      ^bb0(%x: index):
        %y = arith.addi %x, %c1 : index
        scf.yield %y : index
      }
    }
  }
  return
}

// -----

// Outlined kernels: kernel arguments are grid-uniform, a device function's
// are not; the warp id and a lane broadcast are warp-uniform.
gpu.module @kernels {
  gpu.func @kernel(%n: index) kernel {
    %c0 = arith.constant 0 : index
    %big = arith.cmpi ugt, %n, %c0 : index
    // expected-remark @below {{uniform at grid}}
    scf.if %big {
    }
    %w = nvvm.read.ptx.sreg.warpid : i32
    %c1 = arith.constant 1 : i32
    %w1 = arith.cmpi eq, %w, %c1 : i32
    // expected-remark @below {{uniform at warp}}
    scf.if %w1 {
    }
    %tid = nvvm.read.ptx.sreg.tid.x : i32
    %c32 = arith.constant 32 : i32
    %warp = arith.divui %tid, %c32 : i32
    %zero = arith.constant 0 : i32
    %w0 = arith.cmpi eq, %warp, %zero : i32
    // expected-remark @below {{uniform at warp}}
    scf.if %w0 {
    }
    %odd = arith.andi %tid, %c1 : i32
    %isodd = arith.cmpi eq, %odd, %c1 : i32
    // expected-remark @below {{divergent within warp}}
    // expected-note @below {{0 ops then 0 ops, 0 in all}}
    scf.if %isodd {
    }
    gpu.return
  }
  func.func @device_function(%x: index) {
    %c0 = arith.constant 0 : index
    %p = arith.cmpi eq, %x, %c0 : index
    // expected-remark @below {{divergent within warp}}
    // expected-note @below {{0 ops then 0 ops, 0 in all}}
    scf.if %p {
    }
    return
  }
}

// -----

// A division by a run-time divisor is not speculatable (zero is undefined),
// but it gives every thread the same quotient: a loop bounded by it is
// uniform.
func.func @runtime_divisor(%k: index, %splits: index, %x: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  // expected-remark @below {{uniform at block}}
  croq.parallel (%b) by [%c1] : block {
    // expected-remark @below {{divergent within warp}}
    croq.parallel (%t) by [%c128] : thread {
      %per = arith.ceildivsi %k, %splits : index
      %rest = arith.remsi %k, %splits : index
      %n = arith.addi %per, %rest : index
      // expected-remark @below {{uniform at grid}}
      scf.for %i = %c0 to %n step %c1 {
        %one = arith.constant 1.0 : f32
        memref.store %one, %x[%t] : memref<?xf32>
      }
    }
  }
  return
}
