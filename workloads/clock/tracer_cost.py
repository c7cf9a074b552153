#!/usr/bin/env python3
"""Calibration: the host cost of launching tiny CUDA kernels through PyTorch, with and without a tracer.

On 1-element float32 tensors, three phases of --k iterations each:
- ``add_``: ``x.add_(1)``: one ATen op, one kernel;
- ``mse_loss``: ``F.mse_loss(x, y)``: one top-level op that launches two kernels (the elementwise squared
  difference, then the mean: a nested ``aten::mean``);
- ``add_mul``: ``x.add_(1); x.mul_(0.5)``: two ops, two kernels.
Each phase is timed by perf_counter between two torch.cuda.synchronize() calls, --reps times (phases in turn),
after --warmup iterations of each. The GPU keeps up (a 1-element kernel takes ~2 us there), so the time is
the host's: the per-iteration cost of the op(s) and their launches, plus whatever a tracer adds. Run it plain,
under nsys (with and without --pytorch=autograd-nvtx) and with --profiler kineto / kineto_full: the
differences are each tracer's cost per iteration; the counts of ops and kernels per iteration (from an
nsys export, see nsys_counts.py, or --count-events here) turn them into costs per op and per launch.

Each timed phase sits in an NVTX range named ``tracer_cost:PHASE:REP`` (pushed before the first synchronize,
popped after the second; nothing else of this program is NVTX-marked). --profiler kineto: each (phase, rep)
runs inside its own torch.profiler session (CPU + CUDA activity), started before the range and stopped after
it (so the profiler's start and its processing stay out of the timing); kineto_full: the same with
record_shapes=True and with_stack=True. No trace is written. --count-events (with a profiler): count the
profiler's events of each session by kind (CPU ops, CUDA runtime calls, kernels): slow for a large --k.

The JSON line (last on stdout): per phase, the loop seconds and microseconds per iteration of each rep.

    python3 workloads/clock/tracer_cost.py [--k 20000] [--reps 3] [--warmup 2000]
        [--profiler none|kineto|kineto_full] [--count-events]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

import torch
import torch.nn.functional as F

PHASES = ("add_", "mse_loss", "add_mul")


def main() -> None:
    p = argparse.ArgumentParser(prog="tracer_cost", description=__doc__.split("\n\n")[0])
    p.add_argument("--k", type=int, default=20000, help="iterations a phase")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--warmup", type=int, default=2000, help="untimed iterations of each phase first")
    p.add_argument("--profiler", choices=["none", "kineto", "kineto_full"], default="none")
    p.add_argument("--count-events", action="store_true")
    args = p.parse_args()
    x = torch.zeros(1, device="cuda")
    y = torch.ones(1, device="cuda")
    z = torch.zeros(1, device="cuda")

    def run(phase: str, n: int) -> None:
        if phase == "add_":
            for _ in range(n):
                x.add_(1)
        elif phase == "mse_loss":
            for _ in range(n):
                F.mse_loss(y, z)
        else:
            for _ in range(n):
                z.add_(1)
                z.mul_(0.5)

    for phase in PHASES:
        run(phase, args.warmup)
    torch.cuda.synchronize()
    results, counts = _timed(args, run)
    _finish(args, x, z, results, counts)


def _session(args):
    from torch.profiler import ProfilerActivity, profile

    full = args.profiler == "kineto_full"
    return profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=full, with_stack=full)


def _timed(args, run):
    """Each phase's loop of args.k iterations, args.reps times, under the profiler asked for."""
    session = lambda: _session(args)  # noqa: E731
    results = {ph: {"loop_s": [], "us_per_iter": []} for ph in PHASES}
    counts = {ph: [] for ph in PHASES}
    for rep in range(args.reps):
        for phase in PHASES:
            prof = session() if args.profiler != "none" else None
            if prof is not None:
                prof.__enter__()
            torch.cuda.nvtx.range_push(f"tracer_cost:{phase}:{rep}")
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            run(phase, args.k)
            torch.cuda.synchronize()
            t1 = time.perf_counter()
            torch.cuda.nvtx.range_pop()
            if prof is not None:
                prof.__exit__(None, None, None)
                if args.count_events:
                    counts[phase].append(count_events(prof))
            results[phase]["loop_s"].append(round(t1 - t0, 6))
            results[phase]["us_per_iter"].append(round((t1 - t0) / args.k * 1e6, 4))
    return results, counts


def _finish(args, x, z, results, counts) -> None:
    expect = args.warmup + args.reps * args.k
    if float(x) != float(expect):
        raise SystemExit(f"CHECK FAILED: x is {float(x)}, expected {expect}")
    if abs(float(z) - 1.0) > 1e-3:
        raise SystemExit(f"CHECK FAILED: z is {float(z)}, expected ~1")
    for ph in PHASES:
        results[ph]["us_per_iter_median"] = statistics.median(results[ph]["us_per_iter"])
    out = {
        "program": "tracer_cost", "variant": args.profiler, "iters": args.k, "reps": args.reps, "warmup": args.warmup,
        "phases": results,
        "kernels_per_iter_expected": {"add_": 1, "mse_loss": 2, "add_mul": 2},
        "event_counts": counts if args.count_events else None,
        "profiler": args.profiler,
        "traced": os.environ.get("CLOCK_TRACED") or None,
        "device": torch.cuda.get_device_name(), "torch": torch.__version__,
    }
    print(json.dumps(out), flush=True)


def count_events(prof) -> dict:
    """The profiler's events of one session by kind: CPU ops (aten::*), other CPU events, CUDA runtime calls,
    kernels (device-side events)."""
    t = time.perf_counter()
    c = {"aten_ops": 0, "other_cpu": 0, "cuda_runtime": 0, "device": 0, "names": {}}
    try:
        for e in prof.events():
            name = e.name
            if str(e.device_type).endswith("CUDA"):
                c["device"] += 1
            elif name.startswith("aten::"):
                c["aten_ops"] += 1
            elif name.startswith("cuda") or name.startswith("cu"):
                c["cuda_runtime"] += 1
            else:
                c["other_cpu"] += 1
            c["names"][name] = c["names"].get(name, 0) + 1
    except Exception as err:  # the count is a cross-check; the timings stand without it
        c["error"] = repr(err)
    if len(c["names"]) > 40:
        c["names"] = dict(sorted(c["names"].items(), key=lambda kv: -kv[1])[:40])
    c["count_s"] = round(time.perf_counter() - t, 3)
    return c


if __name__ == "__main__":
    main()
