#!/usr/bin/env python3
"""Data- and tensor-parallel training steps for issue 26's captures at 4 and 8 ranks, one rank slowed on demand.

Three modes, each step an NVTX range named ``train_step`` (what ``ncuwrap timeline --ranks`` reads):
- ``ddp``: DistributedDataParallel over an MLP: NCCL all-reduces of the gradient buckets, overlapping the
  backward pass;
- ``fsdp``: the same MLP fully sharded (``torch.distributed.fsdp.fully_shard``, one unit per layer):
  all-gathers of each layer's parameters before its forward and backward, reduce-scatters of its gradients;
- ``tp``: a tensor-parallel MLP over every rank (``ColwiseParallel`` then ``RowwiseParallel`` per pair of
  layers): an all-reduce of the activations after each pair, forward and backward, on the critical path.

A slowed rank (``--slow-rank R``): ``--slow-ms X`` adds about X ms of GPU compute to its forward pass
(the others wait inside the next collective); ``--input-ms Y`` sleeps Y ms on its CPU before the step's
work, as a slow input pipeline would (its GPU idles, the others wait the same way).

    torchrun --standalone --nproc-per-node 8 workloads/ranks/parallel_step.py --mode fsdp --steps 10 --slow-rank 7 --slow-ms 20

Not yet run: no machine of 4 or 8 GPUs has been lent since it was written (2026-12-02); the DDP step it
extends (ddp_step.py) ran on the H200 x2. Capture with workloads/ranks/capture_parallel.sh.
"""

from __future__ import annotations

import argparse
import os
import time

MODES = ("ddp", "fsdp", "tp")


def parse(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=MODES, default="ddp")
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--dim", type=int, default=4096)
    parser.add_argument("--layers", type=int, default=8)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--slow-rank", type=int, default=None)
    parser.add_argument("--slow-ms", type=float, default=0.0, help="extra GPU compute on the slow rank, per step")
    parser.add_argument("--input-ms", type=float, default=0.0, help="CPU sleep before the slow rank's step (a slow input pipeline)")
    args = parser.parse_args(argv)
    if args.mode == "tp" and args.layers % 2:
        parser.error("--mode tp pairs the layers (column- then row-parallel): give an even --layers")
    return args


def build(mode: str, dim: int, layers: int, device, world: int):
    """The model of ``mode`` on this rank, and the batch it takes (tensor parallel: every rank the same batch)."""
    import torch
    from torch import nn

    mlp = nn.Sequential(*[nn.Linear(dim, dim) for _ in range(layers)]).to(device)
    if mode == "ddp":
        from torch.nn.parallel import DistributedDataParallel as DDP

        return DDP(mlp, device_ids=[device.index])
    from torch.distributed.device_mesh import init_device_mesh

    mesh = init_device_mesh("cuda", (world,))
    if mode == "fsdp":
        from torch.distributed.fsdp import fully_shard

        for layer in mlp:
            fully_shard(layer, mesh=mesh)
        return fully_shard(mlp, mesh=mesh)
    from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module

    plan = {str(i): ColwiseParallel() if i % 2 == 0 else RowwiseParallel() for i in range(layers)}
    torch.manual_seed(0)  # tensor parallel: the same input on every rank
    return parallelize_module(mlp, mesh, plan)


def main(argv=None) -> None:
    args = parse(argv)
    import torch
    import torch.distributed as dist
    from ddp_step import busy, train_steps  # beside this script (its folder is the script's sys.path[0]); it imports torch

    dist.init_process_group("nccl")
    rank, world, local = dist.get_rank(), dist.get_world_size(), int(os.environ.get("LOCAL_RANK", 0))
    torch.cuda.set_device(local)
    device = torch.device("cuda", local)
    model = build(args.mode, args.dim, args.layers, device, world)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    if args.mode == "tp":
        torch.manual_seed(0)
    x = torch.randn(args.batch, args.dim, device=device)
    slowed = rank == args.slow_rank

    def before() -> None:  # the slowed rank's slow input pipeline, then its extra GPU compute
        if slowed and args.input_ms > 0:
            time.sleep(args.input_ms / 1e3)
        if slowed:
            busy(args.slow_ms, device)

    train_steps(model, opt, x, args.steps, rank, before)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
