// transpose: out[c][r] = in[r][c] for an fp32 rows x cols matrix (default 4096 x 4096).
// The classic ladder: a same-shape copy (the ceiling for this access pattern), a naive transpose
// (coalesced reads, 32-way scattered writes), a shared-memory tile (coalesced both ways, 32-way
// bank conflicts on the column read), a padded tile (conflicts gone), and the best variant: a
// 64x64 tile moved with 128-bit loads and stores through an XOR-swizzled shared tile (no padding,
// no conflicts) by 512 threads, 2 independent float4 per thread each way (tuned on an H200 with
// scripts/tune_sweep.sh: knobs TP_* below), and (new, unverified on a GPU) the same tile
// two at a time per block: swizzled128x64.
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

// ---- best: 64 x 64 tile, float4 global accesses, XOR-swizzled shared memory, one tile after another
// per block with the next tile's loads in flight while the current one is written out.
// Build-time knobs (the defaults are the tuned choice; scripts/tune_sweep.sh sweeps them):
//   TP_THREADS  threads per block: each moves 64 * 64 / 4 / TP_THREADS float4 in each direction per tile
//   TP_STREAM   1: streaming cache hints (__ldcs / __stcs: evict-first), 0: plain loads and stores
//   TP_PERSIST  1: a persistent grid (resident blocks only) looping over the tiles, prefetching the next
//               tile into registers before writing the current one; 0: one block per tile
//   TP_ORDER    0: consecutive blocks walk along a row of tiles, 1: down a column of tiles
#ifndef TP_THREADS
#define TP_THREADS 512
#endif
#ifndef TP_STREAM
#define TP_STREAM 0
#endif
#ifndef TP_PERSIST
#define TP_PERSIST 0
#endif
#ifndef TP_ORDER
#define TP_ORDER 0
#endif
constexpr int kBig = 64;
constexpr int kBigThreads = TP_THREADS;
constexpr int kPass = kBigThreads / 16;  // tile rows covered by one pass of the block
constexpr int kVec = kBig / kPass;       // float4 per thread per tile
static_assert(kBigThreads % 64 == 0 && kBigThreads <= 1024, "TP_THREADS: a multiple of 64, at most 1024");

// Physical column of logical (r, c) is c ^ swz(r). swz only flips bits 0..4, so it stays in the row.
// Load side: a warp covers 4 rows x 32 columns (float4 per lane); rows differ in r & 3 -> bits 0..1,
// columns in bits 2..4: 32 distinct banks. Store side: a warp reads rows 4*tx+q (tx = 0..15) of two
// adjacent columns; (r >> 2) -> bits 1..4 and the column's bit 0: 32 distinct banks.
__device__ __forceinline__ int swz(int r) { return (((r >> 2) & 15) << 1) ^ (r & 3); }

__device__ __forceinline__ float4 ld4(const float* p) {
  return TP_STREAM ? __ldcs(reinterpret_cast<const float4*>(p)) : *reinterpret_cast<const float4*>(p);
}
__device__ __forceinline__ void st4(float* p, float4 v) {
  if (TP_STREAM) {
    __stcs(reinterpret_cast<float4*>(p), v);
  } else {
    *reinterpret_cast<float4*>(p) = v;
  }
}

struct Tiling {
  int rows, cols, tiles_x, tiles_y, tiles;
  __device__ Tiling(int r, int c)
      : rows(r), cols(c), tiles_x((c + kBig - 1) / kBig), tiles_y((r + kBig - 1) / kBig), tiles(tiles_x * tiles_y) {}
  __device__ int row0(int tile) const { return (TP_ORDER ? tile % tiles_y : tile / tiles_x) * kBig; }
  __device__ int col0(int tile) const { return (TP_ORDER ? tile / tiles_y : tile % tiles_x) * kBig; }
  // Interior tile with 16-byte aligned rows: the vector path.
  __device__ bool vector_ok(int tile) const {
    return row0(tile) + kBig <= rows && col0(tile) + kBig <= cols && rows % 4 == 0 && cols % 4 == 0;
  }
};

// Issue the global loads of the 64 x 64 tile at (row0, col0): kVec independent float4 per thread.
__device__ __forceinline__ void load_at(const float* __restrict__ in, int cols, int row0, int col0, float4 (&v)[kVec]) {
  const int t = threadIdx.x, lane = t & 31, w = t >> 5;
  const int c = col0 + 32 * (w & 1) + 4 * (lane & 7);
#pragma unroll
  for (int j = 0; j < kVec; ++j) {
    const int r = 4 * (w >> 1) + kPass * j + (lane >> 3);
    v[j] = ld4(in + static_cast<size_t>(row0 + r) * cols + c);
  }
}

__device__ __forceinline__ void tile_load(const float* __restrict__ in, const Tiling& g, int tile, float4 (&v)[kVec]) {
  load_at(in, g.cols, g.row0(tile), g.col0(tile), v);
}

