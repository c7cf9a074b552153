// gemm: C = A * B, A is M x K, B is K x N, all row-major (default 4096^3).
//   naive:           fp32, one output per thread, A and B straight from global memory.
//   smem_tiled:      fp32, 32 x 32 shared tiles, one output per thread (each loaded value reused 32x).
//   double_buffered: fp32, 128 x 128 x 8 block tile, 8 x 8 outputs per thread in registers, two shared
//                    buffers: the next tile is fetched into registers while the current one is used.
//   tensor_core:     fp16 in, fp32 accumulate, fp16 out. mma.sync.m16n8k16 fed by ldmatrix from
//                    XOR-swizzled shared tiles (conflict-free), a 3-stage cp.async pipeline, 256 x 128 x 64
//                    block tile, 8 warps of 64 x 64, fragments double-buffered in registers (the next
//                    k-step's ldmatrix overlaps this k-step's MMAs). Tuned on an H200 with
//                    scripts/tune_sweep.sh (knobs: GEMM_* below). mma.sync, not Hopper's wgmma:
//                    the benchmarks build for plain sm_90. Needs K % 8 == 0 and N % 8 == 0 (16-byte rows).
// Verification: every entry at the odd check size (333 x 264 x 200); 512 sampled entries at full size
// (a CPU GEMM of 4096^3 would take minutes), each against a double-precision dot product.
#include <cuda_fp16.h>

#include "common/bench.cuh"

// ------------------------------------------------------------------ fp32 CUDA-core kernels

__global__ void gemm_naive(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N,
                           int K) {
  const int n = blockIdx.x * blockDim.x + threadIdx.x;
  const int m = blockIdx.y * blockDim.y + threadIdx.y;
  if (m >= M || n >= N) return;
  float acc = 0.f;
  for (int k = 0; k < K; ++k) acc += A[static_cast<size_t>(m) * K + k] * B[static_cast<size_t>(k) * N + n];
  C[static_cast<size_t>(m) * N + n] = acc;
}

constexpr int kT = 32;

__global__ void __launch_bounds__(kT * kT) gemm_smem_tiled(const float* __restrict__ A, const float* __restrict__ B,
                                                           float* __restrict__ C, int M, int N, int K) {
  __shared__ float As[kT][kT];
  __shared__ float Bs[kT][kT + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int m = blockIdx.y * kT + ty, n = blockIdx.x * kT + tx;
  float acc = 0.f;
  for (int k0 = 0; k0 < K; k0 += kT) {
    As[ty][tx] = (m < M && k0 + tx < K) ? A[static_cast<size_t>(m) * K + k0 + tx] : 0.f;
    Bs[ty][tx] = (k0 + ty < K && n < N) ? B[static_cast<size_t>(k0 + ty) * N + n] : 0.f;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kT; ++k) acc += As[ty][k] * Bs[k][tx];
    __syncthreads();
  }
  if (m < M && n < N) C[static_cast<size_t>(m) * N + n] = acc;
}

constexpr int kBM = 128, kBN = 128, kBK = 8;

