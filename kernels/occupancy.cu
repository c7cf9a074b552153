// occupancy: one float4 streaming kernel (y = a*x + b, one 16-byte load in flight per thread per
// iteration: `#pragma unroll 1`), so DRAM latency is hidden only by having many warps resident.
// The grid is exactly one wave of resident blocks (cudaOccupancyMaxActiveBlocksPerMultiprocessor).
//   block_256:     lean kernel, 256-thread blocks: full occupancy (the reference).
//   block_32:      lean kernel, 32-thread blocks: the 32-blocks-per-SM limit caps occupancy at 50%.
//   block_1024:    lean kernel, 1024-thread blocks.
//   regs_heavy:    the same loop while 96 floats of state stay live across it: ~118 registers per
//                  thread (sm_90), 2 blocks of 256 per SM, 25% occupancy.
//   launch_bounds: the same source with __launch_bounds__(256, 4): at most 64 registers, so ptxas parks
//                  the cold state in local memory (stored once before the loop, reloaded once after it)
//                  and occupancy doubles. A deliberate, cheap spill: the hot loop does not touch it.
#include "common/bench.cuh"

constexpr int kKeep = 96;

// Returns the last x.x it loaded, so that work after the loop depends on the loop.
__device__ __forceinline__ float stream_loop(const float4* __restrict__ in, float4* out, long long n4, float a, float b) {
  float last = 0.f;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
#pragma unroll 1
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n4; i += stride) {
    const float4 x = in[i];
    out[i] = make_float4(__fmaf_rn(a, x.x, b), __fmaf_rn(a, x.y, b), __fmaf_rn(a, x.z, b), __fmaf_rn(a, x.w, b));
    last = x.x;
  }
  return last;
}

// The lean kernel under one name per block size, so each variant's kernel is unique in a profile.
#define LEAN_KERNEL(NAME)                                                                       \
  __global__ void NAME(const float4* __restrict__ in, float4* out, long long n4, float a, float b) { \
    stream_loop(in, out, n4, a, b);                                                             \
  }
LEAN_KERNEL(occupancy_block32)
LEAN_KERNEL(occupancy_block256)
LEAN_KERNEL(occupancy_block1024)

// `coef` and `out` are not __restrict__: the compiler may not move the loads of `keep` past the stores
// of the loop, so the 96 values really are live across it.
__device__ __forceinline__ void heavy_body(const float4* __restrict__ in, float4* out, long long n4, float a, float b,
                                           const float* coef, float* sink) {
  float keep[kKeep];
#pragma unroll
  for (int k = 0; k < kKeep; ++k) keep[k] = coef[(threadIdx.x + 7 * k) & 255];
  const float last = stream_loop(in, out, n4, a, b);
  float s = 0.f;  // every keep[k] meets a value from the loop: none can be folded before it
#pragma unroll
  for (int k = 0; k < kKeep; ++k) s = __fmaf_rn(keep[k], last + static_cast<float>(k), s);
  sink[static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x] = s;
}

__global__ void occupancy_regs_heavy(const float4* __restrict__ in, float4* out, long long n4, float a, float b,
                                     const float* coef, float* sink) {
  heavy_body(in, out, n4, a, b, coef, sink);
}

__global__ void __launch_bounds__(256, 4) occupancy_launch_bounds(const float4* __restrict__ in, float4* out, long long n4,
                                                                  float a, float b, const float* coef, float* sink) {
  heavy_body(in, out, n4, a, b, coef, sink);
}

namespace {

using namespace bench;
enum class Kind { lean, heavy, bounded };
using LeanKernel = void (*)(const float4*, float4*, long long, float, float);

LeanKernel lean_for(int threads) {
  return threads == 32 ? occupancy_block32 : threads == 1024 ? occupancy_block1024 : occupancy_block256;
}

template <class K>
int one_wave(const Context& ctx, K kernel, int threads) {
  int per_sm = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, 0));
  return std::max(1, per_sm) * ctx.prop.multiProcessorCount;
}

Result run(const Context& ctx, Kind kind, int threads) {
  const long long n4 = ctx.sizes.at("n") / 4;  // the kernel works on whole float4s
  const float a = 1.5f, b = 0.25f;
  std::vector<float> hcoef(256);
  fill_uniform(hcoef, 4);
  DeviceBuffer<float> coef(hcoef);
  int grid = 0;
  switch (kind) {
    case Kind::lean: grid = one_wave(ctx, lean_for(threads), threads); break;
    case Kind::heavy: grid = one_wave(ctx, occupancy_regs_heavy, threads); break;
    case Kind::bounded: grid = one_wave(ctx, occupancy_launch_bounds, threads); break;
  }
  DeviceBuffer<float> sink(static_cast<size_t>(grid) * threads);
  Result r = verify_then_time(ctx, {250001LL, n4}, [&](long long count4, Trial& trial) {
    std::vector<float> h(count4 * 4), want(count4 * 4);
    fill_uniform(h, 8);
    for (size_t i = 0; i < h.size(); ++i) want[i] = std::fmaf(a, h[i], b);
    DeviceBuffer<float> in(h), out(h.size());
    out.zero();
    auto launch = [&] {
      auto* i4 = reinterpret_cast<const float4*>(in.ptr);
      auto* o4 = reinterpret_cast<float4*>(out.ptr);
      switch (kind) {
        case Kind::lean: lean_for(threads)<<<grid, threads>>>(i4, o4, count4, a, b); break;
        case Kind::heavy: occupancy_regs_heavy<<<grid, threads>>>(i4, o4, count4, a, b, coef.ptr, sink.ptr); break;
        case Kind::bounded: occupancy_launch_bounds<<<grid, threads>>>(i4, o4, count4, a, b, coef.ptr, sink.ptr); break;
      }
      CUDA_CHECK_LAUNCH();
    };
    trial.run(std::to_string(count4 * 4), launch, matches(out, want));
  });
  r.extra["grid_blocks"] = grid;
  r.extra["blocks_per_sm"] = grid / ctx.prop.multiProcessorCount;
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  using bench::Context;
  return bench::run_main(argc, argv, "occupancy", {{"n", 1LL << 26}},
                         {
                             {"block_256", "occupancy_block256", [](const Context& c) { return run(c, Kind::lean, 256); }},
                             {"block_32", "occupancy_block32", [](const Context& c) { return run(c, Kind::lean, 32); }},
                             {"block_1024", "occupancy_block1024", [](const Context& c) { return run(c, Kind::lean, 1024); }},
                             {"regs_heavy", "occupancy_regs_heavy", [](const Context& c) { return run(c, Kind::heavy, 256); }},
                             {"launch_bounds", "occupancy_launch_bounds", [](const Context& c) { return run(c, Kind::bounded, 256); }},
                         });
}
