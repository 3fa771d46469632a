// RUN: croq-opt %s --croq-warp-specialize --split-input-file --verify-diagnostics | FileCheck %s

// 1P1C: the copying role is a producer (40 registers), the summing role a
// consumer, which gets what is left, capped at 240. The roles are disjoint,
// so they share one croq.warp_specialize (one dispatch), and the
// consumer's predicate moves up so that the roles are adjacent.
// CHECK-LABEL: func.func @one_producer_one_consumer
// CHECK: %[[PRODUCER:.*]] = arith.cmpi eq, %{{.*}}, %c0
// CHECK-NEXT: %[[CONSUMER:.*]] = arith.cmpi eq, %{{.*}}, %c1
// CHECK-NEXT: croq.warp_specialize registers(40, 240) {
// CHECK-NEXT: croq.inthreads async (%[[PRODUCER]]) {
// CHECK: croq.dma.copy
// CHECK: }
// CHECK-NEXT: croq.inthreads async (%[[CONSUMER]]) {
// CHECK: arith.addf
// CHECK: }
// CHECK-NEXT: }
func.func @one_producer_one_consumer(%g: memref<64xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  croq.parallel (%b) by [%n] : block {
    %s = memref.alloc() : memref<64xf32, #gpu.address_space<workgroup>>
    croq.parallel (%p) by [%c2] : warpgroup {
      %producer = arith.cmpi eq, %p, %c0 : index
      croq.inthreads async (%producer) {
        croq.dma.copy %g to %s : memref<64xf32> to memref<64xf32, #gpu.address_space<workgroup>>
      }
      %consumer = arith.cmpi eq, %p, %c1 : index
      croq.inthreads async (%consumer) {
        %v = memref.load %s[%c0] : memref<64xf32, #gpu.address_space<workgroup>>
        %w = arith.addf %v, %v : f32
        memref.store %w, %g[%c0] : memref<64xf32>
      }
    }
  }
  return
}

// -----

// 1P2C (`p > 0`): two consumer warpgroups share 64K - 128 * 40 registers,
// 236 each, rounded down to 232.
// CHECK-LABEL: func.func @one_producer_two_consumers
// CHECK: croq.warp_specialize registers(40, 232) {
func.func @one_producer_two_consumers(%g: memref<64xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  croq.parallel (%b) by [%n] : block {
    %s = memref.alloc() : memref<64xf32, #gpu.address_space<workgroup>>
    croq.parallel (%p) by [%c3] : warpgroup {
      %producer = arith.cmpi eq, %p, %c0 : index
      croq.inthreads async (%producer) {
        croq.dma.copy %g to %s : memref<64xf32> to memref<64xf32, #gpu.address_space<workgroup>>
      }
      %consumer = arith.cmpi ugt, %p, %c0 : index
      croq.inthreads async (%consumer) {
        %v = memref.load %s[%c0] : memref<64xf32, #gpu.address_space<workgroup>>
        %w = arith.mulf %v, %v : f32
        memref.store %w, %g[%c0] : memref<64xf32>
      }
    }
  }
  return
}

// -----

// Budgets the program set (setreg: `registers`) are kept; the roles
// without one share what is left. Here the producer asks for 24, and the
// two consumers get (64K - 128 * 24) / 256 = 244, rounded down to 240.
// CHECK-LABEL: func.func @program_budgets
// CHECK: croq.warp_specialize registers(24, 240) {
func.func @program_budgets(%g: memref<64xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  croq.parallel (%b) by [%n] : block {
    %s = memref.alloc() : memref<64xf32, #gpu.address_space<workgroup>>
    croq.parallel (%p) by [%c3] : warpgroup {
      %producer = arith.cmpi eq, %p, %c0 : index
      croq.inthreads async registers(24) (%producer) {
        croq.dma.copy %g to %s : memref<64xf32> to memref<64xf32, #gpu.address_space<workgroup>>
      }
      %consumer = arith.cmpi ugt, %p, %c0 : index
      croq.inthreads async (%consumer) {
        %v = memref.load %s[%c0] : memref<64xf32, #gpu.address_space<workgroup>>
        %w = arith.mulf %v, %v : f32
        memref.store %w, %g[%c0] : memref<64xf32>
      }
    }
  }
  return
}

// -----

