// RUN: croq-opt %s --croq-plan-shared-layout --croq-pipeline-mma --croq-materialize-tma --croq-assign-arrivals --croq-assign-phases --croq-elect-issuers --convert-croq-to-gpu --split-input-file --verify-diagnostics

// What convert-croq-to-gpu cannot lower is reported at the op, with what to
// change.

func.func @negative_event(%n: index) {
  // expected-error @below {{cannot be lowered to GPU code: global events (flags that blocks would spin on across the grid) are not implemented}}
  %e = croq.event.alloc : !croq.event<global>
  croq.parallel (%b) by [%n] : block {
  }
  return
}

// -----

func.func @negative_unbound_tma_store_wait(%g: memref<64x64xf16>) {
  %c1 = arith.constant 1 : index
  croq.parallel (%b) by [%c1] : block {
    %s = memref.alloc() : memref<64x64xf16, #gpu.address_space<workgroup>>
    %f = croq.tma.copy async %s to %g : memref<64x64xf16, #gpu.address_space<workgroup>> to memref<64x64xf16> -> !croq.future<tma, async, memref<64x64xf16, #gpu.address_space<workgroup>>>
    // expected-error @below {{waits on a TMA future; run croq-bind-tma-futures first to make it a wait on an event}}
    croq.wait %f : !croq.future<tma, async, memref<64x64xf16, #gpu.address_space<workgroup>>>
  }
  return
}

// -----

func.func @negative_tma_unbound_trigger(%g: memref<64x64xf16>) {
  %c1 = arith.constant 1 : index
  croq.parallel (%b) by [%c1] : block {
    %e = croq.event.alloc : !croq.event<shared>
    %s = memref.alloc() : memref<64x64xf16, #gpu.address_space<workgroup>>
    // expected-error @below {{is bound to an event element that is not triggered after it in the same block}}
    croq.tma.copy async %g to %s bind %e : memref<64x64xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>, !croq.event<shared>
    croq.event.wait %e : !croq.event<shared>
  }
  return
}

// -----

func.func @negative_tma_box(%g: memref<512x64xf16>) {
  %c1 = arith.constant 1 : index
  croq.parallel (%b) by [%c1] : block {
    %s = memref.alloc() : memref<512x64xf16, #gpu.address_space<workgroup>>
    // expected-error @below {{a TMA box has at most 256 elements per dimension}}
    croq.tma.copy %g to %s : memref<512x64xf16> to memref<512x64xf16, #gpu.address_space<workgroup>>
  }
  return
}

// -----

// A run-time extent below the outermost thread-side level: a warp's
// instance is 32 threads, whatever the program asks.
func.func @negative_dynamic_nested_extent(%n: index) {
  %c2 = arith.constant 2 : index
  croq.parallel (%b) by [%n] : block {
    croq.parallel (%w) by [%c2] : warp {
      // expected-error @below {{bound 0 of a thread parallel must be a compile-time constant: it sets how many threads run each instance of the level above, which is fixed; only the outermost thread-side parallel of a kernel, alone in its block, may have a run-time extent}}
      croq.parallel (%t) by [%n] : thread {
      }
    }
  }
  return
}

// -----

// A run-time block size comes from one parallel; siblings would each need
// the block to be their size.
func.func @negative_dynamic_siblings(%n: index) {
  %c64 = arith.constant 64 : index
  croq.parallel (%b) by [%n] : block {
    // expected-error @below {{bound 0 of a thread parallel must be a compile-time constant}}
    croq.parallel (%t) by [%n] : thread {
    }
    croq.parallel (%t) by [%c64] : thread {
    }
  }
  return
}

// -----

// A shared event counts its arrivals in threads, which a run-time block
// size does not give.
func.func @negative_dynamic_block_event(%n: index) {
  %c1 = arith.constant 1 : index
  croq.parallel (%b) by [%c1] : block {
    // expected-note @below {{this parallel's run-time extent sets it; make the extent a compile-time constant}}
    croq.parallel (%w) by [%n] : warp {
      // expected-error @below {{needs the block's thread count at compile time (a shared event's arrivals are counted in threads), but this kernel's block size is a run-time value}}
      %e = croq.event.alloc : !croq.event<shared, 1>
      croq.event.trigger %e : !croq.event<shared, 1>
      croq.event.wait %e : !croq.event<shared, 1>
    }
  }
  return
}

// -----