__global__ void __launch_bounds__(256) gemm_double_buffered(const float* __restrict__ A, const float* __restrict__ B,
                                                            float* __restrict__ C, int M, int N, int K) {
  __shared__ __align__(16) float As[2][kBK][kBM];  // A stored transposed: As[k][m]
  __shared__ __align__(16) float Bs[2][kBK][kBN];
  const int t = threadIdx.x;
  const int tx = t % 16, ty = t / 16;
  const int bm = blockIdx.y * kBM, bn = blockIdx.x * kBN;
  // Global -> register staging: A: row t/2, k (t%2)*4..+3; B: k row t/32, columns (t%32)*4..+3.
  const int a_row = t / 2, a_k = (t % 2) * 4;
  const int b_k = t / 32, b_col = (t % 32) * 4;
  float ra[4], rb[4];
  auto fetch = [&](int k0) {
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      const int m = bm + a_row, k = k0 + a_k + q;
      ra[q] = (m < M && k < K) ? A[static_cast<size_t>(m) * K + k] : 0.f;
      const int kb = k0 + b_k, n = bn + b_col + q;
      rb[q] = (kb < K && n < N) ? B[static_cast<size_t>(kb) * N + n] : 0.f;
    }
  };
  auto stash = [&](int buf) {
#pragma unroll
    for (int q = 0; q < 4; ++q) As[buf][a_k + q][a_row] = ra[q];
    *reinterpret_cast<float4*>(&Bs[buf][b_k][b_col]) = make_float4(rb[0], rb[1], rb[2], rb[3]);
  };
  float acc[8][8] = {};
  const int ktiles = (K + kBK - 1) / kBK;
  fetch(0);
  stash(0);
  __syncthreads();
  for (int kt = 0; kt < ktiles; ++kt) {
    const int buf = kt & 1;
    if (kt + 1 < ktiles) fetch((kt + 1) * kBK);  // in flight while this tile is multiplied
#pragma unroll
    for (int k = 0; k < kBK; ++k) {
      float a[8], b[8];
      *reinterpret_cast<float4*>(&a[0]) = *reinterpret_cast<const float4*>(&As[buf][k][ty * 4]);
      *reinterpret_cast<float4*>(&a[4]) = *reinterpret_cast<const float4*>(&As[buf][k][ty * 4 + 64]);
      *reinterpret_cast<float4*>(&b[0]) = *reinterpret_cast<const float4*>(&Bs[buf][k][tx * 4]);
      *reinterpret_cast<float4*>(&b[4]) = *reinterpret_cast<const float4*>(&Bs[buf][k][tx * 4 + 64]);
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    // The other buffer was last read in iteration kt-1, and every thread has passed the barrier since.
    if (kt + 1 < ktiles) stash(buf ^ 1);
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int m = bm + ty * 4 + (i % 4) + (i / 4) * 64;
    if (m >= M) continue;
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const int n = bn + tx * 4 + (j % 4) + (j / 4) * 64;
      if (n < N) C[static_cast<size_t>(m) * N + n] = acc[i][j];
    }
  }
}

// ------------------------------------------------------------------ fp16 tensor-core kernel

// Build-time knobs (defaults: the tuned choice; scripts/tune_sweep.sh sweeps them):
//   GEMM_BM x GEMM_BN x GEMM_BK   block tile;  GEMM_WARPS_M x GEMM_WARPS_N   warps (each a BM/WM x BN/WN tile)
//   GEMM_STAGES   cp.async pipeline depth;  GEMM_MIN_BLOCKS   blocks per SM asked of ptxas (__launch_bounds__)
//   GEMM_GROUP_M  0: row-major block order; G > 0: blocks walk G block-rows at a time (L2 reuse of B)
//   GEMM_FRAG_DB  1: MMA fragments double-buffered in registers across k-steps (see the main loop)
#ifndef GEMM_BM
#define GEMM_BM 256
#endif
#ifndef GEMM_BN
#define GEMM_BN 128
#endif
#ifndef GEMM_BK
#define GEMM_BK 64
#endif
#ifndef GEMM_WARPS_M
#define GEMM_WARPS_M 4
#endif
#ifndef GEMM_WARPS_N
#define GEMM_WARPS_N 2
#endif
#ifndef GEMM_STAGES
#define GEMM_STAGES 3
#endif
#ifndef GEMM_MIN_BLOCKS
#define GEMM_MIN_BLOCKS 1
#endif
#ifndef GEMM_GROUP_M
#define GEMM_GROUP_M 0
#endif
#ifndef GEMM_FRAG_DB
#define GEMM_FRAG_DB 1
#endif