// Budgets that together need more than the register file are an error.
func.func @program_budgets_too_large(%g: memref<64xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  croq.parallel (%b) by [%n] : block {
    %s = memref.alloc() : memref<64xf32, #gpu.address_space<workgroup>>
    // expected-error @below {{has roles that do not fit in the 64K-register file: the budgets of its roles need 67584 registers; lower the setreg counts}}
    croq.parallel (%p) by [%c3] : warpgroup {
      %producer = arith.cmpi eq, %p, %c0 : index
      croq.inthreads async registers(48) (%producer) {
        croq.dma.copy %g to %s : memref<64xf32> to memref<64xf32, #gpu.address_space<workgroup>>
      }
      %consumer = arith.cmpi ugt, %p, %c0 : index
      croq.inthreads async registers(240) (%consumer) {
        %v = memref.load %s[%c0] : memref<64xf32, #gpu.address_space<workgroup>>
        %w = arith.mulf %v, %v : f32
        memref.store %w, %g[%c0] : memref<64xf32>
      }
    }
  }
  return
}

// -----

// Roles that overlap: warpgroup 0 would run both, and move its registers
// twice (down to the producer's 40, then "down" to the consumer's 240).
func.func @overlapping_roles(%g: memref<64xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  croq.parallel (%b) by [%n] : block {
    %s = memref.alloc() : memref<64xf32, #gpu.address_space<workgroup>>
    croq.parallel (%p) by [%c2] : warpgroup {
      %producer = arith.cmpi eq, %p, %c0 : index
      // expected-note @below {{the earlier role}}
      croq.inthreads async (%producer) {
        croq.dma.copy %g to %s : memref<64xf32> to memref<64xf32, #gpu.address_space<workgroup>>
      }
      %all = arith.cmpi ult, %p, %c1 : index
      // expected-error @below {{this role and an earlier one both run on warpgroup 0; give each warpgroup at most one role}}
      croq.inthreads async (%all) {
        %v = memref.load %s[%c0] : memref<64xf32, #gpu.address_space<workgroup>>
        %w = arith.addf %v, %v : f32
        memref.store %w, %g[%c0] : memref<64xf32>
      }
    }
  }
  return
}

// -----

// Plain inthreads (not async) and kernels without roles are left alone.
// CHECK-LABEL: func.func @no_roles
// CHECK-NOT: croq.warp_specialize
func.func @no_roles(%g: memref<64xindex>, %n: index) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  croq.parallel (%b) by [%n] : block {
    croq.parallel (%p) by [%c2] : warpgroup {
      %first = arith.cmpi eq, %p, %c0 : index
      croq.inthreads (%first) {
        memref.store %b, %g[%c0] : memref<64xindex>
      }
    }
  }
  return
}

// -----

func.func @dynamic_warpgroups(%g: memref<64xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  croq.parallel (%b) by [%n] : block {
    %s = memref.alloc() : memref<64xf32, #gpu.address_space<workgroup>>
    // expected-error @below {{has inthreads.async roles but a warpgroup count that is not a constant; roles need a static block shape}}
    croq.parallel (%p) by [%n] : warpgroup {
      %producer = arith.cmpi eq, %p, %c0 : index
      croq.inthreads async (%producer) {
        croq.dma.copy %g to %s : memref<64xf32> to memref<64xf32, #gpu.address_space<workgroup>>
      }
    }
  }
  return
}

// -----

// A single-thread producer (`p == 0 && t == 0`, the TMA form) in the comma
// form's thread level: the warpgroup test becomes the role, so that the
// whole warpgroup moves its registers, and the thread test a region inside
// it. The consumer role (`p == 1`) is uniform already and stays as it is.
// CHECK-LABEL: func.func @single_thread_producer
// CHECK: croq.parallel (%[[T:.*]]) by [%{{.*}}] : thread {
// CHECK: %[[WG:.*]] = arith.cmpi eq, %{{.*}}, %c0
// CHECK: %[[LANE:.*]] = arith.cmpi eq, %[[T]], %c0
// CHECK: croq.warp_specialize registers(40, 240) {
// CHECK-NEXT: croq.inthreads async (%[[WG]]) {
// CHECK-NEXT: croq.inthreads (%[[LANE]]) {
// CHECK-NEXT: croq.dma.copy
func.func @single_thread_producer(%g: memref<64xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c128 = arith.constant 128 : index
  croq.parallel (%b) by [%n] : block {
    %s = memref.alloc() : memref<64xf32, #gpu.address_space<workgroup>>
    croq.parallel (%p) by [%c2] : warpgroup {
      croq.parallel (%t) by [%c128] : thread {
        %wg = arith.cmpi eq, %p, %c0 : index
        %lane = arith.cmpi eq, %t, %c0 : index
        %producer = arith.andi %wg, %lane : i1
        croq.inthreads async (%producer) {
          croq.dma.copy %g to %s : memref<64xf32> to memref<64xf32, #gpu.address_space<workgroup>>
        }
        %consumer = arith.cmpi eq, %p, %c1 : index
        croq.inthreads async (%consumer) {
          %v = memref.load %s[%c0] : memref<64xf32, #gpu.address_space<workgroup>>
          %w = arith.addf %v, %v : f32
          memref.store %w, %g[%t] : memref<64xf32>
        }
      }
    }
  }
  return
}

