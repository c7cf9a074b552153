// e2e: a whole offload: copy n floats to the GPU, y = 2x + 1, copy the result back.
//   pageable_serial:   host buffers from malloc (the driver stages them through a pinned bounce buffer),
//                      copy in, kernel, copy out, one after another.
//   pinned_serial:     the same with cudaMallocHost buffers (DMA straight from/to host memory).
//   pinned_overlapped: pinned buffers, the work split in `chunks` pieces over `streams` streams, so the
//                      upload of one chunk overlaps the kernel and the download of others.
// One timed run = the whole pipeline (event on the legacy default stream, which waits for every stream).
// Kernel launches per run: 1 for the serial variants, `chunks` for pinned_overlapped.
#include "common/bench.cuh"

#define E2E_KERNEL(NAME)                                                                           \
  __global__ void NAME(const float* __restrict__ x, float* __restrict__ y, long long n) {          \
    const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;             \
    if (i < n) y[i] = __fmaf_rn(2.f, x[i], 1.f);                                                   \
  }
E2E_KERNEL(e2e_scale_pageable)
E2E_KERNEL(e2e_scale_pinned)
E2E_KERNEL(e2e_scale_overlapped)

namespace {

using namespace bench;
enum class Kind { pageable, pinned, overlapped };
constexpr int kThreads = 256;

Result run(const Context& ctx, Kind kind) {
  const long long n = ctx.sizes.at("n");
  const int chunks = static_cast<int>(ctx.sizes.at("chunks")), nstreams = static_cast<int>(ctx.sizes.at("streams"));
  std::vector<cudaStream_t> streams(nstreams);
  for (auto& s : streams) CUDA_CHECK(cudaStreamCreate(&s));
  Result r = verify_then_time(ctx, {1000003LL, n}, [&](long long count, Trial& trial) {
    const size_t bytes = count * sizeof(float);
    float *hx, *hy;
    std::vector<float> px, py;
    if (kind == Kind::pageable) {
      px.resize(count);
      py.resize(count);
      hx = px.data();
      hy = py.data();
    } else {
      CUDA_CHECK(cudaMallocHost(&hx, bytes));
      CUDA_CHECK(cudaMallocHost(&hy, bytes));
    }
    std::mt19937 gen(31);
    std::uniform_real_distribution<float> dist(-1.f, 1.f);
    for (long long i = 0; i < count; ++i) hx[i] = dist(gen);
    std::fill(hy, hy + count, 0.f);
    DeviceBuffer<float> dx(count), dy(count);
    auto pipeline = [&] {
      if (kind != Kind::overlapped) {
        CUDA_CHECK(cudaMemcpyAsync(dx.ptr, hx, bytes, cudaMemcpyHostToDevice, 0));
        if (kind == Kind::pageable)
          e2e_scale_pageable<<<ceil_div(count, kThreads), kThreads>>>(dx.ptr, dy.ptr, count);
        else
          e2e_scale_pinned<<<ceil_div(count, kThreads), kThreads>>>(dx.ptr, dy.ptr, count);
        CUDA_CHECK_LAUNCH();
        CUDA_CHECK(cudaMemcpyAsync(hy, dy.ptr, bytes, cudaMemcpyDeviceToHost, 0));
        return;
      }
      const long long per = ceil_div(count, chunks);
      for (int c = 0; c < chunks; ++c) {
        const long long lo = c * per, len = std::min(per, count - lo);
        if (len <= 0) break;
        cudaStream_t s = streams[c % nstreams];
        CUDA_CHECK(cudaMemcpyAsync(dx.ptr + lo, hx + lo, len * sizeof(float), cudaMemcpyHostToDevice, s));
        e2e_scale_overlapped<<<ceil_div(len, kThreads), kThreads, 0, s>>>(dx.ptr + lo, dy.ptr + lo, len);
        CUDA_CHECK_LAUNCH();
        CUDA_CHECK(cudaMemcpyAsync(hy + lo, dy.ptr + lo, len * sizeof(float), cudaMemcpyDeviceToHost, s));
      }
    };
    auto verify = [&](double* err) {  // the result is already on the host: the pipeline copies it back
      bool ok = true;
      for (long long i = 0; i < count; ++i) ok = close_enough(hy[i], std::fmaf(2.f, hx[i], 1.f), 0.0, 0.0, err) && ok;
      return ok;
    };
    trial.run(std::to_string(count), pipeline, verify);
    if (kind != Kind::pageable) {
      CUDA_CHECK(cudaFreeHost(hx));
      CUDA_CHECK(cudaFreeHost(hy));
    }
  });
  for (auto& s : streams) CUDA_CHECK(cudaStreamDestroy(s));
  r.extra["launches_per_run"] = kind == Kind::overlapped ? chunks : 1;
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  using bench::Context;
  return bench::run_main(argc, argv, "e2e", {{"n", 1LL << 26}, {"chunks", 8}, {"streams", 4}},
                         {
                             {"pageable_serial", "e2e_scale_pageable", [](const Context& c) { return run(c, Kind::pageable); }},
                             {"pinned_serial", "e2e_scale_pinned", [](const Context& c) { return run(c, Kind::pinned); }},
                             {"pinned_overlapped", "e2e_scale_overlapped", [](const Context& c) { return run(c, Kind::overlapped); }},
                         });
}
