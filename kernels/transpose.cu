// transpose: out[c][r] = in[r][c] for an fp32 rows x cols matrix (default 4096 x 4096).
// The classic ladder: a same-shape copy (the ceiling for this access pattern), a naive transpose
// (coalesced reads, 32-way scattered writes), a shared-memory tile (coalesced both ways, 32-way
// bank conflicts on the column read), a padded tile (conflicts gone), and the best variant: a
// 64x64 tile moved with 128-bit loads and stores and an XOR-swizzled shared tile (no padding,
// no conflicts, 4 independent float4 per thread in flight).
#include "common/bench.cuh"

constexpr int kTile = 32;  // 32 x 32 tile, 32 x 8 threads, 4 elements per thread
constexpr int kRows = 8;

__global__ void transpose_copy(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
  const int c = blockIdx.x * kTile + threadIdx.x;
  const int r0 = blockIdx.y * kTile + threadIdx.y;
#pragma unroll
  for (int j = 0; j < kTile; j += kRows) {
    const int r = r0 + j;
    if (r < rows && c < cols) out[static_cast<size_t>(r) * cols + c] = in[static_cast<size_t>(r) * cols + c];
  }
}

__global__ void transpose_naive(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
  const int c = blockIdx.x * kTile + threadIdx.x;
  const int r0 = blockIdx.y * kTile + threadIdx.y;
#pragma unroll
  for (int j = 0; j < kTile; j += kRows) {
    const int r = r0 + j;
    // Reads are coalesced (threadIdx.x walks a row); writes jump `rows` floats between lanes.
    if (r < rows && c < cols) out[static_cast<size_t>(c) * rows + r] = in[static_cast<size_t>(r) * cols + c];
  }
}

template <int kPad>
__device__ __forceinline__ void transpose_tile(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
  __shared__ float tile[kTile][kTile + kPad];
  const int bx = blockIdx.x * kTile, by = blockIdx.y * kTile;
#pragma unroll
  for (int j = 0; j < kTile; j += kRows) {
    const int r = by + threadIdx.y + j, c = bx + threadIdx.x;
    if (r < rows && c < cols) tile[threadIdx.y + j][threadIdx.x] = in[static_cast<size_t>(r) * cols + c];
  }
  __syncthreads();
#pragma unroll
  for (int j = 0; j < kTile; j += kRows) {
    const int orow = bx + threadIdx.y + j, ocol = by + threadIdx.x;  // output is cols x rows
    // Column read of the tile: without padding all 32 lanes hit the same bank.
    if (orow < cols && ocol < rows) out[static_cast<size_t>(orow) * rows + ocol] = tile[threadIdx.x][threadIdx.y + j];
  }
}

__global__ void transpose_shared(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
  transpose_tile<0>(in, out, rows, cols);
}

__global__ void transpose_padded(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
  transpose_tile<1>(in, out, rows, cols);
}

// ---- best: 64 x 64 tile, 256 threads, float4 global accesses, XOR-swizzled shared memory.
constexpr int kBig = 64;
constexpr int kBigThreads = 256;

// Physical column of logical (r, c) is c ^ swz(r). swz only flips bits 0..4, so it stays in the row.
// Load side: a warp covers 4 rows x 32 columns (float4 per lane); rows differ in r & 3 -> bits 0..1,
// columns in bits 2..4: 32 distinct banks. Store side: a warp reads rows 4*tx+q (tx = 0..15) of two
// adjacent columns; (r >> 2) -> bits 1..4 and the column's bit 0: 32 distinct banks.
__device__ __forceinline__ int swz(int r) { return (((r >> 2) & 15) << 1) ^ (r & 3); }