// -----

// A role no warpgroup runs (4 warpgroups, p == 256) would get no budget.
func.func @role_of_no_warpgroup(%g: memref<64xf32>, %n: index) {
  %c256 = arith.constant 256 : index
  %c4 = arith.constant 4 : index
  croq.parallel (%b) by [%n] : block {
    %s = memref.alloc() : memref<64xf32, #gpu.address_space<workgroup>>
    croq.parallel (%p) by [%c4] : warpgroup {
      %producer = arith.cmpi ult, %p, %c256 : index
      croq.inthreads async (%producer) {
        croq.dma.copy %g to %s : memref<64xf32> to memref<64xf32, #gpu.address_space<workgroup>>
      }
      %consumer = arith.cmpi eq, %p, %c256 : index
      // expected-error @below {{is a warp-specialized role that no warpgroup runs: its predicate is false for every index of the parallel}}
      croq.inthreads async (%consumer) {
      }
    }
  }
  return
}

// -----

// A store between the roles cannot move before the first: each role gets a
// croq.warp_specialize of its own (one branch each when lowered).
// CHECK-LABEL: func.func @roles_apart
// CHECK: croq.warp_specialize registers(40) {
// CHECK-NEXT: croq.inthreads async
// CHECK: memref.store
// CHECK: croq.warp_specialize registers(240) {
// CHECK-NEXT: croq.inthreads async
func.func @roles_apart(%g: memref<64xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f32
  croq.parallel (%b) by [%n] : block {
    %s = memref.alloc() : memref<64xf32, #gpu.address_space<workgroup>>
    croq.parallel (%p) by [%c2] : warpgroup {
      %producer = arith.cmpi eq, %p, %c0 : index
      croq.inthreads async (%producer) {
        croq.dma.copy %g to %s : memref<64xf32> to memref<64xf32, #gpu.address_space<workgroup>>
      }
      memref.store %zero, %g[%c1] : memref<64xf32>
      %consumer = arith.cmpi eq, %p, %c1 : index
      croq.inthreads async (%consumer) {
        %v = memref.load %s[%c0] : memref<64xf32, #gpu.address_space<workgroup>>
        %w = arith.addf %v, %v : f32
        memref.store %w, %g[%c0] : memref<64xf32>
      }
    }
  }
  return
}

// -----

// Two blocks per SM ([[launch_bounds(_, 2)]]): ptxas gives each of the
// 384 threads 80 registers (65536 / 768, rounded down to 8), so a block's
// pool is 30720: the producer warpgroup 40 each, the two consumer
// warpgroups share the remaining 25600 (100, rounded down to 96).
// CHECK-LABEL: func.func @two_blocks_per_sm
// CHECK: croq.warp_specialize registers(40, 96) {
func.func @two_blocks_per_sm(%g: memref<64xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  croq.parallel (%b) by [%n] : block {
    %s = memref.alloc() : memref<64xf32, #gpu.address_space<workgroup>>
    croq.parallel (%p) by [%c3] : warpgroup {
      %producer = arith.cmpi eq, %p, %c0 : index
      croq.inthreads async (%producer) {
        croq.dma.copy %g to %s : memref<64xf32> to memref<64xf32, #gpu.address_space<workgroup>>
      }
      %consumer = arith.cmpi uge, %p, %c1 : index
      croq.inthreads async (%consumer) {
        %v = memref.load %s[%c0] : memref<64xf32, #gpu.address_space<workgroup>>
        %w = arith.addf %v, %v : f32
        memref.store %w, %g[%c0] : memref<64xf32>
      }
    }
  } attributes {min_blocks = 2 : i64}
  return
}

// -----