func.func @negative_sibling_shapes() {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  croq.parallel (%b) by [%c1] : block {
    // expected-note @below {{and this one 64}}
    croq.parallel (%t) by [%c64] : thread {
    }
    // expected-error @below {{sibling parallels in one block need equal thread counts: this one uses 128 threads}}
    croq.parallel (%t) by [%c128] : thread {
    }
  }
  return
}

// -----

func.func @negative_warpgroup_fill() {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  croq.parallel (%b) by [%c1] : block {
    // expected-note @below {{the 'warpgroup' parallel}}
    croq.parallel (%g) by [%c1] : warpgroup {
      // expected-error @below {{uses 64 threads of each instance of the 'warpgroup' parallel around it, which has 128; make the extents here multiply to 128}}
      croq.parallel (%t) by [%c64] : thread {
      }
    }
  }
  return
}

// -----

func.func @negative_kernel_level() {
  %c32 = arith.constant 32 : index
  // expected-error @below {{a kernel is a block-level parallel; wrap this 'thread' parallel in `croq.parallel (...) by [...] : block`}}
  croq.parallel (%t) by [%c32] : thread {
  }
  return
}

// -----

func.func @negative_too_many_threads() {
  %c1 = arith.constant 1 : index
  %c9 = arith.constant 9 : index
  croq.parallel (%b) by [%c1] : block {
    // expected-error @below {{needs 9 x 128 threads per block; the limit is 1024}}
    croq.parallel (%g) by [%c9] : warpgroup {
    }
  }
  return
}

// -----

// 2^62 warpgroups of 128 threads: the product would wrap to 0.
func.func @negative_thread_count_overflow() {
  %c1 = arith.constant 1 : index
  %huge = arith.constant 4611686018427387904 : index
  croq.parallel (%b) by [%c1] : block {
    // expected-error @below {{needs 4611686018427387904 x 128 threads per block; the limit is 1024}}
    croq.parallel (%g) by [%huge] : warpgroup {
    }
  }
  return
}

// -----

func.func @negative_two_dim_overflow() {
  %c1 = arith.constant 1 : index
  %big = arith.constant 4294967296 : index
  croq.parallel (%b) by [%c1] : block {
    // expected-error @below {{needs 9223372036854775807 x 1 threads per block}}
    croq.parallel (%x, %y, %z) by [%big, %big, %big] : thread {
    }
  }
  return
}

// -----

func.func @negative_copy_in_inthreads(%g: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c128 = arith.constant 128 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  croq.parallel (%b) by [%c1] : block {
    %s = memref.alloc() : memref<64xf32, #gpu.address_space<workgroup>>
    croq.parallel (%p) by [%c2] : warpgroup {
      croq.parallel (%t) by [%c128] : thread {
        %first = arith.cmpi eq, %t, %c0 : index
        croq.inthreads async (%first) {
          // expected-error @below {{is a cooperative copy by a warpgroup, but the croq.inthreads around it selects only some of its threads; select whole instances (test indices of the 'warpgroup' level or above) or copy outside the inthreads region}}
          croq.dma.copy %g to %s : memref<64xf32> to memref<64xf32, #gpu.address_space<workgroup>>
        }
      }
    }
  }
  return
}

// -----

func.func @negative_warpgroup_mma(%a: memref<64x16xf16, #gpu.address_space<workgroup>>) {
  %c1 = arith.constant 1 : index
  croq.parallel (%b) by [%c1] : block {
    croq.parallel (%g) by [%c1] : warpgroup {
      // expected-error @below {{is lowered to warp-level mma.sync and must run in the body of a warp parallel (`: group`); at warpgroup scope use warpgroup fragments (!croq.frag<..., warpgroup>), which lower to wgmma}}
      %fa = croq.mma.load %a : memref<64x16xf16, #gpu.address_space<workgroup>> -> !croq.frag<a, 64x16xf16>
      %zero = arith.constant 0.0 : f32
      %acc = croq.mma.fill %zero : f32 -> !croq.frag<acc, 64x64xf32>
      %fb = croq.mma.load %a : memref<64x16xf16, #gpu.address_space<workgroup>> -> !croq.frag<b, 64x16xf16>
      %r = croq.mma row_row %acc, %fa, %fb : !croq.frag<acc, 64x64xf32>, !croq.frag<a, 64x16xf16>, !croq.frag<b, 64x16xf16> -> !croq.frag<acc, 64x64xf32>
    }
  }
  return
}

