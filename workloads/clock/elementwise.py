#!/usr/bin/env python3
"""A chain of 31 elementwise and row-reduction ops on a 256 MiB float32 tensor, eager or torch.compile'd.

x is 16384 x 4096 float32 (256 MiB); a and b are rows of 4096. The chain (chain() below: scale and shift,
GELU, exp(-|y|), softmax over rows, a layer-norm-like normalisation, tanh + sigmoid, the row sum subtracted
back, a clamp, an RMS normalisation, SiLU and a residual add) is 31 ATen ops. --mode eager: each op is a
kernel that reads and writes whole 256 MiB tensors: memory-bound, about 20 passes over the data a step.
--mode compiled: torch.compile of the same function (default mode; the compilation happens in the first
warm-up iteration, outside the clock): Inductor fuses the chain into a few kernels that read x a few times.
No synchronisation inside the loop. After the clock stops the result is checked: finite, and in compiled
mode against the eager chain (relative L2 error under 1e-4).

TORCHINDUCTOR_COMPILE_THREADS is set to 1 (unless set already) before torch is imported, so that Inductor
compiles in this process instead of a pool of worker processes (which a tracer would follow too).

    python3 workloads/clock/elementwise.py --mode eager|compiled [--iters 20] [--warmup 3]
"""

from __future__ import annotations

import os

os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import clock  # noqa: E402


def chain(x: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    y = x * a + b                                             # 2 ops
    y = F.gelu(y)                                             # 3
    y = torch.exp(-y.abs())                                   # 6
    y = torch.softmax(y, dim=-1)                              # 7
    m = y.mean(-1, keepdim=True)                              # 8
    d = y - m                                                 # 9
    v = (d * d).mean(-1, keepdim=True)                        # 11
    y = d * torch.rsqrt(v + 1e-5)                             # 14
    y = y * a + b                                             # 16
    y = torch.tanh(y) + torch.sigmoid(y) * 0.5                # 20
    s = y.sum(-1, keepdim=True)                               # 21
    y = y - s / y.shape[-1]                                   # 23
    y = y.clamp(-3.0, 3.0)                                    # 24
    r = torch.rsqrt((y * y).mean(-1, keepdim=True) + 1e-6)    # 28
    return F.silu(y * r) + x                                  # 31


def main() -> None:
    p = clock.parser("elementwise", __doc__, iters=20)
    p.add_argument("--mode", choices=["eager", "compiled"], required=True)
    p.add_argument("--rows", type=int, default=16384)
    p.add_argument("--cols", type=int, default=4096)
    args = p.parse_args()
    if args.mode == "compiled" and args.warmup < 1:
        p.error("compiled mode needs at least one warm-up iteration (the compilation)")
    torch.manual_seed(0)
    x = torch.randn(args.rows, args.cols, device="cuda")
    a = torch.rand(args.cols, device="cuda") + 0.5
    b = torch.randn(args.cols, device="cuda") * 0.1
    fn = torch.compile(chain) if args.mode == "compiled" else chain
    clk = clock.Clock(args, "elementwise", args.mode)
    out = None
    with torch.no_grad():
        for i in range(args.warmup + args.iters):
            if i == args.warmup:
                clk.start()
            out = fn(x, a, b)
        clk.stop()
        if not bool(torch.isfinite(out).all()):
            clock.fail("the result has values that are not finite")
        rel_err = None
        if args.mode == "compiled":
            ref = chain(x, a, b)
            rel_err = float((out.double() - ref.double()).norm() / ref.double().norm())
            if not rel_err < 1e-4:
                clock.fail(f"compiled result differs from eager: relative L2 error {rel_err}")
        checksum = float(out.double().sum())
    tensor_bytes = args.rows * args.cols * 4
    clk.report(mode=args.mode, shape=[args.rows, args.cols], dtype="fp32", tensor_mib=tensor_bytes / 2 ** 20,
               aten_ops=31, rel_err_vs_eager=rel_err, checksum=checksum,
               inductor_compile_threads=os.environ.get("TORCHINDUCTOR_COMPILE_THREADS"))


if __name__ == "__main__":
    main()
