// RUN: croq-opt %s -split-input-file -verify-diagnostics

// One case per verifier message of the croq dialect, types first.

// expected-error @below {{event array dimensions must be positive, got 0}}
func.func private @negative_event_zero_dim(!croq.event<shared, 0>)

// -----

// expected-error @below {{an event array holds at most 4096 events (one 8-byte mbarrier each in shared memory)}}
func.func private @negative_event_overflow(!croq.event<shared, 4294967296x4294967296>)

// -----

// expected-error @below {{an event array holds at most 4096 events}}
func.func private @negative_event_too_many(!croq.event<shared, 64x65>)

// -----

// expected-error @below {{a fragment extent is at most 256 (it lives in registers), got 2147483648x16}}
func.func private @negative_frag_too_large(!croq.frag<acc, 2147483648x16xf32>)

// -----

// expected-error @below {{unknown event storage 'register'; expected shared, local or global}}
func.func private @negative_event_storage(!croq.event<register>)

// -----

// expected-error @below {{unknown future kind 'cp'; expected dma, tma or mma}}
func.func private @negative_future_kind(!croq.future<cp, async, memref<4xf32>>)

// -----

// expected-error @below {{an mma future refers to an accumulator fragment, got 'memref<4xf32>'}}
func.func private @negative_mma_future_memref(!croq.future<mma, async, memref<4xf32>>)

// -----

// expected-error @below {{an mma future is always async}}
func.func private @negative_mma_future_sync(!croq.future<mma, !croq.frag<acc, 16x16xf32>>)

// -----

// expected-error @below {{a dma future refers to a memref, got 'f32'}}
func.func private @negative_dma_future_scalar(!croq.future<dma, async, f32>)

// -----

// expected-error @below {{unknown fragment role 'c'; expected a, b or acc}}
func.func private @negative_frag_role(!croq.frag<c, 16x16xf32>)

// -----

// expected-error @below {{a fragment is a 2-D tile, got rank 3}}
func.func private @negative_frag_rank(!croq.frag<acc, 2x16x16xf32>)

// -----

// expected-error @below {{fragment dimensions must be positive}}
func.func private @negative_frag_zero(!croq.frag<acc, 0x16xf32>)

// -----

// expected-error @below {{fragment element type must be an integer or float, got 'index'}}
func.func private @negative_frag_index(!croq.frag<acc, 16x16xindex>)

// -----

//===----------------------------------------------------------------------===//
// croq.parallel
//===----------------------------------------------------------------------===//

func.func @negative_parallel_bound_count(%n: index) {
  // expected-error @below {{expected 2 bounds, one per index, got 1}}
  croq.parallel (%a, %b) by [%n] : block {
  }
  return
}

// -----

func.func @negative_parallel_level(%n: index) {
  // expected-error @below {{unknown parallel level 'cluster'; expected block, warpgroup (group-4), warp (group) or thread}}
  croq.parallel (%a) by [%n] : cluster {
  }
  return
}

// -----

func.func @negative_parallel_no_bounds() {
  // expected-error @below {{expects at least one bound}}
  croq.parallel () by [] : block {
  }
  return
}

// -----

func.func @negative_parallel_zero_bound() {
  %c0 = arith.constant 0 : index
  // expected-error @below {{bound 0 must be positive, got 0}}
  croq.parallel (%a) by [%c0] : block {
  }
  return
}

// -----

func.func @negative_parallel_stream_level(%n: index, %s: !croq.stream) {
  croq.parallel (%b) by [%n] : block {
    // expected-error @below {{a stream can only be bound to a block-level parallel, not 'thread'}}
    croq.parallel (%t) by [%n] : thread stream(%s) {
    }
  }
  return
}

// -----

func.func @negative_parallel_async_level(%n: index) {
  // expected-error @below {{only a block-level parallel (a kernel launch) can be async, not 'warpgroup'}}
  croq.parallel (%g) by [%n] : warpgroup async {
  }
  return
}

// -----

func.func @negative_parallel_async_nested(%n: index) {
  croq.parallel (%b) by [%n] : block {
    // expected-error @below {{only the outermost parallel can be async}}
    croq.parallel (%b2) by [%n] : block async {
    }
  }
  return
}

// -----

func.func @negative_parallel_level_order(%n: index) {
  croq.parallel (%b) by [%n] : block {
    croq.parallel (%w) by [%n] : warp {
      // expected-error @below {{a 'warpgroup' parallel cannot be nested in a 'warp' parallel; levels must decrease from block to warpgroup, warp and thread}}
      croq.parallel (%g) by [%n] : warpgroup {
      }
    }
  }
  return
}

// -----

func.func @negative_parallel_body_args(%n: index) {
  // expected-error @below {{expected 1 body arguments, one per bound, got 2}}
  "croq.parallel"(%n) <{level = #croq<level block>, operandSegmentSizes = array<i32: 1, 0>}> ({
  ^bb0(%a: index, %b: index):
    "croq.yield"() : () -> ()
  }) : (index) -> ()
  return
}

// -----

func.func @negative_parallel_body_arg_type(%n: index) {
  // expected-error @below {{body arguments must be of index type, got 'i32'}}
  "croq.parallel"(%n) <{level = #croq<level block>, operandSegmentSizes = array<i32: 1, 0>}> ({
  ^bb0(%a: i32):
    "croq.yield"() : () -> ()
  }) : (index) -> ()
  return
}

// -----

func.func @negative_block_results(%n: index) {
  // expected-error @below {{a block-level parallel is a kernel launch and cannot yield values; write results to a tensor}}
  %r = croq.parallel (%b) by [%n] : block -> (index) {
    croq.yield %b : index
  }
  return
}

// -----

func.func @negative_yield_types(%n: index) {
  croq.parallel (%b) by [%n] : block {
    %r = croq.parallel (%t) by [%n] : thread -> (index) {
      %v = arith.constant 1 : i32
      // expected-error @below {{yields 1 values of types ('i32') but its parent croq.parallel returns ('index')}}
      croq.yield %v : i32
    }
  }
  return
}

// -----

//===----------------------------------------------------------------------===//
// croq.inthreads
//===----------------------------------------------------------------------===//

func.func @negative_inthreads_host(%p: i1) {
  // expected-error @below {{must be nested in a croq.parallel; inthreads partitions the threads of a parallel and is illegal at host level}}
  croq.inthreads (%p) {
  }
  return
}

// -----

func.func @negative_inthreads_nested_async(%n: index) {
  %c0 = arith.constant 0 : index
  croq.parallel (%t) by [%n] : thread {
    %p = arith.cmpi eq, %t, %c0 : index
    croq.inthreads (%p) {
      // expected-error @below {{only the outermost croq.inthreads can be async}}
      croq.inthreads async (%p) {
      }
    }
  }
  return
}