// -----

// wgmma reads 32 bytes of K: 16 f16 or 32 f8 elements.
func.func @negative_fp8_k_step() {
  %c1 = arith.constant 1 : index
  croq.parallel (%b) by [%c1] : block {
    %buf = memref.alloc() : memref<64x64xf8E4M3FN, #gpu.address_space<workgroup>>
    %a = memref.subview %buf[0, 0] [64, 16] [1, 1] : memref<64x64xf8E4M3FN, #gpu.address_space<workgroup>> to memref<64x16xf8E4M3FN, strided<[64, 1]>, #gpu.address_space<workgroup>>
    croq.parallel (%g) by [%c1] : warpgroup {
      // expected-error @below {{is a warpgroup MMA operand with K = 16, but wgmma consumes K in steps of 32 for 'f8E4M3FN' ('!croq.frag<a, 64x16xf8E4M3FN, warpgroup>'); make the operand's K a multiple of 32}}
      %fa = croq.mma.load %a : memref<64x16xf8E4M3FN, strided<[64, 1]>, #gpu.address_space<workgroup>> -> !croq.frag<a, 64x16xf8E4M3FN, warpgroup>
    }
  }
  return
}

// -----

func.func @negative_mixed_layouts(%a: memref<16x16xf16>) {
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  croq.parallel (%b) by [%c1] : block {
    croq.parallel (%w) by [%c1] : warp {
      %acc = croq.mma.fill %zero : f32 -> !croq.frag<acc, 16x16xf32>
      %fa = croq.mma.load %a : memref<16x16xf16> -> !croq.frag<a, 16x16xf16>
      // expected-error @below {{is used by MMAs of layouts row_row and row_col, which read it in different orders; load the operand once per layout}}
      %fb = croq.mma.load %a : memref<16x16xf16> -> !croq.frag<b, 16x16xf16>
      %r0 = croq.mma row_row %acc, %fa, %fb : !croq.frag<acc, 16x16xf32>, !croq.frag<a, 16x16xf16>, !croq.frag<b, 16x16xf16> -> !croq.frag<acc, 16x16xf32>
      %r1 = croq.mma row_col %r0, %fa, %fb : !croq.frag<acc, 16x16xf32>, !croq.frag<a, 16x16xf16>, !croq.frag<b, 16x16xf16> -> !croq.frag<acc, 16x16xf32>
    }
  }
  return
}

// -----

// mma.sync multiplies f16, bf16, f32 (as tf32) and s8.
func.func @negative_warp_mma_f64(%a: memref<16x16xf64>) {
  %c1 = arith.constant 1 : index
  croq.parallel (%b) by [%c1] : block {
    croq.parallel (%w) by [%c1] : warp {
      // expected-error @below {{mma.sync operands are f16, bf16, f32 (as tf32) or s8, got 'f64'}}
      %fa = croq.mma.load %a : memref<16x16xf64> -> !croq.frag<a, 16x16xf64>
      %zero = arith.constant 0.0 : f64
      %acc = croq.mma.fill %zero : f64 -> !croq.frag<acc, 16x16xf64>
      %fb = croq.mma.load %a : memref<16x16xf64> -> !croq.frag<b, 16x16xf64>
      %r = croq.mma row_row %acc, %fa, %fb : !croq.frag<acc, 16x16xf64>, !croq.frag<a, 16x16xf64>, !croq.frag<b, 16x16xf64> -> !croq.frag<acc, 16x16xf64>
    }
  }
  return
}

// -----

// A warp MMA is one instruction's shape, or whole m16n8 tiles over one
// instruction's K: m32n32k32 of f16 is neither (K = 32 is two MMAs).
func.func @negative_warp_mma_deep_k(%a: memref<32x32xf16>) {
  %c1 = arith.constant 1 : index
  croq.parallel (%b) by [%c1] : block {
    croq.parallel (%w) by [%c1] : warp {
      %fa = croq.mma.load %a : memref<32x32xf16> -> !croq.frag<a, 32x32xf16>
      %zero = arith.constant 0.0 : f32
      %acc = croq.mma.fill %zero : f32 -> !croq.frag<acc, 32x32xf32>
      %fb = croq.mma.load %a : memref<32x32xf16> -> !croq.frag<b, 32x32xf16>
      // expected-error @below {{a warp MMA of shape m32n32k32 is neither an mma.sync or wmma shape for 'f16' operands (m16n8k16, m16n8k8, m16n16k16, m32n8k16, m8n32k16, m8n8k4) nor whole m16n8 instruction tiles over K = 16 or 8; split K into several MMAs (a foreach over K slices)}}
      %r = croq.mma row_row %acc, %fa, %fb : !croq.frag<acc, 32x32xf32>, !croq.frag<a, 32x32xf16>, !croq.frag<b, 32x32xf16> -> !croq.frag<acc, 32x32xf32>
    }
  }
  return
}

