#!/usr/bin/env python3
"""A training loop that saves a checkpoint every 5th step and evaluates every 10th: periodic slow steps.

The model: an MLP 1024->2048->2048->1024 (GELU between), fp32, batch 4096, MSE loss, fused AdamW: a few ms
of GPU work a step, with no synchronisation in an ordinary step (the host runs ahead). Timed iteration i
(0-based) then also
- saves a checkpoint when (i + 1) % --save-every == 0: torch.save of {model, optimizer state_dict, step} to a
  file in /tmp (each CUDA tensor is copied to the host first: device-to-host copies that wait for the GPU;
  ~100 MB a checkpoint), removed at the end;
- evaluates when (i + 1) % --eval-every == 0: --eval-batches forward passes under torch.no_grad() on held-out
  batches, each loss read with .item().
``saved_iters`` and ``eval_iters`` in the JSON line list those iterations (0-based, timed loop).

Laps (step_ms): the host's perf_counter at the end of each timed iteration, with NO synchronisation added:
an ordinary step's lap is the time the host took to issue it (the GPU may still be working); the saving and
evaluating steps wait for the GPU themselves. The own clock, (t1 - t0) / iters, is the mean step.

    python3 workloads/clock/periodic_train.py [--iters 40] [--warmup 3] [--save-every 5] [--eval-every 10]
"""

from __future__ import annotations

import os

import torch
import torch.nn.functional as F
from torch import nn

import clock


def main() -> None:
    p = clock.parser("periodic_train", __doc__, iters=40)
    p.add_argument("--batch", type=int, default=4096)
    p.add_argument("--save-every", type=int, default=5)
    p.add_argument("--eval-every", type=int, default=10)
    p.add_argument("--eval-batches", type=int, default=4)
    p.add_argument("--ckpt", default=f"/tmp/clock_periodic_{os.getpid()}.pt")
    args = p.parse_args()
    torch.manual_seed(0)
    dims = [1024, 2048, 2048, 1024]
    model = nn.Sequential(nn.Linear(dims[0], dims[1]), nn.GELU(), nn.Linear(dims[1], dims[2]), nn.GELU(),
                          nn.Linear(dims[2], dims[3])).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    w_true = torch.randn(dims[0], dims[-1], device="cuda") / dims[0] ** 0.5
    x = torch.randn(args.batch, dims[0], device="cuda")
    y = x @ w_true
    evals = [torch.randn(args.batch, dims[0], device="cuda") for _ in range(args.eval_batches)]
    eval_targets = [e @ w_true for e in evals]

    def train_step() -> torch.Tensor:
        loss = F.mse_loss(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss.detach()

    def evaluate() -> float:
        model.eval()
        with torch.no_grad():
            total = sum(F.mse_loss(model(e), t).item() for e, t in zip(evals, eval_targets))
        model.train()
        return total / len(evals)

    clk = clock.Clock(args, "periodic_train", None)
    losses, saved, evaluated, eval_losses, ckpt_bytes = [], [], [], [], None
    for i in range(args.warmup + args.iters):
        if i == args.warmup:
            clk.start()
        losses.append(train_step())
        t = i - args.warmup
        if t >= 0:
            if (t + 1) % args.save_every == 0:
                torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "step": t}, args.ckpt)
                saved.append(t)
            if (t + 1) % args.eval_every == 0:
                eval_losses.append(evaluate())
                evaluated.append(t)
            clk.lap()
    clk.stop()
    vals = clock.check_finite("loss", torch.stack(losses))
    clock.check_finite("eval loss", eval_losses or [0.0])
    if saved:
        ckpt_bytes = os.path.getsize(args.ckpt)
        state = torch.load(args.ckpt, map_location="cpu", weights_only=False)  # our own file
        if state["step"] != saved[-1]:
            clock.fail(f"the checkpoint holds step {state['step']}, expected {saved[-1]}")
        os.remove(args.ckpt)
    clk.report(laps_synced=False, saved_iters=saved, eval_iters=evaluated, eval_losses=[round(v, 6) for v in eval_losses],
               ckpt_bytes=ckpt_bytes, ckpt_path=args.ckpt, save_every=args.save_every, eval_every=args.eval_every,
               eval_batches=args.eval_batches, batch=args.batch, dims=dims, dtype="fp32",
               optimizer="AdamW(fused=True)", first_loss=round(vals[0], 6), last_loss=round(vals[-1], 6))


if __name__ == "__main__":
    main()
