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
  Result r;
  r.sizes = ctx.sizes;
  r.verified = true;
  const long long n = ctx.sizes.at("threads"), iters = ctx.sizes.at("iters");
  const long long shapes[2][2] = {{10007, 37}, {n, iters}};
  for (int s = 0; s < 2; ++s) {
    const long long N = shapes[s][0];
    const int I = static_cast<int>(shapes[s][1]);
    std::vector<float> h(N);
    fill_uniform(h, 41);
    DeviceBuffer<float> in(N), out(N);
    in.upload(h);
    out.zero();
    auto launch = [&] {
      fma_many_accumulators<<<ceil_div(N, kThreads), kThreads>>>(in.ptr, out.ptr, N, I);
      CUDA_CHECK_LAUNCH();
    };
    launch();
    CUDA_CHECK(cudaDeviceSynchronize());
    const auto got = out.download();
    std::mt19937 gen(42);
    const long long checks = s == 0 ? N : 1024;
    for (long long q = 0; q < checks; ++q) {
      const long long i = s == 0 ? q : static_cast<long long>(gen() % N);
      const double want = fma_work(h[i], I), e = std::fabs(got[i] - want);
      if (!(e <= 1e-4 * std::fabs(want) + 1e-5)) r.verified = false;
      r.max_error = std::max(r.max_error, std::isnan(e) ? INFINITY : e);
    }
    r.checked_sizes.push_back("threads=" + std::to_string(N) + ",iters=" + std::to_string(I) + (s ? " (sampled)" : ""));
    if (s == 1) r.times_ms = time_runs(launch, ctx.args.warmup, ctx.args.iters);
  }
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  return bench::run_main(argc, argv, "fma", {{"threads", 132LL * 2048 * 4}, {"iters", 4096}},
                         {{"many_accumulators", "fma_many_accumulators", [](const bench::Context& c) { return run(c); }}});
}
