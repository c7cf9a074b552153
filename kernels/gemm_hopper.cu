// gemm_hopper: C = A * B^T on Hopper's own data path - TMA bulk-tensor loads into shared memory,
// mbarrier synchronisation, and warpgroup MMA (wgmma.mma_async) reading both operands from shared
// memory through matrix descriptors. fp16 in, fp32 accumulate, fp16 out.
//
// Layout ("TN", the one cuBLAS and CUTLASS prefer on Hopper): A is m x k row-major, B is given as
// its transpose, n x k row-major, so both operands are K-major; C is m x n row-major. The library
// beside it (cuBLAS through CuPy, matmul_fp16_nt) multiplies the same two arrays.
//
// Variants (one kernel body, two pipeline depths):
//   pipelined:    4 shared-memory stages of 128x64 (A) + 256x64 (B) fp16 (48 KiB each). One producer
//                 warpgroup (one elected thread issues the TMA loads) runs up to 4 k-tiles ahead of
//                 two consumer warpgroups, each computing a 64x256 slice of the 128x256 block tile
//                 with m64n256k16 wgmma (128 fp32 accumulators per thread); a consumer keeps one
//                 k-tile of MMAs in flight and frees a stage only when the MMAs reading it are done.
//   single_stage: the same code with one stage: the producer can load k-tile t+1 only after the
//                 consumers finished reading k-tile t, so every TMA round trip is exposed and the
//                 tensor cores idle while the data arrives.
//
// Synchronisation per stage s: full[s] (count 1: the producer's arrive.expect_tx; the TMA unit
// completes the transaction bytes) and empty[s] (count 256: every consumer thread arrives once its
// wgmma reading the stage has completed). Phase parity of round r = k-tile / stages is r & 1; the
// producer waits on empty with the opposite parity, so its first round passes at once.
//
// Shared-memory layout: every tile row is 64 fp16 = 128 bytes, written by TMA with the 128-byte
// swizzle (16-byte chunk index XOR row % 8) into 1024-byte aligned tiles; the wgmma descriptors
// say the same (layout type 1 = SWIZZLE_128B, stride byte offset 1024 = 8 rows of 128 B, leading
// byte offset unused), and stepping k by 16 inside the 64-wide tile adds 32 bytes to the start
// address (as CUTLASS's GmmaDescriptor iterator does).
//
// Sizes: any m and n (TMA fills out-of-range rows and columns with zeros; the epilogue stores only
// in-range elements); k must be a multiple of 8 because TMA needs 16-byte aligned row strides.
//
// Needs sm_90a (wgmma and setmaxnreg exist only in the architecture-specific target): the manifest
// marks this family `arch_specific: sm_90a`, and ncuwrap builds it with -arch=sm_90a whenever the
// chosen architecture is sm_90. Built for anything else, the kernels are empty stubs and every
// variant stops with exit 2 and a message before timing anything.
//
// NEW in issue 12: compile-verified only; not yet run on a GPU (see docs/benchmarks.md).
#include <cuda.h>          // CUtensorMap and its enums (types only: nothing is linked from libcuda)
#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled, fetched with cudaGetDriverEntryPointByVersion
#include <cuda_fp16.h>

#include "common/bench.cuh"

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define HG_ENABLED 1
#else
#define HG_ENABLED 0
#endif