__device__ __forceinline__ void tile_stash(float (*s)[kBig], const float4 (&v)[kVec]) {
  const int t = threadIdx.x, lane = t & 31, w = t >> 5;
  const int c = 32 * (w & 1) + 4 * (lane & 7);
#pragma unroll
  for (int j = 0; j < kVec; ++j) {
    const int r = 4 * (w >> 1) + kPass * j + (lane >> 3);
    const int g = swz(r);
    s[r][(c + 0) ^ g] = v[j].x;
    s[r][(c + 1) ^ g] = v[j].y;
    s[r][(c + 2) ^ g] = v[j].z;
    s[r][(c + 3) ^ g] = v[j].w;
  }
}

// Write the stashed 64 x 64 tile of input (row0, col0) to the output (rows x ... transposed).
__device__ __forceinline__ void emit_at(float (*s)[kBig], float* __restrict__ out, int rows, int row0, int col0) {
  const int tx = threadIdx.x & 15, ty = threadIdx.x >> 4;
#pragma unroll
  for (int j = 0; j < kVec; ++j) {
    const int c2 = ty + kPass * j;  // input column = output row
    float4 o;
    o.x = s[4 * tx + 0][c2 ^ swz(4 * tx + 0)];
    o.y = s[4 * tx + 1][c2 ^ swz(4 * tx + 1)];
    o.z = s[4 * tx + 2][c2 ^ swz(4 * tx + 2)];
    o.w = s[4 * tx + 3][c2 ^ swz(4 * tx + 3)];
    st4(out + static_cast<size_t>(col0 + c2) * rows + row0 + 4 * tx, o);
  }
}

__device__ __forceinline__ void tile_emit(float (*s)[kBig], float* __restrict__ out, const Tiling& g, int tile) {
  emit_at(s, out, g.rows, g.row0(tile), g.col0(tile));
}

// An edge tile: scalar, bounds-checked, same swizzle (ends with the tile read out of `s`).
__device__ __forceinline__ void scalar_tile(float (*s)[kBig], const float* __restrict__ in, float* __restrict__ out, int rows,
                                            int cols, int row0, int col0) {
  for (int idx = threadIdx.x; idx < kBig * kBig; idx += kBigThreads) {
    const int r = idx / kBig, c = idx % kBig;
    if (row0 + r < rows && col0 + c < cols) s[r][c ^ swz(r)] = in[static_cast<size_t>(row0 + r) * cols + col0 + c];
  }
  __syncthreads();
  for (int idx = threadIdx.x; idx < kBig * kBig; idx += kBigThreads) {
    const int c = idx / kBig, r = idx % kBig;
    if (row0 + r < rows && col0 + c < cols) out[static_cast<size_t>(col0 + c) * rows + row0 + r] = s[r][c ^ swz(r)];
  }
}

__global__ void __launch_bounds__(kBigThreads) transpose_swizzled64(const float* __restrict__ in, float* __restrict__ out,
                                                                     int rows, int cols) {
  __shared__ float s[kBig][kBig];
  const Tiling g(rows, cols);
  float4 v[kVec];
  int tile = blockIdx.x;
  if (tile < g.tiles && g.vector_ok(tile)) tile_load(in, g, tile, v);
  while (tile < g.tiles) {  // once per block unless the grid is persistent
    const int next = TP_PERSIST ? tile + static_cast<int>(gridDim.x) : g.tiles;
    const bool next_vec = next < g.tiles && g.vector_ok(next);
    if (g.vector_ok(tile)) {  // block-uniform branch
      tile_stash(s, v);
      __syncthreads();
      if (next_vec) tile_load(in, g, next, v);  // in flight while this tile is written out
      tile_emit(s, out, g, tile);
    } else {  // edge tile: scalar, bounds-checked, same swizzle
      const int row0 = g.row0(tile), col0 = g.col0(tile);
      for (int idx = threadIdx.x; idx < kBig * kBig; idx += kBigThreads) {
        const int r = idx / kBig, c = idx % kBig;
        if (row0 + r < rows && col0 + c < cols) s[r][c ^ swz(r)] = in[static_cast<size_t>(row0 + r) * cols + col0 + c];
      }
      __syncthreads();
      if (next_vec) tile_load(in, g, next, v);
      for (int idx = threadIdx.x; idx < kBig * kBig; idx += kBigThreads) {
        const int c = idx / kBig, r = idx % kBig;
        if (row0 + r < rows && col0 + c < cols) out[static_cast<size_t>(col0 + c) * rows + row0 + r] = s[r][c ^ swz(r)];
      }
    }
    __syncthreads();  // the tile is read out before the next one is stashed
    tile = next;
  }
}

