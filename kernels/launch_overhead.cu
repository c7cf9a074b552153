// launch_overhead: `launches` tiny kernels (x[i] += 1 over n = 256 ints, about a microsecond of work
// each), the shape of a program that is bound by launch latency rather than by any kernel.
//   sync_each: cudaDeviceSynchronize after every launch: the GPU idles while the CPU round-trips.
//   no_sync:   the same launches back to back, one synchronization at the end.
//   graph:     the launches captured once into a CUDA graph; a run is one cudaGraphLaunch.
// One timed run = all `launches` kernels. Kernel launches per run: `launches`.
#include "common/bench.cuh"

#define TINY_KERNEL(NAME)                                           \
  __global__ void NAME(int* x, int n) {                             \
    const int i = blockIdx.x * blockDim.x + threadIdx.x;            \
    if (i < n) x[i] += 1;                                           \
  }
TINY_KERNEL(tiny_sync_each)
TINY_KERNEL(tiny_no_sync)
TINY_KERNEL(tiny_graph)

namespace {

using namespace bench;
enum class Kind { sync_each, no_sync, graph };
constexpr int kThreads = 256;

Result run(const Context& ctx, Kind kind) {
  const int n = static_cast<int>(ctx.sizes.at("n")), launches = static_cast<int>(ctx.sizes.at("launches"));
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  Result r = verify_then_time(ctx, {n + 1, n}, [&](int count, Trial& trial) {  // n + 1: a partial second block
    DeviceBuffer<int> x(count);
    x.zero();
    const int blocks = static_cast<int>(ceil_div(count, kThreads));
    cudaGraphExec_t exec = nullptr;
    cudaGraph_t graph = nullptr;
    if (kind == Kind::graph) {
      CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
      for (int l = 0; l < launches; ++l) {
        tiny_graph<<<blocks, kThreads, 0, stream>>>(x.ptr, count);
        CUDA_CHECK_LAUNCH();
      }
      CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
      CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    }
    auto run_once = [&] {
      switch (kind) {
        case Kind::sync_each:
          for (int l = 0; l < launches; ++l) {
            tiny_sync_each<<<blocks, kThreads, 0, stream>>>(x.ptr, count);
            CUDA_CHECK_LAUNCH();
            CUDA_CHECK(cudaDeviceSynchronize());
          }
          break;
        case Kind::no_sync:
          for (int l = 0; l < launches; ++l) {
            tiny_no_sync<<<blocks, kThreads, 0, stream>>>(x.ptr, count);
            CUDA_CHECK_LAUNCH();
          }
          break;
        case Kind::graph:
          CUDA_CHECK(cudaGraphLaunch(exec, stream));
          break;
      }
    };
    auto verify = [&](double* err) {  // every element was incremented once per launch
      const auto got = x.download();
      bool ok = true;
      for (int i = 0; i < count; ++i) ok = close_enough(got[i], launches, 0.0, 0.0, err) && ok;
      return ok;
    };
    trial.run("n=" + std::to_string(count) + ",launches=" + std::to_string(launches), run_once, verify, stream);
    if (exec) CUDA_CHECK(cudaGraphExecDestroy(exec));
    if (graph) CUDA_CHECK(cudaGraphDestroy(graph));
  });
  CUDA_CHECK(cudaStreamDestroy(stream));
  r.extra["launches_per_run"] = launches;
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  using bench::Context;
  return bench::run_main(argc, argv, "launch_overhead", {{"n", 256}, {"launches", 2000}},
                         {
                             {"sync_each", "tiny_sync_each", [](const Context& c) { return run(c, Kind::sync_each); }},
                             {"no_sync", "tiny_no_sync", [](const Context& c) { return run(c, Kind::no_sync); }},
                             {"graph", "tiny_graph", [](const Context& c) { return run(c, Kind::graph); }},
                         });
}
