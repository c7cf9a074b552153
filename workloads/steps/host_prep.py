#!/usr/bin/env python3
"""Host-preprocessing-bound training steps: each iteration prepares its batch in numpy on the CPU, then
trains a small MLP on it on the GPU.

Each step makes a batch of raw samples (``--batch`` x ``--features`` float32 from a seeded generator)
and preprocesses it in :func:`preprocess` (sorted per row for rank features, standardised, clipped, a
running-mean smoothing along each row and a few random crops gathered by fancy indexing): tens of ms of
numpy a step. Only then is the batch copied to the GPU (pinned, non_blocking), where a 3-layer MLP
(width 1024) does forward, backward and an AdamW step (fused) in about a millisecond, and the step ends
with loss.item(). The GPU waits for the host's numpy code most of each step: the host limits it, and
neither faster kernels nor faster launches help; preparing the next batch while the GPU computes does.

Prints one line of JSON at the end: step_wall_ms (host, time.perf_counter() between successive step
starts, the last one to the loop's end), step_gpu_ms (a torch.cuda.Event pair around the step's GPU work),
step_prep_ms (the time in preprocess()), and their medians over the steady steps (all but the first).

    python3 workloads/steps/host_prep.py [--steps 20] [--batch 256] [--features 4096]
        [--marks nvtx|none] [--kineto PATH ...]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from marks import Marks, add_arguments  # this folder's: how iterations are marked
from step_clock import StepClock  # and how they are timed


def preprocess(raw: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A batch's features from its raw samples: all on the host, in numpy."""
    ranked = np.sort(raw, axis=1)
    x = (ranked - ranked.mean(axis=1, keepdims=True)) / (ranked.std(axis=1, keepdims=True) + 1e-6)
    np.clip(x, -3.0, 3.0, out=x)
    window = 16
    c = np.cumsum(x, axis=1)
    smooth = np.empty_like(x)
    smooth[:, window:] = (c[:, window:] - c[:, :-window]) / window
    smooth[:, :window] = x[:, :window]
    starts = rng.integers(0, x.shape[1] // 2, size=x.shape[0])
    crop = smooth[np.arange(x.shape[0])[:, None], starts[:, None] + np.arange(x.shape[1] // 2)[None, :]]
    return np.concatenate([crop, crop[:, ::-1]], axis=1).astype(np.float32)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--features", type=int, default=4096)
    parser.add_argument("--width", type=int, default=1024)
    add_arguments(parser)
    args = parser.parse_args()
    marks = Marks(args)
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    model = nn.Sequential(nn.Linear(args.features, args.width), nn.GELU(), nn.Linear(args.width, args.width), nn.GELU(),
                          nn.Linear(args.width, 1)).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    pinned = torch.empty(args.batch, args.features, dtype=torch.float32, pin_memory=True)
    target = torch.zeros(args.batch, 1, device="cuda")
    clock, prep, losses = StepClock(args.steps), [], []
    marks.start()
    for step in range(args.steps):
        clock.step()
        marks.push()
        raw = rng.standard_normal((args.batch, args.features), dtype=np.float32)
        t = time.perf_counter()
        batch = preprocess(raw, rng)
        prep.append((time.perf_counter() - t) * 1e3)
        pinned.copy_(torch.from_numpy(batch))
        clock.gpu_start(step)
        x = pinned.to("cuda", non_blocking=True)
        loss = F.mse_loss(model(x), target)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        clock.gpu_end(step)
        losses.append(loss.item())
        marks.pop()
    marks.stop()
    clock.stop()
    print(json.dumps({
        "program": "host_prep", "steps": args.steps, "batch": args.batch, "features": args.features, "width": args.width,
        **clock.timings(3, prep=prep),
        "first_loss": round(losses[0], 5), "last_loss": round(losses[-1], 5),
        "device": torch.cuda.get_device_name(), "torch": torch.__version__,
    }))


if __name__ == "__main__":
    main()
