// Probes how compute-sanitizer's tools treat the Hopper mechanisms croq's
// kernels rely on, in plain CUDA C++ that croq did not generate: an mbarrier
// ring between two warpgroups with and without setmaxnreg register moves,
// and a bulk (async-proxy) copy into shared memory, modified in place and
// stored back through the async proxy. Each probe checks its own result.
//   usage: sanitizer_probe ring|ring-budget|ring-dec|ring-hint|ring-croq|bulk
// The sanitizer mode of suite.py relies on what this shows; see
// test/Integration/gpu/README.md.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#include <vector>

#define CHECK(x)                                                               \
  do {                                                                         \
    cudaError_t e = (x);                                                       \
    if (e != cudaSuccess) {                                                    \
      std::printf("FAIL %s: %s\n", #x, cudaGetErrorString(e));                \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

__device__ __forceinline__ unsigned smem(const void *p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void mbarInit(unsigned long long *b, unsigned n) {
  asm volatile("mbarrier.init.shared.b64 [%0], %1;" ::"r"(smem(b)), "r"(n));
}
__device__ __forceinline__ void mbarArrive(unsigned long long *b) {
  asm volatile("{ .reg .b64 s; mbarrier.arrive.shared.b64 s, [%0]; }" ::"r"(
                   smem(b))
               : "memory");
}
__device__ __forceinline__ void mbarWait(unsigned long long *b,
                                         unsigned parity) {
  asm volatile("{ .reg .pred p; W: mbarrier.try_wait.parity.shared.b64 p, "
               "[%0], %1; @!p bra W; }" ::"r"(smem(b)),
               "r"(parity)
               : "memory");
}
// The form croq emits: with a suspend-time hint of 10 ms.
__device__ __forceinline__ void mbarWaitHint(unsigned long long *b,
                                             unsigned parity) {
  asm volatile("{ .reg .pred p; W: mbarrier.try_wait.parity.shared.b64 p, "
               "[%0], %1, %2; @!p bra W; }" ::"r"(smem(b)),
               "r"(parity), "r"(10000000)
               : "memory");
}

constexpr int kRows = 128, kCols = 4096, kTile = 64, kTiles = kCols / kTile;

// Row sums of a [128, 4096] matrix through a two-slot ring: warpgroup 0
// copies tiles in, warpgroup 1 sums them.
// Budget: 0 none, 1 setmaxnreg 40 / 232 (dec / inc), 2 setmaxnreg 40 / 240
// both as dec (croq's form when the entry count is 255). Hint: croq's wait.
template <int Budget, bool Hint>
__global__ void __launch_bounds__(256, 1) ring(const float *in, float *out) {
  __shared__ float slot[2][kRows][kTile];
  __shared__ unsigned long long full[2], empty[2];
  int t = threadIdx.x % 128;
  if (threadIdx.x == 0)
    for (int s = 0; s < 2; ++s) {
      mbarInit(&full[s], 128);
      mbarInit(&empty[s], 128);
    }
  __syncthreads();
  if (threadIdx.x < 128) {
    if (Budget)
      asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
    for (int k = 0; k < kTiles; ++k) {
      int s = k % 2;
      Hint ? mbarWaitHint(&empty[s], (k / 2) & 1)
           : mbarWait(&empty[s], (k / 2) & 1);
      for (int r = 0; r < kRows; ++r)
        if (t < kTile)
          slot[s][r][t] = in[r * kCols + k * kTile + t];
      mbarArrive(&full[s]);
    }
  } else {
    if (Budget == 1)
      asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
    if (Budget == 2)
      asm volatile("setmaxnreg.dec.sync.aligned.u32 240;");
    float acc = 0;
    for (int s = 0; s < 2; ++s)
      mbarArrive(&empty[s]);
    for (int k = 0; k < kTiles; ++k) {
      int s = k % 2;
      Hint ? mbarWaitHint(&full[s], (k / 2) & 1)
           : mbarWait(&full[s], (k / 2) & 1);
      for (int j = 0; j < kTile; ++j)
        acc += slot[s][t][j];
      mbarArrive(&empty[s]);
    }
    out[t] = acc;
  }
}

// A 4096-byte tile: bulk copy in (mbarrier complete_tx), +1 by 128 threads,
// proxy fence and barrier, bulk store out.
__global__ void bulk(const float *in, float *out) {
  __shared__ alignas(128) float tile[1024];
  __shared__ unsigned long long bar;
  if (threadIdx.x == 0)
    mbarInit(&bar, 1);
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile("{ .reg .b64 s; mbarrier.arrive.expect_tx.shared.b64 s, "
                 "[%0], 4096; }" ::"r"(smem(&bar))
                 : "memory");
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx"
                 "::bytes [%0], [%1], 4096, [%2];" ::"r"(smem(tile)),
                 "l"(in + blockIdx.x * 1024), "r"(smem(&bar))
                 : "memory");
  }
  mbarWait(&bar, 0);
  for (int i = threadIdx.x; i < 1024; i += 128)
    tile[i] += 1.0f;
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], "
                 "4096;" ::"l"(out + blockIdx.x * 1024),
                 "r"(smem(tile))
                 : "memory");
    asm volatile("cp.async.bulk.commit_group;");
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
  }
}

int main(int argc, char **argv) {
  const char *what = argc > 1 ? argv[1] : "ring";
  bool isBulk = !std::strcmp(what, "bulk");
  int n = isBulk ? 1024 * 264 : kRows * kCols;
  std::vector<float> h(n), r(isBulk ? n : kRows);
  for (int i = 0; i < n; ++i)
    h[i] = static_cast<float>(i % 17 - 8);
  float *in, *out;
  CHECK(cudaMalloc(&in, n * sizeof(float)));
  CHECK(cudaMalloc(&out, r.size() * sizeof(float)));
  CHECK(cudaMemcpy(in, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemset(out, 0xff, r.size() * sizeof(float)));
  if (isBulk)
    bulk<<<264, 128>>>(in, out);
  else if (!std::strcmp(what, "ring-budget"))
    ring<1, false><<<1, 256>>>(in, out);
  else if (!std::strcmp(what, "ring-dec"))
    ring<2, false><<<1, 256>>>(in, out);
  else if (!std::strcmp(what, "ring-hint"))
    ring<0, true><<<1, 256>>>(in, out);
  else if (!std::strcmp(what, "ring-croq"))
    ring<2, true><<<1, 256>>>(in, out);
  else
    ring<0, false><<<1, 256>>>(in, out);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaMemcpy(r.data(), out, r.size() * sizeof(float),
                   cudaMemcpyDeviceToHost));
  int bad = 0;
  for (size_t i = 0; i < r.size(); ++i) {
    float want = 0;
    if (isBulk)
      want = h[i] + 1.0f;
    else
      for (int c = 0; c < kCols; ++c)
        want += h[i * kCols + c];
    if (r[i] != want && !bad++)
      std::printf("first difference at %zu: %g vs %g\n", i, r[i], want);
  }
  std::printf("%s %s: %d of %zu differ\n", bad ? "FAIL" : "PASS", what, bad,
              r.size());
  return bad ? 1 : 0;
}
