// RUN: croq-opt %s --croq-check-divergence --split-input-file --verify-diagnostics

// mma.sync is warp-collective: under a lane-dependent branch it is wrong.
func.func @negative_mma_sync_divergent(%a: vector<4x2xf16>, %b: vector<2x2xf16>, %c: vector<2x2xf32>) {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %tid = gpu.thread_id x
    %odd = arith.remui %tid, %c32 : index
    %first = arith.cmpi eq, %odd, %c0 : index
    scf.if %first {
      // expected-error @below {{is collective over a warp, but the control around it is only per thread}}
      // expected-note @below {{hint: make the branches around it warp-uniform (test a warp index), or move it out of them}}
      %d = nvgpu.mma.sync (%a, %b, %c) {mmaShape = [16, 8, 16]} : (vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
    }
    gpu.terminator
  }
  return
}

// -----

// On a warp index the same MMA is fine; a block barrier there is not.
func.func @negative_barrier_in_warp_branch(%a: vector<4x2xf16>, %b: vector<2x2xf16>, %c: vector<2x2xf32>) {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %c128 = arith.constant 128 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1) {
    %tid = gpu.thread_id x
    %warp = arith.divui %tid, %c32 : index
    %w0 = arith.cmpi eq, %warp, %c0 : index
    scf.if %w0 {
      %d = nvgpu.mma.sync (%a, %b, %c) {mmaShape = [16, 8, 16]} : (vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
      // expected-error @below {{is collective over a block, but the control around it is only uniform at warp}}
      // expected-note @below {{hint: make the branches around it block-uniform (test a block index), or move it out of them}}
      gpu.barrier
    }
    // A block-uniform branch may hold a barrier.
    %b0 = arith.cmpi eq, %bx, %c0 : index
    scf.if %b0 {
      gpu.barrier
    }
    gpu.terminator
  }
  return
}

// -----

// Inside an inthreads.async partition (warpgroup-uniform) a warpgroup MMA
// and a warpgroup barrier are fine, a block barrier is not.
func.func @negative_block_barrier_in_partition() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f32
  croq.parallel (%b) by [%c1] : block {
    croq.parallel (%p1) by [%c2] : warpgroup {
      %consumer = arith.cmpi eq, %p1, %c1 : index
      croq.inthreads async (%consumer) {
        %acc = croq.mma.fill %zero : f32 -> !croq.frag<acc, 64x64xf32>
        croq.barrier warpgroup
        // expected-error @below {{is collective over a block, but the control around it is only uniform at warpgroup}}
        // expected-note @below {{hint: make the branches around it block-uniform}}
        croq.barrier block
      }
    }
  }
  return
}

// -----

// Under a per-thread condition, a warpgroup MMA is not collective.
func.func @negative_croq_mma_divergent(%s: memref<64x16xf16, #gpu.address_space<workgroup>>, %t: memref<64x16xf16, #gpu.address_space<workgroup>>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  %zero = arith.constant 0.0 : f32
  croq.parallel (%b) by [%c1] : block {
    croq.parallel (%g) by [%c1] : warpgroup {
      %acc = croq.mma.fill %zero : f32 -> !croq.frag<acc, 64x64xf32>
      %fa = croq.mma.load %s : memref<64x16xf16, #gpu.address_space<workgroup>> -> !croq.frag<a, 64x16xf16>
      %fb = croq.mma.load %t : memref<64x16xf16, #gpu.address_space<workgroup>> -> !croq.frag<b, 64x16xf16>
      %r = croq.parallel (%th) by [%c128] : thread -> (!croq.frag<acc, 64x64xf32>) {
        %first = arith.cmpi eq, %th, %c0 : index
        %v = scf.if %first -> !croq.frag<acc, 64x64xf32> {
          // expected-error @below {{is collective over a warpgroup, but the control around it is only per thread}}
          // expected-note @below {{hint: make the branches around it warpgroup-uniform}}
          %m = croq.mma row_row %acc, %fa, %fb : !croq.frag<acc, 64x64xf32>, !croq.frag<a, 64x16xf16>, !croq.frag<b, 64x16xf16> -> !croq.frag<acc, 64x64xf32>
          scf.yield %m : !croq.frag<acc, 64x64xf32>
        } else {
          scf.yield %acc : !croq.frag<acc, 64x64xf32>
        }
        croq.yield %v : !croq.frag<acc, 64x64xf32>
      }
    }
  }
  return
}

// -----

!bar = !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>

// expect_tx is issued by one thread: unguarded, every thread would add the
// bytes again.
func.func @negative_expect_tx_every_thread() {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %c128 = arith.constant 128 : index
  %bytes = arith.constant 8192 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1) {
    %bars = nvgpu.mbarrier.create -> !bar
    // expected-error @below {{is meant to be issued by one thread, but every thread of its group executes it; guard it with a single-thread condition (tid == 0 or elect.sync)}}
    nvgpu.mbarrier.arrive.expect_tx %bars[%c0], %bytes : !bar
    %tid = gpu.thread_id x
    %t0 = arith.cmpi eq, %tid, %c0 : index
    scf.if %t0 {
      nvgpu.mbarrier.arrive.expect_tx %bars[%c0], %bytes : !bar
    }
    %elected = nvvm.elect.sync -> i1
    scf.if %elected {
      nvgpu.mbarrier.arrive.expect_tx %bars[%c0], %bytes : !bar
    }
    gpu.terminator
  }
  return
}

// -----

// What a thread's own memory holds is that thread's, whatever the address:
// a loop bounded by a value loaded from an alloca (a scalar an inthreads
// region assigned, kept in its slot) runs a per-thread trip count, so a
// barrier in it is wrong.
func.func @negative_barrier_in_loop_of_private_bound() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1) {
    %slot = memref.alloca() : memref<index, #gpu.address_space<private>>
    %n = memref.load %slot[] : memref<index, #gpu.address_space<private>>
    scf.for %i = %c0 to %n step %c1 {
      // expected-error @below {{is collective over a block, but the control around it is only per thread}}
      // expected-note @below {{hint: make the branches around it block-uniform (test a block index), or move it out of them}}
      gpu.barrier
    }
    gpu.terminator
  }
  return
}
