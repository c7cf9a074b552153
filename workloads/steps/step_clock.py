"""How a step program of this folder times its steps, and the timings in its JSON line.

Each step's host time is ``time.perf_counter()`` between successive step starts (the last one to the
loop's end); its GPU time the elapsed time of a ``torch.cuda.Event`` pair around the step's GPU work (the
span that work took on the stream, idle gaps between launches included). The steady steps are all but
the first (its warm-up: lazy module loading, library heuristics, allocations).

A program does::

    clock = StepClock(args.steps)
    marks.start()
    for step in range(args.steps):
        clock.step()            # the step starts
        marks.push()
        ...                     # host work the GPU time leaves out
        clock.gpu_start(step)
        ...                     # the step's GPU work
        clock.gpu_end(step)
        x.item()
        marks.pop()
    marks.stop()
    clock.stop()                # the loop's end, then a synchronize
    print(json.dumps({..., **clock.timings(digits), ...}))
"""

from __future__ import annotations

import statistics
import time

import torch


class StepClock:
    """The host and GPU times of ``steps`` steps (see the module's docstring)."""

    def __init__(self, steps: int):
        self.events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(steps)]
        self.starts: list[float] = []

    def step(self) -> None:
        self.starts.append(time.perf_counter())

    def gpu_start(self, step: int) -> None:
        self.events[step][0].record()

    def gpu_end(self, step: int) -> None:
        self.events[step][1].record()

    def stop(self) -> None:
        self.starts.append(time.perf_counter())
        torch.cuda.synchronize()

    def wall_ms(self) -> list[float]:
        return [(b - a) * 1e3 for a, b in zip(self.starts, self.starts[1:])]

    def timings(self, digits: int, **more: list[float]) -> dict:
        """``step_wall_ms``, ``step_gpu_ms``, then ``step_NAME_ms`` of each of ``more`` (a series of the
        program's own, one value a step), ``steady_from`` and the steady steps' medians of each, rounded
        to ``digits``."""
        series = {"wall": self.wall_ms(), "gpu": [s.elapsed_time(e) for s, e in self.events], **more}
        return {**{f"step_{name}_ms": [round(v, digits) for v in values] for name, values in series.items()}, "steady_from": 1,
                **{f"steady_{name}_ms_median": round(steady(values), digits) for name, values in series.items()}}


def steady(values: list[float]) -> float:
    """The median of the steady steps (all but the first; the first where there is only one)."""
    return statistics.median(values[1:] or values)
