"""What the tracer itself cost a step, and the step without it.

A tracer costs the host a little on every call it records: nsys's CUDA trace on each CUDA call, its
PyTorch op ranges (``--pytorch=autograd-nvtx``) on each op, the PyTorch profiler on each op, CUDA call and
Python frame. A launch-bound program runs that much slower under the capture; a program whose GPU sets
the pace does not (its host waits for the GPU anyway).

The estimate: the steady steps' traced calls, op ranges and frames (their mean a step, counted in the
capture) at a per-event cost calibrated on a real machine (rules/tracer_cost.yaml: the machine, how it
was measured, the figures), scaled by how slow the capture's own kernel-launch calls were: their mean
recorded duration over the reference launch (``reference_launch_ns``, fitted leave-one-program-out by
scripts/tracer_fit.py). A tracer's entry and exit work lands inside the calls it records, and a host that
runs the tracer slower runs every event slower. Where the host sets the pace, the step without the tracer is the traced step
less that cost, but never shorter than the GPU's busy time a step; where the GPU sets it, the step is the
traced one. Checked against the programs' own clocks without the tracer (docs/timeline.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ncuwrap.core import safeyaml
from ncuwrap.core.numbers import clean
from ncuwrap.core.resources import data_dir
from ncuwrap.timeline.launches import text_is

NSYS = "nsys"
PROFILER = "PyTorch profiler"
CALIBRATION_FILE = "tracer_cost.yaml"
HOST_BOUND_BELOW_PCT = 50.0  # a step whose GPU is busy less than this is the host's (rules/timeline.yaml's host_bound)
KERNEL_LAUNCHES = ("cudaLaunchKernel", "cuLaunchKernel")  # the calls whose recorded duration scales the costs (not graph launches)


@dataclass(frozen=True)
class Calibration:
    """The per-event costs of each tracer, as measured on one machine (rules/tracer_cost.yaml)."""

    machine: str
    measured: str  # when and by what
    nsys_call_ns: float  # nsys's CUDA trace, a CUDA call
    nsys_op_ns: float  # nsys --pytorch=autograd-nvtx, an op range
    nsys_shapes_op_ns: float  # nsys --pytorch=autograd-shapes-nvtx, an op range with its sizes
    profiler_event_ns: float  # the PyTorch profiler, a CPU op or CUDA call (no stacks, no shapes)
    profiler_stack_event_ns: float  # the same with with_stack=True and record_shapes=True
    reference_launch_ns: float  # the mean recorded kernel-launch call at which the costs above hold

    def scale(self, launch_mean_ns: float | None) -> float:
        """What the per-event costs are multiplied by for a capture whose kernel-launch calls took ``launch_mean_ns``
        on average as recorded (1.0: no kernel launch recorded)."""
        if launch_mean_ns is None or not launch_mean_ns > 0:
            return 1.0
        return launch_mean_ns / self.reference_launch_ns

    def to_json(self) -> dict:
        return {"machine": self.machine, "measured": self.measured, "nsys_call_ns": self.nsys_call_ns, "nsys_op_ns": self.nsys_op_ns,
                "nsys_shapes_op_ns": self.nsys_shapes_op_ns,
                "profiler_event_ns": self.profiler_event_ns, "profiler_stack_event_ns": self.profiler_stack_event_ns,
                "reference_launch_ns": self.reference_launch_ns}


def has_shapes(data) -> bool:
    """Whether ``data``'s op ranges carry their inputs' sizes (nsys --pytorch=autograd-shapes-nvtx, the profiler's record_shapes)."""
    ops = getattr(data, "ops", None)
    return ops is not None and "shapes" in ops and bool((ops["shapes"].codes >= 0).any())


@lru_cache(maxsize=1)
def calibration() -> Calibration:
    """The bundled calibration (rules/tracer_cost.yaml)."""
    path = data_dir("rules") / CALIBRATION_FILE
    doc = safeyaml.load(path.read_text(encoding="utf-8"))
    costs = doc["costs_ns"]
    return Calibration(machine=str(doc["machine"]), measured=str(doc["measured"]), nsys_call_ns=float(costs["nsys_cuda_call"]),
                       nsys_op_ns=float(costs["nsys_pytorch_op_range"]), nsys_shapes_op_ns=float(costs["nsys_pytorch_shapes_op_range"]),
                       profiler_event_ns=float(costs["profiler_event"]),
                       profiler_stack_event_ns=float(costs["profiler_event_with_stack_and_shapes"]),
                       reference_launch_ns=float(doc["scale"]["reference_launch_ns"]))


def launch_mean_ns(data, lo: int, hi: int) -> float | None:
    """The mean recorded duration of the kernel-launch calls (cudaLaunchKernel*, cuLaunchKernel*) that start in
    [``lo``, ``hi``) of ``data`` (a read capture); None where none does or the CUDA API was not traced."""
    api = getattr(data, "api", None)
    if api is None or not len(api):
        return None
    start = np.asarray(api["start"], dtype=np.int64)
    inside = (start >= lo) & (start < hi) & text_is(api["name"], lambda n: n.startswith(KERNEL_LAUNCHES))
    if not inside.any():
        return None
    return float((np.asarray(api["end"], dtype=np.int64)[inside] - start[inside]).mean())


@dataclass(frozen=True)
class TracerCost:
    """What the tracer added to a steady step's host time, and the step without it (all means over the steady steps)."""

    tracer: str  # NSYS | PROFILER
    calls: float  # CUDA calls traced a step
    ops: float  # op ranges (nsys --pytorch) or CPU ops (the profiler) a step
    frames: float  # Python frames a step (the profiler's with_stack)
    per_call_ns: float
    per_op_ns: float
    traced_ns: float  # the mean steady step, as captured
    gpu_busy_ns: float  # the GPU's busy time a step
    paced_by: str  # "gpu" | "host" (ncuwrap.timeline.steps)
    calibration: Calibration
    host_wait_ns: float | None = None  # the launching thread's blocking waits a step (None: not traced)
    # The step without the tracer as the steps' dependency graph replays it (ncuwrap.timeline.whatif): where
    # set, it is the untraced step; the arithmetic below stands only where the steps could not be replayed.
    replayed_untraced_ns: float | None = None
    launch_mean_ns: float | None = None  # the steady steps' mean recorded kernel-launch call (None: none recorded)
    scale: float = 1.0  # the calibrated per-event costs' multiplier for this capture (Calibration.scale)
    # CUDA graph launches a step whose nodes were traced one by one, their nodes (mean), and what that added to the
    # launches' host time a step beyond the cost a call (ncuwrap.timeline.whatif.remedies.no_tracer.TracedGraphs)
    graph_launches: float = 0.0
    graph_nodes: float = 0.0
    graph_added_ns: float = 0.0

    @property
    def added_ns(self) -> float:
        """The host time the tracer added to a step."""
        return self.calls * self.per_call_ns + (self.ops + self.frames) * self.per_op_ns + self.graph_added_ns

    @property
    def saved_ns(self) -> float:
        """What the step loses without the tracer: its cost, less what the launching thread spent waiting (a
        thread that waits for a queue, DataLoader workers say, waits that much longer)."""
        if self.replayed_untraced_ns is not None:
            return max(0.0, self.traced_ns - self.replayed_untraced_ns)
        if self.paced_by == "gpu":
            return 0.0
        return max(0.0, self.added_ns - (self.host_wait_ns or 0.0))

    @property
    def untraced_ns(self) -> float:
        """The step without the tracer: where the GPU sets the pace, the traced step; else the traced step less
        what it saves, never shorter than the GPU's busy time a step."""
        if self.replayed_untraced_ns is not None:
            return self.replayed_untraced_ns
        if self.paced_by == "gpu":
            return self.traced_ns
        return max(self.traced_ns - self.saved_ns, self.gpu_busy_ns)

    @property
    def untraced_busy_pct(self) -> float:
        return 100.0 * self.gpu_busy_ns / self.untraced_ns if self.untraced_ns > 0 else math.nan

    @property
    def untraced_bound(self) -> str:
        """'host' where the GPU would still be busy less than HOST_BOUND_BELOW_PCT of the untraced step, else 'gpu'."""
        return "host" if self.untraced_busy_pct < HOST_BOUND_BELOW_PCT else "gpu"

    @property
    def speedup(self) -> float:
        """The traced step over the untraced: what taking the tracer away buys (1.0: nothing)."""
        return self.traced_ns / self.untraced_ns if self.untraced_ns > 0 else math.nan

    @property
    def assumes(self) -> str:
        c = self.calibration
        costs = (f"{self.per_call_ns / 1e3:.2g} us a CUDA call and {self.per_op_ns / 1e3:.2g} us an op"
                 + (" or frame" if self.tracer == PROFILER else " range"))
        return (f"the {self.tracer}'s host cost, {costs} (the costs measured on {c.machine}, {c.measured}"
                f"{scaled_text(self.scale, self.launch_mean_ns, c)}), is taken off the host's side of each step; the GPU's work is unchanged, "
                "and a step is never shorter than the GPU's busy time in it")

    def to_json(self) -> dict:
        return {"tracer": self.tracer, "calls": clean(self.calls), "ops": clean(self.ops), "frames": clean(self.frames),
                "per_call_ns": clean(self.per_call_ns), "per_op_ns": clean(self.per_op_ns), "added_ns": clean(self.added_ns),
                "host_wait_ns": clean(self.host_wait_ns), "saved_ns": clean(self.saved_ns),
                "traced_step_ns": clean(self.traced_ns), "untraced_step_ns": clean(self.untraced_ns), "gpu_busy_ns": clean(self.gpu_busy_ns),
                "untraced_gpu_busy_pct": clean(self.untraced_busy_pct), "untraced_bound": self.untraced_bound, "paced_by": self.paced_by,
                "launch_mean_ns": clean(self.launch_mean_ns), "scale": clean(self.scale),
                "graph_launches": clean(self.graph_launches), "graph_nodes": clean(self.graph_nodes), "graph_added_ns": clean(self.graph_added_ns),
                "calibration": self.calibration.to_json()}


def scaled_text(scale: float, launch_mean: float | None, c: Calibration) -> str:
    """', times 1.14: this capture's kernel-launch calls took 8.78 us each (mean, as recorded), against the 7.7 us the costs
    hold at', or nothing where the costs are not scaled."""
    if launch_mean is None or scale == 1.0:
        return ""
    return (f", times {scale:.2f}: this capture's kernel-launch calls took {launch_mean / 1e3:.3g} us each (mean, as recorded), against the "
            f"{c.reference_launch_ns / 1e3:.3g} us the costs hold at")


def estimate(steps, producer: str | None, shapes: bool = False, launch_mean: float | None = None) -> TracerCost | None:
    """The tracer's cost in ``steps``' steady steps (ncuwrap.timeline.steps.Steps), by who recorded them
    (``producer``: the capture's, "nsys ..." or the PyTorch profiler; ``shapes``: its op ranges carry their sizes;
    ``launch_mean``: the steady steps' mean recorded kernel-launch call, :func:`launch_mean_ns`); None where the
    CUDA API was not traced (nothing to count)."""
    steady = steps.steady
    if steady[0].api_calls is None:
        return None
    n = len(steady)
    c = calibration()
    profiler = producer is not None and not str(producer).startswith("nsys")
    frames = sum(r.frames for r in steady) / n
    if profiler:
        per_call = per_op = c.profiler_stack_event_ns if frames else c.profiler_event_ns
    else:
        per_call, per_op = c.nsys_call_ns, c.nsys_shapes_op_ns if shapes else c.nsys_op_ns
    scale = c.scale(launch_mean)
    per_call, per_op = per_call * scale, per_op * scale
    waits = None if steady[0].host_wait_ns is None else sum(r.host_wait_ns for r in steady) / n
    return TracerCost(tracer=PROFILER if profiler else NSYS, calls=sum(r.api_calls for r in steady) / n, ops=sum(r.ops for r in steady) / n,
                      frames=frames, per_call_ns=per_call, per_op_ns=per_op, traced_ns=steps.mean_period_ns,
                      gpu_busy_ns=sum(r.gpu_busy_ns for r in steady) / n, paced_by=steps.paced_by, calibration=c, host_wait_ns=waits,
                      launch_mean_ns=launch_mean, scale=scale)
