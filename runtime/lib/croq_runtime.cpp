//===- croq_runtime.cpp - host runtime for croq kernels -------------------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#include "croq_runtime.h"

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

// The L2 promotion of every TMA tensor map: 128-byte sectors unless the
// runtime is built with -DCROQ_RT_TMA_L2_PROMOTION=0, 64 or 256 (an A/B
// knob for the benchmarks, bench/RESULTS.md).
#ifndef CROQ_RT_TMA_L2_PROMOTION
#define CROQ_RT_TMA_L2_PROMOTION 128
#endif
static constexpr CUtensorMapL2promotion kL2Promotion =
    CROQ_RT_TMA_L2_PROMOTION == 0     ? CU_TENSOR_MAP_L2_PROMOTION_NONE
    : CROQ_RT_TMA_L2_PROMOTION == 64  ? CU_TENSOR_MAP_L2_PROMOTION_L2_64B
    : CROQ_RT_TMA_L2_PROMOTION == 256 ? CU_TENSOR_MAP_L2_PROMOTION_L2_256B
                                      : CU_TENSOR_MAP_L2_PROMOTION_L2_128B;

namespace {

std::mutex &runtimeMutex() {
  static std::mutex mutex;
  return mutex;
}

/// This thread's last error message, and the stream host code's null
/// stream stands for.
thread_local char lastError[1024];
thread_local CUstream defaultStream = nullptr;
thread_local int synchronousCalls = 1;

/// Prints `croq: <message>` and keeps it as this thread's last error.
void printError(const char *format, va_list args) {
  char message[sizeof(lastError) - 8];
  std::vsnprintf(message, sizeof(message), format, args);
  std::snprintf(lastError, sizeof(lastError), "croq: %s", message);
  std::fprintf(stderr, "%s\n", lastError);
}

void printError(const char *format, ...) {
  va_list args;
  va_start(args, format);
  printError(format, args);
  va_end(args);
}

int report(CUresult result, const char *caller, const char *what,
           const char *kernel) {
  const char *name = "unknown";
  const char *text = "unknown error";
  cuGetErrorName(result, &name);
  cuGetErrorString(result, &text);
  if (kernel)
    printError("%s: %s kernel '%s' failed: %s (%s)", caller, what, kernel,
               name, text);
  else
    printError("%s: %s failed: %s (%s)", caller, what, name, text);
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

/// Finds `kernel` in `module`, loading the module on first use. `*slot` is
/// the kernel's entry in the module's cache, or -1 past its 16 entries.
CUresult lookup(croq_module *module, const char *kernel, CUfunction *out,
                int *slot) {
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
      *slot = int(i);
      return CUDA_SUCCESS;
    }
  *slot = -1;
  result = cuModuleGetFunction(out, module->handle, kernel);
  if (result == CUDA_SUCCESS && module->cache.count < 16) {
    *slot = int(module->cache.count);
    module->cache.names[*slot] = kernel;
    module->cache.functions[*slot] = *out;
    module->cache.staticShared[*slot] = 0;
    module->cache.dynamicShared[*slot] = 0;
    ++module->cache.count;
  }
  return result;
}

/// Opts `function` into `sharedBytes` of dynamic shared memory where its
/// static and dynamic shared memory pass 48 KiB, querying and setting the
/// attribute only when the cache (slot `slot`, -1: none) does not know it.
CUresult configureShared(croq_module *module, int slot, CUfunction function,
                         int32_t sharedBytes, const char **what) {
  if (sharedBytes <= 0)
    return CUDA_SUCCESS;
  if (slot >= 0 && module->cache.dynamicShared[slot] >= sharedBytes)
    return CUDA_SUCCESS;
  int staticBytes = 0;
  if (slot >= 0 && module->cache.staticShared[slot] > 0) {
    staticBytes = module->cache.staticShared[slot] - 1;
  } else {
    CUresult result = cuFuncGetAttribute(
        &staticBytes, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, function);
    if (result != CUDA_SUCCESS) {
      *what = "querying the shared memory of";
      return result;
    }
    if (slot >= 0)
      module->cache.staticShared[slot] = staticBytes + 1;
  }
  if (int64_t(sharedBytes) + staticBytes > 48 * 1024) {
    CUresult result = cuFuncSetAttribute(
        function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, sharedBytes);
    if (result != CUDA_SUCCESS) {
      *what = "configuring shared memory of";
      return result;
    }
  }
  if (slot >= 0)
    module->cache.dynamicShared[slot] = sharedBytes;
  return CUDA_SUCCESS;
}

/// Makes `waiter` (nullptr: the default stream) wait for the work queued on
/// `stream` so far, without blocking the host.
CUresult orderAfter(CUstream waiter, CUstream stream) {
  CUevent ready;
  CUresult result = cuEventCreate(&ready, CU_EVENT_DISABLE_TIMING);
  if (result != CUDA_SUCCESS)
    return result;
  result = cuEventRecord(ready, stream);
  if (result == CUDA_SUCCESS)
    result = cuStreamWaitEvent(waiter, ready, 0);
  cuEventDestroy(ready);
  return result;
}

} // namespace

