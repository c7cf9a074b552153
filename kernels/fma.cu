// fma: FP32 compute ceiling. Every thread runs `iters` rounds of 8 independent FMA chains
// (acc_k = acc_k * a + b_k), enough independent work per warp to keep the FMA pipes of every SM busy.
// Memory traffic is one load and one store per thread: the kernel is compute bound by construction.
// Verification: every thread at the small check size, 1024 sampled threads at full size.
#include "common/bench.cuh"

constexpr int kAcc = 8;
constexpr int kThreads = 256;

__host__ __device__ inline float fma_work(float x, int iters) {
  float acc[kAcc];
#pragma unroll
  for (int k = 0; k < kAcc; ++k) acc[k] = x + static_cast<float>(k);
  const float a = 0.9999f;
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int k = 0; k < kAcc; ++k) acc[k] = fmaf(acc[k], a, 1e-4f * static_cast<float>(k + 1));
  }
  float s = 0.f;
#pragma unroll
  for (int k = 0; k < kAcc; ++k) s += acc[k];
  return s;
}

__global__ void __launch_bounds__(kThreads) fma_many_accumulators(const float* __restrict__ in, float* __restrict__ out,
                                                                  long long n, int iters) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = fma_work(in[i], iters);
}

namespace {

using namespace bench;

Result run(const Context& ctx) {
  const long long n = ctx.sizes.at("threads"), iters = ctx.sizes.at("iters");
  const long long shapes[2][2] = {{10007, 37}, {n, iters}};
  return verify_then_time(ctx, shapes, [&](const auto& shape, Trial& trial) {
    const long long N = shape[0];
    const int I = static_cast<int>(shape[1]);
    std::vector<float> h(N);
    fill_uniform(h, 41);
    DeviceBuffer<float> in(h), out(N);
    out.zero();
    auto launch = [&] {
      fma_many_accumulators<<<ceil_div(N, kThreads), kThreads>>>(in.ptr, out.ptr, N, I);
      CUDA_CHECK_LAUNCH();
    };
    auto verify = [&](double* err) {
      const auto got = out.download();
      bool ok = true;
      for (long long i : check_indices(N, trial.full(), 42)) ok = close_enough(got[i], fma_work(h[i], I), 1e-5, 1e-4, err) && ok;
      return ok;
    };
    trial.run("threads=" + std::to_string(N) + ",iters=" + std::to_string(I) + (trial.full() ? " (sampled)" : ""), launch, verify);
  });
}

}  // namespace

int main(int argc, char** argv) {
  return bench::run_main(argc, argv, "fma", {{"threads", 132LL * 2048 * 4}, {"iters", 4096}},
                         {{"many_accumulators", "fma_many_accumulators", [](const bench::Context& c) { return run(c); }}});
}
