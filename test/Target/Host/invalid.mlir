// REQUIRES: ptxas
// RUN: croq-translate --croq-to-host %s --split-input-file --verify-diagnostics

// Host code only computes scalars and launches kernels.
func.func @negative_host_store(%x: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  // expected-error @below {{cannot emit host code for 'memref.store': host code computes scalars and launches kernels; move this into a croq.parallel}}
  memref.store %one, %x[%c0] : memref<?xf32>
  return
}

// -----

// expected-error @below {{argument 0 must be a dense global tensor (identity layout, no memory space), got 'memref<4xf32, #gpu.address_space<workgroup>>'}}
func.func @negative_shared_argument(%x: memref<4xf32, #gpu.address_space<workgroup>>) {
  return
}

// -----

// Host code allocates global tensors only.
func.func @negative_host_shared_alloc(%n: index, %x: memref<?xf32>) {
  // expected-error @below {{host code allocates dense global tensors only, got 'memref<?xf32, #gpu.address_space<workgroup>>'; declare shared and local buffers inside a parallel}}
  %a = memref.alloc(%n) : memref<?xf32, #gpu.address_space<workgroup>>
  croq.parallel (%i) by [%n] : block {
    %v = memref.load %a[%i] : memref<?xf32, #gpu.address_space<workgroup>>
    memref.store %v, %x[%i] : memref<?xf32>
  }
  return
}
