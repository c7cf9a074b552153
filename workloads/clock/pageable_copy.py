#!/usr/bin/env python3
"""What the PyTorch profiler does to a pageable host-to-device copy: one phase of --copies blocking ``x.cuda()``
copies of a 64 MiB float32 host tensor from ordinary (pageable) memory, each timed on the host (perf_counter around
the copy, which returns once the data is on the GPU), plain or under torch.profiler.

--tracer none: no profiler; cpu_cuda: torch.profiler with CPU and CUDA activities, record_shapes and with_stack (as
workloads/clock/clock.py --kineto); cuda: CUDA activity only; cpu: CPU activity only (shapes and stacks). Run one
process a phase, interleaved (tracer_copy.sh), as the plain and traced programs of ../clock are.

    python3 workloads/clock/pageable_copy.py --tracer none|cpu_cuda|cuda|cpu [--copies 30] [--pool 3]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import time

import torch


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tracer", choices=["none", "cpu_cuda", "cuda", "cpu"], required=True)
    p.add_argument("--copies", type=int, default=30)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--pool", type=int, default=3, help="distinct host tensors, used in turn (as input_loop.py)")
    p.add_argument("--mib", type=int, default=64)
    args = p.parse_args()
    n = args.mib * (1 << 20) // 4
    pool = [torch.randn(n) for _ in range(args.pool)]
    torch.cuda.init()
    for i in range(args.warmup):
        pool[i % args.pool].cuda()
    torch.cuda.synchronize()
    from torch.profiler import ProfilerActivity, profile
    acts = {"cpu_cuda": [ProfilerActivity.CPU, ProfilerActivity.CUDA], "cuda": [ProfilerActivity.CUDA], "cpu": [ProfilerActivity.CPU]}
    ctx = (profile(activities=acts[args.tracer], record_shapes=True, with_stack=True) if args.tracer != "none"
           else contextlib.nullcontext())
    laps = []
    with ctx:
        for i in range(args.copies):
            t0 = time.perf_counter()
            y = pool[i % args.pool].cuda()
            torch.cuda.synchronize()
            laps.append((time.perf_counter() - t0) * 1e3)
            del y
    ms = statistics.median(laps)
    print(json.dumps({"program": "pageable_copy", "tracer": args.tracer, "mib": args.mib, "copies": args.copies,
                      "copy_ms_median": round(ms, 4), "copy_ms_min": round(min(laps), 4), "copy_ms_max": round(max(laps), 4),
                      "gb_per_s_median": round(args.mib * (1 << 20) / (ms * 1e-3) / 1e9, 2), "laps_ms": [round(x, 4) for x in laps],
                      "device": torch.cuda.get_device_name(), "torch": torch.__version__}))


if __name__ == "__main__":
    main()
