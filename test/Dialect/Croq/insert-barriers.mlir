// RUN: croq-opt %s --split-input-file --croq-insert-barriers | FileCheck %s

// croq-insert-barriers alone: a barrier for each shared-memory hazard
// between different threads, lifted to a point the whole block reaches;
// none where every thread touches only its own element.

// CHECK-LABEL: func.func @raw_across_threads
// CHECK: memref.store
// CHECK: }
// CHECK-NEXT: croq.barrier block
// CHECK-NEXT: croq.parallel
// Threads write their elements, then every thread reads another one.
func.func @raw_across_threads(%out: memref<128xf32>) {
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  %c127 = arith.constant 127 : index
  croq.parallel (%b) by [%c1] : block {
    %s = memref.alloc() : memref<128xf32, #gpu.address_space<workgroup>>
    croq.parallel (%t) by [%c128] : thread {
      %v = arith.index_cast %t : index to i32
      %f = arith.sitofp %v : i32 to f32
      memref.store %f, %s[%t] : memref<128xf32, #gpu.address_space<workgroup>>
    }
    croq.parallel (%t) by [%c128] : thread {
      %r = arith.subi %c127, %t : index
      %x = memref.load %s[%r] : memref<128xf32, #gpu.address_space<workgroup>>
      memref.store %x, %out[%t] : memref<128xf32>
    }
  }
  return
}

// -----

// CHECK-LABEL: func.func @own_elements
// CHECK-NOT: croq.barrier
// CHECK: return
// A thread reads back only what it wrote itself: no barrier.
func.func @own_elements(%out: memref<128xf32>) {
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  %one = arith.constant 1.0 : f32
  croq.parallel (%b) by [%c1] : block {
    %s = memref.alloc() : memref<128xf32, #gpu.address_space<workgroup>>
    croq.parallel (%t) by [%c128] : thread {
      memref.store %one, %s[%t] : memref<128xf32, #gpu.address_space<workgroup>>
      %x = memref.load %s[%t] : memref<128xf32, #gpu.address_space<workgroup>>
      memref.store %x, %out[%t] : memref<128xf32>
    }
  }
  return
}

// -----

// CHECK-LABEL: func.func @loop_carried
// CHECK: scf.for
// CHECK-NEXT: croq.barrier block
// CHECK-NEXT: croq.parallel
// CHECK: memref.store
// CHECK: }
// CHECK-NEXT: croq.barrier block
// CHECK-NEXT: croq.parallel
// The next iteration's writes must wait for this iteration's reads (WAR
// across the loop's back edge) and the reads for the writes (RAW).
func.func @loop_carried(%g: memref<?x128xf32>, %out: memref<128xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  %c127 = arith.constant 127 : index
  croq.parallel (%b) by [%c1] : block {
    %s = memref.alloc() : memref<128xf32, #gpu.address_space<workgroup>>
    scf.for %k = %c0 to %n step %c1 {
      croq.parallel (%t) by [%c128] : thread {
        %x = memref.load %g[%k, %t] : memref<?x128xf32>
        memref.store %x, %s[%t] : memref<128xf32, #gpu.address_space<workgroup>>
      }
      croq.parallel (%t) by [%c128] : thread {
        %r = arith.subi %c127, %t : index
        %x = memref.load %s[%r] : memref<128xf32, #gpu.address_space<workgroup>>
        memref.store %x, %out[%t] : memref<128xf32>
      }
    }
  }
  return
}

// -----

// A: index t+j in a loop: thread 1 at j=0 and thread 0 at j=1 touch s[1]
// CHECK-LABEL: func.func @shifted_loop
// CHECK: scf.for
// CHECK: croq.barrier block
func.func @shifted_loop(%out: memref<256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c128 = arith.constant 128 : index
  %one = arith.constant 1.0 : f32
  croq.parallel (%b) by [%c1] : block {
    %s = memref.alloc() : memref<256xf32, #gpu.address_space<workgroup>>
    croq.parallel (%t) by [%c128] : thread {
      scf.for %j = %c0 to %c4 step %c1 {
        %i = arith.addi %t, %j : index
        %x = memref.load %s[%i] : memref<256xf32, #gpu.address_space<workgroup>>
        %y = arith.addf %x, %one : f32
        memref.store %y, %s[%i] : memref<256xf32, #gpu.address_space<workgroup>>
      }
    }
  }
  return
}

