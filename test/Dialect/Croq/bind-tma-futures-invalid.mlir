// RUN: croq-opt --croq-bind-tma-futures --split-input-file --verify-diagnostics %s

// A copy bound to an event of the program's own, and waited as a future.
func.func @bound_and_waited(%src: memref<?x64xf32>) {
  %c1 = arith.constant 1 : index
  croq.parallel (%b) by [%c1] : block {
    %c0 = arith.constant 0 : index
    %e = croq.event.alloc : !croq.event<shared>
    %tile = croq.subspan %src[16, 32] at [%b, %c0] : memref<?x64xf32> -> memref<16x32xf32, strided<[64, 1], offset: ?>>
    %buf = memref.alloc() : memref<16x32xf32, #gpu.address_space<workgroup>>
    %f = croq.tma.copy async %tile to %buf : memref<16x32xf32, strided<[64, 1], offset: ?>> to memref<16x32xf32, #gpu.address_space<workgroup>> -> !croq.future<tma, async, memref<16x32xf32, #gpu.address_space<workgroup>>>
    // expected-note @below {{the copy is bound here}}
    croq.event.trigger %e after %f : !croq.event<shared>, !croq.future<tma, async, memref<16x32xf32, #gpu.address_space<workgroup>>>
    // expected-error @below {{waits on a TMA future that is also bound to an event}}
    // expected-note @below {{hint: wait on the event}}
    croq.wait %f : !croq.future<tma, async, memref<16x32xf32, #gpu.address_space<workgroup>>>
  }
  return
}

// -----

// A future whose copy the function cannot see.
// expected-note @below {{the future comes from here}}
func.func @from_argument(%f: !croq.future<tma, async, memref<16x32xf32, #gpu.address_space<workgroup>>>) {
  %c1 = arith.constant 1 : index
  croq.parallel (%b) by [%c1] : block {
    // expected-error @below {{waits on a TMA future whose copy this function cannot see}}
    // expected-note @below {{hint: wait where the tma.copy.async is}}
    croq.wait %f : !croq.future<tma, async, memref<16x32xf32, #gpu.address_space<workgroup>>>
  }
  return
}

// -----

// A copy that only thread 0 issues, waited by every thread: the others
// would count no copy and not wait.
func.func @copy_under_thread_branch(%src: memref<?x64xf32>) {
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  croq.parallel (%b) by [%c1] : block {
    %c0 = arith.constant 0 : index
    %tile = croq.subspan %src[16, 32] at [%b, %c0] : memref<?x64xf32> -> memref<16x32xf32, strided<[64, 1], offset: ?>>
    %buf = memref.alloc() : memref<16x32xf32, #gpu.address_space<workgroup>>
    croq.parallel (%t) by [%c128] : thread {
      %first = arith.cmpi eq, %t, %c0 : index
      %any = croq.dma.any %buf : memref<16x32xf32, #gpu.address_space<workgroup>> -> !croq.future<tma, async, memref<16x32xf32, #gpu.address_space<workgroup>>>
      // expected-note @below {{only some threads of the block run this branch}}
      %f = scf.if %first -> (!croq.future<tma, async, memref<16x32xf32, #gpu.address_space<workgroup>>>) {
        // expected-note @below {{the future is made here}}
        %g = croq.tma.copy async %tile to %buf : memref<16x32xf32, strided<[64, 1], offset: ?>> to memref<16x32xf32, #gpu.address_space<workgroup>> -> !croq.future<tma, async, memref<16x32xf32, #gpu.address_space<workgroup>>>
        scf.yield %g : !croq.future<tma, async, memref<16x32xf32, #gpu.address_space<workgroup>>>
      } else {
        scf.yield %any : !croq.future<tma, async, memref<16x32xf32, #gpu.address_space<workgroup>>>
      }
      // expected-error @below {{waits on a TMA future that some of the waiting threads did not make}}
      // expected-note @below {{hint: make the future where every thread that waits on it runs}}
      croq.wait %f : !croq.future<tma, async, memref<16x32xf32, #gpu.address_space<workgroup>>>
    }
  }
  return
}

// -----

// -----

