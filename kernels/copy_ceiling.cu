// copy_ceiling: the honest DRAM ceiling every bandwidth benchmark is compared against.
// Two ways to copy n floats: device-to-device cudaMemcpy, and a tuned vectorized copy kernel
// (float4 loads/stores, 4 independent float4 per thread in flight). ncuwrap bench uses the faster one.
#include "common/bench.cuh"

constexpr int kCopyThreads = 256;
constexpr int kCopyUnroll = 4;  // float4 per thread per iteration

// Grid-stride over float4 with kCopyUnroll independent loads issued before the stores; a scalar tail
// copies the last n % 4 floats.
__global__ void __launch_bounds__(kCopyThreads) copy_float4_kernel(const float* __restrict__ in, float* __restrict__ out,
                                                                   long long n) {
  const long long n4 = n / 4;
  const float4* in4 = reinterpret_cast<const float4*>(in);
  float4* out4 = reinterpret_cast<float4*>(out);
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; i + (kCopyUnroll - 1) * stride < n4; i += kCopyUnroll * stride) {
    float4 v[kCopyUnroll];
#pragma unroll
    for (int u = 0; u < kCopyUnroll; ++u) v[u] = __ldcs(in4 + i + u * stride);
#pragma unroll
    for (int u = 0; u < kCopyUnroll; ++u) __stcs(out4 + i + u * stride, v[u]);
  }
  for (; i < n4; i += stride) out4[i] = in4[i];
  const long long t = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t < n - n4 * 4) out[n4 * 4 + t] = in[n4 * 4 + t];
}

namespace {

using namespace bench;

int copy_blocks(const Context& ctx, long long n) {
  // Enough blocks to fill every SM several times over, but no more than the work needs.
  long long want = ceil_div(n / 4, static_cast<long long>(kCopyThreads) * kCopyUnroll);
  long long full = static_cast<long long>(ctx.prop.multiProcessorCount) * 2048 / kCopyThreads * 4;
  return static_cast<int>(std::max(1LL, std::min(want, full)));
}

Result run_copy(const Context& ctx, bool use_memcpy) {
  const long long n = ctx.sizes.at("n");
  const long long check_n = 1000003;  // odd: exercises the scalar tail and partial blocks
  return verify_then_time(ctx, {check_n, n}, [&](long long count, Trial& trial) {
    std::vector<float> h(count);
    fill_uniform(h, 7);
    DeviceBuffer<float> in(h), out(count);
    out.zero();
    auto launch = [&] {
      if (use_memcpy) {
        CUDA_CHECK(cudaMemcpyAsync(out.ptr, in.ptr, count * sizeof(float), cudaMemcpyDeviceToDevice, 0));
      } else {
        copy_float4_kernel<<<copy_blocks(ctx, count), kCopyThreads>>>(in.ptr, out.ptr, count);
        CUDA_CHECK_LAUNCH();
      }
    };
    trial.run(std::to_string(count), launch, matches(out, h));
  });
}

}  // namespace

int main(int argc, char** argv) {
  return bench::run_main(argc, argv, "copy_ceiling", {{"n", 1LL << 27}},
                         {
                             {"memcpy_d2d", "", [](const bench::Context& c) { return run_copy(c, true); }},
                             {"copy_float4", "copy_float4_kernel", [](const bench::Context& c) { return run_copy(c, false); }},
                         });
}