// An MMA kernel with 73 KiB of shared buffers (two fit in the SM's 227
// KiB) whose consumer holds a 64x128 f32 accumulator (64 registers per
// thread, 128 at the entry of two 256-thread blocks): the pass asks for two
// blocks per SM (min_blocks 2) and budgets half the register file. With a
// 120 KiB buffer only one block fits: no min_blocks, the whole file.
// CHECK-LABEL: func.func @two_blocks_chosen
// CHECK: croq.warp_specialize registers(40, 216)
// CHECK: attributes {min_blocks = 2 : i64}
// CHECK-LABEL: func.func @one_block_by_shared_memory
// CHECK: croq.warp_specialize registers(40, 240)
// CHECK-NOT: min_blocks
func.func @two_blocks_chosen(%g: memref<36x1024xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f32
  croq.parallel (%b) by [%n] : block {
    %s = memref.alloc() : memref<36x1024xf16, #gpu.address_space<workgroup>>
    croq.parallel (%p) by [%c2] : warpgroup {
      %producer = arith.cmpi eq, %p, %c0 : index
      croq.inthreads async (%producer) {
        croq.dma.copy %g to %s : memref<36x1024xf16> to memref<36x1024xf16, #gpu.address_space<workgroup>>
      }
      %consumer = arith.cmpi eq, %p, %c1 : index
      croq.inthreads async (%consumer) {
        %acc = croq.mma.fill %zero : f32 -> !croq.frag<acc, 64x128xf32, warpgroup>
      }
    }
  }
  return
}

func.func @one_block_by_shared_memory(%g: memref<60x1024xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f32
  croq.parallel (%b) by [%n] : block {
    %s = memref.alloc() : memref<60x1024xf16, #gpu.address_space<workgroup>>
    croq.parallel (%p) by [%c2] : warpgroup {
      %producer = arith.cmpi eq, %p, %c0 : index
      croq.inthreads async (%producer) {
        croq.dma.copy %g to %s : memref<60x1024xf16> to memref<60x1024xf16, #gpu.address_space<workgroup>>
      }
      %consumer = arith.cmpi eq, %p, %c1 : index
      croq.inthreads async (%consumer) {
        %acc = croq.mma.fill %zero : f32 -> !croq.frag<acc, 64x128xf32, warpgroup>
      }
    }
  }
  return
}

// -----

// The same choice in the comma form, roles in the thread level's body
// (`parallel p by 2 : group-4, t by 128 : thread`).
// CHECK-LABEL: func.func @two_blocks_comma_form
// CHECK: croq.warp_specialize registers(40, 216)
// CHECK: attributes {min_blocks = 2 : i64}
func.func @two_blocks_comma_form(%g: memref<36x1024xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c128 = arith.constant 128 : index
  %zero = arith.constant 0.0 : f32
  croq.parallel (%b) by [%n] : block {
    %s = memref.alloc() : memref<36x1024xf16, #gpu.address_space<workgroup>>
    croq.parallel (%p) by [%c2] : warpgroup {
      croq.parallel (%t) by [%c128] : thread {
        %producer = arith.cmpi eq, %p, %c0 : index
        croq.inthreads async (%producer) {
          croq.dma.copy %g to %s : memref<36x1024xf16> to memref<36x1024xf16, #gpu.address_space<workgroup>>
        }
        %consumer = arith.cmpi eq, %p, %c1 : index
        croq.inthreads async (%consumer) {
          %acc = croq.mma.fill %zero : f32 -> !croq.frag<acc, 64x128xf32, warpgroup>
        }
      }
    }
  }
  return
}

// -----

// A kernel capped at 128 registers ([[maxnreg(128)]], croqc --maxnreg=128)
// starts every thread at 128: the consumer's budget stays within the cap
// (ptxas rejects a setmaxnreg above it), and a role's own budget above it
// is an error.
// CHECK-LABEL: func.func @register_cap
// CHECK: croq.warp_specialize registers(40, 128) {
func.func @register_cap(%g: memref<64xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  croq.parallel (%b) by [%n] : block {
    %s = memref.alloc() : memref<64xf32, #gpu.address_space<workgroup>>
    croq.parallel (%p) by [%c2] : warpgroup {
      %producer = arith.cmpi eq, %p, %c0 : index
      croq.inthreads async (%producer) {
        croq.dma.copy %g to %s : memref<64xf32> to memref<64xf32, #gpu.address_space<workgroup>>
      }
      %consumer = arith.cmpi eq, %p, %c1 : index
      croq.inthreads async (%consumer) {
        %v = memref.load %s[%c0] : memref<64xf32, #gpu.address_space<workgroup>>
        memref.store %v, %g[%c0] : memref<64xf32>
      }
    }
  } attributes {max_registers = 128 : i64}
  return
}

