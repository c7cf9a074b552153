#!/usr/bin/env python3
"""Input-transfer-bound steps: the fixture tests/data/h200_ncuwrap/steps/input_bound.sqlite.gz is an nsys capture of it.

Each step (an NVTX range named `step`) makes a fresh batch in pageable host memory (torch.empty on the
CPU, 256 MiB of float32 by default, not pinned), copies it to the GPU with .to("cuda"), and does a little
work on it there: a sum over the whole batch and a 1024x1024 matrix product on a slice of it; then
.item() of the result. A pageable copy goes through the driver's staging buffers at a small fraction of
the link's speed, and the host waits for it; the GPU's own work is a fraction of a millisecond, so the
copy sets the step time.

With --pinned, the fix: one batch buffer in page-locked (pinned) host memory, allocated before the loop
and reused by every step, copied with non_blocking=True: the copy runs at the link's speed (DMA from
pinned pages, no staging). The GPU work and the result are the same.

Prints one line of JSON at the end: step_wall_ms (host, time.perf_counter() between successive step
starts, the last one to the loop's end), step_gpu_ms (a torch.cuda.Event pair around the copy and the
work), their medians over the steady steps (all but the first), and the copy's effective rate.

    python3 workloads/steps/input_bound.py [--steps 20] [--mib 256] [--matmul 1024] [--pinned]
"""

from __future__ import annotations

import argparse
import json

import torch

from marks import Marks, add_arguments  # this folder's: how iterations are marked
from step_clock import StepClock, steady  # and how they are timed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--mib", type=int, default=256, help="size of each step's batch, float32")
    parser.add_argument("--matmul", type=int, default=1024, help="side of the matrix product on a slice")
    parser.add_argument("--pinned", action="store_true", help="one reused pinned batch buffer, copied with non_blocking=True")
    add_arguments(parser)
    args = parser.parse_args()
    marks = Marks(args)
    n = args.mib * 2**20 // 4
    m = args.matmul
    if m * m > n:
        parser.error("--matmul too large for --mib")
    torch.cuda.init()
    clock, results = StepClock(args.steps), []
    pinned = torch.empty(n, dtype=torch.float32, pin_memory=True) if args.pinned else None
    marks.start()
    for step in range(args.steps):
        clock.step()
        marks.push()
        batch = pinned if args.pinned else torch.empty(n, dtype=torch.float32)   # pinned and reused, or pageable and fresh
        clock.gpu_start(step)
        x = batch.to("cuda", non_blocking=args.pinned)
        a = x[: m * m].view(m, m)
        result = x.sum() + (a @ a).sum()
        clock.gpu_end(step)
        results.append(result.item())
        marks.pop()
    marks.stop()
    clock.stop()
    steady_wall = steady(clock.wall_ms())
    print(json.dumps({
        "program": "input_bound", "steps": args.steps, "batch_mib": args.mib, "matmul": m, "pinned": args.pinned,
        **clock.timings(3),
        "steady_bytes_per_s_by_wall": round(n * 4 / (steady_wall / 1e3)),
        "device": torch.cuda.get_device_name(), "torch": torch.__version__,
    }))


if __name__ == "__main__":
    main()
