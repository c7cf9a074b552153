// A small non-bundled program with templated kernels (names full of '<', ',' and '>'),
// used to capture real reports where kernel names need quoting and several kernels and
// processes share one report. Build: nvcc -O3 -arch=sm_90 -o templated templated.cu
#include <cstdio>
#include <cuda_runtime.h>

template <typename T, int kUnroll>
__global__ void scale_add(T* out, const T* in, T alpha, int n) {
  int i = (blockIdx.x * blockDim.x + threadIdx.x) * kUnroll;
#pragma unroll
  for (int u = 0; u < kUnroll; ++u)
    if (i + u < n) out[i + u] = alpha * in[i + u] + out[i + u];
}

namespace ops {
template <int kStride>
__global__ void strided_copy(float* out, const float* in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n / kStride) out[i] = in[i * kStride];
}
}  // namespace ops

#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
  std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e)); return 2; } } while (0)

int main() {
  const int n = 1 << 22;
  float *a, *b;
  double *c, *d;
  CHECK(cudaMalloc(&a, n * sizeof(float)));
  CHECK(cudaMalloc(&b, n * sizeof(float)));
  CHECK(cudaMalloc(&c, n * sizeof(double)));
  CHECK(cudaMalloc(&d, n * sizeof(double)));
  CHECK(cudaMemset(a, 0, n * sizeof(float)));
  CHECK(cudaMemset(b, 0, n * sizeof(float)));
  CHECK(cudaMemset(c, 0, n * sizeof(double)));
  CHECK(cudaMemset(d, 0, n * sizeof(double)));
  scale_add<float, 4><<<(n / 4 + 255) / 256, 256>>>(a, b, 2.0f, n);
  scale_add<double, 1><<<(n + 255) / 256, 256>>>(c, d, 2.0, n);
  ops::strided_copy<8><<<(n / 8 + 255) / 256, 256>>>(a, b, n);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  std::printf("templated: ok\n");
  return 0;
}