namespace tc {

constexpr int BM = GEMM_BM, BN = GEMM_BN, BK = GEMM_BK, STAGES = GEMM_STAGES;
constexpr int WARPS_M = GEMM_WARPS_M, WARPS_N = GEMM_WARPS_N, THREADS = WARPS_M * WARPS_N * 32;
constexpr int MIN_BLOCKS = GEMM_MIN_BLOCKS, GROUP_M = GEMM_GROUP_M;
constexpr int WM = BM / WARPS_M, WN = BN / WARPS_N;  // warp tile
constexpr int MT = WM / 16, NT = WN / 8;             // mma tiles per warp
constexpr int KSTEPS = BK / 16;                      // mma k-steps per block tile
constexpr int A_STAGE_BYTES = BM * BK * 2;
constexpr int B_STAGE_BYTES = BK * BN * 2;
constexpr int SMEM_BYTES = STAGES * (A_STAGE_BYTES + B_STAGE_BYTES);
static_assert(BK == 32 || BK == 64, "the A swizzle below covers 64- and 128-byte rows");
static_assert(BN % 64 == 0 && WM % 16 == 0 && WN % 16 == 0 && KSTEPS % 2 == 0, "tile shape");
static_assert((BM * BK / 8) % THREADS == 0 && (BK * BN / 8) % THREADS == 0, "whole 16-byte chunks per thread");
static_assert(STAGES >= 2, "at least double buffering");

// A tile: BM rows of BK halves = BK / 8 chunks of 16 B. The 8 rows one ldmatrix reads land in 8
// different 16-byte bank groups: 64-byte rows (BK 32): chunk c of row r at c ^ ((r >> 1) & 3) (two rows
// share a 128-byte line); 128-byte rows (BK 64): at c ^ (r & 7).
__device__ __forceinline__ int a_offset(int r, int c) {
  return BK == 32 ? r * (BK * 2) + ((c ^ ((r >> 1) & 3)) << 4) : r * (BK * 2) + ((c ^ (r & 7)) << 4);
}
// B tile: BK rows of BN halves = BN / 8 chunks; chunk c of row r lives at c ^ (r & 7).
__device__ __forceinline__ int b_offset(int r, int c) { return r * (BN * 2) + ((c ^ (r & 7)) << 4); }

__device__ __forceinline__ void cp_async16(unsigned smem_addr, const void* gmem, bool valid) {
  const int src_bytes = valid ? 16 : 0;  // 0: nothing is read, the 16 bytes are zero-filled
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr), "l"(gmem), "r"(src_bytes));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

__device__ __forceinline__ void ldmatrix_x4(unsigned addr, unsigned& r0, unsigned& r1, unsigned& r2, unsigned& r3) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
               : "r"(addr));
}
__device__ __forceinline__ void ldmatrix_x4_trans(unsigned addr, unsigned& r0, unsigned& r1, unsigned& r2, unsigned& r3) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
               : "r"(addr));
}
__device__ __forceinline__ void mma16816(float* c, const unsigned* a, const unsigned* b) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

}  // namespace tc

