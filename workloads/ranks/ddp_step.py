#!/usr/bin/env python3
"""A small DDP training loop (torch.distributed, NCCL all-reduce of the gradients) for issue 13's
multi-rank captures, with one rank made deliberately slower.

Each step is an NVTX range named ``train_step`` (what ``ncuwrap timeline --ranks`` reads as steps).
``--slow-rank R --slow-ms X`` adds about X ms of extra GPU compute (matrix products) to rank R's
forward pass in every step: the other ranks then wait for it inside the all-reduce.

    torchrun --nproc-per-node 2 workloads/ranks/ddp_step.py --steps 8 --slow-rank 1 --slow-ms 20
"""

from __future__ import annotations

import argparse
import os
import time

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP


def busy(ms: float, device) -> None:
    """About ``ms`` of GPU compute: 4096^2 bf16 matrix products (~0.14 ms each on an H200, measured below)."""
    if ms <= 0:
        return
    a = torch.randn(4096, 4096, device=device, dtype=torch.bfloat16)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    a @ a
    end.record()
    end.synchronize()
    each = max(start.elapsed_time(end), 0.01)
    for _ in range(max(1, round(ms / each))):
        a = a @ a
        a = a / a.abs().amax().clamp(min=1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--dim", type=int, default=4096)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--slow-rank", type=int, default=None)
    parser.add_argument("--slow-ms", type=float, default=0.0)
    args = parser.parse_args()

    dist.init_process_group("nccl")
    rank, local = dist.get_rank(), int(os.environ.get("LOCAL_RANK", 0))
    torch.cuda.set_device(local)
    device = torch.device("cuda", local)
    model = DDP(nn.Sequential(*[nn.Linear(args.dim, args.dim) for _ in range(4)]).to(device), device_ids=[local])
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    x = torch.randn(args.batch, args.dim, device=device)
    slow = args.slow_ms if rank == args.slow_rank else 0.0
    train_steps(model, opt, x, args.steps, rank, before=lambda: busy(slow, device))
    dist.destroy_process_group()


def train_steps(model, opt, x, steps: int, rank: int, before=lambda: None) -> None:
    """``steps`` training steps, each an NVTX range named ``train_step`` (what ``ncuwrap timeline --ranks``
    reads as steps) that starts with ``before()`` (a slowed rank's extra work) and ends synchronized;
    each step's host time printed."""
    for step in range(steps):
        torch.cuda.nvtx.range_push("train_step")
        t = time.perf_counter()
        before()
        loss = model(x).square().mean()
        loss.backward()  # the parallel wrapper's collectives run during and after the backward pass
        opt.step()
        opt.zero_grad(set_to_none=True)
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_pop()
        print(f"rank {rank} step {step}: {1e3 * (time.perf_counter() - t):.1f} ms", flush=True)


if __name__ == "__main__":
    main()
