//===- croq_runtime.h - host runtime for croq kernels -----------*- C++ -*-===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//
//
// The small runtime that host code from `croq-translate --croq-to-host`
// calls. It loads kernel images into the current CUDA context (the device's
// primary context when none is current, so it interoperates with the CUDA
// runtime API and frameworks built on it), launches kernels, and manages the
// streams a host function owns. Every function returns 0 on success; on
// failure it prints one line naming the host function and the kernel and
// returns a non-zero CUresult.
//
//===----------------------------------------------------------------------===//

#ifndef CROQ_RUNTIME_H
#define CROQ_RUNTIME_H

#include <cuda.h>
#include <stddef.h>
#include <string.h>
#include <stdint.h>
#include <stdio.h>

/// A kernel image embedded in host code, loaded on first use.
struct croq_module {
  const char *name;
  const void *image;
  size_t size;
  CUmodule handle;
  struct {
    const char *names[16];
    CUfunction functions[16];
    /// One more than the kernel's static shared bytes (0: not queried yet)
    /// and the dynamic bytes it was last opted into, so that launches query
    /// and set the attribute once, not on every call.
    int staticShared[16];
    int dynamicShared[16];
    unsigned count;
  } cache;
};

/// Launches `kernel` of `module` with `params` on `stream` (nullptr: the
/// default stream). With `sync`, and unless this thread's calls are
/// asynchronous (croq_rt_set_synchronous), waits for the stream and reports
/// errors the kernel raised. Dynamic shared memory above 48 KiB is opted into. A
/// `cooperative` kernel is launched with all its blocks resident at once
/// (cuLaunchCooperativeKernel); a grid larger than the GPU holds is an error.
extern "C" int croq_rt_launch(croq_module *module, const char *kernel,
                              const char *caller, int64_t gridX, int64_t gridY,
                              int64_t gridZ, int64_t blockX, int64_t blockY,
                              int64_t blockZ, int32_t sharedBytes,
                              CUstream stream, void **params, int sync,
                              int cooperative);

/// A non-blocking stream owned by one call of `caller`, whose work starts
/// after the work queued so far on the default stream.
extern "C" int croq_rt_stream_create(CUstream *stream, const char *caller);
/// Waits until all work on `stream` (nullptr: the default stream) is done;
/// in asynchronous calls, orders the default stream after it instead.
extern "C" int croq_rt_stream_sync(CUstream stream, const char *caller);
/// Waits for an owned stream and destroys it; in asynchronous calls, orders
/// the default stream after it and destroys it without waiting.
extern "C" int croq_rt_stream_join(CUstream stream, const char *caller);

/// A TMA tensor map over the row-major tensor at `data` with `rank`
/// extents `dims` and tile `box` (both innermost first), swizzle 0, 32, 64
/// or 128 bytes, out-of-range elements read as zero. The map is placed in
/// device memory (cached by content, so a repeated call costs a lookup) and
/// `*map` receives its device address, for a kernel's tensor-map argument.
/// `tensor` names the tensor in errors (a misaligned start, or rows that
/// are not a multiple of 16 bytes apart, with the dimension to pad).
extern "C" int croq_rt_tensor_map(void **map, void *data, int rank,
                                  CUtensorMapDataType type, int elementBytes,
                                  const int64_t *dims, const int64_t *box,
                                  int swizzle, const char *caller,
                                  const char *tensor);

/// Allocates `bytes` of device memory for a tensor a host function declares
/// (`what` names it in errors), ordered on the default stream: from a pool
/// croq keeps per device, so that a repeated call reuses the memory without
/// a device-wide synchronization. Zero bytes give a null pointer.
extern "C" int croq_rt_alloc(void **ptr, int64_t bytes, const char *caller,
                             const char *what);
/// Frees what croq_rt_alloc gave, after the work queued on the default
/// stream so far.
extern "C" void croq_rt_free(void *ptr);

#ifdef __cplusplus
/// Owns a croq_rt_alloc buffer in host code: freed on every return path.
struct croq_rt_allocation {
  void *ptr = nullptr;
  croq_rt_allocation() = default;
  croq_rt_allocation(const croq_rt_allocation &) = delete;
  croq_rt_allocation &operator=(const croq_rt_allocation &) = delete;
  ~croq_rt_allocation() { croq_rt_free(ptr); }
};
#endif

/// Prints `croq: caller: <message>` and returns CUDA_ERROR_INVALID_VALUE.
extern "C" int croq_rt_fail(const char *caller, const char *format, ...);

/// The last error this thread's calls printed (empty if none), for callers
/// that report errors their own way (the Python package raises it).
extern "C" const char *croq_rt_last_error(void);

/// The stream that launches and waits on the null stream use in this
/// thread from now on (nullptr: the CUDA default stream): a framework's
/// current stream, so that kernels order with its work.
extern "C" void croq_rt_set_default_stream(CUstream stream);

/// Whether host functions called from this thread return only when their
/// kernels are done (1, the default: errors a kernel raises are reported by
/// the call) or as soon as their work is queued on the default stream (0:
/// as a framework's operators do; a kernel's fault surfaces at the next
/// synchronization). Returns the previous setting.
extern "C" int croq_rt_set_synchronous(int synchronous);

/// Signed ceiling division, as arith.ceildivsi.
static inline int64_t croq_rt_ceildiv(int64_t a, int64_t b) {
  return a / b + ((a % b != 0) && ((a < 0) == (b < 0)));
}

/// The bits of `x` rounded to the nearest f16 (ties to even; overflow to
/// infinity, NaN kept): an f16 scalar argument, which entry points take as
/// a float.
static inline uint16_t croq_rt_f16_bits(float x) {
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  uint32_t sign = (u >> 16) & 0x8000u;
  uint32_t magnitude = u & 0x7fffffffu;
  if (magnitude > 0x7f800000u) // NaN: quiet, keep the top payload bits
    return (uint16_t)(sign | 0x7e00u | (magnitude >> 13));
  if (magnitude >= 0x477ff000u) // rounds past 65504: infinity
    return (uint16_t)(sign | 0x7c00u);
  if (magnitude < 0x38800000u) { // an f16 subnormal or zero
    if (magnitude < 0x33000000u) // below half the smallest subnormal
      return (uint16_t)sign;
    uint32_t exponent = magnitude >> 23;
    uint32_t mantissa = (magnitude & 0x7fffffu) | 0x800000u;
    uint32_t shift = 126 - exponent; // 14 + (113 - exponent) - 1 + ...
    uint32_t kept = mantissa >> shift;
    uint32_t rest = mantissa & ((1u << shift) - 1);
    uint32_t half = 1u << (shift - 1);
    if (rest > half || (rest == half && (kept & 1)))
      ++kept;
    return (uint16_t)(sign | kept);
  }
  uint32_t rounded = magnitude + 0xfffu + ((magnitude >> 13) & 1);
  return (uint16_t)(sign | ((rounded - 0x38000000u) >> 13));
}

/// The bits of `x` rounded to the nearest bf16 (ties to even, NaN kept).
static inline uint16_t croq_rt_bf16_bits(float x) {
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return (uint16_t)((u >> 16) | 0x40u);
  return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1)) >> 16);
}

#endif // CROQ_RUNTIME_H