// -----

func.func @negative_inthreads_async_results(%n: index, %f: !croq.future<tma, async, memref<8x8xf16, 3>>) {
  %c0 = arith.constant 0 : index
  croq.parallel (%t) by [%n] : thread {
    %p = arith.cmpi eq, %t, %c0 : index
    // expected-error @below {{is async, and an async region is a program of its own: it yields nothing to the code after it}}
    %r = croq.inthreads async (%p) else(%f : !croq.future<tma, async, memref<8x8xf16, 3>>) -> !croq.future<tma, async, memref<8x8xf16, 3>> {
      croq.yield %f : !croq.future<tma, async, memref<8x8xf16, 3>>
    }
  }
  return
}

// -----

func.func @negative_inthreads_dma_result(%n: index, %f: !croq.future<dma, async, memref<8x8xf16, 3>>) {
  %c0 = arith.constant 0 : index
  croq.parallel (%t) by [%n] : thread {
    %p = arith.cmpi eq, %t, %c0 : index
    // expected-error @below {{which is not a TMA future; only a TMA copy completes on an mbarrier that threads outside the region can wait on}}
    %r = croq.inthreads (%p) else(%f : !croq.future<dma, async, memref<8x8xf16, 3>>) -> !croq.future<dma, async, memref<8x8xf16, 3>> {
      croq.yield %f : !croq.future<dma, async, memref<8x8xf16, 3>>
    }
  }
  return
}

// -----

func.func @negative_inthreads_result_types(%n: index, %f: !croq.future<tma, async, memref<8x8xf16, 3>>) {
  %c0 = arith.constant 0 : index
  croq.parallel (%t) by [%n] : thread {
    %p = arith.cmpi eq, %t, %c0 : index
    // expected-error @below {{they must match}}
    %r = croq.inthreads (%p) else(%f : !croq.future<tma, async, memref<8x8xf16, 3>>) -> !croq.future<tma, async, memref<8x4xf16, 3>> {
      croq.yield %f : !croq.future<tma, async, memref<8x8xf16, 3>>
    }
  }
  return
}

// -----

func.func @negative_inthreads_registers_not_async(%n: index) {
  %c0 = arith.constant 0 : index
  croq.parallel (%t) by [%n] : thread {
    %p = arith.cmpi eq, %t, %c0 : index
    // expected-error @below {{sets a register budget, which only an async region (a warp-specialized role) has}}
    croq.inthreads registers(40) (%p) {
    }
  }
  return
}

// -----

func.func @negative_inthreads_registers_range(%n: index) {
  %c0 = arith.constant 0 : index
  croq.parallel (%t) by [%n] : thread {
    %p = arith.cmpi eq, %t, %c0 : index
    // expected-error @below {{asks for 36 registers per thread; setmaxnreg needs a multiple of 8 from 24 to 256}}
    croq.inthreads async registers(36) (%p) {
    }
  }
  return
}

// -----

func.func @negative_inthreads_loop_index(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  croq.parallel (%t) by [%n] : thread {
    // expected-note @below {{defined here}}
    scf.for %iv = %c0 to %n step %c1 {
      %p = arith.cmpi eq, %iv, %t : index
      // expected-error @below {{predicate must depend only on parallel indices and constants, but it uses a block argument of scf.for; use an if (scf.if) for a runtime condition}}
      croq.inthreads (%p) {
      }
    }
  }
  return
}

// -----

func.func @negative_inthreads_loaded_value(%n: index, %m: memref<4xindex>) {
  %c0 = arith.constant 0 : index
  croq.parallel (%t) by [%n] : thread {
    // expected-note @below {{defined here}}
    %v = memref.load %m[%c0] : memref<4xindex>
    %p = arith.cmpi eq, %t, %v : index
    // expected-error @below {{predicate must depend only on parallel indices and constants, but it uses the result of 'memref.load'; use an if (scf.if) for a runtime condition}}
    croq.inthreads (%p) {
    }
  }
  return
}

// -----

func.func @negative_inthreads_no_index(%n: index) {
  %true = arith.constant true
  croq.parallel (%t) by [%n] : thread {
    // expected-error @below {{predicate must test at least one parallel index}}
    croq.inthreads (%true) {
    }
  }
  return
}

// -----

//===----------------------------------------------------------------------===//
// croq.barrier, croq.stream.create
//===----------------------------------------------------------------------===//

func.func @negative_barrier_thread(%n: index) {
  croq.parallel (%b) by [%n] : block {
    // expected-error @below {{a barrier needs a level of several threads: warp, warpgroup or block}}
    croq.barrier thread
  }
  return
}

// -----

func.func @negative_barrier_host() {
  // expected-error @below {{must be nested in a croq.parallel; a barrier synchronises device threads}}
  croq.barrier block
  return
}

// -----

func.func @negative_stream_in_kernel(%n: index) {
  croq.parallel (%b) by [%n] : block {
    // expected-error @below {{creates a host-owned stream and must be at host level; move it out of the croq.parallel}}
    %s = croq.stream.create : !croq.stream
  }
  return
}

// -----

//===----------------------------------------------------------------------===//
// Events
//===----------------------------------------------------------------------===//

func.func @negative_global_event_in_kernel(%n: index) {
  croq.parallel (%b) by [%n] : block {
    // expected-error @below {{a global event must be declared at host level, outside any croq.parallel}}
    %e = croq.event.alloc : !croq.event<global>
  }
  return
}

// -----

func.func @negative_shared_event_on_host() {
  // expected-error @below {{a shared event must be declared inside a croq.parallel}}
  %e = croq.event.alloc : !croq.event<shared>
  return
}

// -----

func.func @negative_event_arrivals(%n: index) {
  croq.parallel (%b) by [%n] : block {
    // expected-error @below {{attribute 'arrivals' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
    %e = croq.event.alloc arrivals 0 : !croq.event<shared>
  }
  return
}

// -----

func.func @negative_event_subscripts(%n: index) {
  %c0 = arith.constant 0 : index
  croq.parallel (%b) by [%n] : block {
    %e = croq.event.alloc : !croq.event<shared, 2>
    // expected-error @below {{expected at most 1 subscripts for '!croq.event<shared, 2>', got 2}}
    croq.event.wait %e[%c0, %c0] : !croq.event<shared, 2>
  }
  return
}

// -----

func.func @negative_event_order_rank(%n: index) {
  croq.parallel (%b) by [%n] : block {
    %e = croq.event.alloc : !croq.event<shared, 2x2>
    // expected-error @below {{at(order) needs a 1-D event array, got '!croq.event<shared, 2x2>'}}
    croq.event.trigger %e at(%b) : !croq.event<shared, 2x2>
  }
  return
}

