// spill: 32 floats of per-thread state, all updated every iteration (each one mixes in its neighbour).
//   spill:    __launch_bounds__(128, 16) caps the kernel at 32 registers: the state cannot fit, ptxas
//             keeps it in local memory and the hot loop is full of local loads and stores.
//   no_spill: the same source with __launch_bounds__(128) only: everything stays in registers.
// `nvcc -Xptxas -v` shows "spill stores" > 0 for spill_local and 0 for spill_none.
// Verification: every thread at the check size, 1024 sampled threads at full size.
#include "common/bench.cuh"

constexpr int kState = 32;

__host__ __device__ inline float mix_state(float* st, int iters) {
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int k = 0; k < kState; ++k) st[k] = fmaf(st[k], 0.999f, st[(k + 1) % kState] * 0.001f);
  }
  float s = 0.f;
#pragma unroll
  for (int k = 0; k < kState; ++k) s += st[k];
  return s;
}

__device__ __forceinline__ void spill_body(const float* __restrict__ in, float* __restrict__ out, long long n, int iters) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float st[kState];
#pragma unroll
  for (int k = 0; k < kState; ++k) st[k] = in[k * n + i];  // coalesced: state k of all threads is contiguous
  out[i] = mix_state(st, iters);
}

__global__ void __launch_bounds__(128, 16) spill_local(const float* __restrict__ in, float* __restrict__ out, long long n,
                                                       int iters) {
  spill_body(in, out, n, iters);
}

__global__ void __launch_bounds__(128) spill_none(const float* __restrict__ in, float* __restrict__ out, long long n,
                                                  int iters) {
  spill_body(in, out, n, iters);
}

namespace {

using namespace bench;

Result run(const Context& ctx, bool spill) {
  const long long n = ctx.sizes.at("threads"), iters = ctx.sizes.at("iters");
  const long long shapes[2][2] = {{10007, 9}, {n, iters}};
  return verify_then_time(ctx, shapes, [&](const auto& shape, Trial& trial) {
    const long long N = shape[0];
    const int I = static_cast<int>(shape[1]);
    std::vector<float> h(N * kState);
    fill_uniform(h, 61);
    DeviceBuffer<float> in(h), out(N);
    out.zero();
    auto launch = [&] {
      if (spill)
        spill_local<<<ceil_div(N, 128), 128>>>(in.ptr, out.ptr, N, I);
      else
        spill_none<<<ceil_div(N, 128), 128>>>(in.ptr, out.ptr, N, I);
      CUDA_CHECK_LAUNCH();
    };
    auto verify = [&](double* err) {
      const auto got = out.download();
      bool ok = true;
      for (long long i : check_indices(N, trial.full(), 62)) {
        float st[kState];
        for (int k = 0; k < kState; ++k) st[k] = h[k * N + i];
        ok = close_enough(got[i], mix_state(st, I), 1e-5, 1e-4, err) && ok;
      }
      return ok;
    };
    trial.run("threads=" + std::to_string(N) + ",iters=" + std::to_string(I) + (trial.full() ? " (sampled)" : ""), launch, verify);
  });
}

}  // namespace

int main(int argc, char** argv) {
  using bench::Context;
  return bench::run_main(argc, argv, "spill", {{"threads", 1LL << 20}, {"iters", 64}},
                         {
                             {"spill", "spill_local", [](const Context& c) { return run(c, true); }},
                             {"no_spill", "spill_none", [](const Context& c) { return run(c, false); }},
                         });
}