// A future that leaves an inthreads region, made under a branch inside it:
// the threads outside the region cannot tell whether to count the copy.
func.func @carried_copy_under_branch(%src: memref<?x64xf32>, %c: i1) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  croq.parallel (%b) by [%c1] : block {
    %c0 = arith.constant 0 : index
    %tile = croq.subspan %src[16, 32] at [%b, %c0] : memref<?x64xf32> -> memref<16x32xf32, strided<[64, 1], offset: ?>>
    %buf = memref.alloc() : memref<16x32xf32, #gpu.address_space<workgroup>>
    %other = memref.alloc() : memref<16x32xf32, #gpu.address_space<workgroup>>
    croq.parallel (%g) by [%c2] : warpgroup {
      %any = croq.dma.any %buf : memref<16x32xf32, #gpu.address_space<workgroup>> -> !croq.future<tma, async, memref<16x32xf32, #gpu.address_space<workgroup>>>
      %any2 = croq.dma.any %other : memref<16x32xf32, #gpu.address_space<workgroup>> -> !croq.future<tma, async, memref<16x32xf32, #gpu.address_space<workgroup>>>
      %first = arith.cmpi eq, %g, %c0 : index
      // expected-error @below {{yields a TMA future that is not a copy made directly in its body}}
      // expected-note @below {{hint: make the copy directly in the region's body}}
      %f = croq.inthreads (%first) else(%any : !croq.future<tma, async, memref<16x32xf32, #gpu.address_space<workgroup>>>) -> !croq.future<tma, async, memref<16x32xf32, #gpu.address_space<workgroup>>> {
        %d = croq.future.data %any : !croq.future<tma, async, memref<16x32xf32, #gpu.address_space<workgroup>>> -> memref<16x32xf32, #gpu.address_space<workgroup>>
        // expected-note @below {{the future comes from here}}
        %h = scf.if %c -> (!croq.future<tma, async, memref<16x32xf32, #gpu.address_space<workgroup>>>) {
          %k = croq.tma.copy async %tile to %d : memref<16x32xf32, strided<[64, 1], offset: ?>> to memref<16x32xf32, #gpu.address_space<workgroup>> -> !croq.future<tma, async, memref<16x32xf32, #gpu.address_space<workgroup>>>
          scf.yield %k : !croq.future<tma, async, memref<16x32xf32, #gpu.address_space<workgroup>>>
        } else {
          scf.yield %any : !croq.future<tma, async, memref<16x32xf32, #gpu.address_space<workgroup>>>
        }
        croq.yield %h : !croq.future<tma, async, memref<16x32xf32, #gpu.address_space<workgroup>>>
      }
      %second = arith.cmpi eq, %g, %c1 : index
      croq.inthreads (%second) {
        croq.wait %f : !croq.future<tma, async, memref<16x32xf32, #gpu.address_space<workgroup>>>
      }
    }
  }
  return
}

// -----

// The region copies into another buffer than the one its else value
// names: the threads outside it would read the wrong buffer.
func.func @carried_into_other_buffer(%src: memref<?x64xf32>, %c: i1) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  croq.parallel (%b) by [%c1] : block {
    %c0 = arith.constant 0 : index
    %tile = croq.subspan %src[16, 32] at [%b, %c0] : memref<?x64xf32> -> memref<16x32xf32, strided<[64, 1], offset: ?>>
    %buf = memref.alloc() : memref<16x32xf32, #gpu.address_space<workgroup>>
    %other = memref.alloc() : memref<16x32xf32, #gpu.address_space<workgroup>>
    croq.parallel (%g) by [%c2] : warpgroup {
      %any = croq.dma.any %buf : memref<16x32xf32, #gpu.address_space<workgroup>> -> !croq.future<tma, async, memref<16x32xf32, #gpu.address_space<workgroup>>>
      %any2 = croq.dma.any %other : memref<16x32xf32, #gpu.address_space<workgroup>> -> !croq.future<tma, async, memref<16x32xf32, #gpu.address_space<workgroup>>>
      %first = arith.cmpi eq, %g, %c0 : index
      // expected-note @below {{the region is here}}
      %f = croq.inthreads (%first) else(%any : !croq.future<tma, async, memref<16x32xf32, #gpu.address_space<workgroup>>>) -> !croq.future<tma, async, memref<16x32xf32, #gpu.address_space<workgroup>>> {
        // expected-error @below {{makes the TMA future an inthreads region yields, but not in the buffer of the future it replaces}}
        // expected-note @below {{hint: copy into the future's own buffer}}
        %k = croq.tma.copy async %tile to %other : memref<16x32xf32, strided<[64, 1], offset: ?>> to memref<16x32xf32, #gpu.address_space<workgroup>> -> !croq.future<tma, async, memref<16x32xf32, #gpu.address_space<workgroup>>>
        croq.yield %k : !croq.future<tma, async, memref<16x32xf32, #gpu.address_space<workgroup>>>
      }
      %second = arith.cmpi eq, %g, %c1 : index
      croq.inthreads (%second) {
        croq.wait %f : !croq.future<tma, async, memref<16x32xf32, #gpu.address_space<workgroup>>>
      }
    }
  }
  return
}

// -----

