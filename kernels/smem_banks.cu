// smem_banks: shared-memory bank conflicts. Each warp owns a 32 x 32 fp32 tile in shared memory and
// reads it column-wise (lane = row) `reps` times through a volatile pointer (every load is issued).
//   strided:  tile[32][32]: all 32 lanes of a column read hit the same bank (32-way conflict).
//   padded:   tile[32][33]: one float of padding shifts each row by a bank (conflict-free).
//   swizzled: tile[32][32] with physical column = column ^ row (conflict-free, no wasted memory).
#include "common/bench.cuh"

constexpr int kWarps = 8;

template <int kPad, bool kSwizzle>
__device__ __forceinline__ void column_reads(const float* __restrict__ in, float* __restrict__ out, int reps) {
  __shared__ float tiles[kWarps][32][32 + kPad];
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  const long long warp_global = static_cast<long long>(blockIdx.x) * kWarps + w;
  const float* src = in + warp_global * 1024;
#pragma unroll 4
  for (int r = 0; r < 32; ++r) tiles[w][r][kSwizzle ? (lane ^ r) : lane] = src[r * 32 + lane];  // row-wise: no conflict
  __syncwarp();
  volatile float* row = &tiles[w][lane][0];
  float acc = 0.f;
  for (int it = 0; it < reps; ++it) {
#pragma unroll
    for (int j = 0; j < 32; ++j) {
      const int col = (j + it) & 31;
      acc += row[kSwizzle ? (col ^ lane) : col];
    }
  }
  out[warp_global * 32 + lane] = acc;
}

__global__ void __launch_bounds__(kWarps * 32) smem_strided(const float* __restrict__ in, float* __restrict__ out, int reps) {
  column_reads<0, false>(in, out, reps);
}
__global__ void __launch_bounds__(kWarps * 32) smem_padded(const float* __restrict__ in, float* __restrict__ out, int reps) {
  column_reads<1, false>(in, out, reps);
}
__global__ void __launch_bounds__(kWarps * 32) smem_swizzled(const float* __restrict__ in, float* __restrict__ out, int reps) {
  column_reads<0, true>(in, out, reps);
}

namespace {

using namespace bench;
using Kernel = void (*)(const float*, float*, int);

Result run(const Context& ctx, Kernel k) {
  const long long blocks = ctx.sizes.at("blocks"), reps = ctx.sizes.at("reps");
  const long long shapes[2][2] = {{13, 3}, {blocks, reps}};
  return verify_then_time(ctx, shapes, [&](const auto& shape, Trial& trial) {
    const long long B = shape[0], R = shape[1];
    const long long warps = B * kWarps;
    std::vector<float> h(warps * 1024);
    std::mt19937 gen(3);
    for (auto& x : h) x = static_cast<float>(gen() & 3u);  // small integers: every sum is exact
    std::vector<float> want(warps * 32);
    for (long long w = 0; w < warps; ++w)
      for (int lane = 0; lane < 32; ++lane) {
        double row = 0;
        for (int c = 0; c < 32; ++c) row += h[w * 1024 + lane * 32 + c];
        want[w * 32 + lane] = static_cast<float>(row * R);
      }
    DeviceBuffer<float> in(h), out(want.size());
    out.zero();
    auto launch = [&] {
      k<<<static_cast<int>(B), kWarps * 32>>>(in.ptr, out.ptr, static_cast<int>(R));
      CUDA_CHECK_LAUNCH();
    };
    trial.run("blocks=" + std::to_string(B) + ",reps=" + std::to_string(R), launch, matches(out, want));
  });
}

}  // namespace

int main(int argc, char** argv) {
  using bench::Context;
  return bench::run_main(argc, argv, "smem_banks", {{"blocks", 1056}, {"reps", 64}},
                         {
                             {"strided", "smem_strided", [](const Context& c) { return run(c, smem_strided); }},
                             {"padded", "smem_padded", [](const Context& c) { return run(c, smem_padded); }},
                             {"swizzled", "smem_swizzled", [](const Context& c) { return run(c, smem_swizzled); }},
                         });
}
