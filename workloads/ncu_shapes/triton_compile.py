"""Triton kernels written by torch.compile (Inductor): a pointwise, a reduction and a persistent-reduction kernel
(triton_poi_*, triton_red_* / triton_per_*: C linkage), for workloads/ncu_shapes/capture.sh. Compiled once
outside the measured calls, then called twice, checked against eager."""

import os

os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")  # no compile workers forked under ncu

import torch  # noqa: E402


def block(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    h = torch.nn.functional.silu(x * w + 1.0)            # pointwise
    h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-6)  # a row reduction (RMS norm)
    return torch.softmax(h, dim=-1) + h.sum(0)           # a softmax and a column reduction


def main() -> None:
    x = torch.randn(2048, 1024, device="cuda")
    w = torch.randn(1024, device="cuda")
    compiled = torch.compile(block)
    compiled(x, w)  # compiles
    for _ in range(2):
        out = compiled(x, w)
    torch.cuda.synchronize()
    assert torch.allclose(out, block(x, w), atol=1e-4, rtol=1e-4)
    print("torch.compile: ok")


if __name__ == "__main__":
    main()
