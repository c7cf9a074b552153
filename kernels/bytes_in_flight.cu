// bytes_in_flight: out = in over n floats, each thread copying K elements of W bytes, all K loads
// issued before the first store (independent), one element per thread per "slot" of the grid:
//   w4_k1   one float per thread            4 bytes in flight per thread
//   w8_k1   one float2 per thread           8
//   w4_k4   four floats per thread          16 (four independent 4-byte loads)
//   w16_k1  one float4 per thread           16 (one 16-byte load)
//   w16_k4  four float4 per thread          64
// The memory latency is the same for each; the bandwidth a copy reaches is the bytes in flight over
// it (Little's law), until DRAM saturates. ncuwrap's estimates read this ladder, measured on the H200,
// as what a fixed kernel can reach for the access width and loads per thread it keeps.
#include "common/bench.cuh"

template <class T, int K>
__device__ __forceinline__ void copy_body(const T* __restrict__ in, T* __restrict__ out, long long count) {
  // Thread t copies elements t, t + stride, ..., t + (K-1) * stride (each warp's accesses contiguous).
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  const long long t = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  T v[K];
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const long long i = t + k * stride;
    if (i < count) v[k] = in[i];
  }
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const long long i = t + k * stride;
    if (i < count) out[i] = v[k];
  }
}

__global__ void inflight_w4_k1(const float* __restrict__ in, float* __restrict__ out, long long n) { copy_body<float, 1>(in, out, n); }
__global__ void inflight_w8_k1(const float2* __restrict__ in, float2* __restrict__ out, long long n) { copy_body<float2, 1>(in, out, n); }
__global__ void inflight_w4_k4(const float* __restrict__ in, float* __restrict__ out, long long n) { copy_body<float, 4>(in, out, n); }
__global__ void inflight_w16_k1(const float4* __restrict__ in, float4* __restrict__ out, long long n) { copy_body<float4, 1>(in, out, n); }
__global__ void inflight_w16_k4(const float4* __restrict__ in, float4* __restrict__ out, long long n) { copy_body<float4, 4>(in, out, n); }

namespace {

using namespace bench;
constexpr int kThreads = 256;

template <class T, int K, class Kernel>
Result run(const Context& ctx, Kernel kernel) {
  const long long n = ctx.sizes.at("n");
  constexpr int per = sizeof(T) / sizeof(float);
  if (n % per) fail("bytes_in_flight: n must be a multiple of %d for %zu-byte elements (got %lld)", per, sizeof(T), n);
  // The odd check size is rounded down to whole elements (1000000 floats: a multiple of 4).
  return verify_then_time(ctx, {1000000LL, n}, [&](long long floats, Trial& trial) {
    std::vector<float> h(floats);
    fill_uniform(h, 101);
    DeviceBuffer<float> in(h), out(floats);
    out.zero();
    const long long count = floats / per;
    const long long threads = ceil_div(count, K);
    trial.run(std::to_string(floats), [&] {
      kernel<<<ceil_div(threads, kThreads), kThreads>>>(reinterpret_cast<const T*>(in.ptr), reinterpret_cast<T*>(out.ptr), count);
      CUDA_CHECK_LAUNCH();
    }, matches(out, h));
  });
}

}  // namespace

int main(int argc, char** argv) {
  using bench::Context;
  return bench::run_main(argc, argv, "bytes_in_flight", {{"n", 1LL << 25}},
                         {
                             {"w4_k1", "inflight_w4_k1", [](const Context& c) { return run<float, 1>(c, inflight_w4_k1); }},
                             {"w8_k1", "inflight_w8_k1", [](const Context& c) { return run<float2, 1>(c, inflight_w8_k1); }},
                             {"w4_k4", "inflight_w4_k4", [](const Context& c) { return run<float, 4>(c, inflight_w4_k4); }},
                             {"w16_k1", "inflight_w16_k1", [](const Context& c) { return run<float4, 1>(c, inflight_w16_k1); }},
                             {"w16_k4", "inflight_w16_k4", [](const Context& c) { return run<float4, 4>(c, inflight_w16_k4); }},
                         });
}