// -----

func.func @negative_event_order_and_subscript(%n: index) {
  croq.parallel (%b) by [%n] : block {
    %e = croq.event.alloc : !croq.event<shared, 2>
    // expected-error @below {{at(order) and subscripts are exclusive}}
    croq.event.wait %e[%b] at(%b) : !croq.event<shared, 2>
  }
  return
}

// -----

func.func @negative_event_index_range(%n: index) {
  %c2 = arith.constant 2 : index
  croq.parallel (%b) by [%n] : block {
    %e = croq.event.alloc : !croq.event<shared, 2>
    // expected-error @below {{subscript 0 is 2, out of range [0, 2)}}
    croq.event.trigger %e[%c2] : !croq.event<shared, 2>
  }
  return
}

// -----

func.func @negative_trigger_after_whole_array(%n: index, %g: memref<64x64xf16>) {
  croq.parallel (%b) by [%n] : block {
    %e = croq.event.alloc : !croq.event<shared, 2>
    %s = memref.alloc() : memref<64x64xf16, #gpu.address_space<workgroup>>
    %f = croq.tma.copy async %g to %s : memref<64x64xf16> to memref<64x64xf16, #gpu.address_space<workgroup>> -> !croq.future<tma, async, memref<64x64xf16, #gpu.address_space<workgroup>>>
    // expected-error @below {{trigger ... after must select a single event element}}
    croq.event.trigger %e after %f : !croq.event<shared, 2>, !croq.future<tma, async, memref<64x64xf16, #gpu.address_space<workgroup>>>
  }
  return
}

// -----

func.func @negative_trigger_after_dma(%n: index, %g: memref<64x64xf16>) {
  croq.parallel (%b) by [%n] : block {
    %e = croq.event.alloc : !croq.event<shared>
    %s = memref.alloc() : memref<64x64xf16, #gpu.address_space<workgroup>>
    %f = croq.dma.copy async %g to %s : memref<64x64xf16> to memref<64x64xf16, #gpu.address_space<workgroup>> -> !croq.future<dma, async, memref<64x64xf16, #gpu.address_space<workgroup>>>
    // expected-error @below {{'after' takes asynchronous tma futures, but future 0 is '!croq.future<dma, async, memref<64x64xf16, #gpu.address_space<workgroup>>>'}}
    croq.event.trigger %e after %f : !croq.event<shared>, !croq.future<dma, async, memref<64x64xf16, #gpu.address_space<workgroup>>>
  }
  return
}

// -----

//===----------------------------------------------------------------------===//
// Futures
//===----------------------------------------------------------------------===//

func.func @negative_wait_nothing() {
  // expected-error @below {{expects at least one future}}
  "croq.wait"() : () -> ()
  return
}

// -----

func.func @negative_wait_sync_future(%g: memref<16xf32>, %l: memref<16xf32, #gpu.address_space<private>>) {
  %f = croq.dma.copy %g to %l : memref<16xf32> to memref<16xf32, #gpu.address_space<private>> -> !croq.future<dma, memref<16xf32, #gpu.address_space<private>>>
  // expected-error @below {{future 0 is not asynchronous; only async futures can be waited}}
  croq.wait %f : !croq.future<dma, memref<16xf32, #gpu.address_space<private>>>
  return
}

// -----

func.func @negative_future_data_type(%f: !croq.future<dma, async, memref<16xf32>>) {
  // expected-error @below {{result type 'memref<8xf32>' does not match the future's data type 'memref<16xf32>'}}
  %d = croq.future.data %f : !croq.future<dma, async, memref<16xf32>> -> memref<8xf32>
  return
}

// -----

func.func @negative_any_sync(%b: memref<16xf32>) {
  // expected-error @below {{a placeholder is an async dma or tma future, got '!croq.future<dma, memref<16xf32>>'}}
  %f = croq.dma.any %b : memref<16xf32> -> !croq.future<dma, memref<16xf32>>
  return
}

// -----

func.func @negative_any_buffer_type(%b: memref<16xf32>) {
  // expected-error @below {{future data type 'memref<8xf32>' does not match the buffer type 'memref<16xf32>'}}
  %f = croq.dma.any %b : memref<16xf32> -> !croq.future<dma, async, memref<8xf32>>
  return
}

// -----

func.func @negative_swap_kinds(%a: !croq.future<dma, async, memref<16xf32>>, %b: !croq.future<tma, async, memref<16xf32>>) {
  // expected-error @below {{all of {lhs, rhs, newLhs, newRhs} have same type}}
  %x, %y = "croq.swap"(%a, %b) : (!croq.future<dma, async, memref<16xf32>>, !croq.future<tma, async, memref<16xf32>>) -> (!croq.future<dma, async, memref<16xf32>>, !croq.future<dma, async, memref<16xf32>>)
  return
}

// -----

func.func @negative_rotate_one(%a: !croq.future<dma, async, memref<16xf32>>) {
  // expected-error @below {{rotates at least two futures, got 1}}
  %x = croq.rotate %a : !croq.future<dma, async, memref<16xf32>>
  return
}

// -----

