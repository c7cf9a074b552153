// gather: out[i] = in[idx[i]] over n floats, for three index patterns (idx is a permutation of 0..n-1):
//   sequential: idx[i] = i (coalesced: the reference).
//   strided:    idx[i] = (i * 33) mod n: neighbouring lanes are 132 bytes apart, one cache line each.
//   random:     a random permutation: every 4-byte load pulls a whole 32-byte sector from DRAM.
#include <numeric>

#include "common/bench.cuh"

__device__ __forceinline__ void gather_body(const float* __restrict__ in, const int* __restrict__ idx, float* __restrict__ out,
                                            long long n) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[idx[i]];
}

__global__ void gather_sequential(const float* __restrict__ in, const int* __restrict__ idx, float* __restrict__ out, long long n) {
  gather_body(in, idx, out, n);
}
__global__ void gather_strided(const float* __restrict__ in, const int* __restrict__ idx, float* __restrict__ out, long long n) {
  gather_body(in, idx, out, n);
}
__global__ void gather_random(const float* __restrict__ in, const int* __restrict__ idx, float* __restrict__ out, long long n) {
  gather_body(in, idx, out, n);
}

namespace {

using namespace bench;
enum class Kind { sequential, strided, random };
constexpr int kThreads = 256;

Result run(const Context& ctx, Kind kind) {
  const long long n = ctx.sizes.at("n");
  if (n > (1LL << 31) - 1) fail("gather: n must fit in int32 indices (got %lld)", n);
  return verify_then_time(ctx, {1000003LL, n}, [&](long long count, Trial& trial) {
    std::vector<float> h(count);
    fill_uniform(h, 71);
    std::vector<int> idx(count);
    std::iota(idx.begin(), idx.end(), 0);
    if (kind == Kind::strided) {
      // (i * 33) mod n is a permutation when gcd(33, n) == 1; otherwise fall back to 37, 41...
      long long s = 33;
      while (std::gcd(s, count) != 1) s += 4;
      for (long long i = 0; i < count; ++i) idx[i] = static_cast<int>((i * s) % count);
    } else if (kind == Kind::random) {
      std::mt19937_64 gen(72);
      for (long long i = count - 1; i > 0; --i) std::swap(idx[i], idx[gen() % (i + 1)]);
    }
    std::vector<float> want(count);
    for (long long i = 0; i < count; ++i) want[i] = h[idx[i]];
    DeviceBuffer<float> in(h), out(count);
    DeviceBuffer<int> didx(idx);
    out.zero();
    auto launch = [&] {
      switch (kind) {
        case Kind::sequential: gather_sequential<<<ceil_div(count, kThreads), kThreads>>>(in.ptr, didx.ptr, out.ptr, count); break;
        case Kind::strided: gather_strided<<<ceil_div(count, kThreads), kThreads>>>(in.ptr, didx.ptr, out.ptr, count); break;
        case Kind::random: gather_random<<<ceil_div(count, kThreads), kThreads>>>(in.ptr, didx.ptr, out.ptr, count); break;
      }
      CUDA_CHECK_LAUNCH();
    };
    trial.run(std::to_string(count), launch, matches(out, want));
  });
}

}  // namespace

int main(int argc, char** argv) {
  using bench::Context;
  return bench::run_main(argc, argv, "gather", {{"n", 1LL << 26}},
                         {
                             {"sequential", "gather_sequential", [](const Context& c) { return run(c, Kind::sequential); }},
                             {"strided", "gather_strided", [](const Context& c) { return run(c, Kind::strided); }},
                             {"random", "gather_random", [](const Context& c) { return run(c, Kind::random); }},
                         });
}