// -----

// bf16 products accumulate in f32 only.
func.func @negative_warp_mma_bf16_into_f16(%a: memref<16x16xbf16>) {
  %c1 = arith.constant 1 : index
  croq.parallel (%b) by [%c1] : block {
    croq.parallel (%w) by [%c1] : warp {
      %fa = croq.mma.load %a : memref<16x16xbf16> -> !croq.frag<a, 16x16xbf16>
      %zero = arith.constant 0.0 : f16
      %acc = croq.mma.fill %zero : f16 -> !croq.frag<acc, 16x16xf16>
      %fb = croq.mma.load %a : memref<16x16xbf16> -> !croq.frag<b, 16x16xbf16>
      // expected-error @below {{mma.sync cannot accumulate 'bf16' products in 'f16'; f16 accumulates in f16 or f32, bf16 and f32 (tf32) in f32, s8 in s32}}
      %r = croq.mma row_row %acc, %fa, %fb : !croq.frag<acc, 16x16xf16>, !croq.frag<a, 16x16xbf16>, !croq.frag<b, 16x16xbf16> -> !croq.frag<acc, 16x16xf16>
    }
  }
  return
}

// -----

// Sized by the block index: no one size for the launch.
func.func @negative_dynamic_shared(%n: index) {
  %c4 = arith.constant 4 : index
  croq.parallel (%b) by [%c4] : block {
    %size = arith.addi %b, %n : index
    // expected-error @below {{a shared buffer needs extents known at the launch (constants, or computed from the kernel's arguments) and, when TMA or wgmma use it, static ones; got 'memref<?xf32, #gpu.address_space<workgroup>>'}}
    %s = memref.alloc(%size) : memref<?xf32, #gpu.address_space<workgroup>>
  }
  return
}

// -----

// wgmma reads 8-bit operands K-major only (16-bit ones in any layout).
func.func @negative_wgmma_layout(%out: memref<64x64xf32>) {
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  croq.parallel (%blk) by [%c1] : block {
    %sa = memref.alloc() : memref<64x64xf8E4M3FN, #gpu.address_space<workgroup>>
    %sb = memref.alloc() : memref<64x64xf8E4M3FN, #gpu.address_space<workgroup>>
    croq.parallel (%g) by [%c1] : warpgroup {
      %acc = croq.mma.fill %zero : f32 -> !croq.frag<acc, 64x64xf32, warpgroup>
      %fa = croq.mma.load %sa : memref<64x64xf8E4M3FN, #gpu.address_space<workgroup>> -> !croq.frag<a, 64x64xf8E4M3FN, warpgroup>
      // expected-error @below {{wgmma reads 'f8E4M3FN' operands only with K contiguous (A as [M, K], B as [N, K], mma.row.row); got '!croq.frag<b, 64x64xf8E4M3FN, warpgroup>' for row_col}}
      %fb = croq.mma.load %sb : memref<64x64xf8E4M3FN, #gpu.address_space<workgroup>> -> !croq.frag<b, 64x64xf8E4M3FN, warpgroup>
      %r = croq.mma row_col %acc, %fa, %fb : !croq.frag<acc, 64x64xf32, warpgroup>, !croq.frag<a, 64x64xf8E4M3FN, warpgroup>, !croq.frag<b, 64x64xf8E4M3FN, warpgroup> -> !croq.frag<acc, 64x64xf32, warpgroup>
      croq.mma.store %r, %out : !croq.frag<acc, 64x64xf32, warpgroup>, memref<64x64xf32>
    }
  }
  return
}

// -----