__global__ void __launch_bounds__(tc::THREADS, tc::MIN_BLOCKS) gemm_tensor_core(const __half* __restrict__ A,
                                                                                const __half* __restrict__ B,
                                                                                __half* __restrict__ C, int M, int N, int K) {
  using namespace tc;
  extern __shared__ __align__(128) unsigned char smem[];
  const unsigned smem_base = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  const unsigned a_base = smem_base, b_base = smem_base + STAGES * A_STAGE_BYTES;
  const int t = threadIdx.x, lane = t & 31, warp = t >> 5;
  const int wm = warp / WARPS_N, wn = warp % WARPS_N;
  int bm = blockIdx.y * BM, bn = blockIdx.x * BN;
  if (GROUP_M > 0) {  // grouped order: consecutive blocks sweep GROUP_M block-rows, then move right
    const int pid = blockIdx.y * gridDim.x + blockIdx.x, per_group = GROUP_M * gridDim.x;
    const int first_m = (pid / per_group) * GROUP_M, rows_here = min(static_cast<int>(gridDim.y) - first_m, GROUP_M);
    bm = (first_m + (pid % per_group) % rows_here) * BM;
    bn = ((pid % per_group) / rows_here) * BN;
  }
  const int ktiles = (K + BK - 1) / BK;

  // Global -> shared copies: every thread moves the same chunk column c of rows r0, r0 + RSTEP, ...
  constexpr int A_CPR = BK / 8, A_RSTEP = THREADS / A_CPR, A_ITERS = BM * BK / 8 / THREADS;
  constexpr int B_CPR = BN / 8, B_RSTEP = THREADS / B_CPR, B_ITERS = BK * BN / 8 / THREADS;
  static_assert(THREADS % A_CPR == 0 && THREADS % B_CPR == 0, "a thread keeps one chunk column");
  const int a_r = t / A_CPR, a_c = t % A_CPR, b_r = t / B_CPR, b_c = t % B_CPR;
  const __half* a_src = A + static_cast<size_t>(bm + a_r) * K + a_c * 8;
  const __half* b_src = B + static_cast<size_t>(b_r) * N + bn + b_c * 8;
  auto load_stage = [&](int stage, int kt) {
    const int k0 = kt * BK;
#pragma unroll
    for (int i = 0; i < A_ITERS; ++i) {
      const int r = a_r + i * A_RSTEP;
      const bool ok = bm + r < M && k0 + a_c * 8 < K;
      cp_async16(a_base + stage * A_STAGE_BYTES + a_offset(r, a_c), ok ? a_src + static_cast<size_t>(i * A_RSTEP) * K + k0 : A, ok);
    }
#pragma unroll
    for (int i = 0; i < B_ITERS; ++i) {
      const int r = b_r + i * B_RSTEP;
      const bool ok = k0 + r < K && bn + b_c * 8 < N;
      cp_async16(b_base + stage * B_STAGE_BYTES + b_offset(r, b_c), ok ? b_src + static_cast<size_t>(k0 + i * B_RSTEP) * N : B, ok);
    }
  };

  // GEMM_FRAG_DB 1: fragments double-buffered in registers - those of k-step s+1 are loaded while k-step s
  // multiplies, and the barrier of the next tile is crossed before the last k-step's MMAs are issued.
  // 0: each k-step loads its fragments and multiplies them; one barrier at the top of each tile.
  unsigned af[2][MT][4], bf[2][NT][2];
  auto load_frags = [&](int buf, int stage, int kk) {
    const unsigned as = a_base + stage * A_STAGE_BYTES, bs = b_base + stage * B_STAGE_BYTES;
#pragma unroll
    for (int i = 0; i < MT; ++i) {
      const int r = wm * WM + i * 16 + (lane & 15);
      const int c = kk * 2 + (lane >> 4);
      ldmatrix_x4(as + a_offset(r, c), af[buf][i][0], af[buf][i][1], af[buf][i][2], af[buf][i][3]);
    }
#pragma unroll
    for (int jp = 0; jp < NT / 2; ++jp) {
      const int r = kk * 16 + (lane & 7) + ((lane >> 3) & 1) * 8;
      const int c = (wn * WN + jp * 16 + (lane >> 4) * 8) / 8;
      ldmatrix_x4_trans(bs + b_offset(r, c), bf[buf][2 * jp][0], bf[buf][2 * jp][1], bf[buf][2 * jp + 1][0],
                        bf[buf][2 * jp + 1][1]);
    }
  };

  float acc[MT][NT][4];
#pragma unroll
  for (int i = 0; i < MT; ++i)
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int q = 0; q < 4; ++q) acc[i][j][q] = 0.f;

#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < ktiles) load_stage(s, s);
    cp_async_commit();  // always commit, so that group counting stays uniform
  }
  if (GEMM_FRAG_DB) {
    cp_async_wait<STAGES - 2>();  // tile 0 has landed (for this thread) ...
    __syncthreads();              // ... for every thread
    int stage = 0;
    load_frags(0, stage, 0);
    for (int kt = 0; kt < ktiles; ++kt) {
#pragma unroll
      for (int kk = 0; kk < KSTEPS; ++kk) {
        if (kk == KSTEPS - 1) {
          // Move on to tile kt+1: it has landed for every thread, and every warp has finished reading
          // stage (kt-1) % STAGES (refilled at kk == 0 of the next tile).
          cp_async_wait<STAGES - 2>();
          __syncthreads();
          stage = stage + 1 == STAGES ? 0 : stage + 1;
        }
        // Fragments of the next k-step (past the last tile: stale shared memory, never used).
        load_frags((kk + 1) & 1, stage, (kk + 1) % KSTEPS);
        if (kk == 0) {
          // Refill the stage that held tile kt-1: every warp passed the barrier after reading it.
          const int next = kt + STAGES - 1;
          if (next < ktiles) load_stage(next % STAGES, next);
          cp_async_commit();
        }
#pragma unroll
        for (int i = 0; i < MT; ++i)
#pragma unroll
          for (int j = 0; j < NT; ++j) mma16816(acc[i][j], af[kk & 1][i], bf[kk & 1][j]);
      }
    }
  } else {
    for (int kt = 0; kt < ktiles; ++kt) {
      cp_async_wait<STAGES - 2>();  // tile kt has landed (for this thread) ...
      __syncthreads();              // ... for every thread; and stage (kt-1) % STAGES is no longer read
      const int next = kt + STAGES - 1;
      if (next < ktiles) load_stage(next % STAGES, next);
      cp_async_commit();
#pragma unroll
      for (int kk = 0; kk < KSTEPS; ++kk) {
        load_frags(0, kt % STAGES, kk);
#pragma unroll
        for (int i = 0; i < MT; ++i)
#pragma unroll
          for (int j = 0; j < NT; ++j) mma16816(acc[i][j], af[0][i], bf[0][j]);
      }
    }
  }
  cp_async_wait<0>();

  // Epilogue: accumulator (i, j) holds rows lane/4 and lane/4 + 8, columns 2*(lane%4) + {0, 1}.
