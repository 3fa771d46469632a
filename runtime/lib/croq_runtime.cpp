//===- croq_runtime.cpp - host runtime for croq kernels -------------------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#include "croq_runtime.h"

#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <mutex>

namespace {

std::mutex &runtimeMutex() {
  static std::mutex mutex;
  return mutex;
}

int report(CUresult result, const char *caller, const char *what,
           const char *kernel) {
  const char *name = "unknown";
  const char *text = "unknown error";
  cuGetErrorName(result, &name);
  cuGetErrorString(result, &text);
  if (kernel)
    std::fprintf(stderr, "croq: %s: %s kernel '%s' failed: %s (%s)\n", caller,
                 what, kernel, name, text);
  else
    std::fprintf(stderr, "croq: %s: %s failed: %s (%s)\n", caller, what, name,
                 text);
  return static_cast<int>(result);
}

/// Makes a context current: the current one, or device 0's primary context.
CUresult ensureContext() {
  CUresult result = cuInit(0);
  if (result != CUDA_SUCCESS)
    return result;
  CUcontext context = nullptr;
  result = cuCtxGetCurrent(&context);
  if (result != CUDA_SUCCESS || context)
    return result;
  CUdevice device;
  if ((result = cuDeviceGet(&device, 0)) != CUDA_SUCCESS)
    return result;
  if ((result = cuDevicePrimaryCtxRetain(&context, device)) != CUDA_SUCCESS)
    return result;
  return cuCtxSetCurrent(context);
}

CUresult lookup(croq_module *module, const char *kernel, CUfunction *out) {
  std::lock_guard<std::mutex> lock(runtimeMutex());
  CUresult result = ensureContext();
  if (result != CUDA_SUCCESS)
    return result;
  if (!module->handle) {
    result = cuModuleLoadData(&module->handle, module->image);
    if (result != CUDA_SUCCESS)
      return result;
  }
  for (unsigned i = 0; i < module->cache.count; ++i)
    if (std::strcmp(module->cache.names[i], kernel) == 0) {
      *out = module->cache.functions[i];
      return CUDA_SUCCESS;
    }
  result = cuModuleGetFunction(out, module->handle, kernel);
  if (result == CUDA_SUCCESS && module->cache.count < 16) {
    module->cache.names[module->cache.count] = kernel;
    module->cache.functions[module->cache.count++] = *out;
  }
  return result;
}

} // namespace

extern "C" int croq_rt_launch(croq_module *module, const char *kernel,
                              const char *caller, int64_t gridX, int64_t gridY,
                              int64_t gridZ, int64_t blockX, int64_t blockY,
                              int64_t blockZ, int32_t sharedBytes,
                              CUstream stream, void **params, int sync) {
  if (gridX <= 0 || gridY <= 0 || gridZ <= 0) {
    if (gridX == 0 || gridY == 0 || gridZ == 0)
      return 0; // An empty grid launches nothing.
    return croq_rt_fail(caller, "kernel '%s': negative grid %lld x %lld x %lld",
                        kernel, (long long)gridX, (long long)gridY,
                        (long long)gridZ);
  }
  CUfunction function;
  CUresult result = lookup(module, kernel, &function);
  if (result != CUDA_SUCCESS)
    return report(result, caller, "loading", kernel);
  if (sharedBytes > 48 * 1024) {
    result = cuFuncSetAttribute(
        function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, sharedBytes);
    if (result != CUDA_SUCCESS)
      return report(result, caller, "configuring shared memory of", kernel);
  }
  result = cuLaunchKernel(function, gridX, gridY, gridZ, blockX, blockY, blockZ,
                          sharedBytes, stream, params, nullptr);
  if (result != CUDA_SUCCESS)
    return report(result, caller, "launching", kernel);
  if (sync) {
    result = cuStreamSynchronize(stream);
    if (result != CUDA_SUCCESS)
      return report(result, caller, "running", kernel);
  }
  return 0;
}

extern "C" int croq_rt_stream_create(CUstream *stream, const char *caller) {
  CUresult result = ensureContext();
  if (result == CUDA_SUCCESS)
    result = cuStreamCreate(stream, CU_STREAM_NON_BLOCKING);
  return result == CUDA_SUCCESS ? 0
                                : report(result, caller, "creating a stream",
                                         nullptr);
}

extern "C" int croq_rt_stream_sync(CUstream stream, const char *caller) {
  CUresult result = cuStreamSynchronize(stream);
  return result == CUDA_SUCCESS
             ? 0
             : report(result, caller, "waiting for a stream", nullptr);
}

extern "C" int croq_rt_stream_join(CUstream stream, const char *caller) {
  CUresult result = cuStreamSynchronize(stream);
  if (result != CUDA_SUCCESS)
    return report(result, caller, "joining a stream", nullptr);
  result = cuStreamDestroy(stream);
  return result == CUDA_SUCCESS
             ? 0
             : report(result, caller, "destroying a stream", nullptr);
}

extern "C" int croq_rt_fail(const char *caller, const char *format, ...) {
  std::fprintf(stderr, "croq: %s: ", caller);
  va_list args;
  va_start(args, format);
  std::vfprintf(stderr, format, args);
  va_end(args);
  std::fputc('\n', stderr);
  return static_cast<int>(CUDA_ERROR_INVALID_VALUE);
}
