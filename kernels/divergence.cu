// divergence: eight different integer mixing loops selected by a switch.
//   per_lane: the selector is lane % 8, so every warp runs all eight loops one after another with
//             4 of 32 lanes active (branch efficiency ~1/8).
//   per_warp: the selector is warp % 8: the same work, but each warp takes a single path.
#include "common/bench.cuh"

__host__ __device__ inline unsigned int mulhi32(unsigned int a, unsigned int b) {
  return static_cast<unsigned int>((static_cast<unsigned long long>(a) * b) >> 32);
}

// Structurally different bodies, so the compiler cannot merge the paths into one loop with selects.
__host__ __device__ inline unsigned int mix(int sel, unsigned int x, int iters) {
  switch (sel) {
    case 0:
      for (int i = 0; i < iters; ++i) x = x * 1664525u + 1013904223u;
      break;
    case 1:
      for (int i = 0; i < iters; ++i) { x ^= x << 13; x ^= x >> 17; x ^= x << 5; }
      break;
    case 2:
      for (int i = 0; i < iters; ++i) x = ((x << 7) | (x >> 25)) + 0x9e3779b9u;
      break;
    case 3:
      for (int i = 0; i < iters; ++i) x = (x * 0x85ebca6bu) ^ (x >> 16);
      break;
    case 4:
      for (int i = 0; i < iters; ++i) { x = (x ^ 61u) ^ (x >> 16); x += x << 3; }
      break;
    case 5:
      for (int i = 0; i < iters; ++i) x = mulhi32(x, 0x27d4eb2du) + x + 1u;
      break;
    case 6:
      for (int i = 0; i < iters; ++i) { x += x << 10; x ^= x >> 6; }
      break;
    default:
      for (int i = 0; i < iters; ++i) x = ~x * 0xc2b2ae35u;
      break;
  }
  return x;
}

__global__ void divergence_per_lane(const unsigned int* __restrict__ in, unsigned int* __restrict__ out, long long n,
                                    int iters) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = mix(static_cast<int>(threadIdx.x & 7), in[i], iters);
}

__global__ void divergence_per_warp(const unsigned int* __restrict__ in, unsigned int* __restrict__ out, long long n,
                                    int iters) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = mix(static_cast<int>((threadIdx.x >> 5) & 7), in[i], iters);
}

namespace {

using namespace bench;
using Kernel = void (*)(const unsigned int*, unsigned int*, long long, int);
constexpr int kThreads = 256;

Result run(const Context& ctx, Kernel k, bool per_lane) {
  const long long n = ctx.sizes.at("n"), iters = ctx.sizes.at("iters");
  const long long shapes[2][2] = {{1003, 5}, {n, iters}};
  return verify_then_time(ctx, shapes, [&](const auto& shape, Trial& trial) {
    const long long N = shape[0], I = shape[1];
    std::vector<unsigned int> h(N), want(N);
    std::mt19937 gen(9);
    for (auto& x : h) x = gen();
    for (long long i = 0; i < N; ++i) {
      const int t = static_cast<int>(i % kThreads);
      want[i] = mix(per_lane ? (t & 7) : ((t >> 5) & 7), h[i], static_cast<int>(I));
    }
    DeviceBuffer<unsigned int> in(h), out(N);
    out.zero();
    auto launch = [&] {
      k<<<ceil_div(N, kThreads), kThreads>>>(in.ptr, out.ptr, N, static_cast<int>(I));
      CUDA_CHECK_LAUNCH();
    };
    trial.run("n=" + std::to_string(N) + ",iters=" + std::to_string(I), launch, matches(out, want));
  });
}

}  // namespace

int main(int argc, char** argv) {
  using bench::Context;
  return bench::run_main(argc, argv, "divergence", {{"n", 1LL << 22}, {"iters", 256}},
                         {
                             {"per_lane", "divergence_per_lane", [](const Context& c) { return run(c, divergence_per_lane, true); }},
                             {"per_warp", "divergence_per_warp", [](const Context& c) { return run(c, divergence_per_warp, false); }},
                         });
}