__global__ void __launch_bounds__(kBigThreads) transpose_swizzled64(const float* __restrict__ in, float* __restrict__ out,
                                                                     int rows, int cols) {
  __shared__ float s[kBig][kBig];
  const int row0 = blockIdx.y * kBig, col0 = blockIdx.x * kBig;
  const int t = threadIdx.x;
  const bool vector_ok = row0 + kBig <= rows && col0 + kBig <= cols && rows % 4 == 0 && cols % 4 == 0;
  if (vector_ok) {  // block-uniform branch: interior tile, 16-byte aligned rows
    const int lane = t & 31, w = t >> 5;
    const int c = 32 * (w & 1) + 4 * (lane & 7);
    float4 v[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int r = 4 * (w >> 1) + 16 * j + (lane >> 3);
      v[j] = *reinterpret_cast<const float4*>(in + static_cast<size_t>(row0 + r) * cols + col0 + c);
    }
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int r = 4 * (w >> 1) + 16 * j + (lane >> 3);
      const int g = swz(r);
      s[r][(c + 0) ^ g] = v[j].x;
      s[r][(c + 1) ^ g] = v[j].y;
      s[r][(c + 2) ^ g] = v[j].z;
      s[r][(c + 3) ^ g] = v[j].w;
    }
    __syncthreads();
    const int tx = t & 15, ty = t >> 4;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int c2 = ty + 16 * j;  // input column = output row
      float4 o;
      o.x = s[4 * tx + 0][c2 ^ swz(4 * tx + 0)];
      o.y = s[4 * tx + 1][c2 ^ swz(4 * tx + 1)];
      o.z = s[4 * tx + 2][c2 ^ swz(4 * tx + 2)];
      o.w = s[4 * tx + 3][c2 ^ swz(4 * tx + 3)];
      *reinterpret_cast<float4*>(out + static_cast<size_t>(col0 + c2) * rows + row0 + 4 * tx) = o;
    }
  } else {  // edge tile: scalar, bounds-checked, same swizzle
    for (int idx = t; idx < kBig * kBig; idx += kBigThreads) {
      const int r = idx / kBig, c = idx % kBig;
      if (row0 + r < rows && col0 + c < cols) s[r][c ^ swz(r)] = in[static_cast<size_t>(row0 + r) * cols + col0 + c];
    }
    __syncthreads();
    for (int idx = t; idx < kBig * kBig; idx += kBigThreads) {
      const int c = idx / kBig, r = idx % kBig;
      if (row0 + r < rows && col0 + c < cols) out[static_cast<size_t>(col0 + c) * rows + row0 + r] = s[r][c ^ swz(r)];
    }
  }
}

namespace {

using namespace bench;
using Kernel = void (*)(const float*, float*, int, int);

void launch(Kernel k, bool big, const float* in, float* out, int rows, int cols) {
  if (big) {
    dim3 grid(ceil_div(cols, kBig), ceil_div(rows, kBig));
    k<<<grid, kBigThreads>>>(in, out, rows, cols);
  } else {
    dim3 grid(ceil_div(cols, kTile), ceil_div(rows, kTile));
    k<<<grid, dim3(kTile, kRows)>>>(in, out, rows, cols);
  }
  CUDA_CHECK_LAUNCH();
}

Result run(const Context& ctx, Kernel k, bool big, bool is_copy) {
  Result r;
  r.sizes = ctx.sizes;
  r.verified = true;
  const int rows = static_cast<int>(ctx.sizes.at("rows")), cols = static_cast<int>(ctx.sizes.at("cols"));
  // 1000 x 1004: not a multiple of 32 or 64, but 16-byte aligned rows, so the swizzled kernel runs
  // both its vector (interior) and scalar (edge) paths.
  const int shapes[2][2] = {{1000, 1004}, {rows, cols}};
  for (const auto& shape : shapes) {
    const int R = shape[0], C = shape[1];
    const size_t n = static_cast<size_t>(R) * C;
    std::vector<float> h(n);
    fill_uniform(h, 11);
    std::vector<float> want(n);
    for (int i = 0; i < R; ++i)
      for (int j = 0; j < C; ++j) want[is_copy ? static_cast<size_t>(i) * C + j : static_cast<size_t>(j) * R + i] = h[static_cast<size_t>(i) * C + j];
    DeviceBuffer<float> din(n), dout(n);
    din.upload(h);
    dout.zero();
    launch(k, big, din.ptr, dout.ptr, R, C);
    CUDA_CHECK(cudaDeviceSynchronize());
    auto got = dout.download();
    r.verified = compare(got, want, n, 0.0, 0.0, &r.max_error) && r.verified;
    r.checked_sizes.push_back(fmt_size({R, C}));
    if (&shape == &shapes[1]) {
      r.times_ms = time_runs([&] { launch(k, big, din.ptr, dout.ptr, R, C); }, ctx.args.warmup, ctx.args.iters);
    }
  }
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  using bench::Context;
  return bench::run_main(
      argc, argv, "transpose", {{"rows", 4096}, {"cols", 4096}},
      {
          {"copy", "transpose_copy", [](const Context& c) { return run(c, transpose_copy, false, true); }},
          {"naive", "transpose_naive", [](const Context& c) { return run(c, transpose_naive, false, false); }},
          {"shared_tile", "transpose_shared", [](const Context& c) { return run(c, transpose_shared, false, false); }},
          {"padded_tile", "transpose_padded", [](const Context& c) { return run(c, transpose_padded, false, false); }},
          {"swizzled64_float4", "transpose_swizzled64",
           [](const Context& c) { return run(c, transpose_swizzled64, true, false); }},
      });
}