extern "C" int croq_rt_launch(croq_module *module, const char *kernel,
                              const char *caller, int64_t gridX, int64_t gridY,
                              int64_t gridZ, int64_t blockX, int64_t blockY,
                              int64_t blockZ, int32_t sharedBytes,
                              CUstream stream, void **params, int sync,
                              int cooperative) {
  if (!stream)
    stream = defaultStream;
  // A synchronous call finished every earlier launch before this one; an
  // asynchronous call keeps that order on the device: work on another
  // stream (an owned one, or a stream argument) starts after what was
  // queued on the default stream so far.
  if (!synchronousCalls && stream != defaultStream) {
    CUresult ordered = orderAfter(stream, defaultStream);
    if (ordered != CUDA_SUCCESS)
      return report(ordered, caller, "ordering the launch of", kernel);
  }
  if (gridX <= 0 || gridY <= 0 || gridZ <= 0) {
    if (gridX == 0 || gridY == 0 || gridZ == 0)
      return 0; // An empty grid launches nothing.
    return croq_rt_fail(caller, "kernel '%s': negative grid %lld x %lld x %lld",
                        kernel, (long long)gridX, (long long)gridY,
                        (long long)gridZ);
  }
  // CUDA's grid limits: x below 2^31, y and z at most 65535. croq keeps
  // y and z for constant extents within them and linearizes other grids
  // into x, so what fails here is a grid of 2^31 blocks or more.
  if (gridX > 2147483647LL || gridY > 65535 || gridZ > 65535)
    return croq_rt_fail(caller,
                        "kernel '%s': a grid of %lld x %lld x %lld blocks is "
                        "past what CUDA launches (x below 2^31, y and z at "
                        "most 65535; croq linearizes a grid of run-time "
                        "extents into x): give the block-level parallel "
                        "fewer blocks",
                        kernel, (long long)gridX, (long long)gridY,
                        (long long)gridZ);
  CUfunction function;
  CUresult result;
  {
    // Past 48 KiB a block needs the opt-in, counting the kernel's static
    // shared memory (its mbarriers) beside the dynamic bytes; kernels
    // without dynamic shared memory need no query.
    std::lock_guard<std::mutex> lock(runtimeMutex());
    int slot;
    result = lookup(module, kernel, &function, &slot);
    if (result != CUDA_SUCCESS)
      return report(result, caller, "loading", kernel);
    const char *what = nullptr;
    result = configureShared(module, slot, function, sharedBytes, &what);
    if (result != CUDA_SUCCESS)
      return report(result, caller, what, kernel);
  }
  if (cooperative) {
    // Every block must be resident at once for the grid barrier to
    // complete: check the grid against what the GPU holds, and say so.
    int perSm = 0, sms = 0;
    CUdevice device;
    if (cuCtxGetDevice(&device) == CUDA_SUCCESS &&
        cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                             device) == CUDA_SUCCESS &&
        cuOccupancyMaxActiveBlocksPerMultiprocessor(
            &perSm, function, int(blockX * blockY * blockZ), sharedBytes) ==
            CUDA_SUCCESS &&
        gridX * gridY * gridZ > int64_t(perSm) * sms)
      return croq_rt_fail(caller,
                          "cooperative kernel '%s': its %lld blocks must all "
                          "run at once, but the GPU holds %lld of them (%d "
                          "SMs x %d); launch fewer blocks",
                          kernel, (long long)(gridX * gridY * gridZ),
                          (long long)perSm * sms, sms, perSm);
    // The grid barrier's count and generation start at zero on this launch's
    // stream, whatever an earlier launch left.
    CUdeviceptr barrier;
    size_t barrierBytes;
    if (cuModuleGetGlobal(&barrier, &barrierBytes, module->handle,
                          "__croq_grid_barrier") == CUDA_SUCCESS) {
      result = cuMemsetD32Async(barrier, 0, barrierBytes / 4, stream);
      if (result != CUDA_SUCCESS)
        return report(result, caller, "resetting the grid barrier of", kernel);
    }
    result = cuLaunchCooperativeKernel(function, gridX, gridY, gridZ, blockX,
                                       blockY, blockZ, sharedBytes, stream,
                                       params);
  } else {
    result = cuLaunchKernel(function, gridX, gridY, gridZ, blockX, blockY,
                            blockZ, sharedBytes, stream, params, nullptr);
  }
  if (result != CUDA_SUCCESS)
    return report(result, caller, "launching", kernel);
  if (sync && synchronousCalls) {
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
  if (result != CUDA_SUCCESS)
    return report(result, caller, "creating a stream", nullptr);
  // A non-blocking stream does not wait for the default stream: its work
  // starts after what the caller queued there (a framework's stream, or
  // CUDA's default one) so far, as a launch on that stream would.
  result = orderAfter(*stream, defaultStream);
  if (result != CUDA_SUCCESS)
    return report(result, caller, "ordering a stream after the caller's",
                  nullptr);
  return 0;
}

