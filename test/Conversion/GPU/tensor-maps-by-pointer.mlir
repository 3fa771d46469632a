// RUN: croq-opt %s --croq-pass-tensor-maps-by-pointer | FileCheck %s

// A tensor-map kernel argument becomes a pointer, cast back at entry; the
// launch passes the map's pointer. Other arguments are untouched.

!map = !nvgpu.tensormap.descriptor<tensor = memref<64x64xf16, #gpu.address_space<workgroup>>, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>

module attributes {gpu.container_module} {

// CHECK-LABEL: func.func @host
// CHECK: %[[P:.*]] = builtin.unrealized_conversion_cast %{{.*}} : !nvgpu.tensormap.descriptor<{{.*}}> to !llvm.ptr
// CHECK: gpu.launch_func @kernels::@k blocks in ({{.*}}) threads in ({{.*}}) args(%{{.*}} : index, %[[P]] : !llvm.ptr)
func.func @host(%m: !map, %n: index) {
  %c1 = arith.constant 1 : index
  gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%n : index, %m : !map)
  return
}

// CHECK: gpu.func @k(%[[N:.*]]: index, %[[ARG:.*]]: !llvm.ptr) kernel
// CHECK-NEXT: %[[MAP:.*]] = builtin.unrealized_conversion_cast %[[ARG]] : !llvm.ptr to !nvgpu.tensormap.descriptor
// CHECK-NEXT: nvgpu.tma.prefetch.descriptor %[[MAP]]
gpu.module @kernels {
  gpu.func @k(%n: index, %m: !map) kernel {
    nvgpu.tma.prefetch.descriptor %m : !map
    gpu.return
  }
}

}
