"""no_tracer: the capture's own cost per traced call, op range and frame taken off the host's side of each step, and
what tracing a CUDA graph's nodes one by one costs its launch."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ncuwrap.timeline import tracer as tracer_module
from ncuwrap.timeline.launches import GRAPH_LAUNCH_PREFIXES

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


@dataclass(frozen=True)
class TracedGraphs:
    """The steps' CUDA graph launches whose nodes the tracer recorded one by one (nsys --cuda-graph-trace=node, the
    profiler's CUPTI): such a launch hands the nodes over one at a time, each recorded, so the call runs long and the
    GPU starts each node as the call reaches it (a 123-node graph's launch took 97 us under nsys, against 5.8 us
    plain; its nodes ran 0.42 us apart, against 0.3). A launch traced as one event (--cuda-graph-trace=graph) is not
    one of them."""

    calls: np.ndarray  # the launch calls, in the graph
    events: np.ndarray  # their nodes, in the graph
    untraced_ns: np.ndarray  # what each launch costs the host untraced: the calibrated launch of its nodes
    steps: int
    added_ns: float = 0.0  # what tracing the nodes added to the launches' host time a step, beyond the tracer's cost a call

    @property
    def launches(self) -> float:
        """Such launches a step."""
        return self.calls.size / self.steps if self.steps else 0.0

    @property
    def nodes(self) -> float:
        """Nodes a launch (mean)."""
        return self.events.size / self.calls.size if self.calls.size else 0.0


def traced_graphs(g, cal, per_call_ns: float) -> TracedGraphs:
    """The graph launches of ``g`` whose nodes were traced one by one, with their untraced cost by ``cal``
    (ncuwrap.timeline.whatif.calibration: calibrate.py's plain launches on the lent H200); ``per_call_ns``: the
    tracer's cost a call (:func:`costs`), which the launch call pays as every call does."""
    launch = np.fromiter((str(n).startswith(GRAPH_LAUNCH_PREFIXES) for n in g.h_name), dtype=bool, count=len(g.h_name))
    hung = g.g_call >= 0
    nodes = np.bincount(g.g_call[hung], minlength=g.calls) if hung.any() else np.zeros(g.calls, dtype=np.int64)
    in_steps = g.h_step < g.steps
    calls = np.flatnonzero(launch & (nodes[:g.calls] > 1) & in_steps)
    events = np.flatnonzero(hung & np.isin(g.g_call, calls))
    untraced = cal.graph_launch_cost_ns(nodes[calls]).astype(np.int64)
    added = float(np.maximum(0.0, g.h_own[calls] - per_call_ns - untraced).sum()) / g.steps if g.steps else 0.0
    return TracedGraphs(calls=calls, events=events, untraced_ns=untraced, steps=g.steps, added_ns=added)


def apply(graph, context) -> None:
    per_call, per_op, _ = costs(context.producer, context.shapes, context.frames, context.tracer_scale)
    g = graph
    g.h_own = np.maximum(np.minimum(g.h_own, MIN_CALL_NS), g.h_own - int(per_call))
    taken = (g.h_calls - 1) * per_call + (g.h_ops + g.h_frames) * per_op
    g.h_code = np.maximum(0, g.h_code - taken.astype(np.int64))
    # A waiting call's return is its own part: it costs the tracer's exit as well.
    g.h_ret = np.maximum(np.minimum(g.h_ret, MIN_CALL_NS), g.h_ret - int(per_call))
    # A graph launch whose nodes were traced one by one: the launch its nodes cost untraced, the nodes queued at once
    # (the first as long after the call as the capture's launches) and run as far apart as an untraced graph's.
    t = context.traced_graphs
    if t is not None and t.calls.size:
        cal = context.calibration
        g.h_own[t.calls] = np.minimum(g.h_own[t.calls], t.untraced_ns)
        g.g_lat[t.events] = np.minimum(g.g_lat[t.events], int(g.typical_latency_ns))
        g.g_qgap[t.events] = np.minimum(g.g_qgap[t.events], int(cal.graph_node_gap_ns))


def assumes(context) -> str:
    per_call, per_op, name = costs(context.producer, context.shapes, context.frames, context.tracer_scale)
    c = tracer_module.calibration()
    scaled = tracer_module.scaled_text(context.tracer_scale, context.launch_mean_ns, c)
    t = context.traced_graphs
    graphs = ""
    if t is not None and t.calls.size:
        cal = context.calibration
        launches = "its CUDA graph launch a step, its" if t.launches == 1 else f"its {t.launches:.3g} CUDA graph launches a step, their"
        graphs = (f"; {launches} {t.nodes:.0f} nodes traced one by one, cost what an untraced "
                  f"launch does ({cal.graph_launch_ns / 1e3:.3g} us + {cal.graph_launch_per_node_ns / 1e3:.2g} us a node, {cal.source}), their nodes "
                  f"queued at once and run {cal.graph_node_gap_ns / 1e3:.2g} us apart")
    return (f"the tracer's host cost ({name}), {per_call / 1e3:.2g} us a CUDA call and {per_op / 1e3:.2g} us an op "
            f"{'or frame' if name == tracer_module.PROFILER else 'range'} (the costs measured on {c.machine}, {c.measured}{scaled}), is taken off "
            f"the host's time between and in the calls{graphs}; the GPU's work, the launch latencies and the waits for other processes are "
            "unchanged" + (" otherwise" if graphs else ""))