func.func @negative_wgmma_rows(%out: memref<128x64xf32>) {
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  croq.parallel (%blk) by [%c1] : block {
    croq.parallel (%g) by [%c1] : warpgroup {
      // The fragment type's verifier: wgmma's M is 64 per warpgroup.
      // expected-error @below {{a warpgroup's accumulator has 64 rows (wgmma's M per warpgroup), got 128x64}}
      %acc = croq.mma.fill %zero : f32 -> !croq.frag<acc, 128x64xf32, warpgroup>
      croq.mma.store %acc, %out : !croq.frag<acc, 128x64xf32, warpgroup>, memref<128x64xf32>
    }
  }
  return
}

// -----

func.func @wgmma_columns(%out: memref<64x12xf32>) {
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  croq.parallel (%blk) by [%c1] : block {
    croq.parallel (%g) by [%c1] : warpgroup {
      %acc = croq.mma.fill %zero : f32 -> !croq.frag<acc, 64x12xf32, warpgroup>
      // expected-error @below {{a warpgroup accumulator is 64 x N with N a multiple of 8 up to 256 (one wgmma), got '!croq.frag<acc, 64x12xf32, warpgroup>'; split the tile across warpgroups}}
      croq.mma.store %acc, %out : !croq.frag<acc, 64x12xf32, warpgroup>, memref<64x12xf32>
    }
  }
  return
}

// -----

// A buffer that wgmma reads is stored swizzled: a plain copy out of it
// would see scrambled elements.
func.func @negative_swizzled_buffer_read(%out: memref<64x64xf32>, %o: memref<64x64xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  croq.parallel (%blk) by [%c1] : block {
    %sa = memref.alloc() : memref<64x64xf16, #gpu.address_space<workgroup>>
    croq.parallel (%g) by [%c1] : warpgroup {
      %acc = croq.mma.fill %zero : f32 -> !croq.frag<acc, 64x64xf32, warpgroup>
      %fa = croq.mma.load %sa : memref<64x64xf16, #gpu.address_space<workgroup>> -> !croq.frag<a, 64x64xf16, warpgroup>
      %fb = croq.mma.load %sa : memref<64x64xf16, #gpu.address_space<workgroup>> -> !croq.frag<b, 64x64xf16, warpgroup>
      %r = croq.mma row_row %acc, %fa, %fb : !croq.frag<acc, 64x64xf32, warpgroup>, !croq.frag<a, 64x64xf16, warpgroup>, !croq.frag<b, 64x64xf16, warpgroup> -> !croq.frag<acc, 64x64xf32, warpgroup>
      croq.mma.store %r, %out : !croq.frag<acc, 64x64xf32, warpgroup>, memref<64x64xf32>
      // expected-error @below {{accesses a shared buffer that warpgroup MMAs read, which is stored in the swizzled wgmma layout; only copies into it, MMA operand loads and stores, and element reads and writes may use it, so give this access a buffer of its own}}
      memref.copy %sa, %o : memref<64x64xf16, #gpu.address_space<workgroup>> to memref<64x64xf16>
    }
  }
  return
}

// -----

func.func @negative_wgmma_swizzle_mismatch(%out: memref<64x64xf32>) {
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  croq.parallel (%blk) by [%c1] : block {
    %sa = memref.alloc() : memref<64x64xf16, #gpu.address_space<workgroup>>
    croq.parallel (%g) by [%c1] : warpgroup {
      // expected-error @below {{reads with swizzle(64), but the buffer's rows of 128 bytes are stored with swizzle 128; write swizzle(128)}}
      %fa = croq.mma.load swizzle(64) %sa : memref<64x64xf16, #gpu.address_space<workgroup>> -> !croq.frag<a, 64x64xf16, warpgroup>
    }
  }
  return
}

// -----

func.func @negative_wgmma_row_bytes(%out: memref<64x64xf32>) {
  %c1 = arith.constant 1 : index
  croq.parallel (%blk) by [%c1] : block {
    %sa = memref.alloc() : memref<64x48xf16, #gpu.address_space<workgroup>>
    croq.parallel (%g) by [%c1] : warpgroup {
      // expected-error @below {{reads buffer 'memref<64x48xf16, #gpu.address_space<workgroup>>' with wgmma, which needs rows of 32, 64 or a multiple of 128 bytes and a multiple of 8 rows; reshape the buffer}}
      %fa = croq.mma.load %sa : memref<64x48xf16, #gpu.address_space<workgroup>> -> !croq.frag<a, 64x48xf16, warpgroup>
    }
  }
  return
}

// -----

