// grid_size: the same grid-stride streaming kernel (y = a*x + b over n floats) launched with
//   few_blocks: `blocks` blocks (default 8) on a GPU with 100+ SMs: most SMs stay idle.
//   full_grid:  one full wave (resident blocks per SM x SM count).
#include "common/bench.cuh"

constexpr int kThreads = 256;

__device__ __forceinline__ void saxpb(const float* __restrict__ x, float* __restrict__ y, long long n, float a, float b) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    y[i] = __fmaf_rn(a, x[i], b);
}

__global__ void grid_few_blocks(const float* __restrict__ x, float* __restrict__ y, long long n, float a, float b) {
  saxpb(x, y, n, a, b);
}

__global__ void grid_full(const float* __restrict__ x, float* __restrict__ y, long long n, float a, float b) {
  saxpb(x, y, n, a, b);
}

namespace {

using namespace bench;

Result run(const Context& ctx, bool few) {
  const long long n = ctx.sizes.at("n");
  int grid = static_cast<int>(ctx.sizes.at("blocks"));
  if (!few) {
    int per_sm = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, grid_full, kThreads, 0));
    grid = std::max(1, per_sm) * ctx.prop.multiProcessorCount;
  }
  const float a = 3.f, b = -1.f;
  Result r = verify_then_time(ctx, {1000003LL, n}, [&](long long count, Trial& trial) {
    std::vector<float> h(count), want(count);
    fill_uniform(h, 51);
    for (long long i = 0; i < count; ++i) want[i] = std::fmaf(a, h[i], b);
    DeviceBuffer<float> x(h), y(count);
    y.zero();
    auto launch = [&] {
      if (few)
        grid_few_blocks<<<grid, kThreads>>>(x.ptr, y.ptr, count, a, b);
      else
        grid_full<<<grid, kThreads>>>(x.ptr, y.ptr, count, a, b);
      CUDA_CHECK_LAUNCH();
    };
    trial.run(std::to_string(count), launch, matches(y, want));
  });
  r.extra["grid_blocks"] = grid;
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  using bench::Context;
  return bench::run_main(argc, argv, "grid_size", {{"n", 1LL << 24}, {"blocks", 8}},
                         {
                             {"few_blocks", "grid_few_blocks", [](const Context& c) { return run(c, true); }},
                             {"full_grid", "grid_full", [](const Context& c) { return run(c, false); }},
                         });
}
