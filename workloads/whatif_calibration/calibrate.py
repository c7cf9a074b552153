#!/usr/bin/env python3
"""Calibration for the what-if replay (issue 50): copy rates, a CUDA graph's launch costs, an eager op's host cost.

Every figure is the median (with min and max) of --reps repetitions after --warmup untimed ones; times in
microseconds, rates in GB/s (1 GB = 1e9 bytes).

1. Copies. Host to device (``dev.copy_(host)``) and device to host (``host.copy_(dev)``) of 1 MiB and 64 MiB
   uint8 tensors, with pageable host memory (a blocking copy: non_blocking=False) and pinned host memory
   (non_blocking=True, then waited for). A repetition: synchronize; event e0; t0 = perf_counter(); the copy;
   event e1; synchronize; t1. ``wall_us`` = t1 - t0 (the call and the wait), ``gpu_us`` = e0 -> e1.
   The copied bytes are checked once (1 MiB there and back).
2. CUDA graphs of 1, 30 and 200 nodes, each node ``x.add_(1)`` on a 256-element float32 tensor (one tiny
   kernel), captured with torch.cuda.graph:
   - ``host_replay_us``: perf_counter around 200 ``g.replay()`` calls with no synchronisation, / 200
     (``host_first20_us``: the first 20 of them, / 20: before any queue could fill); ``gpu_200_replays_us``:
     events around the same 200 replays, / 200 (the GPU's time a replay when replays are back to back);
   - ``gpu_replay_us``: events around one replay issued behind a GPU spin (torch.cuda._sleep), so that the
     host has queued the event, the replay and the closing event before the GPU reaches them: the replay's
     GPU time without the host's latency. ``spin_covered``: in every repetition the host finished issuing
     before the spin ended (the spin's own GPU time, from an event before it, exceeded the host's issue time);
   - ``kernel_alone_us``: the same for one eager ``x.add_(1)``: the node's kernel timed alone;
   - ``eager_gpu_us``: the same for n eager ``x.add_(1)`` back to back (a longer spin covers their launches);
   - ``per_node_us`` = gpu_replay_us / n; ``per_node_gap_us`` = (gpu_replay_us - n kernel_alone_us) / n: the
     GPU time a graph node costs beyond its kernel timed alone; ``eager_per_kernel_us`` = eager_gpu_us / n.
   ``graph_slope_30_200_us``: (gpu_replay_us(200) - gpu_replay_us(30)) / 170, the GPU time one more node adds.
3. ``eager_op``: the host's cost of one ``x.add_(1)``: perf_counter around --ops calls with no
   synchronisation, / ops (the GPU keeps up: the kernel takes less time than its launch).

The last line printed is one JSON object (``program`` "calibrate", ``traced`` from CLOCK_TRACED as the clock
programs have it).

    python3 workloads/whatif_calibration/calibrate.py [--reps 15] [--warmup 3] [--ops 5000] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

import torch

MIB = 1 << 20
GRAPH_NODES = (1, 30, 200)
REPLAYS = 200
FIRST = 20
TINY = 256


def stats(values: list[float]) -> dict:
    return {"median": round(statistics.median(values), 3), "min": round(min(values), 3), "max": round(max(values), 3)}


def fail(message: str) -> None:
    print(f"CHECK FAILED: {message}", flush=True)
    raise SystemExit(3)


def timed(fn, reps: int, warmup: int) -> tuple[list[float], list[float]]:
    """(wall_us, gpu_us) of ``fn`` for each repetition after ``warmup``: synchronize, event, perf_counter, fn, event, synchronize."""
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    walls, gpus = [], []
    for r in range(warmup + reps):
        torch.cuda.synchronize()
        e0.record()
        t0 = time.perf_counter()
        fn()
        e1.record()
        torch.cuda.synchronize()
        t1 = time.perf_counter()
        if r >= warmup:
            walls.append((t1 - t0) * 1e6)
            gpus.append(e0.elapsed_time(e1) * 1e3)
    return walls, gpus


def copies(reps: int, warmup: int) -> list[dict]:
    out = []
    for size in (MIB, 64 * MIB):
        dev = torch.empty(size, dtype=torch.uint8, device="cuda")
        dev.fill_(7)
        for memory in ("pageable", "pinned"):
            host = torch.empty(size, dtype=torch.uint8, pin_memory=memory == "pinned")
            host.fill_(3)  # touch every page before timing
            nb = memory == "pinned"
            for direction, fn in (("H2D", lambda: dev.copy_(host, non_blocking=nb)), ("D2H", lambda: host.copy_(dev, non_blocking=nb))):
                walls, gpus = timed(fn, reps, warmup)
                w, g = statistics.median(walls), statistics.median(gpus)
                out.append({"direction": direction, "memory": memory, "bytes": size, "wall_us": stats(walls), "gpu_us": stats(gpus),
                            "wall_gb_per_s": round(size / w / 1e3, 3), "gpu_gb_per_s": round(size / g / 1e3, 3)})
    return out


def check_copy() -> None:
    src = torch.arange(MIB, dtype=torch.int64).remainder(251).to(torch.uint8)
    back = src.cuda().cpu()
    if not torch.equal(src, back):
        fail("1 MiB copied to the GPU and back differs")


def spun(fn, spin_cycles: int, reps: int, warmup: int) -> tuple[list[float], bool]:
    """GPU times (us) of ``fn`` issued behind a spin, and whether the spin outlasted the host's issuing every time."""
    es, e0, e1 = (torch.cuda.Event(enable_timing=True) for _ in range(3))
    gpus, covered = [], True
    for r in range(warmup + reps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        es.record()
        torch.cuda._sleep(spin_cycles)
        e0.record()
        fn()
        e1.record()
        issue_us = (time.perf_counter() - t0) * 1e6
        torch.cuda.synchronize()
        if r >= warmup:
            gpus.append(e0.elapsed_time(e1) * 1e3)
            covered = covered and es.elapsed_time(e0) * 1e3 > issue_us
    return gpus, covered


def graphs(reps: int, warmup: int) -> tuple[list[dict], float]:
    x = torch.zeros(TINY, device="cuda")
    add = lambda: x.add_(1)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            add()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    alone, alone_covered = spun(add, 2_000_000, reps, warmup)
    out = []
    for n in GRAPH_NODES:
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for _ in range(n):
                add()
        before = float(x[0])
        g.replay()
        torch.cuda.synchronize()
        if float(x[0]) != before + n:
            fail(f"a replay of the {n}-node graph added {float(x[0]) - before}, not {n}")
        host, first, gpu200 = [], [], []
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        for r in range(warmup + reps):
            torch.cuda.synchronize()
            e0.record()
            t0 = time.perf_counter()
            for i in range(REPLAYS):
                if i == FIRST:
                    t20 = time.perf_counter()
                g.replay()
            t1 = time.perf_counter()
            e1.record()
            torch.cuda.synchronize()
            if r >= warmup:
                host.append((t1 - t0) * 1e6 / REPLAYS)
                first.append((t20 - t0) * 1e6 / FIRST)
                gpu200.append(e0.elapsed_time(e1) * 1e3 / REPLAYS)
        gpu, covered = spun(g.replay, 2_000_000 + 40_000 * n, reps, warmup)
        eager, eager_covered = spun(lambda: [add() for _ in range(n)], 2_000_000 + 40_000 * n, reps, warmup)
        gr, ka, eg = statistics.median(gpu), statistics.median(alone), statistics.median(eager)
        out.append({"nodes": n, "host_replay_us": stats(host), "host_first20_us": stats(first), "gpu_200_replays_us": stats(gpu200),
                    "gpu_replay_us": stats(gpu), "spin_covered": covered, "kernel_alone_us": stats(alone), "kernel_alone_spin_covered": alone_covered,
                    "eager_gpu_us": stats(eager), "eager_spin_covered": eager_covered,
                    "per_node_us": round(gr / n, 3), "per_node_gap_us": round((gr - n * ka) / n, 3), "eager_per_kernel_us": round(eg / n, 3)})
        del g
    by_n = {d["nodes"]: d["gpu_replay_us"]["median"] for d in out}
    return out, round((by_n[200] - by_n[30]) / 170, 3)


def eager_op(ops: int, reps: int, warmup: int) -> dict:
    x = torch.zeros(TINY, device="cuda")
    per = []
    for r in range(warmup + reps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(ops):
            x.add_(1)
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        if r >= warmup:
            per.append((t1 - t0) * 1e6 / ops)
    if float(x[0]) != (warmup + reps) * ops:
        fail(f"x.add_(1) {(warmup + reps) * ops} times gave {float(x[0])}")
    return {"op": "x.add_(1)", "ops": ops, "host_us": stats(per)}


def main() -> None:
    p = argparse.ArgumentParser(prog="calibrate", description=__doc__.split("\n\n")[0])
    p.add_argument("--reps", type=int, default=15)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--ops", type=int, default=5000, help="x.add_(1) calls a repetition of the eager op's timing")
    p.add_argument("--quick", action="store_true", help="3 repetitions, 1 warm-up, 500 ops: a smoke test of the script")
    args = p.parse_args()
    if args.quick:
        args.reps, args.warmup, args.ops = 3, 1, 500
    if args.reps < 1 or args.warmup < 0 or args.ops < 1:
        p.error("--reps and --ops must be at least 1, --warmup at least 0")
    torch.zeros(1, device="cuda")  # the context, outside every timing
    t0 = time.perf_counter()
    check_copy()
    graph_rows, slope = graphs(args.reps, args.warmup)
    result = {"program": "calibrate", "reps": args.reps, "warmup": args.warmup,
              "copies": copies(args.reps, args.warmup), "graphs": graph_rows, "graph_slope_30_200_us": slope,
              "eager_op": eager_op(args.ops, args.reps, args.warmup),
              "run_s": None, "traced": os.environ.get("CLOCK_TRACED") or None,
              "device": torch.cuda.get_device_name(), "torch": torch.__version__}
    result["run_s"] = round(time.perf_counter() - t0, 3)
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