// TMA writes its box contiguously: a strided shared view cannot receive it.
func.func @negative_tma_strided_tile(%g: memref<64x64xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  croq.parallel (%b) by [%c1] : block {
    %s = memref.alloc() : memref<64x128xf16, #gpu.address_space<workgroup>>
    %v = memref.subview %s[0, 0] [64, 64] [1, 1] : memref<64x128xf16, #gpu.address_space<workgroup>> to memref<64x64xf16, strided<[128, 1]>, #gpu.address_space<workgroup>>
    // expected-error @below {{TMA moves a box that is contiguous in shared memory, but this shared view is strided}}
    croq.tma.copy %g to %v : memref<64x64xf16> to memref<64x64xf16, strided<[128, 1]>, #gpu.address_space<workgroup>>
  }
  return
}


// -----

// One dispatch runs one role per warpgroup: roles that share warpgroup 0
// cannot share a croq.warp_specialize.
func.func @negative_overlapping_roles(%n: index) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  croq.parallel (%b) by [%n] : block {
    croq.parallel (%p) by [%c2] : warpgroup {
      %first = arith.cmpi eq, %p, %c0 : index
      %any = arith.cmpi sge, %p, %c0 : index
      croq.warp_specialize registers(40, 232) {
        croq.inthreads async (%first) {
        }
        // expected-error @below {{shares warpgroups with an earlier role of its croq.warp_specialize}}
        croq.inthreads async (%any) {
        }
      }
    }
  }
  return
}

// -----

// The element comes from a load after the copy: it cannot move above it.
func.func @negative_index_after_copy(%n: index, %g: memref<?x?xf16>, %idx: memref<1xindex>) {
  %c0 = arith.constant 0 : index
  croq.parallel (%b) by [%n] : block {
    %full = croq.event.alloc : !croq.event<shared, 2>
    %a = memref.alloc() : memref<64x64xf16, #gpu.address_space<workgroup>>
    %ta = croq.subspan %g[64, 64] at [%b, %c0] : memref<?x?xf16> -> memref<64x64xf16, strided<[?, 1], offset: ?>>
    %f = croq.tma.copy async %ta to %a : memref<64x64xf16, strided<[?, 1], offset: ?>> to memref<64x64xf16, #gpu.address_space<workgroup>> -> !croq.future<tma, async, memref<64x64xf16, #gpu.address_space<workgroup>>>
    %i = memref.load %idx[%c0] : memref<1xindex>
    // expected-error @below {{selects its event element with a value computed after the TMA copy it binds}}
    croq.event.trigger %full at(%i) after %f : !croq.event<shared, 2>, !croq.future<tma, async, memref<64x64xf16, #gpu.address_space<workgroup>>>
  }
  return
}

// -----

// Barrier 0 is the block's.
func.func @negative_named_barrier_id() {
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %id = arith.constant 0 : i32
  %count = arith.constant 256 : i32
  croq.parallel (%b) by [%c1] : block {
    croq.parallel (%t) by [%c256] : thread {
      // expected-error @below {{uses barrier id 0; named barriers are 1 to 15 (barrier 0 is the block's, sync.shared)}}
      croq.named_barrier %id, %count
    }
  }
  return
}

// -----

// Eight warpgroups need eight named barriers of croq's; the program takes
// eight of the fifteen.
func.func @negative_named_barriers_left() {
  %c1 = arith.constant 1 : index
  %c1024 = arith.constant 1024 : index
  %count = arith.constant 1024 : i32
  croq.parallel (%b) by [%c1] : block {
    croq.parallel (%t) by [%c1024] : thread {
      %i1 = arith.constant 1 : i32
      %i2 = arith.constant 2 : i32
      %i3 = arith.constant 3 : i32
      %i4 = arith.constant 4 : i32
      %i5 = arith.constant 5 : i32
      %i6 = arith.constant 6 : i32
      %i7 = arith.constant 7 : i32
      %i8 = arith.constant 8 : i32
      // expected-error @below {{leaves croq too few named barriers: this kernel's 8 warpgroups need one each besides the 8 ids the program uses; use fewer distinct ids}}
      croq.named_barrier %i1, %count
      croq.named_barrier %i2, %count
      croq.named_barrier %i3, %count
      croq.named_barrier %i4, %count
      croq.named_barrier %i5, %count
      croq.named_barrier %i6, %count
      croq.named_barrier %i7, %count
      croq.named_barrier %i8, %count
    }
  }
  return
}
