#!/usr/bin/env python3
"""A GPU-bound step whose third of the time is a transpose ncuwrap flags: the what-if's faster_kernel pair.

Each step (an NVTX range ``step``) runs, on the default stream:

1. an fp32 matrix product, 2048 x 2048 x 2048 (cuBLAS's SGEMM; TF32 off), which ncuwrap finds at its roofline;
2. a transpose of a 4096 x 4096 fp32 matrix, a CuPy RawKernel compiled by NVRTC, the kernels of
   kernels/transpose.cu (32 x 32 tile, 32 x 8 threads): --variant slow runs ``transpose_naive`` (coalesced
   reads, each lane of a warp writing another row: ncuwrap's ``uncoalesced_global_stores``, estimated 7.50x
   against 6.42x measured on the bundled pair: docs/payoff.md); --variant fixed runs ``transpose_padded``
   (the tile staged in shared memory padded to 33 columns: both sides coalesced, no bank conflicts);
3. an elementwise add of two 4096 x 4096 fp32 matrices (PyTorch's vectorized kernel, at its DRAM roofline).

Nothing else changes between the variants, and nothing waits for the GPU inside the loop: the step is the
GPU's (about 0.6 ms slow, 0.4 ms fixed on an H200). After the clock stops, the transpose's output is checked
against ``x.t()`` exactly, and the product and the sum are checked finite.

The clock is workloads/clock/clock.py's: ``--warmup`` untimed steps, synchronize, perf_counter, ``--iters``
steps, synchronize; ``step_ms_mean`` = loop / iters, in the JSON line printed last.

    python3 workloads/whatif_faster_kernel/prog.py --variant slow|fixed [--iters 300] [--warmup 20]
"""

from __future__ import annotations

import sys
from pathlib import Path

import cupy as cp
import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "clock"))
import clock  # noqa: E402

TILE, ROWS = 32, 8
# kernels/transpose.cu's transpose_naive and transpose_tile<1> (transpose_padded), as C-linkage kernels for NVRTC.
SOURCE = r'''
#define TILE 32
#define ROWS 8
extern "C" __global__ void transpose_naive(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
  const int c = blockIdx.x * TILE + threadIdx.x;
  const int r0 = blockIdx.y * TILE + threadIdx.y;
#pragma unroll
  for (int j = 0; j < TILE; j += ROWS) {
    const int r = r0 + j;
    if (r < rows && c < cols) out[(size_t)c * rows + r] = in[(size_t)r * cols + c];
  }
}
extern "C" __global__ void transpose_padded(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
  __shared__ float tile[TILE][TILE + 1];
  const int bx = blockIdx.x * TILE, by = blockIdx.y * TILE;
#pragma unroll
  for (int j = 0; j < TILE; j += ROWS) {
    const int r = by + threadIdx.y + j, c = bx + threadIdx.x;
    if (r < rows && c < cols) tile[threadIdx.y + j][threadIdx.x] = in[(size_t)r * cols + c];
  }
  __syncthreads();
#pragma unroll
  for (int j = 0; j < TILE; j += ROWS) {
    const int orow = bx + threadIdx.y + j, ocol = by + threadIdx.x;
    if (orow < cols && ocol < rows) out[(size_t)orow * rows + ocol] = tile[threadIdx.x][threadIdx.y + j];
  }
}
'''
KERNEL_OF = {"slow": "transpose_naive", "fixed": "transpose_padded"}


def main() -> None:
    p = clock.parser("whatif_faster_kernel", __doc__, iters=300, warmup=20)
    p.add_argument("--variant", choices=sorted(KERNEL_OF), required=True,
                   help="slow: the naive transpose (uncoalesced stores); fixed: the padded shared-memory tile")
    p.add_argument("--n", type=int, default=4096, help="the transposed and added matrices are n x n fp32 (default 4096)")
    p.add_argument("--m", type=int, default=2048, help="the matrix product is m x m x m fp32 (default 2048)")
    args = p.parse_args()
    if args.n % TILE or args.m < 1:
        clock.fail(f"--n must be a multiple of {TILE} and --m at least 1")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.manual_seed(0)
    n, m = args.n, args.m
    a = torch.randn(m, m, device="cuda")
    b = torch.randn(m, m, device="cuda")
    x = torch.randn(n, n, device="cuda")
    y = torch.randn(n, n, device="cuda")
    xt = torch.empty(n, n, device="cuda")
    prod = torch.empty(m, m, device="cuda")
    total = torch.empty(n, n, device="cuda")
    kernel = cp.RawModule(code=SOURCE).get_function(KERNEL_OF[args.variant])
    x_cp, xt_cp = cp.asarray(x), cp.asarray(xt)  # the same memory (__cuda_array_interface__), launched on the default stream as torch's
    grid, block = (n // TILE, n // TILE), (TILE, ROWS)
    size = (x_cp, xt_cp, np.int32(n), np.int32(n))
    clk = clock.Clock(args, "whatif_faster_kernel", args.variant)
    for i in range(args.warmup + args.iters):
        if i == args.warmup:
            clk.start()
        torch.cuda.nvtx.range_push("step")
        torch.mm(a, b, out=prod)
        kernel(grid, block, size)
        torch.add(x, y, out=total)
        torch.cuda.nvtx.range_pop()
    clk.stop()
    if not torch.equal(xt, x.t()):
        clock.fail(f"{KERNEL_OF[args.variant]}: the transpose differs from x.t()")
    clock.check_finite("product corner", prod[:4, :4])
    clock.check_finite("sum corner", total[:4, :4])
    clk.report(variant_kernel=KERNEL_OF[args.variant], n=n, m=m, step=["torch.mm fp32 (TF32 off)", "transpose (CuPy RawKernel)", "torch.add"],
               cupy=cp.__version__)


if __name__ == "__main__":
    main()