namespace hg {

constexpr int BM = 128, BN = 256, BK = 64;  // block tile; BK * 2 bytes = 128 B = the swizzle span
constexpr int CONSUMERS = 2;                 // consumer warpgroups, 64 rows of the block tile each
constexpr int THREADS = 128 * (1 + CONSUMERS);
constexpr int A_BYTES = BM * BK * 2;         // 16 KiB
constexpr int B_BYTES = BN * BK * 2;         // 32 KiB
constexpr int STAGE_BYTES = A_BYTES + B_BYTES;
constexpr int GROUP_M = 16;                  // block-tile rows walked together (L2 reuse of B)
static_assert(GROUP_M > 0, "GROUP_M");
constexpr int PRODUCER_REGS = 40, CONSUMER_REGS = 232;  // setmaxnreg: 128 x 40 + 256 x 232 <= 64K
static_assert(128 * PRODUCER_REGS + 128 * CONSUMERS * CONSUMER_REGS <= 65536, "register file");

// Dynamic shared memory: 1 KiB of alignment slack, the stages, then the 2 x S barriers.
constexpr int smem_bytes(int stages) { return 1024 + stages * STAGE_BYTES + 2 * stages * 8; }

#if HG_ENABLED
__device__ __forceinline__ uint32_t smem_u32(const void* p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }

__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_expect_tx(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_arrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
  uint32_t done = 0;
  while (!done) {
    asm volatile(
        "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
  }
}

// One 2-D box of the tensor map at element coordinates (x: the contiguous k, y: the row) into
// shared memory; the TMA unit counts the box's bytes against `bar`'s transaction count.
__device__ __forceinline__ void tma_load_2d(uint32_t dst, const CUtensorMap* map, int x, int y, uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
      ::"r"(dst), "l"(reinterpret_cast<uint64_t>(map)), "r"(x), "r"(y), "r"(bar)
      : "memory");
}

// wgmma matrix descriptor of a K-major, 128-byte-swizzled tile starting at shared address `addr`.
__device__ __forceinline__ uint64_t desc_sw128(uint32_t addr) {
  return static_cast<uint64_t>((addr & 0x3FFFF) >> 4)  // start address (bits 0-13)
         | static_cast<uint64_t>(1) << 16               // leading byte offset: unused for swizzled K-major
         | static_cast<uint64_t>(1024 >> 4) << 32       // stride byte offset: 8 rows x 128 B
         | static_cast<uint64_t>(1) << 62;              // layout type 1: SWIZZLE_128B
}

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}
// Keeps the compiler from moving accumulator reads or writes across the asynchronous MMAs.
__device__ __forceinline__ void fence_operands(float (&d)[128]) {
#pragma unroll
  for (int i = 0; i < 128; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// d (64 x 256 fp32, the warpgroup's accumulator fragment) += A (64 x 16) * B (256 x 16)^T.
__device__ __forceinline__ void wgmma_m64n256k16(float (&d)[128], uint64_t desc_a, uint64_t desc_b) {
  const uint32_t scale_d = 1;  // accumulate (the fragment starts at zero)
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,"
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47,"
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63,"
      "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79,"
      "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95,"
      "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111,"
      "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
      "}, %128, %129, p, 1, 1, 0, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
        "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
        "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
        "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
        "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
        "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
        "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
        "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
        "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
      : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}
#endif  // HG_ENABLED

// The whole kernel; Stages = 1 is the weak variant. Block b computes the 128 x 256 tile (tm, tn)
// chosen by grouped raster order: GROUP_M tile rows at a time, column by column.
template <int Stages>
__device__ __forceinline__ void gemm_body(const CUtensorMap* map_a, const CUtensorMap* map_b, __half* __restrict__ C, int M,
                                          int N, int K) {
#if HG_ENABLED
  extern __shared__ unsigned char smem_raw[];
  const uint32_t raw = smem_u32(smem_raw);
  const uint32_t base = (raw + 1023) & ~1023u;  // 128-byte swizzle: tiles on 1024-byte boundaries
  const uint32_t bars = base + Stages * STAGE_BYTES;
  auto full = [&](int s) { return bars + 8 * s; };
  auto empty = [&](int s) { return bars + 8 * (Stages + s); };
  auto tile_a = [&](int s) { return base + s * STAGE_BYTES; };
  auto tile_b = [&](int s) { return base + s * STAGE_BYTES + A_BYTES; };

  const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
  const int per_group = GROUP_M * tiles_n;
  const int group = blockIdx.x / per_group, first_m = group * GROUP_M;
  const int group_rows = min(tiles_m - first_m, GROUP_M);
  const int in_group = blockIdx.x % per_group;
  const int m0 = (first_m + in_group % group_rows) * BM, n0 = (in_group / group_rows) * BN;
  const int ktiles = (K + BK - 1) / BK;

  const int wg = threadIdx.x / 128;  // 0: producer, 1..CONSUMERS: consumers
  if (threadIdx.x == 0) {
    for (int s = 0; s < Stages; ++s) {
      mbar_init(full(s), 1);
      mbar_init(empty(s), 128 * CONSUMERS);
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();

  if (wg == 0) {  // producer warpgroup: gives its registers away; one thread issues every load
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(PRODUCER_REGS));
    if (threadIdx.x == 0) {
      asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<uint64_t>(map_a)) : "memory");
      asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<uint64_t>(map_b)) : "memory");
      for (int kt = 0; kt < ktiles; ++kt) {
        const int s = kt % Stages;
        mbar_wait(empty(s), ((kt / Stages) & 1) ^ 1);  // round 0 passes at once
        mbar_expect_tx(full(s), STAGE_BYTES);        // the whole boxes count, zero-filled parts included
        tma_load_2d(tile_a(s), map_a, kt * BK, m0, full(s));
        tma_load_2d(tile_b(s), map_b, kt * BK, n0, full(s));
      }
    }
    return;
  }

  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(CONSUMER_REGS));
  const int c = wg - 1;  // this consumer's 64-row slice of the block tile
  float d[128];
