// reduction: sum of n int32 values (0..15, so the sum is exact and checked exactly) into a uint64.
//   atomic_per_element: every element is one atomicAdd on the same address (serialized in L2).
//   shared_tree:        textbook block reduction: each thread adds 2 elements, then a shared-memory
//                       tree with a __syncthreads per level; one atomic per block.
//   warp_shuffle:       grid-stride loop with 128-bit loads into a register sum, __shfl_down_sync
//                       within each warp, one shared slot per warp, one atomic per block.
#include "common/bench.cuh"

constexpr int kThreads = 256;

__global__ void reduce_atomic_per_element(const int* __restrict__ in, unsigned long long* out, long long n) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(out, static_cast<unsigned long long>(in[i]));
}

__global__ void __launch_bounds__(kThreads) reduce_shared_tree(const int* __restrict__ in, unsigned long long* out,
                                                                long long n) {
  __shared__ unsigned int s[kThreads];
  const long long i = static_cast<long long>(blockIdx.x) * (2 * kThreads) + threadIdx.x;
  unsigned int v = 0;
  if (i < n) v += in[i];
  if (i + kThreads < n) v += in[i + kThreads];
  s[threadIdx.x] = v;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half >>= 1) {
    if (threadIdx.x < half) s[threadIdx.x] += s[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(out, static_cast<unsigned long long>(s[0]));
}

__global__ void __launch_bounds__(kThreads) reduce_warp_shuffle(const int* __restrict__ in, unsigned long long* out,
                                                                 long long n) {
  __shared__ unsigned int warp_sums[kThreads / 32];
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  const long long tid = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const long long n4 = n / 4;
  const int4* in4 = reinterpret_cast<const int4*>(in);
  unsigned int a0 = 0, a1 = 0;  // two accumulators: two 128-bit loads in flight per iteration
  long long i = tid;
  for (; i + stride < n4; i += 2 * stride) {
    const int4 x = __ldcs(in4 + i), y = __ldcs(in4 + i + stride);
    a0 += x.x + x.y + x.z + x.w;
    a1 += y.x + y.y + y.z + y.w;
  }
  if (i < n4) {
    const int4 x = in4[i];
    a0 += x.x + x.y + x.z + x.w;
  }
  if (tid < n - n4 * 4) a1 += in[n4 * 4 + tid];  // the last n % 4 elements
  unsigned int v = a0 + a1;
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
  if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = v;
  __syncthreads();
  if (threadIdx.x < 32) {
    v = threadIdx.x < kThreads / 32 ? warp_sums[threadIdx.x] : 0;
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
    if (threadIdx.x == 0) atomicAdd(out, static_cast<unsigned long long>(v));
  }
}

namespace {

using namespace bench;

enum class Kind { atomic, tree, shuffle };

void launch(const Context& ctx, Kind kind, const int* in, unsigned long long* out, long long n) {
  CUDA_CHECK(cudaMemsetAsync(out, 0, sizeof(unsigned long long), 0));  // a memset, not a kernel launch
  switch (kind) {
    case Kind::atomic:
      reduce_atomic_per_element<<<ceil_div(n, kThreads), kThreads>>>(in, out, n);
      break;
    case Kind::tree:
      reduce_shared_tree<<<ceil_div(n, 2 * kThreads), kThreads>>>(in, out, n);
      break;
    case Kind::shuffle: {
      const long long full = static_cast<long long>(ctx.prop.multiProcessorCount) * (2048 / kThreads);
      const long long need = std::max(1LL, ceil_div(n / 4, kThreads));
      reduce_warp_shuffle<<<static_cast<int>(std::min(full, need)), kThreads>>>(in, out, n);
      break;
    }
  }
  CUDA_CHECK_LAUNCH();
}

Result run(const Context& ctx, Kind kind) {
  const long long n = ctx.sizes.at("n");
  return verify_then_time(ctx, {1000003LL, n}, [&](long long count, Trial& trial) {
    std::vector<int> h(count);
    std::mt19937 gen(5);
    unsigned long long want = 0;
    for (auto& x : h) {
      x = static_cast<int>(gen() & 15u);
      want += static_cast<unsigned long long>(x);
    }
    DeviceBuffer<int> in(h);
    DeviceBuffer<unsigned long long> out(1);
    auto verify = [&](double* err) {  // the sum is an integer: exact, whatever its size
      const unsigned long long got = out.download()[0];
      return close_enough(static_cast<double>(got), static_cast<double>(want), 0.0, 0.0, err) && got == want;
    };
    trial.run(std::to_string(count), [&] { launch(ctx, kind, in.ptr, out.ptr, count); }, verify);
  });
}

}  // namespace

int main(int argc, char** argv) {
  using bench::Context;
  return bench::run_main(argc, argv, "reduction", {{"n", 1LL << 26}},
                         {
                             {"atomic_per_element", "reduce_atomic_per_element",
                              [](const Context& c) { return run(c, Kind::atomic); }},
                             {"shared_tree", "reduce_shared_tree", [](const Context& c) { return run(c, Kind::tree); }},
                             {"warp_shuffle", "reduce_warp_shuffle", [](const Context& c) { return run(c, Kind::shuffle); }},
                         });
}