// -----

func.func @register_cap_below_setreg(%g: memref<64xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  croq.parallel (%b) by [%n] : block {
    %s = memref.alloc() : memref<64xf32, #gpu.address_space<workgroup>>
    croq.parallel (%p) by [%c2] : warpgroup {
      %producer = arith.cmpi eq, %p, %c0 : index
      croq.inthreads async (%producer) {
        croq.dma.copy %g to %s : memref<64xf32> to memref<64xf32, #gpu.address_space<workgroup>>
      }
      %consumer = arith.cmpi eq, %p, %c1 : index
      // expected-error @below {{sets 200 registers per thread, above the kernel's cap of 128}}
      croq.inthreads async registers(200) (%consumer) {
        %v = memref.load %s[%c0] : memref<64xf32, #gpu.address_space<workgroup>>
        memref.store %v, %g[%c0] : memref<64xf32>
      }
    }
  } attributes {max_registers = 128 : i64}
  return
}

// -----

// Under a cap below producer-registers (32 < 40), producers get the cap.
// CHECK-LABEL: func.func @register_cap_below_producer_budget
// CHECK: croq.warp_specialize registers(32, 32) {
func.func @register_cap_below_producer_budget(%g: memref<64xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  croq.parallel (%b) by [%n] : block {
    %s = memref.alloc() : memref<64xf32, #gpu.address_space<workgroup>>
    croq.parallel (%p) by [%c2] : warpgroup {
      %producer = arith.cmpi eq, %p, %c0 : index
      croq.inthreads async (%producer) {
        croq.dma.copy %g to %s : memref<64xf32> to memref<64xf32, #gpu.address_space<workgroup>>
      }
      %consumer = arith.cmpi eq, %p, %c1 : index
      croq.inthreads async (%consumer) {
        %v = memref.load %s[%c0] : memref<64xf32, #gpu.address_space<workgroup>>
        memref.store %v, %g[%c0] : memref<64xf32>
      }
    }
  } attributes {max_registers = 32 : i64}
  return
}

// -----

// A register cap of 128 (nvcc's -maxrregcount=128, croqc --maxnreg=128)
// leaves two 256-thread blocks per SM possible, as it does for nvcc: the
// same kernel as @two_blocks_chosen still gets min_blocks 2, its consumer
// the capped 128. A cap of 96 leaves no room for the 64 accumulator
// registers and 40 more: one block.
// CHECK-LABEL: func.func @two_blocks_under_a_cap
// CHECK: croq.warp_specialize registers(40, 128)
// CHECK: attributes {max_registers = 128 : i64, min_blocks = 2 : i64}
// CHECK-LABEL: func.func @one_block_under_a_low_cap
// CHECK: croq.warp_specialize registers(40, 96)
// CHECK-NOT: min_blocks
func.func @two_blocks_under_a_cap(%g: memref<36x1024xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f32
  croq.parallel (%b) by [%n] : block {
    %s = memref.alloc() : memref<36x1024xf16, #gpu.address_space<workgroup>>
    croq.parallel (%p) by [%c2] : warpgroup {
      %producer = arith.cmpi eq, %p, %c0 : index
      croq.inthreads async (%producer) {
        croq.dma.copy %g to %s : memref<36x1024xf16> to memref<36x1024xf16, #gpu.address_space<workgroup>>
      }
      %consumer = arith.cmpi eq, %p, %c1 : index
      croq.inthreads async (%consumer) {
        %acc = croq.mma.fill %zero : f32 -> !croq.frag<acc, 64x128xf32, warpgroup>
      }
    }
  } attributes {max_registers = 128 : i64}
  return
}

func.func @one_block_under_a_low_cap(%g: memref<36x1024xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f32
  croq.parallel (%b) by [%n] : block {
    %s = memref.alloc() : memref<36x1024xf16, #gpu.address_space<workgroup>>
    croq.parallel (%p) by [%c2] : warpgroup {
      %producer = arith.cmpi eq, %p, %c0 : index
      croq.inthreads async (%producer) {
        croq.dma.copy %g to %s : memref<36x1024xf16> to memref<36x1024xf16, #gpu.address_space<workgroup>>
      }
      %consumer = arith.cmpi eq, %p, %c1 : index
      croq.inthreads async (%consumer) {
        %acc = croq.mma.fill %zero : f32 -> !croq.frag<acc, 64x128xf32, warpgroup>
      }
    }
  } attributes {max_registers = 96 : i64}
  return
}
