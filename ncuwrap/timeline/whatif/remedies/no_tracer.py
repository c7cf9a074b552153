"""no_tracer: the capture's own cost per traced call, op range and frame taken off the host's side of each step."""

from __future__ import annotations

import numpy as np

from ncuwrap.timeline import tracer as tracer_module

NAME = "no_tracer"
DRAINS_QUEUE = False
MIN_CALL_NS = 1_000  # no CUDA call is cheaper than this without a tracer


def costs(producer: str | None, shapes: bool = False, frames: int = 0, scale: float = 1.0) -> tuple[float, float, str]:
    """The per-call and per-op (range, event or frame) cost of the tracer that wrote the capture, and its name;
    ``shapes``: nsys's op ranges carry their sizes; ``frames``: the profiler recorded Python frames (with stacks and
    shapes); ``scale``: the calibrated costs' multiplier for this capture (tracer.Calibration.scale)."""
    c = tracer_module.calibration()
    if producer is not None and not str(producer).startswith("nsys"):
        per = c.profiler_stack_event_ns if frames else c.profiler_event_ns
        return per * scale, per * scale, tracer_module.PROFILER
    return c.nsys_call_ns * scale, (c.nsys_shapes_op_ns if shapes else c.nsys_op_ns) * scale, tracer_module.NSYS


def apply(graph, context) -> None:
    per_call, per_op, _ = costs(context.producer, context.shapes, context.frames, context.tracer_scale)
    g = graph
    g.h_own = np.maximum(np.minimum(g.h_own, MIN_CALL_NS), g.h_own - int(per_call))
    taken = (g.h_calls - 1) * per_call + (g.h_ops + g.h_frames) * per_op
    g.h_code = np.maximum(0, g.h_code - taken.astype(np.int64))
    # A waiting call's return is its own part: it costs the tracer's exit as well.
    g.h_ret = np.maximum(np.minimum(g.h_ret, MIN_CALL_NS), g.h_ret - int(per_call))


def assumes(context) -> str:
    per_call, per_op, name = costs(context.producer, context.shapes, context.frames, context.tracer_scale)
    c = tracer_module.calibration()
    scaled = tracer_module.scaled_text(context.tracer_scale, context.launch_mean_ns, c)
    return (f"the tracer's host cost ({name}), {per_call / 1e3:.2g} us a CUDA call and {per_op / 1e3:.2g} us an op "
            f"{'or frame' if name == tracer_module.PROFILER else 'range'} (the costs measured on {c.machine}, {c.measured}{scaled}), is taken off "
            "the host's time between and in the calls; the GPU's work, the launch latencies and the waits for other processes are unchanged")
