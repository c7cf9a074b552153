// atomics: a histogram of n uint32 values into `bins` bins (default 4: a handful of very hot addresses).
//   global_hotspot:    one global atomicAdd per element, all of them on the same few addresses, so the
//                      L2 atomic units serialize them.
//   shared_privatized: each block counts into a shared-memory copy of the histogram, then adds it to
//                      the global one: `bins` global atomics per block instead of one per element.
#include "common/bench.cuh"

constexpr int kThreads = 256;
constexpr int kMaxBins = 4096;

__global__ void atomics_global_hotspot(const unsigned int* __restrict__ v, unsigned int* bins, long long n, int nbins) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&bins[v[i] % nbins], 1u);
}

__global__ void atomics_shared_privatized(const unsigned int* __restrict__ v, unsigned int* bins, long long n, int nbins) {
  __shared__ unsigned int local[kMaxBins];
  for (int b = threadIdx.x; b < nbins; b += blockDim.x) local[b] = 0;
  __syncthreads();
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    atomicAdd(&local[v[i] % nbins], 1u);
  __syncthreads();
  for (int b = threadIdx.x; b < nbins; b += blockDim.x)
    if (local[b]) atomicAdd(&bins[b], local[b]);
}

namespace {

using namespace bench;

Result run(const Context& ctx, bool hotspot) {
  const long long n = ctx.sizes.at("n");
  const int nbins = static_cast<int>(ctx.sizes.at("bins"));
  if (nbins > kMaxBins) fail("atomics: bins must be <= %d (got %d)", kMaxBins, nbins);
  return verify_then_time(ctx, {1000003LL, n}, [&](long long count, Trial& trial) {
    std::vector<unsigned int> h(count), want(nbins, 0);
    std::mt19937 gen(81);
    for (auto& x : h) {
      x = gen();
      ++want[x % nbins];
    }
    DeviceBuffer<unsigned int> v(h), bins(nbins);
    const int full = ctx.prop.multiProcessorCount * (2048 / kThreads);
    auto launch = [&] {
      CUDA_CHECK(cudaMemsetAsync(bins.ptr, 0, bins.bytes(), 0));
      if (hotspot)
        atomics_global_hotspot<<<ceil_div(count, kThreads), kThreads>>>(v.ptr, bins.ptr, count, nbins);
      else
        atomics_shared_privatized<<<static_cast<int>(std::min<long long>(full, ceil_div(count, kThreads))), kThreads>>>(
            v.ptr, bins.ptr, count, nbins);
      CUDA_CHECK_LAUNCH();
    };
    trial.run(std::to_string(count), launch, matches(bins, want));
  });
}

}  // namespace

int main(int argc, char** argv) {
  using bench::Context;
  return bench::run_main(argc, argv, "atomics", {{"n", 1LL << 24}, {"bins", 4}},
                         {
                             {"global_hotspot", "atomics_global_hotspot", [](const Context& c) { return run(c, true); }},
                             {"shared_privatized", "atomics_shared_privatized", [](const Context& c) { return run(c, false); }},
                         });
}
