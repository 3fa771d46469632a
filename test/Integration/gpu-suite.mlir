// The GPU integration suite: every kernel in kernels/ compiled here, built
// with the croq runtime and run against PyTorch references on the GPU.
// Without a GPU this test is UNSUPPORTED, never passed.
// REQUIRES: cuda-gpu, ptxas
// RUN: %croq_src_root/test/Integration/gpu/build-bundle.sh %croq_obj_root %t.bundle
// RUN: %croq_src_root/test/Integration/gpu/run.sh %t.bundle tests | FileCheck %s
// CHECK: sweep: {{[0-9]+}} passed, 0 failed