func.func @negative_rotate_results(%a: !croq.future<dma, async, memref<16xf32>>) {
  // expected-error @below {{expected 2 results, one per future, got 1}}
  %x = "croq.rotate"(%a, %a) : (!croq.future<dma, async, memref<16xf32>>, !croq.future<dma, async, memref<16xf32>>) -> !croq.future<dma, async, memref<16xf32>>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Tile views
//===----------------------------------------------------------------------===//

func.func @negative_chunkat_rank(%t: memref<64x64xf16>, %i: index) {
  // expected-error @below {{expected 2 entries, one per dimension of the source, got 1}}
  %v = croq.chunkat %t[%i by 4] : memref<64x64xf16> -> memref<16xf16, strided<[1], offset: ?>>
  return
}

// -----

func.func @negative_chunkat_indices(%t: memref<64xf16>, %i: index) {
  // expected-error @below {{expected 1 indices, one per divided dimension, got 2}}
  %v = "croq.chunkat"(%t, %i, %i) <{operandSegmentSizes = array<i32: 1, 2, 0>, static_bounds = array<i64: 4>}> : (memref<64xf16>, index, index) -> memref<16xf16, strided<[1], offset: ?>>
  return
}

// -----

func.func @negative_chunkat_dynamic_bounds(%t: memref<64xf16>, %i: index) {
  // expected-error @below {{expected 0 dynamic bounds, got 1}}
  %v = "croq.chunkat"(%t, %i, %i) <{operandSegmentSizes = array<i32: 1, 1, 1>, static_bounds = array<i64: 4>}> : (memref<64xf16>, index, index) -> memref<16xf16, strided<[1], offset: ?>>
  return
}

// -----

func.func @negative_chunkat_zero(%t: memref<64xf16>, %i: index) {
  // expected-error @below {{chunk count of dimension 0 must be positive, got 0}}
  %v = croq.chunkat %t[%i by 0] : memref<64xf16> -> memref<16xf16, strided<[1], offset: ?>>
  return
}

// -----

func.func @negative_chunkat_empty_tile(%t: memref<4xf16>, %i: index) {
  // expected-error @below {{chunk count 8 of dimension 0 exceeds its extent 4 and would make an empty tile}}
  %v = croq.chunkat %t[%i by 8] : memref<4xf16> -> memref<1xf16, strided<[1], offset: ?>>
  return
}

// -----

func.func @negative_chunkat_result(%t: memref<64x64xf16>, %i: index) {
  // expected-error @below {{expected result type 'memref<16x64xf16, strided<[64, 1], offset: ?>>', got 'memref<16x64xf16>'}}
  %v = croq.chunkat %t[%i by 4, _] : memref<64x64xf16> -> memref<16x64xf16>
  return
}

// -----

func.func @negative_chunkat_layout(%t: memref<8x8xf16, affine_map<(d0, d1) -> (d0 floordiv 2, d1)>>, %i: index) {
  // expected-error @below {{source must have a strided layout}}
  %v = croq.chunkat %t[%i by 2, _] : memref<8x8xf16, affine_map<(d0, d1) -> (d0 floordiv 2, d1)>> -> memref<4x8xf16>
  return
}

// -----

func.func @negative_subspan_rank(%t: memref<64x64xf16>, %i: index) {
  // expected-error @below {{expected 2 extents, one per dimension of the source, got 1}}
  %v = croq.subspan %t[16] at [%i, %i] : memref<64x64xf16> -> memref<16xf16, strided<[1], offset: ?>>
  return
}

// -----

func.func @negative_subspan_dynamic_extents(%t: memref<64xf16>, %i: index) {
  // expected-error @below {{expected 0 dynamic extents, got 1}}
  %v = "croq.subspan"(%t, %i, %i) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>, static_extents = array<i64: 16>}> : (memref<64xf16>, index, index) -> memref<16xf16, strided<[1], offset: ?>>
  return
}

// -----

func.func @negative_subspan_indices(%t: memref<64x64xf16>, %i: index) {
  // expected-error @below {{expected 2 tile indices in 'at', got 1}}
  %v = croq.subspan %t[16, 16] at [%i] : memref<64x64xf16> -> memref<16x16xf16, strided<[64, 1], offset: ?>>
  return
}

// -----

func.func @negative_subspan_steps(%t: memref<64x64xf16>, %i: index) {
  // expected-error @below {{expected 2 steps, one per dimension, got 1}}
  %v = croq.subspan %t[16, 16] at [%i, %i] step [%i] : memref<64x64xf16> -> memref<16x16xf16, strided<[64, 1], offset: ?>>
  return
}

// -----

func.func @negative_subspan_zero(%t: memref<64xf16>, %i: index) {
  // expected-error @below {{extent of dimension 0 must be positive, got 0}}
  %v = croq.subspan %t[0] at [%i] : memref<64xf16> -> memref<0xf16, strided<[1], offset: ?>>
  return
}

// -----

func.func @negative_subspan_too_large(%t: memref<64xf16>, %i: index) {
  // expected-error @below {{extent 128 of dimension 0 exceeds its size 64}}
  %v = croq.subspan %t[128] at [%i] : memref<64xf16> -> memref<128xf16, strided<[1], offset: ?>>
  return
}

// -----

//===----------------------------------------------------------------------===//
// croq.dma.copy
//===----------------------------------------------------------------------===//

func.func @negative_copy_memory_space(%a: memref<16xf32>, %b: memref<16xf32, 3>) {
  // expected-error @below {{destination has unsupported memory space 3 : i64; use none (global), #gpu.address_space<workgroup> (shared) or #gpu.address_space<private> (local)}}
  croq.dma.copy %a to %b : memref<16xf32> to memref<16xf32, 3>
  return
}

// -----

func.func @negative_copy_element_type(%a: memref<16xf32>, %b: memref<16xf16>) {
  // expected-error @below {{element types differ: 'f32' => 'f16'}}
  croq.dma.copy %a to %b : memref<16xf32> to memref<16xf16>
  return
}

// -----

func.func @negative_copy_rank(%a: memref<16xf32>, %b: memref<4x4xf32>) {
  // expected-error @below {{ranks differ: 1 => 2}}
  croq.dma.copy %a to %b : memref<16xf32> to memref<4x4xf32>
  return
}

// -----

func.func @negative_copy_shape(%a: memref<16x8xf32>, %b: memref<16x4xf32>) {
  // expected-error @below {{shapes differ in dimension 1: 8 => 4}}
  croq.dma.copy %a to %b : memref<16x8xf32> to memref<16x4xf32>
  return
}

// -----

func.func @negative_copy_swizzle_global(%a: memref<64xf16>, %b: memref<64xf16>) {
  // expected-error @below {{swizzle applies to shared memory, but the copy is global => global}}
  croq.dma.copy swizzle(128) %a to %b : memref<64xf16> to memref<64xf16>
  return
}

// -----

func.func @negative_copy_swizzle_value(%a: memref<64xf16>, %b: memref<64xf16, #gpu.address_space<workgroup>>) {
  // expected-error @below {{attribute 'swizzle' failed to satisfy constraint: 64-bit signless integer attribute whose value is one of {32, 64, 128}}}
  croq.dma.copy swizzle(48) %a to %b : memref<64xf16> to memref<64xf16, #gpu.address_space<workgroup>>
  return
}

// -----

func.func @negative_copy_async_no_future(%a: memref<16xf32>, %b: memref<16xf32>) {
  // expected-error @below {{an async copy must produce a future to wait on}}
  croq.dma.copy async %a to %b : memref<16xf32> to memref<16xf32>
  return
}

// -----

func.func @negative_copy_future_kind(%a: memref<16xf32>, %b: memref<16xf32>) {
  // expected-error @below {{expected a async dma future, got '!croq.future<tma, async, memref<16xf32>>'}}
  %f = croq.dma.copy async %a to %b : memref<16xf32> to memref<16xf32> -> !croq.future<tma, async, memref<16xf32>>
  return
}

// -----

func.func @negative_copy_future_data(%a: memref<16xf32>, %b: memref<16xf32>) {
  // expected-error @below {{future data type 'memref<8xf32>' does not match the destination type 'memref<16xf32>'}}
  %f = croq.dma.copy async %a to %b : memref<16xf32> to memref<16xf32> -> !croq.future<dma, async, memref<8xf32>>
  return
}

