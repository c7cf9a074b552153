"""The steady steps replayed, unmodified and under each remedy (ncuwrap.timeline.whatif.remedies)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from ncuwrap.timeline import tracer as tracer_module
from ncuwrap.timeline.whatif import graph as graph_module
from ncuwrap.timeline.whatif.calibration import ReplayCalibration, calibration
from ncuwrap.timeline.whatif.model import NotPredicted, RemedyPrediction, WhatIf
from ncuwrap.timeline.whatif.remedies import REMEDIES, TRACER
from ncuwrap.timeline.whatif.replay import PATH_PARTS, replay

MAX_EVENTS = 20_000  # GPU events replayed at most (the steady steps nearest the middle): a bounded cost on a huge capture
# host_parallel's workers: the capture's cores less two (the main process, which launches the GPU's work, and one
# for the system), no more than MAX_WORKERS; DEFAULT_WORKERS where the capture records no core count.
DEFAULT_WORKERS = 4
MAX_WORKERS = 8
CORES_KEPT = 2
PINNED_MIN_BYTES = 1 << 20


@dataclass(frozen=True)
class Context:
    """What the remedies need besides the graph."""

    producer: str | None
    frames: int  # Python frames the capture holds in the window (the profiler's with_stack)
    calibration: ReplayCalibration
    workers: int
    cores: int | None
    workers_how: str  # where the worker count comes from, as the assumption says it
    pinned_h2d_bytes_per_s: float | None  # the capture's own pinned host-to-device rate (copies of at least 1 MiB)
    host_work_ms: float = graph_module.HOST_WORK_NS / 1e6
    op_limits: object = None  # ncuwrap.timeline.oplimits.model.OpLimits of the same steps (None: no op shapes recorded)
    shapes: bool = False  # the op ranges carry their sizes (they cost nsys more a range)
    kernels: object = None  # ncuwrap.timeline.kernel_join.KernelJoin: ncu's verdicts joined to the capture's kernels (None: none given)
    launch_mean_ns: float | None = None  # the steady steps' mean recorded kernel-launch call (ncuwrap.timeline.tracer.launch_mean_ns)
    tracer_scale: float = 1.0  # the tracer's calibrated costs' multiplier for this capture (ncuwrap.timeline.tracer.Calibration.scale)
    launch_host_ns: float | None = None  # what a launch costs the host on average without the tracer (StepGraph.host_ns_per_launch)
    traced_graphs: object = None  # no_tracer.TracedGraphs: the steps' graph launches whose nodes were traced one by one


def context_of(data, g, workers: int | None = None, op_limits=None, kernels=None, steps=None) -> Context:
    """What the remedies need besides ``g``, the graph of ``data``'s ``steps`` (None: the tracer's costs are not scaled)."""
    cores = data.cpu_cores
    if workers is not None:
        how = f"as given, on a host of {cores} cores" if cores else "as given"
    elif cores:
        workers = max(1, min(MAX_WORKERS, cores - CORES_KEPT))
        how = f"the capture's {cores} cores less {CORES_KEPT}, at most {MAX_WORKERS}"
    else:
        workers, how = DEFAULT_WORKERS, "assumed: the capture does not record the host's cores"
    launch_mean = tracer_module.launch_mean_ns(data, steps.steady_start_ns, steps.steady_end_ns) if steps is not None else None
    cal = calibration()
    scale = tracer_module.calibration().scale(launch_mean)
    per_call, _, _ = TRACER.costs(data.producer, tracer_module.has_shapes(data), int(g.h_frames.sum()), scale)
    return Context(producer=data.producer, frames=int(g.h_frames.sum()), calibration=cal, workers=workers, cores=cores, workers_how=how,
                   pinned_h2d_bytes_per_s=_pinned_rate(data), op_limits=op_limits, shapes=tracer_module.has_shapes(data),
                   kernels=kernels, launch_mean_ns=launch_mean, tracer_scale=scale, traced_graphs=TRACER.traced_graphs(g, cal, per_call))


def _pinned_rate(data) -> float | None:
    """The capture's own pinned host-to-device bandwidth: its host-to-device copies from pinned memory of at least
    PINNED_MIN_BYTES, over the whole capture (None without one; pinned_overlap then takes the calibrated figure,
    rules/whatif.yaml's pinned_h2d_gbps, and says so). Not the analysis' pinned_memcpy_gbps: that is what the
    window's pinned copies achieved, both directions and every size (a step's 4-byte .item() reads make it
    ~0.002 GB/s), the evidence beside the pageable copies' rate; this is the rate a batch copied from pinned
    memory would move at."""
    copies = data.copies
    if copies is None or not len(copies) or "pageable" not in copies:
        return None
    big = ((np.asarray(copies["pageable"], dtype=float) == 0) & (copies["category"] == "memcpy_htod")
           & (np.asarray(copies["bytes"], dtype=float) >= PINNED_MIN_BYTES))
    if not big.any():
        return None
    dur = (np.asarray(copies["end"], dtype=np.int64) - np.asarray(copies["start"], dtype=np.int64))[big]
    by = np.asarray(copies["bytes"], dtype=float)[big]
    ok = dur > 0
    return float(by[ok].sum() / dur[ok].sum() * 1e9) if ok.any() else None


def predict(data, steps, *, workers: int | None = None, op_limits=None, kernels=None) -> WhatIf | None:
    """The what-if of ``steps``' steady steps in ``data``; None where the CUDA API was not traced. ``op_limits``:
    the same steps' op limits (ncuwrap.timeline.oplimits), from which lower_precision and fusion are predicted;
    ``kernels``: ncu's verdicts joined to ``data``'s kernels (ncuwrap.timeline.kernel_join.KernelJoin), from which
    faster_kernel is."""
    g = graph_module.build(data, steps, max_events=MAX_EVENTS)
    if g is None:
        return None
    ctx = context_of(data, g, workers, op_limits, kernels, steps)
    replayed = replay(g)
    base = g.copy()
    TRACER.apply(base, ctx)
    ctx = dataclasses.replace(ctx, launch_host_ns=base.host_ns_per_launch())
    untraced = replay(base)
    if min(replayed.window_ns, untraced.window_ns, g.measured_window_ns) <= 0:
        return None  # steps of no length (events of no duration): nothing a remedy could shorten
    predictions = [RemedyPrediction(TRACER.NAME, untraced.step_ns, replayed.step_ns / untraced.step_ns, TRACER.assumes(ctx))]
    skipped = []
    for remedy in REMEDIES:
        why = remedy.applies(base, ctx)
        if why is not None:
            skipped.append(NotPredicted(remedy.NAME, why))
            continue
        edited = base.copy()
        if remedy.DRAINS_QUEUE:
            edited.drain_queue()
        remedy.apply(edited, ctx)
        after = replay(edited)
        if after.window_ns <= 0:
            skipped.append(NotPredicted(remedy.NAME, "the replay leaves a step of no length: the capture's times cannot carry it"))
            continue
        predictions.append(RemedyPrediction(remedy.NAME, after.step_ns, untraced.step_ns / after.step_ns, remedy.assumes(ctx)))
    first, rest = predictions[0], sorted(predictions[1:], key=lambda p: -p.speedup)
    return WhatIf(measured_step_ns=g.measured_window_ns / g.steps, replayed_step_ns=replayed.step_ns, untraced_step_ns=untraced.step_ns,
                  steps=g.steps, calls=g.calls, events=g.events, cross_stream=g.cross_stream, remedies=(first, *rest),
                  not_predicted=tuple(skipped), critical_path=tuple((part, ns / g.steps) for part, ns in zip(PATH_PARTS, replayed.path_ns)),
                  kernel_verdicts=kernels, traced_graphs=ctx.traced_graphs)
