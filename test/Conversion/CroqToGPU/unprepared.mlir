// RUN: croq-opt %s --convert-croq-to-gpu --split-input-file --verify-diagnostics

// The patterns lower only the decisions earlier passes made: a wait needs
// the parity croq-assign-phases gives it.
func.func @negative_wait_without_parity(%n: index) {
  croq.parallel (%b) by [%n] : block {
    %e = croq.event.alloc arrivals 1 : !croq.event<shared>
    croq.event.trigger %e : !croq.event<shared>
    // expected-error @below {{has no phase parity: run croq-assign-phases before convert-croq-to-gpu}}
    croq.event.wait %e : !croq.event<shared>
  }
  return
}

// -----

func.func @negative_event_without_arrivals(%n: index) {
  croq.parallel (%b) by [%n] : block {
    // expected-error @below {{has no arrival count: run croq-assign-arrivals before convert-croq-to-gpu}}
    %e = croq.event.alloc : !croq.event<shared>
    croq.event.trigger %e : !croq.event<shared>
  }
  return
}

// -----

func.func @negative_tma_without_map(%g: memref<64x64xf16>) {
  %c1 = arith.constant 1 : index
  croq.parallel (%b) by [%c1] : block {
    %s = memref.alloc() : memref<64x64xf16, #gpu.address_space<workgroup>>
    // expected-error @below {{has no tensor map: run croq-materialize-tma before convert-croq-to-gpu}}
    croq.tma.copy %g to %s : memref<64x64xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
  }
  return
}

// -----

!map = !nvgpu.tensormap.descriptor<tensor = memref<64x64xf16, #gpu.address_space<workgroup>>, swizzle = none, l2promo = l2promo_128b, oob = zero, interleave = none>
func.func @negative_tma_without_issuer(%g: memref<64x64xf16>, %m: !map) {
  %c1 = arith.constant 1 : index
  croq.parallel (%b) by [%c1] : block {
    %s = memref.alloc() : memref<64x64xf16, #gpu.address_space<workgroup>>
    // expected-error @below {{has no issuer: run croq-elect-issuers before convert-croq-to-gpu}}
    croq.tma.copy %g to %s map(%m : !map) : memref<64x64xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
  }
  return
}

// -----

func.func @negative_wgmma_without_layout(%n: index) {
  %c1 = arith.constant 1 : index
  croq.parallel (%b) by [%n] : block {
    %a = memref.alloc() : memref<64x64xf16, #gpu.address_space<workgroup>>
    croq.parallel (%p) by [%c1] : warpgroup {
      %t = memref.subview %a[0, 0] [64, 16] [1, 1] : memref<64x64xf16, #gpu.address_space<workgroup>> to memref<64x16xf16, strided<[64, 1]>, #gpu.address_space<workgroup>>
      // expected-error @below {{has no shared layout for the buffer it reads: run croq-plan-shared-layout before convert-croq-to-gpu}}
      %f = croq.mma.load %t : memref<64x16xf16, strided<[64, 1]>, #gpu.address_space<workgroup>> -> !croq.frag<a, 64x16xf16, warpgroup>
    }
  }
  return
}

// -----

func.func @negative_store_without_election(%n: index, %out: memref<?xi32>) {
  %c64 = arith.constant 64 : index
  croq.parallel (%b) by [%n] : block {
    %one = arith.constant 1 : i32
    // expected-error @below {{has no election of the one thread of its group that runs it (it runs between parallel levels): run croq-elect-issuers before convert-croq-to-gpu}}
    memref.store %one, %out[%b] : memref<?xi32>
    croq.parallel (%t) by [%c64] : thread {
    }
  }
  return
}

// -----

!ws = memref<64x16xf16, strided<[16, 1]>, #gpu.address_space<workgroup>>
!acc = !croq.frag<acc, 64x64xf16, warpgroup>
func.func @negative_release_without_commit(%n: index, %k: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  croq.parallel (%b) by [%n] : block {
    %empty = croq.event.alloc arrivals 128 : !croq.event<shared>
    %a = memref.alloc() {croq.swizzle = 32 : i64} : memref<64x16xf16, #gpu.address_space<workgroup>>
    croq.parallel (%p) by [%c1] : warpgroup {
      %init = croq.mma.fill %zero : f32 -> !acc
      %r = scf.for %i = %c0 to %k step %c1 iter_args(%acc = %init) -> (!acc) {
        %ma = croq.mma.load %a : memref<64x16xf16, #gpu.address_space<workgroup>> -> !croq.frag<a, 64x16xf16, warpgroup>
        %mb = croq.mma.load %a : memref<64x16xf16, #gpu.address_space<workgroup>> -> !croq.frag<b, 64x16xf16, warpgroup>
        %next = croq.mma row_row %acc, %ma, %mb : !acc, !croq.frag<a, 64x16xf16, warpgroup>, !croq.frag<b, 64x16xf16, warpgroup> -> !acc
        // expected-error @below {{has no commit of the warpgroup MMAs before it: run croq-pipeline-mma before convert-croq-to-gpu}}
        croq.event.trigger %empty : !croq.event<shared>
        scf.yield %next : !acc
      }
    }
  }
  return
}