#pragma unroll
  for (int i = 0; i < 128; ++i) d[i] = 0.f;
  // With more than one stage a consumer keeps one k-tile of MMAs in flight and frees the stage of
  // the previous k-tile; with one stage that would deadlock (the producer waits for the only stage),
  // so it waits for its MMAs and frees the stage at once.
  constexpr int kInFlight = Stages > 1 ? 1 : 0;
  for (int kt = 0; kt < ktiles; ++kt) {
    const int s = kt % Stages;
    mbar_wait(full(s), (kt / Stages) & 1);
    const uint64_t da = desc_sw128(tile_a(s) + c * 64 * BK * 2), db = desc_sw128(tile_b(s));
    fence_operands(d);
    wgmma_fence();
#pragma unroll
    for (int k = 0; k < BK / 16; ++k) wgmma_m64n256k16(d, da + 2 * k, db + 2 * k);  // +32 bytes per k16 step
    wgmma_commit();
    wgmma_wait<kInFlight>();
    fence_operands(d);
    if (kInFlight == 0) {
      mbar_arrive(empty(s));
    } else if (kt > 0) {
      mbar_arrive(empty((kt - 1) % Stages));
    }
  }
  wgmma_wait<0>();
  fence_operands(d);

  // Epilogue: the m64nNk16 accumulator layout - warp w of the warpgroup holds rows 16w..16w+15;
  // register 4j + 2h + e is row 16w + lane/4 + 8h, column 8j + 2(lane%4) + e.
  const int warp = (threadIdx.x / 32) % 4, lane = threadIdx.x % 32;
  const int row_base = m0 + c * 64 + warp * 16 + lane / 4;
  const bool pairs = (N % 2) == 0;  // half2 stores need 4-byte aligned rows
#pragma unroll
  for (int j = 0; j < 32; ++j) {
    const int col = n0 + 8 * j + 2 * (lane % 4);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = row_base + 8 * h;
      if (row >= M) continue;
      __half* dst = C + static_cast<size_t>(row) * N + col;
      const float x = d[4 * j + 2 * h], y = d[4 * j + 2 * h + 1];
      if (pairs && col + 1 < N) {
        *reinterpret_cast<__half2*>(dst) = __floats2half2_rn(x, y);
      } else {
        if (col < N) dst[0] = __float2half_rn(x);
        if (col + 1 < N) dst[1] = __float2half_rn(y);
      }
    }
  }
#endif  // HG_ENABLED
}

}  // namespace hg

__global__ void __launch_bounds__(hg::THREADS, 1) gemm_wgmma_pipelined(const __grid_constant__ CUtensorMap map_a,
                                                                       const __grid_constant__ CUtensorMap map_b,
                                                                       __half* __restrict__ C, int M, int N, int K) {
  hg::gemm_body<4>(&map_a, &map_b, C, M, N, K);
}

__global__ void __launch_bounds__(hg::THREADS, 1) gemm_wgmma_single_stage(const __grid_constant__ CUtensorMap map_a,
                                                                          const __grid_constant__ CUtensorMap map_b,
                                                                          __half* __restrict__ C, int M, int N, int K) {
  hg::gemm_body<1>(&map_a, &map_b, C, M, N, K);
}

// 1 where the device code was compiled for sm_90a (wgmma present), 0 in the stubs.
__global__ void gemm_hopper_probe(int* out) { *out = HG_ENABLED; }

namespace {

using namespace bench;
using Kernel = void (*)(CUtensorMap, CUtensorMap, __half*, int, int, int);

// cuTensorMapEncodeTiled from the driver, through the runtime's entry-point query: no -lcuda.
PFN_cuTensorMapEncodeTiled_v12000 encode_tiled() {
  static PFN_cuTensorMapEncodeTiled_v12000 fn = nullptr;
  if (fn == nullptr) {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult status{};
    CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &status));
    if (status != cudaDriverEntryPointSuccess || p == nullptr) fail("the driver has no cuTensorMapEncodeTiled (a CUDA 12.0+ driver is needed)");
    fn = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(p);
  }
  return fn;
}

// A rows x k row-major fp16 matrix, read in boxes of box_rows x 64 with the 128-byte swizzle.
CUtensorMap tensor_map(const __half* ptr, int rows, int k, int box_rows) {
  CUtensorMap map;
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(k), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(k) * sizeof(__half)};  // bytes, multiple of 16
  const cuuint32_t box[2] = {static_cast<cuuint32_t>(hg::BK), static_cast<cuuint32_t>(box_rows)};
  const cuuint32_t elem_strides[2] = {1, 1};
  const CUresult r = encode_tiled()(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, const_cast<__half*>(ptr), dims, strides, box,
                                    elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                    CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) fail("cuTensorMapEncodeTiled failed (CUresult %d) for a %d x %d matrix", static_cast<int>(r), rows, k);
  return map;
}

