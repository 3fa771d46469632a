// RUN: croq-opt %s --croq-to-nvvm="format=none" | FileCheck %s
// RUN: croq-opt %s --croq-to-nvvm="format=isa chip=sm_90a features=+ptx83" | FileCheck %s --check-prefix=ISA

// The pipeline outlines each kernel into a gpu.module lowered to NVVM and
// leaves host code with gpu.launch_func.
// CHECK-LABEL: func.func @scale
// CHECK: gpu.launch_func @scale_kernel::@scale_kernel blocks in ({{.*}}) threads in ({{.*}})
// CHECK: gpu.module @scale_kernel [#nvvm.target<O = 3, chip = "sm_90a", features = "+ptx84">]
// CHECK: llvm.func @scale_kernel
// CHECK-SAME: gpu.kernel
// CHECK: nvvm.read.ptx.sreg.ctaid.x
// CHECK: nvvm.read.ptx.sreg.tid.x
// CHECK-NOT: croq.
// ISA: gpu.binary @scale_kernel [#gpu.object<#nvvm.target<O = 3, chip = "sm_90a", features = "+ptx83">
// ISA-SAME: .target sm_90a
func.func @scale(%x: memref<?xf32>, %n: index) {
  %c128 = arith.constant 128 : index
  %blocks = arith.ceildivui %n, %c128 : index
  croq.parallel (%b) by [%blocks] : block {
    croq.parallel (%t) by [%c128] : thread {
      %b0 = arith.muli %b, %c128 : index
      %i = arith.addi %b0, %t : index
      %ok = arith.cmpi ult, %i, %n : index
      scf.if %ok {
        %v = memref.load %x[%i] : memref<?xf32>
        %two = arith.constant 2.0 : f32
        %w = arith.mulf %v, %two : f32
        memref.store %w, %x[%i] : memref<?xf32>
      }
    }
  }
  return
}
