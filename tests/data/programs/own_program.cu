// own_program.cu: a small CUDA program that is NOT one of ncuwrap's bundled benchmarks, for
// `ncuwrap profile -- ./own_program` (benchmarks/device_profile_all.sh builds and profiles it).
//
// It launches three kernels: `fill` once, then `scale_rows` (coalesced) and `scale_columns`
// (reads strided by the row length: uncoalesced) REPS times each, alternating. So
//   ncuwrap profile -- ./own_program                     profiles every launch (a program's default
//                                                          is its first 10 launches; it makes 7),
//   ncuwrap profile -k scale_columns -s 1 -- ./own_program   the 2nd launch of scale_columns,
//   ncuwrap profile --nth-launch 2 -- ./own_program       the 2nd launch of scale_rows and of
//                                                          scale_columns (fill has no 2nd launch).
// `--fail` makes it exit with code 3 after its kernels (to see how a failing program is reported).
//
// Build: nvcc -O3 -arch=sm_90 -lineinfo -o own_program own_program.cu
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#define CHECK(call)                                                                          \
  do {                                                                                       \
    cudaError_t err_ = (call);                                                               \
    if (err_ != cudaSuccess) {                                                               \
      std::fprintf(stderr, "own_program: %s failed: %s\n", #call, cudaGetErrorString(err_)); \
      return 2;                                                                              \
    }                                                                                        \
  } while (0)

__global__ void fill(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = static_cast<float>(i % 1024) * 0.5f;
}

// y[r][c] = a * x[r][c]: consecutive threads touch consecutive addresses.
__global__ void scale_rows(float* y, const float* x, int rows, int cols, float a) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < rows * cols) y[i] = a * x[i];
}

// The same result walked column by column: consecutive threads are `cols` floats apart.
__global__ void scale_columns(float* y, const float* x, int rows, int cols, float a) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < rows * cols) {
    int r = i % rows, c = i / rows;
    y[r * cols + c] = a * x[r * cols + c];
  }
}

int main(int argc, char** argv) {
  int reps = 3;
  bool fail = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--fail")) {
      fail = true;
    } else if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) {
      reps = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: %s [--reps N] [--fail]\n", argv[0]);
      return 2;
    }
  }
  const int rows = 4096, cols = 4096, n = rows * cols, block = 256, grid = (n + block - 1) / block;
  float *x = nullptr, *y = nullptr;
  CHECK(cudaMalloc(&x, n * sizeof(float)));
  CHECK(cudaMalloc(&y, n * sizeof(float)));
  fill<<<grid, block>>>(x, n);
  CHECK(cudaGetLastError());
  for (int r = 0; r < reps; ++r) {
    scale_rows<<<grid, block>>>(y, x, rows, cols, 2.0f);
    CHECK(cudaGetLastError());
    scale_columns<<<grid, block>>>(y, x, rows, cols, 3.0f);
    CHECK(cudaGetLastError());
  }
  CHECK(cudaDeviceSynchronize());
  float probe = 0.f;
  const int at = 5 * cols + 7;
  CHECK(cudaMemcpy(&probe, y + at, sizeof(float), cudaMemcpyDeviceToHost));
  const float want = 3.0f * static_cast<float>(at % 1024) * 0.5f;
  CHECK(cudaFree(x));
  CHECK(cudaFree(y));
  if (probe != want) {
    std::fprintf(stderr, "own_program: wrong result %g (want %g)\n", probe, want);
    return 1;
  }
  std::printf("own_program: ok (%d launches of 3 kernels)\n", 1 + 2 * reps);
  if (fail) {
    std::fprintf(stderr, "own_program: failing on purpose (--fail)\n");
    return 3;
  }
  return 0;
}
