#!/usr/bin/env python3
"""GPU-bound MLP training: Linear 1024->4096->4096->1024 with GELU between, batch 6144, MSE loss, fused AdamW.

No synchronisation inside the loop: the host issues each step's ~25 launches in well under a millisecond
and runs ahead of the GPU, which is busy with the matrix products the whole step (fp32: about 0.93 TFLOP a
step, ~15-20 ms on an H200 without TF32; bf16: the same under torch.autocast(bfloat16), a few ms). The
losses stay on the GPU and are checked (finite) after the clock stops.

    python3 workloads/clock/mlp_train.py --dtype fp32|bf16 [--iters 20] [--warmup 3] [--batch 6144]
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

import clock


def main() -> None:
    p = clock.parser("mlp_train", __doc__, iters=20)
    p.add_argument("--dtype", choices=["fp32", "bf16"], required=True)
    p.add_argument("--batch", type=int, default=6144)
    args = p.parse_args()
    torch.manual_seed(0)
    dims = [1024, 4096, 4096, 1024]
    layers: list[nn.Module] = []
    for i, (a, b) in enumerate(zip(dims, dims[1:])):
        layers.append(nn.Linear(a, b))
        if i < len(dims) - 2:
            layers.append(nn.GELU())
    model = nn.Sequential(*layers).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    x = torch.randn(args.batch, dims[0], device="cuda")
    y = torch.randn(args.batch, dims[-1], device="cuda")
    bf16 = args.dtype == "bf16"

    def step() -> torch.Tensor:
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=bf16):
            out = model(x)
        loss = F.mse_loss(out.float(), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss.detach()

    clk = clock.Clock(args, "mlp_train", args.dtype)
    losses = []
    for i in range(args.warmup + args.iters):
        if i == args.warmup:
            clk.start()
        losses.append(step())
    clk.stop()
    vals = clock.check_finite("loss", torch.stack(losses))
    flops = 6 * sum(a * b for a, b in zip(dims, dims[1:])) * args.batch
    clk.report(dtype=args.dtype, batch=args.batch, dims=dims, optimizer="AdamW(fused=True)",
               matmul_fp32_precision=torch.get_float32_matmul_precision(),
               step_gflop=round(flops / 1e9, 1), first_loss=round(vals[0], 6), last_loss=round(vals[-1], 6),
               loss_went_down=vals[-1] < vals[0])


if __name__ == "__main__":
    main()
