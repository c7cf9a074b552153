#!/usr/bin/env python3
"""A Triton kernel and a cuBLAS kernel launched from PyTorch, for the per-line attribution (issue 20).

- ``transpose_rows_to_cols`` (Triton): each program loads one row of a 4096 x 4096 fp32 matrix
  (consecutive addresses: coalesced) and stores it as a column of the output (addresses 16 KiB apart:
  every lane of a warp writes its own sector). The store line is the one a reader would point at; its
  line number is printed as ``@@LINE store <n>`` so that tests can check the attribution against it.
- ``torch.mm`` of two 4096 x 4096 fp32 matrices with TF32 off: a cuBLAS SGEMM, a library kernel built
  without line information (its attribution can only be SASS).

Correctness first: ``--check`` compares both results with a reference (the transpose exactly, the
matrix product against float64 within 1e-4 relative) and exits 1 on a mismatch; under ncu the checks are
left out (``--no-check``) so that reference kernels cost no replay passes and match no kernel filter.
Each kernel is launched ``--iters`` times (default 3); ncu's ``--nth-launch 2`` lands past the first.
"""

from __future__ import annotations

import argparse
import inspect
import sys

import torch
import triton
import triton.language as tl


@triton.jit
def transpose_rows_to_cols(src, dst, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    values = tl.load(src + row * n + cols)
    tl.store(dst + cols * n + row, values)  # the uncoalesced store


def store_line() -> int:
    lines, first = inspect.getsourcelines(transpose_rows_to_cols.fn)
    return first + next(i for i, text in enumerate(lines) if "tl.store" in text)


def transpose(src: torch.Tensor) -> torch.Tensor:
    n = src.shape[0]
    dst = torch.empty_like(src)
    block = 1024
    transpose_rows_to_cols[(n, n // block)](src, dst, n, BLOCK=block)
    return dst


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=4096)
    parser.add_argument("--iters", type=int, default=3)
    parser.add_argument("--check", action=argparse.BooleanOptionalAction, default=True)
    args = parser.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.manual_seed(0)
    a = torch.randn(args.n, args.n, device="cuda")
    b = torch.randn(args.n, args.n, device="cuda")
    print(f"@@LINE store {store_line()} {inspect.getsourcefile(transpose_rows_to_cols.fn)}", flush=True)
    for _ in range(args.iters):
        t = transpose(a)
    for _ in range(args.iters):
        c = torch.mm(a, b)
    torch.cuda.synchronize()
    if args.check:
        ok_t = torch.equal(t, a.t())
        err = ((c.double() - a.double() @ b.double()).abs().max() / (a.double() @ b.double()).abs().max()).item()
        print(f"@@CHECK transpose exact={ok_t}  mm max_rel_err={err:.2e}", flush=True)
        if not ok_t or err > 1e-4:
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
