#!/usr/bin/env python3
"""One Conv2d forward and backward a step: batch 64, 256 -> 256 channels, 56 x 56, 3 x 3, padding 1, stride 1,
no bias, bf16 weights and activations in channels_last (cuDNN, torch.backends.cudnn.benchmark left off: its
heuristics pick the algorithms, so every run launches the same kernels).

A step: y = conv(x); y.backward(g) with a fixed gradient g (no loss, so the step is the convolution's three
products and nothing else); x.grad and the weight's grad are set to None first, so no accumulation op runs.
x requires grad: the backward computes the input's gradient and the weight's.

Hand count (hand_count.conv, in the JSON line): forward 2 N K C R S P Q FLOPs (N batch, C in and K out
channels, R x S kernel, P x Q output); backward 2x that (input gradient and weight gradient, each as many).
Minimal bytes: forward x + w + y; input gradient g + w + dx; weight gradient g + x + dw (bf16, 2 bytes).
``hand_tflops`` = FLOPs a step / the program's own step time.

No synchronisation inside the loop; after the clock, the last gradients are checked finite.

    python3 workloads/op_limits/conv.py [--batch 64] [--channels 256] [--hw 56] [--iters 20] [--warmup 3] [--kineto PATH]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "clock"))

import torch  # noqa: E402
from torch import nn  # noqa: E402

import clock  # noqa: E402
import hand_count  # noqa: E402


def main() -> None:
    p = clock.parser("conv", __doc__, iters=20)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--channels", type=int, default=256, help="in and out channels")
    p.add_argument("--hw", type=int, default=56, help="height = width")
    args = p.parse_args()
    torch.manual_seed(0)
    cl = torch.channels_last
    conv = nn.Conv2d(args.channels, args.channels, 3, padding=1, bias=False).to(device="cuda", dtype=torch.bfloat16, memory_format=cl)
    x = torch.randn(args.batch, args.channels, args.hw, args.hw, device="cuda", dtype=torch.bfloat16).to(memory_format=cl).requires_grad_()
    g = torch.randn(args.batch, args.channels, args.hw, args.hw, device="cuda", dtype=torch.bfloat16).to(memory_format=cl)

    def step() -> None:
        x.grad = None
        conv.weight.grad = None
        y = conv(x)
        y.backward(g)

    clk = clock.Clock(args, "conv", "bf16")
    for i in range(args.warmup + args.iters):
        if i == args.warmup:
            clk.start()
        step()
    clk.stop()
    clock.check_finite("input gradient (sum)", x.grad.float().sum())
    clock.check_finite("weight gradient (sum)", conv.weight.grad.float().sum())
    count = hand_count.conv(args.batch, args.channels, args.channels, args.hw, 3, 1, "bf16")
    step_s = (clk.t1 - clk.t0) / args.iters
    clk.report(dtype="bf16", batch=args.batch, channels=args.channels, hw=args.hw, kernel=3, padding=1, memory_format="channels_last",
               x_channels_last=x.is_contiguous(memory_format=cl), cudnn_benchmark=torch.backends.cudnn.benchmark,
               cudnn=torch.backends.cudnn.version(),
               hand_tflops=round(count.step_flop / step_s / 1e12, 2), hand_tb_per_s=round(count.step_bytes / step_s / 1e12, 3),
               **count.to_json())


if __name__ == "__main__":
    main()