// -----

//===----------------------------------------------------------------------===//
// croq.tma.copy
//===----------------------------------------------------------------------===//

func.func @negative_tma_direction(%a: memref<64xf16, #gpu.address_space<workgroup>>, %b: memref<64xf16, #gpu.address_space<workgroup>>) {
  // expected-error @below {{moves between global and shared memory, got shared => shared}}
  croq.tma.copy %a to %b : memref<64xf16, #gpu.address_space<workgroup>> to memref<64xf16, #gpu.address_space<workgroup>>
  return
}

// -----

func.func @negative_tma_rank(%a: memref<2x2x2x2x2x8xf16>, %b: memref<2x2x2x2x2x8xf16, #gpu.address_space<workgroup>>) {
  // expected-error @below {{TMA supports tiles of rank 1 to 5, got rank 6}}
  croq.tma.copy %a to %b : memref<2x2x2x2x2x8xf16> to memref<2x2x2x2x2x8xf16, #gpu.address_space<workgroup>>
  return
}

// -----

func.func @negative_tma_inner_stride(%a: memref<64x64xf16, strided<[1, 64]>>, %b: memref<64x64xf16, #gpu.address_space<workgroup>>) {
  // expected-error @below {{the innermost dimension of the global view must be contiguous (stride 1), got 'memref<64x64xf16, strided<[1, 64]>>'}}
  croq.tma.copy %a to %b : memref<64x64xf16, strided<[1, 64]>> to memref<64x64xf16, #gpu.address_space<workgroup>>
  return
}

// -----

func.func @negative_tma_swizzle_bytes(%a: memref<64x32xf16>, %b: memref<64x32xf16, #gpu.address_space<workgroup>>) {
  // expected-error @below {{swizzle(128) must divide the bytes of the innermost tile extent, 32 x 16 bits = 64 bytes}}
  croq.tma.copy swizzle(128) %a to %b : memref<64x32xf16> to memref<64x32xf16, #gpu.address_space<workgroup>>
  return
}

// -----

func.func @negative_tma_bind_sync(%n: index, %a: memref<64xf16>, %b: memref<64xf16, #gpu.address_space<workgroup>>) {
  croq.parallel (%x) by [%n] : block {
    %e = croq.event.alloc : !croq.event<shared>
    // expected-error @below {{binding an event needs an async global => shared load}}
    croq.tma.copy %a to %b bind %e : memref<64xf16> to memref<64xf16, #gpu.address_space<workgroup>>, !croq.event<shared>
  }
  return
}

// -----

func.func @negative_tma_bind_local(%n: index, %a: memref<64xf16>, %b: memref<64xf16, #gpu.address_space<workgroup>>) {
  croq.parallel (%x) by [%n] : block {
    %e = croq.event.alloc : !croq.event<local>
    // expected-error @below {{TMA completes on a shared event, got '!croq.event<local>'}}
    croq.tma.copy async %a to %b bind %e : memref<64xf16> to memref<64xf16, #gpu.address_space<workgroup>>, !croq.event<local>
  }
  return
}

// -----

func.func @negative_tma_bind_array(%n: index, %a: memref<64xf16>, %b: memref<64xf16, #gpu.address_space<workgroup>>) {
  croq.parallel (%x) by [%n] : block {
    %e = croq.event.alloc : !croq.event<shared, 2>
    // expected-error @below {{the bound event must be a single element: expected 1 subscripts, got 0}}
    croq.tma.copy async %a to %b bind %e : memref<64xf16> to memref<64xf16, #gpu.address_space<workgroup>>, !croq.event<shared, 2>
  }
  return
}

// -----

func.func @negative_tma_bind_future(%n: index, %a: memref<64xf16>, %b: memref<64xf16, #gpu.address_space<workgroup>>) {
  croq.parallel (%x) by [%n] : block {
    %e = croq.event.alloc : !croq.event<shared>
    // expected-error @below {{a copy bound to an event has no future; trigger the event instead}}
    %f = croq.tma.copy async %a to %b bind %e : memref<64xf16> to memref<64xf16, #gpu.address_space<workgroup>>, !croq.event<shared> -> !croq.future<tma, async, memref<64xf16, #gpu.address_space<workgroup>>>
  }
  return
}

// -----

func.func @negative_tma_async_unbound(%a: memref<64xf16>, %b: memref<64xf16, #gpu.address_space<workgroup>>) {
  // expected-error @below {{an async TMA copy needs either a bound event or a future}}
  croq.tma.copy async %a to %b : memref<64xf16> to memref<64xf16, #gpu.address_space<workgroup>>
  return
}

// -----

//===----------------------------------------------------------------------===//
// MMA
//===----------------------------------------------------------------------===//

func.func @negative_fill_role(%v: f32) {
  // expected-error @below {{result must be a fragment of role acc, got '!croq.frag<a, 16x16xf32>'}}
  %a = croq.mma.fill %v : f32 -> !croq.frag<a, 16x16xf32>
  return
}

// -----

func.func @negative_load_role(%s: memref<64x16xf16, #gpu.address_space<workgroup>>) {
  // expected-error @below {{loads an accumulator only at warp scope; start a warpgroup accumulator with croq.mma.fill, got '!croq.frag<acc, 64x16xf16, warpgroup>'}}
  %a = croq.mma.load %s : memref<64x16xf16, #gpu.address_space<workgroup>> -> !croq.frag<acc, 64x16xf16, warpgroup>
  return
}

// -----

func.func @negative_load_local(%s: memref<16x16xf16, #gpu.address_space<private>>) {
  // expected-error @below {{an MMA operand is read from shared memory (or, for a warp MMA, global memory), not from local memory}}
  %a = croq.mma.load %s : memref<16x16xf16, #gpu.address_space<private>> -> !croq.frag<a, 16x16xf16>
  return
}

// -----

func.func @negative_load_element_type(%s: memref<16x16xf32, #gpu.address_space<workgroup>>) {
  // expected-error @below {{fragment element type 'f16' differs from the view's 'f32'}}
  %a = croq.mma.load %s : memref<16x16xf32, #gpu.address_space<workgroup>> -> !croq.frag<a, 16x16xf16>
  return
}

// -----

func.func @negative_load_shape(%s: memref<16x8xf16, #gpu.address_space<workgroup>>) {
  // expected-error @below {{view shape does not match the fragment shape '!croq.frag<a, 16x16xf16>'}}
  %a = croq.mma.load %s : memref<16x8xf16, #gpu.address_space<workgroup>> -> !croq.frag<a, 16x16xf16>
  return
}

// -----

