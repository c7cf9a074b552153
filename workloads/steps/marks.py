"""How a step program marks its iterations, chosen on its command line (``--marks``, ``--kineto``).

- ``--marks nvtx`` (the default): each iteration is an NVTX range named ``step``, as the programs have
  always been captured.
- ``--marks none``: no range at all, as most programs are written: the fixtures of programs without
  markers (ncuwrap must find their steps by repetition).
- ``--kineto PATH``: the loop runs under torch.profiler (CPU and CUDA activity, ``with_stack=True``,
  ``record_shapes=True``) and its Chrome trace is written to PATH (gzipped when PATH ends in ``.gz``).
  With a schedule (the default: skip 1 iteration, warm up 1, record ``--kineto-active`` of them) each
  iteration is ``prof.step()``, so the trace holds ``ProfilerStep#N`` ranges; ``--kineto-schedule none``
  records the whole loop without steps.

A program calls :func:`add_arguments` on its parser, builds ``Marks(args)``, runs its loop inside
between ``marks.start()`` and ``marks.stop()`` and brackets each iteration with ``marks.push()`` / ``marks.pop()``.
"""

from __future__ import annotations

import gzip
import os
import shutil

import torch


def add_arguments(parser) -> None:
    parser.add_argument("--marks", choices=["nvtx", "none"], default="nvtx",
                        help="mark each iteration with an NVTX range named 'step' (nvtx), or not at all (none)")
    parser.add_argument("--kineto", metavar="PATH", help="profile the loop with torch.profiler and write its Chrome trace here")
    parser.add_argument("--kineto-active", type=int, default=5, help="iterations the profiler records (after 1 skipped, 1 warm-up)")
    parser.add_argument("--kineto-schedule", choices=["steps", "none"], default="steps",
                        help="steps: a schedule and prof.step() per iteration (ProfilerStep#N); none: the whole loop, no steps")


class Marks:
    def __init__(self, args):
        self.nvtx = args.marks == "nvtx"
        self.path = args.kineto
        self.scheduled = args.kineto_schedule == "steps"
        self.active = args.kineto_active
        self.prof = None

    def start(self) -> None:
        if self.path:
            from torch.profiler import ProfilerActivity, profile, schedule
            kwargs = {}
            if self.scheduled:
                kwargs["schedule"] = schedule(wait=1, warmup=1, active=self.active, repeat=1)
                kwargs["on_trace_ready"] = self._export
            self.prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], with_stack=True,
                                record_shapes=True, **kwargs)
            self.prof.__enter__()

    def _export(self, prof) -> None:
        plain = self.path[:-3] if self.path.endswith(".gz") else self.path
        prof.export_chrome_trace(plain)
        if plain != self.path:
            with open(plain, "rb") as src, gzip.open(self.path, "wb", compresslevel=9) as dst:
                shutil.copyfileobj(src, dst)
            os.remove(plain)

    def push(self) -> None:
        if self.nvtx:
            torch.cuda.nvtx.range_push("step")

    def pop(self) -> None:
        if self.nvtx:
            torch.cuda.nvtx.range_pop()
        if self.prof is not None and self.scheduled:
            self.prof.step()

    def stop(self) -> None:
        if self.prof is not None:
            self.prof.__exit__(None, None, None)
            if not self.scheduled:
                self._export(self.prof)
