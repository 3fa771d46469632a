// RUN: croq-opt %s --croq-plan-shared-layout --split-input-file --verify-diagnostics

// Only copies into a swizzled buffer, MMA operand loads and element reads
// and writes may touch it.
func.func @copy_out(%n: index, %g: memref<64x64xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  croq.parallel (%b) by [%n] : block {
    %a = memref.alloc() : memref<64x64xf16, #gpu.address_space<workgroup>>
    croq.parallel (%p) by [%c1] : warpgroup {
      %ta = memref.subview %a[0, 0] [64, 16] [1, 1] : memref<64x64xf16, #gpu.address_space<workgroup>> to memref<64x16xf16, strided<[64, 1]>, #gpu.address_space<workgroup>>
      %ma = croq.mma.load %ta : memref<64x16xf16, strided<[64, 1]>, #gpu.address_space<workgroup>> -> !croq.frag<a, 64x16xf16, warpgroup>
    }
    // expected-error @below {{accesses a shared buffer that warpgroup MMAs read}}
    memref.copy %a, %g : memref<64x64xf16, #gpu.address_space<workgroup>> to memref<64x64xf16>
  }
  return
}

// -----

// Rows of 48 bytes have no wgmma swizzle.
func.func @odd_rows(%n: index) {
  %c1 = arith.constant 1 : index
  croq.parallel (%b) by [%n] : block {
    %a = memref.alloc() : memref<64x24xf16, #gpu.address_space<workgroup>>
    croq.parallel (%p) by [%c1] : warpgroup {
      %ta = memref.subview %a[0, 0] [64, 16] [1, 1] : memref<64x24xf16, #gpu.address_space<workgroup>> to memref<64x16xf16, strided<[24, 1]>, #gpu.address_space<workgroup>>
      // expected-error @below {{which needs rows of 32, 64 or a multiple of 128 bytes}}
      %ma = croq.mma.load %ta : memref<64x16xf16, strided<[24, 1]>, #gpu.address_space<workgroup>> -> !croq.frag<a, 64x16xf16, warpgroup>
    }
  }
  return
}

// -----

// The dialect verifies the attribute the pass writes.
func.func @bad_span() {
  // expected-error @below {{'croq.swizzle' is 48; a wgmma swizzle span is 32, 64 or 128 bytes}}
  %a = memref.alloc() {croq.swizzle = 48 : i64} : memref<64x64xf16, #gpu.address_space<workgroup>>
  return
}

// -----

func.func @global_buffer() {
  // expected-error @below {{'croq.swizzle' needs a shared buffer of rank 2 or more}}
  %a = memref.alloc() {croq.swizzle = 128 : i64} : memref<64x64xf16>
  return
}

// -----

// Rows of 48 bytes are not whole 32-byte spans (wgmma descriptors count
// the layout's 16-byte chunks from the buffer's start).
func.func @rows_not_whole_spans() {
  // expected-error @below {{'croq.swizzle' is 32, but the buffer's rows are 48 bytes, not a multiple of it}}
  %a = memref.alloc() {croq.swizzle = 32 : i64} : memref<64x24xf16, #gpu.address_space<workgroup>>
  return
}