func.func @negative_load_swizzle_global(%s: memref<16x16xf16>) {
  // expected-error @below {{swizzle applies to shared memory}}
  %a = croq.mma.load swizzle(32) %s : memref<16x16xf16> -> !croq.frag<a, 16x16xf16>
  return
}

// -----

func.func @negative_mma_acc_role(%c: !croq.frag<b, 16x16xf32>, %a: !croq.frag<a, 16x16xf16>, %b: !croq.frag<b, 16x16xf16>) {
  // expected-error @below {{accumulator must be a fragment of role acc, got '!croq.frag<b, 16x16xf32>'}}
  %r = croq.mma row_row %c, %a, %b : !croq.frag<b, 16x16xf32>, !croq.frag<a, 16x16xf16>, !croq.frag<b, 16x16xf16> -> !croq.frag<b, 16x16xf32>
  return
}

// -----

func.func @negative_mma_a_role(%c: !croq.frag<acc, 16x16xf32>, %a: !croq.frag<b, 16x16xf16>, %b: !croq.frag<b, 16x16xf16>) {
  // expected-error @below {{operand A must be a fragment of role a or acc, got '!croq.frag<b, 16x16xf16>'}}
  %r = croq.mma row_row %c, %a, %b : !croq.frag<acc, 16x16xf32>, !croq.frag<b, 16x16xf16>, !croq.frag<b, 16x16xf16> -> !croq.frag<acc, 16x16xf32>
  return
}

// -----

func.func @negative_mma_unsigned_float(%c: !croq.frag<acc, 16x16xf32>, %a: !croq.frag<a, 16x16xf16>, %b: !croq.frag<b, 16x16xf16>) {
  // expected-error @below {{reads unsigned operands only of 8-bit integers, dense; got 'f16'}}
  %r = croq.mma row_row %c, %a, %b {unsigned_a} : !croq.frag<acc, 16x16xf32>, !croq.frag<a, 16x16xf16>, !croq.frag<b, 16x16xf16> -> !croq.frag<acc, 16x16xf32>
  return
}

// -----

func.func @negative_mma_b_role(%c: !croq.frag<acc, 16x16xf32>, %a: !croq.frag<a, 16x16xf16>, %b: !croq.frag<a, 16x16xf16>) {
  // expected-error @below {{operand B must be a fragment of role b, got '!croq.frag<a, 16x16xf16>'}}
  %r = croq.mma row_row %c, %a, %b : !croq.frag<acc, 16x16xf32>, !croq.frag<a, 16x16xf16>, !croq.frag<a, 16x16xf16> -> !croq.frag<acc, 16x16xf32>
  return
}

// -----

func.func @negative_mma_element_types(%c: !croq.frag<acc, 16x16xf32>, %a: !croq.frag<a, 16x16xf16>, %b: !croq.frag<b, 16x16xbf16>) {
  // expected-error @below {{operand element types differ: 'f16' and 'bf16'}}
  %r = croq.mma row_row %c, %a, %b : !croq.frag<acc, 16x16xf32>, !croq.frag<a, 16x16xf16>, !croq.frag<b, 16x16xbf16> -> !croq.frag<acc, 16x16xf32>
  return
}

// -----

func.func @negative_mma_scopes(%c: !croq.frag<acc, 64x16xf32, warpgroup>, %a: !croq.frag<a, 64x16xf16, warpgroup>, %b: !croq.frag<b, 16x16xf16>) {
  // expected-error @below {{the accumulator and the operands must be held by the same scope}}
  %r = croq.mma row_row %c, %a, %b : !croq.frag<acc, 64x16xf32, warpgroup>, !croq.frag<a, 64x16xf16, warpgroup>, !croq.frag<b, 16x16xf16> -> !croq.frag<acc, 64x16xf32, warpgroup>
  return
}

// -----

// expected-error @below {{a fragment is held by a warp or a warpgroup, not a block}}
func.func @negative_frag_scope(%c: !croq.frag<acc, 64x16xf32, block>)

// -----

// row.row takes B as [N, K]: a [K, N] = 32x16 B does not fit a 16x16 result.
func.func @negative_mma_shapes(%c: !croq.frag<acc, 16x16xf32>, %a: !croq.frag<a, 16x32xf16>, %b: !croq.frag<b, 32x16xf16>) {
  // expected-error @below {{operand shapes do not agree for row_row: accumulator 16x16, A is [M, K] = '!croq.frag<a, 16x32xf16>', B is [N, K] = '!croq.frag<b, 32x16xf16>'}}
  %r = croq.mma row_row %c, %a, %b : !croq.frag<acc, 16x16xf32>, !croq.frag<a, 16x32xf16>, !croq.frag<b, 32x16xf16> -> !croq.frag<acc, 16x16xf32>
  return
}

// -----

func.func @negative_mma_async_result(%c: !croq.frag<acc, 16x16xf32>, %a: !croq.frag<a, 16x16xf16>, %b: !croq.frag<b, 16x16xf16>) {
  // expected-error @below {{the async form yields a future of the accumulator '!croq.frag<acc, 16x16xf32>', got '!croq.frag<acc, 16x16xf32>'}}
  %r = croq.mma async row_row %c, %a, %b : !croq.frag<acc, 16x16xf32>, !croq.frag<a, 16x16xf16>, !croq.frag<b, 16x16xf16> -> !croq.frag<acc, 16x16xf32>
  return
}

// -----

func.func @negative_mma_result(%c: !croq.frag<acc, 16x16xf32>, %a: !croq.frag<a, 16x16xf16>, %b: !croq.frag<b, 16x16xf16>) {
  // expected-error @below {{result type '!croq.frag<acc, 16x16xf16>' differs from the accumulator '!croq.frag<acc, 16x16xf32>'}}
  %r = croq.mma row_row %c, %a, %b : !croq.frag<acc, 16x16xf32>, !croq.frag<a, 16x16xf16>, !croq.frag<b, 16x16xf16> -> !croq.frag<acc, 16x16xf16>
  return
}

// -----

func.func @negative_store_role(%a: !croq.frag<a, 16x16xf16>, %o: memref<16x16xf16>) {
  // expected-error @below {{stored value must be a fragment of role acc, got '!croq.frag<a, 16x16xf16>'}}
  croq.mma.store %a, %o : !croq.frag<a, 16x16xf16>, memref<16x16xf16>
  return
}

// -----

func.func @negative_store_convert(%c: !croq.frag<acc, 16x16xf32>, %o: memref<16x16xi32>) {
  // expected-error @below {{cannot convert fragment elements 'f32' to 'i32'; both must be integers or floats}}
  croq.mma.store %c, %o : !croq.frag<acc, 16x16xf32>, memref<16x16xi32>
  return
}

// -----

