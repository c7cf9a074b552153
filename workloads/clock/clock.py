"""The shared clock of the workload programs in this folder: command-line options, timing, the JSON line.

Every program here runs ``--warmup W`` untimed iterations, then ``torch.cuda.synchronize()``, ``t0 =
time.perf_counter()``, ``--iters N`` iterations, ``torch.cuda.synchronize()``, ``t1``: the program's own
clock is ``(t1 - t0) / N`` a step (``step_ms_mean``). Programs whose iterations synchronize anyway (a
``.item()``, a ``.cpu()``, a pageable copy) also call :meth:`Clock.lap` at the end of each timed iteration;
the laps become ``step_ms`` (the first from t0, then between successive laps), and ``laps_synced`` says
whether each iteration waited for the GPU (True: the laps are step times) or not (False: the laps are the
host's issue times, no synchronisation was added to take them).

The last line a program prints on stdout is one JSON object: ``program``, ``variant``, ``iters``,
``warmup``, ``loop_s`` (t1 - t0), ``step_ms_mean``, optionally ``step_ms`` / ``step_ms_median`` /
``laps_synced``, the program's own facts, ``traced`` (the environment variable CLOCK_TRACED, or null:
the capture scripts set it to say which tracer, if any, the run was under), and ``device`` / ``torch``.

``--kineto PATH``: the timed loop runs under torch.profiler (CPU and CUDA activity, ``record_shapes=True``,
``with_stack=True``, no schedule: the whole timed loop, no ProfilerStep ranges); the profiler starts just
before the synchronize that precedes t0 and stops just after t1, and its Chrome trace is written to PATH
(gzipped when PATH ends in ``.gz``).

A program does::

    parser = clock.parser("mlp_train", __doc__, iters=20)
    parser.add_argument(...)
    args = parser.parse_args()
    clk = clock.Clock(args, "mlp_train", variant)
    for i in range(args.warmup + args.iters):
        if i == args.warmup:
            clk.start()
        ...one iteration...
    clk.stop()
    clock.check_finite("loss", losses)
    clk.report(batch=..., ...)
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import os
import shutil
import statistics
import sys
import time


def parser(program: str, doc: str | None, iters: int = 20, warmup: int = 3) -> argparse.ArgumentParser:
    """An argument parser with the options every program shares: --iters, --warmup, --kineto."""
    p = argparse.ArgumentParser(prog=program, description=(doc or "").split("\n\n")[0])
    p.add_argument("--iters", type=int, default=iters, help=f"timed iterations (default {iters})")
    p.add_argument("--warmup", type=int, default=warmup, help=f"untimed iterations first (default {warmup})")
    p.add_argument("--kineto", metavar="PATH",
                   help="run the timed loop under torch.profiler (shapes, stacks) and write its Chrome trace here")
    return p


def fail(message: str) -> None:
    """Stop the program loudly: a result that is not sane is not a measurement."""
    print(f"CHECK FAILED: {message}", file=sys.stderr, flush=True)
    raise SystemExit(3)


def check_finite(name: str, values) -> list[float]:
    """The floats of values (a tensor, a list of tensors or numbers); fail unless every one is finite."""
    import torch

    if isinstance(values, torch.Tensor):
        flat = values.detach().float().reshape(-1).cpu().tolist()
    else:
        flat = []
        for v in values:
            if isinstance(v, torch.Tensor):
                flat.extend(v.detach().float().reshape(-1).cpu().tolist())
            else:
                flat.append(float(v))
    if not flat:
        fail(f"{name}: no values")
    bad = [v for v in flat if not math.isfinite(v)]
    if bad:
        fail(f"{name}: {len(bad)} of {len(flat)} values not finite (first {bad[0]})")
    return flat


class Clock:
    def __init__(self, args, program: str, variant: str | None):
        self.args = args
        self.program = program
        self.variant = variant
        self.t0 = self.t1 = None
        self.laps: list[float] = []
        self.prof = None
        if args.iters < 1 or args.warmup < 0:
            fail("--iters must be at least 1 and --warmup at least 0")

    def start(self) -> None:
        import torch

        if self.args.kineto:
            from torch.profiler import ProfilerActivity, profile

            self.prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                                record_shapes=True, with_stack=True)
            self.prof.__enter__()
        torch.cuda.synchronize()
        self.t0 = time.perf_counter()

    def lap(self) -> None:
        """The end of one timed iteration, on the host clock (no synchronisation here)."""
        self.laps.append(time.perf_counter())

    def stop(self) -> None:
        import torch

        torch.cuda.synchronize()
        self.t1 = time.perf_counter()
        if self.prof is not None:
            self.prof.__exit__(None, None, None)
            self._export(self.args.kineto)

    def _export(self, path: str) -> None:
        plain = path[:-3] if path.endswith(".gz") else path
        self.prof.export_chrome_trace(plain)
        if plain != path:
            with open(plain, "rb") as src, gzip.open(path, "wb", compresslevel=9) as dst:
                shutil.copyfileobj(src, dst)
            os.remove(plain)

    def report(self, laps_synced: bool | None = None, **facts) -> dict:
        """Print the JSON line (last on stdout) and return it."""
        import torch

        if self.t0 is None or self.t1 is None:
            fail("the clock was not started and stopped")
        n = self.args.iters
        loop_s = self.t1 - self.t0
        out = {
            "program": self.program,
            "variant": self.variant,
            "iters": n,
            "warmup": self.args.warmup,
            "loop_s": round(loop_s, 6),
            "step_ms_mean": round(loop_s / n * 1e3, 4),
        }
        if self.laps:
            if len(self.laps) != n:
                fail(f"{len(self.laps)} laps for {n} iterations")
            marks = [self.t0] + self.laps
            steps = [(b - a) * 1e3 for a, b in zip(marks, marks[1:])]
            out["step_ms"] = [round(s, 4) for s in steps]
            out["step_ms_median"] = round(statistics.median(steps), 4)
            out["laps_synced"] = laps_synced
            out["tail_ms"] = round((self.t1 - self.laps[-1]) * 1e3, 4)  # last lap to t1 (the final synchronize)
        out.update(facts)
        out["kineto"] = self.args.kineto
        out["traced"] = os.environ.get("CLOCK_TRACED") or None
        out["device"] = torch.cuda.get_device_name()
        out["torch"] = torch.__version__
        print(json.dumps(out), flush=True)
        return out