// Two copies into the buffer whose future the region yields: the threads
// outside it would count one, the region's threads two.
func.func @carried_two_copies(%src: memref<?x64xf32>, %c: i1) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  croq.parallel (%b) by [%c1] : block {
    %c0 = arith.constant 0 : index
    %tile = croq.subspan %src[16, 32] at [%b, %c0] : memref<?x64xf32> -> memref<16x32xf32, strided<[64, 1], offset: ?>>
    %buf = memref.alloc() : memref<16x32xf32, #gpu.address_space<workgroup>>
    %other = memref.alloc() : memref<16x32xf32, #gpu.address_space<workgroup>>
    croq.parallel (%g) by [%c2] : warpgroup {
      %any = croq.dma.any %buf : memref<16x32xf32, #gpu.address_space<workgroup>> -> !croq.future<tma, async, memref<16x32xf32, #gpu.address_space<workgroup>>>
      %any2 = croq.dma.any %other : memref<16x32xf32, #gpu.address_space<workgroup>> -> !croq.future<tma, async, memref<16x32xf32, #gpu.address_space<workgroup>>>
      %first = arith.cmpi eq, %g, %c0 : index
      // expected-note @below {{the region is here}}
      %f = croq.inthreads (%first) else(%any : !croq.future<tma, async, memref<16x32xf32, #gpu.address_space<workgroup>>>) -> !croq.future<tma, async, memref<16x32xf32, #gpu.address_space<workgroup>>> {
        %d = croq.future.data %any : !croq.future<tma, async, memref<16x32xf32, #gpu.address_space<workgroup>>> -> memref<16x32xf32, #gpu.address_space<workgroup>>
        // expected-error @below {{copies into a buffer whose TMA future the inthreads region around it yields, but is not the copy it yields}}
        // expected-note @below {{hint: make one copy into the buffer in the region}}
        %k0 = croq.tma.copy async %tile to %d : memref<16x32xf32, strided<[64, 1], offset: ?>> to memref<16x32xf32, #gpu.address_space<workgroup>> -> !croq.future<tma, async, memref<16x32xf32, #gpu.address_space<workgroup>>>
        croq.wait %k0 : !croq.future<tma, async, memref<16x32xf32, #gpu.address_space<workgroup>>>
        %k = croq.tma.copy async %tile to %d : memref<16x32xf32, strided<[64, 1], offset: ?>> to memref<16x32xf32, #gpu.address_space<workgroup>> -> !croq.future<tma, async, memref<16x32xf32, #gpu.address_space<workgroup>>>
        croq.yield %k : !croq.future<tma, async, memref<16x32xf32, #gpu.address_space<workgroup>>>
      }
      %second = arith.cmpi eq, %g, %c1 : index
      croq.inthreads (%second) {
        croq.wait %f : !croq.future<tma, async, memref<16x32xf32, #gpu.address_space<workgroup>>>
      }
    }
  }
  return
}

// -----

// A swap inside the region: the region's threads and the others would
// name different buffers from then on.
func.func @carried_through_swap(%src: memref<?x64xf32>, %c: i1) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  croq.parallel (%b) by [%c1] : block {
    %c0 = arith.constant 0 : index
    %tile = croq.subspan %src[16, 32] at [%b, %c0] : memref<?x64xf32> -> memref<16x32xf32, strided<[64, 1], offset: ?>>
    %buf = memref.alloc() : memref<16x32xf32, #gpu.address_space<workgroup>>
    %other = memref.alloc() : memref<16x32xf32, #gpu.address_space<workgroup>>
    croq.parallel (%g) by [%c2] : warpgroup {
      %any = croq.dma.any %buf : memref<16x32xf32, #gpu.address_space<workgroup>> -> !croq.future<tma, async, memref<16x32xf32, #gpu.address_space<workgroup>>>
      %any2 = croq.dma.any %other : memref<16x32xf32, #gpu.address_space<workgroup>> -> !croq.future<tma, async, memref<16x32xf32, #gpu.address_space<workgroup>>>
      %first = arith.cmpi eq, %g, %c0 : index
      // expected-error @below {{yields a TMA future that is not a copy made directly in its body}}
      // expected-note @below {{swap, rotate or select futures outside the region}}
      %f = croq.inthreads (%first) else(%any : !croq.future<tma, async, memref<16x32xf32, #gpu.address_space<workgroup>>>) -> !croq.future<tma, async, memref<16x32xf32, #gpu.address_space<workgroup>>> {
        // expected-note @below {{the future comes from here}}
        %s:2 = croq.swap %any, %any2 : !croq.future<tma, async, memref<16x32xf32, #gpu.address_space<workgroup>>>
        croq.yield %s#0 : !croq.future<tma, async, memref<16x32xf32, #gpu.address_space<workgroup>>>
      }
      %second = arith.cmpi eq, %g, %c1 : index
      croq.inthreads (%second) {
        croq.wait %f : !croq.future<tma, async, memref<16x32xf32, #gpu.address_space<workgroup>>>
      }
    }
  }
  return
}
