// RUN: croq-opt %s -split-input-file -verify-diagnostics

// Malformed croq IR: each case is rejected with a located error, never a
// crash. Truncations of whole files are covered by truncated.mlir.

func.func @negative_level_spelling(%n: index) {
  // Croqtile spells it `group-4`; croq IR names the level.
  // expected-error @below {{unknown parallel level 'group'; expected block, warpgroup (group-4), warp (group) or thread}}
  croq.parallel (%a) by [%n] : group {
  }
  return
}

// -----

func.func @negative_level_missing(%n: index) {
  // expected-error @below {{expected valid keyword}}
  croq.parallel (%a) by [%n] : {
  }
  return
}

// -----

func.func @negative_parallel_missing_by(%n: index) {
  // expected-error @below {{expected 'by'}}
  croq.parallel (%a) [%n] : block {
  }
  return
}

// -----

// expected-note @below {{prior use here}}
func.func @negative_parallel_bound_type(%n: i32) {
  // expected-error @below {{use of value '%n' expects different type than prior uses: 'index' vs 'i32'}}
  croq.parallel (%a) by [%n] : block {
  }
  return
}

// -----

// expected-note @below {{prior use here}}
func.func @negative_stream_type(%n: index) {
  // expected-error @below {{use of value '%n' expects different type than prior uses: '!croq.stream' vs 'index'}}
  croq.parallel (%a) by [%n] : block stream(%n) {
  }
  return
}

// -----

func.func @negative_wait_on_event(%n: index) {
  croq.parallel (%b) by [%n] : block {
    %e = croq.event.alloc : !croq.event<shared>
    // expected-error @below {{'croq.wait' op operand #0 must be variadic of croq future, but got '!croq.event<shared>'}}
    "croq.wait"(%e) : (!croq.event<shared>) -> ()
  }
  return
}

// -----

func.func @negative_trigger_future(%f: !croq.future<dma, async, memref<4xf32>>) {
  // expected-error @below {{invalid kind of type specified}}
  croq.event.trigger %f : !croq.future<dma, async, memref<4xf32>>
  return
}

// -----

func.func @negative_copy_of_scalar(%a: f32, %b: memref<4xf32>) {
  // expected-error @below {{invalid kind of type specified}}
  croq.dma.copy %a to %b : f32 to memref<4xf32>
  return
}

// -----

func.func @negative_inthreads_index_predicate(%n: index) {
  // expected-note @below {{prior use here}}
  croq.parallel (%t) by [%n] : thread {
    // expected-error @below {{use of value '%t' expects different type than prior uses: 'i1' vs 'index'}}
    croq.inthreads (%t) {
    }
  }
  return
}

// -----

// expected-error @below {{expected '<'}}
func.func private @negative_event_no_params(!croq.event)

// -----

// expected-error @below {{expected static shape}}
func.func private @negative_event_dynamic(!croq.event<shared, ?>)

// -----

// expected-error @below {{unknown  type `tensor_view` in dialect `croq`}}
func.func private @negative_unknown_type(!croq.tensor_view<4xf32>)

// -----

func.func @negative_unknown_op() {
  // expected-error @below {{custom op 'croq.tile' is unknown}}
  croq.tile
  return
}

// -----

func.func @negative_chunk_list(%t: memref<64xf16>, %i: index) {
  // expected-error @below {{expected 'by'}}
  %v = croq.chunkat %t[%i 4] : memref<64xf16> -> memref<16xf16, strided<[1], offset: ?>>
  return
}

// -----

func.func @negative_huge_extent(%t: memref<64xf16>, %i: index) {
  // expected-error @below {{integer value too large}}
  %v = croq.subspan %t[99999999999999999999999] at [%i] : memref<64xf16> -> memref<64xf16, strided<[1], offset: ?>>
  return
}
