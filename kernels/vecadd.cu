// vecadd: c = a + b over n floats (default 2^26, 768 MiB of traffic per run).
//   coalesced: scalar 32-bit accesses, consecutive lanes -> consecutive addresses; 4 elements per thread
//              (256 apart, so each warp access is still 128 contiguous bytes), all 8 loads in flight
//              before the first add.
//   float4:    one float4 per thread (128-bit loads/stores, 4x fewer instructions), scalar tail.
//   one_per_thread: one element per thread, lane i on element i: the strided kernel with its mapping
//              fixed and nothing else (two loads in flight per thread), the fair "after" of its finding.
//   strided:   the same one-element-per-thread work with a bad mapping: lane i of a warp handles
//              element (i % S) * (n / S) + i / S, so the 32 lanes of a warp touch 32 different
//              cache lines (S = size "stride", default 32) and every request needs 32 sectors.
#include "common/bench.cuh"

constexpr int kThreads = 256;

// Build-time knobs of the scalar kernel (defaults: the tuned choice; scripts/tune_sweep.sh):
//   VA_UNROLL   elements per thread, all loads issued before the first add (independent loads in flight)
//   VA_THREADS  threads per block of the scalar kernel
//   VA_STREAM   1: streaming cache hints (__ldcs / __stcs), 0: plain loads and stores
#ifndef VA_UNROLL
#define VA_UNROLL 4
#endif
#ifndef VA_THREADS
#define VA_THREADS 256
#endif
#ifndef VA_STREAM
#define VA_STREAM 0
#endif
constexpr int kUnroll = VA_UNROLL;
constexpr int kScalarThreads = VA_THREADS;

__device__ __forceinline__ float ld1(const float* p) { return VA_STREAM ? __ldcs(p) : *p; }
__device__ __forceinline__ void st1(float* p, float v) {
  if (VA_STREAM) {
    __stcs(p, v);
  } else {
    *p = v;
  }
}

// Still one 32-bit element per access and lane i of a warp on element i: every warp request is 128
// contiguous bytes. Each thread handles kUnroll elements kScalarThreads apart and issues all 2 * kUnroll
// loads before the first add, so enough bytes are in flight to cover DRAM latency.
__global__ void __launch_bounds__(kScalarThreads) vecadd_coalesced(const float* __restrict__ a, const float* __restrict__ b,
                                                                   float* __restrict__ c, long long n) {
  const long long base = static_cast<long long>(blockIdx.x) * (kScalarThreads * kUnroll) + threadIdx.x;
  float x[kUnroll], y[kUnroll];
  if (base + (kUnroll - 1) * kScalarThreads < n) {  // every element of this thread exists
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      x[u] = ld1(a + base + u * kScalarThreads);
      y[u] = ld1(b + base + u * kScalarThreads);
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) st1(c + base + u * kScalarThreads, x[u] + y[u]);
  } else {  // the last, partial block
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const long long i = base + u * kScalarThreads;
      if (i < n) c[i] = a[i] + b[i];
    }
  }
}

__global__ void vecadd_float4(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
                              long long n) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const long long n4 = n / 4;
  if (i < n4) {
    const float4 x = reinterpret_cast<const float4*>(a)[i];
    const float4 y = reinterpret_cast<const float4*>(b)[i];
    reinterpret_cast<float4*>(c)[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
  }
  if (i < n - n4 * 4) c[n4 * 4 + i] = a[n4 * 4 + i] + b[n4 * 4 + i];  // the last n % 4 elements
}

__global__ void vecadd_one_per_thread(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, long long n) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

__global__ void vecadd_strided(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
                               long long n, long long stride) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const long long cols = n / stride;  // view the first stride*cols elements as a stride x cols matrix
  long long j;
  if (i < stride * cols) {
    j = (i % stride) * cols + i / stride;  // walk it column by column: lanes are `cols` floats apart
  } else {
    j = i;  // the tail that does not fill a column
  }
  if (i < n) c[j] = a[j] + b[j];
}

namespace {

using namespace bench;

enum class Kind { coalesced, float4v, one_per_thread, strided };

void launch(Kind kind, const float* a, const float* b, float* c, long long n, long long stride) {
  switch (kind) {
    case Kind::coalesced:
      vecadd_coalesced<<<ceil_div(n, static_cast<long long>(kScalarThreads) * kUnroll), kScalarThreads>>>(a, b, c, n);
      break;
    case Kind::float4v:
      vecadd_float4<<<std::max(1LL, ceil_div(n / 4, kThreads)), kThreads>>>(a, b, c, n);
      break;
    case Kind::one_per_thread:
      vecadd_one_per_thread<<<ceil_div(n, kThreads), kThreads>>>(a, b, c, n);
      break;
    case Kind::strided:
      vecadd_strided<<<ceil_div(n, kThreads), kThreads>>>(a, b, c, n, stride);
      break;
  }
  CUDA_CHECK_LAUNCH();
}

Result run(const Context& ctx, Kind kind) {
  const long long n = ctx.sizes.at("n"), stride = ctx.sizes.at("stride");
  return verify_then_time(ctx, {1000003LL, n}, [&](long long count, Trial& trial) {
    std::vector<float> ha(count), hb(count), want(count);
    fill_uniform(ha, 1);
    fill_uniform(hb, 2);
    for (long long i = 0; i < count; ++i) want[i] = ha[i] + hb[i];
    DeviceBuffer<float> a(ha), b(hb), c(count);
    c.zero();
    trial.run(std::to_string(count), [&] { launch(kind, a.ptr, b.ptr, c.ptr, count, stride); }, matches(c, want));
  });
}

}  // namespace

int main(int argc, char** argv) {
  using bench::Context;
  return bench::run_main(argc, argv, "vecadd", {{"n", 1LL << 26}, {"stride", 32}},
                         {
                             {"coalesced", "vecadd_coalesced", [](const Context& c) { return run(c, Kind::coalesced); }},
                             {"float4", "vecadd_float4", [](const Context& c) { return run(c, Kind::float4v); }},
                             {"one_per_thread", "vecadd_one_per_thread", [](const Context& c) { return run(c, Kind::one_per_thread); }},
                             {"strided", "vecadd_strided", [](const Context& c) { return run(c, Kind::strided); }},
                         });
}