// ---- NEW (issue 12), UNVERIFIED ON A GPU: two tiles per block, all their loads in flight at once.
// Each block moves a 128 x 64 region of the input (two vertically adjacent 64 x 64 tiles, 64 KiB of
// traffic, 32 KiB of shared memory) with the same 512 threads: every thread issues its 4 float4 loads
// (2 per tile) before the first shared store, twice the bytes in flight per thread of
// swizzled64_float4, and half as many blocks (2048 at 4096^2) pay the block launch and the barrier.
// In the output the two tiles are neighbours along a row, so each output row gets 512 contiguous
// bytes from one block instead of 256.
__global__ void __launch_bounds__(kBigThreads) transpose_swizzled128x64(const float* __restrict__ in, float* __restrict__ out,
                                                                         int rows, int cols) {
  __shared__ float s[2][kBig][kBig];
  const int tiles_x = (cols + kBig - 1) / kBig;
  const int row0 = (blockIdx.x / tiles_x) * 2 * kBig, col0 = (blockIdx.x % tiles_x) * kBig;
  const bool vec = row0 + 2 * kBig <= rows && col0 + kBig <= cols && rows % 4 == 0 && cols % 4 == 0;  // block-uniform
  if (vec) {
    float4 v0[kVec], v1[kVec];
    load_at(in, cols, row0, col0, v0);
    load_at(in, cols, row0 + kBig, col0, v1);
    tile_stash(s[0], v0);
    tile_stash(s[1], v1);
    __syncthreads();
    emit_at(s[0], out, rows, row0, col0);
    emit_at(s[1], out, rows, row0 + kBig, col0);
  } else {  // edge region: each of its (up to two) tiles on the scalar path
    scalar_tile(s[0], in, out, rows, cols, row0, col0);
    if (row0 + kBig < rows) scalar_tile(s[1], in, out, rows, cols, row0 + kBig, col0);
  }
}

namespace {

using namespace bench;
using Kernel = void (*)(const float*, float*, int, int);
enum class Grid { tile32, tile64, tile128x64 };

// One block per tile, or (TP_PERSIST) only as many blocks as fit on the GPU at once.
long long big_grid_limit() {
  static long long limit = 0;
  if (limit == 0) {
    if (!TP_PERSIST) {
      limit = 1LL << 30;
    } else {
      int dev = 0, sms = 0, per_sm = 0;
      CUDA_CHECK(cudaGetDevice(&dev));
      CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
      CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, transpose_swizzled64, kBigThreads, 0));
      limit = static_cast<long long>(sms) * std::max(per_sm, 1);
    }
  }
  return limit;
}

void launch(Kernel k, Grid grid_kind, const float* in, float* out, int rows, int cols) {
  if (grid_kind == Grid::tile64) {
    const long long tiles = ceil_div(cols, kBig) * ceil_div(rows, kBig);
    k<<<static_cast<unsigned>(std::min(tiles, big_grid_limit())), kBigThreads>>>(in, out, rows, cols);
  } else if (grid_kind == Grid::tile128x64) {
    k<<<static_cast<unsigned>(ceil_div(cols, kBig) * ceil_div(rows, 2 * kBig)), kBigThreads>>>(in, out, rows, cols);
  } else {
    dim3 grid(ceil_div(cols, kTile), ceil_div(rows, kTile));
    k<<<grid, dim3(kTile, kRows)>>>(in, out, rows, cols);
  }
  CUDA_CHECK_LAUNCH();
}

Result run(const Context& ctx, Kernel k, Grid grid_kind, bool is_copy) {
  const int rows = static_cast<int>(ctx.sizes.at("rows")), cols = static_cast<int>(ctx.sizes.at("cols"));
  // 1000 x 1004: not a multiple of 32 or 64, but 16-byte aligned rows, so the swizzled kernel runs
  // both its vector (interior) and scalar (edge) paths.
  const int shapes[2][2] = {{1000, 1004}, {rows, cols}};
  return verify_then_time(ctx, shapes, [&](const auto& shape, Trial& trial) {
    const int R = shape[0], C = shape[1];
    const size_t n = static_cast<size_t>(R) * C;
    std::vector<float> h(n);
    fill_uniform(h, 11);
    std::vector<float> want(n);
    for (int i = 0; i < R; ++i)
      for (int j = 0; j < C; ++j) want[is_copy ? static_cast<size_t>(i) * C + j : static_cast<size_t>(j) * R + i] = h[static_cast<size_t>(i) * C + j];
    DeviceBuffer<float> din(h), dout(n);
    dout.zero();
    trial.run(fmt_size({R, C}), [&] { launch(k, grid_kind, din.ptr, dout.ptr, R, C); }, matches(dout, want));
  });
}

}  // namespace

int main(int argc, char** argv) {
  using bench::Context;
  return bench::run_main(
      argc, argv, "transpose", {{"rows", 4096}, {"cols", 4096}},
      {
          {"copy", "transpose_copy", [](const Context& c) { return run(c, transpose_copy, Grid::tile32, true); }},
          {"naive", "transpose_naive", [](const Context& c) { return run(c, transpose_naive, Grid::tile32, false); }},
          {"shared_tile", "transpose_shared", [](const Context& c) { return run(c, transpose_shared, Grid::tile32, false); }},
          {"padded_tile", "transpose_padded", [](const Context& c) { return run(c, transpose_padded, Grid::tile32, false); }},
          {"swizzled64_float4", "transpose_swizzled64",
           [](const Context& c) { return run(c, transpose_swizzled64, Grid::tile64, false); }},
          {"swizzled128x64", "transpose_swizzled128x64",
           [](const Context& c) { return run(c, transpose_swizzled128x64, Grid::tile128x64, false); }},
      });
}
