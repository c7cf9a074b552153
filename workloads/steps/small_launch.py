#!/usr/bin/env python3
"""Host/launch-bound training steps: the fixtures tests/data/h200_ncuwrap/steps/small_launch*.sqlite.gz are nsys captures of it.

A tiny MLP (Linear layers of width 64 with LayerNorm and GELU between them, batch 32) trained on a mean
squared error with torch.optim.Adam(foreach=False): the optimizer updates each parameter tensor with its
own few elementwise kernels, so each step (an NVTX range named `step`) launches a few hundred kernels of
a few microseconds each from Python, and ends with loss.item(). The GPU is idle most of the step, waiting
for the next launch: the host's launch rate, not the GPU, sets the step time.

Prints one line of JSON at the end: step_wall_ms (host, time.perf_counter() between successive step
starts, the last one to the loop's end), step_gpu_ms (a torch.cuda.Event pair around each step: the span
the step's work took on the stream, idle gaps between launches included) and their medians over the
steady steps (all but the first).

    python3 workloads/steps/small_launch.py [--steps 30] [--layers 6] [--width 64] [--batch 32]
"""

from __future__ import annotations

import argparse
import json

import torch
import torch.nn.functional as F
from torch import nn

from marks import Marks, add_arguments  # this folder's: how iterations are marked
from step_clock import StepClock  # and how they are timed


def mlp(width: int, layers: int) -> nn.Sequential:
    mods: list[nn.Module] = []
    for i in range(layers):
        mods.append(nn.Linear(width, width))
        if i < layers - 1:
            mods += [nn.LayerNorm(width), nn.GELU()]
    return nn.Sequential(*mods)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--layers", type=int, default=6, help="Linear layers (LayerNorm+GELU between them)")
    parser.add_argument("--width", type=int, default=64)
    parser.add_argument("--batch", type=int, default=32)
    add_arguments(parser)
    args = parser.parse_args()
    marks = Marks(args)
    torch.manual_seed(0)
    model = mlp(args.width, args.layers).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, foreach=False)
    x = torch.randn(args.batch, args.width, device="cuda")
    y = torch.randn(args.batch, args.width, device="cuda")
    clock, losses = StepClock(args.steps), []
    marks.start()
    for step in range(args.steps):
        clock.step()
        marks.push()
        clock.gpu_start(step)
        loss = F.mse_loss(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        clock.gpu_end(step)
        losses.append(loss.item())
        marks.pop()
    marks.stop()
    clock.stop()
    print(json.dumps({
        "program": "small_launch", "steps": args.steps, "layers": args.layers, "width": args.width,
        "batch": args.batch, "param_tensors": len(list(model.parameters())),
        **clock.timings(4),
        "first_loss": round(losses[0], 5), "last_loss": round(losses[-1], 5),
        "device": torch.cuda.get_device_name(), "torch": torch.__version__,
    }))


if __name__ == "__main__":
    main()