func.func @negative_store_shape(%c: !croq.frag<acc, 16x16xf32>, %o: memref<16x8xf32>) {
  // expected-error @below {{view shape does not match the fragment shape '!croq.frag<acc, 16x16xf32>'}}
  croq.mma.store %c, %o : !croq.frag<acc, 16x16xf32>, memref<16x8xf32>
  return
}

// -----

func.func @negative_commit_host() {
  // expected-error @below {{must be nested in a croq.parallel; it fences MMAs issued by device threads}}
  croq.mma.commit
  return
}

// -----

func.func @negative_commit_pending(%n: index) {
  croq.parallel (%b) by [%n] : block {
    // expected-error @below {{attribute 'pending' failed to satisfy constraint: 64-bit signless integer attribute whose minimum value is 0 whose maximum value is 7}}
    croq.mma.commit pending 8
  }
  return
}

// -----

func.func @negative_budget_range(%n: index) {
  %c2 = arith.constant 2 : index
  %c0 = arith.constant 0 : index
  croq.parallel (%b) by [%n] : block {
    croq.parallel (%p) by [%c2] : warpgroup {
      %first = arith.cmpi eq, %p, %c0 : index
      // expected-error @below {{gives a role 300 registers; setmaxnreg needs a multiple of 8 from 24 to 256}}
      croq.warp_specialize registers(300) {
        croq.inthreads async (%first) {
        }
      }
    }
  }
  return
}

// -----

func.func @negative_budget_step(%n: index) {
  %c2 = arith.constant 2 : index
  %c0 = arith.constant 0 : index
  croq.parallel (%b) by [%n] : block {
    croq.parallel (%p) by [%c2] : warpgroup {
      %first = arith.cmpi eq, %p, %c0 : index
      // expected-error @below {{gives a role 36 registers}}
      croq.warp_specialize registers(36) {
        croq.inthreads async (%first) {
        }
      }
    }
  }
  return
}

// -----

func.func @negative_budget_count(%n: index) {
  %c2 = arith.constant 2 : index
  %c0 = arith.constant 0 : index
  croq.parallel (%b) by [%n] : block {
    croq.parallel (%p) by [%c2] : warpgroup {
      %first = arith.cmpi eq, %p, %c0 : index
      // expected-error @below {{has 1 roles but 2 register budgets; give each role one}}
      croq.warp_specialize registers(40, 232) {
        croq.inthreads async (%first) {
        }
      }
    }
  }
  return
}

// -----

func.func @negative_warp_specialize_not_a_role(%n: index) {
  %c2 = arith.constant 2 : index
  %c0 = arith.constant 0 : index
  croq.parallel (%b) by [%n] : block {
    croq.parallel (%p) by [%c2] : warpgroup {
      %first = arith.cmpi eq, %p, %c0 : index
      // expected-error @below {{holds only croq.inthreads async roles, got croq.inthreads}}
      croq.warp_specialize registers(40) {
        croq.inthreads (%first) {
        }
      }
    }
  }
  return
}

// -----

func.func @negative_warp_specialize_on_host() {
  // expected-error @below {{'croq.warp_specialize' op}}
  croq.warp_specialize registers(40) {
  }
  return
}

// -----

// Decisions between passes are ops, operands, properties or the dialect's
// own verified attributes: an unknown croq.* attribute is an error.
func.func @negative_unknown_attribute(%n: index) {
  // expected-error @below {{unknown croq dialect attribute 'croq.max_registers'}}
  croq.parallel (%b) by [%n] : block {
  } attributes {croq.max_registers = 40 : i64}
  return
}

// -----

// memref.dim of a dimension the memref does not have is undefined; upstream
// folds read past its shape (a crash in --canonicalize).
func.func @negative_dim_of_missing_dimension(%a: memref<?xf32>) {
  %c = arith.constant -1 : index
  %d = memref.dim %a, %c : memref<?xf32>
  // expected-error @below {{operand #0 is computed from the extent of dimension -1 of a rank-1 memref (memref.dim), which does not exist; dimensions are 0 to 0}}
  croq.parallel (%b) by [%d] : block {
  }
  return
}

// -----

func.func @negative_dim_past_the_rank(%a: memref<?x?xf32>) {
  %c = arith.constant 2 : index
  %d = memref.dim %a, %c : memref<?x?xf32>
  // expected-error @below {{operand #0 is computed from the extent of dimension 2 of a rank-2 memref}}
  croq.parallel (%b) by [%d] : block {
  }
  return
}

// -----

// A from registers (an accumulator-layout fragment) is a warpgroup MMA's,
// of a 16-bit type, [M, K].
func.func @register_a_at_warp_scope(%c: !croq.frag<acc, 16x16xf32>, %a: !croq.frag<acc, 16x16xf16>, %b: !croq.frag<b, 16x16xf16>) {
  // expected-error @below {{takes operand A from registers (a fragment in the accumulator layout) only at warpgroup scope, of a 16-bit type as [M, K] (row.row or row.col), or of an 8-bit type as row.row (both K-major); got '!croq.frag<acc, 16x16xf16>' with layout row_row}}
  %r = croq.mma row_row %c, %a, %b : !croq.frag<acc, 16x16xf32>, !croq.frag<acc, 16x16xf16>, !croq.frag<b, 16x16xf16> -> !croq.frag<acc, 16x16xf32>
  return
}

// -----

func.func @register_a_col(%c: !croq.frag<acc, 64x64xf32, warpgroup>, %a: !croq.frag<acc, 64x64xf16, warpgroup>, %b: !croq.frag<b, 64x64xf16, warpgroup>) {
  // expected-error @below {{takes operand A from registers (a fragment in the accumulator layout) only at warpgroup scope, of a 16-bit type as [M, K] (row.row or row.col), or of an 8-bit type as row.row (both K-major)}}
  %r = croq.mma col_row %c, %a, %b : !croq.frag<acc, 64x64xf32, warpgroup>, !croq.frag<acc, 64x64xf16, warpgroup>, !croq.frag<b, 64x64xf16, warpgroup> -> !croq.frag<acc, 64x64xf32, warpgroup>
  return
}

// -----

func.func @coords_range() {
  // expected-error @below {{register 64 is out of range: a thread holds 64 of '!croq.frag<acc, 64x128xf32, warpgroup>'}}
  %row, %col = croq.mma.coords[64] : !croq.frag<acc, 64x128xf32, warpgroup>
  return
}

// -----

func.func @element_of_warp_fragment(%acc: !croq.frag<acc, 16x16xf32>) {
  // expected-error @below {{register 8 is out of range: a thread holds 8 of '!croq.frag<acc, 16x16xf32>'}}
  %v = croq.mma.element %acc[8] : !croq.frag<acc, 16x16xf32> -> f32
  return
}

