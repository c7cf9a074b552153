"""no_tracer: the capture's own cost per traced call, op range and frame taken off the host's side of each step."""

from __future__ import annotations

import numpy as np

from ncuwrap.timeline import tracer as tracer_module

NAME = "no_tracer"
MIN_CALL_NS = 1_000  # no CUDA call is cheaper than this without a tracer


def costs(producer: str | None, shapes: bool = False) -> tuple[float, float, str]:
    """The per-call and per-op (range, event or frame) cost of the tracer that wrote the capture, and its name;
    ``shapes``: nsys's op ranges carry their sizes."""
    c = tracer_module.calibration()
    if producer is not None and not str(producer).startswith("nsys"):
        return c.profiler_event_ns, c.profiler_event_ns, tracer_module.PROFILER
    return c.nsys_call_ns, c.nsys_shapes_op_ns if shapes else c.nsys_op_ns, tracer_module.NSYS


def apply(graph, context) -> None:
    per_call, per_op, _ = costs(context.producer, context.shapes)
    if context.frames:  # the profiler with stacks and shapes
        per_call = per_op = tracer_module.calibration().profiler_stack_event_ns
    g = graph
    g.h_own = np.maximum(np.minimum(g.h_own, MIN_CALL_NS), g.h_own - int(per_call))
    taken = (g.h_calls - 1) * per_call + (g.h_ops + g.h_frames) * per_op
    g.h_code = np.maximum(0, g.h_code - taken.astype(np.int64))
    # A waiting call's return is its own part: it costs the tracer's exit as well.
    g.h_ret = np.maximum(np.minimum(g.h_ret, MIN_CALL_NS), g.h_ret - int(per_call))


def assumes(context) -> str:
    per_call, per_op, name = costs(context.producer, context.shapes)
    c = tracer_module.calibration()
    return (f"the tracer's host cost ({name}), {per_call / 1e3:.2g} us a CUDA call and {per_op / 1e3:.2g} us an op "
            f"{'or frame' if name == tracer_module.PROFILER else 'range'} as measured on {c.machine} ({c.measured}), is taken off the host's "
            "time between and in the calls; the GPU's work, the launch latencies and the waits for other processes are unchanged")
