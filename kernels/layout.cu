// layout: out[i] = 2 * x_i over n particles, where x is one float field of a 32-byte particle, for
// three data layouts (the pairs behind docs/payoff.md's layout and vector-width rows):
//   aos_field:  struct of 8 floats per particle, each thread reads p[i].x: 4 useful bytes of every
//               32-byte sector fetched (uncoalesced_global_loads, eight-fold DRAM over-fetch).
//   soa:        the same floats in their own array, one float a thread: coalesced, but one 4-byte load
//               in flight per thread.
//   soa_float4: the same array read as float4, four elements a thread (n % 4 == 0, else a scalar tail).
#include "common/bench.cuh"

struct Particle {
  float x, y, z, w, vx, vy, vz, m;  // 32 bytes: one sector per particle
};
static_assert(sizeof(Particle) == 32, "a particle is one 32-byte sector");

__global__ void layout_aos_field(const Particle* __restrict__ p, float* __restrict__ out, long long n) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 2.0f * p[i].x;
}

__global__ void layout_soa(const float* __restrict__ x, float* __restrict__ out, long long n) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 2.0f * x[i];
}

__global__ void layout_soa_float4(const float* __restrict__ x, float* __restrict__ out, long long n) {
  const long long q = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const long long quads = n / 4;
  if (q < quads) {
    float4 v = reinterpret_cast<const float4*>(x)[q];
    reinterpret_cast<float4*>(out)[q] = make_float4(2.0f * v.x, 2.0f * v.y, 2.0f * v.z, 2.0f * v.w);
  }
  // The tail (n % 4 elements) by the first threads of the grid.
  const long long tail = quads * 4 + q;
  if (tail < n) out[tail] = 2.0f * x[tail];
}

namespace {

using namespace bench;
enum class Kind { aos_field, soa, soa_float4 };
constexpr int kThreads = 256;

Result run(const Context& ctx, Kind kind) {
  const long long n = ctx.sizes.at("n");
  return verify_then_time(ctx, {1000003LL, n}, [&](long long count, Trial& trial) {
    std::vector<float> x(count);
    fill_uniform(x, 91);
    std::vector<float> want(count);
    for (long long i = 0; i < count; ++i) want[i] = 2.0f * x[i];
    DeviceBuffer<float> out(count);
    out.zero();
    if (kind == Kind::aos_field) {
      std::vector<Particle> h(count);
      for (long long i = 0; i < count; ++i) h[i] = Particle{x[i], -x[i], 0.5f, 1.f, 0.f, 0.f, 0.f, 1.f};
      DeviceBuffer<Particle> p(h);
      trial.run(std::to_string(count), [&] {
        layout_aos_field<<<ceil_div(count, kThreads), kThreads>>>(p.ptr, out.ptr, count);
        CUDA_CHECK_LAUNCH();
      }, matches(out, want));
      return;
    }
    DeviceBuffer<float> dx(x);
    trial.run(std::to_string(count), [&] {
      if (kind == Kind::soa) {
        layout_soa<<<ceil_div(count, kThreads), kThreads>>>(dx.ptr, out.ptr, count);
      } else {
        layout_soa_float4<<<ceil_div(std::max(count / 4, count % 4), kThreads), kThreads>>>(dx.ptr, out.ptr, count);
      }
      CUDA_CHECK_LAUNCH();
    }, matches(out, want));
  });
}

}  // namespace

int main(int argc, char** argv) {
  using bench::Context;
  return bench::run_main(argc, argv, "layout", {{"n", 1LL << 25}},
                         {
                             {"aos_field", "layout_aos_field", [](const Context& c) { return run(c, Kind::aos_field); }},
                             {"soa", "layout_soa", [](const Context& c) { return run(c, Kind::soa); }},
                             {"soa_float4", "layout_soa_float4", [](const Context& c) { return run(c, Kind::soa_float4); }},
                         });
}