void require_sm90a(const Context& ctx) {
  static int ok = -1;
  if (ok < 0) {
    DeviceBuffer<int> flag(1);
    flag.zero();
    gemm_hopper_probe<<<1, 1>>>(flag.ptr);
    CUDA_CHECK_LAUNCH();
    ok = flag.download()[0];
  }
  if (!ok) {
    fail("gemm_hopper needs a GPU of compute capability 9.0 and a build for sm_90a (wgmma); this GPU is cc %d.%d: "
         "build with `ncuwrap build gemm_hopper --arch sm_90a` on a Hopper GPU",
         ctx.prop.major, ctx.prop.minor);
  }
}

Result run(const Context& ctx, Kernel kernel, int stages) {
  const int M = static_cast<int>(ctx.sizes.at("m")), N = static_cast<int>(ctx.sizes.at("n")), K = static_cast<int>(ctx.sizes.at("k"));
  if (K % 8 != 0) fail("gemm_hopper needs k to be a multiple of 8 (TMA reads rows of A and B at 16-byte aligned strides), got k=%d", K);
  require_sm90a(ctx);
  const int smem = hg::smem_bytes(stages);
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  // Odd check size: 333 rows (a partial 128-row tile), 1000 columns (a partial 256-column tile), k = 1000
  // (16 k-tiles, the last one 40 wide and zero-filled by TMA; the 4-stage ring wraps 4 times).
  const int shapes[2][3] = {{333, 1000, 1000}, {M, N, K}};
  return verify_then_time(ctx, shapes, [&](const auto& shape, Trial& trial) {
    const int m = shape[0], n = shape[1], k = shape[2];
    std::vector<float> ha(static_cast<size_t>(m) * k), hb(static_cast<size_t>(n) * k);  // hb: B^T, n x k
    fill_uniform(ha, 31);
    fill_uniform(hb, 32);
    std::vector<__half> a16(ha.size()), b16(hb.size());  // the reference uses the fp16-rounded inputs
    for (size_t i = 0; i < ha.size(); ++i) { a16[i] = __float2half(ha[i]); ha[i] = __half2float(a16[i]); }
    for (size_t i = 0; i < hb.size(); ++i) { b16[i] = __float2half(hb[i]); hb[i] = __half2float(b16[i]); }
    DeviceBuffer<__half> dA(a16), dB(b16), dC(static_cast<size_t>(m) * n);
    dC.zero();
    const CUtensorMap map_a = tensor_map(dA.ptr, m, k, hg::BM), map_b = tensor_map(dB.ptr, n, k, hg::BN);
    const unsigned blocks = static_cast<unsigned>(ceil_div(m, hg::BM) * ceil_div(n, hg::BN));
    auto launch = [&] {
      kernel<<<blocks, hg::THREADS, smem>>>(map_a, map_b, dC.ptr, m, n, k);
      CUDA_CHECK_LAUNCH();
    };
    auto verify = [&](double* err) {
      const std::vector<__half> c16 = dC.download();
      // Every entry at the check size; the corners and 512 pseudo-random ones at full size.
      std::vector<std::pair<int, int>> at;
      if (!trial.full()) {
        for (int i = 0; i < m; ++i)
          for (int j = 0; j < n; ++j) at.emplace_back(i, j);
      } else {
        std::mt19937 gen(33);
        at = {{0, 0}, {m - 1, n - 1}, {0, n - 1}, {m - 1, 0}};
        for (int q = 0; q < 512; ++q) at.emplace_back(static_cast<int>(gen() % m), static_cast<int>(gen() % n));
      }
      bool ok = true;
      for (auto [i, j] : at) {
        double want = 0;
        const float* a = &ha[static_cast<size_t>(i) * k];
        const float* b = &hb[static_cast<size_t>(j) * k];
        for (int q = 0; q < k; ++q) want += static_cast<double>(a[q]) * b[q];
        ok = close_enough(__half2float(c16[static_cast<size_t>(i) * n + j]), want, 5e-2, 1e-2, err) && ok;
      }
      return ok;
    };
    trial.run(fmt_size({m, n, k}) + (trial.full() ? " (sampled)" : ""), launch, verify);
  });
}

}  // namespace

int main(int argc, char** argv) {
  using bench::Context;
  return bench::run_main(argc, argv, "gemm_hopper", {{"m", 4096}, {"n", 4096}, {"k", 4096}},
                         {
                             {"pipelined", "gemm_wgmma_pipelined",
                              [](const Context& c) { return run(c, gemm_wgmma_pipelined, 4); }},
                             {"single_stage", "gemm_wgmma_single_stage",
                              [](const Context& c) { return run(c, gemm_wgmma_single_stage, 1); }},
                         });
}