extern "C" int croq_rt_stream_sync(CUstream stream, const char *caller) {
  if (!stream)
    stream = defaultStream;
  // An asynchronous call keeps the wait's order on the device: the work the
  // caller queues next on the default stream starts after `stream`'s.
  CUresult result = synchronousCalls ? cuStreamSynchronize(stream)
                    : stream == defaultStream ? CUDA_SUCCESS
                                              : orderAfter(defaultStream, stream);
  return result == CUDA_SUCCESS
             ? 0
             : report(result, caller, "waiting for a stream", nullptr);
}

extern "C" int croq_rt_stream_join(CUstream stream, const char *caller) {
  // cuStreamDestroy returns at once and releases the stream when its work
  // is done, so an asynchronous join only orders the default stream.
  CUresult result = synchronousCalls ? cuStreamSynchronize(stream)
                                     : orderAfter(defaultStream, stream);
  if (result != CUDA_SUCCESS)
    return report(result, caller, "joining a stream", nullptr);
  result = cuStreamDestroy(stream);
  return result == CUDA_SUCCESS
             ? 0
             : report(result, caller, "destroying a stream", nullptr);
}

extern "C" int croq_rt_tensor_map(void **map, void *data, int rank,
                                  CUtensorMapDataType type, int elementBytes,
                                  const int64_t *dims, const int64_t *box,
                                  int swizzle, const char *caller,
                                  const char *tensor) {
  if (rank < 1 || rank > 5)
    return croq_rt_fail(caller, "a tensor map has rank 1 to 5, got %d", rank);
  // TMA's own requirements, checked here so that the error names the
  // tensor and the dimension (dims are innermost first; the message counts
  // as the source does, outermost first).
  if (reinterpret_cast<uintptr_t>(data) % 16 != 0)
    return croq_rt_fail(caller, "TMA needs tensor %s to start 16-byte "
                        "aligned; it starts at %p", tensor, data);
  if (rank > 1 && (dims[0] * elementBytes) % 16 != 0)
    return croq_rt_fail(
        caller, "TMA needs the rows of tensor %s a multiple of 16 bytes "
        "apart: dimension %d has extent %lld (%lld bytes); pad it to a "
        "multiple of %d elements", tensor, rank - 1, (long long)dims[0],
        (long long)(dims[0] * elementBytes), 16 / elementBytes);
  cuuint64_t globalDims[5], globalStrides[4];
  cuuint32_t boxDims[5], elementStrides[5];
  int64_t stride = elementBytes;
  for (int d = 0; d < rank; ++d) {
    if (dims[d] < 1)
      return croq_rt_fail(caller, "TMA needs non-empty tensors; dimension %d "
                          "(innermost first) is %lld", d, (long long)dims[d]);
    globalDims[d] = static_cast<cuuint64_t>(dims[d]);
    boxDims[d] = static_cast<cuuint32_t>(box[d]);
    elementStrides[d] = 1;
    if (d > 0)
      globalStrides[d - 1] = static_cast<cuuint64_t>(stride);
    stride *= dims[d];
  }
  CUtensorMapSwizzle swizzleMode =
      swizzle == 128  ? CU_TENSOR_MAP_SWIZZLE_128B
      : swizzle == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
      : swizzle == 32 ? CU_TENSOR_MAP_SWIZZLE_32B
                      : CU_TENSOR_MAP_SWIZZLE_NONE;
  std::lock_guard<std::mutex> lock(runtimeMutex());
  CUresult result = ensureContext();
  if (result != CUDA_SUCCESS)
    return report(result, caller, "initialising CUDA", nullptr);
  // Kernels read the map from device memory. A map is a function of the
  // context and these arguments, so a repeated call finds its copy without
  // encoding it again.
  static std::map<std::string, CUdeviceptr> copies;
  CUcontext context = nullptr;
  cuCtxGetCurrent(&context);
  std::string key;
  auto append = [&](const void *bytes, size_t size) {
    key.append(static_cast<const char *>(bytes), size);
  };
  append(&context, sizeof(context));
  append(&data, sizeof(data));
  append(&type, sizeof(type));
  append(&swizzle, sizeof(swizzle));
  append(globalDims, sizeof(cuuint64_t) * rank);
  append(boxDims, sizeof(cuuint32_t) * rank);
  auto it = copies.find(key);
  if (it == copies.end()) {
    CUtensorMap encoded;
    result = cuTensorMapEncodeTiled(
        &encoded, type, rank, data, globalDims, globalStrides, boxDims,
        elementStrides, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzleMode,
        kL2Promotion, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (result != CUDA_SUCCESS) {
      std::fprintf(stderr,
                   "croq: %s: cannot build a TMA tensor map for tensor %s "
                   "(extents, innermost first: %lld%s)\n",
                   caller, tensor, (long long)dims[0], rank > 1 ? ", ..." : "");
      return report(result, caller, "cuTensorMapEncodeTiled", nullptr);
    }
    CUdeviceptr copy = 0;
    if ((result = cuMemAlloc(&copy, sizeof(encoded))) != CUDA_SUCCESS ||
        (result = cuMemcpyHtoD(copy, &encoded, sizeof(encoded))) !=
            CUDA_SUCCESS)
      return report(result, caller, "placing a tensor map", nullptr);
    it = copies.emplace(std::move(key), copy).first;
  }
  *map = reinterpret_cast<void *>(it->second);
  return 0;
}

extern "C" int croq_rt_alloc(void **ptr, int64_t bytes, const char *caller,
                             const char *what) {
  *ptr = nullptr;
  if (bytes < 0)
    return croq_rt_fail(caller, "%s has a negative size (%lld bytes)", what,
                        (long long)bytes);
  if (bytes == 0)
    return 0;
  CUmemoryPool pool;
  {
    std::lock_guard<std::mutex> lock(runtimeMutex());
    CUresult result = ensureContext();
    CUdevice device;
    if (result == CUDA_SUCCESS)
      result = cuCtxGetDevice(&device);
    if (result != CUDA_SUCCESS)
      return report(result, caller, "initialising CUDA", nullptr);
    // The pool keeps what it has allocated (no release threshold), so the
    // buffers of back-to-back calls come from memory it already holds.
    static std::map<CUdevice, CUmemoryPool> pools;
    auto it = pools.find(device);
    if (it == pools.end()) {
      CUmemPoolProps props = {};
      props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
      props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
      props.location.id = device;
      CUmemoryPool created;
      result = cuMemPoolCreate(&created, &props);
      if (result != CUDA_SUCCESS)
        return report(result, caller, "creating a memory pool", nullptr);
      cuuint64_t keep = ~cuuint64_t(0);
      cuMemPoolSetAttribute(created, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep);
      it = pools.emplace(device, created).first;
    }
    pool = it->second;
  }
  CUdeviceptr memory = 0;
  CUresult result = cuMemAllocFromPoolAsync(&memory, size_t(bytes), pool,
                                            defaultStream);
  if (result != CUDA_SUCCESS) {
    printError("%s: cannot allocate %s (%lld bytes)", caller, what,
               (long long)bytes);
    return static_cast<int>(result);
  }
  *ptr = reinterpret_cast<void *>(memory);
  return 0;
}

extern "C" void croq_rt_free(void *ptr) {
  if (ptr)
    cuMemFreeAsync(reinterpret_cast<CUdeviceptr>(ptr), defaultStream);
}

extern "C" int croq_rt_fail(const char *caller, const char *format, ...) {
  char message[sizeof(lastError) - 8];
  va_list args;
  va_start(args, format);
  std::vsnprintf(message, sizeof(message), format, args);
  va_end(args);
  printError("%s: %s", caller, message);
  return static_cast<int>(CUDA_ERROR_INVALID_VALUE);
}

extern "C" const char *croq_rt_last_error(void) { return lastError; }

extern "C" void croq_rt_set_default_stream(CUstream stream) {
  defaultStream = stream;
}

extern "C" int croq_rt_set_synchronous(int synchronous) {
  int previous = synchronousCalls;
  synchronousCalls = synchronous != 0;
  return previous;
}