#pragma unroll
  for (int i = 0; i < MT; ++i) {
#pragma unroll
    for (int j = 0; j < NT; ++j) {
      const int row = bm + wm * WM + i * 16 + (lane >> 2);
      const int col = bn + wn * WN + j * 8 + (lane & 3) * 2;
      if (col < N) {  // N is even, so col + 1 < N too
        if (row < M)
          *reinterpret_cast<__half2*>(C + static_cast<size_t>(row) * N + col) = __floats2half2_rn(acc[i][j][0], acc[i][j][1]);
        if (row + 8 < M)
          *reinterpret_cast<__half2*>(C + static_cast<size_t>(row + 8) * N + col) =
              __floats2half2_rn(acc[i][j][2], acc[i][j][3]);
      }
    }
  }
}

// ------------------------------------------------------------------ host side

namespace {

using namespace bench;
enum class Kind { naive, tiled, dbuf, tensor };

void launch(Kind kind, const void* A, const void* B, void* C, int M, int N, int K) {
  switch (kind) {
    case Kind::naive: {
      dim3 block(32, 8), grid(ceil_div(N, 32), ceil_div(M, 8));
      gemm_naive<<<grid, block>>>(static_cast<const float*>(A), static_cast<const float*>(B), static_cast<float*>(C), M, N, K);
      break;
    }
    case Kind::tiled: {
      dim3 block(kT, kT), grid(ceil_div(N, kT), ceil_div(M, kT));
      gemm_smem_tiled<<<grid, block>>>(static_cast<const float*>(A), static_cast<const float*>(B), static_cast<float*>(C), M, N, K);
      break;
    }
    case Kind::dbuf: {
      dim3 grid(ceil_div(N, kBN), ceil_div(M, kBM));
      gemm_double_buffered<<<grid, 256>>>(static_cast<const float*>(A), static_cast<const float*>(B), static_cast<float*>(C), M, N,
                                          K);
      break;
    }
    case Kind::tensor: {
      dim3 grid(ceil_div(N, tc::BN), ceil_div(M, tc::BM));
      gemm_tensor_core<<<grid, tc::THREADS, tc::SMEM_BYTES>>>(static_cast<const __half*>(A), static_cast<const __half*>(B),
                                                              static_cast<__half*>(C), M, N, K);
      break;
    }
  }
  CUDA_CHECK_LAUNCH();
}

Result run(const Context& ctx, Kind kind) {
  const bool half = kind == Kind::tensor;
  if (half) CUDA_CHECK(cudaFuncSetAttribute(gemm_tensor_core, cudaFuncAttributeMaxDynamicSharedMemorySize, tc::SMEM_BYTES));
  const int M = static_cast<int>(ctx.sizes.at("m")), N = static_cast<int>(ctx.sizes.at("n")), K = static_cast<int>(ctx.sizes.at("k"));
  if (half && (N % 8 != 0 || K % 8 != 0)) fail("gemm tensor_core needs n and k to be multiples of 8 (got n=%d k=%d)", N, K);
  const int shapes[2][3] = {{333, 264, 200}, {M, N, K}};
  return verify_then_time(ctx, shapes, [&](const auto& shape, Trial& trial) {
    const int m = shape[0], n = shape[1], k = shape[2];
    std::vector<float> ha(static_cast<size_t>(m) * k), hb(static_cast<size_t>(k) * n);
    fill_uniform(ha, 21);
    fill_uniform(hb, 22);
    const size_t esz = half ? sizeof(__half) : sizeof(float);
    void *dA, *dB, *dC;
    CUDA_CHECK(cudaMalloc(&dA, ha.size() * esz));
    CUDA_CHECK(cudaMalloc(&dB, hb.size() * esz));
    CUDA_CHECK(cudaMalloc(&dC, static_cast<size_t>(m) * n * esz));
    CUDA_CHECK(cudaMemset(dC, 0, static_cast<size_t>(m) * n * esz));
    if (half) {  // the reference uses the fp16-rounded inputs
      std::vector<__half> a16(ha.size()), b16(hb.size());
      for (size_t i = 0; i < ha.size(); ++i) { a16[i] = __float2half(ha[i]); ha[i] = __half2float(a16[i]); }
      for (size_t i = 0; i < hb.size(); ++i) { b16[i] = __float2half(hb[i]); hb[i] = __half2float(b16[i]); }
      CUDA_CHECK(cudaMemcpy(dA, a16.data(), a16.size() * esz, cudaMemcpyHostToDevice));
      CUDA_CHECK(cudaMemcpy(dB, b16.data(), b16.size() * esz, cudaMemcpyHostToDevice));
    } else {
      CUDA_CHECK(cudaMemcpy(dA, ha.data(), ha.size() * esz, cudaMemcpyHostToDevice));
      CUDA_CHECK(cudaMemcpy(dB, hb.data(), hb.size() * esz, cudaMemcpyHostToDevice));
    }
    auto verify = [&](double* err) {
      std::vector<float> got(static_cast<size_t>(m) * n);
      if (half) {
        std::vector<__half> c16(got.size());
        CUDA_CHECK(cudaMemcpy(c16.data(), dC, c16.size() * esz, cudaMemcpyDeviceToHost));
        for (size_t i = 0; i < got.size(); ++i) got[i] = __half2float(c16[i]);
      } else {
        CUDA_CHECK(cudaMemcpy(got.data(), dC, got.size() * esz, cudaMemcpyDeviceToHost));
      }
      // Entries to check: all of them at the small size, 512 pseudo-random ones (plus the corners) at full size.
      std::vector<std::pair<int, int>> at;
      if (!trial.full()) {
        for (int i = 0; i < m; ++i)
          for (int j = 0; j < n; ++j) at.emplace_back(i, j);
      } else {
        std::mt19937 gen(23);
        at = {{0, 0}, {m - 1, n - 1}, {0, n - 1}, {m - 1, 0}};
        for (int q = 0; q < 512; ++q) at.emplace_back(static_cast<int>(gen() % m), static_cast<int>(gen() % n));
      }
      const double atol = half ? 5e-2 : 1e-2, rtol = half ? 1e-2 : 1e-3;
      bool ok = true;
      for (auto [i, j] : at) {
        double want = 0;
        for (int q = 0; q < k; ++q) want += static_cast<double>(ha[static_cast<size_t>(i) * k + q]) * hb[static_cast<size_t>(q) * n + j];
        ok = close_enough(got[static_cast<size_t>(i) * n + j], want, atol, rtol, err) && ok;
      }
      return ok;
    };
    trial.run(fmt_size({m, n, k}) + (trial.full() ? " (sampled)" : ""), [&] { launch(kind, dA, dB, dC, m, n, k); }, verify);
    CUDA_CHECK(cudaFree(dA));
    CUDA_CHECK(cudaFree(dB));
    CUDA_CHECK(cudaFree(dC));
  });
}

}  // namespace

int main(int argc, char** argv) {
  using bench::Context;
  return bench::run_main(argc, argv, "gemm", {{"m", 4096}, {"n", 4096}, {"k", 4096}},
                         {
                             {"naive", "gemm_naive", [](const Context& c) { return run(c, Kind::naive); }},
                             {"smem_tiled", "gemm_smem_tiled", [](const Context& c) { return run(c, Kind::tiled); }},
                             {"double_buffered", "gemm_double_buffered", [](const Context& c) { return run(c, Kind::dbuf); }},
                             {"tensor_core", "gemm_tensor_core", [](const Context& c) { return run(c, Kind::tensor); }},
                         });
}
