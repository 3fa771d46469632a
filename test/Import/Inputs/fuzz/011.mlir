func.func @negative_wait_sync_future(%g: memref<16xf32>, %l: memref<16xf32, #gpu.address_space<private>>) {
  %f = croq.dma.copy %g to %l : memref<16xf32> to memref<16xf32, #gpu.address_space<private>> -> !croq.future<dma, memref<16xf32, #gpu.address_space<private>>>
  return
}
