"""A hand-written Triton kernel (C linkage, as every Triton kernel: an empty demangled name in the report), for
workloads/ncu_shapes/capture.sh: a vector add and a row softmax, each launched twice, checked against torch."""

import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)


@triton.jit
def softmax_kernel(x_ptr, out_ptr, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offsets = tl.arange(0, BLOCK)
    mask = offsets < cols
    x = tl.load(x_ptr + row * cols + offsets, mask=mask, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * cols + offsets, e / tl.sum(e, axis=0), mask=mask)


def main() -> None:
    n = 1 << 22
    x, y = torch.rand(n, device="cuda"), torch.rand(n, device="cuda")
    out = torch.empty_like(x)
    rows, cols = 4096, 1024
    m = torch.randn(rows, cols, device="cuda")
    soft = torch.empty_like(m)
    for _ in range(2):
        add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
        softmax_kernel[(rows,)](m, soft, cols, BLOCK=1024)
    torch.cuda.synchronize()
    assert torch.allclose(out, x + y) and torch.allclose(soft, torch.softmax(m, dim=1), atol=1e-5)
    print("triton kernels: ok")


if __name__ == "__main__":
    main()