// -----

// B: same indices, different views: thread t writes s[t+1], thread t+1 reads s[t+1]
// CHECK-LABEL: func.func @offset_view
// CHECK: croq.barrier block
func.func @offset_view(%out: memref<128xf32>) {
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  %one = arith.constant 1.0 : f32
  croq.parallel (%b) by [%c1] : block {
    %s = memref.alloc() : memref<256xf32, #gpu.address_space<workgroup>>
    %v = memref.subview %s[1] [128] [1] : memref<256xf32, #gpu.address_space<workgroup>> to memref<128xf32, strided<[1], offset: 1>, #gpu.address_space<workgroup>>
    croq.parallel (%t) by [%c128] : thread {
      memref.store %one, %v[%t] : memref<128xf32, strided<[1], offset: 1>, #gpu.address_space<workgroup>>
      %x = memref.load %s[%t] : memref<256xf32, #gpu.address_space<workgroup>>
      memref.store %x, %out[%t] : memref<128xf32>
    }
  }
  return
}

// -----

// C: non-injective thread index t/2
// CHECK-LABEL: func.func @halved
// CHECK: croq.barrier block
func.func @halved(%out: memref<128xf32>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c128 = arith.constant 128 : index
  croq.parallel (%b) by [%c1] : block {
    %s = memref.alloc() : memref<64xf32, #gpu.address_space<workgroup>>
    croq.parallel (%t) by [%c128] : thread {
      %h = arith.divui %t, %c2 : index
      %r = arith.remui %t, %c2 : index
      %ri = arith.index_cast %r : index to i32
      %f = arith.sitofp %ri : i32 to f32
      %z = arith.constant 0 : index
      %c = arith.cmpi eq, %r, %z : index
      scf.if %c {
        memref.store %f, %s[%h] : memref<64xf32, #gpu.address_space<workgroup>>
      }
      %x = memref.load %s[%h] : memref<64xf32, #gpu.address_space<workgroup>>
      memref.store %x, %out[%t] : memref<128xf32>
    }
  }
  return
}

// -----

// D: a per-thread copy then a read of s[0]
// CHECK-LABEL: func.func @copy_then_element
// CHECK: croq.barrier block
func.func @copy_then_element(%g: memref<128x4xf32>, %out: memref<128xf32>) {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %c128 = arith.constant 128 : index
  croq.parallel (%b) by [%c1] : block {
    %s = memref.alloc() : memref<128x4xf32, #gpu.address_space<workgroup>>
    croq.parallel (%t) by [%c128] : thread {
      %src = memref.subview %g[%t, 0] [1, 4] [1, 1] : memref<128x4xf32> to memref<1x4xf32, strided<[4, 1], offset: ?>>
      %dst = memref.subview %s[%t, 0] [1, 4] [1, 1] : memref<128x4xf32, #gpu.address_space<workgroup>> to memref<1x4xf32, strided<[4, 1], offset: ?>, #gpu.address_space<workgroup>>
      croq.dma.copy %src to %dst : memref<1x4xf32, strided<[4, 1], offset: ?>> to memref<1x4xf32, strided<[4, 1], offset: ?>, #gpu.address_space<workgroup>>
      %x = memref.load %s[%c0, %c0] : memref<128x4xf32, #gpu.address_space<workgroup>>
      memref.store %x, %out[%t] : memref<128xf32>
    }
  }
  return
}

// -----

// E: one thread's row, two columns, under a thread-dependent if: valid, own elements
// CHECK-LABEL: func.func @own_row
// CHECK-NOT: croq.barrier
// CHECK: return
func.func @own_row(%out: memref<128xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %one = arith.constant 1.0 : f32
  croq.parallel (%b) by [%c1] : block {
    %s = memref.alloc() : memref<128x2xf32, #gpu.address_space<workgroup>>
    croq.parallel (%t) by [%c128] : thread {
      %c = arith.cmpi ult, %t, %c64 : index
      scf.if %c {
        memref.store %one, %s[%t, %c0] : memref<128x2xf32, #gpu.address_space<workgroup>>
        %x = memref.load %s[%t, %c1] : memref<128x2xf32, #gpu.address_space<workgroup>>
        memref.store %x, %out[%t] : memref<128xf32>
      }
    }
  }
  return
}

