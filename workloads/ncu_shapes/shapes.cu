// Small CUDA programs for the report shapes of issue 52 (workloads/ncu_shapes/capture.sh), one per mode:
//
//   shapes externc   an extern "C" kernel (C linkage: an empty demangled name in the report), a C++ template
//                    kernel beside it, and a second extern "C" kernel: one launch each
//   shapes cluster   a thread-block-cluster kernel (__cluster_dims__(2, 1, 1)): each block reads its
//                    neighbour's shared memory through the cluster (distributed shared memory)
//   shapes graph     three kernels captured into a CUDA graph, the graph launched twice
//   shapes nvtx      one launch outside an NVTX range, two inside the push/pop range "measured"
//
// Built with: nvcc -O3 -arch=sm_90 -lineinfo -o shapes shapes.cu   (NVTX v3 is header-only)
// Each checks its result and exits 1 when it is wrong.
#include <cooperative_groups.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <nvtx3/nvToolsExt.h>

namespace cg = cooperative_groups;

#define CHECK(call)                                                                        \
  do {                                                                                     \
    cudaError_t err_ = (call);                                                             \
    if (err_ != cudaSuccess) {                                                             \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(err_));   \
      std::exit(1);                                                                        \
    }                                                                                      \
  } while (0)

extern "C" __global__ void saxpy_c(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

extern "C" __global__ void block_sum_c(const float* x, float* out, int n) {
  __shared__ float part[256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  part[threadIdx.x] = i < n ? x[i] : 0.0f;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = part[0];
}

template <typename T>
__global__ void scale(T* y, T factor, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] *= factor;
}

// Each block of a pair of blocks writes its shared memory, then reads its neighbour's (cluster rank ^ 1).
__global__ void __cluster_dims__(2, 1, 1) cluster_swap(const float* x, float* y, int n) {
  __shared__ float tile[256];
  cg::cluster_group cluster = cg::this_cluster();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x] = i < n ? x[i] : 0.0f;
  cluster.sync();
  const float* other = cluster.map_shared_rank(tile, cluster.block_rank() ^ 1);
  float v = other[threadIdx.x];
  cluster.sync();  // the neighbour's shared memory stays alive until every block has read it
  if (i < n) y[i] = v;
}

static const int N = 1 << 20;
static const int THREADS = 256;
static const int BLOCKS = (N + THREADS - 1) / THREADS;

struct Buffers {
  float *x, *y, *sums;
  Buffers() {
    CHECK(cudaMalloc(&x, N * sizeof(float)));
    CHECK(cudaMalloc(&y, N * sizeof(float)));
    CHECK(cudaMalloc(&sums, BLOCKS * sizeof(float)));
    std::vector<float> ones(N, 1.0f);
    CHECK(cudaMemcpy(x, ones.data(), N * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(y, ones.data(), N * sizeof(float), cudaMemcpyHostToDevice));
  }
  ~Buffers() { cudaFree(x); cudaFree(y); cudaFree(sums); }
  float y_at(int i) const {
    float v;
    CHECK(cudaMemcpy(&v, y + i, sizeof(float), cudaMemcpyDeviceToHost));
    return v;
  }
};

static int expect(const char* what, float got, float want) {
  if (got != want) {
    std::fprintf(stderr, "%s: got %g, expected %g\n", what, got, want);
    return 1;
  }
  std::printf("%s: ok (%g)\n", what, got);
  return 0;
}

static void three_kernels(Buffers& b, cudaStream_t stream) {
  saxpy_c<<<BLOCKS, THREADS, 0, stream>>>(2.0f, b.x, b.y, N);      // y = 2 + 1 = 3
  scale<float><<<BLOCKS, THREADS, 0, stream>>>(b.y, 2.0f, N);      // y = 6
  block_sum_c<<<BLOCKS, THREADS, 0, stream>>>(b.y, b.sums, N);
}

static int run_externc() {
  Buffers b;
  three_kernels(b, 0);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  return expect("externc", b.y_at(N - 1), 6.0f);
}

static int run_cluster() {
  Buffers b;
  std::vector<float> idx(N);  // x[i] = its block's index: each block then holds its neighbour's
  for (int i = 0; i < N; ++i) idx[i] = float(i / THREADS);
  CHECK(cudaMemcpy(b.x, idx.data(), N * sizeof(float), cudaMemcpyHostToDevice));
  cluster_swap<<<BLOCKS, THREADS>>>(b.x, b.y, N);  // grid: a multiple of the cluster's 2 blocks
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  return expect("cluster", b.y_at(0), 1.0f) | expect("cluster", b.y_at(THREADS), 0.0f);
}

static int run_graph() {
  Buffers b;
  cudaStream_t stream;
  CHECK(cudaStreamCreate(&stream));
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  three_kernels(b, stream);
  CHECK(cudaStreamEndCapture(stream, &graph));
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  CHECK(cudaGraphLaunch(exec, stream));  // y = 6
  CHECK(cudaGraphLaunch(exec, stream));  // y = (6 + 2) * 2 = 16
  CHECK(cudaStreamSynchronize(stream));
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));
  CHECK(cudaStreamDestroy(stream));
  return expect("graph", b.y_at(0), 16.0f);
}

static int run_nvtx() {
  Buffers b;
  scale<float><<<BLOCKS, THREADS>>>(b.y, 1.0f, N);  // outside the range: not profiled with --nvtx-include measured/
  nvtxRangePushA("measured");
  saxpy_c<<<BLOCKS, THREADS>>>(2.0f, b.x, b.y, N);   // y = 3
  scale<float><<<BLOCKS, THREADS>>>(b.y, 2.0f, N);   // y = 6
  nvtxRangePop();
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  return expect("nvtx", b.y_at(1), 6.0f);
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "externc";
  if (!std::strcmp(mode, "externc")) return run_externc();
  if (!std::strcmp(mode, "cluster")) return run_cluster();
  if (!std::strcmp(mode, "graph")) return run_graph();
  if (!std::strcmp(mode, "nvtx")) return run_nvtx();
  std::fprintf(stderr, "usage: shapes externc|cluster|graph|nvtx\n");
  return 2;
}
