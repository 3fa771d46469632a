// RUN: croq-opt %s --croq-merge-kernel-modules --split-input-file --verify-diagnostics | FileCheck %s

// The kernels of two modules in one, @croq_kernels. The second module's
// @helper is another function of the same name: it is renamed where it was,
// with its call. One external declaration of one type stays.
// CHECK-LABEL: module attributes {gpu.container_module}
// CHECK: gpu.launch_func  @croq_kernels::@a
// CHECK: gpu.launch_func  @croq_kernels::@b
// CHECK: gpu.module @croq_kernels {
// CHECK-NEXT: func.func private @ext(f32) -> f32
// CHECK-NEXT: func.func @helper(%{{.*}}: f32) -> f32
// CHECK: gpu.func @a(
// CHECK: call @helper(
// CHECK: func.func @helper_1(%{{.*}}: f32) -> f32
// CHECK: gpu.func @b(
// CHECK: call @helper_1(
// CHECK-NOT: gpu.module
module attributes {gpu.container_module} {
  func.func @host(%x: f32) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @a::@a blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : f32)
    gpu.launch_func @b::@b blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : f32)
    return
  }
  gpu.module @a {
    func.func private @ext(f32) -> f32
    func.func @helper(%v: f32) -> f32 {
      %r = arith.addf %v, %v : f32
      return %r : f32
    }
    gpu.func @a(%v: f32) kernel {
      %r = func.call @helper(%v) : (f32) -> f32
      %e = func.call @ext(%r) : (f32) -> f32
      gpu.return
    }
  }
  gpu.module @b {
    func.func private @ext(f32) -> f32
    func.func @helper(%v: f32) -> f32 {
      %r = arith.mulf %v, %v : f32
      return %r : f32
    }
    gpu.func @b(%v: f32) kernel {
      %r = func.call @helper(%v) : (f32) -> f32
      %e = func.call @ext(%r) : (f32) -> f32
      gpu.return
    }
  }
}

// -----

// Modules for different targets cannot share an image.
module attributes {gpu.container_module} {
  gpu.module @a [#nvvm.target<chip = "sm_90a">] {
    gpu.func @a() kernel {
      gpu.return
    }
  }
  // expected-error @below {{kernel module @b has other attributes than @a, so their kernels cannot share one image}}
  gpu.module @b [#nvvm.target<chip = "sm_80">] {
    gpu.func @b() kernel {
      gpu.return
    }
  }
}