// -----

// Two device calls of one thread body on one shared buffer: what a C++
// function touches is unknown, so the second (which may read what another
// thread's first wrote) waits behind a barrier, unlike two per-thread
// copies.
// CHECK-LABEL: func.func @device_calls
// CHECK: croq.call "put"
// CHECK-NEXT: croq.barrier block
// CHECK-NEXT: croq.call "get"
func.func @device_calls(%out: memref<128xf32>) {
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  croq.parallel (%b) by [%c1] : block {
    %s = memref.alloc() : memref<128xf32, #gpu.address_space<workgroup>>
    croq.parallel (%t) by [%c128] : thread {
      %i = arith.index_cast %t : index to i32
      croq.call "put"(%s, %i) : (memref<128xf32, #gpu.address_space<workgroup>>, i32) -> ()
      %v = croq.call "get"(%s, %i) : (memref<128xf32, #gpu.address_space<workgroup>>, i32) -> f32
      memref.store %v, %out[%t] : memref<128xf32>
    }
  }
  return
}

// -----

// Halves no two threads share: for t < 128, thread t writes s[i, t] and
// s[i, t + 128] of each row i, columns [0, 128) and [128, 256), so the two
// stores never meet (upstream's memreuse.co). Reading s[i, t + 64] does
// meet thread t + 64's write: that needs a barrier.
// CHECK-LABEL: func.func @disjoint_halves
// CHECK-NOT: croq.barrier
// CHECK-LABEL: func.func @overlapping_halves
// CHECK: croq.barrier block
func.func @disjoint_halves(%rows: index, %v: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  croq.parallel (%b) by [%c1] : block {
    %s = memref.alloc(%rows) : memref<?x256xf32, #gpu.address_space<workgroup>>
    croq.parallel (%t) by [%c128] : thread {
      scf.for %i = %c0 to %rows step %c1 {
        %u = arith.addi %t, %c128 : index
        memref.store %v, %s[%i, %t] : memref<?x256xf32, #gpu.address_space<workgroup>>
        memref.store %v, %s[%i, %u] : memref<?x256xf32, #gpu.address_space<workgroup>>
      }
    }
  }
  return
}

func.func @overlapping_halves(%rows: index, %v: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  croq.parallel (%b) by [%c1] : block {
    %s = memref.alloc(%rows) : memref<?x256xf32, #gpu.address_space<workgroup>>
    croq.parallel (%t) by [%c128] : thread {
      scf.for %i = %c0 to %rows step %c1 {
        %u = arith.addi %t, %c64 : index
        memref.store %v, %s[%i, %t] : memref<?x256xf32, #gpu.address_space<workgroup>>
        %x = memref.load %s[%i, %u] : memref<?x256xf32, #gpu.address_space<workgroup>>
        memref.store %x, %s[%i, %t] : memref<?x256xf32, #gpu.address_space<workgroup>>
      }
    }
  }
  return
}

// -----

// A base that differs between the threads' warps (w * 32) or between
// iterations of a loop around the thread parallel (r * 64) is not shared:
// warp w reads what warp w + 1 writes, and iteration r + 1 what iteration r
// wrote, so both need a barrier.
// CHECK-LABEL: func.func @warp_base
// CHECK: croq.barrier block
// CHECK-LABEL: func.func @loop_base
// CHECK: croq.barrier block
func.func @warp_base(%v: f32, %out: memref<256xf32>) {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c32 = arith.constant 32 : index
  croq.parallel (%b) by [%c1] : block {
    %s = memref.alloc() : memref<256xf32, #gpu.address_space<workgroup>>
    croq.parallel (%w) by [%c4] : warp {
      croq.parallel (%t) by [%c32] : thread {
        %base = arith.muli %w, %c32 : index
        %i = arith.addi %t, %base : index
        %j0 = arith.addi %t, %c32 : index
        %j = arith.addi %j0, %base : index
        memref.store %v, %s[%i] : memref<256xf32, #gpu.address_space<workgroup>>
        %x = memref.load %s[%j] : memref<256xf32, #gpu.address_space<workgroup>>
        memref.store %x, %out[%i] : memref<256xf32>
      }
    }
  }
  return
}

func.func @loop_base(%v: f32, %n: index, %out: memref<128xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  croq.parallel (%b) by [%c1] : block {
    %s = memref.alloc() : memref<1024xf32, #gpu.address_space<workgroup>>
    scf.for %r = %c0 to %n step %c1 {
      croq.parallel (%t) by [%c128] : thread {
        %base = arith.muli %r, %c64 : index
        %i0 = arith.addi %t, %c128 : index
        %i = arith.addi %i0, %base : index
        %j = arith.addi %t, %base : index
        memref.store %v, %s[%i] : memref<1024xf32, #gpu.address_space<workgroup>>
        %x = memref.load %s[%j] : memref<1024xf32, #gpu.address_space<workgroup>>
        memref.store %x, %out[%t] : memref<128xf32>
      }
    }
  }
  return
}

// -----

// A strided loop `j * 128 + t` of any trip count under a bounds check:
// element j * 128 + t belongs to thread t alone (128 threads), so the
// loop's writes and reads of the buffer meet only the same thread's: no
// barrier. With a stride smaller than the thread count, the next iteration
// of another thread writes what this one read: a barrier.
// CHECK-LABEL: func.func @strided_loop
// CHECK-NOT: croq.barrier
// CHECK-LABEL: func.func @strided_loop_overlapping
// CHECK: scf.for
// CHECK: croq.barrier
func.func @strided_loop(%n: index, %iters: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  croq.parallel (%b) by [%c1] : block {
    %s = memref.alloc(%n) : memref<?xf32, #gpu.address_space<workgroup>>
    croq.parallel (%t) by [%c128] : thread {
      scf.for %j = %c0 to %iters step %c1 {
        %j128 = arith.muli %j, %c128 : index
        %col = arith.addi %t, %j128 : index
        %in = arith.cmpi ult, %col, %n : index
        scf.if %in {
          %v = memref.load %s[%col] : memref<?xf32, #gpu.address_space<workgroup>>
          %w = arith.addf %v, %v : f32
          memref.store %w, %s[%col] : memref<?xf32, #gpu.address_space<workgroup>>
        }
      }
    }
  }
  return
}

func.func @strided_loop_overlapping(%n: index, %iters: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  croq.parallel (%b) by [%c1] : block {
    %s = memref.alloc(%n) : memref<?xf32, #gpu.address_space<workgroup>>
    croq.parallel (%t) by [%c128] : thread {
      scf.for %j = %c0 to %iters step %c1 {
        %j64 = arith.muli %j, %c64 : index
        %col = arith.addi %t, %j64 : index
        %v = memref.load %s[%col] : memref<?xf32, #gpu.address_space<workgroup>>
        %w = arith.addf %v, %v : f32
        memref.store %w, %s[%col] : memref<?xf32, #gpu.address_space<workgroup>>
      }
    }
  }
  return
}

// -----

// A thread is its warpgroup index and its thread index: `s[t]` is the
// element of thread (0, t) and of thread (1, t). Warpgroup 0 writes it,
// both warpgroups read it: a barrier between.
// CHECK-LABEL: func.func @element_of_two_warpgroups
// CHECK: memref.store
// CHECK: croq.barrier
// CHECK: memref.load
func.func @element_of_two_warpgroups(%out: memref<2x128xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c128 = arith.constant 128 : index
  %one = arith.constant 1.0 : f32
  croq.parallel (%b) by [%c1] : block {
    %s = memref.alloc() : memref<128xf32, #gpu.address_space<workgroup>>
    croq.parallel (%w) by [%c2] : warpgroup {
      croq.parallel (%t) by [%c128] : thread {
        %first = arith.cmpi eq, %w, %c0 : index
        scf.if %first {
          memref.store %one, %s[%t] : memref<128xf32, #gpu.address_space<workgroup>>
        }
        %x = memref.load %s[%t] : memref<128xf32, #gpu.address_space<workgroup>>
        memref.store %x, %out[%w, %t] : memref<2x128xf32>
      }
    }
  }
  return
}

// -----

// With the warpgroup index in the element (`s[w][t]`), each element is one
// thread's: no barrier.
// CHECK-LABEL: func.func @element_of_one_warpgroup
// CHECK-NOT: croq.barrier
// CHECK: return
func.func @element_of_one_warpgroup(%out: memref<2x128xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c128 = arith.constant 128 : index
  %one = arith.constant 1.0 : f32
  croq.parallel (%b) by [%c1] : block {
    %s = memref.alloc() : memref<2x128xf32, #gpu.address_space<workgroup>>
    croq.parallel (%w) by [%c2] : warpgroup {
      croq.parallel (%t) by [%c128] : thread {
        memref.store %one, %s[%w, %t] : memref<2x128xf32, #gpu.address_space<workgroup>>
        %x = memref.load %s[%w, %t] : memref<2x128xf32, #gpu.address_space<workgroup>>
        memref.store %x, %out[%w, %t] : memref<2x128xf32>
      }
    }
  }
  return
}

// -----

// A thread parallel of two indices: `s[tx]` is the element of the four
// threads (tx, 0..3).
// CHECK-LABEL: func.func @element_of_four_threads
// CHECK: memref.store
// CHECK: croq.barrier
// CHECK: memref.load
func.func @element_of_four_threads(%out: memref<4x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c32 = arith.constant 32 : index
  %one = arith.constant 1.0 : f32
  croq.parallel (%b) by [%c1] : block {
    %s = memref.alloc() : memref<32xf32, #gpu.address_space<workgroup>>
    croq.parallel (%ty, %tx) by [%c4, %c32] : thread {
      %first = arith.cmpi eq, %ty, %c0 : index
      scf.if %first {
        memref.store %one, %s[%tx] : memref<32xf32, #gpu.address_space<workgroup>>
      }
      %x = memref.load %s[%tx] : memref<32xf32, #gpu.address_space<workgroup>>
      memref.store %x, %out[%ty, %tx] : memref<4x32xf32>
    }
  }
  return
}

// -----

// Inside `inthreads (w == 1)` the warpgroup index is one value: `s[t]` is
// then one thread's element, and the read after the write needs no
// barrier. Written by warpgroup 0 and read by warpgroup 1, it does.
// CHECK-LABEL: func.func @warpgroup_fixed_by_inthreads
// CHECK: croq.inthreads
// CHECK-NOT: croq.barrier
// CHECK: memref.load
// CHECK: croq.inthreads
// CHECK: memref.store
// CHECK: croq.barrier
// CHECK: memref.load
func.func @warpgroup_fixed_by_inthreads(%out: memref<128xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c128 = arith.constant 128 : index
  %one = arith.constant 1.0 : f32
  croq.parallel (%b) by [%c1] : block {
    %s = memref.alloc() : memref<128xf32, #gpu.address_space<workgroup>>
    %u = memref.alloc() : memref<128xf32, #gpu.address_space<workgroup>>
    croq.parallel (%w) by [%c2] : warpgroup {
      croq.parallel (%t) by [%c128] : thread {
        %second = arith.cmpi eq, %w, %c1 : index
        croq.inthreads (%second) {
          memref.store %one, %s[%t] : memref<128xf32, #gpu.address_space<workgroup>>
          %x = memref.load %s[%t] : memref<128xf32, #gpu.address_space<workgroup>>
          memref.store %x, %out[%t] : memref<128xf32>
        }
        %first = arith.cmpi eq, %w, %c0 : index
        croq.inthreads (%first) {
          memref.store %one, %u[%t] : memref<128xf32, #gpu.address_space<workgroup>>
        }
        croq.inthreads (%second) {
          %y = memref.load %u[%t] : memref<128xf32, #gpu.address_space<workgroup>>
          memref.store %y, %out[%t] : memref<128xf32>
        }
      }
    }
  }
  return
}

// -----

// CHECK-LABEL: func.func @after_tma_store_wait
// CHECK: croq.tma.copy async
// CHECK: croq.wait %{{.*}} {croq.tma_stores}
// CHECK-NOT: croq.barrier
// CHECK: croq.parallel
// A wait on TMA stores ends in its group's barrier (croq-bind-tma-futures
// marks it): the threads' writes after it need no barrier of their own
// against the store's read of the tile before it.
func.func @after_tma_store_wait(%g: memref<128xf32>) {
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  croq.parallel (%b) by [%c1] : block {
    %s = memref.alloc() : memref<128xf32, #gpu.address_space<workgroup>>
    %f = croq.tma.copy async %s to %g : memref<128xf32, #gpu.address_space<workgroup>> to memref<128xf32> -> !croq.future<tma, async, memref<128xf32, #gpu.address_space<workgroup>>>
    croq.wait %f {croq.tma_stores} : !croq.future<tma, async, memref<128xf32, #gpu.address_space<workgroup>>>
    croq.parallel (%t) by [%c128] : thread {
      %v = arith.index_cast %t : index to i32
      %x = arith.sitofp %v : i32 to f32
      memref.store %x, %s[%t] : memref<128xf32, #gpu.address_space<workgroup>>
    }
  }
  return
}

// -----

// Two terms the same in every thread, a counter of any trip count and an
// in-thread one (`j * 256 + h * 128 + t`): their sum is a multiple of 128,
// so element e is thread e % 128's alone: no barrier. With 64 and 128 the
// gcd is 64, less than the thread count: a barrier.
// CHECK-LABEL: func.func @two_loop_terms
// CHECK-NOT: croq.barrier
// CHECK-LABEL: func.func @two_loop_terms_overlapping
// CHECK: croq.barrier
func.func @two_loop_terms(%n: index, %iters: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  croq.parallel (%b) by [%c1] : block {
    %s = memref.alloc(%n) : memref<?xf32, #gpu.address_space<workgroup>>
    croq.parallel (%t) by [%c128] : thread {
      scf.for %j = %c0 to %iters step %c1 {
        scf.for %h = %c0 to %c2 step %c1 {
          %j256 = arith.muli %j, %c256 : index
          %h128 = arith.muli %h, %c128 : index
          %u = arith.addi %j256, %h128 : index
          %col = arith.addi %t, %u : index
          %v = memref.load %s[%col] : memref<?xf32, #gpu.address_space<workgroup>>
          %w = arith.addf %v, %v : f32
          memref.store %w, %s[%col] : memref<?xf32, #gpu.address_space<workgroup>>
        }
      }
    }
  }
  return
}

func.func @two_loop_terms_overlapping(%n: index, %iters: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  croq.parallel (%b) by [%c1] : block {
    %s = memref.alloc(%n) : memref<?xf32, #gpu.address_space<workgroup>>
    croq.parallel (%t) by [%c128] : thread {
      scf.for %j = %c0 to %iters step %c1 {
        scf.for %h = %c0 to %c2 step %c1 {
          %j128 = arith.muli %j, %c128 : index
          %h64 = arith.muli %h, %c64 : index
          %u = arith.addi %j128, %h64 : index
          %col = arith.addi %t, %u : index
          %v = memref.load %s[%col] : memref<?xf32, #gpu.address_space<workgroup>>
          %w = arith.addf %v, %v : f32
          memref.store %w, %s[%col] : memref<?xf32, #gpu.address_space<workgroup>>
        }
      }
    }
  }
  return
}

// -----

// A wait orders what the other threads did before their triggers, not
// what they do after them: the threads trigger, write, then wait for the
// event's generation, which every trigger completes, so another thread's
// write may still be in flight when the wait returns.
// CHECK-LABEL: func.func @write_after_own_trigger
// CHECK: croq.event.trigger
// CHECK: memref.store
// CHECK: croq.event.wait
// CHECK: croq.barrier block
// CHECK-NEXT: memref.load
func.func @write_after_own_trigger(%out: memref<128xf32>) {
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  %c127 = arith.constant 127 : index
  %one = arith.constant 1.0 : f32
  %false = arith.constant false
  croq.parallel (%b) by [%c1] : block {
    %s = memref.alloc() : memref<128xf32, #gpu.address_space<workgroup>>
    %e = croq.event.alloc : !croq.event<shared>
    croq.parallel (%t) by [%c128] : thread {
      croq.event.trigger %e : !croq.event<shared>
      memref.store %one, %s[%t] : memref<128xf32, #gpu.address_space<workgroup>>
      croq.event.wait %e parity %false : !croq.event<shared>
      %r = arith.subi %c127, %t : index
      %x = memref.load %s[%r] : memref<128xf32, #gpu.address_space<workgroup>>
      memref.store %x, %out[%t] : memref<128xf32>
    }
  }
  return
}

// -----

// The same with the write before the trigger: the wait orders it.
// CHECK-LABEL: func.func @write_before_own_trigger
// CHECK-NOT: croq.barrier
// CHECK: return
func.func @write_before_own_trigger(%out: memref<128xf32>) {
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  %c127 = arith.constant 127 : index
  %one = arith.constant 1.0 : f32
  %false = arith.constant false
  croq.parallel (%b) by [%c1] : block {
    %s = memref.alloc() : memref<128xf32, #gpu.address_space<workgroup>>
    %e = croq.event.alloc : !croq.event<shared>
    croq.parallel (%t) by [%c128] : thread {
      memref.store %one, %s[%t] : memref<128xf32, #gpu.address_space<workgroup>>
      croq.event.trigger %e : !croq.event<shared>
      croq.event.wait %e parity %false : !croq.event<shared>
      %r = arith.subi %c127, %t : index
      %x = memref.load %s[%r] : memref<128xf32, #gpu.address_space<workgroup>>
      memref.store %x, %out[%t] : memref<128xf32>
    }
  }
  return
}

// -----

// A consumer's wait on `full`, which only the producer triggers, does not
// order the consumer's own threads: the write of `part` in one iteration
// must wait for the other threads' reads of the iteration before, so a
// barrier of the role goes before it (outsider r10_25).
// CHECK-LABEL: func.func @wait_on_event_others_trigger
// CHECK: croq.inthreads async
// CHECK: croq.inthreads async
// CHECK: scf.for
// CHECK: croq.event.wait
// CHECK-NEXT: croq.barrier warpgroup
// CHECK-NEXT: memref.store
func.func @wait_on_event_others_trigger(%n: index, %out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c16 = arith.constant 16 : index
  %c128 = arith.constant 128 : index
  %one = arith.constant 1.0 : f32
  croq.parallel (%b) by [%c1] : block {
    %part = memref.alloc() : memref<128xf32, #gpu.address_space<workgroup>>
    %full = croq.event.alloc : !croq.event<shared>
    croq.parallel (%p, %t) by [%c2, %c128] : warpgroup {
      %producer = arith.cmpi eq, %p, %c0 : index
      croq.inthreads async (%producer) {
        scf.for %k = %c0 to %n step %c1 {
          croq.event.trigger %full : !croq.event<shared>
        }
      }
      %consumer = arith.cmpi eq, %p, %c1 : index
      croq.inthreads async (%consumer) {
        scf.for %k = %c0 to %n step %c1 {
          croq.event.wait %full : !croq.event<shared>
          memref.store %one, %part[%t] : memref<128xf32, #gpu.address_space<workgroup>>
          %r = arith.remui %k, %c16 : index
          %x = memref.load %part[%r] : memref<128xf32, #gpu.address_space<workgroup>>
          memref.store %x, %out[%t] : memref<?xf32>
        }
      }
    }
  }
  return
}

// -----

// Stores of the block's own code (a `dma.pad` border) are one thread's, in
// its program order: no barrier between them, and each is marked so that
// croq-elect-issuers elects that thread by its id. The load after them, by
// every thread, still waits for them.
// CHECK-LABEL: func.func @block_stores
// CHECK: scf.for
// CHECK-NOT: croq.barrier
// CHECK: memref.store {{.*}} {croq.same_issuer}
// CHECK: croq.barrier block
// CHECK: memref.load
func.func @block_stores(%out: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  croq.parallel (%b) by [%c1] : block {
    %s = memref.alloc() : memref<64xf32, #gpu.address_space<workgroup>>
    scf.for %i = %c0 to %c64 step %c1 {
      memref.store %zero, %s[%i] : memref<64xf32, #gpu.address_space<workgroup>>
    }
    croq.parallel (%t) by [%c64] : thread {
      %r = arith.subi %c64, %c1 : index
      %x = memref.load %s[%r] : memref<64xf32, #gpu.address_space<workgroup>>
      memref.store %x, %out[%t] : memref<64xf32>
    }
  }
  return
}
