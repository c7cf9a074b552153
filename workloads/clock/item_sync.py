#!/usr/bin/env python3
"""A small host-bound training loop that reads its loss with .item() every step (--item) or not (--noitem).

The model: 4 Linear layers of width 256 (ReLU between), batch 256, fp32, MSE loss, torch.optim.Adam with
its defaults (the multi-tensor "foreach" implementation on CUDA). Each step is a few dozen kernels of a few
microseconds: the GPU idles between them while the host launches (host/launch-bound). --item: the step ends
with ``losses.append(loss.item())``, which waits for the GPU to finish the step, every step. --noitem: the
step keeps ``loss.detach()`` on the GPU and the host goes on launching; the losses are read once after the
clock stops. The losses are checked (finite) in both modes.

Laps (step_ms): the host's perf_counter at the end of each timed step: with --item each lap waited for the
GPU (laps_synced true); with --noitem they are the host's issue times (no synchronisation added).

    python3 workloads/clock/item_sync.py --item|--noitem [--iters 50] [--warmup 3]
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

import clock


def main() -> None:
    p = clock.parser("item_sync", __doc__, iters=50)
    mode = p.add_mutually_exclusive_group(required=True)
    mode.add_argument("--item", dest="item", action="store_true", help="loss.item() every step")
    mode.add_argument("--noitem", dest="item", action="store_false", help="keep the loss on the GPU")
    p.add_argument("--width", type=int, default=256)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--batch", type=int, default=256)
    args = p.parse_args()
    torch.manual_seed(0)
    mods: list[nn.Module] = []
    for i in range(args.layers):
        mods.append(nn.Linear(args.width, args.width))
        if i < args.layers - 1:
            mods.append(nn.ReLU())
    model = nn.Sequential(*mods).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(args.batch, args.width, device="cuda")
    y = torch.randn(args.batch, args.width, device="cuda")
    variant = "item" if args.item else "noitem"
    clk = clock.Clock(args, "item_sync", variant)
    losses = []
    for i in range(args.warmup + args.iters):
        if i == args.warmup:
            clk.start()
        loss = F.mse_loss(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(loss.item() if args.item else loss.detach())
        if i >= args.warmup:
            clk.lap()
    clk.stop()
    vals = clock.check_finite("loss", losses)
    clk.report(laps_synced=args.item, mode=variant, width=args.width, layers=args.layers, batch=args.batch,
               dtype="fp32", optimizer="Adam (defaults: foreach)", param_tensors=len(list(model.parameters())),
               first_loss=round(vals[0], 6), last_loss=round(vals[-1], 6))


if __name__ == "__main__":
    main()