// -----

func.func @element_of_operand(%a: !croq.frag<a, 16x16xf16>) {
  // expected-error @below {{addresses the registers of an accumulator: a warp's, or a warpgroup's of 64 x N (N a multiple of 8), got '!croq.frag<a, 16x16xf16>'}}
  %v = croq.mma.element %a[0] : !croq.frag<a, 16x16xf16> -> f16
  return
}

// -----

func.func @element_type(%acc: !croq.frag<acc, 64x64xf32, warpgroup>) {
  // expected-error @below {{result type 'f16' is not the accumulator's element type}}
  %v = croq.mma.element %acc[0] : !croq.frag<acc, 64x64xf32, warpgroup> -> f16
  return
}

// -----

func.func @call_bad_callee() {
  %c1 = arith.constant 1 : index
  croq.parallel (%t) by [%c1] : thread {
    // expected-error @below {{callee 'f(1)' is not a C++ function name (`f`, `ns::f`, `f<8>`)}}
    croq.call "f(1)"() : () -> ()
    croq.yield
  }
  return
}

// -----

func.func @call_on_host() {
  // expected-error @below {{must be nested in a croq.parallel; device functions run on device threads}}
  croq.call "f"() : () -> ()
  return
}

// -----

func.func @call_f8_by_value(%x: f8E4M3FN) {
  %c1 = arith.constant 1 : index
  croq.parallel (%t) by [%c1] : thread {
    // expected-error @below {{argument 0 of type 'f8E4M3FN' cannot be passed to a C++ device function}}
    croq.call "f"(%x) : (f8E4M3FN) -> ()
    croq.yield
  }
  return
}

// -----

func.func @grid_barrier_outside_cooperative(%n: index) {
  croq.parallel (%b) by [%n] : block {
    // expected-error @below {{waits for every block of the grid, so it must be in the body of a cooperative block-level croq.parallel}}
    croq.grid_barrier
  }
  return
}

// -----

func.func @cooperative_thread(%n: index) {
  croq.parallel (%b) by [%n] : block {
    // expected-error @below {{only a block-level parallel (a kernel launch) can be cooperative, not 'thread'}}
    croq.parallel (%t) by [%n] : thread cooperative {
    }
  }
  return
}

// -----

func.func @named_barrier_count(%n: index) {
  %id = arith.constant 1 : i32
  %count = arith.constant 100 : i32
  croq.parallel (%b) by [%n] : block {
    // expected-error @below {{counts whole warps: 100 threads is not a positive multiple of 32}}
    croq.named_barrier %id, %count
  }
  return
}

// -----

func.func @named_barrier_runtime_id(%n: index, %id: i32) {
  %count = arith.constant 64 : i32
  croq.parallel (%b) by [%n] : block {
    // expected-error @below {{needs a constant barrier id, so that croq can keep its own barriers apart}}
    croq.named_barrier arrive %id, %count
  }
  return
}

// -----

func.func @scale_warp_accumulator(%s: !croq.frag<acc, 16x16xf32>) {
  // expected-error @below {{scales a warpgroup's float accumulator (wgmma's), got '!croq.frag<acc, 16x16xf32>'}}
  %0 = croq.mma.scale %s, %s : !croq.frag<acc, 16x16xf32>
  return
}

// -----

func.func @scale_rows_shape(%s: !croq.frag<acc, 64x64xf32, warpgroup>, %rows: memref<64x2xf32>) {
  // expected-error @below {{takes one scale for each of the accumulator's 64 rows, as a view of [64], [64, 1] or [1, 64], got 'memref<64x2xf32>'}}
  %0 = croq.mma.scale %s, %s rows %rows : memref<64x2xf32> : !croq.frag<acc, 64x64xf32, warpgroup>
  return
}

// -----

func.func @scale_rows_type(%s: !croq.frag<acc, 64x64xf32, warpgroup>, %rows: memref<64xi32>) {
  // expected-error @below {{row scales are floats, got 'memref<64xi32>'}}
  %0 = croq.mma.scale %s, %s rows %rows : memref<64xi32> : !croq.frag<acc, 64x64xf32, warpgroup>
  return
}

// -----

// expected-error @below {{sparsity metadata is a warpgroup's, of a 64 x K tile of f16, bf16, f8E4M3FN or f8E5M2 with K a multiple of its wgmma.sp step (32, or 64 for 8-bit floats), got 64x48xf16 at warpgroup scope}}
func.func @meta_step(%m: !croq.frag<meta, 64x48xf16, warpgroup>) {
  return
}

// -----

func.func @meta_load_shape(%m: memref<64x8xi8, #gpu.address_space<workgroup>>) {
  // expected-error @below {{loads the sparsity metadata of a 64x32 tile from an i8 view of [64, 4], got 'memref<64x8xi8, #gpu.address_space<workgroup>>'}}
  %me = croq.mma.load %m : memref<64x8xi8, #gpu.address_space<workgroup>> -> !croq.frag<meta, 64x32xf16, warpgroup>
  return
}

// -----

func.func @sparse_shapes(%acc: !croq.frag<acc, 64x64xf32, warpgroup>,
                         %a: !croq.frag<a, 64x32xf16, warpgroup>,
                         %b: !croq.frag<b, 64x32xf16, warpgroup>,
                         %me: !croq.frag<meta, 64x32xf16, warpgroup>) {
  // expected-error @below {{operand shapes do not agree for row_row}}
  %0 = croq.mma row_row %acc, %a, %b sparse(%me : !croq.frag<meta, 64x32xf16, warpgroup>) : !croq.frag<acc, 64x64xf32, warpgroup>, !croq.frag<a, 64x32xf16, warpgroup>, !croq.frag<b, 64x32xf16, warpgroup> -> !croq.frag<acc, 64x64xf32, warpgroup>
  return
}

// -----

func.func @sparse_meta_of(%acc: !croq.frag<acc, 64x64xf32, warpgroup>,
                          %a: !croq.frag<a, 64x32xf16, warpgroup>,
                          %b: !croq.frag<b, 64x64xf16, warpgroup>,
                          %me: !croq.frag<meta, 64x32xf16, warpgroup>) {
  // expected-error @below {{sparsity metadata '!croq.frag<meta, 64x32xf16, warpgroup>' is not that of A's 64x64 tile of 'f16'}}
  %0 = croq.mma row_row %acc, %a, %b sparse(%me : !croq.frag<meta, 64x32xf16, warpgroup>) : !croq.frag<acc, 64x64xf32, warpgroup>, !croq.frag<a, 64x32xf16, warpgroup>, !croq.frag<b, 64x64xf16, warpgroup> -> !croq.frag<acc, 64x64xf32, warpgroup>
  return
}
